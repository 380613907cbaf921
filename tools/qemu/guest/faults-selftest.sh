#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Harness self-test of the fault relay (cluster.py --mode faults: 2 guests
# joined through dpswitch).  Guest 0 drives the link with dp-link and pings;
# guest 1 receives TCP streams and checks them.  KTAP on stdout.
#
#   phase      link                              checked
#   tcp1       drop=5                            ping gets replies; a 1.9 MB TCP
#                                                stream arrives intact; relay counts drops
#   tcp2       drop=2,dup=5,reorder=5,corrupt=5  stream intact; relay counts dups,
#                                                reorders, corruptions; guest 1's
#                                                IP/TCP checksums caught corrupted frames
#   partition  everything cut                    ping fails both ways
#   heal       no faults                         ping works both ways
#   netem      (guest 0's own tc qdisc)          loss 100% stops ping, removing it restores
#
# The guests meet at barriers (the serial line, not the link) between phases.
. /etc/dp/env
me=$DP_GUEST_ID
peer_id=$((1 - me))
peer=10.77.0.$((peer_id + 1))
peer_mac=$(printf '52:54:00:00:00:%02x' $((peer_id + 1)))
port=5001
lines=300000	# seq 1 $lines: 1.9 MB, the same on both sides

t=0 nfail=0
res() { # RC DESCRIPTION
	t=$((t + 1))
	if [ "$1" -eq 0 ]; then echo "ok $t $2"; else echo "not ok $t $2"; nfail=$((nfail + 1)); fi
}
bar() {
	dp-barrier "faults-$1" 180 || echo "# barrier faults-$1 timed out"
}
# packets received by: ping ARGS... PEER (its summary goes to stderr, which
# is the test output too)
received() {
	ping "$@" "$peer" >/tmp/ping.log 2>&1
	sed 's/^/# /' /tmp/ping.log | tail -n 2 >&2
	sed -n 's/.* \([0-9]*\) packets received.*/\1/p' /tmp/ping.log
}
counter() { # KEY: the relay's counter, or -1
	dp-link stats "$1" 2>/dev/null || echo -1
}
link_set() {
	dp-link "$@" >/dev/null || echo "# dp-link $* failed"
}
# Frames this guest's IP and TCP/UDP/ICMP layers threw away as damaged.
damaged() {
	awk '/^(Ip|Tcp|Udp|Icmp):/ {
		if (!($1 in hdr)) { for (i = 2; i <= NF; i++) hdr[$1, i] = $i; hdr[$1] = 1; next }
		for (i = 2; i <= NF; i++) {
			k = hdr[$1, i]
			if (k == "InHdrErrors" || k == "InCsumErrors") n += $i
		}
	} END { print n + 0 }' /proc/net/snmp
}
listen() {
	rm -f /tmp/rx
	timeout 120 nc -l -p "$port" </dev/null >/tmp/rx &
	nc_pid=$!
}
intact() { # PHASE: wait for the stream, compare it with the reference
	wait "$nc_pid"
	rc=$?
	got=$(md5sum </tmp/rx | cut -d' ' -f1)
	echo "# $1: nc exit $rc, $(wc -c </tmp/rx) bytes received, md5 $got"
	[ "$rc" -eq 0 ] && [ "$got" = "$want" ]
}
send_stream() {
	timeout 120 bash -c "seq 1 $lines >/dev/tcp/$peer/$port" ||
		echo "# sending the stream failed"
}

echo "KTAP version 1"
if [ "$me" -eq 0 ]; then echo "1..10"; else echo "1..6"; fi

# Static neighbours: a corrupted ARP frame must not teach a wrong MAC.
ip neigh replace "$peer" lladdr "$peer_mac" nud permanent dev eth0
st=$(dp-link stats)
echo "# relay: $st"
case $st in frames=*) res 0 "dp-link stats: the relay answers" ;;
*) res 1 "dp-link stats: the relay answers" ;;
esac

