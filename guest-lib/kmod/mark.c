// SPDX-License-Identifier: GPL-2.0
/*
 * User-space trace markers (docs/abi.md 7.3): a thread's own buffer, mapped
 * read-write at VPERF_MARK_PGOFF, into which it writes version-2 marker
 * records with no system call and no exit (libvperf's vperf_trace_mark()).
 * The module copies the complete ones into the trace ring of the vCPU it
 * runs on: at each switch-out of the thread (up to VPERF_MARK_SWITCH_BUDGET
 * bytes), at its exit, at VPERF_IOC_MARK_FLUSH, and when the buffer's file
 * is released.
 *
 * The thread is hostile input: every record is copied once out of the
 * buffer and only the copy is checked (vperf_mark_rec_valid()) and used;
 * cpu, pid and tid are overwritten with the kernel's; what it refuses is
 * counted and reported in a VPERF_TRACE_LOST record (source INVALID), what
 * the thread could not write (its `lost`) in one of source USER.  The tail
 * is the module's own copy, written back for the thread to see.
 *
 * Buffers belong to the file that first mapped them and are found by task
 * on a hash (RCU), as thread contexts are, while the thread lives; at its
 * exit the module drains the buffer and takes it off the hash.  A mapping
 * holds the file, so the file's release (which frees its buffers, after a
 * last drain) comes after every mapping is gone.  Drains of one buffer
 * never overlap: each takes its busy flag (trylock; a switch-out that finds
 * it taken leaves the copy to the next occasion).  The flag is only ever
 * held with preemption off, because the exit probe (preemption off) spins
 * on it: a holder preempted on the spinner's CPU would never run again.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <asm/msr.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"
#include <vperf/trace_rec.h>

static unsigned int max_mark_kb = 262144;
module_param(max_mark_kb, uint, 0644);
MODULE_PARM_DESC(max_mark_kb, "KiB all marker buffers together may take (default 262144); "
		 "a mapping past it gets ENOMEM (past the user's max_user_kb: EDQUOT)");

/* Bytes a drain of a released buffer copies between two preemption points. */
#define VPERF_MARK_CHUNK	65536u

struct vperf_mark {
	struct hlist_node node;		/* vperf_marks while the thread lives (RCU) */
	struct list_head all;		/* vperf_marks_all */
	struct file *file;		/* the file it was first mapped from */
	struct vperf_user *user;	/* the file's user, charged for it (a reference) */
	struct task_struct *task;	/* the thread: a reference while live */
	bool live;			/* on the hash */
	bool done;			/* the last drain is over: none after it */
	u32 pid, tid;			/* the thread's ids, as of the last drain */
	struct vperf_mark_buf *hdr;	/* vmalloc'd, zeroed: the header page, then the data */
	unsigned char *data;
	u64 data_size;
	u32 pages;			/* data pages */
	u64 tail;			/* ours; the header's copy is for the thread to read */
	u64 user_lost;			/* the header's lost as last read */
	u64 pend_user, pend_invalid;	/* counts not yet in a LOST record */
	u64 copied, invalid;		/* records */
	atomic_t busy;			/* a drain is under way */
	refcount_t ref;			/* the file's, plus a flush ioctl's */
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(vperf_marks, 6);
static LIST_HEAD(vperf_marks_all);
static DEFINE_SPINLOCK(vperf_marks_lock);	/* the hash, the list, live */
static atomic_t vperf_nr_marks = ATOMIC_INIT(0);	/* live buffers */
static atomic_long_t vperf_mark_pages = ATOMIC_LONG_INIT(0);	/* all buffers' pages */

int vperf_marks_count(void)
{
	return atomic_read(&vperf_nr_marks);
}

/* Under rcu_read_lock() (or preemption off) or vperf_marks_lock. */
static struct vperf_mark *mark_find(const struct task_struct *task)
{
	struct vperf_mark *m;

