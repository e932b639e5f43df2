#ifndef DAEMON_ALERT_H
#define DAEMON_ALERT_H

/*
 * Alerts (docs/ALERTS.md): reports per (commit or series, job, host), an
 * e-mail threaded under the patch and signed webhooks, delivered from
 * rows of the store by a worker thread that survives restarts.
 *
 *  alert.c       the worker: finds final verdicts not looked at, builds
 *                one report per group (deduplicated by the signature of
 *                its changed metrics; a changed signature after a report
 *                is a follow-up in the same thread), queues the deliveries
 *                in one transaction, delivers due ones.
 *  alert_mail.c  the e-mail: recipients, safe headers, plain-text body.
 *  alert_hook.c  the webhook: JSON body, signature, one attempt.
 *
 * No SQL here (store/alerts.c); no HTML (web/).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "config/config.h"
#include "daemon/chargepath.h"
#include "daemon/kfacts.h"
#include "store/alerts.h"

#define ALERT_BATCH 32           /* groups or deliveries per pass */
#define ALERT_MAIL_MAX (1 << 20) /* one rendered message */
#define ALERT_MAX_ROWS 60        /* metric rows in a mail table */

struct dconf;
struct sched;

/* What one report says: the info and which of its comparisons changed. */
/* Charge-path symbols a report shows (the largest changes). */
#define ALERT_CHARGE_SYMS 5

struct alert_report {
	const struct store_alert_info *x;
	size_t *chg; /* indexes into x->cmp of the changed metrics */
	size_t nchg;
	size_t head;            /* the headline: an index into x->cmp */
	char *signature;        /* sorted "point|metric|verdict\n" of chg */
	int followup;           /* verdicts changed after an earlier report */
	const char *prev;       /* follow-up: the signature it replaces */
	const char *public_url; /* links; NULL: none */
	/* The tree's url as a reader can fetch it (user and password left
	 * out), or NULL: "To reproduce" fetches the base from there. */
	char *tree_url;
	const char *from; /* Reported-by: (alerts.email.from) */
	/* Closes: ARCHIVE/MESSAGE_ID/, the report as the list's public
	 * archive shows it (inboxes[].archive of the series' inbox), when
	 * both are known; NULL: no Closes: tag. */
	const char *archive, *message_id;
	int64_t now;
	/* The headline pair's charge-path symbols, base vs candidate
	 * (docs/MEMCG.md), largest change first; charge_runs: the profiled
	 * runs of each side (0 0: no profile).  Set by alert_report_charge. */
	struct chargepath_sym charge[ALERT_CHARGE_SYMS];
	size_t ncharge;
	int charge_runs[2];
	json_t *charge_keep; /* what the symbols point into */
	/* The kernel each side of the headline pair ran, base and
	 * candidate ("unknown" until alert_report_kernel), and the
	 * same-build warning (kfacts_warning), or NULL. */
	struct kfacts kernel[2];
	char *kernel_warning;
};

/*
 * Fills r from x (borrowed): the changed metrics are the regressions,
 * improvements and unstable verdicts (a regression of a suspect
 * comparison is left out).  alert_report_release() frees what it made.
 */
void alert_report_init(struct alert_report *r, const struct store_alert_info *x,
    const char *public_url, int64_t now);
void alert_report_release(struct alert_report *);
/* The charge-path symbols of the headline pair from its runs' profiles
 * (rows as store_pair_run_meta_list gives them; NULL: none). */
void alert_report_charge(
    struct alert_report *, const struct store_run_metas *rows);
/* The kernels of the headline pair's sides from its runs (rows as
 * store_pair_run_meta_list gives them; NULL: unknown), and the warning. */
void alert_report_kernel(
    struct alert_report *, const struct store_run_metas *rows);
/* "regression", "improvement", "unstable", or "unchanged" (nothing). */
const char *alert_report_event(const struct alert_report *);
/* Whether a report replies in its series' thread (a real Message-ID). */
int alert_series_threaded(const struct store_alert_info *, int reply_to_series);
/*
 * The patch a threaded report is pinned to, or 0 (the whole series): the
 * commit is patch k's and the report is of patch k against its parent
 * (trigger.every_patch): k < total, or k == total measured against
 * another base than the series'.  Its Message-ID must be usable.
 */
int64_t alert_pinned_patch(const struct store_alert_info *);
/* "c<commit_id>/<job>/h<host_id>": the report key. */
char *alert_report_key(const struct store_alert_info *);

/* ---- alert_mail.c ---- */

