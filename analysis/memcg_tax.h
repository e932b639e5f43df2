#ifndef ANALYSIS_MEMCG_TAX_H
#define ANALYSIS_MEMCG_TAX_H

/*
 * The memcg tax: throughput in a nested memcg relative to the root memcg,
 * on the same kernel and host, as its own metric.  Pure (no I/O, no
 * globals).  memcg_tax_compute() pairs points and metrics from per-point
 * medians (the CLI); memcg_tax_ratios() and memcg_tax_taxed() are what
 * the daemon's verdict (daemon/verdict.c) and the CLI share for the
 * number itself, the median of per-run ratios (docs/MEMCG.md); the
 * ratio of medians below is the CLI's NESTED/ROOT columns.
 *
 * Pairing: a job whose matrix has a `cgroup` axis with `root` and nested
 * paths.  Points are matched by their label ("k=v,k=v", the matrix
 * point as config_expand() writes it): a nested point (cgroup=/bench)
 * pairs with the point whose label has the same other key=value pairs
 * (in any order) and cgroup=root.  For every metric with better=higher
 * present on both sides with a positive root median, the result is
 *
 *	memcg_tax.<metric> = median(nested) / median(root)
 *
 * unit "ratio", better higher: 1.0 = no tax, 0.8 = the nested memcg costs
 * 20% of the throughput.  A patch that cuts memcg overhead raises it
 * (an improvement); one that only helps the root memcg lowers it.
 * Metrics with better=lower (latency) or info are not taxed; a metric
 * missing on either side, or a root median <= 0, yields nothing: a ratio
 * is never made up.
 */
#include <stddef.h>

#include "common/err.h"

#define MEMCG_TAX_HIGHER 1
#define MEMCG_TAX_LOWER (-1)
#define MEMCG_TAX_INFO 0
#define MEMCG_TAX_PREFIX "memcg_tax."
#define MEMCG_TAX_AXIS "cgroup" /* the matrix axis */
#define MEMCG_TAX_ROOT "root"   /* its root value */

struct memcg_tax_metric {
	const char *name;
	double value; /* the point's median */
	int better;   /* MEMCG_TAX_HIGHER, _LOWER, _INFO */
};

struct memcg_tax_point {
	const char *label; /* "flows=10,cgroup=/bench" */
	const struct memcg_tax_metric *metrics;
	size_t n;
};

struct memcg_tax_result {
	char *point;      /* the nested point's label (owned) */
	char *root_point; /* the root point it was paired with (owned) */
	char *name;       /* "memcg_tax.throughput" (owned) */
	double value;     /* nested / root */
	double nested, root;
};

/*
 * Fills *out with *nout results (memcg_tax_free()).  0, or -1 (e) for a
 * label that is not "k=v[,k=v...]".  No cgroup axis: 0 results.
 */
int memcg_tax_compute(struct memcg_tax_result **out, size_t *nout,
    const struct memcg_tax_point *, size_t npoints, struct err *);
void memcg_tax_free(struct memcg_tax_result *, size_t);

/* The value of key in a label ("cgroup"), malloc'd, or NULL. */
char *memcg_tax_label_get(const char *label, const char *key);

/*
 * Which metrics are taxed: better (the direction the verdict uses: the
 * job's `metrics:` config, else the uploaded one) is "higher", and the
 * name is not telemetry ("memcg.", "system.") nor a tax itself.  When
 * the job's `metrics:` config names some higher-is-better metric,
 * listed is whether this one is among them (only those are taxed);
 * else pass -1.  1 or 0.
 */
int memcg_tax_taxed(const char *name, const char *better, int listed);

/* One measured run's value of a metric; idx is the run index. */
struct memcg_tax_run {
	long long idx;
	double value;
};

/*
 * Per-run ratios nested/root on one kernel: run i of the nested job is
 * paired with run i of the root job (the same index; runs present on
 * one side only are left out, as is an index whose root value is not
 * > 0 or whose nested value is not finite and >= 0).  out has room for
 * nn values; returns how many were written, in the nested runs' order.
 * The daemon's memcg_tax.<metric> comparison and `perfwatch memcg-tax`
 * both use this, so their numbers agree.
 */
size_t memcg_tax_ratios(double *out, const struct memcg_tax_run *nested,
    size_t nn, const struct memcg_tax_run *root, size_t nr);

#endif
