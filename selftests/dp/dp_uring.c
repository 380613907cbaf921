// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring command passthrough (IORING_OP_URING_CMD, libdp/dp_uring.h over
 * liburing), docs/api.md:
 *  errors    unbound fd: -EBADFD; unknown command: -ENOTTY; flags or an
 *            unused field set: -EINVAL; a send on a read-only fd: -EBADF.
 *  pending   a WAIT on an empty pool stays pending until a message arrives.
 *  rtt       200 round trips, each a WAIT, a SEND, a check of the message in
 *            the mapped pool and a RELEASE through the ring, both ways.
 *  sendv     a batch through the ring: its count, every message in order.
 *  credit    without credit a SEND on an O_NONBLOCK fd completes -EAGAIN; on
 *            a blocking fd it completes once the reader reads, sent once.
 *  close     closing the fd cancels its pending WAIT (-ECANCELED) and frees
 *            the endpoint; a close by another process (a forked child)
 *            does not; a ring that exits with a WAIT pending, and a process
 *            that exits with one, leave nothing behind (the DPID is free).
 *  rmmod     with a WAIT pending rmmod is refused; closing the fd cancels
 *            it and rmmod succeeds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dp_uring.h"	/* libdp's, over liburing */

#define LEN	200

enum { UD_WAIT = 1, UD_SEND, UD_RELEASE, UD_OTHER };

static uint8_t in[9000];

static void fill(uint32_t tag, uint32_t i, uint8_t *m, size_t len)
{
	size_t k;

	memcpy(m, &tag, 4);
	memcpy(m + 4, &i, 4);
	for (k = 8; k < len; k++)
		m[k] = (uint8_t)(tag * 11u + i * 7u + k);
}

static int is(const uint8_t *m, size_t n, uint32_t tag, uint32_t i)
{
	uint8_t want[LEN];

	if (n != LEN)
		return 0;
	fill(tag, i, want, LEN);
	return !memcmp(m, want, LEN);
}

static struct io_uring_sqe *sqe_of(struct io_uring *r, uint64_t ud)
{
	struct io_uring_sqe *s = io_uring_get_sqe(r);

	if (!s)
		ktap_bail("io_uring_get_sqe");
	io_uring_sqe_set_data64(s, ud);
	return s;
}

/* The next CQE within ms: 1 with its user_data and res, 0 if none came. */
static int cqe(struct io_uring *r, int ms, uint64_t *ud, int *res)
{
	struct __kernel_timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	struct io_uring_cqe *c;

	if (io_uring_wait_cqe_timeout(r, &c, &ts))
		return 0;
	*ud = io_uring_cqe_get_data64(c);
	*res = c->res;
	io_uring_cqe_seen(r, c);
	return 1;
}

/* Submit one prepared command and return its res (-9999: no CQE in time). */
static int run1(struct io_uring *r)
{
	uint64_t ud;
	int res;

	if (io_uring_submit(r) != 1)
		return -9998;
	return cqe(r, DPT_WAIT_MS, &ud, &res) ? res : -9999;
}

static int cmd_res(struct io_uring *r, int fd, uint32_t op, uint64_t addr, uint32_t n,
		   uint32_t flags)
{
	struct io_uring_sqe *s = sqe_of(r, UD_OTHER);
	struct dp_uring_cmd *c;

	dp_uring_prep(s, fd, op, addr, n);
	c = (struct dp_uring_cmd *)((unsigned char *)s + offsetof(struct io_uring_sqe, cmd));
	c->flags = flags;
	return run1(r);
}

#define RES_IS(expr, want, ...)							\
	({									\
		int _r = (expr);						\
		if (_r != (want))						\
			ktap_diag("%s: res %d (%s), want %d", #expr, _r,	\
				  _r < 0 && _r > -4096 ? strerror(-_r) : "", (want)); \
		ktap_ok(_r == (want), __VA_ARGS__);				\
	})

