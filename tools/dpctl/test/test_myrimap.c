// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of the mapper's search (../myrimap.c) against fabrics played
 * here: switches with absolute route bytes, as tools/myrisim routes them
 * (a byte names the output port; a packet whose route ends at a switch, or
 * names a port with no cable, is lost; one that reaches a NIC with route
 * bytes left is dropped there).  TAP output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../myrimap.h"

#define SW_MAX		8
#define PORTS		16
#define HOSTS_MAX	8

enum { NONE, HOST, SWITCH };

struct end {
	int kind;
	int id;			/* host or switch */
	int port;		/* the far switch's port */
};

struct fabric {
	int nsw, nhosts;
	int nports[SW_MAX];
	struct end port[SW_MAX][PORTS];
	int host_sw[HOSTS_MAX], host_port[HOSTS_MAX];
	uint32_t nid[HOSTS_MAX];
	int self;
	int cable_out;		/* every packet of the mapper's is lost */
	int lose_answers;	/* answers lost, the first ones */
	int lose_loops;		/* probes that came back lost, the first ones */
	int fail_at;		/* probe() fails on this call (from 1) */
	int calls;
	int max_batch;
	unsigned long answers;
};

static int tests, failed;

static void ok(int cond, const char *what)
{
	tests++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tests, what);
}

static void addr_of(int h, uint8_t *a)
{
	static const uint8_t oui[3] = { 0x00, 0x60, 0xdd };

	memcpy(a, oui, 3);
	a[3] = 0;
	a[4] = 0;
	a[5] = (uint8_t)h;
}

static void fab_init(struct fabric *f, int nsw, int nports)
{
	int s;

	memset(f, 0, sizeof(*f));
	f->nsw = nsw;
	for (s = 0; s < nsw; s++)
		f->nports[s] = nports;
}

static void host(struct fabric *f, int sw, int port)
{
	int h = f->nhosts++;

	f->host_sw[h] = sw;
	f->host_port[h] = port;
	f->nid[h] = (uint32_t)(100 + h);
	f->port[sw][port] = (struct end){ HOST, h, 0 };
}

static void link2(struct fabric *f, int a, int pa, int b, int pb)
{
	f->port[a][pa] = (struct end){ SWITCH, b, pb };
	f->port[b][pb] = (struct end){ SWITCH, a, pa };
}

/* Where a packet from host @from along @route ends: a host, or -1 (lost). */
static int walk(const struct fabric *f, int from, const uint8_t *route, size_t len)
{
	int sw = f->host_sw[from];
	size_t i;

	for (i = 0; i < len; i++) {
		int p = route[i] & 0x3f;
		const struct end *e;

		if (!(route[i] & 0x80) || p >= f->nports[sw])
			return -1;
		e = &f->port[sw][p];
		if (e->kind == NONE)
			return -1;
		if (e->kind == HOST)
			return i + 1 == len ? e->id : -1;
		sw = e->id;
	}
	return -1;	/* the route ended inside a switch */
}

static int fake_probe(void *arg, struct map_probe *p, size_t n)
{
	struct fabric *f = arg;
	size_t i;
	int d;

	if (++f->calls == f->fail_at)
		return -EIO;
	if ((int)n > f->max_batch)
		f->max_batch = (int)n;
	for (i = 0; i < n; i++) {
		p[i].answered = 0;
		if (f->cable_out)
			continue;
		d = walk(f, f->self, p[i].route, p[i].rlen);
		if (d < 0)
			continue;
		if (d == f->self && f->lose_loops > 0) {
			f->lose_loops--;
			continue;
		}
		if (d != f->self) {	/* a host answers along the return route */
			if (!p[i].blen || walk(f, d, p[i].back, p[i].blen) != f->self)
				continue;
			if (f->lose_answers > 0) {
				f->lose_answers--;
				continue;
			}
		}
		p[i].answered = 1;
		addr_of(d, p[i].addr);
		p[i].nid = f->nid[d];
		f->answers++;
	}
	return 0;
}

static int run(struct fabric *f, struct map *m, int self, unsigned int ports)
{
	memset(m, 0, sizeof(*m));
	f->self = self;
	addr_of(self, m->self);
	m->ports = ports;
	m->probe = fake_probe;
	m->arg = f;
	return map_run(m);
}

/* The route the mapper found to host @h, or NULL. */
static const struct map_host *found(const struct map *m, int h)
{
	uint8_t a[MAP_ADDR_LEN];
	size_t i;

	addr_of(h, a);
	for (i = 0; i < m->nhosts; i++)
		if (!memcmp(m->hosts[i].addr, a, MAP_ADDR_LEN))
			return &m->hosts[i];
	return NULL;
}

static int route_is(const struct map_host *h, const char *hex)
{
	char buf[3 * MAP_ROUTE_MAX + 1] = "";
	size_t i, n = 0;

	for (i = 0; h && i < h->rlen; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%02x", i ? ":" : "",
				      h->route[i]);
	if (!h || strcmp(buf, hex))
		printf("# route %s, want %s\n", h ? buf : "(not found)", hex);
	return h && !strcmp(buf, hex);
}

/* Every host but @self found once, with its NID, on a route that reaches it. */
static int all_found(const struct fabric *f, const struct map *m)
{
	int h, good = 1;

	for (h = 0; h < f->nhosts; h++) {
		const struct map_host *e = found(m, h);

		if (h == f->self)
			continue;
		if (!e || e->nid != f->nid[h] || walk(f, f->self, e->route, e->rlen) != h) {
			printf("# host %d: %s\n", h, e ? "wrong NID or route" : "not found");
			good = 0;
		}
	}
	return good && (int)m->nhosts == f->nhosts - 1 && !found(m, f->self);
}

