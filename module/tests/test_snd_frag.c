// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of large messages at the sender (dp_snd.c with dp_frag.c),
 * through a real receiver (dp_rcv.c) in the world of sess_world.c: how a
 * message is cut, its credit charged at the first fragment, fragments
 * sent as the window allows while the rest is still being copied, a lost
 * fragment resent alone, a message that cannot be finished given up with
 * its session, and what a reader of the receiver's pool sees of each.
 */
#include "sess_world.h"
#include "dp_frag.h"

#define FRAME	1400u

static struct dp_endpoint *A, *B;
static struct dp_snd *ab;

/* w_payload: bytes that differ from one fragment to the next. */
static void fill_payload(void)
{
	u32 i;

	for (i = 0; i < W_PAYLOAD; i++)
		w_payload[i] = (u8)(i * 31 + (i >> 11));
}

static void open_ab(u32 bpool)
{
	ab = w_pair(bpool, &A, &B);
	fill_payload();
	CHECK_EQ(w_send(ab, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
}

/* The reader's next message is w_payload's first @len bytes, number @seq. */
static void expect_msg(u32 len, u32 seq)
{
	struct dp_token *t = dp_ring_head(&B->pool.ring);

	CHECK(t != NULL, "a message of %u bytes", len);
	if (!t)
		return;
	CHECK_EQ(t->len, len);
	CHECK_EQ(t->seq, seq);
	CHECK_EQ(t->src_dpid, 10);
	CHECK(t->len == len && !memcmp(t + 1, w_payload, len), "bytes of %u", len);
	CHECK_EQ(w_read(B, 1, NULL), 1);
}

static u32 be32_at(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/*
 * A message of 5000 bytes goes as FIRST (its length, then 1396 bytes),
 * MID, MID, LAST, one seq each; its whole credit is charged at once.
 */
static void test_snd_frag_cut(void)
{
	static const u16 flags[] = {
		DP_WF_FRAG_FIRST, DP_WF_FRAG_MID, DP_WF_FRAG_MID, DP_WF_FRAG_LAST,
	};
	static const u16 lens[] = { 1400, 1400, 1400, 804 };
	u32 nxt, i, first;
	s32 left;

	open_ab(65536);
	left = w_info(ab).credit_left;
	nxt = w_info(ab).snd_nxt;
	first = w.n_frames;
	CHECK_EQ(w_send(ab, 5000), 0);	/* the window is open: no wait */
	CHECK_EQ(w_info(ab).snd_nxt, nxt + 4);
	CHECK_EQ(left - w_info(ab).credit_left, (s32)dp_frag_credit(5000, FRAME));
	CHECK_EQ(w.n_frames - first, 4);
	for (i = 0; i < 4 && first + i < w.n_frames; i++) {
		const struct w_frame *f = &w.frames[first + i];

		CHECK_EQ(f->h.type, DP_WT_DATA);
		CHECK_EQ(f->h.flags & DP_WF_FRAG_MASK, flags[i]);
		CHECK_EQ(f->h.len, lens[i]);
		CHECK_EQ(f->h.seq, nxt + i);
	}
	CHECK_EQ(be32_at(w.frames[first].data), 5000);
	CHECK(!memcmp(w.frames[first].data + 4, w_payload, 1396), "first bytes");
	CHECK(!memcmp(w.frames[first + 3].data, w_payload + 5000 - 804, 804),
	      "last bytes");
	w_run(5);
	expect_msg(5000, 1);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
}

static u32 max_flight, waits;

static void track_hook(void)
{
	struct dp_snd_info si = w_info(ab);

	if (si.snd_nxt - si.snd_una > max_flight)
		max_flight = si.snd_nxt - si.snd_una;
	waits++;
	w_run(1);
}

/* A blocking send of @len with the world running in its waits. */
static int send_tracked(u32 len)
{
	int err;

	max_flight = 0;
	waits = 0;
	kmock_wait_hook = track_hook;
	kmock_wait_rounds = 100000;
	err = dp_snd_send(ab, w_payload, len, false);
	kmock_wait_hook = NULL;
	return err;
}

/* DATA frames sent whose fragment bits are @bits. */
static unsigned int frags(u16 bits)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += w.frames[i].h.type == DP_WT_DATA &&
		     (w.frames[i].h.flags & DP_WF_FRAG_MASK) == bits;
	return n;
}

/*
 * Under a congestion window of 4, a message of 200 KiB (147 fragments)
 * flows 4 frames at a time while it is being copied: the writer waits
 * for the window mid-message, never more than the window is in flight,
 * and each fragment leaves once.
 */
static void test_snd_frag_pipelined(void)
{
	u32 len = 200 * 1024;

	open_ab(1u << 20);
	ab->cwnd = 4 * w_mss();
	ab->ssthresh = 4 * w_mss();	/* stay near it: one more per window acked */
	CHECK_EQ(send_tracked(len), 0);
	CHECK(waits > 0, "the writer waited for the window");
	CHECK(max_flight <= w_info(ab).cwnd / w_wt(FRAME),
	      "in flight %u, window %u bytes", max_flight, w_info(ab).cwnd);
	w_run(50);
	CHECK_EQ(frags(DP_WF_FRAG_FIRST), 1);
	CHECK_EQ(frags(DP_WF_FRAG_MID), dp_frag_count(len, FRAME) - 2);
	CHECK_EQ(frags(DP_WF_FRAG_LAST), 1);
	CHECK_EQ(w_stats(A).tx_retrans, 0);
	expect_msg(len, 1);
	w_teardown();
}

/*
 * The same message sent from a batch, the world holding its frames until
 * the plug is flushed: the writer flushes before each wait for the
 * window mid-message (the ACKs that open it need the frames held), and
 * the whole message arrives once the batch's end flushes the rest.
 */
static void test_snd_frag_plugged(void)
{
	u32 len = 200 * 1024;

	open_ab(1u << 20);
	ab->cwnd = 4 * w_mss();
	ab->ssthresh = 4 * w_mss();
	w.plug_ep = ab->se->ep;
	CHECK_EQ(send_tracked(len), 0);
	CHECK(waits > 0, "the writer waited for the window");
	CHECK(w.plug_flushes > 0, "the writer flushed before it waited");
	dp_tx_plug_flush(dp_tx_plugged(w.plug_ep));
	w.plug_ep = NULL;
	w_run(50);
	CHECK_EQ(frags(DP_WF_FRAG_FIRST), 1);
	CHECK_EQ(frags(DP_WF_FRAG_LAST), 1);
	CHECK_EQ(w_stats(A).tx_retrans, 0);
	expect_msg(len, 1);
	w_teardown();
}

static u32 lost_seq;
static unsigned int lost_times;

static bool drop_lost_once(const struct w_frame *f)
{
	if (f->h.type != DP_WT_DATA || f->h.seq != lost_seq || lost_times)
		return false;
	lost_times++;
	return true;
}

/* Count DATA frames sent with @seq. */
static unsigned int sent_with(u32 seq)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += w.frames[i].h.type == DP_WT_DATA && w.frames[i].h.seq == seq;
	return n;
}

/* A lost fragment is resent alone: the receiver holds those after it. */
static void test_snd_frag_lost(void)
{
	u32 len = 20000, n = dp_frag_count(len, FRAME), nxt, i;

	open_ab(1u << 20);
	nxt = w_info(ab).snd_nxt;
	lost_seq = nxt + 3;
	lost_times = 0;
	w.drop = drop_lost_once;
	CHECK_EQ(send_tracked(len), 0);
	w_run(50);
	w.drop = NULL;
	CHECK_EQ(lost_times, 1);
	for (i = 0; i < n; i++)
		CHECK(sent_with(nxt + i) == (nxt + i == lost_seq ? 2u : 1u),
		      "fragment %u sent %u times", i, sent_with(nxt + i));
	CHECK_EQ(w_stats(A).tx_retrans, 1);
	expect_msg(len, 1);
	w_teardown();
}

/*
 * A message cut short in the middle (here its writer's wait ends as by a
 * fatal signal): its session ends with a FIN, the receiver gives the
 * message up (counted once) and never shows a part of it; the next send
 * opens a new session and goes through whole.
 */
static void test_snd_frag_abort(void)
{
	u32 len = 20000;
	u64 drops, undelivered;

	open_ab(1u << 20);
	ab->cwnd = 4 * w_mss();
	ab->ssthresh = 4 * w_mss();
	drops = w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ];
	undelivered = w_stats(A).tx_undelivered;
	CHECK_EQ(w_send(ab, len), -EINTR);	/* nonblocking: no world runs */
	CHECK_EQ(w_info(ab).state, DP_SND_IDLE);
	CHECK_EQ(w_stats(A).tx_undelivered, undelivered + 1);	/* one message */
	CHECK_EQ(w_count(DP_WT_RESET, DP_WF_FIN), 1);
	w_pump();
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ], drops + 1);
	CHECK_EQ(w_queued(B), 0);
	CHECK(dp_ring_head(&B->pool.ring) == NULL, "no part of it");
	CHECK_EQ(B->pool.ring.nfill, 0);
	CHECK_EQ(send_tracked(len), 0);		/* a new session */
	w_run(50);
	expect_msg(len, 1);
	w_teardown();
}

