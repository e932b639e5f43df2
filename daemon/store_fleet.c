/*
 * The store's fleet tables: sibling groups (store_fleet.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "daemon/store_fleet.h"
#include "daemon/store_int.h"

struct fleet_group {
	char *key;
	int64_t id;
};

void
store_i_groups_free(struct store *s)
{
	size_t i;

	for (i = 0; i < s->ngroups; i++)
		free(s->groups[i].key);
	free(s->groups);
	s->groups = NULL;
	s->ngroups = 0;
}

void
store_group_begin(struct store *s)
{
	store_i_groups_free(s);
	s->group_scope = 1;
}

void
store_group_end(struct store *s)
{
	store_i_groups_free(s);
	s->group_scope = 0;
}

/*
 * What the pairs of one group have in common, as one text: everything
 * but the cgroup axis (the same fields daemon/verdict.c leaves out when
 * it matches siblings).
 */
static const char group_key_sql[] =
    "SELECT p.name || char(31) || ifnull(p.host_id, '') || char(31)"
    " || c.labels || char(31) || ifnull(b.commit_id, '') || char(31)"
    " || ifnull(c.commit_id, '') || char(31)"
    " || json_remove(b.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path') || char(31)"
    " || json_remove(c.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path')"
    " FROM pairs p JOIN jobs b ON b.id = p.base_job_id"
    " JOIN jobs c ON c.id = p.cand_job_id WHERE p.id = ?1";

int
store_i_group_assign(struct store *s, int64_t pair_id)
{
	sqlite3_stmt *st;
	const unsigned char *k;
	int64_t group = pair_id;
	size_t i;
	int r;

	/* A connection opened at an older schema (tests) has no groups. */
	if (s->version < 8)
		return 0;
	if (s->group_scope) {
		if ((st = store_i_prep(s, group_key_sql)) == NULL)
			return -1;
		sqlite3_bind_int64(st, 1, pair_id);
		if (sqlite3_step(st) != SQLITE_ROW ||
		    (k = sqlite3_column_text(st, 0)) == NULL) {
			sqlite3_finalize(st);
			return store_i_dberr(s, "sibling group key");
		}
		for (i = 0; i < s->ngroups; i++)
			if (strcmp(s->groups[i].key, (const char *)k) == 0)
				break;
		if (i < s->ngroups) {
			group = s->groups[i].id;
		} else {
			s->groups = xreallocarray(
			    s->groups, s->ngroups + 1, sizeof(*s->groups));
			s->groups[s->ngroups].key = xstrdup((const char *)k);
			s->groups[s->ngroups++].id = pair_id;
		}
		sqlite3_finalize(st);
	}
	if ((st = store_i_prep(
	         s, "UPDATE pairs SET sib_group = ?2 WHERE id = ?1")) == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	sqlite3_bind_int64(st, 2, group);
	r = store_i_step_done(s, st, "sibling group");
	sqlite3_finalize(st);
	return r;
}

int
store_pair_group(struct store *s, int64_t *out_group, int64_t pair_id)
{
	sqlite3_stmt *st =
	    store_i_prep(s, "SELECT sib_group FROM pairs WHERE id = ?1");
	int rc;

	*out_group = 0;
	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, pair_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out_group = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return store_i_dberr(s, "pair group");
}

int
store_verdict_unchanged(
    struct store *s, const struct store_side_stamp *sides, size_t n)
{
	sqlite3_stmt *st = store_i_prep(s,
	    "SELECT j.runs, (SELECT count(*) FROM runs r WHERE r.job_id = "
	    "j.id),"
	    " j.state FROM jobs j WHERE j.id = ?1");
	size_t i;
	int r = 0, rc;

	if (st == NULL)
		return -1;
	for (i = 0; r == 0 && i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, sides[i].job_id);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			r = store_i_dberr(s, "verdict sides");
			break;
		}
		if (rc == SQLITE_DONE ||
		    sqlite3_column_int64(st, 0) != sides[i].runs ||
		    sqlite3_column_int64(st, 1) != sides[i].stored ||
		    strcmp((const char *)sqlite3_column_text(st, 2),
		        "success") != 0)
			r = err_setc(&s->err, ERR_CONFLICT,
			    "job %lld changed while its verdict was made",
			    (long long)sides[i].job_id);
	}
	sqlite3_finalize(st);
	return r;
}
