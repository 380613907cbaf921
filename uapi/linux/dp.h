/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * dp: Directed Point messaging -- the one contract between dp.ko and user space.
 *
 * Builds in C and C++ user space without kernel headers: only fixed-width
 * types from <stdint.h> (or <linux/types.h> in the kernel) are used, every
 * struct has explicit padding, and nothing depends on the ABI's alignment.
 *
 * Four parts:
 *   1. ioctls on an endpoint file descriptor (open("/dev/dp") + DP_IOC_BIND);
 *   2. the token buffer pool (TBP) layout, mapped read-only by mmap();
 *   3. the wire header that the kernel puts in front of every message;
 *   4. the generic netlink family "dp" used by dpctl for node administration.
 */
#ifndef _UAPI_LINUX_DP_H
#define _UAPI_LINUX_DP_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
typedef __u8 dp_u8;
typedef __u16 dp_u16;
typedef __u32 dp_u32;
typedef __u64 dp_u64;
typedef __be16 dp_be16;
typedef __be32 dp_be32;
#else
#include <stdint.h>
#include <sys/ioctl.h>
typedef uint8_t dp_u8;
typedef uint16_t dp_u16;
typedef uint32_t dp_u32;
typedef uint64_t dp_u64;
typedef uint16_t dp_be16;
typedef uint32_t dp_be32;
#endif

#define DP_DEVICE_PATH		"/dev/dp"

/* ------------------------------------------------------------------ */
/* 1. Endpoint ioctls                                                  */
/* ------------------------------------------------------------------ */

/*
 * Identifiers.  A node (network namespace) has a NID, an endpoint a DPID.
 * 0 is never a valid NID or DPID: it means "unset".
 */
#define DP_NID_NONE		0u
#define DP_DPID_NONE		0u

/* Pool sizes: the data area is a power of two between these bounds. */
#define DP_POOL_MIN		(16u * 1024)
#define DP_POOL_MAX		(64u * 1024 * 1024)

/*
 * Admission: who may send to an endpoint, chosen at bind in dp_bind.flags.
 * Each bit is a restriction; a message is delivered only if every set
 * restriction holds, otherwise it is dropped and counted on the receiver
 * (DP_CTR_RX_DROP_ADMIT, dp_ep_stats.rx_drop_admit).  0 admits anyone.
 * The sender's NID, DPID and uid are the ones stamped by its kernel.
 */
#define DP_ADMIT_ANY		0x0u	/* every endpoint of every node */
#define DP_ADMIT_PEERS		0x1u	/* only {NID, DPID} this endpoint has connected */
#define DP_ADMIT_UID		0x2u	/* only senders with the owner's uid */
#define DP_ADMIT_MASK		(DP_ADMIT_PEERS | DP_ADMIT_UID)

/*
 * Sending mode, also in dp_bind.flags.  By default every edge is lossless
 * and ordered, with credit-based flow control (docs/reliability.md).
 * DP_BIND_RAW sends without sessions, acknowledgements or credit, as dp v1
 * did: a message that meets a full pool or a lossy link is lost (counted
 * on the receiver).  For measurement; receiving is the same either way.
 */
#define DP_BIND_RAW		0x100u
#define DP_BIND_MASK		(DP_ADMIT_MASK | DP_BIND_RAW)

/* struct dp_bind: argument of DP_IOC_BIND. */
struct dp_bind {
	dp_u32 dpid;		/* endpoint id to take; EADDRINUSE if held */
	dp_u32 pool_size;	/* data area bytes; 0 = module default */
	dp_u32 flags;		/* DP_ADMIT_*, DP_BIND_RAW; any other bit: EINVAL */
	dp_u32 reserved;	/* must be 0 */
};

/* struct dp_addr: one end of a directed edge, {peer NID, peer DPID}. */
struct dp_addr {
	dp_u32 nid;
	dp_u32 dpid;
};

/*
 * struct dp_send: argument of DP_IOC_SEND, a send on an edge that is
 * connected but not the current one (write() uses the current edge).
 */
struct dp_send {
	struct dp_addr to;	/* must be a connected edge, else ENOTCONN */
	dp_u64 buf;		/* user pointer to the message */
	dp_u32 len;		/* bytes; at most dp_info.max_msg */
	dp_u32 flags;		/* must be 0 */
};

