/*
 * Suspect pairs: the two sides ran under different host states (see
 * hygiene.h).
 */
#include <stdint.h>
#include <string.h>

#include "common/caps.h"
#include "common/xalloc.h"
#include "daemon/hygiene.h"
#include "store/pairs.h"
#include "store/runs.h"

/* The keys compared; the kernel is left out on purpose. */
static const char *const keys[] = { "governor", "turbo", "thp", "thp_defrag",
	"smt", "pinning", "cmdline", "microcode", "drop_caches", NULL };

#define WHY_MAX 2048

/* The command line without its BOOT_IMAGE= word (a per-kernel path). */
static void
cmdline_norm(struct buf *out, const char *s)
{
	const char *e;

	while (*s != '\0') {
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		e = strchr(s, ' ');
		if (e == NULL)
			e = s + strlen(s);
		if (strncmp(s, "BOOT_IMAGE=", 11) != 0)
			buf_printf(out, "%s%.*s", out->len ? " " : "",
			    (int)(e - s), s);
		s = e;
	}
}

/* Distinct values of key on one side, in run order, joined by " | ". */
static void
side_values(struct buf *out, const json_t *states, const char *key)
{
	json_t *seen = json_object();
	struct buf v = BUF_INIT(CAP_LINE);
	const json_t *st;
	const char *s;
	size_t i;

	json_array_foreach(states, i, st)
	{
		s = json_string_value(json_object_get(st, key));
		if (s == NULL)
			s = "unknown";
		buf_release(&v);
		if (strcmp(key, "cmdline") == 0)
			cmdline_norm(&v, s);
		else
			buf_puts(&v, s);
		if (json_object_get(seen, v.data) != NULL)
			continue;
		json_object_set_new(seen, v.data, json_true());
		buf_printf(out, "%s%s", out->len ? " | " : "", v.data);
	}
	buf_release(&v);
	json_decref(seen);
}

int
hygiene_compare(struct buf *why, const struct store_run_metas *rows)
{
	json_t *side[2] = { json_array(), json_array() }, *st;
	struct buf a = BUF_INIT(CAP_LINE), b = BUF_INIT(CAP_LINE);
	const char *role, *text;
	size_t i, k;
	int n = 0;

	for (i = 0; rows != NULL && i < rows->n; i++) {
		role = rows->v[i].role;
		text = rows->v[i].host_state_json;
		/* A measured run: an old profile slot is not one. */
		if (!rows->v[i].measured)
			continue;
		if (role == NULL || text == NULL ||
		    (st = pwjson_parse(text, strlen(text), NULL)) == NULL)
			continue;
		json_array_append_new(
		    side[strcmp(role, "base") == 0 ? 0 : 1], st);
	}
	if (json_array_size(side[0]) == 0 && json_array_size(side[1]) == 0)
		goto out;
	if (json_array_size(side[0]) == 0 || json_array_size(side[1]) == 0) {
		buf_printf(why, "host state recorded by the %s runs only",
		    json_array_size(side[0]) ? "base" : "candidate");
		n = 1;
		goto out;
	}
	for (k = 0; keys[k] != NULL; k++) {
		buf_release(&a);
		buf_release(&b);
		side_values(&a, side[0], keys[k]);
		side_values(&b, side[1], keys[k]);
		if (strcmp(a.data, b.data) == 0 &&
		    strstr(a.data, " | ") == NULL)
			continue;
		n++;
		if (why->len < WHY_MAX)
			buf_printf(why, "%s%s: %s (base) vs %s (candidate)",
			    why->len ? "; " : "", keys[k], a.data, b.data);
	}
out:
	buf_release(&a);
	buf_release(&b);
	json_decref(side[0]);
	json_decref(side[1]);
	return n;
}

int
hygiene_mark(struct store *s, int64_t pair_id)
{
	struct buf why = BUF_INIT(WHY_MAX * 2);
	struct store_run_metas rows;
	int rc;

	if (store_pair_run_meta_list(s, &rows, pair_id) != 0)
		return -1;
	rc = hygiene_compare(&why, &rows) > 0
	    ? store_hygiene_set(s, pair_id, why.data)
	    : store_hygiene_set(s, pair_id, NULL);
	store_run_metas_release(&rows);
	buf_release(&why);
	return rc == 0 ? 0 : -1;
}
