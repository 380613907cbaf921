// SPDX-License-Identifier: GPL-2.0
/*
 * Sender sessions (docs/reliability.md, section 4): one per edge.  A send
 * opens a session with HELLO, waits for credit, keeps the one kernel copy
 * of the message until it is acknowledged, and transmits it.  ACKs from
 * the MDR advance the window; the timer retransmits (go-back-N, with
 * backoff), probes a closed window, and fails a session whose peer stayed
 * silent past unreach_ms.
 *
 * Contexts: sends and the edge's work run in process context under
 * e->tx_mutex and are the only ones to transmit or change the unacked
 * list; the MDR (any context) and the timer only take e->lock, change
 * numbers and queue the work.
 */
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dp.h"

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

static unsigned long dp_snd_timeout(struct dp_edge *e)
{
	lockdep_assert_held(&e->lock);
	return usecs_to_jiffies(dp_rtt_timeout(&e->rtt, dp_rto_max_us())) ?: 1;
}

/* (Re)arm the timer; never once the edge is dead.  Caller holds e->lock. */
static void dp_snd_arm(struct dp_edge *e, unsigned long when)
{
	lockdep_assert_held(&e->lock);
	e->deadline = when;
	if (!e->dead)
		mod_timer(&e->timer, when);
}

/* When an idle session gives its unused credit back, from now. */
static unsigned long dp_snd_idle_at(void)
{
	return jiffies + msecs_to_jiffies(READ_ONCE(dp_credit_idle_ms));
}

/* Have the work run soon.  Caller holds e->lock. */
static void dp_snd_kick(struct dp_edge *e)
{
	lockdep_assert_held(&e->lock);
	if (!e->dead)
		queue_work(dp_wq, &e->work);
}

/* The session ends with @err; the work frees its copies.  Holds e->lock. */
static void dp_snd_fail(struct dp_edge *e, int err)
{
	lockdep_assert_held(&e->lock);
	e->state = DP_SND_FAILED;
	e->err = err;
	e->fast = false;
	e->probe = false;
	dp_snd_kick(e);
}

/*
 * Congestion window (docs/reliability.md, section 6.1): credit says what
 * the receiver's pool can hold, the window what the path delivers without
 * loss.  Slow start, then one more message per window acknowledged; a
 * reported hole takes a quarter off (reordering looks like one), a timeout
 * restarts from the floor.  Caller holds e->lock.
 */
static void dp_cwnd_acked(struct dp_edge *e, u32 n)
{
	lockdep_assert_held(&e->lock);
	if (e->cwnd < e->ssthresh) {
		e->cwnd += n;
	} else {
		e->cwnd_acc += n;
		if (e->cwnd_acc >= e->cwnd) {
			e->cwnd_acc -= e->cwnd;
			e->cwnd++;
		}
	}
	if (e->cwnd > DP_CWND_MAX)
		e->cwnd = DP_CWND_MAX;
}

static void dp_cwnd_loss(struct dp_edge *e, bool timeout)
{
	lockdep_assert_held(&e->lock);
	e->ssthresh = max(e->cwnd - e->cwnd / 4, DP_CWND_MIN);
	e->cwnd = timeout ? DP_CWND_MIN : e->ssthresh;
	e->cwnd_acc = 0;
}

static bool dp_cwnd_open(const struct dp_edge *e)
{
	return (u32)(READ_ONCE(e->snd_nxt) - READ_ONCE(e->snd_una)) < READ_ONCE(e->cwnd);
}

static void dp_snd_timer(struct timer_list *t)
{
	struct dp_edge *e = from_timer(e, t, timer);
	unsigned long flags;

	spin_lock_irqsave(&e->lock, flags);
	dp_snd_kick(e);
	spin_unlock_irqrestore(&e->lock, flags);
}

static void dp_snd_count_undelivered(struct dp_edge *e, u32 n)
{
	if (!n)
		return;
	atomic64_add(n, &e->ep->tx_undelivered);
	dp_count_add(e->ep->node, DP_CTR_TX_UNDELIVERED, n);
}

/*
 * Free the copies the receiver has acknowledged, or, when the session
 * failed (or the edge is going), all of them, counted as undelivered.
 */
