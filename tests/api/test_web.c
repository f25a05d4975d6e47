/*
 * test_web.c - the web app as served by `barberia serve`: the HTML shell at
 * "/" and at every page path (revalidated: no-cache + ETag, 304), its
 * assets under /app/ with hashed names (immutable, ETag, 304), a strict
 * Content-Security-Policy, nosniff, HEAD, 404 for an unknown asset, and the
 * API's answers unchanged.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

static struct srv S;

static const char *const pages[] = {
    "/",          "/entrar", "/registro", "/reservar",
    "/mis-citas", "/agenda", "/admin",    "/c/abcdefghijklmnopqrstuvwxyz0123456789"};

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

/* The policy's fixed parts (img-src also names where photos come from). */
static void expect_csp(const struct resp *r)
{
    char v[1024];
    assert_non_null(resp_header(r, "Content-Security-Policy", v, sizeof v));
    static const char *const parts[] = {
        "default-src 'self';",     "img-src 'self' data:", "style-src 'self';",
        "script-src 'self';",      "object-src 'none';",   "base-uri 'none';",
        "frame-ancestors 'none';", "form-action 'self'",
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        assert_non_null(strstr(v, parts[i]));
    assert_null(strstr(v, "unsafe"));
    expect_header(r, "X-Content-Type-Options", "nosniff");
}

/* The asset paths the shell names ("/app/..."), in order; NULL-terminated,
 * each malloc'd. */
static char **shell_assets(const char *html)
{
    char **out = calloc(64, sizeof *out);
    size_t n = 0;
    for (const char *p = html; (p = strstr(p, "\"/app/")) && n < 63; p++) {
        const char *end = strchr(p + 1, '"');
        assert_non_null(end);
        out[n++] = strndup(p + 1, (size_t)(end - p - 1));
    }
    return out;
}

static void free_list(char **l)
{
    for (char **p = l; *p; p++)
        free(*p);
    free(l);
}

static void every_page_path_serves_the_shell(void **state)
{
    (void)state;
    char etag0[64] = "";
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        struct resp r;
        http_get(&S, pages[i], NULL, &r);
        assert_int_equal(r.status, 200);
        expect_header(&r, "Content-Type", "text/html; charset=utf-8");
        expect_header(&r, "Cache-Control", "no-cache");
        expect_csp(&r);
        /* an appointment's page holds its key in the path: never a Referer */
        expect_header(&r, "Referrer-Policy",
                      strncmp(pages[i], "/c/", 3) ? "same-origin" : "no-referrer");
        assert_non_null(strstr(r.body, "<html lang=\"es\">"));
        assert_null(strstr(r.body, "<script>")); /* no inline script */
        assert_null(strstr(r.body, "style=\"")); /* no inline style */
        char etag[64];
        assert_non_null(resp_header(&r, "ETag", etag, sizeof etag));
        assert_int_equal(etag[0], '"');
        if (!etag0[0]) snprintf(etag0, sizeof etag0, "%s", etag);
        assert_string_equal(etag, etag0); /* one shell */
        resp_free(&r);
    }
    /* plain http here: no HSTS */
    struct resp r;
    char v[64];
    http_get(&S, "/", NULL, &r);
    assert_null(resp_header(&r, "Strict-Transport-Security", v, sizeof v));
    resp_free(&r);
}

/* Behind https (the public URL's scheme, in any case) every page tells the
 * browser to come back over https only (RFC 6797). */
static void behind_https_the_pages_ask_for_https_only(void **state)
{
    (void)state;
    const char *urls[] = {"BARBERIA_PUBLIC_URL=https://citas.example.com",
                          "BARBERIA_PUBLIC_URL=HTTPS://citas.example.com"};
    for (size_t u = 0; u < 2; u++) {
        struct srv s;
        memset(&s, 0, sizeof s);
        const char *env[] = {urls[u], NULL};
        srv_start(&s, env, NULL);
        for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
            struct resp r;
            http_get(&s, pages[i], NULL, &r);
            assert_int_equal(r.status, 200);
            expect_header(&r, "Strict-Transport-Security", "max-age=31536000");
            resp_free(&r);
        }
        srv_cleanup(&s);
    }
}

