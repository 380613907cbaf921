// SPDX-License-Identifier: GPL-2.0
/*
 * Token buffer pool ring.  Token buffers are laid out back to back, each
 * DP_TOKEN_SPACE(len) bytes; one that would straddle the end of the data
 * area is preceded by a DP_TOK_WRAP token that pads to the end, so every
 * message is contiguous in the read-only mapping.
 *
 * A message open for fill (dp_ring_open()) holds its whole token from its
 * first fragment on; messages committed meanwhile go behind it.  What
 * readers see (dp_ring_pub(), the prod dp_pool.c publishes) stops at the
 * oldest open token, so they see messages in ring order and each one
 * whole.  An aborted message becomes a DP_TOK_SKIP token.
 *
 * Invariant kept for user space: cons never rests on a wrap or skip token.
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
	r->fill = NULL;
	r->fill_max = 0;
	r->fill_head = 0;
	r->nfill = 0;
}

void dp_ring_init_fill(struct dp_ring *r, struct dp_ring_slot *slots, u32 n)
{
	r->fill = slots;
	r->fill_max = slots ? n : 0;
	r->fill_head = 0;
	r->nfill = 0;
}

u32 dp_ring_max_msg(const struct dp_ring *r)
{
	/* Half the ring: a message never waits for a wrap it cannot get. */
	return r->size / 2 - (u32)sizeof(struct dp_token);
}

u64 dp_ring_pub(const struct dp_ring *r)
{
	return r->nfill ? r->fill[r->fill_head].pos : r->prod;
}

u64 dp_ring_used(const struct dp_ring *r)
{
	return r->prod - r->cons;
}

/* Skip wrap and skip tokens at the head so cons never rests on one. */
static void dp_ring_skip_dead(struct dp_ring *r)
{
	u64 pub = dp_ring_pub(r);

	while (r->cons != pub) {
		struct dp_token *t = dp_ring_at(r, r->cons);
		u64 space = DP_TOKEN_SPACE(t->len);

		if (t->flags & DP_TOK_WRAP)
			space = r->size - dp_ring_off(r, r->cons);
		else if (!(t->flags & DP_TOK_SKIP))
			break;
		/* Only the kernel writes tokens; still, never walk past pub. */
		if (t->len > r->size || space > pub - r->cons)
			space = pub - r->cons;
		WRITE_ONCE(r->cons, r->cons + space);
	}
}

/*
 * The tail for a token of @len bytes, after a wrap token if it would not
 * be contiguous; NULL with *err if it cannot be placed.
 */
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
		dp_ring_skip_dead(r);
	}
	return dp_ring_at(r, r->prod);
}

/* The token header of a message of @len bytes at prod, flags 0. */
static void dp_ring_token(struct dp_ring *r, struct dp_token *t, u32 len)
{
	t->len = len;
	t->flags = 0;
	t->reserved = 0;
	t->reserved2 = 0;
	t->next = dp_ring_off(r, r->prod + DP_TOKEN_SPACE(len));
}

static struct dp_ring_slot *dp_ring_slot(const struct dp_ring *r, u32 j)
{
	return &r->fill[(r->fill_head + j) % r->fill_max];
}

void dp_ring_commit(struct dp_ring *r, struct dp_token *t, u32 len)
{
	dp_ring_token(r, t, len);
	r->prod += DP_TOKEN_SPACE(len);
	if (r->nfill)	/* seen once the open messages before it are done */
		dp_ring_slot(r, r->nfill - 1)->behind++;
	else
		WRITE_ONCE(r->queued, r->queued + 1);
}

int dp_ring_open(struct dp_ring *r, u32 len, struct dp_ring_fill *f)
{
	struct dp_ring_slot *s;
	struct dp_token *t;
	int err = 0;

	if (len > dp_ring_max_msg(r))
		return DP_CTR_RX_DROP_TOO_BIG;
	if (r->nfill >= r->fill_max)
		return DP_CTR_RX_DROP_FULL;
	t = dp_ring_reserve(r, len, &err);
	if (!t)
		return err;
	dp_ring_token(r, t, len);
	f->tok = t;
	f->pos = r->prod;
	f->len = len;
	s = dp_ring_slot(r, r->nfill);
	s->pos = r->prod;
	s->behind = 0;
	s->pad = 0;
	r->nfill++;
	r->prod += DP_TOKEN_SPACE(len);
	return 0;
}

