/*
 * cambios.c - POST /api/citas/{id}/cancelar and /api/citas/{id}/reprogramar
 * (issue 9, workstream B; the rules are core/cambios.h's).
 */
#include "api.h"
#include "../core/cambios.h"

#include <stdlib.h>
#include <string.h>

struct one_view {
    struct jw *w;
    bool found;
};

static br_err one_view(void *ud, const struct cita_view *v)
{
    struct one_view *o = ud;
    o->found = true;
    jw_key(o->w, "cita");
    return api_w_cita_view(o->w, v);
}

bool api_citas_accion_path(const char *path)
{
    if (strncmp(path, API_CITAS_PREFIX, strlen(API_CITAS_PREFIX)) != 0) return false;
    const char *rest = path + strlen(API_CITAS_PREFIX);
    const char *slash = strchr(rest, '/');
    return slash && slash != rest &&
           (!strcmp(slash + 1, "cancelar") || !strcmp(slash + 1, "reprogramar"));
}

void api_citas_accion(struct http_req *r)
{
    /* /api/citas/<id>/<accion>: anything else is no resource */
    const char *rest = http_req_path(r) + strlen(API_CITAS_PREFIX);
    const char *slash = strchr(rest, '/');
    const char *accion = slash ? slash + 1 : "";
    bool cancel = !strcmp(accion, "cancelar"), move = !strcmp(accion, "reprogramar");
    if (!slash || slash == rest || (!cancel && !move)) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    char *id = xstrndup(rest, (size_t)(slash - rest));
    char *scratch = NULL;
    json_t *body = http_req_json(r);
    const char *fecha = move && body ? api_id_field(body, "fecha_inicio", &scratch) : NULL;
    br_id cita_id;
    br_err rc = cambios_apply(api_app(r), api_caller(r), id, move, fecha, cita_id);
    free(id);
    free(scratch);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    api_begin(&w);
    struct one_view o = {&w, false};
    rc = store_cita_view(api_app(r)->store, cita_id, one_view, &o);
    if (!rc && !o.found) rc = err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc) {
        jw_free(&w);
        if (rc != BR_NOTFOUND && rc != BR_BUSY)
            rc = err_set(BR_INTERNAL, "Error interno del servidor");
        api_reply_err(r, rc);
        return;
    }
    api_reply(r, 200, &w);
}
