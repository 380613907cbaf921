// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the receiver's state machine (dp_rcv.c): duplicates and
 * gaps, credit refusal, raw messages outside promised space, acks riding
 * on DATA, RESETs for frames of no session (and their bound), eviction of
 * silent senders from a full table, closing.  Frames are built here as a
 * sender would, or come from a real dp_snd.c in the world of sess_world.c.
 */
#include "sess_world.h"

#define A_INC	W_A_INC
#define B_INC	W_B_INC

static struct dp_endpoint *A, *B;
static struct dp_snd *ab;

static void two(u32 bpool)
{
	ab = w_pair(bpool, &A, &B);
	CHECK_EQ(w_send(ab, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
}

/* A frame from sender {1, dpid} of incarnation @inc to B. */
static struct dp_msg_hdr hdr(u8 type, u32 dpid, u32 inc, u32 seq)
{
	struct dp_msg_hdr h = {
		.type = type, .src_nid = 1, .src_dpid = dpid, .src_inc = inc,
		.dst_nid = 2, .dst_dpid = 20, .dst_inc = B_INC, .seq = seq,
	};
	return h;
}

static const u8 zeros[1500];

static bool drop_everything_data(const struct w_frame *f)
{
	return f->h.type == DP_WT_DATA;
}

/* A retransmitted message is dropped, counted, and acknowledged again. */
static void test_rcv_dup(void)
{
	struct w_frame f;
	unsigned int acks;

	two(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	f = *w_last(DP_WT_DATA, 0);
	w_run(1);
	acks = w_count(DP_WT_ACK, DP_WF_ACK);
	dp_rcv_data(&B->rcv, &f.h, W_FLAT(f.data));
	CHECK_EQ(w_queued(B), 1);
	CHECK_EQ(w_stats(B).rx_dup, 1);
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_DUP], 1);
	w_pump();		/* at once, no delay */
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_ACK), acks + 1);
	w_teardown();
}

/*
 * The ACK that answers duplicates names the first of them since the last
 * ACK (DP_WF_DUP, the low 16 bits of its seq); the ACKs before it, which
 * answered no duplicate, carry no such flag.
 */
static void test_rcv_dup_named(void)
{
	struct w_frame f1, f2;
	const struct w_frame *a;

	two(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	f1 = *w_last(DP_WT_DATA, 0);
	CHECK_EQ(w_send(ab, 100), 0);
	f2 = *w_last(DP_WT_DATA, 0);
	w_run(5);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_DUP), 0);
	dp_rcv_data(&B->rcv, &f2.h, W_FLAT(f2.data));
	dp_rcv_data(&B->rcv, &f1.h, W_FLAT(f1.data));
	CHECK_EQ(w_stats(B).rx_dup, 2);
	w_pump();
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_DUP), 1);
	a = w_last(DP_WT_ACK, DP_WF_DUP);
	CHECK(a && a->h.dup == (u16)f2.h.seq, "names %u, the first (%u)",
	      a ? a->h.dup : 0, f2.h.seq);
	CHECK(a && a->h.ack == f2.h.seq, "and acknowledges all (%u)",
	      a ? a->h.ack : 0);
	dp_rcv_data(&B->rcv, &f1.h, W_FLAT(f1.data));
	w_pump();		/* the next ACK names the next duplicate */
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_DUP), 2);
	a = w_last(DP_WT_ACK, DP_WF_DUP);
	CHECK(a && a->h.dup == (u16)f1.h.seq, "names %u (%u)",
	      a ? a->h.dup : 0, f1.h.seq);
	w_teardown();
}

static u32 hold_seq;
static bool drop_hold_seq(const struct w_frame *f)
{
	return f->h.type == DP_WT_DATA && f->h.seq == hold_seq;
}

