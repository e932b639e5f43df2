/*
 * Bisection of regressions: the state machine (see bisect.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/bisect.h"
#include "daemon/bisect_int.h"
#include "git/git.h"
#include "store/bisect.h"
#include "store/jobs.h"
#include "store/store.h"
#include "store/watch.h"

#define BISECT_MAX_RANGE 100000 /* commits a range may hold */
#define BISECT_DEFAULT_HOST_TIMEOUT 3600

/* ---- the machine ---- */

const struct cfg_tree *
bisect_i_find_tree(const struct dconf *c, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < c->dc->ntrees; i++)
		if (strcmp(c->dc->trees[i].name, name) == 0)
			return &c->dc->trees[i];
	return NULL;
}

/* One look's working state. */
struct look {
	struct store *s;
	const struct dconf *conf;
	const struct job_config *jc; /* NULL: the job is gone */
	struct store_bisect *b;
	struct gitm_repo *repo;
	struct gitm_walk w;
	size_t *cand; /* candidates: indexes into w.commits */
	size_t ncand;
	struct store_bisect_step *steps;
	size_t nsteps;
	int64_t now;
	int changed;
	double origin_pct;  /* the starting pair's change of the metric (NAN) */
	double reg_pct;     /* the regression as the steps measure it (NAN) */
	size_t verify_from; /* steps[] index of this round's verification */
	size_t rounds_failed; /* earlier verification rounds that failed */
	struct err *e;
};

static void
look_release(struct look *l)
{
	store_bisect_release(l->b);
	gitm_repo_free(l->repo);
	gitm_walk_release(&l->w);
	free(l->cand);
	store_bisect_steps_release(l->steps, l->nsteps);
}

int
bisect_finish(struct store *s, const struct store_bisect *b, const char *state,
    const char *culprit, const char *why, int64_t now, struct err *e)
{
	struct store_bisect_set v;
	char *reason = strcmp(state, "inconclusive") == 0
	    ? xasprintf("%s; the first bad commit is in %.12s..%.12s "
	                "(after the first, up to the second)",
	          why, b->lo_sha ? b->lo_sha : b->good_sha,
	          b->hi_sha ? b->hi_sha : b->bad_sha)
	    : xstrdup(why);
	int r = 0;

	memset(&v, 0, sizeof(v));
	v.state = state;
	v.culprit_sha = culprit;
	v.reason = reason;
	if (store_bisect_cancel_jobs(s, b->id, "bisection ended", now) != 0 ||
	    store_bisect_update(s, b->id, &v, now) != 0)
		r = err_set(e, "%s", store_errmsg(s));
	else
		log_info(
		    "bisect %lld: %s: %s", (long long)b->id, state, reason);
	free(reason);
	return r;
}

/* Ends the bisection (bisect_finish). */
static int
finish(
    struct look *l, const char *state, const char *culprit, const char *reason)
{
	return bisect_finish(l->s, l->b, state, culprit, reason, l->now, l->e);
}

/* Ends it inconclusive: why, and the range narrowed so far. */
static int
inconclusive(struct look *l, const char *why)
{
	return bisect_finish(l->s, l->b, "inconclusive", "", why, l->now, l->e);
}

/* A commit's row for a job, a stub when the watcher has not seen it. */
static int
commit_row(struct store *s, int64_t *out, int64_t tree_id, const char *sha)
{
	char full[GITM_SHA_SIZE];
	int r = store_commit_find(s, out, full, sizeof(full), tree_id, sha);

	if (r == ERR_NOTFOUND) {
		store_errclear(s);
		r = store_commit_stub(s, out, tree_id, sha);
	}
	return r;
}

int
bisect_make_pair(struct store *s, int64_t *out, const struct store_bisect *b,
    const char *base, const char *cand, const char *url, int64_t now,
    struct err *e)
{
	struct store_bisect_src src;
	struct store_job_new jn[2];
	struct err je = { 0 };
	char *texts[2] = { NULL, NULL };
	int64_t ids[2];
	json_t *spec = NULL;
	int k, r = -1;

