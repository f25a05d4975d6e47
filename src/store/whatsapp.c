/*
 * whatsapp.c - the clients' consent to WhatsApp messages, the outbox's
 * WhatsApp bookkeeping and an appointment's messages (see store/whatsapp.h).
 */
#include "store_int.h"

static br_err consent_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct wa_consent *k = ud;
    bool fits = true;
    COPY(k->telefono, &c[0]);
    COPY(k->otorgado_en, &c[1]);
    COPY(k->retirado_en, &c[2]);
    COPY(k->registrado_por, &c[3]);
    if (!fits) return too_long();
    k->found = true;
    return BR_OK;
}

br_err store_whatsapp_consent_get(struct store *st, const char *cliente_id, struct wa_consent *c)
{
    memset(c, 0, sizeof *c);
    return run(st,
               "SELECT telefono, otorgado_en, retirado_en, registrado_por "
               "FROM whatsapp_consentimientos WHERE cliente_id = ?",
               DB_ARGS(db_text(cliente_id)), consent_row, c, NULL);
}

struct consent_set {
    const char *cliente_id, *telefono, *now, *por;
    const struct wa_aviso *aviso;
    int64_t queued;
    struct wa_consent *c;
};

/* The account e-mail a->aviso to the client's own address (none for a
 * client without one, or a deleted account), within the notices' cap. */
static br_err consent_aviso(struct db *db, struct db_conn *conn, struct consent_set *a)
{
    const struct cuenta_mail *m = a->aviso->mail;
    struct db_val pm[] = {db_text(m->id),         db_text(m->kind),         db_text(m->created_at),
                          db_text(m->created_at), db_text(a->cliente_id),   db_text(a->cliente_id),
                          db_text(m->kind),       db_text(a->aviso->desde), db_int(a->aviso->max)};
    return EXEC(
        db, conn,
        "INSERT INTO cuenta_correo (id, user_id, kind, recipient, nombre, enlace, "
        "created_at, status, attempts, next_attempt_at) "
        "SELECT ?, u.id, ?, u.email, p.nombre, NULL, ?, 'pending', 0, ? "
        "FROM auth_users u LEFT JOIN perfiles p ON p.id = u.id "
        "WHERE u.id = ? AND u.eliminado_en IS NULL AND u.email NOT LIKE '" EMAIL_NINGUNO_PREFIX
        "%' AND (SELECT count(*) FROM cuenta_correo k WHERE k.user_id = ? AND k.kind = ? AND "
        "k.created_at >= ?) < ?",
        pm, NULL, NULL, &a->queued);
}

/* Her WhatsApp messages still waiting to leave, moved to number despues
 * (whatever number they were queued for: they follow the consent in
 * force). */
static br_err wa_pending_readdress(struct db *db, struct db_conn *c, const char *cliente_id,
                                   const char *despues)
{
    struct db_val pm[] = {db_text(despues), db_text(cliente_id), db_text(cliente_id)};
    return EXEC(db, c,
                "UPDATE mail_outbox SET recipient = ? WHERE status = 'pending' AND canal = "
                "'whatsapp' AND (cita_id IN (SELECT id FROM citas WHERE cliente_id = ?) OR "
                "cita_id IN (SELECT id FROM lista_espera WHERE cliente_id = ?))",
                pm, NULL, NULL, NULL);
}

