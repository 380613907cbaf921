// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The real transport's pool walker (tp_libdp.c's peek and consume) on a
 * pool laid out in memory here, counters and tokens stored as the kernel
 * stores them, no /dev/dp: the states fakedp cannot show the provider,
 * because it keeps its ring's state apart from the control page.  Above
 * all the kernel's two publishing stores (cons, then prod) seen between
 * them: past a wrap token on an empty pool, cons is ahead of the prod a
 * reader may load, and nothing is ready (uapi/linux/dp.h).  Prints TAP.
 */
#include "../tp_libdp.c"

#include <stdio.h>
#include <string.h>

#define DATA_SIZE	16384u

static int failed, n;

static void result(int ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n, what);
	failed |= !ok;
}

static struct {
	struct dp_pool_ctrl ctrl;
	unsigned char data[DATA_SIZE] __attribute__((aligned(64)));
} pool;

static struct dpfi_tp tp;

static void pool_reset(uint64_t at)
{
	memset(&pool, 0, sizeof(pool));
	pool.ctrl.data_size = DATA_SIZE;
	pool.ctrl.prod = at;
	pool.ctrl.cons = at;
	memset(&tp, 0, sizeof(tp));
	tp.pool.base = &pool;
	tp.pool.ctrl = &pool.ctrl;
	tp.pool.data = pool.data;
	tp.pool.data_size = DATA_SIZE;
	tp.rd = at;
	tp.next = at;
}

static struct dp_token *tok_at(uint64_t pos)
{
	return (struct dp_token *)(pool.data + (pos & (DATA_SIZE - 1)));
}

/* A message of len bytes of c from nid/dpid written at pos (not published). */
static uint64_t put_msg(uint64_t pos, uint32_t len, unsigned char c)
{
	struct dp_token *t = tok_at(pos);

	memset(t, 0, sizeof(*t));
	t->len = len;
	t->src_nid = 7;
	t->src_dpid = 700 + c;
	memset(t + 1, c, len);
	return pos + DP_TOKEN_SPACE(len);
}

/* A wrap token at pos: the next token is at the data area's start. */
static uint64_t put_wrap(uint64_t pos)
{
	struct dp_token *t = tok_at(pos);
	uint32_t off = (uint32_t)(pos & (DATA_SIZE - 1));

	memset(t, 0, sizeof(*t));
	t->flags = DP_TOK_WRAP;
	return pos + (DATA_SIZE - off);
}

static int msg_is(const struct dpfi_tp_msg *m, uint32_t len, unsigned char c)
{
	uint32_t i;

	if (m->len != len || m->src_nid != 7 || m->src_dpid != 700u + c)
		return 0;
	for (i = 0; i < len; i++)
		if (m->buf[i] != c)
			return 0;
	return 1;
}

static int peek(struct dpfi_tp_msg *m)
{
	return dpfi_tp_libdp.peek(&tp, m);
}

static void t_empty_and_one(void)
{
	struct dpfi_tp_msg m;
	uint64_t end;

	pool_reset(0);
	result(peek(&m) == 0, "an empty pool: nothing ready");
	end = put_msg(0, 5, 'a');
	result(peek(&m) == 0, "a message written but prod not stored: nothing ready");
	__atomic_store_n(&pool.ctrl.prod, end, __ATOMIC_RELEASE);
	result(peek(&m) == 1 && msg_is(&m, 5, 'a'), "prod stored: the message, its source");
	dpfi_tp_libdp.consume(&tp);
	result(tp.rd == end && tp.consumed == 1, "consumed: the cursor past it, one to release");
	result(peek(&m) == 0, "then nothing ready");
}

/*
 * The kernel passes a wrap token on an empty pool and stores cons (the
 * data area's start of the next lap), then prod.  Between the stores the
 * reader loads cons ahead of prod: nothing is ready, and once prod and a
 * message follow, the message is the next one.
 */
static void t_cons_ahead_of_prod(void)
{
	const uint64_t at = 3 * (uint64_t)DATA_SIZE - 256;
	struct dpfi_tp_msg m;
	uint64_t lap, end;

	pool_reset(at);
	lap = put_wrap(at);
	__atomic_store_n(&pool.ctrl.cons, lap, __ATOMIC_RELEASE);
	result(peek(&m) == 0, "cons past a wrap token, prod not yet: nothing ready, no EPROTO");
	result(tp.rd == lap, "the cursor follows cons to the next lap");
	__atomic_store_n(&pool.ctrl.prod, lap, __ATOMIC_RELEASE);
	result(peek(&m) == 0, "prod stored as cons: still nothing");
	end = put_msg(lap, 100, 'b');
	__atomic_store_n(&pool.ctrl.prod, end, __ATOMIC_RELEASE);
	result(peek(&m) == 1 && msg_is(&m, 100, 'b') && m.buf == pool.data + sizeof(struct dp_token),
	       "the next message, at the data area's start");
}

/* The cursor ahead of cons (consumed, not released) does not follow it. */
static void t_cursor_ahead(void)
{
	struct dpfi_tp_msg m;
	uint64_t p1, p2;

	pool_reset(0);
	p1 = put_msg(0, 10, 'c');
	p2 = put_msg(p1, 20, 'd');
	__atomic_store_n(&pool.ctrl.prod, p2, __ATOMIC_RELEASE);
	result(peek(&m) == 1 && msg_is(&m, 10, 'c'), "the first of two");
	dpfi_tp_libdp.consume(&tp);
	result(peek(&m) == 1 && msg_is(&m, 20, 'd'), "the second, cons still at the first");
	dpfi_tp_libdp.consume(&tp);
	result(peek(&m) == 0 && tp.rd == p2 && tp.consumed == 2,
	       "both consumed, none released: nothing, the cursor kept");
}

/* A wrap token before a message in a pool that is not empty. */
static void t_wrap_walk(void)
{
	const uint64_t at = DATA_SIZE - 128;
	struct dpfi_tp_msg m;
	uint64_t lap, end;

	pool_reset(at);
	lap = put_wrap(at);
	end = put_msg(lap, 300, 'e');
	__atomic_store_n(&pool.ctrl.prod, end, __ATOMIC_RELEASE);
	result(peek(&m) == 1 && msg_is(&m, 300, 'e') && tp.rd == lap,
	       "a wrap token passed: the message at the next lap");
}

/* What cannot be a pool the kernel wrote is still EPROTO. */
static void t_broken(void)
{
	struct dpfi_tp_msg m;

	pool_reset(0);
	__atomic_store_n(&pool.ctrl.prod, (uint64_t)DATA_SIZE + 64, __ATOMIC_RELEASE);
	result(peek(&m) == -EPROTO, "prod more than a pool ahead: EPROTO");
	pool_reset(0);
	put_msg(0, 8, 'f');
	tok_at(0)->len = DATA_SIZE;
	__atomic_store_n(&pool.ctrl.prod, 64, __ATOMIC_RELEASE);
	result(peek(&m) == -EPROTO, "a token longer than the pool: EPROTO");
	pool_reset(0);
	put_msg(0, 200, 'g');
	__atomic_store_n(&pool.ctrl.prod, 64, __ATOMIC_RELEASE);
	result(peek(&m) == -EPROTO, "a token past prod: EPROTO");
}

int main(void)
{
	printf("TAP version 13\n1..16\n");
	t_empty_and_one();
	t_cons_ahead_of_prod();
	t_cursor_ahead();
	t_wrap_walk();
	t_broken();
	printf("# %d tests, %s\n", n, failed ? "FAILED" : "passed");
	return failed;
}
