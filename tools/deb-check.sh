#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# deb-check.sh: TAP.  make deb (dpkg-buildpackage and lintian --fail-on
# error), then the packages unpacked with dpkg -x into a scratch root as a
# user would install them: libdp-dev's example compiled and linked through
# the installed pkg-config file, and run against the installed libdp.so.1.
# No /dev/dp here: the run goes through libdp's test stand-in
# (libdp/test/fakedp.so, LD_PRELOAD), both ranks on one host; on a real
# node (or guest) the same binary talks to dp.ko.  dpctl from dp-utils runs
# too (nart check needs no module), and dp-dkms's source tree is checked.
# libfabric-dp's libdp-fi.so must sit in the provider directory compiled
# into the libfabric fi_info loads, and fi_info -p dp must list it from
# there: once through FI_PROVIDER_PATH, once without it, the scratch root's
# library directory overlaid on this host's in a private mount namespace
# (unshare; skipped where that is not allowed).  Both runs use the
# provider's test transport (FI_DP_TEST_FAKE): without /dev/dp it lists
# nothing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
deb=$top/build/deb
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
tmp=$(mktemp -d)
root=$tmp/root
trap 'kill $r1 2>/dev/null; rm -rf "$tmp"' EXIT
r1=
n=0 bad=0
t() { # RC DESCRIPTION [LOG]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 20 "$3" | sed 's/^/# /'
		bad=1
	fi
}
skip() { # DESCRIPTION REASON
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}
echo "TAP version 13"
echo "1..12"

rc=0; make -s -C "$top" deb >"$tmp/deb.log" 2>&1 || rc=1
t $rc "make deb: dpkg-buildpackage builds the packages, lintian reports no error" "$tmp/deb.log"
rc=0
for p in libdp1 libdp-dev dp-utils dp-dkms libfabric-dp; do
	f=$(ls "$deb/${p}_"*.deb 2>/dev/null | head -n 1)
	{ [ -n "$f" ] && dpkg -x "$f" "$root"; } || { echo "# no $p package"; rc=1; }
done
t $rc "libdp1, libdp-dev, dp-utils, dp-dkms and libfabric-dp unpack into a scratch root (dpkg -x)"

rc=0
for f in usr/lib/$ma/libdp.so.1 usr/lib/$ma/libdp.so usr/lib/$ma/pkgconfig/libdp.pc \
	usr/include/dp.h usr/include/linux/dp.h usr/bin/dpctl usr/bin/dpperf \
	lib/systemd/system/dp.service usr/lib/dp/dp-node usr/share/man/man3/dp_read.3.gz \
	usr/share/man/man8/dpctl.8.gz usr/share/bash-completion/completions/dpctl; do
	[ -e "$root/$f" ] || { echo "# missing /$f"; rc=1; }
done
t $rc "the libraries (multiarch $ma), headers, pkg-config file, tools, unit and pages are there"

export PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root"
flags=$(pkg-config --cflags --libs libdp 2>"$tmp/pc.log")
rc=$?
case $flags in *"-I$root/usr/include"*"-L$root/usr/lib/$ma"*) ;; *) rc=1 ;; esac
t $rc "pkg-config --cflags --libs libdp gives -I and -L in the scratch root" "$tmp/pc.log"

ex=$root/usr/share/doc/libdp-dev/examples/pingpong.c
[ -f "$ex" ] || ex=$ex.gz
rc=0
{ case $ex in *.gz) gzip -dc "$ex" ;; *) cat "$ex" ;; esac; } >"$tmp/pingpong.c" || rc=1
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -O2 -o "$tmp/pingpong" "$tmp/pingpong.c" $flags \
	>"$tmp/cc.log" 2>&1 || rc=1
t $rc "libdp-dev's example compiles and links against the installed pkg-config" "$tmp/cc.log"

export LD_LIBRARY_PATH="$root/usr/lib/$ma"
rc=0; ldd "$tmp/pingpong" | grep -q "libdp.so.1 => $root/usr/lib/$ma/libdp.so.1" || rc=1
t $rc "the example loads libdp1's libdp.so.1"

