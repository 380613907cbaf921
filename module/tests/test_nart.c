// SPDX-License-Identifier: GPL-2.0
/* Host tests of the NART table (module/dp_nart.c). */
#include <stdlib.h>
#include "unit.h"
#include "../dp_nart.h"

static struct dp_nart_tbl *tbl_new(u32 cap)
{
	struct dp_nart_tbl *t = malloc(dp_nart_tbl_bytes(cap));

	memset(t, 0xdb, dp_nart_tbl_bytes(cap));
	t->n = 0;
	t->cap = cap;
	return t;
}

static struct dp_nart_entry mac(u32 nid, u8 last)
{
	struct dp_nart_entry e;

	memset(&e, 0, sizeof(e));
	e.nid = nid;
	e.alen = 6;
	e.addr[0] = 0x52;
	e.addr[1] = 0x54;
	e.addr[4] = (u8)(nid >> 8);
	e.addr[5] = last;
	return e;
}

static void check_sorted(const struct dp_nart_tbl *t)
{
	u32 i;

	CHECK(t->n <= t->cap, "n %u > cap %u", t->n, t->cap);
	for (i = 1; i < t->n; i++)
		CHECK(t->e[i - 1].nid < t->e[i].nid, "entries %u,%u out of order (%u, %u)",
		      i - 1, i, t->e[i - 1].nid, t->e[i].nid);
}

static void t_nart_bytes(void)
{
	CHECK_EQ(dp_nart_tbl_bytes(0), sizeof(struct dp_nart_tbl));
	CHECK_EQ(dp_nart_tbl_bytes(10),
		 sizeof(struct dp_nart_tbl) + 10 * sizeof(struct dp_nart_entry));
	CHECK(dp_nart_tbl_bytes(DP_NART_MAX) > (size_t)DP_NART_MAX * 17, "too small");
}

static void t_nart_set_find(void)
{
	struct dp_nart_tbl *t = tbl_new(8);
	static const u32 nids[] = { 5, 1, 9, 3, 0xffffffffu, 7 };
	struct dp_nart_entry e;
	const struct dp_nart_entry *f;
	unsigned int i;

	CHECK(dp_nart_find(t, 5) == NULL, "found in empty table");
	for (i = 0; i < 6; i++) {
		e = mac(nids[i], (u8)i);
		CHECK_EQ(dp_nart_set(t, &e), 0);
		check_sorted(t);
	}
	CHECK_EQ(t->n, 6);
	for (i = 0; i < 6; i++) {
		f = dp_nart_find(t, nids[i]);
		CHECK(f != NULL, "nid %u not found", nids[i]);
		if (f) {
			CHECK_EQ(f->nid, nids[i]);
			CHECK_EQ(f->alen, 6);
			CHECK_EQ(f->addr[5], i);
		}
	}
	CHECK(dp_nart_find(t, 0) == NULL, "nid 0 found");
	CHECK(dp_nart_find(t, 2) == NULL, "nid 2 found");
	CHECK(dp_nart_find(t, 10) == NULL, "nid 10 found");
	CHECK(dp_nart_find(t, 0xfffffffeu) == NULL, "nid max-1 found");
	CHECK(dp_nart_find(NULL, 5) == NULL, "NULL table");
	free(t);
}

static void t_nart_replace(void)
{
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry e = mac(3, 1), e2 = mac(3, 2);
	const struct dp_nart_entry *f;

	CHECK_EQ(dp_nart_set(t, &e), 0);
	e2.alen = 8;
	e2.addr[7] = 0x77;
	CHECK_EQ(dp_nart_set(t, &e2), 0);
	CHECK_EQ(t->n, 1);
	f = dp_nart_find(t, 3);
	CHECK(f && f->alen == 8 && f->addr[5] == 2 && f->addr[7] == 0x77, "not replaced");
	free(t);
}