static br_err consent_set_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct consent_set *a = ud;
    br_err rc = client_turn(db, conn, a->cliente_id);
    /* the number her messages go to now ("": none) */
    char antes[64] = "";
    struct db_val ps[] = {db_text(a->cliente_id)};
    if (!rc)
        rc = EXEC(db, conn,
                  "SELECT telefono FROM whatsapp_consentimientos WHERE cliente_id = ? AND "
                  "retirado_en IS NULL",
                  ps, one_text, antes, NULL);
    bool otro = a->telefono && strcmp(antes, a->telefono) != 0;
    /* not the consent in force already: she is told (given from her
     * session); and when it moves her messages off a number, or withdraws
     * them from it (a lost phone), the appointments' links sent there end,
     * and what still waits to leave goes to the new number (withdrawn, it
     * is skipped when it is sent: the consent is checked then) */
    if (!rc && otro && a->aviso) rc = consent_aviso(db, conn, a);
    if (!rc && antes[0] && (otro || !a->telefono))
        rc = appointment_links_end(db, conn, a->cliente_id, a->now);
    if (!rc && otro) rc = wa_pending_readdress(db, conn, a->cliente_id, a->telefono);
    if (rc) return rc;
    if (a->telefono) {
        struct db_val p[] = {db_text(a->cliente_id), db_text(a->telefono), db_text(a->now),
                             db_text(a->por)};
        rc = EXEC(db, conn,
                  "INSERT INTO whatsapp_consentimientos (cliente_id, telefono, otorgado_en, "
                  "retirado_en, registrado_por) VALUES (?, ?, ?, NULL, ?) ON CONFLICT (cliente_id) "
                  "DO UPDATE SET telefono = excluded.telefono, otorgado_en = excluded.otorgado_en, "
                  "retirado_en = NULL, registrado_por = excluded.registrado_por",
                  p, NULL, NULL, NULL);
    } else {
        struct db_val p[] = {db_text(a->now), db_text(a->por), db_text(a->cliente_id)};
        rc = EXEC(db, conn,
                  "UPDATE whatsapp_consentimientos SET retirado_en = ?, registrado_por = ? "
                  "WHERE cliente_id = ? AND retirado_en IS NULL",
                  p, NULL, NULL, NULL);
    }
    if (rc) return rc;
    memset(a->c, 0, sizeof *a->c);
    struct db_val pg[] = {db_text(a->cliente_id)};
    return EXEC(db, conn,
                "SELECT telefono, otorgado_en, retirado_en, registrado_por "
                "FROM whatsapp_consentimientos WHERE cliente_id = ?",
                pg, consent_row, a->c, NULL);
}

/* See store_int.h. */
br_err whatsapp_consent_follow(struct db *db, struct db_conn *c, const char *cliente_id,
                               const char *antes, const char *despues, const char *now,
                               const char *por)
{
    char tel[64] = "";
    struct db_val pc[] = {db_text(cliente_id)};
    br_err rc = EXEC(db, c,
                     "SELECT telefono FROM whatsapp_consentimientos WHERE cliente_id = ? AND "
                     "retirado_en IS NULL",
                     pc, one_text, tel, NULL);
    if (rc || strcmp(tel, antes) != 0) return rc;
    if (!despues) {
        /* what waits to leave is skipped when it is sent (the consent is checked then) */
        struct db_val pw[] = {db_text(now), db_text(por), db_text(cliente_id)};
        return EXEC(db, c,
                    "UPDATE whatsapp_consentimientos SET retirado_en = ?, registrado_por = ? "
                    "WHERE cliente_id = ? AND retirado_en IS NULL",
                    pw, NULL, NULL, NULL);
    }
    struct db_val pt[] = {db_text(despues), db_text(cliente_id)};
    rc = EXEC(db, c, "UPDATE whatsapp_consentimientos SET telefono = ? WHERE cliente_id = ?", pt,
              NULL, NULL, NULL);
    return rc ? rc : wa_pending_readdress(db, c, cliente_id, despues);
}

br_err store_whatsapp_consent_set(struct store *st, const char *cliente_id, const char *telefono,
                                  const char *now, const char *por, const struct wa_aviso *aviso,
                                  bool *queued, struct wa_consent *c)
{
    struct consent_set a = {cliente_id, telefono, now, por, aviso, 0, c};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, consent_set_tx, &a);
    *queued = !rc && a.queued > 0;
    return rc;
}

struct sendable_row {
    bool found, cancelada, consent;
};

static br_err sendable_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct sendable_row *r = ud;
    r->found = true;
    r->cancelada = !strcmp(text_or_empty(&c[0]), "cancelada");
    r->consent = as_int(&c[1]) != 0;
    return BR_OK;
}

/* What a message is about, read with its client's consent (sendable_row),
 * and what to say when it is gone. */
struct sendable_of {
    const char *sql, *gone;
};

static const struct sendable_of sendable_cita = {
    "SELECT c.estado, (SELECT count(*) FROM whatsapp_consentimientos w WHERE "
    "w.cliente_id = c.cliente_id AND w.retirado_en IS NULL) FROM citas c "
    "WHERE c.id = ?",
    "la cita ya no existe"};

