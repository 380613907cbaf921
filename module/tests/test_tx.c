// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the frame layer's send side (dp_tx.c): headers, routes
 * and bundles, built against the real dp.h over the mock kernel
 * (mock/kmock.h).  Beneath it is a NIC backend of the test's that keeps
 * every link frame it is given, from its own buffers (@frame_get, as the
 * netdev backend's) or copied (@xmit alone, as the tulip's); above it,
 * frames are what the session layer hands it.  Every link frame is read
 * back with the receiver's own decoder (dp_wire_decode_parts() and
 * dp_wire_decode_next(), as the MDR reads a bundle), so a test checks
 * what a peer would get: which frames, intact, in which order, to which
 * link address.
 *
 * A world of its own (Makefile, WORLDS): what it defines here is seen by
 * dp_tx.c alone.
 */
#include "dp.h"
#include "unit.h"

#define T_FRAMES	64
#define T_MTU		9000
#define T_NID		1	/* ours */

struct t_frame {
	u64 nic;		/* the NIC's id */
	u8 dst[DP_DST_MAX];
	u32 len;
	bool own;		/* from a buffer of the NIC's own */
	struct dp_txc *done;
	u8 data[T_MTU];
};

struct t_buf {			/* a buffer @frame_get gave */
	struct dp_nic *nic;
	u8 data[];
};

static struct {
	struct dp_node node;
	struct dp_endpoint ep;
	struct dp_txc txc;
	struct dp_nic nics[2];
	bool own[2];		/* has @frame_get */
	unsigned int mtu[2];
	u64 ctr[DP_CTR_COUNT];
	struct t_frame f[T_FRAMES];
	unsigned int n;		/* link frames sent */
	unsigned int local;	/* frames to our own MDR */
	unsigned int gets, frees;	/* NIC buffers given, let go of unsent */
	int refs;		/* NIC references taken and not put */
	int xmit_err;		/* what the next send returns */
	struct dp_nart_tbl *nart;
} t;

/* ---- what dp_tx.c asks of the rest of dp.ko ---- */

struct dp_nic *dp_nic_get(struct dp_node *node)
{
	struct dp_nic *nic = node->nic;

	t.refs += !!nic;
	return nic;
}

void dp_nic_put(struct dp_nic *nic)
{
	CHECK(nic != NULL, "put of no NIC");
	t.refs--;
}

unsigned int dp_nic_max_msg(const struct dp_nic *nic)
{
	return nic->ops->mtu(nic) - DP_WIRE_HDR_LEN;
}

void dp_count(struct dp_node *node, enum dp_counter c)
{
	dp_count_add(node, c, 1);
}

void dp_count_add(struct dp_node *node, enum dp_counter c, u64 v)
{
	CHECK(node == &t.node, "another node's counter");
	t.ctr[c] += v;
}

void dp_mdr_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		  const struct dp_payload *payload)
{
	t.local++;
}

/* ---- the NIC backend ---- */

static int t_idx(const struct dp_nic *nic)
{
	return nic == &t.nics[1];
}

static struct t_frame *t_take(const struct dp_nic *nic, const u8 *dst,
			      u32 len, struct dp_txc *done)
{
	struct t_frame *f;

	CHECK(t.n < T_FRAMES, "too many frames");
	if (t.n == T_FRAMES)
		return NULL;
	f = &t.f[t.n++];
	f->nic = nic->id;
	memcpy(f->dst, dst, DP_DST_MAX);
	f->len = len;
	f->done = done;
	if (done)
		dp_txc_hold(done);
	return f;
}

static int t_xmit(struct dp_nic *nic, const u8 *dst,
		  const struct dp_wire_hdr *hdr, const void *msg, size_t len,
		  struct dp_txref *keep, struct dp_txc *done)
{
	struct t_frame *f;

	CHECK(DP_WIRE_HDR_LEN + len <= t.mtu[t_idx(nic)], "over the MTU");
	if (t.xmit_err)
		return t.xmit_err;
	f = t_take(nic, dst, DP_WIRE_HDR_LEN + len, done);
	if (f) {
		memcpy(f->data, hdr, DP_WIRE_HDR_LEN);
		memcpy(f->data + DP_WIRE_HDR_LEN, msg, len);
	}
	return 0;
}

