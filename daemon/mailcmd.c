/*
 * Commands by reply to a report (mailcmd.h): who may command, each
 * command carried out in one store transaction with its record, and the
 * answer mailed under the command mail.  The lines are read in
 * mailcmd_parse.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "daemon/alert.h"
#include "daemon/bisect.h"
#include "daemon/dconf.h"
#include "daemon/mail.h"
#include "daemon/mailcmd.h"
#include "daemon/mailcmd_int.h"
#include "daemon/series.h"
#include "git/git.h"
#include "store/dash.h"
#include "store/jobs.h"
#include "store/mail_commands.h"
#include "store/series.h"
#include "store/store.h"
#include "store/tx.h"
#include "store/watch.h"

/* ---- who ---- */

static int
same_addr(const char *a, const char *mailbox)
{
	char b[256];

	return mailbox != NULL && alert_mail_addr(b, sizeof(b), mailbox) == 0 &&
	    strcasecmp(a, b) == 0;
}

static int
allowed(const struct dconf *c, const struct cfg_inbox *in,
    const struct store_alert_info *x, const char *from)
{
	size_t i;

	if (in != NULL && in->commands_from_anyone)
		return 1;
	/* The series' sender, or the author of the commit (the patch's
	 * for a series) the report is of. */
	if (same_addr(from, x->series_author) || same_addr(from, x->author))
		return 1;
	for (i = 0; i < c->dc->maintainers.n; i++)
		if (same_addr(from, c->dc->maintainers.v[i]))
			return 1;
	return 0;
}

/*
 * A pair again, with c's runs (0: its own) and host labels ("": its
 * own); for a test, its candidate is c's commit (row cand_id) of c's
 * URL instead.
 */
static int
retest_pair(struct store *s, int64_t *out, int64_t pair,
    const struct mailcmd_cmd *c, int64_t cand_id, int64_t now)
{
	int64_t runs = c->runs;
	struct store_pair_again pa;
	struct store_job_new jn[2];
	char *spec[2] = { NULL, NULL };
	int k, r;

	if ((r = store_pair_again_get(s, &pa, pair)) != 0)
		return r;
	for (k = 0; k < 2; k++) {
		json_t *o = pwjson_parse(
		    pa.side[k].spec, strlen(pa.side[k].spec), NULL);

		memset(&jn[k], 0, sizeof(jn[k]));
		jn[k].role = k == 0 ? "base" : "candidate";
		jn[k].labels_json =
		    c->labels[0] ? c->labels : pa.side[k].labels;
		jn[k].runs = runs > 0 ? runs : pa.side[k].runs;
		jn[k].max_runs = pa.side[k].max_runs > jn[k].runs
		    ? pa.side[k].max_runs
		    : jn[k].runs;
		jn[k].max_attempts = pa.side[k].max_attempts;
		jn[k].commit_id = pa.side[k].commit_id;
		if (o != NULL && runs > 0)
			json_object_set_new(o, "runs", json_integer(runs));
		if (o != NULL && k == 1 && c->op == MAILCMD_TEST) {
			/* The branch's commit, fetched from its own URL. */
			json_object_set_new(o, "tree",
			    json_pack(
			        "{s:s, s:s}", "url", c->url, "commit", c->sha));
			jn[k].commit_id = cand_id;
		}
		spec[k] = o != NULL ? pwjson_dump(o) : xstrdup(pa.side[k].spec);
		jn[k].spec_json = spec[k];
		json_decref(o);
	}
	if (c->op == MAILCMD_TEST && jn[1].commit_id != cand_id)
		r = ERR_INVALID; /* its candidate's spec is not JSON */
	else
		r = store_pair_create(s, out, NULL, NULL, pa.name,
		    pa.point ? pa.point : "", &jn[0], &jn[1], now);
	free(spec[0]);
	free(spec[1]);
	store_pair_again_release(&pa);
	return r;
}

/*
 * Records the commit a test measures on the report's tree: *out its
 * row.  Only its id and where it came from are known (nothing of it is
 * fetched here; the runner fetches it from its URL).
 */
