// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of autocorking (dp_cork.c), built against the real dp.h over
 * the mock kernel (mock/kmock.h).  Beneath the cork is a model of the
 * frame layer's plug (dp_tx.c): a write that takes the plug adds its
 * message to the bundle there unless it would go alone (the cork's write
 * not streaming, nothing held, nothing in flight: dp_tx_plug_room()), and
 * a flush is one link frame, counted in flight for the endpoint until the
 * test's NIC lets go of it (dp_txc_done()).  Time is the mock's ns clock;
 * the hold's hrtimer fires when a test says so, and what it queues runs
 * in kmock_run(), as dp_wq's worker would.
 *
 * A world of its own (Makefile, WORLDS): the plug's functions here are
 * seen by dp_cork.c alone.
 */
#include "dp.h"
#include "unit.h"

extern bool *const kmock_param_autocork;
extern unsigned int *const kmock_param_stream_hold_us;

#define C_CAP	64	/* messages a bundle holds in this world */

static struct {
	struct dp_node node;
	struct dp_endpoint *ep;
	unsigned int frames;		/* link frames sent */
	unsigned int msgs;		/* messages in them */
	unsigned int last_n;		/* messages in the last frame */
	unsigned int nic;		/* frames the NIC still holds */
	struct dp_txc *held_by[64];	/* each one's txc, oldest first */
	void (*during)(void);		/* inside a write, its message held */
} w;

static void w_nic_take(struct dp_txc *c)
{
	if (c)
		dp_txc_hold(c);
	w.held_by[w.nic++] = c;
}

/* The NIC lets go of its oldest frame. */
static void w_nic_done(void)
{
	struct dp_txc *c = w.held_by[0];

	CHECK(w.nic > 0, "no frame in the NIC");
	if (!w.nic)
		return;
	memmove(w.held_by, w.held_by + 1, --w.nic * sizeof(w.held_by[0]));
	if (c)
		dp_txc_done(c);
}

static void w_frame(unsigned int n, struct dp_txc *c)
{
	w.frames++;
	w.msgs += n;
	w.last_n = n;
	w_nic_take(c);
}

/* dp_tx.c's, as the cork sees them. */
bool dp_tx_plug_start(struct dp_endpoint *ep)
{
	if (cmpxchg(&ep->plug.owner, NULL, current))
		return false;
	ep->plug.node = ep->node;
	ep->plug.left = 1;
	ep->plug.cork = false;
	ep->plug.stream = false;
	return true;
}

void dp_tx_plug_flush(struct dp_tx_plug *plug)
{
	if (!plug || !plug->n)
		return;
	might_sleep();
	w_frame(plug->n, plug->txc);
	plug->n = 0;
}

void dp_tx_plug_end(struct dp_endpoint *ep)
{
	dp_tx_plug_flush(&ep->plug);
	smp_store_release(&ep->plug.owner, NULL);
}

/* One message through the frame layer: into the bundle, or alone. */
static void w_tx(struct dp_tx_plug *plug)
{
	if (plug && !(plug->cork && !plug->stream && !plug->n &&
		      !atomic_read(&plug->txc->inflight))) {
		if (plug->n == C_CAP)
			dp_tx_plug_flush(plug);
		plug->n++;
		if (w.during) {
			void (*f)(void) = w.during;

			w.during = NULL;
			f();
		}
		return;
	}
	dp_tx_plug_flush(plug);
	w_frame(1, plug ? plug->txc : NULL);
}

/* A single write of @len bytes to another node, as dp_send() makes it. */
static bool w_write(size_t len)
{
	bool cork = dp_cork_start(w.ep, len);

	w_tx(cork ? &w.ep->plug : NULL);
	if (cork)
		dp_cork_end(w.ep);
	return cork;
}

static void w_us(u64 us)
{
	kmock_ns_extra += us * NSEC_PER_USEC;
}

static struct dp_txc *w_txc(void)
{
	return w.ep->plug.txc;
}

