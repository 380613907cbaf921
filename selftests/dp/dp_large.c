// SPDX-License-Identifier: GPL-2.0
/*
 * Large messages (docs/reliability.md, "Large messages"): a message longer
 * than a frame goes as fragments and lands in the receiver's pool as one
 * token holding it whole and contiguous.  Every byte of every message is
 * checked: byte k of message i is a hash of (tag, i, k), so a fragment
 * lost, repeated, misplaced or taken from another message shows.
 *
 *  limit   once the session is open, dp_info.max_msg is the receiver's
 *          limit: at least 1 MiB for a 4 MiB pool, at most half of it; a
 *          message of exactly max_msg goes and arrives intact, max_msg + 1
 *          and the pool's own size get EMSGSIZE and send nothing
 *  small   a receiver with a 64 KiB pool: its sender's max_msg is under
 *          32 KiB, 1 MiB gets EMSGSIZE, max_msg goes
 *  random  seeded random sizes from 1 byte to 1 MiB (the seed is printed;
 *          DPT_LARGE_SEED repeats a run, DPT_LARGE_KB sets the total,
 *          3 MiB), with the fragment edges (1, frame, frame + 1, 2 frames
 *          - 4, - 3, 1 MiB) first: all arrive once, in order, intact, each
 *          one contiguous inside the mapped pool
 *  faults  the random stream again (2 MiB, DPT_LARGE_FAULT_KB) under netem
 *          on both veths: loss 5%, duplication 2%, reordering 5%,
 *          corruption 1%; all arrive intact, with retransmissions (netdev
 *          backend only: dp's tulip and myri drivers bypass the qdisc,
 *          run_rel.sh's rel_large puts the relay's faults under the tulip)
 *  stall   the receiver does not read: the sender of 2.4 MiB into a 2 MiB
 *          pool stays blocked in write(), nothing is dropped (rx_drop_full
 *          0); when the receiver reads, everything arrives
 *  kill    a sender killed mid-message (its write() waits on a page fault
 *          halfway through a 1 MiB buffer, after its first half went out):
 *          the receiver never sees a partial message, counts the aborted
 *          one in rx_drop_seq, then gets a new sender's messages intact,
 *          and its pool has room again for a message of max_msg
 *  hol     a writer whose copy hangs mid-message (userfaultfd) does not
 *          hold another user's messages to the same endpoint back for
 *          longer than about unreach_ms, even with room in the pool: they
 *          arrive while it still hangs; the hung write then fails with
 *          ECONNRESET (t_hol())
 *  mixed   a sender of large messages and one of small messages to the
 *          same endpoint at once: each sender's messages arrive in its
 *          order, intact
 *
 * Each part prints the time it took (not asserted); DPT_LARGE_PARTS (e.g.
 * "random,kill") runs only those after limit.  Across two guests,
 * run_rel.sh uses the same messages under the relay's faults:
 *   dp_large recv DPID KB POOL [N]    (prints "ready" once bound)
 *   dp_large send NID DPID SEED KB [N]
 * KB is the stream's bytes in KiB (0: no limit), N its most messages
 * (MAX_MSGS); the stream ends at whichever comes first.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"

#define MIB		(1u << 20)
#define POOL_BIG	(4u * MIB)
#define POOL_STALL	(2u * MIB)
#define POOL_SMALL	(64u * 1024)
#define MAX_MSGS	16384
#define STALL_LEN	(400u * 1024)
#define STALL_N		6

static int wait_ms = DPT_WAIT_MS;	/* for one message to come */
static pid_t sender;	/* if not 0: stop waiting once it failed */
static uint8_t *want;	/* expected bytes of the message being checked */
static uint8_t *out;	/* bytes being sent */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Message @i of stream @tag, @len bytes, into @m. */
static void fill(uint32_t tag, uint32_t i, uint8_t *m, size_t len)
{
	uint32_t base = mix(tag * 0x9e3779b1u ^ mix(i + 1));
	size_t k, w;

	for (k = 0; k < len; k += 4) {
		uint32_t v = mix(base + (uint32_t)(k >> 2));

		for (w = 0; w < 4 && k + w < len; w++)
			m[k + w] = (uint8_t)(v >> (8 * w));
	}
}

