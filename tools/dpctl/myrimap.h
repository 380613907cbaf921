/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Myrinet mapper's search (dpctl myri map), apart from netlink so that
 * its unit test drives it against a fabric of its own (test/test_myrimap.c).
 *
 * Routes are absolute: one byte per switch, top bit set, the low 6 bits
 * the output port (docs/myrinet.md).  The mapper knows only its own NIC's
 * address.  It sends probes, each along a route, that come back or not:
 *   - a loop probe (no return route) comes back to the mapper's own NIC
 *     only if its route ends there;
 *   - a host probe carries a return route: a host it reaches answers
 *     along it, with its NIC address and its node's NID.
 * The search:
 *   1. loop probes [p] for every port p: the one that comes back is the
 *      mapper's own port m on its switch S0, so [m] leads from S0 home;
 *   2. for each switch X found, with the route F from home to X and the
 *      route B from X home: a host probe F+[p] with return B on each port
 *      p finds the hosts on X; on each port that no host answered, loop
 *      probes F+[p, q]+B for every q: one that comes back shows a switch Y
 *      behind p, reached on its port q, with F+[p] to it and [q]+B home;
 *   3. Y's port q (any that came back) leads back toward home and is not
 *      probed from Y; a switch whose hosts (port by port) equal those of
 *      one found before is that switch again and is not explored further.
 *      A switch without hosts cannot be told apart from another: loops
 *      of such switches are explored until routes grow too long.
 * Hosts are kept by NIC address with the first (a shortest) route found.
 */
#ifndef DPCTL_MYRIMAP_H
#define DPCTL_MYRIMAP_H

#include <stddef.h>
#include <stdint.h>

#define MAP_ROUTE_MAX	16	/* route bytes of a packet */
#define MAP_ADDR_LEN	6	/* NIC address */
#define MAP_BATCH	64	/* probes per probe() call (DP_SCOUT_MAX) */
#define MAP_PORTS_MAX	64	/* a route byte names ports 0..63 */
#define MAP_PORTS_DFLT	16	/* Myrinet's 16-port crossbars */
#define MAP_HOSTS_MAX	1024
#define MAP_SWITCHES_MAX 256

struct map_probe {
	uint8_t rlen;
	uint8_t route[MAP_ROUTE_MAX];
	uint8_t blen;			/* 0: a loop probe */
	uint8_t back[MAP_ROUTE_MAX];
	/* filled in by probe() */
	int answered;
	uint8_t addr[MAP_ADDR_LEN];	/* who answered; our own for a loop */
	uint32_t nid;
};

/* Send @n (<= MAP_BATCH) probes, fill in those answered; 0 or -errno. */
typedef int (*map_probe_fn)(void *arg, struct map_probe *p, size_t n);

struct map_host {
	uint8_t addr[MAP_ADDR_LEN];
	uint32_t nid;
	uint8_t rlen;
	uint8_t route[MAP_ROUTE_MAX];
};

struct map_switch {
	uint8_t flen;			/* route from home to here */
	uint8_t fwd[MAP_ROUTE_MAX];
	uint8_t blen;			/* route from here home */
	uint8_t back[MAP_ROUTE_MAX];
	uint64_t toward_home;		/* ports not probed: lead home */
	uint64_t host_ports;		/* ports a host answered on */
	uint8_t host_addr[MAP_PORTS_MAX][MAP_ADDR_LEN];
	int same_as;			/* -1, or the switch found before */
};

struct map {
	/* in */
	uint8_t self[MAP_ADDR_LEN];
	unsigned int ports;		/* ports probed per switch, 1..64 */
	map_probe_fn probe;
	void *arg;
	/* out */
	int self_port;			/* on the first switch; -1 if none */
	struct map_host hosts[MAP_HOSTS_MAX];
	size_t nhosts;
	struct map_switch sw[MAP_SWITCHES_MAX];
	size_t nsw;
	unsigned long probes;		/* sent */
	int truncated;			/* a table filled up, or routes too long */
};

/*
 * Map the fabric.  0; -ENOENT if no loop probe came back (no switch, or
 * the cable is out); -EINVAL for a bad @ports; a probe()'s -errno.
 */
int map_run(struct map *m);

#endif /* DPCTL_MYRIMAP_H */
