// SPDX-License-Identifier: MIT
/*
 * The hardware's exit reasons by name (states.h): AMD's SVM exit codes and Intel's VMX basic
 * exit reasons, as kvm_exit reports them.
 */
#include <stddef.h>

#include "states.h"

/* ---- exit reasons: the hardware's codes (AMD APM vol. 2 appendix C; Intel SDM vol. 3 C) ---- */

static const char *const svm_names_60[] = {
	"intr", "nmi", "smi", "init", "vintr", "cr0_sel_write", "idtr_read", "gdtr_read",
	"ldtr_read", "tr_read", "idtr_write", "gdtr_write", "ldtr_write", "tr_write", "rdtsc",
	"rdpmc", "pushf", "popf", "cpuid", "rsm", "iret", "swint", "invd", "pause", "hlt",
	"invlpg", "invlpga", "ioio", "msr", "task_switch", "ferr_freeze", "shutdown", "vmrun",
	"vmmcall", "vmload", "vmsave", "stgi", "clgi", "skinit", "rdtscp", "icebp", "wbinvd",
	"monitor", "mwait", "mwait_cond", "xsetbv", "rdpru", "efer_write_trap",
};

static const char *const vmx_names[] = {
	[0] = "exception_nmi", [1] = "external_interrupt", [2] = "triple_fault",
	[3] = "init_signal", [7] = "interrupt_window", [8] = "nmi_window", [9] = "task_switch",
	[10] = "cpuid", [12] = "hlt", [13] = "invd", [14] = "invlpg", [15] = "rdpmc",
	[16] = "rdtsc", [18] = "vmcall", [28] = "cr_access", [29] = "dr_access",
	[30] = "io_instruction", [31] = "msr_read", [32] = "msr_write", [33] = "invalid_state",
	[36] = "mwait", [37] = "monitor_trap_flag", [39] = "monitor", [40] = "pause",
	[43] = "tpr_below_threshold", [44] = "apic_access", [45] = "eoi_induced",
	[48] = "ept_violation", [49] = "ept_misconfig", [52] = "preemption_timer",
	[54] = "wbinvd", [55] = "xsetbv", [56] = "apic_write", [62] = "pml_full",
	[74] = "bus_lock", [75] = "notify",
};

const char *vperf_report_exit_name(uint64_t reason, bool svm)
{
	if (!svm)
		return reason < sizeof(vmx_names) / sizeof(vmx_names[0]) ? vmx_names[reason] : NULL;
	if (reason < 0x10)
		return "cr_read";
	if (reason < 0x20)
		return "cr_write";
	if (reason < 0x30)
		return "dr_read";
	if (reason < 0x40)
		return "dr_write";
	if (reason < 0x60)
		return "exception";
	if (reason - 0x60 < sizeof(svm_names_60) / sizeof(svm_names_60[0]))
		return svm_names_60[reason - 0x60];
	switch (reason) {
	case 0x400: return "npf";
	case 0x401: return "avic_incomplete_ipi";
	case 0x402: return "avic_unaccelerated_access";
	case 0x403: return "vmgexit";
	default: return NULL;
	}
}
