/*
 * store.c - the repository: every statement the service runs, written once
 * over the SQL port (see store.h, db.h).
 *
 * Each operation leases a connection for just as long as it needs it; a
 * transaction stays on one connection. No statement is ever built from
 * input: values travel as bound parameters and every SQL text is a constant
 * (the listing's variants are assembled once from constant fragments).
 */
#include "store.h"
#include "db.h"
#include "names.h"
#include "../domain/roles.h"
#include "../config.h"
#include "../util/buf.h"
#include "../util/iso8601.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_MEMO     1024  /* verified sessions remembered (direct-mapped by token hash) */
#define LISTING_MEMO     256   /* clients' listings remembered (direct-mapped by key) */
#define LISTING_MEMO_MAX 16384 /* the longest listing remembered, in bytes: 4 MiB in all */
#define SLOTS_MEMO       256   /* days' free slots remembered (direct-mapped by key) */
#define SLOTS_MEMO_MAX   32768 /* the longest day remembered, in bytes: 8 MiB in all */

struct session_memo {
    char token_hash[65]; /* "" when empty */
    struct db_mark mark;
    br_ts expires_at;
    struct principal p;
};

struct answer_memo {
    struct db_mark mark;
    char key[STORE_MEMO_KEY]; /* listings: whose and which; "" for the catalog's */
    char *text;               /* NULL when empty */
    size_t len;
    char tag[STORE_MEMO_TAG];
    int64_t from_ms, until_ms; /* the clock's span in which it holds */
};

struct store {
    struct db *db;
    pthread_mutex_t memo_mu; /* sessions and answers */
    struct session_memo *sessions;
    struct answer_memo answers[STORE_MEMO_N];
    struct answer_memo *listings; /* LISTING_MEMO of them */
    struct answer_memo *slots;    /* SLOTS_MEMO of them */
    /* the catalog's names as of a version (names.h), for the listings */
    pthread_mutex_t names_mu;
    bool names_on;       /* BARBERIA_MEMO */
    bool names_loading;  /* a thread is reading them: the others join */
    int64_t names_retry; /* after a load failed (clock_mono_ms): join until then */
    struct names *names; /* NULL until read */
};

/* --- plumbing ---------------------------------------------------------------- */

static br_err run(struct store *st, const char *sql, const struct db_val *p, int n, db_row_fn fn,
                  void *ud, int64_t *changes)
{
    if (!changes && st->db->ops->read) return st->db->ops->read(st->db, sql, p, n, fn, ud);
    struct db_conn *c = NULL;
    br_err rc = st->db->ops->acquire(st->db, &c);
    if (rc) return rc;
    rc = st->db->ops->exec(c, sql, p, n, fn, ud, changes);
    st->db->ops->release(st->db, c);
    return rc;
}

typedef db_tx_fn tx_fn;

/* Runs fn inside one write transaction (see db_ops.write: committed on
 * BR_OK, else undone, and durable when this returns). */
static br_err in_tx_as(struct store *st, uint64_t touch, tx_fn fn, void *ud)
{
    return st->db->ops->write(st->db, fn, ud, touch);
}

/* A write that may change anything the memos read (the safe default). */
static br_err in_tx(struct store *st, tx_fn fn, void *ud)
{
    return in_tx_as(st, DB_TOUCH_ALL, fn, ud);
}

struct one_write {
    const char *sql;
    const struct db_val *p;
    int n;
    int64_t *changes;
};

static br_err one_write_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct one_write *w = ud;
    return db->ops->exec(c, w->sql, w->p, w->n, NULL, NULL, w->changes);
}

/* One statement that writes, as a transaction of its own: it goes through
 * the writer like every other write (a group commit, in order). */
static br_err run_write_as(struct store *st, uint64_t touch, const char *sql,
                           const struct db_val *p, int n, int64_t *changes)
{
    struct one_write w = {sql, p, n, changes};
    return in_tx_as(st, touch, one_write_tx, &w);
}

static br_err run_write(struct store *st, const char *sql, const struct db_val *p, int n,
                        int64_t *changes)
{
    return run_write_as(st, DB_TOUCH_ALL, sql, p, n, changes);
}

/* A write to bookkeeping no remembered answer reads (sessions' sign-in
 * counters, object intents, leases, the outbox, photo records). */
static br_err run_write_aside(struct store *st, const char *sql, const struct db_val *p, int n,
                              int64_t *changes)
{
    return run_write_as(st, DB_TOUCH_NONE, sql, p, n, changes);
}

#define EXEC(db, c, sql, params, fn, ud, ch)                                                       \
    (db)->ops->exec(c, sql, params, (int)ARRAY_LEN(params), fn, ud, ch)

/* A statement whose outcome the transaction does not read: PostgreSQL
 * sends it without waiting, its error comes back with the commit (see
 * db_ops.exec_later). */
#define EXEC_LATER(db, c, sql, params)                                                             \
    ((db)->ops->exec_later ? (db)->ops->exec_later(c, sql, params, (int)ARRAY_LEN(params))         \
                           : EXEC(db, c, sql, params, NULL, NULL, NULL))

static const char *text_or_null(const struct db_val *v)
{
    return v->type == DB_TEXT ? v->s : NULL;
}

static const char *text_or_empty(const struct db_val *v)
{
    return v->type == DB_TEXT ? v->s : "";
}

static char *dup_or_null(const struct db_val *v)
{
    return v->type == DB_TEXT ? xstrndup(v->s, v->n) : NULL;
}

/* Copies a column into a fixed field (an id, a timestamp) with its length;
 * false, leaving the field empty, when it does not fit: never a silently
 * shortened value. */
static bool copy_fixed(char *dst, size_t cap, const struct db_val *v)
{
    size_t n = v->type == DB_TEXT ? v->n : 0;
    if (n >= cap) {
        dst[0] = '\0';
        return false;
    }
    if (n) memcpy(dst, v->s, n);
    dst[n] = '\0';
    return true;
}
/* in a function with a local `bool fits = true`, which it clears */
#define COPY(dst, v) (fits = copy_fixed(dst, sizeof(dst), v) && fits)

static br_err too_long(void)
{
    return err_set(BR_STORE, "a stored id or timestamp does not fit its field");
}

static int64_t as_int(const struct db_val *v)
{
    switch (v->type) {
    case DB_INT:
        return v->i;
    case DB_REAL:
        return (int64_t)v->d;
    case DB_TEXT:
        return strtoll(v->s, NULL, 10);
    default:
        return 0;
    }
}

static double as_real(const struct db_val *v)
{
    switch (v->type) {
    case DB_INT:
        return (double)v->i;
    case DB_REAL:
        return v->d;
    case DB_TEXT:
        return strtod(v->s, NULL);
    default:
        return 0;
    }
}

/* Row callback for single-value queries: stores the first column. */
static br_err one_int(void *ud, const struct db_val *cols, int n)
{
    *(int64_t *)ud = n > 0 ? as_int(&cols[0]) : 0;
    return BR_OK;
}

static br_err one_flag(void *ud, const struct db_val *cols, int n)
{
    (void)cols;
    (void)n;
    *(bool *)ud = true;
    return BR_OK;
}

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
    pthread_mutex_init(&st->memo_mu, NULL);
    pthread_mutex_init(&st->names_mu, NULL);
    st->names_on = cfg->memo;
    /* the memos exist where the database can tell (db_ops.mark) and
     * BARBERIA_MEMO allows them: store_remembers */
    if (db->ops->mark && cfg->memo) {
        st->sessions = xcalloc(SESSION_MEMO, sizeof *st->sessions);
        st->listings = xcalloc(LISTING_MEMO, sizeof *st->listings);
        st->slots = xcalloc(SLOTS_MEMO, sizeof *st->slots);
    }
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
    for (size_t i = 0; i < STORE_MEMO_N; i++)
        free(st->answers[i].text);
    if (st->listings)
        for (size_t i = 0; i < LISTING_MEMO; i++)
            free(st->listings[i].text);
    free(st->listings);
    if (st->slots)
        for (size_t i = 0; i < SLOTS_MEMO; i++)
            free(st->slots[i].text);
    free(st->slots);
    pthread_mutex_destroy(&st->memo_mu);
    names_unref(st->names);
    pthread_mutex_destroy(&st->names_mu);
    free(st);
}

/* --- answers remembered while nothing they read changed (see store.h) ------------ */

bool store_remembers(const struct store *st)
{
    return st->listings != NULL;
}

/* Only called where the memos exist, so where the adapter has mark. */
static bool mark_now(struct store *st, uint64_t key, struct db_mark *m)
{
    return st->db->ops->mark(st->db, key, m);
}

/* Whether what was read at m still holds (the caller holds memo_mu). */
static bool unchanged(struct store *st, const struct db_mark *m)
{
    return st->db->ops->unchanged(st->db, m);
}

/* A copy of m's answer when it still holds (at now_ms, for answers that
 * depend on the clock); else false and *t is a mark for remembering the
 * answer read afresh (taken now, before that read). */
static bool recall(struct store *st, struct answer_memo *m, uint64_t touch, const char *key,
                   int64_t now_ms, struct store_memo_ticket *t, char **text, size_t *len, char *tag,
                   enum metric hits, enum metric misses)
{
    bool hit = false;
    pthread_mutex_lock(&st->memo_mu);
    if (m->text && !strcmp(m->key, key) && now_ms >= m->from_ms && now_ms < m->until_ms &&
        unchanged(st, &m->mark)) {
        *text = xmalloc(m->len + 1);
        memcpy(*text, m->text, m->len + 1);
        *len = m->len;
        if (tag) memcpy(tag, m->tag, STORE_MEMO_TAG);
        hit = true;
    }
    pthread_mutex_unlock(&st->memo_mu);
    metric_inc(hit ? hits : misses);
    if (hit) return true;
    t->marked = mark_now(st, touch, &t->mark);
    snprintf(t->key, sizeof t->key, "%s", key);
    return false;
}

/* Remembers text as of t, holding while the clock is in [from_ms, until_ms). */
static void remember(struct store *st, struct answer_memo *m, const struct store_memo_ticket *t,
                     const char *text, size_t len, const char *tag, int64_t from_ms,
                     int64_t until_ms)
{
    char *copy = xmalloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    pthread_mutex_lock(&st->memo_mu);
    char *old = m->text;
    m->text = copy;
    m->len = len;
    m->mark = t->mark;
    m->from_ms = from_ms;
    m->until_ms = until_ms;
    snprintf(m->key, sizeof m->key, "%s", t->key);
    snprintf(m->tag, sizeof m->tag, "%s", tag ? tag : "");
    pthread_mutex_unlock(&st->memo_mu);
    free(old);
}

bool store_memo_get(struct store *st, enum store_memo slot, struct store_memo_ticket *t,
                    char **text, size_t *len, char tag[STORE_MEMO_TAG])
{
    t->marked = false;
    if (!store_remembers(st)) return false;
    return recall(st, &st->answers[slot], DB_TOUCH_NONE, "", 0, t, text, len, tag,
                  M_MEMO_CATALOG_HITS, M_MEMO_CATALOG_MISSES);
}

void store_memo_put(struct store *st, enum store_memo slot, const struct store_memo_ticket *t,
                    const char *text, size_t len, const char *tag)
{
    if (!t->marked || strlen(tag) >= STORE_MEMO_TAG) return;
    remember(st, &st->answers[slot], t, text, len, tag, INT64_MIN, INT64_MAX);
}

static struct answer_memo *listing_slot(struct store *st, const char *key)
{
    return &st->listings[db_touch_key(key) % LISTING_MEMO];
}

bool store_listing_get(struct store *st, const char *client_id, const char *query,
                       struct store_memo_ticket *t, char **text, size_t *len)
{
    t->marked = false;
    if (!store_remembers(st)) return false;
    char key[STORE_MEMO_KEY];
    int n = snprintf(key, sizeof key, "%s?%s", client_id, query);
    if (n < 0 || (size_t)n >= sizeof key) return false; /* too long to remember */
    return recall(st, listing_slot(st, key), db_touch_key(client_id), key, 0, t, text, len, NULL,
                  M_MEMO_CITAS_HITS, M_MEMO_CITAS_MISSES);
}

void store_listing_put(struct store *st, const struct store_memo_ticket *t, const char *text,
                       size_t len)
{
    if (!t->marked || len > LISTING_MEMO_MAX) return;
    remember(st, listing_slot(st, t->key), t, text, len, NULL, INT64_MIN, INT64_MAX);
}

static struct answer_memo *slots_slot(struct store *st, const char *key)
{
    return &st->slots[db_touch_key(key) % SLOTS_MEMO];
}

