#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test of profile-compare on synthetic runs that profile-report has read:
# instructions summed by group per message (a bandwidth run: bytes over
# size) and per leg (a ping-pong), calls counted at a function's first
# address in an exact run and "-" in a sampled one, --calls, --floor, and a
# missing or foreign DIR or an unknown --floor group failing.  Usage: profile-compare-test.sh PATH/TO/
# profile-compare.  Prints TAP; exit 0 when all pass.
set -u
pc=${1:?usage: profile-compare-test.sh PROFILE-COMPARE}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tab=$(printf '\t')
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..12"

tsv() {	# tsv DIR SYMBOL:SPACE:COUNT...: DIR/profile.tsv as profile-report writes it
	dir=$1
	shift
	echo "symbol${tab}space${tab}samples${tab}percent${tab}instructions_per_kib" >"$dir/profile.tsv"
	for r in "$@"; do
		echo "$r" | awk -F: -v t="$tab" '{ print $1 t $2 t $3 t "0.00" t "0" }' \
			>>"$dir/profile.tsv"
	done
}

# an exact bandwidth run: 1000 bytes in 1-byte messages, 1000 messages
mkdir -p "$d/dp/profile"
{
	echo PROFILE-BEGIN
	echo "bw 1 bytes 1000 period 1"
	echo PROFILE-END
	echo DPSYMS-BEGIN
	printf 'ffffffffc0001000 t dp_snd_start\t[dp]\n'
	printf 'ffffffffc0002000 t dp_cork_flush_fn\t[dp]\n'
	echo DPSYMS-END
	echo KSYMS-BEGIN
	printf 'ffffffff81000000 T _stext\nffffffff81001000 T __schedule\nffffffff81002000 T memcpy_erms\n' |
		gzip -c | base64
	echo KSYMS-END
} >"$d/dp/profile/icount-g0.out.log"
tsv "$d/dp/profile" dp_snd_start:kernel:3000 dp_cork_flush_fn:kernel:1000 \
	__schedule:kernel:4000 psi_group_change:kernel:2000 memcpy_erms:kernel:500 \
	"[user]:user:700" mystery_fn:kernel:300
# __schedule entered 2000 times, once more inside it; the flush worker 250
printf 'total 11500\nffffffff81001000 2000\nffffffff81001004 2000\nffffffffc0002000 250\n' \
	>"$d/dp/profile/insns.txt"

"$pc" "$d/dp/profile" >"$d/out.md" 2>"$d/err"
t $? "an exact bandwidth run is compared"
grep -q "^| instructions per message | dp bw 1 B (dp) |" "$d/out.md"
t $? "per message, the run named by its protocol, test and directory"
# dp.ko 4000 / 1000 messages; the scheduler 4000 + 2000; copies 500
grep -q "^| dp.ko | 4 |" "$d/out.md" && grep -q "^| the scheduler | 6 |" "$d/out.md" &&
	grep -q "^| copies and their checks | 0 |" "$d/out.md" &&
	grep -q "^| user space | 1 |" "$d/out.md" && grep -q "^| other | 0 |" "$d/out.md"
t $? "instructions summed by group, per message"
grep -q '^| \*\*all\*\* | \*\*12\*\* |' "$d/out.md"
t $? "the whole count per message (11500 / 1000)"
grep -q '^| `__schedule` | 2.000 |' "$d/out.md" &&
	grep -q '^| `dp_cork_flush_fn` | 0.250 |' "$d/out.md" &&
	grep -q '^| `vp_notify` | no such symbol |' "$d/out.md"
t $? "calls from a function's first address only, per message"

# a sampled ping-pong beside it: 100 round trips, period 1000, per leg
mkdir "$d/pp"
printf 'PROFILE-BEGIN\niters 100 period 1000 proto tcp\nPROFILE-END\n' >"$d/pp/icount-g0.out.log"
tsv "$d/pp" tcp_sendmsg:kernel:400 schedule:kernel:200 e1000_clean:kernel:100 \
	tul_rx:kernel:200
"$pc" --calls __schedule,nothing_here "$d/dp/profile" "$d/pp" >"$d/two.md" 2>"$d/err"
t $? "two runs, one sampled, side by side"
# 400 samples * 1000 / 200 legs = 2000; dp's per message beside it
grep -q "^| TCP/IP | 0 | 2000 |" "$d/two.md" && grep -q "^| the scheduler | 6 | 1000 |" "$d/two.md" &&
	grep -q "tcp pingpong (pp)" "$d/two.md"
t $? "a sampled run's samples times its period, per leg"
grep -q '^| `__schedule` | 2.000 | - |' "$d/two.md" &&
	grep -q '^| `nothing_here` | no such symbol | - |' "$d/two.md" &&
	! grep -q 'vp_notify' "$d/two.md"
t $? "--calls names the functions; a sampled run has no calls"
# Linux's driver and dp's own tulip helpers (tul_) by name
grep -q "^| Linux's NIC driver | 0 | 500 |" "$d/two.md" && grep -q "^| dp.ko | 4 | 1000 |" "$d/two.md"
t $? "Linux's NIC driver and dp.ko's tul_ helpers have groups of their own"

# the floor: least scheduler min(6, 1000), least user space min(0.7, 0);
# over each run's all, 11.5 a message and 4500 a leg
"$pc" --floor "the scheduler" --floor "user space" "$d/dp/profile" "$d/pp" >"$d/floor.md" 2>"$d/err" &&
	grep -q "^| floor: the least of the runs in the scheduler; user space | 6 | 6 |" "$d/floor.md" &&
	grep -q "^| the floor over the run's all | 0.522 | 0.001 |" "$d/floor.md"
t $? "--floor sums the least of the runs in each group named, over each run's all"
! "$pc" --floor "the scheduler" --floor "no such group" "$d/dp/profile" >/dev/null 2>&1 &&
	! "$pc" "$d/dp/profile" 2>/dev/null | grep -q "floor"
t $? "an unknown --floor group fails; without --floor no floor is printed"

mkdir "$d/foreign"
echo "not a profile" >"$d/foreign/profile.tsv"
cp "$d/pp/icount-g0.out.log" "$d/foreign/"
! "$pc" "$d/none" >/dev/null 2>&1 && ! "$pc" "$d/foreign" >/dev/null 2>&1
t $? "a missing or foreign run fails"
[ "$bad" -eq 0 ]
