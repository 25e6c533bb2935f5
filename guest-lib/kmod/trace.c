// SPDX-License-Identifier: GPL-2.0
/*
 * Trace offload (docs/abi.md 2.5 version 2 and 7.3): one ring per vCPU in
 * guest memory, registered with TRACE_REGISTER on that vCPU, holding the
 * guest kernel's scheduler, process and interrupt events, the sampling
 * NMIs' samples and the marker records user space hands over (mark.c).
 * The host reads the rings while the vCPUs run; the guest makes a
 * TRACE_FLUSH only when a ring passes half full (at most once until the
 * host's tail moves) and when a ring goes away.
 *
 * Writers on one vCPU nest: a tracepoint probe in process context
 * (preemption off) can be interrupted by a hard interrupt whose probe
 * writes, and either by an NMI that writes a sample.  Each writer reserves
 * its bytes with a cmpxchg on the CPU's reserve offset (an interrupted
 * writer's reservation stays its own) after raising the CPU's nesting
 * count; the ring's head is published, with release order, only by the
 * writer that brings the count back to 0, so the host never sees a record
 * before it is complete.  The publisher raises head with a cmpxchg to the
 * highest reservation it saw, and looks again: an NMI that reserved and
 * published in between is never undone.  No writer waits and none is
 * turned away for nesting; a record that does not fit is dropped and
 * counted in the ring's lost and in the per-type counts (parameter
 * trace_stats).
 *
 * Without a vperf device the rings are those vperf_shm_layout() lays out in an ivshmem-plain
 * device's memory (shm.c, docs/abi.md 8): the same writers, no TRACE_REGISTER, no TRACE_FLUSH
 * (the host polls; a full ring drops and counts).
 *
 * Rings follow CPU hotplug through a dynamic AP state set up when tracing
 * starts: its callbacks run on the CPU concerned (hypercalls are per
 * vCPU).  Tracing starts at load with trace=1, or when root writes 1 to the
 * parameter; writing 0 (and unloading) unhooks the probes, makes each
 * vCPU's final TRACE_FLUSH and unregisters and frees its ring.
 */
#include <linux/binfmts.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task_stack.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <asm/hw_irq.h>
#include <asm/local.h>
#include <asm/msr.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"
#include <vperf/trace_rec.h>
#include <vperf/shm.h>

DEFINE_PER_CPU(struct vperf_trace_stats, vperf_trace_stats);

/* ---- parameters ---- */

/*
 * The largest ring the page allocator gives in one physically contiguous
 * block: the 64-byte header makes a ring 64 bytes more than a power of
 * two, so the data is at most half the largest block (2 MiB on x86-64).
 */
#define VPERF_TRACE_MIN_KB	4u
#define VPERF_TRACE_MAX_KB	((u32)(MAX_ORDER_NR_PAGES * PAGE_SIZE / 2 / 1024))

static unsigned int trace_ring_kb = 1024;
static bool trace_param;		/* what `trace` says: on or off */
static bool trace_ready;		/* init done, exit not begun: `trace` acts */
static DEFINE_MUTEX(trace_mutex);	/* starting and stopping */
static bool trace_on;			/* probes hooked and rings registered */
static enum cpuhp_state trace_cpuhp_state;
static u64 trace_data_size;		/* of the rings being registered */
static atomic_t trace_rings = ATOMIC_INIT(0);	/* CPUs with a registered ring */
static pid_t trace_watch;		/* a tid whose records are also counted apart (tests) */
static u32 trace_vector[VPERF_TRACE_IRQ_NR_KINDS];	/* the last vector seen per kind */

static int vperf_trace_start(void);
static void vperf_trace_stop(void);

static int trace_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret;

	ret = kstrtobool(val, &on);
	if (ret)
		return ret;
	mutex_lock(&trace_mutex);
	if (!trace_ready) {
		trace_param = on;	/* at load: vperf_trace_init() acts on it */
	} else if (on != trace_on) {
		if (on) {
			ret = vperf_trace_start();
		} else {
			vperf_trace_stop();
			ret = 0;
		}
		if (!ret)
			trace_param = on;
	}
	mutex_unlock(&trace_mutex);
	return ret;
}

static int trace_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(trace_on));
}

static const struct kernel_param_ops trace_ops = { .set = trace_set, .get = trace_get };
module_param_cb(trace, &trace_ops, NULL, 0644);
MODULE_PARM_DESC(trace, "trace the guest into per-vCPU rings the host reads (ABI 2.5 version 2): "
		 "1 on, 0 off (default); root may switch it at run time");

static int ring_kb_set(const char *val, const struct kernel_param *kp)
{
	unsigned int kb;
	int ret;

	ret = kstrtouint(val, 0, &kb);
	if (ret)
		return ret;
	if (!is_power_of_2(kb) || kb < VPERF_TRACE_MIN_KB || kb > VPERF_TRACE_MAX_KB) {
		pr_warn(VPERF_PR_PREFIX "trace_ring_kb must be a power of 2 from %u to %u, not %u\n",
			VPERF_TRACE_MIN_KB, VPERF_TRACE_MAX_KB, kb);
		return -EINVAL;
	}
	WRITE_ONCE(trace_ring_kb, kb);
	return 0;
}

static const struct kernel_param_ops ring_kb_ops = { .set = ring_kb_set, .get = param_get_uint };
module_param_cb(trace_ring_kb, &ring_kb_ops, &trace_ring_kb, 0644);
MODULE_PARM_DESC(trace_ring_kb, "data bytes of each vCPU's trace ring, in KiB: a power of 2, "
		 "4..2048 (default 1024); for rings registered afterwards");

module_param_named(trace_watch, trace_watch, int, 0644);
MODULE_PARM_DESC(trace_watch, "a thread id whose records trace_stats also counts apart (tests), "
		 "0: none");

/* ---- the rings ---- */

static int scribble_set(const char *val, const struct kernel_param *kp);
static const struct kernel_param_ops scribble_ops = { .set = scribble_set };
module_param_cb(trace_scribble, &scribble_ops, NULL, 0200);
MODULE_PARM_DESC(trace_scribble, "test hook, root only: writing a CPU number overwrites that CPU's "
		 "ring header with 0xa5 bytes, as a hostile or broken guest could: the host must refuse "
		 "the ring and count it, and that CPU's records are lost from then on (counted)");

struct vperf_trace_cpu {
	struct vperf_trace_ring *ring;	/* NULL: none; set and cleared on the CPU itself */
	unsigned char *data;		/* after the header */
	u64 data_size;			/* ours: the header's is guest-writable */
	size_t alloc_size;
	local_t reserve;		/* bytes reserved, free-running: head <= reserve */
	local_t nest;			/* writers under way on this CPU */
	u64 wm_tail;			/* the tail at the last watermark flush */
	struct irq_work flush_work;	/* the watermark's TRACE_FLUSH */
};

