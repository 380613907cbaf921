// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the relay's fault engine (faults.c), KTAP on stdout.
 * Fixed seeds: every run sees the same frames, but each check compares what
 * came out with what went in, so a wrong rate, a lost or reordered frame or a
 * flipped header bit fails it.  Rates are checked over 10^5 frames against
 * about 5 standard deviations of the binomial count.
 */
#define _POSIX_C_SOURCE 200809L
#include "faults.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLEN 64			/* test frame length */
#define N_RATE 100000		/* frames for the rate checks */
#define OUT_MAX (3 * N_RATE)
#define PLAN 36			/* tests below */

struct out {
	int src, dst;
	size_t len;
	unsigned char d[FLEN];
};

static struct out *outs;
static size_t nout;
static int ntest, nfail;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", cond ? "ok" : "not ok", ++ntest);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		nfail++;
}

static void record(void *ctx, int src, int dst, const unsigned char *buf, size_t len)
{
	struct out *o;

	(void)ctx;
	if (nout == OUT_MAX)
		return;
	o = &outs[nout++];
	o->src = src;
	o->dst = dst;
	o->len = len;
	memcpy(o->d, buf, len < FLEN ? len : FLEN);
}

/* Frame number seq: MACs by port, EtherType 0x88b5, seq, then a pattern. */
static void make_frame(unsigned char *f, int src, int dst, uint32_t seq)
{
	memset(f, 0, FLEN);
	f[5] = (unsigned char)(dst + 1);
	f[11] = (unsigned char)(src + 1);
	f[12] = 0x88;
	f[13] = 0xb5;
	memcpy(f + 14, &seq, sizeof(seq));
	for (int i = 18; i < FLEN; i++)
		f[i] = (unsigned char)(seq * 31 + (uint32_t)i * 7);
}

static uint32_t seq_of(const struct out *o)
{
	uint32_t s;

	memcpy(&s, o->d + 14, sizeof(s));
	return s;
}

static void setup(struct faults *f, int nports, const char *spec)
{
	struct faults_cfg c;
	char err[200];

	faults_init(f, nports, record, NULL);
	c = f->cfg;
	if (faults_parse(&c, spec, err, sizeof(err)))
		printf("# setup: %s: %s\n", spec, err);
	faults_configure(f, &c);
	nout = 0;
}

static void send_n(struct faults *f, int src, int dst, uint32_t first, uint32_t n)
{
	unsigned char fr[FLEN];

	for (uint32_t i = 0; i < n; i++) {
		make_frame(fr, src, dst, first + i);
		faults_frame(f, src, dst, fr, FLEN, 0);
	}
}

static int near(uint64_t got, double expect, double tol)
{
	return (double)got >= expect - tol && (double)got <= expect + tol;
}

static void set(struct faults *f, const char *spec)
{
	char reply[FAULTS_REPLY_MAX], line[300];

	snprintf(line, sizeof(line), "set %s", spec);
	if (faults_control(f, line, reply, sizeof(reply)))
		printf("# %s: %s\n", line, reply);
}

static int ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static int bits_differ(const unsigned char *a, const unsigned char *b, size_t from, size_t to)
{
	int n = 0;

	for (size_t i = from; i < to; i++)
		n += __builtin_popcount((unsigned int)(a[i] ^ b[i]));
	return n;
}

