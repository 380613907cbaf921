// SPDX-License-Identifier: GPL-2.0
/*
 * Runs every host unit test and prints TAP version 13; exits 1 on failure.
 * DP_UNIT_ONLY=TEXT runs only the tests whose names contain TEXT.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

int unit_failed;
const char *unit_skip;

static const struct unit_test *const suites[] = {
	wire_tests, ring_tests, nart_tests, fuzz_replay_tests, srom_tests,
	rel_tests, frag_tests, snd_tests, snd_frag_tests, rcv_tests, rcv_frag_tests, table_tests, disc_tests,
	chaos_tests, tx_tests, cork_tests, batch_tests, mdr_tests, limits_tests,
	pool_tests, edge_tests,
};

static bool chosen(const struct unit_test *t)
{
	const char *only = getenv("DP_UNIT_ONLY");

	return !only || strstr(t->name, only);
}

int main(void)
{
	unsigned int i, n = 0, num = 0, bad = 0;
	const struct unit_test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		for (t = suites[i]; t->name; t++)
			n += chosen(t);
	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		for (t = suites[i]; t->name; t++) {
			if (!chosen(t))
				continue;
			unit_failed = 0;
			unit_skip = NULL;
			t->fn();
			num++;
			if (unit_failed) {
				bad++;
				printf("not ok %u - %s\n", num, t->name);
			} else if (unit_skip) {
				printf("ok %u - %s # SKIP %s\n", num, t->name, unit_skip);
			} else {
				printf("ok %u - %s\n", num, t->name);
			}
		}
	}
	printf("# %u passed, %u failed\n", num - bad, bad);
	return bad ? 1 : 0;
}
