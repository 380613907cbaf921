// SPDX-License-Identifier: GPL-2.0
/*
 * Two unprivileged users on one node, A (uid 1001) and B (uid 1002):
 *  - every message carries the sender's NID, DPID and uid as its kernel
 *    stamped them, and the receiver reads them from its read-only pool;
 *  - B cannot take A's DPID (EADDRINUSE), nor reach A's endpoint: not
 *    through /proc/PID/fd (EACCES; root reopening it gets a new, unbound
 *    endpoint), pidfd_getfd (EPERM), /proc/PID/mem (EACCES) or ptrace (EPERM),
 *    and A's queued message is untouched;
 *  - an fd A hands over on purpose (SCM_RIGHTS) is A's endpoint: what B
 *    sends through it carries A's DPID and uid;
 *  - a DPID is free again when its holder is killed, for any user;
 *  - the uid on the wire is the one of the sender kernel's initial user
 *    namespace, and a receiver in a user namespace sees it mapped into its
 *    own (0 for its own uid, 65534 when unmapped).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dpt_agent.h"

#define UID_A		1001
#define UID_B		1002
#define DPID_R		200	/* root's receiver in node B */
#define DPID_A		3001
#define DPID_B		3002
#define DPID_DIES	3005
#define DPID_NS_B	3006
#define DPID_NS_R	3007
#define OVERFLOW_UID	65534

static struct dpt_agent root_b, alice, bob;

/*
 * Expect the next message at (ag, slot) from nid/dpid/uid with the seed's
 * bytes; release it.
 */
static void expect_from(struct dpt_agent *ag, int slot, uint32_t nid, uint32_t dpid,
			uint32_t uid, uint32_t seed, const char *what)
{
	struct dpt_head h;
	int r;

	if (!ktap_ok(dpt_a_wait(ag, slot, DPT_WAIT_MS) == 1, "%s: arrives", what))
		return;
	r = dpt_a_head(ag, slot, &h);
	ktap_ok(r == 1 && h.intact && h.seed == seed && h.tok.src_nid == nid &&
		h.tok.src_dpid == dpid && h.tok.src_uid == uid,
		"%s: token src %u/%u uid %u seed %u intact %d (want %u/%u uid %u seed %u)",
		what, h.tok.src_nid, h.tok.src_dpid, h.tok.src_uid, h.seed, h.intact,
		nid, dpid, uid, seed);
	dpt_a_release(ag, slot, 1);
}

/* Both users send to root's receiver; the kernel stamps who they are. */
static void identity(int r, int a, int b)
{
	KTAP_SUCCESS(dpt_a_connect(&alice, a, dpt.nidb, DPID_R), "A connects to root's receiver");
	KTAP_SUCCESS(dpt_a_connect(&bob, b, dpt.nidb, DPID_R), "B connects to root's receiver");
	ktap_ok(dpt_a_write(&alice, a, 100, 1) == 100, "A sends");
	expect_from(&root_b, r, dpt.nida, DPID_A, UID_A, 1, "A's message");
	ktap_ok(dpt_a_write(&bob, b, 100, 2) == 100, "B sends");
	expect_from(&root_b, r, dpt.nida, DPID_B, UID_B, 2, "B's message");
	KTAP_ERRNO(dpt_a_bind(&bob, DPID_A, 0, 0), EADDRINUSE, "B cannot bind A's DPID: EADDRINUSE");
}

/* B tries every way to A's endpoint; root's reopen is a new endpoint. */
static void reach(int r, int a)
{
	char fdpath[64], mempath[64];
	struct dp_ep_stats st;
	struct dpt_head h;
	int afd, s;

	KTAP_SUCCESS(dpt_a_connect(&root_b, r, dpt.nida, DPID_A), "root connects back to A");
	ktap_ok(dpt_a_write(&root_b, r, 80, 3) == 80 &&
		dpt_a_wait(&alice, a, DPT_WAIT_MS) == 1, "a message is queued in A's pool");
	afd = dpt_a_fdnum(&alice, a);
	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", (int)alice.pid, afd);
	snprintf(mempath, sizeof(mempath), "/proc/%d/mem", (int)alice.pid);
	KTAP_ERRNO(dpt_a_open(&bob, fdpath, O_RDWR), EACCES, "B opening %s: EACCES", fdpath);
	KTAP_ERRNO(dpt_a_pidfd_getfd(&bob, alice.pid, afd), EPERM, "B's pidfd_getfd of A's fd: EPERM");
	KTAP_ERRNO(dpt_a_open(&bob, mempath, O_RDONLY), EACCES,
		   "B cannot read A's memory (the pool) through /proc/PID/mem: EACCES");
	KTAP_ERRNO(dpt_a_ptrace_attach(&bob, alice.pid), EPERM, "B cannot ptrace A: EPERM");

	s = dpt_a_open(&root_b, fdpath, O_RDWR);
	if (ktap_ok(s >= 0, "root can open %s ...", fdpath)) {
		struct dp_info info;

		KTAP_ERRNO(dpt_a_info(&root_b, s, &info), EBADFD,
			   "... and gets a new, unbound endpoint (INFO: EBADFD)");
		KTAP_ERRNO(dpt_a_mmap(&root_b, s), EBADFD, "... whose mmap fails: EBADFD");
		KTAP_ERRNO(dpt_a_release(&root_b, s, 1), EBADFD, "... and release too: EBADFD");
		KTAP_SUCCESS(dpt_a_close(&root_b, s), "... closed");
	}
	if (dpt_a_stats(&alice, a, &st))
		st.queued = ~0ull;
	ktap_ok(st.queued == 1 && st.rx_msgs == 1,
		"A's message is still queued (queued %llu rx_msgs %llu)",
		(unsigned long long)st.queued, (unsigned long long)st.rx_msgs);
	ktap_ok(dpt_a_head(&alice, a, &h) == 1 && h.intact && h.seed == 3 &&
		h.tok.src_uid == 0 && h.tok.src_dpid == DPID_R, "and intact (from root, seed 3)");
	dpt_a_release(&alice, a, 1);
}

