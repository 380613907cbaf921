// SPDX-License-Identifier: GPL-2.0
/*
 * myri backend: dp.ko drives a (simulated) Myrinet LANai card.  The card is
 * QEMU's ivshmem-doorbell device (1af4:1110) served by tools/myrisim: BAR2
 * is the LANai's SRAM (module/nic/dp_myri_sram.h), BAR0's doorbell rings
 * the NIC and MSI-X vectors are its interrupts (docs/myrinet.md).  Only a
 * device whose BAR2 carries the simulator's signature is claimed.  Devices
 * are named myri0, myri1, ... and attach to a node with
 * "dpctl node set nid N dev myri0 backend myri"; NART entries hold the
 * peer's NIC address and the source route to it.
 *
 * Transmit: route, type, 8 bytes the NIC stamps with its address, the dp
 * header and the message go into the next TX slot by PIO; the descriptor
 * is published and the doorbell rung.  Receive: the event interrupt hands
 * every received packet to the MDR with its NIC source address and posts
 * the slot again.  A delayed work item is the watchdog: a NIC that left
 * RUN, or holds sends without progress, is reset and started again.
 *
 * Locks: dp_myri_lock (global; device list and attachment) nests inside
 * dp_node.cfg_lock; mp->tx_mutex serialises senders and restarts and nests
 * inside dp_snd.tx_mutex and dp_myri_lock; mp->lock (irq-safe) guards the
 * event ring, the receive statistics, the mapper's run, the ANSWERs to send
 * and the netdev pointer.
 *
 * Each card is also a Linux netdev of the same name, which carries Ethernet
 * frames in packets of type MYRI_TYPE_ETH along the routes of the attached
 * node's NART (dp_myri_eth.c).
 *
 * The mapper (dpctl myri map, DP_CMD_SCOUT): ASK packets of type
 * MYRI_TYPE_SCOUT go along the routes dpctl chose; a host that receives
 * one answers along the route the ASK carries, from a work item; an ASK
 * that comes back to its sender shows a loop.  dpctl builds the map.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/pci.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "dp_backends.h"
#include "dp_myri.h"

#define MYRI_TX_TIMEOUT		(2 * HZ)
#define MYRI_WATCHDOG		(HZ / 2)
#define MYRI_STATE_WAIT_MS	2000
#define MYRI_RX_BUDGET		MYRI_EVENTQ_LEN
/* ivshmem BAR0 registers */
#define IVSHMEM_DOORBELL	12

#define MYRI_CTL(f)		(MYRI_CTL_OFF + offsetof(struct myri_ctl, f))

/*
 * The mapper's packets, type MYRI_TYPE_SCOUT (chosen by dp): an ASK goes
 * along a route the mapper chose; the host it reaches sends an ANSWER along
 * @back with its node's NID (the NIC stamps its address).  An ASK with no
 * @back is to come back to the NIC that sent it.  @run and @idx name the
 * mapper's run and its probe.
 */
#define MYRI_SCOUT_ASK		1
#define MYRI_SCOUT_ANSWER	2

struct myri_scout_pkt {
	u8 op;
	u8 blen;
	__be16 idx;
	__be32 run;
	__be32 nid;
	u8 back[MYRI_ROUTE_MAX];
} __packed;

/* A mapper's run of probes, waiting for their answers. */
struct myri_scout_run {
	u32 id;
	struct dp_scout *sc;
	unsigned int n;
	unsigned int answered;
};

static DEFINE_MUTEX(dp_myri_lock);
static LIST_HEAD(dp_myri_devs);
static DEFINE_IDA(dp_myri_ida);

static struct dp_myri *dp_myri_of(const struct dp_nic *nic)
{
	return container_of(nic, struct dp_myri, nic);
}

static u32 myri_rd(struct dp_myri *mp, unsigned int off)
{
	return ioread32(mp->sram + off);
}

static void myri_wr(struct dp_myri *mp, unsigned int off, u32 v)
{
	iowrite32(v, mp->sram + off);
}

/* Ring the simulator (ivshmem peer 0) on doorbell vector @vec. */
static void myri_ring(struct dp_myri *mp, unsigned int vec)
{
	wmb();	/* SRAM writes before the doorbell */
	iowrite32(MYRI_SIM_PEER << 16 | vec, mp->regs + IVSHMEM_DOORBELL);
}

/* ---- NIC state ---- */

/* Wait for nic_state @want; -ETIMEDOUT if the simulator does not answer. */
static int myri_wait_state(struct dp_myri *mp, u32 want)
{
	long left;

	left = wait_event_timeout(mp->ctl_wq,
				  myri_rd(mp, MYRI_CTL(nic_state)) == want,
				  msecs_to_jiffies(MYRI_STATE_WAIT_MS));
	return left ? 0 : -ETIMEDOUT;
}

/* Stop the NIC: host_state RESET, then READY (its indices zeroed). */
static int myri_reset(struct dp_myri *mp)
{
	myri_wr(mp, MYRI_CTL(irq_armed), 0);
	myri_wr(mp, MYRI_CTL(host_state), MYRI_HOST_RESET);
	myri_ring(mp, MYRI_DB_CTL);
	return myri_wait_state(mp, MYRI_NIC_READY);
}