static unsigned int t_mtu(const struct dp_nic *nic)
{
	return t.mtu[t_idx(nic)];
}

static unsigned int t_lladdr(const struct dp_nic *nic, u8 *addr)
{
	static const u8 mac[2][6] = { { 2, 0, 0, 0, 0, 0xa1 },
				      { 2, 0, 0, 0, 0, 0xb1 } };

	memcpy(addr, mac[t_idx(nic)], 6);
	return 6;
}

static void *t_frame_get(struct dp_nic *nic, unsigned int size, void **handle)
{
	struct t_buf *b;

	if (!t.own[t_idx(nic)])
		return NULL;
	b = kmalloc(sizeof(*b) + size, GFP_KERNEL);
	b->nic = nic;
	t.gets++;
	*handle = b;
	return b->data;
}

static void t_frame_free(void *handle)
{
	t.frees++;
	kfree(handle);
}

static int t_frame_send(struct dp_nic *nic, void *handle, const u8 *dst,
			unsigned int len, struct dp_txc *done)
{
	struct t_buf *b = handle;
	struct t_frame *f;
	int err = t.xmit_err;

	CHECK(b->nic->ops == nic->ops, "a buffer of another backend");
	if (!err) {
		f = t_take(nic, dst, len, done);
		if (f) {
			memcpy(f->data, b->data, len);
			f->own = true;
		}
	}
	kfree(b);			/* consumed, whatever we return */
	return err;
}

static const struct dp_backend t_ops = {
	.name = "test",
	.broadcast = true,
	.xmit = t_xmit,
	.mtu = t_mtu,
	.lladdr = t_lladdr,
	.frame_get = t_frame_get,
	.frame_send = t_frame_send,
	.frame_free = t_frame_free,
};

/* ---- the world ---- */

/* The NART: NID 2 and 3 on the link, at addresses ending 0x02, 0x03. */
static void t_nart(u64 gen, u8 last2)
{
	struct dp_nart_entry e = { .alen = 6, .addr = { 2, 0, 0, 0, 0 } };

	kfree(t.nart);
	t.nart = kmalloc(dp_nart_tbl_bytes(4), GFP_KERNEL);
	memset(t.nart, 0, dp_nart_tbl_bytes(4));
	t.nart->cap = 4;
	t.nart->gen = gen;
	e.nid = 2;
	e.addr[5] = last2;
	CHECK_EQ(dp_nart_set(t.nart, &e), 0);
	e.nid = 3;
	e.addr[5] = 3;
	CHECK_EQ(dp_nart_set(t.nart, &e), 0);
	t.node.nart = t.nart;
}

static void t_setup(bool own)
{
	int i;

	kmock_reset();
	memset(&t, 0, sizeof(t));
	t.node.nid = T_NID;
	for (i = 0; i < 2; i++) {
		t.nics[i].id = i + 1;
		t.nics[i].ops = &t_ops;
		t.nics[i].node = &t.node;
		t.own[i] = own;
		t.mtu[i] = T_MTU;
	}
	t.node.nic = &t.nics[0];
	t_nart(1, 2);
	t.ep.node = &t.node;
	t.ep.dpid = 100;
	t.ep.inc = 7;
	refcount_set(&t.txc.refs, 1);
	t.ep.plug.txc = &t.txc;
}

