/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dp's tracepoints, system "dp" (docs/trace.md): usable from tracefs
 * (events/dp/), perf (-e dp:dp_tx) and bpftrace (tracepoint:dp:dp_tx).
 * The events take dp's own objects; their fields are filled in
 * dp_trace.c (CREATE_TRACE_POINTS), the one unit that sees every
 * structure, so a caller needs no more than the forward declarations below.  The host build of the
 * session layer (module/tests/mock) gets no-op stubs instead.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dp

#ifndef _DP_TRACE_DECL_H
#define _DP_TRACE_DECL_H
/* What a stalled writer waits for (dp_stall). */
enum dp_stall_on {
	DP_STALL_CREDIT,	/* the receiver's credit (its pool) */
	DP_STALL_CWND,		/* the congestion window */
	DP_STALL_SESSION,	/* the session to open (HELLO answered) */
};

void dp_trace_init(void);
bool dp_ctr_is_drop(unsigned int c);
#endif

#if !defined(_DP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DP_TRACE_H

struct dp_endpoint;
struct dp_node;
struct dp_nic;
struct dp_snd;
struct dp_msg_hdr;
struct dp_addr;

#ifdef _DP_KMOCK_H	/* host build: the mock kernel has no tracing */
#define trace_dp_tx(ep, to, len) ((void)(ep), (void)(to), (void)(len))
#define trace_dp_rx(node, h, seq) ((void)(node), (void)(h), (void)(seq))
#define trace_dp_drop(node, reason, n) ((void)(node), (void)(reason), (void)(n))
#define trace_dp_rx_no_ep(node, h) ((void)(node), (void)(h))
#define trace_dp_retransmit(s, seq, fast) kmock_retransmit((s), (seq), (fast))
#define trace_dp_undo(s, seq) ((void)(s), (void)(seq))
#define trace_dp_session(s, from, to, err) \
	((void)(s), (void)(from), (void)(to), (void)(err))
#define trace_dp_stall(s, space, on) ((void)(s), (void)(space), (void)(on))
#define trace_dp_drop_enabled() false
#define trace_dp_nic_attach(node, nic) ((void)(node), (void)(nic))
#define trace_dp_nic_detach(node, nic) ((void)(node), (void)(nic))
#else
#include <linux/tracepoint.h>

/* __assign_str() lost its source argument in 6.10 (a Kbuild probe). */
#ifdef DP_HAVE_ASSIGN_STR_DST
#define dp_trace_assign_str(dst, src) __assign_str(dst)
#else
#define dp_trace_assign_str(dst, src) __assign_str(dst, src)
#endif

#define dp_trace_state(x) __print_symbolic(x, { 0, "idle" }, { 1, "hello" }, \
					   { 2, "open" }, { 3, "failed" })

/* A message accepted for sending on an edge (write or ioctl). */
TRACE_EVENT(dp_tx,
	    TP_PROTO(const struct dp_endpoint *ep, const struct dp_addr *to,
		     u32 len),
	    TP_ARGS(ep, to, len),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, dst_nid)
			     __field(u32, dst_dpid)
			     __field(u32, len)),
	    TP_fast_assign(__entry->nid = READ_ONCE(ep->node->nid);
			   __entry->dpid = ep->dpid;
			   __entry->dst_nid = to->nid;
			   __entry->dst_dpid = to->dpid;
			   __entry->len = len;),
	    TP_printk("src=%u/%u dst=%u/%u len=%u", __entry->nid, __entry->dpid,
		      __entry->dst_nid, __entry->dst_dpid, __entry->len)
);

