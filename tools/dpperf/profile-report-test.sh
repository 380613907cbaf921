#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test of profile-report on a synthetic make-profile run: the per-leg
# arithmetic, the dp share, the round trip from icount.tsv, and a missing
# or empty PROFILE block failing.  Usage: profile-report-test.sh PATH/TO/
# profile-report.  Prints TAP; exit 0 when all pass.
set -u
pr=${1:?usage: profile-report-test.sh PROFILE-REPORT}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tab=$(printf '\t')
n=0 bad=0
t() { # STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; bad=$((bad + 1)); fi
}
echo "TAP version 13"
echo "1..11"

mkdir "$d/run"
{
	echo "KTAP version 1"
	echo "ok 1 netns"
	echo PROFILE-BEGIN
	echo "iters 1000 period 10000"
	echo "    60.00%           600  [k] dp_snd_send"
	echo "    30.00%           300  [k] tulip_rx"
	echo "    10.00%           100  [.] main"
	echo PROFILE-END
} >"$d/run/icount-g0.out.log"
printf 'mode=icount-tulip%sdp%spingpong%s1%s10.00%sus\n' "$tab" "$tab" "$tab" "$tab" "$tab" \
	>"$d/run/icount.tsv"
"$pr" "$d/run" >"$d/out.md" 2>"$d/err"
t $? "a good block is reported"
# 600 samples * 10000 / (2 * 1000) = 3000 instructions per leg
grep -q "^dp_snd_send${tab}kernel${tab}600${tab}60.00${tab}3000\$" "$d/run/profile.tsv"
t $? "samples become instructions per leg (600 * 10000 / 2000 = 3000)"
grep -q "5000 instructions per leg sampled" "$d/out.md"
t $? "the sampled total per leg (1000 samples)"
grep -q "dpperf measured 10.00 us per round trip, 5000 instructions per leg" "$d/out.md"
t $? "the measured round trip, as instructions per leg"
grep -q 'Symbols named `dp_\*` (dp.ko): 60.0%' "$d/out.md"
t $? "the dp.ko share"

# dpg.profile=bw:SIZE: instructions per KiB delivered
mkdir "$d/bw"
{
	echo PROFILE-BEGIN
	echo "bw 65536 bytes 1048576 period 10000"
	echo "    60.00%           600  [k] dp_snd_send"
	echo "    40.00%           400  [k] tulip_rx"
	echo PROFILE-END
	echo DPSTATS-BEGIN
	echo "a:tx_data 767"
	echo "a:tx_retrans 0"
	echo "b:rx_drop_ring 12"
	echo DPSTATS-END
} >"$d/bw/icount-g0.out.log"
printf 'mode=icount-tulip%sdp%sbw%s65536%s100.00%sMB/s\n' "$tab" "$tab" "$tab" "$tab" "$tab" \
	>"$d/bw/icount.tsv"
"$pr" "$d/bw" >"$d/bw.md" 2>"$d/err"
t $? "a bandwidth block is reported"
# 600 samples * 10000 / (1048576 / 1024) = 5859 instructions per KiB
grep -q "^dp_snd_send${tab}kernel${tab}600${tab}60.00${tab}5859\$" "$d/bw/profile.tsv"
t $? "samples become instructions per KiB (600 * 10000 / 1024 = 5859)"
grep -q "9766 instructions per KiB delivered sampled; dpperf measured 100.00 MB/s, 10240 instructions per KiB" "$d/bw.md"
t $? "the sampled total and the measured bandwidth, per KiB"
grep -q "non-zero): a:tx_data 767, b:rx_drop_ring 12\.\$" "$d/bw.md"
t $? "dp's non-zero counters, in order"
grep -q "dpctl stats" "$d/out.md"
t $(( $? == 0 )) "no counters line without a DPSTATS block"

mkdir "$d/empty"
printf 'PROFILE-BEGIN\niters 10 period 10\nPROFILE-END\n' >"$d/empty/icount-g0.out.log"
rc=0
"$pr" "$d/empty" >/dev/null 2>&1 && rc=1
"$pr" "$d/none" >/dev/null 2>&1 && rc=1
t $rc "an empty profile or a missing log fails"
[ $bad -eq 0 ]
