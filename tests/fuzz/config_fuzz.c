/*
 * libFuzzer target for the YAML loader: any bytes as a job file.  The
 * load must succeed with no errors or fail with at least one, and never
 * crash, leak or read out of bounds.  make fuzz FUZZ_TARGETS=config
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg_errors errs = { 0 };
	struct job_config *job;
	struct cfg_point *pts;
	size_t n;
	int rc;

	rc = config_parse_job(&job, "fuzz", (const char *)data, size, &errs);
	if ((rc == 0) != (errs.n == 0) || (rc == 0) != (job != NULL))
		abort();
	if (job != NULL) {
		config_expand(&pts, &n, job);
		config_points_free(pts, n);
	}
	job_config_free(job);
	cfg_errors_free(&errs);
	return 0;
}
