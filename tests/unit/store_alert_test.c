/*
 * store/alerts.c on a real SQLite file: a decision queues its
 * deliveries once (the same keys again change nothing), a delivery that
 * was sent is never due again, attempts, postponing, failure counts,
 * the recipients' send log and the list filters; and a database made at
 * schema v7 migrates to the alert schema.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/alerts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/store.h"
#include "store/watch.h"
#include "tests/unit/test.h"

static int dbn;

static struct store *
open_new(int version)
{
	struct store *s = NULL;
	struct err e = { 0 };
	char *p = test_store_at("a%d.db", dbn++);

	if (store_open_version(&s, p, version, &e) == -1)
		fprintf(stdout, "store_open: %s\n", err_msg(&e));
	free(p);
	return s;
}

static int
decide(struct store *s, const char *sig, int64_t now)
{
	struct store_alert_new a[2] = {
		{ "email", "r1#1/email", "a@example.org, b@example.org",
		    "subject 1", "Subject: x\r\n\r\nbody\r\n", 0 },
		{ "webhook", "r1#1/hook0", "http://127.0.0.1:1/h", "subject 1",
		    "{}", 0 },
	};
	struct store_alert_decision d;

	memset(&d, 0, sizeof(d));
	d.key = "c1/job/h1";
	d.job = "job";
	d.signature = sig;
	d.message_id = "<m1@example.org>";
	d.subject = "subject 1";
	d.summary = "regression: 1 changed metric(s)";
	d.sent_report = 1;
	d.stamp = now;
	d.alerts = a;
	d.nalerts = 2;
	return store_alert_decide(s, &d, now);
}

TEST(test_store_alert__decide_deliver_once)
{
	struct store *s = open_new(STORE_VERSION);
	struct store_alert *a = NULL;
	struct store_alert_report r;
	struct store_alert_filter f = { 0 };
	const char *rcpt[] = { "a@example.org", "b@example.org" };
	int64_t pend, failed, n;
	size_t na;

	ASSERT(s != NULL);
	ASSERT_INTEQ(decide(s, "p|m|regression\n", 100), 0);
	/* The same decision again (a crash before the worker went on):
	 * nothing is queued twice. */
	ASSERT_INTEQ(decide(s, "p|m|regression\n", 101), 0);
	ASSERT_INTEQ(store_alert_report_get(s, &r, "c1/job/h1"), 0);
	ASSERT_INTEQ(r.sent_reports, 2);
	ASSERT_STREQ(r.message_id, "<m1@example.org>");
	store_alert_report_release(&r);
	ASSERT_INTEQ(store_alert_counts(s, &pend, &failed), 0);
	ASSERT_INTEQ(pend, 2);
	ASSERT_INTEQ(failed, 0);

	ASSERT_INTEQ(store_alert_due(s, &a, &na, 99, 10), 0);
	ASSERT_INTEQ(na, 0); /* next_try is its creation time */
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 100, 10), 0);
	ASSERT_INTEQ(na, 2);
	ASSERT_STREQ(a[0].kind, "email");
	ASSERT_STREQ(a[0].payload, "Subject: x\r\n\r\nbody\r\n");

	/* The mail is accepted, the webhook fails once then for good. */
	ASSERT_INTEQ(
	    store_alert_attempt(s, a[0].id, "sent", NULL, 100, rcpt, 2, 100),
	    0);
	ASSERT_INTEQ(store_alert_attempt(
	                 s, a[1].id, "pending", "HTTP 503", 130, NULL, 0, 100),
	    0);
	store_alerts_release(a, na);
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 129, 10), 0);
	ASSERT_INTEQ(na, 0);
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 1000, 10), 0);
	ASSERT_INTEQ(na, 1);
	ASSERT_STREQ(a[0].kind, "webhook");
	ASSERT_INTEQ(a[0].attempts, 1);
	ASSERT_STREQ(a[0].last_error, "HTTP 503");
	/* Rate limit: put back without an attempt. */
	ASSERT_INTEQ(store_alert_postpone(s, a[0].id, "rate limit", 2000), 0);
	store_alerts_release(a, na);
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 1999, 10), 0);
	ASSERT_INTEQ(na, 0);
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 2000, 10), 0);
	ASSERT_INTEQ(na, 1);
	ASSERT_INTEQ(a[0].attempts, 1);
	ASSERT_INTEQ(store_alert_attempt(
	                 s, a[0].id, "failed", "HTTP 404", 2000, NULL, 0, 2000),
	    0);
	/* A finished delivery is not touched by a late attempt. */
	ASSERT_INTEQ(
	    store_alert_attempt(s, a[0].id, "sent", NULL, 2000, NULL, 0, 2001),
	    0);
	store_alerts_release(a, na);
	ASSERT_INTEQ(store_alert_counts(s, &pend, &failed), 0);
	ASSERT_INTEQ(pend, 0);
	ASSERT_INTEQ(failed, 1);
	ASSERT_INTEQ(store_alert_due(s, &a, &na, 1 << 30, 10), 0);
	ASSERT_INTEQ(na, 0);

	ASSERT_INTEQ(store_alert_sent_since(s, &n, "b@example.org", 50), 0);
	ASSERT_INTEQ(n, 1);
	ASSERT_INTEQ(store_alert_sent_since(s, &n, "b@example.org", 101), 0);
	ASSERT_INTEQ(n, 0);

	f.state = "failed";
	ASSERT_INTEQ(store_alert_list(s, &a, &na, &f, NULL), 0);
	ASSERT_INTEQ(na, 1);
	ASSERT_STREQ(a[0].state, "failed");
	ASSERT(a[0].payload == NULL);
	store_alerts_release(a, na);
	f.state = NULL;
	f.kind = "email";
	ASSERT_INTEQ(store_alert_list(s, &a, &na, &f, NULL), 0);
	ASSERT_INTEQ(na, 1);
	ASSERT(a[0].sent == 100);
	store_alerts_release(a, na);
	ASSERT_INTEQ(store_alert_get(s, &a, 999), ERR_NOTFOUND);
	ASSERT_INTEQ(store_alert_report_get(s, &r, "c9/job/h1"), ERR_NOTFOUND);
	store_close(s);
}

