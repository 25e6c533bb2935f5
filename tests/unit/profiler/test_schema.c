// SPDX-License-Identifier: MIT
/*
 * The recording schema (profiler/record/schema.h): the one table docs/recording.md prints, every
 * class read back by babeltrace2 with the table's fields in its order, and the layers a class
 * may go to.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bt2run.h"
#include "schema.h"
#include "vtest.h"

#define DOC_BEGIN	"<!-- schema table: begin (vperf_schema__doc(); "			\
			"unit.schema_table_in_docs_is_the_schemas checks it) -->\n"
#define DOC_END		"<!-- schema table: end -->\n"

/* docs/recording.md holds, between its markers, exactly what vperf_schema__doc() writes. */
static void schema_table_in_docs_is_the_schemas(void **state)
{
	char *doc = slurp(VT_RECORDING_MD), *b, *e, *want;
	size_t n = vperf_schema__doc(NULL, 0);
	char out[] = "/tmp/vperf-schema-doc-XXXXXX";
	int fd;

	(void)state;
	assert_non_null(doc);
	want = malloc(n + 1);
	assert_non_null(want);
	assert_int_equal(vperf_schema__doc(want, n + 1), n);
	b = strstr(doc, DOC_BEGIN);
	e = b ? strstr(b, DOC_END) : NULL;
	if (!b || !e)
		fail_msg("%s has no schema table between \"%.40s...\" and \"%s\"", VT_RECORDING_MD,
			 DOC_BEGIN, DOC_END);
	b += strlen(DOC_BEGIN);
	if ((size_t)(e - b) != n || memcmp(b, want, n)) {
		fd = mkstemp(out);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, want, n), (ssize_t)n);
		close(fd);
		fail_msg("the schema table in %s is not the schema's: the table is in %s (put it "
			 "between the markers)", VT_RECORDING_MD, out);
	}
	free(want);
	free(doc);
}

/* The layer each class is emitted on in the next test: one it may go to. */
static enum vperf_ctf_layer layer_of(unsigned int c)
{
	for (unsigned int l = 0; l < VPERF_CTF_NR_LAYERS; l++)
		if (vperf_schema_class[c].layers & (1u << l))
			return (enum vperf_ctf_layer)l;
	return VPERF_CTF_NR_LAYERS;
}

/*
 * One event of every class, through its emitter, all fields 0 or empty: babeltrace2 reads the
 * trace clean and prints each class's fields as the table lists them, in its order.
 */
static void schema_every_class_reads_back_with_the_tables_fields_in_order(void **state)
{
	char base[] = "/tmp/vperf-schema-XXXXXX", dir[PATH_MAX], why[256];
	struct vperf_ctf_env env[] = { VPERF_SCHEMA_ENV };
	struct vperf_schema sch;
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "t", .env = env,
					.nr_env = 1, .classes = sch.classes,
					.nr_classes = VPERF_EV_NR };
	struct vperf_ctf_stream *s[VPERF_CTF_NR_LAYERS];
	struct vperf_ctf *ctf;
	struct bt_run r;
	uint64_t ts = 1;

	(void)state;
	vperf_schema__init(&sch, NULL, 0);
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/rec", base);
	assert_int_equal(vperf_ctf__new(dir, &cfg, &ctf, why, sizeof(why)), 0);
	for (unsigned int l = 0; l < VPERF_CTF_NR_LAYERS; l++)
		assert_int_equal(vperf_ctf__stream(ctf, (enum vperf_ctf_layer)l, 0, &s[l]), 0);
#define EMIT(id, name, lay, fields, what)						\
	assert_int_equal(vperf_ev__##name(s[layer_of(VPERF_EV_##id)], ts++,		\
					  &(struct vperf_ev_##name){ 0 }), 0);
	VPERF_SCHEMA_CLASSES(EMIT)
#undef EMIT
	assert_int_equal(vperf_ctf__lost(s[0], ts++, 1), 0);
	assert_int_equal(vperf_ctf__flush(ctf), 0);
	vperf_ctf__delete(ctf);
	run_babeltrace2(base, dir, &r);
	assert_int_equal(r.status, 0);
	for (unsigned int c = 0; c <= VPERF_EV_NR; c++) {
		const struct vperf_ctf_class_desc *d = &vperf_schema_desc[c];
		char key[96];
		const char *line, *at;

		snprintf(key, sizeof(key), " %s: {", d->name);
		line = strstr(r.out, key);
		if (!line)
			fail_msg("no %s event in:\n%s", d->name, r.out);
		at = strstr(line, "}, {");
		assert_non_null(at);
		for (size_t f = 0; f < d->nr_fields; f++) {
			snprintf(key, sizeof(key), " %s = ", d->fields[f].name);
			at = strstr(at, key);
			if (!at || (strchr(line, '\n') && at > strchr(line, '\n')))
				fail_msg("%s: field %s not where the table puts it: %.300s",
					 d->name, d->fields[f].name, line);
		}
	}
	bt_run_free(&r);
	assert_int_equal(vt_rmtree(base), 0);
}

/* An emitter refuses a stream of a layer its class never goes to, and writes nothing. */
static void schema_emitters_refuse_a_layer_their_class_never_goes_to(void **state)
{
	char base[] = "/tmp/vperf-schema-XXXXXX", dir[PATH_MAX], why[256];
	struct vperf_schema sch;
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "t",
					.classes = sch.classes, .nr_classes = VPERF_EV_NR };
	struct vperf_ctf_stream *hk, *vmm, *gu;
	struct vperf_ctf *ctf;

	(void)state;
	vperf_schema__init(&sch, NULL, 0);
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/rec", base);
	assert_int_equal(vperf_ctf__new(dir, &cfg, &ctf, why, sizeof(why)), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 0, &hk), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_VMM, 0, &vmm), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_GUEST_USER, 0, &gu), 0);
	assert_int_equal(vperf_ev__vmm_exit(hk, 1, &(struct vperf_ev_vmm_exit){ .vcpu = 0 }),
			 -EINVAL);
	assert_int_equal(vperf_ev__kvm_exit(vmm, 1, &(struct vperf_ev_kvm_exit){ 0 }), -EINVAL);
	assert_int_equal(vperf_ev__sample(vmm, 1, &(struct vperf_ev_sample){ 0 }), -EINVAL);
	assert_int_equal(vperf_ev__sched_switch(gu, 1, &(struct vperf_ev_sched_switch){ 0 }),
			 -EINVAL);
	/* and the same on their own layers */
	assert_int_equal(vperf_ev__vmm_exit(vmm, 1, &(struct vperf_ev_vmm_exit){ 0 }), 0);
	assert_int_equal(vperf_ev__kvm_exit(hk, 1, &(struct vperf_ev_kvm_exit){ 0 }), 0);
	assert_int_equal(vperf_ev__sample(gu, 1, &(struct vperf_ev_sample){ 0 }), 0);
	assert_int_equal(vperf_ctf__flush(ctf), 0);
	vperf_ctf__delete(ctf);
	assert_int_equal(vt_rmtree(base), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schema_table_in_docs_is_the_schemas),
		cmocka_unit_test(schema_every_class_reads_back_with_the_tables_fields_in_order),
		cmocka_unit_test(schema_emitters_refuse_a_layer_their_class_never_goes_to),
	};

	return VT_MAIN("schema", tests, NULL, NULL);
}
