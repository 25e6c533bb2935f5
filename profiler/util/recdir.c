// SPDX-License-Identifier: MIT
/*
 * A recording's output directory (recdir.h).
 *
 * vperf may run as root, with -o in a directory other users can write to (/tmp), and a name
 * checked there may be swapped for a symbolic link before it is used.  So nothing here follows a
 * link or uses a path twice: the parent directory is opened once; DIR and DIR.old are opened
 * from it with O_NOFOLLOW and judged by that descriptor (a vperf recording, and for removal the
 * caller's); an old recording is removed through directory descriptors (openat, fstatat,
 * unlinkat), each entry checked to be the caller's and still the one that was looked at, so
 * that a swapped name can only make the removal stop, never reach outside the tree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vperf/rawrec.h>

#include "recdir.h"

#define RECDIR_MAX_DEPTH	16		/* a recording is 3 levels deep */
#define RECDIR_MAX_METADATA	(1u << 20)	/* as much as vperf report reads */
#define O_DIR_FLAGS		(O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static bool dir_is_empty_fd(int d)
{
	int fd = openat(d, ".", O_DIR_FLAGS);
	DIR *dh = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	bool empty = true;

	if (!dh) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(dh);
	return empty;
}

bool recdir_is_empty(const char *path)
{
	int d = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* a link to one is one */
	bool empty;

	if (d < 0)
		return false;
	empty = dir_is_empty_fd(d);
	close(d);
	return empty;
}

/*
 * The first up to max bytes of regular file name in directory d (not a link, not a FIFO),
 * NUL-terminated, in a malloc'd buffer; *len their number.  NULL if there is no such file.
 */
static char *read_head(int d, const char *name, size_t max, size_t *len)
{
	int fd = openat(d, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	buf = malloc(max + 1);
	if (!buf)
		goto out;
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	return buf;
}

/* CTF metadata that vperf wrote: the CTF 1.8 comment first, vperf_version in its environment. */
static bool has_vperf_metadata(int d)
{
	size_t len = 0;
	char *m = read_head(d, "metadata", RECDIR_MAX_METADATA, &len);
	bool ours = m && len >= 13 && !memcmp(m, "/* CTF 1.8 */", 13) && strstr(m, "vperf_version");

	free(m);
	return ours;
}

/*
 * `vperf vm record`'s raw folder (.raw): nothing in it but the raw recording (a prefix of one:
 * a VMM may be killed before its header is whole) and the guest's files folder.
 */
static bool has_vperf_raw(int d)
{
	int r = openat(d, RECDIR_RAW, O_DIR_FLAGS);
	DIR *dh = r < 0 ? NULL : fdopendir(r);
	struct dirent *de;
	bool ours = dh != NULL;

	if (!dh) {
		if (r >= 0)
			close(r);
		return false;
	}
	while (ours && (de = readdir(dh))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, RECDIR_GUEST_FILES)) {
			ours = !fstatat(r, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
		} else if (!strcmp(de->d_name, RECDIR_RAW_FILE)) {
			size_t len = 0;
			char *h = read_head(r, de->d_name, 8, &len);

			ours = h && !memcmp(h, VPERF_RAWREC_MAGIC, len);
			free(h);
		} else {
			ours = false;
		}
	}
	closedir(dh);
	return ours;
}

static bool is_recording_fd(int d)
{
	return has_vperf_metadata(d) || has_vperf_raw(d) || dir_is_empty_fd(d);
}

