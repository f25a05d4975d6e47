/*
 * clientes.c - the front desk's clients and the attendance of
 * appointments (see store/clientes.h).
 */
#include "store_int.h"
#include "citas.h"
#include "../domain/avisos.h"
#include "../domain/roles.h"
#include "../domain/rules.h"

/* --- finding clients ------------------------------------------------------------------ */

/* A client's counts, each from the index citas_cliente_estado_inicio. */
#define CLIENTE_COUNTS                                                                             \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id AND c.estado = 'completada'), "       \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id AND c.estado = 'no_presentado')"
#define CLIENTE_COLS                                                                               \
    "SELECT p.id, p.rol, p.nombre, p.telefono, p.created_at, u.email, " CUENTA_RECLAMADA_SQL       \
    ", " CLIENTE_COUNTS " "                                                                        \
    "FROM perfiles p JOIN auth_users u ON u.id = p.id "
/* a name as rule_busqueda_fold folds it: lowercase, the Spanish accents plain */
#define FOLD(x)                                                                                        \
    "replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace("         \
    "replace(replace(replace(lower(" x                                                                 \
    "), 'á', 'a'), 'é', 'e'), 'í', 'i'), 'ó', 'o'), 'ú', 'u'), "                                  \
    "'ü', 'u'), 'ñ', 'n'), 'Á', 'a'), 'É', 'e'), 'Í', 'i'), 'Ó', 'o'), 'Ú', 'u'), 'Ü', 'u'), " \
    "'Ñ', 'n')"
/* a phone's digits (rule_telefono_digitos) */
#define DIGITS                                                                                     \
    "replace(replace(replace(replace(replace(replace(coalesce(p.telefono, ''), ' ', ''), '-', "    \
    "''), '.', ''), '(', ''), ')', ''), '+', '')"
/* those digits as a LIKE pattern that matches only itself (with ESCAPE '\'):
 * a stored phone is anybody's text, and a '%' in it must not match every number */
#define DIGITS_PATTERN "replace(replace(replace(" DIGITS ", '\\', '\\\\'), '%', '\\%'), '_', '\\_')"
#define CLIENTE_MATCH                                                                              \
    "(" FOLD("coalesce(p.nombre, '')") " LIKE ? ESCAPE '\\' OR coalesce(p.telefono, '') LIKE ? "   \
                                       "ESCAPE '\\' OR (u.email LIKE ? ESCAPE '\\' AND u.email "   \
                                       "NOT LIKE '" EMAIL_NINGUNO_PREFIX "%') "                    \
                                       "OR (? <> '' AND (" DIGITS                                  \
                                       " LIKE '%' || ? || '%' OR (length(" DIGITS                  \
                                       ") >= 6 AND ? LIKE '%' || " DIGITS_PATTERN                  \
                                       " ESCAPE '\\'))))"
#define CLIENTE_AFTER                                                                              \
    "(coalesce(p.nombre, ''), p.id) > ((SELECT coalesce(nombre, '') FROM perfiles WHERE id = ?), " \
    "?)"
#define CLIENTE_ORDER " ORDER BY coalesce(p.nombre, ''), p.id LIMIT ?"

static bool cliente_decode(struct cliente_view *v, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    COPY(v->perfil.id, &c[0]);
    v->perfil.rol = (char *)text_or_empty(&c[1]);
    v->perfil.nombre = (char *)text_or_null(&c[2]);
    v->perfil.telefono = (char *)text_or_null(&c[3]);
    COPY(v->perfil.created_at, &c[4]);
    const char *email = text_or_null(&c[5]);
    v->email = email_es_direccion(email) ? email : NULL;
    v->puede_entrar = as_int(&c[6]) != 0;
    v->completadas = as_int(&c[7]);
    v->no_presentado = as_int(&c[8]);
    return fits;
}

LISTING(clientes, struct cliente_view, store_cliente_fn, cliente_decode)

