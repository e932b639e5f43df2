/*
 * Patch series: mail to synthetic commits and triggered pairs (series.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/dconf.h"
#include "daemon/mail.h"
#include "daemon/packs.h"
#include "daemon/series.h"
#include "daemon/trigger.h"
#include "git/am.h"
#include "git/git.h"
#include "store/series.h"
#include "store/series_quota.h"
#include "store/store.h"
#include "store/tx.h"
#include "store/watch.h"

void
series_result_release(struct series_result *r)
{
	if (r == NULL)
		return;
	free(r->ids);
	free(r->states);
	memset(r, 0, sizeof(*r));
}

static void
add_id(struct series_result *r, int64_t id)
{
	r->ids = xreallocarray(r->ids, r->n + 1, sizeof(*r->ids));
	r->ids[r->n++] = id;
}

/* "Name <email>" of a mail's sender. */
static char *
person(const struct mail_msg *m)
{
	return xasprintf("%s <%s>", m->from_name, m->from_email);
}

/* The commit message of a patch: its title, a blank line, its text. */
static char *
commit_message(const struct mail_msg *m)
{
	if (m->message[0] == '\0')
		return xasprintf("%s\n", m->tag.title);
	return xasprintf("%s\n\n%s\n", m->tag.title, m->message);
}

/* Records the series' commits and triggers its tip, in one transaction. */
/*
 * What record_applied writes (struct series_tx): the series' commits
 * and patches, its state and the pairs its triggers make, in one
 * transaction.  store_tx_retry runs it again whole after a lost race.
 * 0, or -1 with e set.
 */
struct series_tx {
	const struct series_ingest *in;
	int64_t tree_id, id;
	const struct mail_msg *msgs;
	const struct mail_series *ms;
	char (*shas)[GITM_SHA_SIZE];
	const char *base, *ref;
	struct gitm_walk *walk;
	const char **paths;
	size_t npaths;
	int64_t *cids;
	struct err *e;
	struct trigger_stats ts;
};

static int
series_tx(struct store *s, void *arg)
{
	struct series_tx *t = arg;
	const struct series_ingest *in = t->in;
	const struct mail_msg *msgs = t->msgs;
	const struct mail_series *ms = t->ms;
	const struct gitm_walk *walk = t->walk;
	const char *base = t->base, *tip = t->shas[ms->total - 1];
	char(*shas)[GITM_SHA_SIZE] = t->shas;
	int64_t *cids = t->cids;
	struct trigger_push tp;
	struct err *e = t->e;
	size_t i, k;

	memset(&t->ts, 0, sizeof(t->ts));
	if (store_begin(s) != 0)
		return err_set(e, "%s", store_errmsg(s));
	for (i = 0; i < (size_t)ms->total; i++) {
		const struct mail_msg *m = &msgs[ms->patches[i]];
		const struct gitm_commit *c = NULL;
		struct store_commit sc;
		struct store_series_patch sp;
		json_t *pj = json_array();
		char *pjs, *who = person(m);
		int rc;

		for (k = 0; k < walk->n; k++)
			if (strcmp(walk->commits[k].sha, shas[i]) == 0)
				c = &walk->commits[k];
		for (k = 0; c != NULL && k < in->tree->paths.n; k++)
			if (c->touches[k])
				json_array_append_new(
				    pj, json_string(in->tree->paths.v[k]));
		pjs = pwjson_dump(pj);
		json_decref(pj);
		memset(&sc, 0, sizeof(sc));
		sc.sha = shas[i];
		sc.parents = i == 0 ? base : shas[i - 1];
		sc.author = who;
		sc.committer = "perfwatch <perfwatch@localhost>";
		sc.author_date = m->date < 0 ? 0 : m->date;
		sc.commit_date = sc.author_date;
		sc.subject = m->tag.title;
		sc.paths_json = pjs;
		rc = store_commit_record(
		    s, &cids[i], NULL, t->tree_id, &sc, "", in->now);
		free(pjs);
		memset(&sp, 0, sizeof(sp));
		sp.seq = (int64_t)i + 1;
		sp.message_id = m->message_id;
		sp.subject = m->tag.title;
		sp.author = who;
		sp.date = m->date;
		sp.commit_id = cids[i];
		if (rc == 0)
			rc = store_series_patch_put(s, t->id, &sp);
		free(who);
		if (rc != 0) {
			err_set(e, "%s", store_errmsg(s));
			goto fail;
		}
	}
	if (store_series_state(s, t->id, "applied", NULL, base,
	        cids[ms->total - 1], t->ref, in->now) != 0) {
		err_set(e, "%s", store_errmsg(s));
		goto fail;
	}
	memset(&tp, 0, sizeof(tp));
	tp.conf = in->conf;
	tp.tree = in->tree;
	tp.tree_id = t->tree_id;
	tp.branch = in->branch;
	tp.new_tip = tip;
	tp.walk = walk;
	tp.paths = t->paths;
	tp.npaths = t->npaths;
	tp.now = in->now;
	tp.series_base = base;
	if (trigger_series(&t->ts, s, &tp, in->inbox, base, cids[ms->total - 1],
	        (const char(*)[41])shas, cids, (size_t)ms->total, e) != 0)
		goto fail;
	if (store_commit(s) != 0)
		return err_set(e, "%s", store_errmsg(s));
	return 0;
fail:
	store_rollback(s);
	return -1;
}

