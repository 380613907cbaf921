// SPDX-License-Identifier: GPL-2.0
/*
 * The LANai model through its SRAM, with fake hosts that do what dp's
 * driver will do (docs/myrinet.md): reset and start the NIC, post RX slots,
 * write send descriptors, take events, arm interrupts.
 */
#define _POSIX_C_SOURCE 200809L
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrisim.h"
#include "test.h"

#define NH 2

static uint8_t *sram[NH];
static struct lanai nic[NH];
static struct fabric fab;
static int irqs[NH][MYRI_VECTORS];
static uint64_t now;
static uint32_t pkt_type = MYRI_TYPE_DP;	/* what host_send_raw() sends */

static struct myri_ctl *ctl(int h)
{
	return (struct myri_ctl *)sram[h];
}

static uint32_t get(const __le32 *p)
{
	return le32toh(__atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE));
}

static void put(__le32 *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, htole32(v), __ATOMIC_RELEASE);
}

static uint64_t ctr(const __le64 *p)
{
	return le64toh(*p);
}

static void on_irq(void *ctx, int host, int vec)
{
	(void)ctx;
	irqs[host][vec]++;
}

/* Run NICs and fabric for up to 200 us of fabric time (under the timeout). */
static void step(void)
{
	uint64_t limit = now + 200000;
	int h, i;

	for (i = 0; i < 100; i++) {
		uint64_t t;

		for (h = 0; h < NH; h++)
			lanai_poll(&nic[h], now);
		fab_advance(&fab, now);
		for (h = 0; h < NH; h++)	/* a NIC freed by the fabric sends on */
			lanai_poll(&nic[h], now);
		t = fab_next(&fab);
		if (t > limit)
			break;
		now = t > now ? t : now;
	}
}

/* Post RX slot @slot (the host's recvq_prod moves). */
static void post_slot(int h, uint32_t slot)
{
	struct myri_recv_desc *d = (struct myri_recv_desc *)(sram[h] + MYRI_RECVQ_OFF);
	uint32_t prod = get(&ctl(h)->recvq_prod);

	d[prod % MYRI_RECVQ_LEN].slot = htole32(slot);
	put(&ctl(h)->recvq_prod, prod + 1);
}

static void host_start(int h, int slots)
{
	struct myri_ctl *c = ctl(h);
	int i;

	put(&c->host_state, MYRI_HOST_RESET);
	step();
	put(&c->sendq_prod, 0);
	put(&c->recvq_prod, 0);
	put(&c->eventq_cons, 0);
	for (i = 0; i < slots; i++)
		post_slot(h, (uint32_t)i);
	put(&c->host_state, MYRI_HOST_RUN);
	step();
}

/*
 * Write a descriptor: @route (@rlen bytes), type pkt_type, a forged source
 * (0xee...: the NIC must write its own), @plen payload bytes.
 */
static void host_send_raw(int h, const uint8_t *route, int rlen, size_t plen, uint8_t seed)
{
	struct myri_ctl *c = ctl(h);
	uint32_t prod = get(&c->sendq_prod), i = prod % MYRI_SENDQ_LEN;
	uint8_t *slot = sram[h] + MYRI_TXBUF_OFF + (size_t)i * MYRI_SLOT_SIZE;
	struct myri_send_desc *d = (struct myri_send_desc *)(sram[h] + MYRI_SENDQ_OFF) + i;
	size_t n = 0, k;

	memcpy(slot, route, (size_t)rlen);
	n = (size_t)rlen;
	slot[n++] = (uint8_t)(pkt_type >> 24);
	slot[n++] = (uint8_t)(pkt_type >> 16);
	slot[n++] = (uint8_t)(pkt_type >> 8);
	slot[n++] = (uint8_t)pkt_type;
	memset(slot + n, 0xee, MYRI_SRC_LEN);
	n += MYRI_SRC_LEN;
	for (k = 0; k < plen && n < MYRI_SLOT_SIZE; k++)
		slot[n++] = (uint8_t)(seed + k * 3);
	d->len = htole32((uint32_t)(rlen + MYRI_HDR_LEN + plen));
	put(&c->sendq_prod, prod + 1);
}

