// SPDX-License-Identifier: GPL-2.0
/* Host tests of the wire codec (module/dp_wire.c). */
#include <stddef.h>
#include <stdlib.h>
#include "unit.h"
#include "../dp_wire.h"
#include "pieces.h"

#define HDR DP_WIRE_HDR_LEN

/* Big-endian stores written out by hand, independent of the codec. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Bitwise CRC32C over @len bytes at @p, from register @crc, by hand. */
static uint32_t crc_bits(uint32_t crc, const uint8_t *p, size_t len)
{
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
	}
	return crc;
}

/* The wire's CRC32C: the message after the header, then the header up to csum. */
static uint32_t crc_ref(const uint8_t *f, size_t len)
{
	return ~crc_bits(crc_bits(~0u, f + HDR, len), f, 48);
}

/* Store the right checksum for the frame's own len field. */
static void seal_raw(uint8_t *f)
{
	put32(f + 48, crc_ref(f, (size_t)f[2] << 8 | f[3]));
}

/*
 * A well-formed header as raw bytes (offsets from docs/wire.md), sealed
 * over len message bytes that must already follow it.
 */
static void raw_hdr(uint8_t *p, uint8_t ver, uint8_t type, uint16_t len,
		    uint32_t dnid, uint32_t snid, uint32_t ddpid, uint32_t sdpid)
{
	p[0] = ver;
	p[1] = type;
	put16(p + 2, len);
	put16(p + 4, DP_WF_ACK);	/* flags */
	put16(p + 6, 0);		/* reserved */
	put32(p + 8, dnid);
	put32(p + 12, snid);
	put32(p + 16, ddpid);
	put32(p + 20, sdpid);
	put32(p + 24, 1000);	/* src_uid */
	put32(p + 28, 7);	/* seq */
	put32(p + 32, 6);	/* ack */
	put32(p + 36, 4096);	/* credit */
	put32(p + 40, 0xa1a2a3a4);	/* src_inc */
	put32(p + 44, 0xb1b2b3b4);	/* dst_inc */
	seal_raw(p);
}

static void random_msg_hdr(struct dp_msg_hdr *h, uint64_t *s)
{
	h->type = DP_WT_DATA + (u8)(unit_rand(s) % 4);
	/* a valid header: DATA carries 1..65535 bytes, control frames none, */
	h->len = h->type == DP_WT_DATA ? (u16)(unit_rand(s) % 65535 + 1) : 0;
	h->flags = (u16)unit_rand(s);
	if (h->type == DP_WT_ACK && (h->flags & DP_WF_SACK))
		h->len = DP_SACK_LEN;	/* and an ACK with the flag its map */
	h->dst_nid = (u32)unit_rand(s) | 1;
	h->src_nid = (u32)unit_rand(s) | 1;
	h->dst_dpid = (u32)unit_rand(s) | 1;
	h->src_dpid = (u32)unit_rand(s) | 1;
	h->src_uid = (u32)unit_rand(s);
	h->seq = (u32)unit_rand(s);
	if (h->type == DP_WT_DATA && (h->flags & DP_WF_RAW) && !h->seq)
		h->seq = 1;	/* raw DATA is never seq 0 */
	if (h->type == DP_WT_DATA && (h->flags & DP_WF_RAW))
		h->flags &= (u16)~DP_WF_FRAG_MASK;	/* nor a raw fragment */
	h->ack = (u32)unit_rand(s);
	h->credit = (u32)unit_rand(s);
	h->src_inc = (u32)unit_rand(s);
	h->dst_inc = (u32)unit_rand(s);
}

static void t_wire_layout(void)
{
	CHECK_EQ(sizeof(struct dp_wire_hdr), DP_WIRE_HDR_LEN);
	CHECK_EQ(DP_WIRE_HDR_LEN, 52);
	CHECK_EQ(DP_WIRE_VERSION, 3);
	CHECK_EQ(DP_ETH_P, 0x88B5);
	CHECK_EQ(offsetof(struct dp_wire_hdr, flags), 4);
	CHECK_EQ(offsetof(struct dp_wire_hdr, dst_nid), 8);
	CHECK_EQ(offsetof(struct dp_wire_hdr, seq), 28);
	CHECK_EQ(offsetof(struct dp_wire_hdr, credit), 36);
	CHECK_EQ(offsetof(struct dp_wire_hdr, dst_inc), 44);
	CHECK_EQ(offsetof(struct dp_wire_hdr, csum), 48);
}

static void t_wire_crc_vector(void)
{
	const uint8_t v[] = "123456789";

	/* The CRC32C check value (RFC 3720, B.4). */
	CHECK_EQ(~dp_crc32c(~0u, v, 9), 0xE3069283u);
	CHECK_EQ(~dp_crc32c(~0u, v, 0), 0);
	/* Updates compose: two halves give the whole. */
	CHECK_EQ(dp_crc32c(dp_crc32c(~0u, v, 4), v + 4, 5), dp_crc32c(~0u, v, 9));
	/* The table version, the reference, on its own (dp_crc32c may not be it). */
	CHECK_EQ(~dp_crc32c_table(~0u, v, 9), 0xE3069283u);
	CHECK_EQ(dp_crc32c_table(dp_crc32c_table(~0u, v, 4), v + 4, 5),
		 dp_crc32c_table(~0u, v, 9));
}

