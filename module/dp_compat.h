/* SPDX-License-Identifier: GPL-2.0 */
/* Differences between the kernels dp builds against (6.1 .. 6.12). */
#ifndef _DP_COMPAT_H
#define _DP_COMPAT_H

#include <linux/mm.h>
#include <linux/skbuff.h>
#include <net/busy_poll.h>

/*
 * vm_flags became read-only with accessors in 6.3.  Kbuild probes the
 * headers for vm_flags_mod() (DP_HAVE_VM_FLAGS_MOD) rather than trusting
 * a version number, since distributions backport.
 */
static inline void dp_vm_flags_mod(struct vm_area_struct *vma,
				   unsigned long set, unsigned long clear)
{
#ifdef DP_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * Busy polling a device's NAPI context, as SO_BUSY_POLL does.  6.1 and
 * 6.12 export napi_busy_loop() with the same five arguments and take the
 * RCU read lock inside it (6.12 also has napi_busy_loop_rcu(), for callers
 * that hold it, but does not export it), and both record the NAPI id in
 * skb->napi_id at receive.  What differs is the configuration:
 * without CONFIG_NET_RX_BUSY_POLL there is neither the field nor the call.
 * A NAPI id below MIN_NAPI_ID is none (the field then holds the sender's
 * CPU, or 0).
 */
static inline unsigned int dp_skb_napi_id(const struct sk_buff *skb)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	return skb->napi_id >= MIN_NAPI_ID ? skb->napi_id : 0;
#else
	return 0;
#endif
}

/* Poll NAPI context @napi_id until @end; false if there is none to poll. */
static inline bool dp_napi_busy_loop(unsigned int napi_id,
				     bool (*end)(void *, unsigned long),
				     void *arg)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	if (napi_id < MIN_NAPI_ID)
		return false;
	napi_busy_loop(napi_id, end, arg, false, BUSY_POLL_BUDGET);
	return true;
#else
	return false;
#endif
}

#endif /* _DP_COMPAT_H */
