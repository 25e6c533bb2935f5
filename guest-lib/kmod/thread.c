// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread virtual counters: perfctr-xen's scheme on the vperf device.
 *
 * A thread with a context gets a page (mapped read-only by the thread
 * itself).  A probe on the sched_switch tracepoint takes, when a monitored
 * thread switches in, a base from its CPU's vCPU page (one SNAPSHOT
 * hypercall), and when it switches out adds (now - base) into the thread's
 * page under the page's seq protocol.  A switch from one monitored thread to
 * another costs one hypercall: the snapshot that ends prev's slice is
 * next's base.  Switches between unmonitored threads cost a hash lookup.
 *
 * Contexts belong to a file: its list keeps a row for every context it
 * had, live or ended, which VPERF_IOC_THREAD_LIST reports, until the file is
 * released.  A live context is also on the global hash (RCU, keyed by the
 * task, of which it holds a reference), where the probes find it.  It ends
 * at THREAD_STOP, at the thread's exit (sched_process_exit accounts the
 * last slice) and at the file's release, all under vperf_threads_lock: it
 * leaves the hash, its last counts are copied into its row (a few hundred
 * bytes, what the rows need) and the context itself, its page and its
 * sample ring are freed after an RCU grace period that covers the probes
 * (tracepoint probes and NMIs run with preemption off).  A page or ring
 * page that is mapped lives on until munmap: the mapping holds a reference.
 * Everything is charged to the memory cgroup of the task it is allocated
 * for (__GFP_ACCOUNT).
 *
 * Inheritance: sched_process_fork runs in the parent after the child is
 * created and before it is woken; a parent whose context has
 * VPERF_THREAD_INHERIT gives the child a context on the same file there.
 *
 * Sampling: a context started with VPERF_THREAD_SAMPLE has a sampler (its
 * ring: sample.c).  At each overflow NMI, vperf_thread_overflow() finds the
 * interrupted thread's context by RCU (NMI-safe) and its counts as of now,
 * and hands them to the sampler.
 */
#include <linux/sched/signal.h>
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"

/*
 * Who may start a context for another thread, like perf_event_paranoid: 2:
 * nobody (a thread counts itself and what it creates), 1: the thread's own
 * user (same real, effective and saved uid, the target dumpable), 0 or
 * less: anyone.  CAP_PERFMON or CAP_SYS_ADMIN may always.
 */
static int paranoid = 1;
module_param(paranoid, int, 0644);
MODULE_PARM_DESC(paranoid, "who may monitor other threads: 2 nobody, 1 their own user (default), 0 anyone");

static unsigned int max_threads = 4096;
module_param(max_threads, uint, 0644);
MODULE_PARM_DESC(max_threads, "contexts one open /dev/vperf may have had (live and finished); more are counted lost");

struct vperf_file {
	struct list_head rows;		/* vperf_row.file_node, in start order */
	unsigned int nr;		/* rows on the list */
	u64 lost;			/* threads that got no context */
	struct vperf_user *user;	/* who opened it: what it holds is charged there (user.c) */
};

/*
 * A file's row of one context: the live context while there is one, then
 * the counts it ended with.  Kept until the file's release.
 */
struct vperf_row {
	struct list_head file_node;	/* vperf_file.rows */
	struct vperf_thread *t;		/* the live context, NULL once it ended */
	struct pid *pid, *tgid;		/* for THREAD_LIST, in the reader's namespace */
	u32 flags;			/* VPERF_ROW_* once it ended */
	u32 nr;				/* counters */
	char comm[TASK_COMM_LEN];	/* the name when it ended */
	u64 switches, host_ns, guest_ns, sched_ns;	/* the page's, at the end */
	struct vperf_thread_counter counters[];		/* nr of them */
};

struct vperf_thread {
	struct hlist_node node;		/* vperf_threads while live, RCU */
	struct vperf_row *row;		/* its row on the file */
	struct vperf_file *vf;		/* the file it belongs to */
	struct task_struct *task;	/* the key; a reference while live */
	struct page *page;		/* the thread page; one reference */
	struct vperf_thread_page *tp;	/* its kernel address */
	u32 flags;			/* VPERF_THREAD_* */
	/*
	 * Its starter may see what every thread does (vperf_may_see_all()):
	 * the page publishes the raw vCPU values of each slice's base, and the
	 * doorbell maps.  Raw values show what ran on the vCPU between the
	 * thread's slices: other threads, other users.
	 */
	bool raw;
	int base_cpu;			/* CPU of base[], -1: none */
	u32 nr;				/* the context's counters (events) */
	u8 ev[VPERF_THREAD_MAX_COUNTERS];	/* the event (pv.c's id) of each; one user reference
						 * unless guest-accounted */
	u8 base_slot[VPERF_THREAD_MAX_COUNTERS];	/* the vCPU slot counting it at the base, or none */
	u64 base_host_ns;		/* host time of base[] */
	u64 base_guest_ns;		/* local_clock() at base[] */
	u64 base_sched_ns;		/* the task's se.sum_exec_runtime at base[] */
	/*
	 * A guest-accounted context: its events are only vcpu-clock and steal,
	 * which the guest can account by itself (slice time by its clock, less
	 * the steal KVM's record shows), so its switches make no hypercall.
	 */
	bool guest;
	u8 kind[VPERF_THREAD_MAX_COUNTERS];	/* guest: VPERF_GK_* of counter i */
	u64 base_steal;			/* guest: the CPU's steal at the base */
	size_t charge;			/* charged to its file's user while live, besides its row */
	struct vperf_counter_value base[VPERF_THREAD_MAX_COUNTERS];	/* counter i's slot then */
	struct vperf_sampler *sampler;	/* VPERF_THREAD_SAMPLE: its ring (sample.c); else NULL */
	struct rcu_head rcu;
};

enum { VPERF_GK_CLOCK, VPERF_GK_STEAL };

/* slices not accounted: their thread had no base, or a base on another CPU; failed switch snapshots */
atomic_long_t vperf_slices_unbased, vperf_slices_elsewhere, vperf_snapshot_failures;

static DEFINE_HASHTABLE(vperf_threads, 6);
static DEFINE_SPINLOCK(vperf_threads_lock);
static atomic_t vperf_nr_threads = ATOMIC_INIT(0);	/* live contexts */