/* After a gap the rest is held, then delivered in order once it is filled. */
static void test_rcv_gap_held(void)
{
	struct dp_rcv_info ri;
	struct w_frame f;
	u32 seq[8], i;

	two(65536);
	hold_seq = w_info(ab).snd_nxt;
	w.drop = drop_hold_seq;
	for (i = 0; i < 5; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	f = w.frames[w.n_frames - 5];
	/* deliver 2..5 only: the receiver holds them */
	for (i = 1; i < 5; i++) {
		struct w_frame *g = &w.frames[w.n_frames - 5 + i];

		g->done = true;
		dp_rcv_data(&B->rcv, &g->h, W_FLAT(g->data));
	}
	w.frames[w.n_frames - 5].done = true;
	CHECK_EQ(w_queued(B), 0);
	CHECK(w_rinfo(B, 1, 10, &ri), "B knows A");
	CHECK_EQ(ri.held, 4);
	CHECK_EQ(ri.rcv_nxt, hold_seq);
	dp_rcv_data(&B->rcv, &f.h, W_FLAT(f.data));
	CHECK_EQ(w_queued(B), 5);
	CHECK(w_rinfo(B, 1, 10, &ri), "B knows A");
	CHECK_EQ(ri.held, 0);
	CHECK_EQ(w_read(B, 8, seq), 5);
	for (i = 0; i < 5; i++)
		CHECK_EQ(seq[i], i + 1);
	w.drop = NULL;
	w_run(300);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
}

/*
 * SACK: with two holes, the ACKs name what is held past the first (bit i:
 * seq ack + 2 + i); each message held afterwards brings a new map within
 * a tick, not only after DP_GAP_AGAIN_MS; a sender whose HELLO did not
 * ask gets no map.
 */
static u32 hole2_seq;
static bool drop_two_holes(const struct w_frame *f)
{
	return f->h.type == DP_WT_DATA &&
	       (f->h.seq == hold_seq || f->h.seq == hole2_seq);
}

static void test_rcv_sack(void)
{
	const struct w_frame *a;
	struct dp_msg_hdr h;
	unsigned int acks;
	u32 i, base;

	two(65536);
	base = w_info(ab).snd_nxt;
	hold_seq = base + 1;	/* 0 arrives, 1 lost, 2 held, 3 lost, 4 held */
	hole2_seq = base + 3;
	w.drop = drop_two_holes;
	for (i = 0; i < 5; i++)
		CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	a = w_last(DP_WT_ACK, DP_WF_GAP);
	CHECK(a, "a gap report");
	if (a) {
		CHECK_EQ(a->h.ack, base);
		CHECK(a->h.flags & DP_WF_SACK, "flags %#x", a->h.flags);
		CHECK_EQ(a->h.len, DP_SACK_LEN);
		CHECK_EQ(a->data[0], 0x5);	/* base + 2 and base + 4 */
		for (i = 1; i < DP_SACK_LEN; i++)
			CHECK_EQ(a->data[i], 0);
	}
	/* one more held, within DP_GAP_AGAIN_MS: a new map a tick later */
	w.drop = drop_everything_data;
	CHECK_EQ(w_send(ab, 100), 0);		/* base + 5, lost */
	h = w.frames[w.n_frames - 1].h;
	acks = w_count(DP_WT_ACK, DP_WF_SACK);
	dp_rcv_data(&B->rcv, &h, W_FLAT(zeros));
	w_run(1);
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_SACK), acks + 1);
	a = w_last(DP_WT_ACK, DP_WF_SACK);
	CHECK(a && a->data[0] == 0xd, "map %#x", a ? a->data[0] : 0);	/* + base + 5 */
	w.drop = NULL;
	w_run(300);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_read(B, 8, NULL), 6);
	/* a HELLO without DP_WF_SACK: its ACKs carry no map */
	h = hdr(DP_WT_HELLO, 11, 0x77, 5000);
	dp_rcv_hello(&B->rcv, &h);
	h = hdr(DP_WT_DATA, 11, 0x77, 5001);	/* 5000 missing */
	h.len = 100;
	dp_rcv_data(&B->rcv, &h, W_FLAT(zeros));
	w_pump();
	a = w_last(DP_WT_ACK, DP_WF_GAP);
	CHECK(a && a->h.dst_dpid == 11 && !(a->h.flags & DP_WF_SACK) && !a->h.len,
	      "a gap report with no map");
	w_teardown();
}

