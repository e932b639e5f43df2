/*
 * Starting bisections (bisect.h): by hand, from a change point, and
 * automatically for the regressions that want one; cancelling one; and
 * the worker thread that advances them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "daemon/bisect.h"
#include "daemon/bisect_int.h"
#include "daemon/sched.h"
#include "git/git.h"
#include "store/bisect.h"
#include "store/store.h"

#define BISECT_DEFAULT_STEPS 16
#define BISECT_TICK_MS 2000
#define BISECT_AUTO_BATCH 32

/* The bisection of src with its job's bisect settings: 0, ERR_EXISTS or
 * -1, e set. */
static int
create_from(struct store *s, int64_t *out_id, const struct dconf *conf,
    const struct store_bisect_src *src, const char *started_by, int64_t now,
    struct err *e)
{
	const struct job_config *jc = dconf_job(conf, src->job);
	struct store_bisect_new n;
	int r;

	memset(&n, 0, sizeof(n));
	n.src = src;
	n.steps_limit = jc ? jc->bisect.max_steps : BISECT_DEFAULT_STEPS;
	n.max_inconclusive = jc ? jc->bisect.max_inconclusive : 2;
	n.full_dag = jc ? jc->bisect.full_dag : 0;
	n.started_by = started_by;
	if ((r = store_bisect_create(s, out_id, &n, now)) != 0) {
		err_setc(e, r == ERR_EXISTS ? ERR_EXISTS : -1, "%s",
		    store_errmsg(s));
		store_errclear(s);
	}
	return r;
}

int
bisect_begin(struct store *s, const struct dconf *conf, int64_t *out_id,
    int64_t regression_id, const char *started_by, int64_t now, struct err *e)
{
	struct store_bisect_src src;
	int r;

	*out_id = 0;
	r = store_bisect_src_get(s, &src, regression_id);
	if (r != 0) {
		err_setc(e, r == ERR_NOTFOUND ? ERR_NOTFOUND : -1, "%s",
		    store_errmsg(s));
		store_errclear(s);
		return r == ERR_NOTFOUND ? ERR_NOTFOUND : -1;
	}
	if (src.of_bisect || src.tree == NULL || src.good_sha == NULL ||
	    src.bad_sha == NULL || strcmp(src.good_sha, src.bad_sha) == 0) {
		err_setc(e, ERR_INVALID, "regression %lld %s",
		    (long long)regression_id,
		    src.of_bisect ? "was found by a bisection's step"
		                  : "has no commit range of a tree to bisect");
		store_bisect_src_release(&src);
		return ERR_INVALID;
	}
	r = create_from(s, out_id, conf, &src, started_by, now, e);
	if (r == 0) {
		log_info("bisect %lld: regression %lld (%s, %.12s..%.12s), "
		         "started %s",
		    (long long)*out_id, (long long)regression_id, src.job,
		    src.good_sha, src.bad_sha, started_by);
	}
	store_bisect_src_release(&src);
	return r == 0 || r == ERR_EXISTS ? r : -1;
}

int
bisect_cancel(struct store *s, int64_t id, int64_t now, struct err *e)
{
	struct store_bisect *b = NULL;
	struct store_bisect_set v;
	int r = store_bisect_get(s, &b, id);

	if (r != 0) {
		err_setc(
		    e, r, "bisection %lld: %s", (long long)id, store_errmsg(s));
		store_errclear(s);
		return r == ERR_NOTFOUND ? ERR_NOTFOUND : -1;
	}
	if (strcmp(b->state, "queued") != 0 &&
	    strcmp(b->state, "running") != 0) {
		err_setc(e, ERR_CONFLICT, "bisection %lld has ended (%s)",
		    (long long)id, b->state);
		store_bisect_release(b);
		return ERR_CONFLICT;
	}
	store_bisect_release(b);
	memset(&v, 0, sizeof(v));
	v.state = "cancelled";
	v.reason = "cancelled by an admin";
	if (store_bisect_cancel_jobs(s, id, "bisection cancelled", now) != 0 ||
	    store_bisect_update(s, id, &v, now) != 0)
		return err_set(e, "%s", store_errmsg(s));
	log_info("bisect %lld: cancelled", (long long)id);
	return 0;
}