static DEFINE_PER_CPU(struct vperf_trace_cpu, vperf_trace_cpu);

static const char *const trace_type_names[VPERF_TRACE_NR_TYPES] = {
	[VPERF_TRACE_SCHED_SWITCH] = "sched_switch",
	[VPERF_TRACE_SCHED_WAKEUP] = "sched_wakeup",
	[VPERF_TRACE_FORK] = "fork",
	[VPERF_TRACE_EXEC] = "exec",
	[VPERF_TRACE_EXIT] = "exit",
	[VPERF_TRACE_IRQ] = "irq",
	[VPERF_TRACE_SAMPLE] = "sample",
	[VPERF_TRACE_MARK] = "mark",
	[VPERF_TRACE_LOST] = "lost",
	[VPERF_TRACE_MMAP] = "mmap",
};

bool vperf_trace_enabled(void)
{
	return READ_ONCE(trace_on);
}

/* TRACE_FLUSH of this CPU's ring (preemption off, not in NMI), RBX the guest's TSC: its result. */
static s64 trace_flush_this_cpu(void)
{
	s64 ret;

	if (vperf_dev.shm)
		return 0;	/* the host polls the shared memory: nothing to ask */
	ret = vperf_hc(VPERF_HC_TRACE_FLUSH, rdtsc(), 0, 0, 0);
	this_cpu_inc(vperf_trace_stats.c[VPERF_TC_FLUSHES]);
	if (ret >= 0)
		this_cpu_add(vperf_trace_stats.c[VPERF_TC_FLUSHED], ret);
	else
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_FLUSH_ERRORS]);
	return ret;
}

/* Bytes the host consumed, or -ENODEV: no ring here (or a hypercall error, < 0). */
s64 vperf_trace_flush(void)
{
	if (!READ_ONCE(this_cpu_ptr(&vperf_trace_cpu)->ring))
		return -ENODEV;
	return trace_flush_this_cpu();
}

static void trace_flush_work(struct irq_work *work)
{
	vperf_trace_flush();
}

/*
 * The test hook: the header is guest memory the host must not trust, and
 * this module must survive its own being broken: writers on that CPU then
 * find the ring full (its tail past their reservations) and count losses;
 * their publish never lowers the broken head; flushes fail and are counted.
 */
static int scribble_set(const char *val, const struct kernel_param *kp)
{
	struct vperf_trace_ring *r;
	unsigned int cpu;
	int ret;

	ret = kstrtouint(val, 0, &cpu);
	if (ret)
		return ret;
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	mutex_lock(&trace_mutex);
	cpus_read_lock();
	r = cpu_online(cpu) ? READ_ONCE(per_cpu_ptr(&vperf_trace_cpu, cpu)->ring) : NULL;
	if (r) {
		memset(r, 0xa5, sizeof(*r));
		pr_warn(VPERF_PR_PREFIX "trace_scribble: CPU %u's ring header overwritten (test hook)\n", cpu);
	}
	cpus_read_unlock();
	mutex_unlock(&trace_mutex);
	return r ? 0 : -ENODEV;
}

/* One record being written: from trace_begin() to trace_end(). */
struct trace_w {
	struct vperf_trace_cpu *tc;
	u64 pos;		/* where the record starts, free-running */
	u32 size;
	u16 type;
	bool ok;		/* the bytes are reserved */
};

/*
 * Any context, preemption off (or an interrupt or NMI).  false: no ring on
 * this CPU, nothing to end.  true: call trace_end() whether or not w->ok
 * says the bytes were reserved (a full ring: not).
 */
static __always_inline bool trace_begin(struct trace_w *w, u16 type, u32 size)
{
	struct vperf_trace_cpu *tc = this_cpu_ptr(&vperf_trace_cpu);
	struct vperf_trace_ring *r = READ_ONCE(tc->ring);
	unsigned long old, tail;

	if (!r)
		return false;
	w->tc = tc;
	w->type = type;
	w->size = size;
	w->ok = false;
	local_inc(&tc->nest);	/* first: whoever nests in from here leaves publishing to us */
	barrier();
	do {
		old = local_read(&tc->reserve);
		tail = READ_ONCE(r->tail);	/* the host's; only its rises give room */
		if (old < tail || old - tail > tc->data_size - size)
			return true;		/* full (or a tail past what we wrote) */
	} while (local_cmpxchg(&tc->reserve, old, old + size) != old);
	w->pos = old;
	w->ok = true;
	return true;
}

static __always_inline void trace_put(const struct trace_w *w, u32 off, const void *src, u32 len)
{
	vperf_ring_copy_in(w->tc->data, w->tc->data_size, w->pos + off, src, len);
}

/* Raise the published head to head, never lower it (a nested writer may have gone further). */
static __always_inline void trace_publish(struct vperf_trace_ring *r, unsigned long head)
{
	u64 cur = READ_ONCE(r->head), prev;

	smp_wmb();	/* the records before head */
	while (cur < head) {
		prev = cmpxchg_local(&r->head, cur, (u64)head);
		if (prev == cur)
			break;
		cur = prev;
	}
}

/*
 * Finish what trace_begin() started.  A record that got no room is dropped
 * and counted when count_lost (else the caller keeps it: mark.c retries).
 */
static void trace_end(struct trace_w *w, bool count_lost)
{
	struct vperf_trace_cpu *tc = w->tc;
	struct vperf_trace_ring *r = tc->ring;
	unsigned long head;
	u64 tail, lost;

	if (w->ok) {
		this_cpu_inc(vperf_trace_stats.produced[w->type]);
		this_cpu_add(vperf_trace_stats.c[VPERF_TC_BYTES], w->size);
	} else if (count_lost) {
		this_cpu_inc(vperf_trace_stats.lost[w->type]);
		/* nested writers on this CPU count too: an increment that loses a race retries */
		do {
			lost = READ_ONCE(r->lost);
		} while (cmpxchg_local(&r->lost, lost, lost + 1) != lost);
	}
again:
	head = local_read(&tc->reserve);
	barrier();
	if (!local_dec_and_test(&tc->nest))
		return;		/* an interrupted writer publishes, ours included */
	trace_publish(r, head);
	barrier();
	if (unlikely(local_read(&tc->reserve) != head)) {
		/* a writer came in between our read and the publish: publish its bytes too */
		local_inc(&tc->nest);
		goto again;
	}
	/* the watermark: half full after a write, one flush until the host's tail moves */
	tail = READ_ONCE(r->tail);
	if (head - tail > tc->data_size / 2 && tail != READ_ONCE(tc->wm_tail) && !vperf_dev.shm) {
		WRITE_ONCE(tc->wm_tail, tail);
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_WATERMARKS]);
		irq_work_queue(&tc->flush_work);	/* NMI-safe; the hypercall runs later */
	}
}