/* Zero the host's indices and post every RX slot.  NIC in READY. */
static void myri_rings_init(struct dp_myri *mp)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&mp->lock, flags);
	for (i = 0; i < MYRI_RECVQ_LEN; i++)
		myri_wr(mp, MYRI_RECVQ_OFF + i * sizeof(struct myri_recv_desc),
			i);
	mp->eventq_cons = 0;
	mp->recvq_prod = MYRI_RECVQ_LEN;
	myri_wr(mp, MYRI_CTL(eventq_cons), 0);
	myri_wr(mp, MYRI_CTL(sendq_prod), 0);
	wmb();	/* the slots before the index that publishes them */
	myri_wr(mp, MYRI_CTL(recvq_prod), mp->recvq_prod);
	spin_unlock_irqrestore(&mp->lock, flags);
	mp->sendq_prod = 0;
	mp->tx_cons_seen = 0;
}

/*
 * Reset the NIC and run it with empty queues: sends it had not taken are
 * lost (the lossless edges send them again).  Caller holds tx_mutex.
 */
static int myri_start(struct dp_myri *mp)
{
	int err;

	lockdep_assert_held(&mp->tx_mutex);
	WRITE_ONCE(mp->running, false);
	err = myri_reset(mp);
	if (err)
		return err;
	myri_rings_init(mp);
	myri_wr(mp, MYRI_CTL(host_state), MYRI_HOST_RUN);
	myri_ring(mp, MYRI_DB_CTL);
	err = myri_wait_state(mp, MYRI_NIC_RUN);
	if (err)
		return err;
	mp->tx_progress = jiffies;
	WRITE_ONCE(mp->running, true);
	myri_wr(mp, MYRI_CTL(irq_armed), 1);
	myri_ring(mp, MYRI_DB_RECV);
	return 0;
}

static void myri_stop(struct dp_myri *mp)
{
	lockdep_assert_held(&mp->tx_mutex);
	WRITE_ONCE(mp->running, false);
	if (myri_reset(mp))
		dev_warn(&mp->pdev->dev, "%s: NIC did not stop\n", mp->name);
	synchronize_irq(pci_irq_vector(mp->pdev, MYRI_IRQ_EVENT));
}

/* ---- Transmit ---- */

static u32 myri_tx_used(struct dp_myri *mp)
{
	u32 cons = myri_rd(mp, MYRI_CTL(sendq_cons));

	if (cons != mp->tx_cons_seen) {
		mp->tx_cons_seen = cons;
		mp->tx_progress = jiffies;
	}
	return mp->sendq_prod - cons;
}

/*
 * Whether a sender may go on: a free slot, or the device stopped (the
 * sender then finds out under tx_mutex).  A wait condition: takes no lock.
 * With every slot in flight it arms the interrupt, then looks once more:
 * a slot freed between the first look and the arming raises none.
 */
static bool myri_tx_room(struct dp_myri *mp)
{
	u32 prod = READ_ONCE(mp->sendq_prod);

	if (prod - myri_rd(mp, MYRI_CTL(sendq_cons)) < MYRI_SENDQ_LEN ||
	    !READ_ONCE(mp->running) || READ_ONCE(mp->gone))
		return true;
	myri_wr(mp, MYRI_CTL(irq_armed), 1);	/* the next move wakes us */
	mb();	/* arm before the last look at the index */
	return prod - myri_rd(mp, MYRI_CTL(sendq_cons)) < MYRI_SENDQ_LEN;
}

/* Lock tx_mutex with a free TX slot; -errno (unlocked) if none comes. */
int dp_myri_tx_lock(struct dp_myri *mp)
{
	long w;

	for (;;) {
		mutex_lock(&mp->tx_mutex);
		if (mp->gone || !mp->running) {
			mutex_unlock(&mp->tx_mutex);
			return -ENETDOWN;
		}
		if (myri_tx_used(mp) < MYRI_SENDQ_LEN)
			return 0;
		mutex_unlock(&mp->tx_mutex);
		/* the watchdog restarts a NIC that stopped sending */
		w = wait_event_interruptible_timeout(mp->tx_wq,
						     myri_tx_room(mp),
						     2 * MYRI_TX_TIMEOUT);
		if (w < 0)
			return w;
		if (!w)
			return -ENOBUFS;
	}
}

/* Start a packet in tx_buf: route, @type, 8 bytes for the NIC's address. */
u8 *dp_myri_tx_hdr(struct dp_myri *mp, const u8 *route, unsigned int rlen,
		   u32 type)
{
	__be32 t = cpu_to_be32(type);
	u8 *p = mp->tx_buf;

	memcpy(p, route, rlen);
	memcpy(p + rlen, &t, MYRI_TYPE_LEN);
	memset(p + rlen + MYRI_TYPE_LEN, 0, MYRI_SRC_LEN);
	return p + rlen + MYRI_HDR_LEN;
}

/* Send the @plen bytes built in tx_buf: next TX slot, descriptor, doorbell. */
void dp_myri_tx_post(struct dp_myri *mp, unsigned int plen)
{
	unsigned int i = mp->sendq_prod % MYRI_SENDQ_LEN;
	unsigned int d = MYRI_SENDQ_OFF + i * sizeof(struct myri_send_desc);

	lockdep_assert_held(&mp->tx_mutex);
	memcpy_toio(mp->sram + MYRI_TXBUF_OFF + i * MYRI_SLOT_SIZE,
		    mp->tx_buf, plen);
	myri_wr(mp, d, plen);
	myri_wr(mp, d + 4, i);
	if (mp->sendq_prod == mp->tx_cons_seen)
		mp->tx_progress = jiffies;
	wmb();	/* the slot and its descriptor before the index */
	WRITE_ONCE(mp->sendq_prod, mp->sendq_prod + 1);
	myri_wr(mp, MYRI_CTL(sendq_prod), mp->sendq_prod);
	myri_ring(mp, MYRI_DB_SEND);
}