/* DATA beyond the credit granted (a full pool) is refused, counted full. */
static void test_rcv_beyond_credit(void)
{
	struct w_frame f;
	u32 q;

	two(8192);
	while (w_send(ab, 1000) == 0)
		;
	w_run(1);
	q = w_queued(B);
	f = *w_last(DP_WT_DATA, 0);
	f.h.seq++;
	f.h.flags = 0;
	dp_rcv_data(&B->rcv, &f.h, W_FLAT(f.data));
	CHECK_EQ(w_queued(B), q);
	CHECK_EQ(B->pool.refused, 1);
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_FULL], 1);
	w_teardown();
}

/* Raw messages go in as v1's did, but never into space promised. */
static void test_rcv_raw(void)
{
	struct dp_msg_hdr h = hdr(DP_WT_DATA, 77, 0, 5);
	u32 seq;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 8192, B_INC);
	h.flags = DP_WF_RAW;
	h.len = 100;
	dp_rcv_raw(&B->rcv, &h, W_FLAT(zeros));
	CHECK_EQ(w_read(B, 1, &seq), 1);
	CHECK_EQ(seq, 5);
	/* a reliable sender's HELLO: its grant takes all the room */
	h = hdr(DP_WT_HELLO, 10, A_INC, 1000);
	dp_rcv_hello(&B->rcv, &h);
	h = hdr(DP_WT_DATA, 77, 0, 6);
	h.flags = DP_WF_RAW;
	h.len = 100;
	dp_rcv_raw(&B->rcv, &h, W_FLAT(zeros));
	CHECK_EQ(w_queued(B), 0);
	CHECK_EQ(B->pool.refused, 1);
	w_pump();
	w_teardown();
}

/* An ack owed rides on DATA going the other way: no ACK frame of its own. */
static void test_rcv_piggyback(void)
{
	const struct w_frame *f;
	struct dp_snd *ba;
	unsigned int acks;

	two(65536);
	ba = w_connect(B, 1, 10);
	CHECK_EQ(w_send(ba, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ba).state, DP_SND_OPEN);
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();		/* B owes A a delayed ACK */
	acks = w_count(DP_WT_ACK, 0);
	CHECK_EQ(w_send(ba, 100), 0);
	f = w_last(DP_WT_DATA, DP_WF_ACK);
	CHECK(f && f->h.src_nid == 2, "B's DATA carries the ack");
	if (f)
		CHECK_EQ(f->h.ack, w_info(ab).snd_nxt - 1);
	w_run(5);
	CHECK_EQ(w_count(DP_WT_ACK, 0) - acks, 1);	/* A's ack of B's, only */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
}

/* ACKs B sent to A so far (not A's own to B). */
static unsigned int acks_b_to_a(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += w.frames[i].h.type == DP_WT_ACK && w.frames[i].h.src_nid == 2;
	return n;
}

/*
 * The delayed ACK is cancelled when the ack rides on DATA: B's DATA to A
 * carries it, and B's own ACK never goes, though its ack work was queued
 * and runs; when B sends nothing in time, the delayed ACK goes.
 */
static void test_rcv_delayed_ack_cancelled(void)
{
	struct dp_rcv_info ri;
	struct dp_snd *ba;
	unsigned int acks;

	two(65536);
	ba = w_connect(B, 1, 10);
	CHECK_EQ(w_send(ba, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ba).state, DP_SND_OPEN);
	w_run(5);
	acks = acks_b_to_a();
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK(w_rinfo(B, 1, 10, &ri) && ri.ack_owed, "B owes A a delayed ACK");
	CHECK_EQ(w_send(ba, 100), 0);		/* the ack rides on it */
	CHECK(w_rinfo(B, 1, 10, &ri) && !ri.ack_owed, "the DATA paid the ACK");
	w_run(5);
	CHECK_EQ(acks_b_to_a(), acks);		/* and no ACK of its own */
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	/* no DATA from B this time: the delayed ACK goes after a tick */
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(acks_b_to_a(), acks);
	w_run(1);
	CHECK_EQ(acks_b_to_a(), acks + 1);
	CHECK(w_rinfo(B, 1, 10, &ri) && !ri.ack_owed, "paid by its ACK");
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	w_teardown();
}