static void test_parse(void)
{
	struct faults_cfg c;
	struct faults f;
	char err[200];
	static const char *const bad[] = {
		"drop=101", "drop=-1", "drop=abc", "drop=0.00001", "drop=", "drop",
		"drop=5%", "bogus=1", "seed=x", "seed=-3", "corrupt_bits=0",
		"corrupt_bits=65", "reorder_gap=0,reorder_ms=0", "drop=.", "drop=1.2.3",
		"reorder_ms=10001",
	};
	int all_bad = 1, unchanged = 1;

	faults_init(&f, 2, record, NULL);
	c = f.cfg;
	ok(faults_parse(&c, "drop=5,dup=2,reorder=5,corrupt=1,seed=42", err, sizeof(err)) == 0 &&
	   c.drop == 50000 && c.dup == 20000 && c.reorder == 50000 && c.corrupt == 10000 &&
	   c.seed == 42, "parse: drop=5,dup=2,reorder=5,corrupt=1,seed=42");
	ok(faults_parse(&c, "drop=0.25,dup=0.0001,corrupt=100,reorder=7.5", err, sizeof(err)) == 0 &&
	   c.drop == 2500 && c.dup == 1 && c.corrupt == 1000000 && c.reorder == 75000 &&
	   c.seed == 42, "parse: fractional percent, keys not named keep their value");
	ok(faults_parse(&c, "reorder_gap=5,reorder_ms=0,corrupt_bits=3", err, sizeof(err)) == 0 &&
	   c.reorder_gap == 5 && c.reorder_ms == 0 && c.corrupt_bits == 3,
	   "parse: reorder_gap, reorder_ms, corrupt_bits");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct faults_cfg before = c;

		err[0] = '\0';
		if (faults_parse(&c, bad[i], err, sizeof(err)) == 0 || !err[0]) {
			printf("# accepted: %s\n", bad[i]);
			all_bad = 0;
		}
		if (memcmp(&before, &c, sizeof(c)))
			unchanged = 0;
	}
	ok(all_bad, "parse: %zu bad specs rejected with a reason", sizeof(bad) / sizeof(bad[0]));
	ok(unchanged, "parse: a rejected spec changes nothing");
	c = f.cfg;
	ok(faults_parse(&c, "none", err, sizeof(err)) == 0 && faults_parse(&c, "", err, sizeof(err)) == 0 &&
	   !memcmp(&c, &f.cfg, sizeof(c)), "parse: 'none' and '' change nothing");
}

static void test_passthrough(void)
{
	struct faults f;
	unsigned char fr[FLEN];
	int same = 1;

	setup(&f, 2, "");
	send_n(&f, 0, 1, 0, 1000);
	for (uint32_t i = 0; i < 1000 && same; i++) {
		make_frame(fr, 0, 1, i);
		same = i < nout && outs[i].dst == 1 && !memcmp(outs[i].d, fr, FLEN);
	}
	ok(nout == 1000 && same && f.st.passed == 1000,
	   "no faults: 1000 frames pass unchanged and in order");
	faults_free(&f);
}

static void test_drop(const char *spec, double rate, double tol)
{
	struct faults f;
	uint32_t last = 0;
	int ordered = 1;

	setup(&f, 2, spec);
	send_n(&f, 0, 1, 1, N_RATE);
	for (size_t i = 0; i < nout; i++) {
		if (seq_of(&outs[i]) <= last)
			ordered = 0;
		last = seq_of(&outs[i]);
	}
	ok(near(f.st.dropped, N_RATE * rate, tol) && nout + f.st.dropped == N_RATE &&
	   f.st.passed == nout && ordered,
	   "%s: %" PRIu64 " of %d dropped, the rest in order", spec, f.st.dropped, N_RATE);
	faults_free(&f);
}

static void test_dup(void)
{
	struct faults f;
	size_t pairs = 0;

	setup(&f, 2, "dup=2,seed=7");
	send_n(&f, 0, 1, 1, N_RATE);
	for (size_t i = 1; i < nout; i++)
		if (!memcmp(outs[i].d, outs[i - 1].d, FLEN))
			pairs++;
	ok(near(f.st.duplicated, N_RATE * 0.02, 230) && nout == N_RATE + f.st.duplicated &&
	   pairs == f.st.duplicated,
	   "dup=2: %" PRIu64 " of %d duplicated, each copy right behind its frame",
	   f.st.duplicated, N_RATE);
	faults_free(&f);
}

