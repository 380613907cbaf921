// SPDX-License-Identifier: GPL-2.0
/*
 * Topology: switches, hosts on switch ports, cables between switches, and
 * shortest source routes over them (what a mapper would compute).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "myrisim.h"

static int fail(char *err, size_t len, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, len, "line %d: ", line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < len)
		vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int find_switch(const struct fab_topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nswitches; i++)
		if (!strcmp(t->sw_name[i], name))
			return i;
	return -1;
}

/* "SWITCH PORT" names a free port of a known switch: 0, or -1 with err. */
static int parse_port(const struct fab_topo *t, const char *sw, const char *port,
		      int *s, int *p, char *err, size_t len, int line)
{
	char *end;
	long v;

	*s = find_switch(t, sw);
	if (*s < 0)
		return fail(err, len, line, "no switch %s", sw);
	v = strtol(port, &end, 10);
	if (*end || v < 0 || v >= t->nports[*s])
		return fail(err, len, line, "%s has no port %s", sw, port);
	*p = (int)v;
	if (t->port[*s][*p].kind != FAB_NONE)
		return fail(err, len, line, "%s port %d is taken", sw, *p);
	return 0;
}

static int add_switch(struct fab_topo *t, char **w, int n, char *err, size_t len,
		      int line)
{
	char *end;
	long ports;

	if (n != 3)
		return fail(err, len, line, "want: switch NAME PORTS");
	ports = strtol(w[2], &end, 10);
	if (*end || ports < 2 || ports > FAB_MAX_PORTS)
		return fail(err, len, line, "ports must be 2..%d", FAB_MAX_PORTS);
	if (t->nswitches == FAB_MAX_SWITCHES)
		return fail(err, len, line, "more than %d switches", FAB_MAX_SWITCHES);
	if (strlen(w[1]) >= FAB_NAME || find_switch(t, w[1]) >= 0)
		return fail(err, len, line, "bad or repeated switch name %s", w[1]);
	strcpy(t->sw_name[t->nswitches], w[1]);
	t->nports[t->nswitches++] = (int)ports;
	return 0;
}

static int add_host(struct fab_topo *t, char **w, int n, char *err, size_t len,
		    int line)
{
	int s, p, h = t->nhosts;

	if (n != 4)
		return fail(err, len, line, "want: host NAME SWITCH PORT");
	if (h == FAB_MAX_HOSTS)
		return fail(err, len, line, "more than %d hosts", FAB_MAX_HOSTS);
	if (strlen(w[1]) >= FAB_NAME)
		return fail(err, len, line, "host name too long");
	if (parse_port(t, w[2], w[3], &s, &p, err, len, line))
		return -1;
	strcpy(t->host_name[h], w[1]);
	t->host_sw[h] = s;
	t->host_port[h] = p;
	t->port[s][p] = (struct fab_peer){ FAB_HOST, h, 0 };
	t->nhosts++;
	return 0;
}

static int add_link(struct fab_topo *t, char **w, int n, char *err, size_t len,
		    int line)
{
	int s1, p1, s2, p2;

	if (n != 5)
		return fail(err, len, line, "want: link SWITCH PORT SWITCH PORT");
	if (parse_port(t, w[1], w[2], &s1, &p1, err, len, line))
		return -1;
	t->port[s1][p1].kind = FAB_SWITCH;	/* taken, for a loop to itself */
	if (parse_port(t, w[3], w[4], &s2, &p2, err, len, line)) {
		t->port[s1][p1].kind = FAB_NONE;
		return -1;
	}
	t->port[s1][p1] = (struct fab_peer){ FAB_SWITCH, s2, p2 };
	t->port[s2][p2] = (struct fab_peer){ FAB_SWITCH, s1, p1 };
	return 0;
}

static int parse_line(struct fab_topo *t, char *s, char *err, size_t len, int line)
{
	char *w[8], *save = NULL, *tok;
	int n = 0;

	if (strchr(s, '#'))
		*strchr(s, '#') = '\0';
	for (tok = strtok_r(s, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		if (n == 8)
			return fail(err, len, line, "too many words");
		w[n++] = tok;
	}
	if (!n)
		return 0;
	if (!strcmp(w[0], "switch"))
		return add_switch(t, w, n, err, len, line);
	if (!strcmp(w[0], "host"))
		return add_host(t, w, n, err, len, line);
	if (!strcmp(w[0], "link"))
		return add_link(t, w, n, err, len, line);
	return fail(err, len, line, "unknown keyword %s", w[0]);
}

int topo_parse(struct fab_topo *t, const char *text, char *err, size_t errlen)
{
	char *copy = strdup(text), *save = NULL, *l;
	int line = 0, rc = 0;

	memset(t, 0, sizeof(*t));
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (l = copy; l && !rc; l = save) {
		save = strchr(l, '\n');
		if (save)
			*save++ = '\0';
		rc = parse_line(t, l, err, errlen, ++line);
	}
	free(copy);
	if (!rc && t->nhosts == 0) {
		snprintf(err, errlen, "no hosts");
		rc = -1;
	}
	return rc;
}

void topo_default(struct fab_topo *t)
{
	char err[64];

	topo_parse(t, "switch s0 8\nswitch s1 8\n"
		   "host h0 s0 0\nhost h1 s0 1\nhost h2 s1 0\nhost h3 s1 1\n"
		   "link s0 7 s1 7\n", err, sizeof(err));
}

void topo_one_switch(struct fab_topo *t)
{
	char err[64];

	topo_parse(t, "switch s0 8\nhost h0 s0 0\nhost h1 s0 1\n", err, sizeof(err));
}

/*
 * Breadth-first over switches from @src's switch; a route is the output
 * port taken at each switch, the last one @dst's port.
 */
int topo_route(const struct fab_topo *t, int src, int dst, uint8_t *route)
{
	int prev_sw[FAB_MAX_SWITCHES], prev_port[FAB_MAX_SWITCHES];
	int queue[FAB_MAX_SWITCHES], head = 0, tail = 0, s, p, n, hop;
	int seen[FAB_MAX_SWITCHES] = { 0 };

	if (src < 0 || dst < 0 || src >= t->nhosts || dst >= t->nhosts)
		return -1;
	queue[tail++] = t->host_sw[src];
	seen[t->host_sw[src]] = 1;
	prev_sw[t->host_sw[src]] = -1;
	while (head < tail) {
		s = queue[head++];
		for (p = 0; p < t->nports[s]; p++) {
			const struct fab_peer *q = &t->port[s][p];

			if (q->kind != FAB_SWITCH || seen[q->id])
				continue;
			seen[q->id] = 1;
			prev_sw[q->id] = s;
			prev_port[q->id] = p;
			queue[tail++] = q->id;
		}
	}
	s = t->host_sw[dst];
	if (!seen[s])
		return -1;
	for (n = 1, hop = s; prev_sw[hop] >= 0; hop = prev_sw[hop])
		n++;
	if (n > MYRI_ROUTE_MAX)
		return -1;
	route[n - 1] = (uint8_t)(MYRI_ROUTE_BIT | t->host_port[dst]);
	for (hop = s, p = n - 2; prev_sw[hop] >= 0; hop = prev_sw[hop], p--)
		route[p] = (uint8_t)(MYRI_ROUTE_BIT | prev_port[hop]);
	return n;
}
