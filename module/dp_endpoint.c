// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints: one per open /dev/dp file, with the paper's UNIX semantics:
 * read() is a blocking receive with copy, write() a send on the current
 * edge, fsync() releases one message, mmap() maps the pool read-only.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dp.h"

bool dp_ep_bound(const struct dp_endpoint *ep)
{
	/* Pairs with the release in dp_ep_bind(): the pool is ready. */
	return smp_load_acquire(&ep->dpid) != DP_DPID_NONE;
}

static int dp_ep_open(struct inode *inode, struct file *file)
{
	struct dp_endpoint *ep = kzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);

	if (!ep || dp_cork_init(ep)) {
		kfree(ep);
		return -ENOMEM;
	}
	ep->net = get_net(current->nsproxy->net_ns);
	ep->node = dp_node_of(ep->net);
	mutex_init(&ep->lock);
	mutex_init(&ep->rd_lock);
	hash_init(ep->edges);
	dp_rcv_init(&ep->rcv, ep, ep->node);
	dp_snd_ep_init(&ep->snd, ep, ep->node, &ep->rcv, &ep->lock);
	dp_uring_init(&ep->uring, &ep->pool);
	file->private_data = ep;
	return nonseekable_open(inode, file);
}

/* After a grace period no receiver can still hold the endpoint. */
static void dp_ep_free_rcu(struct rcu_head *head)
{
	struct dp_endpoint *ep = container_of(head, struct dp_endpoint, rcu);

	dp_pool_free(&ep->pool);
	dp_tx_plug_free(&ep->plug);
	if (ep->user_ns)
		put_user_ns(ep->user_ns);
	put_net(ep->net);
	kfree(ep);
}

/*
 * The last reference to the file is gone (every fd closed, every mapping
 * unmapped): the DPID is free at once, sessions end (the peers are told,
 * unacknowledged messages are counted undelivered and freed, no timer or
 * work is left), the owner's quota and locked memory are returned at once,
 * the pool memory after an RCU grace period.
 */
static int dp_ep_release(struct inode *inode, struct file *file)
{
	struct dp_endpoint *ep = file->private_data;

	if (dp_ep_bound(ep))
		dp_cat_unbind(ep->node, ep);
	dp_uring_stop(&ep->uring);
	dp_cork_stop(ep);
	dp_edge_free_all(ep);
	dp_rcv_stop(&ep->rcv);
	dp_limits_uncharge(&ep->charge);
	call_rcu(&ep->rcu, dp_ep_free_rcu);
	return 0;
}

/*
 * Checks in the order documented in docs/contract.md: arguments (EINVAL),
 * already bound (EISCONN), privileged DPID (EACCES), the owner's limits
 * (EMFILE, EDQUOT, ENOBUFS), memory (ENOMEM), the DPID's holder (EADDRINUSE).
 */
static int dp_ep_bind(struct dp_endpoint *ep, const struct dp_bind *b)
{
	u32 size = b->pool_size ? b->pool_size : dp_pool_size_default;
	int err;

	if (b->dpid == DP_DPID_NONE || (b->flags & ~DP_BIND_MASK) ||
	    b->reserved || !dp_pool_size_valid(size))
		return -EINVAL;
	mutex_lock(&ep->lock);
	err = -EISCONN;
	if (ep->dpid)
		goto out;
	err = dp_dpid_permitted(ep->net, b->dpid);
	if (err)
		goto out;
	err = dp_limits_charge(&ep->charge, current_cred(),
			       dp_pool_map_size(size));
	if (err)
		goto out;
	err = dp_pool_init(&ep->pool, size, READ_ONCE(ep->node->nid), b->dpid);
	if (err)
		goto out_uncharge;
	/*
	 * No reference to the cred itself: get_cred()'s plain store to
	 * cred->non_rcu races with every other task taking one on the same
	 * cred (KCSAN); the endpoint needs only the euid and the namespace.
	 */
	ep->user_ns = get_user_ns(current_user_ns());
	ep->uid = current_euid();
	ep->wire_uid = from_kuid_munged(&init_user_ns, ep->uid);
	ep->admit = b->flags & DP_ADMIT_MASK;
	ep->raw = b->flags & DP_BIND_RAW;
	WRITE_ONCE(ep->poll_usecs, min(READ_ONCE(dp_poll_usecs_default),
				       DP_WAIT_USECS_MAX));
	do {	/* never 0: that means "not known" on the wire */
		ep->inc = get_random_u32();
	} while (!ep->inc);
	dp_rcv_bind(&ep->rcv, &ep->pool, &ep->pool.ring, ep->inc,
		    from_kuid_munged(&init_user_ns, ep->uid));
	/* The CAT publishes ep with release semantics: the pool is ready. */
	err = dp_cat_bind(ep->node, ep, b->dpid);
	if (err)
		goto out_pool;
	/* pairs with smp_load_acquire() in dp_ep_bound() */
	smp_store_release(&ep->dpid, b->dpid);
	mutex_unlock(&ep->lock);
	return 0;

out_pool:
	put_user_ns(ep->user_ns);
	ep->user_ns = NULL;
	dp_pool_free(&ep->pool);
out_uncharge:
	dp_limits_uncharge(&ep->charge);
out:
	mutex_unlock(&ep->lock);
	return err;
}

