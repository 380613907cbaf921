#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-mpi.sh: MPI over dp between QEMU guests (cluster.py --mode mpi or
# mpidemo, the image tools/mpi/mkimage.sh builds; docs/mpi.md).
#
# Every guest loads dp for its node as the other cluster modes do
# (dp-load: its NID, eth0, the NART), starts dprsh's server on its private
# address (10.77.0.NID, the emulated link only) so that mpirun can start
# orted there, and checks that libfabric finds the provider (fi_info -p dp,
# from its default directory and through FI_PROVIDER_PATH).  Guest 0 then
# drives the runs while the others wait at a barrier:
#   mode mpi (make check, 4 guests):
#     - dprsh runs a command on every other guest;
#     - fi_pingpong -p dp -e rdm (msg, then tagged, data checked) between
#       guest 0 (client) and guest 1 (server, started through dprsh);
#     - NetPIPE (NPmpi) between guests 0 and 1 over Open MPI on dp
#       (--mca pml cm --mca mtl ofi, FI_PROVIDER=dp), 1 B to MPI_NP_MAX
#       (default 32768) bytes, MPI_NP_REPEATS (20) repeats per size;
#     - mpi_test on all guests over dp, then over Open MPI's TCP transport
#       (--mca pml ob1 --mca btl tcp,self) to prove the program; its KTAP
#       is nested under one result each;
#     - dp carried the first run (guest 0's rx_msgs grew) and not the
#       second (unchanged);
#   mode mpidemo (make demo, 2 guests): NetPIPE from 1 B to 1 MiB over dp
#     and over TCP on the same link, four runs in the order dp, TCP, TCP,
#     dp (so that what drifts on the host over them falls on both alike),
#     printed for the report, which averages each protocol's two, as
#     mode=mpi lines between DPPERF-BEGIN and DPPERF-END (one-way latency
#     in us and bandwidth in 10^6 bytes/s at 1 B, 1 KiB, 64 KiB, 1 MiB);
#   mode mpiicount (make demo, ONE guest under -icount, where guest time
#     counts instructions): the same NetPIPE runs between the guest's two
#     NICs, each moved into a netns of its own with its own dp node, as
#     dpperf's icount guest does (tools/dpperf/guest-icount.sh):
#       netns a: eth0, 10.78.0.1, NID 1, host "na" (rank 0, mpirun)
#       netns b: eth1, 10.78.0.2, NID 2, host "nb" (rank 1)
#     Open MPI's out-of-band traffic and dprsh (a server in each netns) go
#     over a veth pair between a (10.79.0.1) and b (10.79.0.2), so that
#     they need no IP on the NICs; the MPI traffic is on the NICs.  On two
#     e1000s: dp (netdev backend), then TCP; dp must have carried the dp
#     run (node 2's rx_msgs grew) and none of the TCP run.  On two tulips
#     (--nic tulip): TCP over Linux's tulip driver first, then the driver
#     hands the chips to dp.ko backend=tulip (as in dpperf's icount guest)
#     and dp runs over its own driver, in the same boot.  Printed as
#     mode=mpi-icount (mpi-icount-tulip) lines.
#     make profile-mpi (dpg.mpiprofile=dp or tcp, dpg.exact=1, QEMU's
#     insn-count plugin; the e1000s): instead of the runs, one 1-byte
#     NetPIPE over that transport, and in its steady state a window of
#     guest time (MPI_PROFILE_NS, 0.3 s) between two insn-marks, whose
#     instructions QEMU counts by address; the round trips in it are the
#     frames node b's eth1 received meanwhile (each round trip sends one
#     to b).  Printed for tools/dpperf/profile-report: "mpi PROTO iters N
#     period 1" between PROFILE-BEGIN/END, the guest's symbols after,
#     and between USERMAPS-BEGIN/END the two ranks' executable mappings
#     ("pid N COMM", then their lines of /proc/N/maps; mpirun's too), by
#     which the report names user-space instructions by file and symbol.
# Every step is under a timeout (an mpi_test run 120 s, a NetPIPE run 300 s).  KTAP on stdout; exit 1 on a failure.
# shellcheck disable=SC2086 # LAUNCH, OVER_DP, OVER_TCP: lists of words
set -u
# shellcheck source=/dev/null
. /etc/dp/env
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

