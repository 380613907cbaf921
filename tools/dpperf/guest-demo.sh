#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-demo.sh: dpperf between two guests in real time (harness mode "demo",
# docs/harness.md).  Guest 0 is the client, guest 1 the server, any others
# only keep step at the barriers.  For each of dp (spin receive, as in the
# paper), UDP and TCP (TCP_NODELAY): ping-pong, bandwidth and message rate.
#
# On the simulated Myrinet fabric (cluster.py --nic myri, backend myri), the
# same over the card: dp on its own packet type, UDP and TCP on myri0
# (Ethernet over Myrinet, 10.77.0.NID), ping-pong and bandwidth at 1 byte
# and at the largest message one Myrinet packet carries for both dp and UDP
# (dp's max_msg or myri0's MTU less IP and UDP headers, the smaller; TCP
# sends it as a stream), tagged mode=myri.
#
# On Ethernet a second pass, "sweep", measures bandwidth against size from
# 1 byte to 1 MiB (dpperf --test bwsize: powers of 4, DPPERF_SWEEP_BYTES
# (16 MiB) per size each time, 32 MiB in all, at least 8 and at most 20000
# messages: with 4 MiB the 1 MiB point was 8 messages, a fifth of a second,
# and moved by half from run to run) for dp (the server's pool 4 MiB, so
# that 1 MiB fits its max_msg), UDP (to 16 KiB: a datagram carries less
# than 64 KiB) and TCP (its server announces the same 4 MiB, so dpperf's
# windows between acknowledgements are as large in bytes as dp's); dpperf
# prints each curve's half-bandwidth size n1/2, and the report computes it
# from the table.
#
# Prints KTAP (one test per step) and, on guest 0, the results:
#   DPPERF-BEGIN
#   mode=realtime<TAB>proto<TAB>test<TAB>size<TAB>value<TAB>unit   (and # comments)
#   DPPERF-END
# On Ethernet each pass runs twice, the protocols in the order dp, UDP, TCP
# and then TCP, UDP, dp (passes "all" and "allrev", "sweep" and
# "sweeprev"), and the report averages the two: whatever drifts on the host
# over a pass then falls on every protocol alike, where one order put it on
# the first or the last.  The first pass's bandwidth and rate tests send
# DPPERF_BYTES (8 MiB) per size each time, 16 MiB in all: with 2 MiB a size
# took a tenth to a third of a second, and quiet runs of the same code put
# dp's worst size anywhere from 0.86x to 1.38x TCP's.
# Environment: DPPERF_ITERS (1000), DPPERF_BYTES (8388608), DPPERF_RECV (spin),
# DPPERF_BUSY_POLL (unset; US: every protocol's receive busy-polls the NIC
# for up to US microseconds, dp's read() by DP_WAIT_BUSY_POLL and the
# sockets' by SO_BUSY_POLL, meant with DPPERF_RECV=block).
set -u
# shellcheck source=/dev/null
. /etc/dp/env

ITERS=${DPPERF_ITERS:-1000}
BYTES=${DPPERF_BYTES:-8388608}
RECV=${DPPERF_RECV:-spin}
BUSY=''
[ -n "${DPPERF_BUSY_POLL:-}" ] && BUSY="--busy-poll --poll-usecs $DPPERF_BUSY_POLL"
PROTOS="dp udp tcp"
CLIENT_NID=1
SERVER_NID=2
SERVER_IP=10.77.0.$SERVER_NID
OUT=/tmp/dpperf-demo.tsv

GUEST_TAG=guest-demo
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"
barrier() { dp-barrier "$1" "${2:-300}" || log "barrier $1 timed out"; }

case $DP_GUEST_ID in
0) role=client ;;
1) role=server ;;
*) role=idle ;;
esac

run_server() {	# run_server PROTO STEP
	ready=/tmp/dpperf-ready.$2
	rm -f "$ready"
	args=""
	[ "$1" = dp ] && args="--peer $CLIENT_NID $SRVARGS"
	[ "$1" = tcp ] && args="$SRVARGS"
	# shellcheck disable=SC2086 # args, BUSY: zero or more words
	dpperf server --proto "$1" --recv "$RECV" --ready "$ready" --idle 180 $args $BUSY &
	pid=$!
	wait_ready "$ready" "$pid" || log "$1 server did not come up"
	barrier "demo-$2-ready"
	wait "$pid"
	st=$?
	barrier "demo-$2-done"
	return $st
}

