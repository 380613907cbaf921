/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A received frame in pieces, as an skb's page fragments hold one: the
 * bytes split at chosen offsets into separately allocated chunks, each of
 * its exact size (ASan sees a read past one), readable only through
 * struct dp_payload_ops, as the netdev backend's skbs are.  The pieces
 * hold @base bytes (the frame's header) before the message, so the
 * payload's base is exercised too.  A read outside the bytes aborts.
 */
#ifndef _DP_TEST_PIECES_H
#define _DP_TEST_PIECES_H

#include <stdio.h>
#include <stdlib.h>

#include "dp_wire.h"

#define PIECES_MAX 4

struct pieces {
	u8 *chunk[PIECES_MAX];
	u32 start[PIECES_MAX + 1];	/* chunk i holds [start[i], start[i + 1]) */
	u32 n;
	u32 base;
};

/* Copy (@to) or checksum (@crc) @len bytes from @off; abort outside. */
static inline void pieces_walk(const struct pieces *pc, u32 off, u32 len,
			       u8 *to, u32 *crc)
{
	u32 i;

	if (off > pc->start[pc->n] || len > pc->start[pc->n] - off) {
		fprintf(stderr, "pieces: read of %u at %u past %u bytes\n",
			len, off, pc->start[pc->n]);
		abort();
	}
	for (i = 0; i < pc->n && len; i++) {
		u32 end = pc->start[i + 1], n;
		const u8 *p;

		if (off >= end)
			continue;
		n = end - off < len ? end - off : len;
		p = pc->chunk[i] + (off - pc->start[i]);
		if (to) {
			memcpy(to, p, n);
			to += n;
		}
		if (crc)
			*crc = dp_crc32c(*crc, p, n);
		off += n;
		len -= n;
	}
}

static inline void pieces_copy(const void *src, u32 off, void *to, u32 len)
{
	pieces_walk(src, off, len, to, NULL);
}

static inline u32 pieces_crc(const void *src, u32 off, u32 len, u32 crc)
{
	pieces_walk(src, off, len, NULL, &crc);
	return crc;
}

static const struct dp_payload_ops pieces_ops = {
	.copy = pieces_copy,
	.crc = pieces_crc,
};

/*
 * @hdr (@base bytes, may be NULL: zeros) then @len bytes of @msg, cut
 * into @n (1 to PIECES_MAX) chunks at offsets drawn from @seed.
 */
static inline void pieces_make(struct pieces *pc, const void *hdr, u32 base,
			       const void *msg, u32 len, u32 n, u32 seed)
{
	u32 total = base + len, i, j;

	pc->n = n;
	pc->base = base;
	pc->start[0] = 0;
	pc->start[n] = total;
	for (i = 1; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		pc->start[i] = total ? (seed >> 8) % (total + 1) : 0;
	}
	for (i = 2; i < n; i++)		/* in order */
		for (j = i; j > 1 && pc->start[j - 1] > pc->start[j]; j--) {
			u32 t = pc->start[j];

			pc->start[j] = pc->start[j - 1];
			pc->start[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		u32 from = pc->start[i], to = pc->start[i + 1], k;

		pc->chunk[i] = malloc(to - from ? to - from : 1);
		if (!pc->chunk[i])
			abort();
		for (k = from; k < to; k++)
			pc->chunk[i][k - from] = k < base ?
				(hdr ? ((const u8 *)hdr)[k] : 0) :
				((const u8 *)msg)[k - base];
	}
}

static inline void pieces_free(struct pieces *pc)
{
	u32 i;

	for (i = 0; i < pc->n; i++)
		free(pc->chunk[i]);
	pc->n = 0;
}

/* The message (after the header) of @pc, as the netdev backend's. */
static inline struct dp_payload pieces_payload(const struct pieces *pc)
{
	return (struct dp_payload){
		.ops = &pieces_ops, .src = pc, .base = pc->base,
	};
}

#endif /* _DP_TEST_PIECES_H */
