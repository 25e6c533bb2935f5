// SPDX-License-Identifier: MIT
/* vperf-vmm's side of libvperf-hv (see pvdev.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <vperf/hv.h>

#include "log.h"
#include "pvdev.h"
#include "record.h"
#include "vm.h"

static void *pv_gpa_to_hva(void *vmm, uint64_t gpa, uint64_t len)
{
	return vm__gpa_to_hva(vmm, gpa, len);
}

/* An edge on an ISA interrupt line. */
static int pv_irq_raise(void *vmm, uint32_t gsi)
{
	int err = vm__irq_line(vmm, gsi, 1);

	return err ? err : vm__irq_line(vmm, gsi, 0);
}

/* From vCPU `vcpu`'s own thread, between KVM_RUNs: KVM delivers it at the next entry. */
static int pv_nmi_raise(void *vmm, int vcpu)
{
	return ioctl(((struct vm *)vmm)->vcpus[vcpu].fd, KVM_NMI) ? -errno : 0;
}

/* Called from vCPU `vcpu`'s own thread, the only writer of its counters. */
static uint64_t pv_exit_count(void *vmm, int vcpu, uint32_t reason)
{
	const struct vcpu_stats *st = &((struct vm *)vmm)->vcpus[vcpu].stats;
	uint64_t n = 0;

	if (reason != UINT32_MAX)
		return reason < STATS_EXIT_REASONS ? st->exits[reason] : 0;
	for (unsigned int r = 0; r < STATS_EXIT_REASONS; r++)
		n += st->exits[r];
	return n + st->exits_other;
}

/* The reasons pv_exit_count counts on their own, for the guest's event list. */
static const char *pv_exit_name(void *vmm, uint32_t reason)
{
	(void)vmm;
	return reason < STATS_EXIT_REASONS ? stats__exit_short_name(reason) : NULL;
}

static int pv_stats_fd(void *vmm, int vcpu)
{
	struct vcpu *v = &((struct vm *)vmm)->vcpus[vcpu];

	if (v->stats_fd < 0)
		v->stats_fd = ioctl(v->fd, KVM_GET_STATS_FD, NULL);
	return v->stats_fd;
}

static void pv_guest_exit(void *vmm, int vcpu, uint32_t status)
{
	pr_debug("vcpu%d: guest exit with status %" PRIu32, vcpu, status);
	vm__request_stop(vmm, VM_STOP_GUEST_EXIT, (int)status);
}

