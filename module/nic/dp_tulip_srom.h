/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tulip serial ROM's media table (Digital's "21x4 Serial ROM Format",
 * versions 3 and 4), parsed without touching the chip, so the very same
 * code is unit-tested on the host (module/tests/test_srom.c): QEMU has no
 * 21140, and this is the only part of its media path a test can reach.
 */
#ifndef _DP_TULIP_SROM_H
#define _DP_TULIP_SROM_H

#include "../dp_agnostic.h"

/* Serial ROM layout */
#define TUL_SROM_WORDS		64
#define TUL_SROM_SIZE		(2 * TUL_SROM_WORDS)
#define TUL_SROM_MAC		20
#define TUL_SROM_LEAF0		27	/* le16: controller 0 info leaf offset */
#define TUL_SROM_CSUM		126	/* le16 over bytes 0..125 */

/* Media blocks of an info leaf */
#define TUL_MB_EXTENDED		0x80	/* first byte: extended block, length */
#define TUL_MB_CODE		0x3f	/* media code bits of a compact block */
#define TUL_MB_COMPACT		0	/* extended type 0 = compact block */
#define TUL_MB_MII_21140	1
#define TUL_MB_SIA		2
#define TUL_MB_MII		3
#define TUL_MB_SYM		4

/* Media codes (compact blocks; a connection type's low byte) */
#define TUL_MEDIA_10BT_FD	4
#define TUL_MEDIA_100TX_FD	5
#define TUL_MEDIA_100FX_FD	8

/* Connection types meaning "let the driver choose" */
#define TUL_CONN_AUTOSENSE	0x0800
#define TUL_CONN_AUTOSENSE_PU	0x8800
#define TUL_CONN_NONE		0x0900

/* CSR6 bits a media block may set */
#define TUL_CSR6_FD		BIT(9)	/* full duplex */
#define TUL_CSR6_PS		BIT(18)	/* port select: MII/SYM */
#define TUL_CSR6_HBD		BIT(19)	/* heartbeat disable */
#define TUL_CSR6_TTM		BIT(22)	/* transmit threshold mode */
#define TUL_CSR6_PCS		BIT(23)	/* PCS function */
#define TUL_CSR6_SCR		BIT(24)	/* scrambler mode */
#define TUL_CSR6_MEDIA		(TUL_CSR6_FD | TUL_CSR6_PS | TUL_CSR6_HBD | \
				 TUL_CSR6_TTM | TUL_CSR6_PCS | TUL_CSR6_SCR)

/* What the driver programs for the chosen medium. */
struct tul_media {
	u32 csr6;		/* TUL_CSR6_MEDIA bits */
	u8 gp_dir;		/* 21140: CSR12 direction (control) byte */
	u8 gp_data;		/* 21140: CSR12 data for the medium */
	bool have_gp;		/* 21140 leaf seen: write CSR12 */
	int block;		/* index of the chosen block, -1 if none */
};

void tul_srom_media(const u8 *srom, bool is_21140, struct tul_media *m);

#endif /* _DP_TULIP_SROM_H */
