/*
 * Triggers: pairs from branch pushes (see trigger.h).
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/jobspec.h"
#include "daemon/packs.h"
#include "daemon/trigger.h"
#include "git/git.h"
#include "store/bisect.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"
#include "store/watch.h"

static int
has(const struct strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

/* The job is triggered by pushes to this tree and branch. */
static int
job_wants(const struct job_config *jc, const char *tree, const char *branch)
{
	size_t i;

	if (!has(&jc->trigger.trees, tree))
		return 0;
	if (branch == NULL || jc->trigger.branches.n == 0)
		return 1;
	for (i = 0; i < jc->trigger.branches.n; i++)
		if (fnmatch(jc->trigger.branches.v[i], branch, 0) == 0)
			return 1;
	return 0;
}

void
trigger_paths(const char ***out, size_t *n, const struct dconf *conf,
    const struct cfg_tree *tree)
{
	const char **v = NULL;
	size_t k = 0, i, j, m;

	for (i = 0; i < tree->paths.n; i++) {
		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k++] = tree->paths.v[i];
	}
	for (j = 0; j < conf->njobs; j++) {
		const struct job_config *jc = conf->jobs[j];

		if (!job_wants(jc, tree->name, NULL))
			continue;
		for (i = 0; i < jc->trigger.paths.n; i++) {
			for (m = 0; m < k; m++)
				if (strcmp(v[m], jc->trigger.paths.v[i]) == 0)
					break;
			if (m < k)
				continue;
			v = xreallocarray(v, k + 1, sizeof(*v));
			v[k++] = jc->trigger.paths.v[i];
		}
	}
	*out = v;
	*n = k;
}

/* The commit touches one of the job's trigger paths (none: any commit). */
static int
touches_job(const struct trigger_push *p, const struct job_config *jc,
    const struct gitm_commit *c)
{
	size_t i, k;

	if (jc->trigger.paths.n == 0)
		return 1;
	for (i = 0; i < jc->trigger.paths.n; i++)
		for (k = 0; k < p->npaths; k++)
			if (strcmp(p->paths[k], jc->trigger.paths.v[i]) == 0 &&
			    c->touches[k])
				return 1;
	return 0;
}

/*
 * Cancels (or deprioritises, per the job's trigger.coalesce) this job's
 * queued pairs on the branch that the push superseded.
 */
static int
coalesce(struct trigger_stats *st, struct store *s, struct gitm_repo *repo,
    const struct trigger_push *p, const struct job_config *jc, int new_tip,
    struct err *e)
{
	struct store_pendings rows;
	char reason[160];
	size_t i;
	int r = 0;

	if (store_trigger_pending(s, &rows, p->tree_id, p->branch, jc->name) !=
	    0)
		return err_set(e, "%s", store_errmsg(s));
	snprintf(reason, sizeof(reason), "superseded: %s/%s moved to %.12s",
	    p->tree->name, p->branch, p->new_tip);
	for (i = 0; i < rows.n; i++) {
		const char *sha = rows.v[i].sha;
		int tip_only = rows.v[i].tip_only;
		int64_t pair = rows.v[i].pair_id;
		int gone, n = 0;

		if (sha == NULL || strcmp(sha, p->new_tip) == 0)
			continue;
		/* Unknown to the mirror (< 0): the branch lost it too. */
		gone = gitm_is_ancestor(repo, sha, p->new_tip) <= 0;
		gitm_clearerr(repo);
		/* An old tip is superseded only by a new tip pair. */
		if (tip_only && new_tip)
			gone = 1;
		if (!gone)
			continue;
		if (jc->trigger.coalesce == CFG_COALESCE_DEPRIORITISE) {
			if (store_pair_deprioritise(s, &n, pair) != 0) {
				r = err_set(e, "%s", store_errmsg(s));
				break;
			}
			if (n > 0)
				log_info("tree %s: branch %s: pair %" PRId64
				         " of job %s (%.12s) deprioritised, %s",
				    p->tree->name, p->branch, pair, jc->name,
				    sha, reason);
			st->deprioritised += (size_t)n;
			continue;
		}
		if (store_pair_supersede(s, &n, pair, reason, p->now) != 0) {
			r = err_set(e, "%s", store_errmsg(s));
			break;
		}
		if (n > 0)
			log_info("tree %s: branch %s: pair %" PRId64
			         " of job %s (%.12s) %s",
			    p->tree->name, p->branch, pair, jc->name, sha,
			    reason);
		st->cancelled += (size_t)n;
	}
	store_pendings_release(&rows);
	return r;
}

