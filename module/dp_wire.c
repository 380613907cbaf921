// SPDX-License-Identifier: GPL-2.0
/*
 * Wire codec.  Kernel-agnostic: also built by the host unit tests and the
 * libFuzzer target, so it must not touch anything but its arguments.
 */
#include "dp_wire.h"

void dp_wire_encode(struct dp_wire_hdr *w, const struct dp_msg_hdr *h)
{
	w->version = DP_WIRE_VERSION;
	w->type = h->type;
	w->len = cpu_to_be16(h->len);
	w->dst_nid = cpu_to_be32(h->dst_nid);
	w->src_nid = cpu_to_be32(h->src_nid);
	w->dst_dpid = cpu_to_be32(h->dst_dpid);
	w->src_dpid = cpu_to_be32(h->src_dpid);
	w->src_uid = cpu_to_be32(h->src_uid);
	w->seq = cpu_to_be32(h->seq);
	w->ack = cpu_to_be32(h->ack);
}

int dp_wire_decode(const void *frame, size_t frame_len, struct dp_msg_hdr *h)
{
	struct dp_wire_hdr w;

	if (frame_len < sizeof(w))
		return DP_CTR_RX_DROP_SHORT;
	/* Copy out: the frame may be unaligned, and is read exactly once. */
	memcpy(&w, frame, sizeof(w));
	if (w.version != DP_WIRE_VERSION)
		return DP_CTR_RX_DROP_VERSION;
	if (w.type != DP_WT_DATA)
		return DP_CTR_RX_DROP_TYPE;
	h->type = w.type;
	h->len = be16_to_cpu(w.len);
	/* Trailing bytes are link padding; missing bytes are a bad frame. */
	if (h->len > frame_len - sizeof(w))
		return DP_CTR_RX_DROP_LEN;
	h->dst_nid = be32_to_cpu(w.dst_nid);
	h->src_nid = be32_to_cpu(w.src_nid);
	h->dst_dpid = be32_to_cpu(w.dst_dpid);
	h->src_dpid = be32_to_cpu(w.src_dpid);
	if (!h->dst_nid || !h->src_nid || !h->dst_dpid || !h->src_dpid)
		return DP_CTR_RX_DROP_BAD_ADDR;
	h->src_uid = be32_to_cpu(w.src_uid);
	h->seq = be32_to_cpu(w.seq);
	h->ack = be32_to_cpu(w.ack);
	return 0;
}