MPIDIR=$(dirname "$0")
T=/tmp/mpi
mkdir -p "$T"
# the icount guests' helpers (netns_if, dp_node, print_syms); its result()
# and counter give way to this file's, defined below
# shellcheck disable=SC2034 # guest-lib.sh's log() reads it
GUEST_TAG=guest-mpi
# shellcheck source=../dpperf/guest-lib.sh
. /usr/lib/dp/perf/guest-lib.sh
n=0 failed=0
diag() { echo "# $*"; }
up() { cut -d' ' -f1 /proc/uptime; }
t_last=$(up)
result() {	# result STATUS DESCRIPTION (and the step's time)
	n=$((n + 1))
	t=$(up)
	diag "took $(awk -v a="$t_last" -v b="$t" 'BEGIN { printf "%.1f", b - a }') s"
	t_last=$t
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
}
indent() { sed 's/^/  /'; }
barrier() { timeout $((${2:-300} + 30)) dp-barrier "$1" "${2:-300}" || diag "barrier $1 failed"; }
counter() { dpctl stats "$1" 2>/dev/null || echo -1; }

# dp_state: this guest's dp endpoints, its counters that are not 0,
# where the processes holding /dev/dp and dp's kworkers wait (the
# selftests' dp_stacks; lib.sh in a subshell, whose names are its own),
# and the state of every mpi_test and orted: a hung run's picture, before
# it is killed
dp_state() {
	echo "dpctl ep on $(hostname):"
	dpctl ep 2>&1
	echo "dpctl stats on $(hostname) (those not 0):"
	dpctl stats 2>&1 | awk '$NF != "0"'
	(. /usr/lib/dp/selftests/lib.sh && dp_stacks)
	echo "mpi_test and orted on $(hostname) (pid, state, wchan):"
	for p in /proc/[0-9]*; do
		c=$(cat "$p/comm" 2>/dev/null)
		case $c in
		mpi_test | orted)
			echo "  $c(${p#/proc/}) $(sed 's/.*) \(.\).*/\1/' "$p/stat") $(cat "$p/wchan")"
			;;
		esac
	done
}

# guest-mpi.sh --state: dp_state only (guest 0 asks the others, dprsh)
[ "${1:-}" = --state ] && { dp_state; exit 0; }

# Open MPI as root in the guests, in mpirun and in the orted dprsh starts
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
# Open MPI's out-of-band and TCP traffic on the emulated link only (mode
# mpiicount: out-of-band on the veth, TCP on the NICs)
oob=$DP_IF link=$DP_IF
[ "$DP_MODE" = mpiicount ] && oob=10.79.0.0/24 link=10.78.0.0/24
OMPI_MCA_oob_tcp_if_include=$oob OMPI_MCA_btl_tcp_if_include=$link
export OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_tcp_if_include

if [ "$DP_MODE" = mpidemo ]; then
	case $DP_GUEST_ID in 0) plan=7 ;; *) plan=3 ;; esac
elif [ "$DP_MODE" = mpiicount ]; then
	plan=7
	MPIPROF=$(sed -n 's/.*dpg\.mpiprofile=\([a-z]*\).*/\1/p' /proc/cmdline)
	[ -n "$MPIPROF" ] && plan=4
else
	case $DP_GUEST_ID in 0) plan=13 ;; *) plan=5 ;; esac
fi
echo "KTAP version 1"
echo "1..$plan"
if [ "$DP_NGUESTS" -lt 2 ] && [ "$DP_MODE" != mpiicount ]; then
	diag "needs 2 or more guests, has $DP_NGUESTS"
	i=0
	while [ $i -lt "$plan" ]; do result 1 "guest-mpi needs 2 guests"; i=$((i + 1)); done
	exit 1
fi

# mpirun COMMON: the launcher (orted through dprsh, no tree spawn)
LAUNCH="--mca plm_rsh_agent dprsh --mca plm_rsh_no_tree_spawn 1 --bind-to none"
OVER_DP="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include dp -x FI_PROVIDER
	--mca mtl_ofi_verbose 1"
OVER_TCP="--mca pml ob1 --mca btl tcp,self"
FI_PROVIDER=dp
export FI_PROVIDER

