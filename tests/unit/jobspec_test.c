/*
 * The runner's job spec (daemon/jobspec.c): what counters: adds, and
 * that a job without it gets the spec it always had.
 */
#include <string.h>

#include "common/json.h"
#include "config/config.h"
#include "daemon/jobspec.h"
#include "tests/unit/test.h"

static json_t *
spec_of(const char *yaml)
{
	struct cfg_errors errs = { 0 };
	struct job_config *j = NULL;
	struct cfg_point pt = { 0 };
	json_t *spec;

	if (config_parse_job(&j, "t.yaml", yaml, strlen(yaml), &errs) != 0) {
		cfg_errors_free(&errs);
		return NULL;
	}
	pt.label = "";
	spec = jobspec_build(j, &pt, NULL, NULL, 5, 12);
	job_config_free(j);
	return spec;
}

static double
min_effect(json_t *spec, const char *metric)
{
	json_t *m = json_object_get(json_object_get(spec, "metrics"), metric);

	return json_number_value(json_object_get(m, "min_effect_pct"));
}

TEST(test_jobspec__counters_defaults)
{
	json_t *s = spec_of("name: t\nparser: neper\ncommand: [x]\n"
	                    "counters: true\ncounters_ops: num_transactions\n"
	                    "metrics:\n"
	                    "  perf.cycles_per_op: {better: lower, "
	                    "min_effect: 5%}\n"
	                    "  throughput: {better: higher}\n");
	json_t *ipc;

	ASSERT(s != NULL);
	ASSERT(json_is_true(json_object_get(s, "counters")));
	ASSERT_STREQ(json_string_value(json_object_get(s, "counters_ops")),
	    "num_transactions");
	ASSERT_NEAR(min_effect(s, "perf.instructions_per_op"), 0.5, 1e-12);
	ASSERT_NEAR(min_effect(s, "perf.ipc"), 2.0, 1e-12);
	/* metrics: names it: the config's own value and direction. */
	ASSERT_NEAR(min_effect(s, "perf.cycles_per_op"), 5.0, 1e-12);
	ASSERT_STREQ(json_string_value(json_object_get(
	                 json_object_get(json_object_get(s, "metrics"),
	                     "perf.cycles_per_op"),
	                 "better")),
	    "lower");
	/* The defaults carry no direction (the upload has it). */
	ipc = json_object_get(json_object_get(s, "metrics"), "perf.ipc");
	ASSERT(json_object_get(ipc, "better") == NULL);
	ASSERT_NEAR(min_effect(s, "throughput"), 1.0, 1e-12);
	json_decref(s);
}

TEST(test_jobspec__no_counters_no_keys)
{
	json_t *s = spec_of("name: t\nparser: fio\ncommand: [fio]\n");

	ASSERT(s != NULL);
	ASSERT(json_object_get(s, "counters") == NULL);
	ASSERT(json_object_get(s, "counters_ops") == NULL);
	ASSERT_INTEQ(json_object_size(json_object_get(s, "metrics")), 0);
	json_decref(s);
	/* counters without counters_ops: no ops key, the defaults still. */
	s = spec_of("name: t\nparser: fio\ncommand: [fio]\ncounters: true\n");
	ASSERT(s != NULL);
	ASSERT(json_object_get(s, "counters_ops") == NULL);
	ASSERT_INTEQ(json_object_size(json_object_get(s, "metrics")), 3);
	json_decref(s);
}