static int
test_commit(int64_t *out, struct store *s, const struct store_alert_info *x,
    const struct mailcmd_cmd *c, const char *from, int64_t now)
{
	struct store_commit sc;
	int64_t tree_id;
	char *subject, *who;
	int r;

	if ((r = store_tree_id(s, &tree_id, x->tree ? x->tree : "")) != 0)
		return r;
	subject = xasprintf("test of %s at %s", c->branch, c->url);
	who = xasprintf("<%s>", from);
	memset(&sc, 0, sizeof(sc));
	sc.sha = c->sha;
	sc.parents = "";
	sc.author = who;
	sc.committer = who;
	sc.author_date = sc.commit_date = now;
	sc.subject = subject;
	sc.paths_json = "[]";
	r = store_commit_record(s, out, NULL, tree_id, &sc, "", now);
	free(subject);
	free(who);
	return r;
}

struct target {
	struct store_alert_info *x;
	int64_t *regs;
	size_t nregs;
	size_t pairs;
};

/* What one command line came to, as recorded (store/mail_commands.h). */
struct outcome {
	int done;
	char why[STORE_MAIL_COMMAND_REASON]; /* what it did, or why not */
	int64_t *pairs;                      /* the pairs it made */
	size_t npairs;
	int64_t series; /* a test's own series, 0: none */
};

/* oc's why: text without its answer's "done: " or "not done: ". */
static void
outcome_why(struct outcome *oc, const char *text)
{
	size_t l;

	if (strncmp(text, "done: ", 6) == 0)
		text += 6;
	else if (strncmp(text, "not done: ", 10) == 0)
		text += 10;
	snprintf(oc->why, sizeof(oc->why), "%s", text);
	l = strlen(oc->why);
	while (l > 0 && (oc->why[l - 1] == '\n' || oc->why[l - 1] == ' '))
		oc->why[--l] = '\0';
}

/* Does c; appends what happened to ans, the pairs it made to oc.  0,
 * or an error (ans says). */
static int
apply(struct target *t, struct store *s, const struct dconf *conf,
    const struct mailcmd_cmd *c, const char *from, int64_t now, struct buf *ans,
    struct outcome *oc)
{
	const struct store_alert_info *x = t->x;
	struct err e = { 0 };
	size_t i, j, made = 0;
	int64_t bid = 0, cand = 0, pid = 0;
	int r = 0;

	switch (c->op) {
	case MAILCMD_TRIAGE:
		if (t->nregs == 0) {
			buf_puts(ans,
			    "not done: the report has no regression "
			    "to triage\n");
			return ERR_INVALID;
		}
		for (i = 0; i < t->nregs && r == 0; i++)
			r = store_regression_triage(
			    s, t->regs[i], c->state, c->note, now);
		if (r != 0) {
			buf_printf(ans, "not done: %s\n", store_errmsg(s));
			return r;
		}
		buf_printf(ans, "done: %zu regression(s) of %s marked %s\n",
		    t->nregs, x->job, c->state);
		return 0;
	case MAILCMD_RETEST:
	case MAILCMD_TEST:
		if (c->op == MAILCMD_TEST &&
		    (r = test_commit(&cand, s, x, c, from, now)) != 0) {
			buf_printf(ans, "not done: %s\n", store_errmsg(s));
			return r;
		}
		for (i = 0; i < x->ncmp && r == 0; i++) {
			for (j = 0; j < i; j++)
				if (x->cmp[j].pair_id == x->cmp[i].pair_id)
					break;
			if (j < i)
				continue;
			r = retest_pair(
			    s, &pid, x->cmp[i].pair_id, c, cand, now);
			if (r == 0) {
				made++;
				oc->pairs = xreallocarray(oc->pairs,
				    oc->npairs + 1, sizeof(*oc->pairs));
				oc->pairs[oc->npairs++] = pid;
			}
		}
		t->pairs += made;
		if (r == ERR_INVALID) {
			buf_puts(
			    ans, "not done: a pair's job spec is not JSON\n");
			return r;
		}
		if (r != 0) {
			buf_printf(ans, "not done: %s\n", store_errmsg(s));
			return r;
		}
		if (made == 0) {
			buf_printf(ans,
			    "not done: nothing to %s (the report has no "
			    "measured pair)\n",
			    c->op == MAILCMD_TEST ? "test against" : "retest");
			return ERR_INVALID;
		}
		if (c->op == MAILCMD_TEST)
			buf_printf(ans,
			    "done: %.12s (%s of %s) queued for %s against "
			    "the report's base %.12s, %zu pair(s); its "
			    "verdict shows on the dashboard as any "
			    "commit's\n",
			    c->sha, c->branch, c->url, x->job,
			    x->base_sha ? x->base_sha : "?", made);
		else
			buf_printf(ans,
			    "done: %zu pair(s) of %s queued again%s%s; their "
			    "verdict replaces this one\n",
			    made, x->job, c->labels[0] ? " on hosts " : "",
			    c->labels);
		return 0;
	case MAILCMD_BISECT:
		if (t->nregs == 0) {
			buf_puts(ans,
			    "not done: the report has no regression "
			    "to bisect\n");
			return ERR_INVALID;
		}
		{
			char *by = xasprintf("mail %s", from);

			r = bisect_begin(
			    s, conf, &bid, t->regs[0], by, now, &e);
			free(by);
		}
		if (r == ERR_EXISTS) {
			buf_printf(ans,
			    "done already: bisection %" PRId64
			    " of this regression is running\n",
			    bid);
			return 0;
		}
		if (r != 0) {
			buf_printf(ans, "not done: %s\n",
			    err_msg(&e)[0] ? err_msg(&e) : store_errmsg(s));
			return r;
		}
		buf_printf(ans, "done: bisection %" PRId64 " started\n", bid);
		return 0;
	}
	return ERR_INVALID;
}

