// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbour discovery (docs/discovery.md), as TIPC has it: opt-in per node
 * by an administrator.  While it is on, the node announces its NID on its
 * link (a DP_WT_ANNOUNCE to the broadcast address) at once and then every
 * interval, and learns the NID -> link address of every node it hears
 * into its NART, marked discovered.  An entry not announced again within
 * the hold its sender asked for ages out.  A static entry always wins: an
 * announce never replaces it (and loading one replaces a discovered one,
 * dp_nart_set()).  A NID heard from a second link address, or our own NID
 * from another node, is counted, reported as an event and logged, never
 * merged: the first entry stays.
 *
 * Announces arrive in any context (hard irq on tulip), so the receive side
 * only refreshes entries in place and queues new NIDs; a work item puts
 * them into the NART, whose updates sleep.
 */
#include <linux/jiffies.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>

#include "dp_disc.h"

static void dp_disc_announce_fn(struct work_struct *work);
static void dp_disc_learn_fn(struct work_struct *work);

void dp_disc_init(struct dp_disc *d, struct dp_node *node)
{
	memset(d, 0, sizeof(*d));
	d->node = node;
	mutex_init(&d->mutex);
	spin_lock_init(&d->lock);
	INIT_DELAYED_WORK(&d->announce, dp_disc_announce_fn);
	INIT_WORK(&d->learn, dp_disc_learn_fn);
}

u32 dp_disc_interval(struct dp_disc *d)
{
	unsigned long flags;
	u32 ms;

	spin_lock_irqsave(&d->lock, flags);
	ms = d->interval_ms;
	spin_unlock_irqrestore(&d->lock, flags);
	return ms;
}

/* Stop announcing and learning; every work item has finished on return. */
static void dp_disc_off(struct dp_disc *d)
{
	unsigned long flags;

	lockdep_assert_held(&d->mutex);
	spin_lock_irqsave(&d->lock, flags);
	d->interval_ms = 0;
	d->n_pending = 0;
	spin_unlock_irqrestore(&d->lock, flags);
	/* neither re-arms itself nor is queued once interval_ms is 0 */
	cancel_delayed_work_sync(&d->announce);
	cancel_work_sync(&d->learn);
}

int dp_disc_set(struct dp_disc *d, u32 interval_ms)
{
	unsigned long flags;
	bool was_on;
	int err = 0;

	if (interval_ms && (interval_ms < DP_DISC_INTERVAL_MIN_MS ||
			    interval_ms > DP_DISC_INTERVAL_MAX_MS))
		return -EINVAL;
	mutex_lock(&d->mutex);
	was_on = dp_disc_interval(d) != 0;
	if (!interval_ms) {
		dp_disc_off(d);
		/* nothing keeps discovered entries fresh any more */
		if (was_on)
			err = dp_nart_discover(d->node, NULL, 0, jiffies, true);
	} else {
		spin_lock_irqsave(&d->lock, flags);
		d->interval_ms = interval_ms;
		spin_unlock_irqrestore(&d->lock, flags);
		mod_delayed_work(dp_wq, &d->announce, 0);
	}
	mutex_unlock(&d->mutex);
	return err;
}

void dp_disc_kick(struct dp_disc *d)
{
	unsigned long flags;

	spin_lock_irqsave(&d->lock, flags);
	if (d->interval_ms)
		mod_delayed_work(dp_wq, &d->announce, 0);
	spin_unlock_irqrestore(&d->lock, flags);
}

void dp_disc_stop(struct dp_disc *d)
{
	mutex_lock(&d->mutex);
	dp_disc_off(d);
	mutex_unlock(&d->mutex);
}

/* Whether a discovered entry has outlived its hold; under RCU. */
static bool dp_disc_any_expired(struct dp_disc *d, unsigned long now)
{
	const struct dp_nart_tbl *t;
	bool any = false;
	u32 i;

	rcu_read_lock();
	t = dp_node_nart_rcu(d->node);
	for (i = 0; t && i < t->n && !any; i++)
		any = dp_nart_expired(&t->e[i], now);
	rcu_read_unlock();
	return any;
}

/* Announce, age out silent neighbours, come back in an interval. */
static void dp_disc_announce_fn(struct work_struct *work)
{
	struct dp_disc *d = container_of(to_delayed_work(work), struct dp_disc,
					 announce);
	u8 addr[DP_LLADDR_MAX];
	unsigned long flags;
	u32 ms = dp_disc_interval(d);
	int len;

	if (!ms)
		return;
	len = dp_tx_announce(d->node, ms * DP_DISC_HOLD_FACTOR, addr);
	if (len > 0 && len <= DP_LLADDR_MAX) {
		spin_lock_irqsave(&d->lock, flags);
		memcpy(d->own, addr, len);
		d->own_len = len;
		spin_unlock_irqrestore(&d->lock, flags);
	}
	if (dp_disc_any_expired(d, jiffies))
		dp_nart_discover(d->node, NULL, 0, jiffies, false);
	spin_lock_irqsave(&d->lock, flags);
	if (d->interval_ms)
		queue_delayed_work(dp_wq, &d->announce,
				   msecs_to_jiffies(d->interval_ms));
	spin_unlock_irqrestore(&d->lock, flags);
}