/*
 * EMSGSIZE beyond what the receiver announced, decided once the session
 * is open (a nonblocking send before that says EAGAIN); a raw-sized limit
 * never applies to a reliable edge.
 */
static void test_snd_frag_limit(void)
{
	u32 max = dp_frag_max_msg(65536, FRAME);

	ab = w_pair(65536, &A, &B);
	CHECK_EQ(w_send(ab, max + 1), -EAGAIN);	/* HELLO sent, not answered */
	CHECK_EQ(dp_snd_max_msg(ab), FRAME);	/* a frame until it is */
	w_pump();
	CHECK_EQ(dp_snd_max_msg(ab), max);
	CHECK_EQ(w_send(ab, max + 1), -EMSGSIZE);
	CHECK_EQ(send_tracked(max), 0);
	w_run(50);
	expect_msg(max, 1);
	w_teardown();
}

/*
 * The first fragment cannot leave (@e: no route, or a signal cut the
 * NIC's wait short): the write says so and takes it back, and the
 * message ends before it began: the edge's next writers are not held
 * back behind it.
 */
static void first_not_sent(int e)
{
	open_ab(1u << 20);
	w.tx_err = e;
	CHECK_EQ(w_send(ab, 20000), e);
	w.tx_err = 0;
	CHECK(!ab->in_msg, "no large message in progress after %d", e);
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	CHECK_EQ(w_send(ab, 100), 0);		/* not EAGAIN behind it */
	CHECK_EQ(send_tracked(20000), 0);
	w_run(50);
	expect_msg(100, 1);
	expect_msg(20000, 2);
	w_teardown();
}

