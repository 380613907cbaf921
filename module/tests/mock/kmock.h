/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thin mock of the kernel for host builds of the session layer
 * (dp_snd.c, dp_rcv.c), neighbour discovery (dp_disc.c), and the files
 * built over the whole of dp.h (dp_cork.c, dp_tx.c, dp_batch.c,
 * dp_mdr.c, dp_limits.c, dp_pool.c, dp_edge.c): just the calls those
 * files make, in plain C11 plus GNU typeof.  The linux/ and net/ headers
 * beside this one only include it.
 *
 * Time is a counter the tests move (HZ = 1000: a jiffy is a millisecond).
 * Timers and work items are recorded when armed or queued and run by
 * kmock_run() when due, in process context, one at a time.  Locks record
 * whether they are held, so lockdep_assert_held() and might_sleep() check
 * what the kernel's would; a violation is counted in kmock_lockdep_errors.
 * kmalloc() and copy_from_user() fail on demand.
 */
#ifndef _DP_KMOCK_H
#define _DP_KMOCK_H

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>

#include "dp_agnostic.h"

#define typeof __typeof__

typedef int64_t s64;
typedef unsigned int gfp_t;

#define __user
#define __rcu
#define __percpu
#define __always_unused
#define likely(x) (x)
#define unlikely(x) (x)

#ifndef READ_ONCE	/* dp_agnostic.h may have them */
#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define min(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b) ({ typeof(a) _a = (a); typeof(b) _b = (b); _a > _b ? _a : _b; })
#define max_t(t, a, b) max((t)(a), (t)(b))
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define U32_MAX ((u32)~0u)

#define ERESTARTSYS 512
#define MAX_ERRNO 4095
static inline void *ERR_PTR(long err) { return (void *)err; }
static inline long PTR_ERR(const void *p) { return (long)p; }
static inline bool IS_ERR(const void *p)
{
	return (unsigned long)p >= (unsigned long)-MAX_ERRNO;
}

/* ---- checks ---- */
extern int kmock_lockdep_errors;	/* lock rules broken so far */
extern int kmock_spin_depth;		/* spinlocks held now */
void kmock_lockdep_fail(const char *what, const char *file, int line);

#define might_sleep()							\
	do {								\
		if (kmock_spin_depth)					\
			kmock_lockdep_fail("might_sleep under a spinlock", \
					   __FILE__, __LINE__);		\
	} while (0)
#define lockdep_assert_held(l)						\
	do {								\
		if (!(l)->held)						\
			kmock_lockdep_fail("lock not held: " #l,	\
					   __FILE__, __LINE__);		\
	} while (0)
#define lockdep_is_held(l) ((l)->held)

/* ---- memory ---- */
#define GFP_KERNEL		0x1u
#define GFP_ATOMIC		0x2u
#define GFP_KERNEL_ACCOUNT	0x4u
#define __GFP_NOWARN		0x8u

extern int kmock_kmalloc_fail;	/* fail the next n allocations */
extern int kmock_kmalloc_fail_at;	/* fail only the nth from now */
extern long kmock_kmalloc_live;	/* allocations not freed */
extern long kmock_kmalloc_snd;	/* allocations dp_snd.c asked for */
void *kmock_kmalloc(size_t size, gfp_t gfp, const char *file);
void *kzalloc(size_t size, gfp_t gfp);
#define kmalloc(size, gfp) kmock_kmalloc(size, gfp, __FILE__)
void kfree(const void *p);
#define kfree_rcu(p, field) kfree(p)
/* Page allocations count as kmalloc's do (dp_snd.c's copies are pages). */
#define alloc_pages_exact(size, gfp) kmock_kmalloc(size, gfp, __FILE__)
#define free_pages_exact(p, size) ((void)(size), kfree(p))
/*
 * Pages (dp_snd.c cuts copy slots from them), each with a reference
 * count: counted as one allocation each, freed with their last
 * reference; a reference taken or put on no live page aborts the test.
 */
