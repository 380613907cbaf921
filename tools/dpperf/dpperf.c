// SPDX-License-Identifier: GPL-2.0
/*
 * dpperf: the Directed Point paper's ping-pong and bandwidth programs
 * (section 6.2), run over dp and, for comparison on the same link, over
 * UDP, TCP and raw AF_PACKET sockets.
 *
 *   dpperf server [options]     answers one client, exits after its BYE
 *   dpperf client [options]     prints TSV results on stdout
 *
 * The client drives everything through small control messages, so one
 * server serves any sequence of tests.  Control messages start with the
 * bytes "DPPF"; data messages are filled with 0xA5, so the two can never be
 * confused, even when a datagram was lost.  Every phase (one test at one
 * size) starts with SETUP/SETUP_ACK, which also drains late messages of an
 * earlier phase: the server answers in order.
 *
 * Output (client): comment lines start with '#'; result lines are
 *   [TAG\t]PROTO\tTEST\tSIZE\tVALUE\tUNIT
 * pingpong: mean round trip in us (CLOCK_MONOTONIC); bw: MB/s (10^6 B/s);
 * VALUE is "nan" for a size that failed (timeout, too big).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "dp.h"
#include "dp_uring.h"

enum proto { P_DP, P_UDP, P_TCP, P_RAW };
static const char *const proto_names[] = { "dp", "udp", "tcp", "raw" };

struct opts;
static const char *proto_name(const struct opts *o);

/*
 * T_RATE: small messages per second from one sender; on the wire it is a
 * T_BW phase (the server counts and acks windows the same way).  T_BWSIZE:
 * bandwidth against size, 1 byte to 1 MiB, and from that curve the
 * half-bandwidth size n1/2; T_BW phases too.  T_SENDCOST: the time inside
 * the send calls per message on an unreliable dp edge (--dp-raw) to a node
 * nobody answers for (no server, no ACKs): what a message costs its sender
 * alone, by kernel entry (one write, --batch, --uring).
 */
enum test { T_HELLO, T_PINGPONG, T_BW, T_RATE, T_BWSIZE, T_SENDCOST };
static const char *const test_names[] = { "hello", "pingpong", "bw", "rate", "bwsize",
					  "sendcost" };
#define MAX_TESTS	5

#define MAX_SIZES	64
#define MAX_SIZE	(1u << 20)
#define NOMINAL_POOL	262144u		/* dp.ko's default pool_size */
#define TICK_MS		100		/* granularity of blocking-receive timeouts */
#define SOCK_BUSY_POLL_US 50		/* --busy-poll on a socket: net.core.busy_read's usual */

static const uint32_t pp_sizes[] = { 1, 16, 32, 64, 128, 256, 512, 1024, 1500 };
static const uint32_t bw_sizes[] = { 64, 256, 512, 1024, 1500 };
static const uint32_t rate_sizes[] = { 1, 64 };
static const uint32_t bwsize_sizes[] = { 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536,
					 262144, 1048576 };
#define BWSIZE_MIN	8	/* bwsize: at least this many messages per size */

struct opts {
	int server;
	enum proto proto;
	int tests[MAX_TESTS];	/* T_PINGPONG ... T_SENDCOST in run order, 0 = none */
	const char *peer;
	uint32_t dpid, peer_dpid;
	uint32_t pool;
	int port;
	const char *ifname;
	uint16_t ethertype;
	uint32_t sizes[MAX_SIZES];
	int nsizes;
	unsigned int iters, warmup, window;
	uint64_t bytes;
	unsigned int messages;	/* rate: messages per size */
	int spin;
	unsigned int timeout_ms, connect_ms, idle_s;
	const char *tag;
	const char *ready;
	unsigned int linger_ms;	/* client: keep the endpoint this long after */
	int dp_raw;		/* dp: bind with DP_BIND_RAW (unreliable, v1) */
	unsigned int batch;	/* dp, bw and rate: messages per send call */
	int uring;		/* dp, bw and rate: send through io_uring */
	unsigned int drop;	/* server, testing dpperf itself: drop every Nth */
	long poll_usecs;	/* dp: read()'s poll bound (DP_IOC_SET_WAIT); -1: the module's */
	int busy_poll;		/* dp: DP_WAIT_BUSY_POLL */
};

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("dpperf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t after_ms(unsigned int ms)
{
	return now_ns() + (int64_t)ms * 1000000;
}

/* Busy loops look at the clock only every 128 turns: it is not free. */
static int spin_expired(unsigned int *spins, int64_t deadline)
{
	return (++*spins & 127) == 0 && now_ns() > deadline;
}

/* ------------------------------------------------------------------ */
/* Control messages                                                    */
/* ------------------------------------------------------------------ */

enum { C_SETUP = 1, C_SETUP_ACK, C_ACKREQ, C_ACK, C_BYE };

#define CTRL_MAGIC	"DPPF"
#define CTRL_LEN	48	/* > 46, the Ethernet minimum payload (raw pads) */
#define DATA_FILL	0xA5	/* first byte of every data message */

struct ctrl {
	uint32_t cmd, phase, test, size, count, window, seq;
	uint32_t nid, dpid;	/* dp: the sender's endpoint, to connect back */
	uint64_t value;		/* SETUP_ACK: receive capacity; ACK: messages seen */
};

static void ctrl_encode(const struct ctrl *c, unsigned char *b)
{
	uint32_t w[11] = { c->cmd, c->phase, c->test, c->size, c->count, c->window,
			   c->seq, c->nid, c->dpid, (uint32_t)(c->value >> 32),
			   (uint32_t)c->value };
	int i;

	memcpy(b, CTRL_MAGIC, 4);
	for (i = 0; i < 11; i++)
		w[i] = htonl(w[i]);
	memcpy(b + 4, w, sizeof(w));
}

/* Decode a control message; 0 if m is a data message. */
static int ctrl_decode(const void *m, ssize_t n, struct ctrl *c)
{
	uint32_t w[11];
	int i;

	if (n < CTRL_LEN || memcmp(m, CTRL_MAGIC, 4))
		return 0;
	memcpy(w, (const char *)m + 4, sizeof(w));
	for (i = 0; i < 11; i++)
		w[i] = ntohl(w[i]);
	*c = (struct ctrl){ w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8],
			    (uint64_t)w[9] << 32 | w[10] };
	return 1;
}

/* ------------------------------------------------------------------ */
/* Transports                                                          */
/* ------------------------------------------------------------------ */

struct xp {
	enum proto proto;
	int fd;
	int spin;
	int held;		/* dp spin: the last message is still in the pool */
	int broken;		/* tcp: a timeout left the stream out of step */
	int so_busy_poll;	/* sockets, --busy-poll: SO_BUSY_POLL as read back */
	int setup_fails;	/* phases in a row whose SETUP went unanswered */
	int fixed_peer;		/* datagrams from others are ignored */
	unsigned char *buf;	/* receive buffer */
	unsigned char *out;	/* send buffer: receiving must not overwrite it */
	size_t cap;
	size_t max_msg;
	uint32_t pool;		/* dp: our pool's data area; tcp server: --pool; others 0 */
	uint32_t nid, dpid;	/* dp: our address */
	unsigned int batch;	/* dp: data messages per dp_sendv or io_uring submit */
	int uring;		/* dp: data messages go as DP_URING_SEND */
	struct dp_send *sv;	/* dp, batched: batch descriptors of out */
	struct io_uring ring;
	struct sockaddr_storage peer;
	socklen_t peerlen;
	unsigned int timeout_ms;
};

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
	(void)sig;
	ticks++;
}

/*
 * dp's read() has no SO_RCVTIMEO: a periodic SIGALRM (no SA_RESTART) makes
 * a blocked read() return EINTR so the deadline can be checked.  It runs
 * only while a phase runs, so stdio never sees EINTR.
 */
