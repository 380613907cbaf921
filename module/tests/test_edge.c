// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of an endpoint's edges and of sending on them (dp_edge.c),
 * built against the real dp.h over the mock kernel (mock/kmock.h).
 * Beneath the edges is the test's model of what they call: each edge's
 * reliable session (dp_snd.c: init, stop, release, send, recorded per
 * session), the frame layer's raw send (dp_tx.c: the header, the batch's
 * plug, the NIC, which fail as the test scripts), the node's counters,
 * the limits' charge and autocorking.  What is checked is what dp.h and
 * dp_edge.c promise: an edge per {NID, DPID}, found by both, at most
 * DP_MAX_EDGES; the current edge follows connect and disconnect; an edge
 * leaves the table with its session stopped and is freed with its last
 * reference, never before; a send is refused before anything is done
 * (ENOTCONN, then EMSGSIZE, then EADDRNOTAVAIL), its errno otherwise
 * passed through unchanged, and a message sent is counted once.
 *
 * A world of its own (Makefile, WORLDS): what it defines here is seen by
 * dp_edge.c alone.
 */
#include "dp.h"
#include "unit.h"

#define E_NID		1	/* ours */
#define E_DPID		100	/* the endpoint's */
#define E_SNDS		(DP_MAX_EDGES + 8)
#define E_BIG		(DP_MAX_MSG + 2)

enum e_state { E_NONE, E_INIT, E_STOPPED, E_RELEASED };

/* One edge's session as the model sees it. */
struct e_snd {
	struct dp_snd *s;
	struct dp_addr to;
	enum e_state state;
};

static struct {
	struct dp_node node;
	struct dp_endpoint ep;
	u32 max_msg;			/* dp_max_msg() */
	struct e_snd snd[E_SNDS];
	unsigned int n_snd;
	unsigned int wakes;
	int grow_err;			/* dp_limits_grow() fails with it */
	/* the session's sends */
	unsigned int snd_sends;
	int snd_err;
	bool snd_nonblock;
	size_t snd_len;
	void (*snd_hook)(void);		/* while a session sends */
	/* the frame layer */
	bool plugged;			/* dp_tx_plugged() is ep's plug */
	bool slot;			/* dp_tx_plug_slot() gives room */
	u8 slot_buf[E_BIG];
	unsigned int frames, commits;
	int nic_err;
	struct dp_msg_hdr h;		/* the last frame's header */
	u32 crc;			/* its CRC state */
	const struct dp_tx_plug *frame_plug;
	u8 frame[E_BIG];		/* its message */
	/* counters and autocorking */
	u64 ctr[DP_CTR_COUNT];
	unsigned int count_calls;
	bool cork_ret, corked;
	unsigned int cork_starts, cork_ends;
	size_t cork_len;
	u8 buf[E_BIG];			/* "user" memory */
} g;

/* ---- what dp_edge.c asks of the rest of dp.ko ---- */

static struct e_snd *e_snd_of(const struct dp_snd *s)
{
	unsigned int i;

	for (i = g.n_snd; i--; )	/* the newest: an address is reused */
		if (g.snd[i].s == s)
			return &g.snd[i];
	CHECK(0, "a session never initialised");
	return &g.snd[0];
}

static struct dp_edge *e_of(struct dp_snd *s)
{
	return container_of(s, struct dp_edge, snd);
}

void dp_snd_init(struct dp_snd *s, struct dp_snd_ep *se,
		 const struct dp_addr *to)
{
	CHECK(se == &g.ep.snd, "the endpoint's sessions");
	CHECK(g.n_snd < E_SNDS, "room in the model");
	if (g.n_snd >= E_SNDS)
		return;
	g.snd[g.n_snd].s = s;
	g.snd[g.n_snd].to = *to;
	g.snd[g.n_snd].state = E_INIT;
	g.n_snd++;
}

void dp_snd_stop(struct dp_snd *s)
{
	struct e_snd *m = e_snd_of(s);

	CHECK(m->state == E_INIT, "stopped once, before its release");
	CHECK(hlist_unhashed_lockless(&e_of(s)->hnode), "out of the table first");
	m->state = E_STOPPED;
}

void dp_snd_release(struct dp_snd *s)
{
	struct e_snd *m = e_snd_of(s);

	CHECK(m->state == E_STOPPED, "released once, after its stop");
	CHECK_EQ(e_of(s)->refs.refs, 0);
	m->state = E_RELEASED;
}

void dp_snd_wake(struct dp_snd_ep *se)
{
	CHECK(se == &g.ep.snd, "the endpoint's writers");
	CHECK(!g.ep.lock.held, "woken after the lock");
	g.wakes++;
}

int dp_snd_send(struct dp_snd *s, const void __user *buf, size_t len,
		bool nonblock)
{
	CHECK(e_snd_of(s)->state == E_INIT, "a live session");
	CHECK(buf == g.buf, "the caller's buffer");
	if (g.snd_hook)
		g.snd_hook();
	if (g.snd_err)
		return g.snd_err;
	g.snd_sends++;
	g.snd_nonblock = nonblock;
	g.snd_len = len;
	return 0;
}

int dp_limits_grow(struct dp_charge *c, size_t bytes)
{
	CHECK(c == &g.ep.charge, "the endpoint's charge");
	if (g.grow_err)
		return g.grow_err;
	c->bytes += bytes;
	return 0;
}

