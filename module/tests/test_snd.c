// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the sender's state machine (dp_snd.c) against the real
 * receiver (dp_rcv.c) in the world of sess_world.c: HELLO, credit and
 * window updates, the congestion window, retransmission and backoff, the
 * window probe, idle credit RETURN, RESET and FIN, and the errors a send
 * reports.  Endpoint A (node 1, DPID 10) sends to B (node 2, DPID 20).
 */
#include "sess_world.h"
#include "dp_frag.h"

#define A_INC	W_A_INC
#define B_INC	W_B_INC

static struct dp_endpoint *A, *B;
static struct dp_snd *ab;

static void two(u32 bpool)
{
	ab = w_pair(bpool, &A, &B);
}

/* A's session to B is open: HELLO sent and answered. */
static void two_open(u32 bpool)
{
	two(bpool);
	CHECK_EQ(w_send(ab, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
}

static bool drop_everything(const struct w_frame *f)
{
	(void)f;
	return true;
}

static bool drop_data(const struct w_frame *f)
{
	return f->h.type == DP_WT_DATA;
}

static u32 first_seq;
static bool drop_first_once(const struct w_frame *f)
{
	if (f->h.type == DP_WT_DATA && f->h.seq == first_seq) {
		first_seq = 0;
		return true;
	}
	return false;
}

/* The first send opens the session: HELLO with the ISN, then DATA. */
static void test_snd_hello(void)
{
	const struct w_frame *f;
	struct dp_rcv_info ri;
	u32 seq[2];

	two(65536);
	CHECK_EQ(w_info(ab).state, DP_SND_IDLE);
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* waits for the answer */
	f = w_last(DP_WT_HELLO, 0);
	CHECK(f, "a HELLO was sent");
	CHECK_EQ(w_info(ab).state, DP_SND_HELLO);
	if (f)
		CHECK_EQ(f->h.seq, w_info(ab).isn);
	CHECK_EQ(w_count(DP_WT_DATA, 0), 0);
	CHECK_EQ(w_stats(A).tx_blocked, 1);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	CHECK_EQ(w.ev_state, DP_SND_OPEN);	/* announced (dpctl monitor) */
	CHECK(w_rinfo(B, 1, 10, &ri), "B keeps a session for A");
	CHECK(w_info(ab).credit_left > 0, "the answer granted credit");
	CHECK_EQ(w_info(ab).credit_left, ri.credit_left);
	CHECK_EQ(ri.isn, w_info(ab).isn);
	CHECK_EQ(w_send(ab, 100), 0);
	f = w_last(DP_WT_DATA, 0);
	CHECK(f && f->h.seq == w_info(ab).isn, "the first DATA carries the ISN");
	w_run(1);
	CHECK_EQ(w_read(B, 2, seq), 1);
	CHECK_EQ(seq[0], 1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
}

/* A blocking send waits through the HELLO and goes out once it is open. */
static void test_snd_hello_blocking(void)
{
	two(65536);
	CHECK_EQ(w_send_wait(ab, 100), 0);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 1);
	CHECK_EQ(w_count(DP_WT_DATA, 0), 1);
	w_run(1);
	CHECK_EQ(w_queued(B), 1);
	w_teardown();
}

/* A lost HELLO goes again after the RTO, doubled each time. */
static void test_snd_hello_backoff(void)
{
	two(65536);
	w.drop = drop_everything;
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	CHECK_EQ(w_info(ab).rto_ms, 200);
	w_run(199);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 1);
	w_run(1);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 2);
	CHECK(w_last(DP_WT_HELLO, 0) && w_last(DP_WT_HELLO, 0)->h.seq == w_info(ab).isn,
	      "the same ISN");
	CHECK_EQ(w_info(ab).backoff, 1);
	CHECK_EQ(w_info(ab).rto_ms, 400);
	w_run(399);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 2);
	w_run(1);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 3);
	CHECK_EQ(w_info(ab).rto_ms, 800);
	w_run(800 + 1000);	/* capped at rto_max_ms */
	CHECK_EQ(w_info(ab).rto_ms, 1000);
	CHECK_EQ(w_count(DP_WT_HELLO, 0), 5);
	w_teardown();
}

/* No answer for unreach_ms: ETIMEDOUT, reported once; then a new session. */
static void test_snd_unreachable(void)
{
	u32 isn;
	int err;

	two(65536);
	w.drop = drop_everything;
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	isn = w_info(ab).isn;
	w_run(9990);
	CHECK_EQ(w_info(ab).state, DP_SND_HELLO);
	w_run(1100);
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK_EQ(w_info(ab).err, ETIMEDOUT);
	CHECK(dp_snd_writable(ab, &err) && err == -ETIMEDOUT, "poll: EPOLLOUT|EPOLLERR");
	CHECK_EQ(w_send(ab, 100), -ETIMEDOUT);
	CHECK_EQ(w_info(ab).state, DP_SND_IDLE);
	w.drop = NULL;
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	CHECK(w_info(ab).isn != isn, "a new session, a new ISN");
	w_pump();
	CHECK_EQ(w_send(ab, 100), 0);
	w_teardown();
}

/* A blocked writer gets ETIMEDOUT when the peer never answers. */
static void test_snd_unreachable_blocking(void)
{
	two(65536);
	w.drop = drop_everything;
	CHECK_EQ(w_send_wait(ab, 100), -ETIMEDOUT);
	w_teardown();
}

/* The receiver's admission rule refuses the HELLO: ECONNREFUSED. */
static void test_snd_refused(void)
{
	two(65536);
	B->refuse = true;
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	w_pump();
	CHECK_EQ(w_count(DP_WT_RESET, 0), 1);
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK_EQ(w_send(ab, 100), -ECONNREFUSED);
	CHECK_EQ(w_rx_peers(B), 0);
	w_teardown();
}

/*
 * Credit: a small pool takes what it granted and no more; the sender
 * waits; a read makes room and the window update lets it go on.
 */
static void test_snd_credit_and_window_update(void)
{
	unsigned int n = 0;
	int err;

	two_open(8192);		/* room for 6 messages of 1000 bytes */
	while ((err = w_send(ab, 1000)) == 0)
		n++;
	CHECK_EQ(err, -EAGAIN);
	CHECK_EQ(n, (8192 - DP_TOKEN_SPACE(1400)) / DP_TOKEN_SPACE(1000));
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_PROBE), 0);	/* in flight: acks bring credit */
	w_run(1);
	CHECK_EQ(w_queued(B), n);
	CHECK_EQ(B->pool.refused, 0);
	CHECK_EQ(w_send(ab, 1000), -EAGAIN);		/* the pool is full */
	CHECK_EQ(w_read(B, 1, NULL), 1);
	w_run(1);
	CHECK_EQ(w_send(ab, 1000), 0);			/* the update came */
	CHECK_EQ(w_send(ab, 1000), -EAGAIN);
	CHECK_EQ(w_read(B, 10, NULL), n - 1);
	w_run(1);
	CHECK_EQ(w_queued(B), 1);
	CHECK_EQ(B->pool.refused, 0);
	w_teardown();
}

/* Send @len-byte messages until A's credit is used up; returns how many. */
static unsigned int fill(u32 len)
{
	unsigned int n = 0, i;

	for (i = 0; i < 1000; i++) {
		while (w_send(ab, len) == 0)
			n++;
		w_run(1);
		if (w_info(ab).credit_left < (s32)DP_TOKEN_SPACE(len))
			break;
	}
	return n;
}

/* Window updates and other ACKs B sent A so far. */
static unsigned int acks_from_b(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += w.frames[i].h.type == DP_WT_ACK && w.frames[i].h.src_nid == 2;
	return n;
}

/*
 * Silly-window avoidance: while A waits on a window B's pool does not
 * have, a reader freeing one small message at a time does not make an
 * ACK per read; an update goes once the room is worth half a frame
 * (TCP's receiver rule), and it is enough for A to send again.
 */
static void test_snd_sws(void)
{
	const u32 space = DP_TOKEN_SPACE(100);
	const u32 half = DP_TOKEN_SPACE(1400) / 2;
	unsigned int n, reads = 0, acks;

	two_open(65536);
	n = fill(100);
	CHECK(n > 200, "%u messages fill the pool", n);
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* a probe asks; no window */
	w_pump();
	CHECK(w_info(ab).credit_left < (s32)space, "no window: %d",
	      w_info(ab).credit_left);
	acks = acks_from_b();
	while (w_info(ab).credit_left < (s32)space && reads < n) {
		CHECK_EQ(w_read(B, 1, NULL), 1);
		reads++;
		w_pump();
	}
	CHECK(w_info(ab).credit_left >= (s32)space, "the update came");
	CHECK_EQ(acks_from_b(), acks + 1);		/* one, for all those reads */
	CHECK(reads * space >= half, "%u reads before it", reads);
	CHECK(reads > 1, "%u reads before it", reads);
	acks = acks_from_b();
	for (reads = 0; reads < 64; reads++) {
		CHECK_EQ(w_read(B, 1, NULL), 1);
		w_pump();
	}
	CHECK(acks_from_b() - acks <= 64 * space / half + 1,
	      "%u updates for 64 reads", acks_from_b() - acks);
	CHECK(acks_from_b() > acks, "the window kept opening");
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);
	CHECK_EQ(B->pool.refused, 0);
	w_teardown();
}

