// SPDX-License-Identifier: GPL-2.0
/*
 * Lossless edges between two nodes of one guest (docs/reliability.md):
 *
 *  block   a receiver that does not read: the sender gets EAGAIN under
 *          O_NONBLOCK, poll() shows no POLLOUT, a blocking sender sleeps;
 *          meanwhile another endpoint's edge between the same nodes keeps
 *          flowing (no head-of-line blocking); nothing is dropped
 *          (rx_drop_full 0); once the receiver reads, POLLOUT returns and
 *          every message arrives once, in order, intact.
 *  refused a receiver that admits only its connected peers refuses the
 *          sender's session: ECONNREFUSED, counted in rx_drop_admit.
 *  busy    a user holding its share of a receiver's sender table gets
 *          EUSERS at once for one more sender; another user's sender
 *          still gets a session.
 *  timeout the receiver's node stops answering (A taken out of its NART):
 *          after unreach_ms (set to 1500 here) the sender's session fails
 *          with ETIMEDOUT, reported once; the messages not acknowledged are
 *          counted in tx_undelivered and tx_unacked is back to 0; then the
 *          edge works again.
 *  restart the receiving endpoint is closed and bound again (a new
 *          incarnation: what a module reload or restarted process gives)
 *          while the sender has unacknowledged messages: the sender gets
 *          ECONNRESET, the new endpoint never sees a message of the old
 *          stream, and the new stream starts at token seq 1.
 *  close   an endpoint closed with messages unacknowledged counts them in
 *          the node's tx_undelivered (the runner's rmmod then checks that
 *          nothing is left behind).
 *  state   what `dpctl ep` shows agrees with what was sent and with the
 *          ioctl's dp_ep_stats: a raw endpoint shows as raw; a reliable
 *          edge to a receiver that does not read is open with its credit
 *          used up, the receiver's rx peer has the same session (isn) and
 *          counts the same messages and credit; with the receiver cut off,
 *          the messages written show as unacked and retransmitted; when the
 *          receiver restarts the edge shows failed, ECONNRESET, and the
 *          messages as tx_undelivered, then idle once the error is reported.
 *  partial the receiver frees less than the message a non-blocking writer
 *          waits with: poll() reports no POLLOUT for a write that would get
 *          EAGAIN; once the receiver reads on, the message goes.
 *  many    an endpoint with 1000 edges (more than one netlink message
 *          holds): dpctl ep shows it once with every edge once.
 *  idle    a session idle for longer than unreach_ms, then a message (or,
 *          credit given back, a window probe) whose answers are lost for a
 *          moment: the peer's silence counts from the write, not from the
 *          last frame before the pause, so the session lives and delivers.
 *  pollidle poll() waits for POLLOUT on an edge with less credit left than
 *          the largest message; when the idle session gives its credit
 *          back (the next write asks for a window at once), poll() wakes.
 *  silent  a sender that vanished without a word (its FIN lost) held
 *          credit at the receiver; silent past unreach_ms, it loses that
 *          credit to a sender that needs it.
 *  evict   1024 senders (the most an endpoint keeps sessions for) went
 *          quiet: one more sender still gets a session (one silent sender
 *          is forgotten, dpctl ep shows which; nothing dropped for lack of
 *          room), and the forgotten one hears ECONNRESET once on its next
 *          write, then delivers.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define LEN		1000
#define MORE		200	/* blocking writes after the pool is full */

static uint8_t out[LEN], in[9000];

static void fill(uint32_t tag, uint32_t i, uint8_t *m, size_t len)
{
	size_t k;

	memcpy(m, &tag, 4);
	memcpy(m + 4, &i, 4);
	for (k = 8; k < len; k++)
		m[k] = (uint8_t)(tag * 7u + i * 13u + k);
}

static int is(const uint8_t *m, ssize_t n, uint32_t tag, uint32_t i)
{
	uint8_t want[LEN];

	if (n != LEN)
		return 0;
	fill(tag, i, want, LEN);
	return !memcmp(m, want, LEN);
}

/* The next message on @b, within DPT_WAIT_MS, is message @i of @tag. */
static int recv_is(int b, uint32_t tag, uint32_t i)
{
	return dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
	       is(in, read(b, in, sizeof(in)), tag, i);
}

static short poll_out(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* Node B stops (or starts again) answering node A: A out of B's NART. */
static int b_hears_a(int on)
{
	const uint8_t *m = dpt.maca;

	if (!on)
		return dpt_sh("%s netns exec %s dpctl nart del %u", dpt_ip(), dpt.nsb, dpt.nida);
	return dpt_sh("%s netns exec %s dpctl nart add %u %02x:%02x:%02x:%02x:%02x:%02x%s",
		      dpt_ip(), dpt.nsb, dpt.nida, m[0], m[1], m[2], m[3], m[4], m[5], dpt.routea);
}

static int set_param(const char *name, unsigned int v)
{
	return dpt_sh("echo %u > /sys/module/dp/parameters/%s", v, name);
}

static void t_block(void)
{
	struct dp_ep_stats sa, sb;
	uint64_t full0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_FULL);
	int a, b, a2, b2, n_ok = 0, i, ok, st, last;
	pid_t pid;

	b = dpt_ep(dpt.nsb, 500, DP_POOL_MIN);
	b2 = dpt_ep(dpt.nsb, 501, 0);
	a = dpt_ep(dpt.nsa, 400, 0);
	a2 = dpt_ep(dpt.nsa, 401, 0);
	if (a < 0 || b < 0 || a2 < 0 || b2 < 0 || dpt_connect(a, dpt.nidb, 500) ||
	    dpt_connect(a2, dpt.nidb, 501))
		ktap_bail("block: endpoints");

	set_nonblock(a, 1);
	for (i = 0, last = 0; i < 1000; i++) {
		fill(1, (uint32_t)n_ok, out, LEN);
		if (write(a, out, LEN) == LEN) {
			n_ok++;
			continue;
		}
		last = errno;
		if (last != EAGAIN)
			break;
		/*
		 * The session opening, or the congestion window, passes; the
		 * credit is used up once poll() waits in vain with every
		 * message acknowledged (not a clock: a slow kernel's late
		 * ACK must not look like it).
		 */
		if (n_ok && !(poll_out(a, 1000) & POLLOUT) && !dpt_stats(a, &sa) &&
		    !sa.tx_unacked)
			break;
		if (!n_ok)
			dpt_sleep_ms(5);
	}
	ktap_ok(n_ok > 0 && last == EAGAIN && i < 1000 && n_ok * 1024 <= (int)DP_POOL_MIN,
		"O_NONBLOCK: %d messages fit the 16 KiB pool, then EAGAIN (%s)", n_ok,
		strerror(last));
	ktap_ok(!(poll_out(a, 200) & POLLOUT), "poll() shows no POLLOUT while no credit");
	dpt_stats(a, &sa);
	ktap_ok(sa.tx_blocked >= 1, "tx_blocked %llu", (unsigned long long)sa.tx_blocked);

	/* Another endpoint's edge between the same nodes flows meanwhile. */
	ok = 1;
	for (i = 0; i < 100 && ok; i++) {
		fill(2, (uint32_t)i, out, LEN);
		ok = write(a2, out, LEN) == LEN && recv_is(b2, 2, (uint32_t)i);
	}
	ktap_ok(ok, "meanwhile 100 messages on another edge arrive in order (%d)", i);

	set_nonblock(a, 0);
	pid = dpt_fork();
	if (pid == 0) {
		for (i = 0; i < MORE; i++) {
			fill(1, (uint32_t)(n_ok + i), out, LEN);
			if (write(a, out, LEN) != LEN)
				_exit(1);
		}
		_exit(0);
	}
	{
		static const long writes[] = { SYS_write };
		char what[96];

		/* a handshake, not a sleep: the writer is seen blocked in write() */
		ktap_ok(dpt_wait_blocked(pid, writes, 1, DPT_WAIT_MS, what, sizeof(what)),
			"a blocking writer sleeps in write() (%s)", what);
	}
	dpt_stats(b, &sb);
	ktap_ok(sb.queued == (uint64_t)n_ok && sb.rx_drop_full == 0,
		"the receiver holds %llu (want %d), rx_drop_full %llu", (unsigned long long)sb.queued,
		n_ok, (unsigned long long)sb.rx_drop_full);

	ok = 1;
	for (i = 0; i < n_ok + MORE && ok; i++) {
		ssize_t r;

		ok = dpt_wait_readable(b, DPT_WAIT_MS) == 1;
		r = ok ? read(b, in, sizeof(in)) : -1;
		ok = ok && is(in, r, 1, (uint32_t)i);
		if (!ok)
			ktap_diag("message %d: %zd bytes, tag %u index %u", i, r, *(uint32_t *)in,
				  *(uint32_t *)(in + 4));
	}
	ktap_ok(ok, "the reader gets all %d, once, in order, intact", n_ok + MORE);
	st = dpt_wait_child(pid, 20000);
	ktap_ok(st == 0, "the blocking writer finished (%d)", st);
	ktap_ok(poll_out(a, 2000) & POLLOUT, "POLLOUT once the receiver has read");
	set_nonblock(b, 1);
	KTAP_ERRNO(read(b, in, sizeof(in)), EAGAIN, "nothing more, nothing twice");
	dpt_stats(b, &sb);
	ktap_ok(sb.rx_drop_full == 0 && dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_FULL) == full0,
		"no drop: rx_drop_full 0 on the endpoint and the node");
	close(a);
	close(a2);
	close(b);
	close(b2);
}

