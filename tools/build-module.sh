#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# build-module.sh [--sparse] KVER: build dp.ko for one kernel with its kbuild,
# out of tree, in build/KVER/src/ (a copy of Kbuild, module/ and uapi/), so the
# kernels never share objects.  Fails on any compiler warning.
# --sparse: run sparse over every source (C=2) instead; fails if sparse reports
# a warning or error in our files (module/, uapi/).  Logs: build/KVER/*.log.
# --kdir DIR: build against the kernel build tree DIR (the debug kernel of
# make check-debug) instead of /lib/modules/KVER/build; KVER is then read
# from DIR and may be left out.  Such a dp.ko keeps its debug info (-g), so
# reports can be resolved to lines (scripts/faddr2line).
set -eu
sparse=0 kdir=
while [ $# -gt 0 ]; do
	case $1 in
	--sparse) sparse=1; shift ;;
	--kdir) kdir=${2:?--kdir needs a directory}; shift 2 ;;
	*) break ;;
	esac
done
kcflags=
if [ -n "$kdir" ]; then
	[ -f "$kdir/include/config/kernel.release" ] ||
		{ echo "build-module: $kdir is not a built kernel tree" >&2; exit 1; }
	kver=${1:-$(cat "$kdir/include/config/kernel.release")}
	kcflags=-g
else
	kver=${1:?usage: build-module.sh [--sparse] [--kdir DIR] KVER}
	kdir=/lib/modules/$kver/build
fi
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/build/$kver/src
[ -d "$kdir" ] || { echo "build-module: no headers for $kver ($kdir)" >&2; exit 1; }
[ -f "$top/Kbuild" ] || { echo "build-module: no Kbuild at the top of the tree" >&2; exit 1; }

# Mirror the sources: copy what changed, delete sources that are gone (objects stay).
mkdir -p "$src"
cp -a "$top/Kbuild" "$src/Kbuild"
for d in module uapi; do
	[ -d "$top/$d" ] || continue
	mkdir -p "$src/$d"
	(cd "$top" && find "$d" -type d) | while read -r sub; do mkdir -p "$src/$sub"; done
	(cd "$top" && find "$d" -type f \( -name '*.[ch]' -o -name 'Kbuild' -o -name 'Makefile' -o -name '*.S' \)) |
		while read -r f; do
			cmp -s "$top/$f" "$src/$f" || cp -p "$top/$f" "$src/$f"
		done
	(cd "$src" && find "$d" -type f \( -name '*.[ch]' -o -name 'Kbuild' -o -name 'Makefile' -o -name '*.S' \)) |
		while read -r f; do
			[ -e "$top/$f" ] || rm -f "$src/$f"
		done
done

jobs=$(nproc)
if [ "$sparse" = 0 ]; then
	log=$top/build/$kver/build.log
	rc=0
	make -C "$kdir" M="$src" -j"$jobs" ${kcflags:+KCFLAGS="$kcflags"} modules >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		grep -E 'error|warning' "$log" | head -n 40 >&2 || tail -n 40 "$log" >&2
		echo "build-module: $kver: make failed (log: build/$kver/build.log)" >&2
		exit 1
	fi
	if grep -q 'warning:' "$log"; then
		grep 'warning:' "$log" >&2
		echo "build-module: $kver: compiler warnings (log: build/$kver/build.log)" >&2
		exit 1
	fi
	echo "build-module: build/$kver/src/dp.ko"
else
	log=$top/build/$kver/sparse.log
	command -v sparse >/dev/null || { echo "build-module: sparse not installed" >&2; exit 1; }
	rc=0
	make -C "$kdir" M="$src" -j"$jobs" ${kcflags:+KCFLAGS="$kcflags"} C=2 CHECK=sparse modules >"$log" 2>&1 || rc=$?
	# paths may be absolute ($src/module/x.c) or relative (module/x.c)
	ours=$(awk -v p="$src/" 'index($0, p) == 1 { $0 = substr($0, length(p) + 1) } { print }' "$log" |
		grep -E '^(module|uapi)/[^:]*:[0-9]+:([0-9]+:)? *(warning|error)' || true)
	if [ -n "$ours" ]; then
		printf '%s\n' "$ours" >&2
		echo "build-module: $kver: sparse reports $(printf '%s\n' "$ours" | wc -l) problem(s) in our files" >&2
		exit 1
	fi
	if [ "$rc" -ne 0 ]; then
		tail -n 20 "$log" >&2
		echo "build-module: $kver: sparse build failed (log: build/$kver/sparse.log)" >&2
		exit 1
	fi
	echo "build-module: $kver: sparse clean ($(grep -c 'CHECK' "$log") files checked)"
fi