/*
 * struct dp_sendv: argument of DP_IOC_SENDV, many sends in one call, each
 * on the edge its struct dp_send names (edges may differ).  Messages are
 * sent in array order, each as DP_IOC_SEND would, until one is not
 * accepted: the ioctl returns how many were (msgs[0..count-1] are sent,
 * once each; none after).  If count < n, err holds the positive errno of
 * msgs[count], and if count is 0 the ioctl fails with it.  Only msgs[0]
 * may wait for credit (unless O_NONBLOCK): a later message that would
 * wait ends the batch with EAGAIN.  See docs/api.md.
 *
 * With DP_SENDV_RELEASE in flags, the call first releases up to release
 * messages from the head of the pool, as DP_IOC_RELEASE does (the fd must
 * be open for reading, else EBADF), then writes 0 to err and how many it
 * released to release, then sends: a receiver that answers what it has
 * read gives the room back in the same system call as its answer.  The
 * release stands when the sends then fail (EAGAIN, ENOTCONN, ...; such a
 * call is never restarted after a signal).  A caller that sets err to a
 * non-zero value first knows whether the release was done, also from a
 * kernel that refuses the flag (EINVAL).  Not through io_uring (EINVAL
 * there: a retried command would release twice).
 */
struct dp_sendv {
	dp_u64 msgs;		/* user pointer to n struct dp_send */
	dp_u32 n;		/* at most DP_SENDV_MAX, else EINVAL; 0 sends nothing */
	dp_u32 flags;		/* DP_SENDV_*, else EINVAL */
	dp_u32 err;		/* out: errno of msgs[count] if count < n, else 0 */
	union {
		dp_u32 reserved;	/* without DP_SENDV_RELEASE: must be 0 */
		dp_u32 release;		/* with it: in, to release; out, released */
	};
};

#define DP_SENDV_MAX		1024u
#define DP_SENDV_RELEASE	0x1u	/* release the head messages first */
#define DP_SENDV_FLAGS		DP_SENDV_RELEASE

/*
 * struct dp_wait: the wait policy of a blocking read() (DP_IOC_SET_WAIT,
 * DP_IOC_GET_WAIT).  A read() that finds the pool empty first polls it for
 * up to poll_usecs microseconds, yielding the CPU to any task the scheduler
 * prefers between polls, and only then sleeps; a signal ends either phase
 * with EINTR (or a restart).  0 sleeps at once.  With DP_WAIT_BUSY_POLL the
 * polling phase also drives the NIC's receive path from the reader's own
 * context (NAPI on the netdev backend, as SO_BUSY_POLL does; the RX ring on
 * dp's tulip driver), instead of waiting for its interrupt.  A bound
 * endpoint starts with the module's poll_usecs and no flags.  O_NONBLOCK
 * reads never poll.
 */
struct dp_wait {
	dp_u32 poll_usecs;	/* at most DP_WAIT_USECS_MAX, else EINVAL */
	dp_u32 flags;		/* DP_WAIT_*; any other bit: EINVAL */
	dp_u32 reserved[2];	/* must be 0 */
};

#define DP_WAIT_BUSY_POLL	0x1u
#define DP_WAIT_MASK		DP_WAIT_BUSY_POLL
#define DP_WAIT_USECS_MAX	1000000u	/* one second */

/*
 * struct dp_info: what DP_IOC_INFO reports about a bound endpoint.
 * DP_IOC_INFO and DP_IOC_STATS structs only grow at the end; the kernel
 * also answers the older, shorter sizes (info 32 and 40 bytes, stats 48,
 * 56 and 96) with a prefix.
 */
struct dp_info {
	dp_u32 nid;		/* this node's NID (0 if the node has none) */
	dp_u32 dpid;		/* bound DPID */
	dp_u32 map_size;	/* bytes to pass to mmap(): control page + data */
	dp_u32 data_size;	/* bytes in the token area */
	dp_u32 max_msg;		/* largest message write() accepts right now */
	dp_u32 n_edges;		/* connected edges */
	struct dp_addr cur;	/* current edge used by write(); 0/0 if none */
	dp_u32 admit;		/* DP_ADMIT_* chosen at bind */
	dp_u32 uid;		/* owner's uid, in the caller's user namespace */
	dp_u32 bind_flags;	/* every dp_bind.flags bit chosen at bind */
	dp_u32 reserved;	/* 0 */
};

/* struct dp_ep_stats: DP_IOC_STATS, per endpoint. */
struct dp_ep_stats {
	dp_u64 tx_msgs;
	dp_u64 tx_bytes;
	dp_u64 rx_msgs;
	dp_u64 rx_bytes;
	dp_u64 rx_drop_full;	/* arrived while the pool had no room */
	dp_u64 queued;		/* messages in the pool not yet released */
	dp_u64 rx_drop_admit;	/* refused by the admission rule (DP_ADMIT_*) */
	/* Lossless edges (docs/reliability.md); 0 for a DP_BIND_RAW sender. */
	/* frames sent, not yet acknowledged (a large message: its fragments) */
	dp_u64 tx_unacked;
	/*
	 * messages given up unacknowledged (a large message once): failed or
	 * reset sessions, edges removed, endpoint closed
	 */
	dp_u64 tx_undelivered;
	dp_u64 tx_retrans;	/* DATA frames sent again */
	dp_u64 tx_blocked;	/* sends that found no credit (waited or EAGAIN) */
	dp_u64 rx_dup;		/* duplicates suppressed (retransmissions) */
	/* Blocking reads that found the pool empty (struct dp_wait). */
	dp_u64 wait_poll;	/* began polling (poll_usecs > 0) */
	dp_u64 wait_poll_hit;	/* of those: a message came while polling */
	dp_u64 wait_sleep;	/* slept (after polling, or poll_usecs 0) */
};

