// SPDX-License-Identifier: GPL-2.0
/*
 * dp_fuzz [SECONDS [SEED]]: a bounded, seeded syscall fuzzer for /dev/dp.
 *
 * For SECONDS (default 60, or $DPT_FUZZ_SECS) several processes of several
 * threads each throw random, boundary and garbage arguments at every file
 * operation of /dev/dp: every DP_IOC_* and random ioctl numbers with NULL,
 * unmapped, misaligned, kernel, half-mapped and read-only pointers; read,
 * write, readv, writev and sendfile of random sizes; poll, epoll, fsync,
 * lseek, fcntl, flock; mmap with random offsets, lengths, protections and
 * flags, then mremap, mprotect, madvise and partial munmap of the mappings;
 * close and dup2 of fds that other threads are using, fork while endpoints
 * and pools are held, children that exit while the parent goes on, setns
 * between the nodes.  Half the processes run as uid 1001.  Meanwhile one
 * process sends checked messages between the nodes dpA and dpB (and within
 * dpL), one detaches and re-attaches their NICs and changes their NARTs
 * with dpctl, and one calls delete_module("dp") over and over: with fds
 * open it must be refused every time.
 *
 * The seed (random, or SEED, or $DPT_FUZZ_SEED) is printed first: the same
 * seed makes the same choices again (the interleaving of threads differs).
 *
 * Afterwards it checks what a user would: every worker finished (no hang),
 * no rule was broken while fuzzing (a writable or private pool mapping, a
 * pool that stopped looking like one, a wrong errno on an endpoint only one
 * thread uses, an unload that succeeded), the traffic arrived uncorrupted,
 * the module is still loaded and a fresh pair exchanges messages, every
 * node's counters are sane and add up, no endpoint and no pool memory is
 * left behind, and an unload is still refused while only a mapping holds
 * an endpoint.  The
 * runner then checks that rmmod is clean and the kernel log has no oops,
 * WARN or hung task.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "dp.h"	/* libdp's (-I, Makefile) */
#include "ktap.h"
#include "dptest.h"

#define NPROCS		4	/* fuzzing processes ($DPT_FUZZ_PROCS) */
#define NTHREADS	3	/* fuzzing threads in each */
#define NSLOT		16	/* shared endpoint fds per process */
#define NMAP		24	/* tracked pool mappings per process */
#define MAX_KIDS	4	/* forked children alive per process */
#define MAX_VIOL	24
#define BUF_SIZE	(128u << 10)
#define PAGE		4096u
#define FD_FIXED	800	/* namespace fds, memfd: never a slot's number */
#define FD_PRIV		900	/* each thread's own endpoint */
#define UID_UNPRIV	1001
#define DPID_TRAFFIC	7000	/* 7000..7003: the traffic endpoints */
#define DPID_FRESH	7100
#define DPID_KEEPER	9000
#define DPID_PRIV	20000
#define GRACE_S		30	/* for workers to stop after the deadline */
#define VMALLOC_SLACK_KIB 2048	/* other vmalloc users, freeing in flight */

/*
 * DPT_TMO_SCALE (lib.sh: 4 on make check-debug's kernels, whose every bound
 * is that much longer), or 1: every bound of this test that is a time.
 */
static unsigned int tmo_scale(void)
{
	const char *v = getenv("DPT_TMO_SCALE");
	unsigned long n = v && *v ? strtoul(v, NULL, 0) : 0;

	return n ? (unsigned int)n : 1;
}

/* ---- state shared by every process of the run -------------------------- */

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_BIND, OP_CONNECT, OP_RELEASE, OP_QUERY,
	OP_SEND, OP_IOCTL, OP_WRITE, OP_READ, OP_VEC, OP_POLL, OP_EPOLL,
	OP_MISC, OP_MMAP, OP_REMAP, OP_MPROTECT, OP_MADVISE, OP_MUNMAP,
	OP_TOUCH, OP_FORK, OP_SETNS, OP_PRIV, OP_COUNT
};

static const char *const op_name[OP_COUNT] = {
	"open", "close", "dup", "bind", "connect", "release", "query", "send",
	"ioctl", "write", "read", "vec", "poll", "epoll", "misc", "mmap",
	"mremap", "mprotect", "madvise", "munmap", "touch", "fork", "setns",
	"strict",
};

/* How often each operation is picked, relative to the others. */
static const unsigned int op_weight[OP_COUNT] = {
	[OP_OPEN] = 6, [OP_CLOSE] = 4, [OP_DUP] = 3, [OP_BIND] = 6,
	[OP_CONNECT] = 5, [OP_RELEASE] = 4, [OP_QUERY] = 4, [OP_SEND] = 8,
	[OP_IOCTL] = 6, [OP_WRITE] = 8, [OP_READ] = 8, [OP_VEC] = 3,
	[OP_POLL] = 3, [OP_EPOLL] = 3, [OP_MISC] = 4, [OP_MMAP] = 6,
	[OP_REMAP] = 3, [OP_MPROTECT] = 3, [OP_MADVISE] = 4, [OP_MUNMAP] = 3,
	[OP_TOUCH] = 5, [OP_FORK] = 1, [OP_SETNS] = 2, [OP_PRIV] = 4,
};

enum { TR_AB, TR_BA, TR_LOCAL, TR_COUNT };
static const char *const tr_name[TR_COUNT] = { "dpA -> dpB", "dpB -> dpA", "within dpL" };

struct shared {
	uint64_t deadline;		/* CLOCK_MONOTONIC, ns */
	int stop;
	uint64_t tries[OP_COUNT], ok[OP_COUNT];
	uint64_t kids, kid_crashes;
	uint64_t rmmod_tries, rmmod_refused, insmod_tries;
	uint64_t big_pools;
	uint64_t tr_sent[TR_COUNT], tr_recv[TR_COUNT], tr_reordered[TR_COUNT], tr_foreign;
	/* the sending endpoint's tx_undelivered and tx_unacked once drained */
	uint64_t tr_undeliv[TR_COUNT], tr_unacked[TR_COUNT];
	/* the receiving endpoint's rx_msgs then, and what the traffic read there */
	uint64_t tr_placed[TR_COUNT], tr_read[TR_COUNT];
	uint64_t tr_spray;		/* traffic messages sent to the fuzzers' DPIDs */
	uint64_t admin_ops;
	uint64_t ctrl_odd;		/* control-page reads that saw no pool */
	uint64_t map_stale;		/* table entries over the process's own mappings */
	int ctrl_said;			/* ctrl_what is taken */
	char ctrl_what[300];		/* the first such read: where, what */
	uint32_t magic;			/* marks the traffic's messages */
	int nviol, nkinds;
	uint64_t viol_n[MAX_VIOL];
	char viol[MAX_VIOL][200];
};

static struct shared *sh;
static uint32_t nid_a, nid_b, nid_l;
static const char *ns_l = "dpL", *ns_n = "dpN";

/*
 * A rule was broken: recorded for the parent to report, the same text
 * once with a count (two processes may race to add the same one: harmless).
 */
static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	char msg[sizeof(sh->viol[0])];
	va_list ap;
	int i, n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__atomic_fetch_add(&sh->nviol, 1, __ATOMIC_RELAXED);
	n = __atomic_load_n(&sh->nkinds, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && i < MAX_VIOL; i++)
		if (!strcmp(sh->viol[i], msg)) {
			__atomic_fetch_add(&sh->viol_n[i], 1, __ATOMIC_RELAXED);
			return;
		}
	i = __atomic_fetch_add(&sh->nkinds, 1, __ATOMIC_ACQ_REL);
	if (i >= MAX_VIOL)
		return;
	memcpy(sh->viol[i], msg, sizeof(msg));
	__atomic_fetch_add(&sh->viol_n[i], 1, __ATOMIC_RELAXED);
}

static void count(enum op op, int ok)
{
	__atomic_fetch_add(&sh->tries[op], 1, __ATOMIC_RELAXED);
	if (ok)
		__atomic_fetch_add(&sh->ok[op], 1, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) ||
	       now_ns() >= __atomic_load_n(&sh->deadline, __ATOMIC_RELAXED);
}

/* ---- seeded randomness (splitmix64) ------------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int one_in(struct rng *r, uint32_t n)
{
	return below(r, n) == 0;
}

/* ---- one fuzzing process ------------------------------------------------ */

struct ment {			/* a pool mapping this process made */
	uint8_t *addr;
	size_t len;
	int dp;			/* verified: a pool's control page at addr */
};

#define NOWN	256	/* the process's own mappings remembered */

struct proc {
	int idx;
	int slot[NSLOT];	/* endpoint fds, -1 if empty; any thread */
	int epfd;
	int nsfd[5];		/* dpA, dpB, dpL, dpN, init */
	int memfd;
	uint8_t *ro_page;	/* readable, not writable */
	uint8_t *edge;		/* end of a readable page: PROT_NONE follows */
	pthread_mutex_t map_lock;	/* every change of the address space */
	struct ment map[NMAP];
	int nmap;
	/* what the process had mapped when its threads started (map_own_snapshot) */
	struct { uintptr_t lo, hi; } own[NOWN];
	int nown;
	pid_t kids[MAX_KIDS];
	pthread_t tid[NTHREADS];
};

static struct proc P;

struct thr {
	struct rng rng;
	int idx;
	uint8_t *buf;		/* BUF_SIZE bytes */
	int priv;		/* this thread's own bound endpoint, or -1 */
	uint32_t priv_dpid;
	int in_child;		/* in a forked child: no locks, no threads */
	int done;		/* the thread has left its loop */
};

static struct thr thr[NTHREADS];

/*
 * A fault in a guarded access jumps back instead of killing the process.
 * volatile: the compiler must not drop the store as dead, the handler reads it.
 */
typedef sigjmp_buf *jmp_ptr;
static __thread volatile jmp_ptr guard;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	char msg[96];
	int n;

	(void)uc;
	if (guard)
		siglongjmp(*guard, 1);
	/* a bug of this program: say where, then die of the signal */
	n = snprintf(msg, sizeof(msg), "# dp_fuzz pid %d: signal %d at address %p\n",
		     (int)getpid(), sig, si->si_addr);
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		n = 0;
	ktap_crash(sig);	/* the results so far, then die of the signal */
}

static void on_usr1(int sig)
{
	(void)sig;	/* only interrupts a blocking call */
}

/* Read the pool's counters and header; -1 if the page faults. */
static int guarded_ctrl(const struct dp_pool_ctrl *c, struct dp_pool_ctrl *out)
{
	volatile int i;
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1)) {
		guard = NULL;
		return -1;
	}
	guard = &jb;
	memset(out, 0, sizeof(*out));
	out->magic = *(const volatile uint32_t *)&c->magic;
	out->version = *(const volatile uint32_t *)&c->version;
	out->ctrl_size = *(const volatile uint32_t *)&c->ctrl_size;
	out->data_size = *(const volatile uint32_t *)&c->data_size;
	out->dpid = *(const volatile uint32_t *)&c->dpid;
	/*
	 * prod between two equal loads of cons: then prod - cons is what the
	 * kernel had at one moment.  Messages keep coming: a few tries, and
	 * if cons never holds still, nothing to judge (0, 0).
	 */
	for (i = 0; i < 4; i++) {
		out->cons = __atomic_load_n(&c->cons, __ATOMIC_ACQUIRE);
		out->prod = __atomic_load_n(&c->prod, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->cons, __ATOMIC_ACQUIRE) == out->cons)
			break;
	}
	if (i == 4)
		out->cons = out->prod = 0;
	guard = NULL;
	return 0;
}

/* Read one byte; -1 if it faults. */
static int guarded_read(const uint8_t *p)
{
	sigjmp_buf jb;
	int v;

	if (sigsetjmp(jb, 1)) {
		guard = NULL;
		return -1;
	}
	guard = &jb;
	v = *(const volatile uint8_t *)p;
	guard = NULL;
	return v;
}

/* Write a byte back in place; 0 if the write went through, -1 if it faulted. */
static int guarded_write(uint8_t *p)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1)) {
		guard = NULL;
		return -1;
	}
	guard = &jb;
	*(volatile uint8_t *)p = *(volatile uint8_t *)p;
	guard = NULL;
	return 0;
}

/* What a mapped control page must hold; NULL if it does. */
static const char *ctrl_broken(const struct dp_pool_ctrl *c)
{
	uint32_t ds = c->data_size;

	if (c->magic != DP_POOL_MAGIC || c->version != DP_POOL_VERSION)
		return "magic or version";
	if (c->ctrl_size != DP_POOL_CTRL_SIZE || ds < DP_POOL_MIN || ds > DP_POOL_MAX ||
	    (ds & (ds - 1)))
		return "sizes";
	if (!c->dpid)
		return "dpid 0";
	if (c->prod - c->cons > ds || c->cons % DP_TOKEN_ALIGN || c->prod % DP_TOKEN_ALIGN)
		return "prod/cons";
	return NULL;
}

/* ---- argument pickers --------------------------------------------------- */

/* A pointer the kernel must refuse (nothing readable there, or only part). */
static void *bad_ptr(struct rng *r, size_t need)
{
	switch (below(r, 8)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(8 + below(r, 4000));
	case 2:
		return (void *)0xffffffff81000000ul;	/* kernel text */
	case 3:
		return (void *)(0xffff888000000000ul + (rnd(r) & 0xfffffff000ul));
	case 4:
		return (void *)(~(uintptr_t)0 - below(r, 64));
	case 5:
		return (void *)0x0000800000000000ul;	/* first non-canonical */
	default:	/* straddles into a PROT_NONE page */
		return P.edge - 1 - below(r, need > 1 ? (uint32_t)need - 1 : 1);
	}
}

