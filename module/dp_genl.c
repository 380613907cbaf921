// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "dp": node administration for dpctl.  Chosen over
 * sysfs and debugfs because it is namespace-aware (each namespace is a
 * node), carries structured dumps, and checks CAP_NET_ADMIN in the
 * namespace's user namespace for us (GENL_UNS_ADMIN_PERM).
 */
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "dp.h"

static struct genl_family dp_genl_family;

static const struct nla_policy dp_genl_policy[DP_A_MAX + 1] = {
	[DP_A_NID] = { .type = NLA_U32 },
	[DP_A_BACKEND] = { .type = NLA_STRING, .len = 15 },
	[DP_A_IFNAME] = { .type = NLA_STRING, .len = IFNAMSIZ - 1 },
	[DP_A_LLADDR] = { .type = NLA_BINARY, .len = DP_LLADDR_MAX },
	[DP_A_ROUTE] = { .type = NLA_BINARY, .len = DP_ROUTE_MAX },
	[DP_A_DPID] = { .type = NLA_U32 },
	[DP_A_DISC_INTERVAL_MS] = { .type = NLA_U32 },
	[DP_A_SCOUTS] = { .type = NLA_NESTED },
	[DP_A_SCOUT] = { .type = NLA_NESTED },
	[DP_A_SCOUT_RET] = { .type = NLA_BINARY, .len = DP_ROUTE_MAX },
	[DP_A_SCOUT_MS] = { .type = NLA_U32 },
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
	/*
	 * Attribute i + 1 is counter i, so the pad (where u64s need one) is
	 * type 0, which no counter is; DP_A_PAD (15) would be counter 14's.
	 */
	for (i = 0; i < DP_CTR_COUNT; i++)
		if (nla_put_u64_64bit(skb, i + 1, ctr[i], DP_A_UNSPEC))
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
	    dp_genl_put_nic(msg, node) || dp_genl_put_counters(msg, node) ||
	    nla_put_u32(msg, DP_A_DISC_INTERVAL_MS, dp_disc_interval(&node->disc)))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* DP_A_DISC_INTERVAL_MS: 0 or within the announce interval's bounds. */
static int dp_genl_disc_ms(struct genl_info *info, u32 *ms)
{
	struct nlattr *a = info->attrs[DP_A_DISC_INTERVAL_MS];

	if (!a)
		return 0;
	*ms = nla_get_u32(a);
	if (*ms && (*ms < DP_DISC_INTERVAL_MIN_MS ||
		    *ms > DP_DISC_INTERVAL_MAX_MS)) {
		GENL_SET_ERR_MSG(info, "discovery interval out of range");
		return -EINVAL;
	}
	return 0;
}

/* The NID, then discovery, once any attachment asked for succeeded. */
static int dp_genl_node_set_rest(struct dp_node *node, struct genl_info *info,
				 u32 nid, u32 disc_ms)
{
	int err = 0;

	if (nid)
		err = dp_node_set_nid(node, nid);
	if (!err && info->attrs[DP_A_DISC_INTERVAL_MS])
		err = dp_disc_set(&node->disc, disc_ms);
	return err;
}

/*
 * Everything is checked before anything changes, so a refused request
 * (bad NID or interval, no permission for the backend, no such device)
 * leaves the node as it was: the NID and discovery are set only once the
 * attachment, if asked for, has succeeded.
 */
