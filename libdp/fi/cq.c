// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Completion queues: a growing ring of completions and a list of errors.
 * Reading one makes progress on every endpoint bound to it (manual
 * progress: the pool is read here, with no system call).
 */
#include "dpfi.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct dpfi_cqerr {
	struct dpfi_node node;
	struct fi_cq_err_entry e;
};

static struct dpfi_cq *cq_of(struct fid_cq *fid)
{
	return (struct dpfi_cq *)fid;
}

/* Bytes of one entry in format f: each format is a prefix of the tagged one. */
static size_t cq_entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

static int cq_grow(struct dpfi_cq *cq)
{
	size_t cap = cq->cap ? cq->cap * 2 : 64, i;
	struct dpfi_cqe *r = malloc(cap * sizeof(*r));

	if (!r)
		return -FI_ENOMEM;
	for (i = 0; i < cq->count; i++)
		r[i] = cq->ring[(cq->head + i) % cq->cap];
	free(cq->ring);
	cq->ring = r;
	cq->cap = cap;
	cq->head = 0;
	return 0;
}

int dpfi_cq_push(struct dpfi_cq *cq, const struct dpfi_cqe *c)
{
	if (cq->count == cq->cap && cq_grow(cq))
		return -FI_ENOMEM;
	cq->ring[(cq->head + cq->count) % cq->cap] = *c;
	cq->count++;
	return 0;
}

int dpfi_cq_push_err(struct dpfi_cq *cq, const struct fi_cq_err_entry *e)
{
	struct dpfi_cqerr *x = calloc(1, sizeof(*x));

	if (!x)
		return -FI_ENOMEM;
	x->e = *e;
	dpfi_list_push(&cq->errs, &x->node);
	return 0;
}

int dpfi_cq_add_ep(struct dpfi_cq *cq, struct dpfi_ep *ep)
{
	size_t i;

	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep)
			return 0;
	if (cq->neps == DPFI_CQ_EPS)
		return -FI_ENOSPC;
	cq->eps[cq->neps++] = ep;
	return 0;
}

/* The last one takes its place: a read walks only the endpoints there are. */
void dpfi_cq_del_ep(struct dpfi_cq *cq, struct dpfi_ep *ep)
{
	size_t i;

	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			return;
		}
}

static void cq_progress_locked(struct dpfi_cq *cq)
{
	size_t i;

	for (i = 0; i < cq->neps; i++)
		dpfi_progress_locked(cq->eps[i]);
}

/* Copy up to count completions out; the caller holds the domain lock. */
static ssize_t cq_read_locked(struct dpfi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t sz = cq_entry_size(cq->format), i;
	const struct dpfi_cqe *c;

	cq_progress_locked(cq);
	if (cq->errs.head)
		return -FI_EAVAIL;
	for (i = 0; i < count && cq->count; i++) {
		c = &cq->ring[cq->head];
		memcpy((char *)buf + i * sz, &c->e, sz);
		if (src)
			src[i] = c->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	return i ? (ssize_t)i : -FI_EAGAIN;
}

static ssize_t cq_readfrom(struct fid_cq *fid, void *buf, size_t count, fi_addr_t *src)
{
	struct dpfi_cq *cq = cq_of(fid);
	ssize_t r;

	dpfi_lock(cq->dom);
	r = cq_read_locked(cq, buf, count, src);
	dpfi_unlock(cq->dom);
	return r;
}

static ssize_t cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	return cq_readfrom(fid, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct dpfi_cq *cq = cq_of(fid);
	struct dpfi_cqerr *x;

	(void)flags;
	dpfi_lock(cq->dom);
	x = (struct dpfi_cqerr *)dpfi_list_pop(&cq->errs);
	dpfi_unlock(cq->dom);
	if (!x)
		return -FI_EAGAIN;
	*buf = x->e;
	free(x);
	return 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Blocking read: polls the pools (yielding the CPU between polls) until a
 * completion or error, fi_cq_signal, or timeout ms (< 0: forever).
 */
static ssize_t cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count,
			    fi_addr_t *src, const void *cond, int timeout)
{
	struct dpfi_cq *cq = cq_of(fid);
	int64_t end = now_ms() + timeout;
	ssize_t r;

	(void)cond;
	for (;;) {
		r = cq_readfrom(fid, buf, count, src);
		if (r != -FI_EAGAIN)
			return r;
		if (__atomic_exchange_n(&cq->signaled, 0, __ATOMIC_ACQ_REL) ||
		    (timeout >= 0 && now_ms() >= end))
			return -FI_EAGAIN;
		sched_yield();
	}
}

static ssize_t cq_sread(struct fid_cq *fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *fid)
{
	__atomic_store_n(&cq_of(fid)->signaled, 1, __ATOMIC_RELEASE);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fid, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	(void)fid;
	(void)err_data;
	return dpfi_strerror(prov_errno, buf, len);
}

static int cq_close(struct fid *fid)
{
	struct dpfi_cq *cq = (struct dpfi_cq *)fid;
	struct dpfi_node *n;

	if (cq->neps)
		return -FI_EBUSY;
	while ((n = dpfi_list_pop(&cq->errs)))
		free(n);
	free(cq->ring);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	DPFI_FID_NOBIND,
	DPFI_FID_NOSYS,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int cq_attr_ok(const struct fi_cq_attr *attr)
{
	if (attr->format != FI_CQ_FORMAT_UNSPEC && !cq_entry_size(attr->format))
		return -FI_ENOSYS;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	return 0;
}

int dpfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq_fid, void *context)
{
	struct dpfi_cq *cq;
	int err = cq_attr_ok(attr);

	if (err)
		return err;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	dpfi_fid_init(&cq->fid.fid, FI_CLASS_CQ, context, &cq_fi_ops);
	cq->fid.ops = &cq_ops;
	cq->dom = (struct dpfi_domain *)domain;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	dpfi_list_init(&cq->errs);
	*cq_fid = &cq->fid;
	return 0;
}