# fi_pingpong MODE SIZE ITERS: server on guest 1 through dprsh, client here
pingpong() {
	port=$((47600 + n))
	dprsh dpg1 "timeout 60 fi_pingpong -p dp -e rdm -m $1 -c -I $3 -S $2 -B $port" \
		>"$T/pp-srv" 2>&1 &
	srv=$!
	i=0
	while [ $i -lt 100 ] && ! dprsh dpg1 "ss -ltnH 'sport = :$port'" 2>/dev/null | grep -q .; do
		sleep 0.2
		i=$((i + 1))
	done
	timeout 60 fi_pingpong -p dp -e rdm -m "$1" -c -I "$3" -S "$2" -P $port 10.77.0.2 \
		>"$T/pp-cli" 2>&1
	cst=$?
	wait $srv
	sst=$?
	sed 's/^/# client: /' "$T/pp-cli"
	if [ $cst -ne 0 ] || [ $sst -ne 0 ]; then
		sed 's/^/# server: /' "$T/pp-srv"
		diag "client exited $cst, server $sst"
		return 1
	fi
}

# netpipe NAME OUTFILE MAX [REPEATS] MCA...: NPmpi between guests 0 and 1
# (mode mpiicount: nodes na and nb, mpirun in netns a; the two ranks share
# the one vCPU, so a rank with nothing to do yields it: spinning out its
# time slice would make every round trip a scheduler tick, 4 ms)
NP_NS="" NP_HOSTS=dpg0:1,dpg1:1
[ "$DP_MODE" = mpiicount ] &&
	NP_NS="ip netns exec a" NP_HOSTS="na:1,nb:1 --mca mpi_yield_when_idle 1"
netpipe() {
	name=$1 npout=$2 max=$3 reps=$4
	shift 4
	rm -f "$npout"
	$NP_NS timeout 300 mpirun $LAUNCH --host $NP_HOSTS -np 2 "$@" \
		NPmpi -p 0 -l 1 -u "$max" ${reps:+-n $reps} -o "$npout" >"$T/np-$name.log" 2>&1
	st=$?
	if [ "$DP_MODE" != mpi ]; then
		grep -- '-->' "$T/np-$name.log" | sed "s/^/# $name: /"
	else
		tail -n 4 "$T/np-$name.log" | sed "s/^/# $name: /"
	fi
	# every size up to the bound measured
	[ -s "$npout" ] && awk -v m="$max" '$1 == m { f = 1 } END { exit !f }' "$npout" || st=1
	[ $st -eq 0 ] || sed "s/^/# $name: /" "$T/np-$name.log" | tail -n 40
	return $st
}

# np_line FILE SIZE: "latency_us MB/s" at that size (NetPIPE's third column
# is the one-way time in seconds)
np_line() {
	awk -v s="$2" '$1 == s { printf "%.2f %.2f\n", $3 * 1e6, s / $3 / 1e6; exit }' "$1"
}

# mpitest NAME MCA...: mpi_test on every guest, its KTAP nested; a run
# still going 40 s before its bound (120 s; dpg.mpitmo=S to try the path)
# shows every guest's dp_state, then is killed
MT_TMO=$(sed -n 's/.*dpg\.mpitmo=\([0-9]*\).*/\1/p' /proc/cmdline)
MT_TMO=${MT_TMO:-120}
# dpg.mpirepeat=N (a stress run, by hand): N - 1 runs of mpi_test over dp
# before the counted one, until one fails, each shown only if it failed
MT_REPS=$(sed -n 's/.*dpg\.mpirepeat=\([0-9]*\).*/\1/p' /proc/cmdline)
# dpg.mpitrace (by hand): mpi_test's ranks say where they are (MPI_TEST_TRACE)
if grep -q 'dpg\.mpitrace' /proc/cmdline; then
	MPI_TEST_TRACE=1
	export MPI_TEST_TRACE
	OVER_DP="$OVER_DP -x MPI_TEST_TRACE"
