#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dkms-post-add.sh: dkms.conf's POST_ADD.  `dkms add DIR` copies all of DIR
# into /usr/src/dp-VERSION (build/, tools/, selftests/ and the rest of a
# work tree with it); dkms then runs this in that copy, which keeps only
# what builds dp.ko: dkms.conf, Kbuild, module/ (without its user-space
# tests or any build output), uapi/ and this script.  Also used to make the
# clean tree that tools/dkms-check.sh and the dp-dkms package install.
# Refuses to run in a git work tree.
set -eu
if [ -e .git ] || [ ! -f dkms.conf ] || [ ! -f Kbuild ] || [ ! -d module ]; then
	echo "dkms-post-add.sh: $(pwd) is not a dp source copy made by dkms add; not pruning" >&2
	exit 1
fi
for f in * .[!.]*; do
	case $f in
	dkms.conf | Kbuild | module | uapi | tools | '*' | '.[!.]*') ;;
	*) rm -rf "./$f" ;;
	esac
done
find tools -mindepth 1 -maxdepth 1 ! -name dkms-post-add.sh -exec rm -rf {} +
rm -rf module/tests
find module uapi \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod' \
	-o -name '*.mod.c' -o -name '*.a' -o -name 'modules.order' -o -name 'Module.symvers' \) \
	-exec rm -f {} +