void dp_limits_shrink(struct dp_charge *c, size_t bytes)
{
	CHECK(c == &g.ep.charge, "the endpoint's charge");
	CHECK(bytes <= c->bytes, "no more than was charged");
	c->bytes -= bytes;
}

u32 dp_max_msg(struct dp_node *node)
{
	CHECK(node == &g.node, "the endpoint's node");
	return g.max_msg;
}

/* As dp_tx.c's. */
void dp_tx_hdr(struct dp_endpoint *ep, struct dp_msg_hdr *h, u8 type,
	       const struct dp_addr *to)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst_nid = to->nid;
	h->dst_dpid = to->dpid;
	h->src_nid = READ_ONCE(ep->node->nid);
	h->src_dpid = ep->dpid;
	h->src_uid = ep->wire_uid;
	h->src_inc = ep->inc;
}

struct dp_tx_plug *dp_tx_plugged(struct dp_endpoint *ep)
{
	return g.plugged ? &ep->plug : NULL;
}

void *dp_tx_plug_slot(struct dp_tx_plug *plug, const struct dp_msg_hdr *h)
{
	CHECK(plug == &g.ep.plug, "the endpoint's plug");
	CHECK_EQ(h->flags, DP_WF_RAW);
	return g.slot ? g.slot_buf : NULL;
}

void dp_tx_plug_commit(struct dp_tx_plug *plug, const struct dp_msg_hdr *h,
		       u32 msg_crc)
{
	CHECK(plug == &g.ep.plug, "the endpoint's plug");
	g.commits++;
	g.h = *h;
	g.crc = msg_crc;
	memcpy(g.frame, g.slot_buf, h->len);
}

int dp_tx_frame_plug(struct dp_node *node, struct dp_tx_plug *plug,
		     const struct dp_msg_hdr *h, const void *msg, u32 msg_crc)
{
	CHECK(node == &g.node, "the endpoint's node");
	if (g.nic_err)
		return g.nic_err;
	g.frames++;
	g.h = *h;
	g.crc = msg_crc;
	g.frame_plug = plug;
	memcpy(g.frame, msg, h->len);
	return 0;
}

void dp_count_add(struct dp_node *node, enum dp_counter c, u64 v)
{
	CHECK(node == &g.node, "the endpoint's node");
	g.ctr[c] += v;
	g.count_calls++;
}

bool dp_cork_start(struct dp_endpoint *ep, size_t len)
{
	CHECK(!g.corked, "one cork at a time");
	g.cork_starts++;
	g.cork_len = len;
	g.corked = g.cork_ret;
	return g.cork_ret;
}

void dp_cork_end(struct dp_endpoint *ep)
{
	CHECK(g.corked, "ended after a start that took it");
	g.corked = false;
	g.cork_ends++;
}

/* ---- the world ---- */

static void e_setup(bool raw)
{
	unsigned int i;

	kmock_reset();
	memset(&g, 0, sizeof(g));
	g.node.nid = E_NID;
	g.max_msg = 1500;
	g.ep.node = &g.node;
	g.ep.dpid = E_DPID;
	g.ep.raw = raw;
	g.ep.inc = 7;
	g.ep.wire_uid = 1000;
	mutex_init(&g.ep.lock);
	hash_init(g.ep.edges);
	for (i = 0; i < sizeof(g.buf); i++)
		g.buf[i] = (u8)(i * 7 + 3);
}

static struct dp_addr e_addr(u32 nid, u32 dpid)
{
	return (struct dp_addr){ .nid = nid, .dpid = dpid };
}

static int e_connect(u32 nid, u32 dpid)
{
	struct dp_addr to = e_addr(nid, dpid);

	return dp_edge_connect(&g.ep, &to);
}

static int e_disconnect(u32 nid, u32 dpid)
{
	struct dp_addr to = e_addr(nid, dpid);

	return dp_edge_disconnect(&g.ep, &to);
}

static struct dp_edge *e_find(u32 nid, u32 dpid)
{
	struct dp_addr to = e_addr(nid, dpid);
	struct dp_edge *e;

	mutex_lock(&g.ep.lock);
	e = dp_edge_find(&g.ep, &to);
	mutex_unlock(&g.ep.lock);
	return e;
}

static ssize_t e_send(u32 nid, u32 dpid, size_t len)
{
	struct dp_addr to = e_addr(nid, dpid);

	return dp_send(&g.ep, &to, g.buf, len, false);
}

/* The sessions in each state. */
static unsigned int e_in(enum e_state st)
{
	unsigned int i, n = 0;

	for (i = 0; i < g.n_snd; i++)
		n += g.snd[i].state == st;
	return n;
}

