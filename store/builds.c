/*
 * The store: shared kernel builds (store/builds.h), their rows.  A kernel
 * bench job made while builds are shared is linked to the build of its
 * (tree url, commit, key) when it is inserted (store_i_build_link, the
 * one place every job is made); the build is leased to a builder like a
 * job, its files are artifacts by sha256 (store/builds_artifacts.c holds
 * the store's room, store/builds_read.c the reads).  All SQL is in
 * store/.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/crypto.h"
#include "common/json.h"
#include "common/xalloc.h"
#include "store/builds.h"
#include "store/claim.h"
#include "store/counts.h"
#include "store/store_int.h"

static int builds_shared; /* __atomic */

void
store_builds_share(int on)
{
	__atomic_store_n(&builds_shared, on ? 1 : 0, __ATOMIC_RELAXED);
}

int
store_builds_shared(void)
{
	return __atomic_load_n(&builds_shared, __ATOMIC_RELAXED);
}

const char *const store_build_file_names[] = { "bzImage", "System.map",
	"config", "gen_init_cpio", "meta", "build.log", NULL };

int
store_build_file_name_ok(const char *name)
{
	size_t i;

	for (i = 0; store_build_file_names[i] != NULL; i++)
		if (strcmp(name, store_build_file_names[i]) == 0)
			return 1;
	return 0;
}

