// SPDX-License-Identifier: GPL-2.0
/*
 * Frame layer, send side.  The kernel builds every header: the source NID,
 * DPID and uid come from the node and the endpoint, never from the user.
 * A frame goes to the NIC from the kernel copy the session keeps, or, for
 * our own NID, straight to the MDR (docs/reliability.md, section 7).
 */
#include <linux/cred.h>

#include "dp.h"

/*
 * The largest message the node's NIC carries (DP_MAX_MSG without one):
 * cached by the node when its NIC or the NIC's MTU changes
 * (dp_node_set_max_msg()), so no NIC reference per call.
 */
u32 dp_max_msg(struct dp_node *node)
{
	return READ_ONCE(node->max_msg);
}

bool dp_tx_local(struct dp_node *node, u32 nid)
{
	return nid == READ_ONCE(node->nid);
}

/* The node-level header fields of a frame from @ep to @to. */
void dp_tx_hdr(struct dp_endpoint *ep, struct dp_msg_hdr *h, u8 type,
	       const struct dp_addr *to)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->dst_nid = to->nid;
	h->dst_dpid = to->dpid;
	h->src_nid = READ_ONCE(ep->node->nid);
	h->src_dpid = ep->dpid;
	h->src_uid = ep->wire_uid;	/* mapped once, at bind */
	h->src_inc = ep->inc;
}

/*
 * @t for frames of @type from @ep to @to, the peer's incarnation
 * @dst_inc: built unless it is already, for this NID (the node's NID may
 * change while an edge lives: its frames then carry the new one).
 */
void dp_tx_tmpl(struct dp_endpoint *ep, struct dp_tx_tmpl *t, u8 type,
		const struct dp_addr *to, u32 dst_inc)
{
	if (t->h.type == type && t->h.dst_inc == dst_inc &&
	    t->h.src_nid == READ_ONCE(ep->node->nid) &&
	    t->h.dst_nid == to->nid && t->h.dst_dpid == to->dpid)
		return;
	dp_tx_hdr(ep, &t->h, type, to);
	t->h.dst_inc = dst_inc;
	dp_wire_encode(&t->w, &t->h);
}

/* The route @t cached for @nid, if @nic and the node's NART are its. */
static bool dp_tx_route_cached(struct dp_node *node, struct dp_nic *nic,
			       u32 nid, const struct dp_tx_tmpl *t)
{
	const struct dp_nart_tbl *tbl;
	bool hit;

	if (!t || t->route.nic != nic->id || t->route.nid != nid)
		return false;
	rcu_read_lock();
	tbl = rcu_dereference(node->nart);
	hit = tbl && tbl->gen == t->route.gen;
	rcu_read_unlock();
	return hit;
}

/*
 * Resolve the peer's link address in the NART into @addr: the address,
 * then one byte, the route's length, then the route (struct dp_backend's
 * @xmit).  An entry whose address length is not the NIC's (a 3-byte "MAC"
 * on Ethernet) is no route.  @t, if not NULL, is whose @route.dst @addr
 * is: it keeps for which table and NIC it was resolved.
 */
static int dp_tx_route(struct dp_node *node, struct dp_nic *nic, u32 nid,
		       u8 *addr, struct dp_tx_tmpl *t)
{
	const struct dp_nart_entry *e;
	const struct dp_nart_tbl *tbl;
	unsigned int alen;
	int err = 0;

	if (t)
		t->route.nic = 0;	/* nothing cached until it is found */
	memset(addr, 0, DP_DST_MAX);
	alen = nic->ops->lladdr(nic, addr);
	rcu_read_lock();
	tbl = rcu_dereference(node->nart);
	e = dp_nart_find(tbl, nid);
	if (e && e->alen == alen) {
		memcpy(addr, e->addr, alen);
		addr[alen] = e->rlen;
		memcpy(addr + alen + 1, e->route, e->rlen);
		if (t) {
			t->route.gen = tbl->gen;
			t->route.nic = nic->id;
			t->route.nid = nid;
		}
	} else {
		err = -EHOSTUNREACH;
	}
	rcu_read_unlock();
	return err;
}

