/*
 * The kernels the two sides of a pair ran (see kfacts.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/caps.h"
#include "common/utf8.h"
#include "daemon/kfacts.h"
#include "store/runs.h"

#define SEP " | "

/*
 * Adds v to the distinct values in f (size KFACTS_VAL): control
 * characters become spaces; what does not fit is left out, cut back to
 * a UTF-8 boundary so the field stays valid text.
 */
static void
add_value(char *f, const char *v)
{
	char one[KFACTS_VAL];
	size_t n = utf8_cut(v, strlen(v), sizeof(one) - 1), len = strlen(f), k;
	const char *p;

	for (k = 0; k < n; k++)
		one[k] =
		    (unsigned char)v[k] < 0x20 || v[k] == 0x7f ? ' ' : v[k];
	one[n] = '\0';
	for (p = f; *p != '\0'; p += k + (p[k] ? strlen(SEP) : 0)) {
		const char *e = strstr(p, SEP);

		k = e ? (size_t)(e - p) : strlen(p);
		if (k == n && strncmp(p, one, n) == 0)
			return;
	}
	if (len == 0) {
		memcpy(f, one, n + 1);
		return;
	}
	if (len + strlen(SEP) + n >= KFACTS_VAL)
		return;
	memcpy(f + len, SEP, strlen(SEP));
	memcpy(f + len + strlen(SEP), one, n + 1);
}

static const char *
field(const json_t *kb, const char *key)
{
	const json_t *v = json_object_get(kb, key);

	if (strcmp(key, "cached") == 0)
		return json_is_true(v) ? "yes"
		    : json_is_false(v) ? "no"
		                       : "unknown";
	return json_is_string(v) && json_string_length(v) > 0
	    ? json_string_value(v)
	    : "unknown";
}

void
kfacts_side(struct kfacts *out, const json_t *states)
{
	const json_t *st, *kb;
	size_t i;

	memset(out, 0, sizeof(*out));
	json_array_foreach(states, i, st)
	{
		kb = json_object_get(st, "kernel_build");
		if (json_is_object(kb))
			out->runs++;
		else
			kb = NULL;
		add_value(out->build_id, field(kb, "build_id"));
		add_value(out->release, field(kb, "release"));
		add_value(out->config_sha256, field(kb, "config_sha256"));
		add_value(out->boot, field(kb, "boot"));
		add_value(out->cached, field(kb, "cached"));
	}
	if (out->build_id[0] == '\0') {
		snprintf(out->build_id, KFACTS_VAL, "unknown");
		snprintf(out->release, KFACTS_VAL, "unknown");
		snprintf(out->config_sha256, KFACTS_VAL, "unknown");
		snprintf(out->boot, KFACTS_VAL, "unknown");
		snprintf(out->cached, KFACTS_VAL, "unknown");
	}
}

void
kfacts_sides(struct kfacts out[2], const struct store_run_metas *rows)
{
	json_t *side[2] = { json_array(), json_array() }, *st;
	const struct store_run_meta *m;
	size_t i;

	for (i = 0; rows != NULL && i < rows->n; i++) {
		m = &rows->v[i];
		/* A measured run: the profile slot past max_runs is not. */
		if (m->role == NULL || !m->measured)
			continue;
		st = m->host_state_json ? pwjson_parse(m->host_state_json,
		                              strlen(m->host_state_json), NULL)
		                        : NULL;
		json_array_append_new(
		    side[strcmp(m->role, "base") == 0 ? 0 : 1],
		    st ? st : json_null());
	}
	kfacts_side(&out[0], side[0]);
	kfacts_side(&out[1], side[1]);
	json_decref(side[0]);
	json_decref(side[1]);
}

json_t *
kfacts_json(const struct kfacts *k)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "build_id",
	    k->build_id, "release", k->release, "config_sha256",
	    k->config_sha256, "boot", k->boot, "cached", k->cached, "runs",
	    k->runs);
}

/* Each hash of a " | " list cut to 12 digits (what people compare). */
static void
short_hashes(struct buf *b, const char *list)
{
	const char *p = list, *e;
	size_t k, i;

	for (;;) {
		e = strstr(p, SEP);
		k = e ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < k && isxdigit((unsigned char)p[i]); i++)
			;
		buf_add(b, p, i == 64 && k == 64 ? 12 : k);
		if (e == NULL)
			break;
		buf_puts(b, SEP);
		p = e + strlen(SEP);
	}
}

void
kfacts_line(struct buf *b, const struct kfacts *k)
{
	if (k->runs == 0) {
		buf_puts(b, "unknown (no run reported its kernel)");
		return;
	}
	buf_printf(b, "%s build %s config ", k->release, k->build_id);
	short_hashes(b, k->config_sha256);
	if (strcmp(k->boot, "none") == 0)
		buf_puts(b, " (boot none: the running kernel)");
	else
		buf_printf(b, " (boot %s, cached %s)", k->boot, k->cached);
}

/* One build id that names a build: not unknown, none or a mix. */
static int
one_build(const char *id)
{
	return strcmp(id, "unknown") != 0 && strcmp(id, "none") != 0 &&
	    strstr(id, SEP) == NULL;
}

/* How many builds a " | " list names ("unknown" and "none" are not). */
static int
builds(const char *list)
{
	const char *p = list, *e;
	size_t k;
	int n = 0;

	for (;;) {
		e = strstr(p, SEP);
		k = e ? (size_t)(e - p) : strlen(p);
		if (!(k == 7 && strncmp(p, "unknown", 7) == 0) &&
		    !(k == 4 && strncmp(p, "none", 4) == 0))
			n++;
		if (e == NULL)
			return n;
		p = e + strlen(SEP);
	}
}

int
kfacts_warning(struct buf *why, const struct kfacts sides[2],
    const char *base_sha, const char *cand_sha)
{
	int i, n = 0;

	/* A side measured on two kernels mixes two distributions. */
	for (i = 0; i < 2; i++)
		if (builds(sides[i].build_id) > 1) {
			buf_printf(why,
			    "%sthe %s runs ran on more than one kernel build "
			    "(%s): that side mixes the measurements of "
			    "different kernels",
			    n ? "; " : "", i == 0 ? "base" : "candidate",
			    sides[i].build_id);
			n++;
		}
	if (one_build(sides[0].build_id) && one_build(sides[1].build_id) &&
	    strcmp(sides[0].build_id, sides[1].build_id) == 0 &&
	    !(base_sha != NULL && cand_sha != NULL &&
	        strcmp(base_sha, cand_sha) == 0)) {
		buf_printf(why,
		    "%sboth sides ran the same kernel build %s (%s) though "
		    "base and candidate are different commits: the "
		    "candidate's kernel was not measured, and this "
		    "comparison says nothing about its change",
		    n ? "; " : "", sides[0].build_id, sides[0].release);
		n++;
	}
	return n > 0;
}

void
kfacts_pair(struct kfacts_pair *out, const struct store_run_metas *rows,
    const char *base_sha, const char *cand_sha)
{
	struct buf why = BUF_INIT(CAP_ERRMSG);

	kfacts_sides(out->side, rows);
	out->warning[0] = '\0';
	if (kfacts_warning(&why, out->side, base_sha, cand_sha))
		snprintf(out->warning, sizeof(out->warning), "%s", why.data);
	buf_release(&why);
}