/* Anything at all: mostly the thread's buffer, sometimes garbage. */
static void *any_ptr(struct thr *t, size_t need)
{
	struct rng *r = &t->rng;

	switch (below(r, 12)) {
	case 0:
		return t->buf + 1 + below(r, 7);	/* misaligned */
	case 1:
		return P.ro_page + below(r, 64);
	case 2:
		return (void *)(uintptr_t)rnd(r);
	case 3:
	case 4:
		return bad_ptr(r, need);
	case 5:		/* a pool mapping, if any: readable, not writable */
		if (P.nmap)
			return P.map[below(r, (uint32_t)P.nmap)].addr;
		return t->buf;
	default:
		return t->buf;
	}
}

static uint32_t pick_dpid(struct rng *r)
{
	switch (below(r, 10)) {
	case 0:
		return 0;
	case 1:
		return UINT32_MAX;
	case 2:
		return (uint32_t)rnd(r);
	case 3:
		return DPID_TRAFFIC + below(r, 4);
	default:
		return 1 + below(r, 32);
	}
}

static uint32_t pick_nid(struct rng *r)
{
	switch (below(r, 10)) {
	case 0:
		return 0;
	case 1:
		return UINT32_MAX;
	case 2:
		return (uint32_t)rnd(r);
	case 3:
		return 1 + below(r, 4);
	case 4:
		return nid_l;
	case 5:
	case 6:
		return nid_a;
	default:
		return nid_b;
	}
}

static uint32_t pick_pool(struct rng *r)
{
	static const uint32_t odd[] = {
		1, DP_POOL_MIN - 1, DP_POOL_MIN + 1, 3 * DP_POOL_MIN, DP_POOL_MAX * 2,
		DP_POOL_MAX + DP_POOL_MIN, 0x80000000u, 0xffffffffu,
	};

	switch (below(r, 16)) {
	case 0:
		return 0;	/* the module's default */
	case 1:
		return odd[below(r, sizeof(odd) / sizeof(odd[0]))];
	case 2:
		return (uint32_t)rnd(r);
	case 3:
		return 1u << 20;
	case 4:		/* the largest pool, twice per run: memory is 512 MiB */
		if (__atomic_fetch_add(&sh->big_pools, 1, __ATOMIC_RELAXED) < 2)
			return DP_POOL_MAX;
		return DP_POOL_MAX * 2;
	default:
		return DP_POOL_MIN << below(r, 3);
	}
}

/* A length: small, at the limits (wire, tulip and veth MTUs), or absurd. */
static size_t pick_len(struct rng *r)
{
	switch (below(r, 14)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return 65535;
	case 3:
		return 65536;
	case 4:
		return (size_t)1 << (20 + below(r, 44));
	case 5:
		return SIZE_MAX - below(r, 2);
	case 6:
		return (size_t)rnd(r);
	case 7:
		return 1447 + below(r, 3);	/* tulip: 1500 - 52 */
	case 8:
		return 8947 + below(r, 3);	/* veth at MTU 9000: 9000 - 52 */
	default:
		return below(r, 2048);
	}
}

/* ---- endpoint fd slots -------------------------------------------------- */

static int slot_fd(struct rng *r)
{
	return __atomic_load_n(&P.slot[below(r, NSLOT)], __ATOMIC_RELAXED);
}

/* The slot owns the fd: whoever takes it out closes it. */
static void slot_put(struct rng *r, int fd)
{
	int old = __atomic_exchange_n(&P.slot[below(r, NSLOT)], fd, __ATOMIC_ACQ_REL);

	if (old >= 0)
		close(old);
}

static int slot_take(struct rng *r)
{
	return __atomic_exchange_n(&P.slot[below(r, NSLOT)], -1, __ATOMIC_ACQ_REL);
}

/* Move fd to the lowest free number >= min (out of the slots' range). */
static int fd_high(int fd, int min)
{
	int h;

	if (fd < 0)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, min);
	close(fd);
	return h;
}

/* ---- operations on endpoints -------------------------------------------- */

/*
 * Half the calls of most operations take arguments that can work (so the
 * fuzzing gets past EBADF and EINVAL into bound, connected, mapped and
 * receiving endpoints), the other half anything at all.
 */
static int sane(struct rng *r)
{
	return one_in(r, 2);
}

static int bind_random(struct thr *t, int fd, void *arg)
{
	struct dp_bind *b = (struct dp_bind *)t->buf;
	struct rng *r = &t->rng;

	if (sane(r)) {
		b->dpid = one_in(r, 8) ? DPID_TRAFFIC + below(r, 4) : 1 + below(r, 32);
		b->pool_size = one_in(r, 4) ? 0 : DP_POOL_MIN << below(r, 3);
		b->flags = b->reserved = 0;
		return ioctl(fd, DP_IOC_BIND, t->buf);
	}
	b->dpid = pick_dpid(r);
	b->pool_size = pick_pool(r);
	b->flags = one_in(r, 8) ? (uint32_t)rnd(r) : 0;
	b->reserved = one_in(r, 8) ? (uint32_t)rnd(r) : 0;
	if (arg != t->buf && (uint8_t *)arg > t->buf && (uint8_t *)arg < t->buf + 64)
		memmove(arg, b, sizeof(*b));
	return ioctl(fd, DP_IOC_BIND, arg);
}

/* An edge to an endpoint that may exist: a fuzzer's, or the traffic's. */
static int connect_sane(struct rng *r, int fd, struct dp_addr *a)
{
	static const uint32_t *const nids[] = { &nid_a, &nid_b, &nid_l };

	a->nid = *nids[below(r, 3)];
	a->dpid = one_in(r, 8) ? DPID_TRAFFIC + below(r, 4) : 1 + below(r, 32);
	return ioctl(fd, DP_IOC_CONNECT, a);
}

static void op_open(struct thr *t)
{
	static const int fl[] = {
		O_RDWR, O_RDWR, O_RDONLY, O_WRONLY, O_RDWR | O_NONBLOCK,
		O_RDWR | O_CLOEXEC, O_RDWR | O_NONBLOCK | O_CLOEXEC,
	};
	struct rng *r = &t->rng;
	int fd = open(DP_DEVICE_PATH, fl[below(r, sizeof(fl) / sizeof(fl[0]))]);

	count(OP_OPEN, fd >= 0);
	if (fd < 0)
		return;
	if (!one_in(r, 4) && bind_random(t, fd, t->buf) == 0 && !one_in(r, 4))
		connect_sane(r, fd, (struct dp_addr *)t->buf);
	slot_put(r, fd);
}

static void op_close(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd;

	if (one_in(r, 8) && !t->in_child)
		fd = __atomic_exchange_n(&P.epfd, -1, __ATOMIC_ACQ_REL);
	else
		fd = slot_take(r);
	count(OP_CLOSE, fd >= 0 && close(fd) == 0);
}

/* dup/dup2/dup3 of endpoint fds, also onto fds other threads are using. */
static void op_dup(struct thr *t)
{
	struct rng *r = &t->rng;
	int src = slot_fd(r), dst = slot_fd(r), fd = -1;

	switch (below(r, 4)) {
	case 0:
		fd = dup(src);
		break;
	case 1:
		fd = fcntl(src, F_DUPFD_CLOEXEC, 100);
		break;
	case 2:		/* onto a slot's fd: the slot keeps owning the number */
		count(OP_DUP, dst >= 3 && dst < FD_FIXED && dup2(src, dst) >= 0);
		return;
	default:
		count(OP_DUP, dst >= 3 && dst < FD_FIXED && dup3(src, dst, O_CLOEXEC) >= 0);
		return;
	}
	count(OP_DUP, fd >= 0);
	if (fd >= 0)
		slot_put(r, fd);
}

static void op_bind(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd = slot_fd(r);
	void *arg = one_in(r, 4) ? any_ptr(t, sizeof(struct dp_bind)) : t->buf;

	count(OP_BIND, bind_random(t, fd, arg) == 0);
}

static void op_connect(struct thr *t)
{
	struct rng *r = &t->rng;
	struct dp_addr *a = (struct dp_addr *)t->buf;
	unsigned long cmd = one_in(r, 3) ? DP_IOC_DISCONNECT : DP_IOC_CONNECT;
	int fd = slot_fd(r);

	if (sane(r)) {
		count(OP_CONNECT, connect_sane(r, fd, a) == 0);
		return;
	}
	a->nid = pick_nid(r);
	a->dpid = pick_dpid(r);
	count(OP_CONNECT, ioctl(fd, cmd, one_in(r, 6) ? any_ptr(t, sizeof(*a)) : a) == 0);
}

static void op_release(struct thr *t)
{
	static const uint32_t ns[] = { 0, 1, 1, 2, 7, 1000, UINT32_MAX };
	struct rng *r = &t->rng;
	uint32_t *n = (uint32_t *)t->buf;
	int fd = slot_fd(r);

	switch (below(r, 4)) {
	case 0:
		count(OP_RELEASE, fsync(fd) == 0);
		return;
	case 1:
		count(OP_RELEASE, fdatasync(fd) == 0);
		return;
	default:
		*n = ns[below(r, sizeof(ns) / sizeof(ns[0]))];
		count(OP_RELEASE, ioctl(fd, DP_IOC_RELEASE,
					one_in(r, 6) ? any_ptr(t, 4) : (void *)n) >= 0);
	}
}

static void op_query(struct thr *t)
{
	static const unsigned long cmds[] = { DP_IOC_INFO, DP_IOC_STATS, DP_IOC_NODE_STATS };
	struct rng *r = &t->rng;
	int fd = slot_fd(r);
	void *arg = one_in(r, 3) ? any_ptr(t, sizeof(struct dp_node_stats)) : t->buf;

	count(OP_QUERY, ioctl(fd, cmds[below(r, 3)], arg) == 0);
}

static void op_send(struct thr *t)
{
	struct rng *r = &t->rng;
	struct dp_send *s = (struct dp_send *)(t->buf + BUF_SIZE - 64);
	struct dp_info *info = (struct dp_info *)(t->buf + BUF_SIZE - 128);
	int fd = slot_fd(r);

	if (sane(r)) {		/* on the current edge, a size that fits */
		if (ioctl(fd, DP_IOC_INFO, info) == 0 && !info->n_edges)
			connect_sane(r, fd, &s->to);
		else if (info->n_edges)
			s->to = info->cur;
		s->buf = (uintptr_t)t->buf;
		s->len = below(r, 1500);
		s->flags = 0;
		count(OP_SEND, ioctl(fd, DP_IOC_SEND, s) >= 0);
		return;
	}
	s->to.nid = pick_nid(r);
	s->to.dpid = pick_dpid(r);
	s->buf = (uintptr_t)(one_in(r, 4) ? any_ptr(t, 64) : t->buf);
	s->len = (uint32_t)pick_len(r);
	s->flags = one_in(r, 10) ? (uint32_t)rnd(r) : 0;
	count(OP_SEND, ioctl(fd, DP_IOC_SEND, one_in(r, 8) ? any_ptr(t, sizeof(*s)) : s) >= 0);
}

/* Generic ioctls that act on the inode or filesystem, not on dp: skipped. */
static int vfs_ioctl_type(unsigned int cmd)
{
	unsigned int type = _IOC_TYPE(cmd);

	return type == 'f' || type == 'X' || type == 0x94 || type == 0x54;
}

static void op_ioctl(struct thr *t)
{
	static const unsigned long dp_cmds[] = {
		DP_IOC_BIND, DP_IOC_CONNECT, DP_IOC_DISCONNECT, DP_IOC_RELEASE,
		DP_IOC_INFO, DP_IOC_SEND, DP_IOC_STATS, DP_IOC_NODE_STATS,
	};
	struct rng *r = &t->rng;
	unsigned int cmd;
	unsigned long arg;
	int fd = slot_fd(r);

	switch (below(r, 4)) {
	case 0:
		cmd = (unsigned int)rnd(r);
		break;
	case 1:
		cmd = _IOC(below(r, 4), DP_IOC_MAGIC, below(r, 256), below(r, 1u << 14));
		break;
	case 2:		/* a real number with another size or direction */
		cmd = (unsigned int)dp_cmds[below(r, 8)] ^ (1u << (16 + below(r, 16)));
		break;
	default:	/* a real number with an integer for an argument */
		cmd = (unsigned int)dp_cmds[below(r, 8)];
		break;
	}
	if (vfs_ioctl_type(cmd))
		cmd = _IO(DP_IOC_MAGIC, 0);
	arg = one_in(r, 3) ? (unsigned long)rnd(r) : (unsigned long)any_ptr(t, 256);
	count(OP_IOCTL, ioctl(fd, cmd, arg) >= 0);
}

static void op_write(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd = slot_fd(r);
	struct dp_info *info = (struct dp_info *)(t->buf + BUF_SIZE - 128);
	size_t len = pick_len(r);
	void *p = one_in(r, 4) ? any_ptr(t, len) : t->buf;

	if (sane(r)) {
		if (ioctl(fd, DP_IOC_INFO, info) == 0 && !info->n_edges)
			connect_sane(r, fd, (struct dp_addr *)(t->buf + BUF_SIZE - 64));
		len = below(r, 1500);
		p = t->buf;
	}
	count(OP_WRITE, write(fd, p, len) >= 0);
}

