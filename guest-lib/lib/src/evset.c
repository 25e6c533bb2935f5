// SPDX-License-Identifier: MIT
/* Event sets: the public API, independent of the backend behind it. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

int vperf__evset_fail(struct vperf_evset *es, int err, const char *fmt, ...)
{
	va_list ap;

	es->err_event = -1;
	va_start(ap, fmt);
	vsnprintf(es->err, sizeof(es->err), fmt, ap);
	va_end(ap);
	pr_debug("%s\n", es->err);
	return err;
}

/*
 * Copy a caller's sized struct: a shorter (older) one is zero-extended; a
 * longer (newer) one is fine only if what we do not know is zero.
 */
static int copy_sized(void *dst, size_t dst_size, const void *src, size_t src_size)
{
	const unsigned char *s = src;

	if (src_size < sizeof(size_t))
		return -EINVAL;
	memset(dst, 0, dst_size);
	if (src_size > dst_size) {
		for (size_t i = dst_size; i < src_size; i++)
			if (s[i])
				return -E2BIG;
		src_size = dst_size;
	}
	memcpy(dst, src, src_size);
	*(size_t *)dst = dst_size;
	return 0;
}

int vperf_evset__new(const struct vperf_evset_opts *opts, struct vperf_evset **out)
{
	struct vperf_evset_opts o = { .size = sizeof(o) };
	struct vperf_evset *es;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (opts) {
		ret = copy_sized(&o, sizeof(o), opts, opts->size);
		if (ret)
			return ret;
	}
	switch (o.target) {
	case VPERF_TARGET_SELF:
		if (o.flags & (VPERF_EVSET_ENABLE_ON_EXEC | VPERF_EVSET_PER_THREAD))
			return -EINVAL;
		o.pid = 0;
		break;
	case VPERF_TARGET_THREAD:
		if (o.pid <= 0 || (o.flags & (VPERF_EVSET_PER_THREAD | VPERF_EVSET_PAGE_ONLY)))
			return -EINVAL;
		break;
	case VPERF_TARGET_PROCESS:
		if (o.pid <= 0 || (o.flags & VPERF_EVSET_PAGE_ONLY))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (o.flags & ~(VPERF_EVSET_GROUP | VPERF_EVSET_ENABLE_ON_EXEC |
			VPERF_EVSET_PER_THREAD | VPERF_EVSET_PAGE_ONLY))
		return -EINVAL;

	es = calloc(1, sizeof(*es));
	if (!es)
		return -ENOMEM;
	es->opts = o;
	es->opts.backend = NULL;
	if (o.backend) {
		es->ops = vperf__backend_find(o.backend);
		if (!es->ops) {
			free(es);
			return -ENOENT;
		}
	} else {
		/*
		 * Automatic: "perf", until add() takes a vperf:: event and
		 * finds "pv" usable (see select_pv()).  "pv" counts ordinary
		 * events through "perf" anyway, so only a set that needs it
		 * gets it, and every other set behaves the same in and out of
		 * a vperf guest.
		 */
		es->ops = &vperf_backend_perf;
		es->auto_backend = true;
	}
	*out = es;
	return 0;
}

void vperf_evset__delete(struct vperf_evset *es)
{
	if (!es)
		return;
	if (es->is_open && es->ops->close)
		es->ops->close(es);
	for (int i = 0; i < es->nr_rows; i++) {
		free(es->rows[i].counts);
		free(es->rows[i].reads);
	}
	free(es->rows);
	free(es->events);
	free(es);
}

const char *vperf_backend_name(const struct vperf_evset *es)
{
	return es ? es->ops->name : NULL;
}

int vperf_evset__error_event(const struct vperf_evset *es)
{
	return es && es->err[0] ? es->err_event : -1;
}

const char *vperf_evset__strerror(const struct vperf_evset *es)
{
	if (!es)
		return "no event set (vperf_evset__new failed or was not called)";
	return es->err[0] ? es->err : "no error";
}

/*
 * A vperf:: event needs the pv backend: move an automatic set there if pv
 * is usable here (nothing is open yet, so nothing else changes; with
 * !move only check), else say why not.
 */
static int select_pv(struct vperf_evset *es, const char *name, bool move)
{
	char why[VPERF_ERRMSG_LEN];

	if (es->ops == &vperf_backend_pv)
		return 0;
	if (!es->auto_backend)
		return vperf__evset_fail(es, -EOPNOTSUPP,
					 "virtualization event '%s' needs the pv backend; this set "
					 "was created for the '%s' backend (opts.backend)",
					 name, es->ops->name);
	if (vperf_backend_available("pv", why, sizeof(why)))
		return vperf__evset_fail(es, -EOPNOTSUPP,
					 "virtualization event '%s' needs the pv backend, "
					 "which is not available here: %s", name, why);
	if (move) {
		pr_debug("event %s: the set moves to the pv backend\n", name);
		es->ops = &vperf_backend_pv;
	}
	return 0;
}

/*
 * A hardware event in a guest with vperf_guest.ko: counted by the host's
 * PMU through the module (vperf::hw:NAME) when this guest has no PMU of its
 * own, or when the set was created for the pv backend; through the guest's
 * perf when it has one, or when the set was created for "perf".  The same
 * name serves in and out of guests.
 */
static int hw_through_pv(struct vperf_evset *es, struct vperf_event *ev, const char *name)
{
	char why[VPERF_ERRMSG_LEN];

	if (!vperf__attr_is_hw(&ev->attr))
		return 0;
	if (es->ops != &vperf_backend_pv && !es->auto_backend)
		return 0;	/* "perf" chosen: the guest's own PMU, or its error */
	if (es->auto_backend && (vperf__host_has_pmu("/") ||
				 vperf_backend_available("pv", why, sizeof(why))))
		return 0;	/* a vPMU here, or no vperf device: perf counts or explains */
	if (strchr(name, ':') || strlen(name) >= sizeof(ev->pv.host_name))
		return vperf__evset_fail(es, -EINVAL,
					 "'%s': through vperf_guest.ko a hardware event is the host "
					 "PMU's, by its plain name (no modifiers: the host counts the "
					 "guest's user and kernel mode together)", name);
	memset(&ev->pv, 0, sizeof(ev->pv));
	ev->pv.source = VPERF_SRC_PERF;
	snprintf(ev->pv.host_name, sizeof(ev->pv.host_name), "%s", name);
	snprintf(ev->canon, sizeof(ev->canon), "vperf::hw:%s", name);
	ev->virt = true;
	return select_pv(es, name, true);
}

int vperf_evset__add(struct vperf_evset *es, const char *name)
{
	struct vperf_event *ev;
	char err[VPERF_ERRMSG_LEN];
	int ret;

	if (!es)
		return -EINVAL;
	if (es->is_open)
		return vperf__evset_fail(es, -EBUSY,
					 "cannot add '%s': the event set is already open",
					 name ? name : "");
	if (!name)
		return vperf__evset_fail(es, -EINVAL, "event name is NULL");
	if (es->nr_events >= VPERF_MAX_EVENTS)
		return vperf__evset_fail(es, -E2BIG, "cannot add '%s': at most %d events per set",
					 name, VPERF_MAX_EVENTS);
	if (es->nr_events == es->cap_events) {
		int cap = es->cap_events ? es->cap_events * 2 : 8;
		struct vperf_event *n = realloc(es->events, cap * sizeof(*n));

		if (!n)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		es->events = n;
		es->cap_events = cap;
	}
	ev = &es->events[es->nr_events];
	memset(ev, 0, sizeof(*ev));

	if (!strncasecmp(name, "vperf::", 7)) {
		ret = vperf__virt_parse(name, &ev->pv, ev->canon, sizeof(ev->canon), err,
					sizeof(err));
		if (ret == -ENOENT && !strncmp(err, "unknown virtualization event", 28)) {
			char sugg[3][VPERF_NAME_LEN];
			int n = vperf__virt_suggest(name, sugg, 3);

			return vperf__evset_fail(es, -ENOENT,
						 "unknown virtualization event '%s'%s%s%s%s%s "
						 "('vperf list vperf::' shows them)", name,
						 n ? "; did you mean: " : "", n ? sugg[0] : "",
						 n > 1 ? ", " : "", n > 1 ? sugg[1] : "", n ? "?" : "");
		}
		if (ret)
			return vperf__evset_fail(es, ret, "%s ('vperf list vperf::' shows them)", err);
		ret = select_pv(es, name, true);
		if (ret)
			return ret;
		ev->virt = true;
	} else {
		ret = vperf__encode(name, &ev->attr, ev->canon, sizeof(ev->canon), err,
				    sizeof(err));
		if (ret)
			return vperf__evset_fail(es, ret, "%s", err);
		ret = hw_through_pv(es, ev, name);
		if (ret)
			return ret;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	/* An explicit privilege-level modifier after the event name. */
	{
		const char *m = strrchr(name, ':');

		ev->user_plm = m && m > name && m[-1] != ':' &&
			       strspn(m + 1, "ukhGHp") == strlen(m + 1);
	}
	ev->read_path = -1;
	return es->nr_events++;
}

int vperf_evset__nr_events(const struct vperf_evset *es)
{
	return es ? es->nr_events : 0;
}

const char *vperf_evset__event_name(const struct vperf_evset *es, int idx)
{
	return es && idx >= 0 && idx < es->nr_events ? es->events[idx].name : NULL;
}

const char *vperf_evset__event_canon(const struct vperf_evset *es, int idx)
{
	return es && idx >= 0 && idx < es->nr_events ? es->events[idx].canon : NULL;
}

int vperf_evset__open(struct vperf_evset *es)
{
	char why[VPERF_ERRMSG_LEN];
	int ret;

	if (!es)
		return -EINVAL;
	if (es->is_open)
		return vperf__evset_fail(es, -EBUSY, "the event set is already open");
	if (!es->nr_events)
		return vperf__evset_fail(es, -EINVAL, "the event set has no events");
	ret = es->ops->probe(why, sizeof(why));
	if (ret)
		return vperf__evset_fail(es, ret, "backend '%s' is not available: %s",
					 es->ops->name, why);
	es->opener_tid = gettid();
	ret = es->ops->open(es);
	if (ret)
		return ret;
	es->is_open = true;
	es->err[0] = '\0';
	return 0;
}

static int evset_ctl(struct vperf_evset *es, int op)
{
	if (!es)
		return -EINVAL;
	if (!es->is_open)
		return vperf__evset_fail(es, -EBADF, "the event set is not open");
	return es->ops->ctl(es, op);
}

int vperf_evset__start(struct vperf_evset *es)
{
	return evset_ctl(es, VPERF_CTL_START);
}

int vperf_evset__stop(struct vperf_evset *es)
{
	return evset_ctl(es, VPERF_CTL_STOP);
}

int vperf_evset__reset(struct vperf_evset *es)
{
	return evset_ctl(es, VPERF_CTL_RESET);
}

/* What every backend's counts carry: how the event was really opened. */
static void mark_counts(const struct vperf_evset *es, struct vperf_count *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (es->events[i].user_only_fallback)
			c[i].flags |= VPERF_COUNT_USER_ONLY;
}

int vperf_evset__read(struct vperf_evset *es, struct vperf_count *counts, size_t n)
{
	int ret;

	if (!es || (!counts && n))
		return -EINVAL;
	if (!es->is_open)
		return -EBADF;
	if (n > (size_t)es->nr_events)
		return -EINVAL;
	ret = es->ops->read_all(es, counts, n);
	if (!ret)
		mark_counts(es, counts, n);
	return ret;
}

int vperf_evset__read_one(struct vperf_evset *es, int idx, struct vperf_count *count)
{
	int ret;

	if (!es || !count || idx < 0 || idx >= es->nr_events)
		return -EINVAL;
	if (!es->is_open)
		return -EBADF;
	ret = es->ops->read(es, idx, count);
	if (!ret && es->events[idx].user_only_fallback)
		count->flags |= VPERF_COUNT_USER_ONLY;
	return ret;
}

int vperf_evset__page_ref(const struct vperf_evset *es, int idx, struct vperf_page_ref *ref)
{
	struct vperf_page_ref r = { .size = sizeof(r) };
	size_t n;
	int ret;

	/* the first version of the struct ends after slot; a later caller's tail stays zero */
	if (!es || !ref || idx < 0 || idx >= es->nr_events ||
	    ref->size < offsetof(struct vperf_page_ref, slot) + sizeof(ref->slot))
		return -EINVAL;
	if (!es->is_open)
		return -EBADF;
	if (!es->ops->page_ref)
		return -EOPNOTSUPP;
	ret = es->ops->page_ref(es, idx, &r);
	if (ret)
		return ret;
	n = ref->size < sizeof(r) ? ref->size : sizeof(r);
	memcpy(ref, &r, n);
	ref->size = n;
	return 0;
}

int vperf_evset__read_path(const struct vperf_evset *es, int idx)
{
	if (!es || !es->is_open || idx < 0 || idx >= es->nr_events)
		return -EINVAL;
	return es->events[idx].read_path;
}

const char *vperf_read_path_name(int path)
{
	switch (path) {
	case VPERF_READ_SYSCALL:
		return "syscall";
	case VPERF_READ_RDPMC:
		return "rdpmc";
	case VPERF_READ_PAGE:
		return "page";
	case VPERF_READ_PAGE_SYNC:
		return "page-sync";
	case VPERF_READ_DOORBELL:
		return "doorbell";
	default:
		return "unknown";
	}
}

/* ---- per-thread rows ---- */

struct vperf_evset_row *vperf__evset_row(struct vperf_evset *es, pid_t pid,
					  pid_t tid, bool root)
{
	struct vperf_evset_row *r;

	for (int i = es->nr_rows - 1; i >= 0; i--) {
		r = &es->rows[i];
		if (r->tid == tid && r->pid == pid)
			return r;
	}
	if (es->nr_rows == es->cap_rows) {
		int cap = es->cap_rows ? es->cap_rows * 2 : 16;
		struct vperf_evset_row *n = realloc(es->rows, cap * sizeof(*n));

		if (!n)
			return NULL;
		es->rows = n;
		es->cap_rows = cap;
	}
	r = &es->rows[es->nr_rows];
	memset(r, 0, sizeof(*r));
	r->counts = calloc(es->nr_events, sizeof(*r->counts));
	r->reads = calloc(es->nr_events, sizeof(*r->reads));
	if (!r->counts || !r->reads) {
		free(r->counts);
		free(r->reads);
		return NULL;
	}
	r->pid = pid;
	r->tid = tid;
	r->root = root;
	es->nr_rows++;
	return r;
}

int vperf_evset__poll_threads(struct vperf_evset *es)
{
	if (!es)
		return -EINVAL;
	if (!es->is_open)
		return -EBADF;
	if (!(es->opts.flags & VPERF_EVSET_PER_THREAD) || !es->ops->poll_threads)
		return vperf__evset_fail(es, -EINVAL,
					 "per-thread counts need a process target opened with VPERF_EVSET_PER_THREAD");
	return es->ops->poll_threads(es);
}

int vperf_evset__nr_threads(const struct vperf_evset *es)
{
	return es ? es->nr_rows : 0;
}

int vperf_evset__read_thread(struct vperf_evset *es, int i, pid_t *pid, pid_t *tid,
			     struct vperf_count *counts, size_t n)
{
	if (!es || i < 0 || i >= es->nr_rows || n > (size_t)es->nr_events ||
	    (!counts && n))
		return -EINVAL;
	if (pid)
		*pid = es->rows[i].pid;
	if (tid)
		*tid = es->rows[i].tid;
	memcpy(counts, es->rows[i].counts, n * sizeof(*counts));
	mark_counts(es, counts, n);
	return 0;
}

const char *vperf_evset__thread_comm(const struct vperf_evset *es, int i)
{
	if (!es || i < 0 || i >= es->nr_rows)
		return "";
	return es->rows[i].comm;
}

uint64_t vperf_evset__threads_lost(const struct vperf_evset *es)
{
	return es ? es->threads_lost : 0;
}

uint64_t vperf_evset__samples_lost(const struct vperf_evset *es)
{
	return es ? __atomic_load_n(&es->samples_lost, __ATOMIC_RELAXED) : 0;
}

/* ---- sampling ---- */

int vperf_evset__sample(struct vperf_evset *es, int idx, const struct vperf_sample_opts *opts)
{
	struct vperf_sample_opts o;
	int ret;

	if (!es)
		return -EINVAL;
	if (es->is_open)
		return vperf__evset_fail(es, -EBUSY, "sampling must be set before open");
	if (idx < 0 || idx >= es->nr_events)
		return vperf__evset_fail(es, -EINVAL, "no event with index %d", idx);
	if (!opts)
		return vperf__evset_fail(es, -EINVAL, "sampling options are NULL");
	ret = copy_sized(&o, sizeof(o), opts, opts->size);
	if (ret)
		return vperf__evset_fail(es, ret, "bad size %zu in vperf_sample_opts", opts->size);
	if (es->opts.target != VPERF_TARGET_SELF)
		return vperf__evset_fail(es, -EINVAL,
					 "sampling callbacks run in the sampled thread: "
					 "only a VPERF_TARGET_SELF set can sample");
	if (es->events[idx].virt) {
		/* vperf_guest.ko samples on vcpu-clock (overflow NMIs), every period ns */
		if (es->events[idx].pv.source != VPERF_SRC_PERF ||
		    strcmp(es->events[idx].pv.host_name, "task-clock"))
			return vperf__evset_fail(es, -EOPNOTSUPP,
						 "'%s' cannot be sampled: vperf_guest.ko samples "
						 "only on vperf::vcpu-clock (or sample an ordinary "
						 "event such as cpu-clock)", es->events[idx].name);
		if (!o.period || o.period < VPERF_SAMPLE_MIN_PERIOD)
			return vperf__evset_fail(es, -EINVAL,
						 "'%s' samples with a period in ns of at least %d "
						 "(no frequency mode)", es->events[idx].name,
						 VPERF_SAMPLE_MIN_PERIOD);
		for (int e = 0; e < es->nr_events; e++)
			if (e != idx && es->events[e].virt && es->events[e].sampling)
				return vperf__evset_fail(es, -EINVAL, "one vperf:: event per set "
							 "can sample (the module keeps one "
							 "ring per thread)");
	}
	if (!o.fn)
		return vperf__evset_fail(es, -EINVAL, "sampling needs a callback");
	if (!o.period && !o.freq)
		return vperf__evset_fail(es, -EINVAL, "sampling needs a period or a frequency");
	if (o.max_frames > VPERF_MAX_CALLCHAIN)
		return vperf__evset_fail(es, -EINVAL, "at most %d callchain frames",
					 VPERF_MAX_CALLCHAIN);
	if (!o.signo)
		o.signo = SIGRTMIN + 4;
	if (o.signo <= 0 || o.signo > SIGRTMAX || o.signo == SIGKILL || o.signo == SIGSTOP)
		return vperf__evset_fail(es, -EINVAL, "bad signal number %d", o.signo);
	es->events[idx].sampling = true;
	es->events[idx].sopts = o;
	return 0;
}
