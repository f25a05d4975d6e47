/*
 * test_pg_outage.c - PostgreSQL restarted under a running service: while it
 * is away requests answer a JSON 503 at once (nothing hangs), /healthz says
 * so, and once it is back the service recovers by itself with nothing
 * acknowledged lost; the first answers after it is back are right at once:
 * every idle pooled connection the restart broke, and /healthz's own, is
 * replaced before it is used. The cluster is this test's own
 * (scripts/pg-server), so that stopping it disturbs no other test.
 * PostgreSQL runs only.
 */
#include "harness.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PG_SERVER BARBERIA_TESTS_DIR "/../scripts/pg-server"

static char cluster[256]; /* the cluster's folder */
static char base_url[200];

static void pg_server(const char *cmd)
{
    const char *argv[] = {PG_SERVER, cmd, cluster, NULL};
    char *out = NULL, *err = NULL;
    int rc = run_program(argv, NULL, 120000, &out, &err);
    if (rc != 0) fail_msg("pg-server %s: %d\n%s", cmd, rc, err ? err : "");
    if (!strcmp(cmd, "start")) {
        snprintf(base_url, sizeof base_url, "%s", out);
        base_url[strcspn(base_url, "\n")] = '\0';
    }
    free(out);
    free(err);
}

/* Starts a server whose database is the cluster's (pg_server("start")
 * first), with env as srv_start takes it. */
static void start_on_cluster(struct srv *S, const char *const *env)
{
    struct srv first = {0};
    snprintf(first.dir, sizeof first.dir, "%s", cluster);
    snprintf(first.data, sizeof first.data, "%s/app-data", cluster);
    snprintf(first.dburl, sizeof first.dburl, "%spostgres", base_url);
    srv_init_peer(S, &first);
    snprintf(S->data, sizeof S->data, "%s/data", S->dir);
    srv_start(S, env, NULL);
}

/* --- a client that keeps booking ---------------------------------------------------- */

enum { MAX_TRIES = 4000 };

struct booker {
    const struct srv *s;
    const char *token, *barbero, *servicio;
    int first_day;
    volatile bool stop;
    int n;
    long status[MAX_TRIES];
    char id[MAX_TRIES][40];
    int64_t took_ms[MAX_TRIES];
};

static void *book_loop(void *arg)
{
    struct booker *b = arg;
    for (b->n = 0; b->n < MAX_TRIES && !b->stop; b->n++) {
        char body[256];
        int k = b->first_day + b->n;
        /* a distinct slot each time: k hours after the start */
        char fecha[48];
        snprintf(fecha, sizeof fecha, "2033-%02d-%02dT%02d:00:00.000Z", 1 + k / (28 * 24),
                 1 + k / 24 % 28, k % 24);
        snprintf(body, sizeof body,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                 b->barbero, b->servicio, fecha);
        struct req_opts o = {.token = b->token, .content_type = "application/json", .body = body};
        struct resp r;
        int64_t t0 = clock_mono_ms();
        b->status[b->n] = http_try(b->s, "POST", "/api/citas", &o, &r);
        b->took_ms[b->n] = clock_mono_ms() - t0;
        const char *id = jstr(json_object_get(r.json, "cita"), "id");
        snprintf(b->id[b->n], sizeof b->id[b->n], "%s", id ? id : "");
        resp_free(&r);
        sleep_ms(5);
    }
    return NULL;
}

static bool healthy(void *ud)
{
    struct resp r;
    long st = http_try(ud, "GET", "/healthz", NULL, &r);
    resp_free(&r);
    return st == 200;
}

static void a_restarted_database_costs_503s_and_nothing_else(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    snprintf(cluster, sizeof cluster, "/tmp/barberia-pg-outage-%d", (int)getpid());
    pg_server("start");
    struct srv S;
    start_on_cluster(&S, NULL);
    struct user u;
    signup_user(&S, &u, "Paciente");
    char *barbero = make_barbero(&S, "Barbero Caida");
    char *servicio = make_servicio(&S, "Corte Caida", 30, 10);
    char *before = book(&S, &u, barbero, servicio, "2032-12-01T10:00:00.000Z", NULL);

    static struct booker bk;
    bk = (struct booker){.s = &S, .token = u.token, .barbero = barbero, .servicio = servicio};
    pthread_t th;
    pthread_create(&th, NULL, book_loop, &bk);
    sleep_ms(300);

    pg_server("halt");
    /* away: every request that needs the database is a quick JSON 503 */
    struct resp r;
    int64_t t0 = clock_mono_ms();
    http_get(&S, "/api/citas", u.token, &r);
    int64_t took = clock_mono_ms() - t0;
    expect_error(&r, 503, "Base de datos no disponible");
    char ra[16];
    assert_non_null(resp_header(&r, "Retry-After", ra, sizeof ra));
    resp_free(&r);
    if (took > 5000) fail_msg("the 503 took %lld ms", (long long)took);
    http_get(&S, "/healthz", NULL, &r);
    assert_int_equal(r.status, 503);
    resp_free(&r);
    sleep_ms(500);

    pg_server("resume");
    if (!wait_until(healthy, &S, 30000)) fail_msg("no recovery within 30 s of the restart");
    sleep_ms(300); /* a few bookings after the recovery */
    bk.stop = true;
    pthread_join(th, NULL);

    /* every booking answered 201 (before, after) or 503 (during); each 201
     * is in the database; none took long */
    int ok = 0, busy = 0;
    for (int i = 0; i < bk.n; i++) {
        if (bk.status[i] == 201) {
            ok++;
            assert_int_equal(db_count(&S, "SELECT count(*) FROM citas WHERE id = '%s'", bk.id[i]),
                             1);
        } else if (bk.status[i] == 503) {
            busy++;
        } else {
            fail_msg("booking %d: status %ld", i, bk.status[i]);
        }
        if (bk.took_ms[i] > 15000) fail_msg("booking %d took %lld ms", i, (long long)bk.took_ms[i]);
    }
    if (ok == 0 || busy == 0) fail_msg("%d bookings: %d 201, %d 503", bk.n, ok, busy);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas WHERE id = '%s'", before), 1);
    /* the session and the service work as before */
    http_get(&S, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "citas")), (size_t)ok + 1);
    resp_free(&r);
    assert_true(srv_wait_log(&S, "PostgreSQL unavailable", 1000));
    assert_true(srv_wait_log(&S, "PostgreSQL is back", 1000));

    free(before);
    free(barbero);
    free(servicio);
    srv_cleanup(&S);
}