	hash_for_each_possible_rcu(vperf_marks, m, node, (unsigned long)task)
		if (m->task == task)
			return m;
	return NULL;
}

/* What a buffer of pages data pages charges its file's user. */
static size_t mark_bytes(u32 pages)
{
	return sizeof(struct vperf_mark) + (size_t)(1 + pages) * PAGE_SIZE;
}

static void mark_free_rcu(struct rcu_head *rcu)
{
	struct vperf_mark *m = container_of(rcu, struct vperf_mark, rcu);

	atomic_long_sub(1 + m->pages, &vperf_mark_pages);
	vperf_user_uncharge(m->user, mark_bytes(m->pages));
	vperf_user_put(m->user);
	vfree(m->hdr);		/* from softirq: vfree() defers the unmapping itself */
	kfree(m);
}

static void mark_put(struct vperf_mark *m)
{
	if (refcount_dec_and_test(&m->ref))
		call_rcu(&m->rcu, mark_free_rcu);
}

static bool mark_trylock(struct vperf_mark *m)
{
	return !atomic_cmpxchg_acquire(&m->busy, 0, 1);
}

static void mark_unlock(struct vperf_mark *m)
{
	atomic_set_release(&m->busy, 0);
}

/* A LOST record for the thread: 0 or -ENOSPC/-ENODEV (then counted lost if count_lost). */
static int mark_lost_rec(struct vperf_mark *m, u32 source, u64 count, bool count_lost)
{
	struct vperf_trace_lost rec = {
		.h = {
			.size = sizeof(rec), .type = VPERF_TRACE_LOST, .cpu = smp_processor_id(),
			.tsc = rdtsc(), .pid = m->pid, .tid = m->tid,
		},
		.count = count,
		.source = source,
	};

	return vperf_trace_write(&rec, sizeof(rec), count_lost);
}

/*
 * Copy m's complete records into this CPU's ring, at most budget bytes of
 * them (0: no limit).  Preemption off, m->busy held.  A full ring gets a
 * TRACE_FLUSH, and another while each consumes something; what still does
 * not fit stays in the buffer for the next drain, unless final (the thread
 * writes no more): then it is dropped and counted (the ring's lost), as is
 * everything when no ring is there to take it (orphaned).  true: records
 * are left (budget).
 */
static bool mark_copy(struct vperf_mark *m, u32 budget, bool final)
{
	union {
		struct vperf_trace_rec h;
		struct vperf_trace_mark mark;
		u64 b[VPERF_MARK_REC_MAX / sizeof(u64)];
	} rec;
	struct vperf_mark_buf *hdr = m->hdr;
	u64 head, tail = m->tail, user_lost, copied = 0;
	bool can_flush = true, more = false;
	u32 size, done = 0;
	int ret;

	head = smp_load_acquire(&hdr->head);	/* the thread's: anything */
	if (head < tail || head - tail > m->data_size) {
		/* no record can be found up to a head like that: one refusal, start over there */
		m->pend_invalid++;
		m->invalid++;
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_MARK_INVALID]);
		tail = head;
	}
	while (tail < head) {
		if (head - tail < sizeof(rec.h))
			goto unfollowable;
		vperf_ring_copy_out(&rec.h, m->data, m->data_size, tail, sizeof(rec.h));
		size = rec.h.size;
		if (size < sizeof(rec.h) || size % 8 || size > VPERF_TRACE_REC_MAX ||
		    size > head - tail)
			goto unfollowable;
		if (budget && done + size > budget) {
			more = true;
			break;
		}
		if (rec.h.type != VPERF_TRACE_MARK || size > VPERF_MARK_REC_MAX)
			goto refuse;
		vperf_ring_copy_out(&rec, m->data, m->data_size, tail, size);
		if (!vperf_mark_rec_valid(&rec, size))
			goto refuse;
		rec.h.cpu = smp_processor_id();
		rec.h.pid = m->pid;
		rec.h.tid = m->tid;
		ret = vperf_trace_write(&rec, size, false);
		while (ret == -ENOSPC && can_flush) {
			can_flush = vperf_trace_flush() > 0;	/* safe here: never in an NMI */
			ret = vperf_trace_write(&rec, size, false);
		}
		if (ret) {
			if (!final)
				break;	/* kept for the next drain */
			if (ret == -ENOSPC)	/* dropped: counted in the ring's lost */
				vperf_trace_write(&rec, size, true);
			else
				this_cpu_inc(vperf_trace_stats.c[VPERF_TC_MARK_ORPHANED]);
		} else {
			copied++;
		}
		done += size;
		tail += size;
		continue;
refuse:
		m->pend_invalid++;
		m->invalid++;
		this_cpu_inc(vperf_trace_stats.c[VPERF_TC_MARK_INVALID]);
		done += size;
		tail += size;
	}
	goto losses;

unfollowable:
	/* a size that cannot be followed: the rest up to head goes, as one refused record */
	m->pend_invalid++;
	m->invalid++;
	this_cpu_inc(vperf_trace_stats.c[VPERF_TC_MARK_INVALID]);
	tail = head;
