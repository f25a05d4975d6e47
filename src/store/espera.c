/*
 * espera.c - the links' signing key and the waiting list (see
 * store/espera.h).
 */
#include "store_int.h"

#include <stdio.h>

/* --- keys --------------------------------------------------------------------------- */

struct clave_args {
    const char *nombre, *candidate;
    char *out;
    size_t n;
    bool found;
};

static br_err clave_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct clave_args *a = ud;
    const char *v = text_or_empty(&c[0]);
    if (strlen(v) >= a->n) return err_set(BR_STORE, "a stored key does not fit its field");
    snprintf(a->out, a->n, "%s", v);
    a->found = true;
    return BR_OK;
}

static br_err clave_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct clave_args *a = ud;
    a->found = false;
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    struct db_val pi[] = {db_text(a->nombre), db_text(a->candidate), db_text(now)};
    br_err rc = EXEC(db, c,
                     "INSERT INTO claves (nombre, valor, created_at) VALUES (?, ?, ?) "
                     "ON CONFLICT (nombre) DO NOTHING",
                     pi, NULL, NULL, NULL);
    struct db_val ps[] = {db_text(a->nombre)};
    if (!rc) rc = EXEC(db, c, "SELECT valor FROM claves WHERE nombre = ?", ps, clave_row, a, NULL);
    if (!rc && !a->found) rc = err_set(BR_STORE, "the key %s was not stored", a->nombre);
    return rc;
}

br_err store_clave(struct store *st, const char *nombre, const char *candidate, char *out, size_t n)
{
    struct clave_args a = {nombre, candidate, out, n, false};
    /* read first: once made, starting writes nothing */
    br_err rc = run(st, "SELECT valor FROM claves WHERE nombre = ?", DB_ARGS(db_text(nombre)),
                    clave_row, &a, NULL);
    if (rc || a.found) return rc;
    return in_tx_as(st, DB_TOUCH_NONE, clave_tx, &a);
}

struct gen_row {
    bool found;
    int64_t gen;
};

static br_err gen_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct gen_row *g = ud;
    g->found = true;
    g->gen = as_int(&c[0]);
    return BR_OK;
}

br_err store_enlace_gen(struct store *st, const char *cita_id, int64_t *gen)
{
    struct gen_row g = {false, 0};
    br_err rc = run(st,
                    "SELECT coalesce((SELECT e.gen FROM enlaces_cliente e WHERE e.cliente_id = "
                    "c.cliente_id), 0) FROM citas c WHERE c.id = ?",
                    DB_ARGS(db_text(cita_id)), gen_row, &g, NULL);
    *gen = g.gen;
    return rc ? rc : g.found ? BR_OK : err_set(BR_NOTFOUND, "no such cita");
}

/* See store_int.h. */
br_err appointment_links_end(struct db *db, struct db_conn *c, const char *cliente_id,
                             const char *now)
{
    struct db_val p[] = {db_text(cliente_id), db_text(now)};
    return EXEC(db, c,
                "INSERT INTO enlaces_cliente (cliente_id, gen, updated_at) VALUES (?, 1, ?) "
                "ON CONFLICT (cliente_id) DO UPDATE SET gen = enlaces_cliente.gen + 1, "
                "updated_at = excluded.updated_at",
                p, NULL, NULL, NULL);
}

/* --- the waiting list ------------------------------------------------------------- */

struct add_args {
    const struct espera *e;
    const char *today;
    int max;
};

