/*
 * restore.c - the checks of a backup's database before a restore (see
 * restore.h). The schema is compared with the one a fresh migration of an
 * empty in-memory database makes: a backup from an earlier version has
 * been migrated by then, and the migrations, run from any version, make
 * the same objects with the same SQL as from none.
 */
#include "restore.h"
#include "schema.h"
#include "store_int.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* A schema object: "type name table sql", the fields separated by \x1f. */
struct objects {
    char **v;
    size_t n;
};

static void objects_free(struct objects *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->v[i]);
    free(o->v);
}

static br_err list_objects(sqlite3 *h, const char *what, struct objects *o)
{
    /* SQLite's statistics tables (ANALYZE, PRAGMA optimize) are its own */
    static const char sql[] = "SELECT type || char(31) || name || char(31) || tbl_name || char(31) "
                              "|| coalesce(sql, '') FROM sqlite_master "
                              "WHERE name NOT IN ('sqlite_stat1', 'sqlite_stat4') ORDER BY 1";
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
    size_t cap = 0;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (o->n == cap) {
            cap = cap ? 2 * cap : 64;
            o->v = xrealloc(o->v, cap * sizeof *o->v);
        }
        const char *t = (const char *)sqlite3_column_text(st, 0);
        o->v[o->n++] = xstrdup(t ? t : "");
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return err_set(BR_STORE, "cannot read the schema of %s: %s", what, sqlite3_errmsg(h));
    return BR_OK;
}

/* "the trigger zz" for an object's entry (into buf). */
static const char *object_name(const char *entry, char *buf, size_t cap)
{
    const char *sep = strchr(entry, '\x1f');
    const char *name = sep ? sep + 1 : entry;
    const char *end = strchr(name, '\x1f');
    int tlen = sep ? (int)(sep - entry) : 0;
    int nlen = end ? (int)(end - name) : (int)strlen(name);
    snprintf(buf, cap, "the %.*s %.*s", tlen, entry, nlen, name);
    return buf;
}

br_err store_restore_check(const char *path)
{
    sqlite3 *fresh = NULL, *bk = NULL;
    struct objects want = {0}, got = {0};
    br_err rc = BR_OK;
    if (sqlite3_open_v2(":memory:", &fresh, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        rc = err_set(BR_STORE, "cannot open an in-memory database");
    for (int i = 0; !rc && i < schema_sqlite_count; i++)
        if (sqlite3_exec(fresh, schema_sqlite[i], NULL, NULL, NULL) != SQLITE_OK)
            rc = err_set(BR_STORE, "migration %d: %s", i + 1, sqlite3_errmsg(fresh));
    if (!rc) rc = list_objects(fresh, "a new database", &want);
    if (!rc && sqlite3_open_v2(path, &bk, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        rc = err_set(BR_IO, "cannot open %s: %s", path, bk ? sqlite3_errmsg(bk) : "");
    if (!rc) rc = list_objects(bk, path, &got);
    /* both sorted: the first entry that is not in the other list */
    size_t i = 0, j = 0;
    while (!rc && (i < want.n || j < got.n)) {
        int c = i == want.n ? 1 : j == got.n ? -1 : strcmp(want.v[i], got.v[j]);
        char name[300];
        if (c < 0)
            rc = err_set(BR_INVALID,
                         "the database of this backup lacks %s that this version's schema has "
                         "(or holds another definition of it)",
                         object_name(want.v[i], name, sizeof name));
        else if (c > 0)
            rc = err_set(BR_INVALID,
                         "the database of this backup holds %s, which this version's schema "
                         "does not (a backup holds no schema of its own)",
                         object_name(got.v[j], name, sizeof name));
        i++;
        j++;
    }
    objects_free(&want);
    objects_free(&got);
    sqlite3_close(bk);
    sqlite3_close(fresh);
    return rc;
}

br_err store_restore_forget_processes(struct store *st)
{
    br_err rc = run_write_aside(st, "DELETE FROM obj_intents", NULL, 0, NULL);
    if (!rc) rc = run_write_aside(st, "DELETE FROM proc_leases", NULL, 0, NULL);
    return rc;
}
