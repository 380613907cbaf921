/* SPDX-License-Identifier: GPL-2.0 */
/*
 * io_uring command passthrough between the kernels dp builds against.
 * Kbuild probes the headers rather than trusting a version number:
 *   6.1:  <linux/io_uring.h>, cmd->cmd is the command, cmd->pdu is ours,
 *         nothing is cancelable (a pending command ends by completion).
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
#else
#define DP_URING_F_CANCEL	0

static inline void dp_uring_mark_cancelable(struct io_uring_cmd *c,
					    unsigned int issue_flags)
{
}
#endif

#endif /* _DP_URING_COMPAT_H */
