// SPDX-License-Identifier: GPL-2.0
/*
 * Batched sends (DP_IOC_SENDV): many messages, on any connected edges, in
 * one kernel entry.  Each message is sent by dp_send() exactly as
 * DP_IOC_SEND sends it; the batch stops at the first message not accepted,
 * so the count returned names exactly the messages sent, once each.  Its
 * small messages leave in as few link frames as hold them (the endpoint's
 * plug, struct dp_tx_plug), all of them before the call returns.
 */
#include <linux/uaccess.h>

#include "dp.h"

/* Send msgs[i] of a batch: 0 if it was accepted, else -errno. */
static int dp_sendv_one(struct dp_endpoint *ep, const struct dp_send __user *u,
			bool nonblock)
{
	struct dp_send s;
	ssize_t ret;

	if (copy_from_user(&s, u, sizeof(s)))
		return -EFAULT;
	if (s.flags)
		return -EINVAL;
	ret = dp_send(ep, &s.to, u64_to_user_ptr(s.buf), s.len, nonblock);
	return ret < 0 ? ret : 0;
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
	const struct dp_send __user *msgs;
	struct dp_sendv v;
	bool plugged;
	int err = 0;
	long ret;
	u32 i;

	if (copy_from_user(&v, arg, sizeof(v)))
		return -EFAULT;
	if ((v.flags & ~DP_SENDV_FLAGS) || v.n > DP_SENDV_MAX)
		return -EINVAL;
	ret = dp_sendv_release(ep, arg, &v, release_err);
	if (ret)
		return ret;
	msgs = u64_to_user_ptr(v.msgs);
	plugged = v.n > 1 && dp_tx_plug_start(ep);
	for (i = 0; i < v.n; i++) {
		err = dp_sendv_one(ep, &msgs[i], nonblock);
		if (err)
			break;
	}
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
