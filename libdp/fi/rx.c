// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Receiving: progress reads the pool (no system call), reassembles the
 * segments of each source's message, and matches messages against posted
 * receives; what matches nothing waits in the unexpected queue.  Receives
 * with FI_PEEK, FI_CLAIM and FI_DISCARD, and fi_cancel, work on the same
 * queues.  All with the domain lock held.
 */
#include "dpfi.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

#define DPFI_PROGRESS_BATCH	64	/* messages taken per release */
/*
 * Fewer consumed messages than DPFI_RELEASE_LATER, holding less than a
 * DPFI_RELEASE_SHARE of the pool, wait for the endpoint's next send to
 * carry their release (an answer costs one system call, not two), or for
 * the DPFI_RELEASE_IDLE-th progress call in a row that finds
 * nothing new.  Not the first: Open MPI reads its CQ until it is empty, so
 * a call that finds nothing follows every one that finds a message, before
 * the answer is sent.
 */
#define DPFI_RELEASE_LATER	8
#define DPFI_RELEASE_IDLE	2

static uint64_t rx_kind(const struct dpfi_rx *rx)
{
	return FI_RECV | (rx->flags & FI_TAGGED ? FI_TAGGED : FI_MSG);
}

static uint64_t in_flags(const struct dpfi_in *in)
{
	return in->hflags & DPFI_HF_DATA ? FI_REMOTE_CQ_DATA : 0;
}

/* An error completion for rx, e.g. FI_ECANCELED or FI_ENOMSG. */
static void rx_error(struct dpfi_ep *ep, const struct dpfi_rx *rx, int err,
		     const struct dpfi_in *in, size_t len)
{
	struct fi_cq_err_entry e = {
		.op_context = rx->ctx,
		.flags = rx_kind(rx) | (in ? in_flags(in) : 0),
		.len = len,
		.buf = rx->niov ? rx->iov[0].iov_base : NULL,
		.data = in ? in->data : 0,
		.tag = in ? in->tag : rx->tag,
		.olen = in && in->total > len ? in->total - len : 0,
		.err = err,
		.prov_errno = err,
	};

	if (ep->rx_cq)
		dpfi_cq_push_err(ep->rx_cq, &e);
}

/* A successful completion for rx of message in, len bytes delivered. */
static void rx_success(struct dpfi_ep *ep, const struct dpfi_rx *rx,
		       const struct dpfi_in *in, size_t len, int always)
{
	struct dpfi_cqe c = {
		.e = {
			.op_context = rx->ctx,
			.flags = rx_kind(rx) | in_flags(in),
			.len = len,
			.buf = rx->niov && len ? rx->iov[0].iov_base : NULL,
			.data = in->data,
			.tag = in->tag,
		},
		.src = in->src,
	};

	if (ep->rx_cq && (always || dpfi_wants_completion(ep->rx_selective, rx->flags)))
		dpfi_cq_push(ep->rx_cq, &c);
}

/*
 * A posted receive's memory: from the endpoint's cache of spent ones, so
 * that a receive posted for each message costs no malloc() and free().
 */
static struct dpfi_rx *rx_get(struct dpfi_ep *ep)
{
	struct dpfi_node *n = dpfi_list_pop(&ep->rx_cache);

	if (!n)
		return malloc(sizeof(struct dpfi_rx));
	ep->rx_ncache--;
	return (struct dpfi_rx *)n;
}

static void rx_put(struct dpfi_ep *ep, struct dpfi_rx *rx)
{
	if (!rx)
		return;
	if (ep->rx_ncache >= DPFI_RX_CACHE) {
		free(rx);
		return;
	}
	dpfi_list_push(&ep->rx_cache, &rx->node);
	ep->rx_ncache++;
}

/* Complete rx with message in, whose bytes are all in place: ok or FI_ETRUNC. */
static void rx_complete(struct dpfi_ep *ep, struct dpfi_rx *rx, const struct dpfi_in *in)
{
	size_t cap = dpfi_iov_len(rx->iov, rx->niov);

	if (in->total > cap)
		rx_error(ep, rx, FI_ETRUNC, in, cap);
	else
		rx_success(ep, rx, in, (size_t)in->total, 0);
	rx_put(ep, rx);
}

static void in_free(struct dpfi_in *in)
{
	free(in->buf);
	free(in);
}

/* All of in has arrived: complete its receive, or keep it as unexpected. */
static void in_finish(struct dpfi_ep *ep, struct dpfi_in *in)
{
	struct dpfi_rx *rx = in->rx;

	if (rx && in->buf)
		dpfi_iov_xfer(rx->iov, rx->niov, 0, in->buf, (size_t)in->total, 1);
	if (rx)
		rx_complete(ep, rx, in);
	if (rx || in->discard)
		in_free(in);
}

/* Give rx the message in (taken off the unexpected queue). */
static void in_bind(struct dpfi_ep *ep, struct dpfi_in *in, struct dpfi_rx *rx)
{
	in->rx = rx;
	if (in->got == in->total)
		in_finish(ep, in);
}

