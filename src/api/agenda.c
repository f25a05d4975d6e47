/*
 * agenda.c - issue 9's bookable hours: GET /api/config, the catalog's
 * administration (barberos and servicios with activo), the barbers' weekly
 * schedules, days off and shop closures, and GET /api/disponibilidad.
 */
#include "api.h"
#include "../core/agenda.h"
#include "../util/log.h"
#include "../util/tz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    api_reply(r, 200, &w);
}

/* --- shared ---------------------------------------------------------------------------- */

#define NOMBRE_MAX 200
#define URL_MAX    2048
#define MOTIVO_MAX 500

/* A store failure: 503 when busy, else the generic 500 (the database's own
 * message goes to the log, never to the client). */
static void store_fail(struct http_req *r, br_err rc, const char *what)
{
    if (rc == BR_BUSY) {
        api_reply_err(r, rc);
        return;
    }
    log_error("agenda: %s: %s", what, err_msg());
    http_reply_error(r, 500, "Error interno del servidor");
}

static void bad_field(struct http_req *r, const char *key)
{
    char msg[96];
    snprintf(msg, sizeof msg, "Campo inválido: %s", key);
    http_reply_error(r, 400, msg);
}

/* The id in a path "<prefix><id><suffix>". Returns 0 with the id, 1 when
 * the segment is not a UUID (the thing is simply not found), 2 when the
 * path has another shape (no such route). */
static int path_id(struct http_req *r, const char *prefix, const char *suffix, br_id out)
{
    const char *p = http_req_path(r);
    size_t np = strlen(prefix);
    if (strncmp(p, prefix, np) != 0) return 2;
    const char *seg = p + np;
    const char *end = strchr(seg, '/');
    size_t n = end ? (size_t)(end - seg) : strlen(seg);
    if (strcmp(seg + n, suffix) != 0 || n == 0) return 2;
    return uuid_parse(seg, n, out) ? 0 : 1;
}

/* A text field that, when present, must be a non-empty string of at most
 * max bytes. false after replying 400. */
static bool opt_text(struct http_req *r, json_t *body, const char *key, size_t max,
                     const char **out)
{
    if (!api_opt_string(r, body, key, out)) return false;
    if (*out && (!**out || strlen(*out) > max)) {
        bad_field(r, key);
        return false;
    }
    return true;
}

/* --- the catalog's administration -------------------------------------------------------- */

static void w_barbero(struct jw *w, const struct barbero *b)
{
    jw_obj_open(w);
    jw_kstr(w, "id", b->id);
    jw_kstr(w, "nombre", b->nombre);
    jw_kstr(w, "foto_url", b->foto_url);
    jw_key(w, "activo");
    jw_bool(w, b->activo);
    jw_obj_close(w);
}

static void w_servicio(struct jw *w, const struct servicio *s)
{
    jw_obj_open(w);
    jw_kstr(w, "id", s->id);
    jw_kstr(w, "nombre", s->nombre);
    jw_kint(w, "duracion_min", s->duracion_min);
    jw_kreal(w, "precio", s->precio);
    jw_key(w, "activo");
    jw_bool(w, s->activo);
    jw_obj_close(w);
}

/* Ends a listing: a store failure other than busy is logged (what) and
 * answered as the generic 500, never with the database's message. */
static void list_reply(struct http_req *r, br_err rc, struct jw *w, const char *what)
{
    if (rc && rc != BR_BUSY) {
        log_error("agenda: %s: %s", what, err_msg());
        rc = err_set(BR_INTERNAL, "Error interno del servidor");
    }
    api_list_reply(r, rc, w);
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
    list_reply(r, rc, &w, "barber listing");
}

void api_admin_servicios_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "servicios");
    br_err rc = store_servicios_all(api_app(r)->store, add_servicio, &w);
    list_reply(r, rc, &w, "service listing");
}

/* Replies status {"barbero": <the stored row>}. */
static void reply_barbero(struct http_req *r, unsigned status, const char *id)
{
    struct barbero b;
    br_err rc = store_barbero_get(api_app(r)->store, id, &b);
    if (rc == BR_NOTFOUND) {
        http_reply_error(r, 404, "Barbero no encontrado");
    } else if (rc) {
        store_fail(r, rc, "barber read");
    } else {
        struct jw w;
        api_begin(&w);
        jw_key(&w, "barbero");
        w_barbero(&w, &b);
        api_reply(r, status, &w);
    }
    barbero_clear(&b);
}

