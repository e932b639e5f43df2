/*
 * The schema engine: one table of fields per mapping (as Redis' config
 * table) says which keys exist, their type, where they go, their default
 * and bounds; unknown keys get a "did you mean".  The schemas themselves
 * are in schema_{daemon,job,runner}.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/caps.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "config/config_int.h"

struct cfg_node *
cfg_i_node(const struct ctx *c, int id)
{
	if (c->doc == NULL || id < 1 || (size_t)id > c->doc->n)
		return NULL;
	return &c->doc->nodes[id - 1];
}

int
cfg_i_is_null(const struct cfg_node *n)
{
	const char *v;

	if (n->type != CFG_NODE_SCALAR || !n->plain)
		return 0;
	v = (const char *)n->value;
	return n->length == 0 || strcmp(v, "~") == 0 ||
	    strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	    strcmp(v, "NULL") == 0;
}

/* ---- describing values in messages ---- */

/* "a list", "nothing", or the scalar quoted and cut to 40 characters. */
const char *
cfg_i_describe(const struct cfg_node *n, char *out, size_t outlen)
{
	struct buf b = BUF_INIT(64);
	size_t i, len;
	const unsigned char *v;

	if (n->type == CFG_NODE_SEQ)
		return "a list";
	if (n->type == CFG_NODE_MAP)
		return "a mapping";
	if (cfg_i_is_null(n))
		return "nothing";
	v = n->value;
	len = n->length;
	buf_putc(&b, '"');
	for (i = 0; i < len && i < 40; i++)
		buf_putc(&b, v[i] < 0x20 || v[i] == 0x7f ? '?' : (char)v[i]);
	/* Do not cut a UTF-8 sequence in half: finish it (at most 4 more
	 * bytes, for text that is not UTF-8). */
	while (i < len && UTF8_CONT(v[i]) && i < 44)
		buf_putc(&b, (char)v[i++]);
	if (i < len)
		buf_puts(&b, "...");
	buf_putc(&b, '"');
	snprintf(out, outlen, "%s", b.data);
	buf_release(&b);
	return out;
}

/* Key paths ("trees[0].url") are cut, never overflowed, when too long. */
void
cfg_i_join(char *out, size_t len, const char *path, const char *key)
{
	int r;

	if (path == NULL || *path == '\0')
		r = snprintf(out, len, "%s", key);
	else
		r = snprintf(out, len, "%s.%s", path, key);
	if (r < 0 || (size_t)r >= len)
		out[len - 1] = '\0';
}

void
cfg_i_join_idx(char *out, size_t len, const char *path, size_t i)
{
	int r = snprintf(out, len, "%s[%zu]", path, i);

	if (r < 0 || (size_t)r >= len)
		out[len - 1] = '\0';
}

const char *
cfg_i_scalar(const struct cfg_node *n)
{
	return (const char *)n->value;
}

/* The value node of key in map, or NULL; *keyn gets the key node. */
const struct cfg_node *
cfg_i_lookup(const struct ctx *c, const struct cfg_node *map, const char *key,
    const struct cfg_node **keyn)
{
	struct cfg_pair *p;
	size_t len = strlen(key);

	for (p = map->pairs; p < map->pairs + map->npairs; p++) {
		const struct cfg_node *k = cfg_i_node(c, p->key);

		if (k != NULL && k->type == CFG_NODE_SCALAR &&
		    k->length == len && memcmp(k->value, key, len) == 0) {
			if (keyn != NULL)
				*keyn = k;
			return cfg_i_node(c, p->value);
		}
	}
	return NULL;
}

struct cfg_mark
cfg_i_mark(const struct ctx *c, const struct cfg_node *map, const char *key)
{
	const struct cfg_node *n = map != NULL && map->type == CFG_NODE_MAP
	    ? cfg_i_lookup(c, map, key, NULL)
	    : NULL;
	struct cfg_mark m = { 0, 0 };

	if (n != NULL) {
		m.line = (unsigned)n->line + 1;
		m.col = (unsigned)n->column + 1;
	}
	return m;
}

