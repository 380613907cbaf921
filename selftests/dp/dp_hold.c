// SPDX-License-Identifier: GPL-2.0
/*
 * dp_hold [DPID [map]]: hold a /dev/dp endpoint until killed (test helper).
 * Without DPID the fd stays unbound; with "map" the pool is mapped and the
 * fd closed, so only the mapping holds the endpoint.  Prints "ready" once
 * it holds it; exits 1 on error.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dptest.h"

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
