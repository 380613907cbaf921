#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-icount.sh: dpperf in ONE guest under QEMU -icount (harness mode
# "icount", docs/harness.md), where guest time counts instructions, so the
# host's noise drops out.  eth0 and eth1 sit on one emulated hub; each goes
# into its own network namespace, which is its own dp node:
#   netns a: eth0, 10.78.0.1, NID 1 (client)    netns b: eth1, 10.78.0.2, NID 2 (server)
# One vCPU: everything receives with blocking calls (--recv block); spinning
# would measure the scheduler's time slice, not the path.
# dp, UDP, TCP: ping-pong, bandwidth and message rate; raw AF_PACKET:
# ping-pong only; dp on the e1000s also its message rate by kernel entry
# (dp_sendv batches, io_uring).
#
# With two tulips (cluster.py --mode icount --nic tulip), UDP, TCP and raw run
# first over Linux's tulip driver (eth0, eth1); then the driver is removed,
# dp.ko is loaded with backend=tulip and dp runs over its own driver on the
# same two emulated chips (tulip0 in netns a, tulip1 in b), in the same boot.
# Result lines are then led by mode=icount-tulip, and the sizes stop at 1448
# (the tulip's 1500-byte MTU less dp's header) so every protocol has them.
# Then bandwidth against size, 1 byte to 1 MiB (dpperf --test bwsize, the
# realtime sweep's, DPPERF_BYTES per size, at least 8 and at most 20000
# messages): dp in fragments past 1448 (the server's pool 4 MiB, so that
# 1 MiB fits its max_msg), TCP (its server announces the same 4 MiB, so
# dpperf's windows between acknowledgements are as large), UDP to 16 KiB.
#
# Prints KTAP and the results between DPPERF-BEGIN and DPPERF-END, each
# result line led by mode=icount.
# Environment: DPPERF_ITERS (200), DPPERF_BYTES (2097152).
#
# Profile (make profile: dpg.profile=1 on the kernel command line, two
# tulips, an image with perf): only dp runs, a 1-byte ping-pong of
# DPPERF_PROFILE_ITERS (20000) round trips under `perf record -a -e
# cpu-clock -c PERIOD -g` (PERIOD ns of guest time, 50000).  Under -icount
# guest time counts instructions, so a cpu-clock sample stands for PERIOD
# instructions wherever it lands.  `perf report` by symbol is printed
# between PROFILE-BEGIN and PROFILE-END (tools/dpperf/profile-report).
# dpg.profile=bw:SIZE profiles dp's bandwidth phase instead: DPPERF_PROFILE_BYTES
# (16 MiB; dpg.profbytes=N, make profile's PROFILE_BYTES, instead) in
# SIZE-byte messages (the server's pool 4 MiB, so up to 1 MiB; a TCP
# server announces the same).
# dpg.profile=send:N profiles what the sender alone spends per message
# (dpperf --test sendcost, run_entry's): DPPERF_PROFILE_MESSAGES (20000)
# 64-byte messages on an unreliable edge to a node nobody answers for, one
# write() each (N=1) or dp_sendv() batches of N.
# dpg.profile=rt:SIZE profiles the ping-pong in SIZE-byte messages instead
# of 1-byte ones.
# dpg.profproto=tcp (or udp; make profile's PROFILE_PROTO) runs the
# profiled ping-pong or bandwidth phase over that protocol on the same link
# instead of dp's, so that dp's profile can be read beside it (not with
# send:N, which is dp's own).
# dpg.exact=1 (make profile PROFILE_EXACT=1): no perf; the phase runs
# between two insn-marks, and QEMU's insn-count plugin counts every
# instruction in between by address; the modules' symbols (dp.ko's among
# them) are printed between DPSYMS-BEGIN and DPSYMS-END, the kernel's text
# symbols gzipped and base64-encoded between KSYMS-BEGIN and KSYMS-END, to
# name them.
#
# dpg.sendcost=TAG (make demo, a second pass on e1000s with QEMU's interrupt
# moderation on): only the sender-alone runs by kernel entry (run_sendcost),
# their lines led by mode=TAG.  Each sendcost run also logs the interrupts,
# NET_RX softirqs and context switches the one vCPU took meanwhile.
set -u
# shellcheck source=/dev/null
. /etc/dp/env