/* a waiting-list notice: cita_id is the entry's, which is never cancelled */
static const struct sendable_of sendable_espera = {
    "SELECT 'pendiente', (SELECT count(*) FROM whatsapp_consentimientos w "
    "WHERE w.cliente_id = e.cliente_id AND w.retirado_en IS NULL) "
    "FROM lista_espera e WHERE e.id = ?",
    "el aviso de la lista de espera ya no existe"};

br_err store_whatsapp_sendable(struct store *st, const char *cita_id, const char *kind,
                               const char **why)
{
    *why = NULL;
    const struct sendable_of *of =
        !strcmp(outbox_kind(kind), "aviso_espera") ? &sendable_espera : &sendable_cita;
    struct sendable_row r = {false, false, false};
    br_err rc = run(st, of->sql, DB_ARGS(db_text(cita_id)), sendable_row, &r, NULL);
    if (rc) return rc;
    if (!r.found)
        *why = of->gone;
    else if (!r.consent)
        *why = "el cliente retiró su consentimiento a WhatsApp";
    else if (r.cancelada && !outbox_kind_cancela(kind))
        *why = "la cita está cancelada";
    return BR_OK;
}

struct sent_since {
    char *cliente; /* a br_id */
    int64_t *n;
};

static br_err sent_since_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    const struct sent_since *a = ud;
    snprintf(a->cliente, sizeof(br_id), "%s", text_or_empty(&c[0]));
    *a->n = as_int(&c[1]);
    return BR_OK;
}

br_err store_whatsapp_sent_since(struct store *st, const char *cita_id, const char *since,
                                 br_id cliente, int64_t *n)
{
    cliente[0] = '\0';
    *n = 0;
    struct sent_since a = {cliente, n};
    return run(st,
               "SELECT q.cliente_id, (SELECT count(*) FROM whatsapp_envios w WHERE w.cliente_id "
               "= q.cliente_id AND w.enviado_en >= ?) FROM (SELECT cliente_id FROM citas WHERE "
               "id = ? UNION ALL SELECT cliente_id FROM lista_espera WHERE id = ?) q",
               DB_ARGS(db_text(since), db_text(cita_id), db_text(cita_id)), sent_since_row, &a,
               NULL);
}

br_err store_outbox_skip(struct store *st, const char *id, const char *claim, const char *why,
                         const char *now)
{
    return outbox_done(st, id, claim, "skipped", why, now);
}

br_err store_outbox_defer(struct store *st, const char *id, const char *claim, const char *until)
{
    return outbox_claimed_write(
        st,
        "UPDATE mail_outbox SET next_attempt_at = ?, due_at = ?, "
        "locked_until = NULL, attempts = attempts - 1 WHERE id = ? AND "
        "status = 'pending' AND locked_until = ?",
        DB_ARGS(db_text(until), db_text(until), db_text(id), db_text(claim)));
}

struct wa_sent {
    const char *id, *proveedor_id, *cliente_id, *now, *olvido;
};

static br_err wa_sent_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct wa_sent *a = ud;
    struct db_val pu[] = {db_text(a->now), db_text(a->proveedor_id), db_text(a->id)};
    br_err rc = EXEC(db, c,
                     "UPDATE mail_outbox SET status = 'sent', done_at = ?, proveedor_id = ?, "
                     "locked_until = NULL, last_error = NULL WHERE id = ?",
                     pu, NULL, NULL, NULL);
    /* counted for the client it is about (the cap's): the one found before
     * it left (a waiting-list entry she left meanwhile names nobody now),
     * or an appointment's client, or a waiting-list entry's, while that is
     * known */
    struct db_val pv[] = {db_text(a->id), db_text(a->cliente_id), db_text(a->now)};
    struct db_val pe[] = {db_text(a->id), db_text(a->now), db_text(a->id), db_text(a->id)};
    if (!rc && a->cliente_id)
        rc = EXEC(db, c,
                  "INSERT INTO whatsapp_envios (mensaje_id, cliente_id, enviado_en) "
                  "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                  pv, NULL, NULL, NULL);
    else if (!rc)
        rc = EXEC(db, c,
                  "INSERT INTO whatsapp_envios (mensaje_id, cliente_id, enviado_en) "
                  "SELECT ?, q.cliente_id, ? FROM (SELECT c.cliente_id FROM mail_outbox m "
                  "JOIN citas c ON c.id = m.cita_id WHERE m.id = ? UNION ALL "
                  "SELECT e.cliente_id FROM mail_outbox m JOIN lista_espera e ON e.id = m.cita_id "
                  "WHERE m.id = ?) q WHERE true ON CONFLICT DO NOTHING",
                  pe, NULL, NULL, NULL);
    /* what no cap reads any more */
    struct db_val po[] = {db_text(a->id), db_text(a->olvido)};
    if (!rc)
        rc = EXEC(db, c,
                  "DELETE FROM whatsapp_envios WHERE cliente_id = (SELECT cliente_id FROM "
                  "whatsapp_envios WHERE mensaje_id = ?) AND enviado_en < ?",
                  po, NULL, NULL, NULL);
    return rc;
}