bool store_slots_get(struct store *st, const char *key, int64_t now_ms, struct store_memo_ticket *t,
                     char **text, size_t *len)
{
    t->marked = false;
    if (!store_remembers(st) || strlen(key) >= sizeof t->key) return false;
    /* every client's appointments: any booking changes them */
    return recall(st, slots_slot(st, key), DB_TOUCH_EVERY_KEY, key, now_ms, t, text, len, NULL,
                  M_MEMO_SLOTS_HITS, M_MEMO_SLOTS_MISSES);
}

void store_slots_put(struct store *st, const struct store_memo_ticket *t, int64_t from_ms,
                     int64_t until_ms, const char *text, size_t len)
{
    if (!t->marked || len > SLOTS_MEMO_MAX || until_ms <= from_ms) return;
    remember(st, slots_slot(st, t->key), t, text, len, NULL, from_ms, until_ms);
}

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
    pthread_mutex_lock(&st->memo_mu);
    if (!strcmp(m->token_hash, token_hash) && strcmp(m->expires_at, now) > 0 &&
        unchanged(st, &m->mark)) {
        principal_copy(p, &m->p);
        hit = true;
    }
    pthread_mutex_unlock(&st->memo_mu);
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
    pthread_mutex_lock(&st->memo_mu);
    old = m->p;
    m->p = copy;
    snprintf(m->token_hash, sizeof m->token_hash, "%s", token_hash);
    m->mark = *mark;
    snprintf(m->expires_at, sizeof m->expires_at, "%s", expires_at);
    pthread_mutex_unlock(&st->memo_mu);
    principal_clear(&old);
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

/* --- row decoders ---------------------------------------------------------------- */

/* perfil from 5 columns: id, rol, nombre, telefono, created_at (borrowed). */
static bool perfil_view(struct perfil *p, const struct db_val *c)
{
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

#define CITA_COLS                                                                                  \
    "c.id, c.cliente_id, c.barbero_id, c.servicio_id, c.fecha_inicio, c.fecha_fin, c.estado, "     \
    "c.notas, c.google_event_id, c.created_at"

static bool cita_view(struct cita *ci, const struct db_val *c)
{
    bool fits = true;
    COPY(ci->id, &c[0]);
    COPY(ci->cliente_id, &c[1]);
    COPY(ci->barbero_id, &c[2]);
    COPY(ci->servicio_id, &c[3]);
    COPY(ci->fecha_inicio, &c[4]);
    COPY(ci->fecha_fin, &c[5]);
    ci->estado = (char *)text_or_empty(&c[6]);
    ci->notas = (char *)text_or_null(&c[7]);
    ci->google_event_id = (char *)text_or_null(&c[8]);
    COPY(ci->created_at, &c[9]);
    return fits;
}

#define FOTO_COLS "id, cita_id, cliente_id, tipo, url, storage_path, created_at"

static bool foto_view(struct foto *f, const struct db_val *c)
{
    bool fits = true;
    COPY(f->id, &c[0]);
    COPY(f->cita_id, &c[1]);
    COPY(f->cliente_id, &c[2]);
    f->tipo = (char *)text_or_empty(&c[3]);
    f->url = (char *)text_or_empty(&c[4]);
    f->storage_path = (char *)text_or_empty(&c[5]);
    COPY(f->created_at, &c[6]);
    return fits;
}

/* --- identity ---------------------------------------------------------------------- */

static br_err user_create_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct new_user *u = ud;
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
    struct db_val ps[] = {db_text(u->session_hash), db_text(u->id), db_text(u->created_at),
                          db_text(u->session_expires_at)};
    return EXEC(db, c,
                "INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?)",
                ps, NULL, NULL, NULL);
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
    struct db_val p[] = {db_text(email)};
    br_err rc = run(st,
                    "SELECT id, email, created_at, last_sign_in_at, password_hash "
                    "FROM auth_users WHERE email = ?",
                    p, 1, user_pw_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such user");
    if (rc) {
        user_clear(u);
        free(*password_hash);
        *password_hash = NULL;
    }
    return rc;
}

struct set_pw {
    const char *id, *hash;
};

static br_err set_password_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct set_pw *a = ud;
    int64_t changes = 0;
    struct db_val p[] = {db_text(a->hash), db_text(a->id)};
    br_err rc = EXEC(db, c, "UPDATE auth_users SET password_hash = ? WHERE id = ?", p, NULL, NULL,
                     &changes);
    if (rc) return rc;
    if (changes == 0) return err_set(BR_NOTFOUND, "Usuario no encontrado");
    struct db_val q[] = {db_text(a->id)};
    return EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ?", q, NULL, NULL, NULL);
}

br_err store_user_set_password(struct store *st, const char *user_id, const char *password_hash)
{
    struct set_pw a = {user_id, password_hash};
    return in_tx(st, set_password_tx, &a);
}

struct session_args {
    const char *user_id, *hash, *now, *expires;
};

static br_err session_open_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct session_args *a = ud;
    struct db_val pd[] = {db_text(a->user_id), db_text(a->now)};
    br_err rc = EXEC(db, c, "DELETE FROM auth_sessions WHERE user_id = ? AND expires_at <= ?", pd,
                     NULL, NULL, NULL);
    struct db_val ps[] = {db_text(a->hash), db_text(a->user_id), db_text(a->now),
                          db_text(a->expires)};
    if (!rc)
        rc = EXEC(db, c,
                  "INSERT INTO auth_sessions (token_hash, user_id, created_at, expires_at) "
                  "VALUES (?, ?, ?, ?)",
                  ps, NULL, NULL, NULL);
    struct db_val pu[] = {db_text(a->now), db_text(a->user_id)};
    if (!rc)
        rc = EXEC(db, c, "UPDATE auth_users SET last_sign_in_at = ? WHERE id = ?", pu, NULL, NULL,
                  NULL);
    return rc;
}

br_err store_session_open(struct store *st, const char *user_id, const char *token_hash,
                          const char *now, const char *expires_at)
{
    struct session_args a = {user_id, token_hash, now, expires_at};
    return in_tx_as(st, DB_TOUCH_NONE, session_open_tx, &a);
}

struct principal_row {
    struct principal *p;
    bool found;
    br_ts expires_at;
};

static br_err principal_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct principal_row *r = ud;
    bool fits = true;
    COPY(r->p->user_id, &c[0]);
    if (!fits) return too_long();
    r->p->email = dup_or_null(&c[1]);
    if (c[2].type != DB_NULL) {
        if (!perfil_view(&r->p->perfil, &c[2])) return too_long();
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
    struct db_val params[] = {db_text(token_hash), db_text(now)};
    br_err rc = run(st,
                    "SELECT u.id, u.email, p.id, p.rol, p.nombre, p.telefono, p.created_at, "
                    "s.expires_at "
                    "FROM auth_sessions s JOIN auth_users u ON u.id = s.user_id "
                    "LEFT JOIN perfiles p ON p.id = u.id "
                    "WHERE s.token_hash = ? AND s.expires_at > ?",
                    params, 2, principal_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such session");
    if (rc) principal_clear(p);
    if (!rc && marked) session_remember(st, token_hash, &mark, r.expires_at, p);
    return rc;
}

br_err store_session_close(struct store *st, const char *token_hash)
{
    struct db_val p[] = {db_text(token_hash)};
    return run_write(st, "DELETE FROM auth_sessions WHERE token_hash = ?", p, 1, NULL);
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
    if (has && !perfil_view(&p, &c[4])) return too_long();
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
    struct db_val p[] = {db_text(key), db_text(now)};
    br_err rc = run(st, sql_throttle_get, p, 2, throttle_row, &r, NULL);
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

struct perfil_row {
    struct perfil *p;
    bool found;
};

static br_err perfil_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct perfil_row *r = ud;
    if (!perfil_view(r->p, c)) return too_long();
    perfil_own(r->p);
    r->found = true;
    return BR_OK;
}

br_err store_perfil_get(struct store *st, const char *id, struct perfil *p)
{
    memset(p, 0, sizeof *p);
    struct perfil_row r = {p, false};
    struct db_val params[] = {db_text(id)};
    br_err rc = run(st, "SELECT id, rol, nombre, telefono, created_at FROM perfiles WHERE id = ?",
                    params, 1, perfil_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such profile");
    return rc;
}

br_err store_perfil_update(struct store *st, const char *id, const struct perfil_patch *patch)
{
    struct db_val p[] = {
        db_int(patch->rol != NULL),
        db_text(patch->rol),
        db_int(patch->nombre != NULL),
        db_text(patch->nombre),
        db_int(patch->set_telefono),
        db_text(patch->telefono),
        db_text(id),
    };
    return run_write(st,
                     "UPDATE perfiles SET "
                     "rol = CASE WHEN ? = 1 THEN ? ELSE rol END, "
                     "nombre = CASE WHEN ? = 1 THEN ? ELSE nombre END, "
                     "telefono = CASE WHEN ? = 1 THEN ? ELSE telefono END "
                     "WHERE id = ?",
                     p, (int)ARRAY_LEN(p), NULL);
}

struct usuarios_each {
    store_usuario_fn fn;
    void *ud;
};

static br_err usuarios_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct usuarios_each *a = ud;
    struct usuario_view v;
    if (!perfil_view(&v.perfil, c)) return too_long();
    v.email = text_or_empty(&c[5]);
    v.ultimo_acceso = text_or_null(&c[6]);
    v.creado_en = c[7].type == DB_TEXT ? c[7].s : v.perfil.created_at;
    v.total_citas = as_int(&c[8]);
    return a->fn(a->ud, &v);
}

#define SQL_USUARIOS                                                                               \
    "SELECT p.id, p.rol, p.nombre, p.telefono, p.created_at, "                                     \
    "u.email, u.last_sign_in_at, u.created_at, "                                                   \
    "(SELECT count(*) FROM citas c WHERE c.cliente_id = p.id) "                                    \
    "FROM perfiles p LEFT JOIN auth_users u ON u.id = p.id "
#define USUARIOS_ORDER     " ORDER BY p.created_at DESC, p.id DESC LIMIT ?"
#define SQL_USUARIOS_FIRST SQL_USUARIOS USUARIOS_ORDER
#define SQL_USUARIOS_AFTER SQL_USUARIOS "WHERE (p.created_at, p.id) < (?, ?)" USUARIOS_ORDER

br_err store_usuarios_page(struct store *st, const char *before_created, const char *before_id,
                           int64_t limit, store_usuario_fn fn, void *ud)
{
    struct usuarios_each a = {fn, ud};
    struct db_val lim = db_int(limit > 0 ? limit : INT64_MAX);
    if (!before_created) return run(st, SQL_USUARIOS_FIRST, &lim, 1, usuarios_row, &a, NULL);
    struct db_val p[] = {db_text(before_created), db_text(before_id), lim};
    return run(st, SQL_USUARIOS_AFTER, p, 3, usuarios_row, &a, NULL);
}

/* --- catalog --------------------------------------------------------------------- */

static br_err horario_default_insert(struct db *db, struct db_conn *c, const char *barbero_id);

static br_err barbero_add_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct barbero *b = ud;
    struct db_val p[] = {db_text(b->id), db_text(b->nombre), db_text(b->foto_url)};
    br_err rc = EXEC(db, c, "INSERT INTO barberos (id, nombre, foto_url) VALUES (?, ?, ?)", p, NULL,
                     NULL, NULL);
    return rc ? rc : horario_default_insert(db, c, b->id);
}

/* A new barber comes with the default weekly schedule. */
br_err store_barbero_add(struct store *st, const struct barbero *b)
{
    return in_tx(st, barbero_add_tx, (void *)b);
}

struct barbero_cb {
    store_barbero_fn fn;
    void *ud;
    struct barbero *out;
    bool found;
};

static br_err barbero_row(void *ud, const struct db_val *c, int n)
{
    bool fits = true;
    (void)n;
    struct barbero_cb *a = ud;
    struct barbero b;
    COPY(b.id, &c[0]);
    b.nombre = (char *)text_or_empty(&c[1]);
    b.foto_url = (char *)text_or_null(&c[2]);
    b.activo = n > 3 ? as_int(&c[3]) != 0 : true;
    if (!fits) return too_long();
    if (a->fn) return a->fn(a->ud, &b);
    *a->out = b;
    a->out->nombre = xstrdup(b.nombre);
    a->out->foto_url = xstrdup_or_null(b.foto_url);
    a->found = true;
    return BR_OK;
}

br_err store_barbero_get(struct store *st, const char *id, struct barbero *b)
{
    memset(b, 0, sizeof *b);
    struct barbero_cb a = {.out = b};
    struct db_val p[] = {db_text(id)};
    br_err rc = run(st, "SELECT id, nombre, foto_url, activo FROM barberos WHERE id = ?", p, 1,
                    barbero_row, &a, NULL);
    if (!rc && !a.found) rc = err_set(BR_NOTFOUND, "no such barber");
    return rc;
}

