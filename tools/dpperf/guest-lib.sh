#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Shared by guest-demo.sh, guest-icount.sh, guest-rel.sh and the MPI guest's
# guest-mpi.sh (sourced; set GUEST_TAG first).

n=0
log() { echo "# $GUEST_TAG: $*"; }

result() {	# result STATUS DESCRIPTION [DIRECTIVE]: one KTAP line
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2${3:+ # $3}"; else echo "not ok $n $2"; fi
}

# Wait (at most 30 s) for a background server to say it can receive.
wait_ready() {	# wait_ready READY_FILE SERVER_PID
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt 300 ]; do
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# The icount guests (guest-icount.sh, guest-mpi.sh's mode mpiicount): each
# NIC in a namespace of its own, a dp node there.
# Put IF into namespace NS with address ADDR, MTU 9000 (or the kernel
# command line's dpg.mtu: make profile's PROFILE_MTU) if the NIC allows it.
netns_if() {	# netns_if NS IF ADDR
	mtu=$(sed -n 's/.*dpg\.mtu=\([0-9]*\).*/\1/p' /proc/cmdline)
	mtu=${mtu:-9000}
	ip netns add "$1" || return 1
	ip link set "$2" netns "$1" || return 1
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" mtu "$mtu" 2>/dev/null ||
		log "$2: MTU $mtu refused, keeping $(ip -n "$1" -o link show "$2" | sed 's/.* mtu \([0-9]*\).*/\1/')"
	ip -n "$1" addr add "$3/24" dev "$2" &&
		ip -n "$1" link set "$2" up
}

# dp's node NID on DEV in namespace NS, the NART from file NART; ARGS go to
# dpctl node set (backend tulip).
dp_node() {	# dp_node NS NID DEV NART [ARGS...]
	ns=$1 nid=$2 dev=$3 nart=$4
	shift 4
	ip netns exec "$ns" dpctl node set nid "$nid" dev "$dev" "$@" &&
		ip netns exec "$ns" dpctl nart load "$nart"
}

# For the exact profile's report (tools/dpperf/profile-report): every
# module's symbols between DPSYMS-BEGIN/END, the kernel's own text symbols
# (Debian's System.map holds none), gzipped and base64-encoded, about 60000
# lines, between KSYMS-BEGIN/END.
print_syms() {
	echo DPSYMS-BEGIN
	grep '\]$' /proc/kallsyms	# every module's: no address unnamed
	echo DPSYMS-END
	echo KSYMS-BEGIN
	grep -v '\]$' /proc/kallsyms | grep ' [tTwW] ' | gzip -c | base64
	echo KSYMS-END
}
