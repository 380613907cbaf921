# SPDX-License-Identifier: GPL-2.0
# Shared by run_local.sh and run_cluster.sh (busybox sh).  KTAP helpers, the
# module, and the two-node setup: namespaces dpA and dpB joined by a veth
# pair, plus dpL (a node with a NID and no NIC) and dpN (a node without NID).
# DPT_NIC=tulip joins dpA and dpB through dp's own tulip driver instead: the
# module is loaded without backend=, dpA gets tulip0 and dpB tulip1 (two
# tulips on one QEMU hub: cluster.py --mode tulip), DPT_SYSA/DPT_SYSB name
# their PCI devices in sysfs, and the hub's third NIC, a Linux netdev the
# harness names dptap, goes to namespace dpR to forge frames (DPT_RAWNS/IF;
# DPT_RAWMIN: it pads every frame to Ethernet's 46-byte minimum payload).
# DPT_NIC=myri joins them through dp's myri backend: dpA gets myri0 and dpB
# myri1, two simulated LANai cards on one switch (cluster.py --mode
# myricore); a NART entry there holds the peer's NIC address and the source
# route to it (DPT_ROUTEA: to A's card, DPT_ROUTEB: to B's, from the
# harness's /etc/dp/cluster), DPT_SYSA/DPT_SYSB name their PCI devices.
# There is no Linux netdev on the fabric to forge frames from.

DP_KO=${DP_KO:-/usr/lib/dp/dp.ko}
T=${DPT_TMP:-/tmp/dp-selftests}
mkdir -p "$T"

export DPT_NSA=dpA DPT_NSB=dpB DPT_NIDA=11 DPT_NIDB=12
export DPT_IFA=vethA DPT_IFB=vethB
export DPT_MACA=02:00:00:00:00:0b DPT_MACB=02:00:00:00:00:0c
export DPT_NSL=dpL DPT_NIDL=21 DPT_NSN=dpN
export DPT_IFL=
DPT_NIC=${DPT_NIC:-veth}
export DPT_NIC
if [ "$DPT_NIC" = tulip ]; then
	export DPT_IFA=tulip0 DPT_IFB=tulip1 DPT_RAWNS=dpR DPT_RAWIF=dptap DPT_RAWMIN=46
fi
if [ "$DPT_NIC" = myri ]; then
	export DPT_IFA=myri0 DPT_IFB=myri1
fi
DPT_TULIP_DRV=/sys/bus/pci/drivers/dp_tulip
DPT_MYRI_DRV=/sys/bus/pci/drivers/dp_myri
# The backend lib.sh attaches dpA and dpB with (the tests' dpctl node set).
case $DPT_NIC in
tulip | myri) DPT_BACKEND=$DPT_NIC ;;
*) DPT_BACKEND=netdev ;;
esac
export DPT_BACKEND

# iproute2's ip (busybox sh and timeout would run busybox's own ip applet,
# which has no netns): the first real binary on the usual paths.
DPT_IP=ip
for p in /usr/sbin/ip /sbin/ip /usr/bin/ip /bin/ip; do
	if [ -x "$p" ] && [ ! -L "$p" ]; then
		DPT_IP=$p
		break
	fi
done
export DPT_IP

ktap_n=0
ktap_failed=0

# ktap_result STATUS NAME [DIRECTIVE]
ktap_result() {
	ktap_n=$((ktap_n + 1))
	if [ "$1" = ok ]; then
		echo "ok $ktap_n $2${3:+ # $3}"
	else
		ktap_failed=$((ktap_failed + 1))
		echo "not ok $ktap_n $2"
	fi
}

diag() { echo "# $*"; }

# A test script whose count of checks is known only at its end: its KTAP
# goes to a file meanwhile, and ktap_flush N prints the version line, the
# plan 1..N, then the results, in the spec's order.  A SIGTERM (the runner's
# timeout) flushes what there is with one more failed result.
ktap_buffer() {
	KTAP_BUF=$T/ktap-buf.$$
	exec 8>&1 >"$KTAP_BUF"
	trap 'ktap_term' TERM
}
ktap_flush() {
	exec >&8 8>&-
	trap - TERM
	echo "KTAP version 1"
	echo "1..$1"
	cat "$KTAP_BUF"
	rm -f "$KTAP_BUF"
}
ktap_term() {
	n=$((n + 1))
	echo "not ok $n terminated (SIGTERM: the runner's timeout?)"
	ktap_flush "$n"
	exit 1
}