/*
 * @dst: the peer's NIC address, the route's length, the route (see
 * struct dp_backend).  The packet: route, type, 8 bytes for the source
 * (the NIC writes its own), the dp header, the message.
 */
static int dp_myri_xmit(struct dp_nic *nic, const u8 *dst,
			const struct dp_wire_hdr *hdr, const void *msg,
			size_t len, struct dp_txref *keep,
			struct dp_txc *done)
{
	struct dp_myri *mp = dp_myri_of(nic);
	unsigned int rlen = dst[MYRI_ADDR_LEN];
	const u8 *route = dst + MYRI_ADDR_LEN + 1;
	u8 *p;
	int err;

	if (!rlen || rlen > MYRI_ROUTE_MAX)
		return -EHOSTUNREACH;
	if (sizeof(*hdr) + len > MYRI_MTU)
		return -EMSGSIZE;
	err = dp_myri_tx_lock(mp);
	if (err)
		return err;
	p = dp_myri_tx_hdr(mp, route, rlen, MYRI_TYPE_DP);
	memcpy(p, hdr, sizeof(*hdr));
	/*
	 * From the message's kernel copy (docs/reliability.md, section 7)
	 * into the packet, which goes to the card's SRAM: the card never
	 * reads the copy, so it takes no reference on it (@keep).
	 */
	memcpy(p + sizeof(*hdr), msg, len);
	dp_myri_tx_post(mp, p + sizeof(*hdr) + len - mp->tx_buf);
	mp->tx_packets++;
	mutex_unlock(&mp->tx_mutex);
	return 0;
}

/* ---- The mapper's scouts ---- */

/* Send one scout packet along @route; 0 or -errno.  May sleep. */
static int myri_scout_send(struct dp_myri *mp, const u8 *route,
			   unsigned int rlen, const struct myri_scout_pkt *pkt)
{
	int err = dp_myri_tx_lock(mp);
	u8 *p;

	if (err)
		return err;
	p = dp_myri_tx_hdr(mp, route, rlen, MYRI_TYPE_SCOUT);
	memcpy(p, pkt, sizeof(*pkt));
	dp_myri_tx_post(mp, p + sizeof(*pkt) - mp->tx_buf);
	mp->scout_sent++;
	mutex_unlock(&mp->tx_mutex);
	return 0;
}

/* Send the ANSWERs the receive path queued, with this node's NID. */
static void dp_myri_answer_work(struct work_struct *work)
{
	struct dp_myri *mp = container_of(work, struct dp_myri, answer_work);
	struct myri_scout_pkt pkt = { .op = MYRI_SCOUT_ANSWER };
	struct dp_node *node = READ_ONCE(mp->node);
	struct myri_answer a;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&mp->lock, flags);
		if (mp->ans_cons == mp->ans_prod) {
			spin_unlock_irqrestore(&mp->lock, flags);
			return;
		}
		a = mp->answers[mp->ans_cons++ % MYRI_ANSWERS];
		spin_unlock_irqrestore(&mp->lock, flags);
		pkt.idx = cpu_to_be16(a.idx);
		pkt.run = cpu_to_be32(a.run);
		pkt.nid = cpu_to_be32(node ? READ_ONCE(node->nid) : 0);
		if (!myri_scout_send(mp, a.back, a.blen, &pkt))
			continue;
		spin_lock_irqsave(&mp->lock, flags);
		mp->scout_drops++;
		spin_unlock_irqrestore(&mp->lock, flags);
	}
}

/* Every byte a route byte, the length 1..MYRI_ROUTE_MAX (0 if @may_be_empty). */
static bool myri_route_ok(const u8 *route, unsigned int len, bool may_be_empty)
{
	unsigned int i;

	if (len > MYRI_ROUTE_MAX || (!len && !may_be_empty))
		return false;
	for (i = 0; i < len; i++)
		if (!(route[i] & MYRI_ROUTE_BIT))
			return false;
	return true;
}

/* An ASK from another NIC: queue its ANSWER (the work sends it). */
static void myri_scout_ask(struct dp_myri *mp, const struct myri_scout_pkt *pkt)
{
	struct myri_answer *a;

	lockdep_assert_held(&mp->lock);
	if (!pkt->blen) {	/* a probe meant to come back to its sender */
		mp->scout_stray++;
		return;
	}
	if (mp->ans_prod - mp->ans_cons >= MYRI_ANSWERS) {
		mp->scout_drops++;
		return;
	}
	a = &mp->answers[mp->ans_prod++ % MYRI_ANSWERS];
	a->blen = pkt->blen;
	memcpy(a->back, pkt->back, pkt->blen);
	a->idx = be16_to_cpu(pkt->idx);
	a->run = be32_to_cpu(pkt->run);
	schedule_work(&mp->answer_work);
}

/* An ANSWER, or our own ASK come back: the running probe's, if any. */
static void myri_scout_got(struct dp_myri *mp, const u8 *src,
			   const struct myri_scout_pkt *pkt, u32 nid)
{
	struct myri_scout_run *run = mp->scout;
	unsigned int idx = be16_to_cpu(pkt->idx);
	struct dp_scout *sc;

	lockdep_assert_held(&mp->lock);
	if (!run || run->id != be32_to_cpu(pkt->run) || idx >= run->n ||
	    run->sc[idx].answered) {
		mp->scout_stray++;	/* late, or an earlier run's */
		return;
	}
	sc = &run->sc[idx];
	sc->alen = MYRI_ADDR_LEN;
	memcpy(sc->addr, src, MYRI_ADDR_LEN);
	sc->nid = nid;
	WRITE_ONCE(sc->answered, true);
	WRITE_ONCE(run->answered, run->answered + 1);
	mp->scout_got++;
	wake_up(&mp->scout_wq);
}