br_err store_whatsapp_sent(struct store *st, const char *id, const char *proveedor_id,
                           const char *cliente_id, const char *now, const char *olvido)
{
    struct wa_sent a = {id, proveedor_id, cliente_id, now, olvido};
    return in_tx_as(st, DB_TOUCH_NONE, wa_sent_tx, &a);
}

/* The order of the delivery statuses: a status never goes back. */
#define ENTREGA_RANK(col)                                                                          \
    "CASE " col " WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 "                  \
    "WHEN 'failed' THEN 4 ELSE 0 END"

br_err store_whatsapp_status(struct store *st, const char *proveedor_id, const char *status,
                             const char *at, const char *error, bool *matched)
{
    int64_t rank = !strcmp(status, "sent")        ? 1
                   : !strcmp(status, "delivered") ? 2
                   : !strcmp(status, "read")      ? 3
                   : !strcmp(status, "failed")    ? 4
                                                  : 0;
    *matched = false;
    if (!rank) return err_set(BR_INVALID, "unknown delivery status");
    int64_t n = 0;
    br_err rc = run_write_aside(
        st,
        "UPDATE mail_outbox SET entrega = ?, entrega_at = ?, last_error = COALESCE(?, last_error) "
        "WHERE proveedor_id = ? AND canal = 'whatsapp' AND " ENTREGA_RANK("entrega") " < ?",
        DB_ARGS(db_text(status), db_text(at), db_text(error), db_text(proveedor_id), db_int(rank)),
        &n);
    if (!rc && !n) {
        /* known but already further along: still its message */
        bool known = false;
        rc = run(st, "SELECT 1 FROM mail_outbox WHERE proveedor_id = ? AND canal = 'whatsapp'",
                 DB_ARGS(db_text(proveedor_id)), one_flag, &known, NULL);
        *matched = known;
    } else {
        *matched = n > 0;
    }
    return rc;
}

/* A message of an appointment from its 13 columns (borrowed). */
static bool mensaje_view(struct mensaje_view *m, const struct db_val *c, int n)
{
    (void)n;
    *m = (struct mensaje_view){
        .id = text_or_empty(&c[0]),
        .canal = outbox_canal(text_or_null(&c[1])),
        .tipo = outbox_kind(text_or_null(&c[2])),
        .destinatario = text_or_empty(&c[3]),
        .estado = text_or_empty(&c[4]),
        .intentos = as_int(&c[5]),
        .antelacion_min = as_int(&c[6]),
        .creado_en = text_or_empty(&c[7]),
        .enviado_en = text_or_null(&c[8]),
        .proximo_intento = text_or_null(&c[9]),
        .error = text_or_null(&c[10]),
        .entrega = text_or_null(&c[11]),
        .entrega_en = text_or_null(&c[12]),
    };
    return true;
}

LISTING(mensaje, struct mensaje_view, store_mensaje_fn, mensaje_view)

br_err store_cita_mensajes(struct store *st, const char *cita_id, store_mensaje_fn fn, void *ud)
{
    return mensaje_list(
        st,
        "SELECT id, canal, kind, recipient, status, attempts, antelacion_min, created_at, "
        "done_at, next_attempt_at, last_error, entrega, entrega_at FROM mail_outbox "
        "WHERE cita_id = ? ORDER BY created_at, id LIMIT 500",
        DB_ARGS(db_text(cita_id)), fn, ud);
}