/* The commit's row, a stub when the watcher has not recorded it. */
static int
commit_row(int64_t *out, struct store *s, int64_t tree_id, const char *sha)
{
	char full[GITM_SHA_SIZE];
	int r = store_commit_find(s, out, full, sizeof(full), tree_id, sha);

	if (r == ERR_NOTFOUND) {
		store_errclear(s);
		r = store_commit_stub(s, out, tree_id, sha);
	}
	return r;
}

/* The job spec's "tree": {"url", "commit"}, and "pack" for a series
 * commit (trigger.h). */
static json_t *
tree_spec(const struct trigger_push *p, const char *sha)
{
	json_t *t = json_pack("{s:s, s:s}", "url", p->tree->url, "commit", sha);
	char path[PACKS_ROUTE_SIZE];

	if (p->series_base != NULL && strcmp(sha, p->series_base) != 0) {
		packs_route(path, sizeof(path), sha, p->series_base);
		json_object_set_new(t, "pack", json_string(path));
	}
	return t;
}

/* Pairs for one candidate commit of one job: every point, every host. */
static int
make_pairs(struct trigger_stats *st, struct store *s,
    const struct trigger_push *p, const struct job_config *jc, const char *cand,
    int64_t cand_id, const char *base, int tip_only, int64_t only_host,
    struct err *e)
{
	struct cfg_point *pts = NULL, empty = { 0, NULL, NULL, NULL };
	int64_t *hosts = NULL, base_id = 0, runs = jc->runs;
	int64_t max_runs = jc->max_runs > runs ? jc->max_runs : runs;
	size_t npts = 0, nhosts = 0, i, h;
	json_t *labels = jobspec_strlist(&jc->hosts), *trees[2];
	char *ltext = pwjson_dump(labels);
	int r = 0;

