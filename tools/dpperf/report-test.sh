#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are run through check()
# Test of the report generator on synthetic dpperf output: KTAP noise, CRs,
# a failed (nan) size, two runs of one mode averaged.  Usage: report-test.sh
# PATH/TO/report.  Prints TAP; exit 0 when all pass.
set -u
report=${1:?usage: report-test.sh REPORT}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tab=$(printf '\t')
cr=$(printf '\r')

# gen MODE PROTO TEST UNIT SIZE:VALUE...: result lines as dpperf prints them
gen() {
	m=$1 p=$2 t=$3 u=$4; shift 4
	for sv in "$@"; do
		echo "mode=$m$tab$p$tab$t$tab${sv%%:*}$tab${sv#*:}$tab$u$cr"
	done
}
{
	echo "KTAP version 1"
	echo "ok 1 dp-load"
	echo DPPERF-BEGIN
	echo "# mode=realtime dpperf client proto=dp recv=spin peer=2 iters=1000"
	gen realtime dp pingpong us 1:50 1500:380
	gen realtime udp pingpong us 1:100 1500:500
	gen realtime tcp pingpong us 1:125 1500:nan
	echo "# mode=realtime failed proto=tcp test=pingpong size=1500 reason=timeout"
	gen realtime dp bw MB/s 1500:12
	echo "# mode=realtime dp sender, bw 1500: tx_msgs +1399 tx_blocked +17 tx_retrans +0"
	echo "# mode=realtime host: other processes took 40.1 CPU-s over the run's 66 s (0.61 of a core): NOT quiet: the real-time figures ran beside other work"
	gen realtime udp bw MB/s 1500:8
	gen realtime tcp bw MB/s 1500:6
	# bwsize: dp reaches half its peak (100) between 1024 (40) and 4096
	# (60): 2^(10 + (50-40)/(60-40) * 2) = 2048; TCP at 4096 exactly
	# (its curve flat from there); UDP stops at 16384, a size failed
	gen realtime dp bwsize MB/s 1:1 1024:40 4096:60 65536:90 1048576:100
	gen realtime tcp bwsize MB/s 1:1 1024:10 4096:40 65536:80 1048576:80
	gen realtime udp bwsize MB/s 1:2 1024:20 4096:30 16384:40 65536:nan
	echo DPPERF-END
} >"$d/guest0.tsv"
{
	echo DPPERF-BEGIN
	gen realtime dp pingpong us 1:70
	gen icount dp pingpong us 1:20 64:22
	gen icount udp pingpong us 1:32.5 64:33
	gen icount tcp pingpong us 1:40 64:41
	gen icount raw pingpong us 1:25 64:26
	gen icount dp p50 us 1:19
	gen icount udp p50 us 1:32
	gen icount dp p99 us 1:30
	gen icount udp p99 us 1:40
	# bandwidth at 1500 B: 9.96 / 10 = 0.996, below 1.0 by less than
	# two decimals show
	gen icount dp bw MB/s 1500:9.96
	gen icount udp bw MB/s 1500:10
	gen icount dp rate msg/s 1:50000
	gen icount udp rate msg/s 1:40000
	# by kernel entry: 64-byte messages; a bogus entry proto is ignored
	gen icount dp-write entry msg/s 64:40000
	gen icount dp-write entryns ns 64:10000
	gen icount dp-sendv32 entry msg/s 64:90000
	gen icount dp-sendv32 entryns ns 64:1500
	gen icount dp-uring8 entry msg/s 64:60000
	gen icount dp-uring8 entryns ns 64:nan
	gen icount dp-bogus entry msg/s 64:1
	gen icount dp-write sendcost ns 64:4000
	gen icount dp-sendv32 sendcost ns 64:1000
	echo DPPERF-END
} >"$d/run2.tsv"
# the sender-alone costs again with interrupt moderation on (its own guest)
{
	echo DPPERF-BEGIN
	gen icount-moderated dp-write sendcost ns 64:2000
	gen icount-moderated dp-sendv32 sendcost ns 64:300
	echo DPPERF-END
} >"$d/icount-moderated.tsv"
# MPI over dp against MPI over TCP (NetPIPE, tools/mpi/guest-mpi.sh)
{
	echo DPPERF-BEGIN
	gen mpi dp mpilat us 1:40 1048576:9000
	gen mpi tcp mpilat us 1:100 1048576:12000
	gen mpi dp mpibw MB/s 1:0.03 1048576:116.5
	gen mpi tcp mpibw MB/s 1:0.01 1048576:87.38
	echo DPPERF-END
} >"$d/demo-mpi.tsv"
# the same under -icount (mode mpiicount), a section of its own
{
	echo DPPERF-BEGIN
	gen mpi-icount dp mpilat us 1:30
	gen mpi-icount tcp mpilat us 1:80
	echo DPPERF-END
} >"$d/demo-mpi-icount.tsv"

