/*
 * cuenta.c - the store's part for the client's own account (see
 * store/cuenta.h).
 */
#include "store_int.h"

#include <stdio.h>

/* --- links ------------------------------------------------------------------------ */

struct reset_tx {
    const struct reset_request *r;
    int64_t changes;
};

static br_err reset_request_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct reset_tx *a = ud;
    const struct reset_request *r = a->r;
    struct db_val pt[] = {db_text(r->token_hash), db_text(r->now), db_text(r->expires_at),
                          db_text(r->email)};
    br_err rc = EXEC(db, c,
                     "INSERT INTO cuenta_tokens (token_hash, user_id, proposito, created_at, "
                     "expires_at) SELECT ?, id, 'restablecer', ?, ? FROM auth_users "
                     "WHERE email = ? AND eliminado_en IS NULL",
                     pt, NULL, NULL, &a->changes);
    if (rc || !r->mail) return rc;
    const struct cuenta_mail *m = r->mail;
    struct db_val pm[] = {db_text(m->id), db_text(m->enlace), db_text(m->created_at),
                          db_text(m->created_at), db_text(r->email)};
    return EXEC(db, c,
                "INSERT INTO cuenta_correo (id, user_id, kind, recipient, nombre, enlace, "
                "created_at, status, attempts, next_attempt_at) "
                "SELECT ?, u.id, 'restablecer', u.email, p.nombre, ?, ?, 'pending', 0, ? "
                "FROM auth_users u LEFT JOIN perfiles p ON p.id = u.id "
                "WHERE u.email = ? AND u.eliminado_en IS NULL",
                pm, NULL, NULL, NULL);
}

br_err store_reset_request(struct store *st, const struct reset_request *r, bool *queued)
{
    struct reset_tx a = {r, 0};
    *queued = false;
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, reset_request_tx, &a);
    if (!rc) *queued = a.changes > 0;
    return rc;
}

#define TOKEN_USABLE                                                                               \
    "SELECT t.user_id FROM cuenta_tokens t JOIN auth_users u ON u.id = t.user_id "                 \
    "WHERE t.token_hash = ? AND t.proposito = ? AND t.used_at IS NULL AND t.expires_at > ? "       \
    "AND u.eliminado_en IS NULL"

br_err store_token_check(struct store *st, const char *token_hash, const char *proposito,
                         const char *now, br_id user_id)
{
    user_id[0] = '\0';
    br_err rc =
        run(st, TOKEN_USABLE, DB_ARGS(db_text(token_hash), db_text(proposito), db_text(now)),
            one_id, user_id, NULL);
    if (!rc && !user_id[0]) rc = err_set(BR_NOTFOUND, "no such link");
    return rc;
}

/* Claims the link in the transaction: its user, and used_at set; a
 * concurrent use of the same link finds it used. */
static br_err token_take(struct db *db, struct db_conn *c, const char *token_hash,
                         const char *proposito, const char *now, br_id user_id)
{
    user_id[0] = '\0';
    struct db_val p[] = {db_text(token_hash), db_text(proposito), db_text(now)};
    br_err rc = EXEC(db, c, TOKEN_USABLE, p, one_id, user_id, NULL);
    if (rc) return rc;
    if (!user_id[0]) return err_set(BR_NOTFOUND, "no such link");
    int64_t changes = 0;
    struct db_val pu[] = {db_text(now), db_text(token_hash)};
    rc =
        EXEC(db, c, "UPDATE cuenta_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
             pu, NULL, NULL, &changes);
    if (!rc && changes == 0) rc = err_set(BR_NOTFOUND, "no such link");
    return rc;
}

struct reset_apply_tx {
    const struct reset_apply *a;
    struct user *u;
};

static br_err user_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    struct user *u = ud;
    COPY(u->id, &c[0]);
    free(u->email);
    u->email = dup_or_null(&c[1]);
    COPY(u->created_at, &c[2]);
    return fits ? BR_OK : too_long();
}

