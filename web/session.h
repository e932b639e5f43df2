#ifndef WEB_SESSION_H
#define WEB_SESSION_H

/*
 * Admin sessions of the dashboard, in memory: logging in with the admin
 * token makes a session with a random id (the HttpOnly, SameSite=Strict
 * cookie) and a random CSRF token (a hidden field of every form, checked
 * on POST).  A restart logs everyone out, which is fine for a handful of
 * admins.  Thread-safe; ids come from getrandom(2).
 */
#include <stddef.h>
#include <stdint.h>

#define SESSION_ID_LEN 64 /* hex characters (32 random bytes) */
#define SESSION_MAX 256   /* the oldest is dropped past this */
#define SESSION_TTL (12 * 3600)

struct session_table;

struct session_table *session_table_new(void);   /* never NULL */
void session_table_free(struct session_table *); /* NULL ok */

/*
 * Creates a session; id and csrf get SESSION_ID_LEN hex characters and a
 * NUL.  0, or -1 when no randomness could be had.
 */
int session_create(struct session_table *, char id[SESSION_ID_LEN + 1],
    char csrf[SESSION_ID_LEN + 1], int64_t now);
/* 0 and csrf for a live session id, else ERR_NOTFOUND. */
int session_lookup(struct session_table *, const char *id,
    char csrf[SESSION_ID_LEN + 1], int64_t now);
void session_drop(struct session_table *, const char *id);

/* Fills out with 2 * nbytes random hex characters and a NUL; 0 or -1. */
int session_random_hex(char *out, size_t nbytes);
/* Constant-time string equality (for tokens); 1 equal, 0 not. */
int session_equal(const char *, const char *);

#endif