static int dp_genl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct dp_node *node = dp_genl_node(info);
	char ifname[IFNAMSIZ], backend[DP_BACKEND_NAMSIZ] = "";
	u32 nid = DP_NID_NONE, disc_ms = 0;
	int err;

	if (info->attrs[DP_A_NID]) {
		nid = nla_get_u32(info->attrs[DP_A_NID]);
		if (nid == DP_NID_NONE)
			return -EINVAL;
	}
	err = dp_genl_disc_ms(info, &disc_ms);
	if (err)
		return err;
	if (info->attrs[DP_A_IFNAME]) {
		nla_strscpy(ifname, info->attrs[DP_A_IFNAME], sizeof(ifname));
		if (info->attrs[DP_A_BACKEND])
			nla_strscpy(backend, info->attrs[DP_A_BACKEND],
				    sizeof(backend));
		/*
		 * GENL_UNS_ADMIN_PERM was checked in the namespace's user
		 * namespace, which an unprivileged user may own; a machine-wide
		 * backend's device needs CAP_NET_ADMIN in the initial one.
		 */
		rtnl_lock();
		err = dp_node_attach(node, backend, ifname,
				     netlink_capable(skb, CAP_NET_ADMIN));
		rtnl_unlock();
		if (err)
			return err;
	}
	return dp_genl_node_set_rest(node, info, nid, disc_ms);
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
	struct nlattr *r = info->attrs[DP_A_ROUTE];
	int err;

	if (!info->attrs[DP_A_NID] || !a || !nla_len(a))
		return -EINVAL;
	e.nid = nla_get_u32(info->attrs[DP_A_NID]);
	e.alen = nla_len(a);
	memcpy(e.addr, nla_data(a), e.alen);
	if (r) {
		e.rlen = nla_len(r);
		memcpy(e.route, nla_data(r), e.rlen);
	}
	err = dp_nart_update(dp_genl_node(info), &e, 0, false);
	if (!err)
		dp_event_nart(dp_genl_node(info), &e, 0);
	return err;
}

static int dp_genl_nart_del(struct sk_buff *skb, struct genl_info *info)
{
	u32 nid;
	int err;

	if (!info->attrs[DP_A_NID])
		return -EINVAL;
	nid = nla_get_u32(info->attrs[DP_A_NID]);
	if (!nid)
		return -EINVAL;
	err = dp_nart_update(dp_genl_node(info), NULL, nid, false);
	if (!err)
		dp_event_nart(dp_genl_node(info), NULL, nid);
	return err;
}

static int dp_genl_nart_flush(struct sk_buff *skb, struct genl_info *info)
{
	int err = dp_nart_update(dp_genl_node(info), NULL, 0, true);

	if (!err)
		dp_event_nart(dp_genl_node(info), NULL, 0);
	return err;
}

static int dp_genl_counters_reset(struct sk_buff *skb, struct genl_info *info)
{
	dp_node_counters_reset(dp_genl_node(info));
	return 0;
}

/* ---- DP_CMD_SCOUT: the probes of a fabric mapper (dpctl myri map) ---- */

/* One DP_A_SCOUT of a request: a route (1..16 bytes), a return route. */
static int dp_scout_parse(const struct nlattr *a, struct dp_scout *sc,
			  struct netlink_ext_ack *extack)
{
	struct nlattr *tb[DP_A_MAX + 1];
	int err;

	err = nla_parse_nested_deprecated(tb, DP_A_MAX, a, dp_genl_policy,
					  extack);
	if (err)
		return err;
	if (!tb[DP_A_ROUTE] || !nla_len(tb[DP_A_ROUTE])) {
		NL_SET_ERR_MSG_ATTR(extack, a, "a scout needs a route");
		return -EINVAL;
	}
	sc->rlen = nla_len(tb[DP_A_ROUTE]);
	memcpy(sc->route, nla_data(tb[DP_A_ROUTE]), sc->rlen);
	if (tb[DP_A_SCOUT_RET]) {
		sc->blen = nla_len(tb[DP_A_SCOUT_RET]);
		memcpy(sc->back, nla_data(tb[DP_A_SCOUT_RET]), sc->blen);
	}
	return 0;
}