/* A complete record (mark.c): 0, -ENOSPC (full: kept if !count_lost), -ENODEV (no ring here). */
int vperf_trace_write(const void *rec, u32 size, bool count_lost)
{
	const struct vperf_trace_rec *h = rec;
	struct trace_w w;
	bool ok;

	if (!trace_begin(&w, h->type, size))
		return -ENODEV;
	if (w.ok)
		trace_put(&w, 0, rec, size);
	ok = w.ok;
	trace_end(&w, count_lost);
	return ok ? 0 : -ENOSPC;
}

static __always_inline void trace_hdr(struct vperf_trace_rec *h, u32 size, u16 type, u16 flags,
				      u64 tsc, u32 pid, u32 tid)
{
	h->size = size;
	h->type = type;
	h->cpu = smp_processor_id();
	h->flags = flags;
	h->tsc = tsc;
	h->pid = pid;
	h->tid = tid;
}

static __always_inline void trace_hdr_task(struct vperf_trace_rec *h, u32 size, u16 type, u64 tsc,
					   struct task_struct *t)
{
	trace_hdr(h, size, type, 0, tsc, task_tgid_nr(t), task_pid_nr(t));
}

static __always_inline bool watched(pid_t tid)
{
	pid_t w = READ_ONCE(trace_watch);

	return w && w == tid;
}

/* Write a record built on the stack; true if it went in. */
static __always_inline bool trace_emit(const void *rec, u32 size)
{
	return vperf_trace_write(rec, size, true) == 0;
}

/* ---- producers ---- */

static void probe_switch(void *data, bool preempt, struct task_struct *prev,
			 struct task_struct *next, unsigned int prev_state)
{
	struct vperf_trace_switch rec;
	u64 tsc = rdtsc();

	trace_hdr_task(&rec.h, sizeof(rec), VPERF_TRACE_SCHED_SWITCH, tsc, prev);
	rec.next_pid = task_tgid_nr(next);
	rec.next_tid = task_pid_nr(next);
	rec.prev_state = prev_state;
	rec.reserved = 0;
	memcpy(rec.prev_comm, prev->comm, sizeof(rec.prev_comm));
	memcpy(rec.next_comm, next->comm, sizeof(rec.next_comm));
	if (trace_emit(&rec, sizeof(rec))) {
		if (watched(rec.h.tid))
			this_cpu_inc(vperf_trace_stats.c[VPERF_TC_WATCH_OUT]);
		if (watched(rec.next_tid))
			this_cpu_inc(vperf_trace_stats.c[VPERF_TC_WATCH_IN]);
	}
	/* the thread's markers follow it into the ring as it leaves the CPU */
	vperf_mark_switch_out(prev);
}

/*
 * The waker.  sched_wakeup runs in the waker's context, except when the
 * wakeup was queued to the target CPU (a wakee on a CPU that shares no
 * cache with the waker's, or still switching out): then it runs there, in
 * the IPI.  So sched_waking, which always runs in the waker's context,
 * leaves the waker in a slot of the wakee's, and sched_wakeup takes it
 * from there.  A slot busy on another CPU at that instant is skipped (both
 * sides use trylock): the waker is then the current task if the wakeup is
 * in task context, else 0 (an interrupt's wakeup).  A waker in interrupt
 * context is 0: no task woke it.
 */
struct vperf_waker_slot {
	atomic_t lock;
	u32 pid, tid;
	struct task_struct *wakee;	/* compared, never dereferenced */
};

#define VPERF_WAKER_BITS	8
static struct vperf_waker_slot vperf_wakers[1 << VPERF_WAKER_BITS];

static void probe_waking(void *data, struct task_struct *p)
{
	struct vperf_waker_slot *s = &vperf_wakers[hash_ptr(p, VPERF_WAKER_BITS)];

	if (atomic_cmpxchg_acquire(&s->lock, 0, 1))
		return;
	if (in_task()) {
		s->pid = task_tgid_nr(current);
		s->tid = task_pid_nr(current);
	} else {
		s->pid = s->tid = 0;
	}
	s->wakee = p;
	atomic_set_release(&s->lock, 0);
}

static void trace_wakeup(struct task_struct *p, bool from_slot)
{
	struct vperf_waker_slot *s = &vperf_wakers[hash_ptr(p, VPERF_WAKER_BITS)];
	struct vperf_trace_wakeup rec;
	u64 tsc = rdtsc();
	bool found = false;
	u32 pid = 0, tid = 0;

	if (from_slot && !atomic_cmpxchg_acquire(&s->lock, 0, 1)) {
		if (s->wakee == p) {
			pid = s->pid;
			tid = s->tid;
			s->wakee = NULL;	/* one use */
			found = true;
		}
		atomic_set_release(&s->lock, 0);
	}
	if (!found && in_task()) {
		pid = task_tgid_nr(current);
		tid = task_pid_nr(current);
	}
	trace_hdr(&rec.h, sizeof(rec), VPERF_TRACE_SCHED_WAKEUP, 0, tsc, pid, tid);
	rec.wakee_pid = task_tgid_nr(p);
	rec.wakee_tid = task_pid_nr(p);
	rec.target_cpu = task_cpu(p);
	rec.reserved = 0;
	if (trace_emit(&rec, sizeof(rec)) && watched(rec.wakee_tid))
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_WATCH_WOKEN]);
}

static void probe_wakeup(void *data, struct task_struct *p)
{
	trace_wakeup(p, true);
}

/* A new task's first wakeup, in its parent (wake_up_new_task() has no sched_waking). */
static void probe_wakeup_new(void *data, struct task_struct *p)
{
	trace_wakeup(p, false);
}

static void probe_fork(void *data, struct task_struct *parent, struct task_struct *child)
{
	struct vperf_trace_fork rec;

	trace_hdr_task(&rec.h, sizeof(rec), VPERF_TRACE_FORK, rdtsc(), parent);
	rec.child_pid = task_tgid_nr(child);
	rec.child_tid = task_pid_nr(child);
	memcpy(rec.comm, child->comm, sizeof(rec.comm));
	trace_emit(&rec, sizeof(rec));
}

/* The file name as exec got it (bprm->filename), cut to what a record holds. */
#define VPERF_EXEC_NAME_MAX	(VPERF_TRACE_REC_MAX - sizeof(struct vperf_trace_exec) - 1)

static void trace_current_mmaps(void);

static void probe_exec(void *data, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	static const char unknown[] = "?";
	struct vperf_trace_exec rec;
	const char *name = bprm->filename;
	u64 tsc = rdtsc();
	static const u64 zero;
	struct trace_w w;
	u32 len, size, pad;

	len = name ? strnlen(name, VPERF_EXEC_NAME_MAX) : 0;
	if (!len) {	/* the ABI wants one byte at least */
		name = unknown;
		len = 1;
	}
	size = VPERF_TRACE_ALIGN(sizeof(rec) + len + 1);
	trace_hdr_task(&rec.h, size, VPERF_TRACE_EXEC, tsc, p);
	memcpy(rec.comm, p->comm, sizeof(rec.comm));
	if (!trace_begin(&w, VPERF_TRACE_EXEC, size))
		return;
	if (w.ok) {
		trace_put(&w, 0, &rec, sizeof(rec));
		trace_put(&w, sizeof(rec), name, len);
		/* the NUL and the padding: at most 8 bytes */
		pad = size - sizeof(rec) - len;
		trace_put(&w, sizeof(rec) + len, &zero, pad);
	}
	trace_end(&w, true);
	if (vperf_dev.features & VPERF_FEAT_TRACE_MMAP)
		trace_current_mmaps();	/* the new program's, after its EXEC */
}

