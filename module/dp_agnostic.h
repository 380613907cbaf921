/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types and helpers for the kernel-agnostic parts of dp (wire codec, pool
 * ring, NART table).  In the kernel they come from kernel headers; in user
 * space (host unit tests, fuzzers) from libc, so the very same .c files are
 * compiled and tested on the host.
 */
#ifndef _DP_AGNOSTIC_H
#define _DP_AGNOSTIC_H

#ifdef __KERNEL__
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/crc32.h>
#include <asm/byteorder.h>
#else
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <endian.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef uint16_t __be16;
typedef uint32_t __be32;
#define cpu_to_be16(x) htobe16(x)
#define cpu_to_be32(x) htobe32(x)
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define __force
#ifndef BIT
#define BIT(n) (1UL << (n))
#endif
/* Fields read without the writer's lock (the pool ring's cons, queued) */
#ifndef READ_ONCE
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#endif
#endif

#include "../uapi/linux/dp.h"

/*
 * CRC32C (Castagnoli, reflected polynomial 0x82F63B78) update without the
 * initial and final inversion, like the kernel's __crc32c_le() (built into
 * vmlinux, so dp.ko needs no crc32c module).  The host copy is a plain
 * table version, checked against the standard test vector by the unit tests.
 */
#ifdef __x86_64__
/*
 * The same with SSE4.2's crc32 instruction, 8 bytes at a time: about 20x
 * fewer instructions than a table (which made the CRC dp's largest cost
 * per byte).  It works on general registers, so the kernel may use it
 * without saving FPU state, in any context.  The caller checks that the
 * CPU has SSE4.2; the unit tests compare it with the table version.
 *
 * Eight at a time per loop round: a round of one costs three
 * instructions of loop for one crc32q, and the CRC was still 8% of the
 * instructions moving 1448-byte messages (docs/perf/).
 */
#define DP_CRC_STEP(c, p, i)						\
	do {								\
		u64 v_;							\
									\
		memcpy(&v_, (p) + 8 * (i), sizeof(v_));			\
		__asm__("crc32q %1, %0" : "+r" (c) : "rm" (v_));	\
	} while (0)

static inline u32 dp_crc32c_sse42(u32 crc, const u8 *p, size_t len)
{
	u64 c = crc;
	u32 c32;

	for (; len >= 64; len -= 64, p += 64) {	/* p may be unaligned */
		DP_CRC_STEP(c, p, 0);
		DP_CRC_STEP(c, p, 1);
		DP_CRC_STEP(c, p, 2);
		DP_CRC_STEP(c, p, 3);
		DP_CRC_STEP(c, p, 4);
		DP_CRC_STEP(c, p, 5);
		DP_CRC_STEP(c, p, 6);
		DP_CRC_STEP(c, p, 7);
	}
	for (; len >= 8; len -= 8, p += 8)
		DP_CRC_STEP(c, p, 0);
	c32 = (u32)c;
	for (; len; len--, p++)
		__asm__("crc32b %1, %0" : "+r" (c32) : "rm" (*p));
	return c32;
}
#endif

/*
 * A copy by 8-byte words, four to a round: dp_memcpy() where
 * dp_copy_select() found it faster than the kernel's memcpy().  Under
 * QEMU's TCG, `rep movsb` (the kernel's memcpy() and copy_from_user() on a
 * CPU with ERMS) moves a byte per round of translated code, 7 to 8 times
 * slower than words (docs/perf/profile-realtime-write64.md).  The empty
 * asm statements keep the compiler from making the loops a memcpy() call.
 */
static inline void dp_memcpy_words(void *dst, const void *src, size_t len)
{
	const u8 *s = (const u8 *)src;
	u8 *d = (u8 *)dst, x;
	u64 a, b, c, e;

	for (; len >= 32; len -= 32, d += 32, s += 32) {
		memcpy(&a, s, 8);	/* either may be unaligned */
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + 16, 8);
		memcpy(&e, s + 24, 8);
		__asm__("" : "+r" (a), "+r" (b), "+r" (c), "+r" (e));
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(d + 16, &c, 8);
		memcpy(d + 24, &e, 8);
	}
	for (; len >= 8; len -= 8, d += 8, s += 8) {
		memcpy(&a, s, 8);
		__asm__("" : "+r" (a));
		memcpy(d, &a, 8);
	}
	for (; len; len--) {
		x = *s++;
		__asm__("" : "+r" (x));
		*d++ = x;
	}
}

#ifdef __KERNEL__
u32 dp_crc32c(u32 crc, const u8 *p, size_t len);	/* dp_wire_crc.c */
void dp_crc32c_select(void);	/* at load: the faster of the two */
/* copy_from_user() and dp_crc32c() (NULL @crc: none) in one pass: 0, -EFAULT */
int dp_crc32c_copy_from_user(u32 *crc, void *dst, const void __user *src,
			     size_t len);

/*
 * A store to a destination that may be unaligned (as put_unaligned()): the
 * word loops' stores from the user (dp_copy.c, dp_wire_crc.c).
 */
struct dp_u64_unaligned {
	u64 v;
} __packed;

/* dp_copy.c: whether copies go by words (dp_memcpy_words()): copy= */
extern bool dp_copy_words;
void dp_copy_select(void);
/* copy_from_user(), by words where that is faster: 0 or -EFAULT */
int dp_copy_from_user(void *dst, const void __user *src, size_t len);
/* copy_to_user(), the same */
int dp_copy_to_user(void __user *dst, const void *src, size_t len);

/* A message's bytes, copied the faster way (dp_copy_select()). */
static inline void dp_memcpy(void *dst, const void *src, size_t len)
{
	if (READ_ONCE(dp_copy_words))
		dp_memcpy_words(dst, src, len);
	else
		memcpy(dst, src, len);
}
#else
/* On the host, always by words: every host test runs that loop. */
static inline void dp_memcpy(void *dst, const void *src, size_t len)
{
	dp_memcpy_words(dst, src, len);
}

/* The table version: the reference the unit tests check the others with. */
static inline u32 dp_crc32c_table(u32 crc, const u8 *p, size_t len)
{
	static u32 table[256];
	size_t i;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			u32 c = (u32)i;
			int k;

			for (k = 0; k < 8; k++)
				c = (c >> 1) ^ (c & 1 ? 0x82F63B78u : 0);
			table[i] = c;
		}
	}
	for (i = 0; i < len; i++)
		crc = (crc >> 8) ^ table[(crc ^ p[i]) & 0xff];
	return crc;
}

/*
 * On the host, the kernel's choice by the CPU's flag alone: the unit tests
 * and the fuzzers seal and check every frame, and the table version was
 * 97% of the codec oracle's time (87 s of the unit tests' 212).
 */
static inline u32 dp_crc32c(u32 crc, const u8 *p, size_t len)
{
#ifdef __x86_64__
	if (__builtin_cpu_supports("sse4.2"))
		return dp_crc32c_sse42(crc, p, len);
#endif
	return dp_crc32c_table(crc, p, len);
}
#endif

#endif /* _DP_AGNOSTIC_H */