/* Fire the hold if due, and run what it queued. */
static bool w_hold_ends(void)
{
	bool fired = kmock_hrtimer_fire(&w_txc()->hold);

	kmock_run();
	return fired;
}

static void w_setup(void)
{
	kmock_reset();
	memset(&w, 0, sizeof(w));
	*kmock_param_autocork = true;
	*kmock_param_stream_hold_us = 500;
	w.node.cork_max = 8192;
	w.ep = kzalloc(sizeof(*w.ep), GFP_KERNEL);
	w.ep->node = &w.node;
	CHECK_EQ(dp_cork_init(w.ep), 0);
}

/*
 * After release: the NIC lets go of what it holds, the endpoint goes, and
 * nothing is left armed, queued or allocated, no rule broken.
 */
static void w_clean(void)
{
	while (w.nic)
		w_nic_done();
	kmock_run();
	kfree(w.ep);
	CHECK_EQ(kmock_pending(), 0);
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(kmock_refcount_errors, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

static void w_teardown(void)
{
	dp_cork_stop(w.ep);
	w_clean();
}

/* Nothing in flight, not streaming: the write's frame goes at once. */
static void test_cork_lone_write(void)
{
	w_setup();
	CHECK(w_write(64), "a small write takes the plug");
	CHECK_EQ(w.frames, 1);
	CHECK_EQ(w.nic, 1);
	CHECK_EQ(atomic_read(&w_txc()->inflight), 1);
	CHECK(!w_txc()->held, "nothing held");
	CHECK(!hrtimer_is_queued(&w_txc()->hold), "no hold armed");
	CHECK_EQ(atomic64_read(&w.ep->tx_corked), 0);
	CHECK(w.ep->plug.owner == NULL, "the plug let go of");
	w_teardown();
}

/*
 * A write that finds a frame in flight is held, the writes after it join
 * the bundle, and the completion of the last frame in flight sends it.
 */
static void test_cork_held_while_in_flight(void)
{
	w_setup();
	w_write(64);
	w_us(200);			/* not streaming */
	w_write(64);
	w_us(200);
	w_write(64);
	CHECK_EQ(w.frames, 1);
	CHECK_EQ(w.ep->plug.n, 2);
	CHECK(w_txc()->held, "the bundle is held");
	CHECK_EQ(atomic64_read(&w.ep->tx_corked), 2);
	CHECK(!hrtimer_is_queued(&w_txc()->hold), "no hold: not streaming");
	w_nic_done();
	CHECK_EQ(w.frames, 1);		/* the flush is queued, not run */
	kmock_run();
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.last_n, 2);
	CHECK_EQ(w.msgs, 3);
	CHECK(!w_txc()->held, "nothing held after the flush");
	w_teardown();
}

/*
 * A write within DP_STREAM_GAP_NS of the last one's return streams: held
 * with nothing in flight, the hold armed once for the bundle it opens,
 * and the bundle sent when the hold ends.
 */
static void test_cork_stream_hold(void)
{
	u64 armed;

	w_setup();
	w_write(64);
	w_nic_done();			/* nothing in flight */
	w_us(10);
	w_write(64);
	CHECK(w.ep->plug.stream, "the write streams");
	CHECK_EQ(w.frames, 1);
	CHECK_EQ(w.ep->plug.n, 1);
	CHECK(hrtimer_is_queued(&w_txc()->hold), "the hold is armed");
	CHECK_EQ(w_txc()->hold.starts, 1);
	armed = w_txc()->hold.expires;
	CHECK_EQ(armed, ktime_get_ns() + 500 * NSEC_PER_USEC);
	w_us(10);
	w_write(64);
	CHECK_EQ(w.ep->plug.n, 2);
	CHECK_EQ(w_txc()->hold.starts, 1);	/* the bundle's hold runs on */
	CHECK_EQ(w_txc()->hold.expires, armed);
	w_us(489);
	CHECK(!w_hold_ends(), "the hold has not ended");
	CHECK_EQ(w.frames, 1);
	w_us(1);
	CHECK(w_hold_ends(), "the hold ends");
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.last_n, 2);
	CHECK(!w_txc()->held, "nothing held");
	w_teardown();
}