static void t_refused(void)
{
	struct dp_ep_stats sb;
	int a, b;

	b = dpt_ep_flags(dpt.nsb, 502, 0, DP_ADMIT_PEERS);
	a = dpt_ep(dpt.nsa, 402, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 502))
		ktap_bail("refused: endpoints");
	fill(3, 0, out, LEN);
	KTAP_ERRNO(write(a, out, LEN), ECONNREFUSED,
		   "a receiver admitting only its peers refuses the session: ECONNREFUSED");
	dpt_stats(b, &sb);
	ktap_ok(sb.rx_drop_admit >= 1 && sb.rx_msgs == 0, "counted in rx_drop_admit (%llu)",
		(unsigned long long)sb.rx_drop_admit);
	dpt_connect(b, dpt.nida, 402);
	ktap_ok(write(a, out, LEN) == LEN && recv_is(b, 3, 0), "once connected back, it is admitted");
	close(a);
	close(b);
}

/* An endpoint in @ns bound by user @uid (its owner), as root sets it up. */
static int ep_as(uid_t uid, const char *ns, uint32_t dpid)
{
	int fd, e;

	if (dpt_ns(ns) || setresuid(-1, uid, -1))
		return -1;
	fd = dpt_open();
	if (fd >= 0 && dpt_bind(fd, dpid, DP_POOL_MIN)) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	e = errno;
	if (setresuid(-1, 0, -1))
		ktap_bail("busy: back to root");
	errno = e;
	return fd;
}

/*
 * A user holding its share of a receiver's sender table (rx_peers_per_uid,
 * 2 here) is refused one more sender at its HELLO, and that write fails
 * at once with EUSERS, not after unreach_ms with ETIMEDOUT; meanwhile
 * senders of other users still get a session and deliver: the shares are
 * counted per user, so each of the three gets through.
 */
static void t_busy(void)
{
	int a[3], b, c[3], i, ok = 1, through = 0;

	if (set_param("rx_peers_per_uid", 2))
		ktap_bail("busy: rx_peers_per_uid");
	b = dpt_ep(dpt.nsb, 514, 0);
	for (i = 0; i < 3; i++) {
		a[i] = ep_as(1001, dpt.nsa, 4140 + (uint32_t)i);
		if (a[i] < 0 || dpt_connect(a[i], dpt.nidb, 514))
			ktap_bail("busy: sender of uid 1001");
	}
	for (i = 0; i < 3; i++) {	/* DPIDs above dpid_priv_max */
		c[i] = ep_as(1002 + (uid_t)i, dpt.nsa, 4143 + (uint32_t)i);
		if (c[i] < 0 || dpt_connect(c[i], dpt.nidb, 514))
			ktap_bail("busy: senders of other users");
	}
	if (b < 0)
		ktap_bail("busy: receiver");
	for (i = 0; i < 2; i++) {
		fill(14, (uint32_t)i, out, LEN);
		ok &= write(a[i], out, LEN) == LEN && recv_is(b, 14, (uint32_t)i);
	}
	ktap_ok(ok, "uid 1001's first 2 senders (its share of the table) deliver");
	KTAP_ERRNO(write(a[2], out, LEN), EUSERS,
		   "its 3rd sender is refused at its HELLO: EUSERS, not ETIMEDOUT");
	for (i = 0; i < 3; i++) {
		fill(14, 9 + (uint32_t)i, out, LEN);
		through += write(c[i], out, LEN) == LEN && recv_is(b, 14, 9 + (uint32_t)i);
	}
	ktap_ok(through == 3, "meanwhile senders of uids 1002..1004 get sessions and deliver (%d of 3)",
		through);
	for (i = 0; i < 3; i++) {
		close(a[i]);
		close(c[i]);
	}
	close(b);
	set_param("rx_peers_per_uid", 256);
}

/*
 * Wait until every message fd wrote is acknowledged (not a fixed sleep:
 * a slow kernel's delayed ACK can take longer); 1 if so within ms.
 */
static int wait_acked(int fd, int ms)
{
	struct dp_ep_stats st;
	int t;

	for (t = 0; t < ms; t += 20) {
		if (!dpt_stats(fd, &st) && !st.tx_unacked)
			return 1;
		dpt_sleep_ms(20);
	}
	return 0;
}

