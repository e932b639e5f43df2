#ifndef ANALYSIS_ANALYSIS_INT_H
#define ANALYSIS_ANALYSIS_INT_H

/*
 * What the files of analysis/ share and nobody else sees: the estimators
 * of distributions.c that compare.c and changepoints.c build on.
 */
#include <stddef.h>

struct err;

#define MAD_SCALE 1.4826   /* MAD to sigma for normal data */
#define UNSTABLE_P 0.001   /* spread test level */
#define LOWMODE_SIGMAS 8.0 /* a low run is also this many sigmas away */
/* Low mode, confirmed: the Fisher test's share of alpha, each direction
 * (0.002 at alpha 0.01); the bulk's shift test has the rest when a mode
 * is seen (docs/ANALYSIS.md, "Low modes"). */
#define LOWMODE_ALPHA_SHARE 0.2
#define LOWMODE_SUSPECT_P 0.1  /* low mode, suspected: more runs */
#define LOWMODE_HIST_P 0.01    /* history's share far above the base's */
#define LOWMODE_MIN_HISTORY 20 /* history runs for that test */

struct analysis_opts;
struct analysis_result;

/* The percent change of a shift of logs. */
double analysis_i_pct(double logshift);
/* 0 when x[0..n) are all finite, else -1 naming what in e. */
int analysis_i_check_values(
    const double *x, size_t n, const char *what, struct err *e);
/* The mean of a and b, safe from overflow. */
double analysis_i_mid_mean(double a, double b);
/* The median of x[0..n), x untouched (ws: n doubles of scratch). */
double analysis_i_median_copy(const double *x, size_t n, double *ws);
/* MAD about center, scaled to sigma for normal data (ws: n doubles). */
double analysis_i_robust_sigma(
    const double *x, size_t n, double center, double *ws);
void analysis_i_mean_var(const double *x, size_t n, double *mean, double *var);
/* qsort's comparison of doubles, ascending. */
int analysis_i_cmp_double(const void *pa, const void *pb);
void analysis_i_sort_small(double *x, size_t n);
/* The Hodges-Lehmann shift of sorted b against sorted a (ws: scratch). */
double analysis_i_hl_sorted(
    const double *a, size_t na, const double *b, size_t nb, size_t *ws);
/* The standard normal's upper tail, and its quantile. */
double analysis_i_norm_sf(double z);
double analysis_i_norm_quantile_upper(double p);

/* r's note, replaced (printf-like), and appended to (compare.c). */
void analysis_i_set_note(struct analysis_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* shift_tests.c: the tests of a shift that compare.c combines. */
double analysis_i_median_sorted(const double *x, size_t n);
/* The runs of sorted g within dist of its median: [*lo, *hi). */
void analysis_i_reject_range(
    const double *g, size_t n, double dist, size_t *lo, size_t *hi);
/* The Huber-clipped mean of sorted g (sigma_h the history's sigma, rej
 * the distance beyond which runs are dropped). */
double analysis_i_clipped_mean(
    const double *g, size_t n, double sigma_h, double rej);
/* The p-value of stat, the clipped-mean difference of groups of nb and
 * nc runs, by groups drawn from the history's clean logs hl. */
double analysis_i_history_p(const double *hl, size_t m, size_t nb, size_t nc,
    double stat, double sigma_h, double rej, const struct analysis_opts *o);
/* The bootstrap interval of the shift of b against a, at o->ci_level. */
void analysis_i_bootstrap_ci(double *lo, double *hi, const double *a, size_t na,
    const double *b, size_t nb, const struct analysis_opts *o);
/* A run of a pair in rounds: its round, its (winsorised) log, its side,
 * and the host's other work during it (opts base_cov; 0 without). */
struct analysis_rrun {
	int64_t round;
	double y, z;
	int cand;
};
int analysis_i_cmp_rrun(const void *pa, const void *pb);
int analysis_i_blocked_test(struct analysis_result *r, double *shift,
    double *se, double *df, double *p, const struct analysis_rrun *x, size_t n);
/* The blocked model with the covariate z (analysis_i_adjusted_test). */
struct analysis_adjust {
	double shift, se, df, p; /* the change, as the blocked test's */
	double beta, beta_p;     /* z's slope (log per unit) and its p */
	double balance_p;        /* z's own within-round shift's p */
};
int analysis_i_adjusted_test(
    struct analysis_adjust *a, const struct analysis_rrun *x, size_t n);

/* modes.c: the low runs of a comparison are those more than thr worse
 * (sign: -1 higher is better, +1 lower) than ref, the better side's
 * median; least is low_mode_pct as a log ratio. */
struct analysis_lowref {
	double ref, thr, least, sign;
};
void analysis_i_low_ref(struct analysis_lowref *lr, const double *lb, size_t nb,
    const double *lc, size_t nc, const struct analysis_opts *o);
int analysis_i_is_low(const struct analysis_lowref *lr, double x);
/* 1 when some run of lb or lc is low and each side's other runs (at
 * least 2) have their median at the reference: a mode beside an unmoved
 * bulk, which the shift test leaves to the mode test. */
int analysis_i_low_is_mode(const struct analysis_lowref *lr, const double *lb,
    size_t nb, const double *lc, size_t nc);
/* Low modes both ways, and a spread that grew with no shift, of the
 * sides' logs lb and lc, into r; level: the Fisher test's level of this
 * look, one direction. */
void analysis_i_check_modes(struct analysis_result *r, const double *lb,
    size_t nb, const double *lc, size_t nc, const struct analysis_opts *o,
    double level);
void analysis_i_check_spread(struct analysis_result *r, const double *lb,
    size_t nb, const double *lc, size_t nc, const double *wb, const double *wc,
    double ref_var, double ref_df, const struct analysis_opts *o);

/* error_control.c: analysis_look_alpha with the O'Brien-Fleming-type
 * spending function (alpha kept for the last looks). */
double analysis_i_look_alpha_late(
    double alpha, size_t n, size_t first_runs, size_t max_runs);
/* error_control.c: r->futile and r->cond_power of a look of n runs a
 * side, after its verdict (analysis.h). */
void analysis_i_futility(
    struct analysis_result *r, const struct analysis_opts *o, size_t n);

#endif