/* A full bundle leaves with the write that finds it full. */
static void test_cork_stream_full(void)
{
	unsigned int i;

	w_setup();
	w_write(64);
	w_nic_done();
	for (i = 0; i < C_CAP + 1; i++) {
		w_us(1);
		w_write(64);
	}
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.last_n, C_CAP);
	CHECK_EQ(w.ep->plug.n, 1);
	CHECK(w_txc()->held, "the next bundle is held");
	/* the new bundle got a hold of its own */
	CHECK_EQ(w_txc()->hold.starts, 2);
	w_teardown();
	CHECK_EQ(w.msgs, C_CAP + 2);	/* the release sent the last one */
}

/* The gap is strict: a write DP_STREAM_GAP_NS after does not stream. */
static void test_cork_gap(void)
{
	w_setup();
	w_write(64);
	w_nic_done();
	w_us(100);
	w_write(64);
	CHECK(!w.ep->plug.stream, "100 us after: does not stream");
	CHECK_EQ(w.frames, 2);		/* alone, at once */
	w_nic_done();
	w_us(99);
	w_write(64);
	CHECK(w.ep->plug.stream, "99 us after: streams");
	CHECK_EQ(w.ep->plug.n, 1);
	CHECK_EQ(w.frames, 2);
	w_teardown();
}

static void w_slow(void)
{
	w_us(150);
}

/*
 * The gap runs from the last write's return: the 150 us a slow write
 * spends inside (a debug kernel's) do not count, so the write 10 us
 * after it returned streams.  A gap from its beginning would make 160.
 */
static void test_cork_gap_from_return(void)
{
	w_setup();
	w_write(64);			/* alone, in flight */
	w_us(10);
	w.during = w_slow;
	w_write(64);			/* held behind it, 150 us inside */
	CHECK(!w.during, "the write ran its 150 us");
	w_us(10);
	w_write(64);
	CHECK(w.ep->plug.stream, "10 us after the last one returned: streams");
	w_teardown();
}

/*
 * A read, poll or release (dp_cork_quiet()) sends what a streaming write
 * left held, and the next write does not stream.
 */
static void test_cork_quiet(void)
{
	w_setup();
	w_write(64);
	w_nic_done();
	w_us(10);
	w_write(64);
	CHECK_EQ(w.ep->plug.n, 1);
	dp_cork_quiet(w.ep);
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.ep->plug.n, 0);
	CHECK_EQ(w_txc()->last_write, 0);
	w_nic_done();
	w_us(10);
	w_write(64);
	CHECK(!w.ep->plug.stream, "a write after a read does not stream");
	CHECK_EQ(w.frames, 3);
	/* the old hold ends on nothing */
	w_us(1000);
	w_hold_ends();
	CHECK_EQ(w.frames, 3);
	w_teardown();
}

/*
 * A completion leaves a streaming hold to its timer: the last frame in
 * flight let go of queues no flush while the hold is armed.
 */
static void test_cork_done_leaves_hold(void)
{
	w_setup();
	w_write(64);
	w_us(10);
	w_write(64);			/* streams, a frame in flight */
	CHECK_EQ(w.ep->plug.n, 1);
	w_nic_done();
	CHECK_EQ(kmock_run(), 0);	/* no flush queued */
	CHECK_EQ(w.frames, 1);
	w_us(500);
	CHECK(w_hold_ends(), "the hold ends");
	CHECK_EQ(w.frames, 2);
	w_teardown();
}

/*
 * The hold ends (its flush queued) and a streaming write takes the plug
 * before the flush runs: the write renews the hold, the flush sends all,
 * and the renewed hold ends on nothing.
 */
