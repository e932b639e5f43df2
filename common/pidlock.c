#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/pidlock.h"

int
pidlock_take(const char *path, struct err *e)
{
	char pid[32];
	ssize_t n;
	int fd, len;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return err_set(e, "%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int saved = errno;

		n = saved == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0)
		                         : -1;
		close(fd);
		if (saved != EWOULDBLOCK)
			return err_set(e, "%s: %s", path, strerror(saved));
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		return err_setc(e, ERR_EXISTS,
		    "%s is held by another process (pid %s)", path,
		    pid[0] ? pid : "unknown");
	}
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
		err_set(e, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void
pidlock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
