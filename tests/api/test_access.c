/*
 * test_access.c - access control proven, table-driven: every endpoint of
 * the specification and the contract x every kind of caller (no session,
 * an expired session, a logged-out session, a client, another client, a
 * barber, an administrator), with the session carried as a Bearer header
 * and as the `barberia_session` cookie, against the specification's rules:
 * 401 `No autenticado`, 403 `Sin permisos` on the admin endpoints, the
 * photo deletion limited to its uploader (404 `Foto no encontrada` for
 * anyone else), the citas listing widened for barbers and administrators
 * only; the security headers on every answer; and uploaded SVG or HTML
 * that cannot run script in the service's origin.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct srv S;

/* --- the callers ------------------------------------------------------------------- */

enum who { NOBODY, EXPIRED, LOGGED_OUT, CLIENT, OTHER, BARBERO, ADMIN, NCALLERS };

static const char *const who_name[] = {"no session", "expired session", "logged-out session",
                                       "client",     "another client",  "barbero",
                                       "admin"};

static struct user users[NCALLERS]; /* NOBODY unused */
static char *barbero_id, *servicio_id;
static char *cita_client, *cita_other; /* booked by CLIENT and OTHER */
static char object_path[512];          /* a photo of CLIENT's, its URL's path */
static int counter;                    /* makes every created thing unique */

static bool valid(enum who w)
{
    return w >= CLIENT;
}

static const struct user *caller_user(enum who w)
{
    return w == NOBODY ? NULL : &users[w];
}

static const char *url_path(const char *url)
{
    size_t bl = strlen(S.base);
    if (!url || strncmp(url, S.base, bl) != 0) fail_msg("URL %s is not under %s", url, S.base);
    return url + bl;
}

/* A multipart body with a PNG file part, cita_id and tipo. Caller frees. */
static char *photo_form(const char *cita, const char *tipo, const char *filename, const char *type,
                        const char *bytes, size_t *len)
{
    char *b = NULL;
    int n = asprintf(&b,
                     "--XbOuNdArY\r\n"
                     "Content-Disposition: form-data; name=\"file\"; filename=\"%s\"\r\n"
                     "Content-Type: %s\r\n\r\n%s\r\n"
                     "--XbOuNdArY\r\n"
                     "Content-Disposition: form-data; name=\"cita_id\"\r\n\r\n%s\r\n"
                     "--XbOuNdArY\r\n"
                     "Content-Disposition: form-data; name=\"tipo\"\r\n\r\n%s\r\n"
                     "--XbOuNdArY--\r\n",
                     filename, type, bytes, cita, tipo);
    assert_true(n > 0);
    *len = (size_t)n;
    return b;
}

#define FORM_TYPE "multipart/form-data; boundary=XbOuNdArY"

/* Uploads a photo as u (Bearer); returns the answer's photo (caller
 * decrefs). */
static json_t *upload(const struct user *u, const char *cita, const char *filename,
                      const char *type, const char *bytes)
{
    char tipo[32];
    snprintf(tipo, sizeof tipo, "t%d", ++counter);
    size_t len;
    char *body = photo_form(cita, tipo, filename, type, bytes, &len);
    struct req_opts o = {.token = u->token, .content_type = FORM_TYPE, .body = body, .len = len};
    struct resp r;
    http_req(&S, "POST", "/api/fotos", &o, &r);
    free(body);
    if (r.status != 201) fail_msg("upload: %ld %s", r.status, r.body);
    json_t *f = json_incref(json_object_get(r.json, "foto"));
    resp_free(&r);
    return f;
}

static void login_again(struct user *u)
{
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", u->email, u->password);
    struct resp r;
    http_json(&S, "POST", "/api/auth/login", NULL, body, &r);
    if (r.status != 200) fail_msg("login: %ld %s", r.status, r.body);
    snprintf(u->token, sizeof u->token, "%s", jstr(r.json, "token"));
    resp_free(&r);
}