/*
 * The kernel uses the crc32 instruction when the CPU has SSE4.2: it must
 * agree with the table version on every length and alignment.
 */
static void t_wire_crc_sse42(void)
{
#ifdef __x86_64__
	static uint8_t buf[9100];
	uint32_t seed = 12345, i, len, off;

	if (!__builtin_cpu_supports("sse4.2")) {
		unit_skip = "this CPU has no SSE4.2";
		return;
	}
	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	CHECK_EQ(~dp_crc32c_sse42(~0u, (const uint8_t *)"123456789", 9), 0xE3069283u);
	for (len = 0; len <= 9000; len += len < 140 ? 1 : 997)
		for (off = 0; off < 8; off++)
			CHECK_EQ(dp_crc32c_sse42(~0u, buf + off, len),
				 dp_crc32c_table(~0u, buf + off, len));
#else
	unit_skip = "not x86-64";
#endif
}

/*
 * dp_memcpy_words(), the kernel's copy where it beats memcpy() (under
 * QEMU's TCG): every length up to past two rounds, and jumbo ones, at
 * every alignment of either end, copies exactly the bytes asked for and
 * touches none beside them.
 */
static void t_wire_memcpy_words(void)
{
	static uint8_t src[9100], dst[9200], want[9200];
	uint32_t seed = 777, i, len, so, dof;

	for (i = 0; i < sizeof(src); i++) {
		seed = seed * 1103515245u + 12345u;
		src[i] = (uint8_t)(seed >> 16);
	}
	for (len = 0; len <= 9000; len += len < 80 ? 1 : 997)
		for (so = 0; so < 8; so++)
			for (dof = 8; dof < 16; dof++) {
				memset(dst, 0xa5, sizeof(dst));
				memcpy(want, dst, sizeof(dst));
				memcpy(want + dof, src + so, len);
				dp_memcpy_words(dst + dof, src + so, len);
				CHECK(!memcmp(dst, want, sizeof(dst)),
				      "len %u src +%u dst +%u", len, so, dof);
			}
}

static void t_wire_encode_bytes(void)
{
	struct dp_msg_hdr h = {
		.type = DP_WT_DATA, .len = 0x1234, .flags = 0x0102,
		.dst_nid = 0x01020304, .src_nid = 0x05060708,
		.dst_dpid = 0x090a0b0c, .src_dpid = 0x0d0e0f10,
		.src_uid = 0x11121314, .seq = 0x15161718, .ack = 0x191a1b1c,
		.credit = 0x1d1e1f20, .src_inc = 0x21222324,
		.dst_inc = 0x25262728,
	};
	static const uint8_t want[HDR] = {
		DP_WIRE_VERSION, 1, 0x12, 0x34, 0x01, 0x02, 0, 0,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
		0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20,
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
		0, 0, 0, 0,
	};
	static uint8_t msg[0x1234];
	uint8_t f[HDR];
	struct dp_wire_hdr w;
	unsigned int i;

	memset(&w, 0xee, sizeof(w));
	dp_wire_encode(&w, &h);
	for (i = 0; i < HDR; i++)
		CHECK(((uint8_t *)&w)[i] == want[i], "byte %u is 0x%02x, want 0x%02x",
		      i, ((uint8_t *)&w)[i], want[i]);
	/* The seal is the hand-computed CRC, big-endian at offset 48. */
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	dp_wire_seal(&w, msg, sizeof(msg));
	memcpy(f, &w, HDR);
	{
		static uint8_t whole[HDR + sizeof(msg)];

		memcpy(whole, f, HDR);
		memcpy(whole + HDR, msg, sizeof(msg));
		CHECK_EQ((uint32_t)f[48] << 24 | (uint32_t)f[49] << 16 |
			 (uint32_t)f[50] << 8 | f[51], crc_ref(whole, sizeof(msg)));
	}
}

