// SPDX-License-Identifier: GPL-2.0
/*
 * Token buffer pool (TBP): an endpoint's fixed-size receive area, shared
 * read-only with its process.  The kernel is the only writer of tokens,
 * message bytes, prod and cons, so nothing it later trusts is writable by
 * user space.
 */
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/vmalloc.h>

#include "dp.h"
#include "dp_frag.h"

bool dp_pool_size_valid(u32 size)
{
	return size >= DP_POOL_MIN && size <= DP_POOL_MAX && is_power_of_2(size);
}

static size_t dp_pool_ctrl_size(void)
{
	return max_t(size_t, PAGE_SIZE, DP_POOL_CTRL_SIZE);
}

/*
 * Bytes of the mapping, and what the owner is charged for: whole pages,
 * since mmap() maps nothing smaller.  With 4 KiB pages that is exactly the
 * control page and the data area; with 64 KiB pages a 16 or 32 KiB data
 * area ends inside a page, and without the rounding a mapping of it would
 * be refused as longer than the pool.
 */
size_t dp_pool_map_size(u32 data_size)
{
	return PAGE_ALIGN(dp_pool_ctrl_size() + data_size);
}

int dp_pool_init(struct dp_pool *pool, u32 data_size, u32 nid, u32 dpid)
{
	size_t ctrl_size = dp_pool_ctrl_size();

	pool->map_size = dp_pool_map_size(data_size);
	/*
	 * Zeroed and page-aligned; __GFP_ACCOUNT charges the pages to the
	 * binder's memory cgroup (vmalloc_user() cannot take that flag, so
	 * dp_pool_mmap() inserts the pages itself).
	 */
	pool->mem = __vmalloc(pool->map_size, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!pool->mem)
		return -ENOMEM;
	spin_lock_init(&pool->lock);
	init_waitqueue_head(&pool->wq);
	pool->ctrl = pool->mem;
	pool->ctrl->magic = DP_POOL_MAGIC;
	pool->ctrl->version = DP_POOL_VERSION;
	pool->ctrl->ctrl_size = ctrl_size;
	pool->ctrl->data_size = data_size;
	pool->ctrl->nid = nid;
	pool->ctrl->dpid = dpid;
	dp_ring_init(&pool->ring, (u8 *)pool->mem + ctrl_size, data_size);
	pool->queued_pub = 0;
	return 0;
}

void dp_pool_free(struct dp_pool *pool)
{
	kfree(pool->ring.fill);
	dp_ring_init_fill(&pool->ring, NULL, 0);
	vfree(pool->mem);
	pool->mem = NULL;
}

/*
 * Mirror the ring's counters into the control page for user space.
 * Returns whether readers can see more messages than before.
 */
static bool dp_pool_publish(struct dp_pool *pool)
{
	bool grew = pool->ring.queued > pool->queued_pub;

	lockdep_assert_held(&pool->lock);
	/* cons first: a reader that sees the new prod sees the new cons. */
	smp_store_release(&pool->ctrl->cons, pool->ring.cons);
	/*
	 * Token and bytes are written before prod: pairs with libdp's acquire.
	 * Never past a message open for fill (dp_ring_pub()).
	 */
	smp_store_release(&pool->ctrl->prod, dp_ring_pub(&pool->ring));
	/* Last: readiness (poll, read, io_uring) is never ahead of the page. */
	smp_store_release(&pool->queued_pub, pool->ring.queued);
	return grew;
}

/* The sender fields of a token: who sent it, its number in the session. */
static void dp_pool_stamp(struct dp_token *t, const struct dp_msg_hdr *h,
			  u32 src_uid, u32 tok_seq)
{
	t->src_nid = h->src_nid;
	t->src_dpid = h->src_dpid;
	t->src_uid = src_uid;
	t->seq = tok_seq;
}

/*
 * Wake readers if dp_pool_publish() said they see more (@grew, decided
 * under the lock: a release racing the wake cannot hide it).  No lock
 * held.
 */
static void dp_pool_wake(struct dp_pool *pool, bool grew)
{
	if (grew && wq_has_sleeper(&pool->wq))
		wake_up_interruptible_poll(&pool->wq, EPOLLIN | EPOLLRDNORM);
}

/*
 * Place one message at the tail.  Any context.  Returns 0, or the drop
 * counter to charge when the pool has no room.
 */
int dp_pool_deliver(struct dp_pool *pool, const struct dp_msg_hdr *h,
		    u32 src_uid, u32 tok_seq,
		    const struct dp_payload *payload)
{
	struct dp_token *t;
	unsigned long flags;
	int err = 0;
	bool grew;

	spin_lock_irqsave(&pool->lock, flags);
	t = dp_ring_reserve(&pool->ring, h->len, &err);
	if (!t) {
		if (err == DP_CTR_RX_DROP_FULL)
			pool->rx_drop_full++;
		spin_unlock_irqrestore(&pool->lock, flags);
		return err;
	}
	dp_payload_copy(payload, 0, t + 1, h->len);
	dp_pool_stamp(t, h, src_uid, tok_seq);
	dp_ring_commit(&pool->ring, t, h->len);
	if (h->flags & DP_WF_RAW)
		t->flags |= DP_TOK_RAW;
	pool->rx_msgs++;
	pool->rx_bytes += h->len;
	grew = dp_pool_publish(pool);	/* not behind an open large message */
	spin_unlock_irqrestore(&pool->lock, flags);
	dp_pool_wake(pool, grew);
	return 0;
}