static void op_read(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd = slot_fd(r);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t len = pick_len(r);
	void *p = one_in(r, 4) ? any_ptr(t, len) : t->buf;

	if (sane(r)) {		/* a message that is there, into room for it */
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN))
			count(OP_READ, read(fd, t->buf, BUF_SIZE) >= 0);
		return;
	}
	/* a blocking read ends at the next SIGUSR1 from the interrupter */
	count(OP_READ, read(fd, p, len) >= 0);
}

static void op_vec(struct thr *t)
{
	struct rng *r = &t->rng;
	struct iovec iov[4];
	int fd = slot_fd(r), n = 1 + (int)below(r, 4), i;

	for (i = 0; i < n; i++) {
		iov[i].iov_len = one_in(r, 2) ? below(r, 1500) : pick_len(r);
		iov[i].iov_base = one_in(r, 3) ? any_ptr(t, iov[i].iov_len) : t->buf;
	}
	switch (below(r, 5)) {
	case 0:
		count(OP_VEC, readv(fd, iov, n) >= 0);
		break;
	case 1:
		count(OP_VEC, writev(fd, iov, n) >= 0);
		break;
	case 2:
		count(OP_VEC, pread(fd, t->buf, 64, (off_t)below(r, 4096)) >= 0);
		break;
	case 3:
		count(OP_VEC, pwrite(fd, t->buf, 64, (off_t)below(r, 4096)) >= 0);
		break;
	default:
		count(OP_VEC, lseek(fd, (off_t)rnd(r), (int)below(r, 5)) >= 0);
		break;
	}
}

static void op_poll(struct thr *t)
{
	struct rng *r = &t->rng;
	struct pollfd pfd[4];
	int n = 1 + (int)below(r, 4), i;

	for (i = 0; i < n; i++) {
		pfd[i].fd = slot_fd(r);
		pfd[i].events = (short)(one_in(r, 4) ? rnd(r) : POLLIN | POLLOUT);
	}
	if (one_in(r, 3)) {
		struct timeval tv = { 0, (long)below(r, 20000) };
		fd_set rd;

		FD_ZERO(&rd);
		for (i = 0; i < n; i++)
			if (pfd[i].fd >= 0 && pfd[i].fd < FD_SETSIZE)
				FD_SET(pfd[i].fd, &rd);
		count(OP_POLL, select(FD_SETSIZE, &rd, NULL, NULL, &tv) >= 0);
		return;
	}
	count(OP_POLL, poll(pfd, (nfds_t)n, (int)below(r, 20)) >= 0);
}

/* One epoll fd per process: created, fed fds, waited on, closed. */
static void op_epoll(struct thr *t)
{
	struct rng *r = &t->rng;
	struct epoll_event ev[4];
	int ep = __atomic_load_n(&P.epfd, __ATOMIC_RELAXED), fd;

	if (ep < 0) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		count(OP_EPOLL, ep >= 0);
		fd = -1;
		if (ep >= 0 && !__atomic_compare_exchange_n(&P.epfd, &fd, ep, 0,
							   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			close(ep);
		return;
	}
	switch (below(r, 3)) {
	case 0:
		ev[0].events = one_in(r, 3) ? (uint32_t)rnd(r) : EPOLLIN | (one_in(r, 2) ? EPOLLET : 0);
		ev[0].data.u64 = 0;
		count(OP_EPOLL, epoll_ctl(ep, 1 + (int)below(r, 3), slot_fd(r), ev) == 0);
		break;
	default:
		count(OP_EPOLL, epoll_wait(ep, ev, 4, (int)below(r, 10)) >= 0);
		break;
	}
}

static void op_misc(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd = slot_fd(r), fl;
	struct stat st;
	off_t off = 0;

	switch (below(r, 7)) {
	case 0:
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fl ^= one_in(r, 2) ? O_NONBLOCK : O_ASYNC;
		count(OP_MISC, fl >= 0 && fcntl(fd, F_SETFL, fl) == 0);
		break;
	case 1:
		count(OP_MISC, flock(fd, one_in(r, 2) ? LOCK_EX | LOCK_NB : LOCK_UN) == 0);
		break;
	case 2:		/* from a memfd into the endpoint */
		count(OP_MISC, sendfile(fd, P.memfd, &off, pick_len(r)) >= 0);
		break;
	case 3:		/* from the endpoint into a memfd */
		count(OP_MISC, sendfile(P.memfd, fd, NULL, pick_len(r)) >= 0);
		break;
	case 4:
		count(OP_MISC, fstat(fd, &st) == 0);
		break;
	case 5:
		count(OP_MISC, ftruncate(fd, (off_t)below(r, 1u << 20)) == 0);
		break;
	default:
		count(OP_MISC, fallocate(fd, 0, 0, 4096) == 0);
		break;
	}
}

/* ---- mappings ------------------------------------------------------------- */

/*
 * Every change of this process's address space happens under map_lock (the
 * threads and their stacks are made with it held), and the fuzzing threads
 * allocate no memory after start: a range the table forgets is never
 * touched again except by guarded reads.
 *
 * No two entries overlap, and no entry tracks a hole: a failed
 * mremap(MREMAP_FIXED) may have unmapped its target first, so the target is
 * forgotten, never tracked.  A hole in the table would be munmapped,
 * mprotected or replaced later, and whatever landed there meanwhile (a
 * thread's stack, a libc arena) with it: the fuzzer itself then died of
 * SIGSEGV with no word of where.
 *
 * An entry is whole pages, as the kernel maps them.  It once kept the
 * length asked of mmap, not a page multiple: 3758 bytes left after a
 * partial munmap, one more page unmapped from the front made it -338, its
 * range wrapped past the overlap test below, and the next munmap, mprotect
 * or madvise of it reached the fuzzer's own memory.  map_check() holds the
 * table to whole pages after every change.
 */
static void map_forget(int i)
{
	P.map[i] = P.map[--P.nmap];
}

/*
 * The process's own mappings, as /proc/self/maps lists them once its
 * threads exist and before any op: its program, libraries, heap, stacks.
 * No entry may ever cover one of them: an entry that does is stale (the
 * table's fault; dp cannot make an entry), and working on it would
 * mprotect or unmap the fuzzer's own code.  Under map_lock, before any op.
 */
static void map_own_snapshot(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long lo, hi;
	char line[512];

	P.nown = 0;
	if (!f)
		return;
	while (P.nown < NOWN && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && !strstr(line, "/dev/dp")) {
			P.own[P.nown].lo = lo;
			P.own[P.nown++].hi = hi;
		}
	fclose(f);
}

static int map_own_overlap(const uint8_t *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	int i;

	if (hi <= lo)		/* empty or wrapping: never to be touched */
		return 1;
	for (i = 0; i < P.nown; i++)
		if (P.own[i].lo < hi && lo < P.own[i].hi)
			return 1;
	return 0;
}

/*
 * An entry to work on, under map_lock, or -1: one that covers the
 * process's own mappings is dropped and counted, never touched.
 */
static int map_pick(struct rng *r)
{
	int i;

	if (!P.nmap)
		return -1;
	i = (int)below(r, (uint32_t)P.nmap);
	if (map_own_overlap(P.map[i].addr, P.map[i].len)) {
		map_forget(i);
		__atomic_fetch_add(&sh->map_stale, 1, __ATOMIC_RELAXED);
		return -1;
	}
	return i;
}

/* Forget every entry that overlaps [addr, addr + len): it changed. */
static void map_drop_range(const uint8_t *addr, size_t len)
{
	int i = 0;

	while (i < P.nmap) {
		const struct ment *m = &P.map[i];

		if (m->addr < addr + len && addr < m->addr + m->len)
			map_forget(i);
		else
			i++;
	}
}

/* The pages a mapping of len bytes takes. */
static size_t page_up(size_t len)
{
	return (len + PAGE - 1) & ~(size_t)(PAGE - 1);
}

static void map_add(uint8_t *addr, size_t len, int dp)
{
	len = page_up(len);
	map_drop_range(addr, len);
	if (map_own_overlap(addr, len)) {	/* cannot be: never track it */
		__atomic_fetch_add(&sh->map_stale, 1, __ATOMIC_RELAXED);
		return;
	}
	if (P.nmap == NMAP) {
		munmap(addr, len);
		return;
	}
	P.map[P.nmap++] = (struct ment){ addr, len, dp };
}

/*
 * The table's invariants, after each change under map_lock: every entry
 * whole pages, not empty, not wrapping.  A broken one is the fuzzer's own
 * bug, not dp's, but it fails the run (it would have worked on memory the
 * fuzzer does not own); the entry is dropped untouched.
 */
static void map_check(const char *after)
{
	int i = 0;

	while (i < P.nmap) {
		const struct ment *m = &P.map[i];
		uintptr_t a = (uintptr_t)m->addr;

		if (a % PAGE || !m->len || m->len % PAGE || a + m->len <= a) {
			violation("dp_fuzz's own map table broke after %s: %p, %#zx bytes (the fuzzer's bug)",
				  after, (void *)m->addr, m->len);
			map_forget(i);
		} else {
			i++;
		}
	}
}

/* A bound endpoint's mapping size, or a guess if INFO fails. */
static size_t map_size_of(struct thr *t, int fd)
{
	struct dp_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, DP_IOC_INFO, &info) == 0 && info.map_size)
		return info.map_size;
	return (size_t)PAGE << below(&t->rng, 8);
}

static size_t pick_map_len(struct rng *r, size_t ms)
{
	switch (below(r, 8)) {
	case 0:
		return PAGE;
	case 1:
		return ms - PAGE;
	case 2:
		return ms + PAGE;	/* past the pool */
	case 3:
		return 0;
	case 4:
		return (size_t)PAGE * (1 + below(r, (uint32_t)(ms / PAGE)));
	case 5:
		return ms + 1 + below(r, PAGE - 1);
	default:
		return ms;
	}
}

static off_t pick_map_off(struct rng *r, size_t ms)
{
	switch (below(r, 8)) {
	case 0:
		return PAGE;
	case 1:
		return (off_t)ms;
	case 2:
		return (off_t)1 << 40;
	case 3:
		return (off_t)PAGE * below(r, 64);
	default:
		return 0;
	}
}

static int pick_prot(struct rng *r)
{
	static const int p[] = {
		PROT_READ, PROT_READ, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
		PROT_NONE, PROT_READ | PROT_EXEC, PROT_READ | PROT_WRITE | PROT_EXEC,
	};

	return p[below(r, sizeof(p) / sizeof(p[0]))];
}

static int pick_map_flags(struct rng *r)
{
	static const int f[] = {
		MAP_SHARED, MAP_SHARED, MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE,
		MAP_SHARED | MAP_POPULATE, MAP_SHARED | MAP_NORESERVE,
		MAP_SHARED | MAP_LOCKED, MAP_PRIVATE | MAP_POPULATE,
		MAP_SHARED_VALIDATE | MAP_SYNC,
	};

	return f[below(r, sizeof(f) / sizeof(f[0]))];
}

/* After a mapping succeeded: a pool must be shared and read-only. */
static int check_new_map(uint8_t *a, size_t len, int prot, int flags, off_t off)
{
	struct dp_pool_ctrl c;

	if (off || len < sizeof(c) || !(prot & PROT_READ) ||
	    guarded_ctrl((const void *)a, &c) || c.magic != DP_POOL_MAGIC)
		return 0;	/* not recognisably a pool */
	if (prot & PROT_WRITE)
		violation("mmap of a pool with PROT_WRITE succeeded");
	if (!(flags & MAP_SHARED))
		violation("MAP_PRIVATE mmap of a pool succeeded");
	if (guarded_write(a) == 0)
		violation("a pool mapping is writable");
	if (ctrl_broken(&c))
		violation("a fresh pool mapping has a broken control page (%s)", ctrl_broken(&c));
	return 1;
}

static void op_mmap(struct thr *t)
{
	struct rng *r = &t->rng;
	int fd = slot_fd(r), prot = pick_prot(r), flags = pick_map_flags(r);
	size_t ms = map_size_of(t, fd), len = pick_map_len(r, ms);
	off_t off = pick_map_off(r, ms);
	void *hint = NULL;
	uint8_t *a;
	int i = -1;

	if (sane(r)) {		/* the whole pool or a part of it, read-only */
		prot = PROT_READ;
		flags = MAP_SHARED;
		off = 0;
		len = one_in(r, 2) ? ms : (size_t)PAGE * (1 + below(r, (uint32_t)(ms / PAGE)));
	} else if (one_in(r, 10)) {	/* huge; not charged to overcommit */
		len = (size_t)1 << (30 + below(r, 17));
		flags |= MAP_NORESERVE;
	}
	pthread_mutex_lock(&P.map_lock);
	if (P.nmap && one_in(r, 4) && (i = map_pick(r)) >= 0) {	/* over one of ours */
		hint = P.map[i].addr;
		if (len > P.map[i].len)
			len = P.map[i].len;
		flags |= one_in(r, 4) ? MAP_FIXED_NOREPLACE : MAP_FIXED;
	}
	a = mmap(hint, len, prot, flags, fd, off);
	count(OP_MMAP, a != MAP_FAILED);
	if (i >= 0 && (flags & MAP_FIXED))
		map_drop_range(hint, len);	/* replaced, or a hole if that failed */
	if (a != MAP_FAILED)
		map_add(a, len, check_new_map(a, len, prot, flags, off));
	map_check("mmap");
	pthread_mutex_unlock(&P.map_lock);
}

