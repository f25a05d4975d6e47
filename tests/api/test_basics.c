/*
 * test_basics.c - the server as a whole: health, unknown paths and methods,
 * JSON everywhere, the access log, and a graceful stop.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct srv S;

static int setup(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

static void healthz_answers_ok_when_the_store_answers(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/healthz", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    char ct[128];
    assert_string_equal(resp_header(&r, "Content-Type", ct, sizeof ct),
                        "application/json; charset=utf-8");
    resp_free(&r);
}

static void unknown_path_is_404_json(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/no/such/thing", NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
}

static void wrong_method_is_405_with_allow(void **state)
{
    (void)state;
    struct resp r;
    http_json(&S, "PUT", "/api/citas", NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    char allow[128];
    assert_non_null(resp_header(&r, "Allow", allow, sizeof allow));
    assert_non_null(strstr(allow, "GET"));
    assert_non_null(strstr(allow, "POST"));
    resp_free(&r);
    http_req(&S, "DELETE", "/api/admin/usuarios", NULL, &r);
    expect_error(&r, 405, "Método no permitido");
    assert_non_null(resp_header(&r, "Allow", allow, sizeof allow));
    assert_string_equal(allow, "GET, HEAD, PATCH");
    resp_free(&r);
}

/* Under a prefix, a path of a shape no route serves is no resource (404),
 * and a method is offered (405's Allow) only where that method's route
 * serves the path. Routing comes before the session. */
static void a_path_under_a_prefix_is_one_some_route_serves(void **state)
{
    (void)state;
#define ID "/0f0c7541-1b2a-4c3d-8e4f-5a6b7c8d9e0f"
    static const struct {
        const char *method, *path;
        long status;
        const char *allow;
    } cases[] = {
        {"GET", "/api/admin/barberos" ID "/otra", 404, NULL},
        {"PUT", "/api/admin/barberos" ID "/otra", 404, NULL},
        {"GET", "/api/admin/barberos" ID, 405, "PATCH"},
        {"PUT", "/api/admin/barberos" ID, 405, "PATCH"},
        {"PATCH", "/api/admin/barberos" ID "/horario", 405, "PUT"},
        {"PUT", "/api/admin/barberos" ID "/feed", 405, "POST, DELETE"},
        {"GET", "/api/admin/servicios" ID "/otra", 404, NULL},
        {"GET", "/api/admin/ausencias" ID, 405, "DELETE"},
        {"GET", "/api/admin/ausencias" ID "/otra", 404, NULL},
        {"GET", "/api/barberos" ID "/otra", 404, NULL},
        {"DELETE", "/api/lista-espera" ID "/otra", 404, NULL},
    };
#undef ID
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct resp r;
        http_req(&S, cases[i].method, cases[i].path, NULL, &r);
        if (r.status != cases[i].status)
            fail_msg("%s %s: %ld %s", cases[i].method, cases[i].path, r.status, r.body);
        expect_error(&r, cases[i].status,
                     cases[i].status == 404 ? "No encontrado" : "Método no permitido");
        char allow[128];
        const char *a = resp_header(&r, "Allow", allow, sizeof allow);
        if (cases[i].allow && (!a || strcmp(a, cases[i].allow)))
            fail_msg("%s %s: Allow %s", cases[i].method, cases[i].path, a ? a : "(none)");
        resp_free(&r);
    }
    /* an admin endpoint staff may read is 403 without a session, as every one */
    struct resp r;
    http_get(&S, "/api/admin/ausencias", NULL, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
}

static void access_log_has_one_line_per_request(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/barberos?probe=1", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_true(srv_wait_log(&S, "GET /api/barberos 200 ", 5000));
}

/* utime + stime of a process, in clock ticks. */
static long cpu_ticks(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *st = read_file(path, NULL);
    assert_non_null(st);
    const char *p = strrchr(st, ')'); /* the name may hold spaces */
    assert_non_null(p);
    long ut = 0, stime = 0;
    /* after the name: state, then fields 4..13, then utime (14), stime (15) */
    int n = sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &stime);
    free(st);
    assert_int_equal(n, 2);
    return ut + stime;
}

/* A server with nothing to do sleeps: no thread polls in a loop (a
 * condition variable waited on with the wrong clock once kept one core
 * busy all the time). */
static void an_idle_server_burns_no_cpu(void **state)
{
    (void)state;
    long hz = sysconf(_SC_CLK_TCK);
    long before = cpu_ticks(S.pid);
    sleep_ms(2000);
    long used = cpu_ticks(S.pid) - before;
    /* a spinning thread would take the whole 2 s */
    if (used * 1000 / hz > 400)
        fail_msg("idle for 2 s, the server used %ld ms of CPU", used * 1000 / hz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(healthz_answers_ok_when_the_store_answers),
        cmocka_unit_test(unknown_path_is_404_json),
        cmocka_unit_test(wrong_method_is_405_with_allow),
        cmocka_unit_test(a_path_under_a_prefix_is_one_some_route_serves),
        cmocka_unit_test(access_log_has_one_line_per_request),
        cmocka_unit_test(an_idle_server_burns_no_cpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
