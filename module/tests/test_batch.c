// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of batched sends (dp_batch.c, DP_IOC_SENDV), built against
 * the real dp.h over the mock kernel (mock/kmock.h).  Beneath the batch
 * is the test's model of an endpoint's edges and of dp_send_edge_tally():
 * each send copies its message from "user" memory (the mock's, where one
 * byte may fault) and is recorded, or fails as the test scripts it for
 * its edge.  What is checked is the contract (docs/contract.md): the
 * count returned names exactly the messages sent, in order, once each;
 * the errno of the first one not sent is in arg->err; a restart only
 * when nothing was done.
 *
 * A world of its own (Makefile, WORLDS): what it defines here is seen by
 * dp_batch.c alone.
 */
#include "dp.h"
#include "unit.h"

#define B_EDGES		3
#define B_MSGS		64

static struct {
	struct dp_endpoint ep;
	struct dp_edge e[B_EDGES];	/* connected to DPIDs 200, 201, 202 */
	int fail_at[B_EDGES];	/* the edge's nth send from now fails... */
	int fail_err[B_EDGES];	/* ...with this */
	unsigned int sent[B_EDGES];
	unsigned int unhash_after;	/* edge 0 disconnected after n sends */
	u32 seq[B_MSGS];	/* what was sent: each message's first word */
	u32 edge[B_MSGS];
	unsigned int n;
	unsigned int gets, puts, tallied, flushes;
	u32 left[B_MSGS];	/* the plug's @left at each send */
	bool plug_ended;
	u32 queued;		/* messages the pool holds, to release */
	u32 released;
	bool nonblock;
	struct dp_send d[B_MSGS];
	u32 msg[B_MSGS][4];
	struct dp_sendv v;
} b;

/* ---- what dp_batch.c asks of the rest of dp.ko ---- */

struct dp_edge *dp_edge_get(struct dp_endpoint *ep, const struct dp_addr *to)
{
	unsigned int k = to->dpid - 200;

	if (to->nid != 2 || to->dpid < 200 || k >= B_EDGES ||
	    !b.e[k].hnode.pprev)
		return NULL;
	b.gets++;
	refcount_inc(&b.e[k].refs);
	return &b.e[k];
}

void dp_edge_put(struct dp_edge *e)
{
	b.puts++;
	refcount_dec(&e->refs);
}

ssize_t dp_send_edge_tally(struct dp_edge *e, const void __user *buf,
			   size_t len, bool nonblock, struct dp_tx_tally *tally)
{
	unsigned int k = e - b.e;
	u32 word;

	CHECK(nonblock == b.nonblock, "the call's O_NONBLOCK");
	if (b.fail_at[k] && !--b.fail_at[k])
		return b.fail_err[k];
	if (len < sizeof(word) || copy_from_user(&word, buf, sizeof(word)))
		return -EFAULT;
	if (b.n < B_MSGS) {
		b.seq[b.n] = word;
		b.edge[b.n] = k;
		b.left[b.n] = b.ep.plug.owner ? b.ep.plug.left : 0;
	}
	b.n++;
	if (++b.sent[k] == b.unhash_after && !k)
		b.e[0].hnode.pprev = NULL;
	tally->msgs++;
	tally->bytes += len;
	return len;
}

void dp_tx_tally_flush(struct dp_endpoint *ep, struct dp_tx_tally *tally)
{
	b.tallied += tally->msgs;
	b.flushes++;
	memset(tally, 0, sizeof(*tally));
}

bool dp_tx_plug_start(struct dp_endpoint *ep)
{
	if (cmpxchg(&ep->plug.owner, NULL, current))
		return false;
	ep->plug.left = 1;
	return true;
}

void dp_tx_plug_end(struct dp_endpoint *ep)
{
	CHECK(ep->plug.owner == current, "ended by its owner");
	b.plug_ended = true;
	smp_store_release(&ep->plug.owner, NULL);
}