/*
 * Executable file mappings, for the host to name user frames (as perf's
 * PERF_RECORD_MMAP does): the mmap:vma_store tracepoint sees every VMA
 * stored into a process's tree (mmap, exec's ELF loading, the splits of
 * mprotect), with the mapping lock held.  Only to a host that records them.
 */
#define VPERF_MMAP_NAME_MAX	(VPERF_TRACE_REC_MAX - sizeof(struct vperf_trace_mmap))

static DEFINE_PER_CPU(char [VPERF_MMAP_NAME_MAX], trace_path_buf);

/* Write an MMAP record (preemption off): pid 0 for the kernel's text. */
static void trace_mmap(struct task_struct *t, u64 start, u64 len, u64 pgoff, const char *name,
		       u32 name_len)
{
	struct vperf_trace_mmap rec;
	static const u64 zero;
	struct trace_w w;
	u32 size = VPERF_TRACE_ALIGN(sizeof(rec) + name_len + 1);

	if (t)
		trace_hdr_task(&rec.h, size, VPERF_TRACE_MMAP, rdtsc(), t);
	else
		trace_hdr(&rec.h, size, VPERF_TRACE_MMAP, 0, rdtsc(), 0, 0);
	rec.start = start;
	rec.len = len;
	rec.pgoff = pgoff;
	if (!trace_begin(&w, VPERF_TRACE_MMAP, size))
		return;
	if (w.ok) {
		trace_put(&w, 0, &rec, sizeof(rec));
		trace_put(&w, sizeof(rec), name, name_len);
		trace_put(&w, sizeof(rec) + name_len, &zero, size - sizeof(rec) - name_len);
	}
	trace_end(&w, true);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 0)
struct maple_tree;

/* mmap:vma_store (6.1's prototype; the tracepoint came with the maple tree). */
static void probe_vma_store(void *data, struct maple_tree *mt, struct vm_area_struct *vma)
{
	char *buf = *this_cpu_ptr(&trace_path_buf), *path;
	struct file *f = vma->vm_file;

	/* exec's own mappings are written after its EXEC record (probe_exec): a reader starts
	 * the new program's address space at EXEC */
	if (!f || !(vma->vm_flags & VM_EXEC) || vma->vm_mm != current->mm || !current->mm ||
	    (current->flags & PF_KTHREAD) || current->in_execve)
		return;
	path = d_path(&f->f_path, buf, VPERF_MMAP_NAME_MAX);
	if (IS_ERR(path) || !*path)
		return;
	trace_mmap(current, vma->vm_start, vma->vm_end - vma->vm_start,
		   (u64)vma->vm_pgoff << PAGE_SHIFT, path, strlen(path));
}

/*
 * An MMAP record of each executable file mapping of t's mm (its lock held), named in buf, and
 * of its vDSO ("[vdso]", as perf names it: user frames there are the kernel's code, in no file).
 */
static void trace_mm_mmaps(struct task_struct *t, struct mm_struct *mm, char *buf)
{
	static const char vdso[] = "[vdso]";
	struct vm_area_struct *vma;
	VMA_ITERATOR(vmi, mm, 0);
	char *path;

	for_each_vma(vmi, vma) {
		if (!(vma->vm_flags & VM_EXEC))
			continue;
		if (!vma->vm_file) {
			if (vma->vm_start != (unsigned long)mm->context.vdso)
				continue;
			preempt_disable();
			trace_mmap(t, vma->vm_start, vma->vm_end - vma->vm_start, 0, vdso,
				   sizeof(vdso) - 1);
			preempt_enable();
			continue;
		}
		path = d_path(&vma->vm_file->f_path, buf, VPERF_MMAP_NAME_MAX);
		if (IS_ERR(path) || !*path)
			continue;
		preempt_disable();
		trace_mmap(t, vma->vm_start, vma->vm_end - vma->vm_start,
			   (u64)vma->vm_pgoff << PAGE_SHIFT, path, strlen(path));
		preempt_enable();
	}
}

/*
 * The executable file mappings current has now (preemption off): after its EXEC record, the
 * new program's.  The mapping lock only if free: exec has just let it go, and a probe must
 * not sleep.
 */
static void trace_current_mmaps(void)
{
	struct mm_struct *mm = current->mm;

	if (!mm || !mmap_read_trylock(mm))
		return;
	trace_mm_mmaps(current, mm, *this_cpu_ptr(&trace_path_buf));
	mmap_read_unlock(mm);
}

/* A sampler starting on task (process context): its mappings so far, as perf synthesizes them. */
static void trace_task_mmaps(struct task_struct *task)
{
	struct mm_struct *mm = get_task_mm(task);
	char *buf;

	if (!mm)
		return;		/* a kernel thread, or exiting */
	buf = kmalloc(VPERF_MMAP_NAME_MAX, GFP_KERNEL);
	if (buf && !mmap_read_lock_killable(mm)) {
		trace_mm_mmaps(task, mm, buf);
		mmap_read_unlock(mm);
	}
	kfree(buf);
	mmput(mm);
}
#define VPERF_TP_VMA_STORE	probe_vma_store
#else
#define VPERF_TP_VMA_STORE	NULL
static void trace_current_mmaps(void)
{
}

static void trace_task_mmaps(struct task_struct *task)
{
}
#endif

/*
 * Where the kernel's text is now: schedule's address, which the host
 * compares with the guest kernel's System.map (a randomized base moves all).
 */
static void trace_kernel_text(void)
{
	static const char name[] = VPERF_TRACE_MMAP_KERNEL "schedule";

	preempt_disable();
	trace_mmap(NULL, (u64)(unsigned long)schedule, 0, 0, name, sizeof(name) - 1);
	preempt_enable();
}

/*
 * Where this module's own code is: an MMAP record (pid 0) per code symbol, "[vperf_guest]NAME"
 * at its address with its size, for the host to name the module's frames (the System.map it
 * has holds the kernel image's only).  Its init code is left out: freed once loaded.
 */