static void host_send(int h, int dst, size_t plen, uint8_t seed)
{
	uint8_t r[MYRI_ROUTE_MAX];
	int n = topo_route(&fab.topo, h, dst, r);

	host_send_raw(h, r, n, plen, seed);
}

static int from_host = -1;	/* host_recv(): the source the NIC stamped */

/* Take one event; its RX bytes checked against @seed; slot posted again. */
static int host_recv(int h, uint32_t *type, size_t *len, int *good, uint8_t seed)
{
	struct myri_ctl *c = ctl(h);
	uint32_t cons = get(&c->eventq_cons), slot;
	const struct myri_event *e = (const struct myri_event *)(sram[h] + MYRI_EVENTQ_OFF);
	const uint8_t *p;
	size_t k;

	if (cons == get(&c->eventq_prod))
		return 0;
	e += cons % MYRI_EVENTQ_LEN;
	*type = le32toh(e->type);
	*len = le32toh(e->len);
	slot = le32toh(e->slot);
	*good = 1;
	if (*type == MYRI_EV_RECV) {
		p = sram[h] + MYRI_RXBUF_OFF + (size_t)slot * MYRI_SLOT_SIZE;
		*good = p[0] == (uint8_t)(pkt_type >> 24) && p[1] == (uint8_t)(pkt_type >> 16) &&
			p[2] == (uint8_t)(pkt_type >> 8) && p[3] == (uint8_t)pkt_type &&
			*len >= MYRI_HDR_LEN;
		from_host = p[4] == 0 && p[5] == 0x60 && p[6] == 0xdd && p[7] == 0 &&
			    p[8] == 0 && p[10] == 0 && p[11] == 0 ? p[9] : -1;
		for (k = MYRI_HDR_LEN; k < *len; k++)
			*good &= p[k] == (uint8_t)(seed + (k - MYRI_HDR_LEN) * 3);
		post_slot(h, slot);
	}
	put(&c->eventq_cons, cons + 1);
	return 1;
}

static void setup(void)
{
	struct fab_topo t;
	struct fab_cfg c;
	int h;

	topo_one_switch(&t);
	fab_cfg_default(&c);
	c.timeout_ns = 1000000;
	fab_init(&fab, &t, &c, &lanai_host_ops, nic);
	for (h = 0; h < NH; h++) {
		sram[h] = aligned_alloc(64, MYRI_SRAM_SIZE);
		lanai_init(&nic[h], sram[h], h, &fab, on_irq, NULL);
	}
	memset(irqs, 0, sizeof(irqs));
	now = 0;
}

static void teardown(void)
{
	int h;

	fab_free(&fab);
	for (h = 0; h < NH; h++)
		free(sram[h]);
}

static void t_geometry(void)
{
	struct myri_ctl *c = ctl(0);

	ok(!memcmp(c->sig, MYRI_SIGNATURE, MYRI_SIG_LEN) && get(&c->version) == MYRI_VERSION &&
	   get(&c->sram_size) == MYRI_SRAM_SIZE && get(&c->mtu) == MYRI_MTU,
	   "BAR2 starts with the signature, version, size and MTU");
	ok(get(&c->sendq_off) == MYRI_SENDQ_OFF && get(&c->recvq_len) == MYRI_RECVQ_LEN &&
	   get(&c->eventq_off) == MYRI_EVENTQ_OFF && get(&c->rxbuf_off) == MYRI_RXBUF_OFF &&
	   get(&c->slot_size) == MYRI_SLOT_SIZE && MYRI_SRAM_USED <= MYRI_SRAM_SIZE,
	   "the queue and buffer geometry is published and fits");
	ok(c->addr[0] == 0 && c->addr[1] == 0x60 && c->addr[2] == 0xdd && c->addr[5] == 0 &&
	   ctl(1)->addr[5] == 1, "each NIC has its own address (00:60:dd:00:00:HOST)");
	ok(get(&c->nic_state) == MYRI_NIC_READY && get(&c->link) == 1,
	   "the NIC waits in READY, link up");
}