/* A reader's polling phase: until when, on which endpoint. */
struct dp_ep_poller {
	struct dp_endpoint *ep;
	u64 deadline;		/* local_clock() ns */
};

/*
 * Whether the polling phase must stop for now: a message came, a signal,
 * the bound passed, or another task waits for this CPU (the caller yields
 * to it and goes on).  Any context: a backend's busy poll calls it with
 * preemption or bottom halves off.
 */
static bool dp_ep_poll_end(void *arg)
{
	const struct dp_ep_poller *p = arg;

	return !dp_pool_empty(&p->ep->pool) || signal_pending(current) ||
	       local_clock() >= p->deadline || !single_task_running();
}

/*
 * The polling phase of a blocking read (struct dp_wait): poll the pool,
 * and with @busy drive the NIC's receive path too, for up to @usecs, and
 * give the CPU to any other task that wants it between polls (the message
 * may well come from it).  0 if a message came, -ERESTARTSYS on a signal,
 * -ETIME once the bound has passed.  Process context, no lock held.
 */
static int dp_ep_poll_pool(struct dp_endpoint *ep, u32 usecs, bool busy)
{
	struct dp_ep_poller p = {
		.ep = ep,
		.deadline = local_clock() + (u64)usecs * NSEC_PER_USEC,
	};

	atomic64_inc(&ep->wait_poll);
	for (;;) {
		/* nothing to drive (no NIC, or none received yet): pool only */
		if (busy)
			busy = dp_nic_busy_poll(ep->node, dp_ep_poll_end, &p);
		if (!dp_pool_empty(&ep->pool)) {
			atomic64_inc(&ep->wait_poll_hit);
			return 0;
		}
		if (signal_pending(current))
			return -ERESTARTSYS;
		if (local_clock() >= p.deadline)
			return -ETIME;
		if (!single_task_running())
			schedule();	/* runnable: just lets the others run */
		else
			cond_resched();
		cpu_relax();
	}
}

/*
 * Wait until a message is at the head; called without rd_lock.  The wait
 * policy (struct dp_wait): poll first, then sleep.  O_NONBLOCK never polls.
 */
static int dp_ep_wait(struct dp_endpoint *ep, bool nonblock)
{
	u32 usecs;
	bool busy;
	int err;

	if (!dp_pool_empty(&ep->pool))
		return 0;
	if (nonblock)
		return -EAGAIN;
	usecs = READ_ONCE(ep->poll_usecs);
	if (usecs) {
		busy = READ_ONCE(ep->wait_flags) & DP_WAIT_BUSY_POLL;
		err = dp_ep_poll_pool(ep, usecs, busy);
		if (err != -ETIME)
			return err;
	}
	atomic64_inc(&ep->wait_sleep);
	return wait_event_interruptible(ep->pool.wq, !dp_pool_empty(&ep->pool));
}