int vperf_threads_count(void)
{
	return atomic_read(&vperf_nr_threads);
}

/* Under rcu_read_lock() or with preemption off. */
static struct vperf_thread *vperf_thread_find(const struct task_struct *task)
{
	struct vperf_thread *t;

	hash_for_each_possible_rcu(vperf_threads, t, node, (unsigned long)task)
		if (t->task == task)
			return t;
	return NULL;
}

/* No base any more: the doorbell read must not use the page's (seq protected). */
static void vperf_thread_invalidate(struct vperf_thread *t)
{
	struct vperf_thread_page *tp = t->tp;

	t->base_cpu = -1;
	if (!tp->base_valid)
		return;
	WRITE_ONCE(tp->seq, tp->seq + 1);
	smp_wmb();
	tp->base_valid = 0;
	smp_wmb();
	WRITE_ONCE(tp->seq, tp->seq + 1);
}

/* Add (now - base) to the thread page; the thread's slice ended on this CPU. */
static void vperf_thread_account(struct vperf_thread *t, const struct vperf_snap *snap)
{
	u64 host_ns = snap->host_ns;
	struct vperf_thread_page *tp = t->tp;
	struct task_struct *task;
	u32 i;

	if (t->base_cpu != smp_processor_id()) {
		/* No base (no page there, a failed snapshot): lose the slice. */
		atomic_long_inc(t->base_cpu < 0 ? &vperf_slices_unbased : &vperf_slices_elsewhere);
		vperf_thread_invalidate(t);
		return;
	}
	WRITE_ONCE(tp->seq, tp->seq + 1);
	smp_wmb();
	for (i = 0; i < t->nr; i++) {
		const struct vperf_counter_value *b = &t->base[i], *now;
		u8 s = t->base_slot[i];

		if (s >= snap->nr || snap->ev[s] != t->ev[i]) {
			/*
			 * Not on a slot during the slice (its turn comes later:
			 * multiplexed), or the host lost the counter: enabled,
			 * not running, no count.
			 */
			if (host_ns >= t->base_host_ns)
				tp->counters[i].enabled += host_ns - t->base_host_ns;
			continue;
		}
		now = &snap->v[s];
		/*
		 * Slots carry their counts across reprogramming (pv.c), so they
		 * never go back; value is modulo 2^64 (the own-exit correction).
		 */
		if (now->value - b->value < (1ull << 63))
			tp->counters[i].value += now->value - b->value;
		if (now->enabled >= b->enabled)
			tp->counters[i].enabled += now->enabled - b->enabled;
		if (now->running >= b->running)
			tp->counters[i].running += now->running - b->running;
	}
	if (host_ns >= t->base_host_ns)
		tp->host_ns += host_ns - t->base_host_ns;
	tp->guest_ns += local_clock() - t->base_guest_ns;
	/*
	 * The scheduler has charged prev up to this switch (update_curr()
	 * ran before the tracepoint); for current (READ, STOP) up to its last
	 * update, and the next slice starts from the same value: the sums
	 * telescope.
	 */
	task = READ_ONCE(t->task);	/* once: the file's release may end the context meanwhile */
	if (task && task->se.sum_exec_runtime >= t->base_sched_ns)
		tp->sched_ns += task->se.sum_exec_runtime - t->base_sched_ns;
	tp->switches++;
	tp->base_valid = 0;
	t->base_cpu = -1;	/* before seq turns even: an NMI then must not add the slice twice */
	smp_wmb();
	WRITE_ONCE(tp->seq, tp->seq + 1);
}

static void vperf_thread_set_base(struct vperf_thread *t, const struct vperf_snap *snap)
{
	struct vperf_thread_page *tp = t->tp;
	struct task_struct *task;
	u32 i, valid;

	/* odd first: an overflow NMI here (vperf_thread_overflow) must not use a half-copied base */
	WRITE_ONCE(tp->seq, tp->seq + 1);
	smp_wmb();
	t->base_host_ns = snap->host_ns;
	t->base_guest_ns = local_clock();
	task = READ_ONCE(t->task);	/* as in vperf_thread_account() */
	t->base_sched_ns = task ? task->se.sum_exec_runtime : 0;
	valid = 1;
	for (i = 0; i < t->nr; i++) {
		u8 s;

		/* the slot counting its event on this CPU now, if it has one (multiplexing) */
		for (s = 0; s < snap->nr && snap->ev[s] != t->ev[i]; s++)
			;
		if (s == snap->nr) {
			t->base_slot[i] = VPERF_SLOT_NONE;
			t->base[i] = (struct vperf_counter_value){ 0 };
			tp->base[i] = 0;
			tp->slot[i] = VPERF_SLOT_NONE;
			valid = 0;	/* the doorbell cannot read it now: THREAD_READ */
			continue;
		}
		t->base_slot[i] = s;
		t->base[i] = snap->v[s];
		/*
		 * Published for the doorbell read, under seq (the thread is
		 * not in user mode now), in the doorbell's terms: the host's
		 * raw value, at slot s; only to a context that may see all.
		 */
		tp->base[i] = t->raw ? t->base[i].value - snap->adj[s] : 0;
		tp->slot[i] = s;
	}
	t->base_cpu = smp_processor_id();
	tp->base_valid = t->raw && valid;
	smp_wmb();
	WRITE_ONCE(tp->seq, tp->seq + 1);
}

/*
 * A guest-accounted context's slice ends on this CPU: its length by the
 * guest's clock, of which the vCPU lost `steal` to the host (KVM's record);
 * vcpu-clock is the rest.  No exit.
 */
