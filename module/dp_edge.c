// SPDX-License-Identifier: GPL-2.0
/*
 * Directed edges {local DPID, peer NID, peer DPID}.  An endpoint keeps its
 * edges in a small hash table: writers hold ep->lock, the send path reads
 * under RCU.  The current edge is the one write() uses.
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
		hash_add_rcu(ep->edges, &e->hnode, dp_edge_hash(to));
		ep->n_edges++;
	}
	rcu_assign_pointer(ep->cur, e);
out:
	mutex_unlock(&ep->lock);
	return err;
}

static void dp_edge_remove(struct dp_endpoint *ep, struct dp_edge *e)
{
	lockdep_assert_held(&ep->lock);
	if (rcu_access_pointer(ep->cur) == e)
		RCU_INIT_POINTER(ep->cur, NULL);
	hash_del_rcu(&e->hnode);
	ep->n_edges--;
	kfree_rcu(e, rcu);
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