static br_err add_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct add_args *a = ud;
    const struct espera *e = a->e;
    br_err rc = client_turn(db, c, e->cliente_id);
    if (!rc) rc = lock_on(db, c, "espera", e->cliente_id);
    if (rc) return rc;
    int64_t held = 0;
    struct db_val pc[] = {db_text(e->cliente_id), db_text(a->today)};
    rc = EXEC(db, c, "SELECT count(*) FROM lista_espera WHERE cliente_id = ? AND fecha >= ?", pc,
              one_int, &held, NULL);
    if (rc) return rc;
    bool dup = false;
    if (e->barbero_id[0]) {
        struct db_val pd[] = {db_text(e->cliente_id), db_text(e->fecha), db_text(e->servicio_id),
                              db_text(e->barbero_id)};
        rc = EXEC(db, c,
                  "SELECT 1 FROM lista_espera WHERE cliente_id = ? AND fecha = ? AND "
                  "servicio_id = ? AND barbero_id = ? LIMIT 1",
                  pd, one_flag, &dup, NULL);
    } else {
        struct db_val pd[] = {db_text(e->cliente_id), db_text(e->fecha), db_text(e->servicio_id)};
        rc = EXEC(db, c,
                  "SELECT 1 FROM lista_espera WHERE cliente_id = ? AND fecha = ? AND "
                  "servicio_id = ? AND barbero_id IS NULL LIMIT 1",
                  pd, one_flag, &dup, NULL);
    }
    if (rc) return rc;
    if (dup) return err_set(BR_CONFLICT, "already waiting");
    if (held >= a->max) return err_set(BR_TOOLARGE, "too many entries");
    struct db_val pi[] = {db_text(e->id),          db_text(e->cliente_id),
                          db_text(e->servicio_id), db_text(e->barbero_id[0] ? e->barbero_id : NULL),
                          db_text(e->fecha),       db_text(e->created_at)};
    return EXEC(db, c,
                "INSERT INTO lista_espera (id, cliente_id, servicio_id, barbero_id, fecha, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                pi, NULL, NULL, NULL);
}

br_err store_espera_add(struct store *st, const struct espera *e, const char *today, int max)
{
    struct add_args a = {e, today, max};
    return in_tx_as(st, DB_TOUCH_NONE, add_tx, &a);
}

/* An entry from id, cliente_id, servicio_id, barbero_id, fecha,
 * created_at, then two texts (names, or e-mail and name) (borrowed). */
static bool espera_view(struct espera *e, const struct db_val *c, int n)
{
    memset(e, 0, sizeof *e);
    bool fits = true;
    COPY(e->id, &c[0]);
    COPY(e->cliente_id, &c[1]);
    COPY(e->servicio_id, &c[2]);
    COPY(e->barbero_id, &c[3]);
    COPY(e->fecha, &c[4]);
    COPY(e->created_at, &c[5]);
    if (n > 8) { /* a candidate: e-mail, name */
        e->email = text_or_null(&c[6]);
        e->nombre = text_or_null(&c[7]);
    } else {
        e->servicio_nombre = text_or_empty(&c[6]);
        e->barbero_nombre = text_or_null(&c[7]);
    }
    return fits;
}

LISTING(espera, struct espera, store_espera_fn, espera_view)

br_err store_espera_list(struct store *st, const char *cliente_id, const char *today, int limit,
                         store_espera_fn fn, void *ud)
{
    return espera_list(
        st,
        "SELECT e.id, e.cliente_id, e.servicio_id, e.barbero_id, e.fecha, e.created_at, "
        "s.nombre, b.nombre FROM lista_espera e "
        "LEFT JOIN servicios s ON s.id = e.servicio_id "
        "LEFT JOIN barberos b ON b.id = e.barbero_id "
        "WHERE e.cliente_id = ? AND e.fecha >= ? ORDER BY e.fecha, e.created_at, e.id "
        "LIMIT ?",
        DB_ARGS(db_text(cliente_id), db_text(today), db_int(limit)), fn, ud);
}

/* An entry's notices go with it (also where foreign keys are not enforced). */
static const char sql_avisos_orphans[] =
    "DELETE FROM lista_espera_avisos WHERE NOT EXISTS "
    "(SELECT 1 FROM lista_espera e WHERE e.id = lista_espera_avisos.entrada_id)";

struct delete_args {
    const char *id, *cliente_id, *today;
    int64_t changes;
};

