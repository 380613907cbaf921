// SPDX-License-Identifier: GPL-2.0
/*
 * MDR (message dispatch routine): a received frame goes from the NIC layer
 * to the destination endpoint's sessions, by type: its receiving side
 * (dp_rcv.c places DATA straight into the pool) or the sending session of
 * the edge it answers (dp_snd.c).  Runs in softirq or interrupt context;
 * every frame is untrusted and every frame that is not delivered is
 * charged to exactly one drop counter.
 */
#include <linux/uidgid.h>

#include "dp.h"
#include "dp_trace.h"

/*
 * Whether @ep's admission rule lets in a message from @h, whose sender's
 * kernel stamped uid @h->src_uid (as its initial namespace sees it).
 * Caller holds RCU (edges are RCU-freed).
 */
static bool dp_mdr_admit(struct dp_endpoint *ep, const struct dp_msg_hdr *h)
{
	const struct dp_addr src = { .nid = h->src_nid, .dpid = h->src_dpid };

	if ((ep->admit & DP_ADMIT_UID) &&
	    !uid_eq(make_kuid(&init_user_ns, h->src_uid), ep->uid))
		return false;
	if ((ep->admit & DP_ADMIT_PEERS) && !dp_edge_find(ep, &src))
		return false;
	return true;
}

/*
 * The sending session an ACK or RESET from h's source is for: the edge to
 * it, if the frame names this incarnation of the endpoint.  Caller holds
 * RCU (edges are RCU-freed).
 */
static struct dp_snd *dp_mdr_snd(struct dp_endpoint *ep,
				 const struct dp_msg_hdr *h)
{
	const struct dp_addr from = { .nid = h->src_nid, .dpid = h->src_dpid };
	struct dp_edge *e;

	if (h->dst_inc != ep->inc)
		return NULL;
	e = dp_edge_find(ep, &from);
	return e ? &e->snd : NULL;
}

static void dp_mdr_ack(struct dp_endpoint *ep, const struct dp_msg_hdr *h,
		       const void *sack)
{
	struct dp_snd *s = dp_mdr_snd(ep, h);

	if (s)
		dp_snd_ack(s, h, sack);
}

/* An ACK, with the map of held messages (DP_WF_SACK) if it has one. */
static void dp_mdr_sack(struct dp_endpoint *ep, const struct dp_msg_hdr *h,
			const struct dp_payload *payload)
{
	u8 map[DP_SACK_LEN];

	if (h->len != DP_SACK_LEN) {
		dp_mdr_ack(ep, h, NULL);
		return;
	}
	dp_payload_copy(payload, 0, map, sizeof(map));
	dp_mdr_ack(ep, h, map);
}

/* DATA and HELLO pass the endpoint's admission rule, or are counted. */
static bool dp_mdr_admitted(struct dp_endpoint *ep, const struct dp_msg_hdr *h)
{
	if (dp_mdr_admit(ep, h))
		return true;
	atomic64_inc(&ep->rx_drop_admit);
	dp_count(ep->node, DP_CTR_RX_DROP_ADMIT);
	return false;
}

static void dp_mdr_data(struct dp_endpoint *ep, const struct dp_msg_hdr *h,
			const struct dp_payload *payload)
{
	if (!dp_mdr_admitted(ep, h))
		return;
	if (h->flags & DP_WF_ACK)	/* a piggy-backed ack */
		dp_mdr_ack(ep, h, NULL);
	if (h->flags & DP_WF_RAW)
		dp_rcv_raw(&ep->rcv, h, payload);
	else
		dp_rcv_data(&ep->rcv, h, payload);
}

/*
 * A frame that passed the node's checks (or was built by this node's own
 * kernel): to the endpoint bound to h->dst_dpid, by type.  Caller holds
 * RCU.  See docs/reliability.md for what each type does.
 */
void dp_mdr_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		  const struct dp_payload *payload)
{
	struct dp_endpoint *ep = dp_cat_lookup(node, h->dst_dpid);

	/*
	 * An endpoint is in the CAT a moment before its bind completes (the
	 * DPID must be claimed first); until then it has no DPID to answer
	 * from, so its frames wait, as if it were not bound yet.
	 */
	if (!ep || !dp_ep_bound(ep)) {
		dp_count(node, DP_CTR_RX_DROP_NO_EP);
		trace_dp_rx_no_ep(node, h);
		return;
	}
	if (h->type == DP_WT_DATA) {
		dp_mdr_data(ep, h, payload);
		return;
	}
	dp_count(node, DP_CTR_RX_CTRL);
	switch (h->type) {
	case DP_WT_ACK:
		if (h->flags & DP_WF_RETURN)
			dp_rcv_return(&ep->rcv, h);
		else if (h->flags & DP_WF_PROBE)
			dp_rcv_probe(&ep->rcv, h);
		else
			dp_mdr_sack(ep, h, payload);
		break;
	case DP_WT_HELLO:
		if (dp_mdr_admitted(ep, h))
			dp_rcv_hello(&ep->rcv, h);
		else
			dp_rcv_refuse(&ep->rcv, h);	/* the sender gets ECONNREFUSED */
		break;
	case DP_WT_RESET:
		if (h->flags & DP_WF_FIN) {
			dp_rcv_fin(&ep->rcv, h);
		} else {
			struct dp_snd *s = dp_mdr_snd(ep, h);

			if (s)
				dp_snd_reset(s, h);
		}
		break;
	}
}