/* ---- the answer ---- */

/* Queues the answer under m: 0, ERR_EXISTS (answered before), or -1. */
static int
answer(struct store *s, const struct dconf *conf, const struct mail_msg *m,
    const char *key, const char *from, const char *text, int64_t now)
{
	const struct daemon_config *dc = conf->dc;
	struct buf mail = BUF_INIT(ALERT_MAIL_MAX);
	struct buf refs = BUF_INIT(64 * 1024);
	struct alert_rcpt rc;
	struct alert_mail_in in;
	struct store_alert_new a;
	char *to[1], *env[1], *subject, *irt, *mid, dom[256] = "";
	const char *at;
	size_t i;
	int r;

	if (dc->alerts.smtp == NULL) {
		log_info("command mail %.200s: no alerts.email to answer by",
		    m->message_id);
		return 0;
	}
	if (alert_mail_addr(dom, sizeof(dom), dc->alerts.from) != 0 ||
	    (at = strchr(dom, '@')) == NULL)
		at = "@perfwatch.invalid";
	memset(&rc, 0, sizeof(rc));
	to[0] = env[0] =
	    (char *)(dc->alerts.test_to ? dc->alerts.test_to : from);
	rc.to = to;
	rc.nto = 1;
	rc.env = env;
	rc.nenv = 1;
	subject = m->tag.reply ? xstrdup(m->subject)
	                       : xasprintf("Re: %s", m->subject);
	irt = xasprintf("<%s>", m->message_id);
	/* The thread's newest ids: enough for any reader to place it. */
	for (i = m->nrefs > 10 ? m->nrefs - 10 : 0; i < m->nrefs; i++)
		buf_printf(&refs, "<%s> ", m->refs[i]);
	buf_puts(&refs, irt);
	{
		/* Stable per command mail: FNV-1a of its Message-ID. */
		unsigned long long h = 14695981039346656037ULL;
		const char *c;

		for (c = m->message_id; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		mid = xasprintf("<perfwatch.command.%016llx%s>", h, at);
	}
	memset(&in, 0, sizeof(in));
	in.from = dc->alerts.from;
	in.subject = subject;
	in.message_id = mid;
	in.in_reply_to = irt;
	in.references = refs.data;
	in.rcpt = &rc;
	in.text = text;
	in.event = "command";
	in.now = now;
	r = alert_mail_build(&mail, &in);
	if (r == 0) {
		memset(&a, 0, sizeof(a));
		a.kind = "email";
		a.key = key;
		a.target = env[0];
		a.subject = subject;
		a.payload = mail.data;
		r = store_alert_mail_put(s, &a, now);
	}
	buf_release(&mail);
	buf_release(&refs);
	free(subject);
	free(irt);
	free(mid);
	return r;
}

/*
 * The tips of the branches the test lines name, listed from their
 * remotes before anything is written (no store transaction waits on
 * the network).  The count of lines whose branch is not there, each
 * named in ans.
 */
static size_t
resolve_tests(struct mailcmd_cmd *cmds, const struct mailcmd_line *lines,
    size_t n, const struct dconf *conf, struct buf *ans, struct outcome *oc)
{
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		struct gitm_repo *g;

		if (cmds[i].op != MAILCMD_TEST || cmds[i].url == NULL)
			continue;
		g = gitm_repo_new(
		    conf->dc->mirrors, "mail-test", cmds[i].url, NULL);
		if (gitm_remote_branch(cmds[i].sha, g, cmds[i].branch) != 0) {
			buf_printf(ans, "> #perfwatch %s\nline %zu: %s\n\n",
			    lines[i].text, lines[i].line, gitm_errmsg(g));
			outcome_why(&oc[i], gitm_errmsg(g));
			bad++;
		}
		gitm_repo_free(g);
	}
	return bad;
}