/*
 * Frame @h with @msg (h->len bytes), whose CRC state is @msg_crc
 * (dp_wire_msg_crc()), onto @nic's link, to link address @dst; its session
 * fields from template @t if there is one.  @keep: see dp_tx_frame_tmpl().
 * @done: what counts the frame while the NIC holds it, or NULL.
 */
static int dp_tx_link(struct dp_nic *nic, const u8 *dst,
		      const struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		      const void *msg, u32 msg_crc, struct dp_txref *keep,
		      struct dp_txc *done)
{
	struct dp_wire_hdr w;

	if (t)
		dp_wire_encode_from(&w, &t->w, h);
	else
		dp_wire_encode(&w, h);
	dp_wire_seal_crc(&w, msg_crc);
	return nic->ops->xmit(nic, dst, &w, msg, h->len, keep, done);
}

/* A frame @nic refused: counted as the reason says. */
static void dp_tx_count_err(struct dp_node *node, int err, u32 frames)
{
	if (err == -ENOMEM)
		dp_count_add(node, DP_CTR_TX_DROP_NOMEM, frames);
	else if (err)
		dp_count_add(node, DP_CTR_TX_DROP_NIC, frames);
}

/* The buffer, kept with the endpoint from its first batch on. */
static bool dp_tx_plug_alloc(struct dp_tx_plug *plug)
{
	plug->buf = kmalloc(DP_TX_BUNDLE_MAX, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	return plug->buf;
}

/*
 * How much of a link frame of @nic's @plug may fill with DATA frame @h, or
 * 0 if @h goes alone: a frame of more than half of that is sent from
 * where it lies (no copy into the bundle); so is a single write's when
 * the plug holds nothing, none of the endpoint's frames is in flight and
 * the write does not stream (dp_cork.c: nothing to wait for).
 */
static u32 dp_tx_plug_room(struct dp_tx_plug *plug, const struct dp_nic *nic,
			   const struct dp_msg_hdr *h)
{
	u32 size;

	if (plug->cork && !plug->stream && !plug->n &&
	    !atomic_read(&plug->txc->inflight))
		return 0;
	size = dp_nic_bundle_max(nic);
	if (h->type != DP_WT_DATA || !dp_tx_bundles(h->len, size))
		return 0;
	return plug->buf || dp_tx_plug_alloc(plug) ? size : 0;
}

/*
 * Where a new bundle's frames go, the first of @need bytes: into a buffer
 * of @nic's own if it has one to give (no copy of the bundle at the
 * flush), sized for the batch's messages left if each is about as large
 * (a link frame's @size at most: a buffer is paid for by its size, not by
 * what fills it), else into @plug->buf.  @nic is referenced.
 */
static void dp_tx_plug_open(struct dp_tx_plug *plug, struct dp_nic *nic,
			    u32 size, u32 need)
{
	u32 cap = min_t(u64, (u64)max(plug->left, 1U) * need, size);

	plug->frame = NULL;
	if (nic->ops->frame_get) {
		plug->at = nic->ops->frame_get(nic, cap, &plug->frame);
		if (plug->at) {
			plug->ops = nic->ops;
			plug->cap = cap;
			return;
		}
	}
	plug->at = plug->buf;
	plug->cap = size;
}

/*
 * Hold frame @h in @plug, after the frames held there if it fits their
 * link frame of @size bytes (same NIC, same link destination @addr, room
 * left in their buffer), else after sending those.  @addr NULL: the held
 * frames' (same NIC, same NID).  The frame is copied: the caller's @msg
 * may go at once.  @nic is referenced if no frame is held.
 */
static void dp_tx_plug_add(struct dp_tx_plug *plug, u32 size,
			   struct dp_nic *nic, const u8 *addr,
			   const struct dp_tx_tmpl *t,
			   const struct dp_msg_hdr *h, const void *msg,
			   u32 msg_crc)
{
	u32 need = DP_WIRE_HDR_LEN + h->len;
	struct dp_wire_hdr *w;

	if (plug->n && (plug->len + need > plug->cap ||
			(addr && (plug->nic != nic ||
				  memcmp(plug->addr, addr, DP_DST_MAX)))))
		dp_tx_plug_flush(plug);
	if (!plug->n) {
		plug->nic = nic;
		plug->size = size;
		if (addr)
			memcpy(plug->addr, addr, DP_DST_MAX);
		plug->first_crc = msg_crc;
		dp_tx_plug_open(plug, nic, size, need);
	}
	plug->nid = h->dst_nid;
	w = (struct dp_wire_hdr *)(plug->at + plug->len);
	if (t)
		dp_wire_encode_from(w, &t->w, h);
	else
		dp_wire_encode(w, h);
	dp_wire_seal_crc(w, msg_crc);
	dp_memcpy(w + 1, msg, h->len);
	plug->len += need;
	plug->n++;
}

/*
 * Whether DATA frame @h joins the frames @plug holds as it is, with no NIC
 * reference and no MTU check of its own: for their NID, by the NIC they
 * were routed for (compared, not dereferenced: the flush takes the
 * reference), and with room left in their link frame, whose size was read
 * from that NIC's MTU with the first.  A frame that would start the next
 * link frame takes the way of a first, to check the MTU again.
 */
static bool dp_tx_plug_joins(const struct dp_tx_plug *plug,
			     const struct dp_msg_hdr *h)
{
	u32 need = DP_WIRE_HDR_LEN + h->len;

	return plug && plug->n && plug->nid == h->dst_nid &&
	       h->type == DP_WT_DATA && 2 * need <= plug->size &&
	       plug->len + need <= plug->cap &&
	       rcu_access_pointer(plug->node->nic) == plug->nic;
}

/*
 * Where DATA frame @h's message may be copied from the user straight into
 * the bundle @plug holds, if it joins it there (dp_tx_plug_joins()) and
 * the bundle is in a NIC's own buffer (a page fragment: the copy's
 * hardened usercopy check costs more than a stack buffer's, but less than
 * the copy it saves; a slab buffer's costs more than that); else NULL,
 * and the caller copies the message first and sends it as any frame.  The
 * frame is held once dp_tx_plug_commit() has sealed it.  @plug: the
 * caller's batch (dp_tx_plugged()), not NULL.
 */
void *dp_tx_plug_slot(struct dp_tx_plug *plug, const struct dp_msg_hdr *h)
{
	if (!plug->frame || h->dst_nid == h->src_nid ||
	    !dp_tx_plug_joins(plug, h))
		return NULL;
	return plug->at + plug->len + DP_WIRE_HDR_LEN;
}

/*
 * Hold frame @h, whose message is at dp_tx_plug_slot()'s address, and whose
 * CRC state @msg_crc was run as it was copied there
 * (dp_crc32c_copy_from_user() from ~0).
 */
void dp_tx_plug_commit(struct dp_tx_plug *plug, const struct dp_msg_hdr *h,
		       u32 msg_crc)
{
	struct dp_wire_hdr *w = (struct dp_wire_hdr *)(plug->at + plug->len);

	dp_wire_encode(w, h);
	dp_wire_seal_crc(w, msg_crc);
	plug->len += DP_WIRE_HDR_LEN + h->len;
	plug->n++;
}

static int dp_tx_nic(struct dp_node *node, struct dp_tx_plug *plug,
		     struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		     const void *msg, u32 msg_crc, struct dp_txref *keep)
{
	u8 buf[DP_DST_MAX];
	u8 *addr = t ? t->route.dst : buf;
	struct dp_nic *nic;
	u32 room = 0;
	int err;

	nic = dp_nic_get(node);
	if (!nic) {
		dp_count(node, DP_CTR_TX_DROP_NO_NIC);
		return -ENETDOWN;
	}
	err = -EMSGSIZE;
	if (h->len > dp_nic_max_msg(nic))
		goto out;
	err = 0;
	if (plug)
		room = dp_tx_plug_room(plug, nic, h);
	if (room && plug->n && plug->nic == nic && plug->nid == h->dst_nid) {
		/* routed with the frames held: one lookup per link frame */
		dp_tx_plug_add(plug, room, nic, NULL, t, h, msg, msg_crc);
		goto out;
	}
	if (!dp_tx_route_cached(node, nic, h->dst_nid, t))
		err = dp_tx_route(node, nic, h->dst_nid, addr, t);
	if (err) {
		dp_count(node, DP_CTR_TX_DROP_NO_ROUTE);
		goto out;
	}
	if (room) {
		dp_tx_plug_add(plug, room, nic, addr, t, h, msg, msg_crc);
		goto out;
	}
	if (plug)
		dp_tx_plug_flush(plug);	/* frames leave in the order sent */
	err = dp_tx_link(nic, addr, t, h, msg, msg_crc, keep,
			 plug ? plug->txc : NULL);
	dp_tx_count_err(node, err, 1);
out:
	dp_nic_put(nic);
	return err;
}

/*
 * Send one frame: to a NIC, or, for our own NID, straight to the MDR
 * (node-local edges run the same protocol without a wire, and without a
 * checksum: @msg_crc is not used).  Process context only: the tulip
 * backend's xmit sleeps.  @plug, if not NULL, is the caller's batch: a
 * small DATA frame is held there, to share a link frame with the next
 * (struct dp_tx_plug); 0 then says it was routed and held.  @t, if not
 * NULL, is @h's template: its wire header is copied, not encoded again,
 * and the route it keeps saves the NART lookup while it is good.
 * @keep, if not NULL, is a reference on @msg the NIC may take to send it
 * without a copy (struct dp_txref).
 */
int dp_tx_frame_tmpl(struct dp_node *node, struct dp_tx_plug *plug,
		     struct dp_tx_tmpl *t, const struct dp_msg_hdr *h,
		     const void *msg, u32 msg_crc, struct dp_txref *keep)
{
	int err = 0;

	might_sleep();
	if (h->dst_nid == h->src_nid) {
		const struct dp_payload local = dp_payload_flat(msg);

		rcu_read_lock();
		dp_mdr_frame(node, h, &local);
		rcu_read_unlock();
	} else if (dp_tx_plug_joins(plug, h)) {
		dp_tx_plug_add(plug, plug->size, plug->nic, NULL, t, h, msg,
			       msg_crc);
	} else {
		err = dp_tx_nic(node, plug, t, h, msg, msg_crc, keep);
	}
	if (!err && h->type != DP_WT_DATA)
		dp_count(node, DP_CTR_TX_CTRL);
	return err;
}

int dp_tx_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		const void *msg)
{
	u32 crc = 0;

	if (h->dst_nid != h->src_nid)
		crc = dp_wire_msg_crc(msg, h->len);
	return dp_tx_frame_plug(node, NULL, h, msg, crc);
}

