// SPDX-License-Identifier: GPL-2.0
/* The session tests' world: see sess_world.h. */
#include <stdlib.h>

#include "sess_world.h"
#include "dp_frag.h"
#include "pieces.h"

unsigned int dp_unreach_ms = 10000;
unsigned int dp_rto_min_ms = 20;
unsigned int dp_rto_max_ms = 1000;
unsigned int dp_credit_idle_ms = 100;
unsigned int dp_rx_peers_per_uid = DP_MAX_RX_PEERS / 4;
unsigned int dp_rx_peers_per_node = DP_MAX_RX_PEERS / 2;

struct w_world w;

/* ---- what dp_sess.h asks of the layers around the sessions ---- */

u32 dp_max_msg(struct dp_node *node)
{
	return node->max_msg;
}

void dp_tx_hdr(struct dp_endpoint *ep, struct dp_msg_hdr *h, u8 type,
	       const struct dp_addr *to)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst_nid = to->nid;
	h->dst_dpid = to->dpid;
	h->src_nid = ep->node->nid;
	h->src_dpid = ep->dpid;
	h->src_uid = ep->uid;
	h->src_inc = ep->inc;
}

bool dp_tx_local(struct dp_node *node, u32 nid)
{
	return nid == node->nid;
}

void dp_tx_tmpl(struct dp_endpoint *ep, struct dp_tx_tmpl *t, u8 type,
		const struct dp_addr *to, u32 dst_inc)
{
	if (t->h.type == type && t->h.dst_inc == dst_inc &&
	    t->h.src_nid == ep->node->nid && t->h.dst_nid == to->nid &&
	    t->h.dst_dpid == to->dpid)
		return;
	w.tmpl_builds++;
	dp_tx_hdr(ep, &t->h, type, to);
	t->h.dst_inc = dst_inc;
	dp_wire_encode(&t->w, &t->h);
}

/* The NIC lets go of the oldest copy it holds, checking its bytes. */
static void w_nic_let_go(void)
{
	struct w_held *o = &w.held[0];

	if (dp_wire_msg_crc(o->msg, o->len) != o->crc) {
		unit_failed++;
		printf("#   world: a copy changed while the NIC sent from it\n");
	}
	dp_txref_put(o->ref);	/* may free it: read before */
	w.n_held--;
	memmove(&w.held[0], &w.held[1], w.n_held * sizeof(w.held[0]));
}

void w_nic_release(void)
{
	while (w.n_held)
		w_nic_let_go();
}

static void w_nic_hold(struct dp_txref *keep, const void *msg, u32 len)
{
	if (w.n_held == W_NIC_RING)
		w_nic_let_go();
	dp_txref_get(keep);
	w.held[w.n_held++] = (struct w_held){ .ref = keep, .msg = msg,
		.len = len, .crc = dp_wire_msg_crc(msg, len) };
	w.nic_sent++;
}

/*
 * A batch's plug (struct dp_tx_plug): while w.plug_ep's sends are plugged,
 * its DATA frames are logged held, and no delivery sees them until
 * dp_tx_plug_flush().  (dp.ko holds only small ones; the world holds every
 * one, the stricter test of where the session flushes.)
 */
struct dp_tx_plug {
	int unused;
};

static struct dp_tx_plug w_plug;

struct dp_tx_plug *dp_tx_plugged(struct dp_endpoint *ep)
{
	return ep == w.plug_ep ? &w_plug : NULL;
}

void dp_tx_plug_flush(struct dp_tx_plug *plug)
{
	unsigned int i;

	if (!plug)
		return;
	for (i = 0; i < w.n_frames; i++)
		w.frames[i].held = false;
	w.plug_flushes++;
}

int dp_tx_frame_tmpl(struct dp_node *node, struct dp_tx_plug *plug,
		     struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		     const void *msg, u32 msg_crc, struct dp_txref *keep)
{
	struct dp_wire_hdr wh, ref;
	int err;

	/* what the wire would carry: the template's, and the header's own */
	dp_wire_encode_from(&wh, &t->w, h);
	dp_wire_encode(&ref, h);
	if (memcmp(&wh, &ref, sizeof(wh))) {
		unit_failed++;
		printf("#   world: a frame's header differs from its template's\n");
	}
	/* the CRC run at the copy is the message's as it leaves, each time */
	if (h->dst_nid != h->src_nid && msg_crc != dp_wire_msg_crc(msg, h->len)) {
		unit_failed++;
		printf("#   world: seq %u leaves with a CRC state not its message's\n",
		       h->seq);
	}
	w.crc_checked++;
	err = dp_tx_frame(node, h, msg);
	if (!err && plug && h->type == DP_WT_DATA)
		w.frames[w.n_frames - 1].held = true;
	if (!err && keep && h->dst_nid != h->src_nid)
		w_nic_hold(keep, msg, h->len);
	return err;
}

