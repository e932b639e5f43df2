#ifndef STORE_SERIES_MAIL_H
#define STORE_SERIES_MAIL_H

/*
 * The store: which mail the series of an inbox were made of, so the
 * inbox watcher (daemon/watch_inbox.c) can tell the mail it kept that
 * was used (it stays, for a partial reroll to take the rest of its
 * series from) from mail still waiting for its series, across a
 * restart.
 */
#include <stddef.h>

struct store;

/*
 * The Message-IDs of the roots and patches of the series recorded from
 * INBOX among the newest max of all inboxes, sorted by strcmp (*out may be
 * searched with bsearch), duplicates kept.  0, or -1 (store error).
 */
int store_series_mail_id_list(
    struct store *, char ***out, size_t *n, const char *inbox, size_t max);
void store_series_mail_ids_release(char **, size_t);

#endif
