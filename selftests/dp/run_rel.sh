#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lossless edges across two guests joined through the fault relay
# (cluster.py --guests 2 --faults none; docs/reliability.md, section 10).
# Guest 0 sends and drives the link with dp-link; guest 1 receives and
# checks every message (dp_rel_peer: nonce, index, length, CRC32C).  Both
# print the same plan; the guests meet at dp-barrier (serial line, not the
# link) around every step.
#
#   rel_load       dp-load in both guests
#   rel_stream     $DPT_REL_N (100000) messages of random sizes under
#                  drop=5,dup=2,reorder=5,corrupt=1: all once, in order,
#                  intact; the relay corrupted frames and dp caught them.
#                  Sent in runs of 1 to 16 (DPT_REL_BATCH): a run of one by
#                  write(), the others by dp_sendv, whose small messages
#                  share link frames (bundles), lost and corrupted whole.
#                  It and rel_large fail, with both sides' sessions, once
#                  the sender sent no new message for 150 s or the receiver
#                  got none for 120 s (watched, recv's IDLE_S)
#   rel_large      seeded sizes from 1 byte to 1 MiB, $DPT_REL_LARGE_KB (4096)
#                  KiB, or $DPT_REL_LARGE_N messages if set (REL_LARGE_N of
#                  tools/check.sh), under the same faults: every byte
#                  checked (dp_large recv/send; the seed, DPT_REL_LARGE_SEED,
#                  printed)
#   rel_stall      the receiver does not read for 10 s, and on until both
#                  senders are held back: O_NONBLOCK gets EAGAIN with all
#                  acknowledged and no POLLOUT, a blocking sender waits
#                  (tx_blocked in dpctl ep), rx_drop_full stays 0, then all
#                  arrive
#   rel_heal       a 5 s partition mid-stream, then heal: nothing lost
#   rel_bound      a partition past unreach_ms (3 s here): the sender gets
#                  ETIMEDOUT, no hang
#   rel_freeze     mid-stream the link is cut and the sender's whole guest is
#                  stopped by the host for 5 s (unreach_ms 3 s), the cut
#                  healed as it resumes: the sender's own stall is not the
#                  peer's silence, so no ETIMEDOUT and everything arrives
#   rel_restart    partition, the receiver's module removed and inserted
#                  again, a new receiver, heal: the sender gets ECONNRESET
#                  (or ETIMEDOUT), the new receiver sees only the new stream
#   rel_rmmod      partition with retransmissions pending (seen: a cut
#                  with nothing in flight is healed and made again): the
#                  sender is killed, what it had in flight is counted
#                  undelivered, rmmod is clean; then both unload
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env
me=${DP_GUEST_ID:-0}
N=${DPT_REL_N:-100000}
P=./dp_rel_peer

echo "KTAP version 1"
if [ "${DP_NGUESTS:-1}" -ne 2 ] || ! dp-link stats frames >/dev/null 2>&1; then
	echo "1..1"
	echo "ok 1 rel_cluster # SKIP needs 2 guests joined through the fault relay (--faults)"
	exit 0