if [ "$me" -eq 1 ]; then
	want=$(seq 1 "$lines" | md5sum | cut -d' ' -f1)
	listen
	bar tcp1
	intact tcp1
	res $? "TCP stream intact through drop=5"
	listen
	before=$(damaged)
	bar tcp1-done
	bar tcp2
	intact tcp2
	res $? "TCP stream intact through drop=2,dup=5,reorder=5,corrupt=5"
	after=$(damaged)
	echo "# IP/TCP damaged-frame counters: $before -> $after"
	[ "$after" -gt "$before" ]
	res $? "corrupted frames reached the NIC and failed IP/TCP checksums here"
	bar tcp2-done
	bar partition
	n=$(received -c 3 -i 0.2 -W 1)
	[ "${n:-1}" -eq 0 ]
	res $? "partition: ping to guest 0 gets no reply"
	bar partition-done
	bar healed
	n=$(received -c 3 -i 0.2 -W 5)
	[ "${n:-0}" -eq 3 ]
	res $? "heal: ping to guest 0 works again"
	bar end
	exit 0
fi

n=$(received -c 3 -i 0.2 -W 5)
[ "${n:-0}" -eq 3 ]
res $? "no faults: ping gets 3 of 3 replies"

dp-link set drop=500 >/dev/null 2>/tmp/err.log
rc=$?
sed 's/^/# /' /tmp/err.log
[ "$rc" -eq 1 ] && grep -q "ERR bad value" /tmp/err.log
res $? "dp-link set drop=500: refused with ERR, exit 1"

d0=$(counter dropped)
link_set set drop=5
bar tcp1
n=$(received -c 10 -i 0.2 -W 3)
[ "${n:-0}" -ge 1 ]
res $? "drop=5: ping still gets replies ($n of 10)"
send_stream
bar tcp1-done
d1=$(counter dropped)
echo "# relay dropped $d0 -> $d1"
[ "$d0" -ge 0 ] && [ "$d1" -gt "$d0" ]
res $? "drop=5: the relay dropped frames"

set -- duplicated reordered corrupted
c0=$(dp-link stats "$@" | tr '\n' ' ')
link_set set drop=2,dup=5,reorder=5,corrupt=5
bar tcp2
send_stream
bar tcp2-done
c1=$(dp-link stats "$@" | tr '\n' ' ')
echo "# relay duplicated/reordered/corrupted: $c0-> $c1"
rc=0
# shellcheck disable=SC2086 # split into the six numbers
set -- $c0 $c1
[ $# -eq 6 ] && [ "$4" -gt "$1" ] && [ "$5" -gt "$2" ] && [ "$6" -gt "$3" ] || rc=1
res $rc "drop=2,dup=5,reorder=5,corrupt=5: the relay duplicated, reordered and corrupted frames"

link_set reset
p0=$(counter partitioned)
link_set partition
bar partition
n=$(received -c 3 -i 0.2 -W 1)
bar partition-done
p1=$(counter partitioned)
echo "# relay partitioned $p0 -> $p1"
[ "${n:-1}" -eq 0 ] && [ "$p0" -ge 0 ] && [ "$p1" -gt "$p0" ]
res $? "partition: ping to guest 1 gets no reply, the relay cut frames"
link_set heal
bar healed
n=$(received -c 3 -i 0.2 -W 5)
[ "${n:-0}" -eq 3 ]
res $? "heal: ping to guest 1 works again"

# netem (sch_netem is loaded at boot): the guest's own fault injection.
rc=0
tc qdisc add dev eth0 root netem loss 100% || rc=1
n=$(received -c 2 -i 0.2 -W 1)
tc qdisc del dev eth0 root || rc=1
[ "$rc" -eq 0 ] && [ "${n:-1}" -eq 0 ]
res $? "netem loss 100% on eth0: ping gets no reply"
n=$(received -c 2 -i 0.2 -W 5)
[ "${n:-0}" -eq 2 ]
res $? "netem removed: ping works again"
bar end
[ "$nfail" -eq 0 ]