static int setup(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    signup_user(&S, &users[CLIENT], "Cliente");
    signup_user(&S, &users[OTHER], "Otra");
    make_user(&S, &users[BARBERO], "Barbero", "barbero");
    make_user(&S, &users[ADMIN], "Admin", "admin");
    signup_user(&S, &users[EXPIRED], "Caducada");
    signup_user(&S, &users[LOGGED_OUT], "Salida");
    /* the expired session: its expiry moved into the past */
    char *out = NULL;
    char sql[256];
    snprintf(
        sql, sizeof sql,
        "UPDATE auth_sessions SET expires_at = '2001-01-01T00:00:00.000Z' WHERE user_id = '%s'",
        users[EXPIRED].id);
    assert_int_equal(db_exec(&S, sql, &out), 0);
    free(out);
    struct resp r;
    http_json(&S, "POST", "/api/auth/logout", users[LOGGED_OUT].token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);

    barbero_id = make_barbero(&S, "Carlos");
    servicio_id = make_servicio(&S, "Corte", 30, 15);
    cita_client = book(&S, &users[CLIENT], barbero_id, servicio_id, "2031-01-05T10:00:00Z", NULL);
    cita_other = book(&S, &users[OTHER], barbero_id, servicio_id, "2031-01-05T11:00:00Z", NULL);
    json_t *f = upload(&users[CLIENT], cita_client, "antes.png", "image/png", "\x89PNG bytes");
    snprintf(object_path, sizeof object_path, "%s", url_path(jstr(f, "url")));
    json_decref(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    free(barbero_id);
    free(servicio_id);
    free(cita_client);
    free(cita_other);
    return 0;
}

/* --- the endpoints ------------------------------------------------------------------ */

enum rule {
    PUBLIC, /* anyone */
    USER,   /* a valid session, else 401 No autenticado */
    ADMIN_, /* an administrator's session, else 403 Sin permisos */
    STAFF,  /* a barber's or an administrator's session: else 401 without a valid
             * one, 403 Sin permisos for a client */
};

/* One request as prepared for a caller: path, body. */
struct call {
    char path[600];
    char *body; /* owned; NULL: none */
    size_t len;
    const char *content_type;
    const char *token; /* the session to send; may differ from the caller's */
    char token_buf[64];
};

struct endpoint {
    const char *method;
    const char *path; /* as shown in failures */
    enum rule rule;
    long ok_status;
    /* Fills c for caller w (c->path, body, token preset to the caller's). */
    void (*prepare)(enum who w, struct call *c);
    /* Checks a successful answer further; may be NULL. */
    void (*check)(enum who w, const struct resp *r);
};

static void prep_path(struct call *c, const char *path)
{
    snprintf(c->path, sizeof c->path, "%s", path);
}

static void prep_citas_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/citas");
}

static bool lists_cita(const json_t *citas, const char *id)
{
    size_t i;
    json_t *e;
    json_array_foreach(citas, i, e) if (jstr(e, "id") && !strcmp(jstr(e, "id"), id)) return true;
    return false;
}

