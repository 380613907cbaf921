// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_test: an MPI program checked for correct results, for Open MPI over
 * dp's libfabric provider (docs/mpi.md) and, to prove the program itself,
 * over Open MPI's TCP transport.  Needs 2 or more ranks (make check runs 4,
 * one per guest).
 *
 * Every message carries a pattern derived from its source, destination,
 * tag and size; every byte received is checked, and so are the status's
 * source, tag and count.  Parts: point-to-point from 0 bytes to 4 MiB in a
 * ring and to oneself, tags matched out of order (the unexpected queue),
 * MPI_ANY_TAG, MPI_ANY_SOURCE, probe/iprobe and matched probe
 * (improbe/mrecv), nonblocking send/receive with wait, waitall, waitany,
 * test and testall, cancel of a posted receive, barrier, broadcast from
 * every root, allreduce (sum, max, double sum) and alltoall, each up to
 * 4 MiB.
 *
 * Output: KTAP from rank 0, one result per part (a part fails when it
 * failed on any rank: each rank's verdict is reduced with MPI_LOR), with
 * "# rank R: ..." diagnostics.  Exit status 1 when a part failed.
 * MPI_TEST_MAX (bytes, default 4194304) caps the largest message;
 * MPI_TEST_TRACE set: every rank says when it reaches each part's barrier,
 * begins and ends it, and enters and leaves MPI_Finalize (a hang's picture).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, nranks;
static size_t max_size = 4u << 20;
static int part_failed;	/* this rank's verdict on the current part */
static int nparts, nfailed;

static void diag(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# rank %d: %s\n", rank, buf);
	fflush(stdout);
}

/* MPI_TEST_TRACE set: every rank says where it is (a hang's picture). */
static int tracing;

static void trace(const char *what, int part)
{
	if (tracing && part)
		diag("%s of part %d", what, part);
	else if (tracing)
		diag("%s", what);
}

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		part_failed = 1; \
		diag(__VA_ARGS__); \
	} \
} while (0)

/* The byte at offset i of the message src -> dst with this tag and size. */
static unsigned char pat(int src, int dst, int tag, size_t size, size_t i)
{
	uint32_t x = (uint32_t)src * 2654435761u ^ (uint32_t)dst * 40503u ^
		     (uint32_t)tag * 97u ^ (uint32_t)size * 7u;

	return (unsigned char)(x + i * 131 + (i >> 8) * 17 + (i >> 16));
}

static void fill(unsigned char *buf, int src, int dst, int tag, size_t size)
{
	for (size_t i = 0; i < size; i++)
		buf[i] = pat(src, dst, tag, size, i);
}

/* Every byte; reports the first wrong one.  Returns 1 if all match. */
static int verify(const unsigned char *buf, int src, int dst, int tag, size_t size,
		  const char *what)
{
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != pat(src, dst, tag, size, i)) {
			CHECK(0, "%s: %d->%d tag %d size %zu: byte %zu is %u, want %u", what,
			      src, dst, tag, size, i, buf[i], pat(src, dst, tag, size, i));
			return 0;
		}
	}
	return 1;
}

