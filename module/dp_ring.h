/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Token buffer pool ring arithmetic (layout in uapi/linux/dp.h, part 2).
 * Kernel-agnostic: no locking here; the caller serialises every call on
 * one ring (dp_pool.c holds the pool's rx_lock).
 */
#ifndef _DP_RING_H
#define _DP_RING_H

#include "dp_agnostic.h"

struct dp_ring {
	u8 *data;	/* data area, size bytes */
	u32 size;	/* power of two, multiple of DP_TOKEN_ALIGN */
	u32 queued;	/* messages between cons and prod */
	u64 prod;	/* free-running byte counter, end of the tail */
	u64 cons;	/* free-running byte counter, the head token */
};

void dp_ring_init(struct dp_ring *r, void *data, u32 size);
/* Largest message that can ever fit in this ring. */
u32 dp_ring_max_msg(const struct dp_ring *r);
/*
 * Reserve a token buffer for len bytes at the tail, writing a wrap token
 * first if the buffer would not be contiguous.  Returns the token, or NULL
 * with *err = DP_CTR_RX_DROP_FULL or DP_CTR_RX_DROP_TOO_BIG.
 */
struct dp_token *dp_ring_reserve(struct dp_ring *r, u32 len, int *err);
/* Fill in the token after the payload was copied behind it; advance prod. */
void dp_ring_commit(struct dp_ring *r, struct dp_token *t, u32 len);
/* The head token, or NULL if the ring is empty. */
struct dp_token *dp_ring_head(const struct dp_ring *r);
/* Release up to n messages from the head; returns how many were released. */
u32 dp_ring_release(struct dp_ring *r, u32 n);

#endif /* _DP_RING_H */
