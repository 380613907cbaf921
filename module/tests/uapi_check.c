// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi header must build in C and C++ user space without kernel
 * headers, and its layout must not depend on the compiler: built twice
 * (as C11 and as C++11) by `make check`, and run, printing TAP.
 */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include "../../uapi/linux/dp.h"

#ifdef __cplusplus
#define DP_LANG "C++"
#else
#define DP_LANG "C"
#endif

#define CHECK(n, cond) \
	printf("%s %d - " DP_LANG ": %s\n", (cond) ? "ok" : "not ok", n, #cond)

int main(void)
{
	int bad = 0;

	static_assert(sizeof(struct dp_wire_hdr) == DP_WIRE_HDR_LEN, "wire header");
	static_assert(sizeof(struct dp_token) == 32, "token");
	static_assert(sizeof(struct dp_pool_ctrl) == 192, "pool ctrl");
	static_assert(offsetof(struct dp_pool_ctrl, prod) == 64, "prod line");
	static_assert(offsetof(struct dp_pool_ctrl, cons) == 128, "cons line");
	static_assert(sizeof(struct dp_send) == 24, "send");
	static_assert(sizeof(struct dp_info) == 48, "info");
	static_assert(offsetof(struct dp_info, bind_flags) == 40, "info v2 prefix");
	/* Grown at the end: the kernel still answers the v1 sizes. */
	static_assert(offsetof(struct dp_info, admit) == 32, "info v1 prefix");
	static_assert(sizeof(struct dp_ep_stats) == 120, "ep stats");
	static_assert(offsetof(struct dp_ep_stats, wait_poll) == 96, "stats v3 prefix");
	static_assert(sizeof(struct dp_wait) == 16, "wait");
	static_assert(offsetof(struct dp_ep_stats, tx_unacked) == 56, "stats v2 prefix");
	static_assert(offsetof(struct dp_ep_stats, rx_drop_admit) == 48, "stats v1 prefix");
	static_assert(sizeof(struct dp_bind) == 16, "bind");
	static_assert(DP_CTR_COUNT <= DP_CTR_SLOTS, "counter slots");
	printf("TAP version 13\n1..3\n");
	bad |= !(DP_TOKEN_SPACE(1) == 64 && DP_TOKEN_SPACE(32) == 64 &&
		 DP_TOKEN_SPACE(33) == 128);
	CHECK(1, DP_TOKEN_SPACE(1) == 64 && DP_TOKEN_SPACE(33) == 128);
	bad |= offsetof(struct dp_wire_hdr, seq) != 28 ||
	       offsetof(struct dp_wire_hdr, csum) != 48;
	CHECK(2, offsetof(struct dp_wire_hdr, seq) == 28 &&
	      offsetof(struct dp_wire_hdr, csum) == 48);
	bad |= DP_IOC_BIND == DP_IOC_CONNECT;
	CHECK(3, DP_IOC_BIND != DP_IOC_CONNECT);
	return bad;
}
