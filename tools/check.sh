#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check.sh [STAGE...]: run dp's test stages, time them, count every test.
# Stages (default: all, in this order):
#   deps    tools/deps.sh (not counted; nothing else can run without it)
#   build   dp.ko per kernel (warnings fail), each user-space part built and
#           installed into build/stage, the guest initramfs per kernel
#   unit    the Makefile's UNIT dir:target pairs (KTAP/TAP results counted;
#           output without results counts as one test by exit status)
#   sparse  sparse on the module, one test per kernel
#   dkms    dkms build per kernel (tools/dkms-check.sh)
#   kselftest  selftests/dp built and installed by the kselftest framework of
#           Debian's linux-source-6.1 (tools/kselftest.sh), run by its
#           run_kselftest.sh -c dp in one guest on 6.1, checked by ktap.py and
#           the kernel tree's kunit_parser.py (tools/qemu/kunit_check.py)
#   guest   the cross-guest exchange in 2 QEMU guests per kernel and the
#           single-guest suite in the first of them (tools/qemu/cluster.py;
#           on 6.1 the exchange only, when stage kselftest ran), then
#           the tulip suite per kernel (one guest, two tulips, dp's driver:
#           the core suite's NIC tests on the newest kernel, its NIC
#           path on the others, then the driver's tests),
#           the lossless-edge tests per kernel over virtio-net and tulip (2
#           guests through the fault relay), then on the newest kernel the 4-guest exchange and the fault
#           relay's self-test (2 guests through dpswitch)
#   myri    dp's myri backend on the simulated Myrinet fabric (tools/myrisim):
#           per kernel the core suite in one guest with two LANai cards
#           (cluster.py --mode myricore: run_local.sh over dp's myri
#           driver), on the newest kernel its NIC path with both cards on
#           one switch, on the others its NIC tests on two switches
#           (--myri-hosts 0,2: every packet crosses the link between the
#           switches); then on the newest kernel the exchange
#           and run_myri.sh (cluster.py --mode myri), 2 guests on one switch
#           and 4 across two
#   mpi     MPI over dp on the newest kernel (docs/mpi.md): the MPI guest
#           image (tools/mpi/mkimage.sh), then 4 guests on it (cluster.py
#           --mode mpi, tools/mpi/guest-mpi.sh): fi_info and fi_pingpong
#           over the provider, NetPIPE and mpi_test over Open MPI on dp,
#           mpi_test over Open MPI's TCP
# Not in the default list, run by make check-debug (docs/debug-kernel.md):
#   debug_deps      tools/deps.sh --debug-kernel (kernel source, build tools)
#   debug_kernel    the debug kernel (tools/debug-kernel/build.sh; cached)
#   debug_module    dp.ko against its tree
#   debug_userspace user space into build/stage
#   debug_initramfs the guest initramfs with the debug kernel's modules
#   debug_check     the selftests in 2 guests on the debug kernel
#   debug_tulip     the tulip suite in one guest on the debug kernel
#   debug_rel       the lossless-edge suite (run_rel.sh) in 2 guests through
#                   the fault relay on the debug kernel, DEBUG_REL_N messages,
#                   over virtio-net and over e1000
# Run by make soak (before a change to the send or receive path):
#   soak            run_soak.sh: SOAK_N (10^6) messages under faults in 2
#                   guests, per kernel over virtio-net and dp's tulip, at once
#   soak_debug      the same on the debug kernel, SOAK_DEBUG_N (10^5) messages
#                   (SOAK_CPU: the guests' -cpu instead of max,cx16=off; docs/soak.md)
# Logs go to build/check/.  A skip that tools/qemu/skips.txt does not allow
# fails.  The lines before the last give the number of distinct checks and
# the skips; the last line is exactly "N passed, N failed"; exit 1 if
# anything failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logs=${CHECK_LOGS:-$top/build/check}
mkdir -p "$logs"
ktap=tools/qemu/ktap.py
# the skips a run may have, each with its reason; any other skip fails
skips=tools/qemu/skips.txt
GUEST_TIMEOUT=${GUEST_TIMEOUT:-900}

