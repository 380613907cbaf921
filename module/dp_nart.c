// SPDX-License-Identifier: GPL-2.0
/* NART table arithmetic; see dp_nart.h.  Kernel-agnostic. */
#include "dp_nart.h"

size_t dp_nart_tbl_bytes(u32 cap)
{
	return sizeof(struct dp_nart_tbl) + (size_t)cap * sizeof(struct dp_nart_entry);
}

/* Index of nid, or of the first entry above it. */
static u32 dp_nart_lower_bound(const struct dp_nart_tbl *t, u32 nid)
{
	u32 lo = 0, hi = t->n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (t->e[mid].nid < nid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct dp_nart_entry *dp_nart_find(const struct dp_nart_tbl *t, u32 nid)
{
	u32 i;

	if (!t)
		return NULL;
	i = dp_nart_lower_bound(t, nid);
	if (i < t->n && t->e[i].nid == nid)
		return &t->e[i];
	return NULL;
}

int dp_nart_set(struct dp_nart_tbl *t, const struct dp_nart_entry *e)
{
	u32 i;

	if (!e->nid || !e->alen || e->alen > DP_LLADDR_MAX ||
	    e->rlen > DP_ROUTE_MAX)
		return -EINVAL;
	i = dp_nart_lower_bound(t, e->nid);
	if (i < t->n && t->e[i].nid == e->nid) {
		t->e[i] = *e;
		return 0;
	}
	if (t->n == t->cap)
		return -ENOSPC;
	memmove(&t->e[i + 1], &t->e[i], (size_t)(t->n - i) * sizeof(t->e[0]));
	t->e[i] = *e;
	t->n++;
	return 0;
}

int dp_nart_del(struct dp_nart_tbl *t, u32 nid)
{
	u32 i = dp_nart_lower_bound(t, nid);

	if (i >= t->n || t->e[i].nid != nid)
		return -ENOENT;
	memmove(&t->e[i], &t->e[i + 1], (size_t)(t->n - i - 1) * sizeof(t->e[0]));
	t->n--;
	return 0;
}

/*
 * Entries the table replacing @old must hold after one update: none after
 * a flush, @old's count for a delete or for a set of a NID it already has,
 * one more only for a set that inserts.  Sized by the operation, so a full
 * table can still be flushed, pruned and re-addressed.
 */
u32 dp_nart_need(const struct dp_nart_tbl *old,
		 const struct dp_nart_entry *set, bool flush)
{
	u32 n = old ? old->n : 0;

	if (flush)
		return 0;
	if (set && !dp_nart_find(old, set->nid))
		return n + 1;
	return n;
}

void dp_nart_copy(struct dp_nart_tbl *dst, const struct dp_nart_tbl *src)
{
	dst->n = src ? src->n : 0;
	if (dst->n)
		memcpy(dst->e, src->e, (size_t)dst->n * sizeof(src->e[0]));
}

bool dp_nart_same_addr(const struct dp_nart_entry *e, const u8 *addr, u8 alen)
{
	return e->alen == alen && !memcmp(e->addr, addr, alen);
}

int dp_nart_learn(struct dp_nart_tbl *t, const struct dp_nart_entry *e)
{
	if (dp_nart_find(t, e->nid))
		return -EEXIST;
	return dp_nart_set(t, e);
}

/* As the kernel's time_after(now, heard + hold), for any unsigned long. */
bool dp_nart_expired(const struct dp_nart_entry *e, unsigned long now)
{
	return e->origin == DP_NART_DISCOVERED &&
	       (long)(now - (e->heard + e->hold)) > 0;
}

u32 dp_nart_expire(struct dp_nart_tbl *t, unsigned long now, bool all,
		   void (*gone)(const struct dp_nart_entry *e, void *arg),
		   void *arg)
{
	u32 i, n = 0;

	for (i = 0; i < t->n; i++) {
		const struct dp_nart_entry *e = &t->e[i];

		if (e->origin == DP_NART_DISCOVERED &&
		    (all || dp_nart_expired(e, now))) {
			if (gone)
				gone(e, arg);
			continue;
		}
		if (n != i)
			t->e[n] = *e;
		n++;
	}
	i = t->n - n;
	t->n = n;
	return i;
}
