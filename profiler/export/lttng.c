// SPDX-License-Identifier: MIT
/*
 * `vperf export --to ctf`: a recording's kernel events as LTTng kernel traces (export.h,
 * docs/report.md section 3), for Trace Compass's Linux kernel analysis (Resources and Control
 * Flow views) and anything else that reads lttng-modules traces.
 *
 * One CTF trace per machine under the output directory: host/ (the host's kernel events) and,
 * for a `vperf vm record` recording, guest/ (the guest kernel's).  Each has the environment of
 * an lttng-modules 2.12 trace (domain "kernel", tracer_name "lttng-modules", tracer_major and
 * tracer_minor as integers: Trace Compass picks its event layout from them), one stream per CPU
 * (vCPU for the guest) with the CPU in the packet context's cpu_id, and LTTng's event and field
 * names:
 *   sched_switch        prev_comm prev_tid prev_prio prev_state next_comm next_tid next_prio
 *   sched_wakeup        comm tid prio target_cpu
 *   sched_process_fork  parent_comm parent_tid parent_pid child_comm child_tid child_pid
 *   sched_process_exec  filename tid old_tid
 *   sched_process_exit  comm tid prio
 *   kvm_x86_entry       vcpu_id                      (host)
 *   kvm_x86_exit        exit_reason vcpu_id          (host)
 *   vmsync_gh_guest     cnt vm_uid                   (guest)
 *   vmsync_gh_host      cnt vm_uid                   (host)
 * The vmsync pair is lttng-modules' VM synchronization addon's (a message from the guest to the
 * host, numbered): Trace Compass's virtual machine analysis ties a guest trace to its host's
 * vCPU threads by them.  vperf's are its TRACE_FLUSH hypercalls: the guest's event when it
 * asked (on that vCPU), the host's when the VMM handled it (on the host CPU running that
 * vCPU's thread then); vm_uid is the VMM's pid.
 * vperf records no priorities: the prio fields, which Trace Compass's handlers read, hold
 * VPERF_LTTNG_NO_PRIO.  Our writer puts each string's length before it (a field NAME_len):
 * readers that look fields up by name do not see it.  Lost events go to the packets'
 * events_discarded, as LTTng's do.  Not exported: samples (pprof, folded, chrome carry them),
 * perf's thread_switch (no LTTng event: sched_switch is the kernel's), markers, the VMM's exits
 * and guest interrupts (LTTng's irq_handler_entry needs its exit, which is not recorded).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctf.h"
#include "escape.h"
#include "export.h"

#define STR(n)	{ n, VPERF_CTF_TYPE_STRING, 0, NULL, 0 }
#define U32(n)	{ n, VPERF_CTF_TYPE_U32, 0, NULL, 0 }
#define S64(n)	{ n, VPERF_CTF_TYPE_S64, 0, NULL, 0 }
#define U64(n)	{ n, VPERF_CTF_TYPE_U64, 0, NULL, 0 }

static const struct vperf_ctf_field_desc f_switch[] = {
	STR("prev_comm"), U32("prev_tid"), S64("prev_prio"), S64("prev_state"),
	STR("next_comm"), U32("next_tid"), S64("next_prio"),
};
static const struct vperf_ctf_field_desc f_wakeup[] = {
	STR("comm"), U32("tid"), S64("prio"), U32("target_cpu"),
};
static const struct vperf_ctf_field_desc f_fork[] = {
	STR("parent_comm"), U32("parent_tid"), U32("parent_pid"),
	STR("child_comm"), U32("child_tid"), U32("child_pid"),
};
static const struct vperf_ctf_field_desc f_exec[] = { STR("filename"), U32("tid"), U32("old_tid") };
static const struct vperf_ctf_field_desc f_exit[] = { STR("comm"), U32("tid"), S64("prio") };
static const struct vperf_ctf_field_desc f_kvm_entry[] = { U32("vcpu_id") };
static const struct vperf_ctf_field_desc f_kvm_exit[] = { U32("exit_reason"), U32("vcpu_id") };
static const struct vperf_ctf_field_desc f_vmsync[] = { U32("cnt"), U64("vm_uid") };

enum { C_SWITCH, C_WAKEUP, C_FORK, C_EXEC, C_EXIT, C_KVM_ENTRY, C_KVM_EXIT, C_GH_GUEST,
       C_GH_HOST, NR_C };

#define CLASS(name, f) { name, f, sizeof(f) / sizeof(f[0]) }
static const struct vperf_ctf_class_desc classes[NR_C] = {
	[C_SWITCH] = CLASS("sched_switch", f_switch),
	[C_WAKEUP] = CLASS("sched_wakeup", f_wakeup),
	[C_FORK] = CLASS("sched_process_fork", f_fork),
	[C_EXEC] = CLASS("sched_process_exec", f_exec),
	[C_EXIT] = CLASS("sched_process_exit", f_exit),
	[C_KVM_ENTRY] = CLASS("kvm_x86_entry", f_kvm_entry),
	[C_KVM_EXIT] = CLASS("kvm_x86_exit", f_kvm_exit),
	[C_GH_GUEST] = CLASS("vmsync_gh_guest", f_vmsync),
	[C_GH_HOST] = CLASS("vmsync_gh_host", f_vmsync),
};

/* vCPUs whose threads the export follows (vmsync_gh_host's CPU) */
#define MAX_VCPUS	256

