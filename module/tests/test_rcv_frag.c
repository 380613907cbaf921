// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of large messages at the receiver (dp_rcv.c with dp_frag.c):
 * fragments built here as a sender cuts them (dp_frag_get()), from
 * senders {1, dpid} to endpoint B; what a reader of B's pool sees is
 * checked byte for byte, with every drop counted where the docs say
 * (docs/wire.md, "Fragments"; docs/reliability.md, "Large messages").
 */
#include "sess_world.h"
#include "dp_frag.h"

#define B_INC	W_B_INC
#define FRAME	1400u		/* the world's link: node max_msg */
#define BIG	5000u		/* FIRST, 2 MID, LAST */

static struct dp_endpoint *B;

static void setup(u32 pool)
{
	w_setup();
	B = w_ep(1, &w.nodes[1], 20, pool, B_INC);
}

static u32 inc_of(u32 dpid)
{
	return 0x100 + dpid;
}

static struct dp_msg_hdr hdr(u8 type, u32 dpid, u32 seq)
{
	struct dp_msg_hdr h = {
		.type = type, .src_nid = 1, .src_dpid = dpid,
		.src_inc = inc_of(dpid), .src_uid = 1000 + dpid,
		.dst_nid = 2, .dst_dpid = 20, .dst_inc = B_INC, .seq = seq,
	};
	return h;
}

static void hello(u32 dpid, u32 isn)
{
	struct dp_msg_hdr h = hdr(DP_WT_HELLO, dpid, isn);

	dp_rcv_hello(&B->rcv, &h);
}

/* Byte @k of sender @dpid's message @m. */
static u8 pat(u32 dpid, u32 m, u32 k)
{
	return (u8)(k * 7 + dpid * 13 + m * 101);
}

static u8 frame_buf[W_MSG_MAX];

/* Fragment @i of message @m of @len bytes from @dpid, at @seq, in frame_buf. */
static struct dp_msg_hdr frag(u32 dpid, u32 m, u32 seq, u32 len, u32 i)
{
	struct dp_msg_hdr h = hdr(DP_WT_DATA, dpid, seq);
	struct dp_frag f;
	u8 *p = frame_buf;
	u32 k;

	CHECK_EQ(dp_frag_get(len, FRAME, i, &f), 0);
	h.flags = f.flags;
	h.len = (u16)f.wire_len;
	if (f.flags == DP_WF_FRAG_FIRST) {
		dp_frag_put_total(p, len);
		p += DP_FRAG_TOTAL_LEN;
	}
	for (k = 0; k < f.len; k++)
		p[k] = pat(dpid, m, f.off + k);
	return h;
}

static void put(u32 dpid, u32 m, u32 seq, u32 len, u32 i)
{
	struct dp_msg_hdr h = frag(dpid, m, seq, len, i);

	dp_rcv_data(&B->rcv, &h, W_FLAT(frame_buf));
}

/* Message @m of @len bytes from @dpid, every fragment in order from @seq. */
static u32 put_all(u32 dpid, u32 m, u32 seq, u32 len)
{
	u32 i, n = dp_frag_count(len, FRAME);

	for (i = 0; i < n; i++)
		put(dpid, m, seq + i, len, i);
	return seq + n;
}

/* The reader's next message is @dpid's @m, number @tok_seq, of @len bytes. */
static void expect(u32 dpid, u32 m, u32 tok_seq, u32 len)
{
	struct dp_token *t = dp_ring_head(&B->pool.ring);
	const u8 *b;
	u32 k, bad = 0;

	CHECK(t != NULL, "a message from %u", dpid);
	if (!t)
		return;
	CHECK_EQ(t->flags, 0);
	CHECK_EQ(t->len, len);
	CHECK_EQ(t->src_dpid, dpid);
	CHECK_EQ(t->src_uid, 1000 + dpid);
	CHECK_EQ(t->seq, tok_seq);
	b = (const u8 *)(t + 1);
	for (k = 0; k < len && k < t->len; k++)
		bad += b[k] != pat(dpid, m, k);
	CHECK_EQ(bad, 0);
	CHECK_EQ(w_read(B, 1, NULL), 1);
}

static u64 ctr(enum dp_counter c)
{
	return w.nodes[1].ctr[c];
}

