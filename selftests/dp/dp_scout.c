// SPDX-License-Identifier: GPL-2.0
/*
 * DP_CMD_SCOUT, the kernel's part of the Myrinet mapper, straight over
 * generic netlink: in a guest whose initial namespace is a node on dp's
 * myri backend (run_myri.sh, cluster.py --nic myri).
 *   - a loop probe [p] on every port p of the own switch: exactly one comes
 *     back, with this NIC's address and this node's NID, and a probe along
 *     a route to nowhere is not answered;
 *   - bad requests: a route byte without its top bit (EINVAL), a return
 *     route byte without it (EINVAL), a scout without a route (EINVAL), a
 *     route of 17 bytes (ERANGE), no scouts (EINVAL), 65 scouts (E2BIG), a
 *     wait of 0 or 1001 ms (ERANGE);
 *   - a namespace whose node has no NIC: ENODEV;
 *   - uid 1001 without capabilities: EPERM.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include "ktap.h"
#include "dptest.h"

#define ROUTE_BIT	0x80
#define PORTS		16

struct probe {
	uint8_t rlen;		/* 0: no route attribute */
	uint8_t route[20];
	uint8_t blen;
	uint8_t back[16];
};

struct answer {
	int got;
	uint8_t addr[6];
	uint32_t nid;
};

static char msg[8192];
static size_t mlen;
static size_t nests[4];
static int depth;
static uint32_t seq;

static void msg_begin(uint16_t type, uint8_t cmd)
{
	struct nlmsghdr *h = (struct nlmsghdr *)msg;
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(msg, 0, sizeof(msg));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = ++seq;
	g->cmd = cmd;
	g->version = 1;
	mlen = NLMSG_LENGTH(GENL_HDRLEN);
	depth = 0;
}

static void put(uint16_t type, const void *d, size_t n)
{
	struct nlattr *a = (struct nlattr *)(msg + NLA_ALIGN(mlen));

	if (NLA_ALIGN(mlen) + NLA_ALIGN(NLA_HDRLEN + n) > sizeof(msg))
		ktap_bail("request too large");
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + n);
	memcpy((char *)a + NLA_HDRLEN, d, n);
	mlen = NLA_ALIGN(mlen) + NLA_ALIGN(NLA_HDRLEN + n);
}

static void nest_begin(uint16_t type)
{
	nests[depth++] = mlen;
	put(type | NLA_F_NESTED, "", 0);
}

static void nest_end(void)
{
	size_t at = nests[--depth];

	((struct nlattr *)(msg + at))->nla_len = (uint16_t)(mlen - at);
}

static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	struct timeval tv = { .tv_sec = 10 };

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* The attribute @type among [p, p + len), or NULL. */
static const struct nlattr *attr(const void *p, size_t len, uint16_t type)
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

static const void *adata(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static size_t alen(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static uint32_t au32(const struct nlattr *a)
{
	uint32_t v = 0;

	if (a && alen(a) >= 4)
		memcpy(&v, adata(a), 4);
	return v;
}

typedef void (*reply_fn)(const void *attrs, size_t len, void *arg);

/* Send the message built, hand each reply to @fn; 0 or -errno (the ack's). */
static int nl_do(int fd, reply_fn fn, void *arg)
{
	static char buf[65536];
	struct nlmsghdr *h;
	ssize_t n;

	((struct nlmsghdr *)msg)->nlmsg_len = (uint32_t)mlen;
	if (send(fd, msg, mlen, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			if (fn && h->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN))
				fn((char *)NLMSG_DATA(h) + GENL_HDRLEN,
				   h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), arg);
		}
	}
}

static void family_cb(const void *attrs, size_t len, void *arg)
{
	const struct nlattr *a = attr(attrs, len, CTRL_ATTR_FAMILY_ID);

	if (a && alen(a) >= 2)
		memcpy(arg, adata(a), 2);
}

static uint16_t family(int fd)
{
	uint16_t id = 0;

	msg_begin(GENL_ID_CTRL, CTRL_CMD_GETFAMILY);
	put(CTRL_ATTR_FAMILY_NAME, DP_GENL_NAME, sizeof(DP_GENL_NAME));
	return nl_do(fd, family_cb, &id) ? 0 : id;
}

struct self {
	uint8_t addr[6];
	uint32_t nid;
};

static void node_cb(const void *attrs, size_t len, void *arg)
{
	const struct nlattr *a = attr(attrs, len, DP_A_LLADDR);
	struct self *s = arg;

	if (a && alen(a) == 6)
		memcpy(s->addr, adata(a), 6);
	s->nid = au32(attr(attrs, len, DP_A_NID));
}

static void scout_cb(const void *attrs, size_t len, void *arg)
{
	const struct nlattr *list = attr(attrs, len, DP_A_SCOUTS), *s;
	struct answer *ans = arg;
	size_t left;

	if (!list)
		return;
	s = adata(list);
	left = alen(list);
	while (left >= NLA_HDRLEN && s->nla_len >= NLA_HDRLEN && s->nla_len <= left) {
		const struct nlattr *idx = attr(adata(s), alen(s), DP_A_SCOUT_IDX);
		const struct nlattr *ad = attr(adata(s), alen(s), DP_A_LLADDR);
		uint32_t i = au32(idx);

		if (idx && ad && alen(ad) == 6 && i < 128) {
			ans[i].got = 1;
			memcpy(ans[i].addr, adata(ad), 6);
			ans[i].nid = au32(attr(adata(s), alen(s), DP_A_NID));
		}
		if ((size_t)NLA_ALIGN(s->nla_len) >= left)
			break;
		left -= NLA_ALIGN(s->nla_len);
		s = (const struct nlattr *)((const char *)s + NLA_ALIGN(s->nla_len));
	}
}

