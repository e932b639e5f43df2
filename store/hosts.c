/*
 * Hosts and the fleet: registration, lookup and last sight, the hosts a
 * job's labels match, the hosts list and sibling groups (store/hosts.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "store/hosts.h"
#include "store/store_int.h"

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
    "SELECT p.name || '\x1f' || coalesce(CAST(p.host_id AS TEXT), '')"
    " || '\x1f' || c.labels || '\x1f'"
    " || coalesce(CAST(b.commit_id AS TEXT), '') || '\x1f'"
    " || coalesce(CAST(c.commit_id AS TEXT), '') || '\x1f'"
    " || json_remove(b.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path') || '\x1f'"
    " || json_remove(c.params, '$.point', '$.params.cgroup',"
    "  '$.cgroup.path')"
    " FROM pairs p JOIN jobs b ON b.id = p.base_job_id"
    " JOIN jobs c ON c.id = p.cand_job_id WHERE p.id = ?1";

int
store_i_group_assign(struct store *s, int64_t pair_id)
{
	struct db_stmt *st;
	const char *k;
	int64_t group = pair_id;
	size_t i;
	int r;

	/* A connection opened at an older schema (tests) has no groups. */
	if (s->version < 10)
		return 0;
	if (s->group_scope) {
		if ((st = store_i_stmt(s, group_key_sql)) == NULL)
			return -1;
		db_bind_int64(st, 1, pair_id);
		if (db_step(st) != DB_ROW || (k = db_col_text(st, 0)) == NULL) {
			store_i_release(s, st);
			return store_i_dberr(s, "sibling group key");
		}
		for (i = 0; i < s->ngroups; i++)
			if (strcmp(s->groups[i].key, k) == 0)
				break;
		if (i < s->ngroups) {
			group = s->groups[i].id;
		} else {
			s->groups = xreallocarray(
			    s->groups, s->ngroups + 1, sizeof(*s->groups));
			s->groups[s->ngroups].key = xstrdup(k);
			s->groups[s->ngroups++].id = pair_id;
		}
		store_i_release(s, st);
	}
	if ((st = store_i_stmt(
	         s, "UPDATE pairs SET sib_group = ?2 WHERE id = ?1")) == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	db_bind_int64(st, 2, group);
	r = store_i_step_done(s, st, "sibling group");
	store_i_release(s, st);
	return r;
}

int
store_pair_group(struct store *s, int64_t *out_group, int64_t pair_id)
{
	struct db_stmt *st =
	    store_i_stmt(s, "SELECT sib_group FROM pairs WHERE id = ?1");
	int rc;

	*out_group = 0;
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, pair_id);
	rc = db_step(st);
	if (rc == DB_ROW)
		*out_group = db_col_int64(st, 0);
	store_i_release(s, st);
	if (rc == DB_ROW)
		return 0;
	if (rc == DB_DONE)
		return err_setc(&s->err, ERR_NOTFOUND, "pair %lld not found",
		    (long long)pair_id);
	return store_i_dberr(s, "pair group");
}

/* What a host row's "online" is judged against (store_host_list). */
struct host_clock {
	int64_t now, online_s;
};

static void
host_scan(void *row, struct db_stmt *st, void *arg)
{
	const struct host_clock *k = arg;
	struct store_host *h = row;

	h->id = db_col_int64(st, 0);
	h->name = store_i_col_dup(st, 1);
	h->labels_json = store_i_col_dup(st, 2);
	h->inventory_json = store_i_col_dup(st, 3);
	h->last_seen = db_col_int64(st, 4);
	h->online = h->last_seen >= k->now - k->online_s;
	h->current_job = db_col_int64(st, 5);
	h->registered = db_col_int64(st, 6);
	/* docs/HOST.md: a canary found the host drifting. */
	h->quarantined = store_i_col_dup(st, 7);
	h->has_quarantined_at = db_col_type(st, 8) != DB_NULL;
	h->quarantined_at = db_col_int64(st, 8);
}

