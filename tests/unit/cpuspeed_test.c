/*
 * runners/cpuspeed: the spread's arithmetic on given times, and the
 * measurement on this machine's CPUs for what it does (a time per CPU,
 * the affinity put back, a CPU it may not use named) -- never for how
 * fast they are, which NOISE.md says nothing here may assert.
 */
#define _GNU_SOURCE /* sched_getaffinity */
#include <math.h>
#include <sched.h>
#include <string.h>

#include "common/err.h"
#include "runners/cpuspeed.h"
#include "tests/unit/test.h"

TEST(test_cpuspeed__spread_names_slowest_and_fastest)
{
	/* What this VM's two vCPUs gave (docs/HOST.md, "Uneven CPUs"). */
	const double vm[] = { 33.6, 12.0 };
	const double even[] = { 10.0, 10.5, 10.2, 10.1 };
	size_t slow = 9, fast = 9;

	ASSERT_NEAR(cpuspeed_spread(vm, 2, &slow, &fast), 2.8, 1e-9);
	ASSERT_INTEQ(slow, 0);
	ASSERT_INTEQ(fast, 1);
	ASSERT(cpuspeed_spread(vm, 2, &slow, &fast) > CPUSPEED_SPREAD);
	ASSERT_NEAR(cpuspeed_spread(even, 4, &slow, &fast), 1.05, 1e-9);
	ASSERT_INTEQ(slow, 1);
	ASSERT_INTEQ(fast, 0);
	ASSERT(cpuspeed_spread(even, 4, &slow, &fast) <= CPUSPEED_SPREAD);
}

TEST(test_cpuspeed__spread_leaves_out_what_is_no_time)
{
	const double some[] = { NAN, 0, 20.0, -1, INFINITY, 25.0 };
	const double none[] = { NAN, 0, -3 };
	size_t slow, fast;

	ASSERT_NEAR(cpuspeed_spread(some, 6, &slow, &fast), 1.25, 1e-9);
	ASSERT_INTEQ(slow, 5);
	ASSERT_INTEQ(fast, 2);
	/* Unknown, not a made-up 1.0. */
	ASSERT_NEAR(cpuspeed_spread(none, 3, &slow, &fast), 0, 0);
}

TEST(test_cpuspeed__measures_every_cpu_and_puts_affinity_back)
{
	struct err e = { 0 };
	cpu_set_t before, after;
	int cpus[CPU_SETSIZE];
	double ms[CPU_SETSIZE];
	size_t n, i;

	ASSERT_INTEQ(cpuspeed_cpus(cpus, CPU_SETSIZE, &n, &e), 0);
	ASSERT(n >= 1);
	for (i = 1; i < n; i++)
		ASSERT(cpus[i] > cpus[i - 1]);
	ASSERT_INTEQ(sched_getaffinity(0, sizeof(before), &before), 0);
	ASSERT_INTEQ((int)CPU_COUNT(&before), (int)n);
	for (i = 0; i < n; i++)
		ms[i] = -1;
	ASSERT_INTEQ(cpuspeed_measure(ms, cpus, n, &e), 0);
	for (i = 0; i < n; i++)
		ASSERT_MSG(isfinite(ms[i]) && ms[i] > 0, "cpu%d: %g ms",
		    cpus[i], ms[i]);
	ASSERT_INTEQ(sched_getaffinity(0, sizeof(after), &after), 0);
	ASSERT(CPU_EQUAL(&before, &after));
}

TEST(test_cpuspeed__a_cpu_it_may_not_use_is_named)
{
	struct err e = { 0 };
	cpu_set_t before, after;
	int cpus[2];
	double ms[2];
	size_t n;

	ASSERT_INTEQ(cpuspeed_cpus(cpus, 1, &n, &e), 0);
	ASSERT_INTEQ(n, 1);
	cpus[1] = CPU_SETSIZE - 1; /* no machine here has CPU 1023 */
	ASSERT_INTEQ(sched_getaffinity(0, sizeof(before), &before), 0);
	ASSERT_INTEQ(cpuspeed_measure(ms, cpus, 2, &e), -1);
	ASSERT_MSG(strstr(err_msg(&e), "pinning to CPU 1023") != NULL, "%s",
	    err_msg(&e));
	ASSERT_INTEQ(sched_getaffinity(0, sizeof(after), &after), 0);
	ASSERT(CPU_EQUAL(&before, &after));
}
