/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the dp selftest programs: the two-node setup made by
 * lib.sh (two network namespaces joined by a veth pair), endpoints through
 * the raw uapi ioctls, the read-only pool, bounded waits, child processes.
 *
 * Environment (set by the runners, defaults in brackets): DPT_NSA [dpA],
 * DPT_NSB [dpB], DPT_NIDA [11], DPT_NIDB [12], DPT_IFA [vethA], DPT_IFB
 * [vethB], DPT_MACA [02:00:00:00:00:0b], DPT_MACB [02:00:00:00:00:0c],
 * DPT_RAWNS [DPT_NSB] and DPT_RAWIF [DPT_IFB]: a Linux netdev on the wire
 * to node A, for forging frames (over the tulip backend, a third NIC on the
 * tulips' hub, since dp's tulips are no netdevs).  DPT_BACKEND [netdev]:
 * the backend A and B are attached with (netdev, tulip or myri).
 * DPT_ROUTEA and DPT_ROUTEB [none]: over the myri backend, the source route
 * to A's and to B's card, which a NART entry holds beside the NIC address.
 */
#ifndef _DPTEST_H
#define _DPTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/dp.h>	/* dp's uapi/ (-I, selftests/dp/Makefile) */

/* Bound for any wait for a message or a counter: never hang. */
#define DPT_WAIT_MS	10000

struct dpt_env {
	const char *nsa, *nsb;
	uint32_t nida, nidb;
	const char *ifa, *ifb;
	uint8_t maca[6], macb[6];
	const char *rawns, *rawif;
	const char *backend;
	/* " ROUTE" or "": what dpctl nart add takes after the address */
	char routea[64], routeb[64];
};

extern struct dpt_env dpt;

/* Reads the environment; returns -1 (with a diagnostic) on bad values. */
int dpt_init(void);
/* Enter a named network namespace ("" or NULL: stay); 0 or -1. */
int dpt_ns(const char *name);
/* Let unprivileged users create user namespaces (a Debian knob; best effort). */
void dpt_allow_userns(void);

/* open("/dev/dp"); -1 on error. */
int dpt_open(void);
/* DP_IOC_BIND; returns 0 or -1 with errno. */
int dpt_bind(int fd, uint32_t dpid, uint32_t pool_size);
/* Enter ns, open and bind: the fd, or -1 with errno. */
int dpt_ep(const char *ns, uint32_t dpid, uint32_t pool_size);
/* dpt_ep() with dp_bind.flags (DP_ADMIT_*, DP_BIND_RAW). */
int dpt_ep_flags(const char *ns, uint32_t dpid, uint32_t pool_size, uint32_t flags);
int dpt_connect(int fd, uint32_t nid, uint32_t dpid);
/*
 * The usual two-node start: *b bound to dpid_b in node B, *a bound to
 * dpid_a in node A and connected to B.  Bails out of the test on failure.
 */
void dpt_pair(int *a, uint32_t dpid_a, int *b, uint32_t dpid_b);
/*
 * MTU of the link dp uses as ifname in namespace ns (NULL: the current
 * one), or -1: a netdev's MTU, or for dp's own tulips (tulipN, no netdev)
 * the chip's standard Ethernet payload of 1500 bytes, for its LANai cards
 * (myriN) the Myrinet MTU of 8192 bytes.
 */
int dpt_if_mtu(const char *ns, const char *ifname);
int dpt_info(int fd, struct dp_info *info);
/* Set the MTU of a netdev in @ns (SIOCSIFMTU); 0 or -1. */
int dpt_if_set_mtu(const char *ns, const char *ifname, int mtu);
int dpt_stats(int fd, struct dp_ep_stats *st);
/*
 * Wait up to @ms until everything @fd sent is acknowledged (tx_unacked 0);
 * its stats, as last read, into @st.  0 once drained, else -1.
 */
int dpt_wait_acked(int fd, int ms, struct dp_ep_stats *st);
/* Node counter of namespace ns (enters ns); UINT64_MAX on error. */
uint64_t dpt_ctr(const char *ns, unsigned int ctr);
/* All node counters of ns; 0 or -1. */
int dpt_node_stats(const char *ns, struct dp_node_stats *st);
uint32_t dpt_release(int fd, uint32_t n);

