// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of large messages (module/dp_frag.c): segmentation, credit
 * and the largest message, the receiver's check of every fragment and its
 * fill of the ring, abort, and the credit claim of docs/reliability.md
 * with fragmented messages in a randomized receiver.
 */
#include <stdlib.h>
#include "unit.h"
#include "../dp_frag.h"

static uint8_t byte_of(u32 id, u32 i)
{
	return (uint8_t)(id * 29u + i * 13u + (i >> 9));
}

static uint8_t *area(u32 size)
{
	uint8_t *d = malloc(size);

	memset(d, 0xcc, size);
	return d;
}

static void t_frag_cut(void)
{
	static const u32 frames[] = { 5, 6, 64, 1448, 8948 };
	static const u32 lens[] = { 1, 5, 6, 63, 64, 65, 1447, 1448, 1449, 1452,
				    2896, 4000, 65536, 1048576 };
	unsigned int a, b;

	for (a = 0; a < 5; a++) {
		for (b = 0; b < 14; b++) {
			u32 frame = frames[a], len = lens[b], n, i, off = 0;
			struct dp_frag f;

			n = dp_frag_count(len, frame);
			if (len <= frame) {
				CHECK_EQ(n, 1);
				CHECK_EQ(dp_frag_get(len, frame, 0, &f), 0);
				CHECK(f.off == 0 && f.len == len && f.wire_len == len &&
				      !f.flags, "whole %u/%u", len, frame);
				continue;
			}
			CHECK(n >= 2, "len %u frame %u: %u fragments", len, frame, n);
			for (i = 0; i < n && !unit_failed; i++) {
				CHECK_EQ(dp_frag_get(len, frame, i, &f), 0);
				CHECK_EQ(f.off, off);
				CHECK(f.len >= 1 && f.wire_len <= frame,
				      "len %u frame %u frag %u: %u/%u", len, frame, i,
				      f.len, f.wire_len);
				CHECK_EQ(f.flags, i == 0 ? DP_WF_FRAG_FIRST :
					 i + 1 == n ? DP_WF_FRAG_LAST : DP_WF_FRAG_MID);
				CHECK_EQ(f.wire_len, f.len + (i ? 0 : DP_FRAG_TOTAL_LEN));
				/* Every fragment but the last fills its frame. */
				if (i + 1 < n)
					CHECK_EQ(f.wire_len, frame);
				off += f.len;
			}
			CHECK_EQ(off, len);
			CHECK_EQ(dp_frag_get(len, frame, n, &f), -EINVAL);
		}
	}
	CHECK_EQ(dp_frag_count(1048576, 1448), 725);
	CHECK_EQ(dp_frag_count(5, 4), 0);	/* no room for the length */
	CHECK_EQ(dp_frag_count(0xffffffffu, 5), 1 + (0xffffffffULL - 1 + 4) / 5);
}

static void t_frag_credit(void)
{
	static const u32 sizes[] = { DP_POOL_MIN, 65536, 1u << 21, 1u << 22, DP_POOL_MAX };
	static const u32 frames[] = { 5, 1448, 8948, 65535 };
	unsigned int a, b;

	CHECK_EQ(dp_frag_credit(1448, 1448), DP_TOKEN_SPACE(1448));
	CHECK_EQ(dp_frag_credit(1449, 1448), 2 * DP_TOKEN_SPACE(1449) - DP_TOKEN_ALIGN);
	CHECK_EQ(dp_frag_credit(0xffffffffu, 1448), 0xffffffffu);
	/* A 2 MiB pool on a 1500-byte link takes just under 1 MiB, 4 MiB more. */
	CHECK_EQ(dp_frag_max_msg(1u << 21, 1448), 1047776);
	CHECK(dp_frag_max_msg(1u << 22, 1448) >= 1048576, "4 MiB pool: %u",
	      dp_frag_max_msg(1u << 22, 1448));
	CHECK_EQ(dp_frag_max_msg(DP_POOL_MIN, 4), 4);
	for (a = 0; a < 5; a++) {
		for (b = 0; b < 4; b++) {
			u32 size = sizes[a], frame = frames[b];
			u32 half = size / 2 - 32, m = dp_frag_max_msg(size, frame);
			u32 whole = frame < half ? frame : half;
			u32 room = size - DP_TOKEN_SPACE(whole);

			CHECK(m >= whole && m <= half, "size %u frame %u: max %u", size, frame, m);
			if (m > frame) {
				CHECK(dp_frag_credit(m, frame) <= room,
				      "size %u frame %u: max %u costs %u > %u", size, frame,
				      m, dp_frag_credit(m, frame), room);
				CHECK(m == half || dp_frag_credit(m + 1, frame) > room,
				      "size %u frame %u: max %u not the largest", size, frame, m);
			}
		}
	}
}

