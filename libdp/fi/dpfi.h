/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdp-fi: the libfabric provider "dp" (docs/mpi.md).  The objects and
 * the calls between the provider's files.
 *
 * Locking: one lock per domain, taken by every entry point that touches
 * an endpoint, AV or CQ of that domain (FI_THREAD_SAFE, coarse).  Functions
 * named *_locked expect it held.  It is a word taken with one atomic
 * exchange and given back with one store, inline: nothing under it
 * blocks, and a thread that finds it held yields the CPU until it is free
 * (a pthread mutex cost about 55 instructions a pair, five pairs in each
 * leg of an MPI ping-pong: docs/mpi.md).
 */
#ifndef DPFI_H
#define DPFI_H

#include <sched.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_prov.h>

#include "tagmatch.h"
#include "transport.h"

#define DPFI_NAME		"dp"
#define DPFI_VERSION		FI_VERSION(0, 1)
#define DPFI_FI_VERSION		FI_VERSION(1, 17)
#define DPFI_CAPS		(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_REMOTE_CQ_DATA | \
				 FI_DIRECTED_RECV | FI_SOURCE)
#define DPFI_MAX_MSG		((size_t)1 << 40)	/* "any size" */
#define DPFI_INJECT_SIZE	4096
#define DPFI_QUEUE_SIZE		1024
#define DPFI_POOL_DEFAULT	(4u << 20)	/* 1 MiB segments fit its max_msg */
#define DPFI_SEG_DEFAULT	(1u << 20)	/* payload bytes per dp message */
#define DPFI_SEG_MIN		1024u
#define DPFI_CQ_EPS		8		/* endpoints bound to one CQ */
#define DPFI_RX_CACHE		64		/* posted receives kept for reuse */

/* An address: the endpoint {NID, DPID}; what fi_getname returns. */
struct dpfi_addr {
	uint32_t nid;
	uint32_t dpid;
};

struct dpfi_fabric {
	struct fid_fabric fid;
};

struct dpfi_domain {
	struct fid_domain fid;
	int lock;			/* dpfi_lock() */
	const struct dpfi_tp_ops *tp;
	enum fi_av_type av_type;
	struct dpfi_list eps;		/* struct dpfi_ep, by dnode */
};

static inline void dpfi_lock(struct dpfi_domain *dom)
{
	while (__atomic_exchange_n(&dom->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&dom->lock, __ATOMIC_RELAXED))
			sched_yield();
}

static inline void dpfi_unlock(struct dpfi_domain *dom)
{
	__atomic_store_n(&dom->lock, 0, __ATOMIC_RELEASE);
}

struct dpfi_av {
	struct fid_av fid;
	struct dpfi_domain *dom;
	enum fi_av_type type;
	struct dpfi_addr *tab;		/* FI_AV_TABLE: index = fi_addr */
	size_t n, cap;
};

/* A completion as the provider keeps it: every format is cut from it. */
struct dpfi_cqe {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
};

struct dpfi_ep;

struct dpfi_cq {
	struct fid_cq fid;
	struct dpfi_domain *dom;
	enum fi_cq_format format;
	struct dpfi_cqe *ring;
	size_t cap, head, count;
	struct dpfi_list errs;		/* struct dpfi_cqerr */
	struct dpfi_ep *eps[DPFI_CQ_EPS]; /* progressed by reads: the first neps */
	size_t neps;
	int signaled;
};

struct dpfi_ep {
	struct fid_ep fid;
	struct dpfi_node dnode;		/* the domain's list */
	struct dpfi_domain *dom;
	struct dpfi_av *av;
	struct dpfi_cq *tx_cq, *rx_cq;
	int tx_selective, rx_selective;	/* FI_SELECTIVE_COMPLETION */
	uint64_t caps, tx_op_flags, rx_op_flags;
	uint32_t want_dpid;		/* from info->src_addr, or 0 */
	struct dpfi_tp *tp;		/* set by FI_ENABLE */
	struct dpfi_list posted;	/* struct dpfi_rx */
	struct dpfi_list unexp;		/* struct dpfi_in */
	struct dpfi_list partial;	/* struct dpfi_in, by part */
	size_t seg_max;			/* payload bytes per dp message */
	size_t seg_cur;			/* what the edges took lately, <= seg_max */
	unsigned char *sbuf;		/* header + segment being sent */
	uint64_t rx_dropped;		/* segments that made no sense */
	unsigned int idle_polls;	/* progress calls in a row that took nothing */
	struct dpfi_list rx_cache;	/* spent struct dpfi_rx, for the next post */
	unsigned int rx_ncache;		/* at most DPFI_RX_CACHE */
};

