// SPDX-License-Identifier: MIT
/*
 * vperf list [pattern]: the events of the PMUs libpfm4 detects, the
 * kernel's software events and the virtualization events of the pv
 * backend, each marked usable or not on this host (the library opens each
 * one briefly to find out).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#include "util/strutil.h"

#define NAME_COLUMN 48

struct list_opts {
	bool desc, usable;
};

static const char *const list_synopsis[] = {
	"vperf list [-d] [-u] [<pattern>]",
	NULL,
};

#define T struct list_opts
static const struct cli_option list_options[] = {
	CLI_OPT_FLAG(T, 'd', "desc", desc, "show each event's description"),
	CLI_OPT_FLAG(T, 'u', "usable", usable, "only the events that can be counted here"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage list_usage = {
	.cmd = "list",
	.synopsis = list_synopsis,
	.summary = "List the events vperf knows, by section, marked usable or "
		   "not on this host.\n"
		   " <pattern> keeps the events whose name contains it or "
		   "matches it as a glob,\n ignoring case (e.g. 'clock', "
		   "'*miss*').",
	.opts = list_options,
	.nr_opts = sizeof(list_options) / sizeof(list_options[0]),
	.permute = true,
};

struct list_event {
	char *pmu, *name, *desc, *why, *umasks;
	enum vperf_event_kind kind;
	int usable;
};

struct list_ctx {
	const char *pattern;
	bool usable_only;
	struct list_event *v;
	size_t n, cap;
	bool nomem;
};

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static void list_event__exit(struct list_event *e)
{
	free(e->pmu);
	free(e->name);
	free(e->desc);
	free(e->why);
	free(e->umasks);
}

/* Called by the library for each event; keeps copies of those wanted. */
static int collect(const struct vperf_event_info *ev, void *arg)
{
	struct list_ctx *ctx = arg;
	struct list_event *e;

	if (!ev->name || !str_match_pattern(ctx->pattern, ev->name))
		return 0;
	if (ctx->usable_only && !ev->usable)
		return 0;
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? 2 * ctx->cap : 256;
		struct list_event *v = realloc(ctx->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		ctx->v = v;
		ctx->cap = cap;
	}
	e = &ctx->v[ctx->n];
	e->pmu = dup_or_empty(ev->pmu);
	e->name = dup_or_empty(ev->name);
	e->desc = dup_or_empty(ev->desc);
	e->why = dup_or_empty(ev->why);
	e->umasks = dup_or_empty(ev->umasks);
	e->kind = ev->kind;
	e->usable = ev->usable;
	if (!e->pmu || !e->name || !e->desc || !e->why || !e->umasks) {
		list_event__exit(e);
		goto nomem;
	}
	ctx->n++;
	return 0;
nomem:
	ctx->nomem = true;
	return -ENOMEM;
}

/*
 * The library's reasons are whole sentences with advice, the same for
 * every event of a PMU ("event 'cycles' needs a hardware PMU and this
 * host has none (...): use a software event ...").  Each line gets the
 * short reason ("needs a hardware PMU and this host has none"); the full
 * one is printed once per section (or per event with -d).
 */
/* why without the leading "event 'NAME' " or "bad event 'NAME': ". */
static const char *why_body(const struct list_event *e)
{
	const char *w = *e->why ? e->why : "unknown reason";
	char prefix[512];

	snprintf(prefix, sizeof(prefix), "event '%s' ", e->name);
	if (!strncmp(w, prefix, strlen(prefix)))
		return w + strlen(prefix);
	snprintf(prefix, sizeof(prefix), "bad event '%s': ", e->name);
	if (!strncmp(w, prefix, strlen(prefix)))
		return w + strlen(prefix);
	return w;
}

/*
 * The library's reasons are whole sentences with advice, the same for
 * every event of a PMU ("event 'cycles' needs a hardware PMU and this
 * host has none (...): use a software event ...").  Each line gets the
 * short reason ("needs a hardware PMU and this host has none"); the full
 * one is printed once per section (or per event with -d).
 */
static void short_why(const struct list_event *e, char *buf, size_t len)
{
	const char *w = why_body(e);
	size_t n = strlen(w);

	for (const char *cut = w; *cut; cut++) {
		if ((cut[0] == ' ' && cut[1] == '(') ||
		    ((cut[0] == ':' || cut[0] == ';') && cut[1] == ' ')) {
			n = (size_t)(cut - w);
			break;
		}
	}
	snprintf(buf, len, "%.*s", (int)n, w);
}

static void print_event(const struct list_event *e, bool desc)
{
	int pad = NAME_COLUMN - (int)strlen(e->name);
	char why[512];

	printf("  %s%*s ", e->name, pad > 0 ? pad : 0, "");
	if (e->usable) {
		printf("[usable]\n");
	} else {
		short_why(e, why, sizeof(why));
		printf("[not usable: %s]\n", why);
	}
	if (desc && *e->desc)
		printf("       %s\n", e->desc);
	if (desc && *e->umasks)
		printf("       needs a unit mask, add one as %s:MASK: %s\n", e->name, e->umasks);
	if (desc && !e->usable && *e->why)
		printf("       reason: %s\n", e->why);
}

