// SPDX-License-Identifier: GPL-2.0
/*
 * Sender sessions (docs/reliability.md, section 4): one per edge.  A send
 * opens a session with HELLO, waits for credit, keeps the one kernel copy
 * of the message until it is acknowledged, and transmits it.  ACKs from
 * the MDR advance the window; the timer retransmits (go-back-N, with
 * backoff), probes a closed window, and fails a session whose peer stayed
 * silent past unreach_ms.
 *
 * Contexts: sends and the session's work run in process context under
 * s->tx_mutex and are the only ones to transmit or change the unacked
 * list; the MDR (any context) and the timer only take s->lock, change
 * numbers and queue the work.
 *
 * Below the session is the frame layer (dp_tx_hdr(), dp_tx_frame()); the
 * endpoint and node are opaque here (dp_sess.h), so this file also builds
 * on the host against module/tests/mock/.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "dp_frag.h"
#include "dp_snd.h"
#include "dp_rcv.h"
#include "dp_trace.h"

#define DP_RTO_INIT_US	200000u

static u32 dp_rto_min_us(void)
{
	return READ_ONCE(dp_rto_min_ms) * 1000u;
}

static u32 dp_rto_max_us(void)
{
	u32 max = READ_ONCE(dp_rto_max_ms) * 1000u;

	return max > dp_rto_min_us() ? max : dp_rto_min_us();
}

static unsigned long dp_snd_timeout(struct dp_snd *s)
{
	lockdep_assert_held(&s->lock);
	return usecs_to_jiffies(dp_rtt_timeout(&s->rtt, dp_rto_max_us())) ?: 1;
}

/*
 * Set the session's one deadline; never arm once the edge is dead.  The
 * timer is armed lazily: it is only moved when the new deadline comes
 * before the expiry it is armed for (or it is not armed); one that fires
 * early re-arms itself for the deadline (dp_snd_timer()).  So a message
 * that moves the deadline later (each send, each ACK) costs no timer
 * operation.  Caller holds s->lock.
 */
static void dp_snd_arm(struct dp_snd *s, unsigned long when)
{
	lockdep_assert_held(&s->lock);
	s->deadline = when;
	if (s->dead || (s->armed && !time_before(when, s->armed_at)))
		return;
	s->armed = true;
	s->armed_at = when;
	mod_timer(&s->timer, when);
}

/* When an idle session gives its unused credit back, from now. */
static unsigned long dp_snd_idle_at(void)
{
	return jiffies + msecs_to_jiffies(READ_ONCE(dp_credit_idle_ms));
}

/* Have the work run soon.  Caller holds s->lock. */
static void dp_snd_kick(struct dp_snd *s)
{
	lockdep_assert_held(&s->lock);
	if (!s->dead)
		queue_work(dp_wq, &s->work);
}

/* Every change of an edge's session state goes through here (dp_session). */
static void dp_snd_set_state(struct dp_snd *s, u8 state, int err)
{
	trace_dp_session(s, s->state, state, err);
	WRITE_ONCE(s->state, state);
	dp_event_session(s->se->ep, &s->to, state, err);
}

/* The session ends with @err; the work frees its copies.  Holds s->lock. */
static void dp_snd_fail(struct dp_snd *s, int err)
{
	lockdep_assert_held(&s->lock);
	dp_snd_set_state(s, DP_SND_FAILED, err);
	WRITE_ONCE(s->err, err);
	s->fast = false;
	s->recovering = false;
	WRITE_ONCE(s->probe, false);
	dp_snd_kick(s);
}

/*
 * Congestion window (docs/reliability.md, section 6.1): credit says what
 * the receiver's pool can hold, the window what the path delivers without
 * loss.  It counts bytes, in units of the link's full frame: slow start,
 * then one more full frame per window acknowledged; a reported hole takes
 * a quarter off (reordering looks like one), but not below DP_CWND_INIT
 * frames: the receiver that reports it is receiving, and every session
 * starts at that window anyway.  A timeout restarts from DP_CWND_MIN.
 * Counted in messages, a window of small messages carried a fraction of
 * the bytes TCP's segments do and, under random loss, sat at its floor.
 */
static u32 dp_cwnd_mss(const struct dp_snd *s)
{
	return dp_max_msg(s->se->node) + DP_WIRE_HDR_LEN;
}

/*
 * What a frame of @len message bytes weighs in the window: its bytes, but
 * a fraction of a full frame at least, so a window of tiny messages does
 * not let thousands of frames at a receiver's ring at once.
 */
static u32 dp_cwnd_weight(const struct dp_snd *s, u32 len)
{
	return max(len + DP_WIRE_HDR_LEN, dp_cwnd_least(dp_cwnd_mss(s)));
}

/* @bytes (their weights) were acknowledged.  Caller holds s->lock. */
static void dp_cwnd_acked(struct dp_snd *s, u32 bytes)
{
	u32 mss = dp_cwnd_mss(s);

	lockdep_assert_held(&s->lock);
	if (s->cwnd < s->ssthresh) {
		WRITE_ONCE(s->cwnd, s->cwnd + bytes);
	} else {
		s->cwnd_acc += bytes;
		if (s->cwnd_acc >= s->cwnd) {
			s->cwnd_acc -= s->cwnd;
			WRITE_ONCE(s->cwnd, s->cwnd + mss);
		}
	}
	if (s->cwnd > DP_CWND_MAX * mss)
		WRITE_ONCE(s->cwnd, DP_CWND_MAX * mss);
}

/* A hole reported, or a timeout.  Caller holds s->lock. */
static void dp_cwnd_loss(struct dp_snd *s, bool timeout)
{
	u32 cut = s->cwnd - s->cwnd / 4, mss = dp_cwnd_mss(s);

	lockdep_assert_held(&s->lock);
	if (timeout) {
		s->ssthresh = max(cut, DP_CWND_MIN * mss);
		WRITE_ONCE(s->cwnd, DP_CWND_MIN * mss);
	} else {
		/* not below the window every session starts with */
		s->ssthresh = max(cut, min(s->cwnd, DP_CWND_INIT * mss));
		WRITE_ONCE(s->cwnd, s->ssthresh);
	}
	s->cwnd_acc = 0;
}

/* The bytes in flight and not held by the receiver below it.  Lockless. */
static u32 dp_cwnd_out(const struct dp_snd *s)
{
	u32 out = READ_ONCE(s->snd_bytes) - READ_ONCE(s->una_bytes);

	return out - min(READ_ONCE(s->held_bytes), out);
}

/*
 * Room in the window: dp_cwnd_out() under cwnd, and fewer than
 * DP_CWND_MAX such frames.  Lockless.
 */
static bool dp_cwnd_open(const struct dp_snd *s)
{
	u32 frames = READ_ONCE(s->snd_nxt) - READ_ONCE(s->snd_una);

	frames -= min(READ_ONCE(s->held), frames);
	return dp_cwnd_out(s) < READ_ONCE(s->cwnd) && frames < DP_CWND_MAX;
}

/*
 * Whether a message of weight @wt about to take its seq brings the bytes
 * in flight (dp_cwnd_out()) from under half of cwnd to half or more.  The
 * receiver acknowledges after a tick (4 ms at HZ=250), when it has no
 * data of its own to carry the ACK; a window the loss of a frame cut to
 * its floor (64 messages of 1024 bytes on a 9000-byte link) was spent
 * long before that (traced, the writer waited about a tick at each
 * stall).  Such a message asks for its ACK at once (DP_WF_ACKNOW), once
 * per half window, so the window opens while its second half is sent.  A
 * window over twice the credit (a session without loss) never gets there
 * and asks nothing.  Caller holds s->lock.
 */
static bool dp_snd_ask_ack(const struct dp_snd *s, u32 wt)
{
	u32 out = dp_cwnd_out(s), half = s->cwnd / 2;

	lockdep_assert_held(&s->lock);
	return out < half && out + wt >= half;
}

/* Fired: early (the deadline moved on), re-arm for it; else the work acts. */
static void dp_snd_timer(struct timer_list *t)
{
	struct dp_snd *s = from_timer(s, t, timer);
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	s->armed = false;
	if (time_before(jiffies, s->deadline))
		dp_snd_arm(s, s->deadline);
	else
		dp_snd_kick(s);
	spin_unlock_irqrestore(&s->lock, flags);
}

static void dp_snd_count_undelivered(struct dp_snd *s, u32 n)
{
	if (!n)
		return;
	atomic64_add(n, &s->se->undelivered);
	dp_count_add(s->se->node, DP_CTR_TX_UNDELIVERED, n);
}

/*
 * How many copy slots an edge keeps, in flight and spare together: as many
 * as its window lets fly (frames of the least weight), DP_SND_SPARES at
 * least.  A slot is allocated only when no spare fits, so with one slot
 * size the slots never outnumber the messages once in flight, which credit
 * bounds; the cap bounds the rest.
 */
static u32 dp_snd_slots_cap(const struct dp_snd *s)
{
	return max(DP_SND_SPARES, s->cwnd / dp_cwnd_weight(s, 0));
}

/*
 * A copy the session is done with, not counted in @n_unacked: its
 * reference is let go; if no NIC still sends from it, it is kept as a
 * spare slot if it is one and there is room, else moved to @done to be
 * freed.  If a NIC does, it leaves the session, and the NIC's
 * dp_txref_put() frees it.  Caller holds s->lock.
 */
