/*
 * test_pg_outage.c - PostgreSQL restarted under a running service: while it
 * is away requests answer a JSON 503 at once (nothing hangs), /healthz says
 * so, and once it is back the service recovers by itself with nothing
 * acknowledged lost. The cluster is this test's own (scripts/pg-server), so
 * that stopping it disturbs no other test. PostgreSQL runs only.
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
    /* the service's own database on that cluster */
    struct srv first = {0};
    snprintf(first.dir, sizeof first.dir, "%s", cluster);
    snprintf(first.data, sizeof first.data, "%s/app-data", cluster);
    snprintf(first.dburl, sizeof first.dburl, "%spostgres", base_url);
    struct srv S;
    srv_init_peer(&S, &first);
    snprintf(S.data, sizeof S.data, "%s/data", S.dir);

    srv_start(&S, NULL, NULL);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
