// SPDX-License-Identifier: GPL-2.0
/*
 * Nodes: every network namespace is one dp node with its own NID, CAT,
 * NART, NIC and counters (as TIPC and WireGuard are per namespace).
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/netns/generic.h>

#include "dp.h"
#include "dp_trace.h"

static unsigned int dp_net_id __read_mostly;

struct dp_node *dp_node_of(const struct net *net)
{
	return net_generic(net, dp_net_id);
}

void dp_count(struct dp_node *node, enum dp_counter c)
{
	this_cpu_inc(node->ctr->c[c]);
	if (trace_dp_drop_enabled() && dp_ctr_is_drop(c))
		trace_dp_drop(node, c, 1);
}

void dp_count_add(struct dp_node *node, enum dp_counter c, u64 v)
{
	this_cpu_add(node->ctr->c[c], v);
	if (trace_dp_drop_enabled() && v && dp_ctr_is_drop(c))
		trace_dp_drop(node, c, v);
}

/* Sum the per-CPU counters; each value may be a moment stale, never torn. */
void dp_node_counters(struct dp_node *node, u64 *out)
{
	int cpu, i;

	memset(out, 0, DP_CTR_COUNT * sizeof(*out));
	for_each_possible_cpu(cpu) {
		struct dp_ctrs *c = per_cpu_ptr(node->ctr, cpu);

		for (i = 0; i < DP_CTR_COUNT; i++)
			out[i] += READ_ONCE(c->c[i]);
	}
}

void dp_node_counters_reset(struct dp_node *node)
{
	int cpu, i;

	for_each_possible_cpu(cpu) {
		struct dp_ctrs *c = per_cpu_ptr(node->ctr, cpu);

		for (i = 0; i < DP_CTR_COUNT; i++)
			WRITE_ONCE(c->c[i], 0);
	}
}

int dp_node_set_nid(struct dp_node *node, u32 nid)
{
	if (nid == DP_NID_NONE)
		return -EINVAL;
	mutex_lock(&node->cfg_lock);
	WRITE_ONCE(node->nid, nid);
	mutex_unlock(&node->cfg_lock);
	dp_disc_kick(&node->disc);	/* the neighbours learn the new NID */
	return 0;
}

u32 dp_node_nid(struct dp_node *node)
{
	return READ_ONCE(node->nid);
}

struct dp_nart_tbl *dp_node_nart_rcu(struct dp_node *node)
{
	return rcu_dereference(node->nart);
}

/*
 * The largest message the node's NIC carries, kept in node->max_msg so
 * that dp_max_msg() takes no NIC reference: set whenever node->nic
 * changes, and when the NIC's MTU does.  A frame is still checked against
 * the NIC it goes out on (dp_tx_frame()).  With it, the largest bundle a
 * corked write fills (node->cork_max, 0 if the NIC counts no completions).
 */
static void dp_node_set_max_msg(struct dp_node *node, struct dp_nic *nic)
{
	lockdep_assert_held(&node->cfg_lock);
	WRITE_ONCE(node->max_msg, nic ? dp_nic_max_msg(nic) : DP_MAX_MSG);
	WRITE_ONCE(node->cork_max, nic && nic->ops->frame_get ?
		   dp_nic_bundle_max(nic) : 0);
}

/* The node's NIC if it is device @hw, else NULL.  Caller holds cfg_lock. */
static struct dp_nic *dp_node_nic_hw(struct dp_node *node, void *hw)
{
	struct dp_nic *nic;

	nic = rcu_dereference_protected(node->nic,
					lockdep_is_held(&node->cfg_lock));
	return nic && nic->hw == hw ? nic : NULL;
}

/* The MTU of device @hw changed: if it is the node's NIC, say so. */
void dp_node_mtu_changed(struct dp_node *node, void *hw)
{
	struct dp_nic *nic;

	mutex_lock(&node->cfg_lock);
	nic = dp_node_nic_hw(node, hw);
	if (nic)
		dp_node_set_max_msg(node, nic);
	mutex_unlock(&node->cfg_lock);
}

/*
 * Publish a freshly attached NIC in place of the node's current one, if
 * any: dp_node_attach() retires that one once the backend's attach has
 * returned, so the node is never without a NIC on the way.
 */
void dp_node_publish_nic(struct dp_node *node, struct dp_nic *nic)
{
	lockdep_assert_held(&node->cfg_lock);
	rcu_assign_pointer(node->nic, nic);
	dp_node_set_max_msg(node, nic);
	trace_dp_nic_attach(node, nic);
	dp_event_nic(node, DP_EV_NIC_ATTACH, nic);
	dp_disc_kick(&node->disc);
}

