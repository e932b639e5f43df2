/*
 * Verdicts against real SQLite files: pairs are created, claimed, given
 * runs and finished through the store, as the runner API does, then
 * verdict_pair / verdict_pending / the verdict thread run and the rows
 * they wrote are read back through the store.
 */
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "common/err.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "daemon/sched.h"
#include "daemon/verdict.h"
#include "store/alerts.h"
#include "store/claim.h"
#include "store/dash.h"
#include "store/history.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"
#include "store/watch.h"
#include "tests/unit/test.h"
#include "web/rows.h"

extern char **environ;

static int dbn;
static int64_t now = 100000;

/* Fixed "noise" in [-1, 1]; base and candidate use different orders so
 * equal distributions are not equal samples. */
static const double noise_a[12] = { 0.1, -0.3, 0.5, -0.7, 0.9, -0.2, 0.4, -0.6,
	0.8, -1.0, 0.0, 0.6 };
static const double noise_b[12] = { -0.4, 0.7, -0.1, 0.3, -0.9, 0.6, -0.5, 0.2,
	-0.8, 1.0, -0.3, 0.05 };

struct mdef {
	const char *name, *unit, *better;
	double base, cand; /* centres */
	double amp;        /* relative noise amplitude */
};

static struct store *
open_db(char **path)
{
	struct store *s = NULL;
	struct err e = { 0 };

	*path = xasprintf("%s/v%d.db", test_tmpdir(), dbn++);
	if (store_open(&s, *path, &e) == -1)
		fprintf(stdout, "store_open: %s\n", err_msg(&e));
	return s;
}

static int64_t
host(struct store *s, const char *name)
{
	int64_t id = 0;

	if (store_host_register(s, &id, name, "[]", "{}", now) == -1)
		return -1;
	return id;
}

/* A pair of job `name` whose spec (what the runner gets) is spec. */
static int64_t
pair_new(struct store *s, const char *name, const char *spec, int64_t runs,
    int64_t max_runs, int64_t *b, int64_t *c)
{
	struct store_job_new jb = { "base", spec, "[]", runs, max_runs, 3 };
	struct store_job_new jc = { "candidate", spec, "[]", runs, max_runs,
		3 };
	int64_t pair = 0;

	if (store_pair_create(s, &pair, b, c, name, "p=1", &jb, &jc, now) != 0)
		return -1;
	return pair;
}

/* Uploads runs [from, to) of the metrics to job (side 0 base, 1
 * candidate), which host h holds, and finishes it. */
static int
upload_finish(struct store *s, int64_t h, int64_t job, int side,
    const struct mdef *md, size_t nm, int from, int to)
{
	struct store_metric m[32];
	int i;
	size_t k;

	for (i = from; i < to; i++) {
		struct store_run r = { job, i, "ok", 1.0, NULL, NULL, 0, m,
			nm };

		for (k = 0; k < nm; k++) {
			double c = side ? md[k].cand : md[k].base;
			const double *nz = side ? noise_b : noise_a;

			m[k].name = md[k].name;
			m[k].unit = md[k].unit;
			m[k].better = md[k].better;
			m[k].value = c * (1 + md[k].amp * nz[i % 12]);
		}
		if (store_run_add(s, h, &r, now) != 0)
			return -3;
	}
	return store_finish(s, h, job, 1, NULL, now);
}

/* Claims the next job for h, which must be want; then upload_finish. */
static int
run_job(struct store *s, int64_t h, int64_t want, int side,
    const struct mdef *md, size_t nm, int from, int to)
{
	struct store_claimed cl;
	int64_t got;

	if (store_claim(s, &cl, h, now, 3600) != 0)
		return -1;
	got = cl.job_id;
	store_claimed_release(&cl);
	if (got != want)
		return -2;
	return upload_finish(s, h, want, side, md, nm, from, to);
}

/* A whole pair: base then candidate, runs [0, n). */
static int
run_pair(struct store *s, int64_t h, int64_t b, int64_t c,
    const struct mdef *md, size_t nm, int n)
{
	int r;

	if ((r = run_job(s, h, b, 0, md, nm, 0, n)) != 0)
		return r;
	return run_job(s, h, c, 1, md, nm, 0, n);
}

/* The pair as GET /api/v1/pairs/{id} shows it (web/rows.c), or NULL. */
static int
pair_json(struct store *s, json_t **out, int64_t pair)
{
	struct store_pair p;

	*out = NULL;
	if (store_pair_get(s, &p, pair) != 0)
		return -1;
	*out = rows_pair_json(&p);
	store_pair_release(&p);
	return 0;
}

/* The comparison of metric in the pair, or NULL (caller decrefs *keep). */
static json_t *
cmp_of(struct store *s, json_t **keep, int64_t pair, const char *metric)
{
	json_t *c;
	size_t i;

	if (pair_json(s, keep, pair) != 0)
		return NULL;
	json_array_foreach(json_object_get(*keep, "comparisons"), i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "metric")),
		        metric) == 0)
			return c;
	}
	return NULL;
}

static const char *
sget(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "(null)";
}

static size_t
regressions(struct store *s)
{
	struct store_regressions l;
	size_t n;

	if (store_regression_list(
	        s, &l, &(struct store_regressions_q){ .limit = 100 }) != 0)
		return (size_t)-1;
	n = l.n;
	store_regressions_release(&l);
	return n;
}

/* The job's state, and its wanted runs into *runs_wanted (may be NULL). */
static const char *
job_state(struct store *s, int64_t id, int64_t *runs_wanted)
{
	static char buf[64];
	struct store_job_detail j;

	if (store_job_get(s, &j, id) != 0)
		return "?";
	snprintf(buf, sizeof(buf), "%s", j.job.state ? j.job.state : "(null)");
	if (runs_wanted)
		*runs_wanted = j.job.runs;
	store_job_detail_release(&j);
	return buf;
}

#define SPEC_FIXED                                                     \
	"{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ops\":{\"better\":" \
	"\"higher\",\"min_effect_pct\":2}}}"

/* A 2x difference is a regression or an improvement by direction. */
TEST(test_verdict__twice_as_slow_or_fast_by_direction)
{
	char *p;
	struct store *s = open_db(&p);
	/* ops: config says higher (uploaded as lower, config wins);
	 * lat: uploaded lower, halved; runtime: higher-is-worse time
	 * doubled. */
	struct mdef md[3] = { { "ops", "ops/s", "lower", 1000, 500, 0.01 },
		{ "lat", "us", "lower", 100, 50, 0.01 },
		{ "runtime", "s", "lower", 10, 20, 0.01 } };
	struct verdict_outcome o;
	int64_t h, b, c, pair;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	pair = pair_new(s, "j", SPEC_FIXED, 5, 5, &b, &c);
	ASSERT(pair > 0);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 3, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	ASSERT_INTEQ(o.metrics, 3);
	ASSERT_INTEQ(o.regressions, 2);
	ASSERT_INTEQ(o.improvements, 1);

	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	ASSERT_STREQ(sget(cm, "better"), "higher");
	ASSERT(json_is_true(json_object_get(cm, "final")));
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "change_pct")), -50, 1.5);
	ASSERT(json_number_value(json_object_get(cm, "ci_high")) < -40);
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "base_median")), 1000, 15);
	ASSERT_INTEQ(json_integer_value(json_object_get(cm, "n_base")), 5);
	ASSERT_INTEQ(json_integer_value(json_object_get(cm, "n_cand")), 5);
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "min_effect_pct")), 2, 1e-9);
	ASSERT(json_number_value(json_object_get(cm, "p")) < 0.01);
	ASSERT(json_number_value(json_object_get(cm, "p_adjusted")) >=
	    json_number_value(json_object_get(cm, "p")));
	json_decref(keep);
	cm = cmp_of(s, &keep, pair, "lat");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "improvement");
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "min_effect_pct")), 1, 1e-9);
	json_decref(keep);
	cm = cmp_of(s, &keep, pair, "runtime");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	json_decref(keep);

	/* Regressions become triage rows; the improvement does not. */
	ASSERT_INTEQ(regressions(s), 2);
	/* Done once: a second call finds nothing to do. */
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_NOT_READY);
	ASSERT_INTEQ(regressions(s), 2);
	store_close(s);
	free(p);
}

