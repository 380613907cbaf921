// SPDX-License-Identifier: GPL-2.0
/*
 * Frame layer, send side.  The kernel builds every header: the source NID,
 * DPID and uid come from the node and the endpoint, never from the user.
 * A frame goes to the NIC from the kernel copy the session keeps, or, for
 * our own NID, straight to the MDR (docs/reliability.md, section 7).
 */
#include <linux/cred.h>

#include "dp.h"

/*
 * The largest message the node's NIC carries (DP_MAX_MSG without one):
 * cached by the node when its NIC or the NIC's MTU changes
 * (dp_node_set_max_msg()), so no NIC reference per call.
 */
u32 dp_max_msg(struct dp_node *node)
{
	return READ_ONCE(node->max_msg);
}

bool dp_tx_local(struct dp_node *node, u32 nid)
{
	return nid == READ_ONCE(node->nid);
}

/* The node-level header fields of a frame from @ep to @to. */
void dp_tx_hdr(struct dp_endpoint *ep, struct dp_msg_hdr *h, u8 type,
	       const struct dp_addr *to)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst_nid = to->nid;
	h->dst_dpid = to->dpid;
	h->src_nid = READ_ONCE(ep->node->nid);
	h->src_dpid = ep->dpid;
	h->src_uid = ep->wire_uid;	/* mapped once, at bind */
	h->src_inc = ep->inc;
}

/*
 * @t for frames of @type from @ep to @to, the peer's incarnation
 * @dst_inc: built unless it is already, for this NID (the node's NID may
 * change while an edge lives: its frames then carry the new one).
 */
void dp_tx_tmpl(struct dp_endpoint *ep, struct dp_tx_tmpl *t, u8 type,
		const struct dp_addr *to, u32 dst_inc)
{
	if (t->h.type == type && t->h.dst_inc == dst_inc &&
	    t->h.src_nid == READ_ONCE(ep->node->nid) &&
	    t->h.dst_nid == to->nid && t->h.dst_dpid == to->dpid)
		return;
	dp_tx_hdr(ep, &t->h, type, to);
	t->h.dst_inc = dst_inc;
	dp_wire_encode(&t->w, &t->h);
}

/*
 * Resolve the peer's link address in the NART into @addr: the address,
 * then one byte, the route's length, then the route (struct dp_backend's
 * @xmit).  An entry whose address length is not the NIC's (a 3-byte "MAC"
 * on Ethernet) is no route.
 */
static int dp_tx_route(struct dp_node *node, struct dp_nic *nic, u32 nid,
		       u8 *addr)
{
	const struct dp_nart_entry *e;
	unsigned int alen;
	int err = 0;

	alen = nic->ops->lladdr(nic, addr);
	rcu_read_lock();
	e = dp_nart_find(rcu_dereference(node->nart), nid);
	if (e && e->alen == alen) {
		memcpy(addr, e->addr, alen);
		addr[alen] = e->rlen;
		memcpy(addr + alen + 1, e->route, e->rlen);
	} else {
		err = -EHOSTUNREACH;
	}
	rcu_read_unlock();
	return err;
}

/*
 * Frame @h with @msg (h->len bytes), whose CRC state is @msg_crc
 * (dp_wire_msg_crc()), onto @nic's link, to link address @dst; its session
 * fields from template @t if there is one.  @keep: see dp_tx_frame_tmpl().
 */
static int dp_tx_link(struct dp_nic *nic, const u8 *dst,
		      const struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		      const void *msg, u32 msg_crc, struct dp_txref *keep)
{
	struct dp_wire_hdr w;

	if (t)
		dp_wire_encode_from(&w, &t->w, h);
	else
		dp_wire_encode(&w, h);
	dp_wire_seal_crc(&w, msg_crc);
	return nic->ops->xmit(nic, dst, &w, msg, h->len, keep);
}

