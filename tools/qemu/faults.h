/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the harness's relay (dpswitch): drop, duplicate,
 * reorder and corrupt Ethernet frames at set rates, from a seeded PRNG, and
 * cut links (partition) until healed.  No I/O here: the relay hands every
 * frame for one link (source port -> destination port) to faults_frame(),
 * which passes 0, 1 or 2 copies, now or later, to the emit callback.  The
 * same input sequence, times and seed give the same output: that is what the
 * unit tests (test_faults.c) rely on.
 */
#ifndef DP_FAULTS_H
#define DP_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#define FAULTS_MAX_PORTS 64
#define FAULTS_HOLD_MAX 64	/* frames held back for reordering, at most */
#define FAULTS_PPM 1000000u	/* rates are in parts per million of frames */
#define FAULTS_ETH_HLEN 14	/* never corrupted: the frame must reach the NIC */
#define FAULTS_MAX_BITS 64	/* corrupt_bits limit */
#define FAULTS_REPLY_MAX 512	/* faults_control() reply buffer size to use */

/* Deliver one frame from port src to port dst (the relay queues it). */
typedef void (*faults_emit_fn)(void *ctx, int src, int dst,
			       const unsigned char *buf, size_t len);

struct faults_cfg {
	uint32_t drop, dup, reorder, corrupt;	/* ppm of the frames on a link */
	unsigned int reorder_gap;	/* release a held frame after this many later frames */
	unsigned int reorder_ms;	/* ... or after this many ms, whichever comes first */
	unsigned int corrupt_bits;	/* distinct payload bits flipped per corrupted frame */
	uint64_t seed;
};

/*
 * frames + duplicated == passed + dropped + partitioned + held copies.
 * reordered and corrupted count frames that were also passed (or are held).
 */
struct faults_stats {
	uint64_t frames;	/* offered by the relay (one per link a frame takes) */
	uint64_t passed;	/* copies handed to emit */
	uint64_t dropped;	/* lost to the drop rate */
	uint64_t duplicated;	/* extra copies made */
	uint64_t reordered;	/* held back behind later frames */
	uint64_t corrupted;	/* had payload bits flipped */
	uint64_t partitioned;	/* copies lost to a cut link */
};

struct faults_held {
	unsigned char *buf;
	size_t len;
	int src, dst;
	unsigned int copies;	/* 2 if it was also duplicated */
	unsigned int gap;	/* later frames on its link still to pass it */
	uint64_t deadline_ms;
};

struct faults {
	struct faults_cfg cfg;
	uint64_t rng;
	int nports;
	int cut_all;		/* partition: every link cut */
	uint64_t side;		/* partition: ports on one side; links across are cut */
	struct faults_held held[FAULTS_HOLD_MAX];	/* oldest first */
	unsigned int nheld;
	struct faults_stats st;
	faults_emit_fn emit;
	void *ctx;
};

/* All rates 0, no partition, seed 1, reorder_gap 3, reorder_ms 20, 1 bit. */
void faults_init(struct faults *f, int nports, faults_emit_fn emit, void *ctx);
/* Free what is still held (without emitting it). */
void faults_free(struct faults *f);

/*
 * Update cfg from "key=value,..." (keys: drop dup reorder corrupt, in percent
 * of frames with up to 4 decimals; seed; reorder_gap; reorder_ms;
 * corrupt_bits).  Keys not named keep their value; "" and "none" change
 * nothing.  On error cfg is unchanged, err says why and -1 is returned.
 */
int faults_parse(struct faults_cfg *cfg, const char *spec, char *err, size_t errlen);
/* Take cfg; a changed seed restarts the PRNG from it. */
void faults_configure(struct faults *f, const struct faults_cfg *cfg);

/* 1 if frames from src to dst are lost to the partition. */
int faults_cut(const struct faults *f, int src, int dst);

/* One frame for the link src -> dst at time now_ms (any monotonic ms clock). */
void faults_frame(struct faults *f, int src, int dst, const unsigned char *buf,
		  size_t len, uint64_t now_ms);
/* Release held frames whose delay ran out. */
void faults_tick(struct faults *f, uint64_t now_ms);
/* ms until faults_tick() has work, 0 if it has now, -1 if nothing is held. */
int faults_timeout_ms(const struct faults *f, uint64_t now_ms);

/*
 * One control command (docs/harness.md): "set SPEC", "reset", "partition",
 * "partition PORT...", "heal", "stats".  Writes "OK ..." or "ERR ..." (one
 * line, no newline) to reply; returns 0 or -1.
 */
int faults_control(struct faults *f, const char *line, char *reply, size_t len);
/* "frames=N passed=N ... drop=P ... partition=none|all|P+P" into buf. */
void faults_describe(const struct faults *f, char *buf, size_t len);

#endif
