// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Endpoints (FI_EP_RDM): binding to an AV and CQs, enabling (which binds
 * the dp endpoint through the transport), fi_getname, fi_cancel, close.
 */
#include "dpfi.h"
#include "proto.h"

#include <stdlib.h>
#include <string.h>

static struct dpfi_ep *ep_of(fid_t fid)
{
	return (struct dpfi_ep *)fid;
}

static int ep_bind_cq(struct dpfi_ep *ep, struct dpfi_cq *cq, uint64_t flags)
{
	int sel = (flags & FI_SELECTIVE_COMPLETION) != 0;
	int err;

	if (!(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	err = dpfi_cq_add_ep(cq, ep);
	if (err)
		return err;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = sel;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = sel;
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct dpfi_ep *ep = ep_of(fid);
	int err = 0;

	dpfi_lock(ep->dom);
	if (ep->tp)
		err = -FI_EOPBADSTATE;
	else if (bfid->fclass == FI_CLASS_AV)
		ep->av = (struct dpfi_av *)bfid;
	else if (bfid->fclass == FI_CLASS_CQ)
		err = ep_bind_cq(ep, (struct dpfi_cq *)bfid, flags);
	else if (bfid->fclass == FI_CLASS_EQ)
		err = 0;			/* no events on RDM: nothing to bind */
	else
		err = -FI_ENOSYS;
	dpfi_unlock(ep->dom);
	return err;
}

static int ep_enable_locked(struct dpfi_ep *ep)
{
	size_t pool = dpfi_env_size("FI_DP_POOL_SIZE", DPFI_POOL_DEFAULT);
	int err;

	if (ep->tp)
		return 0;
	if (!ep->av)
		return -FI_ENOAV;
	if (!ep->tx_cq && !ep->rx_cq)
		return -FI_ENOCQ;
	ep->sbuf = malloc(sizeof(struct dpfi_hdr) + ep->seg_max);
	if (!ep->sbuf)
		return -FI_ENOMEM;
	err = ep->dom->tp->open(ep->want_dpid, (uint32_t)pool, &ep->tp);
	if (err) {
		free(ep->sbuf);
		ep->sbuf = NULL;
		return err;
	}
	dpfi_list_push(&ep->dom->eps, &ep->dnode);
	return 0;
}

/* FI_GETOPSFLAG / FI_SETOPSFLAG: the default flags of one direction. */
static int ep_opsflag(struct dpfi_ep *ep, int set, uint64_t *arg)
{
	uint64_t *f = *arg & FI_TRANSMIT ? &ep->tx_op_flags : &ep->rx_op_flags;

	if (!(*arg & (FI_TRANSMIT | FI_RECV)))
		return -FI_EINVAL;
	if (set)
		*f = *arg & ~(uint64_t)(FI_TRANSMIT | FI_RECV);
	else
		*arg = *f;
	return 0;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct dpfi_ep *ep = ep_of(fid);
	int err;

	dpfi_lock(ep->dom);
	if (command == FI_ENABLE)
		err = ep_enable_locked(ep);
	else if (command == FI_GETOPSFLAG || command == FI_SETOPSFLAG)
		err = ep_opsflag(ep, command == FI_SETOPSFLAG, arg);
	else
		err = -FI_ENOSYS;
	dpfi_unlock(ep->dom);
	return err;
}

static int ep_close(struct fid *fid)
{
	struct dpfi_ep *ep = ep_of(fid);
	struct dpfi_domain *dom = ep->dom;

	dpfi_lock(dom);
	if (ep->tx_cq)
		dpfi_cq_del_ep(ep->tx_cq, ep);
	if (ep->rx_cq)
		dpfi_cq_del_ep(ep->rx_cq, ep);
	if (ep->tp) {
		dpfi_list_remove(&dom->eps, &ep->dnode);
		dom->tp->close(ep->tp);
	}
	dpfi_rx_free_all(ep);
	dpfi_unlock(dom);
	free(ep->sbuf);
	free(ep);
	return 0;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct dpfi_ep *ep = ep_of(fid);
	struct dpfi_addr a;
	size_t want = *addrlen;

	dpfi_lock(ep->dom);
	if (ep->tp)
		ep->dom->tp->self(ep->tp, &a.nid, &a.dpid);
	dpfi_unlock(ep->dom);
	if (!ep->tp)
		return -FI_EOPBADSTATE;
	*addrlen = sizeof(a);
	if (want < sizeof(a))
		return -FI_ETOOSMALL;
	memcpy(addr, &a, sizeof(a));
	return 0;
}

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct dpfi_ep *ep = ep_of(fid);
	ssize_t r;

	dpfi_lock(ep->dom);
	r = dpfi_cancel_locked(ep, context);
	dpfi_unlock(ep->dom);
	return r;
}

static int ep_noopt(fid_t fid, int level, int optname, const void *optval, size_t optlen)
{
	(void)fid;
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	return -FI_ENOPROTOOPT;
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval, size_t *optlen)
{
	return ep_noopt(fid, level, optname, optval, optlen ? *optlen : 0);
}

static ssize_t ep_size_left(struct fid_ep *ep)
{
	(void)ep;
	return DPFI_QUEUE_SIZE;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	DPFI_FID_NOSYS,
};

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_noopt,
	.tx_ctx = DPFI_NOSYS(int (*)(struct fid_ep *, int, struct fi_tx_attr *,
				     struct fid_ep **, void *)),
	.rx_ctx = DPFI_NOSYS(int (*)(struct fid_ep *, int, struct fi_rx_attr *,
				     struct fid_ep **, void *)),
	.rx_size_left = ep_size_left,
	.tx_size_left = ep_size_left,
};

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = DPFI_NOSYS(int (*)(fid_t, void *, size_t)),
	.getname = ep_getname,
	.getpeer = DPFI_NOSYS(int (*)(struct fid_ep *, void *, size_t *)),
	.connect = DPFI_NOSYS(int (*)(struct fid_ep *, const void *, const void *, size_t)),
	.listen = DPFI_NOSYS(int (*)(struct fid_pep *)),
	.accept = DPFI_NOSYS(int (*)(struct fid_ep *, const void *, size_t)),
	.reject = DPFI_NOSYS(int (*)(struct fid_pep *, fid_t, const void *, size_t)),
	.shutdown = DPFI_NOSYS(int (*)(struct fid_ep *, uint64_t)),
	.join = DPFI_NOSYS(int (*)(struct fid_ep *, const void *, uint64_t,
				   struct fid_mc **, void *)),
};

