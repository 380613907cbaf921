// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark: runs the no-op `xchg %bx,%bx` (bytes 66 87 db) once and
 * exits.  make profile's exact mode runs it before and after the phase it
 * measures: QEMU's insn-count plugin (tools/qemu/insn-count.c) counts the
 * guest's instructions between the two.
 */
int main(void)
{
	__asm__ volatile(".byte 0x66, 0x87, 0xdb" ::: "memory");
	return 0;
}
