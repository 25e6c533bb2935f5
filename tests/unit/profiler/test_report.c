// SPDX-License-Identifier: MIT
/*
 * vperf report's pieces with known answers (profiler/report, profiler/export): symbol tables
 * sorted and searched, this test's own functions found in its own ELF file through the file
 * offset of their mapping, a recording written here with the CTF writer read back (address
 * spaces through mmap, fork and exec, thread names, kernel symbols, losses), histograms of a
 * recording built in memory, and the folded and pprof encoders' exact output for it (the pprof
 * profile gunzipped and decoded back).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ctf.h"
#include "export.h"
#include "profile.pb-c.h"
#include "report.h"
#include "vtest.h"
#include "bt2run.h"

/* ---- symbols ---- */

static void syms_sorted_sized_to_the_next_and_found_by_address(void **state)
{
	struct vperf_report_sym s[] = {
		{ 0x3000, 0x10, "c", NULL },
		{ 0x1000, 0, "a", NULL },	/* no size: up to b */
		{ 0x2000, 0x800, "b", NULL },
		{ 0x1000, 0x20, "a_sized", NULL },	/* one address: the sized one kept */
		{ 0x2400, 0x2000, "overlaps", NULL },	/* runs past c: cut at c */
	};
	size_t n;

	(void)state;
	n = vperf_report_syms_sort(s, 5);
	assert_int_equal(n, 4);
	assert_string_equal(s[0].name, "a_sized");
	assert_int_equal(s[0].size, 0x20);
	assert_string_equal(s[1].name, "b");
	assert_int_equal(s[1].size, 0x400);	/* 0x800 overlapped "overlaps" */
	assert_string_equal(s[2].name, "overlaps");
	assert_int_equal(s[2].size, 0xc00);
	assert_string_equal(s[3].name, "c");
	assert_null(vperf_report_sym_find(s, n, 0xfff));
	assert_string_equal(vperf_report_sym_find(s, n, 0x1000)->name, "a_sized");
	assert_string_equal(vperf_report_sym_find(s, n, 0x101f)->name, "a_sized");
	assert_null(vperf_report_sym_find(s, n, 0x1020));	/* between a and b */
	assert_string_equal(vperf_report_sym_find(s, n, 0x23ff)->name, "b");
	assert_string_equal(vperf_report_sym_find(s, n, 0x2400)->name, "overlaps");
	assert_string_equal(vperf_report_sym_find(s, n, 0x300f)->name, "c");
	assert_null(vperf_report_sym_find(s, n, 0x3010));
	assert_null(vperf_report_sym_find(s, 0, 0x3000));
}

__attribute__((noinline)) int report_known_function(int x);
__attribute__((noinline)) int report_known_function(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

/* The file offset of addr in this process's mapping of /proc/self/exe. */
static uint64_t self_offset(uintptr_t addr)
{
	char exe[4096], line[4096 + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t off = UINT64_MAX;

	assert_true(n > 0);
	exe[n] = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, pgoff;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &pgoff, &pos) < 3 ||
		    !pos)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (addr >= lo && addr < hi && !strcmp(line + pos, exe))
			off = addr - lo + pgoff;
	}
	fclose(f);
	assert_true(off != UINT64_MAX);
	return off;
}

/* This test's executable: its path, not /proc/self/exe (a link, which the loader refuses). */
static void self_exe(char *exe, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", exe, len - 1);

	assert_true(n > 0);
	exe[n] = '\0';
}

/*
 * The PLT's entries are named NAME@plt, as binutils' objdump names them (the reader we check
 * against): every entry objdump shows in this test's .plt and .plt.sec, at its address.
 */
static void elf_plt_entries_are_named_as_objdump_names_them(void **state)
{
	struct vperf_report_elf e;
	char exe[4096], cmd[4200], line[512];
	unsigned long long addr;
	char name[256];
	size_t seen = 0;
	FILE *f;

	(void)state;
	self_exe(exe, sizeof(exe));
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' 2>/dev/null", exe);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(vperf_report_elf__load(&e, exe), 0);
	while (fgets(line, sizeof(line), f)) {
		const struct vperf_report_sym *s;

		/* "0000000000008030 <malloc@plt>:" */
		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2 || !strstr(name, "@plt") ||
		    strpbrk(name, "+-"))
			continue;	/* "malloc@plt-0x10": PLT0, the resolver's, no function's */
		s = vperf_report_sym_find(e.syms, e.nr_syms, addr + 4);
		if (!s || strcmp(s->name, name) || s->addr != addr)
			fail_msg("objdump's %s at 0x%llx: ours %s at 0x%llx", name, addr,
				 s ? s->name : "(none)", s ? (unsigned long long)s->addr : 0ull);
		seen++;
	}
	if (pclose(f) || !seen)
		vt_skip("objdump (binutils) did not list this test's PLT: nothing to check "
			"against");
	assert_true(seen > 10);	/* this test calls dozens of functions through it */
	vperf_report_elf__exit(&e);
}

