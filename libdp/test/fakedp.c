// SPDX-License-Identifier: GPL-2.0
/*
 * fakedp.so: a user-space stand-in for /dev/dp, for testing libdp and
 * dpperf on a machine that cannot load dp.ko.  LD_PRELOAD it; it catches
 * open("/dev/dp") and the calls made on such an fd.
 *
 * One node (NID 1) per user: every endpoint's pool is a file in /dev/shm
 * that senders map read-write and fill with the module's own ring code
 * (module/dp_ring.c), so libdp reads exactly the layout dp.ko writes,
 * including wrap tokens.  NIDs are ignored; a full pool drops (as dp v1).
 * Not a model of the kernel's errno behaviour beyond what the tests need.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dp_ring.h"

#define FAKE_MAX_FD	1024
#define FAKE_MAX_MSG	8948u		/* as on a 9000-byte MTU link */
#define CTRL_SZ		DP_POOL_CTRL_SIZE
#define NOMINAL_POOL	262144u		/* dp.ko's default pool_size */

/* Shared state behind the data area, not part of the user's mapping. */
struct meta {
	pthread_mutex_t lock;
	uint32_t queued;
	uint32_t seq;
	uint64_t drops;
};

struct ep {
	int used;		/* fd came from open("/dev/dp") */
	int bound;
	uint32_t dpid, peer, data_size;
	int pfd;		/* the pool file */
	unsigned char *base;	/* read-write mapping of the whole file */
};

static struct ep eps[FAKE_MAX_FD];

/*
 * System calls counted for the tests, which find this array by name
 * (dlsym): DP_IOC_RELEASE calls, and DP_IOC_SENDV calls that released.
 */
enum { FAKEDP_RELEASES, FAKEDP_SEND_RELEASES, FAKEDP_NCOUNTS };
unsigned long fakedp_counts[FAKEDP_NCOUNTS];

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static struct ep *ep_of(int fd)
{
	return fd >= 0 && fd < FAKE_MAX_FD && eps[fd].used ? &eps[fd] : NULL;
}

/* FAKEDP_NS separates concurrent test runs: each is its own "node". */
static void pool_path(char *buf, size_t len, uint32_t dpid)
{
	const char *ns = getenv("FAKEDP_NS");

	snprintf(buf, len, "/dev/shm/fakedp.%u.%.16s.%u", (unsigned)getuid(),
		 ns ? ns : "", dpid);
}

static size_t file_size(uint32_t data_size)
{
	return CTRL_SZ + data_size + sizeof(struct meta);
}

static struct meta *meta_of(unsigned char *base, uint32_t data_size)
{
	return (struct meta *)(base + CTRL_SZ + data_size);
}

/* Rebuild the ring from the shared counters; the caller holds the lock. */
static void ring_load(struct dp_ring *r, unsigned char *base, uint32_t ds)
{
	struct dp_pool_ctrl *c = (void *)base;

	dp_ring_init(r, base + CTRL_SZ, ds);
	r->prod = c->prod;
	r->cons = c->cons;
	r->queued = meta_of(base, ds)->queued;
}

/* Publish: cons first, then prod with release, as dp_pool.c must. */
static void ring_store(const struct dp_ring *r, unsigned char *base, uint32_t ds)
{
	struct dp_pool_ctrl *c = (void *)base;

	meta_of(base, ds)->queued = r->queued;
	__atomic_store_n(&c->cons, r->cons, __ATOMIC_RELEASE);
	__atomic_store_n(&c->prod, r->prod, __ATOMIC_RELEASE);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	if (strcmp(path, DP_DEVICE_PATH))
		return REAL(open)(path, flags, mode);
	fd = eventfd(0, (flags & O_CLOEXEC) ? EFD_CLOEXEC : 0);
	if (fd >= FAKE_MAX_FD) {
		REAL(close)(fd);
		errno = EMFILE;
		return -1;
	}
	if (fd >= 0)
		eps[fd] = (struct ep){ .used = 1, .pfd = -1 };
	return fd;
}

