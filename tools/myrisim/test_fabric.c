// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the fabric and the LANai model with fake hosts and a
 * fake clock, KTAP on stdout.  Every check compares what came out with what
 * went in (bytes, counters, who got served), so a wrong route byte, a CRC
 * not checked or not recomputed, a stall that never times out, or an
 * unfair arbiter fails it.
 */
#define _POSIX_C_SOURCE 200809L
#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrisim.h"
#include "test.h"

int ntest, nfail;

void ok(int cond, const char *fmt, ...)
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

/* ---- fake hosts: record what is delivered, refuse on demand ---- */

#define REC_MAX 1024

struct rec {
	int host;
	size_t len;
	uint8_t d[FAB_PKT_MAX];
};

static struct rec *recs;
static int nrec;
static int refuse[FAB_MAX_HOSTS];

static int fake_accept(void *ctx, int host, size_t len)
{
	(void)ctx;
	(void)len;
	return !refuse[host];
}

static void fake_deliver(void *ctx, int host, const uint8_t *pkt, size_t len)
{
	(void)ctx;
	if (nrec == REC_MAX)
		return;
	recs[nrec].host = host;
	recs[nrec].len = len;
	memcpy(recs[nrec].d, pkt, len);
	nrec++;
}

static const struct fab_host_ops fake_ops = { fake_accept, fake_deliver };

static void fake_reset(void)
{
	nrec = 0;
	memset(refuse, 0, sizeof(refuse));
}

/* A packet from @src to @dst: route, type DP, @plen payload bytes, CRC. */
static size_t mkpkt(const struct fab_topo *t, int src, int dst, size_t plen,
		    uint8_t seed, uint8_t *p)
{
	int r = topo_route(t, src, dst, p);
	size_t i, n;

	if (r < 0)
		return 0;
	n = (size_t)r;
	p[n++] = 0x0d;
	p[n++] = 0x50;
	p[n++] = 0;
	p[n++] = 0;
	for (i = 0; i < plen; i++)
		p[n++] = (uint8_t)(seed + i * 7);
	p[n] = myri_crc8(p, n);
	return n + 1;
}

static struct fabric *fab_new(const struct fab_topo *t)
{
	struct fabric *f = malloc(sizeof(*f));
	struct fab_cfg c;

	fab_cfg_default(&c);
	c.timeout_ns = 1000000;		/* 1 ms */
	fab_init(f, t, &c, &fake_ops, NULL);
	fake_reset();
	return f;
}

static void fab_del(struct fabric *f)
{
	fab_free(f);
	free(f);
}

/* Run the fabric to quiet (no event before @limit). */
static uint64_t run_until(struct fabric *f, uint64_t now, uint64_t limit)
{
	uint64_t t;

	while ((t = fab_next(f)) != UINT64_MAX && t <= limit) {
		now = t > now ? t : now;
		fab_advance(f, now);
	}
	return now;
}

static void t_crc(void)
{
	const uint8_t v[] = "123456789";

	ok(myri_crc8(v, 9) == 0xf4, "crc8 of \"123456789\" is 0xf4 (got %#x)", myri_crc8(v, 9));
	ok(myri_crc8(v, 0) == 0, "crc8 of nothing is 0");
}

static void t_routes(void)
{
	struct fab_topo t, one;
	uint8_t r[MYRI_ROUTE_MAX];
	int n, ok1, i;

	topo_default(&t);
	ok(t.nswitches == 2 && t.nhosts == 4 && t.nports[0] == 8 && t.nports[1] == 8,
	   "default topology: 2 switches of 8 ports, 4 hosts");
	n = topo_route(&t, 0, 1, r);
	ok(n == 1 && r[0] == 0x81, "h0 -> h1: one route byte 0x81 (%d, %#x)", n, r[0]);
	n = topo_route(&t, 0, 3, r);
	ok(n == 2 && r[0] == 0x87 && r[1] == 0x81, "h0 -> h3: 0x87 0x81 (%d, %#x %#x)", n, r[0], r[1]);
	n = topo_route(&t, 2, 0, r);
	ok(n == 2 && r[0] == 0x87 && r[1] == 0x80, "h2 -> h0: 0x87 0x80");
	topo_one_switch(&one);
	n = topo_route(&one, 1, 0, r);
	ok(one.nhosts == 2 && n == 1 && r[0] == 0x80, "one switch: h1 -> h0 is 0x80");
	for (ok1 = 1, i = 0; i < 16; i++) {
		n = topo_route(&t, i / 4, i % 4, r);
		while (n-- > 0)
			ok1 &= (r[n] & MYRI_ROUTE_BIT) != 0;
	}
	ok(ok1, "every route byte has its top bit set");
}

