// SPDX-License-Identifier: MIT
/*
 * The Trace Event Format's JSON (export.h, docs/report.md section 3): one object with
 * "traceEvents", an array of events each with a phase "ph", a name, "pid" and "tid" (which
 * track), and "ts" in microseconds, here the recording's clock in ns written as us with three
 * decimals, exactly.  Phases used: "M" metadata (process and thread names, their order), "X"
 * complete events (a slice with "dur": running, a VMM exit, a guest thread's state), "i" instants
 * (samples, fork, exec, exit, wakeups, losses, markers), "B"/"E" for begin/end markers and "C"
 * counters (each thread's count of each sampled event, the sum of its samples' periods, at each
 * sample; or the thread counts a guest sampling NMI carries).
 *
 * Tracks: each host thread in its process; the host's CPUs as threads of a process "CPUs"
 * (what ran on each); in a `vperf vm record` recording the guest's threads as threads of one
 * process named after the VM, and its vCPUs (their VMM exits, and what ran on each) as threads
 * of another.  Their ids are export.h's VPERF_CHROME_*, above every real pid and tid.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export.h"
#include "states.h"
#include "schema.h"

static void put_arg_str(FILE *out, const char *key, const char *val)
{
	fprintf(out, "\"%s\":", key);
	esc_json(out, val);
}

/* ns as microseconds, exactly: "1234.567". */
static void put_us(FILE *out, const char *key, uint64_t ns)
{
	fprintf(out, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned int)(ns % 1000));
}

struct ctx {
	struct vperf_report *r;
	FILE *out;
	bool *used;			/* per thread: something is on its track */
	bool vm;			/* guest threads apart: a vperf vm record recording */
	bool first;
};

static bool apart(const struct ctx *c, int32_t t)
{
	return c->vm && c->r->threads[t].guest;
}

/* The track of thread t. */
static void ids_of(const struct ctx *c, int32_t t, uint32_t *pid, uint32_t *tid)
{
	const struct vperf_report_thread *th = &c->r->threads[t];

	if (apart(c, t)) {
		*pid = VPERF_CHROME_GUEST_PID;
		*tid = VPERF_CHROME_GUEST_PID + th->tid;
	} else {
		*pid = th->pid ? th->pid : th->tid;
		*tid = th->tid;
	}
}

/* The track of cpu, for a thread of the host or (apart) of the guest. */
static void cpu_ids(bool guest_apart, uint32_t cpu, uint32_t *pid, uint32_t *tid)
{
	*pid = guest_apart ? VPERF_CHROME_VCPUS_PID : VPERF_CHROME_CPUS_PID;
	*tid = *pid + cpu;
}

/* The start of an event: {"ph":ph,"name":name,"cat":cat,"pid":..,"tid":..,"ts":..  */
static void begin(struct ctx *c, const char *ph, const char *name, const char *cat,
		  uint32_t pid, uint32_t tid, uint64_t ts)
{
	fputs(c->first ? "\n" : ",\n", c->out);
	c->first = false;
	fprintf(c->out, "{\"ph\":\"%s\",\"name\":", ph);
	esc_json(c->out, name);
	fprintf(c->out, ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, cat, pid, tid);
	put_us(c->out, "ts", ts);
}

static void meta(struct ctx *c, const char *what, uint32_t pid, uint32_t tid, const char *name,
		 int sort)
{
	char key[32];

	begin(c, "M", what, "__metadata", pid, tid, 0);
	fputs(",\"args\":{\"name\":", c->out);
	esc_json(c->out, name);
	fputs("}}", c->out);
	snprintf(key, sizeof(key), "%s_sort_index", strncmp(what, "process", 7) ? "thread" :
		 "process");
	begin(c, "M", key, "__metadata", pid, tid, 0);
	fprintf(c->out, ",\"args\":{\"sort_index\":%d}}", sort);
}

/* A process's name: its main thread's, else its first named thread's. */
static const char *process_name(const struct ctx *c, uint32_t pid)
{
	const struct vperf_report *r = c->r;
	const char *any = NULL;

	for (size_t i = 0; i < r->nr_threads; i++) {
		const struct vperf_report_thread *th = &r->threads[i];

		if (apart(c, (int32_t)i) || th->comm == UINT32_MAX ||
		    (th->pid ? th->pid : th->tid) != pid)
			continue;
		if (th->tid == pid)
			return r->strings[th->comm];
		if (!any)
			any = r->strings[th->comm];
	}
	return any ? any : "?";
}

