#ifndef STORE_ALERTS_H
#define STORE_ALERTS_H

/*
 * The store's alert tables (all their SQL is in store/alerts.c), read and
 * written through C structs; JSON is made at the HTTP edge.
 *
 *  - alert_reports: one row per (commit, job, host) that was reported or
 *    looked at: the signature of its changed metrics (sorted
 *    "point|metric|verdict" lines), the Message-ID of its first mail (the
 *    thread follow-ups reply in) and how many reports were sent.
 *  - alert_pairs: which final verdict (comparisons.updated) of each pair
 *    the alert worker has looked at, so a re-analysed pair is seen again.
 *  - alerts (v1 table, extended): one delivery: an e-mail (payload is the
 *    whole RFC 5322 message, target the envelope recipients separated by
 *    ", ") or a webhook POST (payload the JSON body, target the URL);
 *    state pending, sent or failed, attempts, next_try, last_error.
 *  - alert_sends: one row per recipient and mail sent (rate limit).
 *  - alert_due (v23): the pairs the worker has still to look at, put
 *    there by triggers when a final verdict is written, a pair is
 *    analysed or its bisection ends, and taken out once a look finds
 *    nothing newer than alert_pairs says: an idle pass reads this, not
 *    every pair and comparison (at 1M runs, 180 ms of a core per pass).
 *
 * Every function returns 0 or -1 (store_errmsg()) unless it says more.
 * Strings in the structs are malloc'd and freed by the matching _free.
 */
#include <stddef.h>
#include <stdint.h>

struct store;

#define STORE_ALERT_MIGRATION                                                  \
	"CREATE TABLE alert_reports ("                                         \
	"  id INTEGER PRIMARY KEY,"                                            \
	"  key TEXT NOT NULL UNIQUE,"                                          \
	"  commit_id INTEGER REFERENCES commits(id),"                          \
	"  series_id INTEGER REFERENCES series(id),"                           \
	"  job TEXT NOT NULL,"                                                 \
	"  host_id INTEGER REFERENCES hosts(id),"                              \
	"  signature TEXT NOT NULL DEFAULT '',"                                \
	"  message_id TEXT,"                                                   \
	"  subject TEXT,"                                                      \
	"  summary TEXT,"                                                      \
	"  sent_reports INTEGER NOT NULL DEFAULT 0,"                           \
	"  created INTEGER NOT NULL,"                                          \
	"  updated INTEGER NOT NULL);"                                         \
	"CREATE INDEX alert_reports_commit ON alert_reports(commit_id);"       \
	"CREATE TABLE alert_pairs ("                                           \
	"  pair_id INTEGER PRIMARY KEY REFERENCES pairs(id) ON DELETE "        \
	"CASCADE,"                                                             \
	"  report_id INTEGER REFERENCES alert_reports(id),"                    \
	"  stamp INTEGER NOT NULL);"                                           \
	"ALTER TABLE alerts ADD COLUMN report_id INTEGER"                      \
	"  REFERENCES alert_reports(id);"                                      \
	"ALTER TABLE alerts ADD COLUMN target TEXT NOT NULL DEFAULT '';"       \
	"ALTER TABLE alerts ADD COLUMN state TEXT NOT NULL DEFAULT 'pending'"  \
	"  CHECK (state IN ('pending', 'sent', 'failed'));"                    \
	"ALTER TABLE alerts ADD COLUMN followup INTEGER NOT NULL DEFAULT 0;"   \
	"ALTER TABLE alerts ADD COLUMN subject TEXT;"                          \
	"CREATE INDEX alerts_report ON alerts(report_id);"                     \
	"CREATE INDEX alerts_due ON alerts(next_try) WHERE state = 'pending';" \
	"CREATE TABLE alert_sends ("                                           \
	"  recipient TEXT NOT NULL,"                                           \
	"  at INTEGER NOT NULL);"                                              \
	"CREATE INDEX alert_sends_rcpt ON alert_sends(recipient, at);"

/*
 * What a pair's report last saw: its newest final verdict, or the end of
 * a bisection of its regressions after it (a follow-up says what the
 * bisection found).  Over the pair p and its final comparisons c.
 */
