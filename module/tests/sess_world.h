/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small world for the host tests of the session layer: nodes, endpoints
 * with a real dp_snd_ep and dp_rcv over a real dp_ring, and a network that
 * keeps every frame the sessions send (dp_tx_frame()) until the test
 * delivers it, drops it or looks at it.  Delivery dispatches by type as
 * the MDR does.  The kernel beneath is module/tests/mock/kmock.h.
 */
#ifndef _DP_SESS_WORLD_H
#define _DP_SESS_WORLD_H

#include "dp_snd.h"
#include "dp_rcv.h"
#include "dp_disc.h"
#include "unit.h"

#define W_EDGES		4
#define W_EPS		8
#define W_FRAMES	16384
#define W_MSG_MAX	9000

struct dp_node {
	u32 nid;
	u32 max_msg;
	u64 ctr[DP_CTR_COUNT];
	/* neighbour discovery's world (test_disc.c) */
	struct dp_disc disc;
	struct dp_nart_tbl *nart;
	u8 mac[6];
	bool nic;		/* attached to the link */
	unsigned int ev_set, ev_del, ev_conflict;
	u32 ev_nid;		/* the last conflict's NID and address */
	u8 ev_addr[DP_LLADDR_MAX];
};

struct dp_pool {
	struct dp_ring ring;
	u8 *data;
	u32 refused;
};

struct w_edge {
	struct dp_snd s;
	bool used;
};

struct dp_endpoint {
	struct dp_node *node;
	u32 dpid;
	u32 uid;
	u32 inc;
	bool refuse;		/* the admission rule refuses HELLOs */
	bool open;
	struct mutex lock;
	struct dp_snd_ep snd;
	struct dp_rcv rcv;
	struct dp_pool pool;
	struct w_edge edges[W_EDGES];
};

struct w_frame {
	struct dp_msg_hdr h;
	u8 data[W_MSG_MAX];
	bool done;		/* delivered or dropped */
	bool held;		/* in a batch's plug: not on the wire yet */
};

/*
 * The world's NIC sends a DATA frame's message from the session's copy, as
 * the tulip backend does: it holds a reference on the copy (struct
 * dp_txref) until it lets go, and checks then that the bytes did not
 * change meanwhile.  It lets go of all it holds when a frame arrives
 * anywhere (the tulip reclaims what it sent before it receives), of the
 * oldest when it would hold more than W_NIC_RING, and of all at teardown;
 * with nic_late set, arrivals leave them held until w_nic_release().
 */
#define W_NIC_RING	16
struct w_held {
	struct dp_txref *ref;
	const void *msg;
	u32 len;
	u32 crc;		/* of the bytes when sent */
};

struct w_world {
	struct dp_node nodes[2];
	struct dp_endpoint eps[W_EPS];
	struct w_frame *frames;
	unsigned int n_frames;
	int tx_err;		/* dp_tx_frame() fails with this, if set */
	bool (*drop)(const struct w_frame *f);	/* lose a frame on the way */
	unsigned int no_ep;	/* frames for no endpoint */
	unsigned int dispatched;	/* frames w_dispatch() handed on */
	/* events: the last session state and error, peer restarts */
	u8 ev_state;
	int ev_err;
	unsigned int ev_peer;
	unsigned int tmpl_builds;	/* header templates built (dp_tx_tmpl()) */
	unsigned int crc_checked;	/* frames whose CRC state was checked */
	struct w_held held[W_NIC_RING];	/* the NIC's, oldest first */
	unsigned int n_held;
	unsigned int nic_sent;	/* frames the NIC sent from a copy */
	bool nic_late;		/* arrivals do not make the NIC let go */
	struct dp_endpoint *plug_ep;	/* its sends are a batch's (plugged) */
	unsigned int plug_flushes;	/* dp_tx_plug_flush() calls */
};

extern struct w_world w;

/* A fresh world: node 1 and node 2, no endpoints; the mock reset. */
void w_setup(void);
/*
 * Close what is open, then check what every test must leave: no lock rule
 * broken, nothing allocated, no timer or work left.
 */
void w_teardown(void);

struct dp_endpoint *w_ep(unsigned int i, struct dp_node *node, u32 dpid,
			 u32 pool_size, u32 inc);
struct dp_snd *w_connect(struct dp_endpoint *ep, u32 nid, u32 dpid);

/*
 * The two-endpoint world both session tests start from: endpoint A (node
 * 1, DPID 10, incarnation W_A_INC) with an edge to B (node 2, DPID 20,
 * pool @bpool bytes, incarnation W_B_INC).
 */
#define W_A_INC	0xA1u
#define W_B_INC	0xB2u
struct dp_snd *w_pair(u32 bpool, struct dp_endpoint **a, struct dp_endpoint **b);
/* Close: every edge stopped with a FIN, then the receiving side. */
void w_close(struct dp_endpoint *ep);

/* The congestion window's unit: a full frame of node A's link (dp_snd.c). */
static inline u32 w_mss(void)
{
	return w.nodes[0].max_msg + DP_WIRE_HDR_LEN;
}

/* What a message of @len bytes weighs in node A's congestion window. */
static inline u32 w_wt(u32 len)
{
	u32 least = dp_cwnd_least(w_mss());

	return len + DP_WIRE_HDR_LEN > least ? len + DP_WIRE_HDR_LEN : least;
}

#define W_PAYLOAD	(2u << 20)
extern u8 w_payload[W_PAYLOAD];	/* what w_send() and w_send_wait() send */
int w_send(struct dp_snd *s, u32 len);			/* nonblocking */
int w_send_wait(struct dp_snd *s, u32 len);		/* the world runs meanwhile */
/* Read up to @n messages from the pool; returns how many; seqs in @seq. */
unsigned int w_read(struct dp_endpoint *ep, unsigned int n, u32 *seq);
unsigned int w_queued(struct dp_endpoint *ep);

/*
 * Hand one frame to its endpoint, dispatched by type as the MDR does; its
 * message (h->len bytes at @msg) every other time in pieces, as the netdev
 * backend hands on an skb's fragments (pieces.h), else contiguous.
 */
void w_dispatch(const struct dp_msg_hdr *h, const void *msg);
/* The contiguous message at @p, for the session API. */
#define W_FLAT(p)	(&(const struct dp_payload){ .data = (const u8 *)(p) })

/* The world's NIC lets go of every copy it holds, oldest first. */
void w_nic_release(void);

/* Deliver every frame in flight (and those they cause), then run work. */
unsigned int w_pump(void);
/* w_pump() and kmock_advance() a millisecond at a time, @ms times. */
void w_run(unsigned long ms);
/* Frames sent so far of @type whose flags include @flags. */
unsigned int w_count(u8 type, u16 flags);
/* The newest frame sent of @type with @flags, or NULL. */
const struct w_frame *w_last(u8 type, u16 flags);
/* Frames in flight (sent, not delivered or dropped). */
unsigned int w_in_flight(void);
/* Drop every frame in flight. */
void w_drop_all(void);

struct dp_snd_info w_info(struct dp_snd *s);
/* The receiving side's session with sender {nid, dpid}; false if none. */
bool w_rinfo(struct dp_endpoint *ep, u32 nid, u32 dpid, struct dp_rcv_info *ri);
unsigned int w_rx_peers(struct dp_endpoint *ep);
struct dp_ep_stats w_stats(struct dp_endpoint *ep);

#endif /* _DP_SESS_WORLD_H */
