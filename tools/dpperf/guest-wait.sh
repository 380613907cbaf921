#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# guest-wait.sh: the wait policy of blocking reads (DP_IOC_SET_WAIT) measured
# between two guests in real time, where interrupts cost the most: dpperf
# ping-pong with --recv block on both sides, dp sleeping at once
# (--poll-usecs 0: the module's default, and dp before the policy), polling
# for 50 us (Homa's default) and for 1000 us, busy polling for 1000 us
# (--busy-poll), and UDP (blocking recv) beside them.  Run in each guest of a two-guest cluster:
#   tools/qemu/cluster.py --guests 2 --smp 1 --mode run \
#       --cmd 'sh /usr/lib/dp/perf/guest-wait.sh'
# Guest 0 is the client, guest 1 the server.  Everything it prints is a
# comment for the run mode's KTAP; the results are the lines "# DPW" then
# the dpperf TSV (variant as the tag).
# Environment: DPPERF_ITERS (2000), DPPERF_SIZES (1,64,1024).
set -u
# shellcheck source=/dev/null
. /etc/dp/env

ITERS=${DPPERF_ITERS:-2000}
SIZES=${DPPERF_SIZES:-1,64,1024}
CLIENT_NID=1
SERVER_NID=2
SERVER_IP=10.77.0.$SERVER_NID
# variant:proto:dpperf options
VARIANTS="sleep:dp:--poll-usecs 0
poll50:dp:--poll-usecs 50
poll1000:dp:--poll-usecs 1000
busy1000:dp:--poll-usecs 1000 --busy-poll
udp:udp:"

say() { echo "# guest-wait: $*"; }
barrier() { dp-barrier "$1" 300 || say "barrier $1 timed out"; }

[ "${DP_NGUESTS:-1}" -ge 2 ] || { say "needs 2 guests"; exit 0; }
dp-load || { say "dp-load failed"; exit 1; }
barrier wait-loaded
st=0
echo "$VARIANTS" | while IFS=: read -r name proto opts; do
	ready=/tmp/dpperf-ready.$name
	if [ "$DP_GUEST_ID" = 1 ]; then
		peer=""
		[ "$proto" = dp ] && peer="--peer $CLIENT_NID"
		rm -f "$ready"
		# shellcheck disable=SC2086 # peer and opts: words
		dpperf server --proto "$proto" --recv block --ready "$ready" --idle 60 \
			$peer $opts >"/tmp/server.$name" 2>&1 &
		pid=$!
		i=0
		while [ ! -e "$ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		barrier "wait-$name-ready"
		wait "$pid" || say "$name server exited $?"
		barrier "wait-$name-done"
	elif [ "$DP_GUEST_ID" = 0 ]; then
		peer=$SERVER_IP
		[ "$proto" = dp ] && peer=$SERVER_NID
		barrier "wait-$name-ready"
		# shellcheck disable=SC2086 # opts: words
		dpperf client --proto "$proto" --recv block --peer "$peer" --test pingpong \
			--sizes "$SIZES" --iters "$ITERS" --connect-timeout 60000 \
			--tag "variant=$name" $opts >"/tmp/client.$name" 2>&1 || say "$name client exited $?"
		sed 's/^/# DPW /' "/tmp/client.$name"
		barrier "wait-$name-done"
	fi
done
rmmod dp || st=1
exit $st
