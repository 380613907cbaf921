#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian 12 packages dp's build, tests and QEMU harness need.
# Idempotent: asks dpkg which are missing and installs only those (apt-get update
# runs only when something is missing).  Needs root, or sudo.
#   deps.sh                 what make check and make demo need
#   deps.sh --debug-kernel  also the kernel source and its build tools, for
#                           make check-debug (tools/debug-kernel/build.sh)
set -eu
debug_kernel=0
[ "${1:-}" = "--debug-kernel" ] && debug_kernel=1

PKGS="build-essential gcc make
qemu-system-x86 busybox-static
sparse dkms gnuplot-nox
linux-image-amd64 linux-headers-amd64
linux-image-6.12-amd64 linux-headers-6.12-amd64
iproute2 cpio zstd xz-utils kmod
clang libclang-rt-14-dev python3
linux-perf linux-source-6.1 rsync
scdoc groff-base python3-yaml
debhelper dh-dkms lintian dpkg-dev fakeroot pkg-config
liburing-dev libfabric-dev libfabric-bin
openmpi-bin libopenmpi-dev netpipe-openmpi"
# (linux-source-6.1 and rsync: make check builds and installs selftests/dp
# with the kernel's kselftest framework, tools/kselftest.sh; linux-perf: make
# profile; scdoc to dpkg-dev: the man pages and the Debian packages, built
# and checked in make unit; liburing-dev: the io_uring selftest, linked
# statically, and libdp/dp_uring.h; libfabric-dev: the headers and
# library libdp/fi's provider libdp-fi.so is built against, and
# libfabric-bin: its fi_info, which make unit's libdp/fi check loads the
# provider with; docs/mpi.md; openmpi-bin, libopenmpi-dev (mpicc) and
# netpipe-openmpi: Open MPI, NetPIPE and tools/mpi's test program in the
# MPI guest image, tools/mpi/mkimage.sh)

# Only make check-debug builds a kernel: Debian's 6.1 source tarball (under
# /usr/src, also in the list above) and what its build needs.
DEBUG_KERNEL_PKGS="linux-source-6.1 bc bison flex libelf-dev libssl-dev xz-utils"
[ "$debug_kernel" = 1 ] && PKGS="$PKGS $DEBUG_KERNEL_PKGS"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done

# Kernel images and headers must come from one archive state: when one of
# their metapackages is missing, (re)install all four so they agree.
KERNEL_META="linux-image-amd64 linux-headers-amd64 linux-image-6.12-amd64 linux-headers-6.12-amd64"
for p in $KERNEL_META; do
	case " $missing " in
	*" $p "*)
		for q in $KERNEL_META; do
			case " $missing " in *" $q "*) ;; *) missing="$missing $q" ;; esac
		done
		break ;;
	esac
done

if [ -n "$missing" ]; then
	echo "deps: installing:$missing"
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "deps: need root or sudo" >&2; exit 1; }
		SUDO="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	# shellcheck disable=SC2086
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends $missing
fi

# The metapackages only pull their kernels; check that each one is usable here.
here=$(dirname "$0")
for k in $("$here/kvers.sh"); do
	[ -r "/boot/vmlinuz-$k" ] || { echo "deps: /boot/vmlinuz-$k missing or unreadable" >&2; exit 1; }
	[ -d "/lib/modules/$k/build" ] || { echo "deps: headers for $k missing" >&2; exit 1; }
done
echo "deps: ok (kernels: $("$here/kvers.sh" | tr '\n' ' '))"
