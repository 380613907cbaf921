// SPDX-License-Identifier: GPL-2.0
/*
 * CAT (communication acquirement table): which endpoint holds which DPID
 * on a node.  One holder per DPID; the receive path looks up under RCU.
 */
#include "dp.h"

int dp_cat_bind(struct dp_node *node, struct dp_endpoint *ep, u32 dpid)
{
	int err = xa_insert(&node->cat, dpid, ep, GFP_KERNEL_ACCOUNT);

	return err == -EBUSY ? -EADDRINUSE : err;
}

void dp_cat_unbind(struct dp_node *node, struct dp_endpoint *ep)
{
	xa_cmpxchg(&node->cat, ep->dpid, ep, NULL, 0);
}

/* Caller holds rcu_read_lock(); the endpoint is freed after a grace period. */
struct dp_endpoint *dp_cat_lookup(struct dp_node *node, u32 dpid)
{
	return xa_load(&node->cat, dpid);
}
