// SPDX-License-Identifier: GPL-2.0
/*
 * The receive parser on the real path: frames forged with a raw AF_PACKET
 * socket on a Linux netdev on A's wire (B's veth end, or over the tulip
 * backend a third NIC on the hub: DPT_RAWNS/DPT_RAWIF), EtherType DP_ETH_P,
 * to A's MAC.  Each
 * malformed frame (an empty DATA and a raw DATA numbered 0 among them)
 * must raise exactly one node counter of A by exactly one (and no other
 * drop counter, and no delivery); a well-formed forged frame
 * with B's real source MAC is delivered with the header's source fields.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100

static int raw_fd, raw_ifindex;
static uint64_t rx_bytes;	/* expected RX_BYTES rise when ctr is RX_MSGS */
static int keep_csum;		/* send the frame's csum as it is */

struct frame {
	uint8_t dst[6], src[6];
	uint16_t proto;
	uint8_t payload[1500];
} __attribute__((packed));

/* A raw (DP_WF_RAW) DATA header; xmit() seals it. */
static void hdr(struct dp_wire_hdr *w, uint8_t ver, uint8_t type, uint16_t len,
		uint32_t dnid, uint32_t snid, uint32_t ddpid, uint32_t sdpid)
{
	memset(w, 0, sizeof(*w));
	w->version = ver;
	w->type = type;
	w->len = htons(len);
	w->flags = htons(DP_WF_RAW);
	w->dst_nid = htonl(dnid);
	w->src_nid = htonl(snid);
	w->dst_dpid = htonl(ddpid);
	w->src_dpid = htonl(sdpid);
	w->src_uid = htonl(1234);
	w->seq = htonl(77);
	w->src_inc = htonl(0x5eed);
}

/* Bitwise CRC32C over @n bytes at @p, continuing register @crc. */
static uint32_t crc32c_bits(uint32_t crc, const uint8_t *p, size_t n)
{
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
	}
	return crc;
}

/*
 * The checksum of the frame of @n bytes at @p, as docs/wire.md says: CRC32C
 * over the message, then the header up to its csum.
 */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t crc = crc32c_bits(~0u, p + DP_WIRE_HDR_LEN, n - DP_WIRE_HDR_LEN);

	return ~crc32c_bits(crc, p, DP_WIRE_HDR_LEN - 4);
}

/* Store the right checksum when the frame holds its header and message. */
static void seal(uint8_t *p, size_t plen)
{
	struct dp_wire_hdr w;
	size_t n;

	if (plen < sizeof(w))
		return;
	memcpy(&w, p, sizeof(w));
	n = sizeof(w) + ntohs(w.len);
	if (n > plen)
		return;
	w.csum = htonl(crc32c(p, n));
	memcpy(p, &w, sizeof(w));
}

static int xmit(const uint8_t *src_mac, const void *payload, size_t plen)
{
	struct sockaddr_ll sll;
	struct frame f;
	size_t n = 14 + plen;

	memcpy(f.dst, dpt.maca, 6);
	memcpy(f.src, src_mac, 6);
	f.proto = htons(DP_ETH_P);
	memcpy(f.payload, payload, plen);
	if (!keep_csum)
		seal(f.payload, plen);
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = raw_ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dpt.maca, 6);
	return sendto(raw_fd, &f, n, 0, (struct sockaddr *)&sll, sizeof(sll)) == (ssize_t)n ? 0 : -1;
}

/* Header w and a one-byte message into p: the frame's length. */
static size_t one_byte(uint8_t *p, const struct dp_wire_hdr *w)
{
	memcpy(p, w, sizeof(*w));
	p[sizeof(*w)] = 0x5a;
	return sizeof(*w) + 1;
}

/*
 * Send one frame and expect counter ctr of node A to rise by one, every
 * other counter from RX_MSGS on to stay.
 */
