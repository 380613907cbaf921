// SPDX-License-Identifier: GPL-2.0
/*
 * fakenl.so: an LD_PRELOAD stand-in for dp.ko's generic netlink family, so
 * that dpctl can be run on the host.  socket(AF_NETLINK, ..., GENERIC)
 * returns one end of a unix datagram socketpair; sendto() on it answers the
 * request through the other end, as the kernel would: the family id from
 * the controller, a fixed node, NART and endpoint list (with a continuation
 * message, optional attributes left out, a negative credit and a counter
 * newer than dpctl), and an ack for every other command.  Each request's
 * command and attribute types are appended to $FAKENL_LOG, if set.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/dp.h>

#define FAMILY	0x1d

static int nl_fd = -1, peer_fd = -1;

struct out {
	char buf[8192];
	size_t len;
	size_t nest[4];
	int depth;
};

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		abort();
	return f;
}

static void put(struct out *o, const void *p, size_t n)
{
	if (o->len + NLA_ALIGN(n) > sizeof(o->buf))
		abort();
	memcpy(o->buf + o->len, p, n);
	memset(o->buf + o->len + n, 0, NLA_ALIGN(n) - n);
	o->len += NLA_ALIGN(n);
}

static void msg_begin(struct out *o, uint16_t type, uint32_t seq, uint8_t cmd)
{
	struct nlmsghdr h = { .nlmsg_type = type, .nlmsg_seq = seq };
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };

	o->len = 0;
	o->depth = 0;
	put(o, &h, sizeof(h));
	put(o, &g, sizeof(g));
}

static void msg_send(struct out *o)
{
	((struct nlmsghdr *)o->buf)->nlmsg_len = (uint32_t)o->len;
	if (send(peer_fd, o->buf, o->len, 0) < 0)
		abort();
}

static void attr(struct out *o, uint16_t type, const void *p, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };

	put(o, &a, sizeof(a));
	o->len -= NLA_ALIGN(sizeof(a)) - NLA_HDRLEN;
	put(o, p, n);
}

static void u32(struct out *o, uint16_t type, uint32_t v)
{
	attr(o, type, &v, sizeof(v));
}

static void u64(struct out *o, uint16_t type, uint64_t v)
{
	attr(o, type, &v, sizeof(v));
}

static void str(struct out *o, uint16_t type, const char *s)
{
	attr(o, type, s, strlen(s) + 1);
}

static void nest(struct out *o, uint16_t type)
{
	o->nest[o->depth++] = o->len;
	attr(o, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct out *o)
{
	size_t at = o->nest[--o->depth];

	((struct nlattr *)(o->buf + at))->nla_len = (uint16_t)(o->len - at);
}

/* NLMSG_ERROR with error 0 (an ack), or NLMSG_DONE. */
static void ack(uint16_t type, uint32_t seq)
{
	struct {
		struct nlmsghdr h;
		struct nlmsgerr e;
	} m = { .h = { .nlmsg_type = type, .nlmsg_seq = seq } };

	m.h.nlmsg_len = type == NLMSG_DONE ? NLMSG_LENGTH(sizeof(int)) : sizeof(m);
	if (send(peer_fd, &m, m.h.nlmsg_len, 0) < 0)
		abort();
}

static void node(uint32_t seq)
{
	static const uint8_t mac[] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0x07 };
	struct out o;
	unsigned int i;

	msg_begin(&o, FAMILY, seq, DP_CMD_NODE_GET);
	u32(&o, DP_A_NID, 7);
	str(&o, DP_A_BACKEND, "netdev");
	str(&o, DP_A_IFNAME, "eth\"0\\");
	attr(&o, DP_A_LLADDR, mac, sizeof(mac));
	u32(&o, DP_A_MTU, 1448);
	u32(&o, DP_A_DISC_INTERVAL_MS, 500);
	nest(&o, DP_A_COUNTERS);
	for (i = 0; i < DP_CTR_COUNT; i++)
		u64(&o, (uint16_t)(i + 1), 1000 + 3 * i + (i == 1 ? 1ull << 40 : 0));
	u64(&o, DP_CTR_COUNT + 1, 99);	/* a counter newer than dpctl */
	nest_end(&o);
	msg_send(&o);
}

