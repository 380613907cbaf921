// SPDX-License-Identifier: GPL-2.0
/*
 * dpswitch: a learning Ethernet switch for QEMU guests joined by unix datagram
 * sockets (QEMU "-netdev dgram,local.type=unix,local.path=PORT,
 * remote.type=unix,remote.path=SWITCH").
 *
 *   dpswitch [-v] [-c] [-f SPEC] SWITCH_PATH PORT_PATH...
 *
 * Binds SWITCH_PATH; port i is the guest whose netdev is bound at PORT_PATH i.
 * Each frame teaches the switch its source MAC's port; a frame to a learned
 * unicast MAC goes to that port only, broadcast, multicast and unknown
 * destinations are flooded to every other port.
 *
 * Linux queues only net.unix.max_dgram_qlen (10) datagrams per receiver, so
 * each port has its own connected socket and a queue of PORT_QLEN frames that
 * drains when poll() says the guest's socket has room: bursts wait instead of
 * being lost.  A frame that finds its port's queue full, or the guest not
 * there, is dropped and counted, like a congested link; the switch never
 * blocks.  Frames from unknown senders are dropped.  SIGINT/SIGTERM: print the
 * counters and exit.
 *
 * Fault injection (faults.c): every frame, on every link (input port ->
 * output port) it takes, goes through the fault engine before it is queued:
 * -f SPEC sets the starting rates ("drop=5,dup=2,reorder=5,corrupt=1,seed=42",
 * see faults.h).  With -c the switch reads control commands, one per line, on
 * stdin and answers each with one "OK ..." or "ERR ..." line on stdout
 * (set SPEC, reset, partition [PORT...], heal, stats: docs/harness.md); every
 * command and its answer is also logged on stderr.  A partition also drops
 * the frames already queued on the links it cuts.  The switch opens no socket
 * but its own unix datagram sockets.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "faults.h"

#define MAX_PORTS FAULTS_MAX_PORTS
#define CTL_MAX 1024	/* longest control line */
#define MAX_MACS 1024
#define FRAME_MAX (65536 + 64)
#define PORT_QLEN 512

struct fdb_entry {
	unsigned char mac[6];
	int port;
};

struct frame {
	size_t len;
	int src;			/* input port */
	unsigned char data[];
};

struct port {
	struct sockaddr_un addr;
	socklen_t len;
	int fd;				/* connected to addr, -1 until the guest is there */
	struct frame *q[PORT_QLEN];	/* ring of frames waiting for room */
	unsigned int head, count;
	unsigned long rx, tx, drop;
};

static struct port ports[MAX_PORTS];
static int nports;
static struct fdb_entry fdb[MAX_MACS];
static int nfdb;
static int verbose;
static volatile sig_atomic_t stop;
static unsigned long unknown_sender, runts;
static struct faults faults;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int set_addr(struct sockaddr_un *a, socklen_t *len, const char *path)
{
	if (strlen(path) >= sizeof(a->sun_path)) {
		fprintf(stderr, "dpswitch: path too long: %s\n", path);
		return -1;
	}
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	return 0;
}

static int port_of(const struct sockaddr_un *from, socklen_t len)
{
	size_t off = offsetof(struct sockaddr_un, sun_path);

	if (len <= off)
		return -1;
	for (int i = 0; i < nports; i++)
		if (strncmp(ports[i].addr.sun_path, from->sun_path, len - off) == 0)
			return i;
	return -1;
}

static struct fdb_entry *fdb_find(const unsigned char *mac)
{
	for (int i = 0; i < nfdb; i++)
		if (memcmp(fdb[i].mac, mac, 6) == 0)
			return &fdb[i];
	return NULL;
}

static void fdb_learn(const unsigned char *mac, int port)
{
	struct fdb_entry *e = fdb_find(mac);

	if (mac[0] & 1)		/* never learn a group address */
		return;
	if (!e) {
		if (nfdb == MAX_MACS)
			return;
		e = &fdb[nfdb++];
		memcpy(e->mac, mac, 6);
		e->port = -1;
	}
	if (e->port != port && verbose)
		fprintf(stderr, "dpswitch: %02x:%02x:%02x:%02x:%02x:%02x on port %d\n",
			mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], port);
	e->port = port;
}

