#ifndef ANALYSIS_ANALYSIS_H
#define ANALYSIS_ANALYSIS_H

/*
 * Statistics for perfwatch: A/B verdicts, false discovery rate control,
 * adaptive run counts and change points on history series.
 *
 * Pure functions: no I/O, no globals, no locks; every call depends only on
 * its arguments (the bootstrap uses a PRNG seeded from the options), so
 * the daemon and the CLI get the same answer for the same data, and the
 * functions may run on any thread.  Memory comes from xmalloc (aborts on
 * exhaustion) and is freed before return, except where a function says
 * the caller owns it.
 *
 * All work is on log values: a metric must be positive and finite.
 * Effects are reported in percent of the base (exp(log shift) - 1).
 * docs/ANALYSIS.md describes the methods and their measured behaviour.
 */
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Which direction of a metric is good. */
#define ANALYSIS_HIGHER 1 /* throughput, ops/s */
#define ANALYSIS_LOWER -1 /* latency, run time */

enum analysis_verdict {
	ANALYSIS_INCONCLUSIVE = 0, /* neither significant nor bounded */
	ANALYSIS_UNCHANGED,        /* CI inside +-min_effect */
	ANALYSIS_REGRESSION,       /* significant, worse by >= min_effect */
	ANALYSIS_IMPROVEMENT,      /* significant, better by >= min_effect */
	ANALYSIS_UNSTABLE          /* spread grew a lot, or a new bad mode */
};

/* How the p-value of a comparison was obtained. */
enum analysis_pmethod {
	ANALYSIS_P_NONE = 0, /* no p-value (too few runs) */
	ANALYSIS_P_WELCH,    /* Welch t-test on winsorised logs */
	ANALYSIS_P_HISTORY,  /* A/A splits of the baseline history */
	ANALYSIS_P_BLOCKED,  /* t on within-round contrasts (rounds) */
	ANALYSIS_P_ADJUSTED  /* the same, adjusted for the host's other work */
};

/* Why a comparison is unstable (bit set). */
#define ANALYSIS_UNSTABLE_SPREAD 0x1  /* candidate spread >> base spread */
#define ANALYSIS_UNSTABLE_LOWMODE 0x2 /* some candidate runs far worse */

/* The low mode of a comparison (struct analysis_result.mode). */
enum analysis_mode {
	ANALYSIS_MODE_NONE = 0,  /* no side has runs far worse than the other */
	ANALYSIS_MODE_SUSPECTED, /* some, not (yet) significant: more runs */
	ANALYSIS_MODE_APPEARED,  /* confirmed: the candidate has a new one */
	ANALYSIS_MODE_DISAPPEARED /* confirmed: the candidate lost the base's */
};

/* Adaptive runs for a suspected low mode go past max_runs up to this many
 * runs per side (docs/ANALYSIS.md, "Low modes"). */
#define ANALYSIS_MODE_MAX_RUNS 32
/* Futility: the conditional power below which a look stops asking for
 * runs (analysis_result.futile). */
#define ANALYSIS_FUTILITY_CP 0.10
/* ... judged from this many runs a side on (and half of max_runs): a job
 * with max_runs 12 or less never stops for futility. */
#define ANALYSIS_FUTILITY_MIN_RUNS 12