static u32 rcv_nxt(u32 dpid)
{
	struct dp_rcv_info ri = { 0 };

	CHECK(w_rinfo(B, 1, dpid, &ri), "B knows %u", dpid);
	return ri.rcv_nxt;
}

/*
 * A fragmented message is one contiguous token; another sender's whole
 * messages placed meanwhile wait behind it and follow it in order; the
 * message numbers in the tokens count messages, not fragments.
 */
static void test_frag_delivered(void)
{
	u32 seq;

	setup(65536);
	hello(11, 100);
	hello(12, 500);
	put(11, 0, 100, BIG, 0);
	put(11, 0, 101, BIG, 1);
	put(12, 0, 500, 300, 0);	/* whole */
	put(12, 1, 501, 1400, 0);	/* whole, a full frame */
	CHECK_EQ(w_queued(B), 0);	/* all behind the open message */
	CHECK(dp_ring_head(&B->pool.ring) == NULL, "nothing visible");
	put(11, 0, 102, BIG, 2);
	CHECK_EQ(w_queued(B), 0);
	put(11, 0, 103, BIG, 3);
	CHECK_EQ(w_queued(B), 3);
	CHECK_EQ(ctr(DP_CTR_RX_MSGS), 3);
	CHECK_EQ(ctr(DP_CTR_RX_BYTES), BIG + 300 + 1400);
	seq = put_all(11, 1, 104, 300);
	seq = put_all(11, 2, seq, 20000);
	CHECK_EQ(seq, 104 + 1 + dp_frag_count(20000, FRAME));
	CHECK_EQ(rcv_nxt(11), seq);
	expect(11, 0, 1, BIG);
	expect(12, 0, 1, 300);
	expect(12, 1, 2, 1400);
	expect(11, 1, 2, 300);
	expect(11, 2, 3, 20000);
	CHECK_EQ(w_queued(B), 0);
	w_teardown();
}

/* Drop @h, counted as @c; nothing placed, nothing accepted. */
static void drop(struct dp_msg_hdr h, enum dp_counter c, u32 dpid)
{
	u64 before = ctr(c);
	u32 nxt = rcv_nxt(dpid), q = w_queued(B);
	u64 prod = B->pool.ring.prod;

	dp_rcv_data(&B->rcv, &h, W_FLAT(frame_buf));
	CHECK(ctr(c) == before + 1, "flags %#x len %u counted %u", h.flags,
	      h.len, c);
	CHECK_EQ(rcv_nxt(dpid), nxt);
	CHECK_EQ(w_queued(B), q);
	CHECK(B->pool.ring.prod == prod, "nothing reserved");
}

/* Each bad fragment is a counted drop, and the session goes on after it. */
static void test_frag_drops(void)
{
	struct dp_msg_hdr h;

	setup(65536);
	hello(11, 100);
	/* a MID or LAST with no message open */
	drop(frag(11, 0, 100, BIG, 1), DP_CTR_RX_DROP_SEQ, 11);
	drop(frag(11, 0, 100, BIG, 3), DP_CTR_RX_DROP_SEQ, 11);
	/* a FIRST of 4 bytes or fewer */
	h = frag(11, 0, 100, BIG, 0);
	h.len = DP_FRAG_TOTAL_LEN;
	drop(h, DP_CTR_RX_DROP_LEN, 11);
	/* a FIRST whose length would need no other frame */
	h = frag(11, 0, 100, BIG, 0);
	dp_frag_put_total(frame_buf, h.len - DP_FRAG_TOTAL_LEN);
	drop(h, DP_CTR_RX_DROP_LEN, 11);
	/* a length beyond the largest message the pool takes */
	h = frag(11, 0, 100, BIG, 0);
	dp_frag_put_total(frame_buf, dp_frag_max_msg(65536, FRAME) + 1);
	drop(h, DP_CTR_RX_DROP_TOO_BIG, 11);
	/* now open one */
	put(11, 0, 100, BIG, 0);
	CHECK_EQ(rcv_nxt(11), 101);
	/* a FIRST, or a whole message, while it is open */
	drop(frag(11, 1, 101, BIG, 0), DP_CTR_RX_DROP_SEQ, 11);
	drop(frag(11, 1, 101, 100, 0), DP_CTR_RX_DROP_SEQ, 11);
	/* a MID that completes it; a LAST that does not */
	h = frag(11, 0, 101, BIG, 1);
	h.len = BIG - (FRAME - DP_FRAG_TOTAL_LEN);
	drop(h, DP_CTR_RX_DROP_LEN, 11);
	h = frag(11, 0, 101, BIG, 1);
	h.flags = DP_WF_FRAG_LAST;
	drop(h, DP_CTR_RX_DROP_LEN, 11);
	/* one that runs past the length */
	put(11, 0, 101, BIG, 1);
	put(11, 0, 102, BIG, 2);
	h = frag(11, 0, 103, BIG, 3);
	h.len++;
	drop(h, DP_CTR_RX_DROP_LEN, 11);
	CHECK_EQ(w_queued(B), 0);
	/* the right one still closes it, whole and intact */
	put(11, 0, 103, BIG, 3);
	expect(11, 0, 1, BIG);
	CHECK_EQ(ctr(DP_CTR_RX_MSGS), 1);
	w_teardown();
}