static void test_corrupt(unsigned int bits)
{
	struct faults f;
	unsigned char fr[FLEN];
	size_t changed = 0, header = 0, wrong_bits = 0;
	char spec[64];

	snprintf(spec, sizeof(spec), "corrupt=1,corrupt_bits=%u,seed=3", bits);
	setup(&f, 2, spec);
	send_n(&f, 0, 1, 1, N_RATE);
	for (size_t i = 0; i < nout; i++) {
		/* the seq is in the payload too: find the original by position */
		make_frame(fr, 0, 1, (uint32_t)i + 1);
		if (memcmp(outs[i].d, fr, FAULTS_ETH_HLEN))
			header++;
		int n = bits_differ(outs[i].d, fr, FAULTS_ETH_HLEN, FLEN);

		if (n) {
			changed++;
			if (n != (int)bits)
				wrong_bits++;
		}
	}
	ok(nout == N_RATE && near(f.st.corrupted, N_RATE * 0.01, 160) &&
	   changed == f.st.corrupted && wrong_bits == 0,
	   "corrupt=1,corrupt_bits=%u: %" PRIu64 " of %d frames with exactly %u payload bit(s) flipped",
	   bits, f.st.corrupted, N_RATE, bits);
	ok(header == 0, "corrupt_bits=%u: the first 14 bytes never change (%zu did)", bits, header);
	faults_free(&f);
}

static void test_corrupt_short(void)
{
	struct faults f;
	unsigned char fr[FLEN], hdr[FAULTS_ETH_HLEN];

	setup(&f, 2, "corrupt=100,corrupt_bits=64");
	make_frame(fr, 0, 1, 0);
	memcpy(hdr, fr, sizeof(hdr));
	faults_frame(&f, 0, 1, hdr, sizeof(hdr), 0);
	faults_frame(&f, 0, 1, fr, 15, 0);	/* 8 payload bits: all flip */
	ok(nout == 2 && outs[0].len == 14 && !memcmp(outs[0].d, fr, 14) &&
	   f.st.corrupted == 1 && outs[1].d[14] == (unsigned char)~fr[14] &&
	   !memcmp(outs[1].d, fr, 14),
	   "corrupt: a header-only frame passes intact, a 1-byte payload gets all 8 bits");
	faults_free(&f);
}

static void test_reorder_rate(void)
{
	struct faults f;
	uint32_t maxseen = 0;
	size_t inversions = 0;
	unsigned char *seen = calloc(N_RATE + 1, 1);
	int once = 1;

	setup(&f, 2, "reorder=5,seed=11");
	send_n(&f, 0, 1, 1, N_RATE);
	faults_tick(&f, UINT64_MAX / 2);	/* the last ones wait for their delay */
	for (size_t i = 0; i < nout; i++) {
		uint32_t s = seq_of(&outs[i]);

		if (s < maxseen)
			inversions++;
		if (s > maxseen)
			maxseen = s;
		if (s > N_RATE || seen[s]++)
			once = 0;
	}
	ok(nout == N_RATE && once && f.nheld == 0,
	   "reorder=5: every frame delivered exactly once");
	ok(near(f.st.reordered, N_RATE * 0.05, 350) && inversions >= f.st.reordered * 9 / 10,
	   "reorder=5: %" PRIu64 " of %d held back, %zu arrived after a later frame",
	   f.st.reordered, N_RATE, inversions);
	free(seen);
	faults_free(&f);
}

static void test_reorder_exact(void)
{
	struct faults f;
	unsigned char fr[FLEN];
	uint32_t order[6];
	int n;

	setup(&f, 3, "");
	set(&f, "reorder=100");
	make_frame(fr, 0, 1, 0);
	faults_frame(&f, 0, 1, fr, FLEN, 0);
	set(&f, "reorder=0");
	send_n(&f, 1, 0, 100, 3);	/* other direction: does not pass it */
	send_n(&f, 0, 2, 200, 3);	/* other link: does not pass it */
	n = (int)nout;
	send_n(&f, 0, 1, 1, 5);
	for (int i = 0; i < 6 && n + i < (int)nout; i++)
		order[i] = seq_of(&outs[n + i]);
	ok(nout == 12 && order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 0 &&
	   order[4] == 4 && order[5] == 5,
	   "reorder_gap=3: a held frame comes out right after 3 later frames on its own link");
	faults_free(&f);

	setup(&f, 2, "reorder=100,reorder_ms=20");
	make_frame(fr, 0, 1, 9);
	faults_frame(&f, 0, 1, fr, FLEN, 1000);
	int t0 = faults_timeout_ms(&f, 1000);

	faults_tick(&f, 1019);
	size_t before = nout;

	faults_tick(&f, 1020);
	ok(t0 == 20 && before == 0 && nout == 1 && seq_of(&outs[0]) == 9 &&
	   faults_timeout_ms(&f, 1020) == -1,
	   "reorder_ms=20: a held frame is released by the clock after 20 ms, not before");
	faults_free(&f);

	setup(&f, 2, "reorder=100,reorder_ms=0,reorder_gap=1000,dup=100");
	send_n(&f, 0, 1, 0, FAULTS_HOLD_MAX + 10);
	ok(f.nheld == FAULTS_HOLD_MAX && f.st.reordered == FAULTS_HOLD_MAX && nout == 20 &&
	   faults_timeout_ms(&f, 0) == -1,
	   "reorder: at most %d frames held, the rest pass", FAULTS_HOLD_MAX);
	faults_free(&f);
}

