#ifndef COMMON_CLOCK_H
#define COMMON_CLOCK_H

/*
 * The monotonic clock, for intervals and deadlines (never for dates:
 * those are time(NULL)).
 */
#include <stdint.h>

struct timespec;

int64_t clock_mono_ms(void);  /* milliseconds */
double clock_mono_s(void);    /* seconds, to the nanosecond */
uint64_t clock_mono_ns(void); /* nanoseconds (latency histograms) */
/* The monotonic time ms milliseconds from now into *out: a deadline for
 * pthread_cond_timedwait on a condition variable whose clock is
 * CLOCK_MONOTONIC (pthread_condattr_setclock). */
void clock_deadline(struct timespec *out, int64_t ms);
/* Sleeps ms milliseconds, through signals (EINTR). */
void clock_sleep_ms(long ms);
/* The calling thread's CPU time so far, in seconds (for costs that the
 * machine's load does not inflate the way wall time is). */
double clock_thread_cpu_s(void);

#endif