static void dp_snd_keep(struct dp_snd *s, struct dp_txmsg *m,
			struct list_head *done)
{
	lockdep_assert_held(&s->lock);
	list_del_init(&m->node);	/* before the NIC's put may free it */
	if (!refcount_dec_and_test(&m->keep.ref))
		return;
	if (m->slot && s->n_spare + s->n_unacked < dp_snd_slots_cap(s)) {
		list_add(&m->node, &s->spare);	/* the warmest first */
		s->n_spare++;
	} else {
		list_add_tail(&m->node, done);
	}
}

/*
 * A copy of @size bytes, in pages of its own: a NIC may then send it as an
 * skb's page fragments, which must not be slab memory (dp_netdev.c).
 */
static struct dp_txmsg *dp_snd_copy_alloc(size_t size)
{
	struct dp_txmsg *m = alloc_pages_exact(size, GFP_KERNEL_ACCOUNT);

	if (m)
		m->size = size;
	return m;
}

/* A slot cut from a page with others (dp_snd_slot_new()). */
static bool dp_snd_slot_cut(size_t slot)
{
	return slot == DP_SND_SLOT || slot == DP_SND_SMALL;
}

static void dp_snd_copy_free(struct dp_txmsg *m)
{
	if (dp_snd_slot_cut(m->slot))
		put_page(virt_to_page(m));	/* the page's last slot frees it */
	else
		free_pages_exact(m, m->size);
}

/* Slot @i of the slots of @size bytes cut from the page at @base. */
static struct dp_txmsg *dp_snd_slot_at(u8 *base, u32 i, u32 size)
{
	struct dp_txmsg *m = (struct dp_txmsg *)(base + i * size);

	m->slot = size;
	m->size = size;
	refcount_set(&m->keep.ref, 0);
	return m;
}

/*
 * A new slot of @size bytes (DP_SND_SLOT or DP_SND_SMALL), the first of a
 * fresh page's PAGE_SIZE / @size; each holds a reference to the page.  The
 * others become spares while the edge has room for them
 * (dp_snd_slots_cap(), counting the first), and give their references
 * back at once if not.
 */
static struct dp_txmsg *dp_snd_slot_new(struct dp_snd *s, u32 size)
{
	struct page *page = alloc_page(GFP_KERNEL_ACCOUNT);
	u32 i, per = PAGE_SIZE / size;
	u8 *base;

	BUILD_BUG_ON(PAGE_SIZE % DP_SND_SLOT || DP_SND_SLOT % DP_SND_SMALL);
	if (!page)
		return NULL;
	base = page_address(page);
	page_ref_add(page, per - 1);
	spin_lock_irq(&s->lock);
	for (i = 1; i < per &&
	     s->n_spare + s->n_unacked + 1 < dp_snd_slots_cap(s); i++) {
		list_add_tail(&dp_snd_slot_at(base, i, size)->node, &s->spare);
		s->n_spare++;
	}
	spin_unlock_irq(&s->lock);
	if (i < per)	/* the first still holds the page */
		page_ref_sub(page, per - i);
	return dp_snd_slot_at(base, 0, size);
}

/*
 * A NIC is done with a copy it sent from; if the session let go of it
 * first (acknowledged, or the edge gone), the copy is freed here.
 */
void dp_txref_put(struct dp_txref *r)
{
	if (refcount_dec_and_test(&r->ref))
		dp_snd_copy_free(container_of(r, struct dp_txmsg, keep));
}

/*
 * The slot for a copy of @need bytes: DP_SND_SLOT (any message of a
 * 1500-byte MTU), else one frame of @frame if it fits that (jumbo frames:
 * allocated per fragment, such a copy came from the page allocator and was
 * zeroed each time); 0: no slot, a copy of its own.
 */
static size_t dp_snd_slot_size(size_t need, u32 frame)
{
	struct dp_txmsg *m;
	size_t big = struct_size(m, data, frame);

	if (need <= DP_SND_SMALL)
		return DP_SND_SMALL;
	if (need <= DP_SND_SLOT)
		return DP_SND_SLOT;
	return need <= big ? big : 0;
}

/*
 * Under s->lock: take a spare slot of @size off the list, the first among
 * the first DP_SND_SPARES (with one size, the first), else the coldest if
 * it has that size.  If the coldest has another, it goes to *@stale (NULL
 * before) to be freed: spares of a size no longer sent must not hold the
 * slots' cap (dp_snd_slots_cap()), which would have every copy of the size
 * now sent allocated and freed again.
 */
static struct dp_txmsg *dp_snd_spare_take(struct dp_snd *s, size_t size,
					  struct dp_txmsg **stale)
{
	struct dp_txmsg *m, *found = NULL;
	u32 looked = 0;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(m, &s->spare, node) {
		if (m->slot == size) {
			found = m;
			break;
		}
		if (++looked == DP_SND_SPARES)
			break;
	}
	if (!found && !list_empty(&s->spare)) {
		m = list_last_entry(&s->spare, struct dp_txmsg, node);
		if (m->slot == size)
			found = m;
		else
			*stale = m;
	}
	m = found ? found : *stale;
	if (m) {
		list_del(&m->node);
		s->n_spare--;
	}
	return found;
}

/*
 * A copy slot for a message of @len bytes sent in frames of @frame: a
 * spare of that size (dp_snd_spare_take()), else a new one.
 */
static struct dp_txmsg *dp_snd_get(struct dp_snd *s, size_t len, u32 frame)
{
	struct dp_txmsg *m, *stale = NULL;
	size_t need = struct_size(m, data, len);
	size_t size = dp_snd_slot_size(need, frame);

	if (size) {
		spin_lock_irq(&s->lock);
		m = dp_snd_spare_take(s, size, &stale);
		spin_unlock_irq(&s->lock);
		if (stale)
			dp_snd_copy_free(stale);
		if (m) {
			refcount_set(&m->keep.ref, 1);
			return m;
		}
	}
	if (dp_snd_slot_cut(size))
		m = dp_snd_slot_new(s, size);
	else
		m = dp_snd_copy_alloc(size ? size : need);
	if (!m)
		return NULL;
	m->slot = size;
	refcount_set(&m->keep.ref, 1);
	return m;
}

/* A copy that never went into the session: back to the spares. */
static void dp_snd_put(struct dp_snd *s, struct dp_txmsg *m)
{
	LIST_HEAD(done);

	INIT_LIST_HEAD(&m->node);
	spin_lock_irq(&s->lock);
	dp_snd_keep(s, m, &done);
	spin_unlock_irq(&s->lock);
	if (!list_empty(&done))
		dp_snd_copy_free(m);
}

/* Free the spare slots (the session went idle, ended, or the edge goes). */
static void dp_snd_trim(struct dp_snd *s)
{
	struct dp_txmsg *m, *tmp;
	LIST_HEAD(spare);

	spin_lock_irq(&s->lock);
	list_splice_init(&s->spare, &spare);
	s->n_spare = 0;
	spin_unlock_irq(&s->lock);
	list_for_each_entry_safe(m, tmp, &spare, node)
		dp_snd_copy_free(m);
}

/*
 * Take back the copies the receiver has acknowledged, or, when the
 * session failed (or the edge is going), all of them, counted as
 * undelivered; they become spare slots, or are freed.  A large message
 * counts once: at its first fragment, or at the first of its fragments
 * not acknowledged if the first was.
 */
static void dp_snd_reclaim(struct dp_snd *s, bool all)
{
	struct dp_txmsg *m, *tmp;
	LIST_HEAD(done);
	u32 lost = 0;

	lockdep_assert_held(&s->tx_mutex);
	spin_lock_irq(&s->lock);
	all = all || s->state == DP_SND_FAILED;
	list_for_each_entry_safe(m, tmp, &s->unacked, node) {
		if (!all && !dp_seq_before(m->seq, s->snd_una))
			break;
		if (!dp_seq_before(m->seq, s->snd_una) &&
		    (!lost || !(m->flags & DP_WF_FRAG_MASK) ||
		     m->flags == DP_WF_FRAG_FIRST))
			lost++;
		s->n_unacked--;
		dp_snd_keep(s, m, &done);
	}
	if (all) {
		WRITE_ONCE(s->snd_una, s->snd_nxt);
		WRITE_ONCE(s->una_bytes, s->snd_bytes);
	}
	spin_unlock_irq(&s->lock);
	list_for_each_entry_safe(m, tmp, &done, node)
		dp_snd_copy_free(m);
	dp_snd_count_undelivered(s, lost);
}

/*
 * A control frame of this edge's session, @seq naming the session: HELLO
 * (the ISN), FIN (the ISN).
 */
static int dp_snd_ctrl(struct dp_snd *s, u8 type, u16 flags, u32 seq,
		       u32 dst_inc)
{
	struct dp_msg_hdr h;

	dp_tx_hdr(s->se->ep, &h, type, &s->to);
	h.flags = flags;
	h.seq = seq;
	h.dst_inc = dst_inc;
	return dp_tx_frame(s->se->node, &h, NULL);
}

