#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dp over its own tulip driver: one guest with two tulips on a QEMU hub,
# unbound from Linux (tools/qemu/cluster.py --mode tulip): the driver's own
# tests (dpA on tulip0, dpB on tulip1).  The guest runs the core suite over
# the tulips first (run_local.sh with DPT_NIC=tulip).  KTAP on stdout; exit 1
# on failure.
cd "$(dirname "$0")" || exit 1
DPT_NIC=tulip
export DPT_NIC
. ./lib.sh

# name  timeout(s)  setup  command
TESTS="tulip_probe     120 none   sh ./t_tulip.sh probe
tulip_max       120 pair   ./dp_tulip max
tulip_wrap      300 pair   ./dp_tulip wrap
tulip_flood     180 pair   ./dp_tulip flood
tulip_watchdog  120 pair   ./dp_tulip watchdog
tulip_reattach  120 pair   ./dp_tulip reattach
tulip_unbind    180 pair   sh ./t_tulip.sh unbind
tulip_rmmod     120 pair   sh ./t_tulip.sh rmmod"

echo "KTAP version 1"
echo "1..$(echo "$TESTS" | grep -c .)"
echo 0 >"$T/failed"
echo "$TESTS" | while read -r name tmo setup cmd; do
	# shellcheck disable=SC2086 # word splitting of the command is wanted
	run_test "$name" "$tmo" "$setup" $cmd
	echo "$ktap_failed" >"$T/failed"
done
ns_clean
mod_unload >/dev/null 2>&1
failed=$(cat "$T/failed" 2>/dev/null || echo 1)
diag "run_tulip: $failed failed"
[ "$failed" -eq 0 ]