static void t_wire_roundtrip(void)
{
	uint64_t s = 0x1234567;
	static const u16 edge_lens[] = { 1, 2, 1500, 65535 };
	static uint8_t frame[HDR + 65535 + 64];
	int i;

	for (i = 0; i < 2000; i++) {
		struct dp_msg_hdr h, o;
		struct dp_wire_hdr w;
		size_t flen, k;
		int r;

		random_msg_hdr(&h, &s);
		if (i < 4) {
			h.type = DP_WT_DATA;
			h.len = edge_lens[i];
			h.flags &= (u16)~DP_WF_FRAG_MASK;
		}
		for (k = 0; k < h.len; k++)
			frame[HDR + k] = (uint8_t)unit_rand(&s);
		dp_wire_encode(&w, &h);
		dp_wire_seal(&w, frame + HDR, h.len);
		memcpy(frame, &w, HDR);
		flen = HDR + h.len + (unit_rand(&s) % 3 ? 0 : unit_rand(&s) % 64);
		memset(&o, 0, sizeof(o));
		r = dp_wire_decode(frame, flen, &o);
		CHECK_EQ(r, 0);
		if (r)
			return;
		CHECK_EQ(o.type, h.type);
		CHECK_EQ(o.len, h.len);
		CHECK_EQ(o.flags, h.flags);
		CHECK_EQ(o.dst_nid, h.dst_nid);
		CHECK_EQ(o.src_nid, h.src_nid);
		CHECK_EQ(o.dst_dpid, h.dst_dpid);
		CHECK_EQ(o.src_dpid, h.src_dpid);
		CHECK_EQ(o.src_uid, h.src_uid);
		CHECK_EQ(o.seq, h.seq);
		CHECK_EQ(o.ack, h.ack);
		CHECK_EQ(o.credit, h.credit);
		CHECK_EQ(o.src_inc, h.src_inc);
		CHECK_EQ(o.dst_inc, h.dst_inc);
		if (unit_failed)
			return;
	}
}

static void t_wire_decode_raw(void)
{
	uint8_t f[HDR + 4] = { 0 };
	struct dp_msg_hdr o;

	memcpy(f + HDR, "abcd", 4);
	raw_hdr(f, DP_WIRE_VERSION, 1, 4, 11, 12, 200, 300);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.type, DP_WT_DATA);
	CHECK_EQ(o.len, 4);
	CHECK_EQ(o.flags, DP_WF_ACK);
	CHECK_EQ(o.dst_nid, 11);
	CHECK_EQ(o.src_nid, 12);
	CHECK_EQ(o.dst_dpid, 200);
	CHECK_EQ(o.src_dpid, 300);
	CHECK_EQ(o.src_uid, 1000);
	CHECK_EQ(o.seq, 7);
	CHECK_EQ(o.ack, 6);
	CHECK_EQ(o.credit, 4096);
	CHECK_EQ(o.src_inc, 0xa1a2a3a4);
	CHECK_EQ(o.dst_inc, 0xb1b2b3b4);
	/* The reserved bytes are ignored (but covered by the CRC). */
	put16(f + 6, 0xffff);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
}

static void t_wire_drop_short(void)
{
	uint8_t f[HDR + 8];
	struct dp_msg_hdr o;
	size_t n;

	raw_hdr(f, DP_WIRE_VERSION, DP_WT_ACK, 0, 1, 2, 3, 4);
	for (n = 0; n < HDR; n++)
		CHECK(dp_wire_decode(f, n, &o) == DP_CTR_RX_DROP_SHORT, "len %zu", n);
	CHECK_EQ(dp_wire_decode(f, HDR, &o), 0);
}

static void t_wire_drop_version(void)
{
	static const uint8_t bad[] = { 0, 1, 2, 4, 0x7f, 0x80, 0xff };
	uint8_t f[HDR];
	struct dp_msg_hdr o;
	unsigned int i;

	for (i = 0; i < sizeof(bad); i++) {
		raw_hdr(f, bad[i], 1, 0, 1, 2, 3, 4);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_VERSION,
		      "version %u", bad[i]);
	}
}

static void t_wire_drop_type(void)
{
	static const uint8_t bad[] = { 0, 6, 7, 0x80, 0xff };
	uint8_t f[HDR + 1] = { 0 };
	struct dp_msg_hdr o;
	unsigned int i;

	for (i = 0; i < sizeof(bad); i++) {
		raw_hdr(f, DP_WIRE_VERSION, bad[i], 0, 1, 2, 3, 4);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_TYPE,
		      "type %u", bad[i]);
	}
	for (i = DP_WT_DATA; i <= DP_WT_RESET; i++) {
		/* DATA with one message byte, which then lies in the frame */
		raw_hdr(f, DP_WIRE_VERSION, (uint8_t)i, i == DP_WT_DATA, 1, 2, 3, 4);
		CHECK(dp_wire_decode(f, sizeof(f) - (i != DP_WT_DATA), &o) == 0, "type %u", i);
		CHECK_EQ(o.type, i);
	}
}

