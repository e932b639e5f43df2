#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/xalloc.h"

json_t *
pwjson_parse(const char *p, size_t len, struct err *e)
{
	json_error_t je;
	json_t *v;

	v = json_loadb(p, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (v == NULL)
		err_set(
		    e, "line %d column %d: %s", je.line, je.column, je.text);
	return v;
}

json_t *
pwjson_load_file(const char *path, size_t max, struct err *e)
{
	FILE *f;
	struct buf b;
	char chunk[8192];
	size_t n;
	json_t *v;

	if ((f = fopen(path, "rb")) == NULL) {
		err_set(e, "%s: cannot open", path);
		return NULL;
	}
	buf_init(&b, max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(&b, chunk, n) == -1)
			break;
	fclose(f);
	if (buf_failed(&b)) {
		buf_release(&b);
		err_set(e, "%s: larger than %zu bytes", path, max);
		return NULL;
	}
	v = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, NULL);
	if (v == NULL) {
		json_error_t je;

		v = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, &je);
		if (v == NULL)
			err_set(e, "%s:%d:%d: %s", path, je.line, je.column,
			    je.text);
	}
	buf_release(&b);
	return v;
}

static json_t *
field(json_t *o, const char *key, int required, struct err *e)
{
	json_t *v;

	if (!json_is_object(o)) {
		err_set(e, "expected a JSON object");
		return NULL;
	}
	v = json_object_get(o, key);
	if (v == NULL && required)
		err_set(e, "field '%s': missing", key);
	return v;
}

int
pwjson_str(const char **out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 1, e);

	if (v == NULL)
		return -1;
	if (!json_is_string(v))
		return err_set(e, "field '%s': expected a string", key);
	*out = json_string_value(v);
	return 0;
}

int
pwjson_str_opt(const char **out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 0, e);

	if (v == NULL || json_is_null(v))
		return json_is_object(o) ? 0 : -1;
	return pwjson_str(out, o, key, e);
}

int
pwjson_int(int64_t *out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 1, e);

	if (v == NULL)
		return -1;
	if (!json_is_integer(v))
		return err_set(e, "field '%s': expected an integer", key);
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int
pwjson_int_opt(int64_t *out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 0, e);

	if (v == NULL || json_is_null(v))
		return json_is_object(o) ? 0 : -1;
	return pwjson_int(out, o, key, e);
}

int
pwjson_num(double *out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 1, e);

	if (v == NULL)
		return -1;
	if (!json_is_number(v))
		return err_set(e, "field '%s': expected a number", key);
	*out = json_number_value(v);
	return 0;
}

int
pwjson_num_opt(double *out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 0, e);

	if (v == NULL || json_is_null(v))
		return json_is_object(o) ? 0 : -1;
	return pwjson_num(out, o, key, e);
}

int
pwjson_bool_opt(int *out, json_t *o, const char *key, struct err *e)
{
	json_t *v = field(o, key, 0, e);

	if (v == NULL || json_is_null(v))
		return json_is_object(o) ? 0 : -1;
	if (!json_is_boolean(v))
		return err_set(e, "field '%s': expected true or false", key);
	*out = json_is_true(v);
	return 0;
}

int
pwjson_only_keys(
    json_t *o, const char *const *keys, const char *what, struct err *e)
{
	const char *k;
	json_t *v;
	size_t i;

	if (!json_is_object(o))
		return err_set(e, "%s: expected a JSON object", what);
	json_object_foreach(o, k, v)
	{
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(keys[i], k) == 0)
				break;
		if (keys[i] == NULL)
			return err_set(e, "%s: unknown field '%s'", what, k);
	}
	return 0;
}

