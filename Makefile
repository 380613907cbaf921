# SPDX-License-Identifier: GPL-2.0
# dp: top-level build, test and demo entry points.
#
#   make check        everything CI runs: deps, build, unit tests, sparse, dkms,
#                     the kselftest-framework run, selftests in QEMU guests on both
#                     kernels; ends with the distinct checks, the (allowed) skips
#                     and "N passed, N failed"
#   make check-debug  the guest selftests and tulip suite on a debug kernel
#                     (KASAN, UBSAN, lockdep, kmemleak) built from Debian's
#                     kernel source and cached (docs/debug-kernel.md); not in check
#   make soak         a 10^6-message lossless-edge stream under injected faults
#                     per kernel over virtio-net and tulip, and 10^5 on the debug
#                     kernel (selftests/dp/run_soak.sh); not in check: run it
#                     before a change to the send or receive path
#   make profile      one icount 1-byte dp ping-pong on the tulips under guest perf
#                     (PROFILE_EXACT=1: every instruction counted by QEMU):
#                     where one leg's instructions go, by symbol
#                     (build/results/profile/profile.md; docs/perf/profile.md);
#                     PROFILE_RUN=bw:65536: dp's bandwidth instead, per KiB
#                     PROFILE_RUN=send:32: a sender's cost per message instead
#                     PROFILE_NIC=virtio-net-pci: over the netdev backend;
#                     tools/dpperf/profile-compare DIR... puts runs (copies
#                     of build/results/profile) side by side, by group
#   make profile-steady  PROFILE_RUN=bw:SIZE's steady state: two exact runs of
#                     different lengths, per KiB without what a run pays once
#   make profile-mpi  the same for a 1-byte MPI round trip: NetPIPE over Open MPI
#                     on dp (MPI_PROFILE=tcp: on TCP) between two e1000s, every
#                     instruction counted (build/results/profile-mpi/)
#   make reliability  dp, raw dp and TCP under 0, 1 and 5% loss between two guests
#                     (build/results/relperf/; docs/reliability-report.md;
#                     REL_RUNS=3: three runs, each figure's mean and range)
#   make demo         deps, build, dpperf in a 2-guest real-time run, icount runs
#                     on e1000 and on tulip (dp's own driver against UDP/TCP over
#                     Linux's), a 2-guest run on the simulated Myrinet fabric (dp
#                     against UDP/TCP over myri0), NetPIPE over Open MPI on dp
#                     against Open MPI over TCP (between 2 guests, and under icount
#                     on e1000 and tulip), then the report (build/results/),
#                     whose table of the issues' targets it writes into
#                     README.md too (DEMO_README=: not)
#   make deps         install the Debian packages (tools/deps.sh)
#   make install      libdp, the libfabric provider libdp-fi.so (needs
#                     libfabric-dev; into PREFIX/lib/MULTIARCH/libfabric),
#                     dpctl (and its bash completion), dpperf, the man pages
#                     and the netlink spec into DESTDIR/PREFIX (default
#                     /usr/local)
#   make deb          the Debian packages dp-dkms, libdp1, libdp-dev, dp-utils,
#                     libfabric-dp
#                     (dpkg-buildpackage on a clean copy, then lintian) in
#                     build/deb/
#   make all          dp.ko for both kernels, libdp, tools, selftests, initramfs images
#   make module       dp.ko per kernel in build/KVER/src/ (warnings are errors)
#   make unit         host unit tests (module/tests, libdp, libdp/fi, tools, tools/qemu,
#                     tools/myrisim, tools/mpi)
#   make sparse       sparse over the module, per kernel
#   make dkms         dkms add/build/remove per kernel (needs root)
#   make kselftest    selftests/dp built, installed and run (one guest, 6.1) by the
#                     kselftest framework of Debian's linux-source-6.1
#   make guest-check  selftests in 2 guests per kernel
#   make mpi-image    the MPI guest image (Open MPI, NetPIPE, libfabric's tools,
#                     libdp-fi.so) for the newest kernel (tools/mpi/mkimage.sh;
#                     docs/mpi.md)
#   make guest-mpi    4 guests on it: fi_info, fi_pingpong, NetPIPE and
#                     tools/mpi's mpi_test over Open MPI on dp, mpi_test over TCP
#   make guest-ping   harness self-test: 2 guests, then 4 through dpswitch, then 2
#                     through dpswitch with injected faults (mode faults)
#   make shell        one interactive guest (KVER=... to choose; Ctrl-a x quits)
#   make clean
#
# User-space parts are built and installed (DESTDIR=build/stage PREFIX=/usr)
# from every directory in USERSPACE that has a Makefile; the guest image
# carries whatever lands in build/stage.