/* The endpoint's release: nothing left allocated, charged, held, armed. */
static void e_done(void)
{
	unsigned int i;

	dp_edge_free_all(&g.ep);
	CHECK_EQ(g.ep.n_edges, 0);
	CHECK(g.ep.cur == NULL, "no current edge");
	for (i = 0; i < HASH_SIZE(g.ep.edges); i++)
		CHECK(!g.ep.edges[i].first, "bucket %u empty", i);
	CHECK_EQ(e_in(E_RELEASED), g.n_snd);
	CHECK_EQ(g.ep.charge.bytes, 0);
	CHECK(!g.ep.lock.held, "the lock let go of");
	CHECK(!g.corked, "no cork left");
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(kmock_pending(), 0);
	CHECK_EQ(kmock_refcount_errors, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/* ---- edges ---- */

/*
 * A new edge: allocated, charged, its session started, current; the
 * same one again: no second edge, made current again.  Writers woken.
 */
static void test_edge_connect(void)
{
	struct dp_edge *a, *b;

	e_setup(false);
	CHECK(g.ep.cur == NULL, "none before");
	CHECK_EQ(e_connect(2, 200), 0);
	a = e_find(2, 200);
	CHECK(a != NULL, "found");
	if (!a)
		return;
	CHECK(g.ep.cur == a, "the new edge current");
	CHECK_EQ(g.ep.n_edges, 1);
	CHECK_EQ(a->refs.refs, 1);
	CHECK(a->ep == &g.ep, "its endpoint");
	CHECK_EQ(a->to.nid, 2);
	CHECK_EQ(a->to.dpid, 200);
	CHECK_EQ(g.ep.charge.bytes, sizeof(*a));
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK_EQ(g.n_snd, 1);
	CHECK(g.snd[0].s == &a->snd, "its session");
	CHECK_EQ(g.snd[0].to.nid, 2);
	CHECK_EQ(g.snd[0].to.dpid, 200);
	CHECK_EQ(g.wakes, 1);

	CHECK_EQ(e_connect(2, 201), 0);
	b = e_find(2, 201);
	CHECK(b != NULL && b != a, "a second edge");
	CHECK(g.ep.cur == b, "the newer current");
	CHECK_EQ(g.ep.n_edges, 2);
	CHECK_EQ(g.wakes, 2);

	/* connected already: no error, no new edge, current again */
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK(g.ep.cur == a, "the first current again");
	CHECK(e_find(2, 200) == a, "the same edge");
	CHECK_EQ(g.ep.n_edges, 2);
	CHECK_EQ(g.n_snd, 2);
	CHECK_EQ(kmock_kmalloc_live, 2);
	CHECK_EQ(g.ep.charge.bytes, 2 * sizeof(*a));
	CHECK_EQ(a->refs.refs, 1);
	CHECK_EQ(g.wakes, 3);
	CHECK_EQ(e_in(E_INIT), 2);
	e_done();
}

/* No NID or no DPID: EINVAL, nothing done. */
static void test_edge_connect_invalid(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(DP_NID_NONE, 200), -EINVAL);
	CHECK_EQ(e_connect(2, DP_DPID_NONE), -EINVAL);
	CHECK_EQ(e_connect(DP_NID_NONE, DP_DPID_NONE), -EINVAL);
	CHECK_EQ(g.ep.n_edges, 1);
	CHECK(g.ep.cur == e_find(2, 200), "the current edge kept");
	CHECK_EQ(g.wakes, 1);
	CHECK_EQ(g.n_snd, 1);
	e_done();
}

/*
 * The charge refused, or the allocation failed: that errno, nothing
 * allocated or charged, the current edge kept, no wake.
 */
static void test_edge_connect_fail(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	g.grow_err = -ENOBUFS;
	CHECK_EQ(e_connect(2, 201), -ENOBUFS);
	CHECK_EQ(g.ep.n_edges, 1);
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK_EQ(g.ep.charge.bytes, sizeof(struct dp_edge));
	CHECK(g.ep.cur == e_find(2, 200), "the current edge kept");
	CHECK(!e_find(2, 201), "not connected");
	CHECK_EQ(g.wakes, 1);
	/* an edge there already needs no charge */
	CHECK_EQ(e_connect(2, 200), 0);
	g.grow_err = 0;

	kmock_kmalloc_fail = 1;
	CHECK_EQ(e_connect(2, 201), -ENOMEM);
	CHECK_EQ(g.ep.n_edges, 1);
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK_EQ(g.ep.charge.bytes, sizeof(struct dp_edge));
	CHECK(g.ep.cur == e_find(2, 200), "the current edge kept");
	CHECK(!e_find(2, 201), "not connected");
	CHECK_EQ(g.wakes, 2);
	CHECK_EQ(g.n_snd, 1);
	e_done();
}

/* DP_MAX_EDGES edges and no more (ENOSPC); one gone, room for one. */
static void test_edge_limit(void)
{
	unsigned int i, bad = 0;

	e_setup(false);
	for (i = 0; i < DP_MAX_EDGES; i++)
		bad += e_connect(2 + i % 5, 1000 + i) != 0;
	CHECK_EQ(bad, 0);
	CHECK_EQ(g.ep.n_edges, DP_MAX_EDGES);
	CHECK_EQ(e_connect(9, 9), -ENOSPC);
	CHECK(!e_find(9, 9), "not connected");
	CHECK_EQ(g.ep.n_edges, DP_MAX_EDGES);
	CHECK_EQ(kmock_kmalloc_live, DP_MAX_EDGES);
	CHECK_EQ(g.ep.charge.bytes, DP_MAX_EDGES * sizeof(struct dp_edge));
	CHECK_EQ(e_connect(2, 1000), 0);	/* connected: made current */
	CHECK(g.ep.cur == e_find(2, 1000), "current");
	CHECK_EQ(e_disconnect(3, 1001), 0);
	CHECK_EQ(e_connect(9, 9), 0);
	CHECK_EQ(e_connect(9, 10), -ENOSPC);
	CHECK_EQ(g.ep.n_edges, DP_MAX_EDGES);
	for (i = 0, bad = 0; i < DP_MAX_EDGES; i++)
		bad += !e_find(2 + i % 5, 1000 + i) != (i == 1);
	CHECK_EQ(bad, 0);
	e_done();
	CHECK_EQ(g.n_snd, DP_MAX_EDGES + 1);
}

/*
 * Disconnect: ENOTCONN unless connected; the edge out of the table, its
 * session stopped (which tells the peer) and released, the edge freed and its
 * charge given back; the current edge cleared only if it was that one.
 */
static void test_edge_disconnect(void)
{
	e_setup(false);
	CHECK_EQ(e_disconnect(2, 200), -ENOTCONN);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(2, 201), 0);
	CHECK_EQ(e_connect(3, 200), 0);		/* current */
	CHECK_EQ(e_disconnect(2, 202), -ENOTCONN);
	CHECK_EQ(e_disconnect(3, 201), -ENOTCONN);
	CHECK_EQ(g.ep.n_edges, 3);

	CHECK_EQ(e_disconnect(2, 201), 0);	/* not the current one */
	CHECK(!e_find(2, 201), "gone");
	CHECK(g.ep.cur == e_find(3, 200), "the current edge kept");
	CHECK_EQ(g.ep.n_edges, 2);
	CHECK_EQ(g.snd[1].state, E_RELEASED);
	CHECK_EQ(kmock_kmalloc_live, 2);
	CHECK_EQ(g.ep.charge.bytes, 2 * sizeof(struct dp_edge));
	CHECK_EQ(e_disconnect(2, 201), -ENOTCONN);

	CHECK_EQ(e_disconnect(3, 200), 0);	/* the current one */
	CHECK(g.ep.cur == NULL, "no current edge");
	CHECK(e_find(2, 200) != NULL, "the other kept");
	CHECK_EQ(g.snd[0].state, E_INIT);
	CHECK_EQ(g.snd[2].state, E_RELEASED);
	CHECK_EQ(g.ep.n_edges, 1);
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK_EQ(g.ep.charge.bytes, sizeof(struct dp_edge));
	CHECK_EQ(dp_send(&g.ep, NULL, g.buf, 8, false), -ENOTCONN);
	e_done();
}