/* A message placed in an endpoint's pool, as token @seq. */
TRACE_EVENT(dp_rx,
	    TP_PROTO(const struct dp_node *node, const struct dp_msg_hdr *h,
		     u32 tok_seq),
	    TP_ARGS(node, h, tok_seq),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, src_nid)
			     __field(u32, src_dpid)
			     __field(u32, len)
			     __field(u32, seq)),
	    TP_fast_assign(__entry->nid = h->dst_nid;
			   __entry->dpid = h->dst_dpid;
			   __entry->src_nid = h->src_nid;
			   __entry->src_dpid = h->src_dpid;
			   __entry->len = h->len;
			   __entry->seq = tok_seq;),
	    TP_printk("dst=%u/%u src=%u/%u len=%u seq=%u", __entry->nid,
		      __entry->dpid, __entry->src_nid, __entry->src_dpid,
		      __entry->len, __entry->seq)
);

/*
 * @n frames or messages not delivered, counted in the node counter
 * @reason (enum dp_counter), named as dpctl names it.
 */
TRACE_EVENT(dp_drop,
	    TP_PROTO(const struct dp_node *node, unsigned int reason, u64 n),
	    TP_ARGS(node, reason, n),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, reason)
			     __field(u64, n)
			     __string(name, dp_trace_ctr_name(reason))),
	    TP_fast_assign(__entry->nid = READ_ONCE(node->nid);
			   __entry->reason = reason;
			   __entry->n = n;
			   dp_trace_assign_str(name, dp_trace_ctr_name(reason));),
	    TP_printk("nid=%u reason=%s n=%llu", __entry->nid, __get_str(name),
		      __entry->n)
);

/*
 * A frame for a DPID nobody has bound on this node (counted in
 * rx_drop_no_ep, which dp_drop traces without its addresses): whose frame
 * it was, its type (enum dp_wire_type) and its sequence number.
 */
TRACE_EVENT(dp_rx_no_ep,
	    TP_PROTO(const struct dp_node *node, const struct dp_msg_hdr *h),
	    TP_ARGS(node, h),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, src_nid)
			     __field(u32, src_dpid)
			     __field(u32, type)
			     __field(u32, seq)),
	    TP_fast_assign(__entry->nid = READ_ONCE(node->nid);
			   __entry->dpid = h->dst_dpid;
			   __entry->src_nid = h->src_nid;
			   __entry->src_dpid = h->src_dpid;
			   __entry->type = h->type;
			   __entry->seq = h->seq;),
	    TP_printk("dst=%u/%u src=%u/%u type=%u seq=%u", __entry->nid,
		      __entry->dpid, __entry->src_nid, __entry->src_dpid,
		      __entry->type, __entry->seq)
);

/* DATA sent again: after a timeout, or at once for a reported gap (fast). */
TRACE_EVENT(dp_retransmit,
	    TP_PROTO(const struct dp_snd *s, u32 seq, bool fast),
	    TP_ARGS(s, seq, fast),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, dst_nid)
			     __field(u32, dst_dpid)
			     __field(u32, seq)
			     __field(bool, fast)),
	    TP_fast_assign(__entry->nid = READ_ONCE(s->se->node->nid);
			   __entry->dpid = s->se->ep->dpid;
			   __entry->dst_nid = s->to.nid;
			   __entry->dst_dpid = s->to.dpid;
			   __entry->seq = seq;
			   __entry->fast = fast;),
	    TP_printk("src=%u/%u dst=%u/%u seq=%u%s", __entry->nid,
		      __entry->dpid, __entry->dst_nid, __entry->dst_dpid,
		      __entry->seq, __entry->fast ? " fast" : "")
);

/*
 * A timeout undone: the receiver reported the message it resent first,
 * @seq, as a duplicate (DP_WF_DUP); the window is back at @cwnd bytes.
 */
TRACE_EVENT(dp_undo,
	    TP_PROTO(const struct dp_snd *s, u32 seq),
	    TP_ARGS(s, seq),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, dst_nid)
			     __field(u32, dst_dpid)
			     __field(u32, seq)
			     __field(u32, cwnd)),
	    TP_fast_assign(__entry->nid = READ_ONCE(s->se->node->nid);
			   __entry->dpid = s->se->ep->dpid;
			   __entry->dst_nid = s->to.nid;
			   __entry->dst_dpid = s->to.dpid;
			   __entry->seq = seq;
			   __entry->cwnd = READ_ONCE(s->cwnd);),
	    TP_printk("src=%u/%u dst=%u/%u seq=%u cwnd=%u", __entry->nid,
		      __entry->dpid, __entry->dst_nid, __entry->dst_dpid,
		      __entry->seq, __entry->cwnd)
);