/* Nothing held, referenced or allocated is left; no rule broken. */
static void t_teardown(void)
{
	CHECK(t.ep.plug.owner == NULL, "the plug let go of");
	CHECK_EQ(t.ep.plug.n, 0);
	dp_tx_plug_free(&t.ep.plug);
	kfree(t.nart);
	CHECK_EQ(t.refs, 0);
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(kmock_refcount_errors, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/*
 * Take the endpoint's plug for @left messages (what a batch's bundle in a
 * NIC's buffer is sized for; a single write's plug says U32_MAX).
 */
static void t_start(u32 left)
{
	CHECK(dp_tx_plug_start(&t.ep), "the plug is free");
	t.ep.plug.left = left;
}

/* Message @i: @len bytes, each (i + k) & 0xff. */
static u8 t_msg[T_MTU];

static void t_fill(u32 i, u32 len)
{
	u32 k;

	for (k = 0; k < len; k++)
		t_msg[k] = (u8)(i + k);
}

/* DATA frame @i (seq i) of @len bytes to (@nid, 200) through @plug. */
static int t_send(struct dp_tx_plug *plug, u32 nid, u32 i, u32 len)
{
	const struct dp_addr to = { .nid = nid, .dpid = 200 };
	struct dp_msg_hdr h;

	dp_tx_hdr(&t.ep, &h, DP_WT_DATA, &to);
	h.len = len;
	h.seq = i;
	t_fill(i, len);
	return dp_tx_frame_plug(&t.node, plug, &h, t_msg,
				dp_wire_msg_crc(t_msg, len));
}

/* What a peer reads from one link frame. */
struct t_got {
	unsigned int n;		/* dp frames */
	u32 seq[256];
	u32 nid[256];
	bool bundle_first;	/* DP_WF_BUNDLE on the first */
	bool bundle_later;	/* on any other */
	bool ok;		/* all intact: checks and message bytes */
};

static bool t_msg_ok(const struct dp_msg_hdr *h, const struct dp_payload *p)
{
	u8 buf[T_MTU];
	u32 k;

	dp_payload_copy(p, 0, buf, h->len);
	for (k = 0; k < h->len; k++)
		if (buf[k] != (u8)(h->seq + k))
			return false;
	return h->src_nid == T_NID && h->src_dpid == 100 && h->src_inc == 7 &&
	       h->dst_dpid == 200 && h->type == DP_WT_DATA;
}

static void t_got_one(struct t_got *g, const struct dp_msg_hdr *h,
		      const struct dp_payload *p)
{
	if (g->n < 256) {
		g->seq[g->n] = h->seq;
		g->nid[g->n] = h->dst_nid;
	}
	if (g->n && (h->flags & DP_WF_BUNDLE))
		g->bundle_later = true;
	g->ok &= t_msg_ok(h, p);
	g->n++;
}

static struct t_got t_read(unsigned int k)
{
	const struct t_frame *f = &t.f[k];
	const struct dp_payload msg = dp_payload_flat(f->data + DP_WIRE_HDR_LEN);
	struct t_got g = { .ok = true };
	struct dp_payload inner;
	struct dp_msg_hdr h;
	u32 off;
	int drop;

	drop = dp_wire_decode_parts(f->data, f->len, &msg, &h);
	if (drop) {
		g.ok = false;
		return g;
	}
	g.bundle_first = h.flags & DP_WF_BUNDLE;
	t_got_one(&g, &h, &msg);
	if (!g.bundle_first)
		return g;
	off = h.len;
	while ((drop = dp_wire_decode_next(&msg, f->len, &off, &h, &inner)) == 0)
		t_got_one(&g, &h, &inner);
	g.ok &= drop < 0;		/* the link frame's end, not a drop */
	return g;
}

/* Link frame @k went to NID @nid's link address by NIC @nic (1 or 2). */
static bool t_to(unsigned int k, u32 nid, u64 nic)
{
	return t.f[k].nic == nic && t.f[k].dst[5] == nid &&
	       t.f[k].dst[6] == 0;	/* no route */
}

/* ---- tests ---- */

/* A batch's small frames to one peer: one link frame, read back whole. */
static void bundle_one(bool own)
{
	struct dp_tx_plug *plug = &t.ep.plug;
	struct t_got g;
	u32 i;

	t_setup(own);
	t_start(U32_MAX);
	for (i = 1; i <= 5; i++)
		CHECK_EQ(t_send(plug, 2, i, 64), 0);
	CHECK_EQ(t.n, 0);		/* held */
	CHECK_EQ(plug->n, 5);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 1);
	g = t_read(0);
	CHECK(g.ok, "intact");
	CHECK_EQ(g.n, 5);
	for (i = 0; i < 5; i++)
		CHECK_EQ(g.seq[i], i + 1);
	CHECK(g.bundle_first && !g.bundle_later, "DP_WF_BUNDLE on the first alone");
	CHECK(t_to(0, 2, 1), "to NID 2's address");
	CHECK(t.f[0].own == own, "from the NIC's buffer if it has them");
	CHECK_EQ(t.gets, own ? 1 : 0);
	CHECK(t.f[0].done == &t.txc, "counted for the endpoint");
	CHECK_EQ(atomic_read(&t.txc.inflight), 1);
	t_teardown();
}

static void test_tx_bundle_copied(void)
{
	bundle_one(false);
}

static void test_tx_bundle_own_buffer(void)
{
	bundle_one(true);
}

/*
 * A batch's bundle in a NIC's buffer is sized for the messages it has
 * left, each as large as the first (dp_sendv() sets @left as it goes):
 * a batch of 3 takes one buffer of 3 frames' bytes.
 */
static void test_tx_bundle_sized(void)
{
	u32 need = DP_WIRE_HDR_LEN + 64;
	struct t_got g;
	u32 i;

	t_setup(true);
	t_start(3);
	for (i = 1; i <= 3; i++) {
		t.ep.plug.left = 3 - (i - 1);
		CHECK_EQ(t_send(&t.ep.plug, 2, i, 64), 0);
	}
	CHECK_EQ(t.ep.plug.cap, 3 * need);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 1);
	CHECK_EQ(t.gets, 1);
	CHECK_EQ(t.f[0].len, 3 * need);
	g = t_read(0);
	CHECK(g.ok && g.n == 3, "three frames intact");
	/* a fourth after the batch's count opens a buffer of its own */
	t_start(1);
	t_send(&t.ep.plug, 2, 4, 64);
	t_send(&t.ep.plug, 2, 5, 64);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 3);
	CHECK_EQ(t.gets, 3);
	t_teardown();
}