/* Seeded sizes: first the edges, then log-uniform random ones. */
struct gen {
	uint64_t s;
	uint32_t n, len[MAX_MSGS];
	uint64_t total;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * At most msg_cap messages (MAX_MSGS unless the peer form's N sets it);
 * a budget of 0 bytes is no budget: then msg_cap alone ends the stream.
 */
static uint32_t msg_cap = MAX_MSGS;

static void gen_sizes(struct gen *g, uint64_t seed, uint32_t frame, uint64_t budget)
{
	const uint32_t edges[] = { 1, frame, frame + 1, 2 * frame - 4, 2 * frame - 3, MIB };
	size_t e;

	g->s = seed ? seed : 1;
	g->n = 0;
	g->total = 0;
	for (e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
		g->len[g->n++] = edges[e];
		g->total += edges[e];
	}
	if (!budget)
		budget = UINT64_MAX;
	while (g->total < budget && g->n < msg_cap) {
		uint32_t bits = (uint32_t)(rnd(&g->s) % 21);	/* 2^0 .. 2^20 */
		uint32_t len = 1 + (uint32_t)(rnd(&g->s) % (1ull << bits));

		if (len > MIB)
			len = MIB;
		g->len[g->n++] = len;
		g->total += len;
	}
}

static pid_t main_pid;	/* the process that keeps the KTAP results */

/* Write message i of tag (len bytes); 0 or the errno. */
static int send_now(int fd, uint32_t tag, uint32_t i, uint32_t len)
{
	ssize_t r;

	fill(tag, i, out, len);
	r = write(fd, out, len);
	if (r == (ssize_t)len)
		return 0;
	return r < 0 ? errno : EIO;
}

/*
 * send_now(), but the main process's blocking writes of large messages go
 * from a child it waits for at most SEND_MS: a write that never gets its
 * credit fails the check that made it (ETIMEDOUT) instead of hanging the
 * test until the runner kills it and its kept results with it.
 */
#define SEND_MS	60000
static int send_msg(int fd, uint32_t tag, uint32_t i, uint32_t len)
{
	pid_t pid;
	int st;

	if (getpid() != main_pid || len <= 65536)
		return send_now(fd, tag, i, len);
	pid = dpt_fork();
	if (pid == 0)
		_exit(send_now(fd, tag, i, len));
	st = dpt_wait_child(pid, SEND_MS);
	if (st == -1) {
		ktap_diag("a write of %u bytes still waited after %d s: killed", len,
			  SEND_MS / 1000);
		return ETIMEDOUT;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

/*
 * After the first message of a session was written: wait (bounded) until
 * the edge's max_msg says the session is open beyond the frame limit.
 */
static uint32_t wait_max_msg(int fd, uint32_t need)
{
	struct dp_info info;
	int i;

	for (i = 0; i < DPT_WAIT_MS / 10; i++) {
		if (dpt_info(fd, &info))
			return 0;
		if (info.max_msg >= need)
			break;
		dpt_sleep_ms(10);
	}
	return info.max_msg;
}

/* Whether the sender child exited with a failure (not reaped here). */
static int sender_failed(void)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (!sender || waitid(P_PID, (id_t)sender, &si, WEXITED | WNOHANG | WNOWAIT) ||
	    si.si_pid != sender)
		return 0;
	return si.si_code != CLD_EXITED || si.si_status != 0;
}

/*
 * Why next_msg() found no message: what dp_read() said, how long it
 * looked, how often poll() said readable while dp_read() found the pool
 * empty, what the pool's page shows (its counters and head token), and
 * both nodes' sessions.
 */
static void why_none(int fd, ssize_t n, int e, int polls, int empty, double secs)
{
	const struct dp_token *t;
	uint64_t cons, prod;
	dp_mmap_t m;

	ktap_diag("no message: dp_read %zd (%s), %d polls in %.2f s (%d readable but empty), sender %s",
		  n, n < 0 ? strerror(e) : "empty", polls, secs, empty,
		  sender_failed() ? "failed" : "not failed");
	if (dp_mmap(fd, &m))
		return;
	cons = __atomic_load_n(&m.ctrl->cons, __ATOMIC_ACQUIRE);
	prod = __atomic_load_n(&m.ctrl->prod, __ATOMIC_ACQUIRE);
	t = (const struct dp_token *)(m.data + (cons & (m.data_size - 1)));
	ktap_diag("pool: cons %llu prod %llu (of %u): head token len %u flags %#x next %u",
		  (unsigned long long)cons, (unsigned long long)prod, m.data_size,
		  t->len, t->flags, t->next);
	dpt_show_sessions();
}

/*
 * The next message in fd's pool, within wait_ms of the clock (less if the
 * sender failed): its length, address and token; -1 if none came (or the
 * pool is inconsistent).  The bound is the clock's, not a count of polls:
 * a poll() that says readable returns at once.
 */
static ssize_t next_msg(int fd, char **addr, const struct dp_token **tok)
{
	double t0 = now_s(), end = t0 + wait_ms / 1000.0;
	int polls = 0, empty = 0, readable = 0, e;
	ssize_t n;

	for (;;) {
		n = dp_read(fd, addr);
		if (n != 0 || now_s() > end)
			break;
		empty += readable;
		readable = dpt_wait_readable(fd, 2) == 1;
		if (++polls % 100 == 0 && sender_failed())
			break;
	}
	e = errno;
	if (n <= 0) {
		why_none(fd, n, e, polls, empty, now_s() - t0);
		return -1;
	}
	*tok = dp_token_of(fd, *addr);
	return *tok ? n : -1;
}

/*
 * Check that the next message of fd is message i of tag, len bytes, whole
 * and inside the pool's data area; release it.  1 if so; else a diagnostic.
 */
static int recv_check(int fd, uint32_t tag, uint32_t i, uint32_t len)
{
	const struct dp_token *t;
	dp_mmap_t tbp;
	char *addr;
	ssize_t n = next_msg(fd, &addr, &t);
	int ok;

	if (n < 0) {
		ktap_diag("message %u of %u: none (%zd)", i, tag, n);
		return 0;
	}
	if (dp_mmap(fd, &tbp))
		return 0;
	fill(tag, i, want, len);
	ok = (size_t)n == len && !(t->flags & DP_TOK_SKIP) &&
	     (const uint8_t *)addr >= (const uint8_t *)tbp.data &&
	     (const uint8_t *)addr + n <= (const uint8_t *)tbp.data + tbp.data_size &&
	     !memcmp(addr, want, len);
	if (!ok) {
		size_t k = 0;

		while ((size_t)n == len && k < len && (uint8_t)addr[k] == want[k])
			k++;
		ktap_diag("message %u of %u: %zd bytes, %u wanted, first bad byte at %zu", i, tag,
			  n, len, k);
	}
	dp_fsync(fd, 1);
	return ok;
}

/* Nothing readable on fd for ms. */
static int quiet(int fd, int ms)
{
	char *addr;

	dpt_sleep_ms(ms);
	return dp_read(fd, &addr) == 0;
}

static uint64_t budget_bytes(void)
{
	const char *kb = getenv("DPT_LARGE_KB");

	return (kb && *kb ? strtoull(kb, NULL, 0) : 3072) * 1024;
}

/* fd's messages given up so far (tx_undelivered), UINT64_MAX if unknown. */
static uint64_t undelivered(int fd)
{
	struct dp_ep_stats st;

	return dpt_stats(fd, &st) ? UINT64_MAX : st.tx_undelivered;
}

/*
 * Wait (up to a minute) until everything fd sent is acknowledged: a sender
 * that exits closes its endpoint, and a close gives up what is not
 * (tx_undelivered), as it must.  A failed session also leaves nothing
 * unacknowledged, having given its messages up: unless @undel0 is
 * UINT64_MAX, none may have been given up since it was read
 * (undelivered()).  0 once drained, else 1.
 */
static int drain(int fd, uint64_t undel0)
{
	struct dp_ep_stats st;

	if (dpt_wait_acked(fd, 60000, &st)) {
		ktap_diag("still %llu unacknowledged after 60 s",
			  (unsigned long long)st.tx_unacked);
		return 1;
	}
	if (undel0 == UINT64_MAX || st.tx_undelivered == undel0)
		return 0;
	ktap_diag("%llu messages given up, not delivered (tx_undelivered)",
		  (unsigned long long)(st.tx_undelivered - undel0));
	return 1;
}

/*
 * A stream of seeded sizes on fd's current edge.  Message 0 is 12 bytes,
 * the frame limit of the link (@frame, or if 0 max_msg now, before the
 * session opens: a new endpoint's first message) and the
 * seed, from which the receiver derives the same sizes; then gen_sizes()'s
 * messages.
 * 0 if all were written, else 1 with a diagnostic.
 */
static int stream_send(int fd, uint32_t tag, uint64_t seed, uint64_t budget, uint32_t frame)
{
	static struct gen g;
	struct dp_info info;
	uint64_t undel0;
	uint32_t i;
	int e;

	if (!frame && dpt_info(fd, &info))
		return 1;
	if (!frame)
		frame = info.max_msg;
	memcpy(out, &frame, 4);
	memcpy(out + 4, &seed, 8);
	if (write(fd, out, 12) != 12) {
		ktap_diag("stream: first message: %s", strerror(errno));
		return 1;
	}
	gen_sizes(&g, seed, frame, budget);
	ktap_diag("stream: frame %u, max_msg %u once open, %u messages, %llu bytes", frame,
		  wait_max_msg(fd, MIB), g.n, (unsigned long long)g.total);
	undel0 = undelivered(fd);
	for (i = 0; i < g.n; i++) {
		e = send_msg(fd, tag, i + 1, g.len[i]);
		if (e) {
			ktap_diag("stream: message %u (%u bytes): %s", i + 1, g.len[i], strerror(e));
			return 1;
		}
	}
	return drain(fd, undel0);
}

/* The receiving side: the number of messages that arrived intact, in order. */
static uint32_t stream_recv(int fd, uint32_t tag, uint64_t budget, uint32_t *n)
{
	static struct gen g;
	const struct dp_token *t;
	uint32_t frame = 0, i;
	uint64_t seed;
	char *addr;

	*n = 0;
	if (next_msg(fd, &addr, &t) != 12) {
		ktap_diag("stream: no first message");
		return 0;
	}
	memcpy(&frame, addr, 4);
	memcpy(&seed, addr + 4, 8);
	dp_fsync(fd, 1);
	if (frame < 64 || frame > 65536) {
		ktap_diag("stream: frame %u?", frame);
		return 0;
	}
	gen_sizes(&g, seed, frame, budget);
	ktap_diag("stream: seed %llu, frame %u: %u messages, %llu bytes", (unsigned long long)seed,
		  frame, g.n, (unsigned long long)g.total);
	*n = g.n;
	for (i = 0; i < g.n; i++)
		if (!recv_check(fd, tag, i + 1, g.len[i]))
			break;
	return i;
}

static uint64_t ctr_b(unsigned int c)
{
	return dpt_ctr(dpt.nsb, c);
}

static uint64_t tx_msgs(int fd)
{
	struct dp_ep_stats st;

	return dpt_stats(fd, &st) ? UINT64_MAX : st.tx_msgs;
}

/* limit: returns the frame limit (max_msg before the session opened). */
static uint32_t t_limit(int a, int b)
{
	struct dp_info info;
	uint32_t frame, m;
	uint64_t tx0;
	int e1, e2;

	if (dpt_info(a, &info))
		ktap_bail("DP_IOC_INFO");
	frame = info.max_msg;
	ktap_ok(send_msg(a, 1, 0, 1) == 0 && recv_check(b, 1, 0, 1),
		"limit: a first small message opens the session (frame limit before: %u)", frame);
	m = wait_max_msg(a, MIB);
	ktap_ok(m >= MIB && m <= POOL_BIG / 2 && m > frame,
		"limit: max_msg %u for a 4 MiB pool: at least 1 MiB, at most half the pool", m);
	ktap_ok(send_msg(a, 1, 1, m) == 0 && recv_check(b, 1, 1, m),
		"limit: a message of exactly max_msg (%u) goes and arrives intact", m);
	tx0 = tx_msgs(a);
	e1 = send_msg(a, 1, 2, m + 1);
	e2 = send_msg(a, 1, 2, POOL_BIG);
	ktap_ok(e1 == EMSGSIZE, "limit: max_msg + 1 gets EMSGSIZE (%s)", strerror(e1));
	ktap_ok(e2 == EMSGSIZE, "limit: the pool's size (4 MiB) gets EMSGSIZE (%s)",
		strerror(e2));
	ktap_ok(tx_msgs(a) == tx0 && quiet(b, 300),
		"limit: nothing was sent for them (tx_msgs %llu -> %llu)",
		(unsigned long long)tx0, (unsigned long long)tx_msgs(a));
	ktap_ok(send_msg(a, 1, 3, 100) == 0 && recv_check(b, 1, 3, 100),
		"limit: the edge works on");
	return frame;
}

/* small: a 64 KiB pool takes no 1 MiB message. */
static void t_small(uint32_t frame)
{
	int a = dpt_ep(dpt.nsa, 102, 0), b = dpt_ep(dpt.nsb, 202, POOL_SMALL);
	uint32_t m;
	int e;

	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 202))
		ktap_bail("small: endpoints");
	ktap_ok(send_msg(a, 2, 0, 1) == 0 && recv_check(b, 2, 0, 1), "small: session open");
	m = wait_max_msg(a, frame + 1);
	ktap_ok(m > frame && m < POOL_SMALL / 2,
		"small: max_msg %u for a 64 KiB pool: above a frame (%u), under half the pool", m,
		frame);
	e = send_msg(a, 2, 1, MIB);
	ktap_ok(e == EMSGSIZE, "small: 1 MiB, larger than the pool allows: EMSGSIZE (%s)",
		strerror(e));
	ktap_ok(send_msg(a, 2, 2, m) == 0 && recv_check(b, 2, 2, m) && quiet(b, 200),
		"small: max_msg goes, intact, and nothing else came");
	dp_close(a);
	dp_close(b);
}

/*
 * The seeded stream from a (a child sends) to b (checked here): how many
 * arrived intact and in order, of *@n; *@st is the sender's status.
 */
static uint32_t stream_pair(int a, int b, uint32_t tag, uint64_t seed, uint64_t budget,
			    uint32_t frame, uint32_t *n, int *st)
{
	pid_t pid = dpt_fork();
	uint32_t got;

	if (pid == 0)
		_exit(stream_send(a, tag, seed, budget, frame));
	sender = pid;
	got = stream_recv(b, tag, budget, n);
	sender = 0;
	*st = dpt_wait_child(pid, got == *n ? wait_ms : DPT_WAIT_MS);
	return got;
}

static uint64_t t_random(int a, int b, uint32_t frame)
{
	const char *env = getenv("DPT_LARGE_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ getpid();
	uint64_t budget = budget_bytes(), full0 = ctr_b(DP_CTR_RX_DROP_FULL);
	uint64_t len0 = ctr_b(DP_CTR_RX_DROP_LEN), big0 = ctr_b(DP_CTR_RX_DROP_TOO_BIG);
	uint32_t got, n;
	int st;

	ktap_diag("random: seed %llu (DPT_LARGE_SEED=%llu repeats it), %llu KiB",
		  (unsigned long long)seed, (unsigned long long)seed,
		  (unsigned long long)(budget / 1024));
	got = stream_pair(a, b, 3, seed, budget, frame, &n, &st);
	ktap_ok(n && got == n && st == 0,
		"random: %u of %u messages of 1 B to 1 MiB arrive once, in order, every byte right, each contiguous in the pool (sender status %#x)",
		got, n, st);
	ktap_ok(quiet(b, 200), "random: nothing more arrives");
	ktap_ok(ctr_b(DP_CTR_RX_DROP_FULL) == full0 && ctr_b(DP_CTR_RX_DROP_LEN) == len0 &&
		ctr_b(DP_CTR_RX_DROP_TOO_BIG) == big0,
		"random: no drop for room, length or size on the receiving node");
	return seed;
}

/* netem on both ends of the veth pair (tc in each node's namespace), or off. */
static int netem(int on)
{
	const char *ns[2] = { dpt.nsa, dpt.nsb }, *dev[2] = { dpt.ifa, dpt.ifb };
	int i, r = 0;

	for (i = 0; i < 2; i++) {
		if (on)
			r |= dpt_sh("%s netns exec %s tc qdisc add dev %s root netem delay 1ms reorder 95%% loss 5%% duplicate 2%% corrupt 1%%",
				    dpt_ip(), ns[i], dev[i]);
		else
			r |= dpt_sh("%s netns exec %s tc qdisc del dev %s root 2>/dev/null", dpt_ip(),
				    ns[i], dev[i]);
	}
	return r;
}

/*
 * faults: the random stream again, under netem's faults on the veth pair:
 * 5% loss, 2% duplication, 5% reordering (held back 1 ms while the rest
 * go at once), 1% corruption, both ways (data and acknowledgements).
 */
static void t_faults(uint64_t seed, uint32_t frame)
{
	int a = dpt_ep(dpt.nsa, 107, 0), b = dpt_ep(dpt.nsb, 207, POOL_BIG);
	const char *kb = getenv("DPT_LARGE_FAULT_KB");
	uint64_t budget = (kb && *kb ? strtoull(kb, NULL, 0) : 2048) * 1024;
	uint64_t retr0 = dpt_ctr(dpt.nsa, DP_CTR_TX_RETRANS), retr;
	uint32_t got, n;
	int st, on;

	if (strcmp(dpt.backend, "netdev")) {
		ktap_skip("dp's own NIC driver bypasses the qdisc, so netem cannot touch its frames",
			  "faults: under netem, all arrive intact");
		return;
	}
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 207))
		ktap_bail("faults: endpoints");
	on = !netem(1);
	ktap_ok(on, "faults: netem loss 5%%, duplicate 2%%, reorder 5%%, corrupt 1%% on both veths");
	wait_ms = 60000;
	got = stream_pair(a, b, 10, seed, budget, frame, &n, &st);
	netem(0);
	wait_ms = DPT_WAIT_MS;
	retr = dpt_ctr(dpt.nsa, DP_CTR_TX_RETRANS);
	ktap_ok(on && n && got == n && st == 0,
		"faults: under netem, all %u of %u messages (seed %llu, %llu KiB) arrive once, in order, every byte right (sender %#x)",
		got, n, (unsigned long long)seed, (unsigned long long)(budget / 1024), st);
	ktap_ok(retr != UINT64_MAX && retr > retr0,
		"faults: lost fragments were sent again (tx_retrans +%llu)",
		(unsigned long long)(retr - retr0));
	ktap_ok(quiet(b, 200), "faults: nothing more arrives");
	dp_close(a);
	dp_close(b);
}

