/*
 * The alert worker: reports from final verdicts, and their delivery
 * (daemon/alert.h, docs/ALERTS.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/http.h"
#include "common/log.h"
#include "common/redact.h"
#include "common/xalloc.h"
#include "daemon/alert.h"
#include "daemon/dconf.h"
#include "daemon/sched.h"
#include "store/runs.h"
#include "store/store.h"

/* ---- what a report says ---- */

static int
changed(const struct store_alert_cmp *c)
{
	if (strcmp(c->verdict, "regression") == 0)
		return !c->suspect; /* a suspect comparison alerts nobody */
	return strcmp(c->verdict, "improvement") == 0 ||
	    strcmp(c->verdict, "unstable") == 0;
}

static int
rank(const struct store_alert_cmp *c)
{
	if (strcmp(c->verdict, "regression") == 0)
		return 3;
	if (strcmp(c->verdict, "unstable") == 0)
		return 2;
	return 1;
}

static int
cmp_sig(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
alert_report_init(struct alert_report *r, const struct store_alert_info *x,
    const char *public_url, int64_t now)
{
	struct buf b = BUF_INIT(ALERT_MAIL_MAX);
	char **lines;
	size_t i;

	memset(r, 0, sizeof(*r));
	alert_report_kernel(r, NULL);
	r->x = x;
	r->public_url = public_url;
	r->now = now;
	r->chg = xcalloc(x->ncmp + 1, sizeof(*r->chg));
	lines = xcalloc(x->ncmp + 1, sizeof(*lines));
	for (i = 0; i < x->ncmp; i++) {
		const struct store_alert_cmp *c = &x->cmp[i];

		if (!changed(c))
			continue;
		lines[r->nchg] = xasprintf("%s|%s|%s", c->point ? c->point : "",
		    c->metric, c->verdict);
		r->chg[r->nchg++] = i;
	}
	/* The headline: the worst verdict, then the largest change. */
	for (i = 0; i < r->nchg; i++) {
		const struct store_alert_cmp *c = &x->cmp[r->chg[i]];
		const struct store_alert_cmp *h = &x->cmp[r->chg[0]];

		if (i == 0)
			r->head = r->chg[0];
		h = &x->cmp[r->head];
		if (rank(c) > rank(h) ||
		    (rank(c) == rank(h) &&
		        fabs(isnan(c->change_pct) ? 0 : c->change_pct) >
		            fabs(isnan(h->change_pct) ? 0 : h->change_pct)))
			r->head = r->chg[i];
	}
	qsort(lines, r->nchg, sizeof(*lines), cmp_sig);
	for (i = 0; i < r->nchg; i++) {
		buf_puts(&b, lines[i]);
		buf_putc(&b, '\n');
		free(lines[i]);
	}
	free(lines);
	/* An ended bisection is news: a follow-up says what it found. */
	if (x->bisect_state != NULL)
		buf_printf(&b, "~bisect|%s|%.40s\n", x->bisect_state,
		    x->bisect ? x->bisect : "-");
	r->signature = buf_take(&b);
}

void
alert_report_release(struct alert_report *r)
{
	free(r->chg);
	free(r->signature);
	json_decref(r->charge_keep);
	free(r->kernel_warning);
	free(r->tree_url);
	memset(r, 0, sizeof(*r));
}

void
alert_report_charge(struct alert_report *r, const struct store_run_metas *rows)
{
	json_decref(r->charge_keep);
	r->charge_keep = NULL;
	r->ncharge = rows ? chargepath_diff(r->charge, ALERT_CHARGE_SYMS,
	                        r->charge_runs, rows, &r->charge_keep)
	                  : 0;
	if (rows == NULL)
		r->charge_runs[0] = r->charge_runs[1] = 0;
}

void
alert_report_kernel(struct alert_report *r, const struct store_run_metas *rows)
{
	struct kfacts_pair kp;

	/* The pair's kernel facts as its page and API show them. */
	kfacts_pair(
	    &kp, rows, r->x ? r->x->base_sha : NULL, r->x ? r->x->sha : NULL);
	memcpy(r->kernel, kp.side, sizeof(r->kernel));
	free(r->kernel_warning);
	r->kernel_warning = rows != NULL && r->x != NULL && kp.warning[0]
	    ? xstrdup(kp.warning)
	    : NULL;
}

const char *
alert_report_event(const struct alert_report *r)
{
	if (r->nchg == 0)
		return "unchanged";
	return r->x->cmp[r->head].verdict;
}

char *
alert_report_key(const struct store_alert_info *x)
{
	return xasprintf("c%lld/%s/h%lld", (long long)x->commit_id, x->job,
	    (long long)x->host_id);
}

static int usable_msgid(const char *id);

/* The public archive of inbox NAME (NULL: none, or no such inbox). */
static const char *
inbox_archive(const struct daemon_config *dc, const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < dc->ninboxes; i++)
		if (strcmp(dc->inboxes[i].name, name) == 0)
			return dc->inboxes[i].archive;
	return NULL;
}

