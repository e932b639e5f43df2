/*
 * perfwatch changepoints [--json] [--better higher|lower] FILE
 *
 * Change points of a history series (one value per line, or "LABEL
 * VALUE" lines, in commit order), with the detector the daemon runs on
 * each metric's history (analysis/analysis.h).  Exit status: 0, 1 for bad
 * input, 2 for usage errors.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/opt.h"
#include "cli/runfile.h"
#include "common/json.h"

#define CP_USAGE                                                          \
	"usage: perfwatch changepoints [--json] [--better higher|lower] " \
	"FILE\n"
#define CP_MAX_POINTS 100000

#define usage_err(...) opt_usage_err("changepoints", CP_USAGE, __VA_ARGS__)

static const char *
label_at(const struct runfile_metric *m, size_t i)
{
	return m->label != NULL && i < m->n ? m->label[i] : NULL;
}

static void
print_json(const struct analysis_cps *c, const struct runfile_metric *m)
{
	json_t *root = json_object(), *arr = json_array();
	size_t i;

	for (i = 0; i < c->n; i++) {
		const struct analysis_cp *p = &c->cp[i];
		const char *l = label_at(m, p->index);
		json_t *o = json_object();

		json_object_set_new(
		    o, "index", json_integer((json_int_t)p->index));
		json_object_set_new(
		    o, "label", l ? json_string(l) : json_null());
		json_object_set_new(o, "before", json_real(p->before));
		json_object_set_new(o, "after", json_real(p->after));
		json_object_set_new(o, "change_pct", json_real(p->change_pct));
		json_object_set_new(o, "p_value", json_real(p->p_value));
		json_object_set_new(o, "direction",
		    json_string(analysis_verdict_name(p->direction)));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "change_points", arr);
	pwjson_print(root, stdout);
	json_decref(root);
}

static void
print_text(const struct analysis_cps *c, const struct runfile_metric *m,
    const char *path)
{
	size_t i;

	printf("%s: %zu points, noise %.2f%% (lag-1 autocorrelation %.2f), "
	       "%zu change point%s\n",
	    path, m->n, c->sigma * 100, c->phi, c->n, c->n == 1 ? "" : "s");
	if (c->n == 0)
		return;
	printf("%6s %-16s %12s %12s %8s %9s  %-11s %s\n", "index", "label",
	    "before", "after", "change", "p", "direction", "between");
	for (i = 0; i < c->n; i++) {
		const struct analysis_cp *p = &c->cp[i];
		const char *l = label_at(m, p->index);
		const char *lo = label_at(m, p->lo > 0 ? p->lo - 1 : 0);
		const char *hi = label_at(m, p->hi);
		char between[2 * 64 + 8];

		/* The change lies after point lo - 1 and by point hi. */
		if (lo != NULL && hi != NULL)
			snprintf(
			    between, sizeof(between), "%.64s .. %.64s", lo, hi);
		else
			snprintf(between, sizeof(between), "%zu .. %zu",
			    p->lo > 0 ? p->lo - 1 : 0, p->hi);
		printf("%6zu %-16.64s %12.6g %12.6g %+7.2f%% %9.2g  %-11s %s\n",
		    p->index, l ? l : "-", p->before, p->after, p->change_pct,
		    p->p_value, analysis_verdict_name(p->direction), between);
	}
}

int
cmd_changepoints(int argc, char **argv)
{
	struct runfile rf;
	struct analysis_cp_opts o;
	struct analysis_cps c;
	struct err e = { 0 };
	const char *path = NULL, *bval = NULL;
	int json = 0, better = ANALYSIS_HIGHER, npos;
	struct runfile_metric *m;
	const struct opt_spec spec[] = { OPT_FLAG("json", &json),
		OPT_VAL("better", &bval), OPT_END };

	if (opt_parse("changepoints", argc, argv, spec, &path, 1, &npos) != 0) {
		fputs(CP_USAGE, stderr);
		return 2;
	}
	if (bval != NULL && opt_better(&better, bval) != 0)
		return usage_err("--better takes higher or lower");
	if (path == NULL)
		return usage_err("need a FILE");
	if (runfile_load(&rf, path, 1, &e) != 0) {
		fprintf(stderr, "perfwatch changepoints: %s\n", err_msg(&e));
		return 1;
	}
	if (rf.n != 1) {
		fprintf(stderr,
		    "perfwatch changepoints: %s: %zu metrics; give one "
		    "series\n",
		    path, rf.n);
		runfile_release(&rf);
		return 1;
	}
	m = &rf.m[0];
	if (m->bad != NULL || m->n > CP_MAX_POINTS) {
		if (m->bad != NULL)
			fprintf(stderr, "perfwatch changepoints: %s\n", m->bad);
		else
			fprintf(stderr,
			    "perfwatch changepoints: %s: more than %d points\n",
			    path, CP_MAX_POINTS);
		runfile_release(&rf);
		return 1;
	}
	analysis_cp_opts_init(&o);
	o.better = better;
	if (analysis_changepoints(&c, m->v, m->n, &o, &e) != 0) {
		fprintf(stderr, "perfwatch changepoints: %s: %s\n", path,
		    err_msg(&e));
		runfile_release(&rf);
		return 1;
	}
	if (m->n < 2 * o.min_segment)
		fprintf(stderr,
		    "perfwatch changepoints: %s: %zu point%s: at least %zu "
		    "are needed to find a change\n",
		    path, m->n, m->n == 1 ? "" : "s", 2 * o.min_segment);
	if (json)
		print_json(&c, m);
	else
		print_text(&c, m, path);
	analysis_cps_release(&c);
	runfile_release(&rf);
	return 0;
}
