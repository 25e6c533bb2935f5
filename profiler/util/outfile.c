// SPDX-License-Identifier: MIT
/* An output file written whole or not at all (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "outfile.h"

int outfile_open(struct outfile *o, const char *cmd, const char *path)
{
	int fd;

	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->path = path;
	o->to_stdout = !strcmp(path, "-");
	if (o->to_stdout) {
		o->f = stdout;
		return 0;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp-%d", path, (int)getpid()) >=
	    (int)sizeof(o->tmp))
		return cli_error(cmd, "-o %s: the name is too long", path);
	/*
	 * A new file of ours, private as perf.data is (0600 whatever the umask), never written
	 * through a link someone left at that name: the name is predictable.
	 */
	fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = errno;

		return cli_error(cmd, "cannot write %s: %s%s%s", path, strerror(err),
				 err == EEXIST ? ": " : "", err == EEXIST ? o->tmp : "");
	}
	if (fchmod(fd, 0600) || !(o->f = fdopen(fd, "wb"))) {
		int err = errno;

		close(fd);
		unlink(o->tmp);
		return cli_error(cmd, "cannot write %s: %s", path, strerror(err));
	}
	return 0;
}

int outfile_close(struct outfile *o, int status)
{
	errno = 0;
	if (!status && (fflush(o->f) || ferror(o->f)))
		status = cli_error(o->cmd, "writing %s: %s", o->path,
				   strerror(errno ? errno : EIO));
	if (o->to_stdout)
		return status;
	if (fclose(o->f) && !status)
		status = cli_error(o->cmd, "writing %s: %s", o->path, strerror(errno));
	if (!status && rename(o->tmp, o->path))
		status = cli_error(o->cmd, "cannot write %s: %s", o->path, strerror(errno));
	if (status)
		unlink(o->tmp);
	return status;
}
