/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sender sessions (dp_snd.c): one per edge, over the frame layer.  The
 * structs are here only so that their owners can embed them: their fields
 * are dp_snd.c's, and everything else goes through the functions below.
 */
#ifndef _DP_SND_H
#define _DP_SND_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "dp_rcv.h"
#include "dp_rel.h"
#include "dp_sess.h"

struct dp_ep_stats;

/*
 * Congestion window bounds, in full frames of the node's link (the window
 * counts bytes, dp_cwnd_mss()); DP_CWND_MAX also caps the frames in flight.
 */
#define DP_CWND_MIN	4u
#define DP_CWND_INIT	32u
#define DP_CWND_MAX	4096u

/*
 * What a frame weighs in the window at least, on a link whose full frame
 * is @mss bytes: half a full frame where that is under DP_CWND_LEAST, as
 * on a 1500-byte link, else a quarter.  So a window at its floor lets at
 * most twice as many small frames fly as full ones on a 1500-byte link
 * (64, a tulip's RX ring) and four times as many on a jumbo one (128, in
 * a 256-entry virtio-net or e1000 ring): never the thousands of tiny
 * frames a pure byte count would let loose at a ring, and never more than
 * a receiver holds past a hole (DP_OOO_MAX).  docs/reliability.md, 6.1.
 */
#define DP_CWND_LEAST	2048u

static inline u32 dp_cwnd_least(u32 mss)
{
	BUILD_BUG_ON(4 * DP_CWND_INIT > DP_OOO_MAX);
	return max(mss / 4, min(mss / 2, DP_CWND_LEAST));
}

/*
 * Copy slots: a message whose copy fits DP_SND_SMALL bytes (up to 400 or
 * so) is copied into a slot of that size, one that fits DP_SND_SLOT (any
 * message of a 1500-byte MTU) into a slot of that size, a larger one that
 * fits one frame (jumbo frames) into a slot of a frame's size, and the
 * slot is kept for the next message once acknowledged: no allocation per
 * message, nor per fragment of a large one.  An edge keeps as many slots,
 * in flight and spare, as its congestion window (DP_SND_SPARES at least),
 * and no spare once its session has given its credit back (idle) or ended.
 * The copies are in pages, never slab objects, so that a NIC may send one
 * as an skb's page fragments (the netdev backend): the two smaller sizes
 * are cut from a page (eight or two to a 4 KiB page), each slot holding a
 * reference to it; a larger copy has pages of its own.  Small messages in
 * small slots spread over a quarter of the pages, which made a stream of
 * 64-byte writes faster (docs/perf/profile-realtime-write64.md).
 */
#define DP_SND_SLOT	2048u
#define DP_SND_SMALL	512u
#define DP_SND_SPARES	32u

/**
 * struct dp_txmsg - the kernel copy of one message not yet acknowledged.
 * @node: in dp_snd.unacked, in seq order; or in dp_snd.spare.
 * @seq: its sequence number.
 * @space: what it costs in the receiver's pool (dp_frag_credit()): a
 *	large message's whole cost is its first fragment's, the others' 0.
 * @len: message bytes in @data (a fragment's wire len).
 * @flags: its DP_WF_FRAG_* bits, 0 for a message sent whole.
 * @resent: sent more than once, or held by the receiver before a timeout
 *	made the sender forget it: no RTT sample from it (Karn's rule).
 * @sacked: the receiver's SACK map says it holds it (written under
 *	dp_snd.lock, read without it); a timeout clears it.
 * @ack_now: it took the bytes in flight past half the congestion window
 *	(dp_snd_ask_ack()), so it asks for an ACK at once (DP_WF_ACKNOW).
 * @resent_at: jiffies of its last resend for a hole (under tx_mutex).
 * @slot: the size of the allocation if it is a copy slot, kept for
 *	reuse; 0 if not.
 * @size: the bytes allocated (dp_snd_copy_alloc()).
 * @wt: what it weighs in the congestion window (dp_cwnd_weight()), fixed
 *	when it takes its seq.
 * @sent_ns: ktime of the first transmission.
 * @crc: the CRC32C's state after @data (dp_wire_msg_crc()), run over the
 *	bytes as they were copied, while they are in the cache: every
 *	transmission then runs the checksum over its header only.
 * @crc_ok: @crc is set; not for a message to this node's own NID (no
 *	wire, no checksum), until it is sent on a NIC after all.
 * @keep: its holders: the session while it is in @unacked (and while the
 *	writer fills it), and each NIC transmission that sends from @data
 *	until the chip has read it.  A spare's is 0.
 * @data: the bytes, copied once from user space.
 */
