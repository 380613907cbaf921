// SPDX-License-Identifier: GPL-2.0
/*
 * Privilege:
 *  - DPIDs 1..dpid_priv_max (default 1023) need CAP_NET_BIND_SERVICE in
 *    the user namespace owning the node's network namespace: uid 1001 gets
 *    EACCES, the same uid with the capability or root succeeds; capabilities
 *    in a user namespace of one's own do not count in node A, but do in a
 *    node (network namespace) that namespace owns; the parameter moves the
 *    boundary;
 *  - administration (NID, attach, detach, NART add/del/flush, counters
 *    reset) needs CAP_NET_ADMIN there: uid 1001 gets "Operation not
 *    permitted" for each and nothing changes (a counter survives the
 *    refused reset), uid 1001 with CAP_NET_ADMIN may; the root of a user
 *    namespace administers its own node but cannot take a machine-wide
 *    device (a tulip) for it, and a request refused so does not change
 *    the NID it also asked for.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/capability.h>
#include "ktap.h"
#include "dptest.h"
#include "dpt_agent.h"

#define UID_A		1001
#define PARAM		"/sys/module/dp/parameters/dpid_priv_max"
#define NID_NOWHERE	77777

static struct dpt_agent alice, carol, netadm, root;
static const char *ip = "ip";

static int priv_max(long v)
{
	FILE *f = fopen(PARAM, "w");
	int r;

	if (!f)
		return -1;
	r = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && r ? 0 : -1;
}

/* Bind dpid in the agent and close it again: 0, or -1 with errno. */
static int try_bind(struct dpt_agent *ag, uint32_t dpid)
{
	int s = dpt_a_bind(ag, dpid, DP_POOL_MIN, 0), e = errno;

	if (s >= 0)
		dpt_a_close(ag, s);
	errno = e;
	return s < 0 ? -1 : 0;
}

static void dpids(void)
{
	struct dp_info info;
	FILE *f = fopen(PARAM, "r");
	long def = -1;
	int s;

	if (f) {
		if (fscanf(f, "%ld", &def) != 1)
			def = -1;
		fclose(f);
	}
	ktap_ok(def == 1023, "dpid_priv_max defaults to %ld (want 1023)", def);
	KTAP_ERRNO(try_bind(&alice, 1), EACCES, "uid %d binds DPID 1: EACCES", UID_A);
	KTAP_ERRNO(try_bind(&alice, 100), EACCES, "uid %d binds DPID 100: EACCES", UID_A);
	KTAP_ERRNO(try_bind(&alice, 1023), EACCES, "uid %d binds DPID 1023: EACCES", UID_A);
	KTAP_SUCCESS(try_bind(&alice, 1024), "uid %d binds DPID 1024", UID_A);
	s = dpt_a_bind(&carol, 100, DP_POOL_MIN, 0);
	if (s < 0 || dpt_a_info(&carol, s, &info))
		info.uid = ~0u;
	ktap_ok(info.uid == UID_A,
		"uid %d with CAP_NET_BIND_SERVICE binds DPID 100 (owner uid %u)", UID_A, info.uid);
	if (s >= 0)
		dpt_a_close(&carol, s);
	KTAP_SUCCESS(try_bind(&root, 100), "root binds DPID 100");

	KTAP_SUCCESS(priv_max(0), "dpid_priv_max set to 0");
	KTAP_SUCCESS(try_bind(&alice, 100), "uid %d binds DPID 100 now", UID_A);
	KTAP_SUCCESS(priv_max(50), "dpid_priv_max set to 50");
	KTAP_SUCCESS(try_bind(&alice, 100), "uid %d binds DPID 100", UID_A);
	KTAP_ERRNO(try_bind(&alice, 50), EACCES, "uid %d binds DPID 50: EACCES", UID_A);
	KTAP_SUCCESS(priv_max(def), "dpid_priv_max restored");
	KTAP_ERRNO(try_bind(&alice, 100), EACCES, "uid %d binds DPID 100: EACCES again", UID_A);
}