br_err store_clientes_page(struct store *st, const char *patron, const char *digitos,
                           const char *after_id, int64_t limit, store_cliente_fn fn, void *ud)
{
    struct db_val p[9];
    int n = 0;
    if (patron) {
        const char *d = digitos ? digitos : "";
        p[n++] = db_text(patron);
        p[n++] = db_text(patron);
        p[n++] = db_text(patron);
        p[n++] = db_text(d);
        p[n++] = db_text(d);
        p[n++] = db_text(d);
    }
    if (after_id) {
        p[n++] = db_text(after_id);
        p[n++] = db_text(after_id);
    }
    p[n++] = db_int(limit > 0 ? limit : INT64_MAX);
    /* a deleted account is nobody to find (store_cliente_get still reads it),
     * nor a staff account (the desk serves clients);
     * known by its address, which an export carries (eliminado_en it does not) */
#define CLIENTE_LIVE                                                                               \
    CLIENTE_COLS "WHERE u.email NOT LIKE '%" EMAIL_ELIMINADO_SUFFIX                                \
                 "' AND p.rol NOT IN " ROL_STAFF_SQL
    static const char *const sql[4] = {
        CLIENTE_LIVE CLIENTE_ORDER,
        CLIENTE_LIVE " AND " CLIENTE_MATCH CLIENTE_ORDER,
        CLIENTE_LIVE " AND " CLIENTE_AFTER CLIENTE_ORDER,
        CLIENTE_LIVE " AND " CLIENTE_MATCH " AND " CLIENTE_AFTER CLIENTE_ORDER,
    };
#undef CLIENTE_LIVE
    return clientes_list(st, sql[(patron ? 1 : 0) + (after_id ? 2 : 0)], p, n, fn, ud);
}

static void cliente_own(struct cliente_view *v)
{
    v->perfil.rol = xstrdup(v->perfil.rol);
    v->perfil.nombre = xstrdup_or_null(v->perfil.nombre);
    v->perfil.telefono = xstrdup_or_null(v->perfil.telefono);
    v->email = xstrdup_or_null(v->email);
}

OWNED_ROW(cliente_one, struct cliente_view, cliente_decode, cliente_own)

br_err store_cliente_get(struct store *st, const char *id, struct cliente_view *c)
{
    memset(c, 0, sizeof *c);
    br_err rc = run_one(st, CLIENTE_COLS "WHERE p.id = ?", DB_ARGS(db_text(id)), cliente_one, c,
                        "no such client");
    if (rc) cliente_view_clear(c);
    return rc;
}

void cliente_view_clear(struct cliente_view *c)
{
    free((char *)c->email);
    c->email = NULL;
    perfil_clear(&c->perfil);
}

/* --- claiming a desk client's account at sign-up ----------------------------------------- */

struct claim {
    const struct new_user *u;
    bool claimed;
    br_id id;
};

/* only the desk's own records (no password: nobody has signed in to them),
 * since a guess must never hand a booking to an account someone else holds
 * (anyone may sign up with another's name and number) */
#define SQL_GEMELAS                                                                                \
    "SELECT p.id FROM perfiles p JOIN auth_users u ON u.id = p.id WHERE p.rol = 'cliente' "        \
    "AND u.password_hash = '' AND u.eliminado_en IS NULL AND " FOLD(                               \
        "coalesce(p.nombre, '')") " = ? AND (" DIGITS " = ? OR (length(" DIGITS                    \
                                  ") >= 9 AND length(?) >= 9 AND (? LIKE '%' || " DIGITS_PATTERN   \
                                  " ESCAPE '\\' OR " DIGITS " LIKE '%' || ?))) "
static const char sql_gemela[] = SQL_GEMELAS "ORDER BY p.created_at, p.id LIMIT 1";
/* the same, another client than the one named (a correction's) */
static const char sql_gemela_otra[] = SQL_GEMELAS "AND p.id <> ? LIMIT 1";

br_err store_cliente_gemela(struct store *st, const char *nombre_plegado, const char *digitos,
                            br_id id)
{
    id[0] = '\0';
    return run(st, sql_gemela,
               DB_ARGS(db_text(nombre_plegado), db_text(digitos), db_text(digitos),
                       db_text(digitos), db_text(digitos)),
               one_id, id, NULL);
}

/* Two desks typing the same person, or correcting one into another,
 * take turns (PostgreSQL; on SQLite the writers do anyway): numbers that
 * match (sql_gemela) share their last nine digits, or are the same. */
static br_err telefono_turn(struct db *db, struct db_conn *c, const char *digitos)
{
    size_t n = strlen(digitos);
    return lock_on(db, c, "cliente-telefono", digitos + (n > 9 ? n - 9 : 0));
}

