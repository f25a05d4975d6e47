/*
 * identity.c - the store's identity data (see store/identity.h): users and
 * their sessions (verified sessions remembered while nothing that may change
 * them was committed), sign-in throttling, perfiles and the admin's
 * listing of users.
 */
#include "store_int.h"
#include "../util/metrics.h"

#include <stdio.h>

/* --- row decoders ---------------------------------------------------------------- */

/* perfil from 5 columns: id, rol, nombre, telefono, created_at (borrowed). */
static bool perfil_view(struct perfil *p, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    COPY(p->id, &c[0]);
    p->rol = (char *)text_or_empty(&c[1]);
    p->nombre = (char *)text_or_null(&c[2]);
    p->telefono = (char *)text_or_null(&c[3]);
    COPY(p->created_at, &c[4]);
    return fits;
}

static void perfil_own(struct perfil *p)
{
    p->rol = xstrdup(p->rol);
    p->nombre = xstrdup_or_null(p->nombre);
    p->telefono = xstrdup_or_null(p->telefono);
}

/* --- verified sessions, remembered ------------------------------------------------ */

static void principal_copy(struct principal *dst, const struct principal *src)
{
    memcpy(dst->user_id, src->user_id, sizeof dst->user_id);
    dst->email = xstrdup_or_null(src->email);
    dst->has_perfil = src->has_perfil;
    if (src->has_perfil) {
        dst->perfil = src->perfil;
        dst->perfil.rol = xstrdup_or_null(src->perfil.rol);
        dst->perfil.nombre = xstrdup_or_null(src->perfil.nombre);
        dst->perfil.telefono = xstrdup_or_null(src->perfil.telefono);
    }
}

static struct session_memo *session_slot(struct store *st, const char *token_hash)
{
    /* the key is a digest already: any mix will do */
    return &st->sessions[db_touch_key(token_hash) % SESSION_MEMO];
}

/* A remembered session, when nothing that may change it was committed
 * since it was verified (a sign-out, a password or role change, a deleted
 * user are DB_TOUCH_ALL writes; anyone else's commit counts as one) and it
 * has not expired. */
static bool session_recall(struct store *st, const char *token_hash, const char *now,
                           struct principal *p)
{
    struct session_memo *m = session_slot(st, token_hash);
    bool hit = false;
    pthread_mutex_lock(&st->sessions_mu);
    if (!strcmp(m->token_hash, token_hash) && strcmp(m->expires_at, now) > 0 &&
        unchanged(st, &m->mark)) {
        principal_copy(p, &m->p);
        hit = true;
    }
    pthread_mutex_unlock(&st->sessions_mu);
    return hit;
}

static void session_remember(struct store *st, const char *token_hash, const struct db_mark *mark,
                             const char *expires_at, const struct principal *p)
{
    if (strlen(token_hash) >= sizeof st->sessions[0].token_hash ||
        strlen(expires_at) >= sizeof(br_ts))
        return;
    struct principal copy = {0}, old;
    principal_copy(&copy, p);
    struct session_memo *m = session_slot(st, token_hash);
    pthread_mutex_lock(&st->sessions_mu);
    old = m->p;
    m->p = copy;
    snprintf(m->token_hash, sizeof m->token_hash, "%s", token_hash);
    m->mark = *mark;
    snprintf(m->expires_at, sizeof m->expires_at, "%s", expires_at);
    pthread_mutex_unlock(&st->sessions_mu);
    principal_clear(&old);
}

/* --- identity ---------------------------------------------------------------------- */

br_err user_insert(struct db *db, struct db_conn *c, const struct new_user *u)
{
    struct db_val pu[] = {db_text(u->id), db_text(u->email), db_text(u->password_hash),
                          db_text(u->created_at), db_text(u->last_sign_in_at)};
    br_err rc = EXEC(db, c,
                     "INSERT INTO auth_users (id, email, password_hash, created_at, "
                     "last_sign_in_at) VALUES (?, ?, ?, ?, ?)",
                     pu, NULL, NULL, NULL);
    if (rc == BR_CONFLICT) return err_set(BR_CONFLICT, "email taken");
    if (rc) return rc;
    struct db_val pp[] = {db_text(u->id), db_text(u->rol), db_text(u->nombre), db_text(u->telefono),
                          db_text(u->created_at)};
    rc = EXEC(db, c,
              "INSERT INTO perfiles (id, rol, nombre, telefono, created_at) VALUES (?, ?, ?, ?, ?)",
              pp, NULL, NULL, NULL);
    if (rc || !u->session_hash) return rc;
    return session_insert(db, c, u->session_hash, u->id, u->created_at, u->session_expires_at);
}

