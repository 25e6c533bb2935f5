// SPDX-License-Identifier: MIT
/*
 * Event names: libpfm4 does the encoding (PMU tables, umasks, modifiers);
 * this file adds what a person needs around it: suggestions for a
 * misspelt name, and the list of events with what is usable here.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* linux/perf_event.h (through internal.h) first: libpfm4 then skips its copy. */
#include "internal.h"

#include <perfmon/pfmlib_perf_event.h>

static pthread_mutex_t pfm_lock = PTHREAD_MUTEX_INITIALIZER;
static int pfm_state;	/* 0: not yet, 1: ok, <0: -errno of the failure */

int vperf__pfm_init(void)
{
	int ret;

	pthread_mutex_lock(&pfm_lock);
	if (pfm_state == 0) {
		ret = pfm_initialize();
		pfm_state = ret == PFM_SUCCESS ? 1 : vperf__pfm_errno(ret);
		if (ret != PFM_SUCCESS)
			pr_warn("libpfm4 initialisation failed: %s\n", pfm_strerror(ret));
	}
	ret = pfm_state > 0 ? 0 : pfm_state;
	pthread_mutex_unlock(&pfm_lock);
	return ret;
}

int vperf__pfm_errno(int pfm_err)
{
	switch (pfm_err) {
	case PFM_SUCCESS:
		return 0;
	case PFM_ERR_NOTSUPP:
		return -EOPNOTSUPP;
	case PFM_ERR_INVAL:
	case PFM_ERR_ATTR:
	case PFM_ERR_ATTR_VAL:
	case PFM_ERR_ATTR_SET:
	case PFM_ERR_FEATCOMB:
	case PFM_ERR_UMASK:
		return -EINVAL;
	case PFM_ERR_NOINIT:
		return -ENODEV;
	case PFM_ERR_NOTFOUND:
		return -ENOENT;
	case PFM_ERR_NOMEM:
		return -ENOMEM;
	case PFM_ERR_TOOSMALL:
		return -ENOSPC;
	case PFM_ERR_TOOMANY:
		return -E2BIG;
	default:
		return -EINVAL;
	}
}

bool vperf__attr_is_hw(const struct perf_event_attr *attr)
{
	return attr->type == PERF_TYPE_HARDWARE ||
	       attr->type == PERF_TYPE_HW_CACHE ||
	       attr->type == PERF_TYPE_RAW ||
	       attr->type >= PERF_TYPE_MAX;
}

int vperf__edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char row[VPERF_NAME_LEN + 1];

	if (la > VPERF_NAME_LEN || lb > VPERF_NAME_LEN)
		return 255;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned char)(j > 255 ? 255 : j);
	for (size_t i = 1; i <= la; i++) {
		unsigned int diag = row[0], up;

		row[0] = (unsigned char)(i > 255 ? 255 : i);
		for (size_t j = 1; j <= lb; j++) {
			unsigned int best, cost;

			up = row[j];
			cost = tolower((unsigned char)a[i - 1]) !=
			       tolower((unsigned char)b[j - 1]);
			best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1u < best)
				best = row[j - 1] + 1u;
			row[j] = (unsigned char)(best > 255 ? 255 : best);
			diag = up;
		}
	}
	return row[lb];
}

/* The name a person types: perf's generic names lower-case, others pmu::NAME. */
static void display_name(const pfm_pmu_info_t *pmu, const pfm_event_info_t *ev,
			 char *buf, size_t len)
{
	if (pmu->pmu == PFM_PMU_PERF_EVENT) {
		size_t i;

		for (i = 0; ev->name[i] && i + 1 < len; i++)
			buf[i] = (char)tolower((unsigned char)ev->name[i]);
		buf[i] = '\0';
	} else {
		snprintf(buf, len, "%s::%s", pmu->name, ev->name);
	}
}

/*
 * Walk the events of every PMU libpfm4 detected.  For the perf PMU only
 * the aliases perf itself uses (TASK-CLOCK, not PERF_COUNT_SW_TASK_CLOCK)
 * are shown; perf_raw is a syntax, not events.
 */
typedef int (*pfm_walk_fn)(const pfm_pmu_info_t *pmu,
			   const pfm_event_info_t *ev, void *arg);