/*
 * DP_CMD_SCOUT with @n probes (@n < 0: no DP_A_SCOUTS) and a wait of @ms
 * (< 0: none); answers into @ans (128).  0 or -errno.
 */
static int scout(int fd, uint16_t fam, const struct probe *p, int n, int ms,
		 struct answer *ans)
{
	int i;

	msg_begin(fam, DP_CMD_SCOUT);
	if (ms >= 0)
		put(DP_A_SCOUT_MS, &(uint32_t){ (uint32_t)ms }, 4);
	if (n >= 0) {
		nest_begin(DP_A_SCOUTS);
		for (i = 0; i < n; i++) {
			nest_begin(DP_A_SCOUT);
			if (p[i].rlen)
				put(DP_A_ROUTE, p[i].route, p[i].rlen);
			if (p[i].blen)
				put(DP_A_SCOUT_RET, p[i].back, p[i].blen);
			nest_end();
		}
		nest_end();
	}
	if (ans)
		memset(ans, 0, 128 * sizeof(*ans));
	return nl_do(fd, ans ? scout_cb : NULL, ans);
}

static struct probe loop(int port)
{
	struct probe p = { .rlen = 1 };

	p.route[0] = (uint8_t)(ROUTE_BIT | port);
	return p;
}

static void test_loop(int fd, uint16_t fam, const struct self *me)
{
	struct probe p[PORTS + 1];
	struct answer ans[128];
	int i, back = 0, who = -1, err;

	for (i = 0; i < PORTS; i++)
		p[i] = loop(i);
	/* 63 then 63: the first switch has no port 63 */
	p[PORTS] = (struct probe){ .rlen = 2, .route = { 0xbf, 0xbf }, .blen = 1,
				  .back = { 0x80 } };
	err = scout(fd, fam, p, PORTS + 1, 500, ans);
	for (i = 0; i < PORTS; i++)
		if (ans[i].got) {
			back++;
			who = i;
		}
	ktap_ok(!err && back == 1, "loop probes on ports 0..%d: exactly one comes back (%d, err %d)",
		PORTS - 1, back, err);
	ktap_ok(who >= 0 && !memcmp(ans[who].addr, me->addr, 6) && ans[who].nid == me->nid,
		"it carries this NIC's address and this node's NID %u (port %d)", me->nid, who);
	ktap_ok(!err && !ans[PORTS].got, "a probe to no port is not answered");
}

static void bad(int fd, uint16_t fam, const struct probe *p, int n, int ms, int want,
		const char *what)
{
	int err = scout(fd, fam, p, n, ms, NULL);

	ktap_ok(err == want, "%s: %s (got %s)", what, strerror(-want), strerror(-err));
}

static void test_bad(int fd, uint16_t fam)
{
	struct probe p[65], one = loop(0);
	int i;

	p[0] = one;
	p[0].route[0] = 0x00;
	bad(fd, fam, p, 1, 100, -EINVAL, "a route byte without its top bit");
	p[0] = one;
	p[0].blen = 1;
	p[0].back[0] = 0x01;
	bad(fd, fam, p, 1, 100, -EINVAL, "a return route byte without its top bit");
	p[0] = (struct probe){ 0 };
	bad(fd, fam, p, 1, 100, -EINVAL, "a scout without a route");
	p[0] = one;
	p[0].rlen = 17;
	memset(p[0].route, 0x81, 17);
	bad(fd, fam, p, 1, 100, -ERANGE, "a route of 17 bytes");
	bad(fd, fam, p, -1, 100, -EINVAL, "no scouts");
	bad(fd, fam, p, 0, 100, -EINVAL, "an empty list of scouts");
	for (i = 0; i < 65; i++)
		p[i] = loop(5);
	bad(fd, fam, p, 65, 100, -E2BIG, "65 scouts");
	bad(fd, fam, p, 1, 0, -ERANGE, "a wait of 0 ms");
	bad(fd, fam, p, 1, 1001, -ERANGE, "a wait of 1001 ms");
}

/* In a child: the errno a scout gets after @how (exit status: -errno). */
static void child_case(const char *what, int want, int (*how)(void))
{
	pid_t pid = dpt_fork();
	int st = 0, fd;
	struct probe p = loop(0);
	uint16_t fam;

	if (!pid) {
		if (how())
			_exit(200);
		fd = nl_open();
		fam = fd < 0 ? 0 : family(fd);
		if (!fam)
			_exit(201);
		_exit(-scout(fd, fam, &p, 1, 100, NULL));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	ktap_ok(WIFEXITED(st) && WEXITSTATUS(st) == -want, "%s: %s (exit %d)", what,
		strerror(-want), WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int no_nic(void)
{
	return unshare(CLONE_NEWNET);
}

static int unprivileged(void)
{
	return setgroups(0, NULL) || setresgid(1001, 1001, 1001) || setresuid(1001, 1001, 1001);
}

int main(void)
{
	struct self me = { { 0 }, 0 };
	uint16_t fam;
	int fd;

	ktap_start();
	fd = nl_open();
	if (fd < 0)
		ktap_bail("netlink socket");
	fam = family(fd);
	if (!fam)
		ktap_bail("no generic netlink family \"dp\": module not loaded?");
	msg_begin(fam, DP_CMD_NODE_GET);
	if (nl_do(fd, node_cb, &me) || !me.nid)
		ktap_bail("this namespace's node: no NID");
	test_loop(fd, fam, &me);
	test_bad(fd, fam);
	child_case("a namespace whose node has no NIC", -ENODEV, no_nic);
	child_case("uid 1001 without CAP_NET_ADMIN", -EPERM, unprivileged);
	close(fd);
	ktap_finish();
}
