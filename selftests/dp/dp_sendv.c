// SPDX-License-Identifier: GPL-2.0
/*
 * Batched send (DP_IOC_SENDV, libdp's dp_sendv), docs/api.md:
 *  args     unbound fd, read-only fd, n over DP_SENDV_MAX, flags, reserved,
 *           an unreadable argument: a clear errno and nothing sent; n = 0.
 *  basic    a batch of 64 arrives whole, in order, counted once in tx_msgs.
 *  bundle   a batch of 64 small messages arrives whole and in order in
 *           fewer link frames than messages: node B's NIC received at most
 *           one for four of them (docs/wire.md, "Bundles").
 *  fill     63 messages of a size that fits k to a bundle (a link frame, up
 *           to 8192 bytes) arrive in at most 63/k link frames and three to
 *           spare, and one for each message resent: seven 1000-byte
 *           messages to a frame of the veth pair's 9000 bytes, two of 698
 *           bytes on a 1500-byte link.
 *  mixed    one batch to three edges (two on the other node, one local):
 *           each receiver gets its own messages in order; a message to an
 *           edge not connected ends the batch with ENOTCONN at its index,
 *           as do EMSGSIZE and EINVAL (flags): those before are sent.
 *  efault   an unreadable message, then an unreadable struct dp_send, in
 *           the middle of a batch: the messages before it are sent, none
 *           after, none twice; sending the rest later completes the stream.
 *  partial  O_NONBLOCK batches into a 16 KiB pool that is not read: the
 *           credit accepts part of a batch (count < n, errno EAGAIN), then
 *           none (-1 EAGAIN); the receiver holds exactly what was accepted.
 *  block    a blocking batch larger than the credit sleeps in the ioctl and
 *           completes, every message once and in order, as the reader reads.
 *  signal   a signal during a blocking batch's wait ends it with the count
 *           sent and EINTR; nothing after is sent.
 *  raw      the same from an unreliable sender (DP_BIND_RAW), whose batch
 *           copies a message straight into the bundle in the NIC's buffer
 *           where the backend gives one: 64 small messages arrive whole, in
 *           order, in at most 16 link frames; an unreadable message at [3]:
 *           3, EFAULT, exactly [0..2] arrive intact (no part of [3] went
 *           out with them), then [3..9] once each.
 *  release  DP_SENDV_RELEASE (libdp's dp_sendv_release): an answer releases
 *           the messages it answers in the same call; n = 0 releases alone,
 *           at most what is held; a send that fails after the release
 *           still reports it; a write-only fd: EBADF and nothing released.
 *  cork     single sends (DP_IOC_SEND) of 200 small messages while A's link
 *           holds frames back (a tbf qdisc on A's veth, 8 kbit/s for half a
 *           second: frames wait in its queue, still the NIC's, then leave
 *           at 100 Mbit/s): autocorking holds writes to share
 *           link frames, dpctl ep counts them (corked > 0), node B receives
 *           fewer link frames than messages, and all arrive in order,
 *           intact; with the module's autocork=0 none is held; over dp's
 *           own drivers (tulip, myri: no completions counted) none is held.
 *  stream   the same 200 single sends with no qdisc holding frames (the
 *           veth lets go of each at once): a writer that streams (each
 *           write soon after the last, nothing read or released between)
 *           is held anyway, so B receives fewer link frames than messages,
 *           and all arrive in order, intact, the last of them sent at the
 *           hold's end (stream_hold_us); over dp's own drivers none is
 *           held.  Then a ping-pong of 20 round trips between two
 *           endpoints of its own, a read between writes: no write of
 *           either side held.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"		/* libdp: dp_sendv(), dp_sendv_release() */

#define MAXLEN	1000
#define NBUF	256

static uint8_t bufs[NBUF][MAXLEN], in[9000];

static uint32_t len_of(uint32_t i)
{
	return 8 + (i * 37u) % (MAXLEN - 8);
}

static void fill(uint32_t tag, uint32_t i, uint8_t *m, uint32_t len)
{
	uint32_t k;

	memcpy(m, &tag, 4);
	memcpy(m + 4, &i, 4);
	for (k = 8; k < len; k++)
		m[k] = (uint8_t)(tag * 7u + i * 13u + k);
}

/* msgs[k] := message i of tag to {nid, dpid}, in bufs[k % NBUF]. */
static void mk(struct dp_send *s, int k, uint32_t nid, uint32_t dpid, uint32_t tag,
	       uint32_t i, uint32_t len)
{
	uint8_t *b = bufs[k % NBUF];

	fill(tag, i, b, len);
	memset(s, 0, sizeof(*s));
	s->to.nid = nid;
	s->to.dpid = dpid;
	s->buf = (uint64_t)(uintptr_t)b;
	s->len = len;
}

