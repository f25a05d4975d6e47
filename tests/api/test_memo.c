/*
 * test_memo.c - what the server remembers between requests is never stale.
 *
 * On SQLite the server keeps verified sessions, the public catalog's
 * answers and its pooled connections' read snapshots for as long as nothing
 * is committed to the database (store.h, db_ops.stamp). These tests change
 * the database from another process - the CLI or SQL run by the sqlite3
 * shell (psql on PostgreSQL, where nothing is remembered and the same rules
 * must hold all the same) - between two requests, and expect the second to
 * see the change at once: a session ended or expired is refused, a new role
 * applies, a new or changed service is listed, a changed appointment is
 * listed changed. And a snapshot kept by an idle connection does not hold
 * back the checkpoints of the write-ahead log.
 *
 * A client's own listing is remembered too, and what the server's own writes
 * change is counted finely (db_ops.mark): another client's booking or a
 * photo leaves the listing and every verified session remembered (the
 * memo counters of GET /metrics show it), while her own booking, a cancel,
 * a renamed service or a changed profile, through the server or from
 * another process, show at once.
 *
 * On both databases, listings take the barbers' and services' names from
 * memory while the catalog's version is the one they were read at
 * (store/names.h): a change of the catalog by SQL (in PostgreSQL's replica
 * mode too, as db_exec runs it), through another node or through this one
 * shows at the next listing; a catalog too large to hold is joined.
 *
 * The free slots of a day are remembered on SQLite across everything that
 * does not change them, and each change shows at the next request, as a
 * second node that remembers nothing answers it: any client's booking, a
 * cancel, a reschedule, a schedule, a day off or a closure, a service's
 * length, a barber leaving, a write through another node or by SQL, a
 * setting changed by a restart - and the clock passing a slot's start.
 */
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct srv S;
static char *barbero, *servicio;

static int setup(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    barbero = make_barbero(&S, "Barbero Memo");
    servicio = make_servicio(&S, "Corte Memo", 30, 12.5);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(barbero);
    free(servicio);
    srv_cleanup(&S);
    return 0;
}

static long status_of(const char *path, const char *token)
{
    struct resp r;
    http_get(&S, path, token, &r);
    long status = r.status;
    resp_free(&r);
    return status;
}

static void sql(const char *text)
{
    assert_int_equal(db_exec(&S, text, NULL), 0);
}

/* The body of GET path, owned by the caller. */
static char *body_of(const char *path, const char *token)
{
    struct resp r;
    http_get(&S, path, token, &r);
    assert_int_equal(r.status, 200);
    char *b = strdup(r.body);
    resp_free(&r);
    return b;
}

static void a_session_ended_elsewhere_is_refused_at_once(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Sesión Memo");
    for (int i = 0; i < 3; i++)
        assert_int_equal(status_of("/api/auth/me", u.token), 200);
    char q[256];
    snprintf(q, sizeof q, "DELETE FROM auth_sessions WHERE user_id = '%s';", u.id);
    sql(q);
    assert_int_equal(status_of("/api/auth/me", u.token), 401);
    assert_int_equal(status_of("/api/citas", u.token), 401);
}

static void a_session_expired_elsewhere_is_refused_at_once(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Caduca Memo");
    for (int i = 0; i < 3; i++)
        assert_int_equal(status_of("/api/citas", u.token), 200);
    char q[256];
    snprintf(q, sizeof q,
             "UPDATE auth_sessions SET expires_at = '2001-01-01T00:00:00.000Z' WHERE user_id = "
             "'%s';",
             u.id);
    sql(q);
    assert_int_equal(status_of("/api/citas", u.token), 401);
}

static void a_role_changed_elsewhere_applies_at_once(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Rol Memo");
    char q[256];
    for (int round = 0; round < 3; round++) {
        assert_int_equal(status_of("/api/admin/usuarios", u.token), 403);
        assert_int_equal(status_of("/api/admin/usuarios", u.token), 403);
        snprintf(q, sizeof q, "UPDATE perfiles SET rol = 'admin' WHERE id = '%s';", u.id);
        sql(q);
        assert_int_equal(status_of("/api/admin/usuarios", u.token), 200);
        assert_int_equal(status_of("/api/admin/usuarios", u.token), 200);
        snprintf(q, sizeof q, "UPDATE perfiles SET rol = 'cliente' WHERE id = '%s';", u.id);
        sql(q);
    }
    assert_int_equal(status_of("/api/admin/usuarios", u.token), 403);
}

