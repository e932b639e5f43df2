/*
 * daemon/chargepath: the two sides' charge-path symbols side by side.
 */
#include <math.h>
#include <string.h>

#include "common/json.h"
#include "daemon/chargepath.h"
#include "store/runs.h"
#include "tests/unit/test.h"

/* A run of role with its profile blob, as store_pair_run_meta_list() gives
 * it (the texts are the test's: the list is not released). */
#define RUN(role, blob)                                    \
	{                                                  \
		(char *)(role), 0, 1, NULL, (char *)(blob) \
	}

TEST(test_chargepath__means_per_side_largest_change_first)
{
	struct store_run_meta v[] = {
		RUN("base",
		    "{\"share_pct\": 0.4, \"matched\": [{\"symbol\": "
		    "\"try_charge_memcg\", \"pct\": 0.3}, {\"symbol\": "
		    "\"refill_stock\", \"pct\": 0.1}]}"),
		RUN("base",
		    "{\"share_pct\": 0.2, \"matched\": [{\"symbol\": "
		    "\"try_charge_memcg\", \"pct\": 0.2}]}"),
		RUN("candidate",
		    "{\"share_pct\": 45, \"matched\": [{\"symbol\": "
		    "\"drain_stock\", \"pct\": 30}, {\"symbol\": "
		    "\"try_charge_memcg\", \"pct\": 15}]}"),
		/* Unknown share: not averaged, not counted. */
		RUN("candidate",
		    "{\"share_pct\": null, \"reason\": \"no kernel sample\"}"),
		RUN("candidate", "not json"),
		/* JSON, but not an object: no share either. */
		RUN("candidate", "7"),
		/* A run without a profile says nothing. */
		RUN("base", NULL),
	};
	struct store_run_metas rows = { v, sizeof(v) / sizeof(v[0]) };
	json_t *keep = NULL;
	struct chargepath_sym s[8];
	int runs[2];
	size_t n;

	n = chargepath_diff(s, 8, runs, &rows, &keep);
	ASSERT_INTEQ(runs[0], 2);
	ASSERT_INTEQ(runs[1], 1);
	ASSERT_INTEQ(n, 3);
	ASSERT_STREQ(s[0].symbol, "drain_stock");
	ASSERT_NEAR(s[0].base_pct, 0, 1e-9);
	ASSERT_NEAR(s[0].cand_pct, 30, 1e-9);
	ASSERT_STREQ(s[1].symbol, "try_charge_memcg");
	ASSERT_NEAR(s[1].base_pct, 0.25, 1e-9);
	ASSERT_NEAR(s[1].cand_pct, 15, 1e-9);
	ASSERT_STREQ(s[2].symbol, "refill_stock");
	ASSERT_NEAR(s[2].base_pct, 0.05, 1e-9);
	/* max caps the list. */
	json_decref(keep);
	n = chargepath_diff(s, 1, runs, &rows, &keep);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(s[0].symbol, "drain_stock");
	json_decref(keep);
}

TEST(test_chargepath__a_side_without_profiles_is_unknown)
{
	struct store_run_meta v[] = {
		RUN("candidate",
		    "{\"share_pct\": 1, \"matched\": [{\"symbol\": \"x\", "
		    "\"pct\": 1}]}"),
	};
	struct store_run_metas rows = { v, 1 };
	json_t *keep = NULL;
	struct chargepath_sym s[4];
	int runs[2];
	size_t n;

	n = chargepath_diff(s, 4, runs, &rows, &keep);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(runs[0], 0);
	ASSERT(isnan(s[0].base_pct));
	ASSERT_NEAR(s[0].cand_pct, 1, 1e-9);
	json_decref(keep);
}