# make reliability's file (loss=N lines, two runs): goodput at 1% loss
# dp (5 + 7) / 2 = 6 against TCP's 10 (0.60, missed); at 5% 4 against 2
mkdir "$d/relperf"
{
	echo "# run 1 of 2"
	printf 'loss=1\tdp\tbw\t1024\t5\tMB/s\nloss=1\ttcp\tbw\t1024\t10\tMB/s\n'
	printf 'loss=5\tdp\tbw\t1024\t4\tMB/s\nloss=5\ttcp\tbw\t1024\t2\tMB/s\n'
	echo "# run 2 of 2"
	printf 'loss=1\tdp\tbw\t1024\t7\tMB/s\nloss=1\ttcp\tbw\t1024\t10\tMB/s\n'
} >"$d/relperf/reliability.tsv"
# a README with the targets' markers, and one without
begin='<!-- TARGETS_BEGIN: written by tools/dpperf/report --readme; do not edit -->'
printf '# x\n\n%s\nstale\n<!-- TARGETS_END -->\n\n## after\n' "$begin" >"$d/README.md"
printf '# x\n' >"$d/README-none.md"

n=0 rc=0
check() {	# check DESCRIPTION COMMAND...
	desc=$1; shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $desc"; else echo "not ok $n $desc"; rc=1; fi
}
has() { grep -qF -- "$1" "$d/results.md"; }
quiet() { "$@" >/dev/null; }

