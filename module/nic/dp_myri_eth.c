// SPDX-License-Identifier: GPL-2.0
/*
 * Ethernet over Myrinet: each card dp_myri drives is also a Linux netdev,
 * named as the card (myri0, ...), that carries Ethernet frames in Myrinet
 * packets of type MYRI_TYPE_ETH (0x0009, as Linux's myri_sbus did), through
 * the same queues as dp's own packets (docs/myrinet.md).
 *
 * - The MAC is the card's NIC address (00:60:dd:..), which the NIC stamps
 *   on every packet it sends; it cannot be changed.
 * - A Myrinet fabric is source-routed: a unicast frame goes along the route
 *   of the NART entry (of the node the card is attached to) whose NIC
 *   address is the destination MAC; a broadcast or multicast frame (ARP)
 *   goes to every NIC address in that NART.  No entry: the frame is
 *   dropped and counted (tx_dropped, eth_noroute in dp_stats).  So the
 *   carrier is on while the card is attached to a dp node.
 * - Transmit: ndo_start_xmit runs with BHs off and the card's send path
 *   sleeps (tx_mutex, waiting for a TX slot), so frames are queued (at most
 *   MYRI_ETH_TXQ, then the queue stops) and a work item sends them.
 * - Receive: from the card's event interrupt, under dp_myri.lock: a frame
 *   whose Ethernet source is not the NIC address the NIC stamped is
 *   dropped (eth_rx_spoof), others go up with eth_type_trans()/netif_rx().
 *
 * Locks: dp_myri.lock guards dp_myri.eth (the receive path's and the
 * carrier's view); the routes are read under dp_myri_lock (dp_myri.c);
 * the work item takes dp_myri.tx_mutex per packet.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "dp_myri.h"

#define MYRI_ETH_TXQ		64	/* frames queued for the work item */
#define MYRI_ETH_FANOUT		64	/* peers a broadcast frame reaches */

static_assert(MYRI_ADDR_LEN == ETH_ALEN);

struct myri_eth {
	struct dp_myri *mp;
	struct net_device *dev;
	struct sk_buff_head txq;
	struct work_struct tx_work;
	struct dp_myri_dst dst[MYRI_ETH_FANOUT];	/* the work item's */
};

/* Send one copy of @skb along @d: 0 or -errno (ENETDOWN, ENOBUFS). */
static int myri_eth_send_one(struct dp_myri *mp, const struct sk_buff *skb,
			     const struct dp_myri_dst *d)
{
	int err = dp_myri_tx_lock(mp);
	u8 *p;

	if (err)
		return err;
	p = dp_myri_tx_hdr(mp, d->route, d->rlen, MYRI_TYPE_ETH);
	if (skb_copy_bits(skb, 0, p, skb->len)) {
		mutex_unlock(&mp->tx_mutex);
		return -EFAULT;
	}
	dp_myri_tx_post(mp, p + skb->len - mp->tx_buf);
	mutex_unlock(&mp->tx_mutex);
	return 0;
}

static void myri_eth_count(struct dp_myri *mp, u64 *ctr)
{
	unsigned long flags;

	spin_lock_irqsave(&mp->lock, flags);
	(*ctr)++;
	spin_unlock_irqrestore(&mp->lock, flags);
}

/* Send @skb to the peer(s) its destination MAC names; count the outcome. */
static void myri_eth_send(struct myri_eth *eth, struct sk_buff *skb)
{
	struct dp_myri *mp = eth->mp;
	unsigned int i, n, sent = 0;
	bool cut;

	n = dp_myri_routes(mp, eth_hdr(skb)->h_dest, eth->dst,
			   MYRI_ETH_FANOUT, &cut);
	if (cut)
		myri_eth_count(mp, &mp->eth_bcast_cut);
	if (!n && !is_multicast_ether_addr(eth_hdr(skb)->h_dest))
		myri_eth_count(mp, &mp->eth_noroute);
	for (i = 0; i < n; i++)
		sent += !myri_eth_send_one(mp, skb, &eth->dst[i]);
	if (!n || sent < n) {
		DEV_STATS_INC(eth->dev, tx_dropped);
		return;
	}
	DEV_STATS_INC(eth->dev, tx_packets);
	DEV_STATS_ADD(eth->dev, tx_bytes, skb->len);
}

/* Wake a stopped queue once the work item has drained half of it. */
static void myri_eth_wake(struct myri_eth *eth)
{
	smp_mb();	/* the dequeue before the look at the queue's state */
	if (netif_queue_stopped(eth->dev) && netif_running(eth->dev) &&
	    skb_queue_len_lockless(&eth->txq) < MYRI_ETH_TXQ / 2)
		netif_wake_queue(eth->dev);
}

static void myri_eth_tx_work(struct work_struct *work)
{
	struct myri_eth *eth = container_of(work, struct myri_eth, tx_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&eth->txq))) {
		myri_eth_send(eth, skb);
		consume_skb(skb);
		myri_eth_wake(eth);
	}
}