/* Drop in (taken off the unexpected queue): now, or once it has all arrived. */
static void in_drop(struct dpfi_in *in)
{
	if (in->got == in->total) {
		in_free(in);
		return;
	}
	in->discard = 1;
	free(in->buf);
	in->buf = NULL;
}

struct dpfi_src {
	uint32_t nid, dpid;
};

static int partial_pred(const struct dpfi_node *n, const void *arg)
{
	const struct dpfi_in *in = DPFI_CONTAINER(n, struct dpfi_in, part);
	const struct dpfi_src *s = arg;

	return in->nid == s->nid && in->dpid == s->dpid;
}

/* The message still arriving from src, taken off the partial list. */
static struct dpfi_in *partial_take(struct dpfi_ep *ep, const struct dpfi_src *src)
{
	struct dpfi_node *n = dpfi_list_find(&ep->partial, partial_pred, src, 1);

	return n ? DPFI_CONTAINER(n, struct dpfi_in, part) : NULL;
}

/*
 * A new message from src while an older one is unfinished: the sender gave
 * the old one up (its send failed midway).  Its receive fails with FI_EIO.
 */
static void partial_abort(struct dpfi_ep *ep, const struct dpfi_src *src)
{
	struct dpfi_in *in = partial_take(ep, src);

	if (!in)
		return;
	ep->rx_dropped++;
	if (in->claimed) {		/* its claim fails: the user holds it */
		in->aborted = 1;
		return;
	}
	if (in->rx) {
		rx_error(ep, in->rx, FI_EIO, in, 0);
		rx_put(ep, in->rx);
	} else if (!in->discard) {
		dpfi_list_remove(&ep->unexp, &in->node);
	}
	in_free(in);
}

/* first's fields from the first segment h from src, and the receive it matches. */
static void in_init(struct dpfi_ep *ep, struct dpfi_in *first, const struct dpfi_hdr *h,
		    const struct dpfi_src *src)
{
	struct dpfi_key k;

	*first = (struct dpfi_in){
		.nid = src->nid,
		.dpid = src->dpid,
		.src = dpfi_av_reverse(ep->av, src->nid, src->dpid),
		.tag = h->tag,
		.data = h->data,
		.total = h->total,
		.hflags = h->flags,
	};
	k = (struct dpfi_key){ .tagged = (h->flags & DPFI_HF_TAGGED) != 0,
			       .tag = h->tag, .src = first->src };
	first->rx = dpfi_posted_take(&ep->posted, &k);
}

/* first (in_init()) kept: matched, or queued as unexpected with a buffer. */
static struct dpfi_in *in_start(struct dpfi_ep *ep, const struct dpfi_in *first)
{
	struct dpfi_in *in = malloc(sizeof(*in));

	if (!in)
		return NULL;
	*in = *first;
	if (!in->rx && in->total) {
		in->buf = malloc((size_t)in->total);
		if (!in->buf) {
			free(in);
			return NULL;
		}
	}
	if (!in->rx)
		dpfi_list_push(&ep->unexp, &in->node);
	return in;
}

static void in_copy(struct dpfi_in *in, uint64_t off, const unsigned char *p, size_t n)
{
	if (in->buf)
		memcpy(in->buf + off, p, n);
	else if (in->rx)
		dpfi_iov_xfer(in->rx->iov, in->rx->niov, off, (void *)p, n, 1);
	in->got += n;
}

/*
 * The message in, or NULL (dropped), that segment h of n bytes from src
 * belongs to.  A message whole in its first segment that a posted receive
 * matches (a small message to a waiting receive, the common case) is
 * first itself, the caller's: nothing is allocated for it.
 */
static struct dpfi_in *rx_owner(struct dpfi_ep *ep, const struct dpfi_hdr *h, size_t n,
				const struct dpfi_src *src, struct dpfi_in *first)
{
	struct dpfi_in *in;

	if (!h->offset) {
		partial_abort(ep, src);
		in_init(ep, first, h, src);
		if (first->rx && n == h->total)
			return first;
		return in_start(ep, first);
	}
	in = partial_take(ep, src);
	if (in && h->offset != in->got) {
		dpfi_list_push(&ep->partial, &in->part);
		return NULL;
	}
	return in;
}

static void rx_segment(struct dpfi_ep *ep, const struct dpfi_tp_msg *m)
{
	struct dpfi_src src = { .nid = m->src_nid, .dpid = m->src_dpid };
	struct dpfi_in *in, first;
	struct dpfi_hdr h;
	size_t n;

	if (m->len < sizeof(h))
		goto drop;
	memcpy(&h, m->buf, sizeof(h));
	n = m->len - sizeof(h);
	if (h.version != DPFI_PROTO_VERSION || h.offset > h.total || n > h.total - h.offset)
		goto drop;
	in = rx_owner(ep, &h, n, &src, &first);
	if (!in)
		goto drop;
	in_copy(in, h.offset, m->buf + sizeof(h), n);
	if (in == &first)		/* whole, matched, on the stack */
		rx_complete(ep, in->rx, in);
	else if (in->got == in->total)
		in_finish(ep, in);
	else
		dpfi_list_push(&ep->partial, &in->part);
	return;
drop:
	ep->rx_dropped++;
}

