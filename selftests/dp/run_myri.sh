#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lossless edges over the simulated Myrinet fabric (cluster.py --nic myri:
# dp's myri backend on tools/myrisim's LANai, docs/myrinet.md), in every
# guest of 2 (one switch) or 4 (two switches).  Guest I < N/2 sends to guest
# I + N/2, which checks every message (dp_rel_peer: nonce, index, length,
# CRC32C); with 4 guests both streams cross the link between the switches.
# Faults come from the simulator's control pipe through dp-link.  Guest 0
# (host h0) is on switch s0 port 0 in both built-in topologies.
#
#   myri_load      dp-load: myri0 attached, routes from the cluster file
#   myri_map_refused  dpctl myri map in a namespace without a NIC: ENODEV;
#                  without CAP_NET_ADMIN: EPERM
#   myri_scout     dp_scout: the kernel's scouts over generic netlink: a
#                  loop probe comes back with this NIC's address and NID on
#                  exactly one port; bad requests get EINVAL, ERANGE, E2BIG,
#                  no NIC ENODEV, no privilege EPERM
#   myri_map       one guest at a time: the NART emptied of the other
#                  guests, dpctl myri map finds each of them (the NIC addresses
#                  and routes of the topology) and loads the routes;
#                  every stream below runs on them
#   myri_eth_ping  Ethernet over Myrinet: myri0 (the card's netdev, MAC its
#                  NIC address, MTU 8178) up with 10.77.0.NID/24 in every
#                  guest, ARP broadcast along the NART's routes, ping the
#                  peer guest
#   myri_eth_noroute  a frame to a MAC no NART entry has: not sent, counted
#                  (eth_noroute, the netdev's tx_dropped)
#   myri_eth_udp   while a dp stream runs on the same card: UDP datagrams of
#                  4 bytes to 8150 (the MTU's largest) echoed, each intact
#   myri_eth_tcp   in the same run: 4 MB over TCP, every byte checked
#   myri_stream    $DPT_MYRI_N (3000) messages of random sizes up to the
#                  8 KB-class MTU with corrupt=2: all arrive once, in order,
#                  intact; the LANai dropped and counted the bad CRCs
#                  (nic_rx_crc) and the edges sent them again
#   myri_badroute  a stream with badroute=3: the switches drop and count
#                  the bad routes (bad_route), everything arrives
#   myri_cable     guest 0's cable pulled mid-stream for 2 s, then put back
#                  (its card counted sends lost on it, tx_link_down): all
#                  arrive
#   myri_backpressure  the receivers stop draining their cards for 1 s
#                  (debugfs rx_stall) with the switch timeout at 10 s: the
#                  fabric holds packets back (its stalls; a card's rx_stops
#                  is reported), nothing is truncated, all arrive
#   myri_truncate  the same at the default timeout (50 ms): blocked packets
#                  are truncated and counted, all arrive
#   myri_unreach   each sender's cable pulled for good mid-stream with
#                  unreach_ms at 3 s: its write fails with ETIMEDOUT (no
#                  hang); what arrived before is intact
#   myri_rmmod     cable pulled with retransmissions pending: the sender is
#                  killed, rmmod is clean; then both unload, each with myri0
#                  up and pinging its peer: the netdev goes with the module;
#                  the receiver's card is first removed from the PCI bus
#                  (sysfs remove): myri0 goes with it
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env
me=${DP_GUEST_ID:-0}
n=${DP_NGUESTS:-1}
N=${DPT_MYRI_N:-3000}
P=./dp_rel_peer

echo "KTAP version 1"
if [ "${DP_BACKEND:-}" != myri ] || { [ "$n" -ne 2 ] && [ "$n" -ne 4 ]; }; then
	echo "1..1"
	echo "ok 1 myri_cluster # SKIP needs 2 or 4 guests on the Myrinet fabric (--nic myri)"
	exit 0
fi
echo "1..15"
half=$((n / 2))
if [ "$me" -lt "$half" ]; then
	role=send peer_nid=$((me + half + 1))
