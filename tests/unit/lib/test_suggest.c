/* SPDX-License-Identifier: MIT */
/*
 * Close-name suggestions for misspelt events: vperf__edit_distance() known
 * answers and vperf__suggest() on names libpfm4 knows on every x86 host.
 */
#include <string.h>
#include <strings.h>
#include <stdlib.h>

#include "internal.h"
#include "vtest.h"

static void edit_distance_known_answers(void **state)
{
	static char long_a[301];
	static const struct {
		int line;
		const char *a, *b;
		int d;
	} cases[] = {
		{ __LINE__, "", "", 0 },
		{ __LINE__, "abc", "", 3 },
		{ __LINE__, "", "abc", 3 },
		{ __LINE__, "abc", "abc", 0 },
		{ __LINE__, "kitten", "sitting", 3 },
		{ __LINE__, "flaw", "lawn", 2 },
		{ __LINE__, "instrctions", "instructions", 1 },	/* deletion */
		{ __LINE__, "task-clok", "task-clock", 1 },
		{ __LINE__, "cycels", "cycles", 2 },		/* transposition: 2 */
		{ __LINE__, "Task-Clock", "task-clock", 0 },	/* case-insensitive */
		{ __LINE__, "INSTRUCTIONS", "instructions", 0 },
		{ __LINE__, "cs", "context-switches", 14 },
		{ __LINE__, long_a, "", 255 },			/* capped */
		{ __LINE__, "", long_a, 255 },
	};
	int errors = 0;

	memset(long_a, 'a', 300);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int d = vperf__edit_distance(cases[i].a, cases[i].b);

		if (d != cases[i].d) {
			print_error("%s:%d: edit_distance(\"%.20s\", \"%.20s\") = %d, "
				    "expected %d\n", __FILE__, cases[i].line,
				    cases[i].a, cases[i].b, d, cases[i].d);
			errors++;
		}
	}
	assert_int_equal(errors, 0);
}

static void edit_distance_is_symmetric(void **state)
{
	static const char *const w[] = {
		"", "a", "task-clock", "cpu-clock", "context-switches", "cs",
		"instructions", "INST_RETIRED:ANY_P", "cycles:u",
	};
	size_t n = sizeof(w) / sizeof(w[0]);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			assert_int_equal(vperf__edit_distance(w[i], w[j]),
					 vperf__edit_distance(w[j], w[i]));
}

/* Is want among out[0..n): exactly, or as "<pmu>::want", case-insensitive. */
static int found(char out[][VPERF_NAME_LEN], int n, const char *want)
{
	for (int i = 0; i < n; i++) {
		const char *p = strstr(out[i], "::");
		const char *bare = p ? p + 2 : out[i];

		if (!strcasecmp(out[i], want) || !strcasecmp(bare, want))
			return i;
	}
	return -1;
}

static void print_suggestions(const char *name, char out[][VPERF_NAME_LEN], int n)
{
	printf("suggest(\"%s\") -> %d:", name, n);
	for (int i = 0; i < n; i++)
		printf(" \"%s\"", out[i]);
	printf("\n");
}

static void suggest_instrctions_includes_instructions(void **state)
{
	char out[8][VPERF_NAME_LEN];
	int n = vperf__suggest("instrctions", out, 8);

	print_suggestions("instrctions", out, n);
	assert_in_range(n, 1, 8);
	assert_true(found(out, n, "instructions") >= 0);
}

static void suggest_task_clok_includes_task_clock(void **state)
{
	char out[8][VPERF_NAME_LEN];
	int n = vperf__suggest("task-clok", out, 8);

	print_suggestions("task-clok", out, n);
	assert_in_range(n, 1, 8);
	assert_true(found(out, n, "task-clock") >= 0);
}

/* At most max, best first: distances never decrease along the list. */
static void suggest_respects_max_and_orders_best_first(void **state)
{
	char out[8][VPERF_NAME_LEN];
	char one[1][VPERF_NAME_LEN];
	int n, d_prev = -1;

	memset(out, 0, sizeof(out));
	n = vperf__suggest("cycels", out, 8);
	print_suggestions("cycels", out, n);
	assert_in_range(n, 1, 8);
	for (int i = 0; i < n; i++) {
		const char *p = strstr(out[i], "::");
		/* compare what a person would type: without the pmu:: prefix */
		int d = vperf__edit_distance("cycels", p ? p + 2 : out[i]);
		int d_full = vperf__edit_distance("cycels", out[i]);

		if (d_full < d)
			d = d_full;
		assert_true(d >= d_prev);
		d_prev = d;
	}
	assert_int_equal(vperf__suggest("cycels", one, 1), 1);
	assert_string_equal(one[0], out[0]);
	/* max 0: nothing written, nothing returned */
	assert_int_equal(vperf__suggest("cycels", one, 0), 0);
}

/* Every virtualization event the walk lists resolves by its name. */
static int virt_resolves(const struct vperf_event_info *ev, void *arg)
{
	int *n = arg;

	if (ev->kind != VPERF_EVENT_VIRT || !vperf__virt_event(ev->name)) {
		print_error("%s:%d: listed \"%s\" (kind %d) does not resolve\n", __FILE__,
			    __LINE__, ev->name, ev->kind);
		return -1;
	}
	(*n)++;
	return 0;
}

static void virt_event_names_resolve_and_suggest(void **state)
{
	char out[4][VPERF_NAME_LEN];
	int n = 0, k;

	assert_int_equal(vperf__virt_for_each(virt_resolves, &n, 0), 0);
	assert_true(n > 0);
	assert_non_null(vperf__virt_event("vperf::exits:io"));
	assert_non_null(vperf__virt_event("VPERF::EXITS:IO"));	/* case-insensitive */
	assert_null(vperf__virt_event("vperf::no-such-event"));
	assert_null(vperf__virt_event("exits:io"));		/* the prefix is the name */
	k = vperf__virt_suggest("vperf::exit:io", out, 4);
	print_suggestions("vperf::exit:io", out, k);
	assert_in_range(k, 1, 4);
	assert_true(found(out, k, "vperf::exits:io") >= 0);
}

static int setup(void **state)
{
	return vperf__pfm_init() ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(edit_distance_known_answers),
		cmocka_unit_test(edit_distance_is_symmetric),
		cmocka_unit_test(suggest_instrctions_includes_instructions),
		cmocka_unit_test(suggest_task_clok_includes_task_clock),
		cmocka_unit_test(suggest_respects_max_and_orders_best_first),
		cmocka_unit_test(virt_event_names_resolve_and_suggest),
	};

	unsetenv("LIBPFM_FORCE_PMU");
	return VT_MAIN("suggest", tests, setup, NULL);
}
