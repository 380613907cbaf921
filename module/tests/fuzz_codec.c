// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the codec as the send side and user space see it
 * (fuzz_wire.c starts from arbitrary received bytes instead):
 *
 *  - header building: a dp_msg_hdr with fuzzer-chosen fields is encoded by
 *    dp_wire_encode() into a frame with the message, link padding and
 *    possibly a cut-off tail or a foreign version byte; dp_wire_decode()
 *    must give back exactly that header, or the drop reason docs/wire.md
 *    gives for it;
 *  - the token ring as producer and consumer: a decoded message is placed
 *    in the ring as dp_pool_deliver() does, and fuzzer-chosen operations
 *    (release n, read-and-release as read() does, a full walk of the pool
 *    as a user-space reader sees it) are checked against ring_model.h,
 *    from free-running counters that start anywhere (near 2^32 too);
 *  - the receiver of large messages (dp_frag.c) on a pool of its own:
 *    fuzzer-chosen fragment sequences (flags, lengths, totals, raw bits,
 *    aborts) must get the verdicts docs/wire.md gives, and every message
 *    that closes must be whole, with its bytes, and nothing else visible.
 *
 * Input: byte 0 picks the ring size (128 B << (b % 12), up to 256 KiB),
 * byte 1 where the counters start (see start_of()); then operations, each
 * an opcode byte (mod 6) and its operands (see the op_* handlers).  Missing bytes
 * read as zero.
 *
 * Built two ways, like fuzz_wire.c: with -fsanitize=fuzzer (abort on a
 * broken invariant) and with -DDP_FUZZ_REPLAY into the unit tests, where
 * the entry point is fuzz_codec_one() and a broken invariant fails the test.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "../dp_wire.h"
#include "../dp_ring.h"
#include "../dp_frag.h"
#include "ring_model.h"
#include "wire_rules.h"

#ifdef DP_FUZZ_REPLAY
#define FUZZ_ENTRY fuzz_codec_one
extern int unit_failed;
#else
#define FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int FUZZ_ENTRY(const uint8_t *data, size_t size);

/* Report a broken invariant; returns -1 so callers can stop. */
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
#ifdef DP_FUZZ_REPLAY
	printf("#   fuzz_codec: ");
	vprintf(fmt, ap);
	printf("\n");
	unit_failed++;
#else
	fprintf(stderr, "fuzz_codec: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	abort();
#endif
	va_end(ap);
	return -1;
}

/* The input as a stream of operands; reads past the end give zeros. */
struct in {
	const uint8_t *p;
	size_t n, pos;
};

static uint8_t in8(struct in *in)
{
	return in->pos < in->n ? in->p[in->pos++] : 0;
}

static u16 in16(struct in *in)
{
	u16 hi = in8(in);

	return (u16)(hi << 8 | in8(in));
}

static u32 in32(struct in *in)
{
	u32 hi = in16(in);

	return hi << 16 | in16(in);
}

/* What the consumer must find in a message's token, beyond the model. */
struct expect {
	u32 src_nid, src_dpid, src_uid, seq;
};

struct state {
	struct dp_ring r;
	struct model m;
	struct expect exp[MODEL_MAX];	/* parallel to m.q */
	u32 id;
};

/*
 * Message bytes: message id's bytes are pat[ofs(id) ...], a period that is
 * prime against every length, so a message shifted, mixed with another or
 * overwritten shows; copying and comparing are then one memcpy/memcmp.
 */
#define PAT_PERIOD 251u
static uint8_t pat[65536 + PAT_PERIOD];

static void pat_init(void)
{
	u32 i;

	if (pat[1])
		return;
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)((i % PAT_PERIOD) * 7u + 1u);
}

static const uint8_t *msg_bytes(u32 id)
{
	return pat + (id * 97u) % PAT_PERIOD;
}

/*
 * Where the free-running counters start: 0 as in the kernel, or as if
 * some traffic had gone before (any 64-byte multiple), just below 2^32
 * (a u32 truncation shows there) or far up near 2^62.
 */
