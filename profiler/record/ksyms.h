/* SPDX-License-Identifier: MIT */
/*
 * What names code the kernel provides.  Kernel symbol maps: /proc/kallsyms or a System.map
 * ("ADDR TYPE NAME[\t[MODULE]]" lines), read once, sorted by address, looked up by address:
 * `vperf record` names the host kernel's frames with it, the converter the guest kernel's (from
 * the map vm record kept).  And the vDSO's image, kept with a recording.
 */
#ifndef VPERF_RECORD_KSYMS_H
#define VPERF_RECORD_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vperf_ksym {
	uint64_t addr;
	const char *name;	/* into the map's text */
	const char *module;	/* "[kvm]", or "" for the kernel image */
	bool used;		/* the caller's mark */
};

struct vperf_ksyms {
	char *text;		/* the whole map, its lines cut in place */
	struct vperf_ksym *sym;	/* sorted by address */
	size_t nr;
	uint64_t text_end;	/* _etext's address, 0 when the map has none */
};

enum {
	VPERF_KSYMS_TEXT_ONLY	= 1 << 0,	/* only code symbols (types t, T, w, W) */
	VPERF_KSYMS_NO_MODULES	= 1 << 1,	/* only the kernel image's (no "[module]" column) */
};

/*
 * Read the map at path into k (which vperf_ksyms__exit() frees, also after an error).  Lines
 * that are not symbol lines are skipped.  0, or -errno: the file's, -ENOMEM.
 */
int vperf_ksyms__read(struct vperf_ksyms *k, const char *path, unsigned int flags)
	__attribute__((warn_unused_result));
void vperf_ksyms__exit(struct vperf_ksyms *k);

/*
 * The symbol holding addr: the last at or below it (the first of those at its address), or NULL
 * below the first symbol or between _etext (when the map names it) and the next symbol above.
 */
struct vperf_ksym *vperf_ksyms__find(const struct vperf_ksyms *k, uint64_t addr);

/* The symbol's size: to the next higher address in the map or _etext, 0 for the last. */
uint64_t vperf_ksyms__size(const struct vperf_ksyms *k, const struct vperf_ksym *s);

/* The address of the kernel image's symbol name into *addr: 0, or -ENOENT. */
int vperf_ksyms__addr(const struct vperf_ksyms *k, const char *name, uint64_t *addr);

/*
 * The vDSO: code the kernel maps into every process, named by its own ELF image.  A recording
 * keeps the recorder's (the same for every 64-bit process of that kernel) so that a report on
 * another machine can name "[vdso]" frames: VPERF_VDSO_FILE in the recording's directory, or
 * VPERF_VDSO_GUEST_FILE for a VM recording's guest.
 */
#define VPERF_VDSO_FILE		".vdso.so"
#define VPERF_VDSO_GUEST_FILE	".raw/guest/vdso.so"

/*
 * Write this process's vDSO image to path, a new file (mode 0600, never through a link: -EEXIST
 * if path exists): its size, or -errno (-ENOENT: no vDSO mapped).
 */
int64_t vperf_vdso__save(const char *path) __attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_KSYMS_H */
