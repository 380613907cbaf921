// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The provider end to end over the fake transport: three endpoints A, B, C
 * in one domain (struct tw), each with its own CQ.
 */
#include "fi_test.h"
#include "proto.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { A, B, C };

typedef struct fi_cq_tagged_entry cqe_t;

/* Expect one completion on w->cq[i] with this context, length and tag. */
static void want(struct tw *w, int i, void *ctx, size_t len, uint64_t tag)
{
	cqe_t e;

	memset(&e, 0, sizeof(e));
	CHECK(tw_read(w->cq[i], &e, NULL) == 1);
	CHECK(e.op_context == ctx);
	CHECK(e.len == len);
	CHECK(e.tag == tag);
}

/* Expect an error at the head of w->cq[i]: reads say FI_EAVAIL; return it. */
static struct fi_cq_err_entry want_err(struct tw *w, int i)
{
	cqe_t e;

	CHECK(tw_read(w->cq[i], &e, NULL) == -FI_EAVAIL);
	return tw_err(w->cq[i]);
}

/* Post a tagged receive from any source on endpoint i. */
static void post(struct tw *w, int i, void *buf, size_t len, uint64_t tag, void *ctx)
{
	CHECK(fi_trecv(w->ep[i], buf, len, NULL, FI_ADDR_UNSPEC, tag, 0, ctx) == 0);
}

static void none(struct tw *w, int i)
{
	cqe_t e;

	CHECK(tw_read(w->cq[i], &e, NULL) == -FI_EAGAIN);
}

static void t_exact(void)
{
	struct tw w;
	char buf[16] = "";
	struct fi_context ctx;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	post(&w, B, buf, sizeof(buf), 6, &ctx);
	CHECK(fi_tsend(w.ep[A], "wrong", 5, NULL, w.fa[B], 7, NULL) == 0);
	want(&w, A, NULL, 0, 0);
	none(&w, B);
	CHECK(fi_tsend(w.ep[A], "hello", 5, NULL, w.fa[B], 6, &w) == 0);
	want(&w, A, &w, 0, 0);
	want(&w, B, &ctx, 5, 6);
	CHECK(!memcmp(buf, "hello", 5));
	post(&w, B, buf, sizeof(buf), 7, &ctx);
	want(&w, B, &ctx, 5, 7);			/* the unexpected one */
	CHECK(!memcmp(buf, "wrong", 5));
	tw_close(&w);
}

static void t_ignore(void)
{
	struct tw w;
	char buf[8];
	struct fi_context ctx;

	tw_open(&w, FI_AV_MAP, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_trecv(w.ep[B], buf, sizeof(buf), NULL, FI_ADDR_UNSPEC, 0x100, 0xff, &ctx) == 0);
	CHECK(fi_tsend(w.ep[A], "x", 1, NULL, w.fa[B], 0x2ab, NULL) == 0);
	none(&w, B);
	CHECK(fi_tsend(w.ep[A], "y", 1, NULL, w.fa[B], 0x1ab, NULL) == 0);
	want(&w, B, &ctx, 1, 0x1ab);
	CHECK(buf[0] == 'y');
	tw_close(&w);
}

/* C receives from A only (directed), then from anyone. */
static void t_source(void)
{
	struct tw w;
	char b1[4], b2[4];
	struct fi_context c1, c2;
	fi_addr_t src = 0;
	cqe_t e;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_trecv(w.ep[C], b1, 4, NULL, w.fa[A], 1, 0, &c1) == 0);
	CHECK(fi_tsend(w.ep[B], "B", 1, NULL, w.fa[C], 1, NULL) == 0);
	none(&w, C);
	CHECK(fi_tsend(w.ep[A], "A", 1, NULL, w.fa[C], 1, NULL) == 0);
	CHECK(tw_read(w.cq[C], &e, &src) == 1);
	CHECK(e.op_context == &c1 && b1[0] == 'A' && src == w.fa[A]);
	post(&w, C, b2, 4, 1, &c2);
	CHECK(tw_read(w.cq[C], &e, &src) == 1);
	CHECK(e.op_context == &c2 && b2[0] == 'B' && src == w.fa[B]);
	tw_close(&w);
}