/* A scout packet in rx_buf: type, source, struct myri_scout_pkt. */
static void myri_scout_rx(struct dp_myri *mp, struct dp_node *node, u32 len)
{
	const u8 *src = mp->rx_buf + MYRI_TYPE_LEN;
	struct myri_scout_pkt pkt;

	lockdep_assert_held(&mp->lock);
	if (len < MYRI_HDR_LEN + sizeof(pkt)) {
		mp->scout_bad++;
		return;
	}
	memcpy(&pkt, mp->rx_buf + MYRI_HDR_LEN, sizeof(pkt));
	if (!myri_route_ok(pkt.back, pkt.blen, true)) {
		mp->scout_bad++;
	} else if (pkt.op == MYRI_SCOUT_ANSWER) {
		myri_scout_got(mp, src, &pkt, be32_to_cpu(pkt.nid));
	} else if (pkt.op != MYRI_SCOUT_ASK) {
		mp->scout_bad++;
	} else if (!memcmp(src, mp->addr, MYRI_ADDR_LEN)) {
		myri_scout_got(mp, src, &pkt, READ_ONCE(node->nid));
	} else {
		mp->scout_answered++;
		myri_scout_ask(mp, &pkt);
	}
}

/* A wait condition: every probe of @run answered. */
static bool myri_scout_done(const struct myri_scout_run *run)
{
	return READ_ONCE(run->answered) == run->n;
}

/* Send @n ASKs, wait up to @ms for what comes back.  One run at a time. */
static int dp_myri_scout(struct dp_nic *nic, struct dp_scout *sc,
			 unsigned int n, unsigned int ms)
{
	struct dp_myri *mp = dp_myri_of(nic);
	struct myri_scout_run run = { .id = get_random_u32(), .sc = sc, .n = n };
	struct myri_scout_pkt pkt = { .op = MYRI_SCOUT_ASK, .run = cpu_to_be32(run.id) };
	unsigned long flags;
	unsigned int i;
	long left;
	int err = 0;

	for (i = 0; i < n; i++)
		if (!myri_route_ok(sc[i].route, sc[i].rlen, false) ||
		    !myri_route_ok(sc[i].back, sc[i].blen, true))
			return -EINVAL;
	spin_lock_irqsave(&mp->lock, flags);
	if (mp->scout)
		err = -EBUSY;
	else
		mp->scout = &run;
	spin_unlock_irqrestore(&mp->lock, flags);
	for (i = 0; i < n && !err; i++) {
		pkt.idx = cpu_to_be16(i);
		pkt.blen = sc[i].blen;
		memset(pkt.back, 0, sizeof(pkt.back));
		memcpy(pkt.back, sc[i].back, sc[i].blen);
		err = myri_scout_send(mp, sc[i].route, sc[i].rlen, &pkt);
	}
	if (!err) {
		left = msecs_to_jiffies(ms);
		left = wait_event_interruptible_timeout(mp->scout_wq,
							myri_scout_done(&run),
							left);
		if (left < 0)
			err = -EINTR;
	}
	spin_lock_irqsave(&mp->lock, flags);
	if (mp->scout == &run)
		mp->scout = NULL;
	spin_unlock_irqrestore(&mp->lock, flags);
	return err;
}

/* ---- Receive and interrupts ---- */

/* One received packet in RX slot @slot: type, source, payload. */
static void myri_rx_one(struct dp_myri *mp, struct dp_node *node, u32 slot,
			u32 len)
{
	u32 type;

	lockdep_assert_held(&mp->lock);
	if (slot >= MYRI_RECVQ_LEN || len < MYRI_HDR_LEN ||
	    len > MYRI_HDR_LEN + MYRI_MTU) {
		mp->rx_errors++;
		return;
	}
	memcpy_fromio(mp->rx_buf,
		      mp->sram + MYRI_RXBUF_OFF + slot * MYRI_SLOT_SIZE, len);
	type = be32_to_cpup((const __be32 *)mp->rx_buf);
	if (type == MYRI_TYPE_SCOUT && node) {
		myri_scout_rx(mp, node, len);
		return;
	}
	if (type == MYRI_TYPE_ETH) {
		dp_myri_eth_rx(mp, len);
		return;
	}
	if (type != MYRI_TYPE_DP || !node) {
		mp->rx_other++;
		return;
	}
	mp->rx_packets++;
	dp_mdr_rx(node, mp->rx_buf + MYRI_TYPE_LEN, MYRI_ADDR_LEN,
		  mp->rx_buf + MYRI_HDR_LEN, len - MYRI_HDR_LEN);
}

/* Post RX slot @slot again, if it is one. */
static void myri_rx_post(struct dp_myri *mp, u32 slot)
{
	unsigned int i = mp->recvq_prod % MYRI_RECVQ_LEN;

	if (slot >= MYRI_RECVQ_LEN)
		return;
	myri_wr(mp, MYRI_RECVQ_OFF + i * sizeof(struct myri_recv_desc), slot);
	wmb();	/* the slot before the index */
	myri_wr(mp, MYRI_CTL(recvq_prod), ++mp->recvq_prod);
}

