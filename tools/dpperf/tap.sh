# SPDX-License-Identifier: GPL-2.0
# TAP for the report tests, sourced: "t STATUS NAME" prints the next
# numbered result, ok for a STATUS of 0; $bad counts the failed ones.
# shellcheck shell=sh
n=0 bad=0
t() { # STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; bad=$((bad + 1)); fi
}
