#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dpperf over dp between the pair's two nodes (KTAP on stdout; exit 1 on
# failure).  The client starts first and the server only some seconds
# later, as when a benchmark starts before the link is up or before the
# other side has bound: the client's first write waits on a session that
# cannot open yet, longer than dpperf's message timeout, and the client
# must keep trying until its connect timeout instead of giving up.
cd "$(dirname "$0")" || exit 1
. ./lib.sh

n=0 fail=0
check() {
	desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$T/check.out" 2>&1; then
		echo "ok $n $desc"
	else
		sed 's/^/# /' "$T/check.out"
		echo "not ok $n $desc"
		fail=$((fail + 1))
	fi
}

ktap_buffer

# A summary line per test, each with failed=0.
passed() {	# passed FILE TESTS
	cat "$1"
	[ "$(grep -c "^# summary proto=dp .*failed=0" "$1")" -eq "$2" ]
}

# Each stage says it starts on stderr, unbuffered: a hang shows where.
stage() { echo "# t_dpperf: $* (uptime $(cut -d" " -f1 /proc/uptime) s)" >&2; }

stage "client 5 s before its server"
out=$T/dpperf-client.out
"$DPT_IP" netns exec "$DPT_NSA" dpperf client --proto dp --recv block --peer "$DPT_NIDB" \
	--test pingpong,bw --sizes 1,1000 --iters 50 --bytes 65536 \
	--connect-timeout 60000 >"$out" 2>&1 &
cli=$!
sleep 5	# more than dpperf's 2 s message timeout
ready=$T/dpperf-ready
rm -f "$ready"
"$DPT_IP" netns exec "$DPT_NSB" dpperf server --proto dp --recv block --peer "$DPT_NIDA" \
	--ready "$ready" --idle 60 >"$T/dpperf-server.out" 2>&1 &
srv=$!
wait $cli
cst=$?
wait $srv
sst=$?
check "a dp client started 5 s before its server connects and runs (exit $cst)" \
	test "$cst" -eq 0
check "pingpong and bw over dp: every size measured" passed "$out" 2
check "the server ends cleanly (exit $sst)" sh -c "cat '$T/dpperf-server.out'; test $sst -eq 0"
# Batched sends (dp_sendv) and io_uring sends: every size measured, nothing
# lost (the server counts every message).  The bandwidth test's 1-byte
# messages are 262144 of them, a quarter of that on the sanitizer kernels
# (DPT_TMO_SCALE): there each took about 2 ms, and the two stages alone
# outran the test's bound of 1200 s.
bw_bytes=262144
[ "${DPT_TMO_SCALE:-1}" -gt 1 ] && bw_bytes=65536
batched() {	# batched NAME ARGS...
	name=$1
	shift
	stage "$name"
	out=$T/dpperf-$name.out
	ready=$T/dpperf-ready
	rm -f "$ready"
	"$DPT_IP" netns exec "$DPT_NSB" dpperf server --proto dp --recv block --peer "$DPT_NIDA" \
		--ready "$ready" --idle 60 >"$T/dpperf-server.out" 2>&1 &
	srv=$!
	i=0
	while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	"$DPT_IP" netns exec "$DPT_NSA" dpperf client --proto dp --recv block --peer "$DPT_NIDB" \
		--test rate,bw --sizes 1,1000 --messages 2000 --bytes "$bw_bytes" "$@" >"$out" 2>&1
	cst=$?
	wait $srv
	sst=$?
	check "$name: rate and bw measured, nothing lost (client $cst, server $sst)" \
		sh -c "grep -q '^# dp data sends' '$out' && test $cst -eq 0 && test $sst -eq 0 &&
		       test \$(grep -c '^# summary proto=dp .*failed=0 lost=0' '$out') -eq 2 ||
		       { cat '$out'; false; }"
}
batched "dp_sendv batches of 32" --batch 32
batched "io_uring sends, 8 per submit" --uring --batch 8
ktap_flush "$n"
[ $fail -eq 0 ]
