/*
 * eval_stats: the synthetic study of analysis/analysis, run by
 * `make eval-stats`.  It draws runs from five noise models, feeds them to
 * the same functions the daemon uses, and prints false-alarm rates,
 * power, mean run counts, change-point hit rates and timings as
 * markdown tables (docs/ANALYSIS.md keeps a copy).
 *
 *   eval_stats [SCALE]     SCALE multiplies the trial counts (default 1)
 *
 * Every number is reproducible: the generator is seeded per cell.  Rates
 * are given with a 95 % half-width (normal approximation) so that a
 * reader can tell a met goal from noise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "common/err.h"
#include "common/rounds.h"

enum model { M_NORMAL, M_LOGNORMAL, M_BIMODAL, M_OUTLIERS, M_AR1, M_COUNT };

static const char *const model_names[M_COUNT] = { "normal",
	"log-normal (skewed)", "bimodal 30% +2.5%", "outliers 5% -15%",
	"AR(1) phi=0.5" };

#define AR_PHI 0.5
#define LN_SHAPE 0.5 /* skewness 1.75 */
#define HIST_RUNS 100
/* Adaptive rows: the defaults of a job (config/schema_job.c), first_runs 5
 * and max_runs MAX_N. */
#define MAX_N 24

static double scale = 1;

static size_t
trials(size_t n)
{
	size_t t = (size_t)((double)n * scale);

	return t < 10 ? 10 : t;
}