/*
 * @nic is no longer published: wait for senders that still hold it, then
 * let the backend stop receiving and free it.
 */
static void dp_node_retire_nic(struct dp_node *node, struct dp_nic *nic)
{
	lockdep_assert_held(&node->cfg_lock);
	trace_dp_nic_detach(node, nic);
	dp_event_nic(node, DP_EV_NIC_DETACH, nic);
	synchronize_rcu();
	dp_nic_put(nic);
	wait_for_completion(&nic->idle);
	nic->ops->detach(nic);
}

/* Unpublish the NIC, if any, and retire it. */
static void dp_node_detach_locked(struct dp_node *node)
{
	struct dp_nic *nic;

	lockdep_assert_held(&node->cfg_lock);
	nic = rcu_dereference_protected(node->nic,
					lockdep_is_held(&node->cfg_lock));
	if (!nic)
		return;
	RCU_INIT_POINTER(node->nic, NULL);
	dp_node_set_max_msg(node, NULL);
	dp_node_retire_nic(node, nic);
}

void dp_node_detach(struct dp_node *node)
{
	mutex_lock(&node->cfg_lock);
	dp_node_detach_locked(node);
	mutex_unlock(&node->cfg_lock);
}

/* The device @hw is going away (a backend saw it unregistered or removed). */
void dp_node_detach_hw(struct dp_node *node, void *hw)
{
	struct dp_nic *nic;

	mutex_lock(&node->cfg_lock);
	nic = dp_node_nic_hw(node, hw);
	if (nic) {
		pr_info("dp: node %u: %s went away, detached\n",
			node->nid, nic->ifname);
		dp_node_detach_locked(node);
	}
	mutex_unlock(&node->cfg_lock);
}

/* The backend an attach without one uses; "" for the registry's first. */
int dp_node_set_backend(struct dp_node *node, const char *backend)
{
	int err = 0;

	dp_backends_lock();
	if (!dp_backend_find(backend))
		err = -EOPNOTSUPP;
	dp_backends_unlock();
	if (err)
		return err;
	mutex_lock(&node->cfg_lock);
	strscpy(node->backend, backend ? backend : "", sizeof(node->backend));
	mutex_unlock(&node->cfg_lock);
	return 0;
}

static void dp_node_default_backend(struct dp_node *node, char *name)
{
	mutex_lock(&node->cfg_lock);
	strscpy(name, node->backend, DP_BACKEND_NAMSIZ);
	mutex_unlock(&node->cfg_lock);
}

/* Test knob (debugfs dp/attach_fail): fail the next n attaches, ENOMEM. */
u32 dp_attach_fail;

/*
 * Take device @ifname of @be for @node, replacing its current NIC only
 * once the new one is attached: a failed attach leaves the node as it was.
 * The device already attached is attached anew (detached first: a device
 * serves one node once).  Caller holds node->cfg_lock and the registry.
 */
static int dp_node_attach_locked(struct dp_node *node,
				 const struct dp_backend *be, const char *ifname)
{
	struct dp_nic *old, *now;
	u32 fail;
	int err;

	lockdep_assert_held(&node->cfg_lock);
	old = rcu_dereference_protected(node->nic,
					lockdep_is_held(&node->cfg_lock));
	if (old && old->ops == be && !strcmp(old->ifname, ifname)) {
		dp_node_detach_locked(node);
		old = NULL;
	}
	fail = READ_ONCE(dp_attach_fail);
	if (fail) {
		WRITE_ONCE(dp_attach_fail, fail - 1);
		return -ENOMEM;
	}
	err = be->attach(node, ifname);
	now = rcu_dereference_protected(node->nic,
					lockdep_is_held(&node->cfg_lock));
	if (!err && old && now != old)
		dp_node_retire_nic(node, old);
	return err;
}

/*
 * Attach device @ifname of @backend (NULL or "": the node's default),
 * replacing the current NIC only if the new device is usable.  @admin:
 * the caller has CAP_NET_ADMIN in the initial user namespace, which a
 * machine-wide backend needs.  Called with rtnl held so a device cannot be
 * unregistered between lookup and publication.
 */
int dp_node_attach(struct dp_node *node, const char *backend,
		   const char *ifname, bool admin)
{
	const struct dp_backend *be;
	char name[DP_BACKEND_NAMSIZ];
	int err;

	ASSERT_RTNL();
	if (!backend || !*backend) {
		dp_node_default_backend(node, name);
		backend = name;
	}
	dp_backends_lock();
	be = dp_backend_find(backend);
	if (!be)
		err = -EOPNOTSUPP;
	else if (be->machine_wide && !admin)
		err = -EPERM;
	else
		err = be->check(node, ifname);
	if (!err) {
		mutex_lock(&node->cfg_lock);
		err = dp_node_attach_locked(node, be, ifname);
		mutex_unlock(&node->cfg_lock);
	}
	dp_backends_unlock();
	return err;
}