/*
 * Node counters, indexed by enum dp_counter.  DP_IOC_NODE_STATS fills
 * struct dp_node_stats for the caller's network namespace; dpctl reads the
 * same values through generic netlink (DP_A_COUNTERS).  Every message the
 * node did not deliver lands in exactly one DP_CTR_*_DROP_* counter.
 */
enum dp_counter {
	DP_CTR_TX_MSGS,		/* messages handed to a NIC or delivered locally */
	DP_CTR_TX_BYTES,
	DP_CTR_TX_LOCAL,	/* of TX_MSGS: delivered within the node */
	DP_CTR_RX_MSGS,		/* messages placed in a pool */
	DP_CTR_RX_BYTES,
	DP_CTR_RX_DROP_SHORT,	/* frame shorter than the wire header */
	DP_CTR_RX_DROP_VERSION,	/* unknown wire version */
	DP_CTR_RX_DROP_TYPE,	/* unknown message type */
	DP_CTR_RX_DROP_LEN,	/* length field disagrees with the frame */
	DP_CTR_RX_DROP_NOT_NODE, /* destination NID is not this node */
	DP_CTR_RX_DROP_UNKNOWN_SRC, /* source NID not in the NART */
	DP_CTR_RX_DROP_SPOOFED,	/* source link address is not the NART's */
	DP_CTR_RX_DROP_NO_EP,	/* no endpoint bound to the destination DPID */
	DP_CTR_RX_DROP_FULL,	/* destination pool full */
	DP_CTR_RX_DROP_TOO_BIG,	/* message larger than the destination pool */
	DP_CTR_RX_DROP_NOMEM,	/* could not linearize the frame */
	DP_CTR_RX_DROP_BAD_ADDR, /* zero NID or DPID in the header */
	DP_CTR_TX_DROP_NO_ROUTE, /* destination NID not in the NART */
	DP_CTR_TX_DROP_NO_NIC,	/* no NIC attached to the node */
	DP_CTR_TX_DROP_NOMEM,	/* no transmit buffer */
	DP_CTR_TX_DROP_NIC,	/* the NIC refused the frame */
	DP_CTR_RX_DROP_RING,	/* frames the NIC lost with its RX ring full */
	DP_CTR_RX_DROP_ADMIT,	/* refused by the endpoint's admission rule */
	DP_CTR_RX_DROP_SEQ,	/* DATA ahead of a gap, or of no session */
	DP_CTR_RX_DROP_CSUM,	/* CRC32C mismatch: corrupted on the link */
	DP_CTR_RX_DROP_STALE,	/* for another incarnation of the endpoint */
	DP_CTR_RX_DROP_DUP,	/* DATA already delivered (a retransmission) */
	DP_CTR_TX_RETRANS,	/* DATA frames sent again */
	DP_CTR_TX_CTRL,		/* ACK, HELLO, RESET, ANNOUNCE frames sent */
	DP_CTR_RX_CTRL,		/* ACK, HELLO, RESET, ANNOUNCE frames accepted */
	DP_CTR_TX_UNDELIVERED,	/* messages given up without an ack */
	/*
	 * Neighbour discovery: an announce claimed a NID the NART has at
	 * another link address, or this node's own NID (never merged: the
	 * first entry stays; docs/discovery.md)
	 */
	DP_CTR_DISC_CONFLICT,
	DP_CTR_COUNT
};

#define DP_CTR_SLOTS		32	/* room for growth in the ioctl struct */

struct dp_node_stats {
	dp_u32 n;		/* out: DP_CTR_COUNT of the running module */
	dp_u32 nid;		/* out: this node's NID */
	dp_u64 ctr[DP_CTR_SLOTS];
};

#define DP_IOC_MAGIC		'D'
/* Take a DPID and allocate the pool.  Once per file. */
#define DP_IOC_BIND		_IOW(DP_IOC_MAGIC, 1, struct dp_bind)
/* Add a directed edge and make it current for write(). */
#define DP_IOC_CONNECT		_IOW(DP_IOC_MAGIC, 2, struct dp_addr)
/* Remove an edge; ENOTCONN if it does not exist. */
#define DP_IOC_DISCONNECT	_IOW(DP_IOC_MAGIC, 3, struct dp_addr)
/* Release up to *arg messages from the pool head; returns the count released. */
#define DP_IOC_RELEASE		_IOW(DP_IOC_MAGIC, 4, dp_u32)
#define DP_IOC_INFO		_IOR(DP_IOC_MAGIC, 5, struct dp_info)
#define DP_IOC_SEND		_IOW(DP_IOC_MAGIC, 6, struct dp_send)
#define DP_IOC_STATS		_IOR(DP_IOC_MAGIC, 7, struct dp_ep_stats)
/* Node counters of the caller's network namespace; works unbound too. */
#define DP_IOC_NODE_STATS	_IOR(DP_IOC_MAGIC, 8, struct dp_node_stats)
/* Send a batch of messages (struct dp_sendv); returns how many were accepted. */
#define DP_IOC_SENDV		_IOWR(DP_IOC_MAGIC, 9, struct dp_sendv)
/* The wait policy of blocking reads (struct dp_wait); bound endpoints. */
#define DP_IOC_SET_WAIT		_IOW(DP_IOC_MAGIC, 10, struct dp_wait)
#define DP_IOC_GET_WAIT		_IOR(DP_IOC_MAGIC, 11, struct dp_wait)

