#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Neighbour discovery across guests (docs/discovery.md), run in every guest of
# a cluster without a NART file (cluster.py --mode cluster --no-nart), after
# run_cluster.sh: every node turns discovery on and finds every other one;
# the last guest then takes guest 0's NID, which every node must report as a
# conflict and none may merge; a static NART entry beats a discovered one;
# the module unloads with discovery on.  KTAP on stdout; exit 1 on failure.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
[ -f /etc/dp/env ] && . /etc/dp/env

echo "KTAP version 1"
n=${DP_NGUESTS:-1}
if [ "$n" -lt 3 ] || [ "${DP_NART:-}" != none ]; then
	echo "1..1"
	echo "ok 1 disc # SKIP needs 3 or more guests without a NART file"
	exit 0
fi
echo "1..6"

MS=500				# announce interval; entries are held 4 of them
me=$DP_NID
last=$n				# the NID of the last guest, which changes NID
mac() { printf '52:54:00:00:00:%02x' "$1"; }
bogus=02:00:00:00:00:ee

barrier() {
	timeout 330 dp-barrier "$1" 300 || diag "dp-barrier $1 failed"
}

# nart_line NID: this node's NART line for NID, or nothing
nart_line() { dpctl nart | awk -v n="$1" '$1 == n'; }

# until SECONDS CMD...: poll CMD every 0.1 s until it succeeds
until_ok() {
	t=$(($1 * 10))
	shift
	while ! "$@"; do
		t=$((t - 1))
		[ $t -le 0 ] && return 1
		sleep 0.1
	done
	return 0
}

conflicts() { dpctl stats disc_conflict; }
conflicts_above() { [ "$(conflicts)" -gt "$1" ]; }
gone() { [ -z "$(nart_line "$1")" ]; }
discovered_at() { nart_line "$1" | grep -q "^$1 $2  # discovered"; }
static_at() { nart_line "$1" | grep -qx "$1 $2"; }

# 1. load without a NART, discovery on
ns_clean
mod_unload >"$T/disc-load.log" 2>&1
# (the NART is empty before discovery is on: the others may announce at once)
if timeout 60 dp-load >>"$T/disc-load.log" 2>&1 && mod_loaded &&
   [ "$(dpctl nart | wc -l)" -eq 0 ] &&
   dpctl discover on $MS >>"$T/disc-load.log" 2>&1 &&
   dpctl discover | grep -qx "interval_ms $MS"; then
	ktap_result ok "disc_load (nid $me, no NART, announces every $MS ms)"
else
	sed 's/^/# /' "$T/disc-load.log"
	dpctl nart | sed 's/^/# nart: /'
	dpctl discover | sed 's/^/# /'
	ktap_result fail "disc_load"
fi
barrier disc-on

# 2. every other node found, each at its own MAC, marked discovered
ok=1
disc_wait $((n - 1)) 60 || ok=0
j=1
while [ $j -le "$n" ]; do
	[ $j -ne "$me" ] && ! discovered_at $j "$(mac $j)" && ok=0
	j=$((j + 1))
done
if [ $ok -eq 1 ] && gone "$me"; then
	ktap_result ok "disc_learn ($((n - 1)) nodes, none for ourselves)"
else
	dpctl nart | sed 's/^/# nart: /'
	ktap_result fail "disc_learn"
fi
dpctl -j nart >"$T/disc-nart.json"
barrier disc-learned

# 3. the last guest takes NID 1 (guest 0's): every node reports a conflict
# (guest 0 and the last: their own NID claimed by another), the entry for
# NID 1 stays guest 0's where there is one, and it is logged.
c0=$(conflicts)
logged() { dmesg | grep -c "dp: node .*NID 1[ ,]"; }
l0=$(logged)
logged_more() { [ "$(logged)" -gt "$l0" ]; }
dpctl monitor >"$T/disc-mon.log" 2>&1 &
mon=$!
sleep 0.5		# the monitor has joined the group
barrier disc-dup-start
[ "$me" -eq "$last" ] && dpctl node set nid 1
ok=1
until_ok 30 conflicts_above "$c0" || { ok=0; diag "no conflict counted ($c0)"; }
until_ok 10 grep -q "^nid conflict .* claimed 1 " "$T/disc-mon.log" ||
	{ ok=0; diag "no nid conflict event"; }
until_ok 10 logged_more || { ok=0; diag "no kernel log line"; }
if [ "$me" -ne 1 ] && [ "$me" -ne "$last" ]; then
	discovered_at 1 "$(mac 1)" || { ok=0; diag "NID 1 is not guest 0's any more"; }
	grep -q "claimed 1 lladdr $(mac "$last")" "$T/disc-mon.log" ||
		{ ok=0; diag "the event does not name the claimant"; }
fi
kill "$mon" 2>/dev/null
wait "$mon" 2>/dev/null
sed 's/^/# monitor: /' "$T/disc-mon.log" | head -n 20
if [ $ok -eq 1 ]; then
	ktap_result ok "disc_duplicate_nid (conflicts $c0 -> $(conflicts), reported, first kept)"
else
	dpctl nart | sed 's/^/# nart: /'
	ktap_result fail "disc_duplicate_nid"
fi

# 4. what nobody announces any more ages out: NID $last on the others; on
# the last guest, guest 0's entry for NID 1 (its own NID now, so guest 0's
# announces no longer refresh it)
if [ "$me" -eq "$last" ]; then
	old=1
else
	old=$last
fi
if until_ok 30 gone "$old"; then
	ktap_result ok "disc_age_out (NID $old gone)"
else
	dpctl nart | sed 's/^/# nart: /'
	ktap_result fail "disc_age_out (NID $old still there)"
fi
barrier disc-aged
[ "$me" -eq "$last" ] && dpctl node set nid "$last"
barrier disc-restored

# 5. a static entry always wins: the next guest's NID pointed at a wrong MAC
# replaces its discovered entry, stays as it is while that guest keeps
# announcing (each announce a conflict), and once deleted the entry is
# discovered again.
next=$((me % n + 1))
ok=1
until_ok 30 discovered_at $next "$(mac $next)" || { ok=0; diag "NID $next not rediscovered"; }
dpctl nart add $next $bogus || ok=0
static_at $next $bogus || { ok=0; diag "static entry did not replace the discovered one"; }
c0=$(conflicts)
until_ok 30 conflicts_above $((c0 + 1)) || { ok=0; diag "announces of $next not heard"; }
static_at $next $bogus || { ok=0; diag "an announce replaced the static entry"; }
dpctl nart del $next || ok=0
until_ok 30 discovered_at $next "$(mac $next)" || { ok=0; diag "not discovered again"; }
if [ $ok -eq 1 ]; then
	ktap_result ok "disc_static_wins (NID $next)"
else
	dpctl nart | sed 's/^/# nart: /'
	ktap_result fail "disc_static_wins"
fi
barrier disc-static

# 6. unload with discovery on: its timer and work stop with the node
if mod_unload >"$T/disc-unload.log" 2>&1; then
	ktap_result ok "disc_unload (discovery on)"
else
	sed 's/^/# /' "$T/disc-unload.log"
	ktap_result fail "disc_unload"
fi
barrier disc-done
[ "$ktap_failed" -eq 0 ]
