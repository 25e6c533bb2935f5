// SPDX-License-Identifier: MIT
/* Function symbols of ELF files (libelf), and lookups by address (report.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "symbols.h"

static int by_addr(const void *a, const void *b)
{
	const struct vperf_report_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address: the sized one first (an alias without a size says less) */
	return (x->size == 0) - (y->size == 0);
}

size_t vperf_report_syms_sort(struct vperf_report_sym *syms, size_t nr)
{
	size_t n = 0;

	if (!nr)
		return 0;
	if (nr > 1)
		qsort(syms, nr, sizeof(*syms), by_addr);
	for (size_t i = 0; i < nr; i++) {
		if (n && syms[n - 1].addr == syms[i].addr)
			continue;
		syms[n++] = syms[i];
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t room = i + 1 < n ? syms[i + 1].addr - syms[i].addr : 0;

		/* no size, or one overlapping the next symbol: up to the next one */
		if (!syms[i].size || (room && syms[i].size > room))
			syms[i].size = room;
	}
	return n;
}

const struct vperf_report_sym *vperf_report_sym_find(const struct vperf_report_sym *syms,
						     size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {		/* the first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr - syms[lo - 1].addr < syms[lo - 1].size)
		return &syms[lo - 1];
	return NULL;
}

bool vperf_report_elf__vaddr(const struct vperf_report_elf *e, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < e->nr_segs; i++) {
		const struct vperf_report_seg *s = &e->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

/* The PT_LOAD segments (executable or not: a sample's file offset finds its own). */
static int load_segments(Elf *elf, struct vperf_report_elf *e)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	e->segs = calloc(n ? n : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nr_segs].offset = ph.p_offset;
		e->segs[e->nr_segs].vaddr = ph.p_vaddr;
		e->segs[e->nr_segs].filesz = ph.p_filesz;
		e->nr_segs++;
	}
	return 0;
}

/* The section of type (SHT_SYMTAB or SHT_DYNSYM), or NULL. */
static Elf_Scn *find_symtab(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type && sh->sh_entsize)
			return scn;
	return NULL;
}

/* The section called name, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

#define PLT_ENTRY	16	/* x86-64: bytes per PLT entry */
#define PLT_MAX		65536	/* entries named at most (a hostile file's .rela.plt is bounded) */

/*
 * The PLT's entries as symbols "NAME@plt", as perf names them: the n-th relocation of .rela.plt
 * is the n-th entry of .plt.sec (where -z ibtplt made one), else of .plt after its first (the
 * resolver's).  fn(arg, addr, name) per entry; the number of entries.
 */
static size_t plt_symbols(Elf *elf, void (*fn)(void *arg, uint64_t addr, const char *name),
			  void *arg)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel = find_section(elf, ".rela.plt", &rsh), *plt, *dyn;
	Elf_Data *rd, *dd;
	uint64_t base, n, slots;
	size_t done = 0;

	plt = find_section(elf, ".plt.sec", &psh);
	base = plt ? psh.sh_addr : 0;
	if (!plt && (plt = find_section(elf, ".plt", &psh)))
		base = psh.sh_addr + PLT_ENTRY;
	if (!rel || !plt || rsh.sh_type != SHT_RELA || !rsh.sh_entsize || !psh.sh_addr ||
	    !(dyn = elf_getscn(elf, rsh.sh_link)) || !gelf_getshdr(dyn, &dsh) ||
	    !(rd = elf_getdata(rel, NULL)) || !(dd = elf_getdata(dyn, NULL)) ||
	    psh.sh_addr + psh.sh_size < base)
		return 0;
	n = rsh.sh_size / rsh.sh_entsize;
	slots = (psh.sh_addr + psh.sh_size - base) / PLT_ENTRY;
	for (uint64_t i = 0; i < n && i < slots && i < PLT_MAX; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;

		if (!gelf_getrela(rd, (int)i, &r) ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(elf, dsh.sh_link, sym.st_name)) || !*name ||
		    strlen(name) > 4096)
			continue;
		fn(arg, base + i * PLT_ENTRY, name);
		done++;
	}
	return done;
}

/* load_symbols()'s two passes over the PLT: its names' length, then the symbols. */
struct plt_pass {
	struct vperf_report_elf *e;
	size_t len, off;
	bool copy;
};

static void plt_one(void *arg, uint64_t addr, const char *name)
{
	struct plt_pass *p = arg;
	size_t l = strlen(name);

	if (!p->copy) {
		p->len += l + sizeof("@plt");
		p->e->nr_syms++;
		return;
	}
	memcpy(p->e->strings + p->off, name, l);
	memcpy(p->e->strings + p->off + l, "@plt", sizeof("@plt"));
	p->e->syms[p->e->nr_syms].addr = addr;
	p->e->syms[p->e->nr_syms].size = PLT_ENTRY;
	p->e->syms[p->e->nr_syms].name = p->e->strings + p->off;
	p->e->nr_syms++;
	p->off += l + sizeof("@plt");
}

