// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of neighbour discovery (module/dp_disc.c) against the kernel
 * mock: nodes on one broadcast link, each with a real struct dp_disc and
 * a NART built with the real table code (dp_nart.c).  Announces are real
 * frames (dp_tx_announce() below encodes and seals them); delivery decodes
 * each as the MDR does and hands it to dp_disc_rx() of every other node
 * on the link.  Timers and work items run as the mock clock moves.
 */
#include <stdlib.h>

#include "sess_world.h"
#include "../dp_nart.h"

#define D_NODES		5
#define D_FRAMES	512
#define D_MS		200	/* the announce interval these tests use */
#define D_HOLD		(DP_DISC_HOLD_FACTOR * D_MS)

struct d_frame {
	u8 src[6];
	int from;		/* node index, or -1: injected */
	size_t len;
	u8 buf[DP_WIRE_HDR_LEN + 16];
};

static struct dp_node dn[D_NODES];
static struct d_frame *df;
static unsigned int n_df;
static unsigned int rx_drops;

/* ---- what dp_disc.h asks of the node ---- */

u32 dp_node_nid(struct dp_node *node)
{
	return node->nid;
}

struct dp_nart_tbl *dp_node_nart_rcu(struct dp_node *node)
{
	return node->nart;
}

static struct dp_nart_tbl *tbl_copy(const struct dp_nart_tbl *old, u32 extra)
{
	u32 cap = (old ? old->n : 0) + extra;
	struct dp_nart_tbl *t = calloc(1, dp_nart_tbl_bytes(cap ? cap : 1));

	t->cap = cap;
	dp_nart_copy(t, old);
	return t;
}

static void gone(const struct dp_nart_entry *e, void *arg)
{
	(void)e;
	((struct dp_node *)arg)->ev_del++;
}

/* The copy-on-write update dp_node.c makes, on the real table code. */
int dp_nart_discover(struct dp_node *node, const struct dp_nart_entry *add,
		     u32 n, unsigned long now, bool all)
{
	struct dp_nart_tbl *t = tbl_copy(node->nart, n);
	u32 i, changed;

	might_sleep();
	changed = dp_nart_expire(t, now, all, gone, node);
	for (i = 0; i < n; i++) {
		CHECK_EQ(add[i].origin, DP_NART_DISCOVERED);
		if (!dp_nart_learn(t, &add[i])) {
			node->ev_set++;
			changed++;
		}
	}
	if (!changed) {
		free(t);
		return 0;
	}
	free(node->nart);
	node->nart = t;
	return 0;
}

/* One announce frame from @src claiming @nid, queued on the link. */
static void frame_put(int from, const u8 *src, u32 nid, u32 hold_ms)
{
	struct dp_msg_hdr h = { .type = DP_WT_ANNOUNCE, .src_nid = nid,
				.len = DP_WIRE_ANNOUNCE_LEN };
	struct d_frame *f = &df[n_df++];
	struct dp_wire_announce a;

	dp_wire_announce_encode(&a, hold_ms);
	dp_wire_encode((struct dp_wire_hdr *)f->buf, &h);
	memcpy(f->buf + DP_WIRE_HDR_LEN, &a, sizeof(a));
	dp_wire_seal((struct dp_wire_hdr *)f->buf, &a, sizeof(a));
	f->len = DP_WIRE_HDR_LEN + sizeof(a);
	f->from = from;
	memcpy(f->src, src, 6);
}

int dp_tx_announce(struct dp_node *node, u32 hold_ms, u8 *lladdr)
{
	might_sleep();
	if (!node->nic)
		return -ENETDOWN;
	if (!node->nid)
		return -EADDRNOTAVAIL;
	CHECK(n_df < D_FRAMES, "link full");
	if (n_df >= D_FRAMES)
		return -ENOBUFS;
	frame_put((int)(node - dn), node->mac, node->nid, hold_ms);
	node->ctr[DP_CTR_TX_CTRL]++;
	memcpy(lladdr, node->mac, 6);
	return 6;
}

