// SPDX-License-Identifier: GPL-2.0
/*
 * Both ways of copying a message's bytes and both ways of computing its
 * wire CRC, whatever dp's timing at load chose: the module parameters
 * copy= ("kernel", "words"; module/dp_copy.c) and crc= ("table", "insn";
 * module/dp_wire_crc.c).  The KASAN kernel's timing keeps the kernel's
 * copy and every real-time guest's the table CRC, so without this the
 * sanitizer stages would never run the words or the fused copy-and-CRC.
 *
 * For each of the four pairs (two where the CPU has no crc32
 * instruction: "insn" must then be refused with EOPNOTSUPP):
 *  - the parameters read back the ways just set;
 *  - one batch (dp_sendv, bundled) of messages of 1 to 1025 bytes and one
 *    frame's worth, each from a buffer at another misalignment, A -> B
 *    across the link, and the same written one by one;
 *  - a large message (fragments into the pool's token), A -> B;
 *  - the batch again to an endpoint on A's own node (no CRC);
 * every message read intact and in order, each read() into a buffer at
 * another misalignment (the copy to the user).  Then "auto" gives back a timed
 * choice, one of the two ways, and an unknown way is refused (EINVAL).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"		/* libdp: dp_sendv() */

#define DPID_A	 110
#define DPID_A2	 111
#define DPID_B	 210
#define N_SIZES	 16
#define LARGE_X	 3	/* the large message: this many frames and a bit */

static uint8_t out[N_SIZES][70000];
static uint8_t in[70000];

/* Write @val to parameter @name (dpt_param()); 0 or the errno. */
static int set_param(const char *name, const char *val)
{
	return dpt_param(name, val, NULL, 0) ? errno : 0;
}

/* The way parameter @name reads, without its newline ("" if none). */
static const char *get_param(const char *name, char *buf, size_t len)
{
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/dp/parameters/%s", name);
	buf[0] = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return buf;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/*
 * Read @n messages on @rx, message i into in + i % 8 (read()'s copy to the
 * user at each misalignment): it is @len[i] bytes of out[i] + i % 8.
 */
static void expect(int rx, unsigned int n, const size_t *len, const char *what)
{
	unsigned int i, bad = 0, got = 0;
	ssize_t r;

	for (i = 0; i < n; i++) {
		if (dpt_wait_readable(rx, DPT_WAIT_MS) != 1)
			break;
		r = read(rx, in + i % 8, sizeof(in) - 8);
		got++;
		if (r != (ssize_t)len[i] || memcmp(in + i % 8, out[i] + i % 8, len[i])) {
			if (!bad)
				ktap_diag("%s: message %u: %zd bytes, want %zu%s", what, i, r,
					  len[i], r == (ssize_t)len[i] ? " (bytes differ)" : "");
			bad++;
		}
	}
	ktap_ok(got == n && !bad, "%s: %u of %u messages read, %u not intact", what, got, n,
		bad);
}

/* The batch: message i from out[i] + i % 8 (each another misalignment). */
static void batch(int tx, uint32_t nid, uint32_t dpid, unsigned int n, const size_t *len,
		  const char *what)
{
	struct dp_send s[N_SIZES];
	unsigned int i;
	int r;

	for (i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].to.nid = nid;
		s[i].to.dpid = dpid;
		s[i].buf = (uintptr_t)(out[i] + i % 8);
		s[i].len = (uint32_t)len[i];
	}
	r = dp_sendv(tx, s, n);
	ktap_ok(r == (int)n, "%s: dp_sendv sends %d of %u (%s)", what, r, n,
		r < 0 ? strerror(errno) : "ok");
}

static void one_by_one(int tx, unsigned int n, const size_t *len, const char *what)
{
	unsigned int i, ok = 0;

	for (i = 0; i < n; i++)
		ok += write(tx, out[i] + i % 8, len[i]) == (ssize_t)len[i];
	ktap_ok(ok == n, "%s: %u of %u writes return their length", what, ok, n);
}

/* The traffic of one pair of ways, named @ways. */
static void traffic(int a, int a2, int b, int l, size_t frame, const char *ways)
{
	static const size_t base[] = { 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 1023,
				       1024, 1025 };
	size_t len[N_SIZES], large;
	struct dp_info ia;
	char what[96];
	unsigned int i, n = 0;

	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		len[n++] = base[i];
	len[n++] = frame;
	for (i = 0; i < n; i++)
		dpt_random(out[i], sizeof(out[i]));

	snprintf(what, sizeof(what), "%s: batch A -> B", ways);
	batch(a, dpt.nidb, DPID_B, n, len, what);
	expect(b, n, len, what);
	snprintf(what, sizeof(what), "%s: writes A -> B", ways);
	one_by_one(a, n, len, what);
	expect(b, n, len, what);

	dpt_info(a, &ia);	/* the session is open: the receiver's limit */
	large = LARGE_X * frame + 5;
	if (large > ia.max_msg)
		large = ia.max_msg;
	snprintf(what, sizeof(what), "%s: a %zu-byte message A -> B", ways, large);
	one_by_one(a, 1, &large, what);
	expect(b, 1, &large, what);

	snprintf(what, sizeof(what), "%s: batch in node A", ways);
	batch(l, dpt.nida, DPID_A2, n, len, what);
	expect(a2, n, len, what);
}

