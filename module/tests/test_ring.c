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
	{ NULL, NULL },
};