static int
record_applied(struct series_result *res, struct store *s,
    struct gitm_repo *repo, const struct series_ingest *in, int64_t tree_id,
    int64_t id, const struct mail_msg *msgs, const struct mail_series *ms,
    char (*shas)[GITM_SHA_SIZE], const char *base, const char *ref,
    struct err *e)
{
	const char **paths = NULL;
	size_t npaths = 0;
	struct gitm_walk walk;
	int64_t *cids = xcalloc((size_t)ms->total, sizeof(*cids));
	struct series_tx st;
	const char *tip = shas[ms->total - 1];
	int r = -1;

	memset(&walk, 0, sizeof(walk));
	/* Before the jobs: every daemon must serve their commits at once. */
	if (packs_keep(s, in->conf->dc, repo, id, tip, base, e) != 0) {
		free(cids);
		return -1;
	}
	trigger_paths(&paths, &npaths, in->conf, in->tree);
	if (gitm_new_commits(&walk, repo, base, tip, paths, npaths, 0) != 0) {
		err_set(e, "%s", gitm_errmsg(repo));
		gitm_clearerr(repo);
		free(paths);
		free(cids);
		return -1;
	}
	st = (struct series_tx){ .in = in,
		.tree_id = tree_id,
		.id = id,
		.msgs = msgs,
		.ms = ms,
		.shas = shas,
		.base = base,
		.ref = ref,
		.walk = &walk,
		.paths = paths,
		.npaths = npaths,
		.cids = cids,
		.e = e };
	if (store_tx_retry(s, series_tx, &st) != 0)
		goto out;
	res->pairs += st.ts.pairs;
	r = 0;
out:
	gitm_walk_release(&walk);
	free(paths);
	free(cids);
	return r;
}

/* Records the patch rows of a series that was not applied. */
static int
record_rows(struct store *s, int64_t id, const struct mail_msg *msgs,
    const struct mail_series *ms, struct err *e)
{
	int k;

	for (k = 0; k < ms->total; k++) {
		const struct mail_msg *m;
		struct store_series_patch sp;
		char *who;
		int rc;

		if (ms->patches[k] < 0)
			continue;
		m = &msgs[ms->patches[k]];
		who = person(m);
		memset(&sp, 0, sizeof(sp));
		sp.seq = k + 1;
		sp.message_id = m->message_id;
		sp.subject = m->tag.title;
		sp.author = who;
		sp.date = m->date;
		rc = store_series_patch_put(s, id, &sp);
		free(who);
		if (rc != 0)
			return err_set(e, "%s", store_errmsg(s));
	}
	return 0;
}