static u64 start_of(uint8_t b)
{
	u64 k = (u64)(b & 63) * DP_TOKEN_ALIGN;

	switch (b >> 6) {
	case 0:
		return 0;
	case 1:
		return k;
	case 2:
		return (1ULL << 32) - k - DP_TOKEN_ALIGN;
	default:
		return (1ULL << 62) - k;
	}
}

/*
 * What dp_wire_decode() must say, from the rules in docs/wire.md, read
 * from the frame's bytes.  flip is the offset of a byte changed after the
 * frame was sealed, or SIZE_MAX: the checksum must catch it when it lies
 * in what the checksum covers (the header and the message).
 */
static int expected_reason(const uint8_t *f, size_t n, size_t flip)
{
	u16 len;

	if (n < DP_WIRE_HDR_LEN)
		return DP_CTR_RX_DROP_SHORT;
	if (f[0] != DP_WIRE_VERSION)
		return DP_CTR_RX_DROP_VERSION;
	if (f[1] < DP_WT_DATA || f[1] > DP_WT_ANNOUNCE)
		return DP_CTR_RX_DROP_TYPE;
	len = (u16)(f[2] << 8 | f[3]);
	if (len > n - DP_WIRE_HDR_LEN || !len_ok(f, len))
		return DP_CTR_RX_DROP_LEN;
	if (flip < DP_WIRE_HDR_LEN + (size_t)len)
		return DP_CTR_RX_DROP_CSUM;
	if (!addr_ok(f))
		return DP_CTR_RX_DROP_BAD_ADDR;
	if (f[1] == DP_WT_DATA && (f[5] & DP_WF_RAW) && !be32(f + 28))
		return DP_CTR_RX_DROP_SEQ;
	if (frag_unexpected(f))
		return DP_CTR_RX_DROP_TYPE;
	return 0;
}

/* The wire bytes, read by hand (not by the codec), must carry h. */
static int check_wire_bytes(const uint8_t *w, const struct dp_msg_hdr *h)
{
	if (w[0] != DP_WIRE_VERSION || w[1] != h->type ||
	    (u16)(w[2] << 8 | w[3]) != h->len ||
	    (u16)(w[4] << 8 | w[5]) != h->flags || w[6] || w[7] ||
	    be32(w + 8) != h->dst_nid || be32(w + 12) != h->src_nid ||
	    be32(w + 16) != h->dst_dpid || be32(w + 20) != h->src_dpid ||
	    be32(w + 24) != h->src_uid || be32(w + 28) != h->seq ||
	    be32(w + 32) != h->ack || be32(w + 36) != h->credit ||
	    be32(w + 40) != h->src_inc || be32(w + 44) != h->dst_inc ||
	    be32(w + 48))
		return fail("encoded bytes do not carry the header (len %u)", h->len);
	return 0;
}

static int same_hdr(const struct dp_msg_hdr *a, const struct dp_msg_hdr *b)
{
	return a->type == b->type && a->len == b->len && a->flags == b->flags &&
	       a->dup == b->dup &&
	       a->dst_nid == b->dst_nid && a->src_nid == b->src_nid &&
	       a->dst_dpid == b->dst_dpid && a->src_dpid == b->src_dpid &&
	       a->src_uid == b->src_uid && a->seq == b->seq && a->ack == b->ack &&
	       a->credit == b->credit && a->src_inc == b->src_inc &&
	       a->dst_inc == b->dst_inc;
}

/* Place a decoded message in the ring as dp_pool_deliver() does. */
static int deliver(struct state *s, const struct dp_msg_hdr *h,
		   const uint8_t *payload)
{
	u32 k = (s->m.head + s->m.count) % MODEL_MAX;
	struct dp_token *t;
	int want, got = 0;
	u64 at = 0;

	want = model_push(&s->m, h->len, s->id, &at);
	if (want < 0)
		return 1;	/* the model is full: stop this input */
	t = dp_ring_reserve(&s->r, h->len, &got);
	if (t)
		got = 0;
	if (got != want)
		return fail("reserve %u: ring says %d, model %d", h->len, got, want);
	if (!t)
		return 0;
	if ((uint8_t *)t != s->r.data + (at & (s->r.size - 1)))
		return fail("token at offset %td, model %llu", (uint8_t *)t - s->r.data,
			    (unsigned long long)(at & (s->r.size - 1)));
	memcpy(t + 1, payload, h->len);
	t->src_nid = h->src_nid;
	t->src_dpid = h->src_dpid;
	t->src_uid = h->src_uid;
	t->seq = h->seq;
	dp_ring_commit(&s->r, t, h->len);
	s->exp[k] = (struct expect){ h->src_nid, h->src_dpid, h->src_uid, h->seq };
	return 0;
}