#define PAGE_SIZE 4096ul
struct page;
struct page *kmock_alloc_page(gfp_t gfp, const char *file);
#define alloc_page(gfp) kmock_alloc_page(gfp, __FILE__)
void *page_address(const struct page *page);
struct page *virt_to_page(const void *addr);
void page_ref_add(struct page *page, int n);
void page_ref_sub(struct page *page, int n);
void put_page(struct page *page);
extern long kmock_pages_live;	/* pages not freed */
#define struct_size(p, member, n) (sizeof(*(p)) + (size_t)(n) * sizeof((p)->member[0]))

extern int kmock_uaccess_fail;	/* fail the next n copies */
/*
 * A byte of user memory that faults (NULL: none): a copy from a range
 * that holds it copies the bytes before it and fails, as the kernel's
 * does at an unmapped page; put_user() to it fails.
 */
extern const void *kmock_uaccess_bad;
#define u64_to_user_ptr(x) ((void __user *)(uintptr_t)(x))
int kmock_put_user(const void *src, void __user *dst, size_t n);
#define put_user(v, p)							\
	({ typeof(*(p)) _v = (v); kmock_put_user(&_v, (p), sizeof(_v)); })
extern void (*kmock_uaccess_hook)(void);	/* before each copy, if set */
extern long kmock_mod_timers;	/* mod_timer() calls so far */
unsigned long copy_from_user(void *to, const void __user *from, unsigned long n);
/* the kernel's fuses the two: here copy_from_user(), then the CRC */
int dp_crc32c_copy_from_user(u32 *crc, void *dst, const void __user *src, size_t len);

/*
 * A full barrier: what another CPU may do between a store and a load that
 * smp_mb() orders is what kmock_mb_hook (if set) does here, once per
 * call; the hook is cleared before it runs.
 */
extern void (*kmock_mb_hook)(void);
static inline void smp_mb(void)
{
	void (*hook)(void) = kmock_mb_hook;

	kmock_mb_hook = NULL;
	if (hook)
		hook();
}

/* ---- time and randomness ---- */
#define HZ 1000
extern unsigned long jiffies;
#define msecs_to_jiffies(ms) ((unsigned long)(ms))
#define jiffies_to_msecs(j) ((unsigned int)(j))
#define usecs_to_jiffies(us) (((unsigned long)(us) + 999) / 1000)
#define time_after(a, b) ((long)((b) - (a)) < 0)
#define time_before(a, b) time_after(b, a)
#define time_after_eq(a, b) ((long)((a) - (b)) >= 0)
u64 ktime_get_ns(void);		/* jiffies in ns, plus kmock_ns_extra */
extern u64 kmock_ns_extra;
static inline u64 div_u64(u64 a, u32 b) { return a / b; }
u32 get_random_u32(void);	/* kmock_random, then counts up */
extern u32 kmock_random;

/* ---- locks and atomics ---- */
typedef struct { int held; } spinlock_t;
struct mutex { int held; };
void kmock_lock(int *held, bool spin);
void kmock_unlock(int *held, bool spin);
#define spin_lock_init(l) ((l)->held = 0)
#define spin_lock_irq(l) kmock_lock(&(l)->held, true)
#define spin_unlock_irq(l) kmock_unlock(&(l)->held, true)
#define spin_lock_irqsave(l, f) do { (f) = 0; kmock_lock(&(l)->held, true); } while (0)
#define spin_unlock_irqrestore(l, f) do { (void)(f); kmock_unlock(&(l)->held, true); } while (0)
#define mutex_init(m) ((m)->held = 0)
#define mutex_lock(m) kmock_lock(&(m)->held, false)
#define mutex_unlock(m) kmock_unlock(&(m)->held, false)
int kmock_mutex_lock_interruptible(struct mutex *m);
#define mutex_lock_interruptible(m) kmock_mutex_lock_interruptible(m)