static int fake_bind(struct ep *e, const struct dp_bind *b)
{
	uint32_t ds = b->pool_size ? b->pool_size : NOMINAL_POOL;
	pthread_mutexattr_t ma;
	struct dp_pool_ctrl *c;
	char path[96];

	if (e->bound)
		return errno = EISCONN, -1;
	if (!b->dpid || (b->flags & ~DP_BIND_RAW) || b->reserved || ds < DP_POOL_MIN ||
	    ds > DP_POOL_MAX || (ds & (ds - 1)))
		return errno = EINVAL, -1;
	pool_path(path, sizeof(path), b->dpid);
	e->pfd = REAL(open)(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (e->pfd < 0)
		return errno = errno == EEXIST ? EADDRINUSE : errno, -1;
	if (ftruncate(e->pfd, (off_t)file_size(ds)) < 0)
		return -1;
	e->base = REAL(mmap)(NULL, file_size(ds), PROT_READ | PROT_WRITE, MAP_SHARED, e->pfd, 0);
	if (e->base == MAP_FAILED)
		return -1;
	c = (void *)e->base;
	*c = (struct dp_pool_ctrl){ .magic = DP_POOL_MAGIC, .version = DP_POOL_VERSION,
				    .ctrl_size = CTRL_SZ, .data_size = ds, .nid = 1,
				    .dpid = b->dpid };
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&meta_of(e->base, ds)->lock, &ma);
	e->dpid = b->dpid;
	e->data_size = ds;
	e->bound = 1;
	return 0;
}

static int fake_release(struct ep *e, uint32_t n)
{
	struct meta *m = meta_of(e->base, e->data_size);
	struct dp_ring r;
	uint32_t done;

	pthread_mutex_lock(&m->lock);
	ring_load(&r, e->base, e->data_size);
	done = dp_ring_release(&r, n);
	ring_store(&r, e->base, e->data_size);
	pthread_mutex_unlock(&m->lock);
	return (int)done;
}

static int fake_info(struct ep *e, struct dp_info *i)
{
	*i = (struct dp_info){ .nid = 1, .dpid = e->dpid, .map_size = CTRL_SZ + e->data_size,
			       .data_size = e->data_size, .max_msg = FAKE_MAX_MSG,
			       .n_edges = e->peer ? 1 : 0, .cur = { e->peer ? 1 : 0, e->peer } };
	return 0;
}

static int fake_sendv(struct ep *e, struct dp_sendv *v);
static int fake_send(struct ep *e, const struct dp_send *s);

int ioctl(int fd, unsigned long req, ...)
{
	struct ep *e = ep_of(fd);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!e)
		return REAL(ioctl)(fd, req, arg);
	if (req == DP_IOC_BIND)
		return fake_bind(e, arg);
	if (!e->bound)
		return errno = EBADFD, -1;
	switch (req) {
	case DP_IOC_CONNECT:
		e->peer = ((struct dp_addr *)arg)->dpid;
		return 0;
	case DP_IOC_RELEASE:
		fakedp_counts[FAKEDP_RELEASES]++;
		return fake_release(e, *(uint32_t *)arg);
	case DP_IOC_INFO:
		return fake_info(e, arg);
	case DP_IOC_SENDV:
		return fake_sendv(e, arg);
	case DP_IOC_SEND:
		return fake_send(e, arg);
	default:
		return errno = ENOTTY, -1;
	}
}