static u8 sws_msg[1400];

/* The reader frees one message per millisecond of world time. */
static void read_one(void)
{
	w_read(B, 1, NULL);
	w_run(1);
}

/*
 * A blocking writer on a full pool, a reader freeing one message at a
 * time: the writer never stalls, for small messages (many fit the room
 * an update waits for) and for the largest (one needs all of it).
 */
static void sws_no_stall(u32 len)
{
	unsigned int n, i, left;
	int err = 0;

	two_open(16384);
	n = fill(len);
	kmock_wait_hook = read_one;
	kmock_wait_rounds = 100000;
	for (i = 0; i < 200; i++) {
		err = dp_snd_send(ab, sws_msg, len, false);
		if (err)
			break;
	}
	kmock_wait_hook = NULL;
	CHECK_EQ(err, 0);
	CHECK_EQ(i, 200);
	w_run(1);
	left = w_read(B, 1000, NULL);
	w_run(1);
	left += w_read(B, 1000, NULL);
	CHECK_EQ(w_stats(B).rx_dup + B->pool.refused, 0);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK(left > 0 && left <= n + 200, "%u left in the pool", left);
	w_teardown();
}

static void test_snd_sws_no_stall(void)
{
	sws_no_stall(100);
	sws_no_stall(1400);
}

/* The reader takes all it has, once per millisecond of world time. */
static void read_all(void)
{
	w_read(B, 1000, NULL);
	w_run(1);
}

/*
 * A batch (DP_IOC_SENDV) holds its small frames in the endpoint's plug:
 * a blocking writer whose credit runs out sends what the plug holds
 * before it waits for the peer's answer, which cannot come without those
 * frames; what is still held when the batch ends goes at its flush.  The
 * world holds every DATA frame sent plugged until a flush.
 */
static void test_snd_plug_flush(void)
{
	unsigned int i, got;
	int err = 0;

	two_open(4096);
	w.plug_ep = A;
	kmock_wait_hook = read_all;
	kmock_wait_rounds = 100000;
	for (i = 0; i < 200; i++) {
		err = dp_snd_send(ab, sws_msg, 100, false);
		if (err)
			break;
	}
	kmock_wait_hook = NULL;
	CHECK_EQ(err, 0);
	CHECK_EQ(i, 200);
	CHECK(w.plug_flushes > 0 && w.plug_flushes < 200,
	      "%u flushes for 200 messages", w.plug_flushes);
	/* the batch's end */
	got = w_read(B, 1000, NULL);
	w_run(1);
	CHECK(w_info(ab).snd_una != w_info(ab).snd_nxt,
	      "the last messages are still in the plug");
	dp_tx_plug_flush(dp_tx_plugged(A));
	w.plug_ep = NULL;
	w_run(1);
	got += w_read(B, 1000, NULL);
	w_run(1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_stats(B).rx_dup + B->pool.refused, 0);
	CHECK_EQ(w_stats(A).tx_retrans, 0);
	CHECK(got > 0, "%u read after the writer's last wait", got);
	w_teardown();
}

static unsigned int silent_released;

/*
 * The reader on another CPU, while the receiver sets its starved flag: it
 * releases all the pool holds, and it looked at the flag before it was
 * set (so it kicks nothing: no dp_rcv_released()).
 */
static void release_unseen(void)
{
	while (dp_ring_head(&B->pool.ring)) {
		dp_ring_release(&B->pool.ring, 1);
		silent_released++;
	}
}

/*
 * The ack work clears the receiver's starved flag, re-grants from the
 * pool as it reads it, falls short and sets the flag again; the reader
 * releasing everything meanwhile looked at the flag while it was clear,
 * and no more messages come.  The receiver sees the consumer index move
 * after its barrier and re-grants at once: the sender goes on without its
 * window probe (a retransmission timeout each time, before).
 */
static void test_snd_starve_race(void)
{
	unsigned int n = 0, probes;

	two_open(8192);		/* room for 6 messages of 1000 bytes */
	while (w_send(ab, 1000) == 0)
		n++;
	CHECK(n >= 4, "%u messages", n);
	w_pump();			/* they arrive: B owes a delayed ACK */
	CHECK_EQ(w_queued(B), n);
	probes = w_count(DP_WT_ACK, DP_WF_PROBE);
	silent_released = 0;
	kmock_mb_hook = release_unseen;
	w_run(2);			/* the ack work, and what it sends */
	CHECK(kmock_mb_hook == NULL, "the ack work's short grant ran the barrier");
	CHECK_EQ(silent_released, n);
	CHECK_EQ(w_send(ab, 1000), 0);		/* the re-grant came */
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_PROBE), probes);
	CHECK_EQ(B->pool.refused, 0);
	w_teardown();
}

/*
 * The DATA header is a template built once per session: a stream of
 * messages builds it once (and every frame's header is what encoding it
 * whole gives: the world checks); a new NID builds it again, and the
 * frames carry the new NID.
 */
static void test_snd_tmpl(void)
{
	const struct w_frame *f;
	unsigned int i;

	two_open(65536);
	CHECK_EQ(w.tmpl_builds, 0);
	for (i = 0; i < 50; i++) {
		CHECK_EQ(w_send(ab, 1 + i), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK_EQ(w.tmpl_builds, 1);
	w.nodes[0].nid = 3;
	CHECK_EQ(w_send(ab, 10), 0);
	CHECK_EQ(w.tmpl_builds, 2);
	f = w_last(DP_WT_DATA, 0);
	CHECK(f && f->h.src_nid == 3 && f->h.len == 10, "the new NID");
	w_drop_all();
	w_teardown();
}

/* Slow start: the window opens by what each ACK covers. */
static void test_snd_cwnd_slow_start(void)
{
	u32 full = w.nodes[0].max_msg;
	unsigned int n = 0;

	two_open(262144);
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_INIT * w_mss());
	while (w_send(ab, full) == 0)
		n++;
	CHECK_EQ(n, DP_CWND_INIT);
	w_run(1);
	CHECK_EQ(w_info(ab).cwnd, 2 * DP_CWND_INIT * w_mss());
	n = 0;
	while (w_send(ab, full) == 0)
		n++;
	CHECK_EQ(n, 2 * DP_CWND_INIT);
	w_run(1);
	CHECK_EQ(w_queued(B), 3 * DP_CWND_INIT);
	w_teardown();
}

/* How many messages of @len an empty window lets go on a link of @frame. */
static unsigned int window_on(u32 frame, u32 len)
{
	unsigned int n = 0;

	two(1u << 20);
	w.nodes[0].max_msg = frame;
	w.nodes[1].max_msg = frame;
	CHECK_EQ(w_send(ab, 1), -EAGAIN);	/* the HELLO */
	w_pump();
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_INIT * (frame + DP_WIRE_HDR_LEN));
	while (w_send(ab, len) == 0)
		n++;
	w_run(1);
	CHECK_EQ(w_queued(B), n);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
	return n;
}

/* The same on the world's own link (1400-byte messages, w_setup()). */
static unsigned int window_of(u32 len)
{
	return window_on(1400, len);
}

/* Small frames a full one's weight lets fly on the world's 1400-byte link. */
#define SMALL_PER_FULL	(w_mss() / dp_cwnd_least(w_mss()))

/*
 * The window counts bytes (docs/reliability.md 6.1): a message weighs its
 * frame, so messages of half a frame fly twice as many as full ones, and
 * a small one weighs half a full frame at least on a 1500-byte link, so
 * tiny ones fly twice as many, not thousands.
 */
static void test_snd_cwnd_bytes(void)
{
	u32 half = (w.nodes[0].max_msg - DP_WIRE_HDR_LEN) / 2;
	u32 win = DP_CWND_INIT * (w.nodes[0].max_msg + DP_WIRE_HDR_LEN);

	CHECK_EQ(SMALL_PER_FULL, 2);
	CHECK_EQ(window_of(w.nodes[0].max_msg), DP_CWND_INIT);
	CHECK_EQ(window_of(half), (win + w_wt(half) - 1) / w_wt(half));
	CHECK(window_of(half) >= 2 * DP_CWND_INIT - 1, "%u halves",
	      window_of(half));
	CHECK_EQ(window_of(1), 2 * DP_CWND_INIT);
	CHECK_EQ(window_of(100), 2 * DP_CWND_INIT);
}

