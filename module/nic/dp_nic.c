// SPDX-License-Identifier: GPL-2.0
/*
 * NIC layer: the lifetime rules every backend shares.  A sender takes a
 * reference under RCU and may then sleep in ->xmit(); detaching waits for
 * the last such sender before the backend frees its device.
 */
#include "dp.h"

void dp_nic_init(struct dp_nic *nic, const struct dp_nic_ops *ops,
		 struct dp_node *node, void *hw, const char *ifname)
{
	nic->ops = ops;
	nic->node = node;
	nic->hw = hw;
	refcount_set(&nic->users, 1);
	init_completion(&nic->idle);
	strscpy(nic->ifname, ifname, sizeof(nic->ifname));
}

/* Returns the node's NIC with a sender reference, or NULL if none. */
struct dp_nic *dp_nic_get(struct dp_node *node)
{
	struct dp_nic *nic;

	rcu_read_lock();
	nic = rcu_dereference(node->nic);
	if (nic && !refcount_inc_not_zero(&nic->users))
		nic = NULL;
	rcu_read_unlock();
	return nic;
}

void dp_nic_put(struct dp_nic *nic)
{
	if (refcount_dec_and_test(&nic->users))
		complete(&nic->idle);
}

/* Largest message: link payload less our header, within the wire limit. */
unsigned int dp_nic_max_msg(const struct dp_nic *nic)
{
	unsigned int mtu = nic->ops->mtu(nic);

	if (mtu <= DP_WIRE_HDR_LEN)
		return 0;
	return min(mtu - DP_WIRE_HDR_LEN, DP_MAX_MSG);
}
