/* SPDX-License-Identifier: MIT */
/*
 * vperf_report: a recording read back for reports (docs/report.md): its samples with each
 * frame's symbol, and the histograms `vperf report` prints and `vperf export` writes.
 *
 *	struct vperf_report *r;
 *	if (vperf_report__open(dir, &r, why, sizeof(why)))		// babeltrace2 reads dir
 *		fail(why);
 *	for (size_t i = 0; i < r->nr_samples; i++)
 *		for (each frame f of sample i)
 *			vperf_report__frame(r, f)->sym ...	// resolved once, cached
 *	vperf_report__delete(r);
 *
 * The recording is read with libbabeltrace2 (source.ctf.fs, filter.utils.muxer, and a sink of
 * ours that keeps what a report needs).  User-space frames resolve through the recording's
 * mmap events to the ELF symbols of the files they name (libelf), kernel frames through its
 * kernel_symbol events.  Analyses read the recording, and the executables and libraries it
 * names (as perf report does): a file rebuilt since the recording gives wrong names.
 *
 * 0 or a negative errno everywhere; a library function never prints.
 */
#ifndef VPERF_REPORT_H
#define VPERF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vperf_report_idx;

#define VPERF_REPORT_UNKNOWN	"[unknown]"
#define VPERF_REPORT_KERNEL_DSO	"[kernel.kallsyms]"
#define VPERF_REPORT_GUEST_KERNEL_DSO	"[guest.kernel.kallsyms]"	/* perf kvm's name */
/* An unknown frame's name where its DSO has no column of its own: "[unknown] in libc.so.6" */
#define VPERF_REPORT_UNKNOWN_IN	VPERF_REPORT_UNKNOWN " in %s"

/* Layers: the recording's packet context `layer`, named by vperf_schema_layer_names (schema.h). */

/* ---- symbols ----------------------------------------------------------- */

/* One function: [addr, addr + size) in its file's virtual addresses (or the kernel's). */
struct vperf_report_sym {
	uint64_t addr, size;
	const char *name;
	const char *module;		/* kernel symbols: "" (the kernel) or "[kvm]"; else NULL */
};

/* The function symbols of an ELF file (.symtab, else .dynsym) and its loadable segments. */
struct vperf_report_elf {
	char *path;
	int err;			/* 0: loaded; else why it could not be (-ENOENT...) */
	struct vperf_report_sym *syms;	/* sorted by addr, no overlaps */
	size_t nr_syms;
	char *strings;			/* the names */
	struct vperf_report_seg {
		uint64_t offset, vaddr, filesz;
	} *segs;
	size_t nr_segs;
};

/*
 * Open a file a recording names, to read (docs/report.md, section 1): path itself, or with root
 * path under root, every ".." and symbolic link on the way resolved as if root were "/" (a
 * guest's file system, a recording's directory), never above it.  Opened without waiting (a
 * FIFO opens, then is refused) and never through a symbolic link as its last component; only a
 * regular file is kept.  The descriptor, or -errno: -ENOENT, -EACCES, -ELOOP (a symbolic link),
 * -EISDIR, -EINVAL (a FIFO, a device, a socket), -EXDEV (outside root, where openat2(2) is
 * missing and the file opened is found above root).
 */
int vperf_report__open_file(const char *root, const char *path)
	__attribute__((warn_unused_result));

/*
 * Load the symbols of path (under root, when not NULL: vperf_report__open_file()): 0, or -errno
 * (those, -ENOEXEC: not ELF, -ENOMEM).  e->path is the file's name, root and path joined.
 */
int vperf_report_elf__load(struct vperf_report_elf *e, const char *path)
	__attribute__((warn_unused_result));
int vperf_report_elf__load_in(struct vperf_report_elf *e, const char *root, const char *path)
	__attribute__((warn_unused_result));
void vperf_report_elf__exit(struct vperf_report_elf *e);

