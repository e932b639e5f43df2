#ifndef CLI_RUNFILE_H
#define CLI_RUNFILE_H

/*
 * Run files for `perfwatch compare` and `perfwatch changepoints`: either
 * plain text, one number per line (or "LABEL VALUE" where labels are
 * allowed; '#' starts a comment, blank lines are skipped), read as one
 * metric named "value"; or a result JSON exported by the service (the
 * shape of GET /api/v1/jobs/{id}: {"runs":[{"index", "status",
 * "metrics":[{"name","value","unit","better"}]}]}), one metric per name,
 * values in run order.  Runs whose status is not "ok" are skipped, and
 * so are metrics with better "info" (telemetry, never judged).
 *
 * Plain numbers must be finite and positive (the analysis works on
 * logs): anything else is an error naming FILE:LINE.  A JSON metric with
 * a value <= 0 is kept but marked bad (bad holds the reason), so the
 * other metrics of the file can still be compared.
 */
#include <stddef.h>

#include "common/err.h"

struct runfile_metric {
	char *name;
	char *unit;   /* NULL when not given */
	int better;   /* ANALYSIS_HIGHER / _LOWER, 0 when not given */
	double *v;    /* values in order */
	char **label; /* labels (NULL entries when none); NULL if no labels */
	size_t n, cap;
	char *bad; /* why the metric cannot be analysed, or NULL */
};

struct runfile {
	struct runfile_metric *m;
	size_t n;
	int json; /* 1 when read from a result JSON */
};

/*
 * Reads path.  labels: accept "LABEL VALUE" lines in plain files.  0 and
 * *out (runfile_release() it), or -1 with e set ("FILE:LINE: ...").
 * A file without any value is an error.
 */
int runfile_load(
    struct runfile *out, const char *path, int labels, struct err *e);
void runfile_release(struct runfile *); /* NULL ok */
/* The metric called name, or NULL. */
struct runfile_metric *runfile_find(struct runfile *, const char *name);

#endif