/* Index of an earlier pair with the same key as pair j, or -1. */
long
cfg_i_earlier_dup(const struct ctx *c, const struct cfg_node *map, size_t j)
{
	struct cfg_pair *pairs = map->pairs;
	const struct cfg_node *kj = cfg_i_node(c, pairs[j].key), *ki;
	size_t i;

	if (kj == NULL || kj->type != CFG_NODE_SCALAR)
		return -1;
	for (i = 0; i < j; i++) {
		ki = cfg_i_node(c, pairs[i].key);
		if (ki != NULL && ki->type == CFG_NODE_SCALAR &&
		    ki->length == kj->length &&
		    memcmp(ki->value, kj->value, kj->length) == 0)
			return (long)i;
	}
	return -1;
}

size_t
cfg_i_map_len(const struct cfg_node *map)
{
	return map->npairs;
}

size_t
cfg_i_seq_len(const struct cfg_node *seq)
{
	return seq->nitems;
}

int
cfg_i_list_len(
    struct ctx *c, const struct cfg_node *n, const char *path, size_t *cnt)
{
	*cnt = cfg_i_seq_len(n);
	if (*cnt > CFG_LIST_MAX) {
		cfg_i_nerr(c, n, path, "too many entries (%zu, at most %d)",
		    *cnt, CFG_LIST_MAX);
		return -1;
	}
	return 0;
}

/* Levenshtein distance, for "did you mean". */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev, cur, tmp;
	size_t row[CFG_NAME_MAX + 1];

	if (la > CFG_NAME_MAX || lb > CFG_NAME_MAX)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			tmp = prev + (a[i - 1] != b[j - 1]);
			if (row[j] + 1 < tmp)
				tmp = row[j] + 1;
			if (row[j - 1] + 1 < tmp)
				tmp = row[j - 1] + 1;
			row[j] = tmp;
			prev = cur;
		}
	}
	return row[lb];
}

int
cfg_i_schema_score(
    const struct ctx *c, const struct cfg_node *map, const struct schema *s)
{
	size_t i, k;
	int score = 0, near;

	if (map == NULL || map->type != CFG_NODE_MAP)
		return 0;
	for (i = 0; i < map->npairs; i++) {
		const struct cfg_node *key = cfg_i_node(c, map->pairs[i].key);
		const char *name = key ? cfg_i_scalar(key) : NULL;

		if (name == NULL)
			continue;
		near = 0;
		for (k = 0; k < s->n; k++) {
			if (strcmp(name, s->f[k].key) == 0) {
				near = 2;
				break;
			}
			if (edit_distance(name, s->f[k].key) < 3)
				near = 1;
		}
		score += near;
	}
	return score;
}

/*
 * Checks a mapping's keys: each a plain string, no duplicates, and (when
 * s is given) each one the schema knows.  Every pair gets one message at
 * most.  Returns nonzero when the mapping has too many keys to go on.
 */
