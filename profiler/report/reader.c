// SPDX-License-Identifier: MIT
/*
 * A recording read back with libbabeltrace2 (report.h): source.ctf.fs on the directory, the
 * muxer putting every stream's events in time order, and a simple sink of ours that keeps the
 * samples and follows each process's address space (mmap, exec, fork) and each thread's name
 * (exec, comm, fork) as they were when each sample was taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

#include "decode.h"
#include "session.h"
#include "sink.h"
#include "why.h"

#define MAX_METADATA	(64u << 20)

const char *const vperf_report_count_names[3] = {
	"vperf::vcpu-clock", "vperf::steal", "vperf::exits",
};

const char *const vperf_report_ev_names[VPERF_REPORT_NR_EV_KINDS] = {
	"switch_in", "switch_out", "sched_switch", "wakeup", "fork", "exec", "exit", "lost",
	"marker", "vmm_exit", "irq", "kvm_exit", "kvm_entry", "trace_flush",
};

/*
 * Open a file of the recording's directory to read: without waiting (a FIFO opens at once), and
 * only a regular file (not a FIFO or a device).  0, -EINVAL (not a regular file) or -errno.
 */
static int open_regular(const char *path, FILE **out)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(*out = fdopen(fd, "r"))) {
		close(fd);
		return -EINVAL;
	}
	return 0;
}

/* Is dir a vperf recording: a directory with CTF metadata naming vperf_version? */
static int check_dir(const char *dir, char *why, size_t len)
{
	char path[4096];
	struct stat st;
	FILE *f;
	char *buf;
	size_t n;
	bool ours;
	int err;

	if (stat(dir, &st))
		return vperf_why(why, len, -errno, "%s", errno == ENOENT ? "no such directory" :
			    strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return vperf_why(why, len, -ENOTDIR, "not a directory (a recording is one)");
	snprintf(path, sizeof(path), "%s/metadata", dir);
	err = open_regular(path, &f);
	if (err == -EINVAL)
		return vperf_why(why, len, -EINVAL, "not a vperf recording (its metadata is not a "
			    "regular file)");
	if (err)
		return vperf_why(why, len, -EINVAL, "not a vperf recording (no CTF metadata file in "
			    "it%s%s)", err == -ENOENT ? "" : ": ",
			    err == -ENOENT ? "" : strerror(-err));
	buf = malloc(MAX_METADATA + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, MAX_METADATA, f);
	fclose(f);
	buf[n] = 0;
	ours = n >= 12 && !memcmp(buf, "/* CTF 1.8 */", 12) && strstr(buf, "vperf_version");
	free(buf);
	if (!ours)
		return vperf_why(why, len, -EINVAL, "not a vperf recording (its metadata is not a vperf "
			    "CTF trace's)");
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct vperf_report_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

#define GUEST_FILES	".raw/guest/files"	/* vm record's (util/recdir.h, vm-run.sh --guest-files) */

/*
 * dir's guest files list, if it has one: "GUEST_PATH<TAB>HOST_PATH" lines, both absolute.
 * Lines that are not are skipped (the list is ours, but a person may have edited it).
 */
static int read_guest_files(struct vperf_report *r, const char *dir)
{
	char path[4096], *line = NULL;
	size_t cap = 0, nr = 0;
	ssize_t n;
	FILE *f;
	int err = 0;

	if (snprintf(path, sizeof(path), "%s/" GUEST_FILES, dir) >= (int)sizeof(path))
		return 0;
	if (open_regular(path, &f))
		return 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		char *tab = strchr(line, '\t'), **g;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (!tab || line[0] != '/' || tab[1] != '/' || strchr(tab + 1, '\t'))
			continue;
		*tab = '\0';
		g = realloc(r->guest_files, (nr + 1) * 2 * sizeof(*g));
		if (!g) {
			err = -ENOMEM;
			break;
		}
		r->guest_files = g;
		g[2 * nr] = strdup(line);
		g[2 * nr + 1] = strdup(tab + 1);
		r->nr_guest_files = ++nr;
		if (!g[2 * nr - 2] || !g[2 * nr - 1]) {
			err = -ENOMEM;
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

int vperf_report__set_guest_root(struct vperf_report *r, const char *root)
{
	char *c = strdup(root);

	if (!c)
		return -ENOMEM;
	free(r->guest_root);
	r->guest_root = c;
	/* maps already resolved keep what they found: reset the guest's */
	for (size_t i = 0; i < r->nr_maps; i++)
		if (r->maps[i].guest)
			r->maps[i].elf = -1;
	for (size_t i = 0; i < r->nr_frames; i++)
		if (r->frames[i].guest)
			r->frames[i].resolved = false;
	return 0;
}

int vperf_report__open(const char *dir, struct vperf_report **out, char *why, size_t why_len)
{
	struct vperf_report *r;
	int err;

	*out = NULL;
	err = check_dir(dir, why, why_len);
	if (err)
		return err;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->dir = strdup(dir);
	if (!r->dir) {
		err = -ENOMEM;
		goto out_report;
	}
	err = vperf__sink_read(r, dir, why, why_len);
	if (err)
		goto out_report;
	if (r->nr_ksyms > 1)
		qsort(r->ksyms, r->nr_ksyms, sizeof(*r->ksyms), ksym_cmp);
	if (r->nr_gksyms > 1)
		qsort(r->gksyms, r->nr_gksyms, sizeof(*r->gksyms), ksym_cmp);
	err = read_guest_files(r, dir);
	if (err)
		goto out_report;
	*out = r;
	return 0;

out_report:
	vperf_report__delete(r);
	if (err == -ENOMEM)
		vperf_why(why, why_len, err, "out of memory");
	return err;
}

void vperf_report__delete(struct vperf_report *r)
{
	if (!r)
		return;
	free(r->dir);
	free(r->guest_root);
	for (size_t i = 0; i < 2 * r->nr_guest_files; i++)
		free(r->guest_files[i]);
	free(r->guest_files);
	free(r->samples);
	free(r->counts);
	free(r->frames);
	for (size_t i = 0; i < r->nr_maps; i++)
		free(r->maps[i].file);
	free(r->maps);
	for (size_t i = 0; i < r->nr_elfs; i++)
		vperf_report_elf__exit(&r->elfs[i]);
	free(r->elfs);
	if (r->elf_idx)
		vperf_report_idx__exit(r->elf_idx);
	free(r->elf_idx);
	for (size_t i = 0; i < r->nr_ksyms; i++) {
		free((char *)r->ksyms[i].name);
		free((char *)r->ksyms[i].module);
	}
	free(r->ksyms);
	for (size_t i = 0; i < r->nr_gksyms; i++) {
		free((char *)r->gksyms[i].name);
		free((char *)r->gksyms[i].module);
	}
	free(r->gksyms);
	for (size_t i = 0; i < r->nr_strings; i++)
		free(r->strings[i]);
	free(r->strings);
	for (size_t i = 0; i < r->nr_events; i++)
		free(r->events[i]);
	free(r->events);
	free(r->event_list);
	free(r->ksyms_note);
	free(r->gksyms_note);
	free(r->tlevs);
	free(r->threads);
	free(r->vm_name);
	free(r->hostname);
	free(r);
}

bool vperf_report__cost_event(const struct vperf_report *r, int event)
{
	return event >= 0 && event < 64 && (r->cost_events >> event & 1);
}

int vperf_report__event(const struct vperf_report *r, const char *name)
{
	for (size_t i = 0; i < r->nr_events; i++)
		if (!strcmp(r->events[i], name))
			return (int)i;
	return -1;
}