passed=0 failed=0 skipped=0
failures=()
names=()	# files of result names (ktap.py --names) for the distinct-check count

mk() { make -s --no-print-directory -C "$top" "$@"; }

# one test decided by an exit status
result() { # NAME RC LOG
	if [ "$2" -eq 0 ]; then
		passed=$((passed + 1))
		echo "  ok   $1"
	else
		failed=$((failed + 1))
		failures+=("$1")
		echo "  FAIL $1 (log: ${3#"$top"/})"
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 25 "$3" | sed 's/^/       | /'
	fi
}

# add "P passed, F failed, S skipped" counts from a line
tally() { # NAME LINE RC LOG
	local p f s
	read -r p f s < <(sed -n 's/.*\b\([0-9]\+\) passed, \([0-9]\+\) failed, \([0-9]\+\) skipped.*/\1 \2 \3/p' <<<"$2")
	if [ -z "${p:-}" ] || [ $((p + f + s)) -eq 0 ]; then
		result "$1" "$3" "$4"   # no results printed: the exit status decides
		return
	fi
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1  # failed without a failing result (crash, plan cut short elsewhere)
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	echo "  $( [ "$f" -eq 0 ] && echo 'ok  ' || echo 'FAIL') $1: $p passed, $f failed, $s skipped"
	if [ "$f" -ne 0 ]; then
		failures+=("$1 ($f)")
		if grep -qE '^(FAIL|cluster: +FAIL)' <<<"$5"; then
			# a guest's crash report first (cluster.py prints it under
			# its harness failure), then each failure with the
			# diagnostics its test printed before it
			grep -E '^cluster: +# kernel: ' <<<"$5" | head -n 60 | sed 's/^/       | /'
			grep -E '^(FAIL|cluster: +(FAIL|  #))' <<<"$5" | grep -vE '^cluster: +# kernel: ' |
				head -n 100 | sed 's/^/       | /'
		else
			tail -n 15 "$4" | sed 's/^/       | /'
		fi
		echo "       (log: ${4#"$top"/})"
	fi
}

# run a command whose output holds KTAP/TAP results and count them; a skip
# not on the allow-list for context "unit" fails
ktap_run() { # NAME LOG CMD...
	local name=$1 log=$2 rc=0 summary
	shift 2
	"$@" >"$log" 2>&1 || rc=$?
	names+=("$log.names")
	summary=$(python3 "$ktap" --allow "$skips" --context unit --names "$log.names" \
		--prefix "$name" "$log")
	tally "$name" "$(tail -n 1 <<<"$summary")" "$rc" "$log" "$summary"
}

# the newest kernel of KVERS (they are listed oldest first)
newest_kernel() {
	local k
	for k in $KVERS; do :; done
	echo "$k"
}

stage_deps() {
	if ! tools/deps.sh >"$logs/deps.log" 2>&1; then
		cat "$logs/deps.log"
		echo "check: dependencies could not be installed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	tail -n 1 "$logs/deps.log" | sed 's/^/  /'
}

# each user-space part built and installed into build/stage
build_userspace() {
	local d rc
	rm -rf build/stage
	mkdir -p build/stage
	for d in $(mk print-USERSPACE_HERE); do
		rc=0; mk "stage-$d" >"$logs/build-${d//\//_}.log" 2>&1 || rc=$?
		result "build+install $d" $rc "$logs/build-${d//\//_}.log"
	done
}

stage_build() {
	local k rc
	for k in $KVERS; do
		rc=0; tools/build-module.sh "$k" >"$logs/module-$k.log" 2>&1 || rc=$?
		result "module build $k" $rc "$logs/module-$k.log"
	done
	build_userspace
	rc=0; mk initramfs >"$logs/initramfs.log" 2>&1 || rc=$?
	result "guest initramfs ($(echo $KVERS | wc -w) kernels)" $rc "$logs/initramfs.log"
}