static void t_topo_parse(void)
{
	struct fab_topo t;
	char err[128];

	ok(topo_parse(&t, "switch a 8\nhost x a 9\n", err, sizeof(err)) < 0 &&
	   strstr(err, "no port"), "a host on a port the switch lacks is refused (%s)", err);
	ok(topo_parse(&t, "switch a 8\nhost x a 1\nhost y a 1\n", err, sizeof(err)) < 0 &&
	   strstr(err, "taken"), "two hosts on one port are refused (%s)", err);
	ok(topo_parse(&t, "switch a 8\nrouter b\n", err, sizeof(err)) < 0 &&
	   strstr(err, "line 2"), "an unknown keyword names its line (%s)", err);
	ok(topo_parse(&t, "# two\nswitch a 4 # crossbar\nhost x a 0\nhost y a 3\n", err,
		      sizeof(err)) == 0 && t.nhosts == 2 && t.host_port[1] == 3,
	   "comments and a 4-port switch parse");
}

/* The route is consumed, one byte per switch; the CRC stays good. */
static void t_route_consumed(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	size_t n;

	topo_default(&t);
	f = fab_new(&t);
	n = mkpkt(&t, 0, 3, 100, 1, p);
	ok(fab_send(f, 0, p, n, 0) == 0, "h0 sends 100 bytes to h3");
	run_until(f, 0, UINT64_MAX);
	ok(nrec == 1 && recs[0].host == 3 && recs[0].len == n - 2 &&
	   !memcmp(recs[0].d, p + 2, n - 3),
	   "h3 gets it with both route bytes gone (%d, len %zu of %zu)", nrec,
	   nrec ? recs[0].len : 0, n);
	ok(nrec == 1 && myri_crc8(recs[0].d, recs[0].len - 1) == recs[0].d[recs[0].len - 1],
	   "its CRC was recomputed at each hop and is good");
	ok(f->st.delivered == 1 && f->st.crc_hop == 0 && fab_tx_idle(f, 0),
	   "counted delivered, h0 idle again");
	ok(f->st.hops == 2, "it crossed two switches (hops %" PRIu64 ")", f->st.hops);
	n = mkpkt(&t, 0, 1, 100, 2, p);
	fab_send(f, 0, p, n, 0);
	run_until(f, 0, UINT64_MAX);
	ok(f->st.delivered == 2 && f->st.hops == 3,
	   "h0 to h1, on its own switch: one hop more (hops %" PRIu64 ")", f->st.hops);
	fab_del(f);
}

static void t_bad_route(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	size_t n;

	topo_default(&t);
	f = fab_new(&t);
	n = mkpkt(&t, 0, 3, 20, 2, p);
	p[1] &= 0x7f;		/* the second switch finds no route byte */
	p[n - 1] = myri_crc8(p, n - 1);
	fab_send(f, 0, p, n, 0);
	run_until(f, 0, UINT64_MAX);
	ok(nrec == 0 && f->st.bad_route == 1 && fab_tx_idle(f, 0),
	   "a route byte without its top bit: dropped and counted at the switch");
	n = mkpkt(&t, 0, 1, 20, 3, p);
	p[0] = MYRI_ROUTE_BIT | 5;	/* port 5 of s0 has no cable */
	p[n - 1] = myri_crc8(p, n - 1);
	fab_send(f, 0, p, n, 1000);
	run_until(f, 1000, UINT64_MAX);
	ok(nrec == 0 && f->st.bad_route == 2, "a route to an empty port: dropped and counted");
	fab_del(f);
}

static void t_crc_per_hop(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	size_t n;

	topo_default(&t);
	f = fab_new(&t);
	n = mkpkt(&t, 0, 3, 64, 4, p);
	p[20] ^= 0x10;		/* corrupted after its CRC was made */
	fab_send(f, 0, p, n, 0);
	run_until(f, 0, UINT64_MAX);
	ok(f->st.crc_hop == 2, "both switches saw the bad CRC (%" PRIu64 ")", f->st.crc_hop);
	ok(nrec == 1 && myri_crc8(recs[0].d, recs[0].len - 1) != recs[0].d[recs[0].len - 1],
	   "it reaches the NIC still marked bad, not made good by a recomputation");
	fab_del(f);
}