/* See store_int.h. */
br_err session_insert(struct db *db, struct db_conn *c, const char *token_hash, const char *user_id,
                      const char *now, const char *expires_at)
{
    struct db_val p[] = {db_text(token_hash), db_text(user_id), db_text(now), db_text(expires_at)};
    return EXEC(db, c,
                "INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                p, NULL, NULL, NULL);
}

static br_err user_create_tx(struct db *db, struct db_conn *c, void *ud)
{
    return user_insert(db, c, ud);
}

br_err store_user_create(struct store *st, const struct new_user *u)
{
    return in_tx(st, user_create_tx, (void *)u);
}

struct user_pw {
    struct user *u;
    char **hash;
    bool found;
};

static br_err user_pw_row(void *ud, const struct db_val *c, int n)
{
    bool fits = true;
    (void)n;
    struct user_pw *r = ud;
    COPY(r->u->id, &c[0]);
    r->u->email = dup_or_null(&c[1]);
    COPY(r->u->created_at, &c[2]);
    r->u->last_sign_in_at = dup_or_null(&c[3]);
    if (!fits) return too_long();
    *r->hash = dup_or_null(&c[4]);
    r->found = true;
    return BR_OK;
}

br_err store_user_by_email(struct store *st, const char *email, struct user *u,
                           char **password_hash)
{
    memset(u, 0, sizeof *u);
    *password_hash = NULL;
    struct user_pw r = {u, password_hash, false};
    br_err rc = run(st,
                    "SELECT id, email, created_at, last_sign_in_at, password_hash "
                    "FROM auth_users WHERE email = ?",
                    DB_ARGS(db_text(email)), user_pw_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such user");
    if (rc) {
        user_clear(u);
        free(*password_hash);
        *password_hash = NULL;
    }
    return rc;
}

/* See store_int.h. */
br_err account_links_end(struct db *db, struct db_conn *c, const char *user_id)
{
    struct db_val p[] = {db_text(user_id)};
    br_err rc = EXEC(db, c, "DELETE FROM cuenta_tokens WHERE user_id = ? AND used_at IS NULL", p,
                     NULL, NULL, NULL);
    /* the notice to the old address (email_aviso) carries no link: it goes */
    if (!rc)
        rc = EXEC(db, c,
                  "DELETE FROM cuenta_correo WHERE user_id = ? AND kind IN ('restablecer', "
                  "'email_confirmar') AND status = 'pending'",
                  p, NULL, NULL, NULL);
    return rc;
}

/* See store_int.h. */
br_err password_set(struct db *db, struct db_conn *c, const char *user_id, const char *hash)
{
    int64_t changes = 0;
    struct db_val p[] = {db_text(hash), db_text(user_id)};
    br_err rc = EXEC(db, c, "UPDATE auth_users SET password_hash = ? WHERE id = ?", p, NULL, NULL,
                     &changes);
    if (!rc && changes == 0) rc = err_set(BR_NOTFOUND, "Usuario no encontrado");
    if (!rc) rc = account_links_end(db, c, user_id);
    return rc;
}

/* A new password signs every session out. */
static br_err set_password_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct row_args *a = ud;
    br_err rc = password_set(db, c, a->id, a->arg);
    struct db_val q[] = {db_text(a->id)};
    if (!rc) rc = EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ?", q, NULL, NULL, NULL);
    return rc;
}

br_err store_user_set_password(struct store *st, const char *user_id, const char *password_hash)
{
    struct row_args a = {user_id, password_hash};
    return in_tx(st, set_password_tx, &a);
}

struct session_args {
    const char *user_id, *hash, *now, *expires, *password_hash;
};

static br_err session_open_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct session_args *a = ud;
    /* first, on her row (PostgreSQL locks it, and checks it again after a
     * change that held it): the password still the one checked */
    int64_t n = 0;
    struct db_val pu[] = {db_text(a->now), db_text(a->user_id), db_text(a->password_hash)};
    br_err rc = EXEC(db, c,
                     "UPDATE auth_users SET last_sign_in_at = ? WHERE id = ? AND password_hash = ? "
                     "AND eliminado_en IS NULL",
                     pu, NULL, NULL, &n);
    if (!rc && n != 1) return err_set(BR_NOTFOUND, "the password changed meanwhile");
    struct db_val pd[] = {db_text(a->user_id), db_text(a->now)};
    if (!rc)
        rc = EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ? AND expires_at <= ?", pd,
                  NULL, NULL, NULL);
    if (!rc) rc = session_insert(db, c, a->hash, a->user_id, a->now, a->expires);
    return rc;
}

