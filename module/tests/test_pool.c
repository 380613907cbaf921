// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the token buffer pool (dp_pool.c), built against the real
 * dp.h over the mock kernel (mock/kmock.h), with the real ring and
 * fragment code (dp_ring.c, dp_frag.c) beneath it.  Messages are read as
 * user space reads them (uapi/linux/dp.h, part 2): through the control
 * page's prod and cons and the tokens in the data area, not the ring's
 * own fields.  What is checked: a message is placed whole, its
 * token stamped with the sender's NID and DPID from the header and the
 * uid and number the session gives; a full pool refuses and counts, and
 * never overwrites; a release frees exactly the messages' space; a large
 * message is seen only when whole and in ring order, or not at all once
 * aborted; the readiness count never runs ahead of the mapping; readers
 * are woken when the messages they can see grew.
 *
 * A world of its own (Makefile, WORLDS): dp_pool.c's functions here are
 * not the session world's models of them.
 */
#include "dp.h"
#include "dp_frag.h"
#include "unit.h"
#include "ring_model.h"

#define P_NID		1
#define P_DPID		200
#define P_SESS		4	/* senders with a large message open at once */
#define P_SRC		65536	/* bytes of the largest message built */
#define P_MAP		0x10000000ul	/* where user space maps the pool */
#define P_POLL		(EPOLLIN | EPOLLRDNORM)

static struct {
	struct dp_pool pool;
	struct dp_frag_rx st[P_SESS];
	u8 src[P_SRC];		/* the bytes of the message being sent */
	u32 checked;		/* messages up to this id had their bytes checked */
	/* vm_insert_page() calls: where, which page; the nth from 1 fails */
	unsigned long at[64];
	struct page *page[64];
	unsigned int inserts, insert_fail;
	unsigned int reads;		/* p_reader()'s looks */
} p;

/*
 * Message @id: a whole one is raw if @id % 4 == 0 (a large one never
 * is, nor gets such an id: p_id()); its sender fields and bytes follow
 * from @id.
 */
static bool p_raw(u32 id)
{
	return id % 4 == 0;
}

static u32 p_id(u32 *last, bool large)
{
	do
		++*last;
	while (large && p_raw(*last));
	return *last;
}

static u32 p_uid(u32 id)
{
	return 1000 + id % 5;
}

static u8 p_byte(u32 id, u32 i)
{
	return (u8)(id * 131 + i);
}

/* The header of message @id: its own seq and uid are not the token's. */
static struct dp_msg_hdr p_hdr(u32 id, u32 len)
{
	return (struct dp_msg_hdr){
		.type = DP_WT_DATA, .len = (u16)len,
		.flags = p_raw(id) ? DP_WF_RAW : 0,
		.src_nid = 2 + id % 3, .src_dpid = 100 + id % 7,
		.src_uid = 77, .seq = ~id,
		.dst_nid = P_NID, .dst_dpid = P_DPID,
	};
}

static struct dp_payload p_bytes(u32 id, u32 len)
{
	u32 i;

	for (i = 0; i < len && i < P_SRC; i++)
		p.src[i] = p_byte(id, i);
	return dp_payload_flat(p.src);
}

static int p_deliver(u32 id, u32 len)
{
	struct dp_msg_hdr h = p_hdr(id, len);
	struct dp_payload m = p_bytes(id, len);

	return dp_pool_deliver(&p.pool, &h, p_uid(id), id, &m);
}

/*
 * Fragment [@off, @off + @len) of large message @id of @total bytes, for
 * session @k's state, as dp_frag_parse() would pass it, with the uid and
 * message number @uid and @seq.
 */
static int p_frag_as(unsigned int k, u32 id, u32 total, u32 off, u32 len,
		     u32 uid, u32 seq)
{
	struct dp_msg_hdr h = p_hdr(id, len);
	struct dp_payload m = p_bytes(id, total);
	struct dp_frag_in in = {
		.kind = !off ? DP_FRAG_FIRST :
			off + len == total ? DP_FRAG_LAST : DP_FRAG_MID,
		.total = total, .off = off, .len = len,
		.msg = &m, .msg_off = off,
	};

	return dp_pool_frag(&p.pool, &p.st[k], &h, &in, uid, seq);
}

static int p_frag(unsigned int k, u32 id, u32 total, u32 off, u32 len)
{
	return p_frag_as(k, id, total, off, len, p_uid(id), id);
}

/* Message @id's token as the sender's kernel and the session stamp it. */
static void p_check_token(const struct dp_token *t, u32 len, bool bytes)
{
	u32 id = t->seq, i;

	CHECK(t->len == len, "id %u: len %u, not %u", id, t->len, len);
	CHECK(t->src_nid == 2 + id % 3 && t->src_dpid == 100 + id % 7,
	      "id %u: from %u:%u", id, t->src_nid, t->src_dpid);
	CHECK(t->src_uid == p_uid(id), "id %u: uid %u", id, t->src_uid);
	CHECK(t->flags == (p_raw(id) ? DP_TOK_RAW : 0), "id %u: flags %#x", id, t->flags);
	CHECK(!t->reserved && !t->reserved2, "id %u: reserved", id);
	for (i = 0; bytes && i < len; i++)
		if (((const u8 *)(t + 1))[i] != p_byte(id, i)) {
			CHECK(0, "id %u: byte %u of %u", id, i, len);
			break;
		}
}

