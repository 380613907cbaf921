/* SPDX-License-Identifier: GPL-2.0 */
/* Wire codec: builds and parses struct dp_wire_hdr (see docs/wire.md). */
#ifndef _DP_WIRE_H
#define _DP_WIRE_H

#include "dp_agnostic.h"

/* A wire header in host byte order (without the checksum). */
struct dp_msg_hdr {
	u8 type;
	u16 len;
	u16 flags;
	u16 dup;
	u32 dst_nid;
	u32 src_nid;
	u32 dst_dpid;
	u32 src_dpid;
	u32 src_uid;
	u32 seq;
	u32 ack;
	u32 credit;
	u32 src_inc;
	u32 dst_inc;
};

/**
 * struct dp_payload - a received frame's message bytes.
 * @data: the bytes, contiguous; or NULL: they are in pieces (an skb's
 *	page fragments), read only through @ops from offset @base of @src.
 * @ops: how to read the pieces (the NIC backend's).
 * @src: the NIC's buffer (the skb), for @ops.
 * @base: where the message starts in @src.
 *
 * A frame is never made contiguous to be received (docs/reliability.md,
 * section 7): the checksum and every copy read it where the NIC put it,
 * through dp_payload_crc() and dp_payload_copy().  Offsets and lengths
 * are within the message, which dp_wire_decode_parts() checked.
 */
struct dp_payload {
	const u8 *data;
	const struct dp_payload_ops *ops;
	const void *src;
	u32 base;
};

/**
 * struct dp_payload_ops - reading a message that is in pieces.
 * @copy: copy @len bytes from offset @off of @src to @to.
 * @crc: continue CRC32C @crc (dp_crc32c()) over @len bytes from @off.
 */
struct dp_payload_ops {
	void (*copy)(const void *src, u32 off, void *to, u32 len);
	u32 (*crc)(const void *src, u32 off, u32 len, u32 crc);
};

/* The payload of a contiguous message at @data. */
static inline struct dp_payload dp_payload_flat(const void *data)
{
	return (struct dp_payload){ .data = (const u8 *)data };
}

/* The bytes of @p from offset @off on, as a payload of their own. */
static inline struct dp_payload dp_payload_at(const struct dp_payload *p,
					      u32 off)
{
	struct dp_payload q = *p;

	if (q.data)
		q.data += off;
	q.base += off;
	return q;
}

/* Copy @len bytes from offset @off of message @p to @to. */
static inline void dp_payload_copy(const struct dp_payload *p, u32 off,
				   void *to, u32 len)
{
	if (p->data)
		dp_memcpy(to, p->data + off, len);
	else if (len)
		p->ops->copy(p->src, p->base + off, to, len);
}

/* Continue CRC32C @crc over the first @len bytes of message @p. */
static inline u32 dp_payload_crc(const struct dp_payload *p, u32 crc,
				 u32 len)
{
	if (p->data)
		return dp_crc32c(crc, p->data, len);
	return len ? p->ops->crc(p->src, p->base, len, crc) : crc;
}

/* Build the header with csum 0; dp_wire_seal() then adds the checksum. */
void dp_wire_encode(struct dp_wire_hdr *w, const struct dp_msg_hdr *h);

/*
 * The same from a template @t, dp_wire_encode() of a header whose
 * session fields (type, addresses, uid, incarnations) are @h's: only the
 * fields that change per frame (len, flags, seq, ack, credit) are encoded.
 */
void dp_wire_encode_from(struct dp_wire_hdr *w, const struct dp_wire_hdr *t,
			 const struct dp_msg_hdr *h);

/*
 * The checksum (wire version 3) is the standard CRC32C (initial value and
 * final xor all ones) over the message, then the header up to its csum.
 * The message comes first so that a sender can run the CRC over it once,
 * while it copies it from the user (dp_wire_msg_crc()), and finish it over
 * the header of each transmission (dp_wire_seal_crc()): the first and
 * every resend, whatever ack and credit ride on it.
 */