/* A blocked port: STOP back to the sender, then the timeout truncates. */
static void t_stall_timeout(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	char reply[128];
	uint64_t to;
	size_t n;

	topo_default(&t);
	f = fab_new(&t);
	to = f->cfg.timeout_ns;
	ok(fab_control(f, "block s0 1", reply, sizeof(reply)) == 0, "block s0 port 1 (%s)", reply);
	n = mkpkt(&t, 0, 1, 500, 5, p);
	fab_send(f, 0, p, n, 0);
	fab_advance(f, 10000);
	ok(f->st.stalls == 1 && !fab_tx_idle(f, 0) && fab_send(f, 0, p, n, 10000) < 0,
	   "the head stalls and h0 is held off (STOP): it cannot start another");
	fab_advance(f, to);
	ok(nrec == 0 && f->st.truncated == 0, "not yet truncated just before the timeout");
	fab_advance(f, to + 1000);
	ok(f->st.truncated == 1 && nrec == 0 && fab_tx_idle(f, 0),
	   "past the timeout: truncated, counted, and h0 may send again (GO)");
	fab_control(f, "unblock s0 1", reply, sizeof(reply));
	fab_send(f, 0, p, n, to + 2000);
	run_until(f, to + 2000, UINT64_MAX);
	ok(nrec == 1 && recs[0].len == n - 1, "unblocked: the next one arrives whole");
	fab_del(f);
}

/* A NIC without a free buffer pushes back; no loss if it recovers in time. */
static void t_nic_backpressure(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	size_t n;

	topo_default(&t);
	f = fab_new(&t);
	refuse[3] = 1;
	n = mkpkt(&t, 0, 3, 200, 6, p);
	fab_send(f, 0, p, n, 0);
	fab_advance(f, 500000);
	ok(nrec == 0 && f->st.stalls == 1 && !fab_tx_idle(f, 0),
	   "h3 has no buffer: the packet waits, h0 is stopped");
	refuse[3] = 0;
	fab_advance(f, 600000);		/* the NIC's GO is seen at the next step */
	run_until(f, 600000, UINT64_MAX);
	ok(nrec == 1 && f->st.truncated == 0 && recs[0].len == n - 2,
	   "h3 frees a buffer before the timeout: delivered, nothing truncated");
	refuse[3] = 1;
	fab_send(f, 0, p, n, 2000000);
	run_until(f, 2000000, UINT64_MAX);
	ok(nrec == 1 && f->st.truncated == 1 && fab_tx_idle(f, 0),
	   "h3 stays full past the timeout: truncated and counted");
	fab_del(f);
}

/* Three inputs to one output: round robin, each served in turn. */
static void t_fairness(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[3][FAB_PKT_MAX];
	size_t n[3];
	char err[64];
	int per[3] = { 0 }, i, s, alternate = 1;
	uint64_t now = 0;

	topo_parse(&t, "switch s 8\nhost a s 0\nhost b s 3\nhost c s 5\nhost d s 6\n",
		   err, sizeof(err));
	f = fab_new(&t);
	for (s = 0; s < 3; s++)
		n[s] = mkpkt(&t, s, 3, 256, (uint8_t)s, p[s]);
	while (nrec < 300) {
		for (s = 0; s < 3; s++)
			if (fab_tx_idle(f, s))
				fab_send(f, s, p[s], n[s], now);
		now = fab_next(f);
		fab_advance(f, now);
	}
	for (i = 0; i < nrec; i++) {
		s = recs[i].d[MYRI_TYPE_LEN] == 0 ? 0 : recs[i].d[MYRI_TYPE_LEN] == 1 ? 1 : 2;
		per[s]++;
		if (i >= 3 && recs[i].d[MYRI_TYPE_LEN] != recs[i - 3].d[MYRI_TYPE_LEN])
			alternate = 0;
	}
	ok(per[0] == 100 && per[1] == 100 && per[2] == 100,
	   "300 packets from 3 busy inputs: 100 each (%d %d %d)", per[0], per[1], per[2]);
	ok(alternate, "served in turn: every input once in each 3");
	ok(f->st.truncated == 0 && f->st.stalls > 0, "they waited (%" PRIu64 " stalls), none truncated",
	   f->st.stalls);
	fab_del(f);
}

/* Two hosts on one switch, both ways at once: no interference. */
static void t_one_switch(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t a[FAB_PKT_MAX], b[FAB_PKT_MAX];
	size_t na, nb;

	topo_one_switch(&t);
	f = fab_new(&t);
	na = mkpkt(&t, 0, 1, 8192, 7, a);
	nb = mkpkt(&t, 1, 0, 8192, 8, b);
	fab_send(f, 0, a, na, 0);
	fab_send(f, 1, b, nb, 0);
	run_until(f, 0, UINT64_MAX);
	ok(nrec == 2 && f->st.stalls == 0 && recs[0].len == na - 1 && recs[1].len == nb - 1,
	   "one switch: 8 KiB each way at once, both whole, no stall");
	fab_del(f);
}