/* 20 reports of two deliveries each (an email, a webhook: alerts 1..40),
 * report i on commit i (of 20 commits "000..0i"); 0 or -1. */
static int
decide_many(struct store *s)
{
	struct store_commit c = { NULL, "", "A", "C", 1, 1, "s", "[]" };
	struct store_alert_new a[2] = {
		{ "email", NULL, "a@example.org", "s", "m", 0 },
		{ "webhook", NULL, "http://127.0.0.1:1/h", "s", "{}", 0 },
	};
	struct store_alert_decision d;
	char sha[41], key[32], k0[32], k1[32];
	int64_t tree = 0, id = 0;
	int i;

	if (store_tree_sync(s, &tree, "mm", "u") != 0)
		return -1;
	for (i = 1; i <= 20; i++) {
		snprintf(sha, sizeof(sha), "%040d", i);
		c.sha = sha;
		if (store_commit_record(s, &id, NULL, tree, &c, "m", 1) != 0)
			return -1;
		snprintf(key, sizeof(key), "c%d/job/h1", i);
		snprintf(k0, sizeof(k0), "r%d/email", i);
		snprintf(k1, sizeof(k1), "r%d/hook", i);
		a[0].key = k0;
		a[1].key = k1;
		memset(&d, 0, sizeof(d));
		d.key = key;
		d.commit_id = id;
		d.job = "job";
		d.signature = "sig";
		d.subject = "s";
		d.summary = "x";
		d.stamp = 100;
		d.alerts = a;
		d.nalerts = 2;
		if (store_alert_decide(s, &d, 100 + i) != 0)
			return -1;
	}
	return 0;
}

