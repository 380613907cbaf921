// SPDX-License-Identifier: GPL-2.0
/*
 * dp_hold [DPID [map]]: hold a /dev/dp endpoint until killed (test helper).
 * Without DPID the fd stays unbound; with "map" the pool is mapped and the
 * fd closed, so only the mapping holds the endpoint.  Prints "ready" once
 * it holds it; exits 1 on error.
 *
 * dp_hold DPID send NID PEER N SIZE: connect to (NID, PEER), send one
 * message and wait until it is acknowledged, print "connected"; then, on
 * SIGUSR1, send N messages of SIZE bytes, print "ready" and hold the
 * endpoint until killed.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dptest.h"

static int hold_send(int fd, char **argv)
{
	uint32_t nid = (uint32_t)strtoul(argv[0], NULL, 0);
	uint32_t peer = (uint32_t)strtoul(argv[1], NULL, 0);
	long i, n = strtol(argv[2], NULL, 0);
	size_t size = (size_t)strtoul(argv[3], NULL, 0);
	struct dp_ep_stats st;
	static char msg[65536];
	sigset_t usr1;
	int sig;

	if (size > sizeof(msg) || dpt_connect(fd, nid, peer) ||
	    write(fd, msg, size) != (ssize_t)size ||
	    dpt_wait_acked(fd, 10000, &st)) {
		perror("dp_hold: send");
		return 1;
	}
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	printf("connected\n");
	fflush(stdout);
	if (sigwait(&usr1, &sig))
		return 1;
	for (i = 0; i < n; i++) {
		if (write(fd, msg, size) != (ssize_t)size) {
			perror("dp_hold: write");
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t dpid = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 0;
	int map = argc > 2 && !strcmp(argv[2], "map");
	struct dpt_pool pool;
	int fd = dpt_open();

	if (fd < 0 || (dpid && dpt_bind(fd, dpid, 0))) {
		perror("dp_hold");
		return 1;
	}
	if (argc > 6 && !strcmp(argv[2], "send") && hold_send(fd, argv + 3))
		return 1;
	if (map) {
		if (dpt_map(fd, &pool)) {
			perror("dp_hold: mmap");
			return 1;
		}
		close(fd);
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