static void trace_module_symbols(void)
{
#ifdef CONFIG_KALLSYMS
	const struct mod_kallsyms *ks;
	unsigned int i, n = 0;
	char *buf;

	preempt_disable();
	ks = rcu_dereference_sched(THIS_MODULE->kallsyms);
	buf = *this_cpu_ptr(&trace_path_buf);
	for (i = 1; ks && i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		unsigned long addr = kallsyms_symbol_value(sym);
		int len;

		if ((ks->typetab[i] != 't' && ks->typetab[i] != 'T') || !sym->st_size ||
		    !ks->strtab[sym->st_name] || within_module_init(addr, THIS_MODULE))
			continue;
		len = snprintf(buf, VPERF_MMAP_NAME_MAX, "[%s]%s", THIS_MODULE->name,
			       ks->strtab + sym->st_name);
		if (len <= 0 || len >= VPERF_MMAP_NAME_MAX)
			continue;
		trace_mmap(NULL, addr, sym->st_size, 0, buf, len);
		n++;
	}
	preempt_enable();
	pr_debug(VPERF_PR_PREFIX "tracing: %u symbols of this module written\n", n);
#endif
}

static void probe_exit(void *data, struct task_struct *p)
{
	struct vperf_trace_exit rec;

	trace_hdr_task(&rec.h, sizeof(rec), VPERF_TRACE_EXIT, rdtsc(), p);
	rec.exit_code = p->exit_code;
	rec.reserved = 0;
	trace_emit(&rec, sizeof(rec));
}

static void trace_irq(u32 vector, u32 kind, u32 irq, u64 tsc)
{
	struct vperf_trace_irq rec;

	trace_hdr_task(&rec.h, sizeof(rec), VPERF_TRACE_IRQ, tsc, current);
	rec.vector = vector;
	rec.kind = kind;
	rec.irq = irq;
	rec.reserved = 0;
	if (trace_emit(&rec, sizeof(rec)))
		this_cpu_inc(vperf_trace_stats.irq_kind[kind]);
}

/* The x86 system vectors' entries: the kernel hands over the vector; data says its kind. */
static void probe_vector(void *data, int vector)
{
	u32 kind = (u32)(unsigned long)data;
	u64 tsc = rdtsc();

	if (READ_ONCE(trace_vector[kind]) != (u32)vector)
		WRITE_ONCE(trace_vector[kind], vector);
	trace_irq(vector, kind, ~0u, tsc);
}

/*
 * A device interrupt's handler (one record per handler of a shared line).
 * Its vector is the one the x86 vector domain gave the line now
 * (irqd_cfg(): it changes when the line moves to another CPU); a line
 * outside that domain gets vector 0, counted in irq_novector.
 */
static void probe_irq_handler(void *data, int irq, struct irqaction *action)
{
	struct irq_data *d = irq_get_irq_data(irq);
	struct irq_cfg *cfg = d ? irqd_cfg(d) : NULL;
	u64 tsc = rdtsc();
	u32 vector = cfg ? READ_ONCE(cfg->vector) : 0;

	if (!vector)
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_IRQ_NOVECTOR]);
	else if (READ_ONCE(trace_vector[VPERF_TRACE_IRQ_DEVICE]) != vector)
		WRITE_ONCE(trace_vector[VPERF_TRACE_IRQ_DEVICE], vector);
	trace_irq(vector, VPERF_TRACE_IRQ_DEVICE, irq, tsc);
}

/* User frames a sample's callchain records: the NMI stack is small, the ring shared. */
#define TRACE_USER_FRAMES	32

/*
 * The user stack of current by its frame pointers, from NMI context: the
 * user IP, then each frame's return address, innermost first, until a frame
 * pointer that is not above the last, an unreadable frame (not mapped,
 * paged out: copy_from_user_nmi never sleeps) or max frames.  Code built
 * without frame pointers gives a short or wrong chain, as perf's fp mode.
 */