/* Wait for poll() to report an error on fd (the session failed). */
static int wait_err(int fd, int ms)
{
	int t;

	for (t = 0; t < ms; t += 50) {
		if (poll_out(fd, 0) & POLLERR)
			return 1;
		dpt_sleep_ms(50);
	}
	return 0;
}

static void t_timeout(void)
{
	struct dp_ep_stats sa0, sa;
	int a, b, i, ok = 1;

	b = dpt_ep(dpt.nsb, 504, 0);
	a = dpt_ep(dpt.nsa, 404, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 504))
		ktap_bail("timeout: endpoints");
	fill(4, 0, out, LEN);
	ktap_ok(write(a, out, LEN) == LEN && recv_is(b, 4, 0), "the session is open");
	if (!wait_acked(a, 10000) || set_param("unreach_ms", 1500) || b_hears_a(0))
		ktap_bail("timeout: the first ACK, set unreach_ms, take A out of B's NART");
	dpt_stats(a, &sa0);
	for (i = 1; i <= 3 && ok; i++) {
		fill(4, (uint32_t)i, out, LEN);
		ok = write(a, out, LEN) == LEN;
	}
	ktap_ok(ok, "3 writes to a node that stopped answering are accepted");
	dpt_stats(a, &sa);
	/*
	 * Not known delivered: 3 waiting, or, on a slow kernel where the
	 * 1.5 s bound passed already, 3 given up.
	 */
	ktap_ok(sa.tx_unacked == 3 ||
		(sa.tx_unacked == 0 && sa.tx_undelivered - sa0.tx_undelivered == 3),
		"tx_unacked %llu, tx_undelivered +%llu (want 3 in one of them)",
		(unsigned long long)sa.tx_unacked,
		(unsigned long long)(sa.tx_undelivered - sa0.tx_undelivered));
	ktap_ok(wait_err(a, 8000), "within the bound, poll() reports POLLERR");
	KTAP_ERRNO(write(a, out, LEN), ETIMEDOUT, "the next write reports ETIMEDOUT");
	dpt_stats(a, &sa);
	ktap_ok(sa.tx_undelivered - sa0.tx_undelivered == 3 && sa.tx_unacked == 0,
		"tx_undelivered +%llu (want 3), tx_unacked %llu",
		(unsigned long long)(sa.tx_undelivered - sa0.tx_undelivered),
		(unsigned long long)sa.tx_unacked);
	if (b_hears_a(1) || set_param("unreach_ms", 10000))
		ktap_bail("timeout: restore");
	fill(4, 9, out, LEN);
	ktap_ok(write(a, out, LEN) == LEN && recv_is(b, 4, 9), "reachable again: a new session delivers");
	set_nonblock(b, 1);
	KTAP_ERRNO(read(b, in, sizeof(in)), EAGAIN, "and none of the 3 given up");
	close(a);
	close(b);
}

static void t_restart(void)
{
	const struct dp_token *t;
	struct dp_ep_stats sa0, sa;
	struct dpt_pool pool;
	int a, b, i, ok = 1;
	ssize_t r;

	b = dpt_ep(dpt.nsb, 505, 0);
	a = dpt_ep(dpt.nsa, 405, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 505))
		ktap_bail("restart: endpoints");
	fill(5, 0, out, LEN);
	ktap_ok(write(a, out, LEN) == LEN && recv_is(b, 5, 0), "the session is open");
	if (!wait_acked(a, 10000))
		ktap_bail("restart: the first message is not acknowledged");
	dpt_stats(a, &sa0);
	/* Messages the receiver will never acknowledge ... */
	if (b_hears_a(0))
		ktap_bail("restart: take A out of B's NART");
	for (i = 1; i <= 4 && ok; i++) {
		fill(5, (uint32_t)i, out, LEN);
		ok = write(a, out, LEN) == LEN;
	}
	ktap_ok(ok, "4 messages wait for their acknowledgement");
	/* ... then the receiving endpoint restarts: a new incarnation. */
	close(b);
	b = dpt_ep(dpt.nsb, 505, 0);
	if (b < 0 || dpt_map(b, &pool) || b_hears_a(1))
		ktap_bail("restart: rebind, restore");
	ktap_ok(wait_err(a, 8000), "the sender's retransmission meets the new endpoint: POLLERR");
	KTAP_ERRNO(write(a, out, LEN), ECONNRESET, "the next write reports ECONNRESET");
	dpt_stats(a, &sa);
	ktap_ok(sa.tx_undelivered - sa0.tx_undelivered == 4, "tx_undelivered +%llu (want 4)",
		(unsigned long long)(sa.tx_undelivered - sa0.tx_undelivered));
	fill(5, 100, out, LEN);
	ok = write(a, out, LEN) == LEN && dpt_wait_readable(b, DPT_WAIT_MS) == 1;
	t = ok ? dpt_head(&pool) : NULL;
	ktap_ok(t && t->seq == 1 && t->len == LEN && is((const uint8_t *)(t + 1), LEN, 5, 100),
		"the new endpoint's first message is the new stream's, token seq 1 (%u)",
		t ? t->seq : 0);
	r = read(b, in, sizeof(in));
	set_nonblock(b, 1);
	KTAP_ERRNO(read(b, in, sizeof(in)), EAGAIN, "no message of the old stream reached it");
	(void)r;
	dpt_unmap(&pool);
	close(a);
	close(b);
}

static void t_close(void)
{
	uint64_t u0 = dpt_ctr(dpt.nsa, DP_CTR_TX_UNDELIVERED);
	uint64_t r0 = dpt_ctr(dpt.nsa, DP_CTR_TX_RETRANS);
	int a, b, i, ok = 1;

	b = dpt_ep(dpt.nsb, 506, 0);
	a = dpt_ep(dpt.nsa, 406, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 506))
		ktap_bail("close: endpoints");
	fill(6, 0, out, LEN);
	ktap_ok(write(a, out, LEN) == LEN && dpt_wait_readable(b, DPT_WAIT_MS) == 1,
		"the session is open");
	if (!wait_acked(a, 10000) || b_hears_a(0))
		ktap_bail("close: the first ACK, take A out of B's NART");
	/*
	 * 4: the congestion window's floor.  On a slow kernel the first
	 * retransmission timeout can come between these writes and shrink
	 * the window to 4; a fifth write would then wait for an ack that
	 * never comes, until the session times out.
	 */
	for (i = 1; i <= 4 && ok; i++)
		ok = write(a, out, LEN) == LEN;
	ktap_ok(ok, "4 writes to a node that stopped answering are accepted");
	/* retransmissions under way: seen in node A's count, not assumed */
	ktap_ok(dpt_wait_ctr(dpt.nsa, DP_CTR_TX_RETRANS, r0 + 1, DPT_WAIT_MS) > r0,
		"node A retransmits to the silent node");
	close(a);
	ktap_ok(dpt_ctr(dpt.nsa, DP_CTR_TX_UNDELIVERED) - u0 == 4,
		"closed with 4 unacknowledged: node tx_undelivered +%llu",
		(unsigned long long)(dpt_ctr(dpt.nsa, DP_CTR_TX_UNDELIVERED) - u0));
	if (b_hears_a(1))
		ktap_bail("close: restore");
	close(b);
}

