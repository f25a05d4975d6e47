/*
 * citas.c - GET and POST /api/citas.
 */
#include "api.h"
#include "../core/booking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes key: an object when present (true: opened, for the caller to
 * write its members and close it), else null (false). */
static bool w_object_or_null(struct jw *w, const char *key, bool present)
{
    jw_key(w, key);
    if (present)
        jw_obj_open(w);
    else
        jw_null(w);
    return present;
}

/* One element of the listing: the appointment plus perfil, barbero and
 * servicio, each null when the row it names is missing. */
static br_err add_cita(struct jw *w, const void *row)
{
    const struct cita_view *v = row;
    jw_obj_open(w);
    api_w_cita_members(w, &v->cita);
    if (w_object_or_null(w, "perfil", v->has_perfil)) {
        jw_kstr(w, "nombre", v->perfil_nombre);
        jw_kstr(w, "telefono", v->perfil_telefono);
        jw_obj_close(w);
    }
    if (w_object_or_null(w, "barbero", v->barbero_nombre != NULL)) {
        jw_kstr(w, "nombre", v->barbero_nombre);
        jw_kstr(w, "foto_url", v->barbero_foto_url);
        jw_obj_close(w);
    }
    if (w_object_or_null(w, "servicio", v->servicio_nombre != NULL)) {
        jw_kstr(w, "nombre", v->servicio_nombre);
        jw_kint(w, "duracion_min", v->servicio_duracion_min);
        jw_kreal(w, "precio", v->servicio_precio);
        jw_obj_close(w);
    }
    jw_obj_close(w);
    return w->err;
}

br_err api_w_cita_view(void *ud, const struct cita_view *v)
{
    return add_cita(ud, v);
}

/* A store_cita_fn for one appointment: writes "cita": <its view>. */
struct one_cita {
    struct jw *w;
    bool found;
};

static br_err add_one_cita(void *ud, const struct cita_view *v)
{
    struct one_cita *o = ud;
    o->found = true;
    jw_key(o->w, "cita");
    return add_cita(o->w, v);
}

br_err api_begin_one_cita(struct http_req *r, const char *id, struct jw *w)
{
    api_begin(w);
    struct one_cita o = {w, false};
    br_err rc = store_cita_view(api_app(r)->store, id, add_one_cita, &o);
    if (!rc && !o.found) rc = err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc) jw_free(w);
    return rc;
}

/* --- the listing, page by page ------------------------------------------------------ */

/* Reads the listing API_PAGE_ROWS rows (or API_PAGE_BYTES) at a time, each
 * page a read of its own that starts after the last row given; it owns
 * copies of everything it needs, since later pages run after the handler
 * has returned. */
struct citas_pager {
    struct api_pager base;
    struct app *app;
    /* the request, while its first page is read: that page is read with the
     * session (api_session_citas); NULL after */
    struct http_req *req;
    const char *cliente_param; /* ?cliente_id=, for a barbero or an admin */
    char *scope;               /* NULL: everybody's */
    char *estado;              /* NULL: any */
    br_ts desde, hasta;
    bool has_desde, has_hasta;
    struct api_page_rows rows; /* its cursor's key: the last row's fecha_inicio */
    /* a client's own listing, to be remembered when one page holds it */
    bool memo;
    struct memo_ticket ticket;
};

static void set_scope(struct citas_pager *p, const char *scope);

static br_err page_row(void *ud, const struct cita_view *v)
{
    struct citas_pager *p = ud;
    return api_page_row(&p->rows, add_cita, v, v->cita.fecha_inicio, v->cita.id);
}

static br_err citas_page(struct api_pager *base, struct jw *w, bool *more)
{
    struct citas_pager *p = (struct citas_pager *)base;
    int64_t n = api_page_start(&p->rows, w);
    struct cita_range q = {
        .cliente_id = p->scope,
        .estado = p->estado,
        .desde = p->has_desde ? p->desde : NULL,
        .hasta = p->has_hasta ? p->hasta : NULL,
        .after_inicio = api_page_after_key(&p->rows),
        .after_id = api_page_after_id(&p->rows),
        .limit = n,
    };
    br_err rc = BR_OK;
    bool listed = false;
    if (p->req && api_caller(p->req)) {
        /* the first page, the caller known already (api_citas_get) */
        set_scope(p, booking_list_scope(api_caller(p->req)));
        q.cliente_id = p->scope;
        p->req = NULL;
        p->cliente_param = NULL; /* the request's: gone after its handler */
    } else if (p->req) {
        /* the first page: the caller's session first (401 before anything),
         * and a client's appointments in the same read */
        struct http_req *r = p->req;
        p->req = NULL;
        rc = api_session_citas(r, &q, page_row, p, &listed);
        if (!listed && rc) return rc;
        if (!listed) {
            set_scope(p, booking_list_scope(api_caller(r)));
            q.cliente_id = p->scope;
        } else {
            p->scope = xstrdup(api_caller(r)->user_id);
        }
        p->cliente_param = NULL; /* the request's: gone after its handler */
    }
    if (!listed) rc = booking_list(p->app, &q, page_row, p);
    return api_page_end(&p->rows, rc, n, more);
}

/* "siguiente": the cursor of the next page, null at the end; only when the
 * request set a limit. */
static void citas_tail(struct api_pager *base, struct jw *w)
{
    struct citas_pager *p = (struct citas_pager *)base;
    char cursor[ISO8601_LEN + 1 + UUID_LEN + 1];
    snprintf(cursor, sizeof cursor, "%s_%s", p->rows.last_key, p->rows.last_id);
    api_page_siguiente(&p->rows, w, cursor);
}

/* The listing's scope once the caller is known: a client's own; for a
 * barbero or an admin everybody's, or one client's when ?cliente_id= names
 * one (an id that is not a UUID matches nothing). */
