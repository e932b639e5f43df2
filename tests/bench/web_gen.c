/*
 * web_gen: the database behind `make bench-web` (tests/bench/web_bench.sh),
 * written with the store's own functions, the way the daemon writes it:
 * commits recorded on a branch, a pair triggered per commit on one of four
 * hosts, each job claimed, its runs stored and finished, and the pair's
 * verdict made by daemon/verdict.c (comparisons, regressions, history,
 * change points).  Every 100th pair measures a three-patch mailed series
 * instead of a tree commit.  Then what the alert and bisect workers make
 * of those verdicts (below).  No HTTP: a million runs through the runner
 * API one by one would take an hour here.
 *
 *   web_gen DB FROM TO [RUNS [REAL [NOISE]]]
 *
 * makes pairs FROM..TO-1 (RUNS runs per job, default 10: each pair is
 * 2 * RUNS runs), so a second call with FROM = the first call's TO grows
 * the same history.  Only the last REAL pairs (default all) get the real
 * verdict, which costs ~20 ms of analysis a pair here (17 minutes for a
 * million runs); the others a quick one (quick_verdict below).  The
 * values step by 10 % every 100 commits (a regression or an improvement
 * the verdicts find) over 0.5 % noise from a fixed seed.  Prints what it
 * stored (its reports, deliveries and bisections too: at 100,000 runs
 * with REAL 2000, 1,263 regressions (1,215 of them noise, below),
 * 5,000 reports, 1,274 reports sent, 6,370 deliveries, 12 bisections
 * with 100 pairs of their own).
 *
 * Alerts.  After each hundred verdicts every group the alert worker
 * would take (store_alert_groups) is decided by the worker's own code,
 * alert_group_decide (daemon/alert.c), under a config with e-mail and
 * four webhooks: every pair gets its alert_reports row, and a report
 * with changed metrics queues a mail and four webhook deliveries.  The
 * level steps make about 500 such reports at a million runs; a
 * long-lived service reports far more (many jobs and points a commit,
 * noisy benchmarks), so the quick verdict stores NOISE % (default 40)
 * of the pairs it finds unchanged as a noisy benchmark's: one metric
 * unstable at its small change (noise_metric, drawn from the commit).
 * The store files each as a regression, as it files every unstable
 * verdict (none is bisected: its change is below min_effect), and the
 * worker reports it as it reports any; the real verdicts of the last
 * REAL pairs have no noise.  At a million runs (REAL 2000) that is
 * 19,119 noise regressions (of 19,617), 19,740 reports sent and 98,700
 * deliveries.  What became of each delivery is drawn from its id
 * (web_gen sends nothing) and stored as the worker stores an attempt
 * (store_alert_attempt): most sent, some failed (a 404, a 410, retries
 * run out after eight attempts), some sent after a retry or two.  The
 * newest PEND_TAIL deliveries stay pending (a rate-limited mail, a
 * webhook answering 503) until PENDING_UNTIL, far ahead: the bench's
 * daemon has no alerts configured and would fail a due one at once.
 * The worker's code logs a line for each report it sends (web_bench.sh
 * leaves those out).
 *
 * Bisections.  A pair measures one commit against its parent, a range
 * the daemon never bisects; the regression of ops at every fourth level
 * step (commit i, i % BISECT_EVERY == 0) is bisected as if its pair had
 * measured a push of BISECT_SPAN commits (good end i - BISECT_SPAN):
 * store_bisect_create from the regression's own source, then steps as
 * daemon/bisect.c's bisect_advance takes them, without its git mirror
 * (the range is the linear history, so the look itself, bisect_look, is
 * web_gen's): bisect_next picks each commit, bisect_make_pair makes its
 * two pairs of the regression's spec on its host, measured and given
 * real verdicts, bisect_classify classifies it (its note by
 * bisect_step_note, read back by bisect_step_class), bisect_verify_note
 * words a verification and bisect_finish ends the bisection, all the
 * bisect worker's own functions.  The culprit is verified against its
 * parent and by a revert (a stub commit measured at the level before
 * it), and the ended bisection brings its report's follow-up (a mail and
 * four webhooks).  Every fourth bisection has a step limit of 3 and ends
 * inconclusive; those of the last RUN_TAIL pairs are left running after
 * one to three steps, the last one's jobs queued (a later call that
 * grows the history measures them and goes on; the bench's daemon,
 * which has no tree "bench" to bisect in, ends them inconclusive at
 * start).  A bisection's pairs take ids between the history's, as the
 * daemon's do: pair i is not pair id i + 1 (web_bench.sh picks its
 * objects with SQL).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/err.h"
#include "common/json.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "config/config.h"
#include "daemon/alert.h"
#include "daemon/bisect.h"
#include "daemon/verdict.h"
#include "store/alerts.h"
#include "store/bisect.h"
#include "store/claim.h"
#include "store/history.h"
#include "store/hosts.h"
#include "store/jobs.h"
#include "store/pairs.h"
#include "store/runs.h"
#include "store/series.h"
#include "store/store.h"
#include "store/watch.h"

#define HOSTS 4
#define CHUNK 100        /* pairs per write transaction */
#define SERIES_EVERY 100 /* every 100th pair measures a series */
#define STEP_EVERY 100   /* commits between level steps */
#define T0 1700000000

#define NOISE 40     /* % of quick unchanged pairs: one metric unstable */
#define HOOKS 4      /* webhooks beside the mail */
#define PEND_TAIL 30 /* the newest deliveries, left pending */
#define PENDING_UNTIL ((int64_t)4102444800) /* 2100-01-01 */
#define BISECT_EVERY 400 /* a regression at commit i % 400 == 0 */
#define BISECT_SPAN 16   /* commits in a bisection's range */
#define BISECT_STEPS 16  /* the daemon's default step limit */
#define BISECT_SHORT 4   /* every 4th bisection: a step limit of 3 */
#define RUN_TAIL 800     /* bisections of the last 800 pairs: running */
#define STEP_S 1200      /* seconds a bisection step takes */
#define REVERT_KIND 7    /* sha_of kind of a culprit's revert */

static const char *const host_names[HOSTS] = { "epyc-1", "epyc-2", "xeon-1",
	"xeon-2" };

/* What one call made, for the line it prints. */
struct gen {
	struct store *s;
	struct daemon_config dc;
	int64_t hosts[HOSTS], noise_pct;
	int64_t reg_after; /* the bisect candidates read (regression id) */
	int64_t reports, sent_reports, noisy, deliveries;
	int64_t sent, pending, failed;
	int64_t bisections, bdone, binc, brunning, bsteps, bpairs, bruns;
};

static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The sha of tree commit i (kind 0), of patch k of series i (kind k, 1..3)
 * or of the revert of tree commit i (REVERT_KIND). */
