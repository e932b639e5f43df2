#ifndef DAEMON_VERDICT_INT_H
#define DAEMON_VERDICT_INT_H

/*
 * What the files of the verdict worker share (verdict.c,
 * verdict_tax.c): a pair's values as read from the store and the
 * metrics judged from them.
 */
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "common/json.h"
#include "daemon/verdict.h"
#include "store/pairs.h"
#include "store/runs.h"

enum kind {
	K_JUDGED, /* analysed */
	K_INFO,   /* better: info, shown only */
	K_INVALID /* cannot be analysed; inconclusive with a note */
};

struct vec {
	double *v;
	size_t n, cap;
};

/* Round labels of a side's runs, parallel to its values. */
struct rvec {
	int64_t *v;
	size_t n, cap;
};

struct metric {
	const char *name, *unit, *better; /* borrowed from the store's lists */
	char *own_name;                   /* a memcg tax's name, or NULL */
	struct vec base, cand, hist;
	struct rvec base_r, cand_r; /* rounds (empty: not run in rounds) */
	struct rvec base_i, cand_i; /* the run index of each value */
	/* Other work on the host during each value's run (empty: none). */
	struct vec base_z, cand_z;
	double floor_pct; /* the host's noise floor (store_canary_floor) */
	double min_effect;
	enum kind kind;
	struct analysis_result res;
	char note[320];
	int64_t cmp_id;
};

struct work {
	struct store_vpair pair;
	struct store_values vals;
	struct store_vhists hist;
	json_t *spec; /* the candidate's spec, parsed (owned) */
	struct metric *m;
	size_t n, cap;
	int64_t first_runs, max_runs, cur_runs;
	int64_t round_size; /* runs a round (common/rounds.h), 0: none */
	int64_t bisect;     /* the bisection that made the pair, or 0 */
};

/* w->vals grouped into w->m: sides, runs, rounds, other work, history
 * (verdict_group.c); w->spec and w->round_size set. */
void verdict_i_group(struct work *w);
/* Appends v to x. */
void verdict_i_vec_add(struct vec *x, double v);
void verdict_i_analyse_metric(struct work *w, struct metric *m);
const char *verdict_i_jstr(json_t *o, const char *k);
/*
 * After pair_id went final (in the open transaction): the memcg tax of
 * each nested pair of its group whose root pair is final too.  A group:
 * the siblings the store offers (same job, creation time and host) whose
 * specs differ only in the cgroup, cut in id order into runs where no
 * cgroup repeats (two identical submits in one second stay apart).
 */
int verdict_i_memcg_tax_after(
    struct store *s, struct verdict_outcome *out, int64_t pair_id, int64_t now);
void verdict_i_work_release(struct work *w);
/* Writes the comparison rows (and the regressions and history that
 * follow from final ones) in the open transaction. */
int verdict_i_write_rows(struct store *s, struct verdict_outcome *out,
    struct work *w, int64_t more, int64_t now);

#endif
