// SPDX-License-Identifier: GPL-2.0
/*
 * Receiver sessions and credit (docs/reliability.md, sections 5 and 6).
 * A receiving endpoint keeps one rx peer per sender: the session's
 * incarnation and ISN, the next seq it expects, and the credit it granted.
 * DATA is placed in the pool only in order and only within credit, so a
 * message is delivered exactly once and always fits.  Everything here runs
 * in the MDR's context under r->lock (irq-safe) and never transmits:
 * owed ACKs and RESETs are sent by the endpoint's ack_work, in process
 * context, unless a DATA frame going the other way carries the ack first.
 *
 * Below the session is the frame layer (dp_tx_hdr(), dp_tx_frame()) and
 * the pool; the endpoint, node and pool are opaque here (dp_sess.h), so
 * this file also builds on the host against module/tests/mock/.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "dp_frag.h"
#include "dp_rcv.h"
#include "dp_trace.h"

/**
 * struct dp_rx_peer - a receiving endpoint's state for one sender.
 * @hnode: in dp_rcv.peers.
 * @from: the sender {NID, DPID}.
 * @uid: the sender's user, as its kernel stamped it on the HELLO.
 * @by_uid: its user's count in dp_rcv.srcs; NULL for the owner's own.
 * @by_nid: its node's count in dp_rcv.srcs; NULL for the owner's own.
 * @peer_inc: the sender's incarnation in the current session.
 * @isn: the session's initial sequence number.
 * @rcv_nxt: next seq expected.
 * @arrived: cumulative space delivered.
 * @credit: cumulative space granted.
 * @adv: the credit last sent to the sender.
 * @ack_due: DP_ACK_* bits: an ACK is owed.
 * @gap: a gap ACK was sent for the current gap.
 * @sack: its HELLO said it takes SACK maps: our ACKs say what is held.
 * @gap_at: jiffies of that ACK: DATA after the gap DP_GAP_AGAIN_MS later
 *	reports it again (the resend, or the report, may have been lost).
 * @idle: the sender gave its credit back, or stayed silent past unreach_ms
 *	(its credit was taken back): no grants until it asks.
 * @heard: jiffies of the sender's last frame of this session.
 * @lru: in dp_rcv.lru, by @heard, the longest silent first.
 * @active: in dp_rcv.active while not @idle: the order of re-grants.
 * @ooo: struct dp_ooo, messages that arrived after a gap, by seq.
 * @n_ooo: entries in @ooo.
 * @pair: the edge of this endpoint to the sender, if one is paired with
 *	us (struct dp_rcv_pair), else NULL.
 * @frag: the session's large message open in the pool, if any
 *	(docs/reliability.md, "Large messages"); written under the pool's
 *	lock too.
 * @open: in dp_rcv.open while @frag has a message open.
 * @want: the cost of the message its writer waits for, as its last window
 *	probe said (0: none): the target of its grants is raised to it, at
 *	most the pool less the wrap reserve, until a grant gives it that much
 *	or that message arrives.
 * @wants: in dp_rcv.wants while @want is more than its fair window: such
 *	a message is granted whole, in the order they asked
 *	(dp_rcv_grant_whole()).
 * @frag_extra: fragments after the first so far in the session: a token's
 *	seq counts messages, not frames (seq - isn + 1 - @frag_extra).
 */
struct dp_rx_peer {
	struct hlist_node hnode;
	struct dp_addr from;
	u32 uid;
	struct dp_rx_src *by_uid;
	struct dp_rx_src *by_nid;
	u32 peer_inc;
	u32 isn;
	u32 rcv_nxt;
	u32 arrived;
	u32 credit;
	u32 adv;
	u8 ack_due;
	u16 dup;
	bool gap;
	bool sack;
	bool idle;
	unsigned long gap_at;
	unsigned long heard;
	struct list_head lru;
	struct list_head active;
	struct list_head ooo;
	u32 n_ooo;
	struct dp_rcv_pair *pair;
	struct dp_frag_rx frag;
	struct list_head open;
	u32 want;
	struct list_head wants;
	u32 frag_extra;
	struct rcu_head rcu;
};

/*
 * struct dp_ooo - a message that arrived after a gap, held (a copy) until
 * the gap is filled, so only the missing message is resent.
 */
struct dp_ooo {
	struct list_head node;
	struct dp_msg_hdr h;
	u8 data[];
};

/*
 * struct dp_rx_src - the places in a receiver's sender table one source
 * holds: a user (any node) or a node (any user).  Counted exactly, one
 * entry per source, so no user is held to another's share.
 */
struct dp_rx_src {
	struct hlist_node hnode;
	u32 id;
	u8 kind;
	u16 n;
};

#define DP_SRC_UID	0
#define DP_SRC_NID	1

#define DP_ACK_DELAYED	0x1	/* after a delivery: may wait for a piggy-back */
#define DP_ACK_NOW	0x2	/* a HELLO, a duplicate, a probe, a low window */
#define DP_ACK_GAP	0x4	/* send with DP_WF_GAP */
#define DP_ACK_DUP	0x8	/* send with DP_WF_DUP, naming dp_rx_peer.dup */

static u32 dp_rcv_hash(const struct dp_rcv *r, const struct dp_addr *a)
{
	return jhash_2words(a->nid, a->dpid, r->seed);
}

static bool dp_rcv_is(const struct dp_rx_peer *rp, const struct dp_addr *a)
{
	return rp->from.nid == a->nid && rp->from.dpid == a->dpid;
}

/* The rx peer of sender @from in the table, or NULL.  Holds r->lock. */
static struct dp_rx_peer *dp_rcv_lookup(struct dp_rcv *r,
					const struct dp_addr *from)
{
	struct dp_rx_peer *rp;

	hash_for_each_possible_rcu(r->peers, rp, hnode, dp_rcv_hash(r, from),
				   lockdep_is_held(&r->lock))
		if (dp_rcv_is(rp, from))
			return rp;
	return NULL;
}

/*
 * The rx peer of sender @from, or NULL: the last one found, else the
 * table's (a stream's frames hash once).  Caller holds r->lock.
 */
static struct dp_rx_peer *dp_rcv_find(struct dp_rcv *r,
				      const struct dp_addr *from)
{
	struct dp_rx_peer *rp = r->last;

	lockdep_assert_held(&r->lock);
	if (rp && dp_rcv_is(rp, from))
		return rp;
	rp = dp_rcv_lookup(r, from);
	if (rp)
		r->last = rp;
	return rp;
}

static struct dp_addr dp_rcv_src(const struct dp_msg_hdr *h)
{
	return (struct dp_addr){ .nid = h->src_nid, .dpid = h->src_dpid };
}

/*
 * The largest message this endpoint accepts: its pool's limit (half the
 * ring, computed, nothing to keep) and its NIC's, which the node keeps
 * current as NICs come, go and change their MTU (dp_max_msg() reads it,
 * no NIC reference): a change under a live session counts from the next
 * frame on, and with no NIC the wire's limit stands, as ever.
 */
static u32 dp_rcv_max_msg(struct dp_rcv *r)
{
	return min(dp_ring_max_msg(r->ring), dp_max_msg(r->node));
}

/* Space of the largest message: the wrap reserve of section 6. */
static u32 dp_rcv_smax(struct dp_rcv *r)
{
	return DP_TOKEN_SPACE(dp_rcv_max_msg(r));
}

/* Producers all hold r->lock, so prod is stable; cons only grows. */
static u64 dp_rcv_used(struct dp_rcv *r)
{
	lockdep_assert_held(&r->lock);
	r->cons_seen = READ_ONCE(r->ring->cons);
	return r->ring->prod - r->cons_seen;
}

/* Have ack_work run: at once, or after a tick (a chance to piggy-back). */
static void dp_rcv_kick(struct dp_rcv *r, bool now)
{
	lockdep_assert_held(&r->lock);
	if (r->dead)
		return;
	if (now)
		mod_delayed_work(dp_wq, &r->ack_work, 0);
	else
		queue_delayed_work(dp_wq, &r->ack_work, 1);
}

/*
 * While starved: the pool has the room some short sender's update waits
 * for (dp_rcv_short()), or it is empty (nothing more will open it).
 * Caller holds r->lock.
 */
static bool dp_rcv_room_due(struct dp_rcv *r)
{
	u64 used = dp_rcv_used(r);

	return !used || dp_credit_room(r->ring->size, dp_rcv_smax(r), used,
				       r->outstanding) >= r->sws_room;
}