static void
sha_of(char out[41], int64_t i, int kind)
{
	snprintf(out, 41, "%016" PRIx64 "%016" PRIx64 "%08x",
	    mix((uint64_t)i * 8 + (uint64_t)kind), mix((uint64_t)i + 77777),
	    (unsigned)(i * 8 + kind));
}

/* The commit index and kind a sha of sha_of ends with; -1 for another. */
static int64_t
sha_index(const char *sha, int *kind)
{
	unsigned long v;

	*kind = -1;
	if (sha == NULL || strlen(sha) != 40)
		return -1;
	v = strtoul(sha + 32, NULL, 16);
	*kind = (int)(v % 8);
	return (int64_t)(v / 8);
}

/* The level of commit i: 1.0, or 1.1 in every other block of commits. */
static double
level(int64_t i)
{
	return (i / STEP_EVERY) % 2 ? 1.1 : 1.0;
}

/* The level a commit measures at: a series patch sits on tree commit i,
 * a revert of commit i undoes it. */
static double
sha_level(const char *sha)
{
	int kind;
	int64_t i = sha_index(sha, &kind);

	if (i < 0)
		return 1.0;
	return kind == REVERT_KIND ? level(i - 1) : level(i);
}
/* A normal deviate from a counter-based generator (Box-Muller). */
static double
noise(uint64_t key)
{
	double u1 = ((double)(mix(key) >> 11) + 1) / 9007199254740994.0;
	double u2 = (double)(mix(key ^ 0xabcdef) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void
die(struct store *s, const char *what)
{
	fprintf(stderr, "web_gen: %s: %s\n", what, s ? store_errmsg(s) : "");
	exit(1);
}

static char *
spec_text(const char *sha, int64_t runs)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:[s, s], s:{s:s}, s:{s:s, s:s},"
	                      " s:I, s:I, s:{s:{s:s, s:f}, s:{s:s, s:f}}}",
	    "name", "kv", "point", "x=1", "parser", "keyvalue", "command",
	    "echo", "x={x}", "params", "x", "1", "tree", "url",
	    "https://example.org/bench.git", "commit", sha, "runs",
	    (json_int_t)runs, "max_runs", (json_int_t)runs, "metrics", "ops",
	    "better", "higher", "min_effect_pct", 3.0, "latency_p99", "better",
	    "lower", "min_effect_pct", 3.0);
	char *t = pwjson_dump(o);

	json_decref(o);
	return t;
}

/* Stores the runs of job, which host holds, at level lv and finishes it. */
static void
put_runs(struct store *s, int64_t host, int64_t job, int64_t runs, double lv,
    int64_t now, int64_t *nruns)
{
	int64_t k;

	for (k = 0; k < runs; k++) {
		struct store_metric m[2];
		struct store_run r;
		char raw[128];
		uint64_t key = (uint64_t)job * 64 + (uint64_t)k;

		m[0].name = "ops";
		m[0].unit = "ops/s";
		m[0].better = "higher";
		m[0].value = 1000 * lv * (1 + 0.005 * noise(key));
		m[1].name = "latency_p99";
		m[1].unit = "us";
		m[1].better = "lower";
		m[1].value = 500 / lv * (1 + 0.005 * noise(key ^ 0x5555));
		snprintf(raw, sizeof(raw), "ops=%.3f\nlatency_p99=%.3f\n",
		    m[0].value, m[1].value);
		memset(&r, 0, sizeof(r));
		r.job_id = job;
		r.index = k;
		r.status = "ok";
		r.duration_s = 1.0;
		r.raw = raw;
		r.raw_len = strlen(raw);
		r.metrics = m;
		r.nmetrics = 2;
		if (store_run_add(s, host, &r, now) != 0)
			die(s, "run");
		(*nruns)++;
	}
	if (store_finish(s, host, job, 1, NULL, now) != 0)
		die(s, "finish");
}

/* Claims job (it must be the one the host gets), stores its runs at
 * level lv and finishes it. */
static void
run_job(struct store *s, int64_t host, int64_t job, int64_t runs, double lv,
    int64_t now, int64_t *nruns)
{
	struct store_claimed c;

	if (store_claim(s, &c, host, now, 600) != 0)
		die(s, "claim");
	if (c.job_id != job) {
		fprintf(stderr,
		    "web_gen: host %" PRId64 " claimed another job "
		    "than %" PRId64 "\n",
		    host, job);
		exit(1);
	}
	store_claimed_release(&c);
	put_runs(s, host, job, runs, lv, now, nruns);
}

/*
 * Claims the next job of host, whatever it is (a bisection's), and runs
 * it at the level of the commit its spec names: 0, or ERR_NOTFOUND when
 * the host has nothing queued.
 */
static int
run_claimed(struct gen *g, int64_t host, int64_t now)
{
	struct store_claimed c;
	struct err e = { 0 };
	json_t *spec;
	const char *sha;
	int r = store_claim(g->s, &c, host, now, 600);

	if (r == ERR_NOTFOUND) {
		store_errclear(g->s);
		return ERR_NOTFOUND;
	}
	if (r != 0)
		die(g->s, "claim");
	spec = pwjson_parse(c.spec_json, strlen(c.spec_json), &e);
	sha = json_string_value(
	    json_object_get(json_object_get(spec, "tree"), "commit"));
	if (sha == NULL) {
		fprintf(stderr, "web_gen: job %" PRId64 " has no commit\n",
		    c.job_id);
		exit(1);
	}
	put_runs(g->s, host, c.job_id, c.runs, sha_level(sha), now, &g->bruns);
	json_decref(spec);
	store_claimed_release(&c);
	return 0;
}
/*
 * Whether the quick verdict of commit i's pair, with both metrics
 * unchanged, stores one of them unstable (NOISE %), and which: 1 ops,
 * 0 latency_p99, -1 none.  Drawn from i, so a grown history keeps it.
 */
static int
noise_metric(const struct gen *g, int64_t i)
{
	uint64_t h = mix((uint64_t)i ^ 0x6e6f697365ULL);

	if ((int64_t)(h % 100) >= g->noise_pct)
		return -1;
	return (h & 256) != 0;
}

/*
 * The quick verdict of commit i's pair, for the bulk of a large history:
 * per metric the medians and the change as the verdict defines it
 * (analysis_change_pct), regression or improvement beyond the spec's 3 %,
 * else unchanged; no interval, p-value or change point (stored as
 * unknown).  A pair whose metrics are both unchanged is, for NOISE % of
 * the commits (noise_metric), a noisy benchmark's: one metric's verdict
 * is unstable (at its small change; the store files it as a regression,
 * never bisected: below min_effect), which the alert worker reports.
 * The comparisons, regressions, history points and the analysed mark
 * are written through the store as verdict.c writes them.  Returns the
 * regressions filed (regression and unstable verdicts).
 */
