/*
 * store.h - the data store: every read and write the service makes, as named
 * operations on records (the repository). The SQL behind them is written
 * once, in src/store/, one file per aggregate, over the SQL port of db.h.
 *
 * This header is the store's whole interface: it declares the store's
 * lifetime and includes the aggregates' parts (identity.h, catalog.h,
 * citas.h, fotos.h, outbox.h, transfer.h, informes.h, cuenta.h, espera.h), which are not included
 * alone.
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

/* --- whether a read still holds ------------------------------------------------ *
 * Where the database can tell cheaply whether anything was committed since
 * a moment (SQLite: its wal-index header and the writer's journal, see
 * db_ops.mark) and BARBERIA_MEMO allows it, a read can be marked before it
 * runs and asked later whether anything it depends on has changed since:
 * exact, never a wrong "unchanged". A write says what it may change
 * (anything, by default; a booking only its client's appointments;
 * bookkeeping - the outbox, intents, leases, sign-in counters, photo
 * records, new sessions - nothing a marked read depends on), and a commit
 * by any other process changes everything. Elsewhere (PostgreSQL) nothing
 * can be marked. The store remembers verified sessions this way
 * (store_session_principal); memo/memo.h remembers the API's answers. */

/* What a read depends on, besides bookkeeping. */
enum store_depends {
    STORE_DEPENDS_SHARED,  /* the shared data: catalog, schedules, profiles, users, sessions */
    STORE_DEPENDS_CLIENT,  /* that and one client's appointments */
    STORE_DEPENDS_CLIENTS, /* that and every client's appointments */
};

/* A moment of the store, taken before a read. */
struct store_mark {
    struct db_mark db;
};

/* Whether reads can be marked at all (SQLite, BARBERIA_MEMO not 0). */
bool store_marks(const struct store *st);
/* OUT: *m, the moment now of a read that depends on `on` (cliente_id: the
 * client, for STORE_DEPENDS_CLIENT). False when no mark can be taken now
 * (then the read is not to be remembered). Only where store_marks. */
bool store_mark(struct store *st, enum store_depends on, const char *cliente_id,
                struct store_mark *m);
/* Whether nothing the read marked m depends on was committed since. */
bool store_unchanged(struct store *st, const struct store_mark *m);

#include "identity.h"
#include "catalog.h"
#include "citas.h"
#include "fotos.h"
#include "outbox.h"
#include "transfer.h"
#include "informes.h"
#include "cuenta.h"
#include "espera.h"
#include "whatsapp.h"
#include "avisos.h"
#include "clientes.h"

#endif