static void t_nart_del(void)
{
	struct dp_nart_tbl *t = tbl_new(8);
	struct dp_nart_entry e;
	u32 nid;

	CHECK_EQ(dp_nart_del(t, 1), -ENOENT);
	for (nid = 10; nid <= 50; nid += 10) {
		e = mac(nid, (u8)nid);
		CHECK_EQ(dp_nart_set(t, &e), 0);
	}
	CHECK_EQ(dp_nart_del(t, 30), 0);	/* middle */
	CHECK_EQ(dp_nart_del(t, 10), 0);	/* first */
	CHECK_EQ(dp_nart_del(t, 50), 0);	/* last */
	CHECK_EQ(dp_nart_del(t, 30), -ENOENT);
	CHECK_EQ(dp_nart_del(t, 35), -ENOENT);
	CHECK_EQ(t->n, 2);
	check_sorted(t);
	CHECK(dp_nart_find(t, 20) && dp_nart_find(t, 20)->addr[5] == 20, "20 lost");
	CHECK(dp_nart_find(t, 40) && dp_nart_find(t, 40)->addr[5] == 40, "40 lost");
	CHECK(!dp_nart_find(t, 30), "30 still there");
	CHECK_EQ(dp_nart_del(t, 20), 0);
	CHECK_EQ(dp_nart_del(t, 40), 0);
	CHECK_EQ(t->n, 0);
	CHECK_EQ(dp_nart_del(t, 40), -ENOENT);
	free(t);
}

static void t_nart_capacity(void)
{
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry e;
	u32 nid;

	for (nid = 1; nid <= 4; nid++) {
		e = mac(nid * 2, (u8)nid);
		CHECK_EQ(dp_nart_set(t, &e), 0);
	}
	e = mac(5, 5);
	CHECK_EQ(dp_nart_set(t, &e), -ENOSPC);
	e = mac(100, 5);
	CHECK_EQ(dp_nart_set(t, &e), -ENOSPC);
	CHECK_EQ(t->n, 4);
	e = mac(4, 0x44);
	CHECK_EQ(dp_nart_set(t, &e), 0);	/* replace works when full */
	CHECK(dp_nart_find(t, 4)->addr[5] == 0x44, "not replaced");
	CHECK(!dp_nart_find(t, 5), "5 inserted");
	check_sorted(t);
	free(t);

	t = tbl_new(0);
	e = mac(1, 1);
	CHECK_EQ(dp_nart_set(t, &e), -ENOSPC);
	free(t);
}

static void t_nart_invalid(void)
{
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry e = mac(0, 1);

	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	e = mac(1, 1);
	e.alen = 0;
	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	e.alen = DP_LLADDR_MAX + 1;
	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	e.alen = 255;
	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	CHECK_EQ(t->n, 0);
	e.alen = DP_LLADDR_MAX;
	CHECK_EQ(dp_nart_set(t, &e), 0);
	e.alen = 1;
	e.nid = 2;
	CHECK_EQ(dp_nart_set(t, &e), 0);
	free(t);
}

/* A Myrinet entry: the NIC address to check, the route to send on. */
static void t_nart_route(void)
{
	static const u8 route[] = { 0x87, 0x80 };
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry e = mac(2, 1);
	const struct dp_nart_entry *f;

	e.rlen = DP_ROUTE_MAX + 1;
	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	e.rlen = 255;
	CHECK_EQ(dp_nart_set(t, &e), -EINVAL);
	CHECK_EQ(t->n, 0);
	e.rlen = sizeof(route);
	memcpy(e.route, route, sizeof(route));
	CHECK_EQ(dp_nart_set(t, &e), 0);
	f = dp_nart_find(t, 2);
	CHECK(f && f->alen == 6 && f->addr[5] == 1, "address kept");
	CHECK(f && f->rlen == 2 && !memcmp(f->route, route, 2), "route kept");
	e = mac(2, 1);		/* replaced by an Ethernet entry: no route */
	CHECK_EQ(dp_nart_set(t, &e), 0);
	f = dp_nart_find(t, 2);
	CHECK(f && f->rlen == 0, "route gone with the replacement");
	e.rlen = DP_ROUTE_MAX;
	CHECK_EQ(dp_nart_set(t, &e), 0);
	free(t);
}

