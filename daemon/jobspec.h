#ifndef DAEMON_JOBSPEC_H
#define DAEMON_JOBSPEC_H

/*
 * What a runner is handed for one side of one matrix point (the "job"
 * object of the claim reply, docs/API.md), built from a job config.
 * Shared by the submit route and the triggers, so both make the same
 * spec: identical specs are how a base job is recognised for reuse.
 */
#include <stdint.h>

#include "common/json.h"
#include "config/config.h"

/*
 * params (may be NULL): an object of strings overriding the point's
 * values.  tree (may be NULL): {"url", "commit"} for a job on a commit
 * (borrowed; the spec takes its own reference).  Never NULL; the caller
 * decrefs.
 */
json_t *jobspec_build(const struct job_config *, const struct cfg_point *,
    const json_t *params, json_t *tree, int64_t runs, int64_t max_runs);
/* A strlist as a JSON array of strings (never NULL). */
json_t *jobspec_strlist(const struct strlist *);

#endif
