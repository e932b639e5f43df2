#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/files.h"
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
	struct buf b;
	json_t *v;
	int fd, rc, saved;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		err_set(e, "%s: cannot open", path);
		return NULL;
	}
	buf_init(&b, max);
	rc = files_read_fd(&b, fd, max);
	saved = errno;
	close(fd);
	if (rc == -1 && saved == EFBIG) {
		buf_release(&b);
		err_set(e, "%s: larger than %zu bytes", path, max);
		return NULL;
	}
	if (rc == -1) {
		/* A directory, an I/O error: not a truncated document. */
		buf_release(&b);
		err_set(e, "%s: %s", path, strerror(saved));
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

/* Compact, sorted keys (one text per value: stored documents are
 * compared and hashed), reals to 12 digits. */
#define PWJSON_DUMP_FLAGS                                  \
	(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | \
	    JSON_REAL_PRECISION(12))

char *
pwjson_dump(const json_t *v)
{
	char *s = json_dumps(v, PWJSON_DUMP_FLAGS);

	return s ? s : xstrdup("null");
}

static int
dump_to_buf(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n);
}

/* Straight into b: no string of jansson's, copied and freed. */
static int
dump_buf(struct buf *b, const json_t *v, size_t flags)
{
	return json_dump_callback(v, dump_to_buf, b, flags) == 0 &&
	        !buf_failed(b)
	    ? 0
	    : -1;
}

int
pwjson_dump_buf(struct buf *b, const json_t *v)
{
	return dump_buf(b, v, PWJSON_DUMP_FLAGS);
}

int
pwjson_reply_buf(struct buf *b, const json_t *v)
{
	/* Sorting costs each object a malloc, a qsort and a lookup a key:
	 * 15 % of dumping a 200-point history.  jansson keeps insertion
	 * order, so a reply is still one text for one document. */
	return dump_buf(b, v, PWJSON_DUMP_FLAGS & ~(size_t)JSON_SORT_KEYS);
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
