/*
 * citas.c - the store's appointments (see store/citas.h): the overlap
 * check, booking, a barber's busy stretches, and the listings (GET
 * /api/citas), read with the catalog's names held in memory (names.h) or
 * joined, also together with the caller's session. Their detail, cancel,
 * reschedule and reminders are in cambios.c.
 */
#include "store_int.h"
#include "../domain/roles.h"
#include "../util/buf.h"

#include <inttypes.h>
#include <stdio.h>

/* --- a barber's busy stretches ------------------------------------------------------ */

/* The busy stretches of one barber that intersect [desde, hasta): its
 * non-cancelled appointments that meet the window (MEETS_WINDOW). */
#define SQL_BUSY MEETS_WINDOW("fecha_inicio, fecha_fin", "")

static const char sql_busy[] = SQL_BUSY;

/* A busy stretch (inicio, fin and, where the statement reads it, the
 * service's margin) handed to fn, or with its margin to margen_fn. */
struct busy_cb {
    store_busy_fn fn;
    store_busy_margen_fn margen_fn;
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
    return a->fn ? a->fn(a->ud, ini, fin) : a->margen_fn(a->ud, ini, fin, as_int(&c[2]));
}

br_err store_citas_busy(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, store_busy_fn fn, void *ud)
{
    struct busy_cb a = {.fn = fn, .ud = ud};
    return run(st, sql_busy,
               DB_ARGS(db_text(barbero_id), db_text(desde), db_text(hasta), db_text(barbero_id),
                       db_text(desde), db_text(desde)),
               busy_row, &a, NULL);
}

/* --- a barber's busy stretches with their clean-up margins ----------------------------- */

/* The live appointments of a barber that start in [?, ?), but one (the nil
 * UUID: none), with their service's margen_min: a bounded stretch of the
 * index citas_barbero_inicio, each service by its key. */
#define SQL_BUSY_MARGEN                                                                            \
    "SELECT c.fecha_inicio, c.fecha_fin, coalesce(s.margen_min, 0) FROM citas c "                  \
    "LEFT JOIN servicios s ON s.id = c.servicio_id WHERE c.barbero_id = ? AND "                    \
    "c.fecha_inicio >= ? AND c.fecha_inicio < ? AND c.estado <> 'cancelada' AND c.id <> ?"
static const char sql_busy_margen[] = SQL_BUSY_MARGEN;
#define NIL_UUID "00000000-0000-0000-0000-000000000000"

br_err store_citas_busy_margen(struct store *st, const char *barbero_id, const char *desde,
                               const char *hasta, const char *but_id, store_busy_margen_fn fn,
                               void *ud)
{
    struct busy_cb a = {.margen_fn = fn, .ud = ud};
    return run(st, sql_busy_margen,
               DB_ARGS(db_text(barbero_id), db_text(desde), db_text(hasta),
                       db_text(but_id ? but_id : NIL_UUID)),
               busy_row, &a, NULL);
}

/* What may meet [inicio, fin + margen) with its own margin: anything that
 * starts up to a day and the longest margin before it (an appointment lasts
 * at most RULE_DURACION_MAX minutes) and before fin + margen. */
#define MARGEN_BACK_MS ((int64_t)(1440 + 120) * 60000)

struct margin_scan {
    int64_t ini, fin, margen_ms;
    bool taken;
};

static br_err margin_row(void *ud, const struct db_val *c, int n)
{
    (void)n;
    struct margin_scan *m = ud;
    int64_t a, b;
    if (c[0].type != DB_TEXT || c[1].type != DB_TEXT || !iso8601_parse(c[0].s, c[0].n, &a) ||
        !iso8601_parse(c[1].s, c[1].n, &b))
        return err_set(BR_STORE, "a stored appointment time does not parse");
    if (a < m->fin + m->margen_ms && b + as_int(&c[2]) * 60000 > m->ini) m->taken = true;
    return BR_OK;
}