/* The next message on fd, within DPT_WAIT_MS, is message i of tag (len bytes). */
static int recv_is(int fd, uint32_t tag, uint32_t i, uint32_t len)
{
	uint8_t want[MAXLEN];
	ssize_t n;

	if (dpt_wait_readable(fd, DPT_WAIT_MS) != 1)
		return 0;
	n = read(fd, in, sizeof(in));
	fill(tag, i, want, len);
	if (n != (ssize_t)len || memcmp(in, want, len)) {
		ktap_diag("want tag %u #%u (%u bytes), got %zd bytes tag %u #%u", tag, i, len,
			  n, n >= 8 ? *(uint32_t *)in : 0, n >= 8 ? *(uint32_t *)(in + 4) : 0);
		return 0;
	}
	return 1;
}

/* Nothing more arrives on fd within ms (a late duplicate would). */
static int quiet(int fd, int ms)
{
	return dpt_wait_readable(fd, ms) == 0;
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

static uint64_t tx_msgs(int fd)
{
	struct dp_ep_stats st;

	return dpt_stats(fd, &st) ? UINT64_MAX : st.tx_msgs;
}

static void t_args(int a)
{
	struct dp_send s[2];
	struct dp_sendv v;
	uint64_t tx0 = tx_msgs(a);
	int u, ro;

	mk(&s[0], 0, dpt.nidb, 200, 9, 0, 100);
	mk(&s[1], 1, dpt.nidb, 200, 9, 1, 100);
	if (dpt_ns(dpt.nsa))
		ktap_bail("args: namespace");
	u = dpt_open();
	KTAP_ERRNO(dp_sendv(u, s, 2), EBADFD, "args: unbound fd: EBADFD");
	close(u);
	ro = open("/dev/dp", O_RDONLY);
	KTAP_ERRNO(dp_sendv(ro, s, 2), EBADF, "args: fd not open for writing: EBADF");
	close(ro);
	KTAP_ERRNO(dp_sendv(a, s, DP_SENDV_MAX + 1), EINVAL, "args: n over DP_SENDV_MAX: EINVAL");
	memset(&v, 0, sizeof(v));
	v.msgs = (uint64_t)(uintptr_t)s;
	v.n = 2;
	v.flags = ~DP_SENDV_FLAGS;
	KTAP_ERRNO(ioctl(a, DP_IOC_SENDV, &v), EINVAL,
		   "args: dp_sendv.flags outside DP_SENDV_FLAGS: EINVAL");
	v.flags = 0;
	v.reserved = 1;
	KTAP_ERRNO(ioctl(a, DP_IOC_SENDV, &v), EINVAL, "args: dp_sendv.reserved not 0: EINVAL");
	KTAP_ERRNO(ioctl(a, DP_IOC_SENDV, (void *)8), EFAULT, "args: unreadable argument: EFAULT");
	v.reserved = 0;
	v.n = 0;
	v.err = 77;
	ktap_ok(ioctl(a, DP_IOC_SENDV, &v) == 0 && v.err == 0, "args: n = 0 sends nothing: 0");
	ktap_ok(tx_msgs(a) == tx0, "args: nothing was sent (tx_msgs %llu, was %llu)",
		(unsigned long long)tx_msgs(a), (unsigned long long)tx0);
}

static void t_basic(int a, int b)
{
	static struct dp_send s[64];
	uint64_t tx0 = tx_msgs(a);
	struct dp_sendv v;
	int i, ok, r;

	for (i = 0; i < 64; i++)
		mk(&s[i], i, dpt.nidb, 200, 1, (uint32_t)i, len_of((uint32_t)i));
	memset(&v, 0, sizeof(v));
	v.msgs = (uint64_t)(uintptr_t)s;
	v.n = 64;
	v.err = 77;
	r = ioctl(a, DP_IOC_SENDV, &v);
	ktap_ok(r == 64 && v.err == 0, "basic: 64 accepted, err 0 (got %d, err %u)", r, v.err);
	for (i = 0, ok = 1; i < 64 && ok; i++)
		ok = recv_is(b, 1, (uint32_t)i, len_of((uint32_t)i));
	ktap_ok(ok, "basic: all 64 arrive in order, intact");
	ktap_ok(quiet(b, 300), "basic: nothing more arrives");
	ktap_ok(tx_msgs(a) == tx0 + 64, "basic: tx_msgs counts 64");
}

/* 64 small messages of @tag in one batch from a to b (200), the checks named @what. */
static void t_bundle(int a, int b, uint32_t tag, const char *what)
{
	const char *sysb = getenv("DPT_SYSB");
	static struct dp_send s[64];
	long f0, f1;
	int i, ok, r;

	f0 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	for (i = 0; i < 64; i++)
		mk(&s[i], i, dpt.nidb, 200, tag, (uint32_t)i, 8 + (uint32_t)i % 57);
	r = dp_sendv(a, s, 64);
	ktap_ok(r == 64, "%s: 64 small messages accepted (%d)", what, r);
	for (i = 0, ok = 1; i < 64 && ok; i++)
		ok = recv_is(b, tag, (uint32_t)i, 8 + (uint32_t)i % 57);
	ktap_ok(ok, "%s: all 64 arrive in order, intact", what);
	f1 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	ok = f0 >= 0 && f1 > f0 && f1 - f0 <= 16;
	/*
	 * The window the batch had: each edge's cwnd, timeouts and undos,
	 * before the result, so that the harness keeps it with the failure.
	 */
	if (!ok)
		dpt_show_sessions();
	ktap_ok(ok, "%s: %ld link frames received for 64 messages (%s)", what, f1 - f0, dpt.ifb);
}

/*
 * Bundles fill a link frame, up to 8192 bytes of it (DP_TX_BUNDLE_MAX):
 * on the veth pair's 9000-byte link 63 messages of 1000 bytes (1052 with
 * their headers) leave seven to a frame, nine frames, where a bundle of
 * 4096 bytes took 21; on a 1500-byte link (the tulips) messages of 698
 * bytes leave two to a frame.  A flush at the window's or the NIC's edge
 * may split a bundle: three frames to spare; and a message resent (a
 * timeout, as over the Myrinet simulator's two switches) may go alone: one
 * frame more for each.
 */
static void t_fill(int a, int b)
{
	const char *sysb = getenv("DPT_SYSB");
	static struct dp_send s[63];
	uint32_t frame, len, per, want;
	struct dp_ep_stats st0, st1;
	struct dp_info info;
	long f0, f1, resent;
	int i, ok, r;

	if (dpt_info(a, &info))
		ktap_bail("fill: DP_IOC_INFO");
	frame = info.max_msg + DP_WIRE_HDR_LEN;
	if (frame > 8192)
		frame = 8192;
	len = frame / 2 - DP_WIRE_HDR_LEN;
	if (len > MAXLEN)
		len = MAXLEN;
	per = frame / (DP_WIRE_HDR_LEN + len);
	want = (63 + per - 1) / per;
	if (dpt_stats(a, &st0))
		ktap_bail("fill: DP_IOC_STATS");
	f0 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	for (i = 0; i < 63; i++)
		mk(&s[i], i, dpt.nidb, 200, 3, (uint32_t)i, len);
	r = dp_sendv(a, s, 63);
	ktap_ok(r == 63, "fill: 63 messages of %u bytes accepted (%d)", len, r);
	for (i = 0, ok = 1; i < 63 && ok; i++)
		ok = recv_is(b, 3, (uint32_t)i, len);
	ktap_ok(ok, "fill: all 63 arrive in order, intact");
	f1 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	if (dpt_stats(a, &st1))
		ktap_bail("fill: DP_IOC_STATS");
	resent = (long)(st1.tx_retrans - st0.tx_retrans);
	ok = f0 >= 0 && f1 > f0 && f1 - f0 <= want + 3 + resent;
	if (!ok)	/* before the result, as above */
		dpt_show_sessions();
	ktap_ok(ok, "fill: %ld link frames for 63 messages of %u bytes, %u to a %u-byte bundle: %u, %ld resent (%s)",
		f1 - f0, len, per, frame, want, resent, dpt.ifb);
}

/* Index k of the mixed batch goes to receiver k % 3. */
static void t_mixed(int a, int b, int b2, int l)
{
	static struct dp_send s[60];
	const int fds[3] = { b, b2, l };
	const uint32_t nid[3] = { dpt.nidb, dpt.nidb, dpt.nida }, dpid[3] = { 200, 201, 300 };
	uint32_t next[3] = { 0, 0, 0 };
	int i, k, r, ok;

	for (k = 0; k < 60; k++)
		mk(&s[k], k, nid[k % 3], dpid[k % 3], 20 + (uint32_t)(k % 3),
		   (uint32_t)(k / 3), len_of((uint32_t)k));
	r = dp_sendv(a, s, 60);
	ktap_ok(r == 60, "mixed: 60 messages to 3 edges accepted (%d)", r);
	for (k = 0, ok = 1; k < 60 && ok; k++) {
		i = k % 3;
		ok = recv_is(fds[i], 20 + (uint32_t)i, next[i]++, len_of((uint32_t)k));
	}
	ktap_ok(ok, "mixed: each receiver gets its 20, in order, intact");

	/* errors of one message end the batch at its index */
	for (k = 0; k < 8; k++)
		mk(&s[k], k, dpt.nidb, 200, 30, (uint32_t)k, 64);
	s[5].to.dpid = 999;
	errno = 0;
	r = dp_sendv(a, s, 8);
	ktap_ok(r == 5 && errno == ENOTCONN, "mixed: edge not connected at [5]: 5, ENOTCONN (%d, %s)",
		r, strerror(errno));
	s[5].to.dpid = 200;
	s[5].len = DP_POOL_MAX / 2 + 1;	/* more than any receiver takes */
	errno = 0;
	r = dp_sendv(a, s + 5, 3);
	ktap_ok(r == -1 && errno == EMSGSIZE, "mixed: too long at [0]: -1, EMSGSIZE (%d, %s)",
		r, strerror(errno));
	s[5].len = 64;
	s[6].flags = 1;
	errno = 0;
	r = dp_sendv(a, s + 5, 3);
	ktap_ok(r == 1 && errno == EINVAL, "mixed: flags at [1]: 1, EINVAL (%d, %s)", r,
		strerror(errno));
	s[6].flags = 0;
	r = dp_sendv(a, s + 6, 2);
	ktap_ok(r == 2, "mixed: the rest accepted (%d)", r);
	for (k = 0, ok = 1; k < 8 && ok; k++)
		ok = recv_is(b, 30, (uint32_t)k, 64);
	ktap_ok(ok && quiet(b, 300) && quiet(b2, 0) && quiet(l, 0),
		"mixed: the 8 arrive once, in order; nothing else");
}

static void t_efault(int a, int b)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t tx0 = tx_msgs(a);
	struct dp_send *s;
	uint8_t *map;
	int k, r, ok;

	/* two pages: descriptors end at the first's end, the second is unreadable */
	map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED || mprotect(map + pg, (size_t)pg, PROT_NONE))
		ktap_bail("efault: mmap");
	s = (struct dp_send *)(map + pg) - 10;
	for (k = 0; k < 10; k++)
		mk(&s[k], k, dpt.nidb, 200, 40, (uint32_t)k, len_of((uint32_t)k));
	s[3].buf = (uint64_t)(uintptr_t)(map + pg);	/* unreadable bytes */
	errno = 0;
	r = dp_sendv(a, s, 10);
	ktap_ok(r == 3 && errno == EFAULT, "efault: unreadable message [3]: 3, EFAULT (%d, %s)", r,
		strerror(errno));
	for (k = 0, ok = 1; k < 3 && ok; k++)
		ok = recv_is(b, 40, (uint32_t)k, len_of((uint32_t)k));
	ktap_ok(ok && quiet(b, 300), "efault: [0..2] arrive, none after");
	ktap_ok(tx_msgs(a) == tx0 + 3, "efault: tx_msgs counts 3");

	/* [3..9] again, the descriptors running into the unreadable page at [10 - 3] */
	mk(&s[3], 3, dpt.nidb, 200, 40, 3, len_of(3));
	errno = 0;
	r = dp_sendv(a, s + 3, 10);
	ktap_ok(r == 7 && errno == EFAULT,
		"efault: unreadable struct dp_send at [7]: 7, EFAULT (%d, %s)", r, strerror(errno));
	for (k = 3, ok = 1; k < 10 && ok; k++)
		ok = recv_is(b, 40, (uint32_t)k, len_of((uint32_t)k));
	ktap_ok(ok && quiet(b, 300), "efault: [3..9] arrive once each, in order; none twice");
	ktap_ok(tx_msgs(a) == tx0 + 10, "efault: tx_msgs counts 10 in all");
	munmap(map, (size_t)pg * 2);
}

