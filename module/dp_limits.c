// SPDX-License-Identifier: GPL-2.0
/*
 * Who may bind what, and what a bound endpoint costs its owner.
 *
 * DPIDs 1..dpid_priv_max need CAP_NET_BIND_SERVICE in the user namespace
 * that owns the node's network namespace, as low ports do for bind(2).
 *
 * A bound endpoint is charged three ways, all undone at release:
 *  - dp's own per-uid table (uid_max_endpoints, uid_max_pool_mb), keyed by
 *    the global kuid so that new user or network namespaces do not reset it;
 *  - RLIMIT_MEMLOCK on user->locked_vm, as io_uring and AF_XDP do, unless
 *    the binder has CAP_IPC_LOCK;
 *  - the binder's mm->pinned_vm, so the pool shows as VmPin in
 *    /proc/PID/status (as io_uring and perf do).
 * The pool pages themselves are __GFP_ACCOUNT (dp_pool.c): memcg sees them.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>

#include "dp.h"

unsigned int dp_dpid_priv_max = 1023;
module_param_named(dpid_priv_max, dp_dpid_priv_max, uint, 0644);
MODULE_PARM_DESC(dpid_priv_max,
		 "DPIDs 1..N need CAP_NET_BIND_SERVICE in the node's user namespace (0: none)");

static unsigned int dp_uid_max_eps = 1024;
module_param_named(uid_max_endpoints, dp_uid_max_eps, uint, 0644);
MODULE_PARM_DESC(uid_max_endpoints, "Bound endpoints per uid, all nodes together (0: no limit)");

/* UINT_MAX until dp_limits_init() picks the default: a quarter of RAM. */
static unsigned int dp_uid_max_mb = UINT_MAX;
module_param_named(uid_max_pool_mb, dp_uid_max_mb, uint, 0644);
MODULE_PARM_DESC(uid_max_pool_mb,
		 "Pool memory per uid in MiB, all nodes together (default: RAM/4; 0: no limit)");

/**
 * struct dp_uquota - what one uid holds, across every node.
 * @hnode: in dp_uq, keyed by the kuid.
 * @uid: the owner.
 * @eps: bound endpoints.
 * @bytes: pool and edge bytes of those endpoints.
 */
struct dp_uquota {
	struct hlist_node hnode;
	kuid_t uid;
	unsigned int eps;
	u64 bytes;
};

static DEFINE_HASHTABLE(dp_uq, 6);
static DEFINE_MUTEX(dp_uq_lock);	/* dp_uq and every entry */

int dp_dpid_permitted(struct net *net, u32 dpid)
{
	if (dpid > READ_ONCE(dp_dpid_priv_max))
		return 0;
	return ns_capable(net->user_ns, CAP_NET_BIND_SERVICE) ? 0 : -EACCES;
}

static struct dp_uquota *dp_uq_find(kuid_t uid)
{
	struct dp_uquota *q;

	lockdep_assert_held(&dp_uq_lock);
	hash_for_each_possible(dp_uq, q, hnode, __kuid_val(uid))
		if (uid_eq(q->uid, uid))
			return q;
	return NULL;
}

static struct dp_uquota *dp_uq_get(kuid_t uid)
{
	struct dp_uquota *q = dp_uq_find(uid);

	if (q)
		return q;
	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return NULL;
	q->uid = uid;
	hash_add(dp_uq, &q->hnode, __kuid_val(uid));
	return q;
}

static void dp_uq_put_if_idle(struct dp_uquota *q)
{
	lockdep_assert_held(&dp_uq_lock);
	if (q->eps)
		return;
	hash_del(&q->hnode);
	kfree(q);
}

/* dp's own memory cap: EDQUOT. */
static int dp_uq_check_bytes(const struct dp_uquota *q, size_t bytes)
{
	u64 max_bytes = (u64)READ_ONCE(dp_uid_max_mb) << 20;

	lockdep_assert_held(&dp_uq_lock);
	return max_bytes && q->bytes + bytes > max_bytes ? -EDQUOT : 0;
}