static int
set_state(struct store *s, int64_t id, const char *state, const char *error,
    const char *base, int64_t now, struct err *e)
{
	if (store_series_state(s, id, state, error, base, 0, NULL, now) != 0)
		return err_set(e, "%s", store_errmsg(s));
	return 0;
}

/*
 * Message-IDs a cover letter names as its earlier versions: lore links
 * ("https://lore.kernel.org/r/ID", ".../LIST/ID/", "Link: <...>"), at
 * most max, written into ids (malloc'd strings).
 */
static size_t
lore_ids(char **ids, size_t max, const char *body)
{
	static const char host[] = "lore.kernel.org/";
	const char *p = body;
	size_t n = 0;

	while (n < max && (p = strstr(p, host)) != NULL) {
		const char *seg = p + sizeof(host) - 1, *id, *end;
		struct buf b = BUF_INIT(CAP_MAIL_ID);
		size_t k;

		p = seg;
		/* LIST/ID or r/ID or all/ID. */
		id = seg + strcspn(seg, "/ \t\n>");
		if (*id != '/')
			continue;
		id++;
		end = id + strcspn(id, "/ \t\n>)\"'");
		for (k = 0; id + k < end; k++) {
			/* "%40" in a link is the '@' of the id. */
			if (id[k] == '%' && id + k + 2 < end &&
			    strncmp(id + k, "%40", 3) == 0) {
				buf_putc(&b, '@');
				k += 2;
			} else
				buf_putc(&b, id[k]);
		}
		if (!buf_failed(&b) && strchr(b.data, '@') != NULL)
			ids[n++] = buf_take(&b);
		buf_release(&b);
		p = end;
	}
	return n;
}

/* Records the series' tag and the version it supersedes. */
static int
record_meta(struct store *s, int64_t id, const struct mail_msg *msgs,
    const struct mail_series *ms, struct err *e)
{
	const struct mail_msg *root = &msgs[ms->root];
	char *ids[CAP_MAIL_REFS + 17];
	size_t n = 0, k;
	int64_t prev = 0;
	int r;

	if (root->in_reply_to[0])
		ids[n++] = xstrdup(root->in_reply_to);
	for (k = root->nrefs; k-- > 0 && n < CAP_MAIL_REFS;)
		ids[n++] = xstrdup(root->refs[k]);
	n += lore_ids(ids + n, 16, root->body);
	r = store_series_previous(s, &prev, id, (const char *const *)ids, n);
	for (k = 0; k < n; k++)
		free(ids[k]);
	if (r == 0)
		r = store_series_meta(s, id, ms->branch_tag, prev);
	if (r != 0)
		return err_set(e, "%s", store_errmsg(s));
	return 0;
}

/*
 * gitm_apply_series, and where libgit2 cannot apply a patch (exact
 * hunks only) `git am --3way` in a scratch worktree (git/am.c)
 * for that patch, then libgit2 again for the rest.  used3[i] is set for
 * the patches git am made.  On ERR_CONFLICT *why3 (malloc'd) says why
 * git am failed too, when it was tried.
 */
static int
apply_with_fallback(char (*shas)[GITM_SHA_SIZE], size_t *out_failed,
    unsigned char *used3, char **why3, struct gitm_repo *repo, const char *base,
    const struct gitm_patch *gp, size_t n, const char *ref)
{
	size_t done = 0, failed;
	int rc;

	*why3 = NULL;
	for (;;) {
		const char *parent = done == 0 ? base : shas[done - 1];
		struct err e = { 0 };

		rc = gitm_apply_series(shas + done, &failed, repo, parent,
		    gp + done, n - done, ref);
		*out_failed = done + failed;
		if (rc != ERR_CONFLICT)
			return rc;
		done += failed;
		parent = done == 0 ? base : shas[done - 1];
		rc = gitam_apply(
		    shas[done], gitm_path(repo), parent, &gp[done], &e);
		if (rc != 0) {
			*why3 = xstrdup(err_msg(&e));
			return ERR_CONFLICT;
		}
		log_info("patch %zu/%zu needed git am --3way: %.12s", done + 1,
		    n, shas[done]);
		gitm_clearerr(repo);
		used3[done++] = 1;
	}
}