/*
 * Give the receiver back every credit beyond @space (what we have sent).
 * ack names the session (its ISN): a late RETURN of an earlier one must
 * not cut the credit of the session opened since.
 */
static int dp_snd_return(struct dp_snd *s, u32 space, u32 isn, u32 peer_inc)
{
	struct dp_msg_hdr h;

	dp_tx_hdr(s->se->ep, &h, DP_WT_ACK, &s->to);
	h.flags = DP_WF_RETURN;
	h.ack = isn;
	h.credit = space;
	h.dst_inc = peer_inc;
	return dp_tx_frame(s->se->node, &h, NULL);
}

/*
 * A window probe: seq is snd_nxt; ack names the session (its ISN); credit
 * is the cost of the message a writer waits for (@want, 0 if none), which
 * may be more than the window the receiver gives us unasked (a large
 * message, docs/reliability.md).
 */
static int dp_snd_probe(struct dp_snd *s, u32 nxt, u32 isn, u32 peer_inc,
			u32 want)
{
	struct dp_msg_hdr h;

	dp_tx_hdr(s->se->ep, &h, DP_WT_ACK, &s->to);
	h.flags = DP_WF_PROBE;
	h.seq = nxt;
	h.ack = isn;
	h.credit = want;
	h.dst_inc = peer_inc;
	return dp_tx_frame(s->se->node, &h, NULL);
}

/*
 * One DATA frame from its copy, with a piggy-backed ack if one is owed
 * (found through s->pair, no lookup).  If the frame does not leave, the
 * ack it carried is owed again.  Its
 * header is the session's template (s->tmpl, under tx_mutex) with the
 * message's own fields filled in.
 */
static int dp_snd_xmit(struct dp_snd *s, struct dp_txmsg *m, u32 peer_inc)
{
	struct dp_msg_hdr h;
	int err;

	lockdep_assert_held(&s->tx_mutex);
	dp_tx_tmpl(s->se->ep, &s->tmpl, DP_WT_DATA, &s->to, peer_inc);
	h = s->tmpl.h;
	h.len = m->len;
	h.flags = m->flags | (m->ack_now ? DP_WF_ACKNOW : 0);
	h.seq = m->seq;
	dp_rcv_piggyback(s->se->rcv, &s->pair, &h, peer_inc);
	if (!m->crc_ok && h.dst_nid != h.src_nid) {
		m->crc = dp_wire_msg_crc(m->data, m->len);
		m->crc_ok = true;
	}
	err = dp_tx_frame_tmpl(s->se->node, dp_tx_plugged(s->se->ep),
			       &s->tmpl, &h, m->data, m->crc, &m->keep);
	if (err && (h.flags & DP_WF_ACK))
		dp_rcv_unpiggyback(s->se->rcv, &s->pair, &h);
	return err;
}

/*
 * Resend the holes the receiver reported: the first unacknowledged
 * message, and each one below the highest it holds that it does not hold,
 * each at most once a round trip, at most a window's bytes of them.
 */
static void dp_snd_resend_holes(struct dp_snd *s, u32 peer_inc, u32 high,
				unsigned long rtt)
{
	unsigned long now = jiffies;
	u32 una, sent = 0, max = READ_ONCE(s->cwnd);
	struct dp_txmsg *m;

	lockdep_assert_held(&s->tx_mutex);
	una = READ_ONCE(s->snd_una);
	list_for_each_entry(m, &s->unacked, node) {
		if (dp_seq_before(m->seq, una))
			continue;
		if (m->seq != una && !dp_seq_before(m->seq, high))
			break;
		if (READ_ONCE(m->sacked))
			continue;
		if (m->seq != una && m->resent_at &&
		    time_before(now, m->resent_at + rtt))
			continue;
		WRITE_ONCE(m->resent, true);
		m->resent_at = now;
		if (dp_snd_xmit(s, m, peer_inc))
			break;
		trace_dp_retransmit(s, m->seq, true);
		atomic64_inc(&s->se->retrans);
		dp_count(s->se->node, DP_CTR_TX_RETRANS);
		sent += m->wt;
		if (sent >= max)
			break;
	}
}

/*
 * Go back (timeout): send the unacknowledged messages again, in order, as
 * many as the congestion window allows, and then, as acknowledgements
 * open it (dp_snd_update() sets @refill), the next ones, up to what was
 * sent before the timeout.  The timeout says those are lost or stuck
 * behind a lost one: a receiver holds only DP_OOO_MAX messages past a
 * hole, and drops the rest.  Without the refill the window's worth went
 * once per timeout, a few messages per RTO however fast the path.
 */
static void dp_snd_goback(struct dp_snd *s, u32 peer_inc)
{
	u32 una, from, n = 0, off = 0, max = READ_ONCE(s->cwnd);
	struct dp_txmsg *m;

	lockdep_assert_held(&s->tx_mutex);
	una = READ_ONCE(s->snd_una);
	from = dp_seq_before(s->resend_nxt, una) ? una : s->resend_nxt;
	/* The list only changes under tx_mutex, which we hold. */
	list_for_each_entry(m, &s->unacked, node) {
		if (dp_seq_before(m->seq, una))
			continue;	/* acknowledged */
		if (off >= max || m->seq - una >= DP_CWND_MAX ||
		    !dp_seq_before(m->seq, s->recover))
			break;		/* past the window, from snd_una */
		off += m->wt;
		if (dp_seq_before(m->seq, from))
			continue;	/* resent already */
		if (READ_ONCE(m->sacked)) {
			s->resend_nxt = m->seq + 1;
			continue;	/* the receiver holds it */
		}
		WRITE_ONCE(m->resent, true);
		if (dp_snd_xmit(s, m, peer_inc))
			break;		/* the timer tries again */
		trace_dp_retransmit(s, m->seq, false);
		s->resend_nxt = m->seq + 1;
		n++;
	}
	atomic64_add(n, &s->se->retrans);
	dp_count_add(s->se->node, DP_CTR_TX_RETRANS, n);
}

enum dp_snd_action {
	DP_SND_NONE, DP_SND_HELLO_AGAIN, DP_SND_GOBACK, DP_SND_RESEND, DP_SND_PROBE,
	DP_SND_RETURN,
};

/*
 * An open session with nothing in flight and nobody waiting: once idle for
 * credit_idle_ms it gives its unused credit back, so an idle sender does
 * not hold pool space other senders need.  Caller holds s->lock.
 */
static enum dp_snd_action dp_snd_idle(struct dp_snd *s, unsigned long now)
{
	lockdep_assert_held(&s->lock);
	/*
	 * Given back already, or a writer needs it.  With none left to give
	 * it still goes (a RETURN of nothing): poll() then says a write may
	 * ask, and the receiver stops granting unasked.  A poller has no
	 * probe out, and the window update a reader's release sends may be
	 * lost: without this it would wait for good.
	 */
	if (s->returned || s->waiters)
		return DP_SND_NONE;
	if (time_before(now, s->deadline)) {
		dp_snd_arm(s, s->deadline);
		return DP_SND_NONE;
	}
	WRITE_ONCE(s->credit, s->snd_space);
	WRITE_ONCE(s->returned, true);
	return DP_SND_RETURN;
}

/*
 * A window probe goes (nothing is in flight, a writer lacks credit): it
 * gives back the credit we hold, which the writer could not send in.  The
 * receiver does the same on the probe (dp_rcv_probe()): a large message's
 * writer holding part of the room while it waits for the whole may keep
 * from another such writer just what it lacks, and both then wait for
 * good.  The probe's answer brings what the receiver grants.  Caller holds
 * s->lock.
 */
static void dp_snd_ask(struct dp_snd *s)
{
	lockdep_assert_held(&s->lock);
	WRITE_ONCE(s->credit, s->snd_space);
}

/* The peer owes the session an answer: a HELLO's, an ACK, a window. */
static bool dp_snd_pending(const struct dp_snd *s)
{
	return s->state == DP_SND_HELLO || s->snd_una != s->snd_nxt || s->probe;
}

/*
 * Silent past unreach_ms since it came to owe us something.  A peer that
 * had nothing to answer for a while (an idle session) was not silent: the
 * clock starts at the later of the last frame heard and the moment the
 * wait began.  Caller holds s->lock.
 */
static bool dp_snd_unreachable(const struct dp_snd *s, unsigned long now)
{
	unsigned long since = s->last_heard;

	if (time_after(s->wait_since, since))
		since = s->wait_since;
	return time_after(now, since + msecs_to_jiffies(READ_ONCE(dp_unreach_ms)));
}

/*
 * The timer ran more than half of unreach_ms past its deadline: this
 * host did not run us meanwhile (a guest its host did not schedule, a
 * machine that was suspended).  Nothing was resent and nothing received
 * in that time, so it is not the peer's silence.  Caller holds s->lock.
 */
static bool dp_snd_stalled(const struct dp_snd *s, unsigned long now)
{
	return time_after(now, s->deadline +
			  msecs_to_jiffies(READ_ONCE(dp_unreach_ms) / 2));
}

/* A round trip in jiffies (the RTO before the first sample), at least 1. */
static unsigned long dp_snd_rtt_jiffies(const struct dp_snd *s)
{
	u32 rtt_us = s->rtt.srtt ? s->rtt.srtt : s->rtt.rto;

	lockdep_assert_held(&s->lock);
	return max(usecs_to_jiffies(rtt_us), 1UL);
}