static void test_snd_frag_first_unreach(void)
{
	first_not_sent(-EHOSTUNREACH);
}

static void test_snd_frag_first_eintr(void)
{
	first_not_sent(-EINTR);
}

static bool drop_data_after_lost(const struct w_frame *f)
{
	return f->h.type == DP_WT_DATA && f->h.seq != lost_seq;
}

/*
 * The session fails (ETIMEDOUT) while a large message's writer waits to
 * send its next fragments: that write reports the error, once; the next
 * write opens a new session.
 */
static void test_snd_frag_fail_once(void)
{
	open_ab(1u << 20);
	ab->cwnd = 4 * w_mss();
	ab->ssthresh = 4 * w_mss();
	lost_seq = w_info(ab).snd_nxt;		/* only the first gets through */
	w.drop = drop_data_after_lost;
	CHECK_EQ(send_tracked(20000), -ETIMEDOUT);
	w.drop = NULL;
	CHECK(!ab->in_msg, "no large message in progress");
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* a new session's HELLO */
	CHECK_EQ(w_info(ab).state, DP_SND_HELLO);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	w_teardown();
}

static u32 copies, pause_at, acked_at_pause;
static bool pause_watched;

/*
 * The copy of fragment pause_at hangs past unreach_ms, everything sent
 * before it acknowledged.  Watched: the world runs meanwhile, so the
 * receiver's watch gives the open message up; else nothing runs (neither
 * host was run), and the receiver still has it open.
 */