	trees[0] = tree_spec(p, base);
	trees[1] = tree_spec(p, cand);
	if (commit_row(&base_id, s, p->tree_id, base) != 0 ||
	    store_hosts_matching(s, &hosts, &nhosts, ltext) != 0) {
		r = err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	if (only_host > 0) {
		hosts = xreallocarray(hosts, 1, sizeof(*hosts));
		hosts[0] = only_host;
		nhosts = 1;
	}
	config_expand(&pts, &npts, jc);
	if (npts == 0 && jc->naxes > 0)
		goto out; /* everything excluded: the loader warns */
	/* One candidate's points that differ only in the cgroup are
	 * siblings: one host measures them (store/hosts.h). */
	store_group_begin(s);
	for (i = 0; i < (npts ? npts : 1) && r == 0; i++) {
		const struct cfg_point *pt = npts ? &pts[i] : &empty;
		struct store_job_new jn[2];
		struct store_trigger_pair tp;
		char *texts[2];
		int k;

		for (k = 0; k < 2; k++) {
			json_t *spec = jobspec_build(
			    jc, pt, NULL, trees[k], runs, max_runs);

			texts[k] = pwjson_dump(spec);
			json_decref(spec);
			memset(&jn[k], 0, sizeof(jn[k]));
			jn[k].role = k == 0 ? "base" : "candidate";
			jn[k].spec_json = texts[k];
			jn[k].labels_json = ltext;
			jn[k].runs = runs;
			jn[k].max_runs = max_runs;
			jn[k].max_attempts = p->conf->dc->max_attempts;
			jn[k].commit_id = k == 0 ? base_id : cand_id;
		}
		memset(&tp, 0, sizeof(tp));
		tp.name = jc->name;
		tp.point = pt->label ? pt->label : "";
		tp.tree_id = p->tree_id;
		tp.branch = p->branch;
		tp.tip_only = tip_only;
		/* A pair in rounds measures its own base in the candidate's
		 * rounds: a base measured earlier would be unbalanced
		 * against drift (docs/CONFIG.md `rounds`). */
		tp.reuse_age =
		    jc->rounds > 1 ? 0 : jc->trigger.baseline_max_age_s;
		tp.base = &jn[0];
		tp.cand = &jn[1];
		for (h = 0; h < (nhosts ? nhosts : 1) && r == 0; h++) {
			int reused = 0;

			tp.host_id = nhosts ? hosts[h] : 0;
			if (store_trigger_pair(s, NULL, NULL, NULL, &reused,
			        &tp, p->now) != 0) {
				r = err_set(e, "%s", store_errmsg(s));
				break;
			}
			st->pairs++;
			st->reused += reused != 0;
		}
		free(texts[0]);
		free(texts[1]);
	}
out:
	store_group_end(s);
	config_points_free(pts, npts);
	free(hosts);
	free(ltext);
	json_decref(labels);
	json_decref(trees[0]);
	json_decref(trees[1]);
	return r;
}

/*
 * baseline: previous-tip: one base per host, the tip this job last
 * measured there, else the tip before the push, else parent (the first
 * parent of the candidate).  A host whose previous tip is the candidate
 * has nothing to measure.
 */
static int
previous_tip_pairs(struct trigger_stats *st, struct store *s,
    const struct trigger_push *p, const struct job_config *jc, const char *cand,
    int64_t cand_id, const char *parent, struct err *e)
{
	json_t *labels = jobspec_strlist(&jc->hosts);
	char *ltext = pwjson_dump(labels), base[GITM_SHA_SIZE];
	int64_t *hosts = NULL;
	size_t nhosts = 0, h;
	int r = 0, k;

	json_decref(labels);
	if (store_hosts_matching(s, &hosts, &nhosts, ltext) != 0) {
		free(ltext);
		return err_set(e, "%s", store_errmsg(s));
	}
	free(ltext);
	for (h = 0; h < (nhosts ? nhosts : 1) && r == 0; h++) {
		k = nhosts ? store_bisect_previous_tip(s, base, sizeof(base),
		                 p->tree_id, p->branch, jc->name, hosts[h])
		           : ERR_NOTFOUND;
		if (k == ERR_NOTFOUND) {
			store_errclear(s);
			snprintf(base, sizeof(base), "%s",
			    p->old_tip && p->old_tip[0] ? p->old_tip : parent);
		} else if (k != 0) {
			r = err_set(e, "%s", store_errmsg(s));
			break;
		}
		if (strcmp(base, cand) == 0)
			continue;
		r = make_pairs(st, s, p, jc, cand, cand_id, base, 1,
		    nhosts ? hosts[h] : 0, e);
	}
	free(hosts);
	return r;
}

int
trigger_baseline(char out[GITM_SHA_SIZE], struct gitm_repo *r,
    const char *policy, const char *candidate, struct err *e)
{
	char ref[GITM_SHA_SIZE];
	int rc;

	out[0] = '\0';
	if (strcmp(policy, "parent") == 0)
		return gitm_first_parent(out, r, candidate);
	if (strncmp(policy, "ref:", 4) == 0 && policy[4] != '\0')
		return gitm_resolve(out, r, policy + 4);
	if (strncmp(policy, "branch-base:", 12) == 0 && policy[12] != '\0') {
		if ((rc = gitm_resolve(ref, r, policy + 12)) < 0)
			return rc;
		return gitm_merge_base(out, r, candidate, ref);
	}
	return err_setc(e, ERR_INVALID,
	    "baseline \"%.100s\": expected parent, branch-base:REF or ref:REF",
	    policy);
}

/* One job config against the push. */
static int
job_push(struct trigger_stats *st, struct store *s, struct gitm_repo *repo,
    const struct trigger_push *p, const struct job_config *jc,
    struct buf *problems, struct err *e)
{
	const struct gitm_walk *w = p->walk;
	char policy[CFG_STR_MAX + 16], base[GITM_SHA_SIZE];
	size_t i, first = 0, matched = 0;
	struct err pe = { 0 };
	int r;