# Every listed dir:target must run: a missing Makefile or target fails.
stage_unit() {
	local u d t log
	for u in ${CHECK_UNIT:-$(mk print-UNIT)}; do
		d=${u%%:*} t=${u#*:}
		log=$logs/unit-${d//\//_}-$t.log
		if [ ! -f "$d/Makefile" ]; then
			echo "unit: $d/Makefile missing" >"$log"
			result "unit $d $t" 1 "$log"
		elif ! make -s --no-print-directory -C "$d" -n "$t" >"$log" 2>&1; then
			result "unit $d $t (no such target, or a broken Makefile)" 1 "$log"
		else
			ktap_run "unit $d $t" "$log" make --no-print-directory -C "$d" "$t"
		fi
	done
}

stage_sparse() {
	local k rc
	for k in $KVERS; do
		rc=0; tools/build-module.sh --sparse "$k" >"$logs/sparse-$k.log" 2>&1 || rc=$?
		result "sparse $k" $rc "$logs/sparse-$k.log"
	done
}

stage_dkms() {
	ktap_run "dkms" "$logs/dkms.log" tools/dkms-check.sh $KVERS
}

# run_rel.sh's KTAP as the subtests of mode run's one result.
REL_SHORT_N=${REL_SHORT_N:-20000}
REL_LARGE_N=${REL_LARGE_N:-0}
REL_CMD='{ sh /usr/lib/dp/selftests/run_rel.sh 2>&1; echo $? >/tmp/rel.rc; } | while IFS= read -r l; do echo "  $l"; done; exit $(cat /tmp/rel.rc)'

# guest NAME LOG OUTDIR MODE [cluster.py args]: one counted cluster.py run;
# its result names are kept for the distinct-check count
guest() {
	local name=$1 log=$logs/$2.log out=build/results/$3 mode=$4 rc=0 t0=$SECONDS
	shift 4
	tools/qemu/cluster.py --mode "$mode" --out "$out" --timeout "$GUEST_TIMEOUT" "$@" \
		>"$log" 2>&1 || rc=$?
	# each run's time in its name: what a suite costs make check's budget
	tally "$name [$((SECONDS - t0)) s]" "$(tail -n 1 "$log")" "$rc" "$log" "$(cat "$log")"
	names+=("$out/$mode-names.txt")
}

# The kernel whose single-guest suite runs through the kselftest framework
# (stage kselftest): Debian's linux-source-6.1 is that kernel's source.
KSFT_KVER=''
ksft_done=0

# dp's selftests as a kselftest target (tools/kselftest.sh): copied into
# the tools/testing/selftests of Debian's linux-source-6.1, built with make
# -C tools/testing/selftests TARGETS=dp, installed with kselftest_install.sh;
# then one guest on the 6.1 kernel runs the installed run_kselftest.sh -c dp
# (the single-guest suite, run_local.sh), counted by ours and checked by the
# kernel tree's kunit_parser.py.  Stage guest then runs only the cross-guest
# exchange on that kernel instead of the whole check mode.
stage_kselftest() {
	local k rc=0 log=$logs/kselftest-build.log ktree sum
	for k in $KVERS; do case $k in 6.1.*) KSFT_KVER=$k ;; esac; done
	if [ -z "$KSFT_KVER" ]; then
		result "kselftest: no 6.1 kernel among $KVERS" 1 ""
		return
	fi
	k=$KSFT_KVER
	tools/kselftest.sh "$k" >"$log" 2>&1 || rc=$?
	result "kselftest build and install (linux-source-6.1, TARGETS=dp)" $rc "$log"
	[ $rc -eq 0 ] || return
	ktree=$(tail -n 1 "$log")
	guest "guest kselftest $k (run_kselftest.sh -c dp)" "guest-kselftest-$k" "$k-kselftest" \
		kselftest --kernel "$k" --guests 1 --smp 2 \
		--initramfs "build/$k/initramfs-kselftest.cpio"
	log=$logs/kselftest-kunit-parser.log
	rc=0
	python3 tools/qemu/kunit_check.py "$ktree" "build/results/$k-kselftest/kselftest-g0.out.log" \
		>"$log" 2>&1 || rc=$?
	sum=$(grep '^kunit_check: run_local.sh' "$log" | head -n 1)
	result "kunit_parser.py agrees (${sum#kunit_check: })" $rc "$log"
	ksft_done=1
}

# The core suite's tests that drive a NIC backend's data path and its
# life (send, receive, both ways of copying and of the CRC, order, a full
# pool, large messages, a NIC going and coming, a send faulting
# mid-copy): run_local.sh's DPT_ONLY for the backend runs that do not take
# the whole suite.
NIC_PATH='xfer|ways|order|pool_full|nic_gone|node_set|send_fault|large'

# The core suite's tests whose path through dp depends on the NIC backend:
# NIC_PATH and the bundles of a batch (sendv, over io_uring too: uring),
# sends from the kept copy (zerocopy), forged frames on the wire
# (raw_frames), busy polling of the driver (poll), and the fuzzer, which
# detaches and re-attaches the NICs under load.  One run per dp driver
# (tulip, myri) takes these; the rest of the suite (the module's life,
# binding, errnos, users and their limits, the sessions' states in
# rel_local, dpperf, tracing) is the same code over any NIC and runs on
# both kernels over veth (the kselftest guest and stage guest's selftests).
# NIC_SUITE=all runs the whole suite over the drivers instead.
NIC_TESTS="$NIC_PATH|sendv|uring|zerocopy|raw_frames|poll|fuzz"
[ "${NIC_SUITE:-}" = all ] && NIC_TESTS=''

stage_guest() {
	local k
	for k in $KVERS; do
		if [ "$ksft_done" = 1 ] && [ "$k" = "$KSFT_KVER" ]; then
			# its single-guest suite ran under the kselftest framework
			guest "guest cluster x2 $k" "guest-$k" "$k" cluster --kernel "$k" \
				--guests 2 --smp 1
			continue
		fi
		# the exchange in both guests, the single-guest suite in guest 0
		guest "guest selftests $k" "guest-$k" "$k" check --kernel "$k" --guests 2 --smp 2
	done
	# dp's own tulip driver: the core suite and the driver's tests in one
	# guest with two tulips on a QEMU hub.  The core suite's NIC tests
	# (NIC_TESTS) on the newest kernel; on the others the driver's tests
	# and the core suite's NIC path (NIC_PATH): dp's code over a tulip is
	# the same on every kernel (no compat switch in it; what differs
	# between kernels, the pool's mmap, busy polling, io_uring, is in the
	# netdev runs above).
	local last
	last=$(newest_kernel)
	for k in $KVERS; do
		if [ "$k" = "$last" ]; then
			DPT_ONLY=$NIC_TESTS guest "guest tulip $k (driver tests, NIC tests)" \
				"guest-tulip-$k" "$k-tulip" tulip --kernel "$k"
		else
			DPT_ONLY=$NIC_PATH guest "guest tulip $k (driver tests, NIC path)" \
				"guest-tulip-$k" "$k-tulip" tulip --kernel "$k"
		fi
	done
	# Lossless edges across two guests through the fault relay
	# (selftests/dp/run_rel.sh: a stream under drop/dup/reorder/corrupt,
	# a stalled receiver, partitions, a module reload, rmmod with
	# retransmissions pending), per kernel on dp's tulip and on e1000, and
	# on virtio-net (below).  The stream is 10^5 messages (about 4 minutes) on
	# dp's tulip under the newest kernel and REL_SHORT_N on the others,
	# which keeps make check under 45 minutes on 2 cores now that these
	# 2-vCPU guests get one TCG thread each (docs/harness.md); REL_FULL=1
	# streams 10^5 on all six.  Large messages under the same faults: 4 MiB of sizes up to
	# 1 MiB; REL_LARGE_N=10000 streams that many over virtio-net instead
	# (about 90 s each with 9000-byte frames; not the default while such a
	# stream can stall: docs/status.md).  And on e1000, REL_SHORT_N: the
	# netdev backend on a device that takes page fragments, so frames go
	# out from the sessions' copies (virtio-net over QEMU's socket link
	# offers no checksum offload, hence no fragments); its zerocopy
	# completion differs between kernels (dp_netdev.c).  virtio-net on the
	# newest kernel only: its path (the netdev backend, linear skbs) is
	# the same code under both, and the e1000 stream runs the netdev
	# backend under each; REL_FULL=1 runs it under every kernel.
	local n nic ln nicargs
	for k in $KVERS; do
		for nic in virtio tulip e1000; do
			[ $nic = virtio ] && [ "$k" != "$last" ] &&
				[ "${REL_FULL:-0}" != 1 ] && continue
			n=100000
			[ "${REL_FULL:-0}" = 1 ] || [ "$k-$nic" = "$last-tulip" ] || n=$REL_SHORT_N
			ln=0
			[ $nic = virtio ] && ln=$REL_LARGE_N
			case $nic in
			tulip) nicargs='--nic tulip --nic-driver none' ;;
			e1000) nicargs='--nic e1000 --nic-driver e1000' ;;
			*) nicargs='' ;;
			esac
			# shellcheck disable=SC2086 # nicargs is a list of arguments
			guest "guest reliability $nic $k ($n messages)" "guest-rel-$nic-$k" \
				"$k-rel-$nic" run --kernel "$k" --guests 2 --smp 2 --faults none \
				$nicargs \
				--cmd "DPT_REL_N=$n; DPT_REL_LARGE_N=$ln; export DPT_REL_N DPT_REL_LARGE_N; $REL_CMD"
		done
	done
	# The cross-guest exchange again with 4 guests (through dpswitch), on
	# the newest kernel: the harness must work beyond a pair.  These guests
	# have no NART file (--no-nart): they find each other by neighbour
	# discovery before the exchange, then run_disc.sh checks duplicate NIDs,
	# static entries over discovered ones, ageing out and unloading with
	# discovery on (docs/discovery.md; one kernel: the code path is the same).
	k=$last
	guest "guest cluster x4 $k (neighbour discovery)" "guest-cluster4-$k" "$k-4" cluster \
		--kernel "$k" --guests 4 --smp 1 --no-nart
	# The fault relay end to end (harness self-test, about 30 s): two guests
	# through dpswitch with drop, dup, reorder, corrupt, partition and heal.
	guest "guest faults x2 $k" "guest-faults-$k" "$k-faults" faults --kernel "$k"
}

