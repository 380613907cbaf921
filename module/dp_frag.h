/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Large messages (docs/wire.md, "Fragments"; docs/reliability.md, "Large
 * messages"): a message longer than one frame's payload travels as DATA
 * fragments, one sequence number each; the first carries the message's
 * length and the receiver reserves the whole token then, later fragments
 * are copied in at their offsets, the last closes it.  Kernel-agnostic:
 * no locking (the receiver's caller holds the pool's lock around
 * dp_frag_rx_put() and dp_frag_rx_abort()); built and tested on the host
 * (module/tests/test_frag.c).  The receiver is dp_rcv.c through
 * dp_pool_frag() (dp_pool.c).
 */
#ifndef _DP_FRAG_H
#define _DP_FRAG_H

#include "dp_agnostic.h"
#include "dp_ring.h"
#include "dp_wire.h"

/**
 * struct dp_frag - one fragment of a message, as the sender cuts it.
 * @off: offset of its message bytes in the message.
 * @len: message bytes it carries.
 * @wire_len: the DATA frame's len: @len, plus DP_FRAG_TOTAL_LEN in the first.
 * @flags: its DP_WF_FRAG_* bits (0 for a message sent whole).
 */
struct dp_frag {
	u32 off;
	u32 len;
	u32 wire_len;
	u16 flags;
};

/*
 * Fragments of a message of @len bytes on a link whose DATA frames carry
 * @frame bytes: 1 if it goes whole (len <= frame), else at least 2; 0 if
 * it cannot be cut (frame too small to carry the length and a byte).
 */
u32 dp_frag_count(u32 len, u32 frame);
/* Fragment @i of that message: 0, or -EINVAL if there is no such fragment. */
int dp_frag_get(u32 len, u32 frame, u32 i, struct dp_frag *f);
/* Write the first fragment's DP_FRAG_TOTAL_LEN bytes: @total, big-endian. */
void dp_frag_put_total(void *payload, u32 total);
/* The message's length, the first DP_FRAG_TOTAL_LEN bytes of @payload. */
u32 dp_frag_total(const void *payload);
/*
 * The credit a message of @len bytes costs its first frame (later
 * fragments cost none): DP_TOKEN_SPACE(len) whole, and for a fragmented
 * message twice that less DP_TOKEN_ALIGN, the most its token and the
 * wrap padding it may need can take (docs/reliability.md).
 */
u32 dp_frag_credit(u32 len, u32 frame);
/*
 * The largest message a receiver with a pool of @size bytes accepts from
 * a link of @frame bytes per DATA frame: one whose credit fits the pool
 * less the wrap reserve of a whole frame, and never more than half the
 * pool (dp_ring_max_msg()).
 */
u32 dp_frag_max_msg(u32 size, u32 frame);

/* What a received DATA frame is, from its DP_WF_FRAG_* bits. */
enum dp_frag_kind {
	DP_FRAG_WHOLE,
	DP_FRAG_FIRST,
	DP_FRAG_MID,
	DP_FRAG_LAST,
};

/**
 * struct dp_frag_rx - a receiving session's message open for fill: at
 *	most one per session, since its fragments come in sequence order.
 * @fill: the ring's handle of its token.
 * @got: message bytes received so far.
 * @open: a message is open.
 */
struct dp_frag_rx {
	struct dp_ring_fill fill;
	u32 got;
	bool open;
};

/**
 * struct dp_frag_in - one received fragment, checked by dp_frag_parse().
 * @kind: enum dp_frag_kind.
 * @total: the message's length.
 * @off: where its bytes go in the message.
 * @len: its message bytes.
 * @msg: the frame's message, whose bytes from @msg_off are those.
 * @msg_off: after the length a first fragment carries, else 0.
 */
struct dp_frag_in {
	u32 kind;
	u32 total;
	u32 off;
	u32 len;
	const struct dp_payload *msg;
	u32 msg_off;
};

/* Whether @h carries a first fragment, the one whose length @max limits. */
static inline bool dp_frag_first(const struct dp_msg_hdr *h)
{
	return (h->flags & DP_WF_FRAG_MASK) == DP_WF_FRAG_FIRST;
}

/*
 * Check in-order reliable DATA @h with message @msg against the session's
 * open message @st, for a receiver that takes messages up to @max bytes.
 * Returns 0 and fills @in, or the drop counter: DP_CTR_RX_DROP_TYPE for
 * fragment bits on raw DATA; DP_CTR_RX_DROP_SEQ for a first fragment or
 * a whole message while one is open, or a later fragment with none open;
 * DP_CTR_RX_DROP_LEN for a first fragment too short to hold the length
 * and a byte or whose length would fit one frame, a fragment that runs
 * past the length, a middle one that completes it or a last one that does
 * not; DP_CTR_RX_DROP_TOO_BIG for a length beyond @max.  Only a first
 * fragment's check reads @max (dp_frag_first()).
 */
int dp_frag_parse(const struct dp_frag_rx *st, const struct dp_msg_hdr *h,
		  const struct dp_payload *msg, u32 max, struct dp_frag_in *in);
/*
 * Place fragment @in (dp_frag_parse() said 0; not DP_FRAG_WHOLE) in ring
 * @r: a first one opens the message (the caller then writes the sender
 * fields into st->fill.tok), the last one closes it (*@done true: readers
 * see it).  Returns 0 or the drop counter of dp_ring_open(); nothing
 * changes then.
 */
int dp_frag_rx_put(struct dp_frag_rx *st, struct dp_ring *r,
		   const struct dp_frag_in *in, bool *done);
/*
 * The session ended (failed, reset, closed) or the endpoint unbinds: an
 * open message becomes a token readers skip.  Returns whether there was
 * one (the caller counts it).
 */
bool dp_frag_rx_abort(struct dp_frag_rx *st, struct dp_ring *r);

#endif /* _DP_FRAG_H */
