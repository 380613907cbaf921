// SPDX-License-Identifier: GPL-2.0
/*
 * The tulip SROM's media table, from Digital's "21x4 Serial ROM Format"
 * (versions 3 and 4).  Controller 0's info leaf starts with the selected
 * connection type (le16); a 21140 leaf then has the general-purpose port's
 * control byte (CSR12 directions); both have a block count and the blocks:
 *
 *   compact (21140 only), 4 bytes: media code, GP data, command (le16)
 *   extended: length byte (0x80 | bytes that follow it), type, data
 *     type 0  compact block in extended form (same data)
 *     type 1  21140 MII PHY             type 3  21143 MII PHY
 *     type 2  21143 SIA: media code, CSR13-15 (not programmed here)
 *     type 4  21143 SYM: media code, GP control, GP data, command (le16s)
 *
 * The command word's PS, TTM, PCS and SCR bits (0, 4, 5, 6) go to CSR6
 * bits 18, 22, 23 and 24; full-duplex media codes set CSR6 FD.  When the
 * connection type names a medium, the block with that media code is used;
 * otherwise (autosense, MII types, no match) the first block, which the
 * format orders first as the preferred one.  The ROM is untrusted input:
 * every read is bounded by the leaf and the checksum word.
 */
#include "dp_tulip_srom.h"

struct tul_block {
	int code;		/* media code, -1 for MII blocks */
	u8 gp_data;
	u32 csr6;
};

static unsigned int tul_le16(const u8 *p)
{
	return p[0] | (p[1] << 8);
}

static u32 tul_cmd_csr6(const u8 *p)
{
	return (tul_le16(p) & 0x71) << 18;
}

static u32 tul_code_fd(int code)
{
	switch (code) {
	case TUL_MEDIA_10BT_FD:
	case TUL_MEDIA_100TX_FD:
	case TUL_MEDIA_100FX_FD:
		return TUL_CSR6_FD;
	}
	return 0;
}

/* An extended block's data @b of @n bytes; false if it is too short. */
static bool tul_ext_block(unsigned int type, const u8 *b, unsigned int n,
			  struct tul_block *blk)
{
	switch (type) {
	case TUL_MB_COMPACT:
		if (n < 4)
			return false;
		blk->code = b[0] & TUL_MB_CODE;
		blk->gp_data = b[1];
		blk->csr6 = tul_cmd_csr6(b + 2);
		return true;
	case TUL_MB_MII_21140:
	case TUL_MB_MII:
		blk->csr6 = TUL_CSR6_PS | TUL_CSR6_HBD;
		return true;
	case TUL_MB_SIA:
		if (n < 1)
			return false;
		blk->code = b[0] & TUL_MB_CODE;
		return true;
	case TUL_MB_SYM:
		if (n < 1)
			return false;
		blk->code = b[0] & TUL_MB_CODE;
		/* 100 Mb/s symbol port: the command word if present */
		blk->csr6 = n >= 7 ? tul_cmd_csr6(b + 5) :
			    TUL_CSR6_PS | TUL_CSR6_PCS | TUL_CSR6_SCR;
		return true;
	}
	return false;		/* reset sequences and unknown types */
}

/*
 * Parse the block at @p (before @end) into @blk; returns its length, or 0
 * when the table ends here (truncated or malformed).  @usable says whether
 * the block names a medium this driver can select.
 */
static unsigned int tul_block(const u8 *p, const u8 *end, bool is_21140,
			      struct tul_block *blk, bool *usable)
{
	unsigned int len;

	blk->code = -1;
	blk->gp_data = 0;
	blk->csr6 = 0;
	*usable = false;
	if (p >= end)
		return 0;
	if (!(p[0] & TUL_MB_EXTENDED)) {
		/* compact blocks exist only in 21140 leaves */
		if (!is_21140 || end - p < 4)
			return 0;
		blk->code = p[0] & TUL_MB_CODE;
		blk->gp_data = p[1];
		blk->csr6 = tul_cmd_csr6(p + 2);
		*usable = true;
		return 4;
	}
	len = (p[0] & 0x7f) + 1;
	if (len < 2 || len > (unsigned int)(end - p))
		return 0;
	*usable = tul_ext_block(p[1], p + 2, len - 2, blk);
	return len;
}

/* The media code the connection type word asks for, or -1 (driver's choice). */
static int tul_conn_code(unsigned int conn)
{
	if (conn == TUL_CONN_AUTOSENSE || conn == TUL_CONN_AUTOSENSE_PU ||
	    conn == TUL_CONN_NONE)
		return -1;
	if ((conn >> 8) != 0 && (conn >> 8) != 2)
		return -1;
	return conn & TUL_MB_CODE;
}

void tul_srom_media(const u8 *srom, bool is_21140, struct tul_media *m)
{
	const u8 *end = srom + TUL_SROM_CSUM;
	unsigned int off = tul_le16(srom + TUL_SROM_LEAF0);
	unsigned int i, n, len;
	struct tul_block blk;
	const u8 *p;
	bool usable;
	int want;

	m->csr6 = 0;
	m->gp_dir = 0;
	m->gp_data = 0;
	m->have_gp = false;
	m->block = -1;
	/* the leaf lies after the header and holds at least its fixed part */
	if (off < 30 || off + (is_21140 ? 4 : 3) > TUL_SROM_CSUM)
		return;
	p = srom + off;
	want = tul_conn_code(tul_le16(p));
	p += 2;
	if (is_21140) {
		m->gp_dir = *p++;
		m->have_gp = true;
	}
	n = *p++;
	for (i = 0; i < n; i++, p += len) {
		len = tul_block(p, end, is_21140, &blk, &usable);
		if (!len)
			break;
		if (!usable || (m->block >= 0 && blk.code != want))
			continue;
		m->csr6 = blk.csr6 | tul_code_fd(blk.code);
		m->gp_data = blk.gp_data;
		m->block = i;
		if (want < 0 || blk.code == want)
			break;
	}
}
