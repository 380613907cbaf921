/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdp over io_uring: prepare dp's commands (IORING_OP_URING_CMD on an
 * endpoint fd, uapi/linux/dp.h) in liburing submission queue entries.
 * Header only: include it after <liburing.h> and link with -luring; libdp
 * itself does not depend on liburing.  Each CQE's res is what the matching
 * call returns, or -errno (docs/api.md):
 *   dp_uring_prep_send     one message (struct dp_send); res: its length
 *   dp_uring_prep_sendv    a batch (struct dp_sendv); res: the count
 *   dp_uring_prep_release  release up to n messages; res: how many
 *   dp_uring_prep_wait     completes once a message is in the pool; res:
 *                          messages queued then; -ECANCELED if the fd is
 *                          closed (or the ring exits) first
 * The struct dp_send or dp_sendv must stay valid until the CQE arrives.
 */
#ifndef _LIBDP_DP_URING_H
#define _LIBDP_DP_URING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <liburing.h>

#include "dp.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline void dp_uring_prep(struct io_uring_sqe *sqe, int fd, uint32_t op,
				 uint64_t addr, uint32_t n)
{
	struct dp_uring_cmd c;
	unsigned char *dst = (unsigned char *)sqe + offsetof(struct io_uring_sqe, cmd);

	memset(&c, 0, sizeof(c));
	c.addr = addr;
	c.n = n;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	/* the command's 16 bytes at sqe->cmd (over addr3 and __pad2) */
	memcpy(dst, &c, sizeof(c));
}

static inline void dp_uring_prep_send(struct io_uring_sqe *sqe, int fd, const struct dp_send *s)
{
	dp_uring_prep(sqe, fd, DP_URING_SEND, (uint64_t)(uintptr_t)s, 0);
}

static inline void dp_uring_prep_sendv(struct io_uring_sqe *sqe, int fd, struct dp_sendv *v)
{
	dp_uring_prep(sqe, fd, DP_URING_SENDV, (uint64_t)(uintptr_t)v, 0);
}

static inline void dp_uring_prep_release(struct io_uring_sqe *sqe, int fd, uint32_t n)
{
	dp_uring_prep(sqe, fd, DP_URING_RELEASE, 0, n);
}

static inline void dp_uring_prep_wait(struct io_uring_sqe *sqe, int fd)
{
	dp_uring_prep(sqe, fd, DP_URING_WAIT, 0, 0);
}

#ifdef __cplusplus
}
#endif

#endif /* _LIBDP_DP_URING_H */
