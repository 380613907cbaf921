// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the MDR (dp_mdr.c), the receive path's dispatch, built
 * against the real dp.h over the mock kernel (mock/kmock.h), with the
 * real wire decoder and NART beneath it.  Above it are the test's models
 * of what it dispatches to (the endpoint's receiving side, an edge's
 * sending session, discovery), each recording the call.  The MDR's
 * promise (docs/security.md, docs/wire.md): every frame is untrusted, and
 * every frame that is not delivered is charged to exactly one drop
 * counter; a bundle's frames are each taken as if they had come alone,
 * until one fails its checks.
 *
 * A world of its own (Makefile, WORLDS): what it defines here is seen by
 * dp_mdr.c alone.
 */
#include "dp.h"
#include "unit.h"

#define M_NID		1	/* ours */
#define M_INC		9	/* the endpoints' incarnation */
#define M_UID		1000	/* endpoint 201's owner */
#define M_CALLS		64

enum m_call { M_DATA, M_RAW, M_RETURN, M_PROBE, M_ACK, M_SACK, M_HELLO,
	      M_REFUSE, M_FIN, M_RESET, M_DISC };

static struct {
	struct dp_node node;
	struct dp_endpoint ep[4];	/* DPIDs 200..203 */
	struct dp_edge edge;		/* endpoints 200's and 202's to (2, 100) */
	struct dp_nart_tbl *nart;
	u64 ctr[DP_CTR_COUNT];
	enum m_call call[M_CALLS];
	u32 seq[M_CALLS];
	u32 dpid[M_CALLS];
	unsigned int n;
} m;

static const u8 mac2[6] = { 2, 0, 0, 0, 0, 2 };
static const u8 mac3[6] = { 2, 0, 0, 0, 0, 3 };

/* ---- what dp_mdr.c asks of the rest of dp.ko ---- */

void dp_count(struct dp_node *node, enum dp_counter c)
{
	CHECK(node == &m.node, "another node's counter");
	m.ctr[c]++;
}

struct dp_endpoint *dp_cat_lookup(struct dp_node *node, u32 dpid)
{
	return dpid >= 200 && dpid < 204 ? &m.ep[dpid - 200] : NULL;
}

bool dp_ep_bound(const struct dp_endpoint *ep)
{
	return ep != &m.ep[3];		/* 203: claimed, bind not done */
}

struct dp_edge *dp_edge_find(struct dp_endpoint *ep, const struct dp_addr *to)
{
	if ((ep == &m.ep[0] || ep == &m.ep[2]) && to->nid == 2 && to->dpid == 100)
		return &m.edge;
	return NULL;
}

static void m_rec(enum m_call c, const struct dp_msg_hdr *h)
{
	if (m.n < M_CALLS) {
		m.call[m.n] = c;
		m.seq[m.n] = h->seq;
		m.dpid[m.n] = h->dst_dpid;
	}
	m.n++;
}

static struct dp_endpoint *m_ep_of(const struct dp_rcv *r)
{
	return container_of(r, struct dp_endpoint, rcv);
}

static void m_rcv(enum m_call c, struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	CHECK(m_ep_of(r)->dpid == h->dst_dpid, "to its endpoint's receiving side");
	m_rec(c, h);
}

void dp_rcv_data(struct dp_rcv *r, const struct dp_msg_hdr *h,
		 const struct dp_payload *p)
{
	u8 b[8] = { 0 };

	dp_payload_copy(p, 0, b, min_t(u32, h->len, sizeof(b)));
	CHECK(h->len < 1 || b[0] == (u8)h->seq, "its own message bytes");
	m_rcv(M_DATA, r, h);
}

void dp_rcv_raw(struct dp_rcv *r, const struct dp_msg_hdr *h,
		const struct dp_payload *p)
{
	m_rcv(M_RAW, r, h);
}

void dp_rcv_return(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	m_rcv(M_RETURN, r, h);
}

void dp_rcv_probe(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	m_rcv(M_PROBE, r, h);
}

void dp_rcv_hello(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	m_rcv(M_HELLO, r, h);
}

void dp_rcv_refuse(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	m_rcv(M_REFUSE, r, h);
}

void dp_rcv_fin(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	m_rcv(M_FIN, r, h);
}