/*
 * Whether a gap report asks for a resend of the first unacknowledged
 * message: a new hole, or one resent at least a round trip ago (that
 * resend was lost, or the report is about the hole it left), so a report
 * repeated while the resend is on its way sends nothing twice.
 */
static bool dp_snd_fast_due(const struct dp_snd *s, unsigned long now)
{
	lockdep_assert_held(&s->lock);
	return s->snd_una != s->fast_seq ||
	       time_after_eq(now, s->fast_at + dp_snd_rtt_jiffies(s));
}

/*
 * A timeout: what the receiver said it held may be gone (it drops a held
 * message it cannot place), so all goes again.  Caller holds s->lock.
 */
static void dp_snd_unsack(struct dp_snd *s)
{
	struct dp_txmsg *m;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(m, &s->unacked, node) {
		if (READ_ONCE(m->sacked))
			WRITE_ONCE(m->resent, true);	/* no RTT sample */
		WRITE_ONCE(m->sacked, false);
	}
	WRITE_ONCE(s->held, 0);
	WRITE_ONCE(s->held_bytes, 0);
	s->sack_high = s->snd_una;
}

/*
 * The receiver's map (bit i: it holds snd_una + 1 + i), or none: mark
 * what it holds and count what is held past snd_una.  Caller holds s->lock.
 */
static void dp_snd_sacked(struct dp_snd *s, const u8 *map)
{
	u32 una = s->snd_una, held = 0, bytes = 0, high = una, i;
	struct dp_txmsg *m;

	lockdep_assert_held(&s->lock);
	if (!map && !s->held)
		return;
	list_for_each_entry(m, &s->unacked, node) {
		if (!dp_seq_before(una, m->seq))
			continue;	/* acknowledged, or the first */
		i = m->seq - una - 1;
		if (i >= DP_SACK_LEN * 8)
			break;	/* never marked: una only moves on */
		if (map && (map[i / 8] & (1u << (i % 8))))
			WRITE_ONCE(m->sacked, true);
		if (READ_ONCE(m->sacked)) {
			held++;
			bytes += m->wt;
			high = m->seq + 1;
		}
	}
	WRITE_ONCE(s->held, held);
	WRITE_ONCE(s->held_bytes, bytes);
	s->sack_high = high;
}

/*
 * A timeout: note what undoes it should it prove spurious (dp_snd_undo()),
 * if the message its go-back sends first had been sent only once: then a
 * duplicate of it at the receiver means its original arrived.  One sent
 * twice already (a hole's resend, an earlier timeout) proves nothing.
 * Caller holds s->lock.
 */
static void dp_snd_undo_mark(struct dp_snd *s)
{
	struct dp_txmsg *m;

	lockdep_assert_held(&s->lock);
	s->undo = false;
	list_for_each_entry(m, &s->unacked, node) {
		if (dp_seq_before(m->seq, s->snd_una))
			continue;	/* acknowledged, not yet taken back */
		s->undo = m->seq == s->snd_una && !READ_ONCE(m->resent);
		break;
	}
	s->undo_seq = s->snd_una;
	s->undo_cwnd = s->cwnd;
	s->undo_ssthresh = s->ssthresh;
}

/* The last timeout proved spurious: as if it had not struck.  Under lock. */
static void dp_snd_undone(struct dp_snd *s)
{
	lockdep_assert_held(&s->lock);
	s->undo = false;
	s->undone++;
	WRITE_ONCE(s->cwnd, max(s->cwnd, s->undo_cwnd));
	s->ssthresh = max(s->ssthresh, s->undo_ssthresh);
	s->recovering = false;
	s->refill = false;
	trace_dp_undo(s, s->undo_seq);
}

/*
 * The receiver got the message a timeout resent first after it had
 * delivered it (DP_WF_DUP naming it): the original arrived, and the
 * timeout was spurious, an ACK late or lost (docs/reliability.md 5.4).
 * The window goes back to what it was, and the go-back stops: what it
 * would resend next is most likely in already, and a message that is not
 * is reported as a hole or times out again.  Caller holds s->lock.
 */
static void dp_snd_undo(struct dp_snd *s, const struct dp_msg_hdr *h)
{
	lockdep_assert_held(&s->lock);
	if (!(h->flags & DP_WF_DUP) || !s->undo)
		return;
	if (s->snd_una - s->undo_seq > DP_CWND_MAX)
		s->undo = false;	/* a window past it: no answer to it */
	if (!s->undo || h->dup != (u16)s->undo_seq)
		return;
	dp_snd_undone(s);
}

/*
 * An ACK after a spurious-looking timeout (@undo noted) covers, as its
 * newest message, one sent only once and not held past a hole (the RTT
 * sample's test: dp_snd_rtt() calls this with its @seq), and sent before
 * the timeout: its original arrived, so the path was late, not lossy, and
 * the go-back stops before it resends more of what the receiver has
 * (F-RTO, RFC 5682, without its new data first: the go-back's first
 * resends are out already).  A message the receiver held at the timeout
 * counts as resent (dp_snd_unsack()), so a hole repaired is no proof.
 * Caller holds s->lock.
 */
static void dp_snd_frto(struct dp_snd *s, u32 seq)
{
	lockdep_assert_held(&s->lock);
	if (!s->undo || !s->recovering || !dp_seq_before(seq, s->recover))
		return;
	dp_snd_undone(s);
}

/* What the timer or a gap report asks for now.  Caller holds s->lock. */
static enum dp_snd_action dp_snd_due(struct dp_snd *s)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&s->lock);
	if (s->dead || (s->state != DP_SND_HELLO && s->state != DP_SND_OPEN))
		return DP_SND_NONE;
	if (!dp_snd_pending(s))
		return dp_snd_idle(s, now);
	if (dp_snd_stalled(s, now))
		s->wait_since = now;	/* the peer's silence counts from now */
	if (dp_snd_unreachable(s, now)) {
		dp_snd_fail(s, -ETIMEDOUT);
		return DP_SND_NONE;
	}
	if (s->recovering && (s->refill || s->fast) &&
	    time_before(now, s->deadline)) {
		/*
		 * Going back already: the next messages, not the first again.
		 * Not once the deadline passed: the timer that fired queued
		 * this work, and an ACK that came before it ran must not take
		 * its turn, or no deadline is left armed and a lost resend of
		 * the first is never sent again.
		 */
		s->refill = false;
		s->fast = false;
		dp_snd_arm(s, s->deadline);
		return DP_SND_GOBACK;
	}
	if (s->fast) {
		/*
		 * The receiver holds what came after the hole: resend only the
		 * first message missing, once per hole and round trip
		 * (dp_snd_fast_due()), and restart the clock.
		 */
		s->fast = false;
		if (s->snd_una != s->snd_nxt && dp_snd_fast_due(s, now)) {
			if (s->snd_una != s->fast_seq) {
				dp_cwnd_loss(s, false);	/* once per hole */
				s->undo = false;	/* a loss after all */
			}
			s->fast_seq = s->snd_una;
			s->fast_at = now;
			dp_snd_arm(s, now + dp_snd_timeout(s));
			return DP_SND_RESEND;
		}
	}
	if (time_before(now, s->deadline)) {
		dp_snd_arm(s, s->deadline);
		return DP_SND_NONE;
	}
	dp_rtt_backoff(&s->rtt);
	dp_snd_arm(s, now + dp_snd_timeout(s));
	if (s->state == DP_SND_HELLO)
		return DP_SND_HELLO_AGAIN;
	if (s->snd_una == s->snd_nxt) {
		dp_snd_ask(s);
		return DP_SND_PROBE;
	}
	s->timeouts++;
	dp_snd_undo_mark(s);
	dp_cwnd_loss(s, true);
	dp_snd_unsack(s);
	s->recovering = true;
	s->refill = false;
	s->recover = s->snd_nxt;
	s->resend_nxt = s->snd_una;
	return DP_SND_GOBACK;
}

static void dp_snd_work_fn(struct work_struct *work)
{
	struct dp_snd *s = container_of(work, struct dp_snd, work);
	enum dp_snd_action act;
	u32 peer_inc, isn, nxt, space, want, high;
	unsigned long rtt;
	bool failed;

	mutex_lock(&s->tx_mutex);
	dp_snd_reclaim(s, false);
	spin_lock_irq(&s->lock);
	act = dp_snd_due(s);
	peer_inc = s->peer_inc;
	isn = s->isn;
	nxt = s->snd_nxt;
	space = s->snd_space;
	want = s->want;
	high = s->sack_high;
	rtt = dp_snd_rtt_jiffies(s);
	failed = s->state == DP_SND_FAILED;
	spin_unlock_irq(&s->lock);
	if (failed)
		dp_snd_reclaim(s, true);
	if (failed || act == DP_SND_RETURN)
		dp_snd_trim(s);		/* no credit, no slots kept */
	if (act == DP_SND_HELLO_AGAIN)
		dp_snd_ctrl(s, DP_WT_HELLO, DP_WF_SACK, isn, 0);
	else if (act == DP_SND_GOBACK)
		dp_snd_goback(s, peer_inc);
	else if (act == DP_SND_RESEND)
		dp_snd_resend_holes(s, peer_inc, high, rtt);
	else if (act == DP_SND_PROBE)
		dp_snd_probe(s, nxt, isn, peer_inc, want);
	else if (act == DP_SND_RETURN)
		dp_snd_return(s, space, isn, peer_inc);
	mutex_unlock(&s->tx_mutex);
	/*
	 * A failure ends the writers' wait; a credit return makes the edge
	 * writable for poll() (the next write asks for a window at once).
	 */
	if (failed || act == DP_SND_RETURN)
		wake_up_all(&s->se->wq);
}

