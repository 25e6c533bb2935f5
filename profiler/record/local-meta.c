// SPDX-License-Identifier: MIT
/*
 * What the local recorder's recording holds beyond the rings (local-int.h): a running process's
 * mappings and thread names from /proc, the kernel symbols its samples hit, the vDSO's image,
 * and the environment (what was recorded, how, and the summary).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ksyms.h"
#include "local-int.h"

/* ---- what samples resolve against, beyond the rings ---- */

/*
 * -p: the process was running before the events were opened, so its mappings and its threads'
 * names come from /proc, as mmap and comm events at the start (ts).  A process gone meanwhile
 * leaves fewer; not an error.
 */
int vperf__local_synth_process(struct vperf_local *rc, const pid_t *tids, size_t nr_tids, uint64_t ts)
{
	char path[96], line[4096 + 128];
	pid_t pid = rc->cfg.pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], *name = NULL;
		int pos = 0;
		struct pend *p;

		/* "start-end perms offset dev inode   path" */
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &pos) < 4 || perms[2] != 'x' || !pos)
			continue;
		name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			continue;	/* anonymous executable memory (a JIT): no file */
		p = vperf__local_pend_new(rc);
		if (!p || !(p->name = strdup(name))) {
			if (p)
				vperf_ordered__unqueue(&rc->pend);
			fclose(f);
			return -ENOMEM;
		}
		p->kind = P_MMAP;
		p->layer = vperf__local_kernel_layer(rc);
		p->h.ts = ts;
		p->cpu = (uint32_t)rc->cpus[0];
		p->a = p->b = (uint32_t)pid;
		p->c = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
		       (perms[1] == 'w' ? PROT_WRITE : 0);
		p->start = start;
		p->len = end - start;
		p->pgoff = off;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < nr_tids; i++) {
		struct pend *p;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(line, 1, VPERF_PERFDEC_COMM_LEN, f);
		fclose(f);
		line[n] = 0;
		line[strcspn(line, "\n")] = 0;
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_COMM;
		p->layer = vperf__local_kernel_layer(rc);
		p->h.ts = ts;
		p->cpu = (uint32_t)rc->cpus[0];
		p->a = (uint32_t)pid;
		p->b = (uint32_t)tids[i];
		memcpy(p->comm, line, n + 1);
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The kernel symbols the samples hit (ip or callchain), from /proc/kallsyms at the end, as
 * kernel_symbol events: start, size (to the next symbol), name, module ("" for the kernel).
 * Only those: all of kallsyms is megabytes.  None, with ksyms_why, when there is nothing to
 * resolve or kallsyms shows no addresses (kernel.kptr_restrict, not root).
 */
int vperf__local_emit_kernel_symbols(struct vperf_local *rc)
{
	struct vperf_ctf_stream *s;
	struct vperf_ksyms k;
	const struct vperf_ksym *last = NULL;
	uint64_t *ips = NULL;
	size_t n = 0;
	int err;

	if (!rc->nr_kips) {
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "no sample hit the kernel");
		return 0;
	}
	err = vperf_ksyms__read(&k, "/proc/kallsyms", VPERF_KSYMS_TEXT_ONLY);
	if (err) {
		vperf_ksyms__exit(&k);
		if (err == -ENOMEM)
			return err;
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "cannot read /proc/kallsyms: %s",
			 strerror(-err));
		return 0;
	}
	if (!k.nr || !k.sym[k.nr - 1].addr) {
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "/proc/kallsyms shows no addresses "
			 "here (kernel.kptr_restrict, or not root)");
		goto out;
	}
	ips = malloc(rc->nr_kips * sizeof(*ips));
	err = ips ? vperf_ctf__stream(rc->ctf, vperf__local_kernel_layer(rc), (uint32_t)rc->cpus[0],
				      &s) : -ENOMEM;
	if (err)
		goto out;
	for (size_t i = 0; i < rc->cap_kips; i++)
		if (rc->kips[i])
			ips[n++] = rc->kips[i];
	qsort(ips, n, sizeof(*ips), u64_cmp);
	for (size_t i = 0; i < n && !err; i++) {
		const struct vperf_ksym *y = vperf_ksyms__find(&k, ips[i]);

		if (!y || y == last)
			continue;	/* no symbol holds it, or the symbol is written already */
		last = y;
		err = vperf_ev__kernel_symbol(s, rc->last_ts, &(struct vperf_ev_kernel_symbol){
			.addr = y->addr, .size = vperf_ksyms__size(&k, y), .name = y->name,
			.module = y->module });
		rc->ksyms += !err;
		rc->events += !err;
	}
