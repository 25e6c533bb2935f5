// SPDX-License-Identifier: MIT
/* A frame's symbol and DSO: the kernel's recorded symbols, or its mapping's ELF file (report.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "hist.h"
#include "session.h"
#include "symbols.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/*
 * Where the guest's file path is on this host: under guest_root when given, else the file or
 * directory the guest's files list says it came from.  A directory is *root, the path in it
 * *rel (both "/..."): the file is opened under it (vperf_report__open_file()), so that neither
 * the guest's path nor a link in that directory leads out of it.  A file is *rel itself, *root
 * NULL.  false when nothing says.
 */
static bool guest_place(const struct vperf_report *r, const char *path, const char **root,
			const char **rel)
{
	size_t best = 0, best_len = 0;

	if (path[0] != '/')
		return false;
	/* the guest names the path: no ".." may climb out of the directory it maps to */
	for (const char *c = path; (c = strstr(c, "/..")); c += 3)
		if (c[3] == '/' || c[3] == '\0')
			return false;
	if (r->guest_root) {
		*root = r->guest_root;
		*rel = path;
		return true;
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
	if (!best)
		return false;
	*root = path[best_len] ? r->guest_files[2 * (best - 1) + 1] : NULL;
	*rel = path[best_len] ? path + best_len : r->guest_files[2 * (best - 1) + 1];
	return true;
}

const char *vperf_report__guest_file(const struct vperf_report *r, const char *path, char *buf,
				     size_t len)
{
	const char *root, *rel;
	int n;

	if (!guest_place(r, path, &root, &rel))
		return NULL;
	n = snprintf(buf, len, "%s%s", root ? root : "", rel);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* A file's name and the report whose elfs it is looked up in, for same_path(). */
struct path_key {
	const struct vperf_report *r;
	const char *path;
};

static bool same_path(const void *ctx, size_t i)
{
	const struct path_key *k = ctx;

	return !strcmp(k->r->elfs[i].path, k->path);
}

/*
 * The loaded ELF file of map (loaded once per file), or NULL when it cannot be.  Every file is
 * opened by vperf_report__open_file(): a guest's under the directory it maps to, the recording's
 * vDSO image under the recording's directory, a host file as the recording names it.
 */
static const struct vperf_report_elf *elf_of(struct vperf_report *r, struct vperf_report_map *m)
{
	const char *file = m->file, *root = NULL;
	char key[8192];
	uint64_t h;
	int64_t i;

	if (m->elf >= 0)
		return r->elfs[m->elf].err ? NULL : &r->elfs[m->elf];
	if (!strcmp(m->file, "[vdso]")) {
		/* the image the recording kept (ksyms.h), the guest's or the host's; a recording
		 * without one fails its load once, like any file that cannot be read */
		root = r->dir;
		file = m->guest ? VPERF_VDSO_GUEST_FILE : VPERF_VDSO_FILE;
	} else if (m->file[0] != '/') {
		return NULL;		/* [stack], anonymous: no file to read */
	} else if (m->guest && !guest_place(r, m->file, &root, &file)) {
		return NULL;		/* a guest file this host does not have */
	}
	/* the file's name, as vperf_report_elf__load_in() joins it */
	if (snprintf(key, sizeof(key), "%s%s%s", root ? root : "",
		     root && file[0] != '/' ? "/" : "", file) >= (int)sizeof(key))
		return NULL;
	if (!r->elf_idx && !(r->elf_idx = calloc(1, sizeof(*r->elf_idx))))
		return NULL;
	h = vperf_report_idx__hash(r->elf_idx, key, strlen(key));
	i = vperf_report_idx__find(r->elf_idx, h, same_path, &(struct path_key){ r, key });
	if (i >= 0) {
		m->elf = (int32_t)i;
		return r->elfs[i].err ? NULL : &r->elfs[i];
	}
	if (r->nr_elfs >= INT32_MAX ||
	    vperf_report_grow(&r->elfs, &r->cap_elfs, r->nr_elfs, sizeof(*r->elfs)))
		return NULL;
	/* a file that cannot be read stays in the table with its error: tried once */
	if (vperf_report_elf__load_in(&r->elfs[r->nr_elfs], root, file) == -ENOMEM &&
	    !r->elfs[r->nr_elfs].path)
		return NULL;
	if (vperf_report_idx__add(r->elf_idx, h, r->nr_elfs)) {
		vperf_report_elf__exit(&r->elfs[r->nr_elfs]);
		return NULL;
	}
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