static void elf_symbols_of_this_test_name_its_own_function(void **state)
{
	struct vperf_report_elf e;
	uintptr_t fn = (uintptr_t)report_known_function;
	const struct vperf_report_sym *s;
	uint64_t vaddr;
	char path[64], exe[4096];
	FILE *f;

	(void)state;
	assert_int_equal(report_known_function(1), 4);
	self_exe(exe, sizeof(exe));
	assert_int_equal(vperf_report_elf__load(&e, exe), 0);
	assert_true(e.nr_syms > 10);
	assert_true(e.nr_segs >= 2);
	/* the function's first byte and one inside it */
	for (uintptr_t a = fn; a <= fn + 1; a++) {
		assert_true(vperf_report_elf__vaddr(&e, self_offset(a), &vaddr));
		s = vperf_report_sym_find(e.syms, e.nr_syms, vaddr);
		assert_non_null(s);
		assert_string_equal(s->name, "report_known_function");
	}
	/* and another one */
	assert_true(vperf_report_elf__vaddr(&e, self_offset((uintptr_t)self_offset), &vaddr));
	assert_string_equal(vperf_report_sym_find(e.syms, e.nr_syms, vaddr)->name, "self_offset");
	vperf_report_elf__exit(&e);

	assert_int_equal(vperf_report_elf__load(&e, "/nonexistent/file"), -ENOENT);
	vperf_report_elf__exit(&e);
	snprintf(path, sizeof(path), "/tmp/vperf-report-test-%d", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	assert_int_equal(vperf_report_elf__load(&e, path), -ENOEXEC);
	assert_string_equal(e.path, path);
	vperf_report_elf__exit(&e);
	unlink(path);
}

/* ---- files a recording names ---- */

static void hung(int sig)
{
	static const char msg[] = "FAIL: opening a file a recording names did not return\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/*
 * A recording may name any path: a FIFO (opening it to read would wait for a writer forever),
 * /dev/zero (endless), a directory, a symbolic link.  Each is refused at once, only a regular
 * file is read.
 */
static void elf_loader_refuses_what_is_not_a_regular_file_at_once(void **state)
{
	struct vperf_report_elf e;
	char dir[64], fifo[96], link[96], exe[4096];

	(void)state;
	self_exe(exe, sizeof(exe));
	snprintf(dir, sizeof(dir), "/tmp/vperf-report-files-%d", (int)getpid());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(exe, link), 0);
	signal(SIGALRM, hung);
	alarm(10);
	assert_int_equal(vperf_report_elf__load(&e, fifo), -EINVAL);
	vperf_report_elf__exit(&e);
	assert_int_equal(vperf_report_elf__load(&e, "/dev/zero"), -EINVAL);
	vperf_report_elf__exit(&e);
	assert_int_equal(vperf_report_elf__load(&e, dir), -EISDIR);
	vperf_report_elf__exit(&e);
	assert_int_equal(vperf_report_elf__load(&e, link), -ELOOP);
	vperf_report_elf__exit(&e);
	assert_int_equal(vperf_report_elf__load(&e, "/proc/self/exe"), -ELOOP);
	vperf_report_elf__exit(&e);
	assert_int_equal(vperf_report_elf__load(&e, exe), 0);
	vperf_report_elf__exit(&e);
	/* under a root: the same, and its name is the two joined */
	assert_int_equal(vperf_report_elf__load_in(&e, dir, "/fifo"), -EINVAL);
	assert_string_equal(e.path, fifo);
	vperf_report_elf__exit(&e);
	alarm(0);
	assert_int_equal(vt_rmtree(dir), 0);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
}

#define PLACE_BASE	0x400000ull	/* where each guest mapping starts */

struct place {
	int line;
	const char *guest_path;
	bool found;
};

/* Resolve one frame in a guest mapping of each path: found, or not, as each place says. */
static void check_places(struct vperf_report *r, const struct place *p, size_t n, uint64_t off)
{
	r->maps = calloc(n, sizeof(*r->maps));
	r->frames = calloc(n, sizeof(*r->frames));
	assert_true(r->maps && r->frames);
	for (size_t i = 0; i < n; i++) {
		r->maps[i] = (struct vperf_report_map){ .start = PLACE_BASE, .len = 1ull << 30,
							.guest = true, .elf = -1,
							.file = strdup(p[i].guest_path) };
		r->frames[i] = (struct vperf_report_frame){ .ip = PLACE_BASE + off,
							    .map = (int32_t)i,
							    .guest = true };
	}
	r->nr_maps = r->nr_frames = n;
	for (size_t i = 0; i < n; i++) {
		const struct vperf_report_frame *f = vperf_report__frame(r, i);

		if (f->found != p[i].found)
			fail_msg("%s:%d: %s was %sfound", __FILE__, p[i].line, p[i].guest_path,
				 f->found ? "" : "not ");
		if (f->found)
			assert_string_equal(f->sym, "report_known_function");
	}
	for (size_t i = 0; i < n; i++)
		free(r->maps[i].file);
	free(r->maps);
	free(r->frames);
	r->maps = NULL;
	r->frames = NULL;
	r->nr_maps = r->nr_frames = 0;
}

/*
 * A guest's files are read under --guest-root, or under the directory the files list maps them
 * to: their paths and every link on the way resolve there as if it were "/" (an absolute link is
 * the guest's own), never out of it.
 */
static void guest_files_resolve_inside_their_root_only(void **state)
{
	const uint64_t off = self_offset((uintptr_t)report_known_function);
	const struct place under_root[] = {
		{ __LINE__, "/usr/lib/copy", true },
		{ __LINE__, "/lib/copy", true },	/* lib -> /usr/lib: the guest's */
		{ __LINE__, "/bin/out", false },	/* -> this test, outside: root/<it> */
		{ __LINE__, "/bin/up", false },		/* ../../.. stops at the root */
		{ __LINE__, "/lib/../usr/lib/copy", false },	/* a guest's ".." is refused */
	};
	const struct place listed[] = {
		{ __LINE__, "/payload/real", true },
		{ __LINE__, "/payload/esc/real", true },	/* esc -> /: the directory itself */
		{ __LINE__, "/payload/outside", false },	/* -> this test's file */
	};
	char base[64], d[256], exe[4096], up[4096 + 64];
	struct vperf_report *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	self_exe(exe, sizeof(exe));
	snprintf(base, sizeof(base), "/tmp/vperf-report-root-%d", (int)getpid());
	assert_int_equal(mkdir(base, 0700), 0);
	snprintf(d, sizeof(d), "%s/root", base);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/root/usr", base);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/root/usr/lib", base);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/root/bin", base);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/root/usr/lib/copy", base);
	copy_file(exe, d);
	snprintf(d, sizeof(d), "%s/root/lib", base);
	assert_int_equal(symlink("/usr/lib", d), 0);
	snprintf(d, sizeof(d), "%s/root/bin/out", base);
	assert_int_equal(symlink(exe, d), 0);
	snprintf(up, sizeof(up), "../../../../../../../../../..%s", exe);
	snprintf(d, sizeof(d), "%s/root/bin/up", base);
	assert_int_equal(symlink(up, d), 0);
	snprintf(d, sizeof(d), "%s/list", base);
	assert_int_equal(mkdir(d, 0700), 0);
	snprintf(d, sizeof(d), "%s/list/real", base);
	copy_file(exe, d);
	snprintf(d, sizeof(d), "%s/list/esc", base);
	assert_int_equal(symlink("/", d), 0);
	snprintf(d, sizeof(d), "%s/list/outside", base);
	assert_int_equal(symlink(exe, d), 0);

	r->dir = strdup(base);
	snprintf(d, sizeof(d), "%s/root", base);
	assert_int_equal(vperf_report__set_guest_root(r, d), 0);
	check_places(r, under_root, sizeof(under_root) / sizeof(under_root[0]), off);

	free(r->guest_root);
	r->guest_root = NULL;
	r->guest_files = calloc(2, sizeof(*r->guest_files));
	assert_non_null(r->guest_files);
	r->guest_files[0] = strdup("/payload");
	snprintf(d, sizeof(d), "%s/list", base);
	r->guest_files[1] = strdup(d);
	r->nr_guest_files = 1;
	check_places(r, listed, sizeof(listed) / sizeof(listed[0]), off);
	vperf_report__delete(r);
	assert_int_equal(vt_rmtree(base), 0);
}

