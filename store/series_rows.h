#ifndef STORE_SERIES_ROWS_H
#define STORE_SERIES_ROWS_H

/*
 * The typed series reads (issue 13, docs/ARCHITECTURE.md "The typed
 * store"): GET /api/v1/series, /api/v1/series/{id} and the /series/{id}
 * page read these structs; web/rows_series.c makes their JSON.  Text is
 * the struct's own copy (bytes that are not UTF-8 as '?'), NULL where
 * the column is NULL; an id absent is 0, a count unknown -1, a time
 * absent has its has_ flag 0.  Errors: 0, ERR_NOTFOUND where said, or
 * -1 with store_errmsg().
 */
#include <stddef.h>
#include <stdint.h>

struct store;

/* One patch of a series, by seq, with its commit. */
struct store_series_patch_row {
	int64_t seq;
	char *message_id, *subject, *author;
	int has_date;
	int64_t date;
	int64_t commit_id; /* 0: none */
	char *sha;         /* its commit's, or NULL */
	char *applied_by;  /* "libgit2", "git am --3way", or NULL */
	char *verdicts;    /* against its parent (trigger.every_patch) */
};

/* One series.  The list and store_series_get fill every field; the
 * page's read (store_web_series) leaves message_id, ref, created,
 * updated and verdicts empty and fills pairs. */
struct store_series_row {
	int64_t id;
	char *inbox, *message_id, *title, *author;
	int64_t version, total, found; /* -1: unknown */
	int has_time;
	int64_t time; /* the mail's date */
	char *state, *error, *tree, *branch, *base_sha, *ref;
	int64_t commit_id; /* the tip's row, 0: none */
	char *commit_sha;
	int has_created, has_updated;
	int64_t created, updated;
	char *branch_tag;
	int64_t supersedes; /* 0: none */
	char *fallback;
	char *verdicts; /* of the pairs measuring the tip, comma-separated */
	/* store_series_get, store_web_series: */
	struct store_series_patch_row *patches;
	size_t npatches;
	/* store_web_series: the pairs measuring the tip, newest first. */
	int64_t *pairs;
	size_t npairs;
};

struct store_series_list {
	struct store_series_row *v;
	size_t n;
	int64_t next_cursor; /* 0 at the end */
};

/* Newest first, limit rows below cursor (0: from the newest). */
int store_series_list(struct store *, struct store_series_list *out,
    int64_t limit, int64_t cursor);
void store_series_list_release(struct store_series_list *);

/* The series with its patches.  ERR_NOTFOUND. */
int store_series_get(struct store *, struct store_series_row *out, int64_t id);
/* The /series/{id} page's read: the series, the pairs measuring its tip
 * and its patches.  ERR_NOTFOUND. */
int store_web_series(struct store *, struct store_series_row *out, int64_t id);
void store_series_release(struct store_series_row *);

#endif
