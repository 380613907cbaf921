// SPDX-License-Identifier: GPL-2.0
/* The mock kernel's state: clock, allocations, locks, timers, work. */
#include <stdio.h>

#include "kmock.h"

unsigned long jiffies;
u64 kmock_ns_extra;
u32 kmock_random;
int kmock_lockdep_errors;
int kmock_refcount_errors;
int kmock_spin_depth;
static struct task_struct kmock_task0;
struct task_struct *current = &kmock_task0;
static struct user_namespace kmock_ns0;
struct user_namespace *const kmock_init_user_ns = &kmock_ns0;
/* dp_main.c's workqueue: queue_work() here ignores which queue */
struct workqueue_struct *dp_wq;
int kmock_kmalloc_fail;
int kmock_kmalloc_fail_at;
long kmock_kmalloc_live;
long kmock_kmalloc_snd;
int kmock_uaccess_fail;
void (*kmock_uaccess_hook)(void);
long kmock_mod_timers;
long kmock_jhash_calls;
int kmock_warns;
void (*kmock_wait_hook)(void);
void (*kmock_mb_hook)(void);
void (*kmock_release_hook)(void);
int kmock_wait_rounds = 1000;
int kmock_warn_ons;
unsigned long kmock_totalram_pages;
void (*kmock_cmpxchg_hook)(void);
u64 kmock_caps;
struct user_namespace *kmock_caps_ns;
unsigned long kmock_rlim[RLIM_NLIMITS];
long kmock_resched;
int (*kmock_vm_insert_hook)(struct vm_area_struct *vma, unsigned long addr,
			    struct page *page);

#define KMOCK_SLOTS 256

/* What is armed or queued, in the order it was */
static struct timer_list *timers[KMOCK_SLOTS];
static struct work_struct *works[KMOCK_SLOTS];
static struct hrtimer *hrtimers[KMOCK_SLOTS];

void kmock_lockdep_fail(const char *what, const char *file, int line)
{
	kmock_lockdep_errors++;
	printf("#   kmock: %s at %s:%d\n", what, file, line);
}

void kmock_lock(int *held, bool spin)
{
	if (*held)
		kmock_lockdep_fail("lock taken twice", __FILE__, __LINE__);
	if (!spin && kmock_spin_depth)
		kmock_lockdep_fail("mutex under a spinlock", __FILE__, __LINE__);
	*held = 1;
	kmock_spin_depth += spin;
}

void kmock_unlock(int *held, bool spin)
{
	if (!*held)
		kmock_lockdep_fail("unlock of a free lock", __FILE__, __LINE__);
	*held = 0;
	kmock_spin_depth -= spin;
}

int kmock_mutex_lock_interruptible(struct mutex *m)
{
	kmock_lock(&m->held, false);
	return 0;
}

/* Whether an allocation asked for from @file may succeed; counts it. */
static bool kmock_alloc_ok(const char *file)
{
	size_t n = strlen(file);

	if (n >= 8 && !strcmp(file + n - 8, "dp_snd.c"))
		kmock_kmalloc_snd++;
	if (kmock_kmalloc_fail > 0) {
		kmock_kmalloc_fail--;
		return false;
	}
	if (kmock_kmalloc_fail_at > 0 && !--kmock_kmalloc_fail_at)
		return false;
	return true;
}

void *kmock_kmalloc(size_t size, gfp_t gfp, const char *file)
{
	void *p;

	(void)gfp;
	if (!kmock_alloc_ok(file))
		return NULL;
	p = malloc(size);
	if (p)
		kmock_kmalloc_live++;
	return p;
}

/* A live page: its address and reference count. */
struct kmock_page {
	void *addr;
	int ref;
	struct kmock_page *next;
};

static struct kmock_page *kmock_pages;
long kmock_pages_live;

struct page *kmock_alloc_page(gfp_t gfp, const char *file)
{
	struct kmock_page *pg;

	(void)gfp;
	if (!kmock_alloc_ok(file))
		return NULL;
	pg = malloc(sizeof(*pg));
	if (!pg)
		return NULL;
	pg->addr = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!pg->addr) {
		free(pg);
		return NULL;
	}
	pg->ref = 1;
	pg->next = kmock_pages;
	kmock_pages = pg;
	kmock_kmalloc_live++;
	kmock_pages_live++;
	return pg->addr;
}

/* The live page @page (its address), or abort. */
static struct kmock_page **kmock_page_find(const struct page *page)
{
	struct kmock_page **pp;

	for (pp = &kmock_pages; *pp; pp = &(*pp)->next)
		if ((*pp)->addr == (const void *)page)
			return pp;
	fprintf(stderr, "kmock: %p is no live page\n", (const void *)page);
	abort();
}

void *page_address(const struct page *page)
{
	return (*kmock_page_find(page))->addr;
}

struct page *virt_to_page(const void *addr)
{
	return (struct page *)((uintptr_t)addr & ~(PAGE_SIZE - 1));
}

