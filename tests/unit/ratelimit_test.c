/* web/ratelimit: requests per client address. */
#include <stdio.h>

#include "tests/unit/test.h"
#include "web/ratelimit.h"

/* A burst, then one a second; another address has its own bucket. */
TEST(test_ratelimit__bucket)
{
	struct ratelimit *l = ratelimit_new(2, 5);
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_INTEQ(ratelimit_take(l, "10.0.0.1", 1000), 0);
	ASSERT_INTEQ(ratelimit_take(l, "10.0.0.1", 1000), 1);
	ASSERT_INTEQ(ratelimit_take(l, "10.0.0.2", 1000), 0);
	/* 2 a second: half a second gives one. */
	ASSERT_INTEQ(ratelimit_take(l, "10.0.0.1", 1500), 0);
	ASSERT_INTEQ(ratelimit_take(l, "10.0.0.1", 1500), 1);
	/* A long quiet refills to the burst, not beyond. */
	for (i = 0; i < 5; i++)
		ASSERT_INTEQ(ratelimit_take(l, "10.0.0.1", 100000), 0);
	ASSERT(ratelimit_take(l, "10.0.0.1", 100000) > 0);
	ratelimit_free(l);
}

/* Many addresses: each new one starts with a full bucket, and an
 * address seen a moment ago keeps its (empty) one. */
TEST(test_ratelimit__many_addresses)
{
	struct ratelimit *l = ratelimit_new(1, 1);
	char a[32];
	int i;

	for (i = 0; i < 3 * RATELIMIT_SLOTS; i++) {
		snprintf(a, sizeof(a), "10.%d.%d.%d", i >> 16, (i >> 8) & 255,
		    i & 255);
		ASSERT_INTEQ(ratelimit_take(l, a, i), 0);
	}
	ASSERT(ratelimit_take(l, a, i) > 0);
	ratelimit_free(l);
}