int
alert_series_threaded(const struct store_alert_info *x, int reply_to_series)
{
	/* An id made up for mail that had none is no thread to reply in;
	 * one with brackets or white space cannot be written safely. */
	return reply_to_series && x->series_id > 0 &&
	    usable_msgid(x->series_msgid);
}

static int
usable_msgid(const char *id)
{
	return id != NULL && id[0] != '\0' &&
	    strncmp(id, "no-message-id-", 14) != 0 &&
	    strpbrk(id, "<> \t\r\n") == NULL && strlen(id) < 900;
}

int64_t
alert_pinned_patch(const struct store_alert_info *x)
{
	if (x->series_id <= 0 || x->patch_seq <= 0 ||
	    !usable_msgid(x->patch_msgid) ||
	    (x->series_msgid != NULL &&
	        strcmp(x->patch_msgid, x->series_msgid) == 0 && x->total == 1))
		return 0;
	if (x->patch_seq < x->total)
		return x->patch_seq;
	return x->base_sha != NULL && x->series_base != NULL &&
	        strcmp(x->base_sha, x->series_base) != 0
	    ? x->patch_seq
	    : 0;
}

/* The tree's url without user or password ("https://u:p@h/x"). */
static char *
public_tree_url(const struct daemon_config *dc, const char *tree)
{
	size_t i;

	for (i = 0; tree != NULL && i < dc->ntrees; i++) {
		const char *u = dc->trees[i].url, *h, *at, *sl;

		if (strcmp(dc->trees[i].name, tree) != 0 || u == NULL)
			continue;
		h = strstr(u, "://");
		if (h == NULL)
			return xstrdup(u);
		h += 3;
		sl = h + strcspn(h, "/");
		at = memchr(h, '@', (size_t)(sl - h));
		if (at == NULL)
			return xstrdup(u);
		return xasprintf("%.*s%s", (int)(h - u), u, at + 1);
	}
	return NULL;
}

/* ---- making the alerts of one group ---- */

/* A Message-ID for this report: stable, so a resend is recognisable. */
static char *
message_id(const struct store_alert_info *x, const char *from, int64_t n)
{
	char addr[256];
	const char *dom = NULL;

	if (alert_mail_addr(addr, sizeof(addr), from) == 0)
		dom = strchr(addr, '@');
	return xasprintf("<perfwatch.%.12s.%s.h%lld.%lld@%s>",
	    x->sha ? x->sha : "0", x->job, (long long)x->host_id, (long long)n,
	    dom ? dom + 1 : "perfwatch.invalid");
}

static char *
join_rcpt(const struct alert_rcpt *rc)
{
	struct buf b = BUF_INIT(64 * 1024);
	size_t i;

	for (i = 0; i < rc->nenv; i++) {
		if (i)
			buf_puts(&b, ", ");
		buf_puts(&b, rc->env[i]);
	}
	return buf_take(&b);
}