static void nart(uint32_t seq)
{
	static const uint8_t a2[] = { 0x52, 0x54, 0, 0, 0, 2 };
	static const uint8_t r2[] = { 0x87, 0x80 };	/* a Myrinet route */
	uint8_t a3[16];
	struct out o;
	int i;

	for (i = 0; i < 16; i++)
		a3[i] = (uint8_t)(i * 17);
	msg_begin(&o, FAMILY, seq, DP_CMD_NART_GET);
	u32(&o, DP_A_NID, 2);
	attr(&o, DP_A_LLADDR, a2, sizeof(a2));
	attr(&o, DP_A_ROUTE, r2, sizeof(r2));
	u32(&o, DP_A_NART_ORIGIN, DP_NART_STATIC);
	msg_send(&o);
	msg_begin(&o, FAMILY, seq, DP_CMD_NART_GET);
	u32(&o, DP_A_NID, 3);
	attr(&o, DP_A_LLADDR, a3, sizeof(a3));
	u32(&o, DP_A_NART_ORIGIN, DP_NART_DISCOVERED);	/* neighbour discovery's */
	u32(&o, DP_A_NART_HEARD_MS, 120);
	msg_send(&o);
	msg_begin(&o, FAMILY, seq, DP_CMD_NART_GET);
	u32(&o, DP_A_NID, 4000000000u);
	msg_send(&o);
}

/* One reliable edge's session; heard < 0 leaves HEARD_MS out (IDLE). */
static void edge(struct out *o, uint32_t nid, uint32_t state, uint32_t err, int32_t credit,
		 int heard)
{
	nest(o, DP_A_EDGE);
	u32(o, DP_A_NID, nid);
	u32(o, DP_A_DPID, nid * 100);
	u32(o, DP_A_EDGE_TX_SEQ, 0);
	u32(o, DP_A_EDGE_STATE, state);
	u32(o, DP_A_EDGE_ERR, err);
	u32(o, DP_A_EDGE_ISN, nid + 5);
	u32(o, DP_A_EDGE_SND_UNA, nid + 9);
	u32(o, DP_A_EDGE_SND_NXT, nid + 12);
	u32(o, DP_A_EDGE_UNACKED, 3);
	u32(o, DP_A_EDGE_CREDIT, (uint32_t)credit);
	u32(o, DP_A_EDGE_CWND, 16);
	u32(o, DP_A_EDGE_RTO_MS, 200 + nid);
	u32(o, DP_A_EDGE_BACKOFF, nid % 3);
	if (heard >= 0)
		u32(o, DP_A_EDGE_HEARD_MS, (uint32_t)heard);
	if (nid != 3) {		/* nid 3: as from a module older than the counts */
		u32(o, DP_A_EDGE_TIMEOUTS, nid * 7);
		u32(o, DP_A_EDGE_UNDONE, nid);
	}
	nest_end(o);
}

static void rx_peer(struct out *o, uint32_t nid)
{
	nest(o, DP_A_RX_PEER);
	u32(o, DP_A_NID, nid);
	u32(o, DP_A_DPID, nid * 100);
	u32(o, DP_A_RX_PEER_ISN, 70 + nid);
	u32(o, DP_A_RX_PEER_RCV_NXT, 80 + nid);
	u32(o, DP_A_RX_PEER_HELD, nid);
	u32(o, DP_A_RX_PEER_CREDIT, (uint32_t)-4096);
	nest_end(o);
}

static void ep_head(struct out *o, uint32_t seq, uint32_t dpid, uint32_t admit, int nstats)
{
	int i;

	msg_begin(o, FAMILY, seq, DP_CMD_EP_GET);
	u32(o, DP_A_DPID, dpid);
	u32(o, DP_A_EP_UID, 1000 + dpid);
	u32(o, DP_A_EP_POOL_SIZE, 262144);
	u32(o, DP_A_EP_QUEUED, dpid % 7);
	if (nstats > 6) {	/* as a module that has both */
		u32(o, DP_A_EP_POOL_TAKEN, (dpid % 7) * 1088);
		u32(o, DP_A_EP_POOL_OPEN, dpid % 2 + 1);
		u64(o, DP_A_EP_TX_CORKED, 5000000000ull + dpid);
	}
	u32(o, DP_A_EP_ADMIT, admit);
	nest(o, DP_A_EP_STATS);
	for (i = 1; i <= nstats; i++)
		u64(o, (uint16_t)i, 11ull * (uint64_t)i + dpid);
	nest_end(o);
}