/* The pool of a bound endpoint, mapped read-only. */
struct dpt_pool {
	void *map;
	size_t len;
	const struct dp_pool_ctrl *ctrl;
	const uint8_t *data;
};
int dpt_map(int fd, struct dpt_pool *p);
void dpt_unmap(struct dpt_pool *p);
/* Head token (prod loaded with acquire), NULL when empty. */
const struct dp_token *dpt_head(const struct dpt_pool *p);

/* Wait up to ms for POLLIN; 1 readable, 0 timeout, -1 error. */
int dpt_wait_readable(int fd, int ms);
/* Wait up to ms until the endpoint's rx_msgs + rx_drop_full >= n. */
int dpt_wait_arrivals(int fd, uint64_t n, int ms);
/* Wait up to ms until counter ctr of ns reaches at least v; returns it. */
uint64_t dpt_wait_ctr(const char *ns, unsigned int ctr, uint64_t v, int ms);

void dpt_random(void *buf, size_t n);
void dpt_sleep_ms(int ms);
/* fork(); the child gets SIGKILL when the parent dies. */
pid_t dpt_fork(void);
/* waitpid with a bound: the status, or -1 (child killed) on timeout. */
int dpt_wait_child(pid_t pid, int ms);
/*
 * Wait up to ms until process pid sleeps (state S) inside one of the system
 * calls nrs[0..n-1] (/proc/PID/syscall): a handshake with a process that
 * must be blocked before the test goes on.  1 if seen, else 0; what names
 * its last state and system call either way.
 */
int dpt_wait_blocked(pid_t pid, const long *nrs, int n, int ms, char *what, size_t wlen);
/* The ip(8) the harness names (DPT_IP, if set and not empty), else "ip". */
const char *dpt_ip(void);
/* Run a shell command; returns its exit status. */
int dpt_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Run a shell command and keep each line it prints (stdout and stderr) as a
 * "#   " diagnostic, in order with the results (ktap_diag()); at most 120.
 */
void dpt_sh_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Field @key ("taken", "open", "queued", ...) of endpoint @dpid's line in
 * `dpctl ep` run in namespace @ns (NULL or "": the test's own), or -1.
 */
long dpt_ep_field(const char *ns, uint32_t dpid, const char *key);
/* Both nodes' dpctl ep and non-zero dpctl stats, as "#   " diagnostics. */
void dpt_show_sessions(void);
/*
 * Counter @name of the NIC dp drives at sysfs directory @dir ("name value"
 * lines of @dir/dp_stats, as dp's tulip writes them), or -1.
 */
long dpt_sysfs_stat(const char *dir, const char *name);
/*
 * Link frames the NIC dp uses as @ifname in namespace @ns has received
 * (@rx) or sent: a netdev's packets (/proc/net/dev, read in @ns); for
 * dp's own tulip or LANai card, whose PCI device is at sysfs directory
 * @sys (DPT_SYSA, DPT_SYSB), its dp_stats rx_frames or tx_frames
 * (tulip), rx_packets or tx_packets (myri); -1 if none can be read.
 */
long dpt_if_frames(const char *ns, const char *ifname, const char *sys, int rx);
/* Module parameter @name of dp: read into @old (if not NULL), then set @val. */
int dpt_param(const char *name, const char *val, char *old, size_t len);
/* Name of a counter, for diagnostics. */
const char *dpt_ctr_name(unsigned int ctr);
/* Whether node counter i is a drop counter (its name has _drop_). */
int dpt_ctr_is_drop(unsigned int i);
#define DPT_TRACEFS "/sys/kernel/tracing"
/* Mount tracefs at DPT_TRACEFS unless it is there. */
void dpt_tracefs_mount(void);
/* Write @val to tracefs file @file (a path under DPT_TRACEFS); 0 or -1. */
int dpt_tracefs_write(const char *file, const char *val);
/* Empty the trace buffer and start recording; 0 or -1. */
int dpt_tracefs_start(void);
/*
 * dp's trace event @ev (docs/trace.md) on (the trace buffer emptied
 * first, tracefs mounted if need be) or off; 0 or -1.
 */
int dpt_trace(const char *ev, int on);
/* Print the recorded events @ev as KTAP diagnostics after @prefix; how many. */
unsigned int dpt_trace_diag(const char *ev, const char *prefix);
/*
 * The same for those of @ev whose line does not hold @like (NULL: all);
 * how many (1 if the trace cannot be read and @like is given).
 */
unsigned int dpt_trace_unlike(const char *ev, const char *like, const char *prefix);

#endif /* _DPTEST_H */