static void t_stall(void)
{
	static const long writes[] = { SYS_write };
	int a = dpt_ep(dpt.nsa, 103, 0), b = dpt_ep(dpt.nsb, 203, POOL_STALL);
	uint64_t full0 = ctr_b(DP_CTR_RX_DROP_FULL);
	volatile int *done;
	char what[96];
	int blocked, st, ok, i;
	pid_t pid;

	done = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 203) || done == MAP_FAILED)
		ktap_bail("stall: endpoints");
	ktap_ok(send_msg(a, 4, 0, 1) == 0 && recv_check(b, 4, 0, 1), "stall: session open");
	wait_max_msg(a, STALL_LEN);
	pid = dpt_fork();
	if (pid == 0) {
		uint64_t undel0 = undelivered(a);

		for (i = 1; i <= STALL_N; i++) {
			if (send_msg(a, 4, (uint32_t)i, STALL_LEN))
				_exit(1);
			__atomic_store_n(done, i, __ATOMIC_RELEASE);
		}
		_exit(drain(a, undel0));
	}
	blocked = dpt_wait_blocked(pid, writes, 1, DPT_WAIT_MS, what, sizeof(what));
	dpt_sleep_ms(500);
	blocked = blocked && dpt_wait_blocked(pid, writes, 1, DPT_WAIT_MS, what, sizeof(what));
	ktap_ok(blocked && *done < STALL_N,
		"stall: %u x %u KiB into a 2 MiB pool nobody reads: the sender waits in write() after %d (%s)",
		STALL_N, STALL_LEN / 1024, *done, what);
	ktap_ok(ctr_b(DP_CTR_RX_DROP_FULL) == full0, "stall: nothing dropped for room");
	sender = pid;
	for (i = 1, ok = 1; i <= STALL_N && ok; i++)
		ok = recv_check(b, 4, (uint32_t)i, STALL_LEN);
	sender = 0;
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(ok && st == 0, "stall: the receiver reads: all %u arrive intact, the sender ends (%#x)",
		STALL_N, st);
	munmap((void *)done, 4096);
	dp_close(a);
	dp_close(b);
}

