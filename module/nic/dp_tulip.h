/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DEC 21140/21143 ("tulip") registers and descriptors, from the data
 * sheets.  CSR n sits at offset n * 8; every access is 32 bits.
 */
#ifndef _DP_TULIP_H
#define _DP_TULIP_H

#include <linux/bits.h>
#include <linux/types.h>

#include "dp_tulip_srom.h"	/* SROM layout, media CSR6 bits */

#define TUL_CSR(n)		((n) * 8)

/* CSR0: bus mode */
#define TUL_CSR0_SWR		BIT(0)		/* software reset */
#define TUL_CSR0_PBL_SHIFT	8		/* programmable burst length */
#define TUL_CSR0_CAL_SHIFT	14		/* cache alignment */
/* CSR1/CSR2: transmit/receive poll demand (any value) */
/* CSR3/CSR4: receive/transmit list base */

/* CSR5: status (write 1 to clear) and CSR7: the matching interrupt enables */
#define TUL_TI			BIT(0)		/* transmit interrupt (IC set) */
#define TUL_TPS			BIT(1)		/* transmit process stopped */
#define TUL_TU			BIT(2)		/* transmit buffer unavailable */
#define TUL_TJT			BIT(3)		/* transmit jabber timeout */
#define TUL_UNF			BIT(5)		/* transmit underflow */
#define TUL_RI			BIT(6)		/* receive interrupt */
#define TUL_RU			BIT(7)		/* receive buffer unavailable */
#define TUL_RPS			BIT(8)		/* receive process stopped */
#define TUL_RWT			BIT(9)		/* receive watchdog timeout */
#define TUL_FBE			BIT(13)		/* fatal bus error */
#define TUL_AIS			BIT(15)		/* abnormal summary */
#define TUL_NIS			BIT(16)		/* normal summary */
#define TUL_CSR5_ACK		0x0c01ffffu	/* every write-1-to-clear bit */

#define TUL_IRQ_MASK	(TUL_NIS | TUL_AIS | TUL_TI | TUL_TPS | TUL_TJT | \
			 TUL_UNF | TUL_RI | TUL_RU | TUL_RPS | TUL_RWT | TUL_FBE)
#define TUL_IRQ_RX	(TUL_RI | TUL_RU)

/* CSR6: operation mode */
#define TUL_CSR6_SR		BIT(1)		/* start receive */
#define TUL_CSR6_PR		BIT(6)		/* promiscuous */
#define TUL_CSR6_PM		BIT(7)		/* pass all multicast */
#define TUL_CSR6_ST		BIT(13)		/* start transmit */
#define TUL_CSR6_SF		BIT(21)		/* store and forward */
#define TUL_CSR6_MBO		BIT(25)		/* 21140: must be one */
#define TUL_CSR6_RA		BIT(30)		/* receive all */

/* CSR8: missed frames (read only here: see the hardware notes, trap 1) */
#define TUL_CSR8_MISSED		0xffffu

/* CSR9: serial ROM and MII management */
#define TUL_CSR9_SR_CS		BIT(0)
#define TUL_CSR9_SR_SK		BIT(1)
#define TUL_CSR9_SR_DI		BIT(2)		/* data into the ROM */
#define TUL_CSR9_SR_DO		BIT(3)		/* data out of the ROM */
#define TUL_CSR9_SR		BIT(11)		/* select the serial ROM */
#define TUL_CSR9_RD		BIT(14)
#define TUL_CSR9_MDC		BIT(16)
#define TUL_CSR9_MDO		BIT(17)
#define TUL_CSR9_MII_RD		BIT(18)
#define TUL_CSR9_MDI		BIT(19)

/* CSR12 on the 21140: general-purpose port; 0x100 writes the direction */
#define TUL_CSR12_GP_DIR	BIT(8)

/* Descriptors: 16 bytes, little endian */
struct tul_desc {
	__le32 status;
	__le32 control;
	__le32 buf1;
	__le32 buf2;
};

#define TUL_OWN			BIT(31)
/* RDES0 */
#define TUL_RX_LS		BIT(8)
#define TUL_RX_FS		BIT(9)
#define TUL_RX_ES		BIT(15)
#define TUL_RX_FL_SHIFT		16
#define TUL_RX_FL_MASK		0x3fffu
/* RDES1/TDES1 */
#define TUL_BUF1_MASK		0x7ffu
#define TUL_BUF2_SHIFT		11
#define TUL_RX_RER		BIT(25)
#define TUL_TX_TER		BIT(25)
#define TUL_TX_SET		BIT(27)
#define TUL_TX_FS		BIT(29)
#define TUL_TX_LS		BIT(30)
#define TUL_TX_IC		BIT(31)
/* TDES0 */
#define TUL_TX_ES		BIT(15)

#define TUL_SETUP_LEN		192	/* 16 perfect-filter entries of 12 bytes */

#endif /* _DP_TULIP_H */