static double
gauss(struct analysis_rng *r)
{
	double u, v;

	/* Box-Muller; u in (0, 1]. */
	u = 1 - analysis_rng_uniform(r);
	v = analysis_rng_uniform(r);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/*
 * One noise stream.  Each call gives the next run's multiplicative
 * factor (mean about 1, coefficient of variation cv).  The AR(1) model
 * keeps its state, so runs taken in order are correlated.
 */
struct noise {
	enum model m;
	double cv, ar;
	struct analysis_rng *r;
};

static double
noise_next(struct noise *n)
{
	double z = gauss(n->r), x;

	switch (n->m) {
	case M_LOGNORMAL: {
		double mu = exp(LN_SHAPE * LN_SHAPE / 2);
		double sd = mu * sqrt(expm1(LN_SHAPE * LN_SHAPE));

		x = 1 + n->cv * (exp(LN_SHAPE * z) - mu) / sd;
		break;
	}
	case M_BIMODAL:
		x = (1 + n->cv * z) *
		    (analysis_rng_uniform(n->r) < 0.3 ? 1.025 : 1);
		break;
	case M_OUTLIERS:
		x = (1 + n->cv * z) *
		    (analysis_rng_uniform(n->r) < 0.05 ? 0.85 : 1);
		break;
	case M_AR1:
		n->ar = AR_PHI * n->ar + sqrt(1 - AR_PHI * AR_PHI) * z;
		x = 1 + n->cv * n->ar;
		break;
	default:
		x = 1 + n->cv * z;
	}
	return x > 1e-6 ? x : 1e-6;
}

static void
noise_init(struct noise *n, enum model m, double cv, struct analysis_rng *r)
{
	n->m = m;
	n->cv = cv;
	n->r = r;
	n->ar = gauss(r); /* stationary start */
}

/*
 * Runs of one pair: base and candidate alternate (A B A B ...), as the
 * runners do; the candidate is (1 - shift) times slower (a regression of
 * a higher-is-better metric).
 */
static void
draw_pair(double *a, double *b, size_t n, enum model m, double cv, double shift,
    struct analysis_rng *r)
{
	struct noise ns;
	size_t i;

	noise_init(&ns, m, cv, r);
	for (i = 0; i < n; i++) {
		a[i] = 1000 * noise_next(&ns);
		b[i] = 1000 * (1 - shift) * noise_next(&ns);
	}
}

static void
draw_history(
    double *h, size_t n, enum model m, double cv, struct analysis_rng *r)
{
	struct noise ns;
	size_t i;

	noise_init(&ns, m, cv, r);
	for (i = 0; i < n; i++)
		h[i] = 1000 * noise_next(&ns);
}

struct tally {
	size_t n, alarms, hits, unstable, runs;
};

static double
rate(size_t k, size_t n)
{
	return n ? 100.0 * (double)k / (double)n : NAN;
}

static double
halfw(size_t k, size_t n)
{
	double p = n ? (double)k / (double)n : 0;

	return n ? 196.0 * sqrt(p * (1 - p) / (double)n) : NAN;
}

static int
is_alarm(enum analysis_verdict v)
{
	return v == ANALYSIS_REGRESSION || v == ANALYSIS_IMPROVEMENT;
}

/*
 * One A/B trial.  adaptive: 0 for n_fixed runs a side, else the max_runs
 * of looks at 5, 8, 12, ... as the scheduler would take them (MAX_N, the
 * default: 5, 8, 12, 18, 24).  Returns the final result; *n_used the
 * runs per side it took.
 */
static void
ab_trial(struct analysis_result *res, size_t *n_used, enum model m, double cv,
    double shift, int use_hist, int adaptive, size_t n_fixed,
    struct analysis_rng *r)
{
	double a[MAX_N], b[MAX_N], h[HIST_RUNS];
	struct analysis_opts o;
	struct err e = { 0 };
	size_t n = adaptive ? 5 : n_fixed;
	size_t nmax = adaptive ? (size_t)adaptive : n_fixed;

	if (nmax > MAX_N)
		nmax = MAX_N;

	draw_pair(a, b, nmax, m, cv, shift, r);
	analysis_opts_init(&o);
	if (use_hist) {
		draw_history(h, HIST_RUNS, m, cv, r);
		o.history = h;
		o.n_history = HIST_RUNS;
	}
	if (adaptive) {
		o.first_runs = 5;
		o.max_runs = nmax;
	}
	for (;;) {
		if (analysis_compare(res, a, n, b, n, &o, &e) != 0) {
			fprintf(stderr, "eval_stats: %s\n", err_msg(&e));
			exit(1);
		}
		if (!adaptive)
			break;
		{
			size_t next = analysis_next_runs(res, n, 5, nmax);

			/* Past nmax only for a suspected mode: the normal
			 * models here have none to find. */
			if (next == 0 || next > nmax)
				break;
			n = next;
		}
	}
	*n_used = n;
}

static void
ab_cell(struct tally *t, enum model m, double cv, double shift, int hist,
    int adaptive, size_t n_fixed, size_t ntrials, uint64_t seed)
{
	struct analysis_rng r;
	struct analysis_result res;
	size_t i, n_used;

	memset(t, 0, sizeof(*t));
	analysis_rng_seed(&r, seed);
	for (i = 0; i < ntrials; i++) {
		ab_trial(
		    &res, &n_used, m, cv, shift, hist, adaptive, n_fixed, &r);
		t->n++;
		t->runs += n_used;
		if (is_alarm(res.verdict))
			t->alarms++;
		if (res.verdict == ANALYSIS_REGRESSION)
			t->hits++;
		if (res.verdict == ANALYSIS_UNSTABLE)
			t->unstable++;
	}
}

static void
print_rate(size_t k, size_t n)
{
	printf(" %5.2f ± %.2f |", rate(k, n), halfw(k, n));
}

static void
table_fixed(void)
{
	enum model m;
	size_t nt = trials(1000), nt0 = trials(4000);

	printf("\n### A/B, fixed N = 5 per side, CV 1 %%, alpha 0.01, "
	       "min_effect 1 %%\n\n");
	printf("False alarm (FA) = regression or improvement reported with "
	       "no change (%zu trials per cell); power = regression reported "
	       "for a 2 %% drop (%zu trials); ± is the 95 %% half-width.  "
	       "History: 100 earlier runs of the base.\n\n",
	    nt0, nt);
	printf("| noise | Welch FA %% | Welch power %% | history FA %% | "
	       "history power %% | A/A unstable %% |\n");
	printf("|---|---|---|---|---|---|\n");
	for (m = 0; m < M_COUNT; m++) {
		struct tally w0, w1, h0, h1;

		ab_cell(&w0, m, 0.01, 0, 0, 0, 5, nt0, 100 + m);
		ab_cell(&w1, m, 0.01, 0.02, 0, 0, 5, nt, 200 + m);
		ab_cell(&h0, m, 0.01, 0, 1, 0, 5, nt0, 300 + m);
		ab_cell(&h1, m, 0.01, 0.02, 1, 0, 5, nt, 400 + m);
		printf("| %s |", model_names[m]);
		print_rate(w0.alarms, w0.n);
		print_rate(w1.hits, w1.n);
		print_rate(h0.alarms, h0.n);
		print_rate(h1.hits, h1.n);
		print_rate(w0.unstable + h0.unstable, w0.n + h0.n);
		printf("\n");
		fflush(stdout);
	}
}

static void
table_adaptive(void)
{
	static const int maxes[] = { MAX_N, 12 };
	enum model m;
	size_t nt = trials(1000), nt0 = trials(2000), k;
	int hist;

	printf("\n### Adaptive runs: looks at 5, 8, 12, 18, 24 per side "
	       "(max_runs 24, the default) and 5, 8, 12 (max_runs 12), "
	       "futility from half of max_runs and 12 runs, Pocock-type alpha "
	       "spending "
	       "(total 0.01), exact boundaries, CV 1 %%, 2 %% drop\n\n");
	printf("%zu trials per no-change cell, %zu per 2 %% drop cell.  Mean "
	       "N is runs per side until the verdict.\n\n",
	    nt0, nt);
	printf("| noise | p-value | max_runs | FA %% | mean N (no change) | "
	       "power %% | mean N (2 %% drop) |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (hist = 1; hist >= 0; hist--) {
		for (m = 0; m < M_COUNT; m++) {
			for (k = 0; k < 2; k++) {
				struct tally t0, t1;

				ab_cell(&t0, m, 0.01, 0, hist, maxes[k], 0, nt0,
				    500 + m);
				ab_cell(&t1, m, 0.01, 0.02, hist, maxes[k], 0,
				    nt, 600 + m);
				printf("| %s | %s | %d |", model_names[m],
				    hist ? "history" : "Welch", maxes[k]);
				print_rate(t0.alarms, t0.n);
				printf(
				    " %.2f |", (double)t0.runs / (double)t0.n);
				print_rate(t1.hits, t1.n);
				printf(" %.2f |\n",
				    (double)t1.runs / (double)t1.n);
				fflush(stdout);
			}
		}
	}
}

static void
table_aa(void)
{
	static const double cvs[] = { 0.003, 0.01, 0.05 };
	enum model m;
	size_t nt = trials(1000), c;

	printf("\n### A/A: no change, N = 5, alpha 0.01 (false alarms must "
	       "stay at or below 1 %%)\n\n");
	printf("%zu trials per cell; FA = regression or improvement, "
	       "U = unstable.\n\n",
	    nt);
	printf("| noise | CV | Welch FA %% | history FA %% | U %% |\n");
	printf("|---|---|---|---|---|\n");
	for (m = 0; m < M_COUNT; m++) {
		for (c = 0; c < sizeof(cvs) / sizeof(cvs[0]); c++) {
			struct tally w, h;

			ab_cell(
			    &w, m, cvs[c], 0, 0, 0, 5, nt, 700 + 10 * m + c);
			ab_cell(
			    &h, m, cvs[c], 0, 1, 0, 5, nt, 800 + 10 * m + c);
			printf(
			    "| %s | %.1f %% |", model_names[m], cvs[c] * 100);
			print_rate(w.alarms, w.n);
			print_rate(h.alarms, h.n);
			print_rate(w.unstable + h.unstable, w.n + h.n);
			printf("\n");
			fflush(stdout);
		}
	}
}

static void
table_sweep(void)
{
	static const double cvs[] = { 0.003, 0.01, 0.02, 0.05 };
	static const double shifts[] = { 0.005, 0.01, 0.02, 0.05, 0.10 };
	size_t nt = trials(300), c, s;

	printf("\n### Power sweep: normal noise, adaptive N <= 24 (the default "
	       "max_runs) with "
	       "history, min_effect 1 %%\n\n");
	printf("%% of %zu trials reporting the regression (mean N in "
	       "brackets).  Shifts below min_effect are not meant to be "
	       "reported.\n\n",
	    nt);
	printf("| CV \\ drop |");
	for (s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++)
		printf(" %.1f %% |", shifts[s] * 100);
	printf("\n|---|");
	for (s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++)
		printf("---|");
	printf("\n");
	for (c = 0; c < sizeof(cvs) / sizeof(cvs[0]); c++) {
		printf("| %.1f %% |", cvs[c] * 100);
		for (s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
			struct tally t;

			ab_cell(&t, M_NORMAL, cvs[c], shifts[s], 1, MAX_N, 0,
			    nt, 900 + 10 * c + s);
			printf(" %.0f (%.1f) |", rate(t.hits, t.n),
			    (double)t.runs / (double)t.n);
		}
		printf("\n");
		fflush(stdout);
	}
}

/*
 * History: len-point series, one step (a fraction off a higher-is-better
 * metric; negative: a gain) at a uniform position in [lo, lo + span), or
 * none.  120 points, 1 % noise, 2 %, positions [15, 105) for the main
 * table.
 */
#define CP_LEN 120

static void
cp_cell(size_t *hits, size_t *false_cps, size_t *steps, size_t *points,
    enum model m, double cv, double step, size_t len, size_t lo, size_t span,
    size_t ntrials, uint64_t seed)
{
	struct analysis_rng r;
	struct analysis_cp_opts o;
	double x[CP_LEN];
	size_t i, k;

	analysis_rng_seed(&r, seed);
	analysis_cp_opts_init(&o);
	*hits = *false_cps = *steps = *points = 0;
	for (k = 0; k < ntrials; k++) {
		struct analysis_cps c;
		struct noise ns;
		struct err e = { 0 };
		size_t pos = lo + analysis_rng_below(&r, span);
		int found = 0;

		noise_init(&ns, m, cv, &r);
		for (i = 0; i < len; i++)
			x[i] = 1000 * noise_next(&ns) *
			    (step != 0 && i >= pos ? 1 - step : 1);
		if (analysis_changepoints(&c, x, len, &o, &e) != 0) {
			fprintf(stderr, "eval_stats: %s\n", err_msg(&e));
			exit(1);
		}
		for (i = 0; i < c.n; i++) {
			size_t d = c.cp[i].index > pos ? c.cp[i].index - pos
			                               : pos - c.cp[i].index;

			if (step != 0 && d <= 3 && !found)
				found = 1;
			else
				(*false_cps)++;
		}
		analysis_cps_release(&c);
		*hits += (size_t)found;
		*steps += step != 0;
		*points += len;
	}
}

static void
table_cp(void)
{
	enum model m;
	size_t nt = trials(1000);

	printf("\n### Change points: %d-point series, CV 1 %%, one 2 %% step "
	       "at a random position in [15, 105)\n\n",
	    CP_LEN);
	printf("%zu series per cell.  Hit = a change point within ±3 of the "
	       "step; every other change point is false.\n\n",
	    nt);
	printf("| noise | hit rate %% | false CPs / 100 points (step) | "
	       "false CPs / 100 points (no step) |\n");
	printf("|---|---|---|---|\n");
	for (m = 0; m < M_COUNT; m++) {
		size_t h, f, s, p, h0, f0, s0, p0;

		cp_cell(&h, &f, &s, &p, m, 0.01, 0.02, CP_LEN, 15, 90, nt,
		    1000 + m);
		cp_cell(&h0, &f0, &s0, &p0, m, 0.01, 0, CP_LEN, 15, 90, nt,
		    1100 + m);
		printf("| %s |", model_names[m]);
		print_rate(h, s);
		printf(" %.3f | %.3f |\n", 100.0 * (double)f / (double)p,
		    100.0 * (double)f0 / (double)p0);
		fflush(stdout);
	}
}

/*
 * Short histories: a branch's first points.  13 points (5 before the
 * step, 8 after; the bisection test's shape) and 20 (5 before), CV 10 %
 * as on a loaded host, steps of 4x slower and 30 % slower.
 */
static void
table_cp_short(void)
{
	static const size_t lens[] = { 13, 20 };
	static const double steps[] = { -3.0, -0.3 };
	enum model m;
	size_t nt = trials(1000), l, k;

	printf("\n### Change points on short histories: CV 10 %%, the step "
	       "after 5 points\n\n");
	printf("%zu series per cell.  Hit = a change point within ±3 of the "
	       "step; false: any other (per 100 points).\n\n",
	    nt);
	printf("| noise | points | 4x hits %% | 30 %% hits %% | false / 100 "
	       "points (no step) |\n");
	printf("|---|---|---|---|---|\n");
	for (m = 0; m < M_COUNT; m++) {
		for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			size_t h, f, s, p;

			printf("| %s | %zu |", model_names[m], lens[l]);
			for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
				cp_cell(&h, &f, &s, &p, m, 0.10, steps[k],
				    lens[l], 5, 1, nt, 1200 + 10 * m + l);
				print_rate(h, s);
			}
			cp_cell(&h, &f, &s, &p, m, 0.10, 0, lens[l], 5, 1, nt,
			    1300 + 10 * m + l);
			printf(" %.3f |\n", 100.0 * (double)f / (double)p);
			fflush(stdout);
		}
	}
}