int dp_tx_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		const void *msg)
{
	struct w_frame *f;

	(void)node;
	might_sleep();
	if (w.tx_err)
		return w.tx_err;
	if (w.n_frames == W_FRAMES || h->len > W_MSG_MAX) {
		unit_failed++;
		printf("#   world: frame log full or frame too long\n");
		return -ENOBUFS;
	}
	f = &w.frames[w.n_frames++];
	f->h = *h;
	if (h->len)
		memcpy(f->data, msg, h->len);
	f->done = false;
	f->held = false;
	return 0;
}

void dp_count(struct dp_node *node, enum dp_counter c)
{
	node->ctr[c]++;
}

void dp_count_add(struct dp_node *node, enum dp_counter c, u64 v)
{
	node->ctr[c] += v;
}

int dp_pool_deliver(struct dp_pool *pool, const struct dp_msg_hdr *h,
		    u32 src_uid, u32 tok_seq, const struct dp_payload *payload)
{
	struct dp_token *t;
	int err = 0;

	t = dp_ring_reserve(&pool->ring, h->len, &err);
	if (!t)
		return err;
	dp_payload_copy(payload, 0, t + 1, h->len);
	t->src_nid = h->src_nid;
	t->src_dpid = h->src_dpid;
	t->src_uid = src_uid;
	t->seq = tok_seq;
	dp_ring_commit(&pool->ring, t, h->len);
	return 0;
}

/* As dp_pool.c does it, without the lock, the wake-up and the counters. */
int dp_pool_frag(struct dp_pool *pool, struct dp_frag_rx *st,
		 const struct dp_msg_hdr *h, const struct dp_frag_in *in,
		 u32 src_uid, u32 tok_seq)
{
	bool done;
	int err;

	if (in->kind == DP_FRAG_FIRST && !pool->ring.fill) {
		struct dp_ring_slot *slots = kzalloc(DP_MAX_RX_PEERS * sizeof(*slots),
						     GFP_ATOMIC);

		if (!slots)
			return DP_CTR_RX_DROP_NOMEM;
		dp_ring_init_fill(&pool->ring, slots, DP_MAX_RX_PEERS);
	}
	err = dp_frag_rx_put(st, &pool->ring, in, &done);
	if (err < 0)
		return DP_CTR_RX_DROP_LEN;
	if (err)
		return err;
	if (in->kind == DP_FRAG_FIRST) {
		st->fill.tok->src_nid = h->src_nid;
		st->fill.tok->src_dpid = h->src_dpid;
		st->fill.tok->src_uid = src_uid;
		st->fill.tok->seq = tok_seq;
	}
	return 0;
}

bool dp_pool_frag_abort(struct dp_pool *pool, struct dp_frag_rx *st)
{
	return dp_frag_rx_abort(st, &pool->ring);
}

int dp_pool_refuse(struct dp_pool *pool)
{
	pool->refused++;
	return DP_CTR_RX_DROP_FULL;
}

u32 dp_ep_token_uid(struct dp_endpoint *ep, u32 wire_uid)
{
	(void)ep;
	return wire_uid;
}

/* ---- the world ---- */

void w_setup(void)
{
	struct w_frame *frames = w.frames;

	kmock_reset();
	memset(&w, 0, sizeof(w));
	w.frames = frames ? frames : calloc(W_FRAMES, sizeof(*frames));
	w.nodes[0].nid = 1;
	w.nodes[1].nid = 2;
	w.nodes[0].max_msg = 1400;
	w.nodes[1].max_msg = 1400;
}

struct dp_endpoint *w_ep(unsigned int i, struct dp_node *node, u32 dpid,
			 u32 pool_size, u32 inc)
{
	struct dp_endpoint *ep = &w.eps[i];

	ep->node = node;
	ep->dpid = dpid;
	ep->uid = 1000 + dpid;
	ep->inc = inc;
	ep->open = true;
	mutex_init(&ep->lock);
	dp_rcv_init(&ep->rcv, ep, node);
	dp_snd_ep_init(&ep->snd, ep, node, &ep->rcv, &ep->lock);
	ep->pool.data = calloc(1, pool_size);
	dp_ring_init(&ep->pool.ring, ep->pool.data, pool_size);
	dp_rcv_bind(&ep->rcv, &ep->pool, &ep->pool.ring, inc, ep->uid);
	return ep;
}

struct dp_snd *w_connect(struct dp_endpoint *ep, u32 nid, u32 dpid)
{
	const struct dp_addr to = { .nid = nid, .dpid = dpid };
	struct w_edge *e;