void dp_snd_ep_init(struct dp_snd_ep *se, struct dp_endpoint *ep,
		    struct dp_node *node, struct dp_rcv *rcv,
		    struct mutex *ep_lock)
{
	se->ep = ep;
	se->node = node;
	se->rcv = rcv;
	se->ep_lock = ep_lock;
	init_waitqueue_head(&se->wq);
}

/* Writers and pollers look again (the current edge changed). */
void dp_snd_wake(struct dp_snd_ep *se)
{
	wake_up_all(&se->wq);
}

void dp_snd_ep_stats(struct dp_snd_ep *se, struct dp_ep_stats *st)
{
	st->tx_undelivered = atomic64_read(&se->undelivered);
	st->tx_retrans = atomic64_read(&se->retrans);
	st->tx_blocked = atomic64_read(&se->blocked);
}

void dp_snd_init(struct dp_snd *s, struct dp_snd_ep *se,
		 const struct dp_addr *to)
{
	s->se = se;
	s->to = *to;
	mutex_init(&s->tx_mutex);
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->unacked);
	INIT_LIST_HEAD(&s->spare);
	timer_setup(&s->timer, dp_snd_timer, 0);
	INIT_WORK(&s->work, dp_snd_work_fn);
	WRITE_ONCE(s->state, DP_SND_IDLE);
}

/*
 * IDLE -> HELLO: a new session with a random ISN.  Holds tx_mutex.  The
 * copies of the session before are freed first: a RESET that failed it
 * between a send's reclaim and its admit left them on the list, and the
 * new session must neither resend nor count them.
 */
static int dp_snd_open(struct dp_snd *s)
{
	u32 isn = get_random_u32();
	int err;

	lockdep_assert_held(&s->tx_mutex);
	dp_snd_reclaim(s, true);
	dp_rcv_unpair(s->se->rcv, &s->pair);	/* the peer may be another */
	spin_lock_irq(&s->lock);
	s->isn = isn;
	WRITE_ONCE(s->snd_nxt, isn);
	WRITE_ONCE(s->snd_una, isn);
	WRITE_ONCE(s->snd_bytes, 0);
	WRITE_ONCE(s->una_bytes, 0);
	dp_snd_unsack(s);	/* an old session's map says nothing */
	WRITE_ONCE(s->snd_space, 0);
	WRITE_ONCE(s->credit, 0);
	s->peer_inc = 0;
	WRITE_ONCE(s->peer_max, 0);
	s->fast = false;
	s->fast_seq = isn - 1;
	s->fast_at = jiffies;
	s->recovering = false;
	s->refill = false;
	WRITE_ONCE(s->cwnd, DP_CWND_INIT * dp_cwnd_mss(s));
	s->ssthresh = DP_CWND_MAX * dp_cwnd_mss(s);
	s->cwnd_acc = 0;
	WRITE_ONCE(s->probe, false);
	WRITE_ONCE(s->want, 0);
	WRITE_ONCE(s->returned, false);
	dp_rtt_init(&s->rtt, DP_RTO_INIT_US, dp_rto_min_us(), dp_rto_max_us());
	s->last_heard = jiffies;
	s->wait_since = s->last_heard;
	dp_snd_set_state(s, DP_SND_HELLO, 0);
	dp_snd_arm(s, jiffies + dp_snd_timeout(s));
	spin_unlock_irq(&s->lock);
	err = dp_snd_ctrl(s, DP_WT_HELLO, DP_WF_SACK, isn, 0);
	if (err) {	/* no NIC, no route: say so now, as v1 did */
		spin_lock_irq(&s->lock);
		dp_snd_set_state(s, DP_SND_IDLE, err);
		spin_unlock_irq(&s->lock);
	}
	return err;
}

/*
 * Whether a send of @space bytes of pool space can go ahead now, or must
 * return at once (an error to report, the session to open).  Lockless:
 * the sender checks again under s->lock.
 */
static bool dp_snd_ready(struct dp_snd *s, u32 space)
{
	u8 state = READ_ONCE(s->state);

	if (READ_ONCE(s->dead))
		return true;
	if (READ_ONCE(s->in_msg))
		return false;	/* its writer first, whatever the session does */
	if (state == DP_SND_FAILED || state == DP_SND_IDLE)
		return true;
	return state == DP_SND_OPEN && dp_cwnd_open(s) &&
	       dp_credit_allows(READ_ONCE(s->snd_space) + space, READ_ONCE(s->credit));
}

/*
 * Too little credit for @space and no probe out: the writer must ask
 * (dp_snd_admit() sets the probe), or nobody will; the window update a
 * reader's release sends may be lost, only a probe is always answered.
 * A writer sleeping for credit needs this besides dp_snd_ready(): its
 * probe may end without the credit it waits for (another writer's
 * message, sent meanwhile, took the grant that ended it), and a large
 * message's writer it waited behind never asked for its.  Lockless.
 */
static bool dp_snd_must_ask(struct dp_snd *s, u32 space)
{
	return READ_ONCE(s->state) == DP_SND_OPEN && !READ_ONCE(s->in_msg) &&
	       !READ_ONCE(s->probe) &&
	       !dp_credit_allows(READ_ONCE(s->snd_space) + space, READ_ONCE(s->credit));
}

/*
 * The largest message this edge sends: a frame until its session is open,
 * then what the receiver announced (dp_frag_max_msg() of its pool, more
 * than a frame if it takes fragments).  Lockless.
 */
u32 dp_snd_max_msg(struct dp_snd *s)
{
	if (READ_ONCE(s->state) != DP_SND_OPEN)
		return dp_max_msg(s->se->node);
	return READ_ONCE(s->peer_max);
}

/*
 * For poll: EPOLLOUT when a send of the largest message would not wait,
 * or when the session gave its credit back while idle (a write asks for a
 * window at once; until it comes, the probe pending makes this false).
 */
bool dp_snd_writable(struct dp_snd *s, int *err)
{
	u32 max = READ_ONCE(s->peer_max), want = READ_ONCE(s->want);

	*err = READ_ONCE(s->state) == DP_SND_FAILED ? READ_ONCE(s->err) : 0;
	if (READ_ONCE(s->returned) && !READ_ONCE(s->probe))
		return true;
	if (max > dp_max_msg(s->se->node))
		max = dp_max_msg(s->se->node);
	/* ... or when the message the writer could not send now fits */
	return dp_snd_ready(s, DP_TOKEN_SPACE(max)) || (want && dp_snd_ready(s, want));
}

enum dp_snd_step {
	DP_STEP_SEND, DP_STEP_OPEN, DP_STEP_PROBE, DP_STEP_WAIT, DP_STEP_ERR,
};

/* @m takes the next seq and its cost; it is in flight.  Holds s->lock. */
static void dp_snd_queue(struct dp_snd *s, struct dp_txmsg *m)
{
	lockdep_assert_held(&s->lock);
	m->seq = s->snd_nxt;
	WRITE_ONCE(s->snd_nxt, s->snd_nxt + 1);
	m->sent_ns = ktime_get_ns();
	m->wt = dp_cwnd_weight(s, m->len);
	m->ack_now = dp_snd_ask_ack(s, m->wt);
	WRITE_ONCE(s->snd_bytes, s->snd_bytes + m->wt);
	WRITE_ONCE(s->snd_space, s->snd_space + m->space);
	list_add_tail(&m->node, &s->unacked);
	s->n_unacked++;
	if (m->seq == s->snd_una)	/* the window was empty: start the clock */
		dp_snd_arm(s, jiffies + dp_snd_timeout(s));
}

/*
 * Under s->lock: queue @m with the next seq if the credit allows, else say
 * what to do.  @err gets the errno of DP_STEP_ERR.
 */
