// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of who may bind what and what a bound endpoint costs its
 * owner (dp_limits.c), built against the real dp.h over the mock kernel
 * (mock/kmock.h), whose credentials, user namespaces, capabilities and
 * RLIMIT_MEMLOCK the tests set.  What is checked is docs/contract.md's
 * promise to an admin: EMFILE at uid_max_endpoints, EDQUOT past
 * uid_max_pool_mb (at bind and for each edge), ENOBUFS past
 * RLIMIT_MEMLOCK unless CAP_IPC_LOCK, ENOMEM, 0 meaning no limit; a
 * subordinate uid of a user namespace counted for the user who made it
 * too; a failed charge charging nothing; a release giving everything back.
 *
 * dp's per-uid table is dp_limits.c's alone, so a uid's books are read
 * the way a user would find them: l_eps() and l_bytes() probe how much
 * more the uid may bind (with the other cap and RLIMIT_MEMLOCK out of
 * play), undoing every probe.
 *
 * A world of its own (Makefile, WORLDS): the table and the parameters
 * are seen by this file alone.
 */
#include "dp.h"
#include "unit.h"

extern unsigned int *const kmock_param_dpid_priv_max;
extern unsigned int *const kmock_param_uid_max_endpoints;
extern unsigned int *const kmock_param_uid_max_pool_mb;

#define L_KB(n)		((size_t)(n) << 10)
#define L_MB(n)		((size_t)(n) << 20)
#define L_CAP(c)	(1ull << (c))
#define L_USERS		8
#define L_PROBE_EPS	64	/* the endpoint cap l_eps() probes under */
#define L_PROBE_MB	4096u	/* the pool cap l_bytes() probes under */

static struct {
	struct task_struct task;
	struct mm_struct mm;
	/* A: made by 1000; B: made in A, by 100000; C: made by 2000 */
	struct user_namespace ns[3];
	struct { u32 uid; struct user_struct u; } user[L_USERS];
	unsigned int nusers;
	struct user_struct *racer;	/* whose locked_vm the hook moves */
} l;

/* The user_struct of @uid, one for each uid, held once by its creds. */
static struct user_struct *l_user(u32 uid)
{
	unsigned int i;

	for (i = 0; i < l.nusers; i++)
		if (l.user[i].uid == uid)
			return &l.user[i].u;
	if (l.nusers == L_USERS)
		abort();
	l.user[i].uid = uid;
	refcount_set(&l.user[i].u.__count, 1);
	l.nusers++;
	return &l.user[i].u;
}

static long l_locked(u32 uid)
{
	return atomic_long_read(&l_user(uid)->locked_vm);
}

/* Charge @bytes to a task of euid @euid in @ns (NULL: the initial one). */
static int l_charge(struct dp_charge *c, u32 euid, struct user_namespace *ns,
		    size_t bytes)
{
	struct cred cred = {
		.euid = { euid },
		.user = l_user(euid),
		.user_ns = ns ? ns : &init_user_ns,
	};

	memset(c, 0, sizeof(*c));
	return dp_limits_charge(c, &cred, bytes);
}

/* What a probe changes, put back when it ends. */
struct l_saved {
	unsigned int eps, mb;
	u64 caps;
	struct user_namespace *caps_ns;
};

/* A probe's caps (@eps, @mb), with CAP_IPC_LOCK: RLIMIT_MEMLOCK out of play. */
static struct l_saved l_probe_start(unsigned int eps, unsigned int mb)
{
	struct l_saved s = {
		*kmock_param_uid_max_endpoints, *kmock_param_uid_max_pool_mb,
		kmock_caps, kmock_caps_ns,
	};

	*kmock_param_uid_max_endpoints = eps;
	*kmock_param_uid_max_pool_mb = mb;
	kmock_caps = L_CAP(CAP_IPC_LOCK);
	kmock_caps_ns = NULL;
	return s;
}

static void l_probe_end(const struct l_saved *s)
{
	*kmock_param_uid_max_endpoints = s->eps;
	*kmock_param_uid_max_pool_mb = s->mb;
	kmock_caps = s->caps;
	kmock_caps_ns = s->caps_ns;
}