out:
	free(ips);
	vperf_ksyms__exit(&k);
	return err;
}

/* The vDSO's image into DIR/.vdso.so, so that a report can name [vdso] frames anywhere. */
void vperf__local_keep_vdso(struct vperf_local *rc, const char *dir)
{
	char path[PATH_MAX];
	int64_t n = -ENAMETOOLONG;

	if (snprintf(path, sizeof(path), "%s/" VPERF_VDSO_FILE, dir) < (int)sizeof(path))
		n = vperf_vdso__save(path);
	if (n >= 0)
		snprintf(rc->vdso_note, sizeof(rc->vdso_note), "%s (%" PRId64 " bytes, the recorder's "
			 "own: this kernel's 64-bit vDSO)", VPERF_VDSO_FILE, n);
	else
		snprintf(rc->vdso_note, sizeof(rc->vdso_note), "none: %s", n == -ENOENT ?
			 "this process has no vDSO mapped" : strerror((int)-n));
}

struct envbuf {
	struct vperf_ctf_env e[32];
	char v[32][512];
	size_t n;
};

static void env_add(struct envbuf *b, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void env_add(struct envbuf *b, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (b->n == sizeof(b->e) / sizeof(b->e[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(b->v[b->n], sizeof(b->v[b->n]), fmt, ap);
	va_end(ap);
	/* metadata text: printable ASCII without quotes or backslashes */
	for (char *c = b->v[b->n]; *c; c++)
		if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
			*c = '?';
	b->e[b->n] = (struct vperf_ctf_env){ key, b->v[b->n], false };
	b->n++;
}

int vperf__local_write_summary(struct vperf_local *rc, int status, bool have_status)
{
	struct envbuf b = { .n = 0 };
	char by[512] = "";
	size_t off = 0;
	int err = 0;

	for (int e = 0; e < rc->cfg.nr_events && off < sizeof(by); e++)
		off += (size_t)snprintf(by + off, sizeof(by) - off, "%s%s=%" PRIu64, e ? "," : "",
					rc->cfg.events[e], rc->samples_by[e]);
	env_add(&b, "summary_duration_ns", "%" PRIu64, rc->last_ts - rc->first_ts);
	env_add(&b, "summary_events", "%" PRIu64, rc->events);
	env_add(&b, "summary_samples", "%" PRIu64, rc->samples);
	env_add(&b, "summary_samples_by_event", "%s", by);
	env_add(&b, "summary_forks", "%" PRIu64, rc->forks);
	env_add(&b, "summary_execs", "%" PRIu64, rc->execs);
	env_add(&b, "summary_exits", "%" PRIu64, rc->exits);
	env_add(&b, "summary_switches", "%" PRIu64, rc->switches);
	env_add(&b, "summary_switch_outs", "%" PRIu64, rc->switch_outs);
	env_add(&b, "summary_sched_switches", "%" PRIu64, rc->sched_switches);
	env_add(&b, "summary_sched_switch_outs", "%" PRIu64, rc->sched_switch_outs);
	env_add(&b, "summary_sched_wakeups", "%" PRIu64, rc->sched_wakeups);
	env_add(&b, "summary_sched_other", "%" PRIu64, rc->sched_other);
	env_add(&b, "summary_lost_ring", "%" PRIu64, rc->lost_ring);
	env_add(&b, "summary_lost_samples", "%" PRIu64, rc->lost_samples);
	env_add(&b, "summary_throttles", "%" PRIu64, rc->throttles);
	env_add(&b, "summary_late", "%" PRIu64, rc->pend.late);
	env_add(&b, "summary_bad_records", "%" PRIu64, rc->bad_records);
	env_add(&b, "summary_bad_bytes", "%" PRIu64, rc->bad_bytes);
	env_add(&b, "summary_callchains_truncated", "%" PRIu64, rc->chain_trunc);
	env_add(&b, "summary_mmaps", "%" PRIu64, rc->mmaps);
	env_add(&b, "summary_comms", "%" PRIu64, rc->comms);
	if (rc->ksyms)
		env_add(&b, "kernel_symbols", "%" PRIu64 " (those samples hit, from /proc/kallsyms "
			"at the end)", rc->ksyms);
	else
		env_add(&b, "kernel_symbols", "none: %s", rc->ksyms_why);
	env_add(&b, "vdso", "%s", rc->vdso_note);
	if (have_status)
		env_add(&b, "workload_status", "%d", status);
	for (size_t i = 0; i < b.n && !err; i++)
		err = vperf_ctf__add_env(rc->ctf, b.e[i].key, b.e[i].value);
	return err;
}

int vperf__local_make_writer(struct vperf_local *rc, const char *dir, struct vperf_schema *sch)
{
	struct envbuf b = { .n = 0 };
	char evs[1024] = "";
	size_t off = 0;
	uint64_t mono = vperf__local_now_ns(CLOCK_MONOTONIC);
	uint64_t real = vperf__local_now_ns(CLOCK_REALTIME);
	int64_t offs = (int64_t)(real - mono);
	char why[512];

	vperf_schema__init(sch, rc->cfg.events, (size_t)rc->cfg.nr_events);
	env_add(&b, "schema_version", "%d", VPERF_SCHEMA_VERSION);
	b.e[b.n - 1].integer = true;
	for (int e = 0; e < rc->cfg.nr_events && off < sizeof(evs); e++)
		off += (size_t)snprintf(evs + off, sizeof(evs) - off, "%s%s", e ? "," : "",
					rc->cfg.events[e]);
	env_add(&b, "recorder", "vperf record");
	env_add(&b, "machine", "%s", rc->guest ? "guest" : "host");
	env_add(&b, "target", "%s", rc->cfg.target ? rc->cfg.target : "");
	env_add(&b, "events", "%s", evs);
	if (rc->cfg.period)
		env_add(&b, "sample_period", "%" PRIu64, rc->cfg.period);
	else
		env_add(&b, "sample_freq", "%" PRIu64, rc->cfg.freq);
	env_add(&b, "callchains", "%d", rc->cfg.callchain ? 1 : 0);
	env_add(&b, "kernel_samples", "%s", rc->user_only ? "no: not allowed here or excluded "
		"by the event's modifier" : "yes");
	env_add(&b, "nr_cpus", "%zu", rc->nr_cpus);
	env_add(&b, "ring_pages", "%u", rc->cfg.pages);
	if (rc->sched.on)
		env_add(&b, "sched_events", "thread_switch (perf context_switch records), and "
			"sched_switch and sched_wakeup of the recorded threads (the system-wide sched "
			"tracepoints, filtered by the recorder)");
	else
		env_add(&b, "sched_events", "thread_switch (perf context_switch records) only; "
			"sched_switch and sched_wakeup not recorded: %s", rc->sched.why);
	{
		struct vperf_ctf_config cfg = {
			.size = sizeof(cfg),
			.clock_name = "monotonic",
			.clock_description = "CLOCK_MONOTONIC of the recording machine, in ns",
			.clock_offset_s = offs / 1000000000,
			.clock_offset = offs % 1000000000,
			.layers = (1u << vperf__local_kernel_layer(rc)) |
				  (1u << vperf__local_user_layer(rc)),
			.clock_note = "perf_event time stamps taken on CLOCK_MONOTONIC "
				      "(use_clockid); the clock offset is CLOCK_REALTIME - "
				      "CLOCK_MONOTONIC at the start",
			.env = b.e,
			.nr_env = b.n,
			.classes = sch->classes,
			.nr_classes = VPERF_EV_NR,
		};
		int err = vperf_ctf__new(dir, &cfg, &rc->ctf, why, sizeof(why));

		if (err)
			return vperf__local_fail(rc, err, "cannot create the recording %s: %s",
						 dir, why);
	}
	return 0;
}