/* The virtual address of a file offset (in a PT_LOAD segment); false if in none. */
bool vperf_report_elf__vaddr(const struct vperf_report_elf *e, uint64_t offset, uint64_t *vaddr);

/* The symbol holding addr in syms[0..nr) (sorted, non-overlapping), or NULL. */
const struct vperf_report_sym *vperf_report_sym_find(const struct vperf_report_sym *syms,
						     size_t nr, uint64_t addr);

/*
 * Sort syms by address and give each symbol without a size the room up to the next (last: none);
 * of symbols at one address the first kept.  Returns the new count.
 */
size_t vperf_report_syms_sort(struct vperf_report_sym *syms, size_t nr);

/* ---- a recording ------------------------------------------------------- */

/* A frame: an address in a process (or the kernel) and what it resolved to. */
struct vperf_report_frame {
	uint64_t ip;
	int32_t map;			/* the user mapping it is in, or -1 */
	bool kernel;
	bool guest;			/* a guest's frame: its mappings and kernel symbols */
	bool ret;			/* a caller's return address: looked up at ip - 1,
					 * inside the call (a call ending a function returns
					 * past it) */
	bool resolved;			/* looked up already */
	bool found;			/* a symbol holds it (else sym is VPERF_REPORT_UNKNOWN) */
	const char *sym;		/* VPERF_REPORT_UNKNOWN when no symbol holds it */
	const char *dso;		/* the file's base name, "[kernel.kallsyms]", "[kvm]"... */
};

struct vperf_report_map {
	uint64_t start, len, pgoff;
	uint32_t pid;
	bool guest;			/* file is a guest's path (vperf_report__guest_file()) */
	char *file;
	int32_t elf;			/* index in elfs, -1 until loaded (or not ELF) */
};

struct vperf_report_sample {
	uint64_t ts, period;		/* ts in ns on the recording's clock */
	uint32_t pid, tid, cpu;
	int32_t thread;			/* index in threads */
	uint8_t layer;
	uint32_t event;			/* index in events */
	uint32_t comm;			/* index in strings: the thread's name then */
	size_t frame, nr_frames;	/* frames[frame..+nr): leaf first (the ip, then callers) */
	size_t counts;			/* counts[counts..+nr_counts): the sampling NMI's */
	uint8_t nr_counts;		/* thread counts then (vm record), else 0 */
};

/*
 * A vm record sample of the sampling NMI (counts_are = thread_counts) carries the thread's vperf
 * counts as of the NMI, in this order (docs/abi.md 7.3): vperf::vcpu-clock, steal, exits.
 */
#define VPERF_REPORT_MAX_COUNTS	16
extern const char *const vperf_report_count_names[3];

/*
 * What a timeline needs besides samples (docs/report.md, section 4): scheduling, process life,
 * losses, markers and VMM exits, in time order.  thread and other are indices in threads (-1:
 * none); the other fields' meaning is per kind.
 */