/* An unreliable sender's batches (from ra, DP_BIND_RAW, to b). */
static void t_raw(int ra, int b)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct dp_send f[10];
	uint8_t *map;
	int i, ok, r;

	t_bundle(ra, b, 60, "raw");
	map = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		ktap_bail("raw: mmap");
	for (i = 0; i < 10; i++)
		mk(&f[i], i, dpt.nidb, 200, 61, (uint32_t)i, 8 + (uint32_t)i);
	f[3].buf = (uint64_t)(uintptr_t)map;	/* unreadable bytes */
	errno = 0;
	r = dp_sendv(ra, f, 10);
	ktap_ok(r == 3 && errno == EFAULT, "raw: unreadable message [3]: 3, EFAULT (%d, %s)", r,
		strerror(errno));
	for (i = 0, ok = 1; i < 3 && ok; i++)
		ok = recv_is(b, 61, (uint32_t)i, 8 + (uint32_t)i);
	ktap_ok(ok && quiet(b, 300), "raw: [0..2] arrive intact, nothing of [3] or after");
	mk(&f[3], 3, dpt.nidb, 200, 61, 3, 11);
	r = dp_sendv(ra, f + 3, 7);
	for (i = 3, ok = r == 7; i < 10 && ok; i++)
		ok = recv_is(b, 61, (uint32_t)i, 8 + (uint32_t)i);
	ktap_ok(ok && quiet(b, 300), "raw: then [3..9] arrive once each, in order (%d)", r);
	munmap(map, (size_t)pg);
}