static void pause_hook(void)
{
	if (++copies != pause_at)
		return;
	w_run(50);
	acked_at_pause = w_info(ab).snd_una == w_info(ab).snd_nxt;
	if (pause_watched)
		w_run(dp_unreach_ms + dp_unreach_ms / 2);
	else
		jiffies += dp_unreach_ms + 1;
}

/* The index in w.frames of the first DATA of seq @seq at or after @from. */
static u32 data_at(u32 seq, u32 from)
{
	while (from < w.n_frames && !(w.frames[from].h.type == DP_WT_DATA &&
				      w.frames[from].h.seq == seq))
		from++;
	return from;
}

/* An ACK of @seq (or later) among w.frames[@from + 1 .. @to - 1]. */
static bool acked_between(u32 seq, u32 from, u32 to)
{
	while (++from < to && from < w.n_frames)
		if (w.frames[from].h.type == DP_WT_ACK &&
		    !dp_seq_before(w.frames[from].h.ack, seq))
			return true;
	return false;
}

/*
 * A large message's writer silent past unreach_ms mid-message (its copy
 * hung on a page nobody serves): the receiver may have given the message
 * up, so the fragment sent after the pause goes alone and the rest waits
 * for its answer.  Watched (the receiver gave up): a RESET answers, and
 * the write reports ECONNRESET itself (before, it sent the rest before
 * the RESET came back and returned 0, and the next write took the error);
 * nothing more of it goes, the receiver shows no part of it, and the next
 * write opens a new session.  Not watched (the receiver has it open): an
 * ACK answers, the rest follows, and the message arrives whole.
 */
static void silent_mid_message(bool watched)
{
	u32 len = 20000, data, seq, lone, next;
	u64 drops;

	open_ab(1u << 20);
	drops = w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ];
	copies = 0;
	pause_at = 5;
	pause_watched = watched;
	acked_at_pause = false;
	kmock_uaccess_hook = pause_hook;
	data = w_count(DP_WT_DATA, 0);
	seq = w_info(ab).snd_nxt;
	CHECK_EQ(send_tracked(len), watched ? -ECONNRESET : 0);
	kmock_uaccess_hook = NULL;
	CHECK(acked_at_pause, "all sent before the pause acknowledged");
	lone = data_at(seq + pause_at - 1, 0);
	next = data_at(seq + pause_at, lone);
	CHECK(lone < w.n_frames, "the fragment after the pause was sent");
	w_run(50);
	if (watched) {
		CHECK_EQ(w_count(DP_WT_DATA, 0) - data, pause_at);
		CHECK_EQ(w_info(ab).state, DP_SND_IDLE);
		/* the message given up, and the lone fragment nobody took */
		CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ], drops + 2);
		CHECK(dp_ring_head(&B->pool.ring) == NULL, "no part of it");
		CHECK_EQ(B->pool.ring.nfill, 0);
	} else {
		CHECK(next < w.n_frames, "the rest was sent");
		CHECK(acked_between(seq + pause_at - 1, lone, next),
		      "the rest waited for the lone fragment's ACK");
		CHECK(w_count(DP_WT_DATA, 0) - data >= dp_frag_count(len, FRAME),
		      "all fragments");
		CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ], drops);
		expect_msg(len, 1);
	}
	CHECK(!ab->in_msg, "no large message in progress");
	CHECK_EQ(send_tracked(100), 0);
	CHECK_EQ(send_tracked(len), 0);
	w_run(50);
	expect_msg(100, watched ? 1 : 2);
	expect_msg(len, watched ? 2 : 3);
	w_teardown();
}