static void vperf_thread_account_guest(struct vperf_thread *t)
{
	struct vperf_thread_page *tp = t->tp;
	struct task_struct *task;
	u64 now = local_clock(), steal, dt, ds = 0;
	u32 i;

	if (t->base_cpu != smp_processor_id() || vperf_steal_read(&steal)) {
		atomic_long_inc(t->base_cpu < 0 ? &vperf_slices_unbased : &vperf_slices_elsewhere);
		t->base_cpu = -1;
		return;
	}
	dt = now - t->base_guest_ns;
	if (steal >= t->base_steal)
		ds = min(steal - t->base_steal, dt);
	WRITE_ONCE(tp->seq, tp->seq + 1);
	smp_wmb();
	for (i = 0; i < t->nr; i++) {
		tp->counters[i].value += t->kind[i] == VPERF_GK_STEAL ? ds : dt - ds;
		tp->counters[i].enabled += dt;
		tp->counters[i].running += dt;
	}
	tp->host_ns += dt;	/* no host time without asking the host: the guest's */
	tp->guest_ns += dt;
	task = READ_ONCE(t->task);
	if (task && task->se.sum_exec_runtime >= t->base_sched_ns)
		tp->sched_ns += task->se.sum_exec_runtime - t->base_sched_ns;
	tp->switches++;
	t->base_cpu = -1;
	smp_wmb();
	WRITE_ONCE(tp->seq, tp->seq + 1);
}

static void vperf_thread_set_base_guest(struct vperf_thread *t)
{
	struct task_struct *task = READ_ONCE(t->task);

	if (vperf_steal_read(&t->base_steal)) {
		t->base_cpu = -1;	/* a CPU without the record: the slice is lost (counted) */
		return;
	}
	t->base_guest_ns = local_clock();
	t->base_sched_ns = task ? task->se.sum_exec_runtime : 0;
	t->base_cpu = smp_processor_id();	/* base_valid stays 0: no doorbell read */
}

/*
 * The reprogramming IPI (pv.c), on each CPU around its COUNTERS_SET: the
 * running thread's slice ends with the slots as they were (before) and a
 * new one starts with the slots as they are (after), so that an event that
 * lost or gained a slot counts exactly while it had one.  Interrupts are
 * off; every other base and account of this CPU happens with interrupts
 * off too, so none is half done here.
 */
void vperf_thread_rebase(const struct vperf_snap *before, const struct vperf_snap *after)
{
	struct vperf_thread *t;

	rcu_read_lock();
	t = vperf_thread_find(current);
	if (t && !t->guest && t->base_cpu == (int)smp_processor_id()) {
		if (before)
			vperf_thread_account(t, before);
		else
			vperf_thread_invalidate(t);
		vperf_thread_set_base(t, after);
	}
	rcu_read_unlock();
}

/* sched_switch: preemption is off, the runqueue lock held.  Never sleeps. */
static void vperf_probe_sched_switch(void *data, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	struct vperf_snap snap;
	struct vperf_thread *pt, *nt;

	if (!atomic_read(&vperf_nr_threads))
		return;
	rcu_read_lock();
	pt = vperf_thread_find(prev);
	nt = vperf_thread_find(next);
	/* guest-accounted ends need no hypercall */
	if (pt && pt->guest) {
		vperf_thread_account_guest(pt);
		pt = NULL;
	}
	if (nt && nt->guest) {
		vperf_thread_set_base_guest(nt);
		nt = NULL;
	}
	if (!pt && !nt)
		goto unlock;
	/* One hypercall for both ends of the switch. */
	if (vperf_snapshot(&snap)) {
		atomic_long_inc(&vperf_snapshot_failures);
		if (pt)
			vperf_thread_invalidate(pt);
		if (nt)
			vperf_thread_invalidate(nt);
		goto unlock;
	}
	if (pt)
		vperf_thread_account(pt, &snap);
	if (nt)
		vperf_thread_set_base(nt, &snap);
unlock:
	rcu_read_unlock();
}

/* An ended context, a grace period later: no probe or NMI sees it any more. */
static void vperf_thread_free_rcu(struct rcu_head *rcu)
{
	struct vperf_thread *t = container_of(rcu, struct vperf_thread, rcu);

	vperf_sampler_free(t->sampler);
	put_page(t->page);
	kfree(t);
}

/* What a live context charges its file's user: itself, its page, its ring (of 0 data pages: none). */
static size_t vperf_thread_bytes(u32 sample_pages)
{
	return sizeof(struct vperf_thread) + PAGE_SIZE +
	       (sample_pages ? vperf_sampler_bytes(sample_pages) : 0);
}

/* ...and its row, until the file's release */
static size_t vperf_row_bytes(u32 nr)
{
	return struct_size((struct vperf_row *)NULL, counters, nr);
}

static void vperf_row_free(struct vperf_row *r)
{
	put_pid(r->pid);
	put_pid(r->tgid);
	kfree(r);
}

/* What a context counts: its events' slots, or (guest) their kinds and no slot. */
struct vperf_ctx_events {
	u32 nr;
	bool guest;
	u8 ev[VPERF_THREAD_MAX_COUNTERS];
	u8 kind[VPERF_THREAD_MAX_COUNTERS];
};

/*
 * A context for task, not yet on any list; gfp GFP_KERNEL in process
 * context, GFP_NOWAIT in a probe.  Takes a reference on the task.  The
 * references on its events are the caller's business: once it is linked,
 * the context owns one on each (vperf_thread_finish puts them).
 */
static struct vperf_thread *vperf_thread_alloc(struct task_struct *task, u32 flags,
					       const struct vperf_ctx_events *ce, gfp_t gfp)
{
	struct vperf_thread *t;

	gfp |= __GFP_ACCOUNT;
	t = kzalloc(sizeof(*t), gfp);
	if (!t)
		return NULL;
	t->row = kzalloc(struct_size(t->row, counters, ce->nr), gfp);
	t->page = alloc_page(gfp | __GFP_ZERO);
	if (!t->row || !t->page) {
		if (t->page)
			__free_page(t->page);
		kfree(t->row);
		kfree(t);
		return NULL;
	}
	t->row->t = t;
	t->row->nr = ce->nr;
	t->row->pid = get_task_pid(task, PIDTYPE_PID);
	t->row->tgid = get_task_pid(task, PIDTYPE_TGID);
	t->tp = page_address(t->page);
	t->tp->size = sizeof(*t->tp);
	t->tp->version = VPERF_THREAD_PAGE_VERSION;
	t->tp->nr = ce->nr;
	t->nr = ce->nr;
	t->guest = ce->guest;
	memcpy(t->ev, ce->ev, ce->nr);
	memset(t->tp->slot, VPERF_SLOT_NONE, sizeof(t->tp->slot));	/* set with each base */
	memset(t->base_slot, VPERF_SLOT_NONE, sizeof(t->base_slot));
	memcpy(t->kind, ce->kind, ce->nr);
	t->flags = flags;
	t->base_cpu = -1;
	get_task_struct(task);
	t->task = task;
	return t;
}

