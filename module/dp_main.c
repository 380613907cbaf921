// SPDX-License-Identifier: GPL-2.0
/*
 * dp.ko: Directed Point messaging for cluster programs.  Module entry,
 * parameters for the initial namespace's node, and the /dev/dp device.
 */
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>

#include "dp.h"
#include "dp_trace.h"

static unsigned int nid;
module_param(nid, uint, 0444);
MODULE_PARM_DESC(nid, "NID of the initial network namespace's node (0: unset)");

static char *ifname;
module_param(ifname, charp, 0444);
MODULE_PARM_DESC(ifname, "Network device the initial namespace's node attaches to");

static char *backend;
module_param(backend, charp, 0444);
MODULE_PARM_DESC(backend, "The initial namespace's default NIC backend (any registered one; default: the first registered)");

unsigned int dp_pool_size_default = 256 * 1024;
module_param_named(pool_size, dp_pool_size_default, uint, 0444);
MODULE_PARM_DESC(pool_size, "Default pool data size in bytes (power of two, 16K..64M)");

/*
 * 0: a blocking read sleeps at once unless its endpoint asks to poll
 * (DP_IOC_SET_WAIT).  Homa's default is 50 us, for dedicated cores on bare
 * metal.  Measured here between two TCG guests on a shared host, polling
 * made round trips slower (docs/performance.md): a polling vCPU takes the
 * host CPU its peer and QEMU's I/O thread need.  Read at bind.
 */
unsigned int dp_poll_usecs_default;
module_param_named(poll_usecs, dp_poll_usecs_default, uint, 0644);
MODULE_PARM_DESC(poll_usecs, "How long a blocking read() polls the pool before it sleeps, for endpoints bound from now on (us, at most 1000000; per endpoint: DP_IOC_SET_WAIT)");

unsigned int dp_unreach_ms = 10000;
module_param_named(unreach_ms, dp_unreach_ms, uint, 0644);
MODULE_PARM_DESC(unreach_ms, "A peer silent this long fails its sessions: sends get ETIMEDOUT (ms)");

unsigned int dp_rto_min_ms = 20;
module_param_named(rto_min_ms, dp_rto_min_ms, uint, 0644);
MODULE_PARM_DESC(rto_min_ms, "Smallest retransmission timeout (ms)");

unsigned int dp_rto_max_ms = 1000;
module_param_named(rto_max_ms, dp_rto_max_ms, uint, 0644);
MODULE_PARM_DESC(rto_max_ms, "Largest retransmission timeout, the backoff's cap (ms)");

unsigned int dp_credit_idle_ms = 100;
module_param_named(credit_idle_ms, dp_credit_idle_ms, uint, 0644);
MODULE_PARM_DESC(credit_idle_ms, "A sender idle this long gives its unused credit back to the receiver (ms)");

unsigned int dp_rx_peers_per_uid = DP_MAX_RX_PEERS / 4;
module_param_named(rx_peers_per_uid, dp_rx_peers_per_uid, uint, 0644);
MODULE_PARM_DESC(rx_peers_per_uid, "Senders of one user (but the owner) an endpoint keeps sessions for; more are refused: EUSERS");

unsigned int dp_rx_peers_per_node = DP_MAX_RX_PEERS / 2;
module_param_named(rx_peers_per_node, dp_rx_peers_per_node, uint, 0644);
MODULE_PARM_DESC(rx_peers_per_node, "Senders of one node (but the owner's) an endpoint keeps sessions for; more are refused: EUSERS");

/* Retransmission, ACKs and RESETs: process context, flushed at exit. */
struct workqueue_struct *dp_wq;

static struct miscdevice dp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "dp",
	.fops = &dp_fops,
	.mode = 0666,
};

/* Apply the module parameters to the initial namespace's node. */
static int __init dp_init_node(void)
{
	struct dp_node *node = dp_node_of(&init_net);
	int err = 0;

	err = dp_node_set_backend(node, backend);
	if (err) {
		pr_err("dp: no backend called %s\n", backend);
		return -EINVAL;
	}
	if (nid)
		err = dp_node_set_nid(node, nid);
	if (err || !ifname || !*ifname)
		return err;
	rtnl_lock();
	err = dp_node_attach(node, NULL, ifname, true);
	rtnl_unlock();
	if (err)
		pr_err("dp: cannot attach %s to %s: %d\n",
		       node->backend[0] ? node->backend : "the default backend",
		       ifname, err);
	return err;
}

static int __init dp_init(void)
{
	int err;

	if (!dp_pool_size_valid(dp_pool_size_default)) {
		pr_err("dp: pool_size %u is not a power of two in [%u, %u]\n",
		       dp_pool_size_default, DP_POOL_MIN, DP_POOL_MAX);
		return -EINVAL;
	}
	dp_limits_init();
	dp_crc32c_select();
	dp_copy_select();
	dp_trace_init();
	dp_wq = alloc_workqueue("dp", WQ_MEM_RECLAIM, 0);
	if (!dp_wq)
		return -ENOMEM;
	err = dp_pernet_init();
	if (err)
		goto err_wq;
	err = dp_backends_init();
	if (err)
		goto err_pernet;
	err = dp_init_node();
	if (err)
		goto err_backends;
	err = dp_genl_init();
	if (err)
		goto err_backends;
	err = misc_register(&dp_misc);
	if (err)
		goto err_genl;
	pr_info("dp: Directed Point loaded, node %u\n", nid);
	return 0;

err_genl:
	dp_genl_exit();
err_backends:
	dp_backends_exit();
err_pernet:
	dp_pernet_exit();
	dp_backends_drain();	/* what the backends still hold, as dp_exit() */
err_wq:
	destroy_workqueue(dp_wq);
	return err;
}

static void __exit dp_exit(void)
{
	misc_deregister(&dp_misc);
	dp_genl_exit();
	dp_backends_exit();	/* no new attachment; PCI devices let go */
	dp_pernet_exit();	/* detaches every node's NIC */
	dp_backends_drain();	/* frames devices hold from sessions' copies */
	rcu_barrier();		/* endpoint and edge frees queued by call_rcu */
	destroy_workqueue(dp_wq);	/* idle: every endpoint stopped its work */
	pr_info("dp: unloaded\n");
}

module_init(dp_init);
module_exit(dp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Directed Point: protected low-latency cluster messaging");
MODULE_AUTHOR("dp developers");
