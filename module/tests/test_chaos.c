// SPDX-License-Identifier: GPL-2.0
/*
 * Long streams over a faulty link, as run_rel.sh runs them between two
 * guests, but on the host and in simulated time: a real sender (dp_snd.c)
 * and a real receiver (dp_rcv.c) in the world of sess_world.c, joined by a
 * link that delays every frame, drops, duplicates and reorders some (as
 * the fault relay does; a corrupted frame is one dp's CRC drops, so a drop
 * here), in both directions.  The sender writes as fast as the session
 * lets it, the reader reads at a varying pace and sometimes not at all
 * for a while.  A timer's work runs before or after the frames due in
 * the same millisecond, as a worker may in the kernel.  Every message
 * must arrive once, in order, intact; no send may fail; while messages
 * are in flight a timer or the sender's work must be pending; and the
 * stream must never stand still: no progress for C_STALL_MS of simulated
 * time fails the test with both sides' sessions.
 * Seeded: a failure names its seed and is reproduced by it.
 */
#include <time.h>

#include "sess_world.h"
#include "dp_frag.h"

#define C_STALL_MS	30000u

struct c_frame {
	struct dp_msg_hdr h;
	unsigned long due;
	u8 *data;
};

struct c_cfg {
	u64 seed;
	u32 count;		/* messages */
	u32 small_max;		/* sizes 4..small_max, ... */
	u32 large_pct;		/* ... or, this often, up to large_max */
	u32 large_max;
	bool log_sizes;		/* sizes log-uniform from 4 to large_max (dp_large's) */
	u32 pool;		/* the receiver's: dp_rel_peer's 256 KiB, dp_large's 4 MiB */
	u32 drop, dup, reorder;	/* percent, as dp-link set */
	u32 hiccup;		/* per million ms: the link holds all for up to 3 s */
	u32 rate;		/* frames a ms each way; 0: no limit */
	u32 fixed;		/* every message this long; 0: random sizes */
	bool steady;		/* the reader takes all there is, every ms */
	u32 frame;		/* the largest one-frame message; 0: 1400 */
	bool blocking;		/* each write waits (the soak's); else EAGAIN */
	bool poller;		/* writes only when poll() would say POLLOUT */
};

static struct {
	u64 rnd;
	u64 order_rnd;		/* the timers' works before or after frames */
	struct c_cfg *cfg;
	struct c_frame *q;	/* frames on the link, in the order put on it */
	unsigned int nq, cap;
	unsigned long dropped, duplicated, reordered, passed, hiccups;
	u32 *lens;		/* each message's length, by index */
	u32 sent, got, bad;
	unsigned long progress;	/* jiffies of the last message sent or read */
	unsigned long pause_until;	/* the reader reads nothing till then */
	bool stalled;
	bool unarmed;		/* messages in flight, no timer, no work */
	unsigned long ms;		/* the millisecond of @carried */
	u32 carried[2];			/* frames each way in it (rate) */
	u64 bytes;			/* message bytes read */
	unsigned long data_frames;	/* A to B, delivered */
} c;

static struct dp_endpoint *A, *B;
static struct dp_snd *ab;

static u32 c_rand(u32 n)
{
	return n ? (u32)(unit_rand(&c.rnd) >> 33) % n : 0;
}

/* Put a copy of @h and its payload on the link, due in @ms. */
static void c_put(const struct dp_msg_hdr *h, const void *data, unsigned long ms)
{
	struct c_frame *f;

	if (c.nq == c.cap) {
		c.cap = c.cap ? 2 * c.cap : 256;
		c.q = realloc(c.q, c.cap * sizeof(*c.q));
	}
	f = &c.q[c.nq++];
	f->h = *h;
	f->due = jiffies + ms;
	f->data = malloc(h->len ? h->len : 1);
	memcpy(f->data, data, h->len);
}

/*
 * The frames the sessions sent since the last look go on the link: a
 * millisecond's latency each, or 20 more if reordered (the relay's
 * reorder_ms), lost, or twice.
 */
