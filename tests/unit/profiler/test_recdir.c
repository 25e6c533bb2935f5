// SPDX-License-Identifier: MIT
/*
 * -o DIR of `vperf record` and `vperf vm record` (profiler/util/recdir.c), as root may run them
 * in a directory others write to: only a vperf recording is renamed to DIR.old or removed, an
 * old recording is removed without following a link even when a directory in it is swapped for
 * one mid-way (the swap made by a wrapper of remove() and unlinkat(), as another user would),
 * another user's file stops the removal before anything is removed, and DIR is made 0700 under
 * any umask.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bt2run.h"
#include "util/recdir.h"
#include "vtest.h"

#define VPERF_META	"/* CTF 1.8 */\n\ntrace {\n};\n\nenv {\n\tvperf_version = \"0.1.0\";\n};\n"

struct rd {
	char base[64];
	char dir[128], old[128], victim[128];
};

static int rd_setup(void **state)
{
	struct rd *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->base, sizeof(t->base), "/tmp/vperf-recdir-XXXXXX");
	if (!mkdtemp(t->base))
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/rec", t->base);
	snprintf(t->old, sizeof(t->old), "%s/rec.old", t->base);
	snprintf(t->victim, sizeof(t->victim), "%s/victim", t->base);
	*state = t;
	return 0;
}

static int rd_teardown(void **state)
{
	struct rd *t = *state;
	int ret = vt_rmtree(t->base);

	free(t);
	return ret;
}

/* Write path (relative to the test's base when not absolute) with text. */
static void put(const struct rd *t, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->base, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void mk(const struct rd *t, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", t->base, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static bool exists(const struct rd *t, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", t->base, rel);
	return !lstat(path, &st);
}

/* recdir_prepare(dir), its message (stderr) kept in msg. */
static int prepare(const struct rd *t, const char *dir, char *msg, size_t len)
{
	char path[PATH_MAX];
	int saved = dup(2), fd, ret;
	char *text;

	snprintf(path, sizeof(path), "%s/stderr", t->base);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, 2), 2);
	ret = recdir_prepare("record", dir);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	close(fd);
	text = slurp(path);
	snprintf(msg, len, "%s", text);
	free(text);
	unlink(path);
	fprintf(stderr, "%s", msg);
	return ret;
}

/* ---- the attacker: a directory of DIR.old swapped for a link as its files are removed ---- */

static const struct rd *swap_test;	/* set: the next removal of f1 or f2 swaps rec.old/sub first */

static void swap_now(const char *name)
{
	char sub[PATH_MAX], moved[PATH_MAX];
	const char *b = strrchr(name, '/');

	b = b ? b + 1 : name;
	if (!swap_test || (strcmp(b, "f1") && strcmp(b, "f2")))
		return;
	snprintf(sub, sizeof(sub), "%s/sub", swap_test->old);
	snprintf(moved, sizeof(moved), "%s/sub.moved", swap_test->old);
	assert_int_equal(rename(sub, moved), 0);
	assert_int_equal(symlink(swap_test->victim, sub), 0);
	swap_test = NULL;
}

int __real_remove(const char *path);
int __wrap_remove(const char *path);
int __wrap_remove(const char *path)
{
	swap_now(path);
	return __real_remove(path);
}

int __real_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags);
int __wrap_unlinkat(int dirfd, const char *path, int flags)
{
	swap_now(path);
	return __real_unlinkat(dirfd, path, flags);
}

/*
 * DIR.old is an old recording of the caller's with a folder sub; another user swaps sub for a
 * link to a victim directory while its files are being removed.  The victim's files of the
 * same names are not removed, the removal stops and says why, and DIR is not renamed.
 */
static void old_swapped_for_a_link_mid_removal_leaves_the_victim_alone(void **state)
{
	struct rd *t = *state;
	char msg[1024];

	mk(t, "victim");
	put(t, "victim/f1", "precious 1\n");
	put(t, "victim/f2", "precious 2\n");
	mk(t, "rec");
	mk(t, "rec.old");
	put(t, "rec.old/metadata", VPERF_META);
	mk(t, "rec.old/sub");
	put(t, "rec.old/sub/f1", "old 1\n");
	put(t, "rec.old/sub/f2", "old 2\n");
	swap_test = t;
	assert_int_not_equal(prepare(t, t->dir, msg, sizeof(msg)), 0);
	assert_null(swap_test);			/* the swap happened */
	assert_true(exists(t, "victim/f1"));
	assert_true(exists(t, "victim/f2"));
	assert_true(exists(t, "rec"));
	assert_non_null(strstr(msg, "rec.old/sub was replaced while being removed"));
}

/* A DIR that is not a vperf recording is refused and left where it is. */
static void a_dir_that_is_not_a_recording_is_refused(void **state)
{
	struct rd *t = *state;
	char msg[1024];

	mk(t, "rec");
	put(t, "rec/precious", "mine\n");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_true(exists(t, "rec/precious"));
	assert_false(exists(t, "rec.old"));
	assert_non_null(strstr(msg, "/rec exists and is not a vperf recording"));

	/* metadata that is not vperf's, a .raw folder with something else in it: neither */
	put(t, "rec/metadata", "/* CTF 1.8 */\n\ntrace {\n};\n");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	mk(t, "rec/.raw");
	put(t, "rec/.raw/vmm.vraw", "VPERFRAW");
	put(t, "rec/.raw/notes", "x\n");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_true(exists(t, "rec/precious"));
	assert_false(exists(t, "rec.old"));

	/* a regular file, a link to a recording: not renamed either */
	assert_int_equal(vt_rmtree(t->dir), 0);
	put(t, "rec", "a file\n");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "(not a directory)"));
	assert_int_equal(unlink(t->dir), 0);
	mk(t, "elsewhere");
	assert_int_equal(symlink("elsewhere", t->dir), 0);
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "(a symbolic link)"));
	assert_false(exists(t, "rec.old"));
}