int dp_tx_frame_plug(struct dp_node *node, struct dp_tx_plug *plug,
		     const struct dp_msg_hdr *h, const void *msg, u32 msg_crc)
{
	return dp_tx_frame_tmpl(node, plug, NULL, h, msg, msg_crc, NULL);
}

int dp_tx_announce(struct dp_node *node, u32 hold_ms, u8 *lladdr)
{
	struct dp_msg_hdr h = { .type = DP_WT_ANNOUNCE,
				.len = DP_WIRE_ANNOUNCE_LEN };
	struct dp_wire_announce a;
	u8 dst[DP_DST_MAX];
	struct dp_nic *nic;
	unsigned int alen;
	int err;

	BUILD_BUG_ON(sizeof(a) != DP_WIRE_ANNOUNCE_LEN);
	h.src_nid = READ_ONCE(node->nid);
	if (!h.src_nid)
		return -EADDRNOTAVAIL;
	nic = dp_nic_get(node);
	if (!nic)
		return -ENETDOWN;
	err = -EOPNOTSUPP;
	if (!nic->ops->broadcast)
		goto out;
	alen = nic->ops->lladdr(nic, lladdr);
	memset(dst, 0xff, alen);	/* the link's broadcast address */
	dst[alen] = 0;			/* no route */
	dp_wire_announce_encode(&a, hold_ms);
	err = dp_tx_link(nic, dst, NULL, &h, &a,
			 dp_wire_msg_crc(&a, sizeof(a)), NULL, NULL);
	if (!err) {
		dp_count(node, DP_CTR_TX_CTRL);
		err = alen;
	}
out:
	dp_nic_put(nic);
	return err;
}

