// SPDX-License-Identifier: MIT
/*
 * The kernel symbol map reader (profiler/record/ksyms.c) that `vperf record` (host kallsyms)
 * and the converter (the guest's System.map or kallsyms) share: known answers on a small map
 * with aliases, a module, data symbols, junk lines and the gap after _etext.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksyms.h"
#include "vtest.h"

/* Out of order on purpose: the reader sorts. */
static const char map[] =
	"ffffffff81000200 T second\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t first\n"
	"ffffffff81000100 T first_alias\n"
	"ffffffff81000300 D some_data\n"
	"not a symbol line\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff81000380 W weak_last\n"
	"\n"
	"ffffffff82000000 T init_fn\n"
	"ffffffffc0000000 t kvm_fn\t[kvm]\n"
	"ffffffffc0000100 t kvm_fn2\t[kvm]\n"
	"ffffffff81000050\n"
	"xyz T bad_address\n";

static char path[64];

static int map_setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/vt-ksyms-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, map, sizeof(map) - 1) != (ssize_t)(sizeof(map) - 1))
		return -1;
	return close(fd);
}

static int map_teardown(void **state)
{
	(void)state;
	return unlink(path);
}

static const char *name_at(const struct vperf_ksyms *k, uint64_t a)
{
	const struct vperf_ksym *s = vperf_ksyms__find(k, a);

	return s ? s->name : "(none)";
}

static void ksyms_text_symbols_found_by_address_with_sizes_and_the_etext_gap(void **state)
{
	struct vperf_ksyms k;
	const struct vperf_ksym *s;
	uint64_t a = 0;

	(void)state;
	assert_int_equal(vperf_ksyms__read(&k, path, VPERF_KSYMS_TEXT_ONLY), 0);
	/* _stext first first_alias second weak_last init_fn kvm_fn kvm_fn2: some_data and the
	 * _etext mark left out */
	assert_int_equal(k.nr, 8);
	assert_true(k.text_end == 0xffffffff81000400ull);
	assert_string_equal(name_at(&k, 0xffffffff80ffffffull), "(none)");
	assert_string_equal(name_at(&k, 0xffffffff81000000ull), "_stext");
	/* aliases: the map's first name at the address */
	assert_string_equal(name_at(&k, 0xffffffff81000100ull), "first");
	assert_string_equal(name_at(&k, 0xffffffff810001ffull), "first");
	/* the data symbol at 0x300 is no boundary of a text-only map */
	assert_string_equal(name_at(&k, 0xffffffff81000310ull), "second");
	assert_string_equal(name_at(&k, 0xffffffff810003ffull), "weak_last");
	/* from _etext to the next symbol: no kernel text */
	assert_string_equal(name_at(&k, 0xffffffff81000400ull), "(none)");
	assert_string_equal(name_at(&k, 0xffffffff81ffffffull), "(none)");
	assert_string_equal(name_at(&k, 0xffffffff82000010ull), "init_fn");
	s = vperf_ksyms__find(&k, 0xffffffffc0000010ull);
	assert_non_null(s);
	assert_string_equal(s->name, "kvm_fn");
	assert_string_equal(s->module, "[kvm]");
	assert_string_equal(vperf_ksyms__find(&k, 0xffffffff81000000ull)->module, "");

	s = vperf_ksyms__find(&k, 0xffffffff81000100ull);
	assert_int_equal(vperf_ksyms__size(&k, s), 0x100);		/* to second, past the alias */
	s = vperf_ksyms__find(&k, 0xffffffff81000380ull);
	assert_int_equal(vperf_ksyms__size(&k, s), 0x80);		/* to _etext */
	s = vperf_ksyms__find(&k, 0xffffffffc0000100ull);
	assert_int_equal(vperf_ksyms__size(&k, s), 0);			/* the last */

	assert_int_equal(vperf_ksyms__addr(&k, "second", &a), 0);
	assert_true(a == 0xffffffff81000200ull);
	assert_int_equal(vperf_ksyms__addr(&k, "kvm_fn", &a), -ENOENT);	/* a module's */
	assert_int_equal(vperf_ksyms__addr(&k, "some_data", &a), -ENOENT);	/* not text */
	vperf_ksyms__exit(&k);
}

static void ksyms_flags_leave_out_modules_or_keep_data_symbols(void **state)
{
	struct vperf_ksyms k;

	(void)state;
	assert_int_equal(vperf_ksyms__read(&k, path, VPERF_KSYMS_TEXT_ONLY | VPERF_KSYMS_NO_MODULES), 0);
	assert_int_equal(k.nr, 6);
	assert_string_equal(name_at(&k, 0xffffffffc0000010ull), "init_fn");	/* no module symbols */
	vperf_ksyms__exit(&k);

	/* all types: a data symbol bounds the one before it */
	assert_int_equal(vperf_ksyms__read(&k, path, 0), 0);
	assert_int_equal(k.nr, 9);
	assert_string_equal(name_at(&k, 0xffffffff81000310ull), "some_data");
	assert_int_equal(vperf_ksyms__size(&k, vperf_ksyms__find(&k, 0xffffffff81000200ull)), 0x100);
	vperf_ksyms__exit(&k);
}

static void ksyms_missing_or_empty_map_is_an_error_or_empty(void **state)
{
	struct vperf_ksyms k;
	char empty[] = "/tmp/vt-ksyms-empty-XXXXXX";
	int fd;

	(void)state;
	assert_int_equal(vperf_ksyms__read(&k, "/nonexistent/System.map", 0), -ENOENT);
	vperf_ksyms__exit(&k);	/* freeing after an error is allowed */
	fd = mkstemp(empty);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(vperf_ksyms__read(&k, empty, 0), 0);
	assert_int_equal(k.nr, 0);
	assert_null(vperf_ksyms__find(&k, 0xffffffff81000000ull));
	vperf_ksyms__exit(&k);
	unlink(empty);
}

/*
 * `vperf record`'s copy of its vDSO (vperf_vdso__save()): 0600 under umask 0, as the recording's
 * other files, and never written through a link at its name (its target untouched).
 */
static void vdso_image_is_a_new_private_file(void **state)
{
	char dir[] = "/tmp/vt-vdso-XXXXXX", file[64], victim[64], buf[16] = "";
	struct stat st;
	mode_t mask;
	int64_t n;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/.vdso.so", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	mask = umask(0);
	n = vperf_vdso__save(file);
	umask(mask);
	if (n == -ENOENT) {
		rmdir(dir);
		vt_skip("this process has no vDSO mapped");
	}
	assert_true(n > 0);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, n);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(unlink(file), 0);

	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(symlink(victim, file), 0);
	assert_int_equal(vperf_vdso__save(file), -EEXIST);
	f = fopen(victim, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "precious");
	unlink(file);
	unlink(victim);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		/* one line each: tests/unit/CMakeLists.txt finds each entry's name on its line */
		cmocka_unit_test(ksyms_text_symbols_found_by_address_with_sizes_and_the_etext_gap),
		cmocka_unit_test(ksyms_flags_leave_out_modules_or_keep_data_symbols),
		cmocka_unit_test(ksyms_missing_or_empty_map_is_an_error_or_empty),
		cmocka_unit_test(vdso_image_is_a_new_private_file),
	};

	return vt_main(argc, argv, "ksyms", tests, sizeof(tests) / sizeof(tests[0]), map_setup,
		       map_teardown);
}