enum vperf_report_ev_kind {
	VPERF_REPORT_EV_SWITCH_IN,	/* thread_switch in: thread now runs on cpu */
	VPERF_REPORT_EV_SWITCH_OUT,	/* thread_switch out; arg: preempted (1) or blocked */
	VPERF_REPORT_EV_SCHED_SWITCH,	/* sched_switch: thread (prev) out, other (next) in;
					 * arg: prev_state; arg2 and str: prev's and next's
					 * names then (indices in strings, UINT32_MAX: none) */
	VPERF_REPORT_EV_WAKEUP,		/* sched_wakeup: thread woken; arg: the waker's tid,
					 * arg2 target_cpu (UINT64_MAX: not recorded) */
	VPERF_REPORT_EV_FORK,		/* process_fork: thread (the child) made by other */
	VPERF_REPORT_EV_EXEC,		/* process_exec: str the new program */
	VPERF_REPORT_EV_EXIT,		/* process_exit: arg the exit code (as s64) */
	VPERF_REPORT_EV_LOST,		/* lost_events on cpu's stream: arg how many */
	VPERF_REPORT_EV_MARKER,		/* marker: str its name, arg value, arg2 kind (0 begin,
					 * 1 end, 2 instant) */
	VPERF_REPORT_EV_VMM_EXIT,	/* vmm_exit of vCPU cpu: arg duration_ns, arg2 reason,
					 * str reason_name, other an io exit's port (else -1) */
	VPERF_REPORT_EV_IRQ,		/* a guest's irq_entry on vCPU cpu: arg vector, arg2 kind
					 * (VPERF_REPORT_IRQ_*), other the irq number (-1: none) */
	VPERF_REPORT_EV_KVM_EXIT,	/* host kvm_exit: thread the vCPU thread, arg the hardware
					 * exit reason, arg2 the vCPU */
	VPERF_REPORT_EV_KVM_ENTRY,	/* host kvm_entry: thread the vCPU thread, arg2 the vCPU */
	VPERF_REPORT_EV_FLUSH,		/* a TRACE_FLUSH of vCPU cpu: arg its number, arg2 0 the
					 * guest asked (guest layer), 1 the VMM handled it (vmm) */
	VPERF_REPORT_NR_EV_KINDS
};

extern const char *const vperf_report_ev_names[VPERF_REPORT_NR_EV_KINDS];

/* A guest interrupt's kind (the recording's irq_entry `kind`, docs/recording.md section 9). */
enum { VPERF_REPORT_IRQ_OTHER, VPERF_REPORT_IRQ_TIMER, VPERF_REPORT_IRQ_RESCHEDULE,
       VPERF_REPORT_IRQ_CALL_FUNCTION, VPERF_REPORT_IRQ_DEVICE };

struct vperf_report_tlev {
	uint64_t ts;
	uint64_t arg, arg2;
	int32_t thread, other;
	uint32_t cpu;
	uint32_t str;			/* index in strings, or UINT32_MAX */
	uint8_t kind, layer;
};

/*
 * A thread the recording names.  Guest threads (guest_kernel, guest_user layers) are apart
 * from the host's: tid 1 of a guest is not the host's tid 1.
 */
struct vperf_report_thread {
	uint32_t tid, pid;		/* pid: 0 if the recording never said */
	uint32_t comm;			/* index in strings: its last name, UINT32_MAX: none */
	bool guest;
	bool switches;			/* it has thread_switch events (its every switch) */
	uint64_t nr_samples;
};

struct vperf_report {
	char *dir;
	struct vperf_report_sample *samples;
	size_t nr_samples;
	struct vperf_report_frame *frames;
	size_t nr_frames;
	uint64_t *counts;		/* the samples' thread counts (vperf_report_sample) */
	size_t nr_counts;
	struct vperf_report_map *maps;
	size_t nr_maps;
	struct vperf_report_elf *elfs;
	size_t nr_elfs, cap_elfs;
	struct vperf_report_idx *elf_idx;	/* elfs by path (resolve.c) */
	struct vperf_report_sym *ksyms;	/* sorted; names and modules owned */
	size_t nr_ksyms;
	struct vperf_report_sym *gksyms;	/* the guest kernel's, likewise */
	size_t nr_gksyms;
	char *guest_root;		/* a guest's files under this host directory, or NULL */
	char **guest_files;		/* pairs: a guest path, the host file or directory it is */
	size_t nr_guest_files;
	char **strings;			/* interned comms */
	size_t nr_strings;
	char **events;			/* the sampled events' names (the sample_event labels) */
	size_t nr_events;
	char *event_list;		/* the env's `events` */
	bool callchains;		/* the recording has callchains (env `callchains`) */
	bool have_ksyms;		/* kernel_symbol events were recorded */
	bool have_gksyms;		/* the guest kernel's too */
	char *ksyms_note;		/* the env's `kernel_symbols` */
	char *gksyms_note;		/* the env's `guest_kernel_symbols` (vm record) */
	uint64_t lost;			/* lost_events counts, and babeltrace2's discarded events */
	uint64_t nr_mmap_events, nr_unmapped;	/* user frames in no mapping */
	struct vperf_report_tlev *tlevs;	/* the timeline's events, in time order */
	size_t nr_tlevs;
	struct vperf_report_thread *threads;
	size_t nr_threads;
	uint64_t first_ts, last_ts;	/* the first and last event of any kind (ns) */
	char *vm_name;			/* the env's vm_name: a `vperf vm record` recording */
	uint64_t vmm_pid;		/* the env's vmm_pid (0: none) */
	char *hostname;			/* the env's hostname, NULL if none */
	int64_t clock_offset_s;		/* the clock's origin: ts 0 is this many s */
	uint64_t clock_offset_ns;	/* plus this many ns after it */
	bool clock_absolute;		/* that origin is the Unix epoch */
	bool clock_read;		/* the three above were read (an event had a clock) */
	uint32_t nr_cpus;		/* 1 + the highest cpu_id of a host stream */
	void *priv;
};