/* The NIDs heard since the last run, into the NART in one update. */
static void dp_disc_learn_fn(struct work_struct *work)
{
	struct dp_disc *d = container_of(work, struct dp_disc, learn);
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&d->lock, flags);
	n = d->n_pending;
	memcpy(d->batch, d->pending, n * sizeof(d->batch[0]));
	d->n_pending = 0;
	spin_unlock_irqrestore(&d->lock, flags);
	if (n)
		dp_nart_discover(d->node, d->batch, n, jiffies, false);
}

/* What an announce leads to (dp_disc_judge()). */
enum dp_disc_verdict {
	DP_DISC_IGNORE,		/* discovery off, or our own announce */
	DP_DISC_KNOWN,		/* the NART or the queue has it there: refreshed */
	DP_DISC_NEW,		/* queued for the NART */
	DP_DISC_FULL,		/* new, but the queue is full: heard again later */
	DP_DISC_CONFLICT,	/* the NID is known at another address, or ours */
};

/* A NID the NART does not have, heard from @src: queue or refresh it. */
static int dp_disc_queue(struct dp_disc *d, u32 nid, const u8 *src,
			 u8 src_len, unsigned long hold)
{
	struct dp_nart_entry *e;
	u32 i;

	lockdep_assert_held(&d->lock);
	for (i = 0; i < d->n_pending; i++) {
		e = &d->pending[i];
		if (e->nid != nid)
			continue;
		if (!dp_nart_same_addr(e, src, src_len))
			return DP_DISC_CONFLICT;
		e->heard = jiffies;
		e->hold = hold;
		return DP_DISC_KNOWN;
	}
	if (d->n_pending == DP_DISC_PENDING)
		return DP_DISC_FULL;
	e = &d->pending[d->n_pending++];
	memset(e, 0, sizeof(*e));
	e->nid = nid;
	e->alen = src_len;
	memcpy(e->addr, src, src_len);
	e->origin = DP_NART_DISCOVERED;
	e->heard = jiffies;
	e->hold = hold;
	return DP_DISC_NEW;
}

/* Caller holds @d->lock and RCU. */
static int dp_disc_judge(struct dp_disc *d, const u8 *src, u8 src_len,
			 u32 nid, u32 hold_ms)
{
	unsigned long hold = msecs_to_jiffies(hold_ms);
	struct dp_nart_entry *e;

	lockdep_assert_held(&d->lock);
	if (!d->interval_ms)
		return DP_DISC_IGNORE;
	if (nid == dp_node_nid(d->node)) {
		if (d->own_len == src_len && !memcmp(d->own, src, src_len))
			return DP_DISC_IGNORE;
		return DP_DISC_CONFLICT;
	}
	/*
	 * Refreshed in place in the published table (struct dp_nart_entry,
	 * @heard): the only field a reader writes.
	 */
	e = (struct dp_nart_entry *)dp_nart_find(dp_node_nart_rcu(d->node), nid);
	if (!e)
		return dp_disc_queue(d, nid, src, src_len, hold);
	if (!dp_nart_same_addr(e, src, src_len))
		return DP_DISC_CONFLICT;
	if (e->origin == DP_NART_DISCOVERED) {
		WRITE_ONCE(e->heard, jiffies);
		WRITE_ONCE(e->hold, hold);
	}
	return DP_DISC_KNOWN;
}

/* Counted, reported and logged; the first entry stays as it was. */
static void dp_disc_conflict(struct dp_disc *d, u32 nid, const u8 *src,
			     u8 src_len)
{
	u32 own = dp_node_nid(d->node);

	dp_count(d->node, DP_CTR_DISC_CONFLICT);
	dp_event_conflict(d->node, nid, src, src_len);
	if (nid == own)
		pr_warn_ratelimited("dp: node %u: another node announces NID %u, ours, from %*phC\n",
				    own, nid, (int)src_len, src);
	else
		pr_warn_ratelimited("dp: node %u: NID %u announced from %*phC, not its NART address: kept the first\n",
				    own, nid, (int)src_len, src);
}

void dp_disc_rx(struct dp_disc *d, const u8 *src, u8 src_len,
		const struct dp_msg_hdr *h, const void *msg)
{
	unsigned long flags;
	int v;

	if (!src_len || src_len > DP_LLADDR_MAX)
		return;
	spin_lock_irqsave(&d->lock, flags);
	v = dp_disc_judge(d, src, src_len, h->src_nid,
			  dp_wire_announce_hold(msg));
	if (v == DP_DISC_NEW)
		queue_work(dp_wq, &d->learn);
	spin_unlock_irqrestore(&d->lock, flags);
	if (v == DP_DISC_IGNORE)
		return;
	dp_count(d->node, DP_CTR_RX_CTRL);
	if (v == DP_DISC_CONFLICT)
		dp_disc_conflict(d, h->src_nid, src, src_len);
}