SHELL := /bin/bash
TOP := $(CURDIR)
KVERS = $(shell tools/kvers.sh)
KVER ?= $(firstword $(KVERS))
STAGE := $(TOP)/build/stage
RESULTS := $(TOP)/build/results
USERSPACE := libdp tools selftests
# directory:target pairs run by `make unit`; a missing Makefile or target fails
UNIT := module/tests:check module/tests:fuzz-smoke libdp:check libdp/fi:check tools:check \
	tools/qemu:check tools/myrisim:check man:check netlink:check tools:deb-check \
	tools/mpi:check
GUEST_TIMEOUT ?= 900

# Stages depend on each other's files in order (module, stage, image): keep
# this level serial; the sub-makes may use -j.
.NOTPARALLEL:

.PHONY: all check check-debug soak profile reliability demo deps module userspace initramfs unit sparse dkms \
	install deb \
	guest-check guest-ping shell clean demo-run mpi-image guest-mpi profile-run profile-mpi profile-steady

all: module userspace initramfs

deps:
	tools/deps.sh

module:
	@set -e; for k in $(KVERS); do tools/build-module.sh $$k; done

# the parts that exist so far
USERSPACE_HERE = $(foreach d,$(USERSPACE),$(if $(wildcard $(d)/Makefile),$(d)))

userspace:
	rm -rf $(STAGE)
	@mkdir -p $(STAGE)
	@set -e; for d in $(USERSPACE_HERE); do $(MAKE) stage-$$d; done

# What a user installs by hand (the Debian packages split the same files).
PREFIX ?= /usr/local
install:
	@set -e; for d in libdp libdp/fi tools man netlink; do \
		$(MAKE) -C $$d install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX); \
	done