	for (e = ep->edges; e < ep->edges + W_EDGES; e++) {
		if (!e->used) {
			e->used = true;
			dp_snd_init(&e->s, &ep->snd, &to);
			return &e->s;
		}
	}
	return NULL;
}

struct dp_snd *w_pair(u32 bpool, struct dp_endpoint **a, struct dp_endpoint **b)
{
	w_setup();
	*a = w_ep(0, &w.nodes[0], 10, 65536, W_A_INC);
	*b = w_ep(1, &w.nodes[1], 20, bpool, W_B_INC);
	return w_connect(*a, 2, 20);
}

void w_close(struct dp_endpoint *ep)
{
	struct w_edge *e;

	if (!ep->open)
		return;
	for (e = ep->edges; e < ep->edges + W_EDGES; e++) {
		if (!e->used)
			continue;
		mutex_lock(&ep->lock);
		dp_snd_stop(&e->s);
		mutex_unlock(&ep->lock);
		dp_snd_release(&e->s);
		e->used = false;
	}
	dp_rcv_stop(&ep->rcv);
	kfree(ep->pool.ring.fill);
	free(ep->pool.data);
	ep->open = false;
}

void w_teardown(void)
{
	unsigned int i;

	for (i = 0; i < W_EPS; i++)
		w_close(&w.eps[i]);
	w_nic_release();	/* the NIC detaches last */
	CHECK(kmock_lockdep_errors == 0, "%d lock rules broken", kmock_lockdep_errors);
	CHECK(kmock_refcount_errors == 0, "%d refcount misuses", kmock_refcount_errors);
	CHECK(kmock_kmalloc_live == 0, "%ld allocations leaked", kmock_kmalloc_live);
	CHECK(kmock_pending() == 0, "%d timers or works left", kmock_pending());
}

u8 w_payload[W_PAYLOAD];

int w_send(struct dp_snd *s, u32 len)
{
	return dp_snd_send(s, w_payload, len, true);
}

static void w_wait_hook(void)
{
	w_run(1);
}

int w_send_wait(struct dp_snd *s, u32 len)
{
	int err;

	kmock_wait_hook = w_wait_hook;
	kmock_wait_rounds = 100000;	/* ms of world time */
	err = dp_snd_send(s, w_payload, len, false);
	kmock_wait_hook = NULL;
	return err;
}

unsigned int w_read(struct dp_endpoint *ep, unsigned int n, u32 *seq)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct dp_token *t = dp_ring_head(&ep->pool.ring);

		if (!t)
			break;
		if (seq)
			seq[i] = t->seq;
		dp_ring_release(&ep->pool.ring, 1);
	}
	if (i)
		dp_rcv_released(&ep->rcv);
	return i;
}

unsigned int w_queued(struct dp_endpoint *ep)
{
	return ep->pool.ring.queued;
}

static struct dp_endpoint *w_find_ep(u32 nid, u32 dpid)
{
	unsigned int i;

	for (i = 0; i < W_EPS; i++) {
		struct dp_endpoint *ep = &w.eps[i];

		if (ep->open && ep->node->nid == nid && ep->dpid == dpid)
			return ep;
	}
	return NULL;
}

/* The sending session an ACK or RESET is for, as the MDR finds it. */
static struct dp_snd *w_snd_of(struct dp_endpoint *ep, const struct dp_msg_hdr *h)
{
	struct w_edge *e;

	if (h->dst_inc != ep->inc)
		return NULL;
	for (e = ep->edges; e < ep->edges + W_EDGES; e++)
		if (e->used && e->s.to.nid == h->src_nid && e->s.to.dpid == h->src_dpid)
			return &e->s;
	return NULL;
}

static void w_ack(struct dp_endpoint *ep, const struct dp_msg_hdr *h,
		  const void *sack)
{
	struct dp_snd *s = w_snd_of(ep, h);

	if (s)
		dp_snd_ack(s, h, sack);
}

/* An ACK, with its map of held messages if it carries one (as dp_mdr.c). */
static void w_sack(struct dp_endpoint *ep, const struct dp_msg_hdr *h,
		   const struct dp_payload *payload)
{
	u8 map[DP_SACK_LEN];

	if (h->len != DP_SACK_LEN) {
		w_ack(ep, h, NULL);
		return;
	}
	dp_payload_copy(payload, 0, map, sizeof(map));
	w_ack(ep, h, map);
}

