// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the tulip SROM media table parser (module/nic/
 * dp_tulip_srom.c): ROM images laid out by hand from Digital's "21x4 Serial
 * ROM Format" for the 21140 (which QEMU does not emulate) and the 21143,
 * the malformed tables a broken or hostile ROM can hold, and random images
 * in a buffer that ends at the checksum word, so ASan catches any read the
 * parser must not make.
 */
#include <stdlib.h>
#include "unit.h"
#include "../nic/dp_tulip_srom.h"

#define LEAF	32	/* where these images put controller 0's info leaf */

static u8 rom[TUL_SROM_SIZE];
static unsigned int pos;

/* A fresh image with the leaf at LEAF: connection type, [GP control,] count. */
static void leaf(unsigned int conn, int gp_dir, unsigned int count)
{
	memset(rom, 0, sizeof(rom));
	rom[TUL_SROM_LEAF0] = LEAF;
	pos = LEAF;
	rom[pos++] = conn & 0xff;
	rom[pos++] = conn >> 8;
	if (gp_dir >= 0)
		rom[pos++] = (u8)gp_dir;
	rom[pos++] = (u8)count;
}

static void put(const u8 *b, unsigned int n)
{
	memcpy(rom + pos, b, n);
	pos += n;
}

/* compact block: media code, GP data, command (le16) */
static void compact(u8 code, u8 gp, unsigned int cmd)
{
	const u8 b[] = { code, gp, cmd & 0xff, cmd >> 8 };

	put(b, sizeof(b));
}

static struct tul_media parse(bool is_21140)
{
	struct tul_media m;

	memset(&m, 0xa5, sizeof(m));
	tul_srom_media(rom, is_21140, &m);
	return m;
}

/* The command word's bits 0, 4, 5, 6 are PS, TTM, PCS, SCR: CSR6 18, 22-24. */
static void srom_21140_compact(void)
{
	struct tul_media m;

	leaf(TUL_CONN_AUTOSENSE, 0x3f, 2);
	compact(0, 0x0a, 0x009e);	/* 10BASE-T: 0x9e & 0x71 = TTM */
	compact(3, 0x09, 0x006d);	/* 100BASE-TX: PS, PCS, SCR */
	m = parse(true);
	CHECK_EQ(m.block, 0);
	CHECK(m.have_gp, "21140 leaf has the GP control byte");
	CHECK_EQ(m.gp_dir, 0x3f);
	CHECK_EQ(m.gp_data, 0x0a);
	CHECK_EQ(m.csr6, TUL_CSR6_TTM);

	/* the connection type names 100BASE-TX (code 3): the second block */
	leaf(0x0003, 0x3f, 2);
	compact(0, 0x0a, 0x009e);
	compact(3, 0x09, 0x006d);
	m = parse(true);
	CHECK_EQ(m.block, 1);
	CHECK_EQ(m.gp_data, 0x09);
	CHECK_EQ(m.csr6, TUL_CSR6_PS | TUL_CSR6_PCS | TUL_CSR6_SCR);
}

static void srom_21140_full_duplex(void)
{
	struct tul_media m;

	leaf(0x0205, 0x1f, 3);		/* 100BASE-TX full duplex */
	compact(0, 0x01, 0x0000);
	compact(3, 0x02, 0x0001);
	compact(5, 0x03, 0x0061);
	m = parse(true);
	CHECK_EQ(m.block, 2);
	CHECK_EQ(m.gp_data, 0x03);
	CHECK_EQ(m.csr6, TUL_CSR6_FD | TUL_CSR6_PS | TUL_CSR6_PCS | TUL_CSR6_SCR);

	/* a named medium that no block has: the first block */
	leaf(0x0204, 0x1f, 2);		/* 10BASE-T FD */
	compact(3, 0x02, 0x0001);
	compact(0, 0x01, 0x0000);
	m = parse(true);
	CHECK_EQ(m.block, 0);
	CHECK_EQ(m.csr6, TUL_CSR6_PS);
}

static void srom_21140_extended(void)
{
	static const u8 ext0[] = { 0x85, TUL_MB_COMPACT, 3, 0x11, 0x01, 0x00 };
	static const u8 mii[] = { 0x88, TUL_MB_MII_21140, 0, 1, 0x05, 0, 0x78, 0x01, 0xe0 };
	struct tul_media m;

	leaf(TUL_CONN_AUTOSENSE, 0x0f, 2);
	put(mii, sizeof(mii));
	put(ext0, sizeof(ext0));
	m = parse(true);
	CHECK_EQ(m.block, 0);
	CHECK_EQ(m.csr6, TUL_CSR6_PS | TUL_CSR6_HBD);
	CHECK_EQ(m.gp_data, 0);

	leaf(0x0003, 0x0f, 2);
	put(mii, sizeof(mii));
	put(ext0, sizeof(ext0));
	m = parse(true);
	CHECK_EQ(m.block, 1);
	CHECK_EQ(m.gp_data, 0x11);
	CHECK_EQ(m.csr6, TUL_CSR6_PS);
}

