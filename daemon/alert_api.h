#ifndef DAEMON_ALERT_API_H
#define DAEMON_ALERT_API_H

/* JSON of the alert routes, from daemon/store_alert.h structs. */
#include "common/json.h"
#include "daemon/store_alert.h"

/* {"alerts": [...], "next_cursor"}: 0, or the store's error code. */
int alert_api_list(
    json_t **out, struct store *, const struct store_alert_filter *);
/* One alert with its payload: 0, ERR_NOTFOUND or -1. */
int alert_api_get(json_t **out, struct store *, int64_t id);

#endif
