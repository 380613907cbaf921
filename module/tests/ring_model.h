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

/*
 * The same pool with messages open for fill (large messages), from the
 * rules of docs/reliability.md, "Large messages": an open message takes
 * its whole place at once; readers see the pool up to the oldest open
 * message only; an aborted message is no message (a skip token) and cons
 * never rests on it; at most fill_max messages are open at once.
 */
enum { FM_MSG, FM_OPEN, FM_DEAD };

struct fmodel {
	u32 size, fill_max;
	u64 tail, cons;
	u32 head, n;
	struct { u64 pos; u32 len, id, filled; int kind; } q[MODEL_MAX];
};

static inline void fmodel_init(struct fmodel *m, u32 size, u64 start, u32 fill_max)
{
	memset(m, 0, sizeof(*m));
	m->size = size;
	m->fill_max = fill_max;
	m->tail = m->cons = start;
}

#define FM_AT(m, i) ((m)->q[((m)->head + (i)) % MODEL_MAX])

/* End of what readers see: the oldest open message, or the tail. */
static inline u64 fmodel_pub(const struct fmodel *m)
{
	u32 i;

	for (i = 0; i < m->n; i++)
		if (FM_AT(m, i).kind == FM_OPEN)
			return FM_AT(m, i).pos;
	return m->tail;
}

/* Messages readers see. */
static inline u32 fmodel_visible(const struct fmodel *m)
{
	u32 i, c = 0;

	for (i = 0; i < m->n && FM_AT(m, i).kind != FM_OPEN; i++)
		c += FM_AT(m, i).kind == FM_MSG;
	return c;
}

/* Dead entries at the head are passed; cons is the head message or pub. */
static inline void fmodel_settle(struct fmodel *m)
{
	while (m->n && FM_AT(m, 0).kind == FM_DEAD) {
		m->head = (m->head + 1) % MODEL_MAX;
		m->n--;
	}
	m->cons = m->n ? FM_AT(m, 0).pos : m->tail;
}

/* A whole message (FM_MSG) or one opened (FM_OPEN): 0 or the drop counter. */
static inline int fmodel_push(struct fmodel *m, u32 len, u32 id, int kind, u64 *pos)
{
	u32 space = DP_TOKEN_SPACE(len), i, open = 0;
	u64 start = m->tail;

	if (len > m->size / 2 - (u32)sizeof(struct dp_token))
		return DP_CTR_RX_DROP_TOO_BIG;
	for (i = 0; i < m->n; i++)
		open += FM_AT(m, i).kind == FM_OPEN;
	if (kind == FM_OPEN && open >= m->fill_max)
		return DP_CTR_RX_DROP_FULL;
	if (m->n == MODEL_MAX)
		return -1;
	if (start / m->size != (start + space - 1) / m->size)
		start = (start / m->size + 1) * m->size;
	if (start + space > m->cons + m->size)
		return DP_CTR_RX_DROP_FULL;
	FM_AT(m, m->n).pos = start;
	FM_AT(m, m->n).len = len;
	FM_AT(m, m->n).id = id;
	FM_AT(m, m->n).filled = 0;
	FM_AT(m, m->n).kind = kind;
	m->n++;
	m->tail = start + space;
	fmodel_settle(m);
	*pos = start;
	return 0;
}

/* Close (FM_MSG) or abort (FM_DEAD) the open message id. */
static inline void fmodel_end(struct fmodel *m, u32 id, int kind)
{
	u32 i;

	for (i = 0; i < m->n; i++)
		if (FM_AT(m, i).id == id && FM_AT(m, i).kind == FM_OPEN)
			FM_AT(m, i).kind = kind;
	fmodel_settle(m);
}

/* Release up to n visible messages; returns how many. */
static inline u32 fmodel_pop(struct fmodel *m, u32 n)
{
	u32 done = 0;

	while (done < n && m->n && FM_AT(m, 0).kind == FM_MSG) {
		m->head = (m->head + 1) % MODEL_MAX;
		m->n--;
		done++;
		fmodel_settle(m);
	}
	return done;
}

#endif /* _DP_RING_MODEL_H */
