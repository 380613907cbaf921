// SPDX-License-Identifier: GPL-2.0
/*
 * Directed edges {local DPID, peer NID, peer DPID}.  An endpoint keeps its
 * edges in a small hash table: writers hold ep->lock, the send path reads
 * under RCU.  The current edge is the one write() uses.  A sender holds a
 * reference while it uses an edge (it may sleep waiting for credit); the
 * edge's session (dp_snd.c) is stopped when it leaves the table and its
 * kernel copies are freed with the last reference.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "dp.h"

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
	dp_snd_release(e);
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
		dp_snd_init(e);
		hash_add_rcu(ep->edges, &e->hnode, dp_edge_hash(to));
		ep->n_edges++;
	}
	rcu_assign_pointer(ep->cur, e);
out:
	mutex_unlock(&ep->lock);
	if (!err)	/* poll()'s EPOLLOUT speaks for the current edge */
		wake_up_interruptible_all(&ep->tx_wq);
	return err;
}

/* @goodbye: tell the peer the session is closed (endpoint closing). */
static void dp_edge_remove(struct dp_endpoint *ep, struct dp_edge *e,
			   bool goodbye)
{
	lockdep_assert_held(&ep->lock);
	if (rcu_access_pointer(ep->cur) == e)
		RCU_INIT_POINTER(ep->cur, NULL);
	hash_del_rcu(&e->hnode);
	ep->n_edges--;
	dp_snd_stop(e, goodbye);
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
		dp_edge_remove(ep, e, true);
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
		dp_edge_remove(ep, e, true);
	mutex_unlock(&ep->lock);
}
