#ifndef WEB_HTML_H
#define WEB_HTML_H

/*
 * The one place that writes text into a page.  Markup comes from string
 * literals (HTML_LIT); every runtime string goes through html_text(),
 * every URL component through html_url(), every number through html_num()
 * and friends.  All functions append to a struct buf and return 0, or -1
 * when the buffer overflowed (sticky: check buf_failed() once at the end).
 */
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/*
 * Appends a string literal as markup.  The "" s "" concatenation makes a
 * non-literal argument a compile error, so runtime text cannot slip in.
 */
#define HTML_LIT(b, s) buf_add((b), "" s "", sizeof(s) - 1)

/*
 * Appends untrusted text, safe in element content and in quoted attribute
 * values: & < > " ' become character references; control characters
 * (except tab and newline), C1 controls, bidirectional overrides and
 * invalid UTF-8 (overlong forms, surrogates, truncated sequences, values
 * past U+10FFFF) become U+FFFD.  NULL appends nothing.
 */
int html_text(struct buf *, const char *);
/* The same for len bytes (which may contain NUL, shown as U+FFFD). */
int html_textn(struct buf *, const char *, size_t len);
/*
 * The same, showing at most max_chars characters of s; longer text is cut
 * at a character boundary and ends with U+2026 (an ellipsis).  Used for
 * untrusted strings of any size so a page stays small.
 */
int html_text_trunc(struct buf *, const char *, size_t max_chars);

/*
 * Appends a percent-encoded URL component: everything but the unreserved
 * characters A-Z a-z 0-9 - . _ ~ becomes %XX, so the result is also safe
 * in a quoted attribute.  NULL appends nothing.  Only the first
 * HTML_URL_MAX bytes are encoded: a link made from a longer (hostile)
 * value would not resolve anyway, and the page must stay small.
 */
#define HTML_URL_MAX 1024
int html_url(struct buf *, const char *);

/* Numbers.  A NaN or infinite value prints "unknown". */
int html_int(struct buf *, long long);
/* v with prec decimals (prec clamped to 0..9). */
int html_num(struct buf *, double v, int prec);
/* A signed percentage: "+1.25%", "-0.40%" (prec decimals). */
int html_pct(struct buf *, double v, int prec);
/* A compact value with SI suffix for big numbers: 20.9M, 51.2k, 0.969
 * (4 significant digits, at most 2 decimals with a suffix). */
int html_si(struct buf *, double v);
/* html_si with 3 or 4 significant digits: a spread's 3 say all its
 * precision (1.23, 0.0456, 1230, 12.3k). */
int html_si_digits(struct buf *, double v, int digits);
/* Bytes as "512 GiB", "1.5 MiB". v < 0: unknown. */
int html_bytes(struct buf *, long long v);
/* A Unix time as "2024-06-01 12:34 UTC"; t <= 0: unknown. */
int html_time(struct buf *, int64_t t);
/* A duration in seconds as "42 s", "5 min", "3 h", "2 d". */
int html_ago(struct buf *, int64_t seconds);

#endif