/* An edge's sending session changed state (enum dp_snd_state). */
TRACE_EVENT(dp_session,
	    TP_PROTO(const struct dp_snd *s, u8 from, u8 to, int err),
	    TP_ARGS(s, from, to, err),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, dst_nid)
			     __field(u32, dst_dpid)
			     __field(u8, from)
			     __field(u8, to)
			     __field(int, err)),
	    TP_fast_assign(__entry->nid = READ_ONCE(s->se->node->nid);
			   __entry->dpid = s->se->ep->dpid;
			   __entry->dst_nid = s->to.nid;
			   __entry->dst_dpid = s->to.dpid;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->err = err;),
	    TP_printk("src=%u/%u dst=%u/%u %s->%s err=%d", __entry->nid,
		      __entry->dpid, __entry->dst_nid, __entry->dst_dpid,
		      dp_trace_state(__entry->from), dp_trace_state(__entry->to),
		      __entry->err)
);

TRACE_DEFINE_ENUM(DP_STALL_CREDIT);
TRACE_DEFINE_ENUM(DP_STALL_CWND);
TRACE_DEFINE_ENUM(DP_STALL_SESSION);

/* A writer must wait to send @space bytes of pool, @on (enum dp_stall_on). */
TRACE_EVENT(dp_stall,
	    TP_PROTO(const struct dp_snd *s, u32 space, u8 on),
	    TP_ARGS(s, space, on),
	    TP_STRUCT__entry(__field(u32, nid)
			     __field(u32, dpid)
			     __field(u32, dst_nid)
			     __field(u32, dst_dpid)
			     __field(u32, space)
			     __field(u8, on)),
	    TP_fast_assign(__entry->nid = READ_ONCE(s->se->node->nid);
			   __entry->dpid = s->se->ep->dpid;
			   __entry->dst_nid = s->to.nid;
			   __entry->dst_dpid = s->to.dpid;
			   __entry->space = space;
			   __entry->on = on;),
	    TP_printk("src=%u/%u dst=%u/%u space=%u on=%s", __entry->nid,
		      __entry->dpid, __entry->dst_nid, __entry->dst_dpid,
		      __entry->space,
		      __print_symbolic(__entry->on, { DP_STALL_CREDIT, "credit" },
				       { DP_STALL_CWND, "cwnd" },
				       { DP_STALL_SESSION, "session" }))
);

DECLARE_EVENT_CLASS(dp_nic_class,
		    TP_PROTO(const struct dp_node *node, const struct dp_nic *nic),
		    TP_ARGS(node, nic),
		    TP_STRUCT__entry(__field(u32, nid)
				     __string(backend, nic->ops->name)
				     __string(dev, nic->ifname)),
		    TP_fast_assign(__entry->nid = READ_ONCE(node->nid);
				   dp_trace_assign_str(backend, nic->ops->name);
				   dp_trace_assign_str(dev, nic->ifname);),
		    TP_printk("nid=%u backend=%s dev=%s", __entry->nid,
			      __get_str(backend), __get_str(dev))
);

/* A NIC attached to a node, and detached from it. */
DEFINE_EVENT(dp_nic_class, dp_nic_attach,
	     TP_PROTO(const struct dp_node *node, const struct dp_nic *nic),
	     TP_ARGS(node, nic));
DEFINE_EVENT(dp_nic_class, dp_nic_detach,
	     TP_PROTO(const struct dp_node *node, const struct dp_nic *nic),
	     TP_ARGS(node, nic));

#endif /* _DP_KMOCK_H */
#endif /* _DP_TRACE_H */

#ifndef _DP_KMOCK_H
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE dp_trace
#include <trace/define_trace.h>
#endif
