/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Tag matching in user space: the posted receives and the unexpected
 * messages of an endpoint, both in arrival order.  Pure data structures:
 * no libfabric objects, no transport, so the rules are tested alone.
 *
 * A receive matches a message when both are tagged or both untagged, the
 * tags agree outside the receive's ignore bits (tagged only), and the
 * receive's source is FI_ADDR_UNSPEC or the message's.  The first match in
 * queue order wins, which keeps MPI's order between one source and one
 * receiver.
 */
#ifndef DPFI_TAGMATCH_H
#define DPFI_TAGMATCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <rdma/fabric.h>

#define DPFI_IOV_MAX	4

/* An intrusive singly linked FIFO. */
struct dpfi_node {
	struct dpfi_node *next;
};

struct dpfi_list {
	struct dpfi_node *head;
	struct dpfi_node **tailp;
};

typedef int (*dpfi_pred)(const struct dpfi_node *n, const void *arg);

void dpfi_list_init(struct dpfi_list *l);
void dpfi_list_push(struct dpfi_list *l, struct dpfi_node *n);
/* The first node pred accepts, unlinked if take; NULL if none. */
struct dpfi_node *dpfi_list_find(struct dpfi_list *l, dpfi_pred pred,
				 const void *arg, int take);
/* Unlink and return the first node; NULL if empty. */
struct dpfi_node *dpfi_list_pop(struct dpfi_list *l);
/* Unlink n (no-op if absent). */
void dpfi_list_remove(struct dpfi_list *l, struct dpfi_node *n);

/* A posted receive. */
struct dpfi_rx {
	struct dpfi_node node;		/* first: the posted queue */
	void *ctx;			/* the user's context */
	struct iovec iov[DPFI_IOV_MAX];
	size_t niov;
	fi_addr_t src;			/* FI_ADDR_UNSPEC: any source */
	uint64_t tag, ignore;
	uint64_t flags;			/* FI_MSG or FI_TAGGED, FI_COMPLETION, ... */
};

/* A message that arrived (or is arriving, segment by segment). */
struct dpfi_in {
	struct dpfi_node node;		/* first: the unexpected queue */
	struct dpfi_node part;		/* the list of messages still arriving */
	uint32_t nid, dpid;		/* as the sending kernel stamped them */
	fi_addr_t src;			/* the AV's address, or FI_ADDR_NOTAVAIL */
	uint64_t tag, data, total, got;
	uint8_t hflags;			/* DPFI_HF_* */
	uint8_t claimed;		/* FI_PEEK|FI_CLAIM took it */
	uint8_t discard;		/* throw the rest away */
	uint8_t aborted;		/* claimed, then its sender gave it up */
	unsigned char *buf;		/* unexpected: the bytes so far */
	struct dpfi_rx *rx;		/* the receive it completes, if matched */
};

/* What a receive is matched on. */
struct dpfi_key {
	int tagged;
	uint64_t tag;
	fi_addr_t src;
};

int dpfi_tag_match(uint64_t want, uint64_t ignore, uint64_t tag);
int dpfi_rx_matches(const struct dpfi_rx *rx, const struct dpfi_key *k);

/* The first posted receive for message k, unlinked. */
struct dpfi_rx *dpfi_posted_take(struct dpfi_list *posted, const struct dpfi_key *k);
/* The first unclaimed unexpected message rx matches; unlinked if take. */
struct dpfi_in *dpfi_unexp_find(struct dpfi_list *unexp, const struct dpfi_rx *rx, int take);
/* The posted receive with context ctx, unlinked (fi_cancel). */
struct dpfi_rx *dpfi_posted_cancel(struct dpfi_list *posted, const void *ctx);

/* Bytes of an iovec array. */
size_t dpfi_iov_len(const struct iovec *iov, size_t niov);
/*
 * Copy len bytes between buf and the bytes of iov from offset on: into
 * iov if to_iov, out of it if not.  Returns the bytes that fit.
 */
size_t dpfi_iov_xfer(const struct iovec *iov, size_t niov, uint64_t offset,
		     void *buf, size_t len, int to_iov);

#define DPFI_CONTAINER(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif /* DPFI_TAGMATCH_H */