/*
 * A first fragment beyond its sender's credit is refused, counted full:
 * sender 12 holds all the room; once it leaves, 11's next try goes in.
 */
static void test_frag_beyond_credit(void)
{
	struct dp_rcv_info ri = { 0 };
	struct dp_msg_hdr h;

	setup(65536);
	hello(12, 500);
	hello(11, 100);
	CHECK(w_rinfo(B, 1, 11, &ri), "B knows 11");
	CHECK(dp_frag_credit(BIG, FRAME) > (u32)ri.credit_left,
	      "cost %u credit %d", dp_frag_credit(BIG, FRAME), ri.credit_left);
	drop(frag(11, 0, 100, BIG, 0), DP_CTR_RX_DROP_FULL, 11);
	CHECK_EQ(B->pool.refused, 1);
	h = hdr(DP_WT_RESET, 12, 500);
	h.flags = DP_WF_FIN;
	dp_rcv_fin(&B->rcv, &h);
	put_all(11, 0, 100, BIG);
	expect(11, 0, 1, BIG);
	w_teardown();
}

/* Fragments after a gap are held like any DATA, then placed in order. */
static void test_frag_gap(void)
{
	struct dp_rcv_info ri = { 0 };

	setup(65536);
	hello(11, 100);
	put(11, 0, 100, BIG, 0);
	put(11, 0, 102, BIG, 2);	/* 101 lost */
	put(11, 0, 103, BIG, 3);
	put(11, 1, 104, 200, 0);
	CHECK(w_rinfo(B, 1, 11, &ri), "B knows 11");
	CHECK_EQ(ri.held, 3);
	CHECK_EQ(w_queued(B), 0);
	put(11, 0, 101, BIG, 1);	/* resent alone */
	CHECK(w_rinfo(B, 1, 11, &ri), "B knows 11");
	CHECK_EQ(ri.held, 0);
	CHECK_EQ(ri.rcv_nxt, 105);
	CHECK_EQ(w_queued(B), 2);
	expect(11, 0, 1, BIG);
	expect(11, 1, 2, 200);
	w_teardown();
}

static s32 credit_left(u32 dpid)
{
	struct dp_rcv_info ri = { 0 };

	CHECK(w_rinfo(B, 1, dpid, &ri), "B knows %u", dpid);
	return ri.credit_left;
}

static void probe(u32 dpid, u32 isn, u32 want)
{
	struct dp_msg_hdr h = hdr(DP_WT_ACK, dpid, 0);

	h.flags = DP_WF_PROBE;
	h.ack = isn;
	h.credit = want;
	dp_rcv_probe(&B->rcv, &h);
}

/*
 * Senders 12 and 13 share B's pool (11 took the room while alone, then
 * left), and 12, having probed, holds its share: less than @cost.
 */
static void two_share(u32 cost)
{
	struct dp_msg_hdr h;

	setup(65536);
	hello(11, 100);		/* takes the room while alone */
	hello(12, 500);
	hello(13, 900);
	h = hdr(DP_WT_RESET, 11, 100);
	h.flags = DP_WF_FIN;
	dp_rcv_fin(&B->rcv, &h);	/* 12 and 13 share the pool now */
	probe(12, 500, 0);
	CHECK(credit_left(12) > 0 && (u32)credit_left(12) < cost,
	      "a share (%d) under the cost %u", credit_left(12), cost);
}