rc=0
make -s -C "$top/libdp" test/fakedp.so >"$tmp/fake.log" 2>&1 || rc=1
export FAKEDP_NS=deb$$
if [ $rc -eq 0 ]; then
	LD_PRELOAD=$top/libdp/test/fakedp.so timeout 60 "$tmp/pingpong" 1 1 >"$tmp/r1.out" 2>&1 &
	r1=$!
	sleep 0.5
	LD_PRELOAD=$top/libdp/test/fakedp.so timeout 60 "$tmp/pingpong" 0 1 >"$tmp/r0.out" 2>&1 || rc=1
	wait $r1 || rc=1
	r1=
	grep -q "^1 bytes: .* us round trip" "$tmp/r0.out" || rc=1
	grep -q "^first ping from NID" "$tmp/r1.out" || rc=1
	cat "$tmp/r0.out" "$tmp/r1.out" >>"$tmp/fake.log"
fi
t $rc "the example runs both ranks through the installed libdp (over fakedp.so: no /dev/dp here)" "$tmp/fake.log"

printf '1 52:54:00:00:00:01\n2 52:54:00:00:00:02\n' >"$tmp/nart"
out=$("$root/usr/bin/dpctl" -j nart check "$tmp/nart" 2>&1)
rc=0; [ "$out" = '{"entries":2}' ] || rc=1
t $rc "dp-utils' dpctl runs: -j nart check gives $out"

src=$(ls -d "$root"/usr/src/dp-* 2>/dev/null | head -n 1)
rc=0
[ -n "$src" ] && [ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] && [ -f "$src/module/dp_main.c" ] || rc=1
[ -n "$src" ] && [ -z "$(cd "$src" && ls -d build selftests libdp module/tests 2>/dev/null)" ] || rc=1
[ -n "$src" ] && [ -z "$(find "$src" -name '*.o' -o -name '*.ko')" ] || rc=1
t $rc "dp-dkms's /usr/src tree holds dkms.conf, Kbuild and the module's sources only"

# libfabric-dp.  The provider directory is $(libdir)/libfabric of the
# libfabric that fi_info loads, as that library has it compiled in.
unset LD_LIBRARY_PATH FI_PROVIDER_PATH FI_PROVIDER
provdir=/usr/lib/$ma/libfabric
rc=0
lf=$(ldd "$(command -v fi_info)" 2>/dev/null | awk '$1 ~ /^libfabric\.so/ { print $3 }')
if [ -z "$lf" ] || [ ! -f "$lf" ]; then
	echo "# no libfabric.so.1 for fi_info (libfabric-bin)"; rc=1
elif ! grep -a -o '/[[:alnum:]_./-]*/libfabric' "$lf" | sort -u | grep -qx "$provdir"; then
	echo "# $provdir is not the provider directory of $lf"; rc=1
fi
[ -f "$root$provdir/libdp-fi.so" ] || { echo "# missing $provdir/libdp-fi.so"; rc=1; }
t $rc "libfabric-dp's libdp-fi.so is in $provdir, the provider directory of $lf"

rc=0
FI_PROVIDER_PATH=$root$provdir FI_DP_TEST_FAKE=1 fi_info -p dp >"$tmp/fi1.log" 2>&1 || rc=1
grep -qx 'provider: dp' "$tmp/fi1.log" && grep -q 'type: FI_EP_RDM' "$tmp/fi1.log" || rc=1
t $rc "FI_PROVIDER_PATH=(the package's directory) fi_info -p dp loads the packaged provider" "$tmp/fi1.log"

# fi_info with no FI_PROVIDER_PATH, in a mount namespace where
# /usr/lib/MA is the scratch root's over this host's (a read-only overlay)
desc="fi_info -p dp without FI_PROVIDER_PATH finds the packaged provider in $provdir"
# shellcheck disable=SC2016 # $1 and $2 are the inner shell's
if ! unshare -rm true 2>/dev/null; then
	skip "$desc" "no user and mount namespace here (unshare -rm)"
elif ! unshare -rm sh -c 'mount -t overlay overlay -o "lowerdir=$1:$2" "$2"' sh \
	"$root/usr/lib/$ma" "/usr/lib/$ma" 2>"$tmp/ov.log"; then
	skip "$desc" "no overlay mount in a user namespace here: $(head -n 1 "$tmp/ov.log")"
else
	rc=0
	unshare -rm sh -c 'mount -t overlay overlay -o "lowerdir=$1:$2" "$2" &&
		FI_DP_TEST_FAKE=1 fi_info -p dp' sh "$root/usr/lib/$ma" "/usr/lib/$ma" \
		>"$tmp/fi2.log" 2>&1 || rc=1
	grep -qx 'provider: dp' "$tmp/fi2.log" && grep -q 'type: FI_EP_RDM' "$tmp/fi2.log" || rc=1
	t $rc "$desc" "$tmp/fi2.log"
fi
exit $bad
