#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Host tests of tools/mpi (make -C tools/mpi check): dprsh's server and
# client on loopback (a command's output and exit status, a command killed
# by a signal, the command stopped when the client hangs up, a refused
# connection), then mpi_test with 4 ranks over Open MPI's TCP transport on
# loopback, its KTAP nested.  Usage: test.sh DIR (where dprsh and mpi_test
# were built).  Prints TAP; exit 0 when all pass.
# shellcheck disable=SC2016,SC2317 # quoted for the remote shell; cleanup runs on EXIT
set -u
dir=${1:?usage: test.sh DIR}
tmp=$(mktemp -d)
port=$((30000 + $$ % 20000))
DPRSH_PORT=$port
export DPRSH_PORT
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
n=0 rc=0
ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; rc=1; fi
}

echo "TAP version 13"
"$dir/dprsh" -d 127.0.0.1 >"$tmp/srv.log" 2>&1 &
srv=$!
i=0
while [ $i -lt 50 ] && ! ss -ltnH "sport = :$port" | grep -q .; do
	sleep 0.1
	i=$((i + 1))
done

out=$("$dir/dprsh" 127.0.0.1 'echo out; echo err >&2; exit 3')
st=$?
[ $st -eq 3 ] && [ "$out" = "out
err" ]
ok $? "dprsh: output and exit status 3 come back (got $st)"

out=$("$dir/dprsh" 127.0.0.1 echo a  b '$((6*7))')
[ "$out" = "a b 42" ]
ok $? "dprsh: arguments joined with spaces for the remote shell, as ssh does ($out)"

"$dir/dprsh" 127.0.0.1 'kill -9 $$' >/dev/null 2>&1
st=$?
[ $st -eq 137 ]
ok $? "dprsh: a command killed by SIGKILL gives 128+9 (got $st)"

timeout 2 "$dir/dprsh" 127.0.0.1 "exec sleep 3$$" >/dev/null 2>&1
sleep 0.5
! pgrep -f "sleep 3$$" >/dev/null
ok $? "dprsh: the command is stopped when the client hangs up (sleep 3$$)"

DPRSH_PORT=$((port + 1)) "$dir/dprsh" 127.0.0.1 true 2>"$tmp/refused"
st=$?
[ $st -eq 255 ] && grep -q refused "$tmp/refused"
ok $? "dprsh: no server gives 255 and the reason (got $st)"

# mpi_test over TCP on loopback, 4 ranks; as root only with Open MPI's
# explicit permission
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
timeout 120 mpirun --oversubscribe -np 4 --mca pml ob1 --mca btl tcp,self \
	--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$dir/mpi_test" \
	>"$tmp/mt.log" 2>&1
st=$?
grep -v '^# rank [1-9]' "$tmp/mt.log" | sed 's/^/  /'
grep -q '^ok 11 ' "$tmp/mt.log" || st=1
ok $st "mpi_test, 4 ranks, Open MPI over TCP on loopback"
echo "1..$n"
exit $rc
