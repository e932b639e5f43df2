/*
 * The tree watcher (see watch.h): one thread per tree and per inbox
 * (watch_inbox.c), and the upload queue's thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/leases.h"
#include "daemon/sched.h"
#include "daemon/series.h"
#include "daemon/trigger.h"
#include "daemon/watch.h"
#include "daemon/watch_int.h"
#include "store/store.h"
#include "store/tx.h"
#include "store/watch.h"

#define WATCH_MAX_WALK 10000     /* commits recorded per push */
#define WATCH_MAX_BACKOFF_S 3600 /* longest wait after failures */
#define WATCH_FETCH_TIMEOUT_MS (10L * 60 * 1000)

int64_t
watch_i_now_s(void)
{
	return (int64_t)time(NULL);
}

static struct dconf *
conf_get(struct watch *w)
{
	struct dconf *c;

	pthread_mutex_lock(&w->mu);
	c = dconf_ref(w->conf);
	pthread_mutex_unlock(&w->mu);
	return c;
}

static const struct cfg_tree *
find_tree(const struct dconf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->dc->ntrees; i++)
		if (strcmp(c->dc->trees[i].name, name) == 0)
			return &c->dc->trees[i];
	return NULL;
}

static const struct cfg_inbox *
find_inbox(const struct dconf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->dc->ninboxes; i++)
		if (strcmp(c->dc->inboxes[i].name, name) == 0)
			return &c->dc->inboxes[i];
	return NULL;
}

static struct seen *
seen_of(struct tw *t, const char *branch)
{
	size_t i;

	for (i = 0; i < t->nseen; i++)
		if (strcmp(t->seen[i].branch, branch) == 0)
			return &t->seen[i];
	t->seen = xreallocarray(t->seen, t->nseen + 1, sizeof(*t->seen));
	t->seen[t->nseen].branch = xstrdup(branch);
	t->seen[t->nseen].missing = 0;
	return &t->seen[t->nseen++];
}

/* A transfer in flight stops when the thread is asked to quit. */
static int
on_progress(const struct gitm_progress *p, void *arg)
{
	struct tw *t = arg;

	(void)p;
	return atomic_load(&t->quit);
}

/* The delay before the next poll after `failures` failed ones. */
int64_t
watch_i_next_delay(int64_t poll_s, int64_t failures)
{
	int64_t d = poll_s, cap = WATCH_MAX_BACKOFF_S;

	if (cap < poll_s)
		cap = poll_s;
	while (failures-- > 0 && d < cap)
		d *= 2;
	return d < cap ? d : cap;
}