/* Same tag twice: receives complete in post order, messages in send order. */
static void t_order(void)
{
	struct tw w;
	char b[4][2];
	struct fi_context c[4];
	int i;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	for (i = 0; i < 2; i++)
		post(&w, B, b[i], 2, 3, &c[i]);
	CHECK(fi_tsend(w.ep[A], "1", 2, NULL, w.fa[B], 3, NULL) == 0);
	CHECK(fi_tsend(w.ep[A], "2", 2, NULL, w.fa[B], 3, NULL) == 0);
	CHECK(fi_tsend(w.ep[A], "3", 2, NULL, w.fa[B], 3, NULL) == 0);
	CHECK(fi_tsend(w.ep[A], "4", 2, NULL, w.fa[B], 3, NULL) == 0);
	want(&w, B, &c[0], 2, 3);
	want(&w, B, &c[1], 2, 3);
	none(&w, B);					/* 3 and 4 are unexpected */
	for (i = 2; i < 4; i++)
		post(&w, B, b[i], 2, 3, &c[i]);
	want(&w, B, &c[2], 2, 3);
	want(&w, B, &c[3], 2, 3);
	CHECK(b[0][0] == '1' && b[1][0] == '2' && b[2][0] == '3' && b[3][0] == '4');
	tw_close(&w);
}

/* FI_MSG and FI_TAGGED do not match each other. */
static void t_msg(void)
{
	struct tw w;
	char b[8];
	struct fi_context c, ct;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_MSG, 0);
	CHECK(fi_trecv(w.ep[B], b, sizeof(b), NULL, FI_ADDR_UNSPEC, 0, ~0ull, &ct) == 0);
	CHECK(fi_send(w.ep[A], "plain", 5, NULL, w.fa[B], NULL) == 0);
	CHECK(fi_recv(w.ep[B], b, sizeof(b), NULL, FI_ADDR_UNSPEC, &c) == 0);
	{
		struct fi_cq_msg_entry e;

		CHECK(tw_read(w.cq[B], &e, NULL) == 1);
		CHECK(e.op_context == &c && e.len == 5 && (e.flags & FI_MSG) &&
		      (e.flags & FI_RECV) && !(e.flags & FI_TAGGED));
	}
	CHECK(!memcmp(b, "plain", 5));
	CHECK(fi_cancel(&w.ep[B]->fid, &ct) == 0);
	CHECK(want_err(&w, B).err == FI_ECANCELED);
	tw_close(&w);
}

static void t_peek(void)
{
	struct tw w;
	char b[8] = "";
	struct fi_context pc, rc;
	struct iovec iov = { b, sizeof(b) };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
				   .tag = 9, .context = &pc };
	struct fi_cq_err_entry err;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK) == 0);		/* nothing yet */
	err = want_err(&w, B);
	CHECK(err.err == FI_ENOMSG && err.op_context == &pc);
	CHECK(fi_tsend(w.ep[A], "peek", 4, NULL, w.fa[B], 9, NULL) == 0);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK) == 0);
	want(&w, B, &pc, 4, 9);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK | FI_CLAIM) == 0);
	want(&w, B, &pc, 4, 9);
	/* Claimed: a plain receive and another peek no longer see it. */
	post(&w, B, b, sizeof(b), 9, &rc);
	none(&w, B);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_CLAIM) == 0);
	want(&w, B, &pc, 4, 9);
	CHECK(!memcmp(b, "peek", 4));
	CHECK(fi_cancel(&w.ep[B]->fid, &rc) == 0);
	CHECK(want_err(&w, B).err == FI_ECANCELED);
	/* Peek and discard; claim and discard. */
	CHECK(fi_tsend(w.ep[A], "gone", 4, NULL, w.fa[B], 9, NULL) == 0);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK | FI_DISCARD) == 0);
	want(&w, B, &pc, 4, 9);
	CHECK(fi_tsend(w.ep[A], "gone", 4, NULL, w.fa[B], 9, NULL) == 0);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK | FI_CLAIM) == 0);
	want(&w, B, &pc, 4, 9);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_CLAIM | FI_DISCARD) == 0);
	want(&w, B, &pc, 0, 9);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK) == 0);		/* both gone */
	CHECK(want_err(&w, B).err == FI_ENOMSG);
	tw_close(&w);
}

static void t_cancel(void)
{
	struct tw w;
	char b[8];
	struct fi_context c;
	struct fi_cq_err_entry err;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	post(&w, B, b, sizeof(b), 4, &c);
	CHECK(fi_cancel(&w.ep[B]->fid, &c) == 0);
	CHECK(fi_cancel(&w.ep[B]->fid, &c) == -FI_ENOENT);
	err = want_err(&w, B);
	CHECK(err.err == FI_ECANCELED && err.op_context == &c && (err.flags & FI_RECV));
	CHECK(fi_tsend(w.ep[A], "late", 4, NULL, w.fa[B], 4, NULL) == 0);
	none(&w, B);				/* not delivered to the cancelled one */
	tw_close(&w);
}

static void t_trunc(void)
{
	struct tw w;
	char b[4];
	struct fi_context c;
	struct fi_cq_err_entry err;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	post(&w, B, b, sizeof(b), 1, &c);
	CHECK(fi_tsend(w.ep[A], "0123456789", 10, NULL, w.fa[B], 1, NULL) == 0);
	err = want_err(&w, B);
	CHECK(err.err == FI_ETRUNC && err.op_context == &c);
	CHECK(err.len == 4 && err.olen == 6 && err.tag == 1);
	CHECK(!memcmp(b, "0123", 4));
	none(&w, B);
	tw_close(&w);
}

