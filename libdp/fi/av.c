// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Address vectors.  An address is struct dpfi_addr {NID, DPID}.
 * FI_AV_MAP: the fi_addr_t is the address itself, NID << 32 | DPID.
 * FI_AV_TABLE: the fi_addr_t is the index of the insert.
 */
#include "dpfi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct dpfi_av *av_of(struct fid_av *fid)
{
	return (struct dpfi_av *)fid;
}

static fi_addr_t av_encode(const struct dpfi_addr *a)
{
	return (fi_addr_t)a->nid << 32 | a->dpid;
}

int dpfi_av_addr(const struct dpfi_av *av, fi_addr_t fa, struct dpfi_addr *out)
{
	if (av->type == FI_AV_MAP) {
		out->nid = (uint32_t)(fa >> 32);
		out->dpid = (uint32_t)fa;
	} else if (fa < av->n) {
		*out = av->tab[fa];
	} else {
		return -FI_EINVAL;
	}
	return out->nid && out->dpid ? 0 : -FI_EINVAL;
}

fi_addr_t dpfi_av_reverse(const struct dpfi_av *av, uint32_t nid, uint32_t dpid)
{
	struct dpfi_addr a = { .nid = nid, .dpid = dpid };
	size_t i;

	if (!av)
		return FI_ADDR_NOTAVAIL;
	if (av->type == FI_AV_MAP)
		return av_encode(&a);
	for (i = 0; i < av->n; i++)	/* linear: see docs/mpi.md, not done */
		if (av->tab[i].nid == nid && av->tab[i].dpid == dpid)
			return i;
	return FI_ADDR_NOTAVAIL;
}

static int av_append(struct dpfi_av *av, const struct dpfi_addr *a)
{
	struct dpfi_addr *t;

	if (av->n == av->cap) {
		t = realloc(av->tab, (av->cap ? av->cap * 2 : 64) * sizeof(*t));
		if (!t)
			return -FI_ENOMEM;
		av->tab = t;
		av->cap = av->cap ? av->cap * 2 : 64;
	}
	av->tab[av->n++] = *a;
	return 0;
}

/* Insert one address; its fi_addr_t, or FI_ADDR_NOTAVAIL. */
static fi_addr_t av_insert_one(struct dpfi_av *av, const struct dpfi_addr *a)
{
	if (!a->nid || !a->dpid)
		return FI_ADDR_NOTAVAIL;
	if (av->type == FI_AV_MAP)
		return av_encode(a);
	return av_append(av, a) ? FI_ADDR_NOTAVAIL : av->n - 1;
}

static int av_insert(struct fid_av *fid, const void *addr, size_t count,
		     fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	const struct dpfi_addr *a = addr;
	struct dpfi_av *av = av_of(fid);
	size_t i;
	fi_addr_t fa;
	int n = 0;

	(void)flags;
	(void)context;
	dpfi_lock(av->dom);
	for (i = 0; i < count; i++) {
		fa = av_insert_one(av, &a[i]);
		n += fa != FI_ADDR_NOTAVAIL;
		if (fi_addr)
			fi_addr[i] = fa;
	}
	dpfi_unlock(av->dom);
	return n;
}

static int av_remove(struct fid_av *fid, fi_addr_t *fi_addr, size_t count, uint64_t flags)
{
	struct dpfi_av *av = av_of(fid);
	size_t i;

	(void)flags;
	dpfi_lock(av->dom);
	for (i = 0; av->type == FI_AV_TABLE && i < count; i++)
		if (fi_addr[i] < av->n)
			memset(&av->tab[fi_addr[i]], 0, sizeof(av->tab[0]));
	dpfi_unlock(av->dom);
	return 0;
}

static int av_lookup(struct fid_av *fid, fi_addr_t fa, void *addr, size_t *addrlen)
{
	struct dpfi_av *av = av_of(fid);
	struct dpfi_addr a;
	int err;

	dpfi_lock(av->dom);
	err = dpfi_av_addr(av, fa, &a);
	dpfi_unlock(av->dom);
	if (err)
		return err;
	memcpy(addr, &a, *addrlen < sizeof(a) ? *addrlen : sizeof(a));
	*addrlen = sizeof(a);
	return 0;
}

static const char *av_straddr(struct fid_av *fid, const void *addr, char *buf, size_t *len)
{
	const struct dpfi_addr *a = addr;
	char s[32];

	(void)fid;
	snprintf(s, sizeof(s), "dp://%u:%u", a->nid, a->dpid);
	if (*len)
		snprintf(buf, *len, "%s", s);
	*len = strlen(s) + 1;
	return buf;
}

static int av_close(struct fid *fid)
{
	struct dpfi_av *av = (struct dpfi_av *)fid;

	free(av->tab);
	free(av);
	return 0;
}

static struct fi_ops av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = av_close,
	DPFI_FID_NOBIND,
	DPFI_FID_NOSYS,
};

static struct fi_ops_av av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = av_insert,
	.insertsvc = DPFI_NOSYS(int (*)(struct fid_av *, const char *, const char *,
					fi_addr_t *, uint64_t, void *)),
	.insertsym = DPFI_NOSYS(int (*)(struct fid_av *, const char *, size_t, const char *,
					size_t, fi_addr_t *, uint64_t, void *)),
	.remove = av_remove,
	.lookup = av_lookup,
	.straddr = av_straddr,
	.av_set = DPFI_NOSYS(int (*)(struct fid_av *, struct fi_av_set_attr *,
				     struct fid_av_set **, void *)),
};

int dpfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		 struct fid_av **av_fid, void *context)
{
	struct dpfi_domain *dom = (struct dpfi_domain *)domain;
	struct dpfi_av *av;
	enum fi_av_type type = attr->type;

	if (type == FI_AV_UNSPEC)
		type = dom->av_type == FI_AV_UNSPEC ? FI_AV_TABLE : dom->av_type;
	if ((type != FI_AV_MAP && type != FI_AV_TABLE) || attr->flags || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	dpfi_fid_init(&av->fid.fid, FI_CLASS_AV, context, &av_fi_ops);
	av->fid.ops = &av_ops;
	av->dom = dom;
	av->type = type;
	*av_fid = &av->fid;
	return 0;
}
