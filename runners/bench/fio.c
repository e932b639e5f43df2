/*
 * fio --output-format=json and json+ (fio 3.x).
 *
 * fio may print notes before the JSON document on stdout; lines before
 * the first one starting with '{' are blanked (kept as empty lines so
 * that error positions still name the line of the whole output).
 *
 * Per direction (read, write, trim) that did I/O in at least one job:
 *   <dir>_bw            sum over jobs of bw (KiB/s), reported in MiB/s
 *   <dir>_iops          sum over jobs
 *   <dir>_clat_mean     the jobs' means weighted by their sample counts
 *                       (clat_ns.N): the exact mean of all completions
 *   <dir>_clat_pNN      p50, p90, p95, p99, p99.9, in us.  One job (or
 *                       group_reporting): fio's own values.  Several jobs
 *                       with json+ histograms: the bins are merged and
 *                       the percentile recomputed with fio's rule (the
 *                       first bin where the running count reaches
 *                       p/100 * N), which gives what group_reporting
 *                       would print.  Several jobs without histograms:
 *                       the largest of the jobs' values (the worst job),
 *                       since per-job percentiles cannot be combined.
 * and "jobs", the number of job entries.  A job with a non-zero "error"
 * fails the parse.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/xalloc.h"
#include "runners/bench/bench_int.h"

static const struct {
	const char *key, *name;
	double p;
} pcts[] = {
	{ "50.000000", "p50", 50 },
	{ "90.000000", "p90", 90 },
	{ "95.000000", "p95", 95 },
	{ "99.000000", "p99", 99 },
	{ "99.900000", "p99.9", 99.9 },
};
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

struct bin {
	double val, count;
};

struct dir_acc {
	int jobs; /* jobs that did I/O this way */
	double bw, iops, n, wmean;
	double pct[NPCTS];
	int have_pct[NPCTS];
	int all_bins;
	struct bin *bins;
	size_t nbins, abins;
};

static int
num_field(double *out, json_t *o, const char *key, const char *path,
    int required, struct err *e)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		if (required)
			return err_set(e, "field '%s.%s': missing", path, key);
		return 1;
	}
	if (!json_is_number(v))
		return err_set(
		    e, "field '%s.%s': expected a number", path, key);
	*out = json_number_value(v);
	if (*out < 0)
		return err_set(e, "field '%s.%s': negative", path, key);
	return 0;
}

static int
add_bins(struct dir_acc *d, json_t *bins, const char *path, struct err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(bins, k, v)
	{
		double key, cnt;

		if (bench_strtod(k, &key) == -1 || !json_is_number(v) ||
		    (cnt = json_number_value(v)) < 0)
			return err_set(
			    e, "field '%s.bins.%.40s': bad bin", path, k);
		if (d->nbins == d->abins) {
			d->abins = d->abins ? d->abins * 2 : 256;
			d->bins =
			    xreallocarray(d->bins, d->abins, sizeof(*d->bins));
		}
		d->bins[d->nbins].val = key;
		d->bins[d->nbins].count = cnt;
		d->nbins++;
	}
	return 0;
}

static int
cmp_bin(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;

	return x->val < y->val ? -1 : (x->val > y->val);
}

static int
take_dir(
    struct dir_acc *d, json_t *job, const char *dir, int jobidx, struct err *e)
{
	json_t *o = json_object_get(job, dir), *clat, *pct, *bins;
	char path[96], cpath[128];
	double kb = 0, ios = 0, bw, iops, mean, n, scale = 1;
	size_t i;
	int r;

	snprintf(path, sizeof(path), "jobs[%d].%s", jobidx, dir);
	if (o == NULL)
		return 0;
	if (!json_is_object(o))
		return err_set(e, "field '%s': expected an object", path);
	if ((r = num_field(&ios, o, "total_ios", path, 0, e)) < 0 ||
	    (r = num_field(&kb, o, "io_kbytes", path, 0, e)) < 0)
		return -1;
	if (num_field(&bw, o, "bw", path, 1, e) < 0 ||
	    num_field(&iops, o, "iops", path, 1, e) < 0)
		return -1;
	if (ios == 0 && kb == 0)
		return 0; /* this job did not do I/O this way */
	if ((clat = json_object_get(o, "clat_ns")) == NULL) {
		/* fio 2.x: microseconds. */
		clat = json_object_get(o, "clat");
		scale = 1000;
	}
	snprintf(cpath, sizeof(cpath), "%s.%s", path,
	    scale == 1 ? "clat_ns" : "clat");
	if (!json_is_object(clat))
		return err_set(e, "field '%s.clat_ns': missing", path);
	if (num_field(&mean, clat, "mean", cpath, 1, e) < 0 ||
	    num_field(&n, clat, "N", cpath, 1, e) < 0)
		return -1;
	d->jobs++;
	d->bw += bw;
	d->iops += iops;
	d->n += n;
	d->wmean += mean * scale * n;
	if (d->jobs == 1)
		d->all_bins = 1;
	bins = json_object_get(clat, "bins");
	if (bins != NULL && !json_is_object(bins))
		return err_set(e, "field '%s.bins': expected an object", cpath);
	if (bins == NULL || scale != 1)
		d->all_bins = 0;
	else if (add_bins(d, bins, cpath, e) < 0)
		return -1;
	pct = json_object_get(clat, "percentile");
	if (pct == NULL)
		return 0;
	if (!json_is_object(pct))
		return err_set(
		    e, "field '%s.percentile': expected an object", cpath);
	for (i = 0; i < NPCTS; i++) {
		double v;
		char ppath[160];

		snprintf(ppath, sizeof(ppath), "%s.percentile", cpath);
		if ((r = num_field(&v, pct, pcts[i].key, ppath, 0, e)) < 0)
			return -1;
		if (r == 1)
			continue;
		v *= scale;
		if (!d->have_pct[i] || v > d->pct[i])
			d->pct[i] = v;
		d->have_pct[i] = 1;
	}
	return 0;
}

