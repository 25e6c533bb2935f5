// SPDX-License-Identifier: MIT
/*
 * libvperf-hv decides on a guest's PERF event by what libpfm4 encodes, never
 * by the text the guest sent (docs/abi.md, "Allowlist"): known answers for
 * each form a guest could use to count more than its own vCPU thread, or to
 * take the host's PMU.
 *
 * Usage: test-hv-allow generic|skl|zen3.  skl and zen3 force libpfm4's PMU
 * (LIBPFM_FORCE_PMU) to encode Intel Skylake's or AMD Zen 3's events on any
 * host.  This host may have no PMU to open them on, so the tests check the
 * decision: COUNTERS_SET's -EPERM (it refuses before it opens anything) and
 * the attr hv_perf_decide() would open, never perf_event_open's success.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../fuzz/fake-vm.h"
#include "hv-internal.h"

struct fixture {
	struct fake_vm vm;
	struct vperf_hv *hv;
};

#define DESC_GPA	FAKE_RAM_BASE
#define INFO_GPA	(FAKE_RAM_BASE + 0x2000)

/* A device with the given allowlist (NULL: the default one), vCPU 0's thread entered. */
static struct fixture *fixture_new(const char *const *allow, int nr_allow)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct vperf_hv_config cfg = {
		.size = sizeof(cfg), .nr_vcpus = 2, .gsi = 5, .allow = allow, .nr_allow = nr_allow,
	};

	assert_non_null(f);
	f->vm.ram = calloc(1, FAKE_RAM_SIZE);
	assert_non_null(f->vm.ram);
	assert_int_equal(vperf_hv__new(&cfg, &fake_ops, &f->vm, &f->hv), 0);
	assert_int_equal(vperf_hv__vcpu_enter(f->hv, 0), 0);
	return f;
}

static void fixture_delete(struct fixture *f)
{
	vperf_hv__delete(f->hv);
	free(f->vm.ram);
	free(f);
}

#define NEW(...)							\
	fixture_new((const char *const[]){ __VA_ARGS__ },		\
		    (int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))

/* COUNTERS_SET of vCPU 0 with the one PERF event name. */
static int64_t set_one(struct fixture *f, const char *name)
{
	struct vperf_event_desc *d = (void *)(f->vm.ram + (DESC_GPA - FAKE_RAM_BASE));
	uint64_t args[4] = { DESC_GPA, 1, 0, 0 };

	memset(d, 0, sizeof(*d));
	d->source = VPERF_SRC_PERF;
	snprintf(d->name, sizeof(d->name), "%s", name);
	return vperf_hv__hypercall(f->hv, 0, VPERF_HC_COUNTERS_SET, args);
}

/* The device refuses name: -EPERM, before it opens anything. */
#define refused(f, name) refused_at(f, name, __LINE__)
static void refused_at(struct fixture *f, const char *name, int line)
{
	int64_t r = set_one(f, name);

	if (r != -VPERF_EPERM)
		print_error("line %d: %s: COUNTERS_SET %" PRId64 ", not EPERM\n", line, name, r);
	assert_int_equal(r, -VPERF_EPERM);
}

/*
 * The device accepts name: it counts, or it found no PMU to count it on
 * (ENODEV: this host); not refused, not unknown.
 */
#define accepted(f, name) accepted_at(f, name, __LINE__)
static void accepted_at(struct fixture *f, const char *name, int line)
{
	int64_t r = set_one(f, name);

	if (r != 0 && r != -VPERF_ENODEV)
		print_error("line %d: %s: COUNTERS_SET %" PRId64 ", not 0 or ENODEV\n", line, name,
			    r);
	assert_true(r == 0 || r == -VPERF_ENODEV);
}

/* What the host would open for name: the allowlist's name for it and its config. */
#define decided(f, name, key, config) decided_at(f, name, key, config, __LINE__)
static void decided_at(struct fixture *f, const char *name, const char *key, uint64_t config,
		       int line)
{
	struct hv_perf_event ev;
	int r = hv_perf_decide(f->hv, name, &ev);

	if (r || strcmp(ev.name, key) || ev.attr.config != config)
		print_error("line %d: %s: %d, \"%s\" config %#" PRIx64 "; want \"%s\" %#"
			    PRIx64 "\n", line, name, r, ev.name, (uint64_t)ev.attr.config, key,
			    config);
	assert_int_equal(r, 0);
	assert_string_equal(ev.name, key);
	assert_true(ev.attr.config == config);
	assert_int_equal(ev.attr.size, sizeof(ev.attr));
	assert_int_equal(ev.attr.config1, 0);
	assert_int_equal(ev.attr.config2, 0);
	assert_int_equal(ev.attr.pinned, 0);
	assert_int_equal(ev.attr.exclusive, 0);
	assert_int_equal(ev.attr.precise_ip, 0);
	assert_int_equal(ev.attr.freq, 0);
	if (ev.kind == SRC_HW) {
		assert_int_equal(ev.attr.exclude_host, 1);
		assert_int_equal(ev.attr.exclude_guest, 0);
	}
}