static void tick(const struct xp *x, int on)
{
	struct itimerval it = { { 0, TICK_MS * 1000 }, { 0, TICK_MS * 1000 } };
	struct sigaction sa = { .sa_handler = on_tick };

	if (x->proto != P_DP || x->spin)
		return;
	if (on)
		sigaction(SIGALRM, &sa, NULL);
	else
		memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
}

static int retryable(int err)
{
	return err == EINTR || err == EAGAIN || err == ENOBUFS || err == ECONNREFUSED;
}

static ssize_t xp_send_once(struct xp *x, const void *b, size_t len)
{
	switch (x->proto) {
	case P_DP:
		return dp_write(x->fd, b, len);
	case P_TCP:
		return send(x->fd, b, len, MSG_NOSIGNAL);
	default:
		return sendto(x->fd, b, len, 0, x->peerlen ? (struct sockaddr *)&x->peer : NULL,
			      x->peerlen);
	}
}

/*
 * Send one message.  A full queue (ENOBUFS, EAGAIN) or a UDP peer not yet
 * listening (ECONNREFUSED) is retried until the message timeout.
 */
static int xp_send(struct xp *x, const void *b, size_t len)
{
	int64_t deadline = after_ms(x->timeout_ms);
	size_t done = 0;

	while (done < len) {
		ssize_t n = xp_send_once(x, (const char *)b + done, len - done);

		if (n > 0 && x->proto == P_TCP) {
			done += (size_t)n;
			continue;
		}
		if (n >= 0)
			return 0;
		if (!retryable(errno))
			return -1;
		if (now_ns() > deadline) {
			/* Part of a TCP message may have gone: the stream is lost. */
			x->broken = x->proto == P_TCP;
			errno = ETIMEDOUT;
			return -1;
		}
		if (errno == ECONNREFUSED)
			usleep(10000);	/* nobody there yet: do not spin */
		else if (errno != EINTR)
			sched_yield();
	}
	return 0;
}

/* dp, spin: the paper's loop, dp_read() on the mapped pool, no system call. */
static ssize_t dp_recv_spin(struct xp *x, const void **m, int64_t deadline)
{
	unsigned int spins = 0;
	char *p;
	ssize_t n;

	while ((n = dp_read(x->fd, &p)) == 0)
		if (spin_expired(&spins, deadline)) {
			errno = ETIMEDOUT;
			return -1;
		}
	if (n > 0) {
		x->held = 1;
		*m = p;
	}
	return n;
}