void
store_build_key(char out[17], const char *config, const char *const *fragment,
    size_t nfragment, const char *compiler, const char *arch)
{
	static const char tag[] = "pw-build-2";
	static const char align[] = "-falign-functions=64";
	struct crypto_sha256 *h = crypto_sha256_new();
	char hex[65];
	size_t i;

	crypto_sha256_update(h, tag, sizeof(tag)); /* with its NUL */
	crypto_sha256_update(h, config, strlen(config) + 1);
	for (i = 0; i < nfragment; i++) {
		if (i > 0)
			crypto_sha256_update(h, "\n", 1);
		crypto_sha256_update(h, fragment[i], strlen(fragment[i]));
	}
	crypto_sha256_update(h, "", 1);
	crypto_sha256_update(h, compiler, strlen(compiler) + 1);
	crypto_sha256_update(h, align, sizeof(align));
	crypto_sha256_update(h, arch, strlen(arch));
	crypto_sha256_end(h, hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

int
store_i_count_add(struct store *s, const char *name, int64_t d)
{
	/* PostgreSQL: this connection's shard (store/counts.h), its own
	 * SQL, so prepared here rather than from the statement cache. */
	int pg =
	    db_backend(s->db) == DB_PG && s->version >= STORE_COUNTS_VERSION;
	struct db_stmt *st = pg
	    ? store_i_prep(s, "SELECT count_shard_add(?1::text, ?2::bigint)")
	    : store_i_stmt(s, "UPDATE counts SET n = n + ?2 WHERE name = ?1");
	int r;

	if (st == NULL)
		return -1;
	store_i_bind_text(st, 1, name);
	db_bind_int64(st, 2, d);
	r = store_i_step_done(s, st, "count");
	if (pg)
		db_finalize(st);
	else
		store_i_release(s, st);
	return r;
}

/* ---- linking a job to its build ---- */

/* The build a job's spec asks for: its key, url, commit and the build
 * spec a builder is handed; 0 when the job is no shared kernel job. */
struct build_want {
	char key[17];
	const char *url, *sha;
	char *spec; /* malloc'd */
};

static int
build_want(struct build_want *w, const char *spec_json)
{
	json_t *spec = pwjson_doc(spec_json, NULL), *tree, *k, *frag, *bs;
	const char *config, *cc, **lines = NULL;
	size_t i, n = 0;
	int r = 0;

	memset(w, 0, sizeof(*w));
	if (spec == NULL)
		return 0;
	tree = json_object_get(spec, "tree");
	k = json_object_get(spec, "kernel");
	if (!json_is_object(tree) || !json_is_object(k))
		goto out;
	config = json_string_value(json_object_get(k, "config"));
	w->url = json_string_value(json_object_get(tree, "url"));
	w->sha = json_string_value(json_object_get(tree, "commit"));
	/* The host's own config is never shared: it builds locally. */
	if (config == NULL || w->url == NULL || w->sha == NULL ||
	    strcmp(config, "running") == 0)
		goto out;
	frag = json_object_get(k, "fragment");
	if (json_is_array(frag)) {
		lines = xcalloc(json_array_size(frag) + 1, sizeof(*lines));
		for (i = 0; i < json_array_size(frag); i++) {
			const char *l =
			    json_string_value(json_array_get(frag, i));

			if (l != NULL)
				lines[n++] = l;
		}
	}
	/* A spec that names no compiler is built with gcc, what a runner
	 * uses without a CC. */
	cc = json_string_value(json_object_get(k, "compiler"));
	if (cc == NULL || *cc == '\0')
		cc = STORE_BUILD_CC_DEFAULT;
	store_build_key(w->key, config, lines, n, cc, "x86_64");
	free(lines);
	/* What a builder is handed: the tree (with its pack, for a series
	 * commit) and what the build needs of the kernel section. */
	bs = json_pack("{s:O, s:{s:s, s:o, s:s, s:O?}}", "tree", tree, "kernel",
	    "config", config, "fragment",
	    json_is_array(frag) ? json_deep_copy(frag) : json_array(),
	    "compiler", cc, "build_timeout_s",
	    json_object_get(k, "build_timeout_s"));
	if (bs == NULL)
		goto out;
	w->spec = pwjson_dump(bs);
	json_decref(bs);
	/* url and sha borrow from spec, which goes now. */
	w->url = xstrdup(w->url);
	w->sha = xstrdup(w->sha);
	r = 1;
out:
	json_decref(spec);
	return r;
}

static void
build_want_free(struct build_want *w)
{
	if (w->spec != NULL) {
		free((char *)w->url);
		free((char *)w->sha);
	}
	free(w->spec);
	memset(w, 0, sizeof(*w));
}

/*
 * Links job to the build its spec asks for, inside the caller's
 * transaction: an existing build queued, running, or done with its
 * artifacts still stored (a reuse), else a new queued one.  Nothing for
 * a job that is no shared kernel job, or while builds are not shared.
 */
static int
build_link(struct store *s, int64_t job_id, const char *spec_json,
    int64_t max_attempts, int64_t now)
{
	struct build_want w;
	struct db_stmt *st;
	int64_t build = 0;
	int rc, ok = 1;

	if (!build_want(&w, spec_json))
		return 0;
	st = store_i_stmt(s,
	    "SELECT id FROM builds WHERE url = ?1 AND sha = ?2 AND key = ?3"
	    " AND (state IN ('queued', 'running')"
	    "  OR (state = 'success' AND evicted = 0))"
	    " ORDER BY id DESC LIMIT 1");
	if ((ok = st != NULL)) {
		store_i_bind_text(st, 1, w.url);
		store_i_bind_text(st, 2, w.sha);
		store_i_bind_text(st, 3, w.key);
		if ((rc = db_step(st)) == DB_ROW)
			build = db_col_int64(st, 0);
		else if (rc != DB_DONE)
			ok = store_i_dberr(s, "find build") == 0;
		store_i_release(s, st);
	}
	if (ok && build != 0) {
		st = store_i_stmt(
		    s, "UPDATE builds SET reuses = reuses + 1 WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build);
			ok = store_i_step_done(s, st, "reuse build") == 0;
			store_i_release(s, st);
		}
		ok = ok && store_i_count_add(s, "builds.reuses", 1) == 0;
	} else if (ok) {
		st = store_i_stmt(s,
		    "INSERT INTO builds (url, sha, key, spec, max_attempts,"
		    " created, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)");
		if ((ok = st != NULL)) {
			store_i_bind_text(st, 1, w.url);
			store_i_bind_text(st, 2, w.sha);
			store_i_bind_text(st, 3, w.key);
			store_i_bind_text(st, 4, w.spec);
			db_bind_int64(
			    st, 5, max_attempts > 0 ? max_attempts : 3);
			db_bind_int64(st, 6, now);
			ok = store_i_step_done(s, st, "insert build") == 0;
			build = db_last_id(s->db);
			store_i_release(s, st);
		}
	}
	if (ok) {
		st = store_i_stmt(
		    s, "UPDATE jobs SET build_id = ?2 WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, job_id);
			db_bind_int64(st, 2, build);
			ok = store_i_step_done(s, st, "link build") == 0;
			store_i_release(s, st);
		}
	}
	build_want_free(&w);
	return ok ? 0 : -1;
}

int
store_i_build_link(struct store *s, int64_t job_id, const char *spec_json,
    int64_t max_attempts, int64_t now)
{
	if (!store_builds_shared())
		return 0;
	return build_link(s, job_id, spec_json, max_attempts, now);
}

/* A job queued again (retry) whose build can no longer serve it (failed,
 * cancelled, evicted) is linked afresh. */
int
store_i_build_relink(struct store *s, int64_t job_id, int64_t now)
{
	struct db_stmt *st = store_i_stmt(s,
	    "SELECT j.params, j.max_attempts FROM jobs j JOIN builds b"
	    " ON b.id = j.build_id WHERE j.id = ?1"
	    " AND NOT (b.state IN ('queued', 'running')"
	    "  OR (b.state = 'success' AND b.evicted = 0))");
	char *spec = NULL;
	int64_t max = 3;
	int rc, r = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, job_id);
	if ((rc = db_step(st)) == DB_ROW) {
		spec = store_i_col_dup(st, 0);
		max = db_col_int64(st, 1);
	} else if (rc != DB_DONE) {
		r = store_i_dberr(s, "relink build");
	}
	store_i_release(s, st);
	/* The job went through a build: it goes through one again,
	 * whatever the switch says now. */
	if (spec != NULL)
		r = build_link(s, job_id, spec, max, now);
	free(spec);
	return r;
}

/* ---- builders: claim, lease, log, files, finish ---- */

void
store_build_claimed_release(struct store_build_claimed *c)
{
	if (c == NULL)
		return;
	free(c->spec_json);
	free(c->key);
	free(c->instance);
	memset(c, 0, sizeof(*c));
}

/* sql (a literal) stepped with ?1 = a and, when it has one, ?2 = b. */
static int
build_exec(struct store *s, const char *sql, int64_t a, int64_t b, int nb,
    const char *what)
{
	struct db_stmt *st = store_i_stmt(s, sql);
	int r;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, a);
	if (nb > 1)
		db_bind_int64(st, 2, b);
	r = store_i_step_done(s, st, what);
	store_i_release(s, st);
	return r;
}