fi
mpitest() {
	name=$1
	shift
	rm -f "$T/state-$name.taken"
	timeout "$MT_TMO" mpirun $LAUNCH --host "$hosts" -np "$DP_NGUESTS" "$@" \
		"$MPIDIR/mpi_test" >"$T/mt-$name.log" 2>&1 &
	mp=$!
	(
		sleep $((MT_TMO - 40))
		kill -0 $mp 2>/dev/null || exit 0
		: >"$T/state-$name.taken"
		# every guest at once: a picture takes seconds (dp_stacks
		# reads every process), and the run is killed 40 s later
		i=1
		while [ $i -lt "$DP_NGUESTS" ]; do
			timeout 30 dprsh "dpg$i" "$MPIDIR/guest-mpi.sh --state" \
				>"$T/state-$name.$i" 2>&1 &
			i=$((i + 1))
		done
		dp_state
		wait
		i=1
		while [ $i -lt "$DP_NGUESTS" ]; do
			cat "$T/state-$name.$i"
			i=$((i + 1))
		done
	) >"$T/state-$name.log" 2>&1 &
	wd=$!
	wait $mp
	st=$?
	# still running near its bound: the picture is being taken, let it finish
	if [ -e "$T/state-$name.taken" ]; then
		wait $wd
		if [ $st -ne 0 ]; then
			diag "mpi_test over $name: still running $((MT_TMO - 40)) s in (killed at $MT_TMO s); the guests' dp state then:"
			indent <"$T/state-$name.log" | sed 's/^/#/'
		fi
	else
		kill $wd 2>/dev/null
	fi
	# rank 0's KTAP first, then the other ranks' lines
	grep -v '^# rank [1-9]' "$T/mt-$name.log" | indent
	grep '^# rank [1-9]' "$T/mt-$name.log" | indent
	grep -q '^ok 11 ' "$T/mt-$name.log" || st=1
	return $st
}

# np_table MODE WHERE [RUN...]: the report's lines at 1 B, 1 KiB, 64 KiB and
# 1 MiB from the NetPIPE runs (default dp and tcp; a RUN is a protocol, or
# one with a 2 after it for its second run), between DPPERF-BEGIN and
# DPPERF-END
np_table() {
	mode=$1 where=$2
	shift 2
	[ $# -gt 0 ] || set -- dp tcp
	echo DPPERF-BEGIN
	echo "# mode=$mode NetPIPE (NPmpi -p 0 -l 1 -u 1048576) $where: dp = Open MPI pml cm + mtl ofi + FI_PROVIDER=dp; tcp = Open MPI pml ob1 + btl tcp"
	for run in "$@"; do
		proto=${run%2}
		for s in 1 1024 65536 1048576; do
			np_line "$T/np-$run.out" $s | while read -r lat bw; do
				printf 'mode=%s\t%s\tmpilat\t%s\t%s\tus\n' "$mode" "$proto" $s "$lat"
				printf 'mode=%s\t%s\tmpibw\t%s\t%s\tMB/s\n' "$mode" "$proto" $s "$bw"
			done
		done
	done
	echo DPPERF-END
}

# Mode mpiicount (netns_if, dp_node: guest-lib.sh; dp's NART is the one
# init wrote, both NICs' MACs).
ns_counter() { ip netns exec "$1" dpctl stats "$2" 2>/dev/null || echo -1; }
# The two namespaces and the veth between them; the NICs, and dp on them
# unless Linux's tulip driver has them first.
icount_setup() {
	netns_if a eth0 10.78.0.1 && netns_if b eth1 10.78.0.2 || return 1
	ip link add va netns a type veth peer name vb netns b &&
		ip -n a addr add 10.79.0.1/24 dev va && ip -n a link set va up &&
		ip -n b addr add 10.79.0.2/24 dev vb && ip -n b link set vb up || return 1
	[ $TULIP -eq 1 ] && return 0
	insmod /usr/lib/dp/dp.ko && dp_node a 1 eth0 "$DP_NART" && dp_node b 2 eth1 "$DP_NART"
}
# Hand both tulips from Linux's driver to dp's: back to the initial netns,
# tulip.ko removed, dp.ko backend=tulip takes the chips as tulip0 and tulip1.
tulip_to_dp() {
	ip -n a link set eth0 netns 1 && ip -n b link set eth1 netns 1 &&
		rmmod tulip && insmod /usr/lib/dp/dp.ko backend=tulip &&
		dp_node a 1 tulip0 "$DP_NART" backend tulip &&
		dp_node b 2 tulip1 "$DP_NART" backend tulip
}
# netpipe_dp, netpipe_tcp (mode mpiicount): each run and what dp carried
netpipe_dp() {
	rx0=$(ns_counter b rx_msgs)
	netpipe np-dp "$T/np-dp.out" 1048576 "" $OVER_DP
	result $? "NPmpi over dp (pml cm, mtl ofi, FI_PROVIDER=dp), 1 B to 1 MiB, under -icount"
	rx1=$(ns_counter b rx_msgs)
	[ "$rx0" -ge 0 ] && [ "$rx1" -ge $((rx0 + 1000)) ]
	result $? "dp carried it (node 2's rx_msgs grew by $((rx1 - rx0)))"
}
netpipe_tcp() {
	netpipe np-tcp "$T/np-tcp.out" 1048576 "" $OVER_TCP
	result $? "NPmpi over TCP (pml ob1, btl tcp), 1 B to 1 MiB, under -icount"
}
# mpi_profile dp|tcp (make profile-mpi): see the head of this file
b_frames() { ip netns exec b cat /sys/class/net/eth1/statistics/rx_packets; }
# the ranks' executable mappings, for naming user-space addresses
user_maps() {
	echo USERMAPS-BEGIN
	for d in /proc/[0-9]*; do
		case "$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)" in
		*NPmpi*)
			echo "pid ${d#/proc/} $(cat "$d/comm")"
			grep ' r-xp ' "$d/maps"
			;;
		esac
	done
	echo USERMAPS-END
}
mpi_profile() {
	over=$OVER_DP
	[ "$1" = tcp ] && over=$OVER_TCP
	f0=$(b_frames)
	$NP_NS mpirun $LAUNCH --host $NP_HOSTS -np 2 $over \
		NPmpi -p 0 -l 1 -u 1 -n 100000000 -o "$T/np-prof.out" >"$T/np-prof.log" 2>&1 &
	np=$!
	i=0	# steady state: 2000 round trips in
	f1=$(b_frames)
	while [ "$f1" -lt $((f0 + 2000)) ] && [ $i -lt 1200 ] && kill -0 $np 2>/dev/null; do
		sleep 0.5
		i=$((i + 1))
		f1=$(b_frames)
	done
	st=1
	# nothing but the sleep between the marks: its length computed before
	secs=$(awk -v n="${MPI_PROFILE_NS:-300000000}" 'BEGIN { print n / 1e9 }')
	if [ "$f1" -ge $((f0 + 2000)) ]; then
		f1=$(b_frames)
		/usr/lib/dp/perf/insn-mark
		sleep "$secs"
		/usr/lib/dp/perf/insn-mark
		f2=$(b_frames)
		st=0
	fi
	user_maps >"$T/maps.txt"
	kill $np 2>/dev/null
	wait $np
	[ $st -eq 0 ] || { sed 's/^/# np-prof: /' "$T/np-prof.log" | tail -n 20; return 1; }
	diag "$1: $((f2 - f1)) round trips between the marks"
	# for the harness, which wants figures from an icount guest
	echo DPPERF-BEGIN
	echo "# mode=mpi-profile $1: $((f2 - f1)) round trips of 1 B in ${secs} s of guest time"
	echo DPPERF-END
	{
		echo PROFILE-BEGIN
		echo "mpi $1 iters $((f2 - f1)) period 1"
		echo PROFILE-END
		print_syms
		cat "$T/maps.txt"
	} >"$T/profile.txt"
	cat "$T/profile.txt"
}