br_err store_session_open(struct store *st, const char *user_id, const char *token_hash,
                          const char *now, const char *expires_at, const char *password_hash)
{
    struct session_args a = {user_id, token_hash, now, expires_at, password_hash};
    return in_tx_as(st, DB_TOUCH_NONE, session_open_tx, &a);
}

br_err principal_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct principal_row *r = ud;
    bool fits = true;
    COPY(r->p->user_id, &c[0]);
    if (!fits) return too_long();
    r->p->email = dup_or_null(&c[1]);
    if (c[2].type != DB_NULL) {
        if (!perfil_view(&r->p->perfil, &c[2], 5)) return too_long();
        perfil_own(&r->p->perfil);
        r->p->has_perfil = true;
    }
    COPY(r->expires_at, &c[7]);
    if (!fits) return too_long();
    r->found = true;
    return BR_OK;
}

br_err store_session_principal(struct store *st, const char *token_hash, const char *now,
                               struct principal *p)
{
    memset(p, 0, sizeof *p);
    if (st->sessions) {
        bool hit = session_recall(st, token_hash, now, p);
        metric_inc(hit ? M_MEMO_SESSION_HITS : M_MEMO_SESSION_MISSES);
        if (hit) return BR_OK;
    }
    /* the mark is taken before the query: unchanged later, the answer holds
     * (a session depends on what only DB_TOUCH_ALL writes change: sign-out,
     * passwords, roles, profiles, users) */
    struct db_mark mark;
    bool marked = st->sessions && mark_now(st, DB_TOUCH_NONE, &mark);
    struct principal_row r = {p, false, ""};
    br_err rc = run(st,
                    "SELECT u.id, u.email, p.id, p.rol, p.nombre, p.telefono, p.created_at, "
                    "s.expires_at "
                    "FROM auth_sessions s JOIN auth_users u ON u.id = s.user_id "
                    "LEFT JOIN perfiles p ON p.id = u.id "
                    "WHERE s.token_hash = ? AND s.expires_at > ?",
                    DB_ARGS(db_text(token_hash), db_text(now)), principal_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such session");
    if (rc) principal_clear(p);
    if (!rc && marked) session_remember(st, token_hash, &mark, r.expires_at, p);
    return rc;
}

br_err store_session_close(struct store *st, const char *token_hash)
{
    return run_write(st, "DELETE FROM auth_sessions WHERE token_hash = ?",
                     DB_ARGS(db_text(token_hash)), NULL);
}

struct users_each {
    store_user_fn fn;
    void *ud;
};

static br_err users_row(void *ud, const struct db_val *c, int n)
{
    bool fits = true;
    (void)n;
    struct users_each *a = ud;
    struct user u;
    COPY(u.id, &c[0]);
    u.email = (char *)text_or_empty(&c[1]);
    COPY(u.created_at, &c[2]);
    u.last_sign_in_at = (char *)text_or_null(&c[3]);
    if (!fits) return too_long();
    struct perfil p;
    bool has = c[4].type != DB_NULL;
    if (has && !perfil_view(&p, &c[4], 5)) return too_long();
    return a->fn(a->ud, &u, has ? &p : NULL);
}

br_err store_users_each(struct store *st, store_user_fn fn, void *ud)
{
    struct users_each a = {fn, ud};
    return run(st,
               "SELECT u.id, u.email, u.created_at, u.last_sign_in_at, "
               "p.id, p.rol, p.nombre, p.telefono, p.created_at "
               "FROM auth_users u LEFT JOIN perfiles p ON p.id = u.id ORDER BY u.email",
               NULL, 0, users_row, &a, NULL);
}

/* --- sign-in throttling ---------------------------------------------------------- */

static int64_t ts_ms(const struct db_val *v)
{
    int64_t ms = 0;
    if (v->type != DB_TEXT || !iso8601_parse(v->s, v->n, &ms)) return 0;
    return ms;
}

struct throttle_row {
    struct throttle_state *s;
    bool found;
};

static br_err throttle_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct throttle_row *r = ud;
    r->s->failures = as_int(&c[0]);
    r->s->window_start_ms = ts_ms(&c[1]);
    r->s->locked_until_ms = ts_ms(&c[2]);
    r->s->lockouts = as_int(&c[3]);
    r->s->forget_at_ms = ts_ms(&c[4]);
    r->found = true;
    return BR_OK;
}

