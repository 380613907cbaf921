#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kselftest.sh KVER: dp's selftests built and installed by the kernel's own
# kselftest framework, as a kernel developer would (README, Testing):
#   1. Debian's linux-source-6.1, unpacked once into the cache make
#      check-debug uses (tools/debug-kernel/build.sh --source);
#   2. selftests/dp copied to its tools/testing/selftests/dp;
#   3. make -C tools/testing/selftests TARGETS=dp (DP_SRC: this tree);
#   4. installed with the framework's kselftest_install.sh (its install
#      target: run_kselftest.sh, kselftest-list.txt, dp/);
#   5. a guest image for KVER (build/KVER/initramfs-kselftest.cpio): the
#      harness's image plus that install under /usr/lib/dp/kselftest and
#      coreutils' timeout (the framework's runner calls timeout --foreground,
#      which busybox's lacks).
# Then cluster.py --mode kselftest --initramfs ... runs run_kselftest.sh -c dp
# in a guest.  Prints the kernel tree's directory last (for kunit_parser.py).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: kselftest.sh KVER}
out=$top/build/kselftest
say() { echo "kselftest: $*"; }

ksrc=$("$top/tools/debug-kernel/build.sh" --source)
st=$ksrc/tools/testing/selftests
[ -f "$st/lib.mk" ] && [ -x "$st/kselftest_install.sh" ] || { say "no kselftest in $ksrc"; exit 1; }

say "copying selftests/dp to $st/dp"
rm -rf "$st/dp"
mkdir -p "$st/dp"
# the sources only, not what a standalone build left beside them
(cd "$top/selftests/dp" && cp Makefile settings config ./*.c ./*.h ./*.sh "$st/dp/")

say "make -C tools/testing/selftests TARGETS=dp"
make -C "$st" TARGETS=dp DP_SRC="$top"
for p in dp_bind dp_fuzz dp_users; do
	[ -x "$st/dp/$p" ] || { say "$p was not built"; exit 1; }
done

say "kselftest_install.sh"
rm -rf "$out/install"
mkdir -p "$out/install"
(cd "$st" && MAKEFLAGS="TARGETS=dp DP_SRC=$top" ./kselftest_install.sh "$out/install")
for f in run_kselftest.sh kselftest-list.txt kselftest/runner.sh dp/run_local.sh dp/settings \
	dp/config dp/lib.sh dp/dp_bind; do
	[ -e "$out/install/$f" ] || { say "the install has no $f"; exit 1; }
done
grep -qx 'dp:run_local.sh' "$out/install/kselftest-list.txt" ||
	{ say "kselftest-list.txt does not list dp:run_local.sh"; exit 1; }

say "guest image build/$kver/initramfs-kselftest.cpio"
rm -rf "$out/stage"
cp -a "$top/build/stage" "$out/stage"
mkdir -p "$out/stage/usr/lib/dp" "$out/stage/usr/bin"
cp -a "$out/install" "$out/stage/usr/lib/dp/kselftest"
cp /usr/bin/timeout "$out/stage/usr/bin/timeout"
"$top/tools/qemu/mkinitramfs.py" --kver "$kver" --out "$top/build/$kver/initramfs-kselftest.cpio" \
	--stage "$out/stage" --ko "$top/build/$kver/src/dp.ko"
echo "$ksrc"