static netdev_tx_t myri_eth_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct myri_eth *eth = netdev_priv(dev);

	if (skb->len < ETH_HLEN || skb->len > MYRI_MTU) {
		DEV_STATS_INC(dev, tx_dropped);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	skb_queue_tail(&eth->txq, skb);
	if (skb_queue_len_lockless(&eth->txq) >= MYRI_ETH_TXQ) {
		netif_stop_queue(dev);
		smp_mb__after_atomic();	/* stopped before the second look */
		if (skb_queue_len_lockless(&eth->txq) < MYRI_ETH_TXQ / 2)
			netif_wake_queue(dev);
	}
	queue_work(system_highpri_wq, &eth->tx_work);
	return NETDEV_TX_OK;
}

static int myri_eth_open(struct net_device *dev)
{
	netif_start_queue(dev);
	return 0;
}

/* Frames not sent yet are dropped and counted. */
static int myri_eth_stop(struct net_device *dev)
{
	struct myri_eth *eth = netdev_priv(dev);
	struct sk_buff *skb;

	netif_stop_queue(dev);
	cancel_work_sync(&eth->tx_work);
	while ((skb = skb_dequeue(&eth->txq))) {
		DEV_STATS_INC(dev, tx_dropped);
		kfree_skb(skb);
	}
	return 0;
}

static const struct net_device_ops myri_eth_ops = {
	.ndo_open = myri_eth_open,
	.ndo_stop = myri_eth_stop,
	.ndo_start_xmit = myri_eth_xmit,
	.ndo_validate_addr = eth_validate_addr,
};

/*
 * A type MYRI_TYPE_ETH packet in rx_buf: type, source, the Ethernet frame
 * (@len bytes in all, at most MYRI_HDR_LEN + MYRI_MTU).  From the event
 * interrupt.
 */
void dp_myri_eth_rx(struct dp_myri *mp, u32 len)
{
	const u8 *src = mp->rx_buf + MYRI_TYPE_LEN;
	const u8 *frame = mp->rx_buf + MYRI_HDR_LEN;
	struct net_device *dev = mp->eth;
	u32 flen = len - MYRI_HDR_LEN;
	struct sk_buff *skb;

	lockdep_assert_held(&mp->lock);
	if (!dev) {
		mp->rx_other++;
		return;
	}
	if (flen < ETH_HLEN) {
		DEV_STATS_INC(dev, rx_length_errors);
		DEV_STATS_INC(dev, rx_errors);
		return;
	}
	if (!ether_addr_equal(frame + ETH_ALEN, src)) {
		mp->eth_rx_spoof++;	/* a source the NIC did not stamp */
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb = netif_running(dev) ? netdev_alloc_skb_ip_align(dev, flen) : NULL;
	if (!skb) {
		DEV_STATS_INC(dev, rx_dropped);
		return;
	}
	skb_put_data(skb, frame, flen);
	skb->protocol = eth_type_trans(skb, dev);
	DEV_STATS_INC(dev, rx_packets);
	DEV_STATS_ADD(dev, rx_bytes, flen);
	netif_rx(skb);
}

/* The card was attached to a dp node (@on) or detached from it. */
void dp_myri_eth_carrier(struct dp_myri *mp, bool on)
{
	unsigned long flags;

	spin_lock_irqsave(&mp->lock, flags);
	if (mp->eth && on)
		netif_carrier_on(mp->eth);
	else if (mp->eth)
		netif_carrier_off(mp->eth);
	spin_unlock_irqrestore(&mp->lock, flags);
}

/* Register the netdev named as the card; on failure dp still has the card. */
void dp_myri_eth_probe(struct dp_myri *mp)
{
	struct net_device *dev = alloc_etherdev(sizeof(struct myri_eth));
	struct myri_eth *eth;
	unsigned long flags;
	int err;

	if (!dev) {
		dev_warn(&mp->pdev->dev, "%s: no netdev: no memory\n", mp->name);
		return;
	}
	eth = netdev_priv(dev);
	eth->mp = mp;
	eth->dev = dev;
	skb_queue_head_init(&eth->txq);
	INIT_WORK(&eth->tx_work, myri_eth_tx_work);
	strscpy(dev->name, mp->name, sizeof(dev->name));
	dev->netdev_ops = &myri_eth_ops;
	dev->features |= NETIF_F_VLAN_CHALLENGED;
	dev->mtu = MYRI_MTU - ETH_HLEN;
	dev->max_mtu = MYRI_MTU - ETH_HLEN;
	eth_hw_addr_set(dev, mp->addr);
	SET_NETDEV_DEV(dev, &mp->pdev->dev);
	netif_carrier_off(dev);
	err = register_netdev(dev);
	if (err) {
		dev_warn(&mp->pdev->dev, "%s: no netdev: %d\n", mp->name, err);
		free_netdev(dev);
		return;
	}
	spin_lock_irqsave(&mp->lock, flags);
	mp->eth = dev;
	spin_unlock_irqrestore(&mp->lock, flags);
}

/*
 * Before the card goes: received frames stop reaching the netdev, then it
 * is closed (the work item's frames in flight fail: the card is gone) and
 * unregistered.
 */
void dp_myri_eth_remove(struct dp_myri *mp)
{
	struct net_device *dev;
	unsigned long flags;

	spin_lock_irqsave(&mp->lock, flags);
	dev = mp->eth;
	mp->eth = NULL;
	spin_unlock_irqrestore(&mp->lock, flags);
	if (!dev)
		return;
	unregister_netdev(dev);
	free_netdev(dev);
}
