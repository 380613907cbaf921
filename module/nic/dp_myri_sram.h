/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated LANai's SRAM, as the host sees it in BAR2 of the QEMU
 * ivshmem-doorbell device that plays the card (docs/myrinet.md).  The fabric
 * simulator (tools/myrisim) writes the NIC's side, dp's driver the host's;
 * both build this header, so the layout is written once.
 *
 * Everything is little-endian.  Indices are free-running u32 counters: a
 * ring of N entries holds entry i at index i % N, is empty when prod == cons
 * and full when prod - cons == N.  Each side writes only its own fields
 * (host fields and NIC fields sit in separate 64-byte lines), publishes an
 * index after the entries it covers (release), and reads the other side's
 * index before the entries (acquire).
 */
#ifndef _DP_MYRI_SRAM_H
#define _DP_MYRI_SRAM_H

#include <linux/types.h>

/* The signature at offset 0: a driver touches no other ivshmem device. */
#define MYRI_SIGNATURE		"dp-myrisim LANai"	/* 16 bytes, no NUL */
#define MYRI_SIG_LEN		16
#define MYRI_VERSION		1

#define MYRI_SRAM_SIZE		(1u << 20)	/* the ivshmem object's size */

/*
 * Link level: route bytes, a 4-byte type, the sending NIC's address (8
 * bytes, stamped by the NIC), the payload, a CRC-8.
 */
#define MYRI_ROUTE_BIT		0x80	/* set in every route byte */
#define MYRI_ROUTE_PORT		0x3f	/* the output port, 0..63 */
#define MYRI_ROUTE_MAX		16	/* hops a packet may take */
#define MYRI_TYPE_LEN		4	/* big-endian: 16-bit type, 16-bit subtype */
#define MYRI_TYPE_ETH		0x00090000u	/* Ethernet over Myrinet */
#define MYRI_TYPE_DP		0x0d500000u	/* dp's own, chosen by dp */
#define MYRI_TYPE_SCOUT		0x0d510000u	/* dp's mapper, chosen by dp */
#define MYRI_SRC_LEN		8	/* 6-byte NIC address, 2 zero bytes */
#define MYRI_HDR_LEN		(MYRI_TYPE_LEN + MYRI_SRC_LEN)
#define MYRI_CRC_LEN		1
#define MYRI_MTU		8192	/* largest payload after type and source */

/* Rings and staging buffers */
#define MYRI_SENDQ_LEN		32	/* send descriptor i uses TX slot i */
#define MYRI_RECVQ_LEN		64	/* free RX slots the host posts */
#define MYRI_EVENTQ_LEN		128	/* >= RECVQ_LEN + a few link events */
#define MYRI_SLOT_SIZE		8448	/* route + header + MTU, rounded up */

#define MYRI_CTL_OFF		0x0000
#define MYRI_SENDQ_OFF		0x1000
#define MYRI_RECVQ_OFF		0x1400
#define MYRI_EVENTQ_OFF		0x1800
#define MYRI_TXBUF_OFF		0x2000
#define MYRI_RXBUF_OFF		(MYRI_TXBUF_OFF + MYRI_SENDQ_LEN * MYRI_SLOT_SIZE)
#define MYRI_SRAM_USED		(MYRI_RXBUF_OFF + MYRI_RECVQ_LEN * MYRI_SLOT_SIZE)

/* ivshmem doorbell vectors (host -> NIC): write peer 0's vector in BAR0 */
#define MYRI_DB_SEND		0	/* sendq_prod moved */
#define MYRI_DB_RECV		1	/* recvq_prod or eventq_cons moved */
#define MYRI_DB_CTL		2	/* host_state changed */
#define MYRI_VECTORS		3	/* ivshmem-doorbell vectors=3 */
#define MYRI_SIM_PEER		0	/* the simulator's ivshmem peer ID */

/* MSI-X vectors (NIC -> host) */
#define MYRI_IRQ_EVENT		0	/* events posted while irq_armed */
#define MYRI_IRQ_CTL		1	/* nic_state or link changed */

/* host_state */
#define MYRI_HOST_RESET		0	/* NIC stops; indices and counters zeroed */
#define MYRI_HOST_RUN		1
/* nic_state */
#define MYRI_NIC_RESET		0
#define MYRI_NIC_READY		1	/* reset done, host_state RESET seen */
#define MYRI_NIC_RUN		2	/* host_state RUN seen: queues live */

/**
 * struct myri_send_desc - one packet to send, in TX slot (index % SENDQ_LEN).
 * @len: bytes in the slot: route bytes, type, source (any 8 bytes: the
 *	NIC writes its own address over them), payload.  The NIC appends the
 *	CRC and sends; a bad descriptor (too long, no route, route over
 *	MYRI_ROUTE_MAX, no room for the header) is counted in tx_bad and
 *	skipped.
 * @cookie: the host's, unused by the NIC.
 */
struct myri_send_desc {
	__le32 len;
	__le32 cookie;
};

/** struct myri_recv_desc - a free RX slot the NIC may fill. */
struct myri_recv_desc {
	__le32 slot;		/* 0..MYRI_RECVQ_LEN-1 */
};

#define MYRI_EV_RECV		1	/* @slot holds @len bytes: type, source, payload */
#define MYRI_EV_LINK		2	/* @status: 1 up, 0 down */

/** struct myri_event - what the NIC tells the host, in order. */
struct myri_event {
	__le32 type;
	__le32 slot;
	__le32 len;
	__le32 status;
};

/**
 * struct myri_ctl - the control block at MYRI_CTL_OFF.
 * Constant after the simulator starts: @sig .. @addr.
 * Host-written: @host_state .. @eventq_cons.
 * NIC-written: @nic_state .. the counters.
 */
struct myri_ctl {
	__u8 sig[MYRI_SIG_LEN];
	__le32 version;
	__le32 sram_size;
	__le32 mtu;
	__le32 route_max;
	__le32 sendq_off, sendq_len;
	__le32 recvq_off, recvq_len;
	__le32 eventq_off, eventq_len;
	__le32 txbuf_off, rxbuf_off, slot_size;
	__u8 addr[8];		/* 48-bit NIC address, then 2 zero bytes */
	__u8 pad0[128 - 76];

	/* host -> NIC, offset 128 */
	__le32 host_state;
	__le32 irq_armed;	/* 1: raise MYRI_IRQ_EVENT at the next event */
	__le32 sendq_prod;
	__le32 recvq_prod;
	__le32 eventq_cons;
	__u8 pad1[64 - 20];

	/* NIC -> host, offset 192 */
	__le32 nic_state;
	__le32 link;		/* 1: the NIC's cable is in */
	__le32 sendq_cons;
	__le32 recvq_cons;
	__le32 eventq_prod;
	__le32 pad2;
	__le64 tx_packets;
	__le64 tx_bad;		/* bad send descriptors */
	__le64 tx_link_down;	/* sent with the cable out: lost */
	__le64 rx_packets;
	__le64 rx_crc;		/* bad CRC at the NIC: dropped */
	__le64 rx_route;	/* a route byte left at the NIC: dropped */
	__le64 rx_short;	/* shorter than a type and a CRC: dropped */
	__le64 rx_stops;	/* packets held off: no free slot or event */
	__le64 rx_idle;		/* dropped: the host had not started the NIC */
	__le64 rx_badslot;	/* a posted RX slot out of range: skipped */
};

#define MYRI_CTL_HOST_OFF	128
#define MYRI_CTL_NIC_OFF	192

#endif /* _DP_MYRI_SRAM_H */
