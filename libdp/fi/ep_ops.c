// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The data calls of an endpoint: fi_send/fi_recv (FI_MSG) and
 * fi_tsend/fi_trecv (FI_TAGGED) in all their forms, each turned into one
 * struct dpfi_tx or struct dpfi_rx and handed to tx.c or rx.c under the
 * domain lock.
 */
#include "dpfi.h"

static struct dpfi_ep *ep_of(struct fid_ep *fid)
{
	return (struct dpfi_ep *)fid;
}

/* What every receive call comes down to. */
static ssize_t ep_recv(struct fid_ep *fid, const struct iovec *iov, size_t niov,
		       fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx, uint64_t flags)
{
	struct dpfi_ep *ep = ep_of(fid);
	struct dpfi_rx rx = {
		.ctx = ctx, .niov = niov, .tag = tag, .ignore = ignore, .flags = flags,
		.src = ep->caps & FI_DIRECTED_RECV ? src : FI_ADDR_UNSPEC,
	};
	ssize_t r;
	size_t i;

	if (niov > DPFI_IOV_MAX || ((flags & FI_CLAIM) && !ctx))
		return -FI_EINVAL;
	for (i = 0; i < niov; i++)
		rx.iov[i] = iov[i];
	dpfi_lock(ep->dom);
	r = dpfi_recv_locked(ep, &rx);
	dpfi_unlock(ep->dom);
	return r;
}

/* What every send call comes down to. */
static ssize_t ep_send(struct fid_ep *fid, const struct iovec *iov, size_t niov,
		       fi_addr_t dest, uint64_t tag, uint64_t data, void *ctx, uint64_t flags)
{
	struct dpfi_ep *ep = ep_of(fid);
	struct dpfi_tx tx = {
		.iov = iov, .niov = niov, .dest = dest, .ctx = ctx,
		.tag = tag, .data = data, .flags = flags,
	};
	ssize_t r;

	if (niov > DPFI_IOV_MAX)
		return -FI_EINVAL;
	if ((flags & FI_INJECT) && dpfi_iov_len(iov, niov) > DPFI_INJECT_SIZE)
		return -FI_EMSGSIZE;
	dpfi_lock(ep->dom);
	r = dpfi_send_locked(ep, &tx);
	dpfi_unlock(ep->dom);
	return r;
}

#define IOV1(b, l) (&(struct iovec){ .iov_base = (void *)(b), .iov_len = (l) })
#define RXF(ep) (ep_of(ep)->rx_op_flags)
#define TXF(ep) (ep_of(ep)->tx_op_flags)

/* FI_MSG */

static ssize_t m_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
		      fi_addr_t src, void *ctx)
{
	(void)desc;
	return ep_recv(ep, IOV1(buf, len), 1, src, 0, 0, ctx, RXF(ep) | FI_MSG);
}

static ssize_t m_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t src, void *ctx)
{
	(void)desc;
	return ep_recv(ep, iov, count, src, 0, 0, ctx, RXF(ep) | FI_MSG);
}

static ssize_t m_recvmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	return ep_recv(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, 0, msg->context,
		       flags | FI_MSG);
}

static ssize_t m_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, void *ctx)
{
	(void)desc;
	return ep_send(ep, IOV1(buf, len), 1, dest, 0, 0, ctx, TXF(ep));
}

static ssize_t m_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t dest, void *ctx)
{
	(void)desc;
	return ep_send(ep, iov, count, dest, 0, 0, ctx, TXF(ep));
}

static ssize_t m_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
	return ep_send(ep, msg->msg_iov, msg->iov_count, msg->addr, 0, msg->data,
		       msg->context, flags);
}

static ssize_t m_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
	return ep_send(ep, IOV1(buf, len), 1, dest, 0, 0, NULL, FI_INJECT);
}

static ssize_t m_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, void *ctx)
{
	(void)desc;
	return ep_send(ep, IOV1(buf, len), 1, dest, 0, data, ctx,
		       TXF(ep) | FI_REMOTE_CQ_DATA);
}

static ssize_t m_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest)
{
	return ep_send(ep, IOV1(buf, len), 1, dest, 0, data, NULL,
		       FI_INJECT | FI_REMOTE_CQ_DATA);
}

struct fi_ops_msg dpfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = m_recv,
	.recvv = m_recvv,
	.recvmsg = m_recvmsg,
	.send = m_send,
	.sendv = m_sendv,
	.sendmsg = m_sendmsg,
	.inject = m_inject,
	.senddata = m_senddata,
	.injectdata = m_injectdata,
};

/* FI_TAGGED */

static ssize_t t_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
		      fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	(void)desc;
	return ep_recv(ep, IOV1(buf, len), 1, src, tag, ignore, ctx, RXF(ep) | FI_TAGGED);
}

static ssize_t t_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx)
{
	(void)desc;
	return ep_recv(ep, iov, count, src, tag, ignore, ctx, RXF(ep) | FI_TAGGED);
}

static ssize_t t_recvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	return ep_recv(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, msg->ignore,
		       msg->context, flags | FI_TAGGED);
}

static ssize_t t_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
		      fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return ep_send(ep, IOV1(buf, len), 1, dest, tag, 0, ctx, TXF(ep) | FI_TAGGED);
}

static ssize_t t_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
		       size_t count, fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return ep_send(ep, iov, count, dest, tag, 0, ctx, TXF(ep) | FI_TAGGED);
}

static ssize_t t_sendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
	return ep_send(ep, msg->msg_iov, msg->iov_count, msg->addr, msg->tag, msg->data,
		       msg->context, flags | FI_TAGGED);
}

static ssize_t t_inject(struct fid_ep *ep, const void *buf, size_t len,
			fi_addr_t dest, uint64_t tag)
{
	return ep_send(ep, IOV1(buf, len), 1, dest, tag, 0, NULL, FI_INJECT | FI_TAGGED);
}

static ssize_t t_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			  uint64_t data, fi_addr_t dest, uint64_t tag, void *ctx)
{
	(void)desc;
	return ep_send(ep, IOV1(buf, len), 1, dest, tag, data, ctx,
		       TXF(ep) | FI_TAGGED | FI_REMOTE_CQ_DATA);
}

static ssize_t t_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			    uint64_t data, fi_addr_t dest, uint64_t tag)
{
	return ep_send(ep, IOV1(buf, len), 1, dest, tag, data, NULL,
		       FI_INJECT | FI_TAGGED | FI_REMOTE_CQ_DATA);
}

struct fi_ops_tagged dpfi_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = t_recv,
	.recvv = t_recvv,
	.recvmsg = t_recvmsg,
	.send = t_send,
	.sendv = t_sendv,
	.sendmsg = t_sendmsg,
	.inject = t_inject,
	.senddata = t_senddata,
	.injectdata = t_injectdata,
};
