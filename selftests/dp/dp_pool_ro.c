// SPDX-License-Identifier: GPL-2.0
/*
 * The token buffer pool is read-only to its owner and private to it: the
 * layout is as documented, a store raises SIGSEGV, mprotect(PROT_WRITE),
 * mmap(PROT_WRITE) and MAP_PRIVATE fail, PROT_EXEC is refused to mmap and
 * mprotect alike, offset and length are checked, a forked child does not
 * inherit the mapping, mremap cannot grow it, and the
 * debugger paths that write through read-only mappings (/proc/self/mem,
 * ptrace PTRACE_POKEDATA, process_vm_writev) fail too.  msync() of the
 * mapping releases nothing (fsync(2) still releases a message).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
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

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	siglongjmp(segv_jmp, sig);
}

/*
 * Store to p in this process (the mapping under test; a forked child has
 * none) and return the signal it raised, 0 if the store went through.
 */
static int store_signal(volatile uint8_t *p)
{
	struct sigaction sa = { .sa_handler = on_segv }, old_segv, old_bus;
	int sig;

	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(segv_jmp, 1);
	if (!sig)
		*p = 0x5a;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

static void do_load(volatile uint8_t *p)
{
	uint8_t v = *p;

	(void)v;
}

/* Child: map fd's pool, tell the parent where, stop for it to trace us. */
static void traced_child(int fd, int wr)
{
	struct dpt_pool p;
	uintptr_t addr;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) || dpt_map(fd, &p))
		_exit(2);
	addr = (uintptr_t)dpt_head(&p);
	if (write(wr, &addr, sizeof(addr)) != sizeof(addr))
		_exit(3);
	raise(SIGSTOP);
	_exit(0);
}

/* PTRACE_POKEDATA into a traced child's mapping of the pool. */
static void poke(int fd)
{
	uintptr_t addr = 0;
	int p[2], st;
	long word, r;
	pid_t pid;

	if (pipe(p))
		return;
	pid = dpt_fork();
	if (pid == 0) {
		close(p[0]);
		traced_child(fd, p[1]);
	}
	close(p[1]);
	if (!ktap_ok(read(p[0], &addr, sizeof(addr)) == sizeof(addr) && addr &&
		     waitpid(pid, &st, 0) == pid && WIFSTOPPED(st),
		     "a traced child maps the pool and stops")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(p[0]);
		return;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL);
	ktap_ok(errno == 0, "PTRACE_PEEKDATA reads the child's pool");
	r = ptrace(PTRACE_POKEDATA, pid, (void *)addr, (void *)(word ^ 0xff));
	ktap_ok(r == -1 && errno == EIO, "PTRACE_POKEDATA into it fails: EIO (%s)", strerror(errno));
	errno = 0;
	ktap_ok(ptrace(PTRACE_PEEKDATA, pid, (void *)addr, NULL) == word && errno == 0,
		"the word is unchanged");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
}

/* Writes that bypass page protections for debuggers must not reach the pool. */
static void forced_writes(int fd, const struct dp_token *t)
{
	uint8_t before[64], v = 0x5a, back = 0;
	struct iovec local = { .iov_base = &v, .iov_len = 1 };
	struct iovec remote = { .iov_base = (void *)t, .iov_len = 1 };
	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ssize_t r;

	memcpy(before, t, sizeof(before));
	if (ktap_ok(mem >= 0, "open /proc/self/mem")) {
		r = pwrite(mem, &v, 1, (off_t)(uintptr_t)t);
		ktap_ok(r == -1 && errno == EIO, "write to the pool through /proc/self/mem: EIO (%s)",
			r == -1 ? strerror(errno) : "written");
		r = pread(mem, &back, 1, (off_t)(uintptr_t)t);
		ktap_ok(r == 1 && back == before[0], "reading it there works and shows the old byte");
		close(mem);
	}
	r = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	if (r == -1 && errno == ENOSYS)	/* no CONFIG_CROSS_MEMORY_ATTACH */
		ktap_skip("kernel without process_vm_writev", "process_vm_writev into the pool");
	else
		ktap_ok(r == -1 && errno == EFAULT, "process_vm_writev into the pool: EFAULT (%s)",
			r == -1 ? strerror(errno) : "written");
	poke(fd);
	ktap_ok(!memcmp(before, t, sizeof(before)), "the pool is unchanged");
}