static void t_start(void)
{
	host_start(0, MYRI_RECVQ_LEN);
	host_start(1, MYRI_RECVQ_LEN);
	ok(get(&ctl(0)->nic_state) == MYRI_NIC_RUN && get(&ctl(1)->nic_state) == MYRI_NIC_RUN &&
	   irqs[0][MYRI_IRQ_CTL] == 1, "host_state RUN: the NIC runs and says so (IRQ_CTL %d)",
	   irqs[0][MYRI_IRQ_CTL]);
}

static void t_send_recv(void)
{
	uint32_t type;
	size_t len;
	int good, got;

	put(&ctl(1)->irq_armed, 1);
	host_send(0, 1, 1000, 11);
	step();
	got = host_recv(1, &type, &len, &good, 11);
	ok(got && type == MYRI_EV_RECV && len == MYRI_HDR_LEN + 1000 && good,
	   "h0 -> h1, 1000 bytes: one RECV event, type and payload intact");
	ok(got && from_host == 0,
	   "the source is h0's address, stamped by its NIC over a forged one (%d)", from_host);
	ok(ctr(&ctl(0)->tx_packets) == 1 && ctr(&ctl(1)->rx_packets) == 1 &&
	   get(&ctl(0)->sendq_cons) == 1, "counted on both NICs, the send slot given back");
	ok(irqs[1][MYRI_IRQ_EVENT] == 1 && get(&ctl(1)->irq_armed) == 0,
	   "armed: one interrupt, then disarmed");
	host_send(0, 1, 10, 12);
	step();
	got = host_recv(1, &type, &len, &good, 12);
	ok(got && good && irqs[1][MYRI_IRQ_EVENT] == 1, "not armed: delivered without an interrupt");
	host_send(0, 1, MYRI_MTU, 13);
	step();
	got = host_recv(1, &type, &len, &good, 13);
	ok(got && good && len == MYRI_HDR_LEN + MYRI_MTU, "an MTU-sized packet (%d bytes) arrives whole",
	   MYRI_MTU);
}

/* Ethernet over Myrinet (type 0x0009) crosses the fabric as dp's type does. */
static void t_eth_type(void)
{
	static const size_t sizes[] = { 14, 60, 1514, MYRI_MTU };
	uint32_t type;
	size_t len, i;
	int good, got, all = 1;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		pkt_type = MYRI_TYPE_ETH;
		host_send(1, 0, sizes[i], (uint8_t)(40 + i));
		step();
		got = host_recv(0, &type, &len, &good, (uint8_t)(40 + i));
		all &= got && type == MYRI_EV_RECV && good && len == MYRI_HDR_LEN + sizes[i] &&
		       from_host == 1;
		pkt_type = MYRI_TYPE_DP;	/* dp's type between them, on the same queues */
		host_send(1, 0, 100, (uint8_t)(50 + i));
		step();
		got = host_recv(0, &type, &len, &good, (uint8_t)(50 + i));
		all &= got && good && len == MYRI_HDR_LEN + 100;
	}
	ok(all, "type 0x0009 (Ethernet), 14 bytes to the MTU, arrives with its type, source and "
	   "payload intact, interleaved with dp's type");
}

static void t_bad_desc(void)
{
	uint8_t route = 0x81, noroute = 0x0d;

	host_send_raw(0, &route, 1, MYRI_MTU + 1, 1);
	host_send_raw(0, &noroute, 0, 10, 1);
	step();
	ok(ctr(&ctl(0)->tx_bad) == 2 && get(&ctl(0)->sendq_cons) == get(&ctl(0)->sendq_prod),
	   "over the MTU, or no route: counted in tx_bad and skipped");
	put(&ctl(0)->sendq_prod, get(&ctl(0)->sendq_cons) + 1000);
	step();
	ok(get(&ctl(0)->sendq_cons) + 1000 == get(&ctl(0)->sendq_prod),
	   "a wild sendq_prod is not followed");
	put(&ctl(0)->sendq_prod, get(&ctl(0)->sendq_cons));
}

