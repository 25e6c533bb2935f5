// SPDX-License-Identifier: MIT
/*
 * An output file of `vperf export -o` and `vperf timeline -o` (profiler/util/outfile.c): private
 * (0600) under any umask, as perf.data is, and never written through a link left at its
 * temporary name; written whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bt2run.h"
#include "util/outfile.h"
#include "vtest.h"

struct od {
	char base[64];
	char file[128], tmp[160], victim[128];
};

static int od_setup(void **state)
{
	struct od *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->base, sizeof(t->base), "/tmp/vperf-outfile-XXXXXX");
	if (!mkdtemp(t->base))
		return -1;
	snprintf(t->file, sizeof(t->file), "%s/out.svg", t->base);
	snprintf(t->tmp, sizeof(t->tmp), "%s.tmp-%d", t->file, (int)getpid());
	snprintf(t->victim, sizeof(t->victim), "%s/victim", t->base);
	*state = t;
	return 0;
}

static int od_teardown(void **state)
{
	struct od *t = *state;
	int ret = vt_rmtree(t->base);

	free(t);
	return ret;
}

/* Under umask 0 the file is 0600, and holds what was written. */
static void outfile_is_private_under_umask_0(void **state)
{
	const struct od *t = *state;
	mode_t mask = umask(0);
	struct outfile o;
	struct stat st;
	char *text;
	int ret;

	ret = outfile_open(&o, "export", t->file);
	umask(mask);
	assert_int_equal(ret, 0);
	fputs("<svg/>\n", o.f);
	assert_int_equal(outfile_close(&o, 0), 0);
	assert_int_equal(stat(t->file, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = slurp(t->file);
	assert_string_equal(text, "<svg/>\n");
	free(text);
	assert_int_equal(access(t->tmp, F_OK), -1);

	/* a failed write leaves the file as it was */
	assert_int_equal(outfile_open(&o, "export", t->file), 0);
	fputs("half", o.f);
	assert_int_equal(outfile_close(&o, 1), 1);
	text = slurp(t->file);
	assert_string_equal(text, "<svg/>\n");
	free(text);
	assert_int_equal(access(t->tmp, F_OK), -1);
}

/* A link at the temporary name is refused, not written through: its target is untouched. */
static void outfile_never_writes_through_a_link(void **state)
{
	const struct od *t = *state;
	struct outfile o;
	char *text;
	FILE *f = fopen(t->victim, "w");

	assert_non_null(f);
	fputs("precious\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(symlink(t->victim, t->tmp), 0);
	assert_int_equal(outfile_open(&o, "export", t->file), 1);
	text = slurp(t->victim);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(access(t->file, F_OK), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(outfile_is_private_under_umask_0, od_setup,
						od_teardown),
		cmocka_unit_test_setup_teardown(outfile_never_writes_through_a_link, od_setup,
						od_teardown),
	};

	return VT_MAIN("outfile", tests, NULL, NULL);
}