/*
 * With two senders active each one's target is half the pool, less than
 * the largest message costs; a probe that names that cost raises its
 * sender's target to it, and the message then goes in.
 */
static void test_frag_probe_want(void)
{
	u32 len = dp_frag_max_msg(65536, FRAME), cost = dp_frag_credit(len, FRAME);

	two_share(cost);
	probe(12, 500, cost);
	CHECK((u32)credit_left(12) >= cost, "credit %d for the cost %u",
	      credit_left(12), cost);
	put_all(12, 0, 500, len);
	expect(12, 0, 1, len);
	w_teardown();
}

/*
 * A large message's first fragment that arrives beyond its sender's credit
 * (its sender believes in a grant we took back: a RETURN and an ACK
 * crossed) while another sender shares the pool: a grant of its fair
 * share would never cover the cost, and the sender does not probe for a
 * message it believes it may send.  Its cost is granted whole, as a
 * probe's would be, and the message goes in at once; before, every resend
 * was refused as full, for good (an MPI run over dp hung so).
 */
static void test_frag_beyond_share(void)
{
	u32 len = dp_frag_max_msg(65536, FRAME), cost = dp_frag_credit(len, FRAME);

	two_share(cost);
	put_all(12, 0, 500, len);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_FULL), 0);
	CHECK_EQ(rcv_nxt(12), 500 + dp_frag_count(len, FRAME));
	expect(12, 0, 1, len);
	/* and the next one, once the reader took the first */
	put_all(12, 1, 500 + dp_frag_count(len, FRAME), len);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_FULL), 0);
	expect(12, 1, 2, len);
	w_teardown();
}

/*
 * A probe's cost is asked for once: its writer gave the large message up
 * (a signal) and goes on with small ones, which it has the credit for, so
 * it never probes again.  Once that credit is spent, it is topped up to
 * its share, not to the cost: the cost must not keep the unpromised room
 * for it.
 */
static void test_frag_probe_want_once(void)
{
	u32 len = dp_frag_max_msg(65536, FRAME), cost = dp_frag_credit(len, FRAME);
	u32 seq = 500, i, n = 2 * cost / DP_TOKEN_SPACE(300);
	s32 share;

	two_share(cost);
	share = credit_left(12);
	probe(12, 500, cost);
	CHECK((u32)credit_left(12) >= cost, "credit %d for the cost %u",
	      credit_left(12), cost);
	for (i = 0; i < n; i++) {
		put(12, i, seq++, 300, 0);
		expect(12, i, i + 1, 300);
	}
	CHECK(credit_left(12) <= share, "credit %d after %u small messages, share %d, cost %u",
	      credit_left(12), n, share, cost);
	w_teardown();
}

enum end { END_HELLO, END_INC, END_FIN, END_OWNER, END_SILENT, END_STALL, END_CLOSE };

/*
 * Sender 11's message is open, sender 12's whole message waits behind it;
 * the session of 11 ends as @how says: the open message is given up
 * (counted once in rx_drop_seq), the reader passes it and sees 12's, and
 * nothing of 11's is ever visible.
 */
static void frag_end(enum end how)
{
	struct dp_msg_hdr h;
	u64 seq_drops;

	setup(65536);
	hello(11, 100);
	hello(12, 500);
	put(11, 0, 100, BIG, 0);
	put(11, 0, 101, BIG, 1);
	put(12, 0, 500, 300, 0);
	CHECK_EQ(w_queued(B), 0);
	seq_drops = ctr(DP_CTR_RX_DROP_SEQ);
	switch (how) {
	case END_HELLO:		/* the same incarnation, a new session */
		hello(11, 900);
		break;
	case END_INC:		/* the sender restarted */
		h = hdr(DP_WT_HELLO, 11, 900);
		h.src_inc++;
		dp_rcv_hello(&B->rcv, &h);
		break;
	case END_FIN:
		h = hdr(DP_WT_RESET, 11, 100);
		h.flags = DP_WF_FIN;
		dp_rcv_fin(&B->rcv, &h);
		break;
	case END_OWNER:		/* the DPID changed hands */
		h = hdr(DP_WT_HELLO, 11, 900);
		h.src_uid++;
		dp_rcv_hello(&B->rcv, &h);
		break;
	case END_SILENT:	/* past unreach_ms while the pool is short */
		kmock_advance(dp_unreach_ms + 1);
		hello(12, 600);		/* 12 is heard, 11 is not */
		B->rcv.starved = true;
		mod_delayed_work(dp_wq, &B->rcv.ack_work, 0);
		kmock_run();
		/* the re-grant leaves it to the watch, its next round */
		kmock_advance(dp_unreach_ms / 4);
		CHECK_EQ(w_rx_peers(B), 1);
		break;
	case END_STALL:		/* silent, the pool not short: only the clock */
		kmock_advance(dp_unreach_ms + dp_unreach_ms / 4 + 2);
		CHECK_EQ(w_rx_peers(B), 1);
		CHECK(!B->rcv.open_work.work.pending, "the watch stops: nothing open");
		break;
	case END_CLOSE:
		w_close(B);
		CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), seq_drops + 1);
		w_teardown();
		return;
	}
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), seq_drops + 1);
	CHECK_EQ(w_queued(B), 1);
	expect(12, 0, 1, 300);
	CHECK(dp_ring_head(&B->pool.ring) == NULL, "nothing more");
	CHECK_EQ(B->pool.ring.nfill, 0);
	/* the rest of the old message is no message of any session */
	put(11, 0, 102, BIG, 2);
	CHECK_EQ(w_queued(B), 0);
	CHECK_EQ(ctr(DP_CTR_RX_MSGS), 1);
	w_teardown();
}