/*
 * A grant fell short: the next release re-grants (dp_rcv_released()).
 * The reader releases under the pool's lock, not ours, then looks at
 * @starved without a lock; a release that came after we read the pool
 * and before we set @starved would see it clear and kick nothing, and
 * the sender would wait for its window probe (a timeout, every time).
 * So, as the reader does, store then look (both with a full barrier
 * between): a consumer index moved since we read it kicks the re-grant
 * here, on the reader's terms (dp_rcv_room_due()).  Caller holds r->lock.
 */
static void dp_rcv_starve(struct dp_rcv *r)
{
	lockdep_assert_held(&r->lock);
	WRITE_ONCE(r->starved, true);
	smp_mb();	/* pairs with dp_rcv_released() */
	if (READ_ONCE(r->ring->cons) != r->cons_seen && dp_rcv_room_due(r))
		dp_rcv_kick(r, true);
}

/* @rp's writer waits for no message now.  Caller holds r->lock. */
static void dp_rcv_unwant(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	rp->want = 0;
	list_del_init(&rp->wants);
}

/* Idle senders hold no credit and take no share of the pool. */
static void dp_rcv_set_idle(struct dp_rcv *r, struct dp_rx_peer *rp,
			    bool idle)
{
	lockdep_assert_held(&r->lock);
	if (rp->idle == idle)
		return;
	rp->idle = idle;
	if (idle) {
		r->n_active--;
		list_del_init(&rp->active);
		dp_rcv_unwant(r, rp);
	} else {
		r->n_active++;
		list_add_tail(&rp->active, &r->active);
	}
}

/* A frame of @rp's session: it is live.  Caller holds r->lock. */
static void dp_rcv_heard(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	rp->heard = jiffies;
	if (!list_is_last(&rp->lru, &r->lru))	/* a stream: it is already */
		list_move_tail(&rp->lru, &r->lru);
}

/*
 * Silent past unreach_ms.  A live sender with anything in flight, or a
 * writer waiting for a window, is heard at least every rto_max_ms (its
 * retransmissions, its probes); an idle one gave its credit back.
 */
static bool dp_rcv_silent(const struct dp_rx_peer *rp, unsigned long now)
{
	return time_after(now, rp->heard +
			  msecs_to_jiffies(READ_ONCE(dp_unreach_ms)));
}

/*
 * Silly-window avoidance (the receiver's, as TCP's): a window update is
 * worth its own frame only when it opens the sender's window by at least
 * half a frame's worth of credit (half the space of the largest message),
 * so a reader that frees one small message at a time does not make one
 * ACK per read.
 */
static u32 dp_rcv_sws(u32 smax)
{
	return max_t(u32, (smax / 2) & ~(DP_TOKEN_ALIGN - 1), DP_TOKEN_ALIGN);
}

/* Credit granted to @rp and not advertised yet; caller holds r->lock. */
static s32 dp_rcv_unsaid(const struct dp_rx_peer *rp)
{
	return dp_seq_diff(rp->credit, rp->adv);
}

/*
 * @rp's window is short of half its target: remember how much more room
 * would make an update worth sending (dp_rcv_released() kicks the ack
 * work only then).  Counted as if nothing more were advertised meanwhile:
 * an ACK that does go only makes the true need larger, so a release may
 * kick the work early, never late.  Caller holds r->lock.
 */
static void dp_rcv_short(struct dp_rcv *r, struct dp_rx_peer *rp, u32 smax)
{
	s32 need = (s32)dp_rcv_sws(smax) - max(dp_rcv_unsaid(rp), 0);

	lockdep_assert_held(&r->lock);
	if (need < (s32)DP_TOKEN_ALIGN)
		need = DP_TOKEN_ALIGN;
	if ((u32)need < r->sws_room)
		r->sws_room = need;
	dp_rcv_starve(r);	/* a release grants more */
}

/*
 * Whether @rp should hear of its credit now, in a frame of its own: its
 * last advertised window is under half the target, and the update opens
 * it by a meaningful amount (dp_rcv_sws()), or the reader has released
 * everything (nothing more will open it: say what there is).  A writer
 * that waits for more, or for a larger message, probes meanwhile, and a
 * probe is always answered.  Caller holds r->lock.
 */
static bool dp_rcv_update_due(struct dp_rcv *r, const struct dp_rx_peer *rp,
			      u32 target, u32 smax)
{
	s32 unsaid = dp_rcv_unsaid(rp);

	lockdep_assert_held(&r->lock);
	if (unsaid <= 0 || dp_seq_diff(rp->adv, rp->arrived) >= (s32)(target / 2))
		return false;
	return unsaid >= (s32)dp_rcv_sws(smax) || !dp_rcv_used(r);
}

/* The rx peer whose large message's turn it is, if any.  Holds r->lock. */
static struct dp_rx_peer *dp_rcv_turn(struct dp_rcv *r)
{
	lockdep_assert_held(&r->lock);
	return list_first_entry_or_null(&r->wants, struct dp_rx_peer, wants);
}

/* The credit a large message that waits needs: its cost, within the pool. */
static u32 dp_rcv_want_cost(const struct dp_rcv *r, const struct dp_rx_peer *rp,
			    u32 smax)
{
	u32 size = r->ring->size;

	return min(rp->want, size > smax ? size - smax : 0);
}

/*
 * @rp's fair window.  While a large message waits for its turn (the first
 * of r->wants), the others share the pool less its cost: as they send,
 * their windows shrink to that, and the room it needs comes free once the
 * reader has taken the pool, however fast they send (else a stream of
 * small messages could keep it waiting for good).  No room is kept for it
 * outright: a reader that holds messages until a small one comes would
 * then wait for good, and a window of at least one message each stays.
 * Caller holds r->lock.
 */
static u32 dp_rcv_target(struct dp_rcv *r, const struct dp_rx_peer *rp,
			 u32 smax)
{
	struct dp_rx_peer *first = dp_rcv_turn(r);
	u32 size = r->ring->size;

	if (!first || first == rp || r->n_active < 2)
		return dp_credit_target(size, smax, r->n_active);
	return dp_credit_target(size - dp_rcv_want_cost(r, first, smax), smax,
				r->n_active - 1);
}

/*
 * The large message whose turn it is waits for room: a release that makes
 * what it lacks re-grants (dp_rcv_released()).  Caller holds r->lock.
 */
static void dp_rcv_turn_short(struct dp_rcv *r, u32 smax)
{
	struct dp_rx_peer *first = dp_rcv_turn(r);
	u32 lack;

	if (!first)
		return;
	lack = dp_credit_grant(first->credit, first->arrived,
			       dp_rcv_want_cost(r, first, smax), U32_MAX);
	if (lack < r->sws_room)
		r->sws_room = max_t(u32, lack, DP_TOKEN_ALIGN);
	dp_rcv_starve(r);
}

/*
 * @rp's writer waits for a large message, whose cost is more than its fair
 * window: granted whole or not at all, one at a time, in the order such
 * writers asked.  Part of it is of no use to the writer, and held while it
 * waits it may be just what another waiting writer lacks: two such, each
 * holding part of the room and neither enough, waited for good (its
 * probe gave back what it held, dp_rcv_probe()).  Returns whether the
 * sender should hear of its credit now.  Caller holds r->lock.
 */
static bool dp_rcv_grant_whole(struct dp_rcv *r, struct dp_rx_peer *rp,
			       u32 room, u32 smax)
{
	u32 lack = dp_credit_grant(rp->credit, rp->arrived,
				   dp_rcv_want_cost(r, rp, smax), U32_MAX);

	lockdep_assert_held(&r->lock);
	if (list_empty(&rp->wants))
		list_add_tail(&rp->wants, &r->wants);
	if (lack) {
		if (room < lack || dp_rcv_turn(r) != rp) {
			dp_rcv_turn_short(r, smax);
			return false;
		}
		rp->credit += lack;
		r->outstanding += lack;
	}
	/*
	 * Asked once: granted, the cost no longer raises the target (a writer
	 * that gave its large message up sends small ones and never probes
	 * again; topped up to the cost for good, it would keep the room).
	 */
	dp_rcv_unwant(r, rp);
	dp_rcv_turn_short(r, smax);	/* the next one's turn */
	return dp_rcv_unsaid(rp) > 0;
}