void dpfi_progress_locked(struct dpfi_ep *ep)
{
	const struct dpfi_tp_ops *tp = ep->dom->tp;
	struct dpfi_tp_msg m;
	int i;

	if (!ep->tp)
		return;
	for (i = 0; i < DPFI_PROGRESS_BATCH && tp->peek(ep->tp, &m) == 1; i++) {
		rx_segment(ep, &m);
		tp->consume(ep->tp);
	}
	if (i)
		ep->idle_polls = 0;
	else if (ep->idle_polls < DPFI_RELEASE_IDLE)
		ep->idle_polls++;
	tp->release(ep->tp, ep->idle_polls >= DPFI_RELEASE_IDLE ? 1 : DPFI_RELEASE_LATER);
}

void dpfi_progress_domain_locked(struct dpfi_domain *dom)
{
	struct dpfi_node *n;

	for (n = dom->eps.head; n; n = n->next)
		dpfi_progress_locked(DPFI_CONTAINER(n, struct dpfi_ep, dnode));
}

/* FI_PEEK: report the first match, and claim or discard it if asked. */
static ssize_t rx_peek(struct dpfi_ep *ep, const struct dpfi_rx *rx)
{
	struct dpfi_in *in;

	dpfi_progress_locked(ep);
	in = dpfi_unexp_find(&ep->unexp, rx, 0);
	if (!in) {
		rx_error(ep, rx, FI_ENOMSG, NULL, 0);
		return 0;
	}
	rx_success(ep, rx, in, (size_t)in->total, 1);
	if (rx->flags & FI_DISCARD) {
		dpfi_list_remove(&ep->unexp, &in->node);
		in_drop(in);
	} else if (rx->flags & FI_CLAIM) {
		in->claimed = 1;
		((struct fi_context *)rx->ctx)->internal[0] = in;
	}
	return 0;
}

/* FI_CLAIM: receive (or with FI_DISCARD drop) the message a peek claimed. */
static ssize_t rx_claim(struct dpfi_ep *ep, struct dpfi_rx *rx)
{
	struct fi_context *ctx = rx->ctx;
	struct dpfi_in *in = ctx ? ctx->internal[0] : NULL;

	if (!in)
		return -FI_EINVAL;
	ctx->internal[0] = NULL;
	dpfi_list_remove(&ep->unexp, &in->node);
	in->claimed = 0;
	if (in->aborted) {
		rx_error(ep, rx, FI_EIO, in, 0);
		in_free(in);
		rx_put(ep, rx);
	} else if (rx->flags & FI_DISCARD) {
		rx_success(ep, rx, in, 0, 0);
		in_drop(in);
		rx_put(ep, rx);
	} else {
		in_bind(ep, in, rx);
	}
	return 0;
}

ssize_t dpfi_recv_locked(struct dpfi_ep *ep, struct dpfi_rx *tmpl)
{
	struct dpfi_rx *rx;
	struct dpfi_in *in;

	if (tmpl->flags & FI_PEEK)
		return rx_peek(ep, tmpl);
	rx = rx_get(ep);
	if (!rx)
		return -FI_ENOMEM;
	*rx = *tmpl;
	if (rx->flags & FI_CLAIM)
		return rx_claim(ep, rx);
	in = dpfi_unexp_find(&ep->unexp, rx, 1);
	if (in)
		in_bind(ep, in, rx);
	else
		dpfi_list_push(&ep->posted, &rx->node);
	return 0;
}

ssize_t dpfi_cancel_locked(struct dpfi_ep *ep, void *ctx)
{
	struct dpfi_rx *rx = dpfi_posted_cancel(&ep->posted, ctx);

	if (!rx)
		return -FI_ENOENT;
	rx_error(ep, rx, FI_ECANCELED, NULL, 0);
	rx_put(ep, rx);
	return 0;
}

void dpfi_rx_free_all(struct dpfi_ep *ep)
{
	struct dpfi_node *n;
	struct dpfi_in *in;

	while ((n = dpfi_list_pop(&ep->partial))) {
		in = DPFI_CONTAINER(n, struct dpfi_in, part);
		if (in->rx || in->discard) {
			rx_put(ep, in->rx);
			in_free(in);
		}
	}
	while ((n = dpfi_list_pop(&ep->unexp)))
		in_free((struct dpfi_in *)n);
	while ((n = dpfi_list_pop(&ep->posted)))
		free(n);
	while ((n = dpfi_list_pop(&ep->rx_cache)))
		free(n);
	ep->rx_ncache = 0;
}