/* ---- a recording written with the CTF writer, read back ---- */

#include "schema.h"
#include "schema_v0.h"

#define BASE	0x400000ull	/* where the "recording" mapped this test's file */

static void sample(struct vperf_ctf_stream *s, uint64_t ts, uint32_t pid, uint32_t tid,
		   uint64_t ip, const uint64_t *chain, size_t n)
{
	uint64_t period = 1000;

	assert_int_equal(vperf_ev__sample(s, ts, &(struct vperf_ev_sample){
		.ip = ip, .user = vperf_ctf_stream__layer(s) == VPERF_CTF_HOST_USER, .pid = pid,
		.tid = tid, .counts = &period, .nr_counts = 1,
		.counts_are = VPERF_COUNTS_ARE_PERIOD, .callchain = chain, .nr_callchain = n }), 0);
}

/* The same sample as vperf 0.1.0 wrote it (schema 0). */
static void sample_v0(struct vperf_ctf_stream *s, uint64_t ts, uint32_t pid, uint32_t tid,
		      uint64_t ip, const uint64_t *chain, size_t n)
{
	uint64_t period = 1000;
	struct vperf_ctf_value v[5] = {
		VPERF_CTF_U64(ip), VPERF_CTF_U32(pid), VPERF_CTF_U32(tid),
		VPERF_CTF_SEQ(&period, 1), VPERF_CTF_SEQ(chain ? chain : &ip, chain ? n : 0),
	};

	assert_int_equal(vperf_ctf__emit(s, V0_SAMPLE, ts, v, 5), 0);
}

/* write_recording()'s events of schema 1, through the schema's emitters. */
static void write_events(struct vperf_ctf *ctf, struct vperf_ctf_stream *k,
			 struct vperf_ctf_stream *u, const char *exe, uint64_t fn_off)
{
	uint64_t chain[2] = { BASE + fn_off, BASE + fn_off + 1 };
	const struct vperf_ev_process_exec ex = { .pid = 100, .tid = 100, .comm = "app" };

	assert_int_equal(vperf_ev__process_exec(k, 10, &ex), 0);
	assert_int_equal(vperf_ev__mmap(k, 20, &(struct vperf_ev_mmap){
		.pid = 100, .tid = 100, .start = BASE, .len = 1ull << 30, .prot = 5,
		.filename = exe }), 0);
	assert_int_equal(vperf_ev__comm(k, 30, &(struct vperf_ev_comm){
		.pid = 100, .tid = 101, .comm = "worker" }), 0);
	sample(u, 40, 100, 100, BASE + fn_off, chain, 2);	/* app: the function */
	sample(u, 50, 100, 101, BASE + fn_off, NULL, 0);	/* worker's name */
	assert_int_equal(vperf_ev__process_fork(k, 60, &(struct vperf_ev_process_fork){
		.parent_pid = 100, .parent_tid = 100, .child_pid = 200, .child_tid = 200 }), 0);
	sample(u, 70, 200, 200, BASE + fn_off, NULL, 0);	/* the child: a copy */
	sample(k, 75, 200, 200, 0xffffffff81000010ull, NULL, 0);	/* kernel */
	assert_int_equal(vperf_ev__process_exec(k, 80, &ex), 0);
	sample(u, 90, 100, 100, BASE + fn_off, NULL, 0);	/* after exec: unmapped */
	assert_int_equal(vperf_ctf__lost(k, 95, 3), 0);
	/* a module's symbol, then the kernel image's (module ""): an empty string after a
	 * non-empty one, which babeltrace2 2.0.4 reads as the non-empty one */
	for (int i = 0; i < 100; i++)	/* (it shows on the events babeltrace2 recycles) */
		assert_int_equal(vperf_ev__kernel_symbol(k, 100, &(struct vperf_ev_kernel_symbol){
			.addr = 0xffffffffc0000000ull, .size = 0x100, .name = "modfunc",
			.module = "[kvm]" }), 0);
	assert_int_equal(vperf_ev__kernel_symbol(k, 100, &(struct vperf_ev_kernel_symbol){
		.addr = 0xffffffff81000000ull, .size = 0x100, .name = "kfunc" }), 0);
	(void)ctf;
}

/* The same events as vperf 0.1.0 wrote them: its classes, no schema_version. */
static void write_events_v0(struct vperf_ctf *ctf, struct vperf_ctf_stream *k,
			    struct vperf_ctf_stream *u, const char *exe, uint64_t fn_off)
{
	uint64_t chain[2] = { BASE + fn_off, BASE + fn_off + 1 };
	struct vperf_ctf_value ex[3] = { VPERF_CTF_U32(100), VPERF_CTF_U32(100),
					 VPERF_CTF_STR("app") };
	struct vperf_ctf_value mm[7] = { VPERF_CTF_U32(100), VPERF_CTF_U32(100),
					 VPERF_CTF_U64(BASE), VPERF_CTF_U64(1ull << 30),
					 VPERF_CTF_U64(0), VPERF_CTF_U32(5), VPERF_CTF_STR(exe) };
	struct vperf_ctf_value cm[3] = { VPERF_CTF_U32(100), VPERF_CTF_U32(101),
					 VPERF_CTF_STR("worker") };
	struct vperf_ctf_value fk[4] = { VPERF_CTF_U32(100), VPERF_CTF_U32(100),
					 VPERF_CTF_U32(200), VPERF_CTF_U32(200) };
	struct vperf_ctf_value ks[4] = { VPERF_CTF_U64(0xffffffff81000000ull),
					 VPERF_CTF_U64(0x100), VPERF_CTF_STR("kfunc"),
					 VPERF_CTF_STR("") };
	struct vperf_ctf_value km[4] = { VPERF_CTF_U64(0xffffffffc0000000ull),
					 VPERF_CTF_U64(0x100), VPERF_CTF_STR("modfunc"),
					 VPERF_CTF_STR("[kvm]") };