# --- every guest: the node, dprsh, the provider
if [ "$DP_MODE" = mpiicount ]; then
	# one guest, two nodes: netns a (eth0, NID 1) and b (eth1, NID 2)
	TULIP=0
	drv=$(readlink /sys/class/net/eth0/device/driver 2>/dev/null)
	[ "${drv##*/}" = tulip ] && TULIP=1
	printf '10.79.0.1 na\n10.79.0.2 nb\n' >>/etc/hosts
	icount_setup >"$T/load.log" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/load.log"
	if [ $TULIP -eq 1 ]; then
		result $st "eth0 (netns a) and eth1 (netns b) on Linux's tulip driver, a veth between"
	else
		result $st "dp nodes 1 (eth0, netns a) and 2 (eth1, netns b), a veth between"
	fi
	ip netns exec a dprsh -d 10.79.0.1 >"$T/dprsh-a.log" 2>&1 &
	dprsh_pid=$!
	ip netns exec b dprsh -d 10.79.0.2 >"$T/dprsh-b.log" 2>&1 &
	dprsh_pid="$dprsh_pid $!"
	sleep 0.2
	h=$(ip netns exec a timeout 60 dprsh nb hostname 2>&1)
	st=$?
	kill -0 $dprsh_pid 2>/dev/null || st=1
	[ $st -eq 0 ] || sed 's/^/# dprsh: /' "$T/dprsh-a.log" "$T/dprsh-b.log"
	result $st "dprsh servers in netns a and b (from a, nb answers: $h)"
