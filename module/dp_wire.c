// SPDX-License-Identifier: GPL-2.0
/*
 * Wire codec.  Kernel-agnostic: also built by the host unit tests and the
 * libFuzzer target, so it must not touch anything but its arguments.
 */
#include "dp_wire.h"

void dp_wire_encode(struct dp_wire_hdr *w, const struct dp_msg_hdr *h)
{
	w->version = DP_WIRE_VERSION;
	w->type = h->type;
	w->len = cpu_to_be16(h->len);
	w->flags = cpu_to_be16(h->flags);
	w->dup = cpu_to_be16(h->flags & DP_WF_DUP ? h->dup : 0);
	w->dst_nid = cpu_to_be32(h->dst_nid);
	w->src_nid = cpu_to_be32(h->src_nid);
	w->dst_dpid = cpu_to_be32(h->dst_dpid);
	w->src_dpid = cpu_to_be32(h->src_dpid);
	w->src_uid = cpu_to_be32(h->src_uid);
	w->seq = cpu_to_be32(h->seq);
	w->ack = cpu_to_be32(h->ack);
	w->credit = cpu_to_be32(h->credit);
	w->src_inc = cpu_to_be32(h->src_inc);
	w->dst_inc = cpu_to_be32(h->dst_inc);
	w->csum = 0;
}

void dp_wire_encode_from(struct dp_wire_hdr *w, const struct dp_wire_hdr *t,
			 const struct dp_msg_hdr *h)
{
	*w = *t;
	w->len = cpu_to_be16(h->len);
	w->flags = cpu_to_be16(h->flags);
	w->dup = cpu_to_be16(h->flags & DP_WF_DUP ? h->dup : 0);
	w->seq = cpu_to_be32(h->seq);
	w->ack = cpu_to_be32(h->ack);
	w->credit = cpu_to_be32(h->credit);
	w->csum = 0;
}

u32 dp_wire_csum(const struct dp_wire_hdr *w, const void *msg, size_t len)
{
	return dp_wire_csum_crc(w, dp_wire_msg_crc(msg, len));
}

void dp_wire_seal(struct dp_wire_hdr *w, const void *msg, size_t len)
{
	dp_wire_seal_crc(w, dp_wire_msg_crc(msg, len));
}

void dp_wire_seal_crc(struct dp_wire_hdr *w, u32 msg_crc)
{
	w->csum = cpu_to_be32(dp_wire_csum_crc(w, msg_crc));
}

static bool dp_wire_type_known(u8 type)
{
	return type >= DP_WT_DATA && type <= DP_WT_ANNOUNCE;
}

/*
 * DATA carries one message of at least one byte (a write of 0 bytes sends
 * nothing, so only a forger makes an empty one, and readers could not tell
 * it from no message); an ANNOUNCE a struct dp_wire_announce (a later
 * version may append to it); an ACK with DP_WF_SACK its map; other control
 * frames carry none.  Trailing
 * bytes beyond @room are link padding; missing bytes are a bad frame.
 */
static bool dp_wire_len_ok(u8 type, u16 flags, u16 len, size_t room)
{
	if (len > room)
		return false;
	if (type == DP_WT_ANNOUNCE)
		return len >= DP_WIRE_ANNOUNCE_LEN;
	if (type == DP_WT_ACK && (flags & DP_WF_SACK))
		return len == DP_SACK_LEN;
	return type == DP_WT_DATA ? len != 0 : len == 0;
}

/*
 * Every frame names its source node; an ANNOUNCE is to no node and comes
 * from no endpoint, the others are from an endpoint to an endpoint.
 */
static bool dp_wire_addr_ok(const struct dp_msg_hdr *h)
{
	if (!h->src_nid)
		return false;
	if (h->type == DP_WT_ANNOUNCE)
		return !h->dst_nid && !h->dst_dpid && !h->src_dpid;
	return h->dst_nid && h->dst_dpid && h->src_dpid;
}

/* A raw sender numbers its DATA from 1 and skips 0 on wrapping (dp_tx.c). */
static bool dp_wire_seq_ok(const struct dp_msg_hdr *h)
{
	return h->type != DP_WT_DATA || !(h->flags & DP_WF_RAW) || h->seq;
}

/*
 * Fragments of a large message (docs/wire.md) are reliable DATA with
 * DP_WF_FRAG_* bits, checked against the session by dp_frag_parse();
 * raw DATA is never fragmented, so such bits on it make a frame of a type
 * no receiver takes.
 */