run_client() {	# run_client PROTO STEP
	peer=$SERVER_IP
	[ "$1" = dp ] && peer=$SERVER_NID
	barrier "demo-$2-ready"
	# shellcheck disable=SC2086 # SIZES, BUSY: zero or more words
	dpperf client --proto "$1" --recv "$RECV" --peer "$peer" --test "$TESTS" \
		--iters "$ITERS" --bytes "$PBYTES" --connect-timeout 60000 $SIZES $BUSY \
		--tag "mode=$MODE" >>"$OUT"
	st=$?
	barrier "demo-$2-done"
	# 2 = some sizes failed (printed as nan): still a measurement
	[ $st -eq 2 ] && log "$1: some sizes failed, see the results"
	[ $st -eq 2 ] && return 0
	return $st
}

# Passes: one on Ethernet (every test, the default sizes); two on Myrinet,
# 1 byte (bandwidth over DPPERF_MYRI_SMALL_BYTES, 65536 messages) and the
# largest message (over DPPERF_MYRI_BYTES, 8 MiB): one byte count for
# both would give millions of 1-byte messages or a handful of large ones.
PASSES="all allrev sweep sweeprev"
[ "${DP_BACKEND:-}" = myri ] && PASSES="small large"
SRVARGS=''
pass_args() {	# pass_args PASS: MODE, TESTS, SIZES, PBYTES, SRVARGS
	SRVARGS=''
	case $1 in
	all|allrev) MODE=realtime TESTS=pingpong,bw,rate SIZES='' PBYTES=$BYTES ;;
	sweep|sweeprev) MODE=realtime TESTS=bwsize SIZES='' PBYTES=${DPPERF_SWEEP_BYTES:-16777216}
		SRVARGS="--pool 4194304" ;;
	small) MODE=myri TESTS=pingpong,bw SIZES="--sizes 1"
		PBYTES=${DPPERF_MYRI_SMALL_BYTES:-65536} ;;
	large) MODE=myri TESTS=pingpong,bw SIZES="--sizes $max"
		PBYTES=${DPPERF_MYRI_BYTES:-8388608} ;;
	esac
}
# pass_protos PASS: the protocols in the pass's order
pass_protos() {
	case $1 in
	*rev) r=''; for q in $PROTOS; do r="$q${r:+ $r}"; done; echo "$r" ;;
	*) echo "$PROTOS" ;;
	esac
}

echo "KTAP version 1"
echo "1..$((2 + $(echo "$PROTOS" | wc -w) * $(echo "$PASSES" | wc -w)))"
if [ "$DP_NGUESTS" -lt 2 ]; then
	log "needs 2 guests, have $DP_NGUESTS"
	for s in load $PROTOS rmmod; do result 0 "demo $s" "SKIP one guest"; done
	exit 0
fi
log "guest $DP_GUEST_ID is the $role; iters=$ITERS bytes=$BYTES recv=$RECV"
: >"$OUT"

# Myrinet: myri0 up with the demo's address (the server's is SERVER_IP);
# max: the largest message one Myrinet packet carries for dp and for UDP
# (dp's max_msg, or myri0's MTU less the IP and UDP headers)
max=
myri_setup() {
	ip addr add "10.77.0.$DP_NID/24" dev "$DP_IF" && ip link set "$DP_IF" up || return 1
	dpmax=$(dpctl node | awk '$1 == "max_msg" { print $2 }')
	udpmax=$(( $(cat "/sys/class/net/$DP_IF/mtu") - 28 ))
	max=$dpmax
	[ "$udpmax" -lt "$max" ] && max=$udpmax
	log "myri: dp max_msg $dpmax, UDP in one packet $udpmax: sizes 1 and $max"
	barrier demo-myri-up
	[ "$role" = client ] || return 0
	ping -c 2 -w 30 "$SERVER_IP" >/dev/null || { log "no ping to $SERVER_IP over $DP_IF"; return 1; }
}

dp-load
st=$?
if [ "$st" -eq 0 ] && [ "${DP_BACKEND:-}" = myri ]; then
	myri_setup || st=1
fi
result $st "dp-load${max:+, $DP_IF up}"
barrier demo-loaded

for pass in $PASSES; do
	pass_args "$pass"
	for p in $(pass_protos "$pass"); do
		step=$p
		[ "$pass" = all ] || step=$p-$pass
		case $role in
		server) run_server "$p" "$step"; result $? "dpperf $step server" ;;
		client) run_client "$p" "$step"; result $? "dpperf $step client" ;;
		*) barrier "demo-$step-ready"; barrier "demo-$step-done"
			result 0 "dpperf $step" "SKIP idle guest" ;;
		esac
	done
done

if [ "$role" = client ]; then
	echo DPPERF-BEGIN
	cat "$OUT"
	echo DPPERF-END
fi

rmmod dp
result $? "rmmod dp"
