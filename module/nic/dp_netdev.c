// SPDX-License-Identifier: GPL-2.0
/*
 * netdev backend: dp over any Linux Ethernet device.  Frames of EtherType
 * DP_ETH_P arrive through a packet_type handler bound to the device and go
 * straight to the MDR, read where the device put them (never made linear);
 * messages leave through dev_queue_xmit() in an skb of the headers whose
 * page fragments are the session's kernel copy of the message, on a device
 * that takes fragments (else, and for short messages, the copy is copied
 * into the skb).  A reader that busy polls
 * (DP_WAIT_BUSY_POLL) drives the NAPI context dp's frames last came from,
 * as SO_BUSY_POLL does for a socket: on a multiqueue device, the queue
 * that delivered the last dp frame.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <net/net_namespace.h>

#include "dp.h"
#include "dp_backends.h"

struct dp_netdev {
	struct dp_nic nic;
	struct net_device *dev;
	struct packet_type pt;
	unsigned int napi_id;	/* of the last frame received; 0: none */
};

static struct dp_netdev *dp_netdev_of(const struct dp_nic *nic)
{
	return container_of(nic, struct dp_netdev, nic);
}

static unsigned int dp_netdev_mtu(const struct dp_nic *nic)
{
	return READ_ONCE(dp_netdev_of(nic)->dev->mtu);
}

static unsigned int dp_netdev_lladdr(const struct dp_nic *nic, u8 *addr)
{
	const struct net_device *dev = dp_netdev_of(nic)->dev;

	memcpy(addr, dev->dev_addr, ETH_ALEN);
	return ETH_ALEN;
}

/*
 * Messages shorter than this are copied into the skb: a copy costs less
 * than the completion a fragment needs (struct dp_netdev_zc), as on the
 * tulip (TUL_TX_COPYBREAK).
 */
#define DP_NETDEV_ZC_MIN	192u

/**
 * struct dp_netdev_zc - a transmission from the session's copy: the skb's
 *	page fragments are the copy's pages, its zerocopy completion this.
 * @u: the completion; its refcnt counts the skbs that hold the fragments
 *	(the one sent, and any copy of its head the stack made), each of
 *	which lets go in dp_netdev_zc_done().
 * @keep: the reference on the copy, let go when the last skb did.
 * @done: the frame's count for autocorking, or NULL: done then too.
 *
 * The flags: SKBFL_MANAGED_FRAG_REFS, the fragments hold no page
 * references (the copy lives while @keep is held; a path that must
 * reference the pages takes its own, skb_zcopy_downgrade_managed());
 * SKBFL_DONT_ORPHAN, a clone shares them.  A path that would keep the
 * frame in a receive queue (veth, a packet tap) copies the fragments
 * first, skb_orphan_frags_rx(), which lets go here early.
 */
struct dp_netdev_zc {
	struct ubuf_info u;
	struct dp_txref *keep;
	struct dp_txc *done;
};

/*
 * How many struct dp_netdev_zc, and skbs counted for autocorking
 * (dp_netdev_frame_send()), devices still hold: their completion is this
 * module's code, so unloading waits for the last (dp_netdev_drain()).
 */
static atomic_t dp_netdev_cb_live = ATOMIC_INIT(0);
static bool dp_netdev_draining;	/* dp_netdev_drain() waits: wake it */

/*
 * One of dp_netdev_cb_live's callbacks returned; its last step.  Only a
 * drain is woken (wake_up_var() costs 22 instructions a frame).
 */
static void dp_netdev_cb_put(void)
{
	rcu_read_lock();	/* dp_netdev_drain() waits for it to end */
	/* atomic_dec_and_test() is fully ordered: the count, then the flag */
	if (atomic_dec_and_test(&dp_netdev_cb_live) &&
	    READ_ONCE(dp_netdev_draining))
		wake_up_var(&dp_netdev_cb_live);
	rcu_read_unlock();
}