static const char sql_throttle_get[] =
    "SELECT failures, window_start, locked_until, lockouts, forget_at FROM auth_throttle "
    "WHERE key = ? AND forget_at > ?";

br_err store_throttle_get(struct store *st, const char *key, int64_t now_ms,
                          struct throttle_state *s, bool *found)
{
    memset(s, 0, sizeof *s);
    br_ts now;
    iso8601_format(now_ms, now);
    struct throttle_row r = {s, false};
    br_err rc =
        run(st, sql_throttle_get, DB_ARGS(db_text(key), db_text(now)), throttle_row, &r, NULL);
    if (rc || !r.found) memset(s, 0, sizeof *s);
    *found = !rc && r.found;
    return rc;
}

struct throttle_update {
    struct throttle_key *keys;
    int n;
    int64_t now_ms;
    bool prune;
    store_throttle_fn fn;
    void *ud;
};

static br_err throttle_update_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct throttle_update *a = ud;
    br_ts now;
    iso8601_format(a->now_ms, now);
    br_err rc = BR_OK;
    if (a->prune) {
        struct db_val pd[] = {db_text(now)};
        rc = EXEC(db, c, "DELETE FROM auth_throttle WHERE forget_at <= ?", pd, NULL, NULL, NULL);
    }
    /* every key locked and read before anything is decided: no other
     * writer's attempt in between */
    for (int i = 0; i < a->n && !rc; i++) {
        struct throttle_key *k = &a->keys[i];
        memset(&k->state, 0, sizeof k->state);
        k->op = THROTTLE_KEEP;
        struct throttle_row r = {&k->state, false};
        struct db_val pg[] = {db_text(k->key), db_text(now)};
        rc = db->ops->lock(c, k->key);
        if (!rc) rc = EXEC(db, c, sql_throttle_get, pg, throttle_row, &r, NULL);
        if (!r.found) memset(&k->state, 0, sizeof k->state);
        k->found = r.found;
    }
    if (rc) return rc;
    a->fn(a->ud, a->keys, a->n);
    for (int i = 0; i < a->n && !rc; i++) {
        const struct throttle_key *k = &a->keys[i];
        if (k->op == THROTTLE_DELETE) {
            struct db_val p[] = {db_text(k->key)};
            rc = EXEC(db, c, "DELETE FROM auth_throttle WHERE key = ?", p, NULL, NULL, NULL);
        } else if (k->op == THROTTLE_PUT) {
            const struct throttle_state *s = &k->state;
            br_ts ws, lu, fa;
            iso8601_format(s->window_start_ms, ws);
            iso8601_format(s->locked_until_ms, lu);
            iso8601_format(s->forget_at_ms, fa);
            struct db_val pu[] = {db_text(k->key),     db_int(s->failures),
                                  db_text(ws),         s->locked_until_ms ? db_text(lu) : db_null(),
                                  db_int(s->lockouts), db_text(fa)};
            rc = EXEC(db, c,
                      "INSERT INTO auth_throttle (key, failures, window_start, locked_until, "
                      "lockouts, forget_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE "
                      "SET failures = excluded.failures, window_start = excluded.window_start, "
                      "locked_until = excluded.locked_until, lockouts = excluded.lockouts, "
                      "forget_at = excluded.forget_at",
                      pu, NULL, NULL, NULL);
        }
    }
    return rc;
}

br_err store_throttle_update(struct store *st, struct throttle_key *keys, int n, int64_t now_ms,
                             bool prune, store_throttle_fn fn, void *ud)
{
    struct throttle_update a = {keys, n, now_ms, prune, fn, ud};
    return in_tx_as(st, DB_TOUCH_NONE, throttle_update_tx, &a);
}

