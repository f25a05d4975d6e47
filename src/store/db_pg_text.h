/*
 * db_pg_text.h - text conversions of the PostgreSQL adapter (db_pg.c).
 */
#ifndef BR_DB_PG_TEXT_H
#define BR_DB_PG_TEXT_H

#include "db.h"

#include <libpq-fe.h>

#define DB_PG_TS_LEN 24 /* YYYY-MM-DDTHH:MM:SS.sssZ */

/* Scrubs, in place (buf of n bytes), a libpq message about connecting to
 * target of target's password ("***"), or of every quoted text ("...")
 * when target does not parse. */
void db_pg_scrub(const char *target, char *buf, size_t n);

/* The SQL with each `?` outside a quoted string as $1, $2... OUT:
 * *nparams. Caller frees. */
char *db_pg_translate(const char *sql, int *nparams);

/* A timestamp as PostgreSQL prints it in UTC with DateStyle ISO in the
 * API's form, into out. False when it is not one (a year past 9999, BC). */
bool db_pg_ts_canonical(const char *s, size_t n, char out[DB_PG_TS_LEN + 1]);

/* s (n bytes) as a text parameter: NUL-terminated, valid UTF-8, each bad
 * byte U+FFFD. Caller frees. */
char *db_pg_text_param(const char *s, size_t n);

/* Column col of row in r as the repository takes it: integers DB_INT,
 * floating and numeric DB_REAL, booleans 0/1, timestamps the API's form
 * (written into ts, which v then borrows), everything else text borrowed
 * from r. OUT: *v. */
br_err db_pg_column(const PGresult *r, int row, int col, char ts[DB_PG_TS_LEN + 1],
                    struct db_val *v);

#endif
