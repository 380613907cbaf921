#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Test of profile-report on a synthetic make-profile run: the per-leg
# arithmetic, the link it ran over, the dp share, the round trip from icount.tsv, the
# bandwidth's and the sender's cost (per KiB, per message), make profile-mpi's
# MPI window (per leg), and a missing
# or empty PROFILE block failing.  Usage: profile-report-test.sh PATH/TO/
# profile-report.  Prints TAP; exit 0 when all pass.
set -u
pr=${1:?usage: profile-report-test.sh PROFILE-REPORT}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
tab=$(printf '\t')
# shellcheck source=tap.sh
. "$(dirname "$0")/tap.sh"
echo "TAP version 13"
echo "1..29"

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
grep -q "dp over its own tulip driver" "$d/out.md"
t $? "a run over the tulips says so"
mkdir "$d/virtio"
sed 's/tulip_rx/virtnet_poll/' "$d/run/icount-g0.out.log" >"$d/virtio/icount-g0.out.log"
echo "ffffffffc0240000 t virtnet_poll${tab}[virtio_net]" >>"$d/virtio/icount-g0.out.log"
sed 's/mode=icount-tulip/mode=icount/' "$d/run/icount.tsv" >"$d/virtio/icount.tsv"
"$pr" "$d/virtio" >/dev/null 2>"$d/err" &&
	grep -q "dp over the netdev backend on virtio-net" "$d/virtio/profile.md"
t $? "a run over virtio-net (PROFILE_NIC) names the netdev backend on it"

# dpg.profile=rt:SIZE: the ping-pong in SIZE-byte messages, its own round trip
mkdir "$d/rt"
sed 's/^iters 1000 period 10000$/iters 1000 period 10000 size 1448/' \
	"$d/run/icount-g0.out.log" >"$d/rt/icount-g0.out.log"
{
	cat "$d/run/icount.tsv"
	printf 'mode=icount-tulip%sdp%spingpong%s1448%s30.00%sus\n' "$tab" "$tab" "$tab" "$tab" "$tab"
} >"$d/rt/icount.tsv"
"$pr" "$d/rt" >"$d/rt.md" 2>"$d/err" &&
	grep -q "where a 1448-byte dp round trip's instructions go" "$d/rt.md" &&
	grep -q "dpperf measured 30.00 us per round trip, 15000 instructions per leg" "$d/rt.md"
t $? "a ping-pong in 1448-byte messages is named, with its own round trip (not 1 byte's)"

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

# dpg.profile=send:N: instructions per message, the batch's own measurement
mkdir "$d/send"
{
	echo PROFILE-BEGIN
	echo "send 64 batch 32 messages 2000 period 10000"
	echo "    75.00%           750  [k] dp_snd_send"
	echo "    25.00%           250  [k] e1000_xmit_frame"
	echo PROFILE-END
} >"$d/send/icount-g0.out.log"
{
	printf 'mode=icount%sdp-write%ssendcost%s64%s6590.810%sns\n' "$tab" "$tab" "$tab" "$tab" "$tab"
	printf 'mode=icount%sdp-sendv32%ssendcost%s64%s6041.562%sns\n' "$tab" "$tab" "$tab" "$tab" "$tab"
} >"$d/send/icount.tsv"
echo "ffffffffc0240000 t virtnet_poll${tab}[virtio_net]" >>"$d/send/icount-g0.out.log"
echo "ffffffffc0250000 t e1000_xmit_frame${tab}[e1000]" >>"$d/send/icount-g0.out.log"
echo "[    0.0] Command line: console=ttyS0 dpg.modprobe=e1000 dpg.profile=send:32" \
	>>"$d/send/icount-g0.out.log"
"$pr" "$d/send" >"$d/send.md" 2>"$d/err"
t $? "a sender's block is reported"
grep -q "dp over the netdev backend on e1000" "$d/send.md"
t $? "the NIC the harness loaded a driver for names the link (both modules in)"
# 750 samples * 10000 / 2000 messages = 3750 instructions per message
grep -q "^dp_snd_send${tab}kernel${tab}750${tab}75.00${tab}3750\$" "$d/send/profile.tsv"
t $? "samples become instructions per message (750 * 10000 / 2000 = 3750)"
grep -q "dp_sendv() batches of 32" "$d/send.md" &&
	grep -q "5000 instructions per message sampled; dpperf measured 6042 ns inside the send calls per message" "$d/send.md"
