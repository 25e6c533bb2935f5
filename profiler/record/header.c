// SPDX-License-Identifier: MIT
/* `vperf report --header`: a recording's metadata environment and streams, for people. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "header.h"
#include "why.h"

#define MAX_ENV	128

struct env {
	char *key[MAX_ENV];
	char *val[MAX_ENV];
	size_t n;
};

/* The start of path, up to max bytes; a FIFO or a device is not waited for, but refused. */
static char *slurp(const char *path, size_t max, int *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *f;
	char *buf;
	size_t n;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		*err = -EINVAL;
		return NULL;
	}
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		*err = -ENOMEM;
		return NULL;
	}
	n = fread(buf, 1, max, f);
	buf[n] = '\0';
	fclose(f);
	*err = 0;
	return buf;
}

/* The env { key = "value"; ... }; block, parsed in place (values unquoted). */
static int parse_env(char *meta, struct env *e)
{
	char *p = strstr(meta, "\nenv {");

	if (!p)
		return -EINVAL;
	p = strchr(p, '{') + 1;
	while (*p && e->n < MAX_ENV) {
		char *line = p, *eq, *v, *end;

		p = strchr(p, '\n');
		if (!p)
			break;
		*p++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (!strncmp(line, "};", 2))
			break;
		eq = strstr(line, " = ");
		if (!eq)
			continue;
		*eq = '\0';
		v = eq + 3;
		end = v + strlen(v);
		if (end > v && end[-1] == ';')
			*--end = '\0';
		if (*v == '"' && end > v + 1 && end[-1] == '"') {
			v++;
			*--end = '\0';
		}
		e->key[e->n] = line;
		e->val[e->n++] = v;
	}
	return 0;
}

/*
 * Make every key and value text (escape.h): they are the recording's, and everything below prints
 * them.  The copies are e's (env_free()).  0 or -ENOMEM.
 */
static int escape_env(struct env *e)
{
	for (size_t i = 0; i < e->n; i++) {
		char *k = esc_text_dup(e->key[i]), *v = esc_text_dup(e->val[i]);

		if (!k || !v) {
			free(k);
			free(v);
			e->n = i;
			return -ENOMEM;
		}
		e->key[i] = k;
		e->val[i] = v;
	}
	return 0;
}

static void env_free(struct env *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->key[i]);
		free(e->val[i]);
	}
	e->n = 0;
}

static const char *get(const struct env *e, const char *key)
{
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->key[i], key))
			return e->val[i];
	return NULL;
}

/* The value of key, or dflt. */
static const char *val(const struct env *e, const char *key, const char *dflt)
{
	const char *v = get(e, key);

	return v ? v : dflt;
}