br_err desk_cliente_settle(struct db *db, struct db_conn *c, const struct desk_cliente *q,
                           const char *cliente_id)
{
    if (q->nuevo) {
        br_err rc = BR_OK;
        if (q->digitos && *q->digitos) {
            /* two desks typing the same person take turns */
            rc = telefono_turn(db, c, q->digitos);
            br_id twin = "";
            if (!rc) {
                struct db_val p[] = {db_text(q->plegado), db_text(q->digitos), db_text(q->digitos),
                                     db_text(q->digitos), db_text(q->digitos)};
                rc = EXEC(db, c, sql_gemela, p, one_id, twin, NULL);
            }
            if (!rc && twin[0]) rc = err_set(BR_CONFLICT, "client exists");
        }
        return rc ? rc : user_insert(db, c, q->nuevo);
    }
    if (!q->email) return BR_OK;
    /* the address the desk typed, for a client it made without one (a
     * placeholder stands in its place) */
    struct db_val p[] = {db_text(q->email), db_text(cliente_id), db_text(EMAIL_NINGUNO_PREFIX "%")};
    br_err rc = EXEC(db, c, "UPDATE auth_users SET email = ? WHERE id = ? AND email LIKE ?", p,
                     NULL, NULL, NULL);
    return rc == BR_CONFLICT ? err_set(BR_CONFLICT, "email taken") : rc;
}

struct alta {
    const struct desk_cliente *q;
    const char *cliente_id;
};

static br_err alta_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct alta *a = ud;
    return desk_cliente_settle(db, c, a->q, a->cliente_id);
}

br_err store_cliente_alta(struct store *st, const struct desk_cliente *q, const char *cliente_id)
{
    struct alta a = {q, cliente_id};
    return in_tx(st, alta_tx, &a);
}

static br_err claim_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct claim *a = ud;
    const struct new_user *u = a->u;
    a->claimed = false;
    a->id[0] = '\0';
    struct db_val pe[] = {db_text(u->email)};
    struct {
        br_id id;
    } who = {""};
    br_err rc = EXEC(db, c,
                     "SELECT u.id FROM auth_users u JOIN perfiles p ON p.id = u.id "
                     "WHERE u.email = ? AND u.password_hash = '' AND u.eliminado_en IS NULL "
                     "AND p.rol NOT IN " ROL_STAFF_SQL,
                     pe, one_id, who.id, NULL);
    if (rc) return rc;
    if (!who.id[0]) return BR_OK;
    int64_t changes = 0;
    /* still hers and still unclaimed: the desk may have corrected the
     * address since the read (store_cliente_corregir) */
    struct db_val pu[] = {db_text(u->password_hash), db_text(u->last_sign_in_at), db_text(who.id),
                          db_text(u->email)};
    rc = EXEC(db, c,
              "UPDATE auth_users SET password_hash = ?, last_sign_in_at = ? "
              "WHERE id = ? AND password_hash = '' AND email = ?",
              pu, NULL, NULL, &changes);
    if (rc || changes != 1) return rc;
    /* a new password: the reset links asked for before no longer open it */
    rc = account_links_end(db, c, who.id);
    if (rc) return rc;
    /* the role asked for too (the operator's `user add --rol`; a client's
     * otherwise, which she is) */
    struct db_val pp[] = {db_text(u->nombre), db_text(u->telefono), db_text(u->rol),
                          db_text(who.id)};
    rc = EXEC(db, c,
              "UPDATE perfiles SET nombre = coalesce(nombre, ?), telefono = coalesce(telefono, ?), "
              "rol = coalesce(?, rol) WHERE id = ?",
              pp, NULL, NULL, NULL);
    if (!rc && u->session_hash)
        rc = session_insert(db, c, u->session_hash, who.id, u->created_at, u->session_expires_at);
    if (rc) return rc;
    a->claimed = true;
    memcpy(a->id, who.id, sizeof a->id);
    return BR_OK;
}

br_err store_user_claim(struct store *st, const struct new_user *u, bool *claimed, br_id claimed_id)
{
    struct claim a = {u, false, ""};
    br_err rc = in_tx(st, claim_tx, &a);
    *claimed = !rc && a.claimed;
    if (*claimed) memcpy(claimed_id, a.id, sizeof a.id);
    return rc;
}

/* --- correcting a client the desk made ------------------------------------------------- */

struct correccion_row {
    bool reclamada, staff, email, telefono;
    char *email_actual;    /* owned */
    char *telefono_actual; /* owned */
    char *nombre_actual;   /* owned */
};

/* row_decode_fn: what a correction starts from, as flags */
static bool correccion_decode(void *out, const struct db_val *c, int n)
{
    (void)n;
    struct correccion_row *r = out;
    r->reclamada = as_int(&c[0]) != 0;
    r->staff = as_int(&c[1]) != 0;
    r->email = as_int(&c[2]) != 0;
    r->telefono = as_int(&c[3]) != 0;
    free(r->email_actual);
    r->email_actual = dup_or_null(&c[4]);
    free(r->telefono_actual);
    r->telefono_actual = dup_or_null(&c[5]);
    free(r->nombre_actual);
    r->nombre_actual = dup_or_null(&c[6]);
    return true;
}