/*
 * Raise @rp's credit towards its fair window, within the unpromised room
 * (a large message's cost: dp_rcv_grant_whole()).  Returns whether the
 * sender should hear about it now (dp_rcv_update_due()).
 */
static bool dp_rcv_grant(struct dp_rcv *r, struct dp_rx_peer *rp,
			 u32 smax)
{
	u32 size = r->ring->size, room, target, add;

	lockdep_assert_held(&r->lock);
	if (rp->idle)
		return false;
	room = dp_credit_room(size, smax, dp_rcv_used(r), r->outstanding);
	target = dp_credit_target(size, smax, r->n_active);
	if (rp->want > target)		/* a large message waits: its cost */
		return dp_rcv_grant_whole(r, rp, room, smax);
	/*
	 * Any message it waits for fits its fair share: every such fits at
	 * once when the reader has taken all, so it needs no turn.
	 */
	if (!list_empty(&rp->wants))
		list_del_init(&rp->wants);
	target = dp_rcv_target(r, rp, smax);
	add = dp_credit_grant(rp->credit, rp->arrived, target, room);
	rp->credit += add;
	r->outstanding += add;
	if (rp->want && dp_seq_diff(rp->credit, rp->arrived) >= (s32)target)
		dp_rcv_unwant(r, rp);
	if (dp_seq_diff(rp->credit, rp->arrived) < (s32)(target / 2))
		dp_rcv_short(r, rp, smax);
	return dp_rcv_update_due(r, rp, target, smax);
}

/* @rp is owed an ACK (DP_ACK_* @bits), counted in n_due.  Holds r->lock. */
static void dp_rcv_mark(struct dp_rcv *r, struct dp_rx_peer *rp, u8 bits)
{
	lockdep_assert_held(&r->lock);
	if (!rp->ack_due)
		r->n_due++;
	rp->ack_due |= bits;
}

/* ... and ack_work will send it: now, or after a tick (DP_ACK_DELAYED). */
static void dp_rcv_owe(struct dp_rcv *r, struct dp_rx_peer *rp, u8 bits)
{
	dp_rcv_mark(r, rp, bits);
	dp_rcv_kick(r, bits & (DP_ACK_NOW | DP_ACK_GAP));
}

/*
 * The ACK owed to @rp leaves, in a frame of its own or riding on DATA,
 * with the current credit: nothing is owed any more.  Holds r->lock.
 */
static void dp_rcv_paid(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	if (rp->ack_due)
		r->n_due--;
	rp->ack_due = 0;
	rp->adv = rp->credit;
}

/*
 * A copy of a message already delivered came from @rp: answered at once,
 * naming the first such since the last ACK (DP_WF_DUP), so that a sender
 * whose timeout resent it learns the timeout was spurious.  Holds r->lock.
 */
static void dp_rcv_dup(struct dp_rcv *r, struct dp_rx_peer *rp, u32 seq)
{
	lockdep_assert_held(&r->lock);
	if (!(rp->ack_due & DP_ACK_DUP))
		rp->dup = (u16)seq;
	dp_rcv_owe(r, rp, DP_ACK_NOW | DP_ACK_DUP);
}

/*
 * The ack fields of frame @h to @rp, which pays what it owes (a frame of
 * its own, or DATA it rides on).  Holds r->lock.
 */
static void dp_rcv_ack_fields(struct dp_rcv *r, struct dp_rx_peer *rp,
			      struct dp_msg_hdr *h)
{
	h->flags |= DP_WF_ACK | (rp->ack_due & DP_ACK_GAP ? DP_WF_GAP : 0);
	if (rp->ack_due & DP_ACK_DUP) {
		h->flags |= DP_WF_DUP;
		h->dup = rp->dup;
	}
	h->ack = rp->rcv_nxt - 1;
	h->credit = rp->credit;
	dp_rcv_paid(r, rp);
}

/*
 * A RESET for a frame that fits no session here, with @flags (DP_WF_BUSY:
 * a HELLO refused for lack of room).  Caller holds r->lock.
 */
static void dp_rcv_owe_reset(struct dp_rcv *r, const struct dp_msg_hdr *h,
			     u16 flags)
{
	struct dp_reset *rs;

	lockdep_assert_held(&r->lock);
	if (!h->src_inc || r->n_resets >= DP_RESETS_PENDING)
		return;		/* the sender retransmits: it will hear later */
	rs = &r->resets[r->n_resets++];
	rs->to = dp_rcv_src(h);
	rs->dst_inc = h->src_inc;
	rs->seq = h->seq;
	rs->flags = flags;
	dp_rcv_kick(r, true);
}

/* What a held message costs the endpoint: its bytes and its header. */
static u32 dp_ooo_cost(u32 len)
{
	return sizeof(struct dp_ooo) + len;
}

static void dp_rcv_ooo_del(struct dp_rcv *r, struct dp_rx_peer *rp,
			   struct dp_ooo *o)
{
	lockdep_assert_held(&r->lock);
	r->ooo_bytes -= dp_ooo_cost(o->h.len);
	rp->n_ooo--;
	list_del(&o->node);
	kfree(o);
}

/*
 * Drop the messages held after a gap (the session ended before it was
 * filled).  Each frame a node receives lands in one counter: a held
 * message is counted when it is delivered or, here, as ahead of a gap.
 * Caller holds r->lock.
 */
static void dp_rcv_ooo_free(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	struct dp_ooo *o, *tmp;

	lockdep_assert_held(&r->lock);
	if (rp->n_ooo)
		dp_count_add(r->node, DP_CTR_RX_DROP_SEQ, rp->n_ooo);
	list_for_each_entry_safe(o, tmp, &rp->ooo, node)
		dp_rcv_ooo_del(r, rp, o);
}

/*
 * The session ended with a large message open: readers skip its token and
 * never see a part of it; counted once, as a held message whose session
 * ended is.  Caller holds r->lock.
 */
static void dp_rcv_frag_abort(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	if (!rp->frag.open)
		return;
	list_del_init(&rp->open);
	if (dp_pool_frag_abort(r->pool, &rp->frag))
		dp_count(r->node, DP_CTR_RX_DROP_SEQ);
}

/*
 * Return a peer's unused credit to the pool: it holds none now, nor was it
 * told of more.  Caller holds r->lock.
 */
static void dp_rcv_forget_credit(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	s32 left = dp_seq_diff(rp->credit, rp->arrived);

	if (left > 0)
		r->outstanding -= left;
	rp->credit = rp->arrived;
	rp->adv = rp->credit;
}

/*
 * The per-source counts: how many places of the table a user (any node)
 * and a node (any user) hold, by a hash the sender cannot aim.  NULL if
 * the source holds none.  Caller holds r->lock.
 */
static struct dp_rx_src *dp_rcv_src_find(struct dp_rcv *r, u8 kind, u32 id)
{
	struct dp_rx_src *s;

	lockdep_assert_held(&r->lock);
	hash_for_each_possible(r->srcs, s, hnode, jhash_2words(id, kind, r->seed))
		if (s->id == id && s->kind == kind)
			return s;
	return NULL;
}

static u16 dp_rcv_src_n(struct dp_rcv *r, u8 kind, u32 id)
{
	struct dp_rx_src *s = dp_rcv_src_find(r, kind, id);

	return s ? s->n : 0;
}

/*
 * Whether a new sender of user @uid on node @nid may take a place: within
 * its user's share (rx_peers_per_uid) and its node's (rx_peers_per_node),
 * so that no one user or node can lock the others out.  The endpoint's
 * owner is held only to the whole table: it attacks no one but itself.
 * Caller holds r->lock.
 */
static bool dp_rcv_share_left(struct dp_rcv *r, u32 nid, u32 uid)
{
	lockdep_assert_held(&r->lock);
	if (uid == r->owner_uid)
		return true;
	return dp_rcv_src_n(r, DP_SRC_UID, uid) < READ_ONCE(dp_rx_peers_per_uid) &&
	       dp_rcv_src_n(r, DP_SRC_NID, nid) < READ_ONCE(dp_rx_peers_per_node);
}

/* One more place held by source {@kind, @id}; NULL if out of memory. */
static struct dp_rx_src *dp_rcv_src_get(struct dp_rcv *r, u8 kind, u32 id)
{
	struct dp_rx_src *s = dp_rcv_src_find(r, kind, id);

