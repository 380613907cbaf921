// SPDX-License-Identifier: GPL-2.0
/*
 * Send and receive across the link between two nodes (namespaces): 1, 64,
 * 1024 and max_msg bytes (link MTU - 52: 8948 on the harness's veth, 1448
 * on a tulip) of random data each way, verified byte for
 * byte, with the token's kernel-stamped source fields (src_nid, src_dpid,
 * src_uid, seq) checked in the mapped pool; then a sender running as
 * another user; then the endpoint and node counters.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define DPID_ALICE 3000
#define UID_ALICE 1001

static uint8_t out[65536], in[65536];

/*
 * Send len bytes on tx, expect them at rx from {src_nid, src_dpid} with
 * edge sequence number seq.  Checks the token in the pool, then read().
 */
static void one(int tx, int rx, const struct dpt_pool *pool, size_t len,
		uint32_t src_nid, uint32_t src_dpid, uint32_t uid, uint32_t seq,
		const char *dir)
{
	const struct dp_token *t;
	ssize_t n;

	dpt_random(out, len);
	n = write(tx, out, len);
	if (!ktap_ok(n == (ssize_t)len, "%s: write %zu bytes returns %zd", dir, len, n)) {
		ktap_diag("write: %s", strerror(errno));
		return;
	}
	if (!ktap_ok(dpt_wait_readable(rx, DPT_WAIT_MS) == 1, "%s: %zu bytes arrive", dir, len))
		return;
	t = dpt_head(pool);
	if (ktap_ok(t != NULL, "%s: head token visible in the pool", dir)) {
		ktap_ok(t->len == len && !memcmp(t + 1, out, len),
			"%s: pool holds the %zu bytes (token len %u)", dir, len, t->len);
		ktap_ok(t->src_nid == src_nid && t->src_dpid == src_dpid,
			"%s: token src %u/%u (want %u/%u)", dir, t->src_nid, t->src_dpid,
			src_nid, src_dpid);
		ktap_ok(t->src_uid == uid, "%s: token src_uid %u (want %u)", dir, t->src_uid, uid);
		ktap_ok(t->seq == seq, "%s: token seq %u (want %u)", dir, t->seq, seq);
		ktap_ok(!(t->flags & DP_TOK_WRAP), "%s: head is not a wrap token", dir);
	}
	memset(in, 0, len);
	n = read(rx, in, sizeof(in));
	ktap_ok(n == (ssize_t)len && !memcmp(in, out, len),
		"%s: read() returns the %zu bytes (got %zd)", dir, len, n);
}

/*
 * A child sending as alice from its own endpoint in node A.  Returns the
 * answers from B that may reach A after the child has gone, which A
 * rightly counts as rx_drop_no_ep (the protocol promises no fewer): one
 * per DATA frame it sent again (tx_retrans), and one grant.  The parent
 * releases the child's message on B after the child has gone; if B's pool
 * was short of credit for someone, that release re-grants to the senders
 * active there, the child's session among them until B has heard its
 * goodbye (dp_rcv_released()): an ACK to an endpoint no longer there.
 */
static uint64_t as_other_user(int rxb, const struct dpt_pool *pool)
{
	int p[2], st;
	pid_t pid;
	const struct dp_token *t;
	uint64_t retrans = 0;

	dpt_random(out, 333);
	if (pipe(p))
		return 0;
	pid = dpt_fork();
	if (pid == 0) {
		struct dp_ep_stats es = { 0 };
		int fd, i;
		char c = 'x';

		close(p[0]);
		if (dpt_ns(dpt.nsa) || setgid(UID_ALICE) || setuid(UID_ALICE))
			_exit(2);
		fd = dpt_ep(NULL, DPID_ALICE, 0);
		if (fd < 0 || dpt_connect(fd, dpt.nidb, DPID_B) ||
		    write(fd, out, 333) != 333)
			c = 'e';
		/*
		 * Leave once B has acknowledged it: B's acknowledgement of a
		 * sender already gone would be counted as a drop on A
		 * (rx_drop_no_ep), which this test checks there is none of.
		 */
		for (i = 0; c == 'x' && i < DPT_WAIT_MS / 10; i++) {
			if (dpt_stats(fd, &es) || !es.tx_unacked)
				break;
			dpt_sleep_ms(10);
		}
		if (c == 'x' && (dpt_stats(fd, &es) || es.tx_unacked))
			c = 'u';	/* still unacknowledged */
		if (write(p[1], &c, 1) != 1 ||
		    write(p[1], &es.tx_retrans, sizeof(es.tx_retrans)) != sizeof(es.tx_retrans))
			_exit(1);
		_exit(c == 'x' ? 0 : 3);
	}
	close(p[1]);
	st = dpt_wait_child(pid, DPT_WAIT_MS);
	{
		char c = 0;

		if (read(p[0], &c, 1) != 1 || read(p[0], &retrans, sizeof(retrans)) !=
		    sizeof(retrans))
			retrans = 0;
	}
	close(p[0]);
	if (!ktap_ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		     "uid %d opens, binds and sends, and B acknowledges it (exit %d, %llu resent)",
		     UID_ALICE, st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		     (unsigned long long)retrans))
		return retrans;
	if (!ktap_ok(dpt_wait_readable(rxb, DPT_WAIT_MS) == 1, "message from uid %d arrives",
		     UID_ALICE))
		return retrans;
	t = dpt_head(pool);
	ktap_ok(t && t->src_uid == UID_ALICE && t->src_dpid == DPID_ALICE &&
		t->src_nid == dpt.nida && t->seq == 1 && t->len == 333 &&
		!memcmp(t + 1, out, 333),
		"token stamped uid %u dpid %u nid %u seq %u (want %d %d %u 1)",
		t ? t->src_uid : 0, t ? t->src_dpid : 0, t ? t->src_nid : 0,
		t ? t->seq : 0, UID_ALICE, DPID_ALICE, dpt.nida);
	dpt_release(rxb, 1);
	return retrans + 1;
}

