/*
 * cuenta.c - the client's own account: POST /api/auth/recuperar and
 * /restablecer, PATCH and DELETE /api/auth/me, POST
 * /api/auth/confirmar-email, GET /api/auth/me/datos, GET and POST
 * /api/auth/me/consentimientos (docs/api.md, "La cuenta de la clienta").
 */
#include "api.h"
#include "../core/cuenta.h"

#include <stdio.h>
#include <string.h>

void api_auth_recuperar(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *email;
    if (!api_opt_string(r, body, "email", &email)) return;
    br_err rc = cuenta_recuperar(api_app(r), email, http_req_client(r));
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    api_reply_ok(r);
}

void api_auth_restablecer(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *token, *pw;
    if (!api_opt_string(r, body, "token", &token) || !api_opt_string(r, body, "password", &pw))
        return;
    struct ident_session s;
    br_err rc = ident_reset_apply(api_app(r)->ident, token, pw, &s);
    api_auth_reply_session(r, rc, 200, &s);
}

void api_auth_confirmar_email(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *token;
    if (!api_opt_string(r, body, "token", &token)) return;
    char *email = NULL;
    br_err rc = ident_email_change_apply(api_app(r)->ident, token, &email);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "email", email);
    free(email);
    api_reply(r, 200, &w);
}

void api_auth_me_patch(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct cuenta_patch p = {0};
    if (!api_opt_string(r, body, "nombre", &p.nombre) ||
        !api_opt_string(r, body, "telefono", &p.telefono) ||
        !api_opt_string(r, body, "password", &p.password) ||
        !api_opt_string(r, body, "password_actual", &p.password_actual) ||
        !api_opt_string(r, body, "email", &p.email))
        return;
    p.has_telefono = json_object_get(body, "telefono") != NULL;
    size_t n = 0;
    const char *tok = api_request_token(r, &n);
    struct app *app = api_app(r);
    char *pendiente = NULL;
    br_err rc = cuenta_perfil(app, api_caller(r), &p, http_req_client(r), tok, n, &pendiente);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    /* the profile as it is now */
    struct perfil pf;
    bool has = store_perfil_get(app->store, api_caller(r)->user_id, &pf) == BR_OK;
    struct jw w;
    api_begin_member(&w, "user");
    jw_obj_open(&w);
    jw_kstr(&w, "id", api_caller(r)->user_id);
    jw_kstr(&w, "email", api_caller(r)->email);
    jw_obj_close(&w);
    jw_key(&w, "perfil");
    if (has)
        api_w_perfil(&w, &pf);
    else
        jw_null(&w);
    /* the address that will replace it once its link is used */
    if (pendiente) jw_kstr(&w, "email_pendiente", pendiente);
    free(pendiente);
    if (has) perfil_clear(&pf);
    api_reply(r, 200, &w);
}

void api_auth_me_delete(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *pw = NULL;
    if (body && !api_opt_string(r, body, "password", &pw)) return;
    br_err rc = cuenta_eliminar(api_app(r), api_caller(r), pw, http_req_client(r));
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    api_auth_clear_cookie(r);
    api_reply_ok(r);
}

static void w_consent(struct jw *w, struct app *app, const char *user_id, const char *tipo)
{
    int state = 0;
    if (store_consent_get(app->store, user_id, tipo, &state) != BR_OK) state = 0;
    jw_key(w, tipo);
    if (state)
        jw_bool(w, state > 0);
    else
        jw_null(w);
}

static void reply_consents(struct http_req *r)
{
    struct jw w;
    api_begin_member(&w, "consentimientos");
    jw_obj_open(&w);
    w_consent(&w, api_app(r), api_caller(r)->user_id, "fotos");
    jw_obj_close(&w);
    api_reply(r, 200, &w);
}

void api_auth_consent_get(struct http_req *r)
{
    reply_consents(r);
}

void api_auth_consent_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    json_t *v = json_object_get(body, "fotos");
    /* absent, null and "" are all missing (docs/api.md, Conventions) */
    if (!v || json_is_null(v) || (json_is_string(v) && !*json_string_value(v))) {
        api_reply_err(r, err_set(BR_INVALID, "Faltan campos requeridos"));
        return;
    }
    if (!json_is_boolean(v)) {
        api_reply_err(r, err_set(BR_INVALID, "Campo inválido: fotos"));
        return;
    }
    br_err rc = cuenta_consentir(api_app(r), api_caller(r), "fotos", json_is_true(v));
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_consents(r);
}

/* --- everything the shop holds about her ------------------------------------------- */

static br_err w_dato(void *ud, const struct dato *row, int n)
{
    struct jw *w = ud;
    jw_obj_open(w);
    for (int i = 0; i < n; i++) {
        jw_key(w, row[i].key);
        if (row[i].type == DATO_TEXT)
            jw_str(w, row[i].s);
        else if (row[i].type == DATO_NUM)
            jw_real(w, row[i].d);
        else
            jw_null(w);
    }
    jw_obj_close(w);
    return BR_OK;
}

void api_auth_datos(struct http_req *r)
{
    struct app *app = api_app(r);
    const struct principal *p = api_caller(r);
    static const struct {
        const char *key;
        enum datos_seccion s;
    } secciones[] = {
        {"citas", DATOS_CITAS},
        {"historial", DATOS_HISTORIAL},
        {"fotos", DATOS_FOTOS},
        {"mensajes", DATOS_MENSAJES},
        {"mensajes_cuenta", DATOS_MENSAJES_CUENTA},
        {"consentimientos", DATOS_CONSENTIMIENTOS},
        {"whatsapp", DATOS_WHATSAPP},
        {"lista_espera", DATOS_LISTA_ESPERA},
    };
    struct jw w;
    api_begin(&w);
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    jw_kstr(&w, "generado_en", now);
    jw_key(&w, "user");
    jw_obj_open(&w);
    jw_kstr(&w, "id", p->user_id);
    jw_kstr(&w, "email", p->email);
    jw_obj_close(&w);
    jw_key(&w, "perfil");
    if (p->has_perfil)
        api_w_perfil(&w, &p->perfil);
    else
        jw_null(&w);
    br_err rc = BR_OK;
    for (size_t i = 0; i < ARRAY_LEN(secciones) && !rc; i++) {
        jw_key(&w, secciones[i].key);
        jw_arr_open(&w);
        rc = store_datos_each(app->store, secciones[i].s, p->user_id, w_dato, &w);
        jw_arr_close(&w);
    }
    if (rc) {
        jw_free(&w);
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    http_add_header(r, "Content-Disposition", "attachment; filename=\"mis-datos.json\"");
    api_reply(r, 200, &w);
}