/* "guest: ..." on stderr in one write, printable ASCII only (it goes to a terminal). */
static void guest_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void guest_line(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	for (int i = 0; i < n; i++)
		if (buf[i] < 0x20 || buf[i] > 0x7e)
			buf[i] = '?';
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

/* libvperf-hv validated uc (cmd, nr_args <= 8, msg terminated). */
/*
 * The calling thread's context switches as the host counts them
 * (/proc/thread-self/status), for VALUES reports: a guest's per-thread
 * count of its vCPU's host preemptions has this to be checked against.
 */
static void thread_switches(char *buf, size_t len)
{
	unsigned long long vol = 0, nonvol = 0;
	char line[128];
	int found = 0;
	FILE *f = fopen("/proc/thread-self/status", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		found += sscanf(line, "voluntary_ctxt_switches: %llu", &vol) == 1;
		found += sscanf(line, "nonvoluntary_ctxt_switches: %llu", &nonvol) == 1;
	}
	fclose(f);
	if (found == 2)
		snprintf(buf, len, "voluntary %llu nonvoluntary %llu", vol, nonvol);
}

static void pv_report(void *vmm, int vcpu, const struct vperf_ucall *uc)
{
	char sw[96];
	char args[8 * 20 + 1];
	size_t off = 0;

	args[0] = '\0';
	for (uint32_t i = 0; i < uc->nr_args && off < sizeof(args); i++) {
		int n = snprintf(args + off, sizeof(args) - off, " 0x%" PRIx64, (uint64_t)uc->args[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	switch (uc->cmd) {
	case VPERF_UCALL_PRINT:
		guest_line("guest: %s", uc->msg);
		break;
	case VPERF_UCALL_VALUES:
		thread_switches(sw, sizeof(sw));	/* we run on the vCPU's own thread */
		guest_line("guest: values: %s:%s [vcpu%d thread switches: %s]", uc->msg, args, vcpu, sw);
		break;
	case VPERF_UCALL_ASSERT:
		guest_line("guest: assertion failed on vcpu%d: %s%s%s", vcpu, uc->msg,
			   uc->nr_args ? ":" : "", args);
		vm__request_stop(vmm, VM_STOP_CRASH, VM_EXIT_CRASH);
		break;
	}
}

/* Version-2 trace records (docs/abi.md 2.5): into the recording, if there is one. */
static void pv_trace_records(void *vmm, int vcpu, const void *records, size_t len)
{
	recorder__guest_records(((struct vm *)vmm)->rec, (unsigned int)vcpu, records, len);
}

static void pv_trace_clock_sample(void *vmm, int vcpu, uint64_t guest_tsc)
{
	recorder__clock_sample(((struct vm *)vmm)->rec, (unsigned int)vcpu, guest_tsc);
}

static const struct vperf_hv_ops pv_ops = {
	.trace_records = pv_trace_records,
	.trace_clock_sample = pv_trace_clock_sample,
	.gpa_to_hva = pv_gpa_to_hva,
	.irq_raise = pv_irq_raise,
	.nmi_raise = pv_nmi_raise,
	.exit_count = pv_exit_count,
	.exit_name = pv_exit_name,
	.stats_fd = pv_stats_fd,
	.guest_exit = pv_guest_exit,
	.report = pv_report,
};

/* Append one pattern (a copy) to cfg's list. */
static int allow_push(struct vm_config *cfg, const char *pattern)
{
	char **list, *copy;

	if (cfg->nr_allow >= VMM_MAX_ALLOW) {
		pr_err("--allow: more than %d patterns", VMM_MAX_ALLOW);
		return -EINVAL;
	}
	copy = strdup(pattern);
	list = copy ? realloc(cfg->allow, (cfg->nr_allow + 1) * sizeof(*list)) : NULL;
	if (!list) {
		free(copy);
		pr_err("--allow: out of memory");
		return -ENOMEM;
	}
	list[cfg->nr_allow++] = copy;
	cfg->allow = list;
	return 0;
}

int vmm_pv_allow_add(struct vm_config *cfg, const char *list)
{
	unsigned int before = cfg->nr_allow;
	const char *p = list;
	char item[128];
	int err = 0;

	do {
		size_t n = strcspn(p, ",");

		if (!n || n >= sizeof(item)) {
			pr_err("--allow '%s': %s pattern (see --help)", list,
			       n ? "a too long" : "an empty");
			err = -EINVAL;
			break;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		if (!strcmp(item, "default")) {
			int nr;
			const char *const *dfl = vperf_hv__default_allow(&nr);

			for (int i = 0; i < nr && !err; i++)
				err = allow_push(cfg, dfl[i]);
		} else if (vperf_hv__allow_check(item)) {
			pr_err("--allow '%s': not SOURCE:GLOB with SOURCE one of hw, raw, rawmod, "
			       "sw, kvm, exits, steal (see --help)", item);
			err = -EINVAL;
		} else {
			err = allow_push(cfg, item);
		}
		p += n;
	} while (!err && *p++ == ',');
	if (err) {
		while (cfg->nr_allow > before)
			free(cfg->allow[--cfg->nr_allow]);
	}
	return err;
}

void vmm_pv_allow_free(struct vm_config *cfg)
{
	for (unsigned int i = 0; i < cfg->nr_allow; i++)
		free(cfg->allow[i]);
	free(cfg->allow);
	cfg->allow = NULL;
	cfg->nr_allow = 0;
}

int vmm_pv_init(struct vm *vm)
{
	struct vperf_hv_config cfg = {
		.size = sizeof(cfg),
		.nr_vcpus = (int)vm->cfg.nr_vcpus,
		.gsi = VPERF_DEFAULT_GSI,
		.doorbell_gpa = VM_DOORBELL_ADDR,
		.allow = (const char *const *)vm->cfg.allow,
		.nr_allow = (int)vm->cfg.nr_allow,
	};
	int err;

	if (!vm->cfg.allow)
		pr_debug("vperf device: the default allowlist");
	for (unsigned int i = 0; i < vm->cfg.nr_allow; i++)
		pr_debug("vperf device: allow %s", vm->cfg.allow[i]);
	err = vperf_hv__new(&cfg, &pv_ops, vm, &vm->pv);

	if (err)
		pr_err("creating the vperf device: %s", strerror(-err));
	return err;
}

void vmm_pv_exit(struct vm *vm)
{
	vperf_hv__delete(vm->pv);
	vm->pv = NULL;
}

int64_t vmm_pv_hypercall(struct vcpu *vcpu, uint32_t op, const uint64_t args[4])
{
	return vperf_hv__hypercall(vcpu->vm->pv, (int)vcpu->id, op, args);
}

bool vmm_pv_doorbell(struct vcpu *vcpu, uint64_t gpa, uint32_t len, bool is_write, uint8_t *data)
{
	uint64_t v;

	if (!vcpu->vm->pv || gpa < VM_DOORBELL_ADDR || gpa - VM_DOORBELL_ADDR >= VPERF_DOORBELL_SIZE)
		return false;
	/* a write counts as a load that returns nothing: the guest gets no effect */
	vperf_hv__doorbell_read(vcpu->vm->pv, (int)vcpu->id, is_write ? ~0ull : gpa - VM_DOORBELL_ADDR,
				len, &v);
	if (!is_write)
		memcpy(data, &v, MIN(len, (uint32_t)sizeof(v)));
	return true;
}

uint32_t vmm_pv_features(struct vm *vm)
{
	return vm->pv ? vperf_hv__features(vm->pv) : 0;
}

void vmm_pv_vcpu_enter(struct vcpu *vcpu)
{
	int err = vperf_hv__vcpu_enter(vcpu->vm->pv, (int)vcpu->id);

	if (err)
		pr_err("vcpu%u: the vperf device cannot use this thread: %s", vcpu->id, strerror(-err));
}

void vmm_pv_vcpu_exit(struct vcpu *vcpu)
{
	vperf_hv__vcpu_exit(vcpu->vm->pv, (int)vcpu->id);
}