/* The ids of a page, newest first, as "id,id", its steps into *steps. */
static int
alert_page(struct store *s, const struct store_alert_filter *f,
    struct store_alert_more *more, char out[256], uint64_t *steps)
{
	struct store_alert *a = NULL;
	uint64_t before = store_read_steps(s);
	size_t n, i, len = 0;

	out[0] = '\0';
	if (store_alert_list(s, &a, &n, f, more) != 0)
		return -1;
	*steps = store_read_steps(s) - before;
	for (i = 0; i < n && len < 200; i++)
		len += (size_t)snprintf(out + len, 256 - len, "%s%lld",
		    i ? "," : "", (long long)a[i].id);
	store_alerts_release(a, n);
	return 0;
}

/*
 * The alerts' filters (schema v28): a commit's alerts come from its
 * reports (the commit page asks on every view; they were found by
 * joining every alert to its report and commit), a state or kind is
 * its index's range, and two kinds read windows within the scan budget,
 * partial when it ends the page.
 */
TEST(test_store_alert__filters_are_index_ranges)
{
	SKIP_ON_PG("SQLite's virtual machine steps");

	struct store *s = open_new(STORE_VERSION);
	struct store_alert_filter f = { 0 };
	struct store_alert_more m;
	char got[256];
	uint64_t one, all;

	ASSERT(s != NULL);
	ASSERT_INTEQ(decide_many(s), 0);
	f.limit = 50;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &all), 0);
	ASSERT(strncmp(got, "40,39,38,", 9) == 0);
	ASSERT_INTEQ(m.next_cursor, 0);
	ASSERT_INTEQ(m.capped, 0);
	/* Commit 3's two, alone (its prefix, 39 digits). */
	f.sha = "000000000000000000000000000000000000000";
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT(strncmp(got, "18,17,16,15,", 12) == 0); /* prefix of 1..9 */
	f.sha = "0000000000000000000000000000000000000003";
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "6,5");
	ASSERT_MSG(one * 8 < all, "commit 3: %llu steps; all 40: %llu",
	    (unsigned long long)one, (unsigned long long)all);
	f.sha = "00000000000000000000000000000000000000ff";
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "");
	/* A kind, paged by cursor. */
	f.sha = NULL;
	f.kind = "webhook";
	f.limit = 2;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "40,38");
	ASSERT_INTEQ(m.next_cursor, 38);
	f.cursor = 38;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "36,34");
	/* Two kinds: commit 3's webhook; no alert failed (the state's
	 * index: none read).  Pending webhooks with a budget of 4: the
	 * state's index drives, 4 pending read a page, half pass. */
	f.cursor = 0;
	f.sha = "0000000000000000000000000000000000000003";
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "6");
	f.sha = NULL;
	f.state = "failed";
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "");
	ASSERT_INTEQ(m.capped, 0);
	ASSERT_INTEQ(m.next_cursor, 0);
	f.state = "pending";
	f.limit = 5;
	f.scan = 4;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "40,38");
	ASSERT_INTEQ(m.capped, 1);
	ASSERT_INTEQ(m.next_cursor, 37);
	f.cursor = 37;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "36,34");
	ASSERT_INTEQ(m.next_cursor, 33);
	f.scan = 0;
	ASSERT_INTEQ(alert_page(s, &f, &m, got, &one), 0);
	ASSERT_STREQ(got, "36,34,32,30,28");
	ASSERT_INTEQ(m.capped, 0);
	ASSERT_INTEQ(m.next_cursor, 28);
	store_close(s);
}

/* Whether alert a passes f's filters, by hand. */
static int
alert_passes(const struct store_alert *a, const struct store_alert_filter *f)
{
	return (f->state == NULL || strcmp(a->state, f->state) == 0) &&
	    (f->kind == NULL || strcmp(a->kind, f->kind) == 0) &&
	    (f->sha == NULL ||
	        (a->sha != NULL &&
	            strncmp(a->sha, f->sha, strlen(f->sha)) == 0));
}