/*
 * 1 MiB whose first half is message @i of @tag and whose second half is a
 * userfaultfd region of @uffd nobody serves (yet): a write() of it copies
 * the first half, then waits on a page fault.  *@range: the second half.
 * The buffer, or exits the child with 3.
 */
static uint8_t *uffd_half(int uffd, uint32_t tag, uint32_t i, struct uffdio_range *range)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	uint8_t *buf;

	buf = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) || buf == MAP_FAILED)
		_exit(3);
	reg.range.start = (unsigned long)buf + MIB / 2;
	reg.range.len = MIB / 2;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		_exit(3);
	fill(tag, i, buf, MIB / 2);
	*range = reg.range;
	return buf;
}

/* Wait (bounded) until a thread faults on @uffd's region. */
static int uffd_faulted(int uffd)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };

	return poll(&p, 1, DPT_WAIT_MS) == 1;
}

/* Whether this kernel has userfaultfd; if not, @what is skipped. */
static int have_uffd(const char *what)
{
	int probe = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (probe < 0 && errno == ENOSYS) {
		ktap_skip("no userfaultfd in this kernel (CONFIG_USERFAULTFD)", "%s", what);
		return 0;
	}
	if (probe >= 0)
		close(probe);
	return 1;
}

/* Whether the byte @want comes on pipe @fd within DPT_WAIT_MS. */
static int pipe_says(int fd, char want)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	return poll(&p, 1, DPT_WAIT_MS) == 1 && read(fd, &c, 1) == 1 && c == want;
}

