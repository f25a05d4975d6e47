/*
 * cambios.c - POST /api/citas/{id}/cancelar and /api/citas/{id}/reprogramar
 * (the rules are core/cambios.h's).
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
    /* cancelar ignores any body; reprogramar's must be a JSON object */
    if (move && http_req_json_invalid(r)) {
        http_reply_error(r, 400, "JSON inválido");
        return;
    }
    char *scratch = NULL;
    json_t *body = http_req_json(r);
    const char *fecha = move && body ? api_id_field(body, "fecha_inicio", &scratch) : NULL;
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