/* Take the events the NIC posted, up to a budget.  Under mp->lock. */
static void myri_events(struct dp_myri *mp, struct dp_node *node)
{
	unsigned int n;

	lockdep_assert_held(&mp->lock);
	for (n = 0; n < MYRI_RX_BUDGET && READ_ONCE(mp->running); n++) {
		unsigned int off = MYRI_EVENTQ_OFF + (mp->eventq_cons %
				   MYRI_EVENTQ_LEN) * sizeof(struct myri_event);
		u32 prod = myri_rd(mp, MYRI_CTL(eventq_prod)), type, slot;

		/* none, or a wild index (a NIC resetting): the watchdog */
		if (prod - mp->eventq_cons - 1 >= MYRI_EVENTQ_LEN)
			break;
		rmb();	/* the index before the entry */
		type = myri_rd(mp, off);
		slot = myri_rd(mp, off + 4);
		if (type == MYRI_EV_RECV) {
			myri_rx_one(mp, node, slot, myri_rd(mp, off + 8));
			myri_rx_post(mp, slot);
		} else if (type == MYRI_EV_LINK) {
			mp->link_events++;
		} else {
			mp->rx_errors++;
		}
		myri_wr(mp, MYRI_CTL(eventq_cons), ++mp->eventq_cons);
	}
}

/*
 * Take what the NIC posted and arm its interrupt again; from the event
 * interrupt, or process context when the rx_stall knob is cleared.
 */
static void myri_service(struct dp_myri *mp)
{
	struct dp_node *node = READ_ONCE(mp->node);
	unsigned long flags;
	unsigned int round;

	spin_lock_irqsave(&mp->lock, flags);
	for (round = 0; round < 8 && !READ_ONCE(mp->rx_stall); round++) {
		myri_events(mp, node);
		if (!READ_ONCE(mp->running))
			break;
		/* armed again, then a last look: no event is missed */
		myri_wr(mp, MYRI_CTL(irq_armed), 1);
		mb();	/* arm before the last look at the index */
		if (myri_rd(mp, MYRI_CTL(eventq_prod)) == mp->eventq_cons)
			break;
	}
	spin_unlock_irqrestore(&mp->lock, flags);
	if (READ_ONCE(mp->running))
		myri_ring(mp, MYRI_DB_RECV);
	wake_up(&mp->tx_wq);
}

static irqreturn_t dp_myri_irq_event(int irq, void *data)
{
	myri_service(data);
	return IRQ_HANDLED;
}

/* nic_state or the link changed: a NIC out of RUN is restarted. */
static irqreturn_t dp_myri_irq_ctl(int irq, void *data)
{
	struct dp_myri *mp = data;

	wake_up(&mp->ctl_wq);
	if (READ_ONCE(mp->running) &&
	    myri_rd(mp, MYRI_CTL(nic_state)) != MYRI_NIC_RUN)
		mod_delayed_work(system_wq, &mp->watchdog, 0);
	return IRQ_HANDLED;
}

/* ---- Watchdog and recovery ---- */

static void dp_myri_restart(struct dp_myri *mp, const char *why)
{
	unsigned long flags;

	lockdep_assert_held(&mp->tx_mutex);
	dev_warn(&mp->pdev->dev, "%s: %s, restarting (%u sends queued)\n",
		 mp->name, why, mp->sendq_prod - mp->tx_cons_seen);
	myri_stop(mp);
	spin_lock_irqsave(&mp->lock, flags);
	mp->restarts++;
	spin_unlock_irqrestore(&mp->lock, flags);
	if (myri_start(mp))
		dev_warn(&mp->pdev->dev, "%s: NIC did not start\n", mp->name);
	wake_up(&mp->tx_wq);
}

static void dp_myri_watchdog(struct work_struct *work)
{
	struct dp_myri *mp = container_of(to_delayed_work(work),
					  struct dp_myri, watchdog);
	bool stuck;

	mutex_lock(&mp->tx_mutex);
	if (!READ_ONCE(mp->node) || mp->gone) {
		mutex_unlock(&mp->tx_mutex);
		return;
	}
	stuck = myri_tx_used(mp) &&
		time_after(jiffies, mp->tx_progress + MYRI_TX_TIMEOUT);
	if (!mp->running)
		dp_myri_restart(mp, "NIC not started");
	else if (myri_rd(mp, MYRI_CTL(nic_state)) != MYRI_NIC_RUN)
		dp_myri_restart(mp, "NIC left RUN");
	else if (stuck)
		dp_myri_restart(mp, "send timeout");
	mutex_unlock(&mp->tx_mutex);
	schedule_delayed_work(&mp->watchdog, MYRI_WATCHDOG);
}

/* ---- dp NIC ops ---- */

static unsigned int dp_myri_mtu(const struct dp_nic *nic)
{
	return MYRI_MTU;
}

static unsigned int dp_myri_lladdr(const struct dp_nic *nic, u8 *addr)
{
	memcpy(addr, dp_myri_of(nic)->addr, MYRI_ADDR_LEN);
	return MYRI_ADDR_LEN;
}

/* After the last sender: stop the NIC, forget the node. */
static void dp_myri_detach(struct dp_nic *nic)
{
	struct dp_myri *mp = dp_myri_of(nic);

	/* the watchdog first: it would start a stopped NIC again */
	cancel_delayed_work_sync(&mp->watchdog);
	mutex_lock(&mp->tx_mutex);
	myri_stop(mp);
	mutex_unlock(&mp->tx_mutex);
	wake_up(&mp->tx_wq);	/* an ANSWER waiting for a slot: ENETDOWN */
	cancel_work_sync(&mp->answer_work);	/* none queued once stopped */
	mutex_lock(&dp_myri_lock);
	dp_myri_eth_carrier(mp, false);
	WRITE_ONCE(mp->node, NULL);
	mutex_unlock(&dp_myri_lock);
	wake_up_var(&mp->node);
}

