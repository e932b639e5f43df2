#ifndef DAEMON_STORE_INT_H
#define DAEMON_STORE_INT_H

/*
 * Inside the store only: what its entity files (store_alert.c, ...) need
 * of a connection.  Nothing outside daemon/store*.c includes this.
 */
#include <sqlite3.h>

#include "common/err.h"

struct store;

sqlite3 *store_db_(struct store *);
struct err *store_err_(struct store *);

#endif