static void put_names(struct ctx *c, size_t nr_cpus, size_t nr_vcpus)
{
	struct vperf_report *r = c->r;
	char name[96], buf[32];
	bool guest_named = false;

	if (nr_cpus) {
		meta(c, "process_name", VPERF_CHROME_CPUS_PID, VPERF_CHROME_CPUS_PID, "CPUs", -2);
		for (size_t i = 0; i < nr_cpus; i++) {
			snprintf(name, sizeof(name), "CPU %zu", i);
			meta(c, "thread_name", VPERF_CHROME_CPUS_PID,
			     VPERF_CHROME_CPUS_PID + (uint32_t)i, name, (int)i);
		}
	}
	if (nr_vcpus) {
		snprintf(name, sizeof(name), "VM %s: vCPUs", r->vm_name);
		meta(c, "process_name", VPERF_CHROME_VCPUS_PID, VPERF_CHROME_VCPUS_PID, name, -1);
		for (size_t i = 0; i < nr_vcpus; i++) {
			snprintf(name, sizeof(name), "vCPU %zu", i);
			meta(c, "thread_name", VPERF_CHROME_VCPUS_PID,
			     VPERF_CHROME_VCPUS_PID + (uint32_t)i, name, (int)i);
		}
	}
	for (size_t i = 0; i < r->nr_threads; i++) {
		const struct vperf_report_thread *th = &r->threads[i];
		const char *comm;
		uint32_t pid, tid;

		if (!c->used[i])
			continue;
		comm = vperf_report__thread_name(r, (int32_t)i, buf, sizeof(buf));
		ids_of(c, (int32_t)i, &pid, &tid);
		if (apart(c, (int32_t)i)) {
			if (!guest_named) {
				snprintf(name, sizeof(name), "VM %s: guest threads", r->vm_name);
				meta(c, "process_name", pid, pid, name, 0);
				guest_named = true;
			}
			snprintf(name, sizeof(name), "%s (guest tid %" PRIu32 ")", comm, th->tid);
			meta(c, "thread_name", pid, tid, name, (int)th->tid);
			continue;
		}
		if (tid == pid || !th->pid)
			meta(c, "process_name", pid, pid, process_name(c, pid), 1);
		meta(c, "thread_name", pid, tid, comm, (int)th->tid);
	}
}

/* Running slices on their threads' tracks and on their CPUs'. */
static void put_slices(struct ctx *c, const struct vperf_report_slice *s, size_t nr)
{
	char buf[32];

	for (size_t i = 0; i < nr; i++) {
		uint32_t pid, tid;

		ids_of(c, s[i].thread, &pid, &tid);
		begin(c, "X", "running", "sched", pid, tid, s[i].start);
		put_us(c->out, "dur", s[i].end - s[i].start);
		fprintf(c->out, ",\"args\":{\"cpu\":%" PRIu32 ",\"left\":\"%s\"}}", s[i].cpu,
			s[i].preempted ? "preempted" : "blocked or exited");
		cpu_ids(apart(c, s[i].thread), s[i].cpu, &pid, &tid);
		begin(c, "X", vperf_report__thread_name(c->r, s[i].thread, buf, sizeof(buf)), "cpu",
		      pid, tid, s[i].start);
		put_us(c->out, "dur", s[i].end - s[i].start);
		fprintf(c->out, ",\"args\":{\"tid\":%" PRIu32 "}}", c->r->threads[s[i].thread].tid);
	}
}

/*
 * A VM recording's guest threads in their states (docs/states.md), as slices on their tracks,
 * category "state": the waits and runnable time between their running slices, and within them
 * their vCPU's time in the host (exits, preemption, sleep).  Running itself is "running" above.
 */
static int put_states(struct ctx *c)
{
	struct vperf_report_analysis a;
	int err = vperf_report__analyse(c->r, VPERF_ANALYSE_SPANS, &a);

	if (err)
		return err == -ENOENT ? 0 : err;
	for (size_t i = 0; i < a.nr_spans; i++) {
		const struct vperf_report_span *sp = &a.spans[i];
		uint32_t pid, tid;

		if (sp->state == VPERF_STATE_GUEST || !c->used[sp->thread])
			continue;
		ids_of(c, sp->thread, &pid, &tid);
		begin(c, "X", vperf_report_state_names[sp->state], "state", pid, tid, sp->start);
		put_us(c->out, "dur", sp->end - sp->start);
		if (sp->vcpu != UINT32_MAX)
			fprintf(c->out, ",\"args\":{\"vcpu\":%" PRIu32 "}", sp->vcpu);
		fputc('}', c->out);
	}
	vperf_report_analysis__exit(&a);
	return 0;
}

