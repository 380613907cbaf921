// SPDX-License-Identifier: GPL-2.0
/*
 * The crossbar switches and cables, cut-through.  A packet is a worm: its
 * head takes one route byte at each switch and claims that output port;
 * the ports it claimed stay its own until its tail has passed.  A head that
 * finds its port taken (or the NIC at the end without a free buffer) stops
 * where it is, and STOP/GO pushes back to the sending NIC, which cannot
 * start its next packet.  A head blocked past the timeout gets its packet
 * truncated (dropped here, counted), as Myrinet switches did.  A freed
 * port goes to the waiting input port next after the last one served
 * (round robin).  Each switch checks the packet's trailing CRC-8 and
 * recomputes it over the shorter packet; a bad one is forwarded still bad,
 * and counted.  Time is the caller's clock in ns; nothing here does I/O.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrisim.h"

#define PPM 1000000u

uint8_t myri_crc8(const uint8_t *p, size_t len)
{
	uint8_t crc = 0;
	int b;

	while (len--) {
		crc ^= *p++;
		for (b = 0; b < 8; b++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
	}
	return crc;
}

void fab_cfg_default(struct fab_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->ns_per_byte = 4;
	c->hop_ns = 300;
	c->timeout_ns = 50ull * 1000 * 1000;
	c->seed = 1;
}

static uint64_t rng_next(struct fabric *f)
{
	uint64_t x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static int roll(struct fabric *f, uint32_t ppm)
{
	return ppm && rng_next(f) % PPM < ppm;
}

void fab_init(struct fabric *f, const struct fab_topo *t, const struct fab_cfg *c,
	      const struct fab_host_ops *ops, void *ctx)
{
	memset(f, 0, sizeof(*f));
	f->topo = *t;
	f->cfg = *c;
	f->rng = c->seed ? c->seed : 1;
	f->ops = ops;
	f->ctx = ctx;
}

void fab_free(struct fabric *f)
{
	int h;

	for (h = 0; h < FAB_MAX_HOSTS; h++) {
		free(f->tx[h]);
		f->tx[h] = NULL;
	}
}

int fab_link_up(const struct fabric *f, int h)
{
	return !f->pulled[f->topo.host_sw[h]][f->topo.host_port[h]];
}

int fab_tx_idle(const struct fabric *f, int h)
{
	return !f->tx[h];
}

static void worm_free(struct fabric *f, struct fab_worm *w)
{
	f->tx[w->src] = NULL;
	free(w);
}

static void grant(struct fabric *f, struct fab_worm *w, int sw, int port, uint64_t t);

/* The blocked worm that gets (sw, port) next: round robin over inputs. */
static struct fab_worm *next_waiter(struct fabric *f, int sw, int port)
{
	struct fab_worm *best = NULL;
	int h, n = f->topo.nports[sw], bestd = n + 1;

	for (h = 0; h < FAB_MAX_HOSTS; h++) {
		struct fab_worm *w = f->tx[h];
		int d;

		if (!w || w->state != WORM_BLOCKED || w->sw != sw ||
		    w->want_port != port)
			continue;
		d = (w->in_port - f->last_in[sw][port] - 1 + 2 * n) % n;
		if (d < bestd) {
			bestd = d;
			best = w;
		}
	}
	return best;
}

static void arbitrate(struct fabric *f, int sw, int port, uint64_t t)
{
	struct fab_worm *w;

	if (f->owner[sw][port] || f->blocked[sw][port])
		return;
	w = next_waiter(f, sw, port);
	if (w)
		grant(f, w, sw, port, t);
}

/* The packet is gone (delivered, lost or truncated): free its ports. */
static void release(struct fabric *f, struct fab_worm *w, uint64_t t)
{
	int held[MYRI_ROUTE_MAX + 1][2], i, n = w->nheld;

	for (i = 0; i < n; i++) {
		held[i][0] = w->held_sw[i];
		held[i][1] = w->held_port[i];
		f->owner[held[i][0]][held[i][1]] = NULL;
	}
	worm_free(f, w);
	for (i = 0; i < n; i++)
		arbitrate(f, held[i][0], held[i][1], t);
}

/* The head leaves switch @sw by @port at @t: on to the next switch or NIC. */
static void grant(struct fabric *f, struct fab_worm *w, int sw, int port, uint64_t t)
{
	const struct fab_peer *p = &f->topo.port[sw][port];

	f->owner[sw][port] = w;
	f->last_in[sw][port] = w->in_port;
	f->per_in[sw][w->in_port]++;
	w->held_sw[w->nheld] = sw;
	w->held_port[w->nheld++] = port;
	w->state = WORM_HEAD;
	w->t = t + f->cfg.hop_ns;
	if (p->kind == FAB_HOST) {
		w->sw = -1;		/* arriving at the NIC */
		w->dst = p->id;
	} else {
		w->sw = p->id;
		w->in_port = p->port;
	}
}