static void test_cork_hold_renewed(void)
{
	unsigned int i;

	w_setup();
	w_write(64);
	w_nic_done();
	for (i = 0; i < 10; i++) {	/* one every 50 us */
		w_us(50);
		w_write(64);
	}
	CHECK_EQ(w.ep->plug.n, 10);
	w_us(50);			/* 500 us after the first */
	CHECK(kmock_hrtimer_fire(&w_txc()->hold), "the hold ends");
	CHECK_EQ(kmock_pending(), 1);	/* its flush */
	w_write(64);			/* before the flush runs */
	CHECK(w.ep->plug.stream, "streams");
	CHECK(hrtimer_is_queued(&w_txc()->hold), "renewed");
	CHECK_EQ(w_txc()->hold.starts, 2);
	kmock_run();
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.last_n, 11);
	w_us(500);
	CHECK(w_hold_ends(), "the renewed hold ends");
	CHECK_EQ(w.frames, 2);
	w_teardown();
}

/*
 * The NIC lets go of its oldest frame, but its completion read @held
 * before the write stored it: it saw nothing held, so it queues no flush.
 */
static void w_nic_done_unseen_hook(void)
{
	bool held = w_txc()->held;

	w_txc()->held = false;
	w_nic_done();
	w_txc()->held = held;
}

/*
 * The NIC lets go of the last frame in flight between the write's
 * storing @held and its reading @inflight (dp_cork_end()'s smp_mb()):
 * the frames held leave once, by whichever side sees the other.
 */
static void test_cork_race_done_at_end(void)
{
	w_setup();
	w_write(64);
	w_us(200);
	kmock_mb_hook = w_nic_done;
	w_write(64);
	CHECK(kmock_mb_hook == NULL, "the completion ran in the window");
	CHECK_EQ(w.frames, 2);		/* the write saw it */
	kmock_run();			/* and the completion's flush */
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.msgs, 2);
	CHECK(!w_txc()->held, "nothing held");
	/* the completion saw nothing held: the write must send */
	w_nic_done();
	w_us(200);
	w_write(64);			/* alone, in flight */
	w_us(200);
	kmock_mb_hook = w_nic_done_unseen_hook;
	w_write(64);
	CHECK(kmock_mb_hook == NULL, "the completion ran in the window");
	CHECK_EQ(w.frames, 4);
	CHECK_EQ(kmock_run(), 0);
	CHECK_EQ(w.frames, 4);
	CHECK(!w_txc()->held, "nothing held");
	w_teardown();
}

/*
 * The NIC lets go of the last frame while a write has the plug, its
 * message held after another: the completion queues nothing (what is
 * held is the write's to send), and the write sends both.
 */
static void test_cork_race_done_inside(void)
{
	w_setup();
	w_write(64);
	w_us(200);
	w_write(64);
	CHECK(w_txc()->held, "held behind the frame in flight");
	w_us(200);
	w.during = w_nic_done;
	w_write(64);
	CHECK(w.during == NULL, "the completion ran inside the write");
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(w.last_n, 2);
	CHECK_EQ(kmock_run(), 0);
	CHECK_EQ(w.frames, 2);
	w_teardown();
}

/* When the plug is not taken: another task's batch, a large message, off. */
static void test_cork_not_taken(void)
{
	static char other;

	w_setup();
	w.ep->plug.owner = (struct task_struct *)&other;
	CHECK(!dp_cork_start(w.ep, 64), "another task has the plug");
	w.ep->plug.owner = NULL;
	CHECK(!dp_cork_start(w.ep, 4096), "a message that bundles with none");
	CHECK(dp_tx_bundles(4096 - DP_WIRE_HDR_LEN, 8192), "the largest that does");
	CHECK(w_write(4096 - DP_WIRE_HDR_LEN), "taken");
	*kmock_param_autocork = false;
	CHECK(!dp_cork_start(w.ep, 64), "autocork off");
	*kmock_param_autocork = true;
	w.node.cork_max = 0;
	CHECK(!dp_cork_start(w.ep, 64), "a NIC that does not count its frames");
	CHECK(w.ep->plug.owner == NULL, "never left taken");
	w_teardown();
}

