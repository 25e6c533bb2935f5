// SPDX-License-Identifier: MIT
/* Kernel symbol maps and the vDSO's image (ksyms.h). */
#include "ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* By address; at one address in the map's own order (names point into one text, in order). */
static int ksym_cmp(const void *a, const void *b)
{
	const struct vperf_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int read_text(const char *path, char **text)
{
	size_t len = 0, cap = 0, got;
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	int err = 0;

	if (!f)
		return -errno;
	do {
		if (cap - len < 65536) {
			char *nb = realloc(buf, cap + (1 << 20));

			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap += 1 << 20;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	if (ferror(f))
		err = -EIO;
	buf[len] = 0;
out:
	fclose(f);
	if (err)
		free(buf);
	else
		*text = buf;
	return err;
}

static bool code_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

int vperf_ksyms__read(struct vperf_ksyms *k, const char *path, unsigned int flags)
{
	size_t cap = 0;
	char *save = NULL;
	int err;

	memset(k, 0, sizeof(*k));
	err = read_text(path, &k->text);
	if (err)
		return err;
	for (char *l = strtok_r(k->text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *end, *name, *module = NULL, *tab;
		uint64_t addr;
		char type;

		addr = strtoull(l, &end, 16);
		if (end == l || *end != ' ' || !end[1] || end[2] != ' ' || !end[3])
			continue;	/* not "ADDR TYPE NAME" */
		type = end[1];
		name = end + 3;
		tab = strchr(name, '\t');
		if (tab) {
			*tab = 0;
			module = tab + 1;	/* "[kvm]" */
		}
		name[strcspn(name, " \r")] = 0;
		if (!*name)
			continue;
		if (!module && !strcmp(name, "_etext")) {
			k->text_end = addr;	/* a mark, not a function: no symbol */
			continue;
		}
		if ((flags & VPERF_KSYMS_TEXT_ONLY) && !code_type(type))
			continue;
		if ((flags & VPERF_KSYMS_NO_MODULES) && module)
			continue;
		if (k->nr == cap) {
			size_t c = cap ? 2 * cap : 65536;
			struct vperf_ksym *n = realloc(k->sym, c * sizeof(*n));

			if (!n)
				return -ENOMEM;
			k->sym = n;
			cap = c;
		}
		k->sym[k->nr++] = (struct vperf_ksym){ addr, name, module ? module : "", false };
	}
	if (k->nr)
		qsort(k->sym, k->nr, sizeof(*k->sym), ksym_cmp);
	return 0;
}

void vperf_ksyms__exit(struct vperf_ksyms *k)
{
	free(k->sym);
	free(k->text);
	memset(k, 0, sizeof(*k));
}

struct vperf_ksym *vperf_ksyms__find(const struct vperf_ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->nr;

	if (!k->nr || addr < k->sym[0].addr)
		return NULL;
	while (lo < hi) {		/* lo: the first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo--;
	if (k->sym[lo].addr < k->text_end && addr >= k->text_end)
		return NULL;	/* past the kernel's text, before what follows it */
	while (lo && k->sym[lo - 1].addr == k->sym[lo].addr)
		lo--;
	return &k->sym[lo];
}

uint64_t vperf_ksyms__size(const struct vperf_ksyms *k, const struct vperf_ksym *s)
{
	uint64_t end = s->addr < k->text_end ? k->text_end : 0;

	for (size_t i = (size_t)(s - k->sym) + 1; i < k->nr; i++)
		if (k->sym[i].addr != s->addr) {
			if (!end || k->sym[i].addr < end)
				end = k->sym[i].addr;
			break;
		}
	return end ? end - s->addr : 0;
}

int vperf_ksyms__addr(const struct vperf_ksyms *k, const char *name, uint64_t *addr)
{
	for (size_t i = 0; i < k->nr; i++)
		if (!*k->sym[i].module && !strcmp(k->sym[i].name, name)) {
			*addr = k->sym[i].addr;
			return 0;
		}
	return -ENOENT;
}

int64_t vperf_vdso__save(const char *path)
{
	unsigned long long start = 0, end = 0;
	char line[512];
	int64_t ret = -ENOENT;
	FILE *f = fopen("/proc/self/maps", "r"), *out;
	int fd;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " [vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			break;
	fclose(f);
	if (!start || end <= start)
		return ret;
	/* a new file, private as the recording is (0600 whatever the umask), not through a link */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) || !(out = fdopen(fd, "w"))) {
		ret = -errno;
		close(fd);
		unlink(path);
		return ret;
	}
	ret = (int64_t)(end - start);
	if (fwrite((const void *)(uintptr_t)start, 1, end - start, out) != end - start)
		ret = -EIO;
	if (fclose(out) && ret >= 0)
		ret = -errno;
	if (ret < 0)
		unlink(path);
	return ret;
}
