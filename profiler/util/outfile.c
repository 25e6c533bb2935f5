// SPDX-License-Identifier: MIT
/* An output file written whole or not at all (outfile.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "outfile.h"

int outfile_open(struct outfile *o, const char *cmd, const char *path)
{
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
	o->f = fopen(o->tmp, "wb");
	if (!o->f)
		return cli_error(cmd, "cannot write %s: %s", path, strerror(errno));
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