static void t_data(void)
{
	static char big[DPFI_INJECT_SIZE + 1];
	struct tw w;
	char b[4];
	struct fi_context c;
	cqe_t e;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_tsenddata(w.ep[A], "d", 1, NULL, 0xdeadbeefcafeull, w.fa[B], 2, NULL) == 0);
	post(&w, B, b, sizeof(b), 2, &c);
	CHECK(tw_read(w.cq[B], &e, NULL) == 1);
	CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == 0xdeadbeefcafeull);
	want(&w, A, NULL, 0, 0);
	CHECK(fi_tsend(w.ep[A], "n", 1, NULL, w.fa[B], 2, NULL) == 0);
	post(&w, B, b, sizeof(b), 2, &c);
	CHECK(tw_read(w.cq[B], &e, NULL) == 1);
	CHECK(!(e.flags & FI_REMOTE_CQ_DATA));
	want(&w, A, NULL, 0, 0);
	CHECK(fi_injectdata(w.ep[A], "i", 1, 77, w.fa[B]) == 0);
	CHECK(fi_recv(w.ep[B], b, sizeof(b), NULL, FI_ADDR_UNSPEC, &c) == 0);
	CHECK(tw_read(w.cq[B], &e, NULL) == 1);
	CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == 77 && b[0] == 'i');
	none(&w, A);					/* inject: no completion */
	CHECK(fi_inject(w.ep[A], big, DPFI_INJECT_SIZE + 1, w.fa[B]) == -FI_EMSGSIZE);
	tw_close(&w);
}

static void t_self(void)
{
	struct tw w;
	char b[8];
	struct fi_context c;
	fi_addr_t src;
	cqe_t e;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_tsend(w.ep[A], "self", 4, NULL, w.fa[A], 8, &w) == 0);
	CHECK(fi_trecv(w.ep[A], b, sizeof(b), NULL, w.fa[A], 8, 0, &c) == 0);
	CHECK(tw_read(w.cq[A], &e, &src) == 1);
	CHECK(e.op_context == &w && (e.flags & FI_SEND));
	CHECK(tw_read(w.cq[A], &e, &src) == 1);
	CHECK(e.op_context == &c && e.len == 4 && src == w.fa[A] && !memcmp(b, "self", 4));
	tw_close(&w);
}

/* Endpoint *ep on cq (bound for both directions), in w's AV at *fa. */
static int shared_ep(struct tw *w, struct fid_cq *cq, struct fid_ep **ep, fi_addr_t *fa)
{
	char addr[16];
	size_t len = sizeof(addr);
	int r;

	CHECK(fi_endpoint(w->dom, w->info, ep, NULL) == 0);
	CHECK(fi_ep_bind(*ep, &w->av->fid, 0) == 0);
	r = fi_ep_bind(*ep, &cq->fid, FI_TRANSMIT | FI_RECV);
	if (r)
		return r;
	CHECK(fi_enable(*ep) == 0);
	CHECK(fi_getname(&(*ep)->fid, addr, &len) == 0);
	CHECK(fi_av_insert(w->av, addr, 1, fa, 0, NULL) == 1);
	return 0;
}

/*
 * Up to DPFI_CQ_EPS endpoints share one CQ and each is progressed by its
 * reads; one more is refused; closing the first moves the last into its
 * place, still progressed, and makes room; a CQ with endpoints on it
 * does not close.
 */