static void t_rx_backpressure(void)
{
	struct myri_ctl *c = ctl(1);
	uint32_t type;
	size_t len;
	int good, n = 0, i;

	/* take back every posted slot: restart h1 with 2 */
	host_start(1, 2);
	for (i = 0; i < 3; i++)
		host_send(0, 1, 100, 20);
	step();
	ok(get(&c->eventq_prod) == 2 && ctr(&c->rx_stops) == 1 && !fab_tx_idle(&fab, 0),
	   "2 slots, 3 packets: the third waits at the door (rx_stops), h0 stopped");
	while (host_recv(1, &type, &len, &good, 20))
		n += good;
	step();
	while (host_recv(1, &type, &len, &good, 20))
		n += good;
	ok(n == 3 && fab.st.truncated == 0, "slots posted again: all 3 arrive, none truncated");
}

static void t_route_left(void)
{
	uint8_t r[2] = { 0x81, 0x85 };

	host_send_raw(0, r, 2, 10, 1);
	step();
	ok(ctr(&ctl(1)->rx_route) == 1, "a route byte left at the NIC: dropped and counted");
}

static void t_crc_at_nic(void)
{
	char reply[64];
	uint32_t type;
	size_t len;
	int good;

	fab_control(&fab, "set corrupt=100", reply, sizeof(reply));
	host_send(0, 1, 100, 30);
	step();
	fab_control(&fab, "set corrupt=0", reply, sizeof(reply));
	ok(ctr(&ctl(1)->rx_crc) == 1 && !host_recv(1, &type, &len, &good, 30),
	   "a corrupted packet: bad CRC at the NIC, dropped, no event");
}

static void t_link(void)
{
	char reply[64];
	uint32_t type;
	size_t len;
	int good, got;

	fab_control(&fab, "pull s0 1", reply, sizeof(reply));
	step();
	got = host_recv(1, &type, &len, &good, 0);
	ok(get(&ctl(1)->link) == 0 && got && type == MYRI_EV_LINK && irqs[1][MYRI_IRQ_CTL] >= 1,
	   "cable out: link 0, a LINK event and IRQ_CTL");
	host_send(1, 0, 10, 1);
	step();
	ok(ctr(&ctl(1)->tx_link_down) == 1, "sending with the cable out: counted in tx_link_down");
	fab_control(&fab, "plug s0 1", reply, sizeof(reply));
	step();
	got = host_recv(1, &type, &len, &good, 0);
	ok(get(&ctl(1)->link) == 1 && got && type == MYRI_EV_LINK, "put back: link 1, a LINK event");
}

static void t_badslot_reset(void)
{
	struct myri_ctl *c = ctl(1);

	host_start(1, 0);
	post_slot(1, 999);
	host_send(0, 1, 10, 1);
	step();
	ok(ctr(&c->rx_badslot) == 1 && get(&c->eventq_prod) == 0,
	   "a posted slot out of range: skipped and counted, nothing written");
	put(&c->host_state, MYRI_HOST_RESET);
	step();
	ok(get(&c->nic_state) == MYRI_NIC_READY && get(&c->recvq_cons) == 0 &&
	   ctr(&c->rx_badslot) == 0, "host_state RESET: READY, indices and counters zeroed");
}

void lanai_tests(void)
{
	setup();
	t_geometry();
	t_start();
	t_send_recv();
	t_eth_type();
	t_bad_desc();
	t_rx_backpressure();
	t_route_left();
	t_crc_at_nic();
	t_link();
	t_badslot_reset();
	teardown();
}
