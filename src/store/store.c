/*
 * store.c - the store's lifetime (open, close, migrate, ping) and what it
 * shares across aggregates; each aggregate's statements are in a file of
 * its own beside this one (identity.c, catalog.c, citas.c, cambios.c,
 * fotos.c, outbox.c, transfer.c, plans.c), over the SQL port (see store.h,
 * db.h, store_int.h).
 *
 * Each operation leases a connection for just as long as it needs it; a
 * transaction stays on one connection. No statement is ever built from
 * input: values travel as bound parameters and every SQL text is a constant
 * (the listing's variants are assembled once from constant fragments).
 */
#include "store_int.h"
#include "../config.h"

/* --- lifetime ------------------------------------------------------------------ */

/* The SQL adapters, by the scheme of BARBERIA_DATABASE_URL. Without a URL
 * the embedded SQLite file in the data folder. */
static const struct {
    const char *scheme;
    const struct db_ops *ops;
} adapters[] = {
    {"postgresql://", &db_pg_ops},
    {"postgres://", &db_pg_ops},
};

br_err store_open(const struct config *cfg, int pool_size, struct store **out)
{
    const struct db_ops *ops = &db_sqlite_ops;
    char *target = NULL;
    if (cfg->database_url) {
        for (size_t i = 0; i < ARRAY_LEN(adapters) && !target; i++)
            if (!strncmp(cfg->database_url, adapters[i].scheme, strlen(adapters[i].scheme))) {
                ops = adapters[i].ops;
                target = xstrdup(cfg->database_url);
            }
        if (!target)
            return err_set(BR_CONFIG,
                           "BARBERIA_DATABASE_URL: unknown scheme (expected postgresql://...)");
    } else {
        target = xasprintf("%s/barberia.db", cfg->data_dir);
    }
    struct db *db = NULL;
    struct db_pool_opts o = {.size = pool_size,
                             .wait_ms = cfg->db_wait_ms,
                             .lock_wait_ms = cfg->db_lock_wait_ms,
                             .ping_ms = cfg->health_timeout_ms};
    br_err rc = ops->open(target, &o, &db);
    free(target);
    if (rc) return rc;
    struct store *st = xcalloc(1, sizeof *st);
    st->db = db;
    pthread_mutex_init(&st->sessions_mu, NULL);
    pthread_mutex_init(&st->names_mu, NULL);
    st->names_on = cfg->memo;
    /* reads can be marked (and sessions remembered) where the database
     * can tell (db_ops.mark) and BARBERIA_MEMO allows it: store_marks */
    if (db->ops->mark && cfg->memo) st->sessions = xcalloc(SESSION_MEMO, sizeof *st->sessions);
    *out = st;
    return BR_OK;
}

void store_close(struct store *st)
{
    if (!st) return;
    st->db->ops->close(st->db);
    if (st->sessions)
        for (size_t i = 0; i < SESSION_MEMO; i++)
            principal_clear(&st->sessions[i].p);
    free(st->sessions);
    pthread_mutex_destroy(&st->sessions_mu);
    names_unref(st->names);
    pthread_mutex_destroy(&st->names_mu);
    free(st);
}

/* --- whether a read still holds (see store.h) ------------------------------------- */

bool store_marks(const struct store *st)
{
    return st->sessions != NULL;
}

bool store_mark(struct store *st, enum store_depends on, const char *cliente_id,
                struct store_mark *m)
{
    uint64_t key = on == STORE_DEPENDS_CLIENT    ? db_touch_key(cliente_id)
                   : on == STORE_DEPENDS_CLIENTS ? DB_TOUCH_EVERY_KEY
                                                 : DB_TOUCH_NONE;
    return mark_now(st, key, &m->db);
}

bool store_unchanged(struct store *st, const struct store_mark *m)
{
    return unchanged(st, &m->db);
}

br_err store_migrate(struct store *st)
{
    return st->db->ops->migrate(st->db);
}

br_err store_ping(struct store *st)
{
    return st->db->ops->ping(st->db);
}

const char *store_backend(const struct store *st)
{
    return st->db->ops->name;
}

br_err store_is_empty(struct store *st, bool *empty)
{
    int64_t n = 0;
    br_err rc = run(st,
                    "SELECT (SELECT count(*) FROM auth_users) + (SELECT count(*) FROM barberos) + "
                    "(SELECT count(*) FROM servicios)",
                    NULL, 0, one_int, &n, NULL);
    if (!rc) *empty = n == 0;
    return rc;
}