/* Says on the series and its patch rows which patches git am made. */
static int
record_how(struct store *s, int64_t id, int total, const unsigned char *used3,
    struct err *e)
{
	struct buf b = BUF_INIT(CAP_ERRMSG);
	int k, r = 0;

	for (k = 0; k < total && r == 0; k++) {
		if (used3[k])
			buf_printf(&b, "%s%d/%d", b.len ? ", " : "patch ",
			    k + 1, total);
		r = store_series_patch_how(
		    s, id, k + 1, used3[k] ? "git am --3way" : "libgit2");
	}
	if (r == 0 && b.len > 0)
		buf_puts(&b,
		    ": applied with git am --3way (libgit2 takes "
		    "exact hunks only)");
	if (r == 0)
		r = store_series_fallback(s, id, b.len ? b.data : NULL);
	buf_release(&b);
	return r != 0 ? err_set(e, "%s", store_errmsg(s)) : 0;
}

/*
 * Records series ms (or finds it: same root Message-ID) with its tag and
 * the version it supersedes: 0 and *out_id, *out_applied (it was applied
 * before), or -1.
 */
static int
record_series(int64_t *out_id, int *out_applied, struct store *s,
    const struct series_ingest *in, int64_t tree_id,
    const struct mail_msg *msgs, const struct mail_series *ms, struct err *e)
{
	struct store_series_new sn;
	char *author = person(&msgs[ms->root]);
	struct store_series_row cur;
	int fresh = 0, rc;

	*out_applied = 0;
	memset(&sn, 0, sizeof(sn));
	sn.inbox = in->inbox ? in->inbox : "upload";
	sn.message_id = ms->message_id;
	sn.title = ms->title;
	sn.author = author;
	sn.version = ms->version;
	sn.total = ms->total;
	sn.found = ms->found;
	sn.date = ms->date;
	sn.tree_id = tree_id;
	sn.branch = in->branch;
	rc = store_series_create(s, out_id, &fresh, &sn, in->now);
	free(author);
	if (rc != 0)
		return err_set(e, "%s", store_errmsg(s));
	if (record_meta(s, *out_id, msgs, ms, e) != 0)
		return -1;
	if (fresh)
		return 0;
	if (store_series_get(s, &cur, *out_id) != 0)
		return err_set(e, "%s", store_errmsg(s));
	*out_applied = cur.state != NULL && strcmp(cur.state, "applied") == 0;
	store_series_release(&cur);
	return 0;
}

/*
 * Why the inbox's limits refuse series id from msgs[ms->root]'s sender
 * (malloc'd), or NULL; -1 in *rc when the store failed.
 */
static char *
over_limit(struct store *s, const struct series_ingest *in, int64_t id,
    const struct mail_msg *msgs, const struct mail_series *ms, int *rc)
{
	const char *from = msgs[ms->root].from_email;
	int64_t n = 0;

	*rc = 0;
	if (in->inbox == NULL)
		return NULL;
	if (in->per_sender_day > 0) {
		if (store_series_from_sender(
		        s, &n, in->inbox, from, in->now - 86400, id) != 0) {
			*rc = -1;
			return NULL;
		}
		if (n >= in->per_sender_day)
			return xasprintf("refused: %.200s sent %" PRId64
			                 " series to inbox %s in the last day "
			                 "(inboxes[].series_per_sender_day: "
			                 "%" PRId64 ")",
			    from, n, in->inbox, in->per_sender_day);
	}
	if (in->max_queued > 0) {
		if (store_series_inbox_queued(s, &n, in->inbox) != 0) {
			*rc = -1;
			return NULL;
		}
		if (n >= in->max_queued)
			return xasprintf("refused: %" PRId64 " jobs of inbox "
			                 "%s's series are queued "
			                 "(inboxes[].max_queued_jobs: %" PRId64
			                 ")",
			    n, in->inbox, in->max_queued);
	}
	return NULL;
}