static const struct dp_backend dp_myri_backend;

static struct dp_myri *dp_myri_find(const char *ifname)
{
	struct dp_myri *mp;

	lockdep_assert_held(&dp_myri_lock);
	list_for_each_entry(mp, &dp_myri_devs, list)
		if (!strcmp(mp->name, ifname) && !mp->gone)
			return mp;
	return NULL;
}

/* Whether @out[0..@n) already holds NIC address @addr. */
static bool myri_dst_has(const struct dp_myri_dst *out, unsigned int n,
			 const u8 *addr)
{
	while (n--)
		if (ether_addr_equal(out[n].addr, addr))
			return true;
	return false;
}

/*
 * The NIC addresses and routes in NART @t that Ethernet destination @dst
 * names: the entry with NIC address @dst, or for a broadcast or multicast
 * @dst every peer once (this NIC's own address left out), up to @max (more:
 * *@cut).  Under RCU.
 */
static unsigned int myri_nart_routes(struct dp_myri *mp,
				     const struct dp_nart_tbl *t, const u8 *dst,
				     struct dp_myri_dst *out, unsigned int max,
				     bool *cut)
{
	bool all = is_multicast_ether_addr(dst);
	const struct dp_nart_entry *e;
	unsigned int i, n = 0;

	for (i = 0; i < t->n; i++) {
		e = &t->e[i];
		if (e->alen != MYRI_ADDR_LEN || !e->rlen ||
		    e->rlen > MYRI_ROUTE_MAX ||
		    (!all && !ether_addr_equal(e->addr, dst)) ||
		    ether_addr_equal(e->addr, mp->addr) ||
		    myri_dst_has(out, n, e->addr))
			continue;
		if (n == max) {
			*cut = true;
			break;
		}
		memcpy(out[n].addr, e->addr, MYRI_ADDR_LEN);
		out[n].rlen = e->rlen;
		memcpy(out[n].route, e->route, e->rlen);
		n++;
		if (!all)
			break;
	}
	return n;
}

/*
 * Where an Ethernet frame to @dst goes, from the attached node's NART (see
 * myri_nart_routes()); none without a node.  The node stays while
 * dp_myri_lock is held: detach clears @mp->node under it.
 */
static unsigned int myri_routes_locked(struct dp_myri *mp, const u8 *dst,
				       struct dp_myri_dst *out,
				       unsigned int max, bool *cut)
{
	const struct dp_nart_tbl *t;
	unsigned int n = 0;

	lockdep_assert_held(&dp_myri_lock);
	if (!mp->node)
		return 0;
	rcu_read_lock();
	t = rcu_dereference(mp->node->nart);
	if (t)
		n = myri_nart_routes(mp, t, dst, out, max, cut);
	rcu_read_unlock();
	return n;
}

/* myri_routes_locked(), for dp_myri_eth.c; may sleep. */
unsigned int dp_myri_routes(struct dp_myri *mp, const u8 *dst,
			    struct dp_myri_dst *out, unsigned int max,
			    bool *cut)
{
	unsigned int n;

	*cut = false;
	mutex_lock(&dp_myri_lock);
	n = myri_routes_locked(mp, dst, out, max, cut);
	mutex_unlock(&dp_myri_lock);
	return n;
}

/* Whether dp_myri_attach() would find a usable device for @node. */
static int dp_myri_check(struct dp_node *node, const char *ifname)
{
	struct dp_myri *mp;
	int err = 0;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;	/* hardware is shared by every namespace */
	mutex_lock(&dp_myri_lock);
	mp = dp_myri_find(ifname);
	if (!mp)
		err = -ENODEV;
	else if (mp->node && mp->node != node)
		err = -EBUSY;
	mutex_unlock(&dp_myri_lock);
	return err;
}

/*
 * Called with rtnl and node->cfg_lock held (see struct dp_backend).  A NIC
 * that does not start now (the simulator is slow) is started by the
 * watchdog.
 */
static int dp_myri_attach(struct dp_node *node, const char *ifname)
{
	struct dp_myri *mp;
	int err = 0;

	lockdep_assert_held(&node->cfg_lock);
	mutex_lock(&dp_myri_lock);
	mp = dp_myri_find(ifname);
	if (!mp) {
		err = -ENODEV;
	} else if (mp->node) {
		err = -EBUSY;
	} else {
		dp_nic_init(&mp->nic, &dp_myri_backend, node, mp, mp->name);
		WRITE_ONCE(mp->node, node);
		mutex_lock(&mp->tx_mutex);
		if (myri_start(mp))
			dev_warn(&mp->pdev->dev, "%s: NIC did not start\n",
				 mp->name);
		mutex_unlock(&mp->tx_mutex);
		schedule_delayed_work(&mp->watchdog, MYRI_WATCHDOG);
		dp_myri_eth_carrier(mp, true);
	}
	mutex_unlock(&dp_myri_lock);
	if (!err)
		dp_node_publish_nic(node, &mp->nic);
	return err;
}

/* ---- sysfs: name, statistics (the driver's and the NIC's) ---- */

static struct dp_myri *dp_myri_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t dp_name_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", dp_myri_dev(dev)->name);
}
static DEVICE_ATTR_RO(dp_name);

static u64 myri_ctr(struct dp_myri *mp, unsigned int off)
{
	return myri_rd(mp, off) | (u64)myri_rd(mp, off + 4) << 32;
}

