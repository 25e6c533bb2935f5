// SPDX-License-Identifier: MIT
/* A frame's symbol and DSO: the kernel's recorded symbols, or its mapping's ELF file (report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The loaded ELF file of map (loaded once per path), or NULL when it cannot be. */
static const struct vperf_report_elf *elf_of(struct vperf_report *r, struct vperf_report_map *m)
{
	struct vperf_report_elf *n;

	if (m->elf >= 0)
		return r->elfs[m->elf].err ? NULL : &r->elfs[m->elf];
	if (m->file[0] != '/')
		return NULL;		/* [vdso], [stack], anonymous: no file to read */
	for (size_t i = 0; i < r->nr_elfs; i++) {
		if (!strcmp(r->elfs[i].path, m->file)) {
			m->elf = (int32_t)i;
			return r->elfs[i].err ? NULL : &r->elfs[i];
		}
	}
	n = realloc(r->elfs, (r->nr_elfs + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->elfs = n;
	/* a file that cannot be read stays in the table with its error: tried once */
	if (vperf_report_elf__load(&r->elfs[r->nr_elfs], m->file) == -ENOMEM &&
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
	f->sym = VPERF_REPORT_UNKNOWN;
	if (f->kernel) {
		s = vperf_report_sym_find(r->ksyms, r->nr_ksyms, ip);
		f->dso = s && s->module && *s->module ? s->module : VPERF_REPORT_KERNEL_DSO;
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
