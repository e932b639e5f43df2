#ifndef DAEMON_ALERT_MAIL_INT_H
#define DAEMON_ALERT_MAIL_INT_H

/*
 * What the files of a report's e-mail share (alert_mail.c,
 * alert_mail_header.c): untrusted text made safe for a header or body.
 */
#include <stddef.h>

#include "common/buf.h"

char *alert_mail_i_clean(const char *s, size_t max);
/* An address header from mailboxes kept apart (names may hold commas). */
void alert_mail_i_header_mailboxes(
    struct buf *b, const char *name, char *const *v, size_t n);
int alert_mail_i_is_ascii(const char *s);
void alert_mail_i_pct(char *out, size_t n, double v);

#endif
