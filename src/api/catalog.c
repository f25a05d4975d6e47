/*
 * catalog.c - GET /api/barberos and GET /api/servicios (public, read-only),
 * and GET /healthz.
 */
#include "api.h"

static br_err add_barbero(void *ud, const struct barbero *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", api_jstr(b->id));
    json_object_set_new(o, "nombre", api_jstr(b->nombre));
    json_object_set_new(o, "foto_url", api_jstr(b->foto_url));
    json_array_append_new(ud, o);
    return BR_OK;
}

static br_err add_servicio(void *ud, const struct servicio *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", api_jstr(s->id));
    json_object_set_new(o, "nombre", api_jstr(s->nombre));
    json_object_set_new(o, "duracion_min", json_integer(s->duracion_min));
    json_object_set_new(o, "precio", json_real(s->precio));
    json_array_append_new(ud, o);
    return BR_OK;
}

void api_barberos_get(struct http_req *r)
{
    json_t *list = json_array();
    api_reply_list(r, store_barberos_each(api_app(r)->store, add_barbero, list), "barberos", list);
}

void api_servicios_get(struct http_req *r)
{
    json_t *list = json_array();
    api_reply_list(r, store_servicios_each(api_app(r)->store, add_servicio, list), "servicios", list);
}

void api_healthz(struct http_req *r)
{
    br_err rc = store_ping(api_app(r)->store);
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_boolean(rc == BR_OK));
    if (rc) json_object_set_new(o, "error", json_string("El almacén de datos no responde"));
    http_reply_json(r, rc ? 503 : 200, o);
}
