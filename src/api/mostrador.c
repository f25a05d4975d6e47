/*
 * mostrador.c - the front desk: GET and POST /api/clientes, PATCH
 * /api/clientes/{id}, POST /api/agenda/citas and POST
 * /api/citas/{id}/asistencia (the rules are core/mostrador.h's).
 */
#include "api.h"
#include "../core/mostrador.h"
#include "../domain/roles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- GET /api/clientes ---------------------------------------------------------------- */

static br_err w_cliente(struct jw *w, const void *row)
{
    const struct cliente_view *c = row;
    jw_obj_open(w);
    jw_kstr(w, "id", c->perfil.id);
    jw_kstr(w, "nombre", c->perfil.nombre);
    jw_kstr(w, "telefono", c->perfil.telefono);
    /* a deleted account's sign-in address is nobody's to write to */
    jw_kstr(w, "email", email_es_eliminado(c->email) ? NULL : c->email);
    jw_kstr(w, "rol", c->perfil.rol);
    jw_kstr(w, "created_at", c->perfil.created_at);
    jw_key(w, "puede_entrar");
    jw_bool(w, c->puede_entrar);
    jw_kint(w, "completadas", c->completadas);
    jw_kint(w, "no_presentado", c->no_presentado);
    jw_obj_close(w);
    return w->err;
}

struct clientes_pager {
    struct api_pager base;
    struct app *app;
    struct principal caller; /* a copy: later pages run after the handler */
    char *q;
    struct api_page_rows rows; /* its cursor: the last client's id */
};

static br_err page_cliente(void *ud, const struct cliente_view *c)
{
    struct clientes_pager *p = ud;
    return api_page_row(&p->rows, w_cliente, c, NULL, c->perfil.id);
}

static br_err clientes_page(struct api_pager *base, struct jw *w, bool *more)
{
    struct clientes_pager *p = (struct clientes_pager *)base;
    int64_t n = api_page_start(&p->rows, w);
    br_err rc = mostrador_clientes(p->app, &p->caller, p->q, api_page_after_id(&p->rows), n,
                                   page_cliente, p);
    return api_page_end(&p->rows, rc, n, more);
}

static void clientes_tail(struct api_pager *base, struct jw *w)
{
    struct clientes_pager *p = (struct clientes_pager *)base;
    api_page_siguiente(&p->rows, w, p->rows.last_id);
}

static void clientes_pager_free(struct api_pager *base)
{
    struct clientes_pager *p = (struct clientes_pager *)base;
    principal_clear(&p->caller);
    free(p->q);
    free(p);
}

void api_clientes_get(struct http_req *r)
{
    const struct principal *caller = api_caller(r);
    struct clientes_pager *p = xcalloc(1, sizeof *p);
    p->base = (struct api_pager){clientes_page, clientes_tail, clientes_pager_free, NULL};
    p->app = api_app(r);
    memcpy(p->caller.user_id, caller->user_id, sizeof p->caller.user_id);
    p->caller.has_perfil = caller->has_perfil;
    if (caller->has_perfil) {
        p->caller.perfil = caller->perfil;
        p->caller.perfil.rol = xstrdup_or_null(caller->perfil.rol);
        p->caller.perfil.nombre = NULL;
        p->caller.perfil.telefono = NULL;
    }
    const char *q = http_req_query(r, "q");
    const char *cursor = http_req_query(r, "cursor");
    p->q = q ? xstrdup(q) : NULL;
    const char *bad = NULL;
    /* a client is refused before her parameters are judged */
    br_err rc = principal_is_staff(caller) ? BR_OK : err_set(BR_FORBIDDEN, "Sin permisos");
    if (!rc && !api_page_limit(&p->rows, http_req_query(r, "limit"))) bad = "limit";
    if (!rc && !bad && cursor && *cursor) {
        if (!uuid_parse(cursor, strlen(cursor), p->rows.last_id))
            bad = "cursor";
        else
            p->rows.has_last = true;
    }
    if (rc || bad) {
        if (rc) {
            api_reply_err(r, rc);
        } else {
            char msg[64];
            snprintf(msg, sizeof msg, "Parámetro inválido: %s", bad);
            http_reply_error(r, 400, msg);
        }
        clientes_pager_free(&p->base);
        return;
    }
    const char *one = http_req_query(r, "id");
    if (one) {
        /* one client by id (the agenda's rows name them): a list of one or none */
        clientes_pager_free(&p->base);
        br_id id;
        if (!uuid_parse(one, strlen(one), id)) {
            http_reply_error(r, 400, "Parámetro inválido: id");
            return;
        }
        struct cliente_view c;
        rc = store_cliente_get(api_app(r)->store, id, &c);
        struct jw w;
        api_list_begin(&w, "clientes");
        if (!rc) {
            /* a staff account is not a client the desk serves */
            if (!rol_is_staff(c.perfil.rol)) rc = w_cliente(&w, &c);
            cliente_view_clear(&c);
        }
        api_list_reply(r, rc == BR_NOTFOUND ? BR_OK : rc, &w);
        return;
    }
    api_list_pages(r, "clientes", &p->base);
}