static void block(struct fabric *f, struct fab_worm *w, int port, uint64_t t)
{
	w->state = WORM_BLOCKED;
	w->want_port = port;
	w->blocked_since = t;
	f->st.stalls++;
}

/* Strip the route byte; check the CRC that came in, put on a new one. */
static void strip_route(struct fabric *f, struct fab_worm *w)
{
	uint8_t *p = w->buf + w->off;
	size_t n = w->len - w->off;
	int bad = myri_crc8(p, n - 1) != p[n - 1];

	if (bad)
		f->st.crc_hop++;
	w->off++;
	p[n - 1] = (uint8_t)(myri_crc8(p + 1, n - 2) ^ (bad ? 0xff : 0));
}

/* The head reaches switch w->sw: read the route byte, take the port. */
static void head_at_switch(struct fabric *f, struct fab_worm *w, uint64_t t)
{
	int sw = w->sw, port;
	uint8_t b;

	if (w->len - w->off < 2 + MYRI_CRC_LEN) {
		f->st.bad_route++;
		release(f, w, t);
		return;
	}
	b = w->buf[w->off];
	port = b & MYRI_ROUTE_PORT;
	if (!(b & MYRI_ROUTE_BIT) || port >= f->topo.nports[sw] ||
	    f->topo.port[sw][port].kind == FAB_NONE) {
		f->st.bad_route++;
		release(f, w, t);
		return;
	}
	if (f->pulled[sw][port]) {
		f->st.dead_port++;
		release(f, w, t);
		return;
	}
	strip_route(f, w);
	if (f->owner[sw][port] || f->blocked[sw][port] || next_waiter(f, sw, port))
		block(f, w, port, t);
	else
		grant(f, w, sw, port, t);
}

/* The head reaches the NIC: GO if it has room, else STOP. */
static void head_at_nic(struct fabric *f, struct fab_worm *w, uint64_t t)
{
	size_t n = w->len - w->off;

	if (!f->ops->accept(f->ctx, w->dst, n)) {
		if (w->state != WORM_BLOCKED)
			block(f, w, -1, t);
		return;
	}
	w->state = WORM_TAIL;
	w->t = t + (uint64_t)w->len * f->cfg.ns_per_byte;
}

static void tail_done(struct fabric *f, struct fab_worm *w, uint64_t t)
{
	f->ops->deliver(f->ctx, w->dst, w->buf + w->off, w->len - w->off);
	f->st.delivered++;
	f->st.hops += (uint64_t)w->nheld;	/* one output port per switch */
	release(f, w, t);
}

/* When @w acts next on its own. */
static uint64_t worm_due(const struct fabric *f, const struct fab_worm *w)
{
	if (w->state == WORM_BLOCKED)
		return w->blocked_since + f->cfg.timeout_ns;
	return w->t;
}

uint64_t fab_next(const struct fabric *f)
{
	uint64_t best = UINT64_MAX;
	int h;

	for (h = 0; h < FAB_MAX_HOSTS; h++)
		if (f->tx[h] && worm_due(f, f->tx[h]) < best)
			best = worm_due(f, f->tx[h]);
	return best;
}

static void worm_act(struct fabric *f, struct fab_worm *w, uint64_t t)
{
	switch (w->state) {
	case WORM_HEAD:
		if (w->sw < 0)
			head_at_nic(f, w, t);
		else
			head_at_switch(f, w, t);
		break;
	case WORM_BLOCKED:
		f->st.truncated++;
		release(f, w, t);
		break;
	case WORM_TAIL:
		tail_done(f, w, t);
		break;
	}
}

/* Heads waiting at a NIC try again: the host may have posted buffers. */
static void retry_nics(struct fabric *f, uint64_t now)
{
	int h;

	for (h = 0; h < FAB_MAX_HOSTS; h++) {
		struct fab_worm *w = f->tx[h];

		if (w && w->state == WORM_BLOCKED && w->sw < 0 &&
		    now < worm_due(f, w))
			head_at_nic(f, w, now);
	}
}

void fab_advance(struct fabric *f, uint64_t now)
{
	if (now > f->now)
		f->now = now;
	for (;;) {
		struct fab_worm *w = NULL;
		uint64_t due = UINT64_MAX;
		int h;

		retry_nics(f, now);
		for (h = 0; h < FAB_MAX_HOSTS; h++)
			if (f->tx[h] && worm_due(f, f->tx[h]) < due) {
				w = f->tx[h];
				due = worm_due(f, w);
			}
		if (!w || due > now)
			return;
		worm_act(f, w, due);
	}
}