static void dp_snd_reclaim(struct dp_edge *e, bool all)
{
	struct dp_txmsg *m, *tmp;
	LIST_HEAD(done);
	u32 lost = 0;

	lockdep_assert_held(&e->tx_mutex);
	spin_lock_irq(&e->lock);
	all = all || e->state == DP_SND_FAILED;
	list_for_each_entry_safe(m, tmp, &e->unacked, node) {
		if (!all && !dp_seq_before(m->seq, e->snd_una))
			break;
		if (!dp_seq_before(m->seq, e->snd_una))
			lost++;
		list_move_tail(&m->node, &done);
		e->n_unacked--;
	}
	if (all)
		e->snd_una = e->snd_nxt;
	spin_unlock_irq(&e->lock);
	list_for_each_entry_safe(m, tmp, &done, node)
		kfree(m);
	dp_snd_count_undelivered(e, lost);
}

/*
 * A control frame of this edge's session, @seq naming the session: HELLO
 * (the ISN), probe (snd_nxt), FIN (the ISN).
 */
static int dp_snd_ctrl(struct dp_edge *e, u8 type, u16 flags, u32 seq,
		       u32 dst_inc)
{
	struct dp_msg_hdr h;

	dp_tx_hdr(e->ep, &h, type, &e->to);
	h.flags = flags;
	h.seq = seq;
	h.dst_inc = dst_inc;
	return dp_tx_frame(e->ep->node, &h, NULL);
}

/* Give the receiver back every credit beyond @space (what we have sent). */
static int dp_snd_return(struct dp_edge *e, u32 space, u32 peer_inc)
{
	struct dp_msg_hdr h;

	dp_tx_hdr(e->ep, &h, DP_WT_ACK, &e->to);
	h.flags = DP_WF_RETURN;
	h.credit = space;
	h.dst_inc = peer_inc;
	return dp_tx_frame(e->ep->node, &h, NULL);
}

/*
 * One DATA frame from its copy, with a piggy-backed ack if one is owed.
 * If the frame does not leave, the ack it carried is owed again.
 */
static int dp_snd_xmit(struct dp_edge *e, struct dp_txmsg *m, u32 peer_inc)
{
	struct dp_msg_hdr h;
	int err;

	lockdep_assert_held(&e->tx_mutex);
	dp_tx_hdr(e->ep, &h, DP_WT_DATA, &e->to);
	h.len = m->len;
	h.seq = m->seq;
	h.dst_inc = peer_inc;
	dp_rcv_piggyback(e->ep, &h, peer_inc);
	err = dp_tx_frame(e->ep->node, &h, m->data);
	if (err && (h.flags & DP_WF_ACK))
		dp_rcv_unpiggyback(e->ep, &h);
	return err;
}

/* Resend the first unacknowledged message (a hole the receiver reported). */
static void dp_snd_resend_first(struct dp_edge *e, u32 peer_inc)
{
	struct dp_txmsg *m;
	u32 una;

	lockdep_assert_held(&e->tx_mutex);
	una = READ_ONCE(e->snd_una);
	list_for_each_entry(m, &e->unacked, node) {
		if (dp_seq_before(m->seq, una))
			continue;
		if (m->seq != una)
			break;
		WRITE_ONCE(m->resent, true);
		if (!dp_snd_xmit(e, m, peer_inc)) {
			atomic64_inc(&e->ep->tx_retrans);
			dp_count(e->ep->node, DP_CTR_TX_RETRANS);
		}
		break;
	}
}

/*
 * Go back (timeout): send the unacknowledged messages again, in order, as
 * many as the congestion window allows; holes further on are reported by
 * the receiver and resent one by one, or go at the next timeout.
 */
static void dp_snd_goback(struct dp_edge *e, u32 peer_inc)
{
	u32 una, n = 0, max = READ_ONCE(e->cwnd);
	struct dp_txmsg *m;

	lockdep_assert_held(&e->tx_mutex);
	una = READ_ONCE(e->snd_una);
	/* The list only changes under tx_mutex, which we hold. */
	list_for_each_entry(m, &e->unacked, node) {
		if (dp_seq_before(m->seq, una))
			continue;	/* acknowledged, not freed yet */
		if (n >= max)
			break;
		WRITE_ONCE(m->resent, true);
		if (dp_snd_xmit(e, m, peer_inc))
			break;		/* the timer tries again */
		n++;
	}
	atomic64_add(n, &e->ep->tx_retrans);
	dp_count_add(e->ep->node, DP_CTR_TX_RETRANS, n);
}