static void put_samples(struct ctx *c, int event)
{
	struct vperf_report *r = c->r;
	char name[512];

	for (size_t i = 0; i < r->nr_samples; i++) {
		const struct vperf_report_sample *s = &r->samples[i];
		const struct vperf_report_frame *f;
		uint32_t pid, tid;

		if ((event >= 0 && s->event != (uint32_t)event) || !c->used[s->thread])
			continue;
		f = vperf_report__frame(r, s->frame);
		ids_of(c, s->thread, &pid, &tid);
		begin(c, "i", vperf_report__frame_name(r, s->frame, name, sizeof(name)), "sample",
		      pid, tid, s->ts);
		fprintf(c->out, ",\"s\":\"t\",\"args\":{\"event\":");
		esc_json(c->out, r->events[s->event]);
		fputc(',', c->out);
		put_arg_str(c->out, "dso", f->dso ? f->dso : VPERF_REPORT_UNKNOWN);
		fprintf(c->out, ",\"ip\":\"0x%" PRIx64 "\",\"period\":%" PRIu64 ",\"cpu\":%" PRIu32
			",\"layer\":\"%s\"}}", f->ip, s->period, s->cpu,
			s->layer < 5 ? vperf_schema_layer_names[s->layer] : "?");
	}
}

/*
 * Counter tracks: at each sample, its thread's count of the sampled event so far (the sum of the
 * periods of its samples of that event: a period is the events since the thread's previous
 * sample); a sample of vperf_guest.ko's sampling NMI carries the thread's vperf counts
 * themselves, each its own track.  A "C" event's track is its process and name, so the name
 * carries the thread: "cpu-clock, tid 1234".
 */
static int put_counters(struct ctx *c, int event)
{
	struct vperf_report *r = c->r;
	uint64_t *sum = calloc(r->nr_threads * (r->nr_events ? r->nr_events : 1), sizeof(*sum));
	char name[300];

	if (!sum)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_samples; i++) {
		const struct vperf_report_sample *s = &r->samples[i];
		uint64_t *n = &sum[(size_t)s->thread * r->nr_events + s->event];
		uint32_t pid, tid;

		if ((event >= 0 && s->event != (uint32_t)event) || !c->used[s->thread])
			continue;
		ids_of(c, s->thread, &pid, &tid);
		/* the sampling NMI's: the thread's own counts then, one track each */
		for (size_t k = 0; k < s->nr_counts && k < 3; k++) {
			snprintf(name, sizeof(name), "%s, tid %" PRIu32, vperf_report_count_names[k],
				 r->threads[s->thread].tid);
			begin(c, "C", name, "counter", pid, tid, s->ts);
			fprintf(c->out, ",\"args\":{\"count\":%" PRIu64 "}}",
				r->counts[s->counts + k]);
		}
		if (s->nr_counts)
			continue;
		*n += s->period;
		snprintf(name, sizeof(name), "%s, tid %" PRIu32, r->events[s->event],
			 r->threads[s->thread].tid);
		begin(c, "C", name, "counter", pid, tid, s->ts);
		fprintf(c->out, ",\"args\":{\"count\":%" PRIu64 "}}", *n);
	}
	free(sum);
	return 0;
}