/*
 * Build, encode, seal, frame, decode; a DATA frame that decodes goes into
 * the ring.  Operands: flags, type, len (u16), hdr flags (u16), 10 u32
 * fields, pad, cut, flip (u16), version.
 */
static int op_send(struct state *s, struct in *in)
{
	uint8_t fl = in8(in), type = in8(in), *buf, *frame;
	struct dp_msg_hdr h = { 0 }, d;
	size_t flen, pad, cut, flip = SIZE_MAX;
	int want, got, r = 0;

	h.type = fl & 1 ? type : DP_WT_DATA;
	h.len = in16(in);
	h.flags = in16(in);
	if (!(fl & 2))	/* mostly sizes that fit the ring */
		h.len %= dp_ring_max_msg(&s->r) + 2;
	h.dst_nid = in32(in);
	h.src_nid = in32(in);
	h.dst_dpid = in32(in);
	h.src_dpid = in32(in);
	h.src_uid = in32(in);
	h.seq = in32(in);
	h.ack = in32(in);
	h.credit = in32(in);
	h.src_inc = in32(in);
	h.dst_inc = in32(in);
	pad = in8(in) % 64;
	cut = in8(in);
	flen = DP_WIRE_HDR_LEN + h.len + pad;
	buf = malloc(flen);
	dp_wire_encode((struct dp_wire_hdr *)buf, &h);
	if (check_wire_bytes(buf, &h)) {
		free(buf);
		return -1;
	}
	s->id++;
	memcpy(buf + DP_WIRE_HDR_LEN, msg_bytes(s->id), h.len);
	dp_wire_seal((struct dp_wire_hdr *)buf, buf + DP_WIRE_HDR_LEN, h.len);
	memset(buf + DP_WIRE_HDR_LEN + h.len, 0xa5, pad);
	if (fl & 16) {	/* corrupt one bit anywhere, as a link might */
		u16 f = in16(in);

		flip = f % flen;
		buf[flip] ^= (uint8_t)(1u << (f >> 13));
	}
	if (fl & 8) {	/* a foreign version byte (or 2 again: then no flip) */
		buf[0] = in8(in);
		flip = flip ? flip : SIZE_MAX;
	}
	/* The frame as received, cut short maybe, in an exact-size copy so
	 * that ASan sees any read past its end.
	 */
	flen -= fl & 4 ? cut % (flen + 1) : 0;
	frame = malloc(flen ? flen : 1);
	memcpy(frame, buf, flen);
	free(buf);
	memset(&d, 0x5c, sizeof(d));
	got = dp_wire_decode(frame, flen, &d);
	want = expected_reason(frame, flen, flip);
	if (got != want)
		r = fail("decode of a %zu-byte frame (len %u): %d, expected %d",
			 flen, h.len, got, want);
	else if (!got && !same_hdr(&d, &h))
		r = fail("decoded header differs from the encoded one");
	else if (!got && d.type == DP_WT_DATA)
		r = deliver(s, &d, frame + DP_WIRE_HDR_LEN);
	free(frame);
	return r;
}

