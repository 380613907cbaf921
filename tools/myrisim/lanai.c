// SPDX-License-Identifier: GPL-2.0
/*
 * The LANai of one host, as the MCP running on it would behave: it reads
 * the host's send descriptors from SRAM, stamps its own address as the
 * packet's source (the host cannot send as another NIC), appends the CRC
 * and puts each
 * packet on the fabric (one at a time: STOP holds the next one back); it
 * takes packets off the fabric into the RX slots the host posted, checks
 * their CRC and posts an event; it raises an interrupt when the host armed
 * one.  The SRAM is shared with the host (another process, or a unit
 * test), so every field the host writes is read once and checked.
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include "myrisim.h"

#define CTL(n)	((struct myri_ctl *)(n)->sram)

static uint32_t rd(const __le32 *p)
{
	return le32toh(__atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE));
}

static void wr(__le32 *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, htole32(v), __ATOMIC_RELEASE);
}

static void inc64(__le64 *p)
{
	*p = htole64(le64toh(*p) + 1);
}

void lanai_init(struct lanai *n, uint8_t *sram, int host, struct fabric *f,
		lanai_irq_fn irq, void *ctx)
{
	struct myri_ctl *c = (struct myri_ctl *)sram;

	memset(n, 0, sizeof(*n));
	n->sram = sram;
	n->host = host;
	n->fab = f;
	n->irq = irq;
	n->ctx = ctx;
	memset(sram, 0, MYRI_SRAM_USED);
	memcpy(c->sig, MYRI_SIGNATURE, MYRI_SIG_LEN);
	c->version = htole32(MYRI_VERSION);
	c->sram_size = htole32(MYRI_SRAM_SIZE);
	c->mtu = htole32(MYRI_MTU);
	c->route_max = htole32(MYRI_ROUTE_MAX);
	c->sendq_off = htole32(MYRI_SENDQ_OFF);
	c->sendq_len = htole32(MYRI_SENDQ_LEN);
	c->recvq_off = htole32(MYRI_RECVQ_OFF);
	c->recvq_len = htole32(MYRI_RECVQ_LEN);
	c->eventq_off = htole32(MYRI_EVENTQ_OFF);
	c->eventq_len = htole32(MYRI_EVENTQ_LEN);
	c->txbuf_off = htole32(MYRI_TXBUF_OFF);
	c->rxbuf_off = htole32(MYRI_RXBUF_OFF);
	c->slot_size = htole32(MYRI_SLOT_SIZE);
	/* Myricom's OUI, then the host's number */
	n->addr[1] = 0x60;
	n->addr[2] = 0xdd;
	n->addr[5] = (uint8_t)host;
	memcpy(c->addr, n->addr, sizeof(c->addr));
	n->link = (uint32_t)fab_link_up(f, host);
	c->link = htole32(n->link);
	n->state = MYRI_NIC_READY;
	wr(&c->nic_state, n->state);
}

static void irq(struct lanai *n, int vec)
{
	if (n->irq)
		n->irq(n->ctx, n->host, vec);
}

/*
 * An armed host gets one interrupt, then must arm again.  The host arms,
 * then (a full barrier) looks at the indices once more; so the index the
 * caller just published must be visible before irq_armed is read: a
 * release store followed by a load may pass it (x86's store buffer), and
 * the host would see neither the index nor the interrupt, a lost wakeup
 * (an event left in the queue until the next one).  The exchange is the
 * full barrier and tests and clears irq_armed in one step.
 */
static void kick(struct lanai *n)
{
	struct myri_ctl *c = CTL(n);

	if (__atomic_exchange_n((uint32_t *)&c->irq_armed, 0, __ATOMIC_SEQ_CST))
		irq(n, MYRI_IRQ_EVENT);
}

static int event_room(struct lanai *n)
{
	return n->eventq_prod - rd(&CTL(n)->eventq_cons) < MYRI_EVENTQ_LEN;
}

static void post_event(struct lanai *n, uint32_t type, uint32_t slot,
		       uint32_t len, uint32_t status)
{
	struct myri_event *e = (struct myri_event *)(n->sram + MYRI_EVENTQ_OFF);

	e += n->eventq_prod % MYRI_EVENTQ_LEN;
	e->type = htole32(type);
	e->slot = htole32(slot);
	e->len = htole32(len);
	e->status = htole32(status);
	wr(&CTL(n)->eventq_prod, ++n->eventq_prod);
	kick(n);
}

/* Zero the NIC's side: indices, counters; the host zeroes its own. */
static void reset(struct lanai *n)
{
	struct myri_ctl *c = CTL(n);

	n->sendq_cons = n->recvq_cons = n->eventq_prod = 0;
	n->stopping = 0;
	memset(&c->sendq_cons, 0,
	       sizeof(*c) - offsetof(struct myri_ctl, sendq_cons));
	n->state = MYRI_NIC_READY;
	wr(&c->nic_state, n->state);
	irq(n, MYRI_IRQ_CTL);
}

static void follow_host(struct lanai *n)
{
	uint32_t hs = rd(&CTL(n)->host_state);

	if (hs == MYRI_HOST_RESET && n->state == MYRI_NIC_RUN) {
		reset(n);
	} else if (hs == MYRI_HOST_RUN && n->state == MYRI_NIC_READY) {
		n->state = MYRI_NIC_RUN;
		wr(&CTL(n)->nic_state, n->state);
		irq(n, MYRI_IRQ_CTL);
	}
}

