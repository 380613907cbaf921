// SPDX-License-Identifier: GPL-2.0
/*
 * Order: 2000 messages of varying length from A to B over veth, received
 * concurrently by another process that walks the pool in user space
 * (tokens, wrap tokens, next offsets) and releases in batches.  Every
 * message must arrive, in order, intact, with consecutive edge sequence
 * numbers starting at 1.  The pool (1 MiB) holds them all even if the
 * receiver falls behind, so any loss is a failure.
 *
 * The sender stays on one CPU: veth hands each frame to the receive path
 * of the CPU that sent it, and the CPUs' backlogs drain independently, so a
 * sender that migrates mid-burst can have later frames delivered first
 * (seen on the preemptible debug kernel of make check-debug, 2 runs in 3).
 * Version 1 has no reorder buffer; what is tested here is that dp itself
 * keeps the order of frames that arrive in order.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "dptest.h"

#define DPID_A 100
#define DPID_B 200
#define COUNT 2000
#define POOL (1u << 20)

struct msg {
	uint32_t seq;
	uint32_t len;
	uint8_t fill[200];
};

static uint8_t fill(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7u + i * 13u + 1u);
}

static uint32_t msg_len(uint32_t seq)
{
	return 8 + (seq * 37u) % 193u;	/* 8..200 bytes */
}

/* Receiver: returns the number of messages received in order and intact. */
static int receive(int b)
{
	struct dpt_pool pool;
	uint32_t next = 0, size;
	int idle = 0, spin = 0;

	if (dpt_map(b, &pool)) {
		ktap_diag("receiver: mmap: %s", strerror(errno));
		return 0;
	}
	size = pool.ctrl->data_size;
	while (next < COUNT) {
		/* prod first (acquire), then cons: cons is then never older
		 * than the state that prod publishes. */
		uint64_t prod = __atomic_load_n(&pool.ctrl->prod, __ATOMIC_ACQUIRE);
		uint64_t cons = __atomic_load_n(&pool.ctrl->cons, __ATOMIC_ACQUIRE);
		uint64_t pos = cons;
		uint32_t batch = 0;

		if ((int64_t)(prod - cons) <= 0) {
			int r = dpt_wait_readable(b, 100);

			if (r != 1 && ++idle > 100) {
				ktap_diag("receiver: nothing for 10 s after %u messages", next);
				break;
			}
			if (r == 1 && ++spin > 1000000) {
				ktap_diag("receiver: POLLIN but the pool looks empty");
				break;
			}
			continue;
		}
		idle = 0;
		if (prod - cons > size) {
			ktap_diag("receiver: prod - cons = %llu > data_size",
				  (unsigned long long)(prod - cons));
			return (int)next;
		}
		while ((int64_t)(prod - pos) > 0) {
			const struct dp_token *t = (const void *)(pool.data + (pos & (size - 1)));
			const struct msg *m = (const void *)(t + 1);
			uint32_t i;

			if (t->flags & (DP_TOK_WRAP | DP_TOK_SKIP)) {
				if (pos == cons) {
					ktap_diag("receiver: cons %llu rests on a wrap or skip token",
						  (unsigned long long)cons);
					return (int)next;
				}
				/* a skip token (an aborted large message) is no message */
				pos += t->flags & DP_TOK_WRAP ? size - (pos & (size - 1)) :
					DP_TOKEN_SPACE(t->len);
				continue;
			}
			if (t->seq != next + 1 || t->len != msg_len(next) || m->seq != next ||
			    m->len != t->len) {
				ktap_diag("receiver: expected message %u (edge seq %u, len %u), got seq %u len %u edge seq %u",
					  next, next + 1, msg_len(next), m->seq, t->len, t->seq);
				return (int)next;
			}
			for (i = 0; i + 8 < t->len; i++)
				if (m->fill[i] != fill(next, i)) {
					ktap_diag("receiver: message %u byte %u corrupt", next, i + 8);
					return (int)next;
				}
			if (t->next != ((pos + DP_TOKEN_SPACE(t->len)) & (size - 1))) {
				ktap_diag("receiver: token %u next %u, expected %llu", next, t->next,
					  (unsigned long long)((pos + DP_TOKEN_SPACE(t->len)) & (size - 1)));
				return (int)next;
			}
			pos += DP_TOKEN_SPACE(t->len);
			next++;
			batch++;
		}
		if (dpt_release(b, batch) != batch) {
			ktap_diag("receiver: release of %u failed", batch);
			return (int)next;
		}
		if (pool.ctrl->cons < pos) {
			ktap_diag("receiver: cons %llu after release, expected >= %llu",
				  (unsigned long long)pool.ctrl->cons, (unsigned long long)pos);
			return (int)next;
		}
	}
	return (int)next;
}

/* Keep the caller on the CPU it runs on now (see the top of the file). */
static void stay_on_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0) {
		ktap_diag("sched_getcpu: %s", strerror(errno));
		return;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		ktap_diag("sched_setaffinity: %s", strerror(errno));
}

int main(void)
{
	struct dp_ep_stats sa, sb;
	struct msg m;
	int a, b, p[2], st, got = -1, sent = 0;
	uint32_t seq, i;
	pid_t pid;

	ktap_start();
	if (dpt_init())
		ktap_bail("environment");
	b = dpt_ep(dpt.nsb, DPID_B, POOL);
	a = dpt_ep(dpt.nsa, DPID_A, 0);
	if (a < 0 || b < 0 || dpt_connect(a, dpt.nidb, DPID_B))
		ktap_bail("endpoints");
	if (pipe(p))
		ktap_bail("pipe");
	pid = dpt_fork();
	if (pid == 0) {
		int n = receive(b);

		_exit(write(p[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
	}
	close(p[1]);
	stay_on_this_cpu();
	for (seq = 0; seq < COUNT; seq++) {
		m.seq = seq;
		m.len = msg_len(seq);
		for (i = 0; i + 8 < m.len; i++)
			m.fill[i] = fill(seq, i);
		if (write(a, &m, m.len) != (ssize_t)m.len) {
			ktap_diag("write %u: %s", seq, strerror(errno));
			break;
		}
		sent++;
	}
	ktap_ok(sent == COUNT, "sent %d of %d messages", sent, COUNT);
	st = dpt_wait_child(pid, 120000);
	if (st != -1 && WIFEXITED(st) && read(p[0], &got, sizeof(got)) != sizeof(got))
		got = -1;
	ktap_ok(got == COUNT, "receiver got all %d in order, intact, edge seq 1..%d (got %d)",
		COUNT, COUNT, got);
	dpt_stats(a, &sa);
	dpt_stats(b, &sb);
	ktap_ok(sa.tx_msgs == COUNT && sb.rx_msgs == COUNT && sb.rx_drop_full == 0 &&
		sb.queued == 0, "counters: A tx %llu, B rx %llu drop_full %llu queued %llu",
		(unsigned long long)sa.tx_msgs, (unsigned long long)sb.rx_msgs,
		(unsigned long long)sb.rx_drop_full, (unsigned long long)sb.queued);
	close(a);
	close(b);
	ktap_finish();
}
