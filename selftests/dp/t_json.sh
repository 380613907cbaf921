#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dpctl -j against the real module (KTAP on stdout; exit 1 on failure).
# In node A of the pair, with an endpoint bound (a dpperf server) and a
# NART entry added: each command's -j output must equal its text output
# turned into JSON here (awk, by the text's own grammar: "name value"
# pairs, "none" and "-" as null, numbers bare), so the JSON both parses
# the way the text reads and says the same.  The host test
# (tools/dpctl/test/json-test.py) covers what a fake family can serve.
cd "$(dirname "$0")" || exit 1
. ./lib.sh

n=0 fail=0
ktap_buffer	# the plan is known at the end; printed first (ktap_flush)
dpa() { "$DPT_IP" netns exec "$DPT_NSA" dpctl "$@"; }

# awk: "name value ..." pairs of one line as JSON members (no braces)
PAIRS='function val(v) {
	if (v == "none" || v == "-") return "null"
	if (v ~ /^-?[0-9]+$/) return v
	gsub(/\\/, "\\\\", v); gsub(/"/, "\\\"", v)
	return "\"" v "\""
}
function pairs(from,   i, s) {
	s = ""
	for (i = from; i < NF; i += 2) s = s (s == "" ? "" : ",") "\"" $i "\":" val($(i + 1))
	return s
}'
to_obj() { awk "$PAIRS"' { s = s (NR > 1 ? "," : "") pairs(1) } END { print "{" s "}" }'; }
# "NID MAC [ROUTE]  [# discovered heard_ms N]": origin and heard_ms from the comment;
# a route is hex bytes, a string even when they look like a number ("81")
to_nart() { awk "$PAIRS"' {
	for (i = 3; i <= NF && $i != "#"; i++) ;
	o = "static"; h = "null"
	if (i <= NF && $(i + 1) == "discovered") { o = "discovered"; h = $(i + 3) }
	s = s (NR > 1 ? "," : "") "{\"nid\":" $1 ",\"lladdr\":" val($2) \
	",\"route\":" (i > 3 ? "\"" $3 "\"" : "null") ",\"origin\":\"" o "\",\"heard_ms\":" h "}" }
	END { print "[" s "]" }'; }
to_ep() { awk "$PAIRS"'
	function flush() { if (head != "") out = out (out == "" ? "" : ",") head ",\"edges\":[" ed "],\"rx_peers\":[" rx "]}" }
	/^[^ ]/ { flush(); head = "{" pairs(1); ed = rx = ""; next }
	$1 == "edge" { ed = ed (ed == "" ? "" : ",") "{" pairs(2) "}"; next }
	$1 == "rx_peer" { rx = rx (rx == "" ? "" : ",") "{" pairs(2) "}"; next }
	{ head = head ",\"stats\":{" pairs(1) "}" }
	END { flush(); print "[" out "]" }'; }

# same CONVERTER ARGS...: dpctl ARGS as text through CONVERTER equals dpctl -j ARGS
same() {
	conv=$1
	shift
	n=$((n + 1))
	text=$(dpa "$@" 2>&1) && json=$(dpa -j "$@" 2>&1)
	st=$?
	want=$(printf '%s\n' "$text" | $conv)
	if [ $st -eq 0 ] && [ -n "$json" ] && [ "$json" = "$want" ]; then
		echo "ok $n dpctl -j $* equals its text output"
	else
		printf 'text: %s\njson: %s\nwant: %s\n' "$text" "$json" "$want" | sed 's/^/# /'
		echo "not ok $n dpctl -j $* equals its text output"
		fail=$((fail + 1))
	fi
}
single() { awk -v k="$1" '{ print "{\"" k "\":" $1 "}" }'; }
single_rx_msgs() { single rx_msgs; }
entries() { awk '{ print "{\"entries\":" $1 "}" }'; }

ready=$T/json-ready
rm -f "$ready"
# the server is killed at the end; its idle bound only stops a server left
# behind (the checks took 70 s on the KASAN kernel's tulip guest, past 30)
"$DPT_IP" netns exec "$DPT_NSA" dpperf server --proto dp --dpid 300 --ready "$ready" \
	--idle 600 >/dev/null 2>&1 &
srv=$!
i=0
while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
dpa nart add 99 52:54:00:00:00:99 >/dev/null 2>&1
dpa nart add 98 00:60:dd:00:00:98 87:80 >/dev/null 2>&1	# a Myrinet route
printf '5 52:54:00:00:00:05\n6 52:54:00:00:00:06\n' >"$T/json-nart"

same to_obj node
same to_nart nart show
same to_ep ep
same to_obj stats
same single_rx_msgs stats rx_msgs
same entries nart check "$T/json-nart"
n=$((n + 1))
if dpa ep | grep -q "^dpid 300 "; then
	echo "ok $n the endpoint under test is listed"
else
	echo "not ok $n the endpoint under test is listed"
	fail=$((fail + 1))
fi
dpa nart del 99 >/dev/null 2>&1
dpa nart del 98 >/dev/null 2>&1
kill $srv 2>/dev/null
wait $srv 2>/dev/null
ktap_flush "$n"
[ $fail -eq 0 ]
