#ifndef DAEMON_TRIGGER_H
#define DAEMON_TRIGGER_H

/*
 * Triggers: the job pairs a branch push makes.  For each job config whose
 * `trigger` names the tree, matches the branch (fnmatch globs; none = any
 * branch) and, with `trigger.paths`, is touched by a new commit, one pair
 * per candidate commit, matrix point and host: the candidate is the
 * commit, the base its baseline under the job's `baseline:` policy
 * (resolved in the tree's mirror).  Hosts are the registered hosts
 * carrying one of the job's `hosts` labels (any host without labels);
 * with no such host yet, one unbound pair per point, which the scheduler
 * binds to the first host that claims it.
 *
 * every_commit: every new commit that matches is a candidate; off: only
 * the new tip, when some new commit matches.  Coalescing
 * (trigger.coalesce: cancel): before the new pairs are made, queued pairs
 * of the same job, tree and branch that the push superseded are
 * cancelled: a tip-only pair whose commit is no longer the tip, and any
 * pair whose commit the branch no longer contains (a force push).
 * deprioritise: those pairs stay queued but are claimed after every pair
 * that is not superseded.
 * baseline: previous-tip: per host, the base is the tip this job last
 * measured there (a tip-only pair not cancelled), else the tip before
 * the push, else the candidate's first parent.
 * Baseline reuse: a pinned pair shares a base job already queued, running
 * or measured on that host within trigger.baseline_max_age (store).
 *
 * Runs on the watcher thread of the tree, inside the transaction that
 * records the push.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "git/git.h"

struct dconf;
struct cfg_tree;
struct gitm_repo;
struct gitm_walk;
struct store;

/*
 * The paths a walk of tree must report: the tree's `paths` first (in
 * order, so touches[i] for i < tree->paths.n is the tree's own), then
 * every other path a job triggered by the tree names.  *out is an array
 * of *n borrowed strings (the caller frees the array only).
 */
void trigger_paths(const char ***out, size_t *n, const struct dconf *,
    const struct cfg_tree *);

struct trigger_push {
	const struct dconf *conf;
	const struct cfg_tree *tree;
	int64_t tree_id;
	const char *branch;
	const char *new_tip;
	const char *old_tip;          /* the tip before the push, or NULL */
	const struct gitm_walk *walk; /* commits new on the branch */
	const int64_t *commit_ids;    /* per walk commit: its row */
	const int *fresh;             /* per walk commit: first recorded now */
	const char *const *paths;     /* the walk's paths (trigger_paths) */
	size_t npaths;
	int64_t now;
	/*
	 * A series (NULL for a push): the commit it was applied onto.
	 * Series commits exist only in the daemon's mirror, so the tree
	 * object of every other commit carries, next to the tree's url,
	 * "pack": the runner route of that commit's pack over this base
	 * (docs/API.md, GET /api/v1/packs).
	 */
	const char *series_base;
};

struct trigger_stats {
	size_t pairs;         /* pairs made */
	size_t reused;        /* of which share an existing base job */
	size_t cancelled;     /* jobs cancelled as superseded */
	size_t deprioritised; /* pairs deprioritised as superseded */
	size_t skipped;       /* candidates without a baseline */
};

/*
 * Makes the pairs of one push.  A candidate whose baseline cannot be
 * resolved (a root commit under `parent`, a missing ref) is skipped and
 * named in problems (may be NULL).  0, or -1 with e set (the store or the
 * mirror failed; the caller rolls back).
 */
/*
 * The baseline of CANDIDATE under a job's `baseline:` policy: "parent"
 * (first parent), "branch-base:REF" (merge base with REF), "ref:REF"
 * (the policy is the job's, so it is read here, not in git/).
 * 0; ERR_INVALID (unknown policy, message in e); ERR_NOTFOUND or -1
 * (message in gitm_errmsg()).
 */
int trigger_baseline(char out[GITM_SHA_SIZE], struct gitm_repo *,
    const char *policy, const char *candidate, struct err *e);
int trigger_push(struct trigger_stats *out, struct store *, struct gitm_repo *,
    const struct trigger_push *, struct buf *problems, struct err *e);

/*
 * A patch series applied on p->branch of p->tree: one pair per job,
 * point and host for the series tip p->new_tip (its row tip_id) against
 * BASE, the commit the series was applied onto.  A job takes it when
 * its trigger names the tree and branch as for a push, or names INBOX
 * (NULL for uploads) in `trigger.inboxes`; with `trigger.paths`, when a
 * commit of p->walk (base..tip, with touches for p->paths) touches one.
 * A job with `trigger.every_patch` also gets, for each patch commit
 * shas[i] (its row ids[i], i < n, in series order), a pair against its
 * parent (shas[i - 1], or BASE), so a change is pinned to one patch.
 * 0, or -1 with e set.
 */
int trigger_series(struct trigger_stats *out, struct store *,
    const struct trigger_push *p, const char *inbox, const char *base,
    int64_t tip_id, const char (*shas)[41], const int64_t *ids, size_t n,
    struct err *e);

#endif
