// SPDX-License-Identifier: GPL-2.0
/*
 * tulip backend: dp.ko is the PCI driver of the DEC 21140 (1011:0009) and
 * 21143 (1011:0019), so no Linux network stack sits between an endpoint
 * and the wire (paper §4.4).  Devices are named tulip0, tulip1, ... (lowest
 * free number at probe) and attach to a node with
 * "dpctl node set nid N dev tulip0 backend tulip".
 *
 * Transmit: the sender builds the Ethernet header and the kernel's dp
 * header in a coherent TX buffer, the descriptor's first; the message
 * goes from the session's kept copy, mapped as the descriptor's second
 * buffer, under a reference the driver lets go when it reclaims the
 * descriptor (struct dp_txref), or, short, is copied after the header.
 * Receive: the interrupt handler
 * gives every whole frame in the RX ring to the MDR; so does a reader that
 * busy polls (DP_WAIT_BUSY_POLL), from process context, under the same
 * lock with interrupts off, so each frame goes up once.  The chip is running
 * only while a node uses it; a delayed work item is the TX watchdog (the
 * chip's own timer, CSR11, is not relied on).
 *
 * Locks: dp_tulip_lock (global; device list and attachment) nests inside
 * dp_node.cfg_lock; tp->tx_mutex serialises senders and restarts;
 * tp->lock (irq-safe) guards the ring indices and the CSR6/CSR7 shadows.
 */
#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "dp.h"
#include "dp_backends.h"
#include "dp_tulip.h"

#define TUL_RX_RING	64
#define TUL_TX_RING	64
#define TUL_RX_BUF	2048	/* a whole frame: hardware notes, trap 2 */
#define TUL_TX_BUF	1536
#define TUL_MTU		1500
#define TUL_TX_TIMEOUT	(2 * HZ)
#define TUL_WATCHDOG	(HZ / 2)
/*
 * Messages of at least this many bytes are sent from the session's copy
 * where it lies; shorter ones cost less to copy.  Mapping, unmapping and
 * the reference cost about 170 instructions more than the copy's one a
 * byte (exact profiles of 64- and 256-byte streams, docs/performance.md).
 */
#define TUL_TX_COPYBREAK 192

/* A TX descriptor's second buffer: a session's kept copy, mapped. */
struct tul_txkeep {
	struct dp_txref *ref;		/* NULL: the descriptor has none */
	dma_addr_t dma;
	u32 len;
};

struct dp_tulip {
	struct dp_nic nic;		/* valid while @node is set */
	struct pci_dev *pdev;
	void __iomem *ioaddr;
	struct list_head list;		/* dp_tulip_devs, under dp_tulip_lock */
	int idx;
	char name[IFNAMSIZ];
	u8 mac[ETH_ALEN];
	bool is_21140;
	bool gone;			/* being removed: no new attachment */
	struct dp_node *node;		/* attached node, or NULL */

	/* rings: descriptors and buffers in coherent DMA memory */
	struct tul_desc *rx_ring, *tx_ring, *setup_desc;
	dma_addr_t rx_ring_dma, tx_ring_dma, setup_desc_dma;
	u8 *rx_buf, *tx_buf, *setup_buf;
	dma_addr_t rx_buf_dma, tx_buf_dma, setup_buf_dma;

	spinlock_t lock;		/* ring indices, csr6, csr7 */
	struct mutex tx_mutex;		/* one sender or restart at a time */
	unsigned int rx_cur;		/* next RX descriptor to look at */
	unsigned int tx_cur;		/* next TX descriptor to fill */
	unsigned int tx_dirty;		/* oldest TX descriptor not reclaimed */
	/*
	 * Per TX descriptor: filled by the sender at tx_cur under tx_mutex
	 * before the descriptor is published under @lock; let go under
	 * @lock once reclaimed (or dropped with the chip stopped).
	 */
	struct tul_txkeep tx_keep[TUL_TX_RING];
	unsigned long tx_progress;	/* jiffies of the last TX progress */
	u32 csr6, csr7;
	wait_queue_head_t tx_wq;
	struct delayed_work watchdog;
	bool running;			/* under @lock; READ_ONCE outside it */
	bool need_restart;
	unsigned int busy_pollers;	/* under @lock: readers on the RX ring */

	struct tul_media media;		/* from the SROM */

	/* test knobs (debugfs: dp/tulipN/) */
	struct dentry *dbg;
	bool tx_stall;			/* leave queued frames unannounced */
	bool rx_stall;			/* do not service the RX ring */

	/* statistics */
	u64 rx_frames, tx_frames, rx_errors, tx_errors, rx_ring_drops;
	u64 rx_other, restarts;
	u64 rx_busy;			/* of rx_frames: taken by busy polling */
};

static DEFINE_MUTEX(dp_tulip_lock);
static LIST_HEAD(dp_tulip_devs);
static DEFINE_IDA(dp_tulip_ida);

static unsigned int tul_le16(const u8 *p)
{
	return p[0] | (p[1] << 8);
}

static u32 tul_r(struct dp_tulip *tp, int csr)
{
	return ioread32(tp->ioaddr + TUL_CSR(csr));
}

static void tul_w(struct dp_tulip *tp, int csr, u32 v)
{
	iowrite32(v, tp->ioaddr + TUL_CSR(csr));
}

static struct dp_tulip *dp_tulip_of(const struct dp_nic *nic)
{
	return container_of(nic, struct dp_tulip, nic);
}

