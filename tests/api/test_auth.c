/*
 * test_auth.c - the embedded identity provider's endpoints (signup, login,
 * logout, me) over HTTP against the real server: answers and errors in
 * their order, e-mail normalisation, both ways of carrying the session,
 * what is stored (only token hashes, only Argon2id password hashes), what
 * is logged (never a secret), and the public catalog.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

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

/* --- helpers ------------------------------------------------------------------------ */

static void post_json(const char *path, const char *token, const char *body, struct resp *r)
{
    http_json(&S, "POST", path, token, body, r);
}

static void expect_post(const char *path, const char *body, long status, const char *msg)
{
    struct resp r;
    post_json(path, NULL, body, &r);
    if (r.status != status) fprintf(stderr, "request body: %s\n", body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

static char *creds(const char *email, const char *password)
{
    json_t *b = json_object();
    if (email) json_object_set_new(b, "email", json_string(email));
    if (password) json_object_set_new(b, "password", json_string(password));
    char *text = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    return text;
}

static bool token_shaped(const char *t)
{
    if (!t || strlen(t) < 43) return false;
    for (const char *p = t; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            return false;
    return true;
}

/* Asserts a session answer: exactly {"user":{"id","email"},"token"} plus the
 * cookie carrying the same token. */
static void expect_session_answer(const struct resp *r, long status, const char *email)
{
    if (r->status != status) fail_msg("expected %ld, got %ld: %s", status, r->status, r->body);
    expect_keys(r->json, "user", "token", NULL);
    json_t *user = json_object_get(r->json, "user");
    expect_keys(user, "id", "email", NULL);
    assert_true(is_lower_uuid(jstr(user, "id")));
    assert_string_equal(jstr(user, "email"), email);
    const char *tok = jstr(r->json, "token");
    assert_true(token_shaped(tok));
    char cookie[512], want[256];
    assert_non_null(resp_header(r, "Set-Cookie", cookie, sizeof cookie));
    snprintf(want, sizeof want, "barberia_session=%s;", tok);
    assert_true(!strncmp(cookie, want, strlen(want)));
    assert_non_null(strstr(cookie, "; HttpOnly"));
    assert_non_null(strstr(cookie, "; SameSite=Lax"));
    assert_non_null(strstr(cookie, "; Path=/"));
    assert_null(strstr(cookie, "Secure")); /* the public URL is http */
}

static void signup_raw(const char *email, const char *password, const char *nombre,
                       const char *telefono, struct resp *r)
{
    json_t *b = json_pack("{s:s, s:s}", "email", email, "password", password);
    if (nombre) json_object_set_new(b, "nombre", json_string(nombre));
    if (telefono) json_object_set_new(b, "telefono", json_string(telefono));
    char *text = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    post_json("/api/auth/signup", NULL, text, r);
    free(text);
}

static long status_of(const char *method, const char *path, const struct req_opts *o)
{
    struct resp r;
    http_req(&S, method, path, o, &r);
    long st = r.status;
    if (st == 401) expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    return st;
}

static long me_status(const char *token)
{
    struct req_opts o = {.token = token};
    return status_of("GET", "/api/auth/me", &o);
}

static long login(const char *email, const char *password, char token[64])
{
    char *b = creds(email, password);
    struct resp r;
    post_json("/api/auth/login", NULL, b, &r);
    free(b);
    long st = r.status;
    if (st == 200 && token) snprintf(token, 64, "%s", jstr(r.json, "token"));
    resp_free(&r);
    return st;
}

/* --- the catalog (first: it checks whole lists) ------------------------------------------ */

static void catalog_lists_need_no_session_and_are_ordered_by_nombre(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/barberos", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"barberos\":[]}");
    resp_free(&r);
    http_get(&S, "/api/servicios", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"servicios\":[]}");
    resp_free(&r);

    char *out = NULL, *err = NULL;
    char *zoe = make_barbero(&S, "Zoe");
    assert_int_equal(srv_cli(&S, &out, &err, "barbero", "add", "--nombre", "Ana", "--foto-url",
                             "https://img.example/ana.png", NULL),
                     0);
    out[strcspn(out, "\n")] = '\0';
    char *ana = out;
    free(err);
    char *mario = make_barbero(&S, "Mario");
    /* a garbage token does not matter on public endpoints */
    http_get(&S, "/api/barberos", "garbage", &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "barberos", NULL);
    json_t *l = json_object_get(r.json, "barberos");
    assert_int_equal(json_array_size(l), 3);
    const char *ids[] = {ana, mario, zoe}, *names[] = {"Ana", "Mario", "Zoe"};
    for (size_t i = 0; i < 3; i++) {
        json_t *b = json_array_get(l, i);
        expect_keys(b, "id", "nombre", "foto_url", NULL);
        assert_string_equal(jstr(b, "id"), ids[i]);
        assert_string_equal(jstr(b, "nombre"), names[i]);
    }
    assert_string_equal(jstr(json_array_get(l, 0), "foto_url"), "https://img.example/ana.png");
    assert_true(json_is_null(json_object_get(json_array_get(l, 1), "foto_url")));
    resp_free(&r);

    char *tinte = make_servicio(&S, "Tinte", 60, 30);
    char *afeitado = make_servicio(&S, "Afeitado", 20, 12.5);
    char *corte = make_servicio(&S, "Corte", 30, 15.75);
    http_get(&S, "/api/servicios", NULL, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "servicios", NULL);
    l = json_object_get(r.json, "servicios");
    assert_int_equal(json_array_size(l), 3);
    const char *sids[] = {afeitado, corte, tinte}, *snames[] = {"Afeitado", "Corte", "Tinte"};
    const int mins[] = {20, 30, 60};
    const double precios[] = {12.5, 15.75, 30};
    for (size_t i = 0; i < 3; i++) {
        json_t *s = json_array_get(l, i);
        expect_keys(s, "id", "nombre", "duracion_min", "precio", NULL);
        assert_string_equal(jstr(s, "id"), sids[i]);
        assert_string_equal(jstr(s, "nombre"), snames[i]);
        assert_true(json_is_integer(json_object_get(s, "duracion_min")));
        assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), mins[i]);
        assert_true(json_is_number(json_object_get(s, "precio")));
        assert_true(json_number_value(json_object_get(s, "precio")) == precios[i]);
    }
    resp_free(&r);
    free(zoe);
    free(ana);
    free(mario);
    free(tinte);
    free(afeitado);
    free(corte);
}