/* Deliver into the peer's pool file, as the receiving kernel would. */
static void deliver(struct ep *e, const void *buf, uint32_t len)
{
	struct stat st;
	char path[96];
	unsigned char *base;
	struct dp_token *t;
	struct dp_ring r;
	struct meta *m;
	uint32_t ds;
	int pfd, err;

	pool_path(path, sizeof(path), e->peer);
	pfd = REAL(open)(path, O_RDWR | O_CLOEXEC, 0);
	if (pfd < 0)
		return;				/* no endpoint: dropped */
	if (fstat(pfd, &st) < 0 || (size_t)st.st_size < file_size(DP_POOL_MIN)) {
		REAL(close)(pfd);
		return;
	}
	ds = (uint32_t)(st.st_size - CTRL_SZ - sizeof(struct meta));
	base = REAL(mmap)(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
	REAL(close)(pfd);
	if (base == MAP_FAILED)
		return;
	m = meta_of(base, ds);
	pthread_mutex_lock(&m->lock);
	ring_load(&r, base, ds);
	t = dp_ring_reserve(&r, len, &err);
	if (t) {
		memcpy(t + 1, buf, len);
		t->src_nid = 1;
		t->src_dpid = e->dpid;
		t->src_uid = (uint32_t)getuid();
		t->seq = ++m->seq;
		dp_ring_commit(&r, t, len);
		ring_store(&r, base, ds);
	} else {
		m->drops++;
	}
	pthread_mutex_unlock(&m->lock);
	REAL(munmap)(base, (size_t)st.st_size);
}

/*
 * DP_IOC_SENDV on the fake's one edge: in order until one is refused; the
 * count, the refused one's errno in v->err (-1 with it if none was sent).
 */
static int fake_sendv(struct ep *e, struct dp_sendv *v)
{
	const struct dp_send *s = (const struct dp_send *)(uintptr_t)v->msgs;
	uint32_t i;
	int err = 0;

	if ((v->flags & ~DP_SENDV_FLAGS) || v->n > DP_SENDV_MAX ||
	    (!(v->flags & DP_SENDV_RELEASE) && v->reserved))
		return errno = EINVAL, -1;
	if (v->flags & DP_SENDV_RELEASE) {
		v->release = (uint32_t)fake_release(e, v->release);
		v->err = 0;
		fakedp_counts[FAKEDP_SEND_RELEASES]++;
	}
	for (i = 0; i < v->n && !err; i++) {
		if (s[i].flags)
			err = EINVAL;
		else if (!e->peer || s[i].to.dpid != e->peer)
			err = ENOTCONN;
		else if (s[i].len > FAKE_MAX_MSG)
			err = EMSGSIZE;
		else if (s[i].len)
			deliver(e, (const void *)(uintptr_t)s[i].buf, s[i].len);
	}
	if (err && --i == 0)
		return errno = err, -1;
	v->err = (uint32_t)err;
	return (int)i;
}

/* DP_IOC_SEND: a batch of one; returns len as the kernel does. */
static int fake_send(struct ep *e, const struct dp_send *s)
{
	struct dp_sendv v = { .msgs = (uint64_t)(uintptr_t)s, .n = 1 };
	int r = fake_sendv(e, &v);

	return r < 0 ? r : (int)s->len;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	struct ep *e = ep_of(fd);

	if (!e)
		return REAL(write)(fd, buf, len);
	if (!e->bound)
		return errno = EBADFD, -1;
	if (!e->peer)
		return errno = ENOTCONN, -1;
	if (len > FAKE_MAX_MSG)
		return errno = EMSGSIZE, -1;
	if (len)
		deliver(e, buf, (uint32_t)len);
	return (ssize_t)len;
}

/* Copy the head message out and release it; 0 if empty. */
static ssize_t take_head(struct ep *e, void *buf, size_t len)
{
	struct meta *m = meta_of(e->base, e->data_size);
	struct dp_token *t;
	struct dp_ring r;
	ssize_t n = 0;

	pthread_mutex_lock(&m->lock);
	ring_load(&r, e->base, e->data_size);
	t = dp_ring_head(&r);
	if (t && t->len > len) {
		n = -1;
		errno = EMSGSIZE;
	} else if (t) {
		memcpy(buf, t + 1, t->len);
		n = t->len;
		dp_ring_release(&r, 1);
		ring_store(&r, e->base, e->data_size);
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

/* Blocking read: polls the pool; a signal interrupts it with EINTR. */
ssize_t read(int fd, void *buf, size_t len)
{
	struct timespec ts = { 0, 20000 };
	struct ep *e = ep_of(fd);
	ssize_t n;

	if (!e)
		return REAL(read)(fd, buf, len);
	if (!e->bound)
		return errno = EBADFD, -1;
	while ((n = take_head(e, buf, len)) == 0)
		if (nanosleep(&ts, NULL) < 0)
			return -1;
	return n;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct ep *e = ep_of(fd);

	if (!e)
		return REAL(mmap)(addr, len, prot, flags, fd, off);
	if (!e->bound)
		return errno = EBADFD, MAP_FAILED;
	if (prot & PROT_WRITE)
		return errno = EACCES, MAP_FAILED;
	if (off || len > CTRL_SZ + e->data_size || !(flags & MAP_SHARED))
		return errno = EINVAL, MAP_FAILED;
	return REAL(mmap)(addr, len, prot, flags, e->pfd, 0);
}

int close(int fd)
{
	struct ep *e = ep_of(fd);
	char path[96];

	if (e && e->bound) {
		pool_path(path, sizeof(path), e->dpid);
		unlink(path);
		REAL(munmap)(e->base, file_size(e->data_size));
		REAL(close)(e->pfd);
	}
	if (e)
		*e = (struct ep){ .used = 0 };
	return REAL(close)(fd);
}

/* The kernel frees a dead process's endpoints; so must we. */
__attribute__((destructor)) static void fake_exit(void)
{
	char path[96];
	int fd;

	for (fd = 0; fd < FAKE_MAX_FD; fd++)
		if (eps[fd].used && eps[fd].bound) {
			pool_path(path, sizeof(path), eps[fd].dpid);
			unlink(path);
		}
}