/* ---- Serial ROM (93C46 class, bit-banged through CSR9) ---- */

static void tul_srom_clk(struct dp_tulip *tp, u32 v)
{
	tul_w(tp, 9, v);
	udelay(1);
	tul_w(tp, 9, v | TUL_CSR9_SR_SK);
	udelay(1);
	tul_w(tp, 9, v);
	udelay(1);
}

static u16 tul_srom_read(struct dp_tulip *tp, unsigned int addr_bits,
			 unsigned int loc)
{
	const u32 sel = TUL_CSR9_SR | TUL_CSR9_RD;
	u32 cmd = (6u << addr_bits) | loc;	/* start bit, READ opcode 10 */
	u16 val = 0;
	int i;

	tul_w(tp, 9, sel);
	tul_w(tp, 9, sel | TUL_CSR9_SR_CS);
	for (i = addr_bits + 2; i >= 0; i--)
		tul_srom_clk(tp, sel | TUL_CSR9_SR_CS |
			     ((cmd >> i) & 1 ? TUL_CSR9_SR_DI : 0));
	for (i = 0; i < 16; i++) {
		tul_w(tp, 9, sel | TUL_CSR9_SR_CS | TUL_CSR9_SR_SK);
		udelay(1);
		val = (val << 1) | ((tul_r(tp, 9) & TUL_CSR9_SR_DO) ? 1 : 0);
		tul_w(tp, 9, sel | TUL_CSR9_SR_CS);
		udelay(1);
	}
	tul_w(tp, 9, sel);	/* deselect */
	return val;
}

/* Read the whole ROM; 0 if its checksum (CRC-32 of bytes 0..125) holds. */
static int tul_srom_load(struct dp_tulip *tp, u8 *srom)
{
	static const unsigned int addr_bits[] = { 6, 8 };
	unsigned int a, i;

	for (a = 0; a < ARRAY_SIZE(addr_bits); a++) {
		u16 want, got;

		for (i = 0; i < TUL_SROM_WORDS; i++) {
			u16 w = tul_srom_read(tp, addr_bits[a], i);

			srom[2 * i] = w & 0xff;
			srom[2 * i + 1] = w >> 8;
		}
		want = tul_le16(srom + TUL_SROM_CSUM);
		got = ~crc32_le(~0u, srom, TUL_SROM_CSUM) & 0xffff;
		if (want == got)
			return 0;
	}
	return -EIO;
}

/*
 * The SROM's medium: on the 21140 the general-purpose port (CSR12) drives
 * the PHY's mode pins, first the direction (control) byte with bit 8 set,
 * then the data; CSR6 gets the block's port and duplex bits.
 */
static void tul_media_apply(struct dp_tulip *tp)
{
	if (tp->is_21140 && tp->media.have_gp) {
		tul_w(tp, 12, TUL_CSR12_GP_DIR | tp->media.gp_dir);
		tul_w(tp, 12, tp->media.gp_data);
	}
	tp->csr6 &= ~TUL_CSR6_MEDIA;
	tp->csr6 |= tp->media.csr6 & TUL_CSR6_MEDIA;
	if (tp->is_21140)
		tp->csr6 |= TUL_CSR6_MBO;
}

/* ---- Chip control ---- */

/* Reset; interrupts masked and status cleared (hardware notes, trap 5). */
static void tul_reset(struct dp_tulip *tp)
{
	tul_w(tp, 7, 0);
	tul_w(tp, 6, 0);
	tul_w(tp, 0, TUL_CSR0_SWR);
	tul_r(tp, 0);
	udelay(10);
	tul_w(tp, 0, (1u << TUL_CSR0_CAL_SHIFT) | (16u << TUL_CSR0_PBL_SHIFT));
	tul_w(tp, 7, 0);
	tul_w(tp, 5, TUL_CSR5_ACK);
}

/*
 * The interrupts to enable: all, but the RX ones while the stall knob is
 * on, and the receive interrupt while readers busy poll the ring (they
 * take the frames; a full ring still interrupts).  Caller holds tp->lock.
 */
static u32 tul_csr7(const struct dp_tulip *tp)
{
	lockdep_assert_held(&tp->lock);
	if (tp->rx_stall)
		return TUL_IRQ_MASK & ~TUL_IRQ_RX;
	if (tp->busy_pollers)
		return TUL_IRQ_MASK & ~TUL_RI;
	return TUL_IRQ_MASK;
}

/* Give the RX ring to the chip, all descriptors empty. */
static void tul_rx_fill(struct dp_tulip *tp)
{
	unsigned int i;

	for (i = 0; i < TUL_RX_RING; i++) {
		struct tul_desc *d = &tp->rx_ring[i];
		dma_addr_t buf = tp->rx_buf_dma + i * TUL_RX_BUF;
		u32 ctl = (TUL_RX_BUF / 2) | ((TUL_RX_BUF / 2) << TUL_BUF2_SHIFT);

		if (i == TUL_RX_RING - 1)
			ctl |= TUL_RX_RER;
		d->control = cpu_to_le32(ctl);
		d->buf1 = cpu_to_le32(buf);
		d->buf2 = cpu_to_le32(buf + TUL_RX_BUF / 2);
		dma_wmb();
		d->status = cpu_to_le32(TUL_OWN);
	}
	tp->rx_cur = 0;
}

/*
 * Load the perfect filter (own MAC, broadcast; the rest repeat our MAC)
 * through a one-descriptor list of its own, with TX running and RX off.
 */