/* CPU time of this process: the box is shared, wall time is not ours. */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
table_timing(void)
{
	struct analysis_rng r;
	struct analysis_opts o;
	struct analysis_result res;
	struct analysis_cp_opts co;
	struct analysis_cps c;
	struct err e = { 0 };
	double a[MAX_N], b[MAX_N], h[HIST_RUNS], *x, t0, best;
	size_t i, k, reps = 50;

	analysis_rng_seed(&r, 77);
	printf("\n### Time (CPU time, best of %zu; 2000 resamples)\n\n", reps);
	printf("| operation | ms |\n|---|---|\n");
	draw_pair(a, b, MAX_N, M_NORMAL, 0.01, 0.02, &r);
	draw_history(h, HIST_RUNS, M_NORMAL, 0.01, &r);
	for (k = 0; k < 4; k++) {
		size_t n = k % 2 ? MAX_N : 5;

		analysis_opts_init(&o);
		if (k >= 2) {
			o.history = h;
			o.n_history = HIST_RUNS;
		}
		best = INFINITY;
		for (i = 0; i < reps; i++) {
			t0 = now();
			analysis_compare(&res, a, n, b, n, &o, &e);
			t0 = now() - t0;
			if (t0 < best)
				best = t0;
		}
		printf("| A/B, N = %zu, bootstrap%s | %.3f |\n", n,
		    k >= 2 ? " + 100-run history A/A" : "", best * 1e3);
	}
	x = malloc(5000 * sizeof(*x));
	if (x == NULL)
		exit(1);
	{
		struct noise ns;

		noise_init(&ns, M_NORMAL, 0.01, &r);
		for (i = 0; i < 5000; i++)
			x[i] = 1000 * noise_next(&ns) * (i >= 1700 ? 0.98 : 1) *
			    (i >= 3900 ? 1.03 : 1);
	}
	analysis_cp_opts_init(&co);
	best = INFINITY;
	for (i = 0; i < 10; i++) {
		t0 = now();
		analysis_changepoints(&c, x, 5000, &co, &e);
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
		if (i + 1 < 10)
			analysis_cps_release(&c);
	}
	printf("| change points, 5000 points (found %zu) | %.3f |\n", c.n,
	    best * 1e3);
	analysis_cps_release(&c);
	free(x);
}

