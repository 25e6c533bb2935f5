// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling: the device's overflow NMIs and the sample rings of the contexts
 * that ask for them (VPERF_THREAD_SAMPLE; docs/abi.md 2.4 and 7.2).
 *
 * While any sampler lives, every vCPU's vcpu-clock raises an NMI each
 * period (vperf_sampling_get(); pv.c programs the vCPUs).  The handler takes
 * the overflow bit from this vCPU's page and calls the overflow function its
 * user gave at init (thread.c's vperf_thread_overflow(): the interrupted
 * thread's context and its counts), which hands the sample to
 * vperf_sampler_write(): a record in the context's ring, a SAMPLE record in
 * the vCPU's trace ring while tracing is on (trace.c), and a per-CPU
 * irq_work that signals the thread once the NMI has returned.  Only the NMI
 * on the CPU the thread runs on writes its ring, so records have one
 * producer.  Callers keep a sampler alive across the NMI (RCU).
 */
#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/ptrace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <asm/nmi.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"

/* A context's sample ring: the header page, then the data pages. */
struct vperf_sampler {
	u32 records;			/* records the data pages hold */
	u64 head;			/* records written (the NMI's copy) */
	int signo, cookie;		/* the signal per sample (0: none) and its si_fd */
	u32 nr_pages;			/* 1 + data pages */
	struct page *ring[];		/* one reference each; a mapping keeps its own */
};

atomic_long_t vperf_nmi_count = ATOMIC_LONG_INIT(0);
static vperf_overflow_fn vperf_overflow_handler;
static DEFINE_MUTEX(vperf_sample_lock);	/* arming and disarming (pv.c keeps the period) */
static atomic_t vperf_samplers = ATOMIC_INIT(0);	/* live samplers */
static bool vperf_nmi_registered;

/* ---- arming: one period for every sampler, the vCPUs armed while one lives ---- */

int vperf_sampling_get(u64 period)
{
	int ret = 0;

	if (!vperf_nmi_registered)
		return -EOPNOTSUPP;	/* the device has no VPERF_FEAT_OVERFLOW_NMI */
	mutex_lock(&vperf_sample_lock);
	if (vperf_overflow_armed() != period) {
		if (atomic_read(&vperf_samplers))
			ret = -EBUSY;	/* one period for all sampling contexts */
		else
			ret = vperf_overflow_arm(period);
	}
	if (!ret)
		atomic_inc(&vperf_samplers);
	mutex_unlock(&vperf_sample_lock);
	return ret;
}

static void vperf_disarm(void)
{
	if (vperf_overflow_armed())
		vperf_overflow_arm(0);	/* 0 cannot fail */
}

static void vperf_disarm_work_fn(struct work_struct *work)
{
	mutex_lock(&vperf_sample_lock);
	if (!atomic_read(&vperf_samplers))
		vperf_disarm();
	mutex_unlock(&vperf_sample_lock);
}

static DECLARE_WORK(vperf_disarm_work, vperf_disarm_work_fn);

void vperf_sampling_put(void)
{
	if (atomic_dec_and_test(&vperf_samplers))
		schedule_work(&vperf_disarm_work);
}

/* ---- the NMI and the signal after it ---- */

/* One pending signal per CPU, sent from an irq_work after the NMI returns. */
struct vperf_sig_work {
	struct irq_work work;
	struct task_struct *task;	/* a reference; NULL: free */
	int signo, cookie;
};

static DEFINE_PER_CPU(struct vperf_sig_work, vperf_sig_work);

static void vperf_sig_send(struct irq_work *work)
{
	struct vperf_sig_work *sw = container_of(work, struct vperf_sig_work, work);
	struct task_struct *task = sw->task;
	struct kernel_siginfo info;

	clear_siginfo(&info);
	info.si_signo = sw->signo;
	info.si_code = POLL_IN;		/* as perf's overflow signal */
	info.si_band = EPOLLIN;
	info.si_fd = sw->cookie;
	send_sig_info(sw->signo, &info, task);
	WRITE_ONCE(sw->task, NULL);
	put_task_struct(task);
}

/* The pending sample signals are sent (process context). */
static void vperf_sampling_sync(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu(vperf_sig_work, cpu).work);
}

