/* SPDX-License-Identifier: GPL-2.0 */
/*
 * myrisim: a Myrinet fabric (crossbar switches, cables) and the LANai NIC of
 * every host, in one process (docs/myrinet.md).  The fabric and the NICs
 * are pure logic driven by a clock the caller passes in (ns), so the unit
 * tests run them with fake hosts and a fake clock; main.c adds the ivshmem
 * sockets, the real clock and the control pipe.
 */
#ifndef MYRISIM_H
#define MYRISIM_H

#include <stddef.h>
#include <stdint.h>

#include "dp_myri_sram.h"

#define FAB_MAX_SWITCHES	16
#define FAB_MAX_PORTS		32
#define FAB_MAX_HOSTS		32
#define FAB_PKT_MAX		(MYRI_ROUTE_MAX + MYRI_HDR_LEN + MYRI_MTU + MYRI_CRC_LEN)
#define FAB_NAME		16

/* ---- CRC-8 and packets (fabric.c) ---- */

/* CRC-8, polynomial x^8 + x^2 + x + 1 (0x07), initial 0, no reflection. */
uint8_t myri_crc8(const uint8_t *p, size_t len);

/* ---- topology (topo.c) ---- */

/* What a switch port is cabled to. */
enum fab_peer_kind { FAB_NONE, FAB_HOST, FAB_SWITCH };

struct fab_peer {
	enum fab_peer_kind kind;
	int id;			/* host index or switch index */
	int port;		/* the far switch's port (FAB_SWITCH) */
};

struct fab_topo {
	int nswitches, nhosts;
	int nports[FAB_MAX_SWITCHES];
	char sw_name[FAB_MAX_SWITCHES][FAB_NAME];
	char host_name[FAB_MAX_HOSTS][FAB_NAME];
	struct fab_peer port[FAB_MAX_SWITCHES][FAB_MAX_PORTS];
	int host_sw[FAB_MAX_HOSTS], host_port[FAB_MAX_HOSTS];
};

/*
 * Parse a topology ("switch NAME PORTS", "host NAME SWITCH PORT",
 * "link SWITCH PORT SWITCH PORT", '#' comments).  Hosts are numbered in
 * file order.  0, or -1 with err set.
 */
int topo_parse(struct fab_topo *t, const char *text, char *err, size_t errlen);
/* The default: 2 switches of 8 ports, 4 hosts, port 7 to port 7. */
void topo_default(struct fab_topo *t);
/* 2 hosts on one 8-port switch. */
void topo_one_switch(struct fab_topo *t);
/*
 * The shortest source route from host @src to host @dst into @route (one
 * byte per switch, MYRI_ROUTE_BIT set); its length, or -1 if none.
 */
int topo_route(const struct fab_topo *t, int src, int dst, uint8_t *route);

/* ---- fabric (fabric.c) ---- */

struct fab_cfg {
	uint32_t ns_per_byte;	/* link speed: 4 = 250 MB/s, Myrinet-2000 */
	uint32_t hop_ns;	/* a head's time through a cable and a switch */
	uint64_t timeout_ns;	/* a head blocked this long: packet truncated */
	/* faults, in parts per million of packets sent */
	uint32_t drop, corrupt, badroute;
	uint64_t seed;
};

struct fab_stats {
	uint64_t sent;		/* packets a NIC started */
	uint64_t delivered;	/* handed to the destination NIC */
	uint64_t hops;		/* switches the delivered packets crossed */
	uint64_t bad_route;	/* dropped at a switch: no route byte, no port */
	uint64_t dead_port;	/* dropped at a switch: the cable is out */
	uint64_t crc_hop;	/* bad CRC seen by a switch (forwarded, marked) */
	uint64_t truncated;	/* blocked past the timeout */
	uint64_t stalls;	/* heads that had to wait (STOP) */
	uint64_t f_drop, f_corrupt, f_badroute;	/* faults applied */
	uint64_t link_down;	/* sent by a NIC whose cable is out */
};

/* A packet on its way: a worm spread over the ports it holds. */
enum worm_state { WORM_HEAD, WORM_BLOCKED, WORM_TAIL };

struct fab_worm {
	enum worm_state state;
	int src;			/* sending host */
	int sw, in_port;		/* where the head is (WORM_HEAD: arriving) */
	int nheld;			/* output ports held, in order */
	int held_sw[MYRI_ROUTE_MAX + 1], held_port[MYRI_ROUTE_MAX + 1];
	int want_port;			/* WORM_BLOCKED: the port, -1 for the NIC */
	int dst;			/* destination host, once the head is out */
	uint64_t t;			/* next event: head arrives / tail passes */
	uint64_t blocked_since;
	size_t len, off;		/* bytes, and route bytes consumed */
	uint8_t buf[FAB_PKT_MAX];
};