/* Check one message of the model at position pos against the pool. */
static int check_msg(const struct state *s, u32 k, u64 pos)
{
	const struct dp_token *t = (const void *)(s->r.data + (pos & (s->r.size - 1)));
	const struct expect *e = &s->exp[k];
	u32 len = s->m.q[k].len, id = s->m.q[k].id;

	if (t->len != len || t->flags || t->reserved || t->reserved2)
		return fail("message %u: len %u flags %#x, want len %u, no flags",
			    id, t->len, t->flags, len);
	if (t->next != ((pos + DP_TOKEN_SPACE(len)) & (s->r.size - 1)))
		return fail("message %u: next %u", id, t->next);
	if (t->src_nid != e->src_nid || t->src_dpid != e->src_dpid ||
	    t->src_uid != e->src_uid || t->seq != e->seq)
		return fail("message %u: sender fields differ from its header", id);
	if (memcmp(t + 1, msg_bytes(id), len))
		return fail("message %u bytes overwritten", id);
	return 0;
}

/*
 * What a reader sees between the published cons and prod (uapi part 2):
 * every queued message in order, a wrap token wherever one was skipped,
 * and nothing else; cons never on a wrap token.
 */
static int walk(const struct state *s)
{
	u32 size = s->r.size, i;
	u64 pos = s->r.cons;

	if (s->r.prod - s->r.cons > size || s->r.cons % DP_TOKEN_ALIGN)
		return fail("counters cons %llu prod %llu", (unsigned long long)s->r.cons,
			    (unsigned long long)s->r.prod);
	if (pos != s->r.prod &&
	    (((const struct dp_token *)(s->r.data + (pos & (size - 1))))->flags & DP_TOK_WRAP))
		return fail("cons rests on a wrap token");
	for (i = 0; i < s->m.count; i++) {
		u32 k = (s->m.head + i) % MODEL_MAX;
		u64 at = s->m.q[k].pos;

		if (at != pos) {
			const struct dp_token *w = (const void *)(s->r.data + (pos & (size - 1)));

			if (at % size || at - pos >= size || !(w->flags & DP_TOK_WRAP) ||
			    w->next)
				return fail("no wrap token at %llu before message %u",
					    (unsigned long long)pos, s->m.q[k].id);
		}
		if (check_msg(s, k, at))
			return -1;
		pos = at + DP_TOKEN_SPACE(s->m.q[k].len);
	}
	if (pos != s->r.prod)
		return fail("the reader stops at %llu, prod %llu", (unsigned long long)pos,
			    (unsigned long long)s->r.prod);
	return 0;
}

/* Release n (operand: small counts, 0, or all) after checking the head. */
static int op_release(struct state *s, struct in *in)
{
	uint8_t b = in8(in);
	u32 n = b == 0xff ? 0xffffffffu : b & 0x80 ? b : b % 4, got, want;

	if (s->m.count && check_msg(s, s->m.head, s->m.q[s->m.head].pos))
		return -1;
	want = model_pop(&s->m, n);
	got = dp_ring_release(&s->r, n);
	if (got != want)
		return fail("release %u: ring %u, model %u", n, got, want);
	return 0;
}

/* read() on the endpoint: copy the head message out, release it. */
static int op_read(struct state *s)
{
	const struct dp_token *t = dp_ring_head(&s->r);
	static uint8_t buf[65536];	/* the wire's largest message */
	u32 k = s->m.head;

	if (!t)
		return s->m.count ? fail("head NULL with %u queued", s->m.count) : 0;
	if (!s->m.count || t->len != s->m.q[k].len || t->len > sizeof(buf))
		return fail("head len %u, model %u queued", t->len, s->m.count);
	memcpy(buf, t + 1, t->len);
	if (memcmp(buf, msg_bytes(s->m.q[k].id), t->len))
		return fail("read copy of message %u differs", s->m.q[k].id);
	model_pop(&s->m, 1);
	if (dp_ring_release(&s->r, 1) != 1)
		return fail("release after read");
	return 0;
}

/*
 * A burst of well-formed messages of one length (operands: count, len):
 * 1 byte up to one more than the ring takes (DATA is never empty).
 */
