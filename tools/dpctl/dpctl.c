// SPDX-License-Identifier: GPL-2.0
/*
 * dpctl: administer the dp node of the network namespace it runs in, over
 * the generic netlink family "dp" (uapi/linux/dp.h part 4).  Raw netlink
 * sockets, no libnl: the messages are few and small.
 *
 *   dpctl node                               NID, backend, ifname, lladdr, max message
 *   dpctl node set [nid N] [dev IF] [backend B]
 *   dpctl node detach
 *   dpctl nart [show]                        one "NID MAC [ROUTE]" line per entry
 *   dpctl nart load FILE|-                   flush, then one entry per "NID MAC [ROUTE]" line
 *   dpctl nart add NID MAC [ROUTE] | del NID | flush
 *   dpctl nart check FILE|-                  only validate a NART file
 *   dpctl ep                                 endpoints, their counters, edges (with
 *                                            their sessions) and rx peers
 *   dpctl ep watch MS [COUNT]                the same every MS ms, COUNT times or
 *                                            until killed
 *   dpctl stats [NAME]                       node counters, "name value" per line
 *   dpctl stats reset
 *   dpctl monitor                            one line per event (sessions, peer
 *                                            restarts, NICs, NART) until killed
 *   dpctl myri map [ports N] [wait MS] [show]
 *                                            map the Myrinet fabric with scouts,
 *                                            print the hosts found as NART lines
 *                                            and load them (show: only print)
 *
 * ROUTE is a source route (Myrinet): hex bytes like 87:80, one per switch,
 * each with its top bit set; MAC is then the peer's NIC address.
 *
 * -j (--json) before the command prints what node, nart show, nart check,
 * ep, stats and myri map print as one JSON document with the text's names
 * and values ("none" and "-" become null); commands that only change the
 * node print nothing either way.
 *
 * Exit status 0 on success, 1 on any error (a message on stderr).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

#include <linux/dp.h>
#include <dp.h>	/* libdp: dp_counter_name() */

#include "myrimap.h"

#define BUF_SIZE	65536	/* dumps are sized to the reader's buffer */
#define LLADDR_MAX	16
#define ROUTE_MAX	16	/* DP_A_ROUTE */

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

static const char *ctx = "";	/* the command being run, for messages */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dpctl: %s%s", ctx, *ctx ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void usage(FILE *f, int status) __attribute__((noreturn));
static void usage(FILE *f, int status)
{
	fputs("usage: dpctl [-j] node [set [nid N] [dev IFNAME] [backend netdev] | detach]\n"
	      "       dpctl nart [show | load FILE | add NID MAC [ROUTE] | del NID | flush |\n"
	      "                   check FILE]      (ROUTE: Myrinet route bytes, e.g. 87:80)\n"
	      "       dpctl ep [watch MS [COUNT]]  (endpoints: counters, edges and\n"
	      "                     sessions, rx peers; watch: every MS ms)\n"
	      "       dpctl stats [NAME | reset]\n"
	      "       dpctl discover [on [INTERVAL_MS] | off]   (neighbour discovery)\n"
	      "       dpctl monitor (events: sessions, peer restarts, NICs, NART,\n"
	      "                      NID conflicts)\n"
	      "       dpctl myri map [ports N] [wait MS] [show]\n"
	      "                     (find the Myrinet hosts, load their routes)\n"
	      "Acts on the dp node of the current network namespace.\n"
	      "-j, --json: print node, nart, ep, stats, discover and myri map output\n"
	      "            as JSON\n"
	      "            (monitor: one JSON object per line).\n", f);
	exit(status);
}

/* ------------------------------------------------------------------ */
/* Netlink messages                                                    */
/* ------------------------------------------------------------------ */

struct nl {
	int fd;
	uint16_t family;
	uint32_t mcgrp;		/* the "events" group's id; 0 if none */
	uint32_t seq;
	char extack[256];	/* kernel's extended-ack text of the last error */
};

struct msg {
	union {
		struct nlmsghdr h;
		char buf[4096];
	} u;
	struct nlattr *nest;	/* open nested attribute, if any */
};

static void msg_init(struct msg *m, uint16_t type, uint16_t flags, uint8_t cmd)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->u.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->u.h.nlmsg_type = type;
	m->u.h.nlmsg_flags = NLM_F_REQUEST | flags;
	g = NLMSG_DATA(&m->u.h);
	g->cmd = cmd;
	g->version = DP_GENL_VERSION;
}

static void put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->u.buf + NLMSG_ALIGN(m->u.h.nlmsg_len));
	size_t total = NLMSG_ALIGN(m->u.h.nlmsg_len) + NLA_ALIGN(NLA_HDRLEN + len);

	if (total > sizeof(m->u.buf))
		die("request too large");
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((char *)a + NLA_HDRLEN, data, len);
	m->u.h.nlmsg_len = (uint32_t)total;
}

static void put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	put_attr(m, type, &v, sizeof(v));
}

static void put_str(struct msg *m, uint16_t type, const char *s)
{
	put_attr(m, type, s, strlen(s) + 1);
}

/* Open a nested attribute; nest_end() closes it at the given offset. */
static size_t nest_begin(struct msg *m, uint16_t type)
{
	size_t off = NLMSG_ALIGN(m->u.h.nlmsg_len);

	put_attr(m, type | NLA_F_NESTED, "", 0);
	return off;
}

static void nest_end(struct msg *m, size_t off)
{
	struct nlattr *a = (struct nlattr *)(m->u.buf + off);

	a->nla_len = (uint16_t)(m->u.h.nlmsg_len - off);
}

/* ------------------------------------------------------------------ */
/* Attribute parsing                                                   */
/* ------------------------------------------------------------------ */

#define ATTR_MAX 64