/*
 * io_uring (docs/api.md): IORING_OP_URING_CMD on a bound endpoint fd, with
 * sqe->cmd_op one of enum dp_uring_op and the command's 16 bytes (sqe->cmd)
 * a struct dp_uring_cmd.  The CQE's res is what the matching ioctl returns,
 * or -errno.  Unknown cmd_op: -ENOTTY; flags or an unused field not 0:
 * -EINVAL; unbound: -EBADFD; fd not open for writing (sends) or reading
 * (release, wait): -EBADF.
 */
enum dp_uring_op {
	DP_URING_SEND = 1,	/* addr: struct dp_send *, as DP_IOC_SEND; res: len */
	DP_URING_SENDV = 2,	/* addr: struct dp_sendv *, as DP_IOC_SENDV; res: count */
	DP_URING_RELEASE = 3,	/* n: messages to release, as DP_IOC_RELEASE; res: released */
	/*
	 * Completes once a message is in the pool (at once if one is): res is
	 * the number queued then (another reader may take them first).  A
	 * pending WAIT ends with -ECANCELED when the process that issued it
	 * closes the fd, or its ring exits.
	 */
	DP_URING_WAIT = 4,
};

struct dp_uring_cmd {
	dp_u64 addr;		/* SEND, SENDV: user pointer; else 0 */
	dp_u32 n;		/* RELEASE: messages; else 0 */
	dp_u32 flags;		/* must be 0 */
};

/* ------------------------------------------------------------------ */
/* 2. Token buffer pool (mmap, read-only, MAP_SHARED, offset 0)        */
/* ------------------------------------------------------------------ */

/*
 * The mapping is one control page followed by the data area:
 *
 *   [0, DP_POOL_CTRL_SIZE)         struct dp_pool_ctrl
 *   [ctrl_size, ctrl_size + size)  token buffers
 *
 * A token buffer is a struct dp_token followed by the message bytes, padded
 * to DP_TOKEN_ALIGN.  Token buffers form a FIFO: the head is at offset
 * (cons % data_size), the tail ends at (prod % data_size).  cons and prod
 * are free-running byte counters, written only by the kernel.
 *
 * The kernel publishes prod with release semantics after it has written
 * the token and the bytes; readers load prod with acquire semantics.  cons
 * advances only when the owner releases messages (fsync, DP_IOC_RELEASE,
 * read()), so the head token stays valid until then.  The kernel never
 * leaves cons on a DP_TOK_WRAP or DP_TOK_SKIP token, and never publishes
 * prod past a message it has not finished writing (a large message fills
 * its token fragment by fragment; the messages behind it wait).
 *
 * When a pool is full, an arriving message is dropped and counted
 * (DP_CTR_RX_DROP_FULL, dp_ep_stats.rx_drop_full); messages already in
 * the pool are never overwritten.
 */
#define DP_POOL_MAGIC		0x44504f4cu	/* "DPOL" */
#define DP_POOL_VERSION		1u
#define DP_POOL_CTRL_SIZE	4096u
#define DP_TOKEN_ALIGN		64u

struct dp_pool_ctrl {
	dp_u32 magic;		/* DP_POOL_MAGIC */
	dp_u32 version;		/* DP_POOL_VERSION */
	dp_u32 ctrl_size;	/* offset of the data area in the mapping */
	dp_u32 data_size;	/* bytes in the data area, a power of two */
	dp_u32 nid;		/* owner's NID at bind time */
	dp_u32 dpid;		/* owner's DPID */
	dp_u8 pad0[40];
	/* Separate cache lines: the producer runs on another CPU. */
	dp_u64 prod;		/* byte counter: end of the last message */
	dp_u8 pad1[56];
	dp_u64 cons;		/* byte counter: head token */
	dp_u8 pad2[56];
};
/*
 * The kernel stores cons, then prod.  A reader that loads cons first may
 * find it ahead of prod (the kernel passed a wrap or skip token on an
 * empty pool between the two stores): nothing is ready.
 */