static int op_burst(struct state *s, struct in *in)
{
	u32 max = dp_ring_max_msg(&s->r) + 1;
	u32 n = in8(in) % 64 + 1, len = in16(in) % (max < 65535 ? max : 65535) + 1;
	struct dp_msg_hdr h = {
		.type = DP_WT_DATA, .len = (u16)len, .dst_nid = 1, .src_nid = 2,
		.dst_dpid = 3, .src_dpid = 4, .src_uid = 1000,
	};
	uint8_t *frame = malloc(DP_WIRE_HDR_LEN + len);
	struct dp_msg_hdr d;
	int r = 0;
	u32 i;

	for (i = 0; i < n && !r; i++) {
		h.seq = ++s->id;
		dp_wire_encode((struct dp_wire_hdr *)frame, &h);
		memcpy(frame + DP_WIRE_HDR_LEN, msg_bytes(s->id), len);
		dp_wire_seal((struct dp_wire_hdr *)frame, frame + DP_WIRE_HDR_LEN, len);
		if (dp_wire_decode(frame, DP_WIRE_HDR_LEN + len, &d) || !same_hdr(&d, &h))
			r = fail("burst message %u does not round-trip", i);
		else
			r = deliver(s, &d, frame + DP_WIRE_HDR_LEN);
	}
	free(frame);
	return r;
}

/*
 * The fragment receiver's world: one session's open message on a 64 KiB
 * pool of its own, and the reference state written from docs/wire.md.
 */
static struct {
	struct dp_ring r;
	struct dp_ring_slot slot;
	struct dp_frag_rx st;
	bool open;
	u32 total, got, id;
	uint8_t area[65536] __attribute__((aligned(64)));
} fw;

/* What docs/wire.md says of a fragment: 0 or the drop counter. */
static int frag_expected(u16 flags, u32 len, u32 total, u32 max)
{
	u16 kind = flags & DP_WF_FRAG_MASK;

	if (kind && (flags & DP_WF_RAW))
		return DP_CTR_RX_DROP_TYPE;
	if (kind == 0 || kind == DP_WF_FRAG_FIRST) {
		if (fw.open)
			return DP_CTR_RX_DROP_SEQ;
		if (!kind)
			return 0;
		if (len <= DP_FRAG_TOTAL_LEN || total <= len - DP_FRAG_TOTAL_LEN)
			return DP_CTR_RX_DROP_LEN;
		return total > max ? DP_CTR_RX_DROP_TOO_BIG : 0;
	}
	if (!fw.open)
		return DP_CTR_RX_DROP_SEQ;
	if (len > fw.total - fw.got || (kind == DP_WF_FRAG_MID) == (len == fw.total - fw.got))
		return DP_CTR_RX_DROP_LEN;
	return 0;
}

/* A closed message: whole at the head, then released; the pool empty. */
static int frag_check_closed(void)
{
	const struct dp_token *t = dp_ring_head(&fw.r);

	if (!t || t->len != fw.total || t->flags ||
	    memcmp(t + 1, msg_bytes(fw.id), fw.total))
		return fail("closed message %u (%u bytes) not whole at the head", fw.id,
			    fw.total);
	if (dp_ring_release(&fw.r, 1) != 1 || dp_ring_head(&fw.r) ||
	    fw.r.cons != fw.r.prod)
		return fail("pool not empty after the message");
	return 0;
}

