/*
 * test_origin.c - the session cookie speaks only for pages of the
 * service's own origin (the contract's "Identity and sessions"). A write
 * (any method but GET, HEAD and OPTIONS) carried by the cookie alone is
 * refused with 403 {"error":"Origen no permitido"}, changing nothing, when
 * the browser marks it as sent by a page of another origin: an Origin that
 * is not the one the request was addressed to (its own Host), nor the
 * public URL's, nor one BARBERIA_CORS_ORIGINS allows; or, without Origin, a
 * Sec-Fetch-Site other than same-origin or none. A page on another port of
 * the same host is another origin. The service's own pages (under any name
 * of the server), the public URL's, a CORS origin's, requests by Bearer
 * token and requests without those headers (curl, scripts) write as
 * before; the session is checked first (401, 403 Sin permisos). With an
 * https:// public URL, a plain HTTP page under its name is another origin,
 * whatever Host the proxy forwards.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP     "https://app.barberia.example"
#define PUBLIC  "https://citas.example.com:8443"
#define REFUSED "Origen no permitido"
#define HEADERS 4

static struct srv S;
static char *BARBERO, *SERVICIO;
static struct user ANA, ADMIN;
static char OTHER_PORT[64]; /* a page on another port of the service's host */

static int setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_CORS_ORIGINS=" APP, "BARBERIA_PUBLIC_URL=" PUBLIC "/", NULL};
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    int port = free_port();
    if (port == S.port) port = free_port();
    snprintf(OTHER_PORT, sizeof OTHER_PORT, "http://127.0.0.1:%d", port);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

/* A fresh slot every call, an hour apart from 2032-03-01 (no overlaps). */
static const char *next_slot(void)
{
    static char out[ISO8601_LEN + 1];
    static int n;
    int64_t base = iso8601_days_from_civil(2032, 3, 1) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
    return out;
}