/* Both ways open: A to B (ab) and B to A (ba). */
static struct dp_snd *both_ways(void)
{
	struct dp_snd *ba;

	two(65536);
	ba = w_connect(B, 1, 10);
	CHECK_EQ(w_send(ba, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ba).state, DP_SND_OPEN);
	return ba;
}

/*
 * A sends B a message (B owes an ack), then B sends A one: whether B's
 * DATA carried the ack, and the hash lookups B's send made in *@lookups.
 */
static bool ack_rides(struct dp_snd *ba, long *lookups)
{
	const struct w_frame *f;
	long n;

	w_read(A, 1000, NULL);		/* room for what comes */
	w_read(B, 1000, NULL);
	w_pump();
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	n = kmock_jhash_calls;
	CHECK_EQ(w_send(ba, 100), 0);
	*lookups = kmock_jhash_calls - n;
	f = &w.frames[w.n_frames - 1];
	CHECK(f->h.type == DP_WT_DATA && f->h.src_nid == 2, "B's DATA is the last");
	return (f->h.flags & DP_WF_ACK) && f->h.ack == w_info(ab).snd_nxt - 1;
}

/*
 * An ACK owed for a duplicate rides on DATA as any other, naming it; if
 * that DATA does not leave, the ACK owed again still names it.
 */
static void test_rcv_dup_rides(void)
{
	struct dp_snd *ba = both_ways();
	const struct w_frame *f;
	struct w_frame d;
	long lookups;

	CHECK(ack_rides(ba, &lookups), "paired, the ack rides");
	w_pump();
	d = *w_last(DP_WT_DATA, 0);	/* B's; A's is the one before */
	CHECK_EQ(w_send(ab, 100), 0);
	d = *w_last(DP_WT_DATA, 0);
	w_run(5);
	dp_rcv_data(&B->rcv, &d.h, W_FLAT(d.data));
	CHECK_EQ(w_send(ba, 100), 0);	/* before ack_work runs */
	f = w_last(DP_WT_DATA, DP_WF_DUP);
	CHECK(f && f->h.src_nid == 2 && (f->h.flags & DP_WF_ACK) &&
	      f->h.dup == (u16)d.h.seq, "B's DATA names the duplicate %u",
	      d.h.seq);
	w_pump();
	dp_rcv_data(&B->rcv, &d.h, W_FLAT(d.data));
	w.tx_err = -ENOBUFS;
	CHECK_EQ(w_send(ba, 100), 0);
	w.tx_err = 0;
	w_run(1);
	f = w_last(DP_WT_ACK, DP_WF_DUP);
	CHECK(f && f->h.src_nid == 2 && f->h.dup == (u16)d.h.seq,
	      "owed again, the ACK names it");
	w_run(300);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ba).snd_una, w_info(ba).snd_nxt);
	w_teardown();
}

/*
 * The edge finds its peer's receive state once: the first DATA that
 * carries an ack looks it up, the next ones (each carrying its ack) look
 * up nothing.
 */
static void test_rcv_pair_once(void)
{
	struct dp_rx_peer *rp;
	struct dp_snd *ba = both_ways();
	long lookups;
	int i;

	CHECK(!ba->pair.rp, "not paired before B's first DATA");
	CHECK(ack_rides(ba, &lookups), "the first DATA carries the ack");
	CHECK_EQ(lookups, 1);
	rp = ba->pair.rp;
	CHECK(rp, "paired");
	for (i = 0; i < 200; i++) {
		CHECK(ack_rides(ba, &lookups), "DATA %d carries the ack", i);
		CHECK_EQ(lookups, 0);
	}
	CHECK(ba->pair.rp == rp, "the same pairing all along");
	w_run(5);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ba).snd_una, w_info(ba).snd_nxt);
	w_teardown();
}

/*
 * An ack rides on DATA only with news for its sender: B's DATA after A's
 * message carries it, B's next (nothing arrived, no credit unsaid) goes
 * without, and after A's next message one carries it again.
 */
