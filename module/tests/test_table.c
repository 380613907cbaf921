// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of a receiving endpoint's sender table under attack
 * (docs/security.md, "The sender table"): one user, or one node, cannot
 * take every place; a HELLO refused for lack of room is answered, so its
 * sender fails at once with EUSERS; and a sender of another user, or of
 * another node, still gets a session while the attack runs.
 */
#include "sess_world.h"

#define B_INC		W_B_INC
#define EVIL_UID	6666u
#define EVIL_NID	7u

static struct dp_endpoint *B;

/* A HELLO from sender {nid, dpid} of user @uid to B (node 2, DPID 20). */
static struct dp_msg_hdr hello(u32 nid, u32 dpid, u32 uid)
{
	struct dp_msg_hdr h = {
		.type = DP_WT_HELLO, .src_nid = nid, .src_dpid = dpid,
		.src_uid = uid, .src_inc = 0x100 + dpid, .dst_nid = 2,
		.dst_dpid = 20, .seq = 7 * dpid,
	};
	return h;
}

/* @n HELLOs from distinct senders; how many got a session. */
static unsigned int flood(u32 nid, u32 uid, u32 dpid0, unsigned int n,
			  bool distinct_uids)
{
	unsigned int i, before = w_rx_peers(B);
	struct dp_msg_hdr h;

	for (i = 0; i < n; i++) {
		h = hello(nid, dpid0 + i, distinct_uids ? uid + i : uid);
		dp_rcv_hello(&B->rcv, &h);
		w_pump();	/* the answers go out, as they would */
	}
	return w_rx_peers(B) - before;
}

/* The newest RESET B sent to sender DPID @dpid, or NULL. */
static const struct w_frame *reset_to(u32 dpid)
{
	unsigned int i;

	for (i = w.n_frames; i--; ) {
		const struct w_frame *f = &w.frames[i];

		if (f->h.type == DP_WT_RESET && f->h.dst_dpid == dpid)
			return f;
	}
	return NULL;
}

/*
 * One user with senders enough for the whole table holds at most its
 * share; the HELLOs beyond are answered with a RESET that says why and
 * names the HELLO; a sender of any other user then gets a session at
 * once: the shares are counted per user, not per bucket of users.
 */
static void test_table_one_user(void)
{
	const struct w_frame *f;
	struct dp_msg_hdr h;
	unsigned int got;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	got = flood(1, EVIL_UID, 1000, DP_MAX_RX_PEERS + 8, false);
	CHECK(got <= DP_MAX_RX_PEERS / 4,
	      "one user holds %u of %u places", got, DP_MAX_RX_PEERS);
	w_pump();
	f = reset_to(1000 + DP_MAX_RX_PEERS + 7);
	CHECK(f, "the last refused HELLO is answered");
	if (f) {
		CHECK_EQ(f->h.seq, 7 * (1000 + DP_MAX_RX_PEERS + 7));
		CHECK_EQ(f->h.dst_inc, 0x100 + 1000 + DP_MAX_RX_PEERS + 7);
		CHECK_EQ(f->h.flags & (DP_WF_BUSY | DP_WF_ACK), DP_WF_BUSY);
	}
	for (got = 0; got < 64; got++) {
		h = hello(1, 50 + got, EVIL_UID + 1 + got);
		dp_rcv_hello(&B->rcv, &h);
		w_pump();
		if (!w_rinfo(B, 1, 50 + got, NULL))
			break;
	}
	CHECK_EQ(got, 64);	/* a sender of each of 64 other users */
	w_teardown();
}

/*
 * One node's senders, each of its own user (a user with many subordinate
 * uids), hold at most the node's share: a sender of another node still
 * gets a session.
 */
static void test_table_one_node(void)
{
	struct dp_msg_hdr h;
	unsigned int got;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	got = flood(EVIL_NID, 100000, 1000, DP_MAX_RX_PEERS + 8, true);
	CHECK(got <= DP_MAX_RX_PEERS / 2,
	      "one node holds %u of %u places", got, DP_MAX_RX_PEERS);
	w_pump();
	CHECK(reset_to(1000 + DP_MAX_RX_PEERS + 7), "a refused HELLO is answered");
	h = hello(1, 50, 4242);
	dp_rcv_hello(&B->rcv, &h);
	CHECK(w_rinfo(B, 1, 50, NULL), "another node's sender gets a session");
	w_pump();
	w_teardown();
}

/*
 * A user whose share is full of its own senders, silent past unreach_ms
 * (they died), is not locked out by them: one of them makes room.
 */