# ---- make check-debug: the guest suites on a debug kernel built from
# Debian's linux-source-6.1 with KASAN, UBSAN, lockdep, kmemleak and more
# (tools/debug-kernel/).  Its guests are slower and need more memory.
DEBUG_GUEST_TIMEOUT=${DEBUG_GUEST_TIMEOUT:-3600}
DEBUG_GUEST_MEM=${DEBUG_GUEST_MEM:-1536}
# DEBUG_CONFIG=kcsan: the same suites on the KCSAN kernel instead
# (tools/debug-kernel/kcsan.config); make check-debug runs both.
DEBUG_CONFIG=${DEBUG_CONFIG:-debug}
# A WARN, and so a KASAN or UBSAN report, panics the guest: the run stops at
# the first report (lockdep and atomic-sleep reports are only printed; the
# host's judge fails the run on any of them).  Not on the KCSAN kernel:
# KCSAN honours panic_on_warn too, and would stop at the kernel's own first
# race, which the judge only lists (it fails on dp's).
if [ "$DEBUG_CONFIG" = kcsan ]; then
	DEBUG_APPEND=${DEBUG_APPEND-}
else
	DEBUG_APPEND=${DEBUG_APPEND:-panic_on_warn=1}
fi
dbg=$DEBUG_CONFIG
dkd='' dkver='' dkfailed=0