check "report runs" quiet "$report" "$d"
check "realtime section" has "## mode=realtime"
check "icount section" has "## mode=icount"
# dp 1 B: (50 + 70) / 2 = 60 us; dp/UDP 0.60, dp/TCP 0.48
check "runs averaged, ratios" has "| 1 | 60.0 | 100.0 | 125.0 | 0.60 | 0.48 |"
check "failed size shown" has "| 1500 | 380.0 | 500.0 | failed | 0.76 | - |"
check "bandwidth ratios" has "| 1500 | 12.00 | 8.00 | 6.00 | 1.50 | 2.00 |"
check "icount raw column" has "| 1 | 20.0 | 32.5 | 40.0 | 25.0 | 0.62 | 0.50 | 0.80 |"
check "median table" has "### Round trip, median (us, lower is better)"
check "median ratio" has "| 1 | 19.0 | 32.0 | 0.59 |"
check "99th percentile ratio" has "| 1 | 30.0 | 40.0 | 0.75 |"
check "message rate table" has "### Message rate, one sender (msg/s, higher is better)"
check "message rate ratio" has "| 1 | 50000 | 40000 | 1.25 |"
check "entry table" has "### Message rate by kernel entry (dp, one sender)"
check "entry: one write, the baseline" has "| 64 | one write() | 40000 | 10000 | 1.00 | 4000 | 1.00 |"
check "entry: a batch against one write" has "| 64 | dp_sendv, 32 per call | 90000 | 1500 | 0.15 | 1000 | 0.25 |"
check "entry: a failed cost, no ratio" has "| 64 | io_uring, 8 DP_URING_SEND per submit | 60000 | failed | - | - | - |"
check "entry: an unknown entry is not reported" sh -c "! grep -q bogus '$d/results.md'"
check "entry: not counted as the rate of single writes" sh -c "! grep -q '| 64 | 40000 | ' '$d/results.md'"
check "bandwidth against size table" has "### Bandwidth against size, 1 B to 1 MiB (MB/s, higher is better)"
check "bandwidth against size row" has "| 1048576 | 100.00 | - | 80.00 | - | 1.25 |"
check "n1/2 of dp, interpolated" has "| dp | 2048 | 100.00 | 1..1048576 |"
check "n1/2 of TCP at a measured size" has "| TCP | 4096 | 80.00 | 1..1048576 |"
check "n1/2 of UDP from its own peak" has "| UDP | 1024 | 40.00 | 1..16384 |"
check "MPI section and its note" has "NetPIPE's NPmpi between two guests"
check "MPI latency table" has "### MPI latency, one way (NetPIPE: half the round trip) (us, lower is better)"
check "MPI latency ratio" has "| 1 | 40.0 | 100.0 | 0.40 |"
check "MPI bandwidth ratio" has "| 1048576 | 116.50 | 87.38 | 1.33 |"
check "MPI under icount: its section and note" has "the same NetPIPE runs in ONE guest"
check "MPI under icount: its own ratio" has "| 1 | 30.0 | 80.0 | 0.38 |"
check "failure noted" has "failed proto=tcp test=pingpong size=1500 reason=timeout"
check "the dp sender's counters noted" has "dp sender, bw 1500: tx_msgs +1399 tx_blocked +17"
check "the host's other load noted" has "host: other processes took 40.1 CPU-s over the run's 66 s (0.61 of a core): NOT quiet"
# the targets' table: 20 / 32.5 = 0.62 against 0.6; bandwidth 12 / 6 at the
# one size; a batch's cost 1000 / 4000; n1/2 2048 / 4096; MPI 40 / 100
check "targets: a missed one" has "| 13 | e1000 netdev, icount | 1-byte round trip, dp/UDP | 0.62 | ≤ 0.6 | missed |"
check "targets: a miss that two decimals would round up" has "| 13 | e1000 netdev, icount | bandwidth at 1500 B, dp/UDP | 0.996 | ≥ 1.0 | missed |"
check "targets: the worst of the sizes" has "| bandwidth at every size, dp/TCP (the worst) | 2.00 (at 1500 B, of 1 size) | ≥ 1.0 | **met** |"
check "targets: a batch against one write" has "| 16 | e1000 netdev, icount | send cost per message in a batch of 32, of one write()'s | 0.25 | ≤ 0.2 | missed |"
check "targets: a batch, interrupt moderation on" has "| 16 | e1000 netdev, icount, interrupt moderation on | send cost per message in a batch of 32, of one write()'s | 0.15 | ≤ 0.2 | **met** |"
check "targets: n1/2" has "| 16 | 2 guests, virtio-net, real time | n½, dp/TCP | 0.50 (2048 against 4096 B) | ≤ 1.0 | **met** |"
check "targets: MPI" has "| 18 | MPI, 2 guests, virtio-net, real time | 1-byte latency, dp/TCP | 0.40 | ≤ 0.5 | **met** |"
check "targets: a link not in the run" has "| 13 | dp's tulip driver, icount | 1-byte round trip, dp/UDP | not in this run | ≤ 0.35 | - |"
check "targets: goodput under loss, runs averaged" has "1% of frames dropped | goodput in 1024-byte messages, dp/TCP | 0.60 | ≥ 1.0 | missed |"
check "targets: goodput at 5% loss" has "5% of frames dropped | goodput in 1024-byte messages, dp/TCP | 2.00 | ≥ 1.0 | **met** |"
check "--readme runs" quiet "$report" --readme "$d/README.md" "$d"
check "--readme: the table between the markers" \
	grep -qF "| 13 | e1000 netdev, icount | 1-byte round trip, dp/UDP | 0.62 |" "$d/README.md"
check "--readme: what was there is gone" sh -c "! grep -q stale '$d/README.md'"
check "--readme: the rest kept" sh -c "grep -q '^# x' '$d/README.md' && grep -q '^## after' '$d/README.md'"
check "--readme: a second run replaces, not adds" sh -c \
	"'$report' --readme '$d/README.md' '$d' >/dev/null && [ \$(grep -cF '| 13 | e1000 netdev, icount | 1-byte' '$d/README.md') = 1 ]"
check "--readme: no markers is an error" sh -c "! '$report' --readme '$d/README-none.md' '$d' >/dev/null 2>&1"
if command -v gnuplot >/dev/null; then
	check "latency.png" test -s "$d/latency.png"
	check "bandwidth.png" test -s "$d/bandwidth.png"
	check "bwsize.png" test -s "$d/bwsize.png"
fi
check "empty dir is an error" sh -c "! '$report' '$d/none' 2>/dev/null"
[ $rc -eq 0 ] || sed 's/^/# /' "$d/results.md"
echo "1..$n"
exit $rc
