/*
 * store_int.h - what the store's files share and nobody else sees: the body
 * of struct store, the plumbing every operation runs on (run, in_tx,
 * run_write...), the decoders of columns several aggregates read, and the
 * few statements and helpers one aggregate lends another. Included only by
 * the store's own files (src/store/); the store's interface is store.h.
 *
 * The small helpers are static inline, as they were static in one file:
 * every operation's hot path compiles as it did.
 */
#ifndef BR_STORE_INT_H
#define BR_STORE_INT_H

#include "store.h"
#include "db.h"
#include "names.h"
#include "../util/iso8601.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSION_MEMO 1024 /* verified sessions remembered (direct-mapped by token hash) */

struct session_memo {
    char token_hash[65]; /* "" when empty */
    struct db_mark mark;
    br_ts expires_at;
    struct principal p;
};

struct store {
    struct db *db;
    pthread_mutex_t sessions_mu;   /* guards sessions */
    struct session_memo *sessions; /* NULL where reads cannot be marked (store_marks) */
    /* the catalog's names as of a version (names.h), for the listings */
    pthread_mutex_t names_mu;
    bool names_on;       /* BARBERIA_MEMO */
    bool names_loading;  /* a thread is reading them: the others join */
    int64_t names_retry; /* after a load failed (clock_mono_ms): join until then */
    struct names *names; /* NULL until read */
    bool avisos;         /* queue the barber's notices (store/avisos.h) */
};

/* --- plumbing ---------------------------------------------------------------- */

/* A statement's parameters written where it runs: the array and its count,
 * the two arguments run and its kin take, so no count is kept in step by
 * hand: run_write(st, SQL, DB_ARGS(db_text(id), db_int(n)), NULL). Each
 * value is evaluated once (sizeof does not evaluate its operand). */
#define DB_ARGS(...)                                                                               \
    (const struct db_val[]){__VA_ARGS__},                                                          \
        (int)(sizeof((const struct db_val[]){__VA_ARGS__}) / sizeof(struct db_val))

static inline br_err run(struct store *st, const char *sql, const struct db_val *p, int n,
                         db_row_fn fn, void *ud, int64_t *changes)
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
static inline br_err in_tx_as(struct store *st, uint64_t touch, tx_fn fn, void *ud)
{
    return st->db->ops->write(st->db, fn, ud, touch);
}

/* A write that may change anything the memos read (the safe default). */
static inline br_err in_tx(struct store *st, tx_fn fn, void *ud)
{
    return in_tx_as(st, DB_TOUCH_ALL, fn, ud);
}

struct one_write {
    const char *sql;
    const struct db_val *p;
    int n;
    int64_t *changes;
};

static inline br_err one_write_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct one_write *w = ud;
    return db->ops->exec(c, w->sql, w->p, w->n, NULL, NULL, w->changes);
}

/* One statement that writes, as a transaction of its own: it goes through
 * the writer like every other write (a group commit, in order). */
static inline br_err run_write_as(struct store *st, uint64_t touch, const char *sql,
                                  const struct db_val *p, int n, int64_t *changes)
{
    struct one_write w = {sql, p, n, changes};
    return in_tx_as(st, touch, one_write_tx, &w);
}

static inline br_err run_write(struct store *st, const char *sql, const struct db_val *p, int n,
                               int64_t *changes)
{
    return run_write_as(st, DB_TOUCH_ALL, sql, p, n, changes);
}

/* A write to bookkeeping no remembered answer reads (sessions' sign-in
 * counters, object intents, leases, the outbox, photo records). */
static inline br_err run_write_aside(struct store *st, const char *sql, const struct db_val *p,
                                     int n, int64_t *changes)
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

static inline const char *text_or_null(const struct db_val *v)
{
    return v->type == DB_TEXT ? v->s : NULL;
}

static inline const char *text_or_empty(const struct db_val *v)
{
    return v->type == DB_TEXT ? v->s : "";
}

static inline char *dup_or_null(const struct db_val *v)
{
    return v->type == DB_TEXT ? xstrndup(v->s, v->n) : NULL;
}

/* Copies a column into a fixed field (an id, a timestamp) with its length;
 * false, leaving the field empty, when it does not fit: never a silently
 * shortened value. */