/* ---- generic: perf's own PMUs (perf, perf_raw), whatever the host's CPU ---- */

/* By default a guest counts perf's generic hardware and cache events, not raw ones. */
static void default_list_allows_generic_events_only(void **state)
{
	struct fixture *f = fixture_new(NULL, 0);

	(void)state;
	accepted(f, "cycles");
	accepted(f, "instructions");
	accepted(f, "branches");
	accepted(f, "L1-dcache-load-misses");
	accepted(f, "perf::PERF_COUNT_HW_INSTRUCTIONS");
	accepted(f, "cycles:u");
	assert_int_equal(set_one(f, "task-clock"), 0);
	refused(f, "perf_raw::r00c0");
	refused(f, "perf_raw::r2000c0");	/* Intel AnyThread: the SMT sibling's instructions */
	decided(f, "branches", "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	decided(f, "L1-dcache-load-misses", "L1-dcache-load-misses", 0x10000);
	decided(f, "INSTRUCTIONS", "instructions", PERF_COUNT_HW_INSTRUCTIONS);
	fixture_delete(f);
}

/* No list lets a guest pin the host's PMU, own it, use PEBS or frequency mode. */
static void modifiers_no_guest_gets_are_refused_whatever_the_list(void **state)
{
	struct fixture *f = NEW("*");

	(void)state;
	accepted(f, "cycles");
	refused(f, "cycles:pinned");
	refused(f, "cycles:excl");
	refused(f, "instructions:precise=1");
	refused(f, "instructions:precise=2");
	refused(f, "cycles:freq=1000");
	refused(f, "task-clock:pinned");
	refused(f, "task-clock:excl");
	refused(f, "perf_raw::r00c0:precise=1");
	refused(f, "perf_raw::r00c0:pinned");
	fixture_delete(f);
}

/*
 * Raw configs: the event select and unit mask stay; AnyThread and AMD's
 * host/guest-only bits are refused; edge, inv and cmask need the operator's
 * word; privilege, interrupt and enable bits and the reserved ones go.
 */
static void raw_configs_keep_event_and_umask_only(void **state)
{
	struct fixture *f = NEW("hw:*", "raw:*");

	(void)state;
	accepted(f, "perf_raw::r00c0");
	decided(f, "perf_raw::r00c0", "perf_raw::r00c0", 0xc0);
	decided(f, "perf_raw::r0000c0", "perf_raw::r00c0", 0xc0);
	decided(f, "perf_raw::r5300c0", "perf_raw::r00c0", 0xc0);	/* usr, os, int, en */
	decided(f, "perf_raw::r10000001c0", "perf_raw::r01c0", 0x1c0);	/* bit 36 */
	refused(f, "perf_raw::r2000c0");	/* AnyThread (21) */
	refused(f, "perf_raw::r400c0");		/* edge (18) */
	refused(f, "perf_raw::r8000c0");	/* inv (23) */
	refused(f, "perf_raw::r10000c0");	/* cmask (24-31) */
	refused(f, "perf_raw::rff0000c0");
	refused(f, "perf_raw::r100000000c0");	/* AMD GuestOnly (40) */
	refused(f, "perf_raw::r200000000c0");	/* AMD HostOnly (41) */
	fixture_delete(f);
}

static void raw_filters_need_the_operators_word_each(void **state)
{
	struct fixture *f = NEW("raw:*", "rawmod:cmask", "rawmod:inv");

	(void)state;
	decided(f, "perf_raw::r18000c0", "perf_raw::r18000c0", 0x18000c0);	/* inv, cmask 1 */
	refused(f, "perf_raw::r14400c0");	/* edge: not allowed */
	fixture_delete(f);
	f = NEW("*");
	/* edge, inv, cmask 1 */
	decided(f, "perf_raw::r18400c0", "perf_raw::r18400c0", 0x18400c0);
	refused(f, "perf_raw::r12000c0");	/* AnyThread, even with every filter allowed */
	refused(f, "perf_raw::r200000000c0");
	fixture_delete(f);
}

/* The list names what the encoding says: a guest's spelling neither widens nor narrows it. */
static void the_list_matches_the_encoding_not_the_text(void **state)
{
	struct fixture *f = NEW("hw:instructions", "raw:perf_raw::r00c0");

	(void)state;
	accepted(f, "instructions");
	accepted(f, "instructions:u");
	accepted(f, "perf::PERF_COUNT_HW_INSTRUCTIONS");
	accepted(f, "perf_raw::r0000c0");
	refused(f, "cycles");
	refused(f, "perf_raw::r01c0");
	refused(f, "perf_raw::r5300c1");
	fixture_delete(f);
	/* a pattern over names once matched modifiers written after them */
	f = NEW("hw:cycles*", "raw:perf_raw::r00c0*");
	accepted(f, "cycles");
	refused(f, "cycles:pinned");
	refused(f, "cycles:excl");
	refused(f, "perf_raw::r00c0:precise=1");
	refused(f, "perf_raw::r00c0:pinned");
	fixture_delete(f);
}

/* ---- skl: Intel Skylake's core PMU (LIBPFM_FORCE_PMU=skl) ---- */

static void intel_core_events_are_raw_events(void **state)
{
	struct fixture *f = fixture_new(NULL, 0);

	(void)state;
	refused(f, "skl::INST_RETIRED:ANY_P");
	refused(f, "skl::UNHALTED_CORE_CYCLES");
	fixture_delete(f);
	f = NEW("raw:skl::INST_RETIRED");
	accepted(f, "skl::INST_RETIRED:ANY_P");
	accepted(f, "skl::inst_retired:any_p");
	refused(f, "skl::UNHALTED_CORE_CYCLES");
	decided(f, "skl::inst_retired:any_p", "skl::INST_RETIRED", 0xc0);
	decided(f, "skl::INST_RETIRED:ANY_P:u", "skl::INST_RETIRED", 0xc0);
	fixture_delete(f);
}

/* t=1 counts the SMT sibling: other VMs' and the host's instructions.  Never. */
static void intel_any_thread_is_never_allowed(void **state)
{
	struct fixture *f = NEW("*");

	(void)state;
	accepted(f, "skl::INST_RETIRED:ANY_P");
	refused(f, "skl::INST_RETIRED:ANY_P:t=1");
	refused(f, "skl::UNHALTED_CORE_CYCLES:t=1");
	refused(f, "skl::INST_RETIRED:ANY_P:t=1:e=1:c=1");
	fixture_delete(f);
}

static void intel_edge_inv_cmask_need_the_operators_word(void **state)
{
	struct fixture *f = NEW("raw:*");

	(void)state;
	refused(f, "skl::INST_RETIRED:ANY_P:e=1:c=1");
	refused(f, "skl::INST_RETIRED:ANY_P:i=1:c=1");
	refused(f, "skl::INST_RETIRED:ANY_P:c=3");
	refused(f, "skl::UOPS_ISSUED:STALL_CYCLES");		/* inv and cmask built in */
	refused(f, "skl::CYCLE_ACTIVITY:CYCLES_L1D_MISS");	/* cmask 8 built in */
	fixture_delete(f);
	f = NEW("raw:*", "rawmod:*");
	decided(f, "skl::INST_RETIRED:ANY_P:e=1:c=1", "skl::INST_RETIRED", 0x10400c0);
	decided(f, "skl::INST_RETIRED:ANY_P:i=1:c=1", "skl::INST_RETIRED", 0x18000c0);
	decided(f, "skl::UOPS_ISSUED:STALL_CYCLES", "skl::UOPS_ISSUED", 0x180010e);
	fixture_delete(f);
}

static void intel_precise_exclusive_and_extra_registers_are_refused(void **state)
{
	struct fixture *f = NEW("*");

	(void)state;
	refused(f, "skl::INST_RETIRED:PREC_DIST:precise=2");
	refused(f, "skl::INST_RETIRED:ANY_P:excl");
	refused(f, "skl::INST_RETIRED:ANY_P:pinned");
	refused(f, "skl::OFFCORE_RESPONSE_0:ANY_REQUEST:ANY_RESPONSE");	/* config1 */
	refused(f, "skl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3");	/* config1 */
	refused(f, "skl::FRONTEND_RETIRED:DSB_MISS");			/* config1 */
	/* the TSX filter (bit 32) is not the guest's either: it goes */
	decided(f, "skl::INST_RETIRED:ANY_P:intx=1", "skl::INST_RETIRED", 0xc0);
	fixture_delete(f);
}

/*
 * EVENT_INFO lists the core PMU's events; each one's status is what
 * COUNTERS_SET answers for it: EPERM for all by default, for those with a
 * built-in counter mask or an extra register with raw:* alone.
 */
static void intel_event_list_says_what_counters_set_does(void **state)
{
	static const char *const lists[][2] = { { NULL, NULL }, { "raw:*", NULL } };
	uint64_t listed = 0, ok = 0, eperm = 0;

	(void)state;
	for (size_t l = 0; l < 2; l++) {
		struct fixture *f = fixture_new(lists[l][0] ? lists[l] : NULL, lists[l][0] ? 1 : 0);
		const struct vperf_event_desc *d = (const void *)(f->vm.ram +
								   (INFO_GPA - FAKE_RAM_BASE));

		f->hv->host_pmu = true;
		for (uint64_t i = 0;; i++) {
			uint64_t args[4] = { i, INFO_GPA, 0, 0 };
			int64_t st = vperf_hv__hypercall(f->hv, 0, VPERF_HC_EVENT_INFO, args);
			char name[VPERF_EVENT_NAME_LEN];
			int64_t r;

			if (st == -VPERF_ENOENT)
				break;
			assert_true(st >= 0 && i < 10000);
			if (d->source != VPERF_SRC_PERF || strncmp(d->name, "skl::", 5))
				continue;
			memcpy(name, d->name, sizeof(name));
			r = set_one(f, name);
			if (l == 0)
				assert_int_equal(st, VPERF_EPERM);
			if (st == VPERF_EPERM)
				assert_int_equal(r, -VPERF_EPERM);
			else
				assert_int_not_equal(r, -VPERF_EPERM);
			listed += l == 1;
			ok += l == 1 && st == 0;
			eperm += l == 1 && st == VPERF_EPERM;
		}
		fixture_delete(f);
	}
	print_message("skl with raw:*: %" PRIu64 " events listed, %" PRIu64 " allowed, %" PRIu64
		      " refused\n", listed, ok, eperm);
	assert_true(ok > 10);
	/* FP_ASSIST, ARITH (cmask), OFFCORE_RESPONSE_0 and _1 (config1) */
	assert_true(eperm >= 4);
}

/* ---- zen3: AMD Zen 3's core PMU (LIBPFM_FORCE_PMU=amd64_fam19h_zen3) ---- */

static void amd_core_events_are_raw_events_with_amds_layout(void **state)
{
	struct fixture *f = fixture_new(NULL, 0);

	(void)state;
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS");
	fixture_delete(f);
	f = NEW("raw:*");
	accepted(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS");
	decided(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS",
		"amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", 0xc0);
	/* event 0x1d0: its bits 8-11 are config bits 32-35 on AMD */
	decided(f, "amd64_fam19h_zen3::RETIRED_FUSED_INSTRUCTIONS",
		"amd64_fam19h_zen3::RETIRED_FUSED_INSTRUCTIONS", 0x1000000d0);
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:e=1:c=1");
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:i=1:c=1");
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:c=2");
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:pinned");
	refused(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:excl");
	fixture_delete(f);
	f = NEW("raw:*", "rawmod:*");
	decided(f, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:e=1:c=1",
		"amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", 0x10400c0);
	fixture_delete(f);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest generic[] = {
		cmocka_unit_test(default_list_allows_generic_events_only),
		cmocka_unit_test(modifiers_no_guest_gets_are_refused_whatever_the_list),
		cmocka_unit_test(raw_configs_keep_event_and_umask_only),
		cmocka_unit_test(raw_filters_need_the_operators_word_each),
		cmocka_unit_test(the_list_matches_the_encoding_not_the_text),
	};
	static const struct CMUnitTest skl[] = {
		cmocka_unit_test(intel_core_events_are_raw_events),
		cmocka_unit_test(intel_any_thread_is_never_allowed),
		cmocka_unit_test(intel_edge_inv_cmask_need_the_operators_word),
		cmocka_unit_test(intel_precise_exclusive_and_extra_registers_are_refused),
		cmocka_unit_test(intel_event_list_says_what_counters_set_does),
	};
	static const struct CMUnitTest zen3[] = {
		cmocka_unit_test(amd_core_events_are_raw_events_with_amds_layout),
	};
	const char *group = argc == 2 ? argv[1] : "";
	const char *force = NULL;

	if (!strcmp(group, "skl"))
		force = "skl";
	else if (!strcmp(group, "zen3"))
		force = "amd64_fam19h_zen3";
	else if (strcmp(group, "generic")) {
		fprintf(stderr, "usage: test-hv-allow generic|skl|zen3\n");
		return 2;
	}
	/* before libpfm4 initializes (the device does it once, at its first encoding) */
	if (force && setenv("LIBPFM_FORCE_PMU", force, 1))
		return 1;
	if (hv_pfm_ready()) {
		printf("SKIP: libpfm4 does not initialize%s%s\n",
		       force ? " with LIBPFM_FORCE_PMU=" : "", force ? force : "");
		return 77;
	}
	if (!strcmp(group, "skl"))
		return cmocka_run_group_tests_name("skl", skl, NULL, NULL);
	if (!strcmp(group, "zen3"))
		return cmocka_run_group_tests_name("zen3", zen3, NULL, NULL);
	return cmocka_run_group_tests_name("generic", generic, NULL, NULL);
}
