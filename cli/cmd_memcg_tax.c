/*
 * perfwatch memcg-tax JOB_ID...: the memcg tax (analysis/memcg_tax.h,
 * docs/MEMCG.md) of jobs that ran on one kernel -- e.g. the base jobs of
 * every matrix point of a submit -- from their stored runs (status ok,
 * index below max_runs: the profiled run is left out).  Points pair as
 * memcg_tax_compute() says; the tax is the median of the per-run ratios
 * nested/root (memcg_tax_ratios(), run i with run i), the number the
 * daemon's memcg_tax.<metric> comparison shows as that side's median.
 * Directions are the uploaded ones (the job config's are not in the job
 * view).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/memcg_tax.h"
#include "cli/cli.h"
#include "cli/opt.h"
#include "common/caps.h"
#include "common/xalloc.h"

static int
usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch memcg-tax [--server URL] [--json] "
	    "JOB_ID...\n");
	return 2;
}

/* One job's point: label, and each metric's measured runs and median. */
struct point {
	char *label;
	struct memcg_tax_metric *m;
	char **names;
	struct memcg_tax_run **runs; /* per metric */
	size_t *nruns;
	size_t n;
};

/* A measured run: status ok, below max_runs (an old profile slot is
 * not one; profiled measured runs are), as the daemon's verdict reads
 * them. */
static int
measured(json_t *r, int64_t max_runs)
{
	const char *st = json_string_value(json_object_get(r, "status"));

	return st != NULL && strcmp(st, "ok") == 0 &&
	    (max_runs <= 0 ||
	        json_integer_value(json_object_get(r, "index")) < max_runs);
}

static void
point_from_job(struct point *p, json_t *job)
{
	json_t *runs = json_object_get(job, "runs"), *r, *m;
	const char *label = json_string_value(json_object_get(job, "point"));
	int64_t max_runs = json_integer_value(json_object_get(job, "max_runs"));
	size_t i, k, l;

	memset(p, 0, sizeof(*p));
	p->label = xstrdup(label ? label : "");
	json_array_foreach(runs, i, r)
	{
		if (!measured(r, max_runs))
			continue;
		json_array_foreach(json_object_get(r, "metrics"), k, m)
		{
			const char *name =
			    json_string_value(json_object_get(m, "name"));
			const char *b =
			    json_string_value(json_object_get(m, "better"));

			if (name == NULL)
				continue;
			for (l = 0; l < p->n; l++)
				if (strcmp(p->names[l], name) == 0)
					break;
			if (l == p->n) {
				p->names = xreallocarray(
				    p->names, p->n + 1, sizeof(char *));
				p->runs = xreallocarray(
				    p->runs, p->n + 1, sizeof(*p->runs));
				p->nruns = xreallocarray(
				    p->nruns, p->n + 1, sizeof(size_t));
				p->m = xreallocarray(
				    p->m, p->n + 1, sizeof(*p->m));
				p->names[p->n] = xstrdup(name);
				p->runs[p->n] = NULL;
				p->nruns[p->n] = 0;
				p->m[p->n].name = p->names[p->n];
				p->m[p->n].better = MEMCG_TAX_INFO;
				p->n++;
			}
			if (b && strcmp(b, "higher") == 0)
				p->m[l].better = MEMCG_TAX_HIGHER;
			else if (b && strcmp(b, "lower") == 0)
				p->m[l].better = MEMCG_TAX_LOWER;
			p->runs[l] = xreallocarray(
			    p->runs[l], p->nruns[l] + 1, sizeof(**p->runs));
			p->runs[l][p->nruns[l]].idx =
			    (long long)json_integer_value(
			        json_object_get(r, "index"));
			p->runs[l][p->nruns[l]++].value =
			    json_number_value(json_object_get(m, "value"));
		}
	}
	for (l = 0; l < p->n; l++) {
		double *v = xcalloc(p->nruns[l] + 1, sizeof(double));

		for (k = 0; k < p->nruns[l]; k++)
			v[k] = p->runs[l][k].value;
		p->m[l].value = analysis_median_inplace(v, p->nruns[l]);
		free(v);
	}
}

static void
point_free(struct point *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->names[i]);
		free(p->runs[i]);
	}
	free(p->names);
	free(p->runs);
	free(p->nruns);
	free(p->m);
	free(p->label);
}

/* The runs of metric at the point labelled label, or NULL. */
static const struct memcg_tax_run *
runs_at(const struct point *pts, size_t npts, const char *label,
    const char *metric, size_t *n)
{
	size_t i, l;

	*n = 0;
	for (i = 0; i < npts; i++) {
		if (strcmp(pts[i].label, label) != 0)
			continue;
		for (l = 0; l < pts[i].n; l++)
			if (strcmp(pts[i].names[l], metric) == 0) {
				*n = pts[i].nruns[l];
				return pts[i].runs[l];
			}
	}
	return NULL;
}

/*
 * The daemon's number for a result: the median of the per-run ratios
 * (memcg_tax_ratios: run i nested / run i root).  0 and *out, or -1 when
 * no run index is on both sides (unknown).
 */
