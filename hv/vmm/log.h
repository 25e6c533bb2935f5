/* SPDX-License-Identifier: MIT */
/*
 * Messages of vperf-vmm, on stderr, one write per message, prefixed "vperf-vmm: ". The level is
 * process-wide (set once by main from --debug / --quiet); everything else about a VM lives in
 * struct vm.
 */
#ifndef VMM_LOG_H
#define VMM_LOG_H

enum vmm_log_level {
	VMM_LOG_NONE = -1,	/* unit tests: silence */
	VMM_LOG_ERR = 0,
	VMM_LOG_WARN,
	VMM_LOG_INFO,
	VMM_LOG_DEBUG,
};

void vmm_log_set_level(int level);
int vmm_log_get_level(void);
void vmm_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_err(...)	vmm_log(VMM_LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	vmm_log(VMM_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	vmm_log(VMM_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	vmm_log(VMM_LOG_DEBUG, __VA_ARGS__)

#endif /* VMM_LOG_H */