static br_err delete_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct delete_args *a = ud;
    a->changes = 0;
    br_err rc;
    if (a->id) {
        struct db_val p[] = {db_text(a->id), db_text(a->cliente_id)};
        rc = EXEC(db, c, "DELETE FROM lista_espera WHERE id = ? AND cliente_id = ?", p, NULL, NULL,
                  &a->changes);
    } else {
        struct db_val p[] = {db_text(a->today)};
        rc = EXEC(db, c, "DELETE FROM lista_espera WHERE fecha < ?", p, NULL, NULL, &a->changes);
    }
    if (!rc && a->changes) rc = db->ops->exec(c, sql_avisos_orphans, NULL, 0, NULL, NULL, NULL);
    return rc;
}

br_err store_espera_delete(struct store *st, const char *id, const char *cliente_id)
{
    struct delete_args a = {id, cliente_id, NULL, 0};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, delete_tx, &a);
    if (!rc && a.changes == 0) rc = err_set(BR_NOTFOUND, "no such entry");
    return rc;
}

br_err store_espera_existe(struct store *st, const char *id, bool *found)
{
    *found = false;
    return run(st, "SELECT 1 FROM lista_espera WHERE id = ?", DB_ARGS(db_text(id)), one_flag, found,
               NULL);
}

br_err store_espera_sweep(struct store *st, const char *today, int64_t *removed)
{
    struct delete_args a = {NULL, NULL, today, 0};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, delete_tx, &a);
    *removed = a.changes;
    return rc;
}

br_err store_espera_candidatas(struct store *st, const char *desde, const char *hasta,
                               const char *barbero_id, int limit, store_espera_fn fn, void *ud)
{
#define CAND_SQL                                                                                   \
    "SELECT e.id, e.cliente_id, e.servicio_id, e.barbero_id, e.fecha, e.created_at, u.email, "     \
    "p.nombre, 1 FROM lista_espera e JOIN auth_users u ON u.id = e.cliente_id "                    \
    "LEFT JOIN perfiles p ON p.id = e.cliente_id WHERE e.fecha >= ? AND e.fecha <= ? "
    if (barbero_id) {
        return espera_list(
            st,
            CAND_SQL "AND (e.barbero_id IS NULL OR e.barbero_id = ?) "
                     "ORDER BY e.created_at, e.id LIMIT ?",
            DB_ARGS(db_text(desde), db_text(hasta), db_text(barbero_id), db_int(limit)), fn, ud);
    }
    return espera_list(st, CAND_SQL "ORDER BY e.created_at, e.id LIMIT ?",
                       DB_ARGS(db_text(desde), db_text(hasta), db_int(limit)), fn, ud);
#undef CAND_SQL
}

/* --- freed slots ------------------------------------------------------------------ */

br_err espera_liberacion_insert(struct db *db, struct db_conn *conn,
                                const struct espera_liberacion *l)
{
    struct db_val p[] = {db_text(l->id),
                         db_text(l->barbero_id[0] ? l->barbero_id : NULL),
                         db_text(l->inicio[0] ? l->inicio : NULL),
                         db_text(l->fin[0] ? l->fin : NULL),
                         db_text(l->desde[0] ? l->desde : NULL),
                         db_text(l->hasta[0] ? l->hasta : NULL),
                         db_text(l->created_at)};
    return EXEC(db, conn,
                "INSERT INTO espera_liberaciones (id, barbero_id, inicio, fin, desde, hasta, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                p, NULL, NULL, NULL);
}

static br_err liberacion_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct espera_liberacion *l = ud;
    bool fits = true;
    COPY(l->id, &c[0]);
    COPY(l->barbero_id, &c[1]);
    COPY(l->inicio, &c[2]);
    COPY(l->fin, &c[3]);
    COPY(l->desde, &c[4]);
    COPY(l->hasta, &c[5]);
    COPY(l->created_at, &c[6]);
    return fits ? BR_OK : too_long();
}

struct take_args {
    const char *now, *lease;
    struct espera_liberacion *l;
};

