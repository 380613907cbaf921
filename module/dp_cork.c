// SPDX-License-Identifier: GPL-2.0
/*
 * Autocorking: small single writes share link frames while the NIC still
 * holds an earlier frame of their endpoint, as TCP's autocorking does with
 * a socket's skbs still in the qdisc or the device (tcp_should_autocork()).
 *
 * A single write of a small message takes the endpoint's plug (struct
 * dp_tx_plug), as a batch does, and its DATA frame goes there.  If none
 * of the endpoint's link frames is in the NIC's hands, the plug is sent at
 * once, as the write would have sent its frame; else the frame stays held,
 * and the frames of the writes that follow join it, until the NIC lets go
 * of the last frame in flight (its completion queues the flush), the
 * bundle is full, or the writer is about to sleep on its peer.  A
 * ping-pong never finds a frame in flight: it pays two tests and holds
 * nothing.  Frames in flight are counted only by a backend that reports
 * their completion (dp_backend's @frame_send: the netdev backend's skb
 * destructor); on any other, no write takes the plug (dp_node.cork).
 *
 * A NIC that lets go of a frame before the next write comes would leave
 * a stream of small writes one frame each, each paying its own kick of
 * the device: so a write that streams is held even with nothing in
 * flight.  It streams if it comes within DP_STREAM_GAP_NS of its
 * endpoint's last write's return, with nothing read, polled or released
 * between them (a ping-pong never streams).  Its hold ends when the
 * bundle is full (the writer sends it), when the writer reads, polls or
 * releases, or stream_hold_us after the write that opened the bundle
 * (the end of a burst: one hrtimer per hold; a streaming write that has
 * the plug as the hold ends renews it).
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "dp.h"

static bool dp_autocork = true;
module_param_named(autocork, dp_autocork, bool, 0644);
MODULE_PARM_DESC(autocork,
		 "hold small single writes while the NIC holds an earlier frame of their endpoint (default 1)");

static unsigned int dp_stream_hold_us = 500;
module_param_named(stream_hold_us, dp_stream_hold_us, uint, 0644);
MODULE_PARM_DESC(stream_hold_us,
		 "how long autocorking holds a streaming writer's bundle for its next writes with no frame in flight (us, at most 10000; 0: never; default 500)");

#define DP_STREAM_GAP_NS	(100 * NSEC_PER_USEC)
#define DP_STREAM_HOLD_MAX_US	10000U

static void dp_txc_put(struct dp_txc *c)
{
	if (refcount_dec_and_test(&c->refs))
		kfree(c);
}

/*
 * Send what @ep's plug holds, unless another task has the plug: a batch
 * sends it at its end, a write looks at what is in flight again once it
 * has let go (dp_cork_end()).
 */
static void dp_cork_send_held(struct dp_endpoint *ep, struct dp_txc *c)
{
	if (!dp_tx_plug_start(ep))
		return;
	WRITE_ONCE(c->held, false);
	dp_tx_plug_end(ep);
}

static void dp_cork_flush_fn(struct work_struct *work)
{
	struct dp_txc *c = container_of(work, struct dp_txc, flush);

	mutex_lock(&c->lock);
	if (c->ep && READ_ONCE(c->held))
		dp_cork_send_held(c->ep, c);
	mutex_unlock(&c->lock);
	dp_txc_put(c);
}

/* Queue @c's flush for what its plug holds (any context; we hold a ref). */
static void dp_txc_queue_flush(struct dp_txc *c)
{
	refcount_inc(&c->refs);		/* the flush's */
	if (!queue_work(dp_wq, &c->flush))
		refcount_dec(&c->refs);
}

/* A streaming write's hold ended (hard irq): send what is held. */
static enum hrtimer_restart dp_cork_hold_end(struct hrtimer *t)
{
	struct dp_txc *c = container_of(t, struct dp_txc, hold);

	if (READ_ONCE(c->held))
		dp_txc_queue_flush(c);
	return HRTIMER_NORESTART;
}

int dp_cork_init(struct dp_endpoint *ep)
{
	struct dp_txc *c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);

	if (!c)
		return -ENOMEM;
	refcount_set(&c->refs, 1);
	mutex_init(&c->lock);
	INIT_WORK(&c->flush, dp_cork_flush_fn);
	hrtimer_init(&c->hold, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	c->hold.function = dp_cork_hold_end;
	c->ep = ep;
	ep->plug.txc = c;
	return 0;
}

/*
 * At release, before the sessions end: what the plug holds leaves now (a
 * write before close() goes as it would have without the cork), and no
 * flush touches @ep after.  No task sends on @ep any more.
 */
void dp_cork_stop(struct dp_endpoint *ep)
{
	struct dp_txc *c = ep->plug.txc;

	hrtimer_cancel(&c->hold);	/* no write re-arms it: none is left */
	mutex_lock(&c->lock);
	c->ep = NULL;
	mutex_unlock(&c->lock);
	dp_cork_send_held(ep, c);
	ep->plug.txc = NULL;
	dp_txc_put(c);
}

