// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "escape.h"
#include "stat-display.h"

/* perf's column widths (tools/perf/util/stat-display.c). */
#define VALUE_WIDTH	18
#define UNIT_WIDTH	4
#define NAME_WIDTH	32
#define METRIC_LEN	35
#define COMM_WIDTH	16
#define TID_WIDTH	8

enum stat_event_kind stat_event_kind(const char *name)
{
	static const struct {
		const char *name;
		enum stat_event_kind kind;
	} names[] = {
		{ "task-clock", STAT_EV_TASK_CLOCK },
		{ "perf_count_sw_task_clock", STAT_EV_TASK_CLOCK },
		{ "cpu-clock", STAT_EV_CPU_CLOCK },
		{ "perf_count_sw_cpu_clock", STAT_EV_CPU_CLOCK },
		{ "cycles", STAT_EV_CYCLES },
		{ "cpu-cycles", STAT_EV_CYCLES },
		{ "perf_count_hw_cpu_cycles", STAT_EV_CYCLES },
		{ "instructions", STAT_EV_INSTRUCTIONS },
		{ "perf_count_hw_instructions", STAT_EV_INSTRUCTIONS },
	};
	const char *p = name;
	size_t len;

	/* the pv backend's time events (ns, like task-clock) */
	if (!strcasecmp(p, "vperf::vcpu-clock"))
		return STAT_EV_VCPU_CLOCK;
	if (!strcasecmp(p, "vperf::steal"))
		return STAT_EV_STEAL;
	if (!strncasecmp(p, "perf::", 6))
		p += 6;
	len = strcspn(p, ":/");		/* drop modifiers */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == len &&
		    !strncasecmp(p, names[i].name, len))
			return names[i].kind;
	return STAT_EV_OTHER;
}

/* Events counted in ns and shown in msec, with a CPUs-utilized metric. */
static bool is_clock(enum stat_event_kind k)
{
	return k == STAT_EV_TASK_CLOCK || k == STAT_EV_CPU_CLOCK || k == STAT_EV_VCPU_CLOCK;
}

static bool in_msec(enum stat_event_kind k)
{
	return is_clock(k) || k == STAT_EV_STEAL;
}

static void rate_unit(double per_sec, double *val, char *unit, size_t len)
{
	static const struct { double scale; const char *unit; } r[] = {
		{ 1e9, "G/sec" }, { 1e6, "M/sec" }, { 1e3, "K/sec" },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		if (per_sec >= r[i].scale) {
			*val = per_sec / r[i].scale;
			snprintf(unit, len, "%s", r[i].unit);
			return;
		}
	}
	*val = per_sec;
	snprintf(unit, len, "/sec");
}

bool stat_metric(const struct stat_line *l, const struct stat_basis *b,
		 double *val, char *unit, size_t unit_len)
{
	if (l->state != STAT_COUNTED)
		return false;
	if (is_clock(l->kind)) {
		if (b->elapsed_ns <= 0)
			return false;
		*val = l->value / b->elapsed_ns;
		snprintf(unit, unit_len, "CPUs utilized");
		return true;
	}
	if (l->kind == STAT_EV_STEAL) {
		if (b->elapsed_ns <= 0)
			return false;
		*val = 100.0 * l->value / b->elapsed_ns;
		snprintf(unit, unit_len, "%% of elapsed time stolen");
		return true;
	}
	if (l->kind == STAT_EV_INSTRUCTIONS && b->cycles > 0) {
		*val = l->value / b->cycles;
		snprintf(unit, unit_len, "insn per cycle");
		return true;
	}
	if (l->kind == STAT_EV_CYCLES && b->clock_ns > 0) {
		*val = l->value / b->clock_ns;
		snprintf(unit, unit_len, "GHz");
		return true;
	}
	if (b->clock_ns > 0) {
		rate_unit(l->value * 1e9 / b->clock_ns, val, unit, unit_len);
		return true;
	}
	if (b->elapsed_ns > 0) {
		rate_unit(l->value * 1e9 / b->elapsed_ns, val, unit, unit_len);
		return true;
	}
	return false;
}

