// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the receive-path arithmetic: dp_wire_decode() on an
 * arbitrary frame (and dp_wire_decode_parts() on the same frame in pieces,
 * as the netdev backend reads an skb: the same result), then token buffer
 * pool operations driven by the input, every step checked against an oracle (the header rules for the decoder,
 * ring_model.h for the pool).
 *
 * Input: u16 (little endian): low 15 bits the frame length L, the top bit
 * "seal": store a correct CRC32C in the frame before decoding it (when its
 * len field fits), so mutated frames also reach the checks after the
 * checksum; then L frame bytes, then one byte choosing the pool size
 * (128 B << (b % 8)), then ops: a byte with the top bit set releases
 * (b & 0x7f) messages (0x7f: all); otherwise the byte and the next one
 * give a message length.  A successfully decoded frame's
 * message is queued first, so parser output flows into the pool.
 *
 * Built two ways: with -fsanitize=fuzzer (abort on a broken invariant), and
 * with -DDP_FUZZ_REPLAY into the unit tests, which replay the seed corpus
 * and random inputs (a broken invariant then fails that test).
 */
#include <stdio.h>
#include <stdlib.h>
#include "../dp_wire.h"
#include "../dp_ring.h"
#include "ring_model.h"
#include "wire_rules.h"
#include "pieces.h"

#ifdef DP_FUZZ_REPLAY
extern int unit_failed;
#define FAIL(...)							\
	do {								\
		printf("#   fuzz_wire: ");				\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		unit_failed++;						\
		goto out;						\
	} while (0)
#else
#define FAIL(...)							\
	do {								\
		fprintf(stderr, "fuzz_wire: " __VA_ARGS__);		\
		fprintf(stderr, "\n");					\
		abort();						\
	} while (0)
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Bitwise CRC32C, independent of the codec's table or the kernel's: over
 * the message, then the header's first 48 bytes (all but csum).
 */
static uint32_t crc32c_ref(const uint8_t *hdr, const uint8_t *msg, size_t len)
{
	uint32_t crc = ~0u;
	size_t i;
	int k;

	for (i = 0; i < len + 48; i++) {
		crc ^= i < len ? msg[i] : hdr[i - len];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
	}
	return ~crc;
}

static size_t msg_len(const uint8_t *f)
{
	return (size_t)f[2] << 8 | f[3];
}

/* What the decoder must say about this frame, from the documented rules. */
static int expected_reason(const uint8_t *f, size_t n)
{
	size_t len;

	if (n < DP_WIRE_HDR_LEN)
		return DP_CTR_RX_DROP_SHORT;
	if (f[0] != DP_WIRE_VERSION)
		return DP_CTR_RX_DROP_VERSION;
	if (f[1] < DP_WT_DATA || f[1] > DP_WT_ANNOUNCE)
		return DP_CTR_RX_DROP_TYPE;
	len = msg_len(f);
	if (len > n - DP_WIRE_HDR_LEN || !len_ok(f, len))
		return DP_CTR_RX_DROP_LEN;
	if (be32(f + 48) != crc32c_ref(f, f + DP_WIRE_HDR_LEN, len))
		return DP_CTR_RX_DROP_CSUM;
	if (!addr_ok(f))
		return DP_CTR_RX_DROP_BAD_ADDR;
	if (f[1] == DP_WT_DATA && (f[5] & DP_WF_RAW) && !be32(f + 28))
		return DP_CTR_RX_DROP_SEQ;
	if (frag_unexpected(f))
		return DP_CTR_RX_DROP_TYPE;
	return 0;
}

/* Store the right checksum if the frame's len field fits the frame. */
static void seal(uint8_t *f, size_t n)
{
	uint32_t c;

	if (n < DP_WIRE_HDR_LEN || msg_len(f) > n - DP_WIRE_HDR_LEN)
		return;
	c = crc32c_ref(f, f + DP_WIRE_HDR_LEN, msg_len(f));
	f[48] = (uint8_t)(c >> 24);
	f[49] = (uint8_t)(c >> 16);
	f[50] = (uint8_t)(c >> 8);
	f[51] = (uint8_t)c;
}

/*
 * The frames after the first of a bundle (DP_WF_BUNDLE, its message
 * @len1 bytes): each decodes as the rules say a frame alone at its
 * offset would, until one is dropped or fewer than a header's bytes are
 * left.  Returns 0 if so.
 */
static int walk_bundle(const uint8_t *frame, size_t flen, u32 len1)
{
	const struct dp_payload msg = dp_payload_flat(frame + DP_WIRE_HDR_LEN);
	struct dp_payload inner;
	struct dp_msg_hdr h;
	u32 off = len1;
	size_t left;
	int got, want;

	do {
		left = flen - DP_WIRE_HDR_LEN - off;
		want = left < DP_WIRE_HDR_LEN ? -1 :
		       expected_reason(frame + DP_WIRE_HDR_LEN + off, left);
		got = dp_wire_decode_next(&msg, flen, &off, &h, &inner);
		if (got != want)
			return 1;
	} while (!got);
	return 0;
}

static uint8_t fill(u32 id, u32 i)
{
	return (uint8_t)(id * 31u + i);
}