losses:
	/* the thread's own losses: a running count; a decrease is the thread's business */
	user_lost = READ_ONCE(hdr->lost);
	if (user_lost > m->user_lost) {
		u64 more_lost = user_lost - m->user_lost;

		m->pend_user += more_lost;
		this_cpu_add(vperf_trace_stats.c[VPERF_TC_MARK_USER_LOST], more_lost);
	}
	m->user_lost = user_lost;
	/* a LOST record that does not fit waits for the next drain, unless this is the last */
	if (m->pend_user &&
	    (!mark_lost_rec(m, VPERF_TRACE_LOST_USER, m->pend_user, final) || final))
		m->pend_user = 0;
	if (m->pend_invalid &&
	    (!mark_lost_rec(m, VPERF_TRACE_LOST_INVALID, m->pend_invalid, final) || final))
		m->pend_invalid = 0;

	m->tail = tail;
	m->copied += copied;
	if (copied && vperf_trace_watched(m->tid))
		this_cpu_add(vperf_trace_stats.c[VPERF_TC_WATCH_MARKS], copied);
	WRITE_ONCE(hdr->copied, m->copied);
	WRITE_ONCE(hdr->invalid, m->invalid);
	smp_store_release(&hdr->tail, tail);	/* the room is the thread's again */
	return more;
}

static void mark_ids(struct vperf_mark *m, struct task_struct *task)
{
	m->pid = task_tgid_nr(task);
	m->tid = task_pid_nr(task);
}

/* sched_switch (trace.c), preemption off: prev's markers, within the budget. */
void vperf_mark_switch_out(struct task_struct *prev)
{
	struct vperf_mark *m;

	if (!atomic_read(&vperf_nr_marks))
		return;
	rcu_read_lock();
	m = mark_find(prev);
	if (m && mark_trylock(m)) {
		if (!m->done) {
			mark_ids(m, prev);
			mark_copy(m, VPERF_MARK_SWITCH_BUDGET, false);
		}
		mark_unlock(m);
	}
	rcu_read_unlock();
}

/* sched_process_exit (thread.c), preemption off, in the exiting thread: the last drain. */
void vperf_mark_task_exit(struct task_struct *task)
{
	struct vperf_mark *m;

	if (!atomic_read(&vperf_nr_marks))
		return;
	rcu_read_lock();	/* m stays until a grace period after its file's release */
	spin_lock(&vperf_marks_lock);
	m = mark_find(task);
	if (m) {
		hash_del_rcu(&m->node);
		m->live = false;
		m->task = NULL;
		atomic_dec(&vperf_nr_marks);
	}
	spin_unlock(&vperf_marks_lock);
	if (m) {
		while (!mark_trylock(m))
			cpu_relax();	/* a release's chunk on another CPU */
		if (!m->done) {
			mark_ids(m, task);
			mark_copy(m, 0, true);
			m->done = true;
		}
		mark_unlock(m);
		put_task_struct(task);	/* the buffer's reference; the caller holds one too */
	}
	rcu_read_unlock();
}

/*
 * Process context, m->busy not held: the last drain, in chunks with
 * preemption points between.  Preemption goes off before the flag is taken
 * and comes back after it is dropped: the exiting thread's probe spins on
 * the flag with preemption off, on any CPU, so a holder must never be
 * preempted.  Every holder runs with preemption off, for a bounded copy,
 * so this spin ends too.
 */
static void mark_drain_final(struct vperf_mark *m)
{
	bool more = true, done;

	while (more) {
		preempt_disable();
		while (!mark_trylock(m))
			cpu_relax();
		done = m->done;
		if (!done) {
			more = mark_copy(m, VPERF_MARK_CHUNK, true);
			m->done = !more;
		}
		mark_unlock(m);
		preempt_enable();
		if (done)
			return;
		cond_resched();
	}
}

/* The file's release: its buffers, drained a last time, then freed after a grace period. */
void vperf_marks_release(struct file *file)
{
	struct vperf_mark *m, *tmp;
	LIST_HEAD(mine);

	spin_lock(&vperf_marks_lock);
	list_for_each_entry_safe(m, tmp, &vperf_marks_all, all) {
		if (m->file != file)
			continue;
		list_move(&m->all, &mine);
		if (m->live) {
			hash_del_rcu(&m->node);
			m->live = false;
			atomic_dec(&vperf_nr_marks);
		}
	}
	spin_unlock(&vperf_marks_lock);

	list_for_each_entry_safe(m, tmp, &mine, all) {
		if (m->task)
			mark_ids(m, m->task);
		mark_drain_final(m);
		if (m->task) {
			put_task_struct(m->task);
			m->task = NULL;
		}
		list_del(&m->all);
		mark_put(m);	/* the file's reference */
	}
}

/* VPERF_IOC_MARK_FLUSH: the calling thread's buffer, now, in chunks. */
long vperf_ioctl_mark_flush(void)
{
	struct vperf_mark *m;
	bool more = true;
	u64 chunks;

	if (!vperf_trace_enabled())
		return -ENODATA;
	rcu_read_lock();
	m = mark_find(current);
	if (m && !refcount_inc_not_zero(&m->ref))
		m = NULL;
	rcu_read_unlock();
	if (!m)
		return -ENOENT;
	/* one buffer's worth: a thread that keeps writing meanwhile does not keep the call going */
	for (chunks = m->data_size / VPERF_MARK_CHUNK + 2; more && chunks; chunks--) {
		more = false;
		preempt_disable();
		if (mark_trylock(m)) {	/* else a release drains it now */
			if (!m->done) {
				mark_ids(m, current);
				more = mark_copy(m, VPERF_MARK_CHUNK, false);
			}
			mark_unlock(m);
		}
		preempt_enable();
		cond_resched();
	}
	mark_put(m);
	return 0;
}

