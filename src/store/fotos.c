/*
 * fotos.c - the store's photos (see store/fotos.h): their records, counted
 * against the cap per cita and tipo and against the uploader's quota; the
 * durable intents that name every object a crash could orphan; the
 * processes' leases.
 */
#include "store_int.h"

/* --- fotos ------------------------------------------------------------------------ */

#define SQL_FOTOS_COUNT "SELECT count(*) FROM fotos_cita WHERE cita_id = ? AND tipo = ?"
static const char sql_fotos_count[] = SQL_FOTOS_COUNT;

br_err store_fotos_count(struct store *st, const char *cita_id, const char *tipo, int64_t *count)
{
    *count = 0;
    return run(st, sql_fotos_count, DB_ARGS(db_text(cita_id), db_text(tipo)), one_int, count, NULL);
}

/* One uploader's photos, each counted in whole blocks (STORE_FOTO_BLOCK),
 * summed from the index fotos_cita_cliente alone. */
#define SQL_FOTOS_QUOTA                                                                            \
    "SELECT CAST(coalesce(sum((bytes + 4095) / 4096), 0) AS bigint) FROM fotos_cita "              \
    "WHERE cliente_id = ?"
static const char sql_fotos_quota[] = SQL_FOTOS_QUOTA;
_Static_assert(STORE_FOTO_BLOCK == 4096, "SQL_FOTOS_QUOTA counts in blocks of 4096 bytes");

br_err store_fotos_quota_used(struct store *st, const char *cliente_id, int64_t *bytes)
{
    *bytes = 0;
    int64_t blocks = 0;
    br_err rc = run(st, sql_fotos_quota, DB_ARGS(db_text(cliente_id)), one_int, &blocks, NULL);
    if (!rc) *bytes = blocks * STORE_FOTO_BLOCK;
    return rc;
}

struct foto_insert {
    const struct foto *f;
    int64_t bytes; /* the object's size */
    int cap;
    int64_t quota;                /* 0: none */
    const struct obj_intent *put; /* nullable */
};

static const char sql_intent_clear[] = "DELETE FROM obj_intents WHERE id = ? AND instance = ?";

static br_err foto_insert_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct foto_insert *a = ud;
    const struct foto *f = a->f;
    /* the uploader's turn first (client_turn, before any other lock): an
     * account closed since her request's session was checked stores
     * nothing more (BR_UNAUTH), on her appointments or another's */
    br_err rc = client_turn(db, c, f->cliente_id);
    if (!rc) rc = lock_on(db, c, "fotos", f->cita_id);
    if (rc) return rc;
    /* refused since the upload's first look (her consent withdrawn, her
     * account closed): checked again under her consent's lock, so that a
     * withdrawal either comes first and refuses this photo, or comes after
     * and finds it to remove */
    br_id cliente = "";
    bool refused = false;
    struct db_val pcita[] = {db_text(f->cita_id)};
    rc = EXEC(db, c, "SELECT cliente_id FROM citas WHERE id = ?", pcita, one_id, cliente, NULL);
    if (!rc && cliente[0]) rc = lock_on(db, c, LOCK_CONSENTIMIENTO, cliente);
    if (!rc) rc = EXEC(db, c, SQL_FOTOS_REFUSED, pcita, one_flag, &refused, NULL);
    if (!rc && refused) rc = err_set(BR_FORBIDDEN, "refused");
    if (rc) return rc;
    if (a->put) {
        /* the intent must still be ours: a sweeper that took it over may
         * be removing the object right now */
        int64_t gone = 0;
        struct db_val pi[] = {db_text(a->put->id), db_text(a->put->instance)};
        rc = EXEC(db, c, sql_intent_clear, pi, NULL, NULL, &gone);
        if (rc) return rc;
        if (gone != 1) return err_set(BR_STORE, "the upload's intent was taken over");
    }
    int64_t n = 0;
    struct db_val pc[] = {db_text(f->cita_id), db_text(f->tipo)};
    rc = EXEC(db, c, sql_fotos_count, pc, one_int, &n, NULL);
    if (rc) return rc;
    if (n >= a->cap) return err_set(BR_CONFLICT, "full");
    if (a->quota > 0) {
        /* the uploader's uploads take turns too (on PostgreSQL; SQLite's
         * writers always do), always after the cita's lock: never the
         * other way round, so two locks never wait for each other */
        rc = lock_on(db, c, "fotos-cliente", f->cliente_id);
        if (rc) return rc;
        int64_t blocks = 0;
        struct db_val pq[] = {db_text(f->cliente_id)};
        rc = EXEC(db, c, sql_fotos_quota, pq, one_int, &blocks, NULL);
        if (rc) return rc;
        if (blocks * STORE_FOTO_BLOCK + store_foto_charge(a->bytes) > a->quota)
            return err_set(BR_TOOLARGE, "quota");
    }
    struct db_val p[] = {db_text(f->id),         db_text(f->cita_id), db_text(f->cliente_id),
                         db_text(f->tipo),       db_text(f->url),     db_text(f->storage_path),
                         db_text(f->created_at), db_int(a->bytes)};
    rc =
        EXEC(db, c, "INSERT INTO fotos_cita (" FOTO_COLS ", bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
             p, NULL, NULL, NULL);
    /* a unique storage_path clash is a store failure here, not "full" */
    if (rc == BR_CONFLICT) rc = BR_STORE;
    return rc;
}