/* Publish @new for @old; caller holds cfg_lock, frees @old after us. */
static void dp_nart_publish(struct dp_node *node, struct dp_nart_tbl *old,
			    struct dp_nart_tbl *new)
{
	lockdep_assert_held(&node->cfg_lock);
	new->gen = ++node->nart_gen;
	rcu_assign_pointer(node->nart, new);
	if (old) {
		synchronize_rcu();
		kvfree(old);
	}
}

/*
 * NART update by copy-on-write: readers on the receive and send paths see
 * either the old or the new table, never a half-written one.
 */
int dp_nart_update(struct dp_node *node, const struct dp_nart_entry *set,
		   u32 del_nid, bool flush)
{
	struct dp_nart_tbl *old, *new;
	u32 cap;
	int err = 0;

	mutex_lock(&node->cfg_lock);
	old = rcu_dereference_protected(node->nart,
					lockdep_is_held(&node->cfg_lock));
	cap = dp_nart_need(old, set, flush);
	if (cap > DP_NART_MAX) {
		err = -ENOSPC;
		goto out;
	}
	new = kvzalloc(dp_nart_tbl_bytes(cap), GFP_KERNEL_ACCOUNT);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	new->cap = cap;
	if (!flush)
		dp_nart_copy(new, old);
	if (set)
		err = dp_nart_set(new, set);
	else if (del_nid)
		err = dp_nart_del(new, del_nid);
	if (err) {
		kvfree(new);
		goto out;
	}
	dp_nart_publish(node, old, new);
out:
	mutex_unlock(&node->cfg_lock);
	return err;
}

static void dp_nart_gone(const struct dp_nart_entry *e, void *arg)
{
	dp_event_nart(arg, NULL, e->nid);
}

/*
 * Neighbour discovery's update (dp_disc.h), by copy-on-write as above;
 * nothing is published when nothing changed.
 */
int dp_nart_discover(struct dp_node *node, const struct dp_nart_entry *add,
		     u32 n, unsigned long now, bool all)
{
	struct dp_nart_tbl *old, *new;
	u32 i, changed;
	int err = 0;

	mutex_lock(&node->cfg_lock);
	old = rcu_dereference_protected(node->nart,
					lockdep_is_held(&node->cfg_lock));
	new = kvzalloc(dp_nart_tbl_bytes(min_t(u32, (old ? old->n : 0) + n,
					       DP_NART_MAX)),
		       GFP_KERNEL_ACCOUNT);
	if (!new) {
		err = -ENOMEM;
		goto out;
	}
	new->cap = min_t(u32, (old ? old->n : 0) + n, DP_NART_MAX);
	dp_nart_copy(new, old);
	changed = dp_nart_expire(new, now, all, dp_nart_gone, node);
	for (i = 0; i < n; i++) {
		if (dp_nart_learn(new, &add[i]))
			continue;	/* known meanwhile, or no room */
		dp_event_nart(node, &add[i], 0);
		changed++;
	}
	if (changed)
		dp_nart_publish(node, old, new);
	else
		kvfree(new);
out:
	mutex_unlock(&node->cfg_lock);
	return err;
}

static __net_init int dp_net_init(struct net *net)
{
	struct dp_node *node = dp_node_of(net);

	node->net = net;
	node->max_msg = DP_MAX_MSG;	/* no NIC yet */
	mutex_init(&node->cfg_lock);
	dp_disc_init(&node->disc, node);
	xa_init(&node->cat);
	node->ctr = alloc_percpu(struct dp_ctrs);
	if (!node->ctr)
		return -ENOMEM;
	return 0;
}

/*
 * Open endpoints hold a reference on their namespace, so none is left
 * here; only the NIC and the NART remain to be torn down.
 */
static __net_exit void dp_net_exit(struct net *net)
{
	struct dp_node *node = dp_node_of(net);

	dp_disc_stop(&node->disc);	/* no announce or learning left */
	dp_node_detach(node);
	kvfree(rcu_dereference_protected(node->nart, true));
	WARN_ON_ONCE(!xa_empty(&node->cat));
	xa_destroy(&node->cat);
	free_percpu(node->ctr);
}

static struct pernet_operations dp_net_ops = {
	.init = dp_net_init,
	.exit = dp_net_exit,
	.id = &dp_net_id,
	.size = sizeof(struct dp_node),
};

int dp_pernet_init(void)
{
	return register_pernet_subsys(&dp_net_ops);
}

void dp_pernet_exit(void)
{
	unregister_pernet_subsys(&dp_net_ops);
}
