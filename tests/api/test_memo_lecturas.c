/*
 * test_memo_lecturas.c - what the server remembers between requests of
 * sessions, roles, the catalog and listings is never stale.
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
 * shows at the next listing; a catalog too large to hold is joined. The
 * free slots of a day are test_memo_huecos.c's.
 */
#define _GNU_SOURCE
#include "memo_fixture.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    };
    return cmocka_run_group_tests(tests, memo_group_setup, memo_group_teardown);
}
