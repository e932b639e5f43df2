#ifndef COMMON_XALLOC_H
#define COMMON_XALLOC_H

#include <stddef.h>

/*
 * Allocation that never returns NULL: running out of memory aborts with a
 * message, as in OpenSMTPD's xmalloc.  Callers never check for NULL.
 */
void *xmalloc(size_t);
void *xcalloc(size_t, size_t);
void *xrealloc(void *, size_t);
void *xreallocarray(void *, size_t, size_t);
char *xstrdup(const char *); /* NULL in, NULL out */
char *xstrndup(const char *, size_t);
/* malloc'd printf; never NULL. */
char *xasprintf(const char *, ...) __attribute__((format(printf, 1, 2)));

#endif
