// SPDX-License-Identifier: GPL-2.0
/*
 * dpctl monitor against the real module: one monitor per node of the pair
 * (A's with -j, one JSON object per line; B's as text) sees
 *  - A's session to B open;
 *  - B restarting while A's message is unacknowledged (B out of reach, so
 *    its goodbye is lost, then bound again): A hears a RESET from the new
 *    incarnation, "peer restart" and "session reset ... ECONNRESET";
 *  - A restarting the same way: B hears a HELLO from A's new incarnation,
 *    "peer restart";
 *  - the NART entries deleted and set again, and A's NIC detached and
 *    attached again.
 * A peer that says goodbye (FIN, or RESET from the same incarnation) is no
 * restart: the first close's RESET is checked not to give one.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200

struct mon {
	pid_t pid;
	int fd;
	char buf[1 << 16];
	size_t len;
};

static struct mon ma, mb;

static void mon_start(struct mon *m, const char *ns, int json)
{
	int p[2];

	if (pipe(p))
		ktap_bail("pipe");
	m->pid = fork();
	if (m->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execlp(dpt_ip(), dpt_ip(), "netns", "exec", ns, "dpctl", json ? "-j" : "monitor",
		       json ? "monitor" : NULL, NULL);
		_exit(127);
	}
	close(p[1]);
	m->fd = p[0];
	fcntl(m->fd, F_SETFL, O_NONBLOCK);
}

/* Read what the monitor printed so far. */
static void mon_read(struct mon *m)
{
	ssize_t n;

	while (m->len < sizeof(m->buf) - 1 &&
	       (n = read(m->fd, m->buf + m->len, sizeof(m->buf) - 1 - m->len)) > 0)
		m->len += n;
	m->buf[m->len] = 0;
}

/* Whether a line of the monitor's output holds every string of @want. */
static int mon_has(struct mon *m, const char *const *want)
{
	char *copy, *line, *save = NULL;
	int i, ok = 0;

	mon_read(m);
	copy = strdup(m->buf);
	for (line = strtok_r(copy, "\n", &save); line && !ok;
	     line = strtok_r(NULL, "\n", &save)) {
		for (i = 0, ok = 1; want[i]; i++)
			ok &= strstr(line, want[i]) != NULL;
	}
	free(copy);
	return ok;
}

/* Wait (up to 10 s) for such a line. */
static int mon_wait(struct mon *m, const char *const *want)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (mon_has(m, want))
			return 1;
		dpt_sleep_ms(20);
	}
	return 0;
}

/* @route: " ROUTE" after the address (over myri: dpt.routea/b), or "" */
static int nart(const char *ns, const char *op, uint32_t nid, const uint8_t *mac,
		const char *route)
{
	if (!mac)
		return dpt_sh("%s netns exec %s dpctl nart %s %u", dpt_ip(), ns, op, nid);
	return dpt_sh("%s netns exec %s dpctl nart %s %u %02x:%02x:%02x:%02x:%02x:%02x%s",
		      dpt_ip(), ns, op, nid, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], route);
}

/* Both monitors listen: a NART entry set in each node shows in each. */
static void mon_ready(void)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 0x99 };
	int i, a = 0, b = 0;

	for (i = 0; i < 50 && !(a && b); i++) {
		nart(dpt.nsa, "add", 99, mac, "");
		nart(dpt.nsb, "add", 99, mac, "");
		a = mon_has(&ma, (const char *[]){ "\"nart\":\"set\"", "\"entry\":99", NULL });
		b = mon_has(&mb, (const char *[]){ "nart set", "entry 99 ", NULL });
		dpt_sleep_ms(200);
	}
	nart(dpt.nsa, "del", 99, NULL, "");
	nart(dpt.nsb, "del", 99, NULL, "");
	if (!(a && b))
		ktap_bail("monitors");
	ktap_ok(mon_wait(&mb, (const char *[]){ "nart del", "entry 99", NULL }),
		"B's monitor: nart set and nart del of an entry");
}

/* Send one message a -> b and read it at b. */
static int one(int a, int b)
{
	char in[16];

	return write(a, "hello", 5) == 5 && dpt_wait_readable(b, DPT_WAIT_MS) == 1 &&
	       read(b, in, sizeof(in)) == 5;
}

