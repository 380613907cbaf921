/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The backends built into dp.ko: each init registers its struct dp_backend
 * with dp_backend_register() and each exit unregisters it.  Only
 * nic/dp_nic.c includes this; nothing in the core names a backend.
 */
#ifndef _DP_BACKENDS_H
#define _DP_BACKENDS_H

/* nic/dp_netdev.c: any Linux Ethernet device */
int dp_netdev_init(void);
void dp_netdev_exit(void);
void dp_netdev_drain(void);

/* nic/dp_tulip.c: dp.ko as the DEC 21140/21143 PCI driver */
int dp_tulip_init(void);
void dp_tulip_exit(void);

/* nic/dp_myri.c: dp.ko as the driver of the (simulated) Myrinet LANai */
int dp_myri_init(void);
void dp_myri_exit(void);

#endif /* _DP_BACKENDS_H */
