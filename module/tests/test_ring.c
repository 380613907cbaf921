// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the token buffer pool ring (module/dp_ring.c), including
 * long random operation sequences checked against a reference model.
 */
#include <stdlib.h>
#include "unit.h"
#include "../dp_ring.h"
#include "ring_model.h"

/* ---- helpers ---------------------------------------------------------- */

static uint8_t pattern(u32 id, u32 i)
{
	return (uint8_t)(id * 131u + i * 7u + (i >> 8));
}

/* Reserve, fill and commit one message; returns 0 or the drop counter. */
static int push(struct dp_ring *r, u32 len, u32 id)
{
	struct dp_token *t;
	uint8_t *p;
	int err = -1;
	u32 i;

	t = dp_ring_reserve(r, len, &err);
	if (!t)
		return err;
	CHECK((uint8_t *)t >= r->data &&
	      (uint8_t *)t + DP_TOKEN_SPACE(len) <= r->data + r->size,
	      "token at %td space %u outside data area %u",
	      (uint8_t *)t - r->data, DP_TOKEN_SPACE(len), r->size);
	CHECK((((uint8_t *)t - r->data) % DP_TOKEN_ALIGN) == 0, "unaligned token");
	p = (uint8_t *)(t + 1);
	for (i = 0; i < len; i++)
		p[i] = pattern(id, i);
	t->src_nid = id;
	t->src_dpid = ~id;
	t->seq = id;
	dp_ring_commit(r, t, len);
	return 0;
}

/* Check one queued message against the model entry. */
static void check_msg(const struct dp_ring *r, u64 pos, u32 len, u32 id)
{
	const struct dp_token *t = (const void *)(r->data + (pos & (r->size - 1)));
	const uint8_t *p = (const uint8_t *)(t + 1);
	u32 i;

	CHECK_EQ(t->len, len);
	CHECK_EQ(t->flags, 0);
	CHECK_EQ(t->next, (pos + DP_TOKEN_SPACE(len)) & (r->size - 1));
	CHECK_EQ(t->src_nid, id);
	CHECK_EQ(t->src_dpid, (u32)~id);
	CHECK_EQ(t->seq, id);
	for (i = 0; i < len && i < t->len; i++)
		if (p[i] != pattern(id, i)) {
			CHECK(0, "message %u byte %u overwritten", id, i);
			break;
		}
}

static const struct dp_token *dp_ring_at_test(const struct dp_ring *r, u64 pos)
{
	return (const void *)(r->data + (pos & (r->size - 1)));
}

/* Full comparison of ring and model state. */
static void check_state(const struct dp_ring *r, const struct model *m, int deep)
{
	const struct dp_token *h = dp_ring_head(r);
	u32 i;

	CHECK_EQ(r->prod, m->prod);
	CHECK_EQ(r->cons, m->cons);
	CHECK_EQ(r->queued, m->count);
	CHECK(r->prod - r->cons <= r->size, "used %llu > size",
	      (unsigned long long)(r->prod - r->cons));
	/* Free space accounting: exactly size - (prod - cons). */
	CHECK_EQ(r->size - (r->prod - r->cons), m->size - (m->prod - m->cons));
	if (!m->count) {
		CHECK(h == NULL, "head not NULL on empty ring");
		return;
	}
	CHECK(h != NULL, "head NULL with %u queued", m->count);
	if (!h)
		return;
	CHECK(!(h->flags & DP_TOK_WRAP), "cons rests on a wrap token");
	CHECK_EQ((const uint8_t *)h - r->data, m->q[m->head].pos & (r->size - 1));
	for (i = 0; i < (deep ? m->count : 1u); i++) {
		u32 k = (m->head + i) % MODEL_MAX;

		check_msg(r, m->q[k].pos, m->q[k].len, m->q[k].id);
	}
}

static uint8_t *new_area(u32 size)
{
	uint8_t *d = malloc(size);

	memset(d, 0xcc, size);
	return d;
}

/* ---- deterministic tests ---------------------------------------------- */

static void t_ring_init(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);

	dp_ring_init(&r, d, DP_POOL_MIN);
	CHECK(dp_ring_head(&r) == NULL, "new ring not empty");
	CHECK_EQ(r.queued, 0);
	CHECK_EQ(dp_ring_max_msg(&r), DP_POOL_MIN / 2 - 32);
	CHECK_EQ(dp_ring_release(&r, 1), 0);
	CHECK_EQ(sizeof(struct dp_token), 32);
	CHECK_EQ(DP_TOKEN_SPACE(0), 64);
	CHECK_EQ(DP_TOKEN_SPACE(32), 64);
	CHECK_EQ(DP_TOKEN_SPACE(33), 128);
	CHECK_EQ(DP_TOKEN_SPACE(1500), 1536);
	free(d);
}