br_err store_foto_insert_capped(struct store *st, const struct foto *f, int cap)
{
    struct foto_insert a = {f, 0, cap, 0, NULL};
    return in_tx_as(st, DB_TOUCH_NONE, foto_insert_tx, &a);
}

br_err store_foto_insert_put(struct store *st, const struct foto *f, int64_t bytes, int cap,
                             int64_t quota, const struct obj_intent *put)
{
    struct foto_insert a = {f, bytes, cap, quota, put};
    return in_tx_as(st, DB_TOUCH_NONE, foto_insert_tx, &a);
}

LISTING(foto, struct foto, store_foto_fn, foto_view)

static void foto_own(struct foto *f)
{
    f->tipo = xstrdup(f->tipo);
    f->url = xstrdup(f->url);
    f->storage_path = xstrdup(f->storage_path);
}

OWNED_ROW(foto_decode, struct foto, foto_view, foto_own)

br_err store_foto_get_owned(struct store *st, const char *id, const char *cliente_id,
                            struct foto *f)
{
    memset(f, 0, sizeof *f);
    return run_one(st, "SELECT " FOTO_COLS " FROM fotos_cita WHERE id = ? AND cliente_id = ?",
                   DB_ARGS(db_text(id), db_text(cliente_id)), foto_decode, f, "no such photo");
}

static const char sql_intent_add[] =
    "INSERT INTO obj_intents (id, bucket, key, op, node, pid, instance, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)";

static br_err intent_insert(struct db *db, struct db_conn *c, const struct obj_intent *in)
{
    struct db_val p[] = {db_text(in->id),       db_text(in->bucket),    db_text(in->key),
                         db_text(in->op),       db_text(in->node),      db_int(in->pid),
                         db_text(in->instance), db_text(in->created_at)};
    return EXEC(db, c, sql_intent_add, p, NULL, NULL, NULL);
}

/* The intent to remove its object (a->arg) is recorded with the deletion. */
static br_err foto_delete_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct row_args *a = ud;
    br_err rc = row_delete(db, c, "DELETE FROM fotos_cita WHERE id = ?", a->id, "no such photo");
    if (!rc) rc = intent_insert(db, c, a->arg);
    return rc;
}

br_err store_foto_delete(struct store *st, const char *id, const struct obj_intent *del)
{
    struct row_args a = {id, del};
    return in_tx_as(st, DB_TOUCH_NONE, foto_delete_tx, &a);
}

br_err store_foto_path_exists(struct store *st, const char *storage_path, bool *exists)
{
    *exists = false;
    return run(st, "SELECT 1 FROM fotos_cita WHERE storage_path = ?",
               DB_ARGS(db_text(storage_path)), one_flag, exists, NULL);
}

#define SQL_FOTOS_EACH                                                                             \
    "SELECT " FOTO_COLS " FROM fotos_cita WHERE cita_id = ? ORDER BY created_at, id"

br_err store_fotos_each(struct store *st, const char *cita_id, store_foto_fn fn, void *ud)
{
    return foto_list(st, SQL_FOTOS_EACH, DB_ARGS(db_text(cita_id)), fn, ud);
}

/* --- object intents and process leases ------------------------------------------------ */

static br_err intent_add_tx(struct db *db, struct db_conn *c, void *ud)
{
    return intent_insert(db, c, ud);
}

br_err store_intent_add(struct store *st, const struct obj_intent *in)
{
    return in_tx_as(st, DB_TOUCH_NONE, intent_add_tx, (void *)in);
}

br_err store_intent_clear(struct store *st, const char *id, const char *instance)
{
    return run_write_aside(st, sql_intent_clear, DB_ARGS(db_text(id), db_text(instance)), NULL);
}