/*
 * Low modes: a host whose runs now and then land in a slow mode (this
 * VM's CPU time has two modes 1.7x apart, docs/NOISE.md), against a
 * candidate that is really flaky (a share of its runs at half the
 * throughput).  The host's slow mode must not read as a new low mode of
 * the candidate; the flaky candidate must.
 */
#define LM_SLOW 0.59 /* 1 / 1.7 */
#define LM_FLAKY 0.5

static double
lm_run(struct analysis_rng *r, double slow, double flaky)
{
	double x = 1000 * (1 + 0.01 * gauss(r));

	if (analysis_rng_uniform(r) < slow)
		x *= LM_SLOW;
	if (analysis_rng_uniform(r) < flaky)
		x *= LM_FLAKY;
	return x;
}

static double
lm_cell(double slow, double flaky, size_t n, int hist, size_t nt, uint64_t seed)
{
	double a[16], b[16], h[HIST_RUNS];
	struct analysis_rng r;
	size_t t, i, u = 0;

	analysis_rng_seed(&r, seed);
	for (t = 0; t < nt; t++) {
		struct analysis_opts o;
		struct analysis_result res;
		struct err e = { 0 };

		analysis_opts_init(&o);
		for (i = 0; i < n; i++) {
			a[i] = lm_run(&r, slow, 0);
			b[i] = lm_run(&r, slow, flaky);
		}
		if (hist) {
			for (i = 0; i < HIST_RUNS; i++)
				h[i] = lm_run(&r, slow, 0);
			o.history = h;
			o.n_history = HIST_RUNS;
		}
		if (analysis_compare(&res, a, n, b, n, &o, &e) != 0) {
			fprintf(stderr, "eval_stats: %s\n", err_msg(&e));
			exit(1);
		}
		u += (res.unstable & ANALYSIS_UNSTABLE_LOWMODE) != 0;
	}
	return rate(u, nt);
}