static void test_rcv_piggyback_news(void)
{
	struct dp_snd *ba = both_ways();
	const struct w_frame *f;
	long lookups;
	int i;

	for (i = 0; i < 3; i++) {
		CHECK(ack_rides(ba, &lookups), "round %d: A's message arrived, B's DATA carries its ack", i);
		CHECK_EQ(w_send(ba, 100), 0);
		f = &w.frames[w.n_frames - 1];
		CHECK(f->h.type == DP_WT_DATA && f->h.src_nid == 2 &&
		      !(f->h.flags & DP_WF_ACK),
		      "round %d: nothing new for A, B's next DATA carries no ack", i);
		w_pump();
	}
	w_run(5);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ba).snd_una, w_info(ba).snd_nxt);
	w_teardown();
}

/* An edge whose peer never sends to us looks once, not per frame. */
static void test_rcv_pair_none(void)
{
	struct dp_snd *ba;
	long n;
	int i;

	two(65536);
	ba = w_connect(B, 1, 11);	/* no such sender at B */
	CHECK_EQ(w_send(ba, 1), -EAGAIN);
	w_pump();			/* A's endpoint 11 is not there */
	n = 0;
	for (i = 0; i < 50; i++) {	/* A has no rx peer for B */
		long before = kmock_jhash_calls;

		CHECK_EQ(w_send(ab, 100), 0);
		n += kmock_jhash_calls - before;
		w_read(B, 1000, NULL);
		w_run(2);
	}
	CHECK(!ab->pair.rp, "nothing to pair with");
	CHECK_EQ(n, 1);			/* the first send looked, once */
	w_teardown();
}

/* ACKs (with an ack in them) B sent to A's endpoint 10 so far. */
static unsigned int real_acks_b_to_a(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++) {
		const struct dp_msg_hdr *h = &w.frames[i].h;

		n += h->type == DP_WT_ACK && h->src_nid == 2 &&
		     h->dst_dpid == 10 && (h->flags & DP_WF_ACK);
	}
	return n;
}

/*
 * B's sender table is full and A silent past unreach_ms: a newcomer
 * evicts A's rx peer.  The pairing goes with it: B's next DATA carries
 * no ack and touches no freed memory (ASan), and an unpiggyback of the
 * ack a frame carried before is harmless.
 */
static void test_rcv_pair_evicted(void)
{
	struct dp_snd *ba = both_ways();
	struct dp_msg_hdr h, carried;
	unsigned int acks;
	long lookups;
	u32 i;

	CHECK(ack_rides(ba, &lookups), "paired, the ack rides");
	carried = w.frames[w.n_frames - 1].h;
	w_pump();
	for (i = 0; i + 1 < DP_MAX_RX_PEERS; i++) {
		h = hdr(DP_WT_HELLO, 1000 + i, 1 + i, 7);
		h.src_nid = 3 + i % 4;
		h.src_uid = 1 + i;
		dp_rcv_hello(&B->rcv, &h);
	}
	CHECK_EQ(w_rx_peers(B), DP_MAX_RX_PEERS);
	w_drop_all();
	kmock_advance(dp_unreach_ms + 1);
	h = hdr(DP_WT_HELLO, 5000, 99999, 7);
	h.src_uid = 99999;
	dp_rcv_hello(&B->rcv, &h);
	CHECK(!w_rinfo(B, 1, 10, NULL), "A's rx peer was evicted");
	CHECK(!ba->pair.rp, "the pairing went with it");
	acks = real_acks_b_to_a();
	dp_rcv_unpiggyback(&B->rcv, &ba->pair, &carried);
	CHECK(!w_rinfo(B, 1, 10, NULL), "no rx peer made for it");
	/* no time for B's timers to run: its session with A is still open */
	CHECK_EQ(w_send(ba, 100), 0);
	CHECK(!(w.frames[w.n_frames - 1].h.flags & DP_WF_ACK), "no ack rides");
	CHECK(!ba->pair.rp, "nothing to pair with");
	w_pump();
	CHECK_EQ(real_acks_b_to_a(), acks);	/* and none owed to A */
	w_drop_all();
	w_teardown();
}

