/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame rules of docs/wire.md, written again from the document (not
 * from dp_wire.c), for the two fuzz oracles (fuzz_wire.c, fuzz_codec.c).
 * @f is a frame's header in wire order.
 */
#ifndef _DP_WIRE_RULES_H
#define _DP_WIRE_RULES_H

#include <stddef.h>
#include <stdint.h>
#include "../dp_wire.h"

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Step 3: DATA carries a message, ANNOUNCE at least its 8 bytes, an ACK
 * with the SACK flag its 16-byte map, the other types nothing.  @f is the
 * header (flags at bytes 4 and 5).
 */
static inline int len_ok(const uint8_t *f, size_t len)
{
	uint8_t type = f[1];

	if (type == DP_WT_ANNOUNCE)
		return len >= 8;
	if (type == DP_WT_ACK && (f[4] & 0x02))	/* flag 0x0200, big-endian */
		return len == 16;
	return type == DP_WT_DATA ? len != 0 : len == 0;
}

/*
 * Step 5: every frame has a source NID; an ANNOUNCE no destination NID
 * and no DPIDs, the others all four.
 */
static inline int addr_ok(const uint8_t *f)
{
	if (!be32(f + 12))
		return 0;
	if (f[1] == DP_WT_ANNOUNCE)
		return !be32(f + 8) && !be32(f + 16) && !be32(f + 20);
	return be32(f + 8) && be32(f + 16) && be32(f + 20);
}

/*
 * The last step: fragment bits (DP_WF_FRAG_*) on raw DATA, which is never
 * fragmented; on reliable DATA they are the session's to check.
 */
static inline int frag_unexpected(const uint8_t *f)
{
	uint16_t flags = (uint16_t)((uint16_t)f[4] << 8 | f[5]);

	return f[1] == DP_WT_DATA && (flags & DP_WF_RAW) && (flags & DP_WF_FRAG_MASK);
}

#endif /* _DP_WIRE_RULES_H */
