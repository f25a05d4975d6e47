/*
 * catalog.c - the store's catalog (see store/catalog.h): barbers,
 * services, weekly schedules, days off; and the catalog's names as of its
 * version (names.h), which the listings of appointments (citas.c) show
 * beside each row instead of joining them.
 */
#include "store_int.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <stdio.h>

/* --- catalog --------------------------------------------------------------------- */

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

/* A barber from its columns: id, nombre, foto_url and, where the
 * statement reads them, activo and the contact's email, usuario_id and
 * feed (borrowed). */
static bool barbero_view(struct barbero *b, const struct db_val *c, int n)
{
    bool fits = true;
    COPY(b->id, &c[0]);
    b->nombre = (char *)text_or_empty(&c[1]);
    b->foto_url = (char *)text_or_null(&c[2]);
    b->activo = n > 3 ? as_int(&c[3]) != 0 : true;
    b->email = n > 4 ? (char *)text_or_null(&c[4]) : NULL;
    b->usuario_id[0] = '\0';
    if (n > 5) COPY(b->usuario_id, &c[5]);
    b->feed = n > 6 && c[6].type != DB_NULL;
    return fits;
}

static void barbero_own(struct barbero *b)
{
    b->nombre = xstrdup(b->nombre);
    b->foto_url = xstrdup_or_null(b->foto_url);
    b->email = xstrdup_or_null(b->email);
}

OWNED_ROW(barbero_decode, struct barbero, barbero_view, barbero_own)
LISTING(barbero, struct barbero, store_barbero_fn, barbero_view)

br_err store_barbero_get(struct store *st, const char *id, struct barbero *b)
{
    memset(b, 0, sizeof *b);
    return run_one(st,
                   "SELECT b.id, b.nombre, b.foto_url, b.activo, k.email, k.usuario_id, "
                   "k.feed_hash FROM barberos b "
                   "LEFT JOIN barbero_contactos k ON k.barbero_id = b.id WHERE b.id = ?",
                   DB_ARGS(db_text(id)), barbero_decode, b, "no such barber");
}

br_err store_barberos_each(struct store *st, store_barbero_fn fn, void *ud)
{
    return barbero_list(st,
                        "SELECT id, nombre, foto_url, activo FROM barberos WHERE activo "
                        "ORDER BY nombre, id",
                        NULL, 0, fn, ud);
}

br_err store_servicio_add(struct store *st, const struct servicio *s)
{
    return run_write(st,
                     "INSERT INTO servicios (id, nombre, duracion_min, precio, margen_min) "
                     "VALUES (?, ?, ?, ?, ?)",
                     DB_ARGS(db_text(s->id), db_text(s->nombre), db_int(s->duracion_min),
                             db_real(s->precio), db_int(s->margen_min)),
                     NULL);
}

/* A service from its columns: id, nombre, duracion_min, precio and, where
 * the statement reads them, activo and margen_min (borrowed). */
static bool servicio_view(struct servicio *s, const struct db_val *c, int n)
{
    bool fits = true;
    COPY(s->id, &c[0]);
    s->nombre = (char *)text_or_empty(&c[1]);
    s->duracion_min = as_int(&c[2]);
    s->precio = as_real(&c[3]);
    s->activo = n > 4 ? as_int(&c[4]) != 0 : true;
    s->margen_min = n > 5 ? as_int(&c[5]) : 0;
    return fits;
}

static void servicio_own(struct servicio *s)
{
    s->nombre = xstrdup(s->nombre);
}

OWNED_ROW(servicio_decode, struct servicio, servicio_view, servicio_own)
LISTING(servicio, struct servicio, store_servicio_fn, servicio_view)

br_err store_servicio_get(struct store *st, const char *id, struct servicio *s)
{
    memset(s, 0, sizeof *s);
    return run_one(
        st,
        "SELECT id, nombre, duracion_min, precio, activo, margen_min FROM servicios WHERE id = ?",
        DB_ARGS(db_text(id)), servicio_decode, s, "no such service");
}

br_err store_servicios_each(struct store *st, store_servicio_fn fn, void *ud)
{
    return servicio_list(
        st,
        "SELECT id, nombre, duracion_min, precio, activo FROM servicios WHERE activo "
        "ORDER BY nombre, id",
        NULL, 0, fn, ud);
}

/* --- catalog administration, schedules, days off ------------------------------------ */