static void set_scope(struct citas_pager *p, const char *scope)
{
    const char *cliente = p->cliente_param;
    br_id cliente_id;
    if (!scope && cliente && *cliente)
        scope = uuid_parse(cliente, strlen(cliente), cliente_id)
                    ? cliente_id
                    : "00000000-0000-0000-0000-000000000000"; /* the nil UUID: nobody's */
    p->scope = scope ? xstrdup(scope) : NULL;
}

static void citas_whole(struct api_pager *base, const char *text, size_t len)
{
    struct citas_pager *p = (struct citas_pager *)base;
    if (p->memo) memo_listing_put(p->app->memo, &p->ticket, text, len);
}

/* What a client's listing depends on besides her: every parameter, in
 * canonical form, estado (any text) last so that no two differ alike.
 * False when it does not fit. */
static bool memo_query(const struct citas_pager *p, char *out, size_t n)
{
    int k = snprintf(out, n, "%s|%s|%lld|%s_%s|%s", p->has_desde ? p->desde : "",
                     p->has_hasta ? p->hasta : "", (long long)p->rows.remaining,
                     p->rows.has_last ? p->rows.last_key : "",
                     p->rows.has_last ? p->rows.last_id : "", p->estado ? p->estado : "");
    return k >= 0 && (size_t)k < n;
}

/* The caller's session (401 before anything else), then, for a client, her
 * own listing as remembered while nothing it shows has changed (SQLite:
 * memo_listing_get). True when that answered the request. */
static bool citas_remembered(struct http_req *r, struct citas_pager *p)
{
    br_err rc = api_session(r, HTTP_AUTH_USER);
    if (rc) {
        api_reply_err(r, rc);
        return true;
    }
    const char *own = booking_list_scope(api_caller(r));
    char query[MEMO_KEY];
    if (!own || !memo_query(p, query, sizeof query)) return false;
    char *text;
    size_t len;
    if (memo_listing_get(p->app->memo, own, query, &p->ticket, &text, &len)) {
        http_reply_json(r, 200, text, len);
        return true;
    }
    p->memo = true;
    return false;
}

static void citas_pager_free(struct api_pager *base)
{
    struct citas_pager *p = (struct citas_pager *)base;
    free(p->scope);
    free(p->estado);
    free(p);
}

/* An optional ISO 8601 bound: absent or empty is no bound; else canonical. */
static bool param_ts(const char *s, br_ts out, bool *has)
{
    *has = false;
    if (!s || !*s) return true;
    int64_t ms;
    if (!iso8601_parse(s, strlen(s), &ms)) return false;
    iso8601_format(ms, out);
    *has = true;
    return true;
}

/* cursor: "<fecha_inicio>_<id>" exactly as a "siguiente" gives it. */
static bool param_cursor(const char *s, struct citas_pager *p)
{
    if (!s || !*s) return true;
    size_t len = strlen(s);
    if (len != ISO8601_LEN + 1 + UUID_LEN || s[ISO8601_LEN] != '_') return false;
    int64_t ms;
    if (!iso8601_parse(s, ISO8601_LEN, &ms)) return false;
    iso8601_format(ms, p->rows.last_key);
    if (memcmp(p->rows.last_key, s, ISO8601_LEN) != 0) return false;
    br_id id;
    if (!uuid_parse(s + ISO8601_LEN + 1, UUID_LEN, id)) return false;
    memcpy(p->rows.last_id, id, sizeof p->rows.last_id);
    p->rows.has_last = true;
    return true;
}

void api_citas_get(struct http_req *r)
{
    struct citas_pager *p = xcalloc(1, sizeof *p);
    p->base = (struct api_pager){citas_page, citas_tail, citas_pager_free, citas_whole};
    p->app = api_app(r);
    const char *bad = NULL;
    if (!param_ts(http_req_query(r, "desde"), p->desde, &p->has_desde))
        bad = "desde";
    else if (!param_ts(http_req_query(r, "hasta"), p->hasta, &p->has_hasta))
        bad = "hasta";
    else if (!api_page_limit(&p->rows, http_req_query(r, "limit")))
        bad = "limit";
    else if (!param_cursor(http_req_query(r, "cursor"), p))
        bad = "cursor";
    if (bad) {
        /* the session is checked before the parameters (401 first) */
        br_err rc = api_session(r, HTTP_AUTH_USER);
        char msg[64];
        snprintf(msg, sizeof msg, "Parámetro inválido: %s", bad);
        if (rc)
            api_reply_err(r, rc);
        else
            http_reply_error(r, 400, msg);
        citas_pager_free(&p->base);
        return;
    }
    p->cliente_param = http_req_query(r, "cliente_id");
    p->estado = xstrdup_or_null(api_query_opt(r, "estado"));
    if (memo_remembers(p->app->memo) && citas_remembered(r, p)) {
        citas_pager_free(&p->base);
        return;
    }
    p->req = r;
    api_list_pages(r, "citas", &p->base);
}

void api_citas_post(struct http_req *r)
{
    json_t *body = http_req_json(r);
    char *scratch[3];
    struct booking_input in = {0};
    api_booking_fields(body, &in, scratch);
    bool missing = !in.barbero_id || !*in.barbero_id || !in.servicio_id || !*in.servicio_id ||
                   !in.fecha_inicio || !*in.fecha_inicio;
    /* a wrongly typed notas is refused after the required fields (step 2) */
    if (missing || api_opt_string(r, body, "notas", &in.notas)) {
        struct cita c;
        br_err rc = booking_create(api_app(r), api_caller(r), &in, &c);
        if (rc)
            api_reply_err(r, rc);
        else
            api_reply_cita(r, 201, &c);
    }
    api_booking_fields_free(scratch);
}