static int
build_claim_once(struct store *s, struct store_build_claimed *out,
    int64_t host_id, int64_t now, int64_t lease_s, const char *claim_id)
{
	/* The build leased for claim_id (its answer was lost) first. */
	static const char held_keyed[] =
	    "SELECT id, CASE WHEN lease_claim = ?2 THEN 1 ELSE 0 END"
	    " FROM builds WHERE state = 'running' AND lease_owner = ?1"
	    " ORDER BY 2 DESC, id LIMIT 1";
	static const char *const pick[] = {
		"SELECT id, 0 FROM builds WHERE state = 'running'"
		" AND lease_owner = ?1 ORDER BY id LIMIT 1",
		/* Not for a runner that holds a job: it gets that job
		 * back (a restarted runner resuming after a boot). */
		"SELECT b.id FROM builds b WHERE b.state = 'queued'"
		" AND NOT EXISTS (SELECT 1 FROM jobs h WHERE"
		"  h.state = 'running' AND h.lease_owner = ?1)"
		" AND EXISTS (SELECT 1 FROM jobs j"
		"  WHERE j.build_id = b.id AND j.state = 'queued')"
		" ORDER BY b.id LIMIT 1",
	};
	int keyed = s->version >= STORE_CLAIM_ID_VERSION;
	struct db_stmt *st;
	const char *inst;
	int64_t id = 0;
	size_t i;
	int rc, ok, repeated = 0;

	memset(out, 0, sizeof(*out));
	if (s->version < STORE_BUILDS_VERSION)
		return ERR_NOTFOUND;
	/* Most claims find no build: no write transaction for them. */
	if ((st = store_i_stmt(s,
	         "SELECT 1 FROM builds WHERE state IN ('queued', 'running')"
	         " LIMIT 1")) == NULL)
		return -1;
	rc = db_step(st);
	store_i_release(s, st);
	if (rc == DB_DONE)
		return ERR_NOTFOUND;
	if (rc != DB_ROW)
		return store_i_dberr(s, "claim build");
	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	ok = 1;
	for (i = 0; ok && id == 0 && i < 2; i++) {
		if ((ok = (st = store_i_stmt(
		               s, i == 0 && keyed ? held_keyed : pick[i])) !=
		            NULL)) {
			db_bind_int64(st, 1, host_id);
			if (i == 0 && keyed)
				store_i_bind_text(st, 2, claim_id);
			if ((rc = db_step(st)) == DB_ROW) {
				id = db_col_int64(st, 0);
				repeated = i == 0 && claim_id != NULL &&
				    db_col_int(st, 1) != 0;
			} else if (rc != DB_DONE)
				ok = store_i_dberr(s, "claim build") == 0;
			store_i_release(s, st);
		}
	}
	if (ok && id != 0) {
		st = store_i_stmt(s,
		    keyed ? "UPDATE builds SET state = 'running', host_id = ?2,"
		            " lease_owner = ?2, lease_expires = ?4,"
		            " attempts = attempts + CASE WHEN state ="
		            " 'running' AND lease_owner = ?2 AND lease_claim"
		            " = ?5 THEN 0 ELSE 1 END, lease_claim = ?5,"
		            " started = coalesce(started, ?3), updated = ?3"
		            " WHERE id = ?1"
		          : "UPDATE builds SET state = 'running', host_id = ?2,"
		            " lease_owner = ?2, lease_expires = ?4,"
		            " attempts = attempts + 1,"
		            " started = coalesce(started, ?3), updated = ?3"
		            " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, id);
			db_bind_int64(st, 2, host_id);
			db_bind_int64(st, 3, now);
			db_bind_int64(st, 4, now + lease_s);
			if (keyed)
				store_i_bind_text(st, 5, claim_id);
			ok = store_i_step_done(s, st, "lease build") == 0;
			store_i_release(s, st);
		}
	}
	if (ok && id != 0) {
		st = store_i_stmt(s,
		    "SELECT spec, key, attempts, lease_expires FROM builds"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, id);
			if (db_step(st) == DB_ROW) {
				out->id = id;
				out->spec_json = store_i_col_dup(st, 0);
				out->key = store_i_col_dup(st, 1);
				out->attempt = db_col_int64(st, 2);
				out->lease_expires = db_col_int64(st, 3);
			} else {
				ok = store_i_dberr(s, "claimed build") == 0;
			}
			store_i_release(s, st);
		}
		if (ok && (ok = store_instance(s, &inst) == 0))
			out->instance = xstrdup(inst);
	}
	if (store_i_tx_end(s, ok) == -1) {
		store_build_claimed_release(out);
		return -1;
	}
	out->repeated = id != 0 && repeated;
	return id != 0 ? 0 : ERR_NOTFOUND;
}