/* The sender must be a NART member transmitting from its own address. */
static int dp_mdr_check_src(struct dp_node *node, const struct dp_msg_hdr *h,
			    const u8 *src, u8 src_len)
{
	const struct dp_nart_entry *e;

	e = dp_nart_find(rcu_dereference(node->nart), h->src_nid);
	if (!e)
		return DP_CTR_RX_DROP_UNKNOWN_SRC;
	if (e->alen != src_len || memcmp(e->addr, src, src_len))
		return DP_CTR_RX_DROP_SPOOFED;
	return 0;
}

/* An ANNOUNCE (to no node): neighbour discovery's. */
static void dp_mdr_announce(struct dp_node *node, const u8 *src, u8 src_len,
			    const struct dp_msg_hdr *h,
			    const struct dp_payload *msg)
{
	struct dp_wire_announce a;

	dp_payload_copy(msg, 0, &a, sizeof(a));	/* what this version reads */
	dp_disc_rx(&node->disc, src, src_len, h, &a);
}

/*
 * One dp frame from a NIC, decoded as *@h (or @drop, its drop reason):
 * an ANNOUNCE to discovery, the others, from a NART member to this node,
 * to the MDR; else counted.  Caller holds RCU.
 */
static void dp_mdr_rx_one(struct dp_node *node, const u8 *src, u8 src_len,
			  const struct dp_msg_hdr *h, int drop,
			  const struct dp_payload *msg)
{
	if (!drop && h->type == DP_WT_ANNOUNCE) {
		dp_mdr_announce(node, src, src_len, h, msg);
		return;
	}
	if (!drop && h->dst_nid != READ_ONCE(node->nid))
		drop = DP_CTR_RX_DROP_NOT_NODE;
	if (!drop)
		drop = dp_mdr_check_src(node, h, src, src_len);
	if (drop)
		dp_count(node, drop);
	else
		dp_mdr_frame(node, h, msg);
}

/*
 * The frames that follow the first one of a bundle (DP_WF_BUNDLE), each
 * taken as if it had come alone, until the link frame ends or one fails
 * its checks (counted): what follows that one cannot be found.
 */
static void dp_mdr_rx_bundle(struct dp_node *node, const u8 *src, u8 src_len,
			     unsigned int len, const struct dp_payload *msg,
			     u32 off)
{
	struct dp_payload inner;
	struct dp_msg_hdr h;
	int drop;

	do {
		drop = dp_wire_decode_next(msg, len, &off, &h, &inner);
		if (drop < 0)
			return;		/* link padding */
		dp_mdr_rx_one(node, src, src_len, &h, drop, &inner);
	} while (!drop);
}

/*
 * A frame of @len bytes from a NIC: @hdr its dp header (DP_WIRE_HDR_LEN
 * bytes, unread if @len is shorter), @msg the message after it, which may
 * be in pieces (struct dp_payload); with DP_WF_BUNDLE, more frames after
 * that message.
 */
void dp_mdr_rx_parts(struct dp_node *node, const u8 *src, u8 src_len,
		     const void *hdr, unsigned int len,
		     const struct dp_payload *msg)
{
	struct dp_msg_hdr h;
	int drop;

	rcu_read_lock();
	drop = dp_wire_decode_parts(hdr, len, msg, &h);
	dp_mdr_rx_one(node, src, src_len, &h, drop, msg);
	if (!drop && (h.flags & DP_WF_BUNDLE))
		dp_mdr_rx_bundle(node, src, src_len, len, msg, h.len);
	rcu_read_unlock();
}

/* A frame from a NIC: @frame is the dp header followed by the message. */
void dp_mdr_rx(struct dp_node *node, const u8 *src, u8 src_len,
	       const void *frame, unsigned int len)
{
	/* (not read if @len is short: it is a drop) */
	const struct dp_payload msg =
		dp_payload_flat((const u8 *)frame +
				min_t(unsigned int, len, DP_WIRE_HDR_LEN));

	dp_mdr_rx_parts(node, src, src_len, frame, len, &msg);
}
