#ifndef WEB_ROWS_H
#define WEB_ROWS_H

/*
 * The JSON of the typed store's rows (store/jobs.h, pairs.h, ...), in
 * the shapes of docs/API.md: the store returns structs, and the HTTP
 * edge makes the JSON here.  Each returns a new reference.
 */
#include "common/json.h"

struct store_host;
struct store_hosts;
struct store_jobs;
struct store_job_detail;
struct store_comparison;
struct store_pair;
struct store_alert;
struct store_alert_more;
struct store_claimed;
struct kfacts_pair;

/* {"id", "name", "labels", "inventory", "state", "current_job",
 * "last_seen", "registered", "quarantined", "quarantined_at"} */
json_t *rows_host_json(const struct store_host *);
/* {"hosts": [...], "next_cursor": "N"} (next_cursor absent at the end) */
json_t *rows_hosts_json(const struct store_hosts *);
/* {"jobs": [...], "next_cursor": "N"} (next_cursor absent at the end) */
json_t *rows_jobs_json(const struct store_jobs *);
/* GET /api/v1/jobs/{id}: a job of the list with "runs_wanted" (the
 * list's "runs"), "runs": [{"index", "status", "host", "duration_s",
 * "error", "attempt", "created", "metrics": [{"name", "value", "unit",
 * "better"}], "profile", "host_state"}] (the documents when stored) and
 * "log" (the tail; "" when it is not UTF-8). */
json_t *rows_job_detail_json(const struct store_job_detail *);
/* {"metric", "base_median", "cand_median", "change_pct", "ci_low",
 * "ci_high", "p", "verdict", "p_adjusted", "min_effect_pct", "unit",
 * "better", "n_base", "n_cand", "final", "note"} (unknowns null) */
json_t *rows_comparison_json(const struct store_comparison *);
/* {"id", "name", "point", "host", "deprioritised", "created", "suspect",
 * "base": JOB, "candidate": JOB, "comparisons": [...]} */
json_t *rows_pair_json(const struct store_pair *);
/* Sets "kernel" in pair's "base" and "candidate" objects (kfacts_json:
 * {"build_id", "release", "config_sha256", "boot", "cached", "runs"})
 * and "kernel_warning" (null, or its text) from k. */
void rows_pair_kernels_json(json_t *pair, const struct kfacts_pair *k);
/* One delivery of GET /api/v1/alerts[/{id}]: {"id", "kind", "state",
 * "delivery", "target", "subject", "attempts", "last_error", "sent",
 * "next_try", "created", "followup", "commit", "benchmark", "host"}, and
 * "payload" when payload is not 0. */
json_t *rows_alert_json(const struct store_alert *, int payload);
/* What public replies and pages show of an alert's target and last
 * error: a webhook URL as its scheme and host only (for Slack-style
 * hooks the path is the secret), no URL's credentials.  Allocated. */
char *rows_alert_target(const struct store_alert *);
char *rows_alert_error(const struct store_alert *);
/* {"alerts": [...], "next_cursor": ID or null (null unless the page is
 * full: n is limit, 50 when limit is 0)} */
json_t *rows_alerts_json(
    const struct store_alert *, size_t n, const struct store_alert_more *);
/* The reply of POST /api/v1/jobs/claim: {"job": JOB, "lease_expires": T},
 * JOB the stored spec ({} unless an object) with "id", "pair_id",
 * "role", "attempt", "runs", "max_runs", "round" and "rounds" (1) when
 * the job has rounds, "done_runs" and "instance" set. */
json_t *rows_claim_json(const struct store_claimed *);
#endif
