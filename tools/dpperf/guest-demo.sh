#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-demo.sh: dpperf between two guests in real time (harness mode "demo",
# docs/harness.md).  Guest 0 is the client, guest 1 the server, any others
# only keep step at the barriers.  For each of dp (spin receive, as in the
# paper), UDP and TCP (TCP_NODELAY): ping-pong, bandwidth and message rate.
#
# Prints KTAP (one test per step) and, on guest 0, the results:
#   DPPERF-BEGIN
#   mode=realtime<TAB>proto<TAB>test<TAB>size<TAB>value<TAB>unit   (and # comments)
#   DPPERF-END
# Environment: DPPERF_ITERS (1000), DPPERF_BYTES (2097152), DPPERF_RECV (spin).
set -u
# shellcheck source=/dev/null
. /etc/dp/env

ITERS=${DPPERF_ITERS:-1000}
BYTES=${DPPERF_BYTES:-2097152}
RECV=${DPPERF_RECV:-spin}
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

run_server() {	# run_server PROTO
	ready=/tmp/dpperf-ready.$1
	rm -f "$ready"
	peer=""
	[ "$1" = dp ] && peer="--peer $CLIENT_NID"
	# shellcheck disable=SC2086 # peer: zero or two words
	dpperf server --proto "$1" --recv "$RECV" --ready "$ready" --idle 180 $peer &
	pid=$!
	wait_ready "$ready" "$pid" || log "$1 server did not come up"
	barrier "demo-$1-ready"
	wait "$pid"
	st=$?
	barrier "demo-$1-done"
	return $st
}

run_client() {	# run_client PROTO
	peer=$SERVER_IP
	[ "$1" = dp ] && peer=$SERVER_NID
	barrier "demo-$1-ready"
	dpperf client --proto "$1" --recv "$RECV" --peer "$peer" --test pingpong,bw,rate \
		--iters "$ITERS" --bytes "$BYTES" --connect-timeout 60000 \
		--tag mode=realtime >>"$OUT"
	st=$?
	barrier "demo-$1-done"
	# 2 = some sizes failed (printed as nan): still a measurement
	[ $st -eq 2 ] && log "$1: some sizes failed, see the results"
	[ $st -eq 2 ] && return 0
	return $st
}

echo "KTAP version 1"
echo "1..$((2 + $(echo "$PROTOS" | wc -w)))"
if [ "$DP_NGUESTS" -lt 2 ]; then
	log "needs 2 guests, have $DP_NGUESTS"
	for s in load $PROTOS rmmod; do result 0 "demo $s" "SKIP one guest"; done
	exit 0
fi
log "guest $DP_GUEST_ID is the $role; iters=$ITERS bytes=$BYTES recv=$RECV"
: >"$OUT"

dp-load
result $? "dp-load"
barrier demo-loaded

for p in $PROTOS; do
	case $role in
	server) run_server "$p"; result $? "dpperf $p server" ;;
	client) run_client "$p"; result $? "dpperf $p client" ;;
	*) barrier "demo-$p-ready"; barrier "demo-$p-done"; result 0 "dpperf $p" "SKIP idle guest" ;;
	esac
done

if [ "$role" = client ]; then
	echo DPPERF-BEGIN
	cat "$OUT"
	echo DPPERF-END
fi

rmmod dp
result $? "rmmod dp"
