/*
 * catalog.c - GET /api/barberos and GET /api/servicios (public, read-only),
 * and GET /healthz.
 */
#include "api.h"

static br_err add_barbero(void *ud, const struct barbero *b)
{
    struct jw *w = ud;
    jw_obj_open(w);
    jw_kstr(w, "id", b->id);
    jw_kstr(w, "nombre", b->nombre);
    jw_kstr(w, "foto_url", b->foto_url);
    jw_obj_close(w);
    return w->err;
}

static br_err add_servicio(void *ud, const struct servicio *s)
{
    struct jw *w = ud;
    jw_obj_open(w);
    jw_kstr(w, "id", s->id);
    jw_kstr(w, "nombre", s->nombre);
    jw_kint(w, "duracion_min", s->duracion_min);
    jw_kreal(w, "precio", s->precio);
    jw_obj_close(w);
    return w->err;
}

void api_barberos_get(struct http_req *r)
{
    struct memo_ticket t;
    if (api_memo_reply(r, MEMO_BARBEROS, &t)) return;
    struct jw w;
    api_list_begin(&w, "barberos");
    api_list_reply_memo(r, store_barberos_each(api_app(r)->store, add_barbero, &w), &w,
                        MEMO_BARBEROS, &t);
}

void api_servicios_get(struct http_req *r)
{
    struct memo_ticket t;
    if (api_memo_reply(r, MEMO_SERVICIOS, &t)) return;
    struct jw w;
    api_list_begin(&w, "servicios");
    api_list_reply_memo(r, store_servicios_each(api_app(r)->store, add_servicio, &w), &w,
                        MEMO_SERVICIOS, &t);
}

void api_healthz(struct http_req *r)
{
    br_err rc = store_ping(api_app(r)->store);
    struct jw w;
    api_begin(&w);
    jw_key(&w, "ok");
    jw_bool(&w, rc == BR_OK);
    if (rc) jw_kstr(&w, "error", "El almacén de datos no responde");
    api_reply(r, rc ? 503 : 200, &w);
}
