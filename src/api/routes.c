/*
 * routes.c - the routing table and caller authentication (see api.h).
 */
#include "api.h"
#include "../domain/roles.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OBJECT_PREFIX "/storage/v1/object/public/"
#define ADMIN_PREFIX  "/api/admin/" /* every admin endpoint's */

const struct http_route api_routes[] = {
    /* its session is read with its first page (api_citas_get) */
    {"GET", "/api/citas", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_citas_get,
     .flags = API_ROUTE_SESSION_IN_HANDLER, .head = true},
    {"POST", "/api/citas", false, HTTP_AUTH_USER, HTTP_BODY_JSON, api_citas_post},
    {"GET", "/api/fotos", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_fotos_get, .head = true},
    {"POST", "/api/fotos", false, HTTP_AUTH_USER, HTTP_BODY_MULTIPART, api_fotos_post},
    {"DELETE", "/api/fotos", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_fotos_delete},
    {"GET", "/api/admin/usuarios", false, HTTP_AUTH_ADMIN, HTTP_BODY_NONE, api_admin_usuarios_get,
     .head = true},
    {"PATCH", "/api/admin/usuarios", false, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_usuarios_patch},
    {"POST", "/api/auth/signup", false, HTTP_AUTH_NONE, HTTP_BODY_JSON, api_auth_signup},
    {"POST", "/api/auth/login", false, HTTP_AUTH_NONE, HTTP_BODY_JSON, api_auth_login},
    {"POST", "/api/auth/logout", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_auth_logout},
    {"GET", "/api/auth/me", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_auth_me, .head = true},
    /* the client's own account (cuenta.c) */
    {"POST", "/api/auth/recuperar", false, HTTP_AUTH_NONE, HTTP_BODY_JSON, api_auth_recuperar},
    {"POST", "/api/auth/restablecer", false, HTTP_AUTH_NONE, HTTP_BODY_JSON, api_auth_restablecer},
    {"POST", "/api/auth/confirmar-email", false, HTTP_AUTH_NONE, HTTP_BODY_JSON,
     api_auth_confirmar_email},
    {"PATCH", "/api/auth/me", false, HTTP_AUTH_USER, HTTP_BODY_JSON, api_auth_me_patch},
    {"DELETE", "/api/auth/me", false, HTTP_AUTH_USER, HTTP_BODY_JSON_OPT, api_auth_me_delete},
    {"GET", "/api/auth/me/datos", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_auth_datos,
     .head = true},
    {"GET", "/api/auth/me/consentimientos", false, HTTP_AUTH_USER, HTTP_BODY_NONE,
     api_auth_consent_get, .head = true},
    {"POST", "/api/auth/me/consentimientos", false, HTTP_AUTH_USER, HTTP_BODY_JSON,
     api_auth_consent_post},
    {"GET", "/api/barberos", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_barberos_get, .head = true},
    {"GET", "/api/servicios", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_servicios_get,
     .head = true},
    {"GET", "/healthz", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_healthz, .head = true},
    {"GET", "/metrics", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_metrics, .head = true},
    /* bookable hours (agenda.c) */
    {"GET", "/api/config", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_config_get, .head = true},
    {"GET", "/api/disponibilidad", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_disponibilidad_get,
     .head = true},
    /* a barber's calendar feed: its token, no session (avisos.c) */
    {"GET", "/api/barberos/", true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_barbero_feed_get,
     api_feed_path, .head = true},
    {"POST", "/api/admin/barberos/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON_OPT,
     api_admin_barbero_feed_post, api_feed_admin_path},
    {"DELETE", "/api/admin/barberos/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON_OPT,
     api_admin_barbero_feed_delete, api_feed_admin_path},
    {"GET", "/api/admin/ausencias/", true, HTTP_AUTH_ADMIN, HTTP_BODY_NONE,
     api_admin_ausencia_citas_get, api_ausencia_citas_path, .head = true},
    {"POST", "/api/admin/ausencias/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON_OPT,
     api_admin_ausencia_cancelar_post, api_ausencia_cancelar_path},
    {"GET", "/api/barberos/", true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_barbero_horario_get,
     api_barbero_horario_path, .head = true},
    {"GET", "/api/admin/barberos", false, HTTP_AUTH_ADMIN, HTTP_BODY_NONE, api_admin_barberos_get,
     .head = true},
    {"POST", "/api/admin/barberos", false, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_barberos_post},
    {"PATCH", "/api/admin/barberos/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_barbero_patch, api_barbero_path},
    {"PUT", "/api/admin/barberos/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON, api_admin_barbero_put,
     api_barbero_horario_admin_path},
    /* read by staff too: the agenda's grid keeps each service's clean-up margin */
    {"GET", "/api/admin/servicios", false, HTTP_AUTH_STAFF, HTTP_BODY_NONE, api_admin_servicios_get,
     .head = true},
    {"POST", "/api/admin/servicios", false, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_servicios_post},
    {"PATCH", "/api/admin/servicios/", true, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_servicio_patch, api_servicio_path},
    /* read by staff too: the agenda's grid shows no free time on a closure */
    {"GET", "/api/admin/ausencias", false, HTTP_AUTH_STAFF, HTTP_BODY_NONE, api_admin_ausencias_get,
     .head = true},
    {"POST", "/api/admin/ausencias", false, HTTP_AUTH_ADMIN, HTTP_BODY_JSON,
     api_admin_ausencias_post},
    {"DELETE", "/api/admin/ausencias/", true, HTTP_AUTH_ADMIN, HTTP_BODY_NONE,
     api_admin_ausencia_delete, api_ausencia_path},
    /* end of bookable hours */
    /* the owner's reports (informes.c): a year of appointments is summed on a worker */
    {"GET", "/api/admin/informes", false, HTTP_AUTH_ADMIN, HTTP_BODY_NONE, api_admin_informes_get,
     .long_read = true, .head = true},
    {"GET", OBJECT_PREFIX, true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_object_get, .head = true},
    /* the web app (web.c): its pages share one shell; its assets */
    {"GET", "/", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/entrar", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/registro", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/reservar", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/mis-citas", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/agenda", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/admin", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/cuenta", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/recuperar", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/restablecer", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/confirmar-email", false, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    {"GET", "/app/", true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_asset, .head = true},
    /* WhatsApp: consent, the Graph API's webhook, an appointment's messages */
    {"GET", "/api/auth/me/whatsapp", false, HTTP_AUTH_USER, HTTP_BODY_NONE,
     api_whatsapp_consent_get, .head = true},
    {"PUT", "/api/auth/me/whatsapp", false, HTTP_AUTH_USER, HTTP_BODY_JSON,
     api_whatsapp_consent_put},
    {"GET", "/api/whatsapp/webhook", false, HTTP_AUTH_NONE, HTTP_BODY_NONE,
     api_whatsapp_webhook_get, .head = true},
    /* Meta batches up to 1000 statuses a delivery: its bodies pass 64 KiB */
    {"POST", "/api/whatsapp/webhook", false, HTTP_AUTH_NONE, HTTP_BODY_RAW,
     api_whatsapp_webhook_post, .body_max = API_WHATSAPP_WEBHOOK_MAX},
    {"GET", "/api/admin/citas/", true, HTTP_AUTH_ADMIN, HTTP_BODY_NONE, api_admin_cita_mensajes,
     api_admin_cita_mensajes_path, .head = true},
    /* /api/citas/{id}/cancelar and /reprogramar */
    {"POST", API_CITAS_PREFIX, true, HTTP_AUTH_USER, HTTP_BODY_JSON_LAX, api_citas_accion,
     api_citas_accion_path},
    {"GET", API_CITAS_PREFIX, true, HTTP_AUTH_USER, HTTP_BODY_NONE, api_citas_huecos,
     api_citas_huecos_path, .head = true},
    /* an appointment behind its personal link (no session: the token is the key) */
    {"GET", "/api/gestion/", true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_gestion_get,
     api_gestion_ver_path, .head = true},
    {"POST", "/api/gestion/", true, HTTP_AUTH_NONE, HTTP_BODY_JSON_LAX, api_gestion_post,
     api_gestion_accion_path},
    {"GET", "/c/", true, HTTP_AUTH_NONE, HTTP_BODY_NONE, api_web_page, .head = true},
    /* the waiting list */
    {"POST", "/api/lista-espera", false, HTTP_AUTH_USER, HTTP_BODY_JSON, api_espera_post},
    {"GET", "/api/lista-espera", false, HTTP_AUTH_USER, HTTP_BODY_NONE, api_espera_get,
     .head = true},
    {"DELETE", "/api/lista-espera/", true, HTTP_AUTH_USER, HTTP_BODY_NONE, api_espera_delete,
     api_espera_path},
    /* the front desk (mostrador.c): staff only, refused before the body */
    {"GET", "/api/clientes", false, HTTP_AUTH_STAFF, HTTP_BODY_NONE, api_clientes_get,
     .head = true},
    {"POST", "/api/clientes", false, HTTP_AUTH_STAFF, HTTP_BODY_JSON, api_clientes_post},
    {"POST", "/api/agenda/citas", false, HTTP_AUTH_STAFF, HTTP_BODY_JSON, api_agenda_citas_post},
    {"GET", "/api/agenda/huecos", false, HTTP_AUTH_STAFF, HTTP_BODY_NONE, api_agenda_huecos_get,
     .head = true},
    {"GET", "/api/clientes/", true, HTTP_AUTH_STAFF, HTTP_BODY_NONE, api_cliente_whatsapp_get,
     api_cliente_whatsapp_path, .head = true},
    {"PUT", "/api/clientes/", true, HTTP_AUTH_STAFF, HTTP_BODY_JSON, api_cliente_whatsapp_put,
     api_cliente_whatsapp_path},
    {"PATCH", "/api/clientes/", true, HTTP_AUTH_STAFF, HTTP_BODY_JSON, api_cliente_patch,
     api_cliente_path},
    {"POST", API_CITAS_PREFIX, true, HTTP_AUTH_STAFF, HTTP_BODY_JSON, api_citas_asistencia,
     api_asistencia_path},
};
const size_t api_nroutes = sizeof api_routes / sizeof api_routes[0];

enum api_path api_path_id(const char *path, const char *prefix, const char *suffix, br_id out)
{
    size_t np = strlen(prefix);
    if (strncmp(path, prefix, np) != 0) return API_PATH_OTHER;
    const char *seg = path + np;
    size_t n = strcspn(seg, "/");
    if (n == 0 || strcmp(seg + n, suffix) != 0) return API_PATH_OTHER;
    return uuid_parse(seg, n, out) ? API_PATH_ID : API_PATH_NOT_UUID;
}

bool api_path_id_or_404(struct http_req *r, const char *prefix, const char *suffix,
                        const char *not_found, br_id out)
{
    switch (api_path_id(http_req_path(r), prefix, suffix, out)) {
    case API_PATH_ID:
        return true;
    case API_PATH_NOT_UUID:
        http_reply_error(r, 404, not_found);
        return false;
    default:
        http_reply_error(r, 404, "No encontrado");
        return false;
    }
}

/* The session token a request carries; OUT: *n its length, *cookie
 * whether it came from the cookie (no Bearer header). */
static const char *request_token(struct http_req *r, size_t *n, bool *cookie)
{
    *cookie = false;
    const char *auth = http_req_header(r, "Authorization");
    if (auth && !strncasecmp(auth, "Bearer ", 7)) {
        const char *t = auth + 7;
        while (*t == ' ')
            t++;
        size_t len = strlen(t);
        while (len && t[len - 1] == ' ')
            len--;
        *n = len;
        return t;
    }
    bool shadowed = false;
    const char *c = http_req_cookie(r, SESSION_COOKIE, &shadowed);
    if (shadowed) api_auth_forget_cookie_copies(r); /* answered unsigned-in, then healed */
    if (c) {
        *n = strlen(c);
        *cookie = true;
        return c;
    }
    return NULL;
}

const char *api_request_token(struct http_req *r, size_t *n)
{
    bool cookie;
    return request_token(r, n, &cookie);
}

/* The cookie speaks only for pages of the service's own origin: a write
 * (any method but GET, HEAD and OPTIONS) carried by the cookie alone that a
 * browser marks as sent by a page of another origin. (A page elsewhere
 * cannot send an Authorization header without the CORS setting's leave.) */
static bool cookie_write_from_elsewhere(struct http_req *r, bool cookie)
{
    const char *m = http_req_method(r);
    return cookie && strcmp(m, "GET") && strcmp(m, "HEAD") && strcmp(m, "OPTIONS") &&
           http_req_cross_origin(r);
}

static void caller_free(void *p)
{
    struct api_caller *c = p;
    principal_clear(&c->p);
    free(c);
}

/* A refusal of the session lookup as the API answers it (a failure's
 * detail kept for the log). */
static br_err refusal(struct http_req *r, br_err rc, enum http_auth mode)
{
    if (err_unavailable(rc)) return rc; /* 503 with its detail and Retry-After */
    if (rc != BR_UNAUTH) {
        http_req_set_detail(r, err_msg());
        return err_set(BR_INTERNAL, API_ERROR_INTERNAL);
    }
    /* an admin endpoint is 403 without a session, even one staff may read
     * (the contract's "or 403 on the admin endpoints") */
    bool admin = mode == HTTP_AUTH_ADMIN ||
                 !strncmp(http_req_path(r), ADMIN_PREFIX, sizeof ADMIN_PREFIX - 1);
    return admin ? err_set(BR_FORBIDDEN, "Sin permisos") : err_set(BR_UNAUTH, "No autenticado");
}

/* Makes c (owned from now on) the request's caller, carrying token. */
static void set_caller(struct http_req *r, struct api_caller *c, const char *tok, size_t n)
{
    if (n < sizeof c->token) {
        memcpy(c->token, tok, n);
        c->token[n] = '\0';
    }
    http_req_set_user(r, c, caller_free);
}

br_err api_authorize(struct http_req *r, enum http_auth mode)
{
    if (http_req_route_flags(r) & API_ROUTE_SESSION_IN_HANDLER) return BR_OK;
    return api_session(r, mode);
}

br_err api_session(struct http_req *r, enum http_auth mode)
{
    struct app *app = api_app(r);
    size_t n = 0;
    bool cookie;
    const char *tok = request_token(r, &n, &cookie);
    struct api_caller *c = xcalloc(1, sizeof *c);
    br_err rc = ident_authenticate(app->ident, tok, n, &c->p);
    if (rc) {
        free(c);
        return refusal(r, rc, mode);
    }
    if ((mode == HTTP_AUTH_ADMIN && !principal_is_admin(&c->p)) ||
        (mode == HTTP_AUTH_STAFF && !principal_is_staff(&c->p))) {
        caller_free(c);
        return err_set(BR_FORBIDDEN, "Sin permisos");
    }
    /* after the session and the role: a caller who would be refused
     * anyway gets the answer she always got */
    if (cookie_write_from_elsewhere(r, cookie)) {
        caller_free(c);
        return err_set(BR_FORBIDDEN, "Origen no permitido");
    }
    set_caller(r, c, tok, n);
    return BR_OK;
}

br_err api_session_citas(struct http_req *r, const struct cita_range *q, store_cita_fn fn, void *ud,
                         bool *listed)
{
    struct app *app = api_app(r);
    size_t n = 0;
    const char *tok = api_request_token(r, &n);
    struct api_caller *c = xcalloc(1, sizeof *c);
    br_err rc = ident_authenticate_citas(app->ident, tok, n, &c->p, q, fn, ud, listed);
    if (!*listed && rc) {
        caller_free(c);
        return refusal(r, rc, HTTP_AUTH_USER);
    }
    set_caller(r, c, tok, n);
    return rc; /* the listing's own outcome */
}
