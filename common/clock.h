#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

/*
 * The monotonic clock, for intervals and deadlines (never for dates:
 * those are time(NULL)).
 */
#include <stdint.h>

int64_t clock_mono_ms(void); /* milliseconds */
double clock_mono_s(void);   /* seconds, to the nanosecond */

#endif
