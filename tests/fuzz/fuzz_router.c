/*
 * fuzz_router.c - routing through the real server: 404, 405 with Allow, and
 * who answers a matched route, for any method and any request-target,
 * without credentials.
 *
 * The payload's first line is "<method> <target>" (method: any bytes but
 * space, tab, CR, LF and NUL - libmicrohttpd takes control characters
 * there too -, "GET" when none; target: any bytes, percent-encoded where
 * HTTP needs it, so any byte reaches the server's decoding). The
 * expected answer comes from the specification's endpoint table, written
 * here again independently of src/api/routes.c:
 * - a path no endpoint has: 404 "No encontrado";
 * - a path with endpoints, another method: 405 "Método no permitido" with
 *   an Allow header listing exactly that path's methods;
 * - otherwise not those: 401 "No autenticado" for a user endpoint, 403 "Sin
 *   permisos" for an admin one, a JSON answer below 500 for a public one.
 */
#include "fz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum who { PUBLIC, USER, ADMIN };

static const struct {
    const char *path;
    bool prefix;
    const char *methods[3];
    enum who who;
} table[] = {
    {"/api/citas", false, {"GET", "POST"}, USER},
    {"/api/fotos", false, {"GET", "POST", "DELETE"}, USER},
    {"/api/admin/usuarios", false, {"GET", "PATCH"}, ADMIN},
    {"/api/auth/signup", false, {"POST"}, PUBLIC},
    {"/api/auth/login", false, {"POST"}, PUBLIC},
    {"/api/auth/logout", false, {"POST"}, USER},
    {"/api/auth/me", false, {"GET"}, USER},
    {"/api/barberos", false, {"GET"}, PUBLIC},
    {"/api/servicios", false, {"GET"}, PUBLIC},
    {"/healthz", false, {"GET"}, PUBLIC},
    {"/storage/v1/object/public/", true, {"GET", "HEAD"}, PUBLIC},
};

static bool method_byte(unsigned char c)
{
    return c && c != ' ' && c != '\t' && c != '\r' && c != '\n';
}

/* Whether the Allow value lists exactly the methods of table entry i. */
static bool allow_matches(const char *allow, size_t i)
{
    size_t want = 0, seen = 0;
    for (; want < 3 && table[i].methods[want]; want++) {
        const char *m = table[i].methods[want];
        size_t k = strlen(m);
        for (const char *p = allow; (p = strstr(p, m)); p += k)
            if ((p == allow || p[-1] == ' ' || p[-1] == ',') && (!p[k] || p[k] == ',')) {
                seen++;
                break;
            }
    }
    size_t listed = 1;
    for (const char *p = allow; *p; p++)
        listed += *p == ',';
    return seen == want && listed == want;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_start();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    const char *line = in.payload;
    size_t n = strcspn(line, "\n");
    const char *sp = memchr(line, ' ', n);
    char method[64] = "";
    size_t ml = 0;
    if (sp)
        for (const char *p = line; p < sp && ml + 1 < sizeof method; p++)
            if (method_byte((unsigned char)*p)) method[ml++] = *p;
    method[ml] = '\0';
    if (!ml) snprintf(method, sizeof method, "GET");
    const char *t = sp ? sp + 1 : line;
    char *target = fz_target(t, (size_t)(line + n - t));

    /* what the server should see: the path before '?', percent-decoded, up
     * to a decoded NUL */
    size_t plen;
    char *path = fz_unescape(target, strcspn(target, "?"), false, &plen);

    size_t route = SIZE_MAX, any = SIZE_MAX;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        bool match = table[i].prefix ? !strncmp(path, table[i].path, strlen(table[i].path))
                                     : !strcmp(path, table[i].path);
        if (!match) continue;
        if (any == SIZE_MAX) any = i;
        for (size_t m = 0; m < 3 && table[i].methods[m]; m++)
            if (!strcmp(method, table[i].methods[m]) && route == SIZE_MAX) route = i;
    }

    struct fz_req q = {method, target, NULL, NULL, 0, in.cuts, in.ncuts};
    struct fz_resp r;
    if (!fz_http(&q, true, &r)) fz_fail("%s %s: no answer", method, target);
    bool head = !strcmp(method, "HEAD");
    char allow[256];
    const char *err = fz_resp_error(&r);
    if (any == SIZE_MAX) {
        if (r.status != 404 || (!head && strcmp(err, "No encontrado")))
            fz_fail("%s %s (path %s): %d %s, expected 404", method, target, path, r.status, r.body);
    } else if (route == SIZE_MAX) {
        if (r.status != 405 || (!head && strcmp(err, "Método no permitido")))
            fz_fail("%s %s: %d %s, expected 405", method, target, r.status, r.body);
        if (!fz_resp_header(&r, "Allow", allow, sizeof allow) || !allow_matches(allow, any))
            fz_fail("%s %s: 405 with Allow '%s', expected the methods of %s", method, target,
                    fz_resp_header(&r, "Allow", allow, sizeof allow) ? allow : "(none)",
                    table[any].path);
    } else if (table[route].who == USER) {
        if (r.status != 401 || strcmp(err, "No autenticado"))
            fz_fail("%s %s: %d %s, expected 401", method, target, r.status, r.body);
    } else if (table[route].who == ADMIN) {
        if (r.status != 403 || strcmp(err, "Sin permisos"))
            fz_fail("%s %s: %d %s, expected 403", method, target, r.status, r.body);
    } else if (r.status >= 500 || r.status == 405 ||
               (r.status == 404 && !strcmp(err, "No encontrado") && !table[route].prefix)) {
        fz_fail("%s %s: %d %s for a public endpoint", method, target, r.status, r.body);
    }
    fz_resp_free(&r);
    free(path);
    free(target);
    fz_input_free(&in);
    return 0;
}