/* --- POST /api/clientes, PATCH /api/clientes/{id} ------------------------------------ */

/* A client's nombre, telefono and email members of o, as api_opt_member
 * reads them; a message names the member with prefix before it
 * ("cliente." in a booking's body). False after replying 400. */
static bool cliente_members(struct http_req *r, json_t *o, const char *prefix,
                            struct mostrador_cliente *c)
{
    static const char *const keys[] = {"nombre", "telefono", "email"};
    const char **out[] = {&c->nombre, &c->telefono, &c->email};
    for (size_t i = 0; i < ARRAY_LEN(keys); i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", prefix, keys[i]);
        if (!api_opt_member(r, o, keys[i], name, out[i])) return false;
    }
    return true;
}

/* Replies status {"cliente": *c} after rc's BR_OK, else rc's error; clears *c. */
static void reply_cliente(struct http_req *r, br_err rc, int status, struct cliente_view *c)
{
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    api_begin_member(&w, "cliente");
    rc = w_cliente(&w, c);
    cliente_view_clear(c);
    if (rc)
        api_reply_err(r, rc);
    else
        api_reply(r, status, &w);
}

void api_clientes_post(struct http_req *r)
{
    struct mostrador_cliente in = {0};
    if (!cliente_members(r, http_req_json(r), "", &in)) return;
    struct cliente_view c;
    bool creada = false;
    br_err rc = mostrador_alta(api_app(r), api_caller(r), &in, &c, &creada);
    reply_cliente(r, rc, creada ? 201 : 200, &c);
}

/* --- PATCH /api/clientes/{id} ---------------------------------------------------------- */

API_SERVES(api_cliente_path, "/api/clientes/", "")

void api_cliente_patch(struct http_req *r)
{
    br_id id;
    enum api_path k = api_path_id(http_req_path(r), "/api/clientes/", "", id);
    json_t *body = http_req_json(r);
    struct mostrador_cliente f = {0};
    if (!cliente_members(r, body, "", &f)) return;
    struct mostrador_correccion in = {
        .nombre = f.nombre,
        .has_telefono = json_object_get(body, "telefono") != NULL,
        .telefono = f.telefono,
        .has_email = json_object_get(body, "email") != NULL,
        .email = f.email,
    };
    /* an id that is not a UUID is not found, once the body is judged */
    struct cliente_view c;
    br_err rc =
        mostrador_corregir(api_app(r), api_caller(r), k == API_PATH_ID ? id : NULL, &in, &c);
    reply_cliente(r, rc, 200, &c);
}

/* --- POST /api/agenda/citas ----------------------------------------------------------- */

/* An optional boolean member: false when absent or null. False (after
 * replying 400) when it holds another type. */
static bool opt_bool(struct http_req *r, json_t *body, const char *key, bool *out)
{
    json_t *v = json_object_get(body, key);
    *out = false;
    if (!v || json_is_null(v)) return true;
    if (!json_is_boolean(v)) {
        api_bad_field(r, key);
        return false;
    }
    *out = json_is_true(v);
    return true;
}

void api_agenda_citas_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    char *scratch[3], *s4 = NULL;
    struct mostrador_cliente nuevo = {0};
    struct mostrador_reserva in = {0};
    api_booking_fields(body, &in.cita, scratch);
    in.cliente_id = api_id_field(body, "cliente_id", &s4);
    json_t *cliente = json_object_get(body, "cliente");
    bool ok = api_opt_string(r, body, "notas", &in.cita.notas) &&
              opt_bool(r, body, "fuera_de_horario", &in.fuera_de_horario);
    if (ok && cliente && !json_is_null(cliente)) {
        if (!json_is_object(cliente)) {
            http_reply_error(r, 400, "Campo inválido: cliente");
            ok = false;
        } else {
            ok = cliente_members(r, cliente, "cliente.", &nuevo);
            in.nuevo = &nuevo;
        }
    }
    if (ok) {
        struct cita c;
        br_err rc = mostrador_reservar(api_app(r), api_caller(r), &in, &c);
        if (rc)
            api_reply_err(r, rc);
        else
            api_reply_cita(r, 201, &c);
    }
    api_booking_fields_free(scratch);
    free(s4);
}

/* --- POST /api/citas/{id}/asistencia -------------------------------------------------- */

bool api_asistencia_path(const char *path)
{
    br_id id;
    return api_path_id(path, API_CITAS_PREFIX, "/asistencia", id) != API_PATH_OTHER;
}

void api_citas_asistencia(struct http_req *r)
{
    br_id id;
    enum api_path k = api_path_id(http_req_path(r), API_CITAS_PREFIX, "/asistencia", id);
    json_t *body = http_req_json(r);
    const char *estado = NULL;
    if (!api_opt_string(r, body, "estado", &estado)) return;
    /* an id that is not a UUID is not found, once the caller is judged */
    br_err rc = mostrador_asistencia(api_app(r), api_caller(r),
                                     k == API_PATH_ID ? id : "00000000-0000-0000-0000-000000000000",
                                     estado);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    rc = api_begin_one_cita(r, id, &w);
    if (rc)
        api_reply_err(r, rc);
    else
        api_reply(r, 200, &w);
}