static void test_snd_frag_silent_watched(void)
{
	silent_mid_message(true);
}

static void test_snd_frag_silent_unwatched(void)
{
	silent_mid_message(false);
}

static int waiter_err;
static bool waiter_tried;

/* Once the session has failed under the large message: a second writer. */
static void waiter_hook(void)
{
	w_run(1);
	if (!waiter_tried && w_info(ab).state == DP_SND_FAILED) {
		waiter_tried = true;
		waiter_err = w_send(ab, 100);
	}
}

/*
 * The same, with another writer that comes while the session has failed
 * and the large message's writer has not yet said so: it waits behind the
 * message (EAGAIN here, nonblocking) and does not take the error, which
 * only the large message's write reports.
 */
static void test_snd_frag_fail_waiter(void)
{
	int err;

	open_ab(1u << 20);
	ab->cwnd = 4 * w_mss();
	ab->ssthresh = 4 * w_mss();
	lost_seq = w_info(ab).snd_nxt;
	w.drop = drop_data_after_lost;
	waiter_tried = false;
	kmock_wait_hook = waiter_hook;
	kmock_wait_rounds = 100000;
	err = dp_snd_send(ab, w_payload, 20000, false);
	kmock_wait_hook = NULL;
	w.drop = NULL;
	CHECK_EQ(err, -ETIMEDOUT);
	CHECK(waiter_tried, "a writer came while the session had failed");
	CHECK_EQ(waiter_err, -EAGAIN);
	CHECK(!ab->in_msg, "no large message in progress");
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* a new session's HELLO */
	CHECK_EQ(w_info(ab).state, DP_SND_HELLO);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	CHECK_EQ(w_send(ab, 100), 0);
	w_teardown();
}

/*
 * The receiver's largest message shrinks after a large one was sent (its
 * link's frame grew): the first fragment it now refuses can never arrive,
 * and its answers would keep the session alive for good.  The session
 * fails with EMSGSIZE within one round trip, the next write reports it
 * once, and the edge goes on in a new session.
 */
static void test_snd_frag_limit_shrinks(void)
{
	u32 max = dp_frag_max_msg(65536, FRAME);

	open_ab(65536);
	w.nodes[1].max_msg = 9000;		/* B's link: a larger frame */
	CHECK(dp_frag_max_msg(65536, 9000) < max, "the limit shrinks");
	CHECK_EQ(send_tracked(max), 0);		/* every fragment is out */
	w_run(1000);
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK(dp_ring_head(&B->pool.ring) == NULL, "no part of it");
	w.nodes[1].max_msg = FRAME;
	CHECK_EQ(w_send(ab, 100), -EMSGSIZE);	/* the session's error, once */
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* a new session's HELLO */
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	CHECK_EQ(send_tracked(100), 0);
	w_run(50);
	expect_msg(100, 1);
	w_teardown();
}

/*
 * Three senders to one pool, each sending large messages (a quarter of
 * the pool, costing half of it: Open MPI's 1 MiB segments to a 4 MiB
 * pool), nonblocking and retried as an MPI provider does, while the
 * reader takes everything at once.  No two costs fit together, so each
 * message needs the room the others hold.  A sender that waits for a
 * large message must not keep the part of the window it got meanwhile:
 * two such waiters, each holding part and neither enough, wait for good
 * (Open MPI over dp hung so with 1 MiB segments).  Every message arrives,
 * whole and in order per sender.
 */
#define CROWD		3
#define CROWD_MSGS	40

/* The length of sender @i's message @n: mostly large, some small. */
static u32 crowd_len(unsigned int i, unsigned int n)
{
	u32 x = (i * 2654435761u) ^ (n * 40503u + 0x9e37u);

	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return x % 4 ? 8192 + x % 8193 : 1 + x % 1400;
}