br_err store_barberos_each(struct store *st, store_barbero_fn fn, void *ud)
{
    struct barbero_cb a = {.fn = fn, .ud = ud};
    return run(st,
               "SELECT id, nombre, foto_url, activo FROM barberos WHERE activo "
               "ORDER BY nombre, id",
               NULL, 0, barbero_row, &a, NULL);
}

br_err store_servicio_add(struct store *st, const struct servicio *s)
{
    struct db_val p[] = {db_text(s->id), db_text(s->nombre), db_int(s->duracion_min),
                         db_real(s->precio)};
    return run_write(st,
                     "INSERT INTO servicios (id, nombre, duracion_min, precio) VALUES (?, ?, ?, ?)",
                     p, 4, NULL);
}

struct servicio_cb {
    store_servicio_fn fn;
    void *ud;
    struct servicio *out;
    bool found;
};

static br_err servicio_row(void *ud, const struct db_val *c, int n)
{
    bool fits = true;
    (void)n;
    struct servicio_cb *a = ud;
    struct servicio s;
    COPY(s.id, &c[0]);
    s.nombre = (char *)text_or_empty(&c[1]);
    s.duracion_min = as_int(&c[2]);
    s.precio = as_real(&c[3]);
    s.activo = n > 4 ? as_int(&c[4]) != 0 : true;
    if (!fits) return too_long();
    if (a->fn) return a->fn(a->ud, &s);
    *a->out = s;
    a->out->nombre = xstrdup(s.nombre);
    a->found = true;
    return BR_OK;
}

br_err store_servicio_get(struct store *st, const char *id, struct servicio *s)
{
    memset(s, 0, sizeof *s);
    struct servicio_cb a = {.out = s};
    struct db_val p[] = {db_text(id)};
    br_err rc =
        run(st, "SELECT id, nombre, duracion_min, precio, activo FROM servicios WHERE id = ?", p, 1,
            servicio_row, &a, NULL);
    if (!rc && !a.found) rc = err_set(BR_NOTFOUND, "no such service");
    return rc;
}

