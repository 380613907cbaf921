// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-guest exchange (run by run_cluster.sh in every guest after dp-load):
 * every node binds DPID 200 and exchanges a request/response with every
 * other node in /etc/dp/cluster.  Requests are repeated until answered
 * (v1 delivery is unreliable), bounded in time; each node keeps answering
 * until every guest has passed barrier BARRIER (dp-barrier), so nobody
 * waits for a peer that stopped early.  Checks content and the token's
 * source fields.  Usage: dp_cluster [BARRIER [SECONDS]]; $DPT_CLUSTER names
 * another file of NIDs (a node's NART found by discovery has no file).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"
#include "dp.h"	/* libdp's (-I, Makefile) */

#define DPID 200
#define MAXN 64
#define BODY 700
#define MAGIC 0x44504331u	/* "DPC1" */
#define REQ 1
#define RESP 2

struct xmsg {
	uint32_t magic, kind, from, to;
	uint64_t nonce;
	uint8_t body[BODY];
};

struct peer {
	uint32_t nid;
	uint64_t nonce;		/* of our request to it */
	int got_req, got_resp, bad;
};

static struct peer peers[MAXN];
static int npeers;
static uint32_t me;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void body(uint8_t *b, uint64_t nonce)
{
	uint64_t x = nonce | 1;
	int i;

	for (i = 0; i < BODY; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)x;
	}
}

static struct peer *peer_of(uint32_t nid)
{
	int i;

	for (i = 0; i < npeers; i++)
		if (peers[i].nid == nid)
			return &peers[i];
	return NULL;
}

static int load_cluster(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned int nid;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && npeers < MAXN)
		if (sscanf(line, "%u", &nid) == 1 && nid && nid != me)
			peers[npeers++].nid = nid;
	fclose(f);
	return 0;
}

static void send_to(int fd, uint32_t nid, uint32_t kind, uint64_t nonce)
{
	struct xmsg m;

	m.magic = MAGIC;
	m.kind = kind;
	m.from = me;
	m.to = nid;
	m.nonce = nonce;
	body(m.body, nonce);
	if (dp_send(fd, nid, DPID, &m, sizeof(m)) != (ssize_t)sizeof(m))
		ktap_diag("send %s to %u: %s", kind == REQ ? "request" : "response", nid,
			  strerror(errno));
}

/* Handle every queued message; returns -1 on a broken pool. */
static int serve(int fd)
{
	static uint8_t expect[BODY];
	char *addr;
	ssize_t n;

	while ((n = dp_read(fd, &addr)) > 0) {
		const struct dp_token *t = dp_token_of(fd, addr);
		struct xmsg m;
		struct peer *p;

		memset(&m, 0, sizeof(m));
		memcpy(&m, addr, (size_t)n < sizeof(m) ? (size_t)n : sizeof(m));
		p = t ? peer_of(t->src_nid) : NULL;
		if (!t || !p || n != sizeof(m) || m.magic != MAGIC || m.from != t->src_nid ||
		    t->src_dpid != DPID || m.to != me) {
			ktap_diag("bad message: len %zd src %u/%u magic %#x from %u to %u",
				  n, t ? t->src_nid : 0, t ? t->src_dpid : 0, m.magic, m.from, m.to);
			if (p)
				p->bad++;
		} else {
			body(expect, m.nonce);
			if (memcmp(m.body, expect, BODY)) {
				ktap_diag("corrupt body from %u", m.from);
				p->bad++;
			} else if (m.kind == REQ) {
				p->got_req++;
				send_to(fd, p->nid, RESP, m.nonce);
			} else if (m.kind == RESP && m.nonce == p->nonce) {
				p->got_resp++;
			} else {
				ktap_diag("unexpected kind %u / nonce from %u", m.kind, m.from);
				p->bad++;
			}
		}
		if (dp_fsync(fd, 1) != 1)
			return -1;
	}
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *barrier = argc > 1 ? argv[1] : NULL;
	const char *cluster = getenv("DPT_CLUSTER") ? getenv("DPT_CLUSTER") : "/etc/dp/cluster";
	int secs = argc > 2 ? atoi(argv[2]) : 90;
	uint64_t start, last = 0;
	pid_t bpid = -1;
	int fd, i, answered, bstatus = -1;

	ktap_start();
	me = (uint32_t)strtoul(getenv("DP_NID") ? getenv("DP_NID") : "0", NULL, 0);
	if (!me || load_cluster(cluster))
		ktap_exit_skip("no DP_NID or cluster file");
	if (!npeers)
		ktap_exit_skip("no other node in the cluster file");
	fd = dp_open(DPID);
	if (!KTAP_SUCCESS(fd, "node %u binds DPID %d", me, DPID))
		ktap_finish();
	for (i = 0; i < npeers; i++) {
		dpt_random(&peers[i].nonce, sizeof(peers[i].nonce));
		if (dp_connect(fd, peers[i].nid, DPID))
			ktap_diag("connect %u: %s", peers[i].nid, strerror(errno));
	}
	start = now_ms();
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		answered = 0;
		for (i = 0; i < npeers; i++)
			answered += peers[i].got_resp > 0;
		if (now_ms() - last >= 250 && now_ms() - start < (uint64_t)secs * 1000) {
			for (i = 0; i < npeers; i++)
				if (!peers[i].got_resp)
					send_to(fd, peers[i].nid, REQ, peers[i].nonce);
			last = now_ms();
		}
		/* Done (or out of time): join the barrier, serving meanwhile. */
		if (bpid < 0 && (answered == npeers || now_ms() - start >= (uint64_t)secs * 1000)) {
			if (!barrier)
				break;
			bpid = dpt_fork();
			if (bpid == 0) {
				execlp("dp-barrier", "dp-barrier", barrier, "300", (char *)NULL);
				_exit(127);
			}
		}
		if (bpid > 0 && waitpid(bpid, &bstatus, WNOHANG) == bpid)
			break;
		poll(&pfd, 1, 50);
		if (serve(fd)) {
			ktap_diag("dp_read failed: %s", strerror(errno));
			break;
		}
	}
	for (i = 0; i < npeers; i++) {
		ktap_ok(peers[i].got_resp > 0, "node %u answered our request", peers[i].nid);
		ktap_ok(peers[i].got_req > 0, "node %u sent us a request", peers[i].nid);
		ktap_ok(!peers[i].bad, "no bad message from node %u (%d)", peers[i].nid,
			peers[i].bad);
	}
	if (barrier)
		ktap_ok(bstatus != -1 && WIFEXITED(bstatus) && WEXITSTATUS(bstatus) == 0,
			"barrier %s passed", barrier);
	KTAP_SUCCESS(dp_close(fd), "close");
	ktap_finish();
}
