// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The built libdp-fi.so, loaded by libfabric, over its real transport
 * (libdp) on libdp's stand-in for /dev/dp (libdp/test/fakedp.so, which
 * fills pools with the module's own ring code).  Run by libdp_run.sh with
 * FI_PROVIDER_PATH and LD_PRELOAD set.  Checks the pool walker (its cursor
 * ahead of the kernel's cons, batched releases, wrap tokens, and behind
 * it after a wrap the kernel passed), EMSGSIZE
 * from the edge, and sends to self.  fakedp drops what does not fit a pool
 * (as a raw dp endpoint), so no more is in flight than fits.  Prints TAP.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

static int failed, n;

static void result(int ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n, what);
	failed |= !ok;
}

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t fa;
};

static struct fi_info *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;
static struct fid_av *av;

static int open_side(struct side *s)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED };
	char addr[8];
	size_t len = sizeof(addr);

	return fi_cq_open(dom, &ca, &s->cq, NULL) || fi_endpoint(dom, info, &s->ep, NULL) ||
	       fi_ep_bind(s->ep, &av->fid, 0) ||
	       fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV) || fi_enable(s->ep) ||
	       fi_getname(&s->ep->fid, addr, &len) ||
	       fi_av_insert(av, addr, 1, &s->fa, 0, NULL) != 1;
}

static int setup(struct side *a, struct side *b)
{
	struct fi_info *h = fi_allocinfo();
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	int err;

	h->caps = FI_TAGGED | FI_DIRECTED_RECV;
	h->mode = FI_CONTEXT;
	h->ep_attr->type = FI_EP_RDM;
	h->fabric_attr->prov_name = strdup("dp");
	err = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	fi_freeinfo(h);
	if (err)
		return err;
	return fi_fabric(info->fabric_attr, &fab, NULL) || fi_domain(fab, info, &dom, NULL) ||
	       fi_av_open(dom, &aa, &av, NULL) || open_side(a) || open_side(b);
}

/* Wait for one completion on s, up to many polls: its context, or NULL. */
static void *wait_one(struct side *s, size_t *len)
{
	struct fi_cq_tagged_entry e;
	long i;

	for (i = 0; i < 10000000; i++)
		if (fi_cq_read(s->cq, &e, 1) == 1) {
			*len = e.len;
			return e.op_context;
		}
	return NULL;
}

/* k messages of size bytes from a to b, all sent before b receives any. */
static int burst(struct side *a, struct side *b, int k, size_t size, unsigned seed)
{
	unsigned char *out = malloc(size + 1), *in = malloc(size + 1);
	struct fi_context ctx;
	int i, ok = 1;
	size_t j, len = 0;

	for (i = 0; i < k && ok; i++) {
		for (j = 0; j < size; j++)
			out[j] = (unsigned char)(seed + (unsigned)i * 7 + j);
		ok = fi_tsend(a->ep, out, size, NULL, b->fa, (uint64_t)i, NULL) == 0 &&
		     wait_one(a, &len) == NULL && len == 0;
	}
	for (i = 0; i < k && ok; i++) {
		for (j = 0; j < size; j++)
			out[j] = (unsigned char)(seed + (unsigned)i * 7 + j);
		ok = fi_trecv(b->ep, in, size, NULL, a->fa, (uint64_t)i, 0, &ctx) == 0 &&
		     wait_one(b, &len) == &ctx && len == size && !memcmp(in, out, size);
	}
	free(out);
	free(in);
	return ok;
}

/* fakedp's system call counts (libdp/test/fakedp.c), found by name. */
static unsigned long *fakedp_counts(void)
{
	return dlsym(RTLD_DEFAULT, "fakedp_counts");
}

/*
 * One 1-byte message from s to d, received, and d's CQ read once more as
 * Open MPI does (until it is empty): 1 if it came intact.
 */
static int one_way(struct side *s, struct side *d, unsigned char v)
{
	struct fi_cq_tagged_entry e;
	unsigned char in = 0;
	struct fi_context ctx;
	size_t len = 0;

	return fi_trecv(d->ep, &in, 1, NULL, s->fa, 9, 0, &ctx) == 0 &&
	       fi_tsend(s->ep, &v, 1, NULL, d->fa, 9, NULL) == 0 &&
	       wait_one(s, &len) == NULL && wait_one(d, &len) == &ctx && len == 1 && in == v &&
	       fi_cq_read(d->cq, &e, 1) == -FI_EAGAIN;
}

