/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reliability arithmetic (docs/reliability.md): sequence comparisons, the
 * retransmission timeout estimator, the receiver's accept decision and the
 * credit computation.  Kernel-agnostic: no locking, no time source; the
 * callers in dp_snd.c and dp_rcv.c hold the locks and pass the clock in.
 * Built and tested on the host (module/tests/test_rel.c).
 */
#ifndef _DP_REL_H
#define _DP_REL_H

#include "dp_agnostic.h"

/* a - b in the circular u32 space: negative when a is before b. */
static inline s32 dp_seq_diff(u32 a, u32 b)
{
	return (s32)(a - b);
}

static inline bool dp_seq_before(u32 a, u32 b)
{
	return dp_seq_diff(a, b) < 0;
}

/**
 * struct dp_rtt - Jacobson/Karels estimator, all in microseconds.
 * @srtt: smoothed round trip, 0 before the first sample.
 * @rttvar: its mean deviation.
 * @rto: timeout for the next (first) transmission, in [min, max].
 * @backoff: consecutive timeouts; the timeout in force is rto << backoff.
 */
struct dp_rtt {
	u32 srtt;
	u32 rttvar;
	u32 rto;
	u32 backoff;
};

void dp_rtt_init(struct dp_rtt *r, u32 init_us, u32 min_us, u32 max_us);
/* A sample from a message sent once (Karn): new rto, backoff cleared. */
void dp_rtt_sample(struct dp_rtt *r, u32 rtt_us, u32 min_us, u32 max_us);
/* The timeout in force: rto doubled per consecutive timeout, capped. */
u32 dp_rtt_timeout(const struct dp_rtt *r, u32 max_us);
/* One more timeout without progress. */
void dp_rtt_backoff(struct dp_rtt *r);

/* What a receiver does with DATA seq when it expects rcv_nxt. */
enum dp_rx_verdict {
	DP_RX_NEXT,	/* in order: deliver */
	DP_RX_DUP,	/* already delivered: drop, acknowledge again */
	DP_RX_GAP,	/* an earlier message is missing: drop, ask for it */
};

static inline enum dp_rx_verdict dp_rx_classify(u32 rcv_nxt, u32 seq)
{
	s32 d = dp_seq_diff(seq, rcv_nxt);

	return d == 0 ? DP_RX_NEXT : d < 0 ? DP_RX_DUP : DP_RX_GAP;
}

/* Whether cumulative space @after (this message included) is within @credit. */
static inline bool dp_credit_allows(u32 after, u32 credit)
{
	return dp_seq_diff(after, credit) <= 0;
}

/*
 * Room the receiver may still promise: the pool less one largest message
 * (the wrap reserve), less what it holds, less what it promised and has
 * not received yet.  0 when nothing is left.
 */
u32 dp_credit_room(u32 size, u32 smax, u64 used, u32 outstanding);
/* Each sender's window: a fair share of the pool, at least one message. */
u32 dp_credit_target(u32 size, u32 smax, u32 npeers);
/*
 * How much to raise a sender's cumulative credit, given what it has
 * received (@arrived), its target window and the room: towards
 * arrived + target, never beyond the room, in whole DP_TOKEN_ALIGN units.
 */
u32 dp_credit_grant(u32 credit, u32 arrived, u32 target, u32 room);

#endif /* _DP_REL_H */