/* dp, block: read() sleeps, copies and releases in one system call. */
static ssize_t dp_recv_block(struct xp *x, const void **m, int64_t deadline)
{
	for (;;) {
		ssize_t n = read(x->fd, x->buf, x->cap);

		if (n > 0) {
			*m = x->buf;
			return n;
		}
		if (n < 0 && errno != EINTR)
			return -1;
		if (now_ns() > deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

/* Datagrams from a peer other than the fixed one are not ours. */
static int dgram_foreign(const struct xp *x, const struct sockaddr_storage *from)
{
	const struct sockaddr_ll *a = (const void *)from, *b = (const void *)&x->peer;

	if (x->proto != P_RAW)
		return 0;
	if (a->sll_pkttype == PACKET_OUTGOING)
		return 1;
	return x->fixed_peer && memcmp(a->sll_addr, b->sll_addr, 6);
}

static ssize_t dgram_recv1(struct xp *x, int flags)
{
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n;

	n = recvfrom(x->fd, x->buf, x->cap, flags, (struct sockaddr *)&from, &fl);
	if (n < 0)
		return -1;
	if (dgram_foreign(x, &from)) {
		errno = EAGAIN;
		return -1;
	}
	/* The server answers whoever spoke last (the client sockets are connected). */
	if (!x->fixed_peer) {
		memcpy(&x->peer, &from, fl);
		x->peerlen = fl;
	}
	return n;
}

/* UDP and raw: spin = MSG_DONTWAIT loop; block = SO_RCVTIMEO ticks. */
static ssize_t dgram_recv(struct xp *x, const void **m, int64_t deadline)
{
	unsigned int spins = 0;

	for (;;) {
		ssize_t n = dgram_recv1(x, x->spin ? MSG_DONTWAIT : 0);

		if (n >= 0) {
			*m = x->buf;
			return n;
		}
		/* ECONNREFUSED: an ICMP error from a server not yet listening. */
		if (!retryable(errno))
			return -1;
		if (x->spin ? spin_expired(&spins, deadline) : now_ns() > deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

/* TCP: a message is exactly `expect` bytes of the stream. */
static ssize_t tcp_recv(struct xp *x, const void **m, size_t expect, int64_t deadline)
{
	unsigned int spins = 0;
	size_t got = 0;

	if (expect > x->cap)
		expect = x->cap;
	while (got < expect) {
		ssize_t n = recv(x->fd, x->buf + got, expect - got, x->spin ? MSG_DONTWAIT : 0);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		if (!retryable(errno))
			return -1;
		if (x->spin ? spin_expired(&spins, deadline) : now_ns() > deadline) {
			x->broken = 1;
			errno = ETIMEDOUT;
			return -1;
		}
	}
	*m = x->buf;
	return (ssize_t)got;
}

/*
 * Receive one message until deadline: its length and *m, or -1 with errno
 * (ETIMEDOUT on timeout, EPIPE when a TCP peer closed).  `expect` is the
 * length a stream transport must read; datagrams carry their own.
 */
static ssize_t xp_recv(struct xp *x, const void **m, size_t expect, int64_t deadline)
{
	switch (x->proto) {
	case P_DP:
		return x->spin ? dp_recv_spin(x, m, deadline) : dp_recv_block(x, m, deadline);
	case P_TCP:
		return tcp_recv(x, m, expect, deadline);
	default:
		return dgram_recv(x, m, deadline);
	}
}

/* Done with the last received message: dp spin releases it from the pool. */
static void xp_release(struct xp *x)
{
	if (x->held) {
		dp_fsync(x->fd, 1);
		x->held = 0;
	}
}

static int send_ctrl(struct xp *x, const struct ctrl *c)
{
	unsigned char b[CTRL_LEN];

	ctrl_encode(c, b);
	return xp_send(x, b, sizeof(b));
}

/* ------------------------------------------------------------------ */
/* Transport setup                                                     */
/* ------------------------------------------------------------------ */

static uint32_t parse_u32(const char *s, const char *what, uint32_t lo, uint32_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		die("bad %s \"%s\" (want %" PRIu32 "..%" PRIu32 ")", what, s, lo, hi);
	return (uint32_t)v;
}

static void parse_mac(const char *s, unsigned char *mac)
{
	unsigned int b[6];
	char c;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &c) != 6)
		die("bad MAC \"%s\" (want aa:bb:cc:dd:ee:ff)", s);
	for (i = 0; i < 6; i++) {
		if (b[i] > 255)
			die("bad MAC \"%s\"", s);
		mac[i] = (unsigned char)b[i];
	}
}

/* Big receive buffers, so bandwidth windows are limited by dp's pool, not here. */
static void big_rcvbuf(int fd)
{
	int sz = 4 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* Blocking socket calls wake up every tick so deadlines are checked. */
static void sock_tick(int fd, int optname)
{
	struct timeval tv = { 0, TICK_MS * 1000 };

	setsockopt(fd, SOL_SOCKET, optname, &tv, sizeof(tv));
}

/*
 * --busy-poll on a socket: its receive calls poll the NIC for up to
 * --poll-usecs (SO_BUSY_POLL), as dp's read() does with DP_WAIT_BUSY_POLL,
 * so that both can be measured in the same receive mode.
 */
static void sock_busy_poll(struct xp *x, const struct opts *o)
{
	int us = o->poll_usecs >= 0 ? (int)o->poll_usecs : SOCK_BUSY_POLL_US;
	socklen_t len = sizeof(x->so_busy_poll);

	if (!o->busy_poll)
		return;
	if (setsockopt(x->fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us)) < 0)
		die("SO_BUSY_POLL %d: %s", us, strerror(errno));
	/* what the socket took, for the header */
	if (getsockopt(x->fd, SOL_SOCKET, SO_BUSY_POLL, &x->so_busy_poll, &len) < 0)
		die("SO_BUSY_POLL: %s", strerror(errno));
}

/* "dp" (reliable edges, the default) or "dp-raw" (DP_BIND_RAW). */
static const char *proto_name(const struct opts *o)
{
	return o->proto == P_DP && o->dp_raw ? "dp-raw" : proto_names[o->proto];
}

/* --batch, --uring: descriptors of the send buffer to the peer, the ring. */
static void setup_dp_batch(struct xp *x, const struct opts *o, uint32_t nid)
{
	unsigned int i;
	int err;

	x->batch = o->batch ? o->batch : 1;
	x->uring = o->uring;
	if (x->batch == 1 && !x->uring)
		return;
	x->sv = calloc(x->batch, sizeof(*x->sv));
	if (!x->sv)
		die("%s", strerror(ENOMEM));
	for (i = 0; i < x->batch; i++) {
		x->sv[i].to.nid = nid;
		x->sv[i].to.dpid = o->peer_dpid;
		x->sv[i].buf = (uint64_t)(uintptr_t)x->out;
	}
	if (!x->uring)
		return;
	err = io_uring_queue_init(x->batch < 8 ? 8 : x->batch, &x->ring, 0);
	if (err)
		die("io_uring_queue_init: %s", strerror(-err));
}

static void setup_dp(struct xp *x, const struct opts *o)
{
	struct dp_info info;

	x->fd = dp_open_admit(o->dpid, o->pool, o->dp_raw ? DP_BIND_RAW : DP_ADMIT_ANY);
	if (x->fd < 0)
		die("dp_open(%" PRIu32 "): %s", o->dpid, strerror(errno));
	if (dp_getinfo(x->fd, &info) < 0)
		die("dp info: %s", strerror(errno));
	if (o->poll_usecs >= 0 || o->busy_poll) {
		struct dp_wait w;

		if (dp_get_wait(x->fd, &w) < 0 ||
		    dp_set_wait(x->fd, o->poll_usecs >= 0 ? (uint32_t)o->poll_usecs : w.poll_usecs,
				o->busy_poll ? DP_WAIT_BUSY_POLL : 0) < 0)
			die("dp wait policy: %s", strerror(errno));
	}
	x->pool = info.data_size;
	x->max_msg = info.max_msg;
	x->nid = info.nid;
	x->dpid = info.dpid;
	if (o->peer) {
		uint32_t nid = parse_u32(o->peer, "peer NID", 1, UINT32_MAX);

		if (dp_connect(x->fd, nid, o->peer_dpid) < 0)
			die("dp_connect(%" PRIu32 ", %" PRIu32 "): %s", nid, o->peer_dpid,
			    strerror(errno));
		x->fixed_peer = 1;
		setup_dp_batch(x, o, nid);
	}
}

static void ipv4_addr(struct sockaddr_in *sa, const char *host, int port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (host && inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		die("bad IPv4 address \"%s\"", host);
}

static void setup_udp(struct xp *x, const struct opts *o)
{
	struct sockaddr_in sa;

	x->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		die("udp socket: %s", strerror(errno));
	big_rcvbuf(x->fd);
	x->max_msg = 65507;
	if (o->server) {
		ipv4_addr(&sa, NULL, o->port);
		if (bind(x->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			die("udp bind port %d: %s", o->port, strerror(errno));
		return;
	}
	ipv4_addr(&sa, o->peer, o->port);
	if (connect(x->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("udp connect %s: %s", o->peer, strerror(errno));
	x->fixed_peer = 1;
}

static void tcp_nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		die("TCP_NODELAY: %s", strerror(errno));
}

/* Server: listen and take one client, waiting at most the idle time. */
static int tcp_accept(const struct opts *o)
{
	struct sockaddr_in sa;
	struct pollfd p;
	int one = 1, lfd, fd;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("tcp socket: %s", strerror(errno));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ipv4_addr(&sa, NULL, o->port);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0)
		die("tcp listen port %d: %s", o->port, strerror(errno));
	if (o->ready)
		close(open(o->ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (poll(&p, 1, (int)o->idle_s * 1000) <= 0)
		die("tcp: no client within %u s", o->idle_s);
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		die("tcp accept: %s", strerror(errno));
	close(lfd);
	return fd;
}

/* Client: connect, retrying while the server is not yet listening. */
static int tcp_connect(const struct opts *o)
{
	struct sockaddr_in sa;
	int64_t deadline = after_ms(o->connect_ms);
	int fd;

	ipv4_addr(&sa, o->peer, o->port);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			die("tcp socket: %s", strerror(errno));
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		/* Refused or unreachable: the server (or its guest) is not up yet. */
		if (now_ns() > deadline || (errno != ECONNREFUSED && errno != ETIMEDOUT &&
					    errno != EHOSTUNREACH && errno != ENETUNREACH))
			die("tcp connect %s:%d: %s", o->peer, o->port, strerror(errno));
		close(fd);
		usleep(100000);
	}
}

static void setup_tcp(struct xp *x, const struct opts *o)
{
	x->fd = o->server ? tcp_accept(o) : tcp_connect(o);
	tcp_nodelay(x->fd);
	x->max_msg = MAX_SIZE;
	x->fixed_peer = 1;
}

static void setup_raw(struct xp *x, const struct opts *o)
{
	struct sockaddr_ll *ll = (struct sockaddr_ll *)&x->peer;
	struct ifreq ifr;

	if (!o->ifname)
		die("raw needs --ifname");
	x->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(o->ethertype));
	if (x->fd < 0)
		die("packet socket: %s", strerror(errno));
	memset(ll, 0, sizeof(*ll));
	ll->sll_family = AF_PACKET;
	ll->sll_protocol = htons(o->ethertype);
	ll->sll_ifindex = (int)if_nametoindex(o->ifname);
	if (!ll->sll_ifindex)
		die("no interface %s", o->ifname);
	if (bind(x->fd, (struct sockaddr *)ll, sizeof(*ll)) < 0)
		die("packet bind %s: %s", o->ifname, strerror(errno));
	big_rcvbuf(x->fd);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o->ifname);
	x->max_msg = ioctl(x->fd, SIOCGIFMTU, &ifr) == 0 ? (size_t)ifr.ifr_mtu : 1500;
	ll->sll_halen = 6;
	if (o->peer) {
		parse_mac(o->peer, ll->sll_addr);
		x->fixed_peer = 1;
	}
	x->peerlen = sizeof(*ll);
}

/* Open the transport; the server signals readiness through o->ready. */
static void xp_setup(struct xp *x, const struct opts *o)
{
	size_t biggest = CTRL_LEN;
	int i;

	memset(x, 0, sizeof(*x));
	x->proto = o->proto;
	x->spin = o->spin;
	x->timeout_ms = o->timeout_ms;
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > biggest)
			biggest = o->sizes[i];
	/* Servers echo whatever comes: room for any message (bwsize's 1 MiB). */
	x->cap = biggest > MAX_SIZE ? biggest : MAX_SIZE;
	x->buf = malloc(x->cap);
	x->out = malloc(x->cap);
	if (!x->buf || !x->out)
		die("%s", strerror(ENOMEM));
	if (!o->server && !o->peer)
		die("client needs --peer");
	if (o->proto == P_DP)
		setup_dp(x, o);
	else if (o->proto == P_UDP)
		setup_udp(x, o);
	else if (o->proto == P_RAW)
		setup_raw(x, o);
	else
		setup_tcp(x, o);
	if (o->proto != P_DP) {
		/* Sends block on a full buffer in both receive modes. */
		sock_tick(x->fd, SO_SNDTIMEO);
		if (!o->spin)
			sock_tick(x->fd, SO_RCVTIMEO);
		sock_busy_poll(x, o);
	}
	/*
	 * TCP is flow-controlled as a dp edge is: a server given --pool
	 * announces it, so that bandwidth windows can be as large in bytes
	 * as a dp pool of that size (guest-demo.sh's sweep).
	 */
	if (o->proto == P_TCP && o->server)
		x->pool = o->pool;
	if (o->server && o->ready && o->proto != P_TCP)
		close(open(o->ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

struct srv {
	struct ctrl setup;	/* the running phase; cmd 0 before the first */
	uint32_t left;		/* data messages due before the next control one */
	uint64_t received;	/* bw: data messages seen in this phase */
	uint64_t ndata;		/* data messages seen in total (for --drop) */
};

/* A stream must know the length of the next message: data or control. */
static size_t srv_expect(const struct srv *st)
{
	return st->left ? st->setup.size : CTRL_LEN;
}

static uint32_t bw_left(const struct srv *st)
{
	uint64_t rest = st->setup.count - st->received;

	return (uint32_t)(rest < st->setup.window ? rest : st->setup.window);
}

static int srv_setup(struct xp *x, const struct opts *o, struct srv *st, const struct ctrl *c)
{
	struct ctrl ack = { .cmd = C_SETUP_ACK, .phase = c->phase, .nid = x->nid,
			    .dpid = x->dpid, .value = x->pool };

	/* dp without --peer: the client said where it is. */
	if (x->proto == P_DP && !o->peer && dp_connect(x->fd, c->nid, c->dpid) < 0) {
		fprintf(stderr, "dpperf: dp_connect(%" PRIu32 ", %" PRIu32 "): %s\n",
			c->nid, c->dpid, strerror(errno));
		return -1;
	}
	st->setup = *c;
	st->received = 0;
	st->left = c->test == T_PINGPONG ? c->count : c->test == T_BW ? bw_left(st) : 0;
	return send_ctrl(x, &ack);
}

/* Returns 1 on BYE, -1 on error, 0 to go on. */
static int srv_ctrl(struct xp *x, const struct opts *o, struct srv *st, const struct ctrl *c)
{
	struct ctrl ack = { .cmd = C_ACK, .phase = c->phase, .seq = c->seq };

	switch (c->cmd) {
	case C_SETUP:
		return srv_setup(x, o, st, c);
	case C_ACKREQ:
		ack.value = st->setup.phase == c->phase ? st->received : 0;
		st->left = bw_left(st);
		return send_ctrl(x, &ack);
	case C_BYE:
		return 1;
	default:
		return 0;
	}
}

static int srv_data(struct xp *x, const struct opts *o, struct srv *st, const void *m,
		    size_t n)
{
	/* --drop simulates loss, so the client's loss handling can be tested. */
	if (o->drop && ++st->ndata % o->drop == 0 && x->proto != P_TCP)
		return 0;
	if (st->left)
		st->left--;
	if (st->setup.test == T_BW) {
		st->received++;
		return 0;
	}
	/* Ping-pong: echo straight from where it arrived (dp: from the pool). */
	if (st->setup.test == T_PINGPONG)
		return xp_send(x, m, n);
	return 0;
}

/* Answer messages until BYE (0), an error or the idle time (-1). */
static int serve_loop(struct xp *x, const struct opts *o)
{
	struct srv st = { .left = 0 };
	struct ctrl c;
	const void *m;
	ssize_t n;
	int r;

	for (;;) {
		n = xp_recv(x, &m, srv_expect(&st), after_ms(o->idle_s * 1000));
		if (n < 0)
			return -1;
		r = ctrl_decode(m, n, &c) ? srv_ctrl(x, o, &st, &c) : srv_data(x, o, &st, m, (size_t)n);
		xp_release(x);
		if (r)
			return r > 0 ? 0 : -1;
	}
}

static int serve(struct xp *x, const struct opts *o)
{
	int r, err;

	tick(x, 1);
	r = serve_loop(x, o);
	err = errno;
	tick(x, 0);
	if (r < 0)
		fprintf(stderr, "dpperf: %s server: %s\n", proto_name(o),
			err == ETIMEDOUT ? "no message within the idle time" : strerror(err));
	return r < 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

struct result {
	double value;		/* NAN on failure */
	uint64_t lost;		/* bw: messages the server did not see */
	const char *why;	/* failure reason */
	double p50, p99;	/* pingpong: round-trip percentiles, us */
	double send_ns;		/* bw, rate: ns inside the send calls per message */
};

#define RESULT_FAILED	((struct result){ NAN, 0, NULL, NAN, NAN, NAN })

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The q-th quantile (0..1) of n samples in ns, nearest rank, in us. */
static double quantile_us(int64_t *v, unsigned int n, double q)
{
	unsigned int k = (unsigned int)ceil(q * n);

	qsort(v, n, sizeof(*v), cmp_i64);
	k = k ? k - 1 : 0;
	return (double)v[k < n ? k : n - 1] / 1000.0;
}

/* Wait for the control message cmd of this phase (and seq), discarding others. */
static int wait_ctrl(struct xp *x, uint32_t cmd, uint32_t phase, uint32_t seq,
		     int64_t deadline, struct ctrl *c)
{
	const void *m;
	ssize_t n;
	int ok;

	for (;;) {
		n = xp_recv(x, &m, CTRL_LEN, deadline);
		if (n < 0)
			return -1;
		ok = ctrl_decode(m, n, c) && c->cmd == cmd && c->phase == phase &&
		     c->seq == seq;
		xp_release(x);
		if (ok)
			return 0;
	}
}

/*
 * Send c and wait for its answer; datagrams resend every message timeout
 * until `until`.  A stream cannot resend: it would fall out of step.  A
 * send that could not go within the message timeout is tried again too:
 * a dp session opening before the link is up (or before the server binds)
 * holds the first write back longer than that.
 */
static int request(struct xp *x, const struct ctrl *c, uint32_t answer, int64_t until,
		   struct ctrl *reply)
{
	int64_t deadline;

	do {
		if (send_ctrl(x, c) < 0) {
			if (errno == ETIMEDOUT && x->proto != P_TCP)
				continue;
			return -1;
		}
		deadline = x->proto == P_TCP ? until : after_ms(x->timeout_ms);
		if (deadline > until)
			deadline = until;
		if (wait_ctrl(x, answer, c->phase, c->seq, deadline, reply) == 0)
			return 0;
		if (errno != ETIMEDOUT)
			return -1;
	} while (x->proto != P_TCP && now_ns() < until);
	errno = ETIMEDOUT;
	return -1;
}

static int setup_phase(struct xp *x, struct ctrl *c, struct ctrl *ack)
{
	c->cmd = C_SETUP;
	c->nid = x->nid;
	c->dpid = x->dpid;
	return request(x, c, C_SETUP_ACK, after_ms(3 * x->timeout_ms), ack);
}

/* The echo of a ping: the next data message, control ones are stale. */
static int recv_echo(struct xp *x, size_t size)
{
	struct ctrl c;
	const void *m;
	ssize_t n;

	for (;;) {
		n = xp_recv(x, &m, size, after_ms(x->timeout_ms));
		if (n < 0)
			return -1;
		if (!ctrl_decode(m, n, &c))
			break;
		xp_release(x);
	}
	xp_release(x);
	return 0;
}

static struct result run_pingpong(struct xp *x, const struct opts *o, uint32_t size,
				  uint32_t phase)
{
	struct result r = RESULT_FAILED;
	struct ctrl c = { .phase = phase, .test = T_PINGPONG, .size = size,
			  .count = o->warmup + o->iters }, ack;
	int64_t t0 = 0, t, *rtt = malloc(sizeof(*rtt) * o->iters);
	unsigned int i;

	if (!rtt)
		die("%s", strerror(ENOMEM));
	if (setup_phase(x, &c, &ack) < 0) {
		r.why = "setup";
		goto out;
	}
	memset(x->out, DATA_FILL, size);
	for (i = 0, t = now_ns(); i < c.count; i++) {
		if (i == o->warmup)
			t0 = t;
		if (xp_send(x, x->out, size) < 0) {
			r.why = errno == ETIMEDOUT ? "send timeout" : "send";
			goto out;
		}
		if (recv_echo(x, size) < 0) {
			r.why = errno == ETIMEDOUT ? "timeout" : "receive";
			r.lost = 1;
			goto out;
		}
		int64_t t1 = now_ns();

		if (i >= o->warmup)	/* each round trip, back to back */
			rtt[i - o->warmup] = t1 - t;
		t = t1;
	}
	r.value = (double)(t - t0) / o->iters / 1000.0;
	r.p50 = quantile_us(rtt, o->iters, 0.50);
	r.p99 = quantile_us(rtt, o->iters, 0.99);
out:
	free(rtt);
	return r;
}

/*
 * Messages per bandwidth window: what the receiver's pool holds with the
 * ACKREQ and the worst wrap padding on top, so dp v1 (no flow control,
 * drops on a full pool) never overflows it even if the receiver falls a
 * whole window behind.
 */
static uint32_t bw_window(const struct opts *o, uint32_t cap, uint32_t size)
{
	uint32_t space = DP_TOKEN_SPACE(size), ctl = DP_TOKEN_SPACE(CTRL_LEN);
	uint32_t waste = space > ctl ? space : ctl;

	if (o->window)
		return o->window;
	if (cap <= ctl + waste + space)
		return 1;
	return (cap - ctl - waste) / space;
}

/* n messages of out as n DP_URING_SEND; how many were sent, or -1. */
static int uring_sendn(struct xp *x, unsigned int n)
{
	struct io_uring_cqe *c;
	unsigned int i;
	int sent = 0, err = 0, r = 0;

	for (i = 0; i < n; i++)
		dp_uring_prep_send(io_uring_get_sqe(&x->ring), x->fd, &x->sv[i]);
	for (i = 0; i < n; i += r > 0 ? (unsigned int)r : 0) {
		r = io_uring_submit(&x->ring);	/* a signal (tick) may cut it short */
		if (r < 0 && r != -EINTR && r != -EAGAIN)
			die("io_uring_submit: %s", strerror(-r));
	}
	for (i = 0; i < n; i++) {
		do
			r = io_uring_wait_cqe(&x->ring, &c);
		while (r == -EINTR);
		if (r < 0)
			die("io_uring_wait_cqe: %s", strerror(-r));
		if (c->res >= 0)
			sent++;
		else
			err = -c->res;
		io_uring_cqe_seen(&x->ring, c);
	}
	errno = err;
	return sent ? sent : -1;
}

/*
 * dp, --batch or --uring: count messages of size bytes, batch at a time
 * (dp_sendv, or as many io_uring commands per submit); what was not
 * accepted is sent again until the message timeout.
 */
static int dp_send_batched(struct xp *x, uint32_t size, uint32_t count)
{
	int64_t deadline = after_ms(x->timeout_ms);
	unsigned int i, n;
	int r;

	for (i = 0; i < x->batch; i++)
		x->sv[i].len = size;
	while (count) {
		n = count < x->batch ? count : x->batch;
		r = x->uring ? uring_sendn(x, n) : dp_sendv(x->fd, x->sv, n);
		if (r > 0) {
			count -= (uint32_t)r;
			deadline = after_ms(x->timeout_ms);
			continue;
		}
		if (!retryable(errno))
			return -1;
		if (now_ns() > deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		sched_yield();
	}
	return 0;
}

/* Send count data messages and one ACKREQ; the ACK says how many arrived. */
static int bw_burst(struct xp *x, uint32_t phase, uint32_t seq, uint32_t size,
		    uint32_t count, uint64_t *seen, int64_t *send_ns)
{
	struct ctrl req = { .cmd = C_ACKREQ, .phase = phase, .seq = seq }, ack;
	int64_t t0 = now_ns();
	uint32_t i;

	if (x->sv) {
		if (dp_send_batched(x, size, count) < 0)
			return -1;
	} else {
		for (i = 0; i < count; i++)
			if (xp_send(x, x->out, size) < 0)
				return -1;
	}
	*send_ns += now_ns() - t0;
	if (request(x, &req, C_ACK, after_ms(3 * x->timeout_ms), &ack) < 0)
		return -1;
	*seen = ack.value;
	return 0;
}

/*
 * Bandwidth (MB/s delivered) or, for T_RATE, messages per second
 * delivered: count messages in acknowledged windows either way.
 */
static struct result run_bw(struct xp *x, const struct opts *o, int test, uint32_t size,
			    uint32_t phase, uint32_t cap)
{
	struct result r = RESULT_FAILED;
	uint64_t count = test == T_RATE ? o->messages : o->bytes / size ? o->bytes / size : 1;

	/* bwsize: --bytes per size, but at least 8 and at most --messages */
	if (test == T_BWSIZE)
		count = count < BWSIZE_MIN ? BWSIZE_MIN : count > o->messages ? o->messages : count;
	uint64_t sent = 0, seen = 0;
	int64_t send_ns = 0;	/* inside the data sends */
	struct ctrl c = { .phase = phase, .test = T_BW, .size = size }, ack;
	uint32_t seq = 0, k;
	int64_t t0;

	if (count > UINT32_MAX)
		count = UINT32_MAX;
	c.count = (uint32_t)count;
	c.window = bw_window(o, cap, size);
	if (setup_phase(x, &c, &ack) < 0) {
		r.why = "setup";
		return r;
	}
	memset(x->out, DATA_FILL, size);
	t0 = now_ns();
	while (sent < count) {
		k = (uint32_t)(count - sent < c.window ? count - sent : c.window);
		if (bw_burst(x, phase, ++seq, size, k, &seen, &send_ns) < 0) {
			r.why = errno == ETIMEDOUT ? "timeout" : "send";
			return r;
		}
		sent += k;
	}
	r.lost = sent > seen ? sent - seen : 0;
	r.value = (double)seen * (test == T_RATE ? 1e9 : size * 1000.0) /
		  (double)(now_ns() - t0);
	r.send_ns = (double)send_ns / (double)(sent ? sent : 1);
	return r;
}

static void print_tag(const struct opts *o, int comment)
{
	if (comment)
		printf("# %s%s", o->tag ? o->tag : "", o->tag ? " " : "");
	else if (o->tag)
		printf("%s\t", o->tag);
}

static void print_header(const struct opts *o, const struct xp *x, uint32_t cap)
{
	print_tag(o, 1);
	printf("dpperf client proto=%s recv=%s peer=%s iters=%u warmup=%u bytes=%" PRIu64
	       " timeout_ms=%u max_msg=%zu receiver_pool=%" PRIu32,
	       proto_name(o), o->spin ? "spin" : "block", o->peer, o->iters,
	       o->warmup, o->bytes, o->timeout_ms, x->max_msg, cap);
	if (o->proto == P_DP && (o->poll_usecs >= 0 || o->busy_poll))
		printf(" poll_usecs=%ld busy_poll=%d", o->poll_usecs, o->busy_poll);
	else if (o->busy_poll)
		printf(" so_busy_poll=%d", x->so_busy_poll);
	printf("\n");
	print_tag(o, 1);
	printf("columns: %sproto test size value unit; pingpong: mean round trip us "
	       "(CLOCK_MONOTONIC), p50/p99: its median and 99th percentile, bw: MB/s "
	       "(10^6 B/s), rate: messages/s from one sender, nan = failed\n",
	       o->tag ? "tag " : "");
	if (x->sv) {
		print_tag(o, 1);
		printf("dp data sends: %u per %s\n", x->batch,
		       x->uring ? "io_uring submit (DP_URING_SEND each)" : "dp_sendv call");
	}
	if (o->tests[0] == T_SENDCOST)
		return;		/* no windows, no server */
	print_tag(o, 1);
	printf("bw: windows of at most the receiver pool's capacity (dp v1 drops on a "
	       "full pool), one small ack per window; the last ack ends the timing\n");
}

static const char *unit_of(int test)
{
	return test == T_BW || test == T_BWSIZE ? "MB/s" : test == T_RATE ? "msg/s" : "us";
}

/* One result line: nan for a failed size. */
static void print_value(const struct opts *o, const char *name, uint32_t size,
			double v, const char *unit)
{
	print_tag(o, 0);
	if (isnan(v))
		printf("%s\t%s\t%" PRIu32 "\tnan\t%s\n", proto_name(o), name, size, unit);
	else
		printf("%s\t%s\t%" PRIu32 "\t%.3f\t%s\n", proto_name(o), name, size, v, unit);
}

static void print_result(const struct opts *o, int test, uint32_t size, const struct result *r,
			 int value)
{
	if (value)
		print_value(o, test_names[test], size, r->value, unit_of(test));
	if (test == T_PINGPONG) {
		print_value(o, "p50", size, r->p50, "us");
		print_value(o, "p99", size, r->p99, "us");
	}
	if (r->why) {
		print_tag(o, 1);
		printf("failed proto=%s test=%s size=%" PRIu32 " reason=%s\n",
		       proto_name(o), test_names[test], size, r->why);
	} else if (r->lost) {
		print_tag(o, 1);
		printf("lost proto=%s test=%s size=%" PRIu32 " messages=%" PRIu64 "\n",
		       proto_name(o), test_names[test], size, r->lost);
	}
	fflush(stdout);
}

/*
 * dp's message rate by kernel entry: "entry" (msg/s) and "entryns" (ns
 * inside the send calls per message) of the proto dp-write, dp-sendvN
 * (dp_sendv, N per call) or dp-uringN (N DP_URING_SEND per submit), the
 * report's fast-entry table.  A failed size prints nan, as print_value().
 */
static void entry_name(const struct xp *x, char *how, size_t n)
{
	if (x->uring)
		snprintf(how, n, "dp-uring%u", x->batch);
	else if (x->sv)
		snprintf(how, n, "dp-sendv%u", x->batch);
	else
		snprintf(how, n, "dp-write");
}

static void print_entry(const struct opts *o, const struct xp *x, uint32_t size,
			const struct result *r)
{
	char how[32];

	entry_name(x, how, sizeof(how));
	print_tag(o, 0);
	printf("%s\tentry\t%" PRIu32 "\t%.3f\tmsg/s\n", how, size, r->value);
	print_tag(o, 0);
	printf("%s\tentryns\t%" PRIu32 "\t%.3f\tns\n", how, size, r->send_ns);
	fflush(stdout);
}

/*
 * dp: what the sender's endpoint counted over one size of a stream test,
 * from @before (DP_IOC_STATS): how often a write waited for credit or the
 * congestion window (tx_blocked) and what was resent, which say what paced
 * the figure.  A comment line; the report keeps it.
 */
static void print_sender(const struct opts *o, const struct xp *x, int test, uint32_t size,
			 const struct dp_ep_stats *before)
{
	struct dp_ep_stats st;

	if (ioctl(x->fd, DP_IOC_STATS, &st) < 0)
		return;
	print_tag(o, 1);
	printf("dp sender, %s %" PRIu32 ": tx_msgs +%llu tx_blocked +%llu tx_retrans +%llu\n",
	       test_names[test], size, (unsigned long long)(st.tx_msgs - before->tx_msgs),
	       (unsigned long long)(st.tx_blocked - before->tx_blocked),
	       (unsigned long long)(st.tx_retrans - before->tx_retrans));
}

/*
 * The half-bandwidth size n1/2 of a measured curve (sizes ascending): the
 * size at which the bandwidth first reaches half the largest measured
 * (the asymptotic bandwidth r_inf, as well as the curve shows it),
 * interpolated linearly in log2(size) between the two sizes around it.
 * 0 if no size was measured; sizes[0] if it is already there.
 */
static double nhalf(const uint32_t *sizes, const double *bw, int n, double *peak)
{
	double half, lo, hi;
	int i, prev = -1;

	*peak = 0;
	for (i = 0; i < n; i++)
		if (!isnan(bw[i]) && bw[i] > *peak)
			*peak = bw[i];
	if (*peak <= 0)
		return 0;
	half = *peak / 2;
	for (i = 0; i < n; i++) {
		if (isnan(bw[i]))
			continue;
		if (bw[i] >= half) {
			if (prev < 0 || bw[i] == bw[prev])
				return sizes[i];
			lo = log2(sizes[prev]);
			hi = log2(sizes[i]);
			return exp2(lo + (half - bw[prev]) / (bw[i] - bw[prev]) * (hi - lo));
		}
		prev = i;
	}
	return 0;
}

static void print_nhalf(const struct opts *o, const uint32_t *sizes, const double *bw, int n)
{
	double peak, nh = nhalf(sizes, bw, n, &peak);

	print_tag(o, 1);
	if (nh > 0)
		printf("nhalf proto=%s n_half=%.0f bytes peak=%.3f MB/s\n", proto_name(o), nh, peak);
	else
		printf("nhalf proto=%s n_half=none (no size measured)\n", proto_name(o));
}

/*
 * sendcost: --messages messages of @size on the raw edge to --peer, sent
 * as the other tests send (one write each, or batched); the time inside
 * the send calls per message, printed as an entry line "sendcost".  A send
 * the NIC's queue refuses (ENOBUFS) is retried, its time counted.
 */
static int run_sendcost(struct xp *x, const struct opts *o, uint32_t size)
{
	const char *why = size > x->max_msg ? "larger than max_msg" : NULL;
	char how[32];
	int64_t t0;
	uint32_t i;
	int r = 0;

	memset(x->out, DATA_FILL, size);
	t0 = now_ns();
	if (why) {
		r = -1;
	} else if (x->sv) {
		r = dp_send_batched(x, size, o->messages);
	} else {
		for (i = 0; i < o->messages && !r; i++)
			r = xp_send(x, x->out, size);
	}
	if (r && !why)
		why = strerror(errno);
	entry_name(x, how, sizeof(how));
	print_tag(o, 0);
	printf("%s\tsendcost\t%" PRIu32 "\t%.3f\tns\n", how, size,
	       r ? NAN : (double)(now_ns() - t0) / o->messages);
	if (r) {
		print_tag(o, 1);
		printf("failed proto=%s test=sendcost size=%" PRIu32 " reason=%s\n", how, size,
		       why);
	}
	fflush(stdout);
	return r != 0;
}

/* One test over all sizes; returns the number of failed sizes. */
static int run_test(struct xp *x, const struct opts *o, int test, uint32_t *phase,
		    uint32_t cap)
{
	const uint32_t *sizes = o->sizes;
	int i, n = o->nsizes, failed = 0;
	double bw[MAX_SIZES];
	uint64_t lost = 0;
	struct result r;

	if (!n) {
		int rate = test == T_RATE || test == T_SENDCOST;

		sizes = test == T_BW ? bw_sizes : rate ? rate_sizes :
			test == T_BWSIZE ? bwsize_sizes : pp_sizes;
		n = test == T_BW ? (int)(sizeof(bw_sizes) / sizeof(bw_sizes[0])) :
		    rate ? (int)(sizeof(rate_sizes) / sizeof(rate_sizes[0])) :
		    test == T_BWSIZE ? (int)(sizeof(bwsize_sizes) / sizeof(bwsize_sizes[0])) :
				       (int)(sizeof(pp_sizes) / sizeof(pp_sizes[0]));
	}
	for (i = 0; test == T_SENDCOST && i < n; i++)
		failed += run_sendcost(x, o, sizes[i]);
	for (i = 0; test != T_SENDCOST && i < n; i++) {
		struct dp_ep_stats before;
		int count = x->proto == P_DP && test != T_PINGPONG &&
			    !ioctl(x->fd, DP_IOC_STATS, &before);

		r = RESULT_FAILED;
		if (sizes[i] > x->max_msg)
			r.why = "larger than max_msg";
		else if (x->broken)
			r.why = "tcp stream out of step";
		else if (x->setup_fails >= 2)
			r.why = "server gone";
		else {
			tick(x, 1);
			r = test == T_PINGPONG ? run_pingpong(x, o, sizes[i], ++*phase) :
						 run_bw(x, o, test, sizes[i], ++*phase, cap);
			tick(x, 0);
		}
		/* Two unanswered SETUPs in a row: do not wait for every size. */
		x->setup_fails = r.why && !strcmp(r.why, "setup") ? x->setup_fails + 1 :
			r.why && !strcmp(r.why, "server gone") ? x->setup_fails : 0;
		failed += r.why != NULL;
		lost += r.lost;
		bw[i] = r.value;
		/* batched sends: not the rate of single writes, only an entry line */
		print_result(o, test, sizes[i], &r, !(test == T_RATE && x->sv));
		if (test == T_RATE && x->proto == P_DP)
			print_entry(o, x, sizes[i], &r);
		if (count)
			print_sender(o, x, test, sizes[i], &before);
	}
	if (test == T_BWSIZE)
		print_nhalf(o, sizes, bw, n);
	print_tag(o, 1);
	printf("summary proto=%s test=%s sizes=%d failed=%d lost=%" PRIu64 "\n",
	       proto_name(o), test_names[test], n, failed, lost);
	return failed;
}

/* First contact: wait for the server (up to --connect-timeout), learn its pool. */
static int hello(struct xp *x, const struct opts *o, uint32_t *cap)
{
	struct ctrl c = { .cmd = C_SETUP, .phase = 0, .test = T_HELLO, .nid = x->nid,
			  .dpid = x->dpid }, ack;
	int r;

	tick(x, 1);
	r = request(x, &c, C_SETUP_ACK, after_ms(o->connect_ms), &ack);
	tick(x, 0);
	if (r < 0)
		return -1;
	*cap = ack.value && ack.value <= UINT32_MAX ? (uint32_t)ack.value : NOMINAL_POOL;
	if (x->proto == P_DP) {
		struct dp_info info;

		/* the session is open: max_msg is now the receiver's limit */
		if (dp_getinfo(x->fd, &info) == 0)
			x->max_msg = info.max_msg;
	}
	return 0;
}

/*
 * dp's reliable edge: wait, at most the per-message timeout, until the
 * receiver has acknowledged every message sent, the BYE above all.  One
 * not acknowledged when the endpoint closes is given up (tx_undelivered):
 * a BYE lost under injected loss, and the one after it held past the hole,
 * left the server waiting out its idle time.
 */
static void dp_drain(const struct xp *x, const struct opts *o)
{
	struct dp_ep_stats st;
	unsigned int ms;

	if (x->proto != P_DP || o->dp_raw)
		return;
	for (ms = 0; ms <= o->timeout_ms; ms++) {
		if (ioctl(x->fd, DP_IOC_STATS, &st) < 0 || !st.tx_unacked)
			return;
		usleep(1000);
	}
	fprintf(stderr, "dpperf: %llu messages unacknowledged after %u ms\n",
		(unsigned long long)st.tx_unacked, o->timeout_ms);
}

/*
 * --linger MS: the tests are done and the endpoint stays open MS ms more,
 * so that a script sampling the edges (dpctl ep watch) sees their final
 * counts before they go, without polling for a sign from us.
 */
static void linger(const struct opts *o)
{
	struct timespec t = {
		.tv_sec = (time_t)(o->linger_ms / 1000),
		.tv_nsec = (long)(o->linger_ms % 1000) * 1000000,
	};

	while (o->linger_ms && nanosleep(&t, &t) && errno == EINTR)
		;
}

/*
 * How many BYEs the client sends; the server exits on the first.  A datagram
 * may be lost, and a server that gets no BYE waits out its idle time
 * (minutes): under the reliability run's 5% loss a raw edge's server once
 * did, with two copies sent.  A reliable edge keeps its two.
 */
static int bye_copies(const struct xp *x, const struct opts *o)
{
	if (x->proto == P_TCP)
		return 1;
	if (x->proto == P_DP && !o->dp_raw)
		return 2;
	return 4;
}

static int client(struct xp *x, const struct opts *o)
{
	struct ctrl bye = { .cmd = C_BYE };
	uint32_t phase = 0, cap;
	int i, failed = 0;

	if (o->tests[0] == T_SENDCOST) {	/* alone (parse_args): no server */
		cap = 0;
		print_header(o, x, cap);
		failed = run_test(x, o, T_SENDCOST, &phase, cap);
		return failed ? 2 : 0;
	}
	if (hello(x, o, &cap) < 0) {
		fprintf(stderr, "dpperf: no answer from the %s server at %s: %s\n",
			proto_name(o), o->peer, strerror(errno));
		return 1;
	}
	print_header(o, x, cap);
	for (i = 0; i < MAX_TESTS && o->tests[i]; i++)
		failed += run_test(x, o, o->tests[i], &phase, cap);
	fflush(stdout);
	for (i = 0; i < bye_copies(x, o); i++)
		send_ctrl(x, &bye);
	dp_drain(x, o);
	linger(o);
	return failed ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

static void usage(FILE *f, int status) __attribute__((noreturn));
static void usage(FILE *f, int status)
{
	fputs("usage: dpperf server|client [options]\n"
	      "  --proto dp|udp|tcp|raw   transport (default dp)\n"
	      "  --test LIST      client: tests to run, in order, from pingpong, bw, rate,\n"
	      "                   bwsize (default pingpong; all = pingpong,bw; pingpong\n"
	      "                   also reports the round trip's p50 and p99; bwsize:\n"
	      "                   bandwidth against size to 1 MiB and its n1/2); or\n"
	      "                   sendcost alone (--dp-raw, no server: the time inside\n"
	      "                   the send calls per message to --peer)\n"
	      "  --peer ADDR      dp: peer NID; udp/tcp: IPv4 address; raw: peer MAC\n"
	      "                   (client: required; server: optional, else learnt)\n"
	      "  --dpid N         dp: local DPID (server 100, client 101)\n"
	      "  --peer-dpid N    dp: peer DPID (server 101, client 100)\n"
	      "  --pool BYTES     dp: pool size (default: the module's); tcp server:\n"
	      "                   the bandwidth window it announces (default 256 KiB)\n"
	      "  --port N         udp/tcp port (default 7800)\n"
	      "  --ifname IF      raw: interface\n"
	      "  --ethertype N    raw: EtherType (default 0x88B6)\n"
	      "  --sizes LIST     message sizes, e.g. 1,16,1500\n"
	      "                   (pingpong: 1,16,32,64,128,256,512,1024,1500;\n"
	      "                   bw: 64,256,512,1024,1500; rate: 1,64;\n"
	      "                   bwsize: 1,4,16,...,1048576, powers of 4)\n"
	      "  --iters N        pingpong round trips per size (default 1000)\n"
	      "  --warmup N       unmeasured round trips first (default 10)\n"
	      "  --bytes N        bw, bwsize: bytes per size (default 2097152)\n"
	      "  --messages N     rate: messages per size (default 20000); bwsize: at\n"
	      "                   most this many per size (and at least 8)\n"
	      "  --window N       bw, rate: messages per acknowledged window (default: receiver pool)\n"
	      "  --recv spin|block  spin: busy poll (dp: dp_read); block: sleep in read/recv\n"
	      "  --timeout MS     per-message timeout (default 2000)\n"
	      "  --connect-timeout MS  client: wait this long for the server (default 30000)\n"
	      "  --idle S         server: exit after S seconds without a message (default 300)\n"
	      "  --tag STR        client: first TSV field, e.g. mode=icount\n"
	      "  --ready FILE     server: create FILE once it can receive\n"
	      "  --linger MS      client: keep the endpoint open MS ms after the tests\n"
	      "                   (up to 60000; for dpctl ep watch to see the end)\n"
	      "  --drop N         server: ignore every Nth data message (tests dpperf)\n"
	      "  --dp-raw         dp: unreliable edges (DP_BIND_RAW; results say dp-raw)\n"
	      "  --batch N        dp client, bw and rate: send data N messages per\n"
	      "                   dp_sendv call (1..1024; default 1: dp_write each)\n"
	      "  --uring          dp client, bw and rate: send data as io_uring commands,\n"
	      "                   N per submit (DP_URING_SEND; N from --batch)\n"
	      "  --poll-usecs N   dp, --recv block: read() polls the pool N us before it\n"
	      "                   sleeps (0..1000000; default: the module's poll_usecs)\n"
	      "  --busy-poll      dp, --recv block: while polling, drive the NIC's receive\n"
	      "                   path too (DP_WAIT_BUSY_POLL); udp, tcp, raw: receive\n"
	      "                   calls poll the NIC for --poll-usecs (default 50) first\n"
	      "                   (SO_BUSY_POLL)\n", f);
	exit(status);
}

static void parse_sizes(struct opts *o, const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;

	if (!copy)
		die("%s", strerror(ENOMEM));
	o->nsizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES)
			die("at most %d sizes", MAX_SIZES);
		o->sizes[o->nsizes++] = parse_u32(tok, "size", 1, MAX_SIZE);
	}
	if (!o->nsizes)
		die("empty --sizes");
	free(copy);
}

static int parse_test(const char *t)
{
	int k;

	for (k = T_PINGPONG; k <= T_SENDCOST; k++)
		if (!strcmp(t, test_names[k]))
			return k;
	return 0;
}

/* A comma-separated list of distinct tests; "all" is pingpong,bw. */
static void parse_tests(struct opts *o, const char *s)
{
	char *copy = strdup(strcmp(s, "all") ? s : "pingpong,bw"), *tok, *save = NULL;
	int n = 0, k, i;

	if (!copy)
		die("%s", strerror(ENOMEM));
	memset(o->tests, 0, sizeof(o->tests));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		k = parse_test(tok);
		for (i = 0; i < n; i++)
			if (o->tests[i] == k)
				k = 0;
		if (!k || n == MAX_TESTS)
			die("bad --test \"%s\" (want distinct tests of pingpong, bw, rate, bwsize, sendcost)",
			    s);
		o->tests[n++] = k;
	}
	if (!n)
		die("empty --test");
	free(copy);
}

static enum proto parse_proto(const char *s)
{
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, proto_names[i]))
			return (enum proto)i;
	die("bad --proto \"%s\" (want dp, udp, tcp or raw)", s);
}

static const struct option longopts[] = {
	{ "proto", required_argument, NULL, 'P' },
	{ "test", required_argument, NULL, 't' },
	{ "peer", required_argument, NULL, 'p' },
	{ "dpid", required_argument, NULL, 'd' },
	{ "peer-dpid", required_argument, NULL, 'D' },
	{ "pool", required_argument, NULL, 'o' },
	{ "port", required_argument, NULL, 'r' },
	{ "ifname", required_argument, NULL, 'i' },
	{ "ethertype", required_argument, NULL, 'e' },
	{ "sizes", required_argument, NULL, 's' },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "bytes", required_argument, NULL, 'b' },
	{ "window", required_argument, NULL, 'W' },
	{ "messages", required_argument, NULL, 'M' },
	{ "recv", required_argument, NULL, 'R' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "connect-timeout", required_argument, NULL, 'C' },
	{ "idle", required_argument, NULL, 'I' },
	{ "tag", required_argument, NULL, 'g' },
	{ "ready", required_argument, NULL, 'y' },
	{ "linger", required_argument, NULL, 'H' },
	{ "drop", required_argument, NULL, 'X' },
	{ "dp-raw", no_argument, NULL, 'U' },
	{ "batch", required_argument, NULL, 'B' },
	{ "uring", no_argument, NULL, 'Q' },
	{ "poll-usecs", required_argument, NULL, 'L' },
	{ "busy-poll", no_argument, NULL, 'Y' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_opt(struct opts *o, int c, const char *a)
{
	switch (c) {
	case 'P': o->proto = parse_proto(a); break;
	case 't': parse_tests(o, a); break;
	case 'p': o->peer = a; break;
	case 'd': o->dpid = parse_u32(a, "DPID", 1, UINT32_MAX); break;
	case 'D': o->peer_dpid = parse_u32(a, "DPID", 1, UINT32_MAX); break;
	case 'o': o->pool = parse_u32(a, "pool size", DP_POOL_MIN, DP_POOL_MAX); break;
	case 'r': o->port = (int)parse_u32(a, "port", 1, 65535); break;
	case 'i': o->ifname = a; break;
	case 'e': o->ethertype = (uint16_t)parse_u32(a, "EtherType", 0x600, 0xffff); break;
	case 's': parse_sizes(o, a); break;
	case 'n': o->iters = parse_u32(a, "iters", 1, 100000000); break;
	case 'w': o->warmup = parse_u32(a, "warmup", 0, 100000000); break;
	case 'b': o->bytes = parse_u32(a, "bytes", 1, UINT32_MAX); break;
	case 'W': o->window = parse_u32(a, "window", 1, 1000000); break;
	case 'M': o->messages = parse_u32(a, "messages", 1, 100000000); break;
	case 'R':
		if (strcmp(a, "spin") && strcmp(a, "block"))
			die("bad --recv \"%s\" (want spin or block)", a);
		o->spin = !strcmp(a, "spin");
		break;
	case 'T': o->timeout_ms = parse_u32(a, "timeout", 1, 3600000); break;
	case 'C': o->connect_ms = parse_u32(a, "connect timeout", 1, 3600000); break;
	case 'I': o->idle_s = parse_u32(a, "idle time", 1, 86400); break;
	case 'g': o->tag = a; break;
	case 'y': o->ready = a; break;
	case 'H': o->linger_ms = parse_u32(a, "linger", 0, 60000); break;
	case 'X': o->drop = parse_u32(a, "drop", 1, UINT32_MAX); break;
	case 'U': o->dp_raw = 1; break;
	case 'B': o->batch = parse_u32(a, "batch", 1, DP_SENDV_MAX); break;
	case 'Q': o->uring = 1; break;
	case 'L': o->poll_usecs = parse_u32(a, "poll usecs", 0, DP_WAIT_USECS_MAX); break;
	case 'Y': o->busy_poll = 1; break;
	case 'h': usage(stdout, 0);
	default: usage(stderr, 1);
	}
}

static void parse_args(struct opts *o, int argc, char **argv)
{
	int c;

	*o = (struct opts){ .proto = P_DP, .tests = { T_PINGPONG, 0 }, .port = 7800,
			    .ethertype = 0x88B6, .iters = 1000, .warmup = 10,
			    .bytes = 2097152, .messages = 20000, .spin = 1, .timeout_ms = 2000,
			    .connect_ms = 30000, .idle_s = 300, .poll_usecs = -1 };
	if (argc < 2)
		usage(stderr, 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		usage(stdout, 0);
	if (strcmp(argv[1], "server") && strcmp(argv[1], "client"))
		die("first argument must be server or client (see --help)");
	o->server = !strcmp(argv[1], "server");
	while ((c = getopt_long(argc - 1, argv + 1, "h", longopts, NULL)) != -1)
		parse_opt(o, c, optarg);
	if (optind < argc - 1)
		die("unexpected argument \"%s\"", argv[optind + 1]);
	if ((o->batch > 1 || o->uring) && o->proto != P_DP)
		die("--batch and --uring are for --proto dp");
	if (o->poll_usecs >= 0 && !o->busy_poll && o->proto != P_DP)
		die("--poll-usecs on a socket is the bound of --busy-poll (SO_BUSY_POLL)");
	if (o->tests[0] == T_SENDCOST &&
	    (o->tests[1] || o->proto != P_DP || !o->dp_raw || o->server))
		die("--test sendcost: a client alone, --proto dp --dp-raw");
	if (!o->dpid)
		o->dpid = o->server ? 100 : 101;
	if (!o->peer_dpid)
		o->peer_dpid = o->server ? 101 : 100;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct xp x;

	parse_args(&o, argc, argv);
	xp_setup(&x, &o);
	return o.server ? serve(&x, &o) : client(&x, &o);
}
