// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the fuzz targets' oracles (fuzz_wire.c and fuzz_codec.c built with
 * DP_FUZZ_REPLAY) over their seed corpora and over pseudo-random inputs, so
 * `make check` exercises them even where libFuzzer is not available.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "../dp_agnostic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int fuzz_codec_one(const uint8_t *data, size_t size);

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

/* Every file of the directory named by $env through fn. */
static void replay_corpus(const char *env, fuzz_fn fn)
{
	const char *dir = getenv(env);
	static uint8_t buf[1 << 17];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (!dir || !(d = opendir(dir))) {
		unit_skip = "corpus variable not set or not a directory";
		return;
	}
	while ((de = readdir(d)) && !unit_failed) {
		char path[4096];
		FILE *f;
		size_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		fn(buf, len);
		if (unit_failed)
			printf("#   input: %s\n", path);
		n++;
	}
	closedir(d);
	CHECK(n > 0, "empty corpus %s", dir);
}

static void t_fuzz_corpus(void)
{
	replay_corpus("DP_CORPUS", LLVMFuzzerTestOneInput);
}

static void t_codec_corpus(void)
{
	replay_corpus("DP_CORPUS_CODEC", fuzz_codec_one);
}

static void t_fuzz_random(void)
{
	static uint8_t buf[4096];
	uint64_t s = 99;
	int i;

	for (i = 0; i < 20000 && !unit_failed; i++) {
		size_t len = unit_rand(&s) % sizeof(buf), k;

		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)unit_rand(&s);
		/*
		 * Make most frames well-formed and sealed (top bit of the
		 * length: the oracle stores the right CRC) so the later checks
		 * run; every fourth of those is a control frame.
		 */
		if (len > 70 && i % 2) {
			buf[0] = 60 + (uint8_t)(i % 8);
			buf[1] = 0x80;
			buf[2] = DP_WIRE_VERSION;
			buf[3] = i % 8 == 1 ? DP_WT_ACK : DP_WT_DATA;
			buf[4] = 0;
			buf[5] = buf[3] == DP_WT_DATA ? (uint8_t)(i % 4) : 0;
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
}

/* Random operation streams: the opcode bytes make every kind of step. */
static void t_codec_random(void)
{
	static uint8_t buf[2048];
	uint64_t s = 7;
	int i;

	for (i = 0; i < 5000 && !unit_failed; i++) {
		size_t len = unit_rand(&s) % sizeof(buf), k;

		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)unit_rand(&s);
		fuzz_codec_one(buf, len);
	}
}

const struct unit_test fuzz_replay_tests[] = {
	{ "fuzz oracle: seed corpus replay", t_fuzz_corpus },
	{ "fuzz oracle: 20000 pseudo-random inputs", t_fuzz_random },
	{ "fuzz_codec oracle: seed corpus replay", t_codec_corpus },
	{ "fuzz_codec oracle: 5000 pseudo-random inputs", t_codec_random },
	{ NULL, NULL },
};
