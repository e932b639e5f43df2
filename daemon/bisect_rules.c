/*
 * Bisection's pure rules (bisect.h): how a step's two comparisons
 * classify it (good, bad, skip, suspect), the regression's size over a
 * range, the next commit to measure, and the notes each step and the
 * verification carry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "common/xalloc.h"
#include "daemon/bisect.h"
#include "daemon/bisect_int.h"

/* An undecided side leaning this share of the regression towards the
 * other end keeps a step from being called good or bad. */
#define BISECT_LEAN 0.2

/* ---- pure parts ---- */

const char *
bisect_class_name(enum bisect_class c)
{
	switch (c) {
	case BISECT_GOOD:
		return "good";
	case BISECT_BAD:
	case BISECT_PARTIAL:
		return "bad";
	case BISECT_SKIP:
		return "skip";
	case BISECT_INCONCLUSIVE:
		return "inconclusive";
	case BISECT_MEASURING:
		break;
	}
	return "measuring";
}

/*
 * How the candidate of one comparison moved against its base: 1 worse,
 * -1 better, 0 the same, 2 unknown.  worse_up: a higher value is worse
 * (1), lower (0), unknown (-1).  A regression or improvement verdict
 * counts as it says; an unstable one (the spread grew) only when its
 * median moved by at least thresh (a log ratio), else it is unknown.
 */
int
bisect_i_moved(const char *verdict, double pct, double thresh, int worse_up)
{
	if (verdict == NULL)
		return 2;
	if (strcmp(verdict, "regression") == 0)
		return 1;
	if (strcmp(verdict, "improvement") == 0)
		return -1;
	if (strcmp(verdict, "unchanged") == 0)
		return 0;
	if (strcmp(verdict, "unstable") == 0 && isfinite(pct) && pct > -100 &&
	    fabs(log1p(pct / 100)) >= thresh && worse_up >= 0)
		return (pct > 0) == (worse_up != 0) ? 1 : -1;
	return 2;
}

/* What an unstable verdict must move by: half the regression (log
 * ratio), at least min_effect. */
static double
unstable_threshold(double min_effect, double regression_pct)
{
	double t = log1p((min_effect > 0 ? min_effect : 1.0) / 100);

	if (isfinite(regression_pct) && regression_pct > -100 &&
	    fabs(log1p(regression_pct / 100)) / 2 > t)
		t = fabs(log1p(regression_pct / 100)) / 2;
	return t;
}

/* What an unstable verification must move by: a third of the
 * regression (log ratio), at least min_effect.  The culprit against its
 * parent is one commit apart, so a noisy run there is the only doubt;
 * half the regression threw away a +94% reading of a +140% step. */
double
bisect_i_verify_threshold(double min_effect, double regression_pct)
{
	double t = log1p((min_effect > 0 ? min_effect : 1.0) / 100);

	if (isfinite(regression_pct) && regression_pct > -100 &&
	    fabs(log1p(regression_pct / 100)) / 3 > t)
		t = fabs(log1p(regression_pct / 100)) / 3;
	return t;
}

/* A change as a share of the regression (log ratios; 0 when unknown). */
static double
share(double pct, double regression_pct)
{
	double r;

	if (!isfinite(pct) || !isfinite(regression_pct) || pct <= -100 ||
	    regression_pct <= -100)
		return 0;
	r = log1p(regression_pct / 100);
	return r != 0 ? log1p(pct / 100) / r : 0;
}

/*
 * A clear verdict (m 1 or -1) whose change is under BISECT_LEAN of the
 * regression counts as no move (0): with many runs a few percent of
 * drift between a step's pairs is significant, and it says nothing of
 * which side of a regression ten times its size the commit is on (a
 * good commit of a 2.5x regression reading "regression +8%" against the
 * good end and "improvement -60%" against the bad end was called
 * partial, so bad).  Unknown regression or change: m as it is.
 */
int
bisect_i_small(int m, double pct, double regression_pct)
{
	if ((m != 1 && m != -1) || !isfinite(pct) ||
	    !isfinite(regression_pct) || regression_pct == 0)
		return m;
	return fabs(share(pct, regression_pct)) < BISECT_LEAN ? 0 : m;
}

enum bisect_class
bisect_classify(const char *vs_good, double good_pct, const char *vs_bad,
    double bad_pct, double min_effect, double regression_pct)
{
	double t = unstable_threshold(min_effect, regression_pct);
	int up = isfinite(regression_pct) && regression_pct != 0
	    ? regression_pct > 0
	    : -1;
	int g = bisect_i_small(
	    bisect_i_moved(vs_good, good_pct, t, up), good_pct, regression_pct);
	int b = bisect_i_small(
	    bisect_i_moved(vs_bad, bad_pct, t, up), bad_pct, regression_pct);

	/* The commit is told apart from one end and not from the other
	 * (or from both: between them, which needs two clear verdicts: an
	 * unstable side there is a noisy run as often as a real level). */
	if (g == 1 && b == -1)
		return vs_good && vs_bad &&
		        strcmp(vs_good, "regression") == 0 &&
		        strcmp(vs_bad, "improvement") == 0
		    ? BISECT_PARTIAL
		    : BISECT_INCONCLUSIVE;
	/* Not told apart, but leaning a good part of the way towards the
	 * other end (a part of a regression in more parts, or noise): not
	 * enough to call it either. */
	if (b == -1 && g != 1 && g != -1 &&
	    !(g == 2 && share(good_pct, regression_pct) >= BISECT_LEAN))
		return BISECT_GOOD;
	if (g == 1 && b != -1 && b != 1 &&
	    !(b == 2 && share(bad_pct, regression_pct) <= -BISECT_LEAN))
		return BISECT_BAD;
	return BISECT_INCONCLUSIVE;
}