static void t_ring_basic(void)
{
	static const u32 lens[] = { 1, 64, 1500, 0 };
	struct dp_ring r;
	struct model m;
	uint8_t *d = new_area(DP_POOL_MIN);
	u64 pos;
	u32 i;

	dp_ring_init(&r, d, DP_POOL_MIN);
	model_init(&m, DP_POOL_MIN, 0);
	for (i = 0; i < 4; i++) {
		CHECK_EQ(push(&r, lens[i], i + 1), 0);
		CHECK_EQ(model_push(&m, lens[i], i + 1, &pos), 0);
		check_state(&r, &m, 1);
	}
	CHECK_EQ(r.prod, 64 + 128 + 1536 + 64);
	for (i = 0; i < 4; i++) {
		const struct dp_token *h = dp_ring_head(&r);

		CHECK(h && h->len == lens[i], "head %u len", i);
		CHECK_EQ(dp_ring_release(&r, 1), 1);
		model_pop(&m, 1);
		check_state(&r, &m, 1);
	}
	CHECK(dp_ring_head(&r) == NULL, "not empty after releasing all");
	CHECK_EQ(r.cons, r.prod);
	free(d);
}

static void t_ring_too_big(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);
	u32 max;
	int err = 0;

	dp_ring_init(&r, d, DP_POOL_MIN);
	max = dp_ring_max_msg(&r);
	CHECK(dp_ring_reserve(&r, max + 1, &err) == NULL, "max+1 accepted");
	CHECK_EQ(err, DP_CTR_RX_DROP_TOO_BIG);
	err = 0;
	CHECK(dp_ring_reserve(&r, 0xffffffffu, &err) == NULL, "4G accepted");
	CHECK_EQ(err, DP_CTR_RX_DROP_TOO_BIG);
	CHECK_EQ(r.prod, 0);
	CHECK_EQ(push(&r, max, 1), 0);
	CHECK_EQ(push(&r, max, 2), 0);	/* exactly two halves */
	CHECK_EQ(r.prod, DP_POOL_MIN);
	/* Full and too big: too big wins (it could never fit). */
	err = 0;
	CHECK(dp_ring_reserve(&r, max + 1, &err) == NULL, "accepted");
	CHECK_EQ(err, DP_CTR_RX_DROP_TOO_BIG);
	err = 0;
	CHECK(dp_ring_reserve(&r, 0, &err) == NULL, "0 bytes fit a full ring");
	CHECK_EQ(err, DP_CTR_RX_DROP_FULL);
	free(d);
}