static void c_take_sent(void)
{
	unsigned int i;

	for (i = 0; i < w.n_frames; i++) {
		struct w_frame *f = &w.frames[i];

		if (f->done)
			continue;
		f->done = true;
		if (c_rand(100) < c.cfg->drop) {
			c.dropped++;
			continue;
		}
		if (c_rand(100) < c.cfg->dup) {
			c.duplicated++;
			c_put(&f->h, f->data, 1);
		}
		if (c_rand(100) < c.cfg->reorder) {
			c.reordered++;
			c_put(&f->h, f->data, 21);
		} else {
			c_put(&f->h, f->data, 1);
		}
	}
	w.n_frames = 0;		/* every one taken: the log starts again */
}

/*
 * Deliver what is due, in the order it was put on the link (a reordered
 * frame is one put later), and what that makes the sessions send, till
 * none.
 */
static void c_deliver(void)
{
	bool more = true;

	while (more) {
		unsigned int i, keep = 0;

		more = false;
		c_take_sent();
		for (i = 0; i < c.nq; i++) {	/* c.nq grows as frames are sent */
			struct c_frame f = c.q[i];
			unsigned int way = f.h.src_nid != 1;

			if (c.ms != jiffies) {
				c.ms = jiffies;
				c.carried[0] = c.carried[1] = 0;
			}
			if (time_before(jiffies, f.due) ||
			    (c.cfg->rate && c.carried[way] >= c.cfg->rate)) {
				c.q[keep++] = f;	/* the rest of this ms's queue waits */
				continue;
			}
			c.carried[way]++;
			c.data_frames += !way && f.h.type == DP_WT_DATA;
			w_dispatch(&f.h, f.data);
			free(f.data);
			c.passed++;
			more = true;
			c_take_sent();
		}
		c.nq = keep;
		if (kmock_run())
			more = true;
	}
}

/* The reader: a varying number a millisecond, now and then a pause. */
static void c_read(void)
{
	unsigned int n, i;

	if (time_before(jiffies, c.pause_until))
		return;
	if (!c.cfg->steady && c_rand(1000) < 2)	/* busy elsewhere for up to 2 s */
		c.pause_until = jiffies + c_rand(2000);
	n = c.cfg->steady ? ~0u : 1 + c_rand(16);
	for (i = 0; i < n; i++) {
		struct dp_token *t = dp_ring_head(&B->pool.ring);
		const u8 *p;
		u32 idx, len;

		if (!t)
			break;
		p = (const u8 *)(t + 1);
		len = t->len;
		memcpy(&idx, p, sizeof(idx));
		if (c.got >= c.cfg->count || idx != c.got || len != c.lens[c.got] ||
		    memcmp(p + 4, w_payload + 4, len - 4)) {
			if (c.bad++ < 5)
				printf("#   message %u: index %u, %u bytes (%u expected)\n",
				       c.got, idx, len, c.got < c.cfg->count ? c.lens[c.got] : 0);
		}
		c.got++;
		c.bytes += len;
		c.progress = jiffies;
		CHECK_EQ(w_read(B, 1, NULL), 1);
	}
}

/*
 * A guest its host did not run for a while (TCG, two guests on two CPUs):
 * every frame on the link, either way, arrives up to 3 s late.
 */
static void c_hiccup(void)
{
	unsigned long late = 1 + c_rand(3000);
	unsigned int i;

	for (i = 0; i < c.nq; i++)
		c.q[i].due += late;
	c.hiccups++;
}

/*
 * Whatever the sender is owed (messages in flight), a deadline is armed
 * or its work is about to run: else nothing ever sends the lost ones
 * again, and the stream stands still for good.
 */
static void c_check_armed(void)
{
	struct dp_snd_info si = w_info(ab);

	if (c.unarmed || si.state != DP_SND_OPEN || si.snd_una == si.snd_nxt)
		return;
	if (!ab->timer.pending && !ab->work.pending) {
		c.unarmed = true;
		c.stalled = true;	/* it would be: stop here */
	}
}