/*
 * "#perfwatch test" with the patch inline in m: the patch applied on
 * the base of the report's series, as a one-patch series of its own
 * whose root is m, ingested and measured as a posted series is (the
 * inbox's jobs against that base; its report answers m).  0 with ans
 * saying what happened, or -1 with e set (the store or the mirror
 * failed).
 */
static int
test_inline(struct store *s, const struct dconf *conf,
    const struct cfg_inbox *inbox, const struct store_alert_info *x,
    const struct mail_msg *m, int64_t now, struct buf *ans, size_t *pairs,
    struct outcome *oc, struct err *e)
{
	const struct daemon_config *dc = conf->dc;
	const struct cfg_tree *tree = NULL;
	struct store_series_row row;
	struct series_result res;
	struct series_ingest si;
	struct mail_series ms;
	long seq1 = 0;
	size_t i;
	int r;

	if (x->series_id == 0) {
		buf_puts(ans,
		    "not done: the report is of no series, so there is "
		    "no base to apply the patch on; name a branch: test "
		    "<git-url> <branch>\n");
		return 0;
	}
	if ((r = store_series_get(s, &row, x->series_id)) != 0) {
		if (r == ERR_NOTFOUND) {
			store_errclear(s);
			buf_puts(
			    ans, "not done: the report's series is gone\n");
			return 0;
		}
		return err_set(e, "%s", store_errmsg(s));
	}
	for (i = 0; i < dc->ntrees && row.tree != NULL; i++)
		if (strcmp(dc->trees[i].name, row.tree) == 0)
			tree = &dc->trees[i];
	if (tree == NULL || row.branch == NULL) {
		buf_puts(ans,
		    "not done: the report's series is on no tree or branch "
		    "this perfwatch still watches\n");
		store_series_release(&row);
		return 0;
	}
	memset(&ms, 0, sizeof(ms));
	ms.cover = -1;
	ms.patches = &seq1;
	ms.total = ms.version = ms.found = ms.complete = 1;
	ms.title = m->tag.title[0] ? m->tag.title : m->subject;
	ms.author = m->from;
	ms.message_id = m->message_id;
	ms.base_commit = row.base_sha ? row.base_sha : "";
	ms.branch_tag = "";
	ms.date = m->date;
	memset(&si, 0, sizeof(si));
	si.conf = conf;
	si.tree = tree;
	si.branch = row.branch;
	si.inbox = inbox != NULL ? inbox->name : row.inbox;
	si.now = now;
	r = series_ingest_one(&res, s, &si, m, &ms, e);
	if (r == 0)
		*pairs = res.pairs;
	if (r == 0 && res.n == 1 && (res.applied == 1 || res.known > 0)) {
		oc->done = 1;
		oc->series = res.ids[0];
	}
	if (r == 0 && res.n == 1 && res.applied == 1)
		buf_printf(ans,
		    "done: the patch applied on %.12s as series %lld, %zu "
		    "pair(s) queued; its report answers this mail\n",
		    row.base_sha ? row.base_sha : "the branch",
		    (long long)res.ids[0], res.pairs);
	else if (r == 0 && res.known > 0)
		buf_printf(
		    ans, "done already: series %lld\n", (long long)res.ids[0]);
	else if (r == 0 && res.n == 1) {
		struct store_series_row t;

		if (store_series_get(s, &t, res.ids[0]) == 0) {
			buf_printf(ans, "not done: series %lld %s: %.400s\n",
			    (long long)res.ids[0], t.state ? t.state : "?",
			    t.error ? t.error : "?");
			store_series_release(&t);
		} else {
			store_errclear(s);
			buf_puts(ans, "not done: the patch was not applied\n");
		}
	}
	series_result_release(&res);
	store_series_release(&row);
	return r;
}