br_err store_servicios_each(struct store *st, store_servicio_fn fn, void *ud)
{
    struct servicio_cb a = {.fn = fn, .ud = ud};
    return run(st,
               "SELECT id, nombre, duracion_min, precio, activo FROM servicios WHERE activo "
               "ORDER BY nombre, id",
               NULL, 0, servicio_row, &a, NULL);
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

/* --- catalog administration, schedules, days off -------------------------------------- */

/* The default week of a new barber (and of every barber the migration
 * found): Monday to Friday 09:00-14:00 and 16:00-20:00, Saturday
 * 09:00-14:00. */
static br_err horario_default_insert(struct db *db, struct db_conn *c, const char *barbero_id)
{
    static const struct horario_tramo def[] = {
        {1, 540, 840}, {1, 960, 1200}, {2, 540, 840}, {2, 960, 1200}, {3, 540, 840}, {3, 960, 1200},
        {4, 540, 840}, {4, 960, 1200}, {5, 540, 840}, {5, 960, 1200}, {6, 540, 840},
    };
    for (size_t i = 0; i < ARRAY_LEN(def); i++) {
        struct db_val p[] = {db_text(barbero_id), db_int(def[i].dia), db_int(def[i].inicio),
                             db_int(def[i].fin)};
        br_err rc =
            EXEC(db, c, "INSERT INTO horarios (barbero_id, dia, inicio, fin) VALUES (?, ?, ?, ?)",
                 p, NULL, NULL, NULL);
        if (rc) return rc;
    }
    return BR_OK;
}

br_err store_barberos_all(struct store *st, store_barbero_fn fn, void *ud)
{
    struct barbero_cb a = {.fn = fn, .ud = ud};
    return run(st, "SELECT id, nombre, foto_url, activo FROM barberos ORDER BY nombre, id", NULL, 0,
               barbero_row, &a, NULL);
}

br_err store_servicios_all(struct store *st, store_servicio_fn fn, void *ud)
{
    struct servicio_cb a = {.fn = fn, .ud = ud};
    return run(st,
               "SELECT id, nombre, duracion_min, precio, activo FROM servicios ORDER BY nombre, id",
               NULL, 0, servicio_row, &a, NULL);
}

/* A patch is applied field by field in one transaction: each statement is
 * constant text, and a missing row is told by the first one's count. */
struct barbero_patch_args {
    const char *id;
    const struct barbero_patch *p;
};

static br_err barbero_patch_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct barbero_patch_args *a = ud;
    const struct barbero_patch *p = a->p;
    int64_t n = 0;
    struct db_val pk[] = {db_text(a->id)};
    br_err rc = EXEC(db, c, "SELECT count(*) FROM barberos WHERE id = ?", pk, one_int, &n, NULL);
    if (rc) return rc;
    if (n == 0) return err_set(BR_NOTFOUND, "no such barber");
    if (p->nombre) {
        struct db_val v[] = {db_text(p->nombre), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE barberos SET nombre = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    if (!rc && p->set_foto_url) {
        struct db_val v[] = {db_text(p->foto_url), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE barberos SET foto_url = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    if (!rc && p->activo >= 0) {
        struct db_val v[] = {db_text(p->activo ? "1" : "0"), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE barberos SET activo = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    return rc;
}

br_err store_barbero_update(struct store *st, const char *id, const struct barbero_patch *p)
{
    struct barbero_patch_args a = {id, p};
    return in_tx(st, barbero_patch_tx, &a);
}

struct servicio_patch_args {
    const char *id;
    const struct servicio_patch *p;
};

static br_err servicio_patch_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct servicio_patch_args *a = ud;
    const struct servicio_patch *p = a->p;
    int64_t n = 0;
    struct db_val pk[] = {db_text(a->id)};
    br_err rc = EXEC(db, c, "SELECT count(*) FROM servicios WHERE id = ?", pk, one_int, &n, NULL);
    if (rc) return rc;
    if (n == 0) return err_set(BR_NOTFOUND, "no such service");
    if (p->nombre) {
        struct db_val v[] = {db_text(p->nombre), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE servicios SET nombre = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    if (!rc && p->duracion_min > 0) {
        struct db_val v[] = {db_int(p->duracion_min), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE servicios SET duracion_min = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    if (!rc && p->set_precio) {
        struct db_val v[] = {db_real(p->precio), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE servicios SET precio = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    if (!rc && p->activo >= 0) {
        struct db_val v[] = {db_text(p->activo ? "1" : "0"), db_text(a->id)};
        rc = EXEC(db, c, "UPDATE servicios SET activo = ? WHERE id = ?", v, NULL, NULL, NULL);
    }
    return rc;
}

br_err store_servicio_update(struct store *st, const char *id, const struct servicio_patch *p)
{
    struct servicio_patch_args a = {id, p};
    return in_tx(st, servicio_patch_tx, &a);
}

/* schedules */

struct tramo_cb {
    store_tramo_fn fn;
    void *ud;
};

static br_err tramo_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct tramo_cb *a = ud;
    struct horario_tramo t = {(int)as_int(&c[1]), (int)as_int(&c[2]), (int)as_int(&c[3])};
    br_id id;
    bool fits = true;
    COPY(id, &c[0]);
    if (!fits) return too_long();
    return a->fn(a->ud, id, text_or_empty(&c[4]), &t);
}

br_err store_horario_each(struct store *st, const char *barbero_id, store_tramo_fn fn, void *ud)
{
    struct tramo_cb a = {fn, ud};
    struct db_val p[] = {db_text(barbero_id)};
    return run(st,
               "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
               "JOIN barberos b ON b.id = h.barbero_id WHERE h.barbero_id = ? "
               "ORDER BY h.dia, h.inicio",
               p, 1, tramo_row, &a, NULL);
}

br_err store_horario_dia(struct store *st, int dia, const char *barbero_id, store_tramo_fn fn,
                         void *ud)
{
    struct tramo_cb a = {fn, ud};
    if (barbero_id) {
        struct db_val p[] = {db_int(dia), db_text(barbero_id)};
        return run(st,
                   "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
                   "JOIN barberos b ON b.id = h.barbero_id "
                   "WHERE h.dia = ? AND h.barbero_id = ? AND b.activo ORDER BY h.inicio",
                   p, 2, tramo_row, &a, NULL);
    }
    struct db_val p[] = {db_int(dia)};
    return run(st,
               "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
               "JOIN barberos b ON b.id = h.barbero_id WHERE h.dia = ? AND b.activo "
               "ORDER BY b.nombre, b.id, h.inicio",
               p, 1, tramo_row, &a, NULL);
}

struct horario_set_args {
    const char *barbero_id;
    const struct horario_tramo *t;
    int n;
};

static br_err horario_set_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct horario_set_args *a = ud;
    int64_t n = 0;
    struct db_val pk[] = {db_text(a->barbero_id)};
    br_err rc = EXEC(db, c, "SELECT count(*) FROM barberos WHERE id = ?", pk, one_int, &n, NULL);
    if (rc) return rc;
    if (n == 0) return err_set(BR_NOTFOUND, "no such barber");
    rc = EXEC(db, c, "DELETE FROM horarios WHERE barbero_id = ?", pk, NULL, NULL, NULL);
    for (int i = 0; !rc && i < a->n; i++) {
        struct db_val p[] = {db_text(a->barbero_id), db_int(a->t[i].dia), db_int(a->t[i].inicio),
                             db_int(a->t[i].fin)};
        rc = EXEC(db, c, "INSERT INTO horarios (barbero_id, dia, inicio, fin) VALUES (?, ?, ?, ?)",
                  p, NULL, NULL, NULL);
    }
    return rc;
}

br_err store_horario_set(struct store *st, const char *barbero_id, const struct horario_tramo *t,
                         int n)
{
    struct horario_set_args a = {barbero_id, t, n};
    return in_tx(st, horario_set_tx, &a);
}

/* days off and closures */

#define AUSENCIA_COLS "id, barbero_id, desde, hasta, motivo, created_at"

struct ausencia_cb {
    store_ausencia_fn fn;
    void *ud;
};

static br_err ausencia_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct ausencia_cb *a = ud;
    struct ausencia x;
    bool fits = true;
    COPY(x.id, &c[0]);
    COPY(x.barbero_id, &c[1]);
    COPY(x.desde, &c[2]);
    COPY(x.hasta, &c[3]);
    COPY(x.created_at, &c[5]);
    x.motivo = (char *)text_or_null(&c[4]);
    if (!fits) return too_long();
    return a->fn(a->ud, &x);
}

br_err store_ausencia_add(struct store *st, const struct ausencia *x)
{
    struct db_val p[] = {db_text(x->id),     db_text(x->barbero_id[0] ? x->barbero_id : NULL),
                         db_text(x->desde),  db_text(x->hasta),
                         db_text(x->motivo), db_text(x->created_at)};
    return run_write(st, "INSERT INTO ausencias (" AUSENCIA_COLS ") VALUES (?, ?, ?, ?, ?, ?)", p,
                     6, NULL);
}

br_err store_ausencias_each(struct store *st, store_ausencia_fn fn, void *ud)
{
    struct ausencia_cb a = {fn, ud};
    return run(st, "SELECT " AUSENCIA_COLS " FROM ausencias ORDER BY desde, id", NULL, 0,
               ausencia_row, &a, NULL);
}

br_err store_ausencias_on(struct store *st, const char *fecha, store_ausencia_fn fn, void *ud)
{
    struct ausencia_cb a = {fn, ud};
    struct db_val p[] = {db_text(fecha), db_text(fecha)};
    return run(st,
               "SELECT " AUSENCIA_COLS " FROM ausencias WHERE hasta >= ? AND desde <= ? "
               "ORDER BY desde, id",
               p, 2, ausencia_row, &a, NULL);
}

br_err store_ausencia_delete(struct store *st, const char *id)
{
    int64_t changes = 0;
    struct db_val p[] = {db_text(id)};
    br_err rc = run_write(st, "DELETE FROM ausencias WHERE id = ?", p, 1, &changes);
    if (!rc && changes == 0) rc = err_set(BR_NOTFOUND, "no such absence");
    return rc;
}

/* The busy stretches of one barber that intersect [desde, hasta): its
 * non-cancelled appointments, from the covering index citas_barbero_fin
 * (the ones that end after desde: never the history before it). */
/* A barber's appointments that are not cancelled never overlap each other:
 * every write checks it (and the exclusion constraint citas_sin_solape
 * backs it on PostgreSQL). So of those that start before a window only the
 * last can reach into it, and what meets a window is read from both sides
 * of its start in the index citas_barbero_inicio: the appointments that
 * start inside it, and the one that starts last before it. The cost is the
 * same however long the history before the window or the calendar after
 * it (the free slots of a day, the overlap check of a booking). */
#define MEETS_WINDOW(cols, but)                                                                    \
    "SELECT " cols " FROM citas WHERE barbero_id = ? AND fecha_inicio >= ? AND fecha_inicio < ? "  \
    "AND estado <> 'cancelada'" but " UNION ALL SELECT " cols " FROM (SELECT fecha_inicio, "       \
    "fecha_fin FROM citas WHERE barbero_id = ? AND fecha_inicio < ? AND estado <> 'cancelada'" but \
    " ORDER BY fecha_inicio DESC LIMIT 1) prev WHERE prev.fecha_fin > ?"
#define SQL_BUSY MEETS_WINDOW("fecha_inicio, fecha_fin", "")

static const char sql_busy[] = SQL_BUSY;

struct busy_cb {
    store_busy_fn fn;
    void *ud;
};

static br_err busy_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct busy_cb *a = ud;
    br_ts ini, fin;
    bool fits = true;
    COPY(ini, &c[0]);
    COPY(fin, &c[1]);
    if (!fits) return too_long();
    return a->fn(a->ud, ini, fin);
}

br_err store_citas_busy(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, store_busy_fn fn, void *ud)
{
    struct busy_cb a = {fn, ud};
    struct db_val p[] = {db_text(barbero_id), db_text(desde), db_text(hasta),
                         db_text(barbero_id), db_text(desde), db_text(desde)};
    return run(st, sql_busy, p, 6, busy_row, &a, NULL);
}

/* --- citas ------------------------------------------------------------------------ */

/* The overlap check: whether anything meets the new slot (MEETS_WINDOW). */
#define SQL_OVERLAP MEETS_WINDOW("1", "") " LIMIT 1"
static const char sql_overlap[] = SQL_OVERLAP;

br_err store_cita_overlaps(struct store *st, const char *barbero_id, const char *inicio,
                           const char *fin, bool *overlaps)
{
    *overlaps = false;
    struct db_val p[] = {db_text(barbero_id), db_text(inicio), db_text(fin),
                         db_text(barbero_id), db_text(inicio), db_text(inicio)};
    return run(st, sql_overlap, p, 6, one_flag, overlaps, NULL);
}

/* A client's appointments that are not cancelled and start after now, one
 * row each, up to a bound (the cap: no more are ever needed), from the
 * index citas_cliente_inicio. */
#define SQL_CITAS_UPCOMING                                                                         \
    "SELECT 1 FROM citas WHERE cliente_id = ? AND fecha_inicio > ? AND estado <> 'cancelada' "     \
    "LIMIT ?"
static const char sql_citas_upcoming[] = SQL_CITAS_UPCOMING;

static br_err count_row(void *ud, const struct db_val *cols, int n)
{
    (void)cols;
    (void)n;
    (*(int64_t *)ud)++;
    return BR_OK;
}

br_err store_citas_upcoming(struct store *st, const char *cliente_id, const char *now,
                            int64_t bound, int64_t *n)
{
    *n = 0;
    struct db_val p[] = {db_text(cliente_id), db_text(now), db_int(bound)};
    return run(st, sql_citas_upcoming, p, 3, count_row, n, NULL);
}

struct book_args {
    const struct cita *c;
    const struct outbox_msg *m;
    const char *now; /* with cap: what "upcoming" is counted from */
    int64_t cap;     /* upcoming appointments the client may hold; 0: any */
};

/* Queues m, due at once; due_at (when set) is when it became due. */
static br_err outbox_insert(struct db *db, struct db_conn *conn, const struct outbox_msg *m)
{
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
                          db_text(due)};
    /* sent with the commit on PostgreSQL: its failure fails the write */
    return EXEC_LATER(db, conn,
                      "INSERT INTO mail_outbox (id, cita_id, recipient, cliente_nombre, "
                      "barbero_nombre, servicio_nombre, fecha_inicio, fecha_fin, notas, "
                      "created_at, status, attempts, next_attempt_at, kind, due_at) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)",
                      pm);
}

/* On PostgreSQL, the bookings and moves of one barber whose times could
 * overlap take turns: each first takes a transaction lock on every hour of
 * the barber's calendar its interval touches, in time order (two
 * overlapping intervals share an hour). Without them, overlapping inserts
 * wait for each other inside the exclusion constraint, where two of them
 * deadlock and a race of many waits out deadlock_timeout again and again;
 * with them, bookings in other hours still commit together. The constraint
 * alone keeps the calendar right: an interval of more than MAX_HOUR_LOCKS
 * hours takes no lock. A no-op on SQLite, whose writers take turns anyway. */
#define MAX_HOUR_LOCKS 48
static br_err lock_slot_hours(struct db *db, struct db_conn *c, const char *barbero_id,
                              const char *inicio, const char *fin)
{
    enum { HOUR_MS = 3600000 };
    int64_t a, b;
    if (!barbero_id || !iso8601_parse(inicio, strlen(inicio), &a) ||
        !iso8601_parse(fin, strlen(fin), &b) || b <= a || a < 0)
        return BR_OK; /* the statements refuse such a row themselves */
    int64_t h0 = a / HOUR_MS, h1 = (b - 1) / HOUR_MS;
    if (h1 - h0 >= MAX_HOUR_LOCKS) return BR_OK;
    br_err rc = BR_OK;
    for (int64_t h = h0; h <= h1 && !rc; h++) {
        char key[96];
        snprintf(key, sizeof key, "slot:%.40s:%" PRId64, barbero_id, h);
        rc = db->ops->lock(c, key);
    }
    return rc;
}

static br_err book_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct book_args *a = ud;
    const struct cita *c = a->c;
    /* The check and the insert are atomic on both backends. On SQLite
     * every write transaction holds the one write lock; on PostgreSQL the
     * exclusion constraint citas_sin_solape makes the insert itself the
     * check (a concurrent overlapping insert fails with an exclusion
     * violation, BR_CONFLICT), and the hour locks make overlapping
     * bookings take turns before it, so that they never deadlock there;
     * bookings of one barber in other hours never wait for each other.
     * The check here answers the common case without an error. */
    br_err rc = BR_OK;
    if (a->cap > 0) {
        /* one client's bookings take turns on PostgreSQL, before any hour
         * lock (always in this order: they never wait for each other) */
        char who[64];
        snprintf(who, sizeof who, "citas-cliente:%s", c->cliente_id);
        rc = db->ops->lock(conn, who);
        if (rc) return rc;
        int64_t n = 0;
        struct db_val pn[] = {db_text(c->cliente_id), db_text(a->now), db_int(a->cap)};
        rc = EXEC(db, conn, sql_citas_upcoming, pn, count_row, &n, NULL);
        if (rc) return rc;
        if (n >= a->cap) return err_set(BR_TOOLARGE, "upcoming cap");
    }
    rc = lock_slot_hours(db, conn, c->barbero_id, c->fecha_inicio, c->fecha_fin);
    if (rc) return rc;
    bool taken = false;
    struct db_val po[] = {db_text(c->barbero_id),   db_text(c->fecha_inicio),
                          db_text(c->fecha_fin),    db_text(c->barbero_id),
                          db_text(c->fecha_inicio), db_text(c->fecha_inicio)};
    rc = EXEC(db, conn, sql_overlap, po, one_flag, &taken, NULL);
    if (rc) return rc;
    if (taken) return err_set(BR_CONFLICT, "slot taken");

    struct db_val pc[] = {
        db_text(c->id),          db_text(c->cliente_id),   db_text(c->barbero_id),
        db_text(c->servicio_id), db_text(c->fecha_inicio), db_text(c->fecha_fin),
        db_text(c->estado),      db_text(c->notas),        db_text(c->google_event_id),
        db_text(c->created_at)};
    /* the three inserts are sent together with the commit on PostgreSQL:
     * any failure of theirs (an overlapping insert's exclusion violation:
     * BR_CONFLICT) fails the whole booking the same way */
    rc = EXEC_LATER(db, conn,
                    "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                    "fecha_fin, estado, notas, google_event_id, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    pc);
    if (rc) return rc;

    br_id hid;
    uuid_v4(hid);
    char fecha[11];
    memcpy(fecha, c->fecha_inicio, 10);
    fecha[10] = '\0';
    struct db_val ph[] = {db_text(hid),           db_text(c->cliente_id),  db_text(c->id),
                          db_text(c->barbero_id), db_text(c->servicio_id), db_text(fecha),
                          db_text(c->created_at)};
    rc = EXEC_LATER(db, conn,
                    "INSERT INTO historial_cortes (id, cliente_id, cita_id, barbero_id, "
                    "servicio_id, fecha, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    ph);
    if (rc || !a->m) return rc;

    return outbox_insert(db, conn, a->m);
}

br_err store_cita_book(struct store *st, const struct cita *c, const struct outbox_msg *mail)
{
    return store_cita_book_capped(st, c, mail, NULL, 0);
}

br_err store_cita_book_capped(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                              const char *now, int64_t cap)
{
    struct book_args a = {c, mail, now, now ? cap : 0};
    /* of what the memos read, a booking changes its client's listing only */
    return in_tx_as(st, db_touch_key(c->cliente_id), book_tx, &a);
}

br_err store_cita_exists(struct store *st, const char *id, bool *exists)
{
    *exists = false;
    struct db_val p[] = {db_text(id)};
    return run(st, "SELECT 1 FROM citas WHERE id = ?", p, 1, one_flag, exists, NULL);
}

/* --- the catalog's names, as of its version (names.h) ---------------------------------- */

#define NAMES_RETRY_MS 10000 /* after a failed read of the names: listings join meanwhile */

/* Every barber and service, and the version they are of, in one snapshot
 * (the first branch types the columns for PostgreSQL). */
static const char names_sql[] =
    "SELECT 1, id, nombre, CAST(NULL AS text), duracion_min, precio FROM servicios UNION ALL "
    "SELECT 0, id, nombre, foto_url, CAST(NULL AS bigint), CAST(NULL AS double precision) "
    "FROM barberos UNION ALL "
    "SELECT 2, version, CAST(NULL AS text), CAST(NULL AS text), CAST(NULL AS bigint), "
    "CAST(NULL AS double precision) FROM catalogo_version WHERE id = 1 LIMIT ?";

struct names_read {
    struct names *n;
    bool versioned;
};

static br_err names_row(void *ud, const struct db_val *c, int n)
{
    struct names_read *r = ud;
    if (n != 6 || c[0].type != DB_INT) return err_set(BR_STORE, "unexpected catalog columns");
    switch (c[0].i) {
    case 0:
        return names_add(r->n, NAMES_BARBERO, &c[1], (struct db_val[]){c[2], c[3]}, 2);
    case 1:
        return names_add(r->n, NAMES_SERVICIO, &c[1], (struct db_val[]){c[2], c[4], c[5]}, 3);
    default:
        r->versioned = names_set_version(r->n, &c[1]);
        return r->versioned ? BR_OK : err_set(BR_STORE, "the catalog's version is unreadable");
    }
}

/* The names held now (a reference; NULL when none). OUT: *joined, true
 * when they could not be read in the last NAMES_RETRY_MS (the listing then
 * joins rather than trying names that are likely stale). */
static struct names *names_held(struct store *st, bool *joined)
{
    pthread_mutex_lock(&st->names_mu);
    *joined = clock_mono_ms() < st->names_retry;
    struct names *n = *joined ? NULL : names_ref(st->names);
    pthread_mutex_unlock(&st->names_mu);
    return n;
}

/* The names of the catalog as it is now, read afresh and held from here on
 * (a reference). NULL, for the caller to join instead, while another
 * thread reads them, or when they could not be read (the database failed,
 * more than NAMES_MAX) in the last NAMES_RETRY_MS. */
static struct names *names_fresh(struct store *st)
{
    pthread_mutex_lock(&st->names_mu);
    bool go = !st->names_loading && clock_mono_ms() >= st->names_retry;
    if (go) st->names_loading = true;
    pthread_mutex_unlock(&st->names_mu);
    if (!go) return NULL;
    struct names_read r = {names_new(), false};
    struct db_val lim = db_int(NAMES_MAX + 2); /* the version's row and one too many */
    br_err rc = run(st, names_sql, &lim, 1, names_row, &r, NULL);
    if (!rc && !r.versioned) rc = err_set(BR_STORE, "the catalog has no version");
    if (rc) {
        names_unref(r.n);
        r.n = NULL;
    } else {
        names_seal(r.n);
    }
    pthread_mutex_lock(&st->names_mu);
    st->names_loading = false;
    if (rc) {
        st->names_retry = clock_mono_ms() + NAMES_RETRY_MS;
        log_warn("store: the catalog's names could not be read (%s); listings join them for "
                 "%d s",
                 err_msg(), NAMES_RETRY_MS / 1000);
    } else {
        names_unref(st->names);
        st->names = names_ref(r.n);
    }
    pthread_mutex_unlock(&st->names_mu);
    return r.n;
}

/* A listing's rows read either with the names n (statements that read the
 * catalog's version instead of joining barberos and servicios) or, with n
 * NULL, joined by the database. OUT: *stale when n turned out not to be of
 * the version the statement read (then nothing was listed). */
typedef br_err (*names_try_fn)(struct store *st, struct names *n, void *ud, bool *stale);

/* Runs try with the names held; when they are stale (or none yet), with
 * the catalog read afresh; joined when that cannot be had (see
 * names_fresh) or BARBERIA_MEMO is 0. */
static br_err with_names(struct store *st, names_try_fn try, void *ud)
{
    bool stale = false;
    br_err rc = BR_OK;
    if (st->names_on) {
        bool joined;
        struct names *names = names_held(st, &joined);
        if (names) rc = try(st, names, ud, &stale);
        metric_inc(names && !stale ? M_MEMO_NAMES_HITS : M_MEMO_NAMES_MISSES);
        if (!joined && (!names || stale)) {
            names_unref(names);
            names = names_fresh(st);
            if (names) rc = try(st, names, ud, &stale);
        }
        names_unref(names);
        if (names && !stale) return rc;
    }
    return try(st, NULL, ud, &stale);
}

/* Whether the names n are of the version a listing's first row read
 * (BR_OK), or the listing must stop before anything is listed (BR_BUSY,
 * *stale set): every row has the version of the same snapshot. */
static br_err names_check(const struct names *n, const struct db_val *version, bool *checked,
                          bool *stale)
{
    if (*checked) return BR_OK;
    if (!names_is(n, version)) {
        *stale = true;
        return BR_BUSY; /* stops the statement; with_names reads on */
    }
    *checked = true;
    return BR_OK;
}

/* Columns 13-17 of a listing's row (barber: nombre, foto_url; service:
 * nombre, duracion_min, precio) from n, by the row's barbero_id (2) and
 * servicio_id (3); NULL where there is none, as the join gives. */
static void names_complete(const struct names *n, struct db_val row[18])
{
    const struct db_val *b = names_find(n, NAMES_BARBERO, &row[2]);
    const struct db_val *s = names_find(n, NAMES_SERVICIO, &row[3]);
    for (int i = 0; i < 2; i++)
        row[13 + i] = b ? b[i] : db_null();
    for (int i = 0; i < 3; i++)
        row[15 + i] = s ? s[i] : db_null();
}

struct citas_each {
    store_cita_fn fn;
    void *ud;
};

static br_err citas_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct citas_each *a = ud;
    struct cita_view v;
    if (!cita_view(&v.cita, c)) return too_long();
    v.has_perfil = c[10].type != DB_NULL;
    v.perfil_nombre = text_or_null(&c[11]);
    v.perfil_telefono = text_or_null(&c[12]);
    v.barbero_nombre = text_or_null(&c[13]);
    v.barbero_foto_url = text_or_null(&c[14]);
    v.servicio_nombre = text_or_null(&c[15]);
    v.servicio_duracion_min = as_int(&c[16]);
    v.servicio_precio = as_real(&c[17]);
    return a->fn(a->ud, &v);
}

#define CITAS_SELECT                                                                               \
    "SELECT " CITA_COLS ", p.id, p.nombre, p.telefono, b.nombre, b.foto_url, "                     \
    "s.nombre, s.duracion_min, s.precio FROM citas c "                                             \
    "LEFT JOIN perfiles p ON p.id = c.cliente_id "                                                 \
    "LEFT JOIN barberos b ON b.id = c.barbero_id "                                                 \
    "LEFT JOIN servicios s ON s.id = c.servicio_id "
/* The same with the catalog's version (names.h) in place of the barber's
 * and the service's columns, which come from the names of that version. */
#define CATALOG_VERSION "(SELECT version FROM catalogo_version WHERE id = 1)"
#define CITAS_LEAN_SELECT                                                                          \
    "SELECT " CITA_COLS ", p.id, p.nombre, p.telefono, " CATALOG_VERSION " FROM citas c "          \
    "LEFT JOIN perfiles p ON p.id = c.cliente_id "
#define CITAS_ORDER " ORDER BY c.fecha_inicio, c.id LIMIT ?"
#define SESSION_COLS                                                                               \
    "SELECT u.id, u.email, p.id, p.rol, p.nombre, p.telefono, p.created_at, ss.expires_at, "
#define SESSION_FROM                                                                               \
    " FROM auth_sessions ss JOIN auth_users u ON u.id = ss.user_id "                               \
    "LEFT JOIN perfiles p ON p.id = u.id "                                                         \
    "LEFT JOIN citas c ON c.cliente_id = u.id "                                                    \
    "AND (p.rol IS NULL OR p.rol NOT IN " ROL_STAFF_SQL ")"
#define SESSION_WHERE " WHERE ss.token_hash = ? AND ss.expires_at > ?"
#define SESSION_CITAS_SELECT                                                                       \
    SESSION_COLS CITA_COLS ", b.nombre, b.foto_url, s.nombre, s.duracion_min, "                    \
                           "s.precio" SESSION_FROM
#define SESSION_CITAS_JOINS                                                                        \
    " LEFT JOIN barberos b ON b.id = c.barbero_id "                                                \
    "LEFT JOIN servicios s ON s.id = c.servicio_id" SESSION_WHERE
/* The same with the catalog's version (names.h) in place of the barber's
 * and the service's columns, which come from the names of that version. */
#define SESSION_LEAN_SELECT SESSION_COLS CATALOG_VERSION ", " CITA_COLS SESSION_FROM

/* The listing's statements: one per combination of the optional filters
 * (client, estado, lower bound, upper bound), so that each keeps its index
 * and PostgreSQL can type every parameter. Assembled once, from constant
 * fragments only; the pointers stay put, as the statement caches want. */
enum { CQ_CLIENTE = 1, CQ_ESTADO = 2, CQ_AFTER = 4, CQ_HASTA = 8, CQ_VARIANTS = 16 };
static char citas_sql[CQ_VARIANTS][1024];
static char citas_plan[CQ_VARIANTS][1024];
static char citas_lean_sql[CQ_VARIANTS][1024];
static char citas_lean_plan[CQ_VARIANTS][1024];
/* A client's listing read together with her session (store_session_citas):
 * the session's columns on every row, then the listing's (NULL when there
 * is none), for each combination of the filters other than the client. */
static char session_citas_sql[CQ_VARIANTS][2048];
static char session_lean_sql[CQ_VARIANTS][2048];
static pthread_once_t citas_sql_once = PTHREAD_ONCE_INIT;

static void citas_sql_build(void)
{
    static const char *const cond[] = {
        "c.cliente_id = ?",
        "c.estado = ?",
        "(c.fecha_inicio, c.id) > (?, ?)",
        "c.fecha_inicio < ?",
    };
    for (unsigned v = 0; v < CQ_VARIANTS; v++) {
        for (int lean = 0; lean < 2; lean++) {
            struct buf b;
            buf_init(&b, sizeof citas_sql[v] - 1);
            br_err rc = buf_puts(&b, lean ? CITAS_LEAN_SELECT : CITAS_SELECT);
            const char *sep = "WHERE ";
            for (unsigned k = 0; k < ARRAY_LEN(cond); k++) {
                if (!(v & (1u << k))) continue;
                if (!rc) rc = buf_printf(&b, "%s%s", sep, cond[k]);
                sep = " AND ";
            }
            if (!rc) rc = buf_puts(&b, CITAS_ORDER);
            if (rc) abort(); /* constant fragments that fit: cannot happen */
            snprintf(lean ? citas_lean_sql[v] : citas_sql[v], sizeof citas_sql[v], "%s",
                     buf_cstr(&b));
            snprintf(lean ? citas_lean_plan[v] : citas_plan[v], sizeof citas_plan[v],
                     "EXPLAIN QUERY PLAN %s", buf_cstr(&b));
            buf_free(&b);
        }
        /* the session's row joined with the client's appointments (when the
         * session is a client's: the rule of booking_list_scope) */
        for (int lean = 0; lean < 2; lean++) {
            char *out = lean ? session_lean_sql[v] : session_citas_sql[v];
            struct buf b;
            buf_init(&b, sizeof session_citas_sql[v] - 1);
            br_err rc = buf_puts(&b, lean ? SESSION_LEAN_SELECT : SESSION_CITAS_SELECT);
            for (unsigned k = 1; k < ARRAY_LEN(cond); k++)
                if (v & (1u << k) && !rc) rc = buf_printf(&b, " AND %s", cond[k]);
            if (!rc)
                rc = buf_puts(&b,
                              lean ? SESSION_WHERE CITAS_ORDER : SESSION_CITAS_JOINS CITAS_ORDER);
            if (rc) abort();
            snprintf(out, sizeof session_citas_sql[v], "%s", buf_cstr(&b));
            buf_free(&b);
        }
    }
}

static int range_params(const struct cita_range *q, struct db_val *p, unsigned *v);

struct citas_range {
    struct citas_each list;
    unsigned v; /* the variant */
    struct db_val p[7];
    int n;
    struct names *names; /* CITAS_LEAN_SELECT's rows: completed from these */
    bool checked, stale;
};

/* A row of CITAS_LEAN_SELECT: the appointment's 10 columns, its perfil's
 * 3, the catalog's version. */
static br_err citas_lean_row(void *ud, const struct db_val *c, int n)
{
    struct citas_range *a = ud;
    if (n != 14) return err_set(BR_STORE, "unexpected columns in a listing");
    br_err rc = names_check(a->names, &c[13], &a->checked, &a->stale);
    if (rc) return rc;
    struct db_val row[18];
    memcpy(row, c, 13 * sizeof *row);
    names_complete(a->names, row);
    return citas_row(&a->list, row, 18);
}

static br_err citas_range_try(struct store *st, struct names *names, void *ud, bool *stale)
{
    struct citas_range *a = ud;
    a->names = names;
    a->checked = a->stale = false;
    br_err rc = names ? run(st, citas_lean_sql[a->v], a->p, a->n, citas_lean_row, a, NULL)
                      : run(st, citas_sql[a->v], a->p, a->n, citas_row, &a->list, NULL);
    *stale = a->stale;
    return rc;
}

br_err store_citas_range(struct store *st, const struct cita_range *q, store_cita_fn fn, void *ud)
{
    pthread_once(&citas_sql_once, citas_sql_build);
    struct citas_range a = {.list = {fn, ud}};
    if (q->cliente_id) a.v |= CQ_CLIENTE, a.p[a.n++] = db_text(q->cliente_id);
    a.n += range_params(q, a.p + a.n, &a.v);
    a.p[a.n++] = db_int(q->limit > 0 ? q->limit : INT64_MAX);
    return with_names(st, citas_range_try, &a);
}

/* The listing's filters as parameters, in the order of cond[] from the
 * second on (estado, lower bound, upper bound). OUT: the variant's bits. */
static int range_params(const struct cita_range *q, struct db_val *p, unsigned *v)
{
    int n = 0;
    if (q->estado) *v |= CQ_ESTADO, p[n++] = db_text(q->estado);
    /* the lower bound: past the cursor's row, or from desde on (the nil
     * uuid sorts before every id), whichever comes later */
    if (q->after_inicio && (!q->desde || strcmp(q->after_inicio, q->desde) >= 0)) {
        *v |= CQ_AFTER;
        p[n++] = db_text(q->after_inicio);
        p[n++] = db_text(q->after_id);
    } else if (q->desde) {
        *v |= CQ_AFTER;
        p[n++] = db_text(q->desde);
        p[n++] = db_text("00000000-0000-0000-0000-000000000000");
    }
    if (q->hasta) *v |= CQ_HASTA, p[n++] = db_text(q->hasta);
    return n;
}

/* --- a client's listing with her session ------------------------------------------------ */

struct session_citas {
    struct principal_row who;
    struct citas_each list;
    bool client;
    unsigned v; /* the variant */
    struct db_val p[8];
    int n;
    bool *listed;
    struct names *names; /* SESSION_LEAN_SELECT's rows: completed from these */
    bool checked, stale;
};

/* A row of SESSION_CITAS_SELECT (joined: the session's 8 columns, the
 * appointment's 10, the barber's and the service's 5) or, with the names
 * held, of SESSION_LEAN_SELECT (the session's 8, the catalog's version, the
 * appointment's 10); the appointment's columns are NULL when there is none. */
static br_err session_citas_row(void *ud, const struct db_val *c, int n)
{
    struct session_citas *a = ud;
    if (n != (a->names ? 8 + 1 + 10 : 8 + 10 + 5))
        return err_set(BR_STORE, "unexpected columns in a client's listing");
    const struct db_val *ci = c + (a->names ? 9 : 8);
    if (a->names && ci[0].type != DB_NULL) {
        br_err rc = names_check(a->names, &c[8], &a->checked, &a->stale);
        if (rc) return rc;
    }
    if (!a->who.found) {
        br_err rc = principal_row(&a->who, c, 8);
        if (rc) return rc;
        a->client = !principal_is_staff(a->who.p);
    }
    if (!a->client || ci[0].type == DB_NULL) return BR_OK; /* no appointment on this row */
    /* a client's own: the appointment's perfil is the session's (columns
     * 2, 4, 5), read once instead of joined again */
    struct db_val row[18];
    memcpy(row, ci, 10 * sizeof *row);
    row[10] = c[2];
    row[11] = c[4];
    row[12] = c[5];
    if (a->names)
        names_complete(a->names, row);
    else
        memcpy(row + 13, ci + 10, 5 * sizeof *row);
    return citas_row(&a->list, row, 18);
}

static br_err session_citas_try(struct store *st, struct names *names, void *ud, bool *stale)
{
    struct session_citas *a = ud;
    struct principal *p = a->who.p;
    memset(p, 0, sizeof *p);
    a->who.found = a->client = false;
    a->names = names;
    a->checked = a->stale = false;
    br_err rc = run(st, names ? session_lean_sql[a->v] : session_citas_sql[a->v], a->p, a->n,
                    session_citas_row, a, NULL);
    *stale = a->stale;
    if (a->stale) {
        principal_clear(p); /* nothing was listed; the next try fills it again */
        return BR_OK;
    }
    if (!a->who.found) {
        principal_clear(p);
        return rc ? rc : err_set(BR_NOTFOUND, "no such session");
    }
    *a->listed = a->client;
    return rc;
}

br_err store_session_citas(struct store *st, const char *token_hash, const char *now,
                           struct principal *p, const struct cita_range *q, store_cita_fn fn,
                           void *ud, bool *listed)
{
    *listed = false;
    pthread_once(&citas_sql_once, citas_sql_build);
    struct session_citas a = {
        .who = {p, false, ""}, .list = {fn, ud}, .v = CQ_CLIENTE, .listed = listed};
    a.n = range_params(q, a.p, &a.v);
    a.p[a.n++] = db_text(token_hash);
    a.p[a.n++] = db_text(now);
    a.p[a.n++] = db_int(q->limit > 0 ? q->limit : INT64_MAX);
    return with_names(st, session_citas_try, &a);
}

/* --- fotos ------------------------------------------------------------------------ */

#define SQL_FOTOS_COUNT "SELECT count(*) FROM fotos_cita WHERE cita_id = ? AND tipo = ?"
static const char sql_fotos_count[] = SQL_FOTOS_COUNT;

br_err store_fotos_count(struct store *st, const char *cita_id, const char *tipo, int64_t *count)
{
    *count = 0;
    struct db_val p[] = {db_text(cita_id), db_text(tipo)};
    return run(st, sql_fotos_count, p, 2, one_int, count, NULL);
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
    struct db_val p[] = {db_text(cliente_id)};
    br_err rc = run(st, sql_fotos_quota, p, 1, one_int, &blocks, NULL);
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
    char key[64];
    snprintf(key, sizeof key, "fotos:%s", f->cita_id);
    br_err rc = db->ops->lock(c, key);
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
        char who[64];
        snprintf(who, sizeof who, "fotos-cliente:%s", f->cliente_id);
        rc = db->ops->lock(c, who);
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

struct foto_cb {
    store_foto_fn fn;
    void *ud;
    struct foto *out;
    bool found;
};

static br_err foto_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct foto_cb *a = ud;
    struct foto f;
    if (!foto_view(&f, c)) return too_long();
    if (a->fn) return a->fn(a->ud, &f);
    *a->out = f;
    a->out->tipo = xstrdup(f.tipo);
    a->out->url = xstrdup(f.url);
    a->out->storage_path = xstrdup(f.storage_path);
    a->found = true;
    return BR_OK;
}

br_err store_foto_get_owned(struct store *st, const char *id, const char *cliente_id,
                            struct foto *f)
{
    memset(f, 0, sizeof *f);
    struct foto_cb a = {.out = f};
    struct db_val p[] = {db_text(id), db_text(cliente_id)};
    br_err rc = run(st, "SELECT " FOTO_COLS " FROM fotos_cita WHERE id = ? AND cliente_id = ?", p,
                    2, foto_row, &a, NULL);
    if (!rc && !a.found) rc = err_set(BR_NOTFOUND, "no such photo");
    return rc;
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

struct foto_delete {
    const char *id;
    const struct obj_intent *del;
};

static br_err foto_delete_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct foto_delete *a = ud;
    int64_t n = 0;
    struct db_val p[] = {db_text(a->id)};
    br_err rc = EXEC(db, c, "DELETE FROM fotos_cita WHERE id = ?", p, NULL, NULL, &n);
    if (!rc && n != 1) rc = err_set(BR_NOTFOUND, "no such photo");
    if (!rc) rc = intent_insert(db, c, a->del);
    return rc;
}

br_err store_foto_delete(struct store *st, const char *id, const struct obj_intent *del)
{
    struct foto_delete a = {id, del};
    return in_tx_as(st, DB_TOUCH_NONE, foto_delete_tx, &a);
}

br_err store_foto_path_exists(struct store *st, const char *storage_path, bool *exists)
{
    *exists = false;
    struct db_val p[] = {db_text(storage_path)};
    return run(st, "SELECT 1 FROM fotos_cita WHERE storage_path = ?", p, 1, one_flag, exists, NULL);
}

#define SQL_FOTOS_EACH                                                                             \
    "SELECT " FOTO_COLS " FROM fotos_cita WHERE cita_id = ? ORDER BY created_at, id"

br_err store_fotos_each(struct store *st, const char *cita_id, store_foto_fn fn, void *ud)
{
    struct foto_cb a = {.fn = fn, .ud = ud};
    struct db_val p[] = {db_text(cita_id)};
    return run(st, SQL_FOTOS_EACH, p, 1, foto_row, &a, NULL);
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
    struct db_val p[] = {db_text(id), db_text(instance)};
    return run_write_aside(st, sql_intent_clear, p, 2, NULL);
}

br_err store_intent_disown(struct store *st, const char *id, const char *instance)
{
    struct db_val p[] = {db_text(id), db_text(instance)};
    return run_write_aside(
        st, "UPDATE obj_intents SET instance = '', pid = 0 WHERE id = ? AND instance = ?", p, 2,
        NULL);
}

br_err store_intent_take(struct store *st, const char *id, const char *old_instance,
                         const struct obj_intent *to)
{
    int64_t n = 0;
    struct db_val p[] = {db_text(to->node), db_int(to->pid), db_text(to->instance), db_text(id),
                         db_text(old_instance)};
    br_err rc = run_write_aside(st,
                                "UPDATE obj_intents SET node = ?, pid = ?, instance = ? "
                                "WHERE id = ? AND instance = ?",
                                p, 5, &n);
    if (!rc && n != 1) rc = err_set(BR_NOTFOUND, "the intent is no longer there");
    return rc;
}

struct intent_cb {
    store_intent_fn fn;
    void *ud;
};

static br_err intent_row(void *ud, const struct db_val *c, int n)
{
    bool fits = true;
    (void)n;
    struct intent_cb *a = ud;
    struct obj_intent in;
    COPY(in.id, &c[0]);
    in.bucket = (char *)text_or_empty(&c[1]);
    in.key = (char *)text_or_empty(&c[2]);
    in.op = (char *)text_or_empty(&c[3]);
    in.node = (char *)text_or_empty(&c[4]);
    in.pid = as_int(&c[5]);
    in.instance = (char *)text_or_empty(&c[6]);
    COPY(in.created_at, &c[7]);
    if (!fits) return too_long();
    return a->fn(a->ud, &in);
}

br_err store_intents_each(struct store *st, store_intent_fn fn, void *ud)
{
    struct intent_cb a = {fn, ud};
    return run(st,
               "SELECT id, bucket, key, op, node, pid, instance, created_at FROM obj_intents "
               "ORDER BY created_at, id",
               NULL, 0, intent_row, &a, NULL);
}

br_err store_lease_renew(struct store *st, const char *instance, const char *node, int64_t pid,
                         const char *now)
{
    struct db_val p[] = {db_text(instance), db_text(node), db_int(pid), db_text(now), db_text(now)};
    return run_write_aside(
        st,
        "INSERT INTO proc_leases (instance, node, pid, started_at, heartbeat_at) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (instance) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
        p, 5, NULL);
}

br_err store_lease_live(struct store *st, const char *instance, const char *since, bool *live)
{
    *live = false;
    struct db_val p[] = {db_text(instance), db_text(since)};
    return run(st, "SELECT 1 FROM proc_leases WHERE instance = ? AND heartbeat_at >= ?", p, 2,
               one_flag, live, NULL);
}

br_err store_lease_end(struct store *st, const char *instance)
{
    struct db_val p[] = {db_text(instance)};
    return run_write_aside(st, "DELETE FROM proc_leases WHERE instance = ?", p, 1, NULL);
}

br_err store_leases_expire(struct store *st, const char *before)
{
    struct db_val p[] = {db_text(before)};
    return run_write_aside(st, "DELETE FROM proc_leases WHERE heartbeat_at < ?", p, 1, NULL);
}

/* --- mail outbox -------------------------------------------------------------------- */

#define OUTBOX_COLS                                                                                \
    "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, fecha_inicio, "      \
    "fecha_fin, notas, created_at, status, attempts, next_attempt_at, last_error, kind, due_at"

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
    return EXEC(db, c,
                "UPDATE mail_outbox SET locked_until = ?, attempts = attempts + 1 WHERE id = ?", u,
                NULL, NULL, NULL);
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

br_err store_outbox_sent(struct store *st, const char *id, const char *now)
{
    struct db_val p[] = {db_text(now), db_text(id)};
    return run_write_aside(
        st,
        "UPDATE mail_outbox SET status = 'sent', done_at = ?, locked_until = NULL, "
        "last_error = NULL WHERE id = ?",
        p, 2, NULL);
}

br_err store_outbox_retry(struct store *st, const char *id, const char *error,
                          const char *next_attempt_at)
{
    struct db_val p[] = {db_text(error), db_text(next_attempt_at), db_text(id)};
    return run_write_aside(
        st,
        "UPDATE mail_outbox SET last_error = ?, next_attempt_at = ?, locked_until = NULL "
        "WHERE id = ?",
        p, 3, NULL);
}

br_err store_outbox_drop(struct store *st, const char *id, const char *error, const char *now)
{
    struct db_val p[] = {db_text(error), db_text(now), db_text(id)};
    return run_write_aside(
        st,
        "UPDATE mail_outbox SET status = 'dropped', last_error = ?, done_at = ?, "
        "locked_until = NULL WHERE id = ?",
        p, 3, NULL);
}

static br_err one_ts(void *ud, const struct db_val *c, int n)
{
    char *out = ud;
    if (n > 0) copy_fixed(out, ISO8601_LEN + 1, &c[0]);
    return BR_OK;
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

br_err store_outbox_each(struct store *st, const char *status, store_outbox_fn fn, void *ud)
{
    struct outbox_cb a = {.fn = fn, .ud = ud};
    if (!status)
        return run(st,
                   "SELECT " OUTBOX_COLS " FROM mail_outbox WHERE status <> 'sent' "
                   "ORDER BY created_at, id",
                   NULL, 0, outbox_row, &a, NULL);
    struct db_val p[] = {db_text(status)};
    return run(st,
               "SELECT " OUTBOX_COLS " FROM mail_outbox WHERE status = ? ORDER BY created_at, id",
               p, 1, outbox_row, &a, NULL);
}

/* --- cancel, reschedule, reminders ------------------------------------------------------ */

struct detail_row {
    struct cita_detail *d;
    bool found;
};

static br_err detail_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct detail_row *r = ud;
    struct cita ci;
    if (!cita_view(&ci, c)) return too_long();
    r->d->cita = ci;
    r->d->cita.estado = xstrdup(ci.estado);
    r->d->cita.notas = xstrdup_or_null(ci.notas);
    r->d->cita.google_event_id = xstrdup_or_null(ci.google_event_id);
    r->d->cliente_email = dup_or_null(&c[10]);
    r->d->has_perfil = c[11].type != DB_NULL;
    r->d->cliente_nombre = dup_or_null(&c[12]);
    r->d->barbero_nombre = xstrdup(text_or_empty(&c[13]));
    r->d->servicio_nombre = xstrdup(text_or_empty(&c[14]));
    r->d->duracion_min = as_int(&c[15]);
    r->found = true;
    return BR_OK;
}

br_err store_cita_detail(struct store *st, const char *id, struct cita_detail *d)
{
    memset(d, 0, sizeof *d);
    struct detail_row r = {d, false};
    struct db_val p[] = {db_text(id)};
    br_err rc = run(st,
                    "SELECT " CITA_COLS ", u.email, p.id, p.nombre, b.nombre, s.nombre, "
                    "s.duracion_min FROM citas c "
                    "LEFT JOIN auth_users u ON u.id = c.cliente_id "
                    "LEFT JOIN perfiles p ON p.id = c.cliente_id "
                    "LEFT JOIN barberos b ON b.id = c.barbero_id "
                    "LEFT JOIN servicios s ON s.id = c.servicio_id WHERE c.id = ?",
                    p, 1, detail_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "no such cita");
    if (rc) cita_detail_clear(d);
    return rc;
}

br_err store_cita_view(struct store *st, const char *id, store_cita_fn fn, void *ud)
{
    struct citas_each a = {fn, ud};
    struct db_val p[] = {db_text(id)};
    return run(st, CITAS_SELECT "WHERE c.id = ?", p, 1, citas_row, &a, NULL);
}

/* The row a change starts from, read inside its transaction. */
struct change_row {
    br_id cliente_id;
    br_ts fecha_inicio;
    br_id barbero_id;
    char *estado, *event_id;
    bool found;
};

static br_err change_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct change_row *r = ud;
    bool fits = true;
    COPY(r->cliente_id, &c[0]);
    COPY(r->fecha_inicio, &c[1]);
    COPY(r->barbero_id, &c[2]);
    if (!fits) return too_long();
    r->estado = dup_or_null(&c[3]);
    r->event_id = dup_or_null(&c[4]);
    r->found = true;
    return BR_OK;
}

static const char sql_reminders_drop[] =
    "DELETE FROM mail_outbox WHERE cita_id = ? AND kind = 'recordatorio' AND status = 'pending'";

/* The overlap check of a reschedule: the cita itself does not count. */
static const char sql_overlap_but[] = MEETS_WINDOW("1", " AND id <> ?") " LIMIT 1";

static br_err change_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct cita_change *ch = ud;
    ch->why = CAMBIO_OK; /* the adapter may run this again (a deadlock) */
    free(ch->event_id);
    ch->event_id = NULL;
    char key[64];
    snprintf(key, sizeof key, "cita:%s", ch->id);
    br_err rc = db->ops->lock(conn, key);
    if (rc) return rc;
    struct change_row r = {.found = false};
    struct db_val pi[] = {db_text(ch->id)};
    rc = EXEC(db, conn,
              "SELECT cliente_id, fecha_inicio, barbero_id, estado, google_event_id FROM citas "
              "WHERE id = ?",
              pi, change_row, &r, NULL);
    if (!rc && (!r.found || (ch->cliente_id && strcmp(r.cliente_id, ch->cliente_id) != 0)))
        rc = err_set(BR_NOTFOUND, "no such cita");
    if (!rc && r.estado && !strcmp(r.estado, "cancelada")) {
        ch->why = CAMBIO_CANCELADA;
        rc = err_set(BR_CONFLICT, "cancelled");
    }
    if (!rc && ch->cliente_id && ch->plazo && strcmp(r.fecha_inicio, ch->plazo) < 0) {
        ch->why = CAMBIO_PLAZO;
        rc = err_set(BR_CONFLICT, "past the cut-off");
    }
    if (!rc && ch->inicio) {
        /* reschedule: the new slot, then the move itself (on PostgreSQL
         * the exclusion constraint makes the update its own check) */
        bool taken = false;
        struct db_val po[] = {db_text(r.barbero_id), db_text(ch->inicio),   db_text(ch->fin),
                              db_text(ch->id),       db_text(r.barbero_id), db_text(ch->inicio),
                              db_text(ch->id),       db_text(ch->inicio)};
        rc = lock_slot_hours(db, conn, r.barbero_id, ch->inicio, ch->fin);
        if (!rc) rc = EXEC(db, conn, sql_overlap_but, po, one_flag, &taken, NULL);
        if (!rc && taken) rc = err_set(BR_CONFLICT, "slot taken");
        if (!rc) {
            struct db_val pu[] = {db_text(ch->inicio), db_text(ch->fin), db_text(ch->id)};
            rc = EXEC(db, conn, "UPDATE citas SET fecha_inicio = ?, fecha_fin = ? WHERE id = ?", pu,
                      NULL, NULL, NULL);
        }
        if (rc == BR_CONFLICT) ch->why = CAMBIO_SOLAPE;
        /* the history record follows the haircut to its new date */
        char fecha[11];
        memcpy(fecha, ch->inicio, 10);
        fecha[10] = '\0';
        struct db_val ph[] = {db_text(fecha), db_text(ch->id)};
        if (!rc)
            rc = EXEC(db, conn, "UPDATE historial_cortes SET fecha = ? WHERE cita_id = ?", ph, NULL,
                      NULL, NULL);
    } else if (!rc) {
        /* cancel: no haircut happens, so no history record either */
        rc = EXEC(db, conn, "UPDATE citas SET estado = 'cancelada' WHERE id = ?", pi, NULL, NULL,
                  NULL);
        if (!rc)
            rc = EXEC(db, conn, "DELETE FROM historial_cortes WHERE cita_id = ?", pi, NULL, NULL,
                      NULL);
    }
    /* a pending reminder is for the old time or for nothing now */
    if (!rc) rc = EXEC(db, conn, sql_reminders_drop, pi, NULL, NULL, NULL);
    if (!rc && ch->mail) rc = outbox_insert(db, conn, ch->mail);
    if (!rc) {
        ch->event_id = r.event_id;
        r.event_id = NULL;
    }
    free(r.estado);
    free(r.event_id);
    return rc;
}

br_err store_cita_change(struct store *st, struct cita_change *ch)
{
    ch->event_id = NULL;
    br_err rc = in_tx(st, change_tx, ch);
    if (rc) {
        free(ch->event_id);
        ch->event_id = NULL;
    }
    return rc;
}

br_err store_cita_set_event(struct store *st, const char *id, const char *event_id, bool *stored)
{
    int64_t n = 0;
    struct db_val p[] = {db_text(event_id), db_text(id)};
    br_err rc = run_write(st,
                          "UPDATE citas SET google_event_id = ? WHERE id = ? AND "
                          "google_event_id IS NULL AND estado <> 'cancelada'",
                          p, 2, &n);
    *stored = !rc && n == 1;
    return rc;
}

/* Reminders are not queued at booking time: the outbox worker calls
 * store_reminders_queue as each becomes due, so a cancelled or moved cita
 * never leaves one behind, and a cita far ahead has no row yet. */
struct reminder_cand {
    br_id cita_id;
    br_ts inicio, fin, announced;
    char *notas, *recipient, *cliente, *barbero, *servicio;
};

struct reminder_scan {
    struct reminder_cand *c;
    int n, cap;
    int64_t window_ms;
};

static br_err reminder_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct reminder_scan *a = ud;
    if (a->n >= a->cap) return BR_OK;
    struct reminder_cand *k = &a->c[a->n];
    memset(k, 0, sizeof *k);
    bool fits = true;
    COPY(k->cita_id, &c[0]);
    COPY(k->inicio, &c[1]);
    COPY(k->fin, &c[2]);
    COPY(k->announced, &c[8]);
    if (!fits) return too_long();
    /* only a cita whose time was announced before its window opened: one
     * booked or moved closer to its start than that gets no reminder */
    int64_t start, ann;
    if (!iso8601_parse(k->inicio, strlen(k->inicio), &start) ||
        !iso8601_parse(k->announced, strlen(k->announced), &ann) || ann > start - a->window_ms)
        return BR_OK;
    k->notas = dup_or_null(&c[3]);
    k->recipient = dup_or_null(&c[4]);
    k->cliente = dup_or_null(&c[5]);
    k->barbero = dup_or_null(&c[6]);
    k->servicio = dup_or_null(&c[7]);
    a->n++;
    return BR_OK;
}

static void reminder_cands_free(struct reminder_scan *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->c[i].notas);
        free(a->c[i].recipient);
        free(a->c[i].cliente);
        free(a->c[i].barbero);
        free(a->c[i].servicio);
    }
    free(a->c);
}