enum dp_snd_action {
	DP_SND_NONE, DP_SND_HELLO_AGAIN, DP_SND_GOBACK, DP_SND_RESEND, DP_SND_PROBE,
	DP_SND_RETURN,
};

/*
 * An open session with nothing in flight and nobody waiting: once idle for
 * credit_idle_ms it gives its unused credit back, so an idle sender does
 * not hold pool space other senders need.  Caller holds e->lock.
 */
static enum dp_snd_action dp_snd_idle(struct dp_edge *e, unsigned long now)
{
	lockdep_assert_held(&e->lock);
	if (e->credit == e->snd_space || e->waiters)
		return DP_SND_NONE;	/* nothing to give, or a writer needs it */
	if (time_before(now, e->deadline)) {
		dp_snd_arm(e, e->deadline);
		return DP_SND_NONE;
	}
	e->credit = e->snd_space;
	e->returned = true;
	return DP_SND_RETURN;
}

/* The peer owes the session an answer: a HELLO's, an ACK, a window. */
static bool dp_snd_pending(const struct dp_edge *e)
{
	return e->state == DP_SND_HELLO || e->snd_una != e->snd_nxt || e->probe;
}

/*
 * Silent past unreach_ms since it came to owe us something.  A peer that
 * had nothing to answer for a while (an idle session) was not silent: the
 * clock starts at the later of the last frame heard and the moment the
 * wait began.  Caller holds e->lock.
 */
static bool dp_snd_unreachable(const struct dp_edge *e, unsigned long now)
{
	unsigned long since = e->last_heard;

	if (time_after(e->wait_since, since))
		since = e->wait_since;
	return time_after(now, since + msecs_to_jiffies(READ_ONCE(dp_unreach_ms)));
}

/*
 * The timer ran more than half of unreach_ms past its deadline: this
 * host did not run us meanwhile (a guest its host did not schedule, a
 * machine that was suspended).  Nothing was resent and nothing received
 * in that time, so it is not the peer's silence.  Caller holds e->lock.
 */
static bool dp_snd_stalled(const struct dp_edge *e, unsigned long now)
{
	return time_after(now, e->deadline +
			  msecs_to_jiffies(READ_ONCE(dp_unreach_ms) / 2));
}

/* What the timer or a gap report asks for now.  Caller holds e->lock. */
static enum dp_snd_action dp_snd_due(struct dp_edge *e)
{
	unsigned long now = jiffies;

	lockdep_assert_held(&e->lock);
	if (e->dead || (e->state != DP_SND_HELLO && e->state != DP_SND_OPEN))
		return DP_SND_NONE;
	if (!dp_snd_pending(e))
		return dp_snd_idle(e, now);
	if (dp_snd_stalled(e, now))
		e->wait_since = now;	/* the peer's silence counts from now */
	if (dp_snd_unreachable(e, now)) {
		dp_snd_fail(e, -ETIMEDOUT);
		return DP_SND_NONE;
	}
	if (e->fast) {
		/*
		 * The receiver holds what came after the hole: resend only the
		 * first message missing, once per hole (a lost resend is the
		 * timer's), and restart the clock.
		 */
		e->fast = false;
		if (e->snd_una != e->snd_nxt && e->snd_una != e->fast_seq) {
			e->fast_seq = e->snd_una;
			dp_cwnd_loss(e, false);
			dp_snd_arm(e, now + dp_snd_timeout(e));
			return DP_SND_RESEND;
		}
	}
	if (time_before(now, e->deadline)) {
		dp_snd_arm(e, e->deadline);
		return DP_SND_NONE;
	}
	dp_rtt_backoff(&e->rtt);
	dp_snd_arm(e, now + dp_snd_timeout(e));
	if (e->state == DP_SND_HELLO)
		return DP_SND_HELLO_AGAIN;
	if (e->snd_una == e->snd_nxt)
		return DP_SND_PROBE;
	dp_cwnd_loss(e, true);
	return DP_SND_GOBACK;
}

