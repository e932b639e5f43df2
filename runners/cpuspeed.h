#ifndef RUNNERS_CPUSPEED_H
#define RUNNERS_CPUSPEED_H

#include <stddef.h>

#include "common/err.h"

/*
 * Are the CPUs a benchmark may run on equally fast?  A VM's vCPU whose
 * physical core is shared with a busy neighbour, a core under thermal or
 * power capping, or a busy SMT sibling runs the same loop slower, and
 * nothing in sysfs says so (docs/HOST.md, "Uneven CPUs").
 */

#define CPUSPEED_ROUNDS 5         /* samples a CPU, taken in turns */
#define CPUSPEED_LOOPS 10000000UL /* additions a sample: 3-9 ms here */
#define CPUSPEED_SPREAD 1.20      /* slowest / fastest beyond: not ready */

/*
 * The CPUs this process may run on, ascending, into cpus[0..*n) (at most
 * max).  0, or -1 with e set.
 */
int cpuspeed_cpus(int *cpus, size_t max, size_t *n, struct err *e);

/*
 * Times the same loop on each of cpus[0..n) (the calling thread pinned to
 * each in turns, CPUSPEED_ROUNDS rounds, the thread's CPU time), and puts
 * each CPU's median in ms[i].  The thread's affinity is put back.  0, or
 * -1 with e set (a CPU it could not be pinned to, or one the loop did
 * not run on, named).
 */
int cpuspeed_measure(double *ms, const int *cpus, size_t n, struct err *e);

/*
 * The spread of ms[0..n) (n >= 1): slowest / fastest, their indexes in
 * *slow and *fast.  A value that is not finite and positive is left out;
 * none left: 0 (unknown).
 */
double cpuspeed_spread(const double *ms, size_t n, size_t *slow, size_t *fast);

#endif