static void check_citas_get(enum who w, const struct resp *r)
{
    json_t *citas = json_object_get(r->json, "citas");
    assert_true(json_is_array(citas));
    if (w == BARBERO || w == ADMIN) {
        /* widened to every client's */
        assert_true(lists_cita(citas, cita_client));
        assert_true(lists_cita(citas, cita_other));
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(citas, i, e) assert_string_equal(jstr(e, "cliente_id"), users[w].id);
    assert_true(lists_cita(citas, w == CLIENT ? cita_client : cita_other));
}

static void prep_citas_post(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/citas");
    int k = ++counter;
    c->len = (size_t)asprintf(&c->body,
                              "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\","
                              "\"fecha_inicio\":\"2032-02-%02dT%02d:00:00Z\"}",
                              barbero_id, servicio_id, 1 + k / 20, k % 20);
}

static void check_citas_post(enum who w, const struct resp *r)
{
    json_t *cita = json_object_get(r->json, "cita");
    assert_string_equal(jstr(cita, "cliente_id"), users[w].id);
}

static void prep_fotos_get(enum who w, struct call *c)
{
    (void)w;
    snprintf(c->path, sizeof c->path, "/api/fotos?cita_id=%s", cita_client);
}

static void check_fotos_get(enum who w, const struct resp *r)
{
    (void)w; /* any caller lists any appointment's photos: no ownership check */
    assert_true(json_array_size(json_object_get(r->json, "fotos")) >= 1);
}

static void prep_fotos_post(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/fotos");
    char tipo[32];
    snprintf(tipo, sizeof tipo, "t%d", ++counter);
    /* the caller need not own the appointment */
    c->body = photo_form(cita_client, tipo, "x.png", "image/png", "\x89PNG", &c->len);
    c->content_type = FORM_TYPE;
}

static void check_fotos_post(enum who w, const struct resp *r)
{
    json_t *f = json_object_get(r->json, "foto");
    assert_string_equal(jstr(f, "cliente_id"), users[w].id);
}

/* Each row deletes a fresh photo of CLIENT's. */
static void prep_fotos_delete(enum who w, struct call *c)
{
    (void)w;
    json_t *f = upload(&users[CLIENT], cita_other, "y.png", "image/png", "\x89PNG");
    snprintf(c->path, sizeof c->path, "/api/fotos?id=%s", jstr(f, "id"));
    json_decref(f);
}

static void prep_usuarios_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/admin/usuarios");
}

static void prep_usuarios_patch(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/admin/usuarios");
    c->len = (size_t)asprintf(&c->body, "{\"userId\":\"%s\",\"nombre\":\"Otra %d\"}",
                              users[OTHER].id, ++counter);
}

static void prep_informes_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/admin/informes?desde=2026-01-01&hasta=2026-01-31&agrupar=barbero");
}

static void prep_clientes_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/clientes?q=a");
}

static void prep_whatsapp_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/me/whatsapp");
}

/* The front desk's view of CLIENT's WhatsApp consent. */
static void prep_cliente_whatsapp_get(enum who w, struct call *c)
{
    (void)w;
    snprintf(c->path, sizeof c->path, "/api/clientes/%s/whatsapp", users[CLIENT].id);
}

static void prep_cliente_whatsapp_put(enum who w, struct call *c)
{
    prep_cliente_whatsapp_get(w, c);
    c->len = (size_t)asprintf(&c->body, "{\"acepta\":true,\"telefono\":\"600 111 222\"}");
}

static void prep_signup(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/signup");
    char email[128];
    unique_email(email, sizeof email, "acceso");
    c->len = (size_t)asprintf(&c->body, "{\"email\":\"%s\",\"password\":\"secreto-1\"}", email);
}

static void prep_login(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/login");
    c->len = (size_t)asprintf(&c->body, "{\"email\":\"%s\",\"password\":\"%s\"}",
                              users[OTHER].email, users[OTHER].password);
}

/* A valid caller logs out a session of their own made for the purpose, so
 * the table's sessions stay alive. */
static void prep_logout(enum who w, struct call *c)
{
    prep_path(c, "/api/auth/logout");
    if (valid(w)) {
        struct user u = users[w];
        login_again(&u);
        snprintf(c->token_buf, sizeof c->token_buf, "%s", u.token);
        c->token = c->token_buf;
    }
}

static void prep_me(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/me");
}

static void check_me(enum who w, const struct resp *r)
{
    assert_string_equal(jstr(json_object_get(r->json, "user"), "id"), users[w].id);
}

static void prep_recuperar(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/recuperar");
    char email[128];
    unique_email(email, sizeof email, "recupera");
    c->len = (size_t)asprintf(&c->body, "{\"email\":\"%s\"}", email);
}

static void prep_me_patch(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/me");
    c->len = (size_t)asprintf(&c->body, "{\"telefono\":\"600 111 222\"}");
}