static void t_errors(struct io_uring *r, int a)
{
	struct dp_send s = { .to = { dpt.nidb, 200 }, .len = 0 };
	int u, ro;

	if (dpt_ns(dpt.nsa))
		ktap_bail("errors: namespace");
	u = dpt_open();
	RES_IS(cmd_res(r, u, DP_URING_WAIT, 0, 0, 0), -EBADFD, "errors: WAIT on an unbound fd: -EBADFD");
	RES_IS(cmd_res(r, u, DP_URING_SEND, (uintptr_t)&s, 0, 0), -EBADFD,
	       "errors: SEND on an unbound fd: -EBADFD");
	close(u);
	RES_IS(cmd_res(r, a, 99, 0, 0, 0), -ENOTTY, "errors: unknown command: -ENOTTY");
	RES_IS(cmd_res(r, a, DP_URING_WAIT, 0, 0, 1), -EINVAL, "errors: flags set: -EINVAL");
	RES_IS(cmd_res(r, a, DP_URING_WAIT, 0, 1, 0), -EINVAL, "errors: WAIT with n set: -EINVAL");
	RES_IS(cmd_res(r, a, DP_URING_RELEASE, 8, 1, 0), -EINVAL,
	       "errors: RELEASE with addr set: -EINVAL");
	RES_IS(cmd_res(r, a, DP_URING_SEND, 8, 0, 0), -EFAULT,
	       "errors: SEND of an unreadable struct dp_send: -EFAULT");
	s.len = 1;
	s.buf = 8;
	RES_IS(cmd_res(r, a, DP_URING_SEND, (uintptr_t)&s, 0, 0), -EFAULT,
	       "errors: SEND of unreadable bytes: -EFAULT");
	ro = open("/dev/dp", O_RDONLY);
	if (ro < 0 || dpt_bind(ro, 150, 0))
		ktap_bail("errors: read-only endpoint");
	RES_IS(cmd_res(r, ro, DP_URING_SEND, (uintptr_t)&s, 0, 0), -EBADF,
	       "errors: SEND on a read-only fd: -EBADF");
	close(ro);
}

/* A WAIT on b's empty pool pends until a write from a arrives. */
static void t_pending(struct io_uring *r, int a, int b)
{
	uint8_t m[LEN];
	uint64_t ud = 0;
	int res = 0, got;

	dp_uring_prep_wait(sqe_of(r, UD_WAIT), b);
	io_uring_submit(r);
	got = cqe(r, 300, &ud, &res);
	ktap_ok(!got, "pending: a WAIT on an empty pool does not complete (%d: %d)", got, res);
	fill(1, 0, m, LEN);
	ktap_ok(write(a, m, LEN) == LEN, "pending: a message is sent");
	got = cqe(r, DPT_WAIT_MS, &ud, &res);
	ktap_ok(got && ud == UD_WAIT && res == 1, "pending: the WAIT completes with 1 queued (%d)",
		res);
	ktap_ok(read(b, in, sizeof(in)) == LEN && is(in, LEN, 1, 0), "pending: the message is there");
}

/* Half a round trip: WAIT on to, SEND from from, check, RELEASE on to. */
static int half(struct io_uring *r, int from, uint32_t nid, uint32_t dpid, int to,
		const struct dpt_pool *p, uint32_t tag, uint32_t i)
{
	static uint8_t m[LEN];
	struct dp_send s = { .to = { nid, dpid }, .buf = (uintptr_t)m, .len = LEN };
	const struct dp_token *t;
	int k, res, wait_res = -1, send_res = -1;
	uint64_t ud;

	fill(tag, i, m, LEN);
	dp_uring_prep_wait(sqe_of(r, UD_WAIT), to);
	dp_uring_prep_send(sqe_of(r, UD_SEND), from, &s);
	if (io_uring_submit(r) != 2)
		return 0;
	for (k = 0; k < 2; k++) {
		if (!cqe(r, DPT_WAIT_MS, &ud, &res))
			return 0;
		if (ud == UD_WAIT)
			wait_res = res;
		else
			send_res = res;
	}
	t = dpt_head(p);
	if (send_res != LEN || wait_res < 1 || !t || !is((const uint8_t *)(t + 1), t->len, tag, i)) {
		ktap_diag("round %u: send %d wait %d head %s", i, send_res, wait_res,
			  t ? "wrong" : "none");
		return 0;
	}
	dp_uring_prep_release(sqe_of(r, UD_RELEASE), to, 1);
	return run1(r) == 1 && !dpt_head(p);
}

static void t_rtt(struct io_uring *r, int a, int b)
{
	struct dpt_pool pa, pb;
	uint32_t i;
	int ok = 1;

	if (dpt_map(a, &pa) || dpt_map(b, &pb))
		ktap_bail("rtt: map");
	if (dpt_connect(b, dpt.nida, 100))
		ktap_bail("rtt: connect back");
	for (i = 0; i < 200 && ok; i++)
		ok = half(r, a, dpt.nidb, 200, b, &pb, 2, i) &&
		     half(r, b, dpt.nida, 100, a, &pa, 3, i);
	ktap_ok(ok, "rtt: 200 round trips of WAIT, SEND, RELEASE through the ring (%u)", i);
	dpt_unmap(&pa);
	dpt_unmap(&pb);
}