/* An fd handed over on purpose is the endpoint, identity included. */
static void handed_over(int r, int a)
{
	int fd = dpt_a_give(&alice, a), s;

	if (!ktap_ok(fd >= 0, "A hands its endpoint's fd to the test (SCM_RIGHTS)"))
		return;
	s = dpt_a_take(&bob, fd);
	close(fd);
	if (!ktap_ok(s >= 0, "... which hands it to B"))
		return;
	ktap_ok(dpt_a_write(&bob, s, 60, 4) == 60, "B writes through A's fd");
	expect_from(&root_b, r, dpt.nida, DPID_A, UID_A, 4,
		    "B's write through A's fd: A's DPID and uid (the endpoint's identity)");
	dpt_a_close(&bob, s);
}

/* The DPID of a killed holder is free for anyone. */
static void holder_dies(void)
{
	struct dpt_agent carol;
	struct dpt_head h;
	int c, b;

	if (dpt_agent_start(&carol, "carol", dpt.nsa, UID_A, 0)) {
		ktap_ok(0, "start a second process of uid %d", UID_A);
		return;
	}
	c = dpt_a_bind(&carol, DPID_DIES, 0, 0);
	ktap_ok(c >= 0 && dpt_a_head(&carol, c, &h) == 0,
		"uid %d binds DPID %d and maps its pool", UID_A, DPID_DIES);
	KTAP_ERRNO(dpt_a_bind(&bob, DPID_DIES, 0, 0), EADDRINUSE, "B cannot bind it meanwhile");
	dpt_agent_stop(&carol);	/* SIGKILL and reap */
	b = dpt_a_bind(&bob, DPID_DIES, 0, 0);
	KTAP_SUCCESS(b, "after the holder is killed, B binds DPID %d", DPID_DIES);
	if (b >= 0)
		dpt_a_close(&bob, b);
}

/* The uid across user namespaces. */
static void namespaces(int r, int a, int b)
{
	struct dpt_agent dave, erin;
	struct dp_info info;
	int d, e;

	dpt_allow_userns();
	if (dpt_agent_start(&dave, "dave", dpt.nsa, UID_B, 0) ||
	    dpt_agent_start(&erin, "erin", dpt.nsb, UID_A, 0)) {
		ktap_ok(0, "start the agents in user namespaces");
		return;
	}
	KTAP_SUCCESS(dpt_a_userns(&dave, 0), "uid %d enters a user namespace where it is 0", UID_B);
	d = dpt_a_bind(&dave, DPID_NS_B, 0, 0);
	ktap_ok(d >= 0 && dpt_a_connect(&dave, d, dpt.nidb, DPID_R) == 0 &&
		dpt_a_write(&dave, d, 40, 5) == 40, "... binds, connects and sends");
	expect_from(&root_b, r, dpt.nida, DPID_NS_B, UID_B, 5,
		    "the wire carries uid 1002 (initial namespace), not 0");

	KTAP_SUCCESS(dpt_a_userns(&erin, 0), "uid %d (node B) enters a user namespace where it is 0",
		     UID_A);
	e = dpt_a_bind(&erin, DPID_NS_R, 0, 0);
	if (e < 0 || dpt_a_info(&erin, e, &info))
		info.uid = ~0u;
	ktap_ok(info.uid == 0,
		"its endpoint's owner is uid %u in its namespace (want 0)", info.uid);
	ktap_ok(dpt_a_connect(&alice, a, dpt.nidb, DPID_NS_R) == 0 &&
		dpt_a_write(&alice, a, 30, 6) == 30, "A (uid %d) sends to it", UID_A);
	expect_from(&erin, e, dpt.nida, DPID_A, 0, 6, "A's uid 1001 reads as 0 in that namespace");
	ktap_ok(dpt_a_connect(&bob, b, dpt.nidb, DPID_NS_R) == 0 &&
		dpt_a_write(&bob, b, 30, 7) == 30, "B (uid %d) sends to it", UID_B);
	expect_from(&erin, e, dpt.nida, DPID_B, OVERFLOW_UID, 7,
		    "B's uid 1002, unmapped there, reads as the overflow uid 65534");
	if (dpt_a_info(&alice, a, &info))
		info.uid = ~0u;
	ktap_ok(info.uid == UID_A,
		"INFO reports A's owner as %u (want %d)", info.uid, UID_A);
	dpt_agent_stop(&dave);
	dpt_agent_stop(&erin);
}

int main(void)
{
	int r, a, b;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_agent_start(&root_b, "root", dpt.nsb, 0, 0) ||
	    dpt_agent_start(&alice, "alice", dpt.nsa, UID_A, 0) ||
	    dpt_agent_start(&bob, "bob", dpt.nsa, UID_B, 0))
		ktap_bail("start the agents");
	r = dpt_a_bind(&root_b, DPID_R, 0, 0);
	a = dpt_a_bind(&alice, DPID_A, 0, 0);
	b = dpt_a_bind(&bob, DPID_B, 0, 0);
	if (!ktap_ok(r >= 0 && a >= 0 && b >= 0, "root binds %d in B; A binds %d, B %d in A",
		     DPID_R, DPID_A, DPID_B))
		ktap_finish();
	identity(r, a, b);
	reach(r, a);
	handed_over(r, a);
	holder_dies();
	namespaces(r, a, b);
	dpt_agent_stop(&alice);
	dpt_agent_stop(&bob);
	dpt_agent_stop(&root_b);
	ktap_finish();
}