static inline bool copy_fixed(char *dst, size_t cap, const struct db_val *v)
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

static inline br_err too_long(void)
{
    return err_set(BR_STORE, "a stored id or timestamp does not fit its field");
}

/* The first column, an id, into the br_id at ud (left as it was when there
 * is no row; "" for NULL; a value too long for an id is too_long()). */
static inline br_err one_id(void *ud, const struct db_val *c, int n)
{
    if (n > 0 && !copy_fixed(ud, sizeof(br_id), &c[0])) return too_long();
    return BR_OK;
}

static inline int64_t as_int(const struct db_val *v)
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

static inline double as_real(const struct db_val *v)
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
static inline br_err one_int(void *ud, const struct db_val *cols, int n)
{
    *(int64_t *)ud = n > 0 ? as_int(&cols[0]) : 0;
    return BR_OK;
}

static inline br_err one_flag(void *ud, const struct db_val *cols, int n)
{
    (void)cols;
    (void)n;
    *(bool *)ud = true;
    return BR_OK;
}

/* A short text column into a 64-byte buffer ("" when NULL or longer). */
static inline br_err one_text(void *ud, const struct db_val *c, int n)
{
    if (n > 0) copy_fixed(ud, 64, &c[0]);
    return BR_OK;
}

/* The first column's text into *(char **)ud (owned; NULL for NULL), the
 * last row's. */
static inline br_err one_text_dup(void *ud, const struct db_val *c, int n)
{
    (void)n;
    char **out = ud;
    free(*out);
    *out = dup_or_null(&c[0]);
    return BR_OK;
}

static inline br_err one_ts(void *ud, const struct db_val *c, int n)
{
    char *out = ud;
    if (n > 0) copy_fixed(out, ISO8601_LEN + 1, &c[0]);
    return BR_OK;
}

/* Only called where reads can be marked (store_marks), so where the adapter has mark. */
static inline bool mark_now(struct store *st, uint64_t key, struct db_mark *m)
{
    return st->db->ops->mark(st->db, key, m);
}

/* Whether what was read at m still holds. */
static inline bool unchanged(struct store *st, const struct db_mark *m)
{
    return st->db->ops->unchanged(st->db, m);
}

/* --- what many statements repeat --------------------------------------------------- */

/* Serialises the transaction on c with every other that locks kind:id
 * until it ends (db_ops.lock): "cita:<id>", "fotos:<cita_id>"... */
/* The lock kind by which a client's messages' end (outbox_done) and the
 * deletion of her account take turns. */
#define OUTBOX_LOCK_CLIENTE "mensajes-cliente"
/* The lock kind by which a client's photo consent changing (and her
 * account closing) and a photo of her appointment being stored take turns,
 * so that a photo is either refused or there for the removal to find. */
#define LOCK_CONSENTIMIENTO "consentimiento"
/* The lock kind by which a client's bookings and the end of her account
 * take turns (and, with the upcoming cap, her bookings with each other). */
#define LOCK_CITAS_CLIENTE "citas-cliente"
/* One row when a photo of appointment ? is refused: its client withdrew
 * her consent, or deleted her account (known by its address, which an
 * export carries: eliminado_en it does not). */
#define SQL_FOTOS_REFUSED                                                                          \
    "SELECT 1 FROM citas c JOIN auth_users u ON u.id = c.cliente_id WHERE c.id = ? AND "           \
    "(u.email LIKE '%" EMAIL_ELIMINADO_SUFFIX "' OR EXISTS (SELECT 1 FROM consentimientos k "      \
    "WHERE k.cliente_id = c.cliente_id AND k.tipo = 'fotos' AND k.retirado_en IS NOT NULL))"

static inline br_err lock_on(struct db *db, struct db_conn *c, const char *kind, const char *id)
{
    char key[64];
    snprintf(key, sizeof key, "%s:%s", kind, id);
    return db->ops->lock(c, key);
}

/* In a transaction that writes something of one client's (a booking, a
 * waiting-list entry, a consent, a change of her profile or address): her
 * turn against the end of her account (LOCK_CITAS_CLIENTE, taken before
 * any other lock of the transaction), and BR_UNAUTH "client gone" when her
 * account was closed meanwhile: nothing of hers is written after it. */