typedef struct { s64 counter; } atomic64_t;
typedef struct { int counter; } atomic_t;
#define atomic64_read(a) ((a)->counter)
#define atomic64_set(a, v) ((a)->counter = (v))
#define atomic64_add(n, a) ((a)->counter += (n))
#define atomic64_inc(a) ((a)->counter++)

/* refcount_t: a count that must never be taken from 0 nor go below it */
typedef struct { int refs; } refcount_t;
extern int kmock_refcount_errors;	/* refcount misuse so far */
#define refcount_set(r, n) ((r)->refs = (n))
static inline void refcount_inc(refcount_t *r)
{
	if (r->refs <= 0)
		kmock_refcount_errors++;
	r->refs++;
}

static inline bool refcount_dec_and_test(refcount_t *r)
{
	if (r->refs <= 0)
		kmock_refcount_errors++;
	return --r->refs == 0;
}

/* ---- lists ---- */
struct list_head { struct list_head *next, *prev; };
#define LIST_HEAD(name) struct list_head name = { &(name), &(name) }
static inline void INIT_LIST_HEAD(struct list_head *l) { l->next = l; l->prev = l; }
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}
static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = NULL;
	n->prev = NULL;
}
static inline void list_move_tail(struct list_head *n, struct list_head *head)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_add_tail(n, head);
}

static inline int list_is_last(const struct list_head *n,
			       const struct list_head *head)
{
	return n->next == head;
}

static inline void list_add(struct list_head *n, struct list_head *head)
{
	list_add_tail(n, head->next);	/* before the first: at the head */
}

static inline void list_move(struct list_head *n, struct list_head *head)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	list_add(n, head);
}