#define MAX_NOTES 8

static void print_section(const struct list_ctx *ctx,
			  enum vperf_event_kind kind, const char *pmu,
			  bool desc)
{
	const struct list_event *note[MAX_NOTES];
	int nr_notes = 0;
	char why[512], other[512];

	for (size_t i = 0; i < ctx->n; i++) {
		const struct list_event *e = &ctx->v[i];
		bool seen = false;

		if (e->kind != kind || (pmu && strcmp(e->pmu, pmu)))
			continue;
		print_event(e, desc);
		if (e->usable)
			continue;
		short_why(e, why, sizeof(why));
		if (!strcmp(why, why_body(e)))
			continue;	/* the line said it all */
		for (int k = 0; k < nr_notes && !seen; k++) {
			short_why(note[k], other, sizeof(other));
			seen = !strcmp(why, other);
		}
		if (!seen && nr_notes < MAX_NOTES)
			note[nr_notes++] = e;
	}
	/* Each kind of reason in full, once (with -d, each line had it). */
	for (int k = 0; k < nr_notes && !desc; k++)
		printf("  (reason: %s)\n", note[k]->why);
}

static bool has_kind(const struct list_ctx *ctx, enum vperf_event_kind kind)
{
	for (size_t i = 0; i < ctx->n; i++)
		if (ctx->v[i].kind == kind)
			return true;
	return false;
}

static void print_list(const struct list_ctx *ctx, bool desc)
{
	printf("List of events (use them with 'vperf stat -e'):\n");

	/* Hardware: one section per PMU, in the library's order. */
	for (size_t i = 0; i < ctx->n; i++) {
		const struct list_event *e = &ctx->v[i];
		bool seen = false;

		if (e->kind != VPERF_EVENT_HARDWARE)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = ctx->v[j].kind == VPERF_EVENT_HARDWARE &&
			       !strcmp(ctx->v[j].pmu, e->pmu);
		if (seen)
			continue;
		printf("\nHardware events (%s):\n", *e->pmu ? e->pmu : "cpu");
		print_section(ctx, VPERF_EVENT_HARDWARE, e->pmu, desc);
	}
	if (has_kind(ctx, VPERF_EVENT_SOFTWARE)) {
		printf("\nSoftware events:\n");
		print_section(ctx, VPERF_EVENT_SOFTWARE, NULL, desc);
	}
	if (has_kind(ctx, VPERF_EVENT_VIRT)) {
		printf("\nVirtualization events (pv backend):\n");
		print_section(ctx, VPERF_EVENT_VIRT, NULL, desc);
	} else if (!ctx->pattern && !ctx->usable_only) {
		char why[256] = "";

		printf("\nVirtualization events (pv backend):\n");
		/* 0: usable; else -errno and why. */
		if (vperf_backend_available("pv", why, sizeof(why)) == 0 ||
		    !*why)
			printf("  (none: the pv backend reports no "
			       "virtualization events)\n");
		else
			printf("  (none: %s)\n", why);
	}
}

int cmd_list(int argc, char **argv)
{
	struct list_ctx ctx = { .pattern = NULL };
	struct list_opts o = { .desc = false };
	int first, err, status = cli_parse(&list_usage, argc, argv, &o, NULL, &first);

	if (status >= 0)
		return status;
	status = 0;
	ctx.usable_only = o.usable;
	if (argc - first > 1) {
		status = cli_usage_error(&list_usage,
			"too many patterns: '%s' and '%s' (give at most one; a "
			"glob such as '*clock*' can match several names)",
			argv[first], argv[first + 1]);
		goto out;
	}
	if (first < argc) {
		ctx.pattern = argv[first];
		if (!*ctx.pattern) {
			status = cli_usage_error(&list_usage,
				"empty pattern: give part of an event name, "
				"or no pattern to list every event");
			goto out;
		}
	}

	err = vperf_events__for_each(collect, &ctx, 1);
	if (ctx.nomem) {
		status = cli_error("list", "out of memory");
		goto out;
	}
	if (err < 0) {
		status = cli_error("list", "cannot list the events: %s",
				   strerror(-err));
		goto out;
	}
	if (!ctx.n && (ctx.pattern || ctx.usable_only)) {
		status = cli_error("list", "no event matches%s%s%s%s "
			"(try 'vperf list' for every event)",
			ctx.pattern ? " '" : "", ctx.pattern ? ctx.pattern : "",
			ctx.pattern ? "'" : "",
			ctx.usable_only ? " among the usable ones" : "");
		goto out;
	}
	print_list(&ctx, o.desc);
out:
	for (size_t i = 0; i < ctx.n; i++)
		list_event__exit(&ctx.v[i]);
	free(ctx.v);
	return status;
}