static br_err reset_apply_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct reset_apply_tx *t = ud;
    const struct reset_apply *a = t->a;
    br_id uid;
    br_err rc = token_take(db, c, a->token_hash, "restablecer", a->now, uid);
    if (rc) return rc;
    struct db_val pe[] = {db_text(a->now), db_text(uid)};
    /* every other link of hers, a pending e-mail change's too, ends with it */
    rc = EXEC(db, c, "UPDATE cuenta_tokens SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
              pe, NULL, NULL, NULL);
    struct db_val pp[] = {db_text(a->password_hash), db_text(a->now), db_text(uid)};
    if (!rc)
        rc =
            EXEC(db, c, "UPDATE auth_users SET password_hash = ?, last_sign_in_at = ? WHERE id = ?",
                 pp, NULL, NULL, NULL);
    struct db_val pd[] = {db_text(uid)};
    if (!rc) rc = EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ?", pd, NULL, NULL, NULL);
    if (!rc) rc = session_insert(db, c, a->session_hash, uid, a->now, a->session_expires_at);
    if (!rc)
        rc = EXEC(db, c, "SELECT id, email, created_at FROM auth_users WHERE id = ?", pd, user_row,
                  t->u, NULL);
    return rc;
}

br_err store_reset_apply(struct store *st, const struct reset_apply *a, struct user *u)
{
    memset(u, 0, sizeof *u);
    struct reset_apply_tx t = {a, u};
    br_err rc = in_tx(st, reset_apply_tx, &t);
    if (!rc && !u->id[0]) rc = err_set(BR_STORE, "the account vanished");
    if (rc) user_clear(u);
    return rc;
}

struct pw_change {
    const char *user_id, *hash, *keep;
};

static br_err password_change_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct pw_change *a = ud;
    br_err rc = password_set(db, c, a->user_id, a->hash);
    if (rc) return rc;
    struct db_val q[] = {db_text(a->user_id), db_text(a->keep ? a->keep : "")};
    return EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ? AND token_hash <> ?", q, NULL,
                NULL, NULL);
}

br_err store_password_change(struct store *st, const char *user_id, const char *password_hash,
                             const char *keep_hash)
{
    struct pw_change a = {user_id, password_hash, keep_hash};
    return in_tx(st, password_change_tx, &a);
}

static br_err correo_insert(struct db *db, struct db_conn *c, const char *user_id,
                            const struct cuenta_mail *m)
{
    struct db_val p[] = {db_text(m->id),         db_text(user_id),      db_text(m->kind),
                         db_text(m->recipient),  db_text(m->nombre),    db_text(m->enlace),
                         db_text(m->created_at), db_text(m->created_at)};
    return EXEC(db, c,
                "INSERT INTO cuenta_correo (id, user_id, kind, recipient, nombre, enlace, "
                "created_at, status, attempts, next_attempt_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?)",
                p, NULL, NULL, NULL);
}

static br_err email_request_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct email_request *r = ud;
    bool taken = false;
    struct db_val pe[] = {db_text(r->email_nuevo)};
    br_err rc = client_turn(db, c, r->user_id);
    if (!rc)
        rc = EXEC(db, c, "SELECT 1 FROM auth_users WHERE email = ?", pe, one_flag, &taken, NULL);
    if (rc) return rc;
    if (taken) return err_set(BR_CONFLICT, "email taken");
    struct db_val po[] = {db_text(r->now), db_text(r->user_id)};
    rc = EXEC(db, c,
              "UPDATE cuenta_tokens SET used_at = ? WHERE user_id = ? AND proposito = 'email' "
              "AND used_at IS NULL",
              po, NULL, NULL, NULL);
    struct db_val pt[] = {db_text(r->token_hash), db_text(r->user_id), db_text(r->email_nuevo),
                          db_text(r->now), db_text(r->expires_at)};
    if (!rc)
        rc = EXEC(db, c,
                  "INSERT INTO cuenta_tokens (token_hash, user_id, proposito, email_nuevo, "
                  "created_at, expires_at) VALUES (?, ?, 'email', ?, ?, ?)",
                  pt, NULL, NULL, NULL);
    if (!rc && r->confirm) rc = correo_insert(db, c, r->user_id, r->confirm);
    if (!rc && r->notice) rc = correo_insert(db, c, r->user_id, r->notice);
    return rc;
}