static void op_remap(struct thr *t)
{
	struct rng *r = &t->rng;
	struct ment m;
	uint8_t *a, *dst;
	size_t nl;
	int i;

	pthread_mutex_lock(&P.map_lock);
	i = map_pick(r);
	if (i < 0)
		goto out;
	m = P.map[i];
	switch (below(r, 5)) {
	case 0:		/* shrink in place */
		nl = (size_t)PAGE * (1 + below(r, (uint32_t)(m.len / PAGE)));
		a = mremap(m.addr, m.len, nl, 0);
		if (a != MAP_FAILED && nl < m.len) {
			P.map[i].len = nl;
			map_drop_range(m.addr + nl, m.len - nl);
		}
		break;
	case 1:		/* grow: a pool mapping cannot (VM_DONTEXPAND) */
		nl = m.len + (size_t)PAGE * (1 + below(r, 16));
		a = mremap(m.addr, m.len, nl, MREMAP_MAYMOVE);
		if (a != MAP_FAILED) {
			if (m.dp)
				violation("mremap grew a pool mapping from %zu to %zu bytes", m.len, nl);
			map_forget(i);
			map_add(a, nl, 0);
		}
		break;
	case 2:		/* move to a place we own */
		dst = mmap(NULL, m.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		a = MAP_FAILED;
		if (dst == MAP_FAILED)
			break;
		a = mremap(m.addr, m.len, m.len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		/*
		 * On failure the source is forgotten too (whether it is still
		 * whole is not ours to know), and dst may be a hole: both stay
		 * as they are, untouched.
		 */
		map_forget(i);
		if (a != MAP_FAILED)
			map_add(a, m.len, m.dp);
		break;
	case 3:		/* move, leaving the old range mapped and empty */
		a = mremap(m.addr, m.len, m.len, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
		if (a != MAP_FAILED) {
			P.map[i].dp = 0;
			map_add(a, m.len, m.dp);
		}
		break;
	default:	/* "duplicate" a pool mapping (old size 0): it cannot grow */
		a = MAP_FAILED;
		if (!m.dp)	/* a private one makes the kernel log a warning */
			break;
		a = mremap(m.addr, 0, m.len, MREMAP_MAYMOVE);
		if (a != MAP_FAILED)
			map_add(a, m.len, 0);
		break;
	}
	count(OP_REMAP, a != MAP_FAILED);
	map_check("mremap");
out:
	pthread_mutex_unlock(&P.map_lock);
}

/* A page-aligned part [*off, *off + *len) of mapping m. */
static void pick_part(struct rng *r, const struct ment *m, size_t *off, size_t *len)
{
	uint32_t pages = (uint32_t)(m->len / PAGE);

	*off = one_in(r, 2) ? 0 : (size_t)PAGE * below(r, pages);
	*len = (size_t)PAGE * (1 + below(r, pages - (uint32_t)(*off / PAGE)));
	if (one_in(r, 3))
		*len = m->len - *off;
}

static void op_mprotect(struct thr *t)
{
	struct rng *r = &t->rng;
	int prot = pick_prot(r), ok = 0, i;
	size_t off, len;

	pthread_mutex_lock(&P.map_lock);
	i = map_pick(r);
	if (i >= 0) {
		pick_part(r, &P.map[i], &off, &len);
		ok = mprotect(P.map[i].addr + off, len, prot) == 0;
		if (ok && (prot & PROT_WRITE) && P.map[i].dp)
			violation("mprotect(PROT_WRITE) of a pool mapping succeeded");
	}
	count(OP_MPROTECT, ok);
	pthread_mutex_unlock(&P.map_lock);
}

static void op_madvise(struct thr *t)
{
	/* Not MADV_HWPOISON or MADV_SOFT_OFFLINE: those poison pages for real. */
	static const int adv[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK, MADV_DOFORK,
		MADV_DOFORK, MADV_MERGEABLE, MADV_UNMERGEABLE, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK,
		MADV_KEEPONFORK, MADV_COLD, MADV_PAGEOUT, 22 /* POPULATE_READ */,
		23 /* POPULATE_WRITE */, 24 /* DONTNEED_LOCKED */, 25 /* COLLAPSE */,
		26, 99,
	};
	struct rng *r = &t->rng;
	size_t off, len;
	int ok = 0, i;

	pthread_mutex_lock(&P.map_lock);
	i = map_pick(r);
	if (i >= 0) {
		pick_part(r, &P.map[i], &off, &len);
		ok = madvise(P.map[i].addr + off, len,
			     adv[below(r, sizeof(adv) / sizeof(adv[0]))]) == 0;
	}
	count(OP_MADVISE, ok);
	pthread_mutex_unlock(&P.map_lock);
}

static int maps_pool_head(const uint8_t *addr, char *what, size_t wlen);

static void op_munmap(struct thr *t)
{
	struct rng *r = &t->rng;
	struct ment *m;
	size_t off, len;
	int ok = 0;

	pthread_mutex_lock(&P.map_lock);
	if (P.nmap) {
		int i = map_pick(r);
		uint8_t *gone;

		if (i < 0)
			goto out;
		m = &P.map[i];
		pick_part(r, m, &off, &len);
		gone = m->addr + off;
		ok = munmap(gone, len) == 0;
		if (!ok) {
			char what[120];
			int e = errno;

			maps_pool_head(gone, what, sizeof(what));
			violation("munmap of part of a mapping: %s (+%#zx, %#zx of %#zx bytes%s; %s)",
				  strerror(e), off, len, m->len, m->dp ? ", a pool's" : "", what);
		} else if (off == 0 && len == m->len) {
			map_forget(i);
		} else if (off == 0) {	/* the tail is left */
			m->addr += len;
			m->len -= len;
			m->dp = 0;
		} else {		/* the head is left; a tail may stay, forgotten */
			m->len = off;
		}
		if (ok)
			map_drop_range(gone, len);
		map_check("munmap");
	}
out:
	count(OP_MUNMAP, ok);
	pthread_mutex_unlock(&P.map_lock);
}

/* Does one line of /proc/self/maps put addr at the start of /dev/dp? */
static int maps_line_says(const char *line, const uint8_t *addr, int *head)
{
	unsigned long lo, hi;
	unsigned long long off;
	size_t n = strlen(line);

	if (sscanf(line, "%lx-%lx %*s %llx", &lo, &hi, &off) != 3 ||
	    (uintptr_t)addr < lo || (uintptr_t)addr >= hi)
		return 0;
	*head = n >= 8 && !strcmp(line + n - 8, " /dev/dp") &&
		off + ((uintptr_t)addr - lo) == 0;
	return 1;
}

/*
 * What the kernel has at addr, from /proc/self/maps: 1 if it is the first
 * byte of a /dev/dp mapping (a pool's control page), 0 if not, -1 if the
 * file could not be read (then nothing excuses the read); the maps line
 * (or the error) is copied to what.  Read with open/read: the fuzzing threads allocate no
 * memory after start.  Called with map_lock held, so no tracked change of
 * the address space runs meanwhile.
 */
static int maps_pool_head(const uint8_t *addr, char *what, size_t wlen)
{
	char buf[4096], line[512];
	size_t ll = 0;
	ssize_t n, i;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), head = 0;

	snprintf(what, wlen, "nothing mapped there");
	if (fd < 0) {
		snprintf(what, wlen, "/proc/self/maps: %s", strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(what, wlen, "/proc/self/maps: read: %s", strerror(errno));
			head = -1;
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			if (maps_line_says(line, addr, &head)) {
				snprintf(what, wlen, "%s", line);
				goto out;
			}
		}
	}
out:
	close(fd);
	return head;
}

/*
 * A tracked pool's control page read without the pool's magic.  If the
 * kernel still has /dev/dp's first page there, the module broke the pool:
 * a violation; so is a /proc/self/maps that cannot be read, which leaves
 * nothing to tell the two apart.  Otherwise the table lost track of a
 * change to its own address space (a fuzzer fault, not dp's): reported,
 * not failed on.
 */
static void judge_no_magic(const struct ment *m)
{
	char what[256];
	int pool = maps_pool_head(m->addr, what, sizeof(what));

	if (pool > 0)
		violation("a pool mapping's control page has no pool magic/version");
	else if (pool < 0)
		violation("a pool mapping's control page has no pool magic/version, and /proc/self/maps could not be read to excuse it");
	else
		__atomic_fetch_add(&sh->ctrl_odd, 1, __ATOMIC_RELAXED);
	/* Only the parent prints: the first one is kept for it. */
	if (!__atomic_exchange_n(&sh->ctrl_said, 1, __ATOMIC_ACQ_REL))
		snprintf(sh->ctrl_what, sizeof(sh->ctrl_what), "%p (%zu bytes tracked): %s",
			 (void *)m->addr, m->len, what);
}

/* Read a mapping as a user would: the control page must be a pool's. */
static void op_touch(struct thr *t)
{
	struct rng *r = &t->rng;
	struct dp_pool_ctrl c;
	struct ment m;
	int n, locked = !t->in_child && one_in(r, 4);

	if (locked)
		pthread_mutex_lock(&P.map_lock);
	n = __atomic_load_n(&P.nmap, __ATOMIC_RELAXED);
	if (n <= 0 || n > NMAP) {
		count(OP_TOUCH, 0);
		goto out;
	}
	m = P.map[below(r, (uint32_t)n)];
	if (m.dp && guarded_ctrl((const void *)m.addr, &c) == 0) {
		count(OP_TOUCH, 1);
		/* Unlocked, m may be stale: judged only under the lock. */
		if (locked && ctrl_broken(&c)) {
			if (strcmp(ctrl_broken(&c), "magic or version"))
				violation("a pool's control page is broken (%s)", ctrl_broken(&c));
			else
				judge_no_magic(&m);
		}
	} else {
		count(OP_TOUCH, m.len && guarded_read(m.addr + below(r, (uint32_t)m.len)) >= 0);
	}
	if (locked && m.dp && guarded_write(m.addr + below(r, (uint32_t)m.len)) == 0)
		violation("a byte of a pool mapping could be written");
out:
	if (locked)
		pthread_mutex_unlock(&P.map_lock);
}

/* ---- processes and namespaces ------------------------------------------ */

static void fuzz_ops(struct thr *t, int n);

/* Reap finished children; 0 if a slot is free for another. */
static int reap_kids(void)
{
	int i, st, free_slot = -1;

	for (i = 0; i < MAX_KIDS; i++) {
		pid_t k = __atomic_load_n(&P.kids[i], __ATOMIC_RELAXED);

		if (k > 0 && waitpid(k, &st, WNOHANG) == k) {
			if (WIFSIGNALED(st) && WTERMSIG(st) != SIGALRM && WTERMSIG(st) != SIGKILL)
				__atomic_fetch_add(&sh->kid_crashes, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&P.kids[i], 0, __ATOMIC_RELAXED);
		}
		if (!__atomic_load_n(&P.kids[i], __ATOMIC_RELAXED))
			free_slot = i;
	}
	return free_slot;
}

/*
 * A child with this process's endpoints (and any pool mapping that
 * MADV_DOFORK let through) uses them a little, or not at all, and exits
 * while the parent goes on.
 */
static void op_fork(struct thr *t)
{
	struct rng *r = &t->rng;
	int i, ok = 0;
	pid_t pid;

	pthread_mutex_lock(&P.map_lock);	/* no half-changed table in the child */
	i = reap_kids();
	if (i >= 0) {
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			t->in_child = 1;
			alarm(2);	/* a blocking read must not outlive the run */
			if (!one_in(r, 4))
				fuzz_ops(t, (int)below(r, 40));
			_exit(0);
		}
		if (pid > 0) {
			P.kids[i] = pid;
			ok = 1;
			__atomic_fetch_add(&sh->kids, 1, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&P.map_lock);
	count(OP_FORK, ok);
}

static void op_setns(struct thr *t)
{
	count(OP_SETNS, setns(P.nsfd[below(&t->rng, 5)], CLONE_NEWNET) == 0);
}

/* ---- strict checks on an endpoint only this thread uses ----------------- */

/* Call as expect_err(call, want, ...) with errno read after the call. */
#define EXPECT_ERR(call, want, what)					\
	do {								\
		long _r = (long)(call);					\
									\
		expect_err(_r, errno, (want), (what));			\
	} while (0)

static void expect_err(long r, int err, int want, const char *what)
{
	if (r != -1 || err != want)
		violation("%s: got %ld errno %d (%s), want errno %d (%s)", what, r, err,
			  strerror(err), want, strerror(want));
}

/* Bad pointers for the ioctls that read their argument, then those that write it. */
static void strict_fault(struct thr *t)
{
	static const unsigned long in[] = {
		DP_IOC_CONNECT, DP_IOC_DISCONNECT, DP_IOC_RELEASE, DP_IOC_SEND, DP_IOC_BIND,
		DP_IOC_SET_WAIT,
	};
	static const unsigned long out[] = {
		DP_IOC_INFO, DP_IOC_STATS, DP_IOC_NODE_STATS, DP_IOC_GET_WAIT,
	};
	struct rng *r = &t->rng;
	int w = one_in(r, 2);
	unsigned long cmd = w ? out[below(r, 4)] : in[below(r, 6)];
	void *p = w && one_in(r, 4) ? (void *)P.ro_page : bad_ptr(r, _IOC_SIZE(cmd));

	EXPECT_ERR(ioctl(t->priv, cmd, p), EFAULT, "ioctl on a bad pointer");
}

/* The private pool maps read-only (never executable), shared, from offset 0, no larger. */
static void strict_mmap(struct thr *t, const struct dp_info *info)
{
	struct rng *r = &t->rng;
	int prot = pick_prot(r), flags = one_in(r, 4) ? MAP_PRIVATE : MAP_SHARED;
	size_t len = pick_map_len(r, info->map_size);
	off_t off = one_in(r, 3) ? pick_map_off(r, info->map_size) : 0;
	int bad = (flags & MAP_PRIVATE) || off || len == 0 ||
		  len > info->map_size || (prot & (PROT_WRITE | PROT_EXEC));
	uint8_t *a;

	pthread_mutex_lock(&P.map_lock);
	a = mmap(NULL, len, prot, flags, t->priv, off);
	if (a == MAP_FAILED && !bad)
		violation("mmap(len %zu, prot %d) of a %u-byte pool failed: %s", len, prot,
			  info->map_size, strerror(errno));
	if (a != MAP_FAILED) {
		if (bad)
			violation("mmap(len %zu, prot %d, flags %#x, off %lld) of a %u-byte pool succeeded",
				  len, prot, flags, (long long)off, info->map_size);
		else if (prot & PROT_READ)
			check_new_map(a, len, prot, flags, off);
		if (mprotect(a, len, PROT_READ | PROT_WRITE) == 0)
			violation("mprotect(PROT_WRITE) of a pool mapping succeeded");
		if (mprotect(a, len, PROT_READ | PROT_EXEC) == 0)
			violation("mprotect(PROT_EXEC) of a pool mapping succeeded");
		munmap(a, len);
	}
	pthread_mutex_unlock(&P.map_lock);
}

static void op_strict(struct thr *t)
{
	struct rng *r = &t->rng;
	struct dp_info info;
	unsigned int cmd;

	if (t->priv < 0 || t->in_child) {
		count(OP_PRIV, 0);
		return;
	}
	memset(&info, 0, sizeof(info));
	if (ioctl(t->priv, DP_IOC_INFO, &info) || info.dpid != t->priv_dpid ||
	    info.data_size != DP_POOL_MIN ||
	    info.map_size != DP_POOL_CTRL_SIZE + DP_POOL_MIN)
		violation("INFO of a private endpoint: dpid %u data %u map %u (%s)", info.dpid,
			  info.data_size, info.map_size, strerror(errno));
	switch (below(r, 5)) {
	case 0:
		strict_fault(t);
		break;
	case 1:		/* dp's magic with a number, size or direction it does not have */
		cmd = _IOC(below(r, 4), DP_IOC_MAGIC, 12 + below(r, 244), below(r, 256));
		EXPECT_ERR(ioctl(t->priv, cmd, t->buf), ENOTTY, "unknown dp ioctl");
		break;
	case 2:
		/* no edge comes first (docs/contract.md): EMSGSIZE is dp_errno's */
		EXPECT_ERR(write(t->priv, t->buf, 65536 + below(r, 1u << 16)), ENOTCONN,
			   "write of more than 65535 bytes with no edge");
		break;
	case 3:
		EXPECT_ERR(lseek(t->priv, 0, SEEK_SET), ESPIPE, "lseek");
		EXPECT_ERR(pread(t->priv, t->buf, 1, 0), ESPIPE, "pread");
		break;
	default:
		strict_mmap(t, &info);
		break;
	}
	count(OP_PRIV, 1);
}

/* ---- threads and processes -------------------------------------------- */

typedef void (*op_fn)(struct thr *t);

static const op_fn op_fns[OP_COUNT] = {
	[OP_OPEN] = op_open, [OP_CLOSE] = op_close, [OP_DUP] = op_dup,
	[OP_BIND] = op_bind, [OP_CONNECT] = op_connect, [OP_RELEASE] = op_release,
	[OP_QUERY] = op_query, [OP_SEND] = op_send, [OP_IOCTL] = op_ioctl,
	[OP_WRITE] = op_write, [OP_READ] = op_read, [OP_VEC] = op_vec,
	[OP_POLL] = op_poll, [OP_EPOLL] = op_epoll, [OP_MISC] = op_misc,
	[OP_MMAP] = op_mmap, [OP_REMAP] = op_remap, [OP_MPROTECT] = op_mprotect,
	[OP_MADVISE] = op_madvise, [OP_MUNMAP] = op_munmap, [OP_TOUCH] = op_touch,
	[OP_FORK] = op_fork, [OP_SETNS] = op_setns, [OP_PRIV] = op_strict,
};

/* What a forked child may do: no locks (another thread may hold one). */
static int child_safe(enum op op)
{
	return op <= OP_MISC || op == OP_TOUCH;
}

static unsigned int op_total;	/* sum of op_weight[], set before any fork */

static enum op pick_op(struct rng *r)
{
	unsigned int x = below(r, op_total), i;

	for (i = 0; x >= op_weight[i]; i++)
		x -= op_weight[i];
	return (enum op)i;
}

/* n operations, or until the deadline if n < 0. */
static void fuzz_ops(struct thr *t, int n)
{
	while (n-- != 0 && !stopping()) {
		enum op op = pick_op(&t->rng);

		if (t->in_child && !child_safe(op))
			continue;
		op_fns[op](t);
	}
}

static void *fuzz_thread(void *arg)
{
	struct thr *t = arg;
	int fd = dpt_open();

	t->priv_dpid = DPID_PRIV + (uint32_t)(P.idx * 16 + t->idx);
	t->priv = -1;
	if (fd >= 0 && dpt_bind(fd, t->priv_dpid, DP_POOL_MIN) == 0)
		t->priv = fd_high(fd, FD_PRIV);
	else if (fd >= 0)
		close(fd);
	fuzz_ops(t, -1);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * SIGUSR1 to every fuzzing thread now and then, so blocking calls end;
 * until every thread has left its loop (they are joined after this one).
 */
static void *interrupter(void *arg)
{
	struct rng r = { *(uint64_t *)arg };
	int i, busy;

	do {
		dpt_sleep_ms(10 + (int)below(&r, 40));
		busy = 0;
		for (i = 0; i < NTHREADS; i++)
			if (!__atomic_load_n(&thr[i].done, __ATOMIC_ACQUIRE)) {
				pthread_kill(P.tid[i], SIGUSR1);
				busy = 1;
			}
	} while (busy);
	return NULL;
}

static void handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: blocking calls return EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGIO, SIG_IGN);
	signal(SIGURG, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
}

static int ns_fd(const char *name)
{
	char path[64];

	if (!strcmp(name, "init"))
		return fd_high(open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC), FD_FIXED);
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return fd_high(open(path, O_RDONLY | O_CLOEXEC), FD_FIXED);
}

/* Pages for bad arguments: a read-only one, and one followed by PROT_NONE. */
static int proc_pages(void)
{
	uint8_t *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	memset(p, 0x5a, 3 * PAGE);
	P.edge = p + PAGE;
	P.ro_page = p + 2 * PAGE;
	if (mprotect(P.edge, PAGE, PROT_NONE) || mprotect(P.ro_page, PAGE, PROT_READ))
		return -1;
	return 0;
}

static int proc_setup(int idx)
{
	static const char *const home[] = { "dpA", "dpB", "dpL", "dpN" };
	const char *names[5] = { dpt.nsa, dpt.nsb, ns_l, ns_n, "init" };
	int i;

	memset(&P, 0, sizeof(P));
	P.idx = idx;
	P.epfd = -1;
	for (i = 0; i < NSLOT; i++)
		P.slot[i] = -1;
	pthread_mutex_init(&P.map_lock, NULL);
	for (i = 0; i < 5; i++)
		P.nsfd[i] = ns_fd(names[i]);
	P.memfd = fd_high(memfd_create("dp_fuzz", MFD_CLOEXEC), FD_FIXED);
	if (P.memfd < 0 || ftruncate(P.memfd, 1 << 16) || proc_pages() ||
	    dpt_ns(idx % 4 == 2 ? ns_l : idx % 4 == 3 ? ns_n : home[idx % 4]))
		return -1;
	/* odd processes as an ordinary user: setns is then refused, the rest works */
	if (idx % 2 && (setresgid(UID_UNPRIV, UID_UNPRIV, UID_UNPRIV) ||
			setresuid(UID_UNPRIV, UID_UNPRIV, UID_UNPRIV)))
		return -1;
	return 0;
}

static void proc_kill_kids(void)
{
	int i, st;

	for (i = 0; i < MAX_KIDS; i++)
		if (P.kids[i] > 0) {
			kill(P.kids[i], SIGKILL);
			waitpid(P.kids[i], &st, 0);
		}
}

static void __attribute__((noreturn)) fuzz_proc(int idx, uint64_t seed)
{
	uint64_t iseed = seed ^ 0x5555;
	pthread_t it;
	int i;

	handlers();
	if (proc_setup(idx)) {
		violation("fuzz process %d: setup failed: %s", idx, strerror(errno));
		_exit(1);
	}
	pthread_mutex_lock(&P.map_lock);	/* the stacks are mapped under it */
	for (i = 0; i < NTHREADS; i++) {
		thr[i].rng.s = seed + 0x1000193u * (uint64_t)(i + 1);
		thr[i].idx = i;
		thr[i].buf = malloc(BUF_SIZE);
		if (!thr[i].buf)
			_exit(1);
		memset(thr[i].buf, 0, BUF_SIZE);
		pthread_create(&P.tid[i], NULL, fuzz_thread, &thr[i]);
	}
	pthread_create(&it, NULL, interrupter, &iseed);
	map_own_snapshot();	/* the threads wait for the lock: no op yet */
	pthread_mutex_unlock(&P.map_lock);
	pthread_join(it, NULL);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(P.tid[i], NULL);
	proc_kill_kids();
	_exit(0);
}

/* ---- traffic between the nodes ----------------------------------------- */

struct tmsg {			/* the head of every traffic message */
	uint32_t magic, dir, seq, len;
};

#define TSEEN_MAX	(1u << 21)	/* messages per direction checked for duplicates */

struct tdir {
	int tx, rx;		/* endpoint fds */
	uint32_t from_nid, from_dpid, max, next_seq, last_seq;
	uint32_t last_tok;	/* the token seq of the last message received */
	int copy;		/* receive with read() instead of the pool */
	uint8_t *seen;		/* bitmap of sequence numbers received */
	uint64_t reordered;
	uint64_t nread;		/* messages read from rx: ours and others' */
};

static uint8_t tpat(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 29u + i * 13u + (i >> 7));
}

static void tdrain(struct tdir *d, int dir, uint8_t *buf);

/*
 * Edges are lossless: a write waits for the receiver's credit.  The
 * traffic's fds are non-blocking, since this one process is also the
 * receiver that returns the credit: on EAGAIN it drains and waits for
 * POLLOUT a little, until the run stops.  A write that fails otherwise
 * (the NIC detached, the session timed out) is not counted as sent.
 */
static int twrite(struct tdir *d, int dir, const uint8_t *m, uint32_t len,
		  uint8_t *buf)
{
	struct pollfd pfd = { .fd = d->tx, .events = POLLOUT };

	for (;;) {
		if (write(d->tx, m, len) == (ssize_t)len)
			return 0;
		if (errno != EAGAIN || stopping())
			return -1;
		tdrain(d, dir, buf);
		poll(&pfd, 1, 10);
	}
}

static int tsend(struct rng *r, struct tdir *d, int dir, uint8_t *buf)
{
	uint32_t len = (uint32_t)sizeof(struct tmsg) + below(r, d->max - sizeof(struct tmsg) + 1);
	struct tmsg *h = (struct tmsg *)buf;
	uint32_t i;

	h->magic = sh->magic;
	h->dir = (uint32_t)dir;
	h->seq = d->next_seq;
	h->len = len;
	for (i = sizeof(*h); i < len; i++)
		buf[i] = tpat(h->seq, i);
	if (twrite(d, dir, buf, len, buf + BUF_SIZE))	/* buf: 2 x BUF_SIZE */
		return -1;
	d->next_seq++;
	__atomic_fetch_add(&sh->tr_sent[dir], 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * One received message: ours must be one that was sent, intact, and not
 * seen before.  Edges are lossless and ordered within a session: the
 * token's seq (the message's number in its session, from 1) follows the
 * last one's, or is 1 when a new session began (after a NIC detach made
 * the old one time out: what it had not delivered is lost, counted in
 * tx_undelivered), and within a session ours must be in order.  Across
 * sessions (and for read(), which shows no token) an overtaken message is
 * counted and reported.
 */
static void tcheck(struct tdir *d, int dir, const uint8_t *m, size_t n,
		   const struct dp_token *tok)
{
	const struct tmsg *h = (const struct tmsg *)m;
	uint32_t i;

	if (n < sizeof(*h) || h->magic != sh->magic) {
		__atomic_fetch_add(&sh->tr_foreign, 1, __ATOMIC_RELAXED);
		return;
	}
	/* The sender's kernel stamped who sent it, and the session's number. */
	if (tok && (tok->src_nid != d->from_nid || tok->src_dpid != d->from_dpid ||
		    tok->src_uid != getuid() ||
		    (tok->seq != 1 && tok->seq != d->last_tok + 1))) {
		violation("traffic %s: message %u stamped nid %u dpid %u uid %u seq %u",
			  tr_name[dir], h->seq, tok->src_nid, tok->src_dpid, tok->src_uid,
			  tok->seq);
		return;
	}
	if (h->dir != (uint32_t)dir || h->len != n || !h->seq || h->seq >= d->next_seq ||
	    (h->seq < TSEEN_MAX && (d->seen[h->seq / 8] & (1u << (h->seq % 8))))) {
		violation("traffic %s: message seq %u dir %u len %u (got %zu bytes; %u sent)",
			  tr_name[dir], h->seq, h->dir, h->len, n, d->next_seq - 1);
		return;
	}
	for (i = sizeof(*h); i < n; i++)
		if (m[i] != tpat(h->seq, i)) {
			violation("traffic %s: message %u corrupted at byte %u", tr_name[dir], h->seq, i);
			return;
		}
	if (h->seq < TSEEN_MAX)
		d->seen[h->seq / 8] |= (uint8_t)(1u << (h->seq % 8));
	if (h->seq < d->last_seq) {
		d->reordered++;
		if (dir == TR_LOCAL || (tok && tok->seq != 1))
			violation("traffic %s: message %u after %u", tr_name[dir], h->seq,
				  d->last_seq);
	}
	d->last_seq = h->seq;
	if (tok)
		d->last_tok = tok->seq;
	__atomic_fetch_add(&sh->tr_recv[dir], 1, __ATOMIC_RELAXED);
}

/* Receive what is there: zero copy with libdp, or read() copies. */
static void tdrain(struct tdir *d, int dir, uint8_t *buf)
{
	struct pollfd pfd = { .fd = d->rx, .events = POLLIN };
	const struct dp_token *tok;
	char *msg;
	ssize_t n;

	while (d->copy) {
		if (poll(&pfd, 1, 0) != 1)
			return;
		n = read(d->rx, buf, BUF_SIZE);
		if (n < 0)
			return;
		d->nread++;
		tcheck(d, dir, buf, (size_t)n, NULL);
	}
	for (;;) {
		n = dp_read(d->rx, &msg);
		if (n <= 0)
			break;
		d->nread++;
		tok = dp_token_of(d->rx, msg);
		if (!tok)
			violation("traffic %s: dp_token_of failed", tr_name[dir]);
		else
			tcheck(d, dir, (const uint8_t *)msg, (size_t)n, tok);
		dp_fsync(d->rx, 1);
	}
	if (n < 0)
		violation("traffic %s: dp_read: %s", tr_name[dir], strerror(errno));
}

/* A traffic endpoint, non-blocking (see twrite()). */
static int tep(const char *ns, uint32_t dpid)
{
	int fd;

	if (dpt_ns(ns))
		return -1;
	fd = dp_open_pool(dpid, 4 * DP_POOL_MIN);
	if (fd >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK)) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint32_t tmax(int fd)
{
	struct dp_info info;

	if (dp_getinfo(fd, &info) || info.max_msg < 64)
		return 64;
	return info.max_msg < 9000 ? info.max_msg : 9000;
}

/*
 * Edges from a traffic endpoint to DPIDs 1..32 of every node, where the
 * fuzzers bind: messages then also land in pools being fuzzed.  The main
 * edge is connected again last, so write() keeps using it.
 */
static int spray_edges(int fd, uint32_t main_nid, uint32_t main_dpid)
{
	static const uint32_t *const nids[] = { &nid_a, &nid_b, &nid_l };
	uint32_t i, k;

	for (k = 0; k < 3; k++)
		for (i = 1; i <= 32; i++)
			if (dp_connect(fd, *nids[k], i))
				return -1;
	return dp_connect(fd, main_nid, main_dpid);
}

/* Not the traffic's bytes: a fuzzer could send them back to the traffic. */
static void spray(struct rng *r, int fd)
{
	static const uint32_t *const nids[] = { &nid_a, &nid_b, &nid_l };
	static uint8_t junk[1400];

	junk[4 + below(r, sizeof(junk) - 4)] = (uint8_t)rnd(r);	/* never a magic */
	if (dp_send(fd, *nids[below(r, 3)], 1 + below(r, 32), junk, 1 + below(r, 1400)) > 0)
		__atomic_fetch_add(&sh->tr_spray, 1, __ATOMIC_RELAXED);
}

/* Endpoints 7000 (dpA) <-> 7001 (dpB), 7002 -> 7003 (dpL); then ready. */
static int traffic_setup(struct tdir *d)
{
	int a = tep(dpt.nsa, DPID_TRAFFIC), b = tep(dpt.nsb, DPID_TRAFFIC + 1);
	int l1 = tep(ns_l, DPID_TRAFFIC + 2), l2 = tep(ns_l, DPID_TRAFFIC + 3), i;

	if (a < 0 || b < 0 || l1 < 0 || l2 < 0 || dp_connect(a, nid_b, DPID_TRAFFIC + 1) ||
	    dp_connect(b, nid_a, DPID_TRAFFIC) || dp_connect(l1, nid_l, DPID_TRAFFIC + 3) ||
	    spray_edges(a, nid_b, DPID_TRAFFIC + 1) || spray_edges(b, nid_a, DPID_TRAFFIC) ||
	    spray_edges(l1, nid_l, DPID_TRAFFIC + 3))
		return -1;
	d[TR_AB] = (struct tdir){ .tx = a, .rx = b, .from_nid = nid_a,
				  .from_dpid = DPID_TRAFFIC, .max = tmax(a) };
	d[TR_BA] = (struct tdir){ .tx = b, .rx = a, .from_nid = nid_b,
				  .from_dpid = DPID_TRAFFIC + 1, .max = tmax(b), .copy = 1 };
	d[TR_LOCAL] = (struct tdir){ .tx = l1, .rx = l2, .from_nid = nid_l,
				     .from_dpid = DPID_TRAFFIC + 2, .max = tmax(l1) };
	for (i = 0; i < TR_COUNT; i++) {
		d[i].next_seq = 1;
		d[i].seen = calloc(TSEEN_MAX / 8, 1);
		if (!d[i].seen)
			return -1;
	}
	return 0;
}

/*
 * Whether direction @i is settled: all it sent arrived, or its sender has
 * nothing unacknowledged left and its receiver has shown every message it
 * placed in the pool, so nothing more can arrive (a message is then either
 * received or counted in tx_undelivered).  An acknowledged message is in
 * the pool but not always readable yet: behind another sender's large
 * message still open there (a fuzzer's, whose sender went silent or whose
 * FIN was lost: the receiver gives it up after unreach_ms), readers see
 * nothing until it completes or is given up.  Records the sender's counts.
 */
static int tsettled(struct tdir *d, int i)
{
	struct dp_ep_stats st, rst;

	if (dpt_stats(d[i].tx, &st) || dpt_stats(d[i].rx, &rst))
		return 0;
	sh->tr_undeliv[i] = st.tx_undelivered;
	sh->tr_unacked[i] = st.tx_unacked;
	sh->tr_placed[i] = rst.rx_msgs;
	sh->tr_read[i] = d[i].nread;
	/* rx second: a message acknowledged before is counted placed. */
	return sh->tr_recv[i] >= sh->tr_sent[i] ||
	       (!st.tx_unacked && rst.rx_msgs <= d[i].nread);
}

/*
 * What is still on the wire, or waiting to be sent again after a
 * retransmission timeout: drain until every direction is settled, 20 s at
 * most (times DPT_TMO_SCALE on the slow debug kernels).  Settling on a
 * quiet moment instead would miss a message its sender resends after an
 * RTO longer than that moment.
 */
static void tfinish(struct tdir *d, uint8_t *buf)
{
	int k, i, n = 400 * (int)tmo_scale(), done;

	for (k = 0; k < n; k++) {
		for (i = 0; i < TR_COUNT; i++)
			tdrain(&d[i], i, buf);
		for (i = 0, done = 1; i < TR_COUNT; i++)
			done &= tsettled(d, i);
		if (done)
			return;
		dpt_sleep_ms(50);
	}
	ktap_diag("traffic: not settled after %d s; the sessions now:", n / 20);
	dpt_show_sessions();
}

static void __attribute__((noreturn)) traffic(uint64_t seed, int ready)
{
	struct rng r = { seed };
	struct tdir d[TR_COUNT];
	uint8_t *buf = malloc(2 * BUF_SIZE);	/* to send, and to receive meanwhile */
	int i, k;
	char c = 1;

	if (!buf || traffic_setup(d)) {
		violation("traffic: setup failed: %s", strerror(errno));
		_exit(1);
	}
	if (write(ready, &c, 1) != 1)
		_exit(1);
	close(ready);
	while (!stopping()) {
		for (i = 0; i < TR_COUNT; i++) {
			for (k = (int)below(&r, 8); k >= 0; k--)
				tsend(&r, &d[i], i, buf);
			tdrain(&d[i], i, buf);
			spray(&r, d[i].tx);
		}
		if (one_in(&r, 4))
			dpt_sleep_ms(1);
	}
	tfinish(d, buf);
	for (i = 0; i < TR_COUNT; i++)
		sh->tr_reordered[i] = d[i].reordered;
	_exit(0);
}

/* ---- unload attempts ----------------------------------------------------- */

static void rmmod_once(struct rng *r)
{
	long ret = syscall(SYS_delete_module, "dp", one_in(r, 2) ? O_NONBLOCK : 0);

	__atomic_fetch_add(&sh->rmmod_tries, 1, __ATOMIC_RELAXED);
	if (ret == 0) {
		violation("delete_module(\"dp\") succeeded while endpoints were open");
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	} else if (errno == EWOULDBLOCK || errno == EBUSY) {
		__atomic_fetch_add(&sh->rmmod_refused, 1, __ATOMIC_RELAXED);
	} else {
		violation("delete_module(\"dp\"): %s, want EAGAIN or EBUSY", strerror(errno));
	}
}

/* A second copy of the module must not load (EEXIST). */
static void insmod_once(int ko)
{
	long ret = syscall(SYS_finit_module, ko, "", 0);

	__atomic_fetch_add(&sh->insmod_tries, 1, __ATOMIC_RELAXED);
	if (ret == 0)
		violation("a second copy of dp.ko loaded");
	else if (errno != EEXIST)
		violation("finit_module(dp.ko) while loaded: %s, want EEXIST", strerror(errno));
}

static void __attribute__((noreturn)) unloader(uint64_t seed)
{
	const char *path = getenv("DP_KO") ? getenv("DP_KO") : "/usr/lib/dp/dp.ko";
	int ko = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	struct rng r = { seed };

	while (!stopping()) {
		rmmod_once(&r);
		if (ko >= 0 && ++n % 25 == 0)
			insmod_once(ko);
		dpt_sleep_ms(1 + (int)below(&r, 20));
	}
	_exit(0);
}

/* ---- node administration under the fuzzing ------------------------------ */

struct anode {
	const char *ns, *ifname;
	uint32_t peer_nid;
	const uint8_t *peer_mac;
	const char *peer_route;	/* " ROUTE" over myri, else "" */
};

/* dpctl ARGS (space-separated) in n's namespace; its exit status. */
static int dpctl(const struct anode *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int dpctl(const struct anode *n, const char *fmt, ...)
{
	char args[160], *argv[12], *save = NULL;
	int argc = 0, st;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	argv[argc++] = "dpctl";
	for (argv[argc] = strtok_r(args, " ", &save); argv[argc] && argc < 10;
	     argv[argc] = strtok_r(NULL, " ", &save))
		argc++;
	argv[argc] = NULL;
	__atomic_fetch_add(&sh->admin_ops, 1, __ATOMIC_RELAXED);
	pid = dpt_fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (!dpt_ns(n->ns))
			execvp("dpctl", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int attach(const struct anode *n)
{
	return dpctl(n, "node set dev %s backend %s", n->ifname, dpt.backend);
}

static int nart_add(const struct anode *n)
{
	const uint8_t *m = n->peer_mac;

	return dpctl(n, "nart add %u %02x:%02x:%02x:%02x:%02x:%02x%s", n->peer_nid,
		     m[0], m[1], m[2], m[3], m[4], m[5], n->peer_route);
}

/*
 * While everything else runs: detach and re-attach the NICs of dpA and
 * dpB, attach over an attached one, drop and restore their NART entries.
 * Senders in flight meet a NIC going away and frames an address no longer
 * in the NART.  At the end both nodes are as the setup left them.
 */
static void __attribute__((noreturn)) admin(uint64_t seed)
{
	const struct anode nodes2[2] = {
		{ dpt.nsa, dpt.ifa, dpt.nidb, dpt.macb, dpt.routeb },
		{ dpt.nsb, dpt.ifb, dpt.nida, dpt.maca, dpt.routea },
	};
	struct rng r = { seed };
	const struct anode *n;
	int ok = 1, i;

	while (!stopping()) {
		dpt_sleep_ms(100 + (int)below(&r, 400));
		n = &nodes2[below(&r, 2)];
		switch (below(&r, 3)) {
		case 0:
			dpctl(n, "node detach");
			dpt_sleep_ms((int)below(&r, 100));
			attach(n);
			break;
		case 1:
			attach(n);	/* replaces the attached one */
			break;
		default:
			dpctl(n, "nart del %u", n->peer_nid);
			dpt_sleep_ms((int)below(&r, 100));
			nart_add(n);
			break;
		}
	}
	for (i = 0; i < 2; i++)
		if (attach(&nodes2[i]) || nart_add(&nodes2[i])) {
			violation("%s: attach or NART entry could not be restored", nodes2[i].ns);
			ok = 0;
		}
	_exit(ok ? 0 : 1);
}

/* ---- the parent: run, wait, check --------------------------------------- */

struct worker {
	pid_t pid;
	const char *what;
	int status;		/* -1 until reaped */
};

static uint64_t seed_of(const char *arg)
{
	uint64_t s;

	if (arg && *arg)
		return strtoull(arg, NULL, 0);
	dpt_random(&s, sizeof(s));
	return s;
}

static pid_t spawn(struct worker *w, const char *what)
{
	pid_t pid = dpt_fork();

	if (pid > 0) {
		w->pid = pid;
		w->what = what;
		w->status = -1;
	}
	return pid;
}

/* The kernel stacks of a process that would not stop, for the report. */
static void show_stuck(pid_t pid)
{
	dpt_sh_diag("for t in /proc/%d/task/*; do echo \"task $t: $(cat $t/wchan)\"; cat $t/stack; done",
		    (int)pid);
}

/*
 * The workers' grace after the deadline: GRACE_S, times DPT_TMO_SCALE on
 * the slow debug kernels, as the traffic's own drain bound (tfinish()) is,
 * so a drain that its own bound still allows is not cut short.
 */
static int grace_s(void)
{
	return GRACE_S * (int)tmo_scale();
}

/* Wait until every worker exited, or the time is up; returns those left. */
static int reap_until(struct worker *w, int n, uint64_t until)
{
	int i, left;

	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (w[i].status == -1)
				waitpid(w[i].pid, &w[i].status, WNOHANG);
			left += w[i].status == -1;
		}
		if (!left || now_ns() >= until)
			return left;
		dpt_sleep_ms(50);
	}
}

static int finish_workers(struct worker *w, int n)
{
	int i, left, bad = 0;

	left = reap_until(w, n, sh->deadline + grace_s() * 1000000000ull);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	if (left) {
		for (i = 0; i < n; i++)
			if (w[i].status == -1) {
				ktap_diag("%s (pid %d) still running %d s after the deadline:",
					  w[i].what, (int)w[i].pid, grace_s());
				show_stuck(w[i].pid);
				if (!strcmp(w[i].what, "traffic"))
					dpt_show_sessions();
				kill(w[i].pid, SIGKILL);
			}
		left = reap_until(w, n, now_ns() + 30 * 1000000000ull);
		if (left)
			ktap_diag("%d worker(s) survive SIGKILL: stuck in the kernel", left);
		bad = 1;
	}
	for (i = 0; i < n; i++)
		if (w[i].status != -1 && (!WIFEXITED(w[i].status) || WEXITSTATUS(w[i].status))) {
			ktap_diag("%s (pid %d) ended with status %#x", w[i].what, (int)w[i].pid,
				  w[i].status);
			bad = 1;
		}
	return !bad;
}

static void report_ops(void)
{
	char line[512];
	uint64_t total = 0;
	size_t o = 0;
	int i;

	for (i = 0; i < OP_COUNT; i++) {
		total += sh->tries[i];
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %s %llu/%llu", op_name[i],
				      (unsigned long long)sh->ok[i],
				      (unsigned long long)sh->tries[i]);
		if (o > 400 || i == OP_COUNT - 1) {
			ktap_diag("ops (succeeded/tried):%s", line);
			o = 0;
		}
	}
	ktap_diag("%llu operations, %llu forked children (%llu crashed), %llu unload and %llu load attempts, %llu dpctl commands",
		  (unsigned long long)total, (unsigned long long)sh->kids,
		  (unsigned long long)sh->kid_crashes, (unsigned long long)sh->rmmod_tries,
		  (unsigned long long)sh->insmod_tries, (unsigned long long)sh->admin_ops);
}

/* Operations after which every kind must have succeeded at least once. */
#define FUZZ_OPS_ENOUGH 200000u
/* The kinds that must have succeeded at least once. */
static const enum op must[] = {
	OP_OPEN, OP_BIND, OP_CONNECT, OP_SEND, OP_WRITE, OP_READ, OP_MMAP,
	OP_REMAP, OP_MUNMAP, OP_MADVISE, OP_TOUCH, OP_FORK, OP_PRIV,
};
/*
 * The run goes on past SECONDS until then, up to this many times SECONDS,
 * times DPT_TMO_SCALE (lib.sh: 4 on make check-debug's kernels, whose every
 * bound is that much longer).
 */
#define FUZZ_LONGER_MAX 3
static uint32_t fuzz_longer_max(void);

/* Has the run done what check_coverage() asks? */
static int fuzz_enough(void)
{
	unsigned long long total = 0;
	unsigned int i;

	for (i = 0; i < OP_COUNT; i++)
		total += __atomic_load_n(&sh->tries[i], __ATOMIC_RELAXED);
	for (i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!__atomic_load_n(&sh->ok[must[i]], __ATOMIC_RELAXED))
			return 0;
	return total >= FUZZ_OPS_ENOUGH;
}

/*
 * Called by the parent every 500 ms: shortly before the deadline, move it
 * 5 s on while the run has not done enough (a slow kernel), up to
 * fuzz_longer_max() times the planned length.  The workers read the deadline
 * each time they check it, so they never see it pass meanwhile.
 */
static void fuzz_longer(uint64_t t0, uint32_t secs)
{
	uint64_t now = now_ns(), dl = __atomic_load_n(&sh->deadline, __ATOMIC_RELAXED);
	uint64_t cap = t0 + (uint64_t)secs * fuzz_longer_max() * 1000000000ull;

	if (now + 2000000000ull < dl || dl >= cap || fuzz_enough())
		return;
	__atomic_store_n(&sh->deadline, dl + 5000000000ull, __ATOMIC_RELAXED);
	if (dl == t0 + (uint64_t)secs * 1000000000ull)
		ktap_diag("too few operations or a kind never worked yet: the run goes on (up to %u s)",
			  secs * fuzz_longer_max());
}

/* The fuzzer reached the states it is for: not a run of EBADF and EINVAL. */
static void check_coverage(void)
{
	unsigned long long total = 0;
	unsigned int i;
	int ok = 1, tried = 1;

	for (i = 0; i < OP_COUNT; i++) {
		tried &= sh->tries[i] > 0;
		total += sh->tries[i];
	}
	for (i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!sh->ok[must[i]]) {
			ktap_diag("no %s ever succeeded", op_name[must[i]]);
			ok = 0;
		}
	/*
	 * A read succeeds only when a fuzzed pool holds a message, which
	 * takes many operations; on a kernel 30 times slower (KASAN, lockdep:
	 * make check-debug) the run is made longer for that (fuzz_longer()).
	 * Too few operations, or a kind that never worked, fails.
	 */
	ktap_ok(total >= FUZZ_OPS_ENOUGH, "at least %u operations ran (%llu)",
		FUZZ_OPS_ENOUGH, total);
	ktap_ok(ok && tried,
		"every kind of operation was tried, and binds, sends, reads, mappings and forks worked");
}

static void check_violations(void)
{
	int i, n = sh->nviol;

	for (i = 0; i < sh->nkinds && i < MAX_VIOL; i++)
		ktap_diag("broken rule (%llu times): %s", (unsigned long long)sh->viol_n[i],
			  sh->viol[i]);
	if (sh->nkinds > MAX_VIOL)
		ktap_diag("... and %d more kinds", sh->nkinds - MAX_VIOL);
	if (sh->kid_crashes)
		ktap_diag("%llu forked children crashed", (unsigned long long)sh->kid_crashes);
	if (sh->ctrl_odd)
		ktap_diag("the fuzzer lost track of its own mappings %llu times (no /dev/dp page where it expected one; not dp's fault)",
			  (unsigned long long)sh->ctrl_odd);
	if (sh->ctrl_said)
		ktap_diag("first control page read without the magic: %s", sh->ctrl_what);
	if (sh->map_stale)
		ktap_diag("the fuzzer's table held %llu entries over its own program, libraries or stacks, dropped untouched (its bookkeeping, not dp's)",
			  (unsigned long long)sh->map_stale);
	ktap_ok(n == 0 && !sh->kid_crashes, "no rule broken while fuzzing (%d found)", n);
}

/*
 * The share of the traffic's messages that must arrive: its edges are
 * lossless, and the detaches and re-attaches of the NICs may cost a few in
 * flight on a reset session; 99.9% lost would be a broken module.
 */
#define TRAFFIC_SHARE_PCT 99
#define TRAFFIC_MIN 100		/* messages sent per direction, at least */

static void check_traffic(void)
{
	int i;

	for (i = 0; i < TR_COUNT; i++) {
		uint64_t lost = sh->tr_sent[i] > sh->tr_recv[i] ?
				sh->tr_sent[i] - sh->tr_recv[i] : 0;

		ktap_ok(sh->tr_sent[i] >= TRAFFIC_MIN &&
			sh->tr_recv[i] * 100 >= sh->tr_sent[i] * TRAFFIC_SHARE_PCT,
			"traffic %s during the fuzzing: %llu sent (at least %d), %llu arrived intact (at least %d%%; %llu overtaken)",
			tr_name[i], (unsigned long long)sh->tr_sent[i], TRAFFIC_MIN,
			(unsigned long long)sh->tr_recv[i], TRAFFIC_SHARE_PCT,
			(unsigned long long)sh->tr_reordered[i]);
		/*
		 * The lossless promise: a message that did not arrive is one
		 * its sender gave up on and counted (tx_undelivered also
		 * counts the traffic's sprays to the fuzzers' endpoints, so
		 * it bounds the loss from above), never a silent loss.
		 */
		ktap_ok(!lost || (lost <= sh->tr_undeliv[i] && !sh->tr_unacked[i]),
			"traffic %s: every message that did not arrive (%llu) is counted in its sender's tx_undelivered (%llu), none left unacknowledged (%llu)",
			tr_name[i], (unsigned long long)lost,
			(unsigned long long)sh->tr_undeliv[i],
			(unsigned long long)sh->tr_unacked[i]);
		if (lost)
			ktap_diag("traffic %s: its receiver read %llu of the %llu messages placed in its pool (any sender's)",
				  tr_name[i], (unsigned long long)sh->tr_read[i],
				  (unsigned long long)sh->tr_placed[i]);
	}
	ktap_diag("%llu messages from the fuzzers reached the traffic endpoints, %llu went the other way",
		  (unsigned long long)sh->tr_foreign, (unsigned long long)sh->tr_spray);
}

/* ---- afterwards: the module still works ---------------------------------- */

static int exchange(int from, int to, const char *msg)
{
	char got[64];
	ssize_t n;

	if (write(from, msg, strlen(msg)) != (ssize_t)strlen(msg) ||
	    dpt_wait_readable(to, DPT_WAIT_MS) != 1)
		return -1;
	n = read(to, got, sizeof(got));
	return n == (ssize_t)strlen(msg) && !memcmp(got, msg, (size_t)n) ? 0 : -1;
}

static void check_fresh_pair(void)
{
	int b = dpt_ep(dpt.nsb, DPID_FRESH + 1, 0), a = dpt_ep(dpt.nsa, DPID_FRESH, 0);
	int ok = a >= 0 && b >= 0 && !dpt_connect(a, dpt.nidb, DPID_FRESH + 1) &&
		 !dpt_connect(b, dpt.nida, DPID_FRESH) &&
		 !exchange(a, b, "after the fuzzing") && !exchange(b, a, "and back");

	if (!ok)
		ktap_diag("fresh pair: %s", strerror(errno));
	ktap_ok(ok, "a fresh endpoint pair in dpA and dpB exchanges a message both ways");
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
}

/* ---- afterwards: the counters -------------------------------------------- */

enum { NODE_A, NODE_B, NODE_L, NODE_N, NODES };

struct node {
	const char *ns;
	uint32_t nid;
	struct dp_node_stats before, after;
};

static struct node nodes[NODES];

static void nodes_init(void)
{
	nodes[NODE_A] = (struct node){ .ns = dpt.nsa, .nid = nid_a };
	nodes[NODE_B] = (struct node){ .ns = dpt.nsb, .nid = nid_b };
	nodes[NODE_L] = (struct node){ .ns = ns_l, .nid = nid_l };
	nodes[NODE_N] = (struct node){ .ns = ns_n, .nid = 0 };
}

/*
 * Every frame or local message a node received: delivered, dropped, or
 * accepted as a control frame.  A DATA frame lands in one of these; a
 * HELLO that is refused or finds no memory in two (rx_ctrl and the drop).
 */
static uint64_t rx_all(const uint64_t *c)
{
	static const unsigned int rx[] = {
		DP_CTR_RX_MSGS, DP_CTR_RX_DROP_SHORT, DP_CTR_RX_DROP_VERSION,
		DP_CTR_RX_DROP_TYPE, DP_CTR_RX_DROP_LEN, DP_CTR_RX_DROP_NOT_NODE,
		DP_CTR_RX_DROP_UNKNOWN_SRC, DP_CTR_RX_DROP_SPOOFED, DP_CTR_RX_DROP_NO_EP,
		DP_CTR_RX_DROP_FULL, DP_CTR_RX_DROP_TOO_BIG, DP_CTR_RX_DROP_NOMEM,
		DP_CTR_RX_DROP_BAD_ADDR, DP_CTR_RX_DROP_ADMIT, DP_CTR_RX_DROP_SEQ,
		DP_CTR_RX_DROP_CSUM, DP_CTR_RX_DROP_STALE, DP_CTR_RX_DROP_DUP,
		DP_CTR_RX_CTRL,
	};
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < sizeof(rx) / sizeof(rx[0]); i++)
		s += c[rx[i]];
	return s;
}

