// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy receive through libdp: dp_read() returns the message in place
 * in the read-only pool without a system call (checked under seccomp strict
 * mode), returns the same head until dp_fsync() releases it, and 0 when the
 * pool is empty; dp_fsync() and fsync() move the pool's cons counter.
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"	/* libdp's (-I, Makefile) */

#define DPID_A 100
#define DPID_B 200

static int pipefd[2], nosys_fd;

/* Runs dp_read() with only read/write/exit allowed; any other system call
 * kills this thread before it reports. */
static void *nosys_thread(void *arg)
{
	char *addr = NULL;
	ssize_t n;

	(void)arg;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) == 0) {
		n = dp_read(nosys_fd, &addr);
		if (write(pipefd[1], &n, sizeof(n)) != sizeof(n) ||
		    write(pipefd[1], &addr, sizeof(addr)) != sizeof(addr))
			n = -1;
		syscall(SYS_exit, 0);
	}
	return NULL;
}

static void check_no_syscall(int fd, ssize_t want_len, const char *want_addr)
{
	pthread_t th;
	ssize_t n = -2;
	char *addr = NULL;

	if (pipe(pipefd))
		return;
	nosys_fd = fd;
	if (pthread_create(&th, NULL, nosys_thread, NULL)) {
		ktap_diag("pthread_create failed");
		return;
	}
	pthread_join(th, NULL);
	close(pipefd[1]);
	if (read(pipefd[0], &n, sizeof(n)) != sizeof(n) ||
	    read(pipefd[0], &addr, sizeof(addr)) != sizeof(addr))
		n = -2;
	close(pipefd[0]);
	ktap_ok(n == want_len && addr == want_addr,
		"dp_read makes no system call (seccomp strict): len %zd", n);
}

static uint8_t msg[3][1000];
static const size_t lens[3] = { 10, 100, 1000 };

int main(void)
{
	const struct dp_token *t;
	struct dp_ep_stats st;
	dp_mmap_t m;
	char *addr = NULL, *addr2 = NULL;
	uint64_t cons0;
	ssize_t n;
	int a, b, i, r;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_ns(dpt.nsb))
		ktap_bail("enter node B");
	b = dp_open(DPID_B);
	if (!KTAP_SUCCESS(b, "dp_open(%d) in node B", DPID_B))
		ktap_finish();
	if (!KTAP_SUCCESS(dp_mmap(b, &m), "dp_mmap describes the pool"))
		ktap_finish();
	ktap_ok(m.ctrl->magic == DP_POOL_MAGIC && m.data_size == m.ctrl->data_size &&
		m.data == (const unsigned char *)m.base + m.ctrl->ctrl_size,
		"pool magic %#x, data_size %u, data at base + %u", m.ctrl->magic,
		m.data_size, m.ctrl->ctrl_size);
	n = dp_read(b, &addr);
	ktap_ok(n == 0, "dp_read on an empty pool returns 0 (got %zd)", n);

	if (dpt_ns(dpt.nsa))
		ktap_bail("enter node A");
	a = dp_open(DPID_A);
	if (!KTAP_SUCCESS(a, "dp_open(%d) in node A", DPID_A) ||
	    !KTAP_SUCCESS(dp_connect(a, dpt.nidb, DPID_B), "dp_connect A to B"))
		ktap_finish();
	for (i = 0; i < 3; i++) {
		dpt_random(msg[i], lens[i]);
		n = dp_write(a, msg[i], lens[i]);
		ktap_ok(n == (ssize_t)lens[i], "dp_write %zu bytes returns %zd", lens[i], n);
	}
	ktap_ok(dpt_wait_arrivals(b, 3, DPT_WAIT_MS) == 1, "3 messages arrive");
	dpt_stats(b, &st);
	ktap_ok(st.queued == 3, "3 queued in the pool (%llu)", (unsigned long long)st.queued);
	cons0 = m.ctrl->cons;

	n = dp_read(b, &addr);
	ktap_ok(n == (ssize_t)lens[0] && addr && !memcmp(addr, msg[0], lens[0]),
		"dp_read returns the first message (len %zd)", n);
	ktap_ok((const unsigned char *)addr >= m.data &&
		(const unsigned char *)addr + n <= m.data + m.data_size,
		"the message lies inside the mapped pool (zero copy)");
	t = dp_token_of(b, addr);
	ktap_ok(t && t->len == lens[0] && t->src_nid == dpt.nida && t->src_dpid == DPID_A &&
		t->seq == 1, "its token: len %u src %u/%u seq %u", t ? t->len : 0,
		t ? t->src_nid : 0, t ? t->src_dpid : 0, t ? t->seq : 0);
	n = dp_read(b, &addr2);
	ktap_ok(n == (ssize_t)lens[0] && addr2 == addr && m.ctrl->cons == cons0,
		"dp_read again returns the same head; cons did not move");
	check_no_syscall(b, (ssize_t)lens[0], addr);

	r = dp_fsync(b, 1);
	ktap_ok(r == 1, "dp_fsync(fd, 1) releases 1 (got %d)", r);
	ktap_ok(m.ctrl->cons == cons0 + DP_TOKEN_SPACE(lens[0]),
		"cons advanced by DP_TOKEN_SPACE(%zu)", lens[0]);
	dpt_stats(b, &st);
	ktap_ok(st.queued == 2, "2 queued after the release (%llu)", (unsigned long long)st.queued);
	n = dp_read(b, &addr);
	ktap_ok(n == (ssize_t)lens[1] && !memcmp(addr, msg[1], lens[1]),
		"dp_read now returns the second message (len %zd)", n);
	r = dp_fsync(b, 10);
	ktap_ok(r == 2, "dp_fsync(fd, 10) releases the 2 left (got %d)", r);
	n = dp_read(b, &addr);
	ktap_ok(n == 0, "dp_read returns 0 when empty again (got %zd)", n);
	ktap_ok(m.ctrl->cons == m.ctrl->prod, "cons == prod");
	KTAP_ERRNO(dp_fsync(b, -1), EINVAL, "dp_fsync with n < 0: EINVAL");
	r = dp_fsync(b, 1);
	ktap_ok(r == 0, "dp_fsync on an empty pool releases 0 (got %d)", r);

	/* Plain fsync() releases exactly one message. */
	dp_write(a, msg[0], 7);
	dp_write(a, msg[1], 8);
	ktap_ok(dpt_wait_arrivals(b, 5, DPT_WAIT_MS) == 1, "2 more messages arrive");
	KTAP_SUCCESS(fsync(b), "fsync() on a pool with 2 messages");
	n = dp_read(b, &addr);
	ktap_ok(n == 8 && !memcmp(addr, msg[1], 8), "fsync() released one: head is the next (len %zd)", n);
	ktap_ok(fsync(b) == 0 && fsync(b) == 0, "fsync() returns 0, also on an empty pool");
	n = dp_read(b, &addr);
	ktap_ok(n == 0, "empty after two fsync() calls (got %zd)", n);
	check_no_syscall(b, 0, NULL);

	KTAP_SUCCESS(dp_close(a), "dp_close A");
	KTAP_SUCCESS(dp_close(b), "dp_close B");
	ktap_finish();
}
