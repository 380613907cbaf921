// SPDX-License-Identifier: GPL-2.0
/*
 * dp's tracepoints through tracefs (docs/trace.md): the events of system
 * dp are listed; enabled, a known exchange between the two nodes of the
 * pair produces exactly the events it should:
 *  - 5 messages A -> B: 5 dp_tx with their lengths, 5 dp_rx with token
 *    seq 1..5, and the edge's session idle -> hello -> open;
 *  - a HELLO to a DPID nobody bound: dp_drop events, reason rx_drop_no_ep,
 *    whose n add up to what node B's counter counted meanwhile, and as
 *    many dp_rx_no_ep events naming node B's DPID and the sender, the
 *    first a HELLO (type 3);
 *  - a non-blocking writer that fills the receiver's pool: dp_stall on
 *    credit, one per tx_blocked the endpoint counted;
 *  - B stops hearing A (out of its NART) while A sends: dp_retransmit
 *    events, as many as the endpoint's tx_retrans;
 *  - node A's NIC detached and attached again: dp_nic_detach, then
 *    dp_nic_attach with the backend and device.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define DPID_A2 101
#define DPID_S 300
#define DPID_NOBODY 4242

static const char *const events[] = {
	"dp_tx", "dp_rx", "dp_drop", "dp_rx_no_ep", "dp_retransmit", "dp_session",
	"dp_stall", "dp_nic_attach", "dp_nic_detach",
};

static char trace[1 << 22];

/*
 * The dp events stay enabled from the first phase to the last, and each
 * phase switches recording (tracing_on), not the events: enabling or
 * disabling an event patches kernel text (text_poke_bp(), an int3 and an
 * IPI to each CPU), which under multi-threaded TCG once hung a 2-vCPU
 * guest in this test; switching every phase did it 10 times a run.
 */

/* Stop recording and read what the dp events recorded. */
static size_t tr_read(void)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	dpt_tracefs_write("tracing_on", "0");
	fd = open(DPT_TRACEFS "/trace", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (len < sizeof(trace) - 1 &&
	       (n = read(fd, trace + len, sizeof(trace) - 1 - len)) > 0)
		len += n;
	close(fd);
	trace[len] = 0;
	return len;
}

/* Whether @line contains @s; an @s ending in '$' must end the line. */
static int has(const char *line, const char *s)
{
	size_t n = strlen(s), l = strlen(line);

	if (n && s[n - 1] == '$')
		return l >= n - 1 && !strncmp(line + l - (n - 1), s, n - 1);
	return strstr(line, s) != NULL;
}

/*
 * Lines of event @ev whose text contains every string of @want (NULL
 * ended); each matching line, if @sum, adds the number after "n=".
 */
static unsigned long count(const char *ev, const char *const *want, int sum)
{
	char tag[64], *line, *save = NULL, *copy = strdup(trace);
	unsigned long n = 0;
	int i, ok;

	snprintf(tag, sizeof(tag), " %s: ", ev);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, tag))
			continue;
		for (i = 0, ok = 1; want && want[i]; i++)
			ok &= has(line, want[i]);
		if (ok)
			n += sum ? strtoul(strstr(line, " n=") + 3, NULL, 10) : 1;
	}
	free(copy);
	return n;
}

static void exchange(int a, int b, struct dpt_pool *pb)
{
	static const size_t len[] = { 1, 64, 100, 1000, 1400 };
	char out[1400] = { 0 }, in[1400], src[64], dst[64], buf[64];
	unsigned int i, seq_ok = 1, len_ok = 1;
	const struct dp_token *t;

	for (i = 0; i < 5; i++) {
		if (write(a, out, len[i]) != (ssize_t)len[i] ||
		    dpt_wait_readable(b, DPT_WAIT_MS) != 1 || !(t = dpt_head(pb)))
			ktap_bail("exchange");
		if (read(b, in, sizeof(in)) != (ssize_t)len[i])
			ktap_bail("read");
	}
	tr_read();
	snprintf(src, sizeof(src), "src=%u/%u ", dpt.nida, DPID_A);
	snprintf(dst, sizeof(dst), "dst=%u/%u ", dpt.nidb, DPID_B);
	ktap_ok(count("dp_tx", (const char *[]){ src, dst, NULL }, 0) == 5,
		"5 messages: 5 dp_tx events %s%s", src, dst);
	ktap_ok(count("dp_rx", (const char *[]){ src, dst, NULL }, 0) == 5,
		"5 messages: 5 dp_rx events");
	for (i = 0; i < 5; i++) {
		snprintf(buf, sizeof(buf), " len=%zu$", len[i]);
		len_ok &= count("dp_tx", (const char *[]){ src, buf, NULL }, 0) == 1;
		snprintf(buf, sizeof(buf), " len=%zu seq=%u$", len[i], i + 1);
		seq_ok &= count("dp_rx", (const char *[]){ src, buf, NULL }, 0) == 1;
	}
	ktap_ok(len_ok, "each dp_tx carries its message's length");
	ktap_ok(seq_ok, "each dp_rx carries its length and token seq 1..5");
	ktap_ok(count("dp_session", (const char *[]){ src, dst, "idle->hello err=0", NULL }, 0) == 1 &&
		count("dp_session", (const char *[]){ src, dst, "hello->open err=0", NULL }, 0) == 1,
		"the edge's session: idle->hello, hello->open");
	if (strstr(trace, "hello->open") && strstr(trace, "idle->hello"))
		ktap_ok(strstr(trace, "idle->hello") < strstr(trace, "hello->open"),
			"idle->hello comes before hello->open");
	else
		ktap_ok(0, "idle->hello comes before hello->open");
}