/* Non-blocking batches until the 16 KiB pool's credit is used up. */
static void t_partial(int a, int b)
{
	static struct dp_send s[32];
	struct dp_ep_stats sa, sb;
	int r, i, k, total = 0, partial = 0, bad = 0, rounds, ok;

	set_nonblock(a, 1);
	for (rounds = 0; rounds < 1000; rounds++) {
		for (k = 0; k < 32; k++)
			mk(&s[k], k, dpt.nidb, 210, 50, (uint32_t)(total + k), MAXLEN);
		errno = 0;
		r = dp_sendv(a, s, 32);
		if (r > 0) {
			total += r;
			if (r < 32 && errno == EAGAIN)
				partial++;
			else if (r < 32)
				bad++;
		} else if (r < 0 && errno != EAGAIN) {
			bad++;
		}
		if (r < 32 && total && !(poll_out(a, 1000) & POLLOUT) && !dpt_stats(a, &sa) &&
		    !sa.tx_unacked)
			break;	/* every message acknowledged and still no credit */
		if (!total)
			dpt_sleep_ms(5);	/* the session opens */
	}
	ktap_ok(!bad, "partial: every short batch ended with EAGAIN");
	ktap_ok(partial >= 1 && total > 0 && total < 32 && total * 1024 <= (int)DP_POOL_MIN,
		"partial: %d batch(es) accepted in part, %d messages in all fit the 16 KiB pool",
		partial, total);
	errno = 0;
	r = dp_sendv(a, s, 32);
	ktap_ok(r == -1 && errno == EAGAIN, "partial: no credit left: -1, EAGAIN (%d, %s)", r,
		strerror(errno));
	dpt_stats(b, &sb);
	ktap_ok(sb.queued == (uint64_t)total && sb.rx_drop_full == 0,
		"partial: the receiver holds exactly the %d accepted (%llu), no drop", total,
		(unsigned long long)sb.queued);
	for (i = 0, ok = 1; i < total && ok; i++)
		ok = recv_is(b, 50, (uint32_t)i, MAXLEN);
	ktap_ok(ok && quiet(b, 300), "partial: they arrive once, in order, intact");
	set_nonblock(a, 0);
}

