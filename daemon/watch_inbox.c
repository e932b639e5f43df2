/*
 * The inbox watcher (see watch.h): a public-inbox archive read on each
 * poll, patch mail kept until its series is complete, series applied
 * and triggered, and #perfwatch replies handed to the mail commands.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/mailcmd.h"
#include "daemon/sched.h"
#include "daemon/series.h"
#include "daemon/series_route.h"
#include "daemon/watch_int.h"
#include "store/mail_skipped.h"
#include "store/series.h"
#include "store/series_mail.h"
#include "store/store.h"

#define WATCH_INBOX_READ 20000   /* archive messages read per poll */
#define WATCH_INBOX_PENDING 5000 /* patch mails kept for their series */

/* ---- inboxes ---- */

struct inbox_read {
	struct tw *t;
	size_t bad, kept;
	/* New mail (not reloaded): commands by reply are acted on. */
	const struct dconf *conf;
	const struct cfg_inbox *in;
	size_t commands, pairs;
	/* Reloading: the Message-IDs of the series taken (sorted). */
	char **taken;
	size_t ntaken;
};

/* Says on the series page why t's message (id, subject) joined no
 * series (store/mail_skipped.h); a store error is only logged. */
static void
skipped(struct tw *t, const char *id, const char *subject, const char *why)
{
	if (store_mail_skipped_put(
	        t->s, t->name, id, subject, why, watch_i_now_s()) != 0) {
		log_warnx("inbox %s: %s", t->name, store_errmsg(t->s));
		store_errclear(t->s);
	}
}

/* Forgets pending message i's stored copy. */
static void
pending_forget(struct tw *t, size_t i)
{
	if (store_mail_pending_drop(t->s, t->name, t->pending_sha[i]) != 0) {
		log_warnx("inbox %s: %s", t->name, store_errmsg(t->s));
		store_errclear(t->s);
	}
	free(t->pending_sha[i]);
}

/* Forgets pending message i (and its stored copy). */
static void
pending_drop(struct tw *t, size_t i)
{
	pending_forget(t, i);
	mail_msg_release(&t->pending[i]);
}

/* Appends m (archive commit sha, taken) to the done list, whose oldest
 * goes, with its stored copy, when it is full. */
static void
done_add(struct tw *t, struct mail_msg m, char *sha)
{
	if (t->ndone == WATCH_INBOX_DONE) {
		if (store_mail_pending_drop(t->s, t->name, t->done_sha[0]) !=
		    0) {
			log_warnx("inbox %s: %s", t->name, store_errmsg(t->s));
			store_errclear(t->s);
		}
		free(t->done_sha[0]);
		mail_msg_release(&t->done[0]);
		memmove(
		    t->done, t->done + 1, (t->ndone - 1) * sizeof(*t->done));
		memmove(t->done_sha, t->done_sha + 1,
		    (t->ndone - 1) * sizeof(*t->done_sha));
		t->ndone--;
	}
	t->done = xreallocarray(t->done, t->ndone + 1, sizeof(*t->done));
	t->done_sha =
	    xreallocarray(t->done_sha, t->ndone + 1, sizeof(*t->done_sha));
	t->done[t->ndone] = m;
	t->done_sha[t->ndone++] = sha;
}

/* Moves pending message i to the done list; its stored copy stays. */
static void
pending_retire(struct tw *t, size_t i)
{
	done_add(t, t->pending[i], t->pending_sha[i]);
}