/* A context that never went live (lost a race, over a limit); its events are the caller's. */
static void vperf_thread_discard(struct vperf_thread *t)
{
	vperf_sampler_free(t->sampler);
	put_task_struct(t->task);
	put_page(t->page);
	vperf_row_free(t->row);
	kfree(t);
}

/* Under vperf_threads_lock: live on the hash and the end of vf's list. */
static void vperf_thread_link(struct vperf_file *vf, struct vperf_thread *t)
{
	t->vf = vf;
	list_add_tail(&t->row->file_node, &vf->rows);
	vf->nr++;
	atomic_inc(&vperf_nr_threads);
	hash_add_rcu(vperf_threads, &t->node, (unsigned long)t->task);
}

/* The page's sums into r, with the seq protocol (a probe may be writing them on another CPU). */
static void vperf_row_copy(struct vperf_row *r, const struct vperf_thread_page *tp)
{
	u32 seq, i;

	do {
		seq = smp_load_acquire(&tp->seq);
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		r->switches = READ_ONCE(tp->switches);
		r->host_ns = READ_ONCE(tp->host_ns);
		r->guest_ns = READ_ONCE(tp->guest_ns);
		r->sched_ns = READ_ONCE(tp->sched_ns);
		for (i = 0; i < r->nr; i++) {
			r->counters[i].value = READ_ONCE(tp->counters[i].value);
			r->counters[i].enabled = READ_ONCE(tp->counters[i].enabled);
			r->counters[i].running = READ_ONCE(tp->counters[i].running);
		}
		smp_rmb();
	} while ((seq & 1) || READ_ONCE(tp->seq) != seq);
}

/*
 * Under vperf_threads_lock: a live context ends.  Its row keeps its last
 * counts (final at STOP and exit: the thread runs here, so no probe writes
 * its page now; at the file's release nobody reads the row again); the
 * context, its page and its ring go after a grace period (a mapping keeps
 * its pages).  The task reference goes: the key may be reused once the
 * task is freed, and the context is off the hash before that.
 */
static void vperf_thread_finish(struct vperf_thread *t, u32 row_flag)
{
	struct vperf_row *r = t->row;

	hash_del_rcu(&t->node);
	atomic_dec(&vperf_nr_threads);
	get_task_comm(r->comm, t->task);
	r->flags |= row_flag;
	vperf_row_copy(r, t->tp);
	r->t = NULL;
	put_task_struct(t->task);	/* never the last: the caller or the task holds one */
	WRITE_ONCE(t->task, NULL);	/* a probe that found t before: it reads it once */
	vperf_events_put(t->vf->user, t->ev, t->guest ? 0 : t->nr);
	vperf_user_uncharge(t->vf->user, t->charge);	/* its row's stays */
	if (t->sampler)
		vperf_sampling_put();
	call_rcu(&t->rcu, vperf_thread_free_rcu);
}

/* Account the running slice of current (this CPU) and start a new one. */
static void vperf_thread_resample(struct vperf_thread *t, bool again)
{
	struct vperf_snap snap;

	if (t->guest) {
		vperf_thread_account_guest(t);
		if (again)
			vperf_thread_set_base_guest(t);
		return;
	}
	unsigned long flags;

	/* interrupts off: a reprogramming IPI must not rebase between the snapshot and its use */
	local_irq_save(flags);
	if (vperf_snapshot(&snap)) {
		vperf_thread_invalidate(t);
	} else {
		vperf_thread_account(t, &snap);
		if (again)
			vperf_thread_set_base(t, &snap);
	}
	local_irq_restore(flags);
}

/* sched_process_exit: the exiting thread (current) ends its context.  Never sleeps. */
static void vperf_probe_process_exit(void *data, struct task_struct *task)
{
	struct vperf_thread *t;

	vperf_mark_task_exit(task);	/* its markers, a last time (mark.c) */
	if (!atomic_read(&vperf_nr_threads))
		return;
	spin_lock(&vperf_threads_lock);
	t = vperf_thread_find(task);
	if (t) {
		if (task == current)
			vperf_thread_resample(t, false);
		vperf_thread_finish(t, VPERF_ROW_EXITED);
	}
	spin_unlock(&vperf_threads_lock);
}

/*
 * sched_process_fork: in the parent, before the child runs.  Never sleeps.
 *
 * The child's context is allocated outside vperf_threads_lock and linked
 * under it, and only there, with the parent's context found live (and the
 * same one) under the lock, does it take its references on the events:
 * the parent's context holds one on each, and it cannot end while the lock
 * is held, so no event it counts can fall to 0 users, be trimmed and have
 * its table entry given to another event before the child's references
 * are taken.  (Taken under RCU alone, they could: the file's release on
 * another CPU ends the parent's context and puts the last references, the
 * trim frees the entry, a THREAD_START claims it for a new event and sets
 * its count, and the child's increment then lands on, or is wiped from,
 * someone else's event.)  The whole probe is one RCU read-side section, so
 * the parent's context found first is not freed meanwhile and comparing
 * pointers tells whether it is still the one live.
 */
static void vperf_probe_process_fork(void *data, struct task_struct *parent,
				     struct task_struct *child)
{
	struct vperf_ctx_events ce;
	struct vperf_thread *pt, *ct;
	u32 flags;

	if (!atomic_read(&vperf_nr_threads))
		return;
	rcu_read_lock();
	pt = vperf_thread_find(parent);
	flags = pt ? READ_ONCE(pt->flags) & ~VPERF_THREAD_SAMPLE : 0;	/* children count, not sample */
	if (!(flags & VPERF_THREAD_INHERIT))
		goto unlock_rcu;
	/* the parent's events: set at its start, never changed */
	ce.nr = pt->nr;
	ce.guest = pt->guest;
	memcpy(ce.ev, pt->ev, ce.nr);
	memcpy(ce.kind, pt->kind, ce.nr);
	ct = vperf_thread_alloc(child, flags, &ce, GFP_NOWAIT | __GFP_NOWARN);

