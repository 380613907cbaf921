// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* The fabric object: one per fi_fabric call; it only opens domains. */
#include "dpfi.h"

#include <stdlib.h>
#include <string.h>

int dpfi_no_op(void)
{
	return -FI_ENOSYS;
}

void dpfi_fid_init(struct fid *fid, size_t fclass, void *context, struct fi_ops *ops)
{
	fid->fclass = fclass;
	fid->context = context;
	fid->ops = ops;
}

static int fabric_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	DPFI_FID_NOBIND,
	DPFI_FID_NOSYS,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = dpfi_domain_open,
	.passive_ep = DPFI_NOSYS(int (*)(struct fid_fabric *, struct fi_info *,
					 struct fid_pep **, void *)),
	.eq_open = dpfi_eq_open,
	.wait_open = DPFI_NOSYS(int (*)(struct fid_fabric *, struct fi_wait_attr *,
					struct fid_wait **)),
	.trywait = DPFI_NOSYS(int (*)(struct fid_fabric *, struct fid **, int)),
	.domain2 = DPFI_NOSYS(int (*)(struct fid_fabric *, struct fi_info *,
				      struct fid_domain **, uint64_t, void *)),
};

int dpfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
	struct dpfi_fabric *f;

	if (!attr || !attr->name || strcmp(attr->name, DPFI_NAME))
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	dpfi_fid_init(&f->fid.fid, FI_CLASS_FABRIC, context, &fabric_fi_ops);
	f->fid.ops = &fabric_ops;
	f->fid.api_version = attr->api_version;
	*fabric = &f->fid;
	return 0;
}
