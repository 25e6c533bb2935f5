// SPDX-License-Identifier: MIT
/* A recording's output directory (recdir.h). */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recdir.h"

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -errno : 0;
}

bool recdir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

bool recdir_is_recording(const char *path)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/metadata", path);
	if (!access(p, F_OK))
		return true;
	snprintf(p, sizeof(p), "%s/.raw", path);
	if (!access(p, F_OK))
		return true;
	return recdir_is_empty(path);
}

int recdir_check(const struct cli_usage *u, const char *dir, size_t extra)
{
	char parent[PATH_MAX];
	const char *base, *slash;
	size_t len = strlen(dir);

	if (!len)
		return cli_usage_error(u, "-o '': name a directory");
	if (len + extra + 16 > PATH_MAX)
		return cli_usage_error(u, "-o '%s': the path is too long", dir);
	slash = strrchr(dir, '/');
	base = slash ? slash + 1 : dir;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return cli_usage_error(u, "-o '%s': name the recording's directory itself "
				       "(e.g. %s%s" RECDIR_DEFAULT ")", dir, dir,
				       *base && dir[len - 1] != '/' ? "/" : "");
	if (!slash)
		strcpy(parent, ".");
	else if (slash == dir)
		strcpy(parent, "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
	if (access(parent, W_OK | X_OK))
		return cli_usage_error(u, "-o '%s': cannot create it in %s: %s", dir, parent,
				       strerror(errno));
	return 0;
}

int recdir_prepare(const char *cmd, const char *dir)
{
	char old[PATH_MAX + 8];
	struct stat st;

	if (snprintf(old, sizeof(old), "%s.old", dir) >= (int)sizeof(old))
		return cli_error(cmd, "-o '%s': the path is too long", dir);
	if (!lstat(dir, &st)) {
		if (!lstat(old, &st)) {
			if (S_ISDIR(st.st_mode) && !recdir_is_recording(old))
				return cli_error(cmd, "-o %s: %s exists and is not a vperf recording; "
						 "move it away (DIR is renamed to DIR.old)", dir, old);
			if (S_ISDIR(st.st_mode) ? nftw(old, remove_entry, 16, FTW_DEPTH | FTW_PHYS)
						: unlink(old))
				return cli_error(cmd, "removing the older recording %s: %s", old,
						 strerror(errno));
		}
		if (rename(dir, old))
			return cli_error(cmd, "renaming %s to %s: %s", dir, old, strerror(errno));
	} else if (errno != ENOENT) {
		return cli_error(cmd, "-o %s: %s", dir, strerror(errno));
	}
	if (mkdir(dir, 0755))
		return cli_error(cmd, "creating %s: %s", dir, strerror(errno));
	return 0;
}

uint64_t recdir_bytes(const char *dir)
{
	char p[PATH_MAX + 264];
	uint64_t sum = 0;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (!stat(p, &st) && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}