	spin_lock(&vperf_threads_lock);
	if (vperf_thread_find(parent) != pt)
		goto discard;	/* it ended meanwhile (and the parent may have another now) */
	/*
	 * The child's pid is visible before this probe runs: a THREAD_START by tid may have given it
	 * a context already. One context per task (the probes find the first only): that one stays.
	 */
	if (ct && vperf_thread_find(child))
		goto discard;
	if (!ct || pt->vf->nr >= READ_ONCE(max_threads) ||
	    vperf_user_charge(pt->vf->user, vperf_thread_bytes(0) + vperf_row_bytes(ce.nr))) {
		pt->vf->lost++;
		goto discard;
	}
	ct->charge = vperf_thread_bytes(0);
	if (!ce.guest)
		vperf_events_hold(pt->vf->user, ce.ev, ce.nr);	/* pt holds each: none is at 0 */
	ct->raw = pt->raw;	/* as its starter's (perf's inherited events keep theirs) */
	vperf_thread_link(pt->vf, ct);	/* the base comes at its first switch-in */
	spin_unlock(&vperf_threads_lock);
	goto unlock_rcu;

discard:
	spin_unlock(&vperf_threads_lock);
	if (ct)
		vperf_thread_discard(ct);
unlock_rcu:
	rcu_read_unlock();
}

/* ---- sampling: the NMI's side ---- */

/*
 * NMI context, on the CPU whose vcpu-clock overflowed (sample.c's handler):
 * a sample for the interrupted thread if it samples.  vp is this CPU's vCPU
 * page, which the host updated before it raised the NMI (and cannot change
 * while this vCPU runs the handler).
 */
void vperf_thread_overflow(struct pt_regs *regs, const struct vperf_vcpu_page *vp)
{
	struct vperf_thread_page *tp;
	struct vperf_thread *t;
	u64 values[VPERF_THREAD_MAX_COUNTERS];
	struct vperf_snap snap;
	u32 i, seq, nr = 0;

	rcu_read_lock();
	t = vperf_thread_find(current);
	if (!t || !t->sampler)
		goto out;
	/* the counts as the page would have them now, unless the NMI hit a page update */
	tp = t->tp;
	seq = READ_ONCE(tp->seq);
	if (!(seq & 1) && t->base_cpu == (int)smp_processor_id()) {
		vperf_snap_page(vp, &snap);	/* nr 0: the NMI hit a reprogramming */
		for (i = 0; i < t->nr && snap.nr; i++)
			values[i] = tp->counters[i].value + (t->base_slot[i] < snap.nr ?
				    snap.v[t->base_slot[i]].value - t->base[i].value : 0);
		nr = snap.nr ? t->nr : 0;
	}
	vperf_sampler_write(t->sampler, regs, values, nr);
out:
	rcu_read_unlock();
}

/* The live context of the calling thread on this file; under vperf_threads_lock. */
static struct vperf_thread *vperf_file_thread(struct vperf_file *vf)
{
	struct vperf_thread *t = vperf_thread_find(current);

	return t && t->vf == vf ? t : NULL;
}

/* May current see what every thread does (the vCPUs' totals)?  As perf's CPU-wide events. */
bool vperf_may_see_all(void)
{
	return READ_ONCE(paranoid) <= 0 || capable(CAP_PERFMON) || capable(CAP_SYS_ADMIN);
}

struct vperf_paranoid_work {
	struct work_struct work;
	int level;
};

static void vperf_paranoid_read(struct work_struct *work)
{
	struct vperf_paranoid_work *pw = container_of(work, struct vperf_paranoid_work, work);
	char buf[16];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int level;

	f = filp_open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY, 0);
	if (IS_ERR(f))
		return;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (!kstrtoint(strim(buf), 10, &level))
		pw->level = level;
}

/*
 * kernel.perf_event_paranoid.  The kernel exports neither the variable nor
 * perf_allow_kernel(), so its /proc file is read, by a kworker: workers run
 * in the init namespaces with the kernel's credentials, so the caller cannot
 * put another file at that path (an unprivileged user may mount anything
 * over /proc in a mount namespace of its own).  INT_MAX, the strictest, if
 * it cannot be read.  Process context; sleeps.
 */
static int vperf_perf_paranoid(void)
{
	struct vperf_paranoid_work pw = { .level = INT_MAX };

	INIT_WORK_ONSTACK(&pw.work, vperf_paranoid_read);
	schedule_work(&pw.work);
	flush_work(&pw.work);
	destroy_work_on_stack(&pw.work);
	return pw.level;
}

/*
 * May current count what the guest kernel executes?  perf's rule
 * (perf_allow_kernel()): with CAP_PERFMON or CAP_SYS_ADMIN, or while
 * kernel.perf_event_paranoid is below 2; else user mode only.
 */
bool vperf_may_count_kernel(void)
{
	return perfmon_capable() || vperf_perf_paranoid() < 2;
}

/* May current start a context for task (or sample it: trace.c)?  0 or -EACCES. */
int vperf_may_monitor(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	int level = READ_ONCE(paranoid);
	bool same;

	if (task == current || capable(CAP_PERFMON) || capable(CAP_SYS_ADMIN))
		return 0;
	if (level >= 2)
		return -EACCES;
	if (level <= 0)
		return 0;
	rcu_read_lock();
	tcred = __task_cred(task);
	same = uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) && gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid);
	rcu_read_unlock();
	if (!same)
		return -EACCES;
	task_lock(task);
	if (task->mm && get_dumpable(task->mm) != SUID_DUMP_USER)
		same = false;
	task_unlock(task);
	return same ? 0 : -EACCES;
}

/* Can the guest account this event by itself (vcpu-clock or steal)?  Its kind, or -1. */
static int vperf_guest_kind(const struct vperf_event_desc *d)
{
	if (d->flags || !memchr(d->name, '\0', sizeof(d->name)))
		return -1;
	if (d->source == VPERF_SRC_PERF && !strcmp(d->name, "task-clock"))
		return VPERF_GK_CLOCK;
	if (d->source == VPERF_SRC_STEAL)
		return VPERF_GK_STEAL;
	return -1;
}

/*
 * START's events: the user's list (VER2) or the three fixed ones.  A list
 * of only vcpu-clock and steal, on a guest whose every CPU has KVM's
 * steal-time record, and not sampling, is guest-accounted (no slot, no
 * hypercall at switches); any other claims vCPU counter slots.  0, or
 * -errno with *bad the event it is about.
 */
