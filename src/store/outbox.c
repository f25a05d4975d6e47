/*
 * outbox.c - the store's mail outbox (see store/outbox.h): messages queued
 * in the transaction of what they announce, claimed by one worker at a
 * time, retried, sent or dropped.
 */
#include "store_int.h"

/* --- mail outbox -------------------------------------------------------------------- */

/* The WhatsApp copy of m for its client, when her consent holds: to the
 * number she gave it for, with a fresh id. */
static br_err whatsapp_copy_insert(struct db *db, struct db_conn *conn, const struct outbox_msg *m)
{
    char tel[64] = "";
    struct db_val pc[] = {db_text(m->wa_cliente_id)};
    br_err rc = EXEC(db, conn,
                     "SELECT telefono FROM whatsapp_consentimientos WHERE cliente_id = ? AND "
                     "retirado_en IS NULL",
                     pc, one_text, tel, NULL);
    if (rc || !tel[0]) return rc;
    struct outbox_msg w = *m;
    uuid_v4(w.id);
    w.recipient = tel;
    w.canal = "whatsapp";
    w.wa_cliente_id = NULL;
    return outbox_insert(db, conn, &w);
}

/* Queues m, due at once; due_at (when set) is when it became due. Without
 * a recipient only its WhatsApp copy (wa_cliente_id) is queued. */
br_err outbox_insert(struct db *db, struct db_conn *conn, const struct outbox_msg *m)
{
    if (m->wa_cliente_id) {
        br_err rc = whatsapp_copy_insert(db, conn, m);
        if (rc || !m->recipient) return rc;
    }
    const char *due = m->due_at[0] ? m->due_at : NULL;
    struct db_val pm[] = {db_text(m->id),
                          db_text(m->cita_id),
                          db_text(m->recipient),
                          db_text(m->cliente_nombre),
                          db_text(m->barbero_nombre),
                          db_text(m->servicio_nombre),
                          db_text(m->fecha_inicio),
                          db_text(m->fecha_fin),
                          db_text(m->notas),
                          db_text(m->created_at),
                          db_text(m->created_at),
                          db_text(outbox_kind(m->kind)),
                          db_text(due),
                          db_text(m->enlace),
                          db_text(m->canal ? m->canal : "email"),
                          db_int(m->antelacion_min)};
    /* sent with the commit on PostgreSQL: its failure fails the write */
    return EXEC_LATER(db, conn,
                      "INSERT INTO mail_outbox (id, cita_id, recipient, cliente_nombre, "
                      "barbero_nombre, servicio_nombre, fecha_inicio, fecha_fin, notas, "
                      "created_at, status, attempts, next_attempt_at, kind, due_at, enlace, canal, "
                      "antelacion_min) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?)",
                      pm);
}

#define OUTBOX_COLS                                                                                \
    "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, fecha_inicio, "      \
    "fecha_fin, notas, created_at, status, attempts, next_attempt_at, last_error, kind, due_at, "  \
    "enlace, canal, antelacion_min, " OUTBOX_SECUENCIA

/* A message's place among the cita's messages of its stream (the .ics
 * SEQUENCE): a barber's notice among the barber's notices, a client's
 * message among hers on its channel. Counted from the rows themselves: the
 * same on every retry, one more for each change, with no column to keep in
 * step */
#define OUTBOX_ANTES(same_stream)                                                                  \
    "(SELECT count(*) FROM mail_outbox x WHERE x.cita_id = mail_outbox.cita_id AND " same_stream   \
    " AND (x.created_at < mail_outbox.created_at OR (x.created_at = mail_outbox.created_at AND "   \
    "x.id < mail_outbox.id)))"
#define OUTBOX_SECUENCIA                                                                           \
    "CASE WHEN kind IN " OUTBOX_AVISOS                                                             \
    " THEN " OUTBOX_ANTES("x.kind IN " OUTBOX_AVISOS) " ELSE " OUTBOX_ANTES(                       \
        "x.kind NOT IN " OUTBOX_AVISOS " AND x.canal = mail_outbox.canal") " END"

