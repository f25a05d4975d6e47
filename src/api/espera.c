/*
 * espera.c - the waiting list of the signed-in client: POST and GET
 * /api/lista-espera, DELETE /api/lista-espera/{id}; staff name a client by
 * cliente_id (the body's, the query's) to act for her at the front desk
 * (the rules are core/espera.h's).
 */
#include "api.h"
#include "../core/espera.h"

#include <stdlib.h>
#include <string.h>

static void w_entrada(struct jw *w, const struct espera *e, const char *servicio,
                      const char *barbero)
{
    jw_obj_open(w);
    jw_kstr(w, "id", e->id);
    jw_kstr(w, "servicio_id", e->servicio_id);
    jw_kstr(w, "servicio", servicio);
    jw_kstr(w, "barbero_id", e->barbero_id[0] ? e->barbero_id : NULL);
    jw_kstr(w, "barbero", e->barbero_id[0] ? barbero : NULL);
    jw_kstr(w, "fecha", e->fecha);
    jw_kstr(w, "created_at", e->created_at);
    jw_obj_close(w);
}

void api_espera_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    char *s1 = NULL, *s2 = NULL, *s3 = NULL;
    const char *fecha = NULL;
    if (!api_opt_string(r, body, "fecha", &fecha)) return;
    struct espera_nueva in = {
        .servicio_id = api_id_field(body, "servicio_id", &s1),
        .fecha = fecha,
        .barbero_id = api_id_field(body, "barbero_id", &s2),
        .cliente_id = api_id_field(body, "cliente_id", &s3),
    };
    struct espera e;
    br_err rc = espera_add(api_app(r), api_caller(r), &in, &e);
    free(s1);
    free(s2);
    free(s3);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct servicio srv;
    struct barbero bar;
    memset(&srv, 0, sizeof srv);
    memset(&bar, 0, sizeof bar);
    /* the names, as the listing shows them (best-effort: the entry is stored) */
    if (store_servicio_get(api_app(r)->store, e.servicio_id, &srv) != BR_OK) srv.nombre = NULL;
    if (e.barbero_id[0] && store_barbero_get(api_app(r)->store, e.barbero_id, &bar) != BR_OK)
        bar.nombre = NULL;
    struct jw w;
    api_begin_member(&w, "entrada");
    w_entrada(&w, &e, srv.nombre, bar.nombre);
    servicio_clear(&srv);
    barbero_clear(&bar);
    api_reply(r, 201, &w);
}

static br_err list_row(void *ud, const struct espera *e)
{
    w_entrada(ud, e, e->servicio_nombre, e->barbero_nombre);
    return BR_OK;
}

void api_espera_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "entradas");
    br_err rc =
        espera_list(api_app(r), api_caller(r), http_req_query(r, "cliente_id"), list_row, &w);
    if (rc == BR_NOTFOUND) { /* the client staff named */
        jw_free(&w);
        api_reply_err(r, rc);
        return;
    }
    api_list_reply_fail(r, rc, &w);
}

API_SERVES(api_espera_path, "/api/lista-espera/", "")

void api_espera_delete(struct http_req *r)
{
    br_id id;
    /* an id that is not a UUID is no entry, once the client named is judged */
    enum api_path k = api_path_id(http_req_path(r), "/api/lista-espera/", "", id);
    br_err rc = espera_delete(api_app(r), api_caller(r), http_req_query(r, "cliente_id"),
                              k == API_PATH_ID ? id : "00000000-0000-0000-0000-000000000000");
    if (rc)
        api_reply_err(r, rc);
    else
        api_reply_ok(r);
}
