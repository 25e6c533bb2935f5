// SPDX-License-Identifier: MIT
/*
 * A guest's frames named in a `vperf vm record` recording: the guest module's MMAP records
 * (a user mapping, and where the guest kernel's text runs), a System.map of the guest kernel,
 * and the recording's files list (vm-run.sh --guest-files), converted here from a raw file and
 * read back by the reader: user frames through the ELF symbols of the host file the list names,
 * kernel frames through the symbols the converter wrote, moved by the kernel's random base.
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vperf/abi.h>
#include <vperf/rawrec.h>

#include "convert.h"
#include "rawrec_build.h"
#include "report.h"
#include "vtest.h"

#define MAP_SCHEDULE	0xffffffff81a00000ull	/* schedule in the System.map */
#define SLIDE		0x2000000ull		/* the guest kernel moved by this much */
#define USER_START	0x555555554000ull
#define GUEST_PID	50
#define MODULE_FN	0xffffffffc0002000ull	/* a guest module's function */

/* Known by its name in this executable's symbol table. */
int guest_symbols_known_function(int x);
__attribute__((noinline, used)) int guest_symbols_known_function(int x)
{
	return x * 3 + 1;
}

/* The offset in this executable's file of the function above (its PT_LOAD's mapping). */
static int fn_offset_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t *io = data, vaddr = io[0];

	(void)size;
	if (io[1])
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr && vaddr < p->p_vaddr + p->p_memsz) {
			io[1] = vaddr - p->p_vaddr + p->p_offset + 1;
			return 1;
		}
	}
	return 0;
}

static uint64_t fn_file_offset(void)
{
	Dl_info di;
	uint64_t io[2];

	assert_true(dladdr((void *)guest_symbols_known_function, &di));
	io[0] = (uint64_t)((uintptr_t)guest_symbols_known_function - (uintptr_t)di.dli_fbase);
	io[1] = 0;
	dl_iterate_phdr(fn_offset_cb, io);	/* the executable comes first */
	assert_true(io[1] > 0);
	return io[1] - 1;
}

static void put_mmap(unsigned char *buf, size_t *len, uint64_t tsc, uint32_t pid, uint64_t start,
		     uint64_t mlen, const char *name)
{
	struct vperf_trace_mmap *m = (void *)(buf + *len);
	size_t size = (sizeof(*m) + strlen(name) + 1 + 7) & ~(size_t)7;

	memset(m, 0, size);
	m->h.size = (uint16_t)size;
	m->h.type = VPERF_TRACE_MMAP;
	m->h.tsc = tsc;
	m->h.pid = pid;
	m->h.tid = pid;
	m->start = start;
	m->len = mlen;
	memcpy(m->filename, name, strlen(name));
	*len += size;
}