void dp_event_conflict(struct dp_node *node, u32 nid, const u8 *addr, u8 alen)
{
	node->ev_conflict++;
	node->ev_nid = nid;
	memcpy(node->ev_addr, addr, alen);
}

/* ---- the link ---- */

/* @f to @to as the MDR would: decode, then discovery's. */
static void rx_one(struct dp_node *to, const struct d_frame *f)
{
	struct dp_msg_hdr h;
	int drop = dp_wire_decode(f->buf, f->len, &h);

	if (drop) {
		rx_drops++;
		return;
	}
	CHECK_EQ(h.type, DP_WT_ANNOUNCE);
	dp_disc_rx(&to->disc, f->src, 6, &h, f->buf + DP_WIRE_HDR_LEN);
}

/*
 * Run what is due, then every frame on the link to every other attached
 * node, until the link is quiet and no work is due.
 */
static void deliver(void)
{
	unsigned int i, k;

	for (;;) {
		kmock_run();
		if (!n_df)
			break;
		for (i = 0; i < n_df; i++)
			for (k = 0; k < D_NODES; k++)
				if ((int)k != df[i].from && dn[k].nic)
					rx_one(&dn[k], &df[i]);
		n_df = 0;
	}
}

/* Move the clock @ms milliseconds, delivering as announces go out. */
static void run(unsigned long ms)
{
	deliver();
	while (ms--) {
		kmock_advance(1);
		deliver();
	}
}

static void d_setup(void)
{
	int i;

	kmock_reset();
	memset(dn, 0, sizeof(dn));
	if (!df)
		df = calloc(D_FRAMES, sizeof(*df));
	n_df = 0;
	rx_drops = 0;
	for (i = 0; i < D_NODES; i++) {
		dn[i].nid = i + 1;
		dn[i].nic = i < 4;	/* the fifth joins when a test says */
		memcpy(dn[i].mac, "\x52\x54\x00\x00\x00", 5);
		dn[i].mac[5] = (u8)(i + 1);
		dp_disc_init(&dn[i].disc, &dn[i]);
	}
}

/* Everything stopped: no timer or work left, no lock rule broken. */
static void d_teardown(void)
{
	int i;

	for (i = 0; i < D_NODES; i++) {
		dp_disc_stop(&dn[i].disc);
		free(dn[i].nart);
		dn[i].nart = NULL;
	}
	CHECK_EQ(kmock_pending(), 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
	CHECK_EQ(kmock_spin_depth, 0);
}

static const struct dp_nart_entry *entry(int node, u32 nid)
{
	return dp_nart_find(dn[node].nart, nid);
}

static u32 nart_n(int node)
{
	return dn[node].nart ? dn[node].nart->n : 0;
}

/* Whether node @i has NID @nid at node @j's MAC, learned by discovery. */
static bool learned(int i, u32 nid, int j)
{
	const struct dp_nart_entry *e = entry(i, nid);

	return e && e->origin == DP_NART_DISCOVERED &&
	       dp_nart_same_addr(e, dn[j].mac, 6);
}

static void all_on(int n)
{
	int i;

	for (i = 0; i < n; i++)
		CHECK_EQ(dp_disc_set(&dn[i].disc, D_MS), 0);
}

static void static_set(int node, u32 nid, const u8 *mac)
{
	struct dp_nart_tbl *t = tbl_copy(dn[node].nart, 1);
	struct dp_nart_entry e = { .nid = nid, .alen = 6 };

	memcpy(e.addr, mac, 6);
	CHECK_EQ(dp_nart_set(t, &e), 0);
	free(dn[node].nart);
	dn[node].nart = t;
}

static const u8 rogue[6] = { 0x02, 0, 0, 0, 0, 0x66 };

/* ---- tests ---- */

/* Off unless an administrator turns it on: nothing sent, nothing learned. */
static void t_disc_off(void)
{
	d_setup();
	run(5 * D_MS);
	CHECK_EQ(dn[0].ctr[DP_CTR_TX_CTRL], 0);
	frame_put(-1, rogue, 9, 1000);
	deliver();
	CHECK_EQ(nart_n(0), 0);
	CHECK_EQ(dn[0].ctr[DP_CTR_RX_CTRL], 0);
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 0);
	CHECK_EQ(dp_disc_interval(&dn[0].disc), 0);
	/* out-of-range intervals are refused and change nothing */
	CHECK_EQ(dp_disc_set(&dn[0].disc, DP_DISC_INTERVAL_MIN_MS - 1), -EINVAL);
	CHECK_EQ(dp_disc_set(&dn[0].disc, DP_DISC_INTERVAL_MAX_MS + 1), -EINVAL);
	CHECK_EQ(dp_disc_interval(&dn[0].disc), 0);
	CHECK_EQ(kmock_pending(), 0);
	d_teardown();
}

