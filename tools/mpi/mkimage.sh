#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# mkimage.sh KVER: the guest image for MPI over dp (docs/mpi.md),
# build/KVER/initramfs-mpi.cpio, for cluster.py --mode mpi and mpidemo.
# The other guests' image stays as it is: this one is the harness's image
# (build/stage, as make all left it) plus
#   - libdp-fi.so where Debian's libfabric looks for providers by default
#     (/usr/lib/MULTIARCH/libfabric/) and a link to it in /usr/lib/dp/fi
#     (a directory for FI_PROVIDER_PATH);
#   - libfabric-bin's fi_info and fi_pingpong;
#   - Open MPI (openmpi-bin: orterun as mpirun, orted, ompi_info; its
#     plugin and help directories, /etc/openmpi) and PMIx's plugins, without
#     the UCX, verbs/openib, PSM and Java components (their libraries are
#     not in the image; Open MPI does without them);
#   - netpipe-openmpi's NPopenmpi (also as NPmpi);
#   - tools/mpi: mpi_test, dprsh (the remote shell mpirun starts orted
#     with) and the guest runner guest-mpi.sh.
# mkinitramfs.py copies the shared libraries every ELF file needs.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=${1:?usage: mkimage.sh KVER}
ma=$(${CC:-cc} -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
out=$top/build/mpi
stage=$out/stage
say() { echo "mkimage: $*"; }

[ -d "$top/build/stage/usr/lib/dp" ] || { say "no build/stage (make all first)"; exit 1; }
[ -f "$top/build/$kver/src/dp.ko" ] || { say "no build/$kver/src/dp.ko (make module)"; exit 1; }
for f in /usr/bin/orterun /usr/bin/orted /usr/bin/fi_info /usr/bin/fi_pingpong \
	/usr/bin/NPopenmpi /usr/bin/mpicc "/usr/lib/$ma/openmpi/lib/openmpi3/mca_mtl_ofi.so"; do
	[ -e "$f" ] || { say "$f missing (tools/deps.sh installs openmpi-bin, libopenmpi-dev, netpipe-openmpi, libfabric-bin)"; exit 1; }
done

make -s -C "$top/libdp/fi"
make -s -C "$top/tools/mpi"
rm -rf "$stage"
mkdir -p "$out"
cp -a "$top/build/stage" "$stage"
make -s -C "$top/libdp/fi" install DESTDIR="$stage" PREFIX=/usr
make -s -C "$top/tools/mpi" install DESTDIR="$stage" PREFIX=/usr
[ -f "$stage/usr/lib/$ma/libfabric/libdp-fi.so" ] ||
	{ say "libdp-fi.so did not land in /usr/lib/$ma/libfabric"; exit 1; }
mkdir -p "$stage/usr/lib/dp/fi"
ln -s "../../$ma/libfabric/libdp-fi.so" "$stage/usr/lib/dp/fi/libdp-fi.so"

# binaries
mkdir -p "$stage/usr/bin"
for b in orterun orted ompi_info fi_info fi_pingpong NPopenmpi; do
	cp -L "/usr/bin/$b" "$stage/usr/bin/$b"
done
ln -s orterun "$stage/usr/bin/mpirun"
ln -s orterun "$stage/usr/bin/mpiexec"
ln -s NPopenmpi "$stage/usr/bin/NPmpi"

# Open MPI's and PMIx's run-time directories (no headers: mkinitramfs.py
# leaves out include/ and *.a)
skip='*ucx* *openib* *verbs* *psm* *java* mpi.jar'
copy_tree() {	# copy_tree DIR: DIR into the stage, without $skip
	mkdir -p "$stage$1"
	(cd "$1" && find . \( -type f -o -type l \) -print) | while read -r f; do
		base=${f##*/}
		for pat in $skip; do
			# shellcheck disable=SC2254 # the pattern is meant to match
			case $base in $pat) continue 2 ;; esac
		done
		mkdir -p "$stage$1/${f%/*}"
		cp -a "$1/$f" "$stage$1/$f"
	done
}
copy_tree "/usr/lib/$ma/openmpi/lib"
copy_tree "/usr/lib/$ma/pmix2"
copy_tree /usr/share/openmpi
copy_tree /etc/openmpi
[ -f "$stage/usr/lib/$ma/openmpi/lib/openmpi3/mca_pml_cm.so" ] || { say "Open MPI's plugins were not copied"; exit 1; }

"$top/tools/qemu/mkinitramfs.py" --kver "$kver" --out "$top/build/$kver/initramfs-mpi.cpio" \
	--stage "$stage" --ko "$top/build/$kver/src/dp.ko"
