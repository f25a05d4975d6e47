/*
 * db.h - the SQL port: what the repository (the store's files beside it)
 * needs from a relational database, as an ops table chosen once at start.
 *
 * The repository writes its SQL once, with `?` placeholders, in the dialect
 * that SQLite and PostgreSQL share; an adapter translates what differs
 * (placeholders, how a write transaction starts, how writers are serialised)
 * and owns the schema (DDL differs more than DML).
 *
 * A `struct db` is a pool of connections to one database; a transaction or a
 * statement runs on one leased `struct db_conn`. Both are thread-safe in the
 * usual sense: the pool may be shared, a leased connection belongs to the
 * thread that leased it until it is released.
 */
#ifndef BR_DB_H
#define BR_DB_H

#include "../util/err.h"

#include <stdint.h>

enum db_type { DB_NULL, DB_INT, DB_REAL, DB_TEXT };

#define DB_STAMP_SIZE 48 /* bytes of a stamp (see db_ops.mark) */

/* What a write transaction may change, as far as the answers the
 * repository remembers go (db_ops.mark): everything (the default), nothing
 * any remembered answer reads (bookkeeping: the outbox, object intents,
 * leases, sign-in counters, photo records, new sessions), or what belongs
 * to one key (a client's appointments: db_touch_key of her id). */
#define DB_TOUCH_ALL  UINT64_C(0)
#define DB_TOUCH_NONE UINT64_MAX
/* Not a write's touch but a read's (db_ops.mark): it depends on what every
 * key's writes change (every client's appointments: the free slots of a
 * day), so any keyed write changes it. */
#define DB_TOUCH_EVERY_KEY (UINT64_MAX - 1)

/* The touch key of a string (FNV-1a, never one of the three values above). */
static inline uint64_t db_touch_key(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h == DB_TOUCH_ALL || h == DB_TOUCH_NONE || h == DB_TOUCH_EVERY_KEY ? 1 : h;
}

/* A moment of the database, taken before a read (db_ops.mark), for asking
 * later whether what the read saw still holds (db_ops.unchanged). */
struct db_mark {
    unsigned char stamp[DB_STAMP_SIZE];
    uint64_t all;     /* the adapter's count of changes to everything */
    uint64_t key;     /* DB_TOUCH_NONE: the read depends on no key; DB_TOUCH_EVERY_KEY: on all */
    uint64_t key_gen; /* the adapter's count of changes to key (to any key) */
};

/* A parameter or a column value. Text is borrowed: a parameter's text must
 * outlive the exec call; a column's text lives until the row callback
 * returns. */
struct db_val {
    enum db_type type;
    int64_t i;
    double d;
    const char *s; /* DB_TEXT: not necessarily NUL-terminated, see n */
    size_t n;
};

static inline struct db_val db_null(void)
{
    return (struct db_val){.type = DB_NULL};
}
static inline struct db_val db_int(int64_t i)
{
    return (struct db_val){.type = DB_INT, .i = i};
}
static inline struct db_val db_real(double d)
{
    return (struct db_val){.type = DB_REAL, .d = d};
}
/* NULL text becomes SQL NULL. */
static inline struct db_val db_text(const char *s)
{
    if (!s) return db_null();
    size_t n = 0;
    while (s[n])
        n++;
    return (struct db_val){.type = DB_TEXT, .s = s, .n = n};
}

/* Called once per result row with ncols values; a non-BR_OK return stops
 * the statement and becomes exec's result. */
typedef br_err (*db_row_fn)(void *ud, const struct db_val *cols, int ncols);

struct db_conn;
struct db;

/* A write transaction's body: runs its statements on c (with exec) and
 * returns BR_OK to keep them, anything else to undo them. */
typedef br_err (*db_tx_fn)(struct db *db, struct db_conn *c, void *ud);

/* Base of every adapter's pool struct. */
struct db {
    const struct db_ops *ops;
};

/* How a pool is sized and bounded. A value <= 0 takes the default. */
struct db_pool_opts {
    int size;         /* connections (default 8) */
    int wait_ms;      /* longest wait for a free connection (default 5000) */
    int lock_wait_ms; /* longest wait for another writer's lock (default 10000) */
    int ping_ms;      /* bound on ping() (default 1000) */
};