static void test_frag_end_hello(void)
{
	frag_end(END_HELLO);
}

static void test_frag_end_inc(void)
{
	frag_end(END_INC);
}

static void test_frag_end_fin(void)
{
	frag_end(END_FIN);
}

static void test_frag_end_owner(void)
{
	frag_end(END_OWNER);
}

static void test_frag_end_silent(void)
{
	frag_end(END_SILENT);
}

static void test_frag_end_stall(void)
{
	frag_end(END_STALL);
}

/*
 * A large message whose sender is heard (its fragments keep coming,
 * however slowly) is never given up, however long it takes.
 */
static void test_frag_slow_kept(void)
{
	u32 i;

	setup(65536);
	hello(11, 100);
	hello(12, 500);
	put(11, 0, 100, BIG, 0);
	put(12, 0, 500, 300, 0);
	for (i = 1; i <= 3; i++) {
		kmock_advance(dp_unreach_ms * 3 / 4);
		CHECK_EQ(w_rx_peers(B), 2);
		CHECK_EQ(w_queued(B), 0);
		CHECK(B->rcv.open_work.work.pending, "the watch goes on while it is open");
		if (i < 3)
			put(11, 0, 100 + i, BIG, i);	/* the middle ones */
	}
	put(11, 0, 103, BIG, 3);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), 0);
	CHECK_EQ(w_queued(B), 2);
	expect(11, 0, 1, BIG);
	expect(12, 0, 1, 300);
	kmock_advance(dp_unreach_ms / 4 + 2);
	CHECK(!B->rcv.open_work.work.pending, "the watch stops: nothing open");
	w_teardown();
}

/*
 * The watch looks at DP_EVICT_SCAN open messages a round, the rest in the
 * next: more senders than that stop mid-message, and once they have been
 * silent past unreach_ms every one is given up and counted.
 */
static void test_frag_watch_many(void)
{
	const u32 n = DP_EVICT_SCAN + 6;
	u32 i;

	struct dp_msg_hdr h;
	struct dp_frag f;

	CHECK_EQ(dp_frag_get(BIG, FRAME, 0, &f), 0);
	setup(4u << 20);
	for (i = 0; i < n; i++) {
		hello(100 + i, 1000);
		put(100 + i, 0, 1000, BIG, 0);
		/* it gives back the rest of its credit, for the next one */
		h = hdr(DP_WT_ACK, 100 + i, 0);
		h.flags = DP_WF_RETURN;
		h.ack = 1000;
		h.credit = dp_frag_credit(BIG, f.len);
		dp_rcv_return(&B->rcv, &h);
	}
	CHECK_EQ(ctr(DP_CTR_RX_DROP_FULL), 0);
	CHECK_EQ(w_queued(B), 0);
	CHECK_EQ(w_rx_peers(B), n);
	kmock_advance(dp_unreach_ms / 2);
	for (i = 0; i < DP_EVICT_SCAN; i++)
		put(100 + i, 0, 1001, BIG, 1);	/* the first 64 heard: kept */
	kmock_advance(dp_unreach_ms / 2 + dp_unreach_ms / 4 + 2);
	/* the last 6 are behind 64 live ones, and found all the same */
	CHECK_EQ(w_rx_peers(B), DP_EVICT_SCAN);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), n - DP_EVICT_SCAN);
	kmock_advance(dp_unreach_ms / 2);
	CHECK_EQ(w_rx_peers(B), 0);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), n);
	CHECK(!B->rcv.open_work.work.pending, "the watch stops: nothing open");
	w_teardown();
}