static void expect_drop(const char *what, unsigned int ctr, const uint8_t *src_mac,
			const void *payload, size_t plen)
{
	struct dp_node_stats s0, s1;
	unsigned int i;
	int bad = 0;

	if (dpt_node_stats(dpt.nsa, &s0)) {
		ktap_ok(0, "%s: node stats", what);
		return;
	}
	if (dpt_ns(dpt.rawns) || xmit(src_mac, payload, plen)) {
		ktap_ok(0, "%s: send raw frame (%s)", what, strerror(errno));
		return;
	}
	dpt_wait_ctr(dpt.nsa, ctr, s0.ctr[ctr] + 1, DPT_WAIT_MS);
	dpt_node_stats(dpt.nsa, &s1);
	for (i = DP_CTR_RX_MSGS; i < DP_CTR_COUNT; i++) {
		uint64_t want = s0.ctr[i] + (i == ctr);

		if (i == DP_CTR_RX_BYTES && ctr == DP_CTR_RX_MSGS)
			want += rx_bytes;

		if (s1.ctr[i] != want) {
			ktap_diag("%s: %s changed by %lld (want %d)", what, dpt_ctr_name(i),
				  (long long)(s1.ctr[i] - s0.ctr[i]), i == ctr);
			bad = 1;
		}
	}
	ktap_ok(!bad, "%s: counted once in %s", what, dpt_ctr_name(ctr));
}