static bool outbox_view(struct outbox_msg *m, const struct db_val *c)
{
    bool fits = true;
    COPY(m->id, &c[0]);
    COPY(m->cita_id, &c[1]);
    m->recipient = (char *)text_or_empty(&c[2]);
    m->cliente_nombre = (char *)text_or_empty(&c[3]);
    m->barbero_nombre = (char *)text_or_empty(&c[4]);
    m->servicio_nombre = (char *)text_or_empty(&c[5]);
    COPY(m->fecha_inicio, &c[6]);
    COPY(m->fecha_fin, &c[7]);
    m->notas = (char *)text_or_null(&c[8]);
    COPY(m->created_at, &c[9]);
    m->status = (char *)text_or_empty(&c[10]);
    m->attempts = as_int(&c[11]);
    COPY(m->next_attempt_at, &c[12]);
    m->last_error = (char *)text_or_null(&c[13]);
    m->kind = outbox_kind(text_or_null(&c[14]));
    COPY(m->due_at, &c[15]);
    m->enlace = (char *)text_or_null(&c[16]);
    m->canal = outbox_canal(text_or_null(&c[17]));
    m->antelacion_min = as_int(&c[18]);
    m->secuencia = as_int(&c[19]);
    return fits;
}

struct outbox_cb {
    store_outbox_fn fn;
    void *ud;
    struct outbox_msg *out;
    bool found;
};

static br_err outbox_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct outbox_cb *a = ud;
    struct outbox_msg m;
    if (!outbox_view(&m, c)) return too_long();
    if (a->fn) return a->fn(a->ud, &m);
    *a->out = m;
    a->out->recipient = xstrdup(m.recipient);
    a->out->cliente_nombre = xstrdup(m.cliente_nombre);
    a->out->barbero_nombre = xstrdup(m.barbero_nombre);
    a->out->servicio_nombre = xstrdup(m.servicio_nombre);
    a->out->notas = xstrdup_or_null(m.notas);
    a->out->status = xstrdup(m.status);
    a->out->last_error = xstrdup_or_null(m.last_error);
    a->out->enlace = xstrdup_or_null(m.enlace);
    a->found = true;
    return BR_OK;
}

struct claim_args {
    const char *now, *lease;
    struct outbox_msg *m;
    bool found;
};

static br_err claim_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct claim_args *a = ud;
    br_err rc = db->ops->lock(c, "outbox");
    if (rc) return rc;
    struct outbox_cb cb = {.out = a->m};
    struct db_val p[] = {db_text(a->now), db_text(a->now)};
    rc = EXEC(db, c,
              "SELECT " OUTBOX_COLS " FROM mail_outbox WHERE status = 'pending' "
              "AND next_attempt_at <= ? AND (locked_until IS NULL OR locked_until <= ?) "
              "ORDER BY next_attempt_at, created_at LIMIT 1",
              p, outbox_row, &cb, NULL);
    if (rc || !cb.found) return rc;
    a->found = true;
    struct db_val u[] = {db_text(a->lease), db_text(a->m->id)};
    snprintf(a->m->claim, sizeof a->m->claim, "%s", a->lease);
    return EXEC(db, c,
                "UPDATE mail_outbox SET locked_until = ?, attempts = attempts + 1 WHERE id = ?", u,
                NULL, NULL, NULL);
}

/* See store_int.h. */
br_err outbox_claim_lost(void)
{
    return err_set(BR_CONFLICT, "its claim ran out: the next claim holds it, or it is done");
}

/* See store_int.h. */
br_err outbox_claimed_write(struct store *st, const char *sql, const struct db_val *p, int n)
{
    int64_t changed = 0;
    br_err rc = run_write_aside(st, sql, p, n, &changed);
    return !rc && changed == 0 ? outbox_claim_lost() : rc;
}