static void userns(void)
{
	struct dpt_agent dave, erin;

	dpt_allow_userns();
	if (dpt_agent_start(&dave, "dave", dpt.nsa, UID_A, 0) ||
	    dpt_agent_start(&erin, "erin", dpt.nsa, UID_A, 0)) {
		ktap_ok(0, "start the user namespace agents");
		return;
	}
	KTAP_SUCCESS(dpt_a_userns(&dave, 0), "uid %d makes a user namespace (all capabilities in it)",
		     UID_A);
	KTAP_ERRNO(try_bind(&dave, 101), EACCES,
		   "... which does not own node A's namespace: DPID 101 EACCES");
	KTAP_SUCCESS(dpt_a_userns(&erin, 1), "uid %d makes a user and a network namespace", UID_A);
	KTAP_SUCCESS(try_bind(&erin, 102), "... a node of its own, where it binds DPID 102");
	ktap_ok(dpt_a_sh(&erin, "dpctl node set nid 5 && dpctl node | grep -qx 'nid 5'") == 0,
		"... and sets that node's NID");
	ktap_ok(dpt_a_sh(&erin, "out=$(dpctl node set dev tulip0 backend tulip 2>&1); rc=$?; "
			 "echo \"$out\" >&2; [ $rc -ne 0 ] && "
			 "echo \"$out\" | grep -q 'Operation not permitted'") == 0,
		"... but cannot take a tulip (a machine's device) for it: EPERM");
	ktap_ok(dpt_a_sh(&erin, "out=$(dpctl node set nid 6 dev tulip0 backend tulip 2>&1); "
			 "rc=$?; echo \"$out\" >&2; [ $rc -ne 0 ] && "
			 "echo \"$out\" | grep -q 'Operation not permitted' && "
			 "dpctl node | grep -qx 'nid 5'") == 0,
		"... and a refused request changes nothing: NID 6 with the tulip leaves NID 5");
	dpt_agent_stop(&dave);
	dpt_agent_stop(&erin);
}

/* As ag in node A: dpctl ARGS fails with EPERM. */
static int refused(struct dpt_agent *ag, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "out=$(dpctl %s 2>&1); rc=$?; echo \"$out\" >&2; "
		 "[ $rc -ne 0 ] && echo \"$out\" | grep -q 'Operation not permitted'", args);
	return dpt_a_sh(ag, cmd) == 0;
}

static void admin(void)
{
	char cmds[7][64], args[512];
	uint64_t c0, c1;
	unsigned int i;
	int s;

	snprintf(cmds[0], sizeof(cmds[0]), "node set nid 99");
	snprintf(cmds[1], sizeof(cmds[1]), "node set dev %s", dpt.ifa);
	snprintf(cmds[2], sizeof(cmds[2]), "node detach");
	snprintf(cmds[3], sizeof(cmds[3]), "nart add 99 02:00:00:00:00:99");
	snprintf(cmds[4], sizeof(cmds[4]), "nart del %u", dpt.nidb);
	snprintf(cmds[5], sizeof(cmds[5]), "nart flush");
	snprintf(cmds[6], sizeof(cmds[6]), "stats reset");

	s = dpt_a_bind(&alice, 1100, DP_POOL_MIN, 0);
	ktap_ok(s >= 0 && !dpt_a_connect(&alice, s, NID_NOWHERE, 1) &&
		dpt_a_write(&alice, s, 10, 0) == -1 && errno == EHOSTUNREACH,
		"uid %d sends to a NID not in the NART: EHOSTUNREACH", UID_A);
	c0 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE);
	ktap_ok(c0 >= 1 && c0 != UINT64_MAX, "... counted in tx_drop_no_route (%llu)",
		(unsigned long long)c0);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		ktap_ok(refused(&alice, cmds[i]), "uid %d: dpctl %s: EPERM", UID_A, cmds[i]);
	c1 = dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE);
	ktap_ok(c1 == c0, "the refused reset left tx_drop_no_route at %llu",
		(unsigned long long)c1);
	snprintf(args, sizeof(args),
		 "%s netns exec %s dpctl node | grep -qx 'nid %u' && "
		 "%s netns exec %s dpctl node | grep -qx 'ifname %s' && "
		 "%s netns exec %s dpctl nart | grep -q '^%u '", ip, dpt.nsa, dpt.nida, ip,
		 dpt.nsa, dpt.ifa, ip, dpt.nsa, dpt.nidb);
	ktap_ok(dpt_sh("%s", args) == 0, "node A still has its NID, device and NART entry");
	ktap_ok(dpt_a_sh(&netadm, "dpctl nart add 99 02:00:00:00:00:99 && dpctl nart del 99") == 0,
		"uid %d with CAP_NET_ADMIN adds and deletes a NART entry", UID_A);
	ktap_ok(dpt_sh("%s netns exec %s dpctl stats reset", ip, dpt.nsa) == 0 &&
		dpt_ctr(dpt.nsa, DP_CTR_TX_DROP_NO_ROUTE) == 0, "root resets the counters");
	if (s >= 0)
		dpt_a_close(&alice, s);
}

int main(void)
{
	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	ip = dpt_ip();
	if (dpt_agent_start(&alice, "alice", dpt.nsa, UID_A, 0) ||
	    dpt_agent_start(&carol, "carol", dpt.nsa, UID_A, 1ull << CAP_NET_BIND_SERVICE) ||
	    dpt_agent_start(&netadm, "netadm", dpt.nsa, UID_A, 1ull << CAP_NET_ADMIN) ||
	    dpt_agent_start(&root, "root", dpt.nsa, 0, 0))
		ktap_bail("start the agents");
	dpids();
	userns();
	admin();
	dpt_agent_stop(&alice);
	dpt_agent_stop(&carol);
	dpt_agent_stop(&netadm);
	dpt_agent_stop(&root);
	ktap_finish();
}
