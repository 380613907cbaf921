#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Module life cycle (KTAP on stdout; exit 1 on failure):
#   t_module.sh load   insmod, rmmod, insmod again; /proc/modules and /dev/dp
#   t_module.sh busy   rmmod refused while a /dev/dp fd, a bound endpoint or
#                      a mapped pool is held; succeeds once it is gone
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
finish() {
	echo "1..$n"
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

echo "KTAP version 1"
ns_clean
check "dp not loaded at the start" mod_unload

case $1 in
load)
	check "insmod dp.ko" insmod "$DP_KO"
	check "dp listed in /proc/modules" mod_loaded
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
*)
	echo "usage: t_module.sh load|busy" >&2
	exit 2
	;;
esac
finish