struct analysis_opts {
	int better;        /* ANALYSIS_HIGHER (default when 0) or _LOWER */
	double min_effect; /* percent; default 1.0 when <= 0 */
	double alpha;      /* per-metric false-alarm rate; default 0.01 */
	double ci_level;   /* bootstrap interval; default 0.95 */
	unsigned n_boot;   /* resamples and A/A splits; default 2000 */
	uint64_t seed;     /* PRNG seed; 0 means the fixed default */
	/*
	 * The baseline's history on this host, benchmark and point (raw
	 * values, any order).  With at least min_history values whose spread
	 * matches the current runs, the p-value comes from A/A splits of it
	 * instead of Welch.  NULL/0: none.  Borrowed.
	 */
	const double *history;
	size_t n_history;
	size_t min_history; /* default 60 */
	/*
	 * Adaptive runs.  first_runs is the job's initial run count and
	 * max_runs its bound; looks are at first_runs, x1.5, ... up to
	 * max_runs (5, 8, 12).  When max_runs > first_runs, alpha is spent
	 * over the looks (see analysis_look_alpha) so that stopping at any
	 * look keeps the overall false-alarm rate at alpha.  0: fixed design.
	 */
	size_t first_runs;
	size_t max_runs;
	/* Unstable: candidate spread ratio that counts as "a lot" (3.0). */
	double spread_ratio;
	/* Unstable: a run this many percent worse than base is "low" (25). */
	double low_mode_pct;
	/* 1: no low-mode check, for a metric whose far runs are sampling,
	 * not a mode (a profile's share of a few samples). */
	int no_low_modes;
	/*
	 * Rounds: the round of each base and candidate run (any numbering;
	 * runs of one round were measured close together, base and
	 * candidate in turns).  With at least 3 rounds holding both sides,
	 * the change is judged from within-round contrasts when the rounds
	 * differ (docs/ANALYSIS.md, "Rounds").  NULL: no rounds.  Borrowed.
	 */
	const int64_t *base_round, *cand_round;
	/*
	 * Other work on the host: a covariate of each base and candidate run
	 * (the share of the host's CPU that other work used during it, in
	 * percent).  When it explains the runs' noise and does not itself
	 * differ between the sides, the change is judged adjusted for it
	 * (docs/ANALYSIS.md, "Other work on the host").  NULL: none; any
	 * non-finite value: none.  Borrowed.
	 */
	const double *base_cov, *cand_cov;
	/*
	 * The host's noise floor in percent (its canary's A/A pairs): a
	 * change smaller than this is "unchanged" whatever its p-value.  0:
	 * unknown, no floor.
	 */
	double noise_floor_pct;
};

/* Fills o with the defaults above. */
void analysis_opts_init(struct analysis_opts *o);

struct analysis_result {
	enum analysis_verdict verdict;
	size_t n_base, n_cand;
	double base_median, cand_median; /* raw units */
	/* Hodges-Lehmann shift of the logs, cand vs base, in percent. */
	double change_pct;
	double ci_low_pct, ci_high_pct; /* bootstrap interval */
	double p_value;                 /* NAN when unknown */
	double p_adjusted;              /* after analysis_fdr; else p_value */
	double alpha_used;              /* this look's significance level */
	enum analysis_pmethod p_method;
	double welch_t, welch_df;
	double spread_ratio;  /* cand / base (or history) spread of logs */
	size_t low_mode_runs; /* candidate runs in a new bad mode */
	int unstable;         /* ANALYSIS_UNSTABLE_* bits */
	/* Mean and sample standard deviation of each side's raw values (sd
	 * NAN with fewer than 2 runs). */
	double base_mean, base_sd, cand_mean, cand_sd;
	/* Rounds with both sides that the comparison saw (0: no rounds),
	 * and the p-value of "the rounds differ" (F test; NAN unknown). */
	size_t rounds;
	double rounds_p;
	/*
	 * Other work on the host: adjusted 1 when the change, interval and
	 * p-value are the adjusted model's (p_method ANALYSIS_P_ADJUSTED);
	 * adjust_base, adjust_cand the covariate's mean on each side, and
	 * adjust_beta the change in percent per point of it (NAN when there
	 * was no covariate or the model could not be fitted).
	 * adjust_imbalanced 1 when the sides differed in it and the more
	 * cautious of the adjusted and the unadjusted test judged, 2 when
	 * they differed so much that the change made the other work and the
	 * unadjusted test judged; 0 otherwise.
	 */
	int adjusted, adjust_imbalanced;
	double adjust_base, adjust_cand, adjust_beta;
	/*
	 * Low modes, both ways: runs at least low_mode_pct worse than the
	 * better side's bulk.  mode_pct: the low runs' median against that
	 * bulk, in percent (NAN when none); shares in percent of each
	 * side's runs, the history's NAN without one.
	 */
	enum analysis_mode mode;
	double mode_pct;
	double mode_base_share, mode_cand_share, mode_hist_share;
	double mode_p; /* the one-sided Fisher p of the mode's direction */
	/*
	 * Futility: an inconclusive look from half of max_runs (and 12 runs)
	 * on whose
	 * shift would reach the last look's boundary with a probability
	 * below ANALYSIS_FUTILITY_CP under its own trend (cond_power) stops
	 * there: futile 1, no more runs asked.  cond_power NAN when not
	 * computed.
	 */
	double cond_power;
	int futile;
	char note[240]; /* text explaining the verdict, or "" */
};

