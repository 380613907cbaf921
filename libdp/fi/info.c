// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The provider: fi_prov_ini (libfabric's entry point of an external
 * provider, a file named *-fi.so) and getinfo, which describes the one
 * fabric, domain and endpoint type "dp" offers and checks hints against it.
 * Without /dev/dp getinfo says FI_ENODATA (docs/mpi.md).
 */
#include "dpfi.h"

#include <stdlib.h>
#include <string.h>

#define DPFI_CAPS_ALL	(DPFI_CAPS | FI_LOCAL_COMM | FI_REMOTE_COMM)
#define DPFI_ORDER	FI_ORDER_SAS

size_t dpfi_env_size(const char *name, size_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 0);
	return *end || !v ? def : (size_t)v;
}

static int name_ok(const char *name)
{
	return !name || !strcmp(name, DPFI_NAME);
}

static int hints_domain_ok(const struct fi_domain_attr *d)
{
	if (!d)
		return 1;
	if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP && d->av_type != FI_AV_TABLE)
		return 0;
	return d->data_progress != FI_PROGRESS_AUTO && name_ok(d->name) &&
	       d->cq_data_size <= sizeof(uint64_t);
}

static int hints_attr_ok(const struct fi_info *h)
{
	if (h->ep_attr && h->ep_attr->type != FI_EP_UNSPEC && h->ep_attr->type != FI_EP_RDM)
		return 0;
	if (h->tx_attr && ((h->tx_attr->msg_order & ~(uint64_t)DPFI_ORDER) ||
			   h->tx_attr->inject_size > DPFI_INJECT_SIZE ||
			   h->tx_attr->iov_limit > DPFI_IOV_MAX))
		return 0;
	if (h->rx_attr && ((h->rx_attr->msg_order & ~(uint64_t)DPFI_ORDER) ||
			   h->rx_attr->iov_limit > DPFI_IOV_MAX))
		return 0;
	return !h->fabric_attr || (name_ok(h->fabric_attr->name) &&
				   name_ok(h->fabric_attr->prov_name));
}

static int hints_ok(const struct fi_info *h)
{
	if (!h)
		return 1;
	if ((h->caps & ~(uint64_t)DPFI_CAPS_ALL) || !(h->mode & FI_CONTEXT))
		return 0;
	if (h->addr_format != FI_FORMAT_UNSPEC)
		return 0;
	if ((h->src_addr && h->src_addrlen != sizeof(struct dpfi_addr)) ||
	    (h->dest_addr && h->dest_addrlen != sizeof(struct dpfi_addr)))
		return 0;
	return hints_attr_ok(h) && hints_domain_ok(h->domain_attr);
}

static void info_tx_rx(struct fi_info *i, const struct fi_info *h)
{
	i->tx_attr->caps = i->caps;
	i->tx_attr->mode = FI_CONTEXT;
	i->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;
	i->tx_attr->msg_order = DPFI_ORDER;
	i->tx_attr->inject_size = DPFI_INJECT_SIZE;
	i->tx_attr->size = DPFI_QUEUE_SIZE;
	i->tx_attr->iov_limit = DPFI_IOV_MAX;
	i->rx_attr->caps = i->caps;
	i->rx_attr->mode = FI_CONTEXT;
	i->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;
	i->rx_attr->msg_order = DPFI_ORDER;
	i->rx_attr->size = DPFI_QUEUE_SIZE;
	i->rx_attr->iov_limit = DPFI_IOV_MAX;
}

static void info_domain(struct fi_domain_attr *d, const struct fi_info *h)
{
	enum fi_av_type av = h && h->domain_attr ? h->domain_attr->av_type : FI_AV_UNSPEC;

	d->threading = FI_THREAD_SAFE;
	d->control_progress = FI_PROGRESS_AUTO;	/* there is no control traffic */
	d->data_progress = FI_PROGRESS_MANUAL;
	d->resource_mgmt = FI_RM_ENABLED;
	d->av_type = av;
	d->mr_mode = 0;
	d->cq_data_size = sizeof(uint64_t);
	d->cq_cnt = 256;
	d->ep_cnt = 256;
	d->tx_ctx_cnt = 1;
	d->rx_ctx_cnt = 1;
	d->max_ep_tx_ctx = 1;
	d->max_ep_rx_ctx = 1;
}

