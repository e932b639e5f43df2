/*
 * The canary: A/A pairs of a reference job per host, quarantine, and the
 * host's noise floor (canary.h, docs/HOST.md).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/canary.h"
#include "daemon/dconf.h"
#include "daemon/jobspec.h"
#include "daemon/sched.h"
#include "store/canary.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"

/* The canary pairs the noise floor is read from, newest first. */
#define CANARY_NOISE_PAIRS 10
/* Canary pairs judged per pass. */
#define CANARY_JUDGE_MAX 64

double
canary_cv_pct(const struct canary_moment *m, size_t njobs)
{
	double sum = 0, ss = 0, n = 0, dof = 0, mean;
	size_t i;

	for (i = 0; i < njobs; i++) {
		if (m[i].n < 2)
			continue;
		sum += m[i].sum;
		n += (double)m[i].n;
		/* Within-job sum of squared deviations. */
		ss += m[i].sumsq - m[i].sum * m[i].sum / (double)m[i].n;
		dof += (double)(m[i].n - 1);
	}
	if (dof < 1 || n <= 0)
		return NAN;
	mean = sum / n;
	if (mean == 0)
		return NAN;
	return 100.0 * sqrt(ss > 0 ? ss / dof : 0) / fabs(mean);
}

double
canary_mde_pct(double cv_pct, int64_t runs)
{
	if (!isfinite(cv_pct) || runs < 2)
		return NAN;
	return (1.959964 + 0.841621) * sqrt(2.0 / (double)runs) * cv_pct;
}

static json_t *
num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* The A/A pair of the runner's canary job, pinned to its host. */
static int
make_pair(struct store *s, const struct dconf *c,
    const struct cfg_runner_ref *r, int64_t host_id, int64_t now)
{
	const struct job_config *jc = dconf_job(c, r->canary_job);
	struct cfg_point *pts = NULL, empty = { 0, NULL, NULL, NULL };
	struct store_job_new jn[2];
	struct store_trigger_pair tp;
	int64_t runs, max_runs, pair = 0;
	size_t npts = 0;
	char *text;
	json_t *spec;
	int k, rc;

	if (jc == NULL)
		return 0; /* the config check names it; a reload may fix it */
	runs = jc->runs;
	max_runs = jc->max_runs > runs ? jc->max_runs : runs;
	config_expand(&pts, &npts, jc);
	/* A matrix job: its first point is the reference. */
	spec = jobspec_build(
	    jc, npts ? &pts[0] : &empty, NULL, NULL, runs, max_runs);
	text = pwjson_dump(spec);
	json_decref(spec);
	for (k = 0; k < 2; k++) {
		memset(&jn[k], 0, sizeof(jn[k]));
		jn[k].role = k == 0 ? "base" : "candidate";
		jn[k].spec_json = text;
		jn[k].labels_json = "[]"; /* pinned to the host anyway */
		jn[k].runs = runs;
		jn[k].max_runs = max_runs;
		jn[k].max_attempts = c->dc->max_attempts;
	}
	memset(&tp, 0, sizeof(tp));
	tp.name = jc->name;
	tp.point = npts && pts[0].label ? pts[0].label : "";
	tp.host_id = host_id;
	tp.canary = 1;
	tp.base = &jn[0];
	tp.cand = &jn[1];
	rc = store_trigger_pair(s, &pair, NULL, NULL, NULL, &tp, now);
	if (rc == 0)
		log_info("canary: host %s: pair %" PRId64 " of job %s (A/A)",
		    r->name, pair, jc->name);
	free(text);
	config_points_free(pts, npts);
	return rc == 0 ? 1 : -1;
}

/* Judges one canary pair; 1 when it quarantined its host. */
static int
judge(struct store *s, int64_t pair, int64_t now)
{
	struct store_canary_finding *f = NULL;
	size_t n = 0, i;
	int64_t host = 0;
	char why[512] = "";
	int r;

	if (store_canary_finding_list(s, &f, &n, &host, pair) != 0)
		return -1;
	for (i = 0; i < n && why[0] == '\0'; i++) {
		const char *v = f[i].verdict;

		if (strcmp(v, "regression") == 0 ||
		    strcmp(v, "improvement") == 0 || strcmp(v, "unstable") == 0)
			snprintf(why, sizeof(why),
			    "canary pair %" PRId64
			    ": %s %+.1f%% %s between two "
			    "runs of the same job on the same kernel",
			    pair, f[i].metric, f[i].change_pct, v);
		else if (strcmp(v, "change point") == 0)
			snprintf(why, sizeof(why),
			    "canary pair %" PRId64
			    ": a change point of %+.1f%% "
			    "in the canary's %s history",
			    pair, f[i].change_pct, f[i].metric);
	}
	store_canary_findings_release(f, n);
	r = store_canary_judge(s, pair, why[0] ? why : NULL, now);
	if (r != 0)
		return -1;
	if (why[0]) {
		log_warnx(
		    "canary: host %" PRId64 " quarantined: %s", host, why);
		return 1;
	}
	return 0;
}