/* Same distribution, wide min_effect: unchanged, no regression. */
TEST(test_verdict__identical_is_unchanged)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 1000, 0.01 } };
	struct verdict_outcome o;
	int64_t h, b, c, pair;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	pair = pair_new(s, "j",
	    "{\"runs\":5,\"max_runs\":12,\"metrics\":{\"ops\":{"
	    "\"better\":\"higher\",\"min_effect_pct\":10}}}",
	    5, 12, &b, &c);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "unchanged");
	ASSERT(json_number_value(json_object_get(cm, "ci_low")) > -10);
	ASSERT(json_number_value(json_object_get(cm, "ci_high")) < 10);
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 0);
	ASSERT_STREQ(job_state(s, b, NULL), "success");
	store_close(s);
	free(p);
}

/*
 * 20% noise, no shift, min_effect 1%: inconclusive, so both jobs go back
 * to the queue for 8 runs on the same host, keeping their runs; then 12;
 * at max_runs the verdict is final whatever it is.
 */
TEST(test_verdict__noise_asks_for_more_runs)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 1000, 0.2 } };
	struct verdict_outcome o;
	int64_t h, h2, b, c, pair, runs = 0;
	struct store_claimed cl;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	h2 = host(s, "h2");
	/* max_runs 18: looks at 5, 8, 12, 18, futility judged from 9. */
	pair = pair_new(s, "j",
	    "{\"runs\":5,\"max_runs\":18,\"metrics\":{\"ops\":{"
	    "\"better\":\"higher\",\"min_effect_pct\":1}}}",
	    5, 18, &b, &c);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_MORE_RUNS);
	ASSERT_INTEQ(o.runs, 8);

	/* The interim row says so; no regression yet. */
	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "inconclusive");
	ASSERT(json_is_false(json_object_get(cm, "final")));
	ASSERT_MSG(strstr(sget(cm, "note"), "more runs requested (8)") != NULL,
	    "note: %s", sget(cm, "note"));
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 0);

	/* Both jobs queued again with 8 runs wanted. */
	ASSERT_STREQ(job_state(s, b, NULL), "queued");
	ASSERT_STREQ(job_state(s, c, NULL), "queued");
	job_state(s, c, &runs);
	ASSERT_INTEQ(runs, 8);
	/* Not yet: the pending list skips it while its jobs run. */
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_NOT_READY);

	/* Another host may not take it: the pair stays on h1. */
	ASSERT_INTEQ(store_claim(s, &cl, h2, now, 3600), ERR_NOTFOUND);
	/* h1 gets the base back with its five runs done and 8 wanted. */
	ASSERT_INTEQ(store_claim(s, &cl, h, now, 3600), 0);
	ASSERT_INTEQ(cl.job_id, b);
	ASSERT_INTEQ(cl.runs, 8);
	ASSERT_INTEQ(cl.ndone, 5);
	store_claimed_release(&cl);
	ASSERT_INTEQ(upload_finish(s, h, b, 0, md, 1, 5, 8), 0);
	ASSERT_INTEQ(run_job(s, h, c, 1, md, 1, 5, 8), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	/* Still no shift: the next look is 12. */
	ASSERT_INTEQ(o.state, VERDICT_MORE_RUNS);
	ASSERT_INTEQ(o.runs, 12);
	ASSERT_INTEQ(run_job(s, h, b, 0, md, 1, 8, 12), 0);
	ASSERT_INTEQ(run_job(s, h, c, 1, md, 1, 8, 12), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	/* No shift at 12 with 20 % noise: futile, so final before 18. */
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT(json_is_true(json_object_get(cm, "final")));
	ASSERT_MSG(strstr(sget(cm, "note"), "stopped at 12 runs") != NULL,
	    "note: %s", sget(cm, "note"));
	ASSERT_INTEQ(json_integer_value(json_object_get(cm, "n_base")), 12);
	ASSERT_INTEQ(json_integer_value(json_object_get(cm, "n_cand")), 12);
	ASSERT_MSG(strcmp(sget(cm, "verdict"), "regression") != 0 &&
	        strcmp(sget(cm, "verdict"), "improvement") != 0,
	    "no shift judged %s", sget(cm, "verdict"));
	json_decref(keep);
	ASSERT_STREQ(job_state(s, b, NULL), "success");
	store_close(s);
	free(p);
}

/* A trigger pair pinned to h that shares a base job when it can. */
static int64_t
trig_pair(struct store *s, int64_t h, const char *spec, int64_t *b, int64_t *c)
{
	struct store_job_new jb = { "base", spec, "[]", 5, 12, 3 };
	struct store_job_new jc = { "candidate", spec, "[]", 5, 12, 3 };
	struct store_trigger_pair tp;
	int64_t pair = 0;
	int reused = 0;

	memset(&tp, 0, sizeof(tp));
	tp.name = "j";
	tp.point = "p=1";
	tp.host_id = h;
	tp.reuse_age = 3600;
	tp.base = &jb;
	tp.cand = &jc;
	if (store_trigger_pair(s, &pair, b, c, &reused, &tp, now) != 0)
		return -1;
	return pair;
}

/* h runs every job it can claim up to the runs it wants; the number. */
static int
drain(struct store *s, int64_t h, const struct mdef *md)
{
	struct store_claimed cl;
	int n = 0;

	while (store_claim(s, &cl, h, now, 3600) == 0) {
		if (upload_finish(s, h, cl.job_id, strcmp(cl.role, "base") != 0,
		        md, 1, (int)cl.ndone, (int)cl.runs) != 0) {
			store_claimed_release(&cl);
			return -1;
		}
		store_claimed_release(&cl);
		n++;
	}
	return n;
}

/*
 * Two pairs share one base (baseline reuse) under adaptive runs: pair A
 * asks for 8 runs and gets them on both sides; pair B, whose candidate
 * still has 5, then asks for 8 too: only its candidate runs more (the
 * base has them), and both pairs reach a final verdict.  A verdict made
 * from a side that changed meanwhile is refused.
 */
TEST(test_verdict__shared_base_adaptive_runs)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 1000, 0.2 } };
	struct verdict_outcome o;
	struct store_side_stamp ss[2];
	int64_t h, ba, ca, bb, cb, pa, pb, runs = 0;
	struct store_vpair pj;
	int i, fa = 0, fb = 0;
	const char *spec = "{\"runs\":5,\"max_runs\":12,\"metrics\":{\"ops\":{"
	                   "\"better\":\"higher\",\"min_effect_pct\":1}}}";

	ASSERT(s != NULL);
	h = host(s, "h1");
	pa = trig_pair(s, h, spec, &ba, &ca);
	pb = trig_pair(s, h, spec, &bb, &cb);
	ASSERT(pa > 0 && pb > 0);
	ASSERT_INTEQ(bb, ba);
	ASSERT_INTEQ(drain(s, h, md), 3);
	ASSERT_INTEQ(verdict_pair(s, &o, pa, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_MORE_RUNS);
	ASSERT_INTEQ(o.runs, 8);
	/* B waits while the shared base runs again. */
	ASSERT_INTEQ(verdict_pair(s, &o, pb, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_NOT_READY);
	ASSERT_INTEQ(drain(s, h, md), 2);
	/* The base has 8 now, B's candidate 5: B asks, only cb requeues. */
	ASSERT_INTEQ(verdict_pair(s, &o, pb, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_MORE_RUNS);
	ASSERT_INTEQ(o.runs, 8);
	ASSERT_STREQ(job_state(s, ba, NULL), "success");
	ASSERT_STREQ(job_state(s, cb, NULL), "queued");
	job_state(s, cb, &runs);
	ASSERT_INTEQ(runs, 8);
	/* A verdict read before cb's new runs is stale after them. */
	ASSERT_INTEQ(store_verdict_pair_get(s, &pj, pb), 0);
	for (i = 0; i < 2; i++) {
		const struct store_vside *side = i ? &pj.cand : &pj.base;

		ss[i].job_id = side->id;
		ss[i].runs = side->runs;
		ss[i].stored = side->stored;
	}
	store_vpair_release(&pj);
	ASSERT_INTEQ(drain(s, h, md), 1);
	ASSERT_INTEQ(store_verdict_unchanged(s, ss, 2), ERR_CONFLICT);
	store_errclear(s);
	/* Whatever the noise asks for next, both end final. */
	for (i = 0; i < 6 && !(fa && fb); i++) {
		ASSERT_INTEQ(verdict_pair(s, &o, pa, now), 0);
		fa = fa || o.state == VERDICT_FINAL;
		ASSERT_INTEQ(verdict_pair(s, &o, pb, now), 0);
		fb = fb || o.state == VERDICT_FINAL;
		ASSERT(drain(s, h, md) >= 0);
	}
	ASSERT_MSG(fa && fb, "final: A %d, B %d", fa, fb);
	store_close(s);
	free(p);
}

/*
 * Benjamini-Hochberg across the pair's metrics: p_adjusted is the BH
 * adjustment of the stored p-values, and a metric significant on its own
 * among 15 null metrics is not a regression after it.
 */
TEST(test_verdict__fdr_across_metrics)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[16];
	char names[16][16];
	double ps[16], adj[16], shift;
	struct analysis_result alone;
	struct analysis_opts ao;
	struct verdict_outcome o;
	struct err e = { 0 };
	int64_t h, b, c, pair;
	json_t *keep = NULL, *cm;
	size_t i, n = 0;
	int found = 0;

	ASSERT(s != NULL);
	/* Find a shift of metric m00 significant alone (p < 0.01) whose
	 * p * 16 exceeds 0.05, so BH must demote it. */
	for (shift = 0.99; shift > 0.80; shift -= 0.002) {
		double bv[5], cv[5];

		for (i = 0; i < 5; i++) {
			bv[i] = 1000 * (1 + 0.03 * noise_a[i]);
			cv[i] = 1000 * shift * (1 + 0.03 * noise_b[i]);
		}
		analysis_opts_init(&ao);
		ao.min_effect = 1;
		ao.first_runs = ao.max_runs = 5;
		ASSERT(analysis_compare(&alone, bv, 5, cv, 5, &ao, &e) == 0);
		if (alone.verdict == ANALYSIS_REGRESSION &&
		    alone.p_value * 16 > 0.06) {
			found = 1;
			break;
		}
	}
	ASSERT_MSG(found, "no shift gives a borderline p-value");
	for (i = 0; i < 16; i++) {
		snprintf(names[i], sizeof(names[i]), "m%02zu", i);
		md[i].name = names[i];
		md[i].unit = "x";
		md[i].better = "higher";
		md[i].base = 1000 + (double)i;
		md[i].cand = i == 0 ? 1000 * shift : 1000 + (double)i;
		md[i].amp = 0.03;
	}
	h = host(s, "h1");
	pair = pair_new(s, "j", "{\"runs\":5,\"max_runs\":5}", 5, 5, &b, &c);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 16, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	ASSERT_INTEQ(o.regressions, 0);
	cm = cmp_of(s, &keep, pair, "m00");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "inconclusive");
	ASSERT_MSG(strstr(sget(cm, "note"), "false discovery") != NULL,
	    "note: %s", sget(cm, "note"));
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "p")), alone.p_value, 1e-12);
	json_array_foreach(json_object_get(keep, "comparisons"), i, cm)
	    ps[n++] = json_number_value(json_object_get(cm, "p"));
	analysis_bh_adjust(adj, ps, n);
	json_array_foreach(json_object_get(keep, "comparisons"), i, cm)
	    ASSERT_NEAR(json_number_value(json_object_get(cm, "p_adjusted")),
	        adj[i], 1e-12);
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 0);
	store_close(s);
	free(p);
}