static int tul_setup_frame(struct dp_tulip *tp)
{
	unsigned int i, j;
	u8 *f = tp->setup_buf;

	memset(f, 0, TUL_SETUP_LEN);
	for (i = 0; i < TUL_SETUP_LEN / 12; i++) {
		const u8 *a = i == 1 ? (const u8 *)"\xff\xff\xff\xff\xff\xff" :
				       tp->mac;

		for (j = 0; j < 3; j++) {
			f[i * 12 + j * 4] = a[2 * j];
			f[i * 12 + j * 4 + 1] = a[2 * j + 1];
		}
	}
	tp->setup_desc->control = cpu_to_le32(TUL_TX_SET | TUL_TX_TER |
					      TUL_SETUP_LEN);
	tp->setup_desc->buf1 = cpu_to_le32(tp->setup_buf_dma);
	tp->setup_desc->buf2 = 0;
	dma_wmb();
	tp->setup_desc->status = cpu_to_le32(TUL_OWN);
	tul_w(tp, 4, tp->setup_desc_dma);
	tul_w(tp, 6, tp->csr6 | TUL_CSR6_ST);
	tul_w(tp, 1, 0);
	for (i = 0; i < 1000; i++) {
		if (!(le32_to_cpu(READ_ONCE(tp->setup_desc->status)) & TUL_OWN))
			break;
		udelay(10);
	}
	tul_w(tp, 6, tp->csr6);		/* stop TX again */
	if (i == 1000) {
		dev_warn(&tp->pdev->dev, "setup frame not taken\n");
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * Bring the chip up with the rings as they are: RX refilled, TX resumed at
 * the oldest queued frame, so a restart loses nothing the senders queued.
 * Caller holds tx_mutex (or owns the device exclusively).
 */
static void tul_start(struct dp_tulip *tp)
{
	unsigned long flags;

	tul_reset(tp);
	tp->csr6 = TUL_CSR6_SF;		/* promiscuous and pass-all off */
	tul_media_apply(tp);
	tul_w(tp, 6, tp->csr6);
	tul_setup_frame(tp);
	tul_rx_fill(tp);
	tul_w(tp, 3, tp->rx_ring_dma);
	tul_w(tp, 4, tp->tx_ring_dma + tp->tx_dirty * sizeof(struct tul_desc));
	spin_lock_irqsave(&tp->lock, flags);
	tp->csr7 = tul_csr7(tp);
	tul_w(tp, 5, TUL_CSR5_ACK);
	tul_w(tp, 7, tp->csr7);
	tp->csr6 |= TUL_CSR6_SR | TUL_CSR6_ST;
	tul_w(tp, 6, tp->csr6);
	WRITE_ONCE(tp->running, true);
	tp->tx_progress = jiffies;
	spin_unlock_irqrestore(&tp->lock, flags);
	tul_w(tp, 2, 0);
	if (!READ_ONCE(tp->tx_stall))
		tul_w(tp, 1, 0);
}

static void tul_stop(struct dp_tulip *tp)
{
	unsigned long flags;

	spin_lock_irqsave(&tp->lock, flags);
	WRITE_ONCE(tp->running, false);
	tp->csr7 = 0;
	tul_w(tp, 7, 0);
	tp->csr6 &= ~(TUL_CSR6_SR | TUL_CSR6_ST);
	tul_w(tp, 6, tp->csr6);
	tul_w(tp, 5, TUL_CSR5_ACK);
	spin_unlock_irqrestore(&tp->lock, flags);
	synchronize_irq(tp->pdev->irq);
}

/* ---- Transmit ---- */

static unsigned int tul_tx_used(const struct dp_tulip *tp)
{
	return (tp->tx_cur - tp->tx_dirty + TUL_TX_RING) % TUL_TX_RING;
}

/*
 * Send the @len bytes at @msg from where they lie, as descriptor @i's
 * second buffer, under a reference on them (@keep): whether it does.
 * Caller holds tx_mutex, @i is tx_cur.
 */
static bool tul_tx_keep(struct dp_tulip *tp, unsigned int i, const void *msg,
			size_t len, struct dp_txref *keep)
{
	struct device *d = &tp->pdev->dev;
	dma_addr_t dma;

	lockdep_assert_held(&tp->tx_mutex);
	if (!keep || len < TUL_TX_COPYBREAK)
		return false;
	dma = dma_map_single(d, (void *)msg, len, DMA_TO_DEVICE);
	if (dma_mapping_error(d, dma))
		return false;	/* copied instead */
	dp_txref_get(keep);
	tp->tx_keep[i].ref = keep;
	tp->tx_keep[i].dma = dma;
	tp->tx_keep[i].len = len;
	return true;
}

/* The chip is done with descriptor @i: let its second buffer go. */
static void tul_tx_unkeep(struct dp_tulip *tp, unsigned int i)
{
	struct tul_txkeep *k = &tp->tx_keep[i];

	if (!k->ref)
		return;
	dma_unmap_single(&tp->pdev->dev, k->dma, k->len, DMA_TO_DEVICE);
	dp_txref_put(k->ref);	/* may free a copy its session let go */
	k->ref = NULL;
}

/* Reclaim descriptors the chip is done with.  Caller holds tp->lock. */
static void tul_tx_reclaim(struct dp_tulip *tp)
{
	bool progress = false;

	lockdep_assert_held(&tp->lock);
	while (tp->tx_dirty != tp->tx_cur) {
		u32 st = le32_to_cpu(READ_ONCE(tp->tx_ring[tp->tx_dirty].status));

		if (st & TUL_OWN)
			break;
		dma_rmb();
		if ((st & TUL_TX_ES) && st != 0x7fffffff)
			tp->tx_errors++;
		else
			tp->tx_frames++;
		tul_tx_unkeep(tp, tp->tx_dirty);
		tp->tx_dirty = (tp->tx_dirty + 1) % TUL_TX_RING;
		progress = true;
	}
	if (progress || tp->tx_dirty == tp->tx_cur)
		tp->tx_progress = jiffies;
	if (progress)
		wake_up(&tp->tx_wq);
}

/*
 * A new attachment starts with an empty TX ring.  Frames the chip had not
 * sent when the node detached belong to that attachment (maybe another
 * node): the chip must not find them still marked as its own, or it sends
 * them once it gets that far in the ring, after newer frames, and on real
 * hardware while the driver refills their buffers.  Nor may it hold their
 * sessions' copies: they are let go.  The chip is stopped.
 */
static void tul_tx_forget(struct dp_tulip *tp)
{
	unsigned int i;

	lockdep_assert_held(&tp->tx_mutex);
	spin_lock_irq(&tp->lock);
	tul_tx_reclaim(tp);	/* what it did send is counted */
	for (i = 0; i < TUL_TX_RING; i++) {
		tp->tx_ring[i].status = 0;
		tul_tx_unkeep(tp, i);
	}
	tp->tx_cur = 0;
	tp->tx_dirty = 0;
	spin_unlock_irq(&tp->lock);
}

static bool tul_tx_room(struct dp_tulip *tp)
{
	unsigned long flags;
	bool room;

	spin_lock_irqsave(&tp->lock, flags);
	tul_tx_reclaim(tp);
	room = tul_tx_used(tp) < TUL_TX_RING - 1;
	spin_unlock_irqrestore(&tp->lock, flags);
	return room || READ_ONCE(tp->gone);
}

static int dp_tulip_xmit(struct dp_nic *nic, const u8 *dst,
			 const struct dp_wire_hdr *hdr, const void *msg,
			 size_t len, struct dp_txref *keep,
			 struct dp_txc *done)
{
	struct dp_tulip *tp = dp_tulip_of(nic);
	size_t hlen = ETH_HLEN + sizeof(*hdr), flen = hlen + len;
	unsigned long flags;
	struct ethhdr *eth;
	unsigned int i;
	u32 ctl;
	u8 *buf;
	long w;

	if (flen > ETH_FRAME_LEN)
		return -EMSGSIZE;
	for (;;) {
		mutex_lock(&tp->tx_mutex);
		if (READ_ONCE(tp->gone) || !READ_ONCE(tp->running)) {
			mutex_unlock(&tp->tx_mutex);
			return -ENETDOWN;
		}
		if (tul_tx_room(tp))
			break;
		mutex_unlock(&tp->tx_mutex);
		/* the watchdog restarts a chip that stopped transmitting */
		w = wait_event_interruptible_timeout(tp->tx_wq, tul_tx_room(tp),
						     2 * TUL_TX_TIMEOUT);
		if (w < 0)
			return w;
		if (!w)
			return -ENOBUFS;
	}
	i = tp->tx_cur;
	buf = tp->tx_buf + i * TUL_TX_BUF;
	eth = (struct ethhdr *)buf;
	memcpy(eth->h_dest, dst, ETH_ALEN);
	memcpy(eth->h_source, tp->mac, ETH_ALEN);
	eth->h_proto = htons(DP_ETH_P);
	memcpy(buf + ETH_HLEN, hdr, sizeof(*hdr));
	/* the message's kernel copy (docs/reliability.md, section 7) */
	if (tul_tx_keep(tp, i, msg, len, keep)) {
		ctl = hlen | (len << TUL_BUF2_SHIFT);
		tp->tx_ring[i].buf2 = cpu_to_le32(tp->tx_keep[i].dma);
	} else {
		memcpy(buf + hlen, msg, len);
		ctl = flen;
		tp->tx_ring[i].buf2 = 0;
	}
	ctl |= TUL_TX_FS | TUL_TX_LS;
	if (i == TUL_TX_RING - 1)
		ctl |= TUL_TX_TER;
	spin_lock_irqsave(&tp->lock, flags);
	/* interrupt when half full, so a waiting sender is woken */
	if (tul_tx_used(tp) >= TUL_TX_RING / 2)
		ctl |= TUL_TX_IC;
	tp->tx_ring[i].control = cpu_to_le32(ctl);
	tp->tx_ring[i].buf1 = cpu_to_le32(tp->tx_buf_dma + i * TUL_TX_BUF);
	dma_wmb();
	tp->tx_ring[i].status = cpu_to_le32(TUL_OWN);
	if (tp->tx_dirty == tp->tx_cur)
		tp->tx_progress = jiffies;
	tp->tx_cur = (i + 1) % TUL_TX_RING;
	if (!READ_ONCE(tp->tx_stall))
		tul_w(tp, 1, 0);	/* transmit poll demand */
	spin_unlock_irqrestore(&tp->lock, flags);
	mutex_unlock(&tp->tx_mutex);
	return 0;
}

/* ---- Receive and interrupts ---- */

/*
 * Hand every completed frame to the MDR; returns how many dp frames went
 * up.  From the interrupt handler, a restart, or a busy-polling reader.
 */
static unsigned int tul_rx(struct dp_tulip *tp, struct dp_node *node)
{
	unsigned int n, up = 0;

	lockdep_assert_held(&tp->lock);
	/*
	 * What the chip sent before these frames came is done: reclaimed
	 * first, so that the session an ACK among them reaches finds its
	 * acknowledged copies no longer held, and reuses them.
	 */
	tul_tx_reclaim(tp);
	for (n = 0; n < TUL_RX_RING; n++) {
		struct tul_desc *d = &tp->rx_ring[tp->rx_cur];
		u32 st = le32_to_cpu(READ_ONCE(d->status));
		const u8 *f = tp->rx_buf + tp->rx_cur * TUL_RX_BUF;
		unsigned int flen;

		if (st & TUL_OWN)
			break;
		dma_rmb();
		flen = (st >> TUL_RX_FL_SHIFT) & TUL_RX_FL_MASK;
		if ((st & (TUL_RX_FS | TUL_RX_LS)) != (TUL_RX_FS | TUL_RX_LS) ||
		    (st & TUL_RX_ES) || flen < ETH_HLEN + 4 ||
		    flen > TUL_RX_BUF) {
			tp->rx_errors++;
		} else if (((f[12] << 8) | f[13]) != DP_ETH_P || !node) {
			tp->rx_other++;
		} else {
			tp->rx_frames++;
			up++;
			dp_mdr_rx(node, f + ETH_ALEN, ETH_ALEN, f + ETH_HLEN,
				  flen - 4 - ETH_HLEN);
		}
		/*
		 * Every read of the buffer (the MDR's copy) before the chip
		 * may fill it again: loads ordered before the OWN store.
		 */
		dma_mb();
		d->status = cpu_to_le32(TUL_OWN);
		tp->rx_cur = (tp->rx_cur + 1) % TUL_RX_RING;
	}
	return up;
}

/*
 * A reader starts (@d 1) or stops (@d -1) busy polling: the receive
 * interrupt is off while any does, as a device's is while NAPI polls.  A
 * chip that waits for its restart (csr7 0) keeps its interrupts off; the
 * restart counts the pollers.  A frame that came after the last poll
 * interrupts as soon as RI is enabled again.
 */
static void tul_busy_pollers(struct dp_tulip *tp, int d)
{
	spin_lock_irq(&tp->lock);
	tp->busy_pollers += d;
	if (tp->running && tp->csr7) {
		tp->csr7 = tul_csr7(tp);
		tul_w(tp, 7, tp->csr7);
	}
	spin_unlock_irq(&tp->lock);
}

/* One pass over the RX ring from process context. */
static void tul_busy_rx(struct dp_tulip *tp)
{
	spin_lock_irq(&tp->lock);
	if (tp->running && !tp->rx_stall)
		tp->rx_busy += tul_rx(tp, READ_ONCE(tp->node));
	spin_unlock_irq(&tp->lock);
}

/*
 * Busy polling: service the RX ring from the waiting reader's process
 * context until @end says stop.  tp->lock with interrupts off excludes the
 * interrupt handler, a restart's flush and the RX stall knob; a chip that
 * is not running (stopped, or its ring being refilled by tul_start()) is
 * left alone.
 */
static bool dp_tulip_busy_poll(struct dp_nic *nic, bool (*end)(void *arg),
			       void *arg)
{
	struct dp_tulip *tp = dp_tulip_of(nic);

	tul_busy_pollers(tp, 1);
	for (;;) {
		tul_busy_rx(tp);
		if (end(arg))
			break;
		cond_resched();
		cpu_relax();
	}
	tul_busy_pollers(tp, -1);
	return true;
}

static irqreturn_t dp_tulip_irq(int irq, void *data)
{
	struct dp_tulip *tp = data;
	struct dp_node *node = READ_ONCE(tp->node);
	irqreturn_t ret = IRQ_NONE;
	unsigned int round;
	u32 csr5;

	spin_lock(&tp->lock);
	for (round = 0; round < 8; round++) {
		csr5 = tul_r(tp, 5);
		if (csr5 == ~0u || !(csr5 & (TUL_NIS | TUL_AIS) & tp->csr7))
			break;
		ret = IRQ_HANDLED;
		tul_w(tp, 5, csr5 & TUL_CSR5_ACK);
		if ((csr5 & TUL_IRQ_RX) && !tp->rx_stall)
			tul_rx(tp, node);
		if (csr5 & TUL_RU) {
			/*
			 * The ring was full: frames were lost.  CSR8 counts
			 * them on real chips; QEMU only raises RU, so count at
			 * least one per event.
			 */
			u32 missed = tul_r(tp, 8) & TUL_CSR8_MISSED;
			u64 lost = max_t(u32, missed, 1);

			tp->rx_ring_drops += lost;
			if (node)
				dp_count_add(node, DP_CTR_RX_DROP_RING, lost);
			if (!tp->rx_stall)
				tul_w(tp, 2, 0);	/* resume reception */
		}
		if (csr5 & (TUL_TI | TUL_TU))
			tul_tx_reclaim(tp);
		if (csr5 & TUL_UNF)
			tul_w(tp, 1, 0);
		if (csr5 & (TUL_FBE | TUL_TPS | TUL_RPS | TUL_TJT | TUL_RWT)) {
			/* the watchdog brings the chip back up */
			tp->csr7 = 0;
			tul_w(tp, 7, 0);
			tp->need_restart = true;
			if (tp->running)
				mod_delayed_work(system_wq, &tp->watchdog, 0);
			break;
		}
	}
	spin_unlock(&tp->lock);
	return ret;
}

/*
 * TX watchdog: a chip that holds frames for TUL_TX_TIMEOUT without
 * progress, or reported a fatal error, is reset and restarted with its
 * rings as they are (queued frames are sent after the restart).
 */
static void dp_tulip_restart(struct dp_tulip *tp, const char *why)
{
	unsigned long flags;

	lockdep_assert_held(&tp->tx_mutex);
	dev_warn(&tp->pdev->dev, "%s: %s, restarting (%u frames queued)\n",
		 tp->name, why, tul_tx_used(tp));
	tul_stop(tp);
	spin_lock_irqsave(&tp->lock, flags);
	tul_rx(tp, READ_ONCE(tp->node));	/* what already arrived */
	tul_tx_reclaim(tp);
	tp->need_restart = false;
	tp->restarts++;
	spin_unlock_irqrestore(&tp->lock, flags);
	tul_start(tp);
}

static void dp_tulip_watchdog(struct work_struct *work)
{
	struct dp_tulip *tp = container_of(to_delayed_work(work),
					   struct dp_tulip, watchdog);
	unsigned long flags;
	bool stuck;

	mutex_lock(&tp->tx_mutex);
	if (!READ_ONCE(tp->running)) {
		mutex_unlock(&tp->tx_mutex);
		return;
	}
	spin_lock_irqsave(&tp->lock, flags);
	tul_tx_reclaim(tp);
	stuck = tp->tx_dirty != tp->tx_cur &&
		time_after(jiffies, tp->tx_progress + TUL_TX_TIMEOUT);
	spin_unlock_irqrestore(&tp->lock, flags);
	if (tp->need_restart)
		dp_tulip_restart(tp, "chip error");
	else if (stuck)
		dp_tulip_restart(tp, "transmit timeout");
	mutex_unlock(&tp->tx_mutex);
	schedule_delayed_work(&tp->watchdog, TUL_WATCHDOG);
}

/* ---- dp NIC ops ---- */

static unsigned int dp_tulip_mtu(const struct dp_nic *nic)
{
	return TUL_MTU;
}

static unsigned int dp_tulip_lladdr(const struct dp_nic *nic, u8 *addr)
{
	memcpy(addr, dp_tulip_of(nic)->mac, ETH_ALEN);
	return ETH_ALEN;
}

/* After the last sender: stop the chip, forget the node. */
static void dp_tulip_detach(struct dp_nic *nic)
{
	struct dp_tulip *tp = dp_tulip_of(nic);

	mutex_lock(&tp->tx_mutex);
	tul_stop(tp);
	tul_tx_forget(tp);	/* and the sessions' copies it held */
	mutex_unlock(&tp->tx_mutex);
	cancel_delayed_work_sync(&tp->watchdog);
	mutex_lock(&dp_tulip_lock);
	WRITE_ONCE(tp->node, NULL);
	mutex_unlock(&dp_tulip_lock);
	wake_up_var(&tp->node);
}

static const struct dp_backend dp_tulip_backend;

static struct dp_tulip *dp_tulip_find(const char *ifname)
{
	struct dp_tulip *tp;

	lockdep_assert_held(&dp_tulip_lock);
	list_for_each_entry(tp, &dp_tulip_devs, list)
		if (!strcmp(tp->name, ifname) && !tp->gone)
			return tp;
	return NULL;
}

/* Whether dp_tulip_attach() would find a usable device for @node. */
static int dp_tulip_check(struct dp_node *node, const char *ifname)
{
	struct dp_tulip *tp;
	int err = 0;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;	/* hardware is shared by every namespace */
	mutex_lock(&dp_tulip_lock);
	tp = dp_tulip_find(ifname);
	if (!tp)
		err = -ENODEV;
	else if (tp->node && tp->node != node)
		err = -EBUSY;
	mutex_unlock(&dp_tulip_lock);
	return err;
}

/* Called with rtnl and node->cfg_lock held (see struct dp_backend). */
static int dp_tulip_attach(struct dp_node *node, const char *ifname)
{
	struct dp_tulip *tp;
	int err = 0;

	lockdep_assert_held(&node->cfg_lock);
	mutex_lock(&dp_tulip_lock);
	tp = dp_tulip_find(ifname);
	if (!tp) {
		err = -ENODEV;
	} else if (tp->node) {
		err = -EBUSY;
	} else {
		dp_nic_init(&tp->nic, &dp_tulip_backend, node, tp, tp->name);
		WRITE_ONCE(tp->node, node);
		mutex_lock(&tp->tx_mutex);
		tul_tx_forget(tp);
		tul_start(tp);
		mutex_unlock(&tp->tx_mutex);
		schedule_delayed_work(&tp->watchdog, TUL_WATCHDOG);
	}
	mutex_unlock(&dp_tulip_lock);
	if (!err)
		dp_node_publish_nic(node, &tp->nic);
	return err;
}

/* ---- sysfs: name, statistics ---- */

static struct dp_tulip *dp_tulip_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t dp_name_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", dp_tulip_dev(dev)->name);
}
static DEVICE_ATTR_RO(dp_name);

static ssize_t dp_stats_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct dp_tulip *tp = dp_tulip_dev(dev);

	return sysfs_emit(buf,
			  "rx_frames %llu\ntx_frames %llu\nrx_errors %llu\n"
			  "tx_errors %llu\nrx_ring_drops %llu\nrx_other %llu\n"
			  "restarts %llu\nrx_busy %llu\n",
			  tp->rx_frames, tp->tx_frames, tp->rx_errors,
			  tp->tx_errors, tp->rx_ring_drops, tp->rx_other,
			  tp->restarts, tp->rx_busy);
}
static DEVICE_ATTR_RO(dp_stats);