static enum dp_snd_step dp_snd_admit(struct dp_snd *s, struct dp_txmsg *m,
				     u32 total, int *err)
{
	lockdep_assert_held(&s->lock);
	if (s->dead) {
		*err = -ENOTCONN;
		return DP_STEP_ERR;
	}
	/*
	 * Another writer's large message first.  If the session fails under
	 * it, that writer reports the error (dp_snd_abort_msg()), once: a
	 * writer waiting here must not take it too, for a message it never
	 * sent.
	 */
	if (s->in_msg)
		return DP_STEP_WAIT;
	switch (s->state) {
	case DP_SND_FAILED:
		*err = s->err;		/* reported once */
		dp_snd_set_state(s, DP_SND_IDLE, 0);
		return DP_STEP_ERR;
	case DP_SND_IDLE:
		return DP_STEP_OPEN;
	case DP_SND_HELLO:
		return DP_STEP_WAIT;
	}
	/* A receiver that announced more than a frame takes fragments. */
	if (total > s->peer_max) {
		*err = -EMSGSIZE;
		return DP_STEP_ERR;
	}
	/* What follows makes the peer owe an answer: its silence counts now. */
	if (!dp_snd_pending(s))
		s->wait_since = jiffies;
	/*
	 * Credit first: a writer the congestion window holds back sleeps
	 * until both allow (dp_snd_ready()), so a lack of credit must set
	 * the probe now.  If the ACKs that open the window bring too little
	 * and the update after it is lost, nothing else would ask again.
	 */
	if (!dp_credit_allows(s->snd_space + m->space, s->credit)) {
		WRITE_ONCE(s->want, m->space);
		if (s->probe)
			return DP_STEP_WAIT;
		/* the timer probes again: a lost window update must not stall us */
		WRITE_ONCE(s->probe, true);
		if (s->snd_una != s->snd_nxt)
			return DP_STEP_WAIT;	/* its ACKs will bring credit */
		dp_snd_arm(s, jiffies + dp_snd_timeout(s));
		dp_snd_ask(s);
		return DP_STEP_PROBE;	/* idle (credit given back): ask now */
	}
	if (!dp_cwnd_open(s))
		return DP_STEP_WAIT;	/* acknowledgements open it (or the timer) */
	WRITE_ONCE(s->want, 0);
	if (m->flags == DP_WF_FRAG_FIRST) {
		WRITE_ONCE(s->in_msg, true);
		WRITE_ONCE(s->hushed, false);
	}
	dp_snd_queue(s, m);
	return DP_STEP_SEND;
}

/*
 * Undo dp_snd_admit() of the newest message: it never left.  A peer that
 * acknowledged it all the same (it cannot have had it) must not leave
 * snd_una past snd_nxt, which would close the window for good.  The
 * first fragment of a large message taken back ends that message before
 * it began: the other writers, held back by in_msg, may go again.
 */
static void dp_snd_unqueue(struct dp_snd *s, struct dp_txmsg *m)
{
	bool first = m->flags == DP_WF_FRAG_FIRST;

	spin_lock_irq(&s->lock);
	list_del(&m->node);
	s->n_unacked--;
	WRITE_ONCE(s->snd_nxt, s->snd_nxt - 1);
	WRITE_ONCE(s->snd_bytes, s->snd_bytes - m->wt);
	WRITE_ONCE(s->snd_space, s->snd_space - m->space);
	if (dp_seq_before(s->snd_nxt, s->snd_una)) {
		WRITE_ONCE(s->snd_una, s->snd_nxt);
		WRITE_ONCE(s->una_bytes, s->snd_bytes);
	}
	if (first)
		WRITE_ONCE(s->in_msg, false);
	spin_unlock_irq(&s->lock);
	if (first)
		wake_up_all(&s->se->wq);
}

/*
 * First transmission, tx_mutex held.  An error that says the message can
 * never leave (no NIC, no route, too big for the NIC) is returned with the
 * message taken back; a passing one (a full NIC queue) leaves it to the
 * retransmission timer and the send succeeds.  A signal that cut short
 * the backend's wait for a free TX slot (-ERESTARTSYS, -EINTR) is of the
 * first kind: the message is taken back and the write is restarted or
 * reports EINTR.  Left to the timer, it would be a hole that every later
 * message runs into (a writer with a periodic signal, on a NIC whose
 * queue fills, made one hole per signal that way).
 */
static int dp_snd_first(struct dp_snd *s, struct dp_txmsg *m, u32 peer_inc)
{
	int err = dp_snd_xmit(s, m, peer_inc);

	if (err == -ENETDOWN || err == -EHOSTUNREACH || err == -EMSGSIZE ||
	    err == -ERESTARTSYS || err == -EINTR) {
		dp_snd_unqueue(s, m);
		return err;
	}
	return 0;
}

/*
 * The copy of fragment @i of the message of @len bytes at @buf, cut for
 * frames of @frame bytes (a message that fits one frame is its only
 * fragment, sent whole): the first one carries the message's length and
 * its whole cost (dp_frag_credit()), the others cost nothing.
 */
static struct dp_txmsg *dp_snd_copy(struct dp_snd *s, const void __user *buf,
				    u32 len, u32 frame, u32 i)
{
	const u8 __user *from;
	struct dp_txmsg *m;
	struct dp_frag f;
	u8 *p;
	int err;

	if (dp_frag_get(len, frame, i, &f))
		return ERR_PTR(-EMSGSIZE);	/* no frame to cut it for */
	m = dp_snd_get(s, f.wire_len, frame);
	if (!m)
		return ERR_PTR(-ENOMEM);
	p = m->data;
	if (f.flags == DP_WF_FRAG_FIRST) {
		dp_frag_put_total(p, len);
		p += DP_FRAG_TOTAL_LEN;
	}
	from = (const u8 __user *)buf + f.off;
	/* The checksum's pass over the message, fused with the copy. */
	m->crc_ok = !dp_tx_local(s->se->node, s->to.nid);
	if (m->crc_ok)
		m->crc = dp_wire_msg_crc(m->data, p - m->data);
	err = dp_crc32c_copy_from_user(m->crc_ok ? &m->crc : NULL, p, from,
				       f.len);
	if (err) {
		dp_snd_put(s, m);
		return ERR_PTR(err);
	}
	m->len = f.wire_len;
	m->flags = f.flags;
	m->space = i ? 0 : dp_frag_credit(len, frame);
	WRITE_ONCE(m->resent, false);
	WRITE_ONCE(m->sacked, false);
	m->resent_at = 0;
	return m;
}

/* What a writer about to wait waits for (dp_stall). */
static u8 dp_snd_stall_on(struct dp_snd *s)
{
	if (READ_ONCE(s->state) != DP_SND_OPEN)
		return DP_STALL_SESSION;
	return dp_cwnd_open(s) ? DP_STALL_CREDIT : DP_STALL_CWND;
}

/*
 * Wait for credit (or an error to report) with no lock held, or for the
 * session to leave @state, the state dp_snd_admit() saw: a writer that
 * waited through the HELLO must look again once the session is open (with
 * too little credit it probes; the ready test alone would wait for a
 * window nobody asks for), or until it must ask for credit itself
 * (dp_snd_must_ask()).  While a writer waits the session keeps its credit
 * (no return on idle).
 */
static int dp_snd_wait(struct dp_snd *s, u32 space, u8 state, bool nonblock,
		       bool *counted)
{
	struct dp_snd_ep *se = s->se;
	int err;

	/* what the peer may need to see before it answers */
	dp_tx_plug_flush(dp_tx_plugged(se->ep));
	if (!*counted) {
		atomic64_inc(&se->blocked);
		*counted = true;
		trace_dp_stall(s, space, dp_snd_stall_on(s));
	}
	if (nonblock)
		return -EAGAIN;
	spin_lock_irq(&s->lock);
	s->waiters++;
	spin_unlock_irq(&s->lock);
	err = wait_event_interruptible(se->wq, dp_snd_ready(s, space) ||
				       dp_snd_must_ask(s, space) ||
				       READ_ONCE(s->state) != state);
	spin_lock_irq(&s->lock);
	s->waiters--;
	spin_unlock_irq(&s->lock);
	return err;
}

/*
 * Admit and send @m, a whole message or the first fragment of one of
 * @total bytes: open the session, wait for credit (or say EAGAIN), probe.
 * 0: the copy is the edge's now, sent in session *@sess; else an error
 * and it is still ours.
 */
static int dp_snd_start(struct dp_snd *s, struct dp_txmsg *m, u32 total,
			bool nonblock, u32 *sess)
{
	u32 peer_inc, nxt, isn, want;
	enum dp_snd_step step;
	bool counted = false;
	int err = 0;
	u8 state;

	for (;;) {
		if (mutex_lock_interruptible(&s->tx_mutex))
			return -ERESTARTSYS;
		dp_snd_reclaim(s, false);
		spin_lock_irq(&s->lock);
		step = dp_snd_admit(s, m, total, &err);
		peer_inc = s->peer_inc;
		nxt = s->snd_nxt;
		isn = s->isn;
		want = s->want;
		state = s->state;
		spin_unlock_irq(&s->lock);
		if (step == DP_STEP_SEND) {
			*sess = isn;
			err = dp_snd_first(s, m, peer_inc);
			mutex_unlock(&s->tx_mutex);
			return err;
		}
		if (step == DP_STEP_OPEN)
			err = dp_snd_open(s);
		if (step == DP_STEP_PROBE)
			dp_snd_probe(s, nxt, isn, peer_inc, want);
		mutex_unlock(&s->tx_mutex);
		if (step == DP_STEP_ERR || err)
			return err;
		if (step == DP_STEP_WAIT || step == DP_STEP_PROBE) {
			err = dp_snd_wait(s, m->space, state, nonblock, &counted);
			if (err)
				return err;
		}
	}
}

/*
 * A large message's writer was silent past half of unreach_ms, all it sent
 * acknowledged (its copy hung on a page nobody serves, or it was not
 * run).  Past unreach_ms the receiver gives such a message up
 * (dp_rcv_open_work()) and answers the rest with a RESET; were the rest
 * sent at once, the write could return before that RESET came back, as
 * if the message had gone, and the next write would take the error.  So
 * the next fragment goes alone (@hushed) and the rest waits for its
 * answer: an ACK (the message is still open there) or the RESET (the
 * write reports ECONNRESET).  Caller holds s->lock.
 */