static void t_shared_cq(void)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	struct fid_ep *ep[DPFI_CQ_EPS + 1], *extra;
	fi_addr_t fa[DPFI_CQ_EPS + 1], xfa;
	struct fi_context c[DPFI_CQ_EPS];
	char b[DPFI_CQ_EPS][8];
	struct fid_cq *cq;
	struct tw w;
	cqe_t e;
	int i;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_cq_open(w.dom, &ca, &cq, NULL) == 0);
	for (i = 0; i < DPFI_CQ_EPS; i++)
		CHECK(shared_ep(&w, cq, &ep[i], &fa[i]) == 0);
	CHECK(shared_ep(&w, cq, &ep[DPFI_CQ_EPS], &fa[DPFI_CQ_EPS]) == -FI_ENOSPC);
	CHECK(fi_close(&ep[DPFI_CQ_EPS]->fid) == 0);
	for (i = 0; i < DPFI_CQ_EPS; i++) {
		CHECK(fi_trecv(ep[i], b[i], sizeof(b[i]), NULL, FI_ADDR_UNSPEC, 40 + i, 0,
			       &c[i]) == 0);
		CHECK(fi_tsend(w.ep[A], "each", 4, NULL, fa[i], 40 + i, NULL) == 0);
		want(&w, A, NULL, 0, 0);
		CHECK(tw_read(cq, &e, NULL) == 1);
		CHECK(e.op_context == &c[i] && e.tag == (uint64_t)(40 + i) && e.len == 4);
	}
	CHECK(fi_close(&cq->fid) == -FI_EBUSY);
	CHECK(fi_close(&ep[0]->fid) == 0);
	i = DPFI_CQ_EPS - 1;				/* now in the first slot */
	CHECK(fi_trecv(ep[i], b[i], sizeof(b[i]), NULL, FI_ADDR_UNSPEC, 7, 0, &c[i]) == 0);
	CHECK(fi_tsend(w.ep[A], "last", 4, NULL, fa[i], 7, NULL) == 0);
	want(&w, A, NULL, 0, 0);
	CHECK(tw_read(cq, &e, NULL) == 1);
	CHECK(e.op_context == &c[i] && e.tag == 7 && !memcmp(b[i], "last", 4));
	CHECK(shared_ep(&w, cq, &extra, &xfa) == 0);	/* the freed slot */
	CHECK(fi_close(&extra->fid) == 0);
	for (i = 1; i < DPFI_CQ_EPS; i++)
		CHECK(fi_close(&ep[i]->fid) == 0);
	CHECK(fi_close(&cq->fid) == 0);
	tw_close(&w);
}

/*
 * Many more receives than the endpoint keeps for reuse, completed,
 * cancelled and truncated in turn: each completes once, with its own
 * context and bytes.
 */
static void t_rx_reuse(void)
{
	struct fi_cq_err_entry err;
	struct fi_context c[3];
	char b[3][8], msg[16];
	struct tw w;
	int i, k;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	for (i = 0; i < 3 * DPFI_RX_CACHE; i++) {
		k = i % 3;
		snprintf(msg, sizeof(msg), "m%05u", (unsigned int)i % 100000);
		post(&w, B, b[k], k == 2 ? 2 : sizeof(b[k]), (uint64_t)i, &c[k]);
		if (k == 1) {
			CHECK(fi_cancel(&w.ep[B]->fid, &c[k]) == 0);
			err = want_err(&w, B);
			CHECK(err.err == FI_ECANCELED && err.op_context == &c[k]);
			continue;
		}
		CHECK(fi_tsend(w.ep[A], msg, 6, NULL, w.fa[B], (uint64_t)i, NULL) == 0);
		want(&w, A, NULL, 0, 0);
		if (k == 2) {
			err = want_err(&w, B);
			CHECK(err.err == FI_ETRUNC && err.op_context == &c[k]);
			CHECK(!memcmp(b[k], msg, 2));
		} else {
			want(&w, B, &c[k], 6, (uint64_t)i);
			CHECK(!memcmp(b[k], msg, 6));
		}
	}
	none(&w, B);
	tw_close(&w);
}

static unsigned char *pattern(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed + (i >> 12));
	return p;
}

/*
 * 1 MiB through a fake whose pools hold 64 KiB and whose edges take 4 KiB:
 * the provider cuts it, halves segments refused as too large, and makes
 * progress while the pool is full.  To another endpoint (posted, then
 * unexpected, into three iovecs) and to itself.
 */
static void t_large(void)
{
	size_t n = 1u << 20;
	unsigned char *src = pattern(n, 7), *dst = calloc(1, n);
	struct iovec iov[3] = { { dst, 1000 }, { dst + 1000, 5 }, { dst + 1005, n - 1005 } };
	struct fi_context c;
	struct tw w;

	dpfi_fake_config(4096, 64u << 10);
	setenv("FI_DP_SEG_SIZE", "16384", 1);
	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	post(&w, B, dst, n, 1, &c);
	CHECK(fi_tsend(w.ep[A], src, n, NULL, w.fa[B], 1, NULL) == 0);
	want(&w, B, &c, n, 1);
	want(&w, A, NULL, 0, 0);
	CHECK(!memcmp(src, dst, n));
	memset(dst, 0, n);
	CHECK(fi_tsend(w.ep[A], src, n, NULL, w.fa[A], 2, NULL) == 0);	/* to itself */
	CHECK(fi_trecvv(w.ep[A], iov, NULL, 3, FI_ADDR_UNSPEC, 2, 0, &c) == 0);
	want(&w, A, NULL, 0, 0);
	want(&w, A, &c, n, 2);
	CHECK(!memcmp(src, dst, n));
	/* The segment size A learnt (2 KiB fit, then doubled) grows back. */
	CHECK(((struct dpfi_ep *)w.ep[A])->seg_cur == 4096);
	dpfi_fake_config(65535, 64u << 10);
	CHECK(fi_tsend(w.ep[A], src, n, NULL, w.fa[A], 2, NULL) == 0);
	CHECK(fi_trecv(w.ep[A], dst, n, NULL, FI_ADDR_UNSPEC, 2, 0, &c) == 0);
	CHECK(((struct dpfi_ep *)w.ep[A])->seg_cur == 8192);
	want(&w, A, NULL, 0, 0);
	want(&w, A, &c, n, 2);
	CHECK(!memcmp(src, dst, n));
	CHECK(fi_tsend(w.ep[A], src, 0, NULL, w.fa[B], 3, NULL) == 0);	/* 0 bytes */
	post(&w, B, dst, n, 3, &c);
	want(&w, B, &c, 0, 3);
	tw_close(&w);
	unsetenv("FI_DP_SEG_SIZE");
	dpfi_fake_config(65535, 4u << 20);
	free(src);
	free(dst);
}