static void dp_snd_work_fn(struct work_struct *work)
{
	struct dp_edge *e = container_of(work, struct dp_edge, work);
	enum dp_snd_action act;
	u32 peer_inc, isn, nxt, space;
	bool failed;

	mutex_lock(&e->tx_mutex);
	dp_snd_reclaim(e, false);
	spin_lock_irq(&e->lock);
	act = dp_snd_due(e);
	peer_inc = e->peer_inc;
	isn = e->isn;
	nxt = e->snd_nxt;
	space = e->snd_space;
	failed = e->state == DP_SND_FAILED;
	spin_unlock_irq(&e->lock);
	if (failed)
		dp_snd_reclaim(e, true);
	if (act == DP_SND_HELLO_AGAIN)
		dp_snd_ctrl(e, DP_WT_HELLO, 0, isn, 0);
	else if (act == DP_SND_GOBACK)
		dp_snd_goback(e, peer_inc);
	else if (act == DP_SND_RESEND)
		dp_snd_resend_first(e, peer_inc);
	else if (act == DP_SND_PROBE)
		dp_snd_ctrl(e, DP_WT_ACK, DP_WF_PROBE, nxt, peer_inc);
	else if (act == DP_SND_RETURN)
		dp_snd_return(e, space, peer_inc);
	mutex_unlock(&e->tx_mutex);
	/*
	 * A failure ends the writers' wait; a credit return makes the edge
	 * writable for poll() (the next write asks for a window at once).
	 */
	if (failed || act == DP_SND_RETURN)
		wake_up_interruptible_all(&e->ep->tx_wq);
}

void dp_snd_init(struct dp_edge *e)
{
	mutex_init(&e->tx_mutex);
	spin_lock_init(&e->lock);
	INIT_LIST_HEAD(&e->unacked);
	timer_setup(&e->timer, dp_snd_timer, 0);
	INIT_WORK(&e->work, dp_snd_work_fn);
	e->state = DP_SND_IDLE;
}

/*
 * IDLE -> HELLO: a new session with a random ISN.  Holds tx_mutex.  The
 * copies of the session before are freed first: a RESET that failed it
 * between a send's reclaim and its admit left them on the list, and the
 * new session must neither resend nor count them.
 */
static int dp_snd_open(struct dp_edge *e)
{
	u32 isn = get_random_u32();
	int err;

	lockdep_assert_held(&e->tx_mutex);
	dp_snd_reclaim(e, true);
	spin_lock_irq(&e->lock);
	e->isn = isn;
	e->snd_nxt = isn;
	e->snd_una = isn;
	e->snd_space = 0;
	e->credit = 0;
	e->peer_inc = 0;
	e->peer_max = 0;
	e->fast = false;
	e->fast_seq = isn - 1;
	e->cwnd = DP_CWND_INIT;
	e->ssthresh = DP_CWND_MAX;
	e->cwnd_acc = 0;
	e->probe = false;
	e->want = 0;
	e->returned = false;
	dp_rtt_init(&e->rtt, DP_RTO_INIT_US, dp_rto_min_us(), dp_rto_max_us());
	e->last_heard = jiffies;
	e->wait_since = e->last_heard;
	e->state = DP_SND_HELLO;
	dp_snd_arm(e, jiffies + dp_snd_timeout(e));
	spin_unlock_irq(&e->lock);
	err = dp_snd_ctrl(e, DP_WT_HELLO, 0, isn, 0);
	if (err) {	/* no NIC, no route: say so now, as v1 did */
		spin_lock_irq(&e->lock);
		e->state = DP_SND_IDLE;
		spin_unlock_irq(&e->lock);
	}
	return err;
}

/*
 * Whether a send of @space bytes of pool space can go ahead now, or must
 * return at once (an error to report, the session to open).  Lockless:
 * the sender checks again under e->lock.
 */
