/*
 * avisos.c - what a barber is told (see store/avisos.h): the barber's
 * address and linked user, the notices queued with each change of an
 * appointment, and the private calendar feed.
 */
#include "store_int.h"

#include <stdio.h>

/* --- the barber's address and linked user ---------------------------------------------- */

void store_avisos_enable(struct store *st, bool on)
{
    st->avisos = on;
}

br_err contacto_patch(struct db *db, struct db_conn *conn, const char *barbero_id,
                      const struct barbero_patch *p)
{
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    struct db_val pk[] = {db_text(barbero_id), db_text(now)};
    br_err rc = EXEC(db, conn,
                     "INSERT INTO barbero_contactos (barbero_id, updated_at) VALUES (?, ?) "
                     "ON CONFLICT (barbero_id) DO NOTHING",
                     pk, NULL, NULL, NULL);
    if (!rc && p->set_email) {
        struct db_val v[] = {db_text(p->email), db_text(now), db_text(barbero_id)};
        rc = EXEC(db, conn,
                  "UPDATE barbero_contactos SET email = ?, updated_at = ? WHERE barbero_id = ?", v,
                  NULL, NULL, NULL);
    }
    /* his notices still waiting to leave go to the new address, or, with
     * none (a barber who left), nowhere: the old mailbox is no longer his */
    if (!rc && p->set_email && p->email && *p->email) {
        struct db_val v[] = {db_text(p->email), db_text(barbero_id)};
        rc = EXEC(db, conn,
                  "UPDATE mail_outbox SET recipient = ? WHERE status = 'pending' AND kind "
                  "IN " OUTBOX_AVISOS " AND cita_id IN (SELECT id FROM citas WHERE barbero_id = ?)",
                  v, NULL, NULL, NULL);
    } else if (!rc && p->set_email) {
        struct db_val v[] = {db_text(now), db_text(barbero_id)};
        rc = EXEC(db, conn,
                  "UPDATE mail_outbox SET status = 'skipped', last_error = 'el barbero ya no "
                  "tiene correo', done_at = ?, locked_until = NULL WHERE status = 'pending' AND "
                  "kind IN " OUTBOX_AVISOS " AND cita_id IN (SELECT id FROM citas WHERE "
                  "barbero_id = ?)",
                  v, NULL, NULL, NULL);
    }
    if (!rc && p->set_usuario && p->usuario_id) {
        bool taken = false;
        struct db_val v[] = {db_text(p->usuario_id), db_text(barbero_id)};
        rc = EXEC(db, conn,
                  "SELECT 1 FROM barbero_contactos WHERE usuario_id = ? AND barbero_id <> ?", v,
                  one_flag, &taken, NULL);
        if (!rc && taken) rc = err_set(BR_CONFLICT, "the user speaks for another barber");
    }
    if (!rc && p->set_usuario) {
        struct db_val v[] = {db_text(p->usuario_id), db_text(now), db_text(barbero_id)};
        rc = EXEC(db, conn,
                  "UPDATE barbero_contactos SET usuario_id = ?, updated_at = ? "
                  "WHERE barbero_id = ?",
                  v, NULL, NULL, NULL);
    }
    return rc;
}

br_err store_barbero_de_usuario(struct store *st, const char *user_id, br_id out)
{
    out[0] = '\0';
    br_err rc = run(st, "SELECT barbero_id FROM barbero_contactos WHERE usuario_id = ?",
                    DB_ARGS(db_text(user_id)), one_id, out, NULL);
    if (!rc && !out[0]) rc = err_set(BR_NOTFOUND, "no barber for the user");
    return rc;
}

/* --- the notices ------------------------------------------------------------------------- */

struct aviso_row {
    struct outbox_msg m;
    char *email, *cliente, *barbero, *servicio, *notas;
    bool found;
};

static br_err aviso_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct aviso_row *a = ud;
    bool fits = true;
    COPY(a->m.fecha_inicio, &c[5]);
    COPY(a->m.fecha_fin, &c[6]);
    if (!fits) return too_long();
    a->email = dup_or_null(&c[0]);
    a->cliente = dup_or_null(&c[1]);
    a->barbero = dup_or_null(&c[2]);
    a->servicio = dup_or_null(&c[3]);
    a->notas = dup_or_null(&c[4]);
    a->found = true;
    return BR_OK;
}