/* One fragment frame, parsed and put; operands: kind, len, total. */
static int frag_one(struct in *in)
{
	uint8_t b = in8(in), *msg;
	u16 flags = (u16)((b & 3) * DP_WF_FRAG_FIRST | (b & 4 ? DP_WF_RAW : 0));
	u32 len = in16(in) % 2048 + (b & 8 ? 0 : 1), total = in32(in);
	u32 max = dp_ring_max_msg(&fw.r), off = fw.open ? fw.got : 0;
	struct dp_msg_hdr h = { .type = DP_WT_DATA, .len = (u16)len, .flags = flags };
	struct dp_payload pl;
	struct dp_frag_in fi;
	bool done = false;
	int want, got, r = 0;

	if (b & 16)	/* mostly totals the pool takes */
		total %= max + 2;
	if ((flags & DP_WF_FRAG_MASK) == DP_WF_FRAG_FIRST && !fw.open)
		fw.id++;
	msg = malloc(len ? len : 1);	/* exact size: ASan sees over-reads */
	if ((flags & DP_WF_FRAG_MASK) == DP_WF_FRAG_FIRST && len >= DP_FRAG_TOTAL_LEN) {
		dp_frag_put_total(msg, total);
		memcpy(msg + DP_FRAG_TOTAL_LEN, msg_bytes(fw.id), len - DP_FRAG_TOTAL_LEN);
	} else {
		memcpy(msg, msg_bytes(fw.id) + (off < 32768 ? off : 0), len);
	}
	want = frag_expected(flags, len, total, max);
	pl = dp_payload_flat(msg);
	got = dp_frag_parse(&fw.st, &h, &pl, max, &fi);
	if (got != want)
		r = fail("fragment flags %#x len %u total %u: %d, expected %d", flags, len,
			 total, got, want);
	else if (!got && fi.kind != DP_FRAG_WHOLE &&
		 (got = dp_frag_rx_put(&fw.st, &fw.r, &fi, &done)) != 0)
		r = fail("fragment flags %#x len %u refused by the pool: %d", flags, len, got);
	else if (!got && fi.kind == DP_FRAG_FIRST) {
		fw.open = true;
		fw.total = total;
		fw.got = len - DP_FRAG_TOTAL_LEN;
	} else if (!got && fi.kind != DP_FRAG_WHOLE) {
		fw.got += len;
		fw.open = !done;
		if (done)
			r = frag_check_closed();
	}
	free(msg);
	if (!r && fw.open && dp_ring_head(&fw.r))
		r = fail("an open message is visible");
	return r;
}

/* A run of fragments (operand: count), maybe ending in an abort. */
static int op_frag(struct in *in)
{
	uint8_t n = in8(in), i;
	int r = 0;

	for (i = 0; i < n % 16 + 1 && !r; i++)
		r = frag_one(in);
	if (!r && (n & 0x80)) {	/* the session ends */
		if (dp_frag_rx_abort(&fw.st, &fw.r) != fw.open)
			r = fail("abort with open %d", fw.open);
		fw.open = false;
		if (!r && (dp_ring_head(&fw.r) || fw.r.cons != fw.r.prod))
			r = fail("pool not empty after an abort");
	}
	return r;
}

/* After every operation: the ring's counters are the model's. */
static int check_counters(const struct state *s)
{
	const struct dp_token *h = dp_ring_head(&s->r);

	if (s->r.prod != s->m.prod || s->r.cons != s->m.cons ||
	    s->r.queued != s->m.count)
		return fail("ring prod %llu cons %llu queued %u, model %llu %llu %u",
			    (unsigned long long)s->r.prod, (unsigned long long)s->r.cons,
			    s->r.queued, (unsigned long long)s->m.prod,
			    (unsigned long long)s->m.cons, s->m.count);
	if (!h != !s->m.count)
		return fail("head %p with %u queued", (const void *)h, s->m.count);
	return 0;
}

int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static struct state s;
	static uint8_t area[256 * 1024] __attribute__((aligned(64)));
	struct in in = { data, size, 0 };
	u32 rsize = 128u << (in8(&in) % 12);
	u64 start = start_of(in8(&in));
	int r = 0;

	pat_init();
	memset(area, 0xcc, rsize);
	dp_ring_init(&s.r, area, rsize);
	s.r.prod = s.r.cons = start;	/* as if traffic had gone before */
	model_init(&s.m, rsize, start);
	s.id = 0;
	memset(&fw.st, 0, sizeof(fw.st));
	fw.open = false;
	fw.id = 0;
	dp_ring_init(&fw.r, fw.area, sizeof(fw.area));
	dp_ring_init_fill(&fw.r, &fw.slot, 1);
	while (!r && in.pos < in.n) {
		switch (in8(&in) % 6) {
		case 0:
			r = op_send(&s, &in);
			break;
		case 1:
			r = op_release(&s, &in);
			break;
		case 2:
			r = walk(&s);
			break;
		case 3:
			r = op_read(&s);
			break;
		case 5:
			r = op_frag(&in);
			break;
		default:
			r = op_burst(&s, &in);
			break;
		}
		if (!r)
			r = check_counters(&s);
	}
	if (!r)
		walk(&s);
	return 0;
}
