#ifndef DAEMON_MAIL_INT_H
#define DAEMON_MAIL_INT_H

/*
 * What the files of the mail parser share (mail.c, mail_header.c,
 * mail_series.c): bounded copies and header lookups.
 */
#include <stddef.h>

#include "common/buf.h"
#include "daemon/mail.h"

char *mail_i_capdup(const char *s, size_t len, size_t max);
/* Finds the end of the header block: the offset of the body. */
size_t mail_i_header_end(const char *d, size_t len, size_t *hlen);
/* The unfolded value of the first header NAME, or NULL. */
char *mail_i_header_get(
    const char *d, size_t hlen, const char *name, size_t *out_len);
/*
 * An unfolded header value to UTF-8 text: encoded-words decoded (the
 * white space between two adjacent ones dropped), control characters
 * and white-space runs made one space, trimmed.
 */
char *mail_i_header_text(const char *s, size_t len, int decode);
/* The ids "<...>" of a header value, in order; at most max, the last. */
size_t mail_i_msg_ids(char ***out, const char *v, size_t max);
/* One id: the first <...>, else the trimmed value. */
char *mail_i_one_id(const char *v);
/* Quoted-printable into b; header: '_' is a space (RFC 2047 Q). */
void mail_i_qp_decode(struct buf *b, const char *s, size_t len, int header);
/* ASCII case-insensitive substring test. */
int mail_i_strcasestr_ascii(const char *hay, const char *needle);

#endif