/*
 * On a jumbo link a small frame weighs a quarter of a full one: 1024-byte
 * messages on 9000-byte frames (the reliability report's) fly four times
 * as many as full frames at the window's floor, 128, where half a frame
 * gave 64; tiny ones no more (that the floor's worth past a hole is no
 * more than the receiver holds, DP_OOO_MAX, the build asserts).
 */
static void test_snd_cwnd_jumbo(void)
{
	u32 wt = (8948 + DP_WIRE_HDR_LEN) / 4;

	CHECK_EQ(dp_cwnd_least(1452), 726);
	CHECK_EQ(dp_cwnd_least(9000), 2250);
	CHECK_EQ(dp_cwnd_least(65536), 16384);
	CHECK_EQ(window_on(8948, 1024), (32 * 9000 + wt - 1) / wt);
	CHECK_EQ(window_on(8948, 1024), 4 * DP_CWND_INIT);
	CHECK_EQ(window_on(8948, 1), 4 * DP_CWND_INIT);
	CHECK_EQ(window_on(8948, 4000), (32 * 9000 + 4051) / 4052);
}

/*
 * Timeout: go back to the first unacknowledged message, as many as the
 * window (back to its floor) allows; the rest follow, in order, once.
 */
static void test_snd_goback(void)
{
	u32 seq[16], i;

	two_open(65536);
	w.drop = drop_data;
	for (i = 0; i < 10; i++)	/* full frames: the window's unit */
		CHECK_EQ(w_send(ab, w.nodes[0].max_msg), 0);
	CHECK_EQ(dp_snd_unacked(ab), 10);	/* stats' tx_unacked */
	w_run(199);
	CHECK_EQ(w_count(DP_WT_DATA, 0), 10);
	w_run(1);
	CHECK_EQ(w_count(DP_WT_DATA, 0), 10 + DP_CWND_MIN);
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_MIN * w_mss());
	CHECK_EQ(w_info(ab).backoff, 1);
	CHECK_EQ(w_stats(A).tx_retrans, DP_CWND_MIN);
	CHECK_EQ(w.nodes[0].ctr[DP_CTR_TX_RETRANS], DP_CWND_MIN);
	w.drop = NULL;
	w_run(2000);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(dp_snd_unacked(ab), 0);
	CHECK_EQ(w_read(B, 16, seq), 10);
	for (i = 0; i < 10; i++)
		CHECK_EQ(seq[i], i + 1);
	CHECK_EQ(w_stats(B).rx_dup, 0);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_DUP), 0);	/* nothing to undo */
	w_teardown();
}

/* The frames sent from @from to @to, in order, as a link that stalled. */
static void replay(unsigned int from, unsigned int to)
{
	struct w_frame f;

	for (; from < to; from++) {
		f = w.frames[from];	/* sending more may move w.frames */
		w_dispatch(&f.h, f.data);
		w_pump();
	}
}

/*
 * A window widened by 32 small messages, then 32 more sent while @drop
 * loses frames, until the RTO goes back: the floor's worth resent, the
 * window at its floor.  Returns what was resent; *cwnd is the window
 * before, *una the first of the 32, *n0 the world's frames before them.
 */
static u32 stall_past_rto(bool (*drop)(const struct w_frame *f), u32 *cwnd,
			  u32 *una, unsigned int *n0)
{
	u32 i, retrans;

	two_open(262144);
	for (i = 0; i < 32; i++)	/* RTT samples, and a wider window */
		CHECK_EQ(w_send(ab, 100), 0);
	w_run(5);
	CHECK_EQ(w_read(B, 64, NULL), 32);
	w_run(1);
	*cwnd = w_info(ab).cwnd;
	CHECK(*cwnd > DP_CWND_INIT * w_mss(), "window %u", *cwnd);
	*una = w_info(ab).snd_nxt;
	*n0 = w.n_frames;
	w.drop = drop;
	for (i = 0; i < 32; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	for (i = 0; i < 300 && !w_stats(A).tx_retrans; i++)
		w_run(1);
	w_run(1);
	retrans = w_stats(A).tx_retrans;
	CHECK_EQ(retrans, DP_CWND_MIN * SMALL_PER_FULL);	/* the floor's worth */
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_MIN * w_mss());
	CHECK_EQ(w_info(ab).timeouts, 1);
	return retrans;
}

/*
 * A spurious timeout (docs/reliability.md 5.4): the link stalls past the
 * RTO, holding the window and the timeout's resends, then hands them all
 * on.  The receiver reports the resend of the first as a duplicate
 * (DP_WF_DUP): the window goes back to what it was before the timeout.
 * The ACK that reports it acknowledges the whole window, so nothing more
 * is resent here either way (the going back stops at a report that comes
 * while it still has messages to resend).  A report naming another
 * message undoes nothing.
 */
static void test_snd_spurious_undo(void)
{
	u32 seq[64], i, cwnd, retrans, una;
	unsigned int n0, n1;
	struct w_frame ack;

	retrans = stall_past_rto(drop_everything, &cwnd, &una, &n0);
	CHECK_EQ(w_info(ab).undone, 0);
	n1 = w.n_frames;
	w.drop = NULL;
	/* a report of another message's duplicate */
	ack = *w_last(DP_WT_ACK, DP_WF_ACK);
	CHECK_EQ(ack.h.src_nid, 2);
	ack.h.flags |= DP_WF_DUP;
	ack.h.dup = (u16)(una + 1);
	w_dispatch(&ack.h, ack.data);
	w_pump();
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_MIN * w_mss());
	CHECK_EQ(w_info(ab).undone, 0);
	replay(n0, n1);
	w_run(5);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK(w_count(DP_WT_ACK, DP_WF_DUP) >= 2, "%u duplicates reported",
	      w_count(DP_WT_ACK, DP_WF_DUP));
	CHECK(w_info(ab).cwnd >= cwnd, "window %u, %u before the timeout",
	      w_info(ab).cwnd, cwnd);
	CHECK_EQ(w_info(ab).timeouts, 1);	/* dpctl ep's count */
	CHECK_EQ(w_info(ab).undone, 1);
	CHECK_EQ(w_stats(A).tx_retrans, retrans);
	CHECK_EQ(w_stats(B).rx_dup, retrans);
	CHECK_EQ(w_read(B, 64, seq), 32);
	for (i = 0; i < 32; i++)
		CHECK_EQ(seq[i], seq[0] + i);
	w_teardown();
}

static bool drop_acks_of_b(const struct w_frame *f)
{
	return f->h.type == DP_WT_ACK && f->h.src_nid == 2;
}

/*
 * A spurious timeout whose late ACKs come before any duplicate report
 * (F-RTO, docs/reliability.md 5.4): the receiver has the whole window,
 * but its ACKs are held up past the RTO, so the timer goes back.  Then
 * they arrive (the go-back's duplicate reports stay lost): the first one
 * that covers a message the go-back had not resent is the proof.  The
 * window is what it was before the timeout, the timeout counts as
 * undone, and the go-back resends no more than it had before the ACKs.
 */
static void test_snd_frto_undo(void)
{
	u32 seq[64], i, cwnd, retrans, una;
	unsigned int n0, n1, k;
	struct w_frame f;

	retrans = stall_past_rto(drop_acks_of_b, &cwnd, &una, &n0);
	CHECK_EQ(w_stats(B).rx_dup, retrans);	/* B had them all */
	n1 = w.n_frames;
	w.drop = NULL;
	for (k = n0; k < n1; k++) {	/* B's ACKs, late; its reports lost */
		f = w.frames[k];
		if (f.h.type != DP_WT_ACK || f.h.src_nid != 2 ||
		    (f.h.flags & DP_WF_DUP))
			continue;
		w_dispatch(&f.h, f.data);
		w_pump();
		if (w_info(ab).undone)
			break;
	}
	CHECK_EQ(w_info(ab).undone, 1);
	CHECK(w_info(ab).cwnd >= cwnd, "window %u, %u before the timeout",
	      w_info(ab).cwnd, cwnd);
	CHECK_EQ(w_stats(A).tx_retrans, retrans);	/* the going back stopped */
	w_run(5);
	CHECK_EQ(w_info(ab).snd_una, una + 32);	/* the stalled 32, all in */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ab).timeouts, 1);
	CHECK_EQ(w_info(ab).undone, 1);
	CHECK_EQ(w_stats(A).tx_retrans, retrans);
	CHECK_EQ(w_read(B, 64, seq), 32);
	for (i = 0; i < 32; i++)
		CHECK_EQ(seq[i], seq[0] + i);
	w_teardown();
}

/*
 * The checksum's pass over a message runs once, at its copy: each DATA
 * frame, the first and every resend, leaves with that CRC state, which
 * the world checks against the bytes it carries (dp_tx_frame_tmpl()).
 */
