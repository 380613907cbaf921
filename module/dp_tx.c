// SPDX-License-Identifier: GPL-2.0
/*
 * Send path.  The kernel builds every header: the source NID, DPID and uid
 * come from the node and the endpoint, never from the user.  The user's
 * bytes are copied once from user space, into a kernel copy that the NIC
 * transmits from (docs/reliability.md, section 7).
 */
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dp.h"

u32 dp_max_msg(struct dp_node *node)
{
	struct dp_nic *nic = dp_nic_get(node);
	u32 max = DP_MAX_MSG;

	if (nic) {
		max = dp_nic_max_msg(nic);
		dp_nic_put(nic);
	}
	return max;
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
	h->src_uid = from_kuid_munged(&init_user_ns, ep->uid);
	h->src_inc = ep->inc;
}

/*
 * Resolve the peer's link address in the NART.  An entry whose address
 * length is not the NIC's (a 3-byte "MAC" on Ethernet) is no route.
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
	if (e && e->alen == alen)
		memcpy(addr, e->addr, alen);
	else
		err = -EHOSTUNREACH;
	rcu_read_unlock();
	return err;
}

static int dp_tx_nic(struct dp_node *node, const struct dp_msg_hdr *h,
		     const void *msg)
{
	struct kvec kv = { .iov_base = (void *)msg, .iov_len = h->len };
	u8 addr[DP_LLADDR_MAX];
	struct dp_wire_hdr w;
	struct iov_iter iter;
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
	dp_wire_encode(&w, h);
	dp_wire_seal(&w, msg, h->len);
	iov_iter_kvec(&iter, ITER_SOURCE, &kv, 1, h->len);
	err = nic->ops->xmit(nic, addr, &w, &iter, h->len);
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
 * (node-local edges run the same protocol without a wire).  Process
 * context only: the tulip backend's xmit sleeps.
 */
int dp_tx_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		const void *msg)
{
	int err = 0;

	might_sleep();
	if (h->dst_nid == h->src_nid) {
		rcu_read_lock();
		dp_mdr_frame(node, h, msg);
		rcu_read_unlock();
	} else {
		err = dp_tx_nic(node, h, msg);
	}
	if (!err && h->type != DP_WT_DATA)
		dp_count(node, DP_CTR_TX_CTRL);
	return err;
}

/* Raw mode (DP_BIND_RAW): v1 semantics, the copy is freed once sent. */
static int dp_tx_raw(struct dp_endpoint *ep, struct dp_edge *e,
		     const void __user *buf, size_t len)
{
	struct dp_msg_hdr h;
	void *msg;
	int err;

	msg = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!msg)
		return -ENOMEM;
	err = -EFAULT;
	if (copy_from_user(msg, buf, len))
		goto out;
	dp_tx_hdr(ep, &h, DP_WT_DATA, &e->to);
	h.flags = DP_WF_RAW;
	h.len = len;
	/* 0 is never a raw sequence number: skip it when the u32 wraps. */
	while (!h.seq)
		h.seq = atomic_inc_return(&e->tx_seq);
	err = dp_tx_frame(ep->node, &h, msg);
out:
	kvfree(msg);
	return err;
}

/*
 * Send len bytes from buf on the edge to @to (NULL: the current edge):
 * reliably (dp_snd.c) unless the endpoint is raw.
 */
ssize_t dp_send(struct dp_endpoint *ep, const struct dp_addr *to,
		const void __user *buf, size_t len, bool nonblock)
{
	struct dp_node *node = ep->node;
	struct dp_edge *e;
	u32 nid;
	int err;

	if (len > DP_MAX_MSG)
		return -EMSGSIZE;
	e = dp_edge_get(ep, to);
	if (!e)
		return -ENOTCONN;
	err = 0;
	nid = READ_ONCE(node->nid);
	if (!len)
		goto out;
	err = -EMSGSIZE;
	if (len > dp_max_msg(node))	/* the NIC's; 65535 without one */
		goto out;
	err = -EADDRNOTAVAIL;
	if (nid == DP_NID_NONE)
		goto out;
	if (ep->raw)
		err = dp_tx_raw(ep, e, buf, len);
	else
		err = dp_snd_send(ep, e, buf, len, nonblock);
	if (err)
		goto out;
	atomic64_inc(&ep->tx_msgs);
	atomic64_add(len, &ep->tx_bytes);
	dp_count(node, DP_CTR_TX_MSGS);
	dp_count_add(node, DP_CTR_TX_BYTES, len);
	if (e->to.nid == nid)
		dp_count(node, DP_CTR_TX_LOCAL);
out:
	dp_edge_put(e);
	return err ? err : len;
}