/* From any context: each skb that held the fragments, then the last. */
static void dp_netdev_zc_done(struct sk_buff *skb, struct ubuf_info *u,
			      bool zerocopy_success)
{
	struct dp_netdev_zc *zc = container_of(u, struct dp_netdev_zc, u);

	if (!refcount_dec_and_test(&u->refcnt))
		return;
	dp_txref_put(zc->keep);
	if (zc->done)
		dp_txc_done(zc->done);
	kfree(zc);
	dp_netdev_cb_put();
}

#ifdef DP_HAVE_UBUF_INFO_OPS	/* since 6.10: see Kbuild */
static const struct ubuf_info_ops dp_netdev_zc_ops = {
	.complete = dp_netdev_zc_done,
};
#endif

static void dp_netdev_zc_init(struct dp_netdev_zc *zc, struct dp_txref *keep,
			      struct dp_txc *done)
{
#ifdef DP_HAVE_UBUF_INFO_OPS
	zc->u.ops = &dp_netdev_zc_ops;
#else
	zc->u.callback = dp_netdev_zc_done;
#endif
	refcount_set(&zc->u.refcnt, 1);		/* the skb's: see below */
	zc->u.flags = SKBFL_ZEROCOPY_ENABLE | SKBFL_DONT_ORPHAN |
		      SKBFL_MANAGED_FRAG_REFS;
	dp_txref_get(keep);
	zc->keep = keep;
	if (done)
		dp_txc_hold(done);
	zc->done = done;
	atomic_inc(&dp_netdev_cb_live);
}

/*
 * Whether @len bytes at @msg, a session's copy under @keep, go to @dev as
 * page fragments: long enough, a device that takes fragments, and few
 * enough pages.  The copy is in pages of its own (dp_snd_copy_alloc()).
 */
static bool dp_netdev_zc_fits(const struct net_device *dev, const void *msg,
			      size_t len, const struct dp_txref *keep)
{
	return keep && len >= DP_NETDEV_ZC_MIN &&
	       (dev->features & NETIF_F_SG) &&
	       DIV_ROUND_UP(offset_in_page(msg) + len, PAGE_SIZE) <=
	       MAX_SKB_FRAGS;
}

/*
 * @skb's fragments become @len bytes at @msg, one per page, held through
 * @keep (by @zc) until the last skb that shares them is freed, and the
 * frame counted for @done until then.
 */
static void dp_netdev_zc_attach(struct sk_buff *skb, struct dp_netdev_zc *zc,
				const u8 *msg, size_t len,
				struct dp_txref *keep, struct dp_txc *done)
{
	bool have_ref = true;	/* skb_zcopy_set() takes the initial one */
	unsigned int off, n;
	int i = 0;

	dp_netdev_zc_init(zc, keep, done);
	skb_len_add(skb, len);
	while (len) {
		off = offset_in_page(msg);
		n = min_t(size_t, len, PAGE_SIZE - off);
		skb_fill_page_desc_noacc(skb, i++, virt_to_page(msg), off, n);
		msg += n;
		len -= n;
	}
	skb_zcopy_set(skb, &zc->u, &have_ref);
}

/*
 * dp's own pages for the heads of the skbs it sends: a ring of them per
 * CPU, cut into fragments in turn.  The stack's per-CPU fragment cache
 * (napi_alloc_frag()) reuses its page only once every fragment cut from
 * it was freed, and takes a fresh one, cleared under init_on_alloc, when
 * it was not.  A moderated NIC frees a batch's frames long after they
 * were queued, so each page of a batch of small messages was a fresh,
 * cleared one (clear_page_erms, 175 of 1249 instructions a message in a
 * batch of 32, docs/perf/profile-exact-send32-e1000-ring.md).  A ring
 * page is reused when the ring comes round to it and holds its only
 * reference; otherwise the ring lets go of it (the frames still holding
 * it free it) and takes a new one.  Bound: DP_NETDEV_PAGES pages a CPU
 * that sent (256 KiB with 4 KiB pages), and DP_NETDEV_BIG big ones below
 * (256 KiB) a CPU that sent frames larger than a page, kept until
 * dp_netdev_drain().
 *
 * Only this CPU, with bottom halves disabled, touches its ring: a sender
 * in process context and one in softirq (an ACK, a retransmission) do
 * not interleave.  A page is handed out only from its ring, so a count of
 * one cannot go up behind the ring's back; a speculative reference
 * (compaction, a GUP-fast walk) only makes it look busy for a while.
 */