/* A frame alone is no bundle: no DP_WF_BUNDLE. */
static void test_tx_bundle_of_one(void)
{
	struct t_got g;

	t_setup(true);
	t_start(U32_MAX);
	t_send(&t.ep.plug, 2, 1, 64);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 1);
	g = t_read(0);
	CHECK(g.ok && g.n == 1 && !g.bundle_first, "one frame, no bundle flag");
	t_teardown();
}

/*
 * A bundle is a link frame: DP_TX_BUNDLE_MAX (8192) bytes at most on a
 * 9000-byte MTU, the NIC's MTU below that; the frame that does not fit
 * starts the next.
 */
static void bundle_full(unsigned int mtu, u32 len)
{
	u32 per = min_t(u32, mtu, DP_TX_BUNDLE_MAX) / (DP_WIRE_HDR_LEN + len);
	unsigned int k, seen = 0;
	u32 i, total = 3 * per + 1;
	struct t_got g;

	t_setup(false);
	t.mtu[0] = mtu;
	t_start(U32_MAX);
	for (i = 1; i <= total; i++)
		CHECK_EQ(t_send(&t.ep.plug, 2, i, len), 0);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 4);
	for (k = 0; k < t.n; k++) {
		g = t_read(k);
		CHECK(g.ok, "frame %u intact", k);
		CHECK_EQ(g.n, k < 3 ? per : 1);
		CHECK(t.f[k].len <= min_t(u32, mtu, DP_TX_BUNDLE_MAX), "within the bundle");
		CHECK_EQ(g.seq[0], seen + 1);
		seen += g.n;
	}
	CHECK_EQ(seen, total);
	t_teardown();
}

static void test_tx_bundle_full(void)
{
	bundle_full(T_MTU, 1000);
	bundle_full(1500, 100);
}