void dp_snd_ack(struct dp_snd *s, const struct dp_msg_hdr *h, const void *sack)
{
	static const u8 want[DP_SACK_LEN] = { 0xa5, 1, 2, 3 };

	CHECK(s == &m.edge.snd, "the edge's session");
	CHECK(!sack || !memcmp(sack, want, DP_SACK_LEN), "the map as sent");
	m_rec(sack ? M_SACK : M_ACK, h);
}

void dp_snd_reset(struct dp_snd *s, const struct dp_msg_hdr *h)
{
	CHECK(s == &m.edge.snd, "the edge's session");
	m_rec(M_RESET, h);
}

void dp_disc_rx(struct dp_disc *d, const u8 *src, u8 src_len,
		const struct dp_msg_hdr *h, const void *msg)
{
	CHECK(d == &m.node.disc, "the node's discovery");
	CHECK(src_len == 6 && !memcmp(src, mac3, 6), "from its link address");
	m_rec(M_DISC, h);
}

/* ---- the world ---- */

static void m_setup(void)
{
	struct dp_nart_entry e = { .alen = 6 };
	unsigned int k;

	kfree(m.nart);
	kmock_reset();
	memset(&m, 0, sizeof(m));
	m.node.nid = M_NID;
	m.nart = kmalloc(dp_nart_tbl_bytes(4), GFP_KERNEL);
	memset(m.nart, 0, dp_nart_tbl_bytes(4));
	m.nart->cap = 4;
	e.nid = 2;
	memcpy(e.addr, mac2, 6);
	CHECK_EQ(dp_nart_set(m.nart, &e), 0);
	e.nid = 3;
	memcpy(e.addr, mac3, 6);
	CHECK_EQ(dp_nart_set(m.nart, &e), 0);
	m.node.nart = m.nart;
	for (k = 0; k < 4; k++) {
		m.ep[k].node = &m.node;
		m.ep[k].dpid = 200 + k;
		m.ep[k].inc = M_INC;
		m.ep[k].uid.val = M_UID;
	}
	m.ep[1].admit = DP_ADMIT_UID;
	m.ep[2].admit = DP_ADMIT_PEERS;
}