int main(void)
{
	char sa[64], sb[64], pa[64], pb[64], jna[64], jnb[64], jpa[64], jpb[64];
	char ea[32], idle[32];
	int a, b;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	signal(SIGPIPE, SIG_IGN);
	mon_start(&ma, dpt.nsa, 1);
	mon_start(&mb, dpt.nsb, 0);
	mon_ready();
	snprintf(sa, sizeof(sa), "nid %u dpid %u ", dpt.nida, DPID_A);
	snprintf(sb, sizeof(sb), "nid %u dpid %u ", dpt.nidb, DPID_B);
	snprintf(pa, sizeof(pa), "peer_nid %u peer_dpid %u", dpt.nida, DPID_A);
	snprintf(pb, sizeof(pb), "peer_nid %u peer_dpid %u", dpt.nidb, DPID_B);
	snprintf(jna, sizeof(jna), "\"nid\":%u,\"dpid\":%u,", dpt.nida, DPID_A);
	snprintf(jnb, sizeof(jnb), "\"nid\":%u,\"dpid\":%u,", dpt.nidb, DPID_B);
	snprintf(jpa, sizeof(jpa), "\"peer_nid\":%u,\"peer_dpid\":%u", dpt.nida, DPID_A);
	snprintf(jpb, sizeof(jpb), "\"peer_nid\":%u,\"peer_dpid\":%u", dpt.nidb, DPID_B);

	/* A keeps its credit while idle: its writes go without asking B */
	if (dpt_param("credit_idle_ms", "600000", idle, sizeof(idle)))
		ktap_bail("credit_idle_ms");
	dpt_pair(&a, DPID_A, &b, DPID_B);
	ktap_ok(one(a, b), "A sends to B");
	ktap_ok(mon_wait(&ma, (const char *[]){ "{\"session\":\"open\",", jna, jpb, NULL }),
		"A's monitor (-j): session open %s-> %s", jna, jpb);

	/* B closes in reach (its RESET says goodbye): a reset, no restart. */
	close(b);
	ktap_ok(mon_wait(&ma, (const char *[]){ "\"session\":\"reset\"", jna,
						"\"err\":\"ECONNRESET\"", NULL }),
		"B closes: A's monitor shows the session reset, ECONNRESET");
	b = dpt_ep(dpt.nsb, DPID_B, 0);
	if (b < 0)
		ktap_bail("bind B");
	write(a, "x", 1);	/* reports ECONNRESET */
	ktap_ok(one(a, b), "A sends to the new B");

	/* B restarts out of reach: its goodbye is lost. */
	if (nart(dpt.nsb, "del", dpt.nida, NULL, "") || write(a, "x", 1) != 1)
		ktap_bail("cut");
	close(b);
	b = dpt_ep(dpt.nsb, DPID_B, 0);
	if (b < 0 || nart(dpt.nsb, "add", dpt.nida, dpt.maca, dpt.routea))
		ktap_bail("restart B");
	snprintf(ea, sizeof(ea), "entry %u", dpt.nida);
	ktap_ok(mon_wait(&mb, (const char *[]){ "nart del", ea, NULL }) &&
		mon_wait(&mb, (const char *[]){ "nart set", ea, "lladdr", NULL }),
		"B's monitor: its NART entry for A deleted and set again");
	ktap_ok(mon_wait(&ma, (const char *[]){ "{\"peer\":\"restart\",", jna, jpb, NULL }),
		"B restarted: A's monitor shows peer restart");
	ktap_ok(!mon_has(&mb, (const char *[]){ "peer restart", NULL }),
		"no peer restart in B's monitor so far (A said nothing new)");

	/* A restarts out of reach: its FIN is lost, then a new HELLO. */
	write(a, "x", 1);	/* reports ECONNRESET */
	ktap_ok(one(a, b), "A sends to the restarted B");
	if (nart(dpt.nsa, "del", dpt.nidb, NULL, ""))
		ktap_bail("cut A");
	close(a);
	if (nart(dpt.nsa, "add", dpt.nidb, dpt.macb, dpt.routeb))
		ktap_bail("heal A");
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	if (a < 0 || dpt_connect(a, dpt.nidb, DPID_B))
		ktap_bail("restart A");
	ktap_ok(one(a, b), "the new A sends to B");
	ktap_ok(mon_wait(&mb, (const char *[]){ "peer restart ", sb, pa, NULL }),
		"A restarted: B's monitor shows peer restart %s%s", sb, pa);

	ktap_ok(!dpt_sh("%s netns exec %s dpctl node detach && %s netns exec %s dpctl node set dev %s%s%s",
			dpt_ip(), dpt.nsa, dpt_ip(), dpt.nsa, dpt.ifa,
			strcmp(dpt.backend, "netdev") ? " backend " : "",
			strcmp(dpt.backend, "netdev") ? dpt.backend : ""),
		"A's NIC detached and attached again");
	ktap_ok(mon_wait(&ma, (const char *[]){ "{\"nic\":\"detach\",", "\"ifname\":", NULL }) &&
		mon_wait(&ma, (const char *[]){ "{\"nic\":\"attach\",", "\"ifname\":", NULL }),
		"A's monitor: nic detach, nic attach");
	dpt_param("credit_idle_ms", idle, NULL, 0);
	if (ktap_failed) {
		mon_read(&ma);
		mon_read(&mb);
		ktap_diag("A's monitor:\n%s", ma.buf);
		ktap_diag("B's monitor:\n%s", mb.buf);
	}
	kill(ma.pid, SIGTERM);
	kill(mb.pid, SIGTERM);
	waitpid(ma.pid, NULL, 0);
	waitpid(mb.pid, NULL, 0);
	ktap_finish();
}
