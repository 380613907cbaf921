// SPDX-License-Identifier: GPL-2.0
/*
 * The node's NIC disappears while in use: node A's veth is deleted (over
 * the tulip or myri backend: A's PCI device is unbound through sysfs; t_nic.sh)
 * while an endpoint is open and a child is writing.  Writes to a remote NID
 * then fail with ENETDOWN, the endpoints stay usable, delivery within node A
 * still works, and `dpctl node set dev IF` attaches the device again.  (The
 * runner's rmmod afterwards must be clean.)
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_A2 101
#define DPID_B 200

struct report {
	long sent;
	int err;		/* the error that ended the writer */
	long transient;		/* earlier failures while the device went away */
	int transient_err;	/* the first of them */
};

int main(void)
{
	struct report rep = { 0, 0, 0, 0 };
	long old;
	ssize_t r = -1;
	struct dp_info info;
	uint8_t m[256], in[512];
	int a, a2, b, p[2], st;
	uint64_t tx0, moved;
	ssize_t n;
	pid_t pid;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	b = dpt_ep(dpt.nsb, DPID_B, 1u << 22);
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, DPID_B))
		ktap_bail("endpoints");
	dpt_random(m, sizeof(m));
	ktap_ok(write(a, m, 64) == 64 && dpt_wait_readable(b, DPT_WAIT_MS) == 1,
		"A reaches B before the device goes");
	dpt_release(b, 1);

	if (pipe(p))
		ktap_bail("pipe");
	tx0 = dpt_ctr(dpt.nsa, DP_CTR_TX_MSGS);
	pid = dpt_fork();
	if (pid == 0) {
		/* Write until ENETDOWN (bounded).  While the device is being
		 * unregistered it may refuse frames: counted, not fatal. */
		long tries;

		for (tries = 0; tries < 2000000; tries++) {
			if (write(a, m, 64) == 64) {
				rep.sent++;
				continue;
			}
			if (errno == ENETDOWN || rep.transient > 100000) {
				rep.err = errno;
				break;
			}
			if (!rep.transient++)
				rep.transient_err = errno;
		}
		_exit(write(p[1], &rep, sizeof(rep)) == sizeof(rep) ? 0 : 1);
	}
	close(p[1]);
	/* the child is writing (node A's count moves), not assumed after a sleep */
	moved = dpt_wait_ctr(dpt.nsa, DP_CTR_TX_MSGS, tx0 + 100, DPT_WAIT_MS) - tx0;
	st = dpt_sh("sh ./t_nic.sh del");
	ktap_ok(st == 0 && tx0 != UINT64_MAX && moved >= 100 && moved < UINT64_MAX - tx0,
		"take %s away while the child writes (%llu sent before)", dpt.ifa,
		(unsigned long long)moved);
	st = dpt_wait_child(pid, 60000);
	if (st == -1 || read(p[0], &rep, sizeof(rep)) != sizeof(rep))
		rep.err = -1;
	close(p[0]);
	ktap_diag("the writer sent %ld messages; %ld failed while the device went away (first: %s)",
		  rep.sent, rep.transient, rep.transient ? strerror(rep.transient_err) : "-");
	/*
	 * ENOBUFS: the NIC refused a frame while it went.  ETIMEDOUT: a
	 * writer waiting for credit when the NIC went stays asleep (a NIC
	 * back within unreach_ms would resume the session) until the session
	 * fails; that is reported once, then ENETDOWN.
	 */
	ktap_ok(!rep.transient || rep.transient_err == ENOBUFS ||
		(rep.transient_err == ETIMEDOUT && rep.transient == 1),
		"writes during the removal succeed or fail with ENOBUFS, or once ETIMEDOUT");
	ktap_ok(rep.err == ENETDOWN, "the writer's write fails with ENETDOWN (%d %s)", rep.err,
		rep.err > 0 ? strerror(rep.err) : "");
	errno = 0;
	n = write(a, m, 64);
	if (n < 0 && errno == ETIMEDOUT) {
		/* the session's messages in flight timed out meanwhile: reported once */
		ktap_diag("A's session to B failed meanwhile (ETIMEDOUT, reported once)");
		errno = 0;
		n = write(a, m, 64);
	}
	ktap_ok(n == -1 && errno == ENETDOWN, "write to a remote NID: ENETDOWN (%s)",
		strerror(errno));
	KTAP_SUCCESS(dpt_info(a, &info), "A's endpoint still answers INFO");
	ktap_ok(info.nid == dpt.nida, "A keeps its NID %u", info.nid);
	ktap_ok(info.max_msg == 65535, "max_msg with no NIC is 65535 (%u)", info.max_msg);

	/* B's endpoint keeps what it got. */
	n = 0;
	while (dpt_wait_readable(b, 0) == 1 && read(b, in, sizeof(in)) == 64)
		n++;
	ktap_ok(dpt_wait_readable(b, 0) == 0, "B drained %zd messages, endpoint still fine", n);

	/* Local delivery in A. */
	a2 = dpt_ep(dpt.nsa, DPID_A2, 0);
	ktap_ok(a2 >= 0, "bind another endpoint in A");
	KTAP_SUCCESS(dpt_connect(a, dpt.nida, DPID_A2), "A connects to its own node");
	n = write(a, m, 200);
	ktap_ok(n == 200, "local write without a NIC (%zd)", n);
	ktap_ok(dpt_wait_readable(a2, DPT_WAIT_MS) == 1 && read(a2, in, sizeof(in)) == 200 &&
		!memcmp(in, m, 200), "delivered within node A");

	/* Give node A a NIC again. */
	st = dpt_sh("sh ./t_nic.sh add");
	ktap_ok(st == 0, "a NIC attached again with dpctl node set dev (%s)", dpt.ifa);
	dpt_connect(a, dpt.nidb, DPID_B);
	n = write(a, m, 100);
	if (n < 0 && errno == ETIMEDOUT) {
		/* the session failed while A had no NIC (unreach_ms): once */
		ktap_diag("A's session to B timed out while the device was gone");
		n = write(a, m, 100);
	}
	ktap_ok(n == 100, "A writes to B over the new device (%zd)", n);
	/*
	 * Messages A accepted before the device went are still A's to deliver
	 * (reliable edges), so they come first, in order: then ours.
	 */
	old = 0;
	while (dpt_wait_readable(b, DPT_WAIT_MS) == 1) {
		r = read(b, in, sizeof(in));
		if (r == 100 && !memcmp(in, m, 100))
			break;
		old++;
		r = -1;
	}
	ktap_ok(r == 100, "A reaches B again over the new device (after %ld earlier messages)",
		old);
	close(a2);
	close(a);
	close(b);
	ktap_finish();
}
