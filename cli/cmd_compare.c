/*
 * perfwatch compare [--json] [--better higher|lower] [--min-effect PCT]
 *     [--alpha A] [--history FILE] [--exit-code] BASE CAND
 *
 * Compares candidate runs with base runs offline, with the same analysis
 * the daemon uses (analysis/analysis.h): every metric of the files, the
 * false discovery rate controlled across them.  Exit status: 0, or 1
 * with --exit-code when a regression was found; 1 for bad input; 2 for
 * usage errors.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/opt.h"
#include "cli/runfile.h"
#include "common/json.h"
#include "common/xalloc.h"

#define COMPARE_USAGE                                                \
	"usage: perfwatch compare [--json] [--better higher|lower] " \
	"[--min-effect PCT]\n"                                       \
	"                         [--alpha A] [--history FILE] "     \
	"[--exit-code] BASE CAND\n"

#define usage_err(...) opt_usage_err("compare", COMPARE_USAGE, __VA_ARGS__)

static json_t *
jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* One compared metric. */
struct row {
	const char *name;
	const char *unit;
	int better;
	struct analysis_result r;
	const char *bad; /* a file problem: not compared */
};

static void
fmt_num(char *b, size_t n, double v)
{
	if (isfinite(v))
		snprintf(b, n, "%.6g", v);
	else
		snprintf(b, n, "-");
}

static void
print_text(const struct row *rows, size_t n, double alpha, double min_effect)
{
	size_t i, w = 6;

	for (i = 0; i < n; i++)
		if (strlen(rows[i].name) > w)
			w = strlen(rows[i].name);
	printf("%-*s %4s %4s %12s %12s %8s %20s %9s  %s\n", (int)w, "metric",
	    "n_b", "n_c", "base_median", "cand_median", "change", "95% CI", "p",
	    "verdict");
	for (i = 0; i < n; i++) {
		const struct analysis_result *r = &rows[i].r;
		char ci[64], chg[32], p[32], bm[32], cm[32];

		if (isfinite(r->change_pct))
			snprintf(chg, sizeof(chg), "%+.2f%%", r->change_pct);
		else
			snprintf(chg, sizeof(chg), "-");
		if (isfinite(r->ci_low_pct))
			snprintf(ci, sizeof(ci), "[%+.2f%%, %+.2f%%]",
			    r->ci_low_pct, r->ci_high_pct);
		else
			snprintf(ci, sizeof(ci), "-");
		if (isfinite(r->p_value))
			snprintf(p, sizeof(p), "%.2g %c", r->p_value,
			    r->p_method == ANALYSIS_P_HISTORY        ? 'H'
			        : r->p_method == ANALYSIS_P_BLOCKED  ? 'B'
			        : r->p_method == ANALYSIS_P_ADJUSTED ? 'A'
			                                             : 'W');
		else
			snprintf(p, sizeof(p), "-");
		fmt_num(bm, sizeof(bm), r->base_median);
		fmt_num(cm, sizeof(cm), r->cand_median);
		printf("%-*s %4zu %4zu %12s %12s %8s %20s %9s  %s\n", (int)w,
		    rows[i].name, r->n_base, r->n_cand, bm, cm, chg, ci, p,
		    analysis_verdict_name(r->verdict));
		if (rows[i].bad != NULL)
			printf(
			    "%*s  not compared: %s\n", (int)w, "", rows[i].bad);
		else if (r->note[0] != '\0')
			printf("%*s  %s\n", (int)w, "", r->note);
	}
	printf("(%s; alpha %g per metric, FDR q 0.05 across metrics; "
	       "min_effect %g%%; p: W Welch on logs, H calibrated on the "
	       "history, B within rounds)\n",
	    n == 1 ? (rows[0].better == ANALYSIS_LOWER ? "lower is better"
	                                               : "higher is better")
	           : "better per metric",
	    alpha, min_effect);
}

static void
print_json(const struct row *rows, size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		const struct analysis_result *r = &rows[i].r;
		json_t *o = json_object();

		json_object_set_new(o, "metric", json_string(rows[i].name));
		json_object_set_new(
		    o, "n_base", json_integer((json_int_t)r->n_base));
		json_object_set_new(
		    o, "n_cand", json_integer((json_int_t)r->n_cand));
		json_object_set_new(o, "base_median", jnum(r->base_median));
		json_object_set_new(o, "cand_median", jnum(r->cand_median));
		json_object_set_new(o, "base_mean", jnum(r->base_mean));
		json_object_set_new(o, "base_sd", jnum(r->base_sd));
		json_object_set_new(o, "cand_mean", jnum(r->cand_mean));
		json_object_set_new(o, "cand_sd", jnum(r->cand_sd));
		json_object_set_new(o, "change_pct", jnum(r->change_pct));
		json_object_set_new(o, "ci_low_pct", jnum(r->ci_low_pct));
		json_object_set_new(o, "ci_high_pct", jnum(r->ci_high_pct));
		json_object_set_new(o, "p_value", jnum(r->p_value));
		json_object_set_new(o, "verdict",
		    json_string(analysis_verdict_name(r->verdict)));
		json_object_set_new(o, "note", json_string(r->note));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "metrics", arr);
	pwjson_print(root, stdout);
	json_decref(root);
}