	assert_int_equal(vperf_ctf__emit(k, V0_PROCESS_EXEC, 10, ex, 3), 0);
	assert_int_equal(vperf_ctf__emit(k, V0_MMAP, 20, mm, 7), 0);
	assert_int_equal(vperf_ctf__emit(k, V0_COMM, 30, cm, 3), 0);
	sample_v0(u, 40, 100, 100, BASE + fn_off, chain, 2);
	sample_v0(u, 50, 100, 101, BASE + fn_off, NULL, 0);
	assert_int_equal(vperf_ctf__emit(k, V0_PROCESS_FORK, 60, fk, 4), 0);
	sample_v0(u, 70, 200, 200, BASE + fn_off, NULL, 0);
	sample_v0(k, 75, 200, 200, 0xffffffff81000010ull, NULL, 0);
	assert_int_equal(vperf_ctf__emit(k, V0_PROCESS_EXEC, 80, ex, 3), 0);
	sample_v0(u, 90, 100, 100, BASE + fn_off, NULL, 0);
	assert_int_equal(vperf_ctf__lost(k, 95, 3), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(vperf_ctf__emit(k, V0_KSYM, 100, km, 4), 0);
	assert_int_equal(vperf_ctf__emit(k, V0_KSYM, 100, ks, 4), 0);
	(void)ctf;
}

static void write_recording(const char *dir, const char *exe, uint64_t fn_off, bool v0)
{
	struct vperf_schema sch;
	struct vperf_ctf_env env[] = { { "events", "cpu-clock", false },
				       { "callchains", "1", false }, VPERF_SCHEMA_ENV };
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "t", .env = env,
					.nr_env = v0 ? 2 : 3,
					.classes = v0 ? v0_classes : sch.classes,
					.nr_classes = v0 ? V0_NR : VPERF_EV_NR };
	struct vperf_ctf *ctf;
	struct vperf_ctf_stream *k, *u;
	char why[256];

	vperf_schema__init(&sch, NULL, 0);
	assert_int_equal(vperf_ctf__new(dir, &cfg, &ctf, why, sizeof(why)), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 0, &k), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_USER, 1, &u), 0);
	(v0 ? write_events_v0 : write_events)(ctf, k, u, exe, fn_off);
	assert_int_equal(vperf_ctf__flush(ctf), 0);
	vperf_ctf__delete(ctf);
}

/* The known recording (of schema 0, or 1) reads back as written. */
static void check_known_recording(bool v0)
{
	char dir[64], exe[4096], why[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct vperf_report *r;
	const struct vperf_report_frame *f;

	assert_true(n > 0);
	exe[n] = 0;
	snprintf(dir, sizeof(dir), "/tmp/vperf-report-rec-%d", (int)getpid());
	write_recording(dir, exe, self_offset((uintptr_t)report_known_function), v0);
	assert_int_equal(vperf_report__open(dir, &r, why, sizeof(why)), 0);
	assert_int_equal(r->nr_samples, 5);
	assert_int_equal(r->nr_events, 1);
	assert_string_equal(r->events[0], "cpu-clock");
	assert_true(r->callchains);
	assert_true(r->have_ksyms);
	assert_int_equal(r->lost, 3);
	/* the exec's timeline event names the program: its comm, where no file was written */
	for (size_t i = 0; i < r->nr_tlevs; i++)
		if (r->tlevs[i].kind == VPERF_REPORT_EV_EXEC)
			assert_string_equal(r->strings[r->tlevs[i].str], "app");
	/* in time order: app's sample through its mapping, its chain's return address too */
	assert_int_equal(r->samples[0].ts, 40);
	assert_int_equal(r->samples[0].layer, VPERF_CTF_HOST_USER);
	assert_int_equal(r->samples[0].cpu, 1);
	assert_int_equal(r->samples[0].period, 1000);
	assert_string_equal(r->strings[r->samples[0].comm], "app");
	assert_int_equal(r->samples[0].nr_frames, 2);
	f = vperf_report__frame(r, r->samples[0].frame);
	assert_true(f->found);
	assert_string_equal(f->sym, "report_known_function");
	assert_string_equal(f->dso, strrchr(exe, '/') + 1);
	f = vperf_report__frame(r, r->samples[0].frame + 1);
	assert_true(f->ret);
	assert_string_equal(f->sym, "report_known_function");	/* ip - 1: still in it */
	assert_string_equal(r->strings[r->samples[1].comm], "worker");
	/* the forked child: its parent's mappings and name */
	assert_int_equal(r->samples[2].pid, 200);
	assert_string_equal(vperf_report__frame(r, r->samples[2].frame)->sym,
			    "report_known_function");
	assert_string_equal(r->strings[r->samples[2].comm], "app");
	/* the kernel sample, named by a kernel_symbol written after it; the kernel image's DSO
	 * although a module's symbol came just before it */
	f = vperf_report__frame(r, r->samples[3].frame);
	assert_true(f->kernel);
	assert_string_equal(f->sym, "kfunc");
	assert_string_equal(f->dso, VPERF_REPORT_KERNEL_DSO);
	/* after the exec: the old mappings are gone */
	f = vperf_report__frame(r, r->samples[4].frame);
	assert_false(f->found);
	assert_int_equal(f->map, -1);
	assert_string_equal(f->dso, VPERF_REPORT_UNKNOWN);
	assert_int_equal(r->nr_unmapped, 1);
	vperf_report__delete(r);
	assert_int_equal(vt_rmtree(dir), 0);
}

static void reader_follows_mmap_fork_exec_comm_and_kernel_symbols(void **state)
{
	(void)state;
	check_known_recording(false);
}

/* A recording of vperf 0.1.0's classes (no schema_version) reads as its schema-1 twin. */
static void reader_reads_a_schema_0_recording_as_its_schema_1_twin(void **state)
{
	(void)state;
	check_known_recording(true);
}

/* A recording of schema 1 (or newer) that is not what the schema says: refused, saying why. */
static void reader_refuses_a_recording_not_of_its_schema_saying_why(void **state)
{
	static const struct vperf_ctf_field_desc short_sample[] = {
		{ .name = "ip", .type = VPERF_CTF_TYPE_U64 },	/* and nothing else */
	};
	static const struct vperf_ctf_field_desc str_ip[] = {
		{ .name = "ip", .type = VPERF_CTF_TYPE_STRING },
	};
	static const struct vperf_ctf_class_desc cls_short[] = { { "sample", short_sample, 1 } };
	static const struct vperf_ctf_class_desc cls_str[] = { { "comm", str_ip, 1 } };
	static const struct {
		const char *version;
		const struct vperf_ctf_class_desc *cls;
		int err;
		const char *why;
	} cases[] = {
		{ "1", cls_short, -EINVAL,
		  "its sample events have no field user, which schema 1 has" },
		{ "1", cls_str, -EINVAL, "its comm events have no field pid" },
		{ "2", cls_short, -EPROTO,
		  "its schema_version is not one this vperf reads (0 to 1)" },
		{ "-1", cls_short, -EPROTO, "its schema_version is not one" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vperf_ctf_env env[] = { { "schema_version", cases[i].version, true } };
		struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "t", .env = env,
						.nr_env = 1, .classes = cases[i].cls,
						.nr_classes = 1 };
		struct vperf_ctf_value v[] = { VPERF_CTF_U64(0x1000) };
		struct vperf_ctf_value vs[] = { VPERF_CTF_STR("x") };
		struct vperf_ctf_stream *k;
		struct vperf_report *r = NULL;
		struct vperf_ctf *ctf;
		char dir[64], why[512];

		snprintf(dir, sizeof(dir), "/tmp/vperf-report-schema-%d", (int)getpid());
		assert_int_equal(vperf_ctf__new(dir, &cfg, &ctf, why, sizeof(why)), 0);
		assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 0, &k), 0);
		assert_int_equal(vperf_ctf__emit(k, 0, 10, cases[i].cls == cls_str ? vs : v, 1), 0);
		assert_int_equal(vperf_ctf__flush(ctf), 0);
		vperf_ctf__delete(ctf);
		assert_int_equal(vperf_report__open(dir, &r, why, sizeof(why)), cases[i].err);
		assert_null(r);
		if (!strstr(why, "not a recording this vperf reads: ") ||
		    !strstr(why, cases[i].why))
			fail_msg("case %zu: the reason \"%s\" does not say \"%s\"", i, why,
				 cases[i].why);
		assert_int_equal(vt_rmtree(dir), 0);
	}
}

