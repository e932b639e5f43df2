#ifndef WEB_VIEWS_H
#define WEB_VIEWS_H

/*
 * The dashboard pages.  Each page is one renderer, web/view_<page>.c,
 * taking a plain struct that the caller (the daemon's routes) fills from
 * the store; the renderers do no I/O and keep no state, so they are
 * tested on hostile data directly (tests/unit/web_test.c).
 *
 * Conventions for the structs below:
 *  - Strings are borrowed, UTF-8 or not, untrusted; NULL means unknown or
 *    absent.  The renderers escape and truncate them.
 *  - Numbers that may be unknown are doubles, NAN when unknown.
 *  - Ids are positive; 0 means none.  Times are Unix seconds, 0 unknown.
 *  - Verdicts are strings: "regression", "improvement", "unchanged",
 *    "inconclusive", "unstable", "info" (a metric shown, never judged),
 *    "running", "queued", "failed" (and the job states "success",
 *    "cancelled"); anything else (or NULL) is shown
 *    as "unknown".
 *
 * Every renderer appends a complete HTML document to out and returns 0,
 * or -1 when out overflowed its cap.  The default view of every page stays
 * under VIEW_PAGE_BUDGET: lists stop early with a note when the rows do not
 * fit, and long strings are cut.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "daemon/chargepath.h"

#define VIEW_PAGE_BUDGET (100 * 1024)
/* Rows are added while the page is below this, leaving room for the tail. */
#define VIEW_ROWS_BUDGET (88 * 1024)

/* Display lengths (characters) of untrusted strings. */
#define VIEW_SUBJECT_CHARS 100
#define VIEW_NAME_CHARS 48
#define VIEW_ERROR_CHARS 200
#define VIEW_NOTE_CHARS 300
#define VIEW_TITLE_CHARS 200

/*
 * A page of a list.  Cursors are opaque strings from the store; the
 * renderer links "older" with ?cursor=next and keeps the page's filters.
 */
struct view_pager {
	const char *next_cursor; /* NULL: this is the last page */
	int later;               /* not the first page: link "newest" */
	long long total;         /* rows in all pages; 0 unknown */
};

/* Who is looking: admin pages add triage forms. */
struct view_session {
	int admin;
	const char *csrf; /* the session's CSRF token (admin only) */
};

/* Overview. */
enum view_target { VIEW_COMMIT, VIEW_SERIES, VIEW_PAIR };

struct view_badge {
	const char *bench;    /* job name */
	const char *verdict;  /* worst verdict of its comparisons */
	const char *progress; /* "run 3/10" while running, else NULL */
	/* A regression's or improvement's size: the change of the metric
	 * that changed most (has_change 0: none shown). */
	int has_change;
	double change_pct;
	const char *metric;
};

struct view_overview_item {
	enum view_target kind;
	const char *id; /* commit sha, series id or pair id */
	const char *subject;
	const char *author;
	int64_t time;
	const struct view_badge *badges;
	size_t nbadges;
};

struct view_overview_group {
	const char *tree;   /* NULL for submitted pairs */
	const char *branch; /* or the inbox name for series */
	const struct view_overview_item *items;
	size_t nitems;
};

struct view_overview {
	int64_t now;
	int hosts_online, hosts_total;
	long long queued, running;
	long long regressions_new; /* untriaged regressions */
	const struct view_overview_group *groups;
	size_t ngroups;
};

