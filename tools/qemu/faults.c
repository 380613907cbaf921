// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the harness's relay: see faults.h.
 *
 * Per frame on a link, in this order: a cut link loses it (partitioned); the
 * drop rate loses it; the corrupt rate flips payload bits (never the 14-byte
 * Ethernet header, so the frame still reaches the NIC and must be caught by a
 * checksum or a parser); the dup rate makes a second copy; the reorder rate
 * holds it back until reorder_gap later frames on the same link went past it
 * or reorder_ms passed.  A rate of 0 draws nothing from the PRNG, so an unused
 * fault does not shift the others' decisions.
 */
#define _POSIX_C_SOURCE 200809L
#include "faults.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX 256

/* splitmix64: small, fast, and the same sequence everywhere for one seed */
static uint64_t rnd(struct faults *f)
{
	uint64_t z = (f->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n), n < 2^32 */
static uint32_t below(struct faults *f, uint32_t n)
{
	return (uint32_t)(((rnd(f) >> 32) * n) >> 32);
}

static int roll(struct faults *f, uint32_t ppm)
{
	if (ppm == 0)
		return 0;
	if (ppm >= FAULTS_PPM)
		return 1;
	return below(f, FAULTS_PPM) < ppm;
}

void faults_init(struct faults *f, int nports, faults_emit_fn emit, void *ctx)
{
	memset(f, 0, sizeof(*f));
	f->nports = nports;
	f->emit = emit;
	f->ctx = ctx;
	f->cfg.seed = 1;
	f->cfg.reorder_gap = 3;
	f->cfg.reorder_ms = 20;
	f->cfg.corrupt_bits = 1;
	f->rng = f->cfg.seed;
}

void faults_free(struct faults *f)
{
	for (unsigned int i = 0; i < f->nheld; i++)
		free(f->held[i].buf);
	f->nheld = 0;
}

void faults_configure(struct faults *f, const struct faults_cfg *cfg)
{
	if (cfg->seed != f->cfg.seed)
		f->rng = cfg->seed;
	f->cfg = *cfg;
}

/* "5", "0.25", "100": percent with at most 4 decimals -> ppm */
static int parse_pct(const char *s, uint32_t *ppm)
{
	uint64_t v = 0;
	int frac = -1, digits = 0;

	for (; *s; s++) {
		if (*s == '.') {
			if (frac >= 0)
				return -1;
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9')
			return -1;
		if (frac >= 0 && ++frac > 4)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > 100ULL * 10000)
			return -1;
		digits++;
	}
	if (!digits)
		return -1;
	for (int i = frac < 0 ? 0 : frac; i < 4; i++)
		v *= 10;
	if (v > FAULTS_PPM)
		return -1;
	*ppm = (uint32_t)v;
	return 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int set_key(struct faults_cfg *c, const char *key, const char *val)
{
	uint64_t v;

	if (!strcmp(key, "drop"))
		return parse_pct(val, &c->drop);
	if (!strcmp(key, "dup"))
		return parse_pct(val, &c->dup);
	if (!strcmp(key, "reorder"))
		return parse_pct(val, &c->reorder);
	if (!strcmp(key, "corrupt"))
		return parse_pct(val, &c->corrupt);
	if (!strcmp(key, "seed"))
		return parse_u64(val, UINT64_MAX, &c->seed);
	if (!strcmp(key, "reorder_gap")) {
		if (parse_u64(val, 1000, &v))
			return -1;
		c->reorder_gap = (unsigned int)v;
		return 0;
	}
	if (!strcmp(key, "reorder_ms")) {
		if (parse_u64(val, 10000, &v))
			return -1;
		c->reorder_ms = (unsigned int)v;
		return 0;
	}
	if (!strcmp(key, "corrupt_bits")) {
		if (parse_u64(val, FAULTS_MAX_BITS, &v) || v == 0)
			return -1;
		c->corrupt_bits = (unsigned int)v;
		return 0;
	}
	return -2;
}

int faults_parse(struct faults_cfg *cfg, const char *spec, char *err, size_t errlen)
{
	struct faults_cfg c = *cfg;
	char buf[SPEC_MAX], *tok, *save = NULL;

	if (!spec[0] || !strcmp(spec, "none"))
		return 0;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "spec longer than %d characters", SPEC_MAX - 1);
		return -1;
	}
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int rc;

		if (!eq) {
			snprintf(err, errlen, "'%s': expected key=value", tok);
			return -1;
		}
		*eq = '\0';
		rc = set_key(&c, tok, eq + 1);
		if (rc == -2) {
			snprintf(err, errlen, "unknown key '%s' (drop dup reorder corrupt seed "
				 "reorder_gap reorder_ms corrupt_bits)", tok);
			return -1;
		}
		if (rc) {
			snprintf(err, errlen, "bad value '%s' for %s", eq + 1, tok);
			return -1;
		}
	}
	if (c.reorder_gap == 0 && c.reorder_ms == 0) {
		snprintf(err, errlen, "reorder_gap and reorder_ms cannot both be 0");
		return -1;
	}
	*cfg = c;
	return 0;
}

