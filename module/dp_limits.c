// SPDX-License-Identifier: GPL-2.0
/*
 * Who may bind what, and what a bound endpoint costs its owner.
 *
 * DPIDs 1..dpid_priv_max need CAP_NET_BIND_SERVICE in the user namespace
 * that owns the node's network namespace, as low ports do for bind(2).
 *
 * A bound endpoint is charged three ways, all undone at release:
 *  - dp's own per-uid table (uid_max_endpoints, uid_max_pool_mb), keyed by
 *    the global kuid, charged to the binder's euid and also to the owner of
 *    its outermost user namespace (dp_outer_owner()), so that neither new
 *    network namespaces nor the subordinate uids of a user namespace reset
 *    a user's caps;
 *  - RLIMIT_MEMLOCK on user->locked_vm, as io_uring and AF_XDP do, unless
 *    the binder has CAP_IPC_LOCK;
 *  - the binder's mm->pinned_vm, so the pool shows as VmPin in
 *    /proc/PID/status (as io_uring and perf do).
 * The pool pages themselves are __GFP_ACCOUNT (dp_pool.c): memcg sees them.
 * RLIMIT_MEMLOCK stays per user_struct, so each subordinate uid has its own;
 * dp's caps are what bound a user across them.
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
#include <linux/user_namespace.h>

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

/* A charge counts against the binder's euid and its outer owner. */
#define DP_CHARGE_UIDS	2

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

/*
 * The owner of the outermost user namespace @cred lives in below the
 * initial one, or @cred's euid in the initial namespace.  Like the
 * kernel's hierarchical ucounts: whatever a user does as the subordinate
 * uids of namespaces it created counts against that user.  The chain is
 * pinned by @cred's reference on its namespace.
 */
static kuid_t dp_outer_owner(const struct cred *cred)
{
	const struct user_namespace *ns = cred->user_ns;

	if (ns == &init_user_ns)
		return cred->euid;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/* The uids a charge counts against: its own, and the outer owner if other. */
static unsigned int dp_charge_uids(const struct dp_charge *c,
				   kuid_t uids[DP_CHARGE_UIDS])
{
	uids[0] = c->uid;
	if (uid_eq(c->outer, c->uid))
		return 1;
	uids[1] = c->outer;
	return 2;
}

/* dp's own memory cap: EDQUOT. */
static int dp_uq_check_bytes(const struct dp_uquota *q, size_t bytes)
{
	u64 max_bytes = (u64)READ_ONCE(dp_uid_max_mb) << 20;

	lockdep_assert_held(&dp_uq_lock);
	return max_bytes && q->bytes + bytes > max_bytes ? -EDQUOT : 0;
}

/* dp's own endpoint cap: EMFILE. */
static int dp_uq_check_eps(const struct dp_uquota *q)
{
	unsigned int max_eps = READ_ONCE(dp_uid_max_eps);

	lockdep_assert_held(&dp_uq_lock);
	return max_eps && q->eps >= max_eps ? -EMFILE : 0;
}

/* dp's own caps for every uid charged: EMFILE first, then EDQUOT. */
static int dp_uq_check(struct dp_uquota *const *q, unsigned int n, size_t bytes)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < n && !err; i++)
		err = dp_uq_check_eps(q[i]);
	for (i = 0; i < n && !err; i++)
		err = dp_uq_check_bytes(q[i], bytes);
	return err;
}

/* The table entries of @uids, made if missing; -ENOMEM leaves none made. */
static int dp_uq_get_all(const kuid_t *uids, unsigned int n,
			 struct dp_uquota **q)
{
	unsigned int i;

	lockdep_assert_held(&dp_uq_lock);
	for (i = 0; i < n; i++) {
		q[i] = dp_uq_get(uids[i]);
		if (!q[i])
			goto undo;
	}
	return 0;
undo:
	while (i--)
		dp_uq_put_if_idle(q[i]);
	return -ENOMEM;
}

/*
 * The existing table entries of @c's uids; false (with a warning: the
 * books disagree) if one is missing or does not hold @eps endpoints and
 * @bytes.
 */
