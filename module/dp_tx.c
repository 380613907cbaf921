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

/*
 * Find the edge (to == NULL: the current edge) and, for a real message,
 * take its next sequence number.
 */
static int dp_tx_edge(struct dp_endpoint *ep, const struct dp_addr *to,
		      struct dp_msg_hdr *h)
{
	struct dp_edge *e;
	int err = 0;

	rcu_read_lock();
	e = to ? dp_edge_find(ep, to) : rcu_dereference(ep->cur);
	if (e) {
		h->dst_nid = e->to.nid;
		h->dst_dpid = e->to.dpid;
		/* 0 is never a sequence number: skip it when the u32 wraps. */
		while (h->len && !h->seq)
			h->seq = atomic_inc_return(&e->tx_seq);
	} else {
		err = -ENOTCONN;
	}
	rcu_read_unlock();
	return err;
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

/* The one copy of the user's bytes; kvmalloc: local messages reach 64 KiB. */
static void *dp_tx_copy(const void __user *buf, size_t len, int *err)
{
	void *msg = kvmalloc(len, GFP_KERNEL_ACCOUNT);

	*err = -ENOMEM;
	if (!msg)
		return NULL;
	*err = -EFAULT;
	if (copy_from_user(msg, buf, len)) {
		kvfree(msg);
		return NULL;
	}
	*err = 0;
	return msg;
}

/* Send len bytes from buf on the edge to @to (NULL: the current edge). */
ssize_t dp_send(struct dp_endpoint *ep, const struct dp_addr *to,
		const void __user *buf, size_t len)
{
	struct dp_node *node = ep->node;
	struct dp_msg_hdr h = { .type = DP_WT_DATA, .flags = DP_WF_RAW };
	void *msg;
	int err;

	if (len > DP_MAX_MSG)
		return -EMSGSIZE;
	h.len = len;
	err = dp_tx_edge(ep, to, &h);
	if (err || !len)
		return err;
	h.src_nid = READ_ONCE(node->nid);
	if (h.src_nid == DP_NID_NONE)
		return -EADDRNOTAVAIL;
	h.src_dpid = ep->dpid;
	h.src_uid = from_kuid_munged(&init_user_ns, ep->uid);
	h.src_inc = ep->inc;
	msg = dp_tx_copy(buf, len, &err);
	if (!msg)
		return err;
	if (h.dst_nid == h.src_nid)
		dp_mdr_local(node, &h, msg);
	else
		err = dp_tx_nic(node, &h, msg);
	kvfree(msg);
	if (err)
		return err;
	atomic64_inc(&ep->tx_msgs);
	atomic64_add(len, &ep->tx_bytes);
	dp_count(node, DP_CTR_TX_MSGS);
	dp_count_add(node, DP_CTR_TX_BYTES, len);
	if (h.dst_nid == h.src_nid)
		dp_count(node, DP_CTR_TX_LOCAL);
	return len;
}