static void t_kill_uffd(int b);

/* kill: the child's writer thread and what it writes */
static int k_fd;
static uint8_t *k_buf;

static void *k_writer(void *arg)
{
	(void)arg;
	if (write(k_fd, k_buf, MIB) < 0)
		ktap_diag("kill: write: %s", strerror(errno));
	return NULL;
}

/*
 * The sender to be killed: its own endpoint (dpid 104, nobody else holds
 * it), a small message, then 1 MiB whose second half is a userfaultfd
 * region nobody serves.  Tells @pfd once the fault is pending.
 */
static void k_child(int pfd)
{
	struct uffdio_range range;
	pthread_t th;
	int uffd;

	k_fd = dpt_ep(dpt.nsa, 104, 0);
	if (k_fd < 0 || dpt_connect(k_fd, dpt.nidb, 208) || send_msg(k_fd, 5, 0, 1))
		_exit(2);
	wait_max_msg(k_fd, MIB);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	k_buf = uffd_half(uffd, 5, 1, &range);
	if (pthread_create(&th, NULL, k_writer, NULL))
		_exit(4);
	if (!uffd_faulted(uffd))
		_exit(5);
	if (write(pfd, "F", 1) != 1)
		_exit(6);
	for (;;)
		pause();
}

static void t_kill(void)
{
	int b;

	if (!have_uffd("kill: a sender killed mid-message"))
		return;
	b = dpt_ep(dpt.nsb, 208, POOL_BIG);
	if (b < 0)
		ktap_bail("kill: endpoint");
	t_kill_uffd(b);
	dp_close(b);
}