/* dpctl ep's output, for one reader at a time (1025 endpoints fit). */
static char ep_out[1 << 20];

/* `dpctl ep` in namespace ns, into buf; 0 or -1. */
static int dpctl_ep(const char *ns, char *buf, size_t len)
{
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s netns exec %s dpctl ep", dpt_ip(), ns);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	return pclose(f) == 0 && n < len - 1 ? 0 : -1;
}

/*
 * In dpctl ep output @out, the first line of endpoint @dpid's block that
 * starts (after indentation) with @prefix, copied into @line; 0 or -1.
 */
static int ep_line(const char *out, uint32_t dpid, const char *prefix, char *line,
		   size_t len)
{
	char head[32];
	const char *p = out, *end, *t;
	int in = 0;

	snprintf(head, sizeof(head), "dpid %u ", dpid);
	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (!strncmp(p, "dpid ", 5))
			in = !strncmp(p, head, strlen(head));
		for (t = p; *t == ' '; t++)
			;
		if (in && !strncmp(t, prefix, strlen(prefix)) && (size_t)(end - p) < len) {
			memcpy(line, p, (size_t)(end - p));
			line[end - p] = 0;
			return 0;
		}
	}
	line[0] = 0;
	return -1;
}

/* The word after " name " in a "name value" line, or "". */
static const char *word(const char *line, const char *name, char *buf, size_t len)
{
	char key[64];
	const char *p;
	size_t n;

	snprintf(key, sizeof(key), " %s ", name);
	p = strstr(line, key);
	buf[0] = 0;
	if (!p)
		return buf;
	p += strlen(key);
	n = strcspn(p, " ");
	if (n < len) {
		memcpy(buf, p, n);
		buf[n] = 0;
	}
	return buf;
}

/* A number after " name ", LLONG_MIN if absent. */
static long long num(const char *line, const char *name)
{
	char buf[32], *end;
	long long v;

	word(line, name, buf, sizeof(buf));
	v = strtoll(buf, &end, 10);
	return buf[0] && !*end ? v : LLONG_MIN;
}

static int is_word(const char *line, const char *name, const char *want)
{
	char buf[32];

	return !strcmp(word(line, name, buf, sizeof(buf)), want);
}

/* Lines of endpoint dpid in namespace ns: its own, stats, edge, rx peer. */
struct ep_view {
	char ep[512], stats[512], edge[512], rx[512];
};

static int view(const char *ns, uint32_t dpid, uint32_t nid, uint32_t peer,
		struct ep_view *v)
{
	char prefix[64];

	if (dpctl_ep(ns, ep_out, sizeof(ep_out)))
		return -1;
	ep_line(ep_out, dpid, "dpid", v->ep, sizeof(v->ep));
	ep_line(ep_out, dpid, "tx_msgs ", v->stats, sizeof(v->stats));
	snprintf(prefix, sizeof(prefix), "edge nid %u dpid %u ", nid, peer);
	ep_line(ep_out, dpid, prefix, v->edge, sizeof(v->edge));
	snprintf(prefix, sizeof(prefix), "rx_peer nid %u dpid %u ", nid, peer);
	ep_line(ep_out, dpid, prefix, v->rx, sizeof(v->rx));
	return v->ep[0] ? 0 : -1;
}

static void show(const char *what, const struct ep_view *v)
{
	ktap_diag("%s: %s", what, v->ep);
	ktap_diag("%s: %s", what, v->stats);
	if (v->edge[0])
		ktap_diag("%s: %s", what, v->edge);
	if (v->rx[0])
		ktap_diag("%s: %s", what, v->rx);
}

/* Messages the edge's session has sent, from its line: snd_nxt - isn. */
static long long sent(const char *edge)
{
	return (uint32_t)(num(edge, "snd_nxt") - num(edge, "isn"));
}

/* Phase 1: the receiver does not read; the pool fills. */
static int state_fill(int a, int b)
{
	struct ep_view va, vb, vr;
	struct dp_ep_stats sa, sb;
	long long c;
	int i, n_ok = 0;

	set_nonblock(a, 1);
	for (i = 0; i < 1000; i++) {
		fill(7, (uint32_t)n_ok, out, LEN);
		if (write(a, out, LEN) == LEN) {
			n_ok++;
			continue;
		}
		if (errno != EAGAIN)
			break;
		/* the credit is used up: no POLLOUT with everything acknowledged */
		if (n_ok && !(poll_out(a, 1000) & POLLOUT) && !dpt_stats(a, &sa) &&
		    !sa.tx_unacked)
			break;
		if (!n_ok)
			dpt_sleep_ms(5);
	}
	wait_acked(a, 10000);
	dpt_stats(a, &sa);
	dpt_stats(b, &sb);
	if (view(dpt.nsa, 407, dpt.nidb, 507, &va) || view(dpt.nsb, 507, dpt.nida, 407, &vb) ||
	    view(dpt.nsa, 408, dpt.nidb, 507, &vr))
		ktap_bail("state: dpctl ep");
	show("A", &va);
	show("B", &vb);
	show("raw", &vr);
	ktap_ok(is_word(vr.ep, "queued", "0") && strstr(vr.ep, " mode raw admit any") &&
		num(vr.edge, "tx_seq") == 0 && !strstr(vr.edge, " state "),
		"dpctl ep: the raw endpoint is \"mode raw\", its edge has no session");
	ktap_ok(strstr(va.ep, " mode reliable ") && strstr(vb.ep, " mode reliable "),
		"the others are \"mode reliable\"");
	c = num(va.edge, "credit_left");
	ktap_ok(n_ok > 0 && is_word(va.edge, "state", "open") && is_word(va.edge, "err", "none") &&
		sent(va.edge) == n_ok,
		"a receiver that does not read: the edge is open, err none, %lld sent (want %d)",
		sent(va.edge), n_ok);
	ktap_ok(c >= 0 && c < DP_TOKEN_SPACE(LEN),
		"its credit is used up: credit_left %lld (under one message, %u)", c,
		DP_TOKEN_SPACE(LEN));
	ktap_ok(num(va.edge, "unacked") == 0 && sa.tx_unacked == 0 &&
		num(va.edge, "snd_una") == num(va.edge, "snd_nxt") &&
		num(va.stats, "tx_unacked") == 0,
		"the receiver is alive: all acknowledged (edge unacked %lld, ioctl tx_unacked %llu)",
		num(va.edge, "unacked"), (unsigned long long)sa.tx_unacked);
	ktap_ok(num(va.stats, "tx_blocked") == (long long)sa.tx_blocked && sa.tx_blocked >= 1 &&
		num(va.stats, "tx_msgs") == (long long)sa.tx_msgs &&
		num(va.stats, "tx_undelivered") == (long long)sa.tx_undelivered,
		"the sender's counters are the ioctl's (tx_blocked %lld, %llu)",
		num(va.stats, "tx_blocked"), (unsigned long long)sa.tx_blocked);
	/* backoff: the window probes of the blocked sender back off too */
	ktap_ok(num(va.edge, "cwnd") > 0 && num(va.edge, "rto_ms") > 0 &&
		num(va.edge, "backoff") >= 0 && num(va.edge, "heard_ms") >= 0,
		"cwnd %lld, rto_ms %lld, backoff %lld, heard_ms %lld", num(va.edge, "cwnd"),
		num(va.edge, "rto_ms"), num(va.edge, "backoff"), num(va.edge, "heard_ms"));
	ktap_ok(num(vb.ep, "queued") == n_ok && num(vb.stats, "rx_msgs") == (long long)sb.rx_msgs &&
		sb.rx_msgs == (uint64_t)n_ok && num(vb.stats, "rx_drop_full") == 0,
		"the receiver holds %lld (ioctl rx_msgs %llu), rx_drop_full 0",
		num(vb.ep, "queued"), (unsigned long long)sb.rx_msgs);
	ktap_ok(vb.rx[0] && num(vb.rx, "isn") == num(va.edge, "isn") &&
		(uint32_t)(num(vb.rx, "rcv_nxt") - num(vb.rx, "isn")) == (uint32_t)n_ok &&
		num(vb.rx, "held") == 0 && num(vb.rx, "credit_left") == c,
		"its rx peer has the same session (isn), next seq isn + %d, nothing held, credit_left %lld",
		n_ok, num(vb.rx, "credit_left"));
	return n_ok;
}