/*
 * Walk the mapping from cons to prod as a reader does, passing wrap and
 * skip tokens: the ids of the messages seen, in order, into @ids (up to
 * @max), each token checked (its bytes once: ids rise in ring order).
 * Returns how many.
 */
static u32 p_walk(u32 *ids, u32 max)
{
	const struct dp_pool_ctrl *c = p.pool.ctrl;
	const u8 *data = (const u8 *)p.pool.mem + c->ctrl_size;
	u64 pos = c->cons, end = smp_load_acquire(&c->prod);
	u32 mask = c->data_size - 1, n = 0;
	int failed = unit_failed;

	while (pos != end && unit_failed == failed) {
		const struct dp_token *t = (const void *)(data + (pos & mask));
		u64 space = DP_TOKEN_SPACE(t->len);

		CHECK(pos != c->cons || !(t->flags & (DP_TOK_WRAP | DP_TOK_SKIP)),
		      "cons rests on a wrap or skip token");
		if (t->flags & DP_TOK_WRAP) {
			space = c->data_size - (pos & mask);
		} else {
			CHECK_EQ(t->next, (pos + space) & mask);
			if (!(t->flags & DP_TOK_SKIP)) {
				p_check_token(t, t->len, t->seq > p.checked);
				p.checked = t->seq > p.checked ? t->seq : p.checked;
				if (n < max)
					ids[n] = t->seq;
				n++;
			}
		}
		CHECK(space <= end - pos, "a token past prod at %llu",
		      (unsigned long long)pos);
		pos += space;
	}
	return n;
}

static u32 p_seen(void)
{
	return p_walk(NULL, 0);
}

/* The token at @pos, through the mapping. */
static const struct dp_token *p_token(u64 pos)
{
	const struct dp_pool_ctrl *c = p.pool.ctrl;

	return (const void *)((const u8 *)p.pool.mem + c->ctrl_size +
			      (pos & (c->data_size - 1)));
}

static u32 p_taken(void)
{
	u32 taken, open;

	dp_pool_usage(&p.pool, &taken, &open);
	return taken;
}

static u32 p_open(void)
{
	u32 taken, open;

	dp_pool_usage(&p.pool, &taken, &open);
	return open;
}

/*
 * A reader on another CPU, at each of the pool's release stores: what
 * poll() and read() go by (dp_pool_queued()) is never more than the
 * messages the mapping shows.  cons may be seen past prod (cons is stored
 * first, and may pass a wrap or skip token on an empty pool): nothing is
 * ready then, as libdp's dp_read() reads that pair.
 */
static void p_reader(void)
{
	const struct dp_pool_ctrl *c = p.pool.ctrl;
	u64 cons = smp_load_acquire(&c->cons), prod = smp_load_acquire(&c->prod);
	u32 ready = dp_pool_queued(&p.pool), seen;

	p.reads++;
	if (prod - cons > c->data_size) {
		CHECK(ready == 0, "%u ready, cons %llu past prod %llu", ready,
		      (unsigned long long)cons, (unsigned long long)prod);
		return;
	}
	seen = p_seen();
	CHECK(ready <= seen, "%u ready, %u in the mapping", ready, seen);
}

static void p_setup(u32 size)
{
	kmock_reset();
	memset(&p, 0, sizeof(p));
	CHECK_EQ(dp_pool_init(&p.pool, size, P_NID, P_DPID), 0);
}

