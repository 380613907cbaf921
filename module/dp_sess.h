/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the session layer (dp_snd.c, dp_rcv.c) uses of the layers around
 * it, and nothing more: the frame layer below (dp_tx.c builds and sends a
 * frame), the node's counters, the receive pool, and the endpoint above
 * (the owner's view of a sender's uid).  The endpoint, node and pool stay
 * opaque here, so the sessions also build on the host against a thin mock
 * of the kernel (module/tests/mock/), with these functions played by the
 * tests.
 */
#ifndef _DP_SESS_H
#define _DP_SESS_H

#include <linux/refcount.h>

#include "dp_agnostic.h"
#include "dp_nart.h"
#include "dp_wire.h"

struct dp_endpoint;
struct dp_frag_in;
struct dp_frag_rx;
struct dp_node;
struct dp_pool;
struct dp_tx_plug;
struct workqueue_struct;

extern unsigned int dp_unreach_ms;
extern unsigned int dp_rto_min_ms;
extern unsigned int dp_rto_max_ms;
extern unsigned int dp_credit_idle_ms;
extern unsigned int dp_rx_peers_per_uid;
extern unsigned int dp_rx_peers_per_node;
extern struct workqueue_struct *dp_wq;

/* Frame layer (dp_tx.c) */
u32 dp_max_msg(struct dp_node *node);
void dp_tx_hdr(struct dp_endpoint *ep, struct dp_msg_hdr *h, u8 type,
	       const struct dp_addr *to);
int dp_tx_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		const void *msg);
/* Whether a frame to @nid stays on @node: its own NID, no wire. */
bool dp_tx_local(struct dp_node *node, u32 nid);

/**
 * struct dp_tx_tmpl - the header of one session's frames, prebuilt.
 * @h: the fields that do not change per frame (type, addresses, uid,
 *	incarnations), the others 0.
 * @w: @h on the wire, csum 0: a frame copies it and fills in its own
 *	len, flags, seq, ack and credit (dp_wire_encode_from()).
 * @route: the link address of @h's dst_nid as dp_tx_frame_tmpl() last
 *	resolved it (the NART lookup and the NIC's address length): good
 *	while the node's NART table is the one of generation @route.gen and
 *	its NIC the one of id @route.nic (0: nothing cached).
 *
 * Built by dp_tx_tmpl() at the session's first frame, and again only if
 * the node's NID or the peer's incarnation changed since; its owner
 * serialises dp_tx_tmpl() and dp_tx_frame_tmpl() with the frames sent
 * from it.
 */
struct dp_tx_tmpl {
	struct dp_msg_hdr h;
	struct dp_wire_hdr w;
	struct {
		u64 gen;
		u64 nic;
		u32 nid;
		u8 dst[DP_DST_MAX];
	} route;
};

void dp_tx_tmpl(struct dp_endpoint *ep, struct dp_tx_tmpl *t, u8 type,
		const struct dp_addr *to, u32 dst_inc);

/**
 * struct dp_txref - a reference on a DATA frame's message bytes, the copy
 *	the session keeps (struct dp_txmsg).  A NIC may take one
 *	(dp_txref_get()) to transmit from the copy where it lies instead of
 *	copying it, and lets go with dp_txref_put() once its chip has read
 *	the bytes.  The session holds the first reference while the message
 *	is unacknowledged; the copy is reused or freed only after the last
 *	holder let go: by the session, or by dp_txref_put() (dp_snd.c).
 * @ref: the holders.
 */
struct dp_txref {
	refcount_t ref;
};

static inline void dp_txref_get(struct dp_txref *r)
{
	refcount_inc(&r->ref);
}

/* From any context: the NIC's put may be the last, which frees the copy. */
void dp_txref_put(struct dp_txref *r);

/*
 * dp_tx_frame() of @h, whose session fields are @t's, and whose message's
 * CRC state @msg_crc (dp_wire_msg_crc()) was run when it was copied: a
 * transmission runs the checksum over the header only.  @keep: a
 * reference the NIC may take on @msg, to send it without a copy.  @plug:
 * the sender's batch, or NULL (dp_tx_plugged()).
 */
int dp_tx_frame_tmpl(struct dp_node *node, struct dp_tx_plug *plug,
		     struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		     const void *msg, u32 msg_crc, struct dp_txref *keep);

/*
 * A batch's small frames, held to share link frames (struct dp_tx_plug,
 * docs/wire.md): the plug the current task's batch holds on @ep, or NULL;
 * and the flush a sender runs before it waits on its peer (NULL: none).
 */
struct dp_tx_plug *dp_tx_plugged(struct dp_endpoint *ep);
void dp_tx_plug_flush(struct dp_tx_plug *plug);

/* Node counters (dp_node.c) */
void dp_count(struct dp_node *node, enum dp_counter c);
void dp_count_add(struct dp_node *node, enum dp_counter c, u64 v);

/* Receive pool (dp_pool.c) */
int dp_pool_deliver(struct dp_pool *pool, const struct dp_msg_hdr *h,
		    u32 src_uid, u32 tok_seq,
		    const struct dp_payload *payload);
int dp_pool_refuse(struct dp_pool *pool);
/*
 * Large messages (docs/reliability.md): place fragment @in of @h, checked
 * by dp_frag_parse() against the session's open message @st, under the
 * pool's lock.  A first one opens the token (the ring's fill slots are
 * allocated then, at the first ever) and stamps it with the sender, @uid
 * and message number @tok_seq; the last one publishes the message and
 * wakes readers.  Returns 0, or the drop counter (nothing changed).
 */
int dp_pool_frag(struct dp_pool *pool, struct dp_frag_rx *st,
		 const struct dp_msg_hdr *h, const struct dp_frag_in *in,
		 u32 src_uid, u32 tok_seq);
/* The session ended: its open message becomes a skip token.  Had one? */
bool dp_pool_frag_abort(struct dp_pool *pool, struct dp_frag_rx *st);

/* Endpoint (dp_endpoint.c): a wire uid as the endpoint's owner sees it. */
u32 dp_ep_token_uid(struct dp_endpoint *ep, u32 wire_uid);

/*
 * Events (dp_genl.c, dpctl monitor): the session of @ep's edge to @peer
 * changed to @state (open, or failed with -@err); @peer came back as a new
 * incarnation.  Any context: they are sent later, from a work item.
 */
void dp_event_session(struct dp_endpoint *ep, const struct dp_addr *peer,
		      u8 state, int err);
void dp_event_peer(struct dp_endpoint *ep, const struct dp_addr *peer);

#endif /* _DP_SESS_H */