struct t_peer {
	struct tw *w;
	int me, other;
	unsigned char *out, *in;
	size_t n;
	int ok;
};

/* One thread: post a receive from the other, send it 1 MiB, wait for ours. */
static void *t_peer_run(void *arg)
{
	struct t_peer *p = arg;
	struct fi_context c;
	cqe_t e;
	int got = 0, sent = 0;
	long i;

	p->ok = fi_trecv(p->w->ep[p->me], p->in, p->n, NULL, p->w->fa[p->other], 1, 0, &c) == 0 &&
		fi_tsend(p->w->ep[p->me], p->out, p->n, NULL, p->w->fa[p->other], 1, p) == 0;
	for (i = 0; p->ok && (!got || !sent) && i < 100000000; i++)
		if (fi_cq_read(p->w->cq[p->me], &e, 1) == 1) {
			got += e.op_context == &c && e.len == p->n;
			sent += e.op_context == p;
		}
	p->ok = p->ok && got == 1 && sent == 1;
	return NULL;
}

/*
 * Two threads send 1 MiB to each other at once through 64 KiB pools: each
 * send makes progress while it waits for room, so neither waits forever.
 */
static void t_threads(void)
{
	size_t n = 1u << 20;
	struct t_peer p[2];
	pthread_t th[2];
	struct tw w;
	int i;

	dpfi_fake_config(65535, 64u << 10);
	tw_open(&w, FI_AV_MAP, FI_CQ_FORMAT_TAGGED, 0);
	for (i = 0; i < 2; i++) {
		p[i] = (struct t_peer){ .w = &w, .me = i, .other = !i, .n = n,
					.out = pattern(n, (unsigned)i + 1), .in = calloc(1, n) };
		CHECK(pthread_create(&th[i], NULL, t_peer_run, &p[i]) == 0);
	}
	for (i = 0; i < 2; i++)
		CHECK(pthread_join(th[i], NULL) == 0);
	for (i = 0; i < 2; i++)
		CHECK(p[i].ok && !memcmp(p[i].in, p[!i].out, n));
	for (i = 0; i < 2; i++) {
		free(p[i].out);
		free(p[i].in);
	}
	tw_close(&w);
	dpfi_fake_config(65535, 4u << 20);
}

/* Each CQ format writes its own entry size and no more. */
/* Send raw dp messages to w's endpoint B from a fake endpoint of its own. */
static void raw_send(struct tw *w, const struct dpfi_hdr *h, size_t payload)
{
	static struct dpfi_tp *tp;
	unsigned char buf[sizeof(*h) + 64] = { 0 };
	struct dpfi_addr b;
	size_t len = sizeof(b);

	if (!h) {
		dpfi_tp_fake.close(tp);
		tp = NULL;
		return;
	}
	if (!tp)
		CHECK(dpfi_tp_fake.open(0, 0, &tp) == 0);
	CHECK(fi_getname(&w->ep[B]->fid, &b, &len) == 0);
	CHECK(dpfi_tp_fake.connect(tp, b.nid, b.dpid) == 0);
	memcpy(buf, h, sizeof(*h));
	CHECK(dpfi_tp_fake.send(tp, b.nid, b.dpid, buf, sizeof(*h) + payload) == 0);
}

/*
 * A message cut short (its sender gave up after a segment) fails its
 * receive with FI_EIO when the sender's next message starts; segments that
 * make no sense are dropped.
 */
