#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dp single-guest selftests.  Two nodes in one guest: network namespaces dpA
# and dpB joined by a veth pair (see lib.sh), plus the initial namespace as a
# node through dp-load.  KTAP on stdout, one result per test with the test's
# own checks as subtests.  Every test runs under timeout; exit 1 on failure.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env

# name  timeout(s)  setup  command
TESTS="module_load   120 none   sh ./t_module.sh load
module_busy    120 none   sh ./t_module.sh busy
admin          120 none   sh ./t_module.sh admin
module_held    120 none   sh ./t_module.sh held
bind           120 pair   ./dp_bind
xfer           120 pair   ./dp_xfer
ways           180 pair   ./dp_ways
zerocopy       120 pair   ./dp_zerocopy
block_read     120 pair   ./dp_block
wait_policy    300 pair   ./dp_wait
poll           120 pair   ./dp_poll
pool_readonly  120 pair   ./dp_pool_ro
order          300 pair   ./dp_order
pool_full      120 pair   ./dp_full
rel_local      600 pair   ./dp_rel_local
dpperf_late    300 pair   sh ./t_dpperf.sh
dpctl_json     120 pair   sh ./t_json.sh
trace          180 pair   ./dp_trace
monitor        180 pair   ./dp_monitor
errno          180 pair   ./dp_errno
raw_frames     120 pair   ./dp_raw
nic_gone       180 pair   ./dp_gone
node_set       180 pair   ./dp_nodeset
local_nonic    120 pair   ./dp_local
send_fault     120 pair   ./dp_fault
send_fault_rtnl 120 pair  ./dp_fault link
sendv          180 pair   ./dp_sendv
uring          180 pair   ./dp_uring
local_init     120 dpload env DPT_NSL=init DPT_NIDL=${DP_NID:-0} DPT_IFL=${DP_IF:-} ./dp_local
users          180 pair   ./dp_users
admit          180 pair   ./dp_admit
quota          180 pair   ./dp_quota
priv           180 pair   ./dp_priv
fair           300 pair   ./dp_fair
large          600 pair   ./dp_large
fuzz           420 pair   ./dp_fuzz"

# send_fault_rtnl deletes a veth under rtnl while a send is stuck in a page
# fault, and module_held has netem hold frames at unload: paths of the
# netdev backend only, so they are skipped over dp's tulip and myri drivers
# (send_fault covers their own detach; their unload is in module_load).
netdev_only() {
	{ [ "$DPT_NIC" = tulip ] || [ "$DPT_NIC" = myri ]; } &&
		{ [ "$1" = send_fault_rtnl ] || [ "$1" = module_held ]; }
}

# raw_frames forges frames with an AF_PACKET socket on a Linux netdev on
# node A's wire (over the tulips a third NIC on their hub).  On the Myrinet
# fabric every packet comes from a LANai card, which stamps its own source
# and is driven by dp alone; the cards' netdevs (myri0) carry only
# Ethernet's packet type, never dp's: nothing can put a forged dp frame on
# it.  The parser it checks is the backends'
# common one (dp_mdr_rx), checked over veth and tulip and fuzzed.
no_forger() {
	[ "$DPT_NIC" = myri ] && [ "$1" = raw_frames ]
}

# DPT_ONLY="name|name": run only those (while developing one test)
[ -n "${DPT_ONLY:-}" ] && TESTS=$(echo "$TESTS" | grep -E "^($DPT_ONLY) ")
echo "KTAP version 1"
echo "1..$(echo "$TESTS" | grep -c .)"
[ -e "$DP_KO" ] || diag "$DP_KO missing"
echo 0 >"$T/failed"
echo "$TESTS" | while read -r name tmo setup cmd; do
	if netdev_only "$name"; then
		ktap_result ok "$name" "SKIP a netdev-backend path (not dp's own $DPT_NIC driver)"
	elif no_forger "$name"; then
		ktap_result ok "$name" "SKIP no netdev on the Myrinet fabric carries dp's packet type: nothing to forge frames from"
	elif [ "$setup" = dpload ] && [ -z "${DP_NID:-}" ]; then
		ktap_result ok "$name" "SKIP no /etc/dp/env (not in the harness)"
	else
		# shellcheck disable=SC2086 # word splitting of the command is wanted
		run_test "$name" "$tmo" "$setup" $cmd
	fi
	echo "$ktap_failed" >"$T/failed"
done
ns_clean
mod_unload >/dev/null 2>&1
failed=$(cat "$T/failed" 2>/dev/null || echo 1)
diag "run_local: $failed failed"
[ "$failed" -eq 0 ]
