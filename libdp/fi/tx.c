// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Sending.  A message goes as segments of at most seg_max payload bytes,
 * each one dp message behind a struct dpfi_hdr (proto.h); dp.ko
 * fragments each segment on the wire as it needs.  A segment the edge
 * refuses as too large (EMSGSIZE, nothing sent: the receiver's pool is
 * smaller than ours, or its session is not open yet) is cut in half and
 * sent again, down to DPFI_SEG_MIN; the endpoint keeps the size that
 * worked (seg_cur) and tries twice that after each message that took more
 * than one segment, up to seg_max, so that an edge whose limit grows (its
 * session opened) gets large segments again.  While there is no credit (EAGAIN),
 * the domain's endpoints make progress, so that sends to oneself or
 * between two busy peers cannot deadlock.  A send completes when its last
 * segment is accepted: the buffer may be reused at once.
 */
#include "dpfi.h"
#include "proto.h"

#include <errno.h>
#include <string.h>

/* Send on the edge, connecting it first if dp says it is not there. */
static int tx_edge_send(struct dpfi_ep *ep, const struct dpfi_addr *a, size_t len)
{
	const struct dpfi_tp_ops *tp = ep->dom->tp;
	int err = tp->send(ep->tp, a->nid, a->dpid, ep->sbuf, len);

	if (err != -ENOTCONN)
		return err;
	err = tp->connect(ep->tp, a->nid, a->dpid);
	return err ? err : tp->send(ep->tp, a->nid, a->dpid, ep->sbuf, len);
}

/* Send the segment in ep->sbuf, making progress while there is no room. */
static int tx_segment(struct dpfi_ep *ep, const struct dpfi_addr *a, size_t len)
{
	int err;

	while ((err = tx_edge_send(ep, a, len)) == -EAGAIN)
		dpfi_progress_domain_locked(ep->dom);
	return err;
}

/* Send every segment of the message; 0 or a negative errno. */
static int tx_message(struct dpfi_ep *ep, const struct dpfi_addr *a,
		      const struct dpfi_tx *tx, struct dpfi_hdr *h)
{
	size_t n;
	int err;

	for (;;) {
		n = h->total - h->offset < ep->seg_cur ? (size_t)(h->total - h->offset) :
			ep->seg_cur;
		memcpy(ep->sbuf, h, sizeof(*h));
		dpfi_iov_xfer(tx->iov, tx->niov, h->offset, ep->sbuf + sizeof(*h), n, 0);
		err = tx_segment(ep, a, sizeof(*h) + n);
		if (err == -EMSGSIZE && n > DPFI_SEG_MIN) {
			ep->seg_cur = n / 2 > DPFI_SEG_MIN ? n / 2 : DPFI_SEG_MIN;
			continue;
		}
		if (err)
			return err;
		h->offset += n;
		if (h->offset == h->total)
			break;
	}
	if (ep->seg_cur < ep->seg_max && h->total > ep->seg_cur)
		ep->seg_cur = ep->seg_cur * 2 < ep->seg_max ? ep->seg_cur * 2 : ep->seg_max;
	return 0;
}

ssize_t dpfi_send_locked(struct dpfi_ep *ep, const struct dpfi_tx *tx)
{
	struct dpfi_hdr h = {
		.version = DPFI_PROTO_VERSION,
		.flags = (tx->flags & FI_TAGGED ? DPFI_HF_TAGGED : 0) |
			 (tx->flags & FI_REMOTE_CQ_DATA ? DPFI_HF_DATA : 0),
		.tag = tx->tag,
		.data = tx->flags & FI_REMOTE_CQ_DATA ? tx->data : 0,
		.total = dpfi_iov_len(tx->iov, tx->niov),
	};
	struct dpfi_cqe c = { .e = { .op_context = tx->ctx }, .src = FI_ADDR_NOTAVAIL };
	struct dpfi_addr a;
	int err;

	if (!ep->tp)
		return -FI_EOPBADSTATE;
	if (!ep->av || dpfi_av_addr(ep->av, tx->dest, &a))
		return -FI_EINVAL;
	err = tx_message(ep, &a, tx, &h);
	if (err)
		return err;
	c.e.flags = FI_SEND | (tx->flags & FI_TAGGED ? FI_TAGGED : FI_MSG);
	if (ep->tx_cq && dpfi_wants_completion(ep->tx_selective, tx->flags))
		return dpfi_cq_push(ep->tx_cq, &c);
	return 0;
}