	for (i = 0; i < w->n; i++)
		if (p->fresh[i] && touches_job(p, jc, &w->commits[i]))
			matched++;
	if (jc->trigger.coalesce != CFG_COALESCE_KEEP &&
	    coalesce(st, s, repo, p, jc,
	        matched > 0 && !jc->trigger.every_commit, e) != 0)
		return -1;
	if (matched == 0)
		return 0;
	if (jc->baseline == CFG_BASELINE_PARENT ||
	    jc->baseline == CFG_BASELINE_PREVIOUS_TIP)
		snprintf(policy, sizeof(policy), "parent");
	else
		snprintf(policy, sizeof(policy), "%s:%s",
		    config_baseline_name(jc->baseline),
		    jc->baseline_ref ? jc->baseline_ref : "");
	if (!jc->trigger.every_commit) {
		/* Only the new tip, and only when it is new itself. */
		first = w->n;
		if (w->n > 0 && p->fresh[w->n - 1] &&
		    strcmp(w->commits[w->n - 1].sha, p->new_tip) == 0)
			first = w->n - 1;
	}
	for (i = first; i < w->n; i++) {
		const struct gitm_commit *c = &w->commits[i];

		if (!p->fresh[i])
			continue;
		if (jc->trigger.every_commit && !touches_job(p, jc, c))
			continue;
		r = trigger_baseline(base, repo, policy, c->sha, &pe);
		if (r == ERR_NOTFOUND || r == ERR_INVALID) {
			log_warnx("tree %s: branch %s: job %s: no baseline "
			          "for %.12s: %s",
			    p->tree->name, p->branch, jc->name, c->sha,
			    r == ERR_INVALID ? err_msg(&pe)
			                     : gitm_errmsg(repo));
			err_clear(&pe);
			if (problems != NULL)
				buf_printf(problems,
				    "%sjob %s: no baseline (%s) for %.12s",
				    problems->len ? "; " : "", jc->name, policy,
				    c->sha);
			gitm_clearerr(repo);
			st->skipped++;
			continue;
		}
		if (r != 0) {
			err_set(e, "%s", gitm_errmsg(repo));
			gitm_clearerr(repo);
			return -1;
		}
		if (jc->baseline == CFG_BASELINE_PREVIOUS_TIP) {
			if (previous_tip_pairs(st, s, p, jc, c->sha,
			        p->commit_ids[i], base, e) != 0)
				return -1;
			continue;
		}
		if (make_pairs(st, s, p, jc, c->sha, p->commit_ids[i], base,
		        !jc->trigger.every_commit, 0, e) != 0)
			return -1;
	}
	return 0;
}

int
trigger_push(struct trigger_stats *out, struct store *s, struct gitm_repo *repo,
    const struct trigger_push *p, struct buf *problems, struct err *e)
{
	size_t j;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < p->conf->njobs; j++) {
		const struct job_config *jc = p->conf->jobs[j];

		if (!job_wants(jc, p->tree->name, p->branch))
			continue;
		if (job_push(out, s, repo, p, jc, problems, e) != 0)
			return -1;
	}
	return 0;
}

int
trigger_series(struct trigger_stats *out, struct store *s,
    const struct trigger_push *p, const char *inbox, const char *base,
    int64_t tip_id, const char (*shas)[41], const int64_t *ids, size_t n,
    struct err *e)
{
	const struct gitm_walk *w = p->walk;
	size_t j, i;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < p->conf->njobs; j++) {
		const struct job_config *jc = p->conf->jobs[j];
		int touched = 0;

		if (!job_wants(jc, p->tree->name, p->branch) &&
		    !(inbox != NULL && has(&jc->trigger.inboxes, inbox)))
			continue;
		for (i = 0; i < w->n && !touched; i++)
			touched = touches_job(p, jc, &w->commits[i]);
		if (!touched)
			continue;
		if (make_pairs(
		        out, s, p, jc, p->new_tip, tip_id, base, 0, 0, e) != 0)
			return -1;
		/* Each patch against its parent (a one-patch series: the
		 * pair above is that already). */
		for (i = 0; jc->trigger.every_patch && n > 1 && i < n; i++)
			if (make_pairs(out, s, p, jc, shas[i], ids[i],
			        i == 0 ? base : shas[i - 1], 0, 0, e) != 0)
				return -1;
	}
	return 0;
}
