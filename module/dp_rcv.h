/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Receiver sessions and credit (dp_rcv.c): one struct dp_rcv per endpoint,
 * one rx peer in it per sender.  The struct is here only so that the
 * endpoint can embed it: its fields are dp_rcv.c's, and everything else
 * goes through the functions below.
 */
#ifndef _DP_RCV_H
#define _DP_RCV_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "dp_rel.h"
#include "dp_ring.h"
#include "dp_sess.h"

struct dp_ep_stats;

#define DP_MAX_RX_PEERS		1024u	/* senders an endpoint keeps state for */
#define DP_RESETS_PENDING	8u	/* RESETs queued per endpoint, more dropped */
#define DP_OOO_MAX		512u	/* held messages per sender */
#define DP_OOO_SPAN		1024u	/* only this far past the gap */
#define DP_GAP_AGAIN_MS		5u	/* a gap still open, reported again */
#define DP_EVICT_SCAN		64u	/* silent senders a HELLO looks at */

/*
 * A RESET owed to a sender whose frame fits no session here: @seq echoes
 * that frame's, so the sender can tell which of its sessions it answers.
 */
struct dp_reset {
	struct dp_addr to;
	u32 dst_inc;
	u32 seq;
	u16 flags;
};

/**
 * struct dp_rcv_pair - an edge's link to the receive state of its peer:
 * the rx peer of the endpoint the edge sends to, if that endpoint sends
 * to us too.  The acks owed to it ride on the edge's DATA
 * (dp_rcv_piggyback()) with no lookup per frame: one lookup pairs them.
 * Embedded in struct dp_snd; its fields are dp_rcv.c's, and all of them
 * are under dp_rcv.lock of the edge's own endpoint.
 * @rp: the rx peer, or NULL; it points back at this pair (only one edge
 *	at a time is paired with an rx peer).  The rx peer clears it before
 *	it is freed (eviction, FIN, a new owner of the DPID, close) and when
 *	the sender restarts; the edge before it is freed (dp_rcv_unpair()).
 * @placed: dp_rcv.placed when @rp was last looked for, if @looked: while
 *	no rx peer was placed since, there is none to find.
 * @looked: @placed is valid.
 */
struct dp_rcv_pair {
	struct dp_rx_peer *rp;
	u32 placed;
	bool looked;
};

#define DP_ACK_BATCH	16u	/* frames ack_work builds per round */

/*
 * struct dp_ack_batch - the ACKs and RESETs one round of ack_work sends,
 * built under dp_rcv.lock and sent after it is dropped; an ACK whose len
 * is DP_SACK_LEN carries its SACK map, sack[i] for h[i].
 */
struct dp_ack_batch {
	struct dp_msg_hdr h[DP_ACK_BATCH];
	u8 sack[DP_ACK_BATCH][DP_SACK_LEN];
	unsigned int n;
};

/**
 * struct dp_rcv - a receiving endpoint's sessions, one per sender.
 * @ep: the endpoint: frames are built from it (dp_tx_hdr()).
 * @node: its node: frames go out there, counters are counted there.
 * @pool: its receive pool; set at bind.
 * @ring: the pool's ring; set at bind.
 * @inc: the endpoint's incarnation; set at bind.
 * @owner_uid: the endpoint owner's uid as the wire carries it; set at bind.
 *	Its own senders are not held to the per-source limits.
 * @seed: random, drawn at init: the hash seed of @peers and @srcs, so
 *	that no sender can choose its chain.
 * @lock: guards everything below but the works and @rx_dup, and every rx
 *	peer; irq-safe.
 * @peers: struct dp_rx_peer by sender; RCU readers.
 * @last: the entry of @peers found last, or NULL (dp_rcv_find()).
 * @n_peers: entries in @peers.
 * @placed: rx peers placed so far (wraps): a pair that found none looks
 *	again only once this changed (struct dp_rcv_pair).
 * @srcs: struct dp_rx_src, the places in @peers each user (any node) and
 *	each node (any user) holds, but the owner's own senders'.
 * @lru: the rx peers by the time they were last heard, oldest first.
 * @active: the rx peers not idle, in the order of the next re-grant.
 * @cons_seen: the pool's consumer index as last read under @lock, to see
 *	whether a release came while @starved was being set
 *	(dp_rcv_starve()).
 * @n_active: rx peers not idle: the pool is shared fairly among them.
 * @outstanding: credit granted and not yet used, over all rx peers.
 * @starved: a grant was cut short by a full pool: releases re-grant.
 * @sws_room: with @starved, the room at which a re-grant makes an update
 *	worth its frame to some sender short of credit (the least of their
 *	needs): releases that make less do not run @ack_work.
 * @dead: closing: neither work is queued any more.
 * @ooo_bytes: what the messages held after gaps cost (bytes and their
 *	headers), all senders together: at most the pool size.
 * @n_resets: entries in @resets.
 * @resets: RESETs owed, sent by @ack_work.
 * @n_due: rx peers that are owed an ACK (their ack_due is set): ack_work
 *	walks the table only while some are, and an ACK that rode on DATA
 *	leaves it nothing to do.
 * @ack_work: sends owed ACKs, window updates and RESETs.
 * @wants: the rx peers whose writer waits for a large message, in the
 *	order they asked: each is granted its whole cost in turn.
 * @open: the rx peers with a large message open (dp_rx_peer.open), in
 *	the order @open_work looks at them.
 * @open_work: gives up an open message whose sender fell silent.
 * @open_due: when @open_work was last queued to run.
 * @batch: @ack_work's frames, kept here so that it allocates nothing.
 *	Not under @lock: only @ack_work uses it (a work item never runs
 *	twice at once), and dp_rcv_stop() once @ack_work is cancelled for
 *	good.
 * @rx_dup: dp_ep_stats' rx_dup.
 */
