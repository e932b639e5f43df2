#ifndef DAEMON_BISECT_INT_H
#define DAEMON_BISECT_INT_H

/*
 * What the files of the bisection share (bisect.c, bisect_rules.c,
 * bisect_start.c): its defaults and the tree a bisection runs on.
 */
#include "daemon/dconf.h"

const struct cfg_tree *bisect_i_find_tree(
    const struct dconf *c, const char *name);
/*
 * How the candidate of one comparison moved against its base: 1 worse,
 * -1 better, 0 the same, 2 unknown.  worse_up: a higher value is worse
 * (1), lower (0), unknown (-1).  A regression or improvement verdict
 * counts as it says; an unstable one (the spread grew) only when its
 * median moved by at least thresh (a log ratio), else it is unknown.
 */
int bisect_i_moved(
    const char *verdict, double pct, double thresh, int worse_up);
void bisect_i_pct_text(char *out, size_t n, double pct);
/*
 * A clear verdict (m 1 or -1) whose change is under BISECT_LEAN of the
 * regression counts as no move (0): with many runs a few percent of
 * drift between a step's pairs is significant, and it says nothing of
 * which side of a regression ten times its size the commit is on (a
 * good commit of a 2.5x regression reading "regression +8%" against the
 * good end and "improvement -60%" against the bad end was called
 * partial, so bad).  Unknown regression or change: m as it is.
 */
int bisect_i_small(int m, double pct, double regression_pct);
/* What an unstable verification must move by: a third of the
 * regression (log ratio), at least min_effect.  The culprit against its
 * parent is one commit apart, so a noisy run there is the only doubt;
 * half the regression threw away a +94% reading of a +140% step. */
double bisect_i_verify_threshold(double min_effect, double regression_pct);

#endif