/* Let go of the world's NART: nothing left allocated, no rule broken. */
static void m_done(void)
{
	kfree(m.nart);
	m.nart = NULL;
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/* The drops counted, all kinds together (each frame lands in one). */
static u64 m_drops(void)
{
	static const enum dp_counter drop[] = {
		DP_CTR_RX_DROP_SHORT, DP_CTR_RX_DROP_VERSION, DP_CTR_RX_DROP_TYPE,
		DP_CTR_RX_DROP_LEN, DP_CTR_RX_DROP_NOT_NODE,
		DP_CTR_RX_DROP_UNKNOWN_SRC, DP_CTR_RX_DROP_SPOOFED,
		DP_CTR_RX_DROP_NO_EP, DP_CTR_RX_DROP_FULL, DP_CTR_RX_DROP_TOO_BIG,
		DP_CTR_RX_DROP_NOMEM, DP_CTR_RX_DROP_BAD_ADDR, DP_CTR_RX_DROP_RING,
		DP_CTR_RX_DROP_ADMIT, DP_CTR_RX_DROP_SEQ, DP_CTR_RX_DROP_CSUM,
		DP_CTR_RX_DROP_STALE, DP_CTR_RX_DROP_DUP,
	};
	unsigned int i;
	u64 n = 0;

	for (i = 0; i < ARRAY_SIZE(drop); i++)
		n += m.ctr[drop[i]];
	return n;
}

/* A frame's header fields: from (@src_nid, 100) to (M_NID, @dpid). */
static struct dp_msg_hdr m_hdr(u8 type, u16 flags, u32 src_nid, u32 dpid,
			       u32 seq, u16 len)
{
	return (struct dp_msg_hdr){
		.type = type, .flags = flags, .len = len, .seq = seq,
		.src_nid = src_nid, .src_dpid = 100, .src_uid = M_UID,
		.src_inc = 4, .dst_nid = M_NID, .dst_dpid = dpid,
		.dst_inc = M_INC,
	};
}

/* Append frame @h to @buf at @at, its message bytes (u8)seq each. */
static u32 m_put(u8 *buf, u32 at, const struct dp_msg_hdr *h)
{
	struct dp_wire_hdr *w = (struct dp_wire_hdr *)(buf + at);

	memset(buf + at + DP_WIRE_HDR_LEN, (u8)h->seq, h->len);
	dp_wire_encode(w, h);
	dp_wire_seal(w, buf + at + DP_WIRE_HDR_LEN, h->len);
	return at + DP_WIRE_HDR_LEN + h->len;
}

static void m_rx(const void *frame, u32 len, const u8 *src)
{
	dp_mdr_rx(&m.node, src, 6, frame, len);
}

/* One frame @h from NID 2's address. */
static void m_rx_one(const struct dp_msg_hdr *h)
{
	u8 buf[DP_WIRE_HDR_LEN + 256];

	m_rx(buf, m_put(buf, 0, h), mac2);
}

/* ---- tests ---- */

/* DATA to each kind of endpoint that admits it; raw; a piggy-backed ack. */
static void test_mdr_data(void)
{
	struct dp_msg_hdr h;

	m_setup();
	h = m_hdr(DP_WT_DATA, 0, 2, 200, 1, 64);
	m_rx_one(&h);
	h = m_hdr(DP_WT_DATA, 0, 2, 201, 2, 64);	/* the owner's uid */
	m_rx_one(&h);
	h = m_hdr(DP_WT_DATA, 0, 2, 202, 3, 64);	/* a connected peer */
	m_rx_one(&h);
	h = m_hdr(DP_WT_DATA, DP_WF_RAW, 2, 200, 4, 64);
	m_rx_one(&h);
	h = m_hdr(DP_WT_DATA, DP_WF_ACK, 2, 200, 5, 64);
	m_rx_one(&h);
	CHECK_EQ(m.n, 6);
	CHECK(m.call[0] == M_DATA && m.dpid[0] == 200, "to 200");
	CHECK(m.call[1] == M_DATA && m.dpid[1] == 201, "to 201");
	CHECK(m.call[2] == M_DATA && m.dpid[2] == 202, "to 202");
	CHECK_EQ(m.call[3], M_RAW);
	CHECK(m.call[4] == M_ACK && m.call[5] == M_DATA, "the ack, then the data");
	CHECK_EQ(m_drops(), 0);
	CHECK_EQ(m.ctr[DP_CTR_RX_CTRL], 0);
	m_done();
}

/*
 * Each frame that is not delivered: no call, and exactly one drop
 * counter, the one its reason names.
 */
static void test_mdr_drops(void)
{
	static const struct {
		u32 src_nid, dpid, uid;
		const u8 *mac;
		u16 flags;
		int corrupt;		/* byte of the frame to flip, or -1 */
		u32 cut;		/* bytes to cut off the end */
		enum dp_counter ctr;
	} c[] = {
		{ 2, 200, M_UID, mac3, 0, -1, 0, DP_CTR_RX_DROP_SPOOFED },
		{ 5, 200, M_UID, mac2, 0, -1, 0, DP_CTR_RX_DROP_UNKNOWN_SRC },
		{ 2, 209, M_UID, mac2, 0, -1, 0, DP_CTR_RX_DROP_NO_EP },
		{ 2, 203, M_UID, mac2, 0, -1, 0, DP_CTR_RX_DROP_NO_EP },
		{ 2, 201, 7, mac2, 0, -1, 0, DP_CTR_RX_DROP_ADMIT },
		{ 3, 202, M_UID, mac3, 0, -1, 0, DP_CTR_RX_DROP_ADMIT },
		{ 2, 200, M_UID, mac2, 0, DP_WIRE_HDR_LEN + 5, 0, DP_CTR_RX_DROP_CSUM },
		{ 2, 200, M_UID, mac2, 0, 29, 0, DP_CTR_RX_DROP_CSUM },	/* seq */
		{ 2, 200, M_UID, mac2, 0, -1, 70, DP_CTR_RX_DROP_SHORT },
		{ 2, 200, M_UID, mac2, 0, -1, 8, DP_CTR_RX_DROP_LEN },
	};
	u8 buf[DP_WIRE_HDR_LEN + 64];
	struct dp_msg_hdr h;
	unsigned int i;
	u32 len;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		m_setup();
		h = m_hdr(DP_WT_DATA, c[i].flags, c[i].src_nid, c[i].dpid, 1, 64);
		h.src_uid = c[i].uid;
		len = m_put(buf, 0, &h) - c[i].cut;
		if (c[i].corrupt >= 0)
			buf[c[i].corrupt] ^= 0x10;
		m_rx(buf, len, c[i].mac);
		CHECK(m.n == 0, "case %u: nothing delivered", i);
		CHECK(m_drops() == 1 && m.ctr[c[i].ctr] == 1,
		      "case %u: counted once, as %d (%llu drops)", i, c[i].ctr,
		      (unsigned long long)m_drops());
		if (c[i].ctr == DP_CTR_RX_DROP_ADMIT)
			CHECK(m.ep[c[i].dpid - 200].rx_drop_admit.counter == 1,
			      "case %u: the endpoint's own count", i);
	}
	/* for another node */
	m_setup();
	h = m_hdr(DP_WT_DATA, 0, 2, 200, 1, 64);
	h.dst_nid = 4;
	m_rx_one(&h);
	CHECK(m.n == 0 && m_drops() == 1 && m.ctr[DP_CTR_RX_DROP_NOT_NODE] == 1,
	      "not this node's");
	m_done();
}

