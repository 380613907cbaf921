// SPDX-License-Identifier: GPL-2.0
/*
 * The Myrinet mapper's search: see myrimap.h.  No netlink here: probes go
 * through m->probe, so the unit test plays the fabric.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "myrimap.h"

#define ROUTE_BIT	0x80

/* One probe to send, and what it is for. */
struct job {
	struct map_probe p;
	int port;		/* p of the switch probed */
	int q;			/* loop probes: the port of the switch behind p */
};

struct jobs {
	struct job *v;
	size_t n;
};

static int jobs_add(struct jobs *j, size_t cap)
{
	if (j->n == cap)
		return -1;
	memset(&j->v[j->n], 0, sizeof(j->v[j->n]));
	return (int)j->n++;
}

/* Send every job's probe, MAP_BATCH at a time. */
static int jobs_run(struct map *m, struct jobs *j)
{
	size_t i, k, n;
	struct map_probe b[MAP_BATCH];
	int err;

	for (i = 0; i < j->n; i += n) {
		n = j->n - i < MAP_BATCH ? j->n - i : MAP_BATCH;
		for (k = 0; k < n; k++) {
			b[k] = j->v[i + k].p;
			b[k].answered = 0;
		}
		err = m->probe(m->arg, b, n);
		if (err)
			return err;
		m->probes += n;
		for (k = 0; k < n; k++)
			j->v[i + k].p = b[k];
	}
	return 0;
}

/* @a then @b into @out; 0 if the result would be over MAP_ROUTE_MAX. */
static int route_cat(uint8_t *out, uint8_t *olen, const uint8_t *a, size_t alen,
		     const uint8_t *b, size_t blen)
{
	if (alen + blen > MAP_ROUTE_MAX)
		return 0;
	memcpy(out, a, alen);
	memcpy(out + alen, b, blen);
	*olen = (uint8_t)(alen + blen);
	return 1;
}

static int is_self(const struct map *m, const uint8_t *addr)
{
	return !memcmp(addr, m->self, MAP_ADDR_LEN);
}

static struct map_host *host_find(struct map *m, const uint8_t *addr)
{
	size_t i;

	for (i = 0; i < m->nhosts; i++)
		if (!memcmp(m->hosts[i].addr, addr, MAP_ADDR_LEN))
			return &m->hosts[i];
	return NULL;
}

/* A host answered at @route: the first route found to it stays. */
static void host_add(struct map *m, const struct map_probe *p)
{
	struct map_host *h;

	if (is_self(m, p->addr) || host_find(m, p->addr))
		return;
	if (m->nhosts == MAP_HOSTS_MAX) {
		m->truncated = 1;
		return;
	}
	h = &m->hosts[m->nhosts++];
	memcpy(h->addr, p->addr, MAP_ADDR_LEN);
	h->nid = p->nid;
	h->rlen = p->rlen;
	memcpy(h->route, p->route, p->rlen);
}

/* Step 1: the loop probes [p]; the mapper's own port, or -ENOENT. */
static int find_self_once(struct map *m)
{
	struct job v[MAP_PORTS_MAX];
	struct jobs j = { v, 0 };
	unsigned int p;
	int i, err;

	for (p = 0; p < m->ports; p++) {
		i = jobs_add(&j, MAP_PORTS_MAX);
		j.v[i].p.rlen = 1;
		j.v[i].p.route[0] = (uint8_t)(ROUTE_BIT | p);
		j.v[i].port = (int)p;
	}
	err = jobs_run(m, &j);
	if (err)
		return err;
	for (i = 0; i < (int)j.n; i++)
		if (j.v[i].p.answered && is_self(m, j.v[i].p.addr))
			return j.v[i].port;
	return -ENOENT;
}

/* Twice if need be: one lost probe must not end the search. */
static int find_self(struct map *m)
{
	int port = find_self_once(m);

	return port == -ENOENT ? find_self_once(m) : port;
}

/* Host probes on X's ports not yet answered (@tries rounds): the hosts on X. */
static int probe_hosts(struct map *m, struct map_switch *x, int tries)
{
	struct job v[MAP_PORTS_MAX];
	struct jobs j = { v, 0 };
	uint8_t hop;
	unsigned int p;
	int i, err;

	for (p = 0; p < m->ports; p++) {
		if ((x->toward_home | x->host_ports) >> p & 1)
			continue;
		i = jobs_add(&j, MAP_PORTS_MAX);
		hop = (uint8_t)(ROUTE_BIT | p);
		if (!route_cat(j.v[i].p.route, &j.v[i].p.rlen, x->fwd, x->flen, &hop, 1)) {
			m->truncated = 1;
			return 0;
		}
		j.v[i].p.blen = x->blen;
		memcpy(j.v[i].p.back, x->back, x->blen);
		j.v[i].port = (int)p;
	}
	err = jobs_run(m, &j);
	for (i = 0; !err && i < (int)j.n; i++) {
		if (!j.v[i].p.answered)
			continue;
		x->host_ports |= 1ull << j.v[i].port;
		memcpy(x->host_addr[j.v[i].port], j.v[i].p.addr, MAP_ADDR_LEN);
		host_add(m, &j.v[i].p);
	}
	if (!err && tries > 1 && j.n)
		return probe_hosts(m, x, tries - 1);
	return err;
}

