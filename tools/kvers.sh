#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the kernel versions dp is built and tested against, one per line:
# Debian 12's default kernel (linux-image-amd64) first, then the 6.12 backport
# kernel (linux-image-6.12-amd64).  Both come from the Depends of the installed
# metapackages, so a point release needs no edit here.
# DP_KVERS="v1 v2" overrides (space separated).
set -eu
if [ -n "${DP_KVERS:-}" ]; then
	for k in $DP_KVERS; do echo "$k"; done
	exit 0
fi
for meta in linux-image-amd64 linux-image-6.12-amd64; do
	dep=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null) || {
		echo "kvers.sh: $meta is not installed (run tools/deps.sh)" >&2
		exit 1
	}
	# "linux-image-6.1.0-56-amd64 (= 6.1.192-2)" -> 6.1.0-56-amd64
	kver=$(printf '%s\n' "$dep" | tr ',' '\n' | sed -n 's/^ *linux-image-\([0-9][^ ]*\).*/\1/p' | head -n 1)
	if [ -z "$kver" ]; then
		echo "kvers.sh: cannot read the kernel version from $meta's Depends: $dep" >&2
		exit 1
	fi
	echo "$kver"
done