static u32 trace_user_chain(struct pt_regs *uregs, u64 *chain, u32 max)
{
	unsigned long fp, frame[2];
	u32 n = 0;

	if (!uregs || !current->mm || !user_64bit_mode(uregs))
		return 0;
	chain[n++] = uregs->ip;
	fp = uregs->bp;
	while (n < max && fp && !(fp & 7)) {
		if (copy_from_user_nmi(frame, (const void __user *)fp, sizeof(frame)))
			break;
		if (!frame[1])
			break;
		chain[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return n;
}

/* A sample of current at regs into this vCPU's ring: counts, then the user callchain if asked. */
static void trace_sample_rec(struct pt_regs *regs, const u64 *counts, u32 nr, u16 flags,
			     bool chain)
{
	u64 buf[sizeof(struct vperf_trace_sample) / sizeof(u64) + VPERF_MAX_COUNTERS +
		TRACE_USER_FRAMES];
	struct vperf_trace_sample *rec = (struct vperf_trace_sample *)buf;
	bool user = user_mode(regs);
	u32 size, nr_chain = 0;

	if (!READ_ONCE(this_cpu_ptr(&vperf_trace_cpu)->ring))
		return;		/* tracing off: no stack walk for nothing */
	nr = min_t(u32, nr, VPERF_MAX_COUNTERS);
	memcpy(rec->data, counts, nr * sizeof(u64));
	if (chain)
		nr_chain = trace_user_chain(user ? regs : (current->flags & PF_KTHREAD ? NULL :
							   task_pt_regs(current)),
					    rec->data + nr, TRACE_USER_FRAMES);
	size = sizeof(*rec) + (nr + nr_chain) * sizeof(u64);
	trace_hdr_task(&rec->h, size, VPERF_TRACE_SAMPLE, rdtsc(), current);
	rec->h.flags = (user ? VPERF_TRACE_SAMPLE_USER : 0) | flags;
	rec->ip = instruction_pointer(regs);
	rec->nr_counts = nr;
	rec->nr_callchain = nr_chain;
	trace_emit(rec, size);
}

/*
 * From the sampling NMI (sample.c), for a sampling thread: the sample into
 * this vCPU's ring too.  nr counts (0: the NMI hit a page update and has
 * none), then the user callchain (docs/abi.md 2.5): of the interrupted user
 * code, or where the thread entered the kernel if the NMI hit the kernel.
 * Kernel IPs are written as they are (the host may see them), flagged as
 * not user; kernel frames are not recorded.
 */
void vperf_trace_sample(struct pt_regs *regs, const u64 *counts, u32 nr)
{
	trace_sample_rec(regs, counts, nr, 0, true);
}

/* ---- the trace sampler (VPERF_IOC_TRACE_SAMPLE) ---- */

/*
 * One guest perf event per file, created as a kernel counter on the task
 * with inherit, so each thread and process the task creates gets a copy
 * with the same handler and context.  The handler runs where the event
 * overflows (hrtimer interrupt for the software clocks, NMI for a PMU) in
 * the sampled thread, and writes the sample into that vCPU's ring.
 * Releasing the parent event removes the copies and waits for their
 * handlers (the clocks' hrtimers are cancelled synchronously), so the
 * sampler may be freed right after.  A kernel counter skips
 * perf_event_open()'s permission checks, so the ioctl makes them: the
 * paranoid parameter for another task, and perf_allow_kernel()'s rule for
 * kernel mode (without VPERF_TRACE_SAMPLER_USER: exclude_kernel).
 */
struct trace_sampler {
	struct list_head node;
	struct file *file;
	struct perf_event *ev;
	bool chain;
};

static LIST_HEAD(trace_samplers);
static DEFINE_MUTEX(trace_samplers_mutex);

static void trace_sampler_overflow(struct perf_event *ev, struct perf_sample_data *data,
				   struct pt_regs *regs)
{
	const struct trace_sampler *ts = ev->overflow_handler_context;
	u64 period = data->period;

	trace_sample_rec(regs, &period, 1, VPERF_TRACE_SAMPLE_PERIOD, ts->chain);
}

long vperf_ioctl_trace_sample(struct file *file, const void __user *uarg)
{
	struct vperf_trace_sampler req;
	struct perf_event_attr attr;
	struct trace_sampler *ts, *it;
	struct task_struct *task;
	struct perf_event *ev;
	u32 usize;
	long ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < VPERF_TRACE_SAMPLER_SIZE_VER0)
		return -EINVAL;
	memset(&req, 0, sizeof(req));
	if (copy_from_user(&req, uarg, min_t(u32, usize, sizeof(req))))
		return -EFAULT;
	if ((req.flags & ~VPERF_TRACE_SAMPLER_FLAGS) || !req.period ||
	    ((req.flags & VPERF_TRACE_SAMPLER_FREQ) && req.period > VPERF_TRACE_SAMPLER_MAX_FREQ))
		return -EINVAL;
	if (!READ_ONCE(trace_on))
		return -ENODATA;
	if (req.pid) {
		struct pid *pid = req.pid > 0 ? find_get_pid(req.pid) : NULL;

		task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
		put_pid(pid);
	} else {
		task = get_task_struct(current);
	}
	if (!task)
		return -ESRCH;
	ret = task == current ? 0 : vperf_may_monitor(task);
	if (ret)
		goto put_task;
	/* kernel mode too (the samples of a clock, kernel IPs): perf's rule */
	if (!(req.flags & VPERF_TRACE_SAMPLER_USER) && !vperf_may_count_kernel()) {
		ret = -EACCES;
		goto put_task;
	}

	ts = kzalloc(sizeof(*ts), GFP_KERNEL_ACCOUNT);
	if (!ts) {
		ret = -ENOMEM;
		goto put_task;
	}
	ts->file = file;
	ts->chain = req.flags & VPERF_TRACE_SAMPLER_CALLCHAIN;
	mutex_lock(&trace_samplers_mutex);
	list_for_each_entry(it, &trace_samplers, node) {
		if (it->file == file) {
			ret = -EBUSY;
			goto unlock;
		}
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = req.type;
	attr.config = req.config;
	attr.inherit = 1;
	attr.exclude_hv = 1;
	attr.exclude_kernel = !!(req.flags & VPERF_TRACE_SAMPLER_USER);
	if (req.flags & VPERF_TRACE_SAMPLER_FREQ) {
		attr.freq = 1;
		attr.sample_freq = req.period;
	} else {
		attr.sample_period = req.period;
	}
	ev = perf_event_create_kernel_counter(&attr, -1, task, trace_sampler_overflow, ts);
	if (IS_ERR(ev)) {
		ret = PTR_ERR(ev);
		goto unlock;
	}
	ts->ev = ev;
	list_add(&ts->node, &trace_samplers);
	mutex_unlock(&trace_samplers_mutex);
	if (vperf_dev.features & VPERF_FEAT_TRACE_MMAP)
		trace_task_mmaps(task);	/* what it mapped before: its later mmaps follow */
	put_task_struct(task);
	return 0;

unlock:
	mutex_unlock(&trace_samplers_mutex);
	kfree(ts);
put_task:
	put_task_struct(task);
	return ret;
}

void vperf_trace_sample_release(struct file *file)
{
	struct trace_sampler *ts, *tmp;

	mutex_lock(&trace_samplers_mutex);
	list_for_each_entry_safe(ts, tmp, &trace_samplers, node) {
		if (ts->file != file)
			continue;
		list_del(&ts->node);
		perf_event_release_kernel(ts->ev);
		kfree(ts);
	}
	mutex_unlock(&trace_samplers_mutex);
}

/* ---- the tracepoints ---- */

struct trace_tp {
	const char *name;
	void *probe;
	void *data;
	u32 feature;		/* hooked only when the host has it (0: always, and required) */
	struct tracepoint *tp;
	bool registered;
};

#define TP(n, p)	{ .name = n, .probe = p }
#define TPV(n, k)	{ .name = n, .probe = probe_vector, .data = (void *)(unsigned long)(k) }

/*
 * Under nested TCG, hooking a tracepoint with no probe yet patches kernel
 * text (its static key): the test stack keeps every one of these held by
 * two other probes first (tests/vm/guest/vperf-keys.c, kmod-test/run.sh).
 */
static struct trace_tp trace_tps[] = {
	TP("sched_switch", probe_switch),
	TP("sched_waking", probe_waking),
	TP("sched_wakeup", probe_wakeup),
	TP("sched_wakeup_new", probe_wakeup_new),
	TP("sched_process_fork", probe_fork),
	TP("sched_process_exec", probe_exec),
	TP("sched_process_exit", probe_exit),
	TP("irq_handler_entry", probe_irq_handler),
	TPV("local_timer_entry", VPERF_TRACE_IRQ_TIMER),
	TPV("reschedule_entry", VPERF_TRACE_IRQ_RESCHED),
	TPV("call_function_entry", VPERF_TRACE_IRQ_CALLFUNC),
	TPV("call_function_single_entry", VPERF_TRACE_IRQ_CALLFUNC),
	{ .name = "vma_store", .probe = VPERF_TP_VMA_STORE, .feature = VPERF_FEAT_TRACE_MMAP },
};

static void trace_tp_lookup(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(trace_tps); i++)
		if (!strcmp(tp->name, trace_tps[i].name))
			trace_tps[i].tp = tp;
}

static void trace_tps_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(trace_tps); i++) {
		if (!trace_tps[i].registered)
			continue;
		tracepoint_probe_unregister(trace_tps[i].tp, trace_tps[i].probe, trace_tps[i].data);
		trace_tps[i].registered = false;
	}
	tracepoint_synchronize_unregister();	/* no probe runs any more */
}

