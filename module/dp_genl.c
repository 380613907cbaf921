// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "dp": node administration for dpctl.  Chosen over
 * sysfs and debugfs because it is namespace-aware (each namespace is a
 * node), carries structured dumps, and checks CAP_NET_ADMIN in the
 * namespace's user namespace for us (GENL_UNS_ADMIN_PERM).
 */
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "dp.h"

static struct genl_family dp_genl_family;

static const struct nla_policy dp_genl_policy[DP_A_MAX + 1] = {
	[DP_A_NID] = { .type = NLA_U32 },
	[DP_A_BACKEND] = { .type = NLA_STRING, .len = 15 },
	[DP_A_IFNAME] = { .type = NLA_STRING, .len = IFNAMSIZ - 1 },
	[DP_A_LLADDR] = { .type = NLA_BINARY, .len = DP_LLADDR_MAX },
	[DP_A_DPID] = { .type = NLA_U32 },
};

static struct dp_node *dp_genl_node(struct genl_info *info)
{
	return dp_node_of(genl_info_net(info));
}

static int dp_genl_put_counters(struct sk_buff *skb, struct dp_node *node)
{
	u64 ctr[DP_CTR_COUNT];
	struct nlattr *nest;
	int i;

	dp_node_counters(node, ctr);
	nest = nla_nest_start(skb, DP_A_COUNTERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < DP_CTR_COUNT; i++)
		if (nla_put_u64_64bit(skb, i + 1, ctr[i], DP_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int dp_genl_put_nic(struct sk_buff *skb, struct dp_node *node)
{
	struct dp_nic *nic = dp_nic_get(node);
	u8 addr[DP_LLADDR_MAX];
	unsigned int alen;
	int err = 0;

	if (!nic)
		return 0;
	alen = nic->ops->lladdr(nic, addr);
	if (nla_put_string(skb, DP_A_BACKEND, nic->ops->name) ||
	    nla_put_string(skb, DP_A_IFNAME, nic->ifname) ||
	    nla_put_u32(skb, DP_A_MTU, dp_nic_max_msg(nic)) ||
	    nla_put(skb, DP_A_LLADDR, alen, addr))
		err = -EMSGSIZE;
	dp_nic_put(nic);
	return err;
}

static int dp_genl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct dp_node *node = dp_genl_node(info);
	struct sk_buff *msg;
	void *hdr;

	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dp_genl_family, 0, DP_CMD_NODE_GET);
	if (!hdr)
		goto nospace;
	if (nla_put_u32(msg, DP_A_NID, READ_ONCE(node->nid)) ||
	    dp_genl_put_nic(msg, node) || dp_genl_put_counters(msg, node))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int dp_genl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct dp_node *node = dp_genl_node(info);
	char ifname[IFNAMSIZ], backend[16] = "netdev";
	int err = 0;

	if (info->attrs[DP_A_NID]) {
		err = dp_node_set_nid(node, nla_get_u32(info->attrs[DP_A_NID]));
		if (err)
			return err;
	}
	if (!info->attrs[DP_A_IFNAME])
		return 0;
	nla_strscpy(ifname, info->attrs[DP_A_IFNAME], sizeof(ifname));
	if (info->attrs[DP_A_BACKEND])
		nla_strscpy(backend, info->attrs[DP_A_BACKEND], sizeof(backend));
	/*
	 * GENL_UNS_ADMIN_PERM was checked in the namespace's user namespace,
	 * which an unprivileged user may own; a PCI device belongs to the
	 * whole machine, so taking one needs CAP_NET_ADMIN in the initial one.
	 */
	if (dp_backend_machine_wide(backend) &&
	    !netlink_capable(skb, CAP_NET_ADMIN))
		return -EPERM;
	rtnl_lock();
	err = dp_node_attach(node, backend, ifname);
	rtnl_unlock();
	return err;
}

static int dp_genl_node_detach(struct sk_buff *skb, struct genl_info *info)
{
	dp_node_detach(dp_genl_node(info));
	return 0;
}

static int dp_genl_nart_set(struct sk_buff *skb, struct genl_info *info)
{
	struct dp_nart_entry e = {};
	struct nlattr *a = info->attrs[DP_A_LLADDR];

	if (!info->attrs[DP_A_NID] || !a || !nla_len(a))
		return -EINVAL;
	e.nid = nla_get_u32(info->attrs[DP_A_NID]);
	e.alen = nla_len(a);
	memcpy(e.addr, nla_data(a), e.alen);
	return dp_nart_update(dp_genl_node(info), &e, 0, false);
}

static int dp_genl_nart_del(struct sk_buff *skb, struct genl_info *info)
{
	u32 nid;

	if (!info->attrs[DP_A_NID])
		return -EINVAL;
	nid = nla_get_u32(info->attrs[DP_A_NID]);
	if (!nid)
		return -EINVAL;
	return dp_nart_update(dp_genl_node(info), NULL, nid, false);
}

static int dp_genl_nart_flush(struct sk_buff *skb, struct genl_info *info)
{
	return dp_nart_update(dp_genl_node(info), NULL, 0, true);
}

static int dp_genl_counters_reset(struct sk_buff *skb, struct genl_info *info)
{
	dp_node_counters_reset(dp_genl_node(info));
	return 0;
}

static struct dp_node *dp_genl_dump_node(struct netlink_callback *cb)
{
	return dp_node_of(sock_net(cb->skb->sk));
}

static void *dp_genl_dump_hdr(struct sk_buff *skb, struct netlink_callback *cb,
			      u8 cmd)
{
	return genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			   &dp_genl_family, NLM_F_MULTI, cmd);
}

