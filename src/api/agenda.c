/*
 * agenda.c - bookable hours: GET /api/config, the catalog's
 * administration (barberos and servicios with activo), the barbers' weekly
 * schedules, days off and shop closures, and GET /api/disponibilidad.
 */
#include "api.h"
#include "../core/agenda.h"
#include "../core/catalog.h"
#include "../domain/rules.h"
#include "../util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the paths each route under a prefix serves (api_routes) */
API_SERVES(api_barbero_path, "/api/admin/barberos/", "")
API_SERVES(api_barbero_horario_admin_path, "/api/admin/barberos/", "/horario")
API_SERVES(api_servicio_path, "/api/admin/servicios/", "")
API_SERVES(api_barbero_horario_path, "/api/barberos/", "/horario")
API_SERVES(api_ausencia_path, "/api/admin/ausencias/", "")

/* --- GET /api/config ---------------------------------------------------------------- */

void api_config_get(struct http_req *r)
{
    const struct config *cfg = api_app(r)->cfg;
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "zona", cfg->tz);
    jw_kint(&w, "paso_min", cfg->slot_min);
    jw_kint(&w, "antelacion_min", cfg->min_notice_min);
    jw_kint(&w, "dias_max", cfg->max_days_ahead);
    jw_kint(&w, "limite_cancelacion_min", cfg->cancel_cutoff_min);
    jw_kstr(&w, "tienda", cfg->shop_name);
    jw_kstr(&w, "direccion", cfg->shop_address); /* null when not set */
    jw_kstr(&w, "telefono", cfg->shop_phone);    /* null when not set */
    jw_key(&w, "whatsapp");                      /* whether messages go by WhatsApp too */
    jw_bool(&w, api_app(r)->whatsapp != NULL);
    api_reply(r, 200, &w);
}

/* --- shared ---------------------------------------------------------------------------- */

/* A store failure: api_fail with the generic 500 (the database's own
 * message goes to the log, never to the client). */
static void store_fail(struct http_req *r, br_err rc)
{
    api_fail(r, rc, API_ERROR_INTERNAL);
}

/* Answers a write that returned rc, when it failed: BR_INVALID (the
 * caller's) with its message; BR_NOTFOUND, when not_found is not NULL,
 * 404 not_found; anything else store_fail's. False (nothing replied) when
 * rc is BR_OK. */
static bool write_failed(struct http_req *r, br_err rc, const char *not_found)
{
    if (rc == BR_INVALID)
        api_reply_err(r, rc);
    else if (rc == BR_NOTFOUND && not_found)
        http_reply_error(r, 404, not_found);
    else if (rc)
        store_fail(r, rc);
    return rc != BR_OK;
}

/* A text field that, when present, must be a string the rule ok accepts.
 * false after replying 400. */
static bool opt_text(struct http_req *r, json_t *body, const char *key, bool (*ok)(const char *),
                     const char **out)
{
    if (!api_opt_string(r, body, key, out)) return false;
    if (*out && !ok(*out)) {
        api_bad_field(r, key);
        return false;
    }
    return true;
}

/* --- the catalog's administration -------------------------------------------------------- */

static void w_barbero(struct jw *w, const void *row)
{
    const struct barbero *b = row;
    jw_obj_open(w);
    api_w_barbero_members(w, b);
    jw_key(w, "activo");
    jw_bool(w, b->activo);
    /* the admin's only: where the barber's notices go, who speaks for them */
    jw_kstr(w, "email", b->email);
    jw_kstr(w, "usuario_id", b->usuario_id[0] ? b->usuario_id : NULL);
    jw_key(w, "feed"); /* a calendar feed link is live (avisos.c) */
    jw_bool(w, b->feed);
    jw_obj_close(w);
}

static void w_servicio(struct jw *w, const void *row)
{
    const struct servicio *s = row;
    jw_obj_open(w);
    api_w_servicio_members(w, s);
    jw_key(w, "activo");
    jw_bool(w, s->activo);
    jw_kint(w, "margen_min", s->margen_min);
    jw_obj_close(w);
}