static void add_problem(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
add_problem(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	if (b->len > 0)
		buf_puts(b, "; ");
	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* "Name <email>" of a commit's person. */
static char *
person(const char *name, const char *email)
{
	return xasprintf("%s <%s>", name ? name : "", email ? email : "");
}

/* Records the walk's commits on branch: ids and fresh flags out. */
static int
record_commits(struct tw *t, const struct cfg_tree *tree, const char *branch,
    const struct gitm_walk *w, int64_t *ids, int *fresh, int64_t now)
{
	size_t i, k;

	for (i = 0; i < w->n; i++) {
		const struct gitm_commit *c = &w->commits[i];
		struct buf parents = BUF_INIT(CAP_LINE);
		json_t *paths = json_array();
		struct store_commit sc;
		char *pj;
		int r;

		for (k = 0; k < c->nparents; k++)
			buf_printf(
			    &parents, "%s%s", k ? " " : "", c->parents[k]);
		for (k = 0; k < tree->paths.n; k++)
			if (c->touches[k])
				json_array_append_new(
				    paths, json_string(tree->paths.v[k]));
		pj = pwjson_dump(paths);
		memset(&sc, 0, sizeof(sc));
		sc.sha = c->sha;
		sc.parents = parents.data;
		sc.author = person(c->author_name, c->author_email);
		sc.committer = person(c->committer_name, c->committer_email);
		sc.author_date = c->author_time;
		sc.commit_date = c->commit_time;
		sc.subject = c->subject;
		sc.paths_json = pj;
		r = store_commit_record(
		    t->s, &ids[i], &fresh[i], t->tree_id, &sc, branch, now);
		free((char *)sc.author);
		free((char *)sc.committer);
		free(pj);
		json_decref(paths);
		buf_release(&parents);
		if (r != 0)
			return -1;
	}
	return 0;
}

/*
 * What branch_moved writes (struct branch_tx): the walk's commits, the
 * pairs its triggers make, the branch's new tip, in one transaction.
 * store_tx_retry runs it again whole after a lost race, so the trigger
 * stats and the problems it adds start again each time.  0, or -1 with
 * triggers_failed and e set when a trigger failed.
 */
struct branch_tx {
	struct tw *t;
	const struct dconf *conf;
	const struct cfg_tree *tree;
	const char *branch, *old, *cur, *rewrite;
	struct gitm_walk *walk;
	int64_t *ids, now;
	int *fresh;
	const char **paths;
	size_t npaths;
	struct buf *problems;
	size_t problems0; /* problems' length before the first try */
	struct trigger_stats ts;
	int triggers_failed;
	struct err e;
};

static int
branch_tx(struct store *s, void *arg)
{
	struct branch_tx *b = arg;
	struct trigger_push tp;

	memset(&b->ts, 0, sizeof(b->ts));
	b->triggers_failed = 0;
	buf_truncate(b->problems, b->problems0);
	if (store_begin(s) != 0)
		return -1;
	if (record_commits(b->t, b->tree, b->branch, b->walk, b->ids, b->fresh,
	        b->now) != 0)
		goto fail;
	if (b->old != NULL) {
		memset(&tp, 0, sizeof(tp));
		tp.conf = b->conf;
		tp.tree = b->tree;
		tp.tree_id = b->t->tree_id;
		tp.branch = b->branch;
		tp.new_tip = b->cur;
		tp.old_tip = b->old;
		tp.walk = b->walk;
		tp.commit_ids = b->ids;
		tp.fresh = b->fresh;
		tp.paths = b->paths;
		tp.npaths = b->npaths;
		tp.now = b->now;
		if (trigger_push(
		        &b->ts, s, b->t->repo, &tp, b->problems, &b->e) != 0) {
			b->triggers_failed = 1;
			goto fail;
		}
	}
	if (store_branch_update(s, b->t->tree_id, b->branch, b->cur, "ok", NULL,
	        b->rewrite, b->now) != 0)
		goto fail;
	return store_commit(s) != 0 ? -1 : 0;
fail:
	store_rollback(s);
	return -1;
}

/*
 * A branch whose tip moved from old (NULL: first sight) to cur: records,
 * triggers and stores the new tip in one transaction.  0 or -1 with the
 * problem added.
 */
static int
branch_moved(struct tw *t, const struct dconf *conf,
    const struct cfg_tree *tree, const char *branch, const char *old,
    const char *cur, struct buf *problems)
{
	struct gitm_walk walk;
	struct trigger_stats ts = { 0, 0, 0, 0 };
	struct branch_tx bt;
	const char **paths = NULL;
	char *rewrite = NULL;
	int64_t *ids = NULL, now = watch_i_now_s();
	int *fresh = NULL, r;
	size_t npaths = 0;

	trigger_paths(&paths, &npaths, conf, tree);
	/* First sight: the tip alone, nothing triggered. */
	r = gitm_new_commits(
	    &walk, t->repo, old, cur, paths, npaths, old ? WATCH_MAX_WALK : 1);
	if (r != 0) {
		add_problem(
		    problems, "branch %s: %s", branch, gitm_errmsg(t->repo));
		log_warnx("tree %s: branch %s: walk %.12s: %s", tree->name,
		    branch, cur, gitm_errmsg(t->repo));
		gitm_clearerr(t->repo);
		free(paths);
		return -1;
	}
	if (walk.rewrite) {
		rewrite = xasprintf("%" PRId64 ": %.12s -> %.12s, merge base "
		                    "%.12s, %zu commit(s) dropped",
		    now, old, cur, walk.base[0] ? walk.base : "(none)",
		    walk.dropped);
		log_warnx("tree %s: branch %s was rewritten (force push): %s",
		    tree->name, branch, rewrite);
	}
	if (old != NULL && walk.old_missing)
		log_warnx("tree %s: branch %s: old tip %.12s is gone from the "
		          "mirror; walked from the new tip only",
		    tree->name, branch, old);
	if (old != NULL && walk.truncated)
		log_warnx("tree %s: branch %s: more than %d new commits; "
		          "recorded the newest %zu",
		    tree->name, branch, WATCH_MAX_WALK, walk.n);
	ids = xcalloc(walk.n + 1, sizeof(*ids));
	fresh = xcalloc(walk.n + 1, sizeof(*fresh));
	bt = (struct branch_tx){ .t = t,
		.conf = conf,
		.tree = tree,
		.branch = branch,
		.old = old,
		.cur = cur,
		.rewrite = rewrite,
		.walk = &walk,
		.ids = ids,
		.fresh = fresh,
		.paths = paths,
		.npaths = npaths,
		.now = now,
		.problems = problems,
		.problems0 = problems->len };
	if (store_tx_retry(t->s, branch_tx, &bt) != 0) {
		if (!bt.triggers_failed)
			goto fail_store;
		add_problem(problems, "branch %s: triggers: %s", branch,
		    err_msg(&bt.e));
		log_warnx("tree %s: branch %s: triggers: %s", tree->name,
		    branch, err_msg(&bt.e));
		store_errclear(t->s);
		goto fail;
	}
	ts = bt.ts;
	if (old == NULL)
		log_info(
		    "tree %s: branch %s at %.12s", tree->name, branch, cur);
	else
		log_info("tree %s: branch %s: %.12s..%.12s: %zu new "
		         "commit(s), %zu pair(s) (%zu sharing a base), %zu "
		         "job(s) superseded, %zu pair(s) deprioritised",
		    tree->name, branch, old, cur, walk.n, ts.pairs, ts.reused,
		    ts.cancelled, ts.deprioritised);
	if (ts.pairs > 0 && t->w->sched != NULL)
		sched_notify(t->w->sched);
	gitm_walk_release(&walk);
	free(ids);
	free(fresh);
	free(rewrite);
	free(paths);
	return 0;
fail_store:
	add_problem(problems, "branch %s: %s", branch, store_errmsg(t->s));
	log_warnx(
	    "tree %s: branch %s: %s", tree->name, branch, store_errmsg(t->s));
	store_errclear(t->s);
fail:
	gitm_walk_release(&walk);
	free(ids);
	free(fresh);
	free(rewrite);
	free(paths);
	return -1;
}

/* One branch after a successful fetch. */
static void
poll_branch(struct tw *t, const struct dconf *conf, const struct cfg_tree *tree,
    const char *branch, struct buf *problems)
{
	char cur[GITM_SHA_SIZE], old[GITM_SHA_SIZE];
	struct seen *sn = seen_of(t, branch);
	int r, have_old;

	r = gitm_tip(cur, t->repo, branch);
	have_old =
	    store_branch_tip(t->s, old, sizeof(old), t->tree_id, branch) == 0;
	if (r == ERR_NOTFOUND) {
		char msg[CAP_ERRMSG];

		if (have_old)
			snprintf(msg, sizeof(msg),
			    "branch %s is gone from the remote (last tip "
			    "%.12s)",
			    branch, old);
		else
			snprintf(msg, sizeof(msg),
			    "branch %s does not exist in the remote", branch);
		add_problem(problems, "%s", msg);
		gitm_clearerr(t->repo);
		if (!sn->missing) {
			log_warnx("tree %s: %s", tree->name, msg);
			store_branch_update(t->s, t->tree_id, branch, NULL,
			    "missing", msg, NULL, watch_i_now_s());
			sn->missing = 1;
		}
		return;
	}
	if (r != 0) {
		add_problem(
		    problems, "branch %s: %s", branch, gitm_errmsg(t->repo));
		gitm_clearerr(t->repo);
		return;
	}
	if (have_old && strcmp(old, cur) == 0) {
		if (sn->missing) {
			log_info("tree %s: branch %s is back at %.12s",
			    tree->name, branch, cur);
			store_branch_update(t->s, t->tree_id, branch, cur, "ok",
			    NULL, NULL, watch_i_now_s());
		}
		sn->missing = 0;
		return;
	}
	if (sn->missing)
		log_info("tree %s: branch %s is back", tree->name, branch);
	sn->missing = 0;
	branch_moved(
	    t, conf, tree, branch, have_old ? old : NULL, cur, problems);
}

/* One cycle: fetch, then every branch.  Returns the delay to the next. */
static int64_t
poll_tree(struct tw *t, const struct dconf *conf, const struct cfg_tree *tree)
{
	struct gitm_fetch_stats fs;
	struct buf problems = BUF_INIT(CAP_ERRMSG * 4);
	int64_t delay, now;
	size_t i;
	int r;

	if (store_tree_sync(t->s, &t->tree_id, tree->name, tree->url) != 0) {
		log_warnx("tree %s: %s", tree->name, store_errmsg(t->s));
		store_errclear(t->s);
		return watch_i_next_delay(tree->poll_s, ++t->failures);
	}
	memset(&fs, 0, sizeof(fs));
	r = gitm_fetch(&fs, t->repo);
	now = watch_i_now_s();
	if (atomic_load(&t->quit))
		return 0;
	if (r != 0) {
		t->failures++;
		delay = watch_i_next_delay(tree->poll_s, t->failures);
		log_warnx("tree %s: fetch failed (%" PRId64 " in a row, next "
		          "try in %" PRId64 " s): %s",
		    tree->name, t->failures, delay, gitm_errmsg(t->repo));
		store_tree_polled(t->s, t->tree_id, now, 0,
		    gitm_errmsg(t->repo), t->failures, now + delay);
		gitm_clearerr(t->repo);
		return delay;
	}
	if (fs.cloned)
		log_info("tree %s: mirror made in %ld ms", tree->name, fs.ms);
	if (fs.recreated)
		log_warnx("tree %s: the mirror was corrupt and was made again "
		          "(%ld ms)",
		    tree->name, fs.ms);
	if (t->failures > 0)
		log_info("tree %s: fetch works again after %" PRId64
		         " failure(s)",
		    tree->name, t->failures);
	t->failures = 0;
	for (i = 0; i < tree->branches.n && !atomic_load(&t->quit); i++)
		poll_branch(t, conf, tree, tree->branches.v[i], &problems);
	delay = tree->poll_s;
	if (store_tree_polled(t->s, t->tree_id, now, 1,
	        problems.len ? problems.data : NULL, 0, now + delay) != 0) {
		log_warnx("tree %s: %s", tree->name, store_errmsg(t->s));
		store_errclear(t->s);
	}
	buf_release(&problems);
	return delay;
}

/* Sleeps up to secs, or until asked to quit; 1 when asked to quit. */
static int
nap(struct tw *t, int64_t secs)
{
	struct timespec ts;

	clock_deadline(&ts, secs * 1000);
	pthread_mutex_lock(&t->w->mu);
	while (!atomic_load(&t->quit)) {
		if (pthread_cond_timedwait(&t->w->cv, &t->w->mu, &ts) ==
		    ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&t->w->mu);
	return atomic_load(&t->quit);
}

/* (Re)opens the thread's mirror, named file under mirrors/, of url. */
static void
remirror(struct tw *t, struct dconf *conf, const char *file, const char *url)
{
	struct gitm_opts o;

	memset(&o, 0, sizeof(o));
	o.timeout_ms = WATCH_FETCH_TIMEOUT_MS;
	o.transfer = GITM_XFER_AUTO;
	o.progress = on_progress;
	o.arg = t;
	gitm_repo_free(t->repo);
	free(t->url);
	t->url = xstrdup(url);
	t->repo = gitm_repo_new(conf->dc->mirrors, file, url, &o);
	t->failures = 0;
}
/*
 * The upload queue (POST /api/v1/series): applies the oldest queued
 * mbox, so no request thread does git work.  0 when one was taken
 * (look again at once), else nonzero (nothing queued, or a failure:
 * wait).
 */
static int
apply_uploads(struct tw *t, const struct dconf *conf)
{
	struct series_result res;
	struct err e = { 0 };
	int r = series_apply_queued(&res, t->s, conf, watch_i_now_s(), &e);

	if (r == 0) {
		log_info("series upload %" PRId64 ": %zu series, %zu applied, "
		         "%zu failed, %zu incomplete, %zu known, %zu pair(s)",
		    res.queue_id, res.n, res.applied, res.failed,
		    res.incomplete, res.known, res.pairs);
		if (res.pairs > 0 && t->w->sched != NULL)
			sched_notify(t->w->sched);
	} else if (r != ERR_NOTFOUND) {
		log_warnx("series upload: %s", err_msg(&e));
		store_errclear(t->s);
	}
	series_result_release(&res);
	return r;
}

/* 1 while this daemon runs the watcher (LEASE_WATCH), else 0 after a
 * nap of LEASE_IDLE_MS. */
static int
watching(struct tw *t)
{
	struct timespec ts;

	if (leases_held(t->w->leases, LEASE_WATCH))
		return 1;
	clock_deadline(&ts, LEASE_IDLE_MS);
	pthread_mutex_lock(&t->w->mu);
	while (!atomic_load(&t->quit) &&
	    pthread_cond_timedwait(&t->w->cv, &t->w->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&t->w->mu);
	return 0;
}

/* One poll of t's inbox or tree as conf names it, remirrored first when
 * its URL changed: the delay before the next poll, or -1 when conf no
 * longer names it. */
static int64_t
poll_source(struct tw *t, struct dconf *conf)
{
	const struct cfg_inbox *in;
	const struct cfg_tree *tree;
	char *file;

	if (t->inbox) {
		if ((in = find_inbox(conf, t->name)) == NULL)
			return -1;
		if (t->url == NULL || strcmp(t->url, in->url) != 0) {
			file = xasprintf("%s.inbox", in->name);
			remirror(t, conf, file, in->url);
			free(file);
		}
		return watch_i_poll_inbox(t, conf, in);
	}
	if ((tree = find_tree(conf, t->name)) == NULL)
		return -1;
	if (t->url == NULL || strcmp(t->url, tree->url) != 0)
		remirror(t, conf, tree->name, tree->url);
	return poll_tree(t, conf, tree);
}

static void *
tw_main(void *arg)
{
	struct tw *t = arg;
	struct err e = { 0 };
	int64_t delay;

	while (!atomic_load(&t->quit) && t->s == NULL) {
		if (store_open(&t->s, t->w->dbpath, &e) == 0)
			break;
		log_warnx("tree %s: %s", t->name, err_msg(&e));
		err_clear(&e);
		if (nap(t, 10))
			return NULL;
	}
	while (!atomic_load(&t->quit) && t->inbox == TW_QUEUE) {
		struct dconf *conf;
		int r;

		if (!watching(t))
			continue;
		conf = conf_get(t->w);
		r = apply_uploads(t, conf);

		dconf_unref(conf);
		if (r != 0)
			nap(t, 1);
	}
	while (!atomic_load(&t->quit)) {
		struct dconf *conf;

		if (!watching(t))
			continue;
		conf = conf_get(t->w);
		delay = poll_source(t, conf);
		dconf_unref(conf);
		/* A source a reload removed naps till watch_reload joins. */
		nap(t, delay < 0 ? 3600 : delay);
	}
	return NULL;
}

static void
tw_free(struct tw *t)
{
	size_t i;

	if (t == NULL)
		return;
	store_close(t->s);
	gitm_repo_free(t->repo);
	mail_msgs_free(t->pending, t->npending);
	mail_msgs_free(t->done, t->ndone);
	for (i = 0; i < t->npending; i++)
		free(t->pending_sha[i]);
	free(t->pending_sha);
	for (i = 0; i < t->ndone; i++)
		free(t->done_sha[i]);
	free(t->done_sha);
	for (i = 0; i < t->nseen; i++)
		free(t->seen[i].branch);
	free(t->seen);
	free(t->url);
	free(t->name);
	free(t);
}

/* The thread's configuration still exists. */
static int
tw_wanted(const struct dconf *conf, const struct tw *t)
{
	if (t->inbox == TW_QUEUE)
		return 1;
	return t->inbox ? find_inbox(conf, t->name) != NULL
	                : find_tree(conf, t->name) != NULL;
}

static void
tw_spawn(struct watch *w, const char *name, int inbox)
{
	struct tw *t;
	size_t j;

	for (j = 0; j < w->ntrees; j++)
		if (w->trees[j]->inbox == inbox &&
		    strcmp(w->trees[j]->name, name) == 0)
			return;
	t = xcalloc(1, sizeof(*t));
	t->w = w;
	t->name = xstrdup(name);
	t->inbox = inbox;
	atomic_init(&t->quit, 0);
	if (pthread_create(&t->th, NULL, tw_main, t) != 0) {
		log_warnx("%s %s: cannot start its thread",
		    inbox ? "inbox" : "tree", name);
		tw_free(t);
		return;
	}
	w->trees = xreallocarray(w->trees, w->ntrees + 1, sizeof(*w->trees));
	w->trees[w->ntrees++] = t;
}

/* Stops and frees the threads of trees and inboxes no longer configured,
 * starts threads for new ones.  Called with mu not held. */
static void
reconcile(struct watch *w)
{
	struct tw **gone = NULL;
	size_t ngone = 0, i;
	struct dconf *conf = conf_get(w);

	pthread_mutex_lock(&w->mu);
	for (i = 0; i < w->ntrees;) {
		if (tw_wanted(conf, w->trees[i])) {
			i++;
			continue;
		}
		atomic_store(&w->trees[i]->quit, 1);
		gone = xreallocarray(gone, ngone + 1, sizeof(*gone));
		gone[ngone++] = w->trees[i];
		w->trees[i] = w->trees[--w->ntrees];
	}
	pthread_cond_broadcast(&w->cv);
	for (i = 0; i < conf->dc->ntrees; i++)
		tw_spawn(w, conf->dc->trees[i].name, 0);
	for (i = 0; i < conf->dc->ninboxes; i++)
		tw_spawn(w, conf->dc->inboxes[i].name, 1);
	tw_spawn(w, "uploads", TW_QUEUE);
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < ngone; i++) {
		log_info("%s %s: no longer watched",
		    gone[i]->inbox ? "inbox" : "tree", gone[i]->name);
		pthread_join(gone[i]->th, NULL);
		tw_free(gone[i]);
	}
	free(gone);
	dconf_unref(conf);
}

int
watch_start(struct watch **out, struct dconf *conf, struct sched *sched,
    struct leases *leases, struct err *e)
{
	struct watch *w = xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;

	(void)e;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->conf = dconf_ref(conf);
	w->sched = sched;
	w->leases = leases;
	w->dbpath = xstrdup(conf->dc->database);
	reconcile(w);
	*out = w;
	return 0;
}

void
watch_reload(struct watch *w, struct dconf *conf)
{
	struct dconf *old;

	if (w == NULL)
		return;
	old = dconf_swap(&w->conf, &w->mu, conf);
	dconf_unref(old);
	reconcile(w);
}

void
watch_stop(struct watch *w)
{
	size_t i;

	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	for (i = 0; i < w->ntrees; i++)
		atomic_store(&w->trees[i]->quit, 1);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < w->ntrees; i++) {
		pthread_join(w->trees[i]->th, NULL);
		tw_free(w->trees[i]);
	}
	free(w->trees);
	dconf_unref(w->conf);
	free(w->dbpath);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