#define DP_NETDEV_PAGES	64

/*
 * A frame larger than a page (a jumbo frame's, on a device that takes no
 * fragments, such as virtio-net on QEMU's socket link) was a linear skb
 * from alloc_skb(): a large kmalloc, whose four pages init_on_alloc cleared
 * for each 9000-byte frame (about 1750 of 9525 instructions per KiB sent
 * over virtio-net, docs/perf/profile-exact-bw64k-virtio-kmalloc.md).
 * Such a head is cut from a second ring of DP_NETDEV_BIG compound pages
 * of DP_NETDEV_BIG_ORDER (three 9000-byte frames a page), kept and reused
 * as the small ring's are.  Without such a page (memory too fragmented),
 * the frame's head comes from alloc_skb() as before.
 */
#define DP_NETDEV_BIG		8
#define DP_NETDEV_BIG_ORDER	3

struct dp_netdev_ring {
	struct page *page[DP_NETDEV_PAGES];
	unsigned int slot;	/* the page being cut */
	unsigned int off;	/* how much of it was handed out */
};

struct dp_netdev_pages {
	struct dp_netdev_ring small;	/* order 0, DP_NETDEV_PAGES pages */
	struct dp_netdev_ring big;	/* DP_NETDEV_BIG_ORDER, DP_NETDEV_BIG */
};

static struct dp_netdev_pages __percpu *dp_netdev_pages;

/* @r's next page of @order (one of @n), empty; false without memory. */
static bool dp_netdev_next_page(struct dp_netdev_ring *r, unsigned int n,
				unsigned int order)
{
	gfp_t gfp = GFP_ATOMIC | __GFP_NOWARN | __GFP_NOMEMALLOC;
	struct page *page;

	r->slot = (r->slot + 1) % n;
	page = r->page[r->slot];
	if (!page || page_ref_count(page) != 1) {
		if (page)
			put_page(page);
		/* Never from the reserves: the ring keeps its pages. */
		if (order)
			gfp |= __GFP_COMP | __GFP_NORETRY;
		page = alloc_pages(gfp, order);
		r->page[r->slot] = page;
		if (!page)
			return false;
	}
	r->off = 0;
	return true;
}

/*
 * @size bytes (a multiple of a cache line) of a ring page: of the small
 * ring's up to a page, else of the big ring's; NULL past that, or without
 * memory.
 */
static __always_inline void *dp_netdev_frag(unsigned int size)
{
	unsigned int n = DP_NETDEV_PAGES, order = 0;
	struct dp_netdev_ring *r;
	struct page *page;
	void *data;

	lockdep_assert_in_softirq();	/* bottom halves disabled */
	r = &this_cpu_ptr(dp_netdev_pages)->small;
	if (unlikely(size > PAGE_SIZE)) {
		if (size > PAGE_SIZE << DP_NETDEV_BIG_ORDER)
			return NULL;
		r = &this_cpu_ptr(dp_netdev_pages)->big;
		n = DP_NETDEV_BIG;
		order = DP_NETDEV_BIG_ORDER;
	}
	if ((!r->page[r->slot] || r->off + size > PAGE_SIZE << order) &&
	    !dp_netdev_next_page(r, n, order))
		return NULL;
	page = r->page[r->slot];
	get_page(page);		/* the skb's; skb_free_frag() lets go of it */
	data = page_address(page) + r->off;
	r->off += size;
	return data;
}

static void dp_netdev_ring_free(struct dp_netdev_ring *r)
{
	int i;

	for (i = 0; i < DP_NETDEV_PAGES; i++)
		if (r->page[i])
			put_page(r->page[i]);
}