static int64_t
quick_verdict(struct gen *g, int64_t i, int64_t pair, int64_t host,
    int64_t cand_job, int64_t now)
{
	static const char *const names[2] = { "latency_p99", "ops" };
	struct store *s = g->s;
	struct store_values o;
	struct store_comparison cmp[2];
	double cm[2];
	int64_t nreg = 0;
	size_t k, m;
	int noisy;

	if (store_verdict_value_list(s, &o, pair) != 0)
		die(s, "values");
	for (m = 0; m < 2; m++) {
		double b[32], c[32];
		size_t nb = 0, nc = 0;

		for (k = 0; k < o.n; k++) {
			const char *role = o.v[k].role;
			double v = o.v[k].value;

			if (strcmp(o.v[k].metric, names[m]) != 0)
				continue;
			if (strcmp(role, "base") == 0 && nb < 32)
				b[nb++] = v;
			else if (strcmp(role, "candidate") == 0 && nc < 32)
				c[nc++] = v;
		}
		memset(&cmp[m], 0, sizeof(cmp[m]));
		cmp[m].metric = names[m];
		cmp[m].unit = m == 0 ? "us" : "ops/s";
		cmp[m].better = m == 0 ? "lower" : "higher";
		cmp[m].n_base = (int64_t)nb;
		cmp[m].n_cand = (int64_t)nc;
		cmp[m].change_pct = analysis_change_pct(b, nb, c, nc);
		cmp[m].base_median = analysis_median_inplace(b, nb);
		cm[m] = analysis_median_inplace(c, nc);
		cmp[m].cand_median = cm[m];
		cmp[m].ci_low = cmp[m].ci_high = NAN;
		cmp[m].p = cmp[m].p_adjusted = NAN;
		cmp[m].min_effect = 3;
		cmp[m].final = 1;
		cmp[m].note = "web_gen: quick verdict (no interval)";
		if (fabs(cmp[m].change_pct) < 3)
			cmp[m].verdict = "unchanged";
		else if ((cmp[m].change_pct > 0) == (m == 1))
			cmp[m].verdict = "improvement";
		else {
			cmp[m].verdict = "regression";
			nreg++;
		}
	}
	store_values_release(&o);
	noisy = noise_metric(g, i);
	if (noisy >= 0 && strcmp(cmp[0].verdict, "unchanged") == 0 &&
	    strcmp(cmp[1].verdict, "unchanged") == 0) {
		cmp[noisy].verdict = "unstable";
		cmp[noisy].note = "web_gen: quick verdict (no interval), "
		                  "noise: unstable, as a noisy benchmark's";
		nreg++;
		g->noisy++;
	}
	if (store_begin(s) != 0)
		die(s, "begin");
	for (m = 0; m < 2; m++) {
		struct store_series_key key;
		int64_t cid = 0;

		if (store_verdict_put(s, &cid, pair, &cmp[m], now) != 0)
			die(s, "comparison");
		memset(&key, 0, sizeof(key));
		key.tree = "bench";
		key.branch = "master";
		key.host_id = host;
		key.job = "kv";
		key.point = "x=1";
		key.metric = names[m];
		key.better = cmp[m].better;
		if (store_history_append(s, NULL, NULL, &key, pair, cand_job,
		        cid, cm[m], now) != 0)
			die(s, "history");
	}
	if (store_verdict_done(s, pair, now) != 0 || store_commit(s) != 0)
		die(s, "verdict done");
	return nreg;
}

/* A three-patch series on top of tree commit i - 1: its tip's row. */
static int64_t
make_series(
    struct store *s, int64_t tree, int64_t i, const char *base, int64_t now)
{
	struct store_series_new sn;
	int64_t id, cid = 0, k;
	char mid[64], parent[41], sha[41], title[96];

	snprintf(mid, sizeof(mid), "<bench-%" PRId64 "@example.org>", i);
	snprintf(title, sizeof(title),
	    "mm: memcg: batch the stock refill, take %" PRId64, i);
	memset(&sn, 0, sizeof(sn));
	sn.inbox = "linux-mm";
	sn.message_id = mid;
	sn.title = title;
	sn.author = "A <a@example.org>";
	sn.version = 1;
	sn.total = 3;
	sn.found = 3;
	sn.date = now;
	sn.tree_id = tree;
	sn.branch = "master";
	if (store_series_create(s, &id, NULL, &sn, now) != 0)
		die(s, "series");
	snprintf(parent, sizeof(parent), "%s", base);
	for (k = 1; k <= 3; k++) {
		struct store_commit c;
		struct store_series_patch p;
		char pmid[80], subj[96];

		sha_of(sha, i, (int)k);
		snprintf(subj, sizeof(subj),
		    "[PATCH %" PRId64 "/3] mm: memcg: part %" PRId64, k, k);
		memset(&c, 0, sizeof(c));
		c.sha = sha;
		c.parents = parent;
		c.author = "A <a@example.org>";
		c.committer = "perfwatch <perfwatch@localhost>";
		c.author_date = c.commit_date = now;
		c.subject = subj;
		c.paths_json = "[\"mm/memcontrol.c\"]";
		if (store_commit_record(s, &cid, NULL, tree, &c, "", now) != 0)
			die(s, "series commit");
		snprintf(pmid, sizeof(pmid),
		    "<bench-%" PRId64 ".%" PRId64 "@example.org>", i, k);
		memset(&p, 0, sizeof(p));
		p.seq = k;
		p.message_id = pmid;
		p.subject = subj;
		p.author = c.author;
		p.date = now;
		p.commit_id = cid;
		if (store_series_patch_put(s, id, &p) != 0)
			die(s, "patch");
		memcpy(parent, sha, sizeof(parent));
	}
	if (store_series_state(s, id, "applied", NULL, base, cid, NULL, now) !=
	    0)
		die(s, "series state");
	return cid;
}

/* ---- alerts: what daemon/alert.c's worker makes of the verdicts ---- */

/* The alerts: config: a list, the author, a Cc list of the tree, and
 * four webhooks (one Slack-compatible). */