static inline void list_del_init(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	INIT_LIST_HEAD(n);
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

static inline void list_splice_init(struct list_head *list,
				    struct list_head *head)
{
	if (list_empty(list))
		return;
	list->next->prev = head;
	list->prev->next = head->next;
	head->next->prev = list->prev;
	head->next = list->next;
	INIT_LIST_HEAD(list);
}

#define list_entry(p, type, member) container_of(p, type, member)
#define list_first_entry_or_null(head, type, member)			\
	(list_empty(head) ? NULL : list_entry((head)->next, type, member))
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_for_each_entry(pos, head, member)				\
	for (pos = list_entry((head)->next, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_entry(pos->member.next, typeof(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_entry((head)->next, typeof(*pos), member),	\
	     n = list_entry(pos->member.next, typeof(*pos), member);	\
	     &pos->member != (head);					\
	     pos = n, n = list_entry(n->member.next, typeof(*n), member))

/* ---- hash tables (RCU variants are the plain ones: one thread) ---- */
struct hlist_node { struct hlist_node *next, **pprev; };
#define hlist_unhashed_lockless(h) (!READ_ONCE((h)->pprev))
struct hlist_head { struct hlist_node *first; };
struct rcu_head { void *unused; };
#define DECLARE_HASHTABLE(name, bits) struct hlist_head name[1 << (bits)]
#define HASH_SIZE(name) (ARRAY_SIZE(name))
#define hash_init(t) memset((t), 0, sizeof(t))
static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	n->next = h->first;
	if (h->first)
		h->first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}
static inline void hlist_del(struct hlist_node *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
}
#define hash_add(t, n, key) hlist_add_head(n, &(t)[(key) % HASH_SIZE(t)])
#define hash_add_rcu hash_add
#define hash_del(n) hlist_del(n)
#define hash_del_rcu hash_del
#define hlist_entry_safe(p, type, member) \
	({ typeof(p) _p = (p); _p ? container_of(_p, type, member) : NULL; })
#define hlist_for_each_entry(pos, head, member)				\
	for (pos = hlist_entry_safe((head)->first, typeof(*pos), member); \
	     pos;							\
	     pos = hlist_entry_safe((pos)->member.next, typeof(*pos), member))
#define hlist_for_each_entry_safe(pos, n, head, member)			\
	for (pos = hlist_entry_safe((head)->first, typeof(*pos), member); \
	     pos && ({ n = pos->member.next; 1; });			\
	     pos = hlist_entry_safe(n, typeof(*pos), member))
#define hash_for_each_possible_rcu(t, obj, member, key, ...)	\
	hlist_for_each_entry(obj, &(t)[(key) % HASH_SIZE(t)], member)
#define hash_for_each_possible(t, obj, member, key)			\
	hlist_for_each_entry(obj, &(t)[(key) % HASH_SIZE(t)], member)
#define hash_for_each(t, bkt, obj, member)				\
	for ((bkt) = 0, obj = NULL; obj == NULL && (bkt) < (int)HASH_SIZE(t); \
	     (bkt)++)							\
		hlist_for_each_entry(obj, &(t)[bkt], member)
#define hash_for_each_rcu hash_for_each
#define hash_for_each_safe(t, bkt, tmp, obj, member)			\
	for ((bkt) = 0, obj = NULL; obj == NULL && (bkt) < (int)HASH_SIZE(t); \
	     (bkt)++)							\
		hlist_for_each_entry_safe(obj, tmp, &(t)[bkt], member)

/*
 * The kernel's jhash_2words() (linux/jhash.h), so buckets spread alike;
 * counted, so a test can tell a hash lookup happened.
 */
extern long kmock_jhash_calls;

static inline u32 kmock_rol32(u32 w, unsigned int s)
{
	return (w << s) | (w >> (32 - s));
}

static inline u32 jhash_2words(u32 a, u32 b, u32 initval)
{
	u32 c = initval + 0xdeadbeefu + (2 << 2);

	kmock_jhash_calls++;

	a += c;
	b += c;
	c ^= b; c -= kmock_rol32(b, 14);
	a ^= c; a -= kmock_rol32(c, 11);
	b ^= a; b -= kmock_rol32(a, 25);
	c ^= b; c -= kmock_rol32(b, 16);
	a ^= c; a -= kmock_rol32(c, 4);
	b ^= a; b -= kmock_rol32(a, 14);
	c ^= b; c -= kmock_rol32(b, 24);
	return c;
}

/* ---- tracepoints the tests count ---- */
/* Retransmissions (trace_dp_retransmit): [0] going back, [1] a hole's. */
extern unsigned long kmock_resent[2];
static inline void kmock_retransmit(const void *s, u32 seq, bool fast)
{
	(void)s;
	(void)seq;
	kmock_resent[fast]++;
}

/* ---- timers and work: recorded, run by kmock_run() ---- */
struct timer_list {
	void (*fn)(struct timer_list *t);
	unsigned long expires;
	bool pending;
};
struct work_struct {
	void (*fn)(struct work_struct *w);
	unsigned long due;
	bool pending;
};
struct delayed_work { struct work_struct work; };
struct workqueue_struct;

#define timer_setup(t, f, flags) ((t)->fn = (f), (t)->pending = false)
#define from_timer(var, t, field) container_of(t, typeof(*var), field)
int mod_timer(struct timer_list *t, unsigned long expires);
int del_timer_sync(struct timer_list *t);

#define INIT_WORK(w, f) ((w)->fn = (f), (w)->pending = false)
#define INIT_DELAYED_WORK(dw, f) INIT_WORK(&(dw)->work, f)
#define to_delayed_work(w) container_of(w, struct delayed_work, work)
bool queue_work(struct workqueue_struct *wq, struct work_struct *w);
bool queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
			unsigned long delay);
bool mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
		      unsigned long delay);
bool cancel_work_sync(struct work_struct *w);
bool cancel_delayed_work_sync(struct delayed_work *dw);

/* Run every timer and work item due now; returns how many ran. */
int kmock_run(void);
/*
 * Fire the timers due now and leave the work they queue pending: in the
 * kernel a worker runs it later, and frames can arrive (softirq) before it
 * does.  Returns how many fired.
 */
int kmock_fire_timers(void);
/* Move the clock by @ms, a jiffy at a time, running what falls due. */
void kmock_advance(unsigned long ms);
/* Forget every timer and work item; reset the clock and the checks. */
void kmock_reset(void);
int kmock_pending(void);

/* ---- RCU: one thread, so readers need nothing ---- */
#define rcu_read_lock() do { } while (0)
#define rcu_read_unlock() do { } while (0)
#define rcu_dereference(p) (p)
#define rcu_access_pointer(p) (p)

/* ---- log ---- */
extern int kmock_warns;		/* pr_warn_ratelimited() lines so far */
#define pr_warn_ratelimited(...) ((void)kmock_warns++)

/* ---- wait queues ---- */
/* @key: the poll mask of the last wake_up_interruptible_poll(). */
typedef struct { int sleepers; int wakeups; unsigned int key; } wait_queue_head_t;
#define init_waitqueue_head(q) ((q)->sleepers = 0, (q)->wakeups = 0, (q)->key = 0)
#define wake_up_interruptible_all(q) ((q)->wakeups++)
#define wake_up_all(q) ((q)->wakeups++)
#define EPOLLIN		0x00000001u
#define EPOLLRDNORM	0x00000040u
#define wake_up_interruptible_poll(q, m) ((q)->wakeups++, (q)->key = (m))
#define wq_has_sleeper(q) ((q)->sleepers > 0)
/*
 * A waiter asleep: kmock_wait_hook (if set) plays the rest of the world
 * (delivers frames, moves time) up to kmock_wait_rounds times until the
 * condition holds; otherwise the sleep ends as if by a signal.
 */
extern void (*kmock_wait_hook)(void);
extern int kmock_wait_rounds;
#define wait_event_interruptible(q, cond)				\
	({								\
		int _r = 0, _n = 0;					\
		(q).sleepers++;						\
		while (!(cond) && kmock_wait_hook && _n++ < kmock_wait_rounds) \
			kmock_wait_hook();				\
		(q).sleepers--;						\
		if (!(cond))						\
			_r = -ERESTARTSYS;				\
		_r;							\
	})

/* No fatal signals here: a killable wait is an interruptible one. */
#define wait_event_killable(q, cond) wait_event_interruptible(q, cond)
#define mutex_lock_killable(m) kmock_mutex_lock_interruptible(m)

/*
 * ---- what dp.h declares beyond the session layer (the builds over it) ----
 * Types only a pointer of which dp.h holds stay incomplete.
 */
#define IFNAMSIZ 16
#define min_t(t, a, b) min((t)(a), (t)(b))
#define data_race(x) (x)
#define O_NONBLOCK 04000
typedef struct { u32 val; } kuid_t;
/*
 * The initial user namespace and any a test builds below it (struct
 * user_namespace, below): a kuid is the global uid, make_kuid() maps a
 * uid to itself.
 */
struct user_namespace;
extern struct user_namespace *const kmock_init_user_ns;
#define init_user_ns (*kmock_init_user_ns)
#define make_kuid(ns, uid) ((void)(ns), (kuid_t){ .val = (uid) })
#define uid_eq(a, b) ((a).val == (b).val)
typedef void *fl_owner_t;
struct completion { int done; };
struct xarray { void *head; };
struct file { unsigned int f_flags; };
struct vm_area_struct {
	unsigned long vm_start, vm_end, vm_pgoff;
	unsigned long vm_flags;
};
struct wait_queue_entry { void *func; };
struct sk_buff;
struct cred;
struct net;
struct file_operations;
struct dentry;
struct task_struct;
struct user_struct;
struct user_namespace;
struct mm_struct;

/* Each parameter's variable, for the tests: kmock_param_NAME points at it. */
#define module_param_named(name, var, type, perm) \
	typeof(var) *const kmock_param_##name = &(var)
#define MODULE_PARM_DESC(name, text) \
	extern const char kmock_param_desc_##name[]

/* The running task: a test may play another one by setting it. */
extern struct task_struct *current;
#define cmpxchg(p, old, new) \
	({ typeof(*(p)) _o = (old); \
	   __atomic_compare_exchange_n((p), &_o, (new), false, \
				       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); _o; })
/*
 * What a reader on another CPU may find just before each release store
 * is what kmock_release_hook (if set) looks at; it stays set.
 */
extern void (*kmock_release_hook)(void);
#define smp_store_release(p, v)						\
	do {								\
		if (kmock_release_hook)					\
			kmock_release_hook();				\
		__atomic_store_n((p), (v), __ATOMIC_RELEASE);		\
	} while (0)

#define atomic_read(a) ((a)->counter)
#define atomic_set(a, v) ((a)->counter = (v))
#define atomic_inc(a) ((void)(a)->counter++)
#define atomic_dec_return(a) (--(a)->counter)
static inline void refcount_dec(refcount_t *r)
{
	if (r->refs <= 1)	/* the kernel's WARNs: dec to 0 leaks */
		kmock_refcount_errors++;
	r->refs--;
}

/*
 * local_clock() is ktime_get_ns()'s clock.  An hrtimer is recorded when
 * started (kmock_pending() counts it while armed) and fired by
 * kmock_hrtimer_fire() (hard irq: its callback runs with no lock held).
 */
#define NSEC_PER_USEC 1000ull
#define local_clock() ktime_get_ns()
enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_REL };
#define CLOCK_MONOTONIC 1
struct hrtimer {
	enum hrtimer_restart (*function)(struct hrtimer *t);
	u64 expires;		/* ns, on ktime_get_ns()'s clock */
	bool queued;
	unsigned long starts;	/* hrtimer_start() calls */
};
#define hrtimer_init(t, clock, mode) \
	((t)->function = NULL, (t)->queued = false, (t)->starts = 0)
