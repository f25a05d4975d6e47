/*
 * avisos.c - what a barber is told, and closures that meet bookings:
 * GET /api/barberos/{id}/agenda.ics?token= (the private calendar feed, no
 * session), POST and DELETE /api/admin/barberos/{id}/feed (its link
 * renewed, revoked), GET /api/admin/ausencias/{id}/citas and POST
 * /api/admin/ausencias/{id}/cancelar-citas (the appointments a day off or
 * a closure falls on, and cancelling them with a message).
 */
#include "api.h"
#include "../core/avisos.h"
#include "../core/cierres.h"

#include <stdlib.h>
#include <string.h>

#define FEED_SUFFIX   "/agenda.ics"
#define FEED_ADMIN    "/feed"
#define CITAS_SUFFIX  "/citas"
#define CANCEL_SUFFIX "/cancelar-citas"

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

bool api_feed_path(const char *path)
{
    return ends_with(path, FEED_SUFFIX);
}

bool api_feed_admin_path(const char *path)
{
    return ends_with(path, FEED_ADMIN);
}

bool api_ausencia_citas_path(const char *path)
{
    return ends_with(path, CITAS_SUFFIX);
}

bool api_ausencia_cancelar_path(const char *path)
{
    return ends_with(path, CANCEL_SUFFIX);
}

/* --- the calendar feed ---------------------------------------------------------------- */

void api_barbero_feed_get(struct http_req *r)
{
    br_id id;
    /* every refusal is the same 404: an unknown barber, a wrong token and a
     * revoked one look alike */
    if (api_path_id(http_req_path(r), "/api/barberos/", FEED_SUFFIX, id) != API_PATH_ID) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    char *text = NULL;
    size_t len = 0;
    br_err rc =
        avisos_feed(api_app(r), id, http_req_query(r, "token"), clock_now_ms(), &text, &len);
    if (api_reply_if_failed(r, rc, "No encontrado")) return;
    http_reply_text(r, 200, text, len, "text/calendar; charset=utf-8");
}

static void feed_admin(struct http_req *r, bool renew)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/barberos/", FEED_ADMIN, "Barbero no encontrado", id))
        return;
    struct app *app = api_app(r);
    if (!renew) {
        if (!api_reply_if_failed(r, avisos_feed_revocar(app, id), NULL)) api_reply_ok(r);
        return;
    }
    char *url = NULL;
    if (api_reply_if_failed(r, avisos_feed_renovar(app, id, &url), NULL)) return;
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "url", url);
    api_reply(r, 200, &w);
    free(url);
}

void api_admin_barbero_feed_post(struct http_req *r)
{
    feed_admin(r, true);
}

void api_admin_barbero_feed_delete(struct http_req *r)
{
    feed_admin(r, false);
}

/* --- closures that meet bookings ------------------------------------------------------------ */

struct afectadas_w {
    struct jw *w;
    bool whatsapp; /* the service sends WhatsApp messages */
};

static br_err w_afectada(void *ud, const struct cita_aviso *c)
{
    const struct afectadas_w *a = ud;
    struct jw *w = a->w;
    jw_obj_open(w);
    jw_kstr(w, "id", c->id);
    jw_kstr(w, "barbero_id", c->barbero_id);
    jw_kstr(w, "barbero_nombre", c->barbero_nombre);
    jw_kstr(w, "fecha_inicio", c->fecha_inicio);
    jw_kstr(w, "fecha_fin", c->fecha_fin);
    jw_kstr(w, "cliente_nombre", *c->cliente_nombre ? c->cliente_nombre : NULL);
    jw_kstr(w, "servicio_nombre", c->servicio_nombre);
    /* whom a cancellation reaches by itself, and whom the shop must call */
    jw_kstr(w, "cliente_telefono", c->cliente_telefono);
    jw_key(w, "avisable");
    jw_bool(w, c->con_correo || (a->whatsapp && c->con_whatsapp));
    jw_obj_close(w);
    return w->err;
}

br_err api_w_afectadas(struct jw *w, struct app *app, const struct ausencia *a)
{
    struct afectadas_w aw = {w, app->whatsapp != NULL};
    jw_key(w, "afectadas");
    jw_arr_open(w);
    br_err rc = cierres_afectadas(app, a, clock_now_ms(), w_afectada, &aw);
    jw_arr_close(w);
    return rc;
}

void api_admin_ausencia_citas_get(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/ausencias/", CITAS_SUFFIX, "Ausencia no encontrada", id))
        return;
    struct app *app = api_app(r);
    struct ausencia a;
    br_err rc = store_ausencia_get(app->store, id, &a);
    if (api_reply_if_failed(r, rc, "Ausencia no encontrada")) return;
    struct jw w;
    api_begin(&w);
    rc = api_w_afectadas(&w, app, &a);
    free(a.motivo);
    if (rc) {
        jw_free(&w);
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    api_reply(r, 200, &w);
}

void api_admin_ausencia_cancelar_post(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/ausencias/", CANCEL_SUFFIX, "Ausencia no encontrada",
                            id))
        return;
    const char *mensaje = NULL;
    if (!api_opt_string(r, http_req_json(r), "mensaje", &mensaje)) return;
    struct jw w;
    api_list_begin(&w, "canceladas");
    struct afectadas_w aw = {&w, api_app(r)->whatsapp != NULL};
    br_err rc = cierres_cancelar(api_app(r), id, mensaje, w_afectada, &aw);
    jw_arr_close(&w);
    if (rc) {
        jw_free(&w);
        if (rc == BR_INVALID || rc == BR_NOTFOUND)
            api_reply_err(r, rc);
        else
            api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    api_reply(r, 200, &w);
}