	if (!s) {
		s = kzalloc(sizeof(*s), GFP_ATOMIC);
		if (!s)
			return NULL;
		s->id = id;
		s->kind = kind;
		hash_add(r->srcs, &s->hnode, jhash_2words(id, kind, r->seed));
	}
	s->n++;
	return s;
}

static void dp_rcv_src_put(struct dp_rcv *r, struct dp_rx_src *s)
{
	lockdep_assert_held(&r->lock);
	if (!s || --s->n)
		return;
	hash_del(&s->hnode);
	kfree(s);
}

/*
 * Count @rp, of user @uid, in its sources' shares (not if it is the
 * owner's).  -ENOMEM leaves it uncounted.  Caller holds r->lock.
 */
static int dp_rcv_count_src(struct dp_rcv *r, struct dp_rx_peer *rp, u32 uid)
{
	lockdep_assert_held(&r->lock);
	rp->uid = uid;
	if (uid == r->owner_uid)
		return 0;
	rp->by_uid = dp_rcv_src_get(r, DP_SRC_UID, uid);
	rp->by_nid = rp->by_uid ? dp_rcv_src_get(r, DP_SRC_NID, rp->from.nid) : NULL;
	if (rp->by_nid)
		return 0;
	dp_rcv_src_put(r, rp->by_uid);
	rp->by_uid = NULL;
	return -ENOMEM;
}

static void dp_rcv_uncount_src(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	dp_rcv_src_put(r, rp->by_uid);
	dp_rcv_src_put(r, rp->by_nid);
	rp->by_uid = NULL;
	rp->by_nid = NULL;
}

/*
 * Break @rp's pairing with an edge, if any: the edge looks again at its
 * next frame.  Before @rp is freed, and when its sender restarts.  Caller
 * holds r->lock, which guards both ends of the pairing.
 */
static void dp_rcv_unlink(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	if (!rp->pair)
		return;
	rp->pair->rp = NULL;
	rp->pair->looked = false;
	rp->pair = NULL;
}

static void dp_rcv_drop_peer(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	dp_rcv_unlink(r, rp);
	if (rp->ack_due)
		r->n_due--;	/* it leaves owed nothing */
	dp_rcv_uncount_src(r, rp);
	dp_rcv_forget_credit(r, rp);
	dp_rcv_ooo_free(r, rp);
	dp_rcv_frag_abort(r, rp);
	dp_rcv_set_idle(r, rp, true);
	list_del(&rp->lru);
	hash_del_rcu(&rp->hnode);
	if (r->last == rp)
		r->last = NULL;
	r->n_peers--;
	kfree_rcu(rp, rcu);
}

/*
 * The table, or the share of user @fu or node @fn, is full: forget one
 * sender silent past unreach_ms (it died, or it idles with its credit
 * given back), of that user or node if either is given, so that senders
 * which will never speak again cannot lock newcomers out.  If it does
 * speak again it gets a RESET, as from a receiver that restarted.  Caller
 * holds r->lock.
 */
static bool dp_rcv_evict(struct dp_rcv *r, const struct dp_rx_src *fu,
			 const struct dp_rx_src *fn)
{
	unsigned long now = jiffies;
	struct dp_rx_peer *rp;
	unsigned int n = 0;

	lockdep_assert_held(&r->lock);
	list_for_each_entry(rp, &r->lru, lru) {
		/* The longest silent first: past one heard since, none is. */
		if (!dp_rcv_silent(rp, now) || n++ == DP_EVICT_SCAN)
			return false;
		if ((!fu && !fn) || (fu && rp->by_uid == fu) ||
		    (fn && rp->by_nid == fn)) {
			dp_rcv_drop_peer(r, rp);
			return true;
		}
	}
	return false;
}

/*
 * @h's user or node holds its whole share: evict a silent sender of the
 * one that is full (of either, if both are).  Caller holds r->lock.
 */
static bool dp_rcv_evict_share(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	struct dp_rx_src *u = dp_rcv_src_find(r, DP_SRC_UID, h->src_uid);
	struct dp_rx_src *n = dp_rcv_src_find(r, DP_SRC_NID, h->src_nid);

	if (u && u->n < READ_ONCE(dp_rx_peers_per_uid))
		u = NULL;
	if (n && n->n < READ_ONCE(dp_rx_peers_per_node))
		n = NULL;
	return (u || n) && dp_rcv_evict(r, u, n);
}

/*
 * Senders silent past unreach_ms keep no credit: one that died, or whose
 * RETURN or FIN was lost, would otherwise hold its share of the pool for
 * good.  If it speaks again, DATA beyond its credit makes a new grant
 * (dp_rcv_next()).  One silent in the middle of a large message is the
 * watch's (dp_rcv_open_work()), which gives it up within a quarter of
 * unreach_ms, and not when this host itself stalled: deciding here too,
 * without that guard, gave up messages of senders this host had merely
 * not run to hear.  Caller holds r->lock.
 */
static void dp_rcv_reclaim(struct dp_rcv *r)
{
	unsigned long now = jiffies;
	struct dp_rx_peer *rp;
	int bkt;

	lockdep_assert_held(&r->lock);
	hash_for_each(r->peers, bkt, rp, hnode) {
		if (!dp_rcv_silent(rp, now) || rp->frag.open || rp->idle)
			continue;
		dp_rcv_forget_credit(r, rp);
		dp_rcv_ooo_free(r, rp);
		rp->gap = false;
		dp_rcv_set_idle(r, rp, true);
	}
}

/*
 * Whether a new sender of @h's user and node has a place: within their
 * shares and the table, evicting silent senders if need be (each frees a
 * place of a full share, so two at most).  Caller holds r->lock.
 */
static bool dp_rcv_room(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	unsigned int evicted = 0;

	lockdep_assert_held(&r->lock);
	while (!dp_rcv_share_left(r, h->src_nid, h->src_uid))
		if (evicted++ == 2 || !dp_rcv_evict_share(r, h))
			return false;
	return r->n_peers < DP_MAX_RX_PEERS || dp_rcv_evict(r, NULL, NULL);
}

/*
 * The place in the table for a new session of @h's sender: its place from
 * an earlier session, if the sending endpoint's user is the same, or a new
 * one.  NULL if there is none (*@drop says why); a HELLO refused for room
 * is answered (DP_WF_BUSY), so its sender fails at once.  Caller holds
 * r->lock.
 */
static struct dp_rx_peer *dp_rcv_place(struct dp_rcv *r,
				       const struct dp_msg_hdr *h, int *drop)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp = dp_rcv_find(r, &from);

	lockdep_assert_held(&r->lock);
	if (rp && rp->uid == h->src_uid)
		return rp;
	if (rp)		/* the DPID changed hands: a new sender */
		dp_rcv_drop_peer(r, rp);
	*drop = DP_CTR_RX_DROP_NOMEM;
	if (r->dead)
		return NULL;
	if (!dp_rcv_room(r, h)) {
		dp_rcv_owe_reset(r, h, DP_WF_BUSY);
		return NULL;
	}
	rp = kzalloc(sizeof(*rp), GFP_ATOMIC);
	if (!rp)
		return NULL;
	rp->from = from;
	if (dp_rcv_count_src(r, rp, h->src_uid)) {
		kfree(rp);
		return NULL;
	}
	*drop = 0;
	rp->idle = true;	/* not sharing the pool until its HELLO's grant */
	INIT_LIST_HEAD(&rp->active);
	INIT_LIST_HEAD(&rp->ooo);
	INIT_LIST_HEAD(&rp->open);
	INIT_LIST_HEAD(&rp->wants);
	list_add_tail(&rp->lru, &r->lru);
	hash_add_rcu(r->peers, &rp->hnode, dp_rcv_hash(r, &from));
	r->n_peers++;
	r->placed++;		/* pairs that found none look again */
	return rp;
}