t $? "the batch named, its own measured cost (dp-sendv32's, not dp-write's)"

# exact mode: QEMU's counts by address, named from System.map and dp.ko
mkdir "$d/exact"
{
	echo PROFILE-BEGIN
	echo "bw 65536 bytes 1048576 period 1"
	echo PROFILE-END
	echo DPSYMS-BEGIN
	printf 'ffffffffc0001000 t dp_snd_send\t[dp]\n'
	printf 'ffffffffc0001400 t dp_tulip_xmit\t[dp]\n'
	echo DPSYMS-END
	echo KSYMS-BEGIN
	printf 'ffffffff81000000 T _stext\nffffffff81001000 T memcpy_erms\nffffffff81002000 D some_data\n' |
		gzip -c | base64
	echo KSYMS-END
} >"$d/exact/icount-g0.out.log"
# dp_snd_send 600 + 400 = 1000, dp_tulip_xmit 300, memcpy_erms 2048 (the
# data symbol after it does not end it), user space 100
printf 'total 3448\nffffffffc0001000 600\nffffffffc0001010 400\nffffffffc0001500 300\n' \
	>"$d/exact/insns.txt"
printf 'ffffffff81002100 2048\n401000 100\n' >>"$d/exact/insns.txt"
printf 'mode=icount-tulip%sdp%sbw%s65536%s100.00%sMB/s\n' "$tab" "$tab" "$tab" "$tab" "$tab" \
	>"$d/exact/icount.tsv"
"$pr" "$d/exact" >"$d/exact.md" 2>"$d/err"
t $? "an exact count is reported"
# 1000 instructions / (1048576 / 1024) KiB = 0.98 -> "1"; shares of 3448
grep -q "^memcpy_erms${tab}kernel${tab}2048${tab}59.40${tab}2\$" "$d/exact/profile.tsv" &&
	grep -q "^dp_snd_send${tab}kernel${tab}1000${tab}29.00${tab}1\$" "$d/exact/profile.tsv" &&
	grep -q "^\[user\]${tab}user${tab}100${tab}2.90${tab}0\$" "$d/exact/profile.tsv"
t $? "addresses summed by symbol (kernel, dp.ko, user space)"
grep -q "every instruction counted by QEMU" "$d/exact.md" && ! grep -q "perf record" "$d/exact.md"
t $? "the exact report says how it counted"
# PROFILE_PROTO=tcp: the same exact run over TCP, on a netdev NIC, with no
# dp.ko symbols loaded: TCP's own line of icount.tsv, Linux's driver named
mkdir "$d/tcp"
sed -e 's/^bw 65536 bytes 1048576 period 1$/bw 65536 bytes 1048576 period 1 proto tcp/' \
	-e '/dp_snd_send\|dp_tulip_xmit/d' "$d/exact/icount-g0.out.log" >"$d/tcp/icount-g0.out.log"
echo "[    0.0] Command line: console=ttyS0 dpg.modprobe=virtio_net" >>"$d/tcp/icount-g0.out.log"
printf 'total 2148\nffffffff81002100 2048\n401000 100\n' >"$d/tcp/insns.txt"
{
	printf 'mode=icount%sdp%sbw%s65536%s100.00%sMB/s\n' "$tab" "$tab" "$tab" "$tab" "$tab"
	printf 'mode=icount%stcp%sbw%s65536%s50.00%sMB/s\n' "$tab" "$tab" "$tab" "$tab" "$tab"
} >"$d/tcp/icount.tsv"
"$pr" "$d/tcp" >"$d/tcp.md" 2>"$d/err"
t $? "a TCP run is reported without dp.ko's symbols"
# 1.024e6 / 50 MB/s = 20480 instructions per KiB: TCP's figure, not dp's
grep -q "where TCP's instructions go moving 65536-byte messages" "$d/tcp.md" &&
	grep -q "TCP's bandwidth phase over Linux's virtio-net driver" "$d/tcp.md" &&
	grep -q "dpperf measured 50.00 MB/s, 20480 instructions per KiB" "$d/tcp.md" &&
	grep -q "^memcpy_erms${tab}kernel${tab}2048${tab}" "$d/tcp/profile.tsv"
t $? "its title, link and measured bandwidth are TCP's"
printf 'incomplete 1 markers\n' >"$d/exact/insns.txt"
rc=0
"$pr" "$d/exact" >/dev/null 2>&1 && rc=1
t $rc "a run whose second mark was not seen fails"