/* stream_hold_us=0: no write streams; one is held only behind a frame. */
static void test_cork_hold_off(void)
{
	w_setup();
	*kmock_param_stream_hold_us = 0;
	w_write(64);
	w_nic_done();
	w_us(10);
	w_write(64);
	CHECK(!w.ep->plug.stream, "does not stream");
	CHECK_EQ(w.frames, 2);
	w_us(10);
	w_write(64);			/* behind the frame in flight */
	CHECK_EQ(w.ep->plug.n, 1);
	CHECK(!hrtimer_is_queued(&w_txc()->hold), "no hold");
	w_teardown();
}

/* The hold is at most DP_STREAM_HOLD_MAX_US, whatever the parameter. */
static void test_cork_hold_cap(void)
{
	w_setup();
	*kmock_param_stream_hold_us = 100000;
	w_write(64);
	w_nic_done();
	w_us(10);
	w_write(64);
	CHECK_EQ(w_txc()->hold.expires, ktime_get_ns() + 10000 * NSEC_PER_USEC);
	w_teardown();
}

/*
 * Release with a hold armed, its flush queued and a frame in flight: what
 * is held leaves at once, the flush that runs after finds no endpoint,
 * and the last reference (the frame's) frees the state.
 */
static void test_cork_stop(void)
{
	struct dp_txc *c;

	w_setup();
	w_write(64);
	w_us(10);
	w_write(64);
	w_us(500);
	CHECK(kmock_hrtimer_fire(&w_txc()->hold), "the hold ends");
	CHECK_EQ(kmock_pending(), 1);	/* its flush */
	c = w_txc();
	dp_cork_stop(w.ep);
	CHECK(w.ep->plug.txc == NULL, "let go of");
	CHECK_EQ(w.frames, 2);
	CHECK(!hrtimer_is_queued(&c->hold), "no hold left armed");
	kmock_run();			/* the flush: nothing to do */
	CHECK_EQ(w.frames, 2);
	CHECK(kmock_kmalloc_live > 1, "the frames in flight keep it");
	while (w.nic)
		w_nic_done();
	CHECK_EQ(kmock_run(), 0);
	w_clean();
}

/* Release with a streaming hold armed: sent at once, the hold cancelled. */
static void test_cork_stop_armed(void)
{
	w_setup();
	w_write(64);
	w_nic_done();
	w_us(10);
	w_write(64);
	CHECK(hrtimer_is_queued(&w_txc()->hold), "armed");
	dp_cork_stop(w.ep);
	CHECK_EQ(w.frames, 2);
	CHECK_EQ(kmock_pending(), 0);	/* nor hold nor flush */
	w_clean();
}

const struct unit_test cork_tests[] = {
	{ "cork_lone_write", test_cork_lone_write },
	{ "cork_held_while_in_flight", test_cork_held_while_in_flight },
	{ "cork_stream_hold", test_cork_stream_hold },
	{ "cork_stream_full", test_cork_stream_full },
	{ "cork_gap", test_cork_gap },
	{ "cork_gap_from_return", test_cork_gap_from_return },
	{ "cork_quiet", test_cork_quiet },
	{ "cork_done_leaves_hold", test_cork_done_leaves_hold },
	{ "cork_hold_renewed", test_cork_hold_renewed },
	{ "cork_race_done_at_end", test_cork_race_done_at_end },
	{ "cork_race_done_inside", test_cork_race_done_inside },
	{ "cork_not_taken", test_cork_not_taken },
	{ "cork_hold_off", test_cork_hold_off },
	{ "cork_hold_cap", test_cork_hold_cap },
	{ "cork_stop", test_cork_stop },
	{ "cork_stop_armed", test_cork_stop_armed },
	{ NULL, NULL },
};