br_err store_email_request(struct store *st, const struct email_request *r)
{
    return in_tx_as(st, DB_TOUCH_NONE, email_request_tx, (void *)r);
}

struct email_apply {
    const char *token_hash, *now;
    char *email;
};

static br_err email_apply_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct email_apply *a = ud;
    /* her turn first (client_turn: her links' actions take it too), as
     * the request of a change takes it before it ends her other links */
    br_id owner = "", uid;
    struct db_val pt[] = {db_text(a->token_hash)};
    br_err rc = EXEC(
        db, c, "SELECT user_id FROM cuenta_tokens WHERE token_hash = ? AND proposito = 'email'", pt,
        one_id, owner, NULL);
    if (!rc && !owner[0]) rc = err_set(BR_NOTFOUND, "no such link");
    if (!rc) rc = client_turn(db, c, owner);
    if (rc == BR_UNAUTH) rc = err_set(BR_NOTFOUND, "no such link"); /* her account is gone */
    if (!rc) rc = token_take(db, c, a->token_hash, "email", a->now, uid);
    if (rc) return rc;
    rc = EXEC(db, c, "SELECT email_nuevo FROM cuenta_tokens WHERE token_hash = ?", pt, one_text_dup,
              &a->email, NULL);
    if (rc) return rc;
    if (!a->email) return err_set(BR_NOTFOUND, "no such link");
    struct db_val pu[] = {db_text(a->email), db_text(uid)};
    rc = EXEC(db, c, "UPDATE auth_users SET email = ? WHERE id = ?", pu, NULL, NULL, NULL);
    if (rc == BR_CONFLICT) return err_set(BR_CONFLICT, "email taken");
    /* a reset link sent to the old address no longer speaks for her */
    if (!rc) rc = account_links_end(db, c, uid);
    /* nor do the e-mails still to go about her appointments, nor the
     * appointments' links sent to it */
    if (!rc) rc = her_mail_readdress(db, c, uid, a->email, a->now);
    if (!rc) rc = appointment_links_end(db, c, uid, a->now);
    return rc;
}

/* See store_int.h. */
br_err her_mail_readdress(struct db *db, struct db_conn *c, const char *user_id, const char *email,
                          const char *now)
{
#define HER_MAIL                                                                                   \
    " WHERE status = 'pending' AND canal = 'email' AND kind NOT IN " OUTBOX_AVISOS                 \
    " AND (cita_id IN (SELECT id FROM citas WHERE cliente_id = ?) OR cita_id IN "                  \
    "(SELECT id FROM lista_espera WHERE cliente_id = ?))"
    struct db_val pm[] = {db_text(email), db_text(user_id), db_text(user_id)};
    struct db_val ps[] = {db_text(now), db_text(user_id), db_text(user_id)};
    if (email)
        return EXEC(db, c, "UPDATE mail_outbox SET recipient = ?" HER_MAIL, pm, NULL, NULL, NULL);
    return EXEC(db, c,
                "UPDATE mail_outbox SET status = 'skipped', last_error = 'el cliente ya no tiene "
                "correo', done_at = ?, locked_until = NULL" HER_MAIL,
                ps, NULL, NULL, NULL);
#undef HER_MAIL
}

br_err store_email_apply(struct store *st, const char *token_hash, const char *now, char **email)
{
    struct email_apply a = {token_hash, now, NULL};
    *email = NULL;
    br_err rc = in_tx(st, email_apply_tx, &a);
    if (rc) {
        free(a.email);
        return rc;
    }
    *email = a.email;
    return BR_OK;
}

/* --- the account's mail ------------------------------------------------------------ */

struct correo_claim {
    const char *now, *lease;
    struct cuenta_mail *m;
    bool found;
};