int
store_build_claim_as(struct store *s, struct store_build_claimed *out,
    int64_t host_id, int64_t now, int64_t lease_s, const char *claim_id)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, build_claim_once(s, out, host_id, now, lease_s, claim_id));
	return rc;
}

int
store_build_claim(struct store *s, struct store_build_claimed *out,
    int64_t host_id, int64_t now, int64_t lease_s)
{
	return store_build_claim_as(s, out, host_id, now, lease_s, NULL);
}

/* Whether host holds build's lease, inside a transaction. */
static int
build_lease(struct store *s, int64_t host_id, int64_t build_id)
{
	struct db_stmt *st = store_i_stmt(
	    s, "SELECT state, lease_owner FROM builds WHERE id = ?1");
	int r = 0;

	if (st == NULL)
		return -1;
	db_bind_int64(st, 1, build_id);
	if (db_step(st) != DB_ROW) {
		store_i_release(s, st);
		return err_setc(&s->err, ERR_NOTFOUND, "build %lld not found",
		    (long long)build_id);
	}
	if (strcmp(store_i_col_text(st, 0), "running") != 0 ||
	    db_col_int64(st, 1) != host_id)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "build %lld is %s and not leased to this runner",
		    (long long)build_id, store_i_col_text(st, 0));
	store_i_release(s, st);
	return r;
}