/* Index attributes [data, data + len) by type; later ones win. */
static void parse_attrs(const struct nlattr **tb, const void *data, size_t len)
{
	const struct nlattr *a = data;

	memset(tb, 0, sizeof(*tb) * (ATTR_MAX + 1));
	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= len) {
		uint16_t type = a->nla_type & NLA_TYPE_MASK;

		if (type <= ATTR_MAX)
			tb[type] = a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static size_t attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static void parse_nested(const struct nlattr **tb, const struct nlattr *a)
{
	parse_attrs(tb, attr_data(a), attr_len(a));
}

/* Integers: memcpy because netlink only promises 4-byte alignment. */
static uint32_t get_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	if (a && attr_len(a) >= sizeof(v))
		memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

static uint16_t get_u16(const struct nlattr *a)
{
	uint16_t v = 0;

	if (a && attr_len(a) >= sizeof(v))
		memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

static uint64_t get_u64(const struct nlattr *a)
{
	uint64_t v = 0;

	if (a && attr_len(a) >= sizeof(v))
		memcpy(&v, attr_data(a), sizeof(v));
	return v;
}

/* A string attribute, or dflt if absent or not NUL-terminated. */
static const char *get_str(const struct nlattr *a, const char *dflt)
{
	const char *s;

	if (!a || !attr_len(a))
		return dflt;
	s = attr_data(a);
	return memchr(s, '\0', attr_len(a)) ? s : dflt;
}

/* ------------------------------------------------------------------ */
/* Socket and transactions                                             */
/* ------------------------------------------------------------------ */

static void nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		die("netlink socket: %s", strerror(errno));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("netlink bind: %s", strerror(errno));
	/* Best effort: older kernels lack it and then just give the errno. */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	nl->seq = (uint32_t)getpid() << 8;
}

static void nl_send(struct nl *nl, struct msg *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	m->u.h.nlmsg_seq = ++nl->seq;
	if (sendto(nl->fd, m->u.buf, m->u.h.nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		die("netlink send: %s", strerror(errno));
}

/* Keep the kernel's extended-ack message (NLMSGERR_ATTR_MSG) if any. */
static void nl_extack(struct nl *nl, const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	const struct nlattr *tb[ATTR_MAX + 1];
	size_t off = sizeof(*e), len = h->nlmsg_len - NLMSG_HDRLEN;

	nl->extack[0] = '\0';
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	if (off >= len)
		return;
	parse_attrs(tb, (const char *)e + off, len - off);
	snprintf(nl->extack, sizeof(nl->extack), "%s", get_str(tb[NLMSGERR_ATTR_MSG], ""));
}

/* NLMSG_DONE carries the dump's error code (0 on success). */
static int nl_done_error(const struct nlmsghdr *h)
{
	int err = 0;

	if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(err)))
		memcpy(&err, NLMSG_DATA(h), sizeof(err));
	return err < 0 ? err : 0;
}

typedef void (*nl_cb)(const struct nlattr **tb, void *arg);

/* One reply message: parse its attributes and hand them to cb. */
static void nl_deliver(const struct nlmsghdr *h, nl_cb cb, void *arg)
{
	const struct nlattr *tb[ATTR_MAX + 1];
	size_t hl = NLMSG_LENGTH(GENL_HDRLEN);

	if (!cb || h->nlmsg_len < hl)
		return;
	parse_attrs(tb, (const char *)h + hl, h->nlmsg_len - hl);
	cb(tb, arg);
}

/*
 * The next whole message of the @n bytes in @buf at *@off (advanced past
 * it), or NULL at the end.  NLMSG_OK/NEXT by hand: the macros mix signed
 * and unsigned.
 */
static const struct nlmsghdr *nl_next(const char *buf, size_t n, size_t *off)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + *off);

	if (*off + NLMSG_HDRLEN > n || h->nlmsg_len < NLMSG_HDRLEN ||
	    h->nlmsg_len > n - *off)
		return NULL;
	*off += NLMSG_ALIGN(h->nlmsg_len);
	return h;
}

/*
 * Receive replies to the last request until its ack, error or end of dump.
 * Returns 0 or a negative errno from the kernel.
 */