/* Force @copy and @crc (NULL: the CPU lacks it) and run the traffic. */
static void ways(int a, int a2, int b, int l, size_t frame, const char *copy,
		 const char *crc)
{
	char got_copy[32], got_crc[32], name[64];

	snprintf(name, sizeof(name), "copy=%s crc=%s", copy, crc);
	if (!ktap_ok(!set_param("copy", copy) && !set_param("crc", crc), "%s: set", name))
		return;
	get_param("copy", got_copy, sizeof(got_copy));
	get_param("crc", got_crc, sizeof(got_crc));
	ktap_ok(!strcmp(got_copy, copy) && !strcmp(got_crc, crc),
		"%s: the parameters read back copy=%s crc=%s", name, got_copy, got_crc);
	traffic(a, a2, b, l, frame, name);
}

/* A test that stops midway leaves the module timing its ways again. */
static void back_to_auto(void)
{
	set_param("copy", "auto");
	set_param("crc", "auto");
}

static int cpu_has_crc32(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int has = 0;

	if (!f)
		return 0;
	while (!has && fgets(line, sizeof(line), f))
		has = !strncmp(line, "flags", 5) && strstr(line, " sse4_2");
	fclose(f);
	return has;
}

int main(void)
{
	static const char * const copies[] = { "kernel", "words" };
	char copy0[32], crc0[32], buf[32];
	int a, a2, b, l, insn, mtu;
	unsigned int i;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	insn = cpu_has_crc32();
	atexit(back_to_auto);
	get_param("copy", copy0, sizeof(copy0));
	get_param("crc", crc0, sizeof(crc0));
	ktap_diag("the load chose copy=%s crc=%s; the CPU %s the crc32 instruction", copy0,
		  crc0, insn ? "has" : "lacks");
	ktap_ok((!strcmp(copy0, "kernel") || !strcmp(copy0, "words")) &&
		(!strcmp(crc0, "table") || (insn && !strcmp(crc0, "insn"))),
		"the parameters read the ways in use (copy=%s crc=%s)", copy0, crc0);

	a = dpt_ep(dpt.nsa, DPID_A, 0);
	l = dpt_ep(dpt.nsa, DPID_A2 + 1, 0);
	a2 = dpt_ep(dpt.nsa, DPID_A2, 0);
	b = dpt_ep(dpt.nsb, DPID_B, 0);
	if (a < 0 || a2 < 0 || b < 0 || l < 0)
		ktap_bail("bind endpoints");
	KTAP_SUCCESS(dpt_connect(a, dpt.nidb, DPID_B), "A connects to B");
	KTAP_SUCCESS(dpt_connect(l, dpt.nida, DPID_A2), "A connects to its own node");
	mtu = dpt_if_mtu(dpt.nsa, dpt.ifa);
	/* a frame's message, and the large one within the test's buffers */
	if (mtu <= DP_WIRE_HDR_LEN || mtu - DP_WIRE_HDR_LEN > 65535 / (LARGE_X + 1))
		ktap_bail("link MTU out of range");

	for (i = 0; i < 2; i++) {
		ways(a, a2, b, l, (size_t)(mtu - DP_WIRE_HDR_LEN), copies[i], "table");
		if (insn)
			ways(a, a2, b, l, (size_t)(mtu - DP_WIRE_HDR_LEN), copies[i], "insn");
		else
			ktap_ok(set_param("crc", "insn") == EOPNOTSUPP,
				"crc=insn without the instruction: EOPNOTSUPP");
	}

	ktap_ok(set_param("copy", "bytes") == EINVAL && set_param("crc", "crc32") == EINVAL,
		"an unknown way is refused with EINVAL");
	ktap_ok(!set_param("copy", "auto") && !set_param("crc", "auto"), "auto again");
	get_param("copy", buf, sizeof(buf));
	ktap_ok(!strcmp(buf, "kernel") || !strcmp(buf, "words"),
		"copy=auto reads a timed way (%s)", buf);
	get_param("crc", buf, sizeof(buf));
	ktap_ok(!strcmp(buf, "table") || (insn && !strcmp(buf, "insn")),
		"crc=auto reads a timed way (%s)", buf);
	close(a);
	close(a2);
	close(b);
	close(l);
	ktap_finish();
}
