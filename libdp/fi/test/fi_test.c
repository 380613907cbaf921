// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Host tests of libdp-fi against the in-memory fake transport (built with
 * ASan and UBSan).  Prints TAP; exit 0 when every case passes.
 */
#include "fi_test.h"

#include <stdlib.h>
#include <string.h>

int t_failed;

static struct fi_info *tw_hints(enum fi_av_type av)
{
	struct fi_info *h = fi_allocinfo();

	h->caps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_REMOTE_CQ_DATA | FI_SOURCE;
	h->mode = FI_CONTEXT;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->av_type = av;
	return h;
}

void tw_reopen(struct tw *w, int i, uint64_t bind)
{
	char addr[16];
	size_t len = sizeof(addr);

	CHECK(fi_endpoint(w->dom, w->info, &w->ep[i], NULL) == 0);
	CHECK(fi_ep_bind(w->ep[i], &w->av->fid, 0) == 0);
	CHECK(fi_ep_bind(w->ep[i], &w->cq[i]->fid, FI_TRANSMIT | FI_RECV | bind) == 0);
	CHECK(fi_enable(w->ep[i]) == 0);
	CHECK(fi_getname(&w->ep[i]->fid, addr, &len) == 0 && len == sizeof(struct dpfi_addr));
	CHECK(fi_av_insert(w->av, addr, 1, &w->fa[i], 0, NULL) == 1);
}

static void tw_ep(struct tw *w, int i, enum fi_cq_format fmt, uint64_t bind)
{
	struct fi_cq_attr ca = { .format = fmt };
	struct fi_av_attr aa = { .type = FI_AV_UNSPEC };

	if (!w->av)
		CHECK(fi_av_open(w->dom, &aa, &w->av, NULL) == 0);
	CHECK(fi_cq_open(w->dom, &ca, &w->cq[i], NULL) == 0);
	tw_reopen(w, i, bind);
}

void tw_open(struct tw *w, enum fi_av_type av, enum fi_cq_format fmt, uint64_t bind)
{
	struct fi_info *h = tw_hints(av);
	int i;

	memset(w, 0, sizeof(*w));
	CHECK(dpfi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &w->info) == 0);
	fi_freeinfo(h);
	CHECK(dpfi_fabric(w->info->fabric_attr, &w->fab, NULL) == 0);
	CHECK(fi_domain(w->fab, w->info, &w->dom, NULL) == 0);
	for (i = 0; i < TW_EPS; i++)
		tw_ep(w, i, fmt, bind);
}

void tw_close(struct tw *w)
{
	int i;

	for (i = 0; i < TW_EPS; i++) {
		CHECK(fi_close(&w->ep[i]->fid) == 0);
		CHECK(fi_close(&w->cq[i]->fid) == 0);
	}
	CHECK(fi_close(&w->av->fid) == 0);
	CHECK(fi_close(&w->dom->fid) == 0);
	CHECK(fi_close(&w->fab->fid) == 0);
	fi_freeinfo(w->info);
}

ssize_t tw_read(struct fid_cq *cq, void *e, fi_addr_t *src)
{
	fi_addr_t dummy;
	ssize_t r = -FI_EAGAIN;
	int i;

	for (i = 0; i < 100 && r == -FI_EAGAIN; i++)
		r = fi_cq_readfrom(cq, e, 1, src ? src : &dummy);
	return r;
}

struct fi_cq_err_entry tw_err(struct fid_cq *cq)
{
	struct fi_cq_err_entry e;

	memset(&e, 0, sizeof(e));
	CHECK(fi_cq_readerr(cq, &e, 0) == 1);
	return e;
}

static int run(const struct t_case *c, int n)
{
	int before;

	for (; c->name; c++) {
		before = t_failed;
		c->fn();
		printf("%sok %d - %s\n", t_failed == before ? "" : "not ", ++n, c->name);
	}
	return n;
}

int main(void)
{
	int n;

	setvbuf(stdout, NULL, _IONBF, 0);
	setenv(DPFI_FAKE_ENV, "1", 1);
	printf("TAP version 13\n");
	n = run(tm_cases, 0);
	n = run(msg_cases, n);
	printf("1..%d\n", n);
	return t_failed ? 1 : 0;
}