/*
 * Bundles (docs/wire.md): a batch's small DATA frames to one link
 * destination leave in as few link frames as hold them.  The plug of an
 * endpoint belongs to one batch at a time, the task that took it
 * (dp_tx_plug_start()); other tasks' sends on the endpoint go as they
 * would without it.  Nothing the plug holds waits past the batch, nor
 * past any sleep of the batch's sender on the peer (the session flushes
 * it first: the peer may need those frames to answer).
 */

struct dp_tx_plug *dp_tx_plugged(struct dp_endpoint *ep)
{
	return READ_ONCE(ep->plug.owner) == current ? &ep->plug : NULL;
}

bool dp_tx_plug_start(struct dp_endpoint *ep)
{
	if (cmpxchg(&ep->plug.owner, NULL, current))
		return false;		/* another task's batch has it */
	ep->plug.node = ep->node;
	ep->plug.left = 1;
	ep->plug.cork = false;
	ep->plug.stream = false;
	return true;
}

/*
 * Send @plug's frames by @nic, the NIC they were routed for: from the
 * NIC's own buffer if they are in one, else copied into the NIC's;
 * counted in the endpoint's frames in flight (autocorking).
 */
static int dp_tx_plug_xmit(struct dp_tx_plug *plug, struct dp_nic *nic)
{
	struct dp_wire_hdr *w = (struct dp_wire_hdr *)plug->at;

	if (plug->frame)
		return nic->ops->frame_send(nic, plug->frame, plug->addr,
					    plug->len, plug->txc);
	return nic->ops->xmit(nic, plug->addr, w, w + 1,
			      plug->len - DP_WIRE_HDR_LEN, NULL, plug->txc);
}

