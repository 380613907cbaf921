// SPDX-License-Identifier: GPL-2.0
/*
 * Large messages, kernel-agnostic (see dp_frag.h): how a sender cuts a
 * message into DATA fragments, what a message costs in credit, the
 * largest message a pool takes, and the receiver's check of each fragment
 * against the message its session has open.  Every bad fragment is a
 * counted drop; bytes are only ever copied where dp_ring_fill_at() says,
 * which refuses anything outside the message's token.
 */
#include "dp_frag.h"

u32 dp_frag_count(u32 len, u32 frame)
{
	u64 rest;

	if (len <= frame)
		return 1;
	if (frame <= DP_FRAG_TOTAL_LEN)
		return 0;
	/* The first carries the length and frame - 4 bytes, the others frame. */
	rest = (u64)len - (frame - DP_FRAG_TOTAL_LEN);
	return (u32)(1 + (rest + frame - 1) / frame);
}

int dp_frag_get(u32 len, u32 frame, u32 i, struct dp_frag *f)
{
	u32 n = dp_frag_count(len, frame);
	u64 off;

	if (i >= n)
		return -EINVAL;
	if (n == 1) {
		*f = (struct dp_frag){ .len = len, .wire_len = len };
		return 0;
	}
	if (i == 0) {
		*f = (struct dp_frag){
			.len = frame - DP_FRAG_TOTAL_LEN, .wire_len = frame,
			.flags = DP_WF_FRAG_FIRST,
		};
		return 0;
	}
	off = (u64)(frame - DP_FRAG_TOTAL_LEN) + (u64)(i - 1) * frame;
	f->off = (u32)off;
	f->len = len - off < frame ? (u32)(len - off) : frame;
	f->wire_len = f->len;
	f->flags = i + 1 == n ? DP_WF_FRAG_LAST : DP_WF_FRAG_MID;
	return 0;
}

void dp_frag_put_total(void *payload, u32 total)
{
	__be32 be = cpu_to_be32(total);

	memcpy(payload, &be, sizeof(be));	/* may be unaligned */
}

/* DP_TOKEN_SPACE() without overflow, saturated. */
static u64 dp_frag_space(u32 len)
{
	return ((u64)sizeof(struct dp_token) + len + DP_TOKEN_ALIGN - 1) &
	       ~(u64)(DP_TOKEN_ALIGN - 1);
}

u32 dp_frag_credit(u32 len, u32 frame)
{
	u64 space = dp_frag_space(len);

	if (len > frame)
		space = 2 * space - DP_TOKEN_ALIGN;
	return space > 0xffffffffu ? 0xffffffffu : (u32)space;
}

u32 dp_frag_max_msg(u32 size, u32 frame)
{
	u32 half = size / 2 - (u32)sizeof(struct dp_token);
	u32 whole = frame < half ? frame : half;
	u64 smax = dp_frag_space(whole), s;

	if (frame <= DP_FRAG_TOTAL_LEN || whole < frame || smax >= size)
		return whole;
	/* 2 s - DP_TOKEN_ALIGN <= size - smax, s a multiple of DP_TOKEN_ALIGN */
	s = (((u64)size - smax + DP_TOKEN_ALIGN) / 2) & ~(u64)(DP_TOKEN_ALIGN - 1);
	if (s < dp_frag_space(frame + 1))
		return whole;
	s -= sizeof(struct dp_token);
	return s < half ? (u32)s : half;
}

u32 dp_frag_total(const void *msg)
{
	__be32 be;

	memcpy(&be, msg, sizeof(be));	/* may be unaligned */
	return be32_to_cpu(be);
}

static int dp_frag_parse_first(const struct dp_msg_hdr *h,
			       const struct dp_payload *msg, u32 max,
			       struct dp_frag_in *in)
{
	u8 total[DP_FRAG_TOTAL_LEN];

	if (h->len <= DP_FRAG_TOTAL_LEN)
		return DP_CTR_RX_DROP_LEN;
	dp_payload_copy(msg, 0, total, sizeof(total));
	in->total = dp_frag_total(total);
	in->off = 0;
	in->len = h->len - DP_FRAG_TOTAL_LEN;
	in->msg = msg;
	in->msg_off = DP_FRAG_TOTAL_LEN;
	if (in->total <= in->len)	/* nothing would follow */
		return DP_CTR_RX_DROP_LEN;
	return in->total > max ? DP_CTR_RX_DROP_TOO_BIG : 0;
}

/* A middle or last fragment continues the open message, never past it. */
static int dp_frag_parse_next(const struct dp_frag_rx *st,
			      const struct dp_msg_hdr *h,
			      const struct dp_payload *msg,
			      struct dp_frag_in *in)
{
	u32 left = st->fill.len - st->got;

	in->total = st->fill.len;
	in->off = st->got;
	in->len = h->len;
	in->msg = msg;
	in->msg_off = 0;
	if (st->got > st->fill.len || h->len > left)
		return DP_CTR_RX_DROP_LEN;
	if (in->kind == DP_FRAG_MID ? h->len == left : h->len != left)
		return DP_CTR_RX_DROP_LEN;
	return 0;
}

int dp_frag_parse(const struct dp_frag_rx *st, const struct dp_msg_hdr *h,
		  const struct dp_payload *msg, u32 max, struct dp_frag_in *in)
{
	in->kind = (h->flags & DP_WF_FRAG_MASK) / DP_WF_FRAG_FIRST;
	if (in->kind != DP_FRAG_WHOLE && (h->flags & DP_WF_RAW))
		return DP_CTR_RX_DROP_TYPE;
	if (in->kind == DP_FRAG_WHOLE || in->kind == DP_FRAG_FIRST) {
		if (st->open)
			return DP_CTR_RX_DROP_SEQ;
	} else if (!st->open) {
		return DP_CTR_RX_DROP_SEQ;
	}
	switch (in->kind) {
	case DP_FRAG_WHOLE:
		*in = (struct dp_frag_in){
			.kind = DP_FRAG_WHOLE, .total = h->len, .len = h->len,
			.msg = msg,
		};
		return 0;	/* delivered as before (dp_ring_reserve()) */
	case DP_FRAG_FIRST:
		return dp_frag_parse_first(h, msg, max, in);
	default:
		return dp_frag_parse_next(st, h, msg, in);
	}
}

int dp_frag_rx_put(struct dp_frag_rx *st, struct dp_ring *r,
		   const struct dp_frag_in *in, bool *done)
{
	void *to;
	int err;

	*done = false;
	if (in->kind == DP_FRAG_FIRST) {
		if (st->open)
			return -EINVAL;
		err = dp_ring_open(r, in->total, &st->fill);
		if (err)
			return err;
		st->open = true;
		st->got = 0;
	} else if (in->kind == DP_FRAG_WHOLE || !st->open) {
		return -EINVAL;
	}
	if (in->off != st->got)
		return -EINVAL;
	to = dp_ring_fill_at(r, &st->fill, in->off, in->len);
	if (!to)
		return -EINVAL;
	dp_payload_copy(in->msg, in->msg_off, to, in->len);
	st->got += in->len;
	if (in->kind == DP_FRAG_LAST) {
		if (st->got != st->fill.len || dp_ring_close(r, &st->fill))
			return -EINVAL;
		st->open = false;
		*done = true;
	}
	return 0;
}

bool dp_frag_rx_abort(struct dp_frag_rx *st, struct dp_ring *r)
{
	if (!st->open)
		return false;
	dp_ring_abort(r, &st->fill);
	st->open = false;
	return true;
}