int faults_cut(const struct faults *f, int src, int dst)
{
	if (f->cut_all)
		return 1;
	return !((f->side >> src) & 1) != !((f->side >> dst) & 1);
}

/* Hand copies of a frame to the relay, unless its link was cut meanwhile. */
static void deliver(struct faults *f, int src, int dst, const unsigned char *buf,
		    size_t len, unsigned int copies)
{
	if (faults_cut(f, src, dst)) {
		f->st.partitioned += copies;
		return;
	}
	for (unsigned int i = 0; i < copies; i++) {
		f->st.passed++;
		f->emit(f->ctx, src, dst, buf, len);
	}
}

static void release(struct faults *f, unsigned int i)
{
	struct faults_held h = f->held[i];

	memmove(&f->held[i], &f->held[i + 1], (f->nheld - i - 1) * sizeof(h));
	f->nheld--;
	deliver(f, h.src, h.dst, h.buf, h.len, h.copies);
	free(h.buf);
}

/* A frame went down link src -> dst: held frames there are one step nearer. */
static void advance(struct faults *f, int src, int dst)
{
	unsigned int i = 0;

	while (i < f->nheld) {
		struct faults_held *h = &f->held[i];

		if (h->src == src && h->dst == dst && h->gap && --h->gap == 0)
			release(f, i);	/* the next one moved into slot i */
		else
			i++;
	}
}

static void flip_bits(struct faults *f, unsigned char *buf, size_t len)
{
	uint32_t nbits = (uint32_t)((len - FAULTS_ETH_HLEN) * 8);
	uint32_t done[FAULTS_MAX_BITS];
	unsigned int k = f->cfg.corrupt_bits, n = 0;

	if (k > nbits)
		k = nbits;
	while (n < k) {
		uint32_t b = below(f, nbits);
		unsigned int j;

		for (j = 0; j < n && done[j] != b; j++)
			;
		if (j < n)
			continue;	/* already flipped: distinct bits only */
		done[n++] = b;
		buf[FAULTS_ETH_HLEN + b / 8] ^= (unsigned char)(1u << (b % 8));
	}
}

void faults_frame(struct faults *f, int src, int dst, const unsigned char *buf,
		  size_t len, uint64_t now_ms)
{
	unsigned char *copy = NULL;
	unsigned int copies = 1;

	f->st.frames++;
	if (faults_cut(f, src, dst)) {
		f->st.partitioned++;
		return;
	}
	if (roll(f, f->cfg.drop)) {
		f->st.dropped++;
		return;
	}
	if (len > FAULTS_ETH_HLEN && roll(f, f->cfg.corrupt)) {
		copy = malloc(len);
		if (copy) {
			memcpy(copy, buf, len);
			flip_bits(f, copy, len);
			buf = copy;
			f->st.corrupted++;
		}
	}
	if (roll(f, f->cfg.dup)) {
		copies = 2;
		f->st.duplicated++;
	}
	if (roll(f, f->cfg.reorder) && f->nheld < FAULTS_HOLD_MAX) {
		if (!copy)
			copy = malloc(len);
		if (copy) {
			if (buf != copy)
				memcpy(copy, buf, len);
			f->held[f->nheld++] = (struct faults_held){
				.buf = copy, .len = len, .src = src, .dst = dst,
				.copies = copies, .gap = f->cfg.reorder_gap,
				.deadline_ms = f->cfg.reorder_ms ?
					now_ms + f->cfg.reorder_ms : UINT64_MAX,
			};
			f->st.reordered++;
			return;
		}
	}
	deliver(f, src, dst, buf, len, copies);
	free(copy);
	advance(f, src, dst);
}

void faults_tick(struct faults *f, uint64_t now_ms)
{
	unsigned int i = 0;

	while (i < f->nheld) {
		if (f->held[i].deadline_ms <= now_ms)
			release(f, i);
		else
			i++;
	}
}

int faults_timeout_ms(const struct faults *f, uint64_t now_ms)
{
	uint64_t first = UINT64_MAX;

	for (unsigned int i = 0; i < f->nheld; i++)
		if (f->held[i].deadline_ms < first)
			first = f->held[i].deadline_ms;
	if (first == UINT64_MAX)
		return -1;
	if (first <= now_ms)
		return 0;
	return first - now_ms > 60000 ? 60000 : (int)(first - now_ms);
}