/* In a transaction: adds the n stretches t to the barber's week. */
static br_err tramos_insert(struct db *db, struct db_conn *c, const char *barbero_id,
                            const struct horario_tramo *t, size_t n)
{
    br_err rc = BR_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        struct db_val p[] = {db_text(barbero_id), db_int(t[i].dia), db_int(t[i].inicio),
                             db_int(t[i].fin)};
        rc = EXEC(db, c, "INSERT INTO horarios (barbero_id, dia, inicio, fin) VALUES (?, ?, ?, ?)",
                  p, NULL, NULL, NULL);
    }
    return rc;
}

/* The default week of a new barber (and of every barber the migration
 * found): Monday to Friday 09:00-14:00 and 16:00-20:00, Saturday
 * 09:00-14:00. */
br_err horario_default_insert(struct db *db, struct db_conn *c, const char *barbero_id)
{
    static const struct horario_tramo def[] = {
        {1, 540, 840}, {1, 960, 1200}, {2, 540, 840}, {2, 960, 1200}, {3, 540, 840}, {3, 960, 1200},
        {4, 540, 840}, {4, 960, 1200}, {5, 540, 840}, {5, 960, 1200}, {6, 540, 840},
    };
    return tramos_insert(db, c, barbero_id, def, ARRAY_LEN(def));
}

br_err store_barberos_all(struct store *st, store_barbero_fn fn, void *ud)
{
    return barbero_list(
        st,
        "SELECT b.id, b.nombre, b.foto_url, b.activo, k.email, k.usuario_id, k.feed_hash "
        "FROM barberos b LEFT JOIN barbero_contactos k ON k.barbero_id = b.id "
        "ORDER BY b.nombre, b.id",
        NULL, 0, fn, ud);
}

br_err store_servicios_all(struct store *st, store_servicio_fn fn, void *ud)
{
    return servicio_list(
        st,
        "SELECT id, nombre, duracion_min, precio, activo, margen_min FROM servicios "
        "ORDER BY nombre, id",
        NULL, 0, fn, ud);
}

/* See store_int.h. */
br_err barbero_exists(struct db *db, struct db_conn *c, const char *barbero_id)
{
    return row_exists(db, c, "SELECT count(*) FROM barberos WHERE id = ?", barbero_id,
                      "no such barber");
}

/* A patch is applied field by field in one transaction (patch_fields): a
 * missing row is told first. */
static br_err barbero_patch_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct row_args *a = ud;
    const struct barbero_patch *p = a->arg;
    const struct patch_field f[] = {
        {p->nombre != NULL, "UPDATE barberos SET nombre = ? WHERE id = ?", db_text(p->nombre)},
        {p->set_foto_url, "UPDATE barberos SET foto_url = ? WHERE id = ?", db_text(p->foto_url)},
        {p->activo >= 0, "UPDATE barberos SET activo = ? WHERE id = ?",
         db_text(p->activo ? "1" : "0")},
    };
    br_err rc = barbero_exists(db, c, a->id);
    if (!rc) rc = patch_fields(db, c, a->id, f, ARRAY_LEN(f));
    if (!rc && (p->set_email || p->set_usuario)) rc = contacto_patch(db, c, a->id, p);
    return rc;
}

br_err store_barbero_update(struct store *st, const char *id, const struct barbero_patch *p)
{
    struct row_args a = {id, p};
    return in_tx(st, barbero_patch_tx, &a);
}

static br_err servicio_patch_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct row_args *a = ud;
    const struct servicio_patch *p = a->arg;
    const struct patch_field f[] = {
        {p->nombre != NULL, "UPDATE servicios SET nombre = ? WHERE id = ?", db_text(p->nombre)},
        {p->duracion_min > 0, "UPDATE servicios SET duracion_min = ? WHERE id = ?",
         db_int(p->duracion_min)},
        {p->set_precio, "UPDATE servicios SET precio = ? WHERE id = ?", db_real(p->precio)},
        {p->margen_min >= 0, "UPDATE servicios SET margen_min = ? WHERE id = ?",
         db_int(p->margen_min)},
        {p->activo >= 0, "UPDATE servicios SET activo = ? WHERE id = ?",
         db_text(p->activo ? "1" : "0")},
    };
    br_err rc =
        row_exists(db, c, "SELECT count(*) FROM servicios WHERE id = ?", a->id, "no such service");
    if (!rc) rc = patch_fields(db, c, a->id, f, ARRAY_LEN(f));
    return rc;
}