/* Another peer's frame sends what is held first: each peer's in order. */
static void test_tx_bundle_peers(void)
{
	static const u32 nid[] = { 2, 2, 3, 3, 3, 2 };
	static const unsigned int per[] = { 2, 3, 1 };
	unsigned int k, i = 0;
	struct t_got g;

	t_setup(true);
	t_start(U32_MAX);
	for (k = 0; k < ARRAY_SIZE(nid); k++)
		CHECK_EQ(t_send(&t.ep.plug, nid[k], k + 1, 64), 0);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 3);
	for (k = 0; k < 3 && k < t.n; k++) {
		g = t_read(k);
		CHECK(g.ok, "frame %u intact", k);
		CHECK_EQ(g.n, per[k]);
		CHECK(t_to(k, nid[i], 1), "frame %u to its peer", k);
		CHECK_EQ(g.seq[0], i + 1);
		CHECK(g.n && g.n <= 256 && g.nid[g.n - 1] == nid[i], "frame %u's last", k);
		i += g.n;
	}
	t_teardown();
}

/*
 * A frame of more than half a link frame goes alone, from where it lies,
 * after what is held: the order sent is the order on the link.
 */
static void test_tx_large_in_order(void)
{
	static const u32 len[] = { 64, 64, 4200, 64 };
	static const unsigned int per[] = { 2, 1, 1 };
	unsigned int k, i = 0;
	struct t_got g;

	t_setup(true);
	t_start(U32_MAX);
	for (k = 0; k < ARRAY_SIZE(len); k++)
		CHECK_EQ(t_send(&t.ep.plug, 2, k + 1, len[k]), 0);
	CHECK_EQ(t.n, 2);		/* the two held, then the large one */
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 3);
	for (k = 0; k < 3 && k < t.n; k++) {
		g = t_read(k);
		CHECK(g.ok && g.n == per[k] && g.seq[0] == i + 1, "frame %u", k);
		i += g.n;
	}
	CHECK(!t.f[1].own, "the large one from where it lies");
	CHECK_EQ(t.gets, 2);		/* one buffer per bundle */
	t_teardown();
}

/* Our own NID: to the MDR, never the NIC nor the plug. */
static void test_tx_local(void)
{
	t_setup(true);
	t_start(U32_MAX);
	CHECK_EQ(t_send(&t.ep.plug, T_NID, 1, 64), 0);
	CHECK_EQ(t.local, 1);
	CHECK_EQ(t.ep.plug.n, 0);
	CHECK(dp_tx_plug_slot(&t.ep.plug, &(struct dp_msg_hdr){
		.type = DP_WT_DATA, .dst_nid = T_NID, .src_nid = T_NID, .len = 8 }) == NULL,
	      "no slot for a local frame");
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 0);
	t_teardown();
}

/* No route, no NIC, too large: the errno, counted, nothing sent. */
static void test_tx_refused(void)
{
	t_setup(true);
	CHECK_EQ(t_send(NULL, 9, 1, 64), -EHOSTUNREACH);
	CHECK_EQ(t.ctr[DP_CTR_TX_DROP_NO_ROUTE], 1);
	t_start(U32_MAX);
	CHECK_EQ(t_send(&t.ep.plug, 9, 2, 64), -EHOSTUNREACH);
	CHECK_EQ(t.ep.plug.n, 0);
	CHECK_EQ(t_send(&t.ep.plug, 2, 3, T_MTU - DP_WIRE_HDR_LEN + 1), -EMSGSIZE);
	dp_tx_plug_end(&t.ep);
	t.node.nic = NULL;
	CHECK_EQ(t_send(NULL, 2, 4, 64), -ENETDOWN);
	CHECK_EQ(t.ctr[DP_CTR_TX_DROP_NO_NIC], 1);
	CHECK_EQ(t.n, 0);
	t_teardown();
}

/*
 * The node's NIC changes while frames are held in the old one's buffer:
 * the next frame does not join them, they are let go of unsent and
 * counted (their sessions resend them), and the new NIC carries the rest.
 */
static void test_tx_nic_changed(void)
{
	struct t_got g;

	t_setup(true);
	t_start(U32_MAX);
	t_send(&t.ep.plug, 2, 1, 64);
	t_send(&t.ep.plug, 2, 2, 64);
	t.node.nic = &t.nics[1];
	t_send(&t.ep.plug, 2, 3, 64);
	CHECK_EQ(t.frees, 1);
	CHECK_EQ(t.ctr[DP_CTR_TX_DROP_NO_NIC], 2);
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 1);
	g = t_read(0);
	CHECK(g.ok && g.n == 1 && g.seq[0] == 3, "the new NIC's frame");
	CHECK(t_to(0, 2, 2), "by NIC 2");
	t_teardown();
}