/* Informational and one-sided metrics: rows with a note, never judged,
 * never a reason for more runs. */
TEST(test_verdict__info_and_unanalysable_metrics)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[2] = { { "ops", "ops/s", "higher", 1000, 1000, 0.001 },
		{ "pgfault", "", "higher", 100, 300, 0.01 } };
	struct verdict_outcome o;
	int64_t h, b, c, pair;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	pair = pair_new(s, "j",
	    "{\"runs\":5,\"max_runs\":12,\"metrics\":{\"pgfault\":{"
	    "\"better\":\"info\"}}}",
	    5, 12, &b, &c);
	ASSERT_INTEQ(run_job(s, h, b, 0, md, 2, 0, 5), 0);
	/* The candidate has a metric the base lacks. */
	{
		struct mdef md3[3] = { md[0], md[1],
			{ "extra", "", "higher", 5, 5, 0.01 } };

		ASSERT_INTEQ(run_job(s, h, c, 1, md3, 3, 0, 5), 0);
	}
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	ASSERT_INTEQ(o.metrics, 3);
	cm = cmp_of(s, &keep, pair, "pgfault");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "info");
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "change_pct")), 200, 10);
	ASSERT(json_is_null(json_object_get(cm, "p")));
	json_decref(keep);
	cm = cmp_of(s, &keep, pair, "extra");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "inconclusive");
	ASSERT(strstr(sget(cm, "note"), "base") != NULL);
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 0);
	store_close(s);
	free(p);
}

/* Pairs finished before a crash get their verdicts at start, from the
 * verdict thread, and a half-written verdict is redone. */
TEST(test_verdict__recovers_at_start)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 500, 0.01 } };
	struct store_comparison half = { "ops", "ops/s", "higher",
		"inconclusive", "half", 1, 1, 1, 1, NAN, NAN, NAN, NAN, NAN, 1,
		0 };
	struct verdict_worker *w = NULL;
	struct sched *sc;
	struct err e = { 0 };
	int64_t h, b, c, pair, pair2, b2, c2, id = 0;
	json_t *keep = NULL, *cm;
	size_t done = 0, more = 0;
	int i;

	ASSERT(s != NULL);
	h = host(s, "h1");
	pair = pair_new(s, "j", SPEC_FIXED, 5, 5, &b, &c);
	pair2 = pair_new(s, "j", SPEC_FIXED, 5, 5, &b2, &c2);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
	ASSERT_INTEQ(run_pair(s, h, b2, c2, md, 1, 5), 0);
	/* A crash left an interim row behind for pair 2 (as if written
	 * without its transaction). */
	ASSERT_INTEQ(store_verdict_put(s, &id, pair2, &half, now), 0);
	store_close(s);

	/* The thread's first pass, as at daemon start. */
	sc = sched_new(60, 1);
	ASSERT_MSG(verdict_start(&w, sc, p, NULL, &e) == 0, "%s", err_msg(&e));
	s = NULL;
	ASSERT(store_open(&s, p, &e) == 0);
	for (i = 0; i < 200; i++) {
		cm = cmp_of(s, &keep, pair2, "ops");
		if (cm && strcmp(sget(cm, "verdict"), "regression") == 0)
			break;
		json_decref(keep);
		keep = NULL;
		usleep(20000);
	}
	verdict_stop(w);
	sched_free(sc);
	ASSERT_MSG(i < 200, "no verdict from the thread");
	ASSERT(json_is_true(json_object_get(cm, "final")));
	json_decref(keep);
	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 2);
	/* The row kept its id: links to it stay valid. */
	{
		int64_t id2 = 0;
		struct store_comparison again = half;

		again.final = 0;
		ASSERT_INTEQ(store_verdict_put(s, &id2, pair2, &again, now), 0);
		ASSERT_INTEQ(id2, id);
	}
	/* Nothing left. */
	ASSERT_INTEQ(verdict_pending(s, &done, &more, 16, now), 0);
	ASSERT_INTEQ(done + more, 0);
	store_close(s);
	free(p);
}