/* struct dp_token: the kernel-written control header of a token buffer. */
struct dp_token {
	dp_u32 len;		/* message bytes following this header */
	dp_u32 next;		/* data-area offset of the next token buffer */
	dp_u32 src_nid;		/* stamped by the sending kernel */
	dp_u32 src_dpid;	/* stamped by the sending kernel */
	/* sender's uid as its kernel stamped it, in the owner's user ns */
	dp_u32 src_uid;
	dp_u32 seq;		/* message number on the edge's session, from 1 */
	dp_u16 flags;		/* DP_TOK_* */
	dp_u16 reserved;
	dp_u32 reserved2;
};

#define DP_TOK_WRAP		0x0001	/* padding: the next token is at offset 0 */
#define DP_TOK_RAW		0x0002	/* sent unreliably (DP_BIND_RAW sender) */
/*
 * No message: the token buffer of a large message whose sender failed
 * before its last fragment (docs/reliability.md, "Large messages").
 * Readers pass it: the next token is DP_TOKEN_SPACE(len) bytes on, at
 * `next`.  The kernel never leaves cons on one.  Not yet written by this
 * version.
 */
#define DP_TOK_SKIP		0x0004

/* Bytes a message of len bytes takes in the data area. */
#define DP_TOKEN_SPACE(len) \
	((((dp_u32)sizeof(struct dp_token) + (dp_u32)(len)) + DP_TOKEN_ALIGN - 1) & \
	 ~(DP_TOKEN_ALIGN - 1))

/* ------------------------------------------------------------------ */
/* 3. Wire format                                                      */
/* ------------------------------------------------------------------ */

/*
 * Every dp frame is an Ethernet (or link) frame of EtherType DP_ETH_P,
 * IEEE 802 local experimental 1, whose payload starts with this header in
 * network byte order, followed by len message bytes.  Bytes after those
 * (Ethernet padding of short frames) are ignored.  See docs/wire.md.
 */
#define DP_ETH_P		0x88B5
#define DP_WIRE_VERSION		3

enum dp_wire_type {
	DP_WT_DATA = 1,		/* one whole message */
	DP_WT_ACK = 2,		/* ack + credit; answers HELLO; a sender's window probe */
	DP_WT_HELLO = 3,	/* opens a session: seq is the initial sequence number */
	DP_WT_RESET = 4,	/* "no such session here": dst_inc echoes the frame's src_inc */
	/*
	 * Neighbour discovery (docs/discovery.md): "NID src_nid is at this
	 * frame's source address", sent to the link's broadcast address with
	 * dst_nid, dst_dpid and src_dpid 0 and a struct dp_wire_announce as
	 * its message (len at least DP_WIRE_ANNOUNCE_LEN; more is ignored).
	 */
	DP_WT_ANNOUNCE = 5,
};

/* dp_wire_hdr.flags */
#define DP_WF_ACK		0x0001	/* ack and credit are valid (reverse session) */
#define DP_WF_RAW		0x0002	/* DATA sent unreliably (DP_BIND_RAW) */
#define DP_WF_GAP		0x0004	/* ACK: the receiver saw a gap, resend now */
#define DP_WF_PROBE		0x0008	/* ACK from a sender: asks for a window update */
#define DP_WF_FIN		0x0010	/* RESET from a sender: it closed its session */
#define DP_WF_RETURN		0x0020	/* ACK from an idle sender: credit back down to `credit` */
#define DP_WF_BUSY		0x0040	/* RESET to a HELLO: no room for its user or node */
#define DP_WF_MASK		0x007f
/*
 * DATA of a message larger than one frame (docs/wire.md, "Fragments"): two
 * bits, 0 for a message sent whole.  Each fragment has its own seq; the
 * first one's message starts with the whole message's length (u32,
 * big-endian, DP_FRAG_TOTAL_LEN bytes).  Never on raw DATA: raw DATA with
 * them is dropped (DP_CTR_RX_DROP_TYPE).
 */
#define DP_WF_FRAG_FIRST	0x0080	/* the first fragment */
#define DP_WF_FRAG_MID		0x0100	/* neither the first nor the last */
#define DP_WF_FRAG_LAST		0x0180	/* the last fragment */
#define DP_WF_FRAG_MASK		0x0180
/*
 * DP_WF_SACK: on a HELLO, the sender takes SACK maps; on an ACK, the frame
 * carries one: DP_SACK_LEN bytes, bit i (byte i / 8, bit i % 8) set if the
 * receiver holds the message ack + 2 + i, past the gap at ack + 1.
 */
#define DP_WF_SACK		0x0200
/*
 * DP_WF_BUNDLE: on the first dp frame of a link frame, more dp frames
 * follow its message, each a whole frame (header, message, checksum of
 * its own), back to back to the end of the link frame (docs/wire.md,
 * "Bundles"): a batch's small messages share one link frame.
 */
#define DP_WF_BUNDLE		0x0400
/*
 * DP_WF_ACKNOW: on DATA, the sender's congestion window is half spent:
 * acknowledge at once rather than after the receiver's tick, so the
 * window opens before it shuts.  A hint: a receiver that ignores it only
 * answers later.
 */