u32 dp_ep_release_n(struct dp_endpoint *ep, u32 n)
{
	u32 done = min(n, b.queued);

	b.queued -= done;
	b.released += done;
	return done;
}

/* ---- the world ---- */

static void b_setup(void)
{
	unsigned int k;

	kmock_reset();
	memset(&b, 0, sizeof(b));
	for (k = 0; k < B_EDGES; k++) {
		b.e[k].to.nid = 2;
		b.e[k].to.dpid = 200 + k;
		b.e[k].ep = &b.ep;
		refcount_set(&b.e[k].refs, 1);
		b.e[k].hnode.pprev = &b.e[k].hnode.next;	/* hashed */
	}
}

/*
 * @n messages, message i (its first word i + 1) to edge @edge(i): the
 * descriptors in b.d, the batch in b.v.
 */
static void b_batch(unsigned int n, unsigned int (*edge)(unsigned int i))
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		b.msg[i][0] = i + 1;
		b.d[i].to.nid = 2;
		b.d[i].to.dpid = 200 + edge(i);
		b.d[i].buf = (uintptr_t)b.msg[i];
		b.d[i].len = sizeof(b.msg[i]);
	}
	b.v.msgs = (uintptr_t)b.d;
	b.v.n = n;
}

static long b_call(int release_err)
{
	return dp_ioc_sendv(&b.ep, &b.v, b.nonblock, release_err);
}

static unsigned int b_edge0(unsigned int i)
{
	return 0;
}

/* Runs of each edge: 0 0 0 1 1 2 0 0 1 2 2 ... */
static unsigned int b_mixed(unsigned int i)
{
	static const unsigned int run[] = { 0, 0, 0, 1, 1, 2, 0, 0, 1, 2, 2 };

	return run[i % ARRAY_SIZE(run)];
}

/* Messages 1..@n sent, in order, each once; none else. */
static bool b_sent_first(unsigned int n)
{
	unsigned int i;

	if (b.n != n)
		return false;
	for (i = 0; i < n; i++)
		if (b.seq[i] != i + 1)
			return false;
	return true;
}

/* Nothing left referenced, plugged, counted apart from what was sent. */
static void b_balanced(void)
{
	unsigned int k;

	CHECK_EQ(b.gets, b.puts);
	for (k = 0; k < B_EDGES; k++)
		CHECK_EQ(b.e[k].refs.refs, 1);
	CHECK(b.ep.plug.owner == NULL, "the plug let go of");
	CHECK_EQ(b.tallied, b.n);
	CHECK_EQ(kmock_refcount_errors, 0);
	CHECK_EQ(kmock_lockdep_errors, 0);
}

/* ---- tests ---- */

/*
 * Every message sent, in order, on mixed edges: an edge looked up once
 * per run of messages to it, counters once per chunk of 8, one plug.
 */
static void test_batch_all(void)
{
	unsigned int i, runs = 1;

	b_setup();
	b_batch(20, b_mixed);
	CHECK_EQ(b_call(0), 20);
	CHECK(b_sent_first(20), "all 20 in order, once each");
	for (i = 0; i < 20; i++) {
		CHECK_EQ(b.edge[i], b_mixed(i));
		CHECK_EQ(b.left[i], 20 - i);	/* what the bundle is sized for */
		runs += i && b_mixed(i) != b_mixed(i - 1);
	}
	CHECK_EQ(b.gets, runs);
	CHECK_EQ(b.flushes, 3);
	CHECK(b.plug_ended, "the plug sent");
	CHECK_EQ(b.v.err, 0);
	b_balanced();
}

/*
 * The first message an edge does not take ends the batch there: its
 * errno in arg->err, the count the messages before it.
 */