static bool dp_snd_ready(struct dp_edge *e, u32 space)
{
	u8 state = READ_ONCE(e->state);

	if (READ_ONCE(e->dead) || state == DP_SND_FAILED || state == DP_SND_IDLE)
		return true;
	return state == DP_SND_OPEN && dp_cwnd_open(e) &&
	       dp_credit_allows(READ_ONCE(e->snd_space) + space, READ_ONCE(e->credit));
}

/*
 * For poll: EPOLLOUT when a send of the largest message would not wait,
 * or when the session gave its credit back while idle (a write asks for a
 * window at once; until it comes, the probe pending makes this false).
 */
bool dp_snd_writable(struct dp_edge *e, int *err)
{
	u32 max = READ_ONCE(e->peer_max), want = READ_ONCE(e->want);

	*err = READ_ONCE(e->state) == DP_SND_FAILED ? READ_ONCE(e->err) : 0;
	if (READ_ONCE(e->returned) && !READ_ONCE(e->probe))
		return true;
	if (max > dp_max_msg(e->ep->node))
		max = dp_max_msg(e->ep->node);
	/* ... or when the message the writer could not send now fits */
	return dp_snd_ready(e, DP_TOKEN_SPACE(max)) || (want && dp_snd_ready(e, want));
}

enum dp_snd_step {
	DP_STEP_SEND, DP_STEP_OPEN, DP_STEP_PROBE, DP_STEP_WAIT, DP_STEP_ERR,
};

/*
 * Under e->lock: queue @m with the next seq if the credit allows, else say
 * what to do.  @err gets the errno of DP_STEP_ERR.
 */
static enum dp_snd_step dp_snd_admit(struct dp_edge *e, struct dp_txmsg *m,
				     int *err)
{
	lockdep_assert_held(&e->lock);
	if (e->dead) {
		*err = -ENOTCONN;
		return DP_STEP_ERR;
	}
	switch (e->state) {
	case DP_SND_FAILED:
		*err = e->err;		/* reported once */
		e->state = DP_SND_IDLE;
		return DP_STEP_ERR;
	case DP_SND_IDLE:
		return DP_STEP_OPEN;
	case DP_SND_HELLO:
		return DP_STEP_WAIT;
	}
	if (m->len > e->peer_max) {
		*err = -EMSGSIZE;
		return DP_STEP_ERR;
	}
	/* What follows makes the peer owe an answer: its silence counts now. */
	if (!dp_snd_pending(e))
		e->wait_since = jiffies;
	if (!dp_cwnd_open(e))
		return DP_STEP_WAIT;	/* acknowledgements open it (or the timer) */
	if (!dp_credit_allows(e->snd_space + m->space, e->credit)) {
		e->want = m->space;
		if (e->probe)
			return DP_STEP_WAIT;
		/* the timer probes again: a lost window update must not stall us */
		e->probe = true;
		if (e->snd_una != e->snd_nxt)
			return DP_STEP_WAIT;	/* its ACKs will bring credit */
		dp_snd_arm(e, jiffies + dp_snd_timeout(e));
		return DP_STEP_PROBE;	/* idle (credit given back): ask now */
	}
	m->seq = e->snd_nxt++;
	e->want = 0;
	m->sent_ns = ktime_get_ns();
	e->snd_space += m->space;
	list_add_tail(&m->node, &e->unacked);
	e->n_unacked++;
	if (m->seq == e->snd_una)	/* the window was empty: start the clock */
		dp_snd_arm(e, jiffies + dp_snd_timeout(e));
	return DP_STEP_SEND;
}

/*
 * Undo dp_snd_admit() of the newest message: it never left.  A peer that
 * acknowledged it all the same (it cannot have had it) must not leave
 * snd_una past snd_nxt, which would close the window for good.
 */
static void dp_snd_unqueue(struct dp_edge *e, struct dp_txmsg *m)
{
	spin_lock_irq(&e->lock);
	list_del(&m->node);
	e->n_unacked--;
	e->snd_nxt--;
	e->snd_space -= m->space;
	if (dp_seq_before(e->snd_nxt, e->snd_una))
		e->snd_una = e->snd_nxt;
	spin_unlock_irq(&e->lock);
}

/*
 * First transmission, tx_mutex held.  An error that says the message can
 * never leave (no NIC, no route, too big for the NIC) is returned with the
 * message taken back; a passing one (a full NIC queue) leaves it to the
 * retransmission timer and the send succeeds.
 */