static void
alert_config(struct daemon_config *dc)
{
	static char *to[] = { "linux-mm-perf@example.org" };
	static char *cc[] = { "cgroups@example.org" };
	static struct cfg_alert_list lists[1];
	static struct cfg_webhook hooks[HOOKS];
	static const char *const urls[HOOKS] = {
		"https://chat.example.org/hooks/perf",
		"https://tickets.example.org/api/perfwatch",
		"https://dash.example.org/ingest/alerts",
		"https://bot.example.org/perfwatch?team=mm",
	};
	size_t i;

	memset(dc, 0, sizeof(*dc));
	dc->public_url = "https://perfwatch.example.org";
	dc->alerts.smtp = "smtp://mail.example.org:25";
	dc->alerts.from = "perfwatch <perfwatch@example.org>";
	dc->alerts.to.v = to;
	dc->alerts.to.n = 1;
	dc->alerts.reply_to_series = 1;
	dc->alerts.mail_author = 1;
	lists[0].tree = "bench";
	lists[0].cc.v = cc;
	lists[0].cc.n = 1;
	dc->alerts.lists = lists;
	dc->alerts.nlists = 1;
	for (i = 0; i < HOOKS; i++) {
		hooks[i].url = (char *)urls[i];
		hooks[i].slack = i == 0;
	}
	dc->alerts.webhooks = hooks;
	dc->alerts.nwebhooks = HOOKS;
}

/* The report stored for group grp: 0 and *out, or ERR_NOTFOUND. */
static int
report_of(struct gen *g, struct store_alert_report *out,
    const struct store_alert_group *grp)
{
	struct store_alert_info k;
	char *key;
	int r;

	memset(&k, 0, sizeof(k));
	k.commit_id = grp->commit_id;
	k.job = grp->job;
	k.host_id = grp->host_id;
	key = alert_report_key(&k);
	r = store_alert_report_get(g->s, out, key);
	free(key);
	if (r != 0 && r != ERR_NOTFOUND)
		die(g->s, "alert report");
	store_errclear(g->s);
	return r;
}

/*
 * One group decided at now by the alert worker's own code
 * (alert_group_decide: the report, deduplicated by its signature, and
 * its deliveries queued), counted: a new report, a report sent, the
 * deliveries.  1 when it decided, 0 when the group has nothing to
 * report on (no report row after it).
 */
static int
decide(struct gen *g, const struct store_alert_group *grp, int64_t now)
{
	struct store_alert_report old, r;
	size_t made = 0;
	int have_old = report_of(g, &old, grp) == 0;

	if (alert_group_decide(g->s, &g->dc, grp, now, &made) != 0)
		die(g->s, "alert decide");
	store_errclear(g->s);
	g->deliveries += (int64_t)made;
	if (report_of(g, &r, grp) != 0) {
		if (have_old)
			store_alert_report_release(&old);
		return 0;
	}
	g->reports += !have_old;
	g->sent_reports += r.sent_reports - (have_old ? old.sent_reports : 0);
	store_alert_report_release(&r);
	if (have_old)
		store_alert_report_release(&old);
	return 1;
}

/* One attempt of a delivery at *t; a retry comes after the worker's
 * backoff (30 s doubling, at most an hour). */
static void
attempt(struct gen *g, const struct store_alert *a, const char *state,
    const char *error, int64_t next_try, int64_t *t)
{
	const char *rcpt[8];
	char *list = NULL, *p, *save = NULL;
	size_t n = 0;

	if (strcmp(state, "sent") == 0 && strcmp(a->kind, "email") == 0) {
		list = xstrdup(a->target);
		for (p = strtok_r(list, ", ", &save); p != NULL && n < 8;
		     p = strtok_r(NULL, ", ", &save))
			rcpt[n++] = p;
	}
	if (store_alert_attempt(
	        g->s, a->id, state, error, next_try, rcpt, n, *t) != 0)
		die(g->s, "alert attempt");
	free(list);
}

/* Attempts that fail with error and are retried, tries of them. */
static void
retries(struct gen *g, const struct store_alert *a, const char *error,
    int tries, int64_t *t)
{
	int64_t wait = 30;
	int k;

	for (k = 0; k < tries; k++) {
		attempt(g, a, "pending", error, *t + wait, t);
		*t += wait;
		wait = wait * 2 < 3600 ? wait * 2 : 3600;
	}
}

/*
 * What became of a delivery queued at now, drawn from its id: web_gen
 * sends nothing, the worker's outcomes are stored as it stores them.  A
 * pending one (pend) waits until PENDING_UNTIL: a mail put off by the
 * rate limit, a webhook that answered 503.
 */
static void
deliver(struct gen *g, const struct store_alert *a, int64_t now, int pend)
{
	uint64_t u = mix((uint64_t)a->id * 31 + 7) % 1000;
	int64_t t = now + 2;
	size_t hook = HOOKS;
	const char *end = "sent", *why = NULL;
	size_t i;

	for (i = 0; i < HOOKS; i++)
		if (strcmp(a->target, g->dc.alerts.webhooks[i].url) == 0)
			hook = i;
	if (pend) {
		if (hook == HOOKS) {
			if (store_alert_postpone(g->s, a->id,
			        "rate limit: linux-mm-perf@example.org had 20 "
			        "mails in the last hour",
			        PENDING_UNTIL) != 0)
				die(g->s, "alert postpone");
		} else
			attempt(g, a, "pending", "HTTP 503 Service Unavailable",
			    PENDING_UNTIL, &t);
		g->pending++;
		return;
	}
	if (hook == HOOKS) {
		/* The mail: a greylisting relay now and then, given up
		 * after eight attempts rarely. */
		if (u >= 985) {
			retries(g, a, "SMTP 451 4.7.1 try again later", 7, &t);
			end = "failed";
			why = "SMTP 451 4.7.1 try again later";
		} else if (u >= 900)
			retries(g, a, "SMTP 451 4.7.1 greylisted", 1, &t);
	} else if (hook == 0 && u >= 990) {
		end = "failed";
		why = "HTTP 410 Gone";
	} else if (hook == 1 && u >= 900) {
		end = "failed";
		why = "HTTP 404 Not Found";
	} else if (hook == 2 && u >= 750) {
		retries(
		    g, a, "HTTP 503 Service Unavailable", u >= 950 ? 2 : 1, &t);
	} else if (hook == 3 && u >= 950) {
		retries(g, a, "connection timed out after 10000 ms", 7, &t);
		end = "failed";
		why = "connection timed out after 10000 ms";
	}
	attempt(g, a, end, why, t, &t);
	if (strcmp(end, "sent") == 0)
		g->sent++;
	else
		g->failed++;
}

/*
 * The queued deliveries but the newest keep, in the worker's order
 * (next_try, id), each at the time it was queued: delivered, or (pend)
 * left pending until PENDING_UNTIL.
 */