/*
 * Whether this millisecond's timers have their work run before the frames
 * due are delivered: at random (its own generator, so the link's faults
 * stay those of the seed), or always (DP_CHAOS_ORDER=0) or never (=1), to
 * study either alone.
 */
static bool c_works_first(void)
{
	const char *e = getenv("DP_CHAOS_ORDER");

	return e ? *e == '0' : unit_rand(&c.order_rnd) >> 63;
}

/* One millisecond of the world. */
static void c_step(void)
{
	if (c_rand(1000000) < c.cfg->hiccup)
		c_hiccup();
	c_deliver();
	if (c_works_first()) {
		kmock_advance(1);
	} else {
		jiffies++;
		kmock_fire_timers();	/* their work after the frames */
	}
	c_deliver();
	c_check_armed();
	c_read();
	if (!c.stalled && jiffies - c.progress > C_STALL_MS)
		c.stalled = true;
}

/* The world goes on while a large message's writer waits (the window). */
static void c_wait_hook(void)
{
	if (!c.stalled)
		c_step();
}

static void c_dump(const char *why)
{
	struct dp_snd_info si = w_info(ab);
	struct dp_ep_stats sa = w_stats(A), sb = w_stats(B);
	struct dp_rcv_info ri = { 0 };
	bool has = w_rinfo(B, 1, 10, &ri);

	printf("#   %s: seed %llu, at %lu ms: sent %u, read %u of %u\n", why,
	       (unsigned long long)c.cfg->seed, jiffies - 1000000, c.sent, c.got,
	       c.cfg->count);
	printf("#   sender: state %u err %u isn %u una %u nxt %u credit_left %d cwnd %u rto %u ms backoff %u heard %u ms ago; probe %d want %u waiters %u in_msg %d armed %d (at %+ld ms) deadline %+ld ms recovering %d\n",
	       si.state, si.err, si.isn, si.snd_una, si.snd_nxt, si.credit_left,
	       si.cwnd, si.rto_ms, si.backoff, si.heard_ms, ab->probe, ab->want,
	       ab->waiters, ab->in_msg, ab->armed, (long)(ab->armed_at - jiffies),
	       (long)(ab->deadline - jiffies), ab->recovering);
	printf("#   receiver: %s isn %u rcv_nxt %u held %u credit_left %d ack_owed %d; pool queued %u\n",
	       has ? "session" : "no session", ri.isn, ri.rcv_nxt, ri.held,
	       ri.credit_left, ri.ack_owed, w_queued(B));
	printf("#   A: retrans %llu undelivered %llu blocked %llu; B: drops full %llu\n",
	       (unsigned long long)sa.tx_retrans, (unsigned long long)sa.tx_undelivered,
	       (unsigned long long)sa.tx_blocked, (unsigned long long)sb.rx_drop_full);
	printf("#   link: %u frames on it, passed %lu dropped %lu duplicated %lu reordered %lu, %lu hiccups; timers/works pending %d\n",
	       c.nq, c.passed, c.dropped, c.duplicated, c.reordered, c.hiccups,
	       kmock_pending());
}

static u32 c_size(u32 max)
{
	u32 top = c.cfg->small_max;

	if (c.cfg->log_sizes) {
		u32 bits = 2 + c_rand(19);	/* 4 B .. 1 MiB */
		u32 len = (1u << bits) + c_rand(1u << bits);

		len = len > c.cfg->large_max ? c.cfg->large_max : len;
		return len > max ? max : len;
	}

	if (c_rand(100) < c.cfg->large_pct)
		top = c.cfg->large_max;
	if (top > max)
		top = max;
	return 4 + c_rand(top - 3);
}