static void test_table_own_silent(void)
{
	struct dp_msg_hdr h;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	CHECK_EQ(flood(1, EVIL_UID, 1000, dp_rx_peers_per_uid, false),
		 dp_rx_peers_per_uid);
	h = hello(1, 5000, EVIL_UID);
	dp_rcv_hello(&B->rcv, &h);
	CHECK(!w_rinfo(B, 1, 5000, NULL), "the share is full");
	w_pump();
	kmock_advance(dp_unreach_ms + 1);
	dp_rcv_hello(&B->rcv, &h);
	CHECK(w_rinfo(B, 1, 5000, NULL), "a silent sender of its own made room");
	CHECK_EQ(w_rx_peers(B), dp_rx_peers_per_uid);
	w_pump();
	w_teardown();
}

/*
 * A node whose share is full of senders of many users, silent past
 * unreach_ms: a sender of yet another user on that node takes the place
 * of one of them (of another user: the node's share is the full one).
 */
static void test_table_node_silent(void)
{
	struct dp_msg_hdr h;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	CHECK_EQ(flood(EVIL_NID, 100000, 1000, dp_rx_peers_per_node, true),
		 dp_rx_peers_per_node);
	h = hello(EVIL_NID, 5000, 4242);
	dp_rcv_hello(&B->rcv, &h);
	CHECK(!w_rinfo(B, EVIL_NID, 5000, NULL), "the node's share is full");
	w_pump();
	kmock_advance(dp_unreach_ms + 1);
	dp_rcv_hello(&B->rcv, &h);
	CHECK(w_rinfo(B, EVIL_NID, 5000, NULL), "a silent sender of the node made room");
	CHECK(!w_rinfo(B, EVIL_NID, 1000, NULL), "the longest silent one");
	CHECK_EQ(w_rx_peers(B), dp_rx_peers_per_node);
	w_pump();
	w_teardown();
}

/*
 * Out of memory for a new user's or node's count (the 2nd and 3rd
 * allocations of a HELLO, after the rx peer's): the HELLO is dropped and
 * counted, nothing is held or leaked, and the next one gets its session.
 */
static void test_table_nomem(void)
{
	struct dp_msg_hdr h = hello(3, 60, 4343);
	int nth;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	for (nth = 2; nth <= 3; nth++) {
		kmock_kmalloc_fail_at = nth;
		dp_rcv_hello(&B->rcv, &h);
		CHECK(!kmock_kmalloc_fail_at, "allocation %d was asked for", nth);
		CHECK(!w_rinfo(B, 3, 60, NULL), "no session without its counts (%d)", nth);
		CHECK_EQ(w.nodes[1].ctr[DP_CTR_RX_DROP_NOMEM], (u64)nth - 1);
		CHECK_EQ(w_rx_peers(B), 0);
	}
	dp_rcv_hello(&B->rcv, &h);
	CHECK(w_rinfo(B, 3, 60, NULL), "the next HELLO gets its session");
	w_pump();
	w_teardown();
}

/* The endpoint's owner may fill its own table: it attacks no one else. */
static void test_table_owner(void)
{
	unsigned int got;

	w_setup();
	B = w_ep(1, &w.nodes[1], 20, 1u << 20, B_INC);
	got = flood(1, B->uid, 1000, DP_MAX_RX_PEERS, false);
	CHECK_EQ(got, DP_MAX_RX_PEERS);
	w_pump();
	w_teardown();
}

/*
 * A real sender whose user already holds its share of the receiver's
 * table: its write fails at once (EUSERS), not after unreach_ms with
 * ETIMEDOUT, and the error says the session was refused for room.
 */
static void test_table_sender_fails_fast(void)
{
	struct dp_endpoint *A;
	struct dp_snd *ab;

	ab = w_pair(65536, &A, &B);
	flood(1, A->uid, 1000, DP_MAX_RX_PEERS, false);
	w_pump();
	CHECK_EQ(w_send(ab, 1), -EAGAIN);	/* the HELLO goes out */
	w_run(5);
	CHECK_EQ(w_info(ab).state, DP_SND_FAILED);
	CHECK_EQ(w_send(ab, 1), -EUSERS);
	CHECK(!w_rinfo(B, 1, 10, NULL), "no session for A");
	w_teardown();
}

/* ---- fairness of the credit among senders (docs/security.md) ---- */

#define FLOODERS	4
#define FAIR_MS		3000

/* The bucket of B's sender table that sender {1, dpid} lands in. */
static u32 bucket_of(u32 dpid)
{
	return jhash_2words(1, dpid, B->rcv.seed) % HASH_SIZE(B->rcv.peers);
}

