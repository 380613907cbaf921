// SPDX-License-Identifier: GPL-2.0
/*
 * Directed edges {local DPID, peer NID, peer DPID}, and sending on them.
 * An endpoint keeps its edges in a small hash table: writers hold
 * ep->lock, the send path reads under RCU.  The current edge is the one
 * write() uses.  A sender holds a reference while it uses an edge (it may
 * sleep waiting for credit); the edge's session (dp_snd.c) is stopped
 * when it leaves the table and its kernel copies are freed with the last
 * reference.
 */
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dp.h"
#include "dp_trace.h"

static u32 dp_edge_hash(const struct dp_addr *to)
{
	return jhash_2words(to->nid, to->dpid, 0);
}

/* Caller holds rcu_read_lock() or ep->lock. */
struct dp_edge *dp_edge_find(struct dp_endpoint *ep, const struct dp_addr *to)
{
	struct dp_edge *e;

	hash_for_each_possible_rcu(ep->edges, e, hnode, dp_edge_hash(to),
				   lockdep_is_held(&ep->lock))
		if (e->to.nid == to->nid && e->to.dpid == to->dpid)
			return e;
	return NULL;
}

/* The edge to @to (NULL: the current edge) with a reference, or NULL. */
struct dp_edge *dp_edge_get(struct dp_endpoint *ep, const struct dp_addr *to)
{
	struct dp_edge *e;

	rcu_read_lock();
	e = to ? dp_edge_find(ep, to) : rcu_dereference(ep->cur);
	if (e && !refcount_inc_not_zero(&e->refs))
		e = NULL;
	rcu_read_unlock();
	return e;
}

/* Process context: the last reference frees the kernel copies. */
void dp_edge_put(struct dp_edge *e)
{
	if (!refcount_dec_and_test(&e->refs))
		return;
	dp_snd_release(&e->snd);
	kfree_rcu(e, rcu);
}

int dp_edge_connect(struct dp_endpoint *ep, const struct dp_addr *to)
{
	struct dp_edge *e;
	int err = 0;

	if (to->nid == DP_NID_NONE || to->dpid == DP_DPID_NONE)
		return -EINVAL;
	mutex_lock(&ep->lock);
	e = dp_edge_find(ep, to);
	if (!e) {
		if (ep->n_edges >= DP_MAX_EDGES) {
			err = -ENOSPC;
			goto out;
		}
		err = dp_limits_grow(&ep->charge, sizeof(*e));
		if (err)
			goto out;
		e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
		if (!e) {
			dp_limits_shrink(&ep->charge, sizeof(*e));
			err = -ENOMEM;
			goto out;
		}
		e->to = *to;
		e->ep = ep;
		refcount_set(&e->refs, 1);
		dp_snd_init(&e->snd, &ep->snd, to);
		hash_add_rcu(ep->edges, &e->hnode, dp_edge_hash(to));
		ep->n_edges++;
	}
	rcu_assign_pointer(ep->cur, e);
out:
	mutex_unlock(&ep->lock);
	if (!err)	/* poll()'s EPOLLOUT speaks for the current edge */
		dp_snd_wake(&ep->snd);
	return err;
}

/* The peer is told the session is closed (dp_snd_stop()). */
static void dp_edge_remove(struct dp_endpoint *ep, struct dp_edge *e)
{
	lockdep_assert_held(&ep->lock);
	if (rcu_access_pointer(ep->cur) == e)
		RCU_INIT_POINTER(ep->cur, NULL);
	hash_del_rcu(&e->hnode);
	ep->n_edges--;
	dp_snd_stop(&e->snd);
	dp_edge_put(e);
	dp_limits_shrink(&ep->charge, sizeof(*e));
}

int dp_edge_disconnect(struct dp_endpoint *ep, const struct dp_addr *to)
{
	struct dp_edge *e;
	int err = 0;

	mutex_lock(&ep->lock);
	e = dp_edge_find(ep, to);
	if (e)
		dp_edge_remove(ep, e);
	else
		err = -ENOTCONN;
	mutex_unlock(&ep->lock);
	return err;
}

void dp_edge_free_all(struct dp_endpoint *ep)
{
	struct hlist_node *tmp;
	struct dp_edge *e;
	int bkt;

	mutex_lock(&ep->lock);
	hash_for_each_safe(ep->edges, bkt, tmp, e, hnode)
		dp_edge_remove(ep, e);
	mutex_unlock(&ep->lock);
}

/*
 * A raw message this small is copied to the stack: no allocation (and
 * none of init_on_alloc's clearing) per message.
 */
#define DP_RAW_STACK	128

/* 0 is never a raw sequence number: skip it when the u32 wraps. */
static void dp_tx_raw_seq(struct dp_edge *e, struct dp_msg_hdr *h)
{
	while (!h->seq)
		h->seq = atomic_inc_return(&e->tx_seq);
}

/*
 * Raw mode (DP_BIND_RAW): v1 semantics, the copy is freed once sent.  A
 * batch's message that joins its bundle in the NIC's own buffer is copied
 * straight there (dp_tx_plug_slot()); any other is copied first to the
 * stack (or, if larger, the heap).  The stack copy and the header are
 * written whole before they are read: not cleared first
 * (CONFIG_INIT_STACK_ALL_ZERO) for every message.
 */