static void t_faults(void)
{
	struct fab_topo t;
	struct fabric *f;
	uint8_t p[FAB_PKT_MAX];
	char reply[600];
	size_t n;
	int i;

	topo_default(&t);
	f = fab_new(&t);
	n = mkpkt(&t, 0, 1, 64, 9, p);
	ok(fab_control(f, "set drop=101", reply, sizeof(reply)) < 0 &&
	   fab_control(f, "set lose=1", reply, sizeof(reply)) < 0 &&
	   fab_control(f, "block s9 1", reply, sizeof(reply)) < 0 &&
	   fab_control(f, "frob", reply, sizeof(reply)) < 0 && !strncmp(reply, "ERR", 3),
	   "bad control lines are refused (%s)", reply);
	fab_control(f, "set drop=100", reply, sizeof(reply));
	for (i = 0; i < 10; i++)
		fab_send(f, 0, p, n, (uint64_t)i * 100000);
	run_until(f, 1000000, UINT64_MAX);
	ok(nrec == 0 && f->st.f_drop == 10, "drop=100: 10 of 10 lost, counted");
	fab_control(f, "set drop=0,corrupt=100,seed=7", reply, sizeof(reply));
	fab_send(f, 0, p, n, 2000000);
	run_until(f, 2000000, UINT64_MAX);
	ok(nrec == 1 && f->st.f_corrupt == 1 && f->st.crc_hop == 1 &&
	   myri_crc8(recs[0].d, recs[0].len - 1) != recs[0].d[recs[0].len - 1],
	   "corrupt=100: delivered with a bad CRC, seen by the switch");
	fab_control(f, "set corrupt=0,badroute=100", reply, sizeof(reply));
	fab_send(f, 0, p, n, 3000000);
	run_until(f, 3000000, UINT64_MAX);
	ok(nrec == 1 && f->st.bad_route == 1, "badroute=100: dropped at the switch");
	fab_control(f, "set badroute=0", reply, sizeof(reply));
	fab_control(f, "pull s0 1", reply, sizeof(reply));
	fab_send(f, 0, p, n, 4000000);
	run_until(f, 4000000, UINT64_MAX);
	ok(!fab_link_up(f, 1) && nrec == 1 && f->st.dead_port == 1,
	   "h1's cable pulled: its link is down, a packet to it is dropped and counted");
	fab_send(f, 1, p, n, 4100000);
	ok(f->st.link_down == 1, "h1 sending with its cable out: lost, counted");
	fab_control(f, "plug s0 1", reply, sizeof(reply));
	fab_send(f, 0, p, n, 5000000);
	run_until(f, 5000000, UINT64_MAX);
	ok(fab_link_up(f, 1) && nrec == 2, "put back: delivered again");
	ok(fab_control(f, "stats", reply, sizeof(reply)) == 0 && strstr(reply, "delivered=2"),
	   "stats: %s", reply);
	fab_del(f);
}

/* The same seed gives the same faults. */
static void t_seeded(void)
{
	struct fab_topo t;
	uint64_t lost[2];
	uint8_t p[FAB_PKT_MAX];
	char reply[64];
	size_t n;
	int k, i;

	topo_default(&t);
	n = mkpkt(&t, 0, 1, 64, 10, p);
	for (k = 0; k < 2; k++) {
		struct fabric *f = fab_new(&t);

		fab_control(f, "set drop=30,seed=42", reply, sizeof(reply));
		for (i = 0; i < 1000; i++) {
			fab_send(f, 0, p, n, (uint64_t)i * 100000);
			run_until(f, (uint64_t)i * 100000, UINT64_MAX);
		}
		lost[k] = f->st.f_drop;
		fab_del(f);
	}
	ok(lost[0] == lost[1] && lost[0] > 200 && lost[0] < 400,
	   "seed 42, drop=30: the same %" PRIu64 " of 1000 lost twice", lost[0]);
}

int main(void)
{
	recs = calloc(REC_MAX, sizeof(*recs));
	if (!recs)
		return 1;
	printf("KTAP version 1\n1..%d\n", FABRIC_PLAN + LANAI_PLAN);
	t_crc();
	t_routes();
	t_topo_parse();
	t_route_consumed();
	t_bad_route();
	t_crc_per_hop();
	t_stall_timeout();
	t_nic_backpressure();
	t_fairness();
	t_one_switch();
	t_faults();
	t_seeded();
	lanai_tests();
	free(recs);
	printf("# %d of %d failed\n", nfail, ntest);
	return nfail || ntest != FABRIC_PLAN + LANAI_PLAN;
}