/* HELLO: open (or reopen) the sender's session and answer it. */
void dp_rcv_hello(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp;
	unsigned long flags;
	int drop = 0;

	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_find(r, &from);
	if (rp && rp->peer_inc == h->src_inc && rp->isn == h->seq) {
		dp_rcv_owe(r, rp, DP_ACK_NOW);		/* our answer was lost */
		goto out;
	}
	if (rp && rp->peer_inc != h->src_inc) {	/* the sender restarted */
		dp_event_peer(r->ep, &from);
		dp_rcv_unlink(r, rp);
	}
	rp = dp_rcv_place(r, h, &drop);
	if (!rp)
		goto out;
	dp_rcv_forget_credit(r, rp);
	dp_rcv_ooo_free(r, rp);
	dp_rcv_frag_abort(r, rp);
	rp->frag_extra = 0;
	dp_rcv_unwant(r, rp);
	rp->peer_inc = h->src_inc;
	rp->isn = h->seq;
	rp->rcv_nxt = h->seq;
	rp->arrived = 0;
	rp->credit = 0;
	rp->adv = 0;
	rp->gap = false;
	rp->sack = h->flags & DP_WF_SACK;
	dp_rcv_heard(r, rp);
	dp_rcv_set_idle(r, rp, false);
	dp_rcv_grant(r, rp, dp_rcv_smax(r));
	dp_rcv_owe(r, rp, DP_ACK_NOW);
out:
	spin_unlock_irqrestore(&r->lock, flags);
	if (drop)
		dp_count(r->node, drop);
}

/*
 * Whether a sender's PROBE or RETURN @h is of @rp's session: the same two
 * incarnations, and its ack names the session's ISN (a late one of an
 * earlier session between the same two endpoints is not).
 */
static bool dp_rcv_names(struct dp_rcv *r, const struct dp_rx_peer *rp,
			 const struct dp_msg_hdr *h)
{
	return rp && rp->peer_inc == h->src_inc && h->dst_inc == r->inc &&
	       rp->isn == h->ack;
}