/*
 * A restarts (a new incarnation says HELLO to B): the pairing is dropped,
 * B's DATA to the old A carries no ack of the new session, and the edge
 * pairs again with one lookup.
 */
static void test_rcv_pair_new_inc(void)
{
	struct dp_snd *ba = both_ways();
	struct dp_msg_hdr h = hdr(DP_WT_HELLO, 10, A_INC + 1, 900);
	long lookups, n;

	CHECK(ack_rides(ba, &lookups), "paired, the ack rides");
	CHECK(ba->pair.rp, "paired");
	h.src_uid = A->uid;
	dp_rcv_hello(&B->rcv, &h);
	CHECK(!ba->pair.rp, "a new incarnation drops the pairing");
	w_drop_all();
	n = kmock_jhash_calls;
	CHECK_EQ(w_send(ba, 100), 0);	/* B's edge still knows the old A */
	CHECK_EQ(kmock_jhash_calls - n, 1);
	CHECK(!(w.frames[w.n_frames - 1].h.flags & DP_WF_ACK),
	      "no ack for another incarnation");
	CHECK(ba->pair.rp, "paired again");
	w_drop_all();
	w_teardown();
}

/*
 * A frame that carried the ack does not leave: the ack is owed again and
 * goes on its own; then the pairing still holds.
 */
static void test_rcv_pair_unpiggyback(void)
{
	struct dp_snd *ba = both_ways();
	unsigned int acks;
	long lookups;

	CHECK(ack_rides(ba, &lookups), "paired, the ack rides");
	w_pump();
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	acks = acks_b_to_a();
	w.tx_err = -ENOBUFS;		/* passing: the timer resends */
	CHECK_EQ(w_send(ba, 100), 0);
	w.tx_err = 0;
	w_run(1);
	CHECK_EQ(acks_b_to_a(), acks + 1);	/* owed again, sent at once */
	CHECK(ba->pair.rp, "still paired");
	w_run(300);
	CHECK_EQ(w_info(ab).snd_una, w_info(ab).snd_nxt);
	CHECK_EQ(w_info(ba).snd_una, w_info(ba).snd_nxt);
	w_teardown();
}

/* Frames of no session get a RESET naming them; 8 wait at most. */
static void test_rcv_resets(void)
{
	struct dp_msg_hdr h;
	const struct w_frame *f;
	u32 i;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 65536, B_INC);
	h = hdr(DP_WT_DATA, 10, A_INC, 4242);
	h.dst_inc = B_INC + 1;		/* an older B */
	h.len = 10;
	dp_rcv_data(&B->rcv, &h, W_FLAT(zeros));
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_STALE], 1);
	w_pump();
	f = w_last(DP_WT_RESET, 0);
	CHECK(f, "a RESET");
	if (f) {
		CHECK_EQ(f->h.seq, 4242);
		CHECK_EQ(f->h.dst_inc, A_INC);
		CHECK_EQ(f->h.dst_dpid, 10);
	}
	for (i = 0; i < DP_RESETS_PENDING + 3; i++) {
		h = hdr(DP_WT_DATA, 100 + i, A_INC, 1);
		h.len = 10;
		dp_rcv_data(&B->rcv, &h, W_FLAT(zeros));	/* no session */
	}
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ], DP_RESETS_PENDING + 3);
	w_pump();
	CHECK_EQ(w_count(DP_WT_RESET, 0), 1 + DP_RESETS_PENDING);
	h = hdr(DP_WT_ACK, 10, A_INC, 1);
	h.flags = DP_WF_PROBE;		/* a probe of no session, too */
	dp_rcv_probe(&B->rcv, &h);
	w_pump();
	CHECK_EQ(w_count(DP_WT_RESET, 0), 2 + DP_RESETS_PENDING);
	w_teardown();
}

/*
 * A full table takes no newcomer while every sender is live; one silent
 * past unreach_ms is evicted for it.
 */
