// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libdp: the Directed Point API over /dev/dp (see dp.h and docs/api.md).
 *
 * The only state is a table of pool mappings indexed by fd, so dp_read()
 * can find the pool without a system call.  The table has two levels:
 * chunks are allocated on first use and never freed, so a reader never
 * sees a chunk disappear and needs no lock.
 */
#define _GNU_SOURCE
#include "dp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

struct dp_slot {
	const unsigned char *base;	/* the mapping; published last */
	size_t map_size;
	uint32_t ctrl_size;
	uint32_t data_size;
};

#define DP_CHUNK_BITS	8
#define DP_CHUNK	(1 << DP_CHUNK_BITS)
#define DP_CHUNKS	256		/* fds 0..65535 */

static struct dp_slot *dp_chunks[DP_CHUNKS];

/* The slot of fd; allocate its chunk if create.  NULL if none. */
static struct dp_slot *dp_slot(int fd, int create)
{
	struct dp_slot **pc, *c, *fresh;

	if (fd < 0 || fd >= DP_CHUNK * DP_CHUNKS) {
		errno = fd < 0 ? EBADF : EMFILE;
		return NULL;
	}
	pc = &dp_chunks[fd >> DP_CHUNK_BITS];
	c = __atomic_load_n(pc, __ATOMIC_ACQUIRE);
	if (!c && create) {
		fresh = calloc(DP_CHUNK, sizeof(*fresh));
		if (!fresh)
			return NULL;
		/* Another thread may have won the race: use its chunk. */
		if (__atomic_compare_exchange_n(pc, &c, fresh, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			c = fresh;
		else
			free(fresh);
	}
	return c ? &c[fd & (DP_CHUNK - 1)] : NULL;
}

/* Is the mapping the pool layout this library understands? */
static int dp_pool_ok(const struct dp_pool_ctrl *ctrl, const struct dp_info *info)
{
	uint32_t ds = info->data_size;

	return ctrl->magic == DP_POOL_MAGIC && ctrl->version == DP_POOL_VERSION &&
	       ctrl->data_size == ds && ds && !(ds & (ds - 1)) &&
	       ctrl->ctrl_size >= sizeof(*ctrl) &&
	       (uint64_t)ctrl->ctrl_size + ds <= info->map_size;
}

/* Map fd's pool and publish it in the table. */
static struct dp_slot *dp_map(int fd)
{
	struct dp_info info;
	struct dp_slot *s = dp_slot(fd, 1);
	const unsigned char *base, *none = NULL;
	void *p;

	if (!s || dp_getinfo(fd, &info) < 0)
		return NULL;
	p = mmap(NULL, info.map_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!dp_pool_ok(p, &info)) {
		munmap(p, info.map_size);
		errno = EPROTO;
		return NULL;
	}
	base = p;
	s->map_size = info.map_size;
	s->ctrl_size = ((const struct dp_pool_ctrl *)p)->ctrl_size;
	s->data_size = info.data_size;
	/* Two threads mapping one fd: keep the first mapping. */
	if (!__atomic_compare_exchange_n(&s->base, &none, base, 0, __ATOMIC_RELEASE,
					 __ATOMIC_ACQUIRE))
		munmap(p, info.map_size);
	return s;
}

/* The mapped slot of fd, mapping it on first use (one-time system calls). */
static struct dp_slot *dp_mapped(int fd)
{
	struct dp_slot *s = dp_slot(fd, 0);

	if (s && __atomic_load_n(&s->base, __ATOMIC_ACQUIRE))
		return s;
	return dp_map(fd);
}

/*
 * Drop fd's mapping.  Also used before binding a new endpoint: if a previous
 * endpoint on this fd number was closed with close() instead of dp_close(),
 * its mapping (which pins the old endpoint) is still in the table.
 */
static void dp_unmap(int fd)
{
	struct dp_slot *s = dp_slot(fd, 0);
	const unsigned char *base;

	if (!s)
		return;
	base = __atomic_exchange_n(&s->base, NULL, __ATOMIC_ACQ_REL);
	if (base)
		munmap((void *)base, s->map_size);
}

int dp_getinfo(int fd, struct dp_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, DP_IOC_INFO, info) < 0 ? -1 : 0;
}

int dp_open_admit(uint32_t dpid, uint32_t pool_size, uint32_t admit)
{
	struct dp_bind b = { .dpid = dpid, .pool_size = pool_size, .flags = admit };
	int fd, err;

	fd = open(DP_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	dp_unmap(fd);
	if (ioctl(fd, DP_IOC_BIND, &b) == 0 && dp_map(fd))
		return fd;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

int dp_open_pool(uint32_t dpid, uint32_t pool_size)
{
	return dp_open_admit(dpid, pool_size, DP_ADMIT_ANY);
}

int dp_open(uint32_t dpid)
{
	return dp_open_admit(dpid, 0, DP_ADMIT_ANY);
}

int dp_connect(int fd, uint32_t nid, uint32_t dpid)
{
	struct dp_addr a = { .nid = nid, .dpid = dpid };

	return ioctl(fd, DP_IOC_CONNECT, &a) < 0 ? -1 : 0;
}

int dp_disconnect(int fd, uint32_t nid, uint32_t dpid)
{
	struct dp_addr a = { .nid = nid, .dpid = dpid };

	return ioctl(fd, DP_IOC_DISCONNECT, &a) < 0 ? -1 : 0;
}

ssize_t dp_write(int fd, const void *msg, size_t len)
{
	return write(fd, msg, len);
}

ssize_t dp_send(int fd, uint32_t nid, uint32_t dpid, const void *msg, size_t len)
{
	struct dp_send s = {
		.to = { .nid = nid, .dpid = dpid },
		.buf = (uint64_t)(uintptr_t)msg,
		.len = (uint32_t)len,
	};

	if (len > UINT32_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	return ioctl(fd, DP_IOC_SEND, &s);
}

int dp_sendv(int fd, const struct dp_send *msgs, unsigned int n)
{
	struct dp_sendv v = {
		.msgs = (uint64_t)(uintptr_t)msgs,
		.n = n,
	};
	int r = ioctl(fd, DP_IOC_SENDV, &v);

	if (r >= 0 && (unsigned int)r < n)
		errno = (int)v.err;
	return r;
}

int dp_sendv_release(int fd, const struct dp_send *msgs, unsigned int n,
		     unsigned int *release)
{
	struct dp_sendv v = {
		.msgs = (uint64_t)(uintptr_t)msgs,
		.n = n,
		.flags = DP_SENDV_RELEASE,
		.err = UINT32_MAX,	/* the kernel clears it once it released */
		.release = *release,
	};
	int r = ioctl(fd, DP_IOC_SENDV, &v);
	int e = errno;

	*release = v.err == UINT32_MAX ? 0 : v.release;
	if (r >= 0 && (unsigned int)r < n)
		e = (int)v.err;
	errno = e;
	return r;
}

/*
 * Find the head token between cons and prod.  Returns 1 and *tok, 0 if
 * the pool is empty, -1 if the counters do not describe a valid token.
 *
 * The kernel keeps cons off wrap and skip tokens, but if it moves cons
 * past one while a message arrives, we may have loaded the old cons:
 * passing them here gives the same head either way.
 */
static int dp_head(const struct dp_slot *s, uint64_t cons, uint64_t prod,
		   const struct dp_token **tok)
{
	const unsigned char *data = s->base + s->ctrl_size;
	const struct dp_token *t;
	uint32_t off;

	if (prod - cons > s->data_size)
		return -1;
	off = (uint32_t)(cons & (s->data_size - 1));
	if (off % DP_TOKEN_ALIGN)
		return -1;
	t = (const struct dp_token *)(data + off);
	/* Wrap and skip tokens are no messages: pass them (cons only grows). */
	while (t->flags & (DP_TOK_WRAP | DP_TOK_SKIP)) {
		uint64_t step = t->flags & DP_TOK_WRAP ? s->data_size - off :
			DP_TOKEN_SPACE(t->len);

		if (t->len > s->data_size || step > prod - cons)
			return -1;
		cons += step;
		if (cons == prod)
			return 0;
		off = (uint32_t)(cons & (s->data_size - 1));
		t = (const struct dp_token *)(data + off);
	}
	/* Only the kernel writes tokens; still never hand out bytes past prod. */
	if (t->len > s->data_size - off - sizeof(*t) ||
	    DP_TOKEN_SPACE(t->len) > prod - cons)
		return -1;
	*tok = t;
	return 1;
}

ssize_t dp_read(int fd, char **addr)
{
	const struct dp_slot *s = dp_mapped(fd);
	const struct dp_pool_ctrl *ctrl;
	const struct dp_token *t;
	uint64_t cons, prod;
	int tries, r = -1;

	if (!s)
		return -1;
	ctrl = (const struct dp_pool_ctrl *)s->base;
	/* A torn pair (see dp_head) settles on the next load; a few tries. */
	for (tries = 0; tries < 4 && r < 0; tries++) {
		cons = __atomic_load_n(&ctrl->cons, __ATOMIC_ACQUIRE);
		/* acquire pairs with the kernel's release: token bytes are visible. */
		prod = __atomic_load_n(&ctrl->prod, __ATOMIC_ACQUIRE);
		/*
		 * cons ahead of prod: loaded between the kernel's two stores
		 * (cons first) after it passed a wrap or skip token on an empty
		 * pool; nothing was ready then.
		 */
		if ((int64_t)(prod - cons) <= 0)
			return 0;
		r = dp_head(s, cons, prod, &t);
	}
	if (r <= 0) {
		if (r < 0)
			errno = EPROTO;
		return r;
	}
	*addr = (char *)(t + 1);
	return t->len;
}

const struct dp_token *dp_token_of(int fd, const char *addr)
{
	const struct dp_slot *s = dp_mapped(fd);
	const unsigned char *data;
	uintptr_t off;

	if (!s)
		return NULL;
	data = s->base + s->ctrl_size;
	off = (uintptr_t)addr - (uintptr_t)data - sizeof(struct dp_token);
	/* Unsigned: an address before the data area wraps to a huge offset. */
	if (off >= s->data_size || off % DP_TOKEN_ALIGN) {
		errno = EINVAL;
		return NULL;
	}
	return (const struct dp_token *)(data + off);
}

int dp_fsync(int fd, int n)
{
	uint32_t count;

	if (n < 0) {
		errno = EINVAL;
		return -1;
	}
	count = (uint32_t)n;
	return ioctl(fd, DP_IOC_RELEASE, &count);
}

int dp_set_wait(int fd, uint32_t poll_usecs, uint32_t flags)
{
	struct dp_wait w = { .poll_usecs = poll_usecs, .flags = flags };

	return ioctl(fd, DP_IOC_SET_WAIT, &w) < 0 ? -1 : 0;
}

int dp_get_wait(int fd, struct dp_wait *w)
{
	memset(w, 0, sizeof(*w));
	return ioctl(fd, DP_IOC_GET_WAIT, w) < 0 ? -1 : 0;
}

int dp_mmap(int fd, dp_mmap_t *tbp)
{
	const struct dp_slot *s = dp_mapped(fd);

	if (!s)
		return -1;
	tbp->base = s->base;
	tbp->map_size = s->map_size;
	tbp->data = s->base + s->ctrl_size;
	tbp->data_size = s->data_size;
	tbp->ctrl = (const struct dp_pool_ctrl *)s->base;
	return 0;
}

int dp_close(int fd)
{
	dp_unmap(fd);
	return close(fd);
}

/* Names follow enum dp_counter: DP_CTR_RX_DROP_FULL -> rx_drop_full. */
static const char *const dp_ctr_names[] = {
	[DP_CTR_TX_MSGS] = "tx_msgs",
	[DP_CTR_TX_BYTES] = "tx_bytes",
	[DP_CTR_TX_LOCAL] = "tx_local",
	[DP_CTR_RX_MSGS] = "rx_msgs",
	[DP_CTR_RX_BYTES] = "rx_bytes",
	[DP_CTR_RX_DROP_SHORT] = "rx_drop_short",
	[DP_CTR_RX_DROP_VERSION] = "rx_drop_version",
	[DP_CTR_RX_DROP_TYPE] = "rx_drop_type",
	[DP_CTR_RX_DROP_LEN] = "rx_drop_len",
	[DP_CTR_RX_DROP_NOT_NODE] = "rx_drop_not_node",
	[DP_CTR_RX_DROP_UNKNOWN_SRC] = "rx_drop_unknown_src",
	[DP_CTR_RX_DROP_SPOOFED] = "rx_drop_spoofed",
	[DP_CTR_RX_DROP_NO_EP] = "rx_drop_no_ep",
	[DP_CTR_RX_DROP_FULL] = "rx_drop_full",
	[DP_CTR_RX_DROP_TOO_BIG] = "rx_drop_too_big",
	[DP_CTR_RX_DROP_NOMEM] = "rx_drop_nomem",
	[DP_CTR_RX_DROP_BAD_ADDR] = "rx_drop_bad_addr",
	[DP_CTR_TX_DROP_NO_ROUTE] = "tx_drop_no_route",
	[DP_CTR_TX_DROP_NO_NIC] = "tx_drop_no_nic",
	[DP_CTR_TX_DROP_NOMEM] = "tx_drop_nomem",
	[DP_CTR_TX_DROP_NIC] = "tx_drop_nic",
	[DP_CTR_RX_DROP_RING] = "rx_drop_ring",
	[DP_CTR_RX_DROP_ADMIT] = "rx_drop_admit",
	[DP_CTR_RX_DROP_SEQ] = "rx_drop_seq",
	[DP_CTR_RX_DROP_CSUM] = "rx_drop_csum",
	[DP_CTR_RX_DROP_STALE] = "rx_drop_stale",
	[DP_CTR_RX_DROP_DUP] = "rx_drop_dup",
	[DP_CTR_TX_RETRANS] = "tx_retrans",
	[DP_CTR_TX_CTRL] = "tx_ctrl",
	[DP_CTR_RX_CTRL] = "rx_ctrl",
	[DP_CTR_TX_UNDELIVERED] = "tx_undelivered",
	[DP_CTR_DISC_CONFLICT] = "disc_conflict",
};
_Static_assert(sizeof(dp_ctr_names) / sizeof(dp_ctr_names[0]) == DP_CTR_COUNT,
	       "a counter of enum dp_counter has no name");

const char *dp_counter_name(unsigned int ctr)
{
	return ctr < DP_CTR_COUNT ? dp_ctr_names[ctr] : NULL;
}