/* Addresses whose edges share @to's bucket: @n of them, found by search. */
static unsigned int e_colliding(struct dp_addr to, struct dp_addr *out,
				unsigned int n, bool by_nid)
{
	u32 b = jhash_2words(to.nid, to.dpid, 0) % HASH_SIZE(g.ep.edges);
	unsigned int k = 0;
	u32 v;

	for (v = 1; k < n && v < 100000; v++) {
		struct dp_addr a = by_nid ? e_addr(v, to.dpid) : e_addr(to.nid, v);

		if ((a.nid != to.nid || a.dpid != to.dpid) &&
		    jhash_2words(a.nid, a.dpid, 0) % HASH_SIZE(g.ep.edges) == b)
			out[k++] = a;
	}
	return k;
}

/*
 * Edges in one bucket, alike in NID or in DPID: each found by both, an
 * address of that bucket not connected not found, and a chain whose
 * middle is disconnected still holding the rest.
 */
static void test_edge_collisions(void)
{
	struct dp_addr to = e_addr(2, 200), same_nid[3], same_dpid[3], miss[2];
	struct dp_addr all[7];
	unsigned int i;

	e_setup(false);
	CHECK_EQ(e_colliding(to, same_nid, 3, false), 3);
	CHECK_EQ(e_colliding(to, same_dpid, 3, true), 3);
	all[0] = to;
	for (i = 0; i < 3; i++) {
		all[1 + i] = same_nid[i];
		all[4 + i] = same_dpid[i];
	}
	/* two more of the bucket, left unconnected */
	{
		struct dp_addr more[5];

		CHECK_EQ(e_colliding(to, more, 5, false), 5);
		miss[0] = more[3];
		miss[1] = more[4];
	}
	for (i = 0; i < 7; i++)
		CHECK_EQ(dp_edge_connect(&g.ep, &all[i]), 0);
	CHECK_EQ(g.ep.n_edges, 7);
	for (i = 0; i < 7; i++) {
		struct dp_edge *e = e_find(all[i].nid, all[i].dpid);

		CHECK(e && e->to.nid == all[i].nid && e->to.dpid == all[i].dpid,
		      "edge %u found as itself", i);
	}
	for (i = 0; i < 2; i++) {
		CHECK(!e_find(miss[i].nid, miss[i].dpid), "%u not found", i);
		CHECK(!dp_edge_get(&g.ep, &miss[i]), "%u not got", i);
		CHECK_EQ(dp_edge_disconnect(&g.ep, &miss[i]), -ENOTCONN);
	}
	/* the swapped pair is no match either */
	CHECK(!e_find(200, 2), "{200, 2} is not {2, 200}");

	CHECK_EQ(dp_edge_disconnect(&g.ep, &all[3]), 0);
	CHECK_EQ(dp_edge_disconnect(&g.ep, &all[0]), 0);
	for (i = 0; i < 7; i++)
		CHECK((e_find(all[i].nid, all[i].dpid) != NULL) == (i != 3 && i != 0),
		      "edge %u", i);
	CHECK_EQ(g.ep.n_edges, 5);
	e_done();
}

/*
 * A sender's reference: dp_edge_get() of an address or (NULL) of the
 * current edge takes one, none for an edge not there or already dying;
 * an edge disconnected while held is out of the table (its session
 * stopped) but freed only at the last put.
 */
