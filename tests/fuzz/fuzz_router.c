/*
 * fuzz_router.c - routing through the real server: 404, 405 with Allow, and
 * who answers a matched route, for any method and any request-target,
 * without credentials.
 *
 * The payload's first line is "<method> <target>" (method: any bytes but
 * space, tab, CR, LF and NUL - libmicrohttpd takes control characters
 * there too -, "GET" when none; target: any bytes, percent-encoded where
 * HTTP needs it, so any byte reaches the server's decoding). The
 * expected answer comes from the endpoint tables of the specification and
 * of docs/api.md, written here again independently of src/api/routes.c:
 * - a path no endpoint has: 404 "No encontrado";
 * - a path with endpoints, another method: 405 "Método no permitido" with
 *   an Allow header listing exactly that path's methods (HEAD wherever
 *   GET is: RFC 9110 9.1);
 * - otherwise not those: 401 "No autenticado" for a user endpoint, 403 "Sin
 *   permisos" for an admin one, a JSON answer below 500 for a public one,
 *   a page or an asset (not JSON) for the web app's paths.
 */
#include "fz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum who { PUBLIC, USER, ADMIN, WEB /* public, and not JSON when it serves */ };

/* Whether path is prefix + one non-empty segment + suffix exactly (the
 * shape of /api/citas/{id}/cancelar and its kin). */
static bool one_segment(const char *path, const char *prefix, const char *suffix)
{
    size_t np = strlen(prefix);
    if (strncmp(path, prefix, np) != 0) return false;
    const char *seg = path + np;
    size_t n = strcspn(seg, "/");
    return n > 0 && !strcmp(seg + n, suffix);
}

static bool ends_with(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && !strcmp(path + n - k, suffix);
}

static bool barber_hours(const char *path)
{
    return one_segment(path, "/api/barberos/", "/horario");
}

static bool barber_admin(const char *path)
{
    return one_segment(path, "/api/admin/barberos/", "");
}

static bool barber_hours_admin(const char *path)
{
    return one_segment(path, "/api/admin/barberos/", "/horario");
}

static bool service_admin(const char *path)
{
    return one_segment(path, "/api/admin/servicios/", "");
}

static bool closure(const char *path)
{
    return one_segment(path, "/api/admin/ausencias/", "");
}

static bool waiting_entry(const char *path)
{
    return one_segment(path, "/api/lista-espera/", "");
}

static bool client(const char *path)
{
    return one_segment(path, "/api/clientes/", "");
}

static bool client_consent(const char *path)
{
    return one_segment(path, "/api/clientes/", "/whatsapp");
}

static bool cita_action(const char *path)
{
    return one_segment(path, "/api/citas/", "/cancelar") ||
           one_segment(path, "/api/citas/", "/reprogramar");
}

static bool cita_slots(const char *path)
{
    return one_segment(path, "/api/citas/", "/huecos");
}

static bool cita_attendance(const char *path)
{
    return one_segment(path, "/api/citas/", "/asistencia");
}

static bool barber_feed(const char *path)
{
    return ends_with(path, "/agenda.ics");
}

static bool barber_feed_admin(const char *path)
{
    return ends_with(path, "/feed");
}

static bool closure_bookings(const char *path)
{
    return ends_with(path, "/citas");
}

static bool closure_cancel(const char *path)
{
    return ends_with(path, "/cancelar-citas");
}

static bool cita_messages(const char *path)
{
    return one_segment(path, "/api/admin/citas/", "/mensajes");
}

static bool link_view(const char *path)
{
    return one_segment(path, "/api/gestion/", "") || one_segment(path, "/api/gestion/", "/huecos");
}

static bool link_action(const char *path)
{
    return one_segment(path, "/api/gestion/", "/cancelar") ||
           one_segment(path, "/api/gestion/", "/reprogramar");
}

#define NMETHODS 4

/* In the order of docs/api.md's sections; where two entries meet one path
 * with one method, the first answers (as in the server's table). */