/*
 * A buffer for file: the file's user's share first (EDQUOT: one user
 * cannot take the whole pool), then the pool's (ENOMEM).
 */
static struct vperf_mark *mark_alloc(struct file *file, u32 pages)
{
	struct vperf_user *u = vperf_file_user(file);
	struct vperf_mark *m;
	int ret;

	ret = vperf_user_charge(u, mark_bytes(pages));
	if (ret)
		return ERR_PTR(ret);
	ret = -ENOMEM;
	if (atomic_long_add_return(1 + pages, &vperf_mark_pages) >
	    (long)(READ_ONCE(max_mark_kb) / (PAGE_SIZE / 1024)))
		goto unaccount;
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		goto unaccount;
	/* charged to the memory cgroup, unlike vmalloc_user(); mapped page by page */
	m->hdr = __vmalloc((size_t)(1 + pages) * PAGE_SIZE, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!m->hdr) {
		kfree(m);
		goto unaccount;
	}
	m->data = (unsigned char *)m->hdr + PAGE_SIZE;
	m->data_size = (u64)pages * PAGE_SIZE;
	m->pages = pages;
	m->hdr->size = sizeof(*m->hdr);
	m->hdr->version = VPERF_MARK_BUF_VERSION;
	m->hdr->data_size = m->data_size;
	m->file = file;
	m->user = u;
	vperf_user_hold(u);
	refcount_set(&m->ref, 1);
	mark_ids(m, current);
	return m;

unaccount:
	atomic_long_sub(1 + pages, &vperf_mark_pages);
	vperf_user_uncharge(u, mark_bytes(pages));
	return ERR_PTR(ret);
}

/*
 * mmap at VPERF_MARK_PGOFF: the calling thread's buffer (made on the first
 * mapping), (1 + pages) * 4096 bytes, shared, read-write, not inherited.
 */
int vperf_mark_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	struct vperf_mark *m, *nm = NULL;
	int ret = 0;
	u32 pages, i;

	if (len < 2 * PAGE_SIZE || len / PAGE_SIZE - 1 > VPERF_MARK_MAX_PAGES)
		return -EINVAL;
	pages = len / PAGE_SIZE - 1;
	if (!is_power_of_2(pages) || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;	/* a private (copy-on-write) mapping would write nowhere */
	if (!(vperf_dev.features & VPERF_FEAT_TRACE))
		return -ENODEV;
	if (!vperf_trace_enabled())
		return -ENODATA;

	/* one that exists: the checks under the lock, before its file's release can take it */
	spin_lock(&vperf_marks_lock);
	m = mark_find(current);
	if (m)
		ret = m->file != file ? -EBUSY : m->pages != pages ? -EINVAL : 0;
	spin_unlock(&vperf_marks_lock);
	if (ret)
		return ret;	/* EBUSY: the thread's buffer is another file's */
	if (!m) {
		nm = mark_alloc(file, pages);
		if (IS_ERR(nm))
			return PTR_ERR(nm);
		spin_lock(&vperf_marks_lock);
		m = mark_find(current);	/* only the thread itself adds its own: still none */
		if (m || (current->flags & PF_EXITING)) {
			/* past its exit probe, it would never leave the hash */
			ret = -ESRCH;
		} else {
			get_task_struct(current);
			nm->task = current;
			nm->live = true;
			hash_add_rcu(vperf_marks, &nm->node, (unsigned long)current);
			list_add_tail(&nm->all, &vperf_marks_all);
			atomic_inc(&vperf_nr_marks);
			m = nm;
			nm = NULL;
		}
		spin_unlock(&vperf_marks_lock);
		if (nm) {	/* never published: nobody else saw it */
			atomic_long_sub(1 + nm->pages, &vperf_mark_pages);
			vperf_user_uncharge(nm->user, mark_bytes(nm->pages));
			vperf_user_put(nm->user);
			vfree(nm->hdr);
			kfree(nm);
		}
		if (ret)
			return ret;
	}
	/* m is this file's: it lives at least as long as the file, which this mmap holds */
	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i <= pages && !ret; i++)	/* vm_insert_page() takes its own references */
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE,
				     vmalloc_to_page((char *)m->hdr + i * PAGE_SIZE));
	return ret;
}
