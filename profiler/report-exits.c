// SPDX-License-Identifier: MIT
/*
 * vperf report --exits: the exits' table (report/exits.h) printed as a table, CSV or JSON
 * (docs/states.md, "Exits").  builtin-report.c parses the options and calls report_exits();
 * built where vperf reads recordings (libbabeltrace2), as the report library is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-exits.h"
#include "report.h"
#include "util/escape.h"
#include "util/options.h"

static bool exit_shown(const struct report_exits_args *o, const struct vperf_report *r,
		       const struct vperf_report_exit *x)
{
	if (o->vcpu >= 0 && x->vcpu != (uint32_t)o->vcpu)
		return false;
	return o->tid < 0 || (x->thread >= 0 && r->threads[x->thread].tid == (uint32_t)o->tid);
}

static void print_exits_stdio(const struct vperf_exit_table *t, FILE *out)
{
	static const char *const head[VPERF_EXIT_NR_KEYS] = {
		"Thread", "Comm", "Symbol", "Shared Object", "Reason", "vCPU",
	};
	int width[VPERF_EXIT_NR_KEYS] = { 0 };

	for (size_t k = 0; k < t->nr_keys; k++) {
		width[k] = (int)strlen(head[t->keys[k]]);
		for (size_t i = 0; i < t->nr_rows; i++) {
			int w = (int)strlen(t->rows[i].key[k]);

			if (w > width[k])
				width[k] = w > 40 ? 40 : w;
		}
	}
	fprintf(out, "# %8s  %11s  %10s  %10s  %10s  %10s  %10s  %10s  %7s", "Count", "Cost (ms)",
		"Mean (us)", "P99 (us)", "KVM (ms)", "VMM (ms)", "Preempt", "Sleep", "Thread%");
	for (size_t k = 0; k < t->nr_keys; k++)
		fprintf(out, "  %-*s", k + 1 < t->nr_keys ? width[k] : 0, head[t->keys[k]]);
	fputc('\n', out);
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct vperf_exit_row *w = &t->rows[i];
		char share[16] = "-";

		if (w->share >= 0)
			snprintf(share, sizeof(share), "%.2f%%", 100.0 * w->share);
		fprintf(out, "  %8" PRIu64 "  %11.3f  %10.2f  %10.2f  %10.3f  %10.3f  %10.3f  "
			"%10.3f  %7s", w->count, (double)w->ns / 1e6,
			(double)w->ns / 1e3 / (double)w->count, (double)w->p99_ns / 1e3,
			(double)w->kvm_ns / 1e6, (double)w->vmm_ns / 1e6,
			(double)w->preempted_ns / 1e6, (double)w->sleep_ns / 1e6, share);
		for (size_t k = 0; k < t->nr_keys; k++) {
			fputs("  ", out);
			esc_text(out, w->key[k]);
			for (int n = (int)strlen(w->key[k]); k + 1 < t->nr_keys && n < width[k]; n++)
				fputc(' ', out);
		}
		fputc('\n', out);
	}
}

static void print_exits_csv(const struct vperf_exit_table *t, const char *sep, FILE *out)
{
	for (size_t k = 0; k < t->nr_keys; k++)
		fprintf(out, "%s%s", vperf_exit_key_names[t->keys[k]], sep);
	fprintf(out, "count%sns%smean_ns%sp99_ns%smax_ns%skvm_ns%svmm_ns%spreempted_ns%ssleep_ns%s"
		"thread_share\n", sep, sep, sep, sep, sep, sep, sep, sep, sep);
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct vperf_exit_row *w = &t->rows[i];

		for (size_t k = 0; k < t->nr_keys; k++) {
			esc_csv(out, w->key[k], sep);
			fputs(sep, out);
		}
		fprintf(out, "%" PRIu64 "%s%" PRIu64 "%s%.1f%s%" PRIu64 "%s%" PRIu64 "%s%" PRIu64
			"%s%" PRIu64 "%s%" PRIu64 "%s%" PRIu64 "%s", w->count, sep, w->ns, sep,
			(double)w->ns / (double)w->count, sep, w->p99_ns, sep, w->max_ns, sep,
			w->kvm_ns, sep, w->vmm_ns, sep, w->preempted_ns, sep, w->sleep_ns, sep);
		if (w->share >= 0)
			fprintf(out, "%.6f", w->share);
		fputc('\n', out);
	}
}

static void print_exits_json(const struct report_exits_args *o, const struct vperf_report_analysis *a,
			     const struct vperf_exit_table *t, FILE *out)
{
	fprintf(out, "{\"recording\":");
	esc_json(out, o->dir);
	fprintf(out, ",\"exit_codes\":\"%s\",\"exits\":%" PRIu64 ",\"ns\":%" PRIu64
		",\"without_thread\":%" PRIu64 ",\"rows\":[", a->svm ? "svm" : "vmx", t->count,
		t->ns, t->no_thread);
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct vperf_exit_row *w = &t->rows[i];

		fputs(i ? ",{" : "{", out);
		for (size_t k = 0; k < t->nr_keys; k++) {
			esc_json(out, vperf_exit_key_names[t->keys[k]]);
			fputc(':', out);
			esc_json(out, w->key[k]);
			fputc(',', out);
		}
		fprintf(out, "\"count\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"mean_ns\":%.1f,\"p99_ns\":%"
			PRIu64 ",\"max_ns\":%" PRIu64 ",\"kvm_ns\":%" PRIu64 ",\"vmm_ns\":%" PRIu64
			",\"preempted_ns\":%" PRIu64 ",\"sleep_ns\":%" PRIu64 ",\"thread_share\":",
			w->count, w->ns, (double)w->ns / (double)w->count, w->p99_ns, w->max_ns,
			w->kvm_ns, w->vmm_ns, w->preempted_ns, w->sleep_ns);
		if (w->share >= 0)
			fprintf(out, "%.6f}", w->share);
		else
			fputs("null}", out);
	}
	fputs("]}\n", out);
}

int report_exits(const struct report_exits_args *o)
{
	struct vperf_report_analysis a;
	struct vperf_exit_table t;
	struct vperf_report *r;
	size_t kept = 0;
	char why[512];
	int err, status = 0;

	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err)
		return cli_error("report", "%s: %s", o->dir, why);
	err = vperf_report__analyse_exits(r, &a);
	if (err == -ENOENT) {
		status = cli_error("report", "--exits: %s " VPERF_EXIT_NEED, o->dir);
		goto out;
	}
	if (err) {
		status = cli_error("report", "%s: out of memory", o->dir);
		goto out;
	}
	for (size_t i = 0; i < a.nr_exits; i++)	/* --tid, --vcpu: keep theirs only */
		if (exit_shown(o, r, &a.exits[i]))
			a.exits[kept++] = a.exits[i];
	a.nr_exits = kept;
	if (!kept && (o->tid >= 0 || o->vcpu >= 0)) {
		status = cli_error("report", "--exits: no exit in %s %s", o->dir,
				   o->tid >= 0 ? "while that guest thread ran" : "of that vCPU");
		goto done;
	}
	if (vperf_exit_table__build(r, &a, o->keys, o->nr_keys, &t)) {
		status = cli_error("report", "%s: out of memory", o->dir);
		goto done;
	}
	if (o->fmt == REPORT_EXITS_TABLE) {
		fputs("# vperf report --exits of ", stdout);
		esc_text(stdout, o->dir);
		printf(": each VM exit, by the guest thread on its vCPU, the guest code at its RIP "
		       "and its reason (%s exit codes)\n# cost: from the exit to the vCPU's next "
		       "entry, in KVM, in the VMM, preempted and asleep on the host (ms); Thread%%: "
		       "of the thread's wall time (docs/states.md, \"Exits\")\n# %" PRIu64
		       " exits, %.3f ms", a.svm ? "AMD SVM" : "Intel VMX", t.count, (double)t.ns / 1e6);
		if (t.no_thread)
			printf("; %" PRIu64 " before any guest thread was seen on their vCPU "
			       "(thread -)", t.no_thread);
		printf("\n#\n");
		print_exits_stdio(&t, stdout);
	} else if (o->fmt == REPORT_EXITS_CSV) {
		print_exits_csv(&t, o->sep, stdout);
	} else {
		print_exits_json(o, &a, &t, stdout);
	}
	vperf_exit_table__exit(&t);
done:
	vperf_report_analysis__exit(&a);
out:
	vperf_report__delete(r);
	return status;
}