static const struct {
    const char *path;
    bool prefix;
    const char *methods[NMETHODS];
    enum who who;
    bool (*serves)(const char *path); /* a prefix's paths, when not all */
} table[] = {
    {"/api/citas", false, {"GET", "POST"}, USER, NULL},
    {"/api/citas/", true, {"POST"}, USER, cita_action},
    {"/api/citas/", true, {"GET"}, USER, cita_slots},
    {"/api/citas/", true, {"POST"}, USER, cita_attendance},
    {"/api/fotos", false, {"GET", "POST", "DELETE"}, USER, NULL},
    {"/api/admin/usuarios", false, {"GET", "PATCH"}, ADMIN, NULL},
    {"/api/auth/signup", false, {"POST"}, PUBLIC, NULL},
    {"/api/auth/login", false, {"POST"}, PUBLIC, NULL},
    {"/api/auth/logout", false, {"POST"}, USER, NULL},
    {"/api/auth/me", false, {"GET", "PATCH", "DELETE"}, USER, NULL},
    {"/api/auth/me/datos", false, {"GET"}, USER, NULL},
    {"/api/auth/me/consentimientos", false, {"GET", "POST"}, USER, NULL},
    {"/api/auth/me/whatsapp", false, {"GET", "PUT"}, USER, NULL},
    {"/api/auth/recuperar", false, {"POST"}, PUBLIC, NULL},
    {"/api/auth/restablecer", false, {"POST"}, PUBLIC, NULL},
    {"/api/auth/confirmar-email", false, {"POST"}, PUBLIC, NULL},
    {"/api/barberos", false, {"GET"}, PUBLIC, NULL},
    {"/api/servicios", false, {"GET"}, PUBLIC, NULL},
    {"/healthz", false, {"GET"}, PUBLIC, NULL},
    {"/storage/v1/object/public/", true, {"GET", "HEAD"}, PUBLIC, NULL},
    {"/api/config", false, {"GET"}, PUBLIC, NULL},
    {"/api/disponibilidad", false, {"GET"}, PUBLIC, NULL},
    /* a barber's calendar feed (its token, no session) before his hours */
    {"/api/barberos/", true, {"GET", "HEAD"}, PUBLIC, barber_feed},
    {"/api/barberos/", true, {"GET"}, PUBLIC, barber_hours},
    {"/api/admin/barberos", false, {"GET", "POST"}, ADMIN, NULL},
    {"/api/admin/barberos/", true, {"POST", "DELETE"}, ADMIN, barber_feed_admin},
    {"/api/admin/barberos/", true, {"PATCH"}, ADMIN, barber_admin},
    {"/api/admin/barberos/", true, {"PUT"}, ADMIN, barber_hours_admin},
    {"/api/admin/servicios", false, {"GET", "POST"}, ADMIN, NULL},
    {"/api/admin/servicios/", true, {"PATCH"}, ADMIN, service_admin},
    {"/api/admin/ausencias", false, {"GET", "POST"}, ADMIN, NULL},
    {"/api/admin/ausencias/", true, {"GET"}, ADMIN, closure_bookings},
    {"/api/admin/ausencias/", true, {"POST"}, ADMIN, closure_cancel},
    {"/api/admin/ausencias/", true, {"DELETE"}, ADMIN, closure},
    {"/api/admin/informes", false, {"GET"}, ADMIN, NULL},
    {"/api/admin/citas/", true, {"GET"}, ADMIN, cita_messages},
    /* the front desk: staff, told apart from clients after the session */
    {"/api/clientes", false, {"GET", "POST"}, USER, NULL},
    {"/api/clientes/", true, {"PATCH"}, USER, client},
    {"/api/clientes/", true, {"GET", "PUT"}, USER, client_consent},
    {"/api/agenda/citas", false, {"POST"}, USER, NULL},
    {"/api/agenda/huecos", false, {"GET"}, USER, NULL},
    /* an appointment behind its personal link: the token is the key */
    {"/api/gestion/", true, {"GET"}, PUBLIC, link_view},
    {"/api/gestion/", true, {"POST"}, PUBLIC, link_action},
    {"/api/lista-espera", false, {"GET", "POST"}, USER, NULL},
    {"/api/lista-espera/", true, {"DELETE"}, USER, waiting_entry},
    /* WhatsApp's webhook: its own signature, no session */
    {"/api/whatsapp/webhook", false, {"GET", "POST"}, PUBLIC, NULL},
    /* the Prometheus exposition: text, public to loopback clients (the fuzzer's) */
    {"/metrics", false, {"GET"}, WEB, NULL},
    /* the web app: its pages and assets */
    {"/", false, {"GET", "HEAD"}, WEB, NULL},
    {"/entrar", false, {"GET", "HEAD"}, WEB, NULL},
    {"/registro", false, {"GET", "HEAD"}, WEB, NULL},
    {"/reservar", false, {"GET", "HEAD"}, WEB, NULL},
    {"/mis-citas", false, {"GET", "HEAD"}, WEB, NULL},
    {"/agenda", false, {"GET", "HEAD"}, WEB, NULL},
    {"/admin", false, {"GET", "HEAD"}, WEB, NULL},
    {"/cuenta", false, {"GET", "HEAD"}, WEB, NULL},
    {"/recuperar", false, {"GET", "HEAD"}, WEB, NULL},
    {"/restablecer", false, {"GET", "HEAD"}, WEB, NULL},
    {"/confirmar-email", false, {"GET", "HEAD"}, WEB, NULL},
    {"/c/", true, {"GET", "HEAD"}, WEB, NULL},
    {"/app/", true, {"GET", "HEAD"}, WEB, NULL},
};

