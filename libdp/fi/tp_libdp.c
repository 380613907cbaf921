// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The real transport: one dp endpoint through libdp.
 *
 * Receiving makes no system call: peek walks the read-only pool from a
 * cursor of its own, which may run ahead of the kernel's cons, so the
 * provider can take many messages and give their room back with one
 * dp_fsync (release).  Sends are dp_send on an O_NONBLOCK fd: no credit
 * gives -EAGAIN instead of sleeping, and the provider makes progress.  A
 * send also releases what was consumed and not yet released, in the same
 * system call (dp_sendv_release): an answer gives back the room of what
 * it answers without a system call of its own.
 */
#include "transport.h"
#include "../dp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define DPFI_DPID_FIRST	40000u		/* automatic DPIDs: unprivileged */
#define DPFI_DPID_SPAN	20000u
#define DPFI_DPID_TRIES	4096u

struct dpfi_tp {
	int fd;
	uint32_t nid, dpid;
	dp_mmap_t pool;
	uint64_t rd;			/* next token to look at */
	uint64_t next;			/* after the message peek returned */
	uint32_t consumed;		/* not yet released */
	int plain_send;			/* dp refuses DP_SENDV_RELEASE: older dp.ko */
};

/* Can this process open /dev/dp (an open without a bind costs nothing)? */
static int libdp_available(void)
{
	int fd = open(DP_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Bind dpid, or the first free one from a per-process start. */
static int libdp_bind(uint32_t dpid, uint32_t pool_size)
{
	uint32_t i, start = (uint32_t)getpid() * 16u;
	int fd;

	if (dpid)
		return dp_open_pool(dpid, pool_size);
	for (i = 0; i < DPFI_DPID_TRIES; i++) {
		fd = dp_open_pool(DPFI_DPID_FIRST + (start + i) % DPFI_DPID_SPAN, pool_size);
		if (fd >= 0 || errno != EADDRINUSE)
			return fd;
	}
	return -1;
}

static int libdp_setup(struct dpfi_tp *t)
{
	struct dp_info info;
	int fl = fcntl(t->fd, F_GETFL);

	if (fl < 0 || fcntl(t->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    dp_getinfo(t->fd, &info) < 0 || dp_mmap(t->fd, &t->pool) < 0)
		return -errno;
	t->nid = info.nid;
	t->dpid = info.dpid;
	t->rd = __atomic_load_n(&t->pool.ctrl->cons, __ATOMIC_ACQUIRE);
	t->next = t->rd;
	return 0;
}

static int libdp_open(uint32_t dpid, uint32_t pool_size, struct dpfi_tp **tp)
{
	struct dpfi_tp *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->fd = libdp_bind(dpid, pool_size);
	err = t->fd < 0 ? -errno : libdp_setup(t);
	if (err) {
		if (t->fd >= 0)
			dp_close(t->fd);
		free(t);
		t = NULL;
	}
	*tp = t;
	return err;
}

static void libdp_self(const struct dpfi_tp *tp, uint32_t *nid, uint32_t *dpid)
{
	*nid = tp->nid;
	*dpid = tp->dpid;
}

static int libdp_connect(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid)
{
	return dp_connect(tp->fd, nid, dpid) < 0 ? -errno : 0;
}

/*
 * One message, and the release of what was consumed before it: 1 sent,
 * -1 with errno, or 0 if this dp.ko has no DP_SENDV_RELEASE (send alone).
 */
static int libdp_send_release(struct dpfi_tp *tp, const struct dp_send *s)
{
	unsigned int released = tp->consumed;
	int r = dp_sendv_release(tp->fd, s, 1, &released);

	tp->consumed -= released;
	if (r < 0 && errno == EINVAL && !released) {
		tp->plain_send = 1;
		return 0;
	}
	return r;
}

static int libdp_send(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid,
		      const void *buf, size_t len)
{
	struct dp_send s = {
		.to = { .nid = nid, .dpid = dpid },
		.buf = (uint64_t)(uintptr_t)buf,
		.len = (uint32_t)len,
	};
	int r = 0;

	if (tp->consumed && !tp->plain_send)
		r = libdp_send_release(tp, &s);
	if (!r)
		r = dp_send(tp->fd, nid, dpid, buf, len) < 0 ? -1 : 1;
	if (r > 0)
		return 0;
	return errno == EINTR ? -EAGAIN : -errno;
}

/* The token at byte counter pos of the pool. */
static const struct dp_token *libdp_token(const struct dpfi_tp *tp, uint64_t pos)
{
	return (const struct dp_token *)(tp->pool.data + (pos & (tp->pool.data_size - 1)));
}

static int libdp_peek(struct dpfi_tp *tp, struct dpfi_tp_msg *m)
{
	uint32_t size = tp->pool.data_size, off;
	const struct dp_token *t;
	uint64_t prod;

	/*
	 * All we took is released: cons is where we stand, or past wrap and
	 * skip tokens the kernel passed (it never leaves cons on one) that
	 * we have not, and whose room it may have filled again since, up to
	 * a pool's size beyond cons but more than that beyond us.  Loaded
	 * before prod, which the kernel publishes after it: past a wrap or
	 * skip token on an empty pool, cons is ahead of the prod we may
	 * load, and nothing is ready.
	 */
	if (!tp->consumed) {
		uint64_t cons = __atomic_load_n(&tp->pool.ctrl->cons, __ATOMIC_ACQUIRE);

		if ((int64_t)(cons - tp->rd) > 0)
			tp->rd = cons;
	}
	prod = __atomic_load_n(&tp->pool.ctrl->prod, __ATOMIC_ACQUIRE);
	for (;;) {
		if ((int64_t)(prod - tp->rd) <= 0)
			return 0;
		if (prod - tp->rd > size)
			return -EPROTO;
		off = (uint32_t)(tp->rd & (size - 1));
		t = libdp_token(tp, tp->rd);
		if (!(t->flags & (DP_TOK_WRAP | DP_TOK_SKIP)))
			break;
		tp->rd += t->flags & DP_TOK_WRAP ? size - off : DP_TOKEN_SPACE(t->len);
	}
	if (t->len > size - off - sizeof(*t) || DP_TOKEN_SPACE(t->len) > prod - tp->rd)
		return -EPROTO;
	m->buf = (const unsigned char *)(t + 1);
	m->len = t->len;
	m->src_nid = t->src_nid;
	m->src_dpid = t->src_dpid;
	tp->next = tp->rd + DP_TOKEN_SPACE(t->len);
	return 1;
}

static void libdp_consume(struct dpfi_tp *tp)
{
	if (tp->next == tp->rd)
		return;
	tp->rd = tp->next;
	tp->consumed++;
}

static int libdp_release(struct dpfi_tp *tp, unsigned int min)
{
	uint64_t held;
	int n;

	if (!tp->consumed)
		return 0;
	held = tp->rd - __atomic_load_n(&tp->pool.ctrl->cons, __ATOMIC_ACQUIRE);
	if (tp->consumed < min && held < tp->pool.data_size / DPFI_RELEASE_SHARE)
		return 0;
	n = dp_fsync(tp->fd, (int)tp->consumed);
	if (n < 0)
		return -errno;
	tp->consumed -= (uint32_t)n;
	return n;
}

static void libdp_close(struct dpfi_tp *tp)
{
	dp_close(tp->fd);
	free(tp);
}

const struct dpfi_tp_ops dpfi_tp_libdp = {
	.name = "libdp",
	.available = libdp_available,
	.open = libdp_open,
	.self = libdp_self,
	.connect = libdp_connect,
	.send = libdp_send,
	.peek = libdp_peek,
	.consume = libdp_consume,
	.release = libdp_release,
	.close = libdp_close,
};

const struct dpfi_tp_ops *dpfi_tp_select(void)
{
	return getenv(DPFI_FAKE_ENV) ? &dpfi_tp_fake : &dpfi_tp_libdp;
}
