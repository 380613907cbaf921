#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Module life cycle (KTAP on stdout; exit 1 on failure):
#   t_module.sh load   insmod, rmmod, insmod again; /proc/modules and /dev/dp;
#                      the load times its copies from a page of its own,
#                      unmapped after;
#                      copy= and crc= given to insmod read back, a bad one
#                      fails the load
#   t_module.sh busy   rmmod refused while a /dev/dp fd, a bound endpoint or
#                      a mapped pool is held; succeeds once it is gone
#   t_module.sh admin  node and NART changes need CAP_NET_ADMIN; a failed
#                      re-attach leaves the node on its old device, and
#                      its NID as it was
#   t_module.sh held   rmmod while a device holds frames sent from a
#                      session's copy (netem on A's veth, 5 s): the unload
#                      waits for them, kicks the devices it used, and ends
#                      clean (netdev backend only)
cd "$(dirname "$0")" || exit 1
. ./lib.sh

n=0 fail=0
check() {
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$T/check.out" 2>&1; then
		echo "ok $n $desc"
	else
		sed 's/^/# /' "$T/check.out"
		echo "not ok $n $desc"
		fail=$((fail + 1))
	fi
}
not() { ! "$@"; }
# params_are NAME VALUE...: each module parameter NAME reads VALUE
params_are() {
	while [ $# -ge 2 ]; do
		v=$(cat "/sys/module/dp/parameters/$1") || return 1
		[ "$v" = "$2" ] || { echo "$1 reads '$v', not '$2'"; return 1; }
		shift 2
	done
}
finish() {
	ktap_flush "$n"
	[ $fail -eq 0 ]
	exit $?
}

# Start dp_hold ARGS in the background; set hold_pid; wait for "ready".
hold_pid=
hold() {
	rm -f "$T/hold.out"	# no stale "ready" from an earlier holder
	./dp_hold "$@" >"$T/hold.out" 2>&1 &
	hold_pid=$!
	i=0
	while ! grep -q ready "$T/hold.out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 $hold_pid 2>/dev/null; then
			cat "$T/hold.out"
			return 1
		fi
		sleep 0.1
	done
}
unhold() {
	[ -n "$hold_pid" ] || return 0
	kill -9 $hold_pid 2>/dev/null
	wait $hold_pid 2>/dev/null
	hold_pid=
	return 0
}
trap unhold EXIT

# ./dp_hold ARGS... in namespace NS, in the background (its pid in $!),
# until OUT shows WORD.
bg_pids=
in_bg() { # NS WORD OUT ARGS...
	ns=$1 word=$2 out=$3
	shift 3
	rm -f "$out"
	"$DPT_IP" netns exec "$ns" ./dp_hold "$@" >"$out" 2>&1 &
	bg_pids="$bg_pids $!"
	wait_word "$word" "$out" $!
}
wait_word() { # WORD OUT PID
	i=0
	while ! grep -q "$1" "$2" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 200 ] || ! kill -0 "$3" 2>/dev/null; then
			cat "$2"
			return 1
		fi
		sleep 0.1
	done
}
bg_kill() {
	for p in $bg_pids; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	bg_pids=
	return 0
}
kicks() { dmesg | grep -c 'so that it gives back what it holds'; }
# The newest copy timing (module/dp_copy.c) copied from the user too.
copies_from_user() {
	dmesg | grep 'dp: message copies by' | tail -n 1 | grep -q 'from the user'
}
# copy=auto written by a shell: timed again from a page of that shell's,
# which is gone after (as many mappings after the write as before).
auto_unmaps() {
	# shellcheck disable=SC2016 # $$: the inner shell's own
	sh -c 'a=$(wc -l </proc/$$/maps)
		echo auto >/sys/module/dp/parameters/copy || exit 1
		[ "$(wc -l </proc/$$/maps)" -eq "$a" ]' && copies_from_user
}

ktap_buffer
ns_clean
check "dp not loaded at the start" mod_unload

case $1 in
load)
	check "insmod dp.ko" insmod "$DP_KO"
	check "dp listed in /proc/modules" mod_loaded
	check "the load timed the copies from a page of insmod's" copies_from_user
	check "copy=auto times them again, and the shell's page is gone after" auto_unmaps
	check "/dev/dp is a character device" test -c /dev/dp
	check "/dev/dp has mode 0666" test "$(stat -c %a /dev/dp)" = 666
	check "a second insmod fails" not insmod "$DP_KO"
	check "rmmod dp" rmmod dp
	check "dp gone from /proc/modules" not mod_loaded
	check "/dev/dp gone" not test -e /dev/dp
	check "insmod again" insmod "$DP_KO"
	check "dp listed again" mod_loaded
	check "an endpoint can be bound after the reload" hold 100
	unhold
	check "rmmod again" rmmod dp
	check "dp gone again" not mod_loaded
	# copy= and crc= given at load (module/dp_copy.c, dp_wire_crc.c)
	crc=table
	grep -q '^flags.* sse4_2' /proc/cpuinfo && crc=insn
	check "insmod with copy=kernel crc=$crc" insmod "$DP_KO" copy=kernel crc=$crc
	check "copy= and crc= read back kernel and $crc" params_are copy kernel crc $crc
	check "rmmod after it" rmmod dp
	check "insmod with copy=words crc=table" insmod "$DP_KO" copy=words crc=table
	check "copy= and crc= read back words and table" params_are copy words crc table
	check "rmmod after that" rmmod dp
	check "an unknown crc= fails the load" not insmod "$DP_KO" copy=words crc=bogus
	check "dp not loaded after it" not mod_loaded
	;;
