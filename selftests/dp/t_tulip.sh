#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# t_tulip.sh probe|unbind|rmmod: dp's tulip driver taking, losing and giving
# back its devices.  unbind and rmmod run with lib.sh's pair set up over
# tulip (DPT_NIC=tulip), probe with the module not loaded; KTAP on stdout.
#   probe   an unknown backend= is refused; a plain insmod (no backend=)
#           names the two unbound tulips tulip0 and tulip1 in PCI order with
#           their SROM MACs, their test knobs in debugfs only; rmmod releases
#           them; backend=tulip is the initial node's default backend; Linux's
#           tulip driver can take them (then it is removed again)
#   unbind  unbind tulip0 through sysfs while A is sending (the sender sees
#           ENETDOWN, dpA loses its NIC), bind it back: it is tulip0 again,
#           dpA re-attaches and a message reaches B
#   rmmod   A sends, the sender is killed and dp removed at once: rmmod
#           stops the chips with frames still in their rings
cd "$(dirname "$0")" || exit 1
. ./lib.sh
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=$((fail + 1)); fi; }
drv=$DPT_TULIP_DRV
# dpA's tx_msgs; flowing N: wait (up to 30 s) until dpA has sent N more
# messages than $base, the sender's traffic seen, not assumed after a sleep
tx_a() { "$DPT_IP" netns exec dpA dpctl stats 2>/dev/null | awk '$1 == "tx_msgs" { print $2 }'; }
flowing() {
	i=0
	while [ $(( $(tx_a) - base )) -lt "$1" ] && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ $(( $(tx_a) - base )) -ge "$1" ]
}
echo "KTAP version 1"

case ${1:-} in
probe)
	echo "1..8"
	! mod_load backend=nosuch 2>/dev/null && ! mod_loaded
	ok $? "insmod dp.ko backend=nosuch is refused"
	mod_load
	ok $? "insmod dp.ko (no backend=)"
	a=$(tulip_sys tulip0) && b=$(tulip_sys tulip1) &&
		[ "$(basename "$a")" = 0000:00:03.0 ] && [ "$(basename "$b")" = 0000:00:04.0 ]
	ok $? "tulip0 and tulip1 in PCI order (${a##*/}, ${b##*/})"
	dmesg | grep -q 'tulip0: 21143, MAC 52:54:00:00:00:01' &&
		dmesg | grep -q 'tulip1: 21143, MAC 52:54:00:00:00:02'
	ok $? "MACs read from the SROMs (checksums good)"
	dbg=/sys/kernel/debug/dp/tulip0
	[ -e "$a/dp_stats" ] && [ ! -e "$a/dp_tx_stall" ] && [ ! -e "$a/dp_rx_stall" ] &&
		[ "$(cat "$dbg/tx_stall")" = 0 ] && [ "$(cat "$dbg/rx_stall")" = 0 ]
	ok $? "test knobs in debugfs ($(ls "$dbg" 2>/dev/null | tr '\n' ' ')), none in sysfs"
	mod_unload && [ ! -e "$drv" ] && [ ! -e /sys/bus/pci/devices/0000:00:03.0/driver ]
	ok $? "rmmod dp leaves both devices unbound"
	mod_load backend=tulip nid=9 ifname=tulip0 &&
		dpctl node >"$T/node.txt" && grep -qx 'backend tulip' "$T/node.txt" &&
		grep -qx 'ifname tulip0' "$T/node.txt" && mod_unload
	ok $? "backend=tulip: the initial node's default ($(tr '\n' ' ' <"$T/node.txt" 2>/dev/null))"
	modprobe tulip && i=0 &&
		while [ ! -e /sys/bus/pci/devices/0000:00:03.0/net ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done &&
		[ "$(basename "$(readlink /sys/bus/pci/devices/0000:00:03.0/driver)")" = tulip ]
	ok $? "Linux's tulip driver takes them back ($(ls /sys/bus/pci/devices/0000:00:03.0/net 2>/dev/null))"
	rmmod tulip
	;;
unbind)
	echo "1..7"
	pci=$(basename "$DPT_SYSA")
	base=$(tx_a)
	./dp_tulip blast 20 >"$T/blast.log" 2>&1 &
	bp=$!
	flowing 200
	ok $? "traffic flows from dpA before the unbind ($(( $(tx_a) - base )) sent)"
	echo "$pci" >"$drv/unbind"
	ok $? "unbind $pci ($DPT_IFA) under traffic"
	wait $bp
	st=$?
	sed 's/^/# /' "$T/blast.log"
	ok $st "the sender stopped cleanly (ENETDOWN)"
	"$DPT_IP" netns exec dpA dpctl node | grep -q '^backend none'
	ok $? "dpA has no NIC any more"
	echo "$pci" >"$drv/bind"
	ok $? "bind $pci back"
	[ "$(cat "$drv/$pci/dp_name" 2>/dev/null)" = "$DPT_IFA" ]
	ok $? "it is $DPT_IFA again"
	x "$DPT_IP" netns exec dpA dpctl node set dev "$DPT_IFA" backend tulip &&
		./dp_tulip max >"$T/max.log" 2>&1
	st=$?
	sed 's/^/# /' "$T/max.log"
	ok $st "dpA re-attached, 1448-byte messages flow again"
	;;
rmmod)
	echo "1..3"
	base=$(tx_a)
	./dp_tulip blast 20 >"$T/blast.log" 2>&1 &
	bp=$!
	flowing 200
	base=$(tx_a)
	flowing 20	# still sending at the kill: frames in flight
	ok $? "the sender is sending when it is killed ($(( $(tx_a) - base )) in the last moment)"
	kill -9 $bp
	wait $bp 2>/dev/null
	ns_clean
	mod_unload
	ok $? "rmmod right after the sender dies, frames in flight"
	[ ! -e "$drv" ]
	ok $? "the dp_tulip driver is gone (devices unbound)"
	;;
*)
	echo "1..1"
	ok 1 "usage: t_tulip.sh probe|unbind|rmmod"
	;;
esac
[ "$fail" -eq 0 ]