/* Phase 2: the receiver reads, then stops hearing the sender. */
static void state_cut(int a, int b, int n_ok)
{
	struct ep_view va;
	struct dp_ep_stats sa;
	uint64_t retrans0;
	int i, ok = 1;

	for (i = 0; i < n_ok && ok; i++)
		ok = recv_is(b, 7, (uint32_t)i);
	/*
	 * A blocking write: if the sender gave its credit back meanwhile, it
	 * asks for a window first.  Once acknowledged, the session keeps its
	 * credit for credit_idle_ms.
	 */
	set_nonblock(a, 0);
	fill(7, (uint32_t)n_ok, out, LEN);
	ok = ok && write(a, out, LEN) == LEN && recv_is(b, 7, (uint32_t)n_ok);
	ktap_ok(ok, "the receiver reads all %d, then one more arrives", n_ok);
	n_ok++;
	if (!wait_acked(a, 10000) || b_hears_a(0))
		ktap_bail("state: its ACK, take A out of B's NART");
	dpt_stats(a, &sa);
	retrans0 = sa.tx_retrans;
	for (i = 0; i < 3 && ok; i++) {
		fill(7, (uint32_t)(n_ok + i), out, LEN);
		ok = write(a, out, LEN) == LEN;
	}
	/* retransmissions, unanswered: the first timeout (well within unreach_ms) */
	for (i = 0; i < 250 && !dpt_stats(a, &sa) && sa.tx_retrans == retrans0; i++)
		dpt_sleep_ms(20);
	dpt_stats(a, &sa);
	if (view(dpt.nsa, 407, dpt.nidb, 507, &va))
		ktap_bail("state: dpctl ep");
	show("A cut off", &va);
	ktap_ok(ok && is_word(va.edge, "state", "open") && num(va.edge, "unacked") == 3 &&
		sa.tx_unacked == 3 && num(va.stats, "tx_unacked") == 3 &&
		sent(va.edge) == n_ok + 3,
		"3 written to a receiver cut off: edge unacked %lld, ioctl tx_unacked %llu, sent %lld",
		num(va.edge, "unacked"), (unsigned long long)sa.tx_unacked, sent(va.edge));
	/* a real loss: timed out, and no report of a duplicate undid it */
	ktap_ok(num(va.edge, "backoff") >= 1 && num(va.stats, "tx_retrans") >= 1 &&
		num(va.edge, "timeouts") >= 1 && num(va.edge, "undone") == 0,
		"retransmitted with backoff %lld (tx_retrans %lld), timeouts %lld, undone %lld",
		num(va.edge, "backoff"), num(va.stats, "tx_retrans"), num(va.edge, "timeouts"),
		num(va.edge, "undone"));
}

/* Phase 3: the receiver restarts: the sender's edge fails. */
static void state_reset(int a, int *b, uint64_t undelivered0)
{
	struct ep_view va, vb;
	struct dp_ep_stats sa;
	int t;

	close(*b);
	*b = dpt_ep(dpt.nsb, 507, DP_POOL_MIN);
	if (*b < 0 || b_hears_a(1))
		ktap_bail("state: rebind, restore");
	ktap_ok(wait_err(a, 8000), "the receiver restarted: POLLERR");
	for (t = 0; t < 40; t++) {	/* the work frees the copies after the failure */
		if (view(dpt.nsa, 407, dpt.nidb, 507, &va))
			ktap_bail("state: dpctl ep");
		if (num(va.edge, "unacked") == 0)
			break;
		dpt_sleep_ms(50);
	}
	dpt_stats(a, &sa);
	show("A reset", &va);
	ktap_ok(is_word(va.edge, "state", "failed") && is_word(va.edge, "err", "ECONNRESET"),
		"dpctl ep: the edge is failed, err ECONNRESET");
	ktap_ok(num(va.edge, "unacked") == 0 && sa.tx_undelivered - undelivered0 == 3 &&
		num(va.stats, "tx_undelivered") == (long long)sa.tx_undelivered &&
		num(va.stats, "tx_unacked") == 0,
		"the 3 are tx_undelivered (+%llu, dpctl %lld), unacked %lld",
		(unsigned long long)(sa.tx_undelivered - undelivered0),
		num(va.stats, "tx_undelivered"), num(va.edge, "unacked"));
	if (view(dpt.nsb, 507, dpt.nida, 407, &vb))
		ktap_bail("state: dpctl ep B");
	ktap_ok(!vb.rx[0], "the new receiver has no session with the sender");
	KTAP_ERRNO(write(a, out, LEN), ECONNRESET, "the next write reports ECONNRESET");
	view(dpt.nsa, 407, dpt.nidb, 507, &va);
	ktap_ok(is_word(va.edge, "state", "idle") && is_word(va.edge, "err", "none"),
		"reported once: the edge is idle again, err none");
	fill(7, 1000, out, LEN);
	set_nonblock(a, 0);
	ktap_ok(write(a, out, LEN) == LEN && recv_is(*b, 7, 1000) &&
		!view(dpt.nsa, 407, dpt.nidb, 507, &va) &&
		!view(dpt.nsb, 507, dpt.nida, 407, &vb) && is_word(va.edge, "state", "open") &&
		sent(va.edge) == 1 && vb.rx[0] && num(vb.rx, "isn") == num(va.edge, "isn") &&
		(uint32_t)(num(vb.rx, "rcv_nxt") - num(vb.rx, "isn")) == 1,
		"a new session: open, 1 sent, the new receiver's rx peer has its isn");
}

