/*
 * db_sqlite_copy.c - whole copies of an embedded database (see
 * db_sqlite_copy.h).
 */
#include "db_sqlite_copy.h"

br_err sqlite_open_file(const char *path, bool create, sqlite3 **out)
{
    *out = NULL;
    int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, out, flags, NULL) == SQLITE_OK) return BR_OK;
    return err_set(BR_IO, "cannot %s %s: %s", create ? "create" : "open", path,
                   *out ? sqlite3_errmsg(*out) : "");
}

br_err sqlite_copy(sqlite3 *from, sqlite3 *to, const char *what)
{
    sqlite3_backup *b = sqlite3_backup_init(to, "main", from, "main");
    if (!b) return err_set(BR_STORE, "%s: %s", what, sqlite3_errmsg(to));
    int rc;
    do {
        rc = sqlite3_backup_step(b, -1);
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(10);
    } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) return err_set(BR_STORE, "%s: %s", what, sqlite3_errstr(rc));
    return BR_OK;
}