/* Turned on: an announce at once, then every interval; all learn all. */
static void t_disc_learn(void)
{
	int i, j;

	d_setup();
	all_on(4);
	deliver();	/* no time passes: the announces at once */
	for (i = 0; i < 4; i++) {
		CHECK_EQ(dn[i].ctr[DP_CTR_TX_CTRL], 1);
		CHECK_EQ(nart_n(i), 3);
		CHECK_EQ(dn[i].ev_set, 3);
		CHECK_EQ(dn[i].ctr[DP_CTR_RX_CTRL], 3);
		for (j = 0; j < 4; j++)
			if (j != i)
				CHECK(learned(i, j + 1, j), "node %d has NID %d", i + 1, j + 1);
		CHECK(!entry(i, i + 1), "node %d has no entry for itself", i + 1);
	}
	run(D_MS - 1);
	CHECK_EQ(dn[0].ctr[DP_CTR_TX_CTRL], 1);
	run(1);
	CHECK_EQ(dn[0].ctr[DP_CTR_TX_CTRL], 2);
	run(10 * D_MS);
	CHECK_EQ(dn[0].ctr[DP_CTR_TX_CTRL], 12);
	/* re-announces only refresh: no NART change, no conflict */
	CHECK_EQ(dn[0].ev_set, 3);
	CHECK_EQ(dn[0].ev_del, 0);
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 0);
	CHECK_EQ(kmock_warns, 0);
	CHECK_EQ(rx_drops, 0);
	/* a node that joins later is learned at its first announce */
	dn[4].nic = true;
	CHECK_EQ(dp_disc_set(&dn[4].disc, D_MS), 0);
	deliver();
	CHECK(learned(0, 5, 4), "latecomer learned");
	CHECK_EQ(nart_n(4), 0);	/* it hears the others at their next */
	run(D_MS);
	CHECK_EQ(nart_n(4), 4);
	d_teardown();
}

/* A silent neighbour ages out after its hold, and only then. */
static void t_disc_age_out(void)
{
	d_setup();
	all_on(4);
	run(D_MS / 2);
	dn[3].nic = false;	/* node 4 falls off the link */
	run(D_HOLD - D_MS);
	CHECK(learned(0, 4, 3), "kept within its hold");
	run(D_HOLD + D_MS);
	CHECK(!entry(0, 4), "gone after its hold");
	CHECK(!entry(1, 4) && !entry(2, 4), "everywhere");
	CHECK_EQ(dn[0].ev_del, 1);
	CHECK(learned(0, 2, 1) && learned(0, 3, 2), "the others stay");
	/* back on the link: learned again */
	dn[3].nic = true;
	run(D_MS);
	CHECK(learned(0, 4, 3), "back");
	/* off: announces stop, its discovered entries go at once */
	CHECK_EQ(dp_disc_set(&dn[3].disc, 0), 0);
	CHECK_EQ(nart_n(3), 0);
	CHECK_EQ(dp_disc_interval(&dn[3].disc), 0);
	run(D_HOLD + 2 * D_MS);
	CHECK(!entry(0, 4), "an off node ages out of the others");
	CHECK_EQ(nart_n(3), 0);	/* and learns nothing */
	d_teardown();
}