#define DP_WF_ACKNOW		0x0800
/*
 * DP_WF_DUP: with DP_WF_ACK, a DATA of the acknowledged session came again
 * after it had been delivered; `dup` holds the low 16 bits of its seq (the
 * first such since the receiver's last ACK).  A sender whose timeout's
 * first resend is reported so knows the timeout was spurious: the
 * original arrived (docs/reliability.md, 5.4).  A hint: a sender that
 * ignores it only keeps the window the timeout cut.
 */
#define DP_WF_DUP		0x1000
#define DP_SACK_LEN		16
#define DP_FRAG_TOTAL_LEN	4

/*
 * Version 3 (docs/wire.md, docs/reliability.md): a message on a reliable
 * edge belongs to a session between two endpoint incarnations; seq, ack
 * and credit are that session's, the CRC32C covers message and header.
 * Version 2 ran the CRC over the header first; the frames are otherwise
 * the same.
 */
struct dp_wire_hdr {
	dp_u8 version;		/* DP_WIRE_VERSION */
	dp_u8 type;		/* enum dp_wire_type */
	dp_be16 len;		/* bytes after the header: DATA, ANNOUNCE, a SACK map */
	dp_be16 flags;		/* DP_WF_* */
	dp_be16 dup;		/* DP_WF_DUP: a duplicate's seq, low 16 bits; else 0, ignored */
	dp_be32 dst_nid;
	dp_be32 src_nid;
	dp_be32 dst_dpid;
	dp_be32 src_dpid;
	dp_be32 src_uid;	/* sender's uid in the sending kernel's init ns */
	dp_be32 seq;		/* DATA: message; HELLO: ISN; ACK: receiver's max message */
	dp_be32 ack;		/* DP_WF_ACK: reverse session delivered up to this seq */
	dp_be32 credit;		/* DP_WF_ACK: reverse session may send up to this space */
	dp_be32 src_inc;	/* sending endpoint's incarnation */
	dp_be32 dst_inc;	/* receiving endpoint's incarnation as known; 0 in HELLO */
	dp_be32 csum;		/* CRC32C of message, then header up to csum */
};

#define DP_WIRE_HDR_LEN		52

/* The message of a DP_WT_ANNOUNCE frame, in network byte order. */
struct dp_wire_announce {
	dp_be32 hold_ms;	/* keep the sender's entry this long unless heard again */
	dp_be32 reserved;	/* sent 0, ignored */
};

#define DP_WIRE_ANNOUNCE_LEN	8

/*
 * Neighbour discovery's announce interval (DP_A_DISC_INTERVAL_MS): an
 * announce goes out at once when discovery is turned on and then every
 * interval; it asks receivers to hold the entry DP_DISC_HOLD_FACTOR
 * intervals.  Receivers keep a hold within [DP_DISC_HOLD_MIN_MS,
 * DP_DISC_HOLD_MAX_MS].
 */
#define DP_DISC_INTERVAL_MIN_MS	100u
#define DP_DISC_INTERVAL_MAX_MS	60000u
#define DP_DISC_INTERVAL_DEFAULT_MS 1000u
#define DP_DISC_HOLD_FACTOR	4u
#define DP_DISC_HOLD_MIN_MS	(DP_DISC_HOLD_FACTOR * DP_DISC_INTERVAL_MIN_MS)
#define DP_DISC_HOLD_MAX_MS	(DP_DISC_HOLD_FACTOR * DP_DISC_INTERVAL_MAX_MS)

/* ------------------------------------------------------------------ */
/* 4. Generic netlink family (dpctl)                                   */
/* ------------------------------------------------------------------ */

#define DP_GENL_NAME		"dp"
#define DP_GENL_VERSION		1
/* Multicast group of DP_CMD_EVENT notifications (dpctl monitor). */
#define DP_GENL_MCGRP_EVENTS	"events"

enum dp_cmd {
	DP_CMD_UNSPEC,
	DP_CMD_NODE_GET,	/* reply: NID, BACKEND, IFNAME, LLADDR, MTU, COUNTERS,
				 * DISC_INTERVAL_MS */
	/* admin: NID and/or BACKEND + IFNAME (attach) and/or DISC_INTERVAL_MS */
	DP_CMD_NODE_SET,
	DP_CMD_NODE_DETACH,	/* admin: detach the NIC */
	DP_CMD_NART_GET,	/* dump: NID, LLADDR [ROUTE], NART_ORIGIN [NART_HEARD_MS] */
	DP_CMD_NART_SET,	/* admin: NID + LLADDR [+ ROUTE], add or replace */
	DP_CMD_NART_DEL,	/* admin: NID */
	DP_CMD_NART_FLUSH,	/* admin */
	DP_CMD_EP_GET,		/* dump: one endpoint per message */
	DP_CMD_COUNTERS_RESET,	/* admin */
	/* notification to the group "events": EV_KIND and what it names */
	DP_CMD_EVENT,
	/*
	 * admin in the initial namespace: send the probes of SCOUTS along
	 * their routes (a source-routed fabric: Myrinet), wait SCOUT_MS for
	 * the answers; reply: SCOUTS, one SCOUT per probe answered
	 */
	DP_CMD_SCOUT,
	__DP_CMD_MAX
};