# make profile-mpi: the MPI guest's log, per leg of the window's round trips
mkdir "$d/mpi"
sed 's/^bw 65536 bytes 1048576 period 1$/mpi dp iters 100 period 1/' "$d/exact/icount-g0.out.log" \
	>"$d/mpi/mpiicount-g0.out.log"
printf 'total 3448\nffffffffc0001000 1000\nffffffff81002100 2048\n401000 400\n' >"$d/mpi/insns.txt"
"$pr" "$d/mpi" >"$d/mpi.md" 2>"$d/err"
t $? "make profile-mpi's log is found and reported"
# 1000 instructions / (2 x 100 legs) = 5 per leg
grep -q "^dp_snd_send${tab}kernel${tab}1000${tab}29.00${tab}5\$" "$d/mpi/profile.tsv" &&
	grep -q "round trip's instructions go, over dp" "$d/mpi.md" &&
	grep -q "holding 100 round trips" "$d/mpi.md"
t $? "an MPI window counted per leg, its transport named"
# the ranks' mappings name user space: a small library built here, mapped
# at 0x7f0000000000 in the log; an address in no mapping stays [user]
mkdir "$d/umap"
printf 'int hot(int x) { return x * 3 + 1; }\nint cold(int x) { return x - 7; }\n' >"$d/umap/t.c"
cc -shared -fPIC -O1 -o "$d/umap/libt.so" "$d/umap/t.c" 2>"$d/err"
seg=$(readelf -lW "$d/umap/libt.so" | awk '$1 == "LOAD" && / R E / { print $2, $3; exit }')
hot=$(nm --defined-only "$d/umap/libt.so" | awk '$3 == "hot" { print $1 }')
cold=$(nm --defined-only "$d/umap/libt.so" | awk '$3 == "cold" { print $1 }')
# runtime address = start + (vaddr - the segment's vaddr), mapped at its offset
segv=${seg#* }
at() { printf '%x' $((0x7f0000000000 + 0x$1 - segv)); }
{
	sed '/^USERMAPS-BEGIN$/,$d' "$d/mpi/mpiicount-g0.out.log"
	echo USERMAPS-BEGIN
	echo "pid 7 NPmpi"
	printf '7f0000000000-7f0000010000 r-xp %x 00:02 1 %s\n' "$((${seg% *}))" "$d/umap/libt.so"
	echo USERMAPS-END
} >"$d/umap/mpiicount-g0.out.log"
printf 'total 7000\nffffffffc0001000 1000\n%s 3000\n%x 1000\n%s 600\n401000 1400\n' \
	"$(at "$hot")" $((0x$(at "$hot") + 1)) "$(at "$cold")" >"$d/umap/insns.txt"
"$pr" "$d/umap" >"$d/umap.md" 2>>"$d/err"
t $? "a window with the ranks' mappings is reported"
# per leg: 4000 / 200 = 20, 600 / 200 = 3, 1400 / 200 = 7
grep -q "^libt.so:hot${tab}user${tab}4000${tab}.*${tab}20\$" "$d/umap/profile.tsv" &&
	grep -q "^libt.so:cold${tab}user${tab}600${tab}.*${tab}3\$" "$d/umap/profile.tsv" &&
	grep -q "^\[user\]${tab}user${tab}1400${tab}.*${tab}7\$" "$d/umap/profile.tsv" &&
	grep -q "by file: \`libt.so\` 23, \`\[user\]\` 7\.\$" "$d/umap.md" &&
	grep -q "(dp.ko): .* (5 instructions per leg)" "$d/umap.md"
t $? "user space named FILE:SYMBOL from the mappings, the rest [user], split by file"
sed -i 's/^mpi dp iters 100 period 1$/mpi dp iters 0 period 1/' "$d/mpi/mpiicount-g0.out.log"
rc=0
"$pr" "$d/mpi" >/dev/null 2>&1 && rc=1
t $rc "an MPI window with no round trip in it fails"

mkdir "$d/empty"
printf 'PROFILE-BEGIN\niters 10 period 10\nPROFILE-END\n' >"$d/empty/icount-g0.out.log"
rc=0
"$pr" "$d/empty" >/dev/null 2>&1 && rc=1
"$pr" "$d/none" >/dev/null 2>&1 && rc=1
t $rc "an empty profile or a missing log fails"
[ $bad -eq 0 ]
