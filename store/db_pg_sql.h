#ifndef STORE_DB_PG_SQL_H
#define STORE_DB_PG_SQL_H

/*
 * sql with each ?NNN (and each bare ?, the greatest number so far plus
 * one, as SQLite numbers them) as $NNN, outside string literals, quoted
 * names and comments; *np the greatest number.  SQLite's planner hints
 * PostgreSQL does not read are dropped: "INDEXED BY index", and the ON
 * of a "CROSS JOIN t ON ..." makes it a JOIN.  Malloc'd.
 */
char *db_pg_rewrite(const char *sql, int *np);

#endif