/*
 * Read the recording in dir.  Errors, with why for a person: -ENOENT (no such directory),
 * -ENOTDIR, -EINVAL (not a vperf recording: no CTF metadata, or not vperf's), -EIO
 * (babeltrace2 could not read it: its message), -ENOMEM.
 */
int vperf_report__open(const char *dir, struct vperf_report **out, char *why, size_t why_len)
	__attribute__((warn_unused_result));
void vperf_report__delete(struct vperf_report *r);

/*
 * The guest's files (a `vperf vm record` recording): by default where its files list
 * (DIR/.raw/guest/files, written at record time) says each came from; after this, under root,
 * a directory holding the guest's file system (perf kvm's --guestmount).  0 or -ENOMEM.
 */
int vperf_report__set_guest_root(struct vperf_report *r, const char *root);
/* Where the guest's file path is on this host (into buf), or NULL when nothing says. */
const char *vperf_report__guest_file(const struct vperf_report *r, const char *path, char *buf,
				     size_t len);

/* Frame i resolved (symbol and DSO looked up on first use, then cached). */
const struct vperf_report_frame *vperf_report__frame(struct vperf_report *r, size_t i);

/* The index of event name in r->events, or -1. */
int vperf_report__event(const struct vperf_report *r, const char *name);

/* ---- states ------------------------------------------------------------ */

/* A thread on a CPU (a guest thread: on a vCPU) from start to end (ns). */
struct vperf_report_slice {
	uint64_t start, end;
	int32_t thread;			/* index in threads */
	uint32_t cpu;
	bool preempted;			/* it left the CPU runnable (thread_switch says) */
};

/*
 * When each thread ran (docs/report.md, section 4): from its thread_switch in/out pairs, or for a
 * machine (host, guest) whose recording has no thread_switch, from sched_switch pairs.  A
 * thread_switch out without an in before it starts at the thread's first event (its exec), and a
 * thread still running at its exit stops there (or at the recording's end); a sched_switch out
 * without its in is left out (the kernel missed the in).  Sorted by thread, then start.
 * *out is malloc'd (NULL when none).  0 or -ENOMEM.
 */
int vperf_report__running(const struct vperf_report *r, struct vperf_report_slice **out,
			  size_t *nr) __attribute__((warn_unused_result));

/*
 * Which threads a timeline shows: those with a running slice, a sample (of event, or any for
 * -1) or an event of their own (not the idle task, tid 0; not a fork's parent alone).  A
 * calloc'd array of nr_threads (+ 1) flags, or NULL: out of memory.
 */
bool *vperf_report__shown(const struct vperf_report *r, const struct vperf_report_slice *s,
			  size_t nr, int event);