static br_err correo_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct correo_claim *a = ud;
    struct cuenta_mail *m = a->m;
    bool fits = true;
    COPY(m->id, &c[0]);
    m->kind = dup_or_null(&c[1]);
    m->recipient = dup_or_null(&c[2]);
    m->nombre = dup_or_null(&c[3]);
    m->enlace = dup_or_null(&c[4]);
    COPY(m->created_at, &c[5]);
    m->attempts = as_int(&c[6]) + 1;
    if (!m->kind) m->kind = xstrdup("");
    if (!m->recipient) m->recipient = xstrdup("");
    a->found = true;
    return fits ? BR_OK : too_long();
}

static br_err correo_claim_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct correo_claim *a = ud;
    br_err rc = db->ops->lock(c, "cuenta_correo");
    if (rc) return rc;
    cuenta_mail_clear(a->m);
    a->found = false;
    struct db_val p[] = {db_text(a->now), db_text(a->now)};
    rc = EXEC(db, c,
              "SELECT id, kind, recipient, nombre, enlace, created_at, attempts FROM "
              "cuenta_correo WHERE status = 'pending' AND next_attempt_at <= ? AND "
              "(locked_until IS NULL OR locked_until <= ?) "
              "ORDER BY next_attempt_at, created_at LIMIT 1",
              p, correo_row, a, NULL);
    if (rc || !a->found) return rc;
    struct db_val u[] = {db_text(a->lease), db_text(a->m->id)};
    snprintf(a->m->claim, sizeof a->m->claim, "%s", a->lease);
    return EXEC(db, c,
                "UPDATE cuenta_correo SET locked_until = ?, attempts = attempts + 1 WHERE id = ?",
                u, NULL, NULL, NULL);
}

br_err store_cuenta_correo_claim(struct store *st, const char *now, const char *lease_until,
                                 struct cuenta_mail *m)
{
    memset(m, 0, sizeof *m);
    struct correo_claim a = {now, lease_until, m, false};
    br_err rc = in_tx_as(st, DB_TOUCH_NONE, correo_claim_tx, &a);
    if (!rc && !a.found) rc = BR_NOTFOUND;
    if (rc) cuenta_mail_clear(m);
    return rc;
}

br_err store_cuenta_correo_done(struct store *st, const char *id, const char *claim,
                                const char *error, const char *now)
{
    if (!error)
        return run_write_aside(st,
                               "UPDATE cuenta_correo SET status = 'sent', last_error = NULL, "
                               "done_at = ?, enlace = NULL, locked_until = NULL WHERE id = ?",
                               DB_ARGS(db_text(now), db_text(id)), NULL);
    return outbox_claimed_write(
        st,
        "UPDATE cuenta_correo SET status = 'dropped', last_error = ?, done_at = ?, "
        "enlace = NULL, locked_until = NULL WHERE id = ? AND status = 'pending' AND "
        "locked_until = ?",
        DB_ARGS(db_text(error), db_text(now), db_text(id), db_text(claim)));
}

br_err store_cuenta_correo_retry(struct store *st, const char *id, const char *claim,
                                 const char *error, const char *next_attempt_at)
{
    return outbox_claimed_write(
        st,
        "UPDATE cuenta_correo SET last_error = ?, next_attempt_at = ?, locked_until = NULL "
        "WHERE id = ? AND status = 'pending' AND locked_until = ?",
        DB_ARGS(db_text(error), db_text(next_attempt_at), db_text(id), db_text(claim)));
}

br_err store_cuenta_correo_next_due(struct store *st, br_ts next)
{
    next[0] = '\0';
    return run(st, "SELECT min(next_attempt_at) FROM cuenta_correo WHERE status = 'pending'", NULL,
               0, one_ts, next, NULL);
}

struct correo_each {
    store_cuenta_correo_fn fn;
    void *ud;
};

static br_err correo_view_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    const struct correo_each *a = ud;
    struct cuenta_correo_view v = {text_or_empty(&c[0]), text_or_empty(&c[1]), text_or_empty(&c[2]),
                                   text_or_empty(&c[3]), text_or_empty(&c[4]), text_or_empty(&c[5]),
                                   text_or_null(&c[6]),  as_int(&c[7])};
    return a->fn(a->ud, &v);
}