struct db_ops {
    const char *name;
    /* Opens a pool of connections to target (a file path or a URL). */
    br_err (*open)(const char *target, const struct db_pool_opts *o, struct db **out);
    void (*close)(struct db *db);
    /* Creates or upgrades the schema; safe to run from several processes. */
    br_err (*migrate)(struct db *db);
    /* Checks that the database answers, within ping_ms whatever the pool
     * and the writers are doing: it has a connection of its own. BR_BUSY
     * when it could not tell in time. */
    br_err (*ping)(struct db *db);
    /* Leases a connection, waiting at most wait_ms for one to be free:
     * then BR_BUSY "Servicio ocupado" (with a retry hint). */
    br_err (*acquire)(struct db *db, struct db_conn **out);
    void (*release)(struct db *db, struct db_conn *c);
    /* Starts a transaction that will write: on SQLite it takes the write
     * lock at once (BEGIN IMMEDIATE), so a check-then-write cannot race. */
    br_err (*begin)(struct db_conn *c);
    /* Starts a read-only transaction that sees one snapshot of the
     * database for all its statements, however long it lasts. */
    br_err (*begin_read)(struct db_conn *c);
    br_err (*commit)(struct db_conn *c);
    void (*rollback)(struct db_conn *c);
    /* Runs fn inside a write transaction and returns once what it wrote is
     * durable (or undone): BR_OK when fn returned BR_OK and the commit
     * succeeded, else fn's error (or the commit's) with nothing of fn's
     * kept. The adapter chooses the connection. It may commit several
     * callers' transactions at once (SQLite: one writer thread runs the
     * waiting ones back to back, each under its own SAVEPOINT, then commits
     * and syncs once - group commit), so fn must not wait on anything but
     * the database. Callers are served in the order they came. touch says
     * what fn may change (DB_TOUCH_ALL when in doubt): an adapter that
     * remembers (mark) counts it once the commit is in. */
    br_err (*write)(struct db *db, db_tx_fn fn, void *ud, uint64_t touch);
    /* Inside a transaction: serialises every writer that locks the same key
     * until the transaction ends (a no-op where begin() already serialises
     * all writers). */
    br_err (*lock)(struct db_conn *c, const char *key);
    /* Runs one statement. sql must be a string constant (adapters cache
     * prepared statements by it). fn may be NULL. OUT: *changes (may be
     * NULL), the rows a write touched. A unique-key violation gives
     * BR_CONFLICT; a lock another writer held past lock_wait_ms BR_BUSY
     * "Servicio ocupado"; other failures BR_STORE with the database's
     * message. (begin() and commit() fail the same ways.) */
    /* Optional (NULL where the database has its own tools: pg_dump): copies
     * the whole database, consistently, into a new file at path while
     * others go on using it (backup_to), or replaces the database's whole
     * content with such a copy (restore_from). */
    br_err (*backup_to)(struct db *db, const char *path);
    br_err (*restore_from)(struct db *db, const char *path);
    br_err (*exec)(struct db_conn *c, const char *sql, const struct db_val *params, int nparams,
                   db_row_fn fn, void *ud, int64_t *changes);
    /* Optional (NULL: exec is used): inside write()'s transaction, runs a
     * statement whose outcome the transaction does not read. The adapter
     * may send it without waiting (PostgreSQL's pipeline): its error then
     * comes back from a later exec or from the commit, and the transaction
     * fails as a whole, so use it only where any failure of the statement
     * means the same thing for the caller. */
    br_err (*exec_later)(struct db_conn *c, const char *sql, const struct db_val *params,
                         int nparams);
    /* Optional (NULL: the adapter cannot tell cheaply; then nothing is
     * remembered): mark takes a moment of the database before a read that
     * depends on everything a DB_TOUCH_ALL write may change and, unless key
     * is DB_TOUCH_NONE, on what writes touching key change (every keyed
     * write, for DB_TOUCH_EVERY_KEY). unchanged says,
     * later, whether nothing the read depends on was committed since: true
     * only when no commit at all came since the mark (of any connection, in
     * any process), or when every commit since came through this pool's
     * write() with a touch that spares the read. Exact: never true after a
     * change the read could have seen. mark is false when it cannot be
     * taken now. */
    bool (*mark)(struct db *db, uint64_t key, struct db_mark *m);
    bool (*unchanged)(struct db *db, const struct db_mark *m);
    /* Optional (NULL: acquire, exec, release): runs one read-only
     * statement on a pooled connection and sees everything committed before
     * the call. The adapter may keep a connection's snapshot open between
     * calls for as long as nothing was committed since it was taken,
     * sparing the start and end of a read transaction. */
    br_err (*read)(struct db *db, const char *sql, const struct db_val *params, int nparams,
                   db_row_fn fn, void *ud);
};

extern const struct db_ops db_sqlite_ops;
extern const struct db_ops db_pg_ops;

#endif