static void reply_servicio(struct http_req *r, unsigned status, const char *id)
{
    struct servicio s;
    br_err rc = store_servicio_get(api_app(r)->store, id, &s);
    if (rc == BR_NOTFOUND) {
        http_reply_error(r, 404, "Servicio no encontrado");
    } else if (rc) {
        store_fail(r, rc, "service read");
    } else {
        struct jw w;
        api_begin(&w);
        jw_key(&w, "servicio");
        w_servicio(&w, &s);
        api_reply(r, status, &w);
    }
    servicio_clear(&s);
}

void api_admin_barberos_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct barbero b = {0};
    const char *nombre = NULL, *foto = NULL;
    if (!opt_text(r, body, "nombre", NOMBRE_MAX, &nombre) ||
        !opt_text(r, body, "foto_url", URL_MAX, &foto))
        return;
    if (!nombre) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    uuid_v4(b.id);
    b.nombre = (char *)nombre;
    b.foto_url = (char *)foto;
    br_err rc = store_barbero_add(api_app(r)->store, &b);
    if (rc)
        store_fail(r, rc, "barber insert");
    else
        reply_barbero(r, 201, b.id);
}

/* JSON integer in [lo, hi]. */
static bool int_in(json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
    if (!json_is_integer(v)) return false;
    json_int_t n = json_integer_value(v);
    if (n < lo || n > hi) return false;
    *out = n;
    return true;
}

static bool precio_ok(json_t *v, double *out)
{
    if (!json_is_number(v)) return false;
    double d = json_number_value(v);
    if (!(d >= 0 && d <= 1e9)) return false;
    *out = d;
    return true;
}

void api_admin_servicios_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *nombre = NULL;
    if (!opt_text(r, body, "nombre", NOMBRE_MAX, &nombre)) return;
    json_t *dur = json_object_get(body, "duracion_min"), *pre = json_object_get(body, "precio");
    if (dur && json_is_null(dur)) dur = NULL;
    if (pre && json_is_null(pre)) pre = NULL;
    if (!nombre || !dur || !pre) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    struct servicio s = {.nombre = (char *)nombre};
    if (!int_in(dur, 1, 1440, &s.duracion_min)) {
        bad_field(r, "duracion_min");
        return;
    }
    if (!precio_ok(pre, &s.precio)) {
        bad_field(r, "precio");
        return;
    }
    uuid_v4(s.id);
    br_err rc = store_servicio_add(api_app(r)->store, &s);
    if (rc)
        store_fail(r, rc, "service insert");
    else
        reply_servicio(r, 201, s.id);
}