/* DP_IOC_SET_WAIT: the values are checked before anything changes. */
static long dp_ioc_set_wait(struct dp_endpoint *ep, void __user *arg)
{
	struct dp_wait w;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (w.poll_usecs > DP_WAIT_USECS_MAX || (w.flags & ~DP_WAIT_MASK) ||
	    w.reserved[0] || w.reserved[1])
		return -EINVAL;
	WRITE_ONCE(ep->poll_usecs, w.poll_usecs);
	WRITE_ONCE(ep->wait_flags, w.flags);
	return 0;
}

static long dp_ioc_get_wait(struct dp_endpoint *ep, void __user *arg)
{
	struct dp_wait w = {
		.poll_usecs = READ_ONCE(ep->poll_usecs),
		.flags = READ_ONCE(ep->wait_flags),
	};

	return copy_to_user(arg, &w, sizeof(w)) ? -EFAULT : 0;
}

/*
 * Copy the head message out and release it; -EAGAIN if there is none
 * (another reader took it first).  Caller holds rd_lock.
 */
static ssize_t dp_ep_take(struct dp_endpoint *ep, char __user *buf,
			  size_t count)
{
	struct dp_token *t;
	u32 len;

	lockdep_assert_held(&ep->rd_lock);
	spin_lock_irq(&ep->pool.lock);
	t = dp_ring_head(&ep->pool.ring);
	spin_unlock_irq(&ep->pool.lock);
	if (!t)
		return -EAGAIN;
	/* Only releases move the head, and we hold rd_lock: t stays put. */
	len = t->len;
	if (len > count)
		return -EMSGSIZE;
	if (dp_copy_to_user(buf, t + 1, len))
		return -EFAULT;
	dp_pool_release(&ep->pool, 1);
	dp_rcv_released(&ep->rcv);
	return len;
}

static ssize_t dp_ep_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos)
{
	struct dp_endpoint *ep = file->private_data;
	ssize_t ret;

	if (!dp_ep_bound(ep))
		return -EBADFD;
	dp_cork_quiet(ep);
	do {
		ret = dp_ep_wait(ep, dp_file_nonblock(file));
		if (ret)
			return ret;
		if (mutex_lock_interruptible(&ep->rd_lock))
			return -ERESTARTSYS;
		ret = dp_ep_take(ep, buf, count);
		mutex_unlock(&ep->rd_lock);
	} while (ret == -EAGAIN);	/* another reader took it first */
	return ret;
}

static ssize_t dp_ep_write(struct file *file, const char __user *buf,
			   size_t count, loff_t *ppos)
{
	struct dp_endpoint *ep = file->private_data;

	if (!dp_ep_bound(ep))
		return -EBADFD;
	return dp_send(ep, NULL, buf, count, dp_file_nonblock(file));
}

u32 dp_ep_release_n(struct dp_endpoint *ep, u32 n)
{
	u32 done;

	dp_cork_quiet(ep);
	mutex_lock(&ep->rd_lock);
	done = dp_pool_release(&ep->pool, n);
	mutex_unlock(&ep->rd_lock);
	if (done)
		dp_rcv_released(&ep->rcv);
	return done;
}

/*
 * fsync(2) and fdatasync(2) release the head message.  They reach us with
 * the whole file's range; msync(MS_SYNC) on the pool mapping passes the
 * mapped byte range instead, and must not consume anything: the pool is
 * never dirty, so there is nothing to sync and it returns 0.
 */
static int dp_ep_fsync(struct file *file, loff_t start, loff_t end,
		       int datasync)
{
	struct dp_endpoint *ep = file->private_data;

	if (start != 0 || end != LLONG_MAX)
		return 0;
	if (!(file->f_mode & FMODE_READ))
		return -EBADF;
	if (!dp_ep_bound(ep))
		return -EBADFD;
	dp_ep_release_n(ep, 1);
	return 0;
}

/*
 * Writable: raw, no current edge (write fails at once), or the current
 * edge can take a largest message without waiting for credit.  An error
 * waiting on the current edge (ETIMEDOUT, ECONNRESET) is EPOLLERR.
 */
