// SPDX-License-Identifier: MIT
/*
 * The recorder of the machine vperf runs on (local.h): perf's rings drained into the
 * time-ordering queue and written in the recording schema.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <vperf/vperf.h>

#include "ksyms.h"
#include "local-int.h"

/* /sys/devices/system/cpu/online, "0-3,5" */
static int online_cpus(struct vperf_local *rc)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char *p, *save = NULL;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return vperf__local_fail(rc, errno ? -errno : -EIO, "cannot read "
					 "/sys/devices/system/cpu/online: %s",
					 strerror(errno ? errno : EIO));
	}
	fclose(f);
	for (p = strtok_r(buf, ",\n", &save); p; p = strtok_r(NULL, ",\n", &save)) {
		char *dash = strchr(p, '-');
		long lo = strtol(p, NULL, 10), hi = dash ? strtol(dash + 1, NULL, 10) : lo;

		for (long c = lo; c <= hi && c < 65536; c++) {
			int *n = realloc(rc->cpus, (rc->nr_cpus + 1) * sizeof(*n));

			if (!n)
				return vperf__local_fail(rc, -ENOMEM, "out of memory");
			rc->cpus = n;
			rc->cpus[rc->nr_cpus++] = (int)c;
		}
	}
	if (!rc->nr_cpus)
		return vperf__local_fail(rc, -ENODEV, "no online CPU found");
	return 0;
}

/* ---- the recorded threads, for the sched filter ---- */

static void setup_attr(struct vperf_local *rc, int e)
{
	struct perf_event_attr *a = &rc->attr[e];

	a->disabled = 1;
	a->inherit = 1;
	a->enable_on_exec = rc->cfg.command ? 1 : 0;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (rc->cfg.callchain) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->sample_max_stack = VPERF_LOCAL_MAX_STACK;
	}
	if (rc->cfg.period) {
		a->sample_period = rc->cfg.period;
	} else {
		a->freq = 1;
		a->sample_freq = rc->cfg.freq;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(rc->cfg.pages * rc->page / 4);
	a->exclude_hv = 1;
	if (rc->user_only)
		a->exclude_kernel = 1;
	if (e == 0) {
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->context_switch = 1;
		a->mmap = 1;		/* executable mappings: what user samples resolve in */
		a->mmap2 = 1;
	}
}


static void close_all(struct vperf_local *rc)
{
	for (size_t i = 0; i < rc->nr_rings; i++) {
		if (rc->rings[i].base)
			munmap(rc->rings[i].base, rc->rings[i].len);
		free(rc->rings[i].r.bounce);
	}
	free(rc->rings);
	rc->rings = NULL;
	rc->nr_rings = 0;
	for (size_t i = 0; i < rc->nr_fds; i++)
		close(rc->fds[i]);
	free(rc->fds);
	rc->fds = NULL;
	rc->nr_fds = rc->cap_fds = 0;
	vperf_perfdec__exit(&rc->dec);
}

/*
 * Open every event for every thread of tids on every CPU; the first event of each CPU owns the
 * CPU's ring.  -errno of the first open that failed (with *failed_event set), or 0.
 */