/* A sender's window probe of its session: answer with the current credit. */
void dp_rcv_probe(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_find(r, &from);
	if (dp_rcv_names(r, rp, h)) {
		dp_rcv_heard(r, rp);
		/* untrusted: only ever within the pool (dp_rcv_grant()) */
		rp->want = h->credit & ~(DP_TOKEN_ALIGN - 1);
		/*
		 * All it sent has arrived (seq is its next): it holds no more
		 * credit than it has not used, and it gave that back to ask
		 * (dp_snd.c): a window it could not send in is of no use to it
		 * and may be what another sender waits for.
		 */
		if (h->seq == rp->rcv_nxt)
			dp_rcv_forget_credit(r, rp);
		dp_rcv_set_idle(r, rp, false);
		dp_rcv_grant(r, rp, dp_rcv_smax(r));
		dp_rcv_owe(r, rp, DP_ACK_NOW);
	} else if (!rp || rp->peer_inc != h->src_inc || h->dst_inc != r->inc) {
		dp_rcv_owe_reset(r, h, 0);
	}	/* else a late probe of a session the sender left: ignored */
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * An idle sender gives back its credit beyond h->credit (the space it has
 * sent): others may have it.  It asks again (a probe) before it sends.
 */
void dp_rcv_return(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_find(r, &from);
	if (dp_rcv_names(r, rp, h) &&
	    dp_seq_diff(h->credit, rp->arrived) >= 0 &&
	    dp_seq_diff(h->credit, rp->credit) <= 0) {
		r->outstanding -= rp->credit - h->credit;
		rp->credit = h->credit;
		rp->adv = h->credit;
		dp_rcv_heard(r, rp);
		dp_rcv_set_idle(r, rp, true);
		if (r->starved)
			dp_rcv_kick(r, true);	/* someone was waiting for it */
	}
	spin_unlock_irqrestore(&r->lock, flags);
}

/* A HELLO the admission rule refuses: a RESET tells the sender. */
void dp_rcv_refuse(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	dp_rcv_owe_reset(r, h, 0);
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * The sender closed its session: forget it, take its credit back.  The FIN
 * names the session by its ISN: a late FIN of an older session between the
 * same two endpoints must not end the one opened since.
 */
void dp_rcv_fin(struct dp_rcv *r, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp;
	unsigned long flags;

	if (h->dst_inc != r->inc)
		return;
	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_find(r, &from);
	if (rp && rp->peer_inc == h->src_inc && rp->isn == h->seq)
		dp_rcv_drop_peer(r, rp);
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * Place a message in the pool with token seq @tok_seq; counts it.  Returns
 * 0 or the drop counter (the caller counts drops).  Caller holds r->lock,
 * so the receiver's credit arithmetic sees every delivery.
 */
static int dp_rcv_deliver(struct dp_rcv *r, const struct dp_msg_hdr *h,
			  u32 tok_seq, const struct dp_payload *payload)
{
	int drop;

	lockdep_assert_held(&r->lock);
	drop = dp_pool_deliver(r->pool, h, dp_ep_token_uid(r->ep, h->src_uid),
			       tok_seq, payload);
	if (drop)
		return drop;
	dp_count(r->node, DP_CTR_RX_MSGS);
	dp_count_add(r->node, DP_CTR_RX_BYTES, h->len);
	trace_dp_rx(r->node, h, tok_seq);
	return 0;
}

/*
 * The largest message this endpoint takes in fragments: its pool's, less
 * the wrap reserve of one frame of its NIC (dp_frag_max_msg()).
 */
static u32 dp_rcv_frag_max(struct dp_rcv *r)
{
	return dp_frag_max_msg(r->ring->size, dp_max_msg(r->node));
}

/*
 * The credit in-order DATA costs: a whole message its token's space, a
 * fragmented one its whole cost at its first fragment (whose message is
 * longer than the fragment, so dp_frag_credit() charges it as cut), the
 * later fragments nothing (docs/reliability.md, "Large messages").
 */
static u32 dp_rcv_cost(const struct dp_frag_in *in)
{
	switch (in->kind) {
	case DP_FRAG_WHOLE:
		return DP_TOKEN_SPACE(in->len);
	case DP_FRAG_FIRST:
		return dp_frag_credit(in->total, in->len);
	default:
		return 0;
	}
}

/* Whether @cost more is within the credit granted to @rp's sender. */
static bool dp_rcv_within(const struct dp_rx_peer *rp, u32 cost)
{
	return dp_credit_allows(rp->arrived + cost, rp->credit);
}

/* How often the open messages are looked at: a quarter of unreach_ms. */
static unsigned long dp_rcv_open_period(void)
{
	return msecs_to_jiffies(READ_ONCE(dp_unreach_ms) / 4) + 1;
}

/* Have open_work look in @delay jiffies, unless it is due already. */
static void dp_rcv_watch(struct dp_rcv *r, unsigned long delay)
{
	lockdep_assert_held(&r->lock);
	if (!r->dead && queue_delayed_work(dp_wq, &r->open_work, delay))
		r->open_due = jiffies + delay;
}

/* @rp's large message was opened: it is watched.  Holds r->lock. */
static void dp_rcv_opened(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	lockdep_assert_held(&r->lock);
	list_add_tail(&rp->open, &r->open);
	dp_rcv_watch(r, dp_rcv_open_period());
}

/*
 * Place in-order fragment @in of @h in the pool (the sender fields go in
 * at the first one); the message is counted when its last one comes.
 * Returns a drop counter.  Caller holds r->lock.
 */
static int dp_rcv_frag(struct dp_rcv *r, struct dp_rx_peer *rp,
		       const struct dp_msg_hdr *h, const struct dp_frag_in *in,
		       u32 tok_seq)
{
	int drop;

	lockdep_assert_held(&r->lock);
	drop = dp_pool_frag(r->pool, &rp->frag, h, in,
			    dp_ep_token_uid(r->ep, h->src_uid), tok_seq);
	if (drop)
		return drop;
	if (in->kind == DP_FRAG_FIRST)
		dp_rcv_opened(r, rp);
	else
		rp->frag_extra++;
	if (in->kind == DP_FRAG_LAST) {
		list_del_init(&rp->open);
		dp_count(r->node, DP_CTR_RX_MSGS);
		dp_count_add(r->node, DP_CTR_RX_BYTES, in->total);
		trace_dp_rx(r->node, h, tok_seq);
	}
	return 0;
}

/*
 * In-order DATA into the pool, a whole message or a fragment, or refused
 * (counted full on the endpoint once) when it is beyond its sender's
 * credit.  @ask: the frame just came (not a held one): a sender beyond
 * its credit is granted first (dp_rcv_next()).  Returns a drop counter.
 */
static int dp_rcv_one(struct dp_rcv *r, struct dp_rx_peer *rp,
		      const struct dp_msg_hdr *h, const struct dp_payload *payload,
		      bool ask)
{
	u32 tok_seq = h->seq - rp->isn + 1 - rp->frag_extra;
	struct dp_frag_in in;
	u32 cost, max;
	int drop;

	lockdep_assert_held(&r->lock);
	/* the limit's arithmetic only for the first fragment it checks */
	max = dp_frag_first(h) ? dp_rcv_frag_max(r) : 0;
	drop = dp_frag_parse(&rp->frag, h, payload, max, &in);
	if (drop)
		return drop;
	cost = dp_rcv_cost(&in);
	if (!dp_rcv_within(rp, cost) && ask) {
		/*
		 * Beyond its credit: the sender gave credit back (RETURN), and
		 * an ACK we sent before the RETURN arrived reached it after and
		 * gave it that credit again.  Its window probe may have been
		 * answered in between (so it is no longer idle here), and the
		 * sender then believes in more credit than we hold for it.  It
		 * is sending: grant, within its fair share of the unpromised
		 * room.  Without the room it is dropped and comes again
		 * (retransmitted) once a reader frees some.  It does not probe
		 * for this message (it believes it is within its credit), so
		 * its cost is what it waits for: a cost above its fair window
		 * (a large message while others send) is granted whole, in
		 * turn, as a probe's would be; else no grant would ever cover
		 * it and it would be refused for good.
		 */
		dp_rcv_set_idle(r, rp, false);
		if (cost > rp->want)
			rp->want = cost;
		dp_rcv_grant(r, rp, dp_rcv_smax(r));
	}
	if (!dp_rcv_within(rp, cost))
		return dp_pool_refuse(r->pool);
	if (in.kind == DP_FRAG_WHOLE)
		drop = dp_rcv_deliver(r, h, tok_seq, payload);
	else
		drop = dp_rcv_frag(r, rp, h, &in, tok_seq);
	if (drop)
		return drop;	/* only if the MTU grew: it comes again */
	rp->rcv_nxt++;
	rp->arrived += cost;
	r->outstanding -= cost;
	if (cost >= rp->want)
		dp_rcv_unwant(r, rp);	/* what it waited for came */
	return 0;
}

/*
 * Deliver the held messages the gap's filling made next in line.  One that
 * cannot be placed (beyond its credit) is dropped, not kept at the head:
 * its sender still has it and resends it, and it then arrives in order.
 */
static void dp_rcv_drain(struct dp_rcv *r, struct dp_rx_peer *rp)
{
	struct dp_ooo *o, *tmp;
	int drop;

	list_for_each_entry_safe(o, tmp, &rp->ooo, node) {
		const struct dp_payload held = dp_payload_flat(o->data);

		if (o->h.seq != rp->rcv_nxt)
			break;
		drop = dp_rcv_one(r, rp, &o->h, &held, false);
		dp_rcv_ooo_del(r, rp, o);
		if (drop) {
			dp_count(r->node, drop);
			break;
		}
	}
}

static int dp_rcv_next(struct dp_rcv *r, struct dp_rx_peer *rp,
		       const struct dp_msg_hdr *h, const struct dp_payload *payload)
{
	int drop;
	u8 owe;

	drop = dp_rcv_one(r, rp, h, payload, true);
	if (drop) {
		dp_rcv_owe(r, rp, DP_ACK_NOW);	/* it hears where it stands */
		return drop;
	}
	/*
	 * At once, not after a tick: what the sender asks for (its window
	 * is half spent, DP_WF_ACKNOW), and the filling of a hole: what was
	 * held past it is acknowledged only now, and the sender's credit
	 * and copies wait for that (TCP's receiver acknowledges a segment
	 * that fills a hole at once too).
	 */
	owe = (h->flags & DP_WF_ACKNOW) || rp->n_ooo ? DP_ACK_NOW :
						       DP_ACK_DELAYED;
	dp_rcv_drain(r, rp);
	dp_rcv_set_idle(r, rp, false);
	if (dp_rcv_grant(r, rp, dp_rcv_smax(r)))
		owe = DP_ACK_NOW;
	/* Still holding messages: the next hole is there, report it. */
	rp->gap = rp->n_ooo;
	if (rp->gap) {
		rp->gap_at = jiffies;
		owe = DP_ACK_NOW | DP_ACK_GAP;
	}
	dp_rcv_owe(r, rp, owe);
	return 0;
}

/*
 * DATA after a gap: hold a copy, in seq order, if there is room (it is
 * within the sender's credit, so it will fit the pool once the gap is
 * filled).  Returns the drop counter, 0 if held.
 */
static int dp_rcv_hold(struct dp_rcv *r, struct dp_rx_peer *rp,
		       const struct dp_msg_hdr *h, const struct dp_payload *payload)
{
	struct dp_ooo *o, *at;

	if (rp->n_ooo >= DP_OOO_MAX ||
	    (u32)dp_seq_diff(h->seq, rp->rcv_nxt) > DP_OOO_SPAN ||
	    r->ooo_bytes + dp_ooo_cost(h->len) > r->ring->size)
		return DP_CTR_RX_DROP_SEQ;
	list_for_each_entry(at, &rp->ooo, node) {
		if (at->h.seq == h->seq)
			return DP_CTR_RX_DROP_DUP;
		if (dp_seq_before(h->seq, at->h.seq))
			break;
	}
	o = kmalloc(struct_size(o, data, h->len), GFP_ATOMIC);
	if (!o)
		return DP_CTR_RX_DROP_NOMEM;
	o->h = *h;
	dp_payload_copy(payload, 0, o->data, h->len);
	list_add_tail(&o->node, &at->node);	/* before @at, or at the end */
	rp->n_ooo++;
	r->ooo_bytes += dp_ooo_cost(h->len);
	return 0;
}

/*
 * DATA after a gap asks for the missing message: once, then again each
 * DP_GAP_AGAIN_MS while the gap stays open and DATA keeps coming after it
 * (its resend, or the report, was lost; the sender resends at most once a
 * round trip), so one lost resend costs a round trip, not a timeout.
 */
static bool dp_rcv_gap_due(const struct dp_rx_peer *rp)
{
	return !rp->gap ||
	       time_after_eq(jiffies, rp->gap_at + msecs_to_jiffies(DP_GAP_AGAIN_MS));
}

/* Reliable DATA: exactly once, in order (docs/reliability.md, 5.2). */
void dp_rcv_data(struct dp_rcv *r, const struct dp_msg_hdr *h,
		 const struct dp_payload *payload)
{
	const struct dp_addr from = dp_rcv_src(h);
	struct dp_rx_peer *rp;
	unsigned long flags;
	int drop = 0;

	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_find(r, &from);
	if (h->dst_inc != r->inc) {
		drop = DP_CTR_RX_DROP_STALE;
		dp_rcv_owe_reset(r, h, 0);
	} else if (!rp || rp->peer_inc != h->src_inc) {
		drop = DP_CTR_RX_DROP_SEQ;
		dp_rcv_owe_reset(r, h, 0);
	} else {
		dp_rcv_heard(r, rp);
		switch (dp_rx_classify(rp->rcv_nxt, h->seq)) {
		case DP_RX_DUP:
			drop = DP_CTR_RX_DROP_DUP;
			atomic64_inc(&r->rx_dup);
			dp_rcv_dup(r, rp, h->seq);
			break;
		case DP_RX_GAP:
			drop = dp_rcv_hold(r, rp, h, payload);
			if (drop == DP_CTR_RX_DROP_DUP)
				atomic64_inc(&r->rx_dup);
			if (dp_rcv_gap_due(rp)) {
				rp->gap = true;
				rp->gap_at = jiffies;
				dp_rcv_owe(r, rp, DP_ACK_NOW | DP_ACK_GAP);
			} else if (!drop && rp->sack) {
				/* the sender hears what we hold, in a tick */
				dp_rcv_owe(r, rp, h->flags & DP_WF_ACKNOW ?
					   DP_ACK_NOW : DP_ACK_DELAYED);
			}
			break;
		case DP_RX_NEXT:
			drop = dp_rcv_next(r, rp, h, payload);
			break;
		}
	}
	spin_unlock_irqrestore(&r->lock, flags);
	if (drop)
		dp_count(r->node, drop);
}

/*
 * Raw DATA: delivered as v1 did, but never into space promised to a
 * reliable sender.
 */
void dp_rcv_raw(struct dp_rcv *r, const struct dp_msg_hdr *h,
		const struct dp_payload *payload)
{
	unsigned long flags;
	u32 room;
	int drop;

	spin_lock_irqsave(&r->lock, flags);
	room = dp_credit_room(r->ring->size, dp_rcv_smax(r),
			      dp_rcv_used(r), r->outstanding);
	if (r->outstanding && DP_TOKEN_SPACE(h->len) > room)
		drop = dp_pool_refuse(r->pool);
	else
		drop = dp_rcv_deliver(r, h, h->seq, payload);
	spin_unlock_irqrestore(&r->lock, flags);
	if (drop)
		dp_count(r->node, drop);
}

/*
 * The rx peer paired with @p, the edge to @to: paired once, by one lookup,
 * and kept until either end goes (dp_rcv_unlink(), dp_rcv_unpair()).  An
 * edge whose peer does not send to us looks again only once another rx
 * peer was placed.  Caller holds r->lock.
 */
static struct dp_rx_peer *dp_rcv_paired(struct dp_rcv *r,
					struct dp_rcv_pair *p,
					const struct dp_addr *to)
{
	struct dp_rx_peer *rp;

	lockdep_assert_held(&r->lock);
	if (p->rp || (p->looked && p->placed == r->placed))
		return p->rp;
	p->looked = true;
	p->placed = r->placed;
	rp = dp_rcv_lookup(r, to);	/* once per pairing */
	if (!rp)
		return NULL;
	if (rp->pair)	/* another edge to the sender, on its way out */
		dp_rcv_unlink(r, rp);
	rp->pair = p;
	p->rp = rp;
	return rp;
}

static struct dp_addr dp_rcv_dst(const struct dp_msg_hdr *h)
{
	return (struct dp_addr){ .nid = h->dst_nid, .dpid = h->dst_dpid };
}

/*
 * Fill the ack fields of a DATA frame to the sender @h->dst, on the edge
 * paired by @p, if it has anything to hear in the same pair of
 * incarnations (@peer_inc): an ACK owed, or credit not advertised yet.
 * Else the fields would say again what it heard last, and its session
 * would take in an ACK per frame for nothing (a one-way stream's reader
 * that once sent to the writer).  An ack that rides on DATA lost on the
 * wire is the same as a lost ACK: the sender's timeout resends, and the
 * duplicate is answered at once.  The ACK is cancelled: the delayed ACK
 * owed to that sender does not go out as well.  If it was the last one
 * owed, ack_work, already queued, finds nothing to do when it runs and
 * returns at once (dp_rcv_collect()).  Its timer is not cancelled here:
 * that would be a timer operation per message again, and the next DATA
 * would re-arm it; queued once per tick, it runs once per tick at most
 * however many acks ride on DATA meanwhile.
 */
void dp_rcv_piggyback(struct dp_rcv *r, struct dp_rcv_pair *p,
		      struct dp_msg_hdr *h, u32 peer_inc)
{
	const struct dp_addr to = dp_rcv_dst(h);
	struct dp_rx_peer *rp;
	unsigned long flags;

	if (!peer_inc)
		return;
	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_paired(r, p, &to);
	if (rp && rp->peer_inc == peer_inc &&
	    (rp->ack_due || dp_rcv_unsaid(rp) > 0))
		dp_rcv_ack_fields(r, rp, h);
	spin_unlock_irqrestore(&r->lock, flags);
}

/* A DATA frame that carried an ack did not leave: the ack is owed again. */
void dp_rcv_unpiggyback(struct dp_rcv *r, struct dp_rcv_pair *p,
			const struct dp_msg_hdr *h)
{
	const struct dp_addr to = dp_rcv_dst(h);
	struct dp_rx_peer *rp;
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	rp = dp_rcv_paired(r, p, &to);
	if (rp && rp->peer_inc == h->dst_inc) {
		if (h->flags & DP_WF_DUP)
			dp_rcv_dup(r, rp, h->dup);
		dp_rcv_owe(r, rp, DP_ACK_NOW |
			   (h->flags & DP_WF_GAP ? DP_ACK_GAP : 0));
	}
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * The edge of @p is about to be freed, or starts a new session: no rx
 * peer may point at it any more.  Process context.
 */
void dp_rcv_unpair(struct dp_rcv *r, struct dp_rcv_pair *p)
{
	spin_lock_irq(&r->lock);
	if (p->rp)
		dp_rcv_unlink(r, p->rp);
	p->looked = false;
	spin_unlock_irq(&r->lock);
}

/*
 * The reader released messages: if some sender was short, grant now, once
 * the room the releases made is worth an update to one of them
 * (dp_rcv_short()), or the pool is empty.  Not per release: a reader that
 * frees one message at a time while senders wait would otherwise cost a
 * run of the ack work per read.
 */
void dp_rcv_released(struct dp_rcv *r)
{
	struct dp_rx_peer *first;
	unsigned long flags;

	smp_mb();	/* the release before the look: pairs with dp_rcv_starve() */
	if (!READ_ONCE(r->starved))
		return;
	spin_lock_irqsave(&r->lock, flags);
	if (dp_rcv_room_due(r)) {
		/*
		 * The large message whose turn it is takes its room now, before
		 * new messages of the others fill the pool again: the moment a
		 * reader has taken what it holds may be the only one there is.
		 */
		first = dp_rcv_turn(r);
		if (first && dp_rcv_grant(r, first, dp_rcv_smax(r)))
			dp_rcv_mark(r, first, DP_ACK_NOW);
		dp_rcv_kick(r, true);
	}
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * A sender's session as dpctl shows it, read under r->lock.  The caller
 * keeps @rp alive: RCU (rx peers are freed after a grace period).
 */
static void dp_rcv_info(struct dp_rcv *r, struct dp_rx_peer *rp,
			struct dp_rcv_info *ri)
{
	unsigned long flags;

	spin_lock_irqsave(&r->lock, flags);
	ri->from = rp->from;
	ri->isn = rp->isn;
	ri->rcv_nxt = rp->rcv_nxt;
	ri->held = rp->n_ooo;
	ri->credit_left = dp_seq_diff(rp->credit, rp->arrived);
	ri->ack_owed = rp->ack_due;
	spin_unlock_irqrestore(&r->lock, flags);
}

/*
 * Each sender's session, in hash order, to @fn until it returns non-zero
 * (returned).  Caller holds RCU: a peer removed meanwhile is still
 * readable and is shown as it was.
 */
int dp_rcv_walk(struct dp_rcv *r,
		int (*fn)(const struct dp_rcv_info *ri, void *arg), void *arg)
{
	struct dp_rcv_info ri;
	struct dp_rx_peer *rp;
	int bkt, err;

	hash_for_each_rcu(r->peers, bkt, rp, hnode) {
		dp_rcv_info(r, rp, &ri);
		err = fn(&ri, arg);
		if (err)
			return err;
	}
	return 0;
}

void dp_rcv_stats(struct dp_rcv *r, struct dp_ep_stats *st)
{
	st->rx_dup = atomic64_read(&r->rx_dup);
}

/*
 * The SACK map of what @rp holds past its gap: bit i, the message
 * rcv_nxt + 1 + i (docs/wire.md).  Returns false if it holds none that
 * the map can name.  Caller holds r->lock.
 */
static bool dp_rcv_sack(struct dp_rcv *r, const struct dp_rx_peer *rp, u8 *map)
{
	const struct dp_ooo *o;
	bool any = false;
	u32 i;

	lockdep_assert_held(&r->lock);
	if (!rp->n_ooo)
		return false;	/* no gap: the usual ACK, no map to build */
	memset(map, 0, DP_SACK_LEN);
	list_for_each_entry(o, &rp->ooo, node) {
		i = o->h.seq - rp->rcv_nxt - 1;
		if (i >= DP_SACK_LEN * 8)
			break;		/* held in seq order: the rest too */
		map[i / 8] |= 1u << (i % 8);
		any = true;
	}
	return any;
}

/* The ACK owed to @rp, into the batch.  Caller holds r->lock. */
static void dp_rcv_take_ack(struct dp_rcv *r, struct dp_rx_peer *rp,
			    struct dp_ack_batch *b, u32 max_msg)
{
	struct dp_msg_hdr *h = &b->h[b->n];
	u8 *map = b->sack[b->n++];

	dp_tx_hdr(r->ep, h, DP_WT_ACK, &rp->from);
	h->seq = max_msg;
	h->dst_inc = rp->peer_inc;
	if (rp->sack && dp_rcv_sack(r, rp, map)) {
		h->flags |= DP_WF_SACK;
		h->len = DP_SACK_LEN;
	}
	dp_rcv_ack_fields(r, rp, h);
}

/*
 * A release made room: re-grant round robin.  From the first active sender
 * not served last time, each one served goes to the back, and the walk
 * stops where the room runs out, so the next release starts there: where
 * a sender sits in the hash (it may choose its DPID) buys it nothing.
 * Caller holds r->lock; process context.
 */
static void dp_rcv_regrant(struct dp_rcv *r, u32 smax)
{
	struct dp_rx_peer *rp;
	u32 n = r->n_active;

	lockdep_assert_held(&r->lock);
	while (n-- && !list_empty(&r->active)) {
		rp = list_first_entry(&r->active, struct dp_rx_peer, active);
		if (!dp_credit_room(r->ring->size, smax, dp_rcv_used(r),
				    r->outstanding)) {
			dp_rcv_short(r, rp, smax);	/* the rest next time */
			return;
		}
		if (dp_rcv_grant(r, rp, smax))
			dp_rcv_mark(r, rp, DP_ACK_NOW);	/* this run sends it */
		if (!list_is_last(&rp->active, &r->active))
			list_move_tail(&rp->active, &r->active);
	}
}

/*
 * Collect up to a batch of owed ACKs and RESETs; re-grant first if a
 * release made room.  Nothing owed (the ACK rode on DATA): no walk.
 * Returns whether more may be owed.
 */
static bool dp_rcv_collect(struct dp_rcv *r, struct dp_ack_batch *b)
{
	struct dp_rx_peer *rp;
	u32 max_msg;
	int bkt;

	spin_lock_irq(&r->lock);
	if (r->starved) {
		WRITE_ONCE(r->starved, false);
		r->sws_room = U32_MAX;		/* the regrant says anew */
		dp_rcv_reclaim(r);
		dp_rcv_regrant(r, dp_rcv_smax(r));
	}
	if (r->n_due) {
		max_msg = dp_rcv_frag_max(r);	/* what we take, fragmented */
		hash_for_each(r->peers, bkt, rp, hnode) {
			if (rp->ack_due && b->n < DP_ACK_BATCH)
				dp_rcv_take_ack(r, rp, b, max_msg);
		}
	}
	while (r->n_resets && b->n < DP_ACK_BATCH) {
		struct dp_reset *rs = &r->resets[--r->n_resets];
		struct dp_msg_hdr *h = &b->h[b->n++];

		dp_tx_hdr(r->ep, h, DP_WT_RESET, &rs->to);
		h->flags = rs->flags;
		h->seq = rs->seq;
		h->dst_inc = rs->dst_inc;
	}
	spin_unlock_irq(&r->lock);
	return b->n == DP_ACK_BATCH;
}

/* Send what is owed, a batch at a time, from r->batch (no allocation). */
static void dp_rcv_ack_work(struct work_struct *work)
{
	struct dp_rcv *r = container_of(to_delayed_work(work), struct dp_rcv,
					ack_work);
	struct dp_ack_batch *b = &r->batch;
	bool more;
	unsigned int i;

	do {
		b->n = 0;
		more = dp_rcv_collect(r, b);
		for (i = 0; i < b->n; i++)
			dp_tx_frame(r->node, &b->h[i],
				    b->h[i].len ? b->sack[i] : NULL);
	} while (more);
}

/*
 * Readers see the pool in ring order, so a large message open holds back
 * every message behind it, of every sender.  One whose sender fell silent
 * past unreach_ms (it died, its host stalled, or its write() hangs in a
 * copy that never ends: a page nobody serves) is given up, its sender
 * forgotten as at eviction (a RESET if it speaks again).  This runs while
 * any message is open, whether or not the pool is short of room (the
 * re-grant's reclaim only runs then), so no reader waits on such a sender
 * for much more than unreach_ms.  At most DP_EVICT_SCAN open messages are
 * looked at per round, in turn, with interrupts off.
 */
static void dp_rcv_open_work(struct work_struct *work)
{
	struct dp_rcv *r = container_of(to_delayed_work(work), struct dp_rcv,
					open_work);
	unsigned long now = jiffies, next = dp_rcv_open_period();
	struct dp_rx_peer *rp, *tmp;
	unsigned int n = 0;
	bool stalled;

	spin_lock_irq(&r->lock);
	/*
	 * Run more than half of unreach_ms late: this host did not run us
	 * (a guest its host did not schedule, a suspended machine), and
	 * could not hear anyone meanwhile.  That is not the senders'
	 * silence: it counts from now, as the sender's own clock does
	 * (dp_snd_stalled()).
	 */
	stalled = time_after(now, r->open_due +
			     msecs_to_jiffies(READ_ONCE(dp_unreach_ms) / 2));
	list_for_each_entry_safe(rp, tmp, &r->open, open) {
		if (n++ == DP_EVICT_SCAN)
			break;
		if (stalled)
			dp_rcv_heard(r, rp);
		else if (dp_rcv_silent(rp, now))
			dp_rcv_drop_peer(r, rp);	/* leaves r->open */
	}
	if (n > DP_EVICT_SCAN) {	/* @rp and those after it first, soon */
		while (r->open.next != &rp->open)
			list_move_tail(r->open.next, &r->open);
		next = 1;
	}
	if (!list_empty(&r->open))
		dp_rcv_watch(r, next);
	spin_unlock_irq(&r->lock);
}

void dp_rcv_init(struct dp_rcv *r, struct dp_endpoint *ep,
		 struct dp_node *node)
{
	r->ep = ep;
	r->node = node;
	r->seed = get_random_u32();
	r->sws_room = U32_MAX;
	spin_lock_init(&r->lock);
	hash_init(r->peers);
	hash_init(r->srcs);
	INIT_LIST_HEAD(&r->lru);
	INIT_LIST_HEAD(&r->active);
	INIT_LIST_HEAD(&r->open);
	INIT_LIST_HEAD(&r->wants);
	INIT_DELAYED_WORK(&r->ack_work, dp_rcv_ack_work);
	INIT_DELAYED_WORK(&r->open_work, dp_rcv_open_work);
}

/*
 * The endpoint is bound: its pool and incarnation.  Before the endpoint
 * is published in the CAT, so no frame reaches the sessions sooner.
 */
void dp_rcv_bind(struct dp_rcv *r, struct dp_pool *pool, struct dp_ring *ring,
		 u32 inc, u32 owner_uid)
{
	r->owner_uid = owner_uid;
	r->pool = pool;
	r->ring = ring;
	r->inc = inc;
}

/*
 * The RESET a closing receiver sends @rp, with the last ack: what did
 * arrive is known.  Caller holds r->lock.
 */
static void dp_rcv_goodbye(struct dp_rcv *r, struct dp_rx_peer *rp,
			   struct dp_msg_hdr *h)
{
	lockdep_assert_held(&r->lock);
	dp_tx_hdr(r->ep, h, DP_WT_RESET, &rp->from);
	h->flags = DP_WF_ACK;
	h->seq = rp->rcv_nxt;	/* names the session */
	h->ack = rp->rcv_nxt - 1;
	h->credit = rp->credit;
	h->dst_inc = rp->peer_inc;
}

/*
 * The endpoint is closing (after it left the CAT): no more work, a RESET
 * to every sender with a session here (best effort: they fail at once
 * with ECONNRESET instead of after unreach_ms), then free the rx peers.
 * Process context.
 */
void dp_rcv_stop(struct dp_rcv *r)
{
	struct dp_ack_batch *b = &r->batch;	/* ack_work's, which is done */
	struct hlist_node *tmp;
	struct dp_rx_peer *rp;
	unsigned int i;
	int bkt;

	spin_lock_irq(&r->lock);
	r->dead = true;
	spin_unlock_irq(&r->lock);
	cancel_delayed_work_sync(&r->ack_work);
	cancel_delayed_work_sync(&r->open_work);
	do {
		b->n = 0;
		spin_lock_irq(&r->lock);
		hash_for_each_safe(r->peers, bkt, tmp, rp, hnode) {
			if (b->n == DP_ACK_BATCH)
				continue;	/* next round */
			dp_rcv_goodbye(r, rp, &b->h[b->n++]);
			dp_rcv_drop_peer(r, rp);
		}
		spin_unlock_irq(&r->lock);
		for (i = 0; i < b->n; i++)
			dp_tx_frame(r->node, &b->h[i], NULL);
	} while (b->n == DP_ACK_BATCH);
}
