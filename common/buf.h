#ifndef COMMON_BUF_H
#define COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A growable byte buffer with a required cap.  data is never NULL and is
 * always NUL-terminated.  Growing past max sets overflow, which is sticky:
 * later appends do nothing, and the caller checks buf_failed() once at the
 * end of a sequence (as libgit2's git_str_oom).
 */
struct buf {
	char *data;
	size_t len, cap, max;
	int overflow;
};

#define BUF_INIT(limit) ((struct buf){ .data = (char *)"", .max = (limit) })

void buf_init(struct buf *, size_t max);
void buf_release(struct buf *);                  /* back to empty; NULL ok */
void buf_reset(struct buf *);                    /* len = 0, keeps memory */
int buf_add(struct buf *, const void *, size_t); /* 0 or -1 */
int buf_puts(struct buf *, const char *);
int buf_putc(struct buf *, char);
int buf_printf(struct buf *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *, const char *, va_list)
    __attribute__((format(printf, 2, 0)));
void buf_truncate(struct buf *, size_t);
int buf_failed(const struct buf *);
/* Hands the storage to the caller (free()); the buffer is left empty. */
char *buf_take(struct buf *);

#endif