/* Once nothing sends any more: every ring lets go of its pages. */
static void dp_netdev_pages_free(void)
{
	int cpu;

	if (!dp_netdev_pages)
		return;
	for_each_possible_cpu(cpu) {
		struct dp_netdev_pages *r = per_cpu_ptr(dp_netdev_pages, cpu);

		dp_netdev_ring_free(&r->small);
		dp_netdev_ring_free(&r->big);
	}
	free_percpu(dp_netdev_pages);
	dp_netdev_pages = NULL;
}

/*
 * An skb of @size bytes of room whose head is a fragment of a ring page
 * (dp_netdev_frag()), and whose sk_buff comes from the per-CPU cache
 * NAPI's completions refill, as a driver builds the skb of a received
 * frame (napi_build_skb()): alloc_skb() takes both from the slab, and with
 * Debian's init_on_alloc each is cleared first, the head's whole object
 * (512 bytes for a 1-byte message) before the frame overwrites it.  A ring
 * page is cleared once, when it is allocated; reused, it is not, as the
 * stack's fragment cache does not clear the page it recycles.  No byte of
 * the head is sent that the frame did not write (skb->len is the frame's).
 * Sleeps nowhere: the ring and the cache are per CPU, under
 * local_bh_disable().  Not netdev_alloc_skb(): it, and napi_alloc_skb(),
 * take a slab head for anything under about 700 bytes, which is every
 * small message's frame.
 */
static __always_inline struct sk_buff *dp_netdev_alloc_skb(unsigned int size)
{
	unsigned int frag = SKB_DATA_ALIGN(size) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	local_bh_disable();
	data = dp_netdev_frag(frag);
	if (data) {
		skb = napi_build_skb(data, frag);
		if (!skb)
			skb_free_frag(data);
	}
	local_bh_enable();
	if (unlikely(!data && frag > PAGE_SIZE))
		return alloc_skb(size, GFP_KERNEL);	/* no big ring page */
	return skb;
}

/*
 * @skb, its dp frames from its network header on, to @dst by @dev: the
 * link header in front, then the device's queue.  Consumes @skb.  Inlined,
 * as dp_netdev_alloc_skb() is, in a single message's path (18 instructions
 * a message as calls).
 */
static __always_inline int dp_netdev_send(struct net_device *dev,
					  struct sk_buff *skb, const u8 *dst)
{
	int rc;

	skb->dev = dev;
	skb->protocol = htons(DP_ETH_P);
	if (dev_hard_header(skb, dev, DP_ETH_P, dst, NULL, skb->len) < 0) {
		kfree_skb(skb);		/* lets go of the copy, if it held it */
		return -EINVAL;
	}
	/* A queue that refuses the frame (full, or device going down). */
	rc = dev_queue_xmit(skb);
	if (rc < 0)
		return rc;
	return net_xmit_eval(rc) ? -ENOBUFS : 0;
}

/*
 * An skb counted for autocorking is let go of (freed, or orphaned by a
 * device that hands it on): its struct dp_txc is in the shared info's
 * destructor_arg, which only a zerocopy skb (never this one) uses.
 */
static void dp_netdev_tx_done(struct sk_buff *skb)
{
	dp_txc_done(skb_shinfo(skb)->destructor_arg);
	dp_netdev_cb_put();
}

/*
 * Count @skb, a frame without fragments of the session's copy, for @done
 * (if not NULL) until it is let go of.  It has no socket: its destructor
 * is ours to use.
 */
static void dp_netdev_count(struct sk_buff *skb, struct dp_txc *done)
{
	if (!done)
		return;
	dp_txc_hold(done);
	atomic_inc(&dp_netdev_cb_live);
	skb_shinfo(skb)->destructor_arg = done;
	skb->destructor = dp_netdev_tx_done;
}

/*
 * One frame to @dst: the headers in the skb, and the message as fragments
 * of the session's copy (dp_netdev_zc_fits()) or, without memory for the
 * completion, copied after them.
 */