/* The thread a report goes in: the series' mail, or our first report. */
static void
threading(const struct store_alert_info *x, const struct daemon_config *dc,
    const struct store_alert_report *old, int followup, char **irt, char **refs)
{
	struct buf b = BUF_INIT(64 * 1024);
	int series = alert_series_threaded(x, dc->alerts.reply_to_series);

	*irt = *refs = NULL;
	if (series) {
		/* The store keeps ids without their angle brackets.  A
		 * report pinned to one patch answers that patch's mail. */
		*irt = xasprintf("<%s>", x->series_msgid);
		buf_puts(&b, *irt);
		if (alert_pinned_patch(x) > 0) {
			free(*irt);
			*irt = xasprintf("<%s>", x->patch_msgid);
			buf_putc(&b, ' ');
			buf_puts(&b, *irt);
		}
	}
	if (followup && old->message_id != NULL) {
		if (b.len)
			buf_putc(&b, ' ');
		buf_puts(&b, old->message_id);
		free(*irt);
		*irt = xstrdup(old->message_id);
	}
	if (b.len)
		*refs = buf_take(&b);
	buf_release(&b);
}

int
alert_group_decide(struct store *s, const struct daemon_config *dc,
    const struct store_alert_group *g, int64_t now, size_t *made)
{
	struct store_alert_info *x = NULL;
	struct store_alert_report old;
	struct store_alert_decision d;
	struct store_alert_new a[1 + 64];
	struct alert_report r;
	struct alert_rcpt rc;
	struct buf mail = BUF_INIT(ALERT_MAIL_MAX);
	char *key, *subject = NULL, *mid = NULL, *irt = NULL, *refs = NULL;
	char *env = NULL, *bodies[64], *keys[1 + 64], *summary = NULL;
	size_t na = 0, i, nb = 0;
	int r0, have_old, send, followup, news;

	memset(&rc, 0, sizeof(rc));
	r0 = store_alert_info_get(s, &x, g->commit_id, g->job, g->host_id);
	if (r0 != 0)
		return r0 == ERR_NOTFOUND ? 0 : -1;
	key = alert_report_key(x);
	r0 = store_alert_report_get(s, &old, key);
	if (r0 != 0 && r0 != ERR_NOTFOUND) {
		free(key);
		store_alert_info_release(x);
		return -1;
	}
	store_errclear(s);
	have_old = r0 == 0;
	alert_report_init(&r, x, dc->public_url, now);
	r.from = dc->alerts.from;
	r.tree_url = public_tree_url(dc, x->tree);
	if (x->ncmp > 0) {
		/* The headline pair's kernels (docs/KERNEL.md) and
		 * charge-path symbols (docs/MEMCG.md). */
		struct store_run_metas meta;

		if (store_pair_run_meta_list(
		        s, &meta, x->cmp[r.head].pair_id) == 0) {
			alert_report_kernel(&r, &meta);
			if (r.nchg > 0)
				alert_report_charge(&r, &meta);
			store_run_metas_release(&meta);
		} else
			store_errclear(s);
	}
	/*
	 * Deduplication: the same changed metrics and verdicts as the last
	 * look say nothing new (a retest that confirms).  A different set
	 * after a report was sent is a follow-up in the same thread; the
	 * first report of a group that had nothing to say is a report.
	 */
	followup = have_old && old.sent_reports > 0;
	/* A bisection of a history change point (no pair changed) that
	 * ended is a report of its own. */
	news =
	    r.nchg > 0 || (x->bisect_origin != NULL && x->bisect_state != NULL);
	if (have_old)
		send = strcmp(old.signature ? old.signature : "", r.signature);
	else
		send = news;
	if (!followup && !news)
		send = 0;
	r.followup = followup;
	r.prev = have_old ? old.signature : NULL;

	memset(&d, 0, sizeof(d));
	d.key = key;
	d.commit_id = x->commit_id;
	d.series_id = x->series_id;
	d.host_id = x->host_id;
	d.job = x->job;
	d.signature = r.signature;
	d.pairs = x->pairs;
	d.npairs = x->npairs;
	d.stamp = g->stamp;
	if (send) {
		int64_t n = (have_old ? old.sent_reports : 0) + 1;

		subject = alert_mail_subject(&r, dc->alerts.reply_to_series);
		if (followup && old.subject != NULL) {
			free(subject);
			subject = strncmp(old.subject, "Re: ", 4) == 0
			    ? xstrdup(old.subject)
			    : xasprintf("Re: %s", old.subject);
		}
		summary = xasprintf("%s%s: %zu changed metric(s)",
		    followup ? "follow-up, " : "", alert_report_event(&r),
		    r.nchg);
		d.subject = subject;
		d.summary = summary;
		d.sent_report = 1;
		if (dc->alerts.smtp != NULL) {
			alert_rcpt_make(&rc, dc, x);
			if (!rc.quiet && rc.nenv > 0) {
				struct alert_mail_in in;

				mid = message_id(x, dc->alerts.from, n);
				r.archive = inbox_archive(dc, x->inbox);
				r.message_id = mid;
				threading(x, dc, &old, followup, &irt, &refs);
				memset(&in, 0, sizeof(in));
				in.r = &r;
				in.from = dc->alerts.from;
				in.subject = subject;
				in.message_id = mid;
				in.in_reply_to = irt;
				in.references = refs;
				in.rcpt = &rc;
				if (alert_mail_build(&mail, &in) == 0) {
					env = join_rcpt(&rc);
					keys[na] = xasprintf(
					    "%s#%lld/email", key, (long long)n);
					a[na].kind = "email";
					a[na].key = keys[na];
					a[na].target = env;
					a[na].subject = subject;
					a[na].payload = mail.data;
					a[na].followup = followup;
					na++;
				} else
					log_warnx(
					    "alert %s: mail too large", key);
			}
		}
		d.message_id = mid;
		for (i = 0; i < dc->alerts.nwebhooks && i < 64; i++) {
			const struct cfg_webhook *w = &dc->alerts.webhooks[i];

			keys[na] =
			    xasprintf("%s#%lld/hook%zu", key, (long long)n, i);
			bodies[nb] =
			    alert_hook_body(&r, keys[na], w->slack, subject);
			a[na].kind = "webhook";
			a[na].key = keys[na];
			a[na].target = w->url;
			a[na].subject = subject;
			a[na].payload = bodies[nb++];
			a[na].followup = followup;
			na++;
		}
	}
	d.alerts = a;
	d.nalerts = na;
	r0 = store_alert_decide(s, &d, now);
	if (r0 == 0 && na > 0) {
		log_info("alert %s: %s%s, %zu changed metric(s), %zu "
		         "deliveries queued",
		    key, followup ? "follow-up: " : "", alert_report_event(&r),
		    r.nchg, na);
		*made += na;
	}
	for (i = 0; i < na; i++)
		free(keys[i]);
	for (i = 0; i < nb; i++)
		free(bodies[i]);
	buf_release(&mail);
	alert_rcpt_release(&rc);
	alert_report_release(&r);
	if (have_old)
		store_alert_report_release(&old);
	free(env);
	free(subject);
	free(summary);
	free(mid);
	free(irt);
	free(refs);
	free(key);
	store_alert_info_release(x);
	return r0;
}