/* Thread t's name: its comm, or ":tid" (in buf) when the recording never named it. */
const char *vperf_report__thread_name(const struct vperf_report *r, int32_t t, char *buf,
				      size_t len);

/* Where a thread lived: from its fork (else the recording's start) to its exit (else end). */
void vperf_report__lifetime(const struct vperf_report *r, int32_t thread, uint64_t *born,
			    uint64_t *died);

/* ---- where a guest thread's time went (docs/states.md) ---------------- */

enum vperf_report_state {
	VPERF_STATE_GUEST,		/* on a vCPU that runs in the guest (user or kernel) */
	VPERF_STATE_KVM,		/* on a vCPU in the host for a VM exit, in KVM (detail: the
					 * hardware exit reason) */
	VPERF_STATE_VMM,		/* ... in the VMM, user space (detail: the exit's reason) */
	VPERF_STATE_PREEMPTED,		/* on a vCPU whose host thread is runnable, not running
					 * (detail: the host thread that took its CPU) */
	VPERF_STATE_HOST_SLEEP,		/* on a vCPU whose host thread sleeps in the host
					 * (detail: halted, or sleeping) */
	VPERF_STATE_RUNNABLE,		/* runnable in the guest, on no vCPU (detail: preempted
					 * in the guest, or woken, not yet run) */
	VPERF_STATE_WAIT_TIMER,		/* blocked until a timer interrupt woke it (detail: vector) */
	VPERF_STATE_WAIT_DEVICE,	/* ... a device's interrupt (detail: vector and irq) */
	VPERF_STATE_WAIT_THREAD,	/* ... another thread (detail: the waker, comm:tid) */
	VPERF_STATE_WAIT_UNKNOWN,	/* ... no waker recorded (detail: why not) */
	VPERF_STATE_NR
};

extern const char *const vperf_report_state_names[VPERF_STATE_NR];

#define VPERF_STATE_DETAIL	48

struct vperf_report_state_row {
	enum vperf_report_state state;
	char detail[VPERF_STATE_DETAIL];
	uint64_t ns, count;		/* time in it; the intervals (exits, waits, preemptions) */
};

/*
 * One guest thread's wall time from start (its fork, else the recording's start) to end (its
 * exit, else the recording's end), every ns in exactly one row; or, with vcpu >= 0, one
 * vCPU's over the recording (GUEST's detail then says whether a thread or the idle task ran).
 */
struct vperf_report_states {
	int32_t thread;			/* index in threads; -1 for a vCPU's table */
	int32_t vcpu;			/* the vCPU of a vCPU's table, else -1 */
	uint64_t start, end;
	struct vperf_report_state_row *rows;	/* most time first */
	size_t nr_rows;
	uint64_t samples_user, samples_kernel;	/* its samples by the sampled frame */
	bool forked, exited;		/* start is its fork, end its exit (else the guest's
					 * first traced event, the recording's end) */
};

/* One wait of a guest thread: blocked from start to woken, then runnable until end. */
struct vperf_report_wait {
	int32_t thread;
	uint32_t vcpu;			/* where it ran again */
	uint64_t start, woken, end;
	enum vperf_report_state cause;	/* a VPERF_STATE_WAIT_* */
	char detail[VPERF_STATE_DETAIL];
	int32_t waker;			/* the waking thread (WAIT_THREAD), else -1 */
};

/* A piece of a guest thread's life in one state (VPERF_ANALYSE_SPANS). */
struct vperf_report_span {
	uint64_t start, end;
	int32_t thread;
	uint32_t vcpu;			/* on it; UINT32_MAX: on no vCPU (runnable, waiting) */
	uint8_t state;			/* enum vperf_report_state */
};

#define VPERF_ANALYSE_SPANS	1u	/* also every guest thread's spans (timelines) */