/* An address space: a newer mapping covers what older ones had where it lies, nothing else. */
static void address_space_newest_mapping_wins_where_it_lies(void **state)
{
	struct vperf_report_amap a = { .rng = 42 }, b = { .rng = 7 };
	static const struct { int line; uint64_t addr; int32_t map; } want[] = {
		{ __LINE__, 0x0fff, 3 }, { __LINE__, 0x1000, 3 }, { __LINE__, 0x11ff, 3 },
		{ __LINE__, 0x1200, 0 }, { __LINE__, 0x17ff, 0 },	/* 0, before 1 */
		{ __LINE__, 0x1800, 1 }, { __LINE__, 0x1fff, 1 },	/* 1, inside 0 */
		{ __LINE__, 0x2000, 0 }, { __LINE__, 0x27ff, 0 },	/* 0, after 1 */
		{ __LINE__, 0x2800, 2 }, { __LINE__, 0x3fff, 2 },	/* 2 over 0's end */
		{ __LINE__, 0x4000, -1 }, { __LINE__, 0x5000, 5 }, { __LINE__, 0x5fff, 5 },
		{ __LINE__, 0x6000, -1 }, { __LINE__, UINT64_MAX - 1, 6 },
	};

	(void)state;
	assert_int_equal(vperf_report_amap__find(&a, 0x1000), -1);
	assert_int_equal(vperf_report_amap__add(&a, 0x1000, 0x2000, 0), 0);
	assert_int_equal(vperf_report_amap__add(&a, 0x1800, 0x800, 1), 0);
	assert_int_equal(vperf_report_amap__add(&a, 0x2800, 0x1800, 2), 0);
	assert_int_equal(vperf_report_amap__add(&a, 0x0, 0x1200, 3), 0);
	assert_int_equal(vperf_report_amap__add(&a, 0x5000, 0x1000, 4), 0);
	assert_int_equal(vperf_report_amap__add(&a, 0x5000, 0x1000, 5), 0);	/* the same again */
	assert_int_equal(vperf_report_amap__add(&a, 0x7000, 0, 9), 0);		/* nothing */
	/* past the end of the address space: up to it */
	assert_int_equal(vperf_report_amap__add(&a, UINT64_MAX - 0x10, 0x100, 6), 0);
	assert_int_equal(vperf_report_amap__copy(&b, &a), 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (vperf_report_amap__find(&a, want[i].addr) != want[i].map ||
		    vperf_report_amap__find(&b, want[i].addr) != want[i].map)
			fail_msg("%s:%d: 0x%llx is in %d, the copy's %d; expected %d", __FILE__,
				 want[i].line, (unsigned long long)want[i].addr,
				 vperf_report_amap__find(&a, want[i].addr),
				 vperf_report_amap__find(&b, want[i].addr), want[i].map);
	}
	vperf_report_amap__exit(&a);
	assert_int_equal(vperf_report_amap__find(&b, 0x1800), 1);	/* the copy is its own */
	vperf_report_amap__exit(&b);
}

/* ---- a recording of many names, threads, processes and mappings ---- */

#define MANY_BASE	0x10000000ull	/* process 1's mappings, one page each, from here */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A recording of n of each: threads named by comm events (n distinct names), markers (n more
 * names), processes with one mapping each and a sample of their thread in it, and mappings of one
 * process (process 1) with a sample in each, taken after all of them were made (a newer one
 * covering part of an older one).
 */
