/* SPDX-License-Identifier: MIT */
/*
 * Function symbols of ELF files and of kernels, and lookups by address (symbols.c).
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_SYMBOLS_H
#define VPERF_REPORT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VPERF_REPORT_UNKNOWN	"[unknown]"
#define VPERF_REPORT_KERNEL_DSO	"[kernel.kallsyms]"
#define VPERF_REPORT_GUEST_KERNEL_DSO	"[guest.kernel.kallsyms]"	/* perf kvm's name */
/* An unknown frame's name where its DSO has no column of its own: "[unknown] in libc.so.6" */
#define VPERF_REPORT_UNKNOWN_IN	VPERF_REPORT_UNKNOWN " in %s"

/* ---- symbols ----------------------------------------------------------- */

/* One function: [addr, addr + size) in its file's virtual addresses (or the kernel's). */
struct vperf_report_sym {
	uint64_t addr, size;
	const char *name;
	const char *module;		/* kernel symbols: "" (the kernel) or "[kvm]"; else NULL */
};

/* The function symbols of an ELF file (.symtab, else .dynsym) and its loadable segments. */
struct vperf_report_elf {
	char *path;
	int err;			/* 0: loaded; else why it could not be (-ENOENT...) */
	struct vperf_report_sym *syms;	/* sorted by addr, no overlaps */
	size_t nr_syms;
	char *strings;			/* the names */
	struct vperf_report_seg {
		uint64_t offset, vaddr, filesz;
	} *segs;
	size_t nr_segs;
};

/*
 * Open a file a recording names, to read (docs/report.md, section 1): path itself, or with root
 * path under root, every ".." and symbolic link on the way resolved as if root were "/" (a
 * guest's file system, a recording's directory), never above it.  Opened without waiting (a
 * FIFO opens, then is refused) and never through a symbolic link as its last component; only a
 * regular file is kept.  The descriptor, or -errno: -ENOENT, -EACCES, -ELOOP (a symbolic link),
 * -EISDIR, -EINVAL (a FIFO, a device, a socket), -EXDEV (outside root, where openat2(2) is
 * missing and the file opened is found above root).
 */
int vperf_report__open_file(const char *root, const char *path)
	__attribute__((warn_unused_result));

/*
 * Load the symbols of path (under root, when not NULL: vperf_report__open_file()): 0, or -errno
 * (those, -ENOEXEC: not ELF, -ENOMEM).  e->path is the file's name, root and path joined.
 */
int vperf_report_elf__load(struct vperf_report_elf *e, const char *path)
	__attribute__((warn_unused_result));
int vperf_report_elf__load_in(struct vperf_report_elf *e, const char *root, const char *path)
	__attribute__((warn_unused_result));
void vperf_report_elf__exit(struct vperf_report_elf *e);

/* The virtual address of a file offset (in a PT_LOAD segment); false if in none. */
bool vperf_report_elf__vaddr(const struct vperf_report_elf *e, uint64_t offset, uint64_t *vaddr);

/* The symbol holding addr in syms[0..nr) (sorted, non-overlapping), or NULL. */
const struct vperf_report_sym *vperf_report_sym_find(const struct vperf_report_sym *syms,
						     size_t nr, uint64_t addr);

/*
 * Sort syms by address and give each symbol without a size the room up to the next (last: none);
 * of symbols at one address the first kept.  Returns the new count.
 */
size_t vperf_report_syms_sort(struct vperf_report_sym *syms, size_t nr);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_SYMBOLS_H */