#define ALERT_PAIR_STAMP_OF(pair)                              \
	"max(max(c.updated), coalesce((SELECT max(bi.updated)" \
	" FROM bisections bi WHERE bi.pair_id = " pair         \
	" AND bi.state IN ('done', 'inconclusive')), 0))"
#define ALERT_PAIR_STAMP ALERT_PAIR_STAMP_OF("p.id")

/*
 * A trigger's "pair is due": not INSERT OR IGNORE, whose IGNORE an outer
 * upsert (store_verdict_put's ON CONFLICT DO UPDATE) overrides, so a
 * pair already due failed the verdict with a UNIQUE constraint.
 */
#define ALERT_DUE_PUT(id)                                                \
	"INSERT INTO alert_due (pair_id) SELECT " id " WHERE NOT EXISTS" \
	" (SELECT 1 FROM alert_due WHERE pair_id = " id ");"

/* v23: the due pairs, filled with those an old worker had still to see. */
/* clang-format off */
#define STORE_ALERT_DUE_MIGRATION					\
	"CREATE TABLE alert_due ("					\
	"  pair_id INTEGER PRIMARY KEY REFERENCES pairs(id)"		\
	"  ON DELETE CASCADE);"						\
	"INSERT INTO alert_due (pair_id) SELECT p.id FROM pairs p"	\
	"  JOIN comparisons c ON c.pair_id = p.id AND c.final = 1"	\
	"  LEFT JOIN alert_pairs ap ON ap.pair_id = p.id"		\
	"  WHERE p.analysed = 1 AND p.bisect_id IS NULL GROUP BY p.id"	\
	"  HAVING ap.stamp IS NULL OR ap.stamp < " ALERT_PAIR_STAMP ";"	\
	"CREATE TRIGGER alert_due_cmp_ins AFTER INSERT ON comparisons"	\
	"  WHEN NEW.final = 1 BEGIN "					\
	ALERT_DUE_PUT("NEW.pair_id") " END;"				\
	"CREATE TRIGGER alert_due_cmp_upd AFTER UPDATE OF final, updated" \
	"  ON comparisons WHEN NEW.final = 1 BEGIN "			\
	ALERT_DUE_PUT("NEW.pair_id") " END;"				\
	"CREATE TRIGGER alert_due_pair AFTER UPDATE OF analysed, bisect_id" \
	"  ON pairs WHEN NEW.analysed = 1 BEGIN "			\
	ALERT_DUE_PUT("NEW.id") " END;"					\
	"CREATE TRIGGER alert_due_bisect_ins AFTER INSERT ON bisections" \
	"  WHEN NEW.pair_id IS NOT NULL"				\
	"  AND NEW.state IN ('done', 'inconclusive') BEGIN "		\
	ALERT_DUE_PUT("NEW.pair_id") " END;"				\
	"CREATE TRIGGER alert_due_bisect_upd AFTER UPDATE OF state, updated" \
	"  ON bisections WHEN NEW.pair_id IS NOT NULL"			\
	"  AND NEW.state IN ('done', 'inconclusive') BEGIN "		\
	ALERT_DUE_PUT("NEW.pair_id") " END;"
/* clang-format on */

/* A (commit, job, host) whose verdicts the worker has not looked at. */
struct store_alert_group {
	int64_t commit_id, host_id;
	char *job;
	int64_t stamp; /* newest ALERT_PAIR_STAMP of its analysed pairs */
};
void store_alert_groups_release(struct store_alert_group *, size_t n);

/*
 * Up to max groups with a pair whose final verdict is newer than the one
 * looked at, and no pair of the same commit and job still queued or
 * running on that host (or on no host yet): the whole report is known.
 * Reads only the due pairs (alert_due), in pair order; a group still
 * busy does not take a place, so groups behind it are not starved.  A
 * pass stops reading when it has max groups: its cost is that of the
 * groups it takes (and the busy ones before them), not of the backlog.
 * Due pairs found up to date (or never to be reported: not analysed, a
 * bisection's own pair) leave the queue.
 */
int store_alert_groups(
    struct store *, struct store_alert_group **out, size_t *out_n, size_t max);