struct alert_q {
	struct store *s;
	struct store_alert_filter f;
};

/* test_pagings' pages of an alert_q. */
static int
alert_pages(void *arg, int64_t limit, int64_t scan, char *got, size_t n)
{
	struct alert_q *q = arg;
	struct store_alert_filter f = q->f;
	struct store_alert *a = NULL;
	struct store_alert_more m;
	size_t na, i, len = 0;
	int pages = 0;

	f.limit = limit;
	f.scan = scan;
	f.cursor = 0;
	do {
		if (store_alert_list(q->s, &a, &na, &f, &m) != 0 ||
		    ++pages > 100)
			return -1;
		for (i = 0; i < na; i++)
			test_ids_add(got, n, &len, a[i].id);
		store_alerts_release(a, na);
		f.cursor = m.next_cursor;
	} while (f.cursor != 0);
	return 0;
}

/* f's pages against what f passes of all n, by hand; 0, or -1 with why
 * in msg. */
static int
alert_shape_check(struct store *s, const struct store_alert *all, size_t n,
    const struct store_alert_filter *f, char *msg, size_t msgn)
{
	struct alert_q q = { s, *f };
	char want[1024], got[1024];
	int64_t limit, scan;
	size_t i, len = 0;

	want[0] = '\0';
	for (i = 0; i < n; i++)
		if (alert_passes(&all[i], f))
			test_ids_add(want, sizeof(want), &len, all[i].id);
	if (test_pagings(
	        alert_pages, &q, want, got, sizeof(got), &limit, &scan) == 0)
		return 0;
	snprintf(msg, msgn,
	    "state %s kind %s commit %s limit %lld scan %lld: %s, not %s",
	    f->state ? f->state : "-", f->kind ? f->kind : "-",
	    f->sha ? f->sha : "-", (long long)limit, (long long)scan, got,
	    want);
	return -1;
}

/*
 * Each shape of filters (which of state, kind and commit are given) has
 * statements of its own: every combination, paged and within a small
 * scan budget too, lists what the filters pass of all the alerts, by
 * hand (alerts of 20 commits in every state, and mail of no commit).
 */
TEST(test_store_alert__filter_shapes_list_what_they_pass)
{
	static const char *const states[] = { NULL, "pending", "sent", "failed",
		"nosuch" };
	static const char *const kinds[] = { NULL, "email", "webhook" };
	static const char *const shas[] = { NULL,
		"000000000000000000000000000000000000000", /* 1 to 9 */
		"000000000000000000000000000000000000001", /* 10 to 19 */
		"0000000000000000000000000000000000000003", "ff" };
	struct store *s = open_new(STORE_VERSION);
	struct store_alert_new m = { "email", NULL, "c@example.org", "re",
		"Subject: re\r\n\r\nok\r\n", 1 };
	struct store_alert_filter f = { 0 }, all = { 0 };
	struct store_alert *a = NULL;
	size_t na, i, k;
	char key[16], msg[2600];
	int64_t id;

	ASSERT(s != NULL);
	ASSERT_INTEQ(decide_many(s), 0);
	/* Alerts 41 to 43: mail of no report. */
	for (i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "mail%zu", i);
		m.key = key;
		ASSERT_INTEQ(store_alert_mail_put(s, &m, 200), 0);
	}
	/* Sent, failed or left pending, by id. */
	for (id = 1; id <= 43; id++)
		ASSERT_INTEQ(store_alert_attempt(s, id,
		                 id % 3 == 0       ? "sent"
		                     : id % 5 == 0 ? "failed"
		                                   : "pending",
		                 NULL, 300, NULL, 0, 300),
		    0);
	all.limit = 500;
	ASSERT_INTEQ(store_alert_list(s, &a, &na, &all, NULL), 0);
	ASSERT_INTEQ(na, 43);
	for (k = 0; k < 5 * 3 * 5; k++) {
		f.state = states[k % 5];
		f.kind = kinds[k / 5 % 3];
		f.sha = shas[k / 15];
		ASSERT_MSG(
		    alert_shape_check(s, a, na, &f, msg, sizeof(msg)) == 0,
		    "%s", msg);
	}
	store_alerts_release(a, na);
	store_close(s);
}