/* Commit, series or pair: the comparison table. */
struct view_cmp_row {
	const char *host;
	const char *bench;
	const char *point; /* "flows=10000,threads=128" */
	const char *metric;
	const char *unit;
	const char *better; /* "higher" or "lower" */
	double base_median, cand_median;
	/* Each side's mean and sample standard deviation (its %stddev is
	 * spread_pct's), NAN: unknown. */
	double base_mean, base_sd, cand_mean, cand_sd;
	double change_pct;      /* relative change in percent */
	double ci_low, ci_high; /* 95% CI of change, percent */
	double p;               /* p-value */
	double min_effect;      /* percent, e.g. 1.0 */
	int base_n, cand_n;     /* runs on each side */
	const char *verdict;
	/*
	 * On a throughput row of a nested cgroup point: the memcg tax of this
	 * metric (the pair's memcg_tax.<metric> comparison), as (nested/root
	 * - 1) * 100 of the candidate's and the base's median ratio, and
	 * that comparison's verdict.  NAN / NULL when unknown.
	 */
	double memcg_tax_pct, memcg_tax_base_pct;
	const char *memcg_tax_verdict;
	/* On throughput rows: the pair's charge-path share (the profiled
	 * run's memcg.charge_path_share_pct), candidate and base; NAN
	 * without a profile. */
	double charge_share_pct, charge_share_base_pct;
	int64_t pair_id;
	int64_t base_job, cand_job; /* links to logs and raw outputs */
	/* The pair's sides ran under different host states: how (untrusted
	 * text from runners), else NULL (docs/HOST.md). */
	const char *suspect;
	/* The host's CPU family and generation (common/cpufamily.h), NULL
	 * unknown. */
	const char *family;
};

struct view_job_ref {
	int64_t id;
	const char *role; /* "base" or "candidate" */
	const char *host;
	const char *state;
	const char *progress;
	const char *error;
	int runs_done; /* raw output links for runs 0..runs_done-1 */
};

struct view_patch {
	int64_t seq;        /* 1..n; 0: position */
	const char *author; /* NULL: not shown */
	const char *subject;
	const char *commit; /* applied commit, NULL when not applied */
	const char *verdict;
};

/* A series page's "vN vs vN-1" row: the two tips' candidate runs. */
struct view_versus_row {
	const char *host, *job, *point, *metric, *unit;
	double prev_median, median, change_pct, ci_low, ci_high; /* NAN */
	const char *verdict;
};

/* One delivery of a report (docs/ALERTS.md). */
struct view_alert {
	int64_t id;
	const char *kind, *state, *target, *subject, *error;
	int64_t attempts, sent; /* sent: time, 0 when not sent */
	int followup;
	const char *sha; /* its report's commit, NULL: none or not shown */
};

/* The alerts page: every delivery, filtered by state and kind. */
struct view_alerts {
	const char *state, *kind; /* filters, NULL = any */
	const struct view_alert *rows;
	size_t nrows;
	struct view_pager pager;
};

/* An alert's page: the delivery, when it was made and is due, and what
 * it sends. */
struct view_alert_page {
	struct view_alert a;
	const char *delivery, *benchmark, *host; /* may be NULL */
	const char *payload;       /* the mail or request body, any text */
	int64_t created, next_try; /* next_try 0: not pending */
};

/* A commit named on a page: its sha (NULL: none) and subject. */
struct view_commit_ref {
	const char *sha, *subject;
};

/*
 * One side of one pair as a comparison page names it: what ran where.
 * kernel is the build its runs report (daemon/kfacts.h's line) or, when
 * none did, the host's running kernel; runs and rounds -1 unknown.
 */
struct view_side {
	int64_t pair_id;
	const char *job, *point;
	const char *role; /* "base" or "candidate" */
	struct view_commit_ref commit;
	const char *tree;
	const char *host, *cpu_model, *family;
	const char *kernel;
	int64_t runs, rounds;
};

/* Sides at most on a page; the JSON API lists them all. */
#define VIEW_SIDES 40

/* The sides table of a comparison page (with_pair: a pair column). */
void view_sides_table(
    struct buf *b, const struct view_side *sides, size_t n, int with_pair);

/* A command read by mail on a report of a series (daemon/mailcmd.h):
 * who sent it (the mail's address), the line, when, and what it did
 * (outcome "done", with the pairs or the series it made) or why not. */
struct view_mail_command {
	const char *sender, *command, *outcome, *reason;
	const char *parsed;       /* the command as read, NULL: none */
	const char *job, *commit; /* the report's; commit may be NULL */
	int64_t line, at, made_series;
	const int64_t *pairs;
	size_t npairs;
};