# The debug kernel's directory and version (built, or found in the cache).
debug_kernel_dir() {
	[ -n "$dkd" ] && return 0
	[ "$dkfailed" = 0 ] || return 1
	dkd=$(DP_DEBUG_CONFIG=$DEBUG_CONFIG tools/debug-kernel/build.sh 2>>"$logs/$dbg-kernel.log") &&
		[ -n "$dkd" ] &&
		dkver=$(cat "$dkd/kernel.release") && return 0
	dkd='' dkfailed=1
	return 1
}

stage_debug_deps() {
	if ! tools/deps.sh --debug-kernel >"$logs/debug-deps.log" 2>&1; then
		cat "$logs/debug-deps.log"
		echo "check: dependencies could not be installed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	tail -n 1 "$logs/debug-deps.log" | sed 's/^/  /'
}

stage_debug_kernel() {
	local rc=0
	: >"$logs/$dbg-kernel.log"
	debug_kernel_dir || rc=1
	result "$dbg kernel ${dkver:-build}" $rc "$logs/$dbg-kernel.log"
	tail -n 1 "$logs/$dbg-kernel.log" | sed 's/^/  /'
}

stage_debug_module() {
	local rc=0 log=$logs/$dbg-module.log
	: >"$log"
	{ debug_kernel_dir && tools/build-module.sh --kdir "$dkd/obj"; } >>"$log" 2>&1 || rc=$?
	result "module build ${dkver:-(no debug kernel)}" $rc "$log"
}