static void test_edge_refs(void)
{
	struct dp_addr to = e_addr(2, 200), other = e_addr(2, 201);
	struct dp_edge *a, *b, *c;

	e_setup(false);
	CHECK(!dp_edge_get(&g.ep, NULL), "no current edge");
	CHECK(!dp_edge_get(&g.ep, &to), "not connected");
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(2, 201), 0);
	CHECK_EQ(e_connect(2, 200), 0);		/* current */
	a = dp_edge_get(&g.ep, NULL);
	b = dp_edge_get(&g.ep, &to);
	c = dp_edge_get(&g.ep, &other);
	CHECK(a && a == b && a->to.dpid == 200, "the current edge, twice");
	CHECK(c && c != a && c->to.dpid == 201, "the other");
	if (!a || !c)
		return;
	CHECK_EQ(a->refs.refs, 3);
	CHECK_EQ(c->refs.refs, 2);
	dp_edge_put(b);
	CHECK_EQ(a->refs.refs, 2);

	/* disconnected while held: gone from the table, not freed */
	CHECK_EQ(e_disconnect(2, 200), 0);
	CHECK(!dp_edge_get(&g.ep, &to), "not found once disconnected");
	CHECK(!dp_edge_get(&g.ep, NULL), "nor current");
	CHECK_EQ(g.snd[0].state, E_STOPPED);
	CHECK_EQ(a->refs.refs, 1);
	CHECK_EQ(kmock_kmalloc_live, 2);
	CHECK_EQ(g.ep.charge.bytes, sizeof(struct dp_edge));
	CHECK_EQ(a->to.dpid, 200);		/* still readable */
	dp_edge_put(a);				/* the last: freed */
	CHECK_EQ(g.snd[0].state, E_RELEASED);
	CHECK_EQ(kmock_kmalloc_live, 1);

	/* a dying edge (its count at 0, not yet out of the table) */
	c->refs.refs = 0;
	CHECK(!dp_edge_get(&g.ep, &other), "no reference from 0");
	c->refs.refs = 2;
	dp_edge_put(c);
	CHECK_EQ(c->refs.refs, 1);
	CHECK_EQ(g.snd[1].state, E_INIT);
	e_done();
}

/*
 * The endpoint's release: every edge out, stopped (the peer told),
 * released and freed, one a sender still holds only at its put.
 */
static void test_edge_free_all(void)
{
	struct dp_addr held = e_addr(3, 7);
	struct dp_edge *e;
	unsigned int i;

	e_setup(false);
	for (i = 0; i < 40; i++)
		CHECK_EQ(e_connect(2 + i % 3, 300 + i * 64), 0);
	CHECK_EQ(e_connect(3, 7), 0);
	e = dp_edge_get(&g.ep, &held);
	CHECK(e != NULL, "held");
	if (!e)
		return;
	dp_edge_free_all(&g.ep);
	CHECK_EQ(g.ep.n_edges, 0);
	CHECK(g.ep.cur == NULL, "no current edge");
	CHECK_EQ(g.ep.charge.bytes, 0);
	CHECK_EQ(e_in(E_RELEASED), 40);
	CHECK_EQ(e_in(E_STOPPED), 1);
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK(!dp_edge_get(&g.ep, &held), "gone");
	dp_edge_put(e);
	e_done();
	CHECK_EQ(g.n_snd, 41);
}

/* ---- sends ---- */

/*
 * No edge: ENOTCONN before anything else (docs/contract.md), even for a
 * message too large; nothing sent, corked, counted.
 */
static void test_edge_send_notconn(void)
{
	e_setup(false);
	CHECK_EQ(e_send(2, 200, 8), -ENOTCONN);
	CHECK_EQ(dp_send(&g.ep, NULL, g.buf, 8, false), -ENOTCONN);
	CHECK_EQ(e_send(2, 200, DP_POOL_MAX), -ENOTCONN);
	CHECK_EQ(e_connect(2, 201), 0);
	CHECK_EQ(e_send(2, 200, 8), -ENOTCONN);
	CHECK_EQ(e_send(2, 200, 0), -ENOTCONN);
	CHECK_EQ(g.snd_sends + g.frames + g.count_calls + g.cork_starts, 0);
	CHECK_EQ(e_find(2, 201)->refs.refs, 1);
	e_done();
}

/*
 * Sizes: 0 bytes sends nothing and returns 0; a reliable message up to
 * half the largest pool, a raw one up to the NIC's (never above
 * DP_MAX_MSG), else EMSGSIZE; a node without a NID: EADDRNOTAVAIL, but
 * after EMSGSIZE.
 */