struct reminder_insert {
    struct reminder_scan *scan;
    const char *now;
    int64_t window_ms;
    int queued;
};

static br_err reminder_insert_tx(struct db *db, struct db_conn *conn, void *ud)
{
    struct reminder_insert *a = ud;
    a->queued = 0;
    for (int i = 0; i < a->scan->n; i++) {
        struct reminder_cand *k = &a->scan->c[i];
        /* the lock a cancel or a reschedule of this cita takes: the cita is
         * still live at this start, or nothing is queued */
        char key[64];
        snprintf(key, sizeof key, "cita:%s", k->cita_id);
        br_err rc = db->ops->lock(conn, key);
        bool live = false;
        struct db_val pc[] = {db_text(k->cita_id), db_text(k->inicio)};
        if (!rc)
            rc = EXEC(db, conn,
                      "SELECT 1 FROM citas WHERE id = ? AND fecha_inicio = ? AND "
                      "estado <> 'cancelada'",
                      pc, one_flag, &live, NULL);
        if (rc) return rc;
        if (!live) continue;
        int64_t start = 0;
        if (!iso8601_parse(k->inicio, strlen(k->inicio), &start)) continue;
        br_id id;
        br_ts due;
        uuid_v4(id);
        iso8601_format(start - a->window_ms, due);
        int64_t n = 0;
        struct db_val pm[] = {db_text(id),         db_text(k->cita_id), db_text(k->recipient),
                              db_text(k->cliente), db_text(k->barbero), db_text(k->servicio),
                              db_text(k->inicio),  db_text(k->fin),     db_text(k->notas),
                              db_text(a->now),     db_text(a->now),     db_text(due)};
        rc = EXEC(db, conn,
                  "INSERT INTO mail_outbox (id, cita_id, recipient, cliente_nombre, "
                  "barbero_nombre, servicio_nombre, fecha_inicio, fecha_fin, notas, created_at, "
                  "status, attempts, next_attempt_at, kind, due_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                  "?, ?, ?, 'pending', 0, ?, 'recordatorio', ?) ON CONFLICT DO NOTHING",
                  pm, NULL, NULL, &n);
        if (rc) return rc;
        a->queued += (int)n;
    }
    return BR_OK;
}