static void prep_datos(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/me/datos");
}

/* her data is hers: the caller's own id, and nobody else's */
static void check_datos(enum who w, const struct resp *r)
{
    assert_string_equal(jstr(json_object_get(r->json, "user"), "id"), users[w].id);
    for (int o = 0; o < (int)(sizeof users / sizeof users[0]); o++)
        if (o != (int)w && users[o].id[0] && strcmp(users[o].id, users[w].id))
            assert_null(strstr(r->body, users[o].email));
}

static void prep_consent(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/auth/me/consentimientos");
}

static void prep_barberos(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/barberos");
}

static void prep_servicios(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/servicios");
}

static void prep_healthz(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/healthz");
}

static void prep_object(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, object_path);
}

static void prep_espera_get(enum who w, struct call *c)
{
    (void)w;
    prep_path(c, "/api/lista-espera");
}

static void check_espera_get(enum who w, const struct resp *r)
{
    (void)w; /* every caller's own list: empty here */
    assert_int_equal(json_array_size(json_object_get(r->json, "entradas")), 0);
}

static void check_object(enum who w, const struct resp *r)
{
    (void)w;
    if (r->len) assert_memory_equal(r->body, "\x89PNG bytes", r->len);
}

static const struct endpoint endpoints[] = {
    {"GET", "/api/citas", USER, 200, prep_citas_get, check_citas_get},
    {"POST", "/api/citas", USER, 201, prep_citas_post, check_citas_post},
    {"GET", "/api/fotos?cita_id=", USER, 200, prep_fotos_get, check_fotos_get},
    {"POST", "/api/fotos", USER, 201, prep_fotos_post, check_fotos_post},
    {"DELETE", "/api/fotos?id=", USER, 200, prep_fotos_delete, NULL},
    {"GET", "/api/admin/usuarios", ADMIN_, 200, prep_usuarios_get, NULL},
    {"PATCH", "/api/admin/usuarios", ADMIN_, 200, prep_usuarios_patch, NULL},
    {"GET", "/api/admin/informes", ADMIN_, 200, prep_informes_get, NULL},
    {"GET", "/api/clientes", STAFF, 200, prep_clientes_get, NULL},
    {"GET", "/api/auth/me/whatsapp", USER, 200, prep_whatsapp_get, NULL},
    {"GET", "/api/clientes/{id}/whatsapp", STAFF, 200, prep_cliente_whatsapp_get, NULL},
    {"PUT", "/api/clientes/{id}/whatsapp", STAFF, 200, prep_cliente_whatsapp_put, NULL},
    {"POST", "/api/auth/signup", PUBLIC, 201, prep_signup, NULL},
    {"POST", "/api/auth/login", PUBLIC, 200, prep_login, NULL},
    {"POST", "/api/auth/logout", USER, 200, prep_logout, NULL},
    {"GET", "/api/auth/me", USER, 200, prep_me, check_me},
    {"POST", "/api/auth/recuperar", PUBLIC, 200, prep_recuperar, NULL},
    {"PATCH", "/api/auth/me", USER, 200, prep_me_patch, NULL},
    {"GET", "/api/auth/me/datos", USER, 200, prep_datos, check_datos},
    {"GET", "/api/auth/me/consentimientos", USER, 200, prep_consent, NULL},
    {"GET", "/api/barberos", PUBLIC, 200, prep_barberos, NULL},
    {"GET", "/api/servicios", PUBLIC, 200, prep_servicios, NULL},
    {"GET", "/healthz", PUBLIC, 200, prep_healthz, NULL},
    {"GET", "/api/lista-espera", USER, 200, prep_espera_get, check_espera_get},
    {"GET", "/storage/v1/object/public/fotos-citas/...", PUBLIC, 200, prep_object, check_object},
    {"HEAD", "/storage/v1/object/public/fotos-citas/...", PUBLIC, 200, prep_object, NULL},
};