/*
 * Send what @plug holds (nothing if @plug is NULL or empty): one link
 * frame, whose first dp frame says DP_WF_BUNDLE when more follow it.  It
 * goes by the NIC the frames were routed for (a buffer of a NIC's own only
 * by a NIC of the same backend: another could have come to the same
 * address), or not at all (counted): their sessions resend them as they
 * would a lost frame.
 */
void dp_tx_plug_flush(struct dp_tx_plug *plug)
{
	struct dp_wire_hdr *w;
	struct dp_nic *nic;
	int err;

	if (!plug || !plug->n)
		return;
	might_sleep();
	w = (struct dp_wire_hdr *)plug->at;
	if (plug->n > 1) {
		w->flags |= cpu_to_be16(DP_WF_BUNDLE);
		dp_wire_seal_crc(w, plug->first_crc);
	}
	nic = dp_nic_get(plug->node);
	if (nic && nic == plug->nic && (!plug->frame || nic->ops == plug->ops)) {
		err = dp_tx_plug_xmit(plug, nic);
		dp_tx_count_err(plug->node, err, plug->n);
	} else {
		if (plug->frame)
			plug->ops->frame_free(plug->frame);
		dp_count_add(plug->node, DP_CTR_TX_DROP_NO_NIC, plug->n);
	}
	if (nic)
		dp_nic_put(nic);
	plug->frame = NULL;
	plug->nic = NULL;
	plug->len = 0;
	plug->n = 0;
}

void dp_tx_plug_end(struct dp_endpoint *ep)
{
	dp_tx_plug_flush(&ep->plug);
	/* the next batch's cmpxchg() sees the plug empty */
	smp_store_release(&ep->plug.owner, NULL);
}

void dp_tx_plug_free(struct dp_tx_plug *plug)
{
	if (plug->frame)	/* never: every batch ends with a flush */
		plug->ops->frame_free(plug->frame);
	kfree(plug->buf);
}