static void t_ring_full(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);
	u32 n = 0, i;
	int err;

	dp_ring_init(&r, d, DP_POOL_MIN);
	/* 1500 bytes take 1536: ten fit in 16384 (15360), the 11th does not. */
	while (push(&r, 1500, n + 1) == 0)
		n++;
	CHECK_EQ(n, DP_POOL_MIN / DP_TOKEN_SPACE(1500));
	CHECK_EQ(r.queued, n);
	err = push(&r, 1500, 99);
	CHECK_EQ(err, DP_CTR_RX_DROP_FULL);
	/* The remaining 1024 bytes still take a smaller message, exactly. */
	CHECK_EQ(push(&r, 993, 49), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(push(&r, 992, 50), 0);
	CHECK_EQ(push(&r, 0, 51), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(r.prod - r.cons, DP_POOL_MIN);
	/* Nothing queued was overwritten by the refused attempts. */
	for (i = 0; i < n; i++) {
		const struct dp_token *h = dp_ring_head(&r);

		CHECK(h != NULL, "head");
		if (!h)
			break;
		check_msg(&r, r.cons, 1500, i + 1);
		CHECK_EQ(dp_ring_release(&r, 1), 1);
		if (i == 0)
			CHECK_EQ(push(&r, 1500, 100), 0);	/* room again */
	}
	free(d);
}

static void t_ring_wrap(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(1024);
	const struct dp_token *w, *h;

	dp_ring_init(&r, d, 1024);
	CHECK_EQ(dp_ring_max_msg(&r), 480);
	CHECK_EQ(push(&r, 300, 1), 0);	/* [0, 384) */
	CHECK_EQ(push(&r, 300, 2), 0);	/* [384, 768) */
	CHECK_EQ(push(&r, 300, 3), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(dp_ring_release(&r, 1), 1);
	CHECK_EQ(r.cons, 384);
	/* 256 bytes left at the tail: wrap token at 768, message at 0. */
	CHECK_EQ(push(&r, 300, 3), 0);
	w = (const void *)(d + 768);
	CHECK(w->flags & DP_TOK_WRAP, "no wrap token at the old tail");
	CHECK_EQ(w->next, 0);
	CHECK_EQ(r.prod, 1024 + 384);
	CHECK_EQ(r.queued, 2);
	/* The message before the wrap points at it. */
	CHECK_EQ(((const struct dp_token *)(d + 384))->next, 768);
	/* Releasing message 2 lands cons past the wrap, on message 3. */
	CHECK_EQ(dp_ring_release(&r, 1), 1);
	CHECK_EQ(r.cons, 1024);
	h = dp_ring_head(&r);
	CHECK(h == (const void *)d, "head not at offset 0");
	if (h) {
		CHECK(!(h->flags & DP_TOK_WRAP), "cons on wrap token");
		check_msg(&r, r.cons, 300, 3);
	}
	CHECK_EQ(dp_ring_release(&r, 1), 1);
	CHECK(dp_ring_head(&r) == NULL, "not empty");
	free(d);
}

static void t_ring_wrap_empty(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(1024);
	struct dp_token *t;
	int err = 0;

	dp_ring_init(&r, d, 1024);
	CHECK_EQ(push(&r, 300, 1), 0);
	CHECK_EQ(push(&r, 300, 2), 0);
	CHECK_EQ(dp_ring_release(&r, 5), 2);
	CHECK_EQ(r.cons, 768);
	/* Empty ring, tail too short: the wrap must not leave cons on it. */
	t = dp_ring_reserve(&r, 300, &err);
	CHECK(t == (void *)d, "message not placed at offset 0");
	CHECK(r.cons % 1024 != 768, "cons rests on the wrap token (cons=%llu)",
	      (unsigned long long)r.cons);
	if (t) {
		memset(t + 1, 0x5a, 300);
		dp_ring_commit(&r, t, 300);
	}
	CHECK_EQ(r.cons, 1024);
	CHECK_EQ(r.queued, 1);
	CHECK(dp_ring_head(&r) == (void *)d, "head");
	CHECK_EQ(dp_ring_release(&r, 1), 1);
	CHECK_EQ(r.cons, r.prod);
	free(d);
}

static void t_ring_release_more(void)
{
	struct dp_ring r;
	uint8_t *d = new_area(4096);

	dp_ring_init(&r, d, 4096);
	CHECK_EQ(push(&r, 10, 1), 0);
	CHECK_EQ(push(&r, 20, 2), 0);
	CHECK_EQ(push(&r, 30, 3), 0);
	CHECK_EQ(dp_ring_release(&r, 0), 0);
	CHECK_EQ(r.queued, 3);
	CHECK_EQ(dp_ring_release(&r, 10), 3);
	CHECK_EQ(r.queued, 0);
	CHECK_EQ(r.cons, r.prod);
	CHECK_EQ(dp_ring_release(&r, 1), 0);
	CHECK_EQ(push(&r, 40, 4), 0);
	CHECK_EQ(dp_ring_release(&r, 0xffffffffu), 1);
	CHECK_EQ(dp_ring_release(&r, 0xffffffffu), 0);
	CHECK_EQ(r.cons, r.prod);
	free(d);
}

static void t_ring_corrupt_token(void)
{
	/* Tokens are kernel-written, but release must never walk past prod. */
	struct dp_ring r;
	uint8_t *d = new_area(4096);

	dp_ring_init(&r, d, 4096);
	CHECK_EQ(push(&r, 10, 1), 0);
	CHECK_EQ(push(&r, 10, 2), 0);
	((struct dp_token *)d)->len = 0xfffffff0u;
	dp_ring_release(&r, 5);
	CHECK(r.cons <= r.prod, "cons %llu past prod %llu",
	      (unsigned long long)r.cons, (unsigned long long)r.prod);
	CHECK(r.queued <= 2, "queued %u", r.queued);
	free(d);
}

/* ---- random sequences against the model -------------------------------- */

static void run_random(u32 size, u64 start, uint64_t seed, int ops)
{
	struct dp_ring r;
	struct model *m = malloc(sizeof(*m));
	uint8_t *d = new_area(size);
	u32 id = 0, max = size / 2 - 32;
	int i, full = 0, wraps = 0;

	dp_ring_init(&r, d, size);
	r.prod = r.cons = start;
	model_init(m, size, start);
	for (i = 0; i < ops && !unit_failed; i++) {
		u64 x = unit_rand(&seed);

		if (x % 100 < 60 && m->count < MODEL_MAX - 1) {
			u32 len;
			u64 pos = 0, old = r.prod;
			int want, got;

			switch ((x >> 8) % 8) {
			case 0: len = 0; break;
			case 1: len = max; break;
			case 2: len = max + 1 + (u32)((x >> 16) % 64); break;
			case 3: len = (u32)((x >> 16) % (max + 1)); break;
			default: len = (u32)((x >> 16) % (max / 4 + 1)); break;
			}
			id++;
			want = model_push(m, len, id, &pos);
			got = push(&r, len, id);
			CHECK(got == want, "op %d push %u: got %d want %d", i, len, got, want);
			if (want == DP_CTR_RX_DROP_FULL)
				full++;
			if (!want && pos != old)
				wraps++;
		} else {
			u32 n = (x >> 8) % 16 == 0 ? 0xffffffffu : (u32)((x >> 8) % 4);
			u32 want, got;

			/* Verify the messages about to leave, then release. */
			check_state(&r, m, 1);
			want = model_pop(m, n);
			got = dp_ring_release(&r, n);
			CHECK(got == want, "op %d release %u: got %u want %u", i, n, got, want);
		}
		check_state(&r, m, (i % 64) == 0);
	}
	CHECK(full > 0, "sequence never filled the ring (weak test)");
	/* 128 B rings hold only 64-byte tokens, which never need a wrap. */
	CHECK(wraps > 0 || size <= 128, "sequence never wrapped (weak test)");
	free(d);
	free(m);
}

static void t_ring_random_small(void)
{
	uint64_t s;

	for (s = 1; s <= 40 && !unit_failed; s++)
		run_random(1024, 0, s * 0x9e3779b97f4a7c15ULL, 5000);
}

static void t_ring_random_sizes(void)
{
	static const u32 sizes[] = { 128, 256, 4096, DP_POOL_MIN, 65536 };
	unsigned int i;

	for (i = 0; i < 5 && !unit_failed; i++)
		run_random(sizes[i], 0, 0xabcdef + i, 20000);
}

static void t_ring_random_high_counters(void)
{
	/* Free-running counters past 2^32 and close to 2^64. */
	run_random(4096, (1ULL << 32) - 3 * 64, 77, 20000);
	run_random(DP_POOL_MIN, 0ULL - (1ULL << 30) - 5 * 64, 78, 20000);
}

/* ---- messages open for fill (large messages) --------------------------- */

/* Open a message of len bytes from sender id (the sender fields set). */
static int open_msg(struct dp_ring *r, u32 len, u32 id, struct dp_ring_fill *f)
{
	int err = dp_ring_open(r, len, f);

	if (err)
		return err;
	CHECK((uint8_t *)f->tok >= r->data &&
	      (uint8_t *)f->tok + DP_TOKEN_SPACE(len) <= r->data + r->size,
	      "open token outside the data area");
	f->tok->src_nid = id;
	f->tok->src_dpid = ~id;
	f->tok->seq = id;
	return 0;
}

/* Fill [from, to) of message id's bytes into f. */
static void fill_part(struct dp_ring *r, const struct dp_ring_fill *f, u32 id,
		      u32 from, u32 to)
{
	uint8_t buf[4096];
	u32 i, n;

	while (from < to) {
		n = to - from < sizeof(buf) ? to - from : (u32)sizeof(buf);
		for (i = 0; i < n; i++)
			buf[i] = pattern(id, from + i);
		CHECK_EQ(dp_ring_fill(r, f, from, buf, n), 0);
		from += n;
	}
}

/* The head message is id of len bytes: check it whole, release it. */
static void take(struct dp_ring *r, u32 len, u32 id)
{
	const struct dp_token *h = dp_ring_head(r);

	CHECK(h != NULL, "no head, expected message %u", id);
	if (!h)
		return;
	CHECK(!(h->flags & (DP_TOK_WRAP | DP_TOK_SKIP)), "head %u flags %#x", id, h->flags);
	check_msg(r, r->cons, len, id);
	CHECK_EQ(dp_ring_release(r, 1), 1);
}

static void t_fill_order(void)
{
	struct dp_ring_slot slots[4];
	struct dp_ring_fill f;
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);

	dp_ring_init(&r, d, DP_POOL_MIN);
	dp_ring_init_fill(&r, slots, 4);
	CHECK_EQ(push(&r, 100, 1), 0);			/* [0, 192) */
	CHECK_EQ(open_msg(&r, 5000, 2, &f), 0);		/* [192, 5248) */
	CHECK_EQ(f.pos, 192);
	CHECK_EQ(dp_ring_pub(&r), 192);
	CHECK_EQ(r.queued, 1);
	fill_part(&r, &f, 2, 0, 1448);
	/* Other senders' messages land behind it, unseen. */
	CHECK_EQ(push(&r, 300, 3), 0);
	CHECK_EQ(push(&r, 1, 4), 0);
	fill_part(&r, &f, 2, 1448, 4000);
	CHECK_EQ(dp_ring_used(&r), 192 + DP_TOKEN_SPACE(5000) + 384 + 64);
	CHECK_EQ(r.prod, 192 + DP_TOKEN_SPACE(5000) + 384 + 64);
	CHECK_EQ(dp_ring_pub(&r), 192);
	CHECK_EQ(r.queued, 1);
	take(&r, 100, 1);
	CHECK(dp_ring_head(&r) == NULL, "an open message is visible");
	CHECK_EQ(dp_ring_release(&r, 10), 0);
	CHECK_EQ(r.cons, 192);
	fill_part(&r, &f, 2, 4000, 5000);
	CHECK_EQ(dp_ring_close(&r, &f), 0);
	CHECK_EQ(dp_ring_pub(&r), r.prod);
	CHECK_EQ(r.queued, 3);
	take(&r, 5000, 2);
	take(&r, 300, 3);
	take(&r, 1, 4);
	CHECK(dp_ring_head(&r) == NULL, "not empty");
	CHECK_EQ(r.cons, r.prod);
	CHECK_EQ(r.nfill, 0);
	free(d);
}

/* Two open messages: the later one closing first shows nothing. */
static void t_fill_two(void)
{
	struct dp_ring_slot slots[2];
	struct dp_ring_fill a, b;
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);

	dp_ring_init(&r, d, DP_POOL_MIN);
	dp_ring_init_fill(&r, slots, 2);
	CHECK_EQ(open_msg(&r, 2000, 1, &a), 0);
	CHECK_EQ(push(&r, 10, 2), 0);
	CHECK_EQ(open_msg(&r, 3000, 3, &b), 0);
	CHECK_EQ(push(&r, 20, 4), 0);
	fill_part(&r, &b, 3, 0, 3000);
	CHECK_EQ(dp_ring_close(&r, &b), 0);
	CHECK_EQ(r.queued, 0);
	CHECK(dp_ring_head(&r) == NULL, "visible past the open message 1");
	CHECK_EQ(push(&r, 30, 5), 0);
	fill_part(&r, &a, 1, 0, 2000);
	CHECK_EQ(dp_ring_close(&r, &a), 0);
	CHECK_EQ(r.queued, 5);
	CHECK_EQ(dp_ring_pub(&r), r.prod);
	take(&r, 2000, 1);
	take(&r, 10, 2);
	take(&r, 3000, 3);
	take(&r, 20, 4);
	take(&r, 30, 5);
	CHECK(dp_ring_head(&r) == NULL, "not empty");

	/* The older closing first shows it and what is behind it, no more. */
	CHECK_EQ(open_msg(&r, 2000, 6, &a), 0);
	CHECK_EQ(push(&r, 10, 7), 0);
	CHECK_EQ(open_msg(&r, 3000, 8, &b), 0);
	CHECK_EQ(push(&r, 20, 9), 0);
	fill_part(&r, &a, 6, 0, 2000);
	CHECK_EQ(dp_ring_close(&r, &a), 0);
	CHECK_EQ(r.queued, 2);
	CHECK_EQ(dp_ring_pub(&r), b.pos);
	take(&r, 2000, 6);
	take(&r, 10, 7);
	CHECK(dp_ring_head(&r) == NULL, "the open message 8 is visible");
	fill_part(&r, &b, 8, 0, 3000);
	CHECK_EQ(dp_ring_close(&r, &b), 0);
	take(&r, 3000, 8);
	take(&r, 20, 9);
	CHECK_EQ(r.cons, r.prod);
	free(d);
}