struct dp_txmsg {
	struct list_head node;
	u32 seq;
	u32 space;
	u16 len;
	u16 flags;
	bool resent;
	bool sacked;
	bool ack_now;
	unsigned long resent_at;
	u32 slot;
	u32 size;
	u32 wt;
	u64 sent_ns;
	u32 crc;
	bool crc_ok;
	struct dp_txref keep;
	u8 data[];
};

/*
 * enum dp_snd_state - an edge's sending session (docs/reliability.md, 4),
 * numbered as dpctl sees it (enum dp_edge_state).
 */
enum dp_snd_state {
	DP_SND_IDLE = DP_EDGE_IDLE,	/* no session: the next send opens one */
	DP_SND_HELLO = DP_EDGE_HELLO,	/* HELLO sent, waiting for the answer */
	DP_SND_OPEN = DP_EDGE_OPEN,	/* sending */
	DP_SND_FAILED = DP_EDGE_FAILED,	/* @err is reported to the next send */
};

/**
 * struct dp_snd_ep - what the sending sessions of one endpoint share.
 * @ep: the endpoint: frames are built from it (dp_tx_hdr()).
 * @node: its node: frames go out there, counters are counted there.
 * @rcv: its receiving side, for acks that ride on DATA.
 * @ep_lock: the endpoint's lock: edges join and leave under it.
 * @wq: writers waiting for credit, and pollers; woken when a session's
 *	credit or state changes, with wake_up_all(): the writer of a large
 *	message waits for the window killable, not interruptible.
 * @retrans: DATA frames sent again (dp_ep_stats.tx_retrans).
 * @undelivered: messages given up without an ack (tx_undelivered).
 * @blocked: sends that had to wait for credit (tx_blocked).
 */
struct dp_snd_ep {
	struct dp_endpoint *ep;
	struct dp_node *node;
	struct dp_rcv *rcv;
	struct mutex *ep_lock;
	wait_queue_head_t wq;
	atomic64_t retrans;
	atomic64_t undelivered;
	atomic64_t blocked;
};