static void t_wire_drop_len(void)
{
	static uint8_t f[HDR + 100];
	struct dp_msg_hdr o;
	unsigned int len, t;

	/* Frame carries 100 message bytes: len 1..100 fine, 0 and above are bad. */
	raw_hdr(f, DP_WIRE_VERSION, 1, 0, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	for (len = 1; len <= 100; len++) {
		raw_hdr(f, DP_WIRE_VERSION, 1, (uint16_t)len, 1, 2, 3, 4);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == 0, "len %u", len);
	}
	for (len = 101; len <= 65535; len += (len < 200 ? 1 : 997)) {
		put16(f + 2, (uint16_t)len);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_LEN, "len %u", len);
	}
	put16(f + 2, 65535);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	/* Header only, one byte claimed; DATA claiming none. */
	raw_hdr(f, DP_WIRE_VERSION, 1, 0, 1, 2, 3, 4);
	put16(f + 2, 1);
	CHECK_EQ(dp_wire_decode(f, HDR, &o), DP_CTR_RX_DROP_LEN);
	raw_hdr(f, DP_WIRE_VERSION, 1, 0, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, HDR, &o), DP_CTR_RX_DROP_LEN);
	put16(f + 4, DP_WF_RAW);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, HDR, &o), DP_CTR_RX_DROP_LEN);
	/* Control frames carry no message. */
	for (t = DP_WT_ACK; t <= DP_WT_RESET; t++) {
		raw_hdr(f, DP_WIRE_VERSION, (uint8_t)t, 1, 1, 2, 3, 4);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_LEN, "type %u", t);
	}
	/* ... but an ACK with DP_WF_SACK its map, of exactly DP_SACK_LEN. */
	raw_hdr(f, DP_WIRE_VERSION, DP_WT_ACK, DP_SACK_LEN, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	put16(f + 4, DP_WF_ACK | DP_WF_SACK);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.len, DP_SACK_LEN);
	put16(f + 2, 8);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	for (t = DP_WT_HELLO; t <= DP_WT_RESET; t++) {
		raw_hdr(f, DP_WIRE_VERSION, (uint8_t)t, DP_SACK_LEN, 1, 2, 3, 4);
		put16(f + 4, DP_WF_SACK);
		seal_raw(f);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_LEN, "type %u", t);
	}
}

