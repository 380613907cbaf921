/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NART table: NID to link address, a sorted array searched by bisection.
 * Kernel-agnostic; dp_node.c publishes tables by RCU copy-on-write.
 */
#ifndef _DP_NART_H
#define _DP_NART_H

#include "dp_agnostic.h"

#define DP_LLADDR_MAX	16	/* Ethernet 6; a Myrinet route fits too */
#define DP_NART_MAX	65536

struct dp_nart_entry {
	u32 nid;
	u8 alen;
	u8 addr[DP_LLADDR_MAX];
};

struct dp_nart_tbl {
	u32 n;
	u32 cap;
	struct dp_nart_entry e[];
};

size_t dp_nart_tbl_bytes(u32 cap);
const struct dp_nart_entry *dp_nart_find(const struct dp_nart_tbl *t, u32 nid);
/* Add or replace; -ENOSPC when n == cap, -EINVAL for a bad entry. */
int dp_nart_set(struct dp_nart_tbl *t, const struct dp_nart_entry *e);
/* -ENOENT if nid is absent. */
int dp_nart_del(struct dp_nart_tbl *t, u32 nid);
/*
 * Capacity the table replacing @old needs for one update: a flush, a set of
 * @set (NULL: a delete); may exceed DP_NART_MAX (the caller says ENOSPC).
 */
u32 dp_nart_need(const struct dp_nart_tbl *old,
		 const struct dp_nart_entry *set, bool flush);
/* Copy src into dst, which must have cap >= src->n. */
void dp_nart_copy(struct dp_nart_tbl *dst, const struct dp_nart_tbl *src);

#endif /* _DP_NART_H */