/* --- signup -------------------------------------------------------------------------------- */

static void signup_is_201_with_user_token_and_session_cookie(void **state)
{
    (void)state;
    char email[128];
    unique_email(email, sizeof email, "alta");
    struct resp r;
    signup_raw(email, "secreto-alta", "Alta Nueva", NULL, &r);
    expect_session_answer(&r, 201, email);
    char ct[128];
    assert_string_equal(resp_header(&r, "Content-Type", ct, sizeof ct),
                        "application/json; charset=utf-8");
    /* the session lasts 30 days */
    char cookie[512];
    resp_header(&r, "Set-Cookie", cookie, sizeof cookie);
    assert_non_null(strstr(cookie, "; Max-Age=2592000"));
    const char *id = jstr(json_object_get(r.json, "user"), "id");
    assert_int_equal(db_count(&S,
                              test_pg() ? "SELECT count(*) FROM auth_sessions WHERE user_id = "
                                          "'%s' AND expires_at - created_at = interval '30 days'"
                                        : "SELECT count(*) FROM auth_sessions WHERE user_id = "
                                          "'%s' AND julianday(expires_at) - julianday(created_at) "
                                          "= 30",
                              id),
                     1);
    resp_free(&r);
}

static void signup_creates_a_cliente_profile_shown_by_me(void **state)
{
    (void)state;
    char email[128];
    unique_email(email, sizeof email, "perfil");
    struct resp r;
    /* a rol in the body is not the client's to choose */
    json_t *b = json_pack("{s:s, s:s, s:s, s:s, s:s}", "email", email, "password", "secreto-perfil",
                          "nombre", "Perfil Alta", "telefono", "600 123 456", "rol", "admin");
    char *text = json_dumps(b, 0);
    json_decref(b);
    post_json("/api/auth/signup", NULL, text, &r);
    free(text);
    expect_session_answer(&r, 201, email);
    char id[40], tok[64];
    snprintf(id, sizeof id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "token"));
    resp_free(&r);

    http_get(&S, "/api/auth/me", tok, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "user", "perfil", NULL);
    json_t *user = json_object_get(r.json, "user");
    expect_keys(user, "id", "email", NULL);
    assert_string_equal(jstr(user, "id"), id);
    assert_string_equal(jstr(user, "email"), email);
    json_t *p = json_object_get(r.json, "perfil");
    expect_keys(p, "id", "rol", "nombre", "telefono", "created_at", NULL);
    assert_string_equal(jstr(p, "id"), id);
    assert_string_equal(jstr(p, "rol"), "cliente");
    assert_string_equal(jstr(p, "nombre"), "Perfil Alta");
    assert_string_equal(jstr(p, "telefono"), "600 123 456");
    assert_int_equal(strlen(jstr(p, "created_at")), 24);
    resp_free(&r);

    /* without nombre and telefono: both null */
    char email2[128];
    unique_email(email2, sizeof email2, "perfil");
    signup_raw(email2, "secreto-perfil", NULL, NULL, &r);
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "token"));
    resp_free(&r);
    http_get(&S, "/api/auth/me", tok, &r);
    p = json_object_get(r.json, "perfil");
    assert_string_equal(jstr(p, "rol"), "cliente");
    assert_true(json_is_null(json_object_get(p, "nombre")));
    assert_true(json_is_null(json_object_get(p, "telefono")));
    resp_free(&r);

    /* a name and a phone are kept as one line each, bounded as elsewhere
     * (the contract's sign-up refuses neither) */
    char email3[128], largo[400];
    unique_email(email3, sizeof email3, "perfil");
    memset(largo, 'N', sizeof largo - 1);
    largo[sizeof largo - 1] = '\0';
    memcpy(largo, "Ana\r\nBcc: x", 11);
    signup_raw(email3, "secreto-perfil", largo, "600\n123 456 789 012 345 678 901 234 567", &r);
    assert_int_equal(r.status, 201);
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "token"));
    resp_free(&r);
    http_get(&S, "/api/auth/me", tok, &r);
    p = json_object_get(r.json, "perfil");
    const char *nombre = jstr(p, "nombre");
    assert_int_equal(strlen(nombre), 200);
    assert_true(!strncmp(nombre, "Ana  Bcc: xNNN", 14));
    assert_null(strpbrk(nombre, "\r\n"));
    assert_string_equal(jstr(p, "telefono"), "600 123 456 789 012 345 678 901 ");
    resp_free(&r);
}

