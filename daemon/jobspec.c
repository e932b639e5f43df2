/*
 * The runner's job spec (see jobspec.h).
 */
#include "daemon/jobspec.h"

/*
 * The hardware counters' own min_effect (docs/MEMCG.md, "Hardware
 * counters"), used unless metrics: names the metric.  Instructions per
 * operation repeat within a few tenths of a percent from run to run;
 * cycles and IPC move with frequency, caches and contention about as
 * much as throughput does.  Only min_effect_pct: the direction comes with
 * each uploaded value, and a "better" here would count as a metric the
 * config names for the memcg tax (daemon/verdict.c, cfg_lists_higher).
 */
static const struct {
	const char *name;
	double min_effect_pct;
} counter_defaults[] = {
	{ "perf.instructions_per_op", 0.5 },
	{ "perf.cycles_per_op", 2.0 },
	{ "perf.ipc", 2.0 },
};

json_t *
jobspec_strlist(const struct strlist *l)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

json_t *
jobspec_build(const struct job_config *jc, const struct cfg_point *pt,
    const json_t *extra, json_t *tree, int64_t runs, int64_t max_runs)
{
	json_t *spec = json_object(), *params = json_object(), *metrics;
	const char *cg;
	size_t i;

	for (i = 0; i < pt->n; i++)
		json_object_set_new(
		    params, pt->keys[i], json_string(pt->values[i]));
	if (extra != NULL)
		json_object_update(params, (json_t *)extra);
	cg = json_string_value(json_object_get(params, "cgroup"));
	json_object_set_new(spec, "name", json_string(jc->name));
	json_object_set_new(
	    spec, "parser", json_string(config_parser_name(jc->parser)));
	json_object_set_new(spec, "command", jobspec_strlist(&jc->command));
	json_object_set_new(
	    spec, "server_command", jobspec_strlist(&jc->server_command));
	json_object_set_new(spec, "build", jobspec_strlist(&jc->build));
	json_object_set_new(
	    spec, "tree", tree ? json_incref(tree) : json_null());
	json_object_set_new(spec, "params", params);
	json_object_set_new(
	    spec, "point", json_string(pt->label ? pt->label : ""));
	json_object_set_new(spec, "cgroup",
	    json_pack("{s:s, s:I, s:I}", "path", cg ? cg : "root", "memory_max",
	        (json_int_t)jc->memory_max, "memory_high",
	        (json_int_t)jc->memory_high));
	json_object_set_new(
	    spec, "boot", json_string(tree ? "runner" : "none"));
	/* Rounds: the daemon alternates the pair's two jobs (store_claim). */
	if (jc->rounds > 1 || (tree != NULL && jc->kernel.build))
		json_object_set_new(spec, "rounds", json_integer(jc->rounds));
	/* A kernel job on a commit: the runner builds and boots it. */
	if (tree != NULL && jc->kernel.build) {
		json_object_set_new(spec, "kernel",
		    json_pack("{s:s, s:o, s:s, s:I, s:I}", "config",
		        jc->kernel.config ? jc->kernel.config : "defconfig",
		        "fragment", jobspec_strlist(&jc->kernel.fragment),
		        "compiler",
		        jc->kernel.compiler ? jc->kernel.compiler : "gcc",
		        "build_timeout_s",
		        (json_int_t)jc->kernel.build_timeout_s,
		        "boot_timeout_s",
		        (json_int_t)jc->kernel.boot_timeout_s));
	}
	json_object_set_new(spec, "runs", json_integer(runs));
	json_object_set_new(spec, "max_runs", json_integer(max_runs));
	json_object_set_new(spec, "timeout_s", json_integer(jc->timeout_s));
	json_object_set_new(spec, "profile", json_boolean(jc->profile));
	metrics = json_object();
	for (i = 0; i < jc->nmetrics; i++)
		json_object_set_new(metrics, jc->metrics[i].name,
		    json_pack("{s:s, s:f}", "better",
		        jc->metrics[i].better == CFG_BETTER_LOWER ? "lower"
		                                                  : "higher",
		        "min_effect_pct", jc->metrics[i].min_effect_pct));
	/* The charge-path share is judged like any metric, lower better,
	 * with its own min_effect unless metrics: names it (docs/MEMCG.md). */
	if (jc->profile &&
	    json_object_get(metrics, "memcg.charge_path_share_pct") == NULL)
		json_object_set_new(metrics, "memcg.charge_path_share_pct",
		    json_pack("{s:s, s:f}", "better", "lower", "min_effect_pct",
		        jc->profile_min_effect_pct));
	json_object_set_new(
	    spec, "profile_runs", json_integer(jc->profile_runs));
	/* Only when off, for the same reason as counters below. */
	if (!jc->adjust_other_work)
		json_object_set_new(spec, "adjust_other_work", json_false());
	/* Only when on: a spec without counters stays what it was, so base
	 * jobs made before are still recognised for reuse. */
	if (jc->counters) {
		json_object_set_new(spec, "counters", json_true());
		if (jc->counters_ops != NULL)
			json_object_set_new(spec, "counters_ops",
			    json_string(jc->counters_ops));
		for (i = 0;
		     i < sizeof(counter_defaults) / sizeof(counter_defaults[0]);
		     i++)
			if (json_object_get(
			        metrics, counter_defaults[i].name) == NULL)
				json_object_set_new(metrics,
				    counter_defaults[i].name,
				    json_pack("{s:f}", "min_effect_pct",
				        counter_defaults[i].min_effect_pct));
	}
	json_object_set_new(spec, "metrics", metrics);
	/* host: benchmark hygiene of the job (runners/host.h). */
	json_object_set_new(spec, "host",
	    json_pack("{s:s?, s:s?, s:s, s:b, s:I, s:I}", "cpus", jc->host.cpus,
	        "server_cpus", jc->host.server_cpus, "thp",
	        config_thp_name(jc->host.thp), "drop_caches",
	        jc->host.drop_caches, "warmup", (json_int_t)jc->host.warmup,
	        "pause_s", (json_int_t)jc->host.pause_s));
	return spec;
}