static br_err add_barbero(void *ud, const struct barbero *b)
{
    w_barbero(ud, b);
    return ((struct jw *)ud)->err;
}

static br_err add_servicio(void *ud, const struct servicio *s)
{
    w_servicio(ud, s);
    return ((struct jw *)ud)->err;
}

void api_admin_barberos_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "barberos");
    br_err rc = store_barberos_all(api_app(r)->store, add_barbero, &w);
    api_list_reply_fail(r, rc, &w);
}

void api_admin_servicios_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "servicios");
    br_err rc = store_servicios_all(api_app(r)->store, add_servicio, &w);
    api_list_reply_fail(r, rc, &w);
}

/* Replies status {"<key>": <row>}, written by write, when the row was read
 * (rc BR_OK); else 404 not_found, or a store failure. */
static void reply_row(struct http_req *r, unsigned status, br_err rc, const char *not_found,
                      const char *key, void (*write)(struct jw *, const void *), const void *row)
{
    if (api_reply_if_failed(r, rc, not_found)) return;
    struct jw w;
    api_begin_member(&w, key);
    write(&w, row);
    api_reply(r, status, &w);
}

/* Replies status {"barbero": <the stored row>}. */
static void reply_barbero(struct http_req *r, unsigned status, const char *id)
{
    struct barbero b;
    br_err rc = store_barbero_get(api_app(r)->store, id, &b);
    reply_row(r, status, rc, "Barbero no encontrado", "barbero", w_barbero, &b);
    barbero_clear(&b);
}

static void reply_servicio(struct http_req *r, unsigned status, const char *id)
{
    struct servicio s;
    br_err rc = store_servicio_get(api_app(r)->store, id, &s);
    reply_row(r, status, rc, "Servicio no encontrado", "servicio", w_servicio, &s);
    servicio_clear(&s);
}

void api_admin_barberos_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct barbero b = {0};
    const char *nombre = NULL, *foto = NULL;
    if (!opt_text(r, body, "nombre", rule_nombre_ok, &nombre) ||
        !opt_text(r, body, "foto_url", rule_foto_url_ok, &foto))
        return;
    b.nombre = (char *)nombre;
    b.foto_url = (char *)foto;
    br_err rc = catalog_barbero_add(api_app(r), &b);
    if (!write_failed(r, rc, NULL)) reply_barbero(r, 201, b.id);
}

/* A JSON integer the rule ok accepts. */
static bool int_ok(json_t *v, bool (*ok)(int64_t), int64_t *out)
{
    if (!json_is_integer(v) || !ok(json_integer_value(v))) return false;
    *out = json_integer_value(v);
    return true;
}

/* A JSON number (integer or real) that is a price. */
static bool precio_ok(json_t *v, double *out)
{
    if (!json_is_number(v) || !rule_precio_ok(json_number_value(v))) return false;
    *out = json_number_value(v);
    return true;
}

void api_admin_servicios_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *nombre = NULL;
    if (!opt_text(r, body, "nombre", rule_nombre_ok, &nombre)) return;
    json_t *dur = json_object_get(body, "duracion_min"), *pre = json_object_get(body, "precio");
    if (dur && json_is_null(dur)) dur = NULL;
    if (pre && json_is_null(pre)) pre = NULL;
    if (!nombre || !dur || !pre) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    struct servicio s = {.nombre = (char *)nombre};
    if (!int_ok(dur, rule_duracion_ok, &s.duracion_min)) {
        api_bad_field(r, "duracion_min");
        return;
    }
    if (!precio_ok(pre, &s.precio)) {
        api_bad_field(r, "precio");
        return;
    }
    json_t *mar = json_object_get(body, "margen_min");
    if (mar && !json_is_null(mar) && !int_ok(mar, rule_margen_ok, &s.margen_min)) {
        api_bad_field(r, "margen_min");
        return;
    }
    br_err rc = catalog_servicio_add(api_app(r), &s);
    if (!write_failed(r, rc, NULL)) reply_servicio(r, 201, s.id);
}