static void
deliver_queued(struct gen *g, int64_t keep, int pend)
{
	struct store_alert *a = NULL;
	int64_t left, failed;
	size_t n = 0, i;

	if (store_alert_counts(g->s, &left, &failed) != 0)
		die(g->s, "alert counts");
	for (left -= keep; left > 0; left -= (int64_t)n) {
		if (store_alert_due(g->s, &a, &n, PENDING_UNTIL - 1,
		        left < 64 ? (size_t)left : 64) != 0)
			die(g->s, "alert due");
		for (i = 0; i < n; i++)
			deliver(g, &a[i], a[i].created, pend);
		store_alerts_release(a, n);
		if (n == 0)
			break;
	}
}

/*
 * A pass of the alert worker over every group ready: each decided at
 * its newest verdict (or bisection end) plus 15 s, then the deliveries
 * made but the newest PEND_TAIL (see main).
 */
static void
alert_look(struct gen *g)
{
	struct store_alert_group *grp = NULL;
	size_t n = 0, i, done;

	do {
		if (store_alert_groups(g->s, &grp, &n, 256) != 0)
			die(g->s, "alert groups");
		for (i = done = 0; i < n; i++)
			done += (size_t)decide(g, &grp[i], grp[i].stamp + 15);
		store_alert_groups_release(grp, n);
		deliver_queued(g, PEND_TAIL, 0);
	} while (done > 0); /* a group with nothing to report stays due */
}

/* Delivers what an earlier call left pending, at now. */
static void
deliver_left(struct gen *g, int64_t now)
{
	struct store_alert *a = NULL;
	size_t n = 0, i;

	do {
		if (store_alert_due(g->s, &a, &n, PENDING_UNTIL, 64) != 0)
			die(g->s, "alert due");
		for (i = 0; i < n; i++)
			deliver(g, &a[i], now, 0);
		store_alerts_release(a, n);
	} while (n == 64);
}

/* ---- bisections: what daemon/bisect.c's worker makes of a regression ---- */

/* A pair of bisection b measuring cand against base, made as the bisect
 * worker makes it (bisect_make_pair). */
static int64_t
bisect_pair(struct gen *g, const struct store_bisect *b, const char *base,
    const char *cand, int64_t now)
{
	struct err e = { 0 };
	int64_t pair;

	if (bisect_make_pair(g->s, &pair, b, base, cand, NULL, now, &e) != 0) {
		fprintf(stderr, "web_gen: bisect %" PRId64 " pair: %s\n", b->id,
		    err_msg(&e));
		exit(1);
	}
	g->bpairs++;
	return pair;
}

/* Runs the jobs b's host has queued (the open steps'), then gives each
 * of pairs without one its verdict (daemon/verdict.c). */
static void
bisect_measure(struct gen *g, const struct store_bisect *b,
    const int64_t *pairs, size_t n, int64_t now)
{
	size_t i;

	if (store_begin(g->s) != 0)
		die(g->s, "begin");
	while (run_claimed(g, b->host_id, now) == 0)
		;
	if (store_commit(g->s) != 0)
		die(g->s, "commit");
	for (i = 0; i < n; i++) {
		struct store_bisect_pair_state ps;
		struct verdict_outcome vo;
		int analysed;

		if (pairs[i] == 0)
			continue;
		if (store_bisect_pair_state_get(
		        g->s, &ps, pairs[i], b->metric) != 0)
			die(g->s, "bisect pair state");
		analysed = ps.analysed;
		store_bisect_pair_state_release(&ps);
		if (!analysed &&
		    (verdict_pair(g->s, &vo, pairs[i], now + 30) != 0 ||
		        vo.state != VERDICT_FINAL)) {
			fprintf(stderr,
			    "web_gen: bisect pair %" PRId64
			    ": no final verdict: %s\n",
			    pairs[i], store_errmsg(g->s));
			exit(1);
		}
	}
}

/* The verdict of pair for b's metric: *ps (the caller releases it). */
static void
pair_reading(struct gen *g, struct store_bisect_pair_state *ps,
    const struct store_bisect *b, int64_t pair)
{
	if (store_bisect_pair_state_get(g->s, ps, pair, b->metric) != 0)
		die(g->s, "bisect pair state");
}

/*
 * Classifies measured step x as daemon/bisect.c's look_step does:
 * bisect_classify of its two readings against the regression as the
 * classified steps (st, n) measure it (bisect_range_pct).
 */
static void
classify_step(struct gen *g, const struct store_bisect *b,
    const struct store_bisect_step *x, const struct store_bisect_step *st,
    size_t n, double origin, int64_t now)
{
	struct store_bisect_pair_state pg, pb;
	double *vg = xcalloc(n + 1, sizeof(*vg)),
	       *vb = xcalloc(n + 1, sizeof(*vb));
	double ref;
	char note[600];
	enum bisect_class cls;
	size_t k, m = 0;

	pair_reading(g, &pg, b, x->good_pair);
	pair_reading(g, &pb, b, x->bad_pair);
	for (k = 0; k < n; k++)
		if (strcmp(st[k].kind, "step") == 0 && st[k].cls != NULL &&
		    strcmp(st[k].cls, "skip") != 0 &&
		    strcmp(st[k].cls, "suspect") != 0) {
			vg[m] = st[k].vs_good_pct;
			vb[m++] = st[k].vs_bad_pct;
		}
	vg[m] = pg.change_pct;
	vb[m++] = pb.change_pct;
	ref = bisect_range_pct(vg, vb, m, origin);
	cls = bisect_classify(pg.verdict, pg.change_pct, pb.verdict,
	    pb.change_pct,
	    isfinite(pg.min_effect) ? pg.min_effect : pb.min_effect, ref);
	bisect_step_note(note, sizeof(note), pg.verdict, pg.change_pct,
	    pb.verdict, pb.change_pct, cls);
	if (store_bisect_step_set(g->s, x->id, bisect_class_name(cls),
	        pg.verdict, pg.change_pct, pb.verdict, pb.change_pct, note,
	        now) != 0)
		die(g->s, "bisect step");
	store_bisect_pair_state_release(&pg);
	store_bisect_pair_state_release(&pb);
	free(vg);
	free(vb);
}

/* A measured verification: the culprit against its parent must show the
 * regression, its revert on the bad end the recovery. */
static void
classify_verify(struct gen *g, const struct store_bisect *b,
    const struct store_bisect_step *x, int64_t now)
{
	int parent = strcmp(x->kind, "verify-parent") == 0;
	struct store_bisect_pair_state ps;
	const char *want = parent ? "regression" : "improvement";
	char text[300];
	int shows;

	pair_reading(g, &ps, b, parent ? x->good_pair : x->bad_pair);
	shows = ps.verdict != NULL && strcmp(ps.verdict, want) == 0;
	bisect_verify_note(
	    text, sizeof(text), !parent, shows, ps.verdict, ps.change_pct);
	if (store_bisect_step_set(g->s, x->id, parent == shows ? "bad" : "good",
	        parent ? ps.verdict : NULL, parent ? ps.change_pct : NAN,
	        parent ? NULL : ps.verdict, parent ? NAN : ps.change_pct, text,
	        now) != 0)
		die(g->s, "bisect verify");
	store_bisect_pair_state_release(&ps);
}

