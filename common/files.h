#ifndef COMMON_FILES_H
#define COMMON_FILES_H

/*
 * Small file helpers (the runner's agent, kernel and boot state, the git
 * module, the spool).  Each returns 0, or -1 with errno set.
 */
#include <stddef.h>

struct buf;

/* The file's bytes into b (reset first), at most max (more: EFBIG). */
int files_read(struct buf *b, const char *path, size_t max);
/* mkdir -p with mode 0755. */
int files_mkdir_p(const char *path);
/* Writes path atomically: PATH.tmp, fsync, rename. */
int files_write(const char *path, const void *data, size_t len);
/* Copies a file of at most max bytes (atomically, as files_write). */
int files_copy(const char *from, const char *to, size_t max);

#endif