/* The request's probes into @sc (DP_SCOUT_MAX); their number or -errno. */
static int dp_scouts_parse(struct genl_info *info, struct dp_scout *sc)
{
	const struct nlattr *list = info->attrs[DP_A_SCOUTS], *a;
	int n = 0, rem, err;

	if (!list) {
		GENL_SET_ERR_MSG(info, "no scouts");
		return -EINVAL;
	}
	nla_for_each_nested(a, list, rem) {
		if (nla_type(a) != DP_A_SCOUT)
			continue;
		if (n == DP_SCOUT_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "too many scouts");
			return -E2BIG;
		}
		err = dp_scout_parse(a, &sc[n++], info->extack);
		if (err)
			return err;
	}
	if (!n)
		GENL_SET_ERR_MSG(info, "no scouts");
	return n ? n : -EINVAL;
}

static int dp_scout_put(struct sk_buff *msg, const struct dp_scout *sc,
			unsigned int n)
{
	struct nlattr *list, *one;
	unsigned int i;

	list = nla_nest_start(msg, DP_A_SCOUTS);
	if (!list)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		if (!sc[i].answered)
			continue;
		one = nla_nest_start(msg, DP_A_SCOUT);
		if (!one || nla_put_u32(msg, DP_A_SCOUT_IDX, i) ||
		    nla_put(msg, DP_A_LLADDR, sc[i].alen, sc[i].addr) ||
		    nla_put_u32(msg, DP_A_NID, sc[i].nid))
			return -EMSGSIZE;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, list);
	return 0;
}

/* Send the probes through the node's NIC, reply with what answered. */
static int dp_scout_run(struct genl_info *info, struct dp_nic *nic,
			struct dp_scout *sc, unsigned int ms)
{
	struct sk_buff *msg;
	void *hdr;
	int n, err;

