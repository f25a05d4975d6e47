/*
 * test_cors.c - BARBERIA_CORS_ORIGINS: unset, the API stays same-origin
 * only (no CORS header, a preflight is the 405 it always was); set, the
 * listed origins get correct preflight answers and may read every answer
 * (errors too) with credentials, and any other origin gets nothing more
 * than before. A malformed list stops the start.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP   "https://app.barberia.example"
#define OTHER "https://evil.example"

static struct srv S;

static int setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_CORS_ORIGINS=" APP ", http://localhost:5173", NULL};
    srv_start(&S, env, NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

static void request(const struct srv *s, const char *method, const char *path, const char *origin,
                    const char *ask_method, const char *token, struct resp *r)
{
    char o[160], m[160];
    const char *headers[4] = {NULL};
    size_t n = 0;
    if (origin) {
        snprintf(o, sizeof o, "Origin: %s", origin);
        headers[n++] = o;
    }
    if (ask_method) {
        snprintf(m, sizeof m, "Access-Control-Request-Method: %s", ask_method);
        headers[n++] = m;
        headers[n++] = "Access-Control-Request-Headers: authorization, content-type";
    }
    struct req_opts opts = {.token = token, .headers = headers};
    http_req(s, method, path, &opts, r);
}

static bool has_header(const struct resp *r, const char *name)
{
    char buf[256];
    return resp_header(r, name, buf, sizeof buf) != NULL;
}

static void a_listed_origin_gets_a_preflight_and_reads_answers_with_credentials(void **state)
{
    (void)state;
    struct resp r;
    request(&S, "OPTIONS", "/api/citas", APP, "POST", NULL, &r);
    assert_int_equal(r.status, 204);
    expect_header(&r, "Access-Control-Allow-Origin", APP);
    expect_header(&r, "Access-Control-Allow-Credentials", "true");
    expect_header(&r, "Access-Control-Allow-Methods", "GET, HEAD, POST");
    char h[256];
    assert_non_null(resp_header(&r, "Access-Control-Allow-Headers", h, sizeof h));
    assert_non_null(strstr(h, "Authorization"));
    assert_non_null(strstr(h, "Content-Type"));
    expect_header(&r, "Vary", "Origin");
    assert_int_equal(r.len, 0);
    resp_free(&r);
    /* the other listed origin, written in another case */
    request(&S, "OPTIONS", "/api/fotos", "HTTP://LOCALHOST:5173", "DELETE", NULL, &r);
    assert_int_equal(r.status, 204);
    resp_free(&r);

    /* the real requests: answers and errors alike are readable */
    request(&S, "GET", "/api/servicios", APP, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Access-Control-Allow-Origin", APP);
    expect_header(&r, "Access-Control-Allow-Credentials", "true");
    resp_free(&r);
    request(&S, "GET", "/api/citas", APP, NULL, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    expect_header(&r, "Access-Control-Allow-Origin", APP);
    resp_free(&r);
    struct user u;
    signup_user(&S, &u, "Cors");
    request(&S, "GET", "/api/auth/me", APP, NULL, u.token, &r);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Access-Control-Allow-Origin", APP);
    resp_free(&r);
}

static void another_origin_gets_nothing_more_than_before(void **state)
{
    (void)state;
    struct resp r;
    request(&S, "OPTIONS", "/api/citas", OTHER, "POST", NULL, &r);
    assert_int_equal(r.status, 405);
    assert_false(has_header(&r, "Access-Control-Allow-Origin"));
    resp_free(&r);
    request(&S, "GET", "/api/servicios", OTHER, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_false(has_header(&r, "Access-Control-Allow-Origin"));
    assert_false(has_header(&r, "Access-Control-Allow-Credentials"));
    expect_header(&r, "Vary", "Origin"); /* a cache must not hand it to the app */
    resp_free(&r);
    /* a method the path does not have: no preflight either */
    request(&S, "OPTIONS", "/api/citas", APP, "DELETE", NULL, &r);
    assert_int_equal(r.status, 405);
    resp_free(&r);
    /* a path that does not exist */
    request(&S, "OPTIONS", "/api/nada", APP, "GET", NULL, &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
}

static void unset_the_api_is_same_origin_only_as_before(void **state)
{
    (void)state;
    struct srv s = {0};
    srv_start(&s, NULL, NULL);
    struct resp r;
    request(&s, "OPTIONS", "/api/citas", APP, "POST", NULL, &r);
    expect_error(&r, 405, "Método no permitido");
    assert_false(has_header(&r, "Access-Control-Allow-Origin"));
    resp_free(&r);
    request(&s, "GET", "/api/servicios", APP, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_false(has_header(&r, "Access-Control-Allow-Origin"));
    assert_false(has_header(&r, "Vary"));
    resp_free(&r);
    srv_cleanup(&s);
}

/* Every link handed out starts with the public URL, and photo URLs are
 * stored: one the service cannot use stops the start, writing nothing. A
 * query, a fragment or a blank used to pass, and every link was then
 * "https://citas.example.com/?utm=x/c/<token>", every photo URL stored so
 * for good. */
static void a_public_url_that_is_no_http_url_stops_the_start(void **state)
{
    (void)state;
    static const char *const bad[] = {"htps://citas.example.com",
                                      "ftp://citas.example.com",
                                      "citas.example.com",
                                      "https://",
                                      "http://:8080",
                                      "https://citas.example.com/?utm=x",
                                      "https://citas.example.com#a",
                                      "https://citas.example.com/a b",
                                      "https://citas.example.com/\\x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct srv s = {0};
        srv_init(&s);
        char env0[128];
        snprintf(env0, sizeof env0, "BARBERIA_PUBLIC_URL=%s", bad[i]);
        const char *env[] = {env0, NULL};
        const char *args[] = {"serve", "--listen", "127.0.0.1:0", NULL};
        char *out = NULL, *err = NULL;
        int st = run_cli_within(&s, env, args, true, 30000, &out, &err);
        if (st != 1) fail_msg("'%s': exit %d, %s", bad[i], st, err ? err : "");
        assert_non_null(strstr(err, "BARBERIA_PUBLIC_URL"));
        char db[600];
        snprintf(db, sizeof db, "%s/barberia.db", s.data);
        assert_false(file_exists(db));
        free(out);
        free(err);
        srv_cleanup(&s);
    }
}

static void a_malformed_origin_list_stops_the_start(void **state)
{
    (void)state;
    static const char *const bad[] = {"*", "app.example", "https://app.example/path",
                                      "ftp://app.example", "https://"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct srv s = {0};
        srv_init(&s);
        char env0[128];
        snprintf(env0, sizeof env0, "BARBERIA_CORS_ORIGINS=https://ok.example,%s", bad[i]);
        const char *env[] = {env0, NULL};
        const char *args[] = {"serve", "--listen", "127.0.0.1:0", NULL};
        char *out = NULL, *err = NULL;
        int st = run_cli_within(&s, env, args, true, 30000, &out, &err);
        if (st != 2) fail_msg("'%s': exit %d, %s", bad[i], st, err ? err : "");
        assert_non_null(strstr(err, "BARBERIA_CORS_ORIGINS"));
        free(out);
        free(err);
        srv_cleanup(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_listed_origin_gets_a_preflight_and_reads_answers_with_credentials),
        cmocka_unit_test(another_origin_gets_nothing_more_than_before),
        cmocka_unit_test(unset_the_api_is_same_origin_only_as_before),
        cmocka_unit_test(a_malformed_origin_list_stops_the_start),
        cmocka_unit_test(a_public_url_that_is_no_http_url_stops_the_start),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