/* A trace sampler's sample (a period, no callchain) of pid at ip, appended to buf. */
static void put_sample(unsigned char *buf, size_t *len, uint64_t tsc, uint32_t pid, uint64_t ip,
		       bool user)
{
	struct vperf_trace_sample *r = (void *)(buf + *len);

	memset(r, 0, sizeof(*r) + 8);
	r->h.size = sizeof(*r) + 8;
	r->h.type = VPERF_TRACE_SAMPLE;
	r->h.tsc = tsc;
	r->h.pid = pid;
	r->h.tid = pid;
	r->h.flags = VPERF_TRACE_SAMPLE_PERIOD | (user ? VPERF_TRACE_SAMPLE_USER : 0);
	r->ip = ip;
	r->nr_counts = 1;
	r->data[0] = 1000000;
	*len += r->h.size;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The frame of sample i (its only one): its symbol (NULL: none found) and DSO. */
static void frame_is(struct vperf_report *r, size_t i, const char *sym, const char *dso)
{
	const struct vperf_report_frame *f;

	assert_int_equal(r->samples[i].nr_frames, 1);
	f = vperf_report__frame(r, r->samples[i].frame);
	if (sym)
		assert_string_equal(f->found ? f->sym : "(none)", sym);
	else
		assert_false(f->found);
	assert_string_equal(f->dso, dso);
}

/*
 * Samples: pid 50's user ip in the function above, through its mapping of
 * /payload/bin/<this test>; a guest kernel ip 0x10 into schedule, which runs SLIDE above the
 * System.map's address; a guest module's ip (above _etext: not the map's); pid 51's user ip (no
 * mapping).  Only schedule is written (the one symbol hit), and the list's directory
 * /payload/bin stands for this test's directory.
 */
static void guest_user_and_kernel_frames_are_named_through_mmaps_files_and_system_map(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = OFFSET0, .how = 1 };
	struct vperf_convert_opts opts = { .size = sizeof(opts) };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	char why[512] = "", exe[PATH_MAX], map[128], gpath[PATH_MAX + 16], list[2 * PATH_MAX + 64];
	char dir[PATH_MAX], gdir[256];
	struct vperf_report *r;
	unsigned char g[2048];
	size_t glen = 0;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uint64_t fo = fn_file_offset();
	struct stat sb;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(stat(exe, &sb), 0);
	snprintf(dir, sizeof(dir), "%s", exe);
	snprintf(gpath, sizeof(gpath), "/payload/bin/%s", basename(exe));
	snprintf(map, sizeof(map), "%s/System.map", t->base);
	write_file(map, "ffffffff81000000 T _text\n"
			"ffffffff81a00000 T schedule\n"
			"ffffffff81a00200 t io_schedule\n"
			"ffffffff81c00000 D some_data\n"
			"ffffffff81e00000 T _etext\n");

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_META, 0, "vmm_pid=1\nnr_vcpus=1\n", 21);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	put_mmap(g, &glen, START_TSC + 100 + OFFSET0, 0, MAP_SCHEDULE + SLIDE, 0,
		 VPERF_TRACE_MMAP_KERNEL "schedule");
	put_mmap(g, &glen, START_TSC + 200 + OFFSET0, GUEST_PID, USER_START, (uint64_t)sb.st_size,
		 gpath);
	put_sample(g, &glen, START_TSC + 300 + OFFSET0, GUEST_PID, USER_START + fo, true);
	put_sample(g, &glen, START_TSC + 400 + OFFSET0, GUEST_PID, MAP_SCHEDULE + SLIDE + 0x10, false);
	put_sample(g, &glen, START_TSC + 500 + OFFSET0, GUEST_PID, 0xffffffffc0001000ull, false);
	put_sample(g, &glen, START_TSC + 600 + OFFSET0, GUEST_PID + 1, USER_START + fo, true);
	/* the module's own symbols: one hit (its alias at the same address left out), one not */
	put_mmap(g, &glen, START_TSC + 650 + OFFSET0, 0, MODULE_FN, 0x100, "[vperf_guest]trace_drain");
	put_mmap(g, &glen, START_TSC + 651 + OFFSET0, 0, MODULE_FN, 0x100, "[vperf_guest]an_alias");
	put_mmap(g, &glen, START_TSC + 652 + OFFSET0, 0, MODULE_FN + 0x100, 0x80, "[vperf_guest]unhit");
	put_sample(g, &glen, START_TSC + 700 + OFFSET0, GUEST_PID, MODULE_FN + 0x20, false);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);

	opts.guest_kallsyms = map;
	if (vperf_convert(t->raw, t->trace, &opts, &st, why, sizeof(why)))
		fail_msg("vperf_convert: %s", why);
	assert_int_equal(st.guest_by_type[VPERF_TRACE_MMAP], 5);
	assert_int_equal(st.guest_ksyms, 2);		/* schedule, trace_drain */
	assert_int_equal(st.guest_module_syms, 1);
	assert_non_null(strstr(st.guest_ksyms_note, "1 symbols"));
	assert_non_null(strstr(st.guest_ksyms_note, "runs +0x2000000 from the map"));

	/* the files list where vm record keeps it: the directory stands for its files */
	snprintf(gdir, sizeof(gdir), "%s/.raw", t->trace);
	assert_int_equal(mkdir(gdir, 0755), 0);
	snprintf(gdir, sizeof(gdir), "%s/.raw/guest", t->trace);
	assert_int_equal(mkdir(gdir, 0755), 0);
	snprintf(list, sizeof(list), "/payload/bin\t%s\nnot absolute\tx\n", dirname(dir));
	snprintf(gdir, sizeof(gdir), "%s/.raw/guest/files", t->trace);
	write_file(gdir, list);

	if (vperf_report__open(t->trace, &r, why, sizeof(why)))
		fail_msg("vperf_report__open: %s", why);
	assert_int_equal(r->nr_samples, 5);
	assert_int_equal(r->nr_mmap_events, 1);		/* the kernel's text is not a mapping */
	assert_int_equal(r->nr_guest_files, 1);
	assert_true(r->have_gksyms);
	assert_false(r->have_ksyms);
	frame_is(r, 0, "guest_symbols_known_function", basename(exe));
	assert_int_equal(r->samples[0].layer, 3);	/* guest_user */
	frame_is(r, 1, "schedule", VPERF_REPORT_GUEST_KERNEL_DSO);
	assert_int_equal(r->samples[1].layer, 2);	/* guest_kernel */
	frame_is(r, 2, NULL, VPERF_REPORT_GUEST_KERNEL_DSO);
	frame_is(r, 3, NULL, VPERF_REPORT_UNKNOWN);
	frame_is(r, 4, "trace_drain", "[vperf_guest]");
	assert_int_equal(r->samples[4].layer, 2);
	assert_true(r->nr_unmapped == 1);

	/* a guest's path may not climb out of the directory the list maps it to */
	assert_null(vperf_report__guest_file(r, "/payload/bin/../../etc/passwd", gpath, sizeof(gpath)));
	assert_null(vperf_report__guest_file(r, "/payload/bin/..", gpath, sizeof(gpath)));
	assert_non_null(vperf_report__guest_file(r, "/payload/bin/..x", gpath, sizeof(gpath)));
	assert_null(vperf_report__guest_file(r, "/elsewhere/x", gpath, sizeof(gpath)));

	/* --guest-root: the guest's files under a directory that lacks this one */
	assert_int_equal(vperf_report__set_guest_root(r, t->base), 0);
	frame_is(r, 0, NULL, basename(exe));
	vperf_report__delete(r);
}