static void signup_errors_come_in_the_contract_order(void **state)
{
    (void)state;
    const char *up = "/api/auth/signup";
    long users = db_count(&S, "SELECT count(*) FROM auth_users");
    /* 1. required fields (absent, null or empty), whatever else is wrong */
    expect_post(up, "{}", 400, "Faltan campos requeridos");
    expect_post(up, "{\"email\":\"a@test.example\"}", 400, "Faltan campos requeridos");
    expect_post(up, "{\"password\":\"secreto1\"}", 400, "Faltan campos requeridos");
    expect_post(up, "{\"email\":\"\",\"password\":\"secreto1\"}", 400, "Faltan campos requeridos");
    expect_post(up, "{\"email\":\"a@test.example\",\"password\":\"\"}", 400,
                "Faltan campos requeridos");
    expect_post(up, "{\"email\":null,\"password\":\"abc\"}", 400, "Faltan campos requeridos");
    expect_post(up, "{\"email\":\"no-email\",\"password\":null}", 400, "Faltan campos requeridos");
    /* 2. the password's length, before the e-mail's form */
    expect_post(up, "{\"email\":\"b@test.example\",\"password\":\"abcde\"}", 400,
                "Mínimo 6 caracteres");
    expect_post(up, "{\"email\":\"no-email\",\"password\":\"abc\"}", 400, "Mínimo 6 caracteres");
    expect_post(up, "{\"email\":\"c@test.example\",\"password\":\"ñññññ\"}", 400,
                "Mínimo 6 caracteres");
    /* 3. the e-mail's form */
    const char *bad[] = {"sin-arroba",      "a@b",
                         "@test.example",   "a b@test.example",
                         "a@@test.example", "a@test..example",
                         "a@.test.example", "a@test.example."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *b = creds(bad[i], "secreto-ok");
        expect_post(up, b, 400, "Email inválido");
        free(b);
    }
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users);
    /* 4. an e-mail already registered (short password still wins) */
    char email[128];
    unique_email(email, sizeof email, "dup");
    struct resp r;
    signup_raw(email, "secreto-dup", NULL, NULL, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    char *b = creds(email, "otra-clave");
    expect_post(up, b, 409, "El email ya está registrado");
    free(b);
    b = creds(email, "abc");
    expect_post(up, b, 400, "Mínimo 6 caracteres");
    free(b);
    /* the same address with another case and surrounding white space */
    char variant[160];
    snprintf(variant, sizeof variant, "  %s\t", email);
    for (char *p = variant; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    b = creds(variant, "otra-clave");
    expect_post(up, b, 409, "El email ya está registrado");
    free(b);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users + 1);
    /* bodies that are not JSON objects, and wrongly typed fields */
    expect_post(up, "nope", 400, "JSON inválido");
    expect_post(up, "[]", 400, "JSON inválido");
    expect_post(up, "", 400, "JSON inválido");
    expect_post(up, "{\"email\":5,\"password\":\"secreto1\"}", 400, "Campo inválido: email");
    expect_post(up, "{\"email\":\"z@test.example\",\"password\":123456}", 400,
                "Campo inválido: password");
}