/* Faults on the way out of the NIC: 0, or -1 if the packet is lost. */
static int faults(struct fabric *f, struct fab_worm *w)
{
	size_t route = 0, span;

	if (roll(f, f->cfg.drop)) {
		f->st.f_drop++;
		return -1;
	}
	while (route < w->len && (w->buf[route] & MYRI_ROUTE_BIT))
		route++;
	if (roll(f, f->cfg.badroute) && route) {
		f->st.f_badroute++;
		w->buf[rng_next(f) % route] &= (uint8_t)~MYRI_ROUTE_BIT;
	}
	span = w->len - route;
	if (roll(f, f->cfg.corrupt) && span > MYRI_TYPE_LEN + MYRI_CRC_LEN) {
		size_t at = route + MYRI_TYPE_LEN + rng_next(f) % (span - MYRI_TYPE_LEN - 1);

		f->st.f_corrupt++;
		w->buf[at] ^= (uint8_t)(1u << (rng_next(f) % 8));
	}
	return 0;
}

int fab_send(struct fabric *f, int h, const uint8_t *pkt, size_t len, uint64_t now)
{
	struct fab_worm *w;

	if (h < 0 || h >= f->topo.nhosts || f->tx[h])
		return -1;
	if (now > f->now)
		f->now = now;
	f->st.sent++;
	if (!fab_link_up(f, h)) {
		f->st.link_down++;
		return 0;
	}
	if (len > FAB_PKT_MAX || len < 1 + MYRI_TYPE_LEN + MYRI_CRC_LEN) {
		f->st.bad_route++;	/* the first switch cannot route it */
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -1;
	memcpy(w->buf, pkt, len);
	w->len = len;
	w->src = h;
	if (faults(f, w)) {
		free(w);
		return 0;
	}
	w->state = WORM_HEAD;
	w->sw = f->topo.host_sw[h];
	w->in_port = f->topo.host_port[h];
	w->t = now + f->cfg.hop_ns;
	f->tx[h] = w;
	return 0;
}

/* ---- control commands ---- */

/* "12.5" percent into ppm; -1 if malformed or over 100. */
static long parse_pct(const char *s)
{
	long whole = 0, frac = 0, scale = 10000;

	if (!*s)
		return -1;
	while (*s >= '0' && *s <= '9' && whole <= 100)
		whole = whole * 10 + (*s++ - '0');
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9' && scale > 1) {
			scale /= 10;
			frac += (*s++ - '0') * scale;
		}
	}
	if (*s || whole > 100 || (whole == 100 && frac))
		return -1;
	return whole * 10000 + frac;
}

static int set_kv(struct fab_cfg *c, char *kv)
{
	char *v = strchr(kv, '='), *end;
	long pct;

	if (!v)
		return -1;
	*v++ = '\0';
	if (!strcmp(kv, "seed")) {
		c->seed = strtoull(v, &end, 10);
		return *end || !*v ? -1 : 0;
	}
	if (!strcmp(kv, "timeout_us")) {
		unsigned long long us = strtoull(v, &end, 10);

		c->timeout_ns = us * 1000;
		return *end || !*v || !us ? -1 : 0;
	}
	pct = parse_pct(v);
	if (pct < 0)
		return -1;
	if (!strcmp(kv, "drop"))
		c->drop = (uint32_t)pct;
	else if (!strcmp(kv, "corrupt"))
		c->corrupt = (uint32_t)pct;
	else if (!strcmp(kv, "badroute"))
		c->badroute = (uint32_t)pct;
	else
		return -1;
	return 0;
}

static int set_spec(struct fabric *f, char *spec, char *reply, size_t len)
{
	struct fab_cfg c = f->cfg;
	char *save = NULL, *kv;

	for (kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		if (set_kv(&c, kv)) {
			snprintf(reply, len, "ERR bad setting %s", kv);
			return -1;
		}
	}
	if (c.seed != f->cfg.seed)
		f->rng = c.seed ? c.seed : 1;
	f->cfg = c;
	snprintf(reply, len, "OK");
	return 0;
}

