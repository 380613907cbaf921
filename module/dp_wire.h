/* SPDX-License-Identifier: GPL-2.0 */
/* Wire codec: builds and parses struct dp_wire_hdr (see docs/wire.md). */
#ifndef _DP_WIRE_H
#define _DP_WIRE_H

#include "dp_agnostic.h"

/* A wire header in host byte order. */
struct dp_msg_hdr {
	u8 type;
	u16 len;
	u32 dst_nid;
	u32 src_nid;
	u32 dst_dpid;
	u32 src_dpid;
	u32 src_uid;
	u32 seq;
	u32 ack;
};

void dp_wire_encode(struct dp_wire_hdr *w, const struct dp_msg_hdr *h);

/*
 * Parse a received frame payload of frame_len bytes.  Returns 0 and fills
 * *h, or the enum dp_counter of the drop reason (always > 0).
 */
int dp_wire_decode(const void *frame, size_t frame_len, struct dp_msg_hdr *h);

#endif /* _DP_WIRE_H */