static void test_snd_crc_at_copy(void)
{
	u32 seq[8], i, sent;

	two_open(65536);
	w.crc_checked = 0;
	w.drop = drop_data;
	for (i = 0; i < 4; i++)
		CHECK_EQ(w_send(ab, w.nodes[0].max_msg - i), 0);
	w_run(200);		/* the timeout: they go again */
	w.drop = NULL;
	w_run(2000);
	sent = w_count(DP_WT_DATA, 0);
	CHECK(sent >= 8, "%u DATA frames", sent);
	CHECK_EQ(w.crc_checked, sent);
	CHECK_EQ(w_read(B, 8, seq), 4);
	w_teardown();
}

/*
 * After a timeout the acknowledgements of what went again clock out the
 * rest (in slow start), up to what was sent before it: the whole lost
 * window is in within a few round trips of the timeout, each message
 * resent once, not DP_CWND_MIN messages per RTO.
 */
static void test_snd_goback_refill(void)
{
	u32 seq[40] = { 0 }, i;

	two_open(262144);
	w.drop = drop_data;
	for (i = 0; i < DP_CWND_INIT; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();		/* all of them lost */
	w.drop = NULL;
	w_run(199);
	CHECK_EQ(w_queued(B), 0);
	w_run(5);		/* the timeout, then its round trips */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_stats(A).tx_retrans, DP_CWND_INIT);	/* each once */
	CHECK_EQ(w_read(B, 40, seq), DP_CWND_INIT);
	for (i = 0; i < DP_CWND_INIT; i++)
		CHECK_EQ(seq[i], i + 1);
	CHECK_EQ(w_stats(B).rx_dup, 0);
	CHECK_EQ(w_info(ab).timeouts, 1);
	CHECK_EQ(w_info(ab).undone, 0);	/* a real loss */
	w_teardown();
}

/*
 * One message lost in a window larger than the receiver holds out of
 * order (DP_OOO_MAX): the gap report resends it, the receiver drops what
 * came beyond what it holds, and the timeout's go-back brings all of that
 * in at once, not a few messages per RTO for seconds (dpperf's bandwidth
 * window over the myri card stalled past its 2 s that way).
 */
static void test_snd_burst_loss(void)
{
	u32 burst = 2 * DP_OOO_MAX, base, k;

	two_open(262144);
	for (k = DP_CWND_INIT; k < 2 * DP_OOO_MAX; k *= 2) {	/* slow start */
		for (u32 i = 0; i < k; i++)
			CHECK_EQ(w_send(ab, 1), 0);
		w_run(1);
		w_read(B, k, NULL);
	}
	CHECK_EQ(w_info(ab).cwnd >= burst, true);
	base = w_stats(A).tx_retrans;
	first_seq = w_info(ab).snd_nxt;
	w.drop = drop_first_once;
	for (k = 0; k < burst; k++)
		CHECK_EQ(w_send(ab, 1), 0);
	w_pump();
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ], burst - 1 - DP_OOO_MAX);
	CHECK_EQ(w_queued(B), DP_OOO_MAX + 1);
	w_run(30);		/* the RTO (its floor, 20 ms), then round trips */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_queued(B), burst);
	/* the hole once, then each message the receiver dropped once */
	CHECK_EQ(w_stats(A).tx_retrans - base, 1 + burst - 1 - DP_OOO_MAX);
	CHECK_EQ(w_stats(B).rx_dup, 0);
	w_teardown();
}

/* One hole in four messages; the window once it is filled. */
static u32 hole_cut(void)
{
	u32 i;

	first_seq = w_info(ab).snd_nxt;
	w.drop = drop_first_once;
	for (i = 0; i < 4; i++)
		CHECK_EQ(w_send_wait(ab, 100), 0);	/* an idle session asks first */
	w_pump();
	w_run(1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_read(B, 8, NULL);
	w.drop = NULL;
	return w_info(ab).cwnd;
}

/*
 * A reported hole takes a quarter off the window, but never below the
 * window every session starts with (the receiver that reports it is
 * receiving); only a timeout falls to the floor, and a hole after it does
 * not raise the window.
 */
static void test_snd_gap_cut(void)
{
	u32 n, c0;

	two_open(262144);
	while (w_send(ab, 1) == 0)
		;			/* the first window */
	w_run(1);
	w_read(B, SMALL_PER_FULL * DP_CWND_INIT, NULL);
	CHECK_EQ(w_info(ab).cwnd, 2 * DP_CWND_INIT * w_mss());
	CHECK_EQ(hole_cut(), (2 * DP_CWND_INIT - DP_CWND_INIT / 2) * w_mss());
	CHECK_EQ(hole_cut(), 36u * w_mss());
	CHECK_EQ(hole_cut(), DP_CWND_INIT * w_mss());	/* 27 is below it */
	CHECK_EQ(hole_cut(), DP_CWND_INIT * w_mss());
	CHECK_EQ(w_stats(A).tx_retrans, 4);
	w.drop = drop_data;
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(100);
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_MIN * w_mss());
	w.drop = NULL;
	w_run(2000);
	w_read(B, 8, NULL);
	c0 = w_info(ab).cwnd;
	CHECK(c0 < DP_CWND_INIT * w_mss(), "window %u after the timeout", c0);
	n = hole_cut();
	CHECK(n >= c0 && n < DP_CWND_INIT * w_mss(),
	      "window %u after a hole, %u before", n, c0);
	w_teardown();
}

static int first_drops;
static bool drop_first_twice(const struct w_frame *f)
{
	if (f->h.type == DP_WT_DATA && f->h.seq == first_seq && first_drops < 2) {
		first_drops++;
		return true;
	}
	return false;
}

/*
 * A lost resend: while DATA keeps coming after the hole, the receiver
 * reports it again (DP_GAP_AGAIN_MS) and the sender resends it once more,
 * a round trip after the first resend: the hole is filled before the
 * timeout, with no go-back and the window not at its floor.
 */
static void test_snd_lost_resend(void)
{
	u32 seq[64], i, n, rto;

	two_open(262144);
	CHECK_EQ(w_send(ab, 100), 0);		/* an RTT sample */
	w_run(1);
	w_read(B, 8, NULL);
	rto = w_info(ab).rto_ms;
	CHECK(rto > DP_GAP_AGAIN_MS + 4, "rto %u ms", rto);
	first_seq = w_info(ab).snd_nxt;
	first_drops = 0;
	w.drop = drop_first_twice;
	for (i = 0; i < 4; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(first_drops, 2);		/* the message, then its resend */
	CHECK_EQ(w_stats(A).tx_retrans, 1);
	for (n = 4; n < 40 && w_info(ab).snd_una != w_info(ab).snd_nxt; n++) {
		CHECK_EQ(w_send(ab, 100), 0);	/* one a ms after the hole */
		w_run(1);
	}
	CHECK(n < 4 + rto - 2, "filled after %u ms (timeout %u ms)", n - 4, rto);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_stats(A).tx_retrans, 2);	/* the hole twice, nothing else */
	CHECK(w_count(DP_WT_ACK, DP_WF_GAP) >= 2, "gap reports %u",
	      w_count(DP_WT_ACK, DP_WF_GAP));
	CHECK(w_info(ab).cwnd > DP_CWND_MIN, "window %u", w_info(ab).cwnd);
	CHECK_EQ(w_read(B, 64, seq), n);
	for (i = 1; i < n; i++)
		CHECK_EQ(seq[i], seq[i - 1] + 1);
	w_teardown();
}

static u32 hole_seq;
static unsigned int hole_drops;
static bool drop_hole(const struct w_frame *f)
{
	if (f->h.type == DP_WT_DATA && f->h.seq == hole_seq && hole_drops) {
		hole_drops--;
		return true;
	}
	return false;
}

/*
 * Going back after a timeout, the next timeout fires, and a gap report
 * comes in before the timer's work runs (softirq before the worker): the
 * work must still keep a deadline armed.  It used to send the next of the
 * go-back and arm nothing, so the hole, whose resends were lost, was never
 * sent again: in make soak the sender stood still for 300 s with one
 * message missing and 21 held past it, until the receiver gave up.
 */