/* "SW PORT" (switch by name or number) into sw and port. */
static int parse_swport(const struct fabric *f, char *a, char *b, int *sw, int *port)
{
	char *end;
	long v;
	int i;

	*sw = -1;
	for (i = 0; a && i < f->topo.nswitches; i++)
		if (!strcmp(f->topo.sw_name[i], a))
			*sw = i;
	if (*sw < 0 && a) {
		v = strtol(a, &end, 10);
		if (!*end && v >= 0 && v < f->topo.nswitches)
			*sw = (int)v;
	}
	if (*sw < 0 || !b)
		return -1;
	v = strtol(b, &end, 10);
	if (*end || v < 0 || v >= f->topo.nports[*sw])
		return -1;
	*port = (int)v;
	return 0;
}

/* A cable out: packets on it or waiting for it are cut, and counted. */
static void pull(struct fabric *f, int sw, int port, uint64_t t)
{
	const struct fab_peer *p = &f->topo.port[sw][port];
	int h, i;

	f->pulled[sw][port] = 1;
	if (p->kind == FAB_SWITCH)
		f->pulled[p->id][p->port] = 1;
	for (h = 0; h < FAB_MAX_HOSTS; h++) {
		struct fab_worm *w = f->tx[h];
		int cut = w && w->state == WORM_BLOCKED && w->sw == sw &&
			  w->want_port == port;

		for (i = 0; w && i < w->nheld; i++)
			cut |= f->pulled[w->held_sw[i]][w->held_port[i]];
		if (w && f->pulled[f->topo.host_sw[h]][f->topo.host_port[h]])
			cut = 1;
		if (cut) {
			f->st.dead_port++;
			release(f, w, t);
		}
	}
}

static void plug(struct fabric *f, int sw, int port)
{
	const struct fab_peer *p = &f->topo.port[sw][port];

	f->pulled[sw][port] = 0;
	if (p->kind == FAB_SWITCH)
		f->pulled[p->id][p->port] = 0;
}

static int port_cmd(struct fabric *f, const char *cmd, char *a, char *b,
		    char *reply, size_t len)
{
	int sw, port;

	if (parse_swport(f, a, b, &sw, &port)) {
		snprintf(reply, len, "ERR want: %s SWITCH PORT", cmd);
		return -1;
	}
	if (!strcmp(cmd, "block")) {
		f->blocked[sw][port] = 1;
	} else if (!strcmp(cmd, "unblock")) {
		f->blocked[sw][port] = 0;
		arbitrate(f, sw, port, f->now);
	} else if (!strcmp(cmd, "pull")) {
		pull(f, sw, port, f->now);
	} else {
		plug(f, sw, port);
	}
	snprintf(reply, len, "OK");
	return 0;
}

void fab_describe(const struct fabric *f, char *buf, size_t len)
{
	const struct fab_stats *s = &f->st;

	snprintf(buf, len,
		 "sent=%" PRIu64 " delivered=%" PRIu64 " hops=%" PRIu64
		 " bad_route=%" PRIu64
		 " dead_port=%" PRIu64 " crc_hop=%" PRIu64 " truncated=%" PRIu64
		 " stalls=%" PRIu64 " link_down=%" PRIu64 " f_drop=%" PRIu64
		 " f_corrupt=%" PRIu64 " f_badroute=%" PRIu64,
		 s->sent, s->delivered, s->hops, s->bad_route, s->dead_port, s->crc_hop,
		 s->truncated, s->stalls, s->link_down, s->f_drop, s->f_corrupt,
		 s->f_badroute);
}

int fab_control(struct fabric *f, const char *line, char *reply, size_t len)
{
	char copy[256], *w[4] = { 0 }, *save = NULL;
	int n = 0;

	if (strlen(line) >= sizeof(copy)) {
		snprintf(reply, len, "ERR line too long");
		return -1;
	}
	strcpy(copy, line);
	for (w[0] = strtok_r(copy, " \t\r\n", &save); w[n] && n < 3;)
		w[++n] = strtok_r(NULL, " \t\r\n", &save);
	if (!w[0]) {
		snprintf(reply, len, "ERR empty command");
		return -1;
	}
	if (!strcmp(w[0], "set") && w[1] && !w[2])
		return set_spec(f, w[1], reply, len);
	if (!strcmp(w[0], "stats") && !w[1]) {
		char d[512];

		fab_describe(f, d, sizeof(d));
		snprintf(reply, len, "OK %s", d);
		return 0;
	}
	if (!strcmp(w[0], "reset") && !w[1]) {
		memset(&f->st, 0, sizeof(f->st));
		snprintf(reply, len, "OK");
		return 0;
	}
	if (!strcmp(w[0], "block") || !strcmp(w[0], "unblock") ||
	    !strcmp(w[0], "pull") || !strcmp(w[0], "plug"))
		return port_cmd(f, w[0], w[1], w[2], reply, len);
	snprintf(reply, len, "ERR unknown command %s", w[0]);
	return -1;
}