/* The report m answers: 0 and *x, or ERR_NOTFOUND. */
static int
find_report(
    struct store_alert_info **x, struct store *s, const struct mail_msg *m)
{
	size_t k;

	for (k = 0; k <= m->nrefs; k++) {
		const char *id =
		    k == 0 ? m->in_reply_to : m->refs[m->nrefs - k];
		char sha[13], job[CAP_NAME + 1];
		int64_t host, commit;
		int r;

		if (mailcmd_report_id(sha, job, sizeof(job), &host, id) != 0)
			continue;
		r = store_alert_report_find(s, &commit, sha, job, host);
		if (r == ERR_NOTFOUND) {
			store_errclear(s);
			continue;
		}
		if (r != 0)
			return -1;
		r = store_alert_info_get(s, x, commit, job, host);
		if (r == ERR_NOTFOUND)
			store_errclear(s);
		return r;
	}
	return ERR_NOTFOUND;
}

/*
 * Records what each line came to (store/mail_commands.h), in the
 * caller's transaction: 0, ERR_EXISTS (recorded before), or -1.
 */
static int
record(struct store *s, const struct store_alert_info *x,
    const struct mail_msg *m, const char *from,
    const struct mailcmd_line *lines, char (*parsed)[MAILCMD_NORMAL],
    const struct outcome *oc, size_t n, int64_t now)
{
	struct store_mail_command_new c;
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		memset(&c, 0, sizeof(c));
		c.series_id = x->series_id;
		c.made_series_id = oc[i].series;
		c.commit_sha = x->sha;
		c.job = x->job;
		c.message_id = m->message_id;
		c.sender = from;
		c.command = lines[i].text;
		c.parsed = parsed[i][0] ? parsed[i] : NULL;
		c.line = (int64_t)lines[i].line;
		c.done = oc[i].done;
		c.reason = oc[i].why;
		c.pairs = oc[i].pairs;
		c.npairs = oc[i].npairs;
		r = store_mail_command_put(s, &c, now);
	}
	return r;
}

/* Every line of n that says nothing yet: refused for line bad's sake
 * (0: for another line's), its pairs gone with the rollback. */
static void
refuse_rest(
    struct outcome *oc, size_t n, const struct mailcmd_line *lines, size_t bad)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i == bad && lines != NULL)
			continue;
		oc[i].done = 0;
		free(oc[i].pairs);
		oc[i].pairs = NULL;
		oc[i].npairs = 0;
		if (lines != NULL)
			snprintf(oc[i].why, sizeof(oc[i].why),
			    "nothing was done: line %zu could not be "
			    "carried out",
			    lines[bad].line);
		else if (oc[i].why[0] == '\0')
			snprintf(oc[i].why, sizeof(oc[i].why), "%s",
			    "nothing was done: another line of the mail was "
			    "refused");
	}
}