br_err margin_taken(struct db *db, struct db_conn *conn, const char *barbero_id, const char *inicio,
                    const char *fin, int64_t margen_min, const char *but_id, bool *taken)
{
    *taken = false;
    struct margin_scan m = {0, 0, margen_min * 60000, false};
    if (!iso8601_parse(inicio, strlen(inicio), &m.ini) || !iso8601_parse(fin, strlen(fin), &m.fin))
        return BR_OK; /* the statements refuse such a row themselves */
    br_ts desde, hasta;
    iso8601_format(m.ini - MARGEN_BACK_MS, desde);
    iso8601_format(m.fin + m.margen_ms, hasta);
    struct db_val p[] = {db_text(barbero_id), db_text(desde), db_text(hasta),
                         db_text(but_id ? but_id : NIL_UUID)};
    br_err rc = EXEC(db, conn, sql_busy_margen, p, margin_row, &m, NULL);
    *taken = m.taken;
    return rc;
}

br_err store_cita_margin_taken(struct store *st, const char *barbero_id, const char *inicio,
                               const char *fin, int64_t margen_min, bool *taken)
{
    *taken = false;
    struct margin_scan m = {0, 0, margen_min * 60000, false};
    if (!iso8601_parse(inicio, strlen(inicio), &m.ini) || !iso8601_parse(fin, strlen(fin), &m.fin))
        return BR_OK;
    br_ts desde, hasta;
    iso8601_format(m.ini - MARGEN_BACK_MS, desde);
    iso8601_format(m.fin + m.margen_ms, hasta);
    br_err rc = run(st, sql_busy_margen,
                    DB_ARGS(db_text(barbero_id), db_text(desde), db_text(hasta), db_text(NIL_UUID)),
                    margin_row, &m, NULL);
    *taken = m.taken;
    return rc;
}

/* --- citas ------------------------------------------------------------------------ */

/* The overlap check: whether anything meets the new slot (MEETS_WINDOW). */
#define SQL_OVERLAP MEETS_WINDOW("1", "") " LIMIT 1"
static const char sql_overlap[] = SQL_OVERLAP;

br_err store_cita_overlaps(struct store *st, const char *barbero_id, const char *inicio,
                           const char *fin, bool *overlaps)
{
    *overlaps = false;
    return run(st, sql_overlap,
               DB_ARGS(db_text(barbero_id), db_text(inicio), db_text(fin), db_text(barbero_id),
                       db_text(inicio), db_text(inicio)),
               one_flag, overlaps, NULL);
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
    return run(st, sql_citas_upcoming, DB_ARGS(db_text(cliente_id), db_text(now), db_int(bound)),
               count_row, n, NULL);
}

/* The waiting-list entries of a client (?) that a booking of that day (?),
 * service (?) and barber (?) answers: for that barber or for any. */
#define ESPERA_ANSWERED                                                                            \
    "WHERE cliente_id = ? AND fecha = ? AND servicio_id = ? AND (barbero_id IS NULL OR "           \
    "barbero_id = ?)"

/* See store_int.h. */
br_err espera_answered_drop(struct db *db, struct db_conn *conn, const char *cliente_id,
                            const char *dia, const char *servicio_id, const char *barbero_id)
{
    /* the entry's notices go first, where foreign keys are not enforced */
    struct db_val pe[] = {db_text(cliente_id), db_text(dia), db_text(servicio_id),
                          db_text(barbero_id)};
    br_err rc = EXEC_LATER(db, conn,
                           "DELETE FROM lista_espera_avisos WHERE entrada_id IN (SELECT id FROM "
                           "lista_espera " ESPERA_ANSWERED ")",
                           pe);
    return rc ? rc : EXEC_LATER(db, conn, "DELETE FROM lista_espera " ESPERA_ANSWERED, pe);
}