void page_ref_add(struct page *page, int n)
{
	(*kmock_page_find(page))->ref += n;
}

/* As the kernel's: never to zero (that is put_page()'s). */
void page_ref_sub(struct page *page, int n)
{
	struct kmock_page *pg = *kmock_page_find(page);

	if (pg->ref <= n) {
		fprintf(stderr, "kmock: page %p: ref %d - %d\n", pg->addr, pg->ref, n);
		abort();
	}
	pg->ref -= n;
}

void put_page(struct page *page)
{
	struct kmock_page **pp = kmock_page_find(page), *pg = *pp;

	if (--pg->ref)
		return;
	*pp = pg->next;
	free(pg->addr);
	free(pg);
	kmock_kmalloc_live--;
	kmock_pages_live--;
}

void *kzalloc(size_t size, gfp_t gfp)
{
	void *p = kmalloc(size, gfp);

	if (p)
		memset(p, 0, size);
	return p;
}

void *kmock_vmalloc(size_t size, gfp_t gfp, const char *file)
{
	size_t len = PAGE_ALIGN(size);
	void *p;

	if (!kmock_alloc_ok(file))
		return NULL;
	p = aligned_alloc(PAGE_SIZE, len ? len : PAGE_SIZE);
	if (!p)
		return NULL;
	if (gfp & __GFP_ZERO)
		memset(p, 0, len);
	kmock_kmalloc_live++;
	return p;
}

void kfree(const void *p)
{
	if (p)
		kmock_kmalloc_live--;
	free((void *)p);
}

const void *kmock_uaccess_bad;

/* Bytes of [@p, @p + @n) before kmock_uaccess_bad, if it is in them. */
static unsigned long kmock_uaccess_ok(const void *p, unsigned long n)
{
	const char *c = p, *bad = kmock_uaccess_bad;

	return bad && bad >= c && bad < c + n ? (unsigned long)(bad - c) : n;
}

unsigned long copy_from_user(void *to, const void __user *from, unsigned long n)
{
	unsigned long ok;

	if (kmock_uaccess_hook)
		kmock_uaccess_hook();
	if (kmock_uaccess_fail > 0) {
		kmock_uaccess_fail--;
		return n;
	}
	ok = kmock_uaccess_ok(from, n);
	memcpy(to, from, ok);
	memset((char *)to + ok, 0, n - ok);	/* the kernel's pads with zeros */
	return n - ok;
}

int kmock_put_user(const void *src, void __user *dst, size_t n)
{
	if (kmock_uaccess_ok(dst, n) != n)
		return -EFAULT;
	memcpy(dst, src, n);
	return 0;
}

int dp_crc32c_copy_from_user(u32 *crc, void *dst, const void __user *src, size_t len)
{
	if (copy_from_user(dst, src, len))
		return -EFAULT;
	if (crc)
		*crc = dp_crc32c(*crc, dst, len);
	return 0;
}

/* In @ns if kmock_caps holds @cap in kmock_caps_ns or an ancestor of @ns. */
bool ns_capable(struct user_namespace *ns, int cap)
{
	struct user_namespace *in = kmock_caps_ns ? kmock_caps_ns : &init_user_ns;

	if (!(kmock_caps & (1ull << cap)))
		return false;
	for (; ns; ns = ns->parent)
		if (ns == in)
			return true;
	return false;
}

int vm_insert_page(struct vm_area_struct *vma, unsigned long addr,
		   struct page *page)
{
	return kmock_vm_insert_hook ? kmock_vm_insert_hook(vma, addr, page) : 0;
}

u64 ktime_get_ns(void)
{
	return (u64)jiffies * 1000000u + kmock_ns_extra;
}

u32 get_random_u32(void)
{
	return kmock_random++;
}

static void slot_add(void **slots, void *p)
{
	int i;

	for (i = 0; i < KMOCK_SLOTS; i++)
		if (slots[i] == p)
			return;
	for (i = 0; i < KMOCK_SLOTS; i++) {
		if (!slots[i]) {
			slots[i] = p;
			return;
		}
	}
	kmock_lockdep_fail("too many timers or works", __FILE__, __LINE__);
}

static void slot_del(void **slots, void *p)
{
	int i;

	for (i = 0; i < KMOCK_SLOTS; i++)
		if (slots[i] == p)
			slots[i] = NULL;
}

int mod_timer(struct timer_list *t, unsigned long expires)
{
	int was = t->pending;

	kmock_mod_timers++;
	t->expires = expires;
	t->pending = true;
	slot_add((void **)timers, t);
	return was;
}

int del_timer_sync(struct timer_list *t)
{
	int was = t->pending;

	t->pending = false;
	slot_del((void **)timers, t);
	return was;
}

static bool work_at(struct work_struct *w, unsigned long due, bool modify)
{
	if (w->pending && !modify)
		return false;
	w->due = due;
	w->pending = true;
	slot_add((void **)works, w);
	return true;
}