/* Connect the port's socket once the guest has bound its address. */
static int port_connect(struct port *p)
{
	if (p->fd >= 0)
		return 0;
	p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return -1;
	if (connect(p->fd, (struct sockaddr *)&p->addr, p->len) < 0) {
		close(p->fd);
		p->fd = -1;
		return -1;
	}
	return 0;
}

/* Send queued frames until the guest's socket is full; 1 if some remain. */
static int port_drain(struct port *p)
{
	while (p->count) {
		struct frame *f = p->q[p->head];

		if (send(p->fd, f->data, f->len, MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			/* the guest went away: drop what waits for it */
			close(p->fd);
			p->fd = -1;
			for (; p->count; p->count--, p->head = (p->head + 1) % PORT_QLEN) {
				free(p->q[p->head]);
				p->drop++;
			}
			return 0;
		}
		free(f);
		p->tx++;
		p->head = (p->head + 1) % PORT_QLEN;
		p->count--;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The fault engine's emit callback: queue a frame for its output port. */
static void enqueue(void *ctx, int from, int to, const unsigned char *buf, size_t n)
{
	struct port *p = &ports[to];
	struct frame *f;

	(void)ctx;

	if (p->count == PORT_QLEN || port_connect(p) < 0) {
		p->drop++;
		return;
	}
	f = malloc(sizeof(*f) + n);
	if (!f) {
		p->drop++;
		return;
	}
	f->len = n;
	f->src = from;
	memcpy(f->data, buf, n);
	p->q[(p->head + p->count) % PORT_QLEN] = f;
	p->count++;
	port_drain(p);
}

static void forward(int from, int to, const unsigned char *buf, size_t n)
{
	faults_frame(&faults, from, to, buf, n, now_ms());
}

/* After a partition: frames queued on a link it cut are lost with it. */
static void flush_cut(void)
{
	unsigned long lost = 0;

	for (int i = 0; i < nports; i++) {
		struct port *p = &ports[i];
		unsigned int kept = 0;

		for (unsigned int k = 0; k < p->count; k++) {
			struct frame *f = p->q[(p->head + k) % PORT_QLEN];

			if (faults_cut(&faults, f->src, i)) {
				free(f);
				p->drop++;
				lost++;
			} else {
				p->q[(p->head + kept++) % PORT_QLEN] = f;
			}
		}
		p->count = kept;
	}
	if (lost)
		fprintf(stderr, "dpswitch: %lu queued frame(s) lost to the partition\n", lost);
}

/* Control commands on stdin, answers on stdout (-c). */
static char ctl_buf[CTL_MAX];
static size_t ctl_len;
static int ctl_skip;		/* inside an over-long line: ignore up to its newline */

static void ctl_line(char *line)
{
	char reply[FAULTS_REPLY_MAX];
	size_t n = strlen(line);
	int skipped = ctl_skip;

	while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
		line[--n] = '\0';
	ctl_skip = 0;
	if (skipped)
		snprintf(reply, sizeof(reply), "ERR line longer than %d bytes", CTL_MAX - 2);
	else if (faults_control(&faults, line, reply, sizeof(reply)) == 0)
		flush_cut();
	fprintf(stderr, "dpswitch: ctl '%s' -> %s\n", skipped ? "..." : line, reply);
	printf("%s\n", reply);
	fflush(stdout);
}

/* Read what stdin has; 1 at end of file. */
static int ctl_read(void)
{
	ssize_t n = read(0, ctl_buf + ctl_len, sizeof(ctl_buf) - 1 - ctl_len);
	char *nl;

	if (n <= 0)
		return n == 0 || (errno != EINTR && errno != EAGAIN);
	ctl_len += (size_t)n;
	ctl_buf[ctl_len] = '\0';
	while ((nl = memchr(ctl_buf, '\n', ctl_len))) {
		*nl = '\0';
		ctl_line(ctl_buf);
		ctl_len -= (size_t)(nl + 1 - ctl_buf);
		memmove(ctl_buf, nl + 1, ctl_len);
	}
	if (ctl_len == sizeof(ctl_buf) - 1) {
		ctl_skip = 1;	/* answered with ERR at its newline */
		ctl_len = 0;
	}
	return 0;
}

/* Take one frame from the guests' side and forward it. */
static void switch_one(int fd)
{
	static unsigned char buf[FRAME_MAX];
	struct sockaddr_un from;
	socklen_t from_len = sizeof(from);
	ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &from_len);
	const struct fdb_entry *e;
	int in;

	if (n < 0)
		return;
	in = port_of(&from, from_len);
	if (in < 0) {
		unknown_sender++;
		return;
	}
	ports[in].rx++;
	if (n < 14) {
		runts++;
		return;
	}
	fdb_learn(buf + 6, in);
	e = (buf[0] & 1) ? NULL : fdb_find(buf);
	if (e) {
		if (e->port != in)
			forward(in, e->port, buf, (size_t)n);
		return;
	}
	for (int i = 0; i < nports; i++)
		if (i != in)
			forward(in, i, buf, (size_t)n);
}

static void usage(void)
{
	fprintf(stderr, "usage: dpswitch [-v] [-c] [-f SPEC] SWITCH_PATH PORT_PATH... "
		"(1..%d ports)\n", MAX_PORTS);
}

int main(int argc, char **argv)
{
	struct sockaddr_un self;
	socklen_t self_len;
	struct faults_cfg cfg;
	const char *spec = "";
	char err[200], desc[FAULTS_REPLY_MAX];
	int opt, fd, bufsz = 4 << 20, ctl = 0;

	while ((opt = getopt(argc, argv, "+vcf:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = 1;
			break;
		case 'c':
			ctl = 1;
			break;
		case 'f':
			spec = optarg;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (argc - optind < 2 || argc - optind - 1 > MAX_PORTS) {
		usage();
		return 2;
	}
	if (set_addr(&self, &self_len, argv[optind]) < 0)
		return 2;
	for (int i = optind + 1; i < argc; i++, nports++) {
		ports[nports].fd = -1;
		if (set_addr(&ports[nports].addr, &ports[nports].len, argv[i]) < 0)
			return 2;
	}
	faults_init(&faults, nports, enqueue, NULL);
	cfg = faults.cfg;
	if (faults_parse(&cfg, spec, err, sizeof(err))) {
		fprintf(stderr, "dpswitch: -f %s: %s\n", spec, err);
		return 2;
	}
	faults_configure(&faults, &cfg);
	faults_describe(&faults, desc, sizeof(desc));
	fprintf(stderr, "dpswitch: %d ports, faults: %s\n", nports, desc);

	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("dpswitch: socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	unlink(self.sun_path);
	if (bind(fd, (struct sockaddr *)&self, self_len) < 0) {
		perror("dpswitch: bind");
		return 1;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: recvfrom returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* a gone reader of stdout must not kill us */

	while (!stop) {
		struct pollfd pfd[MAX_PORTS + 2];
		int map[MAX_PORTS + 2], npfd = 2;

		pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = ctl ? 0 : -1, .events = POLLIN };
		for (int i = 0; i < nports; i++) {
			if (ports[i].count && ports[i].fd >= 0) {
				pfd[npfd] = (struct pollfd){ .fd = ports[i].fd, .events = POLLOUT };
				map[npfd++] = i;
			}
		}
		if (poll(pfd, (nfds_t)npfd, faults_timeout_ms(&faults, now_ms())) < 0) {
			if (errno == EINTR)
				continue;
			perror("dpswitch: poll");
			break;
		}
		for (int k = 2; k < npfd; k++)
			if (pfd[k].revents)
				port_drain(&ports[map[k]]);
		if (pfd[1].revents && ctl_read())
			ctl = 0;	/* stdin closed: no more commands */
		faults_tick(&faults, now_ms());
		if (pfd[0].revents & POLLIN)
			switch_one(fd);
	}

	for (int i = 0; i < nports; i++)
		fprintf(stderr, "dpswitch: port %d %s: rx %lu tx %lu dropped %lu\n", i,
			ports[i].addr.sun_path, ports[i].rx, ports[i].tx, ports[i].drop);
	fprintf(stderr, "dpswitch: unknown senders %lu, runts %lu\n", unknown_sender, runts);
	faults_describe(&faults, desc, sizeof(desc));
	fprintf(stderr, "dpswitch: faults: %s\n", desc);
	faults_free(&faults);
	unlink(self.sun_path);
	return 0;
}