/**
 * struct dp_snd - the sending session of one edge.
 * @se: the endpoint's sending side (outlives the session).
 * @to: the peer.
 * @tx_mutex: serialises seq assignment with the first transmission, and
 *	retransmission, so frames leave in seq order.
 * @lock: guards everything below; irq-safe (the MDR may run in hard irq).
 *	Writers' wait conditions and dp_snd_unacked() read @dead, @state,
 *	@err, @cwnd, @probe, @want, @returned, @in_msg, @hushed, @snd_nxt,
 *	@snd_una, @snd_bytes, @una_bytes, @held, @held_bytes, @snd_space,
 *	@credit and @peer_max without it (READ_ONCE), so every store to
 *	those is a WRITE_ONCE under @lock.
 * @dead: removed from the endpoint: timer and work are not re-armed.
 * @state: enum dp_snd_state.
 * @err: ETIMEDOUT or ECONNRESET while FAILED.
 * @fast: a gap was reported: resend the first unacknowledged, and the
 *	holes below @sack_high, now.
 * @fast_seq: the seq last resent that way: once per hole and report,
 *	again only if the receiver still reports it a round trip later.
 * @fast_at: jiffies of that resend.
 * @held: messages past snd_una the receiver holds (SACK): out of the
 *	congestion window (READ_ONCE; stored under @lock).
 * @held_bytes: what they weigh (dp_txmsg.wt).
 * @sack_high: one past the highest message held: the holes below it are
 *	resent (under @lock).
 * @recovering: going back after a timeout: the messages sent before it,
 *	up to @recover, are resent as ACKs open the window.
 * @refill: an ACK moved the window while @recovering: the
 *	work resends the next messages.
 * @recover: snd_nxt when the timeout struck; written holding @tx_mutex
 *	and @lock, read under either.
 * @resend_nxt: the next seq to resend while @recovering; under @tx_mutex.
 * @cwnd: bytes allowed in flight (congestion window, on top of credit),
 *	each frame weighed by dp_cwnd_weight().
 * @ssthresh: slow start below, additive increase above (bytes).
 * @cwnd_acc: acknowledged bytes towards the next additive step.
 * @undo: the last timeout may be undone (dp_snd_undo()): the message its
 *	go-back sent first, @undo_seq, had been sent once before it.
 * @undo_seq: that message (snd_una when the timeout struck).
 * @undo_cwnd: @cwnd before that timeout.
 * @undo_ssthresh: @ssthresh before it.  All four under @lock.
 * @timeouts: retransmission timeouts with DATA in flight (each a
 *	go-back) over the edge's life, every session; under @lock.
 * @undone: of those, undone as spurious (dp_snd_undo()); under @lock.
 * @probe: a writer waits for credit: the timer probes the window.
 * @want: space of the message a writer last found no credit for (0 once
 *	one is sent): the probing goes on until it fits.
 * @waiters: writers asleep waiting for credit: no credit return meanwhile.
 * @returned: the credit was given back while idle (none asked for since).
 * @in_msg: a writer is sending a large message: its fragments take the
 *	next seqs, and every other send waits until its last one is queued.
 * @hushed: that writer was silent past half of unreach_ms: the fragment
 *	sent then went alone, and the next waits for its answer
 *	(dp_snd_fell_silent()).
 * @peer_inc: the receiver's incarnation, learnt from the HELLO's answer.
 * @isn: the session's initial sequence number, random.
 * @snd_nxt: next seq to assign.
 * @snd_una: oldest seq not acknowledged.
 * @snd_bytes: cumulative weight of the messages assigned a seq.
 * @una_bytes: cumulative weight of those acknowledged: @snd_bytes less
 *	@una_bytes is in flight.
 * @snd_space: cumulative space of the messages assigned a seq.
 * @credit: cumulative space the receiver allows.
 * @peer_max: the receiver's largest message (its pool's limit).
 * @n_unacked: entries in @unacked.
 * @unacked: struct dp_txmsg list; changed under @tx_mutex and @lock.
 * @n_spare: entries in @spare.
 * @spare: copy slots free for the next messages (struct dp_txmsg).
 * @last_heard: jiffies of the last frame of this session from the peer.
 * @wait_since: jiffies when the peer last came to owe an answer (nothing
 *	was pending before): unreach_ms counts from the later of the two.
 * @deadline: jiffies when the timer acts next.
 * @armed: @timer is armed (for @armed_at, at or before @deadline).
 * @armed_at: the expiry @timer is armed for.
 * @rtt: the RTO estimator.
 * @timer: retransmission, HELLO and window-probe timer; it queues @work.
 * @work: sends in process context (a backend's xmit may sleep).
 * @tmpl: the header of the session's DATA frames (dp_tx_tmpl()); under
 *	@tx_mutex.
 * @pair: the link to the receive state of the peer, for the acks that
 *	ride on our DATA: under the endpoint's dp_rcv.lock, used under
 *	@tx_mutex, dropped by a new session and before the edge is freed.
 */