static void emails_are_trimmed_and_lowercased(void **state)
{
    (void)state;
    char email[128], mixed[160];
    unique_email(email, sizeof email, "mixto");
    snprintf(mixed, sizeof mixed, " \t%s  ", email);
    for (char *p = mixed; *p; p++)
        if (*p >= 'a' && *p <= 'm') *p = (char)(*p - 'a' + 'A');
    struct resp r;
    signup_raw(mixed, "secreto-mixto", NULL, NULL, &r);
    expect_session_answer(&r, 201, email);
    const char *id = jstr(json_object_get(r.json, "user"), "id");
    char *stored = db_query(&S, "SELECT email FROM auth_users WHERE id = '%s'", id);
    assert_string_equal(stored, email);
    free(stored);
    resp_free(&r);
    /* login compares case-insensitively and answers the stored form */
    char *b = creds(mixed, "secreto-mixto");
    post_json("/api/auth/login", NULL, b, &r);
    free(b);
    expect_session_answer(&r, 200, email);
    resp_free(&r);
}

/* --- login ---------------------------------------------------------------------------------- */

/* Whether the header block holds exactly the line want. */
static bool has_line(const char *headers, const char *want)
{
    size_t n = strlen(want);
    for (const char *p = headers; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncasecmp(p, want, n) && (p[n] == '\r' || p[n] == '\n')) return true;
    return false;
}

