#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck disable=SC2317 # functions are run through t()
# Host self-test of dpperf on loopback only (127.0.0.1): argument errors,
# UDP and TCP in both receive modes, simulated loss (--drop) reported as
# nan/lost instead of a hang, and a client without a server giving up.
# Usage: selftest.sh PATH/TO/dpperf.  Prints TAP; exit 0 when all pass.
set -u
bin=${1:?usage: selftest.sh DPPERF}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 rc=0
port=$((20000 + $$ % 20000))

t() {	# t DESCRIPTION COMMAND...: one TAP line from the command's status
	desc=$1; shift
	n=$((n + 1))
	if "$@" >"$tmp/out" 2>&1; then
		echo "ok $n $desc"
	else
		sed 's/^/# /' "$tmp/out"
		echo "not ok $n $desc"
		rc=1
	fi
}

fails() { ! "$@"; }

# run PROTO RECV EXPECT_GOOD [server/client args...]: server in the
# background, client in front; EXPECT_GOOD result lines must not be nan.
run() {
	proto=$1 recv=$2 want=$3; shift 3
	port=$((port + 1))
	rm -f "$tmp/ready"
	# shellcheck disable=SC2086 # SRV_ARGS: several words
	"$bin" server --proto "$proto" --recv "$recv" --port "$port" --ready "$tmp/ready" \
		--idle 20 ${SRV_ARGS:-} &
	srv=$!
	i=0
	while [ ! -e "$tmp/ready" ] && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	"$bin" client --proto "$proto" --recv "$recv" --port "$port" --peer 127.0.0.1 \
		--tag mode=selftest "$@" >"$tmp/res"
	crc=$?
	wait "$srv"
	cat "$tmp/res"
	good=$(awk -F'\t' '$1 == "mode=selftest" && $5 != "nan"' "$tmp/res" | wc -l)
	[ "$good" -eq "$want" ] && [ "$crc" -eq "${WANT_RC:-0}" ]
}

t "no arguments is an error" fails "$bin"
t "--help" "$bin" --help
t "bad --proto" fails "$bin" client --proto foo --peer 1
t "bad --sizes" fails "$bin" client --sizes 1,x --peer 1
t "bad --test" fails "$bin" client --test pingpong,foo --peer 1
t "--test twice the same" fails "$bin" client --test bw,bw --peer 1
t "size 0 refused" fails "$bin" client --sizes 0 --peer 1
t "client needs --peer" fails "$bin" client --proto udp
t "raw needs --ifname" fails "$bin" server --proto raw
t "--linger past a minute refused" fails "$bin" client --linger 60001 --peer 1
t "--linger not a number refused" fails "$bin" client --linger x --peer 1
for proto in udp tcp; do
	for recv in spin block; do
		t "$proto $recv pingpong+bw on loopback" run $proto $recv 12 \
			--test pingpong,bw --sizes 1,100,1500 --iters 200 --bytes 200000
		# each of the three sizes has a positive median no larger than
		# its 99th percentile
		t "$proto $recv p50 and p99 per size, 0 < p50 <= p99" awk -F'\t' '
			$3 == "p50" { p50[$4] = $5 } $3 == "p99" { p99[$4] = $5 }
			END { n = 0; for (s in p50) { n++; if (!(p50[s] > 0 && p50[s] <= p99[s])) exit 1 }
			      exit n == 3 ? 0 : 1 }' "$tmp/res"
		t "$proto $recv rate on loopback" run $proto $recv 2 \
			--test rate --sizes 1,64 --messages 5000
	done
done
t "tcp pingpong with --linger 200 on loopback" run tcp block 3 \
	--test pingpong --sizes 1 --iters 50 --linger 200
# bwsize: the default sizes, 1 byte to 1 MiB (11, all over TCP; UDP to
# 16 KiB, the 3 larger nan, so exit 2), then the n1/2 line of each curve
WANT_RC=0
t "tcp bwsize 1 B to 1 MiB on loopback" run tcp spin 11 --test bwsize --bytes 1048576 \
	--messages 2000
t "tcp bwsize: n1/2 within the sizes measured" awk '
	/^# mode=selftest nhalf proto=tcp n_half=/ { split($5, a, "="); n = a[2] + 0 }
	END { exit n >= 1 && n <= 1048576 ? 0 : 1 }' "$tmp/res"
# A TCP server given --pool announces it as its window (the demo's sweep
# gives TCP the 4 MiB of dp's pool there)
SRV_ARGS="--pool 4194304"
t "tcp server --pool: bw on loopback" run tcp spin 1 --test bw --sizes 65536 --bytes 1048576
t "tcp server --pool: the client's windows follow it" grep -q "receiver_pool=4194304" "$tmp/res"
SRV_ARGS=""
# --busy-poll on a socket sets SO_BUSY_POLL to --poll-usecs (dp's read()
# busy-polls the same way), so both can be measured in one receive mode
t "--poll-usecs on a socket needs --busy-poll" fails "$bin" client --proto tcp \
	--poll-usecs 100 --peer 127.0.0.1
SRV_ARGS="--busy-poll --poll-usecs 100"
t "tcp --busy-poll: bw on loopback" run tcp block 1 --test bw --sizes 1024 \
	--bytes 262144 --busy-poll --poll-usecs 100
t "tcp --busy-poll: the client's socket took SO_BUSY_POLL 100" \
	grep -q "so_busy_poll=100" "$tmp/res"
t "udp --busy-poll: pingpong on loopback, default bound 50" run udp block 3 \
	--sizes 64 --iters 50 --busy-poll
t "udp --busy-poll: the client's socket took SO_BUSY_POLL 50" \
	grep -q "so_busy_poll=50" "$tmp/res"
SRV_ARGS=""
WANT_RC=2
t "udp bwsize: 8 sizes a datagram carries, the 3 larger nan" run udp spin 8 \
	--test bwsize --bytes 262144 --messages 2000
WANT_RC=0

# Which message the server drops is fixed (every 150th), so exactly one
# size fails.  The timeout is generous so that a loaded host cannot make
# a reply that did come back look lost.
SRV_ARGS="--drop 150" WANT_RC=2
t "udp loss: a lost ping fails its size (nan), bw loss is counted" run udp spin 5 \
	--test pingpong,bw --sizes 1,100 --iters 100 --bytes 50000 --timeout 3000
grep -q "^# mode=selftest lost proto=udp test=bw" "$tmp/out" || { echo "not ok $n no lost line"; rc=1; }
SRV_ARGS="" WANT_RC=0
t "no server: client gives up" fails "$bin" client --proto udp --peer 127.0.0.1 \
	--port $((port + 100)) --connect-timeout 500
echo "1..$n"
exit $rc