void hrtimer_start(struct hrtimer *t, u64 ns, enum hrtimer_mode mode);
int hrtimer_cancel(struct hrtimer *t);
static inline bool hrtimer_is_queued(const struct hrtimer *t)
{
	return t->queued;
}
/* Fire @t if it is armed and due (ktime_get_ns() >= expires). */
bool kmock_hrtimer_fire(struct hrtimer *t);

/*
 * ---- what dp_limits.c and dp_pool.c use ----
 * The running task's credentials, capabilities and RLIMIT_MEMLOCK are
 * what the tests set: kmock_caps (bit CAP_x) held in kmock_caps_ns (NULL:
 * the initial namespace) and the user namespaces below it, as
 * ns_capable() finds a capability in a namespace or an ancestor.
 * WARN_ON_ONCE() counts every time it fires, so each test sees its own.
 */
extern int kmock_warn_ons;	/* WARN_ON_ONCE() fired so far */
#define WARN_ON_ONCE(c) \
	({ bool _w = !!(c); if (_w) kmock_warn_ons++; _w; })

#define PAGE_SHIFT 12
#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))
static inline bool is_power_of_2(unsigned long n)
{
	return n && !(n & (n - 1));
}
extern unsigned long kmock_totalram_pages;
static inline unsigned long totalram_pages(void)
{
	return kmock_totalram_pages;
}