/* Messages queued on fd, or -1. */
static long long queued(int fd)
{
	struct dp_ep_stats st;

	return dpt_stats(fd, &st) ? -1 : (long long)st.queued;
}

/*
 * msync() of the mapping syncs a byte range through the same file
 * operation as fsync(2), which releases a message: it must not.
 */
static void msync_keeps(int fd, uint8_t *m, size_t len, long pg)
{
	uint64_t cons = ((const struct dp_pool_ctrl *)m)->cons;

	KTAP_SUCCESS(msync(m, len, MS_SYNC), "msync(MS_SYNC) of the whole mapping returns 0");
	KTAP_SUCCESS(msync(m + pg, (size_t)pg, MS_SYNC), "msync(MS_SYNC) of one data page returns 0");
	KTAP_SUCCESS(msync(m, len, MS_ASYNC | MS_INVALIDATE), "msync(MS_ASYNC|MS_INVALIDATE) returns 0");
	ktap_ok(queued(fd) == 1 && ((const struct dp_pool_ctrl *)m)->cons == cons,
		"... and none of them released the message (queued %lld)", queued(fd));
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
	msync_keeps(b, m, info.map_size, pg);

	sig = store_signal(m);
	ktap_ok(sig == SIGSEGV, "store to the control page: SIGSEGV (signal %d)", sig);
	sig = store_signal((uint8_t *)t + 40);
	ktap_ok(sig == SIGSEGV, "store to the message: SIGSEGV (signal %d)", sig);
	sig = child_signal(do_load, m);
	ktap_ok(sig == SIGSEGV, "a forked child does not inherit the mapping: load SIGSEGV (signal %d)", sig);
	ktap_ok(t->len == sizeof(msg) && !memcmp(t + 1, msg, sizeof(msg)),
		"the message is unchanged");

	KTAP_ERRNO(mprotect(m, info.map_size, PROT_READ | PROT_WRITE), EACCES,
		   "mprotect(PROT_WRITE): EACCES");
	KTAP_ERRNO(mprotect(m + pg, pg, PROT_WRITE), EACCES, "mprotect of one data page: EACCES");
	KTAP_ERRNO(mprotect(m, info.map_size, PROT_READ | PROT_EXEC), EACCES,
		   "mprotect(PROT_READ|PROT_EXEC): EACCES");
	KTAP_SUCCESS(mprotect(m, info.map_size, PROT_READ), "mprotect(PROT_READ) is allowed");
	sig = store_signal(m + DP_POOL_CTRL_SIZE);
	ktap_ok(sig == SIGSEGV, "still SIGSEGV on store after the failed mprotect");
	forced_writes(b, t);

	p = mremap(m, info.map_size, info.map_size + pg, MREMAP_MAYMOVE);
	ktap_ok(p == MAP_FAILED, "mremap cannot grow the mapping");
	if (p != MAP_FAILED)
		m = p;
	munmap(m, info.map_size);

	KTAP_ERRNO(mmap(NULL, info.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, b, 0), EACCES,
		   "mmap PROT_WRITE: EACCES");
	KTAP_ERRNO(mmap(NULL, info.map_size, PROT_READ | PROT_EXEC, MAP_SHARED, b, 0), EACCES,
		   "mmap PROT_EXEC: EACCES");
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

	ktap_ok(queued(b) == 1 && !fsync(b) && queued(b) == 0,
		"fsync releases the message msync left");
	u = dpt_open();
	KTAP_ERRNO(mmap(NULL, DP_POOL_CTRL_SIZE, PROT_READ, MAP_SHARED, u, 0), EBADFD,
		   "mmap of an unbound endpoint: EBADFD");
	close(u);
	close(a);
	close(b);
	ktap_finish();
}
