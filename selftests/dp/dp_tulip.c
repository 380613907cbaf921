// SPDX-License-Identifier: GPL-2.0
/*
 * dp's own tulip driver, two tulips back to back (lib.sh with DPT_NIC=tulip;
 * DPT_SYSA/DPT_SYSB are their PCI devices in sysfs).  One mode per run:
 *   wrap      5000 messages of 1..1448 bytes A->B, in batches: the 64-entry
 *             rings wrap ~80 times; every byte and sequence number checked
 *   max       the largest frame: max_msg 1448 for MTU 1500, 1448 bytes both
 *             ways, 1469 refused with EMSGSIZE
 *   flood     B stops servicing its RX ring, A (raw, DP_BIND_RAW) sends 300:
 *             the ring overruns; B resumes, the drops are counted
 *             (rx_drop_ring) and every message is either delivered or
 *             missing from the sequence, and 100 more all arrive (recovery);
 *             then the same stall on a reliable edge: all 300 arrive, in
 *             order, whatever the ring lost resent
 *   watchdog  A queues 20 frames without telling the chip; the TX watchdog
 *             restarts it and all 20 arrive, in order
 *   reattach  A queues 5 frames without telling the chip and detaches at once
 *             (before the watchdog), then attaches again and sends 40 more:
 *             those all arrive, and none of the 5 old ones after them
 *   The queued frames of both are long ones, which the chip reads from the
 *   sessions' kept copies (TUL_TX_COPYBREAK), and short ones, copied.
 *   blast S   A writes to B for up to S seconds or until a write fails (the
 *             device unbound under it: ENETDOWN); prints what it saw
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define MAXMSG 1448

static uint8_t out[2048], in[2048];

static void fill(uint8_t *b, size_t n, uint32_t seq)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(seq * 7 + i);
}

/* A test-only knob of dp's tulip @ifname, in debugfs. */
static int knob_set(const char *ifname, const char *knob, const char *v)
{
	return dpt_sh("echo %s > /sys/kernel/debug/dp/%s/%s", v, ifname, knob);
}

/*
 * Read what B gets until message last has arrived, or until nothing came
 * for DPT_WAIT_MS (the rest was lost: an overrun); check each message's
 * bytes and count sequence gaps.  Returns messages read.
 */
static long drain(int b, uint32_t *next_seq, long *gaps, long *bad, uint32_t last)
{
	long got = 0;
	ssize_t n;

	while (*next_seq <= last) {
		struct dp_ep_stats st;

		if (dpt_wait_readable(b, DPT_WAIT_MS) != 1)
			break;
		n = read(b, in, sizeof(in));
		if (n < 0)
			break;
		if (dpt_stats(b, &st))
			break;
		got++;
		/* message k carries (seq k) bytes: size and pattern from seq */
		{
			uint32_t seq = in[0] | in[1] << 8 | in[2] << 16 | (uint32_t)in[3] << 24;
			size_t want = seq % MAXMSG + 1;
			uint8_t ref[MAXMSG];

			if (want < 4)
				want = 4;
			fill(ref, want, seq);
			memcpy(ref, &seq, 4);
			if ((size_t)n != want || memcmp(in, ref, want) || seq < *next_seq)
				(*bad)++;
			else {
				*gaps += seq - *next_seq;
				*next_seq = seq + 1;
			}
		}
	}
	return got;
}

static int send_seq(int a, uint32_t seq)
{
	size_t len = seq % MAXMSG + 1;

	if (len < 4)
		len = 4;
	fill(out, len, seq);
	memcpy(out, &seq, 4);
	return write(a, out, len) == (ssize_t)len ? 0 : -1;
}

static void t_wrap(int a, int b)
{
	uint32_t seq = 1, next = 1;
	long got = 0, gaps = 0, bad = 0, fail = 0;
	int batch, i;

	for (batch = 0; batch < 100; batch++) {
		for (i = 0; i < 50; i++)
			if (send_seq(a, seq++))
				fail++;
		got += drain(b, &next, &gaps, &bad, seq - 1);
	}
	ktap_ok(fail == 0, "5000 writes of 4..1448 bytes (%ld failed)", fail);
	ktap_ok(got == 5000 && gaps == 0 && bad == 0,
		"5000 arrive intact and in order through 64-entry rings (%ld, %ld gaps, %ld bad)",
		got, gaps, bad);
}