	*out = 0;
	if (store_bisect_src_pair(s, &src, b->pair_id) != 0)
		return err_set(e, "%s", store_errmsg(s));
	if (src.spec != NULL)
		spec = pwjson_parse(src.spec, strlen(src.spec), &je);
	if (!json_is_object(json_object_get(spec, "tree"))) {
		err_set(e, "the regression's job spec has no tree");
		goto out;
	}
	for (k = 0; k < 2; k++) {
		json_t *t = json_object_get(spec, "tree");

		json_object_set_new(t, "commit", json_string(k ? cand : base));
		if (k == 1 && url != NULL)
			json_object_set_new(t, "url", json_string(url));
		texts[k] = pwjson_dump(spec);
		if (commit_row(s, &ids[k], b->tree_id, k ? cand : base) != 0) {
			err_set(e, "%s", store_errmsg(s));
			goto out;
		}
		memset(&jn[k], 0, sizeof(jn[k]));
		jn[k].role = k ? "candidate" : "base";
		jn[k].spec_json = texts[k];
		jn[k].labels_json = src.labels ? src.labels : "[]";
		jn[k].runs = json_integer_value(json_object_get(spec, "runs"));
		jn[k].max_runs =
		    json_integer_value(json_object_get(spec, "max_runs"));
		if (jn[k].runs <= 0)
			jn[k].runs = 5;
		if (jn[k].max_runs < jn[k].runs)
			jn[k].max_runs = jn[k].runs;
		jn[k].max_attempts =
		    src.max_attempts > 0 ? src.max_attempts : 3;
		jn[k].commit_id = ids[k];
	}
	if (store_bisect_pair(s, out, b->id, b->job, b->point, b->host_id,
	        b->tree_id, &jn[0], &jn[1], now) != 0) {
		err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	r = 0;
out:
	free(texts[0]);
	free(texts[1]);
	json_decref(spec);
	store_bisect_src_release(&src);
	return r;
}

/* A pair of the bisection (bisect_make_pair): the runners are woken. */
static int
make_pair(struct look *l, int64_t *out, const char *base, const char *cand,
    const char *url)
{
	if (bisect_make_pair(l->s, out, l->b, base, cand, url, l->now, l->e) !=
	    0)
		return -1;
	l->changed = 1;
	return 0;
}

enum outcome {
	O_MEASURING,
	O_FINAL,     /* verdict and pct set */
	O_CAND_FAIL, /* the measured commit failed: skip */
	O_BASE_FAIL, /* an end failed */
	O_LOST,      /* a lease expired too often: the host is gone */
	O_CANCELLED
};

static int
lease_lost(const char *error)
{
	return error != NULL && strncmp(error, "lease expired", 13) == 0;
}

/* Where one pair stands; why (size 256) says what failed; *suspect (NULL
 * ok) why a finished pair is suspect (docs/HOST.md), "" when it is not. */
static int
outcome(struct look *l, enum outcome *out, char **verdict, double *pct,
    double *min_effect, int64_t pair, char *why, char *suspect)
{
	struct store_bisect_pair_state ps;

	*out = O_MEASURING;
	why[0] = '\0';
	if (suspect != NULL)
		suspect[0] = '\0';
	if (store_bisect_pair_state_get(l->s, &ps, pair, l->b->metric) != 0)
		return err_set(l->e, "%s", store_errmsg(l->s));
	if (strcmp(ps.base_state, "cancelled") == 0 ||
	    strcmp(ps.cand_state, "cancelled") == 0) {
		*out = O_CANCELLED;
	} else if (strcmp(ps.cand_state, "failed") == 0) {
		*out = lease_lost(ps.cand_error) ? O_LOST : O_CAND_FAIL;
		snprintf(why, 256, "%.200s",
		    ps.cand_error ? ps.cand_error : "failed");
	} else if (strcmp(ps.base_state, "failed") == 0) {
		*out = lease_lost(ps.base_error) ? O_LOST : O_BASE_FAIL;
		snprintf(why, 256, "%.200s",
		    ps.base_error ? ps.base_error : "failed");
	} else if (ps.analysed) {
		*out = O_FINAL;
		*verdict = ps.verdict ? xstrdup(ps.verdict) : NULL;
		*pct = ps.change_pct;
		if (min_effect != NULL)
			*min_effect = ps.min_effect;
		if (ps.verdict == NULL)
			snprintf(why, 256, "no comparison of %s", l->b->metric);
		if (suspect != NULL && ps.suspect != NULL)
			snprintf(suspect, 256, "pair %lld is suspect: %.200s",
			    (long long)pair, ps.suspect);
	}
	store_bisect_pair_state_release(&ps);
	return 0;
}

static int64_t
host_timeout(const struct look *l)
{
	return l->jc ? l->jc->bisect.host_timeout_s
	             : BISECT_DEFAULT_HOST_TIMEOUT;
}

/*
 * The host, while a step waits: *out 1 when it has not been seen for
 * bisect.host_timeout, 2 when it has been quarantined that long (why,
 * size 300, says so); *quar (NULL ok) 1 when it is quarantined now (why
 * has the reason).
 */
static int
host_lost(struct look *l, int *out, int *quar, char *why)
{
	int64_t seen = 0, since = 0, limit = host_timeout(l);
	char *q = NULL;

	*out = 0;
	if (quar != NULL)
		*quar = 0;
	if (why != NULL)
		why[0] = '\0';
	if (l->b->host_id <= 0)
		return 0;
	if (store_bisect_host(l->s, &seen, &q, &since, l->b->host_id) != 0)
		return err_set(l->e, "%s", store_errmsg(l->s));
	if (q != NULL) {
		if (quar != NULL)
			*quar = 1;
		if (why != NULL)
			snprintf(
			    why, 300, "the host is quarantined: %.240s", q);
		if (since < l->now - limit)
			*out = 2;
	}
	if (seen < l->now - limit)
		*out = 1;
	free(q);
	return 0;
}

/*
 * The regression's size from the classified steps (suspect and skipped
 * ones left out) and, when finite, one more reading (g, b): the step
 * being classified.
 */
static double
range_pct(const struct look *l, double g, double b)
{
	double *vg, *vb, r;
	size_t i, n = 0;

	vg = xcalloc(l->nsteps + 1, sizeof(*vg));
	vb = xcalloc(l->nsteps + 1, sizeof(*vb));
	for (i = 0; i < l->nsteps; i++) {
		const struct store_bisect_step *x = &l->steps[i];

		if (strcmp(x->kind, "step") != 0 || x->cls == NULL ||
		    strcmp(x->cls, "suspect") == 0 ||
		    strcmp(x->cls, "skip") == 0)
			continue;
		vg[n] = x->vs_good_pct;
		vb[n++] = x->vs_bad_pct;
	}
	vg[n] = g;
	vb[n++] = b;
	r = bisect_range_pct(vg, vb, n, l->origin_pct);
	free(vg);
	free(vb);
	return r;
}

/*
 * A step still measuring: classifies it when both pairs are done.
 * *out_ended: the bisection ended here (lost host, an end failed).
 */
static int
look_step(struct look *l, struct store_bisect_step *x, int *out_ended)
{
	enum outcome og, ob;
	char *vg = NULL, *vb = NULL, wg[256], wb[256], note[600];
	char sg[256], sb[256], hq[300];
	double pg = NAN, pb = NAN, me = NAN, me2 = NAN, ref;
	enum bisect_class c;
	int lost, quar, r = 0;

	*out_ended = 0;
	if (outcome(l, &og, &vg, &pg, &me, x->good_pair, wg, sg) != 0 ||
	    outcome(l, &ob, &vb, &pb, &me2, x->bad_pair, wb, sb) != 0)
		return -1;
	note[0] = '\0';
	if (og == O_LOST || ob == O_LOST) {
		*out_ended = 1;
		snprintf(note, sizeof(note), "lost its host at %.12s: %s",
		    x->sha, og == O_LOST ? wg : wb);
		r = inconclusive(l, note);
		goto out;
	}
	if (og == O_BASE_FAIL || ob == O_BASE_FAIL) {
		*out_ended = 1;
		snprintf(note, sizeof(note),
		    "the %s end failed to be measured again: %s",
		    og == O_BASE_FAIL ? "good" : "bad",
		    og == O_BASE_FAIL ? wg : wb);
		r = inconclusive(l, note);
		goto out;
	}
	if (og == O_CAND_FAIL || ob == O_CAND_FAIL || og == O_CANCELLED ||
	    ob == O_CANCELLED) {
		snprintf(note, sizeof(note), "skipped: %s",
		    og == O_CAND_FAIL       ? wg
		        : ob == O_CAND_FAIL ? wb
		                            : "a job was cancelled");
		if (store_bisect_cancel_jobs(
		        l->s, l->b->id, "bisect step skipped", l->now) != 0 ||
		    store_bisect_step_set(l->s, x->id, "skip", NULL, NAN, NULL,
		        NAN, note, l->now) != 0)
			r = err_set(l->e, "%s", store_errmsg(l->s));
		free(x->cls);
		x->cls = xstrdup("skip");
		goto out;
	}
	if ((r = host_lost(l, &lost, &quar, hq)) != 0)
		goto out;
	if (og != O_FINAL || ob != O_FINAL) {
		if (lost) {
			*out_ended = 1;
			if (lost == 2)
				snprintf(note, sizeof(note),
				    "%s (for more than %lld s while %.12s "
				    "waited)",
				    hq, (long long)host_timeout(l), x->sha);
			else
				snprintf(note, sizeof(note),
				    "lost its host: not seen for %lld s while "
				    "%.12s waited",
				    (long long)host_timeout(l), x->sha);
			r = inconclusive(l, note);
		}
		goto out;
	}
	/* Measured on a suspect pair or a quarantined host: no class from
	 * it; the commit is measured again (once the host is cleared). */
	if (bisect_untrusted(note, sizeof(note), sg, sb, quar ? hq : NULL)) {
		if (store_bisect_step_set(l->s, x->id, "suspect", vg, pg, vb,
		        pb, note, l->now) != 0)
			r = err_set(l->e, "%s", store_errmsg(l->s));
		free(x->cls);
		x->cls = xstrdup("suspect");
		log_info(
		    "bisect %lld: %.12s %s", (long long)l->b->id, x->sha, note);
		goto out;
	}
	ref = range_pct(l, pg, pb);
	c = bisect_classify(vg, pg, vb, pb, isfinite(me) ? me : me2, ref);
	bisect_step_note(note, sizeof(note), vg, pg, vb, pb, c);
	if (store_bisect_step_set(l->s, x->id, bisect_class_name(c), vg, pg, vb,
	        pb, note, l->now) != 0)
		r = err_set(l->e, "%s", store_errmsg(l->s));
	free(x->cls);
	x->cls = xstrdup(bisect_class_name(c));
	free(x->note);
	x->note = xstrdup(note);
	x->vs_good_pct = pg;
	x->vs_bad_pct = pb;
	l->reg_pct = range_pct(l, NAN, NAN);
	{
		char a[32];

		bisect_i_pct_text(a, sizeof(a), ref);
		log_info("bisect %lld: %.12s is %s (%s; the range measured "
		         "%s)",
		    (long long)l->b->id, x->sha, bisect_class_name(c), note, a);
	}
out:
	free(vg);
	free(vb);
	return r;
}

/* The range and its candidates from the mirror. */
static int
load_range(struct look *l, const struct cfg_tree *tree)
{
	const char *const *paths = NULL;
	size_t npaths = 0, i;
	int r;

	l->repo =
	    gitm_repo_new(l->conf->dc->mirrors, tree->name, tree->url, NULL);
	/*
	 * Commits that do not touch the job's trigger paths are left out
	 * only on a first-parent chain, where such a commit has the same
	 * content at those paths as the commit before it.
	 */
	if (l->jc != NULL && !l->b->full_dag && l->jc->trigger.paths.n > 0) {
		paths = (const char *const *)l->jc->trigger.paths.v;
		npaths = l->jc->trigger.paths.n;
	}
	r = gitm_range(&l->w, l->repo, l->b->good_sha, l->b->bad_sha,
	    !l->b->full_dag, paths, npaths, BISECT_MAX_RANGE);
	if (r != 0 || l->w.truncated || l->w.n == 0)
		return -1;
	l->cand = xcalloc(l->w.n, sizeof(*l->cand));
	for (i = 0; i < l->w.n; i++)
		if (npaths == 0 || l->w.commits[i].touches_any ||
		    i == l->w.n - 1)
			l->cand[l->ncand++] = i;
	return 0;
}

static const char *
cand_sha(const struct look *l, long i)
{
	if (i < 0)
		return l->b->good_sha;
	return l->w.commits[l->cand[i]].sha;
}

/* A step at sha: two fresh pairs, against the good and the bad end. */
static int
add_step(struct look *l, const char *sha)
{
	int64_t pg = 0, pb = 0;

	if (make_pair(l, &pg, l->b->good_sha, sha, NULL) != 0 ||
	    make_pair(l, &pb, l->b->bad_sha, sha, NULL) != 0)
		return -1;
	if (store_bisect_step_add(
	        l->s, NULL, l->b->id, "step", sha, pg, pb, l->now) != 0)
		return err_set(l->e, "%s", store_errmsg(l->s));
	return 0;
}

/* A verification measured on a suspect pair: the same pair again. */
static int
remeasure_verify(
    struct look *l, const struct store_bisect_step *x, const char *culprit)
{
	char parent[GITM_SHA_SIZE];
	int64_t p = 0;

