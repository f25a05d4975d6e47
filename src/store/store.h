/*
 * store.h - the data store: every read and write the service makes, as named
 * operations on records (the repository). The SQL behind them is written
 * once, in src/store/, one file per aggregate, over the SQL port of db.h.
 *
 * This header is the store's whole interface: it declares the store's
 * lifetime and includes the aggregates' parts (identity.h, catalog.h,
 * citas.h, fotos.h, outbox.h, transfer.h), which are not included alone.
 *
 * The records (struct cita, struct perfil...) are the domain's, in
 * domain/records.h. Ownership: a record filled by a *_get function owns its
 * strings; release them with the matching *_clear. A record handed to a visitor callback is
 * borrowed: its strings live until the callback returns.
 *
 * Errors: BR_NOTFOUND when the named thing does not exist, BR_CONFLICT when a
 * write clashes with existing data (as documented per function), BR_STORE
 * with the database's own message for anything else.
 *
 * Thread-safety: a struct store may be used from any number of threads.
 */
#ifndef BR_STORE_H
#define BR_STORE_H

#include "../domain/records.h"
#include "../util/err.h"
#include "db.h"

struct config;
struct store;

/* Placed after the parameter list of every function that changes data
 * (inserts, updates, deletes, the schema). Only the core, and the identity
 * provider beside it, call them; the handlers (src/api/) and the commands
 * (src/cli/) read straight from the store but write through the core. */
#define STORE_WRITE /* changes data: called from core only (scripts/check-layers) */

/* --- lifetime ------------------------------------------------------------ */

/* Opens the store the configuration names (SQLite in data_dir unless
 * database_url is set) with a pool of pool_size connections, bounded by * cfg->db_wait_ms and
 * db_lock_wait_ms (an operation that cannot get a connection, or the write lock, in time fails with
 * BR_BUSY "Servicio ocupado") and cfg->health_timeout_ms (store_ping). Does not migrate. OUT: *out,
 * closed with store_close(). */
br_err store_open(const struct config *cfg, int pool_size, struct store **out) WARN_UNUSED;
void store_close(struct store *st);
br_err store_migrate(struct store *st) STORE_WRITE WARN_UNUSED;
br_err store_ping(struct store *st) WARN_UNUSED;
/* "sqlite" or "postgresql". */
const char *store_backend(const struct store *st);

/* True when the database holds no user, barber or service (for --demo). */
br_err store_is_empty(struct store *st, bool *empty) WARN_UNUSED;

/* --- query plans (for tests) ---------------------------------------------------- */

typedef br_err (*store_plan_fn)(void *ud, const char *name, const char *plan);
/* Hands the plan the database chose for each statement the API runs over
 * growing tables (on SQLite the detail lines of EXPLAIN QUERY PLAN, one a
 * line), by name: "overlap", "citas_by_cliente", "citas_by_cliente_estado",
 * "citas_by_estado", "citas_all", "fotos_count", "fotos_each", "usuarios".
 * Lets a test prove that none of them scans a whole table or sorts. */
br_err store_query_plans(struct store *st, store_plan_fn fn, void *ud) WARN_UNUSED;

/* --- answers remembered while nothing they read changed ---------------------- *
 * Where the database can tell cheaply whether anything was committed since
 * a moment (SQLite: its wal-index header and the writer's journal, see
 * db_ops.mark), the store remembers a few read-only answers and hands them
 * back for as long as nothing they read has changed: exact, never stale. A
 * write says what it may change (anything, by default; a booking only its
 * client's listing, and the free slots of every day; bookkeeping nothing
 * remembered), and a commit by any other process drops them all. Elsewhere (PostgreSQL) nothing is
 * remembered and every read goes to the database. Verified sessions are
 * remembered the same way inside store_session_principal. */
enum store_memo { STORE_MEMO_BARBEROS, STORE_MEMO_SERVICIOS, STORE_MEMO_N };

#define STORE_MEMO_TAG 40  /* room for a tag (an ETag) with its NUL */
#define STORE_MEMO_KEY 200 /* room for a listing's key with its NUL */

struct store_memo_ticket {
    struct db_mark mark; /* the database's moment before the read */
    bool marked;
    char key[STORE_MEMO_KEY];
};

/* A copy of the answer remembered under slot when nothing it read changed
 * since: true, *text (owned by the caller, len bytes) and tag. Else false,
 * and *t is what store_memo_put needs once the answer has been read afresh. */
bool store_memo_get(struct store *st, enum store_memo slot, struct store_memo_ticket *t,
                    char **text, size_t *len, char tag[STORE_MEMO_TAG]);
/* Remembers text (copied) and tag under slot, as of t. */
void store_memo_put(struct store *st, enum store_memo slot, const struct store_memo_ticket *t,
                    const char *text, size_t len, const char *tag);

/* Whether answers are remembered at all (not on PostgreSQL). */
bool store_remembers(const struct store *st);
/* A client's own listing of appointments, as store_memo_get: remembered
 * under her id and query (what else the answer depends on: the filters and
 * the page), until her appointments, any profile, barber or service change.
 * Answers longer than 16 KiB are not remembered. */
bool store_listing_get(struct store *st, const char *client_id, const char *query,
                       struct store_memo_ticket *t, char **text, size_t *len);
void store_listing_put(struct store *st, const struct store_memo_ticket *t, const char *text,
                       size_t len);
/* The free slots of a day, as store_memo_get: remembered under key
 * (everything the answer depends on besides the database and the clock),
 * until any appointment, barber, service, schedule or absence changes, and
 * only while the clock is within the span given to store_slots_put: a copy
 * when now_ms is in it. Answers longer than 32 KiB are not remembered. */
bool store_slots_get(struct store *st, const char *key, int64_t now_ms, struct store_memo_ticket *t,
                     char **text, size_t *len);
/* Remembers text as of t, for the clock's span [from_ms, until_ms). */
void store_slots_put(struct store *st, const struct store_memo_ticket *t, int64_t from_ms,
                     int64_t until_ms, const char *text, size_t len);

#include "identity.h"
#include "catalog.h"
#include "citas.h"
#include "fotos.h"
#include "outbox.h"
#include "transfer.h"

#endif