int
canary_pass(struct store *s, const struct dconf *c, int64_t now,
    size_t *out_made, size_t *out_quarantined)
{
	size_t made = 0, quar = 0, i, n = 0;
	int64_t *pairs = NULL;
	int r = 0;

	for (i = 0; i < c->dc->nrunners && r == 0; i++) {
		const struct cfg_runner_ref *ref = &c->dc->runners[i];
		struct store_canary_host h;
		int rc;

		if (ref->canary_job == NULL)
			continue;
		rc = store_canary_host_get(s, &h, ref->name, ref->canary_job);
		if (rc == ERR_NOTFOUND) { /* not registered yet */
			store_errclear(s);
			continue;
		}
		if (rc != 0) {
			r = -1;
			break;
		}
		/* From the last one's end: a pinned canary goes before
		 * the queue's pairs, so counted from its creation a canary
		 * longer than every_s would hold the host for ever. */
		if (!h.open &&
		    (h.last_pair == 0 ||
		        h.last_done + ref->canary_every_s <= now)) {
			rc = make_pair(s, c, ref, h.host_id, now);
			if (rc < 0)
				r = -1;
			made += rc > 0;
		}
		store_canary_host_release(&h);
	}
	if (r == 0 &&
	    store_canary_unjudged(s, &pairs, &n, CANARY_JUDGE_MAX) != 0)
		r = -1;
	for (i = 0; i < n && r == 0; i++) {
		int q = judge(s, pairs[i], now);

		if (q < 0)
			r = -1;
		quar += q > 0;
	}
	free(pairs);
	if (out_made)
		*out_made = made;
	if (out_quarantined)
		*out_quarantined = quar;
	return r;
}

json_t *
canary_host_json(
    struct store *s, const struct dconf *c, const char *host, int64_t host_id)
{
	const struct cfg_runner_ref *ref = NULL;
	const struct job_config *jc;
	struct store_canary_host h;
	struct store_canary_moment *m = NULL;
	size_t nm = 0, i, j;
	json_t *o, *noise;

	for (i = 0; i < c->dc->nrunners && ref == NULL; i++)
		if (strcmp(c->dc->runners[i].name, host) == 0 &&
		    c->dc->runners[i].canary_job != NULL)
			ref = &c->dc->runners[i];
	if (ref == NULL)
		return NULL;
	jc = dconf_job(c, ref->canary_job);
	o = json_pack("{s:s, s:I}", "job", ref->canary_job, "every_s",
	    (json_int_t)ref->canary_every_s);
	if (store_canary_host_get(s, &h, host, ref->canary_job) == 0) {
		json_object_set_new(o, "last_pair",
		    h.last_pair ? json_integer(h.last_pair) : json_null());
		json_object_set_new(o, "last",
		    h.last_pair ? json_integer(h.last_done) : json_null());
		json_object_set_new(o, "open", json_boolean(h.open));
		store_canary_host_release(&h);
	} else
		store_errclear(s);
	noise = json_array();
	if (store_canary_moment_list(
	        s, &m, &nm, host_id, ref->canary_job, CANARY_NOISE_PAIRS) != 0)
		store_errclear(s);
	for (i = 0; i < nm; i = j) {
		struct canary_moment cm[2 * CANARY_NOISE_PAIRS];
		size_t k = 0;
		int64_t runs = 0;
		double cv;

		for (j = i; j < nm && strcmp(m[j].metric, m[i].metric) == 0;
		     j++) {
			if (k < sizeof(cm) / sizeof(cm[0])) {
				cm[k].n = m[j].n;
				cm[k].sum = m[j].sum;
				cm[k].sumsq = m[j].sumsq;
				k++;
			}
			runs += m[j].n;
		}
		cv = canary_cv_pct(cm, k);
		json_array_append_new(noise,
		    json_pack("{s:s, s:I, s:I, s:o, s:o, s:o}", "metric",
		        m[i].metric, "runs", (json_int_t)runs, "jobs",
		        (json_int_t)k, "cv_pct", num_or_null(cv), "mde_pct",
		        num_or_null(canary_mde_pct(cv, jc ? jc->runs : 0)),
		        "mde_max_runs_pct",
		        num_or_null(canary_mde_pct(cv,
		            jc ? (jc->max_runs > jc->runs ? jc->max_runs
		                                          : jc->runs)
		               : 0))));
	}
	store_canary_moments_release(m, nm);
	json_object_set_new(
	    o, "runs_per_side", jc ? json_integer(jc->runs) : json_null());
	json_object_set_new(o, "noise", noise);
	return o;
}

/* ---- the worker (daemon/worker.h) ---- */

int64_t
canary_worker_pass(
    struct store *s, const struct dconf *c, struct sched *sched, void *arg)
{
	size_t made = 0;

	(void)arg;
	if (canary_pass(s, c, (int64_t)time(NULL), &made, NULL) != 0 &&
	    store_errmsg(s)[0])
		log_warnx("canary: %s", store_errmsg(s));
	if (made > 0)
		sched_notify(sched);
	return 1000;
}