int main(void)
{
	static const uint8_t spoof_mac[6] = { 0x02, 0, 0, 0, 0, 0x99 };
	struct dp_wire_hdr w;
	struct dp_ep_stats st;
	struct dpt_pool pool;
	const struct dp_token *t;
	uint8_t p[256];
	int a, one = 1;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	if (a < 0 || dpt_map(a, &pool))
		ktap_bail("endpoint in A");
	if (dpt_ns(dpt.rawns))
		ktap_bail("enter the raw sender's namespace");
	raw_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	raw_ifindex = (int)if_nametoindex(dpt.rawif);
	if (raw_fd < 0 || !raw_ifindex)
		ktap_bail("AF_PACKET socket on the raw sender's interface");
	setsockopt(raw_fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one));

	/*
	 * Too short: no payload, and 20 of the 52 header bytes.  A wire with a
	 * minimum frame (Ethernet NICs pad to 60 bytes, 46 of payload) still
	 * delivers fewer than 52 bytes: these are short there too.
	 */
	expect_drop("empty payload", DP_CTR_RX_DROP_SHORT, dpt.macb, p, 0);
	hdr(&w, DP_WIRE_VERSION, 1, 0, dpt.nida, dpt.nidb, DPID_A, 5);
	expect_drop("20-byte header", DP_CTR_RX_DROP_SHORT, dpt.macb, &w, 20);
	hdr(&w, 1, 1, 0, dpt.nida, dpt.nidb, DPID_A, 5);
	expect_drop("version 1", DP_CTR_RX_DROP_VERSION, dpt.macb, &w, sizeof(w));
	hdr(&w, 2, 1, 0, dpt.nida, dpt.nidb, DPID_A, 5);	/* the CRC's old order */
	expect_drop("version 2", DP_CTR_RX_DROP_VERSION, dpt.macb, &w, sizeof(w));
	hdr(&w, 0, 1, 0, dpt.nida, dpt.nidb, DPID_A, 5);
	expect_drop("version 0", DP_CTR_RX_DROP_VERSION, dpt.macb, &w, sizeof(w));
	hdr(&w, DP_WIRE_VERSION, 6, 0, dpt.nida, dpt.nidb, DPID_A, 5);	/* 5 is ANNOUNCE */
	expect_drop("type 6", DP_CTR_RX_DROP_TYPE, dpt.macb, &w, sizeof(w));
	hdr(&w, DP_WIRE_VERSION, 1, 100, dpt.nida, dpt.nidb, DPID_A, 5);
	memcpy(p, &w, sizeof(w));
	memset(p + sizeof(w), 0xab, 10);
	expect_drop("len 100 with 10 bytes", DP_CTR_RX_DROP_LEN, dpt.macb, p, sizeof(w) + 10);
	hdr(&w, DP_WIRE_VERSION, DP_WT_ACK, 4, dpt.nida, dpt.nidb, DPID_A, 5);
	memcpy(p, &w, sizeof(w));
	memset(p + sizeof(w), 0xab, 4);
	expect_drop("ACK carrying 4 bytes", DP_CTR_RX_DROP_LEN, dpt.macb, p, sizeof(w) + 4);
	hdr(&w, DP_WIRE_VERSION, 1, 10, dpt.nida, dpt.nidb, DPID_A, 5);
	memcpy(p, &w, sizeof(w));
	memset(p + sizeof(w), 0xab, 10);
	seal(p, sizeof(w) + 10);
	p[sizeof(w) + 3] ^= 0x10;
	keep_csum = 1;
	expect_drop("one message bit flipped", DP_CTR_RX_DROP_CSUM, dpt.macb, p, sizeof(w) + 10);
	keep_csum = 0;
	/* DATA carries at least one byte: no sender makes an empty one. */
	hdr(&w, DP_WIRE_VERSION, 1, 0, dpt.nida, dpt.nidb, DPID_A, 5);
	expect_drop("DATA with len 0", DP_CTR_RX_DROP_LEN, dpt.macb, &w, sizeof(w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, 0, dpt.nidb, DPID_A, 5);
	expect_drop("dst NID 0", DP_CTR_RX_DROP_BAD_ADDR, dpt.macb, p, one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, 0, DPID_A, 5);
	expect_drop("src NID 0", DP_CTR_RX_DROP_BAD_ADDR, dpt.macb, p, one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, dpt.nidb, 0, 5);
	expect_drop("dst DPID 0", DP_CTR_RX_DROP_BAD_ADDR, dpt.macb, p, one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, dpt.nidb, DPID_A, 0);
	expect_drop("src DPID 0", DP_CTR_RX_DROP_BAD_ADDR, dpt.macb, p, one_byte(p, &w));
	/* A raw sender numbers from 1 and skips 0 when it wraps. */
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, dpt.nidb, DPID_A, 5);
	w.seq = 0;
	expect_drop("raw DATA with seq 0", DP_CTR_RX_DROP_SEQ, dpt.macb, p, one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida + 1000, dpt.nidb, DPID_A, 5);
	expect_drop("dst NID not this node", DP_CTR_RX_DROP_NOT_NODE, dpt.macb, p,
		    one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, 7777, DPID_A, 5);
	expect_drop("src NID not in the NART", DP_CTR_RX_DROP_UNKNOWN_SRC, dpt.macb, p,
		    one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, dpt.nidb, DPID_A, 5);
	expect_drop("src NID of B from another MAC", DP_CTR_RX_DROP_SPOOFED, spoof_mac, p,
		    one_byte(p, &w));
	hdr(&w, DP_WIRE_VERSION, 1, 1, dpt.nida, dpt.nidb, 999, 5);
	expect_drop("no endpoint on dst DPID", DP_CTR_RX_DROP_NO_EP, dpt.macb, p,
		    one_byte(p, &w));
	dpt_stats(a, &st);
	ktap_ok(st.rx_msgs == 0 && st.queued == 0, "nothing was delivered to the endpoint");

	/* A good forged frame, with trailing padding, is delivered. */
	hdr(&w, DP_WIRE_VERSION, 1, 100, dpt.nida, dpt.nidb, DPID_A, 4242);
	memcpy(p, &w, sizeof(w));
	dpt_random(p + sizeof(w), 120);
	rx_bytes = 100;
	expect_drop("well-formed frame (20 bytes padding)", DP_CTR_RX_MSGS, dpt.macb, p,
		    sizeof(w) + 120);
	ktap_ok(dpt_wait_readable(a, DPT_WAIT_MS) == 1, "the forged message is readable at A");
	t = dpt_head(&pool);
	ktap_ok(t && t->len == 100 && !memcmp(t + 1, p + sizeof(w), 100),
		"its 100 bytes are in A's pool (len %u)", t ? t->len : 0);
	ktap_ok(t && t->src_nid == dpt.nidb && t->src_dpid == 4242 && t->src_uid == 1234 &&
		t->seq == 77, "token carries the header's src %u/%u uid %u seq %u",
		t ? t->src_nid : 0, t ? t->src_dpid : 0, t ? t->src_uid : 0, t ? t->seq : 0);
	close(raw_fd);
	close(a);
	ktap_finish();
}