static int trace_tps_register(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(trace_tps); i++) {
		if (trace_tps[i].feature && (!(vperf_dev.features & trace_tps[i].feature) ||
					     !trace_tps[i].tp || !trace_tps[i].probe)) {
			/* optional: the records it writes are what the host cannot take, or cannot be had */
			pr_info(VPERF_PR_PREFIX "tracing: no %s records (%s)\n", trace_tps[i].name,
				!(vperf_dev.features & trace_tps[i].feature) ?
				"the host does not take them" : "no such tracepoint in this kernel");
			continue;
		}
		if (!trace_tps[i].tp) {
			pr_err(VPERF_PR_PREFIX "tracing: no tracepoint %s in this kernel\n",
			       trace_tps[i].name);
			ret = -ENOENT;
			goto unregister;
		}
		ret = tracepoint_probe_register(trace_tps[i].tp, trace_tps[i].probe,
						trace_tps[i].data);
		if (ret) {
			pr_err(VPERF_PR_PREFIX "tracing: cannot hook %s: %d\n", trace_tps[i].name,
			       ret);
			goto unregister;
		}
		trace_tps[i].registered = true;
	}
	return 0;

unregister:
	trace_tps_unregister();
	return ret;
}

/* ---- per-CPU rings, following hotplug ---- */

static int trace_cpu_online(unsigned int cpu)
{
	struct vperf_trace_cpu *tc = per_cpu_ptr(&vperf_trace_cpu, cpu);
	u64 data_size = READ_ONCE(trace_data_size);
	size_t size = sizeof(struct vperf_trace_ring) + data_size;
	struct vperf_trace_ring *r;
	s64 ret;

	if (WARN_ON_ONCE(raw_smp_processor_id() != cpu) || tc->ring)
		return 0;
	if (vperf_dev.shm) {
		/* laid out by vperf_shm_layout(); a CPU back online writes on from its head */
		r = vperf_shm_ring(cpu);
		if (!r) {
			pr_err(VPERF_PR_PREFIX "CPU %u: no ring in the shared memory: not traced\n",
			       cpu);
			return 0;
		}
		tc->alloc_size = 0;
		local_set(&tc->reserve, READ_ONCE(r->head));
		goto publish;
	}
	/* physically contiguous, page aligned, zeroed: head = tail = lost = 0 */
	r = alloc_pages_exact(size, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	if (!r) {
		pr_err(VPERF_PR_PREFIX "CPU %u: no memory for a %llu KiB trace ring: not traced\n",
		       cpu, data_size >> 10);
		return 0;	/* the CPU comes up untraced; trace_stats says rings < CPUs */
	}
	r->size = sizeof(*r);
	r->version = VPERF_TRACE_RING_V2;
	r->data_size = data_size;
	ret = vperf_hc(VPERF_HC_TRACE_REGISTER, virt_to_phys(r), size, 0, 0);
	if (ret < 0) {
		pr_err(VPERF_PR_PREFIX "CPU %u: TRACE_REGISTER of %zu bytes at 0x%llx: %lld\n",
		       cpu, size, (u64)virt_to_phys(r), ret);
		free_pages_exact(r, size);
		return 0;
	}
	tc->alloc_size = size;
	local_set(&tc->reserve, 0);
publish:
	tc->data = (unsigned char *)(r + 1);
	tc->data_size = data_size;
	local_set(&tc->nest, 0);
	tc->wm_tail = ~0ull;
	/* published last, on this CPU: writers here use it from now on */
	smp_wmb();
	WRITE_ONCE(tc->ring, r);
	atomic_inc(&trace_rings);
	return 0;
}

static int trace_cpu_offline(unsigned int cpu)
{
	struct vperf_trace_cpu *tc = per_cpu_ptr(&vperf_trace_cpu, cpu);
	struct vperf_trace_ring *r = tc->ring;

	if (!r)
		return 0;
	/*
	 * Writers run on this CPU only, with preemption off or in an
	 * interrupt: once the pointer is gone here none is half way.
	 */
	WRITE_ONCE(tc->ring, NULL);
	barrier();
	irq_work_sync(&tc->flush_work);
	/* the last records to the host, then what it consumed of the ring in all */
	trace_flush_this_cpu();
	this_cpu_add(vperf_trace_stats.c[VPERF_TC_CONSUMED], READ_ONCE(r->tail));
	this_cpu_add(vperf_trace_stats.c[VPERF_TC_RING_HEAD], READ_ONCE(r->head));
	this_cpu_add(vperf_trace_stats.c[VPERF_TC_RING_LOST], READ_ONCE(r->lost));
	if (vperf_dev.shm) {
		/* the ring stays where the layout put it: nothing to free or unregister */
		atomic_dec(&trace_rings);
		return 0;
	}
	/* the host must stop reading before the pages go back; if it refuses, keep them */
	if (vperf_hc(VPERF_HC_TRACE_REGISTER, 0, 0, 0, 0) < 0)
		pr_err(VPERF_PR_PREFIX "CPU %u: cannot unregister the trace ring, leaking it\n",
		       cpu);
	else
		free_pages_exact(r, tc->alloc_size);
	atomic_dec(&trace_rings);
	return 0;
}

/* Under trace_mutex. */
static int vperf_trace_start(void)
{
	int ret;

	if (!(vperf_dev.features & VPERF_FEAT_TRACE)) {
		pr_err(VPERF_PR_PREFIX "tracing: the device has no trace rings (feature bit 2)\n");
		return -ENODEV;
	}
	/* bit 2 is enough: a host without bit 6 consumes version-2 rings as version 1 */
	if (!(vperf_dev.features & VPERF_FEAT_TRACE_V2))
		pr_info(VPERF_PR_PREFIX "tracing: the host does not record version-2 rings "
			"(no feature bit 6): it consumes them unread\n");
	WRITE_ONCE(trace_data_size, (u64)READ_ONCE(trace_ring_kb) << 10);
	if (vperf_dev.shm) {
		/* the region is the user's choice of size: its rings take all of it */
		u64 ds = vperf_shm_layout(VPERF_SHM_MAX_DATA);

		if (!ds) {
			pr_err(VPERF_PR_PREFIX "tracing: the shared memory does not hold a ring of "
			       "4 KiB for each of %u possible CPUs\n", nr_cpu_ids);
			return -ENOSPC;
		}
		WRITE_ONCE(trace_data_size, ds);
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "vperf/trace:online",
				trace_cpu_online, trace_cpu_offline);
	if (ret < 0) {
		pr_err(VPERF_PR_PREFIX "tracing: setting up the per-CPU rings failed: %d\n", ret);
		return ret;
	}
	trace_cpuhp_state = ret;
	if (atomic_read(&trace_rings) != (int)num_online_cpus()) {
		pr_err(VPERF_PR_PREFIX "tracing: only %d of %u CPUs got a ring\n",
		       atomic_read(&trace_rings), num_online_cpus());
		ret = -ENOMEM;
		goto remove_state;
	}
	WRITE_ONCE(trace_on, true);	/* markers map from now on */
	ret = trace_tps_register();
	if (ret)
		goto off;
	if (vperf_dev.features & VPERF_FEAT_TRACE_MMAP)
		trace_kernel_text();
	if ((vperf_dev.features & (VPERF_FEAT_TRACE_MMAP | VPERF_FEAT_TRACE_KSYM)) ==
	    (VPERF_FEAT_TRACE_MMAP | VPERF_FEAT_TRACE_KSYM))
		trace_module_symbols();
	pr_info(VPERF_PR_PREFIX "tracing on: %d rings of %llu KiB%s\n", atomic_read(&trace_rings),
		READ_ONCE(trace_data_size) >> 10, vperf_dev.shm ? " in shared memory" : "");
	return 0;

off:
	WRITE_ONCE(trace_on, false);
remove_state:
	cpuhp_remove_state(trace_cpuhp_state);
	if (vperf_dev.shm)
		vperf_shm_stop();
	return ret;
}

/* Under trace_mutex. */
static void vperf_trace_stop(void)
{
	WRITE_ONCE(trace_on, false);
	trace_tps_unregister();
	/* every CPU: the final TRACE_FLUSH, unregister, free (shared memory: none of these) */
	cpuhp_remove_state(trace_cpuhp_state);
	if (vperf_dev.shm)
		vperf_shm_stop();
	pr_info(VPERF_PR_PREFIX "tracing off\n");
}

/* ---- statistics (parameter trace_stats) ---- */

static void trace_stats_sum(struct vperf_trace_stats *sum)
{
	unsigned int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct vperf_trace_stats *s = per_cpu_ptr(&vperf_trace_stats, cpu);

		for (i = 0; i < VPERF_TRACE_NR_TYPES; i++) {
			sum->produced[i] += READ_ONCE(s->produced[i]);
			sum->lost[i] += READ_ONCE(s->lost[i]);
		}
		for (i = 0; i < VPERF_TRACE_IRQ_NR_KINDS; i++)
			sum->irq_kind[i] += READ_ONCE(s->irq_kind[i]);
		for (i = 0; i < VPERF_TC_NR; i++)
			sum->c[i] += READ_ONCE(s->c[i]);
	}
}

