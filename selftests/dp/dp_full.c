// SPDX-License-Identifier: GPL-2.0
/*
 * Pool full with a raw sender (DP_BIND_RAW, v1 semantics, docs/contract.md):
 * a small pool (DP_POOL_MIN) that is not read keeps exactly the messages
 * that fit, intact and in order; every other arrival is dropped and counted
 * in dp_ep_stats.rx_drop_full and node counter DP_CTR_RX_DROP_FULL; nothing
 * queued is overwritten; after a release messages arrive again.  A message
 * larger than the pool's limit (data_size/2 - 32) is counted in
 * DP_CTR_RX_DROP_TOO_BIG.  (A reliable sender never meets a full pool: it
 * waits for credit; see dp_rel_block.)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define LEN 1000
#define TOTAL 40

static uint8_t buf[9000];

static void make(uint32_t seq, uint32_t len)
{
	uint32_t i;

	memcpy(buf, &seq, 4);
	for (i = 4; i < len; i++)
		buf[i] = (uint8_t)(seq ^ (i * 29u));
}

static int check(const uint8_t *m, uint32_t seq, uint32_t len)
{
	uint32_t i, s;

	memcpy(&s, m, 4);
	if (s != seq)
		return 0;
	for (i = 4; i < len; i++)
		if (m[i] != (uint8_t)(seq ^ (i * 29u)))
			return 0;
	return 1;
}

/* How many len-byte messages fit an empty pool whose cons is at pos, by the
 * layout rules of uapi/linux/dp.h (contiguous token buffers, wrap at end). */
static uint32_t fits(uint64_t pos, uint32_t size, uint32_t len)
{
	uint64_t end = pos + size;
	uint32_t space = DP_TOKEN_SPACE(len), n = 0;

	for (;;) {
		if ((pos & (size - 1)) + space > size)
			pos += size - (pos & (size - 1));
		if (pos + space > end)
			return n;
		pos += space;
		n++;
	}
}