static int vperf_nmi(unsigned int type, struct pt_regs *regs)
{
	const struct vperf_vcpu_page *page = vperf_overflow_take(VPERF_THREAD_CTR_VCPU_CLOCK);

	if (!page)
		return NMI_DONE;	/* not ours */
	atomic_long_inc(&vperf_nmi_count);
	vperf_overflow_handler(regs, page);
	return NMI_HANDLED;
}

int vperf_sampling_init(vperf_overflow_fn fn)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu)
		init_irq_work(&per_cpu(vperf_sig_work, cpu).work, vperf_sig_send);
	vperf_overflow_handler = fn;
	if (!(vperf_dev.features & VPERF_FEAT_OVERFLOW_NMI)) {
		pr_info(VPERF_PR_PREFIX "the device has no overflow NMIs: no sampling\n");
		return 0;
	}
	ret = register_nmi_handler(NMI_LOCAL, vperf_nmi, 0, "vperf");
	if (ret) {
		pr_err(VPERF_PR_PREFIX "cannot register the NMI handler: %d\n", ret);
		return ret;
	}
	vperf_nmi_registered = true;
	return 0;
}

/* After the last context is gone (the files hold the module). */
void vperf_sampling_exit(void)
{
	flush_work(&vperf_disarm_work);
	mutex_lock(&vperf_sample_lock);
	vperf_disarm();
	mutex_unlock(&vperf_sample_lock);
	if (vperf_nmi_registered)
		unregister_nmi_handler(NMI_LOCAL, "vperf");	/* waits for running handlers */
	vperf_nmi_registered = false;
	vperf_sampling_sync();
}

/* ---- the rings ---- */

/* A sampling START's fields: 0 or -EINVAL. */
int vperf_sampler_check(const struct vperf_thread_start *ks, u32 usize)
{
	if (usize < VPERF_THREAD_START_SIZE_VER1)
		return -EINVAL;		/* the fields are not there */
	if (ks->tid != 0 && ks->tid != task_pid_vnr(current))
		return -EINVAL;		/* the callback runs in the sampled thread */
	/* sample_counter: checked against the context's events (vperf_ioctl_thread_start) */
	if (!ks->sample_pages || ks->sample_pages > VPERF_SAMPLE_MAX_PAGES ||
	    (ks->sample_pages & (ks->sample_pages - 1)))
		return -EINVAL;
	if (ks->sample_period < VPERF_SAMPLE_MIN_PERIOD)
		return -EINVAL;
	if (ks->sample_signo < 0 || ks->sample_signo >= _NSIG || ks->sample_signo == SIGKILL ||
	    ks->sample_signo == SIGSTOP)
		return -EINVAL;
	return 0;
}

/* What a sampler of that many data pages takes: charged to its file's user. */
size_t vperf_sampler_bytes(u32 data_pages)
{
	return struct_size((struct vperf_sampler *)NULL, ring, 1 + data_pages) +
	       (1 + data_pages) * PAGE_SIZE;
}

