#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Soak (make soak, not part of make check): one long lossless-edge stream
# between two guests joined through the fault relay (cluster.py --guests 2
# --faults none), under drop=5,dup=2,reorder=5,corrupt=1, then a clean
# unload on both sides.  Guest 0 sends, guest 1 receives and checks every
# message (dp_rel_peer: nonce, index, length, CRC32C, order, once).  The
# host fails the run on any oops, BUG, WARNING or sanitizer report in
# either guest's kernel log, which is what a soak is for: a send or
# receive path that corrupts memory now and then.
#
#   soak_load     dp-load in both guests
#   soak_stream   $DPT_SOAK_N (10^6) messages of random sizes arrive once,
#                 in order, intact; the relay dropped, duplicated, reordered
#                 and corrupted frames, and dp's CRC caught corrupted ones
#   soak_unload   rmmod is clean on both sides after the stream
#
# DPT_SOAK_SEED seeds the relay (default 7), DPT_SOAK_RATE is the slowest
# rate (messages/s) the timeouts allow for (default 50).
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env
me=${DP_GUEST_ID:-0}
N=${DPT_SOAK_N:-1000000}
SEED=${DPT_SOAK_SEED:-7}
RATE=${DPT_SOAK_RATE:-50}
P=./dp_rel_peer
long=$((N / RATE + 600))	# seconds the stream may take

echo "KTAP version 1"
echo "1..3"
if [ "${DP_NGUESTS:-1}" -ne 2 ] || ! dp-link stats frames >/dev/null 2>&1; then
	# A soak that cannot run is a failure, never a skip.
	for i in 1 2 3; do
		echo "not ok $i soak # needs 2 guests joined through the fault relay (--faults none)"
	done
	exit 1
fi
peer_nid=$((2 - me))	# guest 0 is NID 1, guest 1 NID 2
t=0
: >"$T/step.log"
: >"$T/ep.last"
res() { # RC DESCRIPTION
	t=$((t + 1))
	sed 's/^/# /' "$T/step.log"
	: >"$T/step.log"
	if [ "$1" -eq 0 ]; then echo "ok $t $2"; else echo "not ok $t $2"; ktap_failed=$((ktap_failed + 1)); fi
}
bar() { timeout $((long + 120)) dp-barrier "soak-$1" "$((long + 60))" || echo "# barrier soak-$1 timed out"; }
ctr() { dpctl stats 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
state() { # what this node saw, for a failure's diagnostics
	{ echo "dpctl stats (non-zero):"; dpctl stats | grep -v ' 0$'; echo "dpctl ep:"; dpctl ep
	  echo "dpctl ep at most 10 s before the stream ended:"; cat "$T/ep.last"; } \
		>>"$T/step.log" 2>&1
}
# This node's sessions every 10 s while the stream runs: a stalled stream
# ends with its endpoint closed, so dpctl ep after it shows nothing.
epwatch() {
	while sleep 10; do
		dpctl ep >"$T/ep.new" 2>&1 && mv "$T/ep.new" "$T/ep.last"
	done
}
relay() { dp-link stats "$1" 2>/dev/null; }
ktap_failed=0

ns_clean
mod_unload >/dev/null 2>&1
timeout 60 dp-load >>"$T/step.log" 2>&1 && mod_loaded
res $? "soak_load (nid $DP_NID)"
bar loaded

if [ "$me" -eq 1 ]; then
	csum0=$(ctr rx_drop_csum)
	pausewatch &
	watch=$!
	epwatch &
	epw=$!
	timeout $((long + 30)) $P recv 700 11 "$N" 0 "$long" 300 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"	# bound: then the sender may start
	bar bound
	wait $pid
	st=$?
	cat "$T/recv.log" >>"$T/step.log"
	kill "$watch" "$epw" 2>/dev/null
	echo "stream ended at uptime $(cut -d' ' -f1 /proc/uptime) s" >>"$T/step.log"
	pauses >>"$T/step.log"
	csum=$(( $(ctr rx_drop_csum) - csum0 ))
	echo "rx_drop_csum +$csum" >>"$T/step.log"
	[ "$st" -eq 0 ] || state
	[ "$st" -eq 0 ] && [ "$csum" -gt 0 ]
	res $? "soak_stream: $N messages arrive once, in order, intact; corrupted frames caught (+$csum)"
	bar stream
else
	bar bound
	dp-link set "drop=5,dup=2,reorder=5,corrupt=1,seed=$SEED" >>"$T/step.log" 2>&1 ||
		echo "dp-link set failed" >>"$T/step.log"
	start=$(date +%s)
	pausewatch &
	watch=$!
	epwatch &
	epw=$!
	timeout $((long + 30)) $P send "$peer_nid" 700 11 "$N" 3 >>"$T/step.log" 2>&1
	st=$?
	kill "$watch" "$epw" 2>/dev/null
	echo "stream ended at uptime $(cut -d' ' -f1 /proc/uptime) s" >>"$T/step.log"
	pauses >>"$T/step.log"
	took=$(( $(date +%s) - start ))
	ok=1
	for k in dropped duplicated reordered corrupted; do
		v=$(relay $k)
		echo "relay $k ${v:-?}" >>"$T/step.log"
		[ "${v:-0}" -gt 0 ] || ok=0
	done
	echo "took $took s ($((N / (took ? took : 1))) messages/s)" >>"$T/step.log"
	[ "$st" -eq 0 ] || state
	dp-link reset >/dev/null 2>&1
	[ "$st" -eq 0 ] && [ "$ok" -eq 1 ]
	res $? "soak_stream: $N messages sent under drop=5,dup=2,reorder=5,corrupt=1,seed=$SEED"
	bar stream
fi

mod_unload >>"$T/step.log" 2>&1
st=$?
# Whether the unload had to kick a device for frames it held (dp_netdev_drain())
dmesg | grep -e 'gives back what it holds' -e 'frames a device holds' >>"$T/step.log"
res $st "soak_unload: rmmod is clean after the stream"
bar done
[ "$ktap_failed" -eq 0 ]
