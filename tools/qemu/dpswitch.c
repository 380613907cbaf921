// SPDX-License-Identifier: GPL-2.0
/*
 * dpswitch: a learning Ethernet switch for QEMU guests joined by unix datagram
 * sockets (QEMU "-netdev dgram,local.type=unix,local.path=PORT,
 * remote.type=unix,remote.path=SWITCH").
 *
 *   dpswitch [-v] SWITCH_PATH PORT_PATH...
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
#include <unistd.h>

#define MAX_PORTS 64
#define MAX_MACS 1024
#define FRAME_MAX (65536 + 64)
#define PORT_QLEN 512

struct fdb_entry {
	unsigned char mac[6];
	int port;
};

struct frame {
	size_t len;
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

static void forward(int to, const unsigned char *buf, size_t n)
{
	struct port *p = &ports[to];
	struct frame *f;

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
	memcpy(f->data, buf, n);
	p->q[(p->head + p->count) % PORT_QLEN] = f;
	p->count++;
	port_drain(p);
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
			forward(e->port, buf, (size_t)n);
		return;
	}
	for (int i = 0; i < nports; i++)
		if (i != in)
			forward(i, buf, (size_t)n);
}

int main(int argc, char **argv)
{
	struct sockaddr_un self;
	socklen_t self_len;
	int argi = 1, fd, bufsz = 4 << 20;

	if (argi < argc && strcmp(argv[argi], "-v") == 0) {
		verbose = 1;
		argi++;
	}
	if (argc - argi < 2 || argc - argi - 1 > MAX_PORTS) {
		fprintf(stderr, "usage: dpswitch [-v] SWITCH_PATH PORT_PATH... (1..%d ports)\n",
			MAX_PORTS);
		return 2;
	}
	if (set_addr(&self, &self_len, argv[argi]) < 0)
		return 2;
	for (int i = argi + 1; i < argc; i++, nports++) {
		ports[nports].fd = -1;
		if (set_addr(&ports[nports].addr, &ports[nports].len, argv[i]) < 0)
			return 2;
	}

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

	while (!stop) {
		struct pollfd pfd[MAX_PORTS + 1];
		int map[MAX_PORTS + 1], npfd = 1;

		pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
		for (int i = 0; i < nports; i++) {
			if (ports[i].count && ports[i].fd >= 0) {
				pfd[npfd] = (struct pollfd){ .fd = ports[i].fd, .events = POLLOUT };
				map[npfd++] = i;
			}
		}
		if (poll(pfd, (nfds_t)npfd, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("dpswitch: poll");
			break;
		}
		for (int k = 1; k < npfd; k++)
			if (pfd[k].revents)
				port_drain(&ports[map[k]]);
		if (pfd[0].revents & POLLIN)
			switch_one(fd);
	}

	for (int i = 0; i < nports; i++)
		fprintf(stderr, "dpswitch: port %d %s: rx %lu tx %lu dropped %lu\n", i,
			ports[i].addr.sun_path, ports[i].rx, ports[i].tx, ports[i].drop);
	fprintf(stderr, "dpswitch: unknown senders %lu, runts %lu\n", unknown_sender, runts);
	unlink(self.sun_path);
	return 0;
}