/* fork, exec, exit, wakeups, losses, markers and VMM exits. */
static void put_events(struct ctx *c)
{
	static const char *const marker_ph[3] = { "B", "E", "i" };
	struct vperf_report *r = c->r;
	char name[96];

	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		uint32_t pid, tid;
		bool on_thread = e->thread >= 0 && c->used[e->thread];

		if (on_thread)
			ids_of(c, e->thread, &pid, &tid);
		switch (e->kind) {
		case VPERF_REPORT_EV_FORK:
		case VPERF_REPORT_EV_EXEC:
		case VPERF_REPORT_EV_EXIT:
		case VPERF_REPORT_EV_WAKEUP:
			if (!on_thread)
				break;
			begin(c, "i", vperf_report_ev_names[e->kind], "process", pid, tid, e->ts);
			fputs(",\"s\":\"t\",\"args\":{", c->out);
			if (e->kind == VPERF_REPORT_EV_FORK && e->other >= 0)
				fprintf(c->out, "\"parent_tid\":%" PRIu32,
					r->threads[e->other].tid);
			else if (e->kind == VPERF_REPORT_EV_EXEC && e->str != UINT32_MAX)
				put_arg_str(c->out, "filename", r->strings[e->str]);
			else if (e->kind == VPERF_REPORT_EV_EXIT && e->arg != (uint64_t)INT64_MIN)
				fprintf(c->out, "\"exit_code\":%" PRId64, (int64_t)e->arg);
			else if (e->kind == VPERF_REPORT_EV_WAKEUP)
				fprintf(c->out, "\"waker_tid\":%" PRIu64, e->arg);
			fputs("}}", c->out);
			break;
		case VPERF_REPORT_EV_LOST:
			snprintf(name, sizeof(name), "lost %" PRIu64 " events", e->arg);
			cpu_ids(c->vm && (e->layer == 2 || e->layer == 3), e->cpu, &pid, &tid);
			begin(c, "i", name, "lost", pid, tid, e->ts);
			fprintf(c->out, ",\"s\":\"g\",\"args\":{\"count\":%" PRIu64
				",\"cpu\":%" PRIu32 ",\"layer\":\"%s\"}}", e->arg, e->cpu,
				e->layer < 5 ? vperf_schema_layer_names[e->layer] : "?");
			break;
		case VPERF_REPORT_EV_MARKER:
			if (!on_thread)
				cpu_ids(c->vm, e->cpu, &pid, &tid);
			begin(c, marker_ph[e->arg2 < 3 ? e->arg2 : 2],
			      e->str != UINT32_MAX ? r->strings[e->str] : "marker", "marker", pid,
			      tid, e->ts);
			fprintf(c->out, "%s,\"args\":{\"value\":%" PRIu64 "}}",
				e->arg2 >= 2 ? ",\"s\":\"t\"" : "", e->arg);
			break;
		case VPERF_REPORT_EV_VMM_EXIT:
			cpu_ids(true, e->cpu, &pid, &tid);
			begin(c, "X", e->str != UINT32_MAX ? r->strings[e->str] : "exit",
			      "vmm_exit", pid, tid, e->ts);
			put_us(c->out, "dur", e->arg);
			fprintf(c->out, ",\"args\":{\"reason\":%" PRIu64 "}}", e->arg2);
			break;
		default:
			break;
		}
	}
}

int vperf_export_chrome(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len)
{
	struct ctx c = { .r = r, .out = out, .vm = r->vm_name != NULL, .first = true };
	struct vperf_report_slice *s;
	size_t nr, nr_cpus = 0, nr_vcpus = 0;
	int err = vperf_report__running(r, &s, &nr);

	if (!err)
		c.used = vperf_report__shown(r, s, nr, event);
	if (err || !c.used) {
		free(s);
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	/* which CPU and vCPU tracks have something on them */
	for (size_t i = 0; i < nr; i++) {
		size_t *n = apart(&c, s[i].thread) ? &nr_vcpus : &nr_cpus;

		if (s[i].cpu + 1 > *n)
			*n = s[i].cpu + 1;
	}
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		bool g = c.vm && (e->kind == VPERF_REPORT_EV_VMM_EXIT || e->layer == 2 ||
				  e->layer == 3);

		if (e->kind != VPERF_REPORT_EV_VMM_EXIT && e->kind != VPERF_REPORT_EV_LOST &&
		    !(e->kind == VPERF_REPORT_EV_MARKER && e->thread < 0))
			continue;
		if (g && e->cpu + 1 > nr_vcpus)
			nr_vcpus = e->cpu + 1;
		else if (!g && e->cpu + 1 > nr_cpus)
			nr_cpus = e->cpu + 1;
	}
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"recording\":", out);
	esc_json(out, r->dir);
	fputs(",\"clock\":\"the recording's, in us\"", out);
	if (r->vm_name) {
		fputc(',', out);
		put_arg_str(out, "vm_name", r->vm_name);
	}
	fprintf(out, ",\"lost\":%" PRIu64 "},\"traceEvents\":[", r->lost);
	put_names(&c, nr_cpus, nr_vcpus);
	put_slices(&c, s, nr);
	err = c.vm ? put_states(&c) : 0;
	if (!err) {
		put_samples(&c, event);
		err = put_counters(&c, event);
	}
	if (err)
		goto out;
	put_events(&c);
	fputs("\n]}\n", out);
out:
	free(c.used);
	free(s);
	if (err)
		snprintf(why, why_len, "out of memory");
	return err;
}