static size_t count_set_cookies(const char *headers)
{
    size_t k = 0;
    for (const char *p = headers; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        k += !strncasecmp(p, "Set-Cookie:", 11);
    return k;
}

/* A page of another origin of the site (another port, a sibling subdomain)
 * that sets a cookie of our name with a longer path or a domain makes the
 * browser send two values: the request is answered signed-out (neither is
 * believed), and with the deletion of every copy that may have come with
 * it but ours (host-only, Path=/), so that her next request is hers again. */
static void a_shadowing_cookie_is_answered_with_its_deletion(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Sombra");
    char two[320];
    snprintf(two, sizeof two, "barberia_session=x; barberia_session=%s", u.token);
    const char *dotted[] = {"Host: citas.barberia.example:8080", NULL};
    struct req_opts o = {.cookie = two, .headers = dotted};
    struct resp r;
    http_req(&S, "GET", "/api/auth/me", &o, &r);
    assert_int_equal(r.status, 401);
    static const char *const gone[] = {
        /* a longer path's, host-only */
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/auth",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/auth/",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/auth/me",
        /* a domain's: the host's own, named (another port's page), and a
         * parent's (a sibling subdomain's), at any of those paths */
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api; Domain=citas.barberia.example",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/; Domain=barberia.example",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/auth/me; Domain=barberia.example",
        "Set-Cookie: barberia_session=; Max-Age=0; Path=/; Domain=example",
    };
    for (size_t i = 0; i < ARRAY_LEN(gone); i++) {
        if (!has_line(r.headers, gone[i])) fail_msg("missing: %s\n%s", gone[i], r.headers);
    }
    /* never ours: host-only at Path=/ */
    assert_false(has_line(r.headers, "Set-Cookie: barberia_session=; Max-Age=0; Path=/"));
    /* nor the host's own name at Path=/: a browser takes Domain=<host>
     * for a host-only cookie where the host is a public suffix */
    assert_false(has_line(r.headers, "Set-Cookie: barberia_session=; Max-Age=0; Path=/; "
                                     "Domain=citas.barberia.example"));
    assert_int_equal(count_set_cookies(r.headers), 5 + 5 + 2 * 6);
    resp_free(&r);

    /* an address, or a single-label name, has no domain of its own to
     * delete: a browser would take Domain=localhost at Path=/ for ours */
    const char *single[] = {"Host: localhost:8080", NULL};
    o.headers = single;
    http_req(&S, "GET", "/api/citas", &o, &r);
    assert_int_equal(r.status, 401);
    assert_true(has_line(r.headers, "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/citas; "
                                    "Domain=localhost"));
    assert_false(has_line(r.headers, "Set-Cookie: barberia_session=; Max-Age=0; Path=/; "
                                     "Domain=localhost"));
    assert_int_equal(count_set_cookies(r.headers), 3 + 3);
    resp_free(&r);
    o.headers = NULL; /* the harness's Host: 127.0.0.1 */
    http_req(&S, "GET", "/api/citas", &o, &r);
    assert_int_equal(r.status, 401);
    assert_false(strstr(r.headers, "Domain="));
    assert_int_equal(count_set_cookies(r.headers), 3);
    resp_free(&r);

    /* one value, or the same twice: nothing to delete */
    snprintf(two, sizeof two, "barberia_session=%s; barberia_session=%s", u.token, u.token);
    o.headers = dotted;
    http_req(&S, "GET", "/api/auth/me", &o, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(count_set_cookies(r.headers), 0);
    resp_free(&r);
    /* a path with what a header may not carry, or deeper than four
     * segments, is deleted as far as it can be said */
    snprintf(two, sizeof two, "barberia_session=x; barberia_session=%s", u.token);
    http_req(&S, "GET", "/api/admin/citas/x/mensajes", &o, &r);
    assert_int_equal(r.status, 403); /* the administration's answer to no one */
    assert_true(has_line(r.headers,
                         "Set-Cookie: barberia_session=; Max-Age=0; Path=/api/admin/citas/x/; "
                         "Domain=barberia.example"));
    assert_false(strstr(r.headers, "Path=/api/admin/citas/x/mensajes"));
    resp_free(&r);
    http_req(&S, "GET", "/api/citas/x%0d%0aX:%20y/huecos", &o, &r);
    assert_int_equal(r.status, 401);
    assert_int_equal(count_set_cookies(r.headers), 2); /* the parents' at Path=/ */
    resp_free(&r);
}

static void login_is_200_and_bearer_and_cookie_both_work(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Entrada");
    char *b = creds(u.email, u.password);
    struct resp r;
    post_json("/api/auth/login", NULL, b, &r);
    free(b);
    expect_session_answer(&r, 200, u.email);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), u.id);
    char tok[64];
    snprintf(tok, sizeof tok, "%s", jstr(r.json, "token"));
    assert_string_not_equal(tok, u.token); /* a new session */
    resp_free(&r);

    /* as a Bearer header */
    http_get(&S, "/api/auth/me", tok, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), u.id);
    resp_free(&r);
    /* as the cookie (alone, and among others) */
    char cookie[160];
    snprintf(cookie, sizeof cookie, "barberia_session=%s", tok);
    struct req_opts o = {.cookie = cookie};
    http_req(&S, "GET", "/api/auth/me", &o, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "email"), u.email);
    resp_free(&r);
    /* a cookie's name is matched exactly */
    snprintf(cookie, sizeof cookie, "Barberia_Session=%s", tok);
    assert_int_equal(status_of("GET", "/api/auth/me", &o), 401);
    snprintf(cookie, sizeof cookie, "theme=dark; barberia_session=%s; lang=es", tok);
    assert_int_equal(status_of("GET", "/api/auth/me", &o), 200);
    /* sent twice with two values (one set elsewhere to shadow ours, a
     * parent domain's or a longer path's): neither is believed, in either
     * order; twice the same is one */
    char other[320];
    snprintf(other, sizeof other, "barberia_session=%s; barberia_session=%s", tok,
             "0000000000000000000000000000000000000000000");
    struct req_opts two = {.cookie = other};
    assert_int_equal(status_of("GET", "/api/auth/me", &two), 401);
    snprintf(other, sizeof other, "barberia_session=%s; barberia_session=%s",
             "0000000000000000000000000000000000000000000", tok);
    assert_int_equal(status_of("GET", "/api/auth/me", &two), 401);
    snprintf(other, sizeof other, "barberia_session=%s; barberia_session=%s", tok, tok);
    assert_int_equal(status_of("GET", "/api/auth/me", &two), 200);
    snprintf(other, sizeof other, "barberia_session=; barberia_session=%s", tok);
    assert_int_equal(status_of("GET", "/api/auth/me", &two), 200);
    /* the same in Cookie fields of their own (HTTP/2 sends a field per
     * cookie; a proxy may pass them on so): every field is read */
    char ours[320], theirs[320];
    snprintf(ours, sizeof ours, "Cookie: barberia_session=%s", tok);
    snprintf(theirs, sizeof theirs, "Cookie: barberia_session=%s",
             "0000000000000000000000000000000000000000000");
    const char *fields[][3] = {{ours, theirs, NULL}, {theirs, ours, NULL}};
    for (size_t i = 0; i < 2; i++) {
        struct req_opts f = {.headers = fields[i]};
        assert_int_equal(status_of("GET", "/api/auth/me", &f), 401);
    }
    const char *after_another[] = {"Cookie: theme=dark", ours, NULL};
    struct req_opts f = {.headers = after_another};
    assert_int_equal(status_of("GET", "/api/auth/me", &f), 200);
    /* a value in double quotes is the value without them */
    char quoted[320];
    snprintf(quoted, sizeof quoted, "Cookie: lang=es; barberia_session=\"%s\"", tok);
    const char *twice_quoted[] = {ours, quoted, NULL};
    f.headers = twice_quoted;
    assert_int_equal(status_of("GET", "/api/auth/me", &f), 200);
    /* the cookie works on the appointment endpoints too */
    assert_int_equal(status_of("GET", "/api/citas", &o), 200);
    char *barb = make_barbero(&S, "Barbero Cookie");
    char *serv = make_servicio(&S, "Corte Cookie", 30, 10);
    char body[256];
    snprintf(
        body, sizeof body,
        "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"2031-01-01T10:00:00Z\"}",
        barb, serv);
    struct req_opts p = {.cookie = cookie, .body = body};
    http_req(&S, "POST", "/api/citas", &p, &r);
    assert_int_equal(r.status, 201);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "cliente_id"), u.id);
    resp_free(&r);
    http_req(&S, "GET", "/api/citas", &o, &r);
    assert_int_equal(json_array_size(json_object_get(r.json, "citas")), 1);
    resp_free(&r);
    free(barb);
    free(serv);
}