/* One series: record, apply, record the commits, trigger. */
static int
ingest_one(struct series_result *res, struct store *s, struct gitm_repo *repo,
    const struct series_ingest *in, int64_t tree_id,
    const struct mail_msg *msgs, const struct mail_series *ms, struct err *e)
{
	struct gitm_patch *gp = NULL;
	char(*shas)[GITM_SHA_SIZE] = NULL;
	char base[GITM_SHA_SIZE] = "", ref[64];
	struct buf missing = BUF_INIT(CAP_ERRMSG);
	size_t failed = 0;
	int64_t id = 0;
	unsigned char *used3 = NULL;
	char *why3 = NULL, *over;
	int applied, k, rc, r = -1;

	if (record_series(&id, &applied, s, in, tree_id, msgs, ms, e) != 0)
		return -1;
	add_id(res, id);
	if (applied) {
		res->known++;
		return 0;
	}
	/* Limits before work: nothing applied, nothing queued. */
	if ((over = over_limit(s, in, id, msgs, ms, &rc)) != NULL || rc != 0) {
		if (over == NULL)
			return err_set(e, "%s", store_errmsg(s));
		log_warnx(
		    "series %" PRId64 " (%.100s): %s", id, ms->title, over);
		res->refused++;
		r = record_rows(s, id, msgs, ms, e);
		if (r == 0)
			r = set_state(s, id, "refused", over, NULL, in->now, e);
		free(over);
		return r;
	}
	if (!ms->complete) {
		for (k = 0; k < ms->total; k++)
			if (ms->patches[k] < 0)
				buf_printf(&missing, "%s%d",
				    missing.len ? ", " : "", k + 1);
		res->incomplete++;
		r = record_rows(s, id, msgs, ms, e);
		if (r == 0) {
			char *msg = xasprintf("%d of %d patches found; missing "
			                      "%s",
			    ms->found, ms->total, missing.data);

			r = set_state(
			    s, id, "incomplete", msg, NULL, in->now, e);
			free(msg);
		}
		buf_release(&missing);
		return r;
	}
	/* The base: the trailer's commit when the mirror has it. */
	if (ms->base_commit[0] &&
	    gitm_resolve(base, repo, ms->base_commit) != 0) {
		log_info("series %" PRId64 ": base-commit %.12s is not in the "
		         "mirror of %s; using %s",
		    id, ms->base_commit, in->tree->name, in->branch);
		base[0] = '\0';
		gitm_clearerr(repo);
	}
	if (base[0] == '\0' && (rc = gitm_tip(base, repo, in->branch)) != 0) {
		char *msg = xasprintf("no base: %s", gitm_errmsg(repo));

		gitm_clearerr(repo);
		res->failed++;
		r = record_rows(s, id, msgs, ms, e);
		if (r == 0)
			r = set_state(s, id, "failed", msg, NULL, in->now, e);
		free(msg);
		return r;
	}
	if (set_state(s, id, "applying", NULL, base, in->now, e) != 0)
		return -1;
	gp = xcalloc((size_t)ms->total, sizeof(*gp));
	shas = xcalloc((size_t)ms->total, sizeof(*shas));
	for (k = 0; k < ms->total; k++) {
		const struct mail_msg *m = &msgs[ms->patches[k]];

		gp[k].diff = m->patch;
		gp[k].len = m->patch_len;
		gp[k].author_name = m->from_name;
		gp[k].author_email = m->from_email;
		gp[k].author_time = m->date;
		gp[k].author_tz = m->tz;
		gp[k].message = commit_message(m);
	}
	snprintf(ref, sizeof(ref), "refs/perfwatch/series/%" PRId64, id);
	used3 = xcalloc((size_t)ms->total, 1);
	rc = apply_with_fallback(shas, &failed, used3, &why3, repo, base, gp,
	    (size_t)ms->total, ref);
	if (rc == ERR_CONFLICT || rc == ERR_INVALID) {
		const struct mail_msg *m = &msgs[ms->patches[failed]];
		char *msg = xasprintf("patch %zu/%d \"%.200s\": %s%s%s",
		    failed + 1, ms->total, m->tag.title, gitm_errmsg(repo),
		    why3 ? "; " : "", why3 ? why3 : "");

		gitm_clearerr(repo);
		log_warnx(
		    "series %" PRId64 " (%.100s): %s", id, ms->title, msg);
		res->failed++;
		r = record_rows(s, id, msgs, ms, e);
		if (r == 0)
			r = set_state(s, id, "failed", msg, base, in->now, e);
		free(msg);
	} else if (rc != 0) {
		err_set(e, "series %" PRId64 ": %s", id, gitm_errmsg(repo));
		gitm_clearerr(repo);
	} else {
		r = record_applied(res, s, repo, in, tree_id, id, msgs, ms,
		    shas, base, ref, e);
		if (r == 0)
			r = record_how(s, id, ms->total, used3, e);
		if (r == 0) {
			res->applied++;
			log_info("series %" PRId64 " (%.100s): %d patches "
			         "applied on %.12s, tip %.12s",
			    id, ms->title, ms->total, base,
			    shas[ms->total - 1]);
		}
	}
	for (k = 0; k < ms->total; k++)
		free((char *)gp[k].message);
	free(gp);
	free(shas);
	free(used3);
	free(why3);
	return r;
}