br_err store_foto_forget_path(struct store *st, const char *storage_path)
{
    return run_write_aside(st, "DELETE FROM fotos_cita WHERE storage_path = ?",
                           DB_ARGS(db_text(storage_path)), NULL);
}

br_err store_intents_clear_all(struct store *st, const char *instance)
{
    return run_write_aside(st, "DELETE FROM obj_intents WHERE instance = ?",
                           DB_ARGS(db_text(instance)), NULL);
}

br_err store_intent_disown(struct store *st, const char *id, const char *instance)
{
    return run_write_aside(
        st, "UPDATE obj_intents SET instance = '', pid = 0 WHERE id = ? AND instance = ?",
        DB_ARGS(db_text(id), db_text(instance)), NULL);
}

br_err store_intent_take(struct store *st, const char *id, const char *old_instance,
                         const struct obj_intent *to)
{
    int64_t n = 0;
    br_err rc = run_write_aside(st,
                                "UPDATE obj_intents SET node = ?, pid = ?, instance = ? "
                                "WHERE id = ? AND instance = ?",
                                DB_ARGS(db_text(to->node), db_int(to->pid), db_text(to->instance),
                                        db_text(id), db_text(old_instance)),
                                &n);
    if (!rc && n != 1) rc = err_set(BR_NOTFOUND, "the intent is no longer there");
    return rc;
}

/* An object intent from its 8 columns (borrowed). */
static bool intent_view(struct obj_intent *in, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    COPY(in->id, &c[0]);
    in->bucket = (char *)text_or_empty(&c[1]);
    in->key = (char *)text_or_empty(&c[2]);
    in->op = (char *)text_or_empty(&c[3]);
    in->node = (char *)text_or_empty(&c[4]);
    in->pid = as_int(&c[5]);
    in->instance = (char *)text_or_empty(&c[6]);
    COPY(in->created_at, &c[7]);
    return fits;
}

LISTING(intent, struct obj_intent, store_intent_fn, intent_view)

br_err store_intents_each(struct store *st, store_intent_fn fn, void *ud)
{
    return intent_list(
        st,
        "SELECT id, bucket, key, op, node, pid, instance, created_at FROM obj_intents "
        "ORDER BY created_at, id",
        NULL, 0, fn, ud);
}

br_err store_lease_renew(struct store *st, const char *instance, const char *node, int64_t pid,
                         const char *now)
{
    return run_write_aside(
        st,
        "INSERT INTO proc_leases (instance, node, pid, started_at, heartbeat_at) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (instance) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
        DB_ARGS(db_text(instance), db_text(node), db_int(pid), db_text(now), db_text(now)), NULL);
}

br_err store_lease_live(struct store *st, const char *instance, const char *since, bool *live)
{
    *live = false;
    return run(st, "SELECT 1 FROM proc_leases WHERE instance = ? AND heartbeat_at >= ?",
               DB_ARGS(db_text(instance), db_text(since)), one_flag, live, NULL);
}

static bool lease_view(struct proc_lease *l, const struct db_val *c, int n)
{
    (void)n;
    *l = (struct proc_lease){text_or_empty(&c[0]), text_or_empty(&c[1]), as_int(&c[2]),
                             text_or_empty(&c[3])};
    return true;
}

LISTING(lease, struct proc_lease, store_lease_fn, lease_view)

br_err store_leases_each(struct store *st, const char *since, store_lease_fn fn, void *ud)
{
    return lease_list(st,
                      "SELECT instance, node, pid, heartbeat_at FROM proc_leases WHERE "
                      "heartbeat_at >= ? ORDER BY heartbeat_at DESC, instance",
                      DB_ARGS(db_text(since)), fn, ud);
}

br_err store_lease_end(struct store *st, const char *instance)
{
    return run_write_aside(st, "DELETE FROM proc_leases WHERE instance = ?",
                           DB_ARGS(db_text(instance)), NULL);
}

br_err store_leases_expire(struct store *st, const char *before)
{
    return run_write_aside(st, "DELETE FROM proc_leases WHERE heartbeat_at < ?",
                           DB_ARGS(db_text(before)), NULL);
}

const struct hot_stmt fotos_hot[] = {
    {"fotos_count", "EXPLAIN QUERY PLAN " SQL_FOTOS_COUNT, 2},
    {"fotos_quota", "EXPLAIN QUERY PLAN " SQL_FOTOS_QUOTA, 1},
    {"fotos_each", "EXPLAIN QUERY PLAN " SQL_FOTOS_EACH, 1},
    {NULL, NULL, 0},
};