static void test_partition(void)
{
	struct faults f;
	char reply[FAULTS_REPLY_MAX];
	int rc;

	setup(&f, 2, "");
	rc = faults_control(&f, "partition", reply, sizeof(reply));
	send_n(&f, 0, 1, 0, 1000);
	send_n(&f, 1, 0, 0, 1000);
	ok(rc == 0 && !strncmp(reply, "OK ", 3) && ends_with(reply, " partition=all") &&
	   nout == 0 && f.st.partitioned == 2000,
	   "partition: all 2000 frames in both directions dropped");
	rc = faults_control(&f, "heal", reply, sizeof(reply));
	send_n(&f, 0, 1, 0, 10);
	send_n(&f, 1, 0, 0, 10);
	ok(rc == 0 && ends_with(reply, " partition=none") && nout == 20,
	   "heal: frames pass again both ways");
	faults_free(&f);

	setup(&f, 3, "");
	rc = faults_control(&f, "partition 0", reply, sizeof(reply));
	send_n(&f, 0, 1, 0, 10);
	send_n(&f, 2, 0, 0, 10);
	send_n(&f, 1, 2, 0, 10);
	send_n(&f, 2, 1, 0, 10);
	ok(rc == 0 && ends_with(reply, " partition=0") && nout == 20 && f.st.partitioned == 20 &&
	   outs[0].src == 1 && outs[19].src == 2,
	   "partition 0 (of 3): port 0 cut off both ways, 1 <-> 2 still pass");
	ok(faults_control(&f, "partition 0 1 2", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "partition 3", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "partition x", reply, sizeof(reply)) == -1 &&
	   !strncmp(reply, "ERR ", 4) && faults_cut(&f, 0, 1) && !faults_cut(&f, 1, 2),
	   "partition: a side with every port, a missing port or a word: ERR, no change");
	faults_free(&f);

	setup(&f, 2, "reorder=100,dup=100");
	send_n(&f, 0, 1, 0, 1);
	faults_control(&f, "partition", reply, sizeof(reply));
	faults_tick(&f, 1000);
	ok(nout == 0 && f.nheld == 0 && f.st.partitioned == 2,
	   "partition: a frame held before the cut is lost with it (both copies)");
	faults_free(&f);
}

/* FNV-1a over what came out */
static uint64_t trace_hash(void)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < nout; i++)
		for (size_t j = 0; j < FLEN; j++)
			h = (h ^ outs[i].d[j]) * 1099511628211ULL;
	return h ^ nout;
}

static uint64_t run_mixed(const char *spec, struct faults_stats *st, int *balanced)
{
	struct faults f;
	unsigned char fr[FLEN];
	uint64_t h, held = 0;

	setup(&f, 2, spec);
	for (uint32_t i = 0; i < N_RATE; i++) {
		make_frame(fr, (int)(i & 1), (int)!(i & 1), i);
		faults_frame(&f, (int)(i & 1), (int)!(i & 1), fr, FLEN, i / 100);
		faults_tick(&f, i / 100);
	}
	for (unsigned int i = 0; i < f.nheld; i++)
		held += f.held[i].copies;
	*st = f.st;
	*balanced = st->frames + st->duplicated == st->passed + st->dropped +
		st->partitioned + held;
	h = trace_hash();
	faults_free(&f);
	return h;
}