static uint64_t num(const struct env *e, const char *key)
{
	const char *v = get(e, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_vm(const struct env *ep, FILE *out)
{
	fprintf(out, "# guest records: %" PRIu64 " (not mapped to the clock: %" PRIu64 ")\n",
		num(ep, "summary_guest_records"), num(ep, "summary_guest_unmapped"));
	for (size_t i = 0; i < ep->n; i++)
		if (!strncmp(ep->key[i], "summary_guest_", 14) && strcmp(ep->key[i], "summary_guest_records") &&
		    strcmp(ep->key[i], "summary_guest_unmapped") && strcmp(ep->key[i], "summary_guest_invalid_bytes") &&
		    strcmp(ep->key[i], "summary_guest_bad_ring_headers") &&
		    strcmp(ep->key[i], "summary_guest_refused_records") &&
		    strcmp(ep->key[i], "summary_guest_refused_bytes"))
			fprintf(out, "#   %-20s %s\n", ep->key[i] + 14, ep->val[i]);
	fprintf(out, "# vmm exits: %" PRIu64 "\n", num(ep, "summary_vmm_exits"));
	fprintf(out, "# host kernel events: %" PRIu64 " (%s)\n", num(ep, "summary_host_events"),
		val(ep, "host_events", "not recorded"));
	fprintf(out, "# lost: guest rings %" PRIu64 ", guest producers %" PRIu64 ", invalid guest bytes %"
		PRIu64 ", vmm exits %" PRIu64 ", host kernel %" PRIu64 "\n", num(ep, "summary_lost_guest_ring"),
		num(ep, "summary_lost_guest_producer"), num(ep, "summary_guest_invalid_bytes"),
		num(ep, "summary_lost_vmm"), num(ep, "summary_lost_host"));
	if (num(ep, "summary_guest_bad_ring_headers"))
		fprintf(out, "# guest ring headers broken by the guest: %" PRIu64 " drains refused\n",
			num(ep, "summary_guest_bad_ring_headers"));
	if (num(ep, "summary_guest_refused_records"))
		fprintf(out, "# guest records refused as invalid: %" PRIu64 " (%" PRIu64 " bytes of the "
			"raw recording, each with the rest of its chunk: never read)\n",
			num(ep, "summary_guest_refused_records"), num(ep, "summary_guest_refused_bytes"));
	if (num(ep, "summary_out_of_range"))
		fprintf(out, "# events left out: %" PRIu64 " (their time is past what the trace's clock "
			"holds: a bogus TSC offset or a wrapped guest TSC)\n", num(ep, "summary_out_of_range"));
	if (get(ep, "guest_kernel_symbols"))
		fprintf(out, "# guest kernel symbols: %s\n", val(ep, "guest_kernel_symbols", ""));
	if (get(ep, "guest_vdso"))
		fprintf(out, "# guest vdso: %s\n", val(ep, "guest_vdso", ""));
	if (!strcmp(val(ep, "raw_truncated", "0"), "1"))
		fprintf(out, "# note: the raw recording was cut short (the VMM was killed): events up to its "
			"last whole chunk\n");
}

/* What `vperf record` wrote (docs/recording.md, section 12). */
static void print_record(const struct env *ep, FILE *out)
{
	fprintf(out, "# machine: %s\n", val(ep, "machine", "?"));
	fprintf(out, "# target: %s\n", val(ep, "target", "?"));
	fprintf(out, "# events: %s, %s %s%s\n", val(ep, "events", "?"),
		get(ep, "sample_period") ? "a sample every" : "about",
		get(ep, "sample_period") ? val(ep, "sample_period", "?") : val(ep, "sample_freq", "?"),
		get(ep, "sample_period") ? " events" : " samples per second");
	fprintf(out, "# callchains: %s; kernel samples: %s\n",
		!strcmp(val(ep, "callchains", "0"), "1") ? "yes" : "no",
		val(ep, "kernel_samples", "?"));
	if (!get(ep, "summary_events")) {
		fprintf(out, "# note: no summary: the recorder did not finish (killed?); the trace "
			"holds what it had written until then\n");
		return;
	}
	fprintf(out, "# samples: %" PRIu64 " (%s)\n", num(ep, "summary_samples"),
		val(ep, "summary_samples_by_event", ""));
	fprintf(out, "# tasks: forks %" PRIu64 ", execs %" PRIu64 ", exits %" PRIu64
		", thread switches %" PRIu64 "\n", num(ep, "summary_forks"), num(ep, "summary_execs"),
		num(ep, "summary_exits"), num(ep, "summary_switches"));
	fprintf(out, "# sched events: %s\n", val(ep, "sched_events", "?"));
	if (num(ep, "summary_sched_switches") || num(ep, "summary_sched_wakeups"))
		fprintf(out, "#   sched_switch %" PRIu64 " (out of a recorded thread %" PRIu64 "; its "
			"thread_switch outs %" PRIu64 "), sched_wakeup %" PRIu64 ", of other threads "
			"left out %" PRIu64 "\n", num(ep, "summary_sched_switches"),
			num(ep, "summary_sched_switch_outs"), num(ep, "summary_switch_outs"),
			num(ep, "summary_sched_wakeups"), num(ep, "summary_sched_other"));
	fprintf(out, "# lost: ring full %" PRIu64 ", samples the kernel dropped %" PRIu64
		"; throttled %" PRIu64 " times; undecodable records %" PRIu64 "\n",
		num(ep, "summary_lost_ring"), num(ep, "summary_lost_samples"),
		num(ep, "summary_throttles"), num(ep, "summary_bad_records"));
	if (num(ep, "summary_late"))
		fprintf(out, "# late events (kept at the time of the last one written): %" PRIu64 "\n",
			num(ep, "summary_late"));
	if (get(ep, "kernel_symbols"))
		fprintf(out, "# kernel symbols: %s\n", get(ep, "kernel_symbols"));
	if (get(ep, "vdso"))
		fprintf(out, "# vdso: %s\n", get(ep, "vdso"));
	if (get(ep, "workload_status"))
		fprintf(out, "# command exit status: %s\n", get(ep, "workload_status"));
}

int vperf_recording_header(const char *dir, FILE *out, char *why, size_t why_len)
{
	char path[4096], *meta;
	struct env e = { 0 };
	const char *v;
	struct dirent *d;
	char *names[512];
	size_t nr_names = 0;
	DIR *dh;
	int err;

	snprintf(path, sizeof(path), "%s/metadata", dir);
	meta = slurp(path, 1u << 20, &err);
	if (!meta)
		return vperf_why(why, why_len, err, "%s: %s (is %s a vperf recording?)", path,
			    err == -EINVAL ? "not a regular file" : strerror(-err), dir);
	if (parse_env(meta, &e) || !get(&e, "vperf_version")) {
		free(meta);
		return vperf_why(why, why_len, -EINVAL, "%s: no vperf environment in the metadata: not a vperf "
			    "recording", path);
	}
	err = escape_env(&e);
	free(meta);
	if (err) {
		env_free(&e);
		return vperf_why(why, why_len, err, "out of memory");
	}
	fputs("# recording: ", out);
	esc_text(out, dir);
	fputc('\n', out);
	fprintf(out, "# written by: vperf %s on %s%s%s\n", get(&e, "vperf_version"),
		val(&e, "hostname", "?"), get(&e, "recorder") ? ", recorded by " : "",
		val(&e, "recorder", ""));
	if (get(&e, "vm_name"))
		fprintf(out, "# vm: %s, %s vCPUs, %s bytes of memory, VMM pid %s\n", get(&e, "vm_name"),
			val(&e, "nr_vcpus", "?"), val(&e, "mem_bytes", "?"),
			val(&e, "vmm_pid", "?"));
	if ((v = get(&e, "kernel")) && *v)
		fprintf(out, "# guest kernel: %s\n", v);
	if ((v = get(&e, "cmdline")) && *v)
		fprintf(out, "# guest command line: %s\n", v);
	if ((v = get(&e, "layers")))
		fprintf(out, "# layers: %s\n", v);
	fprintf(out, "# duration: %.9f s\n", (double)num(&e, "summary_duration_ns") / 1e9);
	if (get(&e, "tsc_khz"))
		fprintf(out, "# clock: host TSC at %s kHz, in ns; vCPU TSC offsets: %s\n", get(&e, "tsc_khz"),
			val(&e, "vcpu_tsc_offsets", "?"));
	if ((v = get(&e, "clock_note")))
		fprintf(out, "# clock mapping: %s\n", v);
	if (!strcmp(val(&e, "recorder", ""), "vperf record"))
		print_record(&e, out);
	else
		print_vm(&e, out);

	dh = opendir(dir);
	if (dh) {
		while ((d = readdir(dh)) && nr_names < sizeof(names) / sizeof(names[0]))
			if (d->d_name[0] != '.' && strcmp(d->d_name, "metadata"))
				names[nr_names++] = strdup(d->d_name);
		closedir(dh);
		qsort(names, nr_names, sizeof(names[0]), cmp_str);
		fprintf(out, "# streams:");
		for (size_t i = 0; i < nr_names; i++) {
			struct stat sb;

			snprintf(path, sizeof(path), "%s/%s", dir, names[i] ? names[i] : "");
			if (names[i] && !stat(path, &sb)) {
				fputc(' ', out);
				esc_text(out, names[i]);
				fprintf(out, " (%lld KiB)", (long long)sb.st_size / 1024);
			}
			free(names[i]);
		}
		fprintf(out, "\n");
	}
	env_free(&e);
	if (fflush(out) || ferror(out))
		return vperf_why(why, why_len, -EIO, "writing the header: %s", strerror(errno));
	return 0;
}
