#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# t_nic.sh del|add: take node A's NIC away and give it back, for dp_gone.
# With lib.sh's pair set up.  Over veth, del deletes the pair (B loses its
# end too) and add makes a new one and attaches both nodes to it; over dp's
# tulip driver (DPT_NIC=tulip), del unbinds A's PCI device through sysfs and
# add binds it back and attaches node A again; over dp's myri driver
# (DPT_NIC=myri) the same with A's LANai card.  Exit status only.
cd "$(dirname "$0")" || exit 1
. ./lib.sh
: >"$T/setup.log"

case ${1:-}.$DPT_NIC in
del.tulip)
	echo "$(basename "$DPT_SYSA")" >"$DPT_TULIP_DRV/unbind" ;;
add.tulip)
	echo "$(basename "$DPT_SYSA")" >"$DPT_TULIP_DRV/bind" &&
		x "$DPT_IP" netns exec "$DPT_NSA" dpctl node set dev "$DPT_IFA" backend tulip ;;
del.myri)
	echo "$(basename "$DPT_SYSA")" >"$DPT_MYRI_DRV/unbind" ;;
add.myri)
	echo "$(basename "$DPT_SYSA")" >"$DPT_MYRI_DRV/bind" &&
		x "$DPT_IP" netns exec "$DPT_NSA" dpctl node set dev "$DPT_IFA" backend myri ;;
del.*)
	x "$DPT_IP" -n "$DPT_NSA" link del "$DPT_IFA" ;;
add.*)
	x "$DPT_IP" link add "$DPT_IFA" netns "$DPT_NSA" type veth peer name "$DPT_IFB" netns "$DPT_NSB" &&
	x "$DPT_IP" -n "$DPT_NSA" link set "$DPT_IFA" address "$DPT_MACA" mtu 9000 up &&
	x "$DPT_IP" -n "$DPT_NSB" link set "$DPT_IFB" address "$DPT_MACB" mtu 9000 up &&
	x "$DPT_IP" netns exec "$DPT_NSA" dpctl node set dev "$DPT_IFA" &&
	x "$DPT_IP" netns exec "$DPT_NSB" dpctl node set dev "$DPT_IFB" ;;
*)
	echo "usage: t_nic.sh del|add" >&2
	exit 2 ;;
esac
st=$?
[ $st -eq 0 ] || sed 's/^/# /' "$T/setup.log"
exit $st