struct vperf_report_analysis {
	struct vperf_report_states *threads;	/* one per guest thread with a sched_switch */
	size_t nr_threads;
	struct vperf_report_states *vcpus;	/* one per vCPU */
	size_t nr_vcpus;
	struct vperf_report_wait *waits;	/* every wait, by thread then start */
	size_t nr_waits;
	struct vperf_report_span *spans;	/* with VPERF_ANALYSE_SPANS: by thread, then start */
	size_t nr_spans;
	bool host_events;		/* kvm_exit/kvm_entry of the vCPU threads were recorded */
	bool svm;			/* exit reasons are AMD SVM codes (else Intel VMX) */
};

/*
 * Analyse a VM recording's guest threads and vCPUs (docs/states.md: what each state is and
 * how it is found).  0, -ENOENT (no guest scheduling events: not a `vperf vm record`
 * recording of a guest with vperf_guest.ko tracing), or -ENOMEM.
 */
int vperf_report__analyse(const struct vperf_report *r, unsigned int flags,
			  struct vperf_report_analysis *a) __attribute__((warn_unused_result));
void vperf_report_analysis__exit(struct vperf_report_analysis *a);

/* A hardware exit reason's name ("npf", "io_instruction"), or NULL if unknown. */
const char *vperf_report_exit_name(uint64_t reason, bool svm);

/*
 * The wait of thread t that ended last before ts (its end <= ts), or NULL: what the thread
 * was waiting for before it ran to ts (the critical path's step back).
 */
const struct vperf_report_wait *vperf_report_analysis__wait_before(
	const struct vperf_report_analysis *a, int32_t t, uint64_t ts);

/* ---- histograms -------------------------------------------------------- */

enum vperf_report_key {
	VPERF_REPORT_KEY_SYMBOL,
	VPERF_REPORT_KEY_DSO,
	VPERF_REPORT_KEY_TID,
	VPERF_REPORT_KEY_PID,
	VPERF_REPORT_KEY_COMM,
	VPERF_REPORT_KEY_LAYER,
	VPERF_REPORT_NR_KEYS
};

extern const char *const vperf_report_key_names[VPERF_REPORT_NR_KEYS];

/*
 * Parse a --sort list ("comm,dso,symbol"; "thread" is tid): 0 with keys[0..*nr), or -EINVAL
 * with why naming the key not known.
 */
int vperf_report_keys_parse(const char *list, enum vperf_report_key *keys, size_t max,
			    size_t *nr, char *why, size_t why_len);

struct vperf_report_chain {
	uint64_t samples, period;
	size_t sample;			/* one sample with this chain (its frames) */
};

struct vperf_report_row {
	const char *key[VPERF_REPORT_NR_KEYS];	/* per key of the histogram, in its order */
	bool kernel;			/* the symbol is a kernel one ([k]) */
	const char *dso;		/* the DSO of its symbol (rows never mix DSOs) */
	uint64_t samples, period;
	struct vperf_report_chain *chains;	/* -g: distinct callchains, most period first */
	size_t nr_chains;
};

/* One event's histogram: rows sorted by period (overhead), most first. */
struct vperf_report_hist {
	int event;
	enum vperf_report_key keys[VPERF_REPORT_NR_KEYS];
	size_t nr_keys;
	struct vperf_report_row *rows;
	size_t nr_rows;
	uint64_t samples, period;
	uint64_t unresolved;		/* samples whose own frame has no symbol */
	char **owned;			/* key strings made for rows (tids) */
	size_t nr_owned;
};

/*
 * Build event's histogram over keys; with chains, each row's distinct callchains too.
 * 0 or -ENOMEM.
 */
int vperf_report_hist__build(struct vperf_report *r, int event, const enum vperf_report_key *keys,
			     size_t nr_keys, bool chains, struct vperf_report_hist *h)
	__attribute__((warn_unused_result));
void vperf_report_hist__exit(struct vperf_report_hist *h);

