#include <math.h>

#include "analysis/spread.h"

void
spread_of(struct spread *out, const double *x, size_t n)
{
	double sum = 0, ss = 0, dev = 0, mean;
	size_t i;

	out->n = n;
	out->mean = out->sd = NAN;
	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			return;
		sum += x[i];
	}
	mean = sum / (double)n;
	out->mean = mean;
	if (n < 2)
		return;
	/* The corrected two-pass sum: dev is the rounding error of mean,
	 * which the second term takes back out. */
	for (i = 0; i < n; i++) {
		ss += (x[i] - mean) * (x[i] - mean);
		dev += x[i] - mean;
	}
	ss -= dev * dev / (double)n;
	out->sd = sqrt(ss > 0 ? ss / (double)(n - 1) : 0);
}

double
spread_pct(double mean, double sd)
{
	if (!isfinite(mean) || !isfinite(sd) || mean == 0)
		return NAN;
	return sd / fabs(mean) * 100;
}