/* A NIC that refuses a bundle: each of its frames counted. */
static void test_tx_nic_refuses(void)
{
	unsigned int own;

	for (own = 0; own < 2; own++) {
		t_setup(own);
		t_start(U32_MAX);
		t_send(&t.ep.plug, 2, 1, 64);
		t_send(&t.ep.plug, 2, 2, 64);
		t_send(&t.ep.plug, 2, 3, 64);
		t.xmit_err = -ENOMEM;
		dp_tx_plug_end(&t.ep);
		CHECK_EQ(t.ctr[DP_CTR_TX_DROP_NOMEM], 3);
		t.xmit_err = -EIO;
		CHECK_EQ(t_send(NULL, 2, 4, 64), -EIO);
		CHECK_EQ(t.ctr[DP_CTR_TX_DROP_NIC], 1);
		CHECK_EQ(t.n, 0);
		t_teardown();
	}
}

/*
 * The user's bytes copied straight into the NIC's buffer
 * (dp_tx_plug_slot(), dp_tx_plug_commit()): only a frame that joins a
 * bundle there gets a slot, and what is committed reads back intact.
 */
static void test_tx_slot(void)
{
	const struct dp_addr to = { .nid = 2, .dpid = 200 };
	struct dp_msg_hdr h;
	struct t_got g;
	u8 *slot;

	t_setup(true);
	t_start(U32_MAX);
	dp_tx_hdr(&t.ep, &h, DP_WT_DATA, &to);
	h.len = 64;
	h.seq = 1;
	CHECK(dp_tx_plug_slot(&t.ep.plug, &h) == NULL, "nothing held: no slot");
	t_send(&t.ep.plug, 2, 1, 64);
	h.seq = 2;
	slot = dp_tx_plug_slot(&t.ep.plug, &h);
	CHECK(slot != NULL, "joins the bundle in the NIC's buffer");
	if (slot) {
		t_fill(2, 64);
		memcpy(slot, t_msg, 64);
		dp_tx_plug_commit(&t.ep.plug, &h, dp_wire_msg_crc(t_msg, 64));
	}
	h.dst_nid = 3;
	CHECK(dp_tx_plug_slot(&t.ep.plug, &h) == NULL, "another peer: no slot");
	dp_tx_plug_end(&t.ep);
	g = t_read(0);
	CHECK(g.ok && g.n == 2 && g.seq[1] == 2, "the committed frame intact");
	t_teardown();

	t_setup(false);			/* no buffers of the NIC's own */
	t_start(U32_MAX);
	t_send(&t.ep.plug, 2, 1, 64);
	h.dst_nid = 2;
	CHECK(dp_tx_plug_slot(&t.ep.plug, &h) == NULL, "bundle in the plug's buffer: no slot");
	dp_tx_plug_end(&t.ep);
	t_teardown();
}

/*
 * A single write's plug (autocorking): its frame goes at once if it does
 * not stream and nothing of the endpoint is in flight; it is held behind
 * a frame in flight, or when it streams.
 */
static void test_tx_cork_room(void)
{
	struct dp_tx_plug *plug = &t.ep.plug;

	t_setup(true);
	t_start(U32_MAX);
	plug->cork = true;
	t_send(plug, 2, 1, 64);
	CHECK_EQ(t.n, 1);		/* alone */
	CHECK_EQ(plug->n, 0);
	CHECK_EQ(atomic_read(&t.txc.inflight), 1);
	t_send(plug, 2, 2, 64);
	CHECK_EQ(plug->n, 1);		/* behind the frame in flight */
	dp_tx_plug_end(&t.ep);
	t.txc.inflight.counter = 0;
	t_start(U32_MAX);
	plug->cork = true;
	plug->stream = true;
	t_send(plug, 2, 3, 64);
	CHECK_EQ(plug->n, 1);		/* streams: held */
	dp_tx_plug_end(&t.ep);
	CHECK_EQ(t.n, 3);
	t_teardown();
}