/* A checked START's ring: zeroed pages, the header filled in.  0 or -ENOMEM. */
int vperf_sampler_new(const struct vperf_thread_start *ks, struct vperf_sampler **out)
{
	u32 i, n = 1 + ks->sample_pages;
	struct vperf_sample_ring *hdr;
	struct vperf_sampler *s;

	s = kzalloc(struct_size(s, ring, n), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->nr_pages = n;
	for (i = 0; i < n; i++) {
		s->ring[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!s->ring[i]) {
			vperf_sampler_free(s);
			return -ENOMEM;
		}
	}
	s->records = ks->sample_pages * (PAGE_SIZE / sizeof(struct vperf_sample_record));
	s->signo = ks->sample_signo;
	s->cookie = ks->sample_cookie;
	hdr = page_address(s->ring[0]);
	hdr->size = sizeof(*hdr);
	hdr->version = VPERF_SAMPLE_RING_VERSION;
	hdr->record_size = sizeof(struct vperf_sample_record);
	hdr->nr_records = s->records;
	hdr->period = ks->sample_period;
	*out = s;
	return 0;
}

/* NULL: nothing.  No NMI may see it any more (an RCU grace period after its context ended). */
void vperf_sampler_free(struct vperf_sampler *s)
{
	u32 i;

	if (!s)
		return;
	for (i = 0; i < s->nr_pages; i++)
		if (s->ring[i])
			put_page(s->ring[i]);
	kfree(s);
}

/* Any context, s alive: its pages into pages[] (1 + VPERF_SAMPLE_MAX_PAGES), a reference each. */
u32 vperf_sampler_get_pages(const struct vperf_sampler *s, struct page **pages)
{
	u32 i;

	for (i = 0; i < s->nr_pages; i++) {
		pages[i] = s->ring[i];
		get_page(pages[i]);
	}
	return s->nr_pages;
}

/*
 * The ring mapped whole at vma (writable: the reader stores tail; not
 * inherited by fork), from vperf_sampler_get_pages()'s n pages, whose
 * references it puts.  0, or -EINVAL for a mapping of another size.
 */
int vperf_sampler_map(struct vm_area_struct *vma, struct page **pages, u32 n)
{
	int ret = 0;
	u32 i;

	if (vma->vm_end - vma->vm_start != (unsigned long)n * PAGE_SIZE) {
		ret = -EINVAL;
		goto put;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	for (i = 0; i < n && !ret; i++)
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE, pages[i]);
put:
	for (i = 0; i < n; i++)
		put_page(pages[i]);
	return ret;
}

/*
 * NMI context, on the CPU whose vcpu-clock overflowed, current's sampler:
 * the sample (nr counts, 0: none) into its ring and the vCPU's trace ring,
 * and the signal queued.
 */
void vperf_sampler_write(struct vperf_sampler *s, struct pt_regs *regs, const u64 *values, u32 nr)
{
	const unsigned int per_page = PAGE_SIZE / sizeof(struct vperf_sample_record);
	struct vperf_sample_record *rec;
	struct vperf_sample_ring *hdr;
	struct vperf_sig_work *sw;
	u64 head, tail, idx;
	u32 i;

	/* into this vCPU's trace ring too, while tracing is on (trace.c) */
	vperf_trace_sample(regs, values, nr);
	hdr = page_address(s->ring[0]);
	head = s->head;
	tail = READ_ONCE(hdr->tail);	/* the reader's: anything */
	if (tail > head || head - tail >= s->records) {
		WRITE_ONCE(hdr->lost, hdr->lost + 1);
		goto signal;
	}
	idx = head % s->records;
	rec = (struct vperf_sample_record *)page_address(s->ring[1 + idx / per_page]) + idx % per_page;
	memset(rec, 0, sizeof(*rec));
	rec->time = ktime_get_mono_fast_ns();
	if (user_mode(regs)) {
		rec->ip = instruction_pointer(regs);
		rec->flags = VPERF_SAMPLE_USER;
	}	/* a kernel address stays 0: not user space's to see */
	rec->pid = task_tgid_nr(current);
	rec->tid = task_pid_nr(current);
	rec->cpu = smp_processor_id();
	if (nr) {
		for (i = 0; i < nr && i < ARRAY_SIZE(rec->values); i++)
			rec->values[i] = values[i];
		rec->flags |= VPERF_SAMPLE_VALUES;
	}
	s->head = head + 1;
	smp_store_release(&hdr->head, head + 1);
signal:
	sw = this_cpu_ptr(&vperf_sig_work);
	if (s->signo && !READ_ONCE(sw->task)) {
		get_task_struct(current);
		sw->task = current;
		sw->signo = s->signo;
		sw->cookie = s->cookie;
		irq_work_queue(&sw->work);
	}
}