#define CORREO_VIEW_COLS                                                                           \
    "SELECT id, kind, recipient, status, created_at, next_attempt_at, last_error, attempts "       \
    "FROM cuenta_correo "

br_err store_cuenta_correo_each(struct store *st, const char *status, store_cuenta_correo_fn fn,
                                void *ud)
{
    struct correo_each a = {fn, ud};
    if (!status)
        return run(st, CORREO_VIEW_COLS "WHERE status <> 'sent' ORDER BY created_at, id", NULL, 0,
                   correo_view_row, &a, NULL);
    return run(st, CORREO_VIEW_COLS "WHERE status = ? ORDER BY created_at, id",
               DB_ARGS(db_text(status)), correo_view_row, &a, NULL);
}

/* --- consents ---------------------------------------------------------------------- */

struct consent_set {
    const char *cliente_id, *tipo, *now;
    bool granted;
    bool cerrar; /* the account closing: her sessions end too */
};

static br_err consent_set_tx(struct db *db, struct db_conn *c, void *ud)
{
    static const char *const sql[] = {
        "INSERT INTO consentimientos (cliente_id, tipo, retirado_en) VALUES (?, ?, ?) "
        "ON CONFLICT (cliente_id, tipo) DO UPDATE SET retirado_en = ?",
        "INSERT INTO consentimientos (cliente_id, tipo, otorgado_en) VALUES (?, ?, ?) "
        "ON CONFLICT (cliente_id, tipo) DO UPDATE SET otorgado_en = ?, retirado_en = NULL",
    };
    const struct consent_set *a = ud;
    br_err rc = client_turn(db, c, a->cliente_id);
    if (!rc) rc = lock_on(db, c, LOCK_CONSENTIMIENTO, a->cliente_id);
    struct db_val p[] = {db_text(a->cliente_id), db_text(a->tipo), db_text(a->now),
                         db_text(a->now)};
    if (!rc) rc = EXEC(db, c, sql[a->granted], p, NULL, NULL, NULL);
    struct db_val pid[] = {db_text(a->cliente_id)};
    if (!rc && a->cerrar)
        rc = EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ?", pid, NULL, NULL, NULL);
    return rc;
}

br_err store_consent_set(struct store *st, const char *cliente_id, const char *tipo, bool granted,
                         const char *now)
{
    struct consent_set a = {cliente_id, tipo, now, granted, false};
    return in_tx_as(st, DB_TOUCH_NONE, consent_set_tx, &a);
}

br_err store_cuenta_cerrar(struct store *st, const char *user_id, const char *now)
{
    struct consent_set a = {user_id, "fotos", now, false, true};
    return in_tx(st, consent_set_tx, &a); /* every write: the sessions' memo forgets hers */
}

static br_err consent_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    int *state = ud;
    *state = c[1].type != DB_NULL ? -1 : c[0].type != DB_NULL ? 1 : 0;
    return BR_OK;
}

br_err store_consent_get(struct store *st, const char *cliente_id, const char *tipo, int *state)
{
    *state = 0;
    return run(st,
               "SELECT otorgado_en, retirado_en FROM consentimientos WHERE cliente_id = ? AND "
               "tipo = ?",
               DB_ARGS(db_text(cliente_id), db_text(tipo)), consent_row, state, NULL);
}

br_err store_fotos_refused(struct store *st, const char *cita_id, bool *refused)
{
    *refused = false;
    /* a deleted account's consent went with it: that is a refusal too */
    return run(st, SQL_FOTOS_REFUSED, DB_ARGS(db_text(cita_id)), one_flag, refused, NULL);
}

/* --- what the shop holds about a client ------------------------------------------- */

struct seccion {
    const char *sql;
    const char *keys[12];
    int nkeys;
    int nparams; /* how many, each her id (0: one) */
};

#define LIMITE " LIMIT 10000"