static void ep_from_info(struct dpfi_ep *ep, const struct fi_info *info)
{
	const struct dpfi_addr *src = info->src_addr;

	ep->caps = info->caps ? info->caps : DPFI_CAPS;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	if (src && info->src_addrlen == sizeof(*src))
		ep->want_dpid = src->dpid;
}

int dpfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		  struct fid_ep **ep_fid, void *context)
{
	struct dpfi_ep *ep;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	dpfi_fid_init(&ep->fid.fid, FI_CLASS_EP, context, &ep_fi_ops);
	ep->fid.ops = &ep_ops;
	ep->fid.cm = &ep_cm_ops;
	ep->fid.msg = &dpfi_msg_ops;
	ep->fid.tagged = &dpfi_tagged_ops;
	ep->dom = (struct dpfi_domain *)domain;
	dpfi_list_init(&ep->posted);
	dpfi_list_init(&ep->unexp);
	dpfi_list_init(&ep->partial);
	dpfi_list_init(&ep->rx_cache);
	ep->seg_max = dpfi_env_size("FI_DP_SEG_SIZE", DPFI_SEG_DEFAULT);
	if (ep->seg_max < DPFI_SEG_MIN)
		ep->seg_max = DPFI_SEG_MIN;
	ep->seg_cur = ep->seg_max;
	ep_from_info(ep, info);
	*ep_fid = &ep->fid;
	return 0;
}