static void write_many(const char *dir, uint32_t n)
{
	struct vperf_schema sch;
	struct vperf_ctf_env env[] = { { "events", "cpu-clock", false }, VPERF_SCHEMA_ENV };
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "t", .env = env,
					.nr_env = 2, .classes = sch.classes,
					.nr_classes = VPERF_EV_NR };
	struct vperf_ctf *ctf;
	struct vperf_ctf_stream *k;
	uint64_t ts = 1;
	char why[256], name[64], file[64];

	vperf_schema__init(&sch, NULL, 0);
	assert_int_equal(vperf_ctf__new(dir, &cfg, &ctf, why, sizeof(why)), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_USER, 0, &k), 0);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "thread-%u", i);
		assert_int_equal(vperf_ev__comm(k, ts++, &(struct vperf_ev_comm){
			.pid = 1000 + i, .tid = 1000 + i, .comm = name }), 0);
		snprintf(name, sizeof(name), "marker-%u", i);
		assert_int_equal(vperf_ev__marker(k, ts++, &(struct vperf_ev_marker){
			.name = name, .value = i, .kind = 2 }), 0);
		snprintf(file, sizeof(file), "/nonexistent/lib%u.so", i);
		assert_int_equal(vperf_ev__mmap(k, ts++, &(struct vperf_ev_mmap){
			.pid = 1000 + i, .tid = 1000 + i, .start = BASE, .len = 0x1000, .prot = 5,
			.filename = file }), 0);
		sample(k, ts++, 1000 + i, 1000 + i, BASE + 0x10, NULL, 0);
		assert_int_equal(vperf_ev__mmap(k, ts++, &(struct vperf_ev_mmap){
			.pid = 1, .tid = 1, .start = MANY_BASE + (uint64_t)i * 0x1000,
			.len = i % 2 ? 0x800 : 0x1000, .prot = 5, .filename = file }), 0);
		if (i % 4096 == 4095)	/* as a recorder does: the writer's queue stays short */
			assert_int_equal(vperf_ctf__flush(ctf), 0);
	}
	for (uint32_t i = 0; i < n; i++)	/* each mapping of process 1, its last byte */
		sample(k, ts++, 1, 1, MANY_BASE + (uint64_t)i * 0x1000 + 0xfff, NULL, 0);
	assert_int_equal(vperf_ctf__flush(ctf), 0);
	vperf_ctf__delete(ctf);
}

/* Write and read back write_many(n), every frame resolved: seconds reading (*write: writing). */
static double load_many(uint32_t n, double *write)
{
	char dir[64], why[256];
	struct vperf_report *r;
	double t0 = now_s(), t1;

	snprintf(dir, sizeof(dir), "/tmp/vperf-report-many-%d", (int)getpid());
	write_many(dir, n);
	t1 = now_s();
	*write = t1 - t0;
	if (vperf_report__open(dir, &r, why, sizeof(why)))
		fail_msg("vperf_report__open: %s", why);
	for (size_t i = 0; i < r->nr_frames; i++)
		vperf_report__frame(r, i);
	t0 = now_s() - t1;
	/* the answers: every name, thread and mapping apart, each sample in its own mapping */
	assert_int_equal(r->nr_samples, 2 * (size_t)n);
	assert_int_equal(r->nr_threads, (size_t)n + 1);
	assert_int_equal(r->nr_strings, 2 * (size_t)n + 1);	/* and ":1" */
	assert_int_equal(r->nr_maps, 2 * (size_t)n);
	assert_int_equal(r->nr_elfs, (size_t)n);		/* one per file, tried once */
	for (uint32_t i = 0; i < n; i += 997) {
		const struct vperf_report_sample *s = &r->samples[i];

		assert_int_equal(s->tid, 1000 + i);
		assert_string_equal(r->strings[s->comm], (snprintf(why, sizeof(why),
							    "thread-%u", i), why));
		assert_int_equal(r->frames[s->frame].map, 2 * (int32_t)i);
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct vperf_report_frame *f = &r->frames[r->samples[n + i].frame];

		/* odd mappings are half a page: their last byte is in no mapping */
		assert_int_equal(f->map, i % 2 ? -1 : 2 * (int32_t)i + 1);
	}
	vperf_report__delete(r);
	assert_int_equal(vt_rmtree(dir), 0);
	return t0;
}

/*
 * A recording with many names, threads, processes and mappings loads in time that grows with
 * them, not with their square: a benchmark that prints how long n and n / 10 of each take
 * (linear: about 10 times as long; quadratic: about 100).  It checks the answers, not the times.
 */
static void reader_scales_to_many_names_threads_and_mappings(void **state)
{
	const uint32_t n = 100000;
	double w_small, w_big, small, big;

	(void)state;
	small = load_many(n / 10, &w_small);
	big = load_many(n, &w_big);
	printf("reader: %u each of thread names, markers, processes and process 1's mappings "
	       "(%u events): read and resolved in %.3f s (written in %.3f s)\n", n, 6 * n, big,
	       w_big);
	printf("reader: %u each: %.3f s (written in %.3f s); %ux the recording took %.1fx as "
	       "long to read (linear: ~%u, quadratic: ~%u)\n", n / 10, small, w_small, 10,
	       small > 0 ? big / small : 0.0, 10, 100);
}

