// SPDX-License-Identifier: GPL-2.0
/*
 * insn-count.so: a QEMU TCG plugin that counts every guest instruction
 * executed, by its virtual address, between two markers the guest runs
 * (tools/dpperf/insn-mark: the no-op `xchg %bx,%bx`, bytes 66 87 db).
 * make profile's exact mode (PROFILE_EXACT=1) loads it into its -icount
 * guest; tools/dpperf/profile-report names the addresses.
 *
 * Unlike a sampling profile, nothing is charged to the wrong place: code
 * run with interrupts off (a receive interrupt, a context switch) counts
 * where it runs.  A rep-prefixed string instruction counts once per
 * iteration, as -icount's clock does.
 *
 *   -plugin PATH/insn-count.so,out=FILE
 *
 * At the second marker FILE gets "ADDRESS COUNT" (hex, decimal) for each
 * instruction executed in between, and a first line "total N".  Written
 * against QEMU's plugin API version 1 (QEMU 7.2); the few declarations it
 * needs are below, so no QEMU headers are needed to build it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The QEMU plugin API (version 1) used here ---- */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *udata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op,
						void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
/* ---- */

/* One instruction address: its count (bumped inline by QEMU's code). */
struct site {
	uint64_t vaddr;
	uint64_t count;
	uint64_t base;		/* count at the first marker */
};

#define CHUNK	65536u		/* sites never move: QEMU's code points at them */

static struct site **chunks;
static size_t n_sites, n_chunks;
static struct site **table;	/* open addressing by vaddr */
static size_t table_size;	/* a power of two */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const uint8_t marker[] = { 0x66, 0x87, 0xdb };	/* xchg %bx,%bx */
static unsigned int marks;
static char *out_path;

static size_t slot_of(uint64_t vaddr, size_t size)
{
	return (size_t)((vaddr * 0x9e3779b97f4a7c15ull) >> 20) & (size - 1);
}

static void die(const char *what)
{
	fprintf(stderr, "insn-count: %s\n", what);
	exit(1);
}

static void grow(void)
{
	size_t i, size = table_size ? table_size * 2 : 1u << 16;
	struct site **t = calloc(size, sizeof(*t));

	if (!t)
		die("out of memory");
	for (i = 0; i < table_size; i++) {
		size_t j;

		if (!table[i])
			continue;
		for (j = slot_of(table[i]->vaddr, size); t[j]; j = (j + 1) & (size - 1))
			;
		t[j] = table[i];
	}
	free(table);
	table = t;
	table_size = size;
}

static struct site *new_site(uint64_t vaddr)
{
	struct site *s;

	if (n_sites == n_chunks * CHUNK) {
		struct site **c = realloc(chunks, (n_chunks + 1) * sizeof(*c));

		if (!c)
			die("out of memory");
		chunks = c;
		chunks[n_chunks] = calloc(CHUNK, sizeof(struct site));
		if (!chunks[n_chunks])
			die("out of memory");
		n_chunks++;
	}
	s = &chunks[n_sites / CHUNK][n_sites % CHUNK];
	n_sites++;
	s->vaddr = vaddr;
	return s;
}

/* The site of @vaddr; a code page translated again finds its old one. */
static struct site *site_of(uint64_t vaddr)
{
	size_t i;

	if (2 * (n_sites + 1) > table_size)
		grow();
	for (i = slot_of(vaddr, table_size); table[i]; i = (i + 1) & (table_size - 1))
		if (table[i]->vaddr == vaddr)
			return table[i];
	table[i] = new_site(vaddr);
	return table[i];
}

static struct site *site_at(size_t n)
{
	return &chunks[n / CHUNK][n % CHUNK];
}

static void write_counts(void)
{
	uint64_t total = 0;
	FILE *f;
	size_t i;

	for (i = 0; i < n_sites; i++)
		total += site_at(i)->count - site_at(i)->base;
	f = fopen(out_path, "w");
	if (!f)
		die("cannot write the counts");
	fprintf(f, "total %" PRIu64 "\n", total);
	for (i = 0; i < n_sites; i++) {
		struct site *s = site_at(i);

		if (s->count != s->base)
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", s->vaddr, s->count - s->base);
	}
	if (fclose(f))
		die("cannot write the counts");
}

/* A marker ran: the first starts the window, the second ends it. */
static void on_marker(unsigned int vcpu, void *udata)
{
	size_t i;

	(void)vcpu;
	(void)udata;
	pthread_mutex_lock(&lock);
	marks++;
	if (marks == 1) {
		for (i = 0; i < n_sites; i++)
			site_at(i)->base = site_at(i)->count;
	} else if (marks == 2) {
		write_counts();
	}
	pthread_mutex_unlock(&lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	pthread_mutex_lock(&lock);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct site *s = site_of(qemu_plugin_insn_vaddr(insn));

		qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
							   &s->count, 1);
		if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
		    !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
	pthread_mutex_unlock(&lock);
}

/* The guest never ran its second marker: say so in the file. */
static void on_exit_qemu(qemu_plugin_id_t id, void *udata)
{
	FILE *f;

	(void)id;
	(void)udata;
	if (marks >= 2)
		return;
	f = fopen(out_path, "w");
	if (f) {
		fprintf(f, "incomplete %u markers\n", marks);
		fclose(f);
	}
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
			       int argc, char **argv);

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
			       int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	if (!out_path) {
		fprintf(stderr, "insn-count: usage: -plugin insn-count.so,out=FILE\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_qemu, NULL);
	return 0;
}