/*
 * History: each final verdict appends the candidate median to its series;
 * a step in the series is found as a change point at the first pair after
 * it, and the baseline history of later pairs holds the earlier bases.
 */
TEST(test_verdict__history_change_point)
{
	char *p;
	struct store *s = open_db(&p);
	struct verdict_outcome o;
	int64_t h, b, c, pair, cands[14];
	struct store_vhists hist;
	struct store_cp_rows cps;
	double *v = NULL;
	int64_t *seq = NULL;
	size_t n = 0;
	int k;

	ASSERT(s != NULL);
	h = host(s, "h1");
	for (k = 0; k < 14; k++) {
		/* Candidates run 1000 ops/s, then 1300 from the 8th pair
		 * on; bases stay at 1000. */
		struct mdef md[1] = { { "ops", "ops/s", "higher", 1000,
		    (k < 7 ? 1000 : 1300) * (1 + 0.004 * noise_a[k % 12]),
		    0.005 } };

		pair = pair_new(s, "j",
		    "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ops\":{"
		    "\"better\":\"higher\",\"min_effect_pct\":5}}}",
		    5, 5, &b, &c);
		cands[k] = c;
		ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
		ASSERT_INTEQ(verdict_pair(s, &o, pair, now + k), 0);
		ASSERT_INTEQ(o.state, VERDICT_FINAL);
		ASSERT_INTEQ(o.improvements, k < 7 ? 0 : 1);
	}
	ASSERT_INTEQ(store_verdict_history_list(s, &hist, pair, 200), 0);
	/* 13 earlier base jobs of 5 runs each. */
	ASSERT_INTEQ(hist.n, 65);
	ASSERT_STREQ(hist.v[0].metric, "ops");
	ASSERT(hist.v[0].job < hist.v[64].job);
	store_vhists_release(&hist);

	ASSERT_INTEQ(store_history_changepoint_list(
	                 s, &cps, "", "", "h1", "j", "p=1", "ops"),
	    0);
	ASSERT_INTEQ(cps.n, 1);
	ASSERT_INTEQ(cps.v[0].seq, 7);
	ASSERT_INTEQ(cps.v[0].job_id, cands[7]);
	ASSERT_NEAR(cps.v[0].change_pct, 30, 2);
	ASSERT_STREQ(cps.v[0].direction, "improvement");
	ASSERT_STREQ(cps.v[0].host, "h1");
	store_cp_rows_release(&cps);
	/* Filters: another host, another branch: none. */
	ASSERT_INTEQ(store_history_changepoint_list(
	                 s, &cps, NULL, NULL, "h9", "j", "p=1", "ops"),
	    0);
	ASSERT_INTEQ(cps.n, 0);
	store_cp_rows_release(&cps);
	ASSERT_INTEQ(store_history_changepoint_list(
	                 s, &cps, "mm", "mm-new", NULL, "j", "p=1", "ops"),
	    0);
	ASSERT_INTEQ(cps.n, 0);
	store_cp_rows_release(&cps);
	/* The series itself: 14 candidate medians in order. */
	ASSERT_INTEQ(store_history_changepoint_list(
	                 s, &cps, NULL, NULL, NULL, "j", "p=1", "ops"),
	    0);
	ASSERT(cps.n >= 1);
	ASSERT_INTEQ(
	    store_history_tail(s, &v, &seq, &n, cps.v[0].series_id, 100), 0);
	store_cp_rows_release(&cps);
	ASSERT_INTEQ(n, 14);
	ASSERT_INTEQ(seq[13], 13);
	ASSERT_NEAR(v[0], 1000, 10);
	ASSERT_NEAR(v[13], 1300, 13);
	free(v);
	free(seq);
	store_close(s);
	free(p);
}

/* Commit k + 1 of tree mm (child of commit k) and a pair of job "j" on
 * it (candidate on the commit, no base commit). */
static int
commit_pair(struct store *s, int64_t tree, const char *spec, int k,
    int64_t *commit, int64_t *pair, int64_t *b, int64_t *c)
{
	struct store_job_new jb = { "base", spec, "[]", 5, 5, 3 };
	struct store_job_new jc = { "candidate", spec, "[]", 5, 5, 3 };
	struct store_commit sc;
	char sha[41], parent[41];

	snprintf(sha, sizeof(sha), "%040d", k + 1);
	snprintf(parent, sizeof(parent), "%040d", k);
	memset(&sc, 0, sizeof(sc));
	sc.sha = sha;
	sc.parents = k ? parent : "";
	sc.subject = "a commit";
	if (store_commit_record(s, commit, NULL, tree, &sc, "mm-new", now) != 0)
		return -1;
	jc.commit_id = *commit;
	return store_pair_create(s, pair, b, c, "j", "p=1", &jb, &jc, now);
}

/*
 * History in commit order: fourteen commits of a branch, a step up from
 * the eighth (c7); the verdicts come in another order, c7's last of all
 * (an adaptive or deprioritised pair finishes late).  The series is in
 * the branch's first-parent order anyway, and the late result moves the
 * change point to c7, where the step is.
 */
TEST(test_verdict__history_in_commit_order)
{
	static const int order[14] = { 0, 1, 2, 3, 4, 5, 6, 9, 8, 10, 12, 11,
		13, 7 };
	const char *spec = "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ops\":{"
	                   "\"better\":\"higher\",\"min_effect_pct\":5}}}";
	char *p;
	struct store *s = open_db(&p);
	struct verdict_outcome o;
	int64_t h, tree, commits[14], pairs[14], bs[14], cs[14], series;
	struct store_cp_rows cps;
	double *v = NULL;
	int64_t *seq = NULL;
	size_t n = 0;
	int k, i;

	ASSERT(s != NULL);
	h = host(s, "h1");
	ASSERT_INTEQ(store_tree_sync(s, &tree, "mm", "/nowhere"), 0);
	for (k = 0; k < 14; k++)
		ASSERT_INTEQ(commit_pair(s, tree, spec, k, &commits[k],
		                 &pairs[k], &bs[k], &cs[k]),
		    0);
	for (k = 0; k < 14; k++) {
		struct mdef md[1];

		md[0] = (struct mdef){ "ops", "ops/s", "higher", 1000,
			(k < 7 ? 1000 : 1300) * (1 + 0.004 * noise_a[k % 12]),
			0.005 };
		ASSERT_INTEQ(run_pair(s, h, bs[k], cs[k], md, 1, 5), 0);
	}
	for (i = 0; i < 14; i++) {
		ASSERT_INTEQ(verdict_pair(s, &o, pairs[order[i]], now + i), 0);
		ASSERT_INTEQ(o.state, VERDICT_FINAL);
	}
	ASSERT_INTEQ(store_history_changepoint_list(
	                 s, &cps, "mm", "mm-new", "h1", "j", "p=1", "ops"),
	    0);
	ASSERT_INTEQ(cps.n, 1);
	series = cps.v[0].series_id;
	ASSERT_INTEQ(cps.v[0].seq, 7);
	ASSERT_INTEQ(cps.v[0].job_id, cs[7]);
	ASSERT_INTEQ(cps.v[0].lo_job_id <= cs[7], 1);
	store_cp_rows_release(&cps);
	/* The points: commit order, whatever order they came in. */
	ASSERT_INTEQ(store_history_tail(s, &v, &seq, &n, series, 100), 0);
	ASSERT_INTEQ(n, 14);
	for (k = 0; k < 14; k++)
		ASSERT_NEAR(v[k], k < 7 ? 1000 : 1300, 15);
	free(v);
	free(seq);
	store_close(s);
	free(p);
}

