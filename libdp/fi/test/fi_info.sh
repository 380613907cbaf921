#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# libdp-fi.so loaded by the real libfabric, through its own fi_info.
# Usage: fi_info.sh DIR (holding libdp-fi.so).  Prints TAP; exit 0 if all pass.
#
# FI_DP_TEST_FAKE (test only) makes the provider use its in-memory fake
# transport, so getinfo answers on a machine without /dev/dp; without it
# the provider must answer FI_ENODATA there, and fi_info list nothing.
set -u
dir=${1:?usage: fi_info.sh DIR}
command -v fi_info >/dev/null || { echo "fi_info.sh: fi_info missing (libfabric-bin)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only files named *-fi.so are loaded: the name is part of what is tested.
cp "$dir/libdp-fi.so" "$tmp/libdp-fi.so"
n=0
rc=0
res() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; rc=1; fi
}
fake() { FI_PROVIDER_PATH=$tmp FI_DP_TEST_FAKE=1 "$@"; }

echo "TAP version 13"
out=$(fake fi_info -p dp 2>&1)
printf '%s\n' "$out" | grep -qx 'provider: dp' && printf '%s\n' "$out" | grep -q 'type: FI_EP_RDM'
res $? "fi_info -p dp lists the provider (fake transport)"

out=$(fake fi_info -l 2>&1)
printf '%s\n' "$out" | grep -qx 'dp:'
res $? "fi_info -l lists dp"

out=$(FI_PROVIDER=dp fake fi_info 2>&1)
[ "$(printf '%s\n' "$out" | grep '^provider:' | sort -u)" = "provider: dp" ]
res $? "FI_PROVIDER=dp selects dp alone"

# What Open MPI's mtl ofi asks for: RDM, tagged, FI_CONTEXT.
out=$(fake fi_info -p dp -t FI_EP_RDM -c 'FI_TAGGED|FI_DIRECTED_RECV' -m FI_CONTEXT -v 2>&1)
printf '%s\n' "$out" | grep -q 'mode: \[ FI_CONTEXT \]' &&
	printf '%s\n' "$out" | grep -q 'FI_TAGGED'
res $? "hints of Open MPI's mtl ofi: RDM, FI_TAGGED, FI_CONTEXT"

out=$(fake fi_info -p dp -t FI_EP_MSG 2>&1)
[ $? -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^provider: dp'
res $? "no FI_EP_MSG endpoint"

if [ -e /dev/dp ]; then
	echo "ok $((n + 1)) - fi_info -p dp without the fake # SKIP /dev/dp exists here"
	n=$((n + 1))
else
	out=$(FI_PROVIDER_PATH=$tmp fi_info -p dp 2>&1)
	[ $? -ne 0 ] && printf '%s\n' "$out" | grep -q -- '-61' &&
		! printf '%s\n' "$out" | grep -q '^provider: dp'
	res $? "without /dev/dp: getinfo answers FI_ENODATA (61), nothing listed"
fi
echo "1..$n"
exit $rc