/* Events between flushes: bounds the writer's memory. */
#define FLUSH_EVERY	65536

struct machine {
	struct vperf_ctf *ctf;
	size_t queued;
};

struct lttng {
	struct vperf_report *r;
	struct machine m[2];		/* host, guest */
	char (*name)[16];		/* per thread: its name at the event being written */
	int32_t *running;		/* per host CPU: the thread on it now (-1: not known) */
	int32_t vcpu_thread[MAX_VCPUS];	/* each vCPU's thread, as kvm_entry/kvm_exit name it */
	int64_t vcpu_cpu[MAX_VCPUS];	/* the host CPU of its last kvm_entry/kvm_exit (-1) */
	char *why;
	size_t why_len;
	char text[2][VPERF_CTF_MAX_STRING + 1];	/* the event's strings as text */
};

static const char *name_of(const struct vperf_report *r, uint64_t comm)
{
	return comm < r->nr_strings ? r->strings[comm] : "";
}

/*
 * s as text (escape.h) in x's slot i, cut to what the writer takes: the recording's names may be
 * anything, and the CTF writer refuses invalid UTF-8 (and babeltrace2 prints what it holds).
 */
static const char *text(struct lttng *x, int i, const char *s)
{
	return esc_text_buf(x->text[i], sizeof(x->text[i]), s);
}

/* Thread t's name as of the event being written (else its last in the recording). */
static const char *comm_of(const struct lttng *x, int32_t t)
{
	if (t < 0)
		return "";
	return x->name[t][0] ? x->name[t] : name_of(x->r, x->r->threads[t].comm);
}

static void set_name(struct lttng *x, int32_t t, const char *name)
{
	if (t >= 0 && name && *name)
		snprintf(x->name[t], sizeof(x->name[t]), "%s", name);
}

/*
 * Follow the names threads had, in time order: what a sched_switch says, a child its parent's
 * (fork copies it), an exec the base name of the file (the kernel's comm, 15 bytes at most).
 */
static void follow_names(struct lttng *x, const struct vperf_report_tlev *e)
{
	const struct vperf_report *r = x->r;
	const char *file, *slash;

	switch (e->kind) {
	case VPERF_REPORT_EV_SCHED_SWITCH:
		set_name(x, e->thread, name_of(r, e->arg2));
		set_name(x, e->other, name_of(r, e->str));
		break;
	case VPERF_REPORT_EV_FORK:
		if (e->other >= 0 && e->thread >= 0)
			set_name(x, e->thread, comm_of(x, e->other));
		break;
	case VPERF_REPORT_EV_EXEC:
		file = e->str != UINT32_MAX ? r->strings[e->str] : "";
		slash = strrchr(file, '/');
		set_name(x, e->thread, slash ? slash + 1 : file);
		break;
	default:
		break;
	}
}

