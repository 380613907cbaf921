/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* The provider's host tests: a small TAP harness and a test world. */
#ifndef DPFI_TEST_H
#define DPFI_TEST_H

#include <stdio.h>
#include "dpfi.h"

extern int t_failed;

#define CHECK(c) do { \
	if (!(c)) { \
		t_failed++; \
		fprintf(stderr, "# %s:%d: %s: failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	} \
} while (0)

struct t_case {
	const char *name;
	void (*fn)(void);
};

extern const struct t_case tm_cases[];
extern const struct t_case msg_cases[];

#define TW_EPS 3

/* A domain with TW_EPS endpoints on the fake, each with its own CQ. */
struct tw {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_ep *ep[TW_EPS];
	struct fid_cq *cq[TW_EPS];
	fi_addr_t fa[TW_EPS];
};

/* Open w: av_type, CQ format, the flags each CQ is bound with. */
void tw_open(struct tw *w, enum fi_av_type av, enum fi_cq_format fmt, uint64_t bind);
void tw_close(struct tw *w);
/* Open endpoint i of w again (after closing it) from w->info, on its CQ. */
void tw_reopen(struct tw *w, int i, uint64_t bind);
/* Read one completion of cq, polling a while: 1, -FI_EAVAIL or -FI_EAGAIN. */
ssize_t tw_read(struct fid_cq *cq, void *e, fi_addr_t *src);
/* The error at the head of cq's error queue (fails the test if none). */
struct fi_cq_err_entry tw_err(struct fid_cq *cq);

#endif /* DPFI_TEST_H */