bool recdir_is_recording(const char *path)
{
	int d = open(path, O_DIR_FLAGS);
	bool ours;

	if (d < 0)
		return false;
	ours = is_recording_fd(d);
	close(d);
	return ours;
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
	if (strlen(base) + sizeof(".old") > NAME_MAX + 1)
		return cli_usage_error(u, "-o '%s': the name is too long for its DIR.old", dir);
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

/* ---- removing an older recording ---- */

struct rmtree {
	uid_t uid;		/* the caller: every entry must be its */
	dev_t dev;		/* DIR.old's file system: the walk stays on it */
	bool dry;		/* check everything, remove nothing */
	const char *why;	/* a refusal's reason (else the error's) */
	char path[PATH_MAX];	/* the entry looked at, below top */
};

static const char swapped[] = "was replaced while being removed";

/* Remove name (looked at as was) from directory d, if it is still that entry: 0 or -errno. */
static int unlink_same(struct rmtree *t, int d, const char *name, const struct stat *was, int flags)
{
	struct stat now;

	if (fstatat(d, name, &now, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (now.st_dev != was->st_dev || now.st_ino != was->st_ino) {
		t->why = swapped;	/* leave the newcomer alone */
		return -ESTALE;
	}
	return unlinkat(d, name, flags) ? -errno : 0;
}

static int rm_children(struct rmtree *t, int d, int depth);

/* One entry of directory d (path t->path): checked, and unless dry, removed.  0 or -errno. */
static int rm_entry(struct rmtree *t, int d, const char *name, int depth)
{
	struct stat st, sub_st;
	int sub, err;

	if (fstatat(d, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (st.st_uid != t->uid) {
		t->why = "is not yours (another user's file)";
		return -EPERM;
	}
	if (st.st_dev != t->dev) {
		t->why = "is on another file system (a mount point)";
		return -EXDEV;
	}
	if (!S_ISDIR(st.st_mode))
		return t->dry ? 0 : unlink_same(t, d, name, &st, 0);
	if (depth >= RECDIR_MAX_DEPTH) {
		t->why = "is nested too deep for a recording";
		return -ELOOP;
	}
	sub = openat(d, name, O_DIR_FLAGS);
	if (sub < 0)
		return -errno;
	if (fstat(sub, &sub_st)) {
		err = -errno;
	} else if (sub_st.st_dev != st.st_dev || sub_st.st_ino != st.st_ino) {
		t->why = swapped;
		err = -ESTALE;
	} else {
		err = rm_children(t, sub, depth + 1);
		if (!err && !t->dry)
			err = unlink_same(t, d, name, &sub_st, AT_REMOVEDIR);
	}
	close(sub);
	return err;
}

/*
 * Everything in directory d (path t->path), checked, and unless dry, removed; d itself stays.
 * Entries removed while a directory is read may make readdir() miss others, so it is read
 * again until a pass finds nothing.  0 or -errno, with t->path naming the entry.
 */
static int rm_children(struct rmtree *t, int d, int depth)
{
	size_t plen = strlen(t->path);
	int fd = openat(d, ".", O_DIR_FLAGS), err = 0;
	DIR *dh = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	bool again = true;

	if (!dh) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && again) {
		again = false;
		rewinddir(dh);
		while (!err && (de = readdir(dh))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (plen + 1 + strlen(de->d_name) >= sizeof(t->path)) {
				err = -ENAMETOOLONG;
				break;
			}
			snprintf(t->path + plen, sizeof(t->path) - plen, "/%s", de->d_name);
			err = rm_entry(t, d, de->d_name, depth);
			if (!err)
				t->path[plen] = '\0';
			again = !t->dry;
		}
	}
	closedir(dh);
	return err;
}

/* Remove the recording old (its descriptor d, looked at as st) from directory p.  0 or 1. */
static int remove_old(const char *cmd, const char *top, int p, const char *name, int d,
		      const struct stat *st)
{
	struct rmtree t = { .uid = geteuid(), .dev = st->st_dev, .dry = true };
	int err;

	/* first every entry checked, so that a refusal leaves the recording whole */
	err = rm_children(&t, d, 0);
	if (!err) {
		t.dry = false;
		err = rm_children(&t, d, 0);
		if (!err)
			err = unlink_same(&t, p, name, st, AT_REMOVEDIR);
	}
	if (!err)
		return 0;
	return cli_error(cmd, "removing the older recording %s: %s%s%s%s; %s", top, top, t.path,
			 t.why ? " " : ": ", t.why ? t.why : strerror(-err),
			 t.dry ? "nothing was removed" : "it is partly removed");
}

/* ---- DIR -> DIR.old, then DIR ---- */

/*
 * Open name in directory p for recdir_prepare(): a directory that is a vperf recording (not a
 * link) and, if mine, the caller's.  Its descriptor (st filled), -ENOENT if there is nothing
 * of that name, or -1 after a message.
 */
static int open_recording(const char *cmd, const char *dir, const char *shown, int p,
			  const char *name, bool mine, struct stat *st)
{
	int d = openat(p, name, O_DIR_FLAGS | O_NONBLOCK);

	if (d < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		if (errno == ELOOP || errno == ENOTDIR) {
			/* for the message alone: nothing is done with it */
			bool link = !fstatat(p, name, st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st->st_mode);

			cli_error(cmd, "-o %s: %s exists and is not a vperf recording (%s); move it "
				  "away (DIR is renamed to DIR.old)", dir, shown,
				  link ? "a symbolic link" : "not a directory");
		} else {
			cli_error(cmd, "-o %s: %s: %s", dir, shown, strerror(errno));
		}
		return -1;
	}
	if (fstat(d, st)) {
		cli_error(cmd, "-o %s: %s: %s", dir, shown, strerror(errno));
		goto out_close;
	}
	if (!is_recording_fd(d)) {
		cli_error(cmd, "-o %s: %s exists and is not a vperf recording (a vperf recording "
			  "holds vperf's CTF metadata or a vm record's .raw folder, or nothing); "
			  "move it away (DIR is renamed to DIR.old)", dir, shown);
		goto out_close;
	}
	if (mine && st->st_uid != geteuid()) {
		cli_error(cmd, "-o %s: %s belongs to uid %u, not to you (uid %u): it is not removed; "
			  "move it away", dir, shown, (unsigned int)st->st_uid,
			  (unsigned int)geteuid());
		goto out_close;
	}
	return d;

out_close:
	close(d);
	return -1;
}

/* Make DIR, the caller's, 0700 whatever the umask.  0 or 1 after a message. */
static int make_dir(const char *cmd, const char *dir, int p, const char *name)
{
	struct stat st;
	int d, err = 0;

	if (mkdirat(p, name, 0700))
		return cli_error(cmd, "creating %s: %s", dir, strerror(errno));
	d = openat(p, name, O_DIR_FLAGS);
	if (d < 0)
		return cli_error(cmd, "creating %s: %s", dir, strerror(errno));
	if (fstat(d, &st) || st.st_uid != geteuid())
		err = cli_error(cmd, "creating %s: it was replaced as it was made", dir);
	else if (fchmod(d, 0700))
		err = cli_error(cmd, "creating %s: %s", dir, strerror(errno));
	close(d);
	return err;
}

int recdir_prepare(const char *cmd, const char *dir)
{
	char parent[PATH_MAX], base[NAME_MAX + 1], old[NAME_MAX + 1], shown_old[PATH_MAX + 8];
	const char *slash = strrchr(dir, '/');
	struct stat st, old_st;
	int p, d, o, ret = 1;

	if (snprintf(base, sizeof(base), "%s", slash ? slash + 1 : dir) >= (int)sizeof(base) ||
	    snprintf(old, sizeof(old), "%s.old", base) >= (int)sizeof(old) ||
	    snprintf(shown_old, sizeof(shown_old), "%s.old", dir) >= (int)sizeof(shown_old))
		return cli_error(cmd, "-o '%s': the name is too long", dir);
	if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
		return cli_error(cmd, "-o '%s': name the recording's directory itself", dir);
	if (!slash)
		strcpy(parent, ".");
	else if (slash == dir)
		strcpy(parent, "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - dir), dir);
	p = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p < 0)
		return cli_error(cmd, "-o %s: %s: %s", dir, parent, strerror(errno));

	d = open_recording(cmd, dir, dir, p, base, false, &st);
	if (d == -1)
		goto out;
	if (d >= 0) {
		o = open_recording(cmd, dir, shown_old, p, old, true, &old_st);
		if (o == -1)
			goto out_dir;
		if (o >= 0) {
			int err = remove_old(cmd, shown_old, p, old, o, &old_st);

			close(o);
			if (err)
				goto out_dir;
		}
		/* DIR.old is gone: whatever takes its name meanwhile is not replaced */
		if (renameat2(p, base, p, old, RENAME_NOREPLACE) &&
		    ((errno != EINVAL && errno != ENOSYS) || renameat(p, base, p, old))) {
			cli_error(cmd, "renaming %s to %s: %s", dir, shown_old, strerror(errno));
			goto out_dir;
		}
	}
	ret = make_dir(cmd, dir, p, base);
out_dir:
	if (d >= 0)
		close(d);
out:
	close(p);
	return ret;
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