static int
run_ratio(double *out, size_t *nout, const struct point *pts, size_t npts,
    const struct memcg_tax_result *res)
{
	const char *metric = res->name + strlen(MEMCG_TAX_PREFIX);
	size_t nn, nr, k;
	const struct memcg_tax_run *n =
	    runs_at(pts, npts, res->point, metric, &nn);
	const struct memcg_tax_run *r =
	    runs_at(pts, npts, res->root_point, metric, &nr);
	double *v = xcalloc(nn + 1, sizeof(double));

	k = memcg_tax_ratios(v, n, nn, r, nr);
	*nout = k;
	*out = analysis_median_inplace(v, k);
	free(v);
	return k ? 0 : -1;
}

int
cmd_memcg_tax(int argc, char **argv)
{
	const char *server = NULL, *token_file = NULL;
	struct cli_api api;
	struct point *pts = NULL;
	struct memcg_tax_point *tp = NULL;
	struct memcg_tax_result *res = NULL;
	struct err e = { 0 };
	size_t npts = 0, nres = 0, nids = 0, i, k, *nruns = NULL;
	int64_t *ids = xcalloc((size_t)argc + 1, sizeof(int64_t));
	const char **pos = xcalloc((size_t)argc + 1, sizeof(*pos));
	int json = 0, rc = 2, npos, a;
	json_t *out = NULL;
	const struct opt_spec spec[] = { OPT_API(&server, &token_file, &json),
		OPT_END };

	memset(&api, 0, sizeof(api));
	if (opt_parse("memcg-tax", argc, argv, spec, pos, argc, &npos) != 0) {
		rc = usage();
		goto out;
	}
	for (a = 0; a < npos; a++)
		if (cli_int_arg(&ids[nids++], "memcg-tax", "JOB_ID", pos[a], 1,
		        INT64_MAX) != 0)
			goto out;
	if (nids == 0) {
		rc = usage();
		goto out;
	}
	if ((rc = cli_api_open(&api, "memcg-tax", server, token_file, 0)) != 0)
		goto out;
	for (i = 0; i < nids; i++) {
		char path[64];
		json_t *job = NULL;

		snprintf(path, sizeof(path), "/api/v1/jobs/%" PRId64, ids[i]);
		if ((rc = cli_api_call(&job, &api, "GET", path, NULL)) != 0)
			goto out;
		pts = xreallocarray(pts, npts + 1, sizeof(*pts));
		point_from_job(&pts[npts++], job);
		json_decref(job);
	}
	tp = xcalloc(npts, sizeof(*tp));
	for (i = 0; i < npts; i++) {
		tp[i].label = pts[i].label;
		tp[i].metrics = pts[i].m;
		tp[i].n = pts[i].n;
	}
	if (memcg_tax_compute(&res, &nres, tp, npts, &e) != 0) {
		fprintf(stderr, "perfwatch memcg-tax: %s\n", err_msg(&e));
		rc = 1;
		goto out;
	}
	/* The value is the daemon's: the median of the per-run ratios
	 * (memcg_tax.h); a pairing without a common run index is unknown. */
	nruns = xcalloc(nres + 1, sizeof(*nruns));
	for (i = 0, k = 0; i < nres; i++) {
		if (run_ratio(&res[i].value, &nruns[k], pts, npts, &res[i]) !=
		    0) {
			free(res[i].point);
			free(res[i].root_point);
			free(res[i].name);
			continue;
		}
		res[k++] = res[i];
	}
	nres = k;
	if (json) {
		json_t *arr = json_array();

		for (i = 0; i < nres; i++)
			json_array_append_new(arr,
			    json_pack(
			        "{s:s, s:s, s:s, s:f, s:f, s:f, s:I, s:s}",
			        "point", res[i].point, "root_point",
			        res[i].root_point, "name", res[i].name, "value",
			        res[i].value, "nested", res[i].nested, "root",
			        res[i].root, "runs", (json_int_t)nruns[i],
			        "better", "higher"));
		out = json_pack("{s:o}", "memcg_tax", arr);
		pwjson_print(out, stdout);
	} else if (nres == 0) {
		printf("no nested/root pairs with throughput-like metrics "
		       "(the jobs need a cgroup axis with root)\n");
	} else {
		struct cli_table t;
		char **row;

		cli_table_init(&t, 6);
		row = xcalloc(6, sizeof(char *));
		row[0] = xstrdup("POINT");
		row[1] = xstrdup("METRIC");
		row[2] = xstrdup("NESTED");
		row[3] = xstrdup("ROOT");
		row[4] = xstrdup("TAX");
		row[5] = xstrdup("RUNS");
		cli_table_add(&t, row);
		free(row);
		for (i = 0; i < nres; i++) {
			struct buf c = BUF_INIT(CAP_LINE);

			row = xcalloc(6, sizeof(char *));
			cli_put_clean(&c, res[i].point, 200);
			row[0] = buf_take(&c);
			cli_put_clean(&c, res[i].name, 200);
			row[1] = buf_take(&c);
			row[2] = xasprintf("%.6g", res[i].nested);
			row[3] = xasprintf("%.6g", res[i].root);
			row[4] = xasprintf("%.4f", res[i].value);
			row[5] = xasprintf("%zu", nruns[i]);
			cli_table_add(&t, row);
			free(row);
			buf_release(&c);
		}
		cli_table_print(&t);
		cli_table_free(&t);
	}
	rc = 0;
out:
	json_decref(out);
	free(nruns);
	memcg_tax_free(res, nres);
	free(tp);
	for (i = 0; i < npts; i++)
		point_free(&pts[i]);
	free(pts);
	free(ids);
	free(pos);
	cli_api_close(&api);
	return rc;
}