/* fio's rule, over the merged histogram. */
static void
bins_percentiles(struct dir_acc *d)
{
	double total = 0, sum = 0;
	size_t i, j = 0, w = 0;

	qsort(d->bins, d->nbins, sizeof(*d->bins), cmp_bin);
	for (i = 0; i < d->nbins; i++) {
		if (w > 0 && d->bins[w - 1].val == d->bins[i].val)
			d->bins[w - 1].count += d->bins[i].count;
		else
			d->bins[w++] = d->bins[i];
	}
	d->nbins = w;
	for (i = 0; i < d->nbins; i++)
		total += d->bins[i].count;
	if (total == 0)
		return;
	for (i = 0; i < d->nbins && j < NPCTS; i++) {
		sum += d->bins[i].count;
		while (j < NPCTS && sum >= pcts[j].p / 100.0 * total) {
			d->pct[j] = d->bins[i].val;
			d->have_pct[j] = 1;
			j++;
		}
	}
}

int
bench_fio_parse(struct bench_result *out, const char *raw, size_t len)
{
	static const char *const dirs[] = { "read", "write", "trim" };
	struct dir_acc acc[3];
	json_t *root = NULL, *jobs, *job;
	char *copy;
	size_t i, start = 0, k;
	int rc = -1, any = 0, njobs;

	memset(acc, 0, sizeof(acc));
	/* Blank any text before the document, keeping its newlines. */
	copy = xmalloc(len + 1);
	memcpy(copy, raw, len);
	copy[len] = '\0';
	for (;;) {
		size_t s = start;

		while (s < len && (copy[s] == ' ' || copy[s] == '\t'))
			s++;
		if (s >= len || copy[s] == '{' || copy[s] == '[')
			break;
		while (start < len && copy[start] != '\n')
			copy[start++] = ' ';
		if (start < len)
			start++;
	}
	if (start >= len) {
		err_set(&out->err, "line 1: no JSON document in the output");
		goto done;
	}
	if ((root = pwjson_parse(copy, len, &out->err)) == NULL)
		goto done;
	if (!json_is_object(root)) {
		err_set(&out->err, "expected a JSON object at the top");
		goto done;
	}
	jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs) || json_array_size(jobs) == 0) {
		err_set(&out->err, "field 'jobs': missing or empty");
		goto done;
	}
	njobs = (int)json_array_size(jobs);
	json_array_foreach(jobs, i, job)
	{
		json_t *ev;

		if (!json_is_object(job)) {
			err_set(&out->err,
			    "field 'jobs[%zu]': expected an "
			    "object",
			    i);
			goto done;
		}
		ev = json_object_get(job, "error");
		if (ev != NULL &&
		    (!json_is_integer(ev) || json_integer_value(ev) != 0)) {
			const char *name = NULL;

			pwjson_str_opt(&name, job, "jobname", NULL);
			err_set(&out->err,
			    "field 'jobs[%zu].error': job '%.60s' failed "
			    "with error %lld",
			    i, name ? name : "?",
			    json_is_integer(ev)
			        ? (long long)json_integer_value(ev)
			        : -1LL);
			goto done;
		}
		for (k = 0; k < 3; k++)
			if (take_dir(&acc[k], job, dirs[k], (int)i, &out->err) <
			    0)
				goto done;
	}
	rc = bench_add(out, "jobs", njobs, "", BENCH_INFO);
	for (k = 0; rc == 0 && k < 3; k++) {
		struct dir_acc *d = &acc[k];

		if (d->jobs == 0)
			continue;
		any = 1;
		if (d->jobs > 1 && d->all_bins) {
			memset(d->have_pct, 0, sizeof(d->have_pct));
			bins_percentiles(d);
		}
		rc = bench_addf(out, d->bw / 1024.0, "MiB/s", BENCH_HIGHER,
		    "%s_bw", dirs[k]);
		if (rc == 0)
			rc = bench_addf(out, d->iops, "IOPS", BENCH_HIGHER,
			    "%s_iops", dirs[k]);
		if (rc == 0 && d->n > 0)
			rc = bench_addf(out, d->wmean / d->n / 1000.0, "us",
			    BENCH_LOWER, "%s_clat_mean", dirs[k]);
		for (i = 0; rc == 0 && i < NPCTS; i++)
			if (d->have_pct[i])
				rc = bench_addf(out, d->pct[i] / 1000.0, "us",
				    BENCH_LOWER, "%s_clat_%s", dirs[k],
				    pcts[i].name);
	}
	if (rc == 0 && !any)
		rc = err_set(&out->err,
		    "no job did any I/O (read, write or "
		    "trim)");
done:
	for (k = 0; k < 3; k++)
		free(acc[k].bins);
	json_decref(root);
	free(copy);
	return rc == 0 ? 0 : -1;
}