/* --- the first answers after a restart ------------------------------------------------- */

enum { POOL = 6 };

struct slot_booking {
    const struct srv *s;
    const char *token, *barbero, *servicio;
    char fecha[48];
    long status;
    char body[160];
};

static void book_slot(void *arg)
{
    struct slot_booking *b = arg;
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", b->barbero,
             b->servicio, b->fecha);
    struct req_opts o = {.token = b->token, .content_type = "application/json", .body = body};
    struct resp r;
    b->status = http_try(b->s, "POST", "/api/citas", &o, &r);
    snprintf(b->body, sizeof b->body, "%s", r.body ? r.body : "");
    resp_free(&r);
}

/* POOL bookings at once, at distinct free slots (*next counts them), so
 * that together they lease every pooled connection; each must be a 201. */
static void book_pool_wide(const struct srv *S, const struct user *u, const char *barbero,
                           const char *servicio, int *next, const char *when)
{
    struct slot_booking b[POOL];
    for (int i = 0; i < POOL; i++) {
        int k = (*next)++;
        b[i] = (struct slot_booking){
            .s = S, .token = u->token, .barbero = barbero, .servicio = servicio};
        snprintf(b[i].fecha, sizeof b[i].fecha, "2034-%02d-%02dT%02d:00:00.000Z", 1 + k / (28 * 24),
                 1 + k / 24 % 28, k % 24);
    }
    race_threads(POOL, book_slot, b, sizeof b[0]);
    for (int i = 0; i < POOL; i++)
        if (b[i].status != 201)
            fail_msg("%s: booking %d answered %ld %s", when, i, b[i].status, b[i].body);
}

static void expect_healthz_200(const struct srv *S, const char *when)
{
    struct resp r;
    long st = http_try(S, "GET", "/healthz", NULL, &r);
    if (st != 200) fail_msg("%s: /healthz answered %ld %s", when, st, r.body ? r.body : "");
    resp_free(&r);
}

/* barberia_db_reconnects_total, from GET /metrics (loopback). */
static long reconnects(const struct srv *S)
{
    struct resp r;
    http_get(S, "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    const char *p = strstr(r.body, "\nbarberia_db_reconnects_total ");
    assert_non_null(p);
    long n = strtol(p + strlen("\nbarberia_db_reconnects_total "), NULL, 10);
    resp_free(&r);
    return n;
}

/* PostgreSQL restarted while the service was idle: its pooled connections
 * and the health check's own are all broken but do not know it yet. The
 * very first /healthz after the restart is 200, and so is every booking,
 * whichever comes first: no answer lags the database. */
static void after_a_restart_the_first_answers_are_right(void **state)
{
    (void)state;
    if (!test_pg()) skip();
    snprintf(cluster, sizeof cluster, "/tmp/barberia-pg-first-%d", (int)getpid());
    pg_server("start");
    char pool[32];
    snprintf(pool, sizeof pool, "BARBERIA_DB_POOL=%d", POOL);
    const char *env[] = {pool, NULL};
    struct srv S;
    start_on_cluster(&S, env);
    struct user u;
    signup_user(&S, &u, "Paciente");
    char *barbero = make_barbero(&S, "Barbero Reinicio");
    char *servicio = make_servicio(&S, "Corte Reinicio", 30, 10);
    int next = 0;
    /* every pooled connection and the health check's open */
    for (int i = 0; i < 3; i++)
        book_pool_wide(&S, &u, barbero, servicio, &next, "before the restart");
    expect_healthz_200(&S, "before the restart");
    /* the pool's connections opened on first use: none of that is a
     * reconnect (a fresh node must not look like one losing its database) */
    assert_int_equal(reconnects(&S), 0);

    for (int round = 0; round < 4; round++) {
        pg_server("halt");
        pg_server("resume");
        long before = reconnects(&S);
        if (round % 2 == 0) {
            expect_healthz_200(&S, "first request after the restart");
            book_pool_wide(&S, &u, barbero, servicio, &next, "after the restart and /healthz");
        } else {
            book_pool_wide(&S, &u, barbero, servicio, &next, "first requests after the restart");
            expect_healthz_200(&S, "after the restart and the bookings");
        }
        /* the restart did break several pooled connections */
        long replaced = reconnects(&S) - before;
        if (replaced < 2) fail_msg("round %d: %ld pooled connections replaced", round, replaced);
    }
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas"), next);

    free(barbero);
    free(servicio);
    srv_cleanup(&S);
}

/* The cluster goes whatever happened to the test (a failure leaves it by
 * longjmp, past the test's own stop). */
static int stop_cluster(void **state)
{
    (void)state;
    if (!cluster[0]) return 0;
    const char *argv[] = {PG_SERVER, "stop", cluster, NULL};
    int rc = run_program(argv, NULL, 120000, NULL, NULL);
    cluster[0] = '\0';
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(a_restarted_database_costs_503s_and_nothing_else, stop_cluster),
        cmocka_unit_test_teardown(after_a_restart_the_first_answers_are_right, stop_cluster),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