/* A static entry always wins over an announce. */
static void t_disc_static_wins(void)
{
	const struct dp_nart_entry *e;

	d_setup();
	static_set(0, 2, rogue);	/* an administrator's (wrong) MAC */
	all_on(4);
	run(3 * D_MS);
	e = entry(0, 2);
	CHECK(e && e->origin == DP_NART_STATIC && dp_nart_same_addr(e, rogue, 6),
	      "static entry kept");
	/* a different address for a static entry is a conflict to report */
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 4);
	CHECK_EQ(dn[0].ev_conflict, 4);
	CHECK_EQ(dn[0].ev_nid, 2);
	CHECK(!memcmp(dn[0].ev_addr, dn[1].mac, 6), "claimant's MAC reported");
	/* loading a static entry replaces a discovered one; it is never aged */
	CHECK(learned(0, 3, 2), "discovered first");
	static_set(0, 3, dn[2].mac);
	dn[2].nic = false;
	run(3 * D_HOLD);
	e = entry(0, 3);
	CHECK(e && e->origin == DP_NART_STATIC, "static never ages out");
	/* a static entry loaded while the NID waits to be learned wins */
	frame_put(-1, rogue, 10, 1000);
	rx_one(&dn[0], &df[n_df - 1]);	/* queued for the learn work */
	n_df = 0;
	static_set(0, 10, dn[1].mac);
	kmock_run();
	e = entry(0, 10);
	CHECK(e && e->origin == DP_NART_STATIC &&
	      dp_nart_same_addr(e, dn[1].mac, 6), "static set meanwhile wins");
	d_teardown();
}

/* Two claimants of one NID: the first stays, every conflict is reported. */
static void t_disc_duplicate(void)
{
	const struct dp_nart_entry *e;

	d_setup();
	all_on(4);
	run(D_MS / 2);
	frame_put(-1, rogue, 2, 1000);	/* claims node 2's NID */
	deliver();
	e = entry(0, 2);
	CHECK(e && dp_nart_same_addr(e, dn[1].mac, 6), "first entry kept");
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 1);
	CHECK_EQ(dn[2].ctr[DP_CTR_DISC_CONFLICT], 1);
	CHECK_EQ(dn[0].ev_conflict, 1);
	CHECK_EQ(dn[0].ev_nid, 2);
	CHECK(!memcmp(dn[0].ev_addr, rogue, 6), "claimant reported");
	CHECK(kmock_warns >= 1, "logged");
	/* node 2 hears its own NID from another: reported there too */
	CHECK_EQ(dn[1].ctr[DP_CTR_DISC_CONFLICT], 1);
	CHECK_EQ(dn[1].ev_nid, 2);
	CHECK(!entry(1, 2), "no entry for our own NID");
	/* both claims before the NART has either: the first heard stays */
	dn[4].nic = true;
	frame_put(-1, dn[4].mac, 42, 1000);
	frame_put(-1, rogue, 42, 1000);
	deliver();
	e = entry(0, 42);
	CHECK(e && dp_nart_same_addr(e, dn[4].mac, 6), "first heard kept");
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 2);
	/* the claimant keeps claiming: counted each time, never merged */
	frame_put(-1, rogue, 2, 1000);
	frame_put(-1, rogue, 2, 1000);
	deliver();
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 4);
	CHECK(learned(0, 2, 1), "still node 2's");
	d_teardown();
}

