// SPDX-License-Identifier: GPL-2.0
/*
 * myrisim: the Myrinet fabric and every host's LANai in one process.
 *
 *   myrisim -d DIR [-t TOPO] [-f SPEC] [-c] [-v]
 *   myrisim -r [-t TOPO]
 *
 * -d DIR   one ivshmem server socket per host of the topology, DIR/hN.sock
 *          (N: the host's number, in topology file order); QEMU attaches a
 *          guest with
 *          -chardev socket,path=DIR/h0.sock,id=m0
 *          -device ivshmem-doorbell,chardev=m0,vectors=3
 * -t TOPO  a topology file (docs/myrinet.md), or "default" (2 switches of 8
 *          ports, 4 hosts) or "one" (2 hosts on one switch)
 * -f SPEC  starting faults and timing, as the control command "set SPEC"
 * -c       read control commands on stdin, one per line (fab_control():
 *          set, block, unblock, pull, plug, stats, reset); each answer is a
 *          line on stdout
 * -r       print the source route between every pair of hosts and exit
 * -v       log connections and control commands on stderr
 *
 * Time is the host's monotonic clock; the loop sleeps until the next
 * doorbell, connection, control line or fabric event.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ivshmem.h"
#include "myrisim.h"

#define CTL_MAX 512
#define IDLE_NS 100000000ull	/* look at the NICs at least every 100 ms */

static struct fabric fab;
static struct lanai nic[FAB_MAX_HOSTS];
static struct ivs_guest guest[FAB_MAX_HOSTS];
static volatile sig_atomic_t quit;
static int verbose;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_irq(void *ctx, int host, int vec)
{
	(void)ctx;
	if (guest[host].conn_fd >= 0)
		ivs_irq(&guest[host], vec);
}

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static int load_topo(struct fab_topo *t, const char *arg)
{
	char err[160], *text;
	long len;
	FILE *f;
	int rc;

	if (!arg || !strcmp(arg, "default")) {
		topo_default(t);
		return 0;
	}
	if (!strcmp(arg, "one")) {
		topo_one_switch(t);
		return 0;
	}
	f = fopen(arg, "r");
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || len > 65536 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "myrisim: %s: cannot read\n", arg);
		if (f)
			fclose(f);
		return -1;
	}
	text = calloc(1, (size_t)len + 1);
	rc = !text || fread(text, 1, (size_t)len, f) != (size_t)len ? -1 :
	     topo_parse(t, text, err, sizeof(err));
	if (rc)
		fprintf(stderr, "myrisim: %s: %s\n", arg, text ? err : "out of memory");
	free(text);
	fclose(f);
	return rc;
}

static void print_routes(const struct fab_topo *t)
{
	uint8_t r[MYRI_ROUTE_MAX];
	int s, d, n, i;

	for (s = 0; s < t->nhosts; s++)
		for (d = 0; d < t->nhosts; d++) {
			if (s == d)
				continue;
			n = topo_route(t, s, d, r);
			printf("%s %s", t->host_name[s], t->host_name[d]);
			for (i = 0; i < n; i++)
				printf(" %02x", r[i]);
			printf("%s\n", n < 0 ? " none" : "");
		}
}

static void step(uint64_t now)
{
	int h, n = fab.topo.nhosts;

	for (h = 0; h < n; h++)
		lanai_poll(&nic[h], now);
	fab_advance(&fab, now);
	for (h = 0; h < n; h++)	/* a NIC the fabric let go sends on */
		lanai_poll(&nic[h], now);
}

/* ---- control lines on stdin ---- */

static char ctl_buf[CTL_MAX];
static size_t ctl_len;

static void ctl_line(const char *line)
{
	char reply[600];

	fab_control(&fab, line, reply, sizeof(reply));
	printf("%s\n", reply);
	fflush(stdout);
	if (verbose)
		fprintf(stderr, "myrisim: ctl '%s' -> %s\n", line, reply);
}

/* 0, or -1 once stdin is closed. */
static int ctl_read(void)
{
	ssize_t n = read(0, ctl_buf + ctl_len, sizeof(ctl_buf) - 1 - ctl_len);
	char *nl;

	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	ctl_len += (size_t)n;
	ctl_buf[ctl_len] = '\0';
	while ((nl = memchr(ctl_buf, '\n', ctl_len))) {
		*nl = '\0';
		ctl_line(ctl_buf);
		ctl_len -= (size_t)(nl + 1 - ctl_buf);
		memmove(ctl_buf, nl + 1, ctl_len);
	}
	if (ctl_len == sizeof(ctl_buf) - 1) {
		ctl_line("");	/* over-long: answered ERR, dropped */
		ctl_len = 0;
	}
	return 0;
}

