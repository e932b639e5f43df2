#ifndef COMMON_JSON_H
#define COMMON_JSON_H

/*
 * JSON over jansson.  This header is the one place jansson is included;
 * other modules use jansson's json_t through it, plus the helpers below,
 * which turn jansson's errors into messages that name the field
 * ("field 'runs[2].index': expected integer").
 */
#include <jansson.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

/*
 * Parses len bytes; duplicate keys are errors.  NULL and e set to
 * "line L column C: ..." on failure.  The caller json_decref()s.
 */
json_t *pwjson_parse(const char *, size_t, struct err *);
/* A stored JSON document (text NULL or not JSON: dflt, which is taken
 * either way).  A new reference. */
json_t *pwjson_doc(const char *text, json_t *dflt);
/* Reads a file of at most max bytes; errors name the file. */
json_t *pwjson_load_file(const char *path, size_t max, struct err *);

/*
 * Typed field access on an object.  Required fields: missing or wrong type
 * is an error naming the field (prefix + key).  Optional fields (the _opt
 * variants) leave *out alone when absent, and are errors only when present
 * with the wrong type.  Strings are borrowed from the object.
 */
int pwjson_str(const char **out, json_t *, const char *key, struct err *);
int pwjson_str_opt(const char **out, json_t *, const char *key, struct err *);
int pwjson_int(int64_t *out, json_t *, const char *key, struct err *);
int pwjson_int_opt(int64_t *out, json_t *, const char *key, struct err *);
int pwjson_num(double *out, json_t *, const char *key, struct err *);
int pwjson_num_opt(double *out, json_t *, const char *key, struct err *);
int pwjson_bool_opt(int *out, json_t *, const char *key, struct err *);
/* Rejects keys not in the NULL-terminated list. */
int pwjson_only_keys(
    json_t *, const char *const *keys, const char *what, struct err *);

/*
 * A JSON string of s, never NULL: bytes that are not UTF-8 (a request
 * path, a header echoed in an error) become '?', which jansson would
 * otherwise refuse, leaving no reply body at all.
 */
json_t *pwjson_string_lossy(const char *s);

/* Compact, sorted-key dump; malloc'd, never NULL. */
char *pwjson_dump(const json_t *);
/* Appends the compact dump to b; -1 on overflow. */
int pwjson_dump_buf(struct buf *, const json_t *);
/* The same for an HTTP reply: keys in the order they were added (what
 * the handler built), not sorted, which is cheaper; not for documents
 * that are stored, compared or hashed. */
int pwjson_reply_buf(struct buf *, const json_t *);
/* Pretty dump (indent 2) to a stdio stream followed by a newline. */
void pwjson_print(const json_t *, void *file);

#endif
