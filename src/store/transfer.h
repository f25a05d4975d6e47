/*
 * store/transfer.h - part of the store (include store.h): a shop's data as
 * rows (export, import) and whole-database copies (backup, restore)
 * (src/store/transfer.c).
 */
#ifndef BR_STORE_TRANSFER_H
#define BR_STORE_TRANSFER_H

#include "store.h"

/* --- a shop's data as rows (export, import) ------------------------------------------- */

/* The tables that hold a shop's data, in an order that inserting satisfies
 * (what a row refers to comes before it), with their columns: the same
 * names and meaning on every backend. Transient state (sign-in throttling,
 * object intents, process leases) is not part of it. */
struct store_table {
    const char *name;
    const char *cols; /* "id, email, ..." */
    int ncols;
};
/* OUT: *out, the tables (static). Returns how many. */
int store_tables(const struct store_table **out);

/* One value of a row: the store's own form, so that what moves rows in and
 * out (core/transfer.c) never touches the SQL port. Text is s, n bytes,
 * not necessarily NUL-terminated, borrowed as each function says. */
enum store_type { STORE_NULL, STORE_INT, STORE_REAL, STORE_TEXT };
struct store_value {
    enum store_type type;
    int64_t i;     /* STORE_INT */
    double d;      /* STORE_REAL */
    const char *s; /* STORE_TEXT */
    size_t n;
};
#define STORE_ROW_MAX 32 /* values in a row at most */

/* What a column of a table holds (see store/transfer.c, dump_tables): the
 * same on every backend, whatever type the SQL schema gives it. */
enum store_kind {
    STORE_KIND_TEXT,
    STORE_KIND_UUID,   /* text: an id in the lowercase canonical form */
    STORE_KIND_TIME,   /* text: YYYY-MM-DDTHH:MM:SS.sssZ, a real instant */
    STORE_KIND_DATE,   /* text: YYYY-MM-DD, a real day */
    STORE_KIND_INT,    /* STORE_INT */
    STORE_KIND_BOOL,   /* STORE_INT, 0 or 1 */
    STORE_KIND_NUMBER, /* STORE_INT or STORE_REAL */
    STORE_KIND_WORD,   /* text: one of words (a domain list: records.h) */
    STORE_KIND_KEY,    /* text: 2 x CLAVE_BYTES lowercase hex digits */
};
struct store_column {
    enum store_kind kind;
    bool null;                /* NULL allowed (the schema has no NOT NULL on it) */
    const char *const *words; /* STORE_KIND_WORD: the values it takes, NULL-terminated */
};
/* The kind of the column named by the n bytes at column in table (an
 * index of store_tables()). OUT: *out. False when the table has no such
 * column. */
bool store_column_kind(int table, const char *column, size_t n, struct store_column *out);
#define STORE_WRONG_MAX 256 /* bytes of what store_value_wrong says, with its NUL */
/* NULL when v is a value of column c's kind; else what is wrong with it
 * ("not a time (YYYY-MM-DDTHH:MM:SS.sssZ, UTC)", "not one of confirmada,
 * cancelada, ..."), static text or written into why. */
const char *store_value_wrong(const struct store_column *c, const struct store_value *v,
                              char why[STORE_WRONG_MAX]);

/* Called once per row with the table's index and its ncols values (times
 * in the API's form, ids lowercase, on every backend), borrowed until fn
 * returns. */
typedef br_err (*store_dump_fn)(void *ud, int table, const struct store_value *cols, int n);
/* Hands over every row of every table, table by table in store_tables()
 * order, each in key order, all from one snapshot (a read transaction),
 * read page by page: memory stays flat whatever the size. */
br_err store_dump(struct store *st, store_dump_fn fn, void *ud) WARN_UNUSED;

/* Supplies the next row to load: OUT *table and the values (at most
 * STORE_ROW_MAX, their texts borrowed until the next call) and *n;
 * BR_NOTFOUND when there are no more. */
typedef br_err (*store_load_fn)(void *ud, int *table, struct store_value *cols, int *n);
/* Inserts every row next() supplies in one write transaction: all of them
 * or, on any failure, none. default_week: the rows come from before the
 * schedules (they hold no horarios), so every barber gets the default
 * week in the same transaction, as the migration gives it. */
br_err store_load(struct store *st, store_load_fn next, void *ud,
                  bool default_week) STORE_WRITE WARN_UNUSED;

/* BR_OK when the database makes its own backups (restore false) or
 * restores them (true); else BR_CONFIG, naming the tools to use instead. */
br_err store_backup_able(struct store *st, bool restore) WARN_UNUSED;
/* Copies the whole database into a new file at path, consistently, while
 * the service goes on (SQLite's online backup); BR_CONFIG on a backend
 * with tools of its own (PostgreSQL: pg_dump). */
br_err store_backup(struct store *st, const char *path) WARN_UNUSED;
/* Replaces the database's content with the copy at path (a store_backup
 * file), then migrates it to this version's schema. BR_CONFIG as above. */
br_err store_restore(struct store *st, const char *path) STORE_WRITE WARN_UNUSED;

#endif