/* The host's CPUs' threads and the vCPUs' threads, in time order (for vmsync_gh_host). */
static void follow_cpus(struct lttng *x, const struct vperf_report_tlev *e)
{
	bool host = e->layer == VPERF_CTF_HOST_KERNEL;

	if (!host)
		return;
	if (e->kind == VPERF_REPORT_EV_SCHED_SWITCH && e->cpu < x->r->nr_cpus)
		x->running[e->cpu] = e->other;
	if ((e->kind == VPERF_REPORT_EV_KVM_ENTRY || e->kind == VPERF_REPORT_EV_KVM_EXIT) &&
	    e->arg2 < MAX_VCPUS && e->thread >= 0) {
		x->vcpu_thread[e->arg2] = e->thread;
		x->vcpu_cpu[e->arg2] = e->cpu;
	}
}

/* The host CPU running vCPU v's thread now: by the host's sched_switch, else its last KVM event. */
static int64_t cpu_of_vcpu(const struct lttng *x, uint32_t v)
{
	if (v >= MAX_VCPUS || x->vcpu_thread[v] < 0)
		return -1;
	for (uint32_t c = 0; c < x->r->nr_cpus; c++)
		if (x->running[c] == x->vcpu_thread[v])
			return c;
	return x->vcpu_cpu[v];
}

static uint32_t tid_of(const struct vperf_report *r, int32_t t)
{
	return t >= 0 ? r->threads[t].tid : 0;
}

static uint32_t pid_of(const struct vperf_report *r, int32_t t)
{
	if (t < 0)
		return 0;
	return r->threads[t].pid ? r->threads[t].pid : r->threads[t].tid;
}

/* Printable ASCII without '"' and '\\' (what an environment value may hold), else '?'. */
static void env_text(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; src && *src && i + 1 < len; src++, i++)
		dst[i] = (*src >= 0x20 && *src < 0x7f && *src != '"' && *src != '\\') ? *src : '?';
	dst[i] = 0;
}

static int open_machine(struct lttng *x, int which, const char *dir)
{
	const struct vperf_report *r = x->r;
	char path[PATH_MAX], host[256], source[PATH_MAX + 64], why[512];
	struct vperf_ctf_env env[] = {
		{ "domain", "kernel", false },
		{ "tracer_name", "lttng-modules", false },
		{ "tracer_major", "2", true },
		{ "tracer_minor", "12", true },
		{ "tracer_patchlevel", "0", true },
		{ "sysname", "Linux", false },
		{ "vperf_source", source, false },
	};
	struct vperf_ctf_config cfg = {
		.size = sizeof(cfg),
		.clock_name = "monotonic",
		.clock_description = "the vperf recording's clock",
		.clock_offset_s = r->clock_offset_s,
		.clock_offset = (int64_t)r->clock_offset_ns,
		.clock_absolute = r->clock_absolute,
		.hostname = host,
		.env = env,
		.nr_env = sizeof(env) / sizeof(env[0]),
		.classes = classes,
		.nr_classes = NR_C,
	};
	int err;

	if (which)
		snprintf(path, sizeof(path), "%s/guest", dir);
	else
		snprintf(path, sizeof(path), "%s/host", dir);
	/* Trace Compass tells machines apart by hostname: the guest's is the VM's name */
	env_text(host, sizeof(host), which ? r->vm_name : (r->hostname ? r->hostname : "host"));
	if (which && !strcmp(host, r->hostname ? r->hostname : "host"))
		strncat(host, "-guest", sizeof(host) - strlen(host) - 1);
	snprintf(source, sizeof(source), "vperf export --to ctf of %s (%s)", r->dir,
		 which ? "the guest's kernel events" : "the host's kernel events");
	env_text(source, sizeof(source), source);
	err = vperf_ctf__new(path, &cfg, &x->m[which].ctf, why, sizeof(why));
	if (err)
		snprintf(x->why, x->why_len, "%s: %s", path, why);
	return err;
}