static char *cita_body(const char *fecha)
{
    char *b = NULL;
    if (asprintf(&b, "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                 BARBERO, SERVICIO, fecha) < 0)
        fail_msg("asprintf");
    return b;
}

/* Extra header lines: "Origin: <origin>" when origin is not NULL, then
 * more (NULL-ended), into h[HEADERS] with the storage line. */
static const char *const *headers(char line[256], const char *h[HEADERS], const char *origin,
                                  const char *more)
{
    size_t n = 0;
    if (origin) {
        snprintf(line, 256, "Origin: %s", origin);
        h[n++] = line;
    }
    if (more) h[n++] = more;
    h[n] = NULL;
    return h;
}

/* One request as a browser page sends it: the session as the cookie only
 * (u NULL: no cookie), origin and another header line (both may be NULL),
 * a body (may be NULL) of type ctype. */
static void cookie_call(const struct user *u, const char *method, const char *path,
                        const char *origin, const char *more, const char *ctype, const char *body,
                        struct resp *r)
{
    char cookie[128], line[256];
    const char *h[HEADERS];
    snprintf(cookie, sizeof cookie, "barberia_session=%s", u ? u->token : "");
    struct req_opts o = {.cookie = u ? cookie : NULL,
                         .content_type = ctype,
                         .body = body,
                         .headers = headers(line, h, origin, more)};
    http_req(&S, method, path, &o, r);
}

/* ANA's citas as the API lists them to her (by token). Caller decrefs. */
static json_t *citas_of_ana(void)
{
    struct resp r;
    http_get(&S, "/api/citas", ANA.token, &r);
    assert_int_equal(r.status, 200);
    json_t *c = json_incref(json_object_get(r.json, "citas"));
    resp_free(&r);
    return c;
}

static size_t count_citas(void)
{
    json_t *c = citas_of_ana();
    size_t n = json_array_size(c);
    json_decref(c);
    return n;
}

static const char *estado_of(const json_t *citas, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(citas, i, c) if (!strcmp(jstr(c, "id"), id)) return jstr(c, "estado");
    return NULL;
}

static size_t count_servicios(void)
{
    struct resp r;
    http_get(&S, "/api/admin/servicios", ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "servicios"));
    resp_free(&r);
    return n;
}

/* Whether the session still works (a logout did not end it). */
static bool signed_in(const struct user *u)
{
    struct resp r;
    http_get(&S, "/api/auth/me", u->token, &r);
    bool ok = r.status == 200;
    resp_free(&r);
    return ok;
}

/* Every write a page of another origin tried with ANA's or ADMIN's cookie
 * (origin, or more without an Origin): each refused with 403, nothing
 * changed. */
static void every_write_is_refused(const char *origin, const char *more)
{
    size_t citas = count_citas(), servicios = count_servicios();
    char *id = book(&S, &ANA, BARBERO, SERVICIO, next_slot(), NULL);
    citas++;
    struct resp r;
    /* a booking, as a text/plain form or a no-cors fetch sends it */
    char *body = cita_body(next_slot());
    cookie_call(&ANA, "POST", "/api/citas", origin, more, "text/plain", body, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    cookie_call(&ANA, "POST", "/api/citas", origin, more, "application/json", body, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    free(body);
    /* a cancel, with and without a body */
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", id);
    cookie_call(&ANA, "POST", path, origin, more, NULL, NULL, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    cookie_call(&ANA, "POST", path, origin, more, "text/plain", "{}", &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    /* a photo */
    static const char form[] =
        "--x\r\nContent-Disposition: form-data; name=\"tipo\"\r\n\r\nantes\r\n"
        "--x\r\nContent-Disposition: form-data; name=\"file\"; "
        "filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n"
        "--x--\r\n";
    cookie_call(&ANA, "POST", "/api/fotos", origin, more, "multipart/form-data; boundary=x", form,
                &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    /* an administrator's writes */
    cookie_call(&ADMIN, "POST", "/api/admin/servicios", origin, more, "text/plain",
                "{\"nombre\":\"Intruso\",\"duracion_min\":10,\"precio\":1}", &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    char patch[256];
    snprintf(patch, sizeof patch, "{\"userId\":\"%s\",\"rol\":\"admin\"}", ANA.id);
    cookie_call(&ADMIN, "PATCH", "/api/admin/usuarios", origin, more, "text/plain", patch, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    /* a logout */
    cookie_call(&ANA, "POST", "/api/auth/logout", origin, more, NULL, NULL, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);

    /* nothing changed */
    json_t *now = citas_of_ana();
    assert_int_equal(json_array_size(now), citas);
    assert_string_equal(estado_of(now, id), "confirmada");
    json_decref(now);
    assert_int_equal(count_servicios(), servicios);
    char folder[128];
    snprintf(folder, sizeof folder, "%s/%s", ANA.id, id);
    assert_int_equal(obj_count(&S, folder), 0);
    struct resp me;
    http_get(&S, "/api/auth/me", ANA.token, &me);
    assert_int_equal(me.status, 200);
    assert_string_equal(jstr(json_object_get(me.json, "perfil"), "rol"), "cliente");
    resp_free(&me);
    assert_true(signed_in(&ANA));
    assert_true(signed_in(&ADMIN));
    free(id);
}

/* A cookie write from origin (more: another header line) goes through:
 * a booking and its cancel. */
static void writes_as_before(const char *origin, const char *more)
{
    size_t citas = count_citas();
    char *body = cita_body(next_slot());
    struct resp r;
    cookie_call(&ANA, "POST", "/api/citas", origin, more, NULL, body, &r);
    if (r.status != 201)
        fail_msg("origin %s, %s: %ld %s", origin ? origin : "-", more ? more : "-", r.status,
                 r.body);
    char *id = strdup(jstr(json_object_get(r.json, "cita"), "id"));
    resp_free(&r);
    free(body);
    assert_int_equal(count_citas(), citas + 1);
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", id);
    cookie_call(&ANA, "POST", path, origin, more, NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    json_t *now = citas_of_ana();
    assert_string_equal(estado_of(now, id), "cancelada");
    json_decref(now);
    free(id);
}

/* --- the tests ------------------------------------------------------------------------ */

static void a_page_of_another_origin_changes_nothing_with_the_cookie(void **state)
{
    (void)state;
    char other_name[64], other_scheme[64], bare_host[64];
    snprintf(other_name, sizeof other_name, "http://localhost:%d", S.port);
    snprintf(other_scheme, sizeof other_scheme, "https://127.0.0.1:%d", S.port);
    snprintf(bare_host, sizeof bare_host, "http://127.0.0.1");
    const char *origins[] = {
        OTHER_PORT,                           /* another port of the same host */
        "null",                               /* a sandboxed page, a data: URL, a redirect */
        other_name,                           /* another name than the one addressed */
        other_scheme,                         /* another scheme */
        bare_host,                            /* the host without the port */
        "https://citas.example.com",          /* the public URL's host, another port */
        "http://citas.example.com:8443",      /* the public URL's host, another scheme */
        "https://sub.citas.example.com:8443", /* a sibling subdomain */
        APP ".evil.example",                  /* a CORS origin's name as a prefix */
        "https://evil.example",
    };
    for (size_t i = 0; i < sizeof origins / sizeof origins[0]; i++) {
        print_message("Origin: %s\n", origins[i]);
        every_write_is_refused(origins[i], NULL);
    }
}

/* The public URL is https://: a page under its name over plain HTTP (which
 * anyone on the network path can serve before nginx's redirect) sends
 * Origin: http://<name>, and a proxy forwards the Host that name gives
 * (nginx's $host, no port; or the port too): the origin "addressed" is then
 * http:// and that Host, but the page is not the service's. */
static void a_plain_http_page_under_the_public_name_is_another_origin(void **state)
{
    (void)state;
    every_write_is_refused("http://citas.example.com", "Host: citas.example.com");
    every_write_is_refused("http://citas.example.com:8443", "Host: citas.example.com:8443");
    every_write_is_refused("http://CITAS.example.com", "Host: citas.example.com");
    /* nor does it sign the visitor in to an account of its own */
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", ANA.email, ANA.password);
    struct resp r;
    cookie_call(NULL, "POST", "/api/auth/login", "http://citas.example.com",
                "Host: citas.example.com", "text/plain", body, &r);
    assert_int_equal(r.status, 200);
    char v[256];
    assert_null(resp_header(&r, "Set-Cookie", v, sizeof v));
    resp_free(&r);
    /* the https:// page through the same proxy writes as before */
    writes_as_before(PUBLIC, "Host: citas.example.com");
}

static void without_origin_a_fetch_site_other_than_same_origin_is_refused(void **state)
{
    (void)state;
    every_write_is_refused(NULL, "Sec-Fetch-Site: same-site");
    every_write_is_refused(NULL, "Sec-Fetch-Site: cross-site");
    /* the Origin, when there is one, is what counts */
    every_write_is_refused(OTHER_PORT, "Sec-Fetch-Site: same-origin");
}

static void the_service_own_pages_write_as_before(void **state)
{
    (void)state;
    /* the origin the request was addressed to */
    writes_as_before(S.base, NULL);
    writes_as_before(S.base, "Sec-Fetch-Site: same-origin");
    /* the server under another name: the page's origin is the Host it used */
    char host[64], origin[64];
    snprintf(host, sizeof host, "Host: localhost:%d", S.port);
    snprintf(origin, sizeof origin, "http://localhost:%d", S.port);
    writes_as_before(origin, host);
    writes_as_before("http://barberia.local", "Host: barberia.local:80"); /* the default port */
    writes_as_before("http://[::1]:8080", "Host: [::1]:8080");
    /* the public URL's origin (behind a proxy that forwards another Host) */
    writes_as_before(PUBLIC, NULL);
    writes_as_before(PUBLIC, "Host: citas.example.com");
    /* an origin the CORS setting allows */
    writes_as_before(APP, NULL);
    /* without Origin, a browser's navigation or same-origin request */
    writes_as_before(NULL, "Sec-Fetch-Site: same-origin");
    writes_as_before(NULL, "Sec-Fetch-Site: none");
}

static void bearer_and_header_less_requests_are_judged_as_before(void **state)
{
    (void)state;
    /* no Origin, no Sec-Fetch-Site: curl, scripts, apps */
    writes_as_before(NULL, NULL);
    /* the Bearer token, whatever the browser says (the cookie along too) */
    char bearer[128];
    snprintf(bearer, sizeof bearer, "Authorization: Bearer %s", ANA.token);
    writes_as_before(OTHER_PORT, bearer);
    {
        char line[256];
        const char *h[HEADERS];
        char *body = cita_body(next_slot());
        struct req_opts o = {.token = ANA.token,
                             .body = body,
                             .headers = headers(line, h, "null", "Sec-Fetch-Site: cross-site")};
        struct resp r;
        http_req(&S, "POST", "/api/citas", &o, &r);
        assert_int_equal(r.status, 201);
        resp_free(&r);
        free(body);
    }
    /* reads by the cookie are not writes */
    struct resp r;
    cookie_call(&ANA, "GET", "/api/auth/me", OTHER_PORT, "Sec-Fetch-Site: same-site", NULL, NULL,
                &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

/* A page of another origin that signs a visitor in to an account of its
 * own (login CSRF: a form posts JSON as text/plain) leaves no cookie in her
 * browser; the service's own pages, allowed origins and header-less
 * clients get it as before. */
static void a_sign_in_from_another_origin_sets_no_cookie(void **state)
{
    (void)state;
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", ANA.email, ANA.password);
    char own[64];
    snprintf(own, sizeof own, "http://127.0.0.1:%d", S.port);
    const struct {
        const char *origin, *more;
        bool cookie;
    } cases[] = {
        {"http://evil.example", "Sec-Fetch-Site: cross-site", false},
        {OTHER_PORT, NULL, false},
        {"null", NULL, false},
        {NULL, "Sec-Fetch-Site: cross-site", false},
        {own, "Sec-Fetch-Site: same-origin", true},
        {PUBLIC, NULL, true},
        {APP, NULL, true},
        {NULL, NULL, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct resp r;
        cookie_call(NULL, "POST", "/api/auth/login", cases[i].origin, cases[i].more, "text/plain",
                    body, &r);
        assert_int_equal(r.status, 200);
        assert_non_null(jstr(r.json, "token"));
        char v[256];
        bool set = resp_header(&r, "Set-Cookie", v, sizeof v) != NULL;
        if (set != cases[i].cookie)
            fail_msg("%s %s: cookie %s", cases[i].origin ? cases[i].origin : "-",
                     cases[i].more ? cases[i].more : "-", set ? "set" : "not set");
        resp_free(&r);
    }
}

static void the_session_is_checked_first_and_no_body_is_read(void **state)
{
    (void)state;
    char *body = cita_body(next_slot());
    struct resp r;
    /* no session: 401 (403 on the admin endpoints), as always */
    cookie_call(NULL, "POST", "/api/citas", OTHER_PORT, NULL, NULL, body, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    struct user nobody = {.token = "no-es-una-sesion"};
    cookie_call(&nobody, "POST", "/api/citas", OTHER_PORT, NULL, NULL, body, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    cookie_call(&nobody, "POST", "/api/auth/logout", NULL, "Sec-Fetch-Site: cross-site", NULL, NULL,
                &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    cookie_call(NULL, "POST", "/api/admin/servicios", OTHER_PORT, NULL, NULL, "{}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    /* a client's session on an admin endpoint: what it always got */
    cookie_call(&ANA, "POST", "/api/admin/servicios", OTHER_PORT, NULL, NULL, "{}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    /* refused before the body: one past the JSON cap is not read (no 413) */
    size_t big = 100 * 1024;
    char *large = malloc(big + 1);
    assert_non_null(large);
    memset(large, 'a', big);
    large[big] = '\0';
    cookie_call(&ANA, "POST", "/api/citas", OTHER_PORT, NULL, "text/plain", large, &r);
    expect_error(&r, 403, REFUSED);
    resp_free(&r);
    free(large);
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_page_of_another_origin_changes_nothing_with_the_cookie),
        cmocka_unit_test(a_plain_http_page_under_the_public_name_is_another_origin),
        cmocka_unit_test(without_origin_a_fetch_site_other_than_same_origin_is_refused),
        cmocka_unit_test(the_service_own_pages_write_as_before),
        cmocka_unit_test(bearer_and_header_less_requests_are_judged_as_before),
        cmocka_unit_test(a_sign_in_from_another_origin_sets_no_cookie),
        cmocka_unit_test(the_session_is_checked_first_and_no_body_is_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