/* Send message c.sent: 0, or the write's error (-EAGAIN: not now). */
static int c_send_one(void)
{
	u32 max = dp_snd_max_msg(ab), len;
	int err;

	if (c.cfg->poller && !dp_snd_writable(ab, &err))
		return -EAGAIN;	/* asleep in poll() */
	len = c.lens[c.sent] ? c.lens[c.sent] : c.cfg->fixed ? c.cfg->fixed : c_size(max);
	c.lens[c.sent] = len;
	memcpy(w_payload, &c.sent, sizeof(c.sent));
	if (len > dp_max_msg(A->node) || c.cfg->blocking) {
		/* a large message: its first fragment as any, the rest waits */
		kmock_wait_hook = c_wait_hook;
		kmock_wait_rounds = C_STALL_MS;
	}
	err = dp_snd_send(ab, w_payload, len, !c.cfg->blocking);
	kmock_wait_hook = NULL;
	if (!err) {
		c.sent++;
		c.progress = jiffies;
	}
	return err;
}

/*
 * DP_CHAOS_LINK=DROP,DUP,REORDER,HICCUP (percent, percent, percent, per
 * million ms) replaces the tests' link, to study recovery (0,0,0,0: none).
 */
static void c_link_env(struct c_cfg *cfg)
{
	const char *e = getenv("DP_CHAOS_LINK");

	if (e && sscanf(e, "%u,%u,%u,%u", &cfg->drop, &cfg->dup, &cfg->reorder,
			&cfg->hiccup) != 4)
		printf("#   DP_CHAOS_LINK=%s: not DROP,DUP,REORDER,HICCUP\n", e);
}

static void c_stream(struct c_cfg *cfg)
{
	int err = 0;

	c_link_env(cfg);

	memset(&c, 0, sizeof(c));
	c.cfg = cfg;
	c.rnd = cfg->seed;
	c.order_rnd = cfg->seed ^ 0x9e3779b97f4a7c15ull;
	c.lens = calloc(cfg->count, sizeof(*c.lens));
	ab = w_pair(cfg->pool, &A, &B);
	if (cfg->frame)
		w.nodes[0].max_msg = w.nodes[1].max_msg = cfg->frame;
	memset(w_payload, 0x5a, sizeof(u32));
	for (u32 i = 4; i < W_PAYLOAD; i++)
		w_payload[i] = (u8)(i * 7 + (i >> 9));
	c.progress = jiffies;
	while (c.got < cfg->count && !c.stalled && !err) {
		/* a goodput run's sender writes all it may; else a few a ms */
		unsigned int burst = cfg->rate ? cfg->count : 1 + c_rand(8);

		while (burst-- && c.sent < cfg->count) {
			err = c_send_one();
			if (err == -EAGAIN)
				err = 0;
			if (err)
				break;
		}
		c_step();
	}
	if (err) {
		CHECK(!err, "message %u: the send failed: %d", c.sent, err);
		c_dump("a send failed");
	}
	if (c.unarmed) {
		CHECK(!c.unarmed, "messages in flight, no timer armed, no work queued");
		c_dump("unarmed");
	} else if (c.stalled) {
		CHECK(!c.stalled, "no progress for %u ms", C_STALL_MS);
		c_dump("stalled");
	}
	CHECK_EQ(c.got, cfg->count);
	CHECK_EQ(c.bad, 0);
	CHECK_EQ(w_stats(A).tx_undelivered, 0);
	CHECK_EQ(w_stats(B).rx_drop_full, 0);
	CHECK((!cfg->drop || c.dropped) && (!cfg->dup || c.duplicated) &&
	      (!cfg->reorder || c.reordered), "the link made the faults asked of it");
	if (unit_failed)
		c_dump("at the end");
	printf("#   seed %llu: %u messages in %lu ms; link passed %lu, dropped %lu, "
	       "duplicated %lu, reordered %lu, %lu hiccups; %u timeouts, %u undone; "
	       "resent %lu going back, %lu for holes; rx_drop_seq %llu\n",
	       (unsigned long long)cfg->seed, c.got, jiffies - 1000000, c.passed,
	       c.dropped, c.duplicated, c.reordered, c.hiccups, w_info(ab).timeouts,
	       w_info(ab).undone, kmock_resent[0], kmock_resent[1],
	       (unsigned long long)w.nodes[1].ctr[DP_CTR_RX_DROP_SEQ]);
	w_teardown();
	while (c.nq)
		free(c.q[--c.nq].data);
	free(c.q);
	free(c.lens);
}