ITERS=${DPPERF_ITERS:-200}
BYTES=${DPPERF_BYTES:-2097152}
# dp first: its session opens before the e1000s' links are up (about 2 s
# after boot), which dpperf must ride out (selftests t_dpperf.sh).  On the
# tulips dp comes last: dp's driver takes the chips from Linux's.
PROTOS=${DPPERF_PROTOS:-dp udp tcp raw}
OUT=/tmp/dpperf-icount.tsv
NART=/tmp/dpperf-icount.nart
MODE=icount
PP_SIZES="" BW_SIZES=""
TULIP=0
if [ "$(basename "$(readlink /sys/class/net/eth0/device/driver 2>/dev/null)")" = tulip ]; then
	TULIP=1 MODE=icount-tulip PROTOS="udp tcp raw dp"
	PP_SIZES=1,16,32,64,128,256,512,768,1024,1280,1448
	BW_SIZES=64,256,512,1024,1448
fi
PROFILE=0 PROFILE_BW="" PROFILE_SEND="" PROFILE_RT=""
PROFILE_ARG=$(sed -n 's/.*dpg\.profile=\([^ ]*\).*/\1/p' /proc/cmdline)
case $PROFILE_ARG in
1) PROFILE_RT=1 ;;	# the 1-byte ping-pong: rt:1
bw:[0-9]*) PROFILE_BW=${PROFILE_ARG#bw:} BYTES=${DPPERF_PROFILE_BYTES:-16777216}
	PROFILE_BYTES=$(sed -n 's/.*dpg\.profbytes=\([0-9]*\).*/\1/p' /proc/cmdline)
	[ -n "$PROFILE_BYTES" ] && BYTES=$PROFILE_BYTES ;;
send:[0-9]*) PROFILE_SEND=${PROFILE_ARG#send:} ;;
rt:[0-9]*) PROFILE_RT=${PROFILE_ARG#rt:} ;;
esac
PROFILE_PROTO=$(sed -n 's/.*dpg\.profproto=\([^ ]*\).*/\1/p' /proc/cmdline)
PROFILE_PROTO=${PROFILE_PROTO:-dp}
SEND_MSGS=${DPPERF_PROFILE_MESSAGES:-20000}
# dpg.sendcost=TAG: see the head of this file.
SENDCOST_TAG=$(sed -n 's/.*dpg\.sendcost=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -n "$SENDCOST_TAG" ] && MODE=$SENDCOST_TAG PROTOS=dp
EXACT=0
grep -q 'dpg\.exact=1' /proc/cmdline && EXACT=1
MARK=/usr/lib/dp/perf/insn-mark
if [ -n "$PROFILE_BW$PROFILE_SEND$PROFILE_RT" ]; then
	PROFILE=1 PROTOS=$PROFILE_PROTO PP_SIZES=${PROFILE_RT:-1} BW_SIZES=""
	ITERS=${DPPERF_PROFILE_ITERS:-20000}
	PERIOD=${DPPERF_PROFILE_PERIOD:-50000}
	[ $EXACT -eq 1 ] && PERIOD=1	# counts, not samples
	echo 0 >/proc/sys/kernel/kptr_restrict	# perf names kernel and dp.ko symbols
	echo -1 >/proc/sys/kernel/perf_event_paranoid
fi

GUEST_TAG=guest-icount
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

setup() {
	for i in eth0 eth1; do
		[ -e "/sys/class/net/$i" ] || { log "no $i (needs dpg.nics=2)"; return 1; }
	done
	mac_a=$(cat /sys/class/net/eth0/address)
	mac_b=$(cat /sys/class/net/eth1/address)
	printf '1 %s\n2 %s\n' "$mac_a" "$mac_b" >"$NART"
	netns_if a eth0 10.78.0.1 && netns_if b eth1 10.78.0.2 || return 1
	# dp comes later, on its own driver; without dp in the run, idle
	if [ $TULIP -eq 1 ]; then
		[ $HANDOVER -eq 1 ] || insmod /usr/lib/dp/dp.ko || dp_ok=0
		return 0
	fi
	if insmod /usr/lib/dp/dp.ko; then
		dp_node a 1 eth0 "$NART" && dp_node b 2 eth1 "$NART" || dp_ok=0
	else
		dp_ok=0
	fi
	return 0
}

# Hand both tulips from Linux's driver to dp's: the namespaces go (eth0 and
# eth1 return to the initial one), tulip.ko is removed, dp.ko backend=tulip
# takes the chips as tulip0 and tulip1.
tulip_to_dp() {
	ip netns del a && ip netns del b && rmmod tulip || return 1
	insmod /usr/lib/dp/dp.ko backend=tulip || return 1
	ip netns add a && ip netns add b &&
		ip -n a link set lo up && ip -n b link set lo up || return 1
	dp_node a 1 tulip0 "$NART" backend tulip && dp_node b 2 tulip1 "$NART" backend tulip
}

client() {	# client PROTO TESTS SIZES ARGS...
	proto=$1 t=$2 sz=$3
	shift 3
	set -- ip netns exec a dpperf client --proto "$proto" --recv block --test "$t" \
		--iters "$ITERS" --bytes "$BYTES" --tag "mode=$MODE" ${sz:+--sizes $sz} "$@"
	if [ $EXACT -eq 1 ]; then
		# counted by QEMU between the marks: every instruction, no sampling
		"$MARK" && "$@" >>"$OUT"
		st=$?
		"$MARK"
		return $st
	fi
	if [ $PROFILE -eq 1 ]; then
		# every CPU, kernel and user: the whole round trip on the one vCPU
		perf record -q -a -g -e cpu-clock -c "$PERIOD" -o /tmp/perf.data -- "$@" >>"$OUT"
		return
	fi
	"$@" >>"$OUT"
}

# The profile by symbol, with sample counts, between PROFILE-BEGIN/END.
profile_print() {
	echo PROFILE-BEGIN
	pp=""
	[ "$PROFILE_PROTO" = dp ] || pp=" proto $PROFILE_PROTO"
	if [ -n "$PROFILE_BW" ]; then
		echo "bw $PROFILE_BW bytes $BYTES period $PERIOD$pp"
	elif [ -n "$PROFILE_SEND" ]; then
		echo "send 64 batch $PROFILE_SEND messages $SEND_MSGS period $PERIOD"
	else
		echo "iters $ITERS period $PERIOD size $PROFILE_RT$pp"
	fi
	if [ $EXACT -eq 1 ]; then
		echo PROFILE-END
		print_syms
		return
	fi
	perf report -i /tmp/perf.data --stdio --sort sym -n --no-children -q -g none 2>/dev/null |
		sed '/^$/d'
	echo PROFILE-END
	# Inclusive: a sample lands where interrupts come back on (cpu-clock
	# is a timer, not an NMI), so spin_unlock_irqrestore's "self" share
	# belongs to the caller that held the lock; the call chains say whose.
	echo PROFILE-CHILDREN-BEGIN
	perf report -i /tmp/perf.data --stdio --sort sym -n --children -q -g none 2>/dev/null |
		sed '/^$/d' | head -n 200
	echo PROFILE-CHILDREN-END
}

# run_one PROTO TESTS SIZES: a server in b (background) for one client
# session in a; SIZES empty for dpperf's defaults.
run_one() {
	srv="" cli=""
	case $1 in
	dp) srv="--peer 1" cli="--peer 2" ;;
	udp | tcp) cli="--peer 10.78.0.2" ;;
	raw) srv="--ifname eth1 --peer $mac_a" cli="--ifname eth0 --peer $mac_b" ;;
	esac
	ready=/tmp/dpperf-ready.$1
	rm -f "$ready"
	# dp's pool 4 MiB for large messages; a TCP server announces the same,
	# so dpperf's windows between acknowledgements are as large for both
	case $1 in dp | tcp) { [ "$2" = bwsize ] || [ -n "$PROFILE_BW" ]; } &&
		srv="$srv --pool 4194304" ;;
	esac
	# shellcheck disable=SC2086 # srv, cli: several words
	ip netns exec b dpperf server --proto "$1" --recv block --ready "$ready" --idle 180 $srv &
	pid=$!
	if ! wait_ready "$ready" "$pid"; then
		log "$1 server did not come up"
		kill "$pid" 2>/dev/null
		wait "$pid"
		return 1
	fi
	# shellcheck disable=SC2086 # ENTRY: dpperf's --batch/--uring words
	client "$1" "$2" "$3" $cli ${ENTRY:-}
	cst=$?
	wait "$pid"
	if [ $cst -eq 1 ] && [ "$1" = dp ]; then	# what each node saw
		for ns in a b; do
			echo "# dp in netns $ns:"
			ip netns exec $ns dpctl stats | grep -v ' 0$' | sed 's/^/#   /'
		done
	fi
	[ $cst -eq 2 ] && log "$1: some sizes failed, see the results"
	return $cst
}