static void eps(uint32_t seq)
{
	struct out o;

	/* a reliable endpoint over two messages: the second is a continuation */
	ep_head(&o, seq, 100, DP_ADMIT_PEERS, 12);
	u32(&o, DP_A_EP_BIND_FLAGS, DP_ADMIT_PEERS);
	nest(&o, DP_A_EP_EDGES);
	edge(&o, 2, DP_EDGE_OPEN, 0, -64, 7);
	edge(&o, 3, DP_EDGE_FAILED, ETIMEDOUT, 0, 12000);
	nest_end(&o);
	nest(&o, DP_A_EP_RX_PEERS);
	rx_peer(&o, 2);
	nest_end(&o);
	msg_send(&o);
	msg_begin(&o, FAMILY, seq, DP_CMD_EP_GET);
	u32(&o, DP_A_DPID, 100);
	attr(&o, DP_A_EP_CONT, NULL, 0);
	nest(&o, DP_A_EP_EDGES);
	edge(&o, 4, DP_EDGE_IDLE, 0, 131072, -1);
	nest_end(&o);
	nest(&o, DP_A_EP_RX_PEERS);
	rx_peer(&o, 4);
	nest_end(&o);
	msg_send(&o);
	/* a raw endpoint from an older module: six stats */
	ep_head(&o, seq, 101, DP_ADMIT_PEERS | DP_ADMIT_UID, 6);
	u32(&o, DP_A_EP_BIND_FLAGS, DP_BIND_RAW | DP_ADMIT_MASK);
	nest(&o, DP_A_EP_EDGES);
	nest(&o, DP_A_EDGE);
	u32(&o, DP_A_NID, 2);
	u32(&o, DP_A_DPID, 201);
	u32(&o, DP_A_EDGE_TX_SEQ, 42);
	nest_end(&o);
	nest_end(&o);
	msg_send(&o);
	/* no bind flags (older still), no edges */
	ep_head(&o, seq, 102, DP_ADMIT_UID, 0);
	msg_send(&o);
}

/*
 * DP_CMD_SCOUT on a fabric of one switch: this node (the MAC node() serves)
 * on port 2, NID 5 on port 0, a host without a NID on port 4.  A probe
 * [p] comes back (no return route) or is answered (return route [82]).
 */
static void scout_answer(struct out *o, uint32_t idx, const struct nlattr *route,
			 const struct nlattr *ret)
{
	static const uint8_t self[] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0x07 };
	static const uint8_t h5[] = { 0x00, 0x60, 0xdd, 0x00, 0x00, 0x05 };
	static const uint8_t h6[] = { 0x00, 0x60, 0xdd, 0x00, 0x00, 0x06 };
	const uint8_t *r = route ? (const uint8_t *)route + NLA_HDRLEN : NULL;
	const uint8_t *b = ret ? (const uint8_t *)ret + NLA_HDRLEN : NULL;
	const uint8_t *addr = NULL;
	uint32_t nid = 0;

	if (!r || route->nla_len != NLA_HDRLEN + 1)
		return;
	if (r[0] == 0x82) {
		addr = self;
		nid = 7;
	} else if (b && ret->nla_len == NLA_HDRLEN + 1 && b[0] == 0x82 &&
		   (r[0] == 0x80 || r[0] == 0x84)) {
		addr = r[0] == 0x80 ? h5 : h6;
		nid = r[0] == 0x80 ? 5 : 0;
	}
	if (!addr)
		return;
	nest(o, DP_A_SCOUT);
	u32(o, DP_A_SCOUT_IDX, idx);
	attr(o, DP_A_LLADDR, addr, 6);
	u32(o, DP_A_NID, nid);
	nest_end(o);
}