fi
echo "1..9"
peer_nid=$((2 - me))	# guest 0 is NID 1, guest 1 NID 2
t=0
res() { # RC DESCRIPTION: one result, diagnostics from $T/step.log
	t=$((t + 1))
	sed 's/^/# /' "$T/step.log"
	if [ "$1" -eq 0 ]; then echo "ok $t $2"; else echo "not ok $t $2"; ktap_failed=$((ktap_failed + 1)); fi
	: >"$T/step.log"
}
bar() { timeout 1300 dp-barrier "rel-$1" 1200 || echo "# barrier rel-$1 timed out"; }
link() { dp-link "$@" >>"$T/step.log" 2>&1 || echo "dp-link $* failed" >>"$T/step.log"; }
ctr() { # NAME: this node's counter
	dpctl stats 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'
}
param() { echo "$2" >"/sys/module/dp/parameters/$1"; }
cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }	# uptime in 1/100 s
# grown NAME N [TENTHS]: wait (up to TENTHS/10 s, 120 s by default) until
# this node's counter NAME grew by N from its value in $base (the stream
# is under way before the link is cut).
grown() {
	i=0
	while [ $(( $(ctr "$1") - base )) -lt "$2" ] && [ $i -lt "${3:-1200}" ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
: >"$T/step.log"
ktap_failed=0

# 1. load
ns_clean
mod_unload >/dev/null 2>&1
timeout 60 dp-load >>"$T/step.log" 2>&1 && mod_loaded
res $? "rel_load (nid $DP_NID)"
bar loaded

# What this node's sessions, counters and tulips say, for a failed step.
sessions() {
	{
		echo "dpctl ep:"; dpctl ep
		echo "dpctl stats (non-zero):"; dpctl stats | grep -v ' 0$'
		for d in "$DPT_TULIP_DRV"/0000:*; do
			[ -r "$d/dp_stats" ] && echo "tulip ${d##*/}: $(tr '\n' ' ' <"$d/dp_stats")"
		done
		echo "kernel stacks:"; dp_stacks
		pauses
	} >>"$T/step.log" 2>&1
}

# watched SECS CMD...: run CMD, a sender, with this node's sessions saved
# every 10 s ($T/ep.last); stopped once the node sent no new message for
# SECS s (a stalled stream fails its step with what its sessions said,
# instead of running into the harness's timeout with nothing said).
# Returns CMD's status.
watched() {
	wsecs=$1
	shift
	"$@" >>"$T/step.log" 2>&1 &
	wpid=$!
	wlast=$(ctr tx_msgs) wsame=0 wi=0
	while kill -0 $wpid 2>/dev/null; do
		sleep 1
		wi=$((wi + 1))
		[ $((wi % 10)) -eq 0 ] || continue
		dpctl ep >"$T/ep.new" 2>&1 && mv "$T/ep.new" "$T/ep.last"
		wnow=$(ctr tx_msgs)
		if [ "$wnow" = "$wlast" ]; then wsame=$((wsame + 10)); else wsame=0; fi
		wlast=$wnow
		if [ $wsame -ge "$wsecs" ]; then
			echo "no new message sent for $wsecs s: the sender is stopped; its stacks:" >>"$T/step.log"
			dp_stacks >>"$T/step.log" 2>&1
			kill $wpid 2>/dev/null
		fi
	done
	wait $wpid
	wst=$?
	if [ $wst -ne 0 ]; then
		echo "dpctl ep at most 10 s before the end:" >>"$T/step.log"
		cat "$T/ep.last" >>"$T/step.log" 2>/dev/null
		sessions
	fi
	return $wst
}

# The receiving side of a stream under the relay's faults: CMD (a receiver
# that prints "ready" once bound) runs while the sender sends, between the
# barriers STEP-bound and STEP; it passes if CMD passed and dp's CRC caught
# some of the relay's corrupted frames.
recv_faulted() { # STEP DESCRIPTION CMD...
	step=$1 what=$2
	shift 2
	csum0=$(ctr rx_drop_csum)
	"$@" >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar "$step-bound"
	wait $pid
	st=$?
	cat "$T/recv.log" >>"$T/step.log"
	csum=$(( $(ctr rx_drop_csum) - csum0 ))
	echo "rx_drop_csum +$csum" >>"$T/step.log"
	[ "$st" -eq 0 ] || sessions
	[ "$st" -eq 0 ] && [ "$csum" -gt 0 ]
	res $? "$what"
	bar "$step"
}

# 2. stream under faults; this guest's pauses recorded from here on (a
# failed step lists them: a peer silent past unreach_ms may be a guest its
# host did not run)
pausewatch &
pwatch=$!
if [ "$me" -eq 1 ]; then
	recv_faulted stream "rel_stream: $N messages under drop/dup/reorder/corrupt arrive once, in order, intact" \
		timeout 1300 $P recv 700 11 "$N" 0 1200 120
else
	bar stream-bound
	link set drop=5,dup=2,reorder=5,corrupt=1,seed=42
	start=$(date +%s)
	watched 150 timeout 1300 env DPT_REL_BATCH=16 $P send "$peer_nid" 700 11 "$N" 3
	st=$?
	echo "took $(( $(date +%s) - start )) s; relay: $(dp-link stats dropped duplicated reordered corrupted | tr '\n' ' ')" >>"$T/step.log"
	link reset
	res $st "rel_stream: $N messages sent under drop=5,dup=2,reorder=5,corrupt=1"
	bar stream
fi

# 2b. large messages under the same faults: seeded sizes from 1 byte to
# 1 MiB ($DPT_REL_LARGE_KB KiB in all, 4096; or $DPT_REL_LARGE_N messages of
# log-uniform sizes, about 54 KB each on average), fragments of one message
# lost, duplicated, reordered and corrupted; every byte checked (dp_large).
# Bounded (300 s to send, 360 to receive, 0.1 s more per counted message):
# a stuck large message fails this step without taking the steps after it
# down with the run's timeout.
LKB=${DPT_REL_LARGE_KB:-4096}
LN=${DPT_REL_LARGE_N:-0}
lwhat="$LKB KiB of messages"
lcap=""
if [ "$LN" -gt 0 ]; then
	LKB=0	# no byte limit: the count ends the stream
	lwhat="$LN messages"
	lcap=$LN
fi
lmore=$((LN / 10))
if [ "$me" -eq 1 ]; then
	# shellcheck disable=SC2086 # lcap: the count, or nothing
	recv_faulted large "rel_large: $lwhat of 1 B to 1 MiB under drop/dup/reorder/corrupt arrive once, in order, every byte right" \
		timeout $((360 + lmore)) ./dp_large recv 705 "$LKB" 4194304 $lcap
else
	bar large-bound
	link set drop=5,dup=2,reorder=5,corrupt=1,seed=43
	start=$(date +%s)
	LSEED=${DPT_REL_LARGE_SEED:-$start}
	retr0=$(ctr tx_retrans)
	# shellcheck disable=SC2086 # lcap: the count, or nothing
	watched 150 timeout $((300 + lmore)) ./dp_large send "$peer_nid" 705 "$LSEED" "$LKB" $lcap
	st=$?
	echo "took $(( $(date +%s) - start )) s, tx_retrans +$(( $(ctr tx_retrans) - retr0 )); relay: $(dp-link stats dropped duplicated reordered corrupted | tr '\n' ' ')" >>"$T/step.log"
	link reset
	res $st "rel_large: $lwhat of 1 B to 1 MiB sent under drop=5,dup=2,reorder=5,corrupt=1 (seed $LSEED)"
	bar large
fi

# 3. stall: the receiver does not read for 10 s, and on until guest 0 has
# seen its senders held back (a slow host must not end the stall first):
# the blocking sender waits in write (tx_blocked in dpctl ep), the
# O_NONBLOCK one gets EAGAIN with everything acknowledged and no POLLOUT.
if [ "$me" -eq 1 ]; then
	full0=$(ctr rx_drop_full)
	$P recv 702 77 0 -1 15 >"$T/nb.log" 2>&1 &
	nb=$!
	timeout 600 $P recv 701 12 3000 -10000 240 >"$T/recv.log" 2>&1 &
	rcv=$!
	ready "$T/nb.log"
	ready "$T/recv.log"
	bar stall-bound
	bar pushed
	kill -USR1 $nb $rcv
	wait $rcv
	st=$?
	wait $nb
	st2=$?
	cat "$T/recv.log" "$T/nb.log" >>"$T/step.log"
	full=$(( $(ctr rx_drop_full) - full0 ))
	echo "node rx_drop_full +$full" >>"$T/step.log"
	[ "$st" -eq 0 ] && [ "$st2" -eq 0 ] && [ "$full" -eq 0 ]
	res $? "rel_stall: after 10 s without reading, all 3000 arrive, rx_drop_full 0 (node +$full)"
	bar stall
else
	bar stall-bound
	timeout 600 $P send "$peer_nid" 701 12 3000 4 >"$T/send.log" 2>&1 &
	snd=$!
	timeout 180 $P nonblock "$peer_nid" 702 >>"$T/step.log" 2>&1
	st=$?
	# the blocking sender (DPID 1012) waits in write: dpctl ep says so
	i=0
	while [ $i -lt 240 ]; do
		blocked=$(dpctl ep 2>/dev/null | awk '$1 == "dpid" { d = $2 } d == 1012 {
			for (i = 1; i < NF; i++) if ($i == "tx_blocked") print $(i + 1) }')
		[ "${blocked:-0}" -gt 0 ] && break
		sleep 0.5
		i=$((i + 1))
	done
	echo "dpctl ep: DPID 1012 tx_blocked ${blocked:-?}" >>"$T/step.log"
	bar pushed
	wait $snd
	st2=$?
	cat "$T/send.log" >>"$T/step.log"
	[ "$st" -eq 0 ] && [ "$st2" -eq 0 ] && [ "${blocked:-0}" -gt 0 ]
	res $? "rel_stall: O_NONBLOCK gets EAGAIN, no POLLOUT; a blocking sender waits (tx_blocked ${blocked:-?})"
	bar stall
fi

# 4. a 5 s partition, then heal
if [ "$me" -eq 1 ]; then
	timeout 300 $P recv 703 13 20000 0 240 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar heal-bound
	wait $pid
	st=$?
	cat "$T/recv.log" >>"$T/step.log"
	res $st "rel_heal: 20000 messages across a 5 s partition, none lost"
	bar heal
else
	bar heal-bound
	base=$(ctr tx_msgs)
	retr0=$(ctr tx_retrans)
	$P send "$peer_nid" 703 13 20000 5 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 2000	# mid-stream, not after a guessed time
	link partition
	sleep 5	# the partition's length, what this step is about
	link heal
	wait $pid
	st=$?
	retr=$(( $(ctr tx_retrans) - retr0 ))
	cat "$T/send.log" >>"$T/step.log"
	echo "tx_retrans +$retr" >>"$T/step.log"
	[ "$retr" -gt 0 ] || st=1
	res $st "rel_heal: sent 20000 across a 5 s partition, with retransmissions (+$retr)"
	bar heal
fi

# 5. a partition past the bound
if [ "$me" -eq 1 ]; then
	timeout 120 $P recv 704 14 0 0 25 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar bound-bound
	wait $pid
	st=$?
	cat "$T/recv.log" >>"$T/step.log"
	res $st "rel_bound: what arrived before the partition is intact"
	bar bound
else
	param unreach_ms 3000
	bar bound-bound
	base=$(ctr tx_msgs)
	$P send-until "$peer_nid" 704 14 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 100
	link partition
	start=$(date +%s)
	st=1
	for i in $(seq 1 30); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			st=$?
			break
		fi
		sleep 1
	done
	took=$(( $(date +%s) - start ))
	kill -9 $pid 2>/dev/null
	link heal
	param unreach_ms 10000
	cat "$T/send.log" >>"$T/step.log"
	grep -q "err ETIMEDOUT" "$T/send.log" || st=1
	res $st "rel_bound: a partition past unreach_ms (3 s): ETIMEDOUT after ${took} s"
	bar bound
fi

# 5b. the sender's guest does not run for 5 s (a host that did not
# schedule it) while the link is cut, healed as it resumes: its timers
# fire 5 s late with the peer "silent" past unreach_ms (3 s), but the peer
# had no chance to answer.  The session must go on (it used to fail with
# ETIMEDOUT at the first late timer, as a long soak on a busy host saw).
if [ "$me" -eq 1 ]; then
	timeout 300 $P recv 707 18 3000 0 240 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar freeze-bound
	wait $pid
	st=$?
	cat "$T/recv.log" >>"$T/step.log"
	res $st "rel_freeze: all 3000 arrive across the sender's 5 s stall"
	bar freeze
else
	param unreach_ms 3000
	bar freeze-bound
	base=$(ctr tx_msgs)
	$P send "$peer_nid" 707 18 3000 6 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 200
	link partition
	s0=$(cs)
	link freeze 5 heal
	sleep 2	# the host stops us half a second into it, for 5 s
	stalled=$(( $(cs) - s0 ))
	echo "sent $(( $(ctr tx_msgs) - base )) before the cut; the 2 s sleep took ${stalled}0 ms" \
		>>"$T/step.log"
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 240 ]; do
		sleep 1
		i=$((i + 1))
	done
	kill -9 $pid 2>/dev/null
	wait $pid
	st=$?
	param unreach_ms 10000
	cat "$T/send.log" >>"$T/step.log"
	grep -q "err 0" "$T/send.log" || st=1
	# the condition the test is named for: the guest really was stopped (the
	# sleep ends when it runs again, about 5.5 s after the answer; unstopped,
	# 2 s)
	[ "$stalled" -ge 400 ] || { echo "the guest was not stopped" >>"$T/step.log"; st=1; }
	res $st "rel_freeze: a 5 s stall of the sender's own guest (unreach_ms 3 s): no ETIMEDOUT"
	bar freeze
fi

# 6. the receiver's module is removed and inserted again mid-stream
if [ "$me" -eq 1 ]; then
	$P recv 705 15 0 0 120 >"$T/old.log" 2>&1 &
	pid=$!
	ready "$T/old.log"
	bar restart-go
	bar restart-cut
	kill $pid
	wait $pid
	st=$?
	cat "$T/old.log" >>"$T/step.log"
	{ mod_unload && timeout 60 dp-load; } >>"$T/step.log" 2>&1 || st=1
	$P recv 705 16 2000 0 240 >"$T/new.log" 2>&1 &
	pid=$!
	ready "$T/new.log"
	bar restart-new
	wait $pid || st=1
	cat "$T/new.log" >>"$T/step.log"
	res $st "rel_restart: module reloaded mid-stream; the new receiver gets only the new stream"
	bar restart
else
	bar restart-go
	base=$(ctr tx_msgs)
	$P send-until "$peer_nid" 705 15 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 100
	link partition
	bar restart-cut
	bar restart-new
	link heal
	st=1
	for i in $(seq 1 30); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			st=$?
			break
		fi
		sleep 1
	done
	kill -9 $pid 2>/dev/null
	cat "$T/send.log" >>"$T/step.log"
	timeout 300 $P send "$peer_nid" 705 16 2000 6 >>"$T/step.log" 2>&1 || st=1
	res $st "rel_restart: the old stream fails with ECONNRESET or ETIMEDOUT, a new one flows"
	bar restart
fi

# 7. rmmod with retransmissions pending
if [ "$me" -eq 1 ]; then
	$P recv 706 17 0 0 300 >"$T/old.log" 2>&1 &
	pid=$!
	ready "$T/old.log"
	bar rmmod-go
	bar rmmod-done
	kill $pid
	wait $pid
	cat "$T/old.log" >>"$T/step.log"
	mod_unload >>"$T/step.log" 2>&1
	res $? "rel_rmmod: the receiver's node unloads"
else
	bar rmmod-go
	t0=$(cs)
	base=$(ctr tx_msgs)
	$P send-until "$peer_nid" 706 17 >"$T/send.log" 2>&1 &
	pid=$!
	# Retransmissions pending: seen, not assumed.  A cut that finds
	# nothing in flight (the sender waits for the receiver's credit, every
	# message acknowledged) sees none within 5 s (rto_max_ms is 1 s): heal,
	# let the stream go on, cut again; unreach_ms (10 s) is not reached.
	for cut in 1 2 3 4 5; do
		grown tx_msgs 100
		echo "cut $cut: tx_msgs +$(( $(ctr tx_msgs) - base )) after $(( $(cs) - t0 ))0 ms" >>"$T/step.log"
		link partition
		t0=$(cs)
		base=$(ctr tx_retrans)
		grown tx_retrans 1 50
		rt=$(( $(ctr tx_retrans) - base ))
		echo "tx_retrans +$rt after $(( $(cs) - t0 ))0 ms" >>"$T/step.log"
		[ "$rt" -gt 0 ] && break
		dpctl ep >>"$T/step.log" 2>&1
		link heal
		t0=$(cs)
		base=$(ctr tx_msgs)
	done
	dpctl ep >>"$T/step.log" 2>&1
	und0=$(ctr tx_undelivered)
	st=0
	[ "$rt" -gt 0 ] || { echo "none of 5 cuts found a message in flight" >>"$T/step.log"; st=1; }
	kill -0 $pid 2>/dev/null || { echo "the sender ended before the kill" >>"$T/step.log"; st=1; }
	kill -9 $pid
	wait $pid
	und=$(( $(ctr tx_undelivered) - und0 ))
	echo "closed with retransmissions pending: tx_undelivered +$und" >>"$T/step.log"
	cat "$T/send.log" >>"$T/step.log"
	[ "$und" -gt 0 ] || st=1
	[ "$st" -eq 0 ] || sessions
	mod_unload >>"$T/step.log" 2>&1 || st=1
	link heal
	res $st "rel_rmmod: sender killed with retransmissions pending, rmmod is clean"
	bar rmmod-done
fi
kill "$pwatch" 2>/dev/null
bar done
[ "$ktap_failed" -eq 0 ]