# dp's message rate of 64-byte messages by kernel entry (the fast-entry
# table; one write() each is run()'s rate): dp_sendv batches of 8, 32 and
# 128, io_uring one and 32 per submit.  Then what the sender alone spends
# per message that way (dpperf --test sendcost): an unreliable edge to NID
# 9, whose MAC no NIC on the hub has, so no receiver runs on the one vCPU.
# On the e1000s only: what a batch saves is above the NIC.
SINK_NID=9 SINK_MAC=02:00:00:00:00:09
# What else the one vCPU did meanwhile, from /proc/stat and /proc/softirqs:
# interrupts, NET_RX softirqs (where e1000's NAPI poll reclaims sent frames),
# context switches.  Without interrupt moderation (make demo's e1000s,
# mitigation=off) every frame's completion interrupts the sender.
sysnap() {
	awk '$1 == "intr" { i = $2 } $1 == "ctxt" { c = $2 } END { printf "%s %s ", i, c }' /proc/stat
	awk '$1 == "NET_RX:" { printf "%s\n", $2 }' /proc/softirqs
}

# The sink in a's NART, once eth0 has its carrier: the e1000s' links come
# up about 2 s after boot, and until then a send spins on ENOBUFS (a
# sendcost run straight after boot took 3035 ns a write() for 2020).
sink() {
	w=0
	while [ "$(ip netns exec a cat /sys/class/net/eth0/carrier 2>/dev/null)" != 1 ] &&
		[ $w -lt 100 ]; do
		sleep 0.1
		w=$((w + 1))
	done
	[ $w -gt 0 ] && log "eth0's carrier came after $w waits of 0.1 s"
	ip netns exec a dpctl nart add $SINK_NID $SINK_MAC
}