static void t_state(void)
{
	struct dp_ep_stats sa;
	int a, b, r, n_ok;

	b = dpt_ep(dpt.nsb, 507, DP_POOL_MIN);
	a = dpt_ep(dpt.nsa, 407, 0);
	r = dpt_ep_flags(dpt.nsa, 408, 0, DP_BIND_RAW);
	if (a < 0 || b < 0 || r < 0 || dpt_connect(a, dpt.nidb, 507) ||
	    dpt_connect(r, dpt.nidb, 507))
		ktap_bail("state: endpoints");
	n_ok = state_fill(a, b);
	state_cut(a, b, n_ok);
	dpt_stats(a, &sa);
	state_reset(a, &b, sa.tx_undelivered);
	close(r);
	close(a);
	close(b);
}

#define SMALL	64

/*
 * The receiver frees less than the message a non-blocking writer waits
 * with: poll() must not report POLLOUT while that write still gets EAGAIN.
 * (The small grant used to be given back once the session idled, and
 * poll() said POLLOUT again after every probe's answer.)  Once the
 * receiver reads on, POLLOUT comes and the write goes through.
 */
static void t_partial(void)
{
	struct dp_ep_stats sa;
	int a, b, i, n = 0, t, lies = 0, outs = 0, sent = 0, got = 0, last = 0, idle;
	ssize_t r;

	b = dpt_ep(dpt.nsb, 508, DP_POOL_MIN);
	a = dpt_ep(dpt.nsa, 411, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 508))
		ktap_bail("partial: endpoints");
	set_nonblock(a, 1);
	/*
	 * Small messages until the credit is used up: the same message gets
	 * EAGAIN five times in a row with everything acknowledged (poll()
	 * alone cannot tell: it speaks for the largest message).
	 */
	for (i = 0, idle = 0; i < 4000 && idle < 5; i++) {
		fill(8, (uint32_t)n, out, SMALL);
		if (write(a, out, SMALL) == SMALL) {
			n++;
			idle = 0;
			continue;
		}
		last = errno;
		if (last != EAGAIN)
			break;
		poll_out(a, 200);
		if (n && !dpt_stats(a, &sa) && !sa.tx_unacked)
			idle++;
	}
	ktap_ok(n > 0 && last == EAGAIN && idle == 5,
		"%d messages of %d bytes use the receiver's credit up", n, SMALL);
	fill(9, 0, out, LEN);
	KTAP_ERRNO(write(a, out, LEN), EAGAIN, "a %d-byte message gets EAGAIN", LEN);
	r = read(b, in, sizeof(in));
	ktap_ok(r == SMALL, "the receiver reads one %d-byte message (%zd)", SMALL, r);
	/* 3 s of poll(): every POLLOUT must let the write through */
	for (t = 0; t < 3000 && !sent; t += 100) {
		if (!(poll_out(a, 100) & POLLOUT))
			continue;
		outs++;
		if (write(a, out, LEN) == LEN)
			sent = 1;
		else
			lies++;
	}
	ktap_ok(!lies, "poll() said POLLOUT %d times, a write then got EAGAIN %d times", outs,
		lies);
	/* the receiver reads on: the big message goes */
	for (i = 1; i < n; i++)
		got += dpt_wait_readable(b, DPT_WAIT_MS) == 1 && read(b, in, sizeof(in)) == SMALL;
	for (t = 0; t < 100 && !sent; t++)
		if ((poll_out(a, 100) & POLLOUT) && write(a, out, LEN) == LEN)
			sent = 1;
	ktap_ok(got == n - 1 && sent && recv_is(b, 9, 0),
		"the receiver reads the other %d, then POLLOUT and the %d-byte message arrives",
		got, LEN);
	close(a);
	close(b);
}

#define MANY	1000	/* edges: more than one netlink message holds */

/*
 * An endpoint with more edges than fit one dump message: dpctl ep still
 * shows it once, with every edge once, and the endpoint after it.
 */
static void t_many(void)
{
	static unsigned char seen[MANY];
	int a, z, i, heads = 0, edges = 0, dups = 0, after = 0, in = 0;
	char cmd[256], line[512];
	unsigned int nid, dpid;
	FILE *f;

	a = dpt_ep(dpt.nsa, 409, 0);
	z = dpt_ep(dpt.nsa, 410, 0);
	if (a < 0 || z < 0 || dpt_connect(z, dpt.nidb, 1))
		ktap_bail("many: endpoints");
	for (i = 0; i < MANY; i++)
		if (dpt_connect(a, dpt.nidb, 20000 + i))
			ktap_bail("many: connect");
	snprintf(cmd, sizeof(cmd), "%s netns exec %s dpctl ep", dpt_ip(), dpt.nsa);
	f = popen(cmd, "r");
	if (!f)
		ktap_bail("many: dpctl ep");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "dpid ", 5)) {
			in = !strncmp(line, "dpid 409 ", 9);
			heads += in;
			after += !strncmp(line, "dpid 410 ", 9);
		} else if (in && sscanf(line, "  edge nid %u dpid %u ", &nid, &dpid) == 2 &&
			   nid == dpt.nidb && dpid >= 20000 && dpid < 20000 + MANY) {
			edges++;
			dups += seen[dpid - 20000]++ > 0;
		}
	}
	ktap_ok(pclose(f) == 0 && heads == 1 && edges == MANY && !dups && after == 1,
		"dpctl ep: an endpoint with %d edges shows once (%d) with each edge once (%d, %d twice), then the next (%d)",
		MANY, heads, edges, dups, after);
	close(a);
	close(z);
}

/*
 * One idle pause past unreach_ms, then a write whose first answers are
 * lost (B does not hear A for a moment).  @probe: the session gave its
 * credit back while idle, so the write is a window probe (O_NONBLOCK:
 * EAGAIN until the answer); else the credit was kept and DATA goes.
 */