int
cmd_compare(int argc, char **argv)
{
	struct runfile base, cand, hist;
	struct analysis_opts o;
	struct err e = { 0 };
	struct row *rows = NULL;
	const char *files[2] = { NULL, NULL }, *hist_path = NULL;
	const char *bval = NULL, *eval = NULL, *aval = NULL;
	int json = 0, exit_code = 0, better = 0, nfiles = 0, rc = 1;
	double min_effect = 1.0, alpha = 0.01;
	size_t n = 0, j;
	const struct opt_spec spec[] = { OPT_FLAG("json", &json),
		OPT_FLAG("exit-code", &exit_code), OPT_VAL("better", &bval),
		OPT_VAL("min-effect", &eval), OPT_VAL("alpha", &aval),
		OPT_VAL("history", &hist_path), OPT_END };

	memset(&hist, 0, sizeof(hist));
	if (opt_parse("compare", argc, argv, spec, files, 2, &nfiles) != 0) {
		fputs(COMPARE_USAGE, stderr);
		return 2;
	}
	if (bval != NULL && opt_better(&better, bval) != 0)
		return usage_err("--better takes higher or lower");
	if (eval != NULL && opt_number(&min_effect, eval, 0, 100, 1) != 0)
		return usage_err(
		    "--min-effect takes a percentage in (0, 100): '%s'", eval);
	if (aval != NULL && opt_number(&alpha, aval, 0, 0.5, 0) != 0)
		return usage_err(
		    "--alpha takes a number in (0, 0.5): '%s'", aval);
	if (nfiles != 2)
		return usage_err("need BASE and CAND files");

	if (runfile_load(&base, files[0], 0, &e) != 0) {
		fprintf(stderr, "perfwatch compare: %s\n", err_msg(&e));
		return 1;
	}
	if (runfile_load(&cand, files[1], 0, &e) != 0) {
		fprintf(stderr, "perfwatch compare: %s\n", err_msg(&e));
		runfile_release(&base);
		return 1;
	}
	if (hist_path != NULL && runfile_load(&hist, hist_path, 0, &e) != 0) {
		fprintf(stderr, "perfwatch compare: %s\n", err_msg(&e));
		goto out;
	}

	/* Every metric of either file, in the base file's order first. */
	rows = xcalloc(base.n + cand.n, sizeof(*rows));
	for (j = 0; j < base.n + cand.n; j++) {
		struct runfile_metric *mb, *mc, *mh = NULL;
		struct row *row;
		const char *name =
		    j < base.n ? base.m[j].name : cand.m[j - base.n].name;
		static const double none[1] = { 1 };

		if (j >= base.n && runfile_find(&base, name) != NULL)
			continue;
		mb = runfile_find(&base, name);
		mc = runfile_find(&cand, name);
		if (hist_path != NULL)
			mh = runfile_find(&hist, name);
		row = &rows[n++];
		row->name = name;
		row->unit = mb != NULL && mb->unit ? mb->unit
		    : mc != NULL                   ? mc->unit
		                                   : NULL;
		row->better = mb != NULL && mb->better ? mb->better
		    : mc != NULL && mc->better         ? mc->better
		    : better                           ? better
		                                       : ANALYSIS_HIGHER;
		analysis_opts_init(&o);
		o.better = row->better;
		o.min_effect = min_effect;
		o.alpha = alpha;
		if (mh != NULL && mh->bad == NULL) {
			o.history = mh->v;
			o.n_history = mh->n;
		}
		if (mb != NULL && mb->bad != NULL)
			row->bad = mb->bad;
		else if (mc != NULL && mc->bad != NULL)
			row->bad = mc->bad;
		if (row->bad != NULL) {
			/* Not analysable: an explicit inconclusive row. */
			analysis_compare(&row->r, none, 0, none, 0, &o, &e);
			row->r.n_base = mb != NULL ? mb->n : 0;
			row->r.n_cand = mc != NULL ? mc->n : 0;
			continue;
		}
		if (analysis_compare(&row->r, mb != NULL ? mb->v : none,
		        mb != NULL ? mb->n : 0, mc != NULL ? mc->v : none,
		        mc != NULL ? mc->n : 0, &o, &e) != 0) {
			fprintf(stderr, "perfwatch compare: %s: %s\n", name,
			    err_msg(&e));
			goto out;
		}
		if (mb == NULL || mc == NULL)
			snprintf(row->r.note, sizeof(row->r.note), "%s",
			    mb == NULL ? "not in the base file"
			               : "not in the candidate file");
	}
	{
		struct analysis_result *res = xcalloc(n ? n : 1, sizeof(*res));

		for (j = 0; j < n; j++)
			res[j] = rows[j].r;
		analysis_fdr(res, n, 0.05);
		for (j = 0; j < n; j++)
			rows[j].r = res[j];
		free(res);
	}
	if (json)
		print_json(rows, n);
	else
		print_text(rows, n, alpha, min_effect);
	rc = 0;
	if (exit_code)
		for (j = 0; j < n; j++)
			if (rows[j].r.verdict == ANALYSIS_REGRESSION)
				rc = 1;
out:
	free(rows);
	runfile_release(&base);
	runfile_release(&cand);
	runfile_release(&hist);
	return rc;
}
