#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test of profile-steady on two synthetic exact bandwidth profiles: the
# steady state per KiB and what is paid once, per symbol and in all; runs
# that do not match (size, protocol, bytes), a sampled profile and a
# missing one failing.  Usage: profile-steady-test.sh PATH/TO/profile-steady.
# Prints TAP; exit 0 when all pass.
set -u
ps=${1:?usage: profile-steady-test.sh PROFILE-STEADY}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tab=$(printf '\t')
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..10"

# run DIR BYTES DP_COUNT COPY_COUNT [FIRST]: an exact run moving BYTES
run() {
	mkdir -p "$1"
	{
		echo PROFILE-BEGIN
		echo "${5:-bw 1448 bytes $2 period 1}"
		echo PROFILE-END
		echo KSYMS-BEGIN
		echo KSYMS-END
	} >"$1/icount-g0.out.log"
	{
		printf 'symbol\tspace\tsamples\tpercent\tinstructions_per_kib\n'
		printf 'dp_snd_send\tkernel\t%s\t0\t0\n' "$3"
		printf 'clear_page_erms\tkernel\t%s\t0\t0\n' "$4"
	} >"$1/profile.tsv"
}
# dp_snd_send: 100 per KiB, none once; clear_page_erms: 5000 once, none per KiB
run "$d/a" 1048576 102400 5000
run "$d/b" 3145728 307200 5000
"$ps" "$d/a" "$d/b" >"$d/out.md" 2>"$d/err"
t $? "two matching runs are reported"
grep -q "^dp_snd_send${tab}kernel${tab}100.0${tab}0\$" "$d/b/profile-steady.tsv"
t $? "a per-byte cost: (307200 - 102400) / 2048 KiB = 100 per KiB, none once"
grep -q "^clear_page_erms${tab}kernel${tab}0.0${tab}5000\$" "$d/b/profile-steady.tsv"
t $? "a cost paid once: 0 per KiB, 5000 once"
grep -q '\*\*100 instructions per KiB delivered\*\* in the steady state; 5000 instructions paid once' "$d/out.md"
t $? "the totals"
grep -q "they counted 105 and 102 per KiB" "$d/out.md"
t $? "each run's own figure, the once-paid spread over its bytes"
grep -q 'dp.ko.s symbols in the steady state: 100 per KiB' "$d/out.md"
t $? "dp.ko's share"

# fails NAME SHORT LONG: profile-steady refuses the pair with exit 1
fails() {
	"$ps" "$2" "$3" >/dev/null 2>&1
	[ $? -eq 1 ]
	t $? "$1"
}
run "$d/c" 3145728 307200 5000 "bw 1024 bytes 3145728 period 1"
fails "runs of different sizes fail" "$d/a" "$d/c"
fails "a second run moving fewer bytes fails" "$d/b" "$d/a"
run "$d/s" 3145728 307200 5000 "bw 1448 bytes 3145728 period 50000"
fails "a sampled profile fails" "$d/a" "$d/s"
fails "a missing run fails" "$d/a" "$d/none"
[ "$bad" -eq 0 ]
