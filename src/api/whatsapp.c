/*
 * whatsapp.c - GET/PUT /api/auth/me/whatsapp (a client's consent to
 * WhatsApp messages), GET/POST /api/whatsapp/webhook (the Graph API's
 * verification handshake and delivery statuses), GET/PUT
 * /api/clientes/{id}/whatsapp (the same consent, recorded by the front desk
 * for a client who gave it in person or on the phone) and GET
 * /api/admin/citas/{id}/mensajes (what was sent about an appointment, by
 * which channel, and whether it arrived).
 */
#include "api.h"
#include "../core/whatsapp.h"
#include "../domain/roles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADMIN_CITAS_PREFIX "/api/admin/citas/"
#define MENSAJES_SUFFIX    "/mensajes"
#define CHALLENGE_MAX      256
#define CLIENTES_PREFIX    "/api/clientes/"
#define WHATSAPP_SUFFIX    "/whatsapp"

/* {"whatsapp": {"acepta", "telefono", "otorgado_en", "retirado_en",
 * "registrado_por"}} */
static void reply_consent(struct http_req *r, const struct wa_consent *c)
{
    bool acepta = c->found && !c->retirado_en[0];
    char tel[40];
    snprintf(tel, sizeof tel, "+%s", c->telefono);
    struct jw w;
    api_begin_member(&w, "whatsapp");
    jw_obj_open(&w);
    jw_key(&w, "acepta");
    jw_bool(&w, acepta);
    jw_kstr(&w, "telefono", c->found ? tel : NULL);
    jw_kstr(&w, "otorgado_en", c->found ? c->otorgado_en : NULL);
    jw_kstr(&w, "retirado_en", c->found && c->retirado_en[0] ? c->retirado_en : NULL);
    jw_kstr(&w, "registrado_por", c->found && c->registrado_por[0] ? c->registrado_por : NULL);
    jw_obj_close(&w);
    api_reply(r, 200, &w);
}

void api_whatsapp_consent_get(struct http_req *r)
{
    const struct principal *p = api_caller(r);
    struct wa_consent c;
    br_err rc = store_whatsapp_consent_get(api_app(r)->store, p->user_id, &c);
    if (rc) {
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    reply_consent(r, &c);
}

/* The body of a PUT of a consent: acepta, and telefono when given. False
 * (after replying 400) when a member is of the wrong type. */
static bool consent_body(struct http_req *r, bool *acepta, const char **tel)
{
    json_t *body = http_req_json(r);
    json_t *a = json_object_get(body, "acepta");
    if (!json_is_boolean(a)) {
        http_reply_error(r, 400, "Campo inválido: acepta");
        return false;
    }
    *acepta = json_is_true(a);
    *tel = NULL;
    return api_opt_string(r, body, "telefono", tel);
}

void api_whatsapp_consent_put(struct http_req *r)
{
    const struct principal *p = api_caller(r);
    bool acepta;
    const char *tel;
    if (!consent_body(r, &acepta, &tel)) return;
    struct wa_consent c;
    br_err rc = whatsapp_consent(api_app(r), p->user_id, acepta, tel,
                                 p->has_perfil ? p->perfil.telefono : NULL, &c);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_consent(r, &c);
}

/* --- GET/PUT /api/clientes/{id}/whatsapp: the front desk ------------------------------ */

bool api_cliente_whatsapp_path(const char *path)
{
    br_id id;
    return api_path_id(path, CLIENTES_PREFIX, WHATSAPP_SUFFIX, id) != API_PATH_OTHER;
}

/* The client the path names ("" when not a UUID: not found, once the caller
 * is judged); false (after replying 403) for a caller who is not staff. */
static bool desk_caller(struct http_req *r, br_id id)
{
    if (api_path_id(http_req_path(r), CLIENTES_PREFIX, WHATSAPP_SUFFIX, id) != API_PATH_ID)
        id[0] = '\0';
    if (principal_is_staff(api_caller(r))) return true;
    api_reply_err(r, err_set(BR_FORBIDDEN, "Sin permisos"));
    return false;
}

void api_cliente_whatsapp_get(struct http_req *r)
{
    br_id id;
    if (!desk_caller(r, id)) return;
    struct wa_consent c;
    br_err rc = whatsapp_consent_of(api_app(r), api_caller(r), id, &c);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_consent(r, &c);
}

void api_cliente_whatsapp_put(struct http_req *r)
{
    br_id id;
    bool acepta;
    const char *tel;
    /* a client is refused before her body is judged */
    if (!desk_caller(r, id) || !consent_body(r, &acepta, &tel)) return;
    struct wa_consent c;
    br_err rc = whatsapp_consent_desk(api_app(r), api_caller(r), id, acepta, tel, &c);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_consent(r, &c);
}

/* A challenge echoed back: printable ASCII, bounded. */
static bool challenge_ok(const char *s)
{
    size_t n = strlen(s);
    if (!n || n > CHALLENGE_MAX) return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7E) return false;
    return true;
}