/* One node's counters on their own: present, bounded, only grown. */
static int node_sane(const struct node *nd)
{
	const uint64_t *c = nd->after.ctr;
	unsigned int i;
	int ok = nd->after.n == DP_CTR_COUNT && nd->after.nid == nd->nid;

	for (i = 0; i < DP_CTR_SLOTS; i++) {
		if (i >= DP_CTR_COUNT && c[i])
			ok = 0, ktap_diag("%s: slot %u beyond the counters is %llu", nd->ns, i,
					  (unsigned long long)c[i]);
		if (i < DP_CTR_COUNT && (c[i] < nd->before.ctr[i] || c[i] >> 48))
			ok = 0, ktap_diag("%s: %s went from %llu to %llu", nd->ns, dpt_ctr_name(i),
					  (unsigned long long)nd->before.ctr[i],
					  (unsigned long long)c[i]);
	}
	if (c[DP_CTR_TX_LOCAL] > c[DP_CTR_TX_MSGS] ||
	    c[DP_CTR_TX_BYTES] > c[DP_CTR_TX_MSGS] * 65535 ||
	    c[DP_CTR_RX_BYTES] > c[DP_CTR_RX_MSGS] * 65535)
		ok = 0, ktap_diag("%s: tx_local/tx_bytes/rx_bytes out of bounds", nd->ns);
	return ok;
}

