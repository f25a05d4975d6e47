/*
 * citas.c - GET and POST /api/citas.
 */
#include "api.h"
#include "../core/booking.h"

#include <stdlib.h>

/* One element of the listing: the appointment plus perfil, barbero and
 * servicio, each null when the row it names is missing. */
static br_err add_cita(void *ud, const struct cita_view *v)
{
    struct jw *w = ud;
    jw_obj_open(w);
    api_w_cita_members(w, &v->cita);
    jw_key(w, "perfil");
    if (v->has_perfil) {
        jw_obj_open(w);
        jw_kstr(w, "nombre", v->perfil_nombre);
        jw_kstr(w, "telefono", v->perfil_telefono);
        jw_obj_close(w);
    } else {
        jw_null(w);
    }
    jw_key(w, "barbero");
    if (v->barbero_nombre) {
        jw_obj_open(w);
        jw_kstr(w, "nombre", v->barbero_nombre);
        jw_kstr(w, "foto_url", v->barbero_foto_url);
        jw_obj_close(w);
    } else {
        jw_null(w);
    }
    jw_key(w, "servicio");
    if (v->servicio_nombre) {
        jw_obj_open(w);
        jw_kstr(w, "nombre", v->servicio_nombre);
        jw_kint(w, "duracion_min", v->servicio_duracion_min);
        jw_kreal(w, "precio", v->servicio_precio);
        jw_obj_close(w);
    } else {
        jw_null(w);
    }
    jw_obj_close(w);
    return w->err;
}

void api_citas_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "citas");
    br_err rc = booking_list(api_app(r), api_caller(r), http_req_query(r, "estado"), add_cita, &w);
    api_list_reply(r, rc, &w);
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
            struct jw w;
            api_begin(&w);
            jw_key(&w, "cita");
            api_w_cita(&w, &c);
            cita_clear(&c);
            api_reply(r, 201, &w);
        }
    }
    free(s1);
    free(s2);
    free(s3);
}