#define BIGMSG (1u << 20)
static uint8_t big_out[4u << 20], big_in[BIGMSG];

static void t_max(int a, int b)
{
	struct dp_info ia, ib;
	ssize_t n;

	dpt_info(a, &ia);
	dpt_info(b, &ib);
	ktap_ok(ia.max_msg == MAXMSG && ib.max_msg == MAXMSG, "max_msg %u/%u (want 1448)",
		ia.max_msg, ib.max_msg);
	dpt_random(out, MAXMSG);
	n = write(a, out, MAXMSG);
	ktap_ok(n == MAXMSG && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		read(b, in, sizeof(in)) == MAXMSG && !memcmp(in, out, MAXMSG),
		"1448 bytes A->B (a 1514-byte frame) arrive intact");
	dpt_random(out, MAXMSG);
	n = write(b, out, MAXMSG);
	ktap_ok(n == MAXMSG && dpt_wait_readable(a, DPT_WAIT_MS) == 1 &&
		read(a, in, sizeof(in)) == MAXMSG && !memcmp(in, out, MAXMSG),
		"1448 bytes B->A arrive intact");
	/*
	 * The session is open: a reliable edge now takes what B announced,
	 * messages larger than a frame in fragments (docs/reliability.md).
	 */
	dpt_info(a, &ia);
	ktap_ok(ia.max_msg > BIGMSG, "max_msg %u once open (B's 4 MiB pool: > 1 MiB)",
		ia.max_msg);
	dpt_random(big_out, BIGMSG);
	n = write(a, big_out, BIGMSG);
	ktap_ok(n == BIGMSG && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		read(b, big_in, sizeof(big_in)) == BIGMSG && !memcmp(big_in, big_out, BIGMSG),
		"1 MiB A->B (fragmented) arrives intact (%zd)", n);
	errno = 0;
	n = write(a, big_out, ia.max_msg < sizeof(big_out) ? ia.max_msg + 1 : 0);
	ktap_ok(n == -1 && errno == EMSGSIZE, "max_msg + 1 bytes: EMSGSIZE (%zd, %s)", n,
		strerror(errno));
}

static void t_flood(int a, int b, const char *sysb)
{
	uint64_t d0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_RING), d1;
	uint32_t seq = 1, next = 1;
	long got, gaps = 0, bad = 0, fail = 0, after;
	int i;

	if (knob_set(dpt.ifb, "rx_stall", "1"))
		ktap_bail("rx_stall knob");
	for (i = 0; i < 300; i++)
		if (send_seq(a, seq++))
			fail++;
	dpt_sleep_ms(200);
	knob_set(dpt.ifb, "rx_stall", "0");
	got = drain(b, &next, &gaps, &bad, 300);
	d1 = dpt_wait_ctr(dpt.nsb, DP_CTR_RX_DROP_RING, d0 + 1, DPT_WAIT_MS);
	ktap_ok(fail == 0, "300 writes while B's ring is not serviced (%ld failed)", fail);
	ktap_ok(got >= 60 && got <= 64 && bad == 0,
		"a ring's worth arrives intact (%ld of 300)", got);
	ktap_ok(got + gaps + (long)(300 - (next - 1)) == 300,
		"every lost message shows as a sequence gap (%ld + %ld + %ld)", got, gaps,
		(long)(300 - (next - 1)));
	ktap_ok(d1 > d0, "rx_drop_ring counted the overrun (%llu -> %llu; %ld lost)",
		(unsigned long long)d0, (unsigned long long)d1, 300 - got);
	ktap_diag("driver: rx_ring_drops %ld (QEMU raises RU once per overrun, so "
		  "this is a lower bound; CSR8 counts every frame on real chips)",
		  dpt_sysfs_stat(sysb, "rx_ring_drops"));
	for (i = 0, fail = 0; i < 100; i++)
		if (send_seq(a, seq++))
			fail++;
	gaps = 0;
	next = 301;
	after = drain(b, &next, &gaps, &bad, 400);
	ktap_ok(fail == 0 && after == 100 && gaps == 0 && bad == 0,
		"after the overrun 100 more all arrive (%ld, %ld gaps)", after, gaps);
}

