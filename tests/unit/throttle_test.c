/* web/throttle: failed logins per address. */
#include <stdio.h>

#include "tests/unit/test.h"
#include "web/throttle.h"

/* Five free failures, then 1 s, 2 s, 4 s... after the last one, for
 * that address only; a success or a long quiet forgets it. */
TEST(test_throttle__waits_double)
{
	struct throttle *t = throttle_new();
	int i;

	for (i = 0; i < THROTTLE_FREE; i++) {
		ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 1000), 0);
		throttle_fail(t, "10.0.0.1", 1000);
	}
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 1000), 1);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 1999), 1);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 2000), 0);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.2", 1000), 0);
	throttle_fail(t, "10.0.0.1", 2000);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 2000), 2);
	throttle_fail(t, "10.0.0.1", 4000);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 4000), 4);
	for (i = 0; i < 40; i++)
		throttle_fail(t, "10.0.0.1", 5000);
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 5000), THROTTLE_MAX_S);
	throttle_clear(t, "10.0.0.1");
	ASSERT_INTEQ(throttle_wait(t, "10.0.0.1", 5000), 0);
	for (i = 0; i < THROTTLE_FREE; i++)
		throttle_fail(t, "::1", 0);
	ASSERT_INTEQ(throttle_wait(t, "::1", 0), 1);
	ASSERT_INTEQ(
	    throttle_wait(t, "::1", (int64_t)THROTTLE_FORGET_S * 1000), 0);
	throttle_fail(t, "::1", (int64_t)THROTTLE_FORGET_S * 1000);
	ASSERT_INTEQ(
	    throttle_wait(t, "::1", (int64_t)THROTTLE_FORGET_S * 1000), 0);
	throttle_free(t);
}

/* More addresses than slots: the one that failed longest ago goes, the
 * newest are kept. */
TEST(test_throttle__full_table)
{
	struct throttle *t = throttle_new();
	char a[32];
	int i, j;

	for (i = 0; i < THROTTLE_SLOTS + 10; i++) {
		snprintf(a, sizeof(a), "10.1.%d.%d", i / 256, i % 256);
		for (j = 0; j < THROTTLE_FREE; j++)
			throttle_fail(t, a, 1000 + i);
	}
	ASSERT_INTEQ(throttle_wait(t, a, 1000 + i - 1), 1);
	ASSERT_INTEQ(throttle_wait(t, "10.1.0.0", 1000 + i - 1), 0);
	throttle_free(t);
}