static bool dp_snd_fell_silent(const struct dp_snd *s, unsigned long now)
{
	lockdep_assert_held(&s->lock);
	return s->snd_una == s->snd_nxt &&
	       time_after(now, s->last_heard +
			  msecs_to_jiffies(READ_ONCE(dp_unreach_ms) / 2));
}

/* The window has room for the next fragment, and no lone one is out. */
static bool dp_snd_next_open(const struct dp_snd *s)
{
	return dp_cwnd_open(s) &&
	       !(READ_ONCE(s->hushed) &&
		 READ_ONCE(s->snd_una) != READ_ONCE(s->snd_nxt));
}

/*
 * Under s->lock: queue the next fragment @m of the large message begun in
 * session @isn, if the congestion window allows; its credit was charged
 * at the first.  The last one lets other writers in again.
 */
static enum dp_snd_step dp_snd_admit_next(struct dp_snd *s,
					  struct dp_txmsg *m, u32 isn, int *err)
{
	lockdep_assert_held(&s->lock);
	if (s->dead || s->state != DP_SND_OPEN || s->isn != isn) {
		*err = s->dead ? -ENOTCONN : s->err ? s->err : -ECONNRESET;
		return DP_STEP_ERR;
	}
	if (!dp_snd_next_open(s))
		return DP_STEP_WAIT;
	WRITE_ONCE(s->hushed, dp_snd_fell_silent(s, jiffies));
	if (m->flags == DP_WF_FRAG_LAST)
		WRITE_ONCE(s->in_msg, false);
	dp_snd_queue(s, m);
	return DP_STEP_SEND;
}

/* The large message's writer may go on: room in the window, or an end. */
static bool dp_snd_next_ready(struct dp_snd *s)
{
	return READ_ONCE(s->dead) || READ_ONCE(s->state) != DP_SND_OPEN ||
	       dp_snd_next_open(s);
}

/*
 * Send fragment @m of the large message of session @isn as soon as the
 * window allows (pipelined: the next one is copied meanwhile).  A frame
 * that does not leave is the retransmission timer's, as any in flight:
 * the message cannot be taken back in the middle.  Only a fatal signal
 * cuts the wait short.  0, or an error and @m is still ours.
 */
static int dp_snd_next(struct dp_snd *s, struct dp_txmsg *m, u32 isn)
{
	/* once sent and unlocked, @m is the session's: an ACK may free it */
	const bool last = m->flags == DP_WF_FRAG_LAST;
	enum dp_snd_step step;
	u32 peer_inc;
	int err = 0;

	for (;;) {
		if (mutex_lock_killable(&s->tx_mutex))
			return -EINTR;
		dp_snd_reclaim(s, false);
		spin_lock_irq(&s->lock);
		step = dp_snd_admit_next(s, m, isn, &err);
		peer_inc = s->peer_inc;
		spin_unlock_irq(&s->lock);
		if (step == DP_STEP_SEND)
			dp_snd_xmit(s, m, peer_inc);
		mutex_unlock(&s->tx_mutex);
		if (step != DP_STEP_WAIT)
			break;
		dp_tx_plug_flush(dp_tx_plugged(s->se->ep));
		if (wait_event_killable(s->se->wq, dp_snd_next_ready(s)))
			return -EINTR;
	}
	if (step == DP_STEP_SEND && last)
		wake_up_all(&s->se->wq);	/* others' turn */
	return err;
}

/*
 * A large message could not be sent whole (EFAULT, no memory, a fatal
 * signal, the session failed or the edge went): its first fragments are
 * out and cannot be taken back, so its session ends (FIN), and the
 * receiver gives the message up; it never sees a part of it.  The
 * session's messages not acknowledged yet are counted undelivered, as
 * when a session fails; the next send opens a new one.  A session that
 * failed with the error @err this write returns has had that error
 * reported now: it is reported once, so the next send opens a new one.
 */
static void dp_snd_abort_msg(struct dp_snd *s, u32 isn, int err)
{
	bool ended = false;
	u32 peer_inc = 0;

	mutex_lock(&s->tx_mutex);
	spin_lock_irq(&s->lock);
	WRITE_ONCE(s->in_msg, false);
	if (!s->dead && s->state == DP_SND_OPEN && s->isn == isn) {
		peer_inc = s->peer_inc;
		dp_snd_set_state(s, DP_SND_IDLE, 0);
		s->fast = false;
		s->recovering = false;
		WRITE_ONCE(s->probe, false);
		ended = true;
	} else if (!s->dead && s->state == DP_SND_FAILED && s->isn == isn &&
		   s->err == err) {
		dp_snd_set_state(s, DP_SND_IDLE, 0);
	}
	spin_unlock_irq(&s->lock);
	if (ended) {
		dp_snd_reclaim(s, true);
		dp_snd_ctrl(s, DP_WT_RESET, DP_WF_FIN, isn, peer_inc);
	}
	mutex_unlock(&s->tx_mutex);
	wake_up_all(&s->se->wq);
}

/*
 * A message larger than a frame (docs/reliability.md, "Large messages"):
 * the first fragment waits for the session and the whole message's
 * credit as a whole message would (O_NONBLOCK: EAGAIN); each next one is
 * copied and sent as the window allows.
 */
static int dp_snd_send_large(struct dp_snd *s, const void __user *buf,
			     u32 len, u32 frame, bool nonblock)
{
	u32 i, n = dp_frag_count(len, frame), isn;
	struct dp_txmsg *m;
	int err;

	m = dp_snd_copy(s, buf, len, frame, 0);
	if (IS_ERR(m))
		return PTR_ERR(m);
	err = dp_snd_start(s, m, len, nonblock, &isn);
	if (err) {
		dp_snd_put(s, m);
		return err;
	}
	for (i = 1; i < n; i++) {
		m = dp_snd_copy(s, buf, len, frame, i);
		if (IS_ERR(m)) {
			err = PTR_ERR(m);
			break;
		}
		err = dp_snd_next(s, m, isn);
		if (err) {
			dp_snd_put(s, m);
			break;
		}
	}
	if (err)
		dp_snd_abort_msg(s, isn, err);
	return err;
}

/* A reliable send on @s; the caller holds a reference to its edge. */
int dp_snd_send(struct dp_snd *s, const void __user *buf, size_t len,
		bool nonblock)
{
	u32 frame = dp_max_msg(s->se->node), isn;
	struct dp_txmsg *m;
	int err;

	if (len > frame)
		return dp_snd_send_large(s, buf, len, frame, nonblock);
	m = dp_snd_copy(s, buf, len, frame, 0);
	if (IS_ERR(m))
		return PTR_ERR(m);
	err = dp_snd_start(s, m, len, nonblock, &isn);
	if (err)
		dp_snd_put(s, m);
	return err;
}

/*
 * The messages up to @ack1 are acknowledged: an RTT sample from the newest
 * one, if it was sent once and the receiver did not hold it (the ACK that
 * covers a held message comes when the hole before it is repaired, a
 * repair later than the message: such samples grew the RTO to hundreds of
 * ms under 5% loss), which may also prove a timeout spurious
 * (dp_snd_frto()); returns what they weigh in the window.
 */
static u32 dp_snd_rtt(struct dp_snd *s, u32 ack1)
{
	struct dp_txmsg *m, *last = NULL;
	u32 bytes = 0;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(m, &s->unacked, node) {
		if (!dp_seq_before(m->seq, ack1))
			break;
		if (!dp_seq_before(m->seq, s->snd_una)) {
			last = m;
			bytes += m->wt;
		}
	}
	if (last && !READ_ONCE(last->resent) && !READ_ONCE(last->sacked)) {
		dp_rtt_sample(&s->rtt, div_u64(ktime_get_ns() - last->sent_ns, 1000),
			      dp_rto_min_us(), dp_rto_max_us());
		dp_snd_frto(s, last->seq);
	} else {
		s->rtt.backoff = 0;
	}
	return bytes;
}

/*
 * Whether @seq lies in this session: from its ISN to snd_nxt, both ends
 * included.  Frames of an older session of the same two incarnations (an
 * ETIMEDOUT, a disconnect and connect) carry numbers from another random
 * ISN and fall outside.  Caller holds s->lock.
 */
static bool dp_snd_in_session(const struct dp_snd *s, u32 seq)
{
	lockdep_assert_held(&s->lock);
	return !dp_seq_before(seq, s->isn) && !dp_seq_before(s->snd_nxt, seq);
}

/*
 * The receiver announced a smaller largest message than before (its
 * link's frame grew, or its NIC went): is the oldest message in flight a
 * large one it now refuses?  Its first fragment would be dropped on every
 * retransmission while the receiver's answers keep the session alive, so
 * the session fails with EMSGSIZE instead.  Caller holds s->lock.
 */
static bool dp_snd_head_refused(const struct dp_snd *s)
{
	const struct dp_txmsg *m;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(m, &s->unacked, node) {
		if (dp_seq_before(m->seq, s->snd_una))
			continue;	/* acknowledged, not yet taken back */
		return m->flags == DP_WF_FRAG_FIRST &&
		       dp_frag_total(m->data) > s->peer_max;
	}
	return false;
}