int
cfg_i_check_keys(struct ctx *c, const struct cfg_node *map,
    const struct schema *s, const char *path)
{
	struct cfg_pair *pairs = map->pairs;
	size_t n = cfg_i_map_len(map), j, i;
	char kp[512];

	if (n > CFG_LIST_MAX) {
		cfg_i_nerr(c, map, path, "too many keys (%zu, at most %d)", n,
		    CFG_LIST_MAX);
		return -1;
	}
	for (j = 0; j < n; j++) {
		const struct cfg_node *k = cfg_i_node(c, pairs[j].key);
		long d;

		if (k == NULL)
			continue;
		if (k->type != CFG_NODE_SCALAR || cfg_i_is_null(k)) {
			cfg_i_nerr(c, k, path, "keys must be strings");
			continue;
		}
		cfg_i_join(kp, sizeof(kp), path, cfg_i_scalar(k));
		if ((d = cfg_i_earlier_dup(c, map, j)) >= 0) {
			const struct cfg_node *first =
			    cfg_i_node(c, pairs[d].key);

			cfg_i_nerr(c, k, kp,
			    "duplicate key (first at line %zu)",
			    (size_t)first->line + 1);
			continue;
		}
		if (s == NULL)
			continue;
		for (i = 0; i < s->n; i++)
			if (strcmp(s->f[i].key, cfg_i_scalar(k)) == 0 &&
			    strlen(cfg_i_scalar(k)) == k->length)
				break;
		if (i < s->n)
			continue;
		{
			const char *best = NULL;
			size_t bd = 3, dist;

			for (i = 0; i < s->n; i++) {
				dist =
				    edit_distance(cfg_i_scalar(k), s->f[i].key);
				if (dist < bd) {
					bd = dist;
					best = s->f[i].key;
				}
			}
			if (best != NULL)
				cfg_i_nerr(c, k, kp,
				    "unknown key (did you mean '%s'?)", best);
			else
				cfg_i_nerr(c, k, kp, "unknown key");
		}
	}
	return 0;
}

static const char *
type_name(const struct field *f)
{
	switch (f->type) {
	case F_STR:
		return "a string";
	case F_INT:
		return "an integer";
	case F_DURATION:
		return "a duration (e.g. 90s, 5m, 1h)";
	case F_SIZE:
		return "a size (e.g. 512K, 64M, 1G)";
	case F_PERCENT:
		return "a percentage (e.g. 2%)";
	case F_BOOL:
		return "true or false";
	case F_ENUM:
		return "a name";
	case F_LIST:
		return "a list";
	case F_SECTION:
	case F_ARRAY:
	case F_CUSTOM:
		break;
	}
	return f->type == F_ARRAY ? "a list" : "a mapping";
}

/*
 * A scalar's text, or NULL after reporting that n is not a usable scalar
 * (a collection, nothing, or a string with a NUL inside).
 */
const char *
cfg_i_want_scalar(
    struct ctx *c, const struct cfg_node *n, const char *path, const char *what)
{
	char d[96];

	if (n->type != CFG_NODE_SCALAR) {
		cfg_i_nerr(c, n, path, "expected %s, got %s", what,
		    cfg_i_describe(n, d, sizeof(d)));
		return NULL;
	}
	if (cfg_i_is_null(n)) {
		cfg_i_nerr(c, n, path, "no value (expected %s)", what);
		return NULL;
	}
	if (strlen(cfg_i_scalar(n)) != n->length) {
		cfg_i_nerr(c, n, path, "contains a NUL character");
		return NULL;
	}
	return cfg_i_scalar(n);
}

void
cfg_i_strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void
cfg_i_load_list(struct ctx *c, const struct cfg_node *n, const struct field *f,
    struct strlist *out, const char *path)
{
	int *it;
	size_t i, j, cnt;
	char ip[512], d[96];