static void test_snd_gap_after_timer(void)
{
	struct w_frame *gap = malloc(sizeof(*gap));
	u32 seq[16] = { 0 }, i, rto;

	two_open(262144);
	CHECK_EQ(w_send(ab, 100), 0);		/* an RTT sample */
	w_run(1);
	w_read(B, 8, NULL);
	hole_seq = w_info(ab).snd_nxt;
	hole_drops = 3;		/* the message, its gap resend, the go-back's */
	w.drop = drop_hole;
	for (i = 0; i < 6; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(hole_drops, 1);
	*gap = *w_last(DP_WT_ACK, DP_WF_GAP);
	rto = w_info(ab).rto_ms;
	w_run(rto);				/* the timeout: go back */
	CHECK_EQ(hole_drops, 0);
	CHECK_EQ(w_info(ab).backoff, 1);
	w_run(2 * rto - 1);			/* just before the next */
	CHECK_EQ(w_info(ab).backoff, 1);
	jiffies++;
	CHECK_EQ(kmock_fire_timers(), 1);	/* its work waits for a worker */
	w_dispatch(&gap->h, gap->data);		/* the receiver repeats the hole */
	w_pump();				/* the work */
	CHECK(ab->timer.pending, "%u unacknowledged, no timer armed",
	      w_info(ab).snd_nxt - w_info(ab).snd_una);
	w_run(8 * rto);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_read(B, 16, seq), 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(seq[i], i + 2);	/* after the RTT sample */
	free(gap);
	w_teardown();
}

/*
 * A message the receiver held past a hole is acknowledged only when the
 * hole is repaired, later than it arrived: no RTT sample from it.  Here the
 * hole's first resend is lost and the next goes 100 ms later, on a
 * repeated gap report; a sample from the held messages would be 100 ms
 * against a 1 ms round trip (under 5% loss the host model's RTO grew to
 * hundreds of ms that way, with no timeout at all).  rto_min_ms is raised
 * so that no timeout comes first.
 */
static void test_snd_rtt_held(void)
{
	struct w_frame *gap = malloc(sizeof(*gap));
	unsigned int min = dp_rto_min_ms;
	u32 i, srtt;

	dp_rto_min_ms = 500;
	two_open(262144);
	CHECK_EQ(w_send(ab, 100), 0);		/* a 1 ms sample */
	w_run(1);
	srtt = ab->rtt.srtt;
	CHECK(srtt && srtt <= 2000, "srtt %u us", srtt);
	hole_seq = w_info(ab).snd_nxt;
	hole_drops = 2;		/* the message and its first resend */
	w.drop = drop_hole;
	for (i = 0; i < 8; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(hole_drops, 0);
	CHECK_EQ(ab->held, 7);
	*gap = *w_last(DP_WT_ACK, DP_WF_GAP);
	kmock_advance(100);
	w_dispatch(&gap->h, gap->data);		/* the receiver repeats it */
	w_run(1);				/* the resend, its ACK */
	CHECK_EQ(w_stats(A).tx_retrans, 2);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ab).backoff, 0);	/* no timeout */
	CHECK_EQ(ab->rtt.srtt, srtt);		/* and no sample */
	CHECK_EQ(w_read(B, 16, NULL), 9);
	dp_rto_min_ms = min;
	free(gap);
	w_teardown();
}

/* Two holes, each lost once: SACK has both resent in one round trip. */
static u32 sack_h1, sack_h2;
static unsigned int sack_drops;
static bool drop_two_once(const struct w_frame *f)
{
	if (f->h.type != DP_WT_DATA || (f->h.seq != sack_h1 && f->h.seq != sack_h2))
		return false;
	if (f->h.seq == sack_h1)
		sack_h1 = 0;
	else
		sack_h2 = 0;
	sack_drops++;
	return true;
}

/* One hop: deliver the frames on the link now (not those they cause). */
static void hop(void)
{
	unsigned int i, n = w.n_frames;

	for (i = 0; i < n; i++) {
		struct w_frame *f = &w.frames[i];

		if (f->done)
			continue;
		f->done = true;
		if (!w.drop || !w.drop(f))
			w_dispatch(&f->h, f->data);
	}
	kmock_run();
}

static void test_snd_sack_holes(void)
{
	u32 seq[8], i, base;

	two_open(262144);
	base = w_info(ab).snd_nxt;
	sack_h1 = base + 1;
	sack_h2 = base + 3;
	sack_drops = 0;
	w.drop = drop_two_once;
	for (i = 0; i < 6; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	hop();					/* DATA: two lost */
	CHECK_EQ(sack_drops, 2);
	hop();					/* the gap report's map */
	CHECK_EQ(w_stats(A).tx_retrans, 2);	/* both holes, at once */
	CHECK_EQ(w_in_flight(), 2);
	w_run(2);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ab).backoff, 0);	/* no timeout */
	CHECK_EQ(w_stats(A).tx_retrans, 2);
	CHECK_EQ(w_read(B, 8, seq), 6);
	for (i = 0; i < 6; i++)
		CHECK_EQ(seq[i], i + 1);
	w_teardown();
}

/*
 * What the receiver holds past a hole leaves the window: a sender whose
 * first message is lost keeps sending while the hole is repaired, where
 * it stopped at a window of messages; a timeout forgets the map (the
 * receiver may drop a held message it cannot place, docs/reliability.md).
 */
static void test_snd_sack_window(void)
{
	u32 i, cwnd, rto, full = w.nodes[0].max_msg;

	two_open(262144);
	CHECK_EQ(w_send(ab, full), 0);		/* an RTT sample */
	w_run(1);
	w_read(B, 8, NULL);
	rto = w_info(ab).rto_ms;
	hole_seq = w_info(ab).snd_nxt;
	hole_drops = 1000;
	w.drop = drop_hole;
	cwnd = w_info(ab).cwnd / w_mss();	/* full frames */
	CHECK_EQ(w_info(ab).cwnd, cwnd * w_mss());
	for (i = 0; i < cwnd; i++)
		CHECK_EQ(w_send(ab, full), 0);
	CHECK_EQ(w_send(ab, full), -EAGAIN);	/* the window is full */
	w_run(1);				/* the map says cwnd - 1 held */
	CHECK_EQ(ab->held, cwnd - 1);
	CHECK_EQ(ab->held_bytes, (cwnd - 1) * w_mss());
	CHECK_EQ(w_send(ab, full), 0);		/* they left the window */
	w_run(rto + 1);				/* the hole stays lost: timeout */
	CHECK(w_info(ab).backoff >= 1, "backoff %u", w_info(ab).backoff);
	hole_drops = 0;
	w_run(3 * rto);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(ab->held, 0);
	CHECK_EQ(ab->held_bytes, 0);
	CHECK_EQ(w_read(B, 64, NULL), cwnd + 1);
	w_teardown();
}

/* A reported hole: only the missing message goes again, at once. */
static void test_snd_fast_resend(void)
{
	u32 seq[8], i;

	two_open(65536);
	first_seq = w_info(ab).snd_nxt;
	w.drop = drop_first_once;
	for (i = 0; i < 5; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_GAP), 1);
	CHECK_EQ(w_count(DP_WT_DATA, 0), 6);
	CHECK_EQ(w_stats(A).tx_retrans, 1);
	/* a hole takes the window no lower than a session starts with */
	CHECK_EQ(w_info(ab).cwnd, DP_CWND_INIT * w_mss());
	w_run(1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_read(B, 8, seq), 5);
	for (i = 0; i < 5; i++)
		CHECK_EQ(seq[i], i + 1);
	w_teardown();
}

/*
 * DP_WF_ACKNOW (docs/reliability.md 5.3): the message that takes the bytes
 * in flight to half the congestion window asks for its ACK at once, and
 * the receiver sends it without waiting for its tick, so the window opens
 * while its second half goes.  Only that one message asks, and one again
 * once the ACK has emptied the window; a window over twice the credit
 * never gets there, and nothing asks.
 */
static void test_snd_ack_now(void)
{
	u32 full = w.nodes[0].max_msg, half = DP_CWND_INIT / 2, i;
	const struct w_frame *f;
	unsigned int acks;

	two_open(1u << 20);
	for (i = 0; i < half - 1; i++)
		CHECK_EQ(w_send(ab, full), 0);
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), 0);
	CHECK_EQ(w_send(ab, full), 0);		/* the half's last byte */
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), 1);
	f = w_last(DP_WT_DATA, DP_WF_ACKNOW);
	CHECK(f && f->h.seq == w_info(ab).snd_nxt - 1, "asked: seq %u of %u",
	      f ? f->h.seq : 0, w_info(ab).snd_nxt - 1);
	CHECK_EQ(w_send(ab, full), 0);		/* past the half: asks nothing */
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), 1);
	acks = acks_from_b();
	w_pump();			/* delivered, and no tick passes */
	CHECK(acks_from_b() > acks, "no ACK before the tick");
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_read(B, 64, NULL);
	while (w_send(ab, full) == 0)		/* an empty window: again, once */
		;
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), 2);
	w_teardown();

	two_open(65536);			/* credit, not the window, binds */
	for (i = 0; i < 20; i++) {
		while (w_send(ab, full) == 0)
			;
		w_run(1);
		w_read(B, 64, NULL);
		w_run(1);
	}
	CHECK(w_info(ab).cwnd / 2 > 65536, "cwnd %u", w_info(ab).cwnd);
	acks = w_count(DP_WT_DATA, DP_WF_ACKNOW);
	for (i = 0; i < 20; i++) {
		while (w_send(ab, full) == 0)
			;
		w_run(1);
		w_read(B, 64, NULL);
		w_run(1);
	}
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), acks);
	w_teardown();
}

/*
 * The resend that fills a hole is acknowledged at once, with what was
 * held past it: the sender's credit and copies wait for that ACK.
 */
