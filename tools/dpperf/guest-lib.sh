#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Shared by guest-demo.sh and guest-icount.sh (sourced; set GUEST_TAG first).

n=0
log() { echo "# $GUEST_TAG: $*"; }

result() {	# result STATUS DESCRIPTION [DIRECTIVE]: one KTAP line
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2${3:+ # $3}"; else echo "not ok $n $2"; fi
}

# Wait (at most 30 s) for a background server to say it can receive.
wait_ready() {	# wait_ready READY_FILE SERVER_PID
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt 300 ]; do
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}