static void t_nart_copy(void)
{
	struct dp_nart_tbl *s = tbl_new(4), *d = tbl_new(8);
	struct dp_nart_entry e;
	u32 i;

	for (i = 1; i <= 4; i++) {
		e = mac(i * 3, (u8)i);
		dp_nart_set(s, &e);
	}
	dp_nart_copy(d, s);
	CHECK_EQ(d->n, 4);
	CHECK_EQ(d->cap, 8);
	CHECK(!memcmp(d->e, s->e, 4 * sizeof(s->e[0])), "entries differ");
	/* The copy is independent and can grow to its own capacity. */
	e = mac(100, 100);
	CHECK_EQ(dp_nart_set(d, &e), 0);
	CHECK_EQ(d->n, 5);
	CHECK_EQ(s->n, 4);
	CHECK(!dp_nart_find(s, 100), "source changed");
	dp_nart_copy(d, NULL);
	CHECK_EQ(d->n, 0);
	CHECK(!dp_nart_find(d, 3), "found after copy of NULL");
	free(s);
	free(d);
}

static void t_nart_random(void)
{
	enum { CAP = 64, RANGE = 100 };
	struct dp_nart_tbl *t = tbl_new(CAP);
	u8 ref[RANGE + 1];	/* 0 = absent, else addr[5] */
	u32 n = 0, i;
	uint64_t s = 4242;
	int op;

	memset(ref, 0, sizeof(ref));
	for (op = 0; op < 100000 && !unit_failed; op++) {
		u32 nid = (u32)(unit_rand(&s) % RANGE) + 1;
		u8 v = (u8)(unit_rand(&s) % 255) + 1;
		struct dp_nart_entry e = mac(nid, v);

		if (unit_rand(&s) % 3) {
			int want = ref[nid] || n < CAP ? 0 : -ENOSPC;

			CHECK_EQ(dp_nart_set(t, &e), want);
			if (!want) {
				n += !ref[nid];
				ref[nid] = v;
			}
		} else {
			CHECK_EQ(dp_nart_del(t, nid), ref[nid] ? 0 : -ENOENT);
			n -= !!ref[nid];
			ref[nid] = 0;
		}
		CHECK_EQ(t->n, n);
		if (op % 97 == 0) {
			check_sorted(t);
			for (i = 1; i <= RANGE; i++) {
				const struct dp_nart_entry *f = dp_nart_find(t, i);

				CHECK(ref[i] ? f && f->addr[5] == ref[i] : !f, "nid %u", i);
			}
		}
	}
	free(t);
}

/* Sizes for each kind of update, from an empty and a small table. */
static void t_nart_need(void)
{
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry e = mac(7, 1), other = mac(8, 1);

	CHECK_EQ(dp_nart_need(NULL, NULL, true), 0);
	CHECK_EQ(dp_nart_need(NULL, NULL, false), 0);
	CHECK_EQ(dp_nart_need(NULL, &e, false), 1);
	dp_nart_set(t, &e);
	CHECK_EQ(dp_nart_need(t, NULL, true), 0);		/* flush */
	CHECK_EQ(dp_nart_need(t, &e, true), 0);		/* flush wins */
	CHECK_EQ(dp_nart_need(t, NULL, false), 1);		/* delete */
	CHECK_EQ(dp_nart_need(t, &e, false), 1);		/* replace */
	CHECK_EQ(dp_nart_need(t, &other, false), 2);	/* insert */
	free(t);
}

/*
 * One update as dp_nart_update() does it: a new table of the needed
 * capacity (ENOSPC past DP_NART_MAX), the old entries, then the change.
 */
