// SPDX-License-Identifier: MIT
/* Building, running and stopping one guest (see vmm.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "acpi.h"
#include "boot.h"
#include "cpuid.h"
#include "log.h"
#include "pvdev.h"
#include "record.h"
#include "platform.h"
#include "pvport.h"
#include "vmm.h"

#define PANIC_GRACE_S 5	 /* after a panic line, wait this long for the guest to reboot itself */
#define SILENT_WARN_S 60 /* warn when the guest has not exited to user space for this long */

/* The UART's callbacks: interrupts into the in-kernel irqchip, bytes to the console. */
static void uart_set_irq(void *ctx, unsigned int irq, int level)
{
	struct vm *vm = ctx;
	int err = vm__irq_line(vm, irq, level);

	if (err)
		pr_warn("KVM_IRQ_LINE %u: %s", irq, strerror(-err));
}

static void uart_tx(void *ctx, uint8_t byte)
{
	struct vm *vm = ctx;

	console__tx(&vm->console, byte);
}

static void uart_tx_idle(void *ctx)
{
	struct vm *vm = ctx;

	console__flush(&vm->console);
}

static const struct serial8250_ops uart_ops = {
	.set_irq = uart_set_irq,
	.tx = uart_tx,
	.tx_idle = uart_tx_idle,
};

int vmm__setup_devices(struct vm *vm)
{
	int err;

	err = serial8250__init(&vm->uart, SERIAL_COM1_IRQ, &uart_ops, vm);
	if (err)
		return err;
	err = ioport_bus__register(&vm->iobus, SERIAL_COM1_BASE, SERIAL_NR_REGS, serial8250__io,
				   &vm->uart, "serial");
	if (err) {
		pr_err("registering the UART: %s", strerror(-err));
		goto err_uart;
	}
	err = platform__init(vm);
	if (err)
		goto err_uart;
	err = vmm_pv_init(vm);
	if (err)
		goto err_uart;
	err = pvport__init(vm);
	if (err)
		goto err_pv;
	return 0;

err_pv:
	vmm_pv_exit(vm);
err_uart:
	serial8250__exit(&vm->uart);
	return err;
}

static void destroy_vcpus(struct vm *vm)
{
	while (vm->nr_vcpus)
		vcpu__exit(&vm->vcpus[--vm->nr_vcpus]);
}

int vmm__setup(struct vm *vm, const struct vm_config *cfg)
{
	struct boot_image img;
	struct boot_info bi;
	uint64_t rsdp;
	unsigned int i;
	int err;

	/* The user's files first: their errors do not depend on the host's KVM. */
	err = boot__prepare(cfg->kernel, cfg->initrd, MIN(cfg->mem_size, VM_PCI_HOLE_START), &img);
	if (err)
		return err;
	err = vm__init(vm, cfg);
	if (err)
		goto err_img;
	err = cpuid__init(vm);
	if (err)
		goto err_vm;
	err = console__init(&vm->console, cfg->console_log, cfg->console_input, cfg->raw_console,
			    vm__console_line, vm);
	if (err)
		goto err_vm;
	err = vmm__setup_devices(vm);
	if (err)
		goto err_console;
	err = acpi__setup(vm, &rsdp);
	if (err)
		goto err_devices;
	err = boot__load_linux(vm, &img, rsdp, &bi);
	if (err)
		goto err_devices;
	for (i = 0; i < cfg->nr_vcpus; i++) {
		err = vcpu__init(vm, i);
		if (err)
			goto err_vcpus;
		vm->nr_vcpus = i + 1;
	}
	err = boot__setup_bsp(&vm->vcpus[0], &bi);
	if (err)
		goto err_vcpus;
	boot__release(&img);
	return 0;

err_vcpus:
	destroy_vcpus(vm);
err_devices:
	vmm_pv_exit(vm);
	serial8250__exit(&vm->uart);
err_console:
	console__exit(&vm->console);
err_vm:
	vm__exit(vm);
err_img:
	boot__release(&img);
	return err;
}

