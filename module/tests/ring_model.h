/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference model of the token buffer pool, written from the layout rules
 * in uapi/linux/dp.h (not from dp_ring.c): a FIFO of (position, length, id).
 * A message takes DP_TOKEN_SPACE(len) contiguous bytes; one that would cross
 * the end of the data area starts at the next multiple of size; it fits if
 * it ends no later than cons + size; cons is the position of the head
 * message, or prod when the pool is empty (never a wrap token).
 */
#ifndef _DP_RING_MODEL_H
#define _DP_RING_MODEL_H

#include "../dp_agnostic.h"

#define MODEL_MAX 4096

struct model {
	u32 size;
	u64 prod, cons;
	u32 head, count;
	struct { u64 pos; u32 len; u32 id; } q[MODEL_MAX];
};

static inline void model_init(struct model *m, u32 size, u64 start)
{
	memset(m, 0, sizeof(*m));
	m->size = size;
	m->prod = m->cons = start;
}

/* Returns 0 and the message position, or the expected drop counter. */
static inline int model_push(struct model *m, u32 len, u32 id, u64 *pos)
{
	u32 space = DP_TOKEN_SPACE(len);
	u64 start = m->prod;
	u32 k;

	if (len > m->size / 2 - (u32)sizeof(struct dp_token))
		return DP_CTR_RX_DROP_TOO_BIG;
	if (m->count == MODEL_MAX)
		return -1;
	if (start / m->size != (start + space - 1) / m->size)
		start = (start / m->size + 1) * m->size;
	if (start + space > m->cons + m->size)
		return DP_CTR_RX_DROP_FULL;
	if (!m->count)
		m->cons = start;
	k = (m->head + m->count) % MODEL_MAX;
	m->q[k].pos = start;
	m->q[k].len = len;
	m->q[k].id = id;
	m->count++;
	m->prod = start + space;
	*pos = start;
	return 0;
}

/* Release up to n messages; returns how many. */
static inline u32 model_pop(struct model *m, u32 n)
{
	u32 done = 0;

	while (done < n && m->count) {
		m->head = (m->head + 1) % MODEL_MAX;
		m->count--;
		done++;
	}
	m->cons = m->count ? m->q[m->head].pos : m->prod;
	return done;
}

#endif /* _DP_RING_MODEL_H */
