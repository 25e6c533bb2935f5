// SPDX-License-Identifier: MIT
/*
 * The local recorder's sched tracepoints (local-int.h): sched_switch, sched_wakeup and
 * sched_waking system-wide where the kernel allows, their fields found in tracefs' formats,
 * their records queued for the recorded threads' filter (local.c writes them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "local-int.h"

/* ---- the sched tracepoints ---- */

static char *slurp_small(const char *path, size_t *len)
{
	char *buf = malloc(65536);
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	n = read(fd, buf, 65535);
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

/* Find the tracepoints' ids and layouts in tracefs; false with sched.why when they cannot be. */
static bool sched_formats(struct vperf_local *rc)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct sched_tp *st = &rc->sched;
	static const char *const swn[NR_SWITCH_F] = { "prev_comm", "prev_pid", "prev_state",
						      "next_comm", "next_pid" };
	static const char *const wkn[NR_WAKEUP_F] = { "pid", "target_cpu", "common_flags" };
	char path[256], why[160];
	const char *root = NULL;

	for (int i = 0; i < NR_SWITCH_F; i++)
		st->sw[i].name = swn[i];
	for (int t = TP_WAKEUP; t < NR_TP; t++)
		for (int i = 0; i < NR_WAKEUP_F; i++)
			st->wk[t][i].name = wkn[i];
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !root; i++) {
		snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", roots[i]);
		if (!access(path, R_OK))
			root = roots[i];
	}
	if (!root) {
		snprintf(st->why, sizeof(st->why), "no readable tracefs (/sys/kernel/tracing: not "
			 "mounted, or not root)");
		return false;
	}
	for (int t = 0; t < NR_TP; t++) {
		size_t len;
		char *text;
		int err;

		snprintf(path, sizeof(path), "%s/events/sched/%s/format", root, tp_names[t]);
		text = slurp_small(path, &len);
		if (!text) {
			snprintf(st->why, sizeof(st->why), "cannot read %s: %s", path, strerror(errno));
			return false;
		}
		err = vperf_tpfmt_parse(text, len, &st->id[t], t == TP_SWITCH ? st->sw : st->wk[t],
					t == TP_SWITCH ? NR_SWITCH_F : NR_WAKEUP_F, why, sizeof(why));
		free(text);
		if (err) {
			snprintf(st->why, sizeof(st->why), "%s: %s", path, why);
			return false;
		}
	}
	return true;
}

/*
 * sched_switch and sched_wakeup on every CPU (pid -1: all tasks; the recorder keeps those of its
 * threads), into each CPU's ring.  Not an error when the kernel refuses them: the recording
 * goes on without, and says why.
 */
void vperf__local_open_sched(struct vperf_local *rc)
{
	struct sched_tp *st = &rc->sched;
	size_t first = rc->nr_fds;

	if (!sched_formats(rc))
		return;
	for (size_t c = 0; c < rc->nr_rings; c++) {
		for (int t = 0; t < NR_TP; t++) {
			struct perf_event_attr a = {
				.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT,
				.config = (uint64_t)st->id[t], .sample_period = 1,
				.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
					       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
				.sample_id_all = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC,
				.disabled = 1,
			};
			uint64_t id;
			int fd = vperf__local_perf_open(&a, -1, rc->rings[c].cpu), err = 0;

			if (fd < 0) {
				snprintf(st->why, sizeof(st->why), "the kernel refused the system-wide "
					 "sched tracepoints (%s%s)", strerror(-fd),
					 fd == -EACCES || fd == -EPERM ? ": they need root or "
					 "CAP_PERFMON, or kernel.perf_event_paranoid -1" : "");
				goto undo;
			}
			if (vperf__local_add_fd(rc, fd)) {
				close(fd);
				snprintf(st->why, sizeof(st->why), "out of memory");
				goto undo;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rc->rings[c].fd) ||
			    ioctl(fd, PERF_EVENT_IOC_ID, &id))
				err = -errno;
			if (!err)
				err = vperf_perfdec__add(&rc->dec, id, a.sample_type,
							 (unsigned int)TP_INDEX(t));
			if (err) {
				snprintf(st->why, sizeof(st->why), "setting up the sched tracepoints: %s",
					 strerror(-err));
				goto undo;
			}
		}
	}
	st->on = true;
	return;
undo:
	while (rc->nr_fds > first)
		close(rc->fds[--rc->nr_fds]);
}

/* The system-wide ones do not follow enable_on_exec: enabled right before the command starts. */
void vperf__local_enable_sched(struct vperf_local *rc)
{
	size_t first = rc->nr_fds - (rc->sched.on ? rc->nr_rings * NR_TP : 0);

	for (size_t i = first; i < rc->nr_fds; i++)
		ioctl(rc->fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

int vperf__local_take_sched(struct vperf_local *rc, const struct vperf_perfrec *r)
{
	const struct sched_tp *st = &rc->sched;
	const uint8_t *raw = r->sample.raw;
	uint32_t rs = r->sample.raw_size;
	uint64_t prev, next, state, wpid, tcpu, flags;
	struct pend *p;
	bool ok;

	if (r->index == TP_INDEX(TP_SWITCH)) {
		ok = vperf_tp_u64(raw, rs, &st->sw[F_PREV_PID], &prev) &&
		     vperf_tp_u64(raw, rs, &st->sw[F_NEXT_PID], &next) &&
		     vperf_tp_u64(raw, rs, &st->sw[F_PREV_STATE], &state);
		if (ok && (p = vperf__local_pend_new(rc))) {
			p->kind = P_SCHED_SWITCH;
			p->a = (uint32_t)prev;
			p->b = (uint32_t)next;
			p->state = (int64_t)state;
			vperf_tp_str(raw, rs, &st->sw[F_PREV_COMM], p->comm, sizeof(p->comm));
			vperf_tp_str(raw, rs, &st->sw[F_NEXT_COMM], p->comm2, sizeof(p->comm2));
		}
	} else {
		int t = (int)(r->index - VPERF_LOCAL_MAX_EVENTS);

		ok = vperf_tp_u64(raw, rs, &st->wk[t][F_W_PID], &wpid) &&
		     vperf_tp_u64(raw, rs, &st->wk[t][F_W_TARGET_CPU], &tcpu) &&
		     vperf_tp_u64(raw, rs, &st->wk[t][F_W_FLAGS], &flags);
		if (ok && (p = vperf__local_pend_new(rc))) {
			p->kind = t == TP_WAKING ? P_SCHED_WAKING : P_SCHED_WAKEUP;
			p->a = (uint32_t)wpid;
			p->b = (uint32_t)tcpu;
			/* the thread the tracepoint ran in, unless that was an interrupt */
			p->c = flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI) ? 0 :
			       r->tid;
		}
	}
	if (!ok) {
		if (!rc->bad_records++)
			snprintf(rc->bad_why, sizeof(rc->bad_why), "a %s record shorter than its format",
				 tp_names[r->index - VPERF_LOCAL_MAX_EVENTS]);
		return 0;
	}
	if (!p)
		return -ENOMEM;
	p->layer = vperf__local_kernel_layer(rc);
	p->h.ts = r->time;
	p->cpu = r->cpu;
	return 0;
}