# Debian packages, built on a copy of the tree (dpkg-buildpackage writes
# next to the source directory, and cleans it first) without build/ or .git.
DEB := $(TOP)/build/deb
deb:
	rm -rf $(DEB)
	mkdir -p $(DEB)/dp
	tar -C $(TOP) --exclude=./build --exclude=./.git -cf - . | tar -C $(DEB)/dp -xf -
	cd $(DEB)/dp && dpkg-buildpackage -b -us -uc
	lintian --fail-on error $(DEB)/*.changes

# build one user-space part and install it into the staging root
stage-%:
	$(MAKE) -C $*
	$(MAKE) -C $* install DESTDIR=$(STAGE) PREFIX=/usr

initramfs: build/qemu/dpswitch
	@set -e; for k in $(KVERS); do \
		tools/qemu/mkinitramfs.py --kver $$k --out build/$$k/initramfs.cpio \
			--stage $(STAGE) --ko build/$$k/src/dp.ko; \
	done

build/qemu/dpswitch: tools/qemu/dpswitch.c tools/qemu/faults.c tools/qemu/faults.h
	$(MAKE) -C tools/qemu ../../build/qemu/dpswitch

# The counted stages run through tools/check.sh, which keeps the tally.
unit sparse dkms kselftest:
	tools/check.sh $@

guest-check: all
	@rc=0; for k in $(KVERS); do \
		tools/qemu/cluster.py --kernel $$k --guests 2 --smp 2 --mode check \
			--out $(RESULTS)/$$k --timeout $(GUEST_TIMEOUT) || rc=1; \
	done; exit $$rc

# MPI over dp (docs/mpi.md): its own guest image, so that the others stay
# small; on the newest kernel, as make check runs it (MPI_KVER=... to choose)
MPI_KVER ?= $(lastword $(KVERS))
mpi-image: all
	tools/mpi/mkimage.sh $(MPI_KVER)

guest-mpi: mpi-image
	tools/qemu/cluster.py --kernel $(MPI_KVER) --guests 4 --smp 1 --mode mpi \
		--out $(RESULTS)/$(MPI_KVER)-mpi --timeout $(GUEST_TIMEOUT)

guest-ping: initramfs
	tools/qemu/cluster.py --kernel $(KVER) --guests 2 --mode ping --out $(RESULTS)/ping-2
	tools/qemu/cluster.py --kernel $(KVER) --guests 4 --mode ping --out $(RESULTS)/ping-4
	tools/qemu/cluster.py --kernel $(KVER) --mode faults --out $(RESULTS)/faults

shell: initramfs
	tools/qemu/cluster.py --kernel $(KVER) --guests 1 --mode shell --out $(RESULTS)/shell

check:
	tools/check.sh

# Both debug kernels, one after the other (DEBUG_CONFIGS=kcsan: one only):
# KASAN, UBSAN, lockdep, kmemleak; then KCSAN (docs/debug-kernel.md).
DEBUG_CONFIGS ?= debug kcsan
DEBUG_STAGES = debug_deps debug_kernel debug_module debug_userspace \
	debug_initramfs debug_check debug_tulip debug_rel
check-debug:
	rc=0; for c in $(DEBUG_CONFIGS); do \
		DEBUG_CONFIG=$$c tools/check.sh $(DEBUG_STAGES) || rc=1; done; exit $$rc

soak:
	tools/check.sh deps build soak debug_deps debug_kernel debug_module \
		debug_userspace debug_initramfs soak_debug

# The profile run's image carries perf (not the other guests'); KVER picks
# the kernel (default: the first of KVERS).  PROFILE_RUN: 1, the 1-byte
# ping-pong (per leg), or rt:SIZE, the ping-pong in SIZE-byte messages, or
# bw:SIZE, dp's bandwidth in SIZE-byte messages (per KiB delivered; SIZE up
# to 1 MiB), or send:N, what the sender alone
# spends per 64-byte message, one write() each (1) or dp_sendv() batches
# of N (per message; dpperf --test sendcost; best with PROFILE_NIC=e1000).
# PROFILE_EXACT=1: instead of perf's samples, every instruction of the run
# counted by QEMU (tools/qemu/insn-count.c), named from the guest's
# /proc/kallsyms.
# PROFILE_NIC=virtio-net-pci: the same over the netdev backend on two
# virtio-net NICs (MTU 9000) instead of dp's tulip driver.
# PROFILE_MTU=1500: the netdev NICs' MTU (the guests' dpg.mtu) instead of
# 9000, a cluster's usual Ethernet.
# PROFILE_PROTO=tcp (or udp): the ping-pong or bandwidth run over that
# protocol on the same link instead of dp's, to read beside dp's profile
# (on the tulips over Linux's tulip driver; not with send:N).
# PROFILE_BYTES=N: bw:SIZE moves N bytes instead of 16 MiB.  What a run pays
# once (the processes, an edge's copy slots growing with its window) is in
# its count; make profile-steady counts the steady state alone.
PROFILE_RUN ?= 1
PROFILE_BYTES ?=
PROFILE_PROTO ?= dp
PROFILE_EXACT ?= 0
PROFILE_NIC ?= tulip
PROFILE_MTU ?= 9000
ifeq ($(PROFILE_NIC),tulip)
PROFILE_NIC_ARGS = --nic tulip --nic-driver tulip
else
PROFILE_NIC_ARGS = --nic $(PROFILE_NIC)
endif
PROFILE_BYTES_ARG = $(if $(PROFILE_BYTES),dpg.profbytes=$(PROFILE_BYTES))
PROFILE_IMG = build/$(KVER)/initramfs-profile.cpio
PROFILE_INSNS = $(abspath $(RESULTS))/profile/insns.txt
ifeq ($(PROFILE_EXACT),1)
PROFILE_ARGS = --append "dpg.profile=$(PROFILE_RUN) dpg.profproto=$(PROFILE_PROTO) dpg.exact=1 dpg.mtu=$(PROFILE_MTU) $(PROFILE_BYTES_ARG)" \
	--plugin $(CURDIR)/tools/qemu/insn-count.so,out=$(PROFILE_INSNS)
else
PROFILE_ARGS = --append "dpg.profile=$(PROFILE_RUN) dpg.profproto=$(PROFILE_PROTO) dpg.mtu=$(PROFILE_MTU) $(PROFILE_BYTES_ARG)"
endif
profile:
	tools/deps.sh
	$(MAKE) profile-run

profile-run: all
	tools/qemu/mkinitramfs.py --kver $(KVER) --out $(PROFILE_IMG) --stage $(STAGE) \
		--ko build/$(KVER)/src/dp.ko --bin /usr/bin/perf
	rm -f $(PROFILE_INSNS)
	tools/qemu/cluster.py --kernel $(KVER) --mode icount --out $(RESULTS)/profile \
		$(PROFILE_NIC_ARGS) --initramfs $(PROFILE_IMG) \
		$(PROFILE_ARGS) --timeout $(GUEST_TIMEOUT)
	tools/dpperf/profile-report $(RESULTS)/profile

# A bandwidth profile's steady state (PROFILE_RUN=bw:SIZE): two exact runs
# of STEADY_BYTES1 and STEADY_BYTES2 bytes, and the difference of their
# counts per symbol (tools/dpperf/profile-steady): build/results/profile/
# profile-steady.md, the shorter run kept in build/results/profile-short.
STEADY_BYTES1 ?= 16777216
STEADY_BYTES2 ?= 50331648
profile-steady:
	tools/deps.sh
	$(MAKE) profile-run PROFILE_EXACT=1 PROFILE_BYTES=$(STEADY_BYTES1)
	rm -rf $(RESULTS)/profile-short
	cp -r $(RESULTS)/profile $(RESULTS)/profile-short
	$(MAKE) profile-run PROFILE_EXACT=1 PROFILE_BYTES=$(STEADY_BYTES2)
	tools/dpperf/profile-steady $(RESULTS)/profile-short $(RESULTS)/profile

# Where a 1-byte MPI round trip's instructions go (docs/mpi.md): NetPIPE
# over dp (MPI_PROFILE=dp) or over TCP (tcp) in the -icount guest of the
# MPI image between two e1000s (cluster.py --mode mpiicount), every
# instruction of a window of its steady state counted by QEMU
# (tools/qemu/insn-count.c), per leg; build/results/profile-mpi/profile.md.
MPI_PROFILE ?= dp
profile-mpi: all
	tools/mpi/mkimage.sh $(KVER)
	rm -f $(abspath $(RESULTS))/profile-mpi/insns.txt
	tools/qemu/cluster.py --kernel $(KVER) --mode mpiicount --mem 1024 \
		--nic $(ICOUNT_NIC) --nic-driver e1000 --out $(RESULTS)/profile-mpi \
		--append "dpg.mpiprofile=$(MPI_PROFILE) dpg.exact=1" \
		--plugin $(CURDIR)/tools/qemu/insn-count.so,out=$(abspath $(RESULTS))/profile-mpi/insns.txt \
		--timeout $(GUEST_TIMEOUT)
	tools/dpperf/profile-report $(RESULTS)/profile-mpi

# The reliability report's run (docs/reliability-report.md): two guests
# through the fault relay, dp, raw dp and TCP at 0, 1 and 5% loss; the
# table in build/results/relperf/reliability.md, the raw lines in
# reliability.tsv there (not beside make demo's .tsv files, which its report
# reads all of).  Its KTAP is mode run's subtests.  REL_RUNS=N runs the
# cluster N times (relperf/1 to N; a real-time figure moves by tens of
# percent between runs): the table gives each figure's mean and range.
REL_RUNS ?= 1
REL_CMD = { sh /usr/lib/dp/perf/guest-rel.sh 2>&1; echo $$? >/tmp/rel.rc; } | \
	while IFS= read -r l; do echo "  $$l"; done; exit $$(cat /tmp/rel.rc)
reliability:
	tools/deps.sh
	$(MAKE) reliability-run

reliability-run: all
	rm -rf $(RESULTS)/relperf
	set -e; for i in $$(seq $(REL_RUNS)); do \
		tools/qemu/cluster.py --kernel $(KVER) --guests 2 --smp 2 --faults none \
			--mode run --cmd '$(REL_CMD)' --out $(RESULTS)/relperf/$$i \
			--timeout $(GUEST_TIMEOUT); \
		echo "# run $$i of $(REL_RUNS)" >>$(RESULTS)/relperf/reliability.tsv; \
		sed -n 's/^ *//; /^DPPERF-BEGIN/,/^DPPERF-END/p' \
			$(RESULTS)/relperf/$$i/run-g0.out.log >>$(RESULTS)/relperf/reliability.tsv; \
	done
	tools/dpperf/rel-report $$(seq -f '$(RESULTS)/relperf/%g/run-g0.out.log' $(REL_RUNS)) \
		>$(RESULTS)/relperf/reliability.md
	cat $(RESULTS)/relperf/reliability.md