else
	hosts=""
	i=0
	while [ $i -lt "$DP_NGUESTS" ]; do
		echo "10.77.0.$((i + 1)) dpg$i" >>/etc/hosts
		hosts="$hosts${hosts:+,}dpg$i:1"
		i=$((i + 1))
	done

	timeout 60 dp-load >"$T/load.log" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/load.log"
	result $st "dp-load (nid $DP_NID on $DP_IF)"

	dprsh -d "10.77.0.$DP_NID" >"$T/dprsh.log" 2>&1 &
	dprsh_pid=$!
	sleep 0.2
	kill -0 $dprsh_pid 2>/dev/null
	st=$?
	[ $st -eq 0 ] || sed 's/^/# dprsh: /' "$T/dprsh.log"
	result $st "dprsh server on 10.77.0.$DP_NID"

	if [ "$DP_MODE" != mpidemo ]; then
		timeout 60 fi_info -p dp >"$T/fi_info" 2>&1
		st=$?
		grep -q 'provider: dp' "$T/fi_info" || st=1
		sed 's/^/# fi_info: /' "$T/fi_info" | head -n 12
		result $st "fi_info -p dp lists the provider (default directory)"

		# through FI_PROVIDER_PATH: found in /usr/lib/dp/fi, not in an empty dir
		mkdir -p "$T/empty"
		FI_PROVIDER_PATH=/usr/lib/dp/fi timeout 60 fi_info -p dp >"$T/fi_path" 2>&1
		st=$?
		grep -q 'provider: dp' "$T/fi_path" || st=1
		FI_PROVIDER_PATH=$T/empty timeout 60 fi_info -p dp >"$T/fi_empty" 2>&1 && st=1
		grep -q 'provider: dp' "$T/fi_empty" && st=1
		[ $st -eq 0 ] || sed 's/^/# /' "$T/fi_path" "$T/fi_empty"
		result $st "FI_PROVIDER_PATH=/usr/lib/dp/fi finds it, an empty directory does not"
	fi
fi
# dp's session changes and drops into tracefs, printed at the end: what
# ended a session, if one ends (docs/trace.md).  Mode mpi only: the others
# measure, and an enabled dp_drop costs dp time on every counted event.
TR=/sys/kernel/tracing
for e in dp_session dp_drop; do
	[ "$DP_MODE" = mpi ] || break
	echo 1 >"$TR/events/dp/$e/enable" 2>/dev/null