static int
build_held_once(struct store *s, int64_t host_id, int64_t build_id)
{
	int r;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = build_lease(s, host_id, build_id);
	if (store_i_tx_end(s, r != -1) == -1)
		return -1;
	return r;
}

int
store_build_held(struct store *s, int64_t host_id, int64_t build_id)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, build_held_once(s, host_id, build_id));
	return rc;
}

static int
build_heartbeat_once(struct store *s, int64_t *out_expires, int64_t host_id,
    int64_t build_id, int64_t now, int64_t lease_s)
{
	struct db_stmt *st;
	int64_t q;
	int r, ok;

	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	q = store_i_quiet_begin(s);
	r = build_lease(s, host_id, build_id);
	ok = r != -1;
	if (ok && r == 0) {
		st = store_i_stmt(s,
		    "UPDATE builds SET lease_expires = ?2, updated = ?3"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build_id);
			db_bind_int64(st, 2, now + lease_s);
			db_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "build heartbeat") == 0;
			store_i_release(s, st);
		}
		*out_expires = now + lease_s;
	}
	store_i_quiet_end(s, q);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_build_heartbeat(struct store *s, int64_t *out_expires, int64_t host_id,
    int64_t build_id, int64_t now, int64_t lease_s)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    build_heartbeat_once(
	        s, out_expires, host_id, build_id, now, lease_s));
	return rc;
}

static int
build_log_once(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t build_id, const char *text, size_t len, int64_t now)
{
	static const char marker[] = "\n[log truncated]\n";
	struct db_stmt *st;
	int64_t have = 0;
	size_t keep = len;
	int r, ok, full;

	if (out_stored)
		*out_stored = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	r = build_lease(s, host_id, build_id);
	ok = r != -1;
	if (ok && r == 0)
		ok = store_i_log_room(s,
		         "SELECT log_bytes FROM builds WHERE id = ?1", build_id,
		         len, &have, &keep) == 0;
	if (ok && r == 0 && have <= CAP_JOB_LOG) {
		int nl = keep > 0 && text[keep - 1] != '\n';

		full = keep < len;
		st = store_i_stmt(s,
		    "UPDATE builds SET log = log || ?2 || ?3, log_bytes = ?4,"
		    " updated = ?5 WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build_id);
			db_bind_text(st, 2, text, (int)keep);
			db_bind_text(st, 3, full ? marker : nl ? "\n" : "", -1);
			db_bind_int64(st, 4,
			    full ? CAP_JOB_LOG + 1 : have + (int64_t)keep);
			db_bind_int64(st, 5, now);
			ok = store_i_step_done(s, st, "append build log") == 0;
			store_i_release(s, st);
		}
	} else {
		keep = 0;
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_stored && r == 0)
		*out_stored = keep;
	return r;
}

int
store_build_log(struct store *s, size_t *out_stored, int64_t host_id,
    int64_t build_id, const char *text, size_t len, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    build_log_once(s, out_stored, host_id, build_id, text, len, now));
	return rc;
}