static void t_kill_uffd(int b)
{
	uint64_t seq0 = ctr_b(DP_CTR_RX_DROP_SEQ), seq;
	struct dp_ep_stats st;
	int pfd[2], a, ok, s;
	uint32_t m;
	pid_t pid;

	if (pipe(pfd))
		ktap_bail("kill: pipe");
	pid = dpt_fork();
	if (pid == 0) {
		close(pfd[0]);
		k_child(pfd[1]);
	}
	close(pfd[1]);
	ok = recv_check(b, 5, 0, 1) && pipe_says(pfd[0], 'F');
	ktap_ok(ok, "kill: the sender's 1 MiB write() waits on a fault in its second half");
	dpt_sleep_ms(500);	/* for the first half's fragments to land */
	ktap_ok(quiet(b, 0), "kill: meanwhile the receiver sees no part of it");
	kill(pid, SIGKILL);
	s = dpt_wait_child(pid, DPT_WAIT_MS);
	ktap_ok(WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL, "kill: the sender is killed (%#x)", s);
	close(pfd[0]);

	a = dpt_ep(dpt.nsa, 104, 0);
	if (a < 0 || dpt_connect(a, dpt.nidb, 208))
		ktap_bail("kill: a new sender");
	ok = send_msg(a, 6, 0, 1) == 0 && recv_check(b, 6, 0, 1);
	wait_max_msg(a, MIB);
	ok = ok && send_msg(a, 6, 1, MIB) == 0 && recv_check(b, 6, 1, MIB);
	ok = ok && send_msg(a, 6, 2, 100) == 0 && recv_check(b, 6, 2, 100);
	ktap_ok(ok, "kill: a new sender's messages (1 B, 1 MiB, 100 B) arrive next, intact: no part of the aborted one");
	seq = dpt_wait_ctr(dpt.nsb, DP_CTR_RX_DROP_SEQ, seq0 + 1, DPT_WAIT_MS);
	ktap_ok(seq != UINT64_MAX && seq > seq0,
		"kill: the aborted message is counted in rx_drop_seq (+%llu)",
		(unsigned long long)(seq - seq0));
	m = wait_max_msg(a, MIB);
	ok = !dpt_stats(b, &st) && st.queued == 0;
	ok = ok && send_msg(a, 6, 3, m) == 0 && recv_check(b, 6, 3, m) && quiet(b, 200);
	ktap_ok(ok, "kill: its pool space is back: a message of max_msg (%u) goes and arrives", m);
	dp_close(a);
}

/*
 * hol: a writer whose copy never ends must not hold other users' messages
 * back for good.  Readers see the pool in ring order, so a large message
 * open in it holds back every message behind it.  User 1001's 1 MiB
 * write() hangs mid-message (its second half is a userfaultfd region
 * nobody serves, as a page of a hung FUSE or network file would leave
 * it), and user 1002 sends small messages to the same endpoint, too few
 * to fill its pool.  The receiver gives up the open message once its
 * sender has been silent for unreach_ms (1500 here): 1002's messages then
 * arrive, intact and in order, while 1001's write still hangs; nothing of
 * the open message is ever seen, and it is counted once.  Then a second
 * thread of 1001 writes on the same edge (it waits behind the hung
 * message), the page is served, the hung write fails (its session was
 * forgotten: the fragment it sends after the pause goes alone and is
 * answered with a RESET, so the write itself reports ECONNRESET, not the
 * one behind it), and the second thread's message opens a new session
 * and arrives.
 */
#define HOL_N		20
#define HOL_UID_X	1001
#define HOL_UID_Y	1002
#define HOL_DPID_X	3010
#define HOL_DPID_Y	3011
#define HOL_DPID_R	210

static int h_fd;
static uint8_t *h_buf;
static int h_err[2];

static void *h_large(void *arg)
{
	(void)arg;
	h_err[0] = write(h_fd, h_buf, MIB) < 0 ? errno : 0;
	return NULL;
}

static void *h_small(void *arg)
{
	(void)arg;
	h_err[1] = send_now(h_fd, 7, 2, 300);
	return NULL;
}

/* An endpoint of node A as @uid (bound after the switch: its wire uid). */
static int h_ep_as(uid_t uid, uint32_t dpid)
{
	if (dpt_ns(dpt.nsa) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		return -1;
	return dpt_ep("", dpid, 0);
}

/* User 1001: message 0, then the write that hangs; see t_hol(). */
static void h_child_x(int to_parent, int from_parent)
{
	struct uffdio_zeropage zp;
	pthread_t large, small;
	char c, res[2];
	int uffd;

	/* made as root: unprivileged userfaultfd may not catch kernel copies */
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	h_fd = h_ep_as(HOL_UID_X, HOL_DPID_X);
	if (uffd < 0 || h_fd < 0 || dpt_connect(h_fd, dpt.nidb, HOL_DPID_R) ||
	    send_now(h_fd, 7, 0, 1))
		_exit(2);
	wait_max_msg(h_fd, MIB);
	h_buf = uffd_half(uffd, 7, 1, &zp.range);
	if (pthread_create(&large, NULL, h_large, NULL))
		_exit(4);
	if (!uffd_faulted(uffd))
		_exit(5);
	if (write(to_parent, "F", 1) != 1 || read(from_parent, &c, 1) != 1 ||
	    pthread_create(&small, NULL, h_small, NULL))
		_exit(6);
	dpt_sleep_ms(200);	/* the small write waits behind the large one */
	zp.mode = 0;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp))
		_exit(7);
	pthread_join(large, NULL);
	pthread_join(small, NULL);
	res[0] = (char)h_err[0];
	res[1] = (char)h_err[1];
	if (write(to_parent, res, 2) != 2)
		_exit(8);
	_exit(drain(h_fd, UINT64_MAX));
}

/* User 1002: HOL_N small messages to the same endpoint. */
static void h_child_y(void)
{
	int fd = h_ep_as(HOL_UID_Y, HOL_DPID_Y);
	uint32_t i;

	if (fd < 0 || dpt_connect(fd, dpt.nidb, HOL_DPID_R))
		_exit(2);
	for (i = 0; i < HOL_N; i++)
		if (send_now(fd, 8, i, 100 + 37 * i))
			_exit(1);
	_exit(drain(fd, UINT64_MAX));
}