struct dp_snd {
	struct dp_snd_ep *se;
	struct dp_addr to;
	struct mutex tx_mutex;	/* see the lock order in dp.h */
	spinlock_t lock;	/* irq-safe: sender state */
	bool dead;
	u8 state;
	int err;
	bool fast;
	bool recovering;
	bool refill;
	bool probe;
	u32 want;
	u32 fast_seq;
	unsigned long fast_at;
	u32 held;
	u32 held_bytes;
	u32 sack_high;
	u32 recover;
	u32 resend_nxt;
	u32 cwnd;
	u32 ssthresh;
	u32 cwnd_acc;
	bool undo;
	u32 undo_seq;
	u32 undo_cwnd;
	u32 undo_ssthresh;
	u32 timeouts;
	u32 undone;
	u32 waiters;
	bool returned;
	bool in_msg;
	bool hushed;
	u32 peer_inc;
	u32 isn;
	u32 snd_nxt;
	u32 snd_una;
	u32 snd_bytes;
	u32 una_bytes;
	u32 snd_space;
	u32 credit;
	u32 peer_max;
	u32 n_unacked;
	struct list_head unacked;
	u32 n_spare;
	struct list_head spare;
	unsigned long last_heard;
	unsigned long wait_since;
	unsigned long deadline;
	bool armed;
	unsigned long armed_at;
	struct dp_rtt rtt;
	struct timer_list timer;
	struct work_struct work;
	struct dp_tx_tmpl tmpl;
	struct dp_rcv_pair pair;
};

/**
 * struct dp_snd_info - one edge's session as dpctl shows it, read at once.
 * @state: enum dp_snd_state.
 * @err: positive errno the next send reports, 0 unless FAILED.
 * @isn: the session's initial sequence number.
 * @snd_una: oldest seq not acknowledged.
 * @snd_nxt: next seq to assign.
 * @credit_left: pool space the receiver still allows (credit - snd_space).
 * @cwnd: congestion window in bytes.
 * @rto_ms: the retransmission timeout in force (backoff included).
 * @backoff: consecutive timeouts.
 * @heard_ms: since the peer was last heard (since the HELLO while HELLO).
 * @timeouts: retransmission timeouts with DATA in flight, the edge's life.
 * @undone: of those, undone: the receiver reported the first resend a
 *	duplicate.
 */
struct dp_snd_info {
	u8 state;
	u32 err;
	u32 isn;
	u32 snd_una;
	u32 snd_nxt;
	s32 credit_left;
	u32 cwnd;
	u32 rto_ms;
	u32 backoff;
	u32 heard_ms;
	u32 timeouts;
	u32 undone;
};

/* The endpoint's side: at open; its wait queue; its counters. */
void dp_snd_ep_init(struct dp_snd_ep *se, struct dp_endpoint *ep,
		    struct dp_node *node, struct dp_rcv *rcv,
		    struct mutex *ep_lock);
void dp_snd_wake(struct dp_snd_ep *se);
void dp_snd_ep_stats(struct dp_snd_ep *se, struct dp_ep_stats *st);

static inline wait_queue_head_t *dp_snd_wq(struct dp_snd_ep *se)
{
	return &se->wq;
}

/* One edge's session */
void dp_snd_init(struct dp_snd *s, struct dp_snd_ep *se,
		 const struct dp_addr *to);
int dp_snd_send(struct dp_snd *s, const void __user *buf, size_t len,
		bool nonblock);
void dp_snd_ack(struct dp_snd *s, const struct dp_msg_hdr *h, const void *sack);
void dp_snd_reset(struct dp_snd *s, const struct dp_msg_hdr *h);
void dp_snd_stop(struct dp_snd *s);
void dp_snd_release(struct dp_snd *s);
bool dp_snd_writable(struct dp_snd *s, int *err);
u32 dp_snd_unacked(struct dp_snd *s);
u32 dp_snd_max_msg(struct dp_snd *s);
void dp_snd_info(struct dp_snd *s, struct dp_snd_info *si);

#endif /* _DP_SND_H */