static void drops(void)
{
	char dst[64], src[64], on_b[64];
	const char *h, *t3, *nl;
	uint64_t c0, c1;
	unsigned long n, m;
	int x;

	c0 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_NO_EP);
	dpt_tracefs_start();
	x = dpt_ep(dpt.nsa, DPID_A2, 0);
	if (x < 0 || dpt_connect(x, dpt.nidb, DPID_NOBODY))
		ktap_bail("endpoint to nobody");
	fcntl(x, F_SETFL, O_NONBLOCK);
	if (write(x, "x", 1) < 0 && errno != EAGAIN)
		ktap_diag("write to nobody: %s", strerror(errno));
	dpt_wait_ctr(dpt.nsb, DP_CTR_RX_DROP_NO_EP, c0 + 1, DPT_WAIT_MS);
	close(x);
	dpt_sleep_ms(500);	/* anything the close sends lands first */
	tr_read();
	c1 = dpt_ctr(dpt.nsb, DP_CTR_RX_DROP_NO_EP);
	n = count("dp_drop", (const char *[]){ "reason=rx_drop_no_ep", NULL }, 1);
	ktap_ok(c1 > c0 && n == c1 - c0,
		"dp_drop reason=rx_drop_no_ep: n adds up to %lu, node B counted %llu",
		n, (unsigned long long)(c1 - c0));
	snprintf(dst, sizeof(dst), "dst=%u/%u ", dpt.nidb, DPID_NOBODY);
	snprintf(src, sizeof(src), "src=%u/%u ", dpt.nida, DPID_A2);
	snprintf(on_b, sizeof(on_b), " dst=%u/", dpt.nidb);
	m = count("dp_rx_no_ep", (const char *[]){ on_b, NULL }, 0);
	ktap_ok(m == c1 - c0 && count("dp_rx_no_ep", (const char *[]){ dst, src, NULL }, 0) == m,
		"dp_rx_no_ep on node B: %lu events, each %s%s, as many as it counted", m, dst,
		src);
	h = strstr(trace, " dp_rx_no_ep: ");
	t3 = h ? strstr(h, " type=3 ") : NULL;
	nl = h ? strchr(h, '\n') : NULL;
	ktap_ok(t3 && (!nl || t3 < nl), "the first dp_rx_no_ep is the HELLO (type=3)");
}

static void stall(void)
{
	struct dp_ep_stats st;
	char src[64];
	unsigned long n;
	char msg[1000] = { 0 };
	int x, s, i;

	s = dpt_ep(dpt.nsb, DPID_S, DP_POOL_MIN);
	x = dpt_ep(dpt.nsa, DPID_A2, 0);
	if (s < 0 || x < 0 || dpt_connect(x, dpt.nidb, DPID_S))
		ktap_bail("stall endpoints");
	dpt_tracefs_start();
	fcntl(x, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 1000; i++) {
		if (write(x, msg, sizeof(msg)) < 0) {
			if (errno != EAGAIN)
				break;
			if (dpt_stats(x, &st) == 0 && st.tx_msgs > 0)
				break;	/* open, and out of credit */
			dpt_sleep_ms(10);
		}
	}
	tr_read();
	snprintf(src, sizeof(src), "src=%u/%u ", dpt.nida, DPID_A2);
	n = count("dp_stall", (const char *[]){ src, NULL }, 0);
	ktap_ok(!dpt_stats(x, &st) && st.tx_blocked > 0 && n == st.tx_blocked,
		"dp_stall: %lu events, the endpoint counted tx_blocked %llu", n,
		(unsigned long long)st.tx_blocked);
	ktap_ok(count("dp_stall", (const char *[]){ src, "on=credit", NULL }, 0) >= 1,
		"a writer out of the receiver's pool stalls on=credit");
	close(x);
	close(s);
}

static int b_hears_a(int on)
{
	const char *ip = dpt_ip();
	const uint8_t *m = dpt.maca;

	if (!on)
		return dpt_sh("%s netns exec %s dpctl nart del %u", ip, dpt.nsb, dpt.nida);
	return dpt_sh("%s netns exec %s dpctl nart add %u %02x:%02x:%02x:%02x:%02x:%02x%s",
		      ip, dpt.nsb, dpt.nida, m[0], m[1], m[2], m[3], m[4], m[5], dpt.routea);
}

