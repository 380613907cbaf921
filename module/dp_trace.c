// SPDX-License-Identifier: GPL-2.0
/*
 * dp's tracepoints (dp_trace.h): this unit creates them, and sees every
 * structure their fields are read from.
 */
#include "dp.h"
#include "dp_snd.h"
#include "dp_wire.h"
#include "dp_trace.h"	/* declarations; the events at the end */

/* As libdp's dp_counter_name() and dpctl name them. */
static const char *const dp_trace_ctr_names[] = {
	[DP_CTR_TX_MSGS] = "tx_msgs",
	[DP_CTR_TX_BYTES] = "tx_bytes",
	[DP_CTR_TX_LOCAL] = "tx_local",
	[DP_CTR_RX_MSGS] = "rx_msgs",
	[DP_CTR_RX_BYTES] = "rx_bytes",
	[DP_CTR_RX_DROP_SHORT] = "rx_drop_short",
	[DP_CTR_RX_DROP_VERSION] = "rx_drop_version",
	[DP_CTR_RX_DROP_TYPE] = "rx_drop_type",
	[DP_CTR_RX_DROP_LEN] = "rx_drop_len",
	[DP_CTR_RX_DROP_NOT_NODE] = "rx_drop_not_node",
	[DP_CTR_RX_DROP_UNKNOWN_SRC] = "rx_drop_unknown_src",
	[DP_CTR_RX_DROP_SPOOFED] = "rx_drop_spoofed",
	[DP_CTR_RX_DROP_NO_EP] = "rx_drop_no_ep",
	[DP_CTR_RX_DROP_FULL] = "rx_drop_full",
	[DP_CTR_RX_DROP_TOO_BIG] = "rx_drop_too_big",
	[DP_CTR_RX_DROP_NOMEM] = "rx_drop_nomem",
	[DP_CTR_RX_DROP_BAD_ADDR] = "rx_drop_bad_addr",
	[DP_CTR_TX_DROP_NO_ROUTE] = "tx_drop_no_route",
	[DP_CTR_TX_DROP_NO_NIC] = "tx_drop_no_nic",
	[DP_CTR_TX_DROP_NOMEM] = "tx_drop_nomem",
	[DP_CTR_TX_DROP_NIC] = "tx_drop_nic",
	[DP_CTR_RX_DROP_RING] = "rx_drop_ring",
	[DP_CTR_RX_DROP_ADMIT] = "rx_drop_admit",
	[DP_CTR_RX_DROP_SEQ] = "rx_drop_seq",
	[DP_CTR_RX_DROP_CSUM] = "rx_drop_csum",
	[DP_CTR_RX_DROP_STALE] = "rx_drop_stale",
	[DP_CTR_RX_DROP_DUP] = "rx_drop_dup",
	[DP_CTR_TX_RETRANS] = "tx_retrans",
	[DP_CTR_TX_CTRL] = "tx_ctrl",
	[DP_CTR_RX_CTRL] = "rx_ctrl",
	[DP_CTR_TX_UNDELIVERED] = "tx_undelivered",
	[DP_CTR_DISC_CONFLICT] = "disc_conflict",
};

static_assert(ARRAY_SIZE(dp_trace_ctr_names) == DP_CTR_COUNT);

/* Used by dp_drop's TP_printk only: unused when tracepoints are off. */
static const char *__maybe_unused dp_trace_ctr_name(unsigned int c)
{
	return c < DP_CTR_COUNT ? dp_trace_ctr_names[c] : "?";
}

/*
 * The counters of frames or messages dp did not deliver (dp_drop events),
 * by name, once: dp_ctr_is_drop() runs for every counted event while
 * dp_drop is traced.
 */
static DECLARE_BITMAP(dp_drop_ctrs, DP_CTR_COUNT) __ro_after_init;

void __init dp_trace_init(void)
{
	unsigned int c;

	for (c = 0; c < DP_CTR_COUNT; c++)
		if (strstr(dp_trace_ctr_names[c], "_drop_") ||
		    c == DP_CTR_TX_UNDELIVERED)
			__set_bit(c, dp_drop_ctrs);
}

bool dp_ctr_is_drop(unsigned int c)
{
	return c < DP_CTR_COUNT && test_bit(c, dp_drop_ctrs);
}

#define CREATE_TRACE_POINTS
#include "dp_trace.h"
