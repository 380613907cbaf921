// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The domain: the transport (real or fake, chosen once) and the one lock
 * of its endpoints, AVs and CQs.  No memory registration: mr_mode 0.
 */
#include "dpfi.h"

#include <stdlib.h>
#include <string.h>

static int domain_close(struct fid *fid)
{
	struct dpfi_domain *dom = (struct dpfi_domain *)fid;

	if (dom->eps.head)
		return -FI_EBUSY;
	free(dom);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	DPFI_FID_NOBIND,
	DPFI_FID_NOSYS,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = dpfi_av_open,
	.cq_open = dpfi_cq_open,
	.endpoint = dpfi_endpoint,
	.scalable_ep = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_info *,
					  struct fid_ep **, void *)),
	.cntr_open = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_cntr_attr *,
					struct fid_cntr **, void *)),
	.poll_open = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_poll_attr *,
					struct fid_poll **)),
	.stx_ctx = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_tx_attr *,
				      struct fid_stx **, void *)),
	.srx_ctx = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_rx_attr *,
				      struct fid_ep **, void *)),
	.query_atomic = DPFI_NOSYS(int (*)(struct fid_domain *, enum fi_datatype, enum fi_op,
					   struct fi_atomic_attr *, uint64_t)),
	.query_collective = DPFI_NOSYS(int (*)(struct fid_domain *, enum fi_collective_op,
					       struct fi_collective_attr *, uint64_t)),
	.endpoint2 = DPFI_NOSYS(int (*)(struct fid_domain *, struct fi_info *,
					struct fid_ep **, uint64_t, void *)),
};

static struct fi_ops_mr domain_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = DPFI_NOSYS(int (*)(struct fid *, const void *, size_t, uint64_t, uint64_t,
				  uint64_t, uint64_t, struct fid_mr **, void *)),
	.regv = DPFI_NOSYS(int (*)(struct fid *, const struct iovec *, size_t, uint64_t,
				   uint64_t, uint64_t, uint64_t, struct fid_mr **, void *)),
	.regattr = DPFI_NOSYS(int (*)(struct fid *, const struct fi_mr_attr *, uint64_t,
				      struct fid_mr **)),
};

int dpfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **domain, void *context)
{
	struct dpfi_domain *dom;

	(void)fabric;
	if (info && info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, DPFI_NAME))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->tp = dpfi_tp_select();
	dpfi_list_init(&dom->eps);
	dom->av_type = info && info->domain_attr ? info->domain_attr->av_type : FI_AV_UNSPEC;
	dpfi_fid_init(&dom->fid.fid, FI_CLASS_DOMAIN, context, &domain_fi_ops);
	dom->fid.ops = &domain_ops;
	dom->fid.mr = &domain_mr_ops;
	*domain = &dom->fid;
	return 0;
}