static void
table_low_mode(void)
{
	static const size_t ns[] = { 5, 8, 16 };
	static const struct {
		const char *what;
		double slow, flaky;
	} rows[] = {
		{ "A/A, host slow mode 2 %", 0.02, 0 },
		{ "A/A, host slow mode 5 %", 0.05, 0 },
		{ "flaky 30 % of runs at -50 %, quiet host", 0, 0.3 },
		{ "flaky 30 %, host slow mode 5 %", 0.05, 0.3 },
	};
	size_t nt = trials(2000), k, c;
	int hist;

	printf("\n### Low modes: a host's slow mode (runs 1.7x slower) "
	       "against a flaky candidate\n\n");
	printf("%% of %zu trials with the low-mode bit set (CV 1 %% "
	       "otherwise).  A/A rows are false alarms, flaky rows power.  "
	       "History: 100 earlier runs of the same host.\n\n",
	    nt);
	printf("| case | history |");
	for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
		printf(" N = %zu |", ns[c]);
	printf("\n|---|---|");
	for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
		printf("---|");
	printf("\n");
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
		for (hist = 0; hist <= 1; hist++) {
			printf(
			    "| %s | %s |", rows[k].what, hist ? "yes" : "no");
			for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
				printf(" %.1f |",
				    lm_cell(rows[k].slow, rows[k].flaky, ns[c],
				        hist, nt,
				        1300 + 10 * k + 4 * c + hist));
			printf("\n");
			fflush(stdout);
		}
}