static int
build_file_once(struct store *s, int64_t host_id, int64_t build_id,
    const char *name, const char *sha256, int64_t size, int64_t now)
{
	struct db_stmt *st;
	int r, ok;

	if (store_i_tx_begin(s) == -1)
		return -1;
	r = build_lease(s, host_id, build_id);
	ok = r != -1;
	if (ok && r == 0) {
		int64_t added = 0;

		st = store_i_stmt(s,
		    "INSERT INTO artifacts (sha256, size, created, last_used)"
		    " VALUES (?1, ?2, ?3, ?3) ON CONFLICT (sha256) DO NOTHING");
		if ((ok = st != NULL)) {
			store_i_bind_text(st, 1, sha256);
			db_bind_int64(st, 2, size);
			db_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "artifact") == 0;
			added = ok ? db_changes(s->db) : 0;
			store_i_release(s, st);
		}
		/* The same content again: used now, counted once. */
		st = ok ? store_i_stmt(s,
		              "UPDATE artifacts SET last_used = ?2"
		              " WHERE sha256 = ?1")
		        : NULL;
		if (ok && (ok = st != NULL)) {
			store_i_bind_text(st, 1, sha256);
			db_bind_int64(st, 2, now);
			ok = store_i_step_done(s, st, "artifact used") == 0;
			store_i_release(s, st);
		}
		if (ok && added > 0)
			ok = store_i_count_add(s, "artifacts.bytes", size) == 0;
	}
	if (ok && r == 0) {
		st = store_i_stmt(s,
		    "INSERT INTO build_files (build_id, name, sha256, size)"
		    " VALUES (?1, ?2, ?3, ?4) ON CONFLICT (build_id, name)"
		    " DO UPDATE SET sha256 = excluded.sha256,"
		    " size = excluded.size");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build_id);
			store_i_bind_text(st, 2, name);
			store_i_bind_text(st, 3, sha256);
			db_bind_int64(st, 4, size);
			ok = store_i_step_done(s, st, "build file") == 0;
			store_i_release(s, st);
		}
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	return r;
}

int
store_build_file(struct store *s, int64_t host_id, int64_t build_id,
    const char *name, const char *sha256, int64_t size, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    build_file_once(s, host_id, build_id, name, sha256, size, now));
	return rc;
}

/* Fails the queued jobs waiting on build ("<what>: build B: <the first
 * line of error>", what "build failed" or "build cancelled"); *n counts
 * them. */
static int
build_fail_waiters(struct store *s, int64_t build_id, const char *what,
    const char *error, int64_t now, int *n)
{
	struct db_stmt *st;
	size_t len = error ? strcspn(error, "\n") : 0;
	char *msg = xasprintf("%s: build %lld: %.*s", what, (long long)build_id,
	    (int)(len > 512 ? 512 : len), error ? error : "");
	int r = -1;

	st = store_i_stmt(s,
	    "UPDATE jobs SET state = 'failed', error = ?2, updated = ?3"
	    " WHERE build_id = ?1 AND state = 'queued'");
	if (st != NULL) {
		db_bind_int64(st, 1, build_id);
		store_i_bind_text(st, 2, msg);
		db_bind_int64(st, 3, now);
		r = store_i_step_done(s, st, "fail waiting jobs");
		if (r == 0 && n != NULL)
			*n += (int)db_changes(s->db);
		store_i_release(s, st);
	}
	free(msg);
	return r;
}

/* The required files a build lacks, ", "-joined, into b. */
static int
build_missing(struct store *s, struct buf *b, int64_t build_id)
{
	static const char *const need[] = { "bzImage", "config", "System.map",
		"meta" };
	struct db_stmt *st;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		st = store_i_stmt(s,
		    "SELECT 1 FROM build_files f JOIN artifacts a"
		    " ON a.sha256 = f.sha256"
		    " WHERE f.build_id = ?1 AND f.name = ?2");
		if (st == NULL)
			return -1;
		db_bind_int64(st, 1, build_id);
		store_i_bind_text(st, 2, need[i]);
		rc = db_step(st);
		store_i_release(s, st);
		if (rc == DB_DONE) {
			if (b->len > 0)
				buf_puts(b, ", ");
			buf_puts(b, need[i]);
		} else if (rc != DB_ROW) {
			return store_i_dberr(s, "build files");
		}
	}
	return 0;
}

