#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# dkms-post-add-test.sh: TAP.  Does what `dkms add .` does to this work
# tree (cp -fr ./* into a fresh source directory; here with a stand-in
# build/ holding objects and an image, not the real one, to stay fast),
# then runs dkms.conf's POST_ADD in the copy as dkms does, and checks that
# only what builds dp.ko is left.  Also checks the script refuses a git
# work tree.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/dp-0.1
mkdir -p "$src" "$tmp/fake/build/6.1/src" "$tmp/fake/module"
touch "$tmp/fake/build/6.1/initramfs.cpio" "$tmp/fake/build/6.1/src/dp.ko" \
	"$tmp/fake/module/dp_main.o" "$tmp/fake/module/.dp_main.o.cmd"
for f in "$top"/*; do
	[ "$(basename "$f")" = build ] || cp -fr "$f" "$src/"
done
cp -fr "$tmp/fake/"* "$src/"
post_add=$(sed -n 's/^POST_ADD="\(.*\)"/\1/p' "$top/dkms.conf")
n=0 bad=0
t() { n=$((n + 1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; bad=1; fi; }
echo "TAP version 13"
echo "1..6"
t '[ -n "$post_add" ] && [ -x "$src/$post_add" ]' "dkms.conf names an executable POST_ADD ($post_add)"
(cd "$src" && "./$post_add")
t '[ $? -eq 0 ]' "POST_ADD ran in the copy"
left=$(cd "$src" && find . -type f | sort | sed 's|^\./||' | tr '\n' ' ')
t '[ ! -e "$src/build" ] && [ ! -e "$src/selftests" ] && [ ! -e "$src/libdp" ] && [ ! -e "$src/module/tests" ]' \
	"build/, selftests/, libdp/ and module/tests/ are gone"
t '! printf "%s\n" $left | grep -qv "^\(dkms.conf\|Kbuild\|module/.*\.[ch]\|uapi/linux/dp.h\|tools/dkms-post-add.sh\)$"' \
	"only dkms.conf, Kbuild, module/*.[ch], uapi and the script are left"
want=$(cd "$top" && ls module/*.c module/*.h module/nic/*.c module/nic/*.h | wc -l)
t '[ "$(cd "$src" && ls module/*.c module/*.h module/nic/*.c module/nic/*.h | wc -l)" -eq "$want" ]' \
	"every module source is kept ($want files)"
t '! (cd "$top" && "./$post_add") 2>/dev/null' "POST_ADD refuses to prune a git work tree"
[ $bad -eq 0 ] || echo "# left: $left"
exit $bad