/* Control frames, by type and flags; each counted once as accepted. */
static void test_mdr_ctrl(void)
{
	static const struct {
		u8 type;
		u16 flags;
		u32 dpid, inc;
		u16 len;
		int call;		/* enum m_call, or -1: none */
	} c[] = {
		{ DP_WT_ACK, DP_WF_RETURN, 200, M_INC, 0, M_RETURN },
		{ DP_WT_ACK, DP_WF_PROBE, 200, M_INC, 0, M_PROBE },
		{ DP_WT_ACK, DP_WF_ACK, 200, M_INC, 0, M_ACK },
		{ DP_WT_ACK, DP_WF_ACK | DP_WF_SACK, 200, M_INC, DP_SACK_LEN, M_SACK },
		{ DP_WT_ACK, DP_WF_ACK, 200, M_INC + 1, 0, -1 },	/* stale */
		{ DP_WT_ACK, DP_WF_ACK, 201, M_INC, 0, -1 },	/* no edge */
		{ DP_WT_HELLO, 0, 200, 0, 0, M_HELLO },
		{ DP_WT_HELLO, 0, 201, 0, 0, M_HELLO },
		{ DP_WT_RESET, DP_WF_FIN, 200, M_INC, 0, M_FIN },
		{ DP_WT_RESET, 0, 200, M_INC, 0, M_RESET },
		{ DP_WT_RESET, 0, 200, M_INC + 1, 0, -1 },
	};
	u8 buf[DP_WIRE_HDR_LEN + DP_SACK_LEN];
	static const u8 map[DP_SACK_LEN] = { 0xa5, 1, 2, 3 };
	struct dp_msg_hdr h;
	unsigned int i;
	u32 len;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		m_setup();
		h = m_hdr(c[i].type, c[i].flags, 2, c[i].dpid, 1, c[i].len);
		h.dst_inc = c[i].inc;
		len = m_put(buf, 0, &h);
		if (c[i].len) {
			memcpy(buf + DP_WIRE_HDR_LEN, map, sizeof(map));
			dp_wire_seal((struct dp_wire_hdr *)buf,
				     buf + DP_WIRE_HDR_LEN, sizeof(map));
		}
		m_rx(buf, len, mac2);
		CHECK(c[i].call < 0 ? m.n == 0 : m.n == 1 && (int)m.call[0] == c[i].call,
		      "case %u: %u calls, the first %d", i, m.n, m.n ? (int)m.call[0] : -1);
		CHECK(m.ctr[DP_CTR_RX_CTRL] == 1 && m_drops() == 0, "case %u: accepted once", i);
	}
	/* a HELLO the admission rule refuses: refused, and counted as that */
	m_setup();
	h = m_hdr(DP_WT_HELLO, 0, 2, 201, 1, 0);
	h.src_uid = 7;
	m_rx_one(&h);
	CHECK(m.n == 1 && m.call[0] == M_REFUSE, "refused");
	CHECK_EQ(m.ctr[DP_CTR_RX_DROP_ADMIT], 1);
	m_done();
}

/* An ANNOUNCE goes to discovery, from any address, to no node. */
static void test_mdr_announce(void)
{
	struct dp_msg_hdr h = { .type = DP_WT_ANNOUNCE, .src_nid = 7,
				.len = DP_WIRE_ANNOUNCE_LEN };
	u8 buf[DP_WIRE_HDR_LEN + DP_WIRE_ANNOUNCE_LEN];

	m_setup();
	m_rx(buf, m_put(buf, 0, &h), mac3);
	CHECK(m.n == 1 && m.call[0] == M_DISC, "to discovery");
	CHECK_EQ(m_drops(), 0);
	m_done();
}