/*
 * The baseline history is run-to-run noise: bases that measured commits
 * on either side of a 7x step (as on a branch after a big improvement)
 * must not make the step itself look like noise.  With raw values pooled,
 * a clean 7x regression after the step came out inconclusive (p 0.09);
 * each base job's runs are now centred on their own median.
 */
TEST(test_verdict__history_across_a_level_shift)
{
	char *p;
	struct store *s = open_db(&p);
	struct verdict_outcome o;
	int64_t h, b, c, pair;
	json_t *keep = NULL, *cm;
	int k;

	ASSERT(s != NULL);
	h = host(s, "h1");
	for (k = 0; k < 14; k++) {
		/* ns per op: 21 before the fix, 3 from the 8th pair on,
		 * base and candidate alike (nothing else changes). */
		double level = k < 7 ? 21 : 3;
		struct mdef md[1] = { { "ns", "ns", "lower", level, level,
		    0.01 } };

		pair = pair_new(s, "j",
		    "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ns\":{"
		    "\"better\":\"lower\",\"min_effect_pct\":25}}}",
		    5, 5, &b, &c);
		ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
		ASSERT_INTEQ(verdict_pair(s, &o, pair, now + k), 0);
		ASSERT_INTEQ(o.state, VERDICT_FINAL);
	}
	/* The revert: base at 3, candidate at 21, 70 history runs. */
	{
		struct mdef md[1] = { { "ns", "ns", "lower", 3, 21, 0.01 } };

		pair = pair_new(s, "j",
		    "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ns\":{"
		    "\"better\":\"lower\",\"min_effect_pct\":25}}}",
		    5, 5, &b, &c);
		ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
		ASSERT_INTEQ(verdict_pair(s, &o, pair, now + 20), 0);
	}
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	cm = cmp_of(s, &keep, pair, "ns");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	ASSERT(json_number_value(json_object_get(cm, "p")) < 0.001);
	json_decref(keep);
	store_close(s);
	free(p);
}

/* Runs the sqlite3 command-line tool on path (the store is the only
 * module linking SQLite; this test plays an old perfwatchd). */
static int
sqlite_cli(const char *path, const char *sql)
{
	char *argv[] = { "sqlite3", (char *)path, (char *)sql, NULL };
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "sqlite3", NULL, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) == -1)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Upgrading from v4 (before verdicts) keeps comparisons and their regressions,
 * and pairs that finished under v4 without a comparison get one. */