static const struct seccion secciones[] = {
    [DATOS_CITAS] = {"SELECT c.id, c.fecha_inicio, c.fecha_fin, c.estado, c.notas, b.nombre, "
                     "s.nombre, c.created_at FROM citas c JOIN barberos b ON b.id = c.barbero_id "
                     "JOIN servicios s ON s.id = c.servicio_id WHERE c.cliente_id = ? "
                     "ORDER BY c.fecha_inicio, c.id" LIMITE,
                     {"id", "fecha_inicio", "fecha_fin", "estado", "notas", "barbero", "servicio",
                      "created_at"},
                     8},
    [DATOS_HISTORIAL] = {"SELECT h.id, h.cita_id, h.fecha, b.nombre, s.nombre, h.created_at "
                         "FROM historial_cortes h JOIN barberos b ON b.id = h.barbero_id "
                         "JOIN servicios s ON s.id = h.servicio_id WHERE h.cliente_id = ? "
                         "ORDER BY h.fecha, h.id" LIMITE,
                         {"id", "cita_id", "fecha", "barbero", "servicio", "created_at"},
                         6},
    [DATOS_FOTOS] =
        {"SELECT f.id, f.cita_id, f.cliente_id, f.tipo, f.url, f.created_at "
         "FROM fotos_cita f WHERE f.cliente_id = ? OR f.cita_id IN "
         "(SELECT id FROM citas WHERE cliente_id = ?) ORDER BY f.created_at, f.id" LIMITE,
         {"id", "cita_id", "subida_por", "tipo", "url", "created_at"},
         6,
         2},
    /* every message to her: about her appointments and her waiting list,
     * by either channel and to any address she had (the barber's notices
     * are the barber's). Not "any to her address": an address is nobody's
     * for ever, and what the shop sent its earlier holder is not hers. */
    [DATOS_MENSAJES] = {"SELECT kind, canal, CASE WHEN kind = 'aviso_espera' THEN NULL ELSE "
                        "cita_id END, CASE WHEN kind = 'aviso_espera' THEN cita_id END, "
                        "recipient, status, created_at, done_at, entrega FROM mail_outbox "
                        "WHERE kind NOT IN " OUTBOX_AVISOS
                        " AND (cita_id IN (SELECT id FROM citas WHERE cliente_id = ?) OR cita_id "
                        "IN (SELECT id FROM lista_espera WHERE cliente_id = ?)) "
                        "ORDER BY created_at, id" LIMITE,
                        /* a waiting-list notice names her entry, not an appointment */
                        {"tipo", "canal", "cita_id", "lista_espera_id", "destinatario", "estado",
                         "created_at", "enviado_en", "entrega"},
                        9,
                        2},
    [DATOS_MENSAJES_CUENTA] = {"SELECT kind, recipient, status, created_at, done_at FROM "
                               "cuenta_correo WHERE user_id = ? ORDER BY created_at, id" LIMITE,
                               {"tipo", "destinatario", "estado", "created_at", "enviado_en"},
                               5},
    [DATOS_CONSENTIMIENTOS] = {"SELECT tipo, otorgado_en, retirado_en FROM consentimientos "
                               "WHERE cliente_id = ? ORDER BY tipo" LIMITE,
                               {"tipo", "otorgado_en", "retirado_en"},
                               3},
    /* the number as GET /api/auth/me/whatsapp writes it: +<E.164 digits> */
    [DATOS_WHATSAPP] = {"SELECT '+' || telefono, otorgado_en, retirado_en FROM "
                        "whatsapp_consentimientos WHERE cliente_id = ?" LIMITE,
                        {"telefono", "otorgado_en", "retirado_en"},
                        3},
    [DATOS_LISTA_ESPERA] = {"SELECT e.id, e.fecha, s.nombre, b.nombre, e.created_at "
                            "FROM lista_espera e JOIN servicios s ON s.id = e.servicio_id "
                            "LEFT JOIN barberos b ON b.id = e.barbero_id WHERE e.cliente_id = ? "
                            "ORDER BY e.fecha, e.id" LIMITE,
                            {"id", "fecha", "servicio", "barbero", "created_at"},
                            5},
};

struct datos_cb {
    const struct seccion *s;
    store_dato_fn fn;
    void *ud;
};

