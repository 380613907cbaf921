// SPDX-License-Identifier: GPL-2.0
/*
 * Reliability arithmetic, kernel-agnostic (see dp_rel.h).  The credit
 * rules implement docs/reliability.md, section 6: a receiver never
 * promises more than size - smax - used, so every message that arrives
 * within its credit fits the pool.
 */
#include "dp_rel.h"

static u32 dp_clamp(u32 v, u32 lo, u32 hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void dp_rtt_init(struct dp_rtt *r, u32 init_us, u32 min_us, u32 max_us)
{
	r->srtt = 0;
	r->rttvar = 0;
	r->rto = dp_clamp(init_us, min_us, max_us);
	r->backoff = 0;
}

void dp_rtt_sample(struct dp_rtt *r, u32 rtt_us, u32 min_us, u32 max_us)
{
	u64 rto;
	u32 dev;

	if (!rtt_us)
		rtt_us = 1;
	if (!r->srtt) {
		r->srtt = rtt_us;
		r->rttvar = rtt_us / 2;
	} else {
		dev = r->srtt > rtt_us ? r->srtt - rtt_us : rtt_us - r->srtt;
		r->rttvar = r->rttvar - r->rttvar / 4 + dev / 4;
		r->srtt = r->srtt - r->srtt / 8 + rtt_us / 8;
	}
	/* srtt + 4 rttvar, in 64 bits: no overflow near the cap */
	rto = (u64)r->srtt + 4ull * r->rttvar;
	r->rto = dp_clamp(rto > max_us ? max_us : (u32)rto, min_us, max_us);
	r->backoff = 0;
}

u32 dp_rtt_timeout(const struct dp_rtt *r, u32 max_us)
{
	u64 t = (u64)r->rto << (r->backoff < 20 ? r->backoff : 20);

	return t > max_us ? max_us : (u32)t;
}

void dp_rtt_backoff(struct dp_rtt *r)
{
	if (r->backoff < 20)
		r->backoff++;
}

u32 dp_credit_room(u32 size, u32 smax, u64 used, u32 outstanding)
{
	u64 taken = used + outstanding + smax;

	return taken >= size ? 0 : (u32)(size - taken);
}

u32 dp_credit_target(u32 size, u32 smax, u32 npeers)
{
	u32 share, usable = size > smax ? size - smax : 0;

	share = usable / (npeers ? npeers : 1);
	share &= ~(DP_TOKEN_ALIGN - 1);
	return share > smax ? share : smax;
}

u32 dp_credit_grant(u32 credit, u32 arrived, u32 target, u32 room)
{
	s32 have = dp_seq_diff(credit, arrived);
	u32 add;

	if (have < 0)
		have = 0;	/* a sender beyond its credit is refused anyway */
	if ((u32)have >= target)
		return 0;
	add = target - (u32)have;
	if (add > room)
		add = room;
	return add & ~(DP_TOKEN_ALIGN - 1);
}
