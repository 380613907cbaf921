// SPDX-License-Identifier: GPL-2.0
/*
 * dpg-cpucheck: does the emulated CPU keep the flags across CMPXCHG16B?
 *
 * Run by the guest's init at boot (tools/qemu/guest/init).  QEMU 7.2's TCG
 * (Debian 12) computes the flags that CMPXCHG16B leaves alone from a stale
 * lazy-flags state: after a POPF ended the translation block, a CMP puts
 * its operand where the flags are computed from, without saying so, and
 * the CMPXCHG16B helper then takes that operand for the whole RFLAGS.
 * PUSHF shows it, and so does the frame of an interrupt taken right after
 * the instruction: the guest's IRET then loads NT, IOPL, AC and DF from a
 * pointer.  The kernel's slab fast path is a CMPXCHG16B followed by a
 * branch, so under interrupt load a guest now and then returns into the
 * kernel with DF set (string copies run backwards) and dies, often as a
 * double fault with an RFLAGS that is a slab address (docs/soak.md).
 *
 * Without CX16 in CPUID (cluster.py's default -cpu ...,cx16=off) the kernel
 * and user space do without the instruction; there is nothing to check.
 * With it, a CPU whose PUSHF after CMP; CMPXCHG16B differs from its PUSHF
 * after CMP alone is reported and the guest's run fails.
 *
 * Exit 0: CX16 absent, or present and sound; 1: the flags were corrupted.
 */
#include <cpuid.h>
#include <stdint.h>
#include <stdio.h>

/* Flags that CMP sets and CMPXCHG16B keeps (all but ZF), and bit 1. */
#define KEPT 0x897u

static unsigned __int128 mem __attribute__((aligned(16)));

/*
 * RFLAGS after POPF; CMP @op, 5; then CMPXCHG16B (@cx16) or nothing.  The
 * stack pointer steps over the red zone first (with LEA, which keeps the
 * flags), as the pushes would otherwise write where the compiler may keep
 * locals.
 */
#define PROBE_BEGIN "lea -128(%%rsp), %%rsp\n\t" \
		    "pushq $0x202\n\tpopfq\n\t" \
		    "mov $5, %%rcx\n\t" \
		    "cmp %%rbx, %%rcx\n\t"
#define PROBE_END "pushfq\n\t" \
		  "popq %[fl]\n\t" \
		  "lea 128(%%rsp), %%rsp"

static uint64_t flags_after(uint64_t op, int cx16)
{
	uint64_t fl;

	mem = 0;	/* RDX:RAX = 0 matches: ZF set, the rest kept */
	if (cx16)
		__asm__ __volatile__(PROBE_BEGIN
				     "mov $0, %%eax\n\t"
				     "mov $0, %%edx\n\t"
				     "cmpxchg16b %[m]\n\t"
				     PROBE_END
				     : [fl] "=r"(fl), [m] "+m"(mem)
				     : "b"(op)
				     : "rax", "rcx", "rdx", "cc", "memory");
	else
		__asm__ __volatile__(PROBE_BEGIN PROBE_END
				     : [fl] "=r"(fl)
				     : "b"(op)
				     : "rcx", "cc", "memory");
	return fl;
}

int main(void)
{
	static const uint64_t ops[] = {
		0xffff89b357ce6600ull, 0x00000000deadbe00ull, 3, 5,
	};
	unsigned int a, b, c, d;
	int bad = 0;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_CMPXCHG16B)) {
		printf("cpucheck: no CX16 in CPUID: the kernel does without CMPXCHG16B\n");
		return 0;
	}
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint64_t want = (flags_after(ops[i], 0) & KEPT) | 0x40;	/* ZF */
		uint64_t got = flags_after(ops[i], 1);

		if ((got & ~0x200ull) != want) {
			printf("cpucheck: CMP %#llx; CMPXCHG16B leaves RFLAGS %#llx, not %#llx\n",
			       (unsigned long long)ops[i], (unsigned long long)got,
			       (unsigned long long)(want | 0x200));
			bad = 1;
		}
	}
	if (bad)
		printf("cpucheck: this emulated CPU corrupts RFLAGS in CMPXCHG16B; run guests with cx16=off in -cpu\n");
	else
		printf("cpucheck: CX16 present and CMPXCHG16B keeps the flags\n");
	return bad;
}
