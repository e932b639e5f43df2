#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

/*
 * The monotonic clock, for intervals and deadlines (never for dates:
 * those are time(NULL)).
 */
#include <stdint.h>

int64_t clock_mono_ms(void); /* milliseconds */
double clock_mono_s(void);   /* seconds, to the nanosecond */
/* The calling thread's CPU time so far, in seconds (for costs that the
 * machine's load does not inflate the way wall time is). */
double clock_thread_cpu_s(void);

#endif