/* myrisim's "default": 2 switches of 8 ports, h0 h1 on s0, h2 h3 on s1. */
static void fab_default(struct fabric *f)
{
	fab_init(f, 2, 8);
	host(f, 0, 0);
	host(f, 0, 1);
	host(f, 1, 0);
	host(f, 1, 1);
	link2(f, 0, 7, 1, 7);
}

static void test_default(void)
{
	static struct map m;
	struct fabric f;

	fab_default(&f);
	ok(run(&f, &m, 0, 16) == 0, "default from h0: maps");
	ok(m.self_port == 0, "default from h0: own port 0");
	ok(all_found(&f, &m), "default from h0: h1 h2 h3, NIDs, routes that reach them");
	ok(route_is(found(&m, 1), "81") && route_is(found(&m, 2), "87:80") &&
	   route_is(found(&m, 3), "87:81"), "default from h0: routes as myrisim -r");
	ok(m.nsw == 2 && m.sw[1].toward_home == 1ull << 7, "default from h0: 2 switches, s1 reached on port 7");
	ok(f.max_batch <= MAP_BATCH, "at most MAP_BATCH probes per call");
	ok(!m.truncated, "nothing truncated");

	fab_default(&f);
	ok(run(&f, &m, 3, 16) == 0 && all_found(&f, &m) && route_is(found(&m, 2), "80") &&
	   route_is(found(&m, 0), "87:80") && route_is(found(&m, 1), "87:81"),
	   "default from h3: h0 h1 h2 with their routes");
	fab_default(&f);
	ok(run(&f, &m, 0, 8) == 0 && all_found(&f, &m), "default probing 8 ports: the same");
}

static void test_one(void)
{
	static struct map m;
	struct fabric f;

	fab_init(&f, 1, 8);
	host(&f, 0, 0);
	host(&f, 0, 1);
	ok(run(&f, &m, 1, 16) == 0 && all_found(&f, &m) && route_is(found(&m, 0), "80") &&
	   m.nsw == 1 && m.self_port == 1, "one switch: the other host, one switch");
}

/* s0 - s1 - s2 in a line, no host on s1; hosts on ports above 8. */
static void test_chain(void)
{
	static struct map m;
	struct fabric f;

	fab_init(&f, 3, 16);
	host(&f, 0, 3);
	host(&f, 2, 12);
	host(&f, 2, 15);
	link2(&f, 0, 9, 1, 2);
	link2(&f, 1, 5, 2, 0);
	ok(run(&f, &m, 0, 16) == 0 && all_found(&f, &m) && route_is(found(&m, 1), "89:85:8c") &&
	   route_is(found(&m, 2), "89:85:8f") && m.nsw == 3,
	   "a chain of 3 switches, none on the middle one: 3 hops");
}

/* A ring of 3 switches, a host on each: shortest routes, and it ends. */
static void test_ring(void)
{
	static struct map m;
	struct fabric f;

	fab_init(&f, 3, 8);
	host(&f, 0, 0);
	host(&f, 1, 0);
	host(&f, 2, 0);
	link2(&f, 0, 1, 1, 2);
	link2(&f, 1, 1, 2, 2);
	link2(&f, 2, 1, 0, 2);
	ok(run(&f, &m, 0, 8) == 0 && all_found(&f, &m) && route_is(found(&m, 1), "81:80") &&
	   route_is(found(&m, 2), "82:80"), "a ring of 3 switches: every host, one hop away");
	ok(m.nsw < MAP_SWITCHES_MAX && !m.truncated, "a ring: switches seen again are known by their hosts");
}

/* Two hostless switches joined twice: explored until routes are too long. */
static void test_hostless_loop(void)
{
	static struct map m;
	struct fabric f;

	fab_init(&f, 3, 8);
	host(&f, 0, 0);
	host(&f, 2, 4);
	link2(&f, 0, 1, 1, 0);
	link2(&f, 1, 1, 2, 0);
	link2(&f, 1, 2, 2, 1);
	ok(run(&f, &m, 0, 8) == 0 && all_found(&f, &m) && route_is(found(&m, 1), "81:81:84"),
	   "parallel links between switches: the host behind them, the first route");
	ok(m.probes < 200000, "parallel links: the search ends");
}

static void test_faults(void)
{
	static struct map m;
	struct fabric f;

	fab_default(&f);
	f.cable_out = 1;
	ok(run(&f, &m, 0, 16) == -ENOENT && m.nhosts == 0, "cable out: -ENOENT, no hosts");

	fab_default(&f);
	f.lose_answers = 1;
	ok(run(&f, &m, 0, 16) == 0 && all_found(&f, &m),
	   "the first answer lost: found on the second try");

	fab_default(&f);
	f.lose_loops = 1;
	ok(run(&f, &m, 0, 16) == 0 && m.self_port == 0 && all_found(&f, &m),
	   "the first probe back lost: the own port found on the second try");

	fab_default(&f);
	f.fail_at = 3;
	ok(run(&f, &m, 0, 16) == -EIO, "a probe call's error is returned");

	fab_default(&f);
	ok(run(&f, &m, 0, 0) == -EINVAL && run(&f, &m, 0, 65) == -EINVAL,
	   "0 or 65 ports: -EINVAL");

	fab_default(&f);
	ok(run(&f, &m, 0, 64) == 0 && all_found(&f, &m), "64 ports probed: the same hosts");
}

int main(void)
{
	printf("TAP version 13\n");
	test_default();
	test_one();
	test_chain();
	test_ring();
	test_hostless_loop();
	test_faults();
	printf("1..%d\n", tests);
	return failed ? 1 : 0;
}
