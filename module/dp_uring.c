// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring command passthrough (IORING_OP_URING_CMD) on an endpoint:
 * DP_URING_SEND, _SENDV and _RELEASE do what their ioctls do, and
 * DP_URING_WAIT completes once a message is in the pool, so an event loop
 * waits on dp without a blocked thread.  dp_uring_compat.h hides how the
 * API differs between 6.1 and 6.12.
 *
 * A pending WAIT sits on its endpoint's list until exactly one of these
 * takes it off and completes it: a message arriving (the pool's wait queue
 * calls dp_uring_wake()), a close of the fd by the process that issued it
 * (->flush), the endpoint's release, or its ring exiting: io_uring cancels
 * it (IO_URING_F_CANCEL) where the kernel can, else dp_uring_watch() sees
 * the ring dying.  Every pending command holds a reference to the file, so
 * the module (its fops owner) stays loaded until they are all complete.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "dp.h"
#include "dp_uring_compat.h"

/**
 * struct dp_uring_pdu - our part of a pending WAIT, in the command's pdu.
 * @node: in dp_uring.waits while pending, else empty.
 * @owner: the issuer's files: its close of the fd cancels the WAIT.
 * @res: the result to post.
 */
struct dp_uring_pdu {
	struct list_head node;
	fl_owner_t owner;
	int res;
};

static struct dp_uring_pdu *dp_pdu(struct io_uring_cmd *c)
{
	return dp_uring_cmd_pdu(c, struct dp_uring_pdu);
}

static struct io_uring_cmd *dp_pdu_cmd(struct dp_uring_pdu *p)
{
	return container_of((void *)p, struct io_uring_cmd, pdu);
}

/* Task work of the issuer: post the CQE. */
static void dp_uring_done_tw(struct io_uring_cmd *c, unsigned int issue_flags)
{
	io_uring_cmd_done(c, dp_pdu(c)->res, 0, issue_flags);
}

/* Take @p off the list and have it completed with @res.  Caller holds lock. */
static void dp_uring_finish(struct dp_uring *u, struct dp_uring_pdu *p, int res)
{
	lockdep_assert_held(&u->lock);
	list_del_init(&p->node);
	p->res = res;
	io_uring_cmd_complete_in_task(dp_pdu_cmd(p), dp_uring_done_tw);
}

/*
 * The pool's wait queue was woken (a message was published, any context,
 * under the wait queue's lock): complete every WAIT if the pool holds one.
 */
static int dp_uring_wake(struct wait_queue_entry *wqe, unsigned int mode,
			 int sync, void *key)
{
	struct dp_uring *u = container_of(wqe, struct dp_uring, wqe);
	u32 queued = dp_pool_queued(u->pool);
	struct dp_uring_pdu *p, *n;
	unsigned long flags;

	if (!queued)
		return 0;
	spin_lock_irqsave(&u->lock, flags);
	list_for_each_entry_safe(p, n, &u->waits, node)
		dp_uring_finish(u, p, queued);
	spin_unlock_irqrestore(&u->lock, flags);
	return 0;
}

/* 6.1: cancel the WAITs whose ring exits; look again while some pend. */
static void dp_uring_watch(struct work_struct *work)
{
	struct dp_uring *u = container_of(to_delayed_work(work), struct dp_uring,
					  watch);
	struct dp_uring_pdu *p, *n;
	bool more;

	spin_lock_irq(&u->lock);
	list_for_each_entry_safe(p, n, &u->waits, node)
		if (dp_uring_ring_dying(dp_pdu_cmd(p)))
			dp_uring_finish(u, p, -ECANCELED);
	more = !list_empty(&u->waits);
	spin_unlock_irq(&u->lock);
	if (more)
		schedule_delayed_work(&u->watch, HZ);
}

void dp_uring_init(struct dp_uring *u, struct dp_pool *pool)
{
	spin_lock_init(&u->lock);
	spin_lock_init(&u->arm_lock);
	INIT_LIST_HEAD(&u->waits);
	init_waitqueue_func_entry(&u->wqe, dp_uring_wake);
	INIT_DELAYED_WORK(&u->watch, dp_uring_watch);
	u->pool = pool;
}

/* Put the entry on the pool's wait queue, once, at the first WAIT. */
static void dp_uring_arm(struct dp_uring *u)
{
	/* pairs with the release below: the entry is on the queue */
	if (smp_load_acquire(&u->armed))
		return;
	spin_lock_irq(&u->arm_lock);
	if (!u->armed) {
		add_wait_queue(&u->pool->wq, &u->wqe);
		/* pairs with the acquires in dp_uring_arm(), dp_uring_stop() */
		smp_store_release(&u->armed, true);
	}
	spin_unlock_irq(&u->arm_lock);
}

/* Complete @p with @res if it is still pending; whether it was. */
static bool dp_uring_take(struct dp_uring *u, struct dp_uring_pdu *p, int res)
{
	unsigned long flags;
	bool pending;

	spin_lock_irqsave(&u->lock, flags);
	pending = !list_empty(&p->node);
	if (pending)
		dp_uring_finish(u, p, res);
	spin_unlock_irqrestore(&u->lock, flags);
	return pending;
}

static int dp_uring_wait(struct dp_uring *u, struct io_uring_cmd *c,
			 unsigned int issue_flags)
{
	struct dp_uring_pdu *p = dp_pdu(c);

	if (!dp_pool_empty(u->pool))
		return dp_pool_queued(u->pool);
	dp_uring_arm(u);
	p->owner = current->files;
	dp_uring_mark_cancelable(c, issue_flags);
	spin_lock_irq(&u->lock);
	list_add_tail(&p->node, &u->waits);
	spin_unlock_irq(&u->lock);
#ifdef DP_URING_WATCH_RINGS
	schedule_delayed_work(&u->watch, HZ);
#endif
	/* Pairs with wq_has_sleeper(): a message published before we were
	 * listed woke nobody, so look once more.
	 */
	smp_mb();
	if (!dp_pool_empty(u->pool))
		dp_uring_take(u, p, dp_pool_queued(u->pool));
	return -EIOCBQUEUED;
}