static int update(struct dp_nart_tbl **cur, const struct dp_nart_entry *set, u32 del_nid,
		  bool flush)
{
	u32 cap = dp_nart_need(*cur, set, flush);
	struct dp_nart_tbl *t;
	int err = 0;

	if (cap > DP_NART_MAX)
		return -ENOSPC;
	t = tbl_new(cap);
	if (!flush)
		dp_nart_copy(t, *cur);
	if (set)
		err = dp_nart_set(t, set);
	else if (del_nid)
		err = dp_nart_del(t, del_nid);
	if (err) {
		free(t);
		return err;
	}
	free(*cur);
	*cur = t;
	return 0;
}

/* A table holding DP_NART_MAX entries refuses only an insert. */
static void t_nart_full(void)
{
	struct dp_nart_tbl *t = tbl_new(DP_NART_MAX);
	struct dp_nart_entry e;
	u32 nid;

	for (nid = 1; nid <= DP_NART_MAX; nid++) {
		e = mac(nid * 2, (u8)nid);
		CHECK_EQ(dp_nart_set(t, &e), 0);
	}
	CHECK_EQ(t->n, DP_NART_MAX);
	CHECK_EQ(dp_nart_need(t, NULL, false), DP_NART_MAX);
	e = mac(3, 0);
	CHECK_EQ(update(&t, &e, 0, false), -ENOSPC);		/* insert */
	CHECK(!dp_nart_find(t, 3), "3 inserted");
	e = mac(4, 0x44);
	CHECK_EQ(update(&t, &e, 0, false), 0);			/* replace */
	CHECK(dp_nart_find(t, 4) && dp_nart_find(t, 4)->addr[5] == 0x44, "4 not replaced");
	CHECK_EQ(t->n, DP_NART_MAX);
	CHECK_EQ(update(&t, NULL, 4, false), 0);		/* delete */
	CHECK_EQ(t->n, DP_NART_MAX - 1);
	CHECK(!dp_nart_find(t, 4), "4 not deleted");
	CHECK_EQ(update(&t, NULL, 4, false), -ENOENT);
	e = mac(3, 3);
	CHECK_EQ(update(&t, &e, 0, false), 0);			/* room again */
	CHECK_EQ(t->n, DP_NART_MAX);
	check_sorted(t);
	CHECK_EQ(update(&t, NULL, 0, true), 0);			/* flush */
	CHECK_EQ(t->n, 0);
	CHECK_EQ(t->cap, 0);
	CHECK(!dp_nart_find(t, 2), "found after flush");
	free(t);
}

static struct dp_nart_entry disc(u32 nid, u8 last, unsigned long heard,
				 unsigned long hold)
{
	struct dp_nart_entry e = mac(nid, last);

	e.origin = DP_NART_DISCOVERED;
	e.heard = heard;
	e.hold = hold;
	return e;
}

/* A static entry is never replaced by a learned one, nor a first learned. */
static void t_nart_learn(void)
{
	struct dp_nart_tbl *t = tbl_new(4);
	struct dp_nart_entry s = mac(5, 0x05), d = disc(5, 0x99, 0, 100);

	CHECK_EQ(dp_nart_set(t, &s), 0);
	CHECK_EQ(dp_nart_learn(t, &d), -EEXIST);
	CHECK_EQ(dp_nart_find(t, 5)->addr[5], 0x05);
	CHECK_EQ(dp_nart_find(t, 5)->origin, DP_NART_STATIC);
	d = disc(6, 0x06, 0, 100);
	CHECK_EQ(dp_nart_learn(t, &d), 0);
	d = disc(6, 0x66, 0, 100);
	CHECK_EQ(dp_nart_learn(t, &d), -EEXIST);
	CHECK_EQ(dp_nart_find(t, 6)->addr[5], 0x06);
	CHECK(dp_nart_same_addr(dp_nart_find(t, 6), mac(6, 0x06).addr, 6), "same");
	CHECK(!dp_nart_same_addr(dp_nart_find(t, 6), mac(6, 0x66).addr, 6), "other");
	CHECK(!dp_nart_same_addr(dp_nart_find(t, 6), mac(6, 0x06).addr, 5), "len");
	/* a static entry replaces a discovered one */
	s = mac(6, 0x16);
	CHECK_EQ(dp_nart_set(t, &s), 0);
	CHECK_EQ(dp_nart_find(t, 6)->origin, DP_NART_STATIC);
	CHECK_EQ(dp_nart_find(t, 6)->addr[5], 0x16);
	check_sorted(t);
	free(t);
}