/*
 * Rounds on a drifting host.  Time is counted in run slots; each run
 * takes one.  The host's level: "quiet" is 1; "phases" switches between
 * idle (1) and busy (1 - DRIFT_BUSY) in phases of 0.5 to 3 slots (the
 * make eval-trust disturber's shape), a run getting the mean level over
 * its slot; "walk" is a random walk of DRIFT_WALK per slot (thermal,
 * page cache); "ramp" a linear drift of DRIFT_RAMP per slot (a host
 * warming up).  On top, white noise of CV 1 %.
 *
 * Schedules: "sequential" measures the base's runs, then the
 * candidate's, and each adaptive look's new runs the same way (rounds:
 * 1); the others measure one run a side a round: "ABBA" base first in
 * even rounds, candidate first in odd ones; "randomised blocks" the
 * daemon's order (common/rounds.h).  Analyses: "pooled" gives the runs
 * without their rounds, "blocked" with them (the daemon's), "+ other
 * work" also each run's share of busy time as the runner measures it
 * (host.other_cpu_pct, with 2 points of measurement noise; on hosts
 * without phases only that noise around 5 %), the covariate of
 * docs/ANALYSIS.md, "Other work on the host".
 */
#define DRIFT_BUSY 0.15
#define DRIFT_WALK 0.01
#define DRIFT_RAMP 0.005
#define DRIFT_MAXN 24

enum drift { D_QUIET, D_PHASES, D_WALK, D_RAMP, D_COUNT };
static const char *const drift_names[D_COUNT] = { "quiet",
	"busy/idle phases -15 %", "random walk 1 %/run",
	"linear ramp 0.5 %/run" };

enum order { O_SEQ, O_ABBA, O_BLOCKS };

struct host {
	enum drift d;
	double t, phase_end;
	double walk;
	int busy;
	struct analysis_rng *r;
};

static void
host_init(struct host *h, enum drift d, struct analysis_rng *r)
{
	memset(h, 0, sizeof(*h));
	h->d = d;
	h->r = r;
	h->busy = analysis_rng_uniform(r) < 0.5;
	h->phase_end = 0.5 + 2.5 * analysis_rng_uniform(r);
}

/* The next run's value; *z its other work (percent of the host). */
static double
host_run(struct host *h, double *z)
{
	double x = 1 + 0.01 * gauss(h->r), lvl = 1, t0 = h->t, t1 = t0 + 1;

	*z = 5 + 2 * gauss(h->r);

	switch (h->d) {
	case D_PHASES: {
		double acc = 0, t = t0;

		while (t < t1) {
			double end = h->phase_end < t1 ? h->phase_end : t1;

			acc += (end - t) * (h->busy ? 1 - DRIFT_BUSY : 1);
			if (h->busy)
				*z += 100 * (end - t);
			t = end;
			if (t >= h->phase_end) {
				h->busy = !h->busy;
				h->phase_end +=
				    0.5 + 2.5 * analysis_rng_uniform(h->r);
			}
		}
		lvl = acc;
		break;
	}
	case D_WALK:
		h->walk += DRIFT_WALK * gauss(h->r);
		lvl = exp(h->walk);
		break;
	case D_RAMP:
		lvl = 1 - DRIFT_RAMP * t0;
		break;
	default:
		break;
	}
	h->t = t1;
	return 1000 * x * lvl;
}

/*
 * Draws runs [from, to) of each side in the schedule's order; rb/rc get
 * each run's round.  pair: the pair's id for the randomised order.
 */
static void
drift_draw(double *a, double *b, double *za, double *zb, int64_t *rb,
    int64_t *rc, size_t from, size_t to, enum order ord, int64_t pair,
    double shift, struct host *h)
{
	size_t i;

	if (ord == O_SEQ) {
		for (i = from; i < to; i++) {
			a[i] = host_run(h, &za[i]);
			rb[i] = 0;
		}
		for (i = from; i < to; i++) {
			b[i] = (1 - shift) * host_run(h, &zb[i]);
			rc[i] = 0;
		}
		return;
	}
	for (i = from; i < to; i++) {
		int base_first = ord == O_ABBA
		    ? i % 2 == 0
		    : rounds_base_first(pair, (int64_t)i);

		rb[i] = rc[i] = (int64_t)i;
		if (base_first) {
			a[i] = host_run(h, &za[i]);
			b[i] = (1 - shift) * host_run(h, &zb[i]);
		} else {
			b[i] = (1 - shift) * host_run(h, &zb[i]);
			a[i] = host_run(h, &za[i]);
		}
	}
}

