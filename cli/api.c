/*
 * What the API subcommands (submit, jobs, hosts) share: option parsing,
 * one HTTP call that prints the server's error, and plain-text tables.
 * Text from the server is untrusted: control characters are replaced
 * before it reaches the terminal.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/caps.h"
#include "common/http.h"
#include "common/xalloc.h"

int
cli_int_arg(int64_t *out, const char *cmd, const char *name, const char *s,
    int64_t min, int64_t max)
{
	char *end;
	long long v;

	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < min || v > max) {
		fprintf(stderr,
		    "perfwatch %s: %s: '%s' is not an integer in [%" PRId64
		    ", %" PRId64 "]\n",
		    cmd, name, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int
cli_api_open(struct cli_api *a, const char *cmd, const char *server,
    const char *token_file, int need_token)
{
	struct err e = { 0 };
	const char *tf = cli_token_file(token_file), *ca;
	char *token = NULL;
	size_t n;

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	server = cli_server(server);
	n = strlen(server);
	while (n > 0 && server[n - 1] == '/')
		n--;
	a->server = xstrndup(server, n);
	a->http = http_new();
	/* A daemon with a certificate of a private CA (docs/DEPLOY.md). */
	if ((ca = getenv("PERFWATCH_CA_FILE")) != NULL && ca[0] != '\0')
		http_set_cainfo(a->http, ca);
	if (tf == NULL && need_token) {
		fprintf(stderr,
		    "perfwatch %s: an admin token is needed: --token-file "
		    "FILE or PERFWATCH_TOKEN_FILE\n",
		    cmd);
		return 2;
	}
	if (tf != NULL) {
		if (http_token_load(&token, tf, &e) != 0) {
			fprintf(stderr, "perfwatch %s: %s\n", cmd, err_msg(&e));
			return 2;
		}
		http_set_token(a->http, token);
		free(token);
	}
	return 0;
}

void
cli_api_close(struct cli_api *a)
{
	http_free(a->http);
	free(a->server);
	buf_release(&a->body);
}

int
cli_api_call(json_t **out, struct cli_api *a, const char *method,
    const char *path, const char *body)
{
	struct http_reply r = HTTP_REPLY_INIT;
	struct err e = { 0 };
	char *url = xasprintf("%s%s", a->server, path);
	const char *msg = NULL;
	json_t *v;
	int rc;

	*out = NULL;
	buf_release(&a->body);
	rc = http_request(
	    &r, a->http, method, url, body, body ? strlen(body) : 0);
	free(url);
	if (rc < 0) {
		fprintf(
		    stderr, "perfwatch %s: %s\n", a->cmd, http_errmsg(a->http));
		return 1;
	}
	v = r.body.len ? pwjson_parse(r.body.data, r.body.len, &e) : NULL;
	if (r.status / 100 != 2) {
		struct buf m = BUF_INIT(CAP_ERRMSG);

		if (v != NULL && json_is_object(v) &&
		    pwjson_str(&msg, v, "error", &e) == 0)
			cli_put_clean(&m, msg, 300);
		else
			cli_put_clean(&m, r.body.data, 300);
		fprintf(stderr, "perfwatch %s: %s %s: HTTP %ld: %s\n", a->cmd,
		    method, path, r.status, m.data);
		buf_release(&m);
		json_decref(v);
		http_reply_release(&r);
		return 1;
	}
	if (v == NULL && r.status != 204) {
		fprintf(stderr, "perfwatch %s: %s %s: reply is not JSON: %s\n",
		    a->cmd, method, path, err_msg(&e));
		http_reply_release(&r);
		return 1;
	}
	a->body = r.body; /* kept for --json: the API's own bytes */
	r.body = BUF_INIT(0);
	http_reply_release(&r);
	*out = v;
	return 0;
}

void
cli_print_body(const struct cli_api *a)
{
	fwrite(a->body.data, 1, a->body.len, stdout);
	if (a->body.len == 0 || a->body.data[a->body.len - 1] != '\n')
		fputc('\n', stdout);
}

void
cli_put_clean(struct buf *b, const char *s, size_t max)
{
	size_t i;

	for (i = 0; s[i] != '\0' && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		/* Keeps UTF-8 bytes, drops what a terminal would act on. */
		buf_putc(b, (c < 0x20 || c == 0x7f) ? '?' : (char)c);
	}
	if (s[i] != '\0')
		buf_puts(b, "...");
}

char *
cli_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	struct buf b = BUF_INIT(CAP_LINE);

	if (v == NULL || json_is_null(v))
		return xstrdup("-");
	if (json_is_string(v))
		cli_put_clean(&b, json_string_value(v), 200);
	else if (json_is_integer(v))
		buf_printf(&b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		buf_printf(&b, "%.6g", json_real_value(v));
	else if (json_is_boolean(v))
		buf_puts(&b, json_is_true(v) ? "true" : "false");
	else {
		char *s = pwjson_dump(v);

		cli_put_clean(&b, s, 200);
		free(s);
	}
	return buf_take(&b);
}

char *
cli_time(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	char out[64];
	struct tm tm;
	time_t t;

	if (!json_is_integer(v))
		return xstrdup("-");
	t = (time_t)json_integer_value(v);
	gmtime_r(&t, &tm);
	strftime(out, sizeof(out), "%Y-%m-%d %H:%M:%SZ", &tm);
	return xstrdup(out);
}

/* ---- tables ---- */

void
cli_table_init(struct cli_table *t, size_t ncol)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
}

void
cli_table_add(struct cli_table *t, char **cells)
{
	size_t i;

	t->cells =
	    xreallocarray(t->cells, (t->nrows + 1) * t->ncol, sizeof(char *));
	for (i = 0; i < t->ncol; i++)
		t->cells[t->nrows * t->ncol + i] = cells[i];
	t->nrows++;
}

void
cli_table_print(struct cli_table *t)
{
	size_t *w = xcalloc(t->ncol, sizeof(size_t));
	size_t r, c, len;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncol; c++) {
			len = strlen(t->cells[r * t->ncol + c]);
			if (len > w[c])
				w[c] = len;
		}
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncol; c++) {
			const char *s = t->cells[r * t->ncol + c];

			if (c + 1 == t->ncol)
				printf("%s\n", s);
			else
				printf("%-*s  ", (int)w[c], s);
		}
	}
	free(w);
}

void
cli_table_free(struct cli_table *t)
{
	size_t i;

	for (i = 0; i < t->nrows * t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
}