#define REMINDER_BATCH 200

br_err store_reminders_queue(struct store *st, int64_t now_ms, int64_t window_ms, int *queued)
{
    *queued = 0;
    br_ts now, horizon;
    iso8601_format(now_ms, now);
    iso8601_format(now_ms + window_ms, horizon);
    struct reminder_scan scan = {xcalloc(REMINDER_BATCH, sizeof *scan.c), 0, REMINDER_BATCH,
                                 window_ms};
    struct db_val p[] = {db_text(now), db_text(horizon), db_int(REMINDER_BATCH)};
    /* live citas starting within the window, with the mail that announced
     * their current time (its names and address), that have no reminder
     * for that time yet */
    br_err rc = run(st,
                    "SELECT c.id, c.fecha_inicio, c.fecha_fin, c.notas, o.recipient, "
                    "o.cliente_nombre, o.barbero_nombre, o.servicio_nombre, o.created_at "
                    "FROM citas c JOIN mail_outbox o ON o.cita_id = c.id AND "
                    "o.kind IN ('confirmacion', 'reprogramacion') AND "
                    "o.fecha_inicio = c.fecha_inicio "
                    "WHERE c.fecha_inicio > ? AND c.fecha_inicio <= ? AND "
                    "c.estado <> 'cancelada' AND NOT EXISTS (SELECT 1 FROM mail_outbox r "
                    "WHERE r.cita_id = c.id AND r.kind = 'recordatorio' AND "
                    "r.fecha_inicio = c.fecha_inicio) "
                    "ORDER BY c.fecha_inicio, c.id LIMIT ?",
                    p, 3, reminder_row, &scan, NULL);
    if (!rc && scan.n > 0) {
        struct reminder_insert a = {&scan, now, window_ms, 0};
        rc = in_tx_as(st, DB_TOUCH_NONE, reminder_insert_tx, &a);
        if (!rc) *queued = a.queued;
    }
    reminder_cands_free(&scan);
    return rc;
}