static int
build_finish_once(struct store *s, int *out_failed, int64_t host_id,
    int64_t build_id, const struct store_build_result *res, int64_t now)
{
	struct buf miss = BUF_INIT(4096);
	struct db_stmt *st;
	int r, ok, nfail = 0;

	if (out_failed)
		*out_failed = 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	r = build_lease(s, host_id, build_id);
	ok = r != -1;
	if (ok && r == 0 && res->ok) {
		ok = build_missing(s, &miss, build_id) == 0;
		if (ok && miss.len > 0)
			r = err_setc(&s->err, ERR_INVALID,
			    "build %lld: a success needs the files bzImage, "
			    "config, System.map and meta; missing: %s",
			    (long long)build_id, miss.data);
	}
	if (ok && r == 0) {
		st = store_i_stmt(s,
		    "UPDATE builds SET state = ?2, error = ?3, release = ?4,"
		    " config_sha256 = ?5, build_s = ?6, incremental = ?7,"
		    " compiler = ?8, lease_owner = NULL,"
		    " lease_expires = NULL, finished = ?9, updated = ?9"
		    " WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build_id);
			store_i_bind_text(
			    st, 2, res->ok ? "success" : "failed");
			store_i_bind_text(st, 3, res->ok ? NULL : res->error);
			store_i_bind_text(st, 4, res->release);
			store_i_bind_text(st, 5, res->config_sha256);
			if (res->build_s >= 0)
				db_bind_double(st, 6, res->build_s);
			else
				db_bind_null(st, 6);
			if (res->incremental >= 0)
				db_bind_int64(st, 7, res->incremental);
			else
				db_bind_null(st, 7);
			store_i_bind_text(st, 8, res->compiler);
			db_bind_int64(st, 9, now);
			ok = store_i_step_done(s, st, "finish build") == 0;
			store_i_release(s, st);
		}
		if (ok && !res->ok)
			ok = build_fail_waiters(s, build_id, "build failed",
			         res->error, now, &nfail) == 0;
	}
	buf_release(&miss);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_failed)
		*out_failed = nfail;
	return r;
}

int
store_build_finish(struct store *s, int *out_failed, int64_t host_id,
    int64_t build_id, const struct store_build_result *res, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(s, rc,
	    build_finish_once(s, out_failed, host_id, build_id, res, now));
	return rc;
}