	if (n->type != CFG_NODE_SEQ) {
		if (cfg_i_is_null(n))
			cfg_i_nerr(c, n, path, "no value (expected a list)");
		else
			cfg_i_nerr(c, n, path, "expected a list, got %s",
			    cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	if (cfg_i_list_len(c, n, path, &cnt) == -1)
		return;
	if (cnt == 0 && (f->flags & F_NONEMPTY)) {
		cfg_i_nerr(c, n, path, "must not be empty");
		return;
	}
	out->v = xcalloc(cnt + 1, sizeof(char *));
	for (i = 0, it = n->items; i < cnt; i++, it++) {
		const struct cfg_node *e = cfg_i_node(c, *it);
		const char *s;
		char *v;

		cfg_i_join_idx(ip, sizeof(ip), path, i);
		if (e == NULL ||
		    (s = cfg_i_want_scalar(c, e, ip, "a string")) == NULL)
			continue;
		if ((v = cfg_i_check_str(c, e, ip, s, f->vk, i == 0)) == NULL)
			continue;
		if (f->flags & F_UNIQUE) {
			for (j = 0; j < out->n; j++)
				if (strcmp(out->v[j], v) == 0)
					break;
			if (j < out->n) {
				cfg_i_nerr(c, e, ip, "'%s' is listed twice", s);
				free(v);
				continue;
			}
		}
		out->v[out->n++] = v;
	}
}

static void
fmt_bound(char *out, size_t len, const struct field *f, int64_t v)
{
	if (f->type == F_DURATION) {
		if (v % 86400 == 0 && v > 0)
			snprintf(out, len, "%lldd", (long long)(v / 86400));
		else if (v % 3600 == 0 && v > 0)
			snprintf(out, len, "%lldh", (long long)(v / 3600));
		else if (v % 60 == 0 && v > 0)
			snprintf(out, len, "%lldm", (long long)(v / 60));
		else
			snprintf(out, len, "%llds", (long long)v);
	} else if (f->type == F_SIZE) {
		if (v % ((int64_t)1 << 40) == 0 && v > 0)
			snprintf(out, len, "%lldT", (long long)(v >> 40));
		else if (v % ((int64_t)1 << 30) == 0 && v > 0)
			snprintf(out, len, "%lldG", (long long)(v >> 30));
		else if (v % ((int64_t)1 << 20) == 0 && v > 0)
			snprintf(out, len, "%lldM", (long long)(v >> 20));
		else if (v % 1024 == 0 && v > 0)
			snprintf(out, len, "%lldK", (long long)(v >> 10));
		else
			snprintf(out, len, "%lld", (long long)v);
	} else {
		snprintf(out, len, "%lld", (long long)v);
	}
}

static int
parse_int(int64_t *out, const char *s)
{
	int64_t v = 0;
	int neg = 0;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (*s != '\0')
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* Parses a numeric-ish scalar of field f into *out; -1 when malformed. */
static int
parse_num(const struct field *f, const char *s, int64_t *out)
{
	switch (f->type) {
	case F_INT:
		return parse_int(out, s);
	case F_DURATION:
		return config_parse_duration(out, s);
	case F_SIZE:
		return config_parse_size(out, s);
	default:
		return -1;
	}
}

static void
enum_list(const struct enumv *e, struct buf *b)
{
	for (; e->name != NULL; e++)
		buf_printf(b, "%s%s", b->len ? ", " : "", e->name);
}

void
cfg_i_load_field(struct ctx *c, const struct cfg_node *n, const struct field *f,
    void *base, const char *path)
{
	const char *s;
	char d[96], lo[32], hi[32];
	int64_t v;
	double pct;
	int b;

	switch (f->type) {
	case F_STR: {
		char *val;

		if ((s = cfg_i_want_scalar(c, n, path, "a string")) == NULL)
			return;
		if ((val = cfg_i_check_str(c, n, path, s, f->vk, 1)) == NULL)
			return;
		free(*AT(base, f->off, char *));
		*AT(base, f->off, char *) = val;
		return;
	}
	case F_INT:
	case F_DURATION:
	case F_SIZE:
		if ((s = cfg_i_want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (parse_num(f, s, &v) == -1 ||
		    (f->type == F_INT && !n->plain)) {
			cfg_i_nerr(c, n, path, "expected %s, got %s%s",
			    type_name(f), n->plain ? "" : "a quoted string ",
			    cfg_i_describe(n, d, sizeof(d)));
			return;
		}
		if (v < f->min || v > f->max) {
			fmt_bound(lo, sizeof(lo), f, f->min);
			fmt_bound(hi, sizeof(hi), f, f->max);
			cfg_i_nerr(c, n, path, "%s is out of range (%s..%s)", s,
			    lo, hi);
			return;
		}
		*AT(base, f->off, int64_t) = v;
		return;
	case F_PERCENT:
		if ((s = cfg_i_want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (config_parse_percent(&pct, s) == -1) {
			cfg_i_nerr(c, n, path, "expected %s, got %s",
			    type_name(f), cfg_i_describe(n, d, sizeof(d)));
			return;
		}
		if (pct < (double)f->min || pct > (double)f->max) {
			cfg_i_nerr(c, n, path,
			    "%s is out of range (%lld%%..%lld%%)", s,
			    (long long)f->min, (long long)f->max);
			return;
		}
		*AT(base, f->off, double) = pct;
		return;
	case F_BOOL:
		if ((s = cfg_i_want_scalar(c, n, path, type_name(f))) == NULL)
			return;
		if (!n->plain || config_parse_bool(&b, s) == -1) {
			cfg_i_nerr(c, n, path,
			    "expected true or false, got %s%s",
			    n->plain ? "" : "a quoted string ",
			    cfg_i_describe(n, d, sizeof(d)));
			return;
		}
		*AT(base, f->off, int) = b;
		return;
	case F_ENUM: {
		const struct enumv *e;
		struct buf names = BUF_INIT(CAP_ERRMSG);

		if ((s = cfg_i_want_scalar(c, n, path, "a name")) == NULL)
			return;
		for (e = f->enums; e->name != NULL; e++)
			if (strcmp(e->name, s) == 0) {
				*AT(base, f->off, int) = e->val;
				return;
			}
		enum_list(f->enums, &names);
		cfg_i_nerr(c, n, path, "%s is not one of %s",
		    cfg_i_describe(n, d, sizeof(d)), names.data);
		buf_release(&names);
		return;
	}
	case F_LIST: {
		struct strlist *l = AT(base, f->off, struct strlist);

		cfg_i_strlist_free(l);
		cfg_i_load_list(c, n, f, l, path);
		return;
	}
	case F_SECTION:
		if (n->type != CFG_NODE_MAP) {
			cfg_i_nerr(c, n, path, "expected a mapping, got %s",
			    cfg_i_describe(n, d, sizeof(d)));
			cfg_i_load_map(c, NULL, f->sub, base, path);
			return;
		}
		cfg_i_load_map(c, n, f->sub, base, path);
		return;
	case F_ARRAY: {
		int *it;
		size_t i, cnt;
		char *arr;
		char ip[512];

		if (n->type != CFG_NODE_SEQ) {
			cfg_i_nerr(c, n, path, "expected a list, got %s",
			    cfg_i_describe(n, d, sizeof(d)));
			return;
		}
		if (cfg_i_list_len(c, n, path, &cnt) == -1)
			return;
		arr = xcalloc(cnt ? cnt : 1, f->sub->size);
		*AT(base, f->off, void *) = arr;
		*AT(base, f->off_n, size_t) = cnt;
		for (i = 0, it = n->items; i < cnt; i++, it++) {
			const struct cfg_node *e = cfg_i_node(c, *it);
			void *elem = arr + i * f->sub->size;

			cfg_i_join_idx(ip, sizeof(ip), path, i);
			if (e == NULL || e->type != CFG_NODE_MAP) {
				if (e != NULL)
					cfg_i_nerr(c, e, ip,
					    "expected a mapping, got %s",
					    cfg_i_describe(e, d, sizeof(d)));
				cfg_i_load_map(c, NULL, f->sub, elem, ip);
				continue;
			}
			cfg_i_load_map(c, e, f->sub, elem, ip);
			if (f->sub->check != NULL)
				f->sub->check(c, elem, e, ip, i);
		}
		return;
	}
	case F_CUSTOM:
		f->fn(c, n, base, path);
		return;
	}
}

static void
apply_default(
    struct ctx *c, const struct field *f, void *base, const char *path)
{
	int64_t v;
	int b;

	switch (f->type) {
	case F_STR:
		if (f->def != NULL)
			*AT(base, f->off, char *) = xstrdup(f->def);
		return;
	case F_INT:
	case F_DURATION:
	case F_SIZE:
		if (f->def != NULL && parse_num(f, f->def, &v) == 0)
			*AT(base, f->off, int64_t) = v;
		return;
	case F_PERCENT:
		if (f->def != NULL)
			config_parse_percent(AT(base, f->off, double), f->def);
		return;
	case F_BOOL:
		if (f->def != NULL && config_parse_bool(&b, f->def) == 0)
			*AT(base, f->off, int) = b;
		return;
	case F_ENUM: {
		const struct enumv *e;

		for (e = f->enums; f->def != NULL && e->name != NULL; e++)
			if (strcmp(e->name, f->def) == 0)
				*AT(base, f->off, int) = e->val;
		return;
	}
	case F_SECTION:
		cfg_i_load_map(c, NULL, f->sub, base, path);
		return;
	case F_LIST:
	case F_ARRAY:
		return;
	case F_CUSTOM:
		f->fn(c, NULL, base, path);
		return;
	}
}

/*
 * Loads a mapping into base by the schema, in the schema's order (so a
 * field may rely on an earlier one, as command on matrix).  map NULL
 * applies the defaults of an absent section.
 */
void
cfg_i_load_map(struct ctx *c, const struct cfg_node *map,
    const struct schema *s, void *base, const char *path)
{
	size_t i;
	char kp[512];

	if (map != NULL && cfg_i_check_keys(c, map, s, path) != 0)
		map = NULL;
	for (i = 0; i < s->n; i++) {
		const struct field *f = &s->f[i];
		const struct cfg_node *v = NULL, *k = NULL;

		cfg_i_join(kp, sizeof(kp), path, f->key);
		if (map != NULL)
			v = cfg_i_lookup(c, map, f->key, &k);
		if (v == NULL) {
			if (map != NULL && (f->flags & F_REQ))
				cfg_i_nerr(c, map, path,
				    "missing required key '%s'", f->key);
			apply_default(c, f, base, kp);
			continue;
		}
		cfg_i_load_field(c, v, f, base, kp);
	}
}

/*
 * A mapping of NAME: {mapping} entries (a job's metrics, an inbox's
 * tags).  Checks the whole node (expecting `what`) and each entry: a
 * name valid() accepts (else `bad_name`), a mapping value; each() gets
 * the good ones with their path ("metrics.throughput").
 */
void
cfg_i_named_maps(struct ctx *c, const struct cfg_node *n, const char *path,
    const char *what, int (*valid)(const char *), const char *bad_name,
    void (*each)(struct ctx *, const char *name, const struct cfg_node *vn,
        const char *kp, void *arg),
    void *arg)
{
	struct cfg_pair *p;
	size_t i, cnt;
	char d[96], kp[512];

	if (n == NULL)
		return;
	if (n->type != CFG_NODE_MAP) {
		cfg_i_nerr(c, n, path, "expected a mapping (NAME: %s), got %s",
		    what, cfg_i_describe(n, d, sizeof(d)));
		return;
	}
	if (cfg_i_check_keys(c, n, NULL, path) != 0)
		return;
	cnt = cfg_i_map_len(n);
	for (i = 0, p = n->pairs; i < cnt; i++, p++) {
		const struct cfg_node *kn = cfg_i_node(c, p->key),
		                      *vn = cfg_i_node(c, p->value);

		if (kn == NULL || vn == NULL || kn->type != CFG_NODE_SCALAR ||
		    cfg_i_is_null(kn) || cfg_i_earlier_dup(c, n, i) >= 0)
			continue;
		cfg_i_join(kp, sizeof(kp), path, cfg_i_scalar(kn));
		if (!valid(cfg_i_scalar(kn))) {
			cfg_i_nerr(c, kn, kp, "%s", bad_name);
			continue;
		}
		if (vn->type != CFG_NODE_MAP) {
			cfg_i_nerr(c, vn, kp, "expected a mapping %s, got %s",
			    what, cfg_i_describe(vn, d, sizeof(d)));
			continue;
		}
		each(c, cfg_i_scalar(kn), vn, kp, arg);
	}
}