/* activo: absent (-1) or a boolean. */
static bool opt_activo(struct http_req *r, json_t *body, int *out)
{
    json_t *v = json_object_get(body, "activo");
    *out = -1;
    if (!v) return true;
    if (!json_is_boolean(v)) {
        api_bad_field(r, "activo");
        return false;
    }
    *out = json_is_true(v) ? 1 : 0;
    return true;
}

/* PATCH /api/admin/barberos/{id} and PUT /api/admin/barberos/{id}/horario. */
static void barbero_horario_put(struct http_req *r, const char *id);

void api_admin_barbero_patch(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/barberos/", "", "Barbero no encontrado", id)) return;
    json_t *body = http_req_json(r);
    struct barbero_patch p = {.activo = -1};
    p.set_foto_url = json_object_get(body, "foto_url") != NULL;
    if (!opt_text(r, body, "nombre", rule_nombre_ok, &p.nombre) ||
        !opt_text(r, body, "foto_url", rule_foto_url_ok, &p.foto_url) ||
        !opt_activo(r, body, &p.activo) || !api_opt_string(r, body, "email", &p.email) ||
        !api_opt_string(r, body, "usuario_id", &p.usuario_id))
        return;
    /* present (null clears): the barber's notices (core/catalog.h) */
    p.set_email = json_object_get(body, "email") != NULL;
    p.set_usuario = json_object_get(body, "usuario_id") != NULL;
    if (json_object_get(body, "nombre") && !p.nombre) { /* null: a name is required */
        api_bad_field(r, "nombre");
        return;
    }
    br_err rc = catalog_barbero_update(api_app(r), id, &p);
    /* the caller's too: a usuario_id that names nobody or another barber's */
    if (rc == BR_CONFLICT || (rc == BR_NOTFOUND && !strcmp(err_msg(), "Usuario no encontrado")))
        api_reply_err(r, rc);
    else if (!write_failed(r, rc, "Barbero no encontrado"))
        reply_barbero(r, 200, id);
}

void api_admin_barbero_put(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/barberos/", "/horario", "Barbero no encontrado", id))
        return;
    barbero_horario_put(r, id);
}

void api_admin_servicio_patch(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/servicios/", "", "Servicio no encontrado", id)) return;
    json_t *body = http_req_json(r);
    struct servicio_patch p = {.activo = -1, .margen_min = -1};
    if (!opt_text(r, body, "nombre", rule_nombre_ok, &p.nombre) || !opt_activo(r, body, &p.activo))
        return;
    if (json_object_get(body, "nombre") && !p.nombre) {
        api_bad_field(r, "nombre");
        return;
    }
    json_t *dur = json_object_get(body, "duracion_min"), *pre = json_object_get(body, "precio");
    if (dur && !int_ok(dur, rule_duracion_ok, &p.duracion_min)) {
        api_bad_field(r, "duracion_min");
        return;
    }
    if (pre) {
        if (!precio_ok(pre, &p.precio)) {
            api_bad_field(r, "precio");
            return;
        }
        p.set_precio = true;
    }
    json_t *mar = json_object_get(body, "margen_min");
    if (mar && !int_ok(mar, rule_margen_ok, &p.margen_min)) {
        api_bad_field(r, "margen_min");
        return;
    }
    br_err rc = catalog_servicio_update(api_app(r), id, &p);
    if (!write_failed(r, rc, "Servicio no encontrado")) reply_servicio(r, 200, id);
}

/* --- weekly schedules -------------------------------------------------------------------- */

static br_err add_tramo(void *ud, const char *id, const char *nombre, const struct horario_tramo *t)
{
    (void)id;
    (void)nombre;
    struct jw *w = ud;
    char a[6], b[6];
    rule_hhmm_format(t->inicio, a);
    rule_hhmm_format(t->fin, b);
    jw_obj_open(w);
    jw_kint(w, "dia", t->dia);
    jw_kstr(w, "inicio", a);
    jw_kstr(w, "fin", b);
    jw_obj_close(w);
    return w->err;
}

/* Replies 200 {"horario": [...]} for a barber known to exist. */
static void reply_horario(struct http_req *r, const char *id)
{
    struct jw w;
    api_list_begin(&w, "horario");
    br_err rc = store_horario_each(api_app(r)->store, id, add_tramo, &w);
    api_list_reply_fail(r, rc, &w);
}