static int vperf_start_events(struct vperf_user *u, const struct vperf_thread_start *ks, u32 usize,
			      struct vperf_ctx_events *ce, u32 *bad)
{
	struct vperf_event_desc *ev;
	int ret, k, may_kernel = -1;
	u32 i;

	memset(ce, 0, sizeof(*ce));
	if (usize < VPERF_THREAD_START_SIZE_VER2 || !ks->nr_events) {
		for (i = 0; i < VPERF_FIXED_SLOTS; i++)
			ce->ev[i] = i;
		ce->nr = VPERF_FIXED_SLOTS;
		vperf_events_hold(u, ce->ev, ce->nr);
		return 0;
	}
	if (ks->nr_events > VPERF_THREAD_MAX_COUNTERS) {
		*bad = VPERF_THREAD_MAX_COUNTERS;
		return -E2BIG;
	}
	ev = memdup_user(u64_to_user_ptr(ks->events), ks->nr_events * sizeof(*ev));
	if (IS_ERR(ev))
		return PTR_ERR(ev);
	ce->guest = !(ks->flags & VPERF_THREAD_SAMPLE) && vperf_steal_everywhere();
	for (i = 0; i < ks->nr_events && ce->guest; i++) {
		k = vperf_guest_kind(&ev[i]);
		if (k < 0)
			ce->guest = false;
		else
			ce->kind[i] = k;
	}
	/* events that may count the guest kernel: perf's rule (and its error) */
	for (i = 0; i < ks->nr_events; i++) {
		if (!vperf_desc_counts_kernel(&ev[i]))
			continue;
		if (may_kernel < 0)
			may_kernel = vperf_may_count_kernel();
		if (!may_kernel) {
			*bad = i;
			kfree(ev);
			return -EACCES;
		}
	}
	ce->nr = ks->nr_events;
	if (ce->guest) {
		memset(ce->ev, VPERF_SLOT_NONE, sizeof(ce->ev));
		ret = 0;
	} else {
		ret = vperf_events_get(u, ev, ks->nr_events, ce->ev, bad);
	}
	kfree(ev);
	return ret;
}

long vperf_ioctl_thread_start(struct file *file, void __user *uarg)
{
	struct vperf_ctx_events ce;
	struct vperf_file *vf = file->private_data;
	struct task_struct *task;
	struct vperf_thread_start ks;
	struct vperf_thread *t;
	struct vperf_snap snap;
	unsigned long irqflags;
	u32 usize, bad = ~0u;
	size_t charge;
	int ret;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < VPERF_THREAD_START_SIZE_VER0)
		return -EINVAL;
	/* A larger (newer) struct is fine if what we do not know is zero. */
	ret = copy_struct_from_user(&ks, sizeof(ks), uarg, usize);
	if (ret)
		return ret;
	if ((ks.flags & ~VPERF_THREAD_FLAGS) || ks.tid < 0)
		return -EINVAL;
	if (ks.flags & VPERF_THREAD_SAMPLE) {
		ret = vperf_sampler_check(&ks, usize);
		if (ret)
			return ret;
	}

	if (ks.tid == 0 || ks.tid == task_pid_vnr(current)) {
		task = current;
		get_task_struct(task);
	} else {
		struct pid *pid = find_get_pid(ks.tid);

		task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
		put_pid(pid);
		if (!task)
			return -ESRCH;
		ret = vperf_may_monitor(task);
		if (ret)
			goto put_task;
	}

	ret = vperf_start_events(vf->user, &ks, usize, &ce, &bad);
	if (ret) {
		/* which event, for the caller's message (the rest of the structure is not written) */
		if (bad != ~0u && usize >= VPERF_THREAD_START_SIZE_VER2)
			put_user((s32)bad, (s32 __user *)(uarg + offsetof(struct vperf_thread_start,
									   bad_event)));
		goto put_task;
	}
	/* the sampled counter is the vcpu-clock (slot 0): the only one armed for NMIs */
	if ((ks.flags & VPERF_THREAD_SAMPLE) &&
	    (ks.sample_counter >= ce.nr || ce.ev[ks.sample_counter] != VPERF_THREAD_CTR_VCPU_CLOCK)) {
		ret = -EINVAL;
		goto put_events;
	}
	/* the file's user's share of the guest's memory (user.c): EDQUOT past it */
	charge = vperf_thread_bytes(ks.flags & VPERF_THREAD_SAMPLE ? ks.sample_pages : 0);
	ret = vperf_user_charge(vf->user, charge + vperf_row_bytes(ce.nr));
	if (ret)
		goto put_events;
	t = vperf_thread_alloc(task, ks.flags, &ce, GFP_KERNEL);
	if (!t) {
		ret = -ENOMEM;
		goto uncharge;
	}
	t->charge = charge;
	/* decided now, by who starts it, as perf's checks are at perf_event_open() */
	t->raw = vperf_may_see_all();
	if (ks.flags & VPERF_THREAD_SAMPLE) {
		ret = vperf_sampler_new(&ks, &t->sampler);
		if (ret)
			goto discard;
		/* every vCPU's overflow NMI armed at this period (or EBUSY: another period runs) */
		ret = vperf_sampling_get(ks.sample_period);
		if (ret)
			goto discard;
	}

	/*
	 * Interrupts are off from here to the insertion: the base is this
	 * CPU's, and no reprogramming IPI comes between it and the link.
	 */
	spin_lock_irqsave(&vperf_threads_lock, irqflags);
	if (vperf_thread_find(task)) {
		ret = -EBUSY;
		goto unlock;
	}
	/*
	 * A thread past exit_signals() may have run its exit probe already: a context now would
	 * never end before the file does, and hold the task. PF_EXITING is set before the probe,
	 * which takes this lock, so either the probe finds the context or this sees the flag.
	 */
	if (READ_ONCE(task->flags) & PF_EXITING) {
		ret = -ESRCH;
		goto unlock;
	}
	if (vf->nr >= READ_ONCE(max_threads)) {
		ret = -ENOSPC;
		goto unlock;
	}
	if (task == current && t->guest) {
		vperf_thread_set_base_guest(t);
	} else if (task == current) {
		ret = vperf_snapshot(&snap);
		if (ret)
			goto unlock;
		vperf_thread_set_base(t, &snap);
	}
	/* Another thread: its base comes at its next switch-in. */
	vperf_thread_link(vf, t);
	spin_unlock_irqrestore(&vperf_threads_lock, irqflags);
	put_task_struct(task);

	/* the out fields; the caller's in fields stay as they were */
	ks.size = min_t(u32, usize, sizeof(ks));
	ks.nr_counters = ce.nr;
	ks.bad_event = -1;
	ks.page_size = PAGE_SIZE;
	ks.page_version = VPERF_THREAD_PAGE_VERSION;
	if (copy_to_user(uarg, &ks, ks.size))
		return -EFAULT;	/* the context stays: STOP or close ends it */
	return 0;

