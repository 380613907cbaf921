/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tiny TAP unit-test support for the host tests of the kernel-agnostic dp
 * sources.  A test is a function returning nothing; CHECK() records a
 * failure with its location and goes on, so one run shows every problem.
 */
#ifndef _DP_UNIT_H
#define _DP_UNIT_H

#include <stdio.h>
#include <stdint.h>

extern int unit_failed;		/* failures in the running test */
extern const char *unit_skip;	/* set by a test to report # SKIP */

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			unit_failed++;					\
			printf("#   %s:%d: CHECK(%s) failed: ",		\
			       __FILE__, __LINE__, #cond);		\
			printf(__VA_ARGS__);				\
			printf("\n");					\
		}							\
	} while (0)

/* Equality of two integers, printing both values on failure. */
#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long _a = (unsigned long long)(a);	\
		unsigned long long _b = (unsigned long long)(b);	\
		if (_a != _b) {						\
			unit_failed++;					\
			printf("#   %s:%d: %s == %s failed: %llu != %llu\n", \
			       __FILE__, __LINE__, #a, #b, _a, _b);	\
		}							\
	} while (0)

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/* Each test file exports a NULL-terminated table. */
extern const struct unit_test wire_tests[];
extern const struct unit_test ring_tests[];
extern const struct unit_test nart_tests[];
extern const struct unit_test fuzz_replay_tests[];
extern const struct unit_test srom_tests[];
extern const struct unit_test rel_tests[];
extern const struct unit_test frag_tests[];
extern const struct unit_test snd_tests[];
extern const struct unit_test rcv_tests[];
extern const struct unit_test rcv_frag_tests[];
extern const struct unit_test snd_frag_tests[];
extern const struct unit_test table_tests[];
extern const struct unit_test disc_tests[];
extern const struct unit_test chaos_tests[];
extern const struct unit_test cork_tests[];
extern const struct unit_test tx_tests[];
extern const struct unit_test batch_tests[];
extern const struct unit_test mdr_tests[];
extern const struct unit_test limits_tests[];
extern const struct unit_test pool_tests[];
extern const struct unit_test edge_tests[];

/* Deterministic PRNG (xorshift64*), so a failure can be reproduced. */
static inline uint64_t unit_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

#endif /* _DP_UNIT_H */