struct book_args {
    const struct cita *c;
    const struct outbox_msg *m;
    const char *now;                  /* with cap: what "upcoming" is counted from */
    int64_t cap;                      /* upcoming appointments the client may hold; 0: any */
    bool avisos;                      /* the barber's notice too (store/avisos.h) */
    const struct desk_cliente *quien; /* settled first, in the same transaction */
    int64_t margen;                   /* >= 0: the clean-up margins are kept (the desk's) */
    const char *dia;                  /* the shop's date of the start: waiting-list entries go */
};

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
br_err lock_slot_hours(struct db *db, struct db_conn *c, const char *barbero_id, const char *inicio,
                       const char *fin)
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
    br_err rc = a->quien ? desk_cliente_settle(db, conn, a->quien, c->cliente_id) : BR_OK;
    if (rc) return rc;
    /* one client's bookings, and the end of her account, take turns on
     * PostgreSQL, before any hour lock (always in this order: they never
     * wait for each other); an account closed meanwhile books nothing */
    rc = client_turn(db, conn, c->cliente_id);
    if (rc) return rc;
    if (a->cap > 0) {
        int64_t n = 0;
        struct db_val pn[] = {db_text(c->cliente_id), db_text(a->now), db_int(a->cap)};
        rc = EXEC(db, conn, sql_citas_upcoming, pn, count_row, &n, NULL);
        if (rc) return rc;
        if (n >= a->cap) return err_set(BR_TOOLARGE, "upcoming cap");
    }
    if (a->margen >= 0) {
        /* the margins too: every booking whose margin may reach this one, or
         * this one's reach, shares an hour lock with it */
        int64_t s, e;
        br_ts lo, hi;
        if (iso8601_parse(c->fecha_inicio, strlen(c->fecha_inicio), &s) &&
            iso8601_parse(c->fecha_fin, strlen(c->fecha_fin), &e)) {
            iso8601_format(s - (int64_t)120 * 60000, lo);
            iso8601_format(e + a->margen * 60000, hi);
            rc = lock_slot_hours(db, conn, c->barbero_id, lo, hi);
        }
    } else {
        rc = lock_slot_hours(db, conn, c->barbero_id, c->fecha_inicio, c->fecha_fin);
    }
    if (rc) return rc;
    bool taken = false;
    struct db_val po[] = {db_text(c->barbero_id),   db_text(c->fecha_inicio),
                          db_text(c->fecha_fin),    db_text(c->barbero_id),
                          db_text(c->fecha_inicio), db_text(c->fecha_inicio)};
    rc = EXEC(db, conn, sql_overlap, po, one_flag, &taken, NULL);
    if (rc) return rc;
    if (taken) return err_set(BR_CONFLICT, "slot taken");
    if (a->margen >= 0) {
        rc = margin_taken(db, conn, c->barbero_id, c->fecha_inicio, c->fecha_fin, a->margen, NULL,
                          &taken);
        if (rc) return rc;
        if (taken) return err_set(BR_CONFLICT, "margin taken");
    }

    struct db_val pc[] = {
        db_text(c->id),          db_text(c->cliente_id),   db_text(c->barbero_id),
        db_text(c->servicio_id), db_text(c->fecha_inicio), db_text(c->fecha_fin),
        db_text(c->estado),      db_text(c->notas),        db_text(c->google_event_id),
        db_text(c->created_at),  db_text(c->servicio_id)};
    /* the three inserts are sent together with the commit on PostgreSQL:
     * any failure of theirs (an overlapping insert's exclusion violation:
     * BR_CONFLICT) fails the whole booking the same way */
    /* the service's price as it is when the booking commits stays with
     * the appointment (the owner's reports count it, whatever the price
     * becomes later) */
    rc = EXEC_LATER(db, conn,
                    "INSERT INTO citas (id, cliente_id, barbero_id, servicio_id, fecha_inicio, "
                    "fecha_fin, estado, notas, google_event_id, created_at, precio) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "(SELECT precio FROM servicios WHERE id = ?))",
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
    if (!rc && a->m) rc = outbox_insert(db, conn, a->m);
    if (!rc && a->avisos) rc = aviso_insert(db, conn, c->id, "aviso_cita", c->created_at);
    if (!rc && a->dia)
        rc = espera_answered_drop(db, conn, c->cliente_id, a->dia, c->servicio_id, c->barbero_id);
    return rc;
}