struct dp_rcv {
	struct dp_endpoint *ep;
	struct dp_node *node;
	struct dp_pool *pool;
	struct dp_ring *ring;
	u32 inc;
	u32 owner_uid;
	u32 seed;
	spinlock_t lock;	/* irq-safe: receiver sessions */
	DECLARE_HASHTABLE(peers, 6);
	struct dp_rx_peer *last;
	u32 n_peers;
	u32 placed;
	DECLARE_HASHTABLE(srcs, 5);
	struct list_head lru;
	struct list_head active;
	u64 cons_seen;
	u32 n_active;
	u32 outstanding;
	bool starved;
	u32 sws_room;
	struct list_head wants;
	bool dead;
	u32 ooo_bytes;
	u32 n_resets;
	struct dp_reset resets[DP_RESETS_PENDING];
	u32 n_due;
	struct delayed_work ack_work;
	struct list_head open;
	struct delayed_work open_work;
	unsigned long open_due;
	struct dp_ack_batch batch;
	atomic64_t rx_dup;
};

/**
 * struct dp_rcv_info - a receiving endpoint's session with one sender.
 * @from: the sender.
 * @isn: the session's initial sequence number.
 * @rcv_nxt: next seq expected.
 * @held: messages held after a gap.
 * @credit_left: space granted and not yet arrived.
 * @ack_owed: an ACK is owed to the sender and has not left yet.
 */
struct dp_rcv_info {
	struct dp_addr from;
	u32 isn;
	u32 rcv_nxt;
	u32 held;
	s32 credit_left;
	bool ack_owed;
};

/* Life: at open, at bind (before the endpoint is published), at close. */
void dp_rcv_init(struct dp_rcv *r, struct dp_endpoint *ep,
		 struct dp_node *node);
void dp_rcv_bind(struct dp_rcv *r, struct dp_pool *pool, struct dp_ring *ring,
		 u32 inc, u32 owner_uid);
void dp_rcv_stop(struct dp_rcv *r);

/* Frames from the MDR, any context, RCU held */
void dp_rcv_hello(struct dp_rcv *r, const struct dp_msg_hdr *h);
void dp_rcv_probe(struct dp_rcv *r, const struct dp_msg_hdr *h);
void dp_rcv_return(struct dp_rcv *r, const struct dp_msg_hdr *h);
void dp_rcv_refuse(struct dp_rcv *r, const struct dp_msg_hdr *h);
void dp_rcv_fin(struct dp_rcv *r, const struct dp_msg_hdr *h);
void dp_rcv_data(struct dp_rcv *r, const struct dp_msg_hdr *h,
		 const struct dp_payload *payload);
void dp_rcv_raw(struct dp_rcv *r, const struct dp_msg_hdr *h,
		const struct dp_payload *payload);

/*
 * Acks riding on the endpoint's own DATA (dp_snd.c), on the edge whose
 * pair @p is: the caller serialises the calls on one pair (the edge's
 * tx_mutex) and calls dp_rcv_unpair() before the pair's memory goes.
 */
void dp_rcv_piggyback(struct dp_rcv *r, struct dp_rcv_pair *p,
		      struct dp_msg_hdr *h, u32 peer_inc);
void dp_rcv_unpiggyback(struct dp_rcv *r, struct dp_rcv_pair *p,
			const struct dp_msg_hdr *h);
void dp_rcv_unpair(struct dp_rcv *r, struct dp_rcv_pair *p);

/* The reader released messages */
void dp_rcv_released(struct dp_rcv *r);

/* Snapshots: counters; each sender's session, under RCU, until @fn != 0 */
void dp_rcv_stats(struct dp_rcv *r, struct dp_ep_stats *st);
int dp_rcv_walk(struct dp_rcv *r,
		int (*fn)(const struct dp_rcv_info *ri, void *arg), void *arg);

#endif /* _DP_RCV_H */