static int dp_tx_raw(struct dp_endpoint *ep, struct dp_edge *e,
		     const void __user *buf, size_t len)
{
	struct dp_tx_plug *plug = dp_tx_plugged(ep);
	u8 small[DP_RAW_STACK] __uninitialized;
	struct dp_msg_hdr h __uninitialized;
	u32 crc = ~0u;
	void *msg;
	int err;

	dp_tx_hdr(ep, &h, DP_WT_DATA, &e->to);
	h.flags = DP_WF_RAW;
	h.len = len;
	/* never for our own node, so the frame always wants its CRC */
	msg = plug ? dp_tx_plug_slot(plug, &h) : NULL;
	if (msg) {
		if (dp_crc32c_copy_from_user(&crc, msg, buf, len))
			return -EFAULT;
		dp_tx_raw_seq(e, &h);
		dp_tx_plug_commit(plug, &h, crc);
		return 0;
	}
	msg = small;
	if (len > sizeof(small))
		msg = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!msg)
		return -ENOMEM;
	/* the checksum's pass fused with the copy; none to our own node */
	err = dp_crc32c_copy_from_user(h.dst_nid == h.src_nid ? NULL : &crc,
				       msg, buf, len);
	if (err)
		goto out;
	dp_tx_raw_seq(e, &h);
	err = dp_tx_frame_plug(ep->node, plug, &h, msg, crc);
out:
	if (msg != small)
		kvfree(msg);
	return err;
}

/* @msgs messages sent by @ep, @bytes in all, @local of them to its node. */
static __always_inline void dp_tx_count(struct dp_endpoint *ep, u32 msgs,
					u64 bytes, u32 local)
{
	atomic64_add(msgs, &ep->tx_msgs);
	atomic64_add(bytes, &ep->tx_bytes);
	dp_count_add(ep->node, DP_CTR_TX_MSGS, msgs);
	dp_count_add(ep->node, DP_CTR_TX_BYTES, bytes);
	if (local)
		dp_count_add(ep->node, DP_CTR_TX_LOCAL, local);
}

void dp_tx_tally_flush(struct dp_endpoint *ep, struct dp_tx_tally *tally)
{
	if (!tally->msgs)
		return;
	dp_tx_count(ep, tally->msgs, tally->bytes, tally->local);
	memset(tally, 0, sizeof(*tally));
}

/*
 * Why @ep may not send @len bytes now, or 0.  A raw message is one frame
 * (the NIC's); a reliable one larger than a frame is cut (dp_snd.c), up
 * to what its receiver announced, never more than half the largest pool.
 */
static int dp_send_refused(const struct dp_endpoint *ep, size_t len)
{
	struct dp_node *node = ep->node;

	if (ep->raw ? len > DP_MAX_MSG || len > dp_max_msg(node) :
	    len > DP_POOL_MAX / 2)
		return -EMSGSIZE;
	if (READ_ONCE(node->nid) == DP_NID_NONE)
		return -EADDRNOTAVAIL;
	return 0;
}

/* dp_send_edge_tally() past its checks: @len is not 0 and not refused. */
static ssize_t dp_send_edge_go(struct dp_edge *e, const void __user *buf,
			       size_t len, bool nonblock,
			       struct dp_tx_tally *tally)
{
	struct dp_endpoint *ep = e->ep;
	bool local = e->to.nid == READ_ONCE(ep->node->nid);
	int err;

	if (ep->raw)
		err = dp_tx_raw(ep, e, buf, len);
	else
		err = dp_snd_send(&e->snd, buf, len, nonblock);
	if (err)
		return err;
	trace_dp_tx(ep, &e->to, len);
	if (!tally) {
		dp_tx_count(ep, 1, len, local);
		return len;
	}
	tally->msgs++;
	tally->bytes += len;
	tally->local += local;
	return len;
}

/*
 * Send len bytes from buf on @e, an edge the caller holds a reference
 * to: reliably (dp_snd.c) unless its endpoint is raw.  Counted at once,
 * or in @tally if it is not NULL (the caller flushes it).
 */
ssize_t dp_send_edge_tally(struct dp_edge *e, const void __user *buf,
			   size_t len, bool nonblock, struct dp_tx_tally *tally)
{
	int err;

	if (!len)
		return 0;
	err = dp_send_refused(e->ep, len);
	if (err)
		return err;
	return dp_send_edge_go(e, buf, len, nonblock, tally);
}

/*
 * Send len bytes from buf on the edge to @to (NULL: the current edge); a
 * small message to another node may wait in the endpoint's plug for the
 * NIC to let go of an earlier frame (autocorking, dp_cork.c).  A write
 * refused for its size or the node's NID never takes the plug: it is not
 * a write of the stream dp_cork.c looks for.
 */
ssize_t dp_send(struct dp_endpoint *ep, const struct dp_addr *to,
		const void __user *buf, size_t len, bool nonblock)
{
	struct dp_edge *e = dp_edge_get(ep, to);
	ssize_t ret;
	bool cork;

	if (!e)
		return -ENOTCONN;	/* before EMSGSIZE: docs/contract.md */
	ret = 0;
	if (!len)
		goto out;
	ret = dp_send_refused(ep, len);
	if (ret)
		goto out;
	cork = e->to.nid != READ_ONCE(ep->node->nid) && dp_cork_start(ep, len);
	ret = dp_send_edge_go(e, buf, len, nonblock, NULL);
	if (cork)
		dp_cork_end(ep);
out:
	dp_edge_put(e);
	return ret;
}