/* ---- debugfs: test-only knobs, dp/tulipN/{tx,rx}_stall ---- */

static int dp_tulip_tx_stall_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct dp_tulip *)data)->tx_stall);
	return 0;
}

/* Queue frames without telling the chip (watchdog test). */
static int dp_tulip_tx_stall_set(void *data, u64 val)
{
	WRITE_ONCE(((struct dp_tulip *)data)->tx_stall, !!val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dp_tulip_tx_stall_fops, dp_tulip_tx_stall_get,
			 dp_tulip_tx_stall_set, "%llu\n");

static int dp_tulip_rx_stall_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct dp_tulip *)data)->rx_stall);
	return 0;
}

/* Stop servicing the RX ring (overrun test), and resume. */
static int dp_tulip_rx_stall_set(void *data, u64 val)
{
	struct dp_tulip *tp = data;
	unsigned long flags;

	spin_lock_irqsave(&tp->lock, flags);
	WRITE_ONCE(tp->rx_stall, !!val);
	if (tp->running) {
		tp->csr7 = tul_csr7(tp);
		tul_w(tp, 7, tp->csr7);		/* pending RI/RU fire now */
	}
	spin_unlock_irqrestore(&tp->lock, flags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dp_tulip_rx_stall_fops, dp_tulip_rx_stall_get,
			 dp_tulip_rx_stall_set, "%llu\n");

static void dp_tulip_debugfs_add(struct dp_tulip *tp)
{
	tp->dbg = debugfs_create_dir(tp->name, dp_backend_debugfs());
	debugfs_create_file_unsafe("tx_stall", 0600, tp->dbg, tp,
				   &dp_tulip_tx_stall_fops);
	debugfs_create_file_unsafe("rx_stall", 0600, tp->dbg, tp,
				   &dp_tulip_rx_stall_fops);
}

static struct attribute *dp_tulip_attrs[] = {
	&dev_attr_dp_name.attr,
	&dev_attr_dp_stats.attr,
	NULL
};
ATTRIBUTE_GROUPS(dp_tulip);

/* ---- PCI driver ---- */

static void dp_tulip_free_rings(struct dp_tulip *tp)
{
	struct device *d = &tp->pdev->dev;

	if (tp->rx_ring)
		dma_free_coherent(d, TUL_RX_RING * sizeof(struct tul_desc),
				  tp->rx_ring, tp->rx_ring_dma);
	if (tp->tx_ring)
		dma_free_coherent(d, TUL_TX_RING * sizeof(struct tul_desc),
				  tp->tx_ring, tp->tx_ring_dma);
	if (tp->setup_desc)
		dma_free_coherent(d, sizeof(struct tul_desc), tp->setup_desc,
				  tp->setup_desc_dma);
	if (tp->rx_buf)
		dma_free_coherent(d, TUL_RX_RING * TUL_RX_BUF, tp->rx_buf,
				  tp->rx_buf_dma);
	if (tp->tx_buf)
		dma_free_coherent(d, TUL_TX_RING * TUL_TX_BUF, tp->tx_buf,
				  tp->tx_buf_dma);
	if (tp->setup_buf)
		dma_free_coherent(d, TUL_SETUP_LEN, tp->setup_buf,
				  tp->setup_buf_dma);
}

static int dp_tulip_alloc_rings(struct dp_tulip *tp)
{
	struct device *d = &tp->pdev->dev;

	tp->rx_ring = dma_alloc_coherent(d, TUL_RX_RING * sizeof(struct tul_desc),
					 &tp->rx_ring_dma, GFP_KERNEL);
	tp->tx_ring = dma_alloc_coherent(d, TUL_TX_RING * sizeof(struct tul_desc),
					 &tp->tx_ring_dma, GFP_KERNEL);
	tp->setup_desc = dma_alloc_coherent(d, sizeof(struct tul_desc),
					    &tp->setup_desc_dma, GFP_KERNEL);
	tp->rx_buf = dma_alloc_coherent(d, TUL_RX_RING * TUL_RX_BUF,
					&tp->rx_buf_dma, GFP_KERNEL);
	tp->tx_buf = dma_alloc_coherent(d, TUL_TX_RING * TUL_TX_BUF,
					&tp->tx_buf_dma, GFP_KERNEL);
	tp->setup_buf = dma_alloc_coherent(d, TUL_SETUP_LEN,
					   &tp->setup_buf_dma, GFP_KERNEL);
	if (!tp->rx_ring || !tp->tx_ring || !tp->setup_desc || !tp->rx_buf ||
	    !tp->tx_buf || !tp->setup_buf)
		return -ENOMEM;
	return 0;
}

static int dp_tulip_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	u8 srom[TUL_SROM_WORDS * 2];
	struct dp_tulip *tp;
	int err;

	tp = devm_kzalloc(&pdev->dev, sizeof(*tp), GFP_KERNEL);
	if (!tp)
		return -ENOMEM;
	tp->pdev = pdev;
	tp->is_21140 = id->device == 0x0009;
	spin_lock_init(&tp->lock);
	mutex_init(&tp->tx_mutex);
	init_waitqueue_head(&tp->tx_wq);
	INIT_DELAYED_WORK(&tp->watchdog, dp_tulip_watchdog);

	err = pcim_enable_device(pdev);
	if (err)
		return err;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (err)
		return err;
	/* BAR1 is the memory window; BAR0 the same registers in I/O space */
	err = pcim_iomap_regions(pdev, BIT(1), "dp_tulip");
	if (!err) {
		tp->ioaddr = pcim_iomap_table(pdev)[1];
	} else {
		err = pcim_iomap_regions(pdev, BIT(0), "dp_tulip");
		if (err)
			return err;
		tp->ioaddr = pcim_iomap_table(pdev)[0];
	}
	pci_set_master(pdev);
	pci_set_drvdata(pdev, tp);

	/* quiet before the (shared) interrupt is requested: trap 5 */
	tul_reset(tp);

	if (tul_srom_load(tp, srom)) {
		dev_err(&pdev->dev, "SROM checksum mismatch\n");
		return -EIO;
	}
	memcpy(tp->mac, srom + TUL_SROM_MAC, ETH_ALEN);
	if (!is_valid_ether_addr(tp->mac)) {
		dev_err(&pdev->dev, "SROM holds no valid MAC (%pM)\n", tp->mac);
		return -EIO;
	}
	tul_srom_media(srom, tp->is_21140, &tp->media);

	err = dp_tulip_alloc_rings(tp);
	if (err)
		goto err_rings;
	err = request_irq(pdev->irq, dp_tulip_irq, IRQF_SHARED, "dp_tulip", tp);
	if (err)
		goto err_rings;

	mutex_lock(&dp_tulip_lock);
	tp->idx = ida_alloc(&dp_tulip_ida, GFP_KERNEL);
	if (tp->idx < 0) {
		err = tp->idx;
		mutex_unlock(&dp_tulip_lock);
		goto err_irq;
	}
	snprintf(tp->name, sizeof(tp->name), "tulip%d", tp->idx);
	list_add_tail(&tp->list, &dp_tulip_devs);
	mutex_unlock(&dp_tulip_lock);
	dp_tulip_debugfs_add(tp);
	dev_info(&pdev->dev, "%s: %s, MAC %pM, media csr6 %#x\n", tp->name,
		 tp->is_21140 ? "21140" : "21143", tp->mac, tp->media.csr6);
	return 0;

err_irq:
	free_irq(pdev->irq, tp);
err_rings:
	tul_reset(tp);
	dp_tulip_free_rings(tp);
	return err;
}