/* More than one commit: the good end is an ancestor of the bad end and
 * not its first parent. */
static int
spans(struct gitm_repo *repo, const char *good, const char *bad)
{
	char parent[GITM_SHA_SIZE];

	return gitm_first_parent(parent, repo, bad) == 0 &&
	    strcmp(parent, good) != 0 && gitm_is_ancestor(repo, good, bad) == 1;
}

/* The ranges (g1, b1] and (g2, b2] of one line of history share a
 * commit: neither ends at or before the other's start. */
static int
overlaps(struct gitm_repo *repo, const char *g1, const char *b1, const char *g2,
    const char *b2)
{
	if (strcmp(b1, b2) == 0)
		return 1;
	return gitm_is_ancestor(repo, b1, g2) != 1 &&
	    gitm_is_ancestor(repo, b2, g1) != 1;
}

int
bisect_begin_cp(struct store *s, const struct dconf *conf, int64_t *out_id,
    int64_t change_point_id, const char *started_by, int64_t now, struct err *e)
{
	struct store_bisect_src src;
	int r;

	*out_id = 0;
	r = store_bisect_src_cp(s, &src, change_point_id);
	if (r != 0) {
		err_setc(e, r == ERR_NOTFOUND ? ERR_NOTFOUND : -1, "%s",
		    store_errmsg(s));
		store_errclear(s);
		return r == ERR_NOTFOUND ? ERR_NOTFOUND : -1;
	}
	if (src.direction == NULL || strcmp(src.direction, "regression") != 0) {
		err_setc(e, ERR_INVALID,
		    "change point %lld is an %s: only a regression is "
		    "bisected",
		    (long long)change_point_id,
		    src.direction ? src.direction : "unknown change");
		store_bisect_src_release(&src);
		return ERR_INVALID;
	}
	if (src.tree == NULL || src.good_sha == NULL || src.bad_sha == NULL ||
	    strcmp(src.good_sha, src.bad_sha) == 0 || src.host_id <= 0) {
		err_setc(e, ERR_INVALID,
		    "change point %lld has no commit range of a tree to bisect "
		    "(%s)",
		    (long long)change_point_id,
		    src.tree == NULL       ? "its history has no tree"
		        : src.host_id <= 0 ? "its history has no host"
		        : src.good_sha == NULL
		        ? "the change is at the history's first point"
		        : "both ends are one commit");
		store_bisect_src_release(&src);
		return ERR_INVALID;
	}
	r = create_from(s, out_id, conf, &src, started_by, now, e);
	if (r == 0) {
		log_info("bisect %lld: change point %lld at %.12s on %s "
		         "history (%s, %.12s..%.12s), started %s",
		    (long long)*out_id, (long long)change_point_id,
		    src.origin_sha ? src.origin_sha : "unknown",
		    src.branch && src.branch[0] ? src.branch : "unknown",
		    src.job, src.good_sha, src.bad_sha, started_by);
	}
	store_bisect_src_release(&src);
	return r == 0 || r == ERR_EXISTS ? r : -1;
}

/* A change point of a job with bisect.auto whose range spans more than
 * one commit and overlaps no bisection of the same job, host, point and
 * metric (any origin: the same change is bisected once). */
static int
cp_wanted(struct store *s, const struct dconf *conf, int64_t cp)
{
	struct store_bisect_src src;
	const struct job_config *jc;
	const struct cfg_tree *tree;
	struct gitm_repo *repo;
	char **rg = NULL;
	size_t nrg = 0, i;
	int want = 0;

	if (store_bisect_src_cp(s, &src, cp) != 0) {
		store_errclear(s);
		return 0;
	}
	jc = dconf_job(conf, src.job);
	tree = bisect_i_find_tree(conf, src.tree);
	if (jc == NULL || !jc->bisect.automatic || tree == NULL ||
	    src.good_sha == NULL || src.bad_sha == NULL || src.of_bisect ||
	    src.host_id <= 0 || src.direction == NULL ||
	    strcmp(src.direction, "regression") != 0) {
		store_bisect_src_release(&src);
		return 0;
	}
	repo = gitm_repo_new(conf->dc->mirrors, tree->name, tree->url, NULL);
	want = spans(repo, src.good_sha, src.bad_sha);
	if (want &&
	    store_bisect_range_list(s, &rg, &nrg, src.job, src.host_id,
	        src.point, src.metric, src.tree_id) != 0) {
		store_errclear(s);
		want = 0;
	}
	for (i = 0; want && i < nrg; i++)
		if (rg[2 * i] && rg[2 * i + 1] &&
		    overlaps(repo, src.good_sha, src.bad_sha, rg[2 * i],
		        rg[2 * i + 1]))
			want = 0;
	store_bisect_ranges_release(rg, nrg);
	gitm_repo_free(repo);
	store_bisect_src_release(&src);
	return want;
}