void api_whatsapp_webhook_get(struct http_req *r)
{
    const char *mode = http_req_query(r, "hub.mode");
    const char *token = http_req_query(r, "hub.verify_token");
    const char *challenge = http_req_query(r, "hub.challenge");
    if (!whatsapp_webhook_verify(api_app(r), mode, token)) {
        http_reply_error(r, 403, "Token de verificación inválido");
        return;
    }
    if (!challenge || !challenge_ok(challenge)) {
        http_reply_error(r, 400, "Campo inválido: hub.challenge");
        return;
    }
    char *text = xstrdup(challenge);
    http_reply_text(r, 200, text, strlen(text), "text/plain; charset=utf-8");
}

void api_whatsapp_webhook_post(struct http_req *r)
{
    size_t len = 0;
    const char *raw = http_req_body_raw(r, &len);
    if (!whatsapp_webhook_signed(api_app(r), raw, len, http_req_header(r, "X-Hub-Signature-256"))) {
        http_reply_error(r, 403, "Firma inválida");
        return;
    }
    /* read only once signed */
    json_t *body = json_loadb(raw ? raw : "", len, 0, NULL);
    if (!json_is_object(body)) {
        json_decref(body);
        http_reply_error(r, 400, "JSON inválido");
        return;
    }
    int recorded = 0;
    br_err rc = whatsapp_webhook_statuses(api_app(r), body, &recorded);
    json_decref(body);
    if (rc) {
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    api_reply_ok(r);
}

bool api_admin_cita_mensajes_path(const char *path)
{
    br_id id;
    return api_path_id(path, ADMIN_CITAS_PREFIX, MENSAJES_SUFFIX, id) != API_PATH_OTHER;
}

static br_err mensaje_w(void *ud, const struct mensaje_view *m)
{
    struct jw *w = ud;
    jw_obj_open(w);
    jw_kstr(w, "id", m->id);
    jw_kstr(w, "canal", m->canal);
    jw_kstr(w, "tipo", m->tipo);
    jw_kstr(w, "destinatario", m->destinatario);
    jw_kstr(w, "estado", m->estado);
    jw_kint(w, "intentos", m->intentos);
    jw_key(w, "antelacion_min");
    if (!strcmp(m->tipo, "recordatorio") && m->antelacion_min > 0)
        jw_int(w, m->antelacion_min);
    else
        jw_null(w);
    jw_kstr(w, "creado_en", m->creado_en);
    jw_kstr(w, "enviado_en", m->enviado_en);
    jw_kstr(w, "proximo_intento", !strcmp(m->estado, "pending") ? m->proximo_intento : NULL);
    jw_kstr(w, "error", m->error);
    jw_kstr(w, "entrega", m->entrega);
    jw_kstr(w, "entrega_en", m->entrega_en);
    jw_obj_close(w);
    return BR_OK;
}

void api_admin_cita_mensajes(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, ADMIN_CITAS_PREFIX, MENSAJES_SUFFIX, "Cita no encontrada", id))
        return;
    struct app *app = api_app(r);
    struct cita_detail d;
    br_err rc = store_cita_detail(app->store, id, &d);
    if (api_reply_if_failed(r, rc, "Cita no encontrada")) return;
    cita_detail_clear(&d);
    struct jw w;
    api_list_begin(&w, "mensajes");
    rc = store_cita_mensajes(app->store, id, mensaje_w, &w);
    api_list_reply(r, rc, &w);
}
