/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NART table: NID to link address, a sorted array searched by bisection.
 * Kernel-agnostic; dp_node.c publishes tables by RCU copy-on-write.
 */
#ifndef _DP_NART_H
#define _DP_NART_H

#include "dp_agnostic.h"

#define DP_LLADDR_MAX	16	/* Ethernet 6, a Myrinet NIC 6 */
#define DP_ROUTE_MAX	16	/* source-route bytes (Myrinet), one per hop */
/* What a backend's xmit gets as @dst: address, route length, route. */
#define DP_DST_MAX	(DP_LLADDR_MAX + 1 + DP_ROUTE_MAX)
#define DP_NART_MAX	65536

/**
 * struct dp_nart_entry - how to reach one NID.
 * @nid: the peer's NID.
 * @alen: bytes of @addr, the peer's link address: what a send is addressed
 *	to on Ethernet and what received frames are checked against.
 * @addr: the link address.
 * @rlen: bytes of @route, 0 on Ethernet.
 * @route: a source route (Myrinet: one byte per switch, top bit set),
 *	which a send follows; @addr stays the peer's NIC address.
 * @origin: enum dp_nart_origin: DP_NART_STATIC (an administrator's, 0)
 *	or DP_NART_DISCOVERED (neighbour discovery, dp_disc.c).
 * @heard: discovered: when the peer was last announced, in jiffies.  The
 *	receive path refreshes it in the published table with WRITE_ONCE()
 *	(a refresh racing with a copy-on-write update may be lost: the next
 *	announce makes up for it).
 * @hold: discovered: jiffies after @heard that the entry expires.
 */
struct dp_nart_entry {
	u32 nid;
	u8 alen;
	u8 addr[DP_LLADDR_MAX];
	u8 rlen;
	u8 route[DP_ROUTE_MAX];
	u8 origin;
	unsigned long heard;
	unsigned long hold;
};

/*
 * @gen: the node's count of tables published when this one was (from 1):
 * a route resolved in a table is good while that table is the node's.
 */
struct dp_nart_tbl {
	u64 gen;
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

/* Whether @e has the link address @addr of @alen bytes. */
bool dp_nart_same_addr(const struct dp_nart_entry *e, const u8 *addr, u8 alen);

/*
 * Neighbour discovery's insert: add @e only if its NID has no entry (a
 * static entry, or the first address discovered, is kept): -EEXIST
 * otherwise; else as dp_nart_set().
 */
int dp_nart_learn(struct dp_nart_tbl *t, const struct dp_nart_entry *e);

/* Whether discovered entry @e was not heard within its hold at @now. */
bool dp_nart_expired(const struct dp_nart_entry *e, unsigned long now);

/*
 * Remove the discovered entries expired at @now (every discovered one if
 * @all), calling @gone (if not NULL) on each before it goes; returns how
 * many went.  Static entries always stay.
 */
u32 dp_nart_expire(struct dp_nart_tbl *t, unsigned long now, bool all,
		   void (*gone)(const struct dp_nart_entry *e, void *arg),
		   void *arg);

#endif /* _DP_NART_H */