/* Frames a node sent: messages, messages sent again, control frames (x2, see rx_all). */
static uint64_t tx_frames(const uint64_t *c)
{
	return c[DP_CTR_TX_MSGS] + c[DP_CTR_TX_RETRANS] + 2 * c[DP_CTR_TX_CTRL];
}

/*
 * What one node received against what it sent itself and what its peer
 * sent: each message delivered at most once (delivered <= messages sent to
 * it), and no more frames counted than could have reached it.  Resends and
 * control frames are not split into local and wire, so the frame bound
 * takes all of both nodes'.
 */
static int adds_up(const struct node *to, const struct node *peer)
{
	const uint64_t *c = to->after.ctr, *p = peer->after.ctr;
	uint64_t msgs = c[DP_CTR_TX_LOCAL] + p[DP_CTR_TX_MSGS] - p[DP_CTR_TX_LOCAL];
	uint64_t frames = tx_frames(c) + tx_frames(p);
	int ok = 1;

	if (c[DP_CTR_RX_MSGS] > msgs)
		ok = 0, ktap_diag("%s delivered %llu messages, more than the %llu sent to it",
				  to->ns, (unsigned long long)c[DP_CTR_RX_MSGS],
				  (unsigned long long)msgs);
	if (rx_all(c) > frames)
		ok = 0, ktap_diag("%s counted %llu frames received, more than the %llu sent",
				  to->ns, (unsigned long long)rx_all(c), (unsigned long long)frames);
	return ok;
}