br_err store_servicio_update(struct store *st, const char *id, const struct servicio_patch *p)
{
    struct row_args a = {id, p};
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
    return run(st,
               "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
               "JOIN barberos b ON b.id = h.barbero_id WHERE h.barbero_id = ? "
               "ORDER BY h.dia, h.inicio",
               DB_ARGS(db_text(barbero_id)), tramo_row, &a, NULL);
}

br_err store_horario_dia(struct store *st, int dia, const char *barbero_id, store_tramo_fn fn,
                         void *ud)
{
    struct tramo_cb a = {fn, ud};
    if (barbero_id) {
        return run(st,
                   "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
                   "JOIN barberos b ON b.id = h.barbero_id "
                   "WHERE h.dia = ? AND h.barbero_id = ? AND b.activo ORDER BY h.inicio",
                   DB_ARGS(db_int(dia), db_text(barbero_id)), tramo_row, &a, NULL);
    }
    return run(st,
               "SELECT h.barbero_id, h.dia, h.inicio, h.fin, b.nombre FROM horarios h "
               "JOIN barberos b ON b.id = h.barbero_id WHERE h.dia = ? AND b.activo "
               "ORDER BY b.nombre, b.id, h.inicio",
               DB_ARGS(db_int(dia)), tramo_row, &a, NULL);
}

struct horario_set_args {
    const char *barbero_id;
    const struct horario_tramo *t;
    int n;
    const struct espera_liberacion *libera;
    size_t nl;
};

static br_err horario_set_tx(struct db *db, struct db_conn *c, void *ud)
{
    struct horario_set_args *a = ud;
    br_err rc = barbero_exists(db, c, a->barbero_id);
    if (rc) return rc;
    struct db_val pk[] = {db_text(a->barbero_id)};
    rc = EXEC(db, c, "DELETE FROM horarios WHERE barbero_id = ?", pk, NULL, NULL, NULL);
    if (!rc && a->n > 0) rc = tramos_insert(db, c, a->barbero_id, a->t, (size_t)a->n);
    for (size_t i = 0; !rc && i < a->nl; i++)
        rc = espera_liberacion_insert(db, c, &a->libera[i]);
    return rc;
}

br_err store_horario_set(struct store *st, const char *barbero_id, const struct horario_tramo *t,
                         int n, const struct espera_liberacion *libera, size_t nl)
{
    struct horario_set_args a = {barbero_id, t, n, libera, nl};
    return in_tx(st, horario_set_tx, &a);
}

/* days off and closures */

LISTING(ausencia, struct ausencia, store_ausencia_fn, ausencia_view)

br_err store_ausencia_add(struct store *st, const struct ausencia *x)
{
    return run_write(st, "INSERT INTO ausencias (" AUSENCIA_COLS ") VALUES (?, ?, ?, ?, ?, ?)",
                     DB_ARGS(db_text(x->id), db_text(x->barbero_id[0] ? x->barbero_id : NULL),
                             db_text(x->desde), db_text(x->hasta), db_text(x->motivo),
                             db_text(x->created_at)),
                     NULL);
}

br_err store_ausencias_each(struct store *st, store_ausencia_fn fn, void *ud)
{
    return ausencia_list(st, "SELECT " AUSENCIA_COLS " FROM ausencias ORDER BY desde, id", NULL, 0,
                         fn, ud);
}

br_err store_ausencias_on(struct store *st, const char *fecha, store_ausencia_fn fn, void *ud)
{
    return ausencia_list(st,
                         "SELECT " AUSENCIA_COLS " FROM ausencias WHERE hasta >= ? AND desde <= ? "
                         "ORDER BY desde, id",
                         DB_ARGS(db_text(fecha), db_text(fecha)), fn, ud);
}

/* The freed slot (a->arg, nullable) is recorded with the deletion. */
static br_err ausencia_delete_tx(struct db *db, struct db_conn *c, void *ud)
{
    const struct row_args *a = ud;
    br_err rc = row_delete(db, c, "DELETE FROM ausencias WHERE id = ?", a->id, "no such absence");
    if (!rc && a->arg) rc = espera_liberacion_insert(db, c, a->arg);
    return rc;
}

br_err store_ausencia_delete(struct store *st, const char *id,
                             const struct espera_liberacion *libera)
{
    struct row_args a = {id, libera};
    return in_tx(st, ausencia_delete_tx, &a);
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

/* See store_int.h. */
br_err with_names(struct store *st, names_try_fn try, void *ud)
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