static void shell_is_revalidated_with_its_etag(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/", NULL, &r);
    char etag[64], hdr[96];
    assert_non_null(resp_header(&r, "ETag", etag, sizeof etag));
    resp_free(&r);
    snprintf(hdr, sizeof hdr, "If-None-Match: %s", etag);
    const char *const hs[] = {hdr, NULL};
    struct req_opts o = {.headers = hs};
    http_req(&S, "GET", "/mis-citas", &o, &r);
    assert_int_equal(r.status, 304);
    assert_int_equal(r.len, 0);
    expect_header(&r, "ETag", etag);
    expect_header(&r, "Cache-Control", "no-cache");
    resp_free(&r);
    /* another tag: the page again */
    const char *const other[] = {"If-None-Match: \"0000000000\"", NULL};
    o.headers = other;
    http_req(&S, "GET", "/", &o, &r);
    assert_int_equal(r.status, 200);
    assert_true(r.len > 0);
    resp_free(&r);
}

static void assets_are_hashed_immutable_and_typed(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/", NULL, &r);
    char **assets = shell_assets(r.body);
    resp_free(&r);
    assert_non_null(assets[0]);
    bool css = false, js = false;
    for (char **a = assets; *a; a++) {
        /* name.<10 hex digits>.ext */
        const char *dot = strrchr(*a, '.');
        assert_non_null(dot);
        const char *h = dot - 11;
        assert_true(h > *a && *h == '.');
        for (int i = 1; i <= 10; i++)
            assert_non_null(strchr("0123456789abcdef", h[i]));
        http_get(&S, *a, NULL, &r);
        assert_int_equal(r.status, 200);
        expect_header(&r, "Cache-Control", "public, max-age=31536000, immutable");
        expect_csp(&r);
        char ct[96], etag[64];
        assert_non_null(resp_header(&r, "Content-Type", ct, sizeof ct));
        if (!strcmp(dot, ".css")) {
            css = true;
            assert_string_equal(ct, "text/css; charset=utf-8");
        } else if (!strcmp(dot, ".js")) {
            js = true;
            assert_string_equal(ct, "text/javascript; charset=utf-8");
        }
        /* the tag is the hash of the name */
        assert_non_null(resp_header(&r, "ETag", etag, sizeof etag));
        assert_int_equal(strlen(etag), 12);
        assert_memory_equal(etag + 1, h + 1, 10);
        resp_free(&r);
        char hdr[96];
        snprintf(hdr, sizeof hdr, "If-None-Match: W/%s", etag);
        const char *const hs[] = {hdr, NULL};
        struct req_opts o = {.headers = hs};
        http_req(&S, "GET", *a, &o, &r);
        assert_int_equal(r.status, 304);
        assert_int_equal(r.len, 0);
        resp_free(&r);
    }
    assert_true(css && js);
    free_list(assets);
}

/* GET path with an Accept-Encoding header (NULL: none) and, when given, an
 * If-None-Match. */
static void get_encoded(const char *path, const char *accept, const char *inm, struct resp *r)
{
    char ae[160], im[120];
    const char *hs[3] = {NULL, NULL, NULL};
    size_t n = 0;
    if (accept) {
        snprintf(ae, sizeof ae, "Accept-Encoding: %s", accept);
        hs[n++] = ae;
    }
    if (inm) {
        snprintf(im, sizeof im, "If-None-Match: %s", inm);
        hs[n++] = im;
    }
    struct req_opts o = {.headers = hs};
    http_req(&S, "GET", path, &o, r);
}

/* The gzip member gz inflated: exactly the bytes want. */
static void expect_gunzip(const struct resp *gz, const struct resp *want)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    unsigned char *out = malloc(want->len + 1);
    z.next_in = (unsigned char *)gz->body;
    z.avail_in = (uInt)gz->len;
    z.next_out = out;
    z.avail_out = (uInt)want->len + 1;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.avail_in, 0);
    assert_int_equal(want->len + 1 - z.avail_out, want->len);
    assert_memory_equal(out, want->body, want->len);
    inflateEnd(&z);
    free(out);
}