double
bisect_range_pct(const double *vs_good_pct, const double *vs_bad_pct, size_t n,
    double origin_pct)
{
	double *lr, m;
	size_t i, k = 0;

	if (n == 0)
		return origin_pct;
	lr = xcalloc(n, sizeof(*lr));
	for (i = 0; i < n; i++)
		if (isfinite(vs_good_pct[i]) && isfinite(vs_bad_pct[i]) &&
		    vs_good_pct[i] > -100 && vs_bad_pct[i] > -100)
			lr[k++] = log1p(vs_good_pct[i] / 100) -
			    log1p(vs_bad_pct[i] / 100);
	m = analysis_median_inplace(lr, k);
	free(lr);
	if (k == 0 || !isfinite(m) || m == 0)
		return origin_pct;
	if (isfinite(origin_pct) && (m > 0) != (origin_pct > 0))
		return origin_pct;
	return expm1(m) * 100;
}

int
bisect_next(
    const enum bisect_class *cls, size_t n, long *lo, long *hi, size_t *next)
{
	long i, mid, best = -1, d, bestd = 0;

	*lo = -1;
	*hi = (long)n - 1;
	for (i = 0; i < (long)n; i++)
		if (cls[i] == BISECT_GOOD)
			*lo = i;
	for (i = *lo + 1; i < (long)n; i++)
		if (cls[i] == BISECT_BAD || cls[i] == BISECT_PARTIAL) {
			*hi = i;
			break;
		}
	if (*hi == *lo + 1)
		return 0;
	mid = *lo + (*hi - *lo) / 2;
	for (i = *lo + 1; i < *hi; i++) {
		if (cls[i] != BISECT_MEASURING)
			continue;
		d = i > mid ? i - mid : mid - i;
		if (best < 0 || d < bestd) {
			best = i;
			bestd = d;
		}
	}
	if (best < 0)
		return -1;
	*next = (size_t)best;
	return 1;
}

int
bisect_untrusted(char *why, size_t n, const char *suspect_good,
    const char *suspect_bad, const char *quarantined)
{
	const char *w = suspect_good && suspect_good[0] ? suspect_good
	    : suspect_bad && suspect_bad[0]             ? suspect_bad
	    : quarantined && quarantined[0]             ? quarantined
	                                                : NULL;

	if (w == NULL)
		return 0;
	snprintf(why, n, "not classified: %s; measured again", w);
	return 1;
}

void
bisect_i_pct_text(char *out, size_t n, double pct)
{
	if (isfinite(pct))
		snprintf(out, n, "%+.1f%%", pct);
	else
		snprintf(out, n, "unknown");
}

void
bisect_step_note(char *out, size_t n, const char *vs_good, double good_pct,
    const char *vs_bad, double bad_pct, enum bisect_class c)
{
	char a[32], b[32];

	bisect_i_pct_text(a, sizeof(a), good_pct);
	bisect_i_pct_text(b, sizeof(b), bad_pct);
	snprintf(out, n,
	    "against the good end: %s %s; against the bad end: %s %s%s",
	    vs_good ? vs_good : "none", a, vs_bad ? vs_bad : "none", b,
	    c == BISECT_PARTIAL ? "; partial: between both ends" : "");
}

enum bisect_class
bisect_step_class(const char *cls, const char *note)
{
	if (cls == NULL)
		return BISECT_MEASURING;
	if (strcmp(cls, "good") == 0)
		return BISECT_GOOD;
	if (strcmp(cls, "bad") == 0)
		return note && strstr(note, "partial") ? BISECT_PARTIAL
		                                       : BISECT_BAD;
	if (strcmp(cls, "skip") == 0)
		return BISECT_SKIP;
	if (strcmp(cls, "suspect") == 0)
		return BISECT_MEASURING; /* measured again */
	return BISECT_INCONCLUSIVE;
}

void
bisect_verify_note(
    char *out, size_t n, int revert, int shows, const char *verdict, double pct)
{
	char a[32];

	bisect_i_pct_text(a, sizeof(a), pct);
	if (!revert)
		snprintf(out, n, "%s: %s %s against its parent",
		    shows ? "shows the regression"
		          : "does not show the regression",
		    verdict ? verdict : "none", a);
	else
		snprintf(out, n, "%s: %s %s against the bad end",
		    shows ? "shows the recovery" : "does not show the recovery",
		    verdict ? verdict : "none", a);
}
