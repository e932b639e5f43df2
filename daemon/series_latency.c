/*
 * Time to report (series_latency.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "daemon/series_latency.h"

const struct series_stage series_stages[SERIES_STAGES] = {
	{ "pickup", "posted", "seen" },
	{ "apply", "seen", "applied" },
	{ "queue", "applied", "first_run" },
	{ "measure", "first_run", "last_run" },
	{ "verdict", "last_run", "verdict" },
	{ "mail", "verdict", "mailed" },
	{ "total", "posted", "mailed" },
};

/* The time of event NAME in l. */
static int64_t
event(const struct store_series_latency *l, const char *name)
{
	switch (name[0]) {
	case 'p':
		return l->posted;
	case 's':
		return l->seen;
	case 'a':
		return l->applied;
	case 'f':
		return l->first_run;
	case 'l':
		return l->last_run;
	case 'v':
		return l->verdict;
	default:
		return l->mailed;
	}
}

int64_t
series_stage_s(const struct store_series_latency *l, size_t k)
{
	int64_t a, b;

	if (k >= SERIES_STAGES)
		return -1;
	a = event(l, series_stages[k].from);
	b = event(l, series_stages[k].to);
	if (a <= 0 || b <= 0)
		return -1;
	return b > a ? b - a : 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q of them at or below. */
static int64_t
rank(const int64_t *v, size_t n, double q)
{
	size_t r = (size_t)(q * (double)n + 0.999999);

	if (r < 1)
		r = 1;
	return v[(r > n ? n : r) - 1];
}

void
series_latency_summary(struct series_stage_sum out[SERIES_STAGES],
    const struct store_series_latency *l, size_t n)
{
	int64_t *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t k, i, m;

	for (k = 0; k < SERIES_STAGES; k++) {
		for (i = m = 0; i < n; i++) {
			int64_t s = series_stage_s(&l[i], k);

			if (s >= 0)
				v[m++] = s;
		}
		qsort(v, m, sizeof(*v), cmp_i64);
		out[k].n = m;
		out[k].median = m ? rank(v, m, 0.5) : -1;
		out[k].p90 = m ? rank(v, m, 0.9) : -1;
	}
	free(v);
}

static void
span(struct buf *b, int64_t s)
{
	if (s < 120)
		buf_printf(b, "%lld s", (long long)s);
	else if (s < 7200)
		buf_printf(b, "%lld min %lld s", (long long)(s / 60),
		    (long long)(s % 60));
	else if (s < 172800)
		buf_printf(b, "%lld h %lld min", (long long)(s / 3600),
		    (long long)(s % 3600 / 60));
	else
		buf_printf(b, "%lld days %lld h", (long long)(s / 86400),
		    (long long)(s % 86400 / 3600));
}

void
series_latency_text(struct buf *b, const struct store_series_latency *l)
{
	size_t k, any = 0;

	for (k = 0; k < SERIES_STAGES; k++) {
		int64_t s = series_stage_s(l, k);

		if (s < 0)
			continue;
		buf_printf(
		    b, "%s%s ", any++ ? ", " : "", series_stages[k].name);
		span(b, s);
	}
	if (any == 0)
		buf_puts(b, "not reported yet");
}

const int64_t series_le_s[SERIES_NLE] = { 5, 15, 60, 300, 900, 3600, 14400,
	86400, 259200, 864000 };

void
series_latency_hist(struct series_stage_hist out[SERIES_STAGES],
    const struct store_series_latency *l, size_t n)
{
	size_t i, k, b;

	for (k = 0; k < SERIES_STAGES; k++) {
		struct series_stage_hist *h = &out[k];

		memset(h, 0, sizeof(*h));
		for (i = 0; i < n; i++) {
			int64_t v = series_stage_s(&l[i], k);

			if (v < 0)
				continue;
			h->count++;
			h->sum += v;
			for (b = 0; b < SERIES_NLE; b++)
				if (v <= series_le_s[b])
					h->le[b]++;
		}
	}
}