static void test_snd_hole_filled_ack(void)
{
	u32 i;

	two_open(65536);
	first_seq = w_info(ab).snd_nxt;
	w.drop = drop_first_once;
	for (i = 0; i < 5; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	CHECK_EQ(w_count(DP_WT_DATA, DP_WF_ACKNOW), 0);
	w_pump();			/* gap report, resend, its ACK: no tick */
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_GAP), 1);
	CHECK_EQ(w_stats(A).tx_retrans, 1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(dp_snd_unacked(ab), 0);
	CHECK_EQ(w_read(B, 8, NULL), 5);
	w_teardown();
}

/* An ACK of a message sent once is an RTT sample (Karn): the RTO follows. */
static void test_snd_rtt_sample(void)
{
	two_open(65536);
	CHECK_EQ(w_info(ab).rto_ms, 200);
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);		/* a 1 ms round trip: the floor, rto_min_ms */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ab).rto_ms, 20);
	w_teardown();
}

/*
 * One deadline per session, armed lazily: round trips move it with every
 * send and every ACK, but the timer is touched about once per RTO, not per
 * message; the deadline still holds when a message is lost.
 */
static void test_snd_lazy_timer(void)
{
	unsigned int i, rto;
	long ops;

	two_open(65536);
	ops = kmock_mod_timers;
	for (i = 0; i < 100; i++) {
		CHECK_EQ(w_send(ab, 1), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	ops = kmock_mod_timers - ops;
	rto = w_info(ab).rto_ms;
	CHECK(ops <= 100 / rto + 2, "%ld timer operations for 100 round trips", ops);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_RETURN), 0);	/* never idle that long */
	w.drop = drop_data;
	CHECK_EQ(w_send(ab, 1), 0);
	w_run(rto - 1);
	CHECK_EQ(w_stats(A).tx_retrans, 0);
	w_run(1);
	CHECK_EQ(w_stats(A).tx_retrans, 1);	/* on time (and lost too) */
	w.drop = NULL;
	w_run(2 * rto);				/* backoff: the next at 2 RTO */
	CHECK_EQ(w_stats(A).tx_retrans, 2);
	w_run(2);				/* its delayed ACK */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_queued(B), 1);
	w_teardown();
}

/*
 * Copy slots: once the first messages are acknowledged their slots carry
 * the next ones, so a stream of round trips allocates nothing, whichever
 * of the two slot sizes its messages take; a session that goes idle
 * (credit given back) frees its spare slots.
 */