static br_err dato_row(void *ud, const struct db_val *c, int n)
{
    struct datos_cb *a = ud;
    struct dato row[12];
    int k = n < a->s->nkeys ? n : a->s->nkeys;
    for (int i = 0; i < k; i++) {
        row[i].key = a->s->keys[i];
        row[i].s = NULL;
        row[i].d = 0;
        switch (c[i].type) {
        case DB_INT:
            row[i].type = DATO_NUM;
            row[i].d = (double)c[i].i;
            break;
        case DB_REAL:
            row[i].type = DATO_NUM;
            row[i].d = c[i].d;
            break;
        case DB_TEXT:
            row[i].type = DATO_TEXT;
            row[i].s = c[i].s;
            break;
        default:
            row[i].type = DATO_NULL;
        }
    }
    return a->fn(a->ud, row, k);
}

br_err store_datos_each(struct store *st, enum datos_seccion s, const char *user_id,
                        store_dato_fn fn, void *ud)
{
    if ((int)s < 0 || (size_t)s >= ARRAY_LEN(secciones)) return err_set(BR_INTERNAL, "section");
    struct datos_cb a = {&secciones[s], fn, ud};
    int n = secciones[s].nparams > 0 ? secciones[s].nparams : 1;
    struct db_val p[3];
    for (int i = 0; i < n && i < 3; i++)
        p[i] = db_text(user_id);
    return run(st, secciones[s].sql, p, n < 3 ? n : 3, dato_row, &a, NULL);
}

/* --- deleting an account ----------------------------------------------------------- */

struct ids_cb {
    store_id_fn fn;
    void *ud;
};

static br_err each_id_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct ids_cb *a = ud;
    br_id id;
    if (!copy_fixed(id, sizeof id, &c[0])) return too_long();
    return a->fn(a->ud, id);
}

br_err store_citas_futuras_each(struct store *st, const char *cliente_id, const char *now,
                                store_id_fn fn, void *ud)
{
    struct ids_cb a = {fn, ud};
    return run(st,
               "SELECT id FROM citas WHERE cliente_id = ? AND fecha_inicio > ? AND estado <> "
               "'cancelada' ORDER BY fecha_inicio, id",
               DB_ARGS(db_text(cliente_id), db_text(now)), each_id_row, &a, NULL);
}

br_err store_citas_con_evento_each(struct store *st, const char *cliente_id, store_id_fn fn,
                                   void *ud)
{
    struct ids_cb a = {fn, ud};
    return run(st,
               "SELECT id FROM citas WHERE cliente_id = ? AND google_event_id IS NOT NULL "
               "ORDER BY fecha_inicio, id",
               DB_ARGS(db_text(cliente_id)), each_id_row, &a, NULL);
}

LISTING(foto_cliente, struct foto, store_foto_fn, foto_view)

br_err store_fotos_de_cliente_each(struct store *st, const char *cliente_id, store_foto_fn fn,
                                   void *ud)
{
    return foto_cliente_list(
        st,
        "SELECT id, cita_id, cliente_id, tipo, url, storage_path, created_at FROM "
        "fotos_cita WHERE cliente_id = ? OR cita_id IN (SELECT id FROM citas WHERE "
        "cliente_id = ?) ORDER BY created_at, id",
        DB_ARGS(db_text(cliente_id), db_text(cliente_id)), fn, ud);
}

struct anon {
    const char *user_id, *nombre, *now;
    char *email;
};