static int dp_snd_first(struct dp_edge *e, struct dp_txmsg *m, u32 peer_inc)
{
	int err = dp_snd_xmit(e, m, peer_inc);

	if (err == -ENETDOWN || err == -EHOSTUNREACH || err == -EMSGSIZE) {
		dp_snd_unqueue(e, m);
		return err;
	}
	return 0;
}

static struct dp_txmsg *dp_snd_copy(const void __user *buf, size_t len)
{
	struct dp_txmsg *m = kmalloc(struct_size(m, data, len), GFP_KERNEL_ACCOUNT);

	if (!m)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(m->data, buf, len)) {
		kfree(m);
		return ERR_PTR(-EFAULT);
	}
	m->len = len;
	m->space = DP_TOKEN_SPACE(len);
	m->resent = false;
	return m;
}

/*
 * Wait for credit (or an error to report) with no lock held, or for the
 * session to leave @state, the state dp_snd_admit() saw: a writer that
 * waited through the HELLO must look again once the session is open (with
 * too little credit it probes; the ready test alone would wait for a
 * window nobody asks for).  While a writer waits the session keeps its
 * credit (no return on idle).
 */
static int dp_snd_wait(struct dp_edge *e, u32 space, u8 state, bool nonblock,
		       bool *counted)
{
	struct dp_endpoint *ep = e->ep;
	int err;

	if (!*counted) {
		atomic64_inc(&ep->tx_blocked);
		*counted = true;
	}
	if (nonblock)
		return -EAGAIN;
	spin_lock_irq(&e->lock);
	e->waiters++;
	spin_unlock_irq(&e->lock);
	err = wait_event_interruptible(ep->tx_wq, dp_snd_ready(e, space) ||
				       READ_ONCE(e->state) != state);
	spin_lock_irq(&e->lock);
	e->waiters--;
	spin_unlock_irq(&e->lock);
	return err;
}

/* A reliable send on @e; the caller holds a reference to it. */
int dp_snd_send(struct dp_endpoint *ep, struct dp_edge *e,
		const void __user *buf, size_t len, bool nonblock)
{
	struct dp_txmsg *m = dp_snd_copy(buf, len);
	enum dp_snd_step step;
	bool counted = false;
	u32 peer_inc, nxt;
	int err = 0;
	u8 state;

	if (IS_ERR(m))
		return PTR_ERR(m);
	for (;;) {
		if (mutex_lock_interruptible(&e->tx_mutex)) {
			err = -ERESTARTSYS;
			break;
		}
		dp_snd_reclaim(e, false);
		spin_lock_irq(&e->lock);
		step = dp_snd_admit(e, m, &err);
		peer_inc = e->peer_inc;
		nxt = e->snd_nxt;
		state = e->state;
		spin_unlock_irq(&e->lock);
		if (step == DP_STEP_SEND) {
			err = dp_snd_first(e, m, peer_inc);
			mutex_unlock(&e->tx_mutex);
			if (!err)
				return 0;	/* the copy is the edge's now */
			break;
		}
		if (step == DP_STEP_OPEN)
			err = dp_snd_open(e);
		if (step == DP_STEP_PROBE)
			dp_snd_ctrl(e, DP_WT_ACK, DP_WF_PROBE, nxt, peer_inc);
		mutex_unlock(&e->tx_mutex);
		if (step == DP_STEP_ERR || err)
			break;
		if (step == DP_STEP_WAIT || step == DP_STEP_PROBE) {
			err = dp_snd_wait(e, m->space, state, nonblock, &counted);
			if (err)
				break;
		}
	}
	kfree(m);
	return err;
}

/* An RTT sample from the newest message @ack covers that was sent once. */
static void dp_snd_rtt(struct dp_edge *e, u32 ack1)
{
	struct dp_txmsg *m, *last = NULL;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(m, &e->unacked, node) {
		if (!dp_seq_before(m->seq, ack1))
			break;
		if (!dp_seq_before(m->seq, e->snd_una))
			last = m;
	}
	if (last && !READ_ONCE(last->resent))
		dp_rtt_sample(&e->rtt, div_u64(ktime_get_ns() - last->sent_ns, 1000),
			      dp_rto_min_us(), dp_rto_max_us());
	else
		e->rtt.backoff = 0;
}

