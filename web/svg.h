#ifndef WEB_SVG_H
#define WEB_SVG_H

/*
 * Server-side SVG charts, inline in the page so they need no JavaScript
 * and no extra request.  Hover text is an SVG <title> per element.
 */
#include "common/buf.h"
#include "web/views.h"

#define SVG_HISTORY_W 760
#define SVG_HISTORY_H 280
/* Points drawn at most; the newest are kept (the store pages the rest). */
#define SVG_MAX_POINTS 200
/*
 * Size budget of one chart.  Points are drawn newest first; past
 * SVG_RICH_BUDGET bytes their hover titles leave out the subject and the
 * alert text, past SVG_HARD_BUDGET the older points are left out.
 */
#define SVG_RICH_BUDGET (30 * 1024)
#define SVG_HARD_BUDGET (60 * 1024)

/*
 * The metric history of h as a time series over commits (oldest left):
 * one point per commit with its spread, change points as dashed vertical
 * lines, alerts as red points with a marker, axis labels and ticks.
 * Returns 0 or -1 on overflow.
 */
int svg_history(struct buf *, const struct view_history *h);

/*
 * A small bar for a change's 95% confidence interval [lo, hi] (percent)
 * around the point estimate, drawn over the band +-min_effect so one sees
 * at a glance whether the interval leaves it, with zero marked in the
 * middle.  verdict colours the bar.  extent is the percent at either
 * edge: the bars of one table share one (svg_ci_extent's largest) so
 * they compare; 0 or NAN draws the bar on its own scale.  Unknown bounds
 * draw "unknown" instead.
 */
int svg_ci_bar(struct buf *, double lo, double point, double hi,
    double min_effect, const char *verdict, double extent);
/* The extent a bar of these numbers needs to fit (NAN: unknown bounds). */
double svg_ci_extent(double lo, double point, double hi, double min_effect);

#endif