static unsigned int gone_n;
static u32 gone_nid[8];

static void gone(const struct dp_nart_entry *e, void *arg)
{
	CHECK(arg == &gone_n, "arg passed through");
	if (gone_n < 8)
		gone_nid[gone_n] = e->nid;
	gone_n++;
}

/* Discovered entries expire after their hold, across the clock's wrap. */
static void t_nart_expire(void)
{
	struct dp_nart_tbl *t = tbl_new(8);
	unsigned long t0 = (unsigned long)-50;	/* wraps at +50 */
	struct dp_nart_entry e;

	e = mac(1, 1);
	dp_nart_set(t, &e);
	e = disc(2, 2, t0, 100);
	dp_nart_set(t, &e);
	e = disc(3, 3, t0 + 60, 100);
	dp_nart_set(t, &e);
	e = mac(4, 4);
	dp_nart_set(t, &e);
	CHECK(!dp_nart_expired(&t->e[1], t0 + 100), "held for exactly its hold");
	CHECK(dp_nart_expired(&t->e[1], t0 + 101), "expired after it");
	CHECK(!dp_nart_expired(&t->e[0], t0 + 100000), "static never");
	gone_n = 0;
	CHECK_EQ(dp_nart_expire(t, t0 + 100, false, gone, &gone_n), 0);
	CHECK_EQ(dp_nart_expire(t, t0 + 101, false, gone, &gone_n), 1);
	CHECK_EQ(gone_n, 1);
	CHECK_EQ(gone_nid[0], 2);
	CHECK_EQ(t->n, 3);
	CHECK(dp_nart_find(t, 3) && dp_nart_find(t, 1) && dp_nart_find(t, 4),
	      "the rest stay");
	check_sorted(t);
	/* all: every discovered one, static ones stay */
	e = disc(7, 7, t0 + 100, 100000);
	dp_nart_set(t, &e);
	CHECK_EQ(dp_nart_expire(t, t0 + 101, true, NULL, NULL), 2);
	CHECK_EQ(t->n, 2);
	CHECK(dp_nart_find(t, 1) && dp_nart_find(t, 4), "static stay");
	check_sorted(t);
	free(t);
}

const struct unit_test nart_tests[] = {
	{ "nart: table size", t_nart_bytes },
	{ "nart: set and find, sorted order", t_nart_set_find },
	{ "nart: set replaces an existing NID", t_nart_replace },
	{ "nart: del first/middle/last, ENOENT", t_nart_del },
	{ "nart: capacity ENOSPC, replace when full", t_nart_capacity },
	{ "nart: invalid entries EINVAL", t_nart_invalid },
	{ "nart: an entry holds a NIC address and a source route", t_nart_route },
	{ "nart: copy", t_nart_copy },
	{ "nart: 100000 random set/del vs reference", t_nart_random },
	{ "nart: an update's table is sized for its operation", t_nart_need },
	{ "nart: a full table can be flushed, pruned, re-addressed", t_nart_full },
	{ "nart: learning keeps static and first entries; static replaces", t_nart_learn },
	{ "nart: discovered entries expire after their hold, static never", t_nart_expire },
	{ NULL, NULL },
};
