/*
 * URL redaction (common/redact.h): a scan for "://", then the authority
 * up to the first '/', '?', '#', white space, quote or angle bracket;
 * what precedes its last '@' is the user information.
 */
#include <stdlib.h>
#include <string.h>

#include "common/redact.h"
#include "common/xalloc.h"

static int
authority_end(char c)
{
	return c == '\0' || c == '/' || c == '?' || c == '#' || c == ' ' ||
	    c == '\t' || c == '\n' || c == '\r' || c == '"' || c == '\'' ||
	    c == '<' || c == '>';
}

/* The authority starting at p: its length, and in *at the offset just
 * past its last '@' (0 when none). */
static size_t
authority(const char *p, size_t *at)
{
	size_t n = 0;

	*at = 0;
	while (!authority_end(p[n])) {
		if (p[n] == '@')
			*at = n + 1;
		n++;
	}
	return n;
}

static void
put(char *out, size_t outsz, size_t *n, const char *s, size_t len)
{
	if (*n + 1 >= outsz)
		return;
	if (len > outsz - 1 - *n)
		len = outsz - 1 - *n;
	memcpy(out + *n, s, len);
	*n += len;
}

size_t
redact_userinfo_into(char *out, size_t outsz, const char *s)
{
	size_t n = 0;
	const char *p;

	if (outsz == 0)
		return 0;
	while ((p = strstr(s, "://")) != NULL) {
		size_t at, len;

		put(out, outsz, &n, s, (size_t)(p - s) + 3);
		s = p + 3;
		len = authority(s, &at);
		if (at > 0) {
			put(out, outsz, &n, "***@", 4);
			s += at;
			len -= at;
		}
		put(out, outsz, &n, s, len);
		s += len;
	}
	put(out, outsz, &n, s, strlen(s));
	out[n] = '\0';
	return n;
}

/* Where the value of "password = VALUE" at p (its keyword) starts, in
 * *v, and where it ends; NULL when p starts no such pair. */
static const char *
password_value(const char *p, const char **v)
{
	const char *e;

	p += strlen("password");
	while (*p == ' ')
		p++;
	if (*p != '=')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	*v = e = p;
	if (*e == '\'') {
		for (e++; *e != '\0' && *e != '\''; e++)
			if (e[0] == '\\' && e[1] != '\0')
				e++;
		return *e == '\'' ? e + 1 : e;
	}
	while (*e != '\0' && *e != ' ' && *e != '&')
		e++;
	return e;
}

size_t
redact_conninfo_into(char *out, size_t outsz, const char *s)
{
	char *u = xmalloc(strlen(s) + 1);
	const char *p, *v, *e;
	size_t n = 0;

	if (outsz == 0) {
		free(u);
		return 0;
	}
	redact_userinfo_into(u, strlen(s) + 1, s);
	for (p = u; *p != '\0';) {
		if (strncmp(p, "password", 8) == 0 &&
		    (e = password_value(p, &v)) != NULL) {
			put(out, outsz, &n, p, (size_t)(v - p));
			put(out, outsz, &n, "***", 3);
			p = e;
			continue;
		}
		put(out, outsz, &n, p, 1);
		p++;
	}
	out[n] = '\0';
	free(u);
	return n;
}

char *
redact_userinfo(const char *s)
{
	size_t sz;
	char *out;

	if (s == NULL)
		return NULL;
	sz = strlen(s) + 1;
	out = xmalloc(sz + 4 * (sz / 4 + 1)); /* "***@" per "://" at most */
	redact_userinfo_into(out, sz + 4 * (sz / 4 + 1), s);
	return out;
}

char *
redact_url_host(const char *url)
{
	const char *p, *host;
	size_t at, len;

	if (url == NULL)
		return NULL;
	if ((p = strstr(url, "://")) == NULL || p == url)
		return xstrdup(url);
	len = authority(p + 3, &at);
	host = p + 3 + at;
	len -= at;
	return xasprintf("%.*s://%.*s%s", (int)(p - url), url, (int)len, host,
	    host[len] != '\0' ? "/..." : "");
}