void api_barbero_horario_get(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/barberos/", "/horario", "Barbero no encontrado", id)) return;
    struct barbero b;
    br_err rc = store_barbero_get(api_app(r)->store, id, &b);
    if (api_reply_if_failed(r, rc, "Barbero no encontrado")) return;
    barbero_clear(&b);
    reply_horario(r, id);
}

static void barbero_horario_put(struct http_req *r, const char *id)
{
    json_t *arr = json_object_get(http_req_json(r), "horario");
    if (!arr || json_is_null(arr)) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    if (!json_is_array(arr)) {
        api_bad_field(r, "horario");
        return;
    }
    size_t n = json_array_size(arr);
    if (n > RULE_TRAMOS_MAX) {
        http_reply_error(r, 400, "Demasiados tramos de horario");
        return;
    }
    struct horario_tramo *t = xcalloc(n ? n : 1, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        int64_t dia = 0;
        if (!json_is_object(e) || !int_ok(json_object_get(e, "dia"), rule_dia_ok, &dia) ||
            !rule_hhmm_parse(json_string_value(json_object_get(e, "inicio")), &t[i].inicio) ||
            !rule_hhmm_parse(json_string_value(json_object_get(e, "fin")), &t[i].fin)) {
            free(t);
            http_reply_error(r, 400,
                             "Horario inválido: cada tramo es {dia: 1-7, inicio: "
                             "\"HH:MM\", fin: \"HH:MM\"}");
            return;
        }
        t[i].dia = (int)dia;
    }
    br_err rc = agenda_horario_set(api_app(r), id, t, (int)n);
    free(t);
    if (!write_failed(r, rc, "Barbero no encontrado")) reply_horario(r, id);
}

/* --- days off and closures ------------------------------------------------------------------ */

static br_err w_ausencia(void *ud, const struct ausencia *a)
{
    struct jw *w = ud;
    jw_obj_open(w);
    jw_kstr(w, "id", a->id);
    jw_kstr(w, "barbero_id", a->barbero_id[0] ? a->barbero_id : NULL);
    jw_kstr(w, "desde", a->desde);
    jw_kstr(w, "hasta", a->hasta);
    jw_kstr(w, "motivo", a->motivo);
    jw_obj_close(w);
    return w->err;
}

void api_admin_ausencias_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "ausencias");
    br_err rc = store_ausencias_each(api_app(r)->store, w_ausencia, &w);
    api_list_reply_fail(r, rc, &w);
}

void api_admin_ausencias_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct ausencia_nueva in = {0};
    if (!api_opt_string(r, body, "desde", &in.desde) ||
        !api_opt_string(r, body, "hasta", &in.hasta) ||
        !api_opt_string(r, body, "motivo", &in.motivo))
        return;
    if (!in.desde || !*in.desde || !in.hasta || !*in.hasta) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    json_t *bv = json_object_get(body, "barbero_id");
    if (bv && !json_is_null(bv) && !json_is_string(bv)) {
        api_bad_field(r, "barbero_id");
        return;
    }
    in.barbero_id = json_string_value(bv);                      /* NULL unless a string */
    if (in.barbero_id && !*in.barbero_id) in.barbero_id = NULL; /* "": absent, the whole shop */
    struct ausencia a;
    br_err rc = agenda_ausencia_add(api_app(r), &in, &a);
    if (rc == BR_INVALID || rc == BR_NOTFOUND) {
        api_reply_err(r, rc);
        return;
    }
    if (rc) {
        store_fail(r, rc);
        return;
    }
    struct jw w;
    api_begin_member(&w, "ausencia");
    w_ausencia(&w, &a);
    /* the appointments it falls on, left as they are (avisos.c) */
    rc = api_w_afectadas(&w, api_app(r), &a);
    if (rc) {
        /* the day off is stored: a failed listing is told in the log only */
        http_req_set_detail(r, err_msg());
        jw_free(&w);
        api_begin_member(&w, "ausencia");
        w_ausencia(&w, &a);
    }
    api_reply(r, 201, &w);
}