static void test_rcv_eviction(void)
{
	struct dp_msg_hdr h;
	u32 i;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	for (i = 0; i < DP_MAX_RX_PEERS; i++) {	/* many users, 4 nodes */
		h = hdr(DP_WT_HELLO, 1000 + i, 1 + i, 7);
		h.src_nid = 3 + i % 4;
		h.src_uid = 1 + i;
		dp_rcv_hello(&B->rcv, &h);
	}
	CHECK_EQ(w_rx_peers(B), DP_MAX_RX_PEERS);
	h = hdr(DP_WT_HELLO, 5000, 99999, 7);
	dp_rcv_hello(&B->rcv, &h);
	CHECK_EQ(w_rx_peers(B), DP_MAX_RX_PEERS);
	CHECK(!w_rinfo(B, 1, 5000, NULL), "no room for the newcomer");
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_NOMEM], 1);
	w_pump();
	kmock_advance(dp_unreach_ms + 1);
	w_pump();
	dp_rcv_hello(&B->rcv, &h);
	CHECK_EQ(w_rx_peers(B), DP_MAX_RX_PEERS);
	CHECK(w_rinfo(B, 1, 5000, NULL), "a silent sender made room");
	CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_NOMEM], 1);
	w_pump();
	w_teardown();
}

/* A HELLO whose answer was lost is answered again, same session. */
static void test_rcv_hello_again(void)
{
	struct dp_msg_hdr h = hdr(DP_WT_HELLO, 10, A_INC, 500);
	struct dp_rcv_info ri;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 65536, B_INC);
	dp_rcv_hello(&B->rcv, &h);
	w_pump();
	dp_rcv_hello(&B->rcv, &h);
	w_pump();
	CHECK_EQ(w_count(DP_WT_ACK, DP_WF_ACK), 2);
	CHECK(w_last(DP_WT_ACK, 0) && w_last(DP_WT_ACK, 0)->h.ack == 499,
	      "the answer acks the ISN - 1");
	CHECK(w_rinfo(B, 1, 10, &ri), "one session");
	CHECK_EQ(ri.isn, 500);
	CHECK_EQ(w_rx_peers(B), 1);
	w_teardown();
}

/* The RESET|ACK a closing B sent to sender DPID @dpid, or NULL. */
static const struct w_frame *close_reset_to(u32 dpid)
{
	unsigned int i;

	for (i = 0; i < w.n_frames; i++) {
		const struct w_frame *f = &w.frames[i];

		if (f->h.type == DP_WT_RESET && (f->h.flags & DP_WF_ACK) &&
		    f->h.dst_dpid == dpid)
			return f;
	}
	return NULL;
}

/*
 * Closing: every sender with a session hears a RESET with its final ack,
 * named by the next seq it expected.
 */
static void test_rcv_close(void)
{
	struct dp_msg_hdr h = hdr(DP_WT_HELLO, 10, A_INC, 500);
	const struct w_frame *f;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 65536, B_INC);
	dp_rcv_hello(&B->rcv, &h);
	h = hdr(DP_WT_HELLO, 11, A_INC, 900);
	dp_rcv_hello(&B->rcv, &h);
	h = hdr(DP_WT_DATA, 10, A_INC, 500);
	h.len = 10;
	dp_rcv_data(&B->rcv, &h, W_FLAT(zeros));
	CHECK_EQ(w_queued(B), 1);
	w_pump();
	w_close(B);
	CHECK_EQ(w_count(DP_WT_RESET, DP_WF_ACK), 2);
	f = close_reset_to(10);
	CHECK(f, "a RESET to 10");
	if (f) {
		CHECK_EQ(f->h.seq, 501);
		CHECK_EQ(f->h.ack, 500);
		CHECK_EQ(f->h.dst_inc, A_INC);
	}
	f = close_reset_to(11);
	CHECK(f, "a RESET to 11");
	if (f) {
		CHECK_EQ(f->h.seq, 900);
		CHECK_EQ(f->h.ack, 899);
	}
	w_drop_all();
	w_teardown();
}

/*
 * A new session of A's edge to B: the old one stops (its FIN reaches B),
 * the edge starts again, and its first write opens a session with a new
 * ISN, between the same two incarnations.
 */
