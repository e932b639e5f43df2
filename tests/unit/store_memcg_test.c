/*
 * The store's memcg additions (schema v3): informational metrics and the
 * profiled run in the profile slot (index max_runs).  Kept apart from
 * store_test.c so the daemon's own tests stay as they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/claim.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/store.h"
#include "tests/unit/test.h"

static const struct store_job_new job_base = { "base", "{\"parser\":\"neper\"}",
	"[]", 3, 5, 2 };
static const struct store_job_new job_cand = { "candidate",
	"{\"parser\":\"neper\"}", "[]", 3, 5, 2 };

TEST(test_store__info_metrics_and_profile_slot)
{
	struct store *s = NULL;
	struct err e = { 0 };
	char *p = test_store_at("m.db");
	int64_t h = 0, b = 0;
	struct store_claimed c;
	struct store_job_detail j;
	json_t *prof;
	struct store_metric m[2] = { { "throughput", "", "higher", 5 },
		{ "memcg.pgfault_delta", "", "info", 10 } };
	struct store_metric pm[1] = { { "memcg.charge_path_share_pct", "%",
	    "lower", 0.87 } };
	struct store_run r = { 0, 0, "ok", 1, NULL, NULL, 0, m, 2 };
	struct store_run pr = { 0, 5, "ok", 1, NULL, NULL, 0, pm, 1 };

	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT(store_host_register(s, &h, "h", "[]", "{}", 1) == 0);
	ASSERT(store_pair_create(
	           s, NULL, &b, NULL, "j", "", &job_base, &job_cand, 10) == 0);
	ASSERT(store_claim(s, &c, h, 100, 60) == 0);
	store_claimed_release(&c);
	r.job_id = pr.job_id = b;
	ASSERT_MSG(store_run_add(s, h, &r, 100) == 0, "%s", store_errmsg(s));
	/* Index max_runs (5) only with a profile. */
	ASSERT_INTEQ(store_run_add(s, h, &pr, 100), ERR_INVALID);
	pr.profile = "{\"share_pct\":0.87,\"top\":[]}";
	ASSERT_MSG(store_run_add(s, h, &pr, 100) == 0, "%s", store_errmsg(s));
	pr.index = 6;
	ASSERT_INTEQ(store_run_add(s, h, &pr, 100), ERR_INVALID);
	ASSERT(store_job_get(s, &j, b) == 0);
	ASSERT_INTEQ(j.nruns, 2);
	/* The profiled run does not count as a measured run. */
	ASSERT_INTEQ(j.job.runs_done, 1);
	ASSERT(j.runs[0].profile_json == NULL);
	ASSERT(j.runs[1].profile_json != NULL);
	prof = pwjson_parse(
	    j.runs[1].profile_json, strlen(j.runs[1].profile_json), NULL);
	ASSERT(json_is_object(prof));
	ASSERT_NEAR(
	    json_number_value(json_object_get(prof, "share_pct")), 0.87, 1e-12);
	json_decref(prof);
	/* By name: memcg.pgfault_delta before throughput. */
	ASSERT(j.runs[0].nmetrics == 2);
	ASSERT_STREQ(j.runs[0].metrics[0].better, "info");
	store_job_detail_release(&j);
	store_close(s);
	free(p);
}
