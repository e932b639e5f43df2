#ifndef STORE_SERIES_QUOTA_H
#define STORE_SERIES_QUOTA_H

/*
 * What the series of an inbox have asked for (store/series_quota.c),
 * for its limits (inboxes[].series_per_sender_day, max_queued_jobs):
 * 0, or -1 with store_errmsg().
 */
#include <stdint.h>

struct store;

/*
 * The migration step: a sender's series of the last day are read from
 * an index of (inbox, created), not from the whole table.
 */
#define STORE_SERIES_QUOTA_MIGRATION \
	"CREATE INDEX series_inbox_created ON series(inbox, created);"

/*
 * *out: the series of inbox whose author's address is email (any case)
 * first seen at or after since, series except_id left out.
 */
int store_series_from_sender(struct store *, int64_t *out, const char *inbox,
    const char *email, int64_t since, int64_t except_id);
/* *out: queued jobs on a commit of a series of inbox (tip or patch). */
int store_series_inbox_queued(struct store *, int64_t *out, const char *inbox);

#endif