static bool is_object(const struct endpoint *e)
{
    return !strncmp(e->path, "/storage/", 9);
}

/* The catalog's answers may be kept and revalidated (ETag, no-cache). */
static bool is_catalog(const struct endpoint *e)
{
    return !strcmp(e->method, "GET") &&
           (!strcmp(e->path, "/api/barberos") || !strcmp(e->path, "/api/servicios"));
}

/* The security headers every answer carries: JSON answers the lead's
 * set (never stored, but the catalog's, revalidated by ETag), stored
 * objects their own (nosniff and a sandboxing CSP). */
static void expect_security_headers(const struct endpoint *e, const struct resp *r, const char *row)
{
    char buf[256];
    const char *v = resp_header(r, "X-Content-Type-Options", buf, sizeof buf);
    if (!v || strcmp(v, "nosniff"))
        fail_msg("%s: X-Content-Type-Options %s", row, v ? v : "absent");
    if (is_object(e) && r->status == 200) {
        v = resp_header(r, "Content-Security-Policy", buf, sizeof buf);
        if (!v || !strstr(v, "sandbox") || !strstr(v, "default-src 'none'") ||
            strstr(v, "allow-scripts"))
            fail_msg("%s: Content-Security-Policy %s", row, v ? v : "absent");
        return;
    }
    const char *const want[][2] = {
        {"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", is_catalog(e) && r->status == 200 ? "no-cache" : "no-store"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        v = resp_header(r, want[i][0], buf, sizeof buf);
        if (!v || strcmp(v, want[i][1]))
            fail_msg("%s: %s is %s, expected %s", row, want[i][0], v ? v : "absent", want[i][1]);
    }
}

/* Runs one row: endpoint e called by w, carrying the session in the header
 * or the cookie; checks the rule (and the headers when asked). */
static void run_row(const struct endpoint *e, enum who w, bool cookie, bool headers)
{
    struct call c = {0};
    const struct user *u = caller_user(w);
    c.token = u ? u->token : NULL;
    e->prepare(w, &c);
    char row[256];
    snprintf(row, sizeof row, "%s %s as %s (%s)", e->method, e->path, who_name[w],
             cookie ? "cookie" : "bearer");
    char cookie_line[128];
    struct req_opts o = {.body = c.body, .len = c.len, .content_type = c.content_type};
    if (cookie && c.token) {
        snprintf(cookie_line, sizeof cookie_line, "barberia_session=%s", c.token);
        o.cookie = cookie_line;
    } else {
        o.token = c.token;
    }
    struct resp r;
    http_req(&S, e->method, c.path, &o, &r);
    free(c.body);

    long want = e->ok_status;
    const char *msg = NULL;
    if ((e->rule == USER || e->rule == STAFF) && !valid(w)) {
        want = 401;
        msg = "No autenticado";
    } else if (e->rule == STAFF && (w == CLIENT || w == OTHER)) {
        want = 403;
        msg = "Sin permisos";
    } else if (e->rule == ADMIN_ && w != ADMIN) {
        want = 403;
        msg = "Sin permisos";
    } else if (!strcmp(e->method, "DELETE") && w != CLIENT) {
        want = 404; /* only the uploader deletes */
        msg = "Foto no encontrada";
    }
    if (r.status != want) fail_msg("%s: expected %ld, got %ld %s", row, want, r.status, r.body);
    if (msg) expect_error(&r, want, msg);
    if (!msg && e->check) e->check(w, &r);
    if (headers) expect_security_headers(e, &r, row);
    resp_free(&r);
}

static void run_table(bool cookie, bool headers)
{
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++)
        for (int w = 0; w < NCALLERS; w++)
            run_row(&endpoints[i], (enum who)w, cookie, headers);
}

static void every_endpoint_every_caller_bearer(void **state)
{
    (void)state;
    run_table(false, false);
}

static void every_endpoint_every_caller_cookie(void **state)
{
    (void)state;
    run_table(true, false);
}