/* Our own NID: our echo is ignored, anyone else's claim is a conflict. */
static void t_disc_own_nid(void)
{
	d_setup();
	all_on(2);
	deliver();
	frame_put(-1, dn[0].mac, 1, 1000);	/* our own frame, echoed */
	deliver();
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 0);
	/* node 2 is set to node 1's NID: both sides see it */
	dn[1].nid = 1;
	dp_disc_kick(&dn[1].disc);
	deliver();		/* announced at once, not at the interval */
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 1);
	CHECK_EQ(dn[0].ev_nid, 1);
	CHECK(!memcmp(dn[0].ev_addr, dn[1].mac, 6), "claimant's MAC");
	CHECK(!entry(0, 1), "never an entry for ourselves");
	/* node 1's old entry for NID 2 ages out; nothing merges */
	run(D_HOLD + 2 * D_MS);
	CHECK(!entry(0, 2), "old NID aged out");
	CHECK(dn[1].ctr[DP_CTR_DISC_CONFLICT] >= 1, "the other side too");
	d_teardown();
}

/* A flood of new NIDs: the queue holds DP_DISC_PENDING, the rest wait. */
static void t_disc_flood(void)
{
	u32 nid;
	u8 mac[6];

	d_setup();
	all_on(1);
	deliver();
	for (nid = 100; nid < 100 + 2 * DP_DISC_PENDING; nid++) {
		memcpy(mac, rogue, 6);
		mac[4] = (u8)nid;
		frame_put(-1, mac, nid, 1000);
	}
	deliver();
	CHECK_EQ(nart_n(0), DP_DISC_PENDING);
	for (nid = 100; nid < 100 + 2 * DP_DISC_PENDING; nid++) {
		memcpy(mac, rogue, 6);
		mac[4] = (u8)nid;
		frame_put(-1, mac, nid, 1000);
	}
	deliver();
	CHECK_EQ(nart_n(0), 2 * DP_DISC_PENDING);
	CHECK_EQ(dn[0].ctr[DP_CTR_DISC_CONFLICT], 0);
	/* a corrupted announce is dropped before discovery sees it */
	frame_put(-1, rogue, 9, 1000);
	df[n_df - 1].buf[DP_WIRE_HDR_LEN + 2] ^= 0x10;
	deliver();
	CHECK_EQ(rx_drops, 4);	/* one per node on the link */
	CHECK(!entry(0, 9), "nothing learned from it");
	/* bad link addresses are ignored */
	dp_disc_rx(&dn[0].disc, mac, 0, &(struct dp_msg_hdr){ .src_nid = 7 },
		   df[0].buf + DP_WIRE_HDR_LEN);
	CHECK_EQ(nart_n(0), 2 * DP_DISC_PENDING);
	/* the held hold: 1000 ms, then gone */
	dn[0].nic = false;
	run(1001 + D_MS);
	CHECK_EQ(nart_n(0), 0);
	d_teardown();
}

/* Stopped while on (module unload): nothing left running. */
static void t_disc_stop(void)
{
	d_setup();
	all_on(4);
	run(D_MS + 3);
	frame_put(-1, rogue, 77, 1000);
	rx_one(&dn[0], &df[n_df - 1]);	/* the learn work is queued */
	CHECK(kmock_pending() > 0, "work pending");
	d_teardown();		/* dp_disc_stop() on every node */
	CHECK_EQ(dp_disc_interval(&dn[0].disc), 0);
}

const struct unit_test disc_tests[] = {
	{ "disc: off by default; intervals out of range refused", t_disc_off },
	{ "disc: announce at once and every interval; every node learns every other", t_disc_learn },
	{ "disc: a silent neighbour ages out after its hold; off removes discovered", t_disc_age_out },
	{ "disc: a static entry always wins over an announce", t_disc_static_wins },
	{ "disc: a NID claimed twice: first kept, counted, reported, logged", t_disc_duplicate },
	{ "disc: our own NID claimed by another node; our echo ignored", t_disc_own_nid },
	{ "disc: a flood of new NIDs is learned in batches, then ages out", t_disc_flood },
	{ "disc: stop while on leaves no timer or work", t_disc_stop },
	{ NULL, NULL },
};
