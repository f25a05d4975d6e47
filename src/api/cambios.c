/*
 * cambios.c - POST /api/citas/{id}/cancelar and /api/citas/{id}/reprogramar
 * (the rules are core/cambios.h's), and GET /api/citas/{id}/huecos, the
 * times it could move to.
 */
#include "api.h"
#include "../core/cambios.h"

#include <stdlib.h>
#include <string.h>

/* The id in /api/citas/<id>/cancelar or /reprogramar; *move: which. */
static enum api_path accion_id(const char *path, br_id id, bool *move)
{
    enum api_path k = api_path_id(path, API_CITAS_PREFIX, "/cancelar", id);
    *move = k == API_PATH_OTHER;
    if (*move) k = api_path_id(path, API_CITAS_PREFIX, "/reprogramar", id);
    return k;
}

bool api_cambio_fecha(struct http_req *r, bool move, const char **fecha, char **scratch)
{
    *fecha = NULL;
    *scratch = NULL;
    if (!move) return true; /* cancelar ignores any body */
    if (http_req_json_invalid(r)) {
        http_reply_error(r, 400, "JSON inválido");
        return false;
    }
    json_t *body = http_req_json(r);
    if (body) *fecha = api_id_field(body, "fecha_inicio", scratch);
    return true;
}

bool api_citas_accion_path(const char *path)
{
    br_id id;
    bool move;
    return accion_id(path, id, &move) != API_PATH_OTHER;
}

void api_citas_accion(struct http_req *r)
{
    /* /api/citas/<id>/<accion>: anything else is no resource */
    br_id id;
    bool move;
    enum api_path k = accion_id(http_req_path(r), id, &move);
    if (k == API_PATH_OTHER) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    char *scratch;
    const char *fecha;
    if (!api_cambio_fecha(r, move, &fecha, &scratch)) return;
    br_id cita_id;
    /* an id that is not a UUID is not found, once the body is judged */
    br_err rc = cambios_apply(api_app(r), api_caller(r), k == API_PATH_ID ? id : NULL, move, fecha,
                              cita_id);
    free(scratch);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    if (!api_reply_if_failed(r, api_begin_one_cita(r, cita_id, &w), NULL)) api_reply(r, 200, &w);
}

API_SERVES(api_citas_huecos_path, API_CITAS_PREFIX, "/huecos")

void api_reply_huecos(struct http_req *r, br_err rc, struct cambio_huecos *h)
{
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    const struct agenda_query q = {.servicio_id = h->servicio_id, .barbero_id = h->barbero_id};
    char *text;
    size_t len;
    bool ok = api_huecos_text(r, &q, &h->dia, &text, &len);
    agenda_dia_clear(&h->dia);
    if (ok) http_reply_json(r, 200, text, len);
}

void api_citas_huecos(struct http_req *r)
{
    br_id id;
    enum api_path k = api_path_id(http_req_path(r), API_CITAS_PREFIX, "/huecos", id);
    if (k == API_PATH_OTHER) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    struct cambio_huecos h;
    /* an id that is not a UUID is not found, once the date is judged */
    br_err rc = cambios_huecos(api_app(r), api_caller(r), k == API_PATH_ID ? id : NULL,
                               http_req_query(r, "fecha"), &h);
    api_reply_huecos(r, rc, &h);
}