/*
 * The index (from the oldest) of the open message @f, or -1 if @f is not
 * open in @r: a binary search, the slots being in ring order.
 */
static int dp_ring_find(const struct dp_ring *r, const struct dp_ring_fill *f)
{
	u32 lo = 0, hi = r->nfill;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u64 pos = dp_ring_slot(r, mid)->pos;

		if (pos == f->pos)
			return dp_ring_at(r, pos)->len == f->len ? (int)mid : -1;
		/* Live tokens lie within [cons, cons + size): order from cons. */
		if (pos - r->cons < f->pos - r->cons)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

void *dp_ring_fill_at(struct dp_ring *r, const struct dp_ring_fill *f,
		      u32 off, u32 n)
{
	if (dp_ring_find(r, f) < 0 || off > f->len || n > f->len - off)
		return NULL;
	return (u8 *)(dp_ring_at(r, f->pos) + 1) + off;
}

int dp_ring_fill(struct dp_ring *r, const struct dp_ring_fill *f, u32 off,
		 const void *src, u32 n)
{
	void *to = dp_ring_fill_at(r, f, off, n);

	if (!to)
		return -EINVAL;
	dp_memcpy(to, src, n);
	return 0;
}

/*
 * Retire open message @j, a message (@whole) or not.  The oldest one's
 * count and those behind it become visible; a later one's join the
 * count of the open message before it.  Then keep cons off the skip
 * tokens that became visible.
 */
static void dp_ring_retire(struct dp_ring *r, u32 j, bool whole)
{
	u32 seen = dp_ring_slot(r, j)->behind + (whole ? 1 : 0);

	if (j == 0) {
		WRITE_ONCE(r->queued, r->queued + seen);
		r->fill_head = (r->fill_head + 1) % r->fill_max;
	} else {
		dp_ring_slot(r, j - 1)->behind += seen;
		for (; j + 1 < r->nfill; j++)
			*dp_ring_slot(r, j) = *dp_ring_slot(r, j + 1);
	}
	r->nfill--;
	dp_ring_skip_dead(r);
}

int dp_ring_close(struct dp_ring *r, const struct dp_ring_fill *f)
{
	int j = dp_ring_find(r, f);

	if (j < 0)
		return -EINVAL;
	dp_ring_retire(r, (u32)j, true);
	return 0;
}

int dp_ring_abort(struct dp_ring *r, const struct dp_ring_fill *f)
{
	int j = dp_ring_find(r, f);

	if (j < 0)
		return -EINVAL;
	dp_ring_at(r, f->pos)->flags = DP_TOK_SKIP;
	dp_ring_retire(r, (u32)j, false);
	return 0;
}

struct dp_token *dp_ring_head(const struct dp_ring *r)
{
	if (r->cons == dp_ring_pub(r))
		return NULL;
	return dp_ring_at(r, r->cons);
}

u32 dp_ring_release(struct dp_ring *r, u32 n)
{
	u64 pub = dp_ring_pub(r);
	u32 done = 0;

	while (done < n && r->cons != pub) {
		struct dp_token *t = dp_ring_at(r, r->cons);
		u64 space = DP_TOKEN_SPACE(t->len);

		/* Only the kernel writes tokens; still, never walk past pub. */
		if (t->len > r->size || space > pub - r->cons) {
			WRITE_ONCE(r->cons, pub);
			WRITE_ONCE(r->queued, 0);
			break;
		}
		WRITE_ONCE(r->cons, r->cons + space);
		WRITE_ONCE(r->queued, r->queued - 1);
		done++;
		dp_ring_skip_dead(r);
	}
	return done;
}
