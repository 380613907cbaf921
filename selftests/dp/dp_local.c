// SPDX-License-Identifier: GPL-2.0
/*
 * Delivery within one node (destination NID == own NID): works without a
 * NIC, stamps the source fields, counts DP_CTR_TX_LOCAL, also to the
 * sender itself; a session to an unbound DPID is never answered (its HELLO
 * is counted DP_CTR_RX_DROP_NO_EP) and a non-blocking write gets EAGAIN.
 * Node from DPT_NSL/DPT_NIDL ("init" = the initial namespace); DPT_IFL names
 * the node's NIC if it has one (max_msg then follows its MTU).
 */
#define _GNU_SOURCE
#include <unistd.h>
#include <fcntl.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_1 100
#define DPID_2 200

static uint8_t out[65535], in[65535];

static void xfer(int tx, int rx, struct dpt_pool *pool, uint32_t nid, uint32_t src_dpid,
		 size_t len, uint32_t seq)
{
	const struct dp_token *t;
	ssize_t n;

	dpt_random(out, len);
	n = write(tx, out, len);
	if (!ktap_ok(n == (ssize_t)len, "local write of %zu bytes (%zd)", len, n)) {
		ktap_diag("write: %s", strerror(errno));
		return;
	}
	if (!ktap_ok(dpt_wait_readable(rx, DPT_WAIT_MS) == 1, "%zu bytes arrive", len))
		return;
	t = dpt_head(pool);
	ktap_ok(t && t->len == len && t->src_nid == nid && t->src_dpid == src_dpid &&
		t->src_uid == getuid() && t->seq == seq && !memcmp(t + 1, out, len),
		"token len %u src %u/%u uid %u seq %u, bytes intact", t ? t->len : 0,
		t ? t->src_nid : 0, t ? t->src_dpid : 0, t ? t->src_uid : 0, t ? t->seq : 0);
	n = read(rx, in, sizeof(in));
	ktap_ok(n == (ssize_t)len && !memcmp(in, out, len), "read() gets the %zu bytes", len);
}

int main(void)
{
	const char *ns = getenv("DPT_NSL"), *ifl = getenv("DPT_IFL");
	uint32_t nid = (uint32_t)strtoul(getenv("DPT_NIDL") ? getenv("DPT_NIDL") : "0", NULL, 0);
	uint64_t local0, tx0, noep0;
	struct dpt_pool p1, p2;
	struct dp_info info;
	uint32_t want_max = 65535;
	int e1, e2, mtu;

	ktap_start();
	if (!ns || !*ns || !nid)
		ktap_exit_skip("DPT_NSL/DPT_NIDL not set");
	if (dpt_ns(ns))
		ktap_bail("enter the node's namespace");
	if (ifl && *ifl) {
		mtu = dpt_if_mtu(NULL, ifl);
		if (mtu > DP_WIRE_HDR_LEN && mtu - DP_WIRE_HDR_LEN < 65535)
			want_max = (uint32_t)(mtu - DP_WIRE_HDR_LEN);
	}
	local0 = dpt_ctr(NULL, DP_CTR_TX_LOCAL);
	tx0 = dpt_ctr(NULL, DP_CTR_TX_MSGS);
	noep0 = dpt_ctr(NULL, DP_CTR_RX_DROP_NO_EP);
	e1 = dpt_ep(NULL, DPID_1, 0);
	e2 = dpt_ep(NULL, DPID_2, 0);
	if (e1 < 0 || e2 < 0 || dpt_map(e1, &p1) || dpt_map(e2, &p2))
		ktap_bail("endpoints");
	dpt_info(e1, &info);
	ktap_ok(info.nid == nid, "node NID %u (want %u)", info.nid, nid);
	ktap_ok(info.max_msg == want_max, "max_msg %u (want %u)", info.max_msg, want_max);
	KTAP_SUCCESS(dpt_connect(e1, nid, DPID_2), "connect to {own NID, %d}", DPID_2);
	xfer(e1, e2, &p2, nid, DPID_1, 1, 1);
	xfer(e1, e2, &p2, nid, DPID_1, 64, 2);
	xfer(e1, e2, &p2, nid, DPID_1, 1024, 3);
	xfer(e1, e2, &p2, nid, DPID_1, info.max_msg, 4);
	KTAP_SUCCESS(dpt_connect(e2, nid, DPID_1), "reverse edge");
	xfer(e2, e1, &p1, nid, DPID_2, 300, 1);
	KTAP_SUCCESS(dpt_connect(e1, nid, DPID_1), "connect to itself");
	xfer(e1, e1, &p1, nid, DPID_1, 42, 1);
	ktap_ok(dpt_ctr(NULL, DP_CTR_TX_LOCAL) - local0 == 6,
		"DP_CTR_TX_LOCAL +%llu (want 6)",
		(unsigned long long)(dpt_ctr(NULL, DP_CTR_TX_LOCAL) - local0));
	ktap_ok(dpt_ctr(NULL, DP_CTR_TX_MSGS) - tx0 == 6, "DP_CTR_TX_MSGS +6");

	/*
	 * No endpoint: nothing answers the session's HELLO (it is counted), so
	 * a non-blocking write finds no credit and nothing is queued.
	 */
	dpt_connect(e1, nid, 999);
	fcntl(e1, F_SETFL, O_NONBLOCK);
	KTAP_ERRNO(write(e1, out, 10), EAGAIN, "non-blocking local write to an unbound DPID: EAGAIN");
	fcntl(e1, F_SETFL, 0);
	ktap_ok(dpt_wait_ctr(NULL, DP_CTR_RX_DROP_NO_EP, noep0 + 1, DPT_WAIT_MS) >= noep0 + 1,
		"its HELLO is counted in DP_CTR_RX_DROP_NO_EP");
	dpt_unmap(&p1);
	dpt_unmap(&p2);
	close(e1);
	close(e2);
	ktap_finish();
}