static void idle_case(int a, int b, uint32_t tag, int probe)
{
	struct dp_ep_stats sa0, sa;
	int ok, t, got = 0;
	short ev = 0;
	ssize_t r;

	fill(tag, 0, out, LEN);
	if (write(a, out, LEN) != LEN || !wait_acked(a, 10000) ||
	    !recv_is(b, tag, 0))
		ktap_bail("idle: the first message");
	dpt_stats(a, &sa0);
	dpt_sleep_ms(4000);		/* idle, past the 3 s bound */
	if (b_hears_a(0))
		ktap_bail("idle: take A out of B's NART");
	fill(tag, 1, out, LEN);
	if (probe) {
		set_nonblock(a, 1);
		KTAP_ERRNO(write(a, out, LEN), EAGAIN,
			   "credit given back while idle: the write asks for a window (EAGAIN)");
	} else {
		ktap_ok(write(a, out, LEN) == LEN, "the credit kept: the write is accepted");
	}
	dpt_sleep_ms(300);		/* its (re)transmissions go unanswered */
	if (b_hears_a(1))
		ktap_bail("idle: put A back");
	for (t = 0, ok = !probe; probe && t < 100 && !ok; t++) {
		ev = poll_out(a, 100);
		if (ev & POLLERR)
			break;
		ok = (ev & POLLOUT) && write(a, out, LEN) == LEN;
	}
	ok = ok && wait_acked(a, 10000);
	dpt_stats(a, &sa);
	ktap_ok(ok && !(poll_out(a, 0) & POLLERR) && sa.tx_undelivered == sa0.tx_undelivered,
		"%s: acknowledged, no error, tx_undelivered +%llu",
		probe ? "the probe answered after the gap, the message goes" :
			"the message is retransmitted after the gap",
		(unsigned long long)(sa.tx_undelivered - sa0.tx_undelivered));
	got = recv_is(b, tag, 1);
	set_nonblock(b, 1);
	r = read(b, in, sizeof(in));
	set_nonblock(b, 0);
	ktap_ok(got && r < 0 && errno == EAGAIN, "B gets the message once");
	set_nonblock(a, 0);
}

/* The peer's silence counts from the write after an idle pause. */
static void t_idle(void)
{
	int a, b;

	b = dpt_ep(dpt.nsb, 509, 0);
	a = dpt_ep(dpt.nsa, 412, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 509) || set_param("unreach_ms", 3000))
		ktap_bail("idle: endpoints");
	idle_case(a, b, 10, 0);
	if (set_param("credit_idle_ms", 100))
		ktap_bail("idle: credit_idle_ms");
	idle_case(a, b, 11, 1);
	set_param("credit_idle_ms", 600000);
	set_param("unreach_ms", 10000);
	close(a);
	close(b);
}

/*
 * poll() sleeping for POLLOUT on an edge whose credit left is below the
 * largest message must wake when the idle session gives its credit back.
 */
static void t_pollidle(void)
{
	int a, b, i, n, st, ok = 1;
	pid_t pid;
	short ev = 0;

	b = dpt_ep(dpt.nsb, 510, DP_POOL_MIN);
	a = dpt_ep(dpt.nsa, 413, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 510) || set_param("credit_idle_ms", 1500))
		ktap_bail("pollidle: endpoints");
	/*
	 * Messages (B does not read) until, with every one acknowledged, the
	 * credit left is under the largest message: poll() says no POLLOUT.
	 */
	for (n = 0; n < 100 && ok; n++) {
		ok = wait_acked(a, 10000);
		ev = poll_out(a, 0);
		if (!(ev & POLLOUT))
			break;
		fill(12, (uint32_t)n, out, LEN);
		ok = ok && write(a, out, LEN) == LEN;
	}
	ktap_ok(ok && n > 0 && !(ev & POLLOUT),
		"%d messages to a 16 KiB pool, all acknowledged: no POLLOUT (%#x)", n, ev);
	/*
	 * poll() without a timeout, in a child: it must be woken (a poll()
	 * with a timeout would see POLLOUT at its end even if nobody woke it).
	 */
	pid = dpt_fork();
	if (pid == 0)
		_exit(poll_out(a, -1) & POLLOUT ? 0 : 1);
	st = dpt_wait_child(pid, 30000);
	ktap_ok(st == 0,
		"idle 1.5 s, the session gives its credit back: poll() is woken with POLLOUT (%d)",
		st);
	for (i = 0; i < n && ok; i++)
		ok = recv_is(b, 12, (uint32_t)i);
	fill(12, (uint32_t)n, out, LEN);
	ktap_ok(ok && write(a, out, LEN) == LEN && recv_is(b, 12, (uint32_t)n),
		"B reads the %d; the next write asks for a window and delivers", n);
	set_param("credit_idle_ms", 600000);
	close(a);
	close(b);
}

/* B's rx_peer line for sender dpid on node A: its credit_left. */
static long long rx_credit(uint32_t bdpid, uint32_t adpid)
{
	struct ep_view v;

	if (view(dpt.nsb, bdpid, dpt.nida, adpid, &v) || !v.rx[0])
		return LLONG_MIN;
	return num(v.rx, "credit_left");
}

/*
 * A sender that vanished without a word (B did not hear its FIN) held
 * credit; silent past unreach_ms, it loses it to a sender that needs it.
 */
static void t_silent(void)
{
	long long held, left;
	int a1, a2, b, i, n, tries, ok = 1;

	b = dpt_ep(dpt.nsb, 511, 65536);
	a1 = dpt_ep(dpt.nsa, 414, 0);
	a2 = dpt_ep(dpt.nsa, 415, 0);
	if (a1 < 0 || a2 < 0 || b < 0 || dpt_connect(a1, dpt.nidb, 511) ||
	    dpt_connect(a2, dpt.nidb, 511) || set_param("unreach_ms", 1500))
		ktap_bail("silent: endpoints");
	fill(13, 0, out, LEN);
	if (write(a1, out, LEN) != LEN || !wait_acked(a1, 10000) ||
	    dpt_wait_readable(b, DPT_WAIT_MS) != 1 || read(b, in, sizeof(in)) != LEN)
		ktap_bail("silent: a1's first message");
	if (b_hears_a(0))
		ktap_bail("silent: take A out of B's NART");
	close(a1);			/* its FIN is lost */
	if (b_hears_a(1))
		ktap_bail("silent: put A back");
	held = rx_credit(511, 414);
	ktap_ok(held > 0, "the vanished sender's session still holds %lld bytes of credit", held);
	dpt_sleep_ms(2000);		/* silent past the bound */
	/*
	 * a2 uses its share up (B does not read): B is short and re-grants.
	 * Until the silent one's credit is taken back, 30 do not fit.
	 */
	set_nonblock(a2, 1);
	for (i = 0, tries = 0; i < 30 && tries < 50;) {
		fill(14, (uint32_t)i, out, LEN);
		if (write(a2, out, LEN) == LEN) {
			i++;
			continue;
		}
		if (errno != EAGAIN)
			break;
		tries++;
		poll_out(a2, 200);
	}
	n = i;
	ok = n == 30 && wait_acked(a2, 10000);
	for (i = 0, left = held; i < 50 && left != 0; i++) {
		dpt_sleep_ms(100);
		left = rx_credit(511, 414);
	}
	ktap_ok(ok && left == 0,
		"another sender writes 30 (%d): the silent one's credit is taken back (%lld left)",
		n, left);
	for (i = 0; i < 30 && ok; i++)
		ok = recv_is(b, 14, (uint32_t)i);
	ktap_ok(ok, "the other sender's 30 arrive in order (%d)", i);
	set_param("unreach_ms", 10000);
	close(a2);
	close(b);
}

#define RX_PEERS	1024	/* DP_MAX_RX_PEERS: sessions one endpoint keeps */

