/*
 * daemon/chargepath: the two sides' charge-path symbols side by side.
 */
#include <math.h>
#include <string.h>

#include "common/json.h"
#include "daemon/chargepath.h"
#include "tests/unit/test.h"

static void
add(json_t *rows, const char *role, const char *blob)
{
	json_array_append_new(rows,
	    json_pack(
	        "{s:s, s:i, s:s}", "role", role, "run", 0, "profile", blob));
}

TEST(test_chargepath__means_per_side_largest_change_first)
{
	json_t *rows = json_array(), *keep = NULL;
	struct chargepath_sym s[8];
	int runs[2];
	size_t n;

	add(rows, "base",
	    "{\"share_pct\": 0.4, \"matched\": [{\"symbol\": "
	    "\"try_charge_memcg\", \"pct\": 0.3}, {\"symbol\": "
	    "\"refill_stock\", \"pct\": 0.1}]}");
	add(rows, "base",
	    "{\"share_pct\": 0.2, \"matched\": [{\"symbol\": "
	    "\"try_charge_memcg\", \"pct\": 0.2}]}");
	add(rows, "candidate",
	    "{\"share_pct\": 45, \"matched\": [{\"symbol\": "
	    "\"drain_stock\", \"pct\": 30}, {\"symbol\": "
	    "\"try_charge_memcg\", \"pct\": 15}]}");
	/* Unknown share: not averaged, not counted. */
	add(rows, "candidate",
	    "{\"share_pct\": null, \"reason\": \"no kernel sample\"}");
	add(rows, "candidate", "not json");
	n = chargepath_diff(s, 8, runs, rows, &keep);
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
	n = chargepath_diff(s, 1, runs, rows, &keep);
	ASSERT_INTEQ(n, 1);
	ASSERT_STREQ(s[0].symbol, "drain_stock");
	json_decref(keep);
	json_decref(rows);
}

TEST(test_chargepath__a_side_without_profiles_is_unknown)
{
	json_t *rows = json_array(), *keep = NULL;
	struct chargepath_sym s[4];
	int runs[2];
	size_t n;

	add(rows, "candidate",
	    "{\"share_pct\": 1, \"matched\": [{\"symbol\": \"x\", \"pct\": "
	    "1}]}");
	n = chargepath_diff(s, 4, runs, rows, &keep);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(runs[0], 0);
	ASSERT(isnan(s[0].base_pct));
	ASSERT_NEAR(s[0].cand_pct, 1, 1e-9);
	json_decref(keep);
	json_decref(rows);
}
