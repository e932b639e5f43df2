#ifndef COMMON_FILES_H
#define COMMON_FILES_H

/*
 * Small file helpers (the runner's agent, kernel and boot state, the git
 * module, the spool, JSON files, the CLI's file arguments).  Each
 * returns 0, or -1 with errno set.
 */
#include <stddef.h>

struct buf;

/* The file's bytes into b (reset first), at most max (more: EFBIG). */
int files_read(struct buf *b, const char *path, size_t max);
/* The same from an open descriptor to its end (standard input, or a file
 * whose open failure the caller names itself); fd is not closed. */
int files_read_fd(struct buf *b, int fd, size_t max);
/* A small file's leading decimal integer (a sysctl) into *out: 0, or
 * files_read's error with *out left as it was. */
int files_read_int(const char *path, int *out);
/* mkdir -p with mode 0755. */
int files_mkdir_p(const char *path);
/* Writes path atomically: PATH.tmp, fsync, rename. */
int files_write(const char *path, const void *data, size_t len);
/* Copies a file of at most max bytes (atomically, as files_write). */
int files_copy(const char *from, const char *to, size_t max);
/* rm -rf path, symbolic links not followed; a missing path is 0. */
int files_rm_rf(const char *path);

#endif
