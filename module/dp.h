/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dp: Directed Point messaging -- internal interfaces of dp.ko.
 *
 * Parts keep the paper's names: the CAT (dp_cat.c) maps DPIDs to endpoints,
 * the MDR (dp_mdr.c) dispatches received messages, the NART (dp_node.c over
 * dp_nart.c) maps NIDs to link addresses, filled by hand or by neighbour
 * discovery (dp_disc.c), the TBP (dp_pool.c over
 * dp_ring.c) is an endpoint's receive pool, and the NIC layer (nic/) hides
 * the hardware behind struct dp_backend, one table per backend, each
 * registered by its own init (nic/dp_nic.c).  A node is a network namespace.
 *
 * The files stack, each using only the ones below it (the receive path
 * goes up the same stack):
 *   endpoint  dp_endpoint.c, dp_edge.c (dp_send()), dp_batch.c, dp_uring.c,
 *             dp_cat.c, dp_genl.c
 *   session   dp_snd.c (struct dp_snd, one per edge, in dp_snd.h) and
 *             dp_rcv.c (struct dp_rcv, one per endpoint, in dp_rcv.h);
 *             their fields are theirs alone, the rest uses their functions
 *   frame     dp_tx.c (headers, route, loopback, bundles), dp_cork.c
 *             (autocorking: single writes' bundles), dp_mdr.c (dispatch)
 *   NIC       nic/
 *
 * Lock order, outermost first:
 *   dp_disc.mutex (dp_disc.c)  neighbour discovery on/off; waits for its
 *                              work items, which take dp_node.cfg_lock
 *   rtnl_lock                  (NIC attach/detach only)
 *   dp_backend_lock (nic/dp_nic.c)  the registry; held across an attach
 *   dp_node.cfg_lock           NID, NIC attachment, NART updates
 *   dp_endpoint.lock           bind, edges
 *   dp_uq_lock (dp_limits.c)   per-uid quota table
 *   dp_snd.tx_mutex            seq assignment + first transmission; the
 *                              session's work (retransmission); NIC ->xmit
 *                              locks (a backend's tx mutex) nest inside
 *   dp_endpoint.rd_lock        readers: read(), release
 *   dp_txc.lock (dp_cork.c)    an endpoint's autocorking flush against its
 *                              release; taken with no other dp lock held,
 *                              NIC ->xmit locks nest inside (the flush)
 *   dp_rcv.lock (irq-safe)     rx peers, credit, pending RESETs; also
 *                              each edge's pairing with the rx peer of
 *                              its destination (dp_snd.pair), taken under
 *                              the edge's tx_mutex when DATA is sent
 *   dp_pool.lock (irq-safe)    ring producer/consumer, its fill slots
 *   dp_uring.arm_lock (irq-safe)  then the pool's wait queue lock, then
 *                              dp_uring.lock (the wake-up runs under it)
 * dp_snd.lock (irq-safe) guards an edge's sender state and is never held
 * with another dp lock taken inside it but the innermost: dp_ev_queue.lock
 * (dp_genl.c, irq-safe), the queue of events for dpctl monitor, taken
 * inside dp_snd.lock, dp_rcv.lock or dp_node.cfg_lock, with none inside.
 * dp_disc.lock (irq-safe) guards discovery's state on the receive path and
 * takes no dp lock inside but the workqueue's own.
 * The CAT xarray uses its own xa_lock.  The receive path takes no mutex: it finds the NIC, NART,
 * endpoint, edge and rx peer under RCU and takes only dp_snd.lock, or
 * dp_rcv.lock then dp_pool.lock; it never transmits (ACKs and RESETs go
 * through dp_rcv's ack_work, see docs/reliability.md).
 * A reader that busy polls (DP_WAIT_BUSY_POLL) holds no dp lock when it
 * calls a backend's ->busy_poll: the backend takes what its receive
 * interrupt takes (the tulip's irq-safe tp->lock, or NAPI's own state),
 * and the receive path's locks nest inside as they do there.
 */
#ifndef _DP_H
#define _DP_H

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/if.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/net_namespace.h>

#include "dp_agnostic.h"
#include "dp_nart.h"
#include "dp_disc.h"
#include "dp_rel.h"
#include "dp_ring.h"
#include "dp_wire.h"
#include "dp_compat.h"
#include "dp_sess.h"
#include "dp_snd.h"
#include "dp_rcv.h"
#include "dp_uring.h"

#define DP_MAX_MSG		65535u	/* the wire length field is 16 bits */
#define DP_MAX_EDGES		1024u

extern unsigned int dp_pool_size_default;
extern unsigned int dp_poll_usecs_default;

/* ---- NIC layer (nic/dp_nic.c) ---- */

struct dp_nic;
struct dp_node;
struct dp_scout;
struct dp_txc;

/**
 * struct dp_backend - one NIC backend: its lifecycle and its ops in one
 *	table, registered by the backend's own init with dp_backend_register().
 * @name: the name dpctl, insmod's backend= and DP_A_BACKEND use.
 * @machine_wide: its devices belong to the machine, not to the node's
 *	network namespace (PCI devices dp drives itself): attaching one
 *	needs CAP_NET_ADMIN in the initial user namespace.
 * @check: whether @attach would find a usable device @ifname for @node;
 *	0 or -errno, changes nothing.  Called with rtnl held.
 * @attach: take device @ifname for @node and publish it with
 *	dp_node_publish_nic(), in place of the node's current NIC if any
 *	(another device: the caller retires that one after).  Called with
 *	rtnl and node->cfg_lock held.
 * @detach: stop delivering and release the device; called once, after the
 *	last sender has left (see dp_nic_put()).
 * @xmit: send one message in process context: link header to @dst (the
 *	peer's link address, @lladdr's length, then one byte, the length of
 *	its route, then the route: a struct dp_nart_entry unpacked), then
 *	@hdr, then the @len bytes at @msg, copied once into the NIC's
 *	transmit buffer; or, if @keep is not NULL, sent from where they lie
 *	under a reference the NIC takes on them (dp_txref_get()) and lets go
 *	once the chip has read them (dp_txref_put(), from any context).
 *	@done, if not NULL, counts the frame as @frame_send's does; a
 *	backend without @frame_get ignores it (it never holds writes).
 *	Returns 0 or -errno; may sleep.
 * @mtu: largest link payload in bytes (dp header + message).
 * @lladdr: copy the NIC's link address into @addr; returns its length.
 * @broadcast: @xmit to the all-ones address reaches every NIC on the link
 *	(Ethernet), so neighbour discovery can announce on it.
 * @scout: optional, for a source-routed fabric's mapper (DP_CMD_SCOUT):
 *	send the @n probes of @sc, wait up to @ms milliseconds for their
 *	answers and fill those in; 0 or -errno.  May sleep.
 * @frame_get: optional, for a batch's bundle (struct dp_tx_plug): a
 *	transmit buffer of the NIC's own with room for @size bytes of dp
 *	frames, to be filled in place and then sent by @frame_send (no copy
 *	of the bundle), or let go of by @frame_free; its handle in *@handle.
 *	NULL if there is none (the caller copies, through @xmit).  Process
 *	context.
 * @frame_send: send the first @len bytes of @handle's buffer to @dst (as
 *	@xmit's) by @nic, which may be another NIC of this backend than the
 *	one the buffer came from.  Consumes @handle, whatever it returns.
 *	@done, if not NULL, counts the frame while the backend holds it:
 *	dp_txc_hold() before it is queued, dp_txc_done() (any context) once
 *	the backend has let go of it, sent or not (autocorking, dp_cork.c).
 * @frame_free: let go of @handle unsent; needs no NIC, any context but a
 *	hard interrupt (an endpoint's RCU callback frees its plug).
 * @busy_poll: optional (DP_WAIT_BUSY_POLL): from a waiting reader's
 *	process context, do what the receive interrupt does, again and again,
 *	until @end(@arg) returns true, yielding the CPU when the scheduler
 *	asks; frames go to the MDR as they would from the interrupt.
 *	Returns false, at once, if it has nothing to poll (yet): the caller
 *	then polls the pool alone.
 */
struct dp_backend {
	const char *name;
	bool machine_wide;
	bool broadcast;
	int (*check)(struct dp_node *node, const char *ifname);
	int (*attach)(struct dp_node *node, const char *ifname);
	void (*detach)(struct dp_nic *nic);
	int (*xmit)(struct dp_nic *nic, const u8 *dst,
		    const struct dp_wire_hdr *hdr, const void *msg, size_t len,
		    struct dp_txref *keep, struct dp_txc *done);
	unsigned int (*mtu)(const struct dp_nic *nic);
	unsigned int (*lladdr)(const struct dp_nic *nic, u8 *addr);
	int (*scout)(struct dp_nic *nic, struct dp_scout *sc, unsigned int n,
		     unsigned int ms);
	void *(*frame_get)(struct dp_nic *nic, unsigned int size,
			   void **handle);
	int (*frame_send)(struct dp_nic *nic, void *handle, const u8 *dst,
			  unsigned int len, struct dp_txc *done);
	void (*frame_free)(void *handle);
	bool (*busy_poll)(struct dp_nic *nic, bool (*end)(void *arg),
			  void *arg);
};

/**
 * struct dp_scout - one probe of a source-routed fabric, for the mapper.
 * @rlen: bytes of @route, 1..DP_ROUTE_MAX.
 * @blen: bytes of @back, 0..DP_ROUTE_MAX.
 * @route: the route the probe takes.
 * @back: the route the host it reaches answers along; with @blen 0 no
 *	host answers: the probe is to come back to the sending NIC.
 * @answered: the backend got the answer (or the probe back).
 * @alen: bytes of @addr.
 * @addr: the answering NIC's link address (the sender's own for a probe
 *	that came back).
 * @nid: the answering node's NID.
 */
struct dp_scout {
	u8 rlen;
	u8 blen;
	u8 route[DP_ROUTE_MAX];
	u8 back[DP_ROUTE_MAX];
	bool answered;
	u8 alen;
	u8 addr[DP_LLADDR_MAX];
	u32 nid;
};

#define DP_BACKEND_NAMSIZ	16

/**
 * struct dp_nic - one attached NIC, embedded in the backend's own struct.
 * @ops: the backend's table.
 * @node: the node this NIC serves; fixed for the NIC's life.
 * @users: senders in flight plus one for the attachment itself.
 * @idle: completed when @users drops to zero.
 * @hw: the backend's device, matched by dp_node_detach_hw().
 * @ifname: device name shown by dpctl.
 */
struct dp_nic {
	u64 id;		/* one per NIC attached since load: routes cached */
	const struct dp_backend *ops;
	struct dp_node *node;
	refcount_t users;
	struct completion idle;
	void *hw;
	char ifname[IFNAMSIZ];
};

void dp_nic_init(struct dp_nic *nic, const struct dp_backend *ops,
		 struct dp_node *node, void *hw, const char *ifname);
struct dp_nic *dp_nic_get(struct dp_node *node);
void dp_nic_put(struct dp_nic *nic);
unsigned int dp_nic_max_msg(const struct dp_nic *nic);
bool dp_nic_busy_poll(struct dp_node *node, bool (*end)(void *arg), void *arg);

/* The backend registry (nic/dp_nic.c). */
int dp_backend_register(const struct dp_backend *be);
void dp_backend_unregister(const struct dp_backend *be);
void dp_backends_lock(void);
void dp_backends_unlock(void);
const struct dp_backend *dp_backend_find(const char *name);
struct dentry *dp_backend_debugfs(void);
int dp_backends_init(void);
void dp_backends_exit(void);
/* After every node let go of its NIC: what devices still hold is let go. */
void dp_backends_drain(void);

/* ---- Node: one per network namespace (dp_node.c) ---- */

struct dp_ctrs {
	u64 c[DP_CTR_COUNT];
};

/**
 * struct dp_node - per-namespace state.
 * @net: the namespace (not refcounted: the node lives inside it).
 * @nid: this node's NID; written under @cfg_lock, read with READ_ONCE().
 * @cfg_lock: serialises configuration.
 * @nic: attached NIC or NULL; RCU.
 * @nart: NID to link address table; RCU, replaced whole on update.
 * @nart_gen: the tables published so far (struct dp_nart_tbl's @gen);
 *	under @cfg_lock.
 * @cat: the CAT, DPID to struct dp_endpoint; RCU lookups.
 * @ctr: per-CPU counters indexed by enum dp_counter.
 * @backend: the backend an attach without one uses; "" for the first
 *	registered.  Under @cfg_lock.
 * @disc: neighbour discovery (dp_disc.h).
 */
struct dp_node {
	struct net *net;
	u32 nid;
	struct mutex cfg_lock;	/* see the lock order above */
	char backend[DP_BACKEND_NAMSIZ];
	struct dp_nic __rcu *nic;
	/*
	 * dp_max_msg(): dp_nic_max_msg() of @nic, or DP_MAX_MSG without one.
	 * Written under cfg_lock whenever @nic is published or unpublished,
	 * or its MTU changes (dp_node_mtu_changed()); read with READ_ONCE.
	 */
	u32 max_msg;
	/*
	 * The largest bundle autocorking fills (dp_cork.c): @nic's MTU up to
	 * DP_TX_BUNDLE_MAX if @nic counts its frames' completions
	 * (dp_backend's @frame_send), else 0, no write held.  Written with
	 * @max_msg.
	 */
	u32 cork_max;
	struct dp_nart_tbl __rcu *nart;
	u64 nart_gen;
	struct xarray cat;
	struct dp_ctrs __percpu *ctr;
	struct dp_disc disc;
};

struct dp_node *dp_node_of(const struct net *net);
void dp_node_counters(struct dp_node *node, u64 *out);
void dp_node_counters_reset(struct dp_node *node);
int dp_node_set_nid(struct dp_node *node, u32 nid);
int dp_node_set_backend(struct dp_node *node, const char *backend);
int dp_node_attach(struct dp_node *node, const char *backend,
		   const char *ifname, bool admin);
void dp_node_detach(struct dp_node *node);
void dp_node_detach_hw(struct dp_node *node, void *hw);
void dp_node_publish_nic(struct dp_node *node, struct dp_nic *nic);
void dp_node_mtu_changed(struct dp_node *node, void *hw);
extern u32 dp_attach_fail;	/* test knob: debugfs dp/attach_fail */
int dp_nart_update(struct dp_node *node, const struct dp_nart_entry *set,
		   u32 del_nid, bool flush);
int dp_pernet_init(void);
void dp_pernet_exit(void);

/* ---- Token buffer pool (dp_pool.c) ---- */

/**
 * struct dp_pool - an endpoint's receive pool, mapped read-only to user space.
 * @lock: protects @ring and the rx statistics; taken from any context.
 * @ring: token ring over the data area.
 * @ctrl: the control page, the first page of @mem.
 * @mem: vmalloc_user() area: control page then data area.
 * @map_size: bytes of @mem.
 * @wq: readers and pollers.
 */
struct dp_pool {
	spinlock_t lock;	/* irq-safe: the MDR may run in hard irq */
	struct dp_ring ring;
	struct dp_pool_ctrl *ctrl;
	/*
	 * ring.queued as user space can see it: stored (release) after the
	 * control page's prod, so a reader woken or polled on it finds the
	 * token through the mapping.  Lockless readers use smp_load_acquire.
	 */
	u32 queued_pub;
	void *mem;
	size_t map_size;
	wait_queue_head_t wq;
	u64 rx_msgs;
	u64 rx_bytes;
	u64 rx_drop_full;
};

bool dp_pool_size_valid(u32 size);
size_t dp_pool_map_size(u32 data_size);
int dp_pool_init(struct dp_pool *pool, u32 data_size, u32 nid, u32 dpid);
void dp_pool_free(struct dp_pool *pool);
#define DP_RELEASE_BATCH	256u	/* messages released per irqs-off section */
u32 dp_pool_release(struct dp_pool *pool, u32 n);
bool dp_pool_empty(const struct dp_pool *pool);
u32 dp_pool_queued(const struct dp_pool *pool);
void dp_pool_usage(struct dp_pool *pool, u32 *taken, u32 *open);
int dp_pool_mmap(struct dp_pool *pool, struct vm_area_struct *vma);

/* ---- Privileged DPIDs, per-user limits, accounting (dp_limits.c) ---- */

/**
 * struct dp_charge - what a bound endpoint costs its owner; undone at release.
 * @user: charged @pages in locked_vm (RLIMIT_MEMLOCK); NULL with CAP_IPC_LOCK.
 * @mm: the binder's mm, charged @pages in pinned_vm; held by mmgrab().
 * @uid: charged one endpoint and @bytes in dp's per-uid table: the euid.
 * @outer: charged the same, when not @uid: the owner of the binder's
 *	outermost user namespace (its subordinate uids count against it).
 * @bytes: pool bytes, control page included, plus the edges; under dp_uq_lock.
 * @pages: the pool's pages.
 * @charged: set by dp_limits_charge(), cleared by dp_limits_uncharge().
 */
struct dp_charge {
	struct user_struct *user;
	struct mm_struct *mm;
	kuid_t uid;
	kuid_t outer;
	size_t bytes;
	unsigned long pages;
	bool charged;
};

extern unsigned int dp_dpid_priv_max;
int dp_dpid_permitted(struct net *net, u32 dpid);
int dp_limits_charge(struct dp_charge *c, const struct cred *cred, size_t bytes);
void dp_limits_uncharge(struct dp_charge *c);
int dp_limits_grow(struct dp_charge *c, size_t bytes);
void dp_limits_shrink(struct dp_charge *c, size_t bytes);
void dp_limits_init(void);

/* ---- Endpoint (dp_endpoint.c) and its edges (dp_edge.c) ---- */

/**
 * struct dp_edge - a directed edge {peer NID, peer DPID} of an endpoint.
 * @hnode: in dp_endpoint.edges, keyed by dp_edge_key().
 * @to: the peer.
 * @ep: the endpoint owning the edge (outlives it).
 * @refs: one for the hash table, one per sender using it.
 * @tx_seq: messages sent on the edge (raw mode: also their seq).
 * @snd: the edge's reliable sending session (dp_snd.h).
 */
struct dp_edge {
	struct hlist_node hnode;
	struct dp_addr to;
	struct dp_endpoint *ep;
	refcount_t refs;
	atomic_t tx_seq;
	struct dp_snd snd;
	struct rcu_head rcu;
};

/*
 * The largest link frame a batch's bundle fills (struct dp_tx_plug): the
 * NIC's MTU up to this.  On a 9000-byte link seven 1024-byte messages
 * share one frame (three under 4096; docs/wire.md, "Bundles").
 */
#define DP_TX_BUNDLE_MAX	8192

/* The bundle a link frame of @nic holds: its MTU, up to DP_TX_BUNDLE_MAX. */
static inline u32 dp_nic_bundle_max(const struct dp_nic *nic)
{
	return min_t(u32, nic->ops->mtu(nic), DP_TX_BUNDLE_MAX);
}

/*
 * Whether a message of @len bytes joins a bundle of @size: two such frames
 * fit, so a frame near the MTU goes alone and is not copied again.
 */
static inline bool dp_tx_bundles(size_t len, u32 size)
{
	return 2 * (DP_WIRE_HDR_LEN + len) <= size;
}

/**
 * struct dp_tx_plug - an endpoint's batch (DP_IOC_SENDV) holding its small
 *	DATA frames, to send them in as few link frames as hold them
 *	(docs/wire.md, "Bundles"); dp_tx.c.
 * @owner: the task whose batch holds it, or NULL; taken with cmpxchg()
 *	(dp_tx_plug_start()).  Only the owner reads or writes the rest.
 * @node: the endpoint's node.
 * @nic: the NIC the held frames were routed for, compared (never
 *	dereferenced) at the flush; no reference is held meanwhile.
 * @addr: their link destination, as dp_tx_route() gave it for @nid.
 * @nid: the NID the last frame held is for: one of that NID's frames
 *	after it is not routed again while frames are held.
 * @size: the link frame the held frames fill, from @nic's MTU when the
 *	first was held: a frame joining them is not checked against the
 *	MTU again (one check per bundle).
 * @buf: DP_TX_BUNDLE_MAX bytes, from the endpoint's first batch to its
 *	end: where the held frames go if the NIC has no buffer to give.
 * @at: where the held dp frames are, whole and sealed, back to back: in
 *	the NIC's own transmit buffer (@frame) or in @buf.
 * @frame: the handle of the NIC's buffer (struct dp_backend's
 *	@frame_get), or NULL.
 * @txc: the endpoint's frames in a NIC's hands, counted by each link
 *	frame its owner sends (autocorking, struct dp_txc); set at open.
 * @ops: the backend @frame came from, to send it by a NIC of that
 *	backend only, and to let go of it with no NIC at all.
 * @cap: bytes @at has room for, at most @size: a NIC's buffer is sized
 *	for the messages the batch has left (@left), a link frame's worth at
 *	most.
 * @left: messages of the batch yet to send, the one being sent counted
 *	(dp_batch.c sets it): 1 outside a batch's loop, U32_MAX for a single
 *	write's (@cork).
 * @cork: the owner is a single write (dp_cork.c), not a batch: its frame
 *	is held only while the plug holds others or one of the endpoint's
 *	frames is in flight, or (@stream) for the writes that follow it.
 * @stream: the owner is a single write that streams (dp_cork.c): it
 *	follows a write of its endpoint at once, with nothing read or
 *	released between them.  Its frame is held even with none in flight,
 *	for the writes to come, until the bundle is full or the hold ends.
 * @len: bytes held at @at.
 * @n: frames held.
 * @first_crc: the first frame's message CRC state: its header is sealed
 *	again with DP_WF_BUNDLE at the flush if others follow it.
 */
struct dp_tx_plug {
	struct task_struct *owner;
	struct dp_node *node;
	struct dp_nic *nic;
	u8 addr[DP_DST_MAX];
	u32 nid;
	u32 size;
	u8 *buf;
	u8 *at;
	void *frame;
	struct dp_txc *txc;
	const struct dp_backend *ops;
	u32 cap;
	u32 left;
	u32 len;
	u32 n;
	u32 first_crc;
	bool cork;
	bool stream;
};

/**
 * struct dp_txc - an endpoint's link frames a NIC still holds, for
 *	autocorking (dp_cork.c): its small single writes are held in its plug
 *	while one is.  Outlives the endpoint while a NIC holds a frame.
 * @refs: the endpoint's, one per frame counted, one per flush queued.
 * @inflight: frames counted (dp_txc_hold()) and not yet done.
 * @held: the plug was left holding frames: the completion that brings
 *	@inflight to 0 queues @flush.  Written by the plug's owner only: set
 *	by a write that leaves frames, cleared by a write that takes the
 *	plug and by the flush that sends them.
 * @lock: guards @ep against the endpoint's release (dp_cork_stop()); the
 *	NIC's transmit locks nest inside.
 * @ep: the endpoint, NULL once it is released.
 * @flush: sends what @ep's plug holds (dp_wq).
 * @last_write: local_clock() when the endpoint's last single write that
 *	took the plug returned, 0 once it has read, polled or released
 *	since: the next write streams if it comes soon after (dp_cork.c).
 * @hold: ends a streaming write's hold (queues @flush), armed once per
 *	hold; cancelled at the endpoint's release.
 */
struct dp_txc {
	refcount_t refs;
	atomic_t inflight;
	bool held;
	struct mutex lock;	/* @ep */
	struct dp_endpoint *ep;
	struct work_struct flush;
	u64 last_write;
	struct hrtimer hold;
};

int dp_cork_init(struct dp_endpoint *ep);
void dp_cork_stop(struct dp_endpoint *ep);
bool dp_cork_start(struct dp_endpoint *ep, size_t len);
void dp_cork_end(struct dp_endpoint *ep);
void dp_cork_quiet(struct dp_endpoint *ep);
void dp_txc_done(struct dp_txc *c);

/* A frame of @c's endpoint is in the NIC's hands (dp_backend's @frame_send). */
static inline void dp_txc_hold(struct dp_txc *c)
{
	refcount_inc(&c->refs);
	atomic_inc(&c->inflight);
}

bool dp_tx_plug_start(struct dp_endpoint *ep);
void dp_tx_plug_end(struct dp_endpoint *ep);
void dp_tx_plug_free(struct dp_tx_plug *plug);
void *dp_tx_plug_slot(struct dp_tx_plug *plug, const struct dp_msg_hdr *h);
void dp_tx_plug_commit(struct dp_tx_plug *plug, const struct dp_msg_hdr *h,
		       u32 msg_crc);
/* dp_tx_frame() into @plug, of a message whose CRC state @msg_crc is run */
int dp_tx_frame_plug(struct dp_node *node, struct dp_tx_plug *plug,
		     const struct dp_msg_hdr *h, const void *msg, u32 msg_crc);

/**
 * struct dp_endpoint - one open /dev/dp file.
 * @node: the node of the namespace that opened it.
 * @net: reference that keeps @node alive while the file is open.
 * @lock: serialises bind and edge changes.
 * @rd_lock: serialises readers so one message is consumed once.
 * @dpid: bound DPID, 0 until bind; read with smp_load_acquire().
 * @user_ns: the owner's user namespace (that of the task that bound the
 *	endpoint), which tokens show sender uids in; set before @dpid is
 *	published, put when the endpoint is freed.
 * @uid: the euid of the task that bound the endpoint, stamped on every
 *	message sent.
 * @wire_uid: @uid in the initial user namespace, as frames carry it
 *	(src_uid); mapped once, at bind.
 * @admit: DP_ADMIT_* restrictions on senders, fixed at bind.
 * @raw: DP_BIND_RAW: sends are unreliable (v1 semantics).
 * @inc: incarnation: random, non-zero, drawn at bind; names this endpoint's
 *	life on the wire (docs/reliability.md).
 * @edges: connected edges; RCU readers, writers hold @lock.
 * @n_edges: entries in @edges.
 * @cur: edge used by write(); RCU.
 * @tx_msgs: messages sent (dp_ep_stats).
 * @tx_bytes: their bytes.
 * @tx_corked: single writes that left their frame held (dp_cork.c).
 * @rx_drop_admit: messages refused by @admit.
 * @poll_usecs: how long a blocking read polls before it sleeps (struct
 *	dp_wait); WRITE_ONCE() by DP_IOC_SET_WAIT, READ_ONCE() by readers.
 * @wait_flags: DP_WAIT_* of struct dp_wait; as @poll_usecs.
 * @wait_poll: blocking reads that polled (dp_ep_stats.wait_poll).
 * @wait_poll_hit: of those, the ones a message ended.
 * @wait_sleep: blocking reads that slept.
 * @plug: the small frames of the batch being sent (struct dp_tx_plug).
 * @snd: what the edges' sending sessions share (dp_snd.h).
 * @rcv: the receiving sessions, one per sender (dp_rcv.h).
 * @charge: what the pool is charged to (dp_limits.c).
 * @pool: receive pool, valid once @dpid is set.
 * @uring: pending io_uring WAITs on @pool (dp_uring.h).
 */
struct dp_endpoint {
	struct dp_node *node;
	struct net *net;
	struct mutex lock;	/* bind, edges */
	struct mutex rd_lock;	/* one consumer at a time */
	u32 dpid;
	struct user_namespace *user_ns;
	kuid_t uid;
	u32 wire_uid;
	u32 admit;
	bool raw;
	u32 inc;
	DECLARE_HASHTABLE(edges, 6);
	u32 n_edges;
	struct dp_edge __rcu *cur;
	atomic64_t tx_msgs;
	atomic64_t tx_bytes;
	atomic64_t tx_corked;
	atomic64_t rx_drop_admit;
	u32 poll_usecs;
	u32 wait_flags;
	atomic64_t wait_poll;
	atomic64_t wait_poll_hit;
	atomic64_t wait_sleep;
	struct dp_tx_plug plug;
	struct dp_snd_ep snd;
	struct dp_rcv rcv;
	struct dp_charge charge;
	struct dp_pool pool;
	struct dp_uring uring;
	struct rcu_head rcu;
};

bool dp_ep_bound(const struct dp_endpoint *ep);

/* Whether @file is O_NONBLOCK for this call. */
static inline bool dp_file_nonblock(const struct file *file)
{
	/*
	 * fcntl(F_SETFL) rewrites f_flags under f_lock, which we do not
	 * take, at any moment: a call racing with it may act on either
	 * value, as the VFS's own readers do.  An intended race.
	 */
	return data_race(file->f_flags) & O_NONBLOCK;
}

u32 dp_ep_bind_flags(const struct dp_endpoint *ep);
u32 dp_ep_release_n(struct dp_endpoint *ep, u32 n);
void dp_ep_stats(struct dp_endpoint *ep, struct dp_ep_stats *st);
int dp_edge_connect(struct dp_endpoint *ep, const struct dp_addr *to);
int dp_edge_disconnect(struct dp_endpoint *ep, const struct dp_addr *to);
struct dp_edge *dp_edge_find(struct dp_endpoint *ep, const struct dp_addr *to);
struct dp_edge *dp_edge_get(struct dp_endpoint *ep, const struct dp_addr *to);
void dp_edge_put(struct dp_edge *e);
void dp_edge_free_all(struct dp_endpoint *ep);
extern const struct file_operations dp_fops;

/* ---- CAT (dp_cat.c) ---- */
int dp_cat_bind(struct dp_node *node, struct dp_endpoint *ep, u32 dpid);
void dp_cat_unbind(struct dp_node *node, struct dp_endpoint *ep);
struct dp_endpoint *dp_cat_lookup(struct dp_node *node, u32 dpid);

/* ---- Sending on an edge (dp_edge.c) ---- */
ssize_t dp_send(struct dp_endpoint *ep, const struct dp_addr *to,
		const void __user *buf, size_t len, bool nonblock);
/*
 * Sends counted together: a batch adds its messages to the endpoint's and
 * the node's counters once per chunk (dp_tx_tally_flush()), not each.
 */
struct dp_tx_tally {
	u32 msgs;
	u32 local;
	u64 bytes;
};

ssize_t dp_send_edge_tally(struct dp_edge *e, const void __user *buf,
			   size_t len, bool nonblock, struct dp_tx_tally *tally);
void dp_tx_tally_flush(struct dp_endpoint *ep, struct dp_tx_tally *tally);

/* ---- Batched sends (dp_batch.c) ---- */
long dp_ioc_sendv(struct dp_endpoint *ep, struct dp_sendv __user *arg,
		  bool nonblock, int release_err);

/* ---- Frames: send path (dp_tx.c, more in dp_sess.h) and MDR (dp_mdr.c) ---- */
void dp_mdr_rx(struct dp_node *node, const u8 *src, u8 src_len,
	       const void *frame, unsigned int len);
void dp_mdr_rx_parts(struct dp_node *node, const u8 *src, u8 src_len,
		     const void *hdr, unsigned int len,
		     const struct dp_payload *msg);
void dp_mdr_frame(struct dp_node *node, const struct dp_msg_hdr *h,
		  const struct dp_payload *payload);

/* ---- Generic netlink (dp_genl.c) ---- */
int dp_genl_init(void);
void dp_genl_exit(void);
/* A NIC attached or detached (enum dp_event); caller holds cfg_lock. */
void dp_event_nic(struct dp_node *node, u32 kind, const struct dp_nic *nic);
/* The NART changed: @e set, or entry @nid deleted, or (@nid 0) flushed. */
void dp_event_nart(struct dp_node *node, const struct dp_nart_entry *e,
		   u32 nid);

#endif /* _DP_H */