static void t_hol(void)
{
	uint64_t seq0 = ctr_b(DP_CTR_RX_DROP_SEQ), seq;
	int up[2], down[2], b, ok, sx, sy;
	char old[32], res[2] = { -1, -1 };
	struct pollfd p = { .events = POLLIN };
	long nopen, taken;
	pid_t x, y;
	uint32_t i;

	if (!have_uffd("hol: a writer hung mid-message"))
		return;
	b = dpt_ep(dpt.nsb, HOL_DPID_R, POOL_BIG);
	if (b < 0 || pipe(up) || pipe(down) || dpt_param("unreach_ms", "1500", old, sizeof(old)))
		ktap_bail("hol: endpoint, pipes, unreach_ms");
	x = dpt_fork();
	if (x == 0) {
		close(up[0]);
		close(down[1]);
		h_child_x(up[1], down[0]);
	}
	close(up[1]);
	close(down[0]);
	ok = recv_check(b, 7, 0, 1) && pipe_says(up[0], 'F');
	p.fd = up[0];
	ktap_ok(ok, "hol: uid %d's 1 MiB write() hangs on a page in its second half", HOL_UID_X);
	/* what an operator sees meanwhile: the message open, its whole token taken */
	for (i = 0, nopen = -1; i < 20 && nopen != 1; i++) {
		if (i)
			dpt_sleep_ms(50);
		nopen = dpt_ep_field(dpt.nsb, HOL_DPID_R, "open");
	}
	taken = dpt_ep_field(dpt.nsb, HOL_DPID_R, "taken");
	ktap_ok(nopen == 1 && taken >= MIB,
		"hol: dpctl ep shows the message open (%ld) with its token taken (%ld bytes)",
		nopen, taken);
	/*
	 * Idle with nobody waiting, its session gives back the credit it did
	 * not use (credit_idle_ms, 100): 1002 then has room and never runs
	 * short, so nothing but the watch gives the open message up.
	 */
	dpt_sleep_ms(500);
	y = dpt_fork();
	if (y == 0)
		h_child_y();
	for (i = 0, ok = 1; i < HOL_N && ok; i++)
		ok = recv_check(b, 8, i, 100 + 37 * i);
	ktap_ok(ok, "hol: meanwhile uid %d's %u messages to the same endpoint arrive, intact, in order (%u)",
		HOL_UID_Y, HOL_N, i - !ok);
	sy = dpt_wait_child(y, DPT_WAIT_MS);
	ktap_ok(sy == 0, "hol: uid %d's sender has them all acknowledged (%#x)", HOL_UID_Y, sy);
	seq = dpt_wait_ctr(dpt.nsb, DP_CTR_RX_DROP_SEQ, seq0 + 1, DPT_WAIT_MS);
	ktap_ok(seq == seq0 + 1, "hol: the open message was given up, counted once in rx_drop_seq (+%lld)",
		(long long)(seq - seq0));
	nopen = dpt_ep_field(dpt.nsb, HOL_DPID_R, "open");
	ktap_ok(nopen == 0, "hol: dpctl ep shows no message open once it is given up (%ld)", nopen);
	ok = write(down[1], "S", 1) == 1 && poll(&p, 1, DPT_WAIT_MS) == 1 &&
	     read(up[0], res, 2) == 2;
	ktap_ok(ok && res[0] == ECONNRESET,
		"hol: served at last, the hung write fails with ECONNRESET (%s)",
		ok ? strerror(res[0]) : "no answer");
	ok = ok && res[1] == 0 && recv_check(b, 7, 2, 300);
	ktap_ok(ok, "hol: a write that waited behind it goes on a new session and arrives intact (%s)",
		strerror(res[1]));
	sx = dpt_wait_child(x, DPT_WAIT_MS);
	ktap_ok(sx == 0 && quiet(b, 200),
		"hol: nothing else arrives, no part of the given-up message (%#x)", sx);
	dpt_param("unreach_ms", old, NULL, 0);
	close(up[0]);
	close(down[1]);
	dp_close(b);
}

#define MIXED_LARGE	8
#define MIXED_SMALL	400

static uint32_t mixed_len(int large, uint32_t i)
{
	if (large)
		return i == 0 ? 1 : 65536 + mix(i * 77u) % (448u * 1024);
	return 1 + (i * 37u) % 1000u;
}

/* One sender of the mixed part, in a child: its own endpoint. */
static void mixed_child(uint32_t dpid, int large)
{
	uint32_t n = large ? MIXED_LARGE + 1 : MIXED_SMALL, i;
	int a = dpt_ep(dpt.nsa, dpid, 0);

	if (a < 0 || dpt_connect(a, dpt.nidb, 209))
		_exit(2);
	for (i = 0; i < n; i++) {
		if (send_msg(a, dpid, i, mixed_len(large, i)))
			_exit(1);
		if (i == 0 && large)
			wait_max_msg(a, MIB / 2);
	}
	_exit(drain(a, UINT64_MAX));
}

static void t_mixed(void)
{
	int b = dpt_ep(dpt.nsb, 209, POOL_BIG);
	const uint32_t dpid[2] = { 105, 106 }, n[2] = { MIXED_LARGE + 1, MIXED_SMALL };
	uint32_t next[2] = { 0, 0 }, got = 0, switches = 0, last = 2, k;
	const struct dp_token *t;
	pid_t pid[2];
	int ok = 1, s0, s1;
	char *addr;
	ssize_t len;

	if (b < 0)
		ktap_bail("mixed: endpoint");
	pid[0] = dpt_fork();
	if (pid[0] == 0)
		mixed_child(dpid[0], 1);
	pid[1] = dpt_fork();
	if (pid[1] == 0)
		mixed_child(dpid[1], 0);
	while (ok && got < n[0] + n[1]) {
		len = next_msg(b, &addr, &t);
		if (len < 0) {
			ktap_diag("mixed: nothing after %u messages", got);
			break;
		}
		k = t->src_dpid == dpid[0] ? 0 : t->src_dpid == dpid[1] ? 1 : 2;
		if (k == 2 || next[k] >= n[k]) {
			ktap_diag("mixed: a message from %u/%u", t->src_nid, t->src_dpid);
			ok = 0;
			break;
		}
		fill(dpid[k], next[k], want, mixed_len(!k, next[k]));
		ok = (size_t)len == mixed_len(!k, next[k]) && !memcmp(addr, want, (size_t)len);
		if (!ok)
			ktap_diag("mixed: message %u of %u: %zd bytes, %u wanted or damaged", next[k],
				  dpid[k], len, mixed_len(!k, next[k]));
		switches += last != 2 && last != k;
		last = k;
		next[k]++;
		got++;
		dp_fsync(b, 1);
	}
	s0 = dpt_wait_child(pid[0], DPT_WAIT_MS);
	s1 = dpt_wait_child(pid[1], DPT_WAIT_MS);
	ktap_diag("mixed: the stream switched senders %u times", switches);
	ktap_ok(ok && next[0] == n[0] && next[1] == n[1] && s0 == 0 && s1 == 0,
		"mixed: %u large (64-512 KiB) and %u small messages from two senders: each sender's arrive in its order, intact (%u, %u; %#x %#x)",
		MIXED_LARGE, MIXED_SMALL, next[0], next[1], s0, s1);
	ktap_ok(quiet(b, 200), "mixed: nothing more arrives");
	dp_close(b);
}

