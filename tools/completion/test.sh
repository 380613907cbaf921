#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# test.sh COMPLETION DPCTL FAKENL: TAP.  Sources the dpctl completion with
# small stand-ins for bash-completion's helpers, runs _dpctl on command
# lines and checks what it offers.  DPCTL's directory is put first in PATH:
# the counter and NART names come from it, answered by FAKENL
# (tools/dpctl/test/fakenl.so) for the last two checks.
set -u
comp=$1
PATH=$(cd "$(dirname "$2")" && pwd):$PATH
n=0 bad=0

_init_completion() {
	words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	cur=${words[cword]} prev=${words[cword - 1]:-}
}
_filedir() { COMPREPLY=(FILES); }
_available_interfaces() { COMPREPLY=(IFACES); }
complete() { :; }
# shellcheck source=/dev/null
. "$comp"

expect() { # "LINE" "WANT..." (LINE's last word is completed; "" for a new word)
	local line=$1 want=$2 got
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_dpctl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | xargs)
	n=$((n + 1))
	if [[ $got == "$want" ]]; then
		echo "ok $n - '$line' offers: $want"
	else
		echo "not ok $n - '$line' offers: $want"
		echo "# got: $got"
		bad=1
	fi
}

echo "TAP version 13"
echo "1..20"
expect "dpctl " "discover ep help monitor myri nart node stats"
expect "dpctl n" "nart node"
expect "dpctl -" "--help --json -h -j"
expect "dpctl -j " "discover ep help monitor myri nart node stats"
expect "dpctl -j nart " "add check del flush load show"
expect "dpctl node " "detach set show"
expect "dpctl discover " "off on"
expect "dpctl discover on " ""
expect "dpctl node set " "backend dev nid"
expect "dpctl node set dev " "IFACES"
expect "dpctl node set backend " "myri netdev tulip"
expect "dpctl nart load " "FILES"
expect "dpctl stats r" "reset"
expect "dpctl ep " "watch"
expect "dpctl ep watch " ""
expect "dpctl myri " "map"
expect "dpctl myri map " "ports show wait"
expect "dpctl myri map ports " ""
export LD_PRELOAD=$3
expect "dpctl stats rx_drop_f" "rx_drop_full"
expect "dpctl nart del " "2 3 4000000000"
unset LD_PRELOAD
exit $bad
