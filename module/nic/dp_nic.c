// SPDX-License-Identifier: GPL-2.0
/*
 * NIC layer: the backend registry and the lifetime rules every backend
 * shares.  A sender takes a reference under RCU and may then sleep in
 * ->xmit(); detaching waits for the last such sender before the backend
 * frees its device.
 */
#include <linux/debugfs.h>

#include "dp.h"
#include "dp_backends.h"

#define DP_BACKENDS_MAX	8

/*
 * Registered backends in registration order; the first is the default of
 * a node that names none.  dp_backend_lock is held across a lookup and the
 * attach that uses it, so a backend cannot unregister in between.
 */
static DEFINE_MUTEX(dp_backend_lock);
static const struct dp_backend *dp_backends[DP_BACKENDS_MAX];
static struct dentry *dp_debugfs;

/* The backends built in; each init calls dp_backend_register(). */
static const struct {
	int (*init)(void);
	void (*exit)(void);
} dp_builtin[] = {
	{ dp_netdev_init, dp_netdev_exit },
	{ dp_tulip_init, dp_tulip_exit },
	{ dp_myri_init, dp_myri_exit },
};

void dp_backends_lock(void)
{
	mutex_lock(&dp_backend_lock);
}

void dp_backends_unlock(void)
{
	mutex_unlock(&dp_backend_lock);
}

/* The backend called @name, or the default for NULL or "". */
const struct dp_backend *dp_backend_find(const char *name)
{
	int i;

	lockdep_assert_held(&dp_backend_lock);
	if (!name || !*name)
		return dp_backends[0];
	for (i = 0; i < DP_BACKENDS_MAX && dp_backends[i]; i++)
		if (!strcmp(dp_backends[i]->name, name))
			return dp_backends[i];
	return NULL;
}

int dp_backend_register(const struct dp_backend *be)
{
	int i, err = -ENOSPC;

	if (strlen(be->name) >= DP_BACKEND_NAMSIZ)
		return -EINVAL;
	mutex_lock(&dp_backend_lock);
	if (dp_backend_find(be->name)) {
		err = -EEXIST;
		goto out;
	}
	for (i = 0; i < DP_BACKENDS_MAX; i++) {
		if (!dp_backends[i]) {
			dp_backends[i] = be;
			err = 0;
			break;
		}
	}
out:
	mutex_unlock(&dp_backend_lock);
	return err;
}

/*
 * No node can attach @be afterwards; the backend itself detaches the
 * nodes that still use it (device removal, dp_node_detach_hw()).
 */
void dp_backend_unregister(const struct dp_backend *be)
{
	int i, j;

	mutex_lock(&dp_backend_lock);
	for (i = 0; i < DP_BACKENDS_MAX; i++) {
		if (dp_backends[i] != be)
			continue;
		for (j = i; j + 1 < DP_BACKENDS_MAX; j++)
			dp_backends[j] = dp_backends[j + 1];
		dp_backends[DP_BACKENDS_MAX - 1] = NULL;
		break;
	}
	mutex_unlock(&dp_backend_lock);
}

/*
 * dp's debugfs directory, for backends' test-only knobs; NULL or an
 * ERR_PTR when debugfs is absent, which debugfs_create_*() accept.
 */
struct dentry *dp_backend_debugfs(void)
{
	return dp_debugfs;
}

/* Start every built-in backend; on failure none is left running. */
int dp_backends_init(void)
{
	int i, err;

	dp_debugfs = debugfs_create_dir("dp", NULL);
	debugfs_create_u32("attach_fail", 0600, dp_debugfs, &dp_attach_fail);
	for (i = 0; i < ARRAY_SIZE(dp_builtin); i++) {
		err = dp_builtin[i].init();
		if (err)
			goto err_undo;
	}
	return 0;

err_undo:
	while (i--)
		dp_builtin[i].exit();
	debugfs_remove(dp_debugfs);
	dp_debugfs = NULL;
	return err;
}

/* Stop them in reverse order; each detaches the nodes using it. */
void dp_backends_exit(void)
{
	int i = ARRAY_SIZE(dp_builtin);

	while (i--)
		dp_builtin[i].exit();
	debugfs_remove(dp_debugfs);
	dp_debugfs = NULL;
}

/*
 * Called once no node is attached any more (dp_pernet_exit()): transmissions
 * a device may still hold complete in this module's code (dp_netdev.c).
 */
void dp_backends_drain(void)
{
	dp_netdev_drain();
}

void dp_nic_init(struct dp_nic *nic, const struct dp_backend *ops,
		 struct dp_node *node, void *hw, const char *ifname)
{
	static atomic64_t ids;

	nic->id = atomic64_inc_return(&ids);
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

/*
 * Busy polling for a reader waiting on @node (DP_WAIT_BUSY_POLL): the NIC's
 * busy_poll op until @end(@arg).  False if there is nothing to drive (no
 * NIC, a backend without the op, or one that has nothing to poll yet).  The
 * sender reference keeps the NIC attached meanwhile: a detach waits for the
 * poll, which the reader's poll_usecs bounds.
 */
bool dp_nic_busy_poll(struct dp_node *node, bool (*end)(void *arg), void *arg)
{
	struct dp_nic *nic = dp_nic_get(node);
	bool polled = false;

	if (!nic)
		return false;
	if (nic->ops->busy_poll)
		polled = nic->ops->busy_poll(nic, end, arg);
	dp_nic_put(nic);
	return polled;
}