/* Across guests (run_rel.sh): one side of a stream, KTAP-free. */
/* The peer form's message count N: 1 to MAX_MSGS. */
static uint32_t cap(const char *arg)
{
	unsigned long n = strtoul(arg, NULL, 0);

	return n < 1 ? 1 : n > MAX_MSGS ? MAX_MSGS : (uint32_t)n;
}

static int peer(int argc, char **argv)
{
	uint64_t seed, budget;
	uint32_t got, n;
	double t0 = now_s();
	int fd, r;

	wait_ms = 120000;	/* under the relay's faults on TCG */
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "recv")) {
		if (argc == 6)
			msg_cap = cap(argv[5]);
		budget = strtoull(argv[3], NULL, 0) * 1024;
		fd = dpt_ep("", (uint32_t)strtoul(argv[2], NULL, 0),
			    (uint32_t)strtoul(argv[4], NULL, 0));
		if (fd < 0) {
			ktap_diag("bind: %s", strerror(errno));
			return 1;
		}
		printf("ready\n");
		fflush(stdout);
		got = stream_recv(fd, 9, budget, &n);
		printf("got %u of %u large messages intact in %.1f s\n", got, n, now_s() - t0);
		return !(n && got == n && quiet(fd, 200));
	}
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "send")) {
		if (argc == 7)
			msg_cap = cap(argv[6]);
		seed = strtoull(argv[4], NULL, 0);
		budget = strtoull(argv[5], NULL, 0) * 1024;
		fd = dpt_ep("", (uint32_t)strtoul(argv[3], NULL, 0) + 1, 0);
		if (fd < 0 || dpt_connect(fd, (uint32_t)strtoul(argv[2], NULL, 0),
					  (uint32_t)strtoul(argv[3], NULL, 0))) {
			ktap_diag("endpoint: %s", strerror(errno));
			return 1;
		}
		r = stream_send(fd, 9, seed, budget, 0);
		printf("sent (%d) in %.1f s\n", r, now_s() - t0);
		return r;
	}
	fprintf(stderr, "usage: dp_large [recv DPID KB POOL [N] | send NID DPID SEED KB [N]]\n");
	return 2;
}

/*
 * Whether part @name runs (DPT_LARGE_PARTS: a comma-separated list, all if
 * unset); its start and end also go to stderr at once, so that a run cut
 * short by the runner's timeout still says where it was.
 */
static int part(const char *name)
{
	const char *only = getenv("DPT_LARGE_PARTS");
	size_t n = strlen(name);
	const char *p = only;

	if (only && *only) {
		while ((p = strstr(p, name)) &&
		       ((p != only && p[-1] != ',') || (p[n] && p[n] != ',')))
			p += n;
		if (!p)
			return 0;
	}
	fprintf(stderr, "# large: %s (%d failed so far)\n", name, ktap_failed);
	return 1;
}

int main(int argc, char **argv)
{
	double t0 = now_s(), t;
	uint64_t seed;
	uint32_t frame;
	int a, b;

	want = malloc(4 * MIB);
	out = malloc(4 * MIB);
	if (!want || !out)
		return 1;
	if (argc > 1) {
		if (dpt_init())
			return 1;
		return peer(argc, argv);
	}
	ktap_start();
	main_pid = getpid();
	if (dpt_init())
		return KSFT_FAIL;
	b = dpt_ep(dpt.nsb, 200, POOL_BIG);
	a = dpt_ep(dpt.nsa, 100, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, 200))
		ktap_bail("endpoints");
	t = now_s();
	frame = t_limit(a, b);
	ktap_diag("limit: %.1f s", now_s() - t);
	if (part("small")) {
		t = now_s();
		t_small(frame);
		ktap_diag("small: %.1f s", now_s() - t);
	}
	seed = 0;
	if (part("random")) {
		t = now_s();
		seed = t_random(a, b, frame);
		ktap_diag("random: %.1f s", now_s() - t);
	}
	if (part("faults")) {
		t = now_s();
		t_faults(seed + 1, frame);
		ktap_diag("faults: %.1f s", now_s() - t);
	}
	if (part("stall")) {
		t = now_s();
		t_stall();
		ktap_diag("stall: %.1f s", now_s() - t);
	}
	if (part("kill")) {
		t = now_s();
		t_kill();
		ktap_diag("kill: %.1f s", now_s() - t);
	}
	if (part("hol")) {
		t = now_s();
		t_hol();
		ktap_diag("hol: %.1f s", now_s() - t);
	}
	if (part("mixed")) {
		t = now_s();
		t_mixed();
		ktap_diag("mixed: %.1f s", now_s() - t);
	}
	part("end");
	ktap_diag("dp_large took %.1f s", now_s() - t0);
	dp_close(a);
	dp_close(b);
	ktap_finish();
}