stage_debug_userspace() {
	build_userspace
}

stage_debug_initramfs() {
	local rc=0 log=$logs/$dbg-initramfs.log
	: >"$log"
	{ debug_kernel_dir &&
		tools/qemu/mkinitramfs.py --kver "$dkver" --moddir "$dkd/mods" \
			--out "build/$dkver/initramfs.cpio" --stage build/stage \
			--ko "build/$dkver/src/dp.ko"; } >>"$log" 2>&1 || rc=$?
	result "guest initramfs ${dkver:-(no debug kernel)}" $rc "$log"
}

# debug_guest NAME MODE OUTDIR APPEND [cluster.py args]: one counted guest
# run; APPEND is added to DEBUG_APPEND on the kernel command line
debug_guest() {
	local name=$1 mode=$2 out=$3 append="$DEBUG_APPEND${4:+ $4}" log=$logs/$dbg-guest-$2.log rc=0
	shift 4
	if ! debug_kernel_dir; then
		result "$name" 1 "$logs/$dbg-kernel.log"
		return
	fi
	tools/qemu/cluster.py --kernel "$dkver" --vmlinuz "$dkd/vmlinuz" --mode "$mode" \
		--mem "$DEBUG_GUEST_MEM" --append "$append" --out "build/results/$out" \
		--timeout "$DEBUG_GUEST_TIMEOUT" "$@" >"$log" 2>&1 || rc=$?
	tally "$name" "$(tail -n 1 "$log")" "$rc" "$log" "$(cat "$log")"
	names+=("build/results/$out/$mode-names.txt")
	grep -E '^cluster: .* took ' "$log" | sed 's/^cluster: /  /'
}

stage_debug_check() {
	debug_kernel_dir
	debug_guest "debug guest selftests ${dkver:-}" check "${dkver:-debug}" "" --guests 2 --smp 2
}

# The tulips have no MSI: their INTx routing comes from ACPI's _PRT method,
# which QEMU's i440FX implements as a 128-step AML loop.  With KASAN and
# kmemleak paying for every one of the interpreter's allocations under TCG it
# runs past ACPICA's 30 s loop limit (AE_AML_LOOP_TIMEOUT) and the device gets
# no IRQ; acpi=noirq takes the routing from the BIOS's PIRQ table instead.
# This guest has one CPU (as in make check), which acpi=noirq would force.
stage_debug_tulip() {
	debug_kernel_dir
	debug_guest "debug guest tulip ${dkver:-}" tulip "${dkver:-debug}-tulip" acpi=noirq
}

# The lossless-edge suite across two guests through the fault relay
# (selftests/dp/run_rel.sh), with a shorter stream: on this kernel every
# frame pays for KASAN and lockdep, and what is checked here is the
# retransmission, timer, reset and unload paths, which every step takes.
# Over virtio-net, and over e1000, where the netdev backend sends from the
# sessions' copies as page fragments (see stage_guest).  The e1000 has no
# MSI either: without acpi=noirq (see stage_debug_tulip) it gets no IRQ on
# this kernel and its link never comes up.
DEBUG_REL_N=${DEBUG_REL_N:-5000}
stage_debug_rel() {
	debug_kernel_dir
	debug_guest "debug guest reliability ${dkver:-} ($DEBUG_REL_N messages)" run \
		"${dkver:-debug}-rel" "" --guests 2 --smp 2 --faults none \
		--cmd "DPT_REL_N=$DEBUG_REL_N; export DPT_REL_N; $REL_CMD"
	debug_guest "debug guest reliability e1000 ${dkver:-} ($DEBUG_REL_N messages)" run \
		"${dkver:-debug}-rel-e1000" acpi=noirq --guests 2 --smp 2 --faults none \
		--nic e1000 --nic-driver e1000 \
		--cmd "DPT_REL_N=$DEBUG_REL_N; export DPT_REL_N; $REL_CMD"
}