/* ---- the loop ---- */

/* pollfds: per host the socket (listening or connected) and its doorbells. */
#define PER_HOST (1 + MYRI_VECTORS)

static void host_fds(struct pollfd *p, int h)
{
	struct ivs_guest *g = &guest[h];
	int v;

	p[0].fd = g->conn_fd >= 0 ? g->conn_fd : g->listen_fd;
	p[0].events = POLLIN;
	for (v = 0; v < MYRI_VECTORS; v++) {
		p[1 + v].fd = g->db_fd[v];
		p[1 + v].events = POLLIN;
	}
}

static void host_events(struct pollfd *p, int h)
{
	struct ivs_guest *g = &guest[h];
	char c;
	int v;

	if (p[0].revents && g->conn_fd >= 0) {
		/* QEMU never sends: anything readable is its hangup */
		ssize_t r = read(g->conn_fd, &c, 1);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			ivs_disconnect(g);
			lanai_init(&nic[h], g->sram, h, &fab, on_irq, NULL);
			if (verbose)
				fprintf(stderr, "myrisim: %s: guest left\n", fab.topo.host_name[h]);
		}
	} else if (p[0].revents) {
		if (ivs_accept(g) == 0 && verbose)
			fprintf(stderr, "myrisim: %s: guest attached\n", fab.topo.host_name[h]);
	}
	for (v = 0; v < MYRI_VECTORS; v++)
		if (p[1 + v].revents)
			ivs_doorbell(g, v);
}

static int run(int ctl)
{
	struct pollfd p[FAB_MAX_HOSTS * PER_HOST + 1];
	int h, n = fab.topo.nhosts;

	while (!quit) {
		uint64_t now = now_ns(), next = fab_next(&fab), wait;
		struct timespec ts;

		for (h = 0; h < n; h++)
			host_fds(&p[h * PER_HOST], h);
		p[n * PER_HOST].fd = ctl ? 0 : -1;
		p[n * PER_HOST].events = POLLIN;
		wait = next <= now ? 0 : next - now;
		if (wait > IDLE_NS)
			wait = IDLE_NS;
		ts.tv_sec = (time_t)(wait / 1000000000ull);
		ts.tv_nsec = (long)(wait % 1000000000ull);
		if (ppoll(p, (nfds_t)(n * PER_HOST + 1), &ts, NULL) < 0 && errno != EINTR)
			return -1;
		for (h = 0; h < n; h++)
			host_events(&p[h * PER_HOST], h);
		if (ctl && p[n * PER_HOST].revents && ctl_read())
			ctl = 0;
		step(now_ns());
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: myrisim -d DIR [-t TOPO] [-f SPEC] [-c] [-v] | -r [-t TOPO]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *topo = NULL, *spec = NULL;
	struct fab_topo t;
	struct fab_cfg cfg;
	char path[256], reply[600], specbuf[256];
	int opt, ctl = 0, routes = 0, h, rc;

	while ((opt = getopt(argc, argv, "d:t:f:crv")) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 't': topo = optarg; break;
		case 'f': spec = optarg; break;
		case 'c': ctl = 1; break;
		case 'r': routes = 1; break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc || (!dir && !routes) || load_topo(&t, topo))
		usage();
	if (routes) {
		print_routes(&t);
		return 0;
	}
	fab_cfg_default(&cfg);
	fab_init(&fab, &t, &cfg, &lanai_host_ops, nic);
	snprintf(specbuf, sizeof(specbuf), "set %s", spec ? spec : "seed=1");
	if (fab_control(&fab, specbuf, reply, sizeof(reply))) {
		fprintf(stderr, "myrisim: -f %s: %s\n", spec, reply);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	for (h = 0; h < t.nhosts; h++) {
		snprintf(path, sizeof(path), "%s/h%d.sock", dir, h);
		if (ivs_open(&guest[h], path)) {
			fprintf(stderr, "myrisim: %s: %s\n", path, strerror(errno));
			while (h--)
				ivs_close(&guest[h]);
			return 1;
		}
		lanai_init(&nic[h], guest[h].sram, h, &fab, on_irq, NULL);
	}
	if (verbose)
		fprintf(stderr, "myrisim: %d hosts, %d switches, sockets in %s\n",
			t.nhosts, t.nswitches, dir);
	rc = run(ctl);
	fab_describe(&fab, reply, sizeof(reply));
	fprintf(stderr, "myrisim: %s\n", reply);
	for (h = 0; h < t.nhosts; h++)
		ivs_close(&guest[h]);
	fab_free(&fab);
	return rc ? 1 : 0;
}