#define MYRI_NIC_CTR(f)	myri_ctr(mp, MYRI_CTL(f))

static ssize_t dp_stats_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct dp_myri *mp = dp_myri_dev(dev);

	return sysfs_emit(buf,
			  "rx_packets %llu\ntx_packets %llu\nrx_errors %llu\n"
			  "rx_other %llu\nlink_events %llu\nrestarts %llu\n"
			  "link %u\nnic_tx_packets %llu\nnic_tx_bad %llu\n"
			  "nic_tx_link_down %llu\nnic_rx_packets %llu\n"
			  "nic_rx_crc %llu\nnic_rx_route %llu\n"
			  "nic_rx_short %llu\nnic_rx_stops %llu\n"
			  "scout_sent %llu\nscout_got %llu\n"
			  "scout_answered %llu\nscout_stray %llu\n"
			  "scout_bad %llu\nscout_drops %llu\n"
			  "eth_noroute %llu\neth_bcast_cut %llu\n"
			  "eth_rx_spoof %llu\n",
			  mp->rx_packets, mp->tx_packets, mp->rx_errors,
			  mp->rx_other, mp->link_events, mp->restarts,
			  myri_rd(mp, MYRI_CTL(link)),
			  MYRI_NIC_CTR(tx_packets), MYRI_NIC_CTR(tx_bad),
			  MYRI_NIC_CTR(tx_link_down), MYRI_NIC_CTR(rx_packets),
			  MYRI_NIC_CTR(rx_crc), MYRI_NIC_CTR(rx_route),
			  MYRI_NIC_CTR(rx_short), MYRI_NIC_CTR(rx_stops),
			  mp->scout_sent, mp->scout_got, mp->scout_answered,
			  mp->scout_stray, mp->scout_bad, mp->scout_drops,
			  mp->eth_noroute, mp->eth_bcast_cut, mp->eth_rx_spoof);
}
static DEVICE_ATTR_RO(dp_stats);

/* ---- debugfs: test-only knob, dp/myriN/rx_stall ---- */

static int dp_myri_rx_stall_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct dp_myri *)data)->rx_stall);
	return 0;
}

/*
 * Stop taking received packets: the NIC runs out of RX slots and holds
 * packets on the wire (STOP), as a host that does not drain; and resume.
 */
static int dp_myri_rx_stall_set(void *data, u64 val)
{
	struct dp_myri *mp = data;

	WRITE_ONCE(mp->rx_stall, !!val);
	if (!val)
		myri_service(mp);	/* the NIC posts nothing new meanwhile */
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dp_myri_rx_stall_fops, dp_myri_rx_stall_get,
			 dp_myri_rx_stall_set, "%llu\n");

static struct attribute *dp_myri_attrs[] = {
	&dev_attr_dp_name.attr,
	&dev_attr_dp_stats.attr,
	NULL
};
ATTRIBUTE_GROUPS(dp_myri);

/* ---- PCI driver ---- */

/* Whether BAR2 is the simulator's LANai SRAM, of this layout. */
static bool myri_is_ours(struct pci_dev *pdev)
{
	u8 sig[MYRI_SIG_LEN];
	void __iomem *p;
	bool ours;

	if (pci_resource_len(pdev, 2) < MYRI_SRAM_SIZE)
		return false;
	p = pci_iomap_range(pdev, 2, 0, PAGE_SIZE);
	if (!p)
		return false;
	memcpy_fromio(sig, p, MYRI_SIG_LEN);
	ours = !memcmp(sig, MYRI_SIGNATURE, MYRI_SIG_LEN) &&
	       ioread32(p + MYRI_CTL(version)) == MYRI_VERSION &&
	       ioread32(p + MYRI_CTL(mtu)) == MYRI_MTU &&
	       ioread32(p + MYRI_CTL(slot_size)) == MYRI_SLOT_SIZE;
	pci_iounmap(pdev, p);
	return ours;
}

static int myri_irqs(struct dp_myri *mp)
{
	struct pci_dev *pdev = mp->pdev;
	int n, err;

	n = pci_alloc_irq_vectors(pdev, 2, MYRI_VECTORS, PCI_IRQ_MSIX);
	if (n < 0)
		return n;
	err = request_irq(pci_irq_vector(pdev, MYRI_IRQ_EVENT),
			  dp_myri_irq_event, 0, "dp_myri_event", mp);
	if (err)
		goto err_vec;
	err = request_irq(pci_irq_vector(pdev, MYRI_IRQ_CTL), dp_myri_irq_ctl,
			  0, "dp_myri_ctl", mp);
	if (err)
		goto err_event;
	return 0;

err_event:
	free_irq(pci_irq_vector(pdev, MYRI_IRQ_EVENT), mp);
err_vec:
	pci_free_irq_vectors(pdev);
	return err;
}

static void myri_irqs_free(struct dp_myri *mp)
{
	free_irq(pci_irq_vector(mp->pdev, MYRI_IRQ_CTL), mp);
	free_irq(pci_irq_vector(mp->pdev, MYRI_IRQ_EVENT), mp);
	pci_free_irq_vectors(mp->pdev);
}

static int myri_name(struct dp_myri *mp)
{
	mutex_lock(&dp_myri_lock);
	mp->idx = ida_alloc(&dp_myri_ida, GFP_KERNEL);
	if (mp->idx < 0) {
		mutex_unlock(&dp_myri_lock);
		return mp->idx;
	}
	snprintf(mp->name, sizeof(mp->name), "myri%d", mp->idx);
	list_add_tail(&mp->list, &dp_myri_devs);
	mutex_unlock(&dp_myri_lock);
	return 0;
}