static void t_fill_abort(void)
{
	struct dp_ring_slot slots[2];
	struct dp_ring_fill a, b;
	const struct dp_token *t;
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);

	dp_ring_init(&r, d, DP_POOL_MIN);
	dp_ring_init_fill(&r, slots, 2);
	/* Aborted at the head, messages behind it: they show, it is skipped. */
	CHECK_EQ(open_msg(&r, 4000, 1, &a), 0);
	fill_part(&r, &a, 1, 0, 1000);
	CHECK_EQ(push(&r, 10, 2), 0);
	CHECK_EQ(dp_ring_abort(&r, &a), 0);
	t = (const void *)d;
	CHECK_EQ(t->flags, DP_TOK_SKIP);
	CHECK_EQ(t->len, 4000);
	CHECK_EQ(t->next, DP_TOKEN_SPACE(4000));
	CHECK_EQ(r.queued, 1);
	CHECK_EQ(r.cons, DP_TOKEN_SPACE(4000));	/* cons passed the skip token */
	take(&r, 10, 2);
	CHECK_EQ(r.cons, r.prod);
	/* Aborted alone: the ring is empty again, its space free. */
	CHECK_EQ(open_msg(&r, 4000, 3, &a), 0);
	CHECK_EQ(dp_ring_abort(&r, &a), 0);
	CHECK_EQ(r.cons, r.prod);
	CHECK(dp_ring_head(&r) == NULL, "an aborted message is visible");
	CHECK_EQ(r.queued, 0);
	/* Aborted behind a message still open, then that one closes. */
	CHECK_EQ(open_msg(&r, 2000, 4, &a), 0);
	CHECK_EQ(open_msg(&r, 2000, 5, &b), 0);
	CHECK_EQ(push(&r, 10, 6), 0);
	CHECK_EQ(dp_ring_abort(&r, &b), 0);
	CHECK_EQ(r.queued, 0);
	fill_part(&r, &a, 4, 0, 2000);
	CHECK_EQ(dp_ring_close(&r, &a), 0);
	CHECK_EQ(r.queued, 2);
	take(&r, 2000, 4);
	/* Releasing message 4 passed the skip token: 6 is at the head. */
	CHECK_EQ(r.cons, b.pos + DP_TOKEN_SPACE(2000));
	take(&r, 10, 6);
	CHECK_EQ(r.cons, r.prod);
	/* Once given up, the handle is dead. */
	CHECK_EQ(dp_ring_abort(&r, &b), -EINVAL);
	CHECK_EQ(dp_ring_close(&r, &b), -EINVAL);
	CHECK_EQ(dp_ring_fill(&r, &b, 0, "x", 1), -EINVAL);
	free(d);
}

