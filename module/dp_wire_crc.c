// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C for the wire checksum: the CPU's crc32 instruction where there is
 * one (x86-64 with SSE4.2), else the kernel's table version, __crc32c_le()
 * (built into vmlinux, so dp.ko needs no crc32c module to be loaded first).
 */
#include <linux/crc32.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif

#include "dp_agnostic.h"

u32 dp_crc32c(u32 crc, const u8 *p, size_t len)
{
#ifdef CONFIG_X86_64
	if (static_cpu_has(X86_FEATURE_XMM4_2))
		return dp_crc32c_sse42(crc, p, len);
#endif
	return __crc32c_le(crc, p, len);
}
