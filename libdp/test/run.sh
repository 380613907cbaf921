#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host test of libdp and dpperf's dp path without dp.ko: fakedp.so stands in
# for /dev/dp (see fakedp.c).  Usage: run.sh DIR [DPPERF]: DIR holds
# fakedp.so and pool_test.  Prints TAP; exit 0 when all pass.
set -u
dir=${1:?usage: run.sh DIR [DPPERF]}
dpperf=${2:-}
export LD_PRELOAD="$dir/fakedp.so" FAKEDP_NS=$$
rc=0
n=10
echo "TAP version 13"
"$dir/pool_test" || rc=1
if [ -z "$dpperf" ]; then
	echo "1..$n"
	exit $rc
fi
# dpperf dp, both receive modes, against the fake: no failures, no loss.
for recv in spin block; do
	n=$((n + 1))
	ready="$dir/ready.$$"
	rm -f "$ready"
	"$dpperf" server --proto dp --recv "$recv" --ready "$ready" --idle 30 &
	srv=$!
	i=0
	while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	out=$("$dpperf" client --proto dp --peer 1 --recv "$recv" --test pingpong,bw \
		--iters 200 --sizes 1,64,1500,8000 --bytes 30000 --timeout 5000)
	crc=$?
	wait $srv
	src=$?
	rm -f "$ready"
	# 4 sizes: pingpong's mean, p50 and p99, and bw, each measured
	good=$(printf '%s\n' "$out" | awk -F'\t' '$1 == "dp" && $4 != "nan"' | wc -l)
	if [ $crc -eq 0 ] && [ $src -eq 0 ] && [ "$good" -eq 16 ] &&
	   ! printf '%s\n' "$out" | grep -q '^# lost'; then
		echo "ok - dpperf dp recv=$recv over fakedp"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "not ok - dpperf dp recv=$recv over fakedp (client $crc, server $src)"
		rc=1
	fi
done
# dpperf dp with batched sends (dp_sendv) against the fake: every message
# counted, none lost.
n=$((n + 1))
ready="$dir/ready.$$"
rm -f "$ready"
"$dpperf" server --proto dp --ready "$ready" --idle 30 &
srv=$!
i=0
while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
out=$("$dpperf" client --proto dp --peer 1 --test bw,rate --batch 32 --sizes 1,64,1500 \
	--bytes 60000 --messages 3000 --timeout 5000)
crc=$?
wait $srv
src=$?
rm -f "$ready"
# bw: 3 sizes as dp; rate: batched, so 3 sizes of dp-sendv32 entry (msg/s)
# and entryns (ns in the send calls), and no rate line of single writes
good=$(printf '%s\n' "$out" | awk -F'\t' '$1 == "dp" && $2 == "bw" && $4 != "nan"' | wc -l)
entry=$(printf '%s\n' "$out" |
	awk -F'\t' '$1 == "dp-sendv32" && ($2 == "entry" || $2 == "entryns") && $4 + 0 > 0' | wc -l)
if [ $crc -eq 0 ] && [ $src -eq 0 ] && [ "$good" -eq 3 ] && [ "$entry" -eq 6 ] &&
   ! printf '%s\n' "$out" | grep -q "^dp$(printf '\t')rate" &&
   printf '%s\n' "$out" | grep -q '^# dp data sends: 32 per dp_sendv call' &&
   ! printf '%s\n' "$out" | grep -q '^# lost'; then
	echo "ok - dpperf dp --batch 32 (dp_sendv) over fakedp"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok - dpperf dp --batch 32 (dp_sendv) over fakedp (client $crc, server $src)"
	rc=1
fi
# dpperf's sendcost (no server) over a raw edge to nobody: one write each,
# then dp_sendv 32 per call; each size timed, none failed.
for b in "" "--batch 32"; do
	n=$((n + 1))
	how=dp-write
	[ -n "$b" ] && how=dp-sendv32
	# shellcheck disable=SC2086 # b: the batch option, or nothing
	out=$("$dpperf" client --proto dp --dp-raw --peer 1 --test sendcost --sizes 1,64 \
		--messages 500 $b)
	crc=$?
	good=$(printf '%s\n' "$out" |
		awk -F'\t' -v h="$how" '$1 == h && $2 == "sendcost" && $4 + 0 > 0' | wc -l)
	if [ $crc -eq 0 ] && [ "$good" -eq 2 ]; then
		echo "ok - dpperf sendcost $how over fakedp"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "not ok - dpperf sendcost $how over fakedp (client $crc)"
		rc=1
	fi
done
# sendcost is a raw edge's, alone: anything else is a usage error
n=$((n + 1))
if ! "$dpperf" client --proto dp --peer 1 --test sendcost 2>/dev/null &&
   ! "$dpperf" client --proto dp --dp-raw --peer 1 --test sendcost,rate 2>/dev/null; then
	echo "ok - dpperf sendcost without --dp-raw, or with another test, is refused"
else
	echo "not ok - dpperf sendcost without --dp-raw, or with another test, is refused"
	rc=1
fi
echo "1..$n"
exit $rc