/* A receiving session and its pool. */
struct rx {
	struct dp_ring r;
	struct dp_ring_slot slots[4];
	struct dp_frag_rx st;
	uint8_t *d;
};

static void rx_init(struct rx *x, u32 size)
{
	memset(x, 0, sizeof(*x));
	x->d = area(size);
	dp_ring_init(&x->r, x->d, size);
	dp_ring_init_fill(&x->r, x->slots, 4);
}

/* DATA frame's header and message for fragment i of message id. */
static u32 frame_of(u32 id, u32 len, u32 frame, u32 i, struct dp_msg_hdr *h,
		    uint8_t *msg)
{
	struct dp_frag f;
	u32 k, at = 0;

	memset(h, 0, sizeof(*h));
	if (dp_frag_get(len, frame, i, &f))
		return 0;
	h->type = DP_WT_DATA;
	h->flags = f.flags;
	h->len = (u16)f.wire_len;
	if (i == 0 && f.flags) {
		dp_frag_put_total(msg, len);
		at = DP_FRAG_TOTAL_LEN;
	}
	for (k = 0; k < f.len; k++)
		msg[at + k] = byte_of(id, f.off + k);
	return f.wire_len;
}

/* Parse and put one frame; returns the drop counter or 0. */
static int rx_frame(struct rx *x, const struct dp_msg_hdr *h, const uint8_t *msg,
		    u32 max, bool *done)
{
	const struct dp_payload pl = dp_payload_flat(msg);
	struct dp_frag_in in;
	int err = dp_frag_parse(&x->st, h, &pl, max, &in);

	*done = false;
	if (err)
		return err;
	if (in.kind == DP_FRAG_WHOLE)
		return -100;
	err = dp_frag_rx_put(&x->st, &x->r, &in, done);
	if (!err && in.kind == DP_FRAG_FIRST)
		x->st.fill.tok->seq = 77;
	return err;
}

/* A whole message of another sender, straight into the ring. */
static void other(struct rx *x, u32 len, u32 id)
{
	int err = 0;
	struct dp_token *t = dp_ring_reserve(&x->r, len, &err);
	u32 k;

	CHECK(t != NULL, "whole message %u refused: %d", id, err);
	if (!t)
		return;
	for (k = 0; k < len; k++)
		((uint8_t *)(t + 1))[k] = byte_of(id, k);
	t->seq = id;
	dp_ring_commit(&x->r, t, len);
}

/* The head is message id of len bytes, every byte right; release it. */
static void take(struct rx *x, u32 len, u32 id)
{
	const struct dp_token *t = dp_ring_head(&x->r);
	const uint8_t *p;
	u32 k;

	CHECK(t != NULL, "message %u not visible", id);
	if (!t)
		return;
	CHECK_EQ(t->len, len);
	CHECK_EQ(t->flags, 0);
	p = (const uint8_t *)(t + 1);
	for (k = 0; k < len && k < t->len; k++)
		if (p[k] != byte_of(id, k)) {
			CHECK(0, "message %u byte %u", id, k);
			break;
		}
	CHECK_EQ(dp_ring_release(&x->r, 1), 1);
}

static void t_frag_rx_inorder(void)
{
	static uint8_t msg[2048];
	struct dp_msg_hdr h;
	struct rx x;
	u32 i, n, len = 20000, frame = 1448;
	bool done = false;

	rx_init(&x, 65536);
	n = dp_frag_count(len, frame);
	for (i = 0; i < n; i++) {
		CHECK(frame_of(1, len, frame, i, &h, msg) > 0, "frame %u", i);
		CHECK_EQ(rx_frame(&x, &h, msg, dp_frag_max_msg(65536, frame), &done), 0);
		CHECK_EQ(done, i + 1 == n);
		if (i % 3 == 0)
			other(&x, 100 + i, 1000 + i);	/* another session's message */
		if (i + 1 < n)
			CHECK(dp_ring_head(&x.r) == NULL, "visible after fragment %u", i);
	}
	CHECK(!x.st.open, "still open");
	CHECK_EQ(x.r.queued, 1 + (n + 2) / 3);
	CHECK_EQ(dp_ring_head(&x.r)->seq, 77);
	take(&x, len, 1);
	for (i = 0; i < n; i += 3)
		take(&x, 100 + i, 1000 + i);
	CHECK(dp_ring_head(&x.r) == NULL, "more messages than sent");
	free(x.d);
}

