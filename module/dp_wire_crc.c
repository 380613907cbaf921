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
 *
 * The module parameter crc= overrides the timing, as copy= does the
 * copies' (dp_copy.c): "table" or "insn" forces one way ("insn" only
 * where the CPU has it), "auto" (the default) times them again, and a read
 * gives the way in use.  A test runs the sender's fused copy and CRC
 * (dp_crc_copy_insn()) and the table's copy-then-CRC that way on every
 * kernel (selftests/dp/dp_ways.c).  The CRC's value is the same either
 * way, so changing it under traffic is safe.
 */
#include <linux/crc32.h>
#include <linux/instrumented.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#endif

#include "dp_agnostic.h"

static bool dp_crc_insn __read_mostly;

u32 dp_crc32c(u32 crc, const u8 *p, size_t len)
{
#ifdef CONFIG_X86_64
	if (READ_ONCE(dp_crc_insn))
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

/* Time both ways and keep the faster: the instruction on a tie. */
static void dp_crc_time_both(void)
{
	u64 insn_ns, table_ns;
	bool insn;
	u8 *buf;
	int i;

	buf = kmalloc(DP_CRC_BUF, GFP_KERNEL);
	if (!buf) {
		WRITE_ONCE(dp_crc_insn, true);
		return;
	}
	for (i = 0; i < DP_CRC_BUF; i++)
		buf[i] = (u8)(i * 7 + 3);
	insn_ns = dp_crc_time(buf, true);
	table_ns = dp_crc_time(buf, false);
	kfree(buf);
	insn = insn_ns <= table_ns;
	WRITE_ONCE(dp_crc_insn, insn);
	pr_info("dp: crc32c by %s (%llu ns per 4 KiB; the %s took %llu)\n",
		insn ? "the crc32 instruction" : "the table",
		insn ? insn_ns : table_ns, insn ? "table" : "instruction",
		insn ? table_ns : insn_ns);
}

static bool dp_crc_has_insn(void)
{
	return boot_cpu_has(X86_FEATURE_XMM4_2);
}
#else
static void dp_crc_time_both(void)
{
}

static bool dp_crc_has_insn(void)
{
	return false;
}
#endif

enum { DP_CRC_AUTO, DP_CRC_TABLE, DP_CRC_INSN };
static const char * const dp_crc_ways[] = { "auto", "table", "insn" };
static int dp_crc_way = DP_CRC_AUTO;	/* under the module's param lock */
static bool dp_crc_loaded;		/* the same */

/* Apply dp_crc_way: the timing, or the way it forces. */
static void dp_crc_apply(void)
{
	lockdep_assert_held(&THIS_MODULE->param_lock);
	if (dp_crc_way != DP_CRC_AUTO) {
		WRITE_ONCE(dp_crc_insn, dp_crc_way == DP_CRC_INSN);
		pr_info("dp: crc32c by %s (crc=%s)\n",
			dp_crc_way == DP_CRC_INSN ? "the crc32 instruction" : "the table",
			dp_crc_ways[dp_crc_way]);
	} else if (dp_crc_has_insn()) {
		dp_crc_time_both();
	} else {
		WRITE_ONCE(dp_crc_insn, false);
	}
}

/* At load, after crc= was parsed. */
void dp_crc32c_select(void)
{
	kernel_param_lock(THIS_MODULE);
	dp_crc_loaded = true;
	dp_crc_apply();
	kernel_param_unlock(THIS_MODULE);
}

/* Called with the module's param lock held (kernel/params.c). */
static int dp_crc_param_set(const char *val, const struct kernel_param *kp)
{
	int way = sysfs_match_string(dp_crc_ways, val);

	if (way < 0)
		return -EINVAL;
	if (way == DP_CRC_INSN && !dp_crc_has_insn())
		return -EOPNOTSUPP;
	dp_crc_way = way;
	if (dp_crc_loaded)	/* else dp_crc32c_select() applies it */
		dp_crc_apply();
	return 0;
}

static int dp_crc_param_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 READ_ONCE(dp_crc_insn) ? "insn" : "table");
}

