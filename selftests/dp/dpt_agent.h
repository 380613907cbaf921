/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test agents: child processes that act as another user in a given node,
 * driven by the test (root) over a socketpair, one request at a time.  The
 * multi-user tests (users, admit, quota, privdpid, fair) read as scripts:
 *
 *	dpt_agent_start(&alice, dpt.nsa, 1001, 0);
 *	ep = dpt_a_bind(&alice, 3001, 0, DP_ADMIT_ANY);
 *	KTAP_ERRNO(dpt_a_bind(&bob, 3001, 0, 0), EADDRINUSE, ...);
 *
 * Every call returns the agent's result (>= 0) or -1 with errno set to the
 * agent's errno.  Endpoints and other fds live in the agent as small
 * "slots".  Replies are awaited with a bound (never hang); an agent dies
 * with the test (PR_SET_PDEATHSIG).  Only the test process prints KTAP.
 */
#ifndef _DPT_AGENT_H
#define _DPT_AGENT_H

#include <stdint.h>
#include <sys/types.h>
#include <linux/dp.h>	/* dp's uapi/ (-I, selftests/dp/Makefile) */

struct dpt_agent {
	pid_t pid;
	int sock;
	uid_t uid;
	const char *name;	/* for diagnostics */
};

/*
 * Fork an agent that enters network namespace ns (a name under /run/netns,
 * or "init"), then, if uid != 0, becomes uid/gid uid with no supplementary
 * groups, keeping the capabilities in keep_caps (1ull << CAP_*) effective.
 * Returns 0, or -1 (diagnostic printed).
 */
int dpt_agent_start(struct dpt_agent *ag, const char *name, const char *ns, uid_t uid,
		    uint64_t keep_caps);
/* Kill the agent and reap it. */
void dpt_agent_stop(struct dpt_agent *ag);

/* Endpoints.  The payload of dpt_a_write() is a pattern named by seed. */
int dpt_a_bind(struct dpt_agent *ag, uint32_t dpid, uint32_t pool, uint32_t admit);
int dpt_a_connect(struct dpt_agent *ag, int slot, uint32_t nid, uint32_t dpid);
int dpt_a_disconnect(struct dpt_agent *ag, int slot, uint32_t nid, uint32_t dpid);
long dpt_a_write(struct dpt_agent *ag, int slot, uint32_t len, uint32_t seed);
int dpt_a_info(struct dpt_agent *ag, int slot, struct dp_info *info);
int dpt_a_stats(struct dpt_agent *ag, int slot, struct dp_ep_stats *st);
/* Wait up to ms for a message: 1 readable, 0 not. */
int dpt_a_wait(struct dpt_agent *ag, int slot, int ms);

/* The head message, read in the agent's read-only mapping of the pool. */
struct dpt_head {
	struct dp_token tok;
	uint32_t seed;		/* the writer's seed */
	int intact;		/* the bytes are the seed's pattern */
};
/* 1 and *h if a message is queued, 0 if none. */
int dpt_a_head(struct dpt_agent *ag, int slot, struct dpt_head *h);
int dpt_a_release(struct dpt_agent *ag, int slot, uint32_t n);
int dpt_a_close(struct dpt_agent *ag, int slot);
/* mmap(PROT_READ, MAP_SHARED) of the slot's map_size (or a page), unmapped again. */
int dpt_a_mmap(struct dpt_agent *ag, int slot);

/* Reaching other processes' fds and memory. */
int dpt_a_open(struct dpt_agent *ag, const char *path, int flags);
int dpt_a_pidfd_getfd(struct dpt_agent *ag, pid_t pid, int fd);
int dpt_a_ptrace_attach(struct dpt_agent *ag, pid_t pid);
/* The agent's fd number of a slot (for /proc/PID/fd/N). */
int dpt_a_fdnum(struct dpt_agent *ag, int slot);
/* SCM_RIGHTS: a copy of the slot's fd in the caller, and back into an agent. */
int dpt_a_give(struct dpt_agent *ag, int slot);
int dpt_a_take(struct dpt_agent *ag, int fd);

/* Limits. */
int dpt_a_memlock(struct dpt_agent *ag, uint64_t bytes);
/* VmPin of the agent in kB, from /proc/self/status. */
long dpt_a_vmpin(struct dpt_agent *ag);

/*
 * User namespaces: a new one in which the agent is uid 0, mapped to its
 * uid outside (and gid likewise); with netns, also a new network namespace
 * (a node the agent's namespace owns).
 */
int dpt_a_userns(struct dpt_agent *ag, int netns);
/*
 * A new user namespace with no maps yet: the test (root) writes the
 * agent's /proc/PID/uid_map and gid_map, which may map many uids.  Then
 * dpt_a_seteuid() makes the agent act as one of them (uid in the
 * namespace; its later binds are that uid's), keeping its endpoints.
 */
int dpt_a_unshare_user(struct dpt_agent *ag);
int dpt_a_seteuid(struct dpt_agent *ag, uid_t uid);
/* Run a shell command in the agent; its exit status. */
int dpt_a_sh(struct dpt_agent *ag, const char *cmd);

/*
 * Traffic, asynchronous: start with dpt_a_*_start(), do other things, then
 * collect the result with dpt_a_result() (up to ms).
 * flood: write len-byte messages until dpt_a_flood_stop(); result is the
 * count written, and dpt_a_result's *err2 the number of failed writes.
 * echo: n times, wait up to ms for a message and write it back on the
 * current edge; result is the count echoed.  ping: n times, write a len-byte
 * message and wait up to ms for the reply with the same bytes; result is
 * the count of good round trips.
 */
int dpt_a_flood_start(struct dpt_agent *ag, int slot, uint32_t len);
int dpt_a_flood_stop(struct dpt_agent *ag);
int dpt_a_echo_start(struct dpt_agent *ag, int slot, uint32_t n, int ms);
int dpt_a_ping_start(struct dpt_agent *ag, int slot, uint32_t n, uint32_t len, int ms);
long dpt_a_result(struct dpt_agent *ag, int ms, long *err2);

/* The pattern dpt_a_write() sends: 4 bytes of seed, then bytes from it. */
void dpt_pattern(uint8_t *buf, uint32_t len, uint32_t seed);
/* Whether buf holds the pattern of the seed in its first 4 bytes. */
int dpt_pattern_ok(const uint8_t *buf, uint32_t len, uint32_t *seed);

#endif /* _DPT_AGENT_H */
