#ifndef DAEMON_BISECT_API_H
#define DAEMON_BISECT_API_H

/* JSON of the bisection routes (docs/API.md), from store_bisect.h
 * structs. */
#include <stdint.h>

#include "common/json.h"

struct store;
struct store_bisect;

/* The bisection as an object (its steps too when steps). */
json_t *bisect_api_json(struct store *, const struct store_bisect *, int steps);
/* {"bisection": {...with steps}}: 0, ERR_NOTFOUND or -1. */
int bisect_api_get(json_t **out, struct store *, int64_t id);
/* {"bisections": [...], "next_cursor"} newest first, older than cursor
 * (0: from the newest); next_cursor only after a full page: 0 or -1. */
int bisect_api_list(
    json_t **out, struct store *, int64_t limit, int64_t cursor);

#endif