/*
 * Compares candidate runs with base runs of one metric.  0 and *out
 * filled; with fewer than 2 runs on a side the verdict is inconclusive,
 * with NAN for the unknown numbers and a note.  ERR_INVALID when a value
 * is not finite or not positive (e says which side and run, 1-based).
 */
int analysis_compare(struct analysis_result *out, const double *base, size_t nb,
    const double *cand, size_t nc, const struct analysis_opts *o,
    struct err *e);

/*
 * Benjamini-Hochberg across the metrics of one candidate: sets
 * p_adjusted of each result and turns a regression or improvement whose
 * adjusted p-value exceeds q (0.05 when <= 0) into inconclusive.
 * Results without a p-value are ignored.
 */
void analysis_fdr(struct analysis_result *res, size_t n, double q);

/* BH adjusted p-values of p[0..n) into out[0..n) (NAN stays NAN). */
void analysis_bh_adjust(double *out, const double *p, size_t n);

/*
 * Adaptive runs: the number of runs per side to have next, or 0 to stop
 * (a verdict was reached, or max_runs is reached).  Only an inconclusive
 * verdict asks for more: first_runs, then x1.5 rounded up (5 -> 8 -> 12),
 * bounded by max_runs; none past a futile look (r->futile: the shift is
 * too small to become significant by max_runs, docs/ANALYSIS.md,
 * "Futility").  A suspected low mode (r->mode, its p-value below
 * 0.1) may go on past max_runs, x1.5 a look, up to
 * ANALYSIS_MODE_MAX_RUNS.  n_now is the smaller side's run
 * count.
 */
size_t analysis_next_runs(const struct analysis_result *r, size_t n_now,
    size_t first_runs, size_t max_runs);

/*
 * The nominal significance level at a look with n runs per side: alpha
 * is spent over the looks first_runs, x1.5, ..., max_runs with the
 * Pocock-type spending function alpha * ln(1 + (e - 1) t), t = n /
 * max_runs, and each look's boundary is computed exactly for correlated
 * looks (group-sequential recursion), so a test that stops at the first
 * significant look keeps its overall false-alarm rate at alpha.  A look
 * off the schedule (runs failed) spends up to its own n.  Returns alpha
 * when max_runs <= first_runs (fixed design).
 */
double analysis_look_alpha(
    double alpha, size_t n, size_t first_runs, size_t max_runs);

const char *analysis_verdict_name(enum analysis_verdict);

/* Change points on a history series (values in commit order). */
struct analysis_cp_opts {
	int better;         /* for direction; default ANALYSIS_HIGHER */
	double min_effect;  /* percent; a change must be this big (1.0) */
	double alpha;       /* confirmation test level (0.001) */
	size_t min_segment; /* runs per segment at least (5) */
	double penalty;     /* PELT penalty factor times log(n) (0: auto) */
};

void analysis_cp_opts_init(struct analysis_cp_opts *o);

struct analysis_cp {
	size_t index;         /* first point after the change */
	size_t lo, hi;        /* the change is at an index in [lo, hi] */
	double before, after; /* medians of the neighbouring segments */
	double change_pct;    /* after vs before, percent */
	double p_value;       /* Welch between the neighbouring segments */
	enum analysis_verdict direction; /* regression or improvement */
};

struct analysis_cps {
	struct analysis_cp *cp; /* owned; analysis_cps_release() */
	size_t n;
	double sigma; /* noise of the logs used (robust, from differences) */
	double phi;   /* lag-1 autocorrelation allowed for */
};

