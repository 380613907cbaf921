// SPDX-License-Identifier: GPL-2.0
/*
 * Token buffer pool ring.  Token buffers are laid out back to back, each
 * DP_TOKEN_SPACE(len) bytes; one that would straddle the end of the data
 * area is preceded by a DP_TOK_WRAP token that pads to the end, so every
 * message is contiguous in the read-only mapping.
 *
 * Invariant kept for user space: cons never rests on a wrap token.
 */
#include "dp_ring.h"

static u32 dp_ring_off(const struct dp_ring *r, u64 pos)
{
	return (u32)(pos & (r->size - 1));
}

static struct dp_token *dp_ring_at(const struct dp_ring *r, u64 pos)
{
	return (struct dp_token *)(r->data + dp_ring_off(r, pos));
}

void dp_ring_init(struct dp_ring *r, void *data, u32 size)
{
	r->data = data;
	r->size = size;
	WRITE_ONCE(r->queued, 0);
	r->prod = 0;
	WRITE_ONCE(r->cons, 0);
}

u32 dp_ring_max_msg(const struct dp_ring *r)
{
	/* Half the ring: a message never waits for a wrap it cannot get. */
	return r->size / 2 - (u32)sizeof(struct dp_token);
}

/* Skip wrap tokens at the head so cons never rests on one. */
static void dp_ring_skip_wraps(struct dp_ring *r)
{
	while (r->cons != r->prod && (dp_ring_at(r, r->cons)->flags & DP_TOK_WRAP))
		WRITE_ONCE(r->cons, r->cons + r->size - dp_ring_off(r, r->cons));
}

struct dp_token *dp_ring_reserve(struct dp_ring *r, u32 len, int *err)
{
	u32 space, tail_room;
	u64 need;
	struct dp_token *t;

	if (len > dp_ring_max_msg(r)) {
		*err = DP_CTR_RX_DROP_TOO_BIG;
		return NULL;
	}
	space = DP_TOKEN_SPACE(len);
	tail_room = r->size - dp_ring_off(r, r->prod);
	need = space;
	if (space > tail_room)
		need += tail_room;
	if (r->prod - r->cons + need > r->size) {
		*err = DP_CTR_RX_DROP_FULL;
		return NULL;
	}
	if (space > tail_room) {
		t = dp_ring_at(r, r->prod);
		memset(t, 0, sizeof(*t));
		t->flags = DP_TOK_WRAP;
		t->next = 0;
		r->prod += tail_room;
		dp_ring_skip_wraps(r);
	}
	return dp_ring_at(r, r->prod);
}

void dp_ring_commit(struct dp_ring *r, struct dp_token *t, u32 len)
{
	u32 space = DP_TOKEN_SPACE(len);

	t->len = len;
	t->flags = 0;
	t->reserved = 0;
	t->reserved2 = 0;
	t->next = dp_ring_off(r, r->prod + space);
	r->prod += space;
	WRITE_ONCE(r->queued, r->queued + 1);
}

struct dp_token *dp_ring_head(const struct dp_ring *r)
{
	if (r->cons == r->prod)
		return NULL;
	return dp_ring_at(r, r->cons);
}

u32 dp_ring_release(struct dp_ring *r, u32 n)
{
	u32 done = 0;

	while (done < n && r->cons != r->prod) {
		struct dp_token *t = dp_ring_at(r, r->cons);
		u64 space = DP_TOKEN_SPACE(t->len);

		/* Only the kernel writes tokens; still, never walk past prod. */
		if (t->len > r->size || space > r->prod - r->cons) {
			WRITE_ONCE(r->cons, r->prod);
			WRITE_ONCE(r->queued, 0);
			break;
		}
		WRITE_ONCE(r->cons, r->cons + space);
		WRITE_ONCE(r->queued, r->queued - 1);
		done++;
		dp_ring_skip_wraps(r);
	}
	return done;
}