static void test_edge_send_size(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_send(2, 200, 0), 0);
	CHECK_EQ(g.snd_sends, 0);
	CHECK_EQ(e_send(2, 200, DP_POOL_MAX / 2 + 1), -EMSGSIZE);
	CHECK_EQ(g.snd_sends, 0);
	CHECK_EQ(e_send(2, 200, DP_POOL_MAX / 2), DP_POOL_MAX / 2);
	CHECK_EQ(g.snd_sends, 1);
	CHECK_EQ(g.snd_len, DP_POOL_MAX / 2);
	g.node.nid = DP_NID_NONE;
	CHECK_EQ(e_send(2, 200, DP_POOL_MAX / 2 + 1), -EMSGSIZE);
	CHECK_EQ(e_send(2, 200, 8), -EADDRNOTAVAIL);
	CHECK_EQ(g.snd_sends, 1);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 1);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 1);
	CHECK_EQ(e_find(2, 200)->refs.refs, 1);
	e_done();

	e_setup(true);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_send(2, 200, 0), 0);
	CHECK_EQ(e_send(2, 200, 1501), -EMSGSIZE);
	CHECK_EQ(e_send(2, 200, 1500), 1500);
	g.max_msg = DP_MAX_MSG + 1;		/* the NIC's is never more */
	CHECK_EQ(e_send(2, 200, DP_MAX_MSG + 1), -EMSGSIZE);
	CHECK_EQ(e_send(2, 200, DP_MAX_MSG), DP_MAX_MSG);
	g.node.nid = DP_NID_NONE;
	CHECK_EQ(e_send(2, 200, DP_MAX_MSG + 1), -EMSGSIZE);
	CHECK_EQ(e_send(2, 200, 8), -EADDRNOTAVAIL);
	CHECK_EQ(g.frames, 2);
	CHECK_EQ(g.snd_sends, 0);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 2);
	CHECK_EQ(kmock_kmalloc_live, 1);	/* the edge; no copy left */
	e_done();
}

/*
 * @msgs messages of @bytes in all counted, by the node and the endpoint,
 * and the edge to 2:200 held by nobody but its endpoint.
 */
static void e_check_sent(u64 msgs, u64 bytes)
{
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], msgs);
	CHECK_EQ(g.ctr[DP_CTR_TX_BYTES], bytes);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), msgs);
	CHECK_EQ(atomic64_read(&g.ep.tx_bytes), bytes);
	CHECK_EQ(e_find(2, 200)->refs.refs, 1);
}

/* The raw frame's header, as dp_tx_hdr() builds it, plus flags, len, seq. */
static void e_check_hdr(u32 nid, u32 dpid, size_t len, u32 seq)
{
	CHECK_EQ(g.h.type, DP_WT_DATA);
	CHECK_EQ(g.h.flags, DP_WF_RAW);
	CHECK_EQ(g.h.len, len);
	CHECK_EQ(g.h.seq, seq);
	CHECK_EQ(g.h.dst_nid, nid);
	CHECK_EQ(g.h.dst_dpid, dpid);
	CHECK_EQ(g.h.src_nid, E_NID);
	CHECK_EQ(g.h.src_dpid, E_DPID);
	CHECK_EQ(g.h.src_uid, 1000);
	CHECK_EQ(g.h.src_inc, 7);
	CHECK_EQ(g.h.ack, 0);
	CHECK_EQ(g.h.credit, 0);
	CHECK_EQ(g.h.dst_inc, 0);
	CHECK(!memcmp(g.frame, g.buf, len), "the message's bytes");
}

/*
 * A raw send: one frame, flagged raw, numbered 1, 2, ... per edge (0
 * skipped when the count wraps), its CRC run with the copy unless it
 * stays on our node; small ones copied to the stack, larger ones to
 * the heap and freed; nothing sent by the session.
 */
static void test_edge_send_raw(void)
{
	struct dp_edge *e;

	e_setup(true);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(E_NID, 201), 0);
	CHECK_EQ(e_send(2, 200, 40), 40);
	CHECK_EQ(g.frames, 1);
	e_check_hdr(2, 200, 40, 1);
	CHECK_EQ(g.crc, dp_crc32c(~0u, g.buf, 40));
	CHECK(g.frame_plug == NULL, "no batch");
	CHECK_EQ(e_send(2, 200, 128), 128);
	e_check_hdr(2, 200, 128, 2);
	CHECK_EQ(kmock_kmalloc_live, 2);	/* on the stack */
	CHECK_EQ(e_send(2, 200, 129), 129);
	e_check_hdr(2, 200, 129, 3);
	CHECK_EQ(g.crc, dp_crc32c(~0u, g.buf, 129));
	CHECK_EQ(e_send(2, 200, 1500), 1500);
	e_check_hdr(2, 200, 1500, 4);
	CHECK_EQ(kmock_kmalloc_live, 2);	/* the heap copy freed */

	/* to our own node: no CRC; its own numbering */
	CHECK_EQ(e_send(E_NID, 201, 300), 300);
	e_check_hdr(E_NID, 201, 300, 1);
	CHECK_EQ(g.crc, ~0u);
	CHECK_EQ(e_send(E_NID, 201, 10), 10);
	e_check_hdr(E_NID, 201, 10, 2);
	CHECK_EQ(g.crc, ~0u);

	/* the count wraps: 0 is skipped */
	e = e_find(2, 200);
	atomic_set(&e->tx_seq, -2);
	CHECK_EQ(e_send(2, 200, 16), 16);
	e_check_hdr(2, 200, 16, 0xffffffffu);
	CHECK_EQ(e_send(2, 200, 16), 16);
	e_check_hdr(2, 200, 16, 1);
	CHECK_EQ(g.frames, 8);
	CHECK_EQ(g.snd_sends, 0);
	e_done();
}

/*
 * A raw send in a batch: into the NIC's buffer when the plug gives a
 * slot (committed with its header and CRC), else a frame into the plug.
 */