/*
 * What a DP_CMD_EVENT announces, in DP_A_EV_KIND, with the node's DP_A_NID
 * and: for a session (sending side) or a peer, the endpoint's DP_A_DPID
 * and DP_A_EV_PEER_NID, DP_A_EV_PEER_DPID, plus DP_A_EDGE_ERR (a positive
 * errno) when one failed; for a NIC, DP_A_BACKEND and DP_A_IFNAME; for the
 * NART, the entry's DP_A_LLADDR, DP_A_NART_ORIGIN and its NID in
 * DP_A_EV_PEER_NID; for a NID conflict, the NID claimed in DP_A_EV_PEER_NID
 * and the claimant's link address in DP_A_LLADDR.
 */
enum dp_event {
	DP_EV_UNSPEC,
	DP_EV_SESSION_OPEN,	/* an edge's session opened (HELLO answered) */
	DP_EV_SESSION_FAILED,	/* it failed: ETIMEDOUT, ECONNREFUSED */
	DP_EV_SESSION_RESET,	/* the receiver reset it: ECONNRESET */
	DP_EV_PEER_RESTART,	/* a peer came back as a new incarnation */
	DP_EV_NIC_ATTACH,
	DP_EV_NIC_DETACH,
	DP_EV_NART_SET,		/* an entry added or replaced */
	DP_EV_NART_DEL,
	DP_EV_NART_FLUSH,
	/*
	 * neighbour discovery heard a NID claimed from a second link address,
	 * or this node's own NID from another; nothing was changed
	 */
	DP_EV_NID_CONFLICT,
	__DP_EV_MAX
};