static void files_go_gzip_compressed_to_a_browser_that_takes_it(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/", NULL, &r);
    char **files = shell_assets(r.body);
    resp_free(&r);
    assert_non_null(files[0]);
    /* the shell at a page path, then every file it names */
    const char *paths[64] = {"/reservar"};
    size_t np = 1;
    for (char **a = files; *a && np < 64; a++)
        paths[np++] = *a;
    size_t saved = 0, whole = 0;
    for (size_t i = 0; i < np; i++) {
        struct resp plain, gz;
        get_encoded(paths[i], NULL, NULL, &plain);
        assert_int_equal(plain.status, 200);
        char v[128], tag[64], gztag[64];
        assert_null(resp_header(&plain, "Content-Encoding", v, sizeof v));
        assert_non_null(resp_header(&plain, "ETag", tag, sizeof tag));
        /* what Chromium sends */
        get_encoded(paths[i], "gzip, deflate, br, zstd", NULL, &gz);
        assert_int_equal(gz.status, 200);
        if (!resp_header(&gz, "Content-Encoding", v, sizeof v)) { /* too small to gain */
            assert_true(plain.len < 256);
            resp_free(&plain);
            resp_free(&gz);
            continue;
        }
        assert_string_equal(v, "gzip");
        expect_header(&gz, "Vary", "Accept-Encoding");
        expect_header(&plain, "Vary", "Accept-Encoding");
        expect_csp(&gz);
        /* the same type, its own tag, fewer bytes, the same content */
        char ct[96], ct2[96];
        assert_string_equal(resp_header(&gz, "Content-Type", ct, sizeof ct),
                            resp_header(&plain, "Content-Type", ct2, sizeof ct2));
        assert_non_null(resp_header(&gz, "ETag", gztag, sizeof gztag));
        assert_string_not_equal(gztag, tag);
        assert_true(gz.len < plain.len);
        expect_gunzip(&gz, &plain);
        saved += plain.len - gz.len;
        whole += plain.len;
        /* revalidated by its own tag; the other tag is the other copy */
        struct resp again;
        get_encoded(paths[i], "gzip", gztag, &again);
        assert_int_equal(again.status, 304);
        assert_int_equal(again.len, 0);
        resp_free(&again);
        get_encoded(paths[i], "gzip", tag, &again);
        assert_int_equal(again.status, 200);
        assert_int_equal(again.len, gz.len);
        resp_free(&again);
        resp_free(&plain);
        resp_free(&gz);
    }
    assert_true(saved * 2 > whole); /* text: well under half */
    /* what the header says, by RFC 9110's rules: a weight of 0 refuses */
    static const struct {
        const char *accept;
        bool gzip;
    } cases[] = {
        {"gzip", true},
        {"GZIP;Q=0.8", true},
        {"x-gzip", true},
        {"*", true},
        {"*;q=0.5", true},
        {"br, *;q=0.1", true},
        {"gzip;q=0.001", true},
        {"identity", false},
        {"br", false},
        {"gzip;q=0", false},
        {"gzip; q=0.000, *", false},
        {"*;q=0", false},
        {"", false},
        {"deflate, gzipx", false},
        {"gzip;q=0.", false},
        /* a quoted parameter's comma or quote ends nothing */
        {"gzip;foo=\"a,b\";q=0", false},
        {"gzip;foo=\"a\\\",b\";q=0, br", false},
        {"br;foo=\"x,gzip\"", false},
        /* gzip named as itself outweighs its old name, in either order */
        {"x-gzip;q=0, gzip", true},
        {"gzip, x-gzip;q=0", true},
        {"x-gzip, gzip;q=0", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        get_encoded(paths[1], cases[i].accept, NULL, &r);
        assert_int_equal(r.status, 200);
        char v[32];
        bool gz = resp_header(&r, "Content-Encoding", v, sizeof v) != NULL;
        if (gz != cases[i].gzip) fail_msg("Accept-Encoding: %s: gzip %d", cases[i].accept, gz);
        resp_free(&r);
    }
    /* a list sent as several fields is one list (RFC 9110, 5.3) */
    static const struct {
        const char *fields[3];
        bool gzip;
    } split[] = {
        {{"Accept-Encoding: identity", "Accept-Encoding: gzip", NULL}, true},
        {{"Accept-Encoding: br", "Accept-Encoding: *", NULL}, true},
        {{"Accept-Encoding: gzip", "Accept-Encoding: gzip;q=0", NULL}, false},
    };
    for (size_t i = 0; i < sizeof split / sizeof split[0]; i++) {
        struct req_opts o = {.headers = split[i].fields};
        http_req(&S, "GET", paths[1], &o, &r);
        assert_int_equal(r.status, 200);
        char v[32];
        bool gz = resp_header(&r, "Content-Encoding", v, sizeof v) != NULL;
        if (gz != split[i].gzip)
            fail_msg("%s + %s: gzip %d", split[i].fields[0], split[i].fields[1], gz);
        resp_free(&r);
    }
    free_list(files);
}

static void modules_import_hashed_names_only(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/", NULL, &r);
    char **assets = shell_assets(r.body);
    resp_free(&r);
    for (char **a = assets; *a; a++) {
        if (!strstr(*a, ".js")) continue;
        http_get(&S, *a, NULL, &r);
        assert_int_equal(r.status, 200);
        /* every module it names ('./x.<hash>.js') is served */
        for (const char *p = r.body; (p = strstr(p, "'./")); p++) {
            const char *end = strchr(p + 1, '\'');
            assert_non_null(end);
            char path[160];
            snprintf(path, sizeof path, "/app/%.*s", (int)(end - p - 3), p + 3);
            struct resp m;
            http_get(&S, path, NULL, &m);
            assert_int_equal(m.status, 200);
            resp_free(&m);
        }
        resp_free(&r);
    }
    free_list(assets);
}

static void unknown_or_unhashed_asset_is_404_json(void **state)
{
    (void)state;
    static const char *const bad[] = {"/app/main.js", "/app/nada.0123456789.js", "/app/",
                                      "/app/../index.html", "/index.html"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct resp r;
        http_get(&S, bad[i], NULL, &r);
        expect_error(&r, 404, "No encontrado");
        resp_free(&r);
    }
}

static void head_answers_headers_without_body(void **state)
{
    (void)state;
    struct resp r, g;
    http_req(&S, "HEAD", "/reservar", NULL, &r);
    http_get(&S, "/reservar", NULL, &g);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    char a[64], b[64];
    assert_string_equal(resp_header(&r, "ETag", a, sizeof a), resp_header(&g, "ETag", b, sizeof b));
    assert_int_equal(strtol(resp_header(&r, "Content-Length", a, sizeof a), NULL, 10), (long)g.len);
    expect_header(&r, "Cache-Control", "no-cache");
    char **assets = shell_assets(g.body);
    resp_free(&r);
    resp_free(&g);
    http_req(&S, "HEAD", assets[0], NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    expect_header(&r, "Cache-Control", "public, max-age=31536000, immutable");
    resp_free(&r);
    free_list(assets);
}

/* The header lines of an answer, without Date (it moves), one per line,
 * sorted. Caller frees. */
static char *headers_but_date(const struct resp *r)
{
    char *copy = strdup(r->headers), *save = NULL;
    char *lines[64];
    size_t n = 0;
    for (char *l = strtok_r(copy, "\r\n", &save); l && n < 64; l = strtok_r(NULL, "\r\n", &save))
        if (strncasecmp(l, "Date:", 5) != 0) lines[n++] = l;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *t = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = t;
        }
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(lines[i]) + 1;
    char *out = calloc(1, len), *end = out;
    for (size_t i = 0; i < n; i++)
        end += snprintf(end, len - (size_t)(end - out), "%s\n", lines[i]);
    free(copy);
    return out;
}

/* HEAD on path (with the request's headers given, may be NULL) answers what
 * GET does, status and headers alike, without a body. */
static void expect_head_as_get(const char *path, const char *const *headers)
{
    struct req_opts o = {.headers = headers};
    struct resp h, g;
    http_req(&S, "HEAD", path, &o, &h);
    http_req(&S, "GET", path, &o, &g);
    assert_int_equal(h.status, g.status);
    assert_int_equal(h.len, 0);
    char *hh = headers_but_date(&h), *gh = headers_but_date(&g);
    if (strcmp(hh, gh) != 0) fail_msg("HEAD %s:\n%s\nGET:\n%s", path, hh, gh);
    free(hh);
    free(gh);
    resp_free(&h);
    resp_free(&g);
}

static void head_is_get_without_the_body_on_every_page_and_asset(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        expect_head_as_get(pages[i], NULL);
    struct resp g;
    http_get(&S, "/", NULL, &g);
    char etag[64], inm[96];
    assert_non_null(resp_header(&g, "ETag", etag, sizeof etag));
    snprintf(inm, sizeof inm, "If-None-Match: %s", etag);
    const char *const revalidate[] = {inm, NULL};
    expect_head_as_get("/agenda", revalidate); /* 304 alike */
    char **assets = shell_assets(g.body);
    resp_free(&g);
    for (char **a = assets; *a; a++)
        expect_head_as_get(*a, NULL);
    free_list(assets);
    expect_head_as_get("/app/no-such-asset.js", NULL); /* the 404 alike */
    expect_head_as_get("/storage/v1/object/public/fotos-citas/no/such.png", NULL);
}

/* HEAD is answered wherever GET is (RFC 9110 9.1: a general-purpose server
 * must support both): the pages, the assets, the stored objects and every
 * JSON endpoint that GET reads, with the same status and headers and no body,
 * for an answer, an error and a refused session alike; a path without GET has
 * no HEAD either (405 with the path's methods). */
static void head_is_get_without_the_body_on_json_endpoints_too(void **state)
{
    (void)state;
    struct user u;
    signup_user(&S, &u, "Cabeza");
    char auth[160];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", u.token);
    const char *const with_session[] = {auth, NULL};
    static const char *const paths[] = {"/api/servicios",
                                        "/api/barberos",
                                        "/healthz",
                                        "/api/citas",
                                        "/api/citas?estado=confirmada",
                                        "/api/fotos?cita_id=x",
                                        "/api/fotos",
                                        "/api/auth/me",
                                        "/api/admin/usuarios"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        expect_head_as_get(paths[i], NULL);
        expect_head_as_get(paths[i], with_session);
    }
    struct resp r;
    struct req_opts o = {.token = u.token};
    http_req(&S, "HEAD", "/api/citas", &o, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(r.len, 0);
    resp_free(&r);
    http_req(&S, "HEAD", "/api/citas", NULL, &r);
    assert_int_equal(r.status, 401);
    assert_int_equal(r.len, 0);
    resp_free(&r);
    http_json(&S, "PUT", "/api/servicios", NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    expect_header(&r, "Allow", "GET, HEAD");
    resp_free(&r);
    http_json(&S, "PUT", "/api/citas", NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    expect_header(&r, "Allow", "GET, HEAD, POST");
    resp_free(&r);
    http_req(&S, "HEAD", "/api/auth/login", NULL, &r);
    assert_int_equal(r.status, 405);
    expect_header(&r, "Allow", "POST");
    resp_free(&r);
    http_json(&S, "DELETE", "/app/x.js", NULL, NULL, &r);
    expect_error(&r, 405, "Método no permitido");
    expect_header(&r, "Allow", "GET, HEAD");
    resp_free(&r);
    http_json(&S, "PUT", "/storage/v1/object/public/fotos-citas/a/b.png", NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    expect_header(&r, "Allow", "GET, HEAD");
    resp_free(&r);
}

/* HEAD requests count under their own method in the metrics. */
static void head_requests_count_apart_in_the_metrics(void **state)
{
    (void)state;
    struct resp r;
    http_req(&S, "HEAD", "/registro", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&S, "/metrics", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body,
                           "barberia_http_requests_total{method=\"HEAD\",route=\"/registro\","
                           "status=\"200\"}"));
    resp_free(&r);
}

static void pages_take_only_get_and_head(void **state)
{
    (void)state;
    struct resp r;
    http_json(&S, "POST", "/reservar", NULL, "{}", &r);
    expect_error(&r, 405, "Método no permitido");
    expect_header(&r, "Allow", "GET, HEAD");
    resp_free(&r);
}

static void api_answers_keep_their_headers(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/servicios", NULL, &r);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
    expect_header(&r, "Content-Type", "application/json; charset=utf-8");
    expect_header(&r, "Cache-Control", "no-cache");
    resp_free(&r);
    http_get(&S, "/api/citas", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    expect_header(&r, "Cache-Control", "no-store");
    resp_free(&r);
    /* an unknown path is still the API's 404 */
    http_get(&S, "/reservar/otra", NULL, &r);
    expect_error(&r, 404, "No encontrado");
    resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_page_path_serves_the_shell),
        cmocka_unit_test(behind_https_the_pages_ask_for_https_only),
        cmocka_unit_test(shell_is_revalidated_with_its_etag),
        cmocka_unit_test(assets_are_hashed_immutable_and_typed),
        cmocka_unit_test(files_go_gzip_compressed_to_a_browser_that_takes_it),
        cmocka_unit_test(modules_import_hashed_names_only),
        cmocka_unit_test(unknown_or_unhashed_asset_is_404_json),
        cmocka_unit_test(head_answers_headers_without_body),
        cmocka_unit_test(head_is_get_without_the_body_on_every_page_and_asset),
        cmocka_unit_test(head_is_get_without_the_body_on_json_endpoints_too),
        cmocka_unit_test(head_requests_count_apart_in_the_metrics),
        cmocka_unit_test(pages_take_only_get_and_head),
        cmocka_unit_test(api_answers_keep_their_headers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