/* A large token at the ring's end wraps; cons never rests on the wrap. */
static void t_fill_wrap(void)
{
	struct dp_ring_slot slots[1];
	struct dp_ring_fill f;
	const struct dp_token *w;
	struct dp_ring r;
	uint8_t *d = new_area(8192);

	dp_ring_init(&r, d, 8192);
	dp_ring_init_fill(&r, slots, 1);
	CHECK_EQ(push(&r, 3000, 1), 0);			/* [0, 3072) */
	CHECK_EQ(push(&r, 3000, 2), 0);			/* [3072, 6144) */
	take(&r, 3000, 1);
	take(&r, 3000, 2);
	CHECK_EQ(r.cons, 6144);
	/* Empty ring, 2048 bytes left at the end: wrap, token at 0. */
	CHECK_EQ(open_msg(&r, 4000, 3, &f), 0);
	CHECK(f.tok == (void *)d, "open token not at offset 0");
	w = (const void *)(d + 6144);
	CHECK(w->flags & DP_TOK_WRAP, "no wrap token");
	CHECK_EQ(r.cons, 8192);			/* passed the published wrap */
	CHECK_EQ(dp_ring_pub(&r), 8192);
	CHECK(dp_ring_head(&r) == NULL, "open message visible");
	CHECK_EQ(push(&r, 100, 4), 0);
	fill_part(&r, &f, 3, 0, 4000);
	CHECK_EQ(dp_ring_close(&r, &f), 0);
	take(&r, 4000, 3);
	take(&r, 100, 4);
	CHECK_EQ(r.cons, r.prod);
	/* A whole message that wraps behind an open one waits with it. */
	CHECK_EQ(push(&r, 1900, 5), 0);		/* [8192+4160, +1984) */
	CHECK_EQ(open_msg(&r, 1000, 6, &f), 0);
	CHECK_EQ(push(&r, 1000, 7), 0);		/* wraps */
	CHECK_EQ(dp_ring_pub(&r), f.pos);
	take(&r, 1900, 5);
	CHECK(dp_ring_head(&r) == NULL, "open message visible");
	fill_part(&r, &f, 6, 0, 1000);
	CHECK_EQ(dp_ring_close(&r, &f), 0);
	take(&r, 1000, 6);
	take(&r, 1000, 7);
	CHECK_EQ(r.cons, r.prod);
	CHECK_EQ(r.prod, 2 * 8192 + DP_TOKEN_SPACE(1000));
	free(d);
}