unlock:
	spin_unlock_irqrestore(&vperf_threads_lock, irqflags);
	if (ks.flags & VPERF_THREAD_SAMPLE)
		vperf_sampling_put();
discard:
	vperf_thread_discard(t);
uncharge:
	vperf_user_uncharge(vf->user, charge + vperf_row_bytes(ce.nr));
put_events:
	vperf_events_put(vf->user, ce.ev, ce.guest ? 0 : ce.nr);
put_task:
	put_task_struct(task);
	return ret;
}

long vperf_ioctl_thread_stop(struct file *file)
{
	struct vperf_thread *t;

	spin_lock(&vperf_threads_lock);
	t = vperf_file_thread(file->private_data);
	if (!t) {
		spin_unlock(&vperf_threads_lock);
		return -ENOENT;
	}
	/* The current slice, so that the page is final. */
	vperf_thread_resample(t, false);
	vperf_thread_finish(t, VPERF_ROW_STOPPED);
	spin_unlock(&vperf_threads_lock);
	return 0;
}

long vperf_ioctl_thread_read(struct file *file)
{
	struct vperf_thread *t;

	spin_lock(&vperf_threads_lock);
	t = vperf_file_thread(file->private_data);
	if (t)
		vperf_thread_resample(t, true);
	spin_unlock(&vperf_threads_lock);
	return t ? 0 : -ENOENT;
}

/* Under vperf_threads_lock: r as THREAD_LIST gives it (a live context's page: seq protocol). */
static void vperf_thread_row(const struct vperf_row *r, struct vperf_thread_row *row)
{
	const struct vperf_thread_page *tp;
	u32 seq, i;

	memset(row, 0, sizeof(*row));
	row->pid = pid_vnr(r->tgid);
	row->tid = pid_vnr(r->pid);
	row->flags = r->flags;
	if (!r->t) {
		memcpy(row->comm, r->comm, sizeof(row->comm));
		row->nr = r->nr;
		row->switches = r->switches;
		row->host_ns = r->host_ns;
		row->guest_ns = r->guest_ns;
		row->sched_ns = r->sched_ns;
		memcpy(row->counters, r->counters, r->nr * sizeof(r->counters[0]));
		return;
	}
	get_task_comm(row->comm, r->t->task);
	tp = r->t->tp;
	do {
		seq = smp_load_acquire(&tp->seq);
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		row->nr = READ_ONCE(tp->nr);
		row->switches = READ_ONCE(tp->switches);
		row->host_ns = READ_ONCE(tp->host_ns);
		row->guest_ns = READ_ONCE(tp->guest_ns);
		row->sched_ns = READ_ONCE(tp->sched_ns);
		for (i = 0; i < VPERF_THREAD_MAX_COUNTERS; i++) {
			row->counters[i].value = READ_ONCE(tp->counters[i].value);
			row->counters[i].enabled = READ_ONCE(tp->counters[i].enabled);
			row->counters[i].running = READ_ONCE(tp->counters[i].running);
		}
		smp_rmb();
	} while ((seq & 1) || READ_ONCE(tp->seq) != seq);
}

#define VPERF_LIST_CHUNK	8

long vperf_ioctl_thread_list(struct file *file, void __user *uarg)
{
	struct vperf_file *vf = file->private_data;
	struct vperf_thread_row *rows;
	struct vperf_thread_list kl;
	u32 usize, rsize, done = 0, n, i;
	struct list_head *pos;
	long ret = 0;
	u8 __user *dst;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < VPERF_THREAD_LIST_SIZE_VER0)
		return -EINVAL;
	ret = copy_struct_from_user(&kl, sizeof(kl), uarg, usize);
	if (ret)
		return ret;
	/* a row may grow, but not without bound: the tail past ours is cleared per row */
	if (kl.row_size < VPERF_THREAD_ROW_SIZE_VER0 || kl.row_size > 65536 || kl.total || kl.lost)
		return -EINVAL;
	rsize = min_t(u32, kl.row_size, sizeof(*rows));
	dst = u64_to_user_ptr(kl.rows);

	rows = kmalloc_array(VPERF_LIST_CHUNK, sizeof(*rows), GFP_KERNEL);
	if (!rows)
		return -ENOMEM;
	/*
	 * Rows are only appended while the file is in use (its release is the
	 * only remover), so a cursor stays valid across the unlocked copies.
	 */
	pos = &vf->rows;
	while (done < kl.nr_rows) {
		n = 0;
		spin_lock(&vperf_threads_lock);
		while (n < VPERF_LIST_CHUNK && done + n < kl.nr_rows &&
		       pos->next != &vf->rows) {
			pos = pos->next;
			vperf_thread_row(list_entry(pos, struct vperf_row, file_node), &rows[n++]);
		}
		spin_unlock(&vperf_threads_lock);
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			/* A larger caller row gets zeros past ours. */
			if (copy_to_user(dst + (size_t)(done + i) * kl.row_size, &rows[i], rsize) ||
			    (kl.row_size > rsize &&
			     clear_user(dst + (size_t)(done + i) * kl.row_size + rsize,
					kl.row_size - rsize))) {
				ret = -EFAULT;
				goto out;
			}
		}
		done += n;
	}

	spin_lock(&vperf_threads_lock);
	kl.total = vf->nr;
	kl.lost = vf->lost;
	spin_unlock(&vperf_threads_lock);
	kl.size = min_t(u32, usize, sizeof(kl));
	kl.row_size = rsize;
	kl.nr_rows = done;
	if (copy_to_user(uarg, &kl, kl.size))
		ret = -EFAULT;