static inline br_err client_turn(struct db *db, struct db_conn *c, const char *cliente_id)
{
    br_err rc = lock_on(db, c, LOCK_CITAS_CLIENTE, cliente_id);
    bool gone = false;
    struct db_val p[] = {db_text(cliente_id)};
    if (!rc)
        rc = EXEC(db, c,
                  "SELECT 1 FROM auth_users WHERE id = ? AND email LIKE '%" EMAIL_ELIMINADO_SUFFIX
                  "'",
                  p, one_flag, &gone, NULL);
    return !rc && gone ? err_set(BR_UNAUTH, "client gone") : rc;
}

/* In a transaction: BR_OK when count_sql (constant text counting the rows
 * of one key, its one parameter) counts some, else BR_NOTFOUND with the
 * message missing. */
static inline br_err row_exists(struct db *db, struct db_conn *c, const char *count_sql,
                                const char *key, const char *missing)
{
    int64_t n = 0;
    struct db_val p[] = {db_text(key)};
    br_err rc = EXEC(db, c, count_sql, p, one_int, &n, NULL);
    if (!rc && n == 0) rc = err_set(BR_NOTFOUND, "%s", missing);
    return rc;
}

/* In a transaction: deletes the row delete_sql (constant text deleting
 * the row of one key, its one parameter) finds, else BR_NOTFOUND with the
 * message missing. */
static inline br_err row_delete(struct db *db, struct db_conn *c, const char *delete_sql,
                                const char *key, const char *missing)
{
    int64_t n = 0;
    struct db_val p[] = {db_text(key)};
    br_err rc = EXEC(db, c, delete_sql, p, NULL, NULL, &n);
    if (!rc && n == 0) rc = err_set(BR_NOTFOUND, "%s", missing);
    return rc;
}

/* One field of a patch: whether the patch sets it, its statement (constant
 * text "UPDATE t SET col = ? WHERE id = ?", never built from input) and its
 * value. */
struct patch_field {
    bool set;
    const char *sql;
    struct db_val v;
};

/* In a transaction: runs the statement of each field the patch sets, on
 * the row id, in order, until one fails. */
static inline br_err patch_fields(struct db *db, struct db_conn *c, const char *id,
                                  const struct patch_field *f, size_t n)
{
    br_err rc = BR_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!f[i].set) continue;
        struct db_val p[] = {f[i].v, db_text(id)};
        rc = EXEC(db, c, f[i].sql, p, NULL, NULL, NULL);
    }
    return rc;
}

/* What a transaction on one row is given: the row's id and its argument
 * (a patch, a list of values). */
struct row_args {
    const char *id;
    const void *arg;
};

/* Copies the one row a lookup reads into out, owning what it copies; false,
 * copying nothing it would own, when a value does not fit its field. */
typedef bool (*row_decode_fn)(void *out, const struct db_val *c, int n);

/* A row_decode_fn named name for records of type T: view decodes the row
 * (borrowed; false when a value does not fit its field), own then makes
 * the record's text its own (owned by whoever owns the record). */
#define OWNED_ROW(name, T, view, own)                                                              \
    static bool name(void *out, const struct db_val *c, int n)                                     \
    {                                                                                              \
        T v;                                                                                       \
        if (!view(&v, c, n)) return false;                                                         \
        own(&v);                                                                                   \
        *(T *)out = v;                                                                             \
        return true;                                                                               \
    }

struct one_row {
    row_decode_fn decode;
    void *out;
    bool found;
};

static inline br_err one_row(void *ud, const struct db_val *c, int n)
{
    struct one_row *r = ud;
    if (!r->decode(r->out, c, n)) return too_long();
    r->found = true;
    return BR_OK;
}

/* Reads the row sql finds (with its n parameters p) into out with decode:
 * BR_NOTFOUND with the message missing when there is none. On an error
 * out may hold what decode copied: the caller clears it. */
static inline br_err run_one(struct store *st, const char *sql, const struct db_val *p, int n,
                             row_decode_fn decode, void *out, const char *missing)
{
    struct one_row r = {decode, out, false};
    br_err rc = run(st, sql, p, n, one_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "%s", missing);
    return rc;
}