#define DEFINE_HASHTABLE(name, bits) struct hlist_head name[1 << (bits)]
#define DEFINE_MUTEX(name) struct mutex name = { 0 }
#define __kuid_val(uid) ((uid).val)

typedef struct { long counter; } atomic_long_t;
#define atomic_long_read(a) ((a)->counter)
#define atomic_long_sub(n, a) ((a)->counter -= (n))
/*
 * What another task may do between the read of a counter and the
 * compare-and-exchange that updates it is what kmock_cmpxchg_hook (if
 * set) does here, once; the hook is cleared before it runs.  The old
 * value may be an unsigned long's (the kernel builds with -Wno-pointer-sign).
 */
extern void (*kmock_cmpxchg_hook)(void);
static inline bool kmock_long_try_cmpxchg(atomic_long_t *a, long *old, long new)
{
	void (*hook)(void) = kmock_cmpxchg_hook;

	kmock_cmpxchg_hook = NULL;
	if (hook)
		hook();
	return __atomic_compare_exchange_n(&a->counter, old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
#define atomic_long_try_cmpxchg(a, old, new) \
	kmock_long_try_cmpxchg(a, (long *)(old), new)
#define atomic64_sub(n, a) ((a)->counter -= (n))
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

struct user_namespace {
	struct user_namespace *parent;	/* NULL for the initial one */
	kuid_t owner;
};
/* A user's own count (RLIMIT_MEMLOCK's locked_vm): its creds hold one ref. */
struct user_struct {
	refcount_t __count;
	atomic_long_t locked_vm;
};
struct cred {
	kuid_t euid;
	struct user_struct *user;
	struct user_namespace *user_ns;
};
struct mm_struct {
	atomic64_t pinned_vm;
	refcount_t mm_count;	/* its task holds one */
};
struct task_struct { struct mm_struct *mm; };
struct net { struct user_namespace *user_ns; };

static inline struct user_struct *get_uid(struct user_struct *u)
{
	refcount_inc(&u->__count);
	return u;
}
#define free_uid(u) refcount_dec(&(u)->__count)
#define mmgrab(mm) refcount_inc(&(mm)->mm_count)
#define mmdrop(mm) refcount_dec(&(mm)->mm_count)

#define CAP_NET_BIND_SERVICE	10
#define CAP_IPC_LOCK		14
extern u64 kmock_caps;
extern struct user_namespace *kmock_caps_ns;
bool ns_capable(struct user_namespace *ns, int cap);
#define capable(cap) ns_capable(&init_user_ns, cap)

#define RLIMIT_MEMLOCK	8
#define RLIM_NLIMITS	16
#define RLIM_INFINITY	(~0ul)
extern unsigned long kmock_rlim[RLIM_NLIMITS];	/* the running task's */
#define rlimit(r) kmock_rlim[r]

/* vmalloc memory is page-aligned, counted as kmalloc's is. */
#define __GFP_ZERO 0x10u
void *kmock_vmalloc(size_t size, gfp_t gfp, const char *file);
#define __vmalloc(size, gfp) kmock_vmalloc(size, gfp, __FILE__)
#define vfree(p) kfree(p)
static inline void *kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return size && n > SIZE_MAX / size ? NULL : kzalloc(n * size, gfp);
}

extern long kmock_resched;	/* cond_resched() calls so far */
#define cond_resched() do { might_sleep(); kmock_resched++; } while (0)

#define VM_WRITE	0x00000002ul
#define VM_EXEC		0x00000004ul
#define VM_SHARED	0x00000008ul
#define VM_MAYWRITE	0x00000020ul
#define VM_MAYEXEC	0x00000040ul
#define VM_MAYSHARE	0x00000080ul
#define VM_DONTCOPY	0x00020000ul
#define VM_DONTEXPAND	0x00040000ul
#define VM_DONTDUMP	0x04000000ul
#define vmalloc_to_page(addr) virt_to_page(addr)
/* Each insertion goes to kmock_vm_insert_hook (if set): its result is the call's. */
extern int (*kmock_vm_insert_hook)(struct vm_area_struct *vma,
				   unsigned long addr, struct page *page);
int vm_insert_page(struct vm_area_struct *vma, unsigned long addr,
		   struct page *page);

/*
 * ---- what dp_edge.c uses ----
 * An RCU pointer's publication is a plain store (one thread); a large
 * raw message's copy (kvmalloc()) counts as kmalloc's does, and fails
 * with it.  __uninitialized leaves a local as C does.
 */
#define rcu_assign_pointer(p, v) ((p) = (v))
#define RCU_INIT_POINTER(p, v) ((p) = (v))
#define __uninitialized
#define atomic_inc_return(a) (++(a)->counter)
#define kvmalloc(size, gfp) kmock_kmalloc(size, gfp, __FILE__)
#define kvfree(p) kfree(p)
static inline bool refcount_inc_not_zero(refcount_t *r)
{
	if (r->refs <= 0)
		return false;
	r->refs++;
	return true;
}

#endif /* _DP_KMOCK_H */