	n = dp_scouts_parse(info, sc);
	if (n < 0)
		return n;
	err = nic->ops->scout(nic, sc, n, ms);
	if (err)
		return err;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &dp_genl_family, 0, DP_CMD_SCOUT);
	if (!hdr || dp_scout_put(msg, sc, n)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * GENL_ADMIN_PERM: the fabric is the machine's, so CAP_NET_ADMIN in the
 * initial user namespace.  No NIC: ENODEV; one that cannot scout (not a
 * source-routed fabric): EOPNOTSUPP.
 */
static int dp_genl_scout(struct sk_buff *skb, struct genl_info *info)
{
	unsigned int ms = DP_SCOUT_MS_DEFAULT;
	struct dp_scout *sc;
	struct dp_nic *nic;
	int err;

	if (info->attrs[DP_A_SCOUT_MS]) {
		ms = nla_get_u32(info->attrs[DP_A_SCOUT_MS]);
		if (!ms || ms > DP_SCOUT_MS_MAX) {
			GENL_SET_ERR_MSG(info, "scout wait out of range");
			return -ERANGE;
		}
	}
	nic = dp_nic_get(dp_genl_node(info));
	if (!nic) {
		GENL_SET_ERR_MSG(info, "no NIC attached");
		return -ENODEV;
	}
	if (!nic->ops->scout) {
		GENL_SET_ERR_MSG(info, "the NIC's backend cannot scout");
		err = -EOPNOTSUPP;
		goto out;
	}
	sc = kcalloc(DP_SCOUT_MAX, sizeof(*sc), GFP_KERNEL);
	err = sc ? dp_scout_run(info, nic, sc, ms) : -ENOMEM;
	kfree(sc);
out:
	dp_nic_put(nic);
	return err;
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

/* One NART entry; a discovered one also says when it was last heard. */
static int dp_genl_put_nart(struct sk_buff *skb, const struct dp_nart_entry *e)
{
	unsigned long heard = jiffies - READ_ONCE(e->heard);

	if (nla_put_u32(skb, DP_A_NID, e->nid) ||
	    nla_put(skb, DP_A_LLADDR, e->alen, e->addr) ||
	    (e->rlen && nla_put(skb, DP_A_ROUTE, e->rlen, e->route)) ||
	    nla_put_u32(skb, DP_A_NART_ORIGIN, e->origin))
		return -EMSGSIZE;
	if (e->origin == DP_NART_DISCOVERED &&
	    nla_put_u32(skb, DP_A_NART_HEARD_MS, jiffies_to_msecs(heard)))
		return -EMSGSIZE;
	return 0;
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
		if (dp_genl_put_nart(skb, &t->e[i])) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	rcu_read_unlock();
	cb->args[0] = i;
	return skb->len;
}

/*
 * Where an endpoint dump stands.  An endpoint with many edges and rx peers
 * may not fit one message: its items (edges in hash order, then rx peers)
 * continue in the next message, marked DP_A_EP_CONT.  @skip: items sent
 * in earlier messages; @pos: items passed so far in this one's walk.
 */
struct dp_genl_pos {
	unsigned long skip;
	unsigned long pos;
};

/* The session of a reliable edge, snapshot under its lock. */
static int dp_genl_put_session(struct sk_buff *skb, struct dp_edge *e)
{
	struct dp_snd_info si;

	dp_snd_info(&e->snd, &si);
	if (nla_put_u32(skb, DP_A_EDGE_STATE, si.state) ||
	    (si.err && nla_put_u32(skb, DP_A_EDGE_ERR, si.err)) ||
	    nla_put_u32(skb, DP_A_EDGE_ISN, si.isn) ||
	    nla_put_u32(skb, DP_A_EDGE_SND_UNA, si.snd_una) ||
	    nla_put_u32(skb, DP_A_EDGE_SND_NXT, si.snd_nxt) ||
	    nla_put_u32(skb, DP_A_EDGE_UNACKED, si.snd_nxt - si.snd_una) ||
	    nla_put_s32(skb, DP_A_EDGE_CREDIT, si.credit_left) ||
	    nla_put_u32(skb, DP_A_EDGE_CWND, si.cwnd) ||
	    nla_put_u32(skb, DP_A_EDGE_RTO_MS, si.rto_ms) ||
	    nla_put_u32(skb, DP_A_EDGE_BACKOFF, si.backoff) ||
	    nla_put_u32(skb, DP_A_EDGE_TIMEOUTS, si.timeouts) ||
	    nla_put_u32(skb, DP_A_EDGE_UNDONE, si.undone))
		return -EMSGSIZE;
	/* last_heard means nothing before the first session */
	if (si.state != DP_SND_IDLE &&
	    nla_put_u32(skb, DP_A_EDGE_HEARD_MS, si.heard_ms))
		return -EMSGSIZE;
	return 0;
}

static int dp_genl_put_edge(struct sk_buff *skb, struct dp_endpoint *ep,
			    struct dp_edge *e)
{
	struct nlattr *one = nla_nest_start(skb, DP_A_EDGE);

	if (!one)
		return -EMSGSIZE;
	if (nla_put_u32(skb, DP_A_NID, e->to.nid) ||
	    nla_put_u32(skb, DP_A_DPID, e->to.dpid) ||
	    nla_put_u32(skb, DP_A_EDGE_TX_SEQ, atomic_read(&e->tx_seq)) ||
	    (!ep->raw && dp_genl_put_session(skb, e))) {
		nla_nest_cancel(skb, one);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, one);
	return 0;
}

/*
 * Edges under RCU: one removed meanwhile is still readable (it is freed
 * after a grace period) and is shown as it was.
 */
static int dp_genl_put_edges(struct sk_buff *skb, struct dp_endpoint *ep,
			     struct dp_genl_pos *p)
{
	struct nlattr *edges;
	struct dp_edge *e;
	int bkt, err = 0;

	edges = nla_nest_start(skb, DP_A_EP_EDGES);
	if (!edges)
		return -EMSGSIZE;
	hash_for_each_rcu(ep->edges, bkt, e, hnode) {
		if (p->pos < p->skip) {
			p->pos++;
			continue;
		}
		err = dp_genl_put_edge(skb, ep, e);
		if (err)
			break;
		p->pos++;
	}
	nla_nest_end(skb, edges);
	return err;
}

/* Where a walk of the rx peers puts them. */
struct dp_genl_rx {
	struct sk_buff *skb;
	struct dp_genl_pos *p;
};

static int dp_genl_put_rx_peer(const struct dp_rcv_info *ri, void *arg)
{
	struct dp_genl_rx *a = arg;
	struct sk_buff *skb = a->skb;
	struct nlattr *one;

	if (a->p->pos < a->p->skip) {
		a->p->pos++;
		return 0;
	}
	one = nla_nest_start(skb, DP_A_RX_PEER);
	if (!one)
		return -EMSGSIZE;
	if (nla_put_u32(skb, DP_A_NID, ri->from.nid) ||
	    nla_put_u32(skb, DP_A_DPID, ri->from.dpid) ||
	    nla_put_u32(skb, DP_A_RX_PEER_ISN, ri->isn) ||
	    nla_put_u32(skb, DP_A_RX_PEER_RCV_NXT, ri->rcv_nxt) ||
	    nla_put_u32(skb, DP_A_RX_PEER_HELD, ri->held) ||
	    nla_put_s32(skb, DP_A_RX_PEER_CREDIT, ri->credit_left)) {
		nla_nest_cancel(skb, one);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, one);
	a->p->pos++;
	return 0;
}

/* The senders with a session here; RCU as for the edges. */
static int dp_genl_put_rx_peers(struct sk_buff *skb, struct dp_endpoint *ep,
				struct dp_genl_pos *p)
{
	struct dp_genl_rx a = { .skb = skb, .p = p };
	struct nlattr *peers;
	int err;

	peers = nla_nest_start(skb, DP_A_EP_RX_PEERS);
	if (!peers)
		return -EMSGSIZE;
	err = dp_rcv_walk(&ep->rcv, dp_genl_put_rx_peer, &a);
	nla_nest_end(skb, peers);
	return err;
}

/* DP_A_EP_STATS attribute i + 1 is field i: append only (uapi/linux/dp.h). */
static const size_t dp_genl_ep_stat[] = {
	offsetof(struct dp_ep_stats, tx_msgs),
	offsetof(struct dp_ep_stats, tx_bytes),
	offsetof(struct dp_ep_stats, rx_msgs),
	offsetof(struct dp_ep_stats, rx_bytes),
	offsetof(struct dp_ep_stats, rx_drop_full),
	offsetof(struct dp_ep_stats, rx_drop_admit),
	offsetof(struct dp_ep_stats, tx_unacked),
	offsetof(struct dp_ep_stats, tx_undelivered),
	offsetof(struct dp_ep_stats, tx_retrans),
	offsetof(struct dp_ep_stats, tx_blocked),
	offsetof(struct dp_ep_stats, rx_dup),
	offsetof(struct dp_ep_stats, queued),
	offsetof(struct dp_ep_stats, wait_poll),
	offsetof(struct dp_ep_stats, wait_poll_hit),
	offsetof(struct dp_ep_stats, wait_sleep),
};

/* The same numbers DP_IOC_STATS gives the endpoint's owner. */
static int dp_genl_put_ep_stats(struct sk_buff *skb, struct dp_endpoint *ep)
{
	struct dp_ep_stats st;
	struct nlattr *nest;
	u64 v;
	int i;

	dp_ep_stats(ep, &st);
	nest = nla_nest_start(skb, DP_A_EP_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(dp_genl_ep_stat); i++) {
		memcpy(&v, (const u8 *)&st + dp_genl_ep_stat[i], sizeof(v));
		if (nla_put_u64_64bit(skb, i + 1, v, DP_A_UNSPEC))	/* as above */
			return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The endpoint's own attributes; a continuation has only its DPID. */
static int dp_genl_put_ep_head(struct sk_buff *skb, struct netlink_callback *cb,
			       struct dp_endpoint *ep, bool cont)
{
	/* The owner as the dumping process's user namespace sees it. */
	struct user_namespace *ns = sk_user_ns(NETLINK_CB(cb->skb).sk);
	u32 taken, open;

	if (nla_put_u32(skb, DP_A_DPID, ep->dpid))
		return -EMSGSIZE;
	if (cont)
		return nla_put_flag(skb, DP_A_EP_CONT);
	dp_pool_usage(&ep->pool, &taken, &open);
	if (nla_put_u32(skb, DP_A_EP_UID, from_kuid_munged(ns, ep->uid)) ||
	    nla_put_u32(skb, DP_A_EP_ADMIT, ep->admit) ||
	    nla_put_u32(skb, DP_A_EP_BIND_FLAGS, dp_ep_bind_flags(ep)) ||
	    nla_put_u32(skb, DP_A_EP_POOL_SIZE, ep->pool.ring.size) ||
	    nla_put_u32(skb, DP_A_EP_QUEUED, dp_pool_queued(&ep->pool)) ||
	    nla_put_u32(skb, DP_A_EP_POOL_TAKEN, taken) ||
	    nla_put_u32(skb, DP_A_EP_POOL_OPEN, open) ||
	    nla_put_u64_64bit(skb, DP_A_EP_TX_CORKED,
			      atomic64_read(&ep->tx_corked), DP_A_UNSPEC))
		return -EMSGSIZE;
	return dp_genl_put_ep_stats(skb, ep);
}

/*
 * One endpoint, from item *@done on; caller holds RCU so ep cannot be
 * freed meanwhile.  0 when it is complete.  -EMSGSIZE when the skb is
 * full: *@done says how far it got.  An endpoint that does not fit behind
 * others is sent whole in the next skb; only one that fills an skb alone
 * is cut (and continues with DP_A_EP_CONT).
 */
static int dp_genl_put_ep(struct sk_buff *skb, struct netlink_callback *cb,
			  struct dp_endpoint *ep, unsigned long *done)
{
	struct dp_genl_pos p = { .skip = *done };
	bool alone = !skb->len;
	void *hdr;
	int err;

	hdr = dp_genl_dump_hdr(skb, cb, DP_CMD_EP_GET);
	if (!hdr)
		return -EMSGSIZE;
	err = dp_genl_put_ep_head(skb, cb, ep, *done > 0);
	if (!err)
		err = dp_genl_put_edges(skb, ep, &p);
	if (!err)
		err = dp_genl_put_rx_peers(skb, ep, &p);
	if (err && (!alone || p.pos == *done)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	*done = p.pos;
	return err;
}

/*
 * cb->args[0]: the next DPID; cb->args[1]: its items already sent;
 * cb->args[2]: the walk is complete (a cursor past U32_MAX would wrap to
 * 0 where long is 32 bits, and the dump would start over for ever).
 */
static int dp_genl_ep_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct dp_node *node = dp_genl_dump_node(cb);
	unsigned long idx = cb->args[0];
	struct dp_endpoint *ep;
	int err = 0;

	if (cb->args[2])
		return 0;
	rcu_read_lock();
	xa_for_each_start(&node->cat, idx, ep, idx) {
		err = dp_genl_put_ep(skb, cb, ep, &cb->args[1]);
		if (err)
			break;
		cb->args[1] = 0;
	}
	rcu_read_unlock();
	cb->args[0] = idx;
	cb->args[2] = !ep;
	/* Nothing fits an empty skb: say so rather than end the dump short. */
	if (err && !skb->len)
		return err;
	return skb->len;
}

/* ---- Events: the multicast group "events" (dpctl monitor) ---- */

enum { DP_MCGRP_EVENTS };

static const struct genl_multicast_group dp_genl_mcgrps[] = {
	[DP_MCGRP_EVENTS] = { .name = DP_GENL_MCGRP_EVENTS },
};

/*
 * Events are built where they happen, often under a session's spinlock in
 * hard irq, and multicast later by a work item.  At most DP_EV_MAX wait;
 * beyond that they are not sent (a listener too slow loses them anyway).
 * dp_ev_live (under dp_ev_queue.lock) is true while the family is
 * registered, so nothing is queued once dp_genl_exit() has begun.
 */
#define DP_EV_MAX	4096
#define DP_EV_SIZE	256

static struct sk_buff_head dp_ev_queue;
static bool dp_ev_live;
/* Its own lockdep class: every sk_buff_head shares one otherwise. */
static struct lock_class_key dp_ev_lock_key;

struct dp_ev_cb {
	struct net *net;
};

#define DP_EV_CB(skb) ((struct dp_ev_cb *)(skb)->cb)

static void dp_ev_work_fn(struct work_struct *work)
{
	struct sk_buff *skb;
	struct net *net;

	while ((skb = skb_dequeue(&dp_ev_queue))) {
		net = DP_EV_CB(skb)->net;
		genlmsg_multicast_netns(&dp_genl_family, net, skb, 0,
					DP_MCGRP_EVENTS, GFP_KERNEL);
		put_net(net);
	}
}

static DECLARE_WORK(dp_ev_work, dp_ev_work_fn);

/* A new event of @kind for @node's namespace; NULL if nobody listens. */
static struct sk_buff *dp_ev_new(struct dp_node *node, u32 kind, void **hdr)
{
	struct sk_buff *skb;

	if (!READ_ONCE(dp_ev_live) ||
	    !genl_has_listeners(&dp_genl_family, node->net, DP_MCGRP_EVENTS))
		return NULL;
	skb = genlmsg_new(DP_EV_SIZE, GFP_ATOMIC);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &dp_genl_family, 0, DP_CMD_EVENT);
	if (!*hdr || nla_put_u32(skb, DP_A_EV_KIND, kind) ||
	    nla_put_u32(skb, DP_A_NID, READ_ONCE(node->nid))) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Queue the event (@err: it did not fit, drop it) for the work item. */
static void dp_ev_queue_skb(struct dp_node *node, struct sk_buff *skb,
			    void *hdr, int err)
{
	struct net *net = err ? NULL : maybe_get_net(node->net);
	unsigned long flags;

	if (!net) {
		kfree_skb(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	DP_EV_CB(skb)->net = net;
	spin_lock_irqsave(&dp_ev_queue.lock, flags);
	if (dp_ev_live && skb_queue_len(&dp_ev_queue) < DP_EV_MAX) {
		__skb_queue_tail(&dp_ev_queue, skb);
		skb = NULL;
	}
	spin_unlock_irqrestore(&dp_ev_queue.lock, flags);
	if (skb) {
		put_net(net);
		kfree_skb(skb);
		return;
	}
	schedule_work(&dp_ev_work);
}

static int dp_ev_put_peer(struct sk_buff *skb, struct dp_endpoint *ep,
			  const struct dp_addr *peer)
{
	if (nla_put_u32(skb, DP_A_DPID, ep->dpid) ||
	    nla_put_u32(skb, DP_A_EV_PEER_NID, peer->nid) ||
	    nla_put_u32(skb, DP_A_EV_PEER_DPID, peer->dpid))
		return -EMSGSIZE;
	return 0;
}

void dp_event_session(struct dp_endpoint *ep, const struct dp_addr *peer,
		      u8 state, int err)
{
	u32 kind = DP_EV_SESSION_OPEN;
	struct sk_buff *skb;
	void *hdr;
	int bad;

	if (state == DP_EDGE_FAILED)
		kind = err == -ECONNRESET ? DP_EV_SESSION_RESET :
					    DP_EV_SESSION_FAILED;
	else if (state != DP_EDGE_OPEN)
		return;
	skb = dp_ev_new(ep->node, kind, &hdr);
	if (!skb)
		return;
	bad = dp_ev_put_peer(skb, ep, peer);
	if (!bad && err)
		bad = nla_put_u32(skb, DP_A_EDGE_ERR, -err);
	dp_ev_queue_skb(ep->node, skb, hdr, bad);
}

void dp_event_peer(struct dp_endpoint *ep, const struct dp_addr *peer)
{
	struct sk_buff *skb;
	void *hdr;

	skb = dp_ev_new(ep->node, DP_EV_PEER_RESTART, &hdr);
	if (skb)
		dp_ev_queue_skb(ep->node, skb, hdr, dp_ev_put_peer(skb, ep, peer));
}

void dp_event_nic(struct dp_node *node, u32 kind, const struct dp_nic *nic)
{
	struct sk_buff *skb;
	void *hdr;
	int bad;

	lockdep_assert_held(&node->cfg_lock);
	skb = dp_ev_new(node, kind, &hdr);
	if (!skb)
		return;
	bad = nla_put_string(skb, DP_A_BACKEND, nic->ops->name) ||
	      nla_put_string(skb, DP_A_IFNAME, nic->ifname);
	dp_ev_queue_skb(node, skb, hdr, bad);
}

void dp_event_nart(struct dp_node *node, const struct dp_nart_entry *e,
		   u32 nid)
{
	u32 kind = e ? DP_EV_NART_SET : nid ? DP_EV_NART_DEL : DP_EV_NART_FLUSH;
	struct sk_buff *skb;
	void *hdr;
	int bad = 0;

	skb = dp_ev_new(node, kind, &hdr);
	if (!skb)
		return;
	if (e)
		bad = nla_put_u32(skb, DP_A_EV_PEER_NID, e->nid) ||
		      nla_put(skb, DP_A_LLADDR, e->alen, e->addr) ||
		      (e->rlen && nla_put(skb, DP_A_ROUTE, e->rlen, e->route)) ||
		      nla_put_u32(skb, DP_A_NART_ORIGIN, e->origin);
	else if (nid)
		bad = nla_put_u32(skb, DP_A_EV_PEER_NID, nid);
	dp_ev_queue_skb(node, skb, hdr, bad);
}

/* Discovery heard NID @nid claimed from @addr (any context). */
void dp_event_conflict(struct dp_node *node, u32 nid, const u8 *addr, u8 alen)
{
	struct sk_buff *skb;
	void *hdr;
	int bad;

	skb = dp_ev_new(node, DP_EV_NID_CONFLICT, &hdr);
	if (!skb)
		return;
	bad = nla_put_u32(skb, DP_A_EV_PEER_NID, nid) ||
	      nla_put(skb, DP_A_LLADDR, alen, addr);
	dp_ev_queue_skb(node, skb, hdr, bad);
}

static void dp_ev_stop(void)
{
	struct sk_buff *skb;

	spin_lock_irq(&dp_ev_queue.lock);
	dp_ev_live = false;
	spin_unlock_irq(&dp_ev_queue.lock);
	cancel_work_sync(&dp_ev_work);
	while ((skb = skb_dequeue(&dp_ev_queue))) {
		put_net(DP_EV_CB(skb)->net);
		kfree_skb(skb);
	}
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
	{ .cmd = DP_CMD_SCOUT, .doit = dp_genl_scout,
	  .flags = GENL_ADMIN_PERM },
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
	.mcgrps = dp_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(dp_genl_mcgrps),
	.resv_start_op = __DP_CMD_MAX,
};

int dp_genl_init(void)
{
	int err;

	skb_queue_head_init(&dp_ev_queue);
	lockdep_set_class(&dp_ev_queue.lock, &dp_ev_lock_key);
	err = genl_register_family(&dp_genl_family);
	if (!err) {
		spin_lock_irq(&dp_ev_queue.lock);
		dp_ev_live = true;
		spin_unlock_irq(&dp_ev_queue.lock);
	}
	return err;
}

void dp_genl_exit(void)
{
	dp_ev_stop();
	genl_unregister_family(&dp_genl_family);
}
