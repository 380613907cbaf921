/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdp: the Directed Point API (Lee, Tam, Wang, HKU 1997) on top of dp.ko.
 *
 * An endpoint is a file descriptor on /dev/dp bound to a DPID.  Sending is a
 * write() on the current directed edge; receiving is dp_read(), which looks
 * at the read-only token buffer pool mapped into this process and makes no
 * system call.  A received message stays in the pool until dp_fsync()
 * releases it.  The plain UNIX calls keep their meaning on the same fd:
 * read() = blocking receive with copy (and release), write() = send,
 * fsync() = release one message, poll()/epoll readiness.
 *
 * Errors: functions return -1 (or NULL) and set errno; the kernel's errno
 * values are listed in docs/contract.md.
 *
 * Thread safety: different endpoints may be used from different threads
 * freely.  On one endpoint, dp_write()/write() may be called from any number
 * of threads (the kernel serialises sends), but the receive side (dp_read,
 * dp_token_of, dp_fsync, read) has one head message: use it from one thread
 * at a time, or serialise it yourself.  dp_close() must not race with any
 * other call on the same fd.  dp_open()/dp_mmap()/dp_close() on different
 * fds are safe concurrently.
 */
#ifndef _LIBDP_DP_H
#define _LIBDP_DP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * In the source tree the uapi header sits at ../uapi; installed, it is
 * <linux/dp.h>.  Prefer the tree's copy so no -I is needed there.
 */
#if defined(__has_include)
#if __has_include("../uapi/linux/dp.h")
#include "../uapi/linux/dp.h"
#else
#include <linux/dp.h>
#endif
#else
#include <linux/dp.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* What dp_mmap() reports about an endpoint's token buffer pool. */
typedef struct dp_mmap {
	const void *base;		/* start of the mapping (the control page) */
	size_t map_size;		/* bytes mapped */
	const unsigned char *data;	/* token area: base + ctrl->ctrl_size */
	uint32_t data_size;		/* bytes in the token area */
	const struct dp_pool_ctrl *ctrl; /* prod/cons counters, read-only */
} dp_mmap_t;

/* Open /dev/dp, bind dpid with the module's default pool, map the pool. */
int dp_open(uint32_t dpid);
/* As dp_open with a pool of pool_size bytes (power of two, 16 KiB..64 MiB). */
int dp_open_pool(uint32_t dpid, uint32_t pool_size);
/*
 * As dp_open_pool (pool_size 0: the module's default), admitting only the
 * senders that admit allows: DP_ADMIT_ANY (0), or any of DP_ADMIT_PEERS
 * (edges this endpoint has connected) and DP_ADMIT_UID (the owner's uid).
 * Refused messages are dropped and counted (dp_ep_stats.rx_drop_admit).
 * DP_BIND_RAW may be or'ed in: the endpoint then sends unreliably (no
 * acknowledgement, retransmission or credit; see docs/reliability.md).
 */
int dp_open_admit(uint32_t dpid, uint32_t pool_size, uint32_t admit);
/* Add the directed edge to {nid, dpid} and make it current for dp_write. */
int dp_connect(int fd, uint32_t nid, uint32_t dpid);
/* Remove an edge (ENOTCONN if absent). */
int dp_disconnect(int fd, uint32_t nid, uint32_t dpid);
/* Send one message on the current edge; returns len. */
ssize_t dp_write(int fd, const void *msg, size_t len);
/* Send one message on a connected edge that need not be the current one. */
ssize_t dp_send(int fd, uint32_t nid, uint32_t dpid, const void *msg, size_t len);
/*
 * Send n messages in one system call, msgs[i] on the connected edge
 * msgs[i].to (edges may differ; .flags must be 0), in array order, each as
 * dp_send() would.  Returns how many were accepted: msgs[0..count-1] were
 * sent, once each, and none after.  If count < n, errno is the error of
 * msgs[count]; -1 with errno if none was accepted (0 for n == 0).  Blocking
 * unless O_NONBLOCK: each message waits for credit as dp_write() does.
 */
int dp_sendv(int fd, const struct dp_send *msgs, unsigned int n);
/*
 * dp_sendv() that first releases up to *release messages from the head of
 * the pool, as dp_fsync(fd, *release) would, in the same system call (fd
 * open for reading and writing).  *release is set to how many were
 * released, also when no message is sent (-1 with errno EAGAIN, say): 0 if
 * the call failed before it released (EBADF, EBADFD, or EINVAL from a dp
 * without DP_SENDV_RELEASE).  n may be 0: a release alone.
 */
int dp_sendv_release(int fd, const struct dp_send *msgs, unsigned int n,
		     unsigned int *release);
/*
 * Non-blocking, zero-copy receive without a system call: if a message is at
 * the head of the pool, set *addr to its first byte (inside the read-only
 * mapping) and return its length; return 0 if the pool is empty.  The same
 * message is returned until dp_fsync() releases it.
 */
ssize_t dp_read(int fd, char **addr);
/*
 * The kernel-written token of the message at addr (as returned by dp_read):
 * src_nid, src_dpid, src_uid and seq as stamped by the sending kernel.
 * NULL with EINVAL if addr is not a message in fd's pool.
 */
const struct dp_token *dp_token_of(int fd, const char *addr);
/* Release up to n messages from the head; returns the number released. */
int dp_fsync(int fd, int n);
/*
 * The wait policy of read() on fd (struct dp_wait, DP_IOC_SET_WAIT): poll
 * the pool for up to poll_usecs (at most DP_WAIT_USECS_MAX) before
 * sleeping, and with DP_WAIT_BUSY_POLL in flags drive the NIC's receive
 * path while polling.  0 or -1 with errno (EINVAL, EBADFD unbound, EBADF
 * not open for reading).  dp_read() never waits and is not affected.
 */
int dp_set_wait(int fd, uint32_t poll_usecs, uint32_t flags);
/* The wait policy of fd, as set (or the module's poll_usecs at bind). */
int dp_get_wait(int fd, struct dp_wait *w);
/* Describe (and map, if not yet mapped) the pool of a bound endpoint. */
int dp_mmap(int fd, dp_mmap_t *tbp);
/* DP_IOC_INFO: NID, DPID, pool sizes, largest message, current edge. */
int dp_getinfo(int fd, struct dp_info *info);
/* Unmap the pool and close the endpoint (its DPID is free again). */
int dp_close(int fd);

/*
 * The name of node counter ctr (enum dp_counter), as dpctl prints it:
 * DP_CTR_RX_DROP_FULL is "rx_drop_full".  NULL for a counter newer than
 * this library.
 */
const char *dp_counter_name(unsigned int ctr);

#ifdef __cplusplus
}
#endif

#endif /* _LIBDP_DP_H */