# deps first, in its own step: KVERS can only be read once the kernels are installed
demo:
	tools/deps.sh
	$(MAKE) demo-run

# The icount NIC: e1000 transmits synchronously on the register write, so
# guest time stays instruction time.  virtio-net transmits from a QEMU bottom
# half: the idle vCPU's clock warps to the next timer before the frame lands
# (milliseconds of noise); e1000's interrupt mitigation would quantise every
# round trip to 256 us, hence mitigation=off.
ICOUNT_NIC ?= e1000,mitigation=off
# Without moderation every frame's completion interrupts the sender, an
# interrupt and a NAPI poll per single write() that a batch shares: the
# sender-alone send costs run again on e1000s with QEMU's default
# moderation (about 20 s), as a NIC under Linux's default
# InterruptThrottleRate runs, and the report shows both.
ICOUNT_NIC_MODERATED ?= e1000

# Real time between two guests (one vCPU each: one host core each), then the
# icount guest on e1000, then the icount guest on two tulips: UDP, TCP and
# raw over Linux's tulip driver, then dp over its own (DEMO_TULIP=0 skips
# it), then two guests on the simulated Myrinet fabric (one switch): dp,
# and UDP and TCP over myri0 (DEMO_MYRI=0 skips it); the report runs on
# whatever they produced.  Last, MPI (DEMO_MPI=0 skips it): NetPIPE between
# two guests of the MPI image, Open MPI over dp against Open MPI over TCP,
# then the same in one guest of that image under -icount, between its two
# e1000s (each in a netns of its own, as for dpperf's icount run), and
# (DEMO_TULIP) between two tulips: TCP over Linux's driver, dp over its own.
DEMO_TULIP ?= 1
DEMO_MYRI ?= 1
DEMO_MPI ?= 1
# The README's figures come from one run: the report writes its table of the
# targets between the README's TARGETS markers (with make reliability's
# goodput under loss when RESULTS/relperf has it).
DEMO_README ?= README.md
demo-run: all
	@rc=0; \
	tools/qemu/cluster.py --kernel $(KVER) --guests 2 --smp 1 --mode demo \
		--out $(RESULTS) --timeout $(GUEST_TIMEOUT) || rc=1; \
	tools/qemu/cluster.py --kernel $(KVER) --mode icount --out $(RESULTS) \
		--nic $(ICOUNT_NIC) --nic-driver e1000 \
		--timeout $(GUEST_TIMEOUT) || rc=1; \
	rm -f $(RESULTS)/icount-moderated.tsv; \
	tools/qemu/cluster.py --kernel $(KVER) --mode icount --out $(RESULTS)/moderated \
		--nic $(ICOUNT_NIC_MODERATED) --nic-driver e1000 \
		--append dpg.sendcost=icount-moderated --timeout $(GUEST_TIMEOUT) || rc=1; \
	cp $(RESULTS)/moderated/icount.tsv $(RESULTS)/icount-moderated.tsv || rc=1; \
	rm -f $(RESULTS)/icount-tulip.tsv; \
	if [ "$(DEMO_TULIP)" = 1 ]; then \
		tools/qemu/cluster.py --kernel $(KVER) --mode icount --out $(RESULTS)/tulip \
			--nic tulip --nic-driver tulip --timeout $(GUEST_TIMEOUT) || rc=1; \
		cp $(RESULTS)/tulip/icount.tsv $(RESULTS)/icount-tulip.tsv || rc=1; \
	fi; \
	rm -f $(RESULTS)/demo-myri.tsv; \
	if [ "$(DEMO_MYRI)" = 1 ]; then \
		tools/qemu/cluster.py --kernel $(KVER) --guests 2 --smp 1 --mode demo \
			--nic myri --fabric one --out $(RESULTS)/myri \
			--timeout $(GUEST_TIMEOUT) || rc=1; \
		cp $(RESULTS)/myri/demo.tsv $(RESULTS)/demo-myri.tsv || rc=1; \
	fi; \
	rm -f $(RESULTS)/demo-mpi*.tsv; \
	if [ "$(DEMO_MPI)" = 1 ]; then \
		tools/mpi/mkimage.sh $(KVER) && \
		tools/qemu/cluster.py --kernel $(KVER) --guests 2 --smp 1 --mode mpidemo \
			--out $(RESULTS)/mpi --timeout $(GUEST_TIMEOUT) || rc=1; \
		cp $(RESULTS)/mpi/mpidemo.tsv $(RESULTS)/demo-mpi.tsv || rc=1; \
		tools/qemu/cluster.py --kernel $(KVER) --mode mpiicount --mem 1024 \
			--nic $(ICOUNT_NIC) --nic-driver e1000 --out $(RESULTS)/mpi \
			--timeout $(GUEST_TIMEOUT) || rc=1; \
		cp $(RESULTS)/mpi/mpiicount.tsv $(RESULTS)/demo-mpi-icount.tsv || rc=1; \
		if [ "$(DEMO_TULIP)" = 1 ]; then \
			tools/qemu/cluster.py --kernel $(KVER) --mode mpiicount --mem 1024 \
				--nic tulip --nic-driver tulip --out $(RESULTS)/mpi-tulip \
				--timeout $(GUEST_TIMEOUT) || rc=1; \
			cp $(RESULTS)/mpi-tulip/mpiicount.tsv \
				$(RESULTS)/demo-mpi-icount-tulip.tsv || rc=1; \
		fi; \
	fi; \
	if [ -x tools/dpperf/report ]; then \
		tools/dpperf/report $(if $(DEMO_README),--readme $(DEMO_README)) $(RESULTS) || rc=1; \
	else echo "demo: no tools/dpperf/report yet; raw results in $(RESULTS)/{demo,icount}.tsv"; fi; \
	exit $$rc

print-%:
	@echo $($*)

clean:
	@for d in $(USERSPACE) libdp/fi tools/mpi module/tests man; do \
		[ -f $$d/Makefile ] && $(MAKE) -C $$d clean || true; \
	done
	rm -rf build