/*
 * The stall again on a reliable edge, written by a child (a reliable
 * writer waits while nothing is acknowledged): once B services its ring
 * again everything arrives, in order, whatever the ring lost resent.
 */
static void t_flood_rel(int a, int b)
{
	uint64_t d0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_RING), d1;
	uint32_t next = 1;
	long got = 0, gaps = 0, bad = 0;
	pid_t pid;
	int i, st;

	if (knob_set(dpt.ifb, "rx_stall", "1"))
		ktap_bail("rx_stall knob");
	pid = dpt_fork();
	if (pid == 0) {
		uint32_t seq;

		for (seq = 1; seq <= 300; seq++)
			if (send_seq(a, seq))
				_exit(1);
		_exit(0);
	}
	{
		static const long writes[] = { SYS_write };
		char what[96];

		/* frames in flight: the writer waits, nothing acknowledged */
		ktap_ok(dpt_wait_blocked(pid, writes, 1, DPT_WAIT_MS, what, sizeof(what)),
			"reliable edge: the writer is held back while B's ring is not serviced (%s)",
			what);
	}
	knob_set(dpt.ifb, "rx_stall", "0");
	for (i = 0; i < 40 && got < 300; i++)	/* resends may take an RTO */
		got += drain(b, &next, &gaps, &bad, 300);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	d1 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_RING);
	ktap_ok(st == 0 && got == 300 && gaps == 0 && bad == 0,
		"reliable edge: all 300 arrive in order across the stall (%ld, %ld gaps, %ld bad; writer %d)",
		got, gaps, bad, st);
	ktap_diag("reliable edge: rx_drop_ring %llu -> %llu (the congestion window keeps the burst small)",
		  (unsigned long long)d0, (unsigned long long)d1);
}

/*
 * The first seq queued on the stalled chip in watchdog and reattach:
 * message k is k % MAXMSG + 1 bytes, so watchdog's 20 are 1442 to 1448
 * bytes long, then 4 to 13, and reattach's 5 are 1442 to 1446.
 */
#define STALL_SEQ (MAXMSG - 7)

static void t_watchdog(int a, int b, const char *sysa)
{
	long r0 = dpt_sysfs_stat(sysa, "restarts"), r1;
	uint32_t seq = STALL_SEQ, next = STALL_SEQ;
	long got, gaps = 0, bad = 0, fail = 0;
	int i;

	if (knob_set(dpt.ifa, "tx_stall", "1"))
		ktap_bail("tx_stall knob");
	for (i = 0; i < 20; i++)
		if (send_seq(a, seq++))
			fail++;
	knob_set(dpt.ifa, "tx_stall", "0");
	ktap_ok(fail == 0, "20 frames queued on a chip that is not told (%ld failed)", fail);
	ktap_ok(dpt_wait_readable(b, 300) == 0, "nothing arrives yet");
	got = 0;
	for (i = 0; i < 100 && got < 20; i++)
		got += drain(b, &next, &gaps, &bad, seq - 1);
	r1 = dpt_sysfs_stat(sysa, "restarts");
	ktap_ok(r1 > r0, "the TX watchdog restarted the chip (%ld -> %ld)", r0, r1);
	ktap_ok(got == 20 && gaps == 0 && bad == 0,
		"all 20 queued messages arrive after the restart, in order (%ld)", got);
	ktap_ok(send_seq(a, seq++) == 0 && drain(b, &next, &gaps, &bad, seq - 1) == 1,
		"traffic flows after the restart");
}

/* dpctl ARGS in dpA; its exit status. */
static int dpctl_a(const char *args)
{
	return dpt_sh("'%s' netns exec %s dpctl %s", dpt_ip(),
		      dpt.nsa, args);
}

