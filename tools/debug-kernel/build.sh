#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# build.sh: build the debug kernel make check-debug boots (docs/debug-kernel.md),
# from Debian's linux-source-6.1 tarball, with allnoconfig plus debug.config
# (this directory), niced.  Prints the directory that holds the result:
#   obj/             the kernel build tree (make -C obj M=... builds modules)
#   mods/            modules_install output (mods/lib/modules/KVER)
#   vmlinuz          the bzImage
#   kernel.release   KVER
# The result is cached under DP_DEBUG_KERNEL_DIR (default build/debug-kernel),
# keyed on the source package version, debug.config, RECIPE below and the
# compiler: a second run with the same inputs prints the directory at once.
# Progress goes to stderr, make output to KEYDIR/build.log.
# build.sh --source only unpacks the source (once, into the same cache) and
# prints its tree: tools/kselftest.sh builds dp's selftests in it.
#   DP_DEBUG_KERNEL_SRC  the source tarball (default Debian's, under /usr/src)
#   DP_DEBUG_KERNEL_JOBS make -j (default: nproc)
#   DP_DEBUG_CONFIG      debug (default: debug.config, KASAN and friends) or
#                        kcsan (debug.config's system part, then kcsan.config)
# Each configuration keeps its newest build in the cache.
set -eu
source_only=
[ "${1:-}" = --source ] && source_only=1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${DP_DEBUG_KERNEL_DIR:-$top/build/debug-kernel}
tarball=${DP_DEBUG_KERNEL_SRC:-/usr/src/linux-source-6.1.tar.xz}
config=${DP_DEBUG_CONFIG:-debug}
case $config in
debug|kcsan) ;;
*) echo "debug-kernel: unknown configuration $config (debug, kcsan)" >&2; exit 1 ;;
esac
frag=$here/debug.config
# Bump when a change here changes what is built (configure or make steps).
RECIPE=1
jobs=${DP_DEBUG_KERNEL_JOBS:-$(nproc)}

say() { echo "debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (tools/deps.sh --debug-kernel installs linux-source-6.1)"
# Unpacking the source (make check's kselftest build) needs only xz; the
# kernel's build needs the rest, which only tools/deps.sh --debug-kernel
# installs.
tools="xz"
[ -n "$source_only" ] || tools="bc bison flex make gcc xz"
for t in $tools; do
	command -v "$t" >/dev/null || die "$t missing (tools/deps.sh --debug-kernel)"
done

# The source's identity: the Debian package version when it is the packaged
# tarball, else the file's name, size and mtime.
srcid=
case $tarball in
/usr/src/linux-source-6.1.tar.xz)
	srcid="linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)" ;;
esac
[ -n "${srcid#linux-source-6.1 }" ] || srcid="$(basename "$tarball") $(stat -c '%s %Y' "$tarball")"

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$config" != debug ]; then
	# debug.config's system part (up to its checkers), then this one's
	frag=$dir/$config.allconfig
	{ sed -e '/^CONFIG_LOCALVERSION=/d' -e '/^# ---- the checkers/,$d' "$here/debug.config"
	  cat "$here/$config.config"; } >"$frag.tmp"
	mv "$frag.tmp" "$frag"
fi
key=$({ echo "$srcid recipe $RECIPE"; cat "$frag"; gcc --version | head -n 1; } | sha256sum | cut -c1-12)
kd=$dir/$key
if [ -z "$source_only" ] && [ -f "$kd/.done" ]; then
	say "cached: $(cat "$kd/kernel.release") ($srcid, key $key)"
	echo "$kd"
	exit 0
fi

# Extract once per source; several configurations may share it.
sk=$(echo "$srcid" | sha256sum | cut -c1-12)
src=$dir/src-$sk
if [ ! -f "$src/.extracted" ]; then
	say "extracting $tarball"
	rm -rf "$src"
	mkdir -p "$src"
	nice -n 19 tar -C "$src" -xJf "$tarball"
	echo "$srcid" >"$src/.extracted"
fi
ksrc=$(find "$src" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -f "$ksrc/Makefile" ] || die "no kernel tree in $src"
if [ -n "$source_only" ]; then
	echo "$ksrc"
	exit 0
fi

# Older builds of this configuration are stale: keep the disk use bounded.
for old in "$dir"/*/.done "$dir"/*/obj; do
	o=${old%/*}
	[ "$(cat "$o/config" 2>/dev/null || echo debug)" = "$config" ] || continue
	[ "$o" = "$kd" ] || [ ! -d "$o" ] || { say "removing stale build ${o##*/}"; rm -rf "$o"; }
done
rm -rf "$kd"
mkdir -p "$kd/obj"
echo "$config" >"$kd/config"
log=$kd/build.log
kmake() { nice -n 19 make -C "$ksrc" O="$kd/obj" ARCH=x86_64 "$@" >>"$log" 2>&1; }

say "configuring (allnoconfig + ${frag##*/})"
KCONFIG_ALLCONFIG=$frag kmake allnoconfig || { tail -n 20 "$log" >&2; die "configure failed (log: $log)"; }
# Every line of the fragment must have survived: a symbol whose dependencies
# are missing is silently dropped by kconfig.
bad=$(sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\(.*\)$/\1=\2/p' \
	-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=n/p' "$frag" |
	while IFS='=' read -r sym want; do
		got=$(sed -n -e "s/^$sym=\\(.*\\)\$/\\1/p" -e "s/^# $sym is not set\$/n/p" "$kd/obj/.config")
		[ "$got" = "${want}" ] || { [ "$want" = n ] && [ -z "$got" ]; } || echo "$sym: want $want, got ${got:-unset}"
	done)
[ -z "$bad" ] || { printf '%s\n' "$bad" >&2; die "${frag##*/} not applied as written"; }

say "building bzImage and modules (make -j$jobs, niced; log: $log)"
t0=$(date +%s)
kmake -j"$jobs" bzImage modules || { grep -E 'error|Error' "$log" | head -n 20 >&2; die "build failed (log: $log)"; }
kmake INSTALL_MOD_PATH="$kd/mods" INSTALL_MOD_STRIP=1 modules_install ||
	die "modules_install failed (log: $log)"
cp "$kd/obj/arch/x86/boot/bzImage" "$kd/vmlinuz"
cat "$kd/obj/include/config/kernel.release" >"$kd/kernel.release"
echo "$srcid" >"$kd/source"
touch "$kd/.done"
say "built $(cat "$kd/kernel.release") in $(($(date +%s) - t0)) s"
echo "$kd"