static void sort_keys_parse_and_refuse_unknown_ones(void **state)
{
	enum vperf_report_key k[8];
	size_t n;
	char why[160];

	(void)state;
	assert_int_equal(vperf_report_keys_parse("comm,dso,symbol", k, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(k[0], VPERF_REPORT_KEY_COMM);
	assert_int_equal(k[2], VPERF_REPORT_KEY_SYMBOL);
	assert_int_equal(vperf_report_keys_parse("thread,layer", k, 8, &n, why, sizeof(why)), 0);
	assert_int_equal(k[0], VPERF_REPORT_KEY_TID);
	assert_int_equal(k[1], VPERF_REPORT_KEY_LAYER);
	assert_int_equal(vperf_report_keys_parse("symbol,sym", k, 8, &n, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "unknown sort key 'sym'"));
	assert_int_equal(vperf_report_keys_parse("", k, 8, &n, why, sizeof(why)), -EINVAL);
}

/* ---- a recording built here ---- */

/*
 * Process "app" (pid 10, tids 10 and 11) on cpu-clock, period 1000 each:
 *   5 samples  main -> hot_a			tid 10
 *   2 samples  main -> hot_b			tid 10
 *   1 sample   main -> hot_b -> sys_read [k]	tid 11
 *   2 samples  main -> [unknown] in libx.so	tid 11
 * leaf first in the frames, as the reader keeps them.
 */
struct frame_def {
	const char *sym, *dso;
	bool kernel;
};

static const struct frame_def F_MAIN = { "main", "app", false };
static const struct frame_def F_A = { "hot_a", "app", false };
static const struct frame_def F_B = { "hot_b", "app", false };
static const struct frame_def F_K = { "sys_read", VPERF_REPORT_KERNEL_DSO, true };
static const struct frame_def F_U = { NULL, "libx.so", false };

static void add(struct vperf_report *r, uint32_t tid, const struct frame_def *const *f, size_t n,
		unsigned int times)
{
	for (unsigned int t = 0; t < times; t++) {
		struct vperf_report_sample *s = &r->samples[r->nr_samples++];

		*s = (struct vperf_report_sample){ .ts = 1000 * r->nr_samples, .period = 1000,
						   .pid = 10, .tid = tid, .layer = 4,
						   .frame = r->nr_frames, .nr_frames = n };
		for (size_t i = 0; i < n; i++) {
			struct vperf_report_frame *fr = &r->frames[r->nr_frames++];

			*fr = (struct vperf_report_frame){ .ip = 0x1000 + i, .map = -1,
							   .kernel = f[i]->kernel, .resolved = true,
							   .found = f[i]->sym != NULL,
							   .sym = f[i]->sym ? f[i]->sym :
								  VPERF_REPORT_UNKNOWN,
							   .dso = f[i]->dso };
		}
	}
}

static struct vperf_report *known_report(void)
{
	struct vperf_report *r = calloc(1, sizeof(*r));
	const struct frame_def *a[] = { &F_A, &F_MAIN }, *b[] = { &F_B, &F_MAIN };
	const struct frame_def *k[] = { &F_K, &F_B, &F_MAIN }, *u[] = { &F_U, &F_MAIN };

	assert_non_null(r);
	r->samples = calloc(16, sizeof(*r->samples));
	r->frames = calloc(64, sizeof(*r->frames));
	r->strings = calloc(1, sizeof(*r->strings));
	r->events = calloc(1, sizeof(*r->events));
	assert_true(r->samples && r->frames && r->strings && r->events);
	r->strings[0] = strdup("app");
	r->nr_strings = 1;
	r->events[0] = strdup("cpu-clock");
	r->nr_events = 1;
	add(r, 10, a, 2, 5);
	add(r, 10, b, 2, 2);
	add(r, 11, k, 3, 1);
	add(r, 11, u, 2, 2);
	return r;
}

static void hist_by_symbol_sorts_by_period_and_counts_the_unresolved(void **state)
{
	struct vperf_report *r = known_report();
	enum vperf_report_key keys[] = { VPERF_REPORT_KEY_SYMBOL };
	enum vperf_report_key tk[] = { VPERF_REPORT_KEY_TID };
	struct vperf_report_hist h;

	(void)state;
	assert_int_equal(vperf_report_hist__build(r, 0, keys, 1, true, &h), 0);
	assert_int_equal(h.samples, 10);
	assert_int_equal(h.period, 10000);
	assert_int_equal(h.unresolved, 2);
	assert_int_equal(h.nr_rows, 4);
	assert_string_equal(h.rows[0].key[0], "hot_a");
	assert_int_equal(h.rows[0].samples, 5);
	assert_string_equal(h.rows[1].key[0], "[unknown]");
	assert_string_equal(h.rows[1].dso, "libx.so");
	assert_int_equal(h.rows[1].samples, 2);
	assert_string_equal(h.rows[2].key[0], "hot_b");
	assert_string_equal(h.rows[3].key[0], "sys_read");
	assert_true(h.rows[3].kernel);
	assert_int_equal(h.rows[0].nr_chains, 1);
	assert_int_equal(h.rows[0].chains[0].samples, 5);
	vperf_report_hist__exit(&h);

	assert_int_equal(vperf_report_hist__build(r, 0, tk, 1, false, &h), 0);
	/*
	 * by tid alone a row is a tid, whatever DSOs its samples landed in: tid 10's 7 samples (all
	 * in app), tid 11's 3 (the kernel's and libx.so's)
	 */
	assert_int_equal(h.nr_rows, 2);
	assert_string_equal(h.rows[0].key[0], "10");
	assert_int_equal(h.rows[0].samples, 7);
	assert_int_equal(h.rows[0].nr_chains, 0);
	assert_string_equal(h.rows[1].key[0], "11");
	assert_int_equal(h.rows[1].samples, 3);
	vperf_report_hist__exit(&h);
	vperf_report__delete(r);
}

/*
 * Children (perf report --children): a row for every function on a stack, with the period of
 * every sample it is on, counted once per sample however often it recurses; Self stays the
 * sampled function's.  main is on all 10 samples (Self 0), hot_b under sys_read's sample too,
 * hot_a recursing in an 11th sample once.
 */
static void hist_children_count_each_function_on_a_stack_once_callers_first(void **state)
{
	struct vperf_report *r = known_report();
	const struct frame_def *rec[] = { &F_A, &F_A, &F_MAIN };
	enum vperf_report_key keys[] = { VPERF_REPORT_KEY_COMM, VPERF_REPORT_KEY_SYMBOL };
	enum vperf_report_key tk[] = { VPERF_REPORT_KEY_TID };
	struct vperf_report_hist h;

	(void)state;
	add(r, 10, rec, 3, 1);
	assert_int_equal(vperf_report_hist__build(r, 0, keys, 2, VPERF_HIST_CHILDREN, &h), 0);
	assert_true(h.children);
	assert_int_equal(h.samples, 11);
	assert_int_equal(h.nr_rows, 5);
	assert_string_equal(h.rows[0].key[1], "main");		/* most Children first */
	assert_int_equal(h.rows[0].children_samples, 11);
	assert_int_equal(h.rows[0].children_period, 11000);
	assert_int_equal(h.rows[0].samples, 0);
	assert_string_equal(h.rows[1].key[1], "hot_a");
	assert_int_equal(h.rows[1].children_samples, 6);	/* the recursion once */
	assert_int_equal(h.rows[1].samples, 6);
	assert_string_equal(h.rows[2].key[1], "hot_b");
	assert_int_equal(h.rows[2].children_samples, 3);
	assert_int_equal(h.rows[2].samples, 2);
	assert_string_equal(h.rows[3].key[1], "[unknown]");
	assert_string_equal(h.rows[3].dso, "libx.so");
	assert_int_equal(h.rows[3].children_samples, 2);
	assert_string_equal(h.rows[4].key[1], "sys_read");
	assert_true(h.rows[4].kernel);
	assert_int_equal(h.rows[4].children_samples, 1);
	for (size_t i = 0; i < h.nr_rows; i++)
		assert_string_equal(h.rows[i].key[0], "app");
	vperf_report_hist__exit(&h);

	/* no symbol key: nothing to call, Children is Self */
	assert_int_equal(vperf_report_hist__build(r, 0, tk, 1, VPERF_HIST_CHILDREN, &h), 0);
	assert_false(h.children);
	assert_int_equal(h.nr_rows, 2);
	assert_int_equal(h.rows[0].children_period, h.rows[0].period);
	vperf_report_hist__exit(&h);
	vperf_report__delete(r);
}

static char *folded_of(struct vperf_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	char why[160];
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(vperf_export_folded(r, 0, f, why, sizeof(why)), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void folded_known_stacks_root_first_with_counts(void **state)
{
	struct vperf_report *r = known_report();
	char *out = folded_of(r);

	(void)state;
	printf("%s", out);
	assert_string_equal(out,
			    "app;main;hot_a 5\n"
			    "app;main;[unknown] in libx.so 2\n"
			    "app;main;hot_b 2\n"
			    "app;main;hot_b;sys_read_[k] 1\n");
	free(out);
	vperf_report__delete(r);
}

/* gunzip, then protobuf-c's own decoder. */
static Vperf__Pprof__Profile *pprof_of(struct vperf_report *r)
{
	char *gz = NULL, why[160];
	size_t len = 0;
	FILE *f = open_memstream(&gz, &len);
	static uint8_t raw[1 << 20];
	z_stream z = { 0 };
	Vperf__Pprof__Profile *p;

	assert_non_null(f);
	assert_int_equal(vperf_export_pprof(r, 0, f, why, sizeof(why)), 0);
	assert_int_equal(fclose(f), 0);
	assert_true(len > 18 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = sizeof(raw);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	p = vperf__pprof__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(gz);
	assert_non_null(p);
	return p;
}

static const char *fn_name(const Vperf__Pprof__Profile *p, uint64_t loc_id)
{
	for (size_t i = 0; i < p->n_location; i++) {
		if (p->location[i]->id != loc_id)
			continue;
		assert_int_equal(p->location[i]->n_line, 1);
		for (size_t j = 0; j < p->n_function; j++)
			if (p->function[j]->id == p->location[i]->line[0]->function_id)
				return p->string_table[p->function[j]->name];
	}
	fail_msg("no location %llu", (unsigned long long)loc_id);
	return NULL;
}

static void pprof_known_profile_decodes_back(void **state)
{
	struct vperf_report *r = known_report();
	Vperf__Pprof__Profile *p = pprof_of(r);
	int64_t samples = 0, period = 0;
	bool seen_k = false;

	(void)state;
	assert_string_equal(p->string_table[0], "");
	assert_int_equal(p->n_sample_type, 2);
	assert_string_equal(p->string_table[p->sample_type[0]->type], "samples");
	assert_string_equal(p->string_table[p->sample_type[0]->unit], "count");
	assert_string_equal(p->string_table[p->sample_type[1]->type], "cpu-clock");
	assert_string_equal(p->string_table[p->sample_type[1]->unit], "nanoseconds");
	assert_string_equal(p->string_table[p->default_sample_type], "cpu-clock");
	assert_int_equal(p->period, 1000);
	assert_int_equal(p->duration_nanos, 9000);
	/* hot_a, main, hot_b, sys_read, [unknown] in libx.so: one function and location each */
	assert_int_equal(p->n_function, 5);
	assert_int_equal(p->n_location, 5);
	/* per (comm, tid, pid, stack): tid 10 two stacks, tid 11 two */
	assert_int_equal(p->n_sample, 4);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Vperf__Pprof__Sample *s = p->sample[i];

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[1], 1000 * s->value[0]);
		samples += s->value[0];
		period += s->value[1];
		assert_int_equal(s->n_label, 3);
		assert_string_equal(p->string_table[s->label[0]->key], "comm");
		assert_string_equal(p->string_table[s->label[0]->str], "app");
		assert_string_equal(p->string_table[s->label[1]->key], "tid");
		assert_string_equal(fn_name(p, s->location_id[s->n_location_id - 1]), "main");
		if (!strcmp(fn_name(p, s->location_id[0]), "hot_a")) {
			assert_int_equal(s->value[0], 5);
			assert_int_equal(s->label[1]->num, 10);
			assert_int_equal(s->n_location_id, 2);
		}
		if (!strcmp(fn_name(p, s->location_id[0]), "sys_read")) {
			seen_k = true;
			assert_int_equal(s->n_location_id, 3);
			assert_string_equal(fn_name(p, s->location_id[1]), "hot_b");
			assert_int_equal(s->label[1]->num, 11);
		}
	}
	assert_true(seen_k);
	assert_int_equal(samples, 10);
	assert_int_equal(period, 10000);
	vperf__pprof__profile__free_unpacked(p, NULL);
	vperf_report__delete(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(syms_sorted_sized_to_the_next_and_found_by_address),
		cmocka_unit_test(elf_symbols_of_this_test_name_its_own_function),
		cmocka_unit_test(elf_plt_entries_are_named_as_objdump_names_them),
		cmocka_unit_test(elf_loader_refuses_what_is_not_a_regular_file_at_once),
		cmocka_unit_test(guest_files_resolve_inside_their_root_only),
		cmocka_unit_test(reader_follows_mmap_fork_exec_comm_and_kernel_symbols),
		cmocka_unit_test(reader_reads_a_schema_0_recording_as_its_schema_1_twin),
		cmocka_unit_test(reader_refuses_a_recording_not_of_its_schema_saying_why),
		cmocka_unit_test(address_space_newest_mapping_wins_where_it_lies),
		cmocka_unit_test(reader_scales_to_many_names_threads_and_mappings),
		cmocka_unit_test(sort_keys_parse_and_refuse_unknown_ones),
		cmocka_unit_test(hist_by_symbol_sorts_by_period_and_counts_the_unresolved),
		cmocka_unit_test(hist_children_count_each_function_on_a_stack_once_callers_first),
		cmocka_unit_test(folded_known_stacks_root_first_with_counts),
		cmocka_unit_test(pprof_known_profile_decodes_back),
	};

	return vt_main(argc, argv, "report", tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