/* A DIR.old that is a file, or a link to a directory, is refused and kept, the link's target too. */
static void an_old_that_is_a_file_or_a_link_is_refused(void **state)
{
	struct rd *t = *state;
	char msg[1024];

	mk(t, "rec");
	put(t, "rec.old", "somebody's file\n");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_true(exists(t, "rec.old"));
	assert_non_null(strstr(msg, "rec.old exists and is not a vperf recording (not a directory)"));

	assert_int_equal(unlink(t->old), 0);
	mk(t, "victim");
	put(t, "victim/metadata", VPERF_META);	/* even one that looks like a recording */
	assert_int_equal(symlink(t->victim, t->old), 0);
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "(a symbolic link)"));
	assert_true(exists(t, "rec.old"));
	assert_true(exists(t, "victim/metadata"));
	assert_true(exists(t, "rec"));
}

/*
 * Under umask 0: a recording DIR becomes DIR.old, the older DIR.old recording (CTF and a vm
 * record's raw folder) is removed whole, and the new DIR is the caller's, mode 0700.
 */
static void an_older_recording_is_replaced_and_dir_is_private_under_umask_0(void **state)
{
	struct rd *t = *state;
	char msg[1024];
	struct stat st;
	mode_t mask = umask(0);

	mk(t, "rec");
	put(t, "rec/metadata", VPERF_META);
	put(t, "rec/host_kernel_cpu0", "");
	mk(t, "rec.old");
	put(t, "rec.old/metadata", VPERF_META);
	put(t, "rec.old/guest_kernel_cpu0", "x");
	put(t, "rec.old/.vdso.so", "x");
	mk(t, "rec.old/.raw");
	put(t, "rec.old/.raw/vmm.vraw", "VPERFRAW and more");
	mk(t, "rec.old/.raw/guest");
	put(t, "rec.old/.raw/guest/files", "/bin/x\t/usr/bin/x\n");
	for (int i = 0; i < 64; i++) {	/* enough entries that removing them while reading matters */
		char name[64];

		snprintf(name, sizeof(name), "rec.old/.raw/guest/f%02d", i);
		put(t, name, "");
	}
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 0);
	umask(mask);
	assert_true(exists(t, "rec.old/host_kernel_cpu0"));
	assert_false(exists(t, "rec.old/.raw"));
	assert_false(exists(t, "rec.old/guest_kernel_cpu0"));
	assert_int_equal(stat(t->dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, geteuid());
	assert_true(recdir_is_empty(t->dir));

	/* a vm record whose raw recording never came back (an empty .raw) is one too */
	assert_int_equal(vt_rmtree(t->dir), 0);
	mk(t, "rec");
	mk(t, "rec/.raw");
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 0);
	assert_true(exists(t, "rec.old/.raw"));
}

/* As root: a DIR.old with another user's file in it is refused before anything is removed. */
static void an_old_with_another_users_file_is_refused_whole(void **state)
{
	struct rd *t = *state;
	char msg[1024], path[PATH_MAX];

	if (geteuid())
		vt_skip("needs root, to give a file to another user");
	mk(t, "rec");
	mk(t, "rec.old");
	put(t, "rec.old/metadata", VPERF_META);
	put(t, "rec.old/a_stream", "");
	mk(t, "rec.old/z");
	put(t, "rec.old/z/theirs", "");
	snprintf(path, sizeof(path), "%s/z/theirs", t->old);
	assert_int_equal(lchown(path, 12345, 12345), 0);
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "rec.old/z/theirs is not yours"));
	assert_non_null(strstr(msg, "nothing was removed"));
	assert_true(exists(t, "rec.old/metadata"));
	assert_true(exists(t, "rec.old/a_stream"));
	assert_true(exists(t, "rec.old/z/theirs"));
	assert_true(exists(t, "rec"));

	/* DIR.old itself another user's: refused the same */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(lchown(t->old, 12345, 12345), 0);
	assert_int_equal(prepare(t, t->dir, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "belongs to uid 12345"));
	assert_true(exists(t, "rec.old/metadata"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(old_swapped_for_a_link_mid_removal_leaves_the_victim_alone,
						rd_setup, rd_teardown),
		cmocka_unit_test_setup_teardown(a_dir_that_is_not_a_recording_is_refused, rd_setup,
						rd_teardown),
		cmocka_unit_test_setup_teardown(an_old_that_is_a_file_or_a_link_is_refused, rd_setup,
						rd_teardown),
		cmocka_unit_test_setup_teardown(an_older_recording_is_replaced_and_dir_is_private_under_umask_0,
						rd_setup, rd_teardown),
		cmocka_unit_test_setup_teardown(an_old_with_another_users_file_is_refused_whole,
						rd_setup, rd_teardown),
	};

	return VT_MAIN("recdir", tests, NULL, NULL);
}
