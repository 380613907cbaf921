// SPDX-License-Identifier: GPL-2.0
/*
 * Copies of message bytes: the kernel's memcpy(), copy_from_user() and
 * copy_to_user(), or loops of 8-byte words (dp_memcpy_words()) where those
 * are faster.
 *
 * dp_copy_select() times both once at load and keeps words only where
 * they take under three quarters of the kernel's time, as
 * dp_crc32c_select() picks the CRC's way and the kernel's xor and raid6
 * code pick theirs.  What it times is what a message's bytes go through:
 * the sender's copy from the user and a reader's read() back to it (with a
 * page of the loading process's own, as lib/test_user_copy.c does) and a
 * copy in the kernel (a bundle's, the pool's).  On hardware, where `rep
 * movsb` is fast, we expect the kernel's copy (not measured).  Under
 * QEMU's TCG, in real time and under -icount alike, it is words: TCG runs
 * `rep movsb` a byte per round of translated code, and a 1024-byte copy
 * took 3.2 us that way in a guest against 0.4 us by words.  The sender's
 * copy from the user and the bundle's copy of each message went at that
 * speed (a sampled profile, docs/perf/profile-realtime-write64.md); under
 * -icount each byte counts an instruction.  The kernel's copies need not
 * be alike: on 6.12 without FSRM memcpy() is a loop of words as fast as
 * ours while copy_from_user() and copy_to_user() are `rep movsb` (ERMS),
 * three to four times slower than words under TCG, so timing memcpy()
 * alone kept the slow copies to and from the user there.
 *
 * The module parameter copy= overrides the timing: "kernel" or "words"
 * forces one way, "auto" (the default) times them again.  It exists so
 * that a test can run both ways on any kernel (selftests/dp/dp_ways.c):
 * the KASAN kernel's timing keeps the kernel's copy, every other guest's
 * the words.  A read of it gives the way in use.  Each copy reads the
 * choice once, so changing it under traffic is safe.
 */
#include <linux/instrumented.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dp_agnostic.h"

bool dp_copy_words __read_mostly;