/*
 * DPIDs from 100 up: FLOODERS of them in one bucket, and one in a bucket
 * before it (@legit_first) or after it, for the legitimate sender.
 */
static void pick_dpids(u32 *flood_dpid, u32 *legit_dpid, bool legit_first)
{
	u32 dpid, n = 0, x = 0;

	for (dpid = 100; n < FLOODERS; dpid++) {
		u32 bkt = bucket_of(dpid);

		if (bkt == 0 || bkt == HASH_SIZE(B->rcv.peers) - 1)
			continue;
		if (!n)
			x = bkt;
		if (bkt == x)
			flood_dpid[n++] = dpid;
	}
	for (dpid = 100; ; dpid++) {
		u32 bkt = bucket_of(dpid);

		if (legit_first ? bkt < x : bkt > x)
			break;
	}
	*legit_dpid = dpid;
}

/*
 * Every sender writes as fast as its credit lets it, B's reader takes one
 * message a millisecond: what each sender got through, by B's sender DPID.
 */
static void fair_run(struct dp_snd **s, unsigned int n, const u32 *dpid,
		     unsigned int *got)
{
	unsigned int ms, i;

	for (ms = 0; ms < FAIR_MS; ms++) {
		const struct dp_token *t;

		for (i = 0; i < n; i++)
			while (w_send(s[i], 1000) == 0)
				;
		w_pump();
		t = dp_ring_head(&B->pool.ring);
		if (t) {
			for (i = 0; i < n; i++)
				got[i] += ms >= FAIR_MS / 3 && t->src_dpid == dpid[i];
			dp_ring_release(&B->pool.ring, 1);
			dp_rcv_released(&B->rcv);
		}
		kmock_advance(1);
		if (w.n_frames > W_FRAMES - 64) {	/* the log is only a log */
			w_pump();
			w.n_frames = 0;
		}
	}
}

/*
 * Four senders flood B from one bucket of its sender table, one more
 * sends as fast as it can too: it gets at least 80% of a fair share of
 * what B's reader takes, whether its bucket comes before theirs or after.
 */
static void fair_case(bool legit_first)
{
	u32 dpid[FLOODERS + 1];
	unsigned int got[FLOODERS + 1] = { 0 }, i, total = 0;
	struct dp_snd *s[FLOODERS + 1];
	struct dp_endpoint *ep;

	w_setup();
	B = w_ep(0, &w.nodes[1], 20, 16384, B_INC);
	pick_dpids(dpid, &dpid[FLOODERS], legit_first);
	for (i = 0; i <= FLOODERS; i++) {
		ep = w_ep(1 + i, &w.nodes[0], dpid[i], 65536, 0x300 + i);
		s[i] = w_connect(ep, 2, 20);
		CHECK_EQ(w_send(s[i], 1), -EAGAIN);
	}
	w_pump();
	fair_run(s, FLOODERS + 1, dpid, got);
	for (i = 0; i <= FLOODERS; i++)
		total += got[i];
	printf("#   fair (legit bucket %s): legit %u of %u, flooders %u %u %u %u\n",
	       legit_first ? "first" : "last", got[FLOODERS], total,
	       got[0], got[1], got[2], got[3]);
	CHECK(total > FAIR_MS / 2, "the reader took %u messages", total);
	CHECK(got[FLOODERS] * 5 * 10 >= total * 8,
	      "the legitimate sender got %u of %u: under 80%% of a fair share",
	      got[FLOODERS], total);
	w_drop_all();
	w_teardown();
}

static void test_fair_legit_first(void)
{
	fair_case(true);
}

static void test_fair_legit_last(void)
{
	fair_case(false);
}

const struct unit_test table_tests[] = {
	{ "table: one user holds its share, each other user gets one",
	  test_table_one_user },
	{ "table: one node holds its share, another gets a session",
	  test_table_one_node },
	{ "table: a user's own silent senders make room for it",
	  test_table_own_silent },
	{ "table: a node's silent senders make room for another of its users",
	  test_table_node_silent },
	{ "table: out of memory for a source's count: dropped, counted, no leak",
	  test_table_nomem },
	{ "table: the owner's own senders may fill the table", test_table_owner },
	{ "table: a sender refused for room fails at once with EUSERS",
	  test_table_sender_fails_fast },
	{ "fair: 4 flooders in one bucket, a sender in a bucket before them",
	  test_fair_legit_first },
	{ "fair: 4 flooders in one bucket, a sender in a bucket after them",
	  test_fair_legit_last },
	{ NULL, NULL },
};