/* ---- delivery ---- */

static int64_t
retry_at(const struct daemon_config *dc, int64_t attempts, int64_t now)
{
	struct http_retry p = { 0, 0, 0, NULL };
	long ms;

	p.base_ms =
	    (dc->alerts.backoff_s > 0 ? dc->alerts.backoff_s : 30) * 1000L;
	p.max_ms =
	    (dc->alerts.backoff_max_s > 0 ? dc->alerts.backoff_max_s : 3600) *
	    1000L;
	ms = http_backoff_ms(&p, (int)attempts);
	/* next_try has whole seconds and now is rounded down: one more
	 * second, and the backoff's milliseconds rounded up (its jitter
	 * makes them no whole second), keep the wait at least the
	 * backoff. */
	return now + 1 + (ms + 999) / 1000;
}

static int
max_attempts(const struct daemon_config *dc)
{
	return dc->alerts.max_attempts > 0 ? (int)dc->alerts.max_attempts : 8;
}

static int
deliver_mail(struct store *s, const struct daemon_config *dc,
    const struct store_alert *a, int64_t now)
{
	char from[256], *list = xstrdup(a->target), *p, *save = NULL;
	const char *rcpt[256];
	struct err e = { 0 };
	struct http *h;
	size_t n = 0, i;
	int64_t cnt;
	int rc;

	for (p = strtok_r(list, ", ", &save); p != NULL && n < 256;
	     p = strtok_r(NULL, ", ", &save))
		rcpt[n++] = p;
	if (dc->alerts.smtp == NULL ||
	    alert_mail_addr(from, sizeof(from), dc->alerts.from) != 0 ||
	    n == 0) {
		free(list);
		return store_alert_attempt(s, a->id, "failed",
		    "e-mail is not configured (alerts.email)", now, NULL, 0,
		    now);
	}
	/* Rate limit per recipient: wait, never drop. */
	for (i = 0; dc->alerts.rate_limit > 0 && i < n; i++) {
		if (store_alert_sent_since(s, &cnt, rcpt[i], now - 3600) != 0) {
			free(list);
			return -1;
		}
		if (cnt >= dc->alerts.rate_limit) {
			char why[512];

			snprintf(why, sizeof(why),
			    "rate limit: %s had %lld mails in the last hour",
			    rcpt[i], (long long)cnt);
			free(list);
			/* Not an attempt: put back by hand. */
			return store_alert_postpone(s, a->id, why, now + 300);
		}
	}
	h = http_new();
	if (dc->alerts.auth_file != NULL) {
		char *cred = NULL, *colon;

		if (http_token_load(&cred, dc->alerts.auth_file, &e) != 0 ||
		    (colon = strchr(cred, ':')) == NULL) {
			if (!e.set)
				err_set(&e, "%s: expected user:password",
				    dc->alerts.auth_file);
			free(cred);
			http_free(h);
			free(list);
			return store_alert_attempt(s, a->id,
			    a->attempts + 1 >= max_attempts(dc) ? "failed"
			                                        : "pending",
			    err_msg(&e), retry_at(dc, a->attempts + 1, now),
			    NULL, 0, now);
		}
		*colon = '\0';
		http_set_login(h, cred, colon + 1);
		memset(cred, 0, strlen(colon + 1) + (size_t)(colon - cred));
		free(cred);
	}
	if (dc->alerts.ca_file != NULL)
		http_set_cainfo(h, dc->alerts.ca_file);
	http_set_timeouts(h, 10000, 60000);
	rc = http_smtp_send(h, dc->alerts.smtp, from, rcpt, n, a->payload,
	    strlen(a->payload), dc->alerts.starttls);
	if (rc == 0) {
		log_info("alert %lld: mail %s sent to %s", (long long)a->id,
		    a->key, a->target);
		rc = store_alert_attempt(
		    s, a->id, "sent", NULL, now, rcpt, n, now);
	} else {
		int last =
		    rc != ERR_AGAIN || a->attempts + 1 >= max_attempts(dc);

		log_warnx("alert %lld: mail: %s%s", (long long)a->id,
		    http_errmsg(h), last ? " (giving up)" : "");
		rc = store_alert_attempt(s, a->id, last ? "failed" : "pending",
		    http_errmsg(h), retry_at(dc, a->attempts + 1, now), NULL, 0,
		    now);
	}
	http_free(h);
	free(list);
	return rc;
}

