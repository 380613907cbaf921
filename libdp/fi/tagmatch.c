// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Tag matching: the posted and unexpected queues (tagmatch.h). */
#include "tagmatch.h"
#include "proto.h"

#include <string.h>

void dpfi_list_init(struct dpfi_list *l)
{
	l->head = NULL;
	l->tailp = &l->head;
}

void dpfi_list_push(struct dpfi_list *l, struct dpfi_node *n)
{
	n->next = NULL;
	*l->tailp = n;
	l->tailp = &n->next;
}

/* Unlink the node *pp points at. */
static struct dpfi_node *dpfi_list_unlink(struct dpfi_list *l, struct dpfi_node **pp)
{
	struct dpfi_node *n = *pp;

	*pp = n->next;
	if (l->tailp == &n->next)
		l->tailp = pp;
	n->next = NULL;
	return n;
}

struct dpfi_node *dpfi_list_find(struct dpfi_list *l, dpfi_pred pred,
				 const void *arg, int take)
{
	struct dpfi_node **pp;

	for (pp = &l->head; *pp; pp = &(*pp)->next)
		if (pred(*pp, arg))
			return take ? dpfi_list_unlink(l, pp) : *pp;
	return NULL;
}

struct dpfi_node *dpfi_list_pop(struct dpfi_list *l)
{
	return l->head ? dpfi_list_unlink(l, &l->head) : NULL;
}

void dpfi_list_remove(struct dpfi_list *l, struct dpfi_node *n)
{
	struct dpfi_node **pp;

	for (pp = &l->head; *pp; pp = &(*pp)->next)
		if (*pp == n) {
			dpfi_list_unlink(l, pp);
			return;
		}
}

int dpfi_tag_match(uint64_t want, uint64_t ignore, uint64_t tag)
{
	return ((want ^ tag) & ~ignore) == 0;
}

int dpfi_rx_matches(const struct dpfi_rx *rx, const struct dpfi_key *k)
{
	int tagged = (rx->flags & FI_TAGGED) != 0;

	if (tagged != k->tagged)
		return 0;
	if (tagged && !dpfi_tag_match(rx->tag, rx->ignore, k->tag))
		return 0;
	return rx->src == FI_ADDR_UNSPEC || rx->src == k->src;
}

static int posted_pred(const struct dpfi_node *n, const void *arg)
{
	return dpfi_rx_matches((const struct dpfi_rx *)n, arg);
}

struct dpfi_rx *dpfi_posted_take(struct dpfi_list *posted, const struct dpfi_key *k)
{
	return (struct dpfi_rx *)dpfi_list_find(posted, posted_pred, k, 1);
}

static int unexp_pred(const struct dpfi_node *n, const void *arg)
{
	const struct dpfi_in *in = (const struct dpfi_in *)n;
	struct dpfi_key k = {
		.tagged = (in->hflags & DPFI_HF_TAGGED) != 0,
		.tag = in->tag,
		.src = in->src,
	};

	return !in->claimed && dpfi_rx_matches(arg, &k);
}

struct dpfi_in *dpfi_unexp_find(struct dpfi_list *unexp, const struct dpfi_rx *rx, int take)
{
	return (struct dpfi_in *)dpfi_list_find(unexp, unexp_pred, rx, take);
}

static int ctx_pred(const struct dpfi_node *n, const void *arg)
{
	return ((const struct dpfi_rx *)n)->ctx == arg;
}

struct dpfi_rx *dpfi_posted_cancel(struct dpfi_list *posted, const void *ctx)
{
	return (struct dpfi_rx *)dpfi_list_find(posted, ctx_pred, ctx, 1);
}

size_t dpfi_iov_len(const struct iovec *iov, size_t niov)
{
	size_t i, n = 0;

	for (i = 0; i < niov; i++)
		n += iov[i].iov_len;
	return n;
}

size_t dpfi_iov_xfer(const struct iovec *iov, size_t niov, uint64_t offset,
		     void *buf, size_t len, int to_iov)
{
	unsigned char *b = buf, *p;
	size_t i, n, done = 0;

	for (i = 0; i < niov && done < len; i++) {
		if (offset >= iov[i].iov_len) {
			offset -= iov[i].iov_len;
			continue;
		}
		n = iov[i].iov_len - (size_t)offset;
		if (n > len - done)
			n = len - done;
		p = (unsigned char *)iov[i].iov_base + offset;
		memcpy(to_iov ? p : b + done, to_iov ? b + done : p, n);
		done += n;
		offset = 0;
	}
	return done;
}