static void test_edge_send_raw_plug(void)
{
	e_setup(true);
	CHECK_EQ(e_connect(2, 200), 0);
	g.plugged = true;
	g.slot = true;
	CHECK_EQ(e_send(2, 200, 60), 60);
	CHECK_EQ(g.commits, 1);
	CHECK_EQ(g.frames, 0);
	e_check_hdr(2, 200, 60, 1);
	CHECK_EQ(g.crc, dp_crc32c(~0u, g.buf, 60));

	kmock_uaccess_bad = g.buf + 10;
	CHECK_EQ(e_send(2, 200, 60), -EFAULT);
	CHECK_EQ(g.commits, 1);
	kmock_uaccess_bad = NULL;

	g.slot = false;
	CHECK_EQ(e_send(2, 200, 200), 200);
	CHECK_EQ(g.frames, 1);
	CHECK(g.frame_plug == &g.ep.plug, "the batch's plug");
	e_check_hdr(2, 200, 200, 2);	/* the failed one took no number */
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 2);
	CHECK_EQ(g.ctr[DP_CTR_TX_BYTES], 260);
	e_done();
}

/*
 * A raw send that fails: the copy's fault (EFAULT), the heap copy's
 * allocation (ENOMEM), the NIC's errno unchanged; nothing counted, no
 * sequence number spent on a fault, no copy left.
 */
static void test_edge_send_raw_errors(void)
{
	static const int nic_errs[] = { -ENETDOWN, -EHOSTUNREACH, -ENOBUFS, -EAGAIN };
	unsigned int i;

	e_setup(true);
	CHECK_EQ(e_connect(2, 200), 0);
	kmock_uaccess_bad = g.buf + 5;
	CHECK_EQ(e_send(2, 200, 20), -EFAULT);
	CHECK_EQ(e_send(2, 200, 1000), -EFAULT);
	kmock_uaccess_bad = NULL;
	CHECK_EQ(kmock_kmalloc_live, 1);
	kmock_kmalloc_fail = 1;
	CHECK_EQ(e_send(2, 200, 1000), -ENOMEM);
	kmock_kmalloc_fail = 1;
	CHECK_EQ(e_send(2, 200, 128), 128);	/* on the stack: no allocation */
	kmock_kmalloc_fail = 0;
	e_check_hdr(2, 200, 128, 1);
	for (i = 0; i < ARRAY_SIZE(nic_errs); i++) {
		g.nic_err = nic_errs[i];
		CHECK_EQ(e_send(2, 200, 20), nic_errs[i]);
		CHECK_EQ(e_send(2, 200, 1000), nic_errs[i]);
	}
	g.nic_err = 0;
	CHECK_EQ(kmock_kmalloc_live, 1);
	CHECK_EQ(g.frames, 1);
	e_check_sent(1, 128);
	e_done();
}

/*
 * A reliable send: the session's, with the caller's buffer, length and
 * O_NONBLOCK; its errno passed through unchanged and nothing counted.
 */
static void test_edge_send_reliable(void)
{
	static const int errs[] = { -EAGAIN, -ERESTARTSYS, -ECONNRESET,
				    -ETIMEDOUT, -ENOMEM, -EFAULT };
	unsigned int i;

	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(dp_send(&g.ep, NULL, g.buf, 77, true), 77);
	CHECK_EQ(g.snd_sends, 1);
	CHECK(g.snd_nonblock, "O_NONBLOCK passed");
	CHECK_EQ(g.snd_len, 77);
	CHECK_EQ(e_send(2, 200, 5000), 5000);
	CHECK(!g.snd_nonblock, "blocking passed");
	CHECK_EQ(g.frames + g.commits, 0);
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		g.snd_err = errs[i];
		CHECK_EQ(e_send(2, 200, 10), errs[i]);
	}
	g.snd_err = 0;
	CHECK_EQ(g.snd_sends, 2);
	e_check_sent(2, 5077);
	e_done();
}

/*
 * Counted once each, at once: the endpoint's messages and bytes, the
 * node's, and of them the ones to our own node (no local count for
 * another node's).
 */
static void test_edge_send_count(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(E_NID, 201), 0);
	CHECK_EQ(e_send(2, 200, 30), 30);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 1);
	CHECK_EQ(atomic64_read(&g.ep.tx_bytes), 30);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 1);
	CHECK_EQ(g.ctr[DP_CTR_TX_BYTES], 30);
	CHECK_EQ(g.ctr[DP_CTR_TX_LOCAL], 0);
	CHECK_EQ(g.count_calls, 2);
	CHECK_EQ(e_send(E_NID, 201, 12), 12);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 2);
	CHECK_EQ(atomic64_read(&g.ep.tx_bytes), 42);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 2);
	CHECK_EQ(g.ctr[DP_CTR_TX_BYTES], 42);
	CHECK_EQ(g.ctr[DP_CTR_TX_LOCAL], 1);
	CHECK_EQ(g.count_calls, 5);
	e_done();
}

/*
 * A tally: each send added to it (messages, bytes, the local ones),
 * nothing counted until the flush, which counts them once and empties
 * it; an empty tally's flush counts nothing; a failed send adds nothing.
 */