static int
deliver_hook(struct store *s, const struct daemon_config *dc,
    const struct store_alert *a, int64_t now)
{
	const struct cfg_webhook *w = NULL;
	struct err e = { 0 };
	char *secret = NULL;
	const char *event;
	long after = -1;
	int64_t next;
	size_t i;
	int rc, last;

	for (i = 0; i < dc->alerts.nwebhooks; i++)
		if (strcmp(dc->alerts.webhooks[i].url, a->target) == 0)
			w = &dc->alerts.webhooks[i];
	if (w == NULL)
		return store_alert_attempt(s, a->id, "failed",
		    "webhook no longer configured", now, NULL, 0, now);
	if (http_token_load(&secret, w->secret_file, &e) != 0)
		return store_alert_attempt(
		    s, a->id, "failed", err_msg(&e), now, NULL, 0, now);
	event = a->followup ? "report.followup" : "report";
	rc = alert_hook_post(a->target, secret, event, a->key, a->payload,
	    (w->timeout_s > 0 ? w->timeout_s : 10) * 1000L, &after, &e);
	memset(secret, 0, strlen(secret));
	free(secret);
	if (rc == 0) {
		char *host = redact_url_host(a->target);

		log_info("alert %lld: webhook %s delivered to %s",
		    (long long)a->id, a->key, host);
		free(host);
		return store_alert_attempt(
		    s, a->id, "sent", NULL, now, NULL, 0, now);
	}
	last = rc != ERR_AGAIN || a->attempts + 1 >= max_attempts(dc);
	next = retry_at(dc, a->attempts + 1, now);
	if (after >= 0) {
		/* Retry-After is honoured, within backoff_max. */
		int64_t cap = dc->alerts.backoff_max_s > 0
		    ? dc->alerts.backoff_max_s
		    : 3600;

		next = now + 1 + (after < cap ? after : cap);
	}
	log_warnx("alert %lld: webhook: %s%s", (long long)a->id, err_msg(&e),
	    last ? " (giving up)" : "");
	return store_alert_attempt(s, a->id, last ? "failed" : "pending",
	    err_msg(&e), next, NULL, 0, now);
}