static int
handle_once(struct mailcmd_result *out, struct store *s,
    const struct dconf *conf, const struct cfg_inbox *inbox,
    const struct mail_msg *m, int64_t now, struct err *e)
{
	struct mailcmd_line lines[MAILCMD_MAX];
	struct mailcmd_cmd cmds[MAILCMD_MAX];
	struct outcome oc[MAILCMD_MAX];
	char words[MAILCMD_MAX][96], from[256], *key = NULL;
	char parsed[MAILCMD_MAX][MAILCMD_NORMAL];
	struct target t;
	struct buf ans = BUF_INIT(64 * 1024), why = BUF_INIT(512);
	size_t n, i, bad = 0, at;
	int r = 0, ok, open_tx = 0, acted = 0;

	memset(out, 0, sizeof(*out));
	memset(&t, 0, sizeof(t));
	memset(oc, 0, sizeof(oc));
	memset(parsed, 0, sizeof(parsed));
	n = mailcmd_parse(lines, MAILCMD_MAX, m->body);
	if (n == 0 || m->message_id[0] == '\0')
		return 0;
	r = find_report(&t.x, s, m);
	if (r == ERR_NOTFOUND)
		return 0; /* not an answer to one of ours */
	if (r != 0)
		return err_set(e, "%s", store_errmsg(s));
	key = xasprintf("command/%.900s", m->message_id);
	/* Answered before, or (with no mail to answer by) recorded. */
	if ((r = store_alert_key_known(s, key)) == 0)
		r = store_mail_command_known(s, m->message_id);
	if (r != 0) {
		store_alert_info_release(t.x);
		free(key);
		if (r < 0)
			return err_set(e, "%s", store_errmsg(s));
		out->handled = 1; /* read again: acted on before */
		return 0;
	}
	out->handled = 1;
	if (alert_mail_addr(from, sizeof(from), m->from) != 0)
		snprintf(from, sizeof(from), "%s", "unknown");
	buf_printf(&ans, "On the report of %.12s (%s), perfwatch read:\n\n",
	    t.x->sha ? t.x->sha : "?", t.x->job);
	ok = strcmp(from, "unknown") != 0 && allowed(conf, inbox, t.x, from);
	if (ok &&
	    store_alert_regressions(
	        s, &t.regs, &t.nregs, t.x->pairs, t.x->npairs) != 0) {
		r = err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	for (i = 0; i < n; i++) {
		snprintf(words[i], sizeof(words[i]), "%s", lines[i].text);
		buf_reset(&why);
		if (mailcmd_cmd_parse(
		        &cmds[i], words[i], conf->dc, from, &why) != 0) {
			buf_printf(&ans, "> #perfwatch %s\nline %zu: %s\n\n",
			    lines[i].text, lines[i].line, why.data);
			outcome_why(&oc[i], why.data);
			bad++;
		} else
			mailcmd_cmd_normal(
			    parsed[i], sizeof(parsed[i]), &cmds[i]);
	}
	for (i = 0; i < n && bad == 0; i++)
		if (cmds[i].op == MAILCMD_TEST && cmds[i].url == NULL &&
		    (n != 1 || m->patch == NULL || m->patch_off < 0)) {
			buf_printf(&ans,
			    "> #perfwatch %s\nline %zu: test without a URL "
			    "takes the patch inline in this mail (git "
			    "format-patch's form, after the command), as the "
			    "mail's only command\n\n",
			    lines[i].text, lines[i].line);
			outcome_why(&oc[i],
			    "test without a URL takes the patch inline in "
			    "this mail, as the mail's only command");
			bad++;
		}
	if (!ok) {
		buf_printf(&ans,
		    "Not done: %s may not command this report (its author, "
		    "the daemon's maintainers, or anyone where the list "
		    "allows it may).\n",
		    from);
		for (i = 0; i < n; i++)
			snprintf(oc[i].why, sizeof(oc[i].why),
			    "%s may not command this report (its author, the "
			    "daemon's maintainers, or anyone where the list "
			    "allows it may)",
			    from);
	} else if (bad == 0 && cmds[0].op == MAILCMD_TEST &&
	    cmds[0].url == NULL) {
		buf_printf(&ans, "> #perfwatch %s\n", lines[0].text);
		at = ans.len;
		if (test_inline(s, conf, inbox, t.x, m, now, &ans, &out->pairs,
		        &oc[0], e) != 0) {
			r = -1;
			goto out;
		}
		outcome_why(&oc[0], ans.data + at);
		buf_putc(&ans, '\n');
		acted = oc[0].done;
	} else if (bad > 0 ||
	    (bad = resolve_tests(cmds, lines, n, conf, &ans, oc)) > 0) {
		buf_puts(&ans,
		    "Nothing was done: fix the line(s) above and "
		    "send them again.\n");
		refuse_rest(oc, n, NULL, 0);
	} else {
		if (store_begin(s) != 0) {
			r = err_set(e, "%s", store_errmsg(s));
			goto out;
		}
		for (i = 0; i < n && r == 0; i++) {
			buf_printf(&ans, "> #perfwatch %s\n", lines[i].text);
			at = ans.len;
			r = apply(
			    &t, s, conf, &cmds[i], from, now, &ans, &oc[i]);
			oc[i].done = r == 0;
			outcome_why(&oc[i], ans.data + at);
			buf_putc(&ans, '\n');
		}
		if (r != 0 && store_tx_lost(s)) {
			/* Lost to another transaction: not the line's fault;
			 * mailcmd_handle runs it all again. */
			store_rollback(s);
			r = err_set(e, "%s", store_errmsg(s));
			goto out;
		}
		if (r != 0) {
			store_rollback(s);
			store_errclear(s);
			t.pairs = 0;
			buf_puts(&ans,
			    "Nothing was done: a line could not be "
			    "carried out.\n");
			refuse_rest(oc, n, lines, i - 1);
		} else
			open_tx = acted = 1; /* the record and answer join it */
	}
	if (conf->dc->public_url != NULL && t.x->sha != NULL)
		buf_printf(&ans, "\ndashboard: %s/commit/%s\n",
		    conf->dc->public_url, t.x->sha);
	buf_puts(&ans,
	    "\n-- \nperfwatch, a performance-regression CI for "
	    "memcg work\n");
	/* What was done, its record and its answer: one transaction. */
	if (!open_tx && store_begin(s) != 0) {
		r = err_set(e, "%s", store_errmsg(s));
		goto out;
	}
	r = record(s, t.x, m, from, lines, parsed, oc, n, now);
	if (r == 0)
		r = answer(s, conf, m, key, from, ans.data, now);
	if (r == 0 && store_commit(s) != 0)
		r = -1;
	else if (r != 0)
		store_rollback(s);
	if (r == ERR_EXISTS) {
		store_errclear(s); /* answered meanwhile: nothing done */
		r = 0;
	} else if (r != 0) {
		r = err_set(e, "%s", store_errmsg(s));
	} else if (acted) {
		if (open_tx)
			out->pairs = t.pairs;
		log_info("command mail %.200s from %s: %zu line(s) done, "
		         "%zu pair(s) queued",
		    m->message_id, from, n, out->pairs);
	} else
		log_info("command mail %.200s from %s: refused (%s)",
		    m->message_id, from, !ok ? "sender not allowed" : "a line");
out:
	for (i = 0; i < n; i++)
		free(oc[i].pairs);
	buf_release(&ans);
	buf_release(&why);
	free(t.regs);
	store_alert_info_release(t.x);
	free(key);
	return r;
}

/* mailcmd_handle's arguments, for store_tx_retry. */
struct handle_args {
	struct mailcmd_result *out;
	const struct dconf *conf;
	const struct cfg_inbox *inbox;
	const struct mail_msg *m;
	int64_t now;
	struct err *e;
};

static int
handle_tx(struct store *s, void *arg)
{
	struct handle_args *a = arg;

	return handle_once(a->out, s, a->conf, a->inbox, a->m, a->now, a->e);
}

/* The whole of a command mail again when its transaction lost to
 * another: what it did and its answer are built afresh each time. */
int
mailcmd_handle(struct mailcmd_result *out, struct store *s,
    const struct dconf *conf, const struct cfg_inbox *inbox,
    const struct mail_msg *m, int64_t now, struct err *e)
{
	struct handle_args a = { out, conf, inbox, m, now, e };

	return store_tx_retry(s, handle_tx, &a);
}