br_err store_cita_book(struct store *st, const struct cita *c, const struct outbox_msg *mail)
{
    return store_cita_book_capped(st, c, mail, NULL, 0, NULL);
}

br_err store_cita_book_capped(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                              const char *now, int64_t cap, const char *dia)
{
    struct book_args a = {c, mail, now, now ? cap : 0, st->avisos, NULL, -1, dia};
    /* of what the memos read, a booking changes its client's listing only */
    return in_tx_as(st, db_touch_key(c->cliente_id), book_tx, &a);
}

br_err store_cita_book_desk(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                            const struct desk_cliente *quien, int64_t margen_min, const char *dia)
{
    struct book_args a = {c, mail, NULL, 0, st->avisos, quien, margen_min, dia};
    return in_tx_as(st, db_touch_key(c->cliente_id), book_tx, &a);
}

br_err store_cita_exists(struct store *st, const char *id, bool *exists)
{
    *exists = false;
    return run(st, "SELECT 1 FROM citas WHERE id = ?", DB_ARGS(db_text(id)), one_flag, exists,
               NULL);
}

/* An appointment of a listing with its client's, barber's and service's
 * columns (18, CITAS_SELECT's; borrowed). */
static bool listed_cita_view(struct cita_view *v, const struct db_val *c, int n)
{
    (void)n;
    if (!cita_view(&v->cita, c)) return false;
    v->has_perfil = c[10].type != DB_NULL;
    v->perfil_nombre = text_or_null(&c[11]);
    v->perfil_telefono = text_or_null(&c[12]);
    v->barbero_nombre = text_or_null(&c[13]);
    v->barbero_foto_url = text_or_null(&c[14]);
    v->servicio_nombre = text_or_null(&c[15]);
    v->servicio_duracion_min = as_int(&c[16]);
    v->servicio_precio = as_real(&c[17]);
    return true;
}

LISTING(citas, struct cita_view, store_cita_fn, listed_cita_view)

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

br_err store_cita_view(struct store *st, const char *id, store_cita_fn fn, void *ud)
{
    return citas_list(st, CITAS_SELECT "WHERE c.id = ?", DB_ARGS(db_text(id)), fn, ud);
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

br_err citas_plans(struct store *st, store_plan_fn fn, void *ud)
{
    static const struct hot_stmt hot[] = {
        {"overlap", "EXPLAIN QUERY PLAN " SQL_OVERLAP, 6},
        {"busy", "EXPLAIN QUERY PLAN " SQL_BUSY, 6},
        {"citas_upcoming", "EXPLAIN QUERY PLAN " SQL_CITAS_UPCOMING, 3},
        {"busy_margen", "EXPLAIN QUERY PLAN " SQL_BUSY_MARGEN, 4},
        {NULL, NULL, 0},
    };
    br_err rc = plans_of(st, hot, fn, ud);
    /* every variant of the listing: citas[+_cliente][+_estado][+_after][+_hasta] */
    pthread_once(&citas_sql_once, citas_sql_build);
    for (unsigned v = 0; !rc && v < CQ_VARIANTS; v++) {
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
        rc = plan_of(st, name, citas_plan[v], pv, np, fn, ud);
        /* and as read with the names held (CITAS_LEAN_SELECT) */
        char lean[80];
        snprintf(lean, sizeof lean, "%s+names", name);
        if (!rc) rc = plan_of(st, lean, citas_lean_plan[v], pv, np, fn, ud);
    }
    return rc;
}
