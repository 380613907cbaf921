/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Neighbour discovery (docs/discovery.md): a node with discovery on
 * announces its NID on its link and fills its NART from what the others
 * announce.  Opt-in by an administrator; a static NART entry always wins
 * over a discovered one; a NID claimed from two link addresses is reported
 * and never merged.
 *
 * Like the session layer (dp_sess.h), dp_disc.c sees the node only through
 * the functions below, so it also builds on the host against the kernel
 * mock of module/tests, where a test world plays the node.
 */
#ifndef _DP_DISC_H
#define _DP_DISC_H

#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "dp_agnostic.h"
#include "dp_nart.h"
#include "dp_wire.h"

struct dp_node;

/* Announces heard and not yet in the NART, taken by the learn work. */
#define DP_DISC_PENDING	32

/**
 * struct dp_disc - one node's neighbour discovery.
 * @node: the node (fixed).
 * @mutex: serialises turning discovery on and off (outside cfg_lock).
 * @lock: irq-safe (announces arrive in hard irq on tulip): @interval_ms,
 *	@own and @pending; no other lock is taken inside it.
 * @interval_ms: announce interval, 0 while off; written under @mutex and
 *	@lock, read under @lock.
 * @own_len: bytes of @own, the link address the last announce left from
 *	(our own echo is not a conflict); 0 before the first.
 * @own: that address.
 * @n_pending: entries in @pending.
 * @pending: NIDs heard that the NART does not have, for @learn.
 * @batch: @learn's copy of @pending (a work item never runs twice at once).
 * @announce: sends an announce, expires silent entries, re-arms itself.
 * @learn: puts @pending into the NART (which needs a sleeping lock).
 */
struct dp_disc {
	struct dp_node *node;
	struct mutex mutex;	/* on/off */
	spinlock_t lock;	/* irq-safe */
	u32 interval_ms;
	u8 own_len;
	u8 own[DP_LLADDR_MAX];
	u32 n_pending;
	struct dp_nart_entry pending[DP_DISC_PENDING];
	struct dp_nart_entry batch[DP_DISC_PENDING];
	struct delayed_work announce;
	struct work_struct learn;
};

void dp_disc_init(struct dp_disc *d, struct dp_node *node);
/* @interval_ms 0: off (discovered entries removed), else on; 0 or -errno. */
int dp_disc_set(struct dp_disc *d, u32 interval_ms);
u32 dp_disc_interval(struct dp_disc *d);
/* Announce now if on (the NID or the NIC changed). */
void dp_disc_kick(struct dp_disc *d);
/* Off, and every work item finished: before the node goes away. */
void dp_disc_stop(struct dp_disc *d);
/*
 * An ANNOUNCE @h (decoded, with its message @msg) from link address @src;
 * any context, caller holds RCU.
 */
void dp_disc_rx(struct dp_disc *d, const u8 *src, u8 src_len,
		const struct dp_msg_hdr *h, const void *msg);

/* ---- What discovery uses of the node (dp_node.c, dp_tx.c, dp_genl.c) ---- */
extern struct workqueue_struct *dp_wq;
u32 dp_node_nid(struct dp_node *node);
/* The published NART; caller holds RCU. */
struct dp_nart_tbl *dp_node_nart_rcu(struct dp_node *node);
/*
 * One copy-on-write of the NART: add the @n entries of @add whose NID has
 * none (dp_nart_learn()), remove discovered entries expired at @now (all
 * of them if @all).  Process context.
 */
int dp_nart_discover(struct dp_node *node, const struct dp_nart_entry *add,
		     u32 n, unsigned long now, bool all);
/*
 * Send one ANNOUNCE asking for @hold_ms to the link's broadcast address;
 * its source address goes into @lladdr.  Returns that address's length,
 * or -ENETDOWN (no NIC), -EOPNOTSUPP (a link without broadcast),
 * -EADDRNOTAVAIL (no NID yet) or the NIC's error.  Process context.
 */
int dp_tx_announce(struct dp_node *node, u32 hold_ms, u8 *lladdr);
void dp_count(struct dp_node *node, enum dp_counter c);
/* NID @nid claimed from @addr, which the NART (or this node) has not. */
void dp_event_conflict(struct dp_node *node, u32 nid, const u8 *addr, u8 alen);

#endif /* _DP_DISC_H */