static void login_failures_are_identical_for_unknown_email_and_wrong_password(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Fallos");
    const char *in = "/api/auth/login";
    expect_post(in, "{}", 400, "Faltan campos requeridos");
    char *b = creds(u.email, NULL);
    expect_post(in, b, 400, "Faltan campos requeridos");
    free(b);
    b = creds(NULL, u.password);
    expect_post(in, b, 400, "Faltan campos requeridos");
    free(b);
    b = creds("", u.password);
    expect_post(in, b, 400, "Faltan campos requeridos");
    free(b);
    b = creds(u.email, "");
    expect_post(in, b, 400, "Faltan campos requeridos");
    free(b);
    expect_post(in, "not json", 400, "JSON inválido");

    char unknown[128];
    unique_email(unknown, sizeof unknown, "nadie");
    struct resp wrong, missing, malformed;
    b = creds(u.email, "clave-incorrecta");
    post_json(in, NULL, b, &wrong);
    free(b);
    b = creds(unknown, u.password);
    post_json(in, NULL, b, &missing);
    free(b);
    b = creds("no-es-un-email", u.password);
    post_json(in, NULL, b, &malformed);
    free(b);
    expect_error(&wrong, 401, "Credenciales inválidas");
    expect_error(&missing, 401, "Credenciales inválidas");
    expect_error(&malformed, 401, "Credenciales inválidas");
    assert_string_equal(wrong.body, missing.body);
    assert_string_equal(wrong.body, malformed.body);
    char c1[256], c2[256];
    assert_null(resp_header(&wrong, "Set-Cookie", c1, sizeof c1));
    assert_null(resp_header(&missing, "Set-Cookie", c2, sizeof c2));
    resp_free(&wrong);
    resp_free(&missing);
    resp_free(&malformed);
    /* a wrong password in another case is still wrong */
    char upper[64];
    snprintf(upper, sizeof upper, "%s", u.password);
    for (char *p = upper; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    assert_int_equal(login(u.email, upper, NULL), 401);
    assert_int_equal(login(u.email, u.password, NULL), 200);
}

/* --- logout and me ------------------------------------------------------------------------ */

static void logout_ends_only_the_session_it_was_called_with(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Salida");
    char second[64];
    assert_int_equal(login(u.email, u.password, second), 200);
    struct resp r;
    post_json("/api/auth/logout", u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"ok\":true}");
    char cookie[256];
    assert_non_null(resp_header(&r, "Set-Cookie", cookie, sizeof cookie));
    assert_true(!strncmp(cookie, "barberia_session=;", 18));
    assert_non_null(strstr(cookie, "Max-Age=0"));
    resp_free(&r);
    assert_int_equal(me_status(u.token), 401);
    struct req_opts o = {.token = u.token};
    assert_int_equal(status_of("GET", "/api/citas", &o), 401);
    /* the other session of the same user keeps working */
    assert_int_equal(me_status(second), 200);
    /* logging out twice: the session is gone */
    post_json("/api/auth/logout", u.token, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    /* logout through the cookie */
    char c[128];
    snprintf(c, sizeof c, "barberia_session=%s", second);
    struct req_opts oc = {.cookie = c};
    assert_int_equal(status_of("POST", "/api/auth/logout", &oc), 200);
    assert_int_equal(me_status(second), 401);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_sessions WHERE user_id = '%s'", u.id),
                     0);
    /* without a session */
    post_json("/api/auth/logout", NULL, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    post_json("/api/auth/logout", "garbage", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
}

static void me_is_401_without_session_and_perfil_null_without_profile(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/auth/me", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_get(&S, "/api/auth/me", "garbage", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    struct user u;
    signup_user(&S, &u, "Sin Perfil");
    char *out = db_query(&S, "DELETE FROM perfiles WHERE id = '%s'; SELECT changes();", u.id);
    assert_string_equal(out, "1");
    free(out);
    http_get(&S, "/api/auth/me", u.token, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "user", "perfil", NULL);
    assert_string_equal(jstr(json_object_get(r.json, "user"), "id"), u.id);
    assert_true(json_is_null(json_object_get(r.json, "perfil")));
    resp_free(&r);
}

/* --- secrets at rest and in the log --------------------------------------------------------- */

/* True when needle occurs in any file of the data folder (the database, its
 * WAL, the object store's files). */
static bool data_holds(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            found = data_holds(path, needle);
        } else if (S_ISREG(st.st_mode)) {
            size_t n = 0;
            char *bytes = read_file(path, &n);
            if (bytes) found = memmem(bytes, n, needle, strlen(needle)) != NULL;
            free(bytes);
        }
    }
    closedir(d);
    return found;
}

static void tokens_are_256_bit_and_only_their_hash_is_stored(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Secretos");
    char t2[64], t3[64];
    assert_int_equal(login(u.email, u.password, t2), 200);
    assert_int_equal(login(u.email, u.password, t3), 200);
    const char *toks[] = {u.token, t2, t3};
    for (int i = 0; i < 3; i++)
        assert_true(token_shaped(toks[i]));
    assert_string_not_equal(u.token, t2);
    assert_string_not_equal(t2, t3);
    assert_string_not_equal(u.token, t3);
    /* three sessions, each stored as a 64-hex-digit hash */
    assert_int_equal(db_count(&S,
                              test_pg() ? "SELECT count(*) FROM auth_sessions WHERE user_id = "
                                          "'%s' AND token_hash ~ '^[0-9a-f]{64}$'"
                                        : "SELECT count(*) FROM auth_sessions WHERE user_id = "
                                          "'%s' AND length(token_hash) = 64 AND token_hash NOT "
                                          "GLOB '*[^0-9a-f]*'",
                              u.id),
                     3);
    /* the database file and its WAL, scanned as they are (on PostgreSQL a
     * dump of the whole database, put into the data folder) */
    if (test_pg()) {
        char dump[400];
        snprintf(dump, sizeof dump, "%s/dump.sql", S.data);
        const char *argv[] = {"/usr/bin/pg_dump", "-d", S.dburl, "-f", dump, NULL};
        char *out = NULL, *err = NULL;
        if (run_program(argv, NULL, 60000, &out, &err) != 0) fail_msg("pg_dump: %s", err);
        free(out);
        free(err);
    }
    assert_true(data_holds(S.data, u.email)); /* the scan does see stored text */
    for (int i = 0; i < 3; i++)
        if (data_holds(S.data, toks[i])) fail_msg("token %d found in the data folder", i);
    /* the password only as Argon2id */
    if (data_holds(S.data, u.password)) fail_msg("the password is stored in the clear");
    char *hash = db_query(&S, "SELECT password_hash FROM auth_users WHERE id = '%s'", u.id);
    assert_true(!strncmp(hash, "$argon2id$", 10));
    free(hash);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users WHERE password_hash NOT LIKE "
                                  "'$argon2id$%%'"),
                     0);
}