/* activo: absent (-1) or a boolean. */
static bool opt_activo(struct http_req *r, json_t *body, int *out)
{
    json_t *v = json_object_get(body, "activo");
    *out = -1;
    if (!v) return true;
    if (!json_is_boolean(v)) {
        bad_field(r, "activo");
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
    int k = path_id(r, "/api/admin/barberos/", "", id);
    if (k == 2) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    if (k == 1) {
        http_reply_error(r, 404, "Barbero no encontrado");
        return;
    }
    json_t *body = http_req_json(r);
    struct barbero_patch p = {.activo = -1};
    p.set_foto_url = json_object_get(body, "foto_url") != NULL;
    if (!opt_text(r, body, "nombre", NOMBRE_MAX, &p.nombre) ||
        !opt_text(r, body, "foto_url", URL_MAX, &p.foto_url) || !opt_activo(r, body, &p.activo))
        return;
    if (json_object_get(body, "nombre") && !p.nombre) { /* null: a name is required */
        bad_field(r, "nombre");
        return;
    }
    br_err rc = store_barbero_update(api_app(r)->store, id, &p);
    if (rc == BR_NOTFOUND)
        http_reply_error(r, 404, "Barbero no encontrado");
    else if (rc)
        store_fail(r, rc, "barber update");
    else
        reply_barbero(r, 200, id);
}

void api_admin_barbero_put(struct http_req *r)
{
    br_id id;
    int k = path_id(r, "/api/admin/barberos/", "/horario", id);
    if (k == 2) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    if (k == 1) {
        http_reply_error(r, 404, "Barbero no encontrado");
        return;
    }
    barbero_horario_put(r, id);
}

void api_admin_servicio_patch(struct http_req *r)
{
    br_id id;
    int k = path_id(r, "/api/admin/servicios/", "", id);
    if (k == 2) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    if (k == 1) {
        http_reply_error(r, 404, "Servicio no encontrado");
        return;
    }
    json_t *body = http_req_json(r);
    struct servicio_patch p = {.activo = -1};
    if (!opt_text(r, body, "nombre", NOMBRE_MAX, &p.nombre) || !opt_activo(r, body, &p.activo))
        return;
    if (json_object_get(body, "nombre") && !p.nombre) {
        bad_field(r, "nombre");
        return;
    }
    json_t *dur = json_object_get(body, "duracion_min"), *pre = json_object_get(body, "precio");
    if (dur && !int_in(dur, 1, 1440, &p.duracion_min)) {
        bad_field(r, "duracion_min");
        return;
    }
    if (pre) {
        if (!precio_ok(pre, &p.precio)) {
            bad_field(r, "precio");
            return;
        }
        p.set_precio = true;
    }
    br_err rc = store_servicio_update(api_app(r)->store, id, &p);
    if (rc == BR_NOTFOUND)
        http_reply_error(r, 404, "Servicio no encontrado");
    else if (rc)
        store_fail(r, rc, "service update");
    else
        reply_servicio(r, 200, id);
}

/* --- weekly schedules -------------------------------------------------------------------- */

static br_err add_tramo(void *ud, const char *id, const char *nombre, const struct horario_tramo *t)
{
    (void)id;
    (void)nombre;
    struct jw *w = ud;
    char a[6], b[6];
    agenda_hhmm_format(t->inicio, a);
    agenda_hhmm_format(t->fin, b);
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
    list_reply(r, rc, &w, "schedule read");
}

void api_barbero_horario_get(struct http_req *r)
{
    br_id id;
    int k = path_id(r, "/api/barberos/", "/horario", id);
    if (k == 2) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    struct barbero b;
    br_err rc = k == 1 ? BR_NOTFOUND : store_barbero_get(api_app(r)->store, id, &b);
    if (rc == BR_NOTFOUND) {
        http_reply_error(r, 404, "Barbero no encontrado");
        return;
    }
    if (rc) {
        store_fail(r, rc, "barber read");
        return;
    }
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
        bad_field(r, "horario");
        return;
    }
    size_t n = json_array_size(arr);
    if (n > AGENDA_TRAMOS_MAX) {
        http_reply_error(r, 400, "Demasiados tramos de horario");
        return;
    }
    struct horario_tramo *t = xcalloc(n ? n : 1, sizeof *t);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        int64_t dia = 0;
        if (!json_is_object(e) || !int_in(json_object_get(e, "dia"), 1, 7, &dia) ||
            !agenda_hhmm_parse(json_string_value(json_object_get(e, "inicio")), &t[i].inicio) ||
            !agenda_hhmm_parse(json_string_value(json_object_get(e, "fin")), &t[i].fin)) {
            free(t);
            http_reply_error(r, 400,
                             "Horario inválido: cada tramo es {dia: 1-7, inicio: "
                             "\"HH:MM\", fin: \"HH:MM\"}");
            return;
        }
        t[i].dia = (int)dia;
    }
    br_err rc = agenda_horario_check(t, (int)n);
    if (!rc) rc = store_horario_set(api_app(r)->store, id, t, (int)n);
    free(t);
    if (rc == BR_INVALID)
        api_reply_err(r, rc);
    else if (rc == BR_NOTFOUND)
        http_reply_error(r, 404, "Barbero no encontrado");
    else if (rc)
        store_fail(r, rc, "schedule write");
    else
        reply_horario(r, id);
}

/* --- days off and closures ------------------------------------------------------------------ */

static void w_ausencia(struct jw *w, const struct ausencia *a)
{
    jw_obj_open(w);
    jw_kstr(w, "id", a->id);
    jw_kstr(w, "barbero_id", a->barbero_id[0] ? a->barbero_id : NULL);
    jw_kstr(w, "desde", a->desde);
    jw_kstr(w, "hasta", a->hasta);
    jw_kstr(w, "motivo", a->motivo);
    jw_obj_close(w);
}