/* The name and phone she would have after k are another unclaimed desk
 * client's (sql_gemela's rule, herself left out): the desk's next new client
 * typed with them would be that one, not her. Checked under the lock the
 * desk's registration takes on the number (telefono_turn), so that a
 * registration and a correction, or two corrections, cannot make twins
 * between them. BR_CONFLICT with k->why, nothing written. */
static br_err correccion_gemela(struct db *db, struct db_conn *conn, struct cliente_correccion *k,
                                const struct correccion_row *r)
{
    const char *nombre = k->nombre ? k->nombre : r->nombre_actual;
    const char *telefono = k->set_telefono ? k->telefono : r->telefono_actual;
    if (!nombre || !telefono) return BR_OK;
    size_t nn = strlen(nombre), tn = strlen(telefono);
    char *plegado = xmalloc(nn + 1), *digitos = xmalloc(tn + 1);
    rule_busqueda_fold(nombre, nn, plegado);
    br_err rc = BR_OK;
    br_id twin = "";
    if (rule_telefono_digitos(telefono, tn, digitos) > 0) {
        rc = telefono_turn(db, conn, digitos);
        struct db_val p[] = {db_text(plegado), db_text(digitos), db_text(digitos),
                             db_text(digitos), db_text(digitos), db_text(k->id)};
        if (!rc) rc = EXEC(db, conn, sql_gemela_otra, p, one_id, twin, NULL);
    }
    free(plegado);
    free(digitos);
    if (!rc && twin[0]) {
        k->why = CORRECCION_GEMELA;
        rc = err_set(BR_CONFLICT, "another desk client has that name and phone");
    }
    return rc;
}

static br_err correccion_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct cliente_correccion *k = ud;
    k->why = CORRECCION_OK;
    br_err rc = client_turn(db, conn, k->id);
    struct correccion_row r = {0};
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    struct db_val pi[] = {db_text(k->id)};
    /* her row held until the commit, so that a claim at sign-up (claim_tx)
     * comes before or after, never between the read and the writes */
    if (!rc)
        rc = EXEC(db, conn,
                  "UPDATE auth_users SET password_hash = password_hash "
                  "WHERE id = ? AND password_hash = ''",
                  pi, NULL, NULL, NULL);
    if (!rc)
        rc = EXEC_ONE(
            db, conn,
            "SELECT " CUENTA_RECLAMADA_SQL ", "
            "CASE WHEN p.rol IN " ROL_STAFF_SQL " THEN 1 ELSE 0 END, "
            "CASE WHEN u.email LIKE '" EMAIL_NINGUNO_PREFIX "%' THEN 0 ELSE 1 END, "
            "CASE WHEN coalesce(p.telefono, '') = '' THEN 0 ELSE 1 END, u.email, p.telefono, "
            "p.nombre FROM auth_users u JOIN perfiles p ON p.id = u.id WHERE u.id = ?",
            pi, correccion_decode, &r, "no such client");
    if (!rc && r.staff) rc = err_set(BR_NOTFOUND, "a staff account");
    if (!rc && r.reclamada) {
        k->why = CORRECCION_RECLAMADA;
        rc = err_set(BR_CONFLICT, "her account is claimed");
    }
    bool email = k->set_email ? k->email != NULL : r.email;
    bool telefono = k->set_telefono ? k->telefono != NULL : r.telefono;
    if (!rc && !email && !telefono) {
        k->why = CORRECCION_SIN_CONTACTO;
        rc = err_set(BR_INVALID, "no address and no phone");
    }
    /* before any write: the lock it takes comes before the address's */
    if (!rc && (k->nombre || k->set_telefono)) rc = correccion_gemela(db, conn, k, &r);
    bool otro_contacto = false; /* her address or phone changes */
    if (!rc && k->set_email) {
        char *ninguno = k->email ? NULL : xasprintf("%s%s", EMAIL_NINGUNO_PREFIX, k->id);
        struct db_val pe[] = {db_text(k->email ? k->email : ninguno), db_text(k->id)};
        rc = EXEC(db, conn, "UPDATE auth_users SET email = ? WHERE id = ?", pe, NULL, NULL, NULL);
        free(ninguno);
        if (rc == BR_CONFLICT) k->why = CORRECCION_EMAIL;
        /* a link sent to the address she had no longer opens her account */
        bool changed = r.email && (!k->email || strcmp(k->email, r.email_actual) != 0);
        if (!rc && changed) rc = account_links_end(db, conn, k->id);
        if (!rc && changed) rc = her_mail_readdress(db, conn, k->id, k->email, now);
        otro_contacto = changed;
    }
    /* a number written another way (spaces, its country code) is the same
     * phone: the links sent to it stay good */
    if (k->set_telefono)
        otro_contacto =
            otro_contacto ||
            (r.telefono_actual &&
             (!k->telefono || !rule_telefono_mismo(k->telefono, r.telefono_actual, k->wa_cc)));
    /* and the appointments' links sent there no longer open them */
    if (!rc && otro_contacto) rc = appointment_links_end(db, conn, k->id, now);
    /* her consent was for the number the desk typed: it follows it */
    char antes[RULE_E164_MAX];
    if (!rc && k->set_telefono && k->wa_cc && r.telefono_actual &&
        rule_telefono_e164(r.telefono_actual, k->wa_cc, antes))
        rc = whatsapp_consent_follow(db, conn, k->id, antes, k->wa_telefono, now, k->por);
    struct db_val pp[] = {db_text(k->nombre), db_int(k->set_telefono), db_text(k->telefono),
                          db_text(k->id)};
    if (!rc && (k->nombre || k->set_telefono))
        rc = EXEC(db, conn,
                  "UPDATE perfiles SET nombre = coalesce(?, nombre), "
                  "telefono = CASE WHEN ? = 1 THEN ? ELSE telefono END WHERE id = ?",
                  pp, NULL, NULL, NULL);
    free(r.email_actual);
    free(r.telefono_actual);
    free(r.nombre_actual);
    return rc;
}