static void t_wire_drop_csum(void)
{
	static uint8_t f[HDR + 200];
	struct dp_msg_hdr o;
	unsigned int bit;
	int r;

	for (bit = 0; bit < 200; bit++)
		f[HDR + bit] = (uint8_t)(bit * 13);
	raw_hdr(f, DP_WIRE_VERSION, 1, 200, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	/*
	 * Every single flipped bit is caught: by the CRC, or first by an
	 * earlier check when it hits version, type or len.
	 */
	for (bit = 0; bit < sizeof(f) * 8; bit++) {
		f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		r = dp_wire_decode(f, sizeof(f), &o);
		if (bit < 8)
			CHECK(r == DP_CTR_RX_DROP_VERSION, "bit %u: %d", bit, r);
		else if (bit < 16)
			CHECK(r == DP_CTR_RX_DROP_TYPE || r == DP_CTR_RX_DROP_LEN ||
			      r == DP_CTR_RX_DROP_CSUM, "bit %u: %d", bit, r);
		else if (bit < 32)
			CHECK(r == DP_CTR_RX_DROP_LEN || r == DP_CTR_RX_DROP_CSUM,
			      "bit %u: %d", bit, r);
		else
			CHECK(r == DP_CTR_RX_DROP_CSUM, "bit %u: %d", bit, r);
		f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* Flipped back: the frame is good again. */
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
}

/*
 * A frame whose message is in pieces (an skb's fragments, read through
 * dp_wire_decode_parts()) decodes as the same frame contiguous does,
 * wherever it is cut; every flipped message bit is still caught, in any
 * piece; and a copy out of the pieces gives the message's bytes.
 */
static void t_wire_decode_pieces(void)
{
	static uint8_t f[HDR + 3000];
	static uint8_t back[3000];
	uint64_t s = 0x9e3779b9;
	u32 cut, len, bit, k;

	for (cut = 0; cut < 300; cut++) {
		struct dp_msg_hdr o, p;
		struct dp_payload pl;
		struct pieces pc;
		int r, want;

		len = cut < 8 ? cut + 1 : 1 + unit_rand(&s) % 3000;
		for (k = 0; k < len; k++)
			f[HDR + k] = (uint8_t)unit_rand(&s);
		raw_hdr(f, DP_WIRE_VERSION, 1, (uint16_t)len, 1, 2, 3, 4);
		memset(&o, 0, sizeof(o));	/* padding compared too */
		want = dp_wire_decode(f, HDR + len, &o);
		CHECK_EQ(want, 0);
		pieces_make(&pc, f, HDR, f + HDR, len, 1 + cut % PIECES_MAX,
			    (u32)unit_rand(&s));
		pl = pieces_payload(&pc);
		memset(&p, 0, sizeof(p));
		r = dp_wire_decode_parts(f, HDR + len, &pl, &p);
		CHECK_EQ(r, 0);
		CHECK(!memcmp(&o, &p, sizeof(o)), "cut %u: headers differ", cut);
		dp_payload_copy(&pl, 0, back, len);
		CHECK(!memcmp(back, f + HDR, len), "cut %u: bytes differ", cut);
		if (len > 1) {
			dp_payload_copy(&pl, len / 2, back, len - len / 2);
			CHECK(!memcmp(back, f + HDR + len / 2, len - len / 2),
			      "cut %u: copy from the middle differs", cut);
		}
		bit = (u32)(unit_rand(&s) % (len * 8));
		pieces_free(&pc);
		f[HDR + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		pieces_make(&pc, f, HDR, f + HDR, len, 1 + cut % PIECES_MAX,
			    (u32)unit_rand(&s));
		pl = pieces_payload(&pc);
		r = dp_wire_decode_parts(f, HDR + len, &pl, &p);
		CHECK(r == DP_CTR_RX_DROP_CSUM, "cut %u bit %u: %d", cut, bit, r);
		pieces_free(&pc);
		f[HDR + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (unit_failed)
			return;
	}
	/* Too short for a header: dropped before anything is read. */
	CHECK_EQ(dp_wire_decode_parts(NULL, HDR - 1, NULL, &(struct dp_msg_hdr){ 0 }),
		 DP_CTR_RX_DROP_SHORT);
}

static void t_wire_drop_bad_addr(void)
{
	uint8_t f[HDR + 1] = { 0 };
	struct dp_msg_hdr o;
	int which;

	for (which = 0; which < 4; which++) {
		uint32_t v[4] = { 11, 12, 200, 300 };

		v[which] = 0;
		raw_hdr(f, DP_WIRE_VERSION, 1, 1, v[0], v[1], v[2], v[3]);
		CHECK(dp_wire_decode(f, sizeof(f), &o) == DP_CTR_RX_DROP_BAD_ADDR,
		      "zero field %d", which);
	}
	/*
	 * uid 0 (root), seq 0 of a reliable session (its numbers start at
	 * random and wrap), incarnations 0 and any ack are not addresses.
	 */
	raw_hdr(f, DP_WIRE_VERSION, 1, 1, 11, 12, 200, 300);
	put32(f + 24, 0);
	put32(f + 28, 0);
	put32(f + 32, 0xffffffff);
	put32(f + 40, 0);
	put32(f + 44, 0);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.src_uid, 0);
	CHECK_EQ(o.ack, 0xffffffff);
	CHECK_EQ(o.dst_inc, 0);
}

/*
 * Raw DATA with seq 0: no raw sender makes one (dp_tx.c skips 0), so it is
 * a forgery, dropped as a sequence error after the address checks.
 */
static void t_wire_drop_raw_seq0(void)
{
	uint8_t f[HDR + 1] = { 0 };
	struct dp_msg_hdr o;
	unsigned int t;

	raw_hdr(f, DP_WIRE_VERSION, 1, 1, 11, 12, 200, 300);
	put16(f + 4, DP_WF_RAW);
	put32(f + 28, 0);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_SEQ);
	put32(f + 8, 0);	/* a zero address is the earlier reason */
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
	put32(f + 8, 11);
	put32(f + 28, 1);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.seq, 1);
	put32(f + 28, 0xffffffff);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	/* Control frames with the RAW bit and seq 0 are not raw DATA. */
	for (t = DP_WT_ACK; t <= DP_WT_RESET; t++) {
		raw_hdr(f, DP_WIRE_VERSION, (uint8_t)t, 0, 11, 12, 200, 300);
		put16(f + 4, DP_WF_RAW | DP_WF_ACK);
		put32(f + 28, 0);
		seal_raw(f);
		CHECK(dp_wire_decode(f, HDR, &o) == 0, "type %u", t);
	}
}

/*
 * Fragments of a large message: raw DATA is never fragmented, so raw DATA
 * with any DP_WF_FRAG_* bits is dropped as a type no receiver takes, after
 * every earlier check; reliable DATA keeps them for its session to check
 * (dp_frag_parse()); control frames ignore those bits as before.
 */
static void t_wire_drop_frag(void)
{
	static const u16 bits[] = { DP_WF_FRAG_FIRST, DP_WF_FRAG_MID, DP_WF_FRAG_LAST };
	uint8_t f[HDR + 8] = { 0 };
	struct dp_msg_hdr o;
	unsigned int i, t;

	CHECK_EQ(DP_WF_FRAG_MASK & DP_WF_MASK, 0);
	CHECK_EQ(DP_WF_FRAG_LAST, DP_WF_FRAG_FIRST | DP_WF_FRAG_MID);
	for (i = 0; i < 3; i++) {
		raw_hdr(f, DP_WIRE_VERSION, DP_WT_DATA, 8, 11, 12, 200, 300);
		put16(f + 4, bits[i] | DP_WF_RAW);
		put32(f + 28, 5);	/* raw DATA is never seq 0 */
		seal_raw(f);
		CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_TYPE);
		put32(f + 8, 0);	/* a zero address is the earlier reason */
		seal_raw(f);
		CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
		put32(f + 8, 11);
		f[HDR] ^= 1;		/* and a bad checksum */
		CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_CSUM);
		/* Reliable, the same DATA is a fragment, its bits kept. */
		raw_hdr(f, DP_WIRE_VERSION, DP_WT_DATA, 8, 11, 12, 200, 300);
		put16(f + 4, bits[i] | DP_WF_ACK);
		seal_raw(f);
		CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
		CHECK_EQ(o.flags & DP_WF_FRAG_MASK, bits[i]);
	}
	/* The same raw DATA without them is a message. */
	raw_hdr(f, DP_WIRE_VERSION, DP_WT_DATA, 8, 11, 12, 200, 300);
	put16(f + 4, DP_WF_RAW | 0x7e00);
	put32(f + 28, 5);
	seal_raw(f);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	for (t = DP_WT_ACK; t <= DP_WT_RESET; t++) {
		raw_hdr(f, DP_WIRE_VERSION, (uint8_t)t, 0, 11, 12, 200, 300);
		put16(f + 4, DP_WF_FRAG_MASK | DP_WF_ACK);
		seal_raw(f);
		CHECK(dp_wire_decode(f, HDR, &o) == 0, "type %u", t);
	}
}