static void check_counters(void)
{
	int i, ok;
	const uint64_t *l, *n;

	/* receivers first: a later read of the senders only adds */
	for (i = 0; i < NODES; i++)
		if (dpt_node_stats(nodes[i].ns, &nodes[i].after))
			memset(&nodes[i].after, 0xff, sizeof(nodes[i].after));
	for (i = 0; i < NODES; i++)
		ktap_ok(node_sane(&nodes[i]), "counters of %s (NID %u) are sane", nodes[i].ns,
			nodes[i].nid);
	ok = adds_up(&nodes[NODE_A], &nodes[NODE_B]) & adds_up(&nodes[NODE_B], &nodes[NODE_A]);
	ktap_ok(ok, "dpA and dpB delivered no message more than once, counted no more than was sent");
	/*
	 * dpL has no NIC: every message goes through its MDR as it is sent,
	 * so each one is counted on receipt at least once (a message held
	 * after a gap is counted when delivered or when its session ends),
	 * and delivered at most once.
	 */
	l = nodes[NODE_L].after.ctr;
	ok = l[DP_CTR_TX_LOCAL] == l[DP_CTR_TX_MSGS] && l[DP_CTR_RX_MSGS] <= l[DP_CTR_TX_MSGS] &&
	     rx_all(l) >= l[DP_CTR_TX_MSGS] && rx_all(l) <= tx_frames(l);
	if (!ok)
		ktap_diag("dpL: tx_msgs %llu tx_local %llu tx_retrans %llu tx_ctrl %llu, delivered %llu, received %llu",
			  (unsigned long long)l[DP_CTR_TX_MSGS], (unsigned long long)l[DP_CTR_TX_LOCAL],
			  (unsigned long long)l[DP_CTR_TX_RETRANS], (unsigned long long)l[DP_CTR_TX_CTRL],
			  (unsigned long long)l[DP_CTR_RX_MSGS], (unsigned long long)rx_all(l));
	ktap_ok(ok, "dpL (no NIC): every local message counted on receipt, none delivered twice");
	n = nodes[NODE_N].after.ctr;
	ktap_ok(!n[DP_CTR_TX_MSGS] && !rx_all(n), "dpN (no NID) sent and received nothing");
}