/*
 * The receiver's own host stalls (its work runs past unreach_ms late): it
 * heard nobody meanwhile, which is not the sender's silence.  The open
 * message is kept, and given up only once the sender stays silent for
 * unreach_ms after.
 */
static void test_frag_watch_stall(void)
{
	setup(65536);
	hello(11, 100);
	put(11, 0, 100, BIG, 0);
	jiffies += 2 * dp_unreach_ms;	/* nothing ran meanwhile */
	kmock_run();
	CHECK_EQ(w_rx_peers(B), 1);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), 0);
	put(11, 0, 101, BIG, 1);
	kmock_advance(dp_unreach_ms / 2);
	CHECK_EQ(w_rx_peers(B), 1);
	kmock_advance(dp_unreach_ms * 3 / 4 + 2);
	CHECK_EQ(w_rx_peers(B), 0);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), 1);
	w_teardown();
}

/*
 * The same stall, and the pool short when this host runs again: the
 * re-grant (which takes credit back from senders silent past unreach_ms)
 * leaves open messages to the watch, whose stall guard keeps this one.
 * Before, the re-grant gave it up itself, stall or not.
 */
static void test_frag_regrant_stall(void)
{
	setup(65536);
	hello(11, 100);
	put(11, 0, 100, BIG, 0);
	jiffies += 2 * dp_unreach_ms;	/* nothing ran meanwhile */
	B->rcv.starved = true;		/* a release: re-grant first */
	mod_delayed_work(dp_wq, &B->rcv.ack_work, 0);
	kmock_run();
	CHECK_EQ(w_rx_peers(B), 1);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), 0);
	put(11, 0, 101, BIG, 1);
	kmock_advance(dp_unreach_ms * 5 / 4 + 2);
	CHECK_EQ(w_rx_peers(B), 0);
	CHECK_EQ(ctr(DP_CTR_RX_DROP_SEQ), 1);
	w_teardown();
}

static void test_frag_end_close(void)
{
	frag_end(END_CLOSE);
}

const struct unit_test rcv_frag_tests[] = {
	{ "rcv frag: one contiguous token, others' messages behind it in order",
	  test_frag_delivered },
	{ "rcv frag: each bad fragment a counted drop, the session goes on",
	  test_frag_drops },
	{ "rcv frag: a first fragment beyond credit is refused as full",
	  test_frag_beyond_credit },
	{ "rcv frag: fragments after a gap held, then placed", test_frag_gap },
	{ "rcv frag: a probe naming a large cost raises its target",
	  test_frag_probe_want },
	{ "rcv frag: a probe's cost is granted once, not kept as the target",
	  test_frag_probe_want_once },
	{ "rcv frag: a large first fragment beyond a shared credit is granted whole",
	  test_frag_beyond_share },
	{ "rcv frag: abort on a new session", test_frag_end_hello },
	{ "rcv frag: abort on a new incarnation", test_frag_end_inc },
	{ "rcv frag: abort on FIN", test_frag_end_fin },
	{ "rcv frag: abort when the DPID changes hands", test_frag_end_owner },
	{ "rcv frag: abort when the sender falls silent", test_frag_end_silent },
	{ "rcv frag: abort when the sender stalls mid-message, the pool not short",
	  test_frag_end_stall },
	{ "rcv frag: a slow sender that is heard keeps its message open",
	  test_frag_slow_kept },
	{ "rcv frag: the watch looks at 64 open messages a round, then the rest",
	  test_frag_watch_many },
	{ "rcv frag: a stall of the receiver's own host is not the sender's silence",
	  test_frag_watch_stall },
	{ "rcv frag: nor when the pool is short as it runs again (the re-grant)",
	  test_frag_regrant_stall },
	{ "rcv frag: abort when the endpoint closes", test_frag_end_close },
	{ NULL, NULL },
};
