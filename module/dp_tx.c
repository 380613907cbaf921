// SPDX-License-Identifier: GPL-2.0
/*
 * Send path.  The kernel builds every header: the source NID, DPID and uid
 * come from the node and the endpoint, never from the user.  The user's
 * bytes are copied once, into the NIC's transmit buffer.
 */
#include <linux/cred.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
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

static int dp_tx_local(struct dp_node *node, const struct dp_msg_hdr *h,
		       const void __user *buf)
{
	void *bounce = kvmalloc(max_t(size_t, h->len, 1), GFP_KERNEL);
	int err = 0;

	if (!bounce)
		return -ENOMEM;
	if (copy_from_user(bounce, buf, h->len))
		err = -EFAULT;
	else
		dp_mdr_local(node, h, bounce);
	kvfree(bounce);
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

/* One attempt with the NIC held; user pages must not fault (see below). */
static int dp_tx_nic_held(struct dp_node *node, const struct dp_msg_hdr *h,
			  const void __user *buf)
{
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
	iov_iter_ubuf(&iter, ITER_SOURCE, (void __user *)buf, h->len);
	pagefault_disable();
	err = nic->ops->xmit(nic, addr, &w, &iter, h->len);
	pagefault_enable();
	if (err == -ENOMEM)
		dp_count(node, DP_CTR_TX_DROP_NOMEM);
	else if (err && err != -EFAULT)
		dp_count(node, DP_CTR_TX_DROP_NIC);
out:
	dp_nic_put(nic);
	return err;
}

/*
 * The backend copies the user's bytes while the NIC is held, and detaching
 * the NIC (a netdev unregistering under rtnl, dpctl, a PCI remove) waits
 * for every holder.  A page fault may take as long as the buffer's owner
 * likes (userfaultfd, FUSE, a hung NFS server), so it must not happen
 * there: the pages are faulted in first with nothing held, and copied with
 * page faults disabled.  A copy that still finds a page gone (reclaimed or
 * unmapped meanwhile) lets go of the NIC and faults in again.
 */
static int dp_tx_nic(struct dp_node *node, const struct dp_msg_hdr *h,
		     const void __user *buf)
{
	int err;

	do {
		if (fault_in_readable(buf, h->len))
			return -EFAULT;
		err = dp_tx_nic_held(node, h, buf);
	} while (err == -EFAULT && !fatal_signal_pending(current));
	return err;
}

/* Send len bytes from buf on the edge to @to (NULL: the current edge). */
ssize_t dp_send(struct dp_endpoint *ep, const struct dp_addr *to,
		const void __user *buf, size_t len)
{
	struct dp_node *node = ep->node;
	struct dp_msg_hdr h = { .type = DP_WT_DATA };
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
	if (h.dst_nid == h.src_nid)
		err = dp_tx_local(node, &h, buf);
	else
		err = dp_tx_nic(node, &h, buf);
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
