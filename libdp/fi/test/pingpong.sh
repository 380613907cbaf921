#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# libfabric's own fi_pingpong, two processes on this host, over libdp-fi.so
# from DIR on its real transport (libdp) with libdp's stand-in for /dev/dp
# (FAKEDP_SO, LD_PRELOAD; pools are files both processes map).  fi_pingpong
# exchanges addresses over a TCP socket on localhost, then runs -e rdm with
# data checks (-c), msg and tagged, for a few sizes.  The stand-in drops
# what does not fit a pool, so the pool is larger than the largest size.
# Usage: pingpong.sh DIR FAKEDP_SO.  Prints TAP; exit 0 if all pass.
set -u
dir=${1:?usage: pingpong.sh DIR FAKEDP_SO}
fakedp=${2:?usage: pingpong.sh DIR FAKEDP_SO}
command -v fi_pingpong >/dev/null || { echo "pingpong.sh: fi_pingpong missing (libfabric-bin)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$dir/libdp-fi.so" "$tmp/libdp-fi.so"
export FI_PROVIDER_PATH=$tmp FI_DP_POOL_SIZE=4194304 FAKEDP_NS=pp$$
port=$((20000 + $$ % 20000))
n=0
rc=0
# Wait (up to 20 s) until the server listens on its control port: under
# load it may take longer to start than the client.
listening() {
	i=0
	while [ $i -lt 200 ] && ! ss -ltnH "sport = :$1" | grep -q .; do
		sleep 0.1
		i=$((i + 1))
	done
}
echo "TAP version 13"
for mode in msg tagged; do
	for size in 1 4096 100000 1000000; do
		n=$((n + 1))
		port=$((port + 1))
		LD_PRELOAD=$fakedp timeout 60 fi_pingpong -p dp -e rdm -m $mode -c -I 10 \
			-S $size -B $port >"$tmp/srv" 2>&1 &
		srv=$!
		listening $port
		LD_PRELOAD=$fakedp timeout 60 fi_pingpong -p dp -e rdm -m $mode -c -I 10 \
			-S $size -P $port localhost >"$tmp/cli" 2>&1
		crc=$?
		wait $srv
		src=$?
		if [ $crc -eq 0 ] && [ $src -eq 0 ] && grep -q '=10 ' "$tmp/cli"; then
			echo "ok $n - fi_pingpong -e rdm -m $mode -S $size"
		else
			sed 's/^/# client: /' "$tmp/cli"
			sed 's/^/# server: /' "$tmp/srv"
			echo "not ok $n - fi_pingpong -e rdm -m $mode -S $size (client $crc, server $src)"
			rc=1
		fi
	done
done
echo "1..$n"
exit $rc