int
alert_pass(struct store *s, const struct daemon_config *dc, int64_t now,
    size_t *out_made, size_t *out_sent)
{
	struct store_alert_group *g = NULL;
	struct store_alert *a = NULL;
	size_t ng = 0, na = 0, i, made = 0, sent = 0;
	int failed = 0;

	if (store_alert_groups(s, &g, &ng, ALERT_BATCH) != 0)
		return -1;
	for (i = 0; i < ng; i++)
		if (alert_group_decide(s, dc, &g[i], now, &made) != 0) {
			log_warnx("alert: commit %lld job %s: %s",
			    (long long)g[i].commit_id, g[i].job,
			    store_errmsg(s));
			store_errclear(s);
			failed = 1;
		}
	store_alert_groups_release(g, ng);
	if (store_alert_due(s, &a, &na, now, ALERT_BATCH) != 0)
		return -1;
	for (i = 0; i < na; i++) {
		int r = strcmp(a[i].kind, "email") == 0
		    ? deliver_mail(s, dc, &a[i], (int64_t)time(NULL))
		    : deliver_hook(s, dc, &a[i], (int64_t)time(NULL));

		if (r != 0) {
			log_warnx("alert %lld: %s", (long long)a[i].id,
			    store_errmsg(s));
			store_errclear(s);
			failed = 1;
		}
	}
	for (i = 0; i < na; i++)
		sent += a[i].payload != NULL; /* attempted */
	store_alerts_release(a, na);
	if (out_made)
		*out_made = made;
	if (out_sent)
		*out_sent = sent;
	if (failed)
		return -1;
	return ng == ALERT_BATCH || na == ALERT_BATCH ? 1 : 0;
}

/* ---- the worker (daemon/worker.h) ---- */

int64_t
alert_worker_pass(
    struct store *s, const struct dconf *c, struct sched *sched, void *arg)
{
	int r;

	(void)sched;
	(void)arg;
	r = alert_pass(s, c->dc, (int64_t)time(NULL), NULL, NULL);
	if (r < 0 && store_errmsg(s)[0])
		log_warnx("alert: %s", store_errmsg(s));
	if (r == 1)
		return 100; /* not 0: a batch stuck on one group must not spin
		             */
	return 1000 * (c->dc->alerts.poll_s > 0 ? c->dc->alerts.poll_s : 5);
}