static void t_abort(void)
{
	struct dpfi_hdr h = { .version = DPFI_PROTO_VERSION, .flags = DPFI_HF_TAGGED,
			      .tag = 5, .total = 100 };
	char b[100];
	struct fi_context c1, c2;
	struct iovec iov = { b, sizeof(b) };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .addr = FI_ADDR_UNSPEC,
				   .tag = 5, .context = &c1 };
	struct tw w;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	post(&w, B, b, sizeof(b), 5, &c1);
	raw_send(&w, &h, 10);			/* 10 of 100 bytes, then nothing */
	none(&w, B);
	h.offset = 50;				/* not where the message is: dropped */
	raw_send(&w, &h, 10);
	h.version = 9;				/* in place, but unknown version: dropped */
	h.offset = 10;
	raw_send(&w, &h, 10);
	h.version = DPFI_PROTO_VERSION;
	h.offset = 0;
	h.total = 3;				/* the next message */
	raw_send(&w, &h, 3);
	CHECK(want_err(&w, B).err == FI_EIO);
	post(&w, B, b, sizeof(b), 5, &c2);
	want(&w, B, &c2, 3, 5);
	CHECK(((struct dpfi_ep *)w.ep[B])->rx_dropped == 3);
	/* Claimed by a peek, then given up: the claim fails with FI_EIO. */
	h.total = 100;
	raw_send(&w, &h, 10);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK | FI_CLAIM) == 0);
	want(&w, B, &c1, 100, 5);
	h.total = 0;
	raw_send(&w, &h, 0);
	none(&w, B);				/* progress: the claimed one is given up */
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_CLAIM) == 0);
	CHECK(want_err(&w, B).err == FI_EIO);
	CHECK(fi_trecvmsg(w.ep[B], &m, 0) == 0);		/* the empty one */
	want(&w, B, &c1, 0, 5);
	raw_send(&w, NULL, 0);
	tw_close(&w);
}

static void t_formats(void)
{
	static const struct { enum fi_cq_format f; size_t size; } fm[] = {
		{ FI_CQ_FORMAT_CONTEXT, sizeof(struct fi_cq_entry) },
		{ FI_CQ_FORMAT_MSG, sizeof(struct fi_cq_msg_entry) },
		{ FI_CQ_FORMAT_DATA, sizeof(struct fi_cq_data_entry) },
		{ FI_CQ_FORMAT_TAGGED, sizeof(struct fi_cq_tagged_entry) },
	};
	unsigned char buf[2 * sizeof(cqe_t)];
	struct fi_context c;
	struct tw w;
	size_t i;
	char b[4];

	for (i = 0; i < sizeof(fm) / sizeof(fm[0]); i++) {
		tw_open(&w, FI_AV_TABLE, fm[i].f, 0);
		post(&w, B, b, 4, 5, &c);
		CHECK(fi_tsend(w.ep[A], "f", 1, NULL, w.fa[B], 5, NULL) == 0);
		memset(buf, 0xa5, sizeof(buf));
		CHECK(fi_cq_read(w.cq[B], buf, 1) == 1);
		CHECK(((struct fi_cq_entry *)buf)->op_context == &c);
		CHECK(buf[fm[i].size] == 0xa5 && buf[fm[i].size - 1] != 0xa5);
		tw_close(&w);
	}
}

static void t_selective(void)
{
	struct tw w;
	char b[4];
	struct fi_context c1, c2;
	struct iovec iov = { "s", 1 };
	struct fi_msg_tagged m = { .msg_iov = &iov, .iov_count = 1, .tag = 1, .context = &c2 };

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, FI_SELECTIVE_COMPLETION);
	m.addr = w.fa[B];
	CHECK(fi_tsend(w.ep[A], "s", 1, NULL, w.fa[B], 1, &c1) == 0);
	none(&w, A);
	CHECK(fi_tsendmsg(w.ep[A], &m, FI_COMPLETION) == 0);
	want(&w, A, &c2, 0, 0);
	post(&w, B, b, 4, 1, &c1);
	none(&w, B);
	iov.iov_base = b;
	iov.iov_len = 4;
	m.addr = FI_ADDR_UNSPEC;
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_COMPLETION) == 0);
	want(&w, B, &c2, 1, 1);
	/* A peek always reports, FI_COMPLETION or not. */
	CHECK(fi_tsend(w.ep[A], "p", 1, NULL, w.fa[B], 1, NULL) == 0);
	CHECK(fi_trecvmsg(w.ep[B], &m, FI_PEEK) == 0);
	want(&w, B, &c2, 1, 1);
	tw_close(&w);
}

static void t_sread(void)
{
	struct tw w;
	cqe_t e;
	char b[4];
	struct fi_context c;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_cq_sread(w.cq[B], &e, 1, NULL, 20) == -FI_EAGAIN);
	CHECK(fi_cq_signal(w.cq[B]) == 0);
	CHECK(fi_cq_sread(w.cq[B], &e, 1, NULL, -1) == -FI_EAGAIN);
	post(&w, B, b, 4, 1, &c);
	CHECK(fi_tsend(w.ep[A], "r", 1, NULL, w.fa[B], 1, NULL) == 0);
	CHECK(fi_cq_sread(w.cq[B], &e, 1, NULL, -1) == 1 && e.op_context == &c);
	tw_close(&w);
}