static void access_log_never_holds_a_token_or_a_password(void **state)
{
    (void)state;
    char email[128];
    unique_email(email, sizeof email, "log");
    const char *pw = "Clave-Muy-Secreta-77";
    struct resp r;
    signup_raw(email, pw, "Log", NULL, &r);
    assert_int_equal(r.status, 201);
    char t1[64];
    snprintf(t1, sizeof t1, "%s", jstr(r.json, "token"));
    resp_free(&r);
    char t2[64];
    assert_int_equal(login(email, pw, t2), 200);
    assert_int_equal(login(email, "Otra-Clave-Erronea-88", NULL), 401);
    assert_int_equal(me_status(t1), 200);
    char cookie[160];
    snprintf(cookie, sizeof cookie, "barberia_session=%s", t2);
    struct req_opts o = {.cookie = cookie};
    assert_int_equal(status_of("GET", "/api/citas", &o), 200);
    /* even when a client puts the token where it does not belong */
    char path[160];
    snprintf(path, sizeof path, "/api/citas?token=%s", t2);
    struct req_opts oq = {.token = t1};
    assert_int_equal(status_of("GET", path, &oq), 200);
    struct req_opts ob = {.token = t1, .body = "{\"x\":1}"};
    assert_int_equal(status_of("POST", "/api/auth/logout", &ob), 200);
    assert_true(srv_wait_log(&S, "POST /api/auth/logout 200", 10000));
    char *log = srv_log(&S);
    assert_non_null(strstr(log, "POST /api/auth/login 401"));
    if (strstr(log, t1) || strstr(log, t2)) fail_msg("a token is in the log:\n%s", log);
    if (strstr(log, pw) || strstr(log, "Otra-Clave-Erronea-88"))
        fail_msg("a password is in the log:\n%s", log);
    free(log);
}