/* e's machine (host or guest) and its stream there, on e's CPU: 0, or -errno with why. */
static int stream_of(struct lttng *x, const struct vperf_report_tlev *e, struct machine **m,
		     struct vperf_ctf_stream **s)
{
	bool guest = e->layer == VPERF_CTF_GUEST_KERNEL || e->layer == VPERF_CTF_GUEST_USER;
	int err;

	*m = &x->m[guest];
	*s = NULL;
	if (!(*m)->ctf)
		return 0;
	err = vperf_ctf__stream((*m)->ctf, guest ? VPERF_CTF_GUEST_KERNEL : VPERF_CTF_HOST_KERNEL,
				e->cpu, s);
	if (err)
		snprintf(x->why, x->why_len, "%s", vperf_ctf__strerror((*m)->ctf));
	return err;
}

static int emit(struct lttng *x, const struct vperf_report_tlev *e, unsigned int cls,
		const struct vperf_ctf_value *v, size_t n)
{
	struct machine *m;
	struct vperf_ctf_stream *s;
	int err = stream_of(x, e, &m, &s);

	if (err || !s)
		return err;
	err = vperf_ctf__emit(s, cls, e->ts, v, n);
	if (!err && ++m->queued >= FLUSH_EVERY) {
		m->queued = 0;
		err = vperf_ctf__flush(m->ctf);
	}
	if (err)
		snprintf(x->why, x->why_len, "%s", vperf_ctf__strerror(m->ctf));
	return err;
}

static int lost(struct lttng *x, const struct vperf_report_tlev *e)
{
	struct machine *m;
	struct vperf_ctf_stream *s;
	int err;

	if (e->layer == VPERF_CTF_VMM)	/* the VMM's losses: no kernel stream of theirs */
		return 0;
	err = stream_of(x, e, &m, &s);
	if (err || !s)
		return err;
	err = vperf_ctf__lost(s, e->ts, e->arg);
	if (err)
		snprintf(x->why, x->why_len, "%s", vperf_ctf__strerror(m->ctf));
	return err;
}

