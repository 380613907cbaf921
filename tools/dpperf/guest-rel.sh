#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-rel.sh: goodput and 1-byte round trip under injected loss, for the
# reliability report (docs/reliability-report.md).  Two guests joined through
# the fault relay (cluster.py --guests 2 --faults none --mode run --cmd
# 'sh /usr/lib/dp/perf/guest-rel.sh'); guest 0 is the client and sets the
# relay's drop rate, guest 1 the server.  For each loss in $REL_LOSS
# (0 1 5 percent, every frame on the link, both ways, TCP's included) and
# each of dp (reliable edges, the default), dp-raw (DP_BIND_RAW) and TCP:
# ping-pong of 1 byte and bandwidth at $REL_BW_SIZE bytes; while dp's
# bandwidth runs, its edge's congestion window is sampled by one
# `dpctl ep watch` (a "# loss=N dp bw window" line in the results; no
# process is started per sample, which under TCG took some 40% of the
# goodput it sampled), and the client node's frame counters over
# each dp bandwidth run follow it ("# loss=N dp bw frames, client": the ACKs
# it heard per message it sent, and what it resent); the server prints the
# receiver's drops over the same run to its own log.
#
# Prints KTAP and, on guest 0, the results between DPPERF-BEGIN/END, led by
# loss=N (the report script reads them from the guest's output log).
# Environment: REL_LOSS, REL_ITERS (300), REL_BYTES (8388608: one lost frame
# or timeout is not the figure), REL_BW_SIZE (1024).
set -u
# shellcheck source=/dev/null
. /etc/dp/env

LOSSES=${REL_LOSS:-0 1 5}
ITERS=${REL_ITERS:-300}
BYTES=${REL_BYTES:-8388608}
BW_SIZE=${REL_BW_SIZE:-1024}
PROTOS="dp dp-raw tcp"
CLIENT_NID=1
SERVER_NID=2
SERVER_IP=10.77.0.$SERVER_NID
OUT=/tmp/dpperf-rel.tsv

GUEST_TAG=guest-rel
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"
barrier() { dp-barrier "$1" "${2:-600}" || log "barrier $1 timed out"; }

# dpperf arguments for PROTO: the transport, and a per-message timeout
# (a raw ping lost under loss is a failed size, not a 2 s stall per loss).
args() {
	case $1 in
	dp) echo "--proto dp --timeout 10000" ;;
	dp-raw) echo "--proto dp --dp-raw --timeout 300" ;;
	tcp) echo "--proto tcp --timeout 10000" ;;
	esac
}

run_server() {	# run_server PROTO STEP LOSS TEST
	ready=/tmp/dpperf-ready.$2
	rm -f "$ready"
	peer=""
	[ "$1" != tcp ] && peer="--peer $CLIENT_NID"
	[ "$1" != tcp ] && frames_now >/tmp/dpperf-frames.0
	# shellcheck disable=SC2046,SC2086 # word splitting wanted
	dpperf server $(args "$1") --recv block --ready "$ready" --idle 600 $peer &
	pid=$!
	wait_ready "$ready" "$pid" || log "$1 server did not come up"
	barrier "rel-$2-ready"
	wait "$pid"
	st=$?
	if [ "$1" != tcp ] && [ "$4" = bw ]; then
		frames_now >/tmp/dpperf-frames.1
		# what the receiver dropped: the resends' causes (its log only)
		frames_summary server "$1" "$3" /tmp/dpperf-frames.0 /tmp/dpperf-frames.1 \
			rx_msgs rx_drop_seq rx_drop_dup rx_drop_full rx_drop_ring \
			rx_drop_csum tx_ctrl
	fi
	barrier "rel-$2-done"
	return $st
}

# The client's endpoints every WATCH_MS through dp's bandwidth run, by one
# dpctl (ep watch), into WATCH; dpperf lingers LINGER_MS after its tests so
# that a dump after the run has the edge's final counts.
WATCH_MS=100
LINGER_MS=250
WATCH=/tmp/dpperf-watch

# watch_windows FILE: from the dumps in FILE, the reliable edge's congestion
# window in bytes and RTO, one "CWND RTO_MS" line per dump that has an edge.
watch_windows() {
	awk 'function out() { if (c != "") print c, r; c = r = "" }
	     /^# t_ms / { out(); next }
	     { for (i = 1; i < NF; i++) {
		if ($i == "cwnd") c = $(i + 1)
		if ($i == "rto_ms") r = $(i + 1) } }
	     END { out() }' "$1"
}