static int dp_netdev_xmit(struct dp_nic *nic, const u8 *dst,
			  const struct dp_wire_hdr *hdr, const void *msg,
			  size_t len, struct dp_txref *keep,
			  struct dp_txc *done)
{
	struct net_device *dev = dp_netdev_of(nic)->dev;
	int head = LL_RESERVED_SPACE(dev), tail = dev->needed_tailroom;
	struct dp_netdev_zc *zc = NULL;
	struct sk_buff *skb;

	if (dp_netdev_zc_fits(dev, msg, len, keep))
		zc = kmalloc(sizeof(*zc), GFP_KERNEL);
	skb = dp_netdev_alloc_skb(head + sizeof(*hdr) + (zc ? 0 : len) + tail);
	if (!skb) {
		kfree(zc);
		return -ENOMEM;
	}
	skb_reserve(skb, head);
	skb_reset_network_header(skb);
	skb_put_data(skb, hdr, sizeof(*hdr));
	if (zc) {
		dp_netdev_zc_attach(skb, zc, msg, len, keep, done);
	} else {
		skb_put_data(skb, msg, len);
		dp_netdev_count(skb, done);
	}
	return dp_netdev_send(dev, skb, dst);
}

/*
 * A batch's bundle is written straight into an skb's head (struct
 * dp_backend's @frame_get): only one whose head a ring page can hold, which
 * then costs no clearing of its own (dp_netdev_alloc_skb(); without a big
 * ring page, a slab head as before); a larger one is not worth it against
 * the copy.
 */
static void *dp_netdev_frame_get(struct dp_nic *nic, unsigned int size,
				 void **handle)
{
	struct net_device *dev = dp_netdev_of(nic)->dev;
	unsigned int all = LL_RESERVED_SPACE(dev) + size + dev->needed_tailroom;
	struct sk_buff *skb;

	if (SKB_DATA_ALIGN(all) +
	    SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) >
	    PAGE_SIZE << DP_NETDEV_BIG_ORDER)
		return NULL;
	skb = dp_netdev_alloc_skb(all);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	*handle = skb;
	return skb->data;
}

/*
 * The frames written at frame_get()'s buffer, by @nic's device: a device
 * that came to the node since (same backend) may want more headroom.
 */
static int dp_netdev_frame_send(struct dp_nic *nic, void *handle,
				const u8 *dst, unsigned int len,
				struct dp_txc *done)
{
	struct net_device *dev = dp_netdev_of(nic)->dev;
	struct sk_buff *skb = handle;

	skb_put(skb, len);
	if (skb_cow_head(skb, LL_RESERVED_SPACE(dev))) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	dp_netdev_count(skb, done);
	return dp_netdev_send(dev, skb, dst);
}

static void dp_netdev_frame_free(void *handle)
{
	kfree_skb(handle);
}

/*
 * A frame's message where the device left it (struct dp_payload): in the
 * skb's head, its page fragments or its frag list.  Only ever read, so a
 * shared skb (a packet tap holds it too) needs no copy of its own.  Offsets
 * are within skb->len: dp_wire_decode_parts() checked the message's length
 * against the frame's before anything reads it.
 *
 * Its @len bytes from @off, piece by piece: copied to @to (dp_memcpy(),
 * not skb_copy_bits()'s memcpy(): see dp_copy.c), or else run through
 * CRC32C @crc, which is returned.  Both callers inline it.
 */
static __always_inline u32 dp_netdev_walk(const void *src, u32 off, u32 len,
					  u8 *to, u32 crc)
{
	struct sk_buff *skb = (struct sk_buff *)src;
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *p;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		n = skb_seq_read(done, &p, &st);
		if (!n) {	/* past the end; it unmapped what it had */
			if (to)	/* (never: see above) zeroes, */
				memset(to + done, 0, len - done);
			return ~crc;	/* or a bad checksum */
		}
		n = min(n, len - done);	/* a fragment may run past @len */
		if (to)
			dp_memcpy(to + done, p, n);
		else
			crc = dp_crc32c(crc, p, n);
		done += n;
	}
	skb_abort_seq_read(&st);	/* unmaps the last fragment */
	return crc;
}