/* Endpoints @uid holds: L_PROBE_EPS less the binds it still gets. */
static unsigned int l_eps(u32 uid)
{
	struct l_saved s = l_probe_start(L_PROBE_EPS, 0);
	struct dp_charge c[L_PROBE_EPS];
	unsigned int n = 0, i;

	while (n < L_PROBE_EPS && !l_charge(&c[n], uid, NULL, 0))
		n++;
	for (i = 0; i < n; i++)
		dp_limits_uncharge(&c[i]);
	l_probe_end(&s);
	return L_PROBE_EPS - n;
}

/* Whether @uid may bind @bytes more now (undone at once). */
static bool l_fits(u32 uid, u64 bytes)
{
	struct dp_charge c;
	int err = l_charge(&c, uid, NULL, bytes);

	CHECK(!err || err == -EDQUOT, "probe of %u: %d", uid, err);
	dp_limits_uncharge(&c);
	return !err;
}

/* Bytes @uid holds: L_PROBE_MB MiB less the largest charge it gets. */
static u64 l_bytes(u32 uid)
{
	struct l_saved s = l_probe_start(0, L_PROBE_MB);
	u64 lo = 0, hi = (u64)L_PROBE_MB << 20, cap = hi;

	if (!l_fits(uid, 0))
		lo = cap + 1;
	while (lo < hi) {
		u64 mid = lo + (hi - lo + 1) / 2;

		if (l_fits(uid, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	l_probe_end(&s);
	return cap - lo;
}

static void l_setup(void)
{
	kmock_reset();
	memset(&l, 0, sizeof(l));
	*kmock_param_dpid_priv_max = 1023;
	*kmock_param_uid_max_endpoints = 4;
	*kmock_param_uid_max_pool_mb = 1;
	refcount_set(&l.mm.mm_count, 1);
	l.task.mm = &l.mm;
	current = &l.task;
	l.ns[0] = (struct user_namespace){ &init_user_ns, { 1000 } };
	l.ns[1] = (struct user_namespace){ &l.ns[0], { 100000 } };
	l.ns[2] = (struct user_namespace){ &init_user_ns, { 2000 } };
}

/*
 * Everything given back: no table entry left, no page on any user's
 * locked_vm or the task's pinned_vm, every reference dropped, the books
 * never in disagreement, no rule broken.
 */
static void l_clean(void)
{
	unsigned int i;

	CHECK_EQ(kmock_kmalloc_live, 0);
	for (i = 0; i < l.nusers; i++) {
		CHECK(atomic_long_read(&l.user[i].u.locked_vm) == 0,
		      "uid %u: %ld pages locked", l.user[i].uid,
		      atomic_long_read(&l.user[i].u.locked_vm));
		CHECK(l.user[i].u.__count.refs == 1, "uid %u: %d refs",
		      l.user[i].uid, l.user[i].u.__count.refs);
	}
	CHECK_EQ(atomic64_read(&l.mm.pinned_vm), 0);
	CHECK_EQ(l.mm.mm_count.refs, 1);
	CHECK_EQ(kmock_warn_ons, 0);
	CHECK_EQ(kmock_refcount_errors, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/*
 * A charge: one endpoint and the bytes on the uid's books, the pages
 * (rounded up) on its user's locked_vm and the task's pinned_vm, each
 * reference taken; the release gives all of it back, the idle entry
 * freed; a second release, or one of an endpoint never bound, does
 * nothing.
 */
static void test_limits_charge_uncharge(void)
{
	struct dp_charge c, never = { 0 };

	l_setup();
	CHECK_EQ(l_charge(&c, 1000, NULL, L_KB(64) + 1), 0);
	CHECK(c.charged, "charged");
	CHECK(c.uid.val == 1000 && c.outer.val == 1000, "the euid alone");
	CHECK_EQ(c.bytes, L_KB(64) + 1);
	CHECK_EQ(c.pages, 17);
	CHECK(c.user == l_user(1000), "the cred's user");
	CHECK(c.mm == &l.mm, "the task's mm");
	CHECK_EQ(l_locked(1000), 17);
	CHECK_EQ(atomic64_read(&l.mm.pinned_vm), 17);
	CHECK_EQ(l_user(1000)->__count.refs, 2);
	CHECK_EQ(l.mm.mm_count.refs, 2);
	CHECK_EQ(kmock_kmalloc_live, 1);	/* 1000's entry */
	CHECK_EQ(l_eps(1000), 1);
	CHECK_EQ(l_bytes(1000), L_KB(64) + 1);
	dp_limits_uncharge(&c);
	CHECK(!c.charged, "uncharged");
	CHECK_EQ(l_locked(1000), 0);
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(l_eps(1000), 0);
	CHECK_EQ(l_bytes(1000), 0);
	dp_limits_uncharge(&c);
	dp_limits_uncharge(&never);
	l_clean();
}

/*
 * uid_max_endpoints: the bind that finds the uid at it gets EMFILE and
 * charges nothing; a release makes room; other uids are not affected;
 * the cap read at each bind, and root held to it with every capability.
 */
static void test_limits_endpoint_cap(void)
{
	struct dp_charge c[5], x;
	unsigned int i;

	l_setup();
	*kmock_param_uid_max_endpoints = 3;
	for (i = 0; i < 3; i++)
		CHECK_EQ(l_charge(&c[i], 1000, NULL, L_KB(4)), 0);
	CHECK_EQ(l_charge(&x, 1000, NULL, L_KB(4)), -EMFILE);
	CHECK(!x.charged, "not charged");
	CHECK_EQ(l_locked(1000), 3);
	CHECK_EQ(atomic64_read(&l.mm.pinned_vm), 3);
	CHECK_EQ(l_eps(1000), 3);
	CHECK_EQ(l_bytes(1000), L_KB(12));
	/* another uid, one in the same bucket of the mock's table */
	CHECK_EQ(l_charge(&c[3], 1064, NULL, L_KB(4)), 0);
	CHECK_EQ(l_eps(1064), 1);
	CHECK_EQ(l_eps(1000), 3);
	dp_limits_uncharge(&c[1]);
	CHECK_EQ(l_charge(&c[1], 1000, NULL, L_KB(4)), 0);
	*kmock_param_uid_max_endpoints = 2;			/* below what it holds */
	CHECK_EQ(l_charge(&x, 1000, NULL, 0), -EMFILE);
	dp_limits_uncharge(&c[0]);
	CHECK_EQ(l_charge(&x, 1000, NULL, 0), -EMFILE);	/* still at 2 */
	*kmock_param_uid_max_endpoints = 3;
	CHECK_EQ(l_charge(&c[0], 1000, NULL, 0), 0);
	kmock_caps = ~0ull;					/* root, all caps */
	*kmock_param_uid_max_endpoints = 1;
	CHECK_EQ(l_charge(&c[4], 0, NULL, 0), 0);
	CHECK_EQ(l_charge(&x, 0, NULL, 0), -EMFILE);
	for (i = 0; i < 5; i++)
		dp_limits_uncharge(&c[i]);
	l_clean();
}

/*
 * uid_max_pool_mb at bind: exactly the cap is taken, a byte more is
 * EDQUOT, over one endpoint or several.
 */
static void test_limits_pool_cap(void)
{
	struct dp_charge a, b, x;

	l_setup();
	CHECK_EQ(l_charge(&x, 1000, NULL, L_MB(1) + 1), -EDQUOT);
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(l_charge(&a, 1000, NULL, L_MB(1)), 0);
	CHECK_EQ(l_charge(&x, 1000, NULL, 1), -EDQUOT);
	CHECK_EQ(l_charge(&x, 1000, NULL, 0), 0);	/* no bytes: only an endpoint */
	dp_limits_uncharge(&x);
	dp_limits_uncharge(&a);
	CHECK_EQ(l_charge(&a, 1000, NULL, L_KB(768)), 0);
	CHECK_EQ(l_charge(&x, 1000, NULL, L_KB(256) + 1), -EDQUOT);
	CHECK_EQ(l_charge(&b, 1000, NULL, L_KB(256)), 0);
	CHECK_EQ(l_bytes(1000), L_MB(1));
	CHECK_EQ(l_eps(1000), 2);
	*kmock_param_uid_max_pool_mb = 2;			/* later binds */
	CHECK_EQ(l_charge(&x, 1000, NULL, L_MB(1)), 0);
	dp_limits_uncharge(&x);
	dp_limits_uncharge(&a);
	dp_limits_uncharge(&b);
	l_clean();
}

/* 0 is no limit, for either cap. */
static void test_limits_zero_is_no_limit(void)
{
	static struct dp_charge c[1100];
	struct dp_charge big;
	unsigned int i, n = 0;

	l_setup();
	*kmock_param_uid_max_endpoints = 0;
	while (n < 1100 && !l_charge(&c[n], 1000, NULL, 0))
		n++;
	CHECK_EQ(n, 1100);
	for (i = 0; i < n; i++)
		dp_limits_uncharge(&c[i]);
	*kmock_param_uid_max_endpoints = 4;
	*kmock_param_uid_max_pool_mb = 0;
	kmock_rlim[RLIMIT_MEMLOCK] = RLIM_INFINITY;
	CHECK_EQ(l_charge(&big, 1000, NULL, L_MB(1) << 20), 0);	/* 1 TiB */
	CHECK_EQ(dp_limits_grow(&big, L_MB(1) << 20), 0);
	dp_limits_uncharge(&big);
	l_clean();
}

/*
 * An edge (dp_limits_grow()) counts against the same cap: exactly to it,
 * EDQUOT a byte past it with nothing changed, never on locked_vm; a
 * shrink gives its bytes back, and a release gives back the pool and the
 * edges that are left, no more.
 */
static void test_limits_grow_shrink(void)
{
	struct dp_charge a, b, x;

	l_setup();
	CHECK_EQ(l_charge(&a, 1000, NULL, L_KB(256)), 0);
	CHECK_EQ(l_charge(&b, 1000, NULL, L_KB(256)), 0);
	CHECK_EQ(dp_limits_grow(&a, L_KB(256)), 0);
	CHECK_EQ(dp_limits_grow(&b, L_KB(256)), 0);	/* exactly the cap */
	CHECK_EQ(dp_limits_grow(&a, 1), -EDQUOT);
	CHECK_EQ(a.bytes, L_KB(512));
	CHECK_EQ(b.bytes, L_KB(512));
	CHECK_EQ(l_bytes(1000), L_MB(1));
	CHECK_EQ(l_charge(&x, 1000, NULL, 1), -EDQUOT);
	CHECK_EQ(l_locked(1000), 128);			/* the pools' pages only */
	CHECK_EQ(atomic64_read(&l.mm.pinned_vm), 128);
	dp_limits_shrink(&a, L_KB(64));
	CHECK_EQ(a.bytes, L_KB(448));
	CHECK_EQ(l_bytes(1000), L_KB(960));
	CHECK_EQ(dp_limits_grow(&b, L_KB(64) + 1), -EDQUOT);
	CHECK_EQ(dp_limits_grow(&b, L_KB(64)), 0);
	dp_limits_uncharge(&a);
	CHECK_EQ(l_bytes(1000), L_KB(576));		/* b's alone */
	CHECK_EQ(l_locked(1000), 64);
	dp_limits_shrink(&b, L_KB(576));
	CHECK_EQ(l_bytes(1000), 0);
	CHECK_EQ(l_eps(1000), 1);
	dp_limits_uncharge(&b);
	l_clean();
}

/*
 * The books' misuse is refused and warned about: a grow of an endpoint
 * not charged is EBADFD (even while its uid has others), a shrink of
 * more than it holds changes nothing.
 */
static void test_limits_grow_uncharged(void)
{
	struct dp_charge a, b, never = { 0 };

	l_setup();
	CHECK_EQ(dp_limits_grow(&never, 1), -EBADFD);
	CHECK_EQ(kmock_warn_ons, 1);
	CHECK_EQ(l_charge(&a, 1000, NULL, L_KB(64)), 0);
	dp_limits_shrink(&a, L_KB(64) + 1);
	CHECK_EQ(kmock_warn_ons, 2);
	CHECK_EQ(a.bytes, L_KB(64));
	CHECK_EQ(l_bytes(1000), L_KB(64));
	CHECK_EQ(l_charge(&b, 1000, NULL, L_KB(64)), 0);
	dp_limits_uncharge(&a);
	CHECK_EQ(dp_limits_grow(&a, 1), -EBADFD);
	CHECK_EQ(kmock_warn_ons, 3);
	CHECK_EQ(l_bytes(1000), L_KB(64));
	dp_limits_uncharge(&b);
	CHECK_EQ(dp_limits_grow(&b, 1), -EBADFD);
	CHECK_EQ(kmock_warn_ons, 4);
	CHECK_EQ(kmock_kmalloc_live, 0);
	kmock_warn_ons = 0;
	l_clean();
}

/*
 * A subordinate uid's charges count for it and for the owner of its
 * outermost user namespace below the initial one (docs/contract.md): its
 * subordinate uids share that user's caps, at any depth; a task whose
 * euid is that owner is charged once.
 */
static void test_limits_outer_owner(void)
{
	struct dp_charge c[4], x;
	unsigned int i;

	l_setup();
	*kmock_param_uid_max_endpoints = 3;
	CHECK_EQ(l_charge(&c[0], 100005, &l.ns[1], L_KB(64)), 0);	/* in B */
	CHECK(c[0].uid.val == 100005 && c[0].outer.val == 1000, "B: 1000's");
	CHECK_EQ(kmock_kmalloc_live, 2);
	CHECK_EQ(l_locked(100005), 16);		/* RLIMIT_MEMLOCK: the user's own */
	CHECK_EQ(l_locked(1000), 0);
	CHECK_EQ(l_charge(&c[1], 100006, &l.ns[0], L_KB(64)), 0);	/* in A */
	CHECK(c[1].outer.val == 1000, "A: 1000's");
	CHECK_EQ(l_charge(&c[2], 1000, &l.ns[0], L_KB(64)), 0);	/* the owner, in A */
	CHECK(c[2].uid.val == 1000 && c[2].outer.val == 1000, "1000 once");
	CHECK_EQ(kmock_kmalloc_live, 3);
	CHECK_EQ(l_eps(1000), 3);
	CHECK_EQ(l_bytes(1000), L_KB(192));
	CHECK_EQ(l_eps(100005), 1);
	CHECK_EQ(l_bytes(100006), L_KB(64));
	CHECK_EQ(l_charge(&x, 1000, NULL, 0), -EMFILE);
	CHECK_EQ(l_charge(&x, 100007, &l.ns[1], 0), -EMFILE);
	CHECK_EQ(kmock_kmalloc_live, 3);	/* 100007's made for nothing */
	CHECK_EQ(l_charge(&c[3], 200001, &l.ns[2], L_KB(64)), 0);	/* 2000's */
	CHECK_EQ(c[3].outer.val, 2000);
	CHECK_EQ(l_eps(1000), 3);
	for (i = 0; i < 4; i++)
		dp_limits_uncharge(&c[i]);
	CHECK_EQ(l_eps(1000), 0);
	l_clean();
}

/* The outer owner's bytes cap a subordinate uid's bind and edges too. */
static void test_limits_outer_bytes(void)
{
	struct dp_charge own, sub, x;

	l_setup();
	CHECK_EQ(l_charge(&own, 1000, NULL, L_KB(768)), 0);
	CHECK_EQ(l_charge(&x, 100005, &l.ns[1], L_KB(256) + 1), -EDQUOT);
	CHECK_EQ(l_charge(&sub, 100005, &l.ns[1], L_KB(128)), 0);
	CHECK_EQ(dp_limits_grow(&sub, L_KB(128) + 1), -EDQUOT);	/* 1000's cap */
	CHECK_EQ(l_bytes(100005), L_KB(128));	/* the uid's books unchanged */
	CHECK_EQ(dp_limits_grow(&sub, L_KB(128)), 0);
	CHECK_EQ(l_bytes(1000), L_MB(1));
	dp_limits_uncharge(&own);
	CHECK_EQ(l_bytes(1000), L_KB(256));
	/* and the uid's own cap, the owner under it */
	CHECK_EQ(l_charge(&own, 100005, NULL, L_KB(768)), 0);
	CHECK_EQ(dp_limits_grow(&sub, 1), -EDQUOT);
	CHECK_EQ(l_bytes(1000), L_KB(256));
	dp_limits_uncharge(&own);
	dp_limits_uncharge(&sub);
	l_clean();
}

/* Over both caps, on different uids: EMFILE first, then EDQUOT. */
static void test_limits_check_order(void)
{
	struct dp_charge own, x;

	l_setup();
	*kmock_param_uid_max_endpoints = 1;
	CHECK_EQ(l_charge(&own, 1000, NULL, 0), 0);
	CHECK_EQ(l_charge(&x, 100005, &l.ns[1], L_MB(2)), -EMFILE);
	dp_limits_uncharge(&own);
	CHECK_EQ(l_charge(&own, 1000, NULL, L_MB(1)), 0);
	*kmock_param_uid_max_endpoints = 2;
	CHECK_EQ(l_charge(&x, 100005, &l.ns[1], 0), 0);	/* 1 MiB + 0: fits */
	dp_limits_uncharge(&x);
	CHECK_EQ(l_charge(&x, 100005, &l.ns[1], 1), -EDQUOT);
	dp_limits_uncharge(&own);
	l_clean();
}

/* A bind's books: everything a failed charge could have touched. */
struct l_books {
	long live, locked;
	s64 pinned;
	int urefs, mmrefs;
	unsigned int eps[2];
	u64 bytes[2];
};

static void l_books(struct l_books *b, u32 uid, u32 outer)
{
	b->live = kmock_kmalloc_live;
	b->locked = l_locked(uid);
	b->pinned = atomic64_read(&l.mm.pinned_vm);
	b->urefs = l_user(uid)->__count.refs;
	b->mmrefs = l.mm.mm_count.refs;
	b->eps[0] = l_eps(uid);
	b->eps[1] = l_eps(outer);
	b->bytes[0] = l_bytes(uid);
	b->bytes[1] = l_bytes(outer);
}

static void l_books_same(const struct l_books *a, const struct l_books *b,
			 unsigned int i)
{
	CHECK(a->live == b->live, "case %u: entries %ld, then %ld", i, a->live, b->live);
	CHECK(a->locked == b->locked && a->pinned == b->pinned,
	      "case %u: pages locked %ld, pinned %lld, then %ld, %lld", i, a->locked,
	      (long long)a->pinned, b->locked, (long long)b->pinned);
	CHECK(a->urefs == b->urefs && a->mmrefs == b->mmrefs, "case %u: refs", i);
	CHECK(a->eps[0] == b->eps[0] && a->eps[1] == b->eps[1],
	      "case %u: endpoints %u, %u, then %u, %u", i, a->eps[0], a->eps[1],
	      b->eps[0], b->eps[1]);
	CHECK(a->bytes[0] == b->bytes[0] && a->bytes[1] == b->bytes[1],
	      "case %u: bytes %llu, %llu, then %llu, %llu", i,
	      (unsigned long long)a->bytes[0], (unsigned long long)a->bytes[1],
	      (unsigned long long)b->bytes[0], (unsigned long long)b->bytes[1]);
}

/* A bind of 100005 in B that fails, and what 100005 and 1000 hold before. */
struct l_fail {
	unsigned int sub, own;	/* endpoints 100005, 1000 hold alone */
	size_t held;		/* bytes each of them holds */
	size_t bytes;		/* the bind's */
	int fail_at;		/* kmock_kmalloc_fail_at */
	unsigned long memlock;	/* RLIMIT_MEMLOCK, or 0: the default */
	int err;
};

static void l_fail_case(const struct l_fail *f, unsigned int i)
{
	struct dp_charge held[2], x;
	struct l_books before, after;
	unsigned int k, n = 0;
	int err;

	l_setup();
	*kmock_param_uid_max_endpoints = 2;
	for (k = 0; k < f->sub; k++)
		CHECK_EQ(l_charge(&held[n++], 100005, NULL, f->held), 0);
	for (k = 0; k < f->own; k++)
		CHECK_EQ(l_charge(&held[n++], 1000, NULL, f->held), 0);
	if (f->memlock)
		kmock_rlim[RLIMIT_MEMLOCK] = f->memlock;
	l_books(&before, 100005, 1000);
	kmock_kmalloc_fail_at = f->fail_at;
	err = l_charge(&x, 100005, &l.ns[1], f->bytes);
	kmock_kmalloc_fail_at = 0;
	CHECK(err == f->err, "case %u: %d, not %d", i, err, f->err);
	CHECK(!x.charged && !x.user, "case %u: charged", i);
	l_books(&after, 100005, 1000);
	l_books_same(&before, &after, i);
	while (n)
		dp_limits_uncharge(&held[--n]);
	l_clean();
}

/*
 * Each way a bind of 100005 in B (charged to it and to 1000) can fail:
 * the errno it promises, and nothing charged: no entry left made, the
 * entries there unchanged, locked_vm, pinned_vm and references as they
 * were.
 */
static void test_limits_failed_charge(void)
{
	static const struct l_fail f[] = {
		{ 0, 0, 0, L_KB(64), 1, 0, -ENOMEM },		/* 100005's entry */
		{ 0, 0, 0, L_KB(64), 2, 0, -ENOMEM },		/* 1000's, after it */
		{ 1, 0, L_KB(64), L_KB(64), 1, 0, -ENOMEM },	/* 1000's, 100005's kept */
		{ 2, 0, 0, 0, 0, 0, -EMFILE },			/* 100005's cap */
		{ 0, 2, 0, 0, 0, 0, -EMFILE },			/* 1000's cap */
		{ 1, 0, L_KB(768), L_KB(512), 0, 0, -EDQUOT },	/* 100005's cap */
		{ 0, 1, L_KB(768), L_KB(512), 0, 0, -EDQUOT },	/* 1000's cap */
		{ 0, 0, 0, L_KB(128), 0, L_KB(64), -ENOBUFS },
		{ 1, 1, L_KB(32), L_KB(128), 0, L_KB(64), -ENOBUFS },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(f); i++)
		l_fail_case(&f[i], i);
}

/*
 * RLIMIT_MEMLOCK on the user's locked_vm, in whole pages: exactly the
 * limit is taken, a page more is ENOBUFS; CAP_IPC_LOCK (in the initial
 * namespace: capable()) skips it, and its release leaves locked_vm alone.
 */
static void test_limits_memlock(void)
{
	struct dp_charge a, b, x;

	l_setup();
	kmock_rlim[RLIMIT_MEMLOCK] = 16 * PAGE_SIZE;
	CHECK_EQ(l_charge(&a, 1000, NULL, 15 * PAGE_SIZE + 1), 0);
	CHECK_EQ(l_locked(1000), 16);
	CHECK_EQ(l_charge(&x, 1000, NULL, 1), -ENOBUFS);
	CHECK_EQ(l_eps(1000), 1);
	CHECK_EQ(l_charge(&x, 1000, NULL, 0), 0);	/* no pages */
	dp_limits_uncharge(&x);
	CHECK_EQ(l_charge(&b, 2000, NULL, 16 * PAGE_SIZE), 0);	/* its own */
	dp_limits_uncharge(&b);
	kmock_caps = L_CAP(CAP_IPC_LOCK);
	kmock_caps_ns = &l.ns[0];		/* root in its namespace: not capable() */
	CHECK_EQ(l_charge(&x, 1000, &l.ns[0], PAGE_SIZE), -ENOBUFS);
	kmock_caps_ns = NULL;
	CHECK_EQ(l_charge(&b, 1000, NULL, L_KB(64)), 0);
	CHECK(b.user == NULL, "no user charged");
	CHECK_EQ(l_locked(1000), 16);
	CHECK_EQ(atomic64_read(&l.mm.pinned_vm), 32);	/* pinned_vm all the same */
	CHECK_EQ(l_user(1000)->__count.refs, 2);	/* a's alone */
	kmock_caps = 0;
	dp_limits_uncharge(&b);
	CHECK_EQ(l_locked(1000), 16);
	dp_limits_uncharge(&a);
	l_clean();
}

/* Another task of the same user locks 4 pages while the charge runs. */
static void l_racer_locks(void)
{
	l.racer->locked_vm.counter += 4;
}

/*
 * locked_vm moves under a charge (between its read and its update): the
 * charge counts on top of the other's pages, or is refused if the two
 * together pass the limit; the other's pages are never lost.
 */
static void test_limits_memlock_race(void)
{
	struct dp_charge a, x;

	l_setup();
	kmock_rlim[RLIMIT_MEMLOCK] = 16 * PAGE_SIZE;
	l.racer = l_user(1000);
	kmock_cmpxchg_hook = l_racer_locks;
	CHECK_EQ(l_charge(&a, 1000, NULL, 8 * PAGE_SIZE), 0);
	CHECK(kmock_cmpxchg_hook == NULL, "the other ran");
	CHECK_EQ(l_locked(1000), 12);
	dp_limits_uncharge(&a);
	CHECK_EQ(l_locked(1000), 4);
	kmock_cmpxchg_hook = l_racer_locks;
	CHECK_EQ(l_charge(&x, 1000, NULL, 12 * PAGE_SIZE), -ENOBUFS);
	CHECK_EQ(l_locked(1000), 8);
	CHECK_EQ(l_eps(1000), 0);
	l.racer->locked_vm.counter = 0;
	l_clean();
}

/*
 * dpid_priv_max: DPIDs 1..N need CAP_NET_BIND_SERVICE in the user
 * namespace of the node's network namespace (or an ancestor's); at N,
 * not at N + 1; 0 makes every DPID unprivileged.
 */
static void test_limits_dpid_permitted(void)
{
	struct net net = { .user_ns = NULL };

	l_setup();
	net.user_ns = &l.ns[0];
	CHECK_EQ(dp_dpid_permitted(&net, 1), -EACCES);
	CHECK_EQ(dp_dpid_permitted(&net, 1022), -EACCES);
	CHECK_EQ(dp_dpid_permitted(&net, 1023), -EACCES);
	CHECK_EQ(dp_dpid_permitted(&net, 1024), 0);
	CHECK_EQ(dp_dpid_permitted(&net, U32_MAX), 0);
	kmock_caps = ~0ull & ~L_CAP(CAP_NET_BIND_SERVICE);
	CHECK_EQ(dp_dpid_permitted(&net, 1023), -EACCES);
	kmock_caps = L_CAP(CAP_NET_BIND_SERVICE);
	kmock_caps_ns = &l.ns[0];			/* the node's */
	CHECK_EQ(dp_dpid_permitted(&net, 1), 0);
	CHECK_EQ(dp_dpid_permitted(&net, 1023), 0);
	kmock_caps_ns = &l.ns[1];			/* one below it */
	CHECK_EQ(dp_dpid_permitted(&net, 1023), -EACCES);
	kmock_caps_ns = &l.ns[2];			/* another */
	CHECK_EQ(dp_dpid_permitted(&net, 1023), -EACCES);
	kmock_caps_ns = NULL;				/* the initial one */
	CHECK_EQ(dp_dpid_permitted(&net, 1023), 0);
	kmock_caps = 0;
	*kmock_param_dpid_priv_max = 5;
	CHECK_EQ(dp_dpid_permitted(&net, 4), -EACCES);
	CHECK_EQ(dp_dpid_permitted(&net, 5), -EACCES);
	CHECK_EQ(dp_dpid_permitted(&net, 6), 0);
	*kmock_param_dpid_priv_max = 0;
	CHECK_EQ(dp_dpid_permitted(&net, 1), 0);
	*kmock_param_dpid_priv_max = U32_MAX;
	CHECK_EQ(dp_dpid_permitted(&net, U32_MAX), -EACCES);
	l_clean();
}

/*
 * uid_max_pool_mb's default, picked at load if not given: a quarter of
 * RAM in MiB, at least 65 so that one largest pool (control page and
 * data area) always fits; a value given is kept, 0 too.
 */
static void test_limits_init(void)
{
	static const struct { unsigned long ram_mb; unsigned int mb; } d[] = {
		{ 16384, 4096 }, { 264, 66 }, { 260, 65 }, { 256, 65 }, { 64, 65 },
	};
	struct dp_charge a, x;
	unsigned int i;

	l_setup();
	for (i = 0; i < ARRAY_SIZE(d); i++) {
		*kmock_param_uid_max_pool_mb = UINT_MAX;
		kmock_totalram_pages = d[i].ram_mb << (20 - PAGE_SHIFT);
		dp_limits_init();
		CHECK(*kmock_param_uid_max_pool_mb == d[i].mb, "%lu MiB of RAM: %u",
		      d[i].ram_mb, *kmock_param_uid_max_pool_mb);
	}
	kmock_rlim[RLIMIT_MEMLOCK] = RLIM_INFINITY;
	CHECK_EQ(l_charge(&a, 1000, NULL, DP_POOL_CTRL_SIZE + DP_POOL_MAX), 0);
	CHECK_EQ(l_charge(&x, 1000, NULL, L_MB(1)), -EDQUOT);
	dp_limits_uncharge(&a);
	*kmock_param_uid_max_pool_mb = 7;
	dp_limits_init();
	CHECK_EQ(*kmock_param_uid_max_pool_mb, 7);
	*kmock_param_uid_max_pool_mb = 0;
	dp_limits_init();
	CHECK_EQ(*kmock_param_uid_max_pool_mb, 0);
	l_clean();
}

const struct unit_test limits_tests[] = {
	{ "limits_charge_uncharge", test_limits_charge_uncharge },
	{ "limits_endpoint_cap", test_limits_endpoint_cap },
	{ "limits_pool_cap", test_limits_pool_cap },
	{ "limits_zero_is_no_limit", test_limits_zero_is_no_limit },
	{ "limits_grow_shrink", test_limits_grow_shrink },
	{ "limits_grow_uncharged", test_limits_grow_uncharged },
	{ "limits_outer_owner", test_limits_outer_owner },
	{ "limits_outer_bytes", test_limits_outer_bytes },
	{ "limits_check_order", test_limits_check_order },
	{ "limits_failed_charge", test_limits_failed_charge },
	{ "limits_memlock", test_limits_memlock },
	{ "limits_memlock_race", test_limits_memlock_race },
	{ "limits_dpid_permitted", test_limits_dpid_permitted },
	{ "limits_init", test_limits_init },
	{ NULL, NULL },
};