static void info_ep(struct fi_ep_attr *e)
{
	e->type = FI_EP_RDM;
	e->protocol = FI_PROTO_UNSPEC;
	e->protocol_version = 1;
	e->max_msg_size = DPFI_MAX_MSG;
	/* All 64 tag bits are the application's (no leading zeros reserved:
	 * Open MPI's mtl ofi counts them to size its communicator ids). */
	e->mem_tag_format = ~(uint64_t)0;
	e->tx_ctx_cnt = 1;
	e->rx_ctx_cnt = 1;
}

static int info_set_addr(void **p, size_t *len, const struct dpfi_addr *a)
{
	free(*p);
	*p = malloc(sizeof(*a));
	if (!*p)
		return -FI_ENOMEM;
	memcpy(*p, a, sizeof(*a));
	*len = sizeof(*a);
	return 0;
}

/*
 * The hints' addresses, then node (a NID) and service (a DPID): the source
 * with FI_SOURCE, else the destination, which needs both.
 */
static int info_addr(struct fi_info *i, const char *node, const char *service,
		     uint64_t flags, const struct fi_info *h)
{
	struct dpfi_addr a = {
		.nid = node ? (uint32_t)strtoul(node, NULL, 0) : 0,
		.dpid = service ? (uint32_t)strtoul(service, NULL, 0) : 0,
	};

	if (h && h->src_addr && info_set_addr(&i->src_addr, &i->src_addrlen, h->src_addr))
		return -FI_ENOMEM;
	if (h && h->dest_addr && info_set_addr(&i->dest_addr, &i->dest_addrlen, h->dest_addr))
		return -FI_ENOMEM;
	if (!node && !service)
		return 0;
	if (flags & FI_SOURCE)
		return info_set_addr(&i->src_addr, &i->src_addrlen, &a);
	if (!a.nid || !a.dpid)
		return -FI_ENODATA;
	return info_set_addr(&i->dest_addr, &i->dest_addrlen, &a);
}

static int info_fill(struct fi_info *i, const char *node, const char *service,
		     uint64_t flags, const struct fi_info *h)
{
	i->caps = h && h->caps ? h->caps : DPFI_CAPS;
	i->mode = FI_CONTEXT;
	i->addr_format = FI_FORMAT_UNSPEC;
	info_tx_rx(i, h);
	info_domain(i->domain_attr, h);
	info_ep(i->ep_attr);
	i->fabric_attr->prov_version = DPFI_VERSION;
	i->fabric_attr->name = strdup(DPFI_NAME);
	i->domain_attr->name = strdup(DPFI_NAME);
	if (!i->fabric_attr->name || !i->domain_attr->name)
		return -FI_ENOMEM;
	return info_addr(i, node, service, flags, h);
}

int dpfi_getinfo(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *i;
	int err;

	(void)version;
	*info = NULL;
	if (!dpfi_tp_select()->available() || !hints_ok(hints))
		return -FI_ENODATA;
	i = fi_allocinfo();
	if (!i)
		return -FI_ENOMEM;
	err = info_fill(i, node, service, flags, hints);
	if (err) {
		fi_freeinfo(i);
		return err;
	}
	*info = i;
	return 0;
}

static void dpfi_cleanup(void)
{
}

struct fi_provider dpfi_prov = {
	.version = DPFI_VERSION,
	.fi_version = DPFI_FI_VERSION,
	.name = DPFI_NAME,
	.getinfo = dpfi_getinfo,
	.fabric = dpfi_fabric,
	.cleanup = dpfi_cleanup,
};

FI_EXT_INI
{
	return &dpfi_prov;
}