# Indent a test program's KTAP as subtests; anything else becomes a comment.
nest() {
	sed -E -e 's/^(KTAP version|1\.\.|ok |not ok |#)/  \1/' -e t -e 's/^/  # /' "$1"
}

# ready LOG: wait (up to 60 s) until the receiver writing LOG has bound its
# endpoint (dp_rel_peer recv prints "ready"); the sender waits for the
# barrier that follows, not for a guessed time.  run_rel.sh, run_soak.sh.
ready() {
	i=0
	while ! grep -q '^ready' "$1" 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^ready' "$1" 2>/dev/null || echo "receiver never bound ($1)" >>"$T/step.log"
}

mod_loaded() { grep -q '^dp ' /proc/modules; }

mod_load() {
	mod_loaded && return 0
	timeout 30 insmod "$DP_KO" "$@"
}

# dev_exists DEV: DEV is a device of the initial namespace or of a named one.
dev_exists() {
	"$DPT_IP" link show dev "$1" >/dev/null 2>&1 && return 0
	for ns in $(ls /run/netns 2>/dev/null); do
		"$DPT_IP" -n "$ns" link show dev "$1" >/dev/null 2>&1 && return 0
	done
	return 1
}

# After rmmod: the kernel log lines past the first $1 that say a node's
# device "went away" name only devices that are really gone (the netdev
# notifier's replay at unload used to claim every device; dp_netdev.c).
unload_claims_ok() {
	bad=$(dmesg | grep 'went away, detached' | tail -n +"$(($1 + 1))" |
		awk '{ for (i = 2; i <= NF; i++) if ($i == "went") print $(i - 1) }' |
		while read -r d; do dev_exists "$d" && echo "$d"; done)
	[ -z "$bad" ] && return 0
	diag "rmmod dp said these devices went away, and they are still here: $bad"
	return 1
}

# Unload; a few tries (a closing fd may still be on its way out).
mod_unload() {
	mod_loaded || return 0
	gone0=$(dmesg | grep -c 'went away, detached')
	i=0
	while ! timeout 30 rmmod dp 2>"$T/rmmod.err"; do
		i=$((i + 1))
		if [ $i -ge 20 ]; then
			diag "rmmod dp: $(cat "$T/rmmod.err")"
			return 1
		fi
		sleep 0.1
	done
	[ $i -gt 0 ] && diag "rmmod dp needed $((i + 1)) tries"
	! mod_loaded && unload_claims_ok "$gone0"
}