int
bisect_auto(struct store *s, const struct dconf *conf,
    struct bisect_cursor *after, int64_t now, struct err *e)
{
	int64_t ids[BISECT_AUTO_BATCH], at[BISECT_AUTO_BATCH], id;
	size_t n = 0, i;

	if (store_bisect_candidates(
	        s, ids, &n, after->regression, BISECT_AUTO_BATCH) != 0)
		return err_set(e, "%s", store_errmsg(s));
	for (i = 0; i < n; i++) {
		struct store_bisect_src src;
		const struct job_config *jc;
		const struct cfg_tree *tree;
		struct gitm_repo *repo;
		int span = 0;

		after->regression = ids[i];
		if (store_bisect_src_get(s, &src, ids[i]) != 0) {
			store_errclear(s);
			continue;
		}
		jc = dconf_job(conf, src.job);
		tree = bisect_i_find_tree(conf, src.tree);
		if (jc != NULL && jc->bisect.automatic && tree != NULL &&
		    src.good_sha != NULL && src.bad_sha != NULL &&
		    !src.of_bisect) {
			repo = gitm_repo_new(
			    conf->dc->mirrors, tree->name, tree->url, NULL);
			span = spans(repo, src.good_sha, src.bad_sha);
			gitm_repo_free(repo);
		}
		store_bisect_src_release(&src);
		if (span) {
			int r =
			    bisect_begin(s, conf, &id, ids[i], "auto", now, e);

			if (r != 0 && r != ERR_EXISTS)
				log_warnx("bisect: regression %lld: %s",
				    (long long)ids[i], err_msg(e));
		}
		err_clear(e);
	}
	/* History change points: recomputed as points arrive (new ids), so
	 * the same change comes back; an overlapping bisection stops it. */
	if (store_bisect_cp_candidates(s, ids, at, &n, after->change_point_at,
	        after->change_point, BISECT_AUTO_BATCH) != 0)
		return err_set(e, "%s", store_errmsg(s));
	for (i = 0; i < n; i++) {
		after->change_point = ids[i];
		after->change_point_at = at[i];
		if (cp_wanted(s, conf, ids[i])) {
			int r = bisect_begin_cp(
			    s, conf, &id, ids[i], "auto", now, e);

			if (r != 0 && r != ERR_EXISTS)
				log_warnx("bisect: change point %lld: %s",
				    (long long)ids[i], err_msg(e));
		}
		err_clear(e);
	}
	return 0;
}

/* ---- the thread ---- */

int64_t
bisect_worker_pass(
    struct store *s, const struct dconf *conf, struct sched *sched, void *arg)
{
	struct bisect_cursor *after = arg;
	int64_t *ids, now = (int64_t)time(NULL);
	struct err e = { 0 };
	size_t n, i;
	int changed, any = 0;

	if (bisect_auto(s, conf, after, now, &e) != 0) {
		log_warnx("bisect: %s", err_msg(&e));
		err_clear(&e);
	}
	if (store_bisect_live(s, &ids, &n) != 0) {
		log_warnx("bisect: %s", store_errmsg(s));
		n = 0;
		ids = NULL;
	}
	for (i = 0; i < n; i++) {
		if (bisect_advance(s, conf, ids[i], now, &changed, &e) != 0) {
			log_warnx(
			    "bisect %lld: %s", (long long)ids[i], err_msg(&e));
			err_clear(&e);
			store_errclear(s);
		}
		any |= changed;
	}
	free(ids);
	if (any)
		sched_notify(sched);
	return BISECT_TICK_MS;
}