/* Free the pool: nothing left allocated, no lock held, no rule broken. */
static void p_done(void)
{
	dp_pool_free(&p.pool);
	CHECK(p.pool.mem == NULL, "freed");
	CHECK_EQ(kmock_kmalloc_live, 0);
	CHECK_EQ(kmock_spin_depth, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/* Pool sizes: powers of two in [DP_POOL_MIN, DP_POOL_MAX]; whole pages mapped. */
static void test_pool_size_valid(void)
{
	static const struct { u32 size; bool ok; } s[] = {
		{ 0, false }, { 1, false }, { DP_POOL_MIN / 2, false },
		{ DP_POOL_MIN - 1, false }, { DP_POOL_MIN, true },
		{ DP_POOL_MIN + 1, false }, { DP_POOL_MIN + DP_POOL_MIN / 2, false },
		{ DP_POOL_MIN * 2, true }, { DP_POOL_MAX / 2, true },
		{ DP_POOL_MAX - 1, false }, { DP_POOL_MAX, true },
		{ DP_POOL_MAX + DP_POOL_MIN, false }, { DP_POOL_MAX * 2, false },
		{ 1u << 31, false }, { U32_MAX, false },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(s); i++)
		CHECK(dp_pool_size_valid(s[i].size) == s[i].ok, "%u", s[i].size);
	CHECK_EQ(dp_pool_map_size(DP_POOL_MIN), PAGE_SIZE + DP_POOL_MIN);
	CHECK_EQ(dp_pool_map_size(DP_POOL_MAX), PAGE_SIZE + DP_POOL_MAX);
	CHECK_EQ(dp_pool_map_size(1), 2 * PAGE_SIZE);
	CHECK_EQ(dp_pool_map_size(PAGE_SIZE + 1), 3 * PAGE_SIZE);
}

/*
 * A new pool: the control page as the uapi says (magic, version, where
 * the data area is, its size, the owner), an empty ring behind it, all
 * zero; no memory: ENOMEM, nothing left.
 */
static void test_pool_init(void)
{
	const struct dp_pool_ctrl *c;
	const u8 *d;
	u32 i;

	p_setup(DP_POOL_MIN * 2);
	c = p.pool.ctrl;
	CHECK((void *)c == p.pool.mem, "the control page first");
	CHECK_EQ(c->magic, DP_POOL_MAGIC);
	CHECK_EQ(c->version, DP_POOL_VERSION);
	CHECK_EQ(c->ctrl_size, DP_POOL_CTRL_SIZE);
	CHECK_EQ(c->data_size, DP_POOL_MIN * 2);
	CHECK(c->nid == P_NID && c->dpid == P_DPID, "the owner: %u:%u", c->nid, c->dpid);
	CHECK(c->prod == 0 && c->cons == 0, "empty");
	CHECK_EQ(p.pool.map_size, dp_pool_map_size(DP_POOL_MIN * 2));
	CHECK(p.pool.ring.data == (u8 *)p.pool.mem + DP_POOL_CTRL_SIZE, "data after it");
	CHECK_EQ(p.pool.ring.size, DP_POOL_MIN * 2);
	d = (const u8 *)p.pool.mem + DP_POOL_CTRL_SIZE;
	for (i = 0; i < DP_POOL_MIN * 2 && !d[i]; i++)
		;
	CHECK_EQ(i, DP_POOL_MIN * 2);
	CHECK(dp_pool_empty(&p.pool), "empty");
	CHECK_EQ(dp_pool_queued(&p.pool), 0);
	CHECK(p_taken() == 0 && p_open() == 0, "nothing taken");
	CHECK_EQ(kmock_kmalloc_live, 1);
	p_done();
	kmock_kmalloc_fail = 1;
	CHECK_EQ(dp_pool_init(&p.pool, DP_POOL_MIN, P_NID, P_DPID), -ENOMEM);
	CHECK_EQ(kmock_kmalloc_live, 0);
}

/*
 * Delivered messages, as a reader finds them: each token stamped from
 * the header (NID, DPID, raw) and the session (uid, number), its bytes
 * whole, prod past it; counted, and readiness equal to what is mapped.
 */
static void test_pool_deliver(void)
{
	static const u32 len[] = { 0, 1, 100, 64 - sizeof(struct dp_token), 1500 };
	u32 ids[8], i, id = 0;
	u64 end = 0, bytes = 0;

	p_setup(DP_POOL_MIN);
	for (i = 0; i < ARRAY_SIZE(len); i++) {
		CHECK_EQ(p_deliver(p_id(&id, false), len[i]), 0);
		end += DP_TOKEN_SPACE(len[i]);
		bytes += len[i];
		CHECK_EQ(p.pool.ctrl->prod, end);
		CHECK_EQ(dp_pool_queued(&p.pool), i + 1);
	}
	CHECK_EQ(p_walk(ids, 8), ARRAY_SIZE(len));
	for (i = 0; i < ARRAY_SIZE(len); i++)
		CHECK_EQ(ids[i], i + 1);
	CHECK(!dp_pool_empty(&p.pool), "not empty");
	CHECK_EQ(p.pool.rx_msgs, ARRAY_SIZE(len));
	CHECK_EQ(p.pool.rx_bytes, bytes);
	CHECK_EQ(p.pool.rx_drop_full, 0);
	CHECK_EQ(p_taken(), end);
	CHECK_EQ(p.pool.ctrl->cons, 0);
	p_done();
}

/*
 * A full pool refuses with DP_CTR_RX_DROP_FULL, counted each time, and
 * changes nothing: what it holds is intact, nothing more published, no
 * reader woken.  What still fits is taken; a message larger than half
 * the pool is DP_CTR_RX_DROP_TOO_BIG, not counted as full; the largest
 * that is not fits an empty pool.
 */
static void test_pool_full(void)
{
	u32 id = 0, n = 0, max = DP_POOL_MIN / 2 - sizeof(struct dp_token);
	u64 end;

	p_setup(DP_POOL_MIN);
	p.pool.wq.sleepers = 1;
	while (n < 100 && !p_deliver(p_id(&id, false), 1000))
		n++;
	CHECK_EQ(n, DP_POOL_MIN / DP_TOKEN_SPACE(1000));
	end = p.pool.ctrl->prod;
	CHECK_EQ(p_deliver(p_id(&id, false), 1000), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(p_deliver(p_id(&id, false), 33), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(p.pool.rx_drop_full, 3);		/* the loop's last too */
	CHECK_EQ(p.pool.ctrl->prod, end);
	CHECK_EQ(p.pool.wq.wakeups, n);
	CHECK_EQ(p_seen(), n);
	CHECK_EQ(dp_pool_queued(&p.pool), n);
	CHECK_EQ(p_deliver(p_id(&id, false), 0), 0);	/* the last 64 bytes */
	CHECK_EQ(p_taken(), DP_POOL_MIN);
	CHECK_EQ(p_seen(), n + 1);
	CHECK_EQ(p.pool.rx_msgs, n + 1);
	CHECK_EQ(dp_pool_release(&p.pool, n + 1), n + 1);
	CHECK_EQ(p_deliver(p_id(&id, false), max + 1), DP_CTR_RX_DROP_TOO_BIG);
	CHECK_EQ(p.pool.rx_drop_full, 3);
	CHECK_EQ(p_deliver(p_id(&id, false), max), 0);
	CHECK_EQ(p_seen(), 1);
	p_done();
}

/*
 * A release of n messages frees exactly their space, oldest first: cons
 * moves past them and no further; more than are queued releases what is.
 * Nobody is woken.
 */
static void test_pool_release(void)
{
	static const u32 len[] = { 10, 200, 3000, 0, 77 };
	u32 ids[8], i, id = 0;
	u64 end = 0;

	p_setup(DP_POOL_MIN);
	p.pool.wq.sleepers = 1;
	for (i = 0; i < ARRAY_SIZE(len); i++)
		CHECK_EQ(p_deliver(p_id(&id, false), len[i]), 0);
	end = p.pool.ctrl->prod;
	CHECK_EQ(dp_pool_release(&p.pool, 0), 0);
	CHECK_EQ(p.pool.ctrl->cons, 0);
	CHECK_EQ(dp_pool_release(&p.pool, 2), 2);
	CHECK_EQ(p.pool.ctrl->cons, DP_TOKEN_SPACE(10) + DP_TOKEN_SPACE(200));
	CHECK_EQ(p_taken(), end - p.pool.ctrl->cons);
	CHECK_EQ(dp_pool_queued(&p.pool), 3);
	CHECK_EQ(p_walk(ids, 8), 3);
	CHECK(ids[0] == 3 && ids[2] == 5, "the oldest went");
	CHECK_EQ(dp_pool_release(&p.pool, 10), 3);
	CHECK_EQ(p.pool.ctrl->cons, end);
	CHECK(dp_pool_empty(&p.pool), "empty");
	CHECK_EQ(p_taken(), 0);
	CHECK_EQ(dp_pool_release(&p.pool, 1), 0);
	CHECK_EQ(p.pool.wq.wakeups, ARRAY_SIZE(len));	/* the deliveries' */
	p_done();
}

/*
 * Round after round of deliveries and releases, the counters wrapping
 * the data area many times: every step as ring_model.h's FIFO has it
 * (where each message goes, wrap padding included), every message whole.
 */
static void test_pool_wrap_cycles(void)
{
	struct model *m = malloc(sizeof(*m));
	u64 s = 0x51ab1e5eedull, pos;
	u32 ids[256], id = 0, i, n;
	int round;

	p_setup(DP_POOL_MIN);
	model_init(m, DP_POOL_MIN, 0);
	for (round = 0; round < 3000 && !unit_failed; round++) {
		u64 r = unit_rand(&s);
		u32 k = 1 + r % 6, len;

		for (i = 0; i < k; i++) {
			u32 nid = p_id(&id, false);

			len = (u32)(unit_rand(&s) % 3000);
			CHECK_EQ(p_deliver(nid, len), model_push(m, len, nid, &pos));
		}
		n = (u32)(r >> 8) % 6;
		CHECK_EQ(dp_pool_release(&p.pool, n), model_pop(m, n));
		CHECK_EQ(p.pool.ctrl->prod, m->prod);
		CHECK_EQ(p.pool.ctrl->cons, m->cons);
		CHECK_EQ(p_walk(ids, 256), m->count);
		for (i = 0; i < m->count && i < 256; i++)
			CHECK_EQ(ids[i], m->q[(m->head + i) % MODEL_MAX].id);
	}
	CHECK(m->prod > 500ull * DP_POOL_MIN, "wrapped only %llu times",
	      (unsigned long long)(m->prod / DP_POOL_MIN));
	free(m);
	p_done();
}

/*
 * A release of many messages takes the lock DP_RELEASE_BATCH at a time
 * and may reschedule between batches (never under the lock), never
 * after the last: exactly n released when n are queued.
 */
static void test_pool_release_batches(void)
{
	u32 i, id = 0;

	p_setup(DP_POOL_MIN * 4);
	for (i = 0; i < 600; i++)
		CHECK_EQ(p_deliver(p_id(&id, false), 0), 0);
	CHECK_EQ(dp_pool_release(&p.pool, DP_RELEASE_BATCH), DP_RELEASE_BATCH);
	CHECK_EQ(kmock_resched, 0);
	CHECK_EQ(dp_pool_release(&p.pool, 600), 600 - DP_RELEASE_BATCH);
	CHECK_EQ(kmock_resched, 1);
	CHECK(dp_pool_empty(&p.pool), "all released");
	for (i = 0; i < 600; i++)
		CHECK_EQ(p_deliver(p_id(&id, false), 0), 0);
	CHECK_EQ(dp_pool_release(&p.pool, 2 * DP_RELEASE_BATCH + 1),
		 2 * DP_RELEASE_BATCH + 1);
	CHECK_EQ(kmock_resched, 3);
	CHECK_EQ(dp_pool_queued(&p.pool), 600 - 2 * DP_RELEASE_BATCH - 1);
	CHECK_EQ(p_seen(), 600 - 2 * DP_RELEASE_BATCH - 1);
	CHECK_EQ(p.pool.ctrl->cons, (600 + 2 * DP_RELEASE_BATCH + 1) * 64ull);
	CHECK_EQ(dp_pool_release(&p.pool, U32_MAX), 600 - 2 * DP_RELEASE_BATCH - 1);
	CHECK(dp_pool_empty(&p.pool), "all released");
	p_done();
}

/*
 * A large message: its first fragment takes its whole token (the fill
 * slots allocated then), stamped (by it alone), but readers see nothing,
 * nor a message delivered behind it (which wakes nobody), until the last;
 * then both, in ring order, counted once, with one wake-up.
 */
static void test_pool_frag(void)
{
	u32 ids[4], id = 0, big, small;

	p_setup(DP_POOL_MIN * 2);
	big = p_id(&id, true);
	CHECK_EQ(p_frag(0, big, 3000, 0, 1000), 0);
	CHECK(p.pool.ring.fill != NULL, "fill slots");
	CHECK_EQ(kmock_kmalloc_live, 2);
	CHECK_EQ(p_open(), 1);
	CHECK_EQ(p_taken(), DP_TOKEN_SPACE(3000));
	CHECK_EQ(p.pool.ctrl->prod, 0);
	CHECK(dp_pool_empty(&p.pool), "nothing seen");
	p_check_token(p_token(0), 3000, false);		/* stamped already */
	p.pool.wq.sleepers = 1;
	p.pool.wq.wakeups = 0;
	small = p_id(&id, false);
	CHECK_EQ(p_deliver(small, 10), 0);
	CHECK_EQ(p.pool.ctrl->prod, 0);
	CHECK_EQ(dp_pool_queued(&p.pool), 0);
	CHECK_EQ(p.pool.wq.wakeups, 0);		/* nothing new to see */
	CHECK_EQ(p_frag_as(0, big, 3000, 1000, 1000, 5, 6), 0);
	CHECK_EQ(dp_pool_queued(&p.pool), 0);
	CHECK_EQ(p.pool.rx_msgs, 1);
	CHECK_EQ(p.pool.wq.wakeups, 0);
	CHECK_EQ(p_frag_as(0, big, 3000, 2000, 1000, 7, 8), 0);
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p.pool.wq.key, P_POLL);
	CHECK_EQ(dp_pool_queued(&p.pool), 2);
	CHECK_EQ(p.pool.ctrl->prod, DP_TOKEN_SPACE(3000) + DP_TOKEN_SPACE(10));
	CHECK_EQ(p_walk(ids, 4), 2);
	CHECK(ids[0] == big && ids[1] == small, "in ring order");
	CHECK_EQ(p.pool.rx_msgs, 2);
	CHECK_EQ(p.pool.rx_bytes, 3010);
	CHECK_EQ(p_open(), 0);
	CHECK(!p.st[0].open, "closed");
	p_done();
}

/*
 * An aborted large message: its token becomes one readers and cons pass,
 * its space returned; what was delivered behind it becomes visible (a
 * wake-up); an abort with nothing open does nothing.
 */
static void test_pool_frag_abort(void)
{
	u32 id = 0, big, small, n = 0, max = DP_POOL_MIN / 2 - sizeof(struct dp_token);

	p_setup(DP_POOL_MIN);
	p.pool.wq.sleepers = 1;
	big = p_id(&id, true);
	CHECK_EQ(p_frag(1, big, 5000, 0, 1000), 0);
	small = p_id(&id, false);
	CHECK_EQ(p_deliver(small, 10), 0);
	p.pool.wq.wakeups = 0;
	CHECK(dp_pool_frag_abort(&p.pool, &p.st[1]), "had one");
	CHECK(!p.st[1].open, "none open");
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p_open(), 0);
	CHECK_EQ(p.pool.ctrl->cons, DP_TOKEN_SPACE(5000));
	CHECK_EQ(p_taken(), DP_TOKEN_SPACE(10));
	CHECK_EQ(dp_pool_queued(&p.pool), 1);
	CHECK_EQ(p_seen(), 1);
	CHECK_EQ(p.pool.rx_msgs, 1);
	CHECK(!dp_pool_frag_abort(&p.pool, &p.st[1]), "none left");
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(dp_pool_release(&p.pool, 1), 1);
	/* nothing behind it: no wake-up, and all its space back */
	CHECK_EQ(p_frag(1, p_id(&id, true), 8000, 0, 100), 0);
	CHECK(dp_pool_frag_abort(&p.pool, &p.st[1]), "had one");
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p_taken(), 0);
	CHECK_EQ(p.pool.ctrl->cons, p.pool.ctrl->prod);
	while (n < 100 && !p_deliver(p_id(&id, false), max))
		n++;
	CHECK_EQ(n, 2);				/* the whole pool, past a wrap */
	p_done();
}

/*
 * A first fragment refused: no memory for the fill slots (NOMEM), no
 * room (FULL, counted as full), too big (TOO_BIG); a fragment that fits
 * no open message (LEN).  Each changes nothing: no message open, nothing
 * taken or published.
 */
static void test_pool_frag_refused(void)
{
	u32 id = 0, n = 0, max = DP_POOL_MIN / 2 - sizeof(struct dp_token);
	u64 taken;

	p_setup(DP_POOL_MIN);
	kmock_kmalloc_fail = 1;
	CHECK_EQ(p_frag(0, p_id(&id, true), 3000, 0, 1000), DP_CTR_RX_DROP_NOMEM);
	CHECK(!p.st[0].open && !p.pool.ring.fill, "nothing open");
	CHECK_EQ(p_frag(0, id, 3000, 1000, 2000), DP_CTR_RX_DROP_LEN);
	CHECK_EQ(p_frag(0, p_id(&id, true), max + 1, 0, 1000), DP_CTR_RX_DROP_TOO_BIG);
	CHECK(!p.st[0].open, "nothing open");
	CHECK(p_taken() == 0 && p_open() == 0, "nothing taken");
	CHECK_EQ(p.pool.rx_drop_full, 0);
	while (n < 100 && !p_deliver(p_id(&id, false), 1000))
		n++;
	taken = p_taken();
	CHECK_EQ(p_frag(0, p_id(&id, true), 3000, 0, 1000), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(p.pool.rx_drop_full, 2);		/* the delivery's and this */
	CHECK(!p.st[0].open, "nothing open");
	CHECK_EQ(p_taken(), taken);
	CHECK_EQ(p_open(), 0);
	CHECK_EQ(p_seen(), n);
	CHECK_EQ(p.pool.rx_msgs, n);
	p_done();
}

/* A refusal the receiver decides on is counted as full, nothing else. */
static void test_pool_refuse(void)
{
	u32 id = 0;

	p_setup(DP_POOL_MIN);
	p.pool.wq.sleepers = 1;
	CHECK_EQ(p_deliver(p_id(&id, false), 100), 0);
	CHECK_EQ(dp_pool_refuse(&p.pool), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(dp_pool_refuse(&p.pool), DP_CTR_RX_DROP_FULL);
	CHECK_EQ(p.pool.rx_drop_full, 2);
	CHECK_EQ(p.pool.rx_msgs, 1);
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p_seen(), 1);
	CHECK_EQ(p.pool.ctrl->prod, DP_TOKEN_SPACE(100));
	p_done();
}

/*
 * Wake-ups (EPOLLIN | EPOLLRDNORM), only with a reader asleep: one for
 * each delivery; for a large message only when its last fragment, or
 * the abort of one with a message behind it, makes messages visible;
 * none for a refusal or a release.
 */
static void test_pool_wakeups(void)
{
	u32 id = 0, big;

	p_setup(DP_POOL_MIN);
	CHECK_EQ(p_deliver(p_id(&id, false), 10), 0);
	CHECK_EQ(p_frag(0, p_id(&id, true), 2000, 0, 1000), 0);
	CHECK_EQ(p_frag(0, id, 2000, 1000, 1000), 0);
	CHECK_EQ(p.pool.wq.wakeups, 0);			/* nobody asleep */
	p.pool.wq.sleepers = 1;
	CHECK_EQ(p_deliver(p_id(&id, false), 10), 0);
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p.pool.wq.key, P_POLL);
	CHECK_EQ(p_deliver(p_id(&id, false), DP_POOL_MIN), DP_CTR_RX_DROP_TOO_BIG);
	dp_pool_refuse(&p.pool);
	CHECK_EQ(dp_pool_release(&p.pool, 2), 2);
	CHECK_EQ(p.pool.wq.wakeups, 1);
	big = p_id(&id, true);
	CHECK_EQ(p_frag(2, big, 2000, 0, 500), 0);
	CHECK_EQ(p_frag(2, big, 2000, 500, 500), 0);
	CHECK_EQ(p.pool.wq.wakeups, 1);
	CHECK_EQ(p_frag(2, big, 2000, 1000, 1000), 0);
	CHECK_EQ(p.pool.wq.wakeups, 2);
	CHECK_EQ(p_frag(2, p_id(&id, true), 2000, 0, 500), 0);
	CHECK(dp_pool_frag_abort(&p.pool, &p.st[2]), "aborted");
	CHECK_EQ(p.pool.wq.wakeups, 2);
	CHECK_EQ(dp_pool_queued(&p.pool), 2);
	p_done();
}

/*
 * Readiness is never ahead of the mapping: a reader looking at each of
 * the pool's release stores (p_reader()) while messages are delivered,
 * a large one completes with one behind it, another is aborted with one
 * behind it, and a delivery wraps on an empty pool.
 */
static void test_pool_ready_not_ahead(void)
{
	u32 id = 0, big;

	p_setup(DP_POOL_MIN);
	kmock_release_hook = p_reader;
	CHECK_EQ(p_deliver(p_id(&id, false), 100), 0);
	big = p_id(&id, true);
	CHECK_EQ(p_frag(0, big, 3000, 0, 1000), 0);
	CHECK_EQ(p_deliver(p_id(&id, false), 100), 0);
	CHECK_EQ(p_frag(0, big, 3000, 1000, 2000), 0);
	CHECK_EQ(p_frag(1, p_id(&id, true), 3000, 0, 1000), 0);
	CHECK_EQ(p_deliver(p_id(&id, false), 100), 0);
	CHECK(dp_pool_frag_abort(&p.pool, &p.st[1]), "aborted");
	CHECK_EQ(dp_pool_queued(&p.pool), 4);
	kmock_release_hook = NULL;
	CHECK_EQ(p_deliver(p_id(&id, false), 8000), 0);
	CHECK_EQ(dp_pool_release(&p.pool, 5), 5);
	kmock_release_hook = p_reader;
	CHECK_EQ(p_deliver(p_id(&id, false), 8000), 0);	/* a wrap first */
	CHECK_EQ(p.pool.ctrl->prod % DP_POOL_MIN, DP_TOKEN_SPACE(8000));
	CHECK(p.reads >= 3 * 7, "%u looks", p.reads);
	kmock_release_hook = NULL;
	p_done();
}

static int p_insert(struct vm_area_struct *vma, unsigned long addr,
		    struct page *page)
{
	unsigned int k = p.inserts++;

	if (k < ARRAY_SIZE(p.at)) {
		p.at[k] = addr;
		p.page[k] = page;
	}
	return p.insert_fail == k + 1 ? -ENOMEM : 0;
}

/* A shared read-only mapping of @len bytes at P_MAP, offset @pgoff. */
static int p_mmap(struct vm_area_struct *v, unsigned long len,
		  unsigned long pgoff, unsigned long flags)
{
	v->vm_start = P_MAP;
	v->vm_end = P_MAP + len;
	v->vm_pgoff = pgoff;
	v->vm_flags = flags;
	p.inserts = 0;
	return dp_pool_mmap(&p.pool, v);
}

/*
 * The mapping: refused at an offset, longer than the pool, private,
 * writable or executable, with nothing mapped or changed; otherwise each
 * page of the pool at its offset, mprotect() kept from adding write or
 * exec, not inherited by fork, not grown, not dumped.  An insertion's
 * failure is the call's.
 */
static void test_pool_mmap(void)
{
	const unsigned long shared = VM_SHARED | VM_MAYSHARE | VM_MAYWRITE | VM_MAYEXEC;
	struct vm_area_struct v;
	size_t len;
	unsigned int i;

	p_setup(DP_POOL_MIN);
	kmock_vm_insert_hook = p_insert;
	len = p.pool.map_size;
	CHECK_EQ(p_mmap(&v, len, 1, shared), -EINVAL);
	CHECK_EQ(p_mmap(&v, len + PAGE_SIZE, 0, shared), -EINVAL);
	CHECK_EQ(p_mmap(&v, len, 0, VM_MAYWRITE | VM_WRITE), -EINVAL);
	CHECK_EQ(p_mmap(&v, len, 0, shared | VM_WRITE), -EACCES);
	CHECK_EQ(p_mmap(&v, len, 0, shared | VM_EXEC), -EACCES);
	CHECK_EQ(v.vm_flags, shared | VM_EXEC);
	CHECK_EQ(p.inserts, 0);
	CHECK_EQ(p_mmap(&v, len, 0, shared), 0);
	CHECK_EQ(v.vm_flags, VM_SHARED | VM_MAYSHARE | VM_DONTCOPY |
		 VM_DONTEXPAND | VM_DONTDUMP);
	CHECK_EQ(p.inserts, len / PAGE_SIZE);
	for (i = 0; i < p.inserts; i++)
		CHECK(p.at[i] == P_MAP + i * PAGE_SIZE &&
		      p.page[i] == virt_to_page((u8 *)p.pool.mem + i * PAGE_SIZE),
		      "page %u", i);
	CHECK_EQ(p_mmap(&v, PAGE_SIZE, 0, shared), 0);	/* the control page */
	CHECK_EQ(p.inserts, 1);
	p.insert_fail = 3;
	CHECK_EQ(p_mmap(&v, len, 0, shared), -ENOMEM);
	CHECK_EQ(p.inserts, 3);
	p_done();
}

/* ---- a long random run against ring_model.h's fmodel ---- */

struct p_run {
	struct fmodel *m;
	u32 id, max;
	u32 sid[P_SESS], total[P_SESS], got[P_SESS];	/* each session's open one */
	u64 msgs, bytes, full;		/* the counters as they should be */
	unsigned int closes, aborts, fulls;
};

static u32 p_run_open(void)
{
	u32 k, n = 0;

	for (k = 0; k < P_SESS; k++)
		n += p.st[k].open;
	return n;
}

static void p_run_deliver(struct p_run *r, u64 x)
{
	u32 len = (u32)((x >> 8) % (x % 10 == 3 ? r->max + 100 : r->max / 4 + 1));
	u32 id = p_id(&r->id, false);
	u64 pos;
	int want = fmodel_push(r->m, len, id, FM_MSG, &pos), got = p_deliver(id, len);

	CHECK(got == want, "deliver %u: %d, model %d", len, got, want);
	r->msgs += !got;
	r->bytes += got ? 0 : len;
	r->full += got == DP_CTR_RX_DROP_FULL;
	r->fulls += got == DP_CTR_RX_DROP_FULL;
}

/* A first fragment for free session @k, or the next one for an open one. */
static void p_run_frag(struct p_run *r, unsigned int k, u64 x)
{
	u32 n = 1 + (u32)((x >> 24) % 3000);
	u64 pos;
	int want, got;

	if (!p.st[k].open) {
		u32 total = 2 + (u32)((x >> 8) % (r->max + 100));
		u32 id = p_id(&r->id, true);

		want = fmodel_push(r->m, total, id, FM_OPEN, &pos);
		got = p_frag(k, id, total, 0, n < total ? n : total - 1);
		CHECK(got == want, "open %u: %d, model %d", total, got, want);
		r->full += got == DP_CTR_RX_DROP_FULL;
		r->sid[k] = id;
		r->total[k] = total;
		r->got[k] = n < total ? n : total - 1;
		return;
	}
	n = n < r->total[k] - r->got[k] ? n : r->total[k] - r->got[k];
	CHECK_EQ(p_frag(k, r->sid[k], r->total[k], r->got[k], n), 0);
	r->got[k] += n;
	if (r->got[k] < r->total[k])
		return;
	fmodel_end(r->m, r->sid[k], FM_MSG);
	r->msgs++;
	r->bytes += r->total[k];
	r->closes++;
}

static void p_run_abort(struct p_run *r, unsigned int k)
{
	bool open = p.st[k].open;

	CHECK(dp_pool_frag_abort(&p.pool, &p.st[k]) == open, "abort of %u", k);
	if (open) {
		fmodel_end(r->m, r->sid[k], FM_DEAD);
		r->aborts++;
	}
}

/*
 * After each step the pool as a reader finds it is the model's: prod,
 * cons, readiness, what is taken and open, the counters, and the
 * messages themselves in order.
 */
static void p_run_check(struct p_run *r, int step)
{
	u32 ids[256], n, i, j = 0, vis = fmodel_visible(r->m);

	CHECK(p.pool.ctrl->prod == fmodel_pub(r->m) && p.pool.ctrl->cons == r->m->cons,
	      "step %d: prod %llu cons %llu, model %llu %llu", step,
	      (unsigned long long)p.pool.ctrl->prod, (unsigned long long)p.pool.ctrl->cons,
	      (unsigned long long)fmodel_pub(r->m), (unsigned long long)r->m->cons);
	CHECK_EQ(dp_pool_queued(&p.pool), vis);
	CHECK_EQ(dp_pool_empty(&p.pool), !vis);
	CHECK_EQ(p_taken(), r->m->tail - r->m->cons);
	CHECK_EQ(p_open(), p_run_open());
	CHECK(p.pool.rx_msgs == r->msgs && p.pool.rx_bytes == r->bytes &&
	      p.pool.rx_drop_full == r->full, "step %d: counters", step);
	n = p_walk(ids, 256);
	CHECK_EQ(n, vis);
	for (i = 0; i < n && i < 256; i++, j++) {
		while (j < r->m->n && FM_AT(r->m, j).kind == FM_DEAD)
			j++;
		CHECK(j < r->m->n && ids[i] == FM_AT(r->m, j).id,
		      "step %d: message %u is %u", step, i, ids[i]);
	}
}

/* One step; the wake-ups it made checked against what became visible. */
static void p_run_step(struct p_run *r, u64 x, int step)
{
	u32 before = fmodel_visible(r->m), k = (u32)(x >> 56) % P_SESS;
	int woken = p.pool.wq.wakeups;
	bool delivered = false;

	kmock_release_hook = x % 10 < 8 ? p_reader : NULL;
	switch (x % 10) {
	case 0: case 1: case 2: case 3:
		delivered = true;
		p_run_deliver(r, x);
		break;
	case 4: case 5: case 6:
		p_run_frag(r, k, x);
		break;
	case 7:
		p_run_abort(r, k);
		break;
	default: {
		u32 n = (u32)(x >> 8) % 4;

		CHECK_EQ(dp_pool_release(&p.pool, n), fmodel_pop(r->m, n));
		break;
	}
	}
	kmock_release_hook = NULL;
	woken = p.pool.wq.wakeups - woken;
	if (fmodel_visible(r->m) > before)
		CHECK(woken == 1, "step %d: %d wake-ups, more to read", step, woken);
	else
		CHECK(woken == 0 || (delivered && woken == 1),
		      "step %d: %d wake-ups, nothing more to read", step, woken);
}

static void p_run(u32 size, u64 seed, int steps)
{
	struct p_run r = { .max = size / 2 - (u32)sizeof(struct dp_token) };
	unsigned int k;
	int i;

	p_setup(size);
	r.m = malloc(sizeof(*r.m));
	fmodel_init(r.m, size, 0, DP_MAX_RX_PEERS);
	p.pool.wq.sleepers = 1;
	for (i = 0; i < steps && !unit_failed; i++) {
		p_run_step(&r, unit_rand(&seed), i);
		p_run_check(&r, i);
	}
	for (k = 0; k < P_SESS; k++)
		p_run_abort(&r, k);
	CHECK_EQ(dp_pool_release(&p.pool, U32_MAX), fmodel_pop(r.m, U32_MAX));
	p_run_check(&r, i);
	CHECK(dp_pool_empty(&p.pool) && p_taken() == 0, "all given back");
	CHECK(r.closes > 100 && r.aborts > 100 && r.fulls > 100,
	      "a weak run: %u closes, %u aborts, %u full", r.closes, r.aborts, r.fulls);
	CHECK(r.m->tail > 100ull * size, "wrapped only %llu times",
	      (unsigned long long)(r.m->tail / size));
	CHECK(p.reads > 10000, "few reads: %u", p.reads);
	free(r.m);
	p_done();
}

/*
 * 20000 random deliveries, fragments, aborts and releases over 4 senders,
 * twice (a 16 and a 32 KiB pool), each step checked against fmodel.
 */
static void test_pool_random(void)
{
	p_run(DP_POOL_MIN, 0x706f6f6c5eedull, 20000);
	p_run(DP_POOL_MIN * 2, 0x9e3779b97f4a7c15ull, 20000);
}

const struct unit_test pool_tests[] = {
	{ "pool_size_valid", test_pool_size_valid },
	{ "pool_init", test_pool_init },
	{ "pool_deliver", test_pool_deliver },
	{ "pool_full", test_pool_full },
	{ "pool_release", test_pool_release },
	{ "pool_wrap_cycles", test_pool_wrap_cycles },
	{ "pool_release_batches", test_pool_release_batches },
	{ "pool_frag", test_pool_frag },
	{ "pool_frag_abort", test_pool_frag_abort },
	{ "pool_frag_refused", test_pool_frag_refused },
	{ "pool_refuse", test_pool_refuse },
	{ "pool_wakeups", test_pool_wakeups },
	{ "pool_ready_not_ahead", test_pool_ready_not_ahead },
	{ "pool_mmap", test_pool_mmap },
	{ "pool_random", test_pool_random },
	{ NULL, NULL },
};