TEST(test_verdict__migration_keeps_regressions)
{
	char *p = xasprintf("%s/old.db", test_tmpdir());
	struct store *s = NULL;
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 500, 0.01 } };
	struct err e = { 0 };
	struct verdict_outcome o;
	int64_t h, b, c, pair, pair2, b2, c2;
	struct store_regressions rl;
	json_t *keep = NULL, *cm;

	/*
	 * The pairs are made under v4; their runs come after the upgrade,
	 * since today's claim reads columns of later versions.
	 */
	ASSERT(store_open_version(&s, p, 4, &e) == 0);
	h = host(s, "h1");
	pair = pair_new(s, "j", SPEC_FIXED, 5, 5, &b, &c);
	pair2 = pair_new(s, "j", SPEC_FIXED, 5, 5, &b2, &c2);
	store_close(s);
	ASSERT_INTEQ(
	    sqlite_cli(p,
	        "INSERT INTO comparisons (pair_id, metric,"
	        " base_median, cand_median, change_pct, ci_low,"
	        " ci_high, p, verdict, created) VALUES (1, 'ops',"
	        " 1000, 500, -50, -51, -49, 0.001, 'regression', 1);"
	        "INSERT INTO regressions (comparison_id, state,"
	        " note, created, updated) VALUES"
	        " (last_insert_rowid(), 'acknowledged', 'seen', 1, 2);"),
	    0);
	ASSERT_MSG(store_open(&s, p, &e) == 0, "%s", err_msg(&e));
	ASSERT_INTEQ(store_user_version(s), STORE_VERSION);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 1, 5), 0);
	ASSERT_INTEQ(run_pair(s, h, b2, c2, md, 1, 5), 0);
	ASSERT_INTEQ(store_regression_list(
	                 s, &rl, &(struct store_regressions_q){ .limit = 10 }),
	    0);
	ASSERT_INTEQ(rl.n, 1);
	ASSERT_STREQ(rl.v[0].state, "acknowledged");
	ASSERT_STREQ(rl.v[0].note, "seen");
	ASSERT_STREQ(rl.v[0].metric, "ops");
	store_regressions_release(&rl);
	/* Pair 1 had its comparison: it is final.  Pair 2 is pending. */
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_NOT_READY);
	ASSERT_INTEQ(verdict_pair(s, &o, pair2, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	cm = cmp_of(s, &keep, pair2, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	json_decref(keep);
	ASSERT_INTEQ(regressions(s), 2);
	store_close(s);
	free(p);
}

/* ---- memcg tax ---- */

/*
 * A pair of job "kv" at the matrix point cgroup=cg, as a submit makes it:
 * base on commit bsha, candidate on csha (spec texts differ only there
 * and in the cgroup), created at `at`; bsha NULL: the running kernel
 * (no tree) on both sides.
 */
/* The job config's `metrics:` in the specs tax_pair_new makes. */
static const char *tax_metrics = "{}";

static int64_t
tax_pair_new(struct store *s, const char *cg, const char *bsha,
    const char *csha, int64_t at, int64_t *b, int64_t *c)
{
	char *spec[2], *label = xasprintf("cgroup=%s", cg);
	struct store_job_new j[2];
	int64_t pair = 0;
	int k;

	for (k = 0; k < 2; k++) {
		spec[k] = xasprintf(
		    "{\"name\":\"kv\",\"params\":{\"cgroup\":\"%s\"},"
		    "\"point\":\"%s\",\"cgroup\":{\"path\":\"%s\","
		    "\"memory_max\":0},\"tree\":%s%s%s,\"runs\":5,"
		    "\"max_runs\":5,\"metrics\":%s}",
		    cg, label, cg, bsha ? "{\"url\":\"/t\",\"commit\":\"" : "",
		    bsha ? (k ? csha : bsha) : "null", bsha ? "\"}" : "",
		    tax_metrics);
		memset(&j[k], 0, sizeof(j[k]));
		j[k].role = k ? "candidate" : "base";
		j[k].spec_json = spec[k];
		j[k].labels_json = "[]";
		j[k].runs = j[k].max_runs = 5;
		j[k].max_attempts = 3;
	}
	if (store_pair_create(s, &pair, b, c, "kv", label, &j[0], &j[1], at) !=
	    0)
		pair = -1;
	free(spec[0]);
	free(spec[1]);
	free(label);
	return pair;
}

static double
num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Counts the memcg_tax.* comparisons of a pair. */
static size_t
tax_rows(struct store *s, int64_t pair)
{
	json_t *keep = NULL, *c;
	size_t i, n = 0;

	if (pair_json(s, &keep, pair) != 0)
		return (size_t)-1;
	json_array_foreach(json_object_get(keep, "comparisons"), i, c)
	{
		n += strncmp(sget(c, "metric"), "memcg_tax.", 10) == 0;
	}
	json_decref(keep);
	return n;
}

/*
 * The patch hides behind the root memcg: at root the candidate is 30%
 * faster, nested it is as fast as the base.  Base tax 1.0, candidate
 * tax ~0.77: a memcg_tax.ops regression on the nested pair, none on
 * the root pair; latency (lower) and telemetry (info) are not taxed.
 */
TEST(test_verdict__memcg_tax_caught_behind_root)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef root[3] = { { "ops", "ops/s", "higher", 1000, 1300, 0.01 },
		{ "lat", "us", "lower", 100, 80, 0.01 },
		{ "memcg.sock_delta", "B", "info", 10, 10, 0.01 } };
	struct mdef nested[3] = { { "ops", "ops/s", "higher", 1000, 1000,
		                      0.015 },
		{ "lat", "us", "lower", 100, 100, 0.01 },
		{ "memcg.sock_delta", "B", "info", 50, 50, 0.01 } };
	struct verdict_outcome o;
	int64_t h, rb, rc, nb, nc, rp, np;
	json_t *keep, *cm;
	size_t done = 0, more = 0;

	ASSERT(s != NULL);
	h = host(s, "h1");
	store_group_begin(s); /* one submit */
	rp = tax_pair_new(s, "root", "aaaa", "bbbb", now, &rb, &rc);
	np = tax_pair_new(s, "/pwtax", "aaaa", "bbbb", now, &nb, &nc);
	store_group_end(s);
	ASSERT(rp > 0 && np > 0);
	ASSERT_INTEQ(run_pair(s, h, rb, rc, root, 3, 5), 0);
	/* The root pair alone: its nested sibling has not run. */
	ASSERT_INTEQ(verdict_pair(s, &o, rp, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	ASSERT_INTEQ(o.tax, 0);
	ASSERT_INTEQ(run_pair(s, h, nb, nc, nested, 3, 5), 0);
	ASSERT_INTEQ(verdict_pending(s, &done, &more, 16, now), 0);
	ASSERT_INTEQ(done, 1);

	ASSERT_INTEQ(tax_rows(s, rp), 0);
	ASSERT_INTEQ(tax_rows(s, np), 1);
	cm = cmp_of(s, &keep, np, "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	ASSERT_STREQ(sget(cm, "better"), "higher");
	ASSERT_STREQ(sget(cm, "unit"), "ratio");
	ASSERT_NEAR(num(cm, "base_median"), 1.0, 0.03);
	ASSERT_NEAR(num(cm, "cand_median"), 1000.0 / 1300, 0.03);
	ASSERT_NEAR(num(cm, "change_pct"), -23, 3);
	ASSERT_INTEQ(json_integer_value(json_object_get(cm, "n_base")), 5);
	ASSERT(json_is_true(json_object_get(cm, "final")));
	ASSERT(strstr(sget(cm, "note"), "pair") != NULL);
	json_decref(keep);
	/* Plain nested throughput did not move. */
	cm = cmp_of(s, &keep, np, "ops");
	ASSERT(cm != NULL);
	ASSERT(strcmp(sget(cm, "verdict"), "regression") != 0);
	json_decref(keep);
	/* The regression is a triage row like the others. */
	ASSERT(regressions(s) >= 1);
	{
		struct store_regressions l;
		size_t i;
		int seen = 0;

		ASSERT_INTEQ(store_regression_list(s, &l,
		                 &(struct store_regressions_q){ .limit = 100 }),
		    0);
		for (i = 0; i < l.n; i++)
			if (strcmp(l.v[i].metric, "memcg_tax.ops") == 0 &&
			    l.v[i].pair_id == np)
				seen = 1;
		store_regressions_release(&l);
		ASSERT(seen);
	}
	/* And it has a history series like the others. */
	{
		struct store_cp_rows cps;

		ASSERT_INTEQ(store_history_changepoint_list(s, &cps, NULL, NULL,
		                 NULL, "kv", "cgroup=/pwtax", "memcg_tax.ops"),
		    0);
		store_cp_rows_release(&cps);
	}
	store_close(s);
	free(p);
}

/*
 * Order does not matter: the nested pair final first, its tax comes with
 * the root's verdict.  A patch that cuts the nested overhead is an
 * improvement of the tax.
 */
TEST(test_verdict__memcg_tax_nested_first_improvement)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef root[1] = { { "ops", "ops/s", "higher", 1000, 1000,
	    0.01 } };
	struct mdef nested[1] = { { "ops", "ops/s", "higher", 700, 950,
	    0.015 } };
	struct verdict_outcome o;
	int64_t h, rb, rc, nb, nc, rp, np;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	store_group_begin(s); /* one submit */
	np = tax_pair_new(s, "/a/b", "aaaa", "bbbb", now, &nb, &nc);
	rp = tax_pair_new(s, "root", "aaaa", "bbbb", now, &rb, &rc);
	store_group_end(s);
	ASSERT_INTEQ(run_pair(s, h, nb, nc, nested, 1, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, np, now), 0);
	ASSERT_INTEQ(o.tax, 0);
	ASSERT_INTEQ(tax_rows(s, np), 0);
	ASSERT_INTEQ(run_pair(s, h, rb, rc, root, 1, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, rp, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	ASSERT_INTEQ(o.tax, 1);
	ASSERT_INTEQ(o.tax_regressions, 0);
	cm = cmp_of(s, &keep, np, "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "improvement");
	ASSERT_NEAR(num(cm, "base_median"), 0.7, 0.03);
	ASSERT_NEAR(num(cm, "cand_median"), 0.95, 0.03);
	json_decref(keep);
	ASSERT_INTEQ(tax_rows(s, rp), 0);
	store_close(s);
	free(p);
}

/*
 * Grouping: two identical submits in one second stay apart (each nested
 * pair is taxed against the root of its own submit); a root measured on
 * another host, another candidate commit, another creation time, or a
 * metric the root lacks give no tax: unknown, not a number.
 */
TEST(test_verdict__memcg_tax_grouping)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef root1[2] = { { "ops", "ops/s", "higher", 1000, 1000, 0.01 },
		{ "extra", "ops/s", "higher", 10, 10, 0.01 } };
	struct mdef nest1[2] = { { "ops", "ops/s", "higher", 900, 900, 0.01 },
		{ "extra", "ops/s", "higher", 10, 10, 0.01 } };
	struct mdef root2[1] = { { "ops", "ops/s", "higher", 1000, 1000,
	    0.01 } };
	struct mdef nest2[2] = { { "ops", "ops/s", "higher", 500, 500, 0.01 },
		{ "extra", "ops/s", "higher", 10, 10, 0.01 } };
	int64_t h1, h2, id[10][3];
	json_t *keep, *cm;
	size_t done = 0, more = 0;
	int i;

	ASSERT(s != NULL);
	h1 = host(s, "h1");
	h2 = host(s, "h2");
	/* Submit A and B: identical, same second, two submits (two
	 * sibling-group scopes). */
	store_group_begin(s);
	id[0][0] =
	    tax_pair_new(s, "root", "aaaa", "bbbb", now, &id[0][1], &id[0][2]);
	id[1][0] =
	    tax_pair_new(s, "/n", "aaaa", "bbbb", now, &id[1][1], &id[1][2]);
	store_group_begin(s);
	id[2][0] =
	    tax_pair_new(s, "root", "aaaa", "bbbb", now, &id[2][1], &id[2][2]);
	id[3][0] =
	    tax_pair_new(s, "/n", "aaaa", "bbbb", now, &id[3][1], &id[3][2]);
	/* C: its nested pair runs on another host than its root. */
	store_group_begin(s);
	id[4][0] = tax_pair_new(
	    s, "root", "aaaa", "cccc", now + 1, &id[4][1], &id[4][2]);
	id[5][0] = tax_pair_new(
	    s, "/n", "aaaa", "cccc", now + 1, &id[5][1], &id[5][2]);
	/* D: a nested pair of another candidate commit, and one of
	 * another submit in the same second: no root of their own
	 * (a group is never inferred from the creation time). */
	store_group_begin(s);
	id[6][0] =
	    tax_pair_new(s, "/n", "aaaa", "dddd", now, &id[6][1], &id[6][2]);
	store_group_begin(s);
	id[7][0] =
	    tax_pair_new(s, "/n", "aaaa", "bbbb", now, &id[7][1], &id[7][2]);
	/* E: the running kernel on both sides (no commit) groups too. */
	store_group_begin(s);
	id[8][0] =
	    tax_pair_new(s, "/n", NULL, NULL, now + 9, &id[8][1], &id[8][2]);
	id[9][0] =
	    tax_pair_new(s, "root", NULL, NULL, now + 9, &id[9][1], &id[9][2]);
	store_group_end(s);
	for (i = 0; i < 10; i++)
		ASSERT(id[i][0] > 0);
	{
		/*
		 * C's pairs pinned apart, as per-host trigger pairs are: the
		 * scheduler binds a submit's unbound pairs to one host, so
		 * only pinned pairs can split a group.
		 */
		char *q = xasprintf("UPDATE pairs SET pinned = 1, host_id ="
		                    " CASE id WHEN %lld THEN %lld ELSE %lld END"
		                    " WHERE id IN (%lld, %lld);",
		    (long long)id[4][0], (long long)h1, (long long)h2,
		    (long long)id[4][0], (long long)id[5][0]);

		ASSERT_INTEQ(sqlite_cli(p, q), 0);
		free(q);
	}
	/* Pinned pairs come first in their host's claims. */
	ASSERT_INTEQ(run_pair(s, h1, id[4][1], id[4][2], root1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h2, id[5][1], id[5][2], nest1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[0][1], id[0][2], root1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[1][1], id[1][2], nest1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[2][1], id[2][2], root2, 1, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[3][1], id[3][2], nest2, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[6][1], id[6][2], nest1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[7][1], id[7][2], nest1, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[8][1], id[8][2], nest2, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h1, id[9][1], id[9][2], root1, 2, 5), 0);
	ASSERT_INTEQ(verdict_pending(s, &done, &more, 16, now), 0);
	ASSERT_INTEQ(done, 10);

	/* A: 0.9 against its own root, and "extra" too. */
	cm = cmp_of(s, &keep, id[1][0], "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_NEAR(num(cm, "base_median"), 0.9, 0.02);
	ASSERT_STREQ(sget(cm, "verdict"), "unchanged");
	json_decref(keep);
	ASSERT_INTEQ(tax_rows(s, id[1][0]), 2);
	/* B: 0.5 against root 2; root 2 has no "extra": unknown. */
	cm = cmp_of(s, &keep, id[3][0], "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_NEAR(num(cm, "base_median"), 0.5, 0.02);
	json_decref(keep);
	ASSERT_INTEQ(tax_rows(s, id[3][0]), 1);
	/* C, D: no root on the same host, commit and submit. */
	ASSERT_INTEQ(tax_rows(s, id[5][0]), 0);
	ASSERT_INTEQ(tax_rows(s, id[6][0]), 0);
	ASSERT_INTEQ(tax_rows(s, id[7][0]), 0);
	for (i = 0; i < 8; i += 2)
		if (i != 6)
			ASSERT_INTEQ(tax_rows(s, id[i][0]), 0);
	/* E: 0.5 for ops, 1.0 for extra. */
	cm = cmp_of(s, &keep, id[8][0], "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_NEAR(num(cm, "base_median"), 0.5, 0.02);
	json_decref(keep);
	ASSERT_INTEQ(tax_rows(s, id[8][0]), 2);
	ASSERT_INTEQ(tax_rows(s, id[9][0]), 0);
	store_close(s);
	free(p);
}

/*
 * The job config names ops (with options for its tax): only ops is taxed,
 * not the other higher-is-better metric, and the tax's min_effect is the
 * configured one.
 */
TEST(test_verdict__memcg_tax_configured_metrics)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef root[2] = { { "ops", "ops/s", "higher", 1000, 1000, 0.01 },
		{ "extra", "ops/s", "higher", 10, 10, 0.01 } };
	struct mdef nested[2] = { { "ops", "ops/s", "higher", 800, 760, 0.015 },
		{ "extra", "ops/s", "higher", 5, 5, 0.01 } };
	int64_t h, rb, rc, nb, nc, rp, np;
	json_t *keep, *cm;
	size_t done = 0, more = 0;

	ASSERT(s != NULL);
	tax_metrics = "{\"ops\":{\"better\":\"higher\",\"min_effect_pct\":2},"
	              "\"memcg_tax.ops\":{\"better\":\"higher\","
	              "\"min_effect_pct\":20}}";
	h = host(s, "h1");
	store_group_begin(s); /* one submit */
	rp = tax_pair_new(s, "root", "aaaa", "bbbb", now, &rb, &rc);
	np = tax_pair_new(s, "/n", "aaaa", "bbbb", now, &nb, &nc);
	store_group_end(s);
	tax_metrics = "{}";
	ASSERT(rp > 0 && np > 0);
	ASSERT_INTEQ(run_pair(s, h, rb, rc, root, 2, 5), 0);
	ASSERT_INTEQ(run_pair(s, h, nb, nc, nested, 2, 5), 0);
	ASSERT_INTEQ(verdict_pending(s, &done, &more, 16, now), 0);
	ASSERT_INTEQ(done, 2);
	ASSERT_INTEQ(tax_rows(s, np), 1);
	cm = cmp_of(s, &keep, np, "memcg_tax.ops");
	ASSERT(cm != NULL);
	ASSERT_NEAR(num(cm, "min_effect_pct"), 20, 1e-9);
	/* -5% against a 20% min_effect: not a regression. */
	ASSERT(strcmp(sget(cm, "verdict"), "regression") != 0);
	json_decref(keep);
	store_close(s);
	free(p);
}

/*
 * The charge-path share is judged (lower is better) with its own
 * min_effect even at 0 % (no sample in the charge path): the case the
 * project exists for, 0 % on the base and ~45 % on the candidate, is a
 * regression although throughput did not move; 0 % on both is unchanged.
 */
TEST(test_verdict__charge_path_share_is_judged_from_zero)
{
	char *p;
	struct store *s = open_db(&p);
	struct mdef md[2] = { { "ops", "ops/s", "higher", 1000, 1000, 0.001 },
		{ "memcg.charge_path_share_pct", "%", "lower", 0, 45, 0.05 } };
	struct mdef same[2] = { md[0],
		{ "memcg.charge_path_share_pct", "%", "lower", 0, 0, 0.05 } };
	struct verdict_outcome o;
	const char *spec =
	    "{\"runs\":5,\"max_runs\":5,\"metrics\":{"
	    "\"memcg.charge_path_share_pct\":{\"better\":\"lower\","
	    "\"min_effect_pct\":10}}}";
	int64_t h, b, c, pair, pair2;
	json_t *keep, *cm;

	ASSERT(s != NULL);
	h = host(s, "h1");
	pair = pair_new(s, "share", spec, 5, 5, &b, &c);
	ASSERT_INTEQ(run_pair(s, h, b, c, md, 2, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair, now), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);
	cm = cmp_of(s, &keep, pair, "memcg.charge_path_share_pct");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "regression");
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "base_median")), 0, 1e-9);
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "cand_median")), 45, 3);
	ASSERT_NEAR(
	    json_number_value(json_object_get(cm, "min_effect_pct")), 10, 1e-9);
	ASSERT_MSG(
	    strstr(sget(cm, "note"), "judged on share + 1 point") != NULL,
	    "note: %s", sget(cm, "note"));
	json_decref(keep);
	cm = cmp_of(s, &keep, pair, "ops");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "unchanged");
	json_decref(keep);

	pair2 = pair_new(s, "share0", spec, 5, 5, &b, &c);
	ASSERT_INTEQ(run_pair(s, h, b, c, same, 2, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, pair2, now), 0);
	cm = cmp_of(s, &keep, pair2, "memcg.charge_path_share_pct");
	ASSERT(cm != NULL);
	ASSERT_STREQ(sget(cm, "verdict"), "unchanged");
	json_decref(keep);
	store_close(s);
	free(p);
}