void api_admin_ausencia_delete(struct http_req *r)
{
    br_id id;
    if (!api_path_id_or_404(r, "/api/admin/ausencias/", "", "Ausencia no encontrada", id)) return;
    br_err rc = agenda_ausencia_delete(api_app(r), id);
    if (!api_reply_if_failed(r, rc, "Ausencia no encontrada")) api_reply_ok(r);
}

/* --- GET /api/disponibilidad, GET /api/agenda/huecos ------------------------------------------ */

bool api_huecos_text(struct http_req *r, const struct agenda_query *q, const struct agenda_dia *d,
                     char **text, size_t *len)
{
    struct jw w;
    api_begin(&w);
    jw_kstr(&w, "fecha", d->fecha);
    jw_kstr(&w, "zona", api_app(r)->cfg->tz);
    char sid[UUID_LEN + 1], bid[UUID_LEN + 1];
    if (!uuid_parse(q->servicio_id, strlen(q->servicio_id), sid)) sid[0] = '\0';
    jw_kstr(&w, "servicio_id", sid);
    if (q->barbero_id && uuid_parse(q->barbero_id, strlen(q->barbero_id), bid))
        jw_kstr(&w, "barbero_id", bid);
    else
        jw_kstr(&w, "barbero_id", NULL);
    jw_key(&w, "huecos");
    jw_arr_open(&w);
    for (int i = 0; i < d->nhuecos; i++) {
        const struct agenda_hueco *h = &d->huecos[i];
        br_ts a, b;
        char local[6];
        iso8601_format(h->inicio_ms, a);
        iso8601_format(h->fin_ms, b);
        rule_hhmm_format(h->local_min, local);
        jw_obj_open(&w);
        jw_kstr(&w, "inicio", a);
        jw_kstr(&w, "fin", b);
        jw_kstr(&w, "local", local);
        jw_key(&w, "barberos");
        jw_arr_open(&w);
        for (int k = 0; k < h->nb; k++)
            jw_str(&w, d->ids[d->idx[h->first + k]]);
        jw_arr_close(&w);
        jw_obj_close(&w);
    }
    jw_arr_close(&w);
    jw_obj_close(&w);
    if (jw_finish(&w, text, len) == BR_OK) return true;
    http_reply_error(r, 500, "Error interno del servidor");
    return false;
}

/* Where answers are remembered (SQLite: memo/memo.h), a day's answer is kept under
 * everything it depends on besides the database (the query as given and
 * the shop's date now) while nothing it reads is changed and the clock has
 * not reached the instant at which the notice passes its first slot. The
 * desk's answer (sin_aviso) is never kept. */
static void reply_dia(struct http_req *r, bool sin_aviso)
{
    struct agenda_query q = {
        .servicio_id = http_req_query(r, "servicio_id"),
        .fecha = http_req_query(r, "fecha"),
        .barbero_id = api_query_opt(r, "barbero_id"),
        .now_ms = clock_now_ms(),
        .sin_aviso = sin_aviso,
    };
    struct app *app = api_app(r);
    struct memo_ticket t;
    char key[MEMO_KEY], *text;
    size_t len;
    bool memo = memo_remembers(app->memo) && agenda_disponibilidad_clave(&q, key, sizeof key);
    if (memo && memo_slots_get(app->memo, key, q.now_ms, &t, &text, &len)) {
        http_reply_json(r, 200, text, len);
        return;
    }
    struct agenda_dia d;
    br_err rc = agenda_disponibilidad(app, &q, &d);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    bool ok = api_huecos_text(r, &q, &d, &text, &len);
    if (ok && memo) memo_slots_put(app->memo, &t, q.now_ms, d.vigente_hasta_ms, text, len);
    agenda_dia_clear(&d);
    if (ok) http_reply_json(r, 200, text, len);
}

void api_disponibilidad_get(struct http_req *r)
{
    reply_dia(r, false);
}

/* GET /api/agenda/huecos: the front desk's, without the minimum notice (a
 * client at the counter may sit down now) */
void api_agenda_huecos_get(struct http_req *r)
{
    reply_dia(r, true);
}