static void the_catalog_changed_elsewhere_is_listed_at_once(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        char *before = body_of("/api/servicios", NULL);
        free(body_of("/api/servicios", NULL));
        char nombre[64];
        snprintf(nombre, sizeof nombre, "Servicio nuevo %d", round);
        free(make_servicio(&S, nombre, 20, 9.5)); /* the CLI, another process */
        char *after = body_of("/api/servicios", NULL);
        assert_null(strstr(before, nombre));
        assert_non_null(strstr(after, nombre));
        free(before);
        free(after);

        char q[256], precio[32];
        snprintf(q, sizeof q, "UPDATE servicios SET precio = %d.25 WHERE id = '%s';", 40 + round,
                 servicio);
        sql(q);
        snprintf(precio, sizeof precio, "\"precio\":%d.25", 40 + round);
        char *listed = body_of("/api/servicios", NULL);
        assert_non_null(strstr(listed, precio));
        free(listed);

        snprintf(q, sizeof q, "UPDATE barberos SET nombre = 'Barbero Memo %d' WHERE id = '%s';",
                 round, barbero);
        sql(q);
        snprintf(nombre, sizeof nombre, "\"Barbero Memo %d\"", round);
        listed = body_of("/api/barberos", NULL);
        assert_non_null(strstr(listed, nombre));
        free(listed);
    }
}

static void an_appointment_changed_elsewhere_is_listed_at_once(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Listado Memo");
    char *cita = book(&S, &u, barbero, servicio, "2032-03-01T10:00:00.000Z", NULL);
    for (int round = 0; round < 5; round++) {
        free(body_of("/api/citas", u.token));
        free(body_of("/api/citas", u.token));
        char q[256], notas[64];
        snprintf(notas, sizeof notas, "notas de la ronda %d", round);
        snprintf(q, sizeof q, "UPDATE citas SET notas = '%s' WHERE id = '%s';", notas, cita);
        sql(q);
        char *listed = body_of("/api/citas", u.token);
        assert_non_null(strstr(listed, notas));
        free(listed);
    }
    free(cita);
}

/* barberia_memo_hits_total{memo="<memo>"} (misses: hits false) as the
 * server counts them; 0 on PostgreSQL, where nothing is remembered. */
