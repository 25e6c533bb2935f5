// SPDX-License-Identifier: MIT
/* A frame's symbol and DSO: the kernel's recorded symbols, or its mapping's ELF file (report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "report.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/*
 * Where the guest's file path is on this host, into buf: under guest_root when given, else
 * the file or directory the guest's files list says it came from.  NULL when neither knows.
 */
const char *vperf_report__guest_file(const struct vperf_report *r, const char *path, char *buf,
				     size_t len)
{
	size_t best = 0, best_len = 0;

	if (path[0] != '/')
		return NULL;
	/* the guest names the path: no ".." may climb out of the directory it maps to */
	for (const char *c = path; (c = strstr(c, "/..")); c += 3)
		if (c[3] == '/' || c[3] == '\0')
			return NULL;
	if (r->guest_root) {
		int n = snprintf(buf, len, "%s%s", r->guest_root, path);

		return n > 0 && (size_t)n < len ? buf : NULL;
	}
	/* the longest guest path that is the file or a directory above it */
	for (size_t i = 0; i < r->nr_guest_files; i++) {
		const char *g = r->guest_files[2 * i];
		size_t gl = strlen(g);

		if (gl > best_len && !strncmp(path, g, gl) && (path[gl] == '\0' || path[gl] == '/')) {
			best = i + 1;
			best_len = gl;
		}
	}
	if (best) {
		int n = snprintf(buf, len, "%s%s", r->guest_files[2 * (best - 1) + 1], path + best_len);

		return n > 0 && (size_t)n < len ? buf : NULL;
	}
	return NULL;
}

/* The loaded ELF file of map (loaded once per path), or NULL when it cannot be. */
static const struct vperf_report_elf *elf_of(struct vperf_report *r, struct vperf_report_map *m)
{
	struct vperf_report_elf *n;
	const char *file = m->file;
	char buf[4096];

	if (m->elf >= 0)
		return r->elfs[m->elf].err ? NULL : &r->elfs[m->elf];
	if (!strcmp(m->file, "[vdso]")) {
		/* the image the recording kept (ksyms.h), the guest's or the host's; a recording
		 * without one fails its load once, like any file that cannot be read */
		if (snprintf(buf, sizeof(buf), "%s/%s", r->dir, m->guest ? VPERF_VDSO_GUEST_FILE :
			     VPERF_VDSO_FILE) >= (int)sizeof(buf))
			return NULL;
		file = buf;
	} else if (m->file[0] != '/') {
		return NULL;		/* [stack], anonymous: no file to read */
	} else if (m->guest && !(file = vperf_report__guest_file(r, m->file, buf, sizeof(buf)))) {
		return NULL;		/* a guest file this host does not have */
	}
	for (size_t i = 0; i < r->nr_elfs; i++) {
		if (!strcmp(r->elfs[i].path, file)) {
			m->elf = (int32_t)i;
			return r->elfs[i].err ? NULL : &r->elfs[i];
		}
	}
	n = realloc(r->elfs, (r->nr_elfs + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->elfs = n;
	/* a file that cannot be read stays in the table with its error: tried once */
	if (vperf_report_elf__load(&r->elfs[r->nr_elfs], file) == -ENOMEM &&
	    !r->elfs[r->nr_elfs].path)
		return NULL;
	m->elf = (int32_t)r->nr_elfs++;
	return r->elfs[m->elf].err ? NULL : &r->elfs[m->elf];
}

const struct vperf_report_frame *vperf_report__frame(struct vperf_report *r, size_t i)
{
	struct vperf_report_frame *f = &r->frames[i];
	const struct vperf_report_sym *s = NULL;
	uint64_t ip = f->ip - f->ret;

	if (f->resolved)
		return f;
	f->resolved = true;
	f->found = false;
	f->sym = VPERF_REPORT_UNKNOWN;
	if (f->kernel) {
		s = f->guest ? vperf_report_sym_find(r->gksyms, r->nr_gksyms, ip) :
			       vperf_report_sym_find(r->ksyms, r->nr_ksyms, ip);
		f->dso = s && s->module && *s->module ? s->module :
			 f->guest ? VPERF_REPORT_GUEST_KERNEL_DSO : VPERF_REPORT_KERNEL_DSO;
	} else if (f->map >= 0) {
		struct vperf_report_map *m = &r->maps[f->map];
		const struct vperf_report_elf *e = elf_of(r, m);
		uint64_t vaddr;

		f->dso = base_name(m->file);
		if (e && vperf_report_elf__vaddr(e, ip - m->start + m->pgoff, &vaddr))
			s = vperf_report_sym_find(e->syms, e->nr_syms, vaddr);
	} else {
		f->dso = VPERF_REPORT_UNKNOWN;
	}
	if (s) {
		f->sym = s->name;
		f->found = true;
	}
	return f;
}

const char *vperf_report__frame_name(struct vperf_report *r, size_t frame, char *buf, size_t len)
{
	const struct vperf_report_frame *f = vperf_report__frame(r, frame);

	if (f->found)
		return f->sym;
	snprintf(buf, len, VPERF_REPORT_UNKNOWN_IN, f->dso);
	return buf;
}