# ---- make soak: one long lossless-edge stream per kernel and NIC
# (selftests/dp/run_soak.sh), 2 guests through the fault relay under
# drop=5,dup=2,reorder=5,corrupt=1, then the same on the debug kernel
# (KASAN, UBSAN, lockdep, kmemleak) at a length that fits.  Not part of
# make check: run it before a change to the send or receive path.  The
# four Debian-kernel runs go at once: the stream is paced by the protocol
# (acks, retransmission timers), not by the host's CPUs.
SOAK_N=${SOAK_N:-1000000}
SOAK_DEBUG_N=${SOAK_DEBUG_N:-100000}
SOAK_CMD='st=0; sh /usr/lib/dp/selftests/run_soak.sh >/tmp/soak.out 2>&1 || st=$?; sed "s/^/  /" /tmp/soak.out; exit $st'

# soak_guest NAME OUT N [cluster.py args]: start one soak cluster, log to
# $logs/soak-OUT.log; the caller waits and tallies (soak_tally)
soak_guest() {
	local out=$2 n=$3
	shift 3
	tools/qemu/cluster.py --guests 2 --smp 2 --faults none --mode run \
		--cmd "DPT_SOAK_N=$n; export DPT_SOAK_N; $SOAK_CMD" \
		--out "build/results/soak-$out" --timeout $((n / 50 + 1800)) \
		${SOAK_CPU:+--cpu "$SOAK_CPU"} "$@" >"$logs/soak-$out.log" 2>&1
}

soak_tally() { # NAME OUT RC
	local log=$logs/soak-$2.log
	tally "$1" "$(tail -n 1 "$log")" "$3" "$log" "$(cat "$log")"
	grep -E '^cluster: .* took ' "$log" | sed 's/^cluster: /  /'
	grep -h '# took ' build/results/soak-"$2"/run-g0.out.log 2>/dev/null | sed 's/^ *# */  /'
}

stage_soak() {
	local k nic pids=() names=() outs=() i rc
	for k in $KVERS; do
		for nic in virtio tulip; do
			soak_guest "soak $nic $k ($SOAK_N messages)" "$k-$nic" "$SOAK_N" --kernel "$k" \
				$([ $nic = tulip ] && echo --nic tulip --nic-driver none) &
			pids+=($!) names+=("soak $nic $k ($SOAK_N messages)") outs+=("$k-$nic")
		done
	done
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		soak_tally "${names[$i]}" "${outs[$i]}" "$rc"
	done
}

stage_soak_debug() {
	local rc=0 name="soak debug ${dkver:-kernel} ($SOAK_DEBUG_N messages)"
	if ! debug_kernel_dir; then
		result "$name" 1 "$logs/debug-kernel.log"
		return
	fi
	name="soak debug $dkver ($SOAK_DEBUG_N messages)"
	soak_guest "$name" debug "$SOAK_DEBUG_N" --kernel "$dkver" --vmlinuz "$dkd/vmlinuz" \
		--mem "$DEBUG_GUEST_MEM" --append "$DEBUG_APPEND" || rc=$?
	soak_tally "$name" debug "$rc"
}