static void dp_tulip_remove(struct pci_dev *pdev)
{
	struct dp_tulip *tp = pci_get_drvdata(pdev);
	struct dp_node *node;
	struct net *net = NULL;

	mutex_lock(&dp_tulip_lock);
	WRITE_ONCE(tp->gone, true);
	list_del(&tp->list);
	node = tp->node;
	if (node)
		net = maybe_get_net(node->net);
	mutex_unlock(&dp_tulip_lock);
	wake_up(&tp->tx_wq);
	if (net) {
		dp_node_detach_hw(node, tp);
		put_net(net);
	}
	/* a namespace on its way out detaches on its own: wait for it */
	wait_var_event(&tp->node, !READ_ONCE(tp->node));

	debugfs_remove(tp->dbg);	/* waits for knob writers in flight */
	tul_reset(tp);		/* masked and cleared again: trap 5 */
	free_irq(pdev->irq, tp);
	dp_tulip_free_rings(tp);
	ida_free(&dp_tulip_ida, tp->idx);
	dev_info(&pdev->dev, "%s: released\n", tp->name);
}

static const struct pci_device_id dp_tulip_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_DEC, 0x0009) },	/* 21140 */
	{ PCI_DEVICE(PCI_VENDOR_ID_DEC, 0x0019) },	/* 21143 */
	{ }
};
/* no MODULE_DEVICE_TABLE: dp must not be autoloaded in tulip's place */