static int pfm_walk(pfm_walk_fn fn, void *arg)
{
	int ret = vperf__pfm_init();

	if (ret)
		return ret;
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pmu;

		memset(&pmu, 0, sizeof(pmu));
		pmu.size = sizeof(pmu);
		if (pfm_get_pmu_info(p, &pmu) != PFM_SUCCESS || !pmu.is_present)
			continue;
		if (pmu.pmu == PFM_PMU_PERF_EVENT_RAW)
			continue;
		for (int i = pmu.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ev;

			memset(&ev, 0, sizeof(ev));
			ev.size = sizeof(ev);
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &ev) != PFM_SUCCESS)
				continue;
			if (pmu.pmu == PFM_PMU_PERF_EVENT && !ev.equiv)
				continue;
			ret = fn(&pmu, &ev, arg);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct suggest_ctx {
	const char *base;
	char (*out)[VPERF_NAME_LEN];
	int dist[16];
	int n, max, limit;
};

static int suggest_one(const pfm_pmu_info_t *pmu, const pfm_event_info_t *ev, void *arg)
{
	struct suggest_ctx *s = arg;
	char name[VPERF_NAME_LEN];
	int d, pos;

	display_name(pmu, ev, name, sizeof(name));
	d = vperf__edit_distance(s->base, ev->name);
	if (d > s->limit)
		return 0;
	for (int i = 0; i < s->n; i++)
		if (!strcasecmp(s->out[i], name))
			return 0;
	for (pos = s->n; pos > 0 && s->dist[pos - 1] > d; pos--)
		;
	if (pos >= s->max)
		return 0;
	if (s->n < s->max)
		s->n++;
	for (int i = s->n - 1; i > pos; i--) {
		memcpy(s->out[i], s->out[i - 1], VPERF_NAME_LEN);
		s->dist[i] = s->dist[i - 1];
	}
	snprintf(s->out[pos], VPERF_NAME_LEN, "%s", name);
	s->dist[pos] = d;
	return 0;
}

int vperf__suggest(const char *name, char out[][VPERF_NAME_LEN], int max)
{
	struct suggest_ctx s = { .out = out, .max = max > 16 ? 16 : max };
	char base[VPERF_NAME_LEN];
	const char *p = strstr(name, "::");
	char *colon;
	size_t len;

	snprintf(base, sizeof(base), "%s", p ? p + 2 : name);
	colon = strchr(base, ':');
	if (colon)
		*colon = '\0';
	len = strlen(base);
	if (!len || s.max <= 0)
		return 0;
	s.base = base;
	s.limit = len < 6 ? 2 : (int)len / 3;
	if (pfm_walk(suggest_one, &s) < 0)
		return 0;
	return s.n;
}

int vperf__encode(const char *name, struct perf_event_attr *attr,
		  char *canon, size_t canon_len, char *err, size_t err_len)
{
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	if (!name || !*name) {
		snprintf(err, err_len, "empty event name");
		return -EINVAL;
	}
	if (strlen(name) >= VPERF_NAME_LEN) {
		snprintf(err, err_len, "event name too long (%zu characters, at most %d)",
			 strlen(name), VPERF_NAME_LEN - 1);
		return -EINVAL;
	}
	ret = vperf__pfm_init();
	if (ret) {
		snprintf(err, err_len, "libpfm4 could not be initialised: %s", strerror(-ret));
		return ret;
	}

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		int e = vperf__pfm_errno(ret);

		if (ret == PFM_ERR_NOTFOUND) {
			char sugg[3][VPERF_NAME_LEN];
			int n = vperf__suggest(name, sugg, 3);
			int off = snprintf(err, err_len, "unknown event '%s'", name);

			for (int i = 0; i < n && off > 0 && (size_t)off < err_len; i++)
				off += snprintf(err + off, err_len - off, "%s%s",
						i ? ", " : "; did you mean: ", sugg[i]);
			if (off > 0 && (size_t)off < err_len)
				snprintf(err + off, err_len - off,
					 "%s ('vperf list' shows the events of this host)",
					 n ? "?" : "");
		} else {
			snprintf(err, err_len, "bad event '%s': %s", name, pfm_strerror(ret));
		}
		free(fstr);
		return e;
	}
	attr->size = sizeof(*attr);
	snprintf(canon, canon_len, "%s", fstr ? fstr : name);
	free(fstr);
	return 0;
}

/* ---- the public list ---- */

static bool probe_attr(struct perf_event_attr *attr, const char *name,
		       char *why, size_t len)
{
	int fd;

	attr->disabled = 1;
	fd = vperf__perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd == -EACCES || fd == -EPERM) {
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
		fd = vperf__perf_event_open(attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd >= 0) {
		close(fd);
		return true;
	}
	vperf__open_strerror(fd, name, attr, 0, "/", why, len);
	return false;
}