/*
 * The traced frames A dropped for no endpoint that are not what
 * as_other_user() allows, B's answers to the gone child: an ACK from B's
 * endpoint to alice's.  Each other one is printed; how many.
 */
static unsigned int not_late_answers(void)
{
	char like[96];

	snprintf(like, sizeof(like), " dst=%u/%d src=%u/%d type=2 ", dpt.nida, DPID_ALICE,
		 dpt.nidb, DPID_B);
	return dpt_trace_unlike("dp_rx_no_ep", like, "not an answer to the gone child: ");
}

/*
 * A netdev whose MTU changes under a bound endpoint: the endpoint's
 * max_msg follows at once (the node hears NETDEV_CHANGEMTU), and back.
 */
static void mtu_change(int a, int mtu, uint32_t want_max)
{
	struct dp_info i;

	if (dpt_if_set_mtu(dpt.nsa, dpt.ifa, 1500))
		ktap_bail("set the MTU (SIOCSIFMTU)");
	dpt_info(a, &i);
	ktap_ok(i.max_msg == 1500 - DP_WIRE_HDR_LEN, "max_msg %u after the MTU went to 1500",
		i.max_msg);
	if (dpt_if_set_mtu(dpt.nsa, dpt.ifa, mtu))
		ktap_bail("set the MTU back (SIOCSIFMTU)");
	dpt_info(a, &i);
	ktap_ok(i.max_msg == want_max, "max_msg %u after the MTU went back to %d",
		i.max_msg, mtu);
}