/* The groups an alert pass would look at, each marked seen as a decision
 * without deliveries does; the count; *steps their read's VM steps. */
static int
alert_look(struct store *s, size_t max, int64_t skip_commit, uint64_t *steps,
    int64_t at)
{
	struct store_alert_group *g = NULL;
	uint64_t before = store_read_steps(s);
	size_t n = 0, i;
	int bad = 0;

	if (store_alert_groups(s, &g, &n, max) != 0)
		return -1;
	*steps = store_read_steps(s) - before;
	for (i = 0; i < n; i++) {
		struct store_alert_decision d;
		char *key = xasprintf("c%lld/j", (long long)g[i].commit_id);

		bad |= g[i].commit_id == skip_commit;
		memset(&d, 0, sizeof(d));
		d.key = key;
		d.commit_id = g[i].commit_id;
		d.host_id = g[i].host_id;
		d.job = g[i].job;
		d.signature = "";
		d.stamp = g[i].stamp;
		if (store_alert_decide(s, &d, at) != 0)
			bad = 1;
		free(key);
	}
	store_alert_groups_release(g, n);
	return bad ? -2 : (int)n;
}

/* Host h1 and 40 commits of tree "mm", each with a pair of job "j" run
 * on h1 and its verdict final at now: 40 alert groups due. */