sendcost() {	# sendcost MESSAGES [DPPERF-ARGS...]: 64-byte messages to the sink
	m=$1
	shift
	s0=$(sysnap)
	client dp sendcost 64 --dp-raw --dpid 102 --peer $SINK_NID --messages "$m" "$@"
	st=$?
	echo "$s0 $(sysnap)" | awk -v m="$m" -v e="${*:-one write() each}" '{
		printf "# %s: sendcost %s, %d messages: %d interrupts, %d NET_RX softirqs, %d context switches\n",
			"'"$GUEST_TAG"'", e, m, $4 - $1, $6 - $3, $5 - $2 }'
	return $st
}

# The sender alone by kernel entry: one write() each, dp_sendv() batches
# of 8, 32 and 128, io_uring one and 32 per submit.
run_sendcost() {
	sink || return 1
	for e in "" "--batch 8" "--batch 32" "--batch 128" "--uring --batch 1" \
		"--uring --batch 32"; do
		# shellcheck disable=SC2086 # e: dpperf's --batch/--uring words
		sendcost 20000 $e || return 1
	done
}

run_entry() {
	for ENTRY in "--batch 8" "--batch 32" "--batch 128" "--uring --batch 1" \
		"--uring --batch 32"; do
		run_one dp rate 64
		[ $? -eq 1 ] && { ENTRY=""; return 1; }
	done
	ENTRY=""
	run_sendcost
}

# make profile PROFILE_RUN=send:N: run_entry's sendcost alone, one write()
# each or dp_sendv() batches of N, under the profile (client() marks it).
run_send_profile() {
	batch=""
	[ "$PROFILE_SEND" -gt 1 ] && batch="--batch $PROFILE_SEND"
	sink || return 1
	# shellcheck disable=SC2086 # batch: dpperf's --batch words
	sendcost "$SEND_MSGS" $batch
}