/* io_uring hands a cancelable WAIT back (its ring exits). */
static int dp_uring_cancel(struct dp_uring *u, struct io_uring_cmd *c,
			   unsigned int issue_flags)
{
	struct dp_uring_pdu *p = dp_pdu(c);
	unsigned long flags;
	bool pending;

	spin_lock_irqsave(&u->lock, flags);
	pending = !list_empty(&p->node);
	list_del_init(&p->node);
	spin_unlock_irqrestore(&u->lock, flags);
	if (pending)
		io_uring_cmd_done(c, -ECANCELED, 0, issue_flags);
	return 0;
}

/* ->flush: a close by @id cancels its WAITs (NULL: every WAIT). */
void dp_uring_flush(struct dp_uring *u, fl_owner_t id)
{
	struct dp_uring_pdu *p, *n;

	spin_lock_irq(&u->lock);
	list_for_each_entry_safe(p, n, &u->waits, node)
		if (!id || p->owner == id)
			dp_uring_finish(u, p, -ECANCELED);
	spin_unlock_irq(&u->lock);
}

/* The endpoint is released: off the pool's wait queue, nothing pending. */
void dp_uring_stop(struct dp_uring *u)
{
	/* pairs with the release in dp_uring_arm() */
	if (smp_load_acquire(&u->armed))
		remove_wait_queue(&u->pool->wq, &u->wqe);
	dp_uring_flush(u, NULL);
	cancel_delayed_work_sync(&u->watch);
}

static long dp_uring_send(struct dp_endpoint *ep, u64 addr, bool nonblock)
{
	struct dp_send s;

	if (copy_from_user(&s, u64_to_user_ptr(addr), sizeof(s)))
		return -EFAULT;
	if (s.flags)
		return -EINVAL;
	return dp_send(ep, &s.to, u64_to_user_ptr(s.buf), s.len, nonblock);
}

static fmode_t dp_uring_mode(u32 op)
{
	return op == DP_URING_SEND || op == DP_URING_SENDV ? FMODE_WRITE : FMODE_READ;
}

/*
 * A command on a bound endpoint.  Sends wait for credit only where io_uring
 * allows blocking (it retries an -EAGAIN issue from a worker unless the fd
 * is O_NONBLOCK); nothing is sent before an -EAGAIN, so nothing twice.
 */
static long dp_uring_run(struct dp_endpoint *ep, struct io_uring_cmd *c,
			 const struct dp_uring_cmd *uc, unsigned int issue_flags)
{
	bool nonblock = (issue_flags & IO_URING_F_NONBLOCK) ||
			dp_file_nonblock(c->file);

	switch (c->cmd_op) {
	case DP_URING_SEND:
		return uc->n ? -EINVAL : dp_uring_send(ep, uc->addr, nonblock);
	case DP_URING_SENDV:
		return uc->n ? -EINVAL :
		       dp_ioc_sendv(ep, u64_to_user_ptr(uc->addr), nonblock,
				    -EINVAL);
	case DP_URING_RELEASE:
		return uc->addr ? -EINVAL : dp_ep_release_n(ep, uc->n);
	case DP_URING_WAIT:
		return uc->addr || uc->n ? -EINVAL :
		       dp_uring_wait(&ep->uring, c, issue_flags);
	}
	return -ENOTTY;
}

/* The command's result, or -EIOCBQUEUED (pending) or -EAGAIN (retry). */
static long dp_uring_issue(struct io_uring_cmd *c, unsigned int issue_flags)
{
	const struct dp_uring_cmd *sqe = dp_uring_payload(c);
	struct dp_endpoint *ep = c->file->private_data;
	fmode_t need = dp_uring_mode(c->cmd_op);
	struct dp_uring_cmd uc;

	if (c->cmd_op < DP_URING_SEND || c->cmd_op > DP_URING_WAIT)
		return -ENOTTY;
	if ((c->file->f_mode & need) != need)
		return -EBADF;
	if (!dp_ep_bound(ep))
		return -EBADFD;
	uc.addr = READ_ONCE(sqe->addr);
	uc.n = READ_ONCE(sqe->n);
	uc.flags = READ_ONCE(sqe->flags);
	if (uc.flags)
		return -EINVAL;
	return dp_uring_run(ep, c, &uc, issue_flags);
}

/*
 * file_operations.uring_cmd of /dev/dp.  Results are posted here with
 * io_uring_cmd_done(): 6.1's io_uring takes a positive return from a
 * command issued by its worker for no completion at all.  -EAGAIN goes
 * back to io_uring, which issues the command again from a worker, where
 * it may block (not for an O_NONBLOCK fd: that gets -EAGAIN).
 */
int dp_uring_cmd(struct io_uring_cmd *c, unsigned int issue_flags)
{
	struct dp_endpoint *ep = c->file->private_data;
	long ret;

	if (issue_flags & DP_URING_F_CANCEL)
		return dp_uring_cancel(&ep->uring, c, issue_flags);
	ret = dp_uring_issue(c, issue_flags);
	if (ret == -EIOCBQUEUED)
		return ret;
	if (ret == -EAGAIN && (issue_flags & IO_URING_F_NONBLOCK) &&
	    !dp_file_nonblock(c->file))
		return ret;
	if (ret == -ERESTARTSYS)
		ret = -EINTR;
	io_uring_cmd_done(c, ret, 0, issue_flags);
	return -EIOCBQUEUED;
}
