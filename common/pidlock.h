#ifndef COMMON_PIDLOCK_H
#define COMMON_PIDLOCK_H

#include "common/err.h"

/*
 * One process at a time for a resource: an exclusive flock(2) on PATH
 * (made if absent, mode 0644) that holds the holder's pid as text.  The
 * lock lives as long as the process or until pidlock_release; a crashed
 * holder leaves nothing to clean up (the kernel drops the lock).
 * pidlock_take: the open descriptor (>= 0), or ERR_EXISTS when another
 * process holds it (the message names its pid), or -1 (e says why).
 */
int pidlock_take(const char *path, struct err *e);
void pidlock_release(int fd); /* -1 ok */

#endif
