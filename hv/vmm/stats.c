// SPDX-License-Identifier: MIT
/* The VMM's exit accounting (see stats.h). */
#include <errno.h>
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pvport.h"
#include "stats.h"
#include "vm.h"

static const char *const exit_names[] = {
	[KVM_EXIT_UNKNOWN] = "UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "EXCEPTION",
	[KVM_EXIT_IO] = "IO",
	[KVM_EXIT_HYPERCALL] = "HYPERCALL",
	[KVM_EXIT_DEBUG] = "DEBUG",
	[KVM_EXIT_HLT] = "HLT",
	[KVM_EXIT_MMIO] = "MMIO",
	[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
	[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
	[KVM_EXIT_INTR] = "INTR",
	[KVM_EXIT_SET_TPR] = "SET_TPR",
	[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
	[KVM_EXIT_NMI] = "NMI",
	[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
	[KVM_EXIT_WATCHDOG] = "WATCHDOG",
	[KVM_EXIT_EPR] = "EPR",
	[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	[KVM_EXIT_IOAPIC_EOI] = "IOAPIC_EOI",
	[KVM_EXIT_HYPERV] = "HYPERV",
	[KVM_EXIT_X86_RDMSR] = "X86_RDMSR",
	[KVM_EXIT_X86_WRMSR] = "X86_WRMSR",
	[KVM_EXIT_DIRTY_RING_FULL] = "DIRTY_RING_FULL",
	[KVM_EXIT_AP_RESET_HOLD] = "AP_RESET_HOLD",
	[KVM_EXIT_X86_BUS_LOCK] = "X86_BUS_LOCK",
	[KVM_EXIT_XEN] = "XEN",
#ifdef KVM_EXIT_NOTIFY
	[KVM_EXIT_NOTIFY] = "NOTIFY",
#endif
};
_Static_assert(ARRAY_SIZE(exit_names) <= STATS_EXIT_REASONS, "exit reason table");

const char *stats__exit_name(uint32_t reason)
{
	if (reason < ARRAY_SIZE(exit_names) && exit_names[reason])
		return exit_names[reason];
	return NULL;
}

/* The same names in lowercase, for the guest's event list (libvperf-hv's exit_name). */
static char exit_short[ARRAY_SIZE(exit_names)][24];
static pthread_once_t exit_short_once = PTHREAD_ONCE_INIT;

static void exit_short_build(void)
{
	for (size_t r = 0; r < ARRAY_SIZE(exit_names); r++) {
		const char *n = exit_names[r];

		for (size_t i = 0; n && n[i] && i < sizeof(exit_short[r]) - 1; i++)
			exit_short[r][i] = (char)tolower((unsigned char)n[i]);
	}
}

const char *stats__exit_short_name(uint32_t reason)
{
	if (!stats__exit_name(reason))
		return NULL;
	pthread_once(&exit_short_once, exit_short_build);
	return exit_short[reason];
}

void stats__count_exit(struct vcpu_stats *st, uint32_t reason)
{
	if (reason < STATS_EXIT_REASONS)
		st->exits[reason]++;
	else
		st->exits_other++;
}

static struct port_count *port_slot(struct vcpu_stats *st, uint32_t key, bool insert)
{
	uint32_t h = (key * 2654435761u) >> 24;	/* 8 bits: STATS_PORT_SLOTS */
	unsigned int i;

	_Static_assert(STATS_PORT_SLOTS == 256, "hash width");
	for (i = 0; i < STATS_PORT_SLOTS; i++) {
		struct port_count *pc = &st->ports[(h + i) % STATS_PORT_SLOTS];

		if (pc->key == key)
			return pc;
		if (!pc->key) {
			if (!insert)
				return NULL;
			pc->key = key;
			return pc;
		}
	}
	return NULL;
}

static uint32_t port_key(uint16_t port, bool is_write)
{
	return STATS_PORT_USED | (uint32_t)is_write << 16 | port;
}

void stats__count_port(struct vcpu_stats *st, uint16_t port, bool is_write, uint64_t n)
{
	struct port_count *pc = port_slot(st, port_key(port, is_write), true);

	if (pc)
		pc->count += n;
	else
		st->ports_untracked += n;
}

uint64_t stats__port_count(const struct vcpu_stats *st, uint16_t port, bool is_write)
{
	struct port_count *pc = port_slot((struct vcpu_stats *)st, port_key(port, is_write), false);

	return pc ? pc->count : 0;
}

/* Ports in ascending order (the table is hashed): index of the next smallest key above `after`. */
static int next_port(const struct vcpu_stats *st, uint32_t after)
{
	int best = -1;
	unsigned int i;

	for (i = 0; i < STATS_PORT_SLOTS; i++) {
		uint32_t k = st->ports[i].key;

		if (k && k > after && (best < 0 || k < st->ports[best].key))
			best = (int)i;
	}
	return best;
}

static void print_u64(FILE *f, unsigned int cpu, const char *what, uint64_t v)
{
	if (v)
		fprintf(f, "vperf-vmm: stats: vcpu%u %s %" PRIu64 "\n", cpu, what, v);
}

void stats__print(const struct vm *vm, FILE *f)
{
	unsigned int c, r;
	char name[64];

	for (c = 0; c < vm->nr_vcpus; c++) {
		const struct vcpu_stats *st = &vm->vcpus[c].stats;
		uint32_t key = 0;
		int i;

		print_u64(f, c, "kvm_run", st->runs);
		print_u64(f, c, "kvm_run_eintr", st->run_eintr);
		for (r = 0; r < STATS_EXIT_REASONS; r++) {
			const char *n = stats__exit_name(r);

			if (n)
				snprintf(name, sizeof(name), "exit %s", n);
			else
				snprintf(name, sizeof(name), "exit %u", r);
			print_u64(f, c, name, st->exits[r]);
		}
		print_u64(f, c, "exit other", st->exits_other);
		while ((i = next_port(st, key)) >= 0) {
			key = st->ports[i].key;
			snprintf(name, sizeof(name), "io 0x%04x %s", key & 0xffff,
				 (key >> 16 & 1) ? "out" : "in");
			print_u64(f, c, name, st->ports[i].count);
		}
		print_u64(f, c, "io untracked", st->ports_untracked);
		print_u64(f, c, "io unhandled", st->io_unhandled);
		print_u64(f, c, "mmio unhandled read", st->mmio_unhandled_read);
		print_u64(f, c, "mmio unhandled write", st->mmio_unhandled_write);
		for (r = 0; r < VPERF_HC_NR_OPS; r++) {
			snprintf(name, sizeof(name), "vperf %s", pvport__op_name(r));
			print_u64(f, c, name, st->pv_ops[r]);
		}
		print_u64(f, c, "vperf unknown-op", st->pv_unknown_ops);
		print_u64(f, c, "vperf bad-access", st->pv_bad_access);
		print_u64(f, c, "vperf doorbell", st->pv_doorbell);
	}
}

int stats__write_json(const struct vm *vm, int status, const char *path)
{
	/* 0600 and never through a symbolic link, as every file vperf-vmm writes */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	unsigned int c, r;
	int err = 0;

	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	fprintf(f, "{\n  \"format\": \"vperf-vmm-stats\",\n  \"version\": 1,\n");
	fprintf(f, "  \"stop\": \"%s\",\n  \"status\": %d,\n  \"vcpus\": [",
		vm__stop_reason_name(vm->stop_reason), status);
	for (c = 0; c < vm->nr_vcpus; c++) {
		const struct vcpu_stats *st = &vm->vcpus[c].stats;
		const char *sep = "";
		uint32_t key = 0;
		int i;

		fprintf(f,
			"%s\n    {\n      \"id\": %u,\n      \"kvm_run\": %" PRIu64
			",\n      \"kvm_run_eintr\": %" PRIu64 ",\n      \"exits\": {",
			c ? "," : "", c, st->runs, st->run_eintr);
		for (r = 0; r < STATS_EXIT_REASONS; r++) {
			const char *n = stats__exit_name(r);

			if (!st->exits[r])
				continue;
			if (n)
				fprintf(f, "%s\"%s\": %" PRIu64, sep, n, st->exits[r]);
			else
				fprintf(f, "%s\"%u\": %" PRIu64, sep, r, st->exits[r]);
			sep = ", ";
		}
		if (st->exits_other)
			fprintf(f, "%s\"other\": %" PRIu64, sep, st->exits_other);
		fprintf(f, "},\n      \"io\": [");
		sep = "";
		while ((i = next_port(st, key)) >= 0) {
			key = st->ports[i].key;
			fprintf(f, "%s{\"port\": %u, \"dir\": \"%s\", \"count\": %" PRIu64 "}", sep,
				key & 0xffff, (key >> 16 & 1) ? "out" : "in", st->ports[i].count);
			sep = ", ";
		}
		fprintf(f,
			"],\n      \"io_untracked\": %" PRIu64 ",\n      \"io_unhandled\": %" PRIu64
			",\n      \"mmio_unhandled\": {\"read\": %" PRIu64 ", \"write\": %" PRIu64
			"},\n"
			"      \"vperf_ops\": {",
			st->ports_untracked, st->io_unhandled, st->mmio_unhandled_read,
			st->mmio_unhandled_write);
		sep = "";
		for (r = 0; r < VPERF_HC_NR_OPS; r++) {
			if (!st->pv_ops[r])
				continue;
			fprintf(f, "%s\"%s\": %" PRIu64, sep, pvport__op_name(r), st->pv_ops[r]);
			sep = ", ";
		}
		fprintf(f,
			"},\n      \"vperf_unknown_ops\": %" PRIu64
			",\n      \"vperf_bad_access\": %" PRIu64
			",\n      \"vperf_doorbell\": %" PRIu64 "\n    }",
			st->pv_unknown_ops, st->pv_bad_access, st->pv_doorbell);
	}
	fprintf(f, "\n  ]\n}\n");
	if (ferror(f))
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}