	if (strcmp(x->kind, "verify-parent") == 0) {
		if (gitm_first_parent(parent, l->repo, culprit) != 0)
			return err_set(
			    l->e, "%.12s: %s", culprit, gitm_errmsg(l->repo));
		if (make_pair(l, &p, parent, culprit, NULL) != 0)
			return -1;
		if (store_bisect_step_add(l->s, NULL, l->b->id, "verify-parent",
		        culprit, p, 0, l->now) != 0)
			return err_set(l->e, "%s", store_errmsg(l->s));
		return 0;
	} else {
		char *abs = realpath(gitm_path(l->repo), NULL);
		int rc = make_pair(l, &p, l->b->bad_sha, x->sha,
		    abs ? abs : gitm_path(l->repo));

		free(abs);
		if (rc != 0)
			return -1;
		if (store_bisect_step_add(l->s, NULL, l->b->id, "verify-revert",
		        x->sha, 0, p, l->now) != 0)
			return err_set(l->e, "%s", store_errmsg(l->s));
		return 0;
	}
}

/* Verification results from the verify steps; ends the bisection. */
static int
look_verify(struct look *l, const char *culprit, const char *last_good,
    size_t nsteps, size_t nskip, int partial)
{
	struct store_bisect_step *vp = NULL, *vr = NULL;
	struct store_bisect_set v;
	char parent[GITM_SHA_SIZE], revert[GITM_SHA_SIZE], ref[96];
	char tp[300], tr[300], *reason;
	size_t i;
	int rc, done = 1;

	for (i = l->verify_from; i < l->nsteps; i++) {
		if (strcmp(l->steps[i].kind, "verify-parent") == 0)
			vp = &l->steps[i];
		else if (strcmp(l->steps[i].kind, "verify-revert") == 0)
			vr = &l->steps[i];
	}
	memset(&v, 0, sizeof(v));
	if (vp == NULL) {
		int64_t p1 = 0, p2 = 0;

		/* Both verifications at once: they need no step between. */
		rc = gitm_first_parent(parent, l->repo, culprit);
		if (rc != 0) {
			char *w = xasprintf("the culprit %.12s has no parent "
			                    "to verify against: %s",
			    culprit, gitm_errmsg(l->repo));

			rc = finish(l, "done", culprit, w);
			free(w);
			return rc;
		}
		if (make_pair(l, &p1, parent, culprit, NULL) != 0 ||
		    store_bisect_step_add(l->s, NULL, l->b->id, "verify-parent",
		        culprit, p1, 0, l->now) != 0)
			return err_set(l->e, "%s", store_errmsg(l->s));
		snprintf(ref, sizeof(ref), "refs/perfwatch/bisect/%lld",
		    (long long)l->b->id);
		rc = gitm_revert(revert, l->repo, culprit, l->b->bad_sha, ref);
		if (rc == 0) {
			char *abs = realpath(gitm_path(l->repo), NULL);

			rc = make_pair(l, &p2, l->b->bad_sha, revert,
			    abs ? abs : gitm_path(l->repo));
			free(abs);
			if (rc != 0 ||
			    store_bisect_step_add(l->s, NULL, l->b->id,
			        "verify-revert", revert, 0, p2, l->now) != 0)
				return err_set(l->e, "%s", store_errmsg(l->s));
			v.revert_sha = revert;
		} else {
			snprintf(tr, sizeof(tr), "not measured: %s",
			    gitm_errmsg(l->repo));
			gitm_clearerr(l->repo);
			v.verify_revert = tr;
		}
		v.culprit_sha = culprit;
		if (store_bisect_update(l->s, l->b->id, &v, l->now) != 0)
			return err_set(l->e, "%s", store_errmsg(l->s));
		log_info("bisect %lld: first bad commit %.12s, verifying",
		    (long long)l->b->id, culprit);
		return 0;
	}
	tp[0] = tr[0] = '\0';
	for (i = 0; i < 2; i++) {
		struct store_bisect_step *x = i ? vr : vp;
		int64_t pair = x ? (i ? x->bad_pair : x->good_pair) : 0;
		char *verd = NULL, why[256], *out = i ? tr : tp;
		char sus[256], hq[300], note[600];
		enum outcome o;
		double pct = NAN, me = NAN;
		int m, lower, lost = 0, quar = 0;
		const char *cls;

		if (x == NULL || x->cls != NULL) {
			if (x != NULL)
				snprintf(
				    out, 300, "%s", x->note ? x->note : "");
			continue;
		}
		if (outcome(l, &o, &verd, &pct, &me, pair, why, sus) != 0 ||
		    host_lost(l, &lost, &quar, hq) != 0) {
			free(verd);
			return -1;
		}
		if (o == O_FINAL &&
		    bisect_untrusted(
		        note, sizeof(note), sus, NULL, quar ? hq : NULL)) {
			/* Measured again on a fresh pair, as a step. */
			rc = store_bisect_step_set(l->s, x->id, "suspect",
			    i ? NULL : verd, i ? NAN : pct, i ? verd : NULL,
			    i ? pct : NAN, note, l->now);
			if (rc != 0)
				err_set(l->e, "%s", store_errmsg(l->s));
			else
				rc = remeasure_verify(l, x, culprit);
			if (rc != 0) {
				free(verd);
				return -1;
			}
			free(verd);
			done = 0;
			continue;
		}
		if (o == O_MEASURING) {
			if (lost) {
				free(verd);
				snprintf(out, 300, "not measured: %.280s",
				    lost == 2 ? hq : "the host was lost");
				cls = "inconclusive";
			} else {
				done = 0;
				free(verd);
				continue;
			}
		} else if (o != O_FINAL) {
			snprintf(out, 300, "not measured: %s",
			    why[0] ? why : "a job was cancelled");
			cls = "skip";
		} else {
			/* Worse is the direction the regression moved. */
			lower = isfinite(l->reg_pct) && l->reg_pct != 0
			    ? l->reg_pct > 0
			    : -1;
			m = bisect_i_small(
			    bisect_i_moved(verd, pct,
			        bisect_i_verify_threshold(me, l->reg_pct),
			        lower),
			    pct, l->reg_pct);
			bisect_verify_note(
			    out, 300, (int)i, m == (i ? -1 : 1), verd, pct);
			cls = m == 2 ? "inconclusive"
			    : i == 0 ? (m == 1 ? "bad" : "good")
			             : (m == -1 ? "good" : "bad");
		}
		if (store_bisect_step_set(l->s, x->id, cls, i ? NULL : verd,
		        i ? NAN : pct, i ? verd : NULL, i ? pct : NAN, out,
		        l->now) != 0) {
			free(verd);
			return err_set(l->e, "%s", store_errmsg(l->s));
		}
		free(verd);
	}
	if (!done)
		return 0;
	memset(&v, 0, sizeof(v));
	v.verify_parent = tp[0] ? tp : "unknown";
	if (vr != NULL)
		v.verify_revert = tr[0] ? tr : "unknown";
	if (store_bisect_update(l->s, l->b->id, &v, l->now) != 0)
		return err_set(l->e, "%s", store_errmsg(l->s));
	if (strncmp(v.verify_parent, "shows the regression", 20) != 0) {
		/* The steps pointed at it, its own pair does not: say so,
		 * name no culprit. */
		/* A step that led here was misjudged: the culprit's (it is
		 * good) or the last good one's (it is bad).  Once, both are
		 * measured again on fresh pairs and the search goes on from
		 * what they show; a second failed round ends it. */
		if (l->rounds_failed == 0 &&
		    strncmp(v.verify_parent, "does not show", 13) == 0) {
			memset(&v, 0, sizeof(v));
			v.culprit_sha = "";
			if (store_bisect_update(l->s, l->b->id, &v, l->now) !=
			    0)
				return err_set(l->e, "%s", store_errmsg(l->s));
			log_info("bisect %lld: %.12s does not show the "
			         "regression against its parent: measuring "
			         "it%s%.12s again",
			    (long long)l->b->id, culprit,
			    last_good ? " and " : "",
			    last_good ? last_good : "");
			if (add_step(l, culprit) != 0 ||
			    (last_good != NULL && add_step(l, last_good) != 0))
				return -1;
			l->changed = 1;
			return 0;
		}
		reason = xasprintf("the steps point at %.12s, but against its "
		                   "parent it %s%s",
		    culprit,
		    strncmp(v.verify_parent, "does not show", 13) == 0
		        ? "does not show the regression"
		        : "was not measured",
		    l->rounds_failed ? ", also after both were measured again"
		                     : "");
		/* A step that led here was misjudged (noise), and nothing
		 * says which: the narrowed range cannot be trusted either,
		 * so the range reported is the whole one again. */
		memset(&v, 0, sizeof(v));
		v.culprit_sha = "";
		v.lo_sha = l->b->good_sha;
		v.hi_sha = l->b->bad_sha;
		if (store_bisect_update(l->s, l->b->id, &v, l->now) != 0) {
			free(reason);
			return err_set(l->e, "%s", store_errmsg(l->s));
		}
		free(l->b->lo_sha);
		free(l->b->hi_sha);
		l->b->lo_sha = l->b->good_sha ? xstrdup(l->b->good_sha) : NULL;
		l->b->hi_sha = l->b->bad_sha ? xstrdup(l->b->bad_sha) : NULL;
		rc = inconclusive(l, reason);
		free(reason);
		return rc;
	}
	reason = xasprintf("first bad commit after %zu step(s), %zu skipped%s",
	    nsteps, nskip,
	    partial ? "; partial: some steps were between both ends, so the "
	              "regression has more than one part and this is the "
	              "first commit that crosses from the good end"
	            : "");
	rc = finish(l, "done", culprit, reason);
	free(reason);
	return rc;
}

int
bisect_advance(struct store *s, const struct dconf *conf, int64_t id,
    int64_t now, int *out_changed, struct err *e)
{
	struct look l;
	const struct cfg_tree *tree;
	enum bisect_class *cls = NULL;
	unsigned *tries = NULL;
	size_t i, k, nstep = 0, nskip = 0, ninc = 0, nsus = 0, next = 0;
	long lo, hi;
	int r = 0, ended = 0, open = 0, partial = 0, verifying = 0;

	*out_changed = 0;
	memset(&l, 0, sizeof(l));
	l.s = s;
	l.conf = conf;
	l.now = now;
	l.e = e;
	if (store_bisect_get(s, &l.b, id) != 0)
		return err_set(e, "%s", store_errmsg(s));
	if (strcmp(l.b->state, "queued") != 0 &&
	    strcmp(l.b->state, "running") != 0)
		goto out;
	l.jc = dconf_job(conf, l.b->job);
	l.origin_pct = NAN;
	if (l.b->change_point_id > 0 ||
	    (l.b->origin && strcmp(l.b->origin, "change-point") == 0)) {
		/* The change point's own change: its pair's comparison is
		 * against some other base. */
		l.origin_pct = l.b->origin_pct;
	} else {
		struct store_bisect_pair_state ps;

		if (store_bisect_pair_state_get(
		        s, &ps, l.b->pair_id, l.b->metric) == 0)
			l.origin_pct = ps.change_pct;
		store_errclear(s);
		store_bisect_pair_state_release(&ps);
	}
	tree = bisect_i_find_tree(conf, l.b->tree);
	if (tree == NULL) {
		r = inconclusive(&l, "its tree is not configured any more");
		goto out;
	}
	if (load_range(&l, tree) != 0) {
		char *w = xasprintf("no range to bisect: %s",
		    l.w.truncated    ? "more than 100000 commits"
		        : l.w.n == 0 ? "no commits"
		                     : gitm_errmsg(l.repo));

		r = inconclusive(&l, w);
		free(w);
		goto out;
	}
	if (strcmp(l.b->state, "queued") == 0) {
		struct store_bisect_set v;

		memset(&v, 0, sizeof(v));
		v.state = "running";
		if (store_bisect_update(s, id, &v, now) != 0) {
			r = err_set(e, "%s", store_errmsg(s));
			goto out;
		}
		log_info("bisect %lld: %zu commit(s) in %.12s..%.12s, %zu "
		         "candidate(s)",
		    (long long)id, l.w.n, l.b->good_sha, l.b->bad_sha, l.ncand);
	}
	if (store_bisect_step_list(s, &l.steps, &l.nsteps, id) != 0) {
		r = err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	l.reg_pct = range_pct(&l, NAN, NAN);
	cls = xcalloc(l.ncand, sizeof(*cls));
	tries = xcalloc(l.ncand, sizeof(*tries));
	cls[l.ncand - 1] = BISECT_BAD; /* the bad end */
	for (k = 0; k < l.nsteps; k++) {
		struct store_bisect_step *x = &l.steps[k];

		if (strcmp(x->kind, "step") != 0) {
			verifying = 1;
			nsus += x->cls && strcmp(x->cls, "suspect") == 0;
			continue;
		}
		/* A step after a verification: that round failed and its
		 * commits are measured again; the next round starts after. */
		if (verifying) {
			l.rounds_failed++;
			verifying = 0;
		}
		l.verify_from = k + 1;
		nstep++;
		if (x->cls == NULL) {
			if ((r = look_step(&l, x, &ended)) != 0 || ended)
				goto out;
			if (x->cls == NULL)
				open = 1;
		}
		if (x->cls && strcmp(x->cls, "suspect") == 0) {
			nsus++; /* measured again: no class, no try */
			continue;
		}
		for (i = 0; i < l.ncand; i++) {
			if (strcmp(cand_sha(&l, (long)i), x->sha) != 0)
				continue;
			/* An inconclusive commit is measured once more
			 * before it is set aside; the newest class wins. */
			tries[i]++;
			cls[i] = bisect_step_class(x->cls, x->note);
			if (cls[i] == BISECT_INCONCLUSIVE && tries[i] < 2)
				cls[i] = BISECT_MEASURING;
		}
		partial |= bisect_step_class(x->cls, x->note) == BISECT_PARTIAL;
	}
	for (i = 0; i < l.ncand; i++) {
		nskip += cls[i] == BISECT_SKIP;
		ninc += cls[i] == BISECT_INCONCLUSIVE;
	}
	if (open)
		goto out;
	if (nsus > (size_t)l.b->max_inconclusive) {
		char *w = xasprintf("%zu measurement(s) were suspect (at most "
		                    "%lld allowed): the host's state changed "
		                    "under them or it was quarantined "
		                    "(docs/HOST.md)",
		    nsus, (long long)l.b->max_inconclusive);

		r = inconclusive(&l, w);
		free(w);
		goto out;
	}
	r = bisect_next(cls, l.ncand, &lo, &hi, &next);
	{
		struct store_bisect_set v;

		memset(&v, 0, sizeof(v));
		v.lo_sha = cand_sha(&l, lo);
		v.hi_sha = cand_sha(&l, hi);
		free(l.b->lo_sha);
		free(l.b->hi_sha);
		l.b->lo_sha = xstrdup(v.lo_sha);
		l.b->hi_sha = xstrdup(v.hi_sha);
		if (store_bisect_update(s, id, &v, now) != 0) {
			r = err_set(e, "%s", store_errmsg(s));
			goto out;
		}
	}
	if (r == 0) {
		char culprit[GITM_SHA_SIZE];

		snprintf(culprit, sizeof(culprit), "%s", cand_sha(&l, hi));
		r = look_verify(&l, culprit, lo >= 0 ? cand_sha(&l, lo) : NULL,
		    nstep, nskip, partial);
		goto out;
	}
	if (verifying) {
		r = 0;
		goto out;
	}
	if (r < 0) {
		r = inconclusive(&l,
		    "only skipped or inconclusive commits "
		    "are left");
		goto out;
	}
	if (ninc > (size_t)l.b->max_inconclusive) {
		char *w = xasprintf("%zu step(s) stayed inconclusive (at most "
		                    "%lld allowed)",
		    ninc, (long long)l.b->max_inconclusive);

		r = inconclusive(&l, w);
		free(w);
		goto out;
	}
	if (nstep >= (size_t)l.b->steps_limit) {
		char *w = xasprintf("the step limit (%lld) was reached",
		    (long long)l.b->steps_limit);

		r = inconclusive(&l, w);
		free(w);
		goto out;
	}
	{
		const char *sha = cand_sha(&l, (long)next);

		r = add_step(&l, sha);
		if (r == 0)
			log_info("bisect %lld: step %zu: %.12s (%ld..%ld of "
			         "%zu candidates)",
			    (long long)id, nstep + 1, sha, lo + 1, hi, l.ncand);
	}
out:
	*out_changed = l.changed;
	free(cls);
	free(tries);
	look_release(&l);
	return r == 0 ? 0 : -1;
}
