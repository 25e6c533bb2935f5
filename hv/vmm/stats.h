/* SPDX-License-Identifier: MIT */
/*
 * The VMM's own exit accounting: per vCPU, KVM_RUN calls, exits by KVM exit reason, port-I/O exits
 * by port and direction, vperf hypercalls by operation, unhandled port and MMIO accesses. Each vCPU
 * thread writes only its own counters; they are read after the vCPU threads have stopped (or by
 * that same thread).
 */
#ifndef VMM_STATS_H
#define VMM_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vperf/abi.h>

#define STATS_EXIT_REASONS	64
#define STATS_PORT_SLOTS	256	/* open addressing; a guest uses a few dozen ports */

struct port_count {
	uint32_t key;			/* 0: free; else STATS_PORT_USED | is_write << 16 | port */
	uint64_t count;
};
#define STATS_PORT_USED		(1u << 17)

struct vcpu_stats {
	uint64_t runs;			/* KVM_RUN calls */
	uint64_t run_eintr;		/* KVM_RUN returned EINTR (kicks, signals) */
	uint64_t exits[STATS_EXIT_REASONS];
	uint64_t exits_other;		/* exit reasons past the table */
	struct port_count ports[STATS_PORT_SLOTS];
	uint64_t ports_untracked;	/* accesses whose port did not fit in the table */
	uint64_t io_unhandled;		/* accesses to ports without a device */
	uint64_t mmio_unhandled_read, mmio_unhandled_write;
	uint64_t pv_ops[VPERF_HC_NR_OPS];
	uint64_t pv_unknown_ops;	/* op >= VPERF_HC_NR_OPS */
	uint64_t pv_bad_access;		/* reads, or writes other than 32 bits at the port */
	uint64_t pv_doorbell;		/* loads (and writes) of the doorbell page */
};

void stats__count_exit(struct vcpu_stats *st, uint32_t reason);
/* n accesses (a string I/O exit counts each element) */
void stats__count_port(struct vcpu_stats *st, uint16_t port, bool is_write, uint64_t n);
uint64_t stats__port_count(const struct vcpu_stats *st, uint16_t port, bool is_write);
const char *stats__exit_name(uint32_t reason);
/* The same name in lowercase ("io", "hlt", "irq_window_open"), or NULL. */
const char *stats__exit_short_name(uint32_t reason);

struct vm;
/* One line per non-zero counter: "stats: vcpu0 exit IO 1234". */
void stats__print(const struct vm *vm, FILE *f);
/* The same as one JSON object, with the exit status; returns 0 or -errno. */
int stats__write_json(const struct vm *vm, int status, const char *path)
	__attribute__((warn_unused_result));

#endif /* VMM_STATS_H */