static void t_fill_bound(void)
{
	struct dp_ring_slot slots[2];
	struct dp_ring_fill a, b, c;
	struct dp_ring r;
	uint8_t *d = new_area(DP_POOL_MIN);
	u64 prod;

	dp_ring_init(&r, d, DP_POOL_MIN);
	/* No slots: nothing opens. */
	CHECK_EQ(dp_ring_open(&r, 100, &a), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(r.prod, 0);
	dp_ring_init_fill(&r, slots, 2);
	CHECK_EQ(dp_ring_open(&r, dp_ring_max_msg(&r) + 1, &a), DP_CTR_RX_DROP_TOO_BIG);
	CHECK_EQ(dp_ring_open(&r, 0xffffffffu, &a), DP_CTR_RX_DROP_TOO_BIG);
	CHECK_EQ(open_msg(&r, 2000, 1, &a), 0);
	CHECK_EQ(open_msg(&r, 2000, 2, &b), 0);
	prod = r.prod;
	CHECK_EQ(dp_ring_open(&r, 2000, &c), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(r.prod, prod);
	CHECK_EQ(push(&r, 10, 3), 0);	/* whole messages still land */
	CHECK_EQ(push(&r, 6000, 5), 0);
	/* No room: refused, nothing written. */
	CHECK_EQ(dp_ring_close(&r, &b), 0);
	CHECK_EQ(dp_ring_open(&r, dp_ring_max_msg(&r), &c), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(r.prod, prod + 64 + DP_TOKEN_SPACE(6000));
	CHECK_EQ(open_msg(&r, 2000, 4, &c), 0);	/* b's slot again */
	/* b's old handle does not reach c through the reused slot. */
	CHECK_EQ(dp_ring_fill(&r, &b, 0, "x", 1), -EINVAL);
	CHECK_EQ(dp_ring_abort(&r, &b), -EINVAL);
	CHECK_EQ(dp_ring_abort(&r, &a), 0);
	CHECK_EQ(dp_ring_abort(&r, &c), 0);
	CHECK_EQ(r.nfill, 0);
	CHECK_EQ(r.queued, 3);	/* b, 3 and 5 */
	free(d);
}

/* Every write the filler asks for stays inside the token, or is refused. */
static void t_fill_bad(void)
{
	struct dp_ring_slot slots[1];
	struct dp_ring_fill f, g;
	struct dp_ring r;
	uint8_t *d = new_area(4096), src[256];
	u32 i;

	memset(src, 0x77, sizeof(src));
	dp_ring_init(&r, d, 4096);
	dp_ring_init_fill(&r, slots, 1);
	CHECK_EQ(open_msg(&r, 100, 1, &f), 0);	/* [0, 192): bytes 32..131 */
	CHECK_EQ(dp_ring_fill(&r, &f, 0, src, 100), 0);
	CHECK_EQ(dp_ring_fill(&r, &f, 100, src, 0), 0);
	CHECK_EQ(dp_ring_fill(&r, &f, 99, src, 2), -EINVAL);
	CHECK_EQ(dp_ring_fill(&r, &f, 101, src, 0), -EINVAL);
	CHECK_EQ(dp_ring_fill(&r, &f, 0, src, 101), -EINVAL);
	CHECK_EQ(dp_ring_fill(&r, &f, 1, src, 0xffffffffu), -EINVAL);
	CHECK_EQ(dp_ring_fill(&r, &f, 0xffffffffu, src, 2), -EINVAL);
	g = f;
	g.len = 4000;	/* a handle that lies about its length */
	CHECK_EQ(dp_ring_fill(&r, &g, 100, src, 200), -EINVAL);
	g = f;
	g.pos += 64;
	CHECK_EQ(dp_ring_fill(&r, &g, 0, src, 1), -EINVAL);
	g = f;
	g.pos += 4096;	/* the same offset, another lap */
	CHECK_EQ(dp_ring_fill(&r, &g, 0, src, 1), -EINVAL);
	CHECK_EQ(dp_ring_close(&r, &g), -EINVAL);
	for (i = 32 + 100; i < 4096; i++)
		if (d[i] != 0xcc) {
			CHECK(0, "byte %u written outside the message", i);
			break;
		}
	CHECK_EQ(dp_ring_close(&r, &f), 0);
	CHECK_EQ(dp_ring_close(&r, &f), -EINVAL);
	CHECK_EQ(r.queued, 1);
	free(d);
}

/*
 * Random whole messages, opens, fills, closes, aborts and releases against
 * fmodel (ring_model.h); after every step a reader walks the pool from
 * cons to the published end as user space does: wrap and skip tokens,
 * then exactly the messages the model shows, each one whole.
 */
struct fill_run {
	struct dp_ring r;
	struct fmodel *m;
	struct dp_ring_fill f[8];
	u32 fid[8], nf;
};

static void fill_walk(const struct fill_run *s, int op)
{
	const struct dp_ring *r = &s->r;
	u64 pos = r->cons, pub = dp_ring_pub(r);
	u32 i = 0;

	CHECK_EQ(pub, fmodel_pub(s->m));
	CHECK_EQ(r->cons, s->m->cons);
	CHECK_EQ(r->prod, s->m->tail);
	CHECK_EQ(r->queued, fmodel_visible(s->m));
	if (pos != pub)
		CHECK(!(dp_ring_at_test(r, pos)->flags & (DP_TOK_WRAP | DP_TOK_SKIP)),
		      "op %d: cons rests on a wrap or skip token", op);
	while (pos != pub && !unit_failed) {
		const struct dp_token *t = dp_ring_at_test(r, pos);

		if (t->flags & DP_TOK_WRAP) {
			pos += r->size - (pos & (r->size - 1));
			continue;
		}
		while (i < s->m->n && FM_AT(s->m, i).pos < pos)
			i++;
		CHECK(i < s->m->n && FM_AT(s->m, i).pos == pos &&
		      FM_AT(s->m, i).kind != FM_OPEN,
		      "op %d: reader finds a token at %llu the model has not published",
		      op, (unsigned long long)pos);
		if (unit_failed)
			return;
		if (FM_AT(s->m, i).kind == FM_DEAD)
			CHECK_EQ(t->flags, DP_TOK_SKIP);
		else
			check_msg(r, pos, FM_AT(s->m, i).len, FM_AT(s->m, i).id);
		pos += DP_TOKEN_SPACE(t->len);
		CHECK(pos - r->cons <= pub - r->cons, "op %d: token past pub", op);
	}
}

static void fill_step(struct fill_run *s, uint64_t x, u32 *id, u32 max, int op)
{
	u32 len, k = (u32)(x >> 40) % 8;
	u64 pos = 0;
	int want, got;

	switch (x % 10) {
	case 0: case 1: case 2:	/* a whole message */
		len = (u32)((x >> 8) % (max / 4 + 1));
		want = fmodel_push(s->m, len, ++*id, FM_MSG, &pos);
		got = want < 0 ? 0 : push(&s->r, len, *id);
		CHECK(got == want || want < 0, "op %d push %u: %d, model %d", op, len, got, want);
		break;
	case 3:	/* open a message */
		if (s->nf == 8)
			break;
		len = (u32)((x >> 8) % (max + 1));
		want = fmodel_push(s->m, len, ++*id, FM_OPEN, &pos);
		if (want < 0)
			break;
		got = open_msg(&s->r, len, *id, &s->f[s->nf]);
		CHECK(got == want, "op %d open %u: %d, model %d", op, len, got, want);
		if (!got) {
			CHECK_EQ(s->f[s->nf].pos, pos);
			s->fid[s->nf++] = *id;
		}
		break;
	case 4: case 5: case 6:	/* fill some, close when whole */
	case 7:			/* abort */
		if (k >= s->nf)
			break;
		if (x % 10 == 7) {
			CHECK_EQ(dp_ring_abort(&s->r, &s->f[k]), 0);
			fmodel_end(s->m, s->fid[k], FM_DEAD);
		} else {
			u32 i, done = 0, n = (u32)((x >> 8) % 3000) + 1;

			for (i = 0; i < s->m->n; i++)
				if (FM_AT(s->m, i).id == s->fid[k])
					done = FM_AT(s->m, i).filled;
			n = n < s->f[k].len - done ? n : s->f[k].len - done;
			fill_part(&s->r, &s->f[k], s->fid[k], done, done + n);
			for (i = 0; i < s->m->n; i++)
				if (FM_AT(s->m, i).id == s->fid[k])
					FM_AT(s->m, i).filled = done + n;
			if (done + n < s->f[k].len)
				break;
			CHECK_EQ(dp_ring_close(&s->r, &s->f[k]), 0);
			fmodel_end(s->m, s->fid[k], FM_MSG);
		}
		s->f[k] = s->f[s->nf - 1];
		s->fid[k] = s->fid[--s->nf];
		break;
	default: {	/* release */
		u32 n = (u32)(x >> 8) % 4, w = fmodel_pop(s->m, n);

		CHECK_EQ(dp_ring_release(&s->r, n), w);
		break;
	}
	}
}

static void run_fill_random(u32 size, u64 start, u32 fill_max, uint64_t seed, int ops)
{
	struct dp_ring_slot slots[8];
	struct fill_run *s = calloc(1, sizeof(*s));
	uint8_t *d = new_area(size);
	u32 id = 0, max = size / 2 - 32, closes = 0;
	int i;

	s->m = malloc(sizeof(*s->m));
	dp_ring_init(&s->r, d, size);
	dp_ring_init_fill(&s->r, slots, fill_max);
	s->r.prod = s->r.cons = start;
	fmodel_init(s->m, size, start, fill_max);
	for (i = 0; i < ops && !unit_failed; i++) {
		u32 before = s->nf;

		fill_step(s, unit_rand(&seed), &id, max, i);
		closes += s->nf < before;
		fill_walk(s, i);
	}
	CHECK(closes > 10, "few messages closed or aborted (%u): weak test", closes);
	free(s->m);
	free(s);
	free(d);
}

static void t_fill_random(void)
{
	static const u32 sizes[] = { 4096, 8192, DP_POOL_MIN, 65536 };
	unsigned int i;

	for (i = 0; i < 4 * 3 && !unit_failed; i++)
		run_fill_random(sizes[i % 4], i % 3 == 2 ? (1ULL << 32) - 5 * 64 : i * 64,
				(u32)i % 4 + 1, 0x5eed + i, 20000);
}

const struct unit_test ring_tests[] = {
	{ "ring: init, max_msg, DP_TOKEN_SPACE", t_ring_init },
	{ "ring: reserve/commit/release of 1, 64, 1500, 0 bytes", t_ring_basic },
	{ "ring: too big (max_msg + 1) refused, max_msg fits", t_ring_too_big },
	{ "ring: full refused, queued messages intact, room after release", t_ring_full },
	{ "ring: wrap token, cons skips it", t_ring_wrap },
	{ "ring: wrap on an empty ring never leaves cons on the wrap", t_ring_wrap_empty },
	{ "ring: release of more than queued", t_ring_release_more },
	{ "ring: corrupt token never moves cons past prod", t_ring_corrupt_token },
	{ "ring: 40 random sequences (1 KiB) vs reference model", t_ring_random_small },
	{ "ring: random sequences, sizes 128 B..64 KiB, vs reference model", t_ring_random_sizes },
	{ "ring: random sequences with counters past 2^32", t_ring_random_high_counters },
	{ "ring fill: large message filled with whole messages landing behind it", t_fill_order },
	{ "ring fill: two open messages, closed in either order", t_fill_two },
	{ "ring fill: abort makes a skip token readers and cons pass", t_fill_abort },
	{ "ring fill: a large token wraps at the ring's end", t_fill_wrap },
	{ "ring fill: at most fill_max open, slot reuse, room and size checks", t_fill_bound },
	{ "ring fill: writes outside the token and stale handles refused", t_fill_bad },
	{ "ring fill: random opens/fills/aborts vs the fill model, reader walk", t_fill_random },
	{ NULL, NULL },
};
