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
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
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
#endif

#include "../uapi/linux/dp.h"

#endif /* _DP_AGNOSTIC_H */