/*
 * The ring's fill slots, one per sender the endpoint may keep
 * (DP_MAX_RX_PEERS), so that a first fragment within credit is never
 * refused for want of one; allocated with the first large message.  false
 * if out of memory (the fragment is dropped and comes again).
 */
static bool dp_pool_fill_slots(struct dp_pool *pool)
{
	struct dp_ring_slot *slots;

	lockdep_assert_held(&pool->lock);
	if (pool->ring.fill)
		return true;
	slots = kcalloc(DP_MAX_RX_PEERS, sizeof(*slots),
			GFP_ATOMIC | __GFP_NOWARN);
	if (!slots)
		return false;
	dp_ring_init_fill(&pool->ring, slots, DP_MAX_RX_PEERS);
	return true;
}

int dp_pool_frag(struct dp_pool *pool, struct dp_frag_rx *st,
		 const struct dp_msg_hdr *h, const struct dp_frag_in *in,
		 u32 src_uid, u32 tok_seq)
{
	unsigned long flags;
	bool done = false, grew = false;
	int err;

	spin_lock_irqsave(&pool->lock, flags);
	if (in->kind == DP_FRAG_FIRST && !dp_pool_fill_slots(pool)) {
		err = DP_CTR_RX_DROP_NOMEM;
		goto out;
	}
	err = dp_frag_rx_put(st, &pool->ring, in, &done);
	if (err < 0)		/* dp_frag_parse() passed it: never */
		err = DP_CTR_RX_DROP_LEN;
	if (err == DP_CTR_RX_DROP_FULL)
		pool->rx_drop_full++;
	if (err)
		goto out;
	if (in->kind == DP_FRAG_FIRST)
		dp_pool_stamp(st->fill.tok, h, src_uid, tok_seq);
	if (done) {
		pool->rx_msgs++;
		pool->rx_bytes += in->total;
	}
	grew = dp_pool_publish(pool);
out:
	spin_unlock_irqrestore(&pool->lock, flags);
	dp_pool_wake(pool, grew);
	return err;
}

bool dp_pool_frag_abort(struct dp_pool *pool, struct dp_frag_rx *st)
{
	unsigned long flags;
	bool had, grew = false;

	spin_lock_irqsave(&pool->lock, flags);
	had = dp_frag_rx_abort(st, &pool->ring);
	if (had)
		grew = dp_pool_publish(pool);
	spin_unlock_irqrestore(&pool->lock, flags);
	dp_pool_wake(pool, grew);
	return had;
}

/* A message refused for lack of room it may use: counted as full. */
int dp_pool_refuse(struct dp_pool *pool)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->rx_drop_full++;
	spin_unlock_irqrestore(&pool->lock, flags);
	return DP_CTR_RX_DROP_FULL;
}

/*
 * Release up to @n messages, at most DP_RELEASE_BATCH of them per
 * interrupts-off section: a huge n over a large pool of small messages
 * must not keep interrupts off for milliseconds.  Process context.
 */
u32 dp_pool_release(struct dp_pool *pool, u32 n)
{
	u32 done = 0, got;

	do {
		spin_lock_irq(&pool->lock);
		got = dp_ring_release(&pool->ring,
				      min_t(u32, n - done, DP_RELEASE_BATCH));
		dp_pool_publish(pool);
		spin_unlock_irq(&pool->lock);
		done += got;
		if (got == DP_RELEASE_BATCH && done < n)
			cond_resched();
	} while (got == DP_RELEASE_BATCH && done < n);
	return done;
}

/*
 * Readiness as the mapping shows it.  The ring's own count runs ahead of
 * the control page inside dp_pool_deliver()'s critical section; poll()
 * reading it there said "readable" while the page still showed an empty
 * pool.
 */
bool dp_pool_empty(const struct dp_pool *pool)
{
	/* Pairs with dp_pool_publish(): a token counted here is mapped. */
	return smp_load_acquire(&pool->queued_pub) == 0;
}

u32 dp_pool_queued(const struct dp_pool *pool)
{
	/* Pairs with dp_pool_publish(), as in dp_pool_empty(). */
	return smp_load_acquire(&pool->queued_pub);
}

/*
 * What the pool holds, for dpctl ep: *@taken bytes (prod - cons: the
 * queued messages' tokens, wrap padding, and the whole token of each
 * message open for fill) and *@open messages open for fill.
 */
void dp_pool_usage(struct dp_pool *pool, u32 *taken, u32 *open)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	*taken = (u32)dp_ring_used(&pool->ring);
	*open = pool->ring.nfill;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * Map the pool read-only: a writable, executable or private mapping is
 * refused, and VM_MAYWRITE and VM_MAYEXEC are cleared so mprotect() cannot
 * add either later (the pool holds bytes others sent: never code).  A shared
 * mapping that can never be writable is not a COW mapping, so FOLL_FORCE
 * writes (/proc/PID/mem, ptrace POKEDATA) are refused by GUP as well.  The
 * mapping is not inherited across fork and cannot grow.  Called with the
 * mmap lock held for writing.
 */
int dp_pool_mmap(struct dp_pool *pool, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start, off;
	int err;

	if (vma->vm_pgoff || len > pool->map_size)
		return -EINVAL;
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EACCES;
	dp_vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP,
			VM_MAYWRITE | VM_MAYEXEC);
	for (off = 0; off < len; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((u8 *)pool->mem + off));
		if (err)
			return err;
	}
	return 0;
}