/* Says why each patch mail of msgs that is in none of ser joined none
 * (the upload's answer counts them: this names them). */
static void
log_orphans(const struct series_ingest *in, const struct mail_msg *msgs,
    size_t n, const struct mail_series *ser, size_t ns)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char why[512];

		mail_orphan_why(why, sizeof(why), msgs, n, ser, ns, i);
		if (why[0])
			log_info("%s: patch mail <%.200s> \"%.100s\" is in no "
			         "series: %s",
			    in->inbox ? in->inbox : "series upload",
			    msgs[i].message_id, msgs[i].subject, why);
	}
}

/* Ingests the series ser[0..ns) of msgs. */
static int
ingest_groups(struct series_result *out, struct store *s,
    const struct series_ingest *in, const struct mail_msg *msgs,
    const struct mail_series *ser, size_t ns, struct err *e)
{
	struct gitm_repo *repo;
	int64_t tree_id = 0;
	size_t i;
	int r = 0;

	if (ns == 0)
		return 0;
	if (store_tree_sync(s, &tree_id, in->tree->name, in->tree->url) != 0)
		return err_set(e, "%s", store_errmsg(s));
	repo = gitm_repo_new(
	    in->conf->dc->mirrors, in->tree->name, in->tree->url, NULL);
	for (i = 0; i < ns && r == 0; i++)
		r = ingest_one(out, s, repo, in, tree_id, msgs, &ser[i], e);
	gitm_repo_free(repo);
	return r;
}

int
series_ingest_msgs(struct series_result *out, struct store *s,
    const struct series_ingest *in, const struct mail_msg *msgs, size_t n,
    struct err *e)
{
	struct mail_series *ser = NULL;
	size_t ns = 0, i;
	int r;

	memset(out, 0, sizeof(*out));
	out->messages = n;
	for (i = 0; i < n; i++)
		out->patches += (size_t)mail_is_patch(&msgs[i]);
	mail_group(&ser, &ns, &out->orphans, msgs, n);
	log_orphans(in, msgs, n, ser, ns);
	r = ingest_groups(out, s, in, msgs, ser, ns, e);
	mail_series_free(ser, ns);
	return r;
}

int
series_ingest_one(struct series_result *out, struct store *s,
    const struct series_ingest *in, const struct mail_msg *msgs,
    const struct mail_series *ms, struct err *e)
{
	int k;

	memset(out, 0, sizeof(*out));
	out->messages = (size_t)ms->found + (ms->cover >= 0);
	for (k = 0; k < ms->total; k++)
		out->patches += (size_t)(ms->patches[k] >= 0);
	return ingest_groups(out, s, in, msgs, ms, 1, e);
}

