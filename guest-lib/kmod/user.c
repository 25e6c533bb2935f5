// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user limits: what one user's /dev/vperf files may hold at once, so
 * that no user takes what the guest or the other users need.
 *
 * A file belongs to the user who opened it (its real uid, as perf charges
 * its buffers to the real user).  Everything the module keeps for the file
 * is charged to that user: the pages, sample rings and rows of its
 * contexts and its marker buffers against max_user_kb (-EDQUOT past it),
 * and the entries of the event table (pv.c) its contexts hold against
 * max_user_events.  The same memory is charged to the memory cgroup of the
 * task it is allocated for (__GFP_ACCOUNT); these limits are the module's
 * own, for guests without memory cgroups and for what memory cgroups do not
 * see: the global marker pool and the 64-entry event table.
 *
 * A user's record lives while one of its files (or marker buffers) does:
 * files and buffers hold references.  The hash and its lock are taken from
 * process context and from RCU callbacks (softirq), so with interrupts off.
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/moduleparam.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "vperf_guest.h"

static unsigned int max_user_kb = 65536;
module_param(max_user_kb, uint, 0644);
MODULE_PARM_DESC(max_user_kb, "KiB one user's open /dev/vperf files may hold at once: "
		 "context pages, sample rings, rows of ended contexts, marker buffers "
		 "(default 65536); more is EDQUOT");

static unsigned int max_user_events = 32;
module_param(max_user_events, uint, 0644);
MODULE_PARM_DESC(max_user_events, "entries of the 64-entry event table (beyond the 3 fixed "
		 "events) one user's contexts may hold at once (default 32); more is EDQUOT");

struct vperf_user {
	struct hlist_node node;		/* vperf_users */
	kuid_t uid;
	refcount_t ref;
	atomic_long_t bytes;		/* charged against max_user_kb */
	atomic_t nr_events;		/* table entries (not fixed) with ev_refs > 0 */
	atomic_t ev_refs[VPERF_MAX_EVENTS];	/* its contexts' references on each entry */
};

static DEFINE_HASHTABLE(vperf_users, 5);
static DEFINE_SPINLOCK(vperf_users_lock);

struct vperf_user *vperf_user_get(void)
{
	kuid_t uid = current_uid();
	struct vperf_user *u, *nu;
	unsigned long flags;

	nu = kzalloc(sizeof(*nu), GFP_KERNEL);
	spin_lock_irqsave(&vperf_users_lock, flags);
	hash_for_each_possible(vperf_users, u, node, __kuid_val(uid)) {
		if (uid_eq(u->uid, uid)) {
			refcount_inc(&u->ref);	/* a record at 0 has left the hash */
			goto unlock;
		}
	}
	u = nu;
	nu = NULL;
	if (u) {
		u->uid = uid;
		refcount_set(&u->ref, 1);
		hash_add(vperf_users, &u->node, __kuid_val(uid));
	}
unlock:
	spin_unlock_irqrestore(&vperf_users_lock, flags);
	kfree(nu);
	return u;
}

void vperf_user_hold(struct vperf_user *u)
{
	refcount_inc(&u->ref);
}

void vperf_user_put(struct vperf_user *u)
{
	unsigned long flags;

	if (!u || !refcount_dec_and_lock_irqsave(&u->ref, &vperf_users_lock, &flags))
		return;
	hash_del(&u->node);
	spin_unlock_irqrestore(&vperf_users_lock, flags);
	/* whatever holds a charge holds a reference too */
	WARN_ON_ONCE(atomic_long_read(&u->bytes) || atomic_read(&u->nr_events));
	kfree(u);
}

int vperf_user_charge(struct vperf_user *u, size_t bytes)
{
	long limit = (long)READ_ONCE(max_user_kb) * 1024;

	if (atomic_long_add_return(bytes, &u->bytes) > limit) {
		atomic_long_sub(bytes, &u->bytes);
		return -EDQUOT;
	}
	return 0;
}

void vperf_user_uncharge(struct vperf_user *u, size_t bytes)
{
	atomic_long_sub(bytes, &u->bytes);
}

bool vperf_user_event_ok(const struct vperf_user *u, int e)
{
	if (e >= 0 && (e < VPERF_FIXED_SLOTS || atomic_read(&u->ev_refs[e])))
		return true;
	return atomic_read(&u->nr_events) < (int)min_t(unsigned int, READ_ONCE(max_user_events),
							VPERF_MAX_EVENTS);
}

void vperf_user_event_ref(struct vperf_user *u, u8 e)
{
	if (e >= VPERF_FIXED_SLOTS && e < VPERF_MAX_EVENTS &&
	    atomic_inc_return(&u->ev_refs[e]) == 1)
		atomic_inc(&u->nr_events);
}

void vperf_user_event_unref(struct vperf_user *u, u8 e)
{
	if (e >= VPERF_FIXED_SLOTS && e < VPERF_MAX_EVENTS &&
	    atomic_dec_return(&u->ev_refs[e]) == 0)
		atomic_dec(&u->nr_events);
}

/* The parameter `users`: each user with an open file, what it holds. */
static int users_get(char *buf, const struct kernel_param *kp)
{
	struct vperf_user *u;
	unsigned long flags;
	int bkt, n = 0;

	spin_lock_irqsave(&vperf_users_lock, flags);
	hash_for_each(vperf_users, bkt, u, node) {
		if (n > PAGE_SIZE - 64)
			break;	/* a page is what sysfs gives */
		n += sysfs_emit_at(buf, n, "uid %u kb %ld events %d\n",
				   from_kuid_munged(&init_user_ns, u->uid),
				   DIV_ROUND_UP(atomic_long_read(&u->bytes), 1024),
				   atomic_read(&u->nr_events));
	}
	spin_unlock_irqrestore(&vperf_users_lock, flags);
	return n;
}

static const struct kernel_param_ops users_ops = { .get = users_get };
module_param_cb(users, &users_ops, NULL, 0400);
MODULE_PARM_DESC(users, "users with an open file: \"uid U kb K events E\", what each holds "
		 "against max_user_kb and max_user_events (read only, root)");
