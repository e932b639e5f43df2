#ifndef STORE_RUNS_H
#define STORE_RUNS_H

/*
 * A pair's runs (store/runs.c): their metric values and what each run
 * recorded of its host and its memcg profile.  A run is stored with
 * store_run_add (store/jobs.h).
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* A metric value of one side of a pair, from a run with status ok. */
struct store_value {
	char *role, *metric, *unit, *better;
	double value;
	int64_t run; /* the run's index */
};
struct store_values {
	struct store_value *v;
	size_t n;
};
/* Both sides' values, by metric, role and run: 0 or -1. */
int store_pair_value_list(
    struct store *, struct store_values *out, int64_t pair_id);
/* The values of each pair of pair_ids[0..n) into out[0..n) (the
 * caller's; out[i] is pair_ids[i]'s, n 0 for a pair with none), a
 * statement each 64 pairs: 0 or -1 (out released). */
int store_pairs_value_list(struct store *, struct store_values *out,
    const int64_t *pair_ids, size_t n);
void store_values_release(struct store_values *); /* NULL ok */

/*
 * ---- bench host hygiene and charge path (docs/HOST.md, docs/MEMCG.md;
 * daemon/hygiene.c, daemon/chargepath.c) ----
 * What a pair's ok runs recorded, by role and run (a typed read).  The
 * documents stay the text the runner uploaded, with bytes that are not
 * UTF-8 as '?'; the readers parse what they need.
 */
struct store_run_meta {
	char *role;   /* base | candidate */
	int64_t run;  /* the run's index */
	int measured; /* 1: index below max_runs; 0: the profile slot */
	char *host_state_json; /* docs/HOST.md: a JSON object, or NULL */
	char *profile_json;    /* docs/MEMCG.md: a JSON object, or NULL */
};
struct store_run_metas {
	struct store_run_meta *v;
	size_t n;
};
/* 0 (no runs: n 0) or -1 (errmsg). */
int store_pair_run_meta_list(
    struct store *, struct store_run_metas *out, int64_t pair_id);
/* The runs of each pair of pair_ids[0..n) into out[0..n) (the
 * caller's; out[i] is pair_ids[i]'s), a statement each 64 pairs: 0 or
 * -1 (out released). */
int store_pairs_run_meta_list(struct store *, struct store_run_metas *out,
    const int64_t *pair_ids, size_t n);
void store_run_metas_release(struct store_run_metas *); /* NULL ok */
/*
 * Both reads of each pair of pair_ids[0..n) at once: its values into
 * vals[i] (as store_pairs_value_list) and its runs into metas[i] (as
 * store_pairs_run_meta_list), a statement each 64 pairs: 0 or -1
 * (both released).
 */
int store_pairs_values_runs(struct store *, struct store_values *vals,
    struct store_run_metas *metas, const int64_t *pair_ids, size_t n);

#endif