/*
 * Since load, every CPU summed.  "bytes": written into rings, "flushed":
 * what TRACE_FLUSH said the host consumed, "consumed"/"head"/"ring_lost":
 * the tails, heads and lost counts of rings already unregistered (with
 * tracing off, consumed = head = written when the host lost nothing).
 */
static int trace_stats_get(char *buf, const struct kernel_param *kp)
{
	struct vperf_trace_stats *s;
	int n, i;

	s = kmalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	trace_stats_sum(s);
	n = sysfs_emit(buf, "on %d rings %d cpus %u ring_kb %u v2 %d marks %d\n",
		       READ_ONCE(trace_on), atomic_read(&trace_rings), num_online_cpus(),
		       READ_ONCE(trace_ring_kb), !!(vperf_dev.features & VPERF_FEAT_TRACE_V2),
		       vperf_marks_count());
	n += sysfs_emit_at(buf, n, "bytes %llu flushed %llu consumed %llu head %llu ring_lost %llu "
			   "flushes %llu flush_errors %llu watermarks %llu\n",
			   s->c[VPERF_TC_BYTES], s->c[VPERF_TC_FLUSHED], s->c[VPERF_TC_CONSUMED],
			   s->c[VPERF_TC_RING_HEAD], s->c[VPERF_TC_RING_LOST],
			   s->c[VPERF_TC_FLUSHES], s->c[VPERF_TC_FLUSH_ERRORS],
			   s->c[VPERF_TC_WATERMARKS]);
	for (i = 1; i < VPERF_TRACE_NR_TYPES; i++)
		n += sysfs_emit_at(buf, n, "type %s produced %llu lost %llu\n", trace_type_names[i],
				   s->produced[i], s->lost[i]);
	n += sysfs_emit_at(buf, n, "irq other %llu timer %llu resched %llu callfunc %llu "
			   "device %llu novector %llu\n", s->irq_kind[VPERF_TRACE_IRQ_OTHER],
			   s->irq_kind[VPERF_TRACE_IRQ_TIMER], s->irq_kind[VPERF_TRACE_IRQ_RESCHED],
			   s->irq_kind[VPERF_TRACE_IRQ_CALLFUNC],
			   s->irq_kind[VPERF_TRACE_IRQ_DEVICE], s->c[VPERF_TC_IRQ_NOVECTOR]);
	n += sysfs_emit_at(buf, n, "vectors timer %u resched %u callfunc %u device %u\n",
			   READ_ONCE(trace_vector[VPERF_TRACE_IRQ_TIMER]),
			   READ_ONCE(trace_vector[VPERF_TRACE_IRQ_RESCHED]),
			   READ_ONCE(trace_vector[VPERF_TRACE_IRQ_CALLFUNC]),
			   READ_ONCE(trace_vector[VPERF_TRACE_IRQ_DEVICE]));
	n += sysfs_emit_at(buf, n, "marks user_lost %llu invalid %llu orphaned %llu\n",
			   s->c[VPERF_TC_MARK_USER_LOST], s->c[VPERF_TC_MARK_INVALID],
			   s->c[VPERF_TC_MARK_ORPHANED]);
	n += sysfs_emit_at(buf, n, "watch %d out %llu in %llu woken %llu marks %llu\n",
			   READ_ONCE(trace_watch), s->c[VPERF_TC_WATCH_OUT],
			   s->c[VPERF_TC_WATCH_IN], s->c[VPERF_TC_WATCH_WOKEN],
			   s->c[VPERF_TC_WATCH_MARKS]);
	kfree(s);
	return n;
}

static const struct kernel_param_ops trace_stats_ops = { .get = trace_stats_get };
module_param_cb(trace_stats, &trace_stats_ops, NULL, 0444);
MODULE_PARM_DESC(trace_stats, "tracing since load: records per type written and lost, bytes "
		 "written, flushed and consumed, interrupts per kind, marker losses (read only)");

bool vperf_trace_watched(pid_t tid)
{
	return watched(tid);
}

/* ---- init and exit ---- */

int vperf_trace_init(void)
{
	unsigned int cpu;
	int ret = 0;

	for_each_possible_cpu(cpu)
		init_irq_work(&per_cpu(vperf_trace_cpu, cpu).flush_work, trace_flush_work);
	for_each_kernel_tracepoint(trace_tp_lookup, NULL);
	mutex_lock(&trace_mutex);
	trace_ready = true;
	if (trace_param) {
		ret = vperf_trace_start();
		if (ret) {
			/* the module still counts; tracing stays off, and says why above */
			pr_err(VPERF_PR_PREFIX "trace=1 at load failed (%d): tracing is off\n",
			       ret);
			trace_param = false;
			ret = 0;
		}
	}
	mutex_unlock(&trace_mutex);
	return ret;
}

void vperf_trace_exit(void)
{
	mutex_lock(&trace_mutex);
	trace_ready = false;	/* a write to `trace` from now on only stores */
	if (trace_on)
		vperf_trace_stop();
	mutex_unlock(&trace_mutex);
}