# disc_wait N SECONDS: until neighbour discovery has N entries in the NART
# of the current namespace's node (run_cluster.sh, run_disc.sh)
disc_wait() {
	i=0
	while [ "$(dpctl nart 2>/dev/null | grep -c '# discovered')" -lt "$1" ]; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

ns_clean() {
	for ns in dpA dpB dpL dpN dpR; do
		[ -e "/run/netns/$ns" ] && timeout 30 "$DPT_IP" netns del "$ns"
	done
	return 0
}

# Run a command, logging it; fail on a non-zero status.
x() {
	echo "+ $*" >>"$T/setup.log"
	timeout 30 "$@" >>"$T/setup.log" 2>&1
}

# The PCI device (sysfs directory) dp named $1 (tulip0, ...).
tulip_sys() {
	for d in "$DPT_TULIP_DRV"/0000:*; do
		[ "$(cat "$d/dp_name" 2>/dev/null)" = "$1" ] && { echo "$d"; return 0; }
	done
	return 1
}

# Node $1 (namespace) takes tulip $2 with NID $3; prints its MAC.
tulip_attach() {
	x "$DPT_IP" netns exec "$1" dpctl node set nid "$3" dev "$2" backend "${4:-tulip}" &&
		"$DPT_IP" netns exec "$1" dpctl node | sed -n 's/^lladdr //p'
}

# The PCI device (sysfs directory) dp named $1 (myri0, ...).
myri_sys() {
	for d in "$DPT_MYRI_DRV"/0000:*; do
		[ "$(cat "$d/dp_name" 2>/dev/null)" = "$1" ] && { echo "$d"; return 0; }
	done
	return 1
}

# The source route to the card with NIC address $1, from the harness's
# cluster file ("NID NICADDR ROUTE" per card, each route from the other).
myri_route() {
	awk -v a="$1" '$2 == a && NF >= 3 { print $3; exit }' /etc/dp/cluster 2>/dev/null | grep .
}

# Two nodes on two LANai cards (on one switch, or on two: cluster.py
# --myri-hosts), each with the other's NIC address and route in its NART.
pair_up_myri() {
	mod_load || return 1
	x "$DPT_IP" netns add dpA && x "$DPT_IP" netns add dpB && x "$DPT_IP" netns add dpL && x "$DPT_IP" netns add dpN &&
	x "$DPT_IP" -n dpA link set lo up && x "$DPT_IP" -n dpB link set lo up || return 1
	DPT_MACA=$(tulip_attach dpA "$DPT_IFA" "$DPT_NIDA" myri) && [ -n "$DPT_MACA" ] &&
	DPT_MACB=$(tulip_attach dpB "$DPT_IFB" "$DPT_NIDB" myri) && [ -n "$DPT_MACB" ] || return 1
	DPT_ROUTEA=$(myri_route "$DPT_MACA") && DPT_ROUTEB=$(myri_route "$DPT_MACB") || return 1
	DPT_SYSA=$(myri_sys "$DPT_IFA") && DPT_SYSB=$(myri_sys "$DPT_IFB") || return 1
	export DPT_MACA DPT_MACB DPT_ROUTEA DPT_ROUTEB DPT_SYSA DPT_SYSB
	x "$DPT_IP" netns exec dpA dpctl nart add "$DPT_NIDB" "$DPT_MACB" "$DPT_ROUTEB" &&
	x "$DPT_IP" netns exec dpB dpctl nart add "$DPT_NIDA" "$DPT_MACA" "$DPT_ROUTEA" &&
	x "$DPT_IP" netns exec dpL dpctl node set nid "$DPT_NIDL"
}

# No backend= flag: a node attaches any registered backend by name.
pair_up_tulip() {
	mod_load || return 1
	x "$DPT_IP" netns add dpA && x "$DPT_IP" netns add dpB && x "$DPT_IP" netns add dpL && x "$DPT_IP" netns add dpN &&
	x "$DPT_IP" -n dpA link set lo up && x "$DPT_IP" -n dpB link set lo up || return 1
	x "$DPT_IP" netns add dpR && x "$DPT_IP" link set "$DPT_RAWIF" netns dpR &&
	x "$DPT_IP" -n dpR link set "$DPT_RAWIF" up || return 1
	DPT_MACA=$(tulip_attach dpA "$DPT_IFA" "$DPT_NIDA") && [ -n "$DPT_MACA" ] &&
	DPT_MACB=$(tulip_attach dpB "$DPT_IFB" "$DPT_NIDB") && [ -n "$DPT_MACB" ] || return 1
	DPT_SYSA=$(tulip_sys "$DPT_IFA") && DPT_SYSB=$(tulip_sys "$DPT_IFB") || return 1
	export DPT_MACA DPT_MACB DPT_SYSA DPT_SYSB
	x "$DPT_IP" netns exec dpA dpctl nart add "$DPT_NIDB" "$DPT_MACB" &&
	x "$DPT_IP" netns exec dpB dpctl nart add "$DPT_NIDA" "$DPT_MACA" &&
	x "$DPT_IP" netns exec dpL dpctl node set nid "$DPT_NIDL"
}

pair_up() {
	: >"$T/setup.log"
	ns_clean
	if [ "$DPT_NIC" = tulip ]; then
		pair_up_tulip
		return
	fi
	if [ "$DPT_NIC" = myri ]; then
		pair_up_myri
		return
	fi
	mod_load || return 1
	x "$DPT_IP" netns add dpA && x "$DPT_IP" netns add dpB && x "$DPT_IP" netns add dpL && x "$DPT_IP" netns add dpN &&
	x "$DPT_IP" link add "$DPT_IFA" netns dpA type veth peer name "$DPT_IFB" netns dpB &&
	x "$DPT_IP" -n dpA link set "$DPT_IFA" address "$DPT_MACA" mtu 9000 up &&
	x "$DPT_IP" -n dpB link set "$DPT_IFB" address "$DPT_MACB" mtu 9000 up &&
	x "$DPT_IP" -n dpA link set lo up && x "$DPT_IP" -n dpB link set lo up &&
	x "$DPT_IP" netns exec dpA dpctl node set nid "$DPT_NIDA" dev "$DPT_IFA" &&
	x "$DPT_IP" netns exec dpB dpctl node set nid "$DPT_NIDB" dev "$DPT_IFB" &&
	x "$DPT_IP" netns exec dpA dpctl nart add "$DPT_NIDB" "$DPT_MACB" &&
	x "$DPT_IP" netns exec dpB dpctl nart add "$DPT_NIDA" "$DPT_MACA" &&
	x "$DPT_IP" netns exec dpL dpctl node set nid "$DPT_NIDL"
}

# The initial namespace as this guest's node, as the harness sets it up.
dpload_up() {
	: >"$T/setup.log"
	ns_clean
	mod_unload || return 1
	x dp-load
}

# Tear down; fails if the module does not unload cleanly.
pair_down() {
	ns_clean
	mod_unload
}

# Processes but this shell that hold /dev/dp open or mapped.
dp_holders() {
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = $$ ] && continue
		if ls -l "$p/fd" 2>/dev/null | grep -q ' /dev/dp$' ||
			grep -q ' /dev/dp$' "$p/maps" 2>/dev/null; then
			echo "${p#/proc/}"
		fi
	done
}