/*
 * Whether a single write that takes the plug now streams: it comes soon
 * after its endpoint's last write returned, with nothing read, polled or
 * released between them.
 */
static bool dp_cork_streams(const struct dp_txc *c)
{
	u64 last = READ_ONCE(c->last_write);

	return last && READ_ONCE(dp_stream_hold_us) &&
	       local_clock() - last < DP_STREAM_GAP_NS;
}

/*
 * Whether a single write of @len bytes on @ep takes the plug (let go with
 * dp_cork_end()): a message that shares a bundle of the node's link frame
 * (node->cork_max: its MTU up to DP_TX_BUNDLE_MAX) with another, on a NIC
 * that counts its frames, unless another task's batch has the plug.  Its
 * frame is held only if there is something to wait for
 * (dp_tx_plug_room(), which checks it against the NIC it goes out on);
 * the bundle it opens then is sized for a link frame.
 */
bool dp_cork_start(struct dp_endpoint *ep, size_t len)
{
	u32 max = READ_ONCE(ep->node->cork_max);

	if (!max || !READ_ONCE(dp_autocork) ||
	    !dp_tx_bundles(len, max) || !dp_tx_plug_start(ep))
		return false;
	ep->plug.cork = true;
	ep->plug.stream = dp_cork_streams(ep->plug.txc);
	ep->plug.left = U32_MAX;
	/*
	 * What the plug holds is this write's to send now: a completion
	 * need not queue the flush while we have it, and if we send it all
	 * nothing is left held.  dp_cork_end() sets @held again, and looks
	 * at what is in flight after it, if it leaves frames held.
	 */
	WRITE_ONCE(ep->plug.txc->held, false);
	return true;
}

/*
 * The plug's frames leave if none of @c's is in flight, unless the write
 * streams (the plug's owner).
 */
static bool dp_cork_settle(struct dp_tx_plug *plug, struct dp_txc *c)
{
	if (plug->n && !plug->stream && !atomic_read(&c->inflight))
		dp_tx_plug_flush(plug);
	return plug->n;
}

/*
 * A streaming write leaves frames held: a bundle it opened (its frame is
 * the only one) gets the whole hold; any other runs out the hold it is
 * in, or gets a new one if that has ended.
 */
static void dp_cork_hold(struct dp_tx_plug *plug, struct dp_txc *c)
{
	u32 us = min(READ_ONCE(dp_stream_hold_us), DP_STREAM_HOLD_MAX_US);

	if (plug->n == 1 || !hrtimer_is_queued(&c->hold))
		hrtimer_start(&c->hold, us * NSEC_PER_USEC, HRTIMER_MODE_REL);
}

/*
 * The write is done: let go of the plug, holding what it has if a frame
 * is in flight.  Then the completion that ends the last one sees @held,
 * or, if it came first, we see nothing in flight and send them ourselves.
 */
void dp_cork_end(struct dp_endpoint *ep)
{
	struct dp_tx_plug *plug = &ep->plug;
	struct dp_txc *c = plug->txc;
	bool stream = plug->stream;

	if (!dp_cork_settle(plug, c)) {
		/* the next owner's cmpxchg() sees the plug as we left it */
		smp_store_release(&plug->owner, NULL);
		goto out;
	}
	atomic64_inc(&ep->tx_corked);
	WRITE_ONCE(c->held, true);
	if (stream)
		dp_cork_hold(plug, c);
	/* the flush's cmpxchg() sees the frames we leave held */
	smp_store_release(&plug->owner, NULL);
	smp_mb();	/* @held before @inflight; pairs with dp_txc_done() */
	if (!stream && !atomic_read(&c->inflight))
		dp_cork_send_held(ep, c);
out:
	WRITE_ONCE(c->last_write, local_clock());
}

/*
 * @ep's owner reads, polls or releases: its next write does not stream,
 * and what a streaming write left held leaves now (the peer may need it
 * to answer).  Process context, no dp lock held.
 */
void dp_cork_quiet(struct dp_endpoint *ep)
{
	struct dp_txc *c = ep->plug.txc;

	if (!READ_ONCE(c->last_write))
		return;
	WRITE_ONCE(c->last_write, 0);
	if (READ_ONCE(c->held) && hrtimer_is_queued(&c->hold))
		dp_cork_send_held(ep, c);
}

/*
 * The NIC let go of a frame counted by dp_txc_hold(); any context.  The
 * last one in flight sends what the plug was left holding.
 */
void dp_txc_done(struct dp_txc *c)
{
	/*
	 * atomic_dec_return() is fully ordered: @inflight before @held.  A
	 * streaming write's hold is ended by its timer, not by us.
	 */
	if (!atomic_dec_return(&c->inflight) && READ_ONCE(c->held) &&
	    !hrtimer_is_queued(&c->hold))
		dp_txc_queue_flush(c);
	dp_txc_put(c);
}