busy)
	check "insmod" mod_load
	exec 3<>/dev/dp
	check "rmmod refused while an unbound fd is open" not rmmod dp
	check "dp still loaded" mod_loaded
	exec 3>&-
	check "rmmod succeeds after close" rmmod dp

	check "insmod" mod_load
	check "a process binds DPID 100" hold 100
	check "rmmod refused while the endpoint is open" not rmmod dp
	check "dp still loaded" mod_loaded
	unhold
	check "rmmod succeeds after the process is killed" mod_unload

	check "insmod" mod_load
	check "a process maps a pool and closes its fd" hold 100 map
	check "rmmod refused while only the mapping remains" not rmmod dp
	unhold
	check "rmmod succeeds after the mapping is gone" mod_unload
	check "dp gone from /proc/modules" not mod_loaded
	;;
admin)
	check "two nodes up (dpA, dpB)" pair_up
	in_a() { "$DPT_IP" netns exec dpA "$@"; }
	as_alice() { in_a setpriv --reuid=1001 --regid=1001 --clear-groups "$@"; }
	check "attaching a missing device fails" not in_a dpctl node set dev nosuch0
	check "... and the node stays on $DPT_IFA" \
		sh -c "'$DPT_IP' netns exec dpA dpctl node | grep -qx 'ifname $DPT_IFA'"
	check "a new NID with a missing device fails" not in_a dpctl node set nid 99 dev nosuch0
	check "... and changes nothing: NID $DPT_NIDA on $DPT_IFA" \
		sh -c "'$DPT_IP' netns exec dpA dpctl node >'$T/node' && grep -qx 'nid $DPT_NIDA' '$T/node' && grep -qx 'ifname $DPT_IFA' '$T/node'"
	check "uid 1001 cannot add a NART entry" not as_alice dpctl nart add 99 52:54:00:00:00:99
	check "uid 1001 cannot flush the NART" not as_alice dpctl nart flush
	check "uid 1001 cannot set the NID" not as_alice dpctl node set nid 99
	check "uid 1001 cannot detach the NIC" not as_alice dpctl node detach
	check "uid 1001 cannot reset counters" not as_alice dpctl stats reset
	check "uid 1001 can read the node" as_alice dpctl node
	check "uid 1001 can read the NART" as_alice dpctl nart
	check "the NART still has NID $DPT_NIDB and no 99" \
		sh -c "'$DPT_IP' netns exec dpA dpctl nart >'$T/nart' && grep -q '^$DPT_NIDB ' '$T/nart' && ! grep -q '^99 ' '$T/nart'"
	check "root can add and delete NID 99" \
		sh -c "'$DPT_IP' netns exec dpA dpctl nart add 99 52:54:00:00:00:99 && '$DPT_IP' netns exec dpA dpctl nart del 99"
	check "deleting an absent NID fails" not in_a dpctl nart del 99
	check "teardown and rmmod" pair_down
	;;
held)
	k0=$(kicks)
	check "two nodes up (dpA, dpB)" pair_up
	check "B holds endpoint 7" in_bg "$DPT_NSB" ready "$T/held-b.out" 7
	check "A's endpoint 6 sends to B and is acknowledged" \
		in_bg "$DPT_NSA" connected "$T/held-a.out" 6 send "$DPT_NIDB" 7 8 1000
	apid=$!
	check "netem on $DPT_IFA holds what A sends for 5 s" \
		"$DPT_IP" netns exec "$DPT_NSA" tc qdisc add dev "$DPT_IFA" root netem delay 5s
	check "A sends 8 messages of 1000 bytes (page fragments of its copy)" \
		eval 'kill -USR1 $apid && wait_word ready "$T/held-a.out" $apid'
	check "both endpoints closed" bg_kill
	check "rmmod waits for the frames netem holds, and is clean" mod_unload
	check "the unload kicked the devices it used while it waited" \
		sh -c "dmesg | grep 'gives back what it holds' | tail -n 2; test $(kicks) -gt $k0"
	check "teardown" ns_clean
	;;
*)
	echo "usage: t_module.sh load|busy|admin|held" >&2
	exit 2
	;;
esac
finish
