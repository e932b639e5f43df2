#ifndef COMMON_REDACT_H
#define COMMON_REDACT_H

/*
 * Secrets inside URLs, kept off public routes, pages and logs: the user
 * information of "scheme://user:password@host/..." (a tree's fetch
 * credentials), and all but the scheme and host of a webhook URL (for
 * Slack-style hooks the path is the secret).
 */
#include <stddef.h>

/* s with the user information of every URL in it replaced by "***",
 * into out (outsz bytes, always terminated, cut when short).  Returns
 * the length written. */
size_t redact_userinfo_into(char *out, size_t outsz, const char *s);
/* The same, allocated (NULL for NULL). */
char *redact_userinfo(const char *s);
/* A PostgreSQL URI or conninfo with its secrets as "***": the user
 * information of a URI, and the value of each "password=" (a
 * conninfo's keyword, a URI's query parameter).  Into out as
 * redact_userinfo_into. */
size_t redact_conninfo_into(char *out, size_t outsz, const char *s);
/* "scheme://host[:port]" of a URL, with "/..." when it had a path;
 * what is not a URL (an e-mail address) is copied.  Allocated; NULL
 * for NULL. */
char *redact_url_host(const char *url);

#endif