/* info.c */
extern struct fi_provider dpfi_prov;
int dpfi_getinfo(uint32_t version, const char *node, const char *service,
		 uint64_t flags, const struct fi_info *hints, struct fi_info **info);
size_t dpfi_env_size(const char *name, size_t def);

/* fabric.c, domain.c */
int dpfi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
int dpfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		     struct fid_domain **dom, void *context);
void dpfi_fid_init(struct fid *fid, size_t fclass, void *context, struct fi_ops *ops);
/* Returns -FI_ENOSYS: the operations this provider does not have. */
int dpfi_no_op(void);
#define DPFI_NOSYS(type) ((type)(void (*)(void))dpfi_no_op)
/* The struct fi_ops members every object of this provider leaves out. */
#define DPFI_FID_NOSYS \
	.ops_open = DPFI_NOSYS(int (*)(struct fid *, const char *, uint64_t, void **, void *)), \
	.tostr = DPFI_NOSYS(int (*)(const struct fid *, char *, size_t)), \
	.ops_set = DPFI_NOSYS(int (*)(struct fid *, const char *, uint64_t, void *, void *))
#define DPFI_FID_NOBIND \
	.bind = DPFI_NOSYS(int (*)(struct fid *, struct fid *, uint64_t)), \
	.control = DPFI_NOSYS(int (*)(struct fid *, int, void *))

/* eq.c */
int dpfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		 struct fid_eq **eq, void *context);
/* fi_strerror into buf (if any); what fi_cq_strerror and fi_eq_strerror give. */
const char *dpfi_strerror(int prov_errno, char *buf, size_t len);

/* av.c */
int dpfi_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		 struct fid_av **av, void *context);
int dpfi_av_addr(const struct dpfi_av *av, fi_addr_t fa, struct dpfi_addr *out);
fi_addr_t dpfi_av_reverse(const struct dpfi_av *av, uint32_t nid, uint32_t dpid);

/* cq.c */
int dpfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		 struct fid_cq **cq, void *context);
int dpfi_cq_push(struct dpfi_cq *cq, const struct dpfi_cqe *c);
int dpfi_cq_push_err(struct dpfi_cq *cq, const struct fi_cq_err_entry *e);
int dpfi_cq_add_ep(struct dpfi_cq *cq, struct dpfi_ep *ep);
void dpfi_cq_del_ep(struct dpfi_cq *cq, struct dpfi_ep *ep);

/* ep.c, ep_ops.c */
int dpfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		  struct fid_ep **ep, void *context);
extern struct fi_ops_msg dpfi_msg_ops;
extern struct fi_ops_tagged dpfi_tagged_ops;

/* rx.c: receiving and matching */
void dpfi_progress_locked(struct dpfi_ep *ep);
/* Progress on every enabled endpoint of the domain. */
void dpfi_progress_domain_locked(struct dpfi_domain *dom);
ssize_t dpfi_recv_locked(struct dpfi_ep *ep, struct dpfi_rx *rx);
ssize_t dpfi_cancel_locked(struct dpfi_ep *ep, void *ctx);
void dpfi_rx_free_all(struct dpfi_ep *ep);

/* tx.c: sending */
struct dpfi_tx {
	const struct iovec *iov;
	size_t niov;
	fi_addr_t dest;
	void *ctx;
	uint64_t tag, data, flags;	/* FI_TAGGED, FI_REMOTE_CQ_DATA, FI_COMPLETION, FI_INJECT */
};
ssize_t dpfi_send_locked(struct dpfi_ep *ep, const struct dpfi_tx *tx);

/* Which completion a send or receive with op flags gets. */
static inline int dpfi_wants_completion(int selective, uint64_t flags)
{
	return !(flags & FI_INJECT) && (!selective || (flags & FI_COMPLETION));
}

#endif /* DPFI_H */