static void
drift_cell(struct tally *t, enum drift d, enum order ord, int blocked,
    double shift, size_t n_fixed, size_t ntrials, uint64_t seed)
{
	double a[DRIFT_MAXN], b[DRIFT_MAXN], za[DRIFT_MAXN], zb[DRIFT_MAXN];
	int64_t rb[DRIFT_MAXN], rc[DRIFT_MAXN];
	struct analysis_rng r;
	size_t k;

	memset(t, 0, sizeof(*t));
	analysis_rng_seed(&r, seed);
	for (k = 0; k < ntrials; k++) {
		struct analysis_opts o;
		struct analysis_result res;
		struct err e = { 0 };
		struct host h;
		size_t n = n_fixed ? n_fixed : 5, have = 0;

		host_init(&h, d, &r);
		analysis_opts_init(&o);
		if (!n_fixed) {
			o.first_runs = 5;
			o.max_runs = MAX_N;
		}
		if (blocked) {
			o.base_round = rb;
			o.cand_round = rc;
		}
		if (blocked == 2) {
			o.base_cov = za;
			o.cand_cov = zb;
		}
		for (;;) {
			drift_draw(a, b, za, zb, rb, rc, have, n, ord,
			    (int64_t)k, shift, &h);
			have = n;
			if (analysis_compare(&res, a, n, b, n, &o, &e) != 0) {
				fprintf(
				    stderr, "eval_stats: %s\n", err_msg(&e));
				exit(1);
			}
			if (n_fixed)
				break;
			n = analysis_next_runs(&res, n, 5, MAX_N);
			if (n == 0 || n > DRIFT_MAXN)
				break;
		}
		t->n++;
		t->runs += have;
		if (is_alarm(res.verdict) || res.verdict == ANALYSIS_UNSTABLE)
			t->alarms++;
		if (res.verdict == ANALYSIS_REGRESSION)
			t->hits++;
	}
}