bool queue_work(struct workqueue_struct *wq, struct work_struct *w)
{
	(void)wq;
	return work_at(w, jiffies, false);
}

bool queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
			unsigned long delay)
{
	(void)wq;
	return work_at(&dw->work, jiffies + delay, false);
}

bool mod_delayed_work(struct workqueue_struct *wq, struct delayed_work *dw,
		      unsigned long delay)
{
	(void)wq;
	return work_at(&dw->work, jiffies + delay, true);
}

bool cancel_work_sync(struct work_struct *w)
{
	bool was = w->pending;

	w->pending = false;
	slot_del((void **)works, w);
	return was;
}

bool cancel_delayed_work_sync(struct delayed_work *dw)
{
	return cancel_work_sync(&dw->work);
}

void hrtimer_start(struct hrtimer *t, u64 ns, enum hrtimer_mode mode)
{
	(void)mode;
	t->expires = ktime_get_ns() + ns;
	t->queued = true;
	t->starts++;
	slot_add((void **)hrtimers, t);
}

int hrtimer_cancel(struct hrtimer *t)
{
	int was = t->queued;

	t->queued = false;
	slot_del((void **)hrtimers, t);
	return was;
}

bool kmock_hrtimer_fire(struct hrtimer *t)
{
	if (!t->queued || ktime_get_ns() < t->expires)
		return false;
	hrtimer_cancel(t);
	if (t->function(t) == HRTIMER_RESTART)
		kmock_lockdep_fail("no hrtimer here restarts", __FILE__, __LINE__);
	return true;
}

/* One due timer fired, the oldest slot first; false if none. */
static bool fire_one(void)
{
	int i;

	for (i = 0; i < KMOCK_SLOTS; i++) {
		struct timer_list *t = timers[i];

		if (t && t->pending && !time_before(jiffies, t->expires)) {
			t->pending = false;
			timers[i] = NULL;
			t->fn(t);
			return true;
		}
	}
	return false;
}

/* One due timer or work item, the oldest slot first; false if none. */
static bool run_one(void)
{
	int i;

	if (fire_one())
		return true;
	for (i = 0; i < KMOCK_SLOTS; i++) {
		struct work_struct *w = works[i];

		if (w && w->pending && !time_before(jiffies, w->due)) {
			w->pending = false;
			works[i] = NULL;
			w->fn(w);
			return true;
		}
	}
	return false;
}

int kmock_fire_timers(void)
{
	int n = 0;

	if (kmock_spin_depth)
		kmock_lockdep_fail("timer run under a spinlock", __FILE__, __LINE__);
	while (fire_one() && n < 100000)
		n++;
	return n;
}

int kmock_run(void)
{
	int n = 0;

	if (kmock_spin_depth)
		kmock_lockdep_fail("work run under a spinlock", __FILE__, __LINE__);
	while (run_one() && n < 100000)
		n++;
	return n;
}

void kmock_advance(unsigned long ms)
{
	while (ms--) {
		jiffies++;
		kmock_run();
	}
}

int kmock_pending(void)
{
	int i, n = 0;

	for (i = 0; i < KMOCK_SLOTS; i++)
		n += !!timers[i] + !!works[i] + !!hrtimers[i];
	return n;
}

unsigned long kmock_resent[2];

void kmock_reset(void)
{
	int i;

	kmock_resent[0] = 0;
	kmock_resent[1] = 0;
	memset(timers, 0, sizeof(timers));
	memset(works, 0, sizeof(works));
	memset(hrtimers, 0, sizeof(hrtimers));
	jiffies = 1000000;
	kmock_ns_extra = 0;
	kmock_random = 1000;
	kmock_lockdep_errors = 0;
	kmock_refcount_errors = 0;
	kmock_spin_depth = 0;
	kmock_kmalloc_fail = 0;
	kmock_kmalloc_fail_at = 0;
	kmock_kmalloc_live = 0;
	kmock_kmalloc_snd = 0;
	kmock_uaccess_fail = 0;
	kmock_uaccess_hook = NULL;
	kmock_uaccess_bad = NULL;
	kmock_mod_timers = 0;
	kmock_jhash_calls = 0;
	kmock_warns = 0;
	kmock_wait_hook = NULL;
	kmock_mb_hook = NULL;
	kmock_release_hook = NULL;
	kmock_wait_rounds = 1000;
	kmock_warn_ons = 0;
	kmock_totalram_pages = (4ul << 30) >> PAGE_SHIFT;
	kmock_cmpxchg_hook = NULL;
	kmock_caps = 0;
	kmock_caps_ns = NULL;
	for (i = 0; i < RLIM_NLIMITS; i++)
		kmock_rlim[i] = RLIM_INFINITY;
	kmock_rlim[RLIMIT_MEMLOCK] = 8ul << 20;	/* the kernel's default */
	kmock_resched = 0;
	kmock_vm_insert_hook = NULL;
	memset(&kmock_task0, 0, sizeof(kmock_task0));
	current = &kmock_task0;
}