static void test_batch_refused(void)
{
	static const int errs[] = { -EAGAIN, -EMSGSIZE, -ETIMEDOUT };
	unsigned int k, j;

	for (k = 0; k < ARRAY_SIZE(errs); k++) {
		for (j = 1; j <= 4; j++) {	/* edge 1's jth message */
			unsigned int i, seen = 0, at = 0;

			b_setup();
			b.nonblock = errs[k] == -EAGAIN;
			b_batch(20, b_mixed);
			for (i = 0; i < 20 && seen < j; i++)
				if (b_mixed(i) == 1 && ++seen == j)
					at = i;
			b.fail_at[1] = j;
			b.fail_err[1] = errs[k];
			CHECK_EQ(b_call(0), at);
			CHECK(b_sent_first(at), "the %u before it, once each", at);
			CHECK_EQ(b.v.err, -errs[k]);
			b_balanced();
		}
	}
}

/*
 * A descriptor that faults, at every place in the batch (the chunk's
 * copy then goes one descriptor at a time): the ones before it sent,
 * none after, EFAULT.  The first: the call fails, nothing sent.
 */
static void test_batch_efault_descriptor(void)
{
	unsigned int k;

	for (k = 0; k < 20; k++) {
		long ret;

		b_setup();
		b_batch(20, b_mixed);
		kmock_uaccess_bad = (const char *)&b.d[k] + 3;
		ret = b_call(0);
		if (k == 0) {
			CHECK_EQ(ret, -EFAULT);
		} else {
			CHECK_EQ(ret, k);
			CHECK_EQ(b.v.err, EFAULT);
		}
		CHECK(b_sent_first(k), "descriptor %u: the %u before it, once each", k, k);
		b_balanced();
	}
}

/* A message whose bytes fault: the same, from that message. */
static void test_batch_efault_message(void)
{
	b_setup();
	b_batch(12, b_mixed);
	kmock_uaccess_bad = (const char *)b.msg[9] + 1;
	CHECK_EQ(b_call(0), 9);
	CHECK_EQ(b.v.err, EFAULT);
	CHECK(b_sent_first(9), "the 9 before it");
	b_balanced();
}

/* An edge not connected, or disconnected while the batch runs. */
static void test_batch_notconn(void)
{
	b_setup();
	b_batch(10, b_edge0);
	b.d[6].to.dpid = 209;
	CHECK_EQ(b_call(0), 6);
	CHECK_EQ(b.v.err, ENOTCONN);
	b_balanced();

	/* disconnected after the run's lookup: looked up again, and gone */
	b_setup();
	b_batch(10, b_edge0);
	b.unhash_after = 3;
	CHECK_EQ(b_call(0), 3);
	CHECK_EQ(b.v.err, ENOTCONN);
	CHECK(b_sent_first(3), "the 3 before it");
	CHECK_EQ(b.gets, 1);
	b_balanced();
}

/* What is refused before any send: EINVAL, nothing sent. */
static void test_batch_invalid(void)
{
	b_setup();
	b_batch(4, b_edge0);
	b.v.flags = 0x80;
	CHECK_EQ(b_call(0), -EINVAL);
	b.v.flags = 0;
	b.v.n = DP_SENDV_MAX + 1;
	CHECK_EQ(b_call(0), -EINVAL);
	b.v.n = 4;
	b.v.reserved = 1;
	CHECK_EQ(b_call(0), -EINVAL);
	b.v.reserved = 0;
	b.v.n = 0;
	CHECK_EQ(b_call(0), 0);
	b.v.n = 4;
	kmock_uaccess_bad = &b.v.flags;
	CHECK_EQ(b_call(0), -EFAULT);
	CHECK_EQ(b.n, 0);
	kmock_uaccess_bad = NULL;
	b.d[2].flags = 1;		/* a message's flags: from it on */
	CHECK_EQ(b_call(0), 2);
	CHECK_EQ(b.v.err, EINVAL);
	CHECK(b_sent_first(2), "the 2 before it");
	b_balanced();
}

/*
 * A signal: the call restarts only if nothing was done, else EINTR
 * after the messages sent (a restart would send them again).
 */
