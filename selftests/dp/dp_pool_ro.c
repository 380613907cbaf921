// SPDX-License-Identifier: GPL-2.0
/*
 * The token buffer pool is read-only to its owner and private to it: the
 * layout is as documented, a store raises SIGSEGV, mprotect(PROT_WRITE),
 * mmap(PROT_WRITE) and MAP_PRIVATE fail, offset and length are checked, a
 * forked child does not inherit the mapping, mremap cannot grow it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200

/* Run fn(addr) in a child; return the signal that ended it, 0 if none. */
static int child_signal(void (*fn)(volatile uint8_t *), volatile uint8_t *addr)
{
	pid_t pid = dpt_fork();
	int st;

	if (pid == 0) {
		fn(addr);
		_exit(0);
	}
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	return st != -1 && WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

static void do_store(volatile uint8_t *p)
{
	*p = 0x5a;
}

static void do_load(volatile uint8_t *p)
{
	uint8_t v = *p;

	(void)v;
}

int main(void)
{
	struct dp_info info;
	struct dpt_pool pool;
	const struct dp_token *t;
	static const char msg[] = "read-only pool";
	uint8_t *m, *p;
	long pg = sysconf(_SC_PAGESIZE);
	int a, b, u, sig;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	dpt_pair(&a, DPID_A, &b, DPID_B);
	if (dpt_info(b, &info))
		ktap_bail("endpoint info");
	ktap_ok(write(a, msg, sizeof(msg)) == sizeof(msg) &&
		dpt_wait_readable(b, DPT_WAIT_MS) == 1, "a message arrives");

	m = mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, b, 0);
	if (!ktap_ok(m != MAP_FAILED, "mmap(map_size, PROT_READ, MAP_SHARED, 0)"))
		ktap_finish();
	pool.map = m;
	pool.len = info.map_size;
	pool.ctrl = (const void *)m;
	pool.data = m + pool.ctrl->ctrl_size;
	ktap_ok(pool.ctrl->magic == DP_POOL_MAGIC && pool.ctrl->version == DP_POOL_VERSION &&
		pool.ctrl->ctrl_size == DP_POOL_CTRL_SIZE &&
		pool.ctrl->data_size == info.data_size && pool.ctrl->nid == dpt.nidb &&
		pool.ctrl->dpid == DPID_B,
		"control page: magic %#x version %u ctrl_size %u data_size %u nid %u dpid %u",
		pool.ctrl->magic, pool.ctrl->version, pool.ctrl->ctrl_size,
		pool.ctrl->data_size, pool.ctrl->nid, pool.ctrl->dpid);
	ktap_ok(info.map_size == pool.ctrl->ctrl_size + info.data_size,
		"map_size %u = ctrl_size + data_size", info.map_size);
	t = dpt_head(&pool);
	ktap_ok(t && t->len == sizeof(msg) && !memcmp(t + 1, msg, sizeof(msg)),
		"the message is visible at the head");
	ktap_ok(pool.ctrl->prod - pool.ctrl->cons == DP_TOKEN_SPACE(sizeof(msg)),
		"prod - cons = DP_TOKEN_SPACE(len)");

	sig = child_signal(do_store, m);
	ktap_ok(sig == SIGSEGV, "store to the control page: SIGSEGV (signal %d)", sig);
	sig = child_signal(do_store, (uint8_t *)t + 40);
	ktap_ok(sig == SIGSEGV, "store to the message: SIGSEGV (signal %d)", sig);
	sig = child_signal(do_load, m);
	ktap_ok(sig == SIGSEGV, "a forked child does not inherit the mapping: load SIGSEGV (signal %d)", sig);
	ktap_ok(t->len == sizeof(msg) && !memcmp(t + 1, msg, sizeof(msg)),
		"the message is unchanged");

	KTAP_ERRNO(mprotect(m, info.map_size, PROT_READ | PROT_WRITE), EACCES,
		   "mprotect(PROT_WRITE): EACCES");
	KTAP_ERRNO(mprotect(m + pg, pg, PROT_WRITE), EACCES, "mprotect of one data page: EACCES");
	KTAP_SUCCESS(mprotect(m, info.map_size, PROT_READ), "mprotect(PROT_READ) is allowed");
	sig = child_signal(do_store, m + DP_POOL_CTRL_SIZE);
	ktap_ok(sig == SIGSEGV, "still SIGSEGV on store after the failed mprotect");

	p = mremap(m, info.map_size, info.map_size + pg, MREMAP_MAYMOVE);
	ktap_ok(p == MAP_FAILED, "mremap cannot grow the mapping");
	if (p != MAP_FAILED)
		m = p;
	munmap(m, info.map_size);

	KTAP_ERRNO(mmap(NULL, info.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, b, 0), EACCES,
		   "mmap PROT_WRITE: EACCES");
	KTAP_ERRNO(mmap(NULL, info.map_size, PROT_READ, MAP_PRIVATE, b, 0), EINVAL,
		   "mmap MAP_PRIVATE: EINVAL");
	KTAP_ERRNO(mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, b, pg), EINVAL,
		   "mmap offset one page: EINVAL");
	KTAP_ERRNO(mmap(NULL, info.data_size, PROT_READ, MAP_SHARED, b, DP_POOL_CTRL_SIZE), EINVAL,
		   "mmap of the data area alone (offset ctrl_size): EINVAL");
	KTAP_ERRNO(mmap(NULL, info.map_size + pg, PROT_READ, MAP_SHARED, b, 0), EINVAL,
		   "mmap longer than map_size: EINVAL");
	KTAP_ERRNO(mmap(NULL, (size_t)info.map_size * 64, PROT_READ, MAP_SHARED, b, 0), EINVAL,
		   "mmap 64 x map_size: EINVAL");
	m = mmap(NULL, DP_POOL_CTRL_SIZE, PROT_READ, MAP_SHARED, b, 0);
	ktap_ok(m != MAP_FAILED && ((struct dp_pool_ctrl *)m)->magic == DP_POOL_MAGIC,
		"mmap of the control page alone works");
	if (m != MAP_FAILED) {
		p = mremap(m, DP_POOL_CTRL_SIZE, info.map_size, MREMAP_MAYMOVE);
		ktap_ok(p == MAP_FAILED, "mremap cannot grow a partial mapping to map_size");
		munmap(p == MAP_FAILED ? m : p, p == MAP_FAILED ? DP_POOL_CTRL_SIZE : info.map_size);
	}
	/* Two mappings see the same pool. */
	m = mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, b, 0);
	p = mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, b, 0);
	ktap_ok(m != MAP_FAILED && p != MAP_FAILED && !memcmp(m, p, 256) &&
		!memcmp(m + DP_POOL_CTRL_SIZE, p + DP_POOL_CTRL_SIZE, 256),
		"two mappings show the same pool");
	if (m != MAP_FAILED)
		munmap(m, info.map_size);
	if (p != MAP_FAILED)
		munmap(p, info.map_size);

	u = dpt_open();
	KTAP_ERRNO(mmap(NULL, DP_POOL_CTRL_SIZE, PROT_READ, MAP_SHARED, u, 0), EBADFD,
		   "mmap of an unbound endpoint: EBADFD");
	close(u);
	close(a);
	close(b);
	ktap_finish();
}