br_err aviso_insert(struct db *db, struct db_conn *conn, const char *cita_id, const char *kind,
                    const char *now)
{
    struct aviso_row a;
    memset(&a, 0, sizeof a);
    struct db_val p[] = {db_text(cita_id)};
    br_err rc = EXEC(db, conn,
                     "SELECT k.email, COALESCE(pf.nombre, ''), b.nombre, COALESCE(s.nombre, ''), "
                     "c.notas, c.fecha_inicio, c.fecha_fin FROM citas c "
                     "JOIN barbero_contactos k ON k.barbero_id = c.barbero_id "
                     "JOIN barberos b ON b.id = c.barbero_id "
                     "LEFT JOIN servicios s ON s.id = c.servicio_id "
                     "LEFT JOIN perfiles pf ON pf.id = c.cliente_id "
                     "WHERE c.id = ? AND k.email IS NOT NULL",
                     p, aviso_row, &a, NULL);
    if (!rc && a.found && a.email && *a.email) {
        uuid_v4(a.m.id);
        memcpy(a.m.cita_id, cita_id, sizeof a.m.cita_id);
        a.m.recipient = a.email;
        a.m.cliente_nombre = a.cliente && *a.cliente ? a.cliente : "Cliente";
        a.m.barbero_nombre = a.barbero;
        a.m.servicio_nombre = a.servicio;
        a.m.notas = a.notas;
        snprintf(a.m.created_at, sizeof a.m.created_at, "%s", now);
        a.m.kind = outbox_kind(kind);
        rc = outbox_insert(db, conn, &a.m);
    }
    free(a.email);
    free(a.cliente);
    free(a.barbero);
    free(a.servicio);
    free(a.notas);
    return rc;
}

/* --- the calendar feed ----------------------------------------------------------------- */

struct feed_set_args {
    const char *barbero_id, *hash, *now;
};

static br_err feed_set_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct feed_set_args *a = ud;
    br_err rc = barbero_exists(db, c, a->barbero_id);
    if (rc) return rc;
    struct db_val pi[] = {db_text(a->barbero_id), db_text(a->now)};
    rc = EXEC(db, c,
              "INSERT INTO barbero_contactos (barbero_id, updated_at) VALUES (?, ?) "
              "ON CONFLICT (barbero_id) DO NOTHING",
              pi, NULL, NULL, NULL);
    struct db_val pu[] = {db_text(a->hash), db_text(a->now), db_text(a->barbero_id)};
    if (!rc)
        rc = EXEC(db, c,
                  "UPDATE barbero_contactos SET feed_hash = ?, updated_at = ? WHERE barbero_id = ?",
                  pu, NULL, NULL, NULL);
    return rc;
}

br_err store_feed_set(struct store *st, const char *barbero_id, const char *hash, const char *now)
{
    struct feed_set_args a = {barbero_id, hash, now};
    return in_tx_as(st, DB_TOUCH_NONE, feed_set_tx, &a);
}

br_err store_feed_check(struct store *st, const char *barbero_id, const char *hash, bool *ok)
{
    *ok = false;
    return run(st, "SELECT 1 FROM barbero_contactos WHERE barbero_id = ? AND feed_hash = ?",
               DB_ARGS(db_text(barbero_id), db_text(hash)), one_flag, ok, NULL);
}

#define AVISO_COLS                                                                                 \
    "c.id, c.barbero_id, c.fecha_inicio, c.fecha_fin, c.created_at, COALESCE(pf.nombre, ''), "     \
    "COALESCE(b.nombre, ''), COALESCE(s.nombre, ''), c.notas, "                                    \
    "(SELECT count(*) FROM mail_outbox x WHERE x.cita_id = c.id AND x.kind IN " OUTBOX_AVISOS      \
    "), "                                                                                          \
    "pf.telefono, (SELECT count(*) FROM auth_users u WHERE u.id = c.cliente_id AND u.email NOT "   \
    "LIKE '" EMAIL_NINGUNO_PREFIX "%'), (SELECT count(*) FROM whatsapp_consentimientos w WHERE "   \
    "w.cliente_id = c.cliente_id AND w.retirado_en IS NULL)"
#define AVISO_FROM                                                                                 \
    " FROM citas c LEFT JOIN perfiles pf ON pf.id = c.cliente_id "                                 \
    "LEFT JOIN barberos b ON b.id = c.barbero_id LEFT JOIN servicios s ON s.id = c.servicio_id "