/*
 * A bundle: each frame taken as if alone, in order; after one that
 * fails its check, nothing more (its length cannot be trusted), counted
 * once; link padding after the last is no frame.
 */
static void test_mdr_bundle(void)
{
	u8 buf[4 * (DP_WIRE_HDR_LEN + 64) + 40];
	struct dp_msg_hdr h[4];
	u32 at = 0, mid = 0, k;

	for (k = 0; k < 4; k++)
		h[k] = m_hdr(DP_WT_DATA, k ? 0 : DP_WF_BUNDLE, 2, k == 2 ? 209 : 200,
			     k + 1, 64);
	m_setup();
	for (k = 0; k < 4; k++) {
		if (k == 2)
			mid = at;
		at = m_put(buf, at, &h[k]);
	}
	memset(buf + at, 0, 40);		/* padding */
	m_rx(buf, at + 40, mac2);
	CHECK_EQ(m.n, 3);
	CHECK(m.seq[0] == 1 && m.seq[1] == 2 && m.seq[2] == 4, "in order");
	CHECK_EQ(m.ctr[DP_CTR_RX_DROP_NO_EP], 1);	/* the third's */
	CHECK_EQ(m_drops(), 1);

	m_setup();
	buf[mid + 29] ^= 0x01;			/* the third's seq corrupted */
	m_rx(buf, at, mac2);
	CHECK_EQ(m.n, 2);
	CHECK_EQ(m.ctr[DP_CTR_RX_DROP_CSUM], 1);
	CHECK_EQ(m_drops(), 1);
	m_done();
}

/*
 * Random damage to valid frames of every type: each link frame of one dp
 * frame ends either delivered (one call) or in exactly one drop counter;
 * never both, never neither (for a control frame, its acceptance counts
 * as delivery).
 */
static void test_mdr_fuzz_one_outcome(void)
{
	static const u8 types[] = { DP_WT_DATA, DP_WT_ACK, DP_WT_HELLO,
				    DP_WT_RESET, DP_WT_DATA };
	u8 buf[DP_WIRE_HDR_LEN + 64];
	u64 s = 0x9e3779b97f4a7c15ull;
	unsigned int i, bad = 0;

	for (i = 0; i < 20000; i++) {
		u64 r = unit_rand(&s);
		struct dp_msg_hdr h = m_hdr(types[r % 5], (r >> 8) & DP_WF_ACK,
					    2 + ((r >> 12) & 1), 200 + ((r >> 16) % 5),
					    1 + (u32)(r >> 20) % 1000, (r >> 32) % 65);
		u32 len, flips = (r >> 40) % 3, f;
		u64 drops, ctrl;
		bool ok;

		m_setup();
		h.src_uid = (r >> 44) & 1 ? M_UID : 5;
		len = m_put(buf, 0, &h);
		for (f = 0; f < flips; f++) {
			u64 q = unit_rand(&s);

			buf[q % len] ^= (u8)(1u << ((q >> 16) % 8));
		}
		if ((r >> 48) % 8 == 0)
			len = (u32)((r >> 52) % (len + 1));
		m_rx(buf, len, (r >> 60) & 1 ? mac2 : mac3);
		drops = m_drops();
		ctrl = m.ctr[DP_CTR_RX_CTRL];
		if (drops)	/* dropped once; a refused HELLO is also refused */
			ok = drops == 1 && (m.n == 0 ? !ctrl :
					    m.n == 1 && m.call[0] == M_REFUSE && ctrl == 1);
		else		/* delivered: DATA (maybe with its ack) or control */
			ok = ctrl <= 1 && m.n <= 2 && (m.n || ctrl);
		bad += !ok;
	}
	CHECK_EQ(bad, 0);
	m_done();
}

const struct unit_test mdr_tests[] = {
	{ "mdr_data", test_mdr_data },
	{ "mdr_drops", test_mdr_drops },
	{ "mdr_ctrl", test_mdr_ctrl },
	{ "mdr_announce", test_mdr_announce },
	{ "mdr_bundle", test_mdr_bundle },
	{ "mdr_fuzz_one_outcome", test_mdr_fuzz_one_outcome },
	{ NULL, NULL },
};