/* Ends b as the bisect worker ends one (bisect_finish): its queued jobs
 * cancelled, an inconclusive one's reason with the range narrowed. */
static void
bisect_end(struct gen *g, const struct store_bisect *b, const char *state,
    const char *culprit, const char *why, int64_t now)
{
	struct err e = { 0 };

	if (bisect_finish(g->s, b, state, culprit, why, now, &e) != 0) {
		fprintf(stderr, "web_gen: bisect %" PRId64 " end: %s\n", b->id,
		    err_msg(&e));
		exit(1);
	}
	if (strcmp(state, "done") == 0)
		g->bdone++;
	else
		g->binc++;
}

/*
 * One look at bisection b (as daemon/bisect.c's bisect_advance), its
 * steps st (n) all classified: the range narrowed and the next step, the
 * verifications or the end.  The candidates are the commits after the
 * good end up to the bad end: web_gen's history is one line, no mirror
 * is walked.  Returns 1 when it added a step, 0 when it ended b.
 */
static int
bisect_look(struct gen *g, struct store_bisect *b,
    const struct store_bisect_step *st, size_t n, int64_t now)
{
	const struct store_bisect_step *vp = NULL, *vr = NULL;
	struct store_bisect_set v;
	enum bisect_class *cls;
	char sha[41], lo_sha[41], parent[41], revert[41], *why;
	int64_t gi, bi, ci, p1, p2;
	size_t k, nstep = 0, ninc = 0, next = 0;
	long lo, hi;
	int kind, r;

	gi = sha_index(b->good_sha, &kind);
	bi = sha_index(b->bad_sha, &kind);
	cls = xcalloc((size_t)(bi - gi), sizeof(*cls));
	cls[bi - gi - 1] = BISECT_BAD;
	for (k = 0; k < n; k++) {
		int64_t i = sha_index(st[k].sha, &kind) - gi - 1;

		if (strcmp(st[k].kind, "verify-parent") == 0)
			vp = &st[k];
		else if (strcmp(st[k].kind, "verify-revert") == 0)
			vr = &st[k];
		else if (i >= 0 && i < bi - gi) {
			cls[i] = bisect_step_class(st[k].cls, st[k].note);
			nstep++;
		}
	}
	if (vp != NULL) {
		free(cls);
		memset(&v, 0, sizeof(v));
		v.verify_parent = vp->note ? vp->note : "unknown";
		v.verify_revert = vr && vr->note ? vr->note : "unknown";
		if (store_bisect_update(g->s, b->id, &v, now) != 0)
			die(g->s, "bisect verified");
		if (strncmp(v.verify_parent, "shows the regression", 20) != 0) {
			why = xasprintf("the steps point at %.12s, but against "
			                "its parent it does not show the "
			                "regression",
			    b->culprit_sha);
			bisect_end(g, b, "inconclusive", "", why, now);
		} else {
			why = xasprintf("first bad commit after %zu step(s), "
			                "0 skipped",
			    nstep);
			bisect_end(g, b, "done", b->culprit_sha, why, now);
		}
		free(why);
		return 0;
	}
	for (k = 0; k < (size_t)(bi - gi); k++)
		ninc += cls[k] == BISECT_INCONCLUSIVE;
	r = bisect_next(cls, (size_t)(bi - gi), &lo, &hi, &next);
	free(cls);
	memset(&v, 0, sizeof(v));
	v.state = "running";
	sha_of(lo_sha, gi + 1 + lo, 0);
	v.lo_sha = lo < 0 ? b->good_sha : lo_sha;
	sha_of(sha, gi + 1 + hi, 0);
	v.hi_sha = sha;
	if (store_bisect_update(g->s, b->id, &v, now) != 0)
		die(g->s, "bisect range");
	free(b->lo_sha);
	free(b->hi_sha);
	b->lo_sha = xstrdup(v.lo_sha);
	b->hi_sha = xstrdup(v.hi_sha);
	if (r == 0) {
		/* One commit left: the culprit, verified against its
		 * parent and by its revert on the bad end. */
		ci = gi + 1 + hi;
		sha_of(parent, ci - 1, 0);
		sha_of(revert, ci, REVERT_KIND);
		p1 = bisect_pair(g, b, parent, sha, now);
		p2 = bisect_pair(g, b, b->bad_sha, revert, now);
		memset(&v, 0, sizeof(v));
		v.culprit_sha = sha;
		v.revert_sha = revert;
		if (store_bisect_step_add(g->s, NULL, b->id, "verify-parent",
		        sha, p1, 0, now) != 0 ||
		    store_bisect_step_add(g->s, NULL, b->id, "verify-revert",
		        revert, 0, p2, now) != 0 ||
		    store_bisect_update(g->s, b->id, &v, now) != 0)
			die(g->s, "bisect verify");
		free(b->culprit_sha);
		b->culprit_sha = xstrdup(sha);
		return 1;
	}
	if (r < 0) {
		bisect_end(g, b, "inconclusive", "",
		    "only skipped or inconclusive commits are left", now);
		return 0;
	}
	if (ninc > (size_t)b->max_inconclusive ||
	    nstep >= (size_t)b->steps_limit) {
		why = ninc > (size_t)b->max_inconclusive
		    ? xasprintf("%zu step(s) stayed inconclusive (at most "
		                "%lld allowed)",
		          ninc, (long long)b->max_inconclusive)
		    : xasprintf("the step limit (%lld) was reached",
		          (long long)b->steps_limit);
		bisect_end(g, b, "inconclusive", "", why, now);
		free(why);
		return 0;
	}
	sha_of(sha, gi + 1 + (int64_t)next, 0);
	p1 = bisect_pair(g, b, b->good_sha, sha, now);
	p2 = bisect_pair(g, b, b->bad_sha, sha, now);
	if (store_bisect_step_add(
	        g->s, NULL, b->id, "step", sha, p1, p2, now) != 0)
		die(g->s, "bisect step");
	g->bsteps++;
	return 1;
}

/*
 * Bisection id from now on, a look every STEP_S: its open steps
 * measured (their jobs run, their pairs given verdicts) and classified,
 * then bisect_look.  budget: the steps it may measure (-1: any).  0 when
 * it ended, else the time of the look that would add one more step.
 */
