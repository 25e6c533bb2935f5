/* SPDX-License-Identifier: MIT */
/* What the CLI reads from /proc: thread names and liveness. */
#ifndef VPERF_CLI_PROC_H
#define VPERF_CLI_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Linux's comm is at most 15 characters. */
#define COMM_LEN 16

/* /proc/<tid>/comm into buf, without the newline.  0 or -errno. */
int proc_read_comm(pid_t tid, char *buf, size_t len);

/*
 * The state letter of thread tid (R, S, D, Z, ...) from /proc/<tid>/stat,
 * or -errno (-ENOENT: no such thread).
 */
int proc_task_state(pid_t tid);

/* Is tid a thread that has not exited (not gone, not a zombie)? */
bool proc_task_alive(pid_t tid);

/* The threads of process pid now (/proc/pid/task), malloc'd into *out: 0, -ESRCH none, -errno. */
int proc_task_list(pid_t pid, pid_t **out, size_t *nr);

/* The thread group (process) id of tid, or -errno. */
pid_t proc_tgid(pid_t tid);

/*
 * Does the kernel list a core PMU (/sys/bus/event_source/devices/cpu or
 * cpu_core)?  Without one, no hardware event can be counted.
 */
bool sys_has_cpu_pmu(void);

/* Names of threads, remembered while they live, for after they exit. */
struct comm_cache {
	struct comm_entry {
		pid_t tid;
		char comm[COMM_LEN];
	} *v;
	size_t n, cap;
};

/* Remember the names of every thread of process pid now. */
void comm_cache__scan(struct comm_cache *c, pid_t pid);
/* Remember tid's name now (a thread target).  0 or -errno. */
int comm_cache__add(struct comm_cache *c, pid_t tid);
/* The last name seen for tid, or NULL. */
const char *comm_cache__get(const struct comm_cache *c, pid_t tid);
void comm_cache__exit(struct comm_cache *c);

#endif /* VPERF_CLI_PROC_H */