#define NTABLE (sizeof table / sizeof table[0])

static bool method_byte(unsigned char c)
{
    return c && c != ' ' && c != '\t' && c != '\r' && c != '\n';
}

static bool entry_matches(size_t i, const char *path)
{
    bool match = table[i].prefix ? !strncmp(path, table[i].path, strlen(table[i].path))
                                 : !strcmp(path, table[i].path);
    return match && (!table[i].serves || table[i].serves(path));
}

/* Whether entry i serves method: one it lists, or HEAD where it lists GET
 * (every GET endpoint answers HEAD). */
static bool entry_serves(size_t i, const char *method)
{
    for (size_t m = 0; m < NMETHODS && table[i].methods[m]; m++)
        if (!strcmp(method, table[i].methods[m]) ||
            (!strcmp(method, "HEAD") && !strcmp(table[i].methods[m], "GET")))
            return true;
    return false;
}

/* Whether the Allow value lists exactly the methods of every entry that
 * meets path, each once. */
static bool allow_matches(const char *allow, const char *path)
{
    static const char *const methods[] = {"GET",    "HEAD",  "POST",   "PUT",
                                          "DELETE", "PATCH", "OPTIONS"};
    size_t want = 0, seen = 0;
    const char *distinct[sizeof methods / sizeof methods[0]];
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
        for (size_t i = 0; i < NTABLE; i++)
            if (entry_matches(i, path) && entry_serves(i, methods[k])) {
                distinct[want++] = methods[k];
                break;
            }
    for (size_t d = 0; d < want; d++) {
        const char *m = distinct[d];
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

    /* what the server should see: the path before '?', percent-decoded
     * (%00 left as it is) */
    size_t plen;
    char *path = fz_unescape(target, strcspn(target, "?"), false, &plen);

    size_t route = SIZE_MAX, any = SIZE_MAX;
    for (size_t i = 0; i < NTABLE; i++) {
        if (!entry_matches(i, path)) continue;
        if (any == SIZE_MAX) any = i;
        if (route == SIZE_MAX && entry_serves(i, method)) route = i;
    }

    struct fz_req q = {method, target, NULL, NULL, 0, in.cuts, in.ncuts};
    struct fz_resp r;
    bool web = route != SIZE_MAX && table[route].who == WEB;
    if (!fz_http(&q, !web, &r)) fz_fail("%s %s: no answer", method, target);
    bool head = !strcmp(method, "HEAD");
    char allow[256];
    const char *err = fz_resp_error(&r);
    if (any == SIZE_MAX) {
        if (r.status != 404 || (!head && strcmp(err, "No encontrado")))
            fz_fail("%s %s (path %s): %d %s, expected 404", method, target, path, r.status, r.body);
    } else if (route == SIZE_MAX) {
        if (r.status != 405 || (!head && strcmp(err, "Método no permitido")))
            fz_fail("%s %s: %d %s, expected 405", method, target, r.status, r.body);
        if (!fz_resp_header(&r, "Allow", allow, sizeof allow) || !allow_matches(allow, path))
            fz_fail("%s %s: 405 with Allow '%s', expected the methods of %s", method, target,
                    fz_resp_header(&r, "Allow", allow, sizeof allow) ? allow : "(none)", path);
    } else if (table[route].who == USER) {
        if (r.status != 401 || (!head && strcmp(err, "No autenticado")))
            fz_fail("%s %s: %d %s, expected 401", method, target, r.status, r.body);
    } else if (table[route].who == ADMIN) {
        if (r.status != 403 || (!head && strcmp(err, "Sin permisos")))
            fz_fail("%s %s: %d %s, expected 403", method, target, r.status, r.body);
    } else if (table[route].who == WEB) {
        /* a page (200, or 304) or an asset (200, 304, or 404 for a name the
         * app does not have) */
        if (r.status != 200 && r.status != 304 && !(table[route].prefix && r.status == 404))
            fz_fail("%s %s: %d for the web app", method, target, r.status);
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
