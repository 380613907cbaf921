#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# t_myri_card.sh: the simulated LANai as a guest sees it before any driver
# (cluster.py --fabric TOPO --mode run --cmd "sh .../t_myri_card.sh"):
# QEMU's ivshmem-doorbell (1af4:1110) with the simulator's memory in BAR2,
# its ID in BAR0, and a doorbell that reaches the simulator, checked with
# busybox devmem on the physical BARs (docs/myrinet.md).  KTAP on stdout.
n=0 fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fail=$((fail + 1)); fi; }
rd() { devmem $(($1)) 32; }
wr() { devmem $(($1)) 32 "$2"; }
# wait up to 5 s for the 32-bit word at $1 to read $2
wait_for() {
	i=0
	while [ "$(rd "$1")" != "$2" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(rd "$1")" = "$2" ]
}

echo "KTAP version 1"
echo "1..6"
d=
for f in /sys/bus/pci/devices/*; do
	[ "$(cat "$f/vendor")" = 0x1af4 ] && [ "$(cat "$f/device")" = 0x1110 ] && d=$f
done
[ -n "$d" ]
ok $? "an ivshmem device (1af4:1110) is there (${d##*/})"
[ -n "$d" ] || { echo "Bail out! no card"; exit 1; }
bar0=$(sed -n 1p "$d/resource" | cut -d' ' -f1)
bar2=$(sed -n 3p "$d/resource" | cut -d' ' -f1)
end2=$(sed -n 3p "$d/resource" | cut -d' ' -f2)
echo 1 >"$d/enable" 2>/dev/null
[ $((end2 - bar2 + 1)) -eq $((1 << 20)) ]
ok $? "BAR2 is the LANai's 1 MiB of SRAM ($bar2..$end2)"
# "dp-myrisim LANai" as four little-endian words
sig="$(rd "$bar2") $(rd "$bar2 + 4") $(rd "$bar2 + 8") $(rd "$bar2 + 12")"
[ "$sig" = "0x6D2D7064 0x73697279 0x4C206D69 0x69614E41" ]
ok $? "BAR2 carries the simulator's signature ($sig)"
[ "$(rd "$bar0 + 8")" = 0x00000001 ] && [ "$(rd "$bar2 + 16")" = 0x00000001 ] &&
	[ "$(rd "$bar2 + 24")" = 0x00002000 ]
ok $? "IVPosition 1, layout version 1, MTU 8192"
# host_state (offset 128) RESET, doorbell peer 0 vector 2 (DB_CTL): READY (1 at 192)
wr "$bar2 + 128" 0 && wr "$bar0 + 12" 2 && wait_for "$bar2 + 192" 0x00000001
ok $? "RESET through BAR2 and the doorbell: the NIC shows READY"
wr "$bar2 + 128" 1 && wr "$bar0 + 12" 2 && wait_for "$bar2 + 192" 0x00000002
ok $? "RUN: the NIC shows RUN (the doorbell reached the simulator)"
wr "$bar2 + 128" 0 && wr "$bar0 + 12" 2
[ "$fail" -eq 0 ]