static void test_snd_frag_crowd(void)
{
	struct dp_endpoint *from[CROWD];
	struct dp_snd *to_b[CROWD];
	unsigned int sent[CROWD] = { 0 }, got[CROWD] = { 0 }, total = 0;
	u32 ms, i, len;

	w_setup();
	fill_payload();
	B = w_ep(1, &w.nodes[1], 20, 65536, W_B_INC);
	for (i = 0; i < CROWD; i++) {
		from[i] = w_ep(i ? i + 1 : 0, &w.nodes[0], 10 + i, 65536,
			       W_A_INC + i);
		to_b[i] = w_connect(from[i], 2, 20);
	}
	CHECK(dp_frag_credit(16384, FRAME) > 65536 / 2, "no two fit");
	for (ms = 0; ms < 30000 && total < CROWD * CROWD_MSGS; ms++) {
		for (i = 0; i < CROWD; i++)
			if (sent[i] < CROWD_MSGS &&
			    !w_send(to_b[i], crowd_len(i, sent[i])))
				sent[i]++;
		w_run(1);
		for (;;) {
			struct dp_token *t = dp_ring_head(&B->pool.ring);

			if (!t)
				break;
			i = t->src_dpid - 10;
			if (i < CROWD) {
				len = crowd_len(i, got[i]);
				CHECK(t->len == len && !memcmp(t + 1, w_payload, len),
				      "sender %u message %u whole", i, got[i]);
				CHECK_EQ(t->seq, ++got[i]);
			}
			total++;
			w_read(B, 1, NULL);
		}
	}
	printf("#   crowd: %u messages in %u ms\n", total, ms);
	for (i = 0; i < CROWD; i++)
		CHECK(got[i] == CROWD_MSGS, "sender %u: %u of %u messages (%u sent)",
		      i, got[i], CROWD_MSGS, sent[i]);
	w_teardown();
}

/*
 * Two senders of small messages (DPIDs 10 and 12) and one of a large one
 * (11), to B's 64 KiB pool.
 */
static struct dp_snd *small_to_b, *small2_to_b, *large_to_b;

static void open_two(void)
{
	struct dp_endpoint *s1, *s2, *s3;

	w_setup();
	fill_payload();
	B = w_ep(1, &w.nodes[1], 20, 65536, W_B_INC);
	s1 = w_ep(0, &w.nodes[0], 10, 65536, W_A_INC);
	s2 = w_ep(2, &w.nodes[0], 11, 65536, W_A_INC + 1);
	s3 = w_ep(3, &w.nodes[0], 12, 65536, W_A_INC + 2);
	small_to_b = w_connect(s1, 2, 20);
	large_to_b = w_connect(s2, 2, 20);
	small2_to_b = w_connect(s3, 2, 20);
}

/*
 * Read B's messages but the newest @keep bytes' worth at least (the reader
 * keeps them); count the large one (from DPID 11).
 */
static unsigned int read_but(u32 keep, unsigned int *large)
{
	struct dp_ring *ring = &B->pool.ring;
	unsigned int n = 0;
	struct dp_token *t;

	while ((t = dp_ring_head(ring)) &&
	       ring->prod - ring->cons >= keep + DP_TOKEN_SPACE(t->len)) {
		if (t->src_dpid == 11)
			(*large)++;
		n++;
		w_read(B, 1, NULL);
	}
	return n;
}

/*
 * Two streams of small messages, @per_ms each a millisecond (0: as fast as
 * the credit allows), while the reader takes all: a large message that
 * costs more than half the pool comes in turn, not never.
 */
static void large_turn(unsigned int per_ms)
{
	unsigned int large = 0, small = 0, ms, i;
	bool sent = false;

	open_two();
	for (ms = 0; ms < 150 && !large; ms++) {
		for (i = 0; i < per_ms || !per_ms; i++)
			if (w_send(small_to_b, 1000))
				break;
		for (i = 0; i < per_ms || !per_ms; i++)
			if (w_send(small2_to_b, 1000))
				break;
		if (!sent && ms >= 30)		/* the streams run by then */
			sent = !w_send(large_to_b, 16384);
		w_run(1);
		small += read_but(0, &large);
	}
	CHECK(large == 1, "%u a ms: the large message arrived (after %u ms, %u small ones)",
	      per_ms, ms, small);
	printf("#   large turn, %u a ms: after %u ms, %u small ones\n", per_ms,
	       ms, small);
	w_teardown();
}