static void test_snd_copy_slots(void)
{
	long live, allocs;
	unsigned int i;

	two_open(65536);
	/* the 1-byte send that opened it cut a page of DP_SND_SMALL slots */
	CHECK_EQ(kmock_pages_live, 1);
	CHECK_EQ(ab->n_spare, PAGE_SIZE / DP_SND_SMALL);
	/*
	 * Acknowledged copies are taken back by the next send after it has
	 * its own: two in flight here, then one more, make the three
	 * DP_SND_SLOT slots that the stream needs at most.  They are cut two
	 * to a page: the three (and a spare) take two pages.
	 */
	CHECK_EQ(w_send(ab, 1000), 0);
	CHECK_EQ(w_send(ab, 1000), 0);
	CHECK_EQ(kmock_pages_live, 2);
	w_run(1);
	CHECK_EQ(w_send(ab, 1000), 0);
	w_run(1);
	CHECK_EQ(kmock_pages_live, 3);
	allocs = kmock_kmalloc_snd;
	for (i = 0; i < 100; i++) {
		/* the two sizes in turn: 1 to 100 bytes, and 1000 */
		CHECK_EQ(w_send(ab, i % 2 ? 1000 : 1 + i), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK_EQ(kmock_kmalloc_snd, allocs);	/* none by the sender */
	CHECK_EQ(kmock_pages_live, 3);
	CHECK_EQ(w_read(B, 3, NULL), 3);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	live = kmock_kmalloc_live;
	w_run(150);
	CHECK(w_count(DP_WT_ACK, DP_WF_RETURN) == 1, "the idle sender gave its credit back");
	/* and its spare slots: every page of them */
	CHECK_EQ(kmock_kmalloc_live, live - 3);
	CHECK_EQ(kmock_pages_live, 0);
	w_teardown();
}

/*
 * A change of size: a burst of small messages leaves the slots' cap full
 * of small spares.  A stream of 1000-byte round trips after it lets the
 * coldest spare of the old size go at each miss, so it soon allocates
 * nothing (were the small spares kept, each of its copies would be
 * allocated and freed again), and the slots never outnumber the cap.
 */
/* The slots' cap (dp_snd_slots_cap()) at the window's size now. */
static u32 slots_cap(void)
{
	return max(DP_SND_SPARES, ab->cwnd / w_wt(0));
}

static void test_snd_copy_slots_resize(void)
{
	long allocs;
	u32 n, i;

	two_open(1u << 20);
	ab->cwnd = 64 * w_mss();
	ab->ssthresh = 64 * w_mss();
	for (n = 0; n < 1000 && !w_send(ab, 64); n++)
		;
	CHECK(n == slots_cap(), "a burst of %u, the window's", n);
	w_run(5);
	CHECK_EQ(w_read(B, n, NULL), n);
	CHECK_EQ(w_send(ab, 64), 0);		/* takes the burst's copies back */
	w_run(5);
	CHECK_EQ(w_read(B, 1, NULL), 1);
	CHECK(ab->n_spare + ab->n_unacked >= n, "%u spare, %u in flight, cap %u",
	      ab->n_spare, ab->n_unacked, slots_cap());
	allocs = kmock_kmalloc_snd;
	for (i = 0; i < 10; i++) {
		CHECK_EQ(w_send(ab, 1000), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK(kmock_kmalloc_snd - allocs <= 2, "%ld allocations for ten",
	      kmock_kmalloc_snd - allocs);
	allocs = kmock_kmalloc_snd;
	for (i = 0; i < 100; i++) {
		CHECK_EQ(w_send(ab, 1000), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
		/* the cap, and the copy a send holds before it is admitted */
		CHECK(ab->n_spare + ab->n_unacked <= slots_cap() + 1,
		      "%u spare, %u in flight, cap %u", ab->n_spare,
		      ab->n_unacked, slots_cap());
	}
	CHECK_EQ(kmock_kmalloc_snd, allocs);	/* none by the sender */
	w_teardown();
}

/*
 * Jumbo frames: a message longer than DP_SND_SLOT that fits one frame of
 * the link (9000-byte MTU) is copied into a frame-sized slot, reused like
 * the small ones: no allocation per message (each was a fresh allocation
 * from the page allocator, zeroed every time).
 */
static void test_snd_copy_slots_jumbo(void)
{
	long allocs;
	unsigned int i;

	two_open(262144);
	w.nodes[0].max_msg = 8948;
	w.nodes[1].max_msg = 8948;
	CHECK_EQ(w_send(ab, 8000), 0);		/* the three slots, as above */
	CHECK_EQ(w_send(ab, 8000), 0);
	w_run(1);
	CHECK_EQ(w_send(ab, 8000), 0);
	w_run(1);
	CHECK_EQ(w_read(B, 3, NULL), 3);
	allocs = kmock_kmalloc_snd;
	for (i = 0; i < 100; i++) {
		CHECK_EQ(w_send(ab, 2049 + i * 61), 0);	/* 2049 to 8088 bytes */
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK_EQ(kmock_kmalloc_snd, allocs);	/* none by the sender */
	w_teardown();
}

/*
 * A NIC that sends from the kept copy (the tulip backend) holds a
 * reference on it until its chip has read it (struct dp_txref).  A copy
 * acknowledged while the NIC still holds it leaves the session: it is not
 * reused for the next message, which would change bytes the chip may yet
 * read; the next send takes a fresh slot, and the NIC's put frees the one
 * it held.  The world's NIC checks, when it lets go, that the bytes it
 * held did not change.
 */
static void test_snd_nic_holds_copy(void)
{
	long live, allocs;
	unsigned int i;

	two_open(65536);
	w.nic_late = true;	/* the NIC holds past the ACK */
	memset(w_payload, 'a', 1000);
	CHECK_EQ(w_send(ab, 1000), 0);
	w_run(50);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);	/* acknowledged */
	CHECK_EQ(w.n_held, 1);
	allocs = kmock_kmalloc_snd;
	live = kmock_kmalloc_live;
	/*
	 * The next send takes back the acknowledged copy after it has its
	 * own: the one after that would reuse it, and takes a fresh one.
	 * Slots come two to a page: 'b' is the other half of 'a's page (its
	 * spare), 'c' the first of a new page; 'a's slot is neither.
	 */
	memset(w_payload, 'b', 1000);
	CHECK_EQ(w_send(ab, 1000), 0);
	CHECK_EQ(kmock_kmalloc_snd, allocs);	/* the spare half */
	memset(w_payload, 'c', 1000);
	CHECK_EQ(w_send(ab, 1000), 0);
	CHECK_EQ(kmock_kmalloc_snd, allocs + 1);	/* not the held one */
	CHECK_EQ(w.n_held, 3);
	w_nic_release();	/* checks 'a' is still there; lets it go */
	CHECK_EQ(kmock_kmalloc_live, live + 1);	/* 'b' keeps its page */
	w_run(50);
	CHECK_EQ(w_read(B, 3, NULL), 3);
	/*
	 * A NIC that lets go before the ACKs come costs no slot once the
	 * stream has the three it needs (test_snd_copy_slots()).
	 */
	w.nic_late = false;
	for (i = 0; i < 20; i++) {
		if (i == 5)
			allocs = kmock_kmalloc_snd;
		memset(w_payload, 'c' + i, 1000);
		CHECK_EQ(w_send(ab, 1000), 0);
		w_run(1);
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
	CHECK_EQ(kmock_kmalloc_snd, allocs);
	CHECK_EQ(w.nic_sent, 23u);
	w_teardown();
}

/*
 * Idle: the unused credit goes back (RETURN) after credit_idle_ms; the
 * next send asks for a window (probe) before it goes.
 */
static void test_snd_idle_return_then_probe(void)
{
	const struct w_frame *f;
	struct dp_rcv_info ri;
	int err;

	two_open(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_RETURN), 0);
	w_run(120);
	f = w_last(DP_WT_ACK, DP_WF_RETURN);
	CHECK(f, "the idle sender gave its credit back");
	CHECK_EQ(w_info(ab).credit_left, 0);
	CHECK(w_rinfo(B, 1, 10, &ri), "B still knows A");
	CHECK_EQ(ri.credit_left, 0);
	CHECK(dp_snd_writable(ab, &err) && !err, "writable: a write asks at once");
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	f = w_last(DP_WT_ACK, DP_WF_PROBE);
	CHECK(f && f->h.seq == w_info(ab).snd_nxt, "a probe names snd_nxt");
	CHECK(!dp_snd_writable(ab, &err), "not writable while the probe is out");
	w_pump();
	CHECK(w_info(ab).credit_left > 0, "the probe's answer granted credit");
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);
	CHECK_EQ(w_queued(B), 2);
	w_teardown();
}

/* A lost window update: the probe goes again on the timer. */
static void test_snd_probe_again(void)
{
	two_open(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(150);	/* idle: the credit went back */
	w.drop = drop_everything;
	CHECK_EQ(w_send(ab, 100), -EAGAIN);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_PROBE), 1);
	w_run(1000);
	CHECK(w_count(DP_WT_ACK, DP_WF_PROBE) >= 3, "probes go on: %u",
	      w_count(DP_WT_ACK, DP_WF_PROBE));
	CHECK(w_info(ab).backoff >= 2, "with backoff");
	w.drop = NULL;
	CHECK_EQ(w_send_wait(ab, 100), 0);	/* the next probe is answered */
	CHECK(w_count(DP_WT_ACK, DP_WF_PROBE) >= 4, "after one more probe");
	w_run(1);
	CHECK_EQ(w_queued(B), 2);
	w_teardown();
}

/*
 * The soak's stall: a writer the congestion window holds back, whose credit
 * is short too.  Everything in flight is acknowledged with too little
 * credit for its message; the reader then takes all, and the window
 * update that says so is lost.  The sleeping writer still gets its
 * window: the session probes for it.  Here 32 full frames fill the window,
 * and the next message, a large one, costs more than the credit left.
 */
static unsigned int stall_ms;

/* A blocking send of @len bytes while @hook plays the world, 10 s at most. */
static int send_hooked(u32 len, void (*hook)(void))
{
	int err;

	kmock_wait_hook = hook;
	kmock_wait_rounds = 10000;
	err = dp_snd_send(ab, w_payload, len, false);
	kmock_wait_hook = NULL;
	return err;
}

static bool drop_acks(const struct w_frame *f)
{
	return f->h.type == DP_WT_ACK;
}

static void stall_hook(void)
{
	w_run(1);
	if (++stall_ms == 300)
		w.drop = NULL;
	if (w.drop || stall_ms > 300 || !w_queued(B) ||
	    w_info(ab).snd_una != w_info(ab).snd_nxt)
		return;
	w.drop = drop_acks;	/* the release's update is lost */
	w_read(B, 64, NULL);
}

static void test_snd_cwnd_wait_probes(void)
{
	u32 full = 1400, big = 10000;	/* w_setup()'s frame */
	unsigned int n = 0;
	int err;

	two_open(65536);
	CHECK_EQ(w.nodes[0].max_msg, full);
	while (w_send(ab, full) == 0)
		n++;
	CHECK_EQ(n, DP_CWND_INIT);	/* the window is full */
	CHECK(w_info(ab).credit_left < (s32)dp_frag_credit(big, full),
	      "credit left %d", w_info(ab).credit_left);
	stall_ms = 0;
	err = send_hooked(big, stall_hook);
	CHECK_EQ(err, 0);
	CHECK(stall_ms > 300, "sent after the updates were let through (%u ms)",
	      stall_ms);
	CHECK(w_count(DP_WT_ACK, DP_WF_PROBE) >= 1, "the session probed");
	w_run(100);
	CHECK_EQ(w_queued(B), 1);
	w_teardown();
}

/*
 * A writer sleeping for credit whose probe ended without it: another
 * writer's small message went meanwhile (the edge's want became its), and
 * the grant the reader's release then brought ended the probe.  The
 * sleeper must ask again itself: the update after the reader took all is
 * lost.
 */
static unsigned int ask_stage;
static s32 ask_credit;

static void ask_hook(void)
{
	w_run(1);
	stall_ms++;
	switch (ask_stage) {
	case 0:		/* another writer's small message fits */
		CHECK_EQ(w_send(ab, 100), 0);
		ask_stage++;
		break;
	case 1:		/* acknowledged: the reader frees one frame */
		if (w_info(ab).snd_una != w_info(ab).snd_nxt)
			break;
		ask_credit = w_info(ab).credit_left;
		CHECK_EQ(w_read(B, 1, NULL), 1);
		ask_stage++;
		break;
	case 2:		/* its update came: the reader takes all, unsaid */
		if (w_info(ab).credit_left <= ask_credit)
			break;
		w.drop = drop_acks;
		w_read(B, 64, NULL);
		stall_ms = 0;
		ask_stage++;
		break;
	case 3:
		if (stall_ms == 300) {
			w.drop = NULL;
			ask_stage++;
		}
		break;
	}
}

static void test_snd_wait_asks_again(void)
{
	u32 full = 1400, big = 10000;	/* w_setup()'s frame */
	int err;

	two_open(65536);
	while (w_send(ab, full) == 0)
		;
	w_run(1);	/* all acknowledged, none read */
	CHECK(w_info(ab).credit_left < (s32)dp_frag_credit(big, full),
	      "credit left %d", w_info(ab).credit_left);
	ask_stage = 0;
	err = send_hooked(big, ask_hook);
	CHECK_EQ(err, 0);
	CHECK_EQ(ask_stage, 4);
	w_run(100);
	CHECK_EQ(w_queued(B), 1);	/* the large one: the reader took the rest */
	w_teardown();
}

/*
 * A poller's edge with no credit left at all, every message acknowledged,
 * and the window update after the reader took all lost: idle, the session
 * gives back what is left (nothing), so poll() says a write may ask.
 */
static void test_snd_idle_return_of_nothing(void)
{
	u32 full = 1400, space = DP_TOKEN_SPACE(full);	/* w_setup()'s frame */
	u32 left;
	int err;

	two_open(65536);
	while (w_info(ab).credit_left >= (s32)space) {
		if (w_send(ab, full))
			w_run(1);	/* the congestion window */
	}
	left = w_info(ab).credit_left;
	CHECK(left > sizeof(struct dp_token) && left % DP_TOKEN_ALIGN == 0, "left %u", left);
	CHECK_EQ(w_send(ab, left - sizeof(struct dp_token)), 0);
	w_run(1);
	CHECK_EQ(w_info(ab).credit_left, 0);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK(!dp_snd_writable(ab, &err), "no credit: not writable");
	w.drop = drop_acks;	/* the release's update is lost */
	CHECK(w_read(B, 64, NULL) > 40, "the reader takes all");
	w_run(50);
	w.drop = NULL;
	w_run(1000);
	CHECK(dp_snd_writable(ab, &err) && !err, "idle, given back: a write may ask");
	CHECK_EQ(w_send(ab, full), -EAGAIN);	/* it asks */
	w_run(10);
	CHECK_EQ(w_send(ab, full), 0);
	w_run(10);
	CHECK_EQ(w_queued(B), 1);
	w_teardown();
}

/* The receiver closes: its RESET acks what arrived, then ECONNRESET. */
static void test_snd_reset_by_close(void)
{
	two_open(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);
	w_close(B);
	CHECK_EQ(w_count(DP_WT_RESET, DP_WF_ACK), 1);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK_EQ(w_stats(A).tx_undelivered, 0);
	CHECK(w.ev_state == DP_SND_FAILED && w.ev_err == -ECONNRESET,
	      "the reset is announced");
	CHECK_EQ(w.ev_peer, 0);		/* the same incarnation: no restart */
	CHECK_EQ(w_send(ab, 100), -ECONNRESET);
	w_teardown();
}

/* A restarted receiver (new incarnation) answers old DATA with a RESET. */
static void test_snd_reset_by_restart(void)
{
	struct dp_endpoint *b2;

	two_open(65536);
	w_close(B);
	w_drop_all();			/* its RESET is lost */
	b2 = w_ep(2, &w.nodes[1], 20, 65536, B_INC + 1);
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_STALE], 1);
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK_EQ(w.ev_peer, 1);		/* announced: the receiver restarted */
	CHECK_EQ(w_stats(A).tx_undelivered, 1);
	CHECK_EQ(w_send(ab, 100), -ECONNRESET);
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* a new session with the new B */
	w_pump();
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(1);
	CHECK_EQ(w_queued(b2), 1);
	w_teardown();
}

/* The sender closes: FIN, and the receiver forgets it and its credit. */
static void test_snd_fin(void)
{
	const struct w_frame *f;

	two_open(65536);
	CHECK_EQ(w_rx_peers(B), 1);
	w_close(A);
	CHECK_EQ(w_count(DP_WT_RESET, DP_WF_FIN), 1);
	f = w_last(DP_WT_RESET, DP_WF_FIN);
	CHECK(f && f->h.seq == w_info(ab).isn, "the FIN names the session");
	w_pump();
	CHECK_EQ(w_rx_peers(B), 0);
	w_teardown();
}

/* Messages never acknowledged are counted undelivered when the edge goes. */
static void test_snd_undelivered(void)
{
	two_open(65536);
	w.drop = drop_data;
	CHECK_EQ(w_send(ab, 100), 0);
	CHECK_EQ(w_send(ab, 100), 0);
	w_close(A);
	CHECK_EQ(w_stats(A).tx_undelivered, 2);
	CHECK_EQ(w.nodes[0].ctr[DP_CTR_TX_UNDELIVERED], 2);
	w_teardown();
}

/* Errors a send reports, each leaving the session as it was. */
static void test_snd_errors(void)
{
	u32 nxt, spare, i;

	two_open(65536);
	nxt = w_info(ab).snd_nxt;
	w.tx_err = -ENETDOWN;
	CHECK_EQ(w_send(ab, 100), -ENETDOWN);	/* taken back */
	CHECK_EQ(w_info(ab).snd_nxt, nxt);
	w.tx_err = -ERESTARTSYS;	/* a signal cut the NIC's wait short */
	CHECK_EQ(w_send(ab, 100), -ERESTARTSYS);	/* taken back: no hole */
	CHECK_EQ(w_info(ab).snd_nxt, nxt);
	w.tx_err = -ENOBUFS;			/* passing: the timer resends */
	CHECK_EQ(w_send(ab, 100), 0);
	CHECK_EQ(w_info(ab).snd_nxt, nxt + 1);
	w.tx_err = 0;
	kmock_uaccess_fail = 1;
	CHECK_EQ(w_send(ab, 100), -EFAULT);	/* its slot is spare again */
	/* the page of small slots: one in flight, the others spare */
	spare = ab->n_spare;
	CHECK_EQ(spare, PAGE_SIZE / DP_SND_SMALL - 1);
	kmock_kmalloc_fail = 1;
	for (i = 0; i < spare; i++)
		CHECK_EQ(w_send(ab, 100), 0);	/* in the spare slots */
	CHECK_EQ(kmock_kmalloc_fail, 1);
	CHECK_EQ(w_send(ab, 100), -ENOMEM);	/* none spare: allocation failed */
	/* beyond B's largest (fragmented), before anything is sent */
	CHECK_EQ(w_send(ab, dp_frag_max_msg(65536, 1400) + 1), -EMSGSIZE);
	CHECK_EQ(w_info(ab).snd_nxt, nxt + 1 + spare);
	w_run(300);
	CHECK_EQ(w_queued(B), 1 + spare);
	w_teardown();
}

const struct unit_test snd_tests[] = {
	{ "snd: HELLO opens the session, then DATA", test_snd_hello },
	{ "snd: a blocking send waits through the HELLO", test_snd_hello_blocking },
	{ "snd: HELLO retransmitted with backoff", test_snd_hello_backoff },
	{ "snd: silent peer: ETIMEDOUT once, then a new session", test_snd_unreachable },
	{ "snd: silent peer: a blocked writer gets ETIMEDOUT", test_snd_unreachable_blocking },
	{ "snd: refused HELLO: ECONNREFUSED", test_snd_refused },
	{ "snd: credit limits the sender; a read's window update frees it",
	  test_snd_credit_and_window_update },
	{ "snd: no window update per read while the sender waits (SWS)",
	  test_snd_sws },
	{ "snd: one message read at a time never stalls a blocked writer",
	  test_snd_sws_no_stall },
	{ "snd: a release unseen while the receiver starves re-grants at once",
	  test_snd_starve_race },
	{ "snd: the DATA header is a template built once per session",
	  test_snd_tmpl },
	{ "snd: cwnd slow start", test_snd_cwnd_slow_start },
	{ "snd: each DATA frame, resends too, leaves with the CRC run at its copy",
	  test_snd_crc_at_copy },
	{ "snd: the window counts bytes, a small message half a frame at least",
	  test_snd_cwnd_bytes },
	{ "snd: on a jumbo link a small message weighs a quarter frame, 128 at the floor",
	  test_snd_cwnd_jumbo },
	{ "snd: timeout: go back, cwnd to its floor, backoff", test_snd_goback },
	{ "snd: a timeout whose first resend is reported a duplicate is undone "
	  "(DP_WF_DUP): the window back",
	  test_snd_spurious_undo },
	{ "snd: a timeout whose late ACKs cover a message it had not resent is "
	  "undone, and its going back stops (F-RTO)", test_snd_frto_undo },
	{ "snd: a hole cuts the window, not below the initial one", test_snd_gap_cut },
	{ "snd: a lost resend goes again a round trip later, not at the timeout",
	  test_snd_lost_resend },
	{ "snd: timeout: acknowledgements clock out the rest of the window",
	  test_snd_goback_refill },
	{ "snd: a loss beyond what the receiver holds is recovered in round trips",
	  test_snd_burst_loss },
	{ "snd: gap report: the missing message resent once", test_snd_fast_resend },
	{ "snd: the message at half the window asks for its ACK at once (DP_WF_ACKNOW); "
	  "not while credit binds", test_snd_ack_now },
	{ "snd: the resend that fills a hole is acknowledged at once", test_snd_hole_filled_ack },
	{ "snd: SACK: every hole below the highest held resent in one round trip",
	  test_snd_sack_holes },
	{ "snd: SACK: held messages leave the window; a timeout forgets them",
	  test_snd_sack_window },
	{ "snd: a gap report between the timer and its work keeps the deadline",
	  test_snd_gap_after_timer },
	{ "snd: RTT sample sets the RTO", test_snd_rtt_sample },
	{ "snd: no RTT sample from a message the receiver held", test_snd_rtt_held },
	{ "snd: one lazily armed deadline, not a timer per message", test_snd_lazy_timer },
	{ "snd: copy slots reused, no allocation per message", test_snd_copy_slots },
	{ "snd: a change of size lets the old spares go", test_snd_copy_slots_resize },
	{ "snd: frame-sized copy slots for jumbo frames, reused", test_snd_copy_slots_jumbo },
	{ "snd: a batch's held frames leave before its writer waits on the peer",
	  test_snd_plug_flush },
	{ "snd: an acknowledged copy the NIC still holds is not reused; the NIC frees it",
	  test_snd_nic_holds_copy },
	{ "snd: idle RETURN, then a probe", test_snd_idle_return_then_probe },
	{ "snd: a lost probe goes again", test_snd_probe_again },
	{ "snd: a writer the window held back probes when credit is short",
	  test_snd_cwnd_wait_probes },
	{ "snd: a sleeping writer whose probe ended without its credit asks again",
	  test_snd_wait_asks_again },
	{ "snd: idle with no credit left, a poller's edge gives back nothing and may ask",
	  test_snd_idle_return_of_nothing },
	{ "snd: receiver closes: RESET with ack, ECONNRESET", test_snd_reset_by_close },
	{ "snd: receiver restarted: RESET, ECONNRESET, new session",
	  test_snd_reset_by_restart },
	{ "snd: sender closes: FIN", test_snd_fin },
	{ "snd: unacknowledged copies counted undelivered", test_snd_undelivered },
	{ "snd: ENETDOWN, a signal in the NIC's wait, passing NIC errors, EFAULT, ENOMEM, "
	  "EMSGSIZE", test_snd_errors },
	{ NULL, NULL },
};