/* dp's own caps: EMFILE for endpoints, EDQUOT for memory. */
static int dp_uq_check(const struct dp_uquota *q, size_t bytes)
{
	unsigned int max_eps = READ_ONCE(dp_uid_max_eps);

	lockdep_assert_held(&dp_uq_lock);
	if (max_eps && q->eps >= max_eps)
		return -EMFILE;
	return dp_uq_check_bytes(q, bytes);
}

/* RLIMIT_MEMLOCK against user->locked_vm, the way io_uring counts it. */
static int dp_memlock_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur = atomic_long_read(&user->locked_vm), new;

	do {
		new = cur + pages;
		if (new > limit)
			return -ENOBUFS;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

/*
 * Charge a pool of @bytes to the current task, whose credentials @cred
 * (current_cred()) become the endpoint's owner.  Process context.
 */
int dp_limits_charge(struct dp_charge *c, const struct cred *cred, size_t bytes)
{
	unsigned long pages = PAGE_ALIGN(bytes) >> PAGE_SHIFT;
	struct user_struct *user = NULL;
	struct dp_uquota *q;
	int err;

	mutex_lock(&dp_uq_lock);
	q = dp_uq_get(cred->euid);
	if (!q) {
		mutex_unlock(&dp_uq_lock);
		return -ENOMEM;
	}
	err = dp_uq_check(q, bytes);
	if (!err && !capable(CAP_IPC_LOCK)) {
		user = cred->user;
		err = dp_memlock_charge(user, pages);
	}
	if (err) {
		dp_uq_put_if_idle(q);
		mutex_unlock(&dp_uq_lock);
		return err;
	}
	q->eps++;
	q->bytes += bytes;
	mutex_unlock(&dp_uq_lock);

	c->uid = cred->euid;
	c->bytes = bytes;
	c->pages = pages;
	c->user = user ? get_uid(user) : NULL;
	c->mm = current->mm;
	mmgrab(c->mm);
	atomic64_add(pages, &c->mm->pinned_vm);
	c->charged = true;
	return 0;
}

/* Undo dp_limits_charge(); a no-op for an endpoint that was never bound. */
void dp_limits_uncharge(struct dp_charge *c)
{
	struct dp_uquota *q;

	if (!c->charged)
		return;
	c->charged = false;
	atomic64_sub(c->pages, &c->mm->pinned_vm);
	mmdrop(c->mm);
	if (c->user) {
		atomic_long_sub(c->pages, &c->user->locked_vm);
		free_uid(c->user);
	}
	mutex_lock(&dp_uq_lock);
	q = dp_uq_find(c->uid);
	if (!WARN_ON_ONCE(!q || !q->eps || q->bytes < c->bytes)) {
		q->eps--;
		q->bytes -= c->bytes;
		dp_uq_put_if_idle(q);
	}
	mutex_unlock(&dp_uq_lock);
}

/*
 * Charge @bytes more to a bound endpoint's owner (an edge): EDQUOT past
 * uid_max_pool_mb.  Edges are kernel memory a user makes as pools are, so
 * they count against the same cap (and memcg: they are __GFP_ACCOUNT).
 */
int dp_limits_grow(struct dp_charge *c, size_t bytes)
{
	struct dp_uquota *q;
	int err;

	mutex_lock(&dp_uq_lock);
	q = dp_uq_find(c->uid);
	err = WARN_ON_ONCE(!c->charged || !q) ? -EBADFD : dp_uq_check_bytes(q, bytes);
	if (!err) {
		q->bytes += bytes;
		c->bytes += bytes;
	}
	mutex_unlock(&dp_uq_lock);
	return err;
}

void dp_limits_shrink(struct dp_charge *c, size_t bytes)
{
	struct dp_uquota *q;

	mutex_lock(&dp_uq_lock);
	q = dp_uq_find(c->uid);
	if (!WARN_ON_ONCE(!c->charged || !q || c->bytes < bytes || q->bytes < bytes)) {
		q->bytes -= bytes;
		c->bytes -= bytes;
	}
	mutex_unlock(&dp_uq_lock);
}

void dp_limits_init(void)
{
	/* A quarter of RAM in MiB; at least one largest pool. */
	if (dp_uid_max_mb == UINT_MAX)
		dp_uid_max_mb = max(totalram_pages() >> (20 - PAGE_SHIFT) >> 2,
				    (unsigned long)(DP_POOL_MAX >> 20) + 1);
}