static void t_reattach(int a, int b)
{
	uint32_t seq = STALL_SEQ - 30, next = seq;
	long got, gaps = 0, bad = 0, fail = 0;
	char cmd[128];
	int i;

	for (i = 0; i < 30; i++)	/* the queued ones below sit mid-ring */
		if (send_seq(a, seq++))
			fail++;
	got = drain(b, &next, &gaps, &bad, seq - 1);
	ktap_ok(fail == 0 && got == 30 && bad == 0, "30 messages A->B (%ld)", got);
	if (knob_set(dpt.ifa, "tx_stall", "1"))
		ktap_bail("tx_stall knob");
	for (i = 0; i < 5; i++)
		if (send_seq(a, seq++))
			fail++;
	ktap_ok(dpctl_a("node detach") == 0, "5 frames queued unannounced, then dpA detached");
	knob_set(dpt.ifa, "tx_stall", "0");
	snprintf(cmd, sizeof(cmd), "node set dev %s backend tulip", dpt.ifa);
	ktap_ok(dpctl_a(cmd) == 0, "dpA attached to %s again", dpt.ifa);
	for (i = 0; i < 40; i++)
		if (send_seq(a, seq++))
			fail++;
	got = 0;
	for (i = 0; i < 20 && next < seq; i++)
		got += drain(b, &next, &gaps, &bad, seq - 1);
	ktap_ok(fail == 0 && next == seq,
		"the 40 messages after the re-attach arrive (%ld, up to %u of %u)",
		got, next - 1, seq - 1);
	ktap_ok(bad == 0, "no frame queued before the detach arrives after them (%ld late or bad)",
		bad);
	if (!bad)
		ktap_diag("%ld of the 5 queued before the detach were dropped with it", gaps);
}

static void t_blast(int a, int secs)
{
	long sent = 0, i;
	int err = 0;

	for (i = 0; i < (long)secs * 100; i++) {
		int k;

		for (k = 0; k < 50; k++) {
			if (send_seq(a, (uint32_t)sent + 1)) {
				err = errno;
				break;
			}
			sent++;
		}
		if (err)
			break;
		dpt_sleep_ms(10);
	}
	ktap_ok(sent > 0, "blast: %ld messages sent", sent);
	ktap_ok(!err || err == ENETDOWN || err == ENODEV,
		"blast: ended by %s", err ? strerror(err) : "its time limit");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *sysa = getenv("DPT_SYSA"), *sysb = getenv("DPT_SYSB");
	int a, b;

	ktap_start();
	if (dpt_init() || !sysa || !sysb)
		ktap_bail("environment (DPT_SYSA/DPT_SYSB)");
	/* flood and blast measure lost frames: a raw sender, no resends */
	a = dpt_ep_flags(dpt.nsa, DPID_A, 1u << 22,
			 !strcmp(mode, "flood") || !strcmp(mode, "blast") ? DP_BIND_RAW : 0);
	b = dpt_ep(dpt.nsb, DPID_B, 1u << 22);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, DPID_B) ||
	    dpt_connect(b, dpt.nida, DPID_A))
		ktap_bail("endpoints");
	if (!strcmp(mode, "wrap"))
		t_wrap(a, b);
	else if (!strcmp(mode, "max"))
		t_max(a, b);
	else if (!strcmp(mode, "flood")) {
		int a2 = dpt_ep(dpt.nsa, DPID_A + 1, 1u << 22);
		int b2 = dpt_ep(dpt.nsb, DPID_B + 1, 1u << 22);

		t_flood(a, b, sysb);
		if (a2 < 0 || b2 < 0 || dpt_connect(a2, dpt.nidb, DPID_B + 1))
			ktap_bail("reliable endpoints");
		t_flood_rel(a2, b2);
		close(a2);
		close(b2);
	}
	else if (!strcmp(mode, "watchdog"))
		t_watchdog(a, b, sysa);
	else if (!strcmp(mode, "reattach"))
		t_reattach(a, b);
	else if (!strcmp(mode, "blast"))
		t_blast(a, argc > 2 ? atoi(argv[2]) : 5);
	else
		ktap_bail("mode: wrap, max, flood, watchdog or reattach");
	close(a);
	close(b);
	ktap_finish();
}
