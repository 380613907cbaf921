/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Token buffer pool ring arithmetic (layout in uapi/linux/dp.h, part 2).
 * Kernel-agnostic: no locking here; the caller serialises every call on
 * one ring (dp_pool.c holds the pool's lock).
 */
#ifndef _DP_RING_H
#define _DP_RING_H

#include "dp_agnostic.h"

/**
 * struct dp_ring_slot - the ring's record of one message open for fill
 *	(docs/reliability.md, "Large messages"): its token is reserved at
 *	the tail, its fragments are copied in as they arrive, and readers
 *	see nothing of it, nor of anything behind it, until it is closed (a
 *	message) or aborted (a DP_TOK_SKIP token readers pass).
 * @pos: free-running position of its token.
 * @behind: messages completed after it and before the next open one,
 *	which readers see once it and every older open message are done.
 */
struct dp_ring_slot {
	u64 pos;
	u32 behind;
	u32 pad;
};

/**
 * struct dp_ring_fill - the filler's handle of one open message.
 * @tok: its token; the filler writes the sender fields after opening.
 * @pos: the token's position: the key of its slot.
 * @len: the message's whole length.
 */
struct dp_ring_fill {
	struct dp_token *tok;
	u64 pos;
	u32 len;
};

/**
 * struct dp_ring - one pool's token ring.
 * @data: data area, @size bytes.
 * @size: power of two, multiple of DP_TOKEN_ALIGN.
 * @queued: messages readers can see: between cons and dp_ring_pub().
 * @prod: free-running byte counter, end of the last reserved token.
 * @cons: free-running byte counter, the head token.
 * @fill: @fill_max slots for messages open for fill, NULL for none; a
 *	circular array from @fill_head, in ring order.
 * @fill_max: the most messages open at once; an open beyond it is refused.
 * @fill_head: index of the oldest open message's slot.
 * @nfill: messages open.
 *
 * With no message open, what readers see ends at @prod, as before large
 * messages; with one, at the oldest open token (dp_ring_pub()).
 */
struct dp_ring {
	u8 *data;
	u32 size;
	u32 queued;
	u64 prod;
	u64 cons;
	struct dp_ring_slot *fill;
	u32 fill_max;
	u32 fill_head;
	u32 nfill;
};

void dp_ring_init(struct dp_ring *r, void *data, u32 size);
/* Allow up to @n messages open for fill at once, recorded in @slots. */
void dp_ring_init_fill(struct dp_ring *r, struct dp_ring_slot *slots, u32 n);
/* Largest message that can ever fit in this ring. */
u32 dp_ring_max_msg(const struct dp_ring *r);
/* Where what readers may see ends: prod, or the oldest open token. */
u64 dp_ring_pub(const struct dp_ring *r);
/* Bytes taken (wrap padding and open tokens included): prod - cons. */
u64 dp_ring_used(const struct dp_ring *r);
/*
 * Reserve a token buffer for len bytes at the tail, writing a wrap token
 * first if the buffer would not be contiguous.  Returns the token, or NULL
 * with *err = DP_CTR_RX_DROP_FULL or DP_CTR_RX_DROP_TOO_BIG.
 */
struct dp_token *dp_ring_reserve(struct dp_ring *r, u32 len, int *err);
/* Fill in the token after the payload was copied behind it; advance prod. */
void dp_ring_commit(struct dp_ring *r, struct dp_token *t, u32 len);
/*
 * Open a message of @len bytes for fill: its whole token is reserved now
 * (as dp_ring_reserve() would, wrap included) and stays invisible until
 * dp_ring_close() or dp_ring_abort().  Returns 0 and fills @f, or the
 * drop counter: DP_CTR_RX_DROP_TOO_BIG, or DP_CTR_RX_DROP_FULL when the
 * ring has no room or fill_max messages are open already.
 */
int dp_ring_open(struct dp_ring *r, u32 len, struct dp_ring_fill *f);
/*
 * Copy @n bytes to offset @off of the open message @f.  -EINVAL (nothing
 * written) if @f is not open in @r or the bytes would leave its token.
 */
int dp_ring_fill(struct dp_ring *r, const struct dp_ring_fill *f, u32 off,
		 const void *src, u32 n);
/*
 * Where @n bytes go at offset @off of the open message @f, for a caller
 * that copies them itself; NULL if dp_ring_fill() would refuse them.
 */
void *dp_ring_fill_at(struct dp_ring *r, const struct dp_ring_fill *f,
		      u32 off, u32 n);
/* The message is whole: readers see it in ring order.  -EINVAL if not open. */
int dp_ring_close(struct dp_ring *r, const struct dp_ring_fill *f);
/* Give it up: its token becomes DP_TOK_SKIP.  -EINVAL if not open. */
int dp_ring_abort(struct dp_ring *r, const struct dp_ring_fill *f);
/* The head token, or NULL if the ring is empty. */
struct dp_token *dp_ring_head(const struct dp_ring *r);
/* Release up to n messages from the head; returns how many were released. */
u32 dp_ring_release(struct dp_ring *r, u32 n);

#endif /* _DP_RING_H */
