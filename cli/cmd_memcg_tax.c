/*
 * perfwatch memcg-tax JOB_ID...: the memcg tax (daemon/memcg_tax.h,
 * docs/MEMCG.md) of jobs that ran on one kernel -- e.g. the base jobs of
 * every matrix point of a submit -- from their stored runs: per point the
 * median of each metric over the measured runs (status ok; the profiled
 * run is left out), then memcg_tax.<metric> = nested / root per pairing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/caps.h"
#include "common/xalloc.h"
#include "daemon/memcg_tax.h"

static int
usage(void)
{
	fprintf(stderr,
	    "usage: perfwatch memcg-tax [--server URL] [--json] "
	    "JOB_ID...\n");
	return 2;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One job's point: label and the median of each metric. */
struct point {
	char *label;
	struct memcg_tax_metric *m;
	char **names;
	size_t n;
};

static void
point_from_job(struct point *p, json_t *job)
{
	json_t *runs = json_object_get(job, "runs"), *r, *ms, *m;
	const char *label = json_string_value(json_object_get(job, "point"));
	size_t i, k, l;

	memset(p, 0, sizeof(*p));
	p->label = xstrdup(label ? label : "");
	json_array_foreach(runs, i, r)
	{
		const char *st =
		    json_string_value(json_object_get(r, "status"));

		if (st == NULL || strcmp(st, "ok") != 0 ||
		    json_object_get(r, "profile") != NULL)
			continue;
		ms = json_object_get(r, "metrics");
		json_array_foreach(ms, k, m)
		{
			const char *name =
			    json_string_value(json_object_get(m, "name"));

			if (name == NULL)
				continue;
			for (l = 0; l < p->n; l++)
				if (strcmp(p->names[l], name) == 0)
					break;
			if (l == p->n) {
				p->names = xreallocarray(
				    p->names, p->n + 1, sizeof(char *));
				p->names[p->n++] = xstrdup(name);
			}
		}
	}
	p->m = xcalloc(p->n + 1, sizeof(*p->m));
	for (l = 0; l < p->n; l++) {
		double *v = NULL;
		size_t nv = 0;
		int better = MEMCG_TAX_INFO;

		json_array_foreach(runs, i, r)
		{
			const char *st =
			    json_string_value(json_object_get(r, "status"));

			if (st == NULL || strcmp(st, "ok") != 0 ||
			    json_object_get(r, "profile") != NULL)
				continue;
			json_array_foreach(json_object_get(r, "metrics"), k, m)
			{
				const char *name = json_string_value(
				    json_object_get(m, "name"));
				const char *b = json_string_value(
				    json_object_get(m, "better"));

				if (name == NULL || strcmp(name, p->names[l]))
					continue;
				v = xreallocarray(v, nv + 1, sizeof(double));
				v[nv++] = json_number_value(
				    json_object_get(m, "value"));
				if (b && strcmp(b, "higher") == 0)
					better = MEMCG_TAX_HIGHER;
				else if (b && strcmp(b, "lower") == 0)
					better = MEMCG_TAX_LOWER;
			}
		}
		qsort(v, nv, sizeof(double), cmp_double);
		p->m[l].name = p->names[l];
		p->m[l].better = better;
		p->m[l].value =
		    nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2;
		free(v);
	}
}

static void
point_free(struct point *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	free(p->m);
	free(p->label);
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
	size_t npts = 0, nres = 0, nids = 0, i;
	int64_t *ids = xcalloc((size_t)argc + 1, sizeof(int64_t));
	int json = 0, r, rc = 2, a;
	json_t *out = NULL;

	memset(&api, 0, sizeof(api));
	for (a = 1; a < argc; a++) {
		if ((r = cli_opt(argc, argv, &a, "--server", &server)) ||
		    (r = cli_opt(
		         argc, argv, &a, "--token-file", &token_file))) {
			if (r < 0)
				goto out;
		} else if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (argv[a][0] == '-') {
			rc = usage();
			goto out;
		} else if (cli_int_arg(&ids[nids++], "memcg-tax", "JOB_ID",
		               argv[a], 1, INT64_MAX) != 0)
			goto out;
	}
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
	if (json) {
		json_t *arr = json_array();

		for (i = 0; i < nres; i++)
			json_array_append_new(arr,
			    json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:s}",
			        "point", res[i].point, "root_point",
			        res[i].root_point, "name", res[i].name, "value",
			        res[i].value, "nested", res[i].nested, "root",
			        res[i].root, "better", "higher"));
		out = json_pack("{s:o}", "memcg_tax", arr);
		pwjson_print(out, stdout);
	} else if (nres == 0) {
		printf("no nested/root pairs with throughput-like metrics "
		       "(the jobs need a cgroup axis with root)\n");
	} else {
		struct cli_table t;
		char **row;

		cli_table_init(&t, 5);
		row = xcalloc(5, sizeof(char *));
		row[0] = xstrdup("POINT");
		row[1] = xstrdup("METRIC");
		row[2] = xstrdup("NESTED");
		row[3] = xstrdup("ROOT");
		row[4] = xstrdup("TAX");
		cli_table_add(&t, row);
		free(row);
		for (i = 0; i < nres; i++) {
			struct buf c = BUF_INIT(CAP_LINE);

			row = xcalloc(5, sizeof(char *));
			cli_put_clean(&c, res[i].point, 200);
			row[0] = buf_take(&c);
			cli_put_clean(&c, res[i].name, 200);
			row[1] = buf_take(&c);
			row[2] = xasprintf("%.6g", res[i].nested);
			row[3] = xasprintf("%.6g", res[i].root);
			row[4] = xasprintf("%.4f", res[i].value);
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
	memcg_tax_free(res, nres);
	free(tp);
	for (i = 0; i < npts; i++)
		point_free(&pts[i]);
	free(pts);
	free(ids);
	cli_api_close(&api);
	return rc;
}