static void test_batch_restart(void)
{
	b_setup();
	b_batch(8, b_edge0);
	b.fail_at[0] = 1;
	b.fail_err[0] = -ERESTARTSYS;
	CHECK_EQ(b_call(0), -ERESTARTSYS);
	CHECK_EQ(b.n, 0);
	b_balanced();

	b_setup();
	b_batch(8, b_edge0);
	b.fail_at[0] = 4;
	b.fail_err[0] = -ERESTARTSYS;
	CHECK_EQ(b_call(0), 3);
	CHECK_EQ(b.v.err, EINTR);
	CHECK(b_sent_first(3), "the 3 before it");
	b_balanced();

	b_setup();
	b_batch(8, b_edge0);
	b.queued = 5;
	b.v.flags = DP_SENDV_RELEASE;
	b.v.release = 2;
	b.fail_at[0] = 1;
	b.fail_err[0] = -ERESTARTSYS;
	CHECK_EQ(b_call(0), -EINTR);	/* 2 released: no restart */
	CHECK_EQ(b.released, 2);
	CHECK_EQ(b.v.release, 2);
	CHECK_EQ(b.n, 0);
	b_balanced();
}

/*
 * DP_SENDV_RELEASE: the head messages released first, their count in
 * arg->release and arg->err cleared, whatever the sends do; a release
 * the fd may not make fails the call before anything is done.
 */
static void test_batch_release(void)
{
	b_setup();
	b_batch(5, b_mixed);
	b.queued = 3;
	b.v.flags = DP_SENDV_RELEASE;
	b.v.release = 10;
	b.v.err = 77;
	CHECK_EQ(b_call(0), 5);
	CHECK_EQ(b.released, 3);
	CHECK_EQ(b.v.release, 3);
	CHECK_EQ(b.v.err, 0);
	CHECK(b_sent_first(5), "then the 5 sent");
	b_balanced();

	/* the first send fails: its errno returned, the release reported */
	b_setup();
	b_batch(5, b_mixed);
	b.d[0].to.dpid = 209;
	b.queued = 3;
	b.v.flags = DP_SENDV_RELEASE;
	b.v.release = 2;
	b.v.err = 77;
	CHECK_EQ(b_call(0), -ENOTCONN);
	CHECK_EQ(b.v.err, 0);
	CHECK_EQ(b.v.release, 2);
	CHECK_EQ(b.released, 2);
	b_balanced();

	b_setup();
	b_batch(5, b_mixed);
	b.queued = 3;
	b.v.flags = DP_SENDV_RELEASE;
	b.v.release = 10;
	CHECK_EQ(b_call(-EBADF), -EBADF);
	CHECK_EQ(b.released, 0);
	CHECK_EQ(b.n, 0);
	b_balanced();
}

/* The plug: taken for more than one message, not if another task has it. */
static void test_batch_plug(void)
{
	static char other;

	b_setup();
	b_batch(1, b_edge0);
	CHECK_EQ(b_call(0), 1);
	CHECK(!b.plug_ended, "one message: no plug");
	b_setup();
	b_batch(6, b_edge0);
	b.ep.plug.owner = (struct task_struct *)&other;
	CHECK_EQ(b_call(0), 6);
	CHECK(!b.plug_ended, "another task's plug: not taken, not ended");
	CHECK(b.ep.plug.owner == (struct task_struct *)&other, "left to its owner");
	b.ep.plug.owner = NULL;
	b_balanced();
}

const struct unit_test batch_tests[] = {
	{ "batch_all", test_batch_all },
	{ "batch_refused", test_batch_refused },
	{ "batch_efault_descriptor", test_batch_efault_descriptor },
	{ "batch_efault_message", test_batch_efault_message },
	{ "batch_notconn", test_batch_notconn },
	{ "batch_invalid", test_batch_invalid },
	{ "batch_restart", test_batch_restart },
	{ "batch_release", test_batch_release },
	{ "batch_plug", test_batch_plug },
	{ NULL, NULL },
};