# window_summary LOSS FILE: one comment line for the results: what the
# window was while dp's bandwidth ran (the report's reading of the goodput).
window_summary() {
	rto=$(cut -d' ' -f2 "$2" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
	cut -d' ' -f1 "$2" | sort -n | awk -v loss="$1" -v rto="$rto" '
		{ c[NR] = $1 }
		END {
			if (!NR) { print "# loss=" loss " dp bw window: no samples"; exit }
			print "# loss=" loss " dp bw window: " NR " samples, cwnd bytes min " c[1] \
			      " median " c[int((NR + 1) / 2)] " max " c[NR] ", rto_ms median " rto
		}'
}

# timeouts_summary LOSS FILE: one comment line: the retransmission timeouts
# of the client's edges in FILE's last dump that has them (taken while
# dpperf lingers) and how many of those the receiver's duplicate report
# undid as spurious.
timeouts_summary() {
	awk -v loss="$1" '
		function keep() { if (n) { T = t; U = u; N = n } t = u = n = 0 }
		/^# t_ms / { keep(); next }
		{ for (i = 1; i < NF; i++) {
			if ($i == "timeouts") { t += $(i + 1); n++ }
			if ($i == "undone") u += $(i + 1) } }
		END {
			keep()
			if (!N) { print "# loss=" loss " dp bw timeouts: no edge seen"; exit }
			print "# loss=" loss " dp bw timeouts: " T ", undone as spurious " U
		}' "$2"
}

# frames_now: the node's counters, "name value" lines (dpctl stats).
frames_now() {
	dpctl stats 2>/dev/null
}

# frames_summary WHO PROTO LOSS BEFORE AFTER NAMES...: one comment line: the
# counters NAMES over a bandwidth run (AFTER less BEFORE), and on the
# client the ACKs it heard per message it sent.
frames_summary() {
	who=$1 p=$2 loss=$3 before=$4 after=$5
	shift 5
	awk -v who="$who" -v p="$p" -v loss="$loss" -v names="$*" '
		FNR == NR { b[$1] = $2; next }
		{ d[$1] = $2 - b[$1] }
		END {
			printf "# loss=%s %s bw frames, %s:", loss, p, who
			n = split(names, k, " ")
			for (i = 1; i <= n; i++)
				printf " %s %d", k[i], d[k[i]]
			if (who == "client" && d["tx_msgs"] > 0)
				printf ", %.3f ACKs heard per message", d["rx_ctrl"] / d["tx_msgs"]
			print ""
		}' "$before" "$after"
}

run_client() {	# run_client PROTO STEP LOSS TEST
	peer=$SERVER_IP
	[ "$1" != tcp ] && peer=$SERVER_NID
	what="--test pingpong --sizes 1 --iters $ITERS"
	[ "$4" = bw ] && what="--test bw --sizes $BW_SIZE --bytes $BYTES"
	barrier "rel-$2-ready"
	[ "$1" != tcp ] && frames_now >/tmp/dpperf-frames.0
	watcher=""
	if [ "$1" = dp ] && [ "$4" = bw ]; then
		dpctl ep watch "$WATCH_MS" >"$WATCH" 2>/dev/null &
		watcher=$!
	fi
	# shellcheck disable=SC2046,SC2086 # word splitting wanted
	dpperf client $(args "$1") --recv block --peer "$peer" $what \
		${watcher:+--linger "$LINGER_MS"} \
		--connect-timeout 60000 --tag "loss=$3" >>"$OUT" 2>>/tmp/dpperf-rel.err
	st=$?
	if [ -n "$watcher" ]; then
		kill "$watcher" 2>/dev/null
		wait "$watcher" 2>/dev/null
		watch_windows "$WATCH" >/tmp/dpperf-window
		window_summary "$3" /tmp/dpperf-window >>"$OUT"
		timeouts_summary "$3" "$WATCH" >>"$OUT"
	fi
	if [ "$1" != tcp ] && [ "$4" = bw ]; then
		frames_now >/tmp/dpperf-frames.1
		frames_summary client "$1" "$3" /tmp/dpperf-frames.0 /tmp/dpperf-frames.1 \
			tx_msgs tx_retrans tx_ctrl rx_ctrl >>"$OUT"
	fi
	barrier "rel-$2-done"
	# 2 = the size failed (nan): still a measurement
	[ $st -le 2 ]
}

echo "KTAP version 1"
echo "1..$((1 + 2 * $(echo "$LOSSES" | wc -w) * $(echo "$PROTOS" | wc -w)))"
if [ "$DP_NGUESTS" -lt 2 ] || ! dp-link stats frames >/dev/null 2>&1; then
	log "needs 2 guests and the fault relay"
	exit 1
fi
role=server
[ "$DP_GUEST_ID" -eq 0 ] && role=client
: >"$OUT"
dp-load
result $? "dp-load"
barrier rel-loaded

for loss in $LOSSES; do
	[ "$role" = client ] && { dp-link set "drop=$loss" >/dev/null || log "dp-link failed"; }
	for p in $PROTOS; do
		for t in pingpong bw; do
			step="$p-$loss-$t"
			if [ "$role" = server ]; then
				run_server "$p" "$step" "$loss" "$t"
				result $? "dpperf $p $t server, loss $loss%"
			else
				run_client "$p" "$step" "$loss" "$t"
				result $? "dpperf $p $t client, loss $loss%"
			fi
		done
	done
done
[ "$role" = client ] && dp-link reset >/dev/null

if [ "$role" = client ]; then
	echo DPPERF-BEGIN
	cat "$OUT"
	sed 's/^/# /' /tmp/dpperf-rel.err
	echo DPPERF-END
fi