static int nl_recv(struct nl *nl, nl_cb cb, void *arg)
{
	static char buf[BUF_SIZE];

	for (;;) {
		ssize_t n = recv(nl->fd, buf, sizeof(buf), 0);
		const struct nlmsghdr *h;
		size_t off;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("netlink receive: %s", strerror(errno));
		off = 0;
		while ((h = nl_next(buf, n, &off))) {
			if (h->nlmsg_seq != nl->seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return nl_done_error(h);
			if (h->nlmsg_type == NLMSG_ERROR) {
				nl_extack(nl, h);
				return ((const struct nlmsgerr *)NLMSG_DATA(h))->error;
			}
			nl_deliver(h, cb, arg);
		}
	}
}

/* strerror plus the kernel's extended ack, for a failed request. */
static void die_errno(struct nl *nl, int err)
{
	if (nl->extack[0])
		die("%s (%s)", strerror(-err), nl->extack);
	die("%s", strerror(-err));
}

static void family_cb(const struct nlattr **tb, void *arg)
{
	const struct nlattr *grps[ATTR_MAX + 1], *g[ATTR_MAX + 1];
	struct nl *nl = arg;
	int i;

	if (tb[CTRL_ATTR_FAMILY_ID])
		nl->family = get_u16(tb[CTRL_ATTR_FAMILY_ID]);	/* a u16 */
	if (!tb[CTRL_ATTR_MCAST_GROUPS])
		return;
	parse_nested(grps, tb[CTRL_ATTR_MCAST_GROUPS]);
	for (i = 0; i <= ATTR_MAX; i++) {
		if (!grps[i])
			continue;
		parse_nested(g, grps[i]);
		if (!strcmp(get_str(g[CTRL_ATTR_MCAST_GRP_NAME], ""), DP_GENL_MCGRP_EVENTS))
			nl->mcgrp = get_u32(g[CTRL_ATTR_MCAST_GRP_ID]);
	}
}

/* Resolve the "dp" family id through the generic netlink controller. */
static void nl_family(struct nl *nl)
{
	struct msg m;
	int err;

	msg_init(&m, GENL_ID_CTRL, NLM_F_ACK, CTRL_CMD_GETFAMILY);
	((struct genlmsghdr *)NLMSG_DATA(&m.u.h))->version = 1;
	put_str(&m, CTRL_ATTR_FAMILY_NAME, DP_GENL_NAME);
	nl_send(nl, &m);
	err = nl_recv(nl, family_cb, nl);
	if (err == -ENOENT || (!err && !nl->family))
		die("generic netlink family \"%s\" not found: is dp.ko loaded?",
		    DP_GENL_NAME);
	if (err)
		die_errno(nl, err);
}

/* A "do" request with an ack; dies on error. */
static void nl_do(struct nl *nl, struct msg *m, nl_cb cb, void *arg)
{
	int err;

	m->u.h.nlmsg_flags |= NLM_F_ACK;
	nl_send(nl, m);
	err = nl_recv(nl, cb, arg);
	if (err)
		die_errno(nl, err);
}

static void nl_dump(struct nl *nl, uint8_t cmd, nl_cb cb, void *arg)
{
	struct msg m;

	int err;

	/* No NLM_F_ACK: a dump ends with NLMSG_DONE, which carries the error. */
	msg_init(&m, nl->family, NLM_F_DUMP, cmd);
	nl_send(nl, &m);
	err = nl_recv(nl, cb, arg);
	if (err)
		die_errno(nl, err);
}

static void nl_simple(struct nl *nl, uint8_t cmd)
{
	struct msg m;

	msg_init(&m, nl->family, 0, cmd);
	nl_do(nl, &m, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* Argument parsing                                                    */
/* ------------------------------------------------------------------ */

static uint32_t parse_nid(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v == 0 || v > UINT32_MAX || *s == '-')
		die("bad %s \"%s\" (want 1..4294967295)", what, s);
	return (uint32_t)v;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "aa:bb:..." with 1..16 bytes of one or two hex digits; length, 0 if bad. */
static size_t parse_mac(const char *s, uint8_t *out)
{
	size_t n = 0;

	while (n < LLADDR_MAX) {
		int hi = hexval(s[0]), lo;

		if (hi < 0)
			return 0;
		lo = hexval(s[1]);
		out[n++] = (uint8_t)(lo < 0 ? hi : hi * 16 + lo);
		s += lo < 0 ? 1 : 2;
		if (*s == '\0')
			return n;
		if (*s++ != ':')
			return 0;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Output: text "name value" pairs, or JSON objects with the same names */
/* ------------------------------------------------------------------ */

static int json;	/* -j */

/*
 * One record: text prints prefix, then "name value" pairs separated by sep,
 * then the suffix given to rec_end; JSON prints {"name": value, ...}.
 */
struct rec {
	FILE *f;
	const char *sep;
	int n;
};

static void rec_begin(struct rec *r, FILE *f, const char *prefix, const char *sep)
{
	r->f = f;
	r->sep = sep;
	r->n = 0;
	fputs(json ? "{" : prefix, f);
}

static void rec_end(struct rec *r, const char *suffix)
{
	fputs(json ? "}" : suffix, r->f);
}

/* The separator and the name of the next pair. */
static void rec_key(struct rec *r, const char *k)
{
	if (json)
		fprintf(r->f, "%s\"%s\":", r->n ? "," : "", k);
	else
		fprintf(r->f, "%s%s ", r->n ? r->sep : "", k);
	r->n++;
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void rec_u64(struct rec *r, const char *k, uint64_t v)
{
	rec_key(r, k);
	fprintf(r->f, "%" PRIu64, v);
}

static void rec_s64(struct rec *r, const char *k, int64_t v)
{
	rec_key(r, k);
	fprintf(r->f, "%" PRId64, v);
}

/* A string value; NULL is text's none (or dash), JSON's null. */
static void rec_str(struct rec *r, const char *k, const char *v, const char *none)
{
	rec_key(r, k);
	if (!v)
		fputs(json ? "null" : none, r->f);
	else if (json)
		json_str(r->f, v);
	else
		fputs(v, r->f);
}

/* A link address as aa:bb:... in buf; NULL if absent or empty. */
static const char *mac_str(const struct nlattr *a, char buf[3 * LLADDR_MAX + 1])
{
	size_t i, n = a ? attr_len(a) : 0;
	const uint8_t *b = n ? attr_data(a) : NULL;

	if (n > LLADDR_MAX)
		n = LLADDR_MAX;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		snprintf(buf + 3 * i - (i ? 1 : 0), 4, "%s%02x", i ? ":" : "", b[i]);
	return n ? buf : NULL;
}

static void rec_mac(struct rec *r, const char *k, const struct nlattr *a)
{
	char buf[3 * LLADDR_MAX + 1];

	rec_str(r, k, mac_str(a, buf), "none");
}

/* JSON arrays: "[" a "," between elements "]" (text prints nothing). */
static int json_elems;

static void json_open(const char *open)
{
	json_elems = 0;
	if (json)
		fputs(open, stdout);
}

static void json_next(void)
{
	if (json && json_elems++)
		putchar(',');
}

static void json_close(const char *close)
{
	if (json)
		printf("%s\n", close);
}

/* ------------------------------------------------------------------ */
/* node                                                                */
/* ------------------------------------------------------------------ */

static void node_cb(const struct nlattr **tb, void *arg)
{
	struct rec r;

	(void)arg;
	rec_begin(&r, stdout, "", "\n");
	rec_u64(&r, "nid", get_u32(tb[DP_A_NID]));
	rec_str(&r, "backend", get_str(tb[DP_A_BACKEND], NULL), "none");
	rec_str(&r, "ifname", get_str(tb[DP_A_IFNAME], NULL), "none");
	rec_mac(&r, "lladdr", tb[DP_A_LLADDR]);
	rec_u64(&r, "max_msg", get_u32(tb[DP_A_MTU]));
	rec_u64(&r, "disc_interval_ms", get_u32(tb[DP_A_DISC_INTERVAL_MS]));
	rec_end(&r, "");
	putchar('\n');
}

static void cmd_node_set(struct nl *nl, int argc, char **argv)
{
	struct msg m;
	int i;

	msg_init(&m, nl->family, 0, DP_CMD_NODE_SET);
	for (i = 0; i < argc; i += 2) {
		if (i + 1 >= argc)
			die("\"%s\" needs a value", argv[i]);
		if (!strcmp(argv[i], "nid"))
			put_u32(&m, DP_A_NID, parse_nid(argv[i + 1], "NID"));
		else if (!strcmp(argv[i], "dev"))
			put_str(&m, DP_A_IFNAME, argv[i + 1]);
		else if (!strcmp(argv[i], "backend"))
			put_str(&m, DP_A_BACKEND, argv[i + 1]);
		else
			die("unknown keyword \"%s\" (want nid, dev, backend)", argv[i]);
	}
	if (!argc)
		die("nothing to set (want nid N, dev IFNAME, backend B)");
	nl_do(nl, &m, NULL, NULL);
}

static void cmd_node(struct nl *nl, int argc, char **argv)
{
	struct msg m;

	if (!argc || !strcmp(argv[0], "show")) {
		msg_init(&m, nl->family, 0, DP_CMD_NODE_GET);
		nl_do(nl, &m, node_cb, NULL);
	} else if (!strcmp(argv[0], "set")) {
		cmd_node_set(nl, argc - 1, argv + 1);
	} else if (!strcmp(argv[0], "detach") && argc == 1) {
		nl_simple(nl, DP_CMD_NODE_DETACH);
	} else {
		usage(stderr, 1);
	}
}

/* ------------------------------------------------------------------ */
/* nart                                                                */
/* ------------------------------------------------------------------ */

struct nart_ent {
	uint32_t nid;
	uint8_t alen;
	uint8_t addr[LLADDR_MAX];
	uint8_t rlen;
	uint8_t route[ROUTE_MAX];
};

/* A route: 1..ROUTE_MAX hex bytes, each with its top bit set; 0 if bad. */
static size_t parse_route(const char *s, uint8_t *out)
{
	uint8_t b[LLADDR_MAX];
	size_t n = parse_mac(s, b), i;

	if (n > ROUTE_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!(b[i] & 0x80))
			return 0;
	memcpy(out, b, n);
	return n;
}

/*
 * Text: "NID MAC [ROUTE]" per line, the NART file's format, and for an
 * entry neighbour discovery made a comment "# discovered heard_ms N";
 * JSON: {"nid", "lladdr", "route", "origin", "heard_ms"} (route null
 * without one, heard_ms null for a static entry).  A module without
 * discovery sends no origin: its entries are all static.
 */
static void nart_cb(const struct nlattr **tb, void *arg)
{
	int disc = get_u32(tb[DP_A_NART_ORIGIN]) == DP_NART_DISCOVERED;
	char buf[3 * LLADDR_MAX + 1];
	const char *mac;
	struct rec r;

	(void)arg;
	json_next();
	if (json) {
		rec_begin(&r, stdout, "", "");
		rec_u64(&r, "nid", get_u32(tb[DP_A_NID]));
		rec_mac(&r, "lladdr", tb[DP_A_LLADDR]);
		rec_mac(&r, "route", tb[DP_A_ROUTE]);
		rec_str(&r, "origin", disc ? "discovered" : "static", "none");
		rec_key(&r, "heard_ms");
		if (tb[DP_A_NART_HEARD_MS])
			printf("%" PRIu32, get_u32(tb[DP_A_NART_HEARD_MS]));
		else
			fputs("null", stdout);
		rec_end(&r, "");
		return;
	}
	mac = mac_str(tb[DP_A_LLADDR], buf);
	printf("%" PRIu32 " %s", get_u32(tb[DP_A_NID]), mac ? mac : "none");
	mac = mac_str(tb[DP_A_ROUTE], buf);
	printf("%s%s", mac ? " " : "", mac ? mac : "");
	if (disc)
		printf("  # discovered heard_ms %" PRIu32,
		       get_u32(tb[DP_A_NART_HEARD_MS]));
	putchar('\n');
}

static void nart_set(struct nl *nl, const struct nart_ent *e)
{
	struct msg m;

	msg_init(&m, nl->family, 0, DP_CMD_NART_SET);
	put_u32(&m, DP_A_NID, e->nid);
	put_attr(&m, DP_A_LLADDR, e->addr, e->alen);
	if (e->rlen)
		put_attr(&m, DP_A_ROUTE, e->route, e->rlen);
	nl_do(nl, &m, NULL, NULL);
}

/* Parse one line of a NART file; 0 = blank/comment, 1 = entry, -1 = bad. */
static int nart_line(char *line, struct nart_ent *e)
{
	char *nid, *mac, *route, *extra, *end;
	unsigned long v;

	line[strcspn(line, "#\r\n")] = '\0';
	nid = strtok(line, " \t");
	if (!nid)
		return 0;
	mac = strtok(NULL, " \t");
	route = strtok(NULL, " \t");
	extra = strtok(NULL, " \t");
	if (!mac || extra)
		return -1;
	e->rlen = route ? (uint8_t)parse_route(route, e->route) : 0;
	if (route && !e->rlen)
		return -1;
	errno = 0;
	v = strtoul(nid, &end, 0);
	if (errno || *end || !v || v > UINT32_MAX || *nid == '-')
		return -1;
	e->nid = (uint32_t)v;
	e->alen = (uint8_t)parse_mac(mac, e->addr);
	return e->alen ? 1 : -1;
}

/* Read the whole file first, so a bad line leaves the NART untouched. */
static size_t nart_read(const char *path, struct nart_ent **out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[512];
	size_t n = 0, cap = 0, lineno = 0;
	struct nart_ent e, *v = NULL;
	int r;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		r = nart_line(line, &e);
		if (r < 0)
			die("%s:%zu: bad line (want \"NID MAC [ROUTE]\", e.g. \"2 52:54:00:00:00:02\")",
			    path, lineno);
		if (!r)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die("%s", strerror(ENOMEM));
		}
		v[n++] = e;
	}
	if (ferror(f))
		die("%s: %s", path, strerror(errno));
	if (f != stdin)
		fclose(f);
	*out = v;
	return n;
}

static void cmd_nart_load(struct nl *nl, const char *path)
{
	struct nart_ent *v = NULL;
	size_t i, n = nart_read(path, &v);

	nl_simple(nl, DP_CMD_NART_FLUSH);
	for (i = 0; i < n; i++)
		nart_set(nl, &v[i]);
	free(v);
}

static void cmd_nart_add(struct nl *nl, const char *nid, const char *mac,
			 const char *route)
{
	struct nart_ent e;

	e.nid = parse_nid(nid, "NID");
	e.alen = (uint8_t)parse_mac(mac, e.addr);
	if (!e.alen)
		die("bad link address \"%s\" (want hex bytes like 52:54:00:00:00:02)", mac);
	e.rlen = route ? (uint8_t)parse_route(route, e.route) : 0;
	if (route && !e.rlen)
		die("bad route \"%s\" (want 1..%d bytes with the top bit set, like 87:80)",
		    route, ROUTE_MAX);
	nart_set(nl, &e);
}

static void cmd_nart(struct nl *nl, int argc, char **argv)
{
	struct msg m;

	if (!argc || (!strcmp(argv[0], "show") && argc == 1)) {
		json_open("[");
		nl_dump(nl, DP_CMD_NART_GET, nart_cb, NULL);
		json_close("]");
	} else if (!strcmp(argv[0], "load") && argc == 2) {
		cmd_nart_load(nl, argv[1]);
	} else if (!strcmp(argv[0], "add") && (argc == 3 || argc == 4)) {
		cmd_nart_add(nl, argv[1], argv[2], argc == 4 ? argv[3] : NULL);
	} else if (!strcmp(argv[0], "del") && argc == 2) {
		msg_init(&m, nl->family, 0, DP_CMD_NART_DEL);
		put_u32(&m, DP_A_NID, parse_nid(argv[1], "NID"));
		nl_do(nl, &m, NULL, NULL);
	} else if (!strcmp(argv[0], "flush") && argc == 1) {
		nl_simple(nl, DP_CMD_NART_FLUSH);
	} else {
		usage(stderr, 1);
	}
}

/* ------------------------------------------------------------------ */
/* ep                                                                  */
/* ------------------------------------------------------------------ */

/* The stats line: DP_A_EP_STATS attribute i; 12 (queued) is on the endpoint's line. */
static void ep_stats(FILE *f, const struct nlattr *a)
{
	static const char *const names[] = {
		NULL, "tx_msgs", "tx_bytes", "rx_msgs", "rx_bytes", "rx_drop_full",
		"rx_drop_admit", "tx_unacked", "tx_undelivered", "tx_retrans",
		"tx_blocked", "rx_dup", NULL, "wait_poll", "wait_poll_hit",
		"wait_sleep",
	};
	const struct nlattr *tb[ATTR_MAX + 1];
	struct rec r;
	size_t i;

	if (!a)
		return;
	parse_nested(tb, a);
	if (json)
		fputs(",\"stats\":", f);
	rec_begin(&r, f, "  ", " ");
	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i] && tb[i])	/* an older module lacks 7 on */
			rec_u64(&r, names[i], get_u64(tb[i]));
	rec_end(&r, "\n");
}

static int32_t get_s32(const struct nlattr *a)
{
	return (int32_t)get_u32(a);
}

/* The errnos a session fails with, by name; others by number; NULL for 0. */
static const char *errno_name(uint32_t err, char *buf, size_t len)
{
	switch (err) {
	case 0:
		return NULL;	/* none */
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case ECONNRESET:
		return "ECONNRESET";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	}
	snprintf(buf, len, "%" PRIu32, err);
	return buf;
}

static const char *edge_state_name(uint32_t state)
{
	static const char *const names[] = {
		[DP_EDGE_IDLE] = "idle", [DP_EDGE_HELLO] = "hello",
		[DP_EDGE_OPEN] = "open", [DP_EDGE_FAILED] = "failed",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

/* The rest of an edge: its session (a reliable endpoint's edges). */
static void edge_session(struct rec *r, const struct nlattr **tb)
{
	char buf[16];

	rec_str(r, "state", edge_state_name(get_u32(tb[DP_A_EDGE_STATE])), NULL);
	rec_str(r, "err", errno_name(get_u32(tb[DP_A_EDGE_ERR]), buf, sizeof(buf)), "none");
	rec_u64(r, "isn", get_u32(tb[DP_A_EDGE_ISN]));
	rec_u64(r, "snd_una", get_u32(tb[DP_A_EDGE_SND_UNA]));
	rec_u64(r, "snd_nxt", get_u32(tb[DP_A_EDGE_SND_NXT]));
	rec_u64(r, "unacked", get_u32(tb[DP_A_EDGE_UNACKED]));
	rec_s64(r, "credit_left", get_s32(tb[DP_A_EDGE_CREDIT]));
	rec_u64(r, "cwnd", get_u32(tb[DP_A_EDGE_CWND]));
	rec_u64(r, "rto_ms", get_u32(tb[DP_A_EDGE_RTO_MS]));
	rec_u64(r, "backoff", get_u32(tb[DP_A_EDGE_BACKOFF]));
	if (tb[DP_A_EDGE_HEARD_MS])
		rec_u64(r, "heard_ms", get_u32(tb[DP_A_EDGE_HEARD_MS]));
	else
		rec_str(r, "heard_ms", NULL, "-");
	/* not from a module older than the counts */
	if (tb[DP_A_EDGE_TIMEOUTS])
		rec_u64(r, "timeouts", get_u32(tb[DP_A_EDGE_TIMEOUTS]));
	if (tb[DP_A_EDGE_UNDONE])
		rec_u64(r, "undone", get_u32(tb[DP_A_EDGE_UNDONE]));
}

/*
 * JSON of the endpoint being listed: its own fields, edges and rx peers
 * are kept apart until the next endpoint (a continuation message adds more
 * edges and rx peers to it), then printed as one object.
 */
struct ep_out {
	char *buf[3];
	size_t len[3];
	FILE *f[3];	/* text: stdout for all three */
	int open;
};
enum { EP_HEAD, EP_EDGES, EP_RX };

static struct ep_out ep_out;

static void ep_flush(void)
{
	struct ep_out *o = &ep_out;
	int i;

	if (!json || !o->open)
		return;
	for (i = 0; i < 3; i++)
		if (fclose(o->f[i]))
			die("%s", strerror(errno));
	json_next();
	printf("%s,\"edges\":[%s],\"rx_peers\":[%s]}", o->buf[EP_HEAD], o->buf[EP_EDGES],
	       o->buf[EP_RX]);
	for (i = 0; i < 3; i++)
		free(o->buf[i]);
	o->open = 0;
}

/* Where the next endpoint's parts go; a new endpoint flushes the last. */
static void ep_start(int cont)
{
	struct ep_out *o = &ep_out;
	int i;

	if (!json) {
		for (i = 0; i < 3; i++)
			o->f[i] = stdout;
		return;
	}
	if (cont && o->open)
		return;
	ep_flush();
	for (i = 0; i < 3; i++) {
		o->f[i] = open_memstream(&o->buf[i], &o->len[i]);
		if (!o->f[i])
			die("%s", strerror(errno));
	}
	o->open = 1;
}

/* A separator before the second and later elements of a JSON list. */
static void ep_sep(FILE *f)
{
	if (json && ftell(f) > 0)
		fputc(',', f);
}

/*
 * A raw edge's tx_seq is its messages sent; a reliable edge leaves it 0
 * and shows its session instead (sent: snd_nxt - isn).
 */
static void ep_edge(const struct nlattr **tb)
{
	FILE *f = ep_out.f[EP_EDGES];
	struct rec r;

	ep_sep(f);
	rec_begin(&r, f, "  edge ", " ");
	rec_u64(&r, "nid", get_u32(tb[DP_A_NID]));
	rec_u64(&r, "dpid", get_u32(tb[DP_A_DPID]));
	if (tb[DP_A_EDGE_STATE])
		edge_session(&r, tb);
	else
		rec_u64(&r, "tx_seq", get_u32(tb[DP_A_EDGE_TX_SEQ]));
	rec_end(&r, "\n");
}

static void ep_rx_peer(const struct nlattr **tb)
{
	FILE *f = ep_out.f[EP_RX];
	struct rec r;

	ep_sep(f);
	rec_begin(&r, f, "  rx_peer ", " ");
	rec_u64(&r, "nid", get_u32(tb[DP_A_NID]));
	rec_u64(&r, "dpid", get_u32(tb[DP_A_DPID]));
	rec_u64(&r, "isn", get_u32(tb[DP_A_RX_PEER_ISN]));
	rec_u64(&r, "rcv_nxt", get_u32(tb[DP_A_RX_PEER_RCV_NXT]));
	rec_u64(&r, "held", get_u32(tb[DP_A_RX_PEER_HELD]));
	rec_s64(&r, "credit_left", get_s32(tb[DP_A_RX_PEER_CREDIT]));
	rec_end(&r, "\n");
}

/* Edges and rx peers are many attributes of one type: walk them, not the index. */
static void ep_list(const struct nlattr *a, uint16_t type, void (*show)(const struct nlattr **))
{
	const struct nlattr *e, *tb[ATTR_MAX + 1];
	size_t left;

	if (!a)
		return;
	e = attr_data(a);
	left = attr_len(a);
	while (left >= NLA_HDRLEN && e->nla_len >= NLA_HDRLEN && e->nla_len <= left) {
		if ((e->nla_type & NLA_TYPE_MASK) == type) {
			parse_nested(tb, e);
			show(tb);
		}
		if ((size_t)NLA_ALIGN(e->nla_len) >= left)
			break;
		left -= NLA_ALIGN(e->nla_len);
		e = (const struct nlattr *)((const char *)e + NLA_ALIGN(e->nla_len));
	}
}

/* The admission rule as a word: any, peers, uid or peers+uid. */
static const char *admit_name(uint32_t admit)
{
	static const char *const names[] = { "any", "peers", "uid", "peers+uid" };

	return admit < 4 ? names[admit] : "?";
}

/* The endpoint's own line (JSON: the object's fields up to "stats"). */
static void ep_head(FILE *f, const struct nlattr **tb)
{
	struct rec r;

	rec_begin(&r, f, "", " ");
	rec_u64(&r, "dpid", get_u32(tb[DP_A_DPID]));
	rec_u64(&r, "uid", get_u32(tb[DP_A_EP_UID]));
	rec_u64(&r, "pool", get_u32(tb[DP_A_EP_POOL_SIZE]));
	rec_u64(&r, "queued", get_u32(tb[DP_A_EP_QUEUED]));
	if (tb[DP_A_EP_POOL_TAKEN])	/* a module before these says nothing */
		rec_u64(&r, "taken", get_u32(tb[DP_A_EP_POOL_TAKEN]));
	if (tb[DP_A_EP_POOL_OPEN])
		rec_u64(&r, "open", get_u32(tb[DP_A_EP_POOL_OPEN]));
	if (tb[DP_A_EP_TX_CORKED])
		rec_u64(&r, "corked", get_u64(tb[DP_A_EP_TX_CORKED]));
	if (tb[DP_A_EP_BIND_FLAGS])
		rec_str(&r, "mode", get_u32(tb[DP_A_EP_BIND_FLAGS]) & DP_BIND_RAW ?
			"raw" : "reliable", NULL);
	rec_str(&r, "admit", admit_name(get_u32(tb[DP_A_EP_ADMIT])), NULL);
	if (!json)
		rec_end(&r, "\n");
	/* JSON: the object stays open for stats, edges and rx_peers */
}

static void ep_cb(const struct nlattr **tb, void *arg)
{
	(void)arg;
	/* A continuation (DP_A_EP_CONT) has only more edges and rx peers. */
	ep_start(!!tb[DP_A_EP_CONT]);
	if (!tb[DP_A_EP_CONT]) {
		ep_head(ep_out.f[EP_HEAD], tb);
		ep_stats(ep_out.f[EP_HEAD], tb[DP_A_EP_STATS]);
	}
	ep_list(tb[DP_A_EP_EDGES], DP_A_EDGE, ep_edge);
	ep_list(tb[DP_A_EP_RX_PEERS], DP_A_RX_PEER, ep_rx_peer);
}

static void cmd_ep(struct nl *nl)
{
	json_open("[");
	nl_dump(nl, DP_CMD_EP_GET, ep_cb, NULL);
	ep_flush();
	json_close("]");
}

static unsigned long parse_num(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || !v || v > max || *s == '-')
		die("bad %s \"%s\" (want 1..%lu)", what, s, max);
	return v;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * dpctl ep watch MS [COUNT]: the endpoints every MS ms, COUNT times or
 * until killed, from one process: a script sampling an edge through a run
 * costs the run one netlink dump per sample, not a fork and exec.  Text
 * leads each dump with "# t_ms N" (since the first); JSON prints each as
 * one array on its own line.  Flushed after each dump, so a reader (or a
 * file, the process killed) has every dump whole.
 */
static void cmd_ep_watch(struct nl *nl, int argc, char **argv)
{
	unsigned long ms, count = 0, i;
	struct timespec gap;
	uint64_t t0;

	if (argc < 1 || argc > 2)
		usage(stderr, 1);
	ms = parse_num(argv[0], "interval in ms", 60000);
	if (argc == 2)
		count = parse_num(argv[1], "count", 1000000);
	gap.tv_sec = (time_t)(ms / 1000);
	gap.tv_nsec = (long)(ms % 1000) * 1000000;
	t0 = now_ms();
	for (i = 0; !count || i < count; i++) {
		if (i)
			nanosleep(&gap, NULL);
		if (!json)
			printf("# t_ms %" PRIu64 "\n", now_ms() - t0);
		cmd_ep(nl);
		if (fflush(stdout) != 0)
			die("stdout: %s", strerror(errno));
	}
}

/* ------------------------------------------------------------------ */
/* stats                                                               */
/* ------------------------------------------------------------------ */

/*
 * Counters are read over netlink, which has no slot limit (the ioctl's
 * struct dp_node_stats has DP_CTR_SLOTS): room for a newer module's.
 */
#define DPCTL_CTR_MAX	64

struct counters {
	uint64_t v[DPCTL_CTR_MAX];
	unsigned int n;		/* highest counter index seen + 1 */
};

/* Counter i is attribute type i+1 in the nest; u64 payloads only (skips pads). */
static void counters_cb(const struct nlattr **tb, void *arg)
{
	struct counters *c = arg;
	const struct nlattr *a;
	size_t left;

	if (!tb[DP_A_COUNTERS])
		return;
	a = attr_data(tb[DP_A_COUNTERS]);
	left = attr_len(tb[DP_A_COUNTERS]);
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		unsigned int t = a->nla_type & NLA_TYPE_MASK;

		if (t >= 1 && t <= DPCTL_CTR_MAX && attr_len(a) == sizeof(uint64_t)) {
			c->v[t - 1] = get_u64(a);
			if (t > c->n)
				c->n = t;
		}
		if ((size_t)NLA_ALIGN(a->nla_len) >= left)
			break;
		left -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
}

/* A counter's name; counters newer than this dpctl get "counter_N". */
static const char *ctr_name(unsigned int i, char *buf, size_t len)
{
	const char *name = dp_counter_name(i);

	if (name)
		return name;
	snprintf(buf, len, "counter_%u", i);
	return buf;
}

static void cmd_stats(struct nl *nl, int argc, char **argv)
{
	struct counters c = { .n = 0 };
	struct msg m;
	struct rec r;
	char buf[32];
	unsigned int i, n;

	if (argc == 1 && !strcmp(argv[0], "reset")) {
		nl_simple(nl, DP_CMD_COUNTERS_RESET);
		return;
	}
	if (argc > 1)
		usage(stderr, 1);
	msg_init(&m, nl->family, 0, DP_CMD_NODE_GET);
	nl_do(nl, &m, counters_cb, &c);
	n = c.n > DP_CTR_COUNT ? c.n : DP_CTR_COUNT;
	for (i = 0; argc && i < n; i++)
		if (!strcmp(argv[0], ctr_name(i, buf, sizeof(buf))))
			break;
	if (argc && i == n)
		die("no counter named \"%s\" (see dpctl stats)", argv[0]);
	/* Text prints one counter's value alone; JSON still names it. */
	if (argc && !json) {
		printf("%" PRIu64 "\n", c.v[i]);
		return;
	}
	rec_begin(&r, stdout, "", "\n");
	for (i = argc ? i : 0; i < n; i++) {
		rec_u64(&r, ctr_name(i, buf, sizeof(buf)), c.v[i]);
		if (argc)
			break;
	}
	rec_end(&r, "");
	putchar('\n');
}

/* ------------------------------------------------------------------ */

static void set_ctx(int argc, char **argv)
{
	static char buf[128];
	size_t len = 0;
	int i;

	for (i = 1; i < argc && i <= 3 && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					i > 1 ? " " : "", argv[i]);
	ctx = buf;
}

/* dpctl nart check FILE: validate a NART file without touching the node. */
static void cmd_nart_check(const char *path)
{
	struct nart_ent *v = NULL;
	size_t n = nart_read(path, &v);

	if (json)
		printf("{\"entries\":%zu}\n", n);
	else
		printf("%zu entries\n", n);
	free(v);
}

/* ------------------------------------------------------------------ */
/* discover                                                            */
/* ------------------------------------------------------------------ */

static void discover_cb(const struct nlattr **tb, void *arg)
{
	uint32_t ms = get_u32(tb[DP_A_DISC_INTERVAL_MS]);
	struct rec r;

	(void)arg;
	rec_begin(&r, stdout, "", "\n");
	rec_str(&r, "discover", ms ? "on" : "off", "none");
	rec_u64(&r, "interval_ms", ms);
	rec_end(&r, "");
	putchar('\n');
}

/* Neighbour discovery: show, or turn on (with an interval) or off. */
static void cmd_discover(struct nl *nl, int argc, char **argv)
{
	uint32_t ms = DP_DISC_INTERVAL_DEFAULT_MS;
	struct msg m;
	char *end;

	if (!argc) {
		msg_init(&m, nl->family, 0, DP_CMD_NODE_GET);
		nl_do(nl, &m, discover_cb, NULL);
		return;
	}
	if (!strcmp(argv[0], "off") && argc == 1) {
		ms = 0;
	} else if (!strcmp(argv[0], "on") && argc <= 2) {
		if (argc == 2) {
			errno = 0;
			ms = (uint32_t)strtoul(argv[1], &end, 10);
			if (errno || *end || !*argv[1] || *argv[1] == '-' ||
			    ms < DP_DISC_INTERVAL_MIN_MS || ms > DP_DISC_INTERVAL_MAX_MS)
				die("bad interval \"%s\" (want %u to %u ms)", argv[1],
				    DP_DISC_INTERVAL_MIN_MS, DP_DISC_INTERVAL_MAX_MS);
		}
	} else {
		usage(stderr, 1);
	}
	msg_init(&m, nl->family, 0, DP_CMD_NODE_SET);
	put_u32(&m, DP_A_DISC_INTERVAL_MS, ms);
	nl_do(nl, &m, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* myri map: the mapper (myrimap.c) with the kernel's scouts           */
/* ------------------------------------------------------------------ */

struct scout_ctx {
	struct nl *nl;
	uint32_t ms;
	struct map_probe *p;
	size_t n;
};

static struct scout_ctx *scout_cur;	/* for scout_one(), under scout_cb() */

static void scout_one(const struct nlattr **tb)
{
	uint32_t i = get_u32(tb[DP_A_SCOUT_IDX]);
	struct map_probe *p;

	if (!tb[DP_A_SCOUT_IDX] || i >= scout_cur->n || !tb[DP_A_LLADDR] ||
	    attr_len(tb[DP_A_LLADDR]) != MAP_ADDR_LEN)
		return;
	p = &scout_cur->p[i];
	p->answered = 1;
	memcpy(p->addr, attr_data(tb[DP_A_LLADDR]), MAP_ADDR_LEN);
	p->nid = get_u32(tb[DP_A_NID]);
}

static void scout_cb(const struct nlattr **tb, void *arg)
{
	scout_cur = arg;
	ep_list(tb[DP_A_SCOUTS], DP_A_SCOUT, scout_one);
}

/* map_probe_fn: one DP_CMD_SCOUT; a kernel error ends dpctl. */
static int scout_probe(void *arg, struct map_probe *p, size_t n)
{
	struct scout_ctx *c = arg;
	size_t list, one, i;
	struct msg m;

	msg_init(&m, c->nl->family, 0, DP_CMD_SCOUT);
	put_u32(&m, DP_A_SCOUT_MS, c->ms);
	list = nest_begin(&m, DP_A_SCOUTS);
	for (i = 0; i < n; i++) {
		one = nest_begin(&m, DP_A_SCOUT);
		put_attr(&m, DP_A_ROUTE, p[i].route, p[i].rlen);
		if (p[i].blen)
			put_attr(&m, DP_A_SCOUT_RET, p[i].back, p[i].blen);
		nest_end(&m, one);
	}
	nest_end(&m, list);
	c->p = p;
	c->n = n;
	nl_do(c->nl, &m, scout_cb, c);
	return 0;
}

static void self_cb(const struct nlattr **tb, void *arg)
{
	uint8_t *self = arg;

	if (tb[DP_A_LLADDR] && attr_len(tb[DP_A_LLADDR]) == MAP_ADDR_LEN)
		memcpy(self, attr_data(tb[DP_A_LLADDR]), MAP_ADDR_LEN);
}

static void map_host_text(const struct map_host *h)
{
	size_t i;

	printf("%s%" PRIu32 " ", h->nid ? "" : "# no NID: ", h->nid);
	for (i = 0; i < MAP_ADDR_LEN; i++)
		printf("%s%02x", i ? ":" : "", h->addr[i]);
	for (i = 0; i < h->rlen; i++)
		printf("%s%02x", i ? ":" : " ", h->route[i]);
	putchar('\n');
}

static void map_host_json(const struct map_host *h, int first)
{
	size_t i;

	printf("%s{\"nid\":%" PRIu32 ",\"lladdr\":\"", first ? "" : ",", h->nid);
	for (i = 0; i < MAP_ADDR_LEN; i++)
		printf("%s%02x", i ? ":" : "", h->addr[i]);
	printf("\",\"route\":\"");
	for (i = 0; i < h->rlen; i++)
		printf("%s%02x", i ? ":" : "", h->route[i]);
	printf("\"}");
}

/* The map: a summary, then one NART line per host ("# " before comments). */
static void map_print(const struct map *m, size_t nsw)
{
	size_t i;

	if (json) {
		printf("{\"self_port\":%d,\"switches\":%zu,\"probes\":%lu,\"truncated\":%s,"
		       "\"hosts\":[", m->self_port, nsw, m->probes,
		       m->truncated ? "true" : "false");
		for (i = 0; i < m->nhosts; i++)
			map_host_json(&m->hosts[i], !i);
		printf("]}\n");
		return;
	}
	printf("# myri map: own port %d, %zu switches, %zu hosts, %lu probes%s\n",
	       m->self_port, nsw, m->nhosts, m->probes,
	       m->truncated ? " (search cut short: routes too long or tables full)" : "");
	for (i = 0; i < m->nhosts; i++)
		map_host_text(&m->hosts[i]);
}

/* Load a route to every host with a NID, the first of each NID. */
static void map_load(struct nl *nl, const struct map *m)
{
	struct nart_ent e;
	size_t i, j;

	for (i = 0; i < m->nhosts; i++) {
		const struct map_host *h = &m->hosts[i];

		for (j = 0; j < i && m->hosts[j].nid != h->nid; j++)
			;
		if (!h->nid || j < i) {
			if (h->nid)
				fprintf(stderr, "dpctl: %s: NID %" PRIu32
					" answered from two NICs: the first kept\n", ctx, h->nid);
			continue;
		}
		e.nid = h->nid;
		e.alen = MAP_ADDR_LEN;
		memcpy(e.addr, h->addr, MAP_ADDR_LEN);
		e.rlen = h->rlen;
		memcpy(e.route, h->route, h->rlen);
		nart_set(nl, &e);
	}
}

static void cmd_myri_map(struct nl *nl, int argc, char **argv)
{
	struct scout_ctx c = { .nl = nl, .ms = 200 };
	static struct map m;
	size_t i, nsw = 0;
	int show = 0, err;
	struct msg msg;

	m.ports = MAP_PORTS_DFLT;
	for (i = 0; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "show"))
			show = 1;
		else if (!strcmp(argv[i], "ports") && i + 1 < (size_t)argc)
			m.ports = (unsigned int)parse_num(argv[++i], "ports", MAP_PORTS_MAX);
		else if (!strcmp(argv[i], "wait") && i + 1 < (size_t)argc)
			c.ms = (uint32_t)parse_num(argv[++i], "wait", DP_SCOUT_MS_MAX);
		else
			die("unknown keyword \"%s\" (want ports N, wait MS, show)", argv[i]);
	}
	msg_init(&msg, nl->family, 0, DP_CMD_NODE_GET);
	nl_do(nl, &msg, self_cb, m.self);
	m.probe = scout_probe;
	m.arg = &c;
	err = map_run(&m);
	if (err == -ENOENT)
		die("no scout came back: is the cable in, and the NIC on a switch?");
	if (err)
		die("%s", strerror(-err));
	for (i = 0; i < m.nsw; i++)
		nsw += m.sw[i].same_as < 0;
	map_print(&m, nsw);
	if (!show)
		map_load(nl, &m);
}

static void cmd_myri(struct nl *nl, int argc, char **argv)
{
	if (argc >= 1 && !strcmp(argv[0], "map"))
		cmd_myri_map(nl, argc - 1, argv + 1);
	else
		usage(stderr, 1);
}

/* ------------------------------------------------------------------ */
/* monitor                                                             */
/* ------------------------------------------------------------------ */

static const char *const ev_names[][2] = {
	[DP_EV_SESSION_OPEN] = { "session", "open" },
	[DP_EV_SESSION_FAILED] = { "session", "failed" },
	[DP_EV_SESSION_RESET] = { "session", "reset" },
	[DP_EV_PEER_RESTART] = { "peer", "restart" },
	[DP_EV_NIC_ATTACH] = { "nic", "attach" },
	[DP_EV_NIC_DETACH] = { "nic", "detach" },
	[DP_EV_NART_SET] = { "nart", "set" },
	[DP_EV_NART_DEL] = { "nart", "del" },
	[DP_EV_NART_FLUSH] = { "nart", "flush" },
	[DP_EV_NID_CONFLICT] = { "nid", "conflict" },
};

/* One event: "WHAT EVENT nid N" and what it names, as name value pairs. */
static void event_cb(const struct nlattr **tb, void *arg)
{
	uint32_t kind = get_u32(tb[DP_A_EV_KIND]);
	const char *what = "?", *ev = "?";
	char buf[32];
	struct rec r;

	(void)arg;
	if (kind < sizeof(ev_names) / sizeof(ev_names[0]) && ev_names[kind][0]) {
		what = ev_names[kind][0];
		ev = ev_names[kind][1];
	}
	rec_begin(&r, stdout, "", " ");
	rec_str(&r, what, ev, "none");
	rec_u64(&r, "nid", get_u32(tb[DP_A_NID]));
	if (tb[DP_A_DPID])
		rec_u64(&r, "dpid", get_u32(tb[DP_A_DPID]));
	if (tb[DP_A_EV_PEER_DPID]) {
		rec_u64(&r, "peer_nid", get_u32(tb[DP_A_EV_PEER_NID]));
		rec_u64(&r, "peer_dpid", get_u32(tb[DP_A_EV_PEER_DPID]));
	} else if (tb[DP_A_EV_PEER_NID]) {
		rec_u64(&r, kind == DP_EV_NID_CONFLICT ? "claimed" : "entry",
			get_u32(tb[DP_A_EV_PEER_NID]));
	}
	if (tb[DP_A_EDGE_ERR])
		rec_str(&r, "err", errno_name(get_u32(tb[DP_A_EDGE_ERR]), buf, sizeof(buf)),
			"none");
	if (tb[DP_A_BACKEND])
		rec_str(&r, "backend", get_str(tb[DP_A_BACKEND], NULL), "none");
	if (tb[DP_A_IFNAME])
		rec_str(&r, "ifname", get_str(tb[DP_A_IFNAME], NULL), "none");
	if (tb[DP_A_LLADDR])
		rec_mac(&r, "lladdr", tb[DP_A_LLADDR]);
	if (tb[DP_A_ROUTE])
		rec_mac(&r, "route", tb[DP_A_ROUTE]);
	if (tb[DP_A_NART_ORIGIN])
		rec_str(&r, "origin", get_u32(tb[DP_A_NART_ORIGIN]) == DP_NART_DISCOVERED ?
			"discovered" : "static", "none");
	rec_end(&r, "");
	putchar('\n');
	fflush(stdout);
}

/* Print the node's events as they come, until killed. */
static void cmd_monitor(struct nl *nl)
{
	static char buf[BUF_SIZE];
	const struct nlmsghdr *h;
	ssize_t n;
	size_t off;

	if (!nl->mcgrp)
		die("the module has no \"%s\" group: too old?", DP_GENL_MCGRP_EVENTS);
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &nl->mcgrp,
		       sizeof(nl->mcgrp)) < 0)
		die("join the events group: %s", strerror(errno));
	for (;;) {
		n = recv(nl->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == ENOBUFS) {	/* we were too slow */
			fprintf(stderr, "dpctl: monitor: events lost\n");
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("netlink receive: %s", strerror(errno));
		off = 0;
		while ((h = nl_next(buf, n, &off))) {
			if (h->nlmsg_type == nl->family &&
			    h->nlmsg_len >= NLMSG_LENGTH(GENL_HDRLEN) &&
			    ((const struct genlmsghdr *)NLMSG_DATA(h))->cmd == DP_CMD_EVENT)
				nl_deliver(h, event_cb, NULL);
		}
	}
}

int main(int argc, char **argv)
{
	struct nl nl;

	if (argc > 1 && (!strcmp(argv[1], "-j") || !strcmp(argv[1], "--json"))) {
		json = 1;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (argc < 2)
		usage(stderr, 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		usage(stdout, 0);
	if (strcmp(argv[1], "node") && strcmp(argv[1], "nart") &&
	    strcmp(argv[1], "ep") && strcmp(argv[1], "stats") && strcmp(argv[1], "monitor") &&
	    strcmp(argv[1], "discover") && strcmp(argv[1], "myri"))
		usage(stderr, 1);
	set_ctx(argc, argv);
	/* No module needed to check a file. */
	if (argc == 4 && !strcmp(argv[1], "nart") && !strcmp(argv[2], "check")) {
		cmd_nart_check(argv[3]);
		return 0;
	}
	nl_open(&nl);
	nl_family(&nl);
	if (!strcmp(argv[1], "node"))
		cmd_node(&nl, argc - 2, argv + 2);
	else if (!strcmp(argv[1], "nart"))
		cmd_nart(&nl, argc - 2, argv + 2);
	else if (!strcmp(argv[1], "ep") && argc == 2)
		cmd_ep(&nl);
	else if (!strcmp(argv[1], "ep") && !strcmp(argv[2], "watch"))
		cmd_ep_watch(&nl, argc - 3, argv + 3);
	else if (!strcmp(argv[1], "stats"))
		cmd_stats(&nl, argc - 2, argv + 2);
	else if (!strcmp(argv[1], "monitor") && argc == 2)
		cmd_monitor(&nl);
	else if (!strcmp(argv[1], "discover"))
		cmd_discover(&nl, argc - 2, argv + 2);
	else if (!strcmp(argv[1], "myri"))
		cmd_myri(&nl, argc - 2, argv + 2);
	else
		usage(stderr, 1);
	if (fflush(stdout) != 0)
		die("stdout: %s", strerror(errno));
	return 0;
}