/* Without a map, or without the guest's word on where its kernel runs: no symbols, and why. */
static void guest_kernel_symbols_missing_say_why(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = OFFSET0, .how = 1 };
	struct vperf_convert_opts opts = { .size = sizeof(opts) };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	char why[512] = "", map[128];
	unsigned char g[512];
	size_t glen = 0;

	snprintf(map, sizeof(map), "%s/System.map", t->base);
	write_file(map, "ffffffff81a00000 T schedule\n");
	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_META, 0, "vmm_pid=1\nnr_vcpus=1\n", 21);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	put_sample(g, &glen, START_TSC + 400 + OFFSET0, GUEST_PID, MAP_SCHEDULE + 0x10, false);
	put_mmap(g, &glen, START_TSC + 450 + OFFSET0, 0, MODULE_FN, 0x100, "[vperf_guest]trace_drain");
	put_sample(g, &glen, START_TSC + 500 + OFFSET0, GUEST_PID, MODULE_FN + 0xff, false);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);

	/* a module's own symbols need no map */
	if (vperf_convert(t->raw, t->trace, NULL, &st, why, sizeof(why)))
		fail_msg("vperf_convert: %s", why);
	assert_int_equal(st.guest_ksyms, 1);
	assert_int_equal(st.guest_module_syms, 1);
	assert_non_null(strstr(st.guest_ksyms_note, "no symbol map"));
	assert_int_equal(vt_rmtree(t->trace), 0);

	opts.guest_kallsyms = map;
	if (vperf_convert(t->raw, t->trace, &opts, &st, why, sizeof(why)))
		fail_msg("vperf_convert: %s", why);
	assert_int_equal(st.guest_ksyms, 1);			/* the module's, still */
	assert_non_null(strstr(st.guest_ksyms_note, "did not say where its kernel text is"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		/* one line each: tests/unit/CMakeLists.txt finds each entry's name on its line */
		cmocka_unit_test_setup_teardown(guest_user_and_kernel_frames_are_named_through_mmaps_files_and_system_map, tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(guest_kernel_symbols_missing_say_why, tdir_setup, tdir_teardown),
	};

	return vt_main(argc, argv, "guest_symbols", tests, sizeof(tests) / sizeof(tests[0]), NULL,
		       NULL);
}
