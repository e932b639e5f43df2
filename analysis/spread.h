#ifndef ANALYSIS_SPREAD_H
#define ANALYSIS_SPREAD_H

/*
 * A side's mean and spread, as kernel developers quote them next to a
 * median: the mean and the sample standard deviation, and the standard
 * deviation in percent of the mean (LKP's "%stddev": "1.234e+06 ±2%").
 * Pure (no I/O, no globals).  The verdict (daemon/verdict.c) stores them
 * with each comparison, and the pages compute them the same way for a
 * pair that has no comparison yet.
 */
#include <stddef.h>

struct spread {
	size_t n;    /* values */
	double mean; /* NAN when n is 0 */
	double sd;   /* sample standard deviation (n - 1): NAN when n < 2 */
};

/*
 * The mean and sample standard deviation of x[0..n) into *out (two
 * passes, so values of 1e9 with a spread of 1 keep their digits).  A
 * value that is not finite makes both unknown (NAN).
 */
void spread_of(struct spread *out, const double *x, size_t n);

/*
 * sd in percent of |mean| (LKP's %stddev): NAN when either is unknown
 * or the mean is 0.
 */
double spread_pct(double mean, double sd);

#endif