/*
 * Finds the change points of x[0..n): optimal partitioning (PELT) of the
 * logs with a Gaussian cost, sigma from the MAD of first differences,
 * isolated outliers clipped to a running median, each change confirmed
 * by a Welch test between its neighbouring segments and min_effect.
 * 0 and *out (caller releases); ERR_INVALID for a value that is not
 * finite or not positive (e names the 1-based position).  A series
 * shorter than 2 * min_segment has no change points.
 */
int analysis_changepoints(struct analysis_cps *out, const double *x, size_t n,
    const struct analysis_cp_opts *o, struct err *e);

/*
 * Incremental use on append: re-runs the detector on the last `window`
 * points only (all when n <= window) and reports indices into x.  A
 * change older than the window is not re-examined: the caller keeps the
 * change points it already recorded there.  Cost is bounded by window
 * whatever the history length.
 */
int analysis_changepoints_tail(struct analysis_cps *out, const double *x,
    size_t n, size_t window, const struct analysis_cp_opts *o, struct err *e);

void analysis_cps_release(struct analysis_cps *); /* NULL ok */

/*
 * Building blocks, exported for tests and the evaluation program.
 */

/* xoshiro256** seeded through splitmix64. */
struct analysis_rng {
	uint64_t s[4];
};
void analysis_rng_seed(struct analysis_rng *, uint64_t seed);
uint64_t analysis_rng_next(struct analysis_rng *);
double analysis_rng_uniform(struct analysis_rng *);         /* [0, 1) */
size_t analysis_rng_below(struct analysis_rng *, size_t n); /* [0, n) */

/*
 * The median of x[0..n): the middle value, or the mean of the middle two
 * ((a + b) / 2, as the store's job summaries); NAN when n is 0.  The one
 * median of perfwatch: the verdict, the dashboard and the CLI take it.
 */
double analysis_median_inplace(double *x, size_t n); /* x is reordered */
double analysis_median(const double *x, size_t n);   /* x is left as is */
/* Hodges-Lehmann shift: median of b[j] - a[i] over all pairs. */
double analysis_hl_shift(
    const double *a, size_t na, const double *b, size_t nb);
/*
 * The change of cand against base in percent, as analysis_compare
 * defines it (the Hodges-Lehmann shift of the logs), before its outlier
 * clipping: for a quick look where no comparison was made yet (the
 * dashboard's rows of a pair still running).  NAN when a side is empty
 * or holds a value <= 0 or not finite.
 */
double analysis_change_pct(
    const double *base, size_t nb, const double *cand, size_t nc);
/*
 * Welch's t-test of b against a: t = (mean b - mean a) / se, the
 * Welch-Satterthwaite df and the two-sided p-value.  -1 when a side has
 * fewer than 2 values.  Both variances 0: t = 0 and p = 1 when the means
 * are equal, else t = +-inf and p = 0.
 */
int analysis_welch(double *t, double *df, double *p, const double *a, size_t na,
    const double *b, size_t nb);
/* Regularised incomplete beta I_x(a, b), continued fraction. */
double analysis_betai(double a, double b, double x);
/* log Gamma(x), x > 0 (Stirling series; thread safe unlike lgamma). */
double analysis_lgamma(double x);
/* Student t: P(|T| >= |t|) with df degrees of freedom. */
double analysis_t_p2(double t, double df);
/* Student t quantile: q with P(T <= q) = p, 0 < p < 1. */
double analysis_t_quantile(double p, double df);
/*
 * Change-point position refinement (used by analysis_changepoints): each
 * of cps[0..ncp) (ascending indices into the logs y[0..n)) moves, between
 * its neighbours and keeping segments of at least minseg, to the
 * position of maximum likelihood under a Gaussian kernel density
 * estimate of the segmentation's residuals, the neighbouring segment
 * means as the levels.
 */
void analysis_cp_refine(
    size_t *cps, size_t ncp, const double *y, size_t n, size_t minseg);
/* F distribution: P(F >= f) with (d1, d2) degrees of freedom. */
double analysis_f_sf(double f, double d1, double d2);

#endif