struct view_commit {
	enum view_target kind;
	const char *id;
	const char *title; /* commit subject, series title */
	const char *author;
	const char *tree, *branch;
	const char *base; /* what the candidate is compared with */
	/* The base commits the candidate was measured against (shown in
	 * place of base when there are any), and on a pair page its
	 * candidate's commit (sha NULL: a submitted pair without one). */
	const struct view_commit_ref *bases;
	size_t nbases;
	struct view_commit_ref cand;
	/* Each side of each pair shown, base then candidate. */
	const struct view_side *sides;
	size_t nsides;
	/* Commit page: the series whose tip it is (0: none), its title. */
	int64_t series_id;
	const char *series_title;
	int64_t time;
	const struct view_cmp_row *rows;
	size_t nrows;
	const struct view_patch *patches; /* series only */
	size_t npatches;
	const struct view_job_ref *jobs;
	size_t njobs;
	const char *note; /* e.g. "analysis not available: medians only" */
	struct view_pager pager;
	/* Series only: subject tag, 3-way note, vN vs vN-1. */
	const char *branch_tag, *fallback;
	const char *latency; /* time to report, stage by stage, or NULL */
	int64_t version, prev_id, prev_version; /* prev_id 0: none */
	const struct view_versus_row *versus;
	size_t nversus;
	const struct view_alert *alerts; /* commit pages */
	size_t nalerts;
	/* Series only: the commands read by mail on its reports. */
	const struct view_mail_command *commands;
	size_t ncommands;
	/* Pair page: the two sides' charge-path symbols (docs/MEMCG.md). */
	const struct chargepath_sym *symbols;
	size_t nsymbols;
	int profiled_runs[2]; /* base, candidate; 0 0: no section */
	const char *suspect;  /* pair page: why it is suspect, or NULL */
	/* Pair page: the kernel each side ran (daemon/kfacts.h lines:
	 * "<release> build <id> config <sha12> ..."), NULL: no row; and
	 * why the comparison is suspicious (same build both sides), NULL. */
	const char *kernel[2];
	const char *kernel_warning;
	/* Pair page (has_cost): each side's rounds and, for a kernel job
	 * (kernel_job), the boots its runs record (-1: unknown). */
	int has_cost;
	int64_t rounds[2], boots[2];
	int kernel_job[2];
};

/* Metric history: one (tree, branch, host, job, point, metric) series. */
struct view_hist_point {
	const char *commit;
	const char *subject;
	int64_t time;
	double value;      /* median over runs */
	double low, high;  /* spread (min/max of runs); NAN unknown */
	int n;             /* runs */
	const char *alert; /* alert text at this commit, or NULL */
	int64_t pair_id;   /* link target, 0 when none */
	/* The jobs' roles: "base", "candidate" or "base, candidate" (a
	 * commit measured in two pairs, one point); NULL unknown. */
	const char *role;
};

struct view_change_point {
	size_t index;     /* first point after the change */
	double shift_pct; /* NAN unknown */
};

struct view_history {
	const char *tree, *branch, *host, *job, *point, *metric;
	const char *unit, *better;
	const char *from, *to; /* the range in the URL, as given */
	const struct view_hist_point *points; /* oldest first */
	size_t npoints;
	const struct view_change_point *cps;
	size_t ncps;
	struct view_pager pager;
	/* The page read its most jobs of the series (STORE_HISTORY_SCAN)
	 * before it was full: "older" goes on below them. */
	int partial;
	long long scanned;
};

/* Regressions with filters and triage. */
struct view_regression {
	int64_t id;
	const char *tree, *branch;
	const char *commit; /* NULL for a pair */
	const char *subject;
	int64_t pair_id;
	const char *host, *bench, *point, *metric;
	double change_pct;
	const char *verdict;
	const char *state; /* new, acknowledged, invalid, fixed */
	const char *note;
	int64_t created, updated;
	/* Its newest bisection (daemon/bisect.c): 0 when none. */
	int64_t bisect_id;
	const char *bisect_state, *culprit; /* culprit NULL: none */
	const char *suspect;                /* docs/HOST.md: why, or NULL */
	int64_t series_id; /* the series whose tip commit is, 0: none */
};