/* An appointment of a feed or a notice from AVISO_COLS (borrowed). */
static bool cita_aviso_view(struct cita_aviso *v, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    COPY(v->id, &c[0]);
    COPY(v->barbero_id, &c[1]);
    COPY(v->fecha_inicio, &c[2]);
    COPY(v->fecha_fin, &c[3]);
    COPY(v->created_at, &c[4]);
    v->cliente_nombre = text_or_empty(&c[5]);
    v->barbero_nombre = text_or_empty(&c[6]);
    v->servicio_nombre = text_or_empty(&c[7]);
    v->notas = text_or_null(&c[8]);
    v->secuencia = as_int(&c[9]);
    v->cliente_telefono = text_or_null(&c[10]);
    v->con_correo = as_int(&c[11]) > 0;
    v->con_whatsapp = as_int(&c[12]) > 0;
    return fits;
}

LISTING(cita_aviso, struct cita_aviso, store_cita_aviso_fn, cita_aviso_view)

/* a barber's live appointments never share a start: by start alone, from the index */
#define SQL_FEED                                                                                   \
    "SELECT " AVISO_COLS AVISO_FROM                                                                \
    "WHERE c.barbero_id = ? AND c.fecha_inicio >= ? AND c.fecha_inicio < ? AND "                   \
    "c.estado <> 'cancelada' ORDER BY c.fecha_inicio LIMIT ?"
#define SQL_AFECTADAS                                                                              \
    "SELECT " AVISO_COLS AVISO_FROM                                                                \
    "WHERE c.barbero_id = ? AND c.fecha_inicio >= ? AND c.fecha_inicio < ? AND "                   \
    "c.estado = 'confirmada' ORDER BY c.fecha_inicio LIMIT ?"
#define SQL_AFECTADAS_TIENDA                                                                       \
    "SELECT " AVISO_COLS AVISO_FROM                                                                \
    "WHERE c.fecha_inicio >= ? AND c.fecha_inicio < ? AND c.estado = 'confirmada' "                \
    "ORDER BY c.fecha_inicio, c.id LIMIT ?"

br_err store_feed_citas(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, int64_t limit, store_cita_aviso_fn fn, void *ud)
{
    return cita_aviso_list(
        st, SQL_FEED, DB_ARGS(db_text(barbero_id), db_text(desde), db_text(hasta), db_int(limit)),
        fn, ud);
}

/* --- days off and closures that meet appointments ----------------------------------------- */

static void ausencia_own(struct ausencia *x)
{
    x->motivo = xstrdup_or_null(x->motivo);
}

OWNED_ROW(ausencia_decode, struct ausencia, ausencia_view, ausencia_own)

br_err store_ausencia_get(struct store *st, const char *id, struct ausencia *a)
{
    memset(a, 0, sizeof *a);
    br_err rc = run_one(st, "SELECT " AUSENCIA_COLS " FROM ausencias WHERE id = ?",
                        DB_ARGS(db_text(id)), ausencia_decode, a, "no such absence");
    if (rc) {
        free(a->motivo);
        memset(a, 0, sizeof *a);
    }
    return rc;
}

br_err store_citas_afectadas(struct store *st, const char *barbero_id, const char *desde,
                             const char *hasta, const char *now, int64_t limit,
                             store_cita_aviso_fn fn, void *ud)
{
    const char *from = strcmp(desde, now) > 0 ? desde : now;
    if (barbero_id) {
        return cita_aviso_list(
            st, SQL_AFECTADAS,
            DB_ARGS(db_text(barbero_id), db_text(from), db_text(hasta), db_int(limit)), fn, ud);
    }
    return cita_aviso_list(st, SQL_AFECTADAS_TIENDA,
                           DB_ARGS(db_text(from), db_text(hasta), db_int(limit)), fn, ud);
}

const struct hot_stmt avisos_hot[] = {
    {"feed", "EXPLAIN QUERY PLAN " SQL_FEED, 4},
    {"afectadas", "EXPLAIN QUERY PLAN " SQL_AFECTADAS, 4},
    {"afectadas_tienda", "EXPLAIN QUERY PLAN " SQL_AFECTADAS_TIENDA, 3},
    {NULL, NULL, 0},
};