/*
 * Whether @seq lies in this session: from its ISN to snd_nxt, both ends
 * included.  Frames of an older session of the same two incarnations (an
 * ETIMEDOUT, a disconnect and connect) carry numbers from another random
 * ISN and fall outside.  Caller holds e->lock.
 */
static bool dp_snd_in_session(const struct dp_edge *e, u32 seq)
{
	lockdep_assert_held(&e->lock);
	return !dp_seq_before(seq, e->isn) && !dp_seq_before(e->snd_nxt, seq);
}

/*
 * The session's ack and credit; caller holds e->lock.  Wake writers?  An
 * ack outside the session is a stale frame: it is neither a sign of life
 * nor a credit of this session.
 */
static bool dp_snd_update(struct dp_edge *e, const struct dp_msg_hdr *h)
{
	u32 ack1 = h->ack + 1;
	bool acked = false, granted = false, pending;

	lockdep_assert_held(&e->lock);
	if (!dp_snd_in_session(e, ack1))
		return false;
	e->last_heard = jiffies;
	if (h->type == DP_WT_ACK && h->seq)
		e->peer_max = h->seq;
	if (dp_seq_before(e->snd_una, ack1) && !dp_seq_before(e->snd_nxt, ack1)) {
		dp_snd_rtt(e, ack1);
		dp_cwnd_acked(e, ack1 - e->snd_una);
		e->snd_una = ack1;
		acked = true;	/* the window moved */
	}
	if (dp_seq_before(e->credit, h->credit)) {
		e->credit = h->credit;
		/*
		 * A grant too small for the message a writer waits with keeps
		 * the probing on: otherwise the session idles, gives the bit
		 * back, and poll() reports POLLOUT for a write that only gets
		 * EAGAIN, again after every probe.
		 */
		if (dp_credit_allows(e->snd_space + e->want, e->credit))
			e->probe = false;
		e->returned = false;
		granted = true;
	}
	/*
	 * Progress restarts the clock: the RTO's while something is still
	 * owed, else the idle one.  Credit alone restarts only the idle clock
	 * (with data in flight it must not put a retransmission off): a
	 * re-grant after the last message was acknowledged, unused, is given
	 * back like the rest, or it would stay with this sender for good.
	 */
	pending = dp_snd_pending(e);
	if (acked && pending)
		dp_snd_arm(e, jiffies + dp_snd_timeout(e));
	else if ((acked || granted) && !pending)
		dp_snd_arm(e, dp_snd_idle_at());
	if ((h->flags & DP_WF_GAP) && e->snd_una != e->snd_nxt) {
		e->fast = true;
		dp_snd_kick(e);
	}
	return acked || granted;
}

/*
 * An ACK (or a piggy-backed one on DATA) from the receiver of our edge to
 * {h->src_nid, h->src_dpid}.  MDR context, RCU held.
 */
void dp_snd_ack(struct dp_endpoint *ep, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = { .nid = h->src_nid, .dpid = h->src_dpid };
	struct dp_edge *e = dp_edge_find(ep, &from);
	unsigned long flags;
	bool wake = false;

	if (!e || !(h->flags & DP_WF_ACK) || h->dst_inc != ep->inc)
		return;
	spin_lock_irqsave(&e->lock, flags);
	if (e->dead)
		goto out;
	if (e->state == DP_SND_HELLO && h->type == DP_WT_ACK &&
	    h->ack == e->isn - 1) {
		e->state = DP_SND_OPEN;		/* the HELLO's answer */
		e->peer_inc = h->src_inc;
		e->credit = h->credit;
		/* nothing in flight yet: the idle clock, not the HELLO's */
		dp_snd_arm(e, dp_snd_idle_at());
		wake = true;
	}
	if (e->state == DP_SND_OPEN && h->src_inc == e->peer_inc)
		wake |= dp_snd_update(e, h);
out:
	spin_unlock_irqrestore(&e->lock, flags);
	if (wake && wq_has_sleeper(&ep->tx_wq))
		wake_up_interruptible_all(&ep->tx_wq);
}