int
store_host_list(struct store *s, struct store_hosts *out, int64_t limit,
    int64_t cursor, int64_t now, int64_t online_s)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT h.id, h.name, h.labels, h.inventory, h.last_seen,"
	    " (SELECT j.id FROM jobs j WHERE j.lease_owner = h.id"
	    "  AND j.state = 'running' LIMIT 1), h.registered,"
	    " h.quarantined, h.quarantined_at"
	    " FROM hosts h WHERE h.id > ?1 ORDER BY h.id LIMIT ?2");
	struct host_clock k = { now, online_s };
	void *v;
	int r;

	memset(out, 0, sizeof(*out));
	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, cursor);
	db_bind_int64(st, 2, limit);
	r = store_i_rows(
	    s, st, &v, &out->n, sizeof(*out->v), host_scan, &k, "list hosts");
	out->v = v;
	if (r != 0) {
		store_hosts_release(out);
		return r;
	}
	/* Hosts page upwards (h.id > cursor): id 1 is not an end. */
	out->next_cursor = store_i_next_cursor(
	    out->n, limit, out->n ? out->v[out->n - 1].id : 0, STORE_I_ASC);
	return 0;
}

void
store_hosts_release(struct store_hosts *l)
{
	size_t i;

	if (l == NULL)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].labels_json);
		free(l->v[i].inventory_json);
		free(l->v[i].quarantined);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- hosts ---- */

static int
host_register_once(struct store *s, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now)
{
	struct db_stmt *st;
	int ok = 0;

	if (store_i_tx_begin(s) == -1)
		return -1;
	st = store_i_stmt(s,
	    "INSERT INTO hosts (name, labels, inventory, registered,"
	    " last_seen) VALUES (?1, json(?2), json(?3), ?4, ?4)"
	    " ON CONFLICT (name) DO UPDATE SET labels = excluded.labels,"
	    " inventory = excluded.inventory, registered = excluded.registered,"
	    " last_seen = excluded.last_seen RETURNING id");
	if (st != NULL) {
		store_i_bind_text(st, 1, name);
		store_i_bind_text(st, 2, labels_json);
		store_i_bind_text(st, 3, inventory_json);
		db_bind_int64(st, 4, now);
		if (db_step(st) == DB_ROW) {
			*out_id = db_col_int64(st, 0);
			ok = 1;
		} else {
			store_i_dberr(s, "register host");
		}
		store_i_release(s, st);
	}
	return store_i_tx_end(s, ok);
}

int
store_host_register(struct store *s, int64_t *out_id, const char *name,
    const char *labels_json, const char *inventory_json, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    host_register_once(
	        s, out_id, name, labels_json, inventory_json, now));
	return rc;
}

int
store_host_id(struct store *s, int64_t *out_id, const char *name)
{
	struct db_stmt *st = store_i_cached(
	    s, S_HOST_ID, "SELECT id FROM hosts WHERE name = ?1");
	int r = ERR_NOTFOUND;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	switch (db_step(st)) {
	case DB_ROW:
		*out_id = db_col_int64(st, 0);
		r = 0;
		break;
	case DB_DONE:
		err_set(&s->err, "host '%s' is not registered", name);
		break;
	default:
		/* A failed lookup is no answer: not "not registered". */
		r = store_i_dberr(s, "host id");
		break;
	}
	db_reset(st);
	return r;
}

static int
host_seen_once(struct store *s, int64_t host_id, int64_t now)
{
	struct db_stmt *st;
	int64_t q;
	int ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	q = store_i_quiet_begin(s);
	st = store_i_cached(
	    s, S_HOST_SEEN, "UPDATE hosts SET last_seen = ?2 WHERE id = ?1");
	ok = st != NULL;
	if (ok) {
		db_bind_int64(st, 1, host_id);
		db_bind_int64(st, 2, now);
		ok = store_i_step_done(s, st, "host seen") == 0;
		db_reset(st);
	}
	store_i_quiet_end(s, q);
	return store_i_tx_end(s, ok);
}

int
store_host_seen(struct store *s, int64_t host_id, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, host_seen_once(s, host_id, now));
	return rc;
}

int
store_hosts_matching(
    struct store *s, int64_t **out, size_t *n, const char *labels_json)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT h.id FROM hosts h WHERE json_array_length(json(?1)) = 0"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jl,"
	    "  json_each(h.labels) hl WHERE jl.value = hl.value)"
	    " OR EXISTS (SELECT 1 FROM json_each(json(?1)) jn"
	    "  WHERE jn.value = h.name)"
	    " ORDER BY h.id");
	int64_t *v = NULL;
	size_t k = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, labels_json ? labels_json : "[]");
	while ((rc = db_step(st)) == DB_ROW) {
		v = xreallocarray(v, k + 1, sizeof(*v));
		v[k++] = db_col_int64(st, 0);
	}
	store_i_release(s, st);
	if (rc != DB_DONE) {
		free(v);
		return store_i_dberr(s, "hosts matching");
	}
	*out = v;
	*n = k;
	return 0;
}