static int load_symbols(Elf *elf, struct vperf_report_elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_symtab(elf, SHT_SYMTAB, &sh);
	Elf_Data *data;
	size_t n, len = 0, off = 0;
	struct plt_pass plt = { .e = e };

	if (!scn)
		scn = find_symtab(elf, SHT_DYNSYM, &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	n = data ? sh.sh_size / sh.sh_entsize : 0;	/* none: stripped, the PLT's names only */
	/* two passes: the names' total length, then copies (the ELF file is closed after) */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			size_t l;

			if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
			    !s.st_value || (GELF_ST_TYPE(s.st_info) != STT_FUNC &&
					    GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC))
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			l = strlen(name) + 1;
			if (!pass) {
				len += l;
				e->nr_syms++;
				continue;
			}
			memcpy(e->strings + off, name, l);
			e->syms[e->nr_syms].addr = s.st_value;
			e->syms[e->nr_syms].size = s.st_size;
			e->syms[e->nr_syms].name = e->strings + off;
			e->nr_syms++;
			off += l;
		}
		plt.copy = pass;
		plt.off = off;
		plt_symbols(elf, plt_one, &plt);
		if (!pass) {
			len += plt.len;
			e->syms = calloc(e->nr_syms ? e->nr_syms : 1, sizeof(*e->syms));
			e->strings = malloc(len ? len : 1);
			if (!e->syms || !e->strings)
				return -ENOMEM;
			e->nr_syms = 0;
		}
	}
	e->nr_syms = vperf_report_syms_sort(e->syms, e->nr_syms);
	return 0;
}

/* How a file a recording names is opened: to read, never waiting (a FIFO), never a last link. */
#define OPEN_FLAGS	(O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)

/*
 * Without openat2(2) (Linux before 5.6, or a seccomp filter that refuses it): open root/path,
 * then make sure the file opened is under root, by what the kernel says its path is.
 */
static int open_under_fallback(const char *root, const char *path)
{
	char joined[PATH_MAX], real_root[PATH_MAX], proc[64], at[PATH_MAX];
	size_t rl;
	ssize_t n;
	int fd;

	if (snprintf(joined, sizeof(joined), "%s/%s", root, path) >= (int)sizeof(joined))
		return -ENAMETOOLONG;
	if (!realpath(root, real_root))
		return -errno;
	fd = open(joined, OPEN_FLAGS);
	if (fd < 0)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, at, sizeof(at) - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	at[n] = '\0';
	rl = strlen(real_root);
	if ((size_t)n <= rl || strncmp(at, real_root, rl) ||
	    (at[rl] != '/' && strcmp(real_root, "/"))) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

int vperf_report__open_file(const char *root, const char *path)
{
	struct stat st;
	int fd, dfd;

	if (!root) {
		fd = open(path, OPEN_FLAGS);
		if (fd < 0)
			return -errno;
	} else {
		struct open_how how = {
			.flags = OPEN_FLAGS,
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};

		while (*path == '/')
			path++;
		dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
		if (fd < 0 && (errno == ENOSYS || errno == EPERM))
			fd = open_under_fallback(root, path);
		else if (fd < 0)
			fd = -errno;
		close(dfd);
		if (fd < 0)
			return fd;
	}
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {	/* a FIFO, a device, a directory, a socket */
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	return fd;
}

int vperf_report_elf__load(struct vperf_report_elf *e, const char *path)
{
	return vperf_report_elf__load_in(e, NULL, path);
}

int vperf_report_elf__load_in(struct vperf_report_elf *e, const char *root, const char *path)
{
	Elf *elf;
	int fd, err;

	memset(e, 0, sizeof(*e));
	if (root) {
		size_t n = strlen(root) + strlen(path) + 2;

		e->path = malloc(n);
		if (e->path)
			snprintf(e->path, n, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
	} else {
		e->path = strdup(path);
	}
	if (!e->path)
		return e->err = -ENOMEM;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return e->err = -ENOSYS;
	fd = vperf_report__open_file(root, path);
	if (fd < 0)
		return e->err = fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out_elf;
	}
	err = load_segments(elf, e);
	if (!err)
		err = load_symbols(elf, e);
out_elf:
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		char *p = e->path;

		e->path = NULL;
		vperf_report_elf__exit(e);
		e->path = p;
	}
	return e->err = err;
}

void vperf_report_elf__exit(struct vperf_report_elf *e)
{
	free(e->path);
	free(e->syms);
	free(e->strings);
	free(e->segs);
	memset(e, 0, sizeof(*e));
}
