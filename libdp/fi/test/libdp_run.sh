#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
# Run test/libdp_test: libdp-fi.so from DIR, loaded by libfabric, over
# libdp on libdp's stand-in for /dev/dp.  Usage: libdp_run.sh DIR FAKEDP_SO
set -u
dir=${1:?usage: libdp_run.sh DIR FAKEDP_SO}
fakedp=${2:?usage: libdp_run.sh DIR FAKEDP_SO}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$dir/libdp-fi.so" "$tmp/libdp-fi.so"
FI_PROVIDER_PATH=$tmp FI_PROVIDER=dp FI_DP_POOL_SIZE=32768 FAKEDP_NS=fi$$ \
	LD_PRELOAD=$fakedp "$dir/test/libdp_test"
