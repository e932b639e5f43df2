#ifndef WEB_ROWS_SERIES_H
#define WEB_ROWS_SERIES_H

/*
 * The JSON of the typed series reads (store/series.h), with
 * the keys and values of the API (docs/API.md):
 * tests/unit/web_test.c compares the bytes with tests/data/web/series.json.
 * Each returns a new reference.
 */
#include "common/json.h"

struct store_series_row;
struct store_series_list;
struct series_versus;

/* GET /api/v1/series: {"series": [{id, inbox, message_id, title,
 * version, total, found, author, time, state, error, tree, branch,
 * base_sha, ref, commit_id, commit_sha, created, updated, branch_tag,
 * supersedes, fallback, verdicts}], "next_cursor": "N"} (next_cursor
 * absent at the end). */
json_t *rows_series_list_json(const struct store_series_list *);
/* store_series_get's: {"series": {... as in the list, "patches":
 * [{seq, message_id, subject, author, date, commit_id, sha, applied_by,
 * verdicts}]}}. */
json_t *rows_series_json(const struct store_series_row *);
/* store_series_page_get' (GET /api/v1/series/{id} before its comparisons and
 * vN vs vN-1): {"series": {id, inbox, title, version, total, author,
 * time, state, error, commit_id, commit_sha, base_sha, branch, found,
 * tree, branch_tag, supersedes, fallback}, "pairs": [ID...], "patches":
 * [...]}. */
json_t *rows_series_page_json(const struct store_series_row *);
/* series_versus' (daemon/series_versus.h), the series reply's
 * "versus_previous": {"previous": {"id", "version"} | null, "version",
 * "rows": [{"host", "job", "point", "metric", "unit", "better",
 * "previous_median", "median", "change_pct", "ci_low", "ci_high", "p",
 * "verdict", "n_previous", "n"}]} (unknown figures null). */
json_t *rows_series_versus_json(const struct series_versus *);

struct store_series_latency;
struct series_stage_sum;

/* A series' "latency": {"posted", "seen", "applied", "first_run",
 * "last_run", "verdict", "mailed": time | null, "stages": {"pickup",
 * "apply", "queue", "measure", "verdict", "mail", "total": seconds |
 * null}, "summary": text} (daemon/series_latency.h). */
json_t *rows_series_latency_json(const struct store_series_latency *);
/* GET /api/v1/latency: {"series": N, "since": time, "stages": [{"stage",
 * "from", "to", "n", "median_s", "p90_s"}]} (null figures when n is 0). */
json_t *rows_latency_summary_json(
    const struct series_stage_sum *, size_t nseries, int64_t since);

struct store_mail_commands;

/* A series' "commands" (store/mail_commands.h), oldest first: [{"id",
 * "sender", "command", "line", "message_id", "at", "job", "commit",
 * "outcome": "done" | "refused", "reason", "pairs": [ID...], "series":
 * ID | null}]. */
json_t *rows_mail_commands_json(const struct store_mail_commands *);
/* store_mail_skipped_list's: [{inbox, message_id, subject, reason,
 * at}], newest first. */
struct store_mail_skipped_list;
json_t *rows_mail_skipped_json(const struct store_mail_skipped_list *);

#endif