/* --- perfiles --------------------------------------------------------------------- */

OWNED_ROW(perfil_decode, struct perfil, perfil_view, perfil_own)

br_err store_perfil_get(struct store *st, const char *id, struct perfil *p)
{
    memset(p, 0, sizeof *p);
    return run_one(st, "SELECT id, rol, nombre, telefono, created_at FROM perfiles WHERE id = ?",
                   DB_ARGS(db_text(id)), perfil_decode, p, "no such profile");
}

struct perfil_update {
    const char *id;
    const struct perfil_patch *patch;
};

static br_err perfil_update_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct perfil_update *a = ud;
    const struct perfil_patch *patch = a->patch;
    br_err rc = patch->by_client ? client_turn(db, c, a->id) : BR_OK;
    struct db_val p[] = {db_int(patch->rol != NULL),
                         db_text(patch->rol),
                         db_int(patch->nombre != NULL),
                         db_text(patch->nombre),
                         db_int(patch->set_telefono),
                         db_text(patch->telefono),
                         db_text(a->id)};
    if (!rc)
        rc = EXEC(db, c,
                  "UPDATE perfiles SET "
                  "rol = CASE WHEN ? = 1 THEN ? ELSE rol END, "
                  "nombre = CASE WHEN ? = 1 THEN ? ELSE nombre END, "
                  "telefono = CASE WHEN ? = 1 THEN ? ELSE telefono END "
                  "WHERE id = ?",
                  p, NULL, NULL, NULL);
    return rc;
}

br_err store_perfil_update(struct store *st, const char *id, const struct perfil_patch *patch)
{
    struct perfil_update a = {id, patch};
    return in_tx(st, perfil_update_tx, &a);
}

/* A user of the admin's page from its 12 columns (borrowed). */
static bool usuario_view(struct usuario_view *v, const struct db_val *c, int n)
{
    (void)n;
    if (!perfil_view(&v->perfil, c, n)) return false;
    v->email = text_or_empty(&c[5]);
    v->ultimo_acceso = text_or_null(&c[6]);
    v->creado_en = c[7].type == DB_TEXT ? c[7].s : v->perfil.created_at;
    v->total_citas = as_int(&c[8]);
    if (!email_es_direccion(v->email)) v->email = ""; /* a desk client without one */
    v->completadas = as_int(&c[9]);
    v->no_presentado = as_int(&c[10]);
    v->puede_entrar = as_int(&c[11]) != 0;
    return true;
}

LISTING(usuarios, struct usuario_view, store_usuario_fn, usuario_view)

#define SQL_USUARIOS                                                                               \
    "SELECT p.id, p.rol, p.nombre, p.telefono, p.created_at, "                                     \
    "u.email, u.last_sign_in_at, u.created_at, "                                                   \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id), "                                   \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id AND c.estado = 'completada'), "       \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id AND c.estado = "                      \
    "'no_presentado'), " CUENTA_RECLAMADA_SQL " "                                                  \
    "FROM perfiles p LEFT JOIN auth_users u ON u.id = p.id "
#define USUARIOS_ORDER     " ORDER BY p.created_at DESC, p.id DESC LIMIT ?"
#define SQL_USUARIOS_FIRST SQL_USUARIOS USUARIOS_ORDER
#define SQL_USUARIOS_AFTER SQL_USUARIOS "WHERE (p.created_at, p.id) < (?, ?)" USUARIOS_ORDER

br_err store_usuarios_page(struct store *st, const char *before_created, const char *before_id,
                           int64_t limit, store_usuario_fn fn, void *ud)
{
    struct db_val lim = db_int(limit > 0 ? limit : INT64_MAX);
    if (!before_created) return usuarios_list(st, SQL_USUARIOS_FIRST, &lim, 1, fn, ud);
    return usuarios_list(st, SQL_USUARIOS_AFTER,
                         DB_ARGS(db_text(before_created), db_text(before_id), lim), fn, ud);
}

const struct hot_stmt identity_hot[] = {
    {"usuarios", "EXPLAIN QUERY PLAN " SQL_USUARIOS_FIRST, 1},
    {"usuarios_after", "EXPLAIN QUERY PLAN " SQL_USUARIOS_AFTER, 3},
    {NULL, NULL, 0},
};