/* A blocking batch of 48 into the 16 KiB pool: it completes as b reads. */
static void t_block(int a, int b)
{
	static const long ioctls[] = { SYS_ioctl };
	static struct dp_send s[48];
	char what[96];
	int k, ok, st;
	pid_t pid;

	for (k = 0; k < 48; k++)
		mk(&s[k], k, dpt.nidb, 210, 60, (uint32_t)k, MAXLEN);
	pid = dpt_fork();
	if (pid == 0)
		_exit(dp_sendv(a, s, 48) == 48 ? 0 : 1);
	ktap_ok(dpt_wait_blocked(pid, ioctls, 1, DPT_WAIT_MS, what, sizeof(what)),
		"block: the batch sleeps in the ioctl, waiting for credit (%s)", what);
	for (k = 0, ok = 1; k < 48 && ok; k++)
		ok = recv_is(b, 60, (uint32_t)k, MAXLEN);
	st = dpt_wait_child(pid, 20000);
	ktap_ok(ok, "block: the reader gets all 48 once, in order, intact");
	ktap_ok(st == 0, "block: dp_sendv returned 48 (child %d)", st);
	ktap_ok(quiet(b, 300), "block: nothing more");
}

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * A signal while the batch waits for credit: it returns the count sent
 * and EINTR.  The child reports both through a pipe; the parent signals
 * it once it sleeps in the ioctl with messages already in the pool (so
 * the wait is a later message's, not the first's).
 */