static __poll_t dp_ep_poll_out(struct dp_endpoint *ep)
{
	__poll_t mask = 0;
	struct dp_edge *e;
	int err = 0;

	if (ep->raw)
		return EPOLLOUT | EPOLLWRNORM;
	e = dp_edge_get(ep, NULL);
	if (!e || dp_snd_writable(&e->snd, &err))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (err)
		mask |= EPOLLERR;
	if (e)
		dp_edge_put(e);
	return mask;
}

static __poll_t dp_ep_poll(struct file *file, poll_table *wait)
{
	struct dp_endpoint *ep = file->private_data;
	__poll_t mask;

	if (!dp_ep_bound(ep))
		return EPOLLERR;
	dp_cork_quiet(ep);
	poll_wait(file, &ep->pool.wq, wait);
	poll_wait(file, dp_snd_wq(&ep->snd), wait);
	mask = dp_ep_poll_out(ep);
	if (!dp_pool_empty(&ep->pool))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

static int dp_ep_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct dp_endpoint *ep = file->private_data;

	if (!dp_ep_bound(ep))
		return -EBADFD;
	return dp_pool_mmap(&ep->pool, vma);
}

static void dp_ep_info(struct dp_endpoint *ep, struct dp_info *info)
{
	struct dp_edge *cur;

	memset(info, 0, sizeof(*info));
	info->nid = READ_ONCE(ep->node->nid);
	info->dpid = ep->dpid;
	info->map_size = ep->pool.map_size;
	info->data_size = ep->pool.ring.size;
	info->max_msg = dp_max_msg(ep->node);
	info->admit = ep->admit;
	info->bind_flags = dp_ep_bind_flags(ep);
	info->uid = from_kuid_munged(current_user_ns(), ep->uid);
	mutex_lock(&ep->lock);
	info->n_edges = ep->n_edges;
	cur = rcu_dereference_protected(ep->cur, lockdep_is_held(&ep->lock));
	if (cur) {
		info->cur = cur->to;
		/*
		 * Its session's limit once open (a frame before), not raw's;
		 * the node's no-NIC value while an edge to another node has
		 * no NIC to leave by, even if its session is still open.
		 */
		if (!ep->raw && (cur->to.nid == info->nid ||
				 rcu_access_pointer(ep->node->nic)))
			info->max_msg = dp_snd_max_msg(&cur->snd);
	}
	mutex_unlock(&ep->lock);
}

/* Messages sent on open sessions and not acknowledged yet. */
static u64 dp_ep_unacked(struct dp_endpoint *ep)
{
	struct dp_edge *e;
	u64 n = 0;
	int bkt;

	rcu_read_lock();
	hash_for_each_rcu(ep->edges, bkt, e, hnode)
		n += dp_snd_unacked(&e->snd);
	rcu_read_unlock();
	return n;
}

/*
 * The wire carries the uid as the sending kernel's initial user namespace
 * sees it; the token shows it as the owner's user namespace does (65534,
 * the overflow uid, if it has no mapping there), as SO_PEERCRED would.
 * The initial namespace maps every uid but (u32)-1 to itself: no lookup
 * per message there.  Bound endpoints only.
 */
u32 dp_ep_token_uid(struct dp_endpoint *ep, u32 wire_uid)
{
	if (ep->user_ns == &init_user_ns && wire_uid != (u32)-1)
		return wire_uid;
	return from_kuid_munged(ep->user_ns,
				make_kuid(&init_user_ns, wire_uid));
}

/* Every dp_bind.flags bit chosen at bind (fixed once bound). */
u32 dp_ep_bind_flags(const struct dp_endpoint *ep)
{
	return ep->admit | (ep->raw ? DP_BIND_RAW : 0);
}

