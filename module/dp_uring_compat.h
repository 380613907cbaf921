/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io_uring command passthrough between the kernels dp builds against.
 * Kbuild probes the headers rather than trusting a version number:
 *   6.1:  <linux/io_uring.h>, cmd->cmd is the command, cmd->pdu is ours,
 *         nothing is cancelable: dp watches pending commands' rings
 *         (DP_URING_WATCH_RINGS, dp_uring_ring_dying()).
 *   6.12: <linux/io_uring/cmd.h> (DP_HAVE_IO_URING_CMD_H), the command is
 *         io_uring_sqe_cmd(cmd->sqe), the pdu io_uring_cmd_to_pdu(), and a
 *         command marked cancelable is handed back with IO_URING_F_CANCEL
 *         when its ring exits (DP_HAVE_URING_CANCEL).
 */
#ifndef _DP_URING_COMPAT_H
#define _DP_URING_COMPAT_H

#ifdef DP_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>

static inline const void *dp_uring_payload(const struct io_uring_cmd *c)
{
	return io_uring_sqe_cmd(c->sqe);
}

#define dp_uring_cmd_pdu(c, type)	io_uring_cmd_to_pdu(c, type)
#else
#include <linux/io_uring.h>

static inline const void *dp_uring_payload(const struct io_uring_cmd *c)
{
	return c->cmd;
}

#define dp_uring_cmd_pdu(c, type) \
	({ BUILD_BUG_ON(sizeof(type) > sizeof_field(struct io_uring_cmd, pdu)); \
	   (type *)(c)->pdu; })
#endif

#ifdef DP_HAVE_URING_CANCEL
#define DP_URING_F_CANCEL	IO_URING_F_CANCEL

static inline void dp_uring_mark_cancelable(struct io_uring_cmd *c,
					    unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(c, issue_flags);
}

static inline bool dp_uring_ring_dying(struct io_uring_cmd *c)
{
	return false;
}
#else
#include <linux/io_uring_types.h>
#include <linux/percpu-refcount.h>

#define DP_URING_F_CANCEL	0
#define DP_URING_WATCH_RINGS	1

static inline void dp_uring_mark_cancelable(struct io_uring_cmd *c,
					    unsigned int issue_flags)
{
}

/*
 * Nothing hands a pending command back when its ring exits, and the ring's
 * exit work WARNs after 5 minutes of waiting for it: dp looks for itself
 * (the request pins its ring until it completes).
 */
static inline bool dp_uring_ring_dying(struct io_uring_cmd *c)
{
	return percpu_ref_is_dying(&cmd_to_io_kiocb(c)->ctx->refs);
}
#endif

#endif /* _DP_URING_COMPAT_H */