/* --- https ------------------------------------------------------------------------------ */

/* The scheme in any case: a URL's scheme is case-insensitive, and the
 * service takes "HTTPS://" for https everywhere else. */
static void cookie_is_secure_when_the_public_url_is_https(void **state)
{
    (void)state;
    const char *urls[] = {"BARBERIA_PUBLIC_URL=https://barberia.example",
                          "BARBERIA_PUBLIC_URL=HTTPS://barberia.example"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        struct srv s2;
        memset(&s2, 0, sizeof s2);
        const char *env[] = {urls[i], NULL};
        srv_start(&s2, env, NULL);
        struct resp r;
        http_json(&s2, "POST", "/api/auth/signup", NULL,
                  "{\"email\":\"seguro@test.example\",\"password\":\"secreto-seguro\"}", &r);
        assert_int_equal(r.status, 201);
        char cookie[512];
        assert_non_null(resp_header(&r, "Set-Cookie", cookie, sizeof cookie));
        assert_non_null(strstr(cookie, "; HttpOnly"));
        if (!strstr(cookie, "; Secure")) fail_msg("%s: %s", urls[i], cookie);
        resp_free(&r);
        srv_cleanup(&s2);
    }
}

/* Sign-ins with the right password racing its change: whichever session
 * they opened, the change ends it (none is made once the password they
 * checked is no longer hers). */
#define RACE_LOGINS 40
struct racer {
    const struct user *u;
    bool changer;
    long status;
    char tokens[RACE_LOGINS][64];
    int n;
};

static void race_one(void *item)
{
    struct racer *x = item;
    if (x->changer) {
        sleep_ms(150);
        char body[200];
        snprintf(body, sizeof body, "{\"password\":\"otra-clave-9\",\"password_actual\":\"%s\"}",
                 x->u->password);
        struct resp r;
        http_json(&S, "PATCH", "/api/auth/me", x->u->token, body, &r);
        x->status = r.status;
        resp_free(&r);
        return;
    }
    for (int i = 0; i < RACE_LOGINS; i++) {
        char t[64];
        long st = login(x->u->email, x->u->password, t);
        if (st == 200) snprintf(x->tokens[x->n++], 64, "%s", t);
        if (st != 200 && st != 401 && st != 429) fail_msg("login: %ld", st);
    }
}

static void sign_ins_racing_a_password_change_keep_no_session(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Gala Ruiz");
    static struct racer xs[5];
    memset(xs, 0, sizeof xs);
    for (size_t i = 0; i < ARRAY_LEN(xs); i++)
        xs[i] = (struct racer){.u = &u, .changer = i == 0};
    race_threads(ARRAY_LEN(xs), race_one, xs, sizeof xs[0]);
    assert_int_equal(xs[0].status, 200);
    int opened = 0;
    for (size_t i = 1; i < ARRAY_LEN(xs); i++)
        for (int k = 0; k < xs[i].n; k++, opened++)
            if (me_status(xs[i].tokens[k]) != 401)
                fail_msg("a session opened with the old password outlived its change");
    assert_true(opened > 0);                   /* some did sign in before the change */
    assert_int_equal(me_status(u.token), 200); /* the one that changed it stays */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(catalog_lists_need_no_session_and_are_ordered_by_nombre),
        cmocka_unit_test(signup_is_201_with_user_token_and_session_cookie),
        cmocka_unit_test(signup_creates_a_cliente_profile_shown_by_me),
        cmocka_unit_test(signup_errors_come_in_the_contract_order),
        cmocka_unit_test(emails_are_trimmed_and_lowercased),
        cmocka_unit_test(login_is_200_and_bearer_and_cookie_both_work),
        cmocka_unit_test(a_shadowing_cookie_is_answered_with_its_deletion),
        cmocka_unit_test(login_failures_are_identical_for_unknown_email_and_wrong_password),
        cmocka_unit_test(logout_ends_only_the_session_it_was_called_with),
        cmocka_unit_test(me_is_401_without_session_and_perfil_null_without_profile),
        cmocka_unit_test(tokens_are_256_bit_and_only_their_hash_is_stored),
        cmocka_unit_test(access_log_never_holds_a_token_or_a_password),
        cmocka_unit_test(cookie_is_secure_when_the_public_url_is_https),
        cmocka_unit_test(sign_ins_racing_a_password_change_keep_no_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
