/* SPDX-License-Identifier: MIT */
/*
 * The vperf commands.  Each builtin parses its options, calls the
 * libraries and returns an exit status; only main() exits.
 */
#ifndef VPERF_CLI_BUILTIN_H
#define VPERF_CLI_BUILTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*builtin_fn)(int argc, char **argv);

struct cmd_struct {
	const char *name;
	builtin_fn fn;
	const char *help;	/* one line for `vperf help` */
};

int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_vm(int argc, char **argv);
int cmd_kvm(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_export(int argc, char **argv);

/*
 * `vperf export -i dir --to to -o output [-e event]` for another command that writes one of its
 * formats (`vperf report --flame`): the exit status; errors are said as cmd's.
 */
int export_recording(const char *cmd, const char *dir, const char *to, const char *output,
		     const char *event, bool exits);
int cmd_timeline(int argc, char **argv);

/* The dispatch table of vperf.c, for `vperf help`. */
const struct cmd_struct *builtin_commands(size_t *nr);
const struct cmd_struct *builtin_find(const char *name);
/* The command closest to name (for "did you mean"), or NULL. */
const struct cmd_struct *builtin_closest(const char *name);

/* "vperf GROUP SUB ...": SUB's entry of cmds[n] with argv from SUB, or the group's help. */
int builtin_dispatch(const char *group, const struct cmd_struct *cmds, size_t n, int argc,
		     char **argv);
/* Print `vperf help` (the list of commands) to out. */
void builtin_print_overview(FILE *out);

#endif /* VPERF_CLI_BUILTIN_H */
