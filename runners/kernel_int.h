#ifndef RUNNERS_KERNEL_INT_H
#define RUNNERS_KERNEL_INT_H

/*
 * What the files of the kernel builder share (kernel.c,
 * kernel_config.c).
 */
#include <stdarg.h>
#include <stddef.h>

#include "common/buf.h"
#include "runners/kernel.h"

#define CONFIG_MAX (4 * 1024 * 1024)

/* A step's log line (printf) to log(arg, text); log NULL: none. */
void kernel_i_vlog(void (*log)(void *, const char *), void *arg,
    const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* meta: "key value" lines. */
int kernel_i_meta_get(const char *meta, const char *key, char *out, size_t n);

#endif