/*
 * A session's template keeps its route while the NART table and the NIC
 * are the ones it was resolved for, and resolves again when either is
 * not.
 */
static void test_tx_tmpl_route(void)
{
	const struct dp_addr to = { .nid = 2, .dpid = 200 };
	struct dp_tx_tmpl tm = { 0 };
	struct dp_msg_hdr h;
	int k;

	t_setup(false);
	dp_tx_tmpl(&t.ep, &tm, DP_WT_DATA, &to, 5);
	h = tm.h;
	h.len = 64;
	for (k = 0; k < 4; k++) {
		if (k == 1)
			t_nart(2, 0x22);	/* NID 2 moved */
		if (k == 2)
			t.node.nic = &t.nics[1];
		if (k == 3)
			tm.route.dst[5] = 0x99;	/* kept while good: not looked up */
		h.seq = k + 1;
		t_fill(h.seq, 64);
		CHECK_EQ(dp_tx_frame_tmpl(&t.node, NULL, &tm, &h, t_msg,
					  dp_wire_msg_crc(t_msg, 64), NULL), 0);
	}
	CHECK_EQ(t.n, 4);
	CHECK(t.f[0].dst[5] == 2 && t.f[1].dst[5] == 0x22 && t.f[2].dst[5] == 0x22,
	      "resolved again on a new table");
	CHECK(t.f[1].nic == 1 && t.f[2].nic == 2, "and on a new NIC");
	CHECK_EQ(t.f[3].dst[5], 0x99);
	CHECK_EQ(tm.route.gen, 2);
	CHECK_EQ(tm.route.nic, 2);
	for (k = 0; k < 4; k++)
		CHECK(t_read(k).ok, "frame %d intact", k);
	t_teardown();
}

/* An ANNOUNCE goes to the link's broadcast address, with no route. */
static void test_tx_announce(void)
{
	struct dp_msg_hdr h;
	u8 ll[DP_LLADDR_MAX];
	int k;

	t_setup(false);
	CHECK_EQ(dp_tx_announce(&t.node, DP_DISC_HOLD_MIN_MS + 1, ll), 6);
	CHECK_EQ(t.n, 1);
	for (k = 0; k < 6; k++)
		CHECK_EQ(t.f[0].dst[k], 0xff);
	CHECK_EQ(t.f[0].dst[6], 0);
	CHECK_EQ(dp_wire_decode(t.f[0].data, t.f[0].len, &h), 0);
	CHECK_EQ(h.type, DP_WT_ANNOUNCE);
	CHECK_EQ(dp_wire_announce_hold(t.f[0].data + DP_WIRE_HDR_LEN),
		 DP_DISC_HOLD_MIN_MS + 1);
	CHECK_EQ(t.ctr[DP_CTR_TX_CTRL], 1);
	t.node.nid = 0;
	CHECK_EQ(dp_tx_announce(&t.node, DP_DISC_HOLD_MIN_MS, ll), -EADDRNOTAVAIL);
	t_teardown();
}

const struct unit_test tx_tests[] = {
	{ "tx_bundle_copied", test_tx_bundle_copied },
	{ "tx_bundle_own_buffer", test_tx_bundle_own_buffer },
	{ "tx_bundle_sized", test_tx_bundle_sized },
	{ "tx_bundle_of_one", test_tx_bundle_of_one },
	{ "tx_bundle_full", test_tx_bundle_full },
	{ "tx_bundle_peers", test_tx_bundle_peers },
	{ "tx_large_in_order", test_tx_large_in_order },
	{ "tx_local", test_tx_local },
	{ "tx_refused", test_tx_refused },
	{ "tx_nic_changed", test_tx_nic_changed },
	{ "tx_nic_refuses", test_tx_nic_refuses },
	{ "tx_slot", test_tx_slot },
	{ "tx_cork_room", test_tx_cork_room },
	{ "tx_tmpl_route", test_tx_tmpl_route },
	{ "tx_announce", test_tx_announce },
	{ NULL, NULL },
};
