// SPDX-License-Identifier: GPL-2.0
/*
 * Admission rules (dp_bind.flags, DP_ADMIT_*).  uid 1001 owns four
 * receivers in node B: anyone, connected peers only, its own uid only, and
 * both.  Four raw senders (DP_BIND_RAW: admission is then per message; a
 * reliable sender refused at its HELLO gets ECONNREFUSED, see dp_rel_*)
 * write to each: uid 1001 and uid 1002 from node A
 * (both connected to by the "peers" receivers), uid 1001 from node A not
 * connected to, and uid 1002 from inside node B (local delivery).  Each
 * receiver gets exactly the admitted messages, with the senders' stamped
 * identity; every refused one is counted once, on the endpoint
 * (rx_drop_admit) and on the node (DP_CTR_RX_DROP_ADMIT).  Disconnecting a
 * peer closes the door again; connecting one opens it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dpt_agent.h"

#define UID_A		1001
#define UID_B		1002
#define NRECV		4
#define NSEND		4

static const uint32_t recv_admit[NRECV] = {
	DP_ADMIT_ANY, DP_ADMIT_PEERS, DP_ADMIT_UID, DP_ADMIT_PEERS | DP_ADMIT_UID,
};
static const char *const recv_name[NRECV] = { "any", "peers", "uid", "peers+uid" };
static const uint32_t recv_dpid[NRECV] = { 3300, 3301, 3302, 3303 };

static const uint32_t send_dpid[NSEND] = { 3101, 3102, 3103, 3104 };
static const uint32_t send_uid[NSEND] = { UID_A, UID_B, UID_A, UID_B };
static const char *const send_name[NSEND] = {
	"uid 1001 peer", "uid 1002 peer", "uid 1001 not a peer", "uid 1002 local",
};

/* admitted[r][s]: what the rules above let through. */
static const int admitted[NRECV][NSEND] = {
	{ 1, 1, 1, 1 },
	{ 1, 1, 0, 0 },
	{ 1, 0, 1, 0 },
	{ 1, 0, 0, 0 },
};

static struct dpt_agent owner, alice, bob, bob_b;
static struct dpt_agent *send_ag[NSEND];
static int send_slot[NSEND], recv_slot[NRECV];

static uint32_t send_nid(int s)
{
	return s == 3 ? dpt.nidb : dpt.nida;
}

/* Wait until slot has seen n messages, delivered or refused; its stats. */
static int wait_seen(int slot, uint64_t n, struct dp_ep_stats *st)
{
	int waited;

	for (waited = 0; waited <= DPT_WAIT_MS; waited += 10) {
		if (dpt_a_stats(&owner, slot, st))
			return -1;
		if (st->rx_msgs + st->rx_drop_admit + st->rx_drop_full >= n)
			return 0;
		dpt_sleep_ms(10);
	}
	return -1;
}

static int bind_all(void)
{
	struct dp_info info;
	int r, s;

	for (r = 0; r < NRECV; r++) {
		recv_slot[r] = dpt_a_bind(&owner, recv_dpid[r], 0, recv_admit[r]);
		if (recv_slot[r] < 0 || dpt_a_info(&owner, recv_slot[r], &info))
			info.admit = ~0u;
		if (!ktap_ok(info.admit == recv_admit[r],
			     "receiver %u binds with admit %s (INFO.admit %u)", recv_dpid[r],
			     recv_name[r], info.admit))
			return -1;
	}
	for (r = 1; r < NRECV; r += 2)
		if (dpt_a_connect(&owner, recv_slot[r], dpt.nida, send_dpid[0]) ||
		    dpt_a_connect(&owner, recv_slot[r], dpt.nida, send_dpid[1]))
			return -1;
	for (s = 0; s < NSEND; s++) {
		send_slot[s] = dpt_a_bind(send_ag[s], send_dpid[s], 0, DP_BIND_RAW);
		if (send_slot[s] < 0)
			return -1;
	}
	return 0;
}

/* Every sender sends one message to every receiver, seed 100 + 10 s + r. */
static void send_all(void)
{
	int r, s, bad = 0;

	for (s = 0; s < NSEND; s++)
		for (r = 0; r < NRECV; r++)
			if (dpt_a_connect(send_ag[s], send_slot[s], dpt.nidb, recv_dpid[r]) ||
			    dpt_a_write(send_ag[s], send_slot[s], 64, 100 + 10 * s + r) != 64)
				bad++;
	ktap_ok(!bad, "4 senders x 4 receivers: 16 messages sent (%d failed)", bad);
}

