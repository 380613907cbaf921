// SPDX-License-Identifier: GPL-2.0
/*
 * NODE_SET replaces a node's NIC only once the new one is attached
 * (docs/contract.md, NODE_SET).  Node A moves between its device and a
 * spare veth in its namespace while a writer streams to node B:
 *  - an attach that fails after every check passed (debugfs knob
 *    dp/attach_fail: the backend's attach fails with ENOMEM) leaves A on
 *    its device, and A still reaches B;
 *  - moves that succeed never leave A without a NIC: the writer never
 *    sees ENETDOWN, no frame is counted tx_drop_no_nic, and B gets every message it accepted, once, in order
 *    (those sent over the spare are lost there and retransmitted).
 * Over dp's tulip or myri driver (DPT_NIC=tulip, myri) A's device is a
 * tulip or a LANai card and the spare a veth of the netdev backend: the
 * move crosses backends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A	130
#define DPID_B	230
#define SPARE	"dpt_spare0"
#define SPARE_PEER "dpt_spare1"
#define KNOB	"/sys/kernel/debug/dp/attach_fail"
#define MOVES	6

static const char *backend_a(void)
{
	return dpt.backend;
}

/* dpctl node set dev @dev backend @be in node A; its exit status. */
static int set_dev(const char *dev, const char *be)
{
	return dpt_sh("%s netns exec %s dpctl node set dev %s backend %s 2>/dev/null",
		      dpt_ip(), dpt.nsa, dev, be);
}

/* Whether node A's NIC is @dev, as dpctl -j node says. */
static int on_dev(const char *dev)
{
	return !dpt_sh("%s netns exec %s dpctl -j node | grep -q '\"ifname\":\"%s\"'",
		       dpt_ip(), dpt.nsa, dev);
}

static int knob_set(const char *v)
{
	if (access(KNOB, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	return dpt_sh("echo %s > " KNOB, v);
}

static int knob_is(const char *v)
{
	return !dpt_sh("grep -qx %s " KNOB, v);
}

/* Child: nonblocking writes of tagged messages until told to stop. */
static void writer(int a, int stop_fd, int rep_fd)
{
	long rep[2] = { 0, 0 };	/* accepted, ENETDOWN seen */
	uint8_t m[64];
	char c;

	memset(m, 0x5a, sizeof(m));
	fcntl(a, F_SETFL, O_NONBLOCK);
	fcntl(stop_fd, F_SETFL, O_NONBLOCK);
	while (read(stop_fd, &c, 1) != 1) {
		memcpy(m, &rep[0], sizeof(rep[0]));
		if (write(a, m, sizeof(m)) == sizeof(m))
			rep[0]++;
		else if (errno == ENETDOWN)
			rep[1]++;
		else
			dpt_sleep_ms(1);
	}
	if (write(rep_fd, rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(0);
}

/* B reads @n tagged messages: 1 if each came once and in order. */
static int all_in_order(int b, long n)
{
	uint8_t in[128];
	long i, tag;

	for (i = 0; i < n; i++) {
		if (dpt_wait_readable(b, 3 * DPT_WAIT_MS) != 1 ||
		    read(b, in, sizeof(in)) != 64)
			break;
		memcpy(&tag, in, sizeof(tag));
		if (tag != i)
			break;
	}
	if (i < n)
		ktap_diag("message %ld of %ld missing or out of order", i, n);
	return i == n && dpt_wait_readable(b, 200) == 0;
}

int main(void)
{
	int a, b, i, st, moved = 0, stop[2], rep[2];
	uint64_t nonic0, nonic;
	long r[2] = { -1, -1 };
	uint8_t m[64] = { 1 };
	pid_t pid;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_sh("%s -n %s link add %s type veth peer name %s && %s -n %s link set %s up",
		   dpt_ip(), dpt.nsa, SPARE, SPARE_PEER, dpt_ip(), dpt.nsa, SPARE))
		ktap_bail("a spare veth in node A's namespace");
	dpt_pair(&a, DPID_A, &b, DPID_B);
	ktap_ok(write(a, m, 64) == 64 && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		dpt_release(b, 1) == 1, "A reaches B on %s", dpt.ifa);

	ktap_ok(!knob_set("1"), "debugfs knob dp/attach_fail set");
	st = set_dev(SPARE, "netdev");
	ktap_ok(st != 0 && knob_is("0"), "an attach that fails (ENOMEM) is refused (%d)", st);
	ktap_ok(on_dev(dpt.ifa), "A is still on %s", dpt.ifa);
	ktap_ok(write(a, m, 64) == 64 && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
		dpt_release(b, 1) == 1, "and still reaches B");

	if (pipe(stop) || pipe(rep))
		ktap_bail("pipes");
	nonic0 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_NIC);
	pid = dpt_fork();
	if (pid == 0)
		writer(a, stop[0], rep[1]);
	for (i = 0; i < MOVES; i++) {
		dpt_sleep_ms(200);
		moved += !set_dev(i % 2 ? dpt.ifa : SPARE, i % 2 ? backend_a() : "netdev");
	}
	dpt_sleep_ms(200);
	ktap_ok(moved == MOVES && on_dev(dpt.ifa),
		"A moved %d of %d times between %s and %s, and is on %s", moved, MOVES,
		dpt.ifa, SPARE, dpt.ifa);
	if (write(stop[1], "x", 1) != 1 || read(rep[0], r, sizeof(r)) != sizeof(r))
		ktap_diag("no report from the writer");
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	nonic = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_NIC);
	ktap_ok(st == 0 && r[0] > 0 && r[1] == 0 && nonic == nonic0,
		"never without a NIC: ENETDOWN %ld times (of %ld written), tx_drop_no_nic +%llu",
		r[1], r[0], (unsigned long long)(nonic - nonic0));
	ktap_ok(all_in_order(b, r[0]), "B got all %ld once, in order", r[0]);

	close(a);
	close(b);
	dpt_sh("%s -n %s link del %s", dpt_ip(), dpt.nsa, SPARE);
	ktap_finish();
}