static int
alert_groups_due(struct store *s, const char *spec, int64_t *h,
    int64_t commits[40], int64_t pairs[40])
{
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 1300, 0.005 } };
	struct verdict_outcome o;
	int64_t tree, b, c;
	int k;

	*h = host(s, "h1");
	if (store_tree_sync(s, &tree, "mm", "/nowhere") != 0)
		return -1;
	for (k = 0; k < 40; k++)
		if (commit_pair(s, tree, spec, k, &commits[k], &pairs[k], &b,
		        &c) != 0 ||
		    run_pair(s, *h, b, c, md, 1, 5) != 0 ||
		    verdict_pair(s, &o, pairs[k], now) != 0 ||
		    o.state != VERDICT_FINAL)
			return -1;
	return 0;
}

/*
 * The alert worker's groups come from the due pairs (store v23): an idle
 * pass costs the same however many pairs were ever reported (at 1M runs
 * each pass grouped all 50,000 pairs and 100,000 comparisons, 180 ms
 * every 5 s); a new final verdict of an old pair makes it due again; and
 * a group still busy (another pair of its commit queued) takes no place
 * in the batch, so the groups behind it are looked at.
 */
TEST(test_verdict__alert_groups_read_only_due_pairs)
{
	const char *spec = "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ops\":{"
	                   "\"better\":\"higher\",\"min_effect_pct\":5}}}";
	char *p;
	struct store *s = open_db(&p);
	struct store_comparison c;
	struct store_job_new jb = { "base", spec, "[]", 5, 5, 3 };
	struct store_job_new jc = { "candidate", spec, "[]", 5, 5, 3 };
	int64_t h, commits[40], pairs[40], x, xb, xc;
	uint64_t full, idle, one;

	ASSERT(s != NULL);
	ASSERT_INTEQ(alert_groups_due(s, spec, &h, commits, pairs), 0);
	/* Another pair of the first commit, still queued: its report is
	 * not complete. */
	jc.commit_id = commits[0];
	ASSERT_INTEQ(
	    store_pair_create(s, &x, &xb, &xc, "j", "p=2", &jb, &jc, now), 0);

	/* 32 groups, none of them the busy one; then the 7 left. */
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &full, now + 1), 32);
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &idle, now + 1), 7);
	/* Nothing new: only the busy group's pair is left to read. */
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &idle, now + 1), 0);
	ASSERT_MSG(idle * 10 < full,
	    "an idle pass took %llu steps, a full one %llu",
	    (unsigned long long)idle, (unsigned long long)full);

	/* A newer final verdict of pair 3: its group is due again. */
	memset(&c, 0, sizeof(c));
	c.metric = "ops";
	c.unit = "ops/s";
	c.better = "higher";
	c.verdict = "regression";
	c.n_base = c.n_cand = 5;
	c.base_median = 1000;
	c.cand_median = 700;
	c.change_pct = -30;
	c.ci_low = c.ci_high = c.p = c.p_adjusted = NAN;
	c.min_effect = 5;
	c.final = 1;
	ASSERT_INTEQ(store_verdict_put(s, NULL, pairs[3], &c, now + 50), 0);
	/* Again while it is due: the upsert's ON CONFLICT must not turn the
	 * trigger's "already due" into a UNIQUE failure of the verdict. */
	c.cand_median = 690;
	ASSERT_INTEQ(store_verdict_put(s, NULL, pairs[3], &c, now + 55), 0);
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &one, now + 60), 1);
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &one, now + 60), 0);
	store_close(s);
	free(p);
}

/*
 * A pass stops reading the due pairs when its batch is full: with a
 * backlog (41,000 due pairs on a 1M-run store after an upgrade) each
 * pass read to the end, 100 ms a pass every 100 ms.  A group taken
 * before its other due pairs were read still gets their newest verdict
 * as its stamp, so the decision marks them all seen and the group is
 * not reported twice.
 */
TEST(test_verdict__alert_pass_reads_what_it_takes)
{
	const char *spec = "{\"runs\":5,\"max_runs\":5,\"metrics\":{\"ops\":{"
	                   "\"better\":\"higher\",\"min_effect_pct\":5}}}";
	char *p;
	struct store *s = open_db(&p);
	struct verdict_outcome o;
	struct store_job_new jb = { "base", spec, "[]", 5, 5, 3 };
	struct store_job_new jc = { "candidate", spec, "[]", 5, 5, 3 };
	struct mdef md[1] = { { "ops", "ops/s", "higher", 1000, 1300, 0.005 } };
	int64_t h, commits[40], pairs[40], x, xb, xc;
	uint64_t few, many, rest;

	ASSERT(s != NULL);
	ASSERT_INTEQ(alert_groups_due(s, spec, &h, commits, pairs), 0);
	/* The first commit's second point, its verdict newer: due last. */
	jc.commit_id = commits[0];
	ASSERT_INTEQ(
	    store_pair_create(s, &x, &xb, &xc, "j", "p=2", &jb, &jc, now), 0);
	ASSERT_INTEQ(run_pair(s, h, xb, xc, md, 1, 5), 0);
	ASSERT_INTEQ(verdict_pair(s, &o, x, now + 10), 0);
	ASSERT_INTEQ(o.state, VERDICT_FINAL);

	/* 4 of 40 groups, then 32: the small batch reads far less. */
	ASSERT_INTEQ(alert_look(s, 4, 0, &few, now + 20), 4);
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &many, now + 20), 32);
	ASSERT_MSG(few * 4 < many,
	    "a pass taking 4 groups read %llu steps, one taking 32 %llu",
	    (unsigned long long)few, (unsigned long long)many);
	/* The first commit was taken in the first pass with its newer
	 * pair unread: it never comes back (-2 if it did). */
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &rest, now + 20), 4);
	ASSERT_INTEQ(alert_look(s, 32, commits[0], &rest, now + 20), 0);
	store_close(s);
	free(p);
}