static void
table_rounds(void)
{
	static const struct {
		const char *what;
		enum order ord;
		int blocked;
	} sch[] = {
		{ "sequential, pooled (rounds: 1)", O_SEQ, 0 },
		{ "ABBA, pooled", O_ABBA, 0 },
		{ "ABBA, blocked", O_ABBA, 1 },
		{ "randomised blocks, pooled", O_BLOCKS, 0 },
		{ "randomised blocks, blocked", O_BLOCKS, 1 },
		{ "randomised blocks, blocked + other work (default)", O_BLOCKS,
		    2 },
	};
	size_t nt = trials(1000), nt0 = trials(2000), k;
	enum drift d;

	printf("\n### Rounds on a drifting host: schedule and analysis\n\n");
	printf(
	    "CV 1 %% white noise on top of the host's drift; alpha 0.01, "
	    "min_effect 1 %%.  FA = any alarm (regression, improvement, "
	    "unstable) with no change, %zu trials; power = regression "
	    "reported for a 3 %% drop, %zu trials; N = mean runs per side.  "
	    "Adaptive: looks at 5, 8, 12, 18, 24.  Fixed: 8 runs a side.\n\n",
	    nt0, nt);
	printf("| host | schedule, analysis | FA %% adaptive | power %% "
	       "adaptive | N (3 %%) | FA %% N = 8 | power %% N = 8 |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (d = 0; d < D_COUNT; d++)
		for (k = 0; k < sizeof(sch) / sizeof(sch[0]); k++) {
			struct tally a0, a1, f0, f1;
			uint64_t sd = 2000 + 10 * d;

			drift_cell(
			    &a0, d, sch[k].ord, sch[k].blocked, 0, 0, nt0, sd);
			drift_cell(&a1, d, sch[k].ord, sch[k].blocked, 0.03, 0,
			    nt, sd + 1);
			drift_cell(&f0, d, sch[k].ord, sch[k].blocked, 0, 8,
			    nt0, sd + 2);
			drift_cell(&f1, d, sch[k].ord, sch[k].blocked, 0.03, 8,
			    nt, sd + 3);
			printf("| %s | %s |", drift_names[d], sch[k].what);
			print_rate(a0.alarms, a0.n);
			print_rate(a1.hits, a1.n);
			printf(" %.2f |", (double)a1.runs / (double)a1.n);
			print_rate(f0.alarms, f0.n);
			print_rate(f1.hits, f1.n);
			printf("\n");
			fflush(stdout);
		}
}

/*
 * Flaky modes both ways, with a 100-run history of the base's host: a
 * share of runs at -50 % (the "tcp_rr with 20,000 flows often degrades
 * by ~50 %" shape) appearing in the candidate, going away in it, or on
 * both sides.  "Flagged": unstable or regression for an appearing mode,
 * improvement for one going away, any alarm for the A/A rows.
 * Adaptive: looks at 5, 8, 12, 18, 24 and, for a suspected mode, on to
 * ANALYSIS_MODE_MAX_RUNS.
 */
#define MODE_MAXN 32

static void
mode_cell(size_t *hit, size_t *runs, double bflaky, double cflaky,
    double hflaky, int want, size_t n_fixed, size_t nt, uint64_t seed)
{
	double a[MODE_MAXN], b[MODE_MAXN], h[HIST_RUNS];
	struct analysis_rng r;
	size_t t, i;

	*hit = *runs = 0;
	analysis_rng_seed(&r, seed);
	for (t = 0; t < nt; t++) {
		struct analysis_opts o;
		struct analysis_result res;
		struct err e = { 0 };
		size_t n = n_fixed ? n_fixed : 5;
		int ok;

		for (i = 0; i < MODE_MAXN; i++) {
			a[i] = lm_run(&r, 0, bflaky);
			b[i] = lm_run(&r, 0, cflaky);
		}
		for (i = 0; i < HIST_RUNS; i++)
			h[i] = lm_run(&r, 0, hflaky);
		analysis_opts_init(&o);
		o.history = h;
		o.n_history = HIST_RUNS;
		if (!n_fixed) {
			o.first_runs = 5;
			o.max_runs = MAX_N;
		}
		for (;;) {
			size_t next;

			if (analysis_compare(&res, a, n, b, n, &o, &e) != 0) {
				fprintf(
				    stderr, "eval_stats: %s\n", err_msg(&e));
				exit(1);
			}
			if (n_fixed)
				break;
			next = analysis_next_runs(&res, n, 5, MAX_N);
			if (next == 0 || next > MODE_MAXN)
				break;
			n = next;
		}
		*runs += n;
		switch (want) {
		case ANALYSIS_REGRESSION:
			ok = res.verdict == ANALYSIS_UNSTABLE ||
			    res.verdict == ANALYSIS_REGRESSION;
			break;
		case ANALYSIS_IMPROVEMENT:
			ok = res.verdict == ANALYSIS_IMPROVEMENT;
			break;
		default:
			ok = is_alarm(res.verdict) ||
			    res.verdict == ANALYSIS_UNSTABLE;
		}
		*hit += ok;
	}
}

static void
table_modes(void)
{
	static const size_t ns[] = { 5, 8, 12, 16, 0 };
	static const struct {
		const char *what;
		double b, c, h;
		int want;
	} rows[] = {
		{ "30 % mode appears", 0, 0.3, 0, ANALYSIS_REGRESSION },
		{ "50 % mode appears", 0, 0.5, 0, ANALYSIS_REGRESSION },
		{ "30 % mode goes away", 0.3, 0, 0.3, ANALYSIS_IMPROVEMENT },
		{ "50 % mode goes away", 0.5, 0, 0.5, ANALYSIS_IMPROVEMENT },
		{ "A/A, 30 % flaky everywhere (alarms)", 0.3, 0.3, 0.3, 0 },
		{ "A/A, 50 % flaky everywhere (alarms)", 0.5, 0.5, 0.5, 0 },
		{ "A/A, clean (alarms)", 0, 0, 0, 0 },
	};
	size_t nt = trials(2000), k, c;

	printf("\n### Flaky modes both ways (runs at -50 %%, CV 1 %% "
	       "otherwise, a 100-run history as flaky as the base)\n\n");
	printf("%% of %zu trials flagged: unstable or regression for a mode "
	       "that appears, improvement for one that goes away, any alarm "
	       "for A/A.  Adaptive: looks at 5, 8, 12, 18, 24, and on for a "
	       "suspected mode (mean N in brackets).\n\n",
	    nt);
	printf("| case |");
	for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
		if (ns[c])
			printf(" N = %zu |", ns[c]);
		else
			printf(" adaptive |");
	printf("\n|---|");
	for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++)
		printf("---|");
	printf("\n");
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		printf("| %s |", rows[k].what);
		for (c = 0; c < sizeof(ns) / sizeof(ns[0]); c++) {
			size_t hit, runs;

			mode_cell(&hit, &runs, rows[k].b, rows[k].c, rows[k].h,
			    rows[k].want, ns[c], nt, 3000 + 10 * k + c);
			if (ns[c])
				print_rate(hit, nt);
			else
				printf(" %.1f ± %.1f (%.1f) |", rate(hit, nt),
				    halfw(hit, nt), (double)runs / (double)nt);
		}
		printf("\n");
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	double t0 = now();
	const char *only = argc > 2 ? argv[2] : "";

	if (argc > 1)
		scale = strtod(argv[1], NULL);
	if (!(scale > 0))
		scale = 1;
	printf("## perfwatch analysis: synthetic evaluation "
	       "(eval_stats, scale %g)\n",
	    scale);
	if (!*only || strchr(only, 'f'))
		table_fixed();
	if (!*only || strchr(only, 'a'))
		table_adaptive();
	if (!*only || strchr(only, 'A'))
		table_aa();
	if (!*only || strchr(only, 's'))
		table_sweep();
	if (!*only || strchr(only, 'c'))
		table_cp();
	if (!*only || strchr(only, 'S'))
		table_cp_short();
	if (!*only || strchr(only, 'L'))
		table_low_mode();
	if (!*only || strchr(only, 'R'))
		table_rounds();
	if (!*only || strchr(only, 'M'))
		table_modes();
	if (!*only || strchr(only, 't'))
		table_timing();
	printf("\n(total %.0f s of CPU)\n", now() - t0);
	return 0;
}
