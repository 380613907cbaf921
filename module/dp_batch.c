// SPDX-License-Identifier: GPL-2.0
/*
 * Batched sends (DP_IOC_SENDV): many messages, on any connected edges, in
 * one kernel entry.  Each message is sent by dp_send_edge_tally() exactly
 * as DP_IOC_SEND sends it (dp_send() is the same after the edge's lookup,
 * which a batch does once per run of messages to one edge); the batch
 * stops at the first message not accepted, so the count returned names
 * exactly the messages sent, once each.  Its small messages leave in as
 * few link frames as hold them (the endpoint's plug, struct dp_tx_plug),
 * all of them before the call returns.
 */
#include <linux/uaccess.h>

#include "dp.h"

/*
 * Descriptors are copied in this many at a time, and the edge of one
 * message serves the next to the same peer: a batch pays the user copy's
 * checks and the edge's lookup once per run, not once per message, and
 * its counters once per chunk.
 */
#define DP_SENDV_CHUNK	8

struct dp_sendv_run {
	struct dp_endpoint *ep;
	struct dp_edge *e;	/* the last message's edge, referenced */
	struct dp_tx_tally tally;	/* counted per chunk */
	struct dp_tx_plug *plug;	/* the batch's, or NULL */
	u32 left;	/* messages yet to send from the chunk's first on */
	bool nonblock;
};

/*
 * The edge to @to: the run's if it is that peer's and still connected (a
 * disconnect takes it out of the table; a lookup then says ENOTCONN, as
 * for a single send), else looked up.  NULL if there is none.
 */
static struct dp_edge *dp_sendv_edge(struct dp_sendv_run *r, const struct dp_addr *to)
{
	struct dp_edge *e = r->e;

	if (e && e->to.nid == to->nid && e->to.dpid == to->dpid &&
	    !hlist_unhashed_lockless(&e->hnode))
		return e;
	if (e)
		dp_edge_put(e);
	r->e = dp_edge_get(r->ep, to);
	return r->e;
}

/* Send one message of a batch: 0 if it was accepted, else -errno. */
static int dp_sendv_one(struct dp_sendv_run *r, const struct dp_send *s)
{
	struct dp_edge *e;
	ssize_t ret;

	if (s->flags)
		return -EINVAL;
	e = dp_sendv_edge(r, &s->to);
	if (!e)
		return -ENOTCONN;
	ret = dp_send_edge_tally(e, u64_to_user_ptr(s->buf), s->len,
				 r->nonblock, &r->tally);
	return ret < 0 ? ret : 0;
}

/*
 * Send up to @n messages from @u: how many were accepted, the first one
 * not accepted's -errno in *err.  A chunk whose copy faults is taken one
 * descriptor at a time, so that the messages before the bad one are sent.
 */
static u32 dp_sendv_chunk(struct dp_sendv_run *r, const struct dp_send __user *u,
			  u32 n, int *err)
{
	struct dp_send s[DP_SENDV_CHUNK];
	bool one = copy_from_user(s, u, n * sizeof(s[0]));
	u32 i;

	for (i = 0; i < n; i++) {
		if (one && copy_from_user(&s[i], &u[i], sizeof(s[i]))) {
			*err = -EFAULT;
			return i;
		}
		if (r->plug)	/* what the next bundle is sized for */
			r->plug->left = r->left - i;
		*err = dp_sendv_one(r, &s[i]);
		if (*err)
			return i;
	}
	return n;
}

/*
 * DP_SENDV_RELEASE: release up to v->release head messages before the
 * sends, and say how many in arg->release, with arg->err cleared to show
 * that the release was done, whatever the sends do.
 */
static long dp_sendv_release(struct dp_endpoint *ep, struct dp_sendv __user *arg,
			     const struct dp_sendv *v, int release_err)
{
	u32 done;

	if (!(v->flags & DP_SENDV_RELEASE))
		return v->reserved ? -EINVAL : 0;
	if (release_err)
		return release_err;
	done = dp_ep_release_n(ep, v->release);
	if (put_user(0u, &arg->err) || put_user(done, &arg->release))
		return -EFAULT;
	return 0;
}

/*
 * DP_IOC_SENDV on a bound endpoint.  Returns the count accepted, or the
 * error of msgs[0] if none was; with a count below n, dp_sendv.err holds
 * the errno of the first message not accepted.  In blocking mode each
 * message waits for credit as write() does, and a signal ends the batch
 * (EINTR once some were sent: they cannot be sent again by a restart).
 * @release_err: 0 if this caller may use DP_SENDV_RELEASE, else the
 * errno it gets (EBADF: fd not open for reading; EINVAL: io_uring).
 */
long dp_ioc_sendv(struct dp_endpoint *ep, struct dp_sendv __user *arg,
		  bool nonblock, int release_err)
{
	struct dp_sendv_run r = { .ep = ep, .nonblock = nonblock };
	const struct dp_send __user *msgs;
	struct dp_sendv v;
	u32 i, n, got;
	bool plugged;
	int err = 0;
	long ret;

	if (copy_from_user(&v, arg, sizeof(v)))
		return -EFAULT;
	if ((v.flags & ~DP_SENDV_FLAGS) || v.n > DP_SENDV_MAX)
		return -EINVAL;
	ret = dp_sendv_release(ep, arg, &v, release_err);
	if (ret)
		return ret;
	msgs = u64_to_user_ptr(v.msgs);
	plugged = v.n > 1 && dp_tx_plug_start(ep);
	r.plug = plugged ? &ep->plug : NULL;
	for (i = 0; i < v.n && !err; i += got) {
		r.left = v.n - i;
		n = min_t(u32, r.left, DP_SENDV_CHUNK);
		got = dp_sendv_chunk(&r, &msgs[i], n, &err);
		dp_tx_tally_flush(ep, &r.tally);
	}
	if (r.e)
		dp_edge_put(r.e);
	if (plugged)
		dp_tx_plug_end(ep);
	/*
	 * A restart is safe only if nothing was done: no message sent and
	 * none released (a restart would read arg->release, our count, and
	 * release that many again).
	 */
	if (err == -ERESTARTSYS && (i || (v.flags & DP_SENDV_RELEASE)))
		err = -EINTR;
	if (err && !i)
		return err;
	/* msgs[0..i-1] are sent: failing to report err cannot undo that. */
	(void)put_user((u32)-err, &arg->err);
	return i;
}
