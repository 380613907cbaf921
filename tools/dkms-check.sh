#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dkms-check.sh [KVER...]: check that dkms.conf builds dp.ko through DKMS for
# each kernel (default: tools/kvers.sh).  Adds a clean copy of the module
# sources, builds, and removes everything again so the host is left as found.
# Prints one KTAP result per kernel; exit 1 if any failed.  Needs root.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
kvers=${*:-$("$top/tools/kvers.sh")}
tree=$top/build/dkms/dp-$ver
logdir=$top/build/dkms

# dkms signs what it builds and makes itself a key the first time: drop the
# key again if this run made it.
mok_was_there=0
[ -e /var/lib/dkms/mok.key ] && mok_was_there=1
cleanup() {
	dkms remove "dp/$ver" --all >/dev/null 2>&1 || true
	rm -rf "/usr/src/dp-$ver" "/var/lib/dkms/dp"
	[ "$mok_was_there" = 1 ] || rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
}

rm -rf "$tree"
mkdir -p "$tree/tools"
cp -a "$top/dkms.conf" "$top/Kbuild" "$top/module" "$top/uapi" "$tree/"
cp -a "$top/tools/dkms-post-add.sh" "$tree/tools/"
# only sources: no objects from an in-tree build, no user-space tests
(cd "$tree" && tools/dkms-post-add.sh)

cleanup
n=0 failed=0
echo "KTAP version 1"
echo "1..$(echo $kvers | wc -w)"
if ! dkms add "$tree" >"$logdir/add.log" 2>&1; then
	sed 's/^/# /' "$logdir/add.log"
fi
for k in $kvers; do
	n=$((n + 1))
	log=$logdir/build-$k.log
	if dkms build "dp/$ver" -k "$k" >"$log" 2>&1 &&
	   ls "/var/lib/dkms/dp/$ver/$k/x86_64/module/"dp.ko* >/dev/null 2>&1; then
		echo "ok $n dkms build dp/$ver -k $k"
	else
		tail -n 20 "$log" | sed 's/^/# /'
		cat "/var/lib/dkms/dp/$ver/build/make.log" 2>/dev/null | tail -n 20 | sed 's/^/# /'
		echo "not ok $n dkms build dp/$ver -k $k"
		failed=1
	fi
done
cleanup
exit $failed