/* Whether X is a switch found before: the same hosts on the same ports. */
static int same_switch(const struct map *m, size_t xi)
{
	const struct map_switch *x = &m->sw[xi];
	unsigned int p;
	size_t i;

	if (!x->host_ports)
		return -1;
	for (i = 0; i < xi; i++) {
		const struct map_switch *y = &m->sw[i];

		if (y->same_as >= 0 || y->host_ports != x->host_ports)
			continue;
		for (p = 0; p < m->ports; p++)
			if ((x->host_ports >> p & 1) &&
			    memcmp(x->host_addr[p], y->host_addr[p], MAP_ADDR_LEN))
				break;
		if (p == m->ports)
			return (int)i;
	}
	return -1;
}

/* A switch Y behind X's port @p, reached on the ports of @qmask. */
static void switch_add(struct map *m, const struct map_switch *x, int p, uint64_t qmask)
{
	struct map_switch *y;
	uint8_t hop = (uint8_t)(ROUTE_BIT | p);
	int q = 0;

	if (m->nsw == MAP_SWITCHES_MAX) {
		m->truncated = 1;
		return;
	}
	while (!(qmask >> q & 1))
		q++;
	y = &m->sw[m->nsw];
	memset(y, 0, sizeof(*y));
	y->same_as = -1;
	y->toward_home = qmask;
	if (!route_cat(y->fwd, &y->flen, x->fwd, x->flen, &hop, 1))
		return;
	hop = (uint8_t)(ROUTE_BIT | q);
	if (!route_cat(y->back, &y->blen, &hop, 1, x->back, x->blen))
		return;
	m->nsw++;
}

/* Loop probes F+[p, q]+B on X's ports with no host: the switches behind. */
static int probe_switches(struct map *m, size_t xi)
{
	struct map_switch *x = &m->sw[xi];
	struct jobs j = { NULL, 0 };
	size_t cap = (size_t)m->ports * m->ports;
	uint64_t qmask[MAP_PORTS_MAX] = { 0 };
	uint8_t hops[2];
	unsigned int p, q;
	int i, err;

	j.v = calloc(cap, sizeof(*j.v));
	if (!j.v)
		return -ENOMEM;
	for (p = 0; p < m->ports; p++) {
		if ((x->toward_home | x->host_ports) >> p & 1)
			continue;
		for (q = 0; q < m->ports; q++) {
			struct map_probe *pr;
			uint8_t mid[MAP_ROUTE_MAX], mlen;

			hops[0] = (uint8_t)(ROUTE_BIT | p);
			hops[1] = (uint8_t)(ROUTE_BIT | q);
			i = jobs_add(&j, cap);
			pr = &j.v[i].p;
			if (!route_cat(mid, &mlen, x->fwd, x->flen, hops, 2) ||
			    !route_cat(pr->route, &pr->rlen, mid, mlen, x->back, x->blen)) {
				m->truncated = 1;	/* too far from home */
				j.n--;
				continue;
			}
			j.v[i].port = (int)p;
			j.v[i].q = (int)q;
		}
	}
	err = jobs_run(m, &j);
	for (i = 0; !err && i < (int)j.n; i++)
		if (j.v[i].p.answered && is_self(m, j.v[i].p.addr))
			qmask[j.v[i].port] |= 1ull << j.v[i].q;
	free(j.v);
	for (p = 0; !err && p < m->ports; p++)
		if (qmask[p])
			switch_add(m, &m->sw[xi], (int)p, qmask[p]);
	return err;
}

int map_run(struct map *m)
{
	struct map_switch *s0;
	size_t i;
	int err;

	if (!m->ports || m->ports > MAP_PORTS_MAX)
		return -EINVAL;
	m->nhosts = m->nsw = 0;
	m->probes = 0;
	m->truncated = 0;
	m->self_port = find_self(m);
	if (m->self_port < 0)
		return m->self_port;
	s0 = &m->sw[m->nsw++];
	memset(s0, 0, sizeof(*s0));
	s0->same_as = -1;
	s0->blen = 1;
	s0->back[0] = (uint8_t)(ROUTE_BIT | m->self_port);
	for (i = 0; i < m->nsw; i++) {
		err = probe_hosts(m, &m->sw[i], 2);
		if (err)
			return err;
		m->sw[i].same_as = same_switch(m, i);
		if (m->sw[i].same_as >= 0)
			continue;
		err = probe_switches(m, i);
		if (err)
			return err;
	}
	return 0;
}