static void test_snd_frag_large_turn(void)
{
	large_turn(0);
	large_turn(4);
}

/*
 * The reader keeps 32 KiB of messages unread: the large message cannot
 * fit until it reads them, and meanwhile no room is kept for it: the
 * small sender goes on.  Once the reader takes everything, it goes.
 */
static void test_snd_frag_large_no_fit(void)
{
	unsigned int large = 0, small = 0, before, ms;
	bool sent = false;

	open_two();
	for (ms = 0; ms < 40; ms++) {		/* the reader's 32 KiB */
		w_send(small_to_b, 1000);
		w_run(1);
	}
	CHECK(B->pool.ring.prod - B->pool.ring.cons >= 32768, "32 KiB kept");
	for (ms = 0; ms < 2000; ms++) {
		if (!sent)
			sent = !w_send(large_to_b, 16384);
		w_send(small_to_b, 1000);
		w_run(1);
		small += read_but(32768, &large);
	}
	before = small;
	CHECK(!large, "the large message cannot fit yet");
	CHECK(small > 100, "small messages flow meanwhile (%u)", small);
	for (ms = 0; ms < 5000 && !large; ms++) {
		if (!sent)
			sent = !w_send(large_to_b, 16384);
		w_run(1);
		small += read_but(0, &large);
	}
	CHECK(large == 1, "then the large message arrived (%u small before)",
	      before);
	w_teardown();
}

/*
 * A writer that waits for a large message gives back, with its probe, the
 * part of the window it holds: the sender and the receiver then agree it
 * holds nothing (the receiver kept none of it: a sender that believed in
 * it would send into credit the receiver no longer has).  Once the reader
 * has taken the pool, the message is granted whole and arrives.
 */
static void test_snd_frag_probe_gives_back(void)
{
	struct dp_endpoint *a2;
	struct dp_rcv_info ri;
	u32 cost = dp_frag_credit(16384, FRAME);

	open_ab(65536);
	a2 = w_ep(2, &w.nodes[0], 11, 65536, W_A_INC + 1);
	CHECK_EQ(w_send(w_connect(a2, 2, 20), 1), -EAGAIN);	/* its HELLO */
	w_pump();
	CHECK_EQ(w_send(ab, 16384), 0);		/* within the first window */
	w_run(5);				/* acknowledged */
	CHECK(w_info(ab).credit_left > 0 && (u32)w_info(ab).credit_left < cost,
	      "part of a second one's cost left (%d)", w_info(ab).credit_left);
	CHECK_EQ(w_send(ab, 16384), -EAGAIN);	/* it probes */
	CHECK_EQ(w_info(ab).credit_left, 0);
	w_pump();
	CHECK(w_rinfo(B, 1, 10, &ri), "B has A's session");
	CHECK_EQ(ri.credit_left, 0);
	CHECK_EQ(w_info(ab).credit_left, 0);
	CHECK_EQ(w_read(B, 1, NULL), 1);
	w_run(5);
	CHECK_EQ(w_send(ab, 16384), 0);
	w_run(5);
	expect_msg(16384, 2);
	w_teardown();
}

/*
 * Copy slots for large messages: a 64 KiB message is 47 fragments, more
 * than DP_SND_SPARES, and a window of 128 holds it whole.  Acknowledged
 * copies are taken back by the next send after it has its own first
 * fragment's, so a stream of such messages needs n + 1 slots (and the page
 * of small ones a 1-byte message's copy cut at open).  Once it has them,
 * it allocates nothing (each fresh slot was zeroed: a fifth of a large
 * message's instructions).
 * Taking copies back keeps no more slots than max(DP_SND_SPARES, the
 * frames the window lets fly at the least weight), so a window cut by
 * loss keeps fewer.
 */