/*
 * The NIC side of a host, as the fabric sees it.  accept(): may a packet
 * of @len bytes (type, payload, CRC) be delivered now? (0: STOP).
 * deliver(): the whole packet, route consumed, CRC still on.
 */
struct fab_host_ops {
	int (*accept)(void *ctx, int host, size_t len);
	void (*deliver)(void *ctx, int host, const uint8_t *pkt, size_t len);
};

struct fabric {
	struct fab_topo topo;
	struct fab_cfg cfg;
	struct fab_stats st;
	uint64_t rng;
	uint64_t now;			/* the latest time seen */
	const struct fab_host_ops *ops;
	void *ctx;
	/* per output port: the worm holding it, last input granted */
	struct fab_worm *owner[FAB_MAX_SWITCHES][FAB_MAX_PORTS];
	int last_in[FAB_MAX_SWITCHES][FAB_MAX_PORTS];
	uint8_t blocked[FAB_MAX_SWITCHES][FAB_MAX_PORTS];	/* fault: never grants */
	uint8_t pulled[FAB_MAX_SWITCHES][FAB_MAX_PORTS];	/* fault: cable out */
	struct fab_worm *tx[FAB_MAX_HOSTS];	/* each NIC sends one at a time */
	uint64_t per_in[FAB_MAX_SWITCHES][FAB_MAX_PORTS];	/* grants per input */
};

void fab_cfg_default(struct fab_cfg *c);
void fab_init(struct fabric *f, const struct fab_topo *t, const struct fab_cfg *c,
	      const struct fab_host_ops *ops, void *ctx);
void fab_free(struct fabric *f);
/* Whether host @h's cable is in (the port it hangs on is not pulled). */
int fab_link_up(const struct fabric *f, int h);
/* Whether host @h may start a packet (its last one has left the NIC). */
int fab_tx_idle(const struct fabric *f, int h);
/*
 * Host @h's NIC starts a packet (route, type, payload, CRC) at @now; 0, or
 * -1 if it is still sending (STOP: it must wait).  A packet sent with the
 * cable out is lost and counted.
 */
int fab_send(struct fabric *f, int h, const uint8_t *pkt, size_t len, uint64_t now);
/* Process every event due by @now. */
void fab_advance(struct fabric *f, uint64_t now);
/* The time of the next event, or UINT64_MAX. */
uint64_t fab_next(const struct fabric *f);
/*
 * A control command: "set drop=P,corrupt=P,badroute=P,seed=N,timeout_us=N"
 * (P in percent, up to 4 decimals), "block SW PORT", "unblock SW PORT",
 * "pull SW PORT", "plug SW PORT", "stats", "reset" (stats only).  Writes
 * "OK ..." or "ERR ..." to @reply; 0 or -1.
 */
int fab_control(struct fabric *f, const char *line, char *reply, size_t len);
void fab_describe(const struct fabric *f, char *buf, size_t len);

/* ---- the LANai of one host (lanai.c) ---- */

/* The NIC raises interrupt @vec of its host. */
typedef void (*lanai_irq_fn)(void *ctx, int host, int vec);

struct lanai {
	uint8_t *sram;		/* MYRI_SRAM_SIZE bytes shared with the host */
	int host;
	struct fabric *fab;
	lanai_irq_fn irq;
	void *ctx;
	uint8_t addr[MYRI_SRC_LEN];	/* ours: the host may scribble on ctl->addr */
	uint32_t state;		/* our copy of nic_state */
	uint32_t link;		/* our copy of link */
	uint32_t sendq_cons, recvq_cons, eventq_prod;
	int stopping;		/* refusing the packet at the door */
};

/* Write the signature, the geometry and the NIC's address into @sram. */
void lanai_init(struct lanai *n, uint8_t *sram, int host, struct fabric *f,
		lanai_irq_fn irq, void *ctx);
/* Look at the host's fields: reset/run, new send descriptors, link. */
void lanai_poll(struct lanai *n, uint64_t now);
/* fab_host_ops for an array of struct lanai indexed by host. */
extern const struct fab_host_ops lanai_host_ops;

#endif /* MYRISIM_H */