static void on_alarm(int sig)
{
	(void)sig;	/* only to interrupt a write */
}

/*
 * One byte on fd, a blocking write bounded by a 20 s alarm (a write that
 * never gets a window fails the test, it does not hang it): 1, or 0 with
 * errno (EINTR if the alarm ended it).
 */
static int send_byte(int fd)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	char c = 'x';
	ssize_t r;

	sigaction(SIGALRM, &sa, NULL);
	set_nonblock(fd, 0);
	alarm(20);
	r = write(fd, &c, 1);
	alarm(0);
	return r == 1;
}

/* Read what B has (one-byte messages); with @ms, wait that long for more. */
static int drain_bytes(int b, int want, int ms)
{
	int got = 0;

	while (got < want && dpt_wait_readable(b, got < want && ms ? ms : 0) == 1 &&
	       read(b, in, sizeof(in)) == 1)
		got++;
	return got;
}

/*
 * The sender DPIDs B's endpoint @bdpid has a session with, from dpctl ep,
 * marked in @seen (index dpid - 30000, up to RX_PEERS + 1); how many.
 */
static int rx_peers_of(uint32_t bdpid, unsigned char *seen)
{
	unsigned int nid, dpid;
	const char *p, *end;
	int in_ep = 0, n = 0;
	char head[32];

	memset(seen, 0, RX_PEERS + 1);
	if (dpctl_ep(dpt.nsb, ep_out, sizeof(ep_out)))
		return -1;
	snprintf(head, sizeof(head), "dpid %u ", bdpid);
	for (p = ep_out; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '\n');
		if (!strncmp(p, "dpid ", 5))
			in_ep = !strncmp(p, head, strlen(head));
		else if (in_ep && sscanf(p, "  rx_peer nid %u dpid %u ", &nid, &dpid) == 2 &&
			 nid == dpt.nida && dpid >= 30000 && dpid <= 30000 + RX_PEERS) {
			seen[dpid - 30000] = 1;
			n++;
		}
	}
	return n;
}

/* What both ends say of sender @dpid's session with B's endpoint 512. */
static void evict_diag(uint32_t dpid)
{
	char line[1024], pfx[64];

	if (!dpctl_ep(dpt.nsa, ep_out, sizeof(ep_out))) {
		snprintf(pfx, sizeof(pfx), "edge nid %u dpid 512 ", dpt.nidb);
		ep_line(ep_out, dpid, pfx, line, sizeof(line));
		ktap_diag("sender %u: %s", dpid, line);
	}
	if (!dpctl_ep(dpt.nsb, ep_out, sizeof(ep_out))) {
		ep_line(ep_out, 512, "dpid", line, sizeof(line));
		ktap_diag("B: %s", line);
		snprintf(pfx, sizeof(pfx), "rx_peer nid %u dpid %u ", dpt.nida, dpid);
		ep_line(ep_out, 512, pfx, line, sizeof(line));
		ktap_diag("B: %s", line);
	}
	ktap_diag("B: rx_drop_nomem %llu rx_drop_full %llu",
		  (unsigned long long)dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_NOMEM),
		  (unsigned long long)dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_FULL));
}

/*
 * Every one of RX_PEERS senders wrote a byte and went quiet: one more
 * sender still gets a session, and the one forgotten for it learns so
 * (ECONNRESET) on its next write, once.
 */
static void t_evict(void)
{
	static unsigned char seen[RX_PEERS + 1];
	static int fd[RX_PEERS + 1];
	struct rlimit rl = { 4096, 4096 };
	uint64_t nomem0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_NOMEM);
	int b, i, n = 0, got = 0, gone = -1, missing = 0, peers, err = 0;

	if (setrlimit(RLIMIT_NOFILE, &rl) || set_param("uid_max_endpoints", 0) ||
	    set_param("unreach_ms", 1500) || set_param("credit_idle_ms", 100))
		ktap_bail("evict: limits");
	b = dpt_ep(dpt.nsb, 512, 0);
	if (b < 0)
		ktap_bail("evict: receiver");
	for (i = 0; i <= RX_PEERS; i++) {
		fd[i] = dpt_ep(dpt.nsa, 30000 + (uint32_t)i, DP_POOL_MIN);
		if (fd[i] < 0 || dpt_connect(fd[i], dpt.nidb, 512))
			ktap_bail("evict: a sender");
	}
	for (i = 0; i < RX_PEERS && !err; i++) {
		if (send_byte(fd[i]))
			n++;
		else
			err = errno;
		got += drain_bytes(b, RX_PEERS, 0);
	}
	if (err)
		evict_diag(30000 + (uint32_t)i - 1);
	got += drain_bytes(b, n - got, DPT_WAIT_MS);
	ktap_ok(n == RX_PEERS && got == n, "%d senders each deliver a byte (%d arrive; %s)", n,
		got, err ? strerror(err) : "no error");
	dpt_sleep_ms(2500);		/* all silent past the 1.5 s bound */
	ktap_ok(send_byte(fd[RX_PEERS]) && drain_bytes(b, 1, DPT_WAIT_MS) == 1,
		"sender %d gets a session and delivers", RX_PEERS + 1);
	ktap_ok(dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_NOMEM) == nomem0,
		"no HELLO dropped for lack of room (rx_drop_nomem)");
	peers = rx_peers_of(512, seen);
	for (i = 0; i < RX_PEERS; i++) {
		if (!seen[i]) {
			missing++;
			gone = i;
		}
	}
	ktap_ok(peers == RX_PEERS && missing == 1 && seen[RX_PEERS],
		"B keeps %d sessions: the newcomer's, and all old senders' but %d", peers,
		missing);
	if (gone < 0)
		ktap_bail("evict: no sender was forgotten");
	i = send_byte(fd[gone]);
	ktap_ok(!i && errno == ECONNRESET, "the forgotten sender's next write: ECONNRESET (%s)",
		i ? "sent" : strerror(errno));
	ktap_ok(send_byte(fd[gone]) && drain_bytes(b, 1, DPT_WAIT_MS) == 1,
		"its write after that opens a new session and delivers");
	for (i = 0; i <= RX_PEERS; i++)
		close(fd[i]);
	close(b);
	set_param("uid_max_endpoints", 1024);
	set_param("unreach_ms", 10000);
	set_param("credit_idle_ms", 600000);
}

int main(void)
{
	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	t_block();
	t_refused();
	t_busy();
	/*
	 * The next tests pause a sender and then write to a node that stopped
	 * answering: an idle sender would have given its credit back and
	 * could then only wait for a window (also ETIMEDOUT, but no message
	 * would be in flight).  Keep the credit for them.
	 */
	if (set_param("credit_idle_ms", 600000))
		ktap_bail("set credit_idle_ms");
	t_timeout();
	t_restart();
	t_close();
	t_state();
	t_partial();
	t_many();
	t_idle();
	t_pollidle();
	t_silent();
	t_evict();
	set_param("credit_idle_ms", 100);
	ktap_finish();
}
