/*
 * db_sqlite_copy.h - whole copies of an embedded database through SQLite's
 * online backup, for barberia backup and restore (db_sqlite.c's backup_to
 * and restore_from).
 */
#ifndef BR_DB_SQLITE_COPY_H
#define BR_DB_SQLITE_COPY_H

#include "../util/err.h"

#include <sqlite3.h>
#include <stdbool.h>

/* Opens the database file at path to copy from (read-only) or into
 * (create: made when missing). OUT: *out, to sqlite3_close even on an
 * error. BR_IO when it cannot be opened. */
br_err sqlite_open_file(const char *path, bool create, sqlite3 **out) WARN_UNUSED;

/* Copies the database open on from over the one open on to, as one
 * snapshot of from (a read transaction, beside which WAL lets writers go
 * on), page by page; what names the copy in a message. BR_STORE when it
 * fails. */
br_err sqlite_copy(sqlite3 *from, sqlite3 *to, const char *what) WARN_UNUSED;

#endif
