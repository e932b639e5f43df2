/*
 * The same CPU-bound loop timed on each CPU in turns (see cpuspeed.h).
 */
#define _GNU_SOURCE /* sched_setaffinity, sched_getcpu, CPU_SET */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/xalloc.h"
#include "runners/cpuspeed.h"

int
cpuspeed_cpus(int *cpus, size_t max, size_t *n, struct err *e)
{
	cpu_set_t set;
	int c;

	*n = 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return err_set(e, "sched_getaffinity: %s", strerror(errno));
	for (c = 0; c < CPU_SETSIZE && *n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[(*n)++] = c;
	return 0;
}

/* The loop: the bisect tests' program's, without its process. */
static double
sample(void)
{
	volatile unsigned long x = 0;
	unsigned long i;
	double t0 = clock_thread_cpu_s();

	for (i = 0; i < CPUSPEED_LOOPS; i++)
		x += i;
	/* x read once more: a sum nobody reads is a warning to clang. */
	return (clock_thread_cpu_s() - t0) * 1e3 + (double)(x & 0);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
cpuspeed_measure(double *ms, const int *cpus, size_t n, struct err *e)
{
	cpu_set_t saved, one;
	double *v;
	size_t i, k;
	int rc = 0;

	if (sched_getaffinity(0, sizeof(saved), &saved) != 0)
		return err_set(e, "sched_getaffinity: %s", strerror(errno));
	v = xcalloc(n * CPUSPEED_ROUNDS + 1, sizeof(*v));
	/* Rounds outermost: a CPU's speed that drifts while we measure
	 * moves every CPU's samples alike, not one CPU's. */
	for (k = 0; k < CPUSPEED_ROUNDS && rc == 0; k++)
		for (i = 0; i < n; i++) {
			CPU_ZERO(&one);
			CPU_SET(cpus[i], &one);
			if (sched_setaffinity(0, sizeof(one), &one) != 0) {
				rc = err_set(e, "pinning to CPU %d: %s",
				    cpus[i], strerror(errno));
				break;
			}
			v[i * CPUSPEED_ROUNDS + k] = sample();
			/* Where it ran: a time of another CPU's would be
			 * a made-up one. */
			if (sched_getcpu() != cpus[i]) {
				rc = err_set(e,
				    "pinned to CPU %d, the loop ran on CPU %d",
				    cpus[i], sched_getcpu());
				break;
			}
		}
	sched_setaffinity(0, sizeof(saved), &saved);
	for (i = 0; rc == 0 && i < n; i++) {
		double *s = v + i * CPUSPEED_ROUNDS;

		qsort(s, CPUSPEED_ROUNDS, sizeof(*s), cmp_double);
		ms[i] = CPUSPEED_ROUNDS % 2
		    ? s[CPUSPEED_ROUNDS / 2]
		    : (s[CPUSPEED_ROUNDS / 2 - 1] + s[CPUSPEED_ROUNDS / 2]) / 2;
	}
	free(v);
	return rc;
}

double
cpuspeed_spread(const double *ms, size_t n, size_t *slow, size_t *fast)
{
	size_t i, lo = n, hi = n;

	for (i = 0; i < n; i++) {
		if (!(isfinite(ms[i]) && ms[i] > 0))
			continue;
		if (lo == n || ms[i] < ms[lo])
			lo = i;
		if (hi == n || ms[i] > ms[hi])
			hi = i;
	}
	*slow = hi;
	*fast = lo;
	return lo == n ? 0 : ms[hi] / ms[lo];
}