/* ---- afterwards: nothing left behind ------------------------------------ */

/* Endpoints dpctl lists in a namespace, or -1. */
static int endpoints_in(const char *ns)
{
	const char *ip = dpt_ip();
	char cmd[256], line[256];
	FILE *f;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s netns exec %s dpctl ep 2>/dev/null", ip, ns);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "dpid ", 5);
	return pclose(f) == 0 ? n : -1;
}

static void check_no_leftovers(void)
{
	int i, n = 0, tries;

	for (tries = 0; tries < 20; tries++) {
		n = 0;
		for (i = 0; i < NODES; i++) {
			int k = endpoints_in(nodes[i].ns);

			n += k < 0 ? 1000 : k;
		}
		if (!n)
			break;
		dpt_sleep_ms(100);
	}
	if (n)
		for (i = 0; i < NODES; i++)
			ktap_diag("%s: %d endpoints listed", nodes[i].ns, endpoints_in(nodes[i].ns));
	ktap_ok(n == 0, "no endpoint left in any node once every fd and mapping is gone");
}

/* VmallocUsed of /proc/meminfo in KiB (pools are vmalloc memory), or -1. */
static long vmalloc_kib(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %ld kB", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/*
 * Every pool of the run is freed: thousands were allocated, so a leak of
 * one in a hundred shows.  Freeing waits for an RCU grace period, and
 * other kernel users come and go: a few tries, with a margin.
 */
static void check_vmalloc(long before)
{
	long now = vmalloc_kib();
	int i;

	for (i = 0; i < 30 && now > before + VMALLOC_SLACK_KIB; i++) {
		dpt_sleep_ms(100);
		now = vmalloc_kib();
	}
	ktap_ok(before >= 0 && now >= 0 && now <= before + VMALLOC_SLACK_KIB,
		"pool memory given back: VmallocUsed %ld KiB before, %ld KiB after", before, now);
}

/* The judge of a read without the magic tells a pool's head from the rest. */
static void check_maps_judge(const struct dpt_pool *p)
{
	char head[256], data[256];
	int h = maps_pool_head(p->map, head, sizeof(head));
	int d = maps_pool_head((const uint8_t *)p->map + PAGE, data, sizeof(data));

	if (!h || d)
		ktap_diag("maps: head \"%s\", data \"%s\"", head, data);
	ktap_ok(h && !d, "/proc/self/maps tells a pool's control page from its data");
}

/* Only a mapping holds an endpoint: the module must stay. */
static void check_unload_mapped(void)
{
	struct dpt_pool pool;
	int fd = dpt_ep(dpt.nsa, DPID_KEEPER + 1, 0), ok;
	long r;

	if (fd < 0 || dpt_map(fd, &pool))
		ktap_bail("endpoint for the last unload attempt");
	close(fd);
	r = syscall(SYS_delete_module, "dp", O_NONBLOCK);
	ok = r == -1 && (errno == EWOULDBLOCK || errno == EBUSY);
	if (!ok)
		ktap_diag("delete_module: %ld (%s)", r, strerror(errno));
	ktap_ok(ok, "delete_module refused while only a mapping holds an endpoint");
	ktap_ok(pool.ctrl->magic == DP_POOL_MAGIC, "the pool is still readable through that mapping");
	dpt_unmap(&pool);
}

/* ---- main --------------------------------------------------------------------- */

static uint32_t env_u32(const char *name, uint32_t def)
{
	const char *v = getenv(name);

	return v && *v ? (uint32_t)strtoul(v, NULL, 0) : def;
}

static uint32_t fuzz_longer_max(void)
{
	return FUZZ_LONGER_MAX * tmo_scale();
}

static void snapshot_before(void)
{
	int i;

	nodes_init();
	for (i = 0; i < NODES; i++)
		if (dpt_node_stats(nodes[i].ns, &nodes[i].before))
			ktap_bail("node counters before the run");
}

/* The traffic first (its endpoints must be up before the fuzzers come). */
static int start_workers(struct worker *w, int nprocs, uint64_t seed)
{
	int n = 0, i, p[2];
	char c;

	if (pipe(p))
		ktap_bail("pipe");
	if (spawn(&w[n++], "traffic") == 0) {
		close(p[0]);
		traffic(seed ^ 0x7a7a, p[1]);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		return -1;
	close(p[0]);
	if (spawn(&w[n++], "unloader") == 0)
		unloader(seed ^ 0x0d0d);
	if (spawn(&w[n++], "admin") == 0)
		admin(seed ^ 0xadad);
	for (i = 0; i < nprocs; i++)
		if (spawn(&w[n++], i % 2 ? "fuzz process (uid 1001)" : "fuzz process (root)") == 0)
			fuzz_proc(i, seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
	return n;
}

int main(int argc, char **argv)
{
	uint32_t secs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : env_u32("DPT_FUZZ_SECS", 60);
	uint32_t nprocs = env_u32("DPT_FUZZ_PROCS", NPROCS);
	uint64_t seed = seed_of(argc > 2 ? argv[2] : getenv("DPT_FUZZ_SEED"));
	struct worker w[3 + 16];
	struct dpt_pool kpool;
	long vm_before;
	int n, keeper;
	uint64_t t0, next = 20;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (nprocs < 1 || nprocs > 16)
		nprocs = NPROCS;
	nid_a = dpt.nida;
	nid_b = dpt.nidb;
	nid_l = env_u32("DPT_NIDL", 21);
	if (getenv("DPT_NSL") && *getenv("DPT_NSL"))
		ns_l = getenv("DPT_NSL");
	if (getenv("DPT_NSN") && *getenv("DPT_NSN"))
		ns_n = getenv("DPT_NSN");
	ktap_diag("seed %#llx, %u s, %u processes x %u threads (replay: DPT_FUZZ_SEED=%#llx ./dp_fuzz %u)",
		  (unsigned long long)seed, secs, nprocs, NTHREADS, (unsigned long long)seed, secs);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		ktap_bail("shared memory");
	memset(sh, 0, sizeof(*sh));
	sh->magic = ((uint32_t)(seed >> 32) ^ 0xd0f0220du) | 1;
	for (n = 0; n < OP_COUNT; n++)
		op_total += op_weight[n];
	snapshot_before();
	vm_before = vmalloc_kib();
	/* held all along: any unload that succeeds during the run is a bug */
	keeper = dpt_ep(dpt.nsa, DPID_KEEPER, 0);
	if (keeper < 0 || dpt_map(keeper, &kpool))
		ktap_bail("keeper endpoint");
	dpt_ns("init");
	t0 = now_ns();
	sh->deadline = t0 + (uint64_t)secs * 1000000000ull;
	n = start_workers(w, (int)nprocs, seed);
	if (n < 0)
		ktap_bail("traffic endpoints");
	while (!stopping()) {
		dpt_sleep_ms(500);
		fuzz_longer(t0, secs);
		if ((now_ns() - t0) / 1000000000ull >= next) {
			ktap_diag("%llu s", (unsigned long long)next);
			next += 20;
		}
	}
	ktap_ok(finish_workers(w, n), "all %d worker processes stopped and exited cleanly", n);
	report_ops();
	check_coverage();
	check_violations();
	ktap_ok(sh->rmmod_tries > 0 && sh->rmmod_refused == sh->rmmod_tries,
		"delete_module refused all %llu attempts while endpoints were open",
		(unsigned long long)sh->rmmod_tries);
	check_traffic();
	ktap_ok(kpool.ctrl->magic == DP_POOL_MAGIC, "the keeper's pool is intact");
	check_maps_judge(&kpool);
	dpt_unmap(&kpool);
	close(keeper);
	ktap_ok(dpt_sh("grep -q '^dp ' /proc/modules") == 0, "dp is still loaded");
	check_fresh_pair();
	check_counters();
	check_no_leftovers();
	check_vmalloc(vm_before);
	check_unload_mapped();
	ktap_diag("fuzzing and checks took %llu s",
		  (unsigned long long)((now_ns() - t0) / 1000000000ull));
	ktap_finish();
}