static int64_t
bisect_run(struct gen *g, int64_t id, int64_t budget, int64_t now)
{
	for (;; now += STEP_S) {
		struct store_bisect *b = NULL;
		struct store_bisect_step *st = NULL;
		struct store_bisect_pair_state ps;
		int64_t *pairs, left = -1;
		size_t n = 0, np = 0, k;
		double origin;

		if (store_bisect_get(g->s, &b, id) != 0 ||
		    store_bisect_step_list(g->s, &st, &n, id) != 0)
			die(g->s, "bisection");
		if (strcmp(b->state, "queued") != 0 &&
		    strcmp(b->state, "running") != 0)
			left = 0;
		pairs = xcalloc(2 * n + 1, sizeof(*pairs));
		for (k = 0; left < 0 && k < n; k++)
			if (st[k].cls == NULL) {
				pairs[np++] = st[k].good_pair;
				pairs[np++] = st[k].bad_pair;
			}
		if (np > 0) {
			/* The open steps: measured, then classified. */
			bisect_measure(g, b, pairs, np, now);
			pair_reading(g, &ps, b, b->pair_id);
			origin = ps.change_pct;
			store_bisect_pair_state_release(&ps);
			for (k = 0; k < n; k++) {
				if (st[k].cls != NULL)
					continue;
				if (strcmp(st[k].kind, "step") == 0)
					classify_step(
					    g, b, &st[k], st, n, origin, now);
				else
					classify_verify(g, b, &st[k], now);
			}
		} else if (left == 0 || budget == 0)
			left = left == 0 ? 0 : now;
		else if (bisect_look(g, b, st, n, now) == 0)
			left = 0;
		else if (budget > 0)
			budget--;
		free(pairs);
		store_bisect_steps_release(st, n);
		store_bisect_release(b);
		if (left >= 0)
			return left;
	}
}

/* Leaves bisection id running: the look at now adds its next step (or
 * verifications), whose jobs stay queued. */
static void
bisect_leave(struct gen *g, int64_t id, int64_t now)
{
	struct store_bisect *b = NULL;
	struct store_bisect_step *st = NULL;
	size_t n = 0;

	if (store_bisect_get(g->s, &b, id) != 0 ||
	    store_bisect_step_list(g->s, &st, &n, id) != 0)
		die(g->s, "bisection");
	g->brunning += bisect_look(g, b, st, n, now);
	store_bisect_steps_release(st, n);
	store_bisect_release(b);
}

/*
 * Bisections of the regressions the bisect worker would take
 * (store_bisect_candidates, oldest first) whose pair is before commit
 * hi: the ops regression at every BISECT_EVERY-th commit, over the
 * BISECT_SPAN commits before it (see the top).  running: each is left
 * running after one to three steps, once all are measured (a host's
 * claim takes any bisection's queued job).
 */
static void
bisect_new(struct gen *g, int64_t hi, int running)
{
	int64_t ids[32], *left = NULL, *at = NULL;
	size_t n = 0, k, nleft = 0;

	do {
		if (store_bisect_candidates(g->s, ids, &n, g->reg_after, 32) !=
		    0)
			die(g->s, "bisect candidates");
		for (k = 0; k < n; k++) {
			struct store_bisect_src src;
			struct store_bisect_new bn;
			char good[41];
			int64_t i, id, now, round;
			int kind, r;

			if (store_bisect_src_get(g->s, &src, ids[k]) != 0)
				die(g->s, "bisect source");
			i = sha_index(src.bad_sha, &kind);
			if (i >= hi) {
				/* A later pass's. */
				store_bisect_src_release(&src);
				n = 0;
				break;
			}
			g->reg_after = ids[k];
			if (kind != 0 || i < BISECT_SPAN || i % BISECT_EVERY ||
			    src.of_bisect || src.tree == NULL ||
			    strcmp(src.metric, "ops") != 0) {
				store_bisect_src_release(&src);
				continue;
			}
			round = i / BISECT_EVERY;
			sha_of(good, i - BISECT_SPAN, 0);
			free(src.good_sha);
			src.good_sha = xstrdup(good);
			memset(&bn, 0, sizeof(bn));
			bn.src = &src;
			bn.steps_limit =
			    round % BISECT_SHORT == BISECT_SHORT - 1
			    ? 3
			    : BISECT_STEPS;
			bn.max_inconclusive = 2;
			bn.started_by = "auto";
			now = T0 + i * 60 + 300;
			r = store_bisect_create(g->s, &id, &bn, now);
			store_bisect_src_release(&src);
			if (r == ERR_EXISTS) {
				store_errclear(g->s);
				continue;
			}
			if (r != 0)
				die(g->s, "bisect create");
			g->bisections++;
			now = bisect_run(g, id, running ? round % 3 : -1, now);
			if (now > 0) {
				left = xreallocarray(
				    left, nleft + 1, sizeof(*left));
				at = xreallocarray(at, nleft + 1, sizeof(*at));
				left[nleft] = id;
				at[nleft++] = now;
			}
		}
	} while (n == 32);
	for (k = 0; k < nleft; k++)
		bisect_leave(g, left[k], at[k]);
	free(left);
	free(at);
}

/* The bisections an earlier call left running: measured and ended. */
static void
bisect_resume(struct gen *g)
{
	int64_t *ids = NULL;
	size_t n = 0, k;

	if (store_bisect_live(g->s, &ids, &n) != 0)
		die(g->s, "live bisections");
	for (k = 0; k < n; k++) {
		struct store_bisect *b = NULL;
		int64_t now;

		if (store_bisect_get(g->s, &b, ids[k]) != 0)
			die(g->s, "bisection");
		now = b->updated + STEP_S;
		store_bisect_release(b);
		bisect_run(g, ids[k], -1, now);
	}
	free(ids);
}

