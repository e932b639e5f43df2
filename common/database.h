#ifndef COMMON_DATABASE_H
#define COMMON_DATABASE_H

/*
 * Where the store's database is (the daemon's `database:`): a SQLite
 * file's path, or a PostgreSQL server's URI ("postgresql://...",
 * "postgres://...") or libpq conninfo ("host=... dbname=...": it starts
 * with a keyword and '=', which no path the daemon is given does).
 */

/* 1 when where names a PostgreSQL database, not a file. */
int database_is_pg(const char *where);

#endif