/* A frame that must be dropped with @want and change nothing. */
static void bad(struct rx *x, const struct dp_msg_hdr *h, const uint8_t *msg,
		u32 max, int want, const char *what)
{
	struct dp_frag_rx st = x->st;
	u64 prod = x->r.prod, pub = dp_ring_pub(&x->r);
	u32 queued = x->r.queued;
	bool done = true;
	int got = rx_frame(x, h, msg, max, &done);

	CHECK(got == want, "%s: %d, want %d", what, got, want);
	CHECK(!done, "%s: done", what);
	CHECK(x->r.prod == prod && dp_ring_pub(&x->r) == pub && x->r.queued == queued,
	      "%s: the ring changed", what);
	CHECK(st.open == x->st.open && st.got == x->st.got, "%s: the state changed", what);
}

static void t_frag_rx_bad(void)
{
	static uint8_t msg[2048];
	struct dp_msg_hdr h;
	struct rx x;
	u32 len = 5000, frame = 1448, max = 8000, k;
	bool done;

	rx_init(&x, 65536);
	/* Later fragments with nothing open. */
	frame_of(1, len, frame, 1, &h, msg);
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_SEQ, "middle, none open");
	frame_of(1, len, frame, 3, &h, msg);
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_SEQ, "last, none open");
	/* First fragments that do not add up. */
	frame_of(1, len, frame, 0, &h, msg);
	h.len = DP_FRAG_TOTAL_LEN;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "first without a byte");
	h.len = 3;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "first shorter than the length");
	frame_of(1, len, frame, 0, &h, msg);
	dp_frag_put_total(msg, frame - DP_FRAG_TOTAL_LEN);
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "first holding the whole length");
	dp_frag_put_total(msg, 0);
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "first of length 0");
	dp_frag_put_total(msg, max + 1);
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_TOO_BIG, "first beyond the largest");
	dp_frag_put_total(msg, 0xffffffffu);
	bad(&x, &h, msg, 0xffffffffu, DP_CTR_RX_DROP_TOO_BIG, "first beyond the ring");
	frame_of(1, len, frame, 0, &h, msg);
	h.flags |= DP_WF_RAW;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_TYPE, "raw fragment");
	/* Open one, then everything that does not continue it. */
	frame_of(1, len, frame, 0, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, max, &done), 0);
	CHECK(x.st.open, "not open");
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_SEQ, "first while open");
	h.flags = 0;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_SEQ, "whole while open");
	frame_of(1, len, frame, 1, &h, msg);
	h.flags = DP_WF_FRAG_LAST;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "last too early");
	frame_of(1, len, frame, 1, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, max, &done), 0);
	frame_of(1, len, frame, 2, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, max, &done), 0);
	/* 5000 - 1444 - 2 * 1448 = 660 left */
	frame_of(1, len, frame, 3, &h, msg);
	CHECK_EQ(h.len, 660);
	h.len = 661;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "last past the end");
	h.len = 659;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "last short of the end");
	h.len = 660;
	h.flags = DP_WF_FRAG_MID;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "middle completing it");
	h.len = 1448;
	bad(&x, &h, msg, max, DP_CTR_RX_DROP_LEN, "middle past the end");
	/* Nothing was written past the token. */
	for (k = DP_TOKEN_SPACE(len); k < 65536; k++)
		if (x.d[k] != 0xcc) {
			CHECK(0, "byte %u written outside the message", k);
			break;
		}
	frame_of(1, len, frame, 3, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, max, &done), 0);
	CHECK(done, "the right last fragment did not close it");
	take(&x, len, 1);
	/* The put side refuses what parse would have refused. */
	{
		const struct dp_payload pl = dp_payload_flat(msg);
		struct dp_frag_in in = { .kind = DP_FRAG_MID, .len = 1, .msg = &pl };

		CHECK_EQ(dp_frag_rx_put(&x.st, &x.r, &in, &done), -EINVAL);
		in.kind = DP_FRAG_WHOLE;
		CHECK_EQ(dp_frag_rx_put(&x.st, &x.r, &in, &done), -EINVAL);
	}
	free(x.d);
}

static void t_frag_rx_abort(void)
{
	static uint8_t msg[2048];
	struct dp_msg_hdr h;
	struct rx x;
	bool done;

	rx_init(&x, 16384);
	CHECK(!dp_frag_rx_abort(&x.st, &x.r), "aborted with nothing open");
	frame_of(1, 6000, 1448, 0, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, 8000, &done), 0);
	other(&x, 10, 2);
	CHECK(dp_frag_rx_abort(&x.st, &x.r), "nothing aborted");
	CHECK(!x.st.open, "still open");
	take(&x, 10, 2);	/* the sender died mid-message: its token is skipped */
	CHECK(dp_ring_head(&x.r) == NULL, "a partial message is visible");
	/* The next session's first fragment opens afresh. */
	frame_of(3, 6000, 1448, 0, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, 8000, &done), 0);
	CHECK(dp_frag_rx_abort(&x.st, &x.r), "nothing aborted");
	/* No room: the first fragment is refused and nothing opens. */
	other(&x, 8000, 4);
	other(&x, 300, 6);
	frame_of(5, 8100, 1448, 0, &h, msg);
	CHECK_EQ(rx_frame(&x, &h, msg, 8160, &done), DP_CTR_RX_DROP_FULL);
	CHECK(!x.st.open, "open after a refused first fragment");
	take(&x, 8000, 4);
	take(&x, 300, 6);
	CHECK_EQ(rx_frame(&x, &h, msg, 8160, &done), 0);	/* room again */
	CHECK(x.st.open, "not open with room");
	free(x.d);
}