/* Receiver r got exactly the admitted messages, with the right sources. */
static void check_recv(int r)
{
	int want = 0, s, got[NSEND] = { 0 }, bad = 0;
	struct dp_ep_stats st;
	struct dpt_head h;
	uint64_t i;

	for (s = 0; s < NSEND; s++)
		want += admitted[r][s];
	if (!ktap_ok(wait_seen(recv_slot[r], NSEND, &st) == 0,
		     "%s: all 4 messages arrived or were refused", recv_name[r]))
		return;
	ktap_ok(st.rx_msgs == (uint64_t)want && st.rx_drop_admit == (uint64_t)(NSEND - want) &&
		st.rx_drop_full == 0,
		"%s: %llu delivered, %llu refused (rx_drop_admit) (want %d, %d)", recv_name[r],
		(unsigned long long)st.rx_msgs, (unsigned long long)st.rx_drop_admit, want,
		NSEND - want);
	for (i = 0; i < st.rx_msgs; i++) {
		if (dpt_a_head(&owner, recv_slot[r], &h) != 1) {
			bad++;
			break;
		}
		s = (int)(h.seed - 100) / 10;
		if (h.seed < 100 || s >= NSEND || (h.seed - 100) % 10 != (uint32_t)r ||
		    !h.intact || h.tok.src_nid != send_nid(s) ||
		    h.tok.src_dpid != send_dpid[s] || h.tok.src_uid != send_uid[s]) {
			ktap_diag("%s: unexpected message seed %u from %u/%u uid %u", recv_name[r],
				  h.seed, h.tok.src_nid, h.tok.src_dpid, h.tok.src_uid);
			bad++;
		} else {
			got[s]++;
		}
		dpt_a_release(&owner, recv_slot[r], 1);
	}
	for (s = 0; s < NSEND; s++)
		if (got[s] != admitted[r][s]) {
			ktap_diag("%s: %d from %s (want %d)", recv_name[r], got[s], send_name[s],
				  admitted[r][s]);
			bad++;
		}
	ktap_ok(!bad, "%s: exactly the admitted senders, with their stamped NID, DPID, uid",
		recv_name[r]);
}

/* One message from sender s to receiver r: delivered (1) or refused (0)? */
static int one(int s, int r, uint32_t seed)
{
	struct dp_ep_stats st0, st;

	if (dpt_a_stats(&owner, recv_slot[r], &st0) ||
	    dpt_a_connect(send_ag[s], send_slot[s], dpt.nidb, recv_dpid[r]) ||
	    dpt_a_write(send_ag[s], send_slot[s], 64, seed) != 64 ||
	    wait_seen(recv_slot[r], st0.rx_msgs + st0.rx_drop_admit + 1, &st))
		return -1;
	if (st.rx_msgs > st0.rx_msgs)
		dpt_a_release(&owner, recv_slot[r], 1);
	return st.rx_msgs > st0.rx_msgs;
}

static void peers_change(void)
{
	KTAP_SUCCESS(dpt_a_disconnect(&owner, recv_slot[1], dpt.nida, send_dpid[0]),
		     "peers: the owner disconnects from %s", send_name[0]);
	ktap_ok(one(0, 1, 200) == 0, "peers: %s is refused now", send_name[0]);
	KTAP_SUCCESS(dpt_a_connect(&owner, recv_slot[1], dpt.nida, send_dpid[2]),
		     "peers: the owner connects to %s", send_name[2]);
	ktap_ok(one(2, 1, 201) == 1, "peers: %s is admitted now", send_name[2]);
}

static void dpctl_shows(void)
{
	ktap_ok(dpt_sh("%s netns exec %s dpctl ep | grep -q '^dpid 3303 .* admit peers+uid$'",
		       dpt_ip(), dpt.nsb) == 0,
		"dpctl ep shows receiver 3303 as \"admit peers+uid\"");
}

int main(void)
{
	uint64_t c0, c1;
	int r, drops = 0;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	if (dpt_agent_start(&owner, "owner", dpt.nsb, UID_A, 0) ||
	    dpt_agent_start(&alice, "alice", dpt.nsa, UID_A, 0) ||
	    dpt_agent_start(&bob, "bob", dpt.nsa, UID_B, 0) ||
	    dpt_agent_start(&bob_b, "bob in B", dpt.nsb, UID_B, 0))
		ktap_bail("start the agents");
	send_ag[0] = &alice;
	send_ag[1] = &bob;
	send_ag[2] = &alice;
	send_ag[3] = &bob_b;

	KTAP_ERRNO(dpt_a_bind(&owner, 3399, 0, 4), EINVAL, "bind with admit bit 4: EINVAL");
	KTAP_ERRNO(dpt_a_bind(&owner, 3399, 0, 0x80000000u), EINVAL,
		   "bind with admit 0x80000000: EINVAL");
	if (bind_all())
		ktap_bail("bind the receivers and senders");
	c0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_ADMIT);
	send_all();
	for (r = 0; r < NRECV; r++) {
		int s;

		check_recv(r);
		for (s = 0; s < NSEND; s++)
			drops += !admitted[r][s];
	}
	c1 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_ADMIT);
	ktap_ok(c1 - c0 == (uint64_t)drops, "node B counted %llu rx_drop_admit (want %d)",
		(unsigned long long)(c1 - c0), drops);
	ktap_ok(dpt_ctr(dpt.nsa, DP_CTR_RX_DROP_ADMIT) == 0, "node A counted none");
	peers_change();
	dpctl_shows();
	dpt_agent_stop(&owner);
	dpt_agent_stop(&alice);
	dpt_agent_stop(&bob);
	dpt_agent_stop(&bob_b);
	ktap_finish();
}