static int dp_tx_nic(struct dp_node *node, const struct dp_tx_tmpl *t,
		     const struct dp_msg_hdr *h, const void *msg, u32 msg_crc,
		     struct dp_txref *keep)
{
	u8 addr[DP_DST_MAX];
	struct dp_nic *nic;
	int err;

	nic = dp_nic_get(node);
	if (!nic) {
		dp_count(node, DP_CTR_TX_DROP_NO_NIC);
		return -ENETDOWN;
	}
	err = -EMSGSIZE;
	if (h->len > dp_nic_max_msg(nic))
		goto out;
	err = dp_tx_route(node, nic, h->dst_nid, addr);
	if (err) {
		dp_count(node, DP_CTR_TX_DROP_NO_ROUTE);
		goto out;
	}
	err = dp_tx_link(nic, addr, t, h, msg, msg_crc, keep);
	if (err == -ENOMEM)
		dp_count(node, DP_CTR_TX_DROP_NOMEM);
	else if (err)
		dp_count(node, DP_CTR_TX_DROP_NIC);
out:
	dp_nic_put(nic);
	return err;
}

/*
 * Send one frame: to a NIC, or, for our own NID, straight to the MDR
 * (node-local edges run the same protocol without a wire, and without a
 * checksum: @msg_crc is not used).  Process context only: the tulip
 * backend's xmit sleeps.  @t, if not NULL, is @h's template: its wire
 * header is copied, not encoded again.  @keep, if not NULL, is a
 * reference on @msg the NIC may take to send it without a copy (struct
 * dp_txref).
 */
int dp_tx_frame_tmpl(struct dp_node *node, const struct dp_tx_tmpl *t,
		     const struct dp_msg_hdr *h, const void *msg, u32 msg_crc,
		     struct dp_txref *keep)
{
	int err = 0;

	might_sleep();
	if (h->dst_nid == h->src_nid) {
		const struct dp_payload local = dp_payload_flat(msg);

		rcu_read_lock();
		dp_mdr_frame(node, h, &local);
		rcu_read_unlock();
	} else {
		err = dp_tx_nic(node, t, h, msg, msg_crc, keep);
	}
	if (!err && h->type != DP_WT_DATA)
		dp_count(node, DP_CTR_TX_CTRL);
	return err;
}

int dp_tx_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		const void *msg)
{
	u32 crc = 0;

	if (h->dst_nid != h->src_nid)
		crc = dp_wire_msg_crc(msg, h->len);
	return dp_tx_frame_tmpl(node, NULL, h, msg, crc, NULL);
}

int dp_tx_announce(struct dp_node *node, u32 hold_ms, u8 *lladdr)
{
	struct dp_msg_hdr h = { .type = DP_WT_ANNOUNCE,
				.len = DP_WIRE_ANNOUNCE_LEN };
	struct dp_wire_announce a;
	u8 dst[DP_DST_MAX];
	struct dp_nic *nic;
	unsigned int alen;
	int err;

	BUILD_BUG_ON(sizeof(a) != DP_WIRE_ANNOUNCE_LEN);
	h.src_nid = READ_ONCE(node->nid);
	if (!h.src_nid)
		return -EADDRNOTAVAIL;
	nic = dp_nic_get(node);
	if (!nic)
		return -ENETDOWN;
	err = -EOPNOTSUPP;
	if (!nic->ops->broadcast)
		goto out;
	alen = nic->ops->lladdr(nic, lladdr);
	memset(dst, 0xff, alen);	/* the link's broadcast address */
	dst[alen] = 0;			/* no route */
	dp_wire_announce_encode(&a, hold_ms);
	err = dp_tx_link(nic, dst, NULL, &h, &a,
			 dp_wire_msg_crc(&a, sizeof(a)), NULL);
	if (!err) {
		dp_count(node, DP_CTR_TX_CTRL);
		err = alen;
	}
out:
	dp_nic_put(nic);
	return err;
}