br_err store_cliente_corregir(struct store *st, struct cliente_correccion *c)
{
    return in_tx(st, correccion_tx, c);
}

/* --- attendance ------------------------------------------------------------------------ */

struct asis_row {
    br_id cliente_id;
    br_ts fecha_inicio;
    char *estado;
    br_ts marcada; /* "" when no mark */
};

/* row_decode_fn: what an attendance mark starts from (estado owned). */
static bool asis_decode(void *out, const struct db_val *c, int n)
{
    (void)n;
    struct asis_row *r = out;
    bool fits = true;
    COPY(r->cliente_id, &c[0]);
    COPY(r->fecha_inicio, &c[1]);
    COPY(r->marcada, &c[3]);
    if (!fits) return false;
    free(r->estado);
    r->estado = dup_or_null(&c[2]);
    return true;
}

static br_err asistencia_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct asistencia_cambio *a = ud;
    a->why = ASISTENCIA_OK;
    br_err rc = lock_on(db, conn, "cita", a->id);
    if (rc) return rc;
    struct asis_row r = {.estado = NULL};
    struct db_val pi[] = {db_text(a->id)};
    rc = EXEC_ONE(db, conn,
                  "SELECT cliente_id, fecha_inicio, estado, asistencia_en FROM citas WHERE id = ?",
                  pi, asis_decode, &r, "no such cita");
    bool marked =
        r.estado && (!strcmp(r.estado, "completada") || !strcmp(r.estado, "no_presentado"));
    if (!rc && r.estado && !strcmp(r.estado, "cancelada")) {
        a->why = ASISTENCIA_CANCELADA;
        rc = err_set(BR_CONFLICT, "cancelled");
    }
    if (!rc && strcmp(r.fecha_inicio, a->now) > 0) {
        a->why = ASISTENCIA_ANTES;
        rc = err_set(BR_CONFLICT, "not started");
    }
    if (!rc && marked && strcmp(r.estado, a->estado) != 0 &&
        (!r.marcada[0] || strcmp(r.marcada, a->hoy_desde) < 0)) {
        a->why = ASISTENCIA_CERRADA;
        rc = err_set(BR_CONFLICT, "marked on another day");
    }
    if (!rc) memcpy(a->cliente_id, r.cliente_id, sizeof a->cliente_id);
    bool same = r.estado && !strcmp(r.estado, a->estado);
    if (!rc && !same) {
        bool mark = strcmp(a->estado, "confirmada") != 0;
        struct db_val pu[] = {db_text(a->estado), mark ? db_text(a->now) : db_null(),
                              db_text(a->id)};
        rc = EXEC(db, conn, "UPDATE citas SET estado = ?, asistencia_en = ? WHERE id = ?", pu, NULL,
                  NULL, NULL);
    }
    free(r.estado);
    return rc;
}

br_err store_cita_asistencia(struct store *st, struct asistencia_cambio *a)
{
    a->cliente_id[0] = '\0';
    return in_tx(st, asistencia_tx, a);
}
