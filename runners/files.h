#ifndef RUNNERS_FILES_H
#define RUNNERS_FILES_H

/*
 * Small file helpers the runner's modules share (agent, kernel, boot
 * state).  Each returns 0, or -1 with errno set.
 */
#include <stddef.h>

/* mkdir -p with mode 0755. */
int files_mkdir_p(const char *path);
/* Writes path atomically: PATH.tmp, fsync, rename. */
int files_write(const char *path, const void *data, size_t len);
/* Copies a file of at most max bytes (atomically, as files_write). */
int files_copy(const char *from, const char *to, size_t max);

#endif