static int
builds_requeue_expired_once(struct store *s, int64_t now, int *out_n)
{
	struct db_stmt *sel;
	int64_t ids[64], att[64], max[64];
	size_t k = 0, i;
	int ok, rc, n = 0;

	if (out_n)
		*out_n = 0;
	if (s->version < STORE_BUILDS_VERSION)
		return 0;
	if (store_i_tx_begin(s) == -1)
		return -1;
	sel = store_i_stmt(s,
	    "SELECT id, attempts, max_attempts FROM builds"
	    " WHERE state = 'running' AND lease_expires < ?1"
	    " ORDER BY id LIMIT 64");
	if ((ok = sel != NULL)) {
		db_bind_int64(sel, 1, now);
		while (k < 64 && (rc = db_step(sel)) == DB_ROW) {
			ids[k] = db_col_int64(sel, 0);
			att[k] = db_col_int64(sel, 1);
			max[k] = db_col_int64(sel, 2);
			k++;
		}
		if (k < 64 && rc != DB_DONE)
			ok = store_i_dberr(s, "expired builds") == 0;
		store_i_release(s, sel);
	}
	for (i = 0; ok && i < k; i++) {
		n++;
		if (att[i] >= max[i]) {
			char msg[64];
			struct db_stmt *st;

			snprintf(msg, sizeof(msg), "lease expired %lld times",
			    (long long)att[i]);
			st = store_i_stmt(s,
			    "UPDATE builds SET state = 'failed', error = ?2,"
			    " lease_owner = NULL, lease_expires = NULL,"
			    " finished = ?3, updated = ?3 WHERE id = ?1");
			if ((ok = st != NULL)) {
				db_bind_int64(st, 1, ids[i]);
				store_i_bind_text(st, 2, msg);
				db_bind_int64(st, 3, now);
				ok =
				    store_i_step_done(s, st, "fail build") == 0;
				store_i_release(s, st);
			}
			ok = ok &&
			    build_fail_waiters(
			        s, ids[i], "build failed", msg, now, NULL) == 0;
			continue;
		}
		ok = build_exec(s,
		         "UPDATE builds SET state = 'queued',"
		         " lease_owner = NULL, lease_expires = NULL,"
		         " updated = ?2 WHERE id = ?1",
		         ids[i], now, 2, "requeue build") == 0;
		/* What the lost builder uploaded is not this build's. */
		ok = ok &&
		    build_exec(s, "DELETE FROM build_files WHERE build_id = ?1",
		        ids[i], 0, 1, "requeue build files") == 0;
	}
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_n)
		*out_n = n;
	return 0;
}

int
store_builds_requeue_expired(struct store *s, int64_t now, int *out_n)
{
	int rc;

	STORE_I_TX_RETRY(s, rc, builds_requeue_expired_once(s, now, out_n));
	return rc;
}

static int
build_cancel_once(struct store *s, int *out_failed, int64_t build_id,
    const char *why, int64_t now)
{
	struct db_stmt *st;
	char *state = NULL;
	int r = 0, ok, rc, nfail = 0;

	if (out_failed)
		*out_failed = 0;
	if (store_i_tx_begin_as(s, 1) == -1)
		return -1;
	st = store_i_stmt(s, "SELECT state FROM builds WHERE id = ?1");
	if ((ok = st != NULL)) {
		db_bind_int64(st, 1, build_id);
		if ((rc = db_step(st)) == DB_ROW)
			state = store_i_col_dup(st, 0);
		else if (rc == DB_DONE)
			r = err_setc(&s->err, ERR_NOTFOUND,
			    "build %lld not found", (long long)build_id);
		else
			ok = store_i_dberr(s, "cancel build") == 0;
		store_i_release(s, st);
	}
	if (ok && state != NULL && strcmp(state, "queued") != 0 &&
	    strcmp(state, "running") != 0)
		r = err_setc(&s->err, ERR_CONFLICT,
		    "build %lld is %s: only a queued or running build can be "
		    "cancelled",
		    (long long)build_id, state);
	if (ok && r == 0) {
		/* The builder's next heartbeat or upload finds no lease. */
		st = store_i_stmt(s,
		    "UPDATE builds SET state = 'cancelled', error = ?2,"
		    " lease_owner = NULL, lease_expires = NULL,"
		    " finished = ?3, updated = ?3 WHERE id = ?1");
		if ((ok = st != NULL)) {
			db_bind_int64(st, 1, build_id);
			store_i_bind_text(st, 2, why);
			db_bind_int64(st, 3, now);
			ok = store_i_step_done(s, st, "cancel build") == 0;
			store_i_release(s, st);
		}
		ok = ok &&
		    build_fail_waiters(
		        s, build_id, "build cancelled", why, now, &nfail) == 0;
	}
	free(state);
	if (store_i_tx_end(s, ok) == -1)
		return -1;
	if (out_failed)
		*out_failed = nfail;
	return r;
}

int
store_build_cancel(struct store *s, int *out_failed, int64_t build_id,
    const char *why, int64_t now)
{
	int rc;

	STORE_I_TX_RETRY(
	    s, rc, build_cancel_once(s, out_failed, build_id, why, now));
	return rc;
}
