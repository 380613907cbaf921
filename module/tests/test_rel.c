// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the reliability arithmetic (module/dp_rel.c), and a model
 * test of the credit claim of docs/reliability.md, section 6: while the
 * receiver grants by these rules, every message that arrives within its
 * sender's credit fits the pool (dp_ring_reserve never says full).
 */
#include <stdlib.h>
#include "unit.h"
#include "../dp_rel.h"
#include "../dp_ring.h"

static void t_rel_seq(void)
{
	CHECK(dp_seq_before(1, 2), "1 < 2");
	CHECK(!dp_seq_before(2, 2), "2 !< 2");
	CHECK(dp_seq_before(0xfffffff0u, 5), "wrap");
	CHECK(!dp_seq_before(5, 0xfffffff0u), "wrap back");
	CHECK_EQ(dp_rx_classify(10, 10), DP_RX_NEXT);
	CHECK_EQ(dp_rx_classify(10, 9), DP_RX_DUP);
	CHECK_EQ(dp_rx_classify(10, 11), DP_RX_GAP);
	CHECK_EQ(dp_rx_classify(0, 0xffffffffu), DP_RX_DUP);
	CHECK_EQ(dp_rx_classify(0xffffffffu, 0), DP_RX_GAP);
	CHECK(dp_credit_allows(100, 100), "exactly the credit");
	CHECK(!dp_credit_allows(101, 100), "one byte over");
	CHECK(dp_credit_allows(0xffffffc0u, 64), "credit past the wrap");
}

static void t_rel_rtt(void)
{
	struct dp_rtt r;
	int i;

	dp_rtt_init(&r, 200000, 20000, 1000000);
	CHECK_EQ(r.rto, 200000);
	CHECK_EQ(dp_rtt_timeout(&r, 1000000), 200000);
	dp_rtt_init(&r, 5, 20000, 1000000);
	CHECK_EQ(r.rto, 20000);
	/* Steady 1 ms samples: rto falls to the floor. */
	for (i = 0; i < 50; i++)
		dp_rtt_sample(&r, 1000, 20000, 1000000);
	CHECK_EQ(r.rto, 20000);
	CHECK(r.srtt >= 900 && r.srtt <= 1100, "srtt %u", r.srtt);
	/* Slow samples: rto = srtt + 4 rttvar, above the floor. */
	dp_rtt_init(&r, 200000, 20000, 1000000);
	dp_rtt_sample(&r, 100000, 20000, 1000000);
	CHECK_EQ(r.srtt, 100000);
	CHECK_EQ(r.rttvar, 50000);
	CHECK_EQ(r.rto, 300000);
	/* Backoff doubles, capped, and a sample clears it. */
	dp_rtt_backoff(&r);
	CHECK_EQ(dp_rtt_timeout(&r, 1000000), 600000);
	dp_rtt_backoff(&r);
	CHECK_EQ(dp_rtt_timeout(&r, 1000000), 1000000);
	for (i = 0; i < 100; i++)
		dp_rtt_backoff(&r);
	CHECK_EQ(dp_rtt_timeout(&r, 1000000), 1000000);
	dp_rtt_sample(&r, 100000, 20000, 1000000);
	CHECK_EQ(r.backoff, 0);
	/* Huge samples stay at the cap, no overflow. */
	dp_rtt_sample(&r, 0xffffffffu, 20000, 1000000);
	CHECK_EQ(r.rto, 1000000);
}

static void t_rel_credit(void)
{
	CHECK_EQ(dp_credit_room(16384, 1536, 0, 0), 16384 - 1536);
	CHECK_EQ(dp_credit_room(16384, 1536, 14848, 0), 0);
	CHECK_EQ(dp_credit_room(16384, 1536, 10000, 10000), 0);
	CHECK_EQ(dp_credit_target(16384, 1536, 1), 14848);
	CHECK_EQ(dp_credit_target(16384, 1536, 2), 7424);
	CHECK_EQ(dp_credit_target(16384, 1536, 100), 1536);
	CHECK_EQ(dp_credit_target(16384, 8192, 1), 8192);
	/* Top up to arrived + target, within the room, whole units. */
	CHECK_EQ(dp_credit_grant(0, 0, 8192, 100000), 8192);
	CHECK_EQ(dp_credit_grant(4096, 0, 8192, 100000), 4096);
	CHECK_EQ(dp_credit_grant(8192, 0, 8192, 100000), 0);
	CHECK_EQ(dp_credit_grant(0, 0, 8192, 1000), 960);
	CHECK_EQ(dp_credit_grant(0, 0, 8192, 0), 0);
	/* Across the u32 wrap of the cumulative counters. */
	CHECK_EQ(dp_credit_grant(0x40u, 0xffffff80u, 8192, 100000), 8192 - 0xc0);
}