/*
 * Whether a RESET answers a frame of the current session: its seq echoes
 * that frame's (a HELLO's ISN; a DATA's or a probe's seq; a closing
 * receiver's next expected seq).  A RESET that answered an older session
 * (a receiver that restarted answers each stale DATA) must not fail the
 * one opened since.  Caller holds e->lock.
 */
static bool dp_snd_reset_fits(const struct dp_edge *e, const struct dp_msg_hdr *h)
{
	lockdep_assert_held(&e->lock);
	if (e->dead)
		return false;
	if (e->state == DP_SND_HELLO)
		return h->seq == e->isn;
	return e->state == DP_SND_OPEN && dp_snd_in_session(e, h->seq);
}

/*
 * The receiver has no such session (it restarted, or closed): ECONNRESET;
 * or it refused our HELLO (admission): ECONNREFUSED.  A closing receiver's
 * RESET carries its final ack (DP_WF_ACK); a refusal carries none.  RCU
 * held.
 */
void dp_snd_reset(struct dp_endpoint *ep, const struct dp_msg_hdr *h)
{
	const struct dp_addr from = { .nid = h->src_nid, .dpid = h->src_dpid };
	struct dp_edge *e = dp_edge_find(ep, &from);
	bool closed = h->flags & DP_WF_ACK;
	unsigned long flags;
	bool wake = false;

	if (!e || h->dst_inc != ep->inc)
		return;
	spin_lock_irqsave(&e->lock, flags);
	if (dp_snd_reset_fits(e, h)) {
		/* A receiver that closes acknowledges what it got first. */
		if (e->state == DP_SND_OPEN && closed && h->src_inc == e->peer_inc)
			dp_snd_update(e, h);
		dp_snd_fail(e, e->state == DP_SND_HELLO && !closed ?
			    -ECONNREFUSED : -ECONNRESET);
		wake = true;
	}
	spin_unlock_irqrestore(&e->lock, flags);
	if (wake)
		wake_up_interruptible_all(&ep->tx_wq);
}

/*
 * The edge leaves its endpoint (disconnect, close): no timer or work runs
 * after this.  @goodbye: tell an open session's receiver (FIN).  Process
 * context, ep->lock held.
 */
void dp_snd_stop(struct dp_edge *e, bool goodbye)
{
	u32 peer_inc = 0, isn;

	lockdep_assert_held(&e->ep->lock);
	spin_lock_irq(&e->lock);
	e->dead = true;
	if (e->state == DP_SND_OPEN)
		peer_inc = e->peer_inc;
	isn = e->isn;
	spin_unlock_irq(&e->lock);
	del_timer_sync(&e->timer);
	cancel_work_sync(&e->work);
	wake_up_interruptible_all(&e->ep->tx_wq);
	if (goodbye && peer_inc)
		dp_snd_ctrl(e, DP_WT_RESET, DP_WF_FIN, isn, peer_inc);
}

/*
 * The session as dpctl shows it: every field read under e->lock, so the
 * numbers agree with each other.  Any context; the caller keeps @e alive
 * (a reference, or RCU: a removed edge is freed after a grace period).
 */
void dp_snd_info(struct dp_edge *e, struct dp_snd_info *si)
{
	unsigned long flags;

	spin_lock_irqsave(&e->lock, flags);
	si->state = e->state;
	si->err = e->state == DP_SND_FAILED ? -e->err : 0;
	si->isn = e->isn;
	si->snd_una = e->snd_una;
	si->snd_nxt = e->snd_nxt;
	si->credit_left = dp_seq_diff(e->credit, e->snd_space);
	si->cwnd = e->cwnd;
	si->rto_ms = dp_rtt_timeout(&e->rtt, dp_rto_max_us()) / 1000;
	si->backoff = e->rtt.backoff;
	si->heard_ms = jiffies_to_msecs(jiffies - e->last_heard);
	spin_unlock_irqrestore(&e->lock, flags);
}

/* Last reference: free the copies, counting those never acknowledged. */
void dp_snd_release(struct dp_edge *e)
{
	mutex_lock(&e->tx_mutex);
	dp_snd_reclaim(e, true);
	mutex_unlock(&e->tx_mutex);
}