static void follow_link(struct lanai *n)
{
	uint32_t up = (uint32_t)fab_link_up(n->fab, n->host);

	if (up == n->link)
		return;
	n->link = up;
	wr(&CTL(n)->link, up);
	if (n->state == MYRI_NIC_RUN && event_room(n))
		post_event(n, MYRI_EV_LINK, 0, 0, up);
	irq(n, MYRI_IRQ_CTL);
}

/* Length of the route at the start of @p, or -1 if it is not 1..MAX. */
static int route_len(const uint8_t *p, size_t len)
{
	size_t r = 0;

	while (r < len && (p[r] & MYRI_ROUTE_BIT))
		r++;
	return r >= 1 && r <= MYRI_ROUTE_MAX ? (int)r : -1;
}

/* One descriptor: check it, append the CRC, hand it to the fabric. */
static void send_one(struct lanai *n, uint64_t now)
{
	struct myri_ctl *c = CTL(n);
	uint32_t i = n->sendq_cons % MYRI_SENDQ_LEN;
	const struct myri_send_desc *d =
		(const struct myri_send_desc *)(n->sram + MYRI_SENDQ_OFF) + i;
	const uint8_t *slot = n->sram + MYRI_TXBUF_OFF + (size_t)i * MYRI_SLOT_SIZE;
	uint8_t pkt[FAB_PKT_MAX];
	uint32_t len = rd(&d->len);
	int r;

	if (len > FAB_PKT_MAX - MYRI_CRC_LEN || len > MYRI_SLOT_SIZE) {
		inc64(&c->tx_bad);
	} else {
		memcpy(pkt, slot, len);		/* one read of the host's bytes */
		r = route_len(pkt, len);
		if (r < 0 || len < (uint32_t)r + MYRI_HDR_LEN ||
		    len - (uint32_t)r - MYRI_HDR_LEN > MYRI_MTU) {
			inc64(&c->tx_bad);
		} else {
			memcpy(pkt + r + MYRI_TYPE_LEN, n->addr, MYRI_SRC_LEN);
			pkt[len] = myri_crc8(pkt, len);
			if (!n->link)
				inc64(&c->tx_link_down);
			fab_send(n->fab, n->host, pkt, len + MYRI_CRC_LEN, now);
			inc64(&c->tx_packets);
		}
	}
	wr(&c->sendq_cons, ++n->sendq_cons);
}

static void send_all(struct lanai *n, uint64_t now)
{
	uint32_t prod = rd(&CTL(n)->sendq_prod), sent = 0;

	if (prod - n->sendq_cons > MYRI_SENDQ_LEN)
		return;		/* the host's index is wild: wait for a reset */
	while (n->sendq_cons != prod && fab_tx_idle(n->fab, n->host)) {
		send_one(n, now);
		sent++;
	}
	if (sent)
		kick(n);
}

void lanai_poll(struct lanai *n, uint64_t now)
{
	follow_host(n);
	follow_link(n);
	if (n->state == MYRI_NIC_RUN)
		send_all(n, now);
}

/* ---- receive, called by the fabric ---- */

static int free_slot(struct lanai *n)
{
	uint32_t prod = rd(&CTL(n)->recvq_prod);

	return prod != n->recvq_cons && prod - n->recvq_cons <= MYRI_RECVQ_LEN;
}

static int accept(void *ctx, int host, size_t len)
{
	struct lanai *n = (struct lanai *)ctx + host;

	(void)len;
	if (n->state != MYRI_NIC_RUN)
		return 1;	/* taken and dropped: see deliver() */
	if (free_slot(n) && event_room(n)) {
		n->stopping = 0;
		return 1;
	}
	if (!n->stopping)
		inc64(&CTL(n)->rx_stops);
	n->stopping = 1;
	return 0;
}

/* The checks of the NIC: 0, or the counter the packet is dropped under. */
static __le64 *rx_check(struct lanai *n, const uint8_t *pkt, size_t len)
{
	struct myri_ctl *c = CTL(n);

	if (n->state != MYRI_NIC_RUN)
		return &c->rx_idle;
	if (len < MYRI_HDR_LEN + MYRI_CRC_LEN || len - MYRI_CRC_LEN > MYRI_SLOT_SIZE)
		return &c->rx_short;
	if (myri_crc8(pkt, len - 1) != pkt[len - 1])
		return &c->rx_crc;
	if (pkt[0] & MYRI_ROUTE_BIT)
		return &c->rx_route;
	return NULL;
}

static void deliver(void *ctx, int host, const uint8_t *pkt, size_t len)
{
	struct lanai *n = (struct lanai *)ctx + host;
	struct myri_ctl *c = CTL(n);
	const struct myri_recv_desc *d =
		(const struct myri_recv_desc *)(n->sram + MYRI_RECVQ_OFF);
	__le64 *drop = rx_check(n, pkt, len);
	uint32_t slot;

	if (!drop && (!free_slot(n) || !event_room(n)))
		drop = &c->rx_stops;	/* started after accept(): no room */
	if (drop) {
		inc64(drop);
		return;
	}
	slot = rd(&d[n->recvq_cons % MYRI_RECVQ_LEN].slot);
	wr(&c->recvq_cons, ++n->recvq_cons);
	if (slot >= MYRI_RECVQ_LEN) {
		inc64(&c->rx_badslot);
		return;
	}
	memcpy(n->sram + MYRI_RXBUF_OFF + (size_t)slot * MYRI_SLOT_SIZE, pkt,
	       len - MYRI_CRC_LEN);
	inc64(&c->rx_packets);
	post_event(n, MYRI_EV_RECV, slot, (uint32_t)(len - MYRI_CRC_LEN), 0);
}

const struct fab_host_ops lanai_host_ops = {
	.accept = accept,
	.deliver = deliver,
};