out:
	kfree(rows);
	return ret;
}

/*
 * The doorbell page, for a thread with a context on this file that may see
 * what every thread does: uncached, read-only, not inherited by fork.  A
 * load returns the vCPU's raw counter, so two loads around a switch show
 * what others ran in between: the doorbell is for contexts that publish
 * the raw base anyway (t->raw).  Other threads of the process share the
 * mapping; a load there only tells them their own vCPU's counters.
 */
static int vperf_doorbell_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vperf_thread *t;
	int ret;

	if (!vperf_dev.doorbell_gpa)
		return -ENODEV;
	spin_lock(&vperf_threads_lock);
	t = vperf_file_thread(file->private_data);
	ret = !t ? -ENOENT : !t->raw ? -EACCES : 0;
	spin_unlock(&vperf_threads_lock);
	if (ret)
		return ret;
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	return io_remap_pfn_range(vma, vma->vm_start, PHYS_PFN(vperf_dev.doorbell_gpa), PAGE_SIZE,
				  pgprot_noncached(vma->vm_page_prot));
}

/* The calling thread's sample ring (sample.c maps it). */
static int vperf_ring_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct page *pages[1 + VPERF_SAMPLE_MAX_PAGES];
	struct vperf_thread *t;
	u32 n = 0;

	spin_lock(&vperf_threads_lock);
	t = vperf_file_thread(file->private_data);
	if (t && t->sampler)
		n = vperf_sampler_get_pages(t->sampler, pages);
	spin_unlock(&vperf_threads_lock);
	if (!n)
		return -ENOENT;	/* no sampling context of this thread */
	return vperf_sampler_map(vma, pages, n);
}

int vperf_thread_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vperf_thread *t;
	struct page *page;
	int ret;

	if (vma->vm_pgoff == VPERF_SAMPLE_PGOFF)
		return vperf_ring_mmap(file, vma);
	if (vma->vm_pgoff == VPERF_MARK_PGOFF)
		return vperf_mark_mmap(file, vma);	/* mark.c: no context needed */
	if (vma->vm_pgoff != 0 && vma->vm_pgoff != VPERF_DOORBELL_PGOFF)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_pgoff == VPERF_DOORBELL_PGOFF)
		return vperf_doorbell_mmap(file, vma);

	spin_lock(&vperf_threads_lock);
	t = vperf_file_thread(file->private_data);
	page = t ? t->page : NULL;
	if (page)
		get_page(page);
	spin_unlock(&vperf_threads_lock);
	if (!page)
		return -ENOENT;	/* no context of this thread: THREAD_START first */

	/* Never writable, not even by a later mprotect or a private COW copy. */
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	ret = vm_insert_page(vma, vma->vm_start, page);	/* takes its own reference */
	put_page(page);
	return ret;
}

int vperf_thread_open(struct file *file)
{
	struct vperf_file *vf;

	vf = kzalloc(sizeof(*vf), GFP_KERNEL_ACCOUNT);
	if (!vf)
		return -ENOMEM;
	vf->user = vperf_user_get();
	if (!vf->user) {
		kfree(vf);
		return -ENOMEM;
	}
	INIT_LIST_HEAD(&vf->rows);
	file->private_data = vf;
	return 0;
}

void vperf_thread_release(struct file *file)
{
	struct vperf_file *vf = file->private_data;
	struct vperf_row *r, *tmp;

	spin_lock(&vperf_threads_lock);
	list_for_each_entry_safe(r, tmp, &vf->rows, file_node) {
		if (r->t)
			vperf_thread_finish(r->t, VPERF_ROW_STOPPED);
		list_del(&r->file_node);
		vperf_user_uncharge(vf->user, vperf_row_bytes(r->nr));
		vperf_row_free(r);	/* no probe reaches a row */
	}
	spin_unlock(&vperf_threads_lock);
	vperf_user_put(vf->user);
	kfree(vf);
}

struct vperf_user *vperf_file_user(struct file *file)
{
	return ((struct vperf_file *)file->private_data)->user;
}

/* ---- the tracepoints ---- */

struct vperf_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool registered;
};

static struct vperf_tp vperf_tps[] = {
	{ .name = "sched_switch", .probe = vperf_probe_sched_switch },
	{ .name = "sched_process_exit", .probe = vperf_probe_process_exit },
	{ .name = "sched_process_fork", .probe = vperf_probe_process_fork },
};

static void vperf_tp_lookup(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vperf_tps); i++)
		if (!strcmp(tp->name, vperf_tps[i].name))
			vperf_tps[i].tp = tp;
}

static void vperf_tps_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vperf_tps); i++) {
		if (!vperf_tps[i].registered)
			continue;
		tracepoint_probe_unregister(vperf_tps[i].tp, vperf_tps[i].probe, NULL);
		vperf_tps[i].registered = false;
	}
	/* No probe runs any more: after this, contexts and module text can go. */
	tracepoint_synchronize_unregister();
}

int vperf_threads_init(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(vperf_tp_lookup, NULL);
	for (i = 0; i < ARRAY_SIZE(vperf_tps); i++) {
		if (!vperf_tps[i].tp) {
			pr_err(VPERF_PR_PREFIX "no tracepoint %s in this kernel\n", vperf_tps[i].name);
			ret = -ENOENT;
			goto unregister_probes;
		}
		ret = tracepoint_probe_register(vperf_tps[i].tp, vperf_tps[i].probe, NULL);
		if (ret) {
			pr_err(VPERF_PR_PREFIX "cannot hook tracepoint %s: %d\n", vperf_tps[i].name, ret);
			goto unregister_probes;
		}
		vperf_tps[i].registered = true;
	}
	return 0;

unregister_probes:
	vperf_tps_unregister();
	return ret;
}

void vperf_threads_exit(void)
{
	vperf_tps_unregister();
	/*
	 * Every open file holds a module reference and its release ends and
	 * frees its contexts, so none is left here.
	 */
	WARN_ONCE(atomic_read(&vperf_nr_threads),
		  VPERF_PR_PREFIX "%d thread contexts left at unload\n",
		  atomic_read(&vperf_nr_threads));
	/* vperf_thread_free_rcu is module text: wait for every callback. */
	rcu_barrier();
}