static br_err anonimizar_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct anon *a = ud;
    struct db_val pid[] = {db_text(a->user_id)};
    /* a delivery of one of her messages finishing meanwhile (outbox_done)
     * waits, or is waited for: either it sees her gone and drops the
     * message, or the message is no longer pending when it is deleted here */
    br_err rc = lock_on(db, c, OUTBOX_LOCK_CLIENTE, a->user_id);
    if (!rc)
        rc = EXEC(db, c, "SELECT email FROM auth_users WHERE id = ? AND eliminado_en IS NULL", pid,
                  one_text_dup, &a->email, NULL);
    if (rc) return rc;
    if (!a->email) return err_set(BR_NOTFOUND, "Usuario no encontrado");
    /* a booking of hers that began before her sessions ended and committed
     * after her appointments were cancelled: cancelled first (the caller
     * goes round again); one after this commit sees her gone */
    bool booked = false;
    struct db_val pf[] = {db_text(a->user_id), db_text(a->now)};
    rc = lock_on(db, c, LOCK_CITAS_CLIENTE, a->user_id);
    if (!rc)
        rc = EXEC(db, c,
                  "SELECT 1 FROM citas WHERE cliente_id = ? AND estado = 'confirmada' AND "
                  "fecha_inicio > ? LIMIT 1",
                  pf, one_flag, &booked, NULL);
    if (!rc && booked) rc = err_set(BR_CONFLICT, "booked meanwhile");
    if (rc) return rc;
    char *key = xasprintf("email:%s", a->email);
    struct db_val pk[] = {db_text(key)};
    if (!rc) rc = EXEC(db, c, "DELETE FROM auth_throttle WHERE key = ?", pk, NULL, NULL, NULL);
    free(key);
    static const char *const by_id[] = {
        "DELETE FROM cuenta_correo WHERE user_id = ?",
        "DELETE FROM cuenta_tokens WHERE user_id = ?",
        "DELETE FROM consentimientos WHERE cliente_id = ?",
        "DELETE FROM whatsapp_consentimientos WHERE cliente_id = ?",
        "DELETE FROM whatsapp_envios WHERE cliente_id = ?",
        /* her waiting list's notices, by either channel */
        ("DELETE FROM mail_outbox WHERE kind = 'aviso_espera' AND cita_id IN "
         "(SELECT id FROM lista_espera WHERE cliente_id = ?)"),
        "DELETE FROM lista_espera WHERE cliente_id = ?",
        /* the messages to her about her appointments, to any address or
         * number she had; of those still waiting only the e-mails stay, to
         * tell her of the cancellations (and go once sent: outbox_done) */
        ("DELETE FROM mail_outbox WHERE kind NOT IN " OUTBOX_AVISOS
         " AND (status <> 'pending' OR canal = 'whatsapp') AND cita_id IN "
         "(SELECT id FROM citas WHERE cliente_id = ?)"),
        "DELETE FROM auth_sessions WHERE user_id = ?",
        "UPDATE citas SET notas = NULL WHERE cliente_id = ?",
    };
    for (size_t i = 0; !rc && i < ARRAY_LEN(by_id); i++)
        rc = EXEC(db, c, by_id[i], pid, NULL, NULL, NULL);
    struct db_val pp[] = {db_text(a->nombre), db_text(a->user_id)};
    if (!rc)
        rc = EXEC(db, c, "UPDATE perfiles SET nombre = ?, telefono = NULL WHERE id = ?", pp, NULL,
                  NULL, NULL);
    /* the barber's notices about her appointments keep them, without her */
    if (!rc)
        rc = EXEC(
            db, c,
            "UPDATE mail_outbox SET cliente_nombre = ?, notas = NULL WHERE kind IN " OUTBOX_AVISOS
            " AND cita_id IN (SELECT id FROM citas WHERE cliente_id = ?)",
            pp, NULL, NULL, NULL);
    char *gone = xasprintf("%s" EMAIL_ELIMINADO_SUFFIX, a->user_id);
    struct db_val pu[] = {db_text(gone), db_text(a->now), db_text(a->user_id)};
    if (!rc)
        rc = EXEC(db, c,
                  "UPDATE auth_users SET email = ?, password_hash = '', last_sign_in_at = NULL, "
                  "eliminado_en = ? WHERE id = ?",
                  pu, NULL, NULL, NULL);
    free(gone);
    return rc;
}

br_err store_cuenta_anonimizar(struct store *st, const char *user_id, const char *nombre,
                               const char *now)
{
    struct anon a = {user_id, nombre, now, NULL};
    br_err rc = in_tx(st, anonimizar_tx, &a);
    free(a.email);
    return rc;
}
