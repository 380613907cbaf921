#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test of rel-report on synthetic guest-rel.sh logs: one run's table, the
# mean and range of several runs (as logs, or as the blocks of one
# reliability.tsv), a run that failed a figure, dp's goodput over TCP's per
# run, and a log without results failing.  Usage: rel-report-test.sh
# PATH/TO/rel-report.  Prints TAP; exit 0 when all pass.
set -u
rr=${1:?usage: rel-report-test.sh REL-REPORT}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..10"

# log FILE DP_BW TCP_BW RAW_RTT: one run, loss 1 only
log() {
	{
		echo "KTAP version 1"
		echo "  DPPERF-BEGIN"
		printf '  # loss=1 dp bw frames, client: tx_msgs 10\n'
		printf '  loss=1\tdp\tpingpong\t1\t1000.0\tus\n'
		printf '  loss=1\tdp-raw\tpingpong\t1\t%s\tus\n' "$4"
		printf '  loss=1\ttcp\tpingpong\t1\t3000.0\tus\n'
		printf '  loss=1\tdp\tbw\t1024\t%s\tMB/s\n' "$2"
		printf '  loss=1\tdp-raw\tbw\t1024\t12.0\tMB/s\n'
		printf '  loss=1\ttcp\tbw\t1024\t%s\tMB/s\n' "$3"
		echo "  DPPERF-END"
	} >"$1"
}

log "$d/a.log" 6.0 12.0 nan
log "$d/b.log" 10.0 8.0 500.0
"$rr" "$d/a.log" >"$d/one.md"
t $? "one log is reported"
grep -q '^| 1% | 1000 | failed | 3000 | 6.00 | 12.00 | 12.00 |$' "$d/one.md"
t $? "one run: each figure as measured, a nan size failed"
! grep -q "run 1" "$d/one.md"
t $? "one run: no table of runs"

"$rr" "$d/a.log" "$d/b.log" >"$d/two.md"
t $? "two logs are reported"
grep -q '| 8.00 (6.00 to 10.00) |' "$d/two.md"
t $? "two runs: dp's goodput is the mean, with the least and greatest"
grep -q '| 500 (500 to 500; 1 of 2 failed) |' "$d/two.md"
t $? "two runs: a figure one run failed says so"
grep -q '^| 1% | 0.50 | 1.25 | 0.80 |$' "$d/two.md"
t $? "dp over TCP in each run (6/12, 10/8) and of the means (8/10)"

# make reliability's reliability.tsv: the runs' blocks in one file
sed -n 's/^ *//; /^DPPERF-BEGIN/,/^DPPERF-END/p' "$d/a.log" "$d/b.log" >"$d/rel.tsv"
"$rr" "$d/rel.tsv" >"$d/tsv.md"
cmp -s "$d/two.md" "$d/tsv.md"
t $? "the blocks of one reliability.tsv are runs, as separate logs are"

echo "KTAP version 1" >"$d/none.log"
"$rr" "$d/none.log" >/dev/null 2>&1
t $((! $?)) "a log without results fails"
"$rr" >/dev/null 2>&1
t $((! $?)) "no argument fails"

[ "$bad" -eq 0 ]