/*
 * The credit claim with large messages (docs/reliability.md): senders
 * send within their credit, charged dp_frag_credit() at the first frame;
 * the receiver grants only within size - smax - used - outstanding, smax
 * a whole frame's space; then every message that arrives gets its token,
 * whatever the wrap padding, while large ones stay open for a while.
 */
#define NSND 3
struct snd {
	u32 credit, sent, arrived;	/* receiver's view: sent == arrived */
	bool open;
	struct dp_frag_rx st;
	u32 left;			/* steps until its open message closes */
};

static void claim_run(u32 size, u32 frame, uint64_t seed, int steps)
{
	struct dp_ring_slot slots[NSND];
	struct snd s[NSND] = { 0 };
	struct dp_ring r;
	uint8_t *d = area(size);
	u32 max = dp_frag_max_msg(size, frame), smax, i, big = 0;
	u32 half = size / 2 - 32, whole = frame < half ? frame : half;
	int n;

	smax = DP_TOKEN_SPACE(whole);
	dp_ring_init(&r, d, size);
	dp_ring_init_fill(&r, slots, NSND);
	for (n = 0; n < steps && !unit_failed; n++) {
		uint64_t x = unit_rand(&seed);
		struct snd *p = &s[x % NSND];
		u64 outstanding = 0, used = dp_ring_used(&r);

		for (i = 0; i < NSND; i++)
			outstanding += s[i].credit - s[i].arrived;
		switch ((x >> 8) % 4) {
		case 0: {	/* a grant within the room */
			u64 taken = used + outstanding + smax;
			u32 room = taken >= size ? 0 : (u32)(size - taken);

			p->credit += room & ~(DP_TOKEN_ALIGN - 1);
			break;
		}
		case 1: {	/* a send that fits its credit arrives */
			u32 len = (x >> 16) % 4 ? (u32)((x >> 24) % whole) + 1 :
				  (u32)((x >> 24) % max) + 1;
			u32 cost = dp_frag_credit(len, frame);
			int err = 0;

			if (p->open || cost > p->credit - p->sent)
				break;
			p->sent += cost;
			p->arrived += cost;
			if (len > frame) {
				err = dp_ring_open(&r, len, &p->st.fill);
				p->st.open = !err;
				p->open = !err;
				p->st.got = 0;
				p->left = (u32)(x >> 48) % 20;
				big++;
			} else {
				struct dp_token *t = dp_ring_reserve(&r, len, &err);

				if (t)
					dp_ring_commit(&r, t, len);
			}
			CHECK(!err, "step %d: a message of %u within credit refused: %d "
			      "(used %llu outstanding %llu)", n, len, err,
			      (unsigned long long)used, (unsigned long long)outstanding);
			break;
		}
		case 2:		/* open messages progress */
			for (i = 0; i < NSND; i++)
				if (s[i].open && !s[i].left--) {
					CHECK_EQ(dp_ring_close(&r, &s[i].st.fill), 0);
					s[i].open = s[i].st.open = false;
				}
			break;
		default:	/* the reader releases */
			dp_ring_release(&r, (u32)(x >> 16) % 4);
			break;
		}
	}
	CHECK(big > 10, "few large messages (%u): weak test", big);
	free(d);
}

static void t_frag_credit_claim(void)
{
	claim_run(65536, 1448, 1, 100000);
	claim_run(65536, 8948, 2, 100000);
	claim_run(DP_POOL_MIN, 1448, 3, 100000);
	claim_run(1u << 20, 1448, 4, 50000);
}

const struct unit_test frag_tests[] = {
	{ "frag: cutting a message: offsets, lengths, flags", t_frag_cut },
	{ "frag: credit of a message and the largest a pool takes", t_frag_credit },
	{ "frag: fragments fill one token, other messages wait behind", t_frag_rx_inorder },
	{ "frag: every malformed fragment is a counted drop, nothing written", t_frag_rx_bad },
	{ "frag: abort of a partial message, a refused first fragment", t_frag_rx_abort },
	{ "frag: credit claim: within credit, large messages always fit", t_frag_credit_claim },
	{ NULL, NULL },
};