/* QEMU's 21143 ROM has one MII block; the guest log shows csr6 0xc0000. */
static void srom_21143(void)
{
	static const u8 mii[] = { 0x8c, TUL_MB_MII, 0, 0, 0, 0, 0, 0x78, 0x01, 0xe0, 0x01, 0, 0 };
	static const u8 sia[] = { 0x87, TUL_MB_SIA, 0, 0x01, 0xef, 0xff, 0xff, 0x08 };
	static const u8 sym[] = { 0x88, TUL_MB_SYM, 3, 0, 0, 0, 0, 0x61, 0x00 };
	static const u8 sym_short[] = { 0x82, TUL_MB_SYM, 3 };
	struct tul_media m;

	leaf(TUL_CONN_AUTOSENSE, -1, 1);
	put(mii, sizeof(mii));
	m = parse(false);
	CHECK_EQ(m.block, 0);
	CHECK(!m.have_gp, "a 21143 leaf has no GP control byte");
	CHECK_EQ(m.csr6, 0xc0000);

	leaf(0x0003, -1, 2);
	put(sia, sizeof(sia));
	put(sym, sizeof(sym));
	m = parse(false);
	CHECK_EQ(m.block, 1);
	CHECK_EQ(m.csr6, TUL_CSR6_PS | TUL_CSR6_PCS | TUL_CSR6_SCR);

	leaf(TUL_CONN_AUTOSENSE, -1, 2);
	put(sia, sizeof(sia));
	put(sym_short, sizeof(sym_short));
	m = parse(false);
	CHECK_EQ(m.block, 0);		/* SIA: 10 Mb/s port, PS clear */
	CHECK_EQ(m.csr6, 0);
	leaf(0x0003, -1, 1);
	put(sym_short, sizeof(sym_short));
	m = parse(false);
	CHECK_EQ(m.csr6, TUL_CSR6_PS | TUL_CSR6_PCS | TUL_CSR6_SCR);
}

static void srom_malformed(void)
{
	static const u8 reset[] = { 0x83, 5, 1, 0 };
	static const u8 short_ext0[] = { 0x83, TUL_MB_COMPACT, 3, 0x11 };
	static const u8 zero_len[] = { 0x80, 0 };
	struct tul_media m;

	/* a compact block in a 21143 leaf ends the table */
	leaf(TUL_CONN_AUTOSENSE, -1, 1);
	compact(3, 0, 1);
	m = parse(false);
	CHECK_EQ(m.block, -1);
	CHECK_EQ(m.csr6, 0);

	/* leaf offsets inside the header or past the ROM */
	leaf(TUL_CONN_AUTOSENSE, 0x3f, 1);
	compact(3, 0, 1);
	rom[TUL_SROM_LEAF0] = 10;
	m = parse(true);
	CHECK(m.block == -1 && !m.have_gp && m.csr6 == 0, "leaf at 10 ignored");
	rom[TUL_SROM_LEAF0] = 0xf0;
	rom[TUL_SROM_LEAF0 + 1] = 0xff;
	m = parse(true);
	CHECK(m.block == -1 && !m.have_gp, "leaf at 0xfff0 ignored");

	/* unusable blocks are skipped, a too-short compact one too */
	leaf(TUL_CONN_AUTOSENSE, 0x3f, 3);
	put(reset, sizeof(reset));
	put(short_ext0, sizeof(short_ext0));
	compact(3, 0x44, 0x0001);
	m = parse(true);
	CHECK_EQ(m.block, 2);
	CHECK_EQ(m.gp_data, 0x44);

	/* a length byte of 0x80 (no type) stops the walk */
	leaf(TUL_CONN_AUTOSENSE, 0x3f, 2);
	put(zero_len, sizeof(zero_len));
	compact(3, 0x44, 0x0001);
	m = parse(true);
	CHECK_EQ(m.block, -1);

	/* 255 blocks claimed, the table runs into the checksum word */
	leaf(TUL_CONN_AUTOSENSE, 0x3f, 255);
	while (pos + 4 <= TUL_SROM_CSUM)
		compact(0, 1, 0);
	rom[pos - 4] = 0xff;		/* last one claims 128 bytes */
	m = parse(true);
	CHECK_EQ(m.block, 0);
}

/* Random images: nothing read at or past the checksum word, sane output. */
static void srom_random(void)
{
	uint64_t seed = 0x5eed2114;
	unsigned int i, bad = 0;

	for (i = 0; i < 200000; i++) {
		u8 *img = malloc(TUL_SROM_CSUM);	/* ASan: ends at the checksum */
		struct tul_media m;
		unsigned int j;

		for (j = 0; j < TUL_SROM_CSUM; j++)
			img[j] = (u8)unit_rand(&seed);
		img[TUL_SROM_LEAF0 + 1] = 0;
		if (i & 1)	/* half with a plausible leaf offset */
			img[TUL_SROM_LEAF0] = 30 + unit_rand(&seed) % 96;
		if (i & 2)	/* and extended blocks */
			for (j = 34; j < TUL_SROM_CSUM; j += 1 + unit_rand(&seed) % 9)
				img[j] |= TUL_MB_EXTENDED;
		tul_srom_media(img, i & 4, &m);
		if ((m.csr6 & ~TUL_CSR6_MEDIA) || m.block < -1 || m.block > 255)
			bad++;
		free(img);
	}
	CHECK_EQ(bad, 0);
}

const struct unit_test srom_tests[] = {
	{ "srom_21140_compact", srom_21140_compact },
	{ "srom_21140_full_duplex", srom_21140_full_duplex },
	{ "srom_21140_extended", srom_21140_extended },
	{ "srom_21143", srom_21143 },
	{ "srom_malformed", srom_malformed },
	{ "srom_random", srom_random },
	{ NULL, NULL },
};