static long memo_count_of(const struct srv *s, const char *memo, bool hits)
{
    struct resp r;
    http_get(s, "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    char key[96];
    snprintf(key, sizeof key, "barberia_memo_%s_total{memo=\"%s\"} ", hits ? "hits" : "misses",
             memo);
    const char *at = strstr(r.body, key);
    if (!at) fail_msg("no %s in /metrics", key);
    long v = strtol(at + strlen(key), NULL, 10);
    resp_free(&r);
    return v;
}

static long memo_count(const char *memo, bool hits)
{
    return memo_count_of(&S, memo, hits);
}

static void expect_listing(const char *token, const char *want, bool remembered)
{
    long h0 = memo_count("citas", true);
    char *listed = body_of("/api/citas", token);
    if (want) assert_string_equal(listed, want);
    free(listed);
    if (!test_pg()) assert_int_equal(memo_count("citas", true), h0 + (remembered ? 1 : 0));
}

static void json_patch(const char *path, const char *token, const char *body)
{
    struct resp r;
    http_json(&S, "PATCH", path, token, body, &r);
    if (r.status != 200) fail_msg("PATCH %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}

static void a_clients_listing_is_remembered_until_something_it_shows_changes(void **state)
{
    (void)state;
    struct user ana, beto, admin;
    signup_user(&S, &ana, "Ana Memo");
    signup_user(&S, &beto, "Beto Memo");
    make_user(&S, &admin, "Admin Memo", "admin");
    char *c1 = book(&S, &ana, barbero, servicio, "2033-01-10T10:00:00.000Z", NULL);
    char *before = body_of("/api/citas", ana.token);
    expect_listing(ana.token, before, true);

    /* another client's bookings and a photo: nothing Ana's listing shows */
    for (int i = 0; i < 3; i++) {
        char when[64];
        snprintf(when, sizeof when, "2033-01-%02dT12:00:00.000Z", 11 + i);
        free(book(&S, &beto, barbero, servicio, when, NULL));
        expect_listing(ana.token, before, true);
    }
    static const char png[] = "\x89PNG\r\n\x1a\nmemo";
    json_decref(upload_photo(&S, &ana, c1, "antes", png, sizeof png - 1));
    expect_listing(ana.token, before, true);

    /* her own booking: listed at once */
    char *c2 = book(&S, &ana, barbero, servicio, "2033-01-20T10:00:00.000Z", NULL);
    char *listed = body_of("/api/citas", ana.token);
    assert_non_null(strstr(listed, c2));
    free(listed);
    free(before);
    before = body_of("/api/citas", ana.token);

    /* a renamed service, a changed profile, a cancel: at once */
    char path[160], body[256];
    snprintf(path, sizeof path, "/api/admin/servicios/%s", servicio);
    json_patch(path, admin.token, "{\"nombre\":\"Corte Memo Renombrado\"}");
    listed = body_of("/api/citas", ana.token);
    assert_non_null(strstr(listed, "Corte Memo Renombrado"));
    free(listed);
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"nombre\":\"Ana Memo Cambiada\"}", ana.id);
    json_patch("/api/admin/usuarios", admin.token, body);
    listed = body_of("/api/citas", ana.token);
    assert_non_null(strstr(listed, "Ana Memo Cambiada"));
    free(listed);
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", c2);
    struct resp r;
    http_json(&S, "POST", path, ana.token, "{}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    listed = body_of("/api/citas", ana.token);
    assert_non_null(strstr(listed, "cancelada"));
    free(listed);
    free(before);
    free(c1);
    free(c2);
}

/* A commit of another process between the server's own: whatever it was,
 * nothing remembered before it is handed out after it. */
static void a_change_elsewhere_between_bookings_is_listed_at_once(void **state)
{
    (void)state;
    struct user ana, beto;
    signup_user(&S, &ana, "Ana Ajena");
    signup_user(&S, &beto, "Beto Ajeno");
    char *cita = book(&S, &ana, barbero, servicio, "2033-02-10T10:00:00.000Z", NULL);
    for (int round = 0; round < 4; round++) {
        free(body_of("/api/citas", ana.token));
        expect_listing(ana.token, NULL, true);
        char q[256], notas[64], when[64];
        snprintf(notas, sizeof notas, "notas ajenas %d", round);
        snprintf(q, sizeof q, "UPDATE citas SET notas = '%s' WHERE id = '%s';", notas, cita);
        sql(q);
        /* the server's own commit after it, of something Ana does not see */
        snprintf(when, sizeof when, "2033-02-%02dT12:00:00.000Z", 11 + round);
        free(book(&S, &beto, barbero, servicio, when, NULL));
        char *listed = body_of("/api/citas", ana.token);
        assert_non_null(strstr(listed, notas));
        free(listed);
    }
    free(cita);
}

/* Verified sessions stay remembered while others book, and a sign-out
 * ends one at once all the same. */
static void a_session_is_remembered_across_bookings_and_ends_at_once(void **state)
{
    (void)state;
    struct user ana, beto;
    signup_user(&S, &ana, "Ana Sesión");
    signup_user(&S, &beto, "Beto Sesión");
    assert_int_equal(status_of("/api/auth/me", ana.token), 200);
    for (int i = 0; i < 3; i++) {
        char when[64];
        snprintf(when, sizeof when, "2033-03-%02dT12:00:00.000Z", 10 + i);
        free(book(&S, &beto, barbero, servicio, when, NULL));
        long h0 = memo_count("session", true);
        assert_int_equal(status_of("/api/auth/me", ana.token), 200);
        if (!test_pg()) assert_int_equal(memo_count("session", true), h0 + 1);
    }
    struct req_opts o = {.token = ana.token};
    struct resp r;
    http_req(&S, "POST", "/api/auth/logout", &o, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(status_of("/api/auth/me", ana.token), 401);
    assert_int_equal(status_of("/api/citas", ana.token), 401);
}

/* BARBERIA_MEMO=0: every read goes to the database (a second node on the
 * same database, so the first one's memos stay as they are). */
static void with_memo_off_nothing_is_remembered(void **state)
{
    (void)state;
    struct srv P;
    srv_init_peer(&P, &S);
    const char *env[] = {"BARBERIA_MEMO=0", NULL};
    srv_start(&P, env, NULL);
    struct user u;
    signup_user(&P, &u, "Sin Memo");
    free(book(&P, &u, barbero, servicio, "2033-04-10T10:00:00.000Z", NULL));
    for (int i = 0; i < 3; i++) {
        struct resp r;
        http_get(&P, "/api/citas", u.token, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
        http_get(&P, "/api/servicios", NULL, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
        char path[200];
        snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=2033-04-11",
                 servicio);
        http_get(&P, path, NULL, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
    }
    static const char *const memos[] = {"session", "catalog", "citas", "names", "disponibilidad"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(memo_count_of(&P, memos[i], true), 0);
        assert_int_equal(memo_count_of(&P, memos[i], false), 0);
    }
    srv_cleanup(&P);
}

/* A client's listing under a query of its own each time, so that on
 * SQLite the listing memo (remembered per query) does not answer it. */
static char *listing_of(const struct user *u)
{
    static int k;
    char path[64];
    snprintf(path, sizeof path, "/api/citas?limit=%d", 500 + k++);
    return body_of(path, u->token);
}

/* Whether body has each of the texts (NULL-terminated). */
static void expect_all(const char *body, ...)
{
    va_list ap;
    va_start(ap, body);
    for (const char *t; (t = va_arg(ap, const char *));)
        if (!strstr(body, t)) fail_msg("no %s in %s", t, body);
    va_end(ap);
}

/* A client's listing takes the barber's and the service's names from the
 * catalog's names held in memory (store/names.h) while the catalog's
 * version, read in the listing's own snapshot, is the one they were read
 * at - on both databases. Whatever changes the catalog (SQL, this node,
 * another node) shows at the next listing, every column of it. */
static void a_listing_names_the_catalog_as_it_is_now(void **state)
{
    (void)state;
    struct user u, admin;
    signup_user(&S, &u, "Nombres Memo");
    make_user(&S, &admin, "Admin Nombres", "admin");
    char *b = make_barbero(&S, "Barbero Nombres");
    char *sv = make_servicio(&S, "Servicio Nombres", 30, 10.0);
    char *cita = book(&S, &u, b, sv, "2034-01-10T10:00:00.000Z", NULL);
    free(listing_of(&u)); /* the names of this version, read */
    long h0 = memo_count("names", true), m0 = memo_count("names", false);
    char *listed = listing_of(&u);
    expect_all(listed, cita, "\"Barbero Nombres\"", "\"Servicio Nombres\"", NULL);
    free(listed);
    assert_int_equal(memo_count("names", true), h0 + 1);
    assert_int_equal(memo_count("names", false), m0);

    char q[512];
    snprintf(q, sizeof q,
             "UPDATE servicios SET nombre = 'Servicio Nombres SQL', duracion_min = 35, "
             "precio = 11.75 WHERE id = '%s';",
             sv);
    sql(q);
    listed = listing_of(&u);
    expect_all(listed, "\"Servicio Nombres SQL\"", "\"duracion_min\":35", "\"precio\":11.75", NULL);
    free(listed);
    assert_int_equal(memo_count("names", false), m0 + 1);
    snprintf(q, sizeof q,
             "UPDATE barberos SET nombre = 'Barbero Nombres SQL', "
             "foto_url = 'https://fotos.example.com/b.png' WHERE id = '%s';",
             b);
    sql(q);
    listed = listing_of(&u);
    expect_all(listed, "\"Barbero Nombres SQL\"", "\"https://fotos.example.com/b.png\"", NULL);
    free(listed);

    /* through another node on the same database, then through this one */
    struct srv P;
    srv_init_peer(&P, &S);
    srv_start(&P, NULL, NULL);
    char path[160];
    snprintf(path, sizeof path, "/api/admin/servicios/%s", sv);
    struct resp r;
    http_json(&P, "PATCH", path, admin.token, "{\"nombre\":\"Servicio Nombres Nodo\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    listed = listing_of(&u);
    expect_all(listed, "\"Servicio Nombres Nodo\"", "\"Barbero Nombres SQL\"", NULL);
    free(listed);
    srv_cleanup(&P);
    snprintf(path, sizeof path, "/api/admin/barberos/%s", b);
    json_patch(path, admin.token, "{\"nombre\":\"Barbero Nombres API\"}");
    listed = listing_of(&u);
    expect_all(listed, "\"Barbero Nombres API\"", "\"Servicio Nombres Nodo\"", NULL);
    free(listed);

    /* held again from here on */
    long h1 = memo_count("names", true);
    free(listing_of(&u));
    assert_int_equal(memo_count("names", true), h1 + 1);
    free(cita);
    free(b);
    free(sv);
}

/* A catalog larger than the names held at most (NAMES_MAX, 8192): the
 * listing joins the names in the database instead, as exact. */
static void a_catalog_too_large_to_hold_is_joined(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Catálogo Grande");
    char *sv = make_servicio(&S, "Servicio Grande", 30, 10.0);
    char *cita = book(&S, &u, barbero, sv, "2034-02-10T10:00:00.000Z", NULL);
    free(listing_of(&u));
    sql(test_pg() ? "INSERT INTO servicios (id, nombre, duracion_min, precio) "
                    "SELECT ('00000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, "
                    "'Relleno ' || i, 30, 1.0 FROM generate_series(1, 8200) AS g(i);"
                  : "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < "
                    "8200) INSERT INTO servicios (id, nombre, duracion_min, precio) "
                    "SELECT printf('00000000-0000-4000-8000-%012d', i), 'Relleno ' || i, 30, 1.0 "
                    "FROM g;");
    long h0 = memo_count("names", true);
    for (int i = 0; i < 3; i++) {
        char q[256], nombre[64];
        snprintf(nombre, sizeof nombre, "Servicio Grande %d", i);
        snprintf(q, sizeof q, "UPDATE servicios SET nombre = '%s' WHERE id = '%s';", nombre, sv);
        sql(q);
        char *listed = listing_of(&u);
        expect_all(listed, cita, nombre, "\"barbero\":{\"nombre\":\"Barbero Memo", NULL);
        free(listed);
    }
    assert_int_equal(memo_count("names", true), h0);
    /* said once in the log, with why */
    assert_true(srv_wait_log(&S,
                             "warn store: the catalog's names could not be read (names: more "
                             "than 8192); listings join them for 10 s",
                             1000));
    sql("DELETE FROM servicios WHERE nombre LIKE 'Relleno %';");
    free(cita);
    free(sv);
}

/* A pooled connection keeps its read snapshot between requests; once a
 * commit made it old, an idle one must let it go within a checkpoint tick,
 * or the log could never be copied back past it. */
static void idle_snapshots_do_not_hold_checkpoints_back(void **state)
{
    (void)state;
    if (test_pg()) skip(); /* SQLite's log */
    struct user u;
    signup_user(&S, &u, "Checkpoint Memo");
    for (int i = 0; i < 20; i++) {
        free(body_of("/api/citas", u.token));
        free(body_of("/api/servicios", NULL));
    }
    free(book(&S, &u, barbero, servicio, "2032-04-01T10:00:00.000Z", NULL));
    sleep_ms(1000); /* four ticks of the checkpointer */
    /* busy, frames in the log, frames copied back: all of them */
    char *out = db_query(&S, "PRAGMA wal_checkpoint(PASSIVE);");
    int busy = -1, log = -1, done = -2;
    assert_int_equal(sscanf(out, "%d\t%d\t%d", &busy, &log, &done), 3);
    free(out);
    assert_int_equal(busy, 0);
    assert_int_equal(done, log);
}

/* --- the free slots of a day ------------------------------------------------------------ */

/* The body of GET path on s (no session), owned by the caller. */
static char *body_at(const struct srv *s, const char *path)
{
    struct resp r;
    http_get(s, path, NULL, &r);
    if (r.status != 200) fail_msg("GET %s: %ld %s", path, r.status, r.body);
    char *b = strdup(r.body);
    resp_free(&r);
    return b;
}

/* The UTC date `days` from now as YYYY-MM-DD: a few days ahead, it is
 * inside the offer in the shop's zone too. */
static void date_ahead(int days, char out[11])
{
    time_t t = (time_t)(clock_now_ms() / 1000) + (time_t)days * 86400;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 11, "%Y-%m-%d", &tm);
}

/* A shop of three barbers working from inicio to fin (HH:MM) every day,
 * a service of 30 minutes, an administrator and two clients; a date three
 * days ahead and the paths that ask for its free slots. */
struct shop {
    struct user admin, ana, beto;
    char *b[3];
    char *sv;
    char fecha[11];
    char any[300], one[300]; /* any barber; the first one */
};

static void put_week(const struct srv *s, const struct shop *h, const char *who, const char *inicio,
                     const char *fin)
{
    char path[160], body[1024];
    size_t n = (size_t)snprintf(body, sizeof body, "{\"horario\":[");
    for (int d = 1; d <= 7; d++)
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"dia\":%d,\"inicio\":\"%s\",\"fin\":\"%s\"}", d > 1 ? "," : "",
                              d, inicio, fin);
    snprintf(body + n, sizeof body - n, "]}");
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", who);
    struct resp r;
    http_json(s, "PUT", path, h->admin.token, body, &r);
    if (r.status != 200) fail_msg("PUT %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}

static void shop_open(struct shop *h, const char *name)
{
    memset(h, 0, sizeof *h);
    char n[96];
    snprintf(n, sizeof n, "Admin %s", name);
    make_user(&S, &h->admin, n, "admin");
    signup_user(&S, &h->ana, "Ana Huecos");
    signup_user(&S, &h->beto, "Beto Huecos");
    for (int i = 0; i < 3; i++) {
        snprintf(n, sizeof n, "%s %d", name, i);
        h->b[i] = make_barbero(&S, n);
        put_week(&S, h, h->b[i], "09:00", "12:00");
    }
    snprintf(n, sizeof n, "Servicio %s", name);
    h->sv = make_servicio(&S, n, 30, 15.0);
    date_ahead(3, h->fecha);
    snprintf(h->any, sizeof h->any, "/api/disponibilidad?servicio_id=%s&fecha=%s", h->sv, h->fecha);
    snprintf(h->one, sizeof h->one, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s",
             h->sv, h->fecha, h->b[0]);
}

static void shop_close(struct shop *h)
{
    for (int i = 0; i < 3; i++)
        free(h->b[i]);
    free(h->sv);
}

/* A second node on S's data that remembers nothing (BARBERIA_MEMO=0): its
 * answers are the ones S must give. */
static void oracle_start(struct srv *o, const char *const *more_env)
{
    const char *env[8] = {"BARBERIA_MEMO=0"};
    for (size_t i = 0; more_env && more_env[i] && i < 6; i++)
        env[i + 1] = more_env[i];
    srv_init_peer(o, &S);
    srv_start(o, env, NULL);
}

/* It never remembered anything, then it stops. */
static void oracle_stop(struct srv *o)
{
    assert_int_equal(memo_count_of(o, "disponibilidad", true), 0);
    assert_int_equal(memo_count_of(o, "disponibilidad", false), 0);
    srv_cleanup(o);
}

/* Asks S twice for path: the second answer is the first, remembered (on
 * SQLite one more hit). Returns it (caller frees). */
static char *remembered(const char *path)
{
    char *first = body_of(path, NULL);
    long h0 = memo_count("disponibilidad", true);
    char *again = body_of(path, NULL);
    if (!test_pg()) assert_int_equal(memo_count("disponibilidad", true), h0 + 1);
    assert_string_equal(again, first);
    free(again);
    return first;
}

/* S's answer to path now: the oracle's, and not was (the change shows).
 * Returns it (caller frees). */
static char *fresh(const struct srv *o, const char *path, const char *was)
{
    char *got = body_of(path, NULL), *want = body_at(o, path);
    if (strcmp(got, want)) fail_msg("GET %s:\n  this node   %s\n  the oracle  %s", path, got, want);
    if (was && !strcmp(got, was)) fail_msg("GET %s: the change does not show: %s", path, got);
    free(want);
    return got;
}

/* The start of the i-th free slot of an answer (caller frees). */
static char *slot_at(const char *body, size_t i)
{
    json_t *j = json_loads(body, 0, NULL);
    assert_non_null(j);
    const char *s = jstr(json_array_get(json_object_get(j, "huecos"), i), "inicio");
    if (!s) fail_msg("no slot %zu in %s", i, body);
    char *copy = strdup(s);
    json_decref(j);
    return copy;
}

/* Whether an answer offers a slot that starts at inicio. */
static bool offers(const char *body, const char *inicio)
{
    char k[64];
    snprintf(k, sizeof k, "\"inicio\":\"%s\"", inicio);
    return strstr(body, k) != NULL;
}

static void post_ok(const char *path, const char *token, const char *body)
{
    struct resp r;
    http_json(&S, "POST", path, token, body, &r);
    if (r.status != 200 && r.status != 201) fail_msg("POST %s: %ld %s", path, r.status, r.body);
    resp_free(&r);
}

/* Remembers path, runs change, and expects the change at the next answer;
 * was is replaced by it. */
#define CHANGE_SHOWS(o, path, was, change)                                                         \
    do {                                                                                           \
        free(was);                                                                                 \
        (was) = remembered(path);                                                                  \
        change;                                                                                    \
        char *now_ = fresh(o, path, was);                                                          \
        free(was);                                                                                 \
        (was) = now_;                                                                              \
    } while (0)

static void free_slots_show_bookings_cancels_and_reschedules_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Reservas");
    struct srv O;
    oracle_start(&O, NULL);
    char path[160], body[160];

    /* another client books the first barber's first slot */
    char *one = remembered(h.one), *any = remembered(h.any);
    char *first = slot_at(one, 0), *cita = NULL;
    CHANGE_SHOWS(&O, h.one, one, cita = book(&S, &h.beto, h.b[0], h.sv, first, NULL));
    char *now = slot_at(one, 0);
    assert_string_not_equal(now, first);
    free(now);
    char *before_any = any;
    any = fresh(&O, h.any, before_any); /* one barber fewer at that slot */
    free(before_any);

    /* she cancels: the slot is free again */
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", cita);
    CHANGE_SHOWS(&O, h.one, one, post_ok(path, h.beto.token, "{}"));
    now = slot_at(one, 0);
    assert_string_equal(now, first);
    free(now);
    free(cita);

    /* booked again, then moved to a later slot */
    CHANGE_SHOWS(&O, h.one, one, cita = book(&S, &h.beto, h.b[0], h.sv, first, NULL));
    char *later = slot_at(one, 3);
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", cita);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", later);
    CHANGE_SHOWS(&O, h.one, one, post_ok(path, h.beto.token, body));
    now = slot_at(one, 0);
    assert_string_equal(now, first);
    free(now);
    assert_false(offers(one, later));

    free(later);
    free(cita);
    free(first);
    free(one);
    free(any);
    oracle_stop(&O);
    shop_close(&h);
}

static void json_send(const char *method, const char *path, const char *token, const char *body,
                      char **id)
{
    struct resp r;
    if (body)
        http_json(&S, method, path, token, body, &r);
    else
        http_req(&S, method, path, &(struct req_opts){.token = token}, &r);
    if (r.status != 200 && r.status != 201)
        fail_msg("%s %s: %ld %s", method, path, r.status, r.body);
    if (id) *id = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
}

static void free_slots_show_schedules_absences_and_the_catalog_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Agenda");
    struct srv O;
    oracle_start(&O, NULL);
    char *one = NULL, *any = NULL, path[200], body[300], *off = NULL;

    /* a shorter day for the first barber */
    CHANGE_SHOWS(&O, h.one, one, put_week(&S, &h, h.b[0], "09:00", "10:00"));
    assert_null(strstr(one, "\"10:00\""));

    /* a day off, and back */
    snprintf(body, sizeof body, "{\"barbero_id\":\"%s\",\"desde\":\"%s\",\"hasta\":\"%s\"}", h.b[0],
             h.fecha, h.fecha);
    CHANGE_SHOWS(&O, h.one, one,
                 json_send("POST", "/api/admin/ausencias", h.admin.token, body, &off));
    assert_non_null(strstr(one, "\"huecos\":[]"));
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", off);
    CHANGE_SHOWS(&O, h.one, one, json_send("DELETE", path, h.admin.token, NULL, NULL));
    assert_null(strstr(one, "\"huecos\":[]"));
    free(off);

    /* the whole shop closed that day, and open again */
    snprintf(body, sizeof body, "{\"barbero_id\":null,\"desde\":\"%s\",\"hasta\":\"%s\"}", h.fecha,
             h.fecha);
    CHANGE_SHOWS(&O, h.any, any,
                 json_send("POST", "/api/admin/ausencias", h.admin.token, body, &off));
    assert_non_null(strstr(any, "\"huecos\":[]"));
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", off);
    CHANGE_SHOWS(&O, h.any, any, json_send("DELETE", path, h.admin.token, NULL, NULL));
    free(off);

    /* a longer service: fewer slots */
    snprintf(path, sizeof path, "/api/admin/servicios/%s", h.sv);
    CHANGE_SHOWS(&O, h.one, one, json_patch(path, h.admin.token, "{\"duracion_min\":60}"));
    assert_null(strstr(one, "\"09:15\""));

    /* a barber leaves the catalog, and comes back */
    snprintf(path, sizeof path, "/api/admin/barberos/%s", h.b[2]);
    CHANGE_SHOWS(&O, h.any, any, json_patch(path, h.admin.token, "{\"activo\":false}"));
    assert_null(strstr(any, h.b[2]));
    CHANGE_SHOWS(&O, h.any, any, json_patch(path, h.admin.token, "{\"activo\":true}"));
    assert_non_null(strstr(any, h.b[2]));

    free(one);
    free(any);
    oracle_stop(&O);
    shop_close(&h);
}

static void free_slots_show_writes_of_another_node_or_process_at_once(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Fuera");
    struct srv O;
    oracle_start(&O, NULL);
    char *one = NULL, q[256], *cita = NULL;

    /* a booking through another node on the same data */
    one = remembered(h.one);
    char *first = slot_at(one, 0);
    CHANGE_SHOWS(&O, h.one, one, cita = book(&O, &h.ana, h.b[0], h.sv, first, NULL));
    assert_false(offers(one, first));

    /* cancelled by SQL (sqlite3; psql on PostgreSQL), between two bookings
     * of this node's on another day */
    char other[11], when[64];
    date_ahead(5, other);
    snprintf(when, sizeof when, "%sT10:00:00.000Z", other);
    free(book(&S, &h.beto, h.b[1], h.sv, when, NULL));
    snprintf(q, sizeof q, "UPDATE citas SET estado = 'cancelada' WHERE id = '%s';", cita);
    snprintf(when, sizeof when, "%sT11:00:00.000Z", other);
    CHANGE_SHOWS(&O, h.one, one, {
        sql(q);
        free(book(&S, &h.beto, h.b[1], h.sv, when, NULL));
    });
    assert_true(offers(one, first));

    /* a setting changed by a restart: a node of 30-minute steps, then 15 */
    struct srv P;
    srv_init_peer(&P, &S);
    const char *env30[] = {"BARBERIA_SLOT_MIN=30", NULL};
    srv_start(&P, env30, NULL);
    char *was = body_at(&P, h.one);
    free(body_at(&P, h.one));
    srv_stop(&P);
    srv_start(&P, NULL, NULL);
    char *is = body_at(&P, h.one);
    assert_string_not_equal(is, was);
    assert_string_equal(is, one);
    free(was);
    free(is);
    srv_cleanup(&P);

    free(first);
    free(cita);
    free(one);
    oracle_stop(&O);
    shop_close(&h);
}

/* Remembered while nothing they show changes: across a photo (bookkeeping
 * to the remembered answers); and the bookings that drop them leave the
 * catalog remembered. */
static void free_slots_stay_remembered_while_nothing_they_show_changes(void **state)
{
    (void)state;
    struct shop h;
    shop_open(&h, "Huecos Quietos");
    char *one = remembered(h.one);
    char *first = slot_at(one, 0);
    char *cita = book(&S, &h.ana, h.b[1], h.sv, first, NULL);
    free(one);
    one = remembered(h.one);
    static const char png[] = "\x89PNG\r\n\x1a\nhuecos";
    json_decref(upload_photo(&S, &h.ana, cita, "antes", png, sizeof png - 1));
    long h0 = memo_count("disponibilidad", true);
    char *again = body_of(h.one, NULL);
    assert_string_equal(again, one);
    if (!test_pg()) assert_int_equal(memo_count("disponibilidad", true), h0 + 1);
    free(again);

    free(body_of("/api/servicios", NULL));
    long c0 = memo_count("catalog", true);
    char other[11], when[64];
    date_ahead(6, other);
    snprintf(when, sizeof when, "%sT10:00:00.000Z", other);
    free(book(&S, &h.beto, h.b[2], h.sv, when, NULL));
    free(body_of("/api/servicios", NULL));
    if (!test_pg()) assert_int_equal(memo_count("catalog", true), c0 + 1);
    free(first);
    free(cita);
    free(one);
    shop_close(&h);
}

/* A node in UTC offering every minute with no notice: a barber whose day
 * is the next few minutes. The first free slot goes as soon as the clock
 * passes its start, never before - checked at every answer until it has
 * gone (within a minute). */
struct clock_watch {
    const struct srv *s;
    const char *path;
    int64_t first_ms;
    char first[32];
    int early, late, answers;
};

static bool first_slot_gone(void *ud)
{
    struct clock_watch *w = ud;
    int64_t t0 = clock_now_ms();
    char *b = body_at(w->s, w->path);
    int64_t t1 = clock_now_ms();
    bool offered = offers(b, w->first);
    free(b);
    w->answers++;
    if (t1 <= w->first_ms && !offered) w->early++; /* asked before its start: offered */
    if (t0 > w->first_ms && offered) w->late++;    /* asked after: gone */
    return t0 > w->first_ms;
}

/* The instant of a slot's start on the UTC day that begins at day_ms. */
static int64_t slot_ms(int64_t day_ms, const char *inicio)
{
    int hh = -1, mm = -1;
    if (strlen(inicio) < 16 || sscanf(inicio + 11, "%2d:%2d", &hh, &mm) != 2)
        fail_msg("not a slot start: %s", inicio);
    return day_ms + (int64_t)hh * 3600000 + (int64_t)mm * 60000;
}

/* Not within the last ten minutes of a UTC day. */
static bool far_from_midnight(void *ud)
{
    (void)ud;
    return clock_now_ms() / 60000 % 1440 <= 1430;
}

static void a_free_slot_goes_as_the_clock_passes_it(void **state)
{
    (void)state;
    struct shop h;
    memset(&h, 0, sizeof h);
    make_user(&S, &h.admin, "Admin Reloj", "admin");
    /* the barber's day must not cross midnight (UTC) */
    assert_true(wait_until(far_from_midnight, NULL, 15 * 60000));
    int64_t now = clock_now_ms(), day_ms = now / 86400000 * 86400000;
    int m0 = (int)(now / 60000 % 1440);
    time_t t = (time_t)(now / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char *b = make_barbero(&S, "Barbero Reloj"), *sv = make_servicio(&S, "Un minuto", 1, 1.0);
    char path[300], body[200];
    snprintf(body, sizeof body,
             "{\"horario\":[{\"dia\":%d,\"inicio\":\"%02d:%02d\",\"fin\":\"%02d:%02d\"}]}",
             tm.tm_wday ? tm.tm_wday : 7, m0 / 60, m0 % 60, (m0 + 6) / 60, (m0 + 6) % 60);
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", b);
    struct resp r;
    http_json(&S, "PUT", path, h.admin.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    struct srv T;
    srv_init_peer(&T, &S);
    const char *env[] = {"BARBERIA_TZ=UTC", "BARBERIA_SLOT_MIN=1", "BARBERIA_MIN_NOTICE_MIN=0",
                         NULL};
    srv_start(&T, env, NULL);
    char fecha[11];
    strftime(fecha, sizeof fecha, "%Y-%m-%d", &tm);
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s", sv,
             fecha, b);
    char *first = body_at(&T, path), *start = slot_at(first, 0);
    struct clock_watch w = {.s = &T, .path = path};
    snprintf(w.first, sizeof w.first, "%s", start);
    w.first_ms = slot_ms(day_ms, start);
    long h0 = memo_count_of(&T, "disponibilidad", true);
    assert_true(wait_until(first_slot_gone, &w, 90000));
    assert_int_equal(w.early, 0);
    assert_int_equal(w.late, 0);
    if (!test_pg()) assert_true(memo_count_of(&T, "disponibilidad", true) > h0);
    /* and the next one is offered */
    char *after = body_at(&T, path), *next = slot_at(after, 0);
    assert_true(slot_ms(day_ms, next) == w.first_ms + 60000);
    free(after);
    free(next);
    free(first);
    free(start);
    free(b);
    free(sv);
    srv_cleanup(&T);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_session_ended_elsewhere_is_refused_at_once),
        cmocka_unit_test(a_session_expired_elsewhere_is_refused_at_once),
        cmocka_unit_test(a_role_changed_elsewhere_applies_at_once),
        cmocka_unit_test(the_catalog_changed_elsewhere_is_listed_at_once),
        cmocka_unit_test(an_appointment_changed_elsewhere_is_listed_at_once),
        cmocka_unit_test(idle_snapshots_do_not_hold_checkpoints_back),
        cmocka_unit_test(a_change_elsewhere_between_bookings_is_listed_at_once),
        cmocka_unit_test(a_session_is_remembered_across_bookings_and_ends_at_once),
        cmocka_unit_test(a_clients_listing_is_remembered_until_something_it_shows_changes),
        cmocka_unit_test(with_memo_off_nothing_is_remembered),
        cmocka_unit_test(a_listing_names_the_catalog_as_it_is_now),
        cmocka_unit_test(a_catalog_too_large_to_hold_is_joined),
        cmocka_unit_test(free_slots_show_bookings_cancels_and_reschedules_at_once),
        cmocka_unit_test(free_slots_show_schedules_absences_and_the_catalog_at_once),
        cmocka_unit_test(free_slots_show_writes_of_another_node_or_process_at_once),
        cmocka_unit_test(free_slots_stay_remembered_while_nothing_they_show_changes),
        cmocka_unit_test(a_free_slot_goes_as_the_clock_passes_it),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