static int
cmp_id(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * One archive message: patch mail is kept for its series, in memory and
 * (unless it came from there: from_store) in the store.
 */
static int
keep_message(struct inbox_read *rd, const char *sha, const char *data,
    size_t len, int from_store)
{
	struct tw *t = rd->t;
	struct mail_msg m;
	struct err e = { 0 };
	size_t i;

	for (i = 0; i < t->npending; i++)
		if (strcmp(t->pending_sha[i], sha) == 0)
			return 0; /* read again after a crash */
	for (i = 0; i < t->ndone; i++)
		if (strcmp(t->done_sha[i], sha) == 0)
			return 0;
	if (mail_parse(&m, data, len, 0, &e) != 0) {
		log_warnx(
		    "inbox %s: message %.12s: %s", t->name, sha, err_msg(&e));
		rd->bad++;
		return 0;
	}
	if (!from_store && rd->conf != NULL && !mail_is_patch(&m)) {
		struct mailcmd_result cr;

		if (mailcmd_handle(&cr, t->s, rd->conf, rd->in, &m,
		        watch_i_now_s(), &e) != 0) {
			log_warnx("inbox %s: message %.12s: %s", t->name, sha,
			    err_msg(&e));
			store_errclear(t->s);
		}
		rd->commands += (size_t)cr.handled;
		rd->pairs += cr.pairs;
	}
	if (!from_store && !m.tag.patch && !m.tag.reply && m.patch_off >= 0) {
		/* git am would apply it; perfwatch takes tagged patches. */
		log_info("inbox %s: mail <%.200s> \"%.100s\" has a diff but "
		         "no [PATCH] tag: not taken",
		    t->name, m.message_id, m.subject);
		skipped(t, m.message_id, m.subject,
		    "it has a diff but its subject has no [PATCH] tag, which "
		    "perfwatch needs to take a mail as a posted patch");
	}
	if (!m.tag.patch || m.tag.reply) {
		mail_msg_release(&m);
		return 0;
	}
	if (from_store && rd->ntaken > 0) {
		const char *id = m.message_id;

		if (bsearch(&id, rd->taken, rd->ntaken, sizeof(*rd->taken),
		        cmp_id) != NULL) {
			done_add(t, m, xstrdup(sha)); /* its series was taken */
			return 0;
		}
	}
	if (!from_store &&
	    store_mail_pending_put(
	        t->s, t->name, sha, data, len, watch_i_now_s()) != 0) {
		log_warnx("inbox %s: message %.12s kept in memory only: %s",
		    t->name, sha, store_errmsg(t->s));
		store_errclear(t->s);
	}
	if (t->npending == WATCH_INBOX_PENDING) {
		log_warnx("inbox %s: patch mail <%.200s> \"%.100s\" dropped: "
		          "%d mails waited for their series, it the longest",
		    t->name, t->pending[0].message_id, t->pending[0].subject,
		    WATCH_INBOX_PENDING);
		pending_drop(t, 0);
		memmove(t->pending, t->pending + 1,
		    (t->npending - 1) * sizeof(*t->pending));
		memmove(t->pending_sha, t->pending_sha + 1,
		    (t->npending - 1) * sizeof(*t->pending_sha));
		t->npending--;
	}
	t->pending =
	    xreallocarray(t->pending, t->npending + 1, sizeof(*t->pending));
	t->pending_sha = xreallocarray(
	    t->pending_sha, t->npending + 1, sizeof(*t->pending_sha));
	t->pending_sha[t->npending] = xstrdup(sha);
	t->pending[t->npending++] = m;
	rd->kept++;
	return 0;
}

static int
on_message(const char *sha, const char *data, size_t len, void *arg)
{
	return keep_message(arg, sha, data, len, 0);
}

static int
on_stored_message(const char *sha, const char *data, size_t len, void *arg)
{
	return keep_message(arg, sha, data, len, 1);
}

/*
 * Groups the pending mail, after the mail of series taken before (a
 * partial reroll answering one of their patches takes the others from
 * there); each complete series whose root is pending is ingested (when
 * its subjects match) and its mail moves to the done list.  0 or -1.
 */
static int
inbox_series(struct tw *t, const struct dconf *conf, const struct cfg_inbox *in,
    size_t fresh, size_t *out_series, size_t *out_pairs)
{
	struct mail_series *ser = NULL;
	unsigned char *used;
	/* The mail taken before, then the pending: a view, the lists keep
	 * ownership.  Indexes under nd are done mail. */
	size_t nd = t->ndone, ns = 0, i, k;
	struct mail_msg *all = xcalloc(nd + t->npending + 1, sizeof(*all));
	int r = 0;

	*out_series = *out_pairs = 0;
	if (nd > 0)
		memcpy(all, t->done, nd * sizeof(*all));
	if (t->npending > 0)
		memcpy(all + nd, t->pending, t->npending * sizeof(*all));
	mail_group(&ser, &ns, NULL, all, nd + t->npending);
	used = xcalloc(nd + t->npending + 1, 1);
	for (i = 0; i < ns && r == 0; i++) {
		const struct mail_series *ms = &ser[i];
		struct series_ingest si;
		struct series_result res;
		struct series_route rt;
		struct err e = { 0 };
		int j;

		/* A series whose root was taken before was ingested then. */
		if (!ms->complete || ms->root < nd)
			continue;
		used[ms->root] = 1;
		for (j = 0; j < ms->total; j++)
			used[ms->patches[j]] = 1;
		series_route(&rt, conf->dc, in, all, ms);
		if (!series_wanted(in, all, ms) || rt.tree == NULL ||
		    rt.branch == NULL)
			continue;
		memset(&si, 0, sizeof(si));
		si.conf = conf;
		si.tree = rt.tree;
		si.branch = rt.branch;
		si.inbox = in->name;
		si.now = watch_i_now_s();
		si.per_sender_day = in->series_per_sender_day;
		si.max_queued = in->max_queued_jobs;
		r = series_ingest_one(&res, t->s, &si, all, ms, &e);
		if (r != 0) {
			log_warnx("inbox %s: series %.100s: %s", in->name,
			    ms->title, err_msg(&e));
			store_errclear(t->s);
		} else {
			log_info("inbox %s: series \"%.100s\" v%d (%d "
			         "patches) on %s/%s%s%s: %zu applied, %zu "
			         "failed, %zu refused, %zu known, %zu pair(s)",
			    in->name, ms->title, ms->version, ms->total,
			    rt.tree->name, rt.branch, rt.tag ? ", tag " : "",
			    rt.tag ? rt.tag : "", res.applied, res.failed,
			    res.refused, res.known, res.pairs);
			(*out_series)++;
			*out_pairs += res.pairs;
			/* What waited and now joined: no longer skipped. */
			for (j = -1; j < ms->total; j++) {
				long at = j < 0 ? ms->cover : ms->patches[j];

				if (at >= (long)nd &&
				    store_mail_skipped_drop(t->s, in->name,
				        all[at].message_id) != 0) {
					log_warnx("inbox %s: %s", in->name,
					    store_errmsg(t->s));
					store_errclear(t->s);
				}
			}
		}
		series_result_release(&res);
	}
	/* Patch mail read this poll (from index fresh on) that joined no
	 * series is said once, with why: it waits, and may join one when
	 * the mail it answers arrives. */
	for (i = fresh; i < t->npending; i++) {
		char why[512];

		if (used[nd + i])
			continue;
		mail_orphan_why(
		    why, sizeof(why), all, nd + t->npending, ser, ns, nd + i);
		if (why[0]) {
			log_info("inbox %s: patch mail <%.200s> \"%.100s\" is "
			         "in no series yet: %s",
			    in->name, t->pending[i].message_id,
			    t->pending[i].subject, why);
			skipped(t, t->pending[i].message_id,
			    t->pending[i].subject, why);
		}
	}
	/* What was used goes to the done list; the rest stays, in order. */
	free(all);
	for (i = k = 0; i < t->npending; i++) {
		if (used[nd + i]) {
			pending_retire(t, i);
		} else {
			t->pending_sha[k] = t->pending_sha[i];
			t->pending[k++] = t->pending[i];
		}
	}
	t->npending = k;
	free(used);
	mail_series_free(ser, ns);
	return r;
}

/* One inbox cycle: fetch, read new messages, ingest complete series. */
int64_t
watch_i_poll_inbox(
    struct tw *t, const struct dconf *conf, const struct cfg_inbox *in)
{
	char last[GITM_SHA_SIZE], seen[GITM_SHA_SIZE];
	struct inbox_read rd = { t, 0, 0, NULL, NULL, 0, 0 };
	size_t n = 0, nseries = 0, npairs = 0;
	int64_t delay, now;
	int r, first;

	r = gitm_fetch(NULL, t->repo);
	now = watch_i_now_s();
	if (atomic_load(&t->quit))
		return 0;
	if (r != 0) {
		t->failures++;
		delay = watch_i_next_delay(in->poll_s, t->failures);
		log_warnx("inbox %s: fetch failed (%" PRId64 " in a row, next "
		          "try in %" PRId64 " s): %s",
		    in->name, t->failures, delay, gitm_errmsg(t->repo));
		store_inbox_put(t->s, in->name, in->url, NULL,
		    gitm_errmsg(t->repo), 0, now);
		gitm_clearerr(t->repo);
		return delay;
	}
	t->failures = 0;
	if (store_inbox_get(t->s, seen, sizeof(seen), in->name) != 0) {
		log_warnx("inbox %s: %s", in->name, store_errmsg(t->s));
		store_errclear(t->s);
		return in->poll_s;
	}
	/* Patch mail a previous run of the daemon kept for its series. */
	if (!t->pending_loaded) {
		/* The done list's mail is of its newest series at most;
		 * other inboxes' series are among the newest too. */
		if (store_series_mail_id_list(t->s, &rd.taken, &rd.ntaken,
		        in->name, 4 * WATCH_INBOX_DONE) != 0 ||
		    store_mail_pending_each(
		        t->s, in->name, on_stored_message, &rd) != 0) {
			log_warnx("inbox %s: %s", in->name, store_errmsg(t->s));
			store_errclear(t->s);
		}
		store_series_mail_ids_release(rd.taken, rd.ntaken);
		rd.taken = NULL;
		rd.ntaken = 0;
		t->pending_loaded = 1;
		if (rd.kept > 0)
			log_info("inbox %s: %zu patch mail(s) waiting for "
			         "their series since before the restart",
			    in->name, rd.kept);
	}
	/* First sight: the archive's history triggers nothing. */
	first = seen[0] == '\0';
	rd.conf = conf;
	rd.in = in;
	r = gitm_inbox_read(last, &n, t->repo, first ? NULL : seen,
	    first ? SIZE_MAX : WATCH_INBOX_READ, first ? NULL : on_message,
	    &rd);
	if (r == 0 && first) {
		log_info("inbox %s: %zu message(s) in the archive; watching "
		         "from %.12s",
		    in->name, n, last);
		n = 0;
	}
	if (r != 0) {
		log_warnx("inbox %s: %s", in->name, gitm_errmsg(t->repo));
		store_inbox_put(t->s, in->name, in->url, NULL,
		    gitm_errmsg(t->repo), 0, now);
		gitm_clearerr(t->repo);
		return in->poll_s;
	}
	if (rd.kept > 0)
		inbox_series(t, conf, in,
		    t->npending > rd.kept ? t->npending - rd.kept : 0, &nseries,
		    &npairs);
	if (n > 0)
		log_info("inbox %s: %zu new message(s), %zu patch mail, %zu "
		         "series ingested, %zu pair(s), %zu waiting",
		    in->name, n, rd.kept, nseries, npairs, t->npending);
	if (rd.commands > 0)
		log_info("inbox %s: %zu command mail(s), %zu pair(s) queued "
		         "again",
		    in->name, rd.commands, rd.pairs);
	if ((npairs > 0 || rd.pairs > 0) && t->w->sched != NULL)
		sched_notify(t->w->sched);
	if (store_inbox_put(t->s, in->name, in->url, last[0] ? last : NULL,
	        NULL, (int64_t)n, now) != 0) {
		log_warnx("inbox %s: %s", in->name, store_errmsg(t->s));
		store_errclear(t->s);
	}
	return in->poll_s;
}
