/* SPDX-License-Identifier: GPL-2.0 */
/* io_uring command passthrough on an endpoint (dp_uring.c). */
#ifndef _DP_URING_H
#define _DP_URING_H

#include <linux/fs.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

struct dp_pool;
struct io_uring_cmd;

/**
 * struct dp_uring - an endpoint's pending DP_URING_WAIT commands.
 * @lock: guards @waits; irq-safe: taken in the pool's wake-up, which runs
 *	under the pool's wait queue lock (so never add to that queue with
 *	@lock held).
 * @waits: pending WAITs; whoever takes one off completes it, once.
 * @arm_lock: serialises adding @wqe (taken before the wait queue's lock).
 * @armed: @wqe is on @pool's wait queue, from the first WAIT to release.
 * @wqe: the entry whose wake-up completes the WAITs.
 * @pool: the endpoint's pool.
 * @watch: where io_uring cannot cancel (6.1), looks every second while
 *	WAITs pend for those whose ring exits, and cancels them.
 */
struct dp_uring {
	spinlock_t lock;	/* irq-safe: @waits */
	struct list_head waits;
	spinlock_t arm_lock;	/* irq-safe: arming @wqe */
	bool armed;
	struct wait_queue_entry wqe;
	struct dp_pool *pool;
	struct delayed_work watch;
};

void dp_uring_init(struct dp_uring *u, struct dp_pool *pool);
void dp_uring_flush(struct dp_uring *u, fl_owner_t id);
void dp_uring_stop(struct dp_uring *u);
int dp_uring_cmd(struct io_uring_cmd *c, unsigned int issue_flags);

#endif /* _DP_URING_H */
