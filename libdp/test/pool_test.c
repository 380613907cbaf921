// SPDX-License-Identifier: GPL-2.0
/*
 * pool_test: libdp's zero-copy receive path against the module's ring code.
 * Run with LD_PRELOAD=fakedp.so (see run.sh): two endpoints in this
 * process, messages of many sizes through a small pool so it wraps often,
 * released in batches of varying size.  Prints TAP lines (run.sh adds the plan).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dp.h"

static int failures, tests;

static void ok(int cond, const char *what)
{
	tests++;
	failures += !cond;
	printf("%s %d %s\n", cond ? "ok" : "not ok", tests, what);
}

/* Message i: length and contents derived from i, so the reader can check. */
static size_t msg_len(unsigned int i)
{
	return 1 + (i * 397u) % 3000;
}

static void msg_fill(unsigned char *b, unsigned int i, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		b[k] = (unsigned char)(i * 31u + k);
}

static int msg_check(const char *p, unsigned int i, ssize_t len)
{
	unsigned char want[4096];

	if (len != (ssize_t)msg_len(i))
		return 0;
	msg_fill(want, i, (size_t)len);
	return !memcmp(p, want, (size_t)len);
}

/* Send `n` messages from a to b, then read and release them in batches. */
static int round_trip(int a, int b, unsigned int first, unsigned int n, int batch)
{
	unsigned char buf[4096];
	unsigned int i, got = 0;
	char *p;

	for (i = first; i < first + n; i++) {
		msg_fill(buf, i, msg_len(i));
		if (dp_write(a, buf, msg_len(i)) != (ssize_t)msg_len(i))
			return 0;
	}
	while (got < n) {
		ssize_t len = dp_read(b, &p);
		const struct dp_token *t;
		int k = (int)(n - got < (unsigned int)batch ? n - got : (unsigned int)batch);

		if (len <= 0 || !msg_check(p, first + got, len))
			return 0;
		t = dp_token_of(b, p);
		if (!t || t->src_dpid != 7 || t->src_nid != 1 || t->src_uid != getuid())
			return 0;
		/* Release a batch: the head must then be the message after it. */
		if (dp_fsync(b, k) != k)
			return 0;
		got += (unsigned int)k;
	}
	return dp_read(b, &p) == 0 && dp_fsync(b, 5) == 0;
}

/*
 * A reader between the kernel's two stores (dp_pool_publish(): cons, then
 * prod) after it passed a wrap token on an empty pool finds cons ahead of
 * prod.  Played by writing that pair into the fake's pool file (fakedp.c's
 * pool_path()) of endpoint @dpid, empty: dp_read() must say nothing is
 * ready, not EPROTO.
 */
static int torn_pair_reads_empty(int fd, uint32_t dpid)
{
	const char *ns = getenv("FAKEDP_NS");
	struct dp_pool_ctrl *ctrl;
	uint64_t prod;
	char path[128], *p;
	ssize_t r;
	int pfd;

	snprintf(path, sizeof(path), "/dev/shm/fakedp.%u.%.16s.%u",
		 (unsigned)getuid(), ns ? ns : "", dpid);
	pfd = open(path, O_RDWR);
	if (pfd < 0)
		return 0;
	ctrl = mmap(NULL, DP_POOL_CTRL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		    pfd, 0);
	close(pfd);
	if (ctrl == MAP_FAILED)
		return 0;
	prod = ctrl->prod;
	if (ctrl->cons != prod) {
		munmap(ctrl, DP_POOL_CTRL_SIZE);
		return 0;
	}
	ctrl->cons = prod + 64;
	errno = 0;
	r = dp_read(fd, &p);
	ctrl->cons = prod;
	munmap(ctrl, DP_POOL_CTRL_SIZE);
	return r == 0 && errno == 0;
}

int main(void)
{
	int a = dp_open(7), b = dp_open_pool(8, DP_POOL_MIN);
	unsigned int first = 0, r;
	dp_mmap_t m;
	char *p;
	int good = 1;

	ok(a >= 0 && b >= 0, "dp_open and dp_open_pool");
	ok(dp_connect(a, 1, 8) == 0, "dp_connect");
	ok(dp_read(b, &p) == 0, "dp_read of an empty pool returns 0");
	ok(dp_mmap(b, &m) == 0 && m.data_size == DP_POOL_MIN && m.ctrl &&
	   m.ctrl->magic == DP_POOL_MAGIC && m.data == (const unsigned char *)m.base + 4096,
	   "dp_mmap describes the pool");
	/* 16 KiB pool, up to 3000-byte messages: wraps every few messages. */
	for (r = 0; r < 400 && good; r++) {
		unsigned int n = 1 + r % 4;

		good = round_trip(a, b, first, n, 1 + (int)(r % 3));
		first += n;
	}
	ok(good, "messages survive many wraps, contents and tokens intact");
	ok(torn_pair_reads_empty(b, 8),
	   "dp_read finds nothing ready, not EPROTO, with cons loaded ahead of prod");
	ok(dp_token_of(b, (const char *)m.data + 5) == NULL && errno == EINVAL,
	   "dp_token_of rejects an address that is not a message");
	ok(dp_fsync(b, -1) < 0 && errno == EINVAL, "dp_fsync(-1) is EINVAL");
	ok(dp_read(12345, &p) < 0, "dp_read on a non-dp fd fails");
	ok(dp_close(a) == 0 && dp_close(b) == 0, "dp_close");
	return failures ? 1 : 0;
}