static br_err add_ausencia(void *ud, const struct ausencia *a)
{
    w_ausencia(ud, a);
    return ((struct jw *)ud)->err;
}

void api_admin_ausencias_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "ausencias");
    br_err rc = store_ausencias_each(api_app(r)->store, add_ausencia, &w);
    list_reply(r, rc, &w, "absence listing");
}

void api_admin_ausencias_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct ausencia a;
    memset(&a, 0, sizeof a);
    const char *desde = NULL, *hasta = NULL, *motivo = NULL;
    if (!api_opt_string(r, body, "desde", &desde) || !api_opt_string(r, body, "hasta", &hasta) ||
        !api_opt_string(r, body, "motivo", &motivo))
        return;
    if (!desde || !*desde || !hasta || !*hasta) {
        http_reply_error(r, 400, "Faltan campos requeridos");
        return;
    }
    json_t *bv = json_object_get(body, "barbero_id");
    if (bv && !json_is_null(bv) && !json_is_string(bv)) {
        bad_field(r, "barbero_id");
        return;
    }
    struct tz_date d1, d2;
    if (!tz_date_parse(desde, &d1)) {
        http_reply_error(r, 400, "desde inválida");
        return;
    }
    if (!tz_date_parse(hasta, &d2)) {
        http_reply_error(r, 400, "hasta inválida");
        return;
    }
    if (tz_days_from_civil(&d2) < tz_days_from_civil(&d1)) {
        http_reply_error(r, 400, "hasta es anterior a desde");
        return;
    }
    if (motivo && strlen(motivo) > MOTIVO_MAX) {
        bad_field(r, "motivo");
        return;
    }
    struct app *app = api_app(r);
    if (json_is_string(bv)) {
        const char *s = json_string_value(bv);
        struct barbero b;
        br_err rc = uuid_parse(s, strlen(s), a.barbero_id)
                        ? store_barbero_get(app->store, a.barbero_id, &b)
                        : BR_NOTFOUND;
        if (rc == BR_NOTFOUND) {
            http_reply_error(r, 404, "Barbero no encontrado");
            return;
        }
        if (rc) {
            store_fail(r, rc, "barber read");
            return;
        }
        barbero_clear(&b);
    }
    uuid_v4(a.id);
    memcpy(a.desde, desde, 11);
    memcpy(a.hasta, hasta, 11);
    a.motivo = (char *)motivo;
    iso8601_format(clock_now_ms(), a.created_at);
    br_err rc = store_ausencia_add(app->store, &a);
    if (rc) {
        store_fail(r, rc, "absence insert");
        return;
    }
    struct jw w;
    api_begin(&w);
    jw_key(&w, "ausencia");
    w_ausencia(&w, &a);
    api_reply(r, 201, &w);
}

void api_admin_ausencia_delete(struct http_req *r)
{
    br_id id;
    int k = path_id(r, "/api/admin/ausencias/", "", id);
    if (k == 2) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    br_err rc = k == 1 ? BR_NOTFOUND : store_ausencia_delete(api_app(r)->store, id);
    if (rc == BR_NOTFOUND)
        http_reply_error(r, 404, "Ausencia no encontrada");
    else if (rc)
        store_fail(r, rc, "absence delete");
    else
        api_reply_ok(r);
}

/* --- GET /api/disponibilidad ------------------------------------------------------------------ */

/* Writes the answer's JSON text: false after replying 500. */
static bool disponibilidad_text(struct http_req *r, const struct agenda_query *q,
                                const struct agenda_dia *d, char **text, size_t *len)
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
        agenda_hhmm_format(h->local_min, local);
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
 * not reached the instant at which the notice passes its first slot. */
void api_disponibilidad_get(struct http_req *r)
{
    const char *barbero = http_req_query(r, "barbero_id");
    struct agenda_query q = {
        .servicio_id = http_req_query(r, "servicio_id"),
        .fecha = http_req_query(r, "fecha"),
        .barbero_id = barbero && *barbero ? barbero : NULL,
        .now_ms = clock_now_ms(),
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
    bool ok = disponibilidad_text(r, &q, &d, &text, &len);
    if (ok && memo) memo_slots_put(app->memo, &t, q.now_ms, d.vigente_hasta_ms, text, len);
    agenda_dia_clear(&d);
    if (ok) http_reply_json(r, 200, text, len);
}