static void dp_netdev_copy(const void *src, u32 off, void *to, u32 len)
{
	dp_netdev_walk(src, off, len, to, 0);
}

static u32 dp_netdev_crc(const void *src, u32 off, u32 len, u32 crc)
{
	return dp_netdev_walk(src, off, len, NULL, crc);
}

static const struct dp_payload_ops dp_netdev_payload_ops = {
	.copy = dp_netdev_copy,
	.crc = dp_netdev_crc,
};

/*
 * The frame in @skb to the MDR, read where it lies: no linear copy of a
 * frame the device left in pieces (virtio-net's mergeable buffers).
 */
static void dp_netdev_frame(struct dp_node *node, const struct sk_buff *skb)
{
	const struct dp_payload msg = {
		.data = skb_headlen(skb) >= skb->len ?
			skb->data + DP_WIRE_HDR_LEN : NULL,
		.ops = &dp_netdev_payload_ops,
		.src = skb,
		.base = DP_WIRE_HDR_LEN,
	};
	u8 buf[DP_WIRE_HDR_LEN];

	/* NULL for a frame too short to hold one: the MDR counts it short */
	dp_mdr_rx_parts(node, eth_hdr(skb)->h_source, ETH_ALEN,
			skb_header_pointer(skb, 0, DP_WIRE_HDR_LEN, buf),
			skb->len, &msg);
}

/* Softirq: one frame from the device, straight to the MDR. */
static int dp_netdev_rcv(struct sk_buff *skb, struct net_device *dev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct dp_netdev *nd = container_of(pt, struct dp_netdev, pt);
	struct dp_node *node = nd->nic.node;
	unsigned int napi_id;

	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_OUTGOING) {
		dp_count(node, DP_CTR_RX_DROP_NOT_NODE);
		goto out;
	}
	napi_id = dp_skb_napi_id(skb);
	if (napi_id && napi_id != READ_ONCE(nd->napi_id))
		WRITE_ONCE(nd->napi_id, napi_id);
	dp_netdev_frame(node, skb);
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* What napi_busy_loop() asks: the reader's end condition, as dp_nic's. */
struct dp_netdev_poller {
	bool (*end)(void *arg);
	void *arg;
};

/* Called in an RCU read-side section with preemption off. */
static bool dp_netdev_loop_end(void *arg, unsigned long start_time)
{
	const struct dp_netdev_poller *p = arg;

	return p->end(p->arg);
}

/*
 * Busy polling: napi_busy_loop() runs the device's NAPI poll from the
 * reader's context, which hands dp's frames to dp_netdev_rcv() as the
 * softirq would, and yields itself when the scheduler asks.  Nothing to
 * poll until a frame has told which NAPI context dp's traffic uses.
 */
static bool dp_netdev_busy_poll(struct dp_nic *nic, bool (*end)(void *arg),
				void *arg)
{
	struct dp_netdev_poller p = { .end = end, .arg = arg };

	return dp_napi_busy_loop(READ_ONCE(dp_netdev_of(nic)->napi_id),
				 dp_netdev_loop_end, &p);
}

static void dp_netdev_detach(struct dp_nic *nic)
{
	struct dp_netdev *nd = dp_netdev_of(nic);

	dev_remove_pack(&nd->pt);	/* waits for handlers in flight */
	dev_put(nd->dev);
	kfree(nd);
}

static const struct dp_backend dp_netdev_backend;

/*
 * The last DP_NETDEV_SEEN distinct devices dp attached to, by namespace
 * cookie and ifindex: no reference, a device may go away meanwhile (and
 * then gives back what it held).  dp_netdev_kick() finds them again.
 * Under rtnl.
 */
#define DP_NETDEV_SEEN	8
struct dp_netdev_seen {
	u64 net;
	int ifindex;
};

static struct dp_netdev_seen dp_netdev_seen[DP_NETDEV_SEEN];
static unsigned int dp_netdev_nseen;	/* ever; the slot is it modulo */