struct view_regressions {
	const char *tree, *host, *bench, *state; /* filters, NULL = any */
	const struct view_regression *rows;
	size_t nrows;
	struct view_pager pager;
	int partial; /* the scan budget ended the page (store_regressions) */
	struct view_session session;
	const char *flash; /* a message after a triage post, or NULL */
};

/* A bisection step's comparison of the bisected metric: its interval,
 * each side's mean and sd (NAN unknown) and runs (-1 unknown). */
struct view_step_cmp {
	double ci_low, ci_high;
	double mean[2], sd[2];
	int64_t n[2];
};

/* A bisection of a regression, with its steps (daemon/bisect.c). */
struct view_bisect_step {
	const char *kind; /* step, verify-parent, verify-revert */
	const char *sha, *subject;
	const char *cls; /* NULL while measuring */
	const char *vs_good, *vs_bad;
	double vs_good_pct, vs_bad_pct; /* NAN unknown */
	const char *note;
	int64_t good_pair, bad_pair; /* 0 none */
	struct view_step_cmp good_cmp, bad_cmp;
};

struct view_bisect {
	int64_t id, regression_id, pair_id;
	/* Started from a history change point (cp): its id when started
	 * (0 unknown), commit, branch and change (NAN unknown). */
	int cp;
	int64_t change_point_id;
	const char *origin_sha, *branch;
	double origin_pct;
	const char *state, *job, *host, *point, *metric, *tree;
	const char *good, *bad, *lo, *hi; /* shas; lo, hi may be NULL */
	const char *culprit, *culprit_subject, *reason; /* NULL: none */
	const char *verify_parent, *verify_revert, *revert;
	const struct view_bisect_step *steps;
	size_t nsteps;
	/* Both sides of each step's pairs, in step order. */
	const struct view_side *sides;
	size_t nsides;
};

/* Hosts. */
struct view_host {
	int64_t id;
	const char *name;
	const char *labels; /* comma-separated */
	const char *cpu_model, *cpu_vendor;
	int sockets, cores, threads, numa_nodes; /* <= 0 unknown */
	long long memory_bytes;                  /* < 0 unknown */
	const char *kernel, *cgroup;
	const char *state; /* online / offline */
	int64_t current_job;
	const char *progress;
	int64_t last_seen;
	/* docs/HOST.md: why a canary quarantined the host, or NULL; its
	 * canary job (NULL: none), runs per side, and noise floor. */
	const char *quarantined;
	const char *canary_job;
	int64_t canary_every_s, canary_runs;
	const struct view_noise *noise;
	size_t nnoise;
};

/* A canary metric's noise floor on one host (daemon/canary.h). */
struct view_noise {
	const char *metric;
	int64_t runs;
	double cv_pct, mde_pct, mde_max_runs_pct; /* NaN: unknown */
};

struct view_hosts {
	int64_t now;
	const struct view_host *rows;
	size_t nrows;
	struct view_pager pager;
};

/* Trees: what the watcher fetched, with each branch it follows. */
struct view_tree_branch {
	const char *branch, *tip, *state, *error; /* tip NULL: none yet */
	int64_t commits, updated;                 /* updated 0: unknown */
};

struct view_tree {
	const char *name, *url;
	const char *status; /* pending, ok, warning, error, unwatched */
	const char *last_error;
	int64_t last_fetch, last_ok; /* 0: never */
	int64_t failures, commits;
	const struct view_tree_branch *branches;
	size_t nbranches;
};

struct view_trees {
	const struct view_tree *rows;
	size_t nrows;
	struct view_pager pager;
};

/* Commits the watcher recorded, newest first, of a tree and branch. */
struct view_commit_item {
	const char *sha, *subject, *author, *branches;
	int64_t time; /* the commit date, 0 unknown */
};

struct view_commits {
	const char *tree, *branch; /* filters, NULL = any */
	const struct view_commit_item *rows;
	size_t nrows;
	struct view_pager pager;
};

/* Jobs: queue and history. */
struct view_job {
	int64_t id, pair_id;
	const char *role, *name, *point, *state, *host;
	int attempts, runs, runs_done;
	const char *progress, *error;
	int64_t created, updated;
	const char *commit, *tree, *subject; /* what it measures; NULL none */
};

