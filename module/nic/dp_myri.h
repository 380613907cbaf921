/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The myri backend's device, shared by its two faces: dp's backend and
 * Linux's Ethernet over Myrinet (dp_myri.c, dp_myri_eth.c).  Only these two
 * files include this.
 */
#ifndef _DP_MYRI_H
#define _DP_MYRI_H

#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include "dp.h"
#include "dp_myri_sram.h"

#define MYRI_ADDR_LEN		6
#define MYRI_ANSWERS		16	/* ASKs waiting for their ANSWER */

/* An ANSWER to send from process context. */
struct myri_answer {
	u8 blen;
	u8 back[MYRI_ROUTE_MAX];
	u16 idx;
	u32 run;
};

struct myri_scout_run;

/**
 * struct dp_myri_dst - where a frame goes: a peer's NIC address and route.
 */
struct dp_myri_dst {
	u8 addr[MYRI_ADDR_LEN];
	u8 rlen;
	u8 route[MYRI_ROUTE_MAX];
};

struct dp_myri {
	struct dp_nic nic;		/* valid while @node is set */
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0 */
	void __iomem *sram;		/* BAR2 */
	struct list_head list;		/* dp_myri_devs, under dp_myri_lock */
	int idx;
	char name[IFNAMSIZ];
	u8 addr[MYRI_ADDR_LEN];
	bool gone;			/* being removed: no new attachment */
	struct dp_node *node;		/* attached node, or NULL */

	struct mutex tx_mutex;		/* one sender or restart at a time */
	u32 sendq_prod;			/* host's copy of what it published */
	unsigned long tx_progress;	/* jiffies of the last TX progress */
	u32 tx_cons_seen;
	u8 *tx_buf;			/* a packet is built here, then PIO */
	wait_queue_head_t tx_wq;
	wait_queue_head_t ctl_wq;	/* nic_state changes */
	struct delayed_work watchdog;
	bool running;

	spinlock_t lock;		/* event ring, rx_buf, statistics */
	u32 eventq_cons;
	u32 recvq_prod;
	u8 *rx_buf;			/* a packet is read out of SRAM here */

	/* test knob (debugfs: dp/myriN/rx_stall) */
	struct dentry *dbg;
	bool rx_stall;			/* leave received packets in SRAM */

	/* the mapper's scouts (DP_CMD_SCOUT); under @lock */
	struct myri_scout_run *scout;	/* the run waiting for answers */
	wait_queue_head_t scout_wq;
	struct myri_answer answers[MYRI_ANSWERS];	/* to send */
	u32 ans_prod, ans_cons;
	struct work_struct answer_work;

	/* Ethernet over Myrinet (dp_myri_eth.c): the netdev, set and
	 * cleared under @lock (the receive path's view); NULL if none
	 */
	struct net_device *eth;

	/* statistics; the eth_ ones under @lock */
	u64 rx_packets, tx_packets, rx_errors, rx_other, link_events;
	u64 restarts;
	u64 scout_sent, scout_got, scout_answered, scout_stray, scout_bad;
	u64 scout_drops;
	u64 eth_noroute, eth_bcast_cut, eth_rx_spoof;
};

/* dp_myri.c: the card's send path, for both faces */
int dp_myri_tx_lock(struct dp_myri *mp);
u8 *dp_myri_tx_hdr(struct dp_myri *mp, const u8 *route, unsigned int rlen,
		   u32 type);
void dp_myri_tx_post(struct dp_myri *mp, unsigned int plen);
unsigned int dp_myri_routes(struct dp_myri *mp, const u8 *dst,
			    struct dp_myri_dst *out, unsigned int max,
			    bool *cut);

/* dp_myri_eth.c: the netdev myriN */
void dp_myri_eth_probe(struct dp_myri *mp);
void dp_myri_eth_remove(struct dp_myri *mp);
void dp_myri_eth_carrier(struct dp_myri *mp, bool on);
void dp_myri_eth_rx(struct dp_myri *mp, u32 len);

#endif /* _DP_MYRI_H */