/* One final comparison of a report (info rows left out). */
struct store_alert_cmp {
	int64_t pair_id, base_job_id, cand_job_id;
	char *point, *metric, *unit, *better, *verdict, *note;
	double base_median, cand_median, change_pct, ci_low, ci_high;
	double base_mean, base_sd, cand_mean, cand_sd; /* NAN: unknown */
	int64_t n_base, n_cand;
	/*
	 * Branch `host` adds comparisons.suspect (host state differed
	 * between the sides); read it here and no regression alert is made
	 * of a suspect comparison (alert.c).  Always 0 on this branch.
	 */
	int suspect;
};

/* A change point of a history series this report's pairs appended to. */
struct store_alert_cp {
	char *point, *metric, *direction, *lo_sha, *hi_sha;
	double before, after, change_pct, p;
};

/* Everything a report is made of. */
struct store_alert_info {
	int64_t commit_id, host_id;
	char *job;
	/* branch: the pair's, else the branches the commit was recorded
	 * on (comma-separated; a submitted pair), else NULL. */
	char *sha, *subject, *author, *tree, *branch;
	char *base_sha; /* the base job's commit, or NULL */
	/* A mailing-list series (series_id 0 when none). */
	int64_t series_id, version, total;
	char *series_title, *series_author, *inbox, *series_msgid;
	char **patch_msgids; /* in patch order */
	size_t npatch_msgids;
	/* The series' base commit (NULL: unknown), and the patch whose
	 * commit this is (trigger.every_patch measures each patch against
	 * its parent): its seq (0: none), Message-ID and subject. */
	char *series_base;
	int64_t patch_seq;
	char *patch_msgid, *patch_subject;
	char *host, *inventory; /* inventory: JSON text from the runner */
	char *spec;             /* the candidate job's spec (JSON text) */
	/*
	 * The newest ended bisection of this report's regressions
	 * (daemon/bisect.c): bisect "<sha12> <subject>" of its culprit
	 * (NULL when it named none), its verification texts, its state
	 * ("done", "inconclusive"; NULL: no bisection ended), and the
	 * reason of one that named no culprit.
	 */
	char *bisect;
	char *bisect_state, *bisect_parent, *bisect_revert, *bisect_reason;
	/* NULL, or for a bisection started from a history change point
	 * "bisected from the change point at <sha12> on <branch> history" */
	char *bisect_origin;
	int64_t bisect_id;
	/* docs/HOST.md: why a pair of the report is suspect (the two sides
	 * ran under different host states; text from runners), or NULL. */
	char *suspect;
	struct store_alert_cmp *cmp;
	size_t ncmp;
	struct store_alert_cp *cp;
	size_t ncp;
	int64_t *pairs; /* the pairs looked at */
	size_t npairs;
};
void store_alert_info_release(struct store_alert_info *); /* NULL ok */

/* 0 and *out (store_alert_info_release()), or ERR_NOTFOUND. */
int store_alert_info_get(struct store *, struct store_alert_info **out,
    int64_t commit_id, const char *job, int64_t host_id);

/* The report row of a key. */
struct store_alert_report {
	int64_t id;
	char *signature, *message_id, *subject;
	int64_t sent_reports;
};
void store_alert_report_release(struct store_alert_report *);
/* 0 and *out, or ERR_NOTFOUND (*out zeroed). */
int store_alert_report_get(
    struct store *, struct store_alert_report *out, const char *key);

/* What one pass over a group decided: written in one transaction. */
struct store_alert_new {
	const char *kind; /* "email" | "webhook" */
	const char *key;  /* unique: the delivery id */
	const char *target, *subject, *payload;
	int followup;
};
struct store_alert_decision {
	const char *key; /* report key */
	int64_t commit_id, series_id, host_id;
	const char *job, *signature, *message_id, *subject, *summary;
	int sent_report; /* 1: this pass makes a report or follow-up */
	const int64_t *pairs;
	size_t npairs;
	int64_t stamp;
	const struct store_alert_new *alerts;
	size_t nalerts;
};
/* Upserts the report, marks every analysed pair of its group seen (up to
 * stamp), queues the alerts; deliveries that exist already (same key)
 * are kept as they are.  pairs/npairs: informational. */