/*
 * A frame's name for stacks (folded, pprof, -g): the symbol, or "[unknown] in dso" so that
 * unknown frames of different files stay apart (no parentheses: pprof would take them for a
 * parameter list and drop them).  buf holds it when it has to be made.
 */
const char *vperf_report__frame_name(struct vperf_report *r, size_t frame, char *buf, size_t len);

/* ---- growing arrays -------------------------------------------------------- */

/*
 * Make *arr (an array of *cap elements of size bytes, realloc'd; NULL with *cap 0 to begin)
 * hold at least n + 1, doubling from 64.  0 or -ENOMEM (then *arr is as it was).
 */
int vperf_report_grow(void *arr, size_t *cap, size_t n, size_t size)
	__attribute__((warn_unused_result));

/* ---- a string-keyed table of indices ------------------------------------- */

struct vperf_report_strtab {
	char **key;
	size_t *val;
	uint64_t *hash;			/* each key's, under hkey */
	size_t cap, nr;
	uint64_t hkey[2];		/* the hash's key: random (a recording chooses the keys) */
	bool seeded;
};

/*
 * The index kept for key, or val, kept for it from now on, if key was not there (*added says
 * which).  0 or -ENOMEM.  Zeroed: empty.
 */
int vperf_report_strtab__get(struct vperf_report_strtab *t, const char *key, size_t val,
			     size_t *out, bool *added) __attribute__((warn_unused_result));
void vperf_report_strtab__exit(struct vperf_report_strtab *t);

/* ---- an address space -------------------------------------------------- */

struct vperf_report_amap_node;

/*
 * Which mapping of a process holds an address (the reader's, space.c): mappings added in time
 * order, each covering what older ones had where it lies.  Zeroed: empty; rng (any value, best
 * a random one) seeds the tree's shape.
 */
struct vperf_report_amap {
	struct vperf_report_amap_node *root;
	uint64_t rng;
};

/* Map [start, start + len) to map from now on: 0 or -ENOMEM (then a is as it was). */
int vperf_report_amap__add(struct vperf_report_amap *a, uint64_t start, uint64_t len,
			   int32_t map) __attribute__((warn_unused_result));
/* The mapping holding addr, or -1. */
int32_t vperf_report_amap__find(const struct vperf_report_amap *a, uint64_t addr);
/* Make to (emptied first) a copy of from: 0 or -ENOMEM (then to is empty). */
int vperf_report_amap__copy(struct vperf_report_amap *to, const struct vperf_report_amap *from)
	__attribute__((warn_unused_result));
void vperf_report_amap__exit(struct vperf_report_amap *a);

/* ---- a hash table of indices, by keys their owner hashes and compares --- */

/*
 * Indices into an array the caller keeps (its names, threads, address spaces), found by a key
 * the caller hashes with vperf_report_idx__hash() and compares with same().  At most
 * UINT32_MAX - 1 indices.  Zeroed: empty.
 */
struct vperf_report_idx {
	uint32_t *slot;			/* an index + 1; 0: empty */
	uint64_t *hash;			/* its key's hash */
	size_t cap, nr;
	uint64_t hkey[2];		/* the hash's key: random (a recording chooses the keys) */
	bool seeded;
};

/* The hash of the len bytes at key, for t. */
uint64_t vperf_report_idx__hash(struct vperf_report_idx *t, const void *key, size_t len);
/* The index whose key hashes to hash and same(ctx, index) says is the key; -1 if none. */
int64_t vperf_report_idx__find(const struct vperf_report_idx *t, uint64_t hash,
			       bool (*same)(const void *ctx, size_t idx), const void *ctx);
/* Add idx, whose key hashes to hash and is not there yet: 0 or -ENOMEM. */
int vperf_report_idx__add(struct vperf_report_idx *t, uint64_t hash, size_t idx)
	__attribute__((warn_unused_result));
void vperf_report_idx__exit(struct vperf_report_idx *t);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_H */