struct list_ctx {
	vperf_event_fn fn;
	void *arg;
	int probe;
};

/*
 * The unit masks of an event that cannot be counted without one, as
 * "A, B, C" into buf; the first one into first.  Returns how many.
 */
static int umask_list(const pfm_event_info_t *ev, char *buf, size_t len,
		      char *first, size_t first_len)
{
	size_t off = 0;
	int n = 0;

	buf[0] = first[0] = '\0';
	for (int i = 0; i < ev->nattrs; i++) {
		pfm_event_attr_info_t a;
		int w;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (pfm_get_event_attr_info(ev->idx, i, PFM_OS_PERF_EVENT_EXT, &a) != PFM_SUCCESS ||
		    a.type != PFM_ATTR_UMASK)
			continue;
		if (!n)
			snprintf(first, first_len, "%s", a.name);
		w = snprintf(buf + off, len - off, "%s%s", n ? ", " : "", a.name);
		if (w < 0 || (size_t)w >= len - off)
			break;
		off += (size_t)w;
		n++;
	}
	return n;
}

static int list_one(const pfm_pmu_info_t *pmu, const pfm_event_info_t *ev, void *arg)
{
	struct list_ctx *l = arg;
	struct vperf_event_info info;
	struct perf_event_attr attr;
	char name[VPERF_NAME_LEN], canon[VPERF_NAME_LEN], why[VPERF_ERRMSG_LEN];
	char umasks[1024], first[VPERF_NAME_LEN];
	bool hw, need_umask = false;
	int ret;

	display_name(pmu, ev, name, sizeof(name));
	why[0] = '\0';
	ret = vperf__encode(name, &attr, canon, sizeof(canon), why, sizeof(why));
	if (ret && umask_list(ev, umasks, sizeof(umasks), first, sizeof(first))) {
		/* Needs a unit mask: probe with the first one. */
		char probe[2 * VPERF_NAME_LEN];

		need_umask = true;
		snprintf(probe, sizeof(probe), "%s:%s", name, first);
		why[0] = '\0';
		ret = vperf__encode(probe, &attr, canon, sizeof(canon), why, sizeof(why));
	}
	if (ret)
		hw = pmu->type != PFM_PMU_TYPE_OS_GENERIC;
	else
		hw = vperf__attr_is_hw(&attr);

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	info.pmu = pmu->name;
	info.name = name;
	info.desc = ev->desc;
	info.kind = hw ? VPERF_EVENT_HARDWARE : VPERF_EVENT_SOFTWARE;
	info.umasks = need_umask ? umasks : NULL;
	info.usable = -1;
	if (l->probe) {
		if (why[0])
			info.usable = 0;	/* could not even encode */
		else
			info.usable = probe_attr(&attr, name, why, sizeof(why));
		info.why = info.usable ? NULL : why;
	}
	return l->fn(&info, l->arg);
}

int vperf_events__for_each(vperf_event_fn fn, void *arg, int probe)
{
	struct list_ctx l = { fn, arg, probe };
	int ret;

	if (!fn)
		return -EINVAL;
	ret = pfm_walk(list_one, &l);
	return ret ? ret : vperf__virt_for_each(fn, arg, probe);
}

/* ---- perf events for tools ---- */

int vperf_event__perf_attr(const char *name, struct perf_event_attr *attr, size_t attr_size,
			   char *err, size_t err_len)
{
	struct perf_event_attr a;
	char canon[VPERF_NAME_LEN];
	size_t n;
	int ret;

	if (!attr || attr_size < PERF_ATTR_SIZE_VER0) {
		snprintf(err, err_len, "perf_event_attr of %zu bytes: at least %d are needed",
			 attr_size, PERF_ATTR_SIZE_VER0);
		return -EINVAL;
	}
	ret = vperf__encode(name, &a, canon, sizeof(canon), err, err_len);
	if (ret)
		return ret;
	n = attr_size < sizeof(a) ? attr_size : sizeof(a);
	memset(attr, 0, attr_size);
	memcpy(attr, &a, n);
	attr->size = (uint32_t)n;
	return 0;
}

void vperf_event__open_strerror(int err, const char *name, const struct perf_event_attr *attr,
				pid_t pid, char *buf, size_t len)
{
	vperf__open_strerror(err, name ? name : "?", attr, pid, "/", buf, len);
}