/* ppm -> "5", "0.25": the percent faults_parse() reads back */
static const char *pct(uint32_t ppm, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u.%04u", ppm / 10000, ppm % 10000);

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	return buf;
}

static void describe_partition(const struct faults *f, char *buf, size_t len)
{
	size_t off = 0;

	if (f->cut_all) {
		snprintf(buf, len, "all");
		return;
	}
	if (!f->side) {
		snprintf(buf, len, "none");
		return;
	}
	buf[0] = '\0';
	for (int p = 0; p < FAULTS_MAX_PORTS && off < len; p++)
		if ((f->side >> p) & 1)
			off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? "+" : "", p);
}

void faults_describe(const struct faults *f, char *buf, size_t len)
{
	const struct faults_stats *s = &f->st;
	char a[16], b[16], c[16], d[16], part[200];

	describe_partition(f, part, sizeof(part));
	snprintf(buf, len,
		 "frames=%" PRIu64 " passed=%" PRIu64 " dropped=%" PRIu64
		 " duplicated=%" PRIu64 " reordered=%" PRIu64 " corrupted=%" PRIu64
		 " partitioned=%" PRIu64 " held=%u drop=%s dup=%s reorder=%s corrupt=%s"
		 " seed=%" PRIu64 " reorder_gap=%u reorder_ms=%u corrupt_bits=%u partition=%s",
		 s->frames, s->passed, s->dropped, s->duplicated, s->reordered,
		 s->corrupted, s->partitioned, f->nheld,
		 pct(f->cfg.drop, a, sizeof(a)), pct(f->cfg.dup, b, sizeof(b)),
		 pct(f->cfg.reorder, c, sizeof(c)), pct(f->cfg.corrupt, d, sizeof(d)),
		 f->cfg.seed, f->cfg.reorder_gap, f->cfg.reorder_ms, f->cfg.corrupt_bits, part);
}

/*
 * "partition [PORT...]": no port cuts every link; ports (separated by spaces,
 * commas or '+') make one side, the other ports the other, and only the links
 * across are cut.
 */
static int partition(struct faults *f, const char *args, char *err, size_t len)
{
	uint64_t side = 0, all = f->nports >= 64 ? UINT64_MAX : (1ULL << f->nports) - 1;
	const char *s = args;

	while (*s) {
		char *end;
		long p;

		if (*s == ' ' || *s == ',' || *s == '+') {
			s++;
			continue;
		}
		if (*s < '0' || *s > '9') {
			snprintf(err, len, "partition: '%s' is not a port number", s);
			return -1;
		}
		p = strtol(s, &end, 10);
		if (p >= f->nports) {
			snprintf(err, len, "partition: no port %ld (0..%d)", p, f->nports - 1);
			return -1;
		}
		side |= 1ULL << p;
		s = end;
	}
	if (side == all) {
		snprintf(err, len, "partition: every port on one side cuts nothing");
		return -1;
	}
	f->cut_all = !side;
	f->side = side;
	return 0;
}

int faults_control(struct faults *f, const char *line, char *reply, size_t len)
{
	char cmd[16], err[200];
	size_t n = strcspn(line, " ");
	const char *args = line + n;

	while (*args == ' ')
		args++;
	if (n >= sizeof(cmd)) {
		snprintf(reply, len, "ERR unknown command");
		return -1;
	}
	memcpy(cmd, line, n);
	cmd[n] = '\0';
	if (!strcmp(cmd, "set")) {
		struct faults_cfg c = f->cfg;

		if (!*args) {
			snprintf(reply, len, "ERR set needs key=value,...");
			return -1;
		}
		if (faults_parse(&c, args, err, sizeof(err))) {
			snprintf(reply, len, "ERR %s", err);
			return -1;
		}
		faults_configure(f, &c);
	} else if (!strcmp(cmd, "reset") && !*args) {
		struct faults_cfg c = f->cfg;

		c.drop = c.dup = c.reorder = c.corrupt = 0;
		faults_configure(f, &c);
		f->cut_all = 0;
		f->side = 0;
	} else if (!strcmp(cmd, "partition")) {
		if (partition(f, args, err, sizeof(err))) {
			snprintf(reply, len, "ERR %s", err);
			return -1;
		}
	} else if (!strcmp(cmd, "heal") && !*args) {
		f->cut_all = 0;
		f->side = 0;
	} else if (strcmp(cmd, "stats") || *args) {
		snprintf(reply, len, "ERR unknown command (set SPEC, reset, partition [PORT...], "
			 "heal, stats)");
		return -1;
	}
	snprintf(reply, len, "OK ");
	faults_describe(f, reply + 3, len - 3);
	return 0;
}