static int dp_genl_nart_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dp_node *node = dp_genl_dump_node(cb);
	const struct dp_nart_tbl *t;
	u32 i;

	rcu_read_lock();
	t = rcu_dereference(node->nart);
	for (i = cb->args[0]; t && i < t->n; i++) {
		void *hdr = dp_genl_dump_hdr(skb, cb, DP_CMD_NART_GET);

		if (!hdr)
			break;
		if (nla_put_u32(skb, DP_A_NID, t->e[i].nid) ||
		    nla_put(skb, DP_A_LLADDR, t->e[i].alen, t->e[i].addr)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	rcu_read_unlock();
	cb->args[0] = i;
	return skb->len;
}

static int dp_genl_put_edges(struct sk_buff *skb, struct dp_endpoint *ep)
{
	struct nlattr *edges, *one;
	struct dp_edge *e;
	int bkt;

	edges = nla_nest_start(skb, DP_A_EP_EDGES);
	if (!edges)
		return -EMSGSIZE;
	hash_for_each_rcu(ep->edges, bkt, e, hnode) {
		one = nla_nest_start(skb, DP_A_EDGE);
		if (!one || nla_put_u32(skb, DP_A_NID, e->to.nid) ||
		    nla_put_u32(skb, DP_A_DPID, e->to.dpid) ||
		    nla_put_u32(skb, DP_A_EDGE_TX_SEQ, atomic_read(&e->tx_seq)))
			return -EMSGSIZE;
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, edges);
	return 0;
}

static int dp_genl_put_ep_stats(struct sk_buff *skb, struct dp_endpoint *ep)
{
	const u64 v[] = {
		atomic64_read(&ep->tx_msgs), atomic64_read(&ep->tx_bytes),
		READ_ONCE(ep->pool.rx_msgs), READ_ONCE(ep->pool.rx_bytes),
		READ_ONCE(ep->pool.rx_drop_full), atomic64_read(&ep->rx_drop_admit),
	};
	struct nlattr *nest = nla_nest_start(skb, DP_A_EP_STATS);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (nla_put_u64_64bit(skb, i + 1, v[i], DP_A_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* One endpoint; caller holds RCU so ep cannot be freed meanwhile. */
static int dp_genl_put_ep(struct sk_buff *skb, struct netlink_callback *cb,
			  struct dp_endpoint *ep)
{
	void *hdr = dp_genl_dump_hdr(skb, cb, DP_CMD_EP_GET);
	/* The owner as the dumping process's user namespace sees it. */
	struct user_namespace *ns = sk_user_ns(NETLINK_CB(cb->skb).sk);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, DP_A_DPID, ep->dpid) ||
	    nla_put_u32(skb, DP_A_EP_UID, from_kuid_munged(ns, ep->uid)) ||
	    nla_put_u32(skb, DP_A_EP_ADMIT, ep->admit) ||
	    nla_put_u32(skb, DP_A_EP_POOL_SIZE, ep->pool.ring.size) ||
	    nla_put_u32(skb, DP_A_EP_QUEUED, dp_pool_queued(&ep->pool)) ||
	    dp_genl_put_ep_stats(skb, ep) || dp_genl_put_edges(skb, ep)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int dp_genl_ep_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dp_node *node = dp_genl_dump_node(cb);
	unsigned long idx = cb->args[0];
	struct dp_endpoint *ep;

	rcu_read_lock();
	xa_for_each_start(&node->cat, idx, ep, idx) {
		if (dp_genl_put_ep(skb, cb, ep))
			break;
	}
	rcu_read_unlock();
	/* Past every u32 DPID once the walk is complete. */
	cb->args[0] = ep ? idx : (unsigned long)U32_MAX + 1;
	return skb->len;
}

static const struct genl_small_ops dp_genl_ops[] = {
	{ .cmd = DP_CMD_NODE_GET, .doit = dp_genl_node_get },
	{ .cmd = DP_CMD_NODE_SET, .doit = dp_genl_node_set,
	  .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = DP_CMD_NODE_DETACH, .doit = dp_genl_node_detach,
	  .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = DP_CMD_NART_GET, .dumpit = dp_genl_nart_dump },
	{ .cmd = DP_CMD_NART_SET, .doit = dp_genl_nart_set,
	  .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = DP_CMD_NART_DEL, .doit = dp_genl_nart_del,
	  .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = DP_CMD_NART_FLUSH, .doit = dp_genl_nart_flush,
	  .flags = GENL_UNS_ADMIN_PERM },
	{ .cmd = DP_CMD_EP_GET, .dumpit = dp_genl_ep_dump },
	{ .cmd = DP_CMD_COUNTERS_RESET, .doit = dp_genl_counters_reset,
	  .flags = GENL_UNS_ADMIN_PERM },
};

static struct genl_family dp_genl_family __ro_after_init = {
	.name = DP_GENL_NAME,
	.version = DP_GENL_VERSION,
	.maxattr = DP_A_MAX,
	.policy = dp_genl_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.small_ops = dp_genl_ops,
	.n_small_ops = ARRAY_SIZE(dp_genl_ops),
	.resv_start_op = __DP_CMD_MAX,
};

int dp_genl_init(void)
{
	return genl_register_family(&dp_genl_family);
}

void dp_genl_exit(void)
{
	genl_unregister_family(&dp_genl_family);
}