/*
 * The session's ack and credit; caller holds s->lock.  Wake writers?  An
 * ack outside the session is a stale frame: it is neither a sign of life
 * nor a credit of this session.
 */
static bool dp_snd_update(struct dp_snd *s, const struct dp_msg_hdr *h,
			  const u8 *sack)
{
	u32 ack1 = h->ack + 1;
	bool acked = false, granted = false, shrank = false, pending;

	lockdep_assert_held(&s->lock);
	if (!dp_snd_in_session(s, ack1))
		return false;
	s->last_heard = jiffies;
	if (h->type == DP_WT_ACK && h->seq) {
		shrank = h->seq < s->peer_max;
		WRITE_ONCE(s->peer_max, h->seq);
	}
	if (dp_seq_before(s->snd_una, ack1) && !dp_seq_before(s->snd_nxt, ack1)) {
		u32 bytes = dp_snd_rtt(s, ack1);

		dp_cwnd_acked(s, bytes);
		WRITE_ONCE(s->snd_una, ack1);
		WRITE_ONCE(s->una_bytes, s->una_bytes + bytes);
		acked = true;	/* the window moved */
	}
	if (ack1 == s->snd_una)
		dp_snd_sacked(s, sack);
	dp_snd_undo(s, h);
	if (shrank && dp_snd_head_refused(s)) {
		dp_snd_fail(s, -EMSGSIZE);
		return true;
	}
	if (dp_seq_before(s->credit, h->credit)) {
		WRITE_ONCE(s->credit, h->credit);
		/*
		 * A grant too small for the message a writer waits with keeps
		 * the probing on: otherwise the session idles, gives the bit
		 * back, and poll() reports POLLOUT for a write that only gets
		 * EAGAIN, again after every probe.
		 */
		if (dp_credit_allows(s->snd_space + s->want, s->credit))
			WRITE_ONCE(s->probe, false);
		WRITE_ONCE(s->returned, false);
		granted = true;
	}
	/*
	 * Progress restarts the clock: the RTO's while something is still
	 * owed, else the idle one.  Credit alone restarts only the idle clock
	 * (with data in flight it must not put a retransmission off): a
	 * re-grant after the last message was acknowledged, unused, is given
	 * back like the rest, or it would stay with this sender for good.
	 */
	pending = dp_snd_pending(s);
	if (acked && pending)
		dp_snd_arm(s, jiffies + dp_snd_timeout(s));
	else if ((acked || granted) && !pending)
		dp_snd_arm(s, dp_snd_idle_at());
	if (acked && s->recovering) {
		if (dp_seq_before(s->snd_una, s->recover)) {
			s->refill = true;	/* the window moved: the next ones */
			dp_snd_kick(s);
		} else {
			s->recovering = false;	/* all sent before it are in */
		}
	}
	if ((h->flags & DP_WF_GAP) && s->snd_una != s->snd_nxt) {
		s->fast = true;
		dp_snd_kick(s);
	}
	return acked || granted;
}

/*
 * An ACK (or a piggy-backed one on DATA) from the receiver of our edge, to
 * this incarnation of the endpoint.  MDR context, RCU held.
 */
void dp_snd_ack(struct dp_snd *s, const struct dp_msg_hdr *h, const void *sack)
{
	unsigned long flags;
	bool wake = false;

	if (!(h->flags & DP_WF_ACK))
		return;
	spin_lock_irqsave(&s->lock, flags);
	if (s->dead)
		goto out;
	if (s->state == DP_SND_HELLO && h->type == DP_WT_ACK &&
	    h->ack == s->isn - 1) {
		dp_snd_set_state(s, DP_SND_OPEN, 0);	/* the HELLO's answer */
		s->peer_inc = h->src_inc;
		WRITE_ONCE(s->credit, h->credit);
		/* nothing in flight yet: the idle clock, not the HELLO's */
		dp_snd_arm(s, dp_snd_idle_at());
		wake = true;
	}
	if (s->state == DP_SND_OPEN && h->src_inc == s->peer_inc)
		wake |= dp_snd_update(s, h, sack);
out:
	spin_unlock_irqrestore(&s->lock, flags);
	if (wake && wq_has_sleeper(&s->se->wq))
		wake_up_all(&s->se->wq);
}

/*
 * Whether a RESET answers a frame of the current session: its seq echoes
 * that frame's (a HELLO's ISN; a DATA's or a probe's seq; a closing
 * receiver's next expected seq).  A RESET that answered an older session
 * (a receiver that restarted answers each stale DATA) must not fail the
 * one opened since.  Caller holds s->lock.
 */
static bool dp_snd_reset_fits(const struct dp_snd *s, const struct dp_msg_hdr *h)
{
	lockdep_assert_held(&s->lock);
	if (s->dead)
		return false;
	if (s->state == DP_SND_HELLO)
		return h->seq == s->isn;
	return s->state == DP_SND_OPEN && dp_snd_in_session(s, h->seq);
}

/*
 * Why a fitting RESET ends the session: a refused HELLO (no ack in it) for
 * the receiver's admission rule, ECONNREFUSED, or for the room its sender
 * table keeps for our user and node, EUSERS; else ECONNRESET.
 */
static int dp_snd_reset_err(const struct dp_snd *s, const struct dp_msg_hdr *h)
{
	if (s->state != DP_SND_HELLO || (h->flags & DP_WF_ACK))
		return -ECONNRESET;
	return h->flags & DP_WF_BUSY ? -EUSERS : -ECONNREFUSED;
}

/*
 * The receiver has no such session (it restarted, or closed): ECONNRESET;
 * or it refused our HELLO (admission): ECONNREFUSED.  A closing receiver's
 * RESET carries its final ack (DP_WF_ACK); a refusal carries none.  To
 * this incarnation of the endpoint; RCU held.
 */
void dp_snd_reset(struct dp_snd *s, const struct dp_msg_hdr *h)
{
	bool closed = h->flags & DP_WF_ACK;
	unsigned long flags;
	bool wake = false;

	spin_lock_irqsave(&s->lock, flags);
	if (dp_snd_reset_fits(s, h)) {
		/* from a new incarnation of the receiver: it restarted */
		if (s->peer_inc && h->src_inc != s->peer_inc)
			dp_event_peer(s->se->ep, &s->to);
		/* A receiver that closes acknowledges what it got first. */
		if (s->state == DP_SND_OPEN && closed && h->src_inc == s->peer_inc)
			dp_snd_update(s, h, NULL);
		dp_snd_fail(s, dp_snd_reset_err(s, h));
		wake = true;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (wake)
		wake_up_all(&s->se->wq);
}

/*
 * The edge leaves its endpoint (disconnect, close): no timer or work runs
 * after this; an open session's receiver is told (FIN).  Process context,
 * the endpoint's lock held.
 */
void dp_snd_stop(struct dp_snd *s)
{
	u32 peer_inc = 0, isn;

	lockdep_assert_held(s->se->ep_lock);
	spin_lock_irq(&s->lock);
	WRITE_ONCE(s->dead, true);
	if (s->state == DP_SND_OPEN)
		peer_inc = s->peer_inc;
	isn = s->isn;
	spin_unlock_irq(&s->lock);
	del_timer_sync(&s->timer);
	cancel_work_sync(&s->work);
	wake_up_all(&s->se->wq);
	if (peer_inc)
		dp_snd_ctrl(s, DP_WT_RESET, DP_WF_FIN, isn, peer_inc);
}

/*
 * The session as dpctl shows it: every field read under s->lock, so the
 * numbers agree with each other.  Any context; the caller keeps @s alive
 * (a reference, or RCU: a removed edge is freed after a grace period).
 */
void dp_snd_info(struct dp_snd *s, struct dp_snd_info *si)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	si->state = s->state;
	si->err = s->state == DP_SND_FAILED ? -s->err : 0;
	si->isn = s->isn;
	si->snd_una = s->snd_una;
	si->snd_nxt = s->snd_nxt;
	si->credit_left = dp_seq_diff(s->credit, s->snd_space);
	si->cwnd = s->cwnd;
	si->rto_ms = dp_rtt_timeout(&s->rtt, dp_rto_max_us()) / 1000;
	si->backoff = s->rtt.backoff;
	si->heard_ms = jiffies_to_msecs(jiffies - s->last_heard);
	si->timeouts = s->timeouts;
	si->undone = s->undone;
	spin_unlock_irqrestore(&s->lock, flags);
}

/* Messages sent on an open session and not acknowledged yet; lockless. */
u32 dp_snd_unacked(struct dp_snd *s)
{
	if (READ_ONCE(s->state) != DP_SND_OPEN)
		return 0;
	return (u32)(READ_ONCE(s->snd_nxt) - READ_ONCE(s->snd_una));
}

/*
 * Last reference: free the copies, counting those never acknowledged, and
 * unpair the edge from its peer's rx peer, which must not point at it
 * once it is freed.
 */
void dp_snd_release(struct dp_snd *s)
{
	mutex_lock(&s->tx_mutex);
	dp_snd_reclaim(s, true);
	dp_rcv_unpair(s->se->rcv, &s->pair);
	mutex_unlock(&s->tx_mutex);
	dp_snd_trim(s);
}