void vmm__teardown(struct vm *vm)
{
	destroy_vcpus(vm);
	vmm_pv_exit(vm);
	console__exit(&vm->console);
	serial8250__exit(&vm->uart);
	vm__exit(vm);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double ts_s(const struct timespec *ts)
{
	return (double)ts->tv_sec + (double)ts->tv_nsec / 1e9;
}

/*
 * Main thread: wait until something asks the VM to stop, or the timeout, a panic or a signal does.
 */
static void wait_for_stop(struct vm *vm, int sigfd, unsigned int timeout_s)
{
	double start = now_s(), deadline = timeout_s ? start + timeout_s : 0;
	double next_probe = start + VCPU_PROBE_S;
	bool warned = false;
	struct pollfd pfd[2] = {
		{ .fd = vm->stop_fd, .events = POLLIN },
		{ .fd = sigfd, .events = POLLIN },
	};

	while (!vm__stopping(vm)) {
		double wait = -1, t = now_s();
		uint64_t v;

		if (deadline) {
			if (t >= deadline) {
				pr_err("timeout: the guest still runs after %u s; stopping it",
				       timeout_s);
				vm__request_stop(vm, VM_STOP_TIMEOUT, VM_EXIT_TIMEOUT);
				break;
			}
			wait = deadline - t;
		}
		if (t >= next_probe) {
			unsigned int i;

			for (i = 0; i < vm->nr_vcpus; i++)
				vcpu__probe(&vm->vcpus[i]);
			next_probe = t + VCPU_PROBE_S;
		}
		if (!warned && !atomic_load(&vm->guest_ran) && t - start > SILENT_WARN_S) {
			pr_warn("no exit from the guest in %d s: a KVM that cannot run normal "
				"guests looks like this (if so, run vperf-vmm nested: "
				"tests/vm/run-nested.sh); a slow host may just be slow",
				SILENT_WARN_S);
			warned = true;
		}
		if (atomic_load(&vm->panic_seen)) {
			double left = ts_s(&vm->panic_time) + PANIC_GRACE_S - t;

			if (left <= 0) {
				pr_err("the guest kernel panicked and did not reboot within %d s; "
				       "stopping it",
				       PANIC_GRACE_S);
				vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
				break;
			}
			if (wait < 0 || left < wait)
				wait = left;
		} else if (wait < 0 || wait > 1.0) {
			wait = 1.0;	/* notice a panic line within a second */
		}
		if (poll(pfd, 2, (int)(wait * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents && read(vm->stop_fd, &v, sizeof(v)) < 0)
			v = 0;
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				pr_info("%s: stopping the guest", strsignal((int)si.ssi_signo));
				vm->stop_signal = (int)si.ssi_signo;
				vm__request_stop(vm, VM_STOP_SIGNAL, 128 + (int)si.ssi_signo);
			}
		}
	}
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

int vmm__block_signals(void)
{
	sigset_t block;

	/* A broken stdout must not kill the VMM: it notes the error instead. */
	signal(SIGPIPE, SIG_IGN);
	stop_signals(&block);
	sigaddset(&block, VCPU_KICK_SIGNAL);
	return -pthread_sigmask(SIG_BLOCK, &block, NULL);
}

int vmm__run(struct vm *vm, unsigned int timeout_s)
{
	sigset_t stop_sigs;
	unsigned int i;
	int sigfd, err = 0;

	/* The stop signals are blocked (vmm__block_signals): they reach only this signalfd. */
	stop_signals(&stop_sigs);
	sigfd = signalfd(-1, &stop_sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		err = -errno;
		pr_err("signalfd: %s", strerror(-err));
		return err;
	}
	err = vcpu__setup_signals();
	if (err) {
		pr_err("installing the vCPU kick signal: %s", strerror(-err));
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &vm->start_time);
	err = console__start(&vm->console, &vm->uart);
	if (err)
		goto out;
	for (i = 0; i < vm->nr_vcpus; i++) {
		err = vcpu__start(&vm->vcpus[i]);
		if (err) {
			vm__request_stop(vm, VM_STOP_ERROR, VM_EXIT_VMM_ERROR);
			break;
		}
	}
	if (!err && vm->rec && recorder__start(vm->rec)) {
		/* a recording was asked for: do not run without one */
		vm__request_stop(vm, VM_STOP_ERROR, VM_EXIT_VMM_ERROR);
		err = -EIO;
	}
	if (!err)
		wait_for_stop(vm, sigfd, timeout_s);
	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu__kick(&vm->vcpus[i]);
	for (i = 0; i < vm->nr_vcpus; i++)
		vcpu__join(&vm->vcpus[i]);
	recorder__stop(vm->rec);	/* after the vCPUs: their last exits and records */
	console__stop(&vm->console);
out:
	close(sigfd);
	return err;
}

int vmm__exit_status(struct vm *vm)
{
	bool panicked = atomic_load(&vm->panic_seen);

	switch (vm->stop_reason) {
	case VM_STOP_GUEST_EXIT:
		return vm->stop_status;
	case VM_STOP_POWEROFF:
	case VM_STOP_REBOOT:
		/* panic=-1 makes a panicking kernel reboot: that is a crash, not a clean reboot */
		return panicked ? VM_EXIT_CRASH : 0;
	case VM_STOP_CRASH:
		return VM_EXIT_CRASH;
	case VM_STOP_TIMEOUT:
		return VM_EXIT_TIMEOUT;
	case VM_STOP_FROZEN:
		return VM_EXIT_FROZEN;
	case VM_STOP_SIGNAL:
		return 128 + vm->stop_signal;
	case VM_STOP_ERROR:
	case VM_STOP_NONE:
	default:
		return VM_EXIT_VMM_ERROR;
	}
}