static void dp_netdev_remember(const struct net_device *dev)
{
	u64 net = dev_net(dev)->net_cookie;
	struct dp_netdev_seen *s;
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < min_t(unsigned int, dp_netdev_nseen, DP_NETDEV_SEEN); i++)
		if (dp_netdev_seen[i].net == net &&
		    dp_netdev_seen[i].ifindex == dev->ifindex)
			return;	/* (not memcmp(): the struct has padding) */
	s = &dp_netdev_seen[dp_netdev_nseen++ % DP_NETDEV_SEEN];
	s->net = net;
	s->ifindex = dev->ifindex;
}

/*
 * One frame from @dev to its own address: a zeroed dp header, which no
 * node takes (another host sees it as PACKET_OTHERHOST and counts it
 * not_node; this one no longer listens).  A device that gives back what
 * it sent only when it sends again, or when a completion it asked for
 * arrives, gives it back now: virtio-net reclaims finished buffers at
 * the start of every transmit, and tells the host there is more to do.
 */
static void dp_netdev_kick_dev(struct net_device *dev)
{
	struct sk_buff *skb;

	if (!netif_running(dev) || !netif_carrier_ok(dev))
		return;
	skb = alloc_skb(LL_RESERVED_SPACE(dev) + DP_WIRE_HDR_LEN +
			dev->needed_tailroom, GFP_KERNEL);
	if (!skb)
		return;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	skb_put_zero(skb, DP_WIRE_HDR_LEN);
	dp_netdev_send(dev, skb, dev->dev_addr);
}

/*
 * Kick every device dp_netdev_remember() knows that still exists; @say:
 * log which.  Process context; takes rtnl (for the list), then net_rwsem.
 */
static void dp_netdev_kick(bool say)
{
	struct dp_netdev_seen seen[DP_NETDEV_SEEN];
	struct net_device *dev;
	unsigned int i, n;
	struct net *net;

	rtnl_lock();
	n = min_t(unsigned int, dp_netdev_nseen, DP_NETDEV_SEEN);
	memcpy(seen, dp_netdev_seen, n * sizeof(seen[0]));
	rtnl_unlock();
	down_read(&net_rwsem);	/* the namespaces stay; devices may go */
	for_each_net(net) {
		for (i = 0; i < n; i++) {
			if (net->net_cookie != seen[i].net)
				continue;
			dev = dev_get_by_index(net, seen[i].ifindex);
			if (!dev)
				continue;
			if (say)
				pr_info("dp: %s: one frame to itself, so that it gives back what it holds\n",
					dev->name);
			dp_netdev_kick_dev(dev);
			dev_put(dev);
		}
	}
	up_read(&net_rwsem);
}

/* The Ethernet device named @ifname in @net, or an ERR_PTR.  Under rtnl. */
static struct net_device *dp_netdev_find(struct net *net, const char *ifname)
{
	struct net_device *dev;

	ASSERT_RTNL();
	dev = __dev_get_by_name(net, ifname);
	if (!dev)
		return ERR_PTR(-ENODEV);
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN)
		return ERR_PTR(-EOPNOTSUPP);
	return dev;
}

/* Whether dp_netdev_attach() would find a usable device. */
static int dp_netdev_check(struct dp_node *node, const char *ifname)
{
	return PTR_ERR_OR_ZERO(dp_netdev_find(node->net, ifname));
}

/* Called with rtnl and node->cfg_lock held (see struct dp_backend). */
static int dp_netdev_attach(struct dp_node *node, const char *ifname)
{
	struct net_device *dev;
	struct dp_netdev *nd;

	lockdep_assert_held(&node->cfg_lock);
	dev = dp_netdev_find(node->net, ifname);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	nd = kzalloc(sizeof(*nd), GFP_KERNEL);
	if (!nd)
		return -ENOMEM;
	dev_hold(dev);
	nd->dev = dev;
	dp_nic_init(&nd->nic, &dp_netdev_backend, node, dev, dev->name);
	nd->pt.type = htons(DP_ETH_P);
	nd->pt.dev = dev;
	nd->pt.func = dp_netdev_rcv;
	dev_add_pack(&nd->pt);
	dp_netdev_remember(dev);
	dp_node_publish_nic(node, &nd->nic);
	return 0;
}