/* The attribute of @type in [p, p + len), or NULL. */
static const struct nlattr *find_attr(const void *p, size_t len, uint16_t type)
{
	const struct nlattr *a = p;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

static void scouts(const struct nlmsghdr *h)
{
	size_t off = NLMSG_LENGTH(GENL_HDRLEN), left;
	const struct nlattr *list, *a;
	uint32_t idx = 0;
	struct out o;

	list = find_attr((const char *)h + off, h->nlmsg_len - off, DP_A_SCOUTS);
	msg_begin(&o, FAMILY, h->nlmsg_seq, DP_CMD_SCOUT);
	nest(&o, DP_A_SCOUTS);
	a = list ? (const struct nlattr *)((const char *)list + NLA_HDRLEN) : NULL;
	left = list ? list->nla_len - NLA_HDRLEN : 0;
	while (a && left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		const char *d = (const char *)a + NLA_HDRLEN;
		size_t n = a->nla_len - NLA_HDRLEN;

		scout_answer(&o, idx++, find_attr(d, n, DP_A_ROUTE),
			     find_attr(d, n, DP_A_SCOUT_RET));
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		left -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	nest_end(&o);
	msg_send(&o);
}

static void log_request(const struct nlmsghdr *h, size_t len)
{
	const char *path = getenv("FAKENL_LOG");
	const struct genlmsghdr *g = NLMSG_DATA(h);
	const struct nlattr *a;
	size_t off = NLMSG_LENGTH(GENL_HDRLEN);
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "cmd %u flags %#x", g->cmd, h->nlmsg_flags);
	while (off + NLA_HDRLEN <= len) {
		a = (const struct nlattr *)((const char *)h + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len)
			break;
		fprintf(f, " %u:%u", a->nla_type, a->nla_len - NLA_HDRLEN);
		off += NLA_ALIGN(a->nla_len);
	}
	fputc('\n', f);
	fclose(f);
}

static void answer(const void *buf, size_t len)
{
	const struct nlmsghdr *h = buf;
	const struct genlmsghdr *g = NLMSG_DATA(h);
	struct out o;
	uint16_t id = FAMILY;

	if (len < NLMSG_LENGTH(GENL_HDRLEN))
		abort();
	if (h->nlmsg_type == GENL_ID_CTRL) {
		msg_begin(&o, GENL_ID_CTRL, h->nlmsg_seq, CTRL_CMD_NEWFAMILY);
		attr(&o, CTRL_ATTR_FAMILY_ID, &id, sizeof(id));
		msg_send(&o);
		ack(NLMSG_ERROR, h->nlmsg_seq);
		return;
	}
	log_request(h, len);
	switch (g->cmd) {
	case DP_CMD_NODE_GET:
		node(h->nlmsg_seq);
		break;
	case DP_CMD_NART_GET:
		nart(h->nlmsg_seq);
		ack(NLMSG_DONE, h->nlmsg_seq);
		return;
	case DP_CMD_EP_GET:
		eps(h->nlmsg_seq);
		ack(NLMSG_DONE, h->nlmsg_seq);
		return;
	case DP_CMD_SCOUT:
		scouts(h);
		break;
	}
	ack(NLMSG_ERROR, h->nlmsg_seq);
}

int socket(int domain, int type, int protocol)
{
	int (*sock)(int, int, int) = real("socket");
	int sv[2];

	if (domain != AF_NETLINK || protocol != NETLINK_GENERIC)
		return sock(domain, type, protocol);
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	nl_fd = sv[0];
	peer_fd = sv[1];
	return nl_fd;
}

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int (*b)(int, const struct sockaddr *, socklen_t) = real("bind");

	return fd == nl_fd ? 0 : b(fd, sa, len);
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	int (*s)(int, int, int, const void *, socklen_t) = real("setsockopt");

	return fd == nl_fd ? 0 : s(fd, level, name, val, len);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *sa,
	       socklen_t salen)
{
	ssize_t (*s)(int, const void *, size_t, int, const struct sockaddr *, socklen_t) =
		real("sendto");

	if (fd != nl_fd)
		return s(fd, buf, len, flags, sa, salen);
	answer(buf, len);
	return (ssize_t)len;
}