static const struct kernel_param_ops dp_crc_param_ops = {
	.set = dp_crc_param_set,
	.get = dp_crc_param_get,
};
module_param_cb(crc, &dp_crc_param_ops, NULL, 0644);
MODULE_PARM_DESC(crc, "the wire CRC32C: auto (timed, the default), table or insn (SSE4.2); reads the way in use");

#ifdef CONFIG_X86_64
/* Eight bytes from the user: into the CRC @c, and stored at @d. */
#define DP_CRC_COPY_STEP(c, d, s, i, fault)				\
	do {								\
		const unsigned int i_ = (i);				\
		u64 v_;							\
									\
		unsafe_get_user(v_, (const u64 __user *)(s) + i_, fault); \
		__asm__("crc32q %1, %0" : "+r" (c) : "r" (v_));		\
		((struct dp_u64_unaligned *)(d))[i_].v = v_;		\
	} while (0)

/*
 * The copy and the CRC in one pass, by the crc32 instruction: each 8 bytes
 * loaded from the user once, run through the CRC and stored.  Nothing is
 * called while user access is open (objtool checks that).  False if the
 * user's range faulted; what was stored by then is garbage.
 */
static bool dp_crc_copy_insn(u32 *crc, u8 *d, const u8 __user *s, size_t len)
{
	u64 c = *crc;
	u32 c32;
	u8 b;

	if (!user_access_begin(s, len))
		return false;
	for (; len >= 64; len -= 64, s += 64, d += 64) {
		DP_CRC_COPY_STEP(c, d, s, 0, fault);
		DP_CRC_COPY_STEP(c, d, s, 1, fault);
		DP_CRC_COPY_STEP(c, d, s, 2, fault);
		DP_CRC_COPY_STEP(c, d, s, 3, fault);
		DP_CRC_COPY_STEP(c, d, s, 4, fault);
		DP_CRC_COPY_STEP(c, d, s, 5, fault);
		DP_CRC_COPY_STEP(c, d, s, 6, fault);
		DP_CRC_COPY_STEP(c, d, s, 7, fault);
	}
	for (; len >= 8; len -= 8, s += 8, d += 8)
		DP_CRC_COPY_STEP(c, d, s, 0, fault);
	c32 = (u32)c;
	for (; len; len--, s++, d++) {
		unsafe_get_user(b, s, fault);
		__asm__("crc32b %1, %0" : "+r" (c32) : "r" (b));
		*d = b;
	}
	user_access_end();
	*crc = c32;
	return true;
fault:
	user_access_end();
	return false;
}
#endif

/*
 * Copy @len bytes from user @src to @dst and continue CRC32C *@crc over
 * them (dp_crc32c()), fused into one pass where the crc32 instruction is
 * in use: the sender's copy of a message and its checksum's pass
 * (docs/reliability.md section 7).  Else dp_copy_from_user(), then the CRC
 * over the copy.  A NULL @crc copies alone: a message to our own node
 * carries no checksum.  The same checks as copy_from_user() (the
 * destination object's size, the sanitizers' hooks).  0 or -EFAULT (then
 * *@crc and @dst are garbage).
 */
int dp_crc32c_copy_from_user(u32 *crc, void *dst, const void __user *src,
			     size_t len)
{
	if (!crc)
		return dp_copy_from_user(dst, src, len);
	might_fault();
#ifdef CONFIG_X86_64
	if (READ_ONCE(dp_crc_insn)) {
		bool ok;

		if (!check_copy_size(dst, len, false))
			return -EFAULT;
		instrument_copy_from_user_before(dst, src, len);
		ok = dp_crc_copy_insn(crc, dst, src, len);
		instrument_copy_from_user_after(dst, src, len, ok ? 0 : len);
		return ok ? 0 : -EFAULT;
	}
#endif
	/* dp_copy_from_user() makes the checks itself: once, not twice */
	if (dp_copy_from_user(dst, src, len))
		return -EFAULT;
	*crc = dp_crc32c(*crc, dst, len);
	return 0;
}