TEST(test_store_alert__migration_from_v7)
{
	SKIP_ON_PG("SQLite's schema steps from an older version");

	struct store *s = open_new(7);
	struct store_alert *a = NULL;
	size_t na;
	struct err e = { 0 };

	ASSERT(s != NULL);
	ASSERT_INTEQ(store_user_version(s), 7);
	store_close(s);
	/* Reopen the same file at the current version. */
	{
		char *p = test_store_at("a%d.db", dbn - 1);
		struct store *t = NULL;

		ASSERT_INTEQ(store_open(&t, p, &e), 0);
		free(p);
		ASSERT_INTEQ(store_user_version(t), STORE_VERSION);
		ASSERT_INTEQ(decide(t, "", 5), 0);
		ASSERT_INTEQ(store_alert_due(t, &a, &na, 5, 10), 0);
		ASSERT_INTEQ(na, 2);
		ASSERT_STREQ(a[0].state, "pending");
		store_alerts_release(a, na);
		store_close(t);
	}
}

/* A submitted pair (no branch) on a commit of tree linux recorded on
 * branches (NULL: a stub the watcher never saw), analysed: the branch
 * of its report. */
static char *
submitted_pair_branch(const char *branches)
{
	struct store *s = open_new(STORE_VERSION);
	struct store_commit c = { 0 };
	struct store_comparison v;
	struct store_alert_info *x = NULL;
	struct store_job_new b = { "base", "{}", "[]", 1, 1, 1, 0 },
	                     k = { "candidate", "{}", "[]", 1, 1, 1, 0 };
	int64_t t = 0, cb = 0, cc = 0, pair = 0;
	char *out = NULL, *list = branches ? xstrdup(branches) : NULL, *br,
	     *save = NULL;

	if (s == NULL || store_tree_sync(s, &t, "linux", "/k/linux.git") != 0)
		goto out;
	c.sha = "1111111111111111111111111111111111111111";
	c.subject = "linux 6.1";
	if (store_commit_record(s, &cb, NULL, t, &c, "memcg", 10) != 0)
		goto out;
	c.sha = "2222222222222222222222222222222222222222";
	c.subject = "mm: memcg: spin";
	for (br = list ? strtok_r(list, ",", &save) : NULL; br != NULL;
	     br = strtok_r(NULL, ",", &save))
		if (store_commit_record(s, &cc, NULL, t, &c, br, 11) != 0)
			goto out;
	if (list == NULL && store_commit_stub(s, &cc, t, c.sha) != 0)
		goto out;
	b.commit_id = cb;
	k.commit_id = cc;
	/* As the submit API makes it: store_pair_create, no branch. */
	if (store_pair_create(s, &pair, NULL, NULL, "krr", "", &b, &k, 20) != 0)
		goto out;
	memset(&v, 0, sizeof(v));
	v.metric = "throughput";
	v.unit = "";
	v.better = "higher";
	v.verdict = "regression";
	v.change_pct = -45.2;
	v.final = 1;
	if (store_verdict_put(s, NULL, pair, &v, 30) != 0 ||
	    store_verdict_done(s, pair, 30) != 0 ||
	    store_alert_info_get(s, &x, cc, "krr", 0) != 0)
		goto out;
	if (x->ncmp == 1 && strcmp(x->tree, "linux") == 0)
		out = xstrdup(x->branch ? x->branch : "(null)");
out:
	store_alert_info_release(x);
	store_close(s);
	free(list);
	return out;
}