done
[ "$DP_MODE" = mpiicount ] || barrier mpi-ready
if [ "$DP_GUEST_ID" -eq 0 ] && [ "$DP_MODE" = mpidemo ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	netpipe np-dp "$T/np-dp.out" 1048576 "" $OVER_DP
	result $? "NPmpi over dp (pml cm, mtl ofi, FI_PROVIDER=dp), 1 B to 1 MiB"
	netpipe np-tcp "$T/np-tcp.out" 1048576 "" $OVER_TCP
	result $? "NPmpi over TCP (pml ob1, btl tcp), 1 B to 1 MiB"
	netpipe np-tcp2 "$T/np-tcp2.out" 1048576 "" $OVER_TCP
	result $? "NPmpi over TCP again, 1 B to 1 MiB"
	netpipe np-dp2 "$T/np-dp2.out" 1048576 "" $OVER_DP
	result $? "NPmpi over dp again, 1 B to 1 MiB"
	diag "netpipe runs took $(awk -v a="$t0" '{ print $1 - a }' /proc/uptime) s"
	np_table mpi "between 2 guests, run dp, TCP, TCP, dp" dp tcp tcp2 dp2
elif [ "$DP_MODE" = mpiicount ] && [ -n "$MPIPROF" ]; then
	mpi_profile "$MPIPROF"
	result $? "NPmpi over $MPIPROF, 1 B, a window of it counted by QEMU"
elif [ "$DP_MODE" = mpiicount ] && [ $TULIP -eq 1 ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	netpipe_tcp
	tulip_to_dp >"$T/handover.log" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/handover.log"
	result $st "Linux's tulip driver hands both chips to dp.ko backend=tulip"
	netpipe_dp
	diag "netpipe runs took $(awk -v a="$t0" '{ print $1 - a }' /proc/uptime) s of guest time"
	np_table mpi-icount-tulip "in one guest under -icount, between its two tulips (netns a and b; TCP over Linux's tulip driver, then dp over its own)"
elif [ "$DP_MODE" = mpiicount ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	netpipe_dp
	netpipe_tcp
	rx2=$(ns_counter b rx_msgs)
	[ "$rx2" -ge 0 ] && [ "$rx2" -eq "$rx1" ]
	result $? "dp carried nothing of the TCP run (node 2's rx_msgs $rx1, then $rx2)"
	diag "netpipe runs took $(awk -v a="$t0" '{ print $1 - a }' /proc/uptime) s of guest time"
	np_table mpi-icount "in one guest under -icount, between its two e1000s (netns a and b)"
elif [ "$DP_GUEST_ID" -eq 0 ]; then
	# dprsh reaches every other guest
	st=0
	i=1
	while [ $i -lt "$DP_NGUESTS" ]; do
		h=$(timeout 30 dprsh "dpg$i" hostname 2>&1)
		[ "$h" = "dpg$i" ] || { diag "dprsh dpg$i hostname: $h"; st=1; }
		i=$((i + 1))
	done
	result $st "dprsh runs a command on the other $((DP_NGUESTS - 1)) guests"

	pingpong msg 1 1000
	result $? "fi_pingpong -p dp -e rdm -m msg -c, 1 B x 1000, guest 0 to guest 1"
	pingpong tagged 1000000 20
	result $? "fi_pingpong -p dp -e rdm -m tagged -c, 1 MB x 20, guest 0 to guest 1"

	max=${MPI_NP_MAX:-32768}
	netpipe np-dp "$T/np-dp.out" "$max" "${MPI_NP_REPEATS:-20}" $OVER_DP
	st=$?
	for s in 1 "$max"; do
		np_line "$T/np-dp.out" "$s" | while read -r lat bw; do
			diag "NPmpi over dp: $s B: $lat us one way, $bw MB/s"
		done
	done
	result $st "NPmpi over dp (pml cm, mtl ofi, FI_PROVIDER=dp), 1 B to $max B"

	rx0=$(counter rx_msgs)
	r=1
	while [ $r -lt "${MT_REPS:-1}" ]; do
		if ! mpitest dp $OVER_DP >"$T/rep.log" 2>&1; then
			diag "mpi_test over dp: run $r of $MT_REPS failed"
			sed 's/^/# /' "$T/rep.log"
			break
		fi
		diag "mpi_test over dp: run $r of $MT_REPS passed"
		r=$((r + 1))
	done
	mpitest dp $OVER_DP
	result $? "mpi_test over dp on $DP_NGUESTS guests (pml cm, mtl ofi, FI_PROVIDER=dp)"
	rx1=$(counter rx_msgs)
	diag "guest 0's dp rx_msgs: $rx0 before, $rx1 after"
	[ "$rx0" -ge 0 ] && [ "$rx1" -ge $((rx0 + 100)) ]
	result $? "dp carried mpi_test's messages (guest 0's rx_msgs grew by $((rx1 - rx0)))"

	mpitest tcp $OVER_TCP
	result $? "mpi_test over TCP on $DP_NGUESTS guests (pml ob1, btl tcp)"
	rx2=$(counter rx_msgs)
	[ "$rx2" -ge 0 ] && [ "$rx2" -eq "$rx1" ]
	result $? "dp carried nothing of the TCP run (rx_msgs $rx1, then $rx2)"
fi
# the others wait for guest 0's runs: 600 s, and 150 s per stress run more
[ "$DP_MODE" = mpiicount ] || barrier mpi-done $((600 + 150 * ${MT_REPS:-0}))

# the sessions that failed or were reset, and the drops, for the record
grep -E 'dp_drop|err=-[1-9]' "$TR/trace" 2>/dev/null | tail -n 40 | sed 's/^/# trace: /'
# the node's counters that moved, for the record (drops, resets, given up)
for ns in "" a b; do
	[ -z "$ns" ] || [ "$DP_MODE" = mpiicount ] || continue
	${ns:+ip netns exec $ns} dpctl stats 2>/dev/null |
		awk '$2 != 0 { printf "%s=%s ", $1, $2 } END { print "" }' |
		sed "s/^/# dp counters${ns:+ (netns $ns)}: /"
done
kill $dprsh_pid 2>/dev/null
wait $dprsh_pid 2>/dev/null
timeout 60 rmmod dp
result $? "rmmod dp"
[ "$n" -eq "$plan" ] || { diag "$n results for a plan of $plan"; failed=1; }
exit $failed