/*
 * Stream @base once per seed: @own's, or DP_CHAOS_SEEDS=N random ones
 * (each printed with its stream), to search for a failure
 * (DP_CHAOS_SEEDS=200 DP_UNIT_ONLY=chaos module/tests/dp_unit).  Stops at
 * the first failure, whose seed reproduces it: DP_CHAOS_SEED=N runs seed N.
 */
static void c_runs(const struct c_cfg *base, const u64 *own, unsigned int n_own)
{
	const char *e = getenv("DP_CHAOS_SEEDS"), *one = getenv("DP_CHAOS_SEED");
	unsigned int i, n = e ? (unsigned int)strtoul(e, NULL, 10) : one ? 1 : n_own;
	u64 r = (u64)time(NULL) | 1;

	for (i = 0; i < n && !unit_failed; i++) {
		struct c_cfg cfg = *base;

		cfg.seed = e ? unit_rand(&r) >> 20 : one ? strtoull(one, NULL, 10) : own[i];
		c_stream(&cfg);
	}
}

/* rel_stream's: one-frame messages under drop=5,dup=2,reorder=5 (+1 corrupt). */
static void test_chaos_stream(void)
{
	/* the last stood still with no deadline armed before d0ada97 (and SACK) */
	static const u64 seeds[] = { 42, 7, 1234567, 14956475593426 };
	static const struct c_cfg cfg = {
		.count = 20000, .small_max = 1400, .large_max = 1400, .pool = 256 * 1024,
		.drop = 6, .dup = 2, .reorder = 5, .hiccup = 200,
	};

	c_runs(&cfg, seeds, ARRAY_SIZE(seeds));
}

/*
 * rel_stream's and make soak's over virtio-net: its 9000-byte frames
 * carry messages of up to 8952 bytes whole, so few fit the 256 KiB pool's
 * credit and the sender waits for it often.
 */
static void test_chaos_jumbo(void)
{
	/* the last two stand still with no deadline armed without d0ada97's fix */
	static const u64 seeds[] = { 7, 11829697809821, 8186726837463 };
	static const struct c_cfg cfg = {
		.count = 20000, .small_max = 8952, .large_max = 8952, .frame = 8952,
		.pool = 256 * 1024, .drop = 6, .dup = 2, .reorder = 5, .hiccup = 200,
	};

	c_runs(&cfg, seeds, ARRAY_SIZE(seeds));
}

/*
 * test_chaos_jumbo's stream from another kind of writer: @blocking, make
 * soak's, whose write() sleeps until the session takes it (a writer the
 * congestion window held back once slept past the credit it lacked with
 * no probe due, and the stream stood still when the window update that
 * followed was lost: a 6.12 virtio-net soak, after 752,348 messages); or
 * else an event loop's (an MPI progress engine, io_uring's poll), which
 * writes only when poll() says POLLOUT, then until EAGAIN: between its
 * writes the session alone must bring the credit back, as a poller has no
 * probe out.
 */
static void c_jumbo_writer(bool blocking)
{
	static const u64 seeds[] = { 7, 42, 1234567 };
	struct c_cfg cfg = {
		.count = 20000, .small_max = 8952, .large_max = 8952, .frame = 8952,
		.pool = 256 * 1024, .drop = 6, .dup = 2, .reorder = 5, .hiccup = 200,
		.blocking = blocking, .poller = !blocking,
	};

	c_runs(&cfg, seeds, ARRAY_SIZE(seeds));
}

static void test_chaos_jumbo_blocking(void)
{
	c_jumbo_writer(true);
}

static void test_chaos_jumbo_poller(void)
{
	c_jumbo_writer(false);
}