br_err store_outbox_claim(struct store *st, const char *now, const char *lease_until,
                          struct outbox_msg *m)
{
    memset(m, 0, sizeof *m);
    struct claim_args a = {now, lease_until, m, false};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, claim_tx, &a);
    if (!rc && !a.found) rc = err_set(BR_NOTFOUND, "nothing due");
    if (rc)
        outbox_clear(m);
    else
        m->attempts++;
    return rc;
}

struct done {
    const char *id, *claim, *status, *error, *now;
};

static br_err done_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct done *d = ud;
    /* takes turns with the deletion of its client's account (see
     * anonimizar_tx), which may be judging this message's state */
    char cliente[64] = "";
    struct db_val pc[] = {db_text(d->id)};
    br_err rc = EXEC(db, c,
                     "SELECT x.cliente_id FROM mail_outbox m JOIN citas x ON x.id = m.cita_id "
                     "WHERE m.id = ?",
                     pc, one_text, cliente, NULL);
    if (!rc && cliente[0]) rc = lock_on(db, c, OUTBOX_LOCK_CLIENTE, cliente);
    if (rc) return rc;
    struct db_val pu[] = {db_text(d->status), db_text(d->error), db_text(d->now), db_text(d->id),
                          d->claim ? db_text(d->claim) : db_null()};
    int64_t changed = 0;
    rc = db->ops->exec(c,
                       d->claim ? "UPDATE mail_outbox SET status = ?, last_error = ?, done_at = ?, "
                                  "locked_until = NULL WHERE id = ? AND status = 'pending' AND "
                                  "locked_until = ?"
                                : "UPDATE mail_outbox SET status = ?, last_error = ?, done_at = ?, "
                                  "locked_until = NULL WHERE id = ?",
                       pu, d->claim ? 5 : 4, NULL, NULL, &changed);
    if (!rc && d->claim && changed == 0) return outbox_claim_lost();
    /* a client's message that went out after she deleted her account (the
     * cancellations the deletion queued) is not kept */
    struct db_val pd[] = {db_text(d->id)};
    if (!rc)
        rc = EXEC(db, c,
                  "DELETE FROM mail_outbox WHERE id = ? AND kind NOT IN " OUTBOX_AVISOS
                  " AND EXISTS (SELECT 1 FROM citas x JOIN auth_users u ON u.id = x.cliente_id "
                  "WHERE x.id = mail_outbox.cita_id AND u.eliminado_en IS NOT NULL)",
                  pd, NULL, NULL, NULL);
    return rc;
}

/* See store_int.h. */
br_err outbox_done(struct store *st, const char *id, const char *claim, const char *status,
                   const char *error, const char *now)
{
    struct done d = {id, claim, status, error, now};
    return in_tx_as(st, DB_TOUCH_NONE, done_tx, &d);
}

br_err store_outbox_sent(struct store *st, const char *id, const char *now)
{
    return outbox_done(st, id, NULL, "sent", NULL, now);
}

br_err store_outbox_retry(struct store *st, const char *id, const char *claim, const char *error,
                          const char *next_attempt_at)
{
    return outbox_claimed_write(
        st,
        "UPDATE mail_outbox SET last_error = ?, next_attempt_at = ?, locked_until = NULL "
        "WHERE id = ? AND status = 'pending' AND locked_until = ?",
        DB_ARGS(db_text(error), db_text(next_attempt_at), db_text(id), db_text(claim)));
}

br_err store_outbox_drop(struct store *st, const char *id, const char *claim, const char *error,
                         const char *now)
{
    return outbox_done(st, id, claim, "dropped", error, now);
}

static br_err two_ints(void *ud, const struct db_val *cols, int n)
{
    int64_t *v = ud;
    v[0] = n > 0 ? as_int(&cols[0]) : 0;
    v[1] = n > 1 ? as_int(&cols[1]) : 0;
    return BR_OK;
}