static int put_event(struct lttng *x, const struct vperf_report_tlev *e)
{
	const struct vperf_report *r = x->r;
	const int64_t np = VPERF_LTTNG_NO_PRIO;

	switch (e->kind) {
	case VPERF_REPORT_EV_SCHED_SWITCH: {
		struct vperf_ctf_value v[] = {
			VPERF_CTF_STR(text(x, 0, name_of(r, e->arg2))),
			VPERF_CTF_U32(tid_of(r, e->thread)),
			VPERF_CTF_S64(np), VPERF_CTF_S64((int64_t)e->arg),
			VPERF_CTF_STR(text(x, 1, name_of(r, e->str))),
			VPERF_CTF_U32(tid_of(r, e->other)),
			VPERF_CTF_S64(np),
		};
		return emit(x, e, C_SWITCH, v, sizeof(v) / sizeof(v[0]));
	}
	case VPERF_REPORT_EV_WAKEUP: {
		struct vperf_ctf_value v[] = {
			VPERF_CTF_STR(text(x, 0, comm_of(x, e->thread))),
			VPERF_CTF_U32(tid_of(r, e->thread)), VPERF_CTF_S64(np),
			VPERF_CTF_U32(e->arg2 <= UINT32_MAX ? (uint32_t)e->arg2 : e->cpu),
		};
		return emit(x, e, C_WAKEUP, v, sizeof(v) / sizeof(v[0]));
	}
	case VPERF_REPORT_EV_FORK: {
		/* the child's name is its parent's: fork copies it */
		struct vperf_ctf_value v[] = {
			VPERF_CTF_STR(text(x, 0, comm_of(x, e->other))),
			VPERF_CTF_U32(tid_of(r, e->other)), VPERF_CTF_U32(pid_of(r, e->other)),
			VPERF_CTF_STR(text(x, 1, comm_of(x, e->thread))),
			VPERF_CTF_U32(tid_of(r, e->thread)), VPERF_CTF_U32(pid_of(r, e->thread)),
		};
		return emit(x, e, C_FORK, v, sizeof(v) / sizeof(v[0]));
	}
	case VPERF_REPORT_EV_EXEC: {
		struct vperf_ctf_value v[] = {
			VPERF_CTF_STR(text(x, 0, e->str != UINT32_MAX ? r->strings[e->str] : "")),
			VPERF_CTF_U32(tid_of(r, e->thread)), VPERF_CTF_U32(tid_of(r, e->thread)),
		};
		return emit(x, e, C_EXEC, v, sizeof(v) / sizeof(v[0]));
	}
	case VPERF_REPORT_EV_EXIT: {
		struct vperf_ctf_value v[] = {
			VPERF_CTF_STR(text(x, 0, comm_of(x, e->thread))),
			VPERF_CTF_U32(tid_of(r, e->thread)), VPERF_CTF_S64(np),
		};
		return emit(x, e, C_EXIT, v, sizeof(v) / sizeof(v[0]));
	}
	case VPERF_REPORT_EV_KVM_ENTRY: {
		struct vperf_ctf_value v[] = { VPERF_CTF_U32((uint32_t)e->arg2) };

		return emit(x, e, C_KVM_ENTRY, v, 1);
	}
	case VPERF_REPORT_EV_KVM_EXIT: {
		struct vperf_ctf_value v[] = { VPERF_CTF_U32((uint32_t)e->arg),
					       VPERF_CTF_U32((uint32_t)e->arg2) };

		return emit(x, e, C_KVM_EXIT, v, 2);
	}
	case VPERF_REPORT_EV_FLUSH: {
		struct vperf_ctf_value v[] = { VPERF_CTF_U32((uint32_t)e->arg),
					       VPERF_CTF_U64(r->vmm_pid ? r->vmm_pid : 1) };
		struct vperf_report_tlev h;
		int64_t cpu;

		if (!e->arg2)	/* the guest asked: on its vCPU's stream */
			return emit(x, e, C_GH_GUEST, v, 2);
		cpu = cpu_of_vcpu(x, e->cpu);
		if (cpu < 0)
			return 0;	/* no host event named the vCPU's thread yet */
		h = *e;
		h.layer = VPERF_CTF_HOST_KERNEL;
		h.cpu = (uint32_t)cpu;
		return emit(x, &h, C_GH_HOST, v, 2);
	}
	case VPERF_REPORT_EV_LOST:
		return lost(x, e);
	default:
		return 0;
	}
}

int vperf_export_lttng(struct vperf_report *r, const char *dir, char *why, size_t why_len)
{
	struct lttng x = { .r = r, .why = why, .why_len = why_len };
	bool guest = r->vm_name != NULL;
	int err;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		err = -errno;
		snprintf(why, why_len, "cannot create %s: %s", dir, strerror(errno));
		return err;
	}
	err = open_machine(&x, 0, dir);
	if (!err && guest)
		err = open_machine(&x, 1, dir);
	x.name = calloc(r->nr_threads ? r->nr_threads : 1, sizeof(*x.name));
	x.running = malloc((r->nr_cpus ? r->nr_cpus : 1) * sizeof(*x.running));
	for (uint32_t c = 0; x.running && c < r->nr_cpus; c++)
		x.running[c] = -1;
	for (int v = 0; v < MAX_VCPUS; v++) {
		x.vcpu_thread[v] = -1;
		x.vcpu_cpu[v] = -1;
	}
	if ((!x.name || !x.running) && !err) {
		snprintf(why, why_len, "out of memory");
		err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < r->nr_tlevs; i++) {
		follow_names(&x, &r->tlevs[i]);
		follow_cpus(&x, &r->tlevs[i]);
		err = put_event(&x, &r->tlevs[i]);
	}
	free(x.name);
	free(x.running);
	for (int i = 0; i < 2; i++) {
		int e2 = x.m[i].ctf ? vperf_ctf__flush(x.m[i].ctf) : 0;

		if (e2 && !err) {
			snprintf(why, why_len, "%s", vperf_ctf__strerror(x.m[i].ctf));
			err = e2;
		}
		vperf_ctf__delete(x.m[i].ctf);
	}
	return err;
}