/* rel_large's kind: a mix with messages of up to 64 KiB, in fragments. */
static void test_chaos_large(void)
{
	static const u64 seeds[] = { 43, 8, 7654321 };
	static const struct c_cfg cfg = {
		.count = 3000, .small_max = 1400, .large_pct = 20, .large_max = 65536,
		.pool = 256 * 1024, .drop = 6, .dup = 2, .reorder = 5, .hiccup = 200,
	};

	c_runs(&cfg, seeds, ARRAY_SIZE(seeds));
}

/* rel_large's: 1 B to 1 MiB, log-uniform, into a pool of 4 MiB. */
static void test_chaos_huge(void)
{
	static const u64 seeds[] = { 44 };
	static const struct c_cfg cfg = {
		.count = 300, .large_max = 1u << 20, .log_sizes = true, .pool = 4u << 20,
		.drop = 6, .dup = 2, .reorder = 5, .hiccup = 200,
	};

	c_runs(&cfg, seeds, ARRAY_SIZE(seeds));
}

/*
 * Goodput by message size and loss over a link of DP_CHAOS_RATE (10)
 * frames a millisecond each way (about 14 MB/s of 1400-byte frames, near
 * what two TCG guests move), 1 ms of latency, a reader that takes all
 * there is: what share of the link dp's windows, credit and loss recovery
 * use; and 1024-byte messages on jumbo frames, as the reliability report
 * sends between guests (each its own frame, a ninth of a full one).
 * Printed, not asserted (a model, not a measurement); asserted is only
 * that every message arrives.  DP_CHAOS_LINK replaces the losses.
 */
static void test_chaos_bw(void)
{
	static const struct { u32 size, frame; } runs[] = {
		{ 1024, 8952 },		/* dpperf's messages on jumbo frames */
		{ 1400, 1400 }, { 65536, 1400 }, { 1048576, 1400 },
	};
	static const u32 losses[] = { 0, 1, 5 };
	const char *e = getenv("DP_CHAOS_RATE");
	u32 rate = e ? (u32)strtoul(e, NULL, 10) : 10;
	unsigned int i, l;

	for (l = 0; l < ARRAY_SIZE(losses); l++) {
		for (i = 0; i < ARRAY_SIZE(runs) && !unit_failed; i++) {
			u32 size = runs[i].size;
			u32 frames = dp_frag_count(size, runs[i].frame);
			struct c_cfg cfg = {
				.seed = 45, .count = 6000 / frames + 4,
				.fixed = size, .large_max = 1u << 20,
				.pool = 4u << 20, .rate = rate, .steady = true,
				.drop = losses[l], .frame = runs[i].frame,
			};
			unsigned long ms;

			c_stream(&cfg);
			ms = jiffies - 1000000;
			printf("#   goodput, %u%% loss, %7u B on %4u-byte frames: %5.1f MB/s, "
			       "the link %3.0f%% busy with new and resent DATA\n",
			       cfg.drop, size, runs[i].frame,
			       (double)c.bytes / ms / 1000,
			       100.0 * c.data_frames / ((double)rate * ms));
		}
	}
}

const struct unit_test chaos_tests[] = {
	{ "chaos: 20000 one-frame messages over a faulty link, 4 seeds: all, in order, no stall",
	  test_chaos_stream },
	{ "chaos: 20000 messages of up to 8952 B on 9000-byte frames, 3 seeds: all, in order, "
	  "no stall", test_chaos_jumbo },
	{ "chaos: the same from a writer that sleeps in each write, 3 seeds: all, in order, "
	  "no stall", test_chaos_jumbo_blocking },
	{ "chaos: the same from a writer that waits in poll(), 3 seeds: all, in order, no stall",
	  test_chaos_jumbo_poller },
	{ "chaos: 3000 messages of up to 64 KiB over a faulty link, 3 seeds: all, in order, no stall",
	  test_chaos_large },
	{ "chaos: 300 messages of 4 B to 1 MiB over a faulty link: all, in order, no stall",
	  test_chaos_huge },
	{ "chaos: goodput by size and loss over a rate-limited link, printed; all arrive",
	  test_chaos_bw },
	{ NULL, NULL },
};