static void test_snd_frag_slots(void)
{
	u32 len = 64 * 1024, n = dp_frag_count(len, FRAME);
	long allocs = 0, live = 0;	/* set at i == 2 (gcc cannot tell) */
	unsigned int i;

	open_ab(1u << 20);
	ab->cwnd = 128 * w_mss();
	ab->ssthresh = 128 * w_mss();
	CHECK(n > DP_SND_SPARES, "%u fragments", n);
	for (i = 0; i < 10; i++) {
		if (i == 2) {
			allocs = kmock_kmalloc_snd;
			live = kmock_kmalloc_live;
		}
		CHECK_EQ(send_tracked(len), 0);
		w_run(5);
		expect_msg(len, 1 + i);
		CHECK(ab->n_spare + ab->n_unacked <=
		      n + 1 + PAGE_SIZE / DP_SND_SMALL,
		      "%u spare, %u in flight", ab->n_spare, ab->n_unacked);
	}
	CHECK_EQ(kmock_kmalloc_snd, allocs);	/* none by the sender */
	CHECK_EQ(kmock_kmalloc_live, live);
	ab->cwnd = 4 * w_mss();			/* a loss cut the window */
	ab->ssthresh = 4 * w_mss();
	CHECK_EQ(send_tracked(len), 0);
	w_run(5);
	expect_msg(len, 11);
	CHECK_EQ(w_send(ab, 1), 0);		/* takes the last ones back */
	CHECK(ab->n_spare + ab->n_unacked <=
	      max(DP_SND_SPARES, ab->cwnd / w_wt(0)) + 1,
	      "%u spare, %u in flight, cwnd %u: the cap, and the 1 byte's",
	      ab->n_spare, ab->n_unacked, ab->cwnd);
	w_teardown();
}

const struct unit_test snd_frag_tests[] = {
	{ "snd frag: cut into FIRST, MID, LAST; credit charged at the first",
	  test_snd_frag_cut },
	{ "snd frag: pipelined under a small congestion window",
	  test_snd_frag_pipelined },
	{ "snd frag: a batch's writer flushes its held fragments before it waits",
	  test_snd_frag_plugged },
	{ "snd frag: a stream of large messages allocates no copy slot",
	  test_snd_frag_slots },
	{ "snd frag: a lost fragment is resent alone", test_snd_frag_lost },
	{ "snd frag: cut short: the session ends, no part is seen",
	  test_snd_frag_abort },
	{ "snd frag: EMSGSIZE beyond the receiver's announced largest",
	  test_snd_frag_limit },
	{ "snd frag: a first fragment that cannot leave holds nobody back (no route)",
	  test_snd_frag_first_unreach },
	{ "snd frag: a first fragment that cannot leave holds nobody back (signal)",
	  test_snd_frag_first_eintr },
	{ "snd frag: a session that fails mid-message reports its error once",
	  test_snd_frag_fail_once },
	{ "snd frag: a writer waiting behind it does not take that error",
	  test_snd_frag_fail_waiter },
	{ "snd frag: silent past unreach_ms mid-message, given up there: ECONNRESET",
	  test_snd_frag_silent_watched },
	{ "snd frag: silent past unreach_ms mid-message, still open there: it goes on",
	  test_snd_frag_silent_unwatched },
	{ "snd frag: the receiver's limit shrinks under a message in flight: EMSGSIZE",
	  test_snd_frag_limit_shrinks },
	{ "snd frag: senders waiting for large messages hold no part of the room",
	  test_snd_frag_crowd },
	{ "snd frag: a stream of small messages does not keep a large one waiting",
	  test_snd_frag_large_turn },
	{ "snd frag: no room is kept for a large message the reader leaves no room for",
	  test_snd_frag_large_no_fit },
	{ "snd frag: a probe for a large message gives back the window held, at both ends",
	  test_snd_frag_probe_gives_back },
	{ NULL, NULL },
};