/* The same in the transaction on c (the statement's params counted as
 * EXEC counts them). */
#define EXEC_ONE(db, c, sql, params, decode, out, missing)                                         \
    exec_one(db, c, sql, params, (int)ARRAY_LEN(params), decode, out, missing)

static inline br_err exec_one(struct db *db, struct db_conn *c, const char *sql,
                              const struct db_val *p, int n, row_decode_fn decode, void *out,
                              const char *missing)
{
    struct one_row r = {decode, out, false};
    br_err rc = db->ops->exec(c, sql, p, n, one_row, &r, NULL);
    if (!rc && !r.found) rc = err_set(BR_NOTFOUND, "%s", missing);
    return rc;
}

/* A listing of records of type T: name_row is its row callback, which
 * decodes each row with view (bool view(T *, const struct db_val *c, int
 * n), false when a value does not fit its field) and hands the record,
 * borrowed, to the caller's fn (of type fn_t) with its ud, both held in a
 * struct name_each; name_list runs the statement sql with its n parameters
 * p over it. */
#define LISTING(name, T, fn_t, view)                                                               \
    struct name##_each {                                                                           \
        fn_t fn;                                                                                   \
        void *ud;                                                                                  \
    };                                                                                             \
    static br_err name##_row(void *ud, const struct db_val *c, int n)                              \
    {                                                                                              \
        struct name##_each *a = ud;                                                                \
        T v;                                                                                       \
        return view(&v, c, n) ? a->fn(a->ud, &v) : too_long();                                     \
    }                                                                                              \
    static inline br_err name##_list(struct store *st, const char *sql, const struct db_val *p,    \
                                     int n, fn_t fn, void *ud)                                     \
    {                                                                                              \
        struct name##_each a = {fn, ud};                                                           \
        return run(st, sql, p, n, name##_row, &a, NULL);                                           \
    }

/* --- columns several aggregates read ------------------------------------------------- */

#define CITA_COLS                                                                                  \
    "c.id, c.cliente_id, c.barbero_id, c.servicio_id, c.fecha_inicio, c.fecha_fin, c.estado, "     \
    "c.notas, c.google_event_id, c.created_at"

static inline bool cita_view(struct cita *ci, const struct db_val *c)
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

/* A photo's record from FOTO_COLS (borrowed). */
static inline bool foto_view(struct foto *f, const struct db_val *c, int n)
{
    (void)n;
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

#define AUSENCIA_COLS "id, barbero_id, desde, hasta, motivo, created_at"

/* A day off or a closure from AUSENCIA_COLS (motivo borrowed). */
static inline bool ausencia_view(struct ausencia *x, const struct db_val *c, int n)
{
    (void)n;
    bool fits = true;
    COPY(x->id, &c[0]);
    COPY(x->barbero_id, &c[1]);
    COPY(x->desde, &c[2]);
    COPY(x->hasta, &c[3]);
    COPY(x->created_at, &c[5]);
    x->motivo = (char *)text_or_null(&c[4]);
    return fits;
}

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

/* --- what one aggregate lends another ------------------------------------------------ */

/* identity.c: the principal of a session's row (8 columns: u.id, u.email,
 * the perfil's 5, s.expires_at), owned by *p (the listing with the
 * session reads it from its first row). */
struct principal_row {
    struct principal *p;
    bool found;
    br_ts expires_at;
};
br_err principal_row(void *ud, const struct db_val *c, int n);

/* identity.c: inserts the user u and its profile (and its first session,
 * when u->session_hash) in the transaction on c. BR_CONFLICT "email taken". */
br_err user_insert(struct db *db, struct db_conn *c, const struct new_user *u);
/* A desk booking's client, in its transaction (store_cita_book_desk):
 * creates q->nuevo or gives q->email to cliente_id. */
struct desk_cliente;
br_err desk_cliente_settle(struct db *db, struct db_conn *c, const struct desk_cliente *q,
                           const char *cliente_id);

/* identity.c: sets the password hash of the user user_id in the
 * transaction on c, and ends her account links (account_links_end);
 * BR_NOTFOUND "Usuario no encontrado" when there is no such user. */
br_err password_set(struct db *db, struct db_conn *c, const char *user_id, const char *hash);
/* identity.c: deletes the user's unused links (password reset and e-mail
 * change) and the e-mails carrying one not yet sent, in the transaction on
 * c: after a new password or a new address, a link asked for before no
 * longer sets a password nor moves the account to another address. */
br_err account_links_end(struct db *db, struct db_conn *c, const char *user_id);
/* espera.c: ends the personal links of every appointment of cliente_id
 * handed out before (a new generation: store_enlace_gen), in the
 * transaction on c: her address or phone was corrected, so what went to
 * the old one must not open her appointments any more. */
br_err appointment_links_end(struct db *db, struct db_conn *c, const char *cliente_id,
                             const char *now);
/* cuenta.c: the e-mails still to go about the user's appointments and her
 * waiting list (never the barbers' notices), in the transaction on c: to
 * email, the address she now has, or, with none (NULL), skipped at now.
 * Each carries a link that changes the appointment. */
br_err her_mail_readdress(struct db *db, struct db_conn *c, const char *user_id, const char *email,
                          const char *now);
/* whatsapp.c: a client's WhatsApp consent given for the number antes
 * (E.164 digits) follows a correction of that number, in the transaction
 * on c: to despues, with the messages still to go by WhatsApp about her
 * appointments and waiting list; withdrawn at now by por when despues is
 * NULL. A consent for another number, or none, is left as it is. */
br_err whatsapp_consent_follow(struct db *db, struct db_conn *c, const char *cliente_id,
                               const char *antes, const char *despues, const char *now,
                               const char *por);

/* identity.c: opens the session token_hash (a hash, never the token) of
 * user_id, created at now and lasting until expires_at, in the
 * transaction on c. */
br_err session_insert(struct db *db, struct db_conn *c, const char *token_hash, const char *user_id,
                      const char *now, const char *expires_at);

/* catalog.c: BR_NOTFOUND "no such barber" unless the barber barbero_id
 * exists, in the transaction on c. */
br_err barbero_exists(struct db *db, struct db_conn *c, const char *barbero_id);

/* catalog.c: the default week of a new barber (and of every barber the
 * migration or an import of version 1 finds). */
br_err horario_default_insert(struct db *db, struct db_conn *c, const char *barbero_id);

/* catalog.c: the catalog's names as of its version (names.h) for the
 * listings of appointments. A listing's rows read either with the names n
 * (statements that read the catalog's version instead of joining barberos
 * and servicios) or, with n NULL, joined by the database. OUT: *stale when n
 * turned out not to be of the version the statement read (then nothing was
 * listed). */
typedef br_err (*names_try_fn)(struct store *st, struct names *n, void *ud, bool *stale);
/* Runs try with the names held; when they are stale (or none yet), with
 * the catalog read afresh; joined when that cannot be had (see
 * names_fresh) or BARBERIA_MEMO is 0. */
br_err with_names(struct store *st, names_try_fn try, void *ud);

/* What a listing's row callback returns to stop its statement when the
 * names it holds turn out stale (names_check). Not one of br_err's codes:
 * nothing failed, so no adapter may take it for a failure of its own (a
 * busy pool, a lost connection: BR_BUSY), and it never leaves the store -
 * the listing's try sees *stale and with_names reads again. */
#define NAMES_STALE ((br_err)-1)

/* Whether the names n are of the version a listing's first row read
 * (BR_OK), or the listing must stop before anything is listed
 * (NAMES_STALE, *stale set): every row has the version of the same
 * snapshot. */
static inline br_err names_check(const struct names *n, const struct db_val *version, bool *checked,
                                 bool *stale)
{
    if (*checked) return BR_OK;
    if (!names_is(n, version)) {
        *stale = true;
        return NAMES_STALE; /* stops the statement; with_names reads on */
    }
    *checked = true;
    return BR_OK;
}

/* Columns 13-17 of a listing's row (barber: nombre, foto_url; service:
 * nombre, duracion_min, precio) from n, by the row's barbero_id (2) and
 * servicio_id (3); NULL where there is none, as the join gives. */
static inline void names_complete(const struct names *n, struct db_val row[18])
{
    const struct db_val *b = names_find(n, NAMES_BARBERO, &row[2]);
    const struct db_val *s = names_find(n, NAMES_SERVICIO, &row[3]);
    for (int i = 0; i < 2; i++)
        row[13 + i] = b ? b[i] : db_null();
    for (int i = 0; i < 3; i++)
        row[15 + i] = s ? s[i] : db_null();
}

/* citas.c: the hour locks of a booking or a move (PostgreSQL). */
br_err lock_slot_hours(struct db *db, struct db_conn *c, const char *barbero_id, const char *inicio,
                       const char *fin);

/* citas.c: whether [inicio, fin) with margen_min minutes after it meets a
 * live appointment of the barber (but but_id, nullable) with that one's
 * service's margin after it. */
br_err margin_taken(struct db *db, struct db_conn *conn, const char *barbero_id, const char *inicio,
                    const char *fin, int64_t margen_min, const char *but_id, bool *taken);

/* espera.c: records the freed slot l in the transaction on conn. */
struct espera_liberacion;
br_err espera_liberacion_insert(struct db *db, struct db_conn *conn,
                                const struct espera_liberacion *l);
/* citas.c: she no longer waits for what she has booked (or moved her
 * appointment to): her waiting-list entries of that day (dia, the shop's
 * date) for that service, and that barber or any, go with their notices,
 * in the transaction on conn. */
br_err espera_answered_drop(struct db *db, struct db_conn *conn, const char *cliente_id,
                            const char *dia, const char *servicio_id, const char *barbero_id);
/* outbox.c: queues m in the transaction on conn. */
br_err outbox_insert(struct db *db, struct db_conn *conn, const struct outbox_msg *m);
/* outbox.c: the message id is done with status ("sent", "dropped",
 * "skipped"), the error that ended it (NULL: none), at now; its lease
 * ends. With a claim, only while that claim holds it (else BR_CONFLICT,
 * nothing written). */
br_err outbox_done(struct store *st, const char *id, const char *claim, const char *status,
                   const char *error, const char *now);
/* outbox.c: the error of a write refused because its claim (claim_tx)
 * no longer holds the message. */
br_err outbox_claim_lost(void);
/* outbox.c: one write of a claimed message's fate, its SQL conditioned on
 * the claim (`... AND locked_until = ?`): outbox_claim_lost() when it
 * changed no row. */
br_err outbox_claimed_write(struct store *st, const char *sql, const struct db_val *p, int n);
/* The kinds of the barber's notices, as an SQL list (the rest of the
 * outbox speaks to clients). */
#define OUTBOX_AVISOS "('aviso_cita', 'aviso_cambio', 'aviso_cancelacion')"
/* Queues the barber's notice of kind ("aviso_cita", "aviso_cambio",
 * "aviso_cancelacion") about cita_id as it now stands, when its barber has
 * an address (nothing otherwise), created at now (avisos.c). */
br_err aviso_insert(struct db *db, struct db_conn *conn, const char *cita_id, const char *kind,
                    const char *now);
/* The barber's address and linked user from a PATCH, in its transaction:
 * BR_CONFLICT when the user speaks for another barber (avisos.c). */
br_err contacto_patch(struct db *db, struct db_conn *conn, const char *barbero_id,
                      const struct barbero_patch *p);

/* plans.c: hands fn the plan of each statement of hot (their text an
 * EXPLAIN QUERY PLAN, each with nparams placeholders; the list ends with
 * a NULL name), or of one statement (plan_of). Each aggregate names its
 * own hot statements (identity_hot, fotos_hot, avisos_hot), or reads
 * their plans itself where it builds them (citas_plans, informes_plans). */
struct hot_stmt {
    const char *name, *sql;
    int nparams;
};
br_err plan_of(struct store *st, const char *name, const char *sql, const struct db_val *p, int n,
               store_plan_fn fn, void *ud);
br_err plans_of(struct store *st, const struct hot_stmt *hot, store_plan_fn fn, void *ud);
extern const struct hot_stmt identity_hot[], fotos_hot[], avisos_hot[];
br_err citas_plans(struct store *st, store_plan_fn fn, void *ud);
br_err informes_plans(struct store *st, store_plan_fn fn, void *ud);

#endif