static void t_addr(void)
{
	struct dpfi_addr a, b;
	size_t len = 2;
	char s[64];
	struct tw w;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	CHECK(fi_getname(&w.ep[B]->fid, &a, &len) == -FI_ETOOSMALL && len == sizeof(a));
	CHECK(fi_getname(&w.ep[B]->fid, &a, &len) == 0 && a.nid == DPFI_FAKE_NID && a.dpid);
	CHECK(w.fa[A] == 0 && w.fa[B] == 1 && w.fa[C] == 2);	/* table: indices */
	len = sizeof(b);
	CHECK(fi_av_lookup(w.av, w.fa[B], &b, &len) == 0 && !memcmp(&a, &b, sizeof(a)));
	len = sizeof(s);
	fi_av_straddr(w.av, &a, s, &len);
	CHECK(!strncmp(s, "dp://1:", 7));
	a.nid = 0;
	CHECK(fi_av_insert(w.av, &a, 1, NULL, 0, NULL) == 0);
	CHECK(fi_tsend(w.ep[A], "x", 1, NULL, 99, 0, NULL) == -FI_EINVAL);
	tw_close(&w);
}

static int info_rc(const struct fi_info *h)
{
	struct fi_info *i = NULL;
	int rc = dpfi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &i);

	fi_freeinfo(i);
	return rc;
}

/* The hints Open MPI 4.1's mtl ofi gives (API version 1.0), then its second ask. */
static struct fi_info *ompi_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	h->mode = FI_CONTEXT;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->op_flags = FI_COMPLETION;
	h->rx_attr->op_flags = FI_COMPLETION;
	h->domain_attr->threading = FI_THREAD_UNSPEC;
	h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->resource_mgmt = FI_RM_ENABLED;
	return h;
}

/*
 * What the mtl does with them: getinfo twice, an endpoint bound to one
 * CQ with FI_SELECTIVE_COMPLETION, sends and receives without flags,
 * which complete because the info's op_flags carry FI_COMPLETION.
 */
static void t_ompi(void)
{
	struct fi_info *h = ompi_hints(), *i = NULL, *i2 = NULL;
	struct tw w;
	char b[4];
	struct fi_context c;

	CHECK(dpfi_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, h, &i) == 0);
	h->fabric_attr->prov_name = strdup("dp");
	h->caps |= FI_TAGGED | FI_DIRECTED_RECV;
	h->domain_attr->cq_data_size = sizeof(int);
	CHECK(dpfi_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, h, &i2) == 0);
	CHECK(i2 && (i2->tx_attr->op_flags & FI_COMPLETION) &&
	      i2->domain_attr->av_type == FI_AV_MAP);
	tw_open(&w, FI_AV_MAP, FI_CQ_FORMAT_TAGGED, FI_SELECTIVE_COMPLETION);
	fi_freeinfo(w.info);
	w.info = i2;
	CHECK(fi_close(&w.ep[A]->fid) == 0 && fi_close(&w.ep[B]->fid) == 0);
	w.ep[A] = w.ep[B] = NULL;
	tw_reopen(&w, A, FI_SELECTIVE_COMPLETION);
	tw_reopen(&w, B, FI_SELECTIVE_COMPLETION);
	CHECK(fi_tsenddata(w.ep[A], "mpi", 3, NULL, 7, w.fa[B], 1, &w) == 0);
	post(&w, B, b, sizeof(b), 1, &c);
	want(&w, A, &w, 0, 0);
	want(&w, B, &c, 3, 1);
	tw_close(&w);
	fi_freeinfo(i);
	fi_freeinfo(h);
}

/* node is a NID, service a DPID: a destination, or with FI_SOURCE the source. */
static void t_getinfo_addr(void)
{
	struct fi_info *i = NULL;
	const struct dpfi_addr *a;

	CHECK(dpfi_getinfo(FI_VERSION(1, 17), "3", "1200", 0, NULL, &i) == 0);
	a = i ? i->dest_addr : NULL;
	CHECK(a && i->dest_addrlen == sizeof(*a) && a->nid == 3 && a->dpid == 1200);
	CHECK(i && !i->src_addr);
	fi_freeinfo(i);
	CHECK(dpfi_getinfo(FI_VERSION(1, 17), NULL, "1300", FI_SOURCE, NULL, &i) == 0);
	a = i ? i->src_addr : NULL;
	CHECK(a && a->dpid == 1300 && i && !i->dest_addr);
	fi_freeinfo(i);
	CHECK(dpfi_getinfo(FI_VERSION(1, 17), "x", "1", 0, NULL, &i) == -FI_ENODATA);
}