static void new_session(void)
{
	const struct dp_addr to = ab->to;

	mutex_lock(&A->lock);
	dp_snd_stop(ab);
	mutex_unlock(&A->lock);
	dp_snd_release(ab);
	memset(ab, 0, sizeof(*ab));	/* a new edge, as kzalloc gives it */
	dp_snd_init(ab, &A->snd, &to);
	w_pump();
	CHECK_EQ(w_send(ab, 1), -EAGAIN);
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
}

/*
 * RETURN and PROBE name their session: a RETURN of an earlier session
 * that arrives late cuts nothing of the session opened since, and a late
 * probe of it grants nothing.
 */
static void test_rcv_stale_return(void)
{
	struct w_frame ret, probe;
	struct dp_rcv_info ri;
	s32 left;

	two(65536);
	CHECK_EQ(w_send(ab, 100), 0);
	w_run(150);			/* idle: the credit goes back */
	CHECK(w_last(DP_WT_ACK, DP_WF_RETURN), "a RETURN");
	ret = *w_last(DP_WT_ACK, DP_WF_RETURN);
	CHECK_EQ(w_send(ab, 100), -EAGAIN);	/* asks for a window */
	CHECK(w_last(DP_WT_ACK, DP_WF_PROBE), "a probe");
	probe = *w_last(DP_WT_ACK, DP_WF_PROBE);
	w_pump();
	new_session();
	CHECK(w_rinfo(B, 1, 10, &ri), "B knows A's new session");
	left = ri.credit_left;
	CHECK(left > 0, "the new session has credit");
	dp_rcv_return(&B->rcv, &ret.h);	/* late, of the session before */
	CHECK(w_rinfo(B, 1, 10, &ri), "B knows A");
	CHECK_EQ(ri.credit_left, left);
	CHECK_EQ(w_send(ab, 100), 0);
	w_pump();
	CHECK_EQ(w_queued(B), 2);
	dp_rcv_probe(&B->rcv, &probe.h);	/* late too: a RESET, no grant */
	w_pump();
	CHECK_EQ(w_info(ab).state, DP_SND_OPEN);
	w_teardown();
}

const struct unit_test rcv_tests[] = {
	{ "rcv: a duplicate is dropped, counted, acked again", test_rcv_dup },
	{ "rcv: the ACK that answers duplicates names the first (DP_WF_DUP)",
	  test_rcv_dup_named },
	{ "rcv: an ACK naming a duplicate rides on DATA, and is owed again "
	  "if that DATA does not leave", test_rcv_dup_rides },
	{ "rcv: after a gap: held, then delivered in order", test_rcv_gap_held },
	{ "rcv: SACK: ACKs map what is held past a gap, if the sender asked",
	  test_rcv_sack },
	{ "rcv: beyond the credit: refused as full", test_rcv_beyond_credit },
	{ "rcv: raw messages never take promised space", test_rcv_raw },
	{ "rcv: an owed ack rides on DATA", test_rcv_piggyback },
	{ "rcv: an ack riding on DATA cancels the delayed ACK; else it goes",
	  test_rcv_delayed_ack_cancelled },
	{ "rcv: an edge pairs with its peer's rx state once, no lookup per frame",
	  test_rcv_pair_once },
	{ "rcv: an ack rides on DATA only with news for its sender",
	  test_rcv_piggyback_news },
	{ "rcv: an edge whose peer sends nothing does not look per frame",
	  test_rcv_pair_none },
	{ "rcv: eviction drops the pairing; later DATA and unpiggyback are safe",
	  test_rcv_pair_evicted },
	{ "rcv: a new incarnation of the sender drops the pairing",
	  test_rcv_pair_new_inc },
	{ "rcv: an ack on DATA that did not leave is owed again", test_rcv_pair_unpiggyback },
	{ "rcv: RESETs for frames of no session, at most 8 queued", test_rcv_resets },
	{ "rcv: a full table evicts a silent sender only", test_rcv_eviction },
	{ "rcv: a repeated HELLO is answered again", test_rcv_hello_again },
	{ "rcv: closing RESETs every sender with its last ack", test_rcv_close },
	{ "rcv: a late RETURN or probe of an earlier session changes nothing",
	  test_rcv_stale_return },
	{ NULL, NULL },
};