# This guest's pauses: its uptime jumping by more than 3 s across a 1 s
# sleep means its host did not run it meanwhile (a loaded host, steal
# time), which a peer cannot tell from a dead node once it passes
# unreach_ms.  Diagnostics for a failed stream, not a verdict.  Run in
# the background; pauses prints the last 5 of them.
pausewatch() {
	prev=$(tr -d . </proc/uptime | cut -d' ' -f1)
	while sleep 1; do
		now=$(tr -d . </proc/uptime | cut -d' ' -f1)
		[ $((now - prev)) -gt 300 ] &&
			echo "paused $(((now - prev) / 100)) s before uptime $((now / 100)) s" >>"$T/pauses"
		prev=$now
	done
}
pauses() {
	: >>"$T/pauses"
	echo "pauses of this guest over 3 s: $(wc -l <"$T/pauses")"
	sed 's/^/  /' "$T/pauses" 2>/dev/null | tail -n 5
}

# Where every process holding /dev/dp waits in the kernel, and the kernel's
# dp work: for a stalled stream, what the writer and the session's work
# were doing (a wait for credit, the window, a TX slot, a lock).
dp_stacks() {
	for p in $(dp_holders); do
		echo "$(cat "/proc/$p/comm" 2>/dev/null)($p) $(cat "/proc/$p/wchan" 2>/dev/null):"
		sed 's/^/  /' "/proc/$p/stack" 2>/dev/null
	done
	for p in /proc/[0-9]*; do
		case $(cat "$p/comm" 2>/dev/null) in
		kworker*)
			grep -q 'dp_' "$p/stack" 2>/dev/null || continue
			echo "$(cat "$p/comm")(${p#/proc/}):"
			sed 's/^/  /' "$p/stack"
			;;
		esac
	done
}