#define DP_WIRE_CSUM_OFF	(DP_WIRE_HDR_LEN - 4)

/* The CRC32C's state after the @len message bytes @msg. */
static inline u32 dp_wire_msg_crc(const void *msg, size_t len)
{
	return dp_crc32c(~0u, (const u8 *)msg, len);
}

/* The checksum of @w after a message whose CRC state is @msg_crc. */
static inline u32 dp_wire_csum_crc(const struct dp_wire_hdr *w, u32 msg_crc)
{
	return ~dp_crc32c(msg_crc, (const u8 *)w, DP_WIRE_CSUM_OFF);
}

/* The checksum of @w and the @len message bytes @msg. */
u32 dp_wire_csum(const struct dp_wire_hdr *w, const void *msg, size_t len);

/* Store the checksum of @w and its message in w->csum. */
void dp_wire_seal(struct dp_wire_hdr *w, const void *msg, size_t len);

/* The same for a message whose CRC state is @msg_crc (dp_wire_msg_crc()). */
void dp_wire_seal_crc(struct dp_wire_hdr *w, u32 msg_crc);

/*
 * Parse a received frame payload of frame_len bytes.  Returns 0 and fills
 * *h, or the enum dp_counter of the drop reason (always > 0), in the order
 * of docs/wire.md; after its step 5, raw DATA with seq 0 is dropped as
 * DP_CTR_RX_DROP_SEQ.  An ANNOUNCE has src_nid set and dst_nid, dst_dpid
 * and src_dpid 0 (else DP_CTR_RX_DROP_BAD_ADDR), and a message of at least
 * DP_WIRE_ANNOUNCE_LEN bytes (else DP_CTR_RX_DROP_LEN).  Last, DATA with
 * DP_WF_FRAG_* bits is DP_CTR_RX_DROP_TYPE: this version takes no
 * fragments yet.  The message bytes are at frame + DP_WIRE_HDR_LEN.
 */
int dp_wire_decode(const void *frame, size_t frame_len, struct dp_msg_hdr *h);

/*
 * The same for a frame of @frame_len bytes whose header and message are
 * apart: @hdr its first DP_WIRE_HDR_LEN bytes (not read when @frame_len is
 * shorter), @msg the bytes after them.
 */
int dp_wire_decode_parts(const void *hdr, size_t frame_len,
			 const struct dp_payload *msg, struct dp_msg_hdr *h);

/*
 * The next dp frame of a bundle (DP_WF_BUNDLE, docs/wire.md): @msg is the
 * message of the link frame's first dp frame and @frame_len the link
 * frame's length, as dp_wire_decode_parts() had them; *@off is where in
 * @msg the next frame's header starts (the first frame's len, at first).
 * Returns 0 with the frame in *@h, its message in *@inner and *@off past
 * it; -1 if fewer than DP_WIRE_HDR_LEN bytes are left (link padding: the
 * bundle is done); or the drop reason (> 0), after which the rest of the
 * link frame cannot be found: a frame whose check failed says nothing
 * about where the next one starts.
 */
int dp_wire_decode_next(const struct dp_payload *msg, size_t frame_len,
			u32 *off, struct dp_msg_hdr *h,
			struct dp_payload *inner);

/* The message of an ANNOUNCE (neighbour discovery) asking for @hold_ms. */
void dp_wire_announce_encode(struct dp_wire_announce *a, u32 hold_ms);

/*
 * The hold in ms the ANNOUNCE message @msg (DP_WIRE_ANNOUNCE_LEN bytes,
 * as dp_wire_decode() checked) asks for, clamped to
 * [DP_DISC_HOLD_MIN_MS, DP_DISC_HOLD_MAX_MS].
 */
u32 dp_wire_announce_hold(const void *msg);

#endif /* _DP_WIRE_H */