/* ---- the model: senders, a link that holds messages, one pool ---- */

#define NPEER	4
#define INFL	256

struct mpeer {
	u32 credit;	/* receiver's view */
	u32 arrived;	/* receiver's view */
	u32 sent;	/* sender's cumulative space */
	u32 infl[INFL];	/* lengths on the link, in order */
	unsigned int head, n;
};

struct model_rx {
	struct dp_ring ring;
	u32 size, smax, npeers, outstanding;
	struct mpeer p[NPEER];
};

static void m_grant(struct model_rx *m, struct mpeer *p)
{
	u32 room = dp_credit_room(m->size, m->smax, m->ring.prod - m->ring.cons,
				  m->outstanding);
	u32 add = dp_credit_grant(p->credit, p->arrived,
				  dp_credit_target(m->size, m->smax, m->npeers), room);

	p->credit += add;
	m->outstanding += add;
}

/* The next message of peer i arrives: it must fit. */
static int m_arrive(struct model_rx *m, unsigned int i)
{
	struct mpeer *p = &m->p[i];
	u32 len = p->infl[p->head], space = DP_TOKEN_SPACE(len);
	struct dp_token *t;
	int err = 0;

	p->head = (p->head + 1) % INFL;
	p->n--;
	t = dp_ring_reserve(&m->ring, len, &err);
	if (!t)
		return err;
	t->seq = i;
	dp_ring_commit(&m->ring, t, len);
	p->arrived += space;
	m->outstanding -= space;
	m_grant(m, p);
	return 0;
}

static void t_rel_credit_model(void)
{
	static uint8_t area[1 << 18] __attribute__((aligned(64)));
	static const u32 maxmsgs[] = { 1448, 8948 };
	uint64_t s = 4242;
	int run;

	for (run = 0; run < 300 && !unit_failed; run++) {
		struct model_rx m;
		u32 maxlen;
		unsigned int i, step, sends = 0;

		memset(&m, 0, sizeof(m));
		m.size = 16384u << (unit_rand(&s) % 5);
		dp_ring_init(&m.ring, area, m.size);
		maxlen = maxmsgs[unit_rand(&s) % 2];
		if (maxlen > dp_ring_max_msg(&m.ring))
			maxlen = dp_ring_max_msg(&m.ring);
		m.smax = DP_TOKEN_SPACE(maxlen);
		m.npeers = 1 + (u32)(unit_rand(&s) % NPEER);
		for (i = 0; i < m.npeers; i++)
			m_grant(&m, &m.p[i]);
		for (step = 0; step < 20000 && !unit_failed; step++) {
			unsigned int op = (unsigned int)(unit_rand(&s) % 8);
			struct mpeer *p = &m.p[unit_rand(&s) % m.npeers];

			if (op < 4) {	/* a sender sends if its credit allows */
				u32 len = (u32)(unit_rand(&s) % (maxlen + 1));
				u32 after = p->sent + DP_TOKEN_SPACE(len);

				if (p->n < INFL && dp_credit_allows(after, p->credit)) {
					p->infl[(p->head + p->n) % INFL] = len;
					p->n++;
					p->sent = after;
					sends++;
				}
			} else if (op < 6) {	/* the link delivers one */
				i = (unsigned int)(p - m.p);
				if (p->n) {
					int err = m_arrive(&m, i);

					CHECK(!err, "run %d step %u: message within credit refused (%d), size %u smax %u used %llu",
					      run, step, err, m.size, m.smax,
					      (unsigned long long)(m.ring.prod - m.ring.cons));
				}
			} else {	/* the reader releases, credit is re-granted */
				dp_ring_release(&m.ring, (u32)(unit_rand(&s) % 4));
				for (i = 0; i < m.npeers; i++)
					m_grant(&m, &m.p[i]);
			}
		}
		CHECK(sends > 500, "run %d: only %u sends: credit stopped flowing (size %u smax %u)",
		      run, sends, m.size, m.smax);
	}
}

const struct unit_test rel_tests[] = {
	{ "rel: sequence comparisons across the wrap, rx verdicts", t_rel_seq },
	{ "rel: rtt estimator, floor, backoff and cap", t_rel_rtt },
	{ "rel: credit room, fair target, grant", t_rel_credit },
	{ "rel: model: 300 runs, messages within credit always fit the pool", t_rel_credit_model },
	{ NULL, NULL },
};
