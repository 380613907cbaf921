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

/* Build the header with csum 0; dp_wire_seal() then adds the checksum. */
void dp_wire_encode(struct dp_wire_hdr *w, const struct dp_msg_hdr *h);

/*
 * The same from a template @t, dp_wire_encode() of a header whose
 * session fields (type, addresses, uid, incarnations) are @h's: only the
 * fields that change per frame (len, flags, seq, ack, credit) are encoded.
 */
void dp_wire_encode_from(struct dp_wire_hdr *w, const struct dp_wire_hdr *t,
			 const struct dp_msg_hdr *h);

/* CRC32C over @w (csum taken as 0) and the @len message bytes @msg. */
u32 dp_wire_csum(const struct dp_wire_hdr *w, const void *msg, size_t len);

/* Store the checksum of @w and its message in w->csum. */
void dp_wire_seal(struct dp_wire_hdr *w, const void *msg, size_t len);

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

/* The message of an ANNOUNCE (neighbour discovery) asking for @hold_ms. */
void dp_wire_announce_encode(struct dp_wire_announce *a, u32 hold_ms);

/*
 * The hold in ms the ANNOUNCE message @msg (DP_WIRE_ANNOUNCE_LEN bytes,
 * as dp_wire_decode() checked) asks for, clamped to
 * [DP_DISC_HOLD_MIN_MS, DP_DISC_HOLD_MAX_MS].
 */
u32 dp_wire_announce_hold(const void *msg);

#endif /* _DP_WIRE_H */