int
series_ingest_mbox(struct series_result *out, struct store *s,
    const struct series_ingest *in, const char *data, size_t len, struct err *e)
{
	struct mail_msg *msgs = NULL;
	size_t n = 0;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = mail_mbox_parse(&msgs, &n, data, len, e)) != 0)
		return r;
	r = series_ingest_msgs(out, s, in, msgs, n, e);
	mail_msgs_free(msgs, n);
	return r;
}

int
series_enqueue_mbox(struct series_result *out, struct store *s,
    const struct series_ingest *in, const char *data, size_t len, struct err *e)
{
	struct mail_msg *msgs = NULL;
	struct mail_series *ser = NULL;
	size_t n = 0, ns = 0, i;
	int64_t tree_id = 0, qid = 0;
	int r, applied;

	memset(out, 0, sizeof(*out));
	if ((r = mail_mbox_parse(&msgs, &n, data, len, e)) != 0)
		return r;
	out->messages = n;
	for (i = 0; i < n; i++)
		out->patches += (size_t)mail_is_patch(&msgs[i]);
	mail_group(&ser, &ns, &out->orphans, msgs, n);
	log_orphans(in, msgs, n, ser, ns);
	if (ns == 0)
		goto out;
	if (store_tree_sync(s, &tree_id, in->tree->name, in->tree->url) != 0) {
		r = err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	out->states = xcalloc(ns, sizeof(*out->states));
	for (i = 0; i < ns && r == 0; i++) {
		int64_t id;

		r = record_series(
		    &id, &applied, s, in, tree_id, msgs, &ser[i], e);
		if (r != 0)
			break;
		add_id(out, id);
		out->states[i] = applied ? "applied" : "waiting";
		if (applied)
			out->known++;
		else if (store_series_mark(s, &id, 1, "waiting", in->now) != 0)
			r = err_set(e, "%s", store_errmsg(s));
	}
	if (r == 0 && out->known < out->n &&
	    store_series_enqueue(
	        s, &qid, in->tree->name, in->branch, data, len, in->now) != 0)
		r = err_set(e, "%s", store_errmsg(s));
	out->queue_id = qid;
out:
	mail_series_free(ser, ns);
	mail_msgs_free(msgs, n);
	return r;
}

int
series_apply_queued(struct series_result *out, struct store *s,
    const struct dconf *conf, int64_t now, struct err *e)
{
	struct store_series_job j;
	struct series_ingest in;
	const struct cfg_tree *tree = NULL;
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = store_series_dequeue(s, &j)) == ERR_NOTFOUND)
		return ERR_NOTFOUND;
	if (r != 0)
		return err_set(e, "%s", store_errmsg(s));
	for (i = 0; i < conf->dc->ntrees; i++)
		if (strcmp(conf->dc->trees[i].name, j.tree) == 0)
			tree = &conf->dc->trees[i];
	if (tree == NULL) {
		/* Removed by a reload since the upload: nothing to apply on. */
		log_warnx("series upload %" PRId64 ": tree %.64s is no longer "
		          "configured; dropped",
		    j.id, j.tree);
		r = 0;
	} else {
		memset(&in, 0, sizeof(in));
		in.conf = conf;
		in.tree = tree;
		in.branch = j.branch;
		in.now = now;
		r = series_ingest_mbox(out, s, &in, j.mbox, j.len, e);
	}
	/* A store failure keeps the upload for the next try; a bad mbox
	 * (refused at POST already) would never apply. */
	if ((r == 0 || r == ERR_INVALID || r == ERR_TOOBIG) &&
	    store_series_queue_done(s, j.id) != 0 && r == 0)
		r = err_set(e, "%s", store_errmsg(s));
	out->queue_id = j.id;
	store_series_job_release(&j);
	return r;
}
