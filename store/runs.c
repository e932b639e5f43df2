/*
 * The store's runs: a pair's runs with their metadata (the hygiene and
 * noise checks read them) and their metric values.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/runs.h"
#include "store/store_int.h"

static void
run_meta_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_run_meta *m = row;

	(void)arg;
	m->role = store_i_col_dup(st, 0);
	m->run = db_col_int64(st, 1);
	m->measured = db_col_int(st, 2) != 0;
	/* The documents as the JSON rows had them (non-UTF-8 bytes '?'). */
	m->host_state_json = store_i_web_text(st, 3);
	m->profile_json = store_i_web_text(st, 4);
}

/* store_i_ids_lists' lists: the array, then its count. */
_Static_assert(offsetof(struct store_run_metas, v) == 0 &&
        offsetof(struct store_run_metas, n) == sizeof(void *),
    "a list as store_i_ids_lists reads it");
_Static_assert(offsetof(struct store_values, v) == 0 &&
        offsetof(struct store_values, n) == sizeof(void *),
    "a list as store_i_ids_lists reads it");

int
store_pairs_run_meta_list(struct store *s, struct store_run_metas *out,
    const int64_t *pair_ids, size_t n)
{
	size_t i;
	int r = store_i_ids_lists(s,
	    "SELECT j.role, r.idx AS run, r.idx < j.max_runs AS measured,"
	    " r.host_state, r.profile, p.id FROM pairs p"
	    " JOIN jobs j ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    " WHERE p.id IN (" STORE_I_IDS ") ORDER BY p.id, j.role, r.idx",
	    5, pair_ids, n, out, sizeof(*out), sizeof(*out->v), run_meta_scan,
	    "pair runs");

	for (i = 0; r != 0 && i < n; i++)
		store_run_metas_release(&out[i]);
	return r;
}

int
store_pair_run_meta_list(
    struct store *s, struct store_run_metas *out, int64_t pair_id)
{
	return store_pairs_run_meta_list(s, out, &pair_id, 1);
}

void
store_run_metas_release(struct store_run_metas *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].role);
		free(l->v[i].host_state_json);
		free(l->v[i].profile_json);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void
store_i_value_scan(void *row, struct db_stmt *st, void *arg)
{
	struct store_value *v = row;

	(void)arg;
	v->role = store_i_col_dup(st, 0);
	v->metric = store_i_col_dup(st, 1);
	v->unit = store_i_col_dup(st, 2);
	v->better = store_i_col_dup(st, 3);
	v->value = store_i_col_num(st, 4);
	v->run = db_col_int64(st, 5);
}

int
store_pairs_value_list(struct store *s, struct store_values *out,
    const int64_t *pair_ids, size_t n)
{
	size_t i;
	int r = store_i_ids_lists(s,
	    "SELECT j.role, m.name AS metric, m.unit, m.better, m.value,"
	    " r.idx AS run, p.id FROM pairs p JOIN jobs j"
	    " ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " JOIN runs r ON r.job_id = j.id"
	    " AND r.status = 'ok' JOIN metrics m ON m.run_id = r.id"
	    " WHERE p.id IN (" STORE_I_IDS ")"
	    " ORDER BY p.id, m.name, j.role, r.idx",
	    6, pair_ids, n, out, sizeof(*out), sizeof(*out->v),
	    store_i_value_scan, "pair values");

	for (i = 0; r != 0 && i < n; i++)
		store_values_release(&out[i]);
	return r;
}

/* The pairs being read (store_pairs_values_runs): out[i] is ids[i]'s. */
struct values_runs {
	struct store_values *vals;
	struct store_run_metas *metas;
};

/* A row of store_pairs_values_runs' statement: from column 1 on, a
 * value's columns (its column 0 is 0) or a run's (1). */
static void
values_runs_row(void *arg, size_t i, struct db_stmt *st)
{
	struct values_runs *a = arg;
	struct store_values *v = &a->vals[i];
	struct store_run_metas *m = &a->metas[i];
	struct store_value *val;
	struct store_run_meta *run;
	void *p;

	if (db_col_int(st, 0) == 0) {
		p = v->v;
		val = store_i_grow(&p, &v->n, sizeof(*v->v));
		v->v = p;
		val->role = store_i_col_dup(st, 1);
		val->metric = store_i_col_dup(st, 2);
		val->unit = store_i_col_dup(st, 3);
		val->better = store_i_col_dup(st, 4);
		val->value = store_i_col_num(st, 5);
		val->run = db_col_int64(st, 6);
		return;
	}
	p = m->v;
	run = store_i_grow(&p, &m->n, sizeof(*m->v));
	m->v = p;
	run->role = store_i_col_dup(st, 1);
	run->run = db_col_int64(st, 6);
	run->measured = db_col_int(st, 7) != 0;
	/* The documents as the JSON rows had them (non-UTF-8 bytes '?'). */
	run->host_state_json = store_i_web_text(st, 8);
	run->profile_json = store_i_web_text(st, 9);
}

int
store_pairs_values_runs(struct store *s, struct store_values *vals,
    struct store_run_metas *metas, const int64_t *pair_ids, size_t n)
{
	struct values_runs a = { vals, metas };
	size_t i;
	int r;

	memset(vals, 0, n * sizeof(*vals));
	memset(metas, 0, n * sizeof(*metas));
	/* The values in store_pairs_value_list's order, then the runs in
	 * store_pairs_run_meta_list's (their metric NULL). */
	r = store_i_ids_rows(s,
	    "SELECT 0 AS kind, j.role, m.name AS metric, m.unit, m.better,"
	    " m.value, r.idx AS run, NULL AS measured, NULL AS host_state,"
	    " NULL AS profile, p.id FROM pairs p JOIN jobs j"
	    " ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " JOIN runs r ON r.job_id = j.id"
	    " AND r.status = 'ok' JOIN metrics m ON m.run_id = r.id"
	    " WHERE p.id IN (" STORE_I_IDS ")"
	    " UNION ALL SELECT 1, j.role, NULL, NULL, NULL, NULL, r.idx,"
	    " r.idx < j.max_runs, r.host_state, r.profile, p.id FROM pairs p"
	    " JOIN jobs j ON j.id IN (p.base_job_id, p.cand_job_id)"
	    " JOIN runs r ON r.job_id = j.id AND r.status = 'ok'"
	    " WHERE p.id IN (" STORE_I_IDS ")"
	    " ORDER BY 11, 1, 3, 2, 7",
	    10, pair_ids, n, values_runs_row, &a, "pair values and runs");
	for (i = 0; r != 0 && i < n; i++) {
		store_values_release(&vals[i]);
		store_run_metas_release(&metas[i]);
	}
	return r;
}

int
store_pair_value_list(
    struct store *s, struct store_values *out, int64_t pair_id)
{
	return store_pairs_value_list(s, out, &pair_id, 1);
}

void
store_values_release(struct store_values *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].role);
		free(l->v[i].metric);
		free(l->v[i].unit);
		free(l->v[i].better);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}