TEST(test_store_alert__submitted_pair_branch)
{
	char *b;

	/* The watcher recorded the candidate on branch memcg: the report
	 * says so (its subject was "[linux:?]"). */
	b = submitted_pair_branch("memcg");
	ASSERT_STREQ(b, "memcg");
	free(b);
	b = submitted_pair_branch("memcg,mm-new");
	ASSERT_STREQ(b, "memcg,mm-new");
	free(b);
	/* A commit on no watched branch: unknown, nothing made up. */
	b = submitted_pair_branch(NULL);
	ASSERT_STREQ(b, "(null)");
	free(b);
}

/* One analysed pair of krr on cand against base, with verdict v. */
static int
analysed_pair(struct store *s, int64_t base, int64_t cand, const char *v,
    double pct, int64_t now)
{
	struct store_job_new b = { "base", "{}", "[]", 1, 1, 1, base },
	                     k = { "candidate", "{}", "[]", 1, 1, 1, cand };
	struct store_comparison c;
	int64_t pair = 0;

	memset(&c, 0, sizeof(c));
	c.metric = "throughput";
	c.unit = "";
	c.better = "higher";
	c.verdict = v;
	c.change_pct = pct;
	c.final = 1;
	if (store_pair_create(s, &pair, NULL, NULL, "krr", "", &b, &k, now) !=
	        0 ||
	    store_verdict_put(s, NULL, pair, &c, now) != 0 ||
	    store_verdict_done(s, pair, now) != 0)
		return -1;
	return 0;
}

/* The verdicts of tip's report, "regression,unchanged" in order. */
static void
verdicts(char *out, size_t n, struct store *s, int64_t tip)
{
	struct store_alert_info *x = NULL;
	size_t i, len = 0;

	snprintf(out, n, "%s", "(error)");
	if (store_alert_info_get(s, &x, tip, "krr", 0) != 0)
		return;
	out[0] = '\0';
	for (i = 0; i < x->ncmp && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s",
		    i ? "," : "", x->cmp[i].verdict);
	store_alert_info_release(x);
}

TEST(test_store_alert__tip_against_parent_keeps_base_verdict)
{
	struct store *s = open_new(STORE_VERSION);
	struct store_commit c = { 0 };
	int64_t t = 0, base = 0, p1 = 0, tip = 0;
	char got[128];

	ASSERT(s != NULL);
	ASSERT_INTEQ(store_tree_sync(s, &t, "linux", "/k/linux.git"), 0);
	c.sha = "1111111111111111111111111111111111111111";
	ASSERT_INTEQ(
	    store_commit_record(s, &base, NULL, t, &c, "memcg", 10), 0);
	c.sha = "2222222222222222222222222222222222222222";
	ASSERT_INTEQ(store_commit_record(s, &p1, NULL, t, &c, "", 10), 0);
	c.sha = "3333333333333333333333333333333333333333";
	ASSERT_INTEQ(store_commit_record(s, &tip, NULL, t, &c, "", 10), 0);
	/* The series' tip against its base regressed (patch 1 did it);
	 * then, with every_patch, the tip against patch 1: unchanged.
	 * The second measures another change and must not turn the
	 * report's regression into "unchanged". */
	ASSERT_INTEQ(analysed_pair(s, base, tip, "regression", -40.0, 20), 0);
	ASSERT_INTEQ(analysed_pair(s, p1, tip, "unchanged", 0.5, 21), 0);
	verdicts(got, sizeof(got), s, tip);
	ASSERT_STREQ(got, "regression,unchanged");
	/* A retest against the same base still replaces its verdict. */
	ASSERT_INTEQ(analysed_pair(s, base, tip, "unchanged", -1.0, 22), 0);
	verdicts(got, sizeof(got), s, tip);
	ASSERT_STREQ(got, "unchanged,unchanged");
	store_close(s);
}