static void check_status(const MPI_Status *st, int src, int tag, size_t size,
			 const char *what)
{
	int count = -1;

	MPI_Get_count(st, MPI_BYTE, &count);
	CHECK(st->MPI_SOURCE == src, "%s: source %d, want %d", what, st->MPI_SOURCE, src);
	CHECK(st->MPI_TAG == tag, "%s: tag %d, want %d", what, st->MPI_TAG, tag);
	CHECK(count >= 0 && (size_t)count == size, "%s: count %d, want %zu", what, count,
	      size);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		diag("out of memory (%zu bytes)", n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* End a part: every rank's verdict, one KTAP line from rank 0. */
static void part_end(const char *name, double t0)
{
	int any = 0;

	MPI_Allreduce(&part_failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	nparts++;
	if (any)
		nfailed++;
	if (rank == 0) {
		printf("# %s: %.2f s\n", name, MPI_Wtime() - t0);
		printf("%s %d %s\n", any ? "not ok" : "ok", nparts, name);
		fflush(stdout);
	}
	part_failed = 0;
}

static const size_t sizes_all[] = { 0, 1, 7, 64, 1000, 4095, 4096, 4097, 65535, 65536,
				     65537, 1048575, 1048576, 1048579, 2097152 + 5,
				     4194304 };
#define NSIZES (sizeof(sizes_all) / sizeof(sizes_all[0]))

/* 1. Ring: each rank sends every size to rank+1 and receives from rank-1. */
static void t_ring(void)
{
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	unsigned char *sb = xmalloc(max_size), *rb = xmalloc(max_size + 16);

	for (size_t k = 0; k < NSIZES; k++) {
		size_t s = sizes_all[k];
		int tag = 100 + (int)k;
		MPI_Request rq;
		MPI_Status st;

		if (s > max_size)
			continue;
		fill(sb, rank, next, tag, s);
		memset(rb, 0xee, s + 16);
		MPI_Irecv(rb, (int)s + 16, MPI_BYTE, prev, tag, MPI_COMM_WORLD, &rq);
		MPI_Send(sb, (int)s, MPI_BYTE, next, tag, MPI_COMM_WORLD);
		MPI_Wait(&rq, &st);
		check_status(&st, prev, tag, s, "ring");
		verify(rb, prev, rank, tag, s, "ring");
		for (int i = 0; i < 16; i++)
			CHECK(rb[s + i] == 0xee, "ring: size %zu: byte %zu past the end written",
			      s, s + i);
	}
	free(sb);
	free(rb);
}

/* 2. To oneself, every size. */
static void t_self(void)
{
	unsigned char *sb = xmalloc(max_size), *rb = xmalloc(max_size);

	for (size_t k = 0; k < NSIZES; k++) {
		size_t s = sizes_all[k];
		MPI_Request rq;
		MPI_Status st;

		if (s > max_size)
			continue;
		fill(sb, rank, rank, 7, s);
		MPI_Isend(sb, (int)s, MPI_BYTE, rank, 7, MPI_COMM_WORLD, &rq);
		MPI_Recv(rb, (int)s, MPI_BYTE, rank, 7, MPI_COMM_WORLD, &st);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
		check_status(&st, rank, 7, s, "self");
		verify(rb, rank, rank, 7, s, "self");
	}
	free(sb);
	free(rb);
}

/* 3. Tags: rank-1 sends tags 5, 3, 9, 3 (sizes differ); this rank receives
 * 9 first, then 3 twice (in send order), then MPI_ANY_TAG gets the 5. */
static void t_tags(void)
{
	static const int tags[] = { 5, 3, 9, 3 };
	static const size_t sz[] = { 100, 70000, 0, 1048576 + 1 };
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	unsigned char *sb[4], *rb = xmalloc(sz[3] + 1);
	MPI_Request rq[4];
	MPI_Status st;

	for (int i = 0; i < 4; i++) {
		sb[i] = xmalloc(sz[i]);
		/* the two tag-3 messages differ by size: their order is checked */
		fill(sb[i], rank, next, tags[i], sz[i]);
		MPI_Isend(sb[i], (int)sz[i], MPI_BYTE, next, tags[i], MPI_COMM_WORLD, &rq[i]);
	}
	MPI_Recv(rb, (int)sz[3] + 1, MPI_BYTE, prev, 9, MPI_COMM_WORLD, &st);
	check_status(&st, prev, 9, sz[2], "tags: 9");
	MPI_Recv(rb, (int)sz[3] + 1, MPI_BYTE, prev, 3, MPI_COMM_WORLD, &st);
	check_status(&st, prev, 3, sz[1], "tags: first 3");
	verify(rb, prev, rank, 3, sz[1], "tags: first 3");
	MPI_Recv(rb, (int)sz[3] + 1, MPI_BYTE, prev, 3, MPI_COMM_WORLD, &st);
	check_status(&st, prev, 3, sz[3], "tags: second 3");
	verify(rb, prev, rank, 3, sz[3], "tags: second 3");
	MPI_Recv(rb, (int)sz[3] + 1, MPI_BYTE, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
	check_status(&st, prev, 5, sz[0], "tags: any tag");
	verify(rb, prev, rank, 5, sz[0], "tags: any tag");
	MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < 4; i++)
		free(sb[i]);
	free(rb);
}

/* 4. MPI_ANY_SOURCE: every rank sends to rank 0 (sizes by rank, up to
 * 1 MiB); rank 0 takes them with any source and must see each once. */
static void t_any_source(void)
{
	for (int round = 0; round < 2; round++) {
		/* a tag per round: a fast rank's second message must not meet
		 * rank 0's receives for the first round */
		const int tag = 21 + round;
		size_t mine = round ? ((size_t)1 << 20) + (size_t)rank : (size_t)rank * 1000;

		if (rank != 0) {
			unsigned char *b = xmalloc(mine);

			fill(b, rank, 0, tag, mine);
			MPI_Send(b, (int)mine, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
			free(b);
			continue;
		}
		unsigned char *rb = xmalloc(((size_t)1 << 20) + (size_t)nranks);
		int *seen = calloc((size_t)nranks, sizeof(int));

		for (int i = 1; i < nranks; i++) {
			MPI_Status st;
			int src, count;

			MPI_Recv(rb, (1 << 20) + nranks, MPI_BYTE, MPI_ANY_SOURCE, tag,
				 MPI_COMM_WORLD, &st);
			src = st.MPI_SOURCE;
			MPI_Get_count(&st, MPI_BYTE, &count);
			if (src < 1 || src >= nranks) {
				CHECK(0, "any source: source %d", src);
				continue;
			}
			size_t want = round ? ((size_t)1 << 20) + (size_t)src : (size_t)src * 1000;

			seen[src]++;
			check_status(&st, src, tag, want, "any source");
			verify(rb, src, 0, tag, want, "any source");
		}
		for (int i = 1; i < nranks; i++)
			CHECK(seen[i] == 1, "any source: rank %d seen %d times", i, seen[i]);
		free(seen);
		free(rb);
	}
}

/* 5. Probe: rank-1 sends three messages; this rank finds the first with
 * MPI_Iprobe (polling), receives it by its status, the second with
 * MPI_Probe on any source and tag, the third with MPI_Improbe and
 * MPI_Mrecv (a matched probe: libfabric's FI_CLAIM). */
static void t_probe(void)
{
	static const int tags[] = { 31, 32, 33 };
	static const size_t sz[] = { 3000, 2097152, 0 };
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	unsigned char *sb[3];
	MPI_Request rq[3];

	for (int i = 0; i < 3; i++) {
		sb[i] = xmalloc(sz[i]);
		fill(sb[i], rank, next, tags[i], sz[i]);
		MPI_Isend(sb[i], (int)sz[i], MPI_BYTE, next, tags[i], MPI_COMM_WORLD, &rq[i]);
	}
	for (int i = 0; i < 3; i++) {
		MPI_Status st;
		MPI_Message msg = MPI_MESSAGE_NULL;
		int flag = 0, count = -1;
		unsigned char *rb;

		if (i == 0) {
			long polls = 0;

			while (!flag) {
				MPI_Iprobe(prev, tags[0], MPI_COMM_WORLD, &flag, &st);
				polls++;
			}
			(void)polls;
		} else if (i == 1) {
			MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		} else {
			while (!flag)
				MPI_Improbe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
		}
		check_status(&st, prev, tags[i], sz[i], "probe");
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (count < 0)
			count = 0;
		rb = xmalloc((size_t)count);
		if (i == 2)
			MPI_Mrecv(rb, count, MPI_BYTE, &msg, &st);
		else
			MPI_Recv(rb, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
				 &st);
		check_status(&st, prev, tags[i], sz[i], "probe: receive");
		verify(rb, prev, rank, tags[i], sz[i], "probe");
		free(rb);
	}
	MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
	for (int i = 0; i < 3; i++)
		free(sb[i]);
}

/* 6. Nonblocking: 12 messages each way between neighbours, receives
 * posted before and after the sends, completed with MPI_Test (polling),
 * MPI_Waitany, MPI_Testall and MPI_Waitall. */
static void t_nonblocking(void)
{
	enum { N = 12 };
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	size_t sz[N];
	unsigned char *sb[N], *rb[N];
	MPI_Request sr[N], rr[N];
	MPI_Status st[N];
	int done = 0, flag = 0;

	for (int i = 0; i < N; i++) {
		sz[i] = (size_t)i * i * i * 2500 + (size_t)i;	/* 0 .. 3.3 MB */
		if (sz[i] > max_size)
			sz[i] = max_size;
		sb[i] = xmalloc(sz[i]);
		rb[i] = xmalloc(sz[i]);
		fill(sb[i], rank, next, 40 + i, sz[i]);
	}
	for (int i = 0; i < N / 2; i++)	/* half posted before the sends */
		MPI_Irecv(rb[i], (int)sz[i], MPI_BYTE, prev, 40 + i, MPI_COMM_WORLD, &rr[i]);
	for (int i = N - 1; i >= 0; i--)
		MPI_Isend(sb[i], (int)sz[i], MPI_BYTE, next, 40 + i, MPI_COMM_WORLD, &sr[i]);
	for (int i = N / 2; i < N; i++)
		MPI_Irecv(rb[i], (int)sz[i], MPI_BYTE, prev, 40 + i, MPI_COMM_WORLD, &rr[i]);
	/* the first by MPI_Test */
	while (!flag)
		MPI_Test(&rr[0], &flag, &st[0]);
	check_status(&st[0], prev, 40, sz[0], "nonblocking: test");
	/* then three by MPI_Waitany */
	for (int k = 0; k < 3; k++) {
		int idx = -1;
		MPI_Status s;

		MPI_Waitany(N, rr, &idx, &s);
		if (idx < 1 || idx >= N) {
			CHECK(0, "nonblocking: waitany index %d", idx);
			continue;
		}
		check_status(&s, prev, 40 + idx, sz[idx], "nonblocking: waitany");
		done++;
	}
	/* the rest by MPI_Testall, polled */
	flag = 0;
	while (!flag)
		MPI_Testall(N, rr, &flag, MPI_STATUSES_IGNORE);
	CHECK(done == 3, "nonblocking: waitany completed %d", done);
	for (int i = 0; i < N; i++)
		verify(rb[i], prev, rank, 40 + i, sz[i], "nonblocking");
	MPI_Waitall(N, sr, MPI_STATUSES_IGNORE);
	for (int i = 0; i < N; i++) {
		CHECK(sr[i] == MPI_REQUEST_NULL && rr[i] == MPI_REQUEST_NULL,
		      "nonblocking: request %d not freed", i);
		free(sb[i]);
		free(rb[i]);
	}
}

/* 7. Cancel: a posted receive that nothing matches is cancelled; a
 * message sent afterwards with that tag goes to the next receive posted,
 * not to the cancelled one. */
static void t_cancel(void)
{
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	unsigned char cb[64], rb[64], sb[64];
	MPI_Request rq;
	MPI_Status st;
	int cancelled = 0;

	memset(cb, 0x5a, sizeof(cb));
	MPI_Irecv(cb, sizeof(cb), MPI_BYTE, prev, 77, MPI_COMM_WORLD, &rq);
	MPI_Cancel(&rq);
	MPI_Wait(&rq, &st);
	MPI_Test_cancelled(&st, &cancelled);
	CHECK(cancelled, "cancel: the receive was not cancelled");
	/* nobody sent with tag 77 before here: the barrier orders it */
	MPI_Barrier(MPI_COMM_WORLD);
	fill(sb, rank, next, 77, sizeof(sb));
	MPI_Send(sb, sizeof(sb), MPI_BYTE, next, 77, MPI_COMM_WORLD);
	MPI_Recv(rb, sizeof(rb), MPI_BYTE, prev, 77, MPI_COMM_WORLD, &st);
	check_status(&st, prev, 77, sizeof(rb), "cancel: later receive");
	verify(rb, prev, rank, 77, sizeof(rb), "cancel: later receive");
	for (size_t i = 0; i < sizeof(cb); i++)
		if (cb[i] != 0x5a) {
			CHECK(0, "cancel: the cancelled receive's buffer was written");
			break;
		}
}

/* 8. Barrier: each rank sends to rank 0 only after leaving the barrier;
 * rank 0 enters last (after a pause long enough for a barrier that does
 * not wait to let those messages through) and must find none of them
 * waiting before it entered.  Five rounds. */
static void t_barrier(void)
{
	for (int round = 0; round < 5; round++) {
		int tag = 300 + round, flag = 0, v = round;
		MPI_Status st;

		if (rank == 0) {
			sleep_ms(200);
			MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
			CHECK(!flag, "barrier round %d: rank %d passed it before rank 0 entered",
			      round, st.MPI_SOURCE);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank != 0) {
			MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
		} else {
			for (int i = 1; i < nranks; i++) {
				MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st);
				CHECK(v == round, "barrier round %d: got %d", round, v);
			}
		}
	}
}

/* 9. Broadcast from every root, 0 bytes to 4 MiB. */
static void t_bcast(void)
{
	static const size_t sz[] = { 0, 1, 100000, 4194304 };
	unsigned char *b = xmalloc(max_size);

	for (int root = 0; root < nranks; root++) {
		for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
			size_t s = sz[k] > max_size ? max_size : sz[k];

			if (rank == root)
				fill(b, root, -1, (int)k, s);
			else
				memset(b, 0, s);
			MPI_Bcast(b, (int)s, MPI_BYTE, root, MPI_COMM_WORLD);
			verify(b, root, -1, (int)k, s, "bcast");
		}
	}
	free(b);
}

/* 10. Allreduce: sums and maxima of ints, a sum of doubles (exact in
 * binary), 1 to 1M elements (4 MiB). */
static void t_allreduce(void)
{
	static const size_t counts[] = { 1, 1000, 65536, 1048576 };

	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		size_t n = counts[k];

		if (n * sizeof(int) > max_size)
			n = max_size / sizeof(int);
		int *in = xmalloc(n * sizeof(int)), *out = xmalloc(n * sizeof(int));
		double *din = xmalloc(n * sizeof(double)), *dout = xmalloc(n * sizeof(double));
		long long sumr = (long long)nranks * (nranks - 1) / 2;
		int bad = 0;

		for (size_t i = 0; i < n; i++) {
			in[i] = (int)(i % 100000) * (rank + 1) - rank;
			din[i] = (double)rank * 0.5 + (double)(i % 1000);
		}
		MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		for (size_t i = 0; i < n && !bad; i++) {
			long long want = (long long)(i % 100000) * ((long long)nranks *
					 (nranks + 1) / 2) - sumr;

			if (out[i] != want) {
				CHECK(0, "allreduce sum: n %zu: [%zu] = %d, want %lld", n, i, out[i],
				      want);
				bad = 1;
			}
		}
		MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		for (size_t i = 0; i < n && !bad; i++) {
			long long a = (long long)(i % 100000);
			long long want = a * nranks - (nranks - 1);	/* rank n-1's, or ... */

			if (a == 0)
				want = 0;	/* ... rank 0's when the others are negative */
			if (out[i] != want) {
				CHECK(0, "allreduce max: n %zu: [%zu] = %d, want %lld", n, i, out[i],
				      want);
				bad = 1;
			}
		}
		if (n * sizeof(double) <= max_size) {
			MPI_Allreduce(din, dout, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			for (size_t i = 0; i < n && !bad; i++) {
				double want = 0.5 * (double)sumr + (double)nranks * (double)(i % 1000);

				if (dout[i] != want) {
					CHECK(0, "allreduce double: n %zu: [%zu] = %g, want %g", n, i,
					      dout[i], want);
					bad = 1;
				}
			}
		}
		free(in);
		free(out);
		free(din);
		free(dout);
	}
}

/* 11. Alltoall: a block from every rank to every rank, 1 byte to 1 MiB per
 * block (4 MiB per rank with 4 ranks). */
static void t_alltoall(void)
{
	static const size_t blocks[] = { 1, 1000, 65536, 1048576 };

	for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) {
		size_t bs = blocks[k];

		if (bs * (size_t)nranks > max_size)
			bs = max_size / (size_t)nranks;
		unsigned char *sb = xmalloc(bs * (size_t)nranks);
		unsigned char *rb = xmalloc(bs * (size_t)nranks);

		for (int d = 0; d < nranks; d++)
			fill(sb + (size_t)d * bs, rank, d, 500 + (int)k, bs);
		memset(rb, 0, bs * (size_t)nranks);
		MPI_Alltoall(sb, (int)bs, MPI_BYTE, rb, (int)bs, MPI_BYTE, MPI_COMM_WORLD);
		for (int s = 0; s < nranks; s++)
			verify(rb + (size_t)s * bs, s, rank, 500 + (int)k, bs, "alltoall");
		free(sb);
		free(rb);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} parts[] = {
		{ "p2p ring, 0 B to 4 MiB, every byte checked", t_ring },
		{ "p2p to self, 0 B to 4 MiB", t_self },
		{ "tags matched out of order, MPI_ANY_TAG", t_tags },
		{ "MPI_ANY_SOURCE, small and 1 MiB", t_any_source },
		{ "MPI_Iprobe, MPI_Probe, MPI_Improbe+MPI_Mrecv", t_probe },
		{ "nonblocking: MPI_Test, Waitany, Testall, Waitall", t_nonblocking },
		{ "MPI_Cancel of a posted receive", t_cancel },
		{ "MPI_Barrier holds every rank", t_barrier },
		{ "MPI_Bcast from every root, 0 B to 4 MiB", t_bcast },
		{ "MPI_Allreduce sum/max/double, to 4 MiB", t_allreduce },
		{ "MPI_Alltoall, blocks of 1 B to 1 MiB", t_alltoall },
	};
	const int np = (int)(sizeof(parts) / sizeof(parts[0]));
	const char *e = getenv("MPI_TEST_MAX");
	char name[MPI_MAX_PROCESSOR_NAME];
	int len = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(name, &len);
	tracing = getenv("MPI_TEST_TRACE") != NULL;
	if (e && atol(e) > 0)
		max_size = (size_t)atol(e);
	diag("on %s of %d ranks", name, nranks);
	if (rank == 0) {
		printf("KTAP version 1\n");
		printf("1..%d\n", nranks < 2 ? 1 : np);
		fflush(stdout);
	}
	if (nranks < 2) {
		if (rank == 0)
			printf("not ok 1 mpi_test needs 2 or more ranks, has %d\n", nranks);
		MPI_Finalize();
		return 1;
	}
	for (int i = 0; i < np; i++) {
		double t0;

		trace("at the barrier", i + 1);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		trace("beginning", i + 1);
		parts[i].fn();
		trace("at the end", i + 1);
		part_end(parts[i].name, t0);
	}
	trace("entering MPI_Finalize", 0);
	MPI_Finalize();
	trace("out of MPI_Finalize", 0);
	return nfailed ? 1 : 0;
}