int
main(int argc, char **argv)
{
	struct store *s;
	struct gen g;
	struct err e = { 0 };
	int64_t from, to, runs = 10, tree, *hosts = g.hosts, i, nruns = 0;
	int64_t npairs = 0, nfinal = 0, nreg = 0, nquick = 0, real;
	char sha[41], parent[41];
	int h;

	if (argc < 4 || argc > 7) {
		fprintf(stderr,
		    "usage: web_gen DB FROM TO [RUNS [REAL [NOISE]]]\n");
		return 2;
	}
	memset(&g, 0, sizeof(g));
	/* alert_group_decide logs a line for each report it sends. */
	log_init("web_gen", 0);
	from = strtoll(argv[2], NULL, 10);
	to = strtoll(argv[3], NULL, 10);
	if (argc >= 5)
		runs = strtoll(argv[4], NULL, 10);
	real = argc >= 6 ? strtoll(argv[5], NULL, 10) : to - from;
	g.noise_pct = argc == 7 ? strtoll(argv[6], NULL, 10) : NOISE;
	if (from < 0 || to < from || runs < 2 || runs > 20 || g.noise_pct < 0 ||
	    g.noise_pct > 100) {
		fprintf(stderr, "web_gen: bad FROM, TO, RUNS or NOISE\n");
		return 2;
	}
	if (store_open(&s, argv[1], &e) != 0) {
		fprintf(stderr, "web_gen: %s\n", err_msg(&e));
		return 1;
	}
	g.s = s;
	alert_config(&g.dc);
	if (store_tree_sync(
	        s, &tree, "bench", "https://example.org/bench.git") != 0)
		die(s, "tree");
	/* The watched branch's row, as the watcher keeps it: its count of
	 * commits tells the history's filters it is no rare branch. */
	if (store_branch_update(
	        s, tree, "master", NULL, "ok", NULL, NULL, T0 + from * 60) != 0)
		die(s, "branch");
	for (h = 0; h < HOSTS; h++)
		if (store_host_register(s, &hosts[h], host_names[h],
		        "[\"bench\"]", "{\"cpu_model\":\"bench\",\"cores\":64}",
		        T0 + to * 60) != 0)
			die(s, "host");
	/* What an earlier call left undone, before any new job is queued:
	 * its bisections' queued jobs would be claimed first. */
	deliver_left(&g, T0 + from * 60);
	bisect_resume(&g);
	alert_look(&g);
	for (i = from; i < to;) {
		int64_t first = i, pair_ids[CHUNK], cand_ids[CHUNK], n = 0, k;

		if (store_begin(s) != 0)
			die(s, "begin");
		for (; i < to && n < CHUNK; i++, n++) {
			int64_t now = T0 + i * 60, host = hosts[i % HOSTS];
			int64_t cand_id, base_id, pair, bj, cj;
			int series = i % SERIES_EVERY == SERIES_EVERY - 1;
			struct store_commit c;
			struct store_job_new jn[2];
			struct store_trigger_pair tp;
			char subj[96], *texts[2];

			sha_of(parent, i - 1, 0);
			sha_of(sha, i, 0);
			memset(&c, 0, sizeof(c));
			c.sha = sha;
			c.parents = i > 0 ? parent : "";
			c.author = "Dev <dev@example.org>";
			c.committer = c.author;
			c.author_date = c.commit_date = now;
			snprintf(subj, sizeof(subj),
			    "mm: memcg: change %" PRId64 " <&>", i);
			c.subject = subj;
			c.paths_json = "[\"mm/memcontrol.c\"]";
			if (i == 0 ||
			    store_commit_find(
			        s, &base_id, NULL, 0, tree, parent) != 0)
				base_id = 0;
			if (store_commit_record(s, &cand_id, NULL, tree, &c,
			        "master", now) != 0)
				die(s, "commit");
			if (series) {
				/* The series on top of this commit,
				 * measured against it. */
				base_id = cand_id;
				memcpy(parent, sha, sizeof(parent));
				cand_id = make_series(s, tree, i, sha, now);
				sha_of(sha, i, 3);
			}
			texts[0] = spec_text(parent, runs);
			texts[1] = spec_text(sha, runs);
			for (k = 0; k < 2; k++) {
				memset(&jn[k], 0, sizeof(jn[k]));
				jn[k].role = k == 0 ? "base" : "candidate";
				jn[k].spec_json = texts[k];
				jn[k].labels_json = "[]";
				jn[k].runs = runs;
				jn[k].max_runs = runs;
				jn[k].max_attempts = 3;
				jn[k].commit_id = k == 0 ? base_id : cand_id;
			}
			memset(&tp, 0, sizeof(tp));
			tp.name = "kv";
			tp.point = "x=1";
			tp.host_id = host;
			tp.tree_id = tree;
			tp.branch = "master";
			tp.base = &jn[0];
			tp.cand = &jn[1];
			if (store_trigger_pair(
			        s, &pair, &bj, &cj, NULL, &tp, now) != 0)
				die(s, "pair");
			free(texts[0]);
			free(texts[1]);
			/* The series' base is the commit it sits on; a
			 * tree pair's base is the parent, one level
			 * back. */
			run_job(s, host, bj, runs, level(series ? i : i - 1),
			    now, &nruns);
			run_job(s, host, cj, runs, level(i), now, &nruns);
			pair_ids[n] = pair;
			cand_ids[n] = cj;
			npairs++;
		}
		if (store_commit(s) != 0)
			die(s, "commit");
		/* Each verdict is its own transaction, as in the daemon. */
		for (k = 0; k < n; k++) {
			struct verdict_outcome vo;

			if (first + k < to - real) {
				nreg += quick_verdict(&g, first + k,
				    pair_ids[k], hosts[(first + k) % HOSTS],
				    cand_ids[k], T0 + (first + k) * 60 + 30);
				nquick++;
				continue;
			}
			if (verdict_pair(s, &vo, pair_ids[k],
			        T0 + (first + k) * 60 + 30) != 0)
				die(s, "verdict");
			nfinal += vo.state == VERDICT_FINAL;
			nreg += (int64_t)(vo.regressions + vo.unstable);
		}
		/* The alert worker's reports, the bisect worker's
		 * bisections (none of the last RUN_TAIL pairs yet: they
		 * are left running, and their queued jobs would be
		 * claimed before the next pairs'), their follow-ups. */
		alert_look(&g);
		bisect_new(&g, i < to - RUN_TAIL ? i : to - RUN_TAIL, 0);
		alert_look(&g);
		if ((i - from) % 5000 == 0 || i == to)
			fprintf(stderr, "web_gen: %" PRId64 "/%" PRId64 "\n",
			    i - from, to - from);
	}
	bisect_new(&g, to, 1);
	alert_look(&g);
	/* The newest deliveries wait: a rate-limited mail, a webhook that
	 * answered 503. */
	deliver_queued(&g, 0, 1);
	printf("pairs %" PRId64 " runs %" PRId64 " quick %" PRId64
	       " final %" PRId64 " regressions %" PRId64 " (noise %" PRId64
	       ") reports %" PRId64 " (sent %" PRId64 ") deliveries %" PRId64
	       " (sent %" PRId64 ", failed %" PRId64 ", pending %" PRId64
	       ") bisections %" PRId64 " (done %" PRId64
	       ", inconclusive %" PRId64 ", running %" PRId64 "; steps %" PRId64
	       ", pairs %" PRId64 ", runs %" PRId64 ")\n",
	    npairs, nruns, nquick, nfinal, nreg, g.noisy, g.reports,
	    g.sent_reports, g.deliveries, g.sent, g.failed, g.pending,
	    g.bisections, g.bdone, g.binc, g.brunning, g.bsteps, g.bpairs,
	    g.bruns);
	store_close(s);
	return 0;
}