/* Unknown paths and wrong methods are answered the same to everybody. */
static void unknown_paths_and_methods_whoever_asks(void **state)
{
    (void)state;
    for (int w = 0; w < NCALLERS; w++) {
        const struct user *u = caller_user(w);
        struct resp r;
        http_get(&S, "/api/nada", u ? u->token : NULL, &r);
        expect_error(&r, 404, "No encontrado");
        resp_free(&r);
        http_json(&S, "PUT", "/api/citas", u ? u->token : NULL, "{}", &r);
        expect_error(&r, 405, "Método no permitido");
        resp_free(&r);
    }
}

/* The security headers on every row of the table, errors included.
 * (The JSON set comes with the HTTP layer's rewrite.) */
static void security_headers_on_every_answer(void **state)
{
    (void)state;
    run_table(false, true);
    struct resp r;
    http_get(&S, "/api/nada", NULL, &r);
    expect_security_headers(&endpoints[0], &r, "GET /api/nada");
    resp_free(&r);
}

/* --- uploaded documents stay inert ------------------------------------------------ */

/* Fetches the photo f's URL and checks that it cannot run script in the
 * service's origin; attachment says whether it must come as a download. */
static void expect_inert(const json_t *f, const char *type, bool attachment)
{
    struct resp r;
    http_get(&S, url_path(jstr(f, "url")), NULL, &r);
    assert_int_equal(r.status, 200);
    char buf[256];
    const char *v = resp_header(&r, "Content-Type", buf, sizeof buf);
    assert_non_null(v);
    assert_true(!strncmp(v, type, strlen(type)));
    v = resp_header(&r, "X-Content-Type-Options", buf, sizeof buf);
    assert_non_null(v);
    assert_string_equal(v, "nosniff");
    v = resp_header(&r, "Content-Security-Policy", buf, sizeof buf);
    assert_non_null(v);
    assert_non_null(strstr(v, "default-src 'none'"));
    assert_non_null(strstr(v, "sandbox"));
    assert_null(strstr(v, "allow-scripts"));
    assert_null(strstr(v, "allow-same-origin"));
    v = resp_header(&r, "Content-Disposition", buf, sizeof buf);
    if (attachment) {
        if (!v || strncmp(v, "attachment", 10)) fail_msg("%s served inline", type);
    } else {
        assert_null(v);
    }
    resp_free(&r);
}

static void uploaded_svg_and_html_cannot_run_script(void **state)
{
    (void)state;
    const char *svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(document.cookie)"
                      "</script></svg>";
    const char *html = "<html><script>alert(document.cookie)</script></html>";
    json_t *f = upload(&users[CLIENT], cita_client, "dibujo.svg", "image/svg+xml", svg);
    expect_inert(f, "image/svg+xml", true);
    json_decref(f);
    /* a page named .html sent as an image stays that image type */
    f = upload(&users[CLIENT], cita_client, "pagina.html", "image/png", html);
    assert_non_null(strstr(jstr(f, "storage_path"), ".html"));
    expect_inert(f, "image/png", false);
    json_decref(f);
    /* an image/ type browsers do not simply show: a download */
    f = upload(&users[CLIENT], cita_client, "raro.xyz", "image/x-made-up", html);
    expect_inert(f, "image/x-made-up", true);
    json_decref(f);
    /* served with its canonical type, never the declared text */
    f = upload(&users[CLIENT], cita_client, "Foto.JPG", "IMAGE/JPEG", "\xff\xd8\xff");
    expect_inert(f, "image/jpeg", false);
    json_decref(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_endpoint_every_caller_bearer),
        cmocka_unit_test(every_endpoint_every_caller_cookie),
        cmocka_unit_test(unknown_paths_and_methods_whoever_asks),
        cmocka_unit_test(uploaded_svg_and_html_cannot_run_script),
        cmocka_unit_test(security_headers_on_every_answer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