static void t_signal(int a, int b)
{
	static const long ioctls[] = { SYS_ioctl };
	static struct dp_send s[48];
	struct dp_ep_stats sb;
	struct sigaction sa;
	int k, ok, st, p[2], res[2] = { -2, 0 }, seen = 0;
	char what[96];
	pid_t pid;

	for (k = 0; k < 48; k++)
		mk(&s[k], k, dpt.nidb, 210, 70, (uint32_t)k, MAXLEN);
	if (pipe(p))
		ktap_bail("signal: pipe");
	pid = dpt_fork();
	if (pid == 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;	/* no SA_RESTART */
		sigaction(SIGUSR1, &sa, NULL);
		errno = 0;
		res[0] = dp_sendv(a, s, 48);
		res[1] = errno;
		_exit(write(p[1], res, sizeof(res)) == sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	for (k = 0; k < 100 && !seen; k++) {
		seen = dpt_wait_blocked(pid, ioctls, 1, DPT_WAIT_MS, what, sizeof(what)) &&
		       !dpt_stats(b, &sb) && sb.queued > 0;
		if (!seen)
			dpt_sleep_ms(20);
	}
	ktap_ok(seen, "signal: the batch sleeps in the ioctl after sending some (%s)", what);
	kill(pid, SIGUSR1);
	ok = read(p[0], res, sizeof(res)) == sizeof(res);
	close(p[0]);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(ok && st == 0 && res[0] > 0 && res[0] < 48 && res[1] == EINTR,
		"signal: the batch ends with %d sent, EINTR (%s)", res[0], strerror(res[1]));
	dpt_stats(b, &sb);
	ktap_ok(res[0] > 0 && sb.queued == (uint64_t)res[0], "signal: the receiver holds the %d (%llu)",
		res[0], (unsigned long long)sb.queued);
	for (k = 0, ok = 1; k < res[0] && ok; k++)
		ok = recv_is(b, 70, (uint32_t)k, MAXLEN);
	ktap_ok(ok && quiet(b, 300), "signal: they arrive in order; none after");
}

/* Within DPT_WAIT_MS, fd's pool holds exactly n messages. */
static int queued_is(int fd, uint32_t n)
{
	struct dp_ep_stats st;
	int ms;

	for (ms = 0; ms < DPT_WAIT_MS; ms += 10) {
		if (dpt_stats(fd, &st))
			return 0;
		if (st.queued == n)
			return 1;
		usleep(10000);
	}
	ktap_diag("queued %llu, want %u", (unsigned long long)st.queued, n);
	return 0;
}

static uint64_t queued(int fd)
{
	struct dp_ep_stats st;

	return dpt_stats(fd, &st) ? UINT64_MAX : st.queued;
}

/* a sends k messages of tag to {nidb, 230}: 1 once r holds them all. */
static int feed(int a, int r, uint32_t tag, uint32_t k)
{
	struct dp_send s[3];
	uint32_t i;

	for (i = 0; i < k; i++)
		mk(&s[i], (int)i, dpt.nidb, 230, tag, i, 100 + i);
	return dp_sendv(a, s, k) == (int)k && queued_is(r, k);
}

static void t_release(int a)
{
	struct dp_send ans;
	unsigned int rel;
	int r, w, ret;

	r = dpt_ep(dpt.nsb, 230, 0);
	w = open("/dev/dp", O_WRONLY | O_CLOEXEC);
	if (r < 0 || w < 0 || ioctl(w, DP_IOC_BIND, &(struct dp_bind){ .dpid = 231 }) ||
	    dpt_connect(a, dpt.nidb, 230) || dpt_connect(r, dpt.nida, 100) ||
	    dpt_connect(w, dpt.nida, 100) || !feed(a, r, 5, 3))
		ktap_bail("release: endpoints");
	mk(&ans, 3, dpt.nida, 100, 6, 0, 50);
	rel = 2;
	ret = dp_sendv_release(r, &ans, 1, &rel);
	ktap_ok(ret == 1 && rel == 2, "release: an answer releases the 2 messages it answers "
		"in the same call: 1 sent, 2 released (%d, %u)", ret, rel);
	ktap_ok(queued(r) == 1 && recv_is(r, 5, 2, 102),
		"release: the third message is the head now, and the only one");
	ktap_ok(recv_is(a, 6, 0, 50), "release: the answer arrives");
	if (!feed(a, r, 7, 1))
		ktap_bail("release: feed");
	rel = 5;
	ret = dp_sendv_release(r, NULL, 0, &rel);
	ktap_ok(ret == 0 && rel == 1 && queued(r) == 0,
		"release: n = 0 releases alone, at most what is held: 1 of 5 (%d, %u)", ret, rel);
	if (!feed(a, r, 8, 1))
		ktap_bail("release: feed");
	mk(&ans, 4, dpt.nida, 999, 6, 1, 50);
	rel = 1;
	ret = dp_sendv_release(r, &ans, 1, &rel);
	ktap_ok(ret == -1 && errno == ENOTCONN && rel == 1 && queued(r) == 0,
		"release: done and reported when the send then fails (ENOTCONN, %u released)", rel);
	mk(&ans, 5, dpt.nida, 100, 6, 2, 50);
	rel = 1;
	KTAP_ERRNO(dp_sendv_release(w, &ans, 1, &rel), EBADF,
		   "release: fd not open for reading: EBADF");
	ktap_ok(rel == 0 && quiet(a, 300), "release: then nothing released, nothing sent");
	close(w);
	close(r);
}

/* 200 single sends of tag's small messages from a to b: all arrive. */
static void cork_run(int a, int b, uint32_t tag, const char *what)
{
	struct dp_send s;
	int i, sent, ok;

	for (i = 0, sent = 0; i < 200; i++) {
		mk(&s, i, dpt.nidb, 200, tag, (uint32_t)i, 8 + (uint32_t)i % 57);
		sent += ioctl(a, DP_IOC_SEND, &s) == (int)s.len;
	}
	ktap_ok(sent == 200, "%s: 200 single sends accepted (%d)", what, sent);
	for (i = 0, ok = 1; i < 200 && ok; i++)
		ok = recv_is(b, tag, (uint32_t)i, 8 + (uint32_t)i % 57);
	ktap_ok(ok, "%s: all 200 arrive in order, intact", what);
}

/*
 * cork_run() counted: the writes A's endpoint 100 held (@corked, -1 if
 * unread), the link frames node B received (@frames, -1 if unread), and
 * of them the first sends (@first: less each resend and control frame,
 * which go alone, in a frame of their own).
 */
struct cork_count {
	long corked, frames, first;
	unsigned long resends, ctrl;
};

static void cork_counted(int a, int b, uint32_t tag, const char *what, struct cork_count *n)
{
	const char *sysb = getenv("DPT_SYSB");
	long c0 = dpt_ep_field(dpt.nsa, 100, "corked"), c1, f0, f1;
	uint64_t r0 = dpt_ctr(dpt.nsa, DP_CTR_TX_RETRANS), k0 = dpt_ctr(dpt.nsa, DP_CTR_TX_CTRL);

	f0 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	cork_run(a, b, tag, what);
	f1 = dpt_if_frames(dpt.nsb, dpt.ifb, sysb, 1);
	n->resends = (unsigned long)(dpt_ctr(dpt.nsa, DP_CTR_TX_RETRANS) - r0);
	n->ctrl = (unsigned long)(dpt_ctr(dpt.nsa, DP_CTR_TX_CTRL) - k0);
	c1 = dpt_ep_field(dpt.nsa, 100, "corked");
	n->corked = c0 >= 0 && c1 >= 0 ? c1 - c0 : -1;
	n->frames = f0 >= 0 && f1 >= f0 ? f1 - f0 : -1;
	n->first = n->frames - (long)n->resends - (long)n->ctrl;
}

static int autocork(int on)
{
	return dpt_sh("echo %d > /sys/module/dp/parameters/autocork", on);
}

static void t_cork(int a, int b)
{
	int netdev = !strcmp(dpt.backend, "netdev"), tbf = 0;
	struct cork_count n;
	long c1, c2;

	/*
	 * A queue that holds frames whatever the kernel's speed: 8 kbit/s
	 * once its bucket's first 1600 bytes are spent, then 100 Mbit/s from
	 * half a second on (a shell in the background), to let them all go.
	 */
	if (netdev)
		tbf = !dpt_sh("%s netns exec %s tc qdisc add dev %s root tbf rate 8kbit burst 1600 limit 1000000 || exit 1; "
			      "{ sleep 0.5; %s netns exec %s tc qdisc change dev %s root tbf rate 100mbit burst 20000 limit 1000000; } >/dev/null 2>&1 &",
			      dpt_ip(), dpt.nsa, dpt.ifa, dpt_ip(), dpt.nsa, dpt.ifa);
	cork_counted(a, b, 3, "cork", &n);
	c1 = dpt_ep_field(dpt.nsa, 100, "corked");
	if (netdev && !tbf) {
		ktap_skip("no tbf qdisc in this kernel", "cork: writes held while a frame was in flight");
		ktap_skip("no tbf qdisc in this kernel", "cork: first sends in fewer link frames");
	} else if (netdev) {
		ktap_ok(n.corked > 0, "cork: %ld of 200 writes held while a frame was in flight",
			n.corked);
		ktap_ok(n.frames > 0 && n.first > 0 && n.first < 200,
			"cork: first sends of 200 messages in %ld link frames (%s got %ld, %lu resends, %lu control)",
			n.first, dpt.ifb, n.frames, n.resends, n.ctrl);
	} else {
		ktap_ok(n.corked == 0, "cork: %s counts no completions: none held (%ld)",
			dpt.backend, n.corked);
	}
	ktap_ok(!autocork(0), "cork: autocork=0 set");
	cork_run(a, b, 4, "autocork=0");
	c2 = dpt_ep_field(dpt.nsa, 100, "corked");
	ktap_ok(c1 >= 0 && c2 == c1, "autocork=0: no write held (%ld)", c2 - c1);
	autocork(1);
	if (tbf)
		dpt_sh("%s netns exec %s tc qdisc del dev %s root", dpt_ip(), dpt.nsa, dpt.ifa);
}

/*
 * One leg of a ping-pong: @from sends 32 bytes tagged @tag, #@i, to
 * (@nid, @dpid), and @to receives them intact.  NULL, or the step that
 * failed: @who's send or receive.
 */
static const char *ping_leg(int from, int to, uint32_t nid, uint32_t dpid, uint32_t tag,
			    uint32_t i, const char *const who[2])
{
	struct dp_send s;

	mk(&s, (int)tag, nid, dpid, tag, i, 32);
	if (ioctl(from, DP_IOC_SEND, &s) != 32)
		return who[0];
	if (!recv_is(to, tag, i, 32))
		return who[1];
	return NULL;
}

static void t_stream(int a, int b)
{
	static const char *const to_b[2] = { "A's send", "B's receive" };
	static const char *const to_a[2] = { "B's send", "A's receive" };
	struct cork_count n;
	long ca0, ca1, cb0, cb1;
	const char *failed = NULL;
	int i, pa, pb;

	cork_counted(a, b, 5, "stream", &n);
	if (!strcmp(dpt.backend, "netdev"))
		ktap_ok(n.corked > 0 && n.frames > 0 && n.first > 0 && n.first < 200,
			"stream: 200 back-to-back writes, %ld held, first sends in %ld link frames "
			"(%s got %ld, %lu resends, %lu control)", n.corked, n.first, dpt.ifb,
			n.frames, n.resends, n.ctrl);
	else
		ktap_ok(n.corked == 0, "stream: %s counts no completions: none held (%ld)",
			dpt.backend, n.corked);
	/* endpoints of its own: no earlier case's edge state shows in poll() */
	pa = dpt_ep(dpt.nsa, 120, 0);
	pb = dpt_ep(dpt.nsb, 220, 0);
	if (pa < 0 || pb < 0 || dpt_connect(pa, dpt.nidb, 220) || dpt_connect(pb, dpt.nida, 120))
		ktap_bail("stream: ping-pong endpoints");
	ca0 = dpt_ep_field(dpt.nsa, 120, "corked");
	cb0 = dpt_ep_field(dpt.nsb, 220, "corked");
	for (i = 0; i < 20; i++) {
		failed = ping_leg(pa, pb, dpt.nidb, 220, 6, (uint32_t)i, to_b);
		if (!failed)
			failed = ping_leg(pb, pa, dpt.nida, 120, 7, (uint32_t)i, to_a);
		if (failed)
			break;
	}
	if (failed)
		ktap_diag("stream: ping-pong round %d: %s failed (errno %d)", i, failed, errno);
	ca1 = dpt_ep_field(dpt.nsa, 120, "corked");
	cb1 = dpt_ep_field(dpt.nsb, 220, "corked");
	ktap_ok(!failed && ca0 >= 0 && ca1 == ca0 && cb0 >= 0 && cb1 == cb0,
		"stream: a ping-pong's 20 round trips, no write held (A %ld, B %ld)",
		ca1 - ca0, cb1 - cb0);
	close(pa);
	close(pb);
}

int main(void)
{
	int a, b, b2, l, small, ra;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	dpt_pair(&a, 100, &b, 200);
	b2 = dpt_ep(dpt.nsb, 201, 0);
	small = dpt_ep(dpt.nsb, 210, DP_POOL_MIN);
	l = dpt_ep(dpt.nsa, 300, 0);
	ra = dpt_ep_flags(dpt.nsa, 110, 0, DP_BIND_RAW);
	if (b2 < 0 || small < 0 || l < 0 || ra < 0 || dpt_connect(a, dpt.nidb, 201) ||
	    dpt_connect(a, dpt.nida, 300) || dpt_connect(a, dpt.nidb, 210) ||
	    dpt_connect(ra, dpt.nidb, 200))
		ktap_bail("endpoints");
	t_args(a);
	t_basic(a, b);
	t_bundle(a, b, 2, "bundle");
	t_fill(a, b);
	t_mixed(a, b, b2, l);
	t_efault(a, b);
	t_raw(ra, b);
	t_partial(a, small);
	t_block(a, small);
	t_signal(a, small);
	t_release(a);
	t_cork(a, b);
	t_stream(a, b);
	ktap_finish();
}