# The core suite over dp's myri driver per kernel (as over the tulips): one
# guest, two simulated LANai cards, node dpA on myri0 and dpB on myri1.  On
# the newest kernel the cards share one switch, and the suite's NIC path
# runs (NIC_PATH; the NIC tests over the tulips are there); on the others
# the NIC tests (NIC_TESTS), with the second card on the other switch of the default
# topology (--myri-hosts 0,2), so every packet crosses two switches and the
# link between them (cluster.py checks the simulator's hop count).  One run
# per kernel, not two, to keep the stage's time: the newest kernel also
# runs the streams below on both topologies, so each kernel meets two
# switches.  dp's myri driver has no compat switch: its code is the same
# on every kernel.  The
# fabric's faults, the mapper and the streams between guests on one kernel:
# the driver's code is the same on both (both build it warning- and
# sparse-free); 2 guests on one switch, then 4 across two.
stage_myri() {
	local k newest
	newest=$(newest_kernel)
	for k in $KVERS; do
		if [ "$k" = "$newest" ]; then
			DPT_ONLY=$NIC_PATH guest "guest myri core $k (two cards, one switch, NIC path)" \
				"guest-myricore-$k" "$k-myricore" myricore --kernel "$k" --smp 2
		else
			DPT_ONLY=$NIC_TESTS guest "guest myri core $k (two cards, two switches, NIC tests)" \
				"guest-myricore2-$k" "$k-myricore2" myricore --kernel "$k" --smp 2 \
				--myri-hosts 0,2
		fi
	done
	k=$newest
	guest "guest myri x2 $k (one switch)" "guest-myri-$k" "$k-myri" myri --kernel "$k" \
		--guests 2 --smp 1
	guest "guest myri x4 $k (two switches)" "guest-myri4-$k" "$k-myri4" myri --kernel "$k" \
		--guests 4 --smp 1
}

# MPI over dp (docs/mpi.md), on the newest kernel: the MPI guest image (the
# harness's image plus Open MPI, NetPIPE, libfabric's tools and
# libdp-fi.so; tools/mpi/mkimage.sh), then 4 one-vCPU guests on it
# (tools/mpi/guest-mpi.sh): fi_info finds the provider, fi_pingpong -p dp
# -e rdm between two guests, NetPIPE between two over Open MPI on dp (pml
# cm, mtl ofi, FI_PROVIDER=dp), mpi_test on all four over dp and over Open
# MPI's TCP (pml ob1, btl tcp), dp's counters showing which carried what.
stage_mpi() {
	local k rc=0 log=$logs/mpi-image.log
	k=$(newest_kernel)
	tools/mpi/mkimage.sh "$k" >"$log" 2>&1 || rc=$?
	result "MPI guest image $k (tools/mpi/mkimage.sh)" $rc "$log"
	if [ $rc -ne 0 ]; then
		result "guest mpi x4 $k (no image)" 1 "$log"
		return
	fi
	guest "guest mpi x4 $k (Open MPI over dp and TCP)" "guest-mpi-$k" "$k-mpi" mpi \
		--kernel "$k" --guests 4 --smp 1
	grep -E '^cluster: .* took ' "$logs/guest-mpi-$k.log" | sed 's/^cluster: /  /'
}

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(deps build unit sparse dkms kselftest guest myri mpi)
t_all=$(date +%s)
for s in "${stages[@]}"; do
	declare -F "stage_$s" >/dev/null || { echo "check: unknown stage $s" >&2; exit 2; }
	# the kernel list can only be read once deps ran
	case $s in
	deps | debug_*) ;;
	*) KVERS=${KVERS:-$(tools/kvers.sh)} || exit 1 ;;
	esac
	echo "== $s"
	t0=$(date +%s)
	"stage_$s"
	echo "== $s: $(($(date +%s) - t0)) s"
done
echo "== total: $(($(date +%s) - t_all)) s"
# Distinct checks: every result's name, with numbers folded, once (the same
# check on another kernel or guest is the same check); besides the total.
nf=()
for f in "${names[@]}"; do [ -f "$f" ] && nf+=("$f"); done
distinct=0
[ ${#nf[@]} -eq 0 ] || distinct=$(python3 "$ktap" --distinct "${nf[@]}")
echo "== $distinct distinct checks in $((passed + failed + skipped)) results"
[ "$skipped" -eq 0 ] || echo "($skipped skipped, as tools/qemu/skips.txt allows; any other skip fails)"
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