/* Eight bytes from the user at @s, word @i, stored at @d's word @i. */
#define DP_COPY_STEP(d, s, i, fault)					\
	do {								\
		const unsigned int i_ = (i);				\
		u64 v_;							\
									\
		unsafe_get_user(v_, (const u64 __user *)(s) + i_, fault); \
		((struct dp_u64_unaligned *)(d))[i_].v = v_;		\
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

/* Eight bytes from @s's word @i, stored at the user's @d word @i. */
#define DP_COPY_OUT_STEP(d, s, i, fault)				\
	do {								\
		const unsigned int i_ = (i);				\
		const struct dp_u64_unaligned *w_ = (const void *)(s);	\
									\
		unsafe_put_user(w_[i_].v, (u64 __user *)(d) + i_, fault); \
	} while (0)

/* The copy to the user by words, as dp_copy_user_words() from it. */
static bool dp_copy_words_to_user(u8 __user *d, const u8 *s, size_t len)
{
	if (!user_access_begin(d, len))
		return false;
	for (; len >= 32; len -= 32, s += 32, d += 32) {
		DP_COPY_OUT_STEP(d, s, 0, fault);
		DP_COPY_OUT_STEP(d, s, 1, fault);
		DP_COPY_OUT_STEP(d, s, 2, fault);
		DP_COPY_OUT_STEP(d, s, 3, fault);
	}
	for (; len >= 8; len -= 8, s += 8, d += 8)
		DP_COPY_OUT_STEP(d, s, 0, fault);
	for (; len; len--, s++, d++)
		unsafe_put_user(*s, d, fault);
	user_access_end();
	return true;
fault:
	user_access_end();
	return false;
}

#define DP_COPY_LEN	1024	/* a copy timed: a message of a bundle */
#define DP_COPY_ROUNDS	8
#define DP_COPY_EACH	4	/* messages per timed round */

/*
 * A message's copies from and to the user, as dp_copy_from_user() and
 * dp_copy_to_user() make them: 0, or 1 if @user faulted.
 */
static int dp_copy_time_user(u8 *dst, u8 __user *user, size_t len,
			     bool words)
{
	if (words)
		return !dp_copy_user_words(dst, user, len) ||
		       !dp_copy_words_to_user(user, dst, len);
	return copy_from_user(dst, user, len) || copy_to_user(user, dst, len);
}

/*
 * The best of a few rounds, in ns, of DP_COPY_EACH messages' copies: from
 * @user (when there is a page to copy with) to @dst and back, and from
 * @src to @dst.
 */
static u64 dp_copy_time(u8 *dst, const u8 *src, u8 __user *user, bool words)
{
	u64 best = U64_MAX, t;
	size_t len = DP_COPY_LEN;
	int i, k, fault = 0;

	/* Not a constant: the compiler would expand memcpy() inline. */
	OPTIMIZER_HIDE_VAR(len);
	for (i = 0; i < DP_COPY_ROUNDS; i++) {
		t = ktime_get_ns();
		for (k = 0; k < DP_COPY_EACH; k++) {
			if (user)
				fault |= dp_copy_time_user(dst, user, len, words);
			if (words)
				dp_memcpy_words(dst, src, len);
			else
				memcpy(dst, src, len);
			barrier_data(dst);
		}
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	return fault ? U64_MAX : best;
}

/*
 * A page of the current process's own holding @src's DP_COPY_LEN bytes, to
 * time copies from the user with (the process loading dp, or writing
 * copy=auto); 0 without one (a kernel thread, no memory).
 */
static unsigned long dp_copy_user_page(const u8 *src)
{
	unsigned long u;

	if (!current->mm)
		return 0;
	u = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(u))
		return 0;
	if (copy_to_user((void __user *)u, src, DP_COPY_LEN)) {
		vm_munmap(u, PAGE_SIZE);
		return 0;
	}
	return u;
}

/* Both ways over @buf's bytes (and @user's, if any): false if @user faulted */
static bool dp_copy_time_pair(u8 *buf, unsigned long user, u64 *mem_ns,
			      u64 *words_ns)
{
	u8 __user *u = (u8 __user *)user;

	*mem_ns = dp_copy_time(buf + DP_COPY_LEN, buf, u, false);
	*words_ns = dp_copy_time(buf + DP_COPY_LEN, buf, u, true);
	return *mem_ns != U64_MAX && *words_ns != U64_MAX;
}

/* Time both ways and keep the faster (words only if clearly faster). */
static void dp_copy_time_both(void)
{
	u64 mem_ns, words_ns;
	unsigned long user;
	bool words, ok;
	u8 *buf;
	int i;

	buf = kmalloc(2 * DP_COPY_LEN, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < DP_COPY_LEN; i++)
		buf[i] = (u8)(i * 7 + 3);
	user = dp_copy_user_page(buf);
	ok = dp_copy_time_pair(buf, user, &mem_ns, &words_ns);
	if (user)
		vm_munmap(user, PAGE_SIZE);
	if (!ok) {	/* another thread unmapped it: the kernel alone */
		user = 0;
		dp_copy_time_pair(buf, 0, &mem_ns, &words_ns);
	}
	kfree(buf);
	/* Only clearly faster: a tie keeps the kernel's choice. */
	words = words_ns * 4 < mem_ns * 3;
	WRITE_ONCE(dp_copy_words, words);
	pr_info("dp: message copies by %s (%llu ns for %u KiB%s; the %s took %llu)\n",
		words ? "8-byte words" : "the kernel's copies",
		words ? words_ns : mem_ns, DP_COPY_EACH,
		user ? " from the user, as much back and in the kernel" :
		       " in the kernel",
		words ? "kernel's copies" : "words", words ? mem_ns : words_ns);
}

enum { DP_COPY_AUTO, DP_COPY_KERNEL, DP_COPY_WORDS };
static const char * const dp_copy_ways[] = { "auto", "kernel", "words" };
static int dp_copy_way = DP_COPY_AUTO;	/* under the module's param lock */
static bool dp_copy_loaded;		/* the same */

/* Apply dp_copy_way: the timing, or the way it forces. */
static void dp_copy_apply(void)
{
	lockdep_assert_held(&THIS_MODULE->param_lock);
	if (dp_copy_way == DP_COPY_AUTO) {
		dp_copy_time_both();
		return;
	}
	WRITE_ONCE(dp_copy_words, dp_copy_way == DP_COPY_WORDS);
	pr_info("dp: message copies by %s (copy=%s)\n",
		dp_copy_way == DP_COPY_WORDS ? "8-byte words" : "the kernel's memcpy",
		dp_copy_ways[dp_copy_way]);
}

/* At load, after copy= was parsed. */
void dp_copy_select(void)
{
	kernel_param_lock(THIS_MODULE);
	dp_copy_loaded = true;
	dp_copy_apply();
	kernel_param_unlock(THIS_MODULE);
}

/* Called with the module's param lock held (kernel/params.c). */
static int dp_copy_param_set(const char *val, const struct kernel_param *kp)
{
	int way = sysfs_match_string(dp_copy_ways, val);

	if (way < 0)
		return -EINVAL;
	dp_copy_way = way;
	if (dp_copy_loaded)	/* else dp_copy_select() applies it */
		dp_copy_apply();
	return 0;
}

static int dp_copy_param_get(char *buf, const struct kernel_param *kp)
{
	return scnprintf(buf, PAGE_SIZE, "%s\n",
			 READ_ONCE(dp_copy_words) ? "words" : "kernel");
}

static const struct kernel_param_ops dp_copy_param_ops = {
	.set = dp_copy_param_set,
	.get = dp_copy_param_get,
};
module_param_cb(copy, &dp_copy_param_ops, NULL, 0644);
MODULE_PARM_DESC(copy, "message copies: auto (timed, the default), kernel or words; reads the way in use");

/*
 * copy_from_user() of a message's bytes, by words where dp_copy_select()
 * chose them, with the same checks (the destination object's size, the
 * sanitizers' hooks).  0 or -EFAULT (then @dst is garbage).
 */
int dp_copy_from_user(void *dst, const void __user *src, size_t len)
{
	bool ok;

	if (!READ_ONCE(dp_copy_words))
		return copy_from_user(dst, src, len) ? -EFAULT : 0;
	might_fault();
	if (!check_copy_size(dst, len, false))
		return -EFAULT;
	instrument_copy_from_user_before(dst, src, len);
	ok = dp_copy_user_words(dst, src, len);
	instrument_copy_from_user_after(dst, src, len, ok ? 0 : len);
	return ok ? 0 : -EFAULT;
}

/*
 * copy_to_user() of a message's bytes (a read() out of the pool), by words
 * where dp_copy_select() chose them, with the same checks.  0 or -EFAULT
 * (then part of @dst may have been written).
 */
int dp_copy_to_user(void __user *dst, const void *src, size_t len)
{
	if (!READ_ONCE(dp_copy_words))
		return copy_to_user(dst, src, len) ? -EFAULT : 0;
	might_fault();
	if (!check_copy_size(src, len, true))
		return -EFAULT;
	instrument_copy_to_user(dst, src, len);
	return dp_copy_words_to_user(dst, src, len) ? 0 : -EFAULT;
}