static int open_all(struct vperf_local *rc, const pid_t *tids, size_t nr_tids, int *failed_event,
		    pid_t *failed_tid)
{
	int err;

	rc->rings = calloc(rc->nr_cpus, sizeof(*rc->rings));
	if (!rc->rings)
		return -ENOMEM;
	rc->nr_rings = rc->nr_cpus;
	for (size_t c = 0; c < rc->nr_cpus; c++) {
		struct ring *r = &rc->rings[c];

		r->cpu = rc->cpus[c];
		r->fd = -1;
		for (int e = 0; e < rc->cfg.nr_events; e++) {
			for (size_t t = 0; t < nr_tids; t++) {
				uint64_t id;
				int fd = vperf__local_perf_open(&rc->attr[e], tids[t], r->cpu);

				if (fd == -ESRCH && nr_tids > 1)
					continue;	/* -p: a thread that ended since the listing */
				if (fd < 0) {
					*failed_event = e;
					*failed_tid = tids[t];
					return fd;
				}
				err = vperf__local_add_fd(rc, fd);
				if (err) {
					close(fd);
					return err;
				}
				if (r->fd < 0) {
					r->len = (1 + (size_t)rc->cfg.pages) * rc->page;
					r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
						       fd, 0);
					if (r->base == MAP_FAILED) {
						r->base = NULL;
						*failed_event = -1;
						return -errno;
					}
					r->fd = fd;
					r->r.data = (const uint8_t *)r->base + rc->page;
					r->r.size = (uint64_t)rc->cfg.pages * rc->page;
					r->r.bounce_len = 65536;
					r->r.bounce = malloc(r->r.bounce_len);
					if (!r->r.bounce)
						return -ENOMEM;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
					*failed_event = -1;
					return -errno;
				}
				if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
					*failed_event = -1;
					return -errno;
				}
				err = vperf_perfdec__add(&rc->dec, id, rc->attr[e].sample_type,
							 (unsigned int)e);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static bool no_pmu_error(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/*
 * Encode and open the events; perf's fallbacks, each said once: no PMU for the default cycles
 * (cpu-clock instead), a paranoid kernel (user space only).
 */
static int open_events(struct vperf_local *rc, const pid_t *tids, size_t nr_tids)
{
	char why[1024];
	int err, fe;
	pid_t ft;

	for (;;) {
		for (int e = 0; e < rc->cfg.nr_events; e++) {
			memset(&rc->attr[e], 0, sizeof(rc->attr[e]));
			err = vperf_event__perf_attr(rc->cfg.events[e], &rc->attr[e],
						     sizeof(rc->attr[e]), why, sizeof(why));
			if (err)
				return vperf__local_fail(rc, err, "-e %s: %s", rc->cfg.events[e], why);
			if (rc->attr[e].exclude_kernel && !rc->attr[e].exclude_user &&
			    rc->cfg.nr_events == 1)
				rc->user_only = true;
			setup_attr(rc, e);
		}
		fe = -1;
		ft = 0;
		err = open_all(rc, tids, nr_tids, &fe, &ft);
		if (!err)
			return 0;
		close_all(rc);
		if (fe == 0 && rc->cfg.default_event && no_pmu_error(err)) {
			rc->cfg.events[0] = "cpu-clock";
			rc->cfg.default_event = false;
			vperf__local_note(rc, "no hardware PMU here (cycles cannot be sampled): "
					  "sampling cpu-clock");
			continue;
		}
		if (fe >= 0 && (err == -EACCES || err == -EPERM) && !rc->user_only) {
			rc->user_only = true;
			vperf__local_note(rc, "kernel samples are not allowed here "
					  "(kernel.perf_event_paranoid; CAP_PERFMON): recording user "
					  "space only");
			continue;
		}
		if (fe >= 0) {
			vperf_event__open_strerror(err, rc->cfg.events[fe], &rc->attr[fe], ft, why,
						   sizeof(why));
			return vperf__local_fail(rc, err, "%s", why);
		}
		if (err == -EPERM && rc->cfg.pages > 1) {
			/* over kernel.perf_event_mlock_kb (no CAP_IPC_LOCK): smaller rings */
			rc->cfg.pages /= 2;
			if (!rc->pages_note++)
				vperf__local_note(rc, "the rings do not fit in "
						  "kernel.perf_event_mlock_kb: trying fewer pages "
						  "per CPU");
			continue;
		}
		return vperf__local_fail(rc, err, "setting up the ring buffers: %s%s", strerror(-err),
				 err == -EPERM || err == -ENOMEM ?
				 " (kernel.perf_event_mlock_kb limits the locked memory of the "
				 "rings: fewer pages with -m)" : "");
	}
}

static void enable_all(struct vperf_local *rc, bool on)
{
	for (size_t i = 0; i < rc->nr_fds; i++)
		ioctl(rc->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* ---- records into pending events ------------------------------------ */

/* A sched tracepoint's record; one whose raw data does not fit its format is counted bad. */
static int take(struct vperf_local *rc, const struct ring *ring, const struct vperf_perfrec *r)
{
	struct pend *p;

	switch (r->kind) {
	case VPERF_PERFREC_SAMPLE: {
		uint32_t n = 0;

		if (r->index >= VPERF_LOCAL_MAX_EVENTS)
			return vperf__local_take_sched(rc, r);
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_SAMPLE;
		p->layer = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ?
			   vperf__local_user_layer(rc) : vperf__local_kernel_layer(rc);
		p->a = r->pid;
		p->b = r->tid;
		p->c = r->index;
		p->ip = r->sample.ip;
		p->period = r->sample.period;
		if (r->sample.nr_chain) {
			p->chain = malloc(r->sample.nr_chain * sizeof(uint64_t));
			if (!p->chain) {
				vperf_ordered__unqueue(&rc->pend);
				return -ENOMEM;
			}
			for (uint32_t i = 0; i < r->sample.nr_chain; i++) {
				uint64_t v;

				memcpy(&v, &r->sample.chain[i], sizeof(v));
				if (v >= (uint64_t)PERF_CONTEXT_MAX)
					continue;	/* PERF_CONTEXT_KERNEL, _USER... */
				p->chain[n++] = v;
			}
		}
		p->nr_chain = n;
		if (rc->cfg.callchain && r->sample.nr_chain >= VPERF_LOCAL_MAX_STACK)
			rc->chain_trunc++;
		break;
	}
	case VPERF_PERFREC_COMM:
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = r->comm.exec ? P_EXEC : P_COMM;	/* else a rename (prctl) */
		p->layer = vperf__local_kernel_layer(rc);
		p->a = r->comm.pid;
		p->b = r->comm.tid;
		memcpy(p->comm, r->comm.comm, sizeof(p->comm));
		break;
	case VPERF_PERFREC_FORK:
	case VPERF_PERFREC_EXIT:
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = r->kind == VPERF_PERFREC_FORK ? P_FORK : P_EXIT;
		p->layer = vperf__local_kernel_layer(rc);
		p->a = r->task.ppid;
		p->b = r->task.ptid;
		p->c = r->task.pid;
		p->d = r->task.tid;
		break;
	case VPERF_PERFREC_LOST:
	case VPERF_PERFREC_LOST_SAMPLES:
		if (r->kind == VPERF_PERFREC_LOST)
			rc->lost_ring += r->lost.count;
		else
			rc->lost_samples += r->lost.count;
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_LOST;
		p->layer = vperf__local_kernel_layer(rc);
		p->period = r->lost.count;
		break;
	case VPERF_PERFREC_SWITCH:
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_SWITCH;
		p->layer = vperf__local_kernel_layer(rc);
		p->a = r->pid;
		p->b = r->tid;
		p->c = r->switch_.out;
		p->d = r->switch_.out && r->switch_.preempt;
		break;
	case VPERF_PERFREC_MMAP:
		if (r->mmap.prot && !(r->mmap.prot & PROT_EXEC))
			return 0;	/* data (attr.mmap_data is off: none expected) */
		p = vperf__local_pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->name = strdup(r->mmap.filename);
		if (!p->name) {
			vperf_ordered__unqueue(&rc->pend);
			return -ENOMEM;
		}
		p->kind = P_MMAP;
		p->layer = vperf__local_kernel_layer(rc);
		p->a = r->mmap.pid;
		p->b = r->mmap.tid;
		p->c = r->mmap.prot;
		p->start = r->mmap.addr;
		p->len = r->mmap.len;
		p->pgoff = r->mmap.pgoff;
		break;
	case VPERF_PERFREC_THROTTLE:
		rc->throttles++;
		return 0;
	default:
		return 0;
	}
	p->h.ts = r->time;
	/* Records without a time (none here: sample_id_all) would sort first. */
	p->cpu = r->has_id ? r->cpu : (uint32_t)ring->cpu;
	return 0;
}

/* Read what each ring holds now into the pending events. */
static int drain(struct vperf_local *rc)
{
	for (size_t i = 0; i < rc->nr_rings; i++) {
		struct ring *ring = &rc->rings[i];
		struct perf_event_mmap_page *pg = ring->base;
		const void *rec;
		size_t len;
		int ret;

		if (!pg)
			continue;
		ring->r.head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		ring->r.tail = pg->data_tail;
		while ((ret = vperf_perf_ring__next(&ring->r, &rec, &len)) > 0) {
			struct vperf_perfrec r;
			char why[160];

			if (vperf_perfdec__parse(&rc->dec, rec, len, &r, why, sizeof(why))) {
				if (!rc->bad_records++)
					snprintf(rc->bad_why, sizeof(rc->bad_why), "%s", why);
				continue;
			}
			ret = take(rc, ring, &r);
			if (ret)
				return ret;
		}
		if (ret < 0) {
			rc->bad_bytes += ring->r.head - ring->r.tail;
			if (!rc->bad_records++)
				snprintf(rc->bad_why, sizeof(rc->bad_why), "a record header that "
					 "cannot be, in CPU %d's ring", ring->cpu);
			ring->r.tail = ring->r.head;
		}
		__atomic_store_n(&pg->data_tail, ring->r.tail, __ATOMIC_RELEASE);
	}
	return 0;
}


/* A string field: the bytes as they are if they are UTF-8, else with '?' for bytes over 0x7f. */
/* A string the writer refused as not UTF-8 (perf's comm, a file name): its bytes from 0x80 '?'. */
static bool ascii(char *str)
{
	bool changed = false;

	for (char *c = str; *c; c++)
		if ((unsigned char)*c > 0x7f) {
			*c = '?';
			changed = true;
		}
	return changed;
}

/* EMIT(class, ...): the event of p, again with its strings in ASCII if they were refused. */
#define EMIT(cls, ...) ({								\
	int e_ = vperf_ev__##cls(s, p->h.ts, &(struct vperf_ev_##cls){ __VA_ARGS__ });	\
	if (e_ == -EILSEQ && (ascii(p->comm) | ascii(p->comm2) | (p->name && ascii(p->name)))) \
		e_ = vperf_ev__##cls(s, p->h.ts, &(struct vperf_ev_##cls){ __VA_ARGS__ });	\
	e_;										\
})

static int emit_one(struct vperf_local *rc, struct pend *p)
{
	struct vperf_ctf_stream *s;
	int err = vperf_ctf__stream(rc->ctf, p->layer, p->cpu, &s);

	if (err)
		return err;
	switch (p->kind) {
	case P_SAMPLE:
		rc->samples++;
		rc->samples_by[p->c]++;
		err = vperf__local_kip_add(rc, p->ip);
		for (uint32_t i = 0; i < p->nr_chain && !err; i++)
			err = vperf__local_kip_add(rc, p->chain[i]);
		if (err)
			return err;
		err = EMIT(sample, .ip = p->ip, .user = p->layer == vperf__local_user_layer(rc),
			   .pid = p->a, .tid = p->b, .counts = &p->period, .nr_counts = 1,
			   .counts_are = VPERF_COUNTS_ARE_PERIOD, .callchain = p->chain,
			   .nr_callchain = p->chain ? p->nr_chain : 0, .sample_event = p->c);
		break;
	case P_MMAP:
		err = EMIT(mmap, .pid = p->a, .tid = p->b, .start = p->start, .len = p->len,
			   .pgoff = p->pgoff, .prot = p->c, .filename = p->name);
		rc->mmaps += !err;
		break;
	case P_COMM:
		err = EMIT(comm, .pid = p->a, .tid = p->b, .comm = p->comm);
		rc->comms += !err;
		break;
	case P_SCHED_SWITCH:
		if (!vperf__local_tid_recorded(rc, (pid_t)p->a) &&
		    !vperf__local_tid_recorded(rc, (pid_t)p->b)) {
			rc->sched_other++;
			return 0;
		}
		rc->sched_switches++;
		rc->sched_switch_outs += vperf__local_tid_recorded(rc, (pid_t)p->a);
		err = EMIT(sched_switch, .prev_tid = p->a, .prev_comm = p->comm,
			   .prev_state = (uint64_t)p->state, .next_tid = p->b,
			   .next_comm = p->comm2);
		break;
	case P_SCHED_WAKING: {
		unsigned int slot = p->a % WAKER_SLOTS;

		rc->sched.wakers[slot].wakee = (pid_t)p->a;
		rc->sched.wakers[slot].waker = (pid_t)p->c;
		return 0;	/* not written: its waker goes into the wakeup */
	}
	case P_SCHED_WAKEUP: {
		unsigned int slot = p->a % WAKER_SLOTS;

		if (!vperf__local_tid_recorded(rc, (pid_t)p->a)) {
			rc->sched_other++;
			return 0;
		}
		if (rc->sched.wakers[slot].wakee == (pid_t)p->a) {
			p->c = (uint32_t)rc->sched.wakers[slot].waker;
			rc->sched.wakers[slot].wakee = 0;
		}
		rc->sched_wakeups++;
		err = EMIT(sched_wakeup, .tid = p->a, .target_cpu = p->b, .waker_tid = p->c);
		break;
	}
	case P_FORK:
		err = vperf__local_tid_add(rc, (pid_t)p->d);
		if (err)
			return err;
		rc->forks++;
		err = EMIT(process_fork, .parent_pid = p->a, .parent_tid = p->b, .child_pid = p->c,
			   .child_tid = p->d);
		break;
	case P_EXEC:
		/* perf's exec record names the new comm, not the file */
		rc->execs++;
		err = EMIT(process_exec, .pid = p->a, .tid = p->b, .comm = p->comm);
		break;
	case P_EXIT:
		rc->exits++;
		err = EMIT(process_exit, .pid = p->c, .tid = p->d, .exit_code = EXIT_CODE_UNKNOWN);
		break;
	case P_SWITCH:
		rc->switches++;
		rc->switch_outs += p->c;
		err = EMIT(thread_switch, .pid = p->a, .tid = p->b, .direction = (uint8_t)p->c,
			   .preempted = (uint8_t)p->d);
		break;
	case P_LOST:
		return vperf_ctf__lost(s, p->h.ts, p->period);
	default:
		return -EINVAL;
	}
	rc->events += !err;
	return err;
}
#undef EMIT

static void pend_free(void *ev)
{
	struct pend *p = ev;

	free(p->chain);
	free(p->name);
}

static int emit_pend(void *arg, void *ev)
{
	struct vperf_local *rc = arg;
	struct pend *p = ev;
	int err;

	if (!rc->first_ts)
		rc->first_ts = p->h.ts;
	rc->last_ts = p->h.ts;
	err = emit_one(rc, p);
	pend_free(p);
	return err;
}

/* Write the pending events up to watermark, in time order. */
static int emit(struct vperf_local *rc, uint64_t watermark)
{
	return vperf_ordered__flush(&rc->pend, watermark, emit_pend, rc);
}

/* ---- the library's face (local.h) ---- */

static void copy_why(const struct vperf_local *rc, char *why, size_t len)
{
	if (why && len)
		snprintf(why, len, "%s", rc->why);
}

int vperf_local__new(const struct vperf_local_config *cfg, const pid_t *tids, size_t nr_tids,
		     struct vperf_local **out, char *why, size_t why_len)
{
	struct vperf_local *rc;
	int err;

	*out = NULL;
	if (!cfg || cfg->size < sizeof(*cfg) || cfg->nr_events < 1 ||
	    cfg->nr_events > VPERF_LOCAL_MAX_EVENTS || !cfg->pages || !nr_tids ||
	    (!cfg->freq && !cfg->period)) {
		if (why && why_len)
			snprintf(why, why_len, "a bad configuration of the recorder");
		return -EINVAL;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc) {
		if (why && why_len)
			snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	rc->cfg = *cfg;
	vperf_ordered__init(&rc->pend, sizeof(struct pend));
	rc->page = (size_t)sysconf(_SC_PAGESIZE);
	rc->guest = !access("/dev/vperf", F_OK);
	err = online_cpus(rc);
	if (!err)
		err = open_events(rc, tids, nr_tids);
	if (!err) {
		vperf__local_open_sched(rc);
		for (size_t i = 0; i < nr_tids && !err; i++)
			if (vperf__local_tid_add(rc, tids[i]))
				err = vperf__local_fail(rc, -ENOMEM, "out of memory");
	}
	if (err) {
		copy_why(rc, why, why_len);
		vperf_local__delete(rc);
		return err;
	}
	*out = rc;
	return 0;
}

void vperf_local__delete(struct vperf_local *rc)
{
	if (!rc)
		return;
	vperf_ctf__delete(rc->ctf);
	close_all(rc);
	vperf_ordered__exit(&rc->pend, pend_free);
	free(rc->kips);
	free(rc->cpus);
	free(rc->tids);
	free(rc->dir);
	free(rc);
}

const char *vperf_local__strerror(const struct vperf_local *rc)
{
	return rc->why;
}

int vperf_local__create(struct vperf_local *rc, const char *dir, char *why, size_t why_len)
{
	int err;

	rc->dir = strdup(dir);
	if (!rc->dir)
		err = vperf__local_fail(rc, -ENOMEM, "out of memory");
	else
		err = vperf__local_make_writer(rc, dir, &rc->schema);
	if (!err) {
		rc->last_flush = vperf__local_now_ns(CLOCK_MONOTONIC);
		vperf__local_enable_sched(rc);
		if (!rc->cfg.command) {
			err = vperf__local_synth_process(rc, rc->tids, rc->nr_tids,
							 vperf__local_now_ns(CLOCK_MONOTONIC));
			if (err)
				err = vperf__local_fail(rc, err, "out of memory");
			else
				enable_all(rc, true);
		}
	}
	if (err)
		copy_why(rc, why, why_len);
	return err;
}

size_t vperf_local__nr_fds(const struct vperf_local *rc)
{
	return rc->nr_rings;
}

int vperf_local__fd(const struct vperf_local *rc, size_t i)
{
	return i < rc->nr_rings ? rc->rings[i].fd : -1;
}

/* A write error's reason. */
static int write_failed(struct vperf_local *rc, int err)
{
	return vperf__local_fail(rc, err, "writing %s: %s", rc->dir, err == -ENOMEM ? "out of memory" :
		    vperf_ctf__strerror(rc->ctf));
}

int vperf_local__step(struct vperf_local *rc)
{
	uint64_t now = vperf__local_now_ns(CLOCK_MONOTONIC);
	int err = drain(rc);

	if (!err)
		err = emit(rc, now > HOLD_NS ? now - HOLD_NS : 0);
	if (!err && now - rc->last_flush >= FLUSH_MS * 1000000ull) {
		err = vperf_ctf__flush(rc->ctf);
		rc->last_flush = now;
	}
	return err ? write_failed(rc, err) : 0;
}

void vperf_local__stop(struct vperf_local *rc)
{
	enable_all(rc, false);
}

int vperf_local__finish(struct vperf_local *rc, int status, bool have_status)
{
	int err;

	enable_all(rc, false);
	err = drain(rc);
	if (!err)
		err = emit(rc, UINT64_MAX);
	if (!err)
		err = vperf__local_emit_kernel_symbols(rc);
	if (!err)
		vperf__local_keep_vdso(rc, rc->dir);
	if (!err)
		err = vperf__local_write_summary(rc, status, have_status);
	if (!err)
		err = vperf_ctf__flush(rc->ctf);
	return err ? write_failed(rc, err) : 0;
}

const struct vperf_local_stats *vperf_local__stats(struct vperf_local *rc)
{
	struct vperf_local_stats *st = &rc->st;

	st->events = rc->events;
	st->samples = rc->samples;
	memcpy(st->samples_by, rc->samples_by, sizeof(st->samples_by));
	st->forks = rc->forks;
	st->execs = rc->execs;
	st->exits = rc->exits;
	st->switches = rc->switches;
	st->mmaps = rc->mmaps;
	st->comms = rc->comms;
	st->ksyms = rc->ksyms;
	st->lost_ring = rc->lost_ring;
	st->lost_samples = rc->lost_samples;
	st->throttles = rc->throttles;
	st->late = rc->pend.late;
	st->bad_records = rc->bad_records;
	st->bad_why = rc->bad_why;
	st->first_ts = rc->first_ts;
	st->last_ts = rc->last_ts;
	st->nr_cpus = rc->nr_cpus;
	st->sched = rc->sched.on;
	st->sched_why = rc->sched.why;
	st->event_names = rc->cfg.events;
	st->nr_events = rc->cfg.nr_events;
	return st;
}