int main(void)
{
	struct dp_ep_stats st;
	struct dp_info ia, ib;
	struct dpt_pool pool;
	uint64_t full0, rx0, big0, full1, rx1;
	uint32_t seq, expect, n, i;
	int a, b, sent = 0, ok;
	long taken, nopen;
	ssize_t r;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	b = dpt_ep(dpt.nsb, DPID_B, DP_POOL_MIN);
	if (!KTAP_SUCCESS(b, "bind B with a DP_POOL_MIN pool"))
		ktap_finish();
	a = dpt_ep_flags(dpt.nsa, DPID_A, 0, DP_BIND_RAW);
	if (a < 0 || dpt_connect(a, dpt.nidb, DPID_B) || dpt_info(a, &ia) || dpt_info(b, &ib) ||
	    dpt_map(b, &pool))
		ktap_bail("endpoints");
	ktap_ok(ib.data_size == DP_POOL_MIN, "data_size %u", ib.data_size);
	full0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_FULL);
	rx0 = dpt_ctr(dpt.nsb, DP_CTR_RX_MSGS);
	big0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_TOO_BIG);

	expect = fits(0, ib.data_size, LEN);
	ktap_diag("%u messages of %u bytes fit a %u-byte pool", expect, LEN, ib.data_size);
	for (seq = 0; seq < TOTAL; seq++) {
		make(seq, LEN);
		sent += write(a, buf, LEN) == LEN;
	}
	ktap_ok(sent == TOTAL, "all %d writes return %d (raw sender: no sender error)", TOTAL, LEN);
	ktap_ok(dpt_wait_arrivals(b, TOTAL, DPT_WAIT_MS) == 1, "all %d arrivals accounted for", TOTAL);
	dpt_stats(b, &st);
	ktap_ok(st.rx_msgs == expect && st.queued == expect,
		"exactly %u delivered and queued (rx_msgs %llu queued %llu)", expect,
		(unsigned long long)st.rx_msgs, (unsigned long long)st.queued);
	ktap_ok(st.rx_drop_full == TOTAL - expect, "endpoint rx_drop_full %llu (want %u)",
		(unsigned long long)st.rx_drop_full, TOTAL - expect);
	full1 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_FULL);
	rx1 = dpt_ctr(dpt.nsb, DP_CTR_RX_MSGS);
	ktap_ok(full1 - full0 == TOTAL - expect, "node DP_CTR_RX_DROP_FULL +%llu (want %u)",
		(unsigned long long)(full1 - full0), TOTAL - expect);
	ktap_ok(rx1 - rx0 == expect, "node DP_CTR_RX_MSGS +%llu (want %u)",
		(unsigned long long)(rx1 - rx0), expect);
	ktap_ok(pool.ctrl->prod - pool.ctrl->cons <= ib.data_size, "prod - cons <= data_size");
	/* what an operator sees: the queued tokens' bytes, no message open */
	taken = dpt_ep_field(dpt.nsb, DPID_B, "taken");
	nopen = dpt_ep_field(dpt.nsb, DPID_B, "open");
	ktap_ok(taken == (long)(expect * DP_TOKEN_SPACE(LEN)) && nopen == 0,
		"dpctl ep: pool bytes taken %ld (%u tokens of %u), open %ld", taken, expect,
		DP_TOKEN_SPACE(LEN), nopen);

	/* The queued messages are the first ones, intact (none overwritten). */
	ok = 1;
	for (seq = 0; seq < expect; seq++) {
		r = read(b, buf, sizeof(buf));
		if (r != LEN || !check(buf, seq, LEN)) {
			ktap_diag("message %u: read %zd, seq %u", seq, r, *(uint32_t *)buf);
			ok = 0;
			break;
		}
	}
	ktap_ok(ok, "the %u queued messages are 0..%u in order and intact", expect, expect - 1);
	taken = dpt_ep_field(dpt.nsb, DPID_B, "taken");
	ktap_ok(taken == 0, "dpctl ep: all read, pool bytes taken %ld", taken);
	fcntl(b, F_SETFL, O_NONBLOCK);
	KTAP_ERRNO(read(b, buf, sizeof(buf)), EAGAIN, "nothing else was queued");
	fcntl(b, F_SETFL, 0);

	/* Room again: new messages arrive. */
	for (seq = TOTAL; seq < TOTAL + 5; seq++) {
		make(seq, LEN);
		if (write(a, buf, LEN) != LEN)
			ktap_diag("write: %s", strerror(errno));
	}
	ktap_ok(dpt_wait_arrivals(b, TOTAL + 5, DPT_WAIT_MS) == 1, "5 more arrivals");
	ok = 1;
	for (seq = TOTAL; seq < TOTAL + 5; seq++) {
		r = read(b, buf, sizeof(buf));
		ok = ok && r == LEN && check(buf, seq, LEN);
	}
	dpt_stats(b, &st);
	ktap_ok(ok && st.rx_drop_full == TOTAL - expect,
		"after releasing, new messages are delivered (drop_full %llu)",
		(unsigned long long)st.rx_drop_full);

	/* Fill again from a non-zero offset (wrap), release with DP_IOC_RELEASE. */
	expect = fits(pool.ctrl->cons, ib.data_size, LEN);
	for (seq = 100; seq < 100 + TOTAL; seq++) {
		make(seq, LEN);
		if (write(a, buf, LEN) != LEN)
			ktap_diag("write: %s", strerror(errno));
	}
	ktap_ok(dpt_wait_arrivals(b, 2 * TOTAL + 5, DPT_WAIT_MS) == 1, "second fill accounted for");
	dpt_stats(b, &st);
	ktap_ok(st.queued == expect, "second fill from offset %llu: %llu queued (want %u)",
		(unsigned long long)(pool.ctrl->cons & (ib.data_size - 1)),
		(unsigned long long)st.queued, expect);
	ok = 1;
	for (i = 0; i < expect && ok; i++) {
		const struct dp_token *t = dpt_head(&pool);

		ok = t && !(t->flags & DP_TOK_WRAP) && t->len == LEN &&
		     check((const uint8_t *)(t + 1), 100 + i, LEN);
		if (ok)
			ok = dpt_release(b, 1) == 1;
	}
	ktap_ok(ok, "they are intact in the pool, across the wrap");
	n = 1000;
	ktap_ok(ioctl(b, DP_IOC_RELEASE, &n) == 0, "DP_IOC_RELEASE on the empty pool releases 0");

	/* Too big for the pool. */
	if (ia.max_msg > ib.data_size / 2 - 32) {
		uint32_t lim = ib.data_size / 2 - 32;

		make(7, lim + 1);
		r = write(a, buf, lim + 1);
		ktap_ok(r == lim + 1, "send %u bytes (> pool limit %u, <= max_msg %u)", lim + 1,
			lim, ia.max_msg);
		ktap_ok(dpt_wait_ctr(dpt.nsb, DP_CTR_RX_DROP_TOO_BIG, big0 + 1, DPT_WAIT_MS) == big0 + 1,
			"node DP_CTR_RX_DROP_TOO_BIG +1");
		make(8, lim);
		r = write(a, buf, lim);
		ktap_ok(r == lim && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
			read(b, buf, sizeof(buf)) == lim && check(buf, 8, lim),
			"a message of exactly the limit (%u) is delivered", lim);
		dpt_stats(b, &st);
		ktap_ok(st.rx_drop_full == TOTAL - fits(0, ib.data_size, LEN) + TOTAL - expect,
			"the too-big message was not counted as full (rx_drop_full %llu, want %u)",
			(unsigned long long)st.rx_drop_full,
			TOTAL - fits(0, ib.data_size, LEN) + TOTAL - expect);
	} else {
		ktap_skip("max_msg too small", "too-big message counted");
	}
	close(a);
	close(b);
	ktap_finish();
}
