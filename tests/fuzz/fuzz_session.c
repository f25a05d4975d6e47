/*
 * fuzz_session.c - query strings, the Cookie header and the Authorization
 * header through the real server (GET requests: api_request_token, the
 * session lookup, http_req_query and the handlers that read queries).
 *
 * The payload has three lines: the request-target (any bytes, encoded where
 * HTTP needs it; "DELETE " in front makes it a DELETE, for
 * /api/fotos?id=), the Authorization value, the Cookie value; a line that
 * is not there means no such header. @TOKEN@ is a client's live session
 * (no method that ends it is sent).
 * Properties:
 * - the answer is 200, 400, 401, 403, 404, 405, 429 or 503 - never a 500;
 * - GET /api/auth/me answers 200 with the client's id when Authorization
 *   is exactly "Bearer <token>", or when there is no Authorization and the
 *   Cookie is exactly "barberia_session=<token>"; 401 when there is
 *   neither header;
 * - GET /api/citas lists only the client's citas, and with one estado
 *   parameter only citas in that estado (the fixture's is "confirmada", so
 *   estado=confirmada lists it).
 */
#include "fz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether target names one of the web app's pages or assets, which answer
 * HTML, CSS or JavaScript rather than JSON (their own tests: test_web), or
 * the Prometheus exposition, text (test_metrics). */
static bool web_path(const char *target)
{
    static const char *const pages[] = {
        "/",      "/entrar",  "/registro", "/reservar",  "/mis-citas",   "/agenda",
        "/admin", "/metrics", "/cuenta",   "/recuperar", "/restablecer", "/confirmar-email"};
    size_t n;
    char *path = fz_unescape(target, strcspn(target, "?"), false, &n);
    bool web = !strncmp(path, "/app/", 5) || !strncmp(path, "/c/", 3);
    for (size_t i = 0; i < sizeof pages / sizeof pages[0] && !web; i++)
        web = !strcmp(path, pages[i]);
    free(path);
    return web;
}

/* The decoded value of the only "estado" parameter of a query; NULL when
 * there is none or more than one. Caller frees. */
static char *estado_param(const char *query)
{
    char *found = NULL;
    int count = 0;
    for (const char *p = query; *p;) {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        size_t kl, vl;
        char *key = fz_unescape(p, eq ? (size_t)(eq - p) : n, true, &kl);
        if (!strcmp(key, "estado") && kl == 6) {
            count++;
            free(found);
            found = eq ? fz_unescape(eq + 1, n - (size_t)(eq + 1 - p), true, &vl) : xstrdup("");
            if (found && strlen(found) != vl) count++; /* a NUL inside: not checked */
        }
        free(key);
        p += n;
        if (*p) p++;
    }
    if (count != 1) {
        free(found);
        return NULL;
    }
    return found;
}

static void check_citas(const struct fz_fixture *fx, const char *target, json_t *list)
{
    const char *q = strchr(target, '?');
    char *estado = q ? estado_param(q + 1) : NULL;
    bool fixture_seen = false;
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        const char *cl = json_string_value(json_object_get(c, "cliente_id"));
        const char *es = json_string_value(json_object_get(c, "estado"));
        const char *id = json_string_value(json_object_get(c, "id"));
        if (!cl || strcmp(cl, fx->client_id)) fz_fail("GET %s lists another client's cita", target);
        if (estado && *estado && (!es || strcmp(es, estado)))
            fz_fail("GET %s lists a cita in estado %s", target, es);
        if (id && !strcmp(id, fx->cita_id)) fixture_seen = true;
    }
    if (estado && !strcmp(estado, "confirmada") && !fixture_seen)
        fz_fail("GET %s leaves out the client's confirmed cita", target);
    free(estado);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fz_fixture *fx = fz_start();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    const char *lines[3] = {NULL, NULL, NULL};
    size_t lens[3] = {0, 0, 0};
    const char *p = in.payload, *end = in.payload + in.len;
    for (int i = 0; i < 3 && p <= end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        lines[i] = p;
        lens[i] = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!nl) break;
        p = nl + 1;
    }
    const char *method = "GET";
    if (lens[0] >= 7 && !memcmp(lines[0], "DELETE ", 7)) {
        method = "DELETE";
        lines[0] += 7;
        lens[0] -= 7;
    }
    char *target = fz_target(lines[0], lens[0]);
    char *authv = lines[1] ? fz_header_value(lines[1], lens[1]) : NULL;
    char *cookiev = lines[2] ? fz_header_value(lines[2], lens[2]) : NULL;
    char *auth = authv ? xasprintf("Authorization: %s", authv) : NULL;
    char *cookie = cookiev ? xasprintf("Cookie: %s", cookiev) : NULL;
    const char *hdr[3] = {NULL, NULL, NULL};
    int nh = 0;
    if (auth) hdr[nh++] = auth;
    if (cookie) hdr[nh++] = cookie;

    struct fz_req q = {method, target, hdr, NULL, 0, in.cuts, in.ncuts};
    struct fz_resp r;
    if (!fz_http(&q, !web_path(target), &r)) fz_fail("%s %s: no answer", method, target);
    if (r.library_431) { /* libmicrohttpd's, for a cookie it cannot parse: see fz_server.c */
        if (!cookiev || !strchr(cookiev, '"'))
            fz_fail("%s %s: 431 without a quoted cookie", method, target);
        r.status = 400; /* a refusal; nothing of ours ran */
    }
    switch (r.status) {
    case 200:
    case 400:
    case 401:
    case 403:
    case 404:
    case 405:
    case 429:
    case 503:
        break;
    default:
        fz_fail("%s %s answered %d: %s", method, target, r.status, r.body);
    }

    size_t pl;
    char *path = fz_unescape(target, strcspn(target, "?"), false, &pl);
    char want_auth[128], want_cookie[128];
    snprintf(want_auth, sizeof want_auth, "Bearer %s", fx->token);
    snprintf(want_cookie, sizeof want_cookie, "barberia_session=%s", fx->token);
    if (!strcmp(path, "/api/auth/me") && !strcmp(method, "GET")) {
        bool good = (authv && !strcmp(authv, want_auth)) ||
                    (!authv && cookiev && !strcmp(cookiev, want_cookie));
        const char *id = json_string_value(json_object_get(json_object_get(r.json, "user"), "id"));
        if (good && (r.status != 200 || !id || strcmp(id, fx->client_id)))
            fz_fail("GET %s with the client's session: %d %s", target, r.status, r.body);
        if (!authv && !cookiev && r.status != 401)
            fz_fail("GET %s without a session: %d", target, r.status);
    }
    if (!strcmp(path, "/api/citas") && !strcmp(method, "GET") && r.status == 200)
        check_citas(fx, target, json_object_get(r.json, "citas"));

    fz_resp_free(&r);
    free(path);
    free(auth);
    free(cookie);
    free(authv);
    free(cookiev);
    free(target);
    fz_input_free(&in);
    return 0;
}
