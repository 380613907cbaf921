#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dp cross-guest selftests, run in every guest of a cluster (docs/harness.md):
# each guest loads dp for its node (dp-load), binds DPID 200 and exchanges a
# request/response with every other guest (dp_cluster), then unloads.  The
# guests keep in step through dp-barrier; every step is under timeout.
# KTAP on stdout; exit 1 on failure.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env

echo "KTAP version 1"
if [ "${DP_NGUESTS:-1}" -lt 2 ]; then
	echo "1..1"
	echo "ok 1 cluster_exchange # SKIP needs 2 or more guests"
	exit 0
fi
# Without a NART file (cluster.py --no-nart) the nodes find each other by
# neighbour discovery first (docs/discovery.md).
disc=0
[ "${DP_NART:-}" = none ] && disc=1
echo "1..$((3 + disc))"

barrier() {
	timeout 330 dp-barrier "$1" 300 || diag "dp-barrier $1 failed"
}

# 1. load
ns_clean
mod_unload >"$T/load.log" 2>&1
if timeout 60 dp-load >>"$T/load.log" 2>&1 && mod_loaded; then
	ktap_result ok "cluster_load (nid $DP_NID on $DP_IF, $DP_NGUESTS guests)"
else
	sed 's/^/# /' "$T/load.log"
	ktap_result fail "cluster_load"
fi
barrier cluster-loaded

# 1b. discovery: every node turns it on and must find every other one; the
# exchange then goes to every guest's NID, found or not
if [ $disc -eq 1 ]; then
	: >"$T/peers"
	i=1
	while [ $i -le "$DP_NGUESTS" ]; do
		echo $i >>"$T/peers"
		i=$((i + 1))
	done
	DPT_CLUSTER=$T/peers
	export DPT_CLUSTER
	if dpctl discover on 500 >"$T/disc.log" 2>&1 &&
	   disc_wait $((DP_NGUESTS - 1)) 60; then
		ktap_result ok "cluster_discover (found $((DP_NGUESTS - 1)) nodes)"
	else
		sed 's/^/# /' "$T/disc.log"
		dpctl nart | sed 's/^/# nart: /'
		ktap_result fail "cluster_discover"
	fi
	barrier cluster-discovered
fi

# 2. exchange (dp_cluster passes barrier cluster-exchanged itself, serving
# requests until every guest got there)
run_test cluster_exchange 480 none ./dp_cluster cluster-exchanged 120

# 3. unload, once nobody sends any more
barrier cluster-done
if mod_unload >"$T/unload.log" 2>&1; then
	ktap_result ok "cluster_unload"
else
	sed 's/^/# /' "$T/unload.log"
	ktap_result fail "cluster_unload"
fi
barrier cluster-unloaded
[ "$ktap_failed" -eq 0 ]
