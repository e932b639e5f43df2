#ifndef DAEMON_CHARGEPATH_H
#define DAEMON_CHARGEPATH_H

/*
 * The differential charge-path view of a pair (docs/MEMCG.md): for each
 * charge-path symbol a profiled run matched (the blob's "matched"), its
 * mean share over the base's profiled runs and over the candidate's,
 * side by side.  Pure: the dashboard's pair page and the alert text use
 * it alike.
 */
#include <stddef.h>

#include "common/json.h"

struct chargepath_sym {
	const char *symbol;        /* borrowed from *keep */
	double base_pct, cand_pct; /* mean over the side's profiled runs */
};

struct store_run_metas;

/*
 * rows: a pair's runs as store_pair_run_meta_list() gives them (each one's
 * role and profile text, or NULL).  Fills out (at most max, the largest |cand
 * - base| first; a symbol a side's runs never matched counts 0 there) and
 * returns how many.  Runs whose share is unknown are left out of both the means
 * and the counts.  *keep gets the parsed blobs the symbols point into
 * (json_decref() it when done with out).  out_runs gets the profiled
 * runs with a known share of the base [0] and the candidate [1].
 */
size_t chargepath_diff(struct chargepath_sym *out, size_t max, int out_runs[2],
    const struct store_run_metas *rows, json_t **keep);

#endif