/* The value as the CSV and JSON formats spell it, without padding. */
static void format_value(const struct stat_line *l, char *buf, size_t len)
{
	switch (l->state) {
	case STAT_NOT_SUPPORTED:
		snprintf(buf, len, "<not supported>");
		break;
	case STAT_NOT_COUNTED:
		snprintf(buf, len, "<not counted>");
		break;
	default:
		if (in_msec(l->kind))
			snprintf(buf, len, "%.2f", l->value / 1e6);
		else
			snprintf(buf, len, "%.0f", l->value);
		break;
	}
}

static double pcnt_running(const struct stat_line *l)
{
	if (l->state != STAT_COUNTED || l->enabled <= 0)
		return 0.0;
	return 100.0 * l->running / l->enabled;
}

static const char *unit_of(const struct stat_line *l)
{
	return in_msec(l->kind) ? "msec" : "";
}

struct linebuf {
	char s[1024];
	size_t n;
};

static void lb_add(struct linebuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void lb_add(struct linebuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->n >= sizeof(b->s))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->n += (size_t)n;
	if (b->n >= sizeof(b->s))
		b->n = sizeof(b->s) - 1;
}

static void print_text(const struct stat_config *c,
		       const struct stat_prefix *p,
		       const struct stat_line *l, const struct stat_basis *b)
{
	struct linebuf lb = { .n = 0 };
	char val[64], unit[32];
	double mval;

	if (p && p->interval)
		lb_add(&lb, "%6lu.%09lu ",
		       (unsigned long)(p->interval_ns / 1000000000u),
		       (unsigned long)(p->interval_ns % 1000000000u));
	if (p && p->comm) {
		char comm[80];	/* a thread names itself: 16 bytes, each at most "\xNN" */

		lb_add(&lb, "%*s-%-*d ", COMM_WIDTH, esc_text_buf(comm, sizeof(comm), p->comm),
		       TID_WIDTH, p->tid);
	}
	format_value(l, val, sizeof(val));
	lb_add(&lb, "%*s %-*s %-*s", VALUE_WIDTH, val, UNIT_WIDTH, unit_of(l),
	       NAME_WIDTH, l->event);
	if (stat_metric(l, b, &mval, unit, sizeof(unit)))
		lb_add(&lb, " # %8.3f %-*s", mval, METRIC_LEN - 12, unit);
	else
		lb_add(&lb, "%*s", METRIC_LEN, "");
	if (c->show_noise && l->state == STAT_COUNTED)
		lb_add(&lb, "  ( +-%6.2f%% )", l->noise_pct);
	if (l->state == STAT_COUNTED && l->running < l->enabled)
		lb_add(&lb, "  (%.2f%%)", pcnt_running(l));
	while (lb.n && lb.s[lb.n - 1] == ' ')
		lb.n--;
	lb.s[lb.n] = '\0';
	fprintf(c->out, "%s\n", lb.s);
}

static void print_csv(const struct stat_config *c,
		      const struct stat_prefix *p,
		      const struct stat_line *l, const struct stat_basis *b)
{
	const char *s = c->sep;
	char val[64], unit[32];
	double mval;
	bool has_metric;

	if (p && p->interval)
		fprintf(c->out, "%lu.%09lu%s",
			(unsigned long)(p->interval_ns / 1000000000u),
			(unsigned long)(p->interval_ns % 1000000000u), s);
	if (p && p->comm) {
		esc_text(c->out, p->comm);
		fprintf(c->out, "-%d%s", p->tid, s);
	}
	format_value(l, val, sizeof(val));
	fprintf(c->out, "%s%s%s%s%s%s", val, s, unit_of(l), s, l->event, s);
	if (c->show_noise)
		fprintf(c->out, "%.2f%%%s", l->noise_pct, s);
	fprintf(c->out, "%.0f%s%.2f%s",
		l->state == STAT_NOT_SUPPORTED ? 0.0 : l->running, s,
		pcnt_running(l), s);
	has_metric = stat_metric(l, b, &mval, unit, sizeof(unit));
	if (has_metric)
		fprintf(c->out, "%.3f%s%s\n", mval, s, unit);
	else
		fprintf(c->out, "%s\n", s);
}