else
	role=recv peer_nid=$((me - half + 1))
fi
t=0
ktap_failed=0
res() { # RC DESCRIPTION: one result, diagnostics from $T/step.log
	t=$((t + 1))
	sed 's/^/# /' "$T/step.log"
	if [ "$1" -eq 0 ]; then echo "ok $t $2"; else echo "not ok $t $2"; ktap_failed=$((ktap_failed + 1)); fi
	: >"$T/step.log"
}
bar() { timeout 1300 dp-barrier "myri-$1" 1200 || echo "# barrier myri-$1 timed out"; }
link() { dp-link "$@" >>"$T/step.log" 2>&1 || echo "dp-link $* failed" >>"$T/step.log"; }
ctr() { dpctl stats 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
# nic NAME: a counter of the card (sysfs dp_stats: the driver's and the LANai's)
nic() { awk -v k="$1" '$1 == k { print $2 }' /sys/bus/pci/drivers/dp_myri/*/dp_stats; }
fab() { dp-link stats "$1" 2>/dev/null || echo 0; }
grown() { # NAME N: wait (up to 120 s) until counter NAME grew by N from $base
	i=0
	while [ $(( $(ctr "$1") - base )) -lt "$2" ] && [ $i -lt 1200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
: >"$T/step.log"

# stream NAME DPID NONCE [SEND_HOOK [RECV_HOOK]]: guest pairs stream $N
# messages; each side runs its HOOK (a function) while the stream is under
# way.
stream() {
	if [ "$role" = recv ]; then
		timeout 1300 $P recv "$2" "$3" "$N" 0 1200 >"$T/recv.log" 2>&1 &
		pid=$!
		ready "$T/recv.log"
		bar "$1-bound"
		[ -n "${5:-}" ] && "$5"
		wait $pid
		st=$?
		cat "$T/recv.log" >>"$T/step.log"
	else
		bar "$1-bound"
		timeout 1300 $P send "$peer_nid" "$2" "$3" "$N" $((me + 3)) >"$T/send.log" 2>&1 &
		pid=$!
		[ -n "${4:-}" ] && "$4"
		wait $pid
		st=$?
		cat "$T/send.log" >>"$T/step.log"
	fi
	return $st
}

# 1. load
ns_clean
mod_unload >/dev/null 2>&1
timeout 60 dp-load >>"$T/step.log" 2>&1 && mod_loaded && [ -n "$(nic rx_packets)" ]
res $? "myri_load (nid $DP_NID on $DP_IF, $n guests)"
bar loaded

# 2. the mapper refused: no NIC in a fresh namespace, no privilege
"$DPT_IP" netns add dpN >>"$T/step.log" 2>&1
"$DPT_IP" netns exec dpN dpctl myri map >"$T/nonic.log" 2>&1
e1=$?
"$DPT_IP" netns del dpN
setpriv --reuid=1001 --regid=1001 --clear-groups dpctl myri map >"$T/noperm.log" 2>&1
e2=$?
cat "$T/nonic.log" "$T/noperm.log" >>"$T/step.log"
[ "$e1" -ne 0 ] && grep -q "No such device" "$T/nonic.log" &&
	[ "$e2" -ne 0 ] && grep -q "Operation not permitted" "$T/noperm.log"
res $? "myri_map_refused: no NIC gives ENODEV, no CAP_NET_ADMIN gives EPERM"
timeout 120 ./dp_scout >>"$T/step.log" 2>&1
res $? "myri_scout: DP_CMD_SCOUT's loop probe, and its errors for bad requests"

# 3. the mapper, one guest at a time.  The other guests' entries (from the
# topology, by cluster.py) are saved and deleted; dpctl myri map must find
# every one of them again, with the same NIC address and route, and load
# them; the streams below then run on the routes it found.
others() { dpctl nart | awk -v me="$DP_NID" '$1 != me' | sort; }
i=0 mst=1
while [ "$i" -lt "$n" ]; do
	bar "map-$i"
	if [ "$i" -eq "$me" ]; then
		others >"$T/nart.topo"
		for nid in $(awk '{ print $1 }' "$T/nart.topo"); do
			dpctl nart del "$nid" >>"$T/step.log" 2>&1
		done
		others >"$T/nart.empty"
		timeout 120 dpctl myri map wait 500 >"$T/map.out" 2>>"$T/step.log"
		mst=$?
	fi
	i=$((i + 1))
done
bar map-done
cat "$T/map.out" >>"$T/step.log"
others >"$T/nart.map"
diff "$T/nart.topo" "$T/nart.map" >>"$T/step.log"
echo "$DP_IF: $(nic scout_sent) scouts sent, $(nic scout_got) came back or were answered, $(nic scout_answered) answered for others, stray $(nic scout_stray), bad $(nic scout_bad), drops $(nic scout_drops)" >>"$T/step.log"
found=$(grep -vc '^#' "$T/map.out")
# the switches found are reported, not checked: the guest does not know
# the topology, whose switches may have no guest on them (2 guests on the
# default one); test_myrimap checks the switches of known fabrics
[ "$mst" -eq 0 ] && [ ! -s "$T/nart.empty" ] && [ "$found" -eq $((n - 1)) ] &&
	[ "$(wc -l <"$T/nart.map")" -eq $((n - 1)) ] &&
	cmp -s "$T/nart.topo" "$T/nart.map" && [ "$(nic scout_bad)" -eq 0 ]
res $? "myri_map: dpctl myri map finds the $((n - 1)) other hosts, with the topology's NIC addresses and routes"

# 3b. Ethernet over Myrinet: myri0, the card's netdev, on the routes the
# mapper loaded, while dp's own packets use the same card
sysnet=/sys/class/net/$DP_IF
eth_ip=10.77.0.$DP_NID
peer_ip=10.77.0.$peer_nid
"$DPT_IP" addr add "$eth_ip/24" dev "$DP_IF" >>"$T/step.log" 2>&1
"$DPT_IP" link set "$DP_IF" up >>"$T/step.log" 2>&1
bar eth-up
mac=$(cat "$sysnet/address" 2>/dev/null)
mtu=$(cat "$sysnet/mtu" 2>/dev/null)
echo "$DP_IF: $mac mtu $mtu carrier $(cat "$sysnet/carrier" 2>/dev/null)" >>"$T/step.log"
timeout 60 ping -c 3 -w 30 "$peer_ip" >>"$T/step.log" 2>&1
st=$?
"$DPT_IP" neigh show dev "$DP_IF" >>"$T/step.log" 2>&1
[ "$st" -eq 0 ] && [ "$mtu" = 8178 ] && [ "${mac#00:60:dd:}" != "$mac" ] &&
	[ "$(cat "$sysnet/carrier")" = 1 ]
res $? "myri_eth_ping: $DP_IF is a netdev (its NIC address as MAC, MTU 8178) and pings $peer_ip over the fabric"

# a MAC without a NART entry: the frame is dropped and counted, not sent
nr0=$(nic eth_noroute)
td0=$(cat "$sysnet/statistics/tx_dropped")
"$DPT_IP" neigh replace 10.77.0.250 lladdr 00:60:dd:00:00:77 dev "$DP_IF" nud permanent >>"$T/step.log" 2>&1
timeout 20 ping -c 2 -w 3 10.77.0.250 >>"$T/step.log" 2>&1
st=$?
"$DPT_IP" neigh del 10.77.0.250 dev "$DP_IF" >>"$T/step.log" 2>&1
nr=$(( $(nic eth_noroute) - nr0 ))
td=$(( $(cat "$sysnet/statistics/tx_dropped") - td0 ))
echo "to 00:60:dd:00:00:77: eth_noroute +$nr, tx_dropped +$td" >>"$T/step.log"
[ "$st" -ne 0 ] && [ "$nr" -ge 2 ] && [ "$td" -ge 2 ]
res $? "myri_eth_noroute: frames to a MAC no NART entry has are dropped and counted (eth_noroute +$nr)"

# UDP and TCP between the pair, each byte checked, during a dp stream
# (stream()'s hooks: the receiver serves, the sender is the client)
eth_serve() {
	./dp_eth udp-echo 7901 120 >"$T/udp.log" 2>&1 &
	up=$!
	./dp_eth tcp-recv 7902 4194304 77 120 >"$T/tcp.log" 2>&1 &
	tp=$!
	ready "$T/udp.log"
	ready "$T/tcp.log"
	bar eth-serve
	wait $up
	ust=$?
	wait $tp
	tst=$?
}
eth_client() {
	bar eth-serve
	timeout 300 ./dp_eth udp-send "$peer_ip" 7901 400 8150 $((me + 70)) >"$T/udp.log" 2>&1
	ust=$?
	timeout 300 ./dp_eth tcp-send "$peer_ip" 7902 4194304 77 >"$T/tcp.log" 2>&1
	tst=$?
}
ust=1 tst=1
bar eth-go
stream eth 708 19 eth_client eth_serve
st=$?
bar eth-done
cat "$T/udp.log" >>"$T/step.log"
echo "dp stream alongside: status $st" >>"$T/step.log"
[ "$ust" -eq 0 ] && [ "$st" -eq 0 ]
res $? "myri_eth_udp: UDP datagrams of 4 to 8150 bytes over $DP_IF come back intact while $N dp messages arrive intact on the same card"
cat "$T/tcp.log" >>"$T/step.log"
for c in rx_packets tx_packets rx_dropped tx_dropped rx_length_errors; do
	printf '%s %s  ' "$c" "$(cat "$sysnet/statistics/$c")"
done >>"$T/step.log"
echo "eth_rx_spoof $(nic eth_rx_spoof)" >>"$T/step.log"
[ "$tst" -eq 0 ] && [ "$(nic eth_rx_spoof)" -eq 0 ]
res $? "myri_eth_tcp: 4 MB over TCP on $DP_IF, every byte checked by the receiver"

# 4. corrupted packets: dropped by the LANai, counted, sent again
[ "$me" -eq 0 ] && link set corrupt=2,seed=42
bar corrupt-set
crc0=$(nic nic_rx_crc)
stream stream 700 11
st=$?
bar stream-done
[ "$me" -eq 0 ] && link set corrupt=0
crc=$(( $(nic nic_rx_crc) - crc0 ))
echo "this card's nic_rx_crc +$crc, fabric f_corrupt $(fab f_corrupt)" >>"$T/step.log"
# a receiver's card saw the bad CRCs (a sender's only the bad ACKs)
[ "$st" -eq 0 ] && { [ "$role" = send ] || [ "$crc" -gt 0 ]; }
res $? "myri_stream: $N messages with corrupt=2 arrive once, in order, intact; bad CRCs counted"

# 5. bad routes: dropped and counted at the switch
bar badroute-go
[ "$me" -eq 0 ] && { link reset; link set badroute=3,seed=7; }
bar badroute-set
stream badroute 701 12
st=$?
bar badroute-done
br=$(fab bad_route)
[ "$me" -eq 0 ] && link set badroute=0
echo "fabric bad_route $br f_badroute $(fab f_badroute)" >>"$T/step.log"
[ "$st" -eq 0 ] && [ "$br" -gt 0 ]
res $? "myri_badroute: with badroute=3 the switches count bad routes ($br), all arrive"

# 6. guest 0's cable pulled mid-stream, then put back
cable() {
	[ "$me" -eq 0 ] || return 0
	base=$(ctr tx_msgs)
	grown tx_msgs 200
	link pull s0 0
	sleep 2
	down=$(nic nic_tx_link_down)
	link plug s0 0
	echo "cable out 2 s: tx_link_down $down" >>"$T/step.log"
}
down=0
bar cable-go
stream cable 702 13 cable
st=$?
bar cable-done
# the cable was out while guest 0 sent: its card lost packets on it
[ "$st" -eq 0 ] && { [ "$me" -ne 0 ] || [ "$down" -gt 0 ]; }
res $? "myri_cable: guest 0's cable pulled mid-stream and put back, everything arrives"

# 7, 8. the receivers stop draining their cards for 1 s mid-stream (the
# rx_stall knob): the LANai runs out of RX slots and holds packets on the
# wire (STOP, rx_stops), the switch stalls them and pushes back on the
# sender.  With the switch timeout at 10 s nothing is truncated; at its
# default of 50 ms blocked packets are truncated and counted, and the
# edges send them again.  Everything arrives either way.
knob=/sys/kernel/debug/dp/$DP_IF/rx_stall
undrained() {
	base=$(ctr rx_msgs)
	grown rx_msgs 200
	echo "run_myri: $DP_IF rx_stall 1 (rx_msgs $(ctr rx_msgs))" >/dev/kmsg
	echo 1 >"$knob"
	sleep 1
	echo 0 >"$knob"
	echo "run_myri: $DP_IF rx_stall 0 (rx_msgs $(ctr rx_msgs))" >/dev/kmsg
}
# stall NAME DPID NONCE TIMEOUT_US: two streams per pair at once (DPID and
# NONCE, DPID + 10 and NONCE + 100: two pools' credit, more than the card's
# 64 RX slots hold);
# returns their status; sets stops (this card's rx_stops) and trunc (the
# fabric's truncated)
stall() {
	bar "$1-go"
	[ "$me" -eq 0 ] && { link set "timeout_us=$4"; link reset; }
	bar "$1-set"
	stops0=$(nic nic_rx_stops)
	stalls0=$(fab stalls)
	st=0
	if [ "$role" = recv ]; then
		timeout 200 $P recv "$2" "$3" "$N" 0 180 >"$T/recv.log" 2>&1 &
		p1=$!
		timeout 200 $P recv $(($2 + 10)) $(($3 + 100)) "$N" 0 180 >"$T/recv2.log" 2>&1 &
		p2=$!
		ready "$T/recv.log"
		ready "$T/recv2.log"
		bar "$1-bound"
		undrained
		wait $p1 || st=1
		wait $p2 || st=1
		cat "$T/recv.log" "$T/recv2.log" >>"$T/step.log"
	else
		bar "$1-bound"
		timeout 200 $P send "$peer_nid" "$2" "$3" "$N" $((me + 3)) >"$T/send.log" 2>&1 &
		p1=$!
		timeout 200 $P send "$peer_nid" $(($2 + 10)) $(($3 + 100)) "$N" $((me + 5)) >"$T/send2.log" 2>&1 &
		p2=$!
		wait $p1 || st=1
		wait $p2 || st=1
		cat "$T/send.log" "$T/send2.log" >>"$T/step.log"
	fi
	bar "$1-done"
	stops=$(( $(nic nic_rx_stops) - stops0 ))
	trunc=$(fab truncated)
	stalls=$(( $(fab stalls) - stalls0 ))
	echo "this card's nic_rx_stops +$stops; fabric truncated $trunc, stalled +$stalls" >>"$T/step.log"
	return "$st"
}
stall backpressure 704 15 10000000
st=$?
# The fabric held packets back (STOP/GO) while the receivers did not
# drain; whether this receiver's own card reached its STOP threshold
# depends on how much its sender had in flight (credit may keep that under
# the card's 64 slots), so its rx_stops is reported, not required.
[ "$st" -eq 0 ] && [ "$trunc" -eq 0 ] && [ "$stalls" -gt 0 ]
res $? "myri_backpressure: receivers that stop draining hold the senders back (the fabric stalled packets), nothing truncated, all arrive"
stall truncate 705 16 50000
st=$?
[ "$st" -eq 0 ] && [ "$trunc" -gt 0 ]
res $? "myri_truncate: packets blocked past the switch timeout are truncated ($trunc) and sent again, all arrive"

# 9. a sender's cable pulled past unreach_ms: ETIMEDOUT, no hang
if [ "$role" = recv ]; then
	# serves until nothing arrived for 8 s: the sender is cut off
	timeout 120 $P recv 707 18 0 0 90 8 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar unreach-bound
	wait $pid
	st=$?
	grep -q "^got [1-9]" "$T/recv.log" || st=1
	cat "$T/recv.log" >>"$T/step.log"
	bar unreach-done
	res $st "myri_unreach: what arrived before the sender's cable was pulled is intact"
else
	param() { echo "$2" >"/sys/module/dp/parameters/$1"; }
	param unreach_ms 3000
	bar unreach-bound
	base=$(ctr tx_msgs)
	$P send-until "$peer_nid" 707 18 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 100
	link pull s0 "$me"
	start=$(date +%s)
	st=1
	for i in $(seq 1 60); do
		if ! kill -0 $pid 2>/dev/null; then
			wait $pid
			st=$?
			break
		fi
		sleep 1
	done
	took=$(( $(date +%s) - start ))
	kill -9 $pid 2>/dev/null
	link plug s0 "$me"
	param unreach_ms 10000
	cat "$T/send.log" >>"$T/step.log"
	echo "the writer ended ${took} s after the cable was pulled; tx_link_down $(nic nic_tx_link_down)" >>"$T/step.log"
	grep -q "err ETIMEDOUT" "$T/send.log" || st=1
	bar unreach-done
	res $st "myri_unreach: the sender's cable pulled past unreach_ms (3 s): its write fails with ETIMEDOUT, no hang"
fi

# 10. rmmod with retransmissions pending, and with myri0 up, frames in
# flight on it (a ping every 10 ms): the netdev goes with the module.
# eth_unload remove: the card is removed from the PCI bus first, with the
# same traffic: myri0 goes with the card, then the module unloads.
eth_unload() {
	ping -q -i 0.01 -w 120 "$peer_ip" >/dev/null 2>&1 &
	pp=$!
	sleep 0.5
	up=$(cat "$sysnet/operstate" 2>/dev/null)
	rst=0
	if [ "${1:-}" = remove ]; then
		pdev=$(readlink -f "$sysnet/device")
		echo 1 >"$pdev/remove" || rst=1
		echo "card $pdev removed: rc $rst, $DP_IF $([ -e "$sysnet" ] && echo still there || echo gone)"
		[ -e "$sysnet" ] && rst=1
	fi
	mod_unload
	ust=$?
	[ "$rst" -eq 0 ] || ust=1
	kill $pp 2>/dev/null
	wait $pp 2>/dev/null
	echo "$DP_IF was $up at rmmod; after: $("$DPT_IP" -br link show "$DP_IF" 2>&1)"
	[ "$ust" -eq 0 ] && [ "$up" = up ] && [ ! -e "$sysnet" ]
}
if [ "$role" = recv ]; then
	timeout 600 $P recv 706 17 0 0 60 >"$T/recv.log" 2>&1 &
	pid=$!
	ready "$T/recv.log"
	bar rmmod-go
	bar rmmod-done
	kill $pid 2>/dev/null
	wait $pid
	eth_unload remove >>"$T/step.log" 2>&1
	res $? "myri_rmmod: the receiver's card removed with $DP_IF up and pinging takes $DP_IF with it, then the module unloads"
else
	bar rmmod-go
	base=$(ctr tx_msgs)
	$P send-until "$peer_nid" 706 17 >"$T/send.log" 2>&1 &
	pid=$!
	grown tx_msgs 100
	link pull s0 "$me"
	base=$(ctr tx_retrans)
	grown tx_retrans 1	# retransmissions pending: seen, not assumed
	und0=$(ctr tx_undelivered)
	kill -9 $pid
	wait $pid
	st=0
	und=$(( $(ctr tx_undelivered) - und0 ))
	echo "closed with retransmissions pending: tx_undelivered +$und" >>"$T/step.log"
	[ "$und" -gt 0 ] || st=1
	eth_unload >>"$T/step.log" 2>&1 || st=1
	link plug s0 "$me"
	res $st "myri_rmmod: sender killed with retransmissions pending, rmmod with $DP_IF up and pinging is clean"
	bar rmmod-done
fi
bar done
[ "$ktap_failed" -eq 0 ]
