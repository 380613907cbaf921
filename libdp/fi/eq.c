// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Event queues.  An RDM endpoint of this provider has no connections, so
 * nothing is ever reported on an EQ; it exists because applications open
 * and bind one anyway (fi_pingpong does).  Reads find it empty; sread
 * waits out its timeout (at once if the timeout is negative: nothing will
 * come).
 */
#include "dpfi.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const char *dpfi_strerror(int prov_errno, char *buf, size_t len)
{
	if (buf && len)
		snprintf(buf, len, "%s", fi_strerror(prov_errno));
	return fi_strerror(prov_errno);
}

static ssize_t eq_read(struct fid_eq *eq, uint32_t *event, void *buf, size_t len,
		       uint64_t flags)
{
	(void)eq;
	(void)event;
	(void)buf;
	(void)len;
	(void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf, uint64_t flags)
{
	(void)eq;
	(void)buf;
	(void)flags;
	return -FI_EAGAIN;
}

static ssize_t eq_sread(struct fid_eq *eq, uint32_t *event, void *buf, size_t len,
			int timeout, uint64_t flags)
{
	struct timespec ts = { .tv_sec = timeout / 1000, .tv_nsec = timeout % 1000 * 1000000L };

	if (timeout > 0)
		nanosleep(&ts, NULL);
	return eq_read(eq, event, buf, len, flags);
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	(void)eq;
	(void)err_data;
	return dpfi_strerror(prov_errno, buf, len);
}

static int eq_close(struct fid *fid)
{
	free(fid);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	DPFI_FID_NOBIND,
	DPFI_FID_NOSYS,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = DPFI_NOSYS(ssize_t (*)(struct fid_eq *, uint32_t, const void *, size_t,
					uint64_t)),
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int dpfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		 struct fid_eq **eq, void *context)
{
	struct fid_eq *e;

	(void)fabric;
	if (attr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -FI_ENOMEM;
	dpfi_fid_init(&e->fid, FI_CLASS_EQ, context, &eq_fi_ops);
	e->ops = &eq_ops;
	*eq = e;
	return 0;
}