json_t *
pwjson_string_lossy(const char *s)
{
	json_t *v = json_string(s);
	char *copy, *p;

	if (v != NULL)
		return v;
	copy = xstrdup(s);
	for (p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

char *
pwjson_dump(const json_t *v)
{
	char *s = json_dumps(v,
	    JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	        JSON_REAL_PRECISION(12));

	return s ? s : xstrdup("null");
}

/*
 * pwjson_dump's bytes written straight into a buffer (issue 17: with
 * JSON_SORT_KEYS jansson allocates and sorts a key array per object and
 * writes through a callback per token; a third of a job's reply time).
 * What jansson 2.14's dump.c does with JSON_COMPACT | JSON_SORT_KEYS |
 * JSON_ENCODE_ANY | JSON_REAL_PRECISION(12): keys by strcmp, reals as
 * "%.12g" with ".0" where it looks like an integer and the exponent's
 * '+' and leading zeros dropped, strings with \" \\ \b \f \n \r \t
 * and \u00XX for the other control characters.  0, or -1 when jansson
 * would refuse (a string that is not UTF-8): the caller dumps with
 * jansson then.  test_json__dump_buf_as_jansson compares the two.
 */
static int
utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t need, i;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, cp = c & 0x07;
	else
		return -1;
	if (n < need + 1)
		return -1;
	for (i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong, surrogates, past U+10FFFF: what jansson refuses. */
	if ((need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -1;
	return (int)need + 1;
}

static int
dump_str(struct buf *b, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;
	int k;

	buf_putc(b, '"');
	while (i < n) {
		unsigned char c = s[i];
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\') {
			if ((k = utf8_len(s + i, n - i)) < 0)
				return -1;
			i += (size_t)k;
			continue;
		}
		buf_add(b, s + run, i - run);
		switch (c) {
		case '"':
			buf_add(b, "\\\"", 2);
			break;
		case '\\':
			buf_add(b, "\\\\", 2);
			break;
		case '\b':
			buf_add(b, "\\b", 2);
			break;
		case '\f':
			buf_add(b, "\\f", 2);
			break;
		case '\n':
			buf_add(b, "\\n", 2);
			break;
		case '\r':
			buf_add(b, "\\r", 2);
			break;
		case '\t':
			buf_add(b, "\\t", 2);
			break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);
			buf_add(b, esc, 6);
			break;
		}
		run = ++i;
	}
	buf_add(b, s + run, n - run);
	return buf_putc(b, '"');
}

static void
dump_real(struct buf *b, double v)
{
	char s[64], *e, *from, *to;
	int n = snprintf(s, sizeof(s) - 2, "%.12g", v);

	if (n < 0 || (size_t)n >= sizeof(s) - 2)
		n = 0;
	if (strchr(s, '.') == NULL && strchr(s, 'e') == NULL) {
		s[n++] = '.';
		s[n++] = '0';
		s[n] = '\0';
	}
	if ((e = strchr(s, 'e')) != NULL) {
		from = to = e + 1;
		if (*to == '-')
			from = ++to;
		else if (*to == '+')
			from++;
		while (*from == '0' && from[1] != '\0')
			from++;
		memmove(to, from, strlen(from) + 1);
		n = (int)strlen(s);
	}
	buf_add(b, s, (size_t)n);
}

struct kv {
	const char *k;
	const json_t *v;
};

static int
kv_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->k, ((const struct kv *)b)->k);
}

static int
dump_value(struct buf *b, const json_t *v)
{
	char num[32];
	size_t i, n;
	int r = 0;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		struct kv small[16], *kv = small;
		const char *k;
		json_t *x;

		n = json_object_size(v);
		if (n > sizeof(small) / sizeof(small[0]))
			kv = xcalloc(n, sizeof(*kv));
		i = 0;
		json_object_foreach((json_t *)v, k, x)
		{
			kv[i].k = k;
			kv[i++].v = x;
		}
		qsort(kv, n, sizeof(*kv), kv_cmp);
		buf_putc(b, '{');
		for (i = 0; i < n && r == 0; i++) {
			if (i > 0)
				buf_putc(b, ',');
			if ((r = dump_str(b, kv[i].k, strlen(kv[i].k))) == 0) {
				buf_putc(b, ':');
				r = dump_value(b, kv[i].v);
			}
		}
		if (kv != small)
			free(kv);
		buf_putc(b, '}');
		return r;
	}
	case JSON_ARRAY:
		buf_putc(b, '[');
		n = json_array_size(v);
		for (i = 0; i < n && r == 0; i++) {
			if (i > 0)
				buf_putc(b, ',');
			r = dump_value(b, json_array_get(v, i));
		}
		buf_putc(b, ']');
		return r;
	case JSON_STRING:
		return dump_str(b, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return buf_puts(b, num);
	case JSON_REAL:
		dump_real(b, json_real_value(v));
		return 0;
	case JSON_TRUE:
		return buf_puts(b, "true");
	case JSON_FALSE:
		return buf_puts(b, "false");
	case JSON_NULL:
		return buf_puts(b, "null");
	}
	return -1;
}

int
pwjson_dump_buf(struct buf *b, const json_t *v)
{
	size_t len = b->len;
	char *s;
	int r;

	if (v != NULL && dump_value(b, v) == 0)
		return buf_failed(b) ? -1 : 0;
	/* What jansson makes of it (a string it refuses: "null"). */
	if (buf_failed(b))
		return -1;
	buf_truncate(b, len);
	s = pwjson_dump(v);
	r = buf_puts(b, s);
	free(s);
	return r;
}

void
pwjson_print(const json_t *v, void *file)
{
	json_dumpf(v, (FILE *)file,
	    JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	        JSON_REAL_PRECISION(12));
	fputc('\n', (FILE *)file);
}

json_t *
pwjson_doc(const char *text, json_t *dflt)
{
	struct err e = { 0 };
	json_t *v = text ? pwjson_parse(text, strlen(text), &e) : NULL;

	if (v == NULL)
		return dflt;
	json_decref(dflt);
	return v;
}