static void test_mixed(void)
{
	struct faults_stats a, b, c;
	int bal_a, bal_b, bal_c;
	uint64_t ha = run_mixed("drop=5,dup=2,reorder=5,corrupt=1,seed=42", &a, &bal_a);
	uint64_t hb = run_mixed("drop=5,dup=2,reorder=5,corrupt=1,seed=42", &b, &bal_b);
	uint64_t hc = run_mixed("drop=5,dup=2,reorder=5,corrupt=1,seed=43", &c, &bal_c);
	double kept = N_RATE - (double)a.dropped;

	ok(ha == hb && !memcmp(&a, &b, sizeof(a)), "seed=42 twice: the same frames come out");
	ok(ha != hc, "seed=43: different frames come out");
	ok(bal_a && bal_c, "frames + duplicated == passed + dropped + partitioned + held");
	ok(near(a.dropped, N_RATE * 0.05, 350) && near(a.corrupted, kept * 0.01, 160) &&
	   near(a.duplicated, kept * 0.02, 230) && near(a.reordered, kept * 0.05, 350),
	   "all four at once: each rate holds (dropped %" PRIu64 ", corrupted %" PRIu64
	   ", duplicated %" PRIu64 ", reordered %" PRIu64 ")",
	   a.dropped, a.corrupted, a.duplicated, a.reordered);
}

static void test_control(void)
{
	struct faults f, g;
	char reply[FAULTS_REPLY_MAX];
	uint64_t ha, hb;

	setup(&f, 2, "");
	ok(faults_control(&f, "stats", reply, sizeof(reply)) == 0 &&
	   !strncmp(reply, "OK frames=0 passed=0 dropped=0 ", 31) && strstr(reply, " drop=0 "),
	   "control: stats answers OK with the counters and rates");
	ok(faults_control(&f, "set drop=1.5,corrupt=0.25", reply, sizeof(reply)) == 0 &&
	   strstr(reply, " drop=1.5 ") && strstr(reply, " corrupt=0.25 ") &&
	   f.cfg.drop == 15000, "control: set changes the named rates, echoed back");
	ok(faults_control(&f, "set drop=500", reply, sizeof(reply)) == -1 &&
	   !strncmp(reply, "ERR bad value '500' for drop", 28) && f.cfg.drop == 15000,
	   "control: set with a bad value: ERR, rates unchanged");
	ok(faults_control(&f, "reset", reply, sizeof(reply)) == 0 && f.cfg.drop == 0 &&
	   f.cfg.corrupt == 0 && strstr(reply, "partition=none"),
	   "control: reset clears rates and partition");
	ok(faults_control(&f, "bogus", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "heal now", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "set", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "", reply, sizeof(reply)) == -1 &&
	   faults_control(&f, "averyveryverylongcommandname", reply, sizeof(reply)) == -1 &&
	   !strncmp(reply, "ERR ", 4), "control: unknown commands and stray arguments: ERR");
	faults_free(&f);

	/* set seed=N restarts the PRNG: same decisions as an engine born with it */
	setup(&f, 2, "drop=50");
	send_n(&f, 0, 1, 0, 100);
	set(&f, "seed=9");
	nout = 0;
	send_n(&f, 0, 1, 0, 1000);
	ha = trace_hash();
	setup(&g, 2, "drop=50,seed=9");
	send_n(&g, 0, 1, 0, 1000);
	hb = trace_hash();
	ok(ha == hb, "control: set seed=9 restarts the PRNG from 9");
	faults_free(&f);
	faults_free(&g);
}

int main(void)
{
	outs = calloc(OUT_MAX, sizeof(*outs));
	if (!outs)
		return 1;
	printf("KTAP version 1\n");
	printf("1..%d\n", PLAN);
	test_parse();
	test_passthrough();
	test_drop("drop=5,seed=1", 0.05, 350);
	test_drop("drop=0.5,seed=2", 0.005, 120);
	test_drop("drop=100", 1.0, 0);
	test_dup();
	test_corrupt(1);
	test_corrupt(3);
	test_corrupt_short();
	test_reorder_rate();
	test_reorder_exact();
	test_partition();
	test_mixed();
	test_control();
	if (ntest != PLAN)
		printf("# plan says %d, ran %d\n", PLAN, ntest);
	free(outs);
	return nfail || ntest != PLAN;
}
