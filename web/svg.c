#include <math.h>
#include <string.h>

#include "web/html.h"
#include "web/layout.h"
#include "web/svg.h"

/* Plot area inside the history chart. */
#define PL 70.0 /* left margin: y tick labels */
#define PR 16.0
#define PT 22.0 /* top margin: alert markers */
#define PB 52.0 /* bottom margin: x labels and axis title */

struct scale {
	double x0, dx;     /* x of point i: x0 + i * dx */
	double ymin, ymax; /* data range */
	double top, bottom;
};

static double
ypos(const struct scale *s, double v)
{
	return s->bottom -
	    (v - s->ymin) / (s->ymax - s->ymin) * (s->bottom - s->top);
}

static void
num(struct buf *b, double v)
{
	html_num(b, v, 1);
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about n ticks. */
static double
nice_step(double range, int n)
{
	double raw = range / n, mag = pow(10, floor(log10(raw))), f = raw / mag;

	if (f <= 1)
		return mag;
	if (f <= 2)
		return 2 * mag;
	if (f <= 5)
		return 5 * mag;
	return 10 * mag;
}

static void
range(const struct view_hist_point *p, size_t n, double *lo, double *hi)
{
	size_t i;

	*lo = INFINITY;
	*hi = -INFINITY;
	for (i = 0; i < n; i++) {
		double v[3] = { p[i].value, p[i].low, p[i].high };
		size_t k;

		for (k = 0; k < 3; k++) {
			if (!isfinite(v[k]))
				continue;
			if (v[k] < *lo)
				*lo = v[k];
			if (v[k] > *hi)
				*hi = v[k];
		}
	}
	if (!isfinite(*lo)) {
		*lo = 0;
		*hi = 1;
	} else if (*hi - *lo < 1e-12 * fmax(1, fabs(*hi))) {
		double pad = fabs(*hi) > 0 ? fabs(*hi) * 0.05 : 1;

		*lo -= pad;
		*hi += pad;
	} else {
		double pad = (*hi - *lo) * 0.06;

		*lo -= pad;
		*hi += pad;
	}
}

static void
short_sha(struct buf *b, const char *sha)
{
	if (sha == NULL) {
		HTML_LIT(b, "unknown");
		return;
	}
	html_textn(b, sha, strnlen(sha, 12));
}

static void
point_title(struct buf *b, const struct view_history *h,
    const struct view_hist_point *p, int rich)
{
	HTML_LIT(b, "<title>");
	short_sha(b, p->commit);
	if (rich) {
		HTML_LIT(b, " ");
		html_text_trunc(b, p->subject, 60);
	}
	HTML_LIT(b, "\n");
	html_si(b, p->value);
	if (h->unit) {
		HTML_LIT(b, " ");
		html_text_trunc(b, h->unit, 16);
	}
	if (isfinite(p->low) && isfinite(p->high)) {
		HTML_LIT(b, " (");
		html_si(b, p->low);
		HTML_LIT(b, " .. ");
		html_si(b, p->high);
		HTML_LIT(b, ")");
	}
	HTML_LIT(b, ", ");
	html_int(b, p->n);
	HTML_LIT(b, " runs, ");
	html_time(b, p->time);
	if (p->alert && rich) {
		HTML_LIT(b, "\nalert: ");
		html_text_trunc(b, p->alert, 80);
	} else if (p->alert)
		HTML_LIT(b, "\nalert");
	HTML_LIT(b, "</title>");
}

static void
draw_axes(struct buf *b, const struct view_history *h, const struct scale *s)
{
	double step, t;
	int k = 0;

	step = nice_step(s->ymax - s->ymin, 5);
	for (t = ceil(s->ymin / step) * step; t <= s->ymax && k < 20;
	     t += step, k++) {
		double y = ypos(s, t);

		HTML_LIT(b, "<line class=\"grid\" x1=\"");
		num(b, PL);
		HTML_LIT(b, "\" x2=\"");
		num(b, SVG_HISTORY_W - PR);
		HTML_LIT(b, "\" y1=\"");
		num(b, y);
		HTML_LIT(b, "\" y2=\"");
		num(b, y);
		HTML_LIT(b, "\"/><text x=\"");
		num(b, PL - 6);
		HTML_LIT(b, "\" y=\"");
		num(b, y + 4);
		HTML_LIT(b, "\" text-anchor=\"end\">");
		html_si(b, fabs(t) < step * 1e-9 ? 0 : t);
		HTML_LIT(b, "</text>");
	}
	HTML_LIT(b, "<line class=\"axis\" x1=\"");
	num(b, PL);
	HTML_LIT(b, "\" x2=\"");
	num(b, PL);
	HTML_LIT(b, "\" y1=\"");
	num(b, s->top);
	HTML_LIT(b, "\" y2=\"");
	num(b, s->bottom);
	HTML_LIT(b, "\"/><line class=\"axis\" x1=\"");
	num(b, PL);
	HTML_LIT(b, "\" x2=\"");
	num(b, SVG_HISTORY_W - PR);
	HTML_LIT(b, "\" y1=\"");
	num(b, s->bottom);
	HTML_LIT(b, "\" y2=\"");
	num(b, s->bottom);
	HTML_LIT(b, "\"/>");
	/* Axis titles. */
	HTML_LIT(b, "<text x=\"14\" y=\"");
	num(b, (s->top + s->bottom) / 2);
	HTML_LIT(b, "\" text-anchor=\"middle\" transform=\"rotate(-90 14 ");
	num(b, (s->top + s->bottom) / 2);
	HTML_LIT(b, ")\">");
	html_text_trunc(b, h->metric ? h->metric : "value", 32);
	if (h->unit && *h->unit) {
		HTML_LIT(b, " (");
		html_text_trunc(b, h->unit, 16);
		HTML_LIT(b, ")");
	}
	if (h->better) {
		HTML_LIT(b, ", ");
		html_text_trunc(b, h->better, 8);
		HTML_LIT(b, " is better");
	}
	HTML_LIT(b, "</text><text x=\"");
	num(b, (PL + SVG_HISTORY_W - PR) / 2);
	HTML_LIT(b, "\" y=\"");
	num(b, SVG_HISTORY_H - 6);
	HTML_LIT(b,
	    "\" text-anchor=\"middle\">commits, oldest to newest"
	    "</text>");
}

/* Short commit ids under the x axis, at most about one per 80 pixels. */
static void
draw_xlabels(struct buf *b, const struct view_hist_point *p, size_t n,
    const struct scale *s)
{
	size_t every = n / 8 + 1, i;

	for (i = 0; i < n; i++) {
		/* The newest is labelled too unless a label is close. */
		if (i % every != 0 &&
		    !(i == n - 1 && i % every >= (every + 1) / 2))
			continue;
		HTML_LIT(b, "<text class=\"mono\" x=\"");
		num(b, s->x0 + (double)i * s->dx);
		HTML_LIT(b, "\" y=\"");
		num(b, s->bottom + 16);
		HTML_LIT(b, "\" text-anchor=\"middle\">");
		if (p[i].commit)
			html_textn(b, p[i].commit, strnlen(p[i].commit, 7));
		else
			html_int(b, (long long)i + 1);
		HTML_LIT(b, "</text>");
	}
}

static void
draw_line(struct buf *b, const struct view_hist_point *p, size_t n,
    const struct scale *s)
{
	int pen = 0;
	size_t i;

	HTML_LIT(b, "<path class=\"line\" d=\"");
	for (i = 0; i < n; i++) {
		if (!isfinite(p[i].value)) {
			pen = 0;
			continue;
		}
		if (pen)
			HTML_LIT(b, "L");
		else
			HTML_LIT(b, "M");
		pen = 1;
		num(b, s->x0 + (double)i * s->dx);
		HTML_LIT(b, " ");
		num(b, ypos(s, p[i].value));
	}
	HTML_LIT(b, "\"/>");
}

/* Newest first, so the budget leaves out the oldest; see svg.h. */
static void
draw_points(struct buf *b, const struct view_history *h,
    const struct view_hist_point *p, size_t n, const struct scale *s,
    size_t start)
{
	size_t i;
	int rich;

	for (i = n; i-- > 0;) {
		double x = s->x0 + (double)i * s->dx;

		if (b->len - start > SVG_HARD_BUDGET) {
			HTML_LIT(b, "<text x=\"");
			num(b, PL + 4);
			HTML_LIT(b, "\" y=\"");
			num(b, s->top + 10);
			HTML_LIT(b, "\">older points left out</text>");
			break;
		}
		rich = b->len - start < SVG_RICH_BUDGET;

		if (isfinite(p[i].low) && isfinite(p[i].high)) {
			HTML_LIT(b, "<line class=\"spread\" x1=\"");
			num(b, x);
			HTML_LIT(b, "\" x2=\"");
			num(b, x);
			HTML_LIT(b, "\" y1=\"");
			num(b, ypos(s, p[i].low));
			HTML_LIT(b, "\" y2=\"");
			num(b, ypos(s, p[i].high));
			HTML_LIT(b, "\"/>");
		}
		if (p[i].alert) {
			/* A triangle above the plot, easy to spot. */
			HTML_LIT(b, "<path class=\"mark\" d=\"M");
			num(b, x - 5);
			HTML_LIT(b, " 6L");
			num(b, x + 5);
			HTML_LIT(b, " 6L");
			num(b, x);
			HTML_LIT(b, " 15Z\"><title>alert: ");
			html_text_trunc(b, p[i].alert, rich ? 80 : 20);
			HTML_LIT(b, "</title></path>");
		}
		if (!isfinite(p[i].value))
			continue;
		if (p[i].pair_id > 0) {
			HTML_LIT(b, "<a href=\"/pair/");
			html_int(b, p[i].pair_id);
			HTML_LIT(b, "\">");
		}
		HTML_LIT(b, "<circle class=\"pt");
		if (p[i].alert)
			HTML_LIT(b, " alert");
		HTML_LIT(b, "\" cx=\"");
		num(b, x);
		HTML_LIT(b, "\" cy=\"");
		num(b, ypos(s, p[i].value));
		if (p[i].alert)
			HTML_LIT(b, "\" r=\"5\">");
		else
			HTML_LIT(b, "\" r=\"3.5\">");
		point_title(b, h, &p[i], rich);
		HTML_LIT(b, "</circle>");
		if (p[i].pair_id > 0)
			HTML_LIT(b, "</a>");
	}
}

static void
draw_change_points(struct buf *b, const struct view_history *h, size_t first,
    size_t n, const struct scale *s)
{
	size_t i;

	for (i = 0; i < h->ncps; i++) {
		size_t at = h->cps[i].index;
		const struct view_hist_point *p;
		double x;

		/* Drawn between the last point before and the first after. */
		if (at < first + 1 || at >= first + n)
			continue;
		p = &h->points[at];
		x = s->x0 + ((double)(at - first) - 0.5) * s->dx;
		HTML_LIT(b, "<line class=\"cp\" x1=\"");
		num(b, x);
		HTML_LIT(b, "\" x2=\"");
		num(b, x);
		HTML_LIT(b, "\" y1=\"");
		num(b, s->top);
		HTML_LIT(b, "\" y2=\"");
		num(b, s->bottom);
		HTML_LIT(b, "\"><title>change point before ");
		short_sha(b, p->commit);
		HTML_LIT(b, ": ");
		html_pct(b, h->cps[i].shift_pct, 1);
		HTML_LIT(b, "</title></line>");
	}
}

int
svg_history(struct buf *b, const struct view_history *h)
{
	const struct view_hist_point *p = h->points;
	size_t n = h->npoints, first = 0;
	size_t start = b->len;
	struct scale s;

	if (n > SVG_MAX_POINTS) {
		first = n - SVG_MAX_POINTS;
		n = SVG_MAX_POINTS;
	}
	p += first;
	s.top = PT;
	s.bottom = SVG_HISTORY_H - PB;
	s.dx = n > 1 ? (SVG_HISTORY_W - PL - PR - 20) / (double)(n - 1) : 0;
	s.x0 = n > 1 ? PL + 10 : (PL + SVG_HISTORY_W - PR) / 2;
	range(p, n, &s.ymin, &s.ymax);

	HTML_LIT(b,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "class=\"chart\" viewBox=\"0 0 ");
	html_int(b, SVG_HISTORY_W);
	HTML_LIT(b, " ");
	html_int(b, SVG_HISTORY_H);
	HTML_LIT(b, "\" width=\"");
	html_int(b, SVG_HISTORY_W);
	HTML_LIT(b, "\" height=\"");
	html_int(b, SVG_HISTORY_H);
	/* A group, not an image: its points are links a keyboard reaches. */
	HTML_LIT(b, "\" role=\"group\"><title>");
	html_text_trunc(b, h->metric, VIEW_NAME_CHARS);
	HTML_LIT(b, " on ");
	html_text_trunc(b, h->host, VIEW_NAME_CHARS);
	HTML_LIT(b, ", ");
	html_int(b, (long long)h->npoints);
	HTML_LIT(b, " commits</title>");
	draw_axes(b, h, &s);
	if (n == 0) {
		HTML_LIT(b, "<text x=\"");
		num(b, (PL + SVG_HISTORY_W - PR) / 2);
		HTML_LIT(b, "\" y=\"");
		num(b, (s.top + s.bottom) / 2);
		HTML_LIT(b, "\" text-anchor=\"middle\">no data</text>");
	}
	draw_change_points(b, h, first, n, &s);
	draw_line(b, p, n, &s);
	draw_points(b, h, p, n, &s, start);
	draw_xlabels(b, p, n, &s);
	return HTML_LIT(b, "</svg>");
}

#define CI_W 120.0
#define CI_H 16.0

static double
cix(double v, double extent)
{
	return CI_W / 2 + v / extent * (CI_W / 2 - 3);
}

double
svg_ci_extent(double lo, double point, double hi, double min_effect)
{
	double extent, me = isfinite(min_effect) ? fabs(min_effect) : 0;

	if (!isfinite(lo) || !isfinite(hi))
		return NAN;
	extent = fmax(fmax(fabs(lo), fabs(hi)), fmax(2 * me, 0.5));
	if (isfinite(point))
		extent = fmax(extent, fabs(point));
	return extent * 1.1;
}

int
svg_ci_bar(struct buf *b, double lo, double point, double hi, double min_effect,
    const char *verdict, double extent)
{
	double me = isfinite(min_effect) ? fabs(min_effect) : 0;
	double own = svg_ci_extent(lo, point, hi, min_effect);

	if (!isfinite(own)) {
		HTML_LIT(b, "<span class=\"muted\">unknown</span>");
		return buf_failed(b) ? -1 : 0;
	}
	if (lo > hi) {
		double t = lo;

		lo = hi;
		hi = t;
	}
	/* A shared extent never cuts this bar's own numbers off. */
	if (!isfinite(extent) || extent < own)
		extent = own;
	HTML_LIT(b,
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cibar\" "
	    "viewBox=\"0 0 120 16\" width=\"120\" height=\"16\" "
	    "role=\"img\"><title>95% CI ");
	html_pct(b, lo, 2);
	HTML_LIT(b, " .. ");
	html_pct(b, hi, 2);
	HTML_LIT(b, ", change ");
	html_pct(b, point, 2);
	HTML_LIT(b, ", min effect &#177;");
	html_num(b, me, 2);
	HTML_LIT(b, "%; edges &#177;");
	html_num(b, extent, 2);
	HTML_LIT(b, "%</title>");
	if (me > 0) {
		HTML_LIT(b, "<rect class=\"band\" x=\"");
		num(b, cix(-me, extent));
		HTML_LIT(b, "\" y=\"1\" width=\"");
		num(b, cix(me, extent) - cix(-me, extent));
		HTML_LIT(b, "\" height=\"14\"/>");
	}
	HTML_LIT(b,
	    "<line class=\"zero\" x1=\"60\" x2=\"60\" y1=\"0\" "
	    "y2=\"16\"/><rect class=\"ci v-");
	html_text(b, layout_verdict(verdict));
	HTML_LIT(b, "\" x=\"");
	num(b, cix(lo, extent));
	HTML_LIT(b, "\" y=\"5\" width=\"");
	num(b, fmax(cix(hi, extent) - cix(lo, extent), 1));
	HTML_LIT(b, "\" height=\"6\"/>");
	if (isfinite(point)) {
		HTML_LIT(b, "<line class=\"tick\" x1=\"");
		num(b, cix(point, extent));
		HTML_LIT(b, "\" x2=\"");
		num(b, cix(point, extent));
		HTML_LIT(b, "\" y1=\"3\" y2=\"13\"/>");
	}
	return HTML_LIT(b, "</svg>");
}
