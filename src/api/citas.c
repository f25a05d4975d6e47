/*
 * citas.c - GET and POST /api/citas.
 */
#include "api.h"
#include "../core/booking.h"

#include <stdlib.h>

static json_t *embedded(bool present, const char *k1, json_t *v1, const char *k2, json_t *v2,
                        const char *k3, json_t *v3)
{
    if (!present) {
        json_decref(v1);
        json_decref(v2);
        json_decref(v3);
        return json_null();
    }
    json_t *o = json_object();
    json_object_set_new(o, k1, v1);
    json_object_set_new(o, k2, v2);
    if (k3) json_object_set_new(o, k3, v3);
    return o;
}

static br_err add_cita(void *ud, const struct cita_view *v)
{
    json_t *o = api_cita_json(&v->cita);
    json_object_set_new(o, "perfil",
                        embedded(v->has_perfil, "nombre", api_jstr(v->perfil_nombre), "telefono",
                                 api_jstr(v->perfil_telefono), NULL, NULL));
    json_object_set_new(o, "barbero",
                        embedded(v->barbero_nombre != NULL, "nombre", api_jstr(v->barbero_nombre),
                                 "foto_url", api_jstr(v->barbero_foto_url), NULL, NULL));
    json_object_set_new(o, "servicio",
                        embedded(v->servicio_nombre != NULL, "nombre",
                                 api_jstr(v->servicio_nombre), "duracion_min",
                                 json_integer(v->servicio_duracion_min), "precio",
                                 json_real(v->servicio_precio)));
    json_array_append_new(ud, o);
    return BR_OK;
}

void api_citas_get(struct http_req *r)
{
    json_t *list = json_array();
    br_err rc = booking_list(api_app(r), api_caller(r), http_req_query(r, "estado"), add_cita, list);
    api_reply_list(r, rc, "citas", list);
}

void api_citas_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    char *s1 = NULL, *s2 = NULL, *s3 = NULL;
    struct booking_input in = {
        .barbero_id = api_id_field(body, "barbero_id", &s1),
        .servicio_id = api_id_field(body, "servicio_id", &s2),
        .fecha_inicio = api_id_field(body, "fecha_inicio", &s3),
    };
    bool missing = !in.barbero_id || !*in.barbero_id || !in.servicio_id || !*in.servicio_id ||
                   !in.fecha_inicio || !*in.fecha_inicio;
    /* a wrongly typed notas is refused after the required fields (step 2) */
    if (missing || api_opt_string(r, body, "notas", &in.notas)) {
        struct cita c;
        br_err rc = booking_create(api_app(r), api_caller(r), &in, &c);
        if (rc) {
            api_reply_err(r, rc);
        } else {
            json_t *o = json_object();
            json_object_set_new(o, "cita", api_cita_json(&c));
            cita_clear(&c);
            http_reply_json(r, 201, o);
        }
    }
    free(s1);
    free(s2);
    free(s3);
}