/*
 * Set once dp_netdev_exit() starts: unregister_netdevice_notifier() then
 * replays NETDEV_UNREGISTER for every device that stays, which must not
 * detach nodes as if their devices went away (dp_pernet_exit() detaches
 * them next, without claiming that).
 */
static bool dp_netdev_exiting;

/*
 * A device we use is being unregistered or moved to another namespace, or
 * its MTU changed (the node's largest message with it).  Under rtnl.
 */
static int dp_netdev_event(struct notifier_block *nb, unsigned long event,
			   void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);

	ASSERT_RTNL();
	if (dp_netdev_exiting)
		return NOTIFY_DONE;
	if (event == NETDEV_UNREGISTER)
		dp_node_detach_hw(dp_node_of(dev_net(dev)), dev);
	else if (event == NETDEV_CHANGEMTU)
		dp_node_mtu_changed(dp_node_of(dev_net(dev)), dev);
	return NOTIFY_DONE;
}

static struct notifier_block dp_netdev_nb = {
	.notifier_call = dp_netdev_event,
};

static const struct dp_backend dp_netdev_backend = {
	.name = "netdev",
	.broadcast = true,
	.check = dp_netdev_check,
	.attach = dp_netdev_attach,
	.detach = dp_netdev_detach,
	.xmit = dp_netdev_xmit,
	.mtu = dp_netdev_mtu,
	.lladdr = dp_netdev_lladdr,
	.frame_get = dp_netdev_frame_get,
	.frame_send = dp_netdev_frame_send,
	.frame_free = dp_netdev_frame_free,
	.busy_poll = dp_netdev_busy_poll,
};

/* The ring is let go of by dp_netdev_drain(), once nothing sends. */
int dp_netdev_init(void)
{
	int err;

	dp_netdev_pages = alloc_percpu(struct dp_netdev_pages);
	if (!dp_netdev_pages)
		return -ENOMEM;
	err = register_netdevice_notifier(&dp_netdev_nb);
	if (err)
		goto err_pages;
	err = dp_backend_register(&dp_netdev_backend);
	if (err)
		goto err_nb;
	return 0;

err_nb:
	unregister_netdevice_notifier(&dp_netdev_nb);
err_pages:
	dp_netdev_pages_free();
	return err;
}

/* Nodes still on a netdev are detached by dp_pernet_exit(). */
void dp_netdev_exit(void)
{
	rtnl_lock();
	dp_netdev_exiting = true;
	rtnl_unlock();
	dp_backend_unregister(&dp_netdev_backend);
	unregister_netdevice_notifier(&dp_netdev_nb);
}

/*
 * Once no node sends any more: wait until devices freed every frame sent
 * from a session's copy, and until their completions returned.  A device
 * frees what it holds once it transmitted it, or when it is removed; but
 * some give a transmitted frame back only when they transmit again or a
 * completion interrupt comes: a 6.1 virtio-net guest once held six of
 * dp's frames for 18 minutes after the last one (make soak), and closing
 * the device would not have freed them.  So each second without the last
 * back, every device dp used is kicked (dp_netdev_kick()).  Then the
 * rings let go of their pages (frames still held keep theirs).  Also the
 * last step of a failed load, where it finds nothing to wait for.
 */
void dp_netdev_drain(void)
{
	unsigned int s = 0;

	WRITE_ONCE(dp_netdev_draining, true);
	smp_mb();	/* the flag, then the count; pairs with dp_netdev_cb_put() */
	while (!wait_var_event_timeout(&dp_netdev_cb_live,
				       !atomic_read(&dp_netdev_cb_live), HZ)) {
		dp_netdev_kick(!s);
		if (!(++s % 10))
			pr_warn("dp: waiting for %d frames a device holds\n",
				atomic_read(&dp_netdev_cb_live));
	}
	synchronize_rcu();
	dp_netdev_pages_free();
}