static br_err take_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct take_args *a = ud;
    memset(a->l, 0, sizeof *a->l);
    br_err rc = db->ops->lock(c, "espera_liberaciones");
    if (rc) return rc;
    struct db_val p[] = {db_text(a->now)};
    rc = EXEC(db, c,
              "SELECT id, barbero_id, inicio, fin, desde, hasta, created_at "
              "FROM espera_liberaciones WHERE locked_until IS NULL OR locked_until <= ? "
              "ORDER BY created_at, id LIMIT 1",
              p, liberacion_row, a->l, NULL);
    if (rc) return rc;
    if (!a->l->id[0]) return err_set(BR_NOTFOUND, "no freed slot waits");
    struct db_val u[] = {db_text(a->lease), db_text(a->l->id)};
    return EXEC(db, c, "UPDATE espera_liberaciones SET locked_until = ? WHERE id = ?", u, NULL,
                NULL, NULL);
}

br_err store_espera_liberacion_take(struct store *st, const char *now, const char *lease_until,
                                    struct espera_liberacion *l)
{
    /* read first: with nothing waiting (nearly always) nothing is written */
    bool waiting = false;
    br_err rc = run(st,
                    "SELECT 1 FROM espera_liberaciones WHERE locked_until IS NULL OR "
                    "locked_until <= ? LIMIT 1",
                    DB_ARGS(db_text(now)), one_flag, &waiting, NULL);
    if (!rc && !waiting) rc = err_set(BR_NOTFOUND, "no freed slot waits");
    struct take_args a = {now, lease_until, l};
    if (!rc) rc = in_tx_as(st, DB_TOUCH_NONE, take_tx, &a);
    if (rc) memset(l, 0, sizeof *l);
    return rc;
}

br_err store_espera_liberacion_release(struct store *st, const char *id, const char *at)
{
    return run_write_aside(st, "UPDATE espera_liberaciones SET locked_until = ? WHERE id = ?",
                           DB_ARGS(db_text(at), db_text(id)), NULL);
}

struct avisar_args {
    const char *liberacion_id;
    const struct espera_aviso *v;
    int n, max;
    int *queued;
};

static br_err avisar_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct avisar_args *a = ud;
    *a->queued = 0; /* the adapter may run this again (a deadlock) */
    br_err rc = BR_OK;
    for (int i = 0; !rc && i < a->n && *a->queued < a->max; i++) {
        const struct espera_aviso *v = &a->v[i];
        /* removed meanwhile: nobody to tell; her other entry (a barber
         * and "any barber" the same day) told her of this slot: once is enough */
        bool live = false;
        struct db_val pe[] = {db_text(v->entrada_id), db_text(v->barbero_id), db_text(v->inicio)};
        rc = EXEC(db, c,
                  "SELECT 1 FROM lista_espera e WHERE e.id = ? AND NOT EXISTS (SELECT 1 FROM "
                  "lista_espera_avisos a JOIN lista_espera o ON o.id = a.entrada_id WHERE "
                  "o.cliente_id = e.cliente_id AND o.id <> e.id AND a.barbero_id = ? AND "
                  "a.inicio = ?)",
                  pe, one_flag, &live, NULL);
        if (rc || !live) continue;
        int64_t changes = 0;
        struct db_val p[] = {db_text(v->entrada_id), db_text(v->barbero_id), db_text(v->inicio),
                             db_text(v->m.created_at)};
        rc = EXEC(db, c,
                  "INSERT INTO lista_espera_avisos (entrada_id, barbero_id, inicio, created_at) "
                  "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                  p, NULL, NULL, &changes);
        if (rc || changes == 0) continue; /* told of it before */
        rc = outbox_insert(db, c, &v->m);
        if (!rc) (*a->queued)++;
    }
    struct db_val pd[] = {db_text(a->liberacion_id)};
    if (!rc) rc = EXEC(db, c, "DELETE FROM espera_liberaciones WHERE id = ?", pd, NULL, NULL, NULL);
    return rc;
}

br_err store_espera_avisar(struct store *st, const char *liberacion_id,
                           const struct espera_aviso *v, int n, int max, int *queued)
{
    struct avisar_args a = {liberacion_id, v, n, max, queued};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, avisar_tx, &a);
    if (rc) *queued = 0;
    return rc;
}