# After a test timed out: busybox's timeout kills the test's own process,
# not what it started in the background, which would then hold the module
# into the next test.  Kill those, and say which they were, where they
# waited in the kernel and what each node's endpoints held (for the hang).
kill_leftovers() {
	pids=$(dp_holders)
	[ -n "$pids" ] || return 0
	dp_stacks 2>&1 | sed 's/^/# /'
	for ns in "$DPT_NSA" "$DPT_NSB"; do
		echo "# dpctl ep in $ns:"
		"$DPT_IP" netns exec "$ns" dpctl ep 2>&1 | sed 's/^/#   /'
		echo "# dpctl stats in $ns (those not 0):"
		"$DPT_IP" netns exec "$ns" dpctl stats 2>&1 |
			awk '$NF != "0" { printf "#   %s\n", $0 }'
	done
	echo "# $1: killed what it left holding /dev/dp:$(for p in $pids; do
		printf ' %s(%s)' "$(cat "/proc/$p/comm" 2>/dev/null)" "$p"; done)"
	# shellcheck disable=SC2086 # one pid per word
	kill -KILL $pids 2>/dev/null
	sleep 1
}

# A test's bound is for a hang, not a speed: on make check-debug's kernels
# (KASAN or KCSAN under TCG, about 3 to 5 times slower) every bound is 4 times
# as long.  DPT_TMO_SCALE overrides.
# There too, xfer traces the frames of any drop for no endpoint
# (dp_rx_no_ep), one of which was once unexplained on the KASAN kernel;
# elsewhere only with DPT_TRACE_DROPS=1: switching an event on patches
# kernel text, which under TCG once hung a 2-vCPU guest (dp_trace.c).
case $(uname -r) in
*-dpdebug|*-dpkcsan)
	DPT_TMO_SCALE=${DPT_TMO_SCALE:-4}
	DPT_TRACE_DROPS=${DPT_TRACE_DROPS:-1}
	export DPT_TMO_SCALE DPT_TRACE_DROPS
	;;
esac

# run_test NAME TIMEOUT SETUP CMD...: SETUP is "pair" (two nodes, module
# loaded), "dpload" (module loaded by dp-load for the initial namespace) --
# both torn down and rmmod checked afterwards -- or "none".  One top-level
# KTAP result; the program's own KTAP lines become its subtests.
run_test() {
	name=$1 tmo=$(($2 * ${DPT_TMO_SCALE:-1})) setup=$3
	shift 3
	log="$T/$name.log"
	: >"$log"
	st=0
	t0=$(date +%s)
	if [ "$setup" = dpload ] && ! dpload_up; then
		echo "# setup failed: dp-load" >"$log"
		sed 's/^/# /' "$T/setup.log" >>"$log"
		st=1
	elif [ "$setup" = pair ] && ! pair_up; then
		echo "# setup failed:" >"$log"
		sed 's/^/# /' "$T/setup.log" >>"$log"
		st=1
	fi
	if [ $st -eq 0 ]; then
		# SIGTERM first: a program prints what it has (ktap.h), then KILL
		timeout -k 10 "$tmo" "$@" >>"$log" 2>&1
		st=$?
		if [ $st -eq 124 ] || [ $st -eq 137 ] || [ $st -eq 143 ]; then
			echo "# $name: timed out after ${tmo}s (status $st)" >>"$log"
		fi
		# after any failure, also a test that caught the TERM and ended
		# on its own; a test that passes and leaves one fails the teardown
		[ $st -eq 0 ] || kill_leftovers "$name" >>"$log"
	fi
	if [ "$setup" != none ] && ! pair_down >>"$log" 2>&1; then
		echo "# teardown: the module did not unload cleanly" >>"$log"
		[ $st -eq 0 ] && st=1
	fi
	# how long it took, setup and teardown included (make check's budget)
	echo "# $name: $(($(date +%s) - t0)) s" >>"$log"
	nest "$log"
	if [ $st -eq 4 ]; then
		ktap_result ok "$name" "SKIP $(sed -n 's/.*# SKIP //p' "$log" | tail -n 1)"
	elif [ $st -eq 0 ] && grep -q '^1\.\.' "$log" && ! grep -q '^not ok' "$log"; then
		ktap_result ok "$name"
	else
		[ $st -eq 0 ] && echo "# $name: exit 0 but no plan or a failed subtest"
		ktap_result fail "$name"
	fi
}