static int myri_map(struct dp_myri *mp)
{
	struct pci_dev *pdev = mp->pdev;
	int err;

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	if (!myri_is_ours(pdev))
		return -ENODEV;	/* another ivshmem device: not ours */
	err = pcim_iomap_regions(pdev, BIT(0) | BIT(2), "dp_myri");
	if (err)
		return err;
	/* MSI-X messages are the device's memory writes: bus mastering on */
	pci_set_master(pdev);
	mp->regs = pcim_iomap_table(pdev)[0];
	mp->sram = pcim_iomap_table(pdev)[2];
	memcpy_fromio(mp->addr, mp->sram + MYRI_CTL(addr), MYRI_ADDR_LEN);
	mp->tx_buf = devm_kmalloc(&pdev->dev, MYRI_SLOT_SIZE, GFP_KERNEL);
	mp->rx_buf = devm_kmalloc(&pdev->dev, MYRI_SLOT_SIZE, GFP_KERNEL);
	return mp->tx_buf && mp->rx_buf ? 0 : -ENOMEM;
}

static int dp_myri_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct dp_myri *mp;
	int err;

	mp = devm_kzalloc(&pdev->dev, sizeof(*mp), GFP_KERNEL);
	if (!mp)
		return -ENOMEM;
	mp->pdev = pdev;
	spin_lock_init(&mp->lock);
	mutex_init(&mp->tx_mutex);
	init_waitqueue_head(&mp->tx_wq);
	init_waitqueue_head(&mp->ctl_wq);
	init_waitqueue_head(&mp->scout_wq);
	INIT_DELAYED_WORK(&mp->watchdog, dp_myri_watchdog);
	INIT_WORK(&mp->answer_work, dp_myri_answer_work);
	err = myri_map(mp);
	if (err)
		return err;
	pci_set_drvdata(pdev, mp);
	/* quiet before the interrupts are requested */
	myri_wr(mp, MYRI_CTL(irq_armed), 0);
	myri_wr(mp, MYRI_CTL(host_state), MYRI_HOST_RESET);
	myri_ring(mp, MYRI_DB_CTL);
	err = myri_irqs(mp);
	if (err)
		return err;
	err = myri_name(mp);
	if (err) {
		myri_irqs_free(mp);
		return err;
	}
	dp_myri_eth_probe(mp);	/* without it the card still serves dp */
	mutex_lock(&dp_myri_lock);
	dp_myri_eth_carrier(mp, mp->node);
	mutex_unlock(&dp_myri_lock);
	mp->dbg = debugfs_create_dir(mp->name, dp_backend_debugfs());
	debugfs_create_file_unsafe("rx_stall", 0600, mp->dbg, mp,
				   &dp_myri_rx_stall_fops);
	dev_info(&pdev->dev, "%s: LANai (simulated), NIC address %pM, MTU %u\n",
		 mp->name, mp->addr, MYRI_MTU);
	return 0;
}

static void dp_myri_remove(struct pci_dev *pdev)
{
	struct dp_myri *mp = pci_get_drvdata(pdev);
	struct dp_node *node;
	struct net *net = NULL;

	mutex_lock(&dp_myri_lock);
	mp->gone = true;
	list_del(&mp->list);
	node = mp->node;
	if (node)
		net = maybe_get_net(node->net);
	mutex_unlock(&dp_myri_lock);
	wake_up(&mp->tx_wq);
	/* the netdev first: its frames in flight fail with ENETDOWN */
	dp_myri_eth_remove(mp);
	if (net) {
		dp_node_detach_hw(node, mp);
		put_net(net);
	}
	/* a namespace on its way out detaches on its own: wait for it */
	wait_var_event(&mp->node, !READ_ONCE(mp->node));
	cancel_work_sync(&mp->answer_work);

	debugfs_remove(mp->dbg);	/* waits for knob writers in flight */
	myri_wr(mp, MYRI_CTL(irq_armed), 0);
	myri_wr(mp, MYRI_CTL(host_state), MYRI_HOST_RESET);
	myri_ring(mp, MYRI_DB_CTL);
	myri_irqs_free(mp);
	ida_free(&dp_myri_ida, mp->idx);
	dev_info(&pdev->dev, "%s: released\n", mp->name);
}

/* no MODULE_DEVICE_TABLE: dp must not be autoloaded for every ivshmem */
static const struct pci_device_id dp_myri_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};

static struct pci_driver dp_myri_driver = {
	.name = "dp_myri",
	.id_table = dp_myri_ids,
	.probe = dp_myri_probe,
	.remove = dp_myri_remove,
	.dev_groups = dp_myri_groups,
};

static const struct dp_backend dp_myri_backend = {
	.name = "myri",
	.machine_wide = true,
	.check = dp_myri_check,
	.attach = dp_myri_attach,
	.detach = dp_myri_detach,
	.xmit = dp_myri_xmit,
	.mtu = dp_myri_mtu,
	.lladdr = dp_myri_lladdr,
	.scout = dp_myri_scout,
};

/* Cards nobody else has bound are taken (if they are the simulator's). */
int dp_myri_init(void)
{
	int err = pci_register_driver(&dp_myri_driver);

	if (err)
		return err;
	err = dp_backend_register(&dp_myri_backend);
	if (err)
		pci_unregister_driver(&dp_myri_driver);
	return err;
}

/* No new attachment, then every device let go (its node detached). */
void dp_myri_exit(void)
{
	dp_backend_unregister(&dp_myri_backend);
	pci_unregister_driver(&dp_myri_driver);
}