enum dp_attr {
	DP_A_UNSPEC,
	DP_A_NID,		/* u32 */
	DP_A_BACKEND,		/* string: "netdev" */
	DP_A_IFNAME,		/* string */
	DP_A_LLADDR,		/* binary, link address (6 bytes on Ethernet) */
	DP_A_MTU,		/* u32: largest message */
	DP_A_COUNTERS,		/* nested: attribute i+1 is u64 counter i */
	DP_A_DPID,		/* u32 */
	DP_A_EP_UID,		/* u32: owner uid, in the dumping socket's user ns */
	DP_A_EP_POOL_SIZE,	/* u32 */
	DP_A_EP_QUEUED,		/* u32: messages waiting */
	/*
	 * nested u64, the values of struct dp_ep_stats: 1 tx_msgs, 2 tx_bytes,
	 * 3 rx_msgs, 4 rx_bytes, 5 rx_drop_full, 6 rx_drop_admit,
	 * 7 tx_unacked, 8 tx_undelivered, 9 tx_retrans, 10 tx_blocked,
	 * 11 rx_dup, 12 queued, 13 wait_poll, 14 wait_poll_hit, 15 wait_sleep
	 */
	DP_A_EP_STATS,
	DP_A_EP_EDGES,		/* nested: DP_A_EDGE each */
	/*
	 * nested: DP_A_NID, DP_A_DPID, DP_A_EDGE_TX_SEQ; on a reliable
	 * endpoint also the session, DP_A_EDGE_STATE to DP_A_EDGE_HEARD_MS,
	 * DP_A_EDGE_TIMEOUTS and DP_A_EDGE_UNDONE
	 */
	DP_A_EDGE,
	DP_A_EDGE_TX_SEQ,	/* u32 */
	DP_A_PAD,		/* pad before a u64; type 0 inside the numbered nests */
	DP_A_EP_ADMIT,		/* u32: DP_ADMIT_* of the endpoint */
	/* Appended for lossless edges (docs/reliability.md); numbers only grow. */
	DP_A_EP_BIND_FLAGS,	/* u32: every dp_bind.flags bit chosen at bind */
	/* flag: more edges, rx peers of the previous message's endpoint */
	DP_A_EP_CONT,
	DP_A_EDGE_STATE,	/* u32: enum dp_edge_state */
	DP_A_EDGE_ERR,		/* u32: errno the next send reports (FAILED only) */
	DP_A_EDGE_ISN,		/* u32: the session's initial sequence number */
	DP_A_EDGE_SND_UNA,	/* u32: oldest seq not acknowledged */
	DP_A_EDGE_SND_NXT,	/* u32: next seq to send */
	DP_A_EDGE_UNACKED,	/* u32: snd_nxt - snd_una */
	DP_A_EDGE_CREDIT,	/* s32: pool space the receiver still allows */
	DP_A_EDGE_CWND,		/* u32: congestion window, bytes */
	DP_A_EDGE_RTO_MS,	/* u32: retransmission timeout in force */
	DP_A_EDGE_BACKOFF,	/* u32: consecutive timeouts */
	DP_A_EDGE_HEARD_MS,	/* u32: since the peer was last heard (not IDLE) */
	DP_A_EP_RX_PEERS,	/* nested: DP_A_RX_PEER each */
	/*
	 * nested: a sender with a session to this endpoint: DP_A_NID,
	 * DP_A_DPID, DP_A_RX_PEER_ISN to DP_A_RX_PEER_CREDIT
	 */
	DP_A_RX_PEER,
	DP_A_RX_PEER_ISN,	/* u32: the session's initial sequence number */
	DP_A_RX_PEER_RCV_NXT,	/* u32: next seq expected */
	DP_A_RX_PEER_HELD,	/* u32: messages held after a gap */
	DP_A_RX_PEER_CREDIT,	/* s32: space granted and not yet arrived */
	/*
	 * binary, up to 16 bytes: a NART entry's source route (Myrinet: one
	 * byte per switch, top bit set); DP_A_LLADDR stays the peer's NIC
	 * address, which received frames are checked against
	 */
	DP_A_ROUTE,
	/* Appended for events (DP_CMD_EVENT). */
	DP_A_EV_KIND,		/* u32: enum dp_event */
	DP_A_EV_PEER_NID,	/* u32: the other end of a session */
	DP_A_EV_PEER_DPID,	/* u32 */
	/* Appended for neighbour discovery (docs/discovery.md). */
	/*
	 * u32: NODE_SET: 0 turns discovery off, else on with announces every
	 * this many ms (DP_DISC_INTERVAL_MIN_MS..MAX_MS); NODE_GET: 0 when off
	 */
	DP_A_DISC_INTERVAL_MS,
	DP_A_NART_ORIGIN,	/* u32: enum dp_nart_origin */
	DP_A_NART_HEARD_MS,	/* u32: since a discovered entry was last announced */
	/* Appended for the mapper (DP_CMD_SCOUT, dpctl myri map). */
	DP_A_SCOUTS,		/* nested: DP_A_SCOUT each, up to DP_SCOUT_MAX */
	/*
	 * nested: request DP_A_ROUTE, DP_A_SCOUT_RET; reply DP_A_SCOUT_IDX,
	 * the answering NIC's DP_A_LLADDR and its node's DP_A_NID
	 */
	DP_A_SCOUT,
	/*
	 * binary, up to 16 bytes: the route the host reached answers along;
	 * none: the probe is to come back to the sending NIC itself
	 */
	DP_A_SCOUT_RET,
	DP_A_SCOUT_MS,		/* u32: how long to wait for answers, 1..1000 */
	DP_A_SCOUT_IDX,		/* u32: the probe's place in the request, from 0 */
	/* Appended for dpctl ep: what an endpoint's pool holds. */
	/*
	 * u32: pool bytes taken, prod - cons: the queued messages' tokens,
	 * wrap padding and the whole tokens of messages open for fill
	 */
	DP_A_EP_POOL_TAKEN,
	DP_A_EP_POOL_OPEN,	/* u32: large messages open for fill (arriving) */
	/*
	 * u64: single writes whose frame autocorking held, to share a link
	 * frame, while the NIC still held an earlier frame of the endpoint
	 */
	DP_A_EP_TX_CORKED,
	/*
	 * Appended for spurious timeouts (docs/reliability.md 5.4), in an
	 * edge's nest.  u32: the edge's retransmission timeouts with DATA in
	 * flight, each a go-back, over its life (every session)
	 */
	DP_A_EDGE_TIMEOUTS,
	/*
	 * u32: of those, undone: the receiver reported the go-back's first
	 * resend a duplicate (DP_WF_DUP), so the original had arrived
	 */
	DP_A_EDGE_UNDONE,
	__DP_A_MAX
};

/* DP_A_EDGE_STATE: an edge's sending session (docs/reliability.md, 4). */
enum dp_edge_state {
	DP_EDGE_IDLE,		/* no session: the next send opens one */
	DP_EDGE_HELLO,		/* HELLO sent, waiting for the answer */
	DP_EDGE_OPEN,		/* sending */
	DP_EDGE_FAILED,		/* DP_A_EDGE_ERR is reported to the next send */
};

/* DP_A_NART_ORIGIN: who made a NART entry. */
enum dp_nart_origin {
	DP_NART_STATIC,		/* an administrator (DP_CMD_NART_SET): always wins */
	DP_NART_DISCOVERED,	/* neighbour discovery; ages out unless announced */
};

#define DP_A_MAX		(__DP_A_MAX - 1)

#define DP_SCOUT_MAX		64	/* probes per DP_CMD_SCOUT */
#define DP_SCOUT_MS_MAX		1000
#define DP_SCOUT_MS_DEFAULT	100

#endif /* _UAPI_LINUX_DP_H */