static bool dp_wire_frag_ok(const struct dp_msg_hdr *h)
{
	return h->type != DP_WT_DATA || !(h->flags & DP_WF_RAW) ||
	       !(h->flags & DP_WF_FRAG_MASK);
}

int dp_wire_decode(const void *frame, size_t frame_len, struct dp_msg_hdr *h)
{
	struct dp_payload msg;

	if (frame_len < DP_WIRE_HDR_LEN)
		return DP_CTR_RX_DROP_SHORT;
	msg = dp_payload_flat((const u8 *)frame + DP_WIRE_HDR_LEN);
	return dp_wire_decode_parts(frame, frame_len, &msg, h);
}

int dp_wire_decode_parts(const void *hdr, size_t frame_len,
			 const struct dp_payload *msg, struct dp_msg_hdr *h)
{
	struct dp_wire_hdr w;

	if (frame_len < sizeof(w))
		return DP_CTR_RX_DROP_SHORT;
	/* Copy out: the frame may be unaligned, and is read exactly once. */
	memcpy(&w, hdr, sizeof(w));
	if (w.version != DP_WIRE_VERSION)
		return DP_CTR_RX_DROP_VERSION;
	if (!dp_wire_type_known(w.type))
		return DP_CTR_RX_DROP_TYPE;
	h->type = w.type;
	h->len = be16_to_cpu(w.len);
	if (!dp_wire_len_ok(w.type, be16_to_cpu(w.flags), h->len,
			    frame_len - sizeof(w)))
		return DP_CTR_RX_DROP_LEN;
	if (be32_to_cpu(w.csum) !=
	    dp_wire_csum_crc(&w, dp_payload_crc(msg, ~0u, h->len)))
		return DP_CTR_RX_DROP_CSUM;
	h->flags = be16_to_cpu(w.flags);
	h->dup = h->flags & DP_WF_DUP ? be16_to_cpu(w.dup) : 0;
	h->dst_nid = be32_to_cpu(w.dst_nid);
	h->src_nid = be32_to_cpu(w.src_nid);
	h->dst_dpid = be32_to_cpu(w.dst_dpid);
	h->src_dpid = be32_to_cpu(w.src_dpid);
	if (!dp_wire_addr_ok(h))
		return DP_CTR_RX_DROP_BAD_ADDR;
	h->src_uid = be32_to_cpu(w.src_uid);
	h->seq = be32_to_cpu(w.seq);
	h->ack = be32_to_cpu(w.ack);
	h->credit = be32_to_cpu(w.credit);
	h->src_inc = be32_to_cpu(w.src_inc);
	h->dst_inc = be32_to_cpu(w.dst_inc);
	if (!dp_wire_seq_ok(h))
		return DP_CTR_RX_DROP_SEQ;
	if (!dp_wire_frag_ok(h))
		return DP_CTR_RX_DROP_TYPE;
	return 0;
}

int dp_wire_decode_next(const struct dp_payload *msg, size_t frame_len,
			u32 *off, struct dp_msg_hdr *h,
			struct dp_payload *inner)
{
	struct dp_wire_hdr w;
	size_t left;
	int drop;

	/* the first frame's message fit, as its decode checked */
	left = frame_len - DP_WIRE_HDR_LEN - *off;
	if (left < sizeof(w))
		return -1;
	dp_payload_copy(msg, *off, &w, sizeof(w));
	*inner = dp_payload_at(msg, *off + sizeof(w));
	drop = dp_wire_decode_parts(&w, left, inner, h);
	if (!drop)
		*off += sizeof(w) + h->len;
	return drop;
}

void dp_wire_announce_encode(struct dp_wire_announce *a, u32 hold_ms)
{
	a->hold_ms = cpu_to_be32(hold_ms);
	a->reserved = 0;
}

/* The hold an announce asks for, within what receivers keep. */
u32 dp_wire_announce_hold(const void *msg)
{
	struct dp_wire_announce a;
	u32 hold;

	memcpy(&a, msg, sizeof(a));	/* may be unaligned */
	hold = be32_to_cpu(a.hold_ms);
	if (hold < DP_DISC_HOLD_MIN_MS)
		return DP_DISC_HOLD_MIN_MS;
	return hold > DP_DISC_HOLD_MAX_MS ? DP_DISC_HOLD_MAX_MS : hold;
}