static void print_json(const struct stat_config *c,
		       const struct stat_prefix *p,
		       const struct stat_line *l, const struct stat_basis *b)
{
	FILE *o = c->out;
	char val[64], unit[32], mbuf[64] = "";
	double mval;

	unit[0] = '\0';
	fputc('{', o);
	if (p && p->interval)
		fprintf(o, "\"interval\": %lu.%09lu, ",
			(unsigned long)(p->interval_ns / 1000000000u),
			(unsigned long)(p->interval_ns % 1000000000u));
	if (p && p->comm) {
		char thread[64];

		snprintf(thread, sizeof(thread), "%s-%d", p->comm, p->tid);
		fputs("\"thread\": ", o);
		esc_json(o, thread);
		fputs(", ", o);
	}
	format_value(l, val, sizeof(val));
	fputs("\"counter-value\": ", o);
	esc_json(o, val);
	fputs(", \"unit\": ", o);
	esc_json(o, unit_of(l));
	fputs(", \"event\": ", o);
	esc_json(o, l->event);
	if (c->show_noise)
		fprintf(o, ", \"variance\": %.2f", l->noise_pct);
	fprintf(o, ", \"event-runtime\": %.0f, \"pcnt-running\": %.2f",
		l->state == STAT_NOT_SUPPORTED ? 0.0 : l->running,
		pcnt_running(l));
	if (stat_metric(l, b, &mval, unit, sizeof(unit)))
		snprintf(mbuf, sizeof(mbuf), "%.3f", mval);
	else
		unit[0] = '\0';
	fputs(", \"metric-value\": ", o);
	esc_json(o, mbuf);
	fputs(", \"metric-unit\": ", o);
	esc_json(o, unit);
	fputs("}\n", o);
}

void stat_print_line(const struct stat_config *c, const struct stat_prefix *p,
		     const struct stat_line *l, const struct stat_basis *b)
{
	switch (c->fmt) {
	case STAT_FMT_CSV:
		print_csv(c, p, l, b);
		break;
	case STAT_FMT_JSON:
		print_json(c, p, l, b);
		break;
	default:
		print_text(c, p, l, b);
		break;
	}
}

void stat_print_header(const struct stat_config *c, const char *what,
		       int runs)
{
	if (c->fmt != STAT_FMT_TEXT)
		return;
	fprintf(c->out, "\n Performance counter stats for %s", what);
	if (runs > 0)
		fprintf(c->out, " (%d run%s)", runs, runs == 1 ? "" : "s");
	fprintf(c->out, ":\n\n");
}

void stat_print_interval_header(const struct stat_config *c)
{
	if (c->fmt != STAT_FMT_TEXT)
		return;
	fprintf(c->out, "#%*s %*s %-*s %s\n", 15, "time", VALUE_WIDTH,
		"counts", UNIT_WIDTH, "unit", "events");
}

void stat_print_footer(const struct stat_config *c,
		       const struct stat_footer *f)
{
	if (c->fmt != STAT_FMT_TEXT)
		return;
	fprintf(c->out, "\n");
	if (c->show_noise)
		fprintf(c->out,
			" %17.9f +- %.9f seconds time elapsed  ( +-%6.2f%% )\n",
			f->elapsed_ns / 1e9, f->elapsed_stddev_ns / 1e9,
			f->elapsed_noise_pct);
	else
		fprintf(c->out, " %17.9f seconds time elapsed\n",
			f->elapsed_ns / 1e9);
	if (f->rusage) {
		fprintf(c->out, "\n %17.9f seconds user\n", f->user_s);
		fprintf(c->out, " %17.9f seconds sys\n", f->sys_s);
	}
	fprintf(c->out, "\n");
}
