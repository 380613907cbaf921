// SPDX-License-Identifier: GPL-2.0
/*
 * Batched sends (DP_IOC_SENDV): many messages, on any connected edges, in
 * one kernel entry.  Each message is sent by dp_send() exactly as
 * DP_IOC_SEND sends it; the batch stops at the first message not accepted,
 * so the count returned names exactly the messages sent, once each.
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
 * DP_IOC_SENDV on a bound endpoint.  Returns the count accepted, or the
 * error of msgs[0] if none was; with a count below n, dp_sendv.err holds
 * the errno of the first message not accepted.  In blocking mode each
 * message waits for credit as write() does, and a signal ends the batch
 * (EINTR once some were sent: they cannot be sent again by a restart).
 */
long dp_ioc_sendv(struct dp_endpoint *ep, struct dp_sendv __user *arg,
		  bool nonblock)
{
	const struct dp_send __user *msgs;
	struct dp_sendv v;
	int err = 0;
	u32 i;

	if (copy_from_user(&v, arg, sizeof(v)))
		return -EFAULT;
	if (v.flags || v.reserved || v.n > DP_SENDV_MAX)
		return -EINVAL;
	msgs = u64_to_user_ptr(v.msgs);
	for (i = 0; i < v.n; i++) {
		err = dp_sendv_one(ep, &msgs[i], nonblock);
		if (err)
			break;
	}
	if (err && !i)
		return err;	/* nothing sent: a restart is safe */
	if (err == -ERESTARTSYS)
		err = -EINTR;
	/* msgs[0..i-1] are sent: failing to report err cannot undo that. */
	(void)put_user((u32)-err, &arg->err);
	return i;
}