br_err store_outbox_counts(struct store *st, int64_t *pending, int64_t *dropped)
{
    int64_t v[2] = {0, 0};
    br_err rc = run(st,
                    "SELECT (SELECT count(*) FROM mail_outbox WHERE status = 'pending'), "
                    "(SELECT count(*) FROM mail_outbox WHERE status = 'dropped')",
                    NULL, 0, two_ints, v, NULL);
    *pending = v[0];
    *dropped = v[1];
    return rc;
}

br_err store_outbox_next_due(struct store *st, br_ts next)
{
    next[0] = '\0';
    return run(st,
               "SELECT min(CASE WHEN locked_until IS NOT NULL AND locked_until > next_attempt_at "
               "THEN locked_until ELSE next_attempt_at END) FROM mail_outbox "
               "WHERE status = 'pending'",
               NULL, 0, one_ts, next, NULL);
}

struct destino {
    char *recipient;
    int64_t gen;
};

static br_err destino_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct destino *d = ud;
    free(d->recipient);
    d->recipient = dup_or_null(&c[0]);
    d->gen = as_int(&c[1]);
    return BR_OK;
}

br_err store_outbox_destino(struct store *st, const char *msg_id, char **recipient, int64_t *gen)
{
    struct destino d = {NULL, 0};
    br_err rc = run(st,
                    "SELECT CASE WHEN o.canal = 'whatsapp' AND w.telefono IS NOT NULL "
                    "THEN w.telefono ELSE o.recipient END, coalesce(e.gen, 0) "
                    "FROM mail_outbox o "
                    "LEFT JOIN citas c ON c.id = o.cita_id "
                    "LEFT JOIN lista_espera l ON l.id = o.cita_id "
                    "LEFT JOIN whatsapp_consentimientos w ON w.cliente_id = "
                    "coalesce(c.cliente_id, l.cliente_id) AND w.retirado_en IS NULL "
                    "LEFT JOIN enlaces_cliente e ON e.cliente_id = c.cliente_id "
                    "WHERE o.id = ? AND o.status = 'pending'",
                    DB_ARGS(db_text(msg_id)), destino_row, &d, NULL);
    if (rc) {
        free(d.recipient);
        d.recipient = NULL;
    }
    *recipient = d.recipient;
    *gen = d.gen;
    return rc;
}

br_err store_outbox_anuncio_pendiente(struct store *st, const struct outbox_msg *m, br_ts next)
{
    next[0] = '\0';
    const char *canal = m->canal ? m->canal : "email";
    return run(st,
               "SELECT min(CASE WHEN locked_until IS NOT NULL AND locked_until > next_attempt_at "
               "THEN locked_until ELSE next_attempt_at END) FROM mail_outbox "
               "WHERE cita_id = ? AND kind IN ('confirmacion', 'reprogramacion') "
               "AND status = 'pending' AND canal = ? "
               "AND (created_at < ? OR (created_at = ? AND id < ?))",
               DB_ARGS(db_text(m->cita_id), db_text(canal), db_text(m->created_at),
                       db_text(m->created_at), db_text(m->id)),
               one_ts, next, NULL);
}

br_err store_outbox_each(struct store *st, const char *status, store_outbox_fn fn, void *ud)
{
    struct outbox_cb a = {.fn = fn, .ud = ud};
    if (!status)
        return run(st,
                   "SELECT " OUTBOX_COLS " FROM mail_outbox WHERE status <> 'sent' "
                   "ORDER BY created_at, id",
                   NULL, 0, outbox_row, &a, NULL);
    return run(st,
               "SELECT " OUTBOX_COLS " FROM mail_outbox WHERE status = ? ORDER BY created_at, id",
               DB_ARGS(db_text(status)), outbox_row, &a, NULL);
}
