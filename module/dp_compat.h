/* SPDX-License-Identifier: GPL-2.0 */
/* Differences between the kernels dp builds against (6.1 .. 6.12). */
#ifndef _DP_COMPAT_H
#define _DP_COMPAT_H

#include <linux/mm.h>

/*
 * vm_flags became read-only with accessors in 6.3.  Kbuild probes the
 * headers for vm_flags_mod() (DP_HAVE_VM_FLAGS_MOD) rather than trusting
 * a version number, since distributions backport.
 */
static inline void dp_vm_flags_mod(struct vm_area_struct *vma,
				   unsigned long set, unsigned long clear)
{
#ifdef DP_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

#endif /* _DP_COMPAT_H */
