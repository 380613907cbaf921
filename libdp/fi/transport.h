/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The seam between the provider and dp: one endpoint's transport.
 *
 * dpfi_tp_libdp is the real one (libdp over /dev/dp); dpfi_tp_fake keeps
 * pools in memory inside the process, for the host tests.  The provider
 * sees only this table, so both run the same provider code.
 *
 * Every call returns 0 (or a count) on success and a negative errno on
 * failure.  Nothing here blocks: a send that finds no room returns -EAGAIN
 * and the provider makes progress on its own pool before it tries again
 * (a send to oneself, or two peers sending to each other, cannot deadlock).
 */
#ifndef DPFI_TRANSPORT_H
#define DPFI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

struct dpfi_tp;				/* one bound endpoint */

/* The head message of the pool and the token the sending kernel stamped. */
struct dpfi_tp_msg {
	const unsigned char *buf;	/* read-only, valid until consumed */
	size_t len;
	uint32_t src_nid;
	uint32_t src_dpid;
};

struct dpfi_tp_ops {
	const char *name;
	/* 1 if endpoints can be opened here at all (e.g. /dev/dp exists). */
	int (*available)(void);
	/* Bind dpid (0: the transport picks a free one) with a pool of pool_size. */
	int (*open)(uint32_t dpid, uint32_t pool_size, struct dpfi_tp **tp);
	/* This endpoint's own {NID, DPID}. */
	void (*self)(const struct dpfi_tp *tp, uint32_t *nid, uint32_t *dpid);
	/* Add the directed edge to {nid, dpid}; 0 also if it exists already. */
	int (*connect)(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid);
	/*
	 * Send one message on a connected edge.  -ENOTCONN: connect first;
	 * -EAGAIN: no room now, nothing sent; -EMSGSIZE: too large for this
	 * edge now, nothing sent.  Whatever it returns, it may also release
	 * the consumed messages, as release would (in the same system call).
	 */
	int (*send)(struct dpfi_tp *tp, uint32_t nid, uint32_t dpid,
		    const void *buf, size_t len);
	/* The oldest message not yet consumed: 1 and *m, 0 if none. */
	int (*peek)(struct dpfi_tp *tp, struct dpfi_tp_msg *m);
	/* Done with the message peek returned; the next peek moves on. */
	void (*consume)(struct dpfi_tp *tp);
	/*
	 * Give the consumed messages' room back to the senders, if at least
	 * min (> 0) of them, or 1/DPFI_RELEASE_SHARE of the pool, wait for
	 * it; the count released, else 0.
	 */
	int (*release)(struct dpfi_tp *tp, unsigned int min);
	void (*close)(struct dpfi_tp *tp);
};

/* Consumed messages holding this share of the pool are released at once. */
#define DPFI_RELEASE_SHARE	16

extern const struct dpfi_tp_ops dpfi_tp_libdp;
extern const struct dpfi_tp_ops dpfi_tp_fake;

/*
 * Test only: the environment variable that makes the provider use the
 * in-memory fake instead of /dev/dp (docs/mpi.md, "Tests").
 */
#define DPFI_FAKE_ENV "FI_DP_TEST_FAKE"

/* The transport the provider uses: the fake if DPFI_FAKE_ENV is set. */
const struct dpfi_tp_ops *dpfi_tp_select(void);

/* The fake's knobs (tests): largest message and pool bytes per endpoint. */
void dpfi_fake_config(size_t max_msg, size_t pool_bytes);
/* The fake's node id: every fake endpoint lives on this node. */
#define DPFI_FAKE_NID 1u

#endif /* DPFI_TRANSPORT_H */