/* An endpoint binds the DPID of its info's source address. */
static void t_src_dpid(void)
{
	struct dpfi_addr want = { .nid = 0, .dpid = 4321 }, got = { 0, 0 };
	size_t len = sizeof(got);
	struct fid_ep *ep;
	struct fid_eq *eq;
	uint32_t ev;
	struct tw w;

	tw_open(&w, FI_AV_TABLE, FI_CQ_FORMAT_TAGGED, 0);
	w.info->src_addr = malloc(sizeof(want));
	memcpy(w.info->src_addr, &want, sizeof(want));
	w.info->src_addrlen = sizeof(want);
	CHECK(fi_eq_open(w.fab, &(struct fi_eq_attr){ .wait_obj = FI_WAIT_UNSPEC }, &eq,
			 NULL) == 0);
	CHECK(fi_endpoint(w.dom, w.info, &ep, NULL) == 0);
	CHECK(fi_ep_bind(ep, &eq->fid, 0) == 0);		/* accepted; never an event */
	CHECK(fi_eq_read(eq, &ev, NULL, 0, 0) == -FI_EAGAIN);
	CHECK(fi_eq_sread(eq, &ev, NULL, 0, 5, 0) == -FI_EAGAIN);
	CHECK(fi_ep_bind(ep, &w.av->fid, 0) == 0);
	CHECK(fi_ep_bind(ep, &w.cq[A]->fid, FI_TRANSMIT | FI_RECV) == 0);
	CHECK(fi_enable(ep) == 0);
	CHECK(fi_getname(&ep->fid, &got, &len) == 0 && got.dpid == 4321);
	CHECK(fi_close(&ep->fid) == 0);
	CHECK(fi_close(&eq->fid) == 0);
	tw_close(&w);
}

static void t_getinfo(void)
{
	struct fi_info *h = fi_allocinfo(), *i = NULL;

	CHECK(info_rc(NULL) == 0);
	CHECK(dpfi_getinfo(FI_VERSION(1, 0), NULL, NULL, 0, NULL, &i) == 0);
	CHECK(i && i->ep_attr->mem_tag_format >> 63);		/* every tag bit usable */
	CHECK(i && i->domain_attr->cq_data_size >= sizeof(int));
	fi_freeinfo(i);
	CHECK(info_rc(h) == -FI_ENODATA);		/* no FI_CONTEXT mode */
	h->mode = FI_CONTEXT;
	h->caps = FI_TAGGED | FI_DIRECTED_RECV;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	CHECK(info_rc(h) == 0);
	h->caps |= FI_RMA;
	CHECK(info_rc(h) == -FI_ENODATA);
	h->caps = FI_TAGGED;
	h->ep_attr->type = FI_EP_MSG;
	CHECK(info_rc(h) == -FI_ENODATA);
	h->ep_attr->type = FI_EP_RDM;
	h->fabric_attr->prov_name = strdup("tcp");
	CHECK(info_rc(h) == -FI_ENODATA);
	unsetenv(DPFI_FAKE_ENV);			/* the real one: no /dev/dp here */
	CHECK(info_rc(NULL) == (access("/dev/dp", R_OK | W_OK) ? -FI_ENODATA : 0));
	setenv(DPFI_FAKE_ENV, "1", 1);
	fi_freeinfo(h);
}

const struct t_case msg_cases[] = {
	{ "exact tag, unexpected then posted", t_exact },
	{ "ignore mask", t_ignore },
	{ "directed receive and any source, fi_cq_readfrom", t_source },
	{ "order of posted and unexpected receives", t_order },
	{ "FI_MSG apart from FI_TAGGED, CQ format msg", t_msg },
	{ "FI_PEEK, FI_CLAIM, FI_DISCARD", t_peek },
	{ "fi_cancel", t_cancel },
	{ "truncation: FI_ETRUNC through fi_cq_readerr", t_trunc },
	{ "remote CQ data, inject", t_data },
	{ "send to self", t_self },
	{ "endpoints sharing a CQ: progressed, the ninth refused, unbinding", t_shared_cq },
	{ "receives reused past the endpoint's cache: completed, cancelled, truncated", t_rx_reuse },
	{ "1 MiB messages: segments, EMSGSIZE, full pools, self, iovecs", t_large },
	{ "a message cut short fails with FI_EIO; bad segments dropped", t_abort },
	{ "two threads send 1 MiB to each other at once", t_threads },
	{ "CQ formats context, msg, data, tagged", t_formats },
	{ "FI_SELECTIVE_COMPLETION", t_selective },
	{ "fi_cq_sread: timeout, signal, completion", t_sread },
	{ "fi_getname, AV table lookup and straddr", t_addr },
	{ "getinfo hints; FI_ENODATA without /dev/dp", t_getinfo },
	{ "getinfo: node and service as NID and DPID", t_getinfo_addr },
	{ "Open MPI mtl ofi's hints and use: selective completion with FI_COMPLETION op flags", t_ompi },
	{ "an endpoint binds its source address's DPID; an EQ bound stays empty", t_src_dpid },
	{ NULL, NULL },
};