static void t_sendv(struct io_uring *r, int a, int b)
{
	static uint8_t m[16][LEN];
	struct dp_send s[16];
	struct dp_sendv v;
	int k, ok, res;

	memset(s, 0, sizeof(s));
	for (k = 0; k < 16; k++) {
		fill(4, (uint32_t)k, m[k], LEN);
		s[k].to.nid = dpt.nidb;
		s[k].to.dpid = 200;
		s[k].buf = (uintptr_t)m[k];
		s[k].len = LEN;
	}
	memset(&v, 0, sizeof(v));
	v.msgs = (uintptr_t)s;
	v.n = 16;
	v.err = 77;
	dp_uring_prep_sendv(sqe_of(r, UD_SEND), a, &v);
	res = run1(r);
	ktap_ok(res == 16 && v.err == 0, "sendv: a batch of 16 through the ring: 16 (%d, err %u)",
		res, v.err);
	for (k = 0, ok = 1; k < 16 && ok; k++)
		ok = dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		     is(in, (size_t)read(b, in, sizeof(in)), 4, (uint32_t)k);
	ktap_ok(ok, "sendv: all 16 arrive in order");
	v.flags = DP_SENDV_RELEASE;
	v.release = 1;
	dp_uring_prep_sendv(sqe_of(r, UD_SEND), a, &v);
	res = run1(r);
	ktap_ok(res == -EINVAL && dpt_wait_readable(b, 300) == 0,
		"sendv: DP_SENDV_RELEASE through the ring: -EINVAL, nothing sent (%d)", res);
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

static short poll_out(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

/* Write to the 16 KiB pool at DPID 210 until no credit is left; the count. */
static int use_credit(int a)
{
	struct dp_send s = { .to = { dpt.nidb, 210 }, .len = LEN };
	struct dp_ep_stats st;
	uint8_t m[LEN];
	int n = 0, i;

	s.buf = (uintptr_t)m;
	set_nonblock(a, 1);
	for (i = 0; i < 2000; i++) {
		fill(5, (uint32_t)n, m, LEN);
		if (ioctl(a, DP_IOC_SEND, &s) == LEN) {
			n++;
			continue;
		}
		if (errno != EAGAIN)
			return -1;
		if (n && !(poll_out(a, 1000) & POLLOUT) && !dpt_stats(a, &st) && !st.tx_unacked)
			return n;
		if (!n)
			dpt_sleep_ms(5);
	}
	return -1;
}

static void t_credit(struct io_uring *r, int a, int small)
{
	static uint8_t m[LEN];
	struct dp_send s = { .to = { dpt.nidb, 210 }, .buf = (uintptr_t)m, .len = LEN };
	int n, k, ok, got, res = 0;
	uint64_t ud = 0;

	if (dpt_connect(a, dpt.nidb, 210))
		ktap_bail("credit: connect");
	n = use_credit(a);
	ktap_ok(n > 0, "credit: %d messages used the 16 KiB pool's credit", n);
	fill(5, (uint32_t)n, m, LEN);
	dp_uring_prep_send(sqe_of(r, UD_SEND), a, &s);
	RES_IS(run1(r), -EAGAIN, "credit: SEND on an O_NONBLOCK fd without credit: -EAGAIN");
	set_nonblock(a, 0);
	dp_uring_prep_send(sqe_of(r, UD_SEND), a, &s);
	io_uring_submit(r);
	got = cqe(r, 300, &ud, &res);
	ktap_ok(!got, "credit: SEND on a blocking fd waits (%d: %d)", got, res);
	for (k = 0, ok = 1; k < n && ok; k++)
		ok = dpt_wait_readable(small, DPT_WAIT_MS) == 1 &&
		     is(in, (size_t)read(small, in, sizeof(in)), 5, (uint32_t)k);
	ktap_ok(ok, "credit: the reader gets the %d", n);
	got = cqe(r, DPT_WAIT_MS, &ud, &res);
	ktap_ok(got && ud == UD_SEND && res == LEN, "credit: then the SEND completes (%d)", res);
	ok = dpt_wait_readable(small, DPT_WAIT_MS) == 1 &&
	     is(in, (size_t)read(small, in, sizeof(in)), 5, (uint32_t)n);
	ktap_ok(ok && dpt_wait_readable(small, 300) == 0, "credit: its message arrives once");
}

/* Bind dpid in node B again, retrying while its last holder goes away. */
static int dpid_free(uint32_t dpid)
{
	int i, fd;

	for (i = 0; i < DPT_WAIT_MS / 20; i++) {
		fd = dpt_ep(dpt.nsb, dpid, 0);
		if (fd >= 0) {
			close(fd);
			return 1;
		}
		dpt_sleep_ms(20);
	}
	return 0;
}

static void t_close(struct io_uring *r, int a)
{
	struct io_uring r2;
	uint8_t m[LEN];
	int e, got, res = 0, st;
	uint64_t ud = 0;
	pid_t pid;

	e = dpt_ep(dpt.nsb, 250, 0);
	if (e < 0)
		ktap_bail("close: endpoint");
	dp_uring_prep_wait(sqe_of(r, UD_WAIT), e);
	io_uring_submit(r);
	got = cqe(r, 200, &ud, &res);
	ktap_ok(!got, "close: the WAIT pends");
	close(e);
	got = cqe(r, DPT_WAIT_MS, &ud, &res);
	ktap_ok(got && ud == UD_WAIT && res == -ECANCELED,
		"close: closing the fd cancels it: -ECANCELED (%d)", res);
	ktap_ok(dpid_free(250), "close: the endpoint is gone (its DPID is free)");

	/* a child's close of its copy of the fd leaves the parent's WAIT */
	e = dpt_ep(dpt.nsb, 251, 0);
	if (e < 0 || dpt_connect(a, dpt.nidb, 251))
		ktap_bail("close: endpoint 251");
	dp_uring_prep_wait(sqe_of(r, UD_WAIT), e);
	io_uring_submit(r);
	pid = dpt_fork();
	if (pid == 0) {
		close(e);
		_exit(0);
	}
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	res = 0;
	got = cqe(r, 300, &ud, &res);
	ktap_ok(st == 0 && !got, "close: a forked child's close does not cancel it (%d)", res);
	fill(6, 0, m, LEN);
	got = write(a, m, LEN) == LEN && cqe(r, DPT_WAIT_MS, &ud, &res);
	ktap_ok(got && ud == UD_WAIT && res == 1, "close: the message completes it (%d)", res);
	close(e);
	ktap_ok(dpid_free(251), "close: DPID 251 free after the close");

	/* a ring that exits with a WAIT pending */
	if (io_uring_queue_init(8, &r2, 0))
		ktap_bail("close: ring");
	e = dpt_ep(dpt.nsb, 252, 0);
	if (e < 0)
		ktap_bail("close: endpoint 252");
	dp_uring_prep_wait(sqe_of(&r2, UD_WAIT), e);
	io_uring_submit(&r2);
	io_uring_queue_exit(&r2);
	dpt_sleep_ms(1500);	/* the WAIT ends with its ring (6.1: dp looks each second) */
	close(e);
	ktap_ok(dpid_free(252), "close: ring exited, fd closed: the DPID is free");

	/* a process that exits with a WAIT pending */
	pid = dpt_fork();
	if (pid == 0) {
		struct io_uring r3;
		int f = dpt_ep(dpt.nsb, 253, 0);

		if (f < 0 || io_uring_queue_init(8, &r3, 0))
			_exit(1);
		dp_uring_prep_wait(io_uring_get_sqe(&r3), f);
		_exit(io_uring_submit(&r3) == 1 ? 0 : 2);
	}
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(st == 0, "close: a process exits with a WAIT pending (status %d)", st);
	ktap_ok(dpid_free(253), "close: and leaves its DPID free");
}

static int mod_loaded(void)
{
	return access("/sys/module/dp", F_OK) == 0;
}

/* Everything else is closed: only e and its WAIT hold the module. */
static void t_rmmod(struct io_uring *r, int e)
{
	uint64_t ud = 0;
	int got, res = 0, i;
	long ret;

	dp_uring_prep_wait(sqe_of(r, UD_WAIT), e);
	io_uring_submit(r);
	got = cqe(r, 200, &ud, &res);
	ktap_ok(!got, "rmmod: a WAIT pends");
	errno = 0;
	ret = syscall(SYS_delete_module, "dp", O_NONBLOCK);
	ktap_ok(ret == -1 && (errno == EWOULDBLOCK || errno == EBUSY) && mod_loaded(),
		"rmmod: refused while it pends (%s)", strerror(errno));
	close(e);
	got = cqe(r, DPT_WAIT_MS, &ud, &res);
	ktap_ok(got && res == -ECANCELED, "rmmod: the close cancels it (%d)", res);
	io_uring_queue_exit(r);
	for (i = 0, ret = -1; i < DPT_WAIT_MS / 20 && ret; i++) {
		ret = syscall(SYS_delete_module, "dp", O_NONBLOCK);
		if (ret)
			dpt_sleep_ms(20);
	}
	ktap_ok(ret == 0 && !mod_loaded(), "rmmod: then the module unloads (%s)",
		ret ? strerror(errno) : "ok");
}

int main(void)
{
	struct io_uring r;
	int a, b, small, e;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (io_uring_queue_init(16, &r, 0))
		ktap_bail("io_uring_queue_init");
	dpt_pair(&a, 100, &b, 200);
	small = dpt_ep(dpt.nsb, 210, DP_POOL_MIN);
	if (small < 0)
		ktap_bail("endpoints");
	t_errors(&r, a);
	t_pending(&r, a, b);
	t_rtt(&r, a, b);
	t_sendv(&r, a, b);
	t_credit(&r, a, small);
	t_close(&r, a);
	e = dpt_ep(dpt.nsb, 260, 0);
	if (e < 0)
		ktap_bail("rmmod: endpoint");
	close(a);
	close(b);
	close(small);
	t_rmmod(&r, e);
	ktap_finish();
}