br_err store_reminder_next(struct store *st, const char *after, br_ts next)
{
    next[0] = '\0';
    struct db_val p[] = {db_text(after)};
    return run(st,
               "SELECT min(fecha_inicio) FROM citas WHERE fecha_inicio > ? AND "
               "estado <> 'cancelada'",
               p, 1, one_ts, next, NULL);
}

/* --- query plans ----------------------------------------------------------------- */

struct plan_acc {
    struct buf text;
};

static br_err plan_row(void *ud, const struct db_val *c, int n)
{
    struct plan_acc *a = ud;
    /* EXPLAIN QUERY PLAN: id, parent, notused, detail */
    if (n < 4 || c[3].type != DB_TEXT) return BR_OK;
    br_err rc = buf_append(&a->text, c[3].s, c[3].n);
    if (!rc) rc = buf_append(&a->text, "\n", 1);
    return rc;
}

static br_err plan_of(struct store *st, const char *name, const char *sql, const struct db_val *p,
                      int n, store_plan_fn fn, void *ud)
{
    struct plan_acc a;
    buf_init(&a.text, 64 * 1024);
    br_err rc = run(st, sql, p, n, plan_row, &a, NULL);
    if (!rc) rc = fn(ud, name, buf_cstr(&a.text));
    buf_free(&a.text);
    return rc;
}

