#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lint.sh HEADER: TAP over the man pages in this directory.  Builds each
# NAME.N.scd with scdoc (any error fails it) and formats the result with
# groff -man -ww (any warning fails it); then checks that every page the
# project promises has a source: dpctl.8, dpperf.1, dp.4, libdp.3 and one
# NAME.3 per function HEADER (libdp/dp.h) declares.
set -u
hdr=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n=0 bad=0

ok() { # RC DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi
}

funcs=$(sed -n 's/^[a-z].*[ *]\(dp_[a-z_]*\)(.*/\1/p' "$hdr")
[ -n "$funcs" ] || { echo "Bail out! no functions found in $hdr"; exit 1; }
want="dpctl.8 dpperf.1 dp.4 libdp.3"
for f in $funcs; do want="$want $f.3"; done
srcs=$(ls ./*.scd | sed 's|^\./||')

echo "TAP version 13"
echo "1..$(($(echo "$srcs" | wc -w) + $(echo "$want" | wc -w)))"
for s in $srcs; do
	p=${s%.scd}
	rc=0
	scdoc <"$s" >"$out/$p" 2>"$out/$p.err" || rc=1
	# groff: warnings (-ww) go to stderr; any output there is a lint failure
	if [ $rc -eq 0 ]; then
		LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$out/$p" 2>"$out/$p.groff" || rc=1
		[ -s "$out/$p.groff" ] && rc=1
	fi
	[ $rc -eq 0 ] || sed 's/^/# /' "$out/$p.err" "$out/$p.groff" 2>/dev/null
	ok $rc "$p: scdoc and groff -ww clean"
done
for p in $want; do
	rc=0; [ -f "$p.scd" ] || rc=1
	ok $rc "page $p exists"
done
exit $bad