static void w_dispatch_payload(const struct dp_msg_hdr *h,
			       const struct dp_payload *payload)
{
	struct dp_endpoint *ep = w_find_ep(h->dst_nid, h->dst_dpid);
	struct dp_snd *s;

	if (!ep) {
		w.no_ep++;
		return;
	}
	switch (h->type) {
	case DP_WT_DATA:
		if (h->flags & DP_WF_ACK)
			w_ack(ep, h, NULL);
		if (h->flags & DP_WF_RAW)
			dp_rcv_raw(&ep->rcv, h, payload);
		else
			dp_rcv_data(&ep->rcv, h, payload);
		break;
	case DP_WT_ACK:
		if (h->flags & DP_WF_RETURN)
			dp_rcv_return(&ep->rcv, h);
		else if (h->flags & DP_WF_PROBE)
			dp_rcv_probe(&ep->rcv, h);
		else
			w_sack(ep, h, payload);
		break;
	case DP_WT_HELLO:
		if (ep->refuse)
			dp_rcv_refuse(&ep->rcv, h);
		else
			dp_rcv_hello(&ep->rcv, h);
		break;
	case DP_WT_RESET:
		s = w_snd_of(ep, h);
		if (h->flags & DP_WF_FIN)
			dp_rcv_fin(&ep->rcv, h);
		else if (s)
			dp_snd_reset(s, h);
		break;
	}
}

void w_dispatch(const struct dp_msg_hdr *h, const void *msg)
{
	struct dp_payload payload = dp_payload_flat(msg);
	struct pieces pc;
	u32 n = w.dispatched++;

	if (!w.nic_late)
		w_nic_release();	/* it sent all before this came */
	if (!(n & 1)) {
		w_dispatch_payload(h, &payload);
		return;
	}
	/* 2 to 4 pieces, the header's 52 bytes before the message */
	pieces_make(&pc, NULL, DP_WIRE_HDR_LEN, msg, h->len, 2 + n % 3, n);
	payload = pieces_payload(&pc);
	w_dispatch_payload(h, &payload);
	pieces_free(&pc);
}

unsigned int w_pump(void)
{
	unsigned int i, n = 0;

	do {
		for (i = 0; i < w.n_frames; i++) {
			struct w_frame *f = &w.frames[i];

			if (f->done || f->held)
				continue;
			f->done = true;
			if (w.drop && w.drop(f))
				continue;
			w_dispatch(&f->h, f->data);
			n++;
		}
	} while (kmock_run() || w_in_flight());
	return n;
}

void w_run(unsigned long ms)
{
	w_pump();
	while (ms--) {
		kmock_advance(1);
		w_pump();
	}
}

unsigned int w_count(u8 type, u16 flags)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += w.frames[i].h.type == type &&
		     (w.frames[i].h.flags & flags) == flags;
	return n;
}

const struct w_frame *w_last(u8 type, u16 flags)
{
	unsigned int i;

	for (i = w.n_frames; i--; )
		if (w.frames[i].h.type == type &&
		    (w.frames[i].h.flags & flags) == flags)
			return &w.frames[i];
	return NULL;
}

unsigned int w_in_flight(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < w.n_frames; i++)
		n += !w.frames[i].done && !w.frames[i].held;
	return n;
}

void w_drop_all(void)
{
	unsigned int i;

	for (i = 0; i < w.n_frames; i++)
		w.frames[i].done = true;
}

struct dp_snd_info w_info(struct dp_snd *s)
{
	struct dp_snd_info si;

	dp_snd_info(s, &si);
	return si;
}

struct w_find {
	u32 nid, dpid;
	struct dp_rcv_info *ri;
	unsigned int n;
};

static int w_find_peer(const struct dp_rcv_info *ri, void *arg)
{
	struct w_find *f = arg;

	f->n++;
	if (ri->from.nid != f->nid || ri->from.dpid != f->dpid)
		return 0;
	if (f->ri)
		*f->ri = *ri;
	return 1;
}

bool w_rinfo(struct dp_endpoint *ep, u32 nid, u32 dpid, struct dp_rcv_info *ri)
{
	struct w_find f = { .nid = nid, .dpid = dpid, .ri = ri };

	return dp_rcv_walk(&ep->rcv, w_find_peer, &f) == 1;
}

unsigned int w_rx_peers(struct dp_endpoint *ep)
{
	struct w_find f = { 0 };

	dp_rcv_walk(&ep->rcv, w_find_peer, &f);
	return f.n;
}

struct dp_ep_stats w_stats(struct dp_endpoint *ep)
{
	struct dp_ep_stats st;

	memset(&st, 0, sizeof(st));
	dp_snd_ep_stats(&ep->snd, &st);
	dp_rcv_stats(&ep->rcv, &st);
	return st;
}

/* Events (dp_genl.c in the kernel): the last one, for the tests to check. */
void dp_event_session(struct dp_endpoint *ep, const struct dp_addr *peer,
		      u8 state, int err)
{
	(void)ep;
	(void)peer;
	w.ev_state = state;
	w.ev_err = err;
}

void dp_event_peer(struct dp_endpoint *ep, const struct dp_addr *peer)
{
	(void)ep;
	(void)peer;
	w.ev_peer++;
}