struct view_jobs {
	const char *state; /* filter, NULL = any */
	const struct view_job *rows;
	size_t nrows;
	struct view_pager pager;
};

/* A job's page: the job, its runs and its log. */
struct view_job_run {
	int64_t index, attempt;
	const char *status, *host, *error;
	double duration_s; /* NAN unknown */
};

struct view_job_page {
	const char *title; /* "Job 12" */
	struct view_job job;
	const struct view_job_run *runs;
	size_t nruns;
	const char *log; /* its tail, log_len bytes, any bytes */
	size_t log_len;
};

/* The series page: every mailed or uploaded series. */
struct view_series_item {
	int64_t id, version, total; /* version, total -1: unknown */
	const char *title, *author, *inbox, *tree, *branch, *state, *error;
	const char *commit;   /* the applied tip, NULL: none */
	const char *verdicts; /* of the pairs measuring the tip, "a,b" */
	int64_t time;
};

/* Time to report over recent series: per stage (posted to seen, ...),
 * how many series know it, its median and 90th percentile in seconds. */
struct view_latency_stage {
	const char *name, *from, *to;
	int64_t n, median_s, p90_s;
};

/* Patch mail an inbox read and took into no series, and why. */
struct view_mail_skipped {
	const char *inbox, *message_id, *subject, *reason;
	int64_t at;
};

struct view_series_list {
	const struct view_series_item *rows;
	size_t nrows;
	struct view_pager pager;
	const struct view_mail_skipped *skipped; /* the newest; none: 0 */
	size_t nskipped;
	/* The last days' time to report (GET /api/v1/latency): nstages 0
	 * for none. */
	int64_t latency_days, latency_series;
	const struct view_latency_stage *stages;
	size_t nstages;
};

/* The bisections page: one row a bisection (view_bisect, no steps). */
struct view_bisects {
	const struct view_bisect *rows;
	size_t nrows;
	struct view_pager pager;
};

/* A short page: not found, bad request, login. */
struct view_message {
	int status; /* HTTP status, shown in the title */
	const char *title;
	const char *text; /* untrusted ok */
};

struct view_login {
	const char *csrf;  /* pre-session CSRF token for the form */
	const char *error; /* "wrong token", or NULL */
	const char *next;  /* path to go back to after login */
};

/* view_overview.c */
int view_overview_render(struct buf *out, const struct view_overview *);
/* view_alerts.c: the alerts table of a commit page (none: nothing). */
void view_alerts_table(struct buf *, const struct view_alert *, size_t n);

/* view_mail_commands.c: a series' commands by mail (none: nothing). */
void view_mail_commands_table(
    struct buf *, const struct view_mail_command *, size_t n);
/* view_alerts.c: the alerts page */
int view_alerts_render(struct buf *out, const struct view_alerts *);
/* view_alerts.c: one alert's page */
int view_alert_render(struct buf *out, const struct view_alert_page *);
/* view_job.c: a job's page */
int view_job_render(struct buf *out, const struct view_job_page *);
/* view_series_list.c */
int view_series_list_render(struct buf *out, const struct view_series_list *);
/* /trees and /commits: what the watcher fetched. */
int view_trees_render(struct buf *out, const struct view_trees *);
int view_commits_render(struct buf *out, const struct view_commits *);
/* view_bisects.c */
int view_bisects_render(struct buf *out, const struct view_bisects *);

/* view_commit.c: a commit, series or pair page */
int view_commit_render(struct buf *out, const struct view_commit *);
/* view_history.c */
int view_history_render(struct buf *out, const struct view_history *);
/* view_regressions.c */
int view_regressions_render(struct buf *out, const struct view_regressions *);
/* view_bisect.c */
int view_bisect_render(struct buf *out, const struct view_bisect *);
/* view_hosts.c */
int view_hosts_render(struct buf *out, const struct view_hosts *);
/* view_jobs.c */
int view_jobs_render(struct buf *out, const struct view_jobs *);
/* view_message.c */
int view_message_render(struct buf *out, const struct view_message *);
/* view_login.c */
int view_login_render(struct buf *out, const struct view_login *);

#endif