/* DP_IOC_STATS, and dpctl's DP_A_EP_STATS: process context. */
void dp_ep_stats(struct dp_endpoint *ep, struct dp_ep_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tx_msgs = atomic64_read(&ep->tx_msgs);
	st->tx_bytes = atomic64_read(&ep->tx_bytes);
	spin_lock_irq(&ep->pool.lock);
	st->rx_msgs = ep->pool.rx_msgs;
	st->rx_bytes = ep->pool.rx_bytes;
	st->rx_drop_full = ep->pool.rx_drop_full;
	st->queued = ep->pool.ring.queued;
	spin_unlock_irq(&ep->pool.lock);
	st->rx_drop_admit = atomic64_read(&ep->rx_drop_admit);
	st->wait_poll = atomic64_read(&ep->wait_poll);
	st->wait_poll_hit = atomic64_read(&ep->wait_poll_hit);
	st->wait_sleep = atomic64_read(&ep->wait_sleep);
	st->tx_unacked = dp_ep_unacked(ep);
	dp_snd_ep_stats(&ep->snd, st);
	dp_rcv_stats(&ep->rcv, st);
}

static noinline_for_stack long
dp_ioc_node_stats(struct dp_endpoint *ep, void __user *arg)
{
	struct dp_node_stats st = { .n = DP_CTR_COUNT };

	BUILD_BUG_ON(DP_CTR_COUNT > DP_CTR_SLOTS);
	st.nid = READ_ONCE(ep->node->nid);
	dp_node_counters(ep->node, st.ctr);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long dp_ioc_send(struct dp_endpoint *ep, void __user *arg,
			bool nonblock)
{
	struct dp_send s;

	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;
	if (s.flags)
		return -EINVAL;
	return dp_send(ep, &s.to, u64_to_user_ptr(s.buf), s.len, nonblock);
}

static long dp_ioc_release(struct dp_endpoint *ep, void __user *arg)
{
	u32 n;

	if (get_user(n, (u32 __user *)arg))
		return -EFAULT;
	return dp_ep_release_n(ep, n);
}

static long dp_ioc_addr(struct dp_endpoint *ep, unsigned int cmd,
			void __user *arg)
{
	struct dp_addr a;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (cmd == DP_IOC_CONNECT)
		return dp_edge_connect(ep, &a);
	return dp_edge_disconnect(ep, &a);
}

/*
 * DP_IOC_INFO and DP_IOC_STATS as numbered before their structs grew: the
 * same ioctl number with the old size, answered with a prefix of the new
 * struct (the size is part of the command, so old binaries keep working).
 */
#define DP_IOC_INFO_V1	_IOC(_IOC_READ, DP_IOC_MAGIC, 5, 32)
#define DP_IOC_INFO_V2	_IOC(_IOC_READ, DP_IOC_MAGIC, 5, 40)
#define DP_IOC_STATS_V1	_IOC(_IOC_READ, DP_IOC_MAGIC, 7, 48)
#define DP_IOC_STATS_V2	_IOC(_IOC_READ, DP_IOC_MAGIC, 7, 56)
#define DP_IOC_STATS_V3	_IOC(_IOC_READ, DP_IOC_MAGIC, 7, 96)

static long dp_ioc_out(unsigned int cmd, void __user *arg, const void *v)
{
	return copy_to_user(arg, v, _IOC_SIZE(cmd)) ? -EFAULT : 0;
}

/*
 * INFO and STATS, out of line: their structs are cleared on the stack at
 * every entry (the kernel's stack initialisation), which the hot commands
 * (SEND, SENDV, RELEASE) should not pay for.
 */
static noinline_for_stack long dp_ioc_query(struct dp_endpoint *ep,
					    unsigned int cmd, void __user *arg)
{
	struct dp_ep_stats st;
	struct dp_info info;

	BUILD_BUG_ON(_IOC_SIZE(DP_IOC_INFO_V2) > sizeof(info) ||
		     _IOC_SIZE(DP_IOC_STATS_V3) > sizeof(st));
	switch (cmd) {
	case DP_IOC_INFO:
	case DP_IOC_INFO_V1:
	case DP_IOC_INFO_V2:
		dp_ep_info(ep, &info);
		return dp_ioc_out(cmd, arg, &info);
	}
	dp_ep_stats(ep, &st);
	return dp_ioc_out(cmd, arg, &st);
}

/* Commands that need a bound endpoint. */
static long dp_ioctl_bound(struct dp_endpoint *ep, unsigned int cmd,
			   void __user *arg, struct file *file)
{
	bool nonblock = dp_file_nonblock(file);

	switch (cmd) {
	case DP_IOC_CONNECT:
	case DP_IOC_DISCONNECT:
		return dp_ioc_addr(ep, cmd, arg);
	case DP_IOC_RELEASE:
		return dp_ioc_release(ep, arg);
	case DP_IOC_SEND:
		return dp_ioc_send(ep, arg, nonblock);
	case DP_IOC_SENDV:
		return dp_ioc_sendv(ep, arg, nonblock,
				    file->f_mode & FMODE_READ ? 0 : -EBADF);
	case DP_IOC_SET_WAIT:
		return dp_ioc_set_wait(ep, arg);
	case DP_IOC_GET_WAIT:
		return dp_ioc_get_wait(ep, arg);
	case DP_IOC_INFO:
	case DP_IOC_INFO_V1:
	case DP_IOC_INFO_V2:
	case DP_IOC_STATS:
	case DP_IOC_STATS_V1:
	case DP_IOC_STATS_V2:
	case DP_IOC_STATS_V3:
		return dp_ioc_query(ep, cmd, arg);
	}
	return -ENOTTY;
}

/*
 * The open mode an ioctl needs, as read(2) and write(2) do: sending and
 * changing edges are writing, releasing messages and choosing how reads
 * wait is reading.  Binding, info and statistics need neither (an
 * O_RDONLY fd is a receive-only endpoint).
 */
static fmode_t dp_ioctl_mode(unsigned int cmd)
{
	switch (cmd) {
	case DP_IOC_CONNECT:
	case DP_IOC_DISCONNECT:
	case DP_IOC_SEND:
	case DP_IOC_SENDV:
		return FMODE_WRITE;
	case DP_IOC_RELEASE:
	case DP_IOC_SET_WAIT:
		return FMODE_READ;
	}
	return 0;
}

/* DP_IOC_BIND, out of line for the same reason as dp_ioc_query(). */
static noinline_for_stack long dp_ioc_bind(struct dp_endpoint *ep,
					   void __user *arg)
{
	struct dp_bind b;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	return dp_ep_bind(ep, &b);
}

static long dp_ep_ioctl(struct file *file, unsigned int cmd, unsigned long a)
{
	struct dp_endpoint *ep = file->private_data;
	void __user *arg = (void __user *)a;
	fmode_t need = dp_ioctl_mode(cmd);

	if ((file->f_mode & need) != need)
		return -EBADF;
	switch (cmd) {
	case DP_IOC_BIND:
		return dp_ioc_bind(ep, arg);
	case DP_IOC_NODE_STATS:
		return dp_ioc_node_stats(ep, arg);
	case DP_IOC_CONNECT:
	case DP_IOC_DISCONNECT:
	case DP_IOC_RELEASE:
	case DP_IOC_SEND:
	case DP_IOC_SENDV:
	case DP_IOC_SET_WAIT:
	case DP_IOC_GET_WAIT:
	case DP_IOC_INFO:
	case DP_IOC_INFO_V1:
	case DP_IOC_INFO_V2:
	case DP_IOC_STATS:
	case DP_IOC_STATS_V1:
	case DP_IOC_STATS_V2:
	case DP_IOC_STATS_V3:
		if (!dp_ep_bound(ep))
			return -EBADFD;
		return dp_ioctl_bound(ep, cmd, arg, file);
	}
	return -ENOTTY;
}

/* Every close: the closing process's pending io_uring WAITs end. */
static int dp_ep_flush(struct file *file, fl_owner_t id)
{
	struct dp_endpoint *ep = file->private_data;

	dp_uring_flush(&ep->uring, id);
	return 0;
}

const struct file_operations dp_fops = {
	.owner = THIS_MODULE,
	.open = dp_ep_open,
	.release = dp_ep_release,
	.flush = dp_ep_flush,
	.read = dp_ep_read,
	.write = dp_ep_write,
	.fsync = dp_ep_fsync,
	.poll = dp_ep_poll,
	.mmap = dp_ep_mmap,
	.unlocked_ioctl = dp_ep_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = dp_uring_cmd,
};