/*
 * A ping-pong: each side answers what it received, and the answer's send
 * carries the release of the message answered (DP_SENDV_RELEASE), so no
 * DP_IOC_RELEASE is made; the last message, answered by nobody, is
 * released by the second progress call in a row that finds nothing.
 */
static void t_release_rides(struct side *a, struct side *b)
{
	unsigned long *c = fakedp_counts(), rel0, ride0;
	struct fi_cq_tagged_entry e;
	int i, ok = 1;

	if (!c) {
		result(0, "fakedp's counters are found");
		return;
	}
	for (i = 0; i < 2; i++) {	/* earlier tests' last messages released */
		fi_cq_read(a->cq, &e, 1);
		fi_cq_read(b->cq, &e, 1);
	}
	rel0 = c[0];
	ride0 = c[1];
	for (i = 0; i < 100 && ok; i++)
		ok = one_way(a, b, (unsigned char)i) && one_way(b, a, (unsigned char)~i);
	result(ok, "100 round trips of 1 byte, every byte right");
	result(c[1] - ride0 >= 199 && c[0] == rel0,
	       "every answer carries the release of what it answers, no release of its own");
	printf("# releases: %lu alone, %lu riding on sends\n", c[0] - rel0, c[1] - ride0);
	ok = c[0] == rel0;	/* one_way read a's CQ once more: still held */
	fi_cq_read(a->cq, &e, 1);
	result(ok && c[0] == rel0 + 1,
	       "the last message is released by the second progress call that finds nothing");
	rel0 = c[0];
	ok = burst(a, b, 1, 3000, 5);	/* more than a sixteenth of b's 32 KiB pool */
	result(ok && c[0] == rel0 + 1, "a message holding a sixteenth of the pool is released at once");
}

/*
 * The reader's cursor stood at a wrap token when it had released all it
 * took; the next message placed a wrap there, and the kernel moved cons
 * past it (cons never rests on one) and filled the pool from the start,
 * more than a pool's size beyond the cursor.  The provider then read
 * that as a broken pool for good (an MPI rank over dp spun with 13
 * messages in its pool); it starts from cons now.  Fresh endpoints, so
 * that the offsets are known: in a 32 KiB pool, a 3072-byte token, four
 * of 6144 (up to 27648), then five more before the reader looks: the
 * first wraps (5120 bytes of padding), the five end 35840 bytes beyond
 * the cursor.
 */
static void t_wrap_overrun(void)
{
	struct side c, d;
	int ok;

	ok = open_side(&c) == 0 && open_side(&d) == 0;
	result(ok, "two more endpoints");
	if (!ok)
		return;
	ok = burst(&c, &d, 1, 3000, 11) && burst(&c, &d, 4, 6072, 12);
	result(ok, "a 3000-byte message, then four of 6072: the pool's tail left");
	result(ok && burst(&c, &d, 5, 6072, 13),
	       "five of 6072 sent before the reader looks: wrapped past its cursor, all read");
	fi_close(&c.ep->fid);
	fi_close(&d.ep->fid);
	fi_close(&c.cq->fid);
	fi_close(&d.cq->fid);
}

int main(void)
{
	struct side a, b;
	int ok, r;

	setvbuf(stdout, NULL, _IONBF, 0);
	printf("TAP version 13\n");
	result(setup(&a, &b) == 0, "the provider opens over libdp (fakedp)");
	if (failed) {
		printf("1..%d\n", n);
		return 1;
	}
	result(burst(&a, &b, 1, 1, 1) && burst(&b, &a, 1, 0, 2), "1 byte and 0 bytes");
	for (ok = 1, r = 0; r < 40 && ok; r++)	/* 10 x 1088 bytes a round: wraps */
		ok = burst(&a, &b, 10, 1000, (unsigned)r);
	result(ok, "40 bursts of 10 messages through a 32 KiB pool: it wraps");
	result(burst(&a, &b, 1, 12000, 3), "12000 bytes: segments cut to fit the edge's 8948");
	result(burst(&a, &a, 3, 3000, 4), "sends to self");
	t_release_rides(&a, &b);
	t_wrap_overrun();
	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	printf("1..%d\n", n);
	return failed;
}