static void test_edge_send_tally(void)
{
	struct dp_tx_tally t = { 0 };
	struct dp_edge *far, *near;

	e_setup(true);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(E_NID, 201), 0);
	far = dp_edge_get(&g.ep, &(struct dp_addr){ .nid = 2, .dpid = 200 });
	near = dp_edge_get(&g.ep, NULL);
	CHECK(far && near && near->to.nid == E_NID, "both edges");
	if (!far || !near)
		return;
	CHECK_EQ(dp_send_edge_tally(far, g.buf, 10, false, &t), 10);
	CHECK_EQ(dp_send_edge_tally(near, g.buf, 20, false, &t), 20);
	CHECK_EQ(dp_send_edge_tally(far, g.buf, 30, false, &t), 30);
	CHECK_EQ(dp_send_edge_tally(far, g.buf, 0, false, &t), 0);
	g.nic_err = -ENETDOWN;
	CHECK_EQ(dp_send_edge_tally(near, g.buf, 40, false, &t), -ENETDOWN);
	g.nic_err = 0;
	CHECK_EQ(dp_send_edge_tally(far, g.buf, 5000, false, &t), -EMSGSIZE);
	CHECK_EQ(g.frames, 3);
	CHECK_EQ(t.msgs, 3);
	CHECK_EQ(t.bytes, 60);
	CHECK_EQ(t.local, 1);
	CHECK_EQ(g.count_calls, 0);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 0);
	dp_tx_tally_flush(&g.ep, &t);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 3);
	CHECK_EQ(atomic64_read(&g.ep.tx_bytes), 60);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 3);
	CHECK_EQ(g.ctr[DP_CTR_TX_BYTES], 60);
	CHECK_EQ(g.ctr[DP_CTR_TX_LOCAL], 1);
	CHECK_EQ(g.count_calls, 3);
	CHECK_EQ(t.msgs, 0);
	CHECK_EQ(t.bytes, 0);
	CHECK_EQ(t.local, 0);
	dp_tx_tally_flush(&g.ep, &t);		/* empty: nothing */
	CHECK_EQ(g.count_calls, 3);
	CHECK_EQ(atomic64_read(&g.ep.tx_msgs), 3);

	/* no local message: no local count */
	CHECK_EQ(dp_send_edge_tally(far, g.buf, 8, false, &t), 8);
	dp_tx_tally_flush(&g.ep, &t);
	CHECK_EQ(g.count_calls, 5);
	CHECK_EQ(g.ctr[DP_CTR_TX_LOCAL], 1);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 4);
	dp_edge_put(far);
	dp_edge_put(near);
	e_done();
}

/*
 * Autocorking: asked for a message to another node (with its length),
 * ended only if it started, whatever the send did; never for our own,
 * nor for a write refused before it is sent (0 bytes, too large, no NID):
 * such a write is no part of a stream.
 */
static void test_edge_send_cork(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	CHECK_EQ(e_connect(E_NID, 201), 0);
	CHECK_EQ(e_send(E_NID, 201, 20), 20);
	CHECK_EQ(g.cork_starts, 0);
	CHECK_EQ(e_send(2, 200, 21), 21);
	CHECK_EQ(g.cork_starts, 1);
	CHECK_EQ(g.cork_len, 21);
	CHECK_EQ(g.cork_ends, 0);
	g.cork_ret = true;
	CHECK_EQ(e_send(2, 200, 22), 22);
	CHECK_EQ(g.cork_starts, 2);
	CHECK_EQ(g.cork_ends, 1);
	g.snd_err = -EAGAIN;
	CHECK_EQ(e_send(2, 200, 23), -EAGAIN);
	CHECK_EQ(g.cork_ends, 2);
	g.snd_err = 0;
	CHECK_EQ(e_send(2, 200, DP_POOL_MAX), -EMSGSIZE);
	CHECK_EQ(e_send(2, 200, 0), 0);
	g.node.nid = DP_NID_NONE;
	CHECK_EQ(e_send(2, 200, 24), -EADDRNOTAVAIL);
	CHECK_EQ(g.cork_starts, 3);
	CHECK_EQ(g.cork_ends, 2);
	CHECK_EQ(g.snd_sends, 3);
	CHECK(!g.corked, "none left");
	e_done();
}

static void e_disconnect_200(void)
{
	CHECK_EQ(e_disconnect(2, 200), 0);
}

/*
 * The edge disconnected while dp_send() uses it (the session sleeping
 * for credit): the send ends on it, and it is freed at dp_send()'s put.
 */
static void test_edge_send_while_disconnected(void)
{
	e_setup(false);
	CHECK_EQ(e_connect(2, 200), 0);
	g.snd_hook = e_disconnect_200;
	CHECK_EQ(e_send(2, 200, 50), 50);
	g.snd_hook = NULL;
	CHECK_EQ(g.snd[0].state, E_RELEASED);
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(g.ctr[DP_CTR_TX_MSGS], 1);
	CHECK_EQ(e_send(2, 200, 50), -ENOTCONN);
	e_done();
}

const struct unit_test edge_tests[] = {
	{ "edge_connect", test_edge_connect },
	{ "edge_connect_invalid", test_edge_connect_invalid },
	{ "edge_connect_fail", test_edge_connect_fail },
	{ "edge_limit", test_edge_limit },
	{ "edge_disconnect", test_edge_disconnect },
	{ "edge_collisions", test_edge_collisions },
	{ "edge_refs", test_edge_refs },
	{ "edge_free_all", test_edge_free_all },
	{ "edge_send_notconn", test_edge_send_notconn },
	{ "edge_send_size", test_edge_send_size },
	{ "edge_send_raw", test_edge_send_raw },
	{ "edge_send_raw_plug", test_edge_send_raw_plug },
	{ "edge_send_raw_errors", test_edge_send_raw_errors },
	{ "edge_send_reliable", test_edge_send_reliable },
	{ "edge_send_count", test_edge_send_count },
	{ "edge_send_tally", test_edge_send_tally },
	{ "edge_send_cork", test_edge_send_cork },
	{ "edge_send_while_disconnected", test_edge_send_while_disconnected },
	{ NULL, NULL },
};
