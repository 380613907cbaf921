// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C for the wire checksum: the CPU's crc32 instruction where there is
 * one (x86-64 with SSE4.2), else the kernel's table version, __crc32c_le()
 * (built into vmlinux, so dp.ko needs no crc32c module to be loaded first).
 *
 * Where both exist, dp_crc32c_select() times them once at load and keeps
 * the faster, as the kernel's xor and raid6 code pick their routines.  On
 * hardware and under QEMU's -icount (where time is instructions) that is
 * the instruction; under QEMU's TCG in real time it is the table: TCG
 * emulates crc32 a bit at a time, and a profile of dp's bandwidth between
 * two such guests had the CRC at 12% of each side's samples.
 */
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif

#include "dp_agnostic.h"

static bool dp_crc_insn __read_mostly;

u32 dp_crc32c(u32 crc, const u8 *p, size_t len)
{
#ifdef CONFIG_X86_64
	if (dp_crc_insn)
		return dp_crc32c_sse42(crc, p, len);
#endif
	return __crc32c_le(crc, p, len);
}

#ifdef CONFIG_X86_64
#define DP_CRC_BUF	4096
#define DP_CRC_ROUNDS	8

/* The best of a few rounds over @buf, in ns: by the instruction or not. */
static u64 dp_crc_time(const u8 *buf, bool insn)
{
	u64 best = U64_MAX, t;
	u32 crc = 0;
	int i;

	for (i = 0; i < DP_CRC_ROUNDS; i++) {
		t = ktime_get_ns();
		crc ^= insn ? dp_crc32c_sse42(crc, buf, DP_CRC_BUF) :
			      __crc32c_le(crc, buf, DP_CRC_BUF);
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	barrier_data(&crc);
	return best;
}

void dp_crc32c_select(void)
{
	u64 insn_ns, table_ns;
	u8 *buf;
	int i;

	if (!boot_cpu_has(X86_FEATURE_XMM4_2))
		return;
	dp_crc_insn = true;	/* unless the table proves faster */
	buf = kmalloc(DP_CRC_BUF, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < DP_CRC_BUF; i++)
		buf[i] = (u8)(i * 7 + 3);
	insn_ns = dp_crc_time(buf, true);
	table_ns = dp_crc_time(buf, false);
	kfree(buf);
	dp_crc_insn = insn_ns <= table_ns;
	pr_info("dp: crc32c by %s (%llu ns per 4 KiB; the %s took %llu)\n",
		dp_crc_insn ? "the crc32 instruction" : "the table",
		dp_crc_insn ? insn_ns : table_ns,
		dp_crc_insn ? "table" : "instruction",
		dp_crc_insn ? table_ns : insn_ns);
}
#else
void dp_crc32c_select(void)
{
}
#endif