int main(void)
{
	static const size_t sizes[] = { 1, 64, 1024 };
	struct dp_node_stats na0, nb0, na1, nb1;
	struct dp_ep_stats sa, sb;
	struct dpt_pool pa, pb;
	struct dp_info ia, ib;
	uint64_t bytes = 0;
	uint64_t late_ok;
	uint32_t seq = 0, want_max, drops = 0;
	int a, b, mtu, traced;
	unsigned int i;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	/* whose frames a drop for no endpoint was, if asked (lib.sh) */
	traced = getenv("DPT_TRACE_DROPS") && !strcmp(getenv("DPT_TRACE_DROPS"), "1") &&
		 !dpt_trace("dp_rx_no_ep", 1);
	if (traced)
		ktap_diag("tracing dp_rx_no_ep (DPT_TRACE_DROPS=1)");
	if (dpt_node_stats(dpt.nsa, &na0) || dpt_node_stats(dpt.nsb, &nb0))
		ktap_bail("DP_IOC_NODE_STATS");
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	b = dpt_ep(dpt.nsb, DPID_B, 0);
	if (a < 0 || b < 0)
		ktap_bail("bind endpoints");
	if (dpt_map(a, &pa) || dpt_map(b, &pb))
		ktap_bail("mmap pools");
	KTAP_SUCCESS(dpt_connect(a, dpt.nidb, DPID_B), "A connects to B");
	KTAP_SUCCESS(dpt_connect(b, dpt.nida, DPID_A), "B connects to A");
	dpt_info(a, &ia);
	dpt_info(b, &ib);
	ktap_ok(ia.cur.nid == dpt.nidb && ia.cur.dpid == DPID_B && ia.n_edges == 1,
		"A's current edge is %u/%u, %u edge(s)", ia.cur.nid, ia.cur.dpid, ia.n_edges);
	mtu = dpt_if_mtu(dpt.nsa, dpt.ifa);
	want_max = mtu > DP_WIRE_HDR_LEN ? (uint32_t)(mtu - DP_WIRE_HDR_LEN) : 0;
	if (want_max > 65535)
		want_max = 65535;
	ktap_ok(want_max && ia.max_msg == want_max, "max_msg %u for MTU %d", ia.max_msg, mtu);
	if (strncmp(dpt.ifa, "tulip", 5) && strncmp(dpt.ifa, "myri", 4))
		mtu_change(a, mtu, want_max);

	for (i = 0; i < 3; i++) {
		one(a, b, &pb, sizes[i], dpt.nida, DPID_A, getuid(), ++seq, "A->B");
		bytes += sizes[i];
	}
	one(a, b, &pb, ia.max_msg, dpt.nida, DPID_A, getuid(), ++seq, "A->B max_msg");
	bytes += ia.max_msg;
	for (i = 0; i < 3; i++)
		one(b, a, &pa, sizes[i], dpt.nidb, DPID_B, getuid(), i + 1, "B->A");
	one(b, a, &pa, ib.max_msg, dpt.nidb, DPID_B, getuid(), 4, "B->A max_msg");

	if (dpt_stats(a, &sa) || dpt_stats(b, &sb))
		ktap_bail("DP_IOC_STATS");
	ktap_ok(sa.tx_msgs == 4 && sa.tx_bytes == bytes,
		"A tx_msgs %llu tx_bytes %llu (want 4, %llu)", (unsigned long long)sa.tx_msgs,
		(unsigned long long)sa.tx_bytes, (unsigned long long)bytes);
	ktap_ok(sb.rx_msgs == 4 && sb.rx_bytes == bytes && sb.queued == 0 && sb.rx_drop_full == 0,
		"B rx_msgs %llu rx_bytes %llu queued %llu drop_full %llu",
		(unsigned long long)sb.rx_msgs, (unsigned long long)sb.rx_bytes,
		(unsigned long long)sb.queued, (unsigned long long)sb.rx_drop_full);

	late_ok = as_other_user(b, &pb);

	if (dpt_node_stats(dpt.nsa, &na1) || dpt_node_stats(dpt.nsb, &nb1))
		ktap_bail("DP_IOC_NODE_STATS");
	ktap_ok(na1.n == DP_CTR_COUNT && na1.nid == dpt.nida,
		"node stats of A: n %u nid %u", na1.n, na1.nid);
	ktap_ok(na1.ctr[DP_CTR_TX_MSGS] - na0.ctr[DP_CTR_TX_MSGS] == 5 &&
		na1.ctr[DP_CTR_TX_LOCAL] == na0.ctr[DP_CTR_TX_LOCAL],
		"node A counted 5 sent messages, none local (tx %llu)",
		(unsigned long long)(na1.ctr[DP_CTR_TX_MSGS] - na0.ctr[DP_CTR_TX_MSGS]));
	ktap_ok(nb1.ctr[DP_CTR_RX_MSGS] - nb0.ctr[DP_CTR_RX_MSGS] == 5 &&
		nb1.ctr[DP_CTR_RX_BYTES] - nb0.ctr[DP_CTR_RX_BYTES] == bytes + 333,
		"node B counted 5 received messages, %llu bytes",
		(unsigned long long)(nb1.ctr[DP_CTR_RX_BYTES] - nb0.ctr[DP_CTR_RX_BYTES]));
	for (i = DP_CTR_RX_DROP_SHORT; i < DP_CTR_COUNT; i++) {
		if (!dpt_ctr_is_drop(i))
			continue;
		/*
		 * late answers to the gone child, at most one per frame it
		 * resent and one grant; traced, each of them B's ACK to it
		 */
		if (i == DP_CTR_RX_DROP_NO_EP && nb1.ctr[i] == nb0.ctr[i] &&
		    na1.ctr[i] - na0.ctr[i] <= late_ok &&
		    (!traced || na1.ctr[i] == na0.ctr[i] || !not_late_answers())) {
			if (na1.ctr[i] != na0.ctr[i])
				ktap_diag("A: rx_drop_no_ep +%llu, late answers to the gone child (%llu allowed)",
					  (unsigned long long)(na1.ctr[i] - na0.ctr[i]),
					  (unsigned long long)late_ok);
			continue;
		}
		if (nb1.ctr[i] != nb0.ctr[i] || na1.ctr[i] != na0.ctr[i]) {
			ktap_diag("unexpected %s: A +%llu B +%llu", dpt_ctr_name(i),
				  (unsigned long long)(na1.ctr[i] - na0.ctr[i]),
				  (unsigned long long)(nb1.ctr[i] - nb0.ctr[i]));
			drops++;
		}
	}
	if (na1.ctr[DP_CTR_RX_DROP_NO_EP] != na0.ctr[DP_CTR_RX_DROP_NO_EP] ||
	    nb1.ctr[DP_CTR_RX_DROP_NO_EP] != nb0.ctr[DP_CTR_RX_DROP_NO_EP]) {
		if (!traced || !dpt_trace_diag("dp_rx_no_ep", "rx_drop_no_ep: "))
			ktap_diag("rx_drop_no_ep: the frames not traced (DPT_TRACE_DROPS=1)");
	}
	if (traced)
		dpt_trace("dp_rx_no_ep", 0);
	ktap_ok(!drops,
		"no drop counted on either node (but for %llu late answer(s) to the gone child: resends and a grant)",
		(unsigned long long)late_ok);
	dpt_unmap(&pa);
	dpt_unmap(&pb);
	close(a);
	close(b);
	ktap_finish();
}