# run PROTO: ping-pong, bandwidth and message rate (raw, and the profile:
# ping-pong only); dp on the e1000s also by kernel entry (run_entry); 0
# unless a whole session failed.
run() {
	if [ -n "$SENDCOST_TAG" ]; then
		run_sendcost
		return
	fi
	if [ -n "$PROFILE_SEND" ]; then
		[ "$1" = dp ] || { log "dpg.profproto=$1: send:N profiles dp only"; return 1; }
		run_send_profile
		return
	fi
	if [ -n "$PROFILE_BW" ]; then
		run_one "$1" bw "$PROFILE_BW"
		[ $? -ne 1 ]
		return
	fi
	tests=pingpong,bw,rate
	{ [ "$1" = raw ] || [ $PROFILE -eq 1 ]; } && tests=pingpong
	if [ -z "$PP_SIZES" ]; then
		run_one "$1" "$tests" ""
		[ $? -eq 1 ] && return 1
		[ "$1" = dp ] && [ $PROFILE -eq 0 ] && { run_entry; return; }
		return 0
	fi
	run_one "$1" pingpong "$PP_SIZES"
	[ $? -eq 1 ] && return 1
	[ "$tests" = pingpong ] && return 0
	run_one "$1" bw "$BW_SIZES"
	[ $? -eq 1 ] && return 1
	run_one "$1" rate ""
	[ $? -eq 1 ] && return 1
	run_one "$1" bwsize ""
	[ $? -ne 1 ]
}

# on the tulips, dp's driver takes the chips only if dp is measured
HANDOVER=0
case " $PROTOS " in *" dp "*) HANDOVER=$TULIP ;; esac
echo "KTAP version 1"
echo "1..$((2 + HANDOVER + PROFILE + $(echo "$PROTOS" | wc -w)))"
log "iters=$ITERS bytes=$BYTES recv=block (one vCPU)"
: >"$OUT"
dp_ok=1
setup
st=$?
result $st "netns a and b with eth0 and eth1"
[ $dp_ok -eq 1 ] || log "dp setup failed: dp is not measured"

for p in $PROTOS; do
	if [ "$p" = dp ] && [ $TULIP -eq 1 ] && [ $st -eq 0 ]; then
		tulip_to_dp || dp_ok=0
		result $((1 - dp_ok)) "Linux's tulip driver hands both chips to dp.ko backend=tulip"
		[ $dp_ok -eq 1 ] || { result 1 "dpperf dp"; continue; }
	fi
	if [ $st -ne 0 ] || { [ "$p" = dp ] && [ $dp_ok -ne 1 ]; }; then
		result 1 "dpperf $p"
		continue
	fi
	run "$p"
	result $? "dpperf $p"
done

echo DPPERF-BEGIN
cat "$OUT"
echo DPPERF-END

if [ $PROFILE -eq 1 ]; then
	profile_print >/tmp/profile.txt
	cat /tmp/profile.txt
	# what the run resent or dropped, for the profile's reader: each
	# namespace's dp node (a sends, b receives)
	echo DPSTATS-BEGIN
	for ns in a b; do
		ip netns exec $ns dpctl stats 2>&1 | sed "s/^/$ns:/"
	done
	echo DPSTATS-END
	# a profile with fewer than 100 samples says nothing; an exact one
	# needs dp's symbols (its counts are on the host)
	if [ $EXACT -eq 1 ] && [ "$PROFILE_PROTO" != dp ]; then
		grep -q '^KSYMS-END' /tmp/profile.txt	# dp.ko need not be loaded
	elif [ $EXACT -eq 1 ]; then
		grep -q ' dp_snd_send' /tmp/profile.txt
	else
		[ "$(awk '/^PROFILE-END/ { exit } /%/ { s += $2 } END { print s + 0 }' \
			/tmp/profile.txt)" -ge 100 ]
	fi
	pst=$?
	what="the $PROFILE_PROTO ping-pong ($PROFILE_RT-byte, $ITERS round trips, period $PERIOD)"
	[ -n "$PROFILE_BW" ] && what="$PROFILE_PROTO's bandwidth ($BYTES bytes in $PROFILE_BW-byte messages, period $PERIOD)"
	kind=perf
	[ $EXACT -eq 1 ] && kind=exact what="${what%, period*}, every instruction counted)"
	result $pst "$kind profile of $what"
fi

# Deleting the namespaces returns eth0/eth1 to the initial one.
ip netns del a 2>/dev/null
ip netns del b 2>/dev/null
if [ $dp_ok -eq 1 ] || lsmod | grep -q '^dp '; then
	rmmod dp
	result $? "rmmod dp"
else
	result 1 "rmmod dp (dp.ko was not loaded)"
fi
