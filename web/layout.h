#ifndef WEB_LAYOUT_H
#define WEB_LAYOUT_H

/*
 * The parts every dashboard page shares: the document head with its CSS,
 * the navigation bar, verdict badges, pagination links and the page-size
 * budget.  All return 0, or -1 when the buffer overflowed.
 */
#include <stddef.h>

#include "common/buf.h"
#include "web/views.h"

/*
 * Starts a page: doctype, head (title, inline CSS) and nav bar.  title is
 * untrusted (cut to VIEW_TITLE_CHARS); active names the nav entry to
 * highlight ("overview", "regressions", "hosts", "jobs") or is NULL.
 */
int layout_begin(struct buf *, const char *title, const char *active);
/* Closes what layout_begin opened. */
int layout_end(struct buf *);

/*
 * A verdict badge: a known verdict shows as itself with its colour,
 * anything else as "unknown"; progress (untrusted) is added when set.
 */
int layout_badge(struct buf *, const char *verdict, const char *progress);
/* A "suspect" badge with why (untrusted, escaped) as its tooltip. */
int layout_suspect(struct buf *, const char *why);
/* The CSS class suffix of a verdict; "unknown" when not a known one. */
const char *layout_verdict(const char *verdict);

/*
 * The one order of verdicts, most urgent news first: regression,
 * unstable, the job states failed, running and queued (no verdict yet),
 * improvement, inconclusive, unchanged, info; anything else (NULL
 * included) after them all.  The overview's badges, a series' patch
 * rows and the commit page's rows all sort by it, so a badge shows the
 * verdict of the first row of the page it links to.
 */
int layout_verdict_rank(const char *verdict);
/*
 * The most urgent comparison verdict (regression, unstable, improvement,
 * inconclusive or unchanged) named in a comma-separated list, by
 * layout_verdict_rank; NULL when it names none.
 */
const char *layout_worst_verdict(const char *list);

/* <a class="mono" href="/commit/SHA">sha12</a>; nothing for NULL. */
int layout_commit_link(struct buf *, const char *sha);
/* A link to the shared build a job's error names ("build failed:
 * build B: ..." or "build cancelled: build B: ...", docs/KERNEL.md),
 * else nothing. */
int layout_build_link(struct buf *, const char *error);
/* "/commit/SHA", "/series/ID" or "/pair/ID", URL-encoded. */
int layout_target_href(struct buf *, enum view_target, const char *id);

/*
 * Pagination links: "newest" and "older" keep the filters (nkv key/value
 * pairs, values NULL or "" are dropped) and add cursor=next_cursor.
 */
int layout_pager(struct buf *, const char *path, const char *const *kv,
    size_t nkv, const struct view_pager *);

/*
 * A side's mean, its sample standard deviation and that in percent of
 * the mean as LKP's %stddev: "1.234M &plusmn;25.8k (2.1%)" (the mean to
 * 4 significant digits, the sd to 3: a spread says no more; the percent
 * with two decimals below 1%); "unknown" for an unknown mean.
 */
int layout_mean_sd(struct buf *, double mean, double sd);
/* An interval of percent changes as text: "[-1.20%, +3.40%]"; nothing
 * when either end is unknown. */
int layout_interval(struct buf *, double lo, double hi);

/* 1 when the page is too big to take another row (VIEW_ROWS_BUDGET). */
int layout_full(const struct buf *);
/* After a list: a note saying total - shown rows were left out, if any. */
int layout_cut(struct buf *, size_t shown, size_t total);

#endif
