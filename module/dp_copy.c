// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of message bytes: the kernel's memcpy() and copy_from_user(), or
 * loops of 8-byte words (dp_memcpy_words()) where those are faster.
 *
 * dp_copy_select() times both once at load and keeps words only where
 * they take under three quarters of the kernel's time, as
 * dp_crc32c_select() picks the CRC's way and the kernel's xor and raid6
 * code pick theirs.  On hardware, where `rep movsb` is fast, we expect the
 * kernel's copy (not measured).  Under QEMU's TCG, in real time and under
 * -icount alike, it is words: TCG runs `rep movsb` a byte per
 * round of translated code, and a 1024-byte copy took 3.2 us that way in a
 * guest against 0.4 us by words.  The sender's copy from the user and the
 * bundle's copy of each message went at that speed (a sampled profile,
 * docs/perf/profile-realtime-write64.md).
 */
#include <linux/instrumented.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dp_agnostic.h"

bool dp_copy_words __read_mostly;

#define DP_COPY_LEN	1024	/* a copy timed: a message of a bundle */
#define DP_COPY_ROUNDS	8
#define DP_COPY_EACH	4	/* copies per timed round */

/* The best of a few rounds of DP_COPY_EACH copies, in ns. */
static u64 dp_copy_time(u8 *dst, const u8 *src, bool words)
{
	u64 best = U64_MAX, t;
	size_t len = DP_COPY_LEN;
	int i, k;

	/* Not a constant: the compiler would expand memcpy() inline. */
	OPTIMIZER_HIDE_VAR(len);
	for (i = 0; i < DP_COPY_ROUNDS; i++) {
		t = ktime_get_ns();
		for (k = 0; k < DP_COPY_EACH; k++) {
			if (words)
				dp_memcpy_words(dst, src, len);
			else
				memcpy(dst, src, len);
			barrier_data(dst);
		}
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	return best;
}

void dp_copy_select(void)
{
	u64 mem_ns, words_ns;
	u8 *buf;
	int i;

	buf = kmalloc(2 * DP_COPY_LEN, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < DP_COPY_LEN; i++)
		buf[i] = (u8)(i * 7 + 3);
	mem_ns = dp_copy_time(buf + DP_COPY_LEN, buf, false);
	words_ns = dp_copy_time(buf + DP_COPY_LEN, buf, true);
	kfree(buf);
	/* Only clearly faster: a tie keeps the kernel's choice. */
	dp_copy_words = words_ns * 4 < mem_ns * 3;
	pr_info("dp: message copies by %s (%llu ns per %u KiB; the %s took %llu)\n",
		dp_copy_words ? "8-byte words" : "the kernel's memcpy",
		dp_copy_words ? words_ns : mem_ns, DP_COPY_EACH,
		dp_copy_words ? "kernel's memcpy" : "words",
		dp_copy_words ? mem_ns : words_ns);
}

/* A store to a destination that may be unaligned (as put_unaligned()). */
struct dp_copy_u64 {
	u64 v;
} __packed;

/* Eight bytes from the user at @s, word @i, stored at @d's word @i. */
#define DP_COPY_STEP(d, s, i, fault)					\
	do {								\
		const unsigned int i_ = (i);				\
		u64 v_;							\
									\
		unsafe_get_user(v_, (const u64 __user *)(s) + i_, fault); \
		((struct dp_copy_u64 *)(d))[i_].v = v_;			\
	} while (0)

/*
 * The copy from the user by words.  Nothing is called while user access
 * is open (objtool checks that).  False if the user's range faulted; what
 * was stored by then is garbage.
 */
static bool dp_copy_user_words(u8 *d, const u8 __user *s, size_t len)
{
	u8 b;

	if (!user_access_begin(s, len))
		return false;
	for (; len >= 32; len -= 32, s += 32, d += 32) {
		DP_COPY_STEP(d, s, 0, fault);
		DP_COPY_STEP(d, s, 1, fault);
		DP_COPY_STEP(d, s, 2, fault);
		DP_COPY_STEP(d, s, 3, fault);
	}
	for (; len >= 8; len -= 8, s += 8, d += 8)
		DP_COPY_STEP(d, s, 0, fault);
	for (; len; len--, s++, d++) {
		unsafe_get_user(b, s, fault);
		*d = b;
	}
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

/*
 * copy_from_user() of a message's bytes, by words where dp_copy_select()
 * chose them, with the same checks (the destination object's size, the
 * sanitizers' hooks).  0 or -EFAULT (then @dst is garbage).
 */
int dp_copy_from_user(void *dst, const void __user *src, size_t len)
{
	bool ok;

	if (!dp_copy_words)
		return copy_from_user(dst, src, len) ? -EFAULT : 0;
	might_fault();
	if (!check_copy_size(dst, len, false))
		return -EFAULT;
	instrument_copy_from_user_before(dst, src, len);
	ok = dp_copy_user_words(dst, src, len);
	instrument_copy_from_user_after(dst, src, len, ok ? 0 : len);
	return ok ? 0 : -EFAULT;
}
