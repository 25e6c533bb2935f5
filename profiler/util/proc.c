// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

int proc_read_comm(pid_t tid, char *buf, size_t len)
{
	char path[64], tmp[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	n = read_file(path, tmp, sizeof(tmp));
	if (n < 0)
		return (int)n;
	tmp[strcspn(tmp, "\n")] = '\0';
	snprintf(buf, len, "%s", tmp);
	return 0;
}

int proc_task_state(pid_t tid)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "tid (comm) S ...": comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	return (unsigned char)p[2];
}

bool proc_task_alive(pid_t tid)
{
	int s = proc_task_state(tid);

	return s > 0 && s != 'Z' && s != 'X' && s != 'x';
}

pid_t proc_tgid(pid_t tid)
{
	char path[64], buf[2048];
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	n = read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (pid_t)n;
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -EIO;
	return (pid_t)atoi(p + 6);
}

bool sys_has_cpu_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

static struct comm_entry *find(const struct comm_cache *c, pid_t tid)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].tid == tid)
			return &c->v[i];
	return NULL;
}

static void remember(struct comm_cache *c, pid_t tid, const char *comm)
{
	struct comm_entry *e = find(c, tid);

	if (!e) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 16;
			struct comm_entry *v = realloc(c->v, cap * sizeof(*v));

			if (!v)
				return;	/* a name is a nicety, not a need */
			c->v = v;
			c->cap = cap;
		}
		e = &c->v[c->n++];
		e->tid = tid;
	}
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
}

int comm_cache__add(struct comm_cache *c, pid_t tid)
{
	char comm[COMM_LEN];
	int err = proc_read_comm(tid, comm, sizeof(comm));

	if (!err)
		remember(c, tid, comm);
	return err;
}

void comm_cache__scan(struct comm_cache *c, pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		comm_cache__add(c, (pid_t)tid);
	}
	closedir(dir);
}

const char *comm_cache__get(const struct comm_cache *c, pid_t tid)
{
	const struct comm_entry *e = find(c, tid);

	return e ? e->comm : NULL;
}

void comm_cache__exit(struct comm_cache *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

int proc_task_list(pid_t pid, pid_t **out, size_t *nr)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *t = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);
		pid_t *g;

		if (tid <= 0)
			continue;
		g = realloc(t, (n + 1) * sizeof(*t));
		if (!g) {
			closedir(d);
			free(t);
			return -ENOMEM;
		}
		t = g;
		t[n++] = (pid_t)tid;
	}
	closedir(d);
	*out = t;
	*nr = n;
	return n ? 0 : -ESRCH;
}
