// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The fake transport: dp's pools kept in memory inside one process, for
 * the host tests.  Every endpoint is on node DPFI_FAKE_NID.  It keeps the
 * rules the provider depends on: a send needs a connected edge (-ENOTCONN),
 * a message above max_msg is refused (-EMSGSIZE), one that does not fit the
 * receiver's pool is refused (-EAGAIN, as dp's credit on an O_NONBLOCK fd),
 * each edge is in order, and a consumed message holds its room until it is
 * released.  One lock for all: it is a test double, not a fast path.
 */
#include "transport.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct fake_msg {
	struct fake_msg *next;
	size_t len;
	uint32_t src_dpid;
	unsigned char bytes[];
};

struct dpfi_tp {
	struct dpfi_tp *next;		/* the registry */
	uint32_t dpid;
	size_t used;			/* bytes queued, consumed or not */
	struct fake_msg *head, *tail;
	struct fake_msg *cursor;	/* first not consumed */
	uint32_t *edges;
	size_t n_edges;
};

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dpfi_tp *fake_eps;
static size_t fake_max_msg = 65535;
static size_t fake_pool = 4u << 20;
static uint32_t fake_next_dpid = 2000;

void dpfi_fake_config(size_t max_msg, size_t pool_bytes)
{
	pthread_mutex_lock(&fake_lock);
	fake_max_msg = max_msg;
	fake_pool = pool_bytes;
	pthread_mutex_unlock(&fake_lock);
}

static int fake_available(void)
{
	return 1;
}

static struct dpfi_tp *fake_find(uint32_t dpid)
{
	struct dpfi_tp *t;

	for (t = fake_eps; t && t->dpid != dpid; t = t->next)
		;
	return t;
}

static int fake_open(uint32_t dpid, uint32_t pool_size, struct dpfi_tp **tp)
{
	struct dpfi_tp *t;
	int err = 0;

	(void)pool_size;		/* the fake's pools are fake_pool bytes */
	pthread_mutex_lock(&fake_lock);
	while (!dpid && fake_find(fake_next_dpid))
		fake_next_dpid++;
	if (!dpid)
		dpid = fake_next_dpid++;
	t = fake_find(dpid) ? NULL : calloc(1, sizeof(*t));
	if (t) {
		t->dpid = dpid;
		t->next = fake_eps;
		fake_eps = t;
	} else {
		err = fake_find(dpid) ? -EADDRINUSE : -ENOMEM;
	}
	pthread_mutex_unlock(&fake_lock);
	*tp = t;
	return err;
}

static void fake_self(const struct dpfi_tp *tp, uint32_t *nid, uint32_t *dpid)
{
	*nid = DPFI_FAKE_NID;
	*dpid = tp->dpid;
}

static int fake_connected(const struct dpfi_tp *tp, uint32_t dpid)
{
	size_t i;

	for (i = 0; i < tp->n_edges; i++)
		if (tp->edges[i] == dpid)
			return 1;
	return 0;
}

static int fake_connect(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid)
{
	uint32_t *e;
	int err = 0;

	if (nid != DPFI_FAKE_NID || !dpid)
		return -EHOSTUNREACH;
	pthread_mutex_lock(&fake_lock);
	if (!fake_connected(tp, dpid)) {
		e = realloc(tp->edges, (tp->n_edges + 1) * sizeof(*e));
		if (e) {
			e[tp->n_edges++] = dpid;
			tp->edges = e;
		} else {
			err = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	return err;
}

/* Append a message to to's pool; the caller holds fake_lock. */
static int fake_deliver(struct dpfi_tp *to, uint32_t src, const void *buf, size_t len)
{
	struct fake_msg *m;

	if (to->used + len > fake_pool)
		return -EAGAIN;
	m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->len = len;
	m->src_dpid = src;
	memcpy(m->bytes, buf, len);
	if (to->tail)
		to->tail->next = m;
	else
		to->head = m;
	to->tail = m;
	if (!to->cursor)
		to->cursor = m;
	to->used += len;
	return 0;
}

/* Free messages from the head up to the cursor; the caller holds fake_lock. */
static int fake_free_to_cursor(struct dpfi_tp *tp)
{
	struct fake_msg *m;
	int n = 0;

	while (tp->head && tp->head != tp->cursor) {
		m = tp->head;
		tp->head = m->next;
		tp->used -= m->len;
		free(m);
		n++;
	}
	if (!tp->head)
		tp->tail = NULL;
	return n;
}

static int fake_send(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid,
		     const void *buf, size_t len)
{
	struct dpfi_tp *to;
	int err;

	pthread_mutex_lock(&fake_lock);
	fake_free_to_cursor(tp);	/* the release a send carries */
	to = fake_find(dpid);
	if (nid != DPFI_FAKE_NID || !fake_connected(tp, dpid))
		err = -ENOTCONN;
	else if (len > fake_max_msg)
		err = -EMSGSIZE;
	else if (!to)
		err = -ECONNRESET;	/* as a session to a closed endpoint */
	else
		err = fake_deliver(to, tp->dpid, buf, len);
	pthread_mutex_unlock(&fake_lock);
	return err;
}

static int fake_peek(struct dpfi_tp *tp, struct dpfi_tp_msg *m)
{
	struct fake_msg *c;

	pthread_mutex_lock(&fake_lock);
	c = tp->cursor;
	if (c) {
		m->buf = c->bytes;
		m->len = c->len;
		m->src_nid = DPFI_FAKE_NID;
		m->src_dpid = c->src_dpid;
	}
	pthread_mutex_unlock(&fake_lock);
	return c != NULL;
}

static void fake_consume(struct dpfi_tp *tp)
{
	pthread_mutex_lock(&fake_lock);
	if (tp->cursor)
		tp->cursor = tp->cursor->next;
	pthread_mutex_unlock(&fake_lock);
}

/*
 * Whether the consumed messages are worth a release: at least min of them,
 * or a DPFI_RELEASE_SHARE of the pool.  The caller holds fake_lock.
 */
static int fake_release_due(const struct dpfi_tp *tp, unsigned int min)
{
	const struct fake_msg *m;
	unsigned int n = 0;
	size_t bytes = 0;

	for (m = tp->head; m && m != tp->cursor; m = m->next) {
		n++;
		bytes += m->len;
	}
	return n && (n >= min || bytes >= fake_pool / DPFI_RELEASE_SHARE);
}

static int fake_release(struct dpfi_tp *tp, unsigned int min)
{
	int n = 0;

	pthread_mutex_lock(&fake_lock);
	if (fake_release_due(tp, min))
		n = fake_free_to_cursor(tp);
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static void fake_close(struct dpfi_tp *tp)
{
	struct dpfi_tp **p;

	pthread_mutex_lock(&fake_lock);
	for (p = &fake_eps; *p && *p != tp; p = &(*p)->next)
		;
	if (*p)
		*p = tp->next;
	tp->cursor = NULL;
	fake_free_to_cursor(tp);
	pthread_mutex_unlock(&fake_lock);
	free(tp->edges);
	free(tp);
}

const struct dpfi_tp_ops dpfi_tp_fake = {
	.name = "fake",
	.available = fake_available,
	.open = fake_open,
	.self = fake_self,
	.connect = fake_connect,
	.send = fake_send,
	.peek = fake_peek,
	.consume = fake_consume,
	.release = fake_release,
	.close = fake_close,
};