int store_alert_decide(
    struct store *, const struct store_alert_decision *, int64_t now);

/* A delivery. */
struct store_alert {
	int64_t id, report_id, attempts, next_try, sent, created;
	char *kind, *key, *target, *state, *subject, *last_error, *payload;
	int followup;
	char *sha, *job, *host; /* of its report; may be NULL */
};
void store_alerts_release(struct store_alert *, size_t n);

/* Pending deliveries due at now, oldest first (payload filled). */
int store_alert_due(struct store *, struct store_alert **out, size_t *out_n,
    int64_t now, size_t max);
/*
 * Outcome of one attempt: state "sent" (sent = now; one alert_sends row
 * per recipient in rcpt), "pending" (next_try) or "failed"; attempts is
 * incremented; err may be NULL.
 */
int store_alert_attempt(struct store *, int64_t id, const char *state,
    const char *err, int64_t next_try, const char *const *rcpt, size_t nrcpt,
    int64_t now);
/* Puts a pending delivery back to next_try without counting an attempt
 * (rate limit); why becomes its last_error. */
int store_alert_postpone(
    struct store *, int64_t id, const char *why, int64_t next_try);
/* Mails sent to recipient since since. */
int store_alert_sent_since(
    struct store *, int64_t *out, const char *recipient, int64_t since);

/* Filters of the list; NULL / 0 for any.  payload is not filled. */
struct store_alert_filter {
	const char *state, *kind, *sha;
	int64_t limit;  /* default 50, at most 500 */
	int64_t cursor; /* ids below this one */
	int64_t scan;   /* the budget of alerts read; 0: STORE_ALERTS_SCAN */
};
/* A page of two or more kinds of filter reads at most this many alerts
 * (one kind is an index range, schema v28). */
#define STORE_ALERTS_SCAN 10000
/* A page's end: capped 1 when the scan budget ended it before limit;
 * next_cursor the next page's (below the alerts read), 0 at the end. */
struct store_alert_more {
	int capped;
	int64_t next_cursor;
};
int store_alert_list(struct store *, struct store_alert **out, size_t *out_n,
    const struct store_alert_filter *, struct store_alert_more *more);
/* One delivery with its payload; ERR_NOTFOUND. */
int store_alert_get(struct store *, struct store_alert **out, int64_t id);
/* Gauges: pending deliveries; failed ones (ever, a counter). */
int store_alert_counts(
    struct store *, int64_t *out_pending, int64_t *out_failed);

/*
 * ---- commands by reply (daemon/mailcmd.c) ----
 */

/* The report whose first mail's Message-ID names commit SHA_PREFIX
 * (its first 12 digits), JOB and HOST_ID: 0 and *out_commit, or
 * ERR_NOTFOUND (no such report was mailed). */
int store_alert_report_find(struct store *, int64_t *out_commit,
    const char *sha_prefix, const char *job, int64_t host_id);
/* The regressions (ids, oldest first) of the comparisons of pairs:
 * 0 and *out (free()). */
int store_alert_regressions(struct store *, int64_t **out, size_t *out_n,
    const int64_t *pairs, size_t npairs);

/* What a pair is made of, to make it again (a retest): side[0] the base. */
struct store_pair_again {
	char *name, *point;
	struct {
		char *spec, *labels; /* JSON texts, as store_job_new wants */
		int64_t runs, max_runs, max_attempts, commit_id;
	} side[2];
};
void store_pair_again_release(struct store_pair_again *);
/* 0 and *out, or ERR_NOTFOUND. */
int store_pair_again_get(
    struct store *, struct store_pair_again *out, int64_t pair_id);

/* Whether a delivery with KEY was queued: 1, 0, or -1. */
int store_alert_key_known(struct store *, const char *key);
/* Queues one e-mail that belongs to no report (a command's answer: kind
 * and followup are ignored, it is "email").  0, or ERR_EXISTS when KEY
 * is queued already (nothing changes). */
int store_alert_mail_put(
    struct store *, const struct store_alert_new *, int64_t now);

#endif