static struct pci_driver dp_tulip_driver = {
	.name = "dp_tulip",
	.id_table = dp_tulip_ids,
	.probe = dp_tulip_probe,
	.remove = dp_tulip_remove,
	.dev_groups = dp_tulip_groups,
};

static const struct dp_backend dp_tulip_backend = {
	.name = "tulip",
	.broadcast = true,
	.machine_wide = true,
	.check = dp_tulip_check,
	.attach = dp_tulip_attach,
	.detach = dp_tulip_detach,
	.xmit = dp_tulip_xmit,
	.mtu = dp_tulip_mtu,
	.lladdr = dp_tulip_lladdr,
	.busy_poll = dp_tulip_busy_poll,
};

/*
 * Devices nobody else has bound are taken and named now; a node attaches
 * one with "dpctl node set dev tulipN backend tulip".
 */
int dp_tulip_init(void)
{
	int err = pci_register_driver(&dp_tulip_driver);

	if (err)
		return err;
	err = dp_backend_register(&dp_tulip_backend);
	if (err)
		pci_unregister_driver(&dp_tulip_driver);
	return err;
}

/* No new attachment, then every device let go (its node detached). */
void dp_tulip_exit(void)
{
	dp_backend_unregister(&dp_tulip_backend);
	pci_unregister_driver(&dp_tulip_driver);
}