/*
 * The session keeps its credit throughout (credit_idle_ms raised): a
 * write then goes at once, and only its DATA meets the deaf receiver.
 */
static void retransmit(int a, int b)
{
	struct dp_ep_stats s0, s1;
	char src[64], in[64], idle[32];
	unsigned long n;
	int i;

	if (dpt_param("credit_idle_ms", "600000", idle, sizeof(idle)) ||
	    write(a, "first", 5) != 5 || dpt_wait_readable(b, DPT_WAIT_MS) != 1 ||
	    read(b, in, sizeof(in)) != 5)
		ktap_bail("retransmit setup");
	/*
	 * "first" acknowledged before B stops hearing A: else its own
	 * retransmission could fall before the trace starts, counted and not
	 * traced (seen over Myrinet on a loaded host, where the ACK came late).
	 */
	for (i = 0; i < 500 && !dpt_stats(a, &s0) && s0.tx_unacked; i++)
		dpt_sleep_ms(20);
	if (dpt_stats(a, &s0) || s0.tx_unacked || b_hears_a(0))
		ktap_bail("retransmit setup");
	dpt_tracefs_start();
	if (write(a, "again", 5) != 5)
		ktap_bail("write");
	for (i = 0; i < 500 && !dpt_stats(a, &s1) && s1.tx_retrans == s0.tx_retrans; i++)
		dpt_sleep_ms(20);
	if (b_hears_a(1))
		ktap_bail("NART");
	ktap_ok(dpt_wait_readable(b, DPT_WAIT_MS) == 1 && read(b, in, sizeof(in)) == 5,
		"the message arrives once B hears A again");
	for (i = 0; i < 500 && !dpt_stats(a, &s1) && s1.tx_unacked; i++)
		dpt_sleep_ms(20);
	tr_read();
	dpt_stats(a, &s1);
	dpt_param("credit_idle_ms", idle, NULL, 0);
	snprintf(src, sizeof(src), "src=%u/%u ", dpt.nida, DPID_A);
	n = count("dp_retransmit", (const char *[]){ src, NULL }, 0);
	ktap_ok(s1.tx_retrans > s0.tx_retrans && n == s1.tx_retrans - s0.tx_retrans,
		"dp_retransmit: %lu events, tx_retrans went up by %llu", n,
		(unsigned long long)(s1.tx_retrans - s0.tx_retrans));
}

static void nic(void)
{
	const char *ip = dpt_ip();
	const char *be = dpt.backend;
	char nid[32], dev[64], bes[64];
	const char *d, *at;

	dpt_tracefs_start();
	if (dpt_sh("%s netns exec %s dpctl node detach && %s netns exec %s dpctl node set dev %s backend %s",
		   ip, dpt.nsa, ip, dpt.nsa, dpt.ifa, be))
		ktap_diag("detach and attach failed");
	tr_read();
	snprintf(nid, sizeof(nid), "nid=%u ", dpt.nida);
	snprintf(bes, sizeof(bes), "backend=%s ", be);
	snprintf(dev, sizeof(dev), "dev=%s", dpt.ifa);
	ktap_ok(count("dp_nic_detach", (const char *[]){ nid, bes, dev, NULL }, 0) == 1,
		"dp_nic_detach %s%s%s", nid, bes, dev);
	ktap_ok(count("dp_nic_attach", (const char *[]){ nid, bes, dev, NULL }, 0) == 1,
		"dp_nic_attach %s%s%s", nid, bes, dev);
	d = strstr(trace, " dp_nic_detach: ");
	at = strstr(trace, " dp_nic_attach: ");
	ktap_ok(d && at && d < at, "detach is traced before the attach");
}

int main(void)
{
	struct dpt_pool pb;
	char path[256];
	unsigned int i;
	int a, b, have;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	dpt_tracefs_mount();
	for (i = 0, have = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), DPT_TRACEFS "/events/dp/%s/format", events[i]);
		have += !access(path, R_OK);
	}
	ktap_ok(have == (int)(sizeof(events) / sizeof(events[0])),
		"tracefs lists the %d dp events (%zu expected)", have,
		sizeof(events) / sizeof(events[0]));
	if (dpt_tracefs_write("buffer_size_kb", "2048") ||
	    dpt_tracefs_write("events/dp/enable", "1") || dpt_tracefs_start())
		ktap_bail("tracefs");
	dpt_pair(&a, DPID_A, &b, DPID_B);
	if (dpt_map(b, &pb))
		ktap_bail("mmap");
	exchange(a, b, &pb);
	drops();
	stall();
	retransmit(a, b);
	nic();
	dpt_tracefs_write("events/dp/enable", "0");
	dpt_tracefs_start();	/* leave recording on, the buffer empty */
	ktap_finish();
}
