// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Tag matching alone (tagmatch.c): the rules and the queues' order. */
#include "fi_test.h"
#include "proto.h"

#include <string.h>

static void t_tag_rule(void)
{
	CHECK(dpfi_tag_match(5, 0, 5));
	CHECK(!dpfi_tag_match(5, 0, 4));
	CHECK(dpfi_tag_match(0x100, 0xff, 0x1ab));
	CHECK(!dpfi_tag_match(0x100, 0xff, 0x2ab));
	CHECK(dpfi_tag_match(0, ~(uint64_t)0, 0xdeadbeefcafef00dull));
	CHECK(!dpfi_tag_match(1ull << 63, 0, 0));
}

static void rx_init(struct dpfi_rx *rx, uint64_t flags, uint64_t tag, uint64_t ignore,
		    fi_addr_t src, void *ctx)
{
	memset(rx, 0, sizeof(*rx));
	rx->flags = flags;
	rx->tag = tag;
	rx->ignore = ignore;
	rx->src = src;
	rx->ctx = ctx;
}

static void t_rx_rule(void)
{
	struct dpfi_key k = { .tagged = 1, .tag = 7, .src = 3 };
	struct dpfi_rx rx;

	rx_init(&rx, FI_TAGGED, 7, 0, FI_ADDR_UNSPEC, NULL);
	CHECK(dpfi_rx_matches(&rx, &k));		/* any source */
	rx.src = 3;
	CHECK(dpfi_rx_matches(&rx, &k));		/* directed, right source */
	rx.src = 4;
	CHECK(!dpfi_rx_matches(&rx, &k));		/* directed, other source */
	rx_init(&rx, FI_MSG, 7, 0, FI_ADDR_UNSPEC, NULL);
	CHECK(!dpfi_rx_matches(&rx, &k));		/* untagged vs tagged */
	k.tagged = 0;
	k.tag = 99;
	CHECK(dpfi_rx_matches(&rx, &k));		/* untagged: tag ignored */
}

/* Posted receives are taken in the order they were posted. */
static void t_posted_order(void)
{
	struct dpfi_rx a, b, c;
	struct dpfi_key k = { .tagged = 1, .tag = 1, .src = 0 };
	struct dpfi_list l;

	dpfi_list_init(&l);
	rx_init(&a, FI_TAGGED, 2, 0, FI_ADDR_UNSPEC, &a);
	rx_init(&b, FI_TAGGED, 1, 0, FI_ADDR_UNSPEC, &b);
	rx_init(&c, FI_TAGGED, 0, 0xf, FI_ADDR_UNSPEC, &c);
	dpfi_list_push(&l, &a.node);
	dpfi_list_push(&l, &b.node);
	dpfi_list_push(&l, &c.node);
	CHECK(dpfi_posted_take(&l, &k) == &b);
	CHECK(dpfi_posted_take(&l, &k) == &c);
	CHECK(dpfi_posted_take(&l, &k) == NULL);
	CHECK(dpfi_posted_cancel(&l, &a) == &a);
	CHECK(l.head == NULL);
	dpfi_list_push(&l, &c.node);			/* the tail is right again */
	CHECK(dpfi_list_pop(&l) == &c.node && !dpfi_list_pop(&l));
}

/* Unexpected messages: first match in arrival order, claimed ones skipped. */
static void t_unexp_order(void)
{
	struct dpfi_in m[3];
	struct dpfi_rx rx;
	struct dpfi_list l;
	int i;

	dpfi_list_init(&l);
	memset(m, 0, sizeof(m));
	for (i = 0; i < 3; i++) {
		m[i].hflags = DPFI_HF_TAGGED;
		m[i].tag = 0x40 + (uint64_t)i;
		m[i].src = (fi_addr_t)i;
		dpfi_list_push(&l, &m[i].node);
	}
	rx_init(&rx, FI_TAGGED, 0x40, 0x0f, FI_ADDR_UNSPEC, NULL);
	CHECK(dpfi_unexp_find(&l, &rx, 0) == &m[0]);
	m[0].claimed = 1;
	CHECK(dpfi_unexp_find(&l, &rx, 0) == &m[1]);
	rx.src = 2;
	CHECK(dpfi_unexp_find(&l, &rx, 1) == &m[2]);
	CHECK(dpfi_unexp_find(&l, &rx, 0) == NULL);
	dpfi_list_remove(&l, &m[1].node);
	CHECK(l.head == &m[0].node && !m[0].node.next);
}

static void t_iov(void)
{
	char a[3], b[4], out[7];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };

	CHECK(dpfi_iov_len(iov, 2) == 7);
	CHECK(dpfi_iov_xfer(iov, 2, 0, "abcdefg", 7, 1) == 7);
	CHECK(!memcmp(a, "abc", 3) && !memcmp(b, "defg", 4));
	CHECK(dpfi_iov_xfer(iov, 2, 2, "XY", 2, 1) == 2);
	CHECK(a[2] == 'X' && b[0] == 'Y');
	CHECK(dpfi_iov_xfer(iov, 2, 5, "123", 3, 1) == 2);	/* only 2 fit */
	CHECK(dpfi_iov_xfer(iov, 2, 1, out, 6, 0) == 6);
	CHECK(!memcmp(out, "bXYe12", 6));
}

const struct t_case tm_cases[] = {
	{ "tagmatch: tag and ignore mask", t_tag_rule },
	{ "tagmatch: tagged, untagged, directed and any source", t_rx_rule },
	{ "tagmatch: posted receives in post order, cancel", t_posted_order },
	{ "tagmatch: unexpected in arrival order, claimed skipped", t_unexp_order },
	{ "tagmatch: iovec copies", t_iov },
	{ NULL, NULL },
};