/* Envelope recipients and the header lines of one mail. */
struct alert_rcpt {
	char **to, **cc; /* header forms ("Name <a@b>" or "a@b"), safe */
	size_t nto, ncc;
	char **env; /* bare addresses, deduplicated */
	size_t nenv;
	int quiet;       /* a quiet switch applies: no mail */
	char *test_note; /* test mode: who it would have gone to */
};
void alert_rcpt_release(struct alert_rcpt *);
/* Recipients of a report under the alerts.email config. */
void alert_rcpt_make(struct alert_rcpt *out, const struct daemon_config *,
    const struct store_alert_info *);

/*
 * The bare address of "Name <a@b>" or "a@b" into out (size n), when it is
 * a plain addr-spec (no space, control character, '<', '>', ',', '"');
 * 0, or -1 when there is none.
 */
int alert_mail_addr(char *out, size_t n, const char *s);
/*
 * One header line "Name: value\r\n" (folded at 78 columns): control
 * characters (CR, LF, NUL, ...) become spaces, and a value with bytes
 * outside ASCII is RFC 2047 encoded (UTF-8, B encoding, words of at most
 * 75 characters).  addr: the value is a mailbox list ("Name <a@b>, ..."),
 * only the display names are encoded.
 */
void alert_mail_header(
    struct buf *, const char *name, const char *value, int addr);
/* The Subject of a report: kernel test robot form (docs/ALERTS.md). */
char *alert_mail_subject(const struct alert_report *, int reply_to_series);

struct alert_mail_in {
	const struct alert_report *r;
	const char *from, *subject, *message_id;
	const char *in_reply_to; /* NULL: none */
	const char *references;  /* space separated ids, or NULL */
	const struct alert_rcpt *rcpt;
	/* A mail that is no report (r NULL): its plain-text body (LF line
	 * ends, UTF-8), X-Perfwatch-Event and date. */
	const char *text, *event;
	int64_t now;
};
/* The whole RFC 5322 message (CRLF line ends, quoted-printable body):
 * a report (in->r), or in->text. */
int alert_mail_build(struct buf *out, const struct alert_mail_in *);
/* The plain-text body alone (LF line ends, UTF-8). */
void alert_mail_body(struct buf *out, const struct alert_report *);

/* ---- alert_hook.c ---- */

/* The webhook JSON body (malloc'd, compact).  delivery: its id. */
char *alert_hook_body(const struct alert_report *, const char *delivery,
    int slack, const char *subject);
/*
 * The webhook signature at ts (Unix seconds): HMAC-SHA256 under secret
 * of ts in decimal, a dot, and the body; 64 hex digits in sig.  0, or -1.
 */
int alert_hook_sign(char sig[65], const char *secret, long long ts,
    const char *body, size_t len);
/*
 * One POST of a stored body: X-Perfwatch-Timestamp (now) and
 * X-Perfwatch-Signature (alert_hook_sign at that time),
 * X-Perfwatch-Event, X-Perfwatch-Delivery.
 * 0 (2xx), ERR_AGAIN (connect error, timeout, 429, 5xx; *retry_after_s
 * set from Retry-After or -1) or -1 (other statuses, bad URL); e says
 * why.
 */
int alert_hook_post(const char *url, const char *secret, const char *event,
    const char *delivery, const char *body, long timeout_ms,
    long *retry_after_s, struct err *e);

/* ---- the worker ---- */

/*
 * Decides one group (a commit or series, job and host) at now: builds
 * its report from the final verdicts (alert_report_init, the headline
 * pair's kernels and charge-path symbols), deduplicates it by its
 * signature against the report stored under its key (the same changed
 * metrics say nothing new; a changed set after a report was sent is a
 * follow-up in the same thread), and in one transaction
 * (store_alert_decide) upserts the report, marks the group's pairs
 * seen and queues the deliveries of a report to send: a mail to the
 * alerts.email recipients and a body for each webhook.  Adds the
 * deliveries queued to *made.  0 (also when the group's commit is
 * gone: nothing to report), or -1 (store_errmsg()).  alert_pass()
 * calls it for each group ready; tests/bench/web_gen.c as well.
 */
int alert_group_decide(struct store *, const struct daemon_config *,
    const struct store_alert_group *, int64_t now, size_t *made);

/* One pass of the alert worker (a daemon/worker.h pass): alert_pass()
 * now, then wait alerts.poll (default 5 s) or until the scheduler moves;
 * after a full batch, the next pass comes 100 ms later (a backlog drains
 * at the store's speed, not ALERT_BATCH per poll). */
int64_t alert_worker_pass(
    struct store *, const struct dconf *, struct sched *, void *arg);

/*
 * One pass, as the thread makes it (tests call it directly): reports of
 * the groups ready, then the deliveries due.  *out_made counts alerts
 * queued, *out_sent deliveries sent (either may be NULL).  0, 1 when a
 * batch was full (more may be waiting), or -1.
 */
int alert_pass(struct store *, const struct daemon_config *, int64_t now,
    size_t *out_made, size_t *out_sent);

#endif