static bool dp_uq_find_all(const struct dp_charge *c, unsigned int eps,
			   size_t bytes, struct dp_uquota **q, unsigned int *n)
{
	kuid_t uids[DP_CHARGE_UIDS];
	unsigned int i;

	lockdep_assert_held(&dp_uq_lock);
	*n = dp_charge_uids(c, uids);
	for (i = 0; i < *n; i++) {
		q[i] = dp_uq_find(uids[i]);
		if (WARN_ON_ONCE(!q[i] || q[i]->eps < eps ||
				 q[i]->bytes < bytes))
			return false;
	}
	return true;
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
 * dp's per-uid table: one endpoint and @bytes more for each of @c's uids,
 * then RLIMIT_MEMLOCK (@user set to the user charged, or left NULL).
 */
static int dp_uq_charge(struct dp_charge *c, size_t bytes,
			unsigned long pages, struct user_struct **user,
			const struct cred *cred)
{
	struct dp_uquota *q[DP_CHARGE_UIDS];
	kuid_t uids[DP_CHARGE_UIDS];
	unsigned int n, i;
	int err;

	mutex_lock(&dp_uq_lock);
	n = dp_charge_uids(c, uids);
	err = dp_uq_get_all(uids, n, q);
	if (err)
		goto out;
	err = dp_uq_check(q, n, bytes);
	if (!err && !capable(CAP_IPC_LOCK)) {
		err = dp_memlock_charge(cred->user, pages);
		if (!err)
			*user = cred->user;
	}
	for (i = 0; i < n; i++) {
		if (err) {	/* drop the entries made for nothing */
			dp_uq_put_if_idle(q[i]);
		} else {
			q[i]->eps++;
			q[i]->bytes += bytes;
		}
	}
out:
	mutex_unlock(&dp_uq_lock);
	return err;
}

/*
 * Charge a pool of @bytes to the current task, whose credentials @cred
 * (current_cred()) become the endpoint's owner.  Process context.
 */
int dp_limits_charge(struct dp_charge *c, const struct cred *cred, size_t bytes)
{
	unsigned long pages = PAGE_ALIGN(bytes) >> PAGE_SHIFT;
	struct user_struct *user = NULL;
	int err;

	c->uid = cred->euid;
	c->outer = dp_outer_owner(cred);
	err = dp_uq_charge(c, bytes, pages, &user, cred);
	if (err)
		return err;
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
	struct dp_uquota *q[DP_CHARGE_UIDS];
	unsigned int n, i;

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
	if (dp_uq_find_all(c, 1, c->bytes, q, &n)) {
		for (i = 0; i < n; i++) {
			q[i]->eps--;
			q[i]->bytes -= c->bytes;
			dp_uq_put_if_idle(q[i]);
		}
	}
	mutex_unlock(&dp_uq_lock);
}

/* dp_limits_grow() under dp_uq_lock: all of @c's uids, or none. */
static int dp_uq_grow(struct dp_charge *c, size_t bytes)
{
	struct dp_uquota *q[DP_CHARGE_UIDS];
	unsigned int n, i;
	int err;

	lockdep_assert_held(&dp_uq_lock);
	if (WARN_ON_ONCE(!c->charged) || !dp_uq_find_all(c, 1, 0, q, &n))
		return -EBADFD;
	for (i = 0; i < n; i++) {
		err = dp_uq_check_bytes(q[i], bytes);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++)
		q[i]->bytes += bytes;
	c->bytes += bytes;
	return 0;
}

/*
 * Charge @bytes more to a bound endpoint's owner (an edge): EDQUOT past
 * uid_max_pool_mb, for its uid or its outer owner.  Edges are kernel
 * memory a user makes as pools are, so they count against the same cap
 * (and memcg: they are __GFP_ACCOUNT).
 */
int dp_limits_grow(struct dp_charge *c, size_t bytes)
{
	int err;

	mutex_lock(&dp_uq_lock);
	err = dp_uq_grow(c, bytes);
	mutex_unlock(&dp_uq_lock);
	return err;
}

void dp_limits_shrink(struct dp_charge *c, size_t bytes)
{
	struct dp_uquota *q[DP_CHARGE_UIDS];
	unsigned int n, i;

	mutex_lock(&dp_uq_lock);
	if (!WARN_ON_ONCE(!c->charged || c->bytes < bytes) &&
	    dp_uq_find_all(c, 1, bytes, q, &n)) {
		for (i = 0; i < n; i++)
			q[i]->bytes -= bytes;
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
