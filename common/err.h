#ifndef COMMON_ERR_H
#define COMMON_ERR_H

#include "common/caps.h"

/*
 * An error slot embedded in a handle.  The first message set stays until
 * err_clear(), as curl's failf does: the most specific error, set deepest
 * in the call chain, is the one the caller sees.
 */
struct err {
	int set;
	char msg[CAP_ERRMSG];
};

/* Expected outcomes, returned as negative codes; -1 is plain failure. */
#define ERR_FAIL -1
#define ERR_NOTFOUND -2
#define ERR_EXISTS -3
#define ERR_INVALID -4
#define ERR_AGAIN -5
#define ERR_TOOBIG -6
#define ERR_AUTH -7
#define ERR_FORBIDDEN -8
#define ERR_CONFLICT -9

void err_clear(struct err *);
/* Sets the message unless one is set already; returns -1 for tail calls. */
int err_set(struct err *, const char *, ...)
    __attribute__((format(printf, 2, 3)));
/* Same, returning the given code. */
int err_setc(struct err *, int, const char *, ...)
    __attribute__((format(printf, 3, 4)));
const char *err_msg(const struct err *); /* "" when unset */

#endif