br_err store_query_plans(struct store *st, store_plan_fn fn, void *ud)
{
    /* the statements whose cost must not grow with the tables: every one
     * the API runs per request over data that grows */
    static const struct {
        const char *name, *sql;
        int nparams;
    } hot[] = {
        {"overlap", "EXPLAIN QUERY PLAN " SQL_OVERLAP, 6},
        {"busy", "EXPLAIN QUERY PLAN " SQL_BUSY, 6},
        {"fotos_count", "EXPLAIN QUERY PLAN " SQL_FOTOS_COUNT, 2},
        {"fotos_quota", "EXPLAIN QUERY PLAN " SQL_FOTOS_QUOTA, 1},
        {"citas_upcoming", "EXPLAIN QUERY PLAN " SQL_CITAS_UPCOMING, 3},
        {"fotos_each", "EXPLAIN QUERY PLAN " SQL_FOTOS_EACH, 1},
        {"usuarios", "EXPLAIN QUERY PLAN " SQL_USUARIOS_FIRST, 1},
        {"usuarios_after", "EXPLAIN QUERY PLAN " SQL_USUARIOS_AFTER, 3},
    };
    struct db_val p[] = {db_text("x"), db_text("y"), db_text("z"), db_text("w"),
                         db_text("v"), db_text("u"), db_int(10)};
    for (size_t i = 0; i < ARRAY_LEN(hot); i++) {
        br_err rc = plan_of(st, hot[i].name, hot[i].sql, p, hot[i].nparams, fn, ud);
        if (rc) return rc;
    }
    /* every variant of the listing: citas[+_cliente][+_estado][+_after][+_hasta] */
    pthread_once(&citas_sql_once, citas_sql_build);
    for (unsigned v = 0; v < CQ_VARIANTS; v++) {
        char name[64];
        snprintf(name, sizeof name, "citas%s%s%s%s", v & CQ_CLIENTE ? "_cliente" : "",
                 v & CQ_ESTADO ? "_estado" : "", v & CQ_AFTER ? "_after" : "",
                 v & CQ_HASTA ? "_hasta" : "");
        int np =
            !!(v & CQ_CLIENTE) + !!(v & CQ_ESTADO) + 2 * !!(v & CQ_AFTER) + !!(v & CQ_HASTA) + 1;
        struct db_val pv[7];
        for (int k = 0; k < np - 1; k++)
            pv[k] = db_text("x");
        pv[np - 1] = db_int(10);
        br_err rc = plan_of(st, name, citas_plan[v], pv, np, fn, ud);
        /* and as read with the names held (CITAS_LEAN_SELECT) */
        char lean[80];
        snprintf(lean, sizeof lean, "%s+names", name);
        if (!rc) rc = plan_of(st, lean, citas_lean_plan[v], pv, np, fn, ud);
        if (rc) return rc;
    }
    return BR_OK;
}

/* --- a shop's data as rows ------------------------------------------------------------- */

/* One table: its columns, its key (the first nkey columns), and the
 * statements that page through it and insert into it, all constant text. */
#define DUMP_TABLE_KEY(name, key, nkey, keymarks, cols, n, marks)                                  \
    {                                                                                              \
        {name, cols, n}, nkey, "SELECT " cols " FROM " name " ORDER BY " key " LIMIT ?",           \
            "SELECT " cols " FROM " name " WHERE (" key ") > (" keymarks ") ORDER BY " key         \
            " LIMIT ?",                                                                            \
            "INSERT INTO " name " (" cols ") VALUES (" marks ")"                                   \
    }
#define DUMP_TABLE(name, key, cols, n, marks) DUMP_TABLE_KEY(name, key, 1, "?", cols, n, marks)
#define DUMP_KEY_MAX                          3

static const struct dump_table {
    struct store_table t;
    int nkey;
    const char *first, *next, *insert;
} dump_tables[] = {
    DUMP_TABLE("auth_users", "id", "id, email, password_hash, created_at, last_sign_in_at", 5,
               "?, ?, ?, ?, ?"),
    DUMP_TABLE("perfiles", "id", "id, rol, nombre, telefono, created_at", 5, "?, ?, ?, ?, ?"),
    DUMP_TABLE("auth_sessions", "token_hash", "token_hash, user_id, created_at, expires_at", 4,
               "?, ?, ?, ?"),
    DUMP_TABLE("barberos", "id", "id, nombre, foto_url, activo", 4, "?, ?, ?, ?"),
    DUMP_TABLE("servicios", "id", "id, nombre, duracion_min, precio, activo", 5, "?, ?, ?, ?, ?"),
    DUMP_TABLE("citas", "id",
               "id, cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, estado, notas, "
               "google_event_id, created_at",
               10, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?"),
    DUMP_TABLE("historial_cortes", "id",
               "id, cliente_id, cita_id, barbero_id, servicio_id, fecha, created_at", 7,
               "?, ?, ?, ?, ?, ?, ?"),
    DUMP_TABLE("fotos_cita", "id",
               "id, cita_id, cliente_id, tipo, url, storage_path, created_at, bytes", 8,
               "?, ?, ?, ?, ?, ?, ?, ?"),
    DUMP_TABLE("mail_outbox", "id",
               "id, cita_id, recipient, cliente_nombre, barbero_nombre, servicio_nombre, "
               "fecha_inicio, fecha_fin, notas, created_at, status, attempts, next_attempt_at, "
               "locked_until, last_error, done_at, kind, due_at",
               18, "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"),
    /* added at the end, so that the tables before keep their
     * places (an export of version 1 names those only) */
    DUMP_TABLE_KEY("horarios", "barbero_id, dia, inicio", 3, "?, ?, ?",
                   "barbero_id, dia, inicio, fin", 4, "?, ?, ?, ?"),
    DUMP_TABLE("ausencias", "id", "id, barbero_id, desde, hasta, motivo, created_at", 6,
               "?, ?, ?, ?, ?, ?"),
};

#define DUMP_PAGE 2000

int store_tables(const struct store_table **out)
{
    static struct store_table t[ARRAY_LEN(dump_tables)];
    for (size_t i = 0; i < ARRAY_LEN(dump_tables); i++)
        t[i] = dump_tables[i].t;
    *out = t;
    return (int)ARRAY_LEN(dump_tables);
}

struct dump_page {
    store_dump_fn fn;
    void *ud;
    int table, nkey;
    int64_t rows;
    bool have;                        /* last holds the page's last key */
    struct db_val last[DUMP_KEY_MAX]; /* its texts in owned */
    char *owned[DUMP_KEY_MAX];
};

static void key_free(char *owned[DUMP_KEY_MAX])
{
    for (int k = 0; k < DUMP_KEY_MAX; k++) {
        free(owned[k]);
        owned[k] = NULL;
    }
}

static br_err dump_row(void *ud, const struct db_val *cols, int n)
{
    struct dump_page *p = ud;
    p->rows++;
    key_free(p->owned);
    p->have = false;
    if (n < p->nkey) return err_set(BR_STORE, "a row without its key");
    for (int k = 0; k < p->nkey; k++) {
        if (cols[k].type == DB_TEXT) {
            p->owned[k] = xstrndup(cols[k].s, cols[k].n);
            p->last[k] = db_text(p->owned[k]);
        } else if (cols[k].type == DB_INT) {
            p->last[k] = cols[k];
        } else {
            return err_set(BR_STORE, "a row without its key");
        }
    }
    p->have = true;
    return p->fn(p->ud, p->table, cols, n);
}

br_err store_dump(struct store *st, store_dump_fn fn, void *ud)
{
    struct db *db = st->db;
    struct db_conn *c = NULL;
    br_err rc = db->ops->acquire(db, &c);
    if (rc) return rc;
    rc = db->ops->begin_read(c);
    for (size_t t = 0; !rc && t < ARRAY_LEN(dump_tables); t++) {
        struct dump_page p = {.fn = fn, .ud = ud, .table = (int)t, .nkey = dump_tables[t].nkey};
        do {
            p.rows = 0;
            if (!p.have) {
                struct db_val q[] = {db_int(DUMP_PAGE)};
                rc = EXEC(db, c, dump_tables[t].first, q, dump_row, &p, NULL);
            } else {
                /* the key's texts stay alive while dump_row replaces it */
                struct db_val q[DUMP_KEY_MAX + 1];
                char *after[DUMP_KEY_MAX];
                memcpy(q, p.last, sizeof p.last);
                memcpy(after, p.owned, sizeof after);
                memset(p.owned, 0, sizeof p.owned);
                p.have = false;
                q[p.nkey] = db_int(DUMP_PAGE);
                rc = db->ops->exec(c, dump_tables[t].next, q, p.nkey + 1, dump_row, &p, NULL);
                key_free(after);
            }
        } while (!rc && p.rows == DUMP_PAGE);
        key_free(p.owned);
    }
    db->ops->rollback(c); /* read only: nothing to keep */
    db->ops->release(db, c);
    return rc;
}

struct load {
    store_load_fn next;
    void *ud;
    bool default_week;
};

struct id_list {
    char **ids;
    size_t n, cap;
};

static br_err id_row(void *ud, const struct db_val *cols, int n)
{
    struct id_list *l = ud;
    if (n < 1 || cols[0].type != DB_TEXT) return err_set(BR_STORE, "a row without its key");
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->ids = xrealloc(l->ids, l->cap * sizeof *l->ids);
    }
    l->ids[l->n++] = xstrndup(cols[0].s, cols[0].n);
    return BR_OK;
}

/* Every barber gets the default week, as the migration gives it to the
 * barbers it finds. */
static br_err default_weeks(struct db *db, struct db_conn *c)
{
    struct id_list l = {0};
    br_err rc = db->ops->exec(c, "SELECT id FROM barberos ORDER BY id", NULL, 0, id_row, &l, NULL);
    for (size_t i = 0; i < l.n; i++) {
        if (!rc) rc = horario_default_insert(db, c, l.ids[i]);
        free(l.ids[i]);
    }
    free(l.ids);
    return rc;
}

static br_err load_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct load *l = ud;
    for (;;) {
        struct db_val v[32];
        int table = -1, n = 0;
        br_err rc = l->next(l->ud, &table, v, &n);
        if (rc == BR_NOTFOUND) return l->default_week ? default_weeks(db, c) : BR_OK;
        if (rc) return rc;
        if (table < 0 || table >= (int)ARRAY_LEN(dump_tables) || n != dump_tables[table].t.ncols)
            return err_set(BR_INVALID, "a row that fits no table");
        rc = db->ops->exec(c, dump_tables[table].insert, v, n, NULL, NULL, NULL);
        if (rc) return rc;
    }
}

br_err store_load(struct store *st, store_load_fn next, void *ud, bool default_week)
{
    struct load l = {next, ud, default_week};
    return in_tx(st, load_tx, &l);
}

br_err store_backup(struct store *st, const char *path)
{
    if (!st->db->ops->backup_to)
        return err_set(BR_CONFIG, "%s has its own backup tools (see docs/operations.md, Backups)",
                       st->db->ops->name);
    return st->db->ops->backup_to(st->db, path);
}

br_err store_restore(struct store *st, const char *path)
{
    if (!st->db->ops->restore_from)
        return err_set(BR_CONFIG, "%s has its own restore tools (see docs/operations.md, Backups)",
                       st->db->ops->name);
    br_err rc = st->db->ops->restore_from(st->db, path);
    return rc ? rc : store_migrate(st);
}