static int check_head(const struct dp_ring *r, const struct model *m)
{
	const struct dp_token *h = dp_ring_head(r);

	if (r->prod != m->prod || r->cons != m->cons || r->queued != m->count)
		return -1;
	if (!m->count)
		return h ? -1 : 0;
	if (!h || (h->flags & DP_TOK_WRAP) || h->len != m->q[m->head].len ||
	    h->seq != m->q[m->head].id)
		return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	static uint8_t area[16384] __attribute__((aligned(64)));
	uint8_t *frame = NULL;
	struct dp_msg_hdr h;
	struct dp_ring r;
	size_t flen, pos;
	u32 id = 0, rsize;
	int got, want;

	if (size < 2)
		return 0;
	flen = ((size_t)data[0] | (size_t)data[1] << 8) & 0x7fff;
	if (flen > size - 2)
		flen = size - 2;
	/* An exact-size copy, so ASan sees any read past the frame. */
	frame = malloc(flen ? flen : 1);
	memcpy(frame, data + 2, flen);
	if (data[1] & 0x80)
		seal(frame, flen);
	memset(&h, 0, sizeof(h));
	got = dp_wire_decode(frame, flen, &h);
	want = expected_reason(frame, flen);
	if (got != want)
		FAIL("decode returned %d, expected %d", got, want);
	if (flen >= DP_WIRE_HDR_LEN) {	/* the same frame in pieces, as an skb's */
		struct dp_msg_hdr hp;
		struct dp_payload pl;
		struct pieces pc;
		bool same;

		pieces_make(&pc, frame, DP_WIRE_HDR_LEN, frame + DP_WIRE_HDR_LEN,
			    (u32)(flen - DP_WIRE_HDR_LEN), 1 + flen % PIECES_MAX,
			    (u32)flen * 2654435761u);
		pl = pieces_payload(&pc);
		memset(&hp, 0, sizeof(hp));
		same = dp_wire_decode_parts(frame, flen, &pl, &hp) == got &&
		       !memcmp(&hp, &h, sizeof(h));
		pieces_free(&pc);
		if (!same)
			FAIL("the frame in pieces decodes differently");
	}
	if (!got) {
		struct dp_wire_hdr w;

		uint8_t want[DP_WIRE_HDR_LEN];

		dp_wire_encode(&w, &h);
		dp_wire_seal(&w, frame + DP_WIRE_HDR_LEN, h.len);
		/*
		 * Everything comes back but the dup bytes of a frame without
		 * DP_WF_DUP (ignored, sent as 0), and the seal is the CRC of
		 * what is sent.
		 */
		memcpy(want, frame, sizeof(want));
		if (!(h.flags & DP_WF_DUP)) {
			want[6] = 0;
			want[7] = 0;
		}
		if (memcmp(&w, want, 48))
			FAIL("re-encoded header differs from the frame");
		memcpy(want, &w, sizeof(want));
		if (be32(want + 48) != crc32c_ref(want, frame + DP_WIRE_HDR_LEN, h.len))
			FAIL("seal is not the CRC32C of header and message");
	}

	if (!got && (h.flags & DP_WF_BUNDLE) && walk_bundle(frame, flen, h.len))
		FAIL("a frame of the bundle decodes against the rules");

	pos = 2 + flen;
	rsize = 128u << (pos < size ? data[pos++] % 8 : 0);
	/* Control frames carry no message: only DATA enters the pool. */
	if (!got && h.type != DP_WT_DATA)
		got = -1;
	memset(area, 0xcc, rsize);
	dp_ring_init(&r, area, rsize);
	model_init(&m, rsize, 0);

	/* The decoded message, if any, enters the pool first. */
	if (!got) {
		u64 at;
		int w2 = model_push(&m, h.len, ++id, &at), g2 = 0;
		struct dp_token *t = dp_ring_reserve(&r, h.len, &g2);

		if (t) {
			memcpy(t + 1, frame + DP_WIRE_HDR_LEN, h.len);
			t->seq = id;
			dp_ring_commit(&r, t, h.len);
		}
		if ((t ? 0 : g2) != w2)
			FAIL("reserve of decoded message: %d, model %d", t ? 0 : g2, w2);
		if (t && memcmp(dp_ring_head(&r) + 1, frame + DP_WIRE_HDR_LEN, h.len))
			FAIL("decoded message corrupted in the pool");
	}

	while (pos < size) {
		uint8_t b = data[pos++];

		if (b & 0x80) {
			u32 n = (b & 0x7f) == 0x7f ? 0xffffffffu : (b & 0x7fu);
			const struct dp_token *t = dp_ring_head(&r);
			u32 i;

			/* Bytes of the message about to leave must be intact. */
			if (t && t->seq != 1)
				for (i = 0; i < t->len; i++)
					if (((const uint8_t *)(t + 1))[i] != fill(t->seq, i))
						FAIL("message %u byte %u overwritten", t->seq, i);
			if (dp_ring_release(&r, n) != model_pop(&m, n))
				FAIL("release count differs from model");
		} else {
			u32 len = (u32)b << 8 | (pos < size ? data[pos++] : 0), i;
			struct dp_token *t;
			u64 at = 0;
			int g2 = 0;

			want = model_push(&m, len, ++id, &at);
			if (want < 0)
				break;
			t = dp_ring_reserve(&r, len, &g2);
			if ((t ? 0 : g2) != want)
				FAIL("reserve %u: %d, model %d", len, t ? 0 : g2, want);
			if (t) {
				if ((uint8_t *)t != area + (at & (rsize - 1)))
					FAIL("token placed at %td, model %llu", (uint8_t *)t - area,
					     (unsigned long long)(at & (rsize - 1)));
				for (i = 0; i < len; i++)
					((uint8_t *)(t + 1))[i] = fill(id, i);
				t->seq = id;
				dp_ring_commit(&r, t, len);
			}
		}
		if (check_head(&r, &m))
			FAIL("ring state differs from model (prod %llu/%llu cons %llu/%llu)",
			     (unsigned long long)r.prod, (unsigned long long)m.prod,
			     (unsigned long long)r.cons, (unsigned long long)m.cons);
	}
#ifdef DP_FUZZ_REPLAY
out:
#endif
	free(frame);
	return 0;
}