static void t_wire_padding(void)
{
	/* A 1-byte message padded to a 60-byte frame: 14 Ethernet + 46. */
	uint8_t f[HDR + 20];
	struct dp_msg_hdr o;

	memset(f, 0xa5, sizeof(f));
	raw_hdr(f, DP_WIRE_VERSION, 1, 1, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.len, 1);
	/* Padding is no message: an empty DATA stays empty, and is refused. */
	raw_hdr(f, DP_WIRE_VERSION, 1, 0, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	raw_hdr(f, DP_WIRE_VERSION, DP_WT_ACK, 0, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	CHECK_EQ(o.len, 0);
	raw_hdr(f, DP_WIRE_VERSION, 1, 20, 1, 2, 3, 4);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	put16(f + 2, 21);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
}

/*
 * A bundle as docs/wire.md draws it, built by hand: three DATA frames of
 * 5, 1 and 30 bytes back to back (seq 100, 101, 102), the first with
 * DP_WF_BUNDLE, then @pad bytes of link padding.  Returns its length.
 */
static size_t bundle_make(uint8_t *f, size_t pad)
{
	static const uint16_t lens[3] = { 5, 1, 30 };
	size_t off = 0;
	int i, k;

	for (i = 0; i < 3; i++) {
		uint8_t *p = f + off;

		for (k = 0; k < lens[i]; k++)
			p[HDR + k] = (uint8_t)(i * 16 + k);
		raw_hdr(p, DP_WIRE_VERSION, DP_WT_DATA, lens[i], 1, 2, 3, 4);
		put32(p + 28, 100 + (uint32_t)i);
		if (!i)
			put16(p + 4, DP_WF_ACK | DP_WF_BUNDLE);
		seal_raw(p);
		off += HDR + lens[i];
	}
	memset(f + off, 0, pad);
	return off + pad;
}

/*
 * The frames of bundle @msg (the first one's message, @len the link
 * frame's bytes) after the first: 0 if they are seq 101 and 102 with
 * their bytes, then the end; else the step that failed.
 */
static int bundle_walk(const struct dp_payload *msg, size_t len)
{
	struct dp_payload inner;
	struct dp_msg_hdr h;
	uint8_t b[30];
	u32 off = 5;
	int i, k;

	for (i = 1; i < 3; i++) {
		if (dp_wire_decode_next(msg, len, &off, &h, &inner))
			return 10 * i;
		if (h.seq != 100u + (u32)i || h.len != (i == 1 ? 1 : 30) ||
		    (h.flags & DP_WF_BUNDLE))
			return 10 * i + 1;
		dp_payload_copy(&inner, 0, b, h.len);
		for (k = 0; k < h.len; k++)
			if (b[k] != (uint8_t)(i * 16 + k))
				return 10 * i + 2;
	}
	return dp_wire_decode_next(msg, len, &off, &h, &inner) == -1 ? 0 : 30;
}

static void t_wire_bundle(void)
{
	uint8_t f[3 * HDR + 36 + HDR];
	struct dp_payload msg;
	struct dp_msg_hdr h, o;
	struct dp_payload inner;
	struct pieces pc;
	size_t len, pad;
	u32 off, n, seed;

	/* padding up to a header's length less one: the bundle ends there */
	for (pad = 0; pad < HDR; pad += 17) {
		len = bundle_make(f, pad);
		CHECK_EQ(dp_wire_decode(f, len, &h), 0);
		CHECK(h.flags & DP_WF_BUNDLE, "flags %#x", h.flags);
		CHECK_EQ(h.seq, 100);
		msg = dp_payload_flat(f + HDR);
		CHECK_EQ(bundle_walk(&msg, len), 0);
		/* and the same link frame in an skb's pieces */
		for (n = 1; n <= PIECES_MAX; n++)
			for (seed = 1; seed < 40; seed++) {
				pieces_make(&pc, f, HDR, f + HDR, (u32)(len - HDR),
					    n, seed);
				msg = pieces_payload(&pc);
				CHECK_EQ(bundle_walk(&msg, len), 0);
				pieces_free(&pc);
			}
	}
	/* a bit flipped in the second frame: dropped, and nothing after it */
	len = bundle_make(f, 0);
	f[HDR + 5 + 30] ^= 0x04;	/* its seq */
	msg = dp_payload_flat(f + HDR);
	off = 5;
	CHECK_EQ(dp_wire_decode_next(&msg, len, &off, &o, &inner),
		 DP_CTR_RX_DROP_CSUM);
	CHECK_EQ(off, 5);
	/* a last frame cut short by the link frame's end */
	len = bundle_make(f, 0);
	msg = dp_payload_flat(f + HDR);
	off = 5;
	CHECK_EQ(dp_wire_decode_next(&msg, len - 1, &off, &o, &inner), 0);
	CHECK_EQ(dp_wire_decode_next(&msg, len - 1, &off, &o, &inner),
		 DP_CTR_RX_DROP_LEN);
}

static void t_wire_unaligned(void)
{
	/* Exact-size heap copies at every misalignment: ASan catches overreads,
	 * UBSan misaligned loads. */
	int off;

	for (off = 0; off < 8; off++) {
		uint8_t *base = malloc(HDR + 3 + 8);
		uint8_t *f = base + off;
		struct dp_msg_hdr o;

		memcpy(f + HDR, "xyz", 3);
		raw_hdr(f, DP_WIRE_VERSION, 1, 3, 0x0a0b0c0d, 2, 0x01000000, 4);
		CHECK(dp_wire_decode(f, HDR + 3, &o) == 0, "offset %d", off);
		CHECK_EQ(o.dst_nid, 0x0a0b0c0d);
		CHECK_EQ(o.dst_dpid, 0x01000000);
		CHECK_EQ(o.len, 3);
		free(base);
	}
}

static void t_wire_exact_frame_heap(void)
{
	/* Short frames on the heap with no slack: decode must not read past. */
	size_t n;

	for (n = 0; n <= HDR + 2; n++) {
		uint8_t *f = malloc(n ? n : 1);
		struct dp_msg_hdr o;
		uint8_t full[HDR + 2] = { 0 };
		int r;

		raw_hdr(full, DP_WIRE_VERSION, 1, 2, 1, 2, 3, 4);
		memcpy(f, full, n);
		r = dp_wire_decode(f, n, &o);
		if (n < HDR)
			CHECK(r == DP_CTR_RX_DROP_SHORT, "n %zu r %d", n, r);
		else if (n < HDR + 2)
			CHECK(r == DP_CTR_RX_DROP_LEN, "n %zu r %d", n, r);
		else
			CHECK(r == 0, "n %zu r %d", n, r);
		free(f);
	}
}

/* An ANNOUNCE with hold @hold (ms) and @extra message bytes after it. */
static void announce_frame(uint8_t *f, uint32_t dnid, uint32_t snid,
			   uint32_t ddpid, uint32_t sdpid, uint16_t len,
			   uint32_t hold)
{
	memset(f + HDR, 0, len);
	if (len >= 4)
		put32(f + HDR, hold);
	raw_hdr(f, DP_WIRE_VERSION, DP_WT_ANNOUNCE, len, dnid, snid, ddpid, sdpid);
}

static void t_wire_announce(void)
{
	static uint8_t f[HDR + 16];
	struct dp_wire_announce a;
	struct dp_msg_hdr o;

	CHECK_EQ(sizeof(a), DP_WIRE_ANNOUNCE_LEN);
	announce_frame(f, 0, 7, 0, 0, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, HDR + 8, &o), 0);
	CHECK_EQ(o.type, DP_WT_ANNOUNCE);
	CHECK_EQ(o.src_nid, 7);
	CHECK_EQ(o.len, 8);
	CHECK_EQ(dp_wire_announce_hold(f + HDR), 4000);
	/* a later version's longer message, and link padding, are fine */
	announce_frame(f, 0, 7, 0, 0, 12, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), 0);
	/* too short a message */
	announce_frame(f, 0, 7, 0, 0, 7, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	announce_frame(f, 0, 7, 0, 0, 0, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_LEN);
	/* len beyond the frame */
	announce_frame(f, 0, 7, 0, 0, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, HDR + 7, &o), DP_CTR_RX_DROP_LEN);
	/* to no node, from no endpoint, from some node */
	announce_frame(f, 3, 7, 0, 0, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
	announce_frame(f, 0, 7, 5, 0, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
	announce_frame(f, 0, 7, 0, 5, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
	announce_frame(f, 0, 0, 0, 0, 8, 4000);
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_BAD_ADDR);
	/* the checksum covers the message */
	announce_frame(f, 0, 7, 0, 0, 8, 4000);
	f[HDR + 3] ^= 1;
	CHECK_EQ(dp_wire_decode(f, sizeof(f), &o), DP_CTR_RX_DROP_CSUM);
	/* the hold asked for is kept within bounds */
	put32(f + HDR, 0);
	CHECK_EQ(dp_wire_announce_hold(f + HDR), DP_DISC_HOLD_MIN_MS);
	put32(f + HDR, 0xffffffff);
	CHECK_EQ(dp_wire_announce_hold(f + HDR), DP_DISC_HOLD_MAX_MS);
	/* what the sender encodes, the receiver reads */
	dp_wire_announce_encode(&a, 1234);
	CHECK_EQ(dp_wire_announce_hold(&a), 1234);
	CHECK_EQ(a.reserved, 0);
}

/*
 * A header from a session's template: the template's session fields with
 * the frame's own len, flags, seq, ack and credit encode to exactly what
 * encoding the whole header gives, whatever the template carried in the
 * per-frame fields.
 */
static void t_wire_encode_from(void)
{
	struct dp_msg_hdr h, t;
	struct dp_wire_hdr a, b, tw;
	uint64_t s = 0x7e3a1;
	int i, bad = 0;

	for (i = 0; i < 2000; i++) {
		random_msg_hdr(&h, &s);
		random_msg_hdr(&t, &s);
		t.type = h.type;		/* the session's fields */
		t.dst_nid = h.dst_nid;
		t.src_nid = h.src_nid;
		t.dst_dpid = h.dst_dpid;
		t.src_dpid = h.src_dpid;
		t.src_uid = h.src_uid;
		t.src_inc = h.src_inc;
		t.dst_inc = h.dst_inc;
		dp_wire_encode(&tw, &t);
		dp_wire_encode_from(&a, &tw, &h);
		dp_wire_encode(&b, &h);
		bad += memcmp(&a, &b, sizeof(a)) != 0;
	}
	CHECK_EQ(bad, 0);
}

/*
 * A sender runs the CRC over a message once, as it copies it, and seals
 * each transmission's header from that state (dp_wire_seal_crc()): the
 * same checksum as over the whole frame, for any header and length.  A
 * message that changed after its state was taken (its kept copy written
 * over before a resend) fails the receiver's check.
 */
static void t_wire_seal_from_state(void)
{
	static uint8_t frame[HDR + 9000];
	uint64_t s = 0xc3c3;
	unsigned int i, bad = 0, missed = 0;

	for (i = 0; i < 300; i++) {
		struct dp_msg_hdr h, o;
		struct dp_wire_hdr w;
		u32 state, k;

		random_msg_hdr(&h, &s);
		h.type = DP_WT_DATA;
		h.flags &= (u16)~(DP_WF_FRAG_MASK | DP_WF_RAW);
		h.len = (u16)(1 + unit_rand(&s) % 9000);
		for (k = 0; k < h.len; k++)
			frame[HDR + k] = (uint8_t)unit_rand(&s);
		state = dp_wire_msg_crc(frame + HDR, h.len);
		dp_wire_encode(&w, &h);
		dp_wire_seal_crc(&w, state);
		memcpy(frame, &w, HDR);
		bad += be32toh(w.csum) != crc_ref(frame, h.len);
		bad += dp_wire_decode(frame, HDR + h.len, &o) != 0;
		/* one byte of the message changed after its state was taken */
		frame[HDR + unit_rand(&s) % h.len] ^= (uint8_t)(1 + unit_rand(&s) % 255);
		missed += dp_wire_decode(frame, HDR + h.len, &o) != DP_CTR_RX_DROP_CSUM;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(missed, 0);
}

const struct unit_test wire_tests[] = {
	{ "wire: v3 header is 52 bytes at the documented offsets", t_wire_layout },
	{ "wire: CRC32C check value and composition", t_wire_crc_vector },
	{ "wire: CRC32C with SSE4.2's crc32 agrees with the table", t_wire_crc_sse42 },
	{ "wire: dp_memcpy_words() copies any length and alignment, nothing beside",
	  t_wire_memcpy_words },
	{ "wire: encode produces the documented big-endian bytes and CRC", t_wire_encode_bytes },
	{ "wire: encode/decode round-trip of 2000 random headers", t_wire_roundtrip },
	{ "wire: sealed from the message's CRC state: the frame's checksum; a change caught",
	  t_wire_seal_from_state },
	{ "wire: a template's header with a frame's fields is its encoding",
	  t_wire_encode_from },
	{ "wire: decode of a hand-built frame", t_wire_decode_raw },
	{ "wire: drop short (0..51 bytes)", t_wire_drop_short },
	{ "wire: drop version (v1 and v2 included)", t_wire_drop_version },
	{ "wire: drop type", t_wire_drop_type },
	{ "wire: drop len beyond frame, len on a control frame, DATA len 0", t_wire_drop_len },
	{ "wire: every single-bit flip is caught", t_wire_drop_csum },
	{ "wire: a message in pieces decodes as contiguous, bit flips caught",
	  t_wire_decode_pieces },
	{ "wire: drop zero NID/DPID", t_wire_drop_bad_addr },
	{ "wire: drop raw DATA with seq 0", t_wire_drop_raw_seq0 },
	{ "wire: fragment flags kept on DATA, dropped on raw DATA", t_wire_drop_frag },
	{ "wire: trailing padding accepted", t_wire_padding },
	{ "wire: a bundle's frames one by one, flat and in pieces; a bad one ends it",
	  t_wire_bundle },
	{ "wire: unaligned buffers", t_wire_unaligned },
	{ "wire: exact-size frames never over-read", t_wire_exact_frame_heap },
	{ "wire: ANNOUNCE: to no node, from no endpoint, 8 bytes or more", t_wire_announce },
	{ NULL, NULL },
};
