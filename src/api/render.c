/*
 * render.c - answers (records, listings, errors) written with the streaming
 * JSON writer, and reading request fields (see api.h).
 */
#include "api.h"
#include "../core/booking.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void api_w_perfil_members(struct jw *w, const struct perfil *p)
{
    jw_kstr(w, "id", p->id);
    jw_kstr(w, "rol", p->rol);
    jw_kstr(w, "nombre", p->nombre);
    jw_kstr(w, "telefono", p->telefono);
    jw_kstr(w, "created_at", p->created_at);
}

void api_w_perfil(struct jw *w, const struct perfil *p)
{
    jw_obj_open(w);
    api_w_perfil_members(w, p);
    jw_obj_close(w);
}

void api_w_cita_members(struct jw *w, const struct cita *c)
{
    jw_kstr(w, "id", c->id);
    jw_kstr(w, "cliente_id", c->cliente_id);
    jw_kstr(w, "barbero_id", c->barbero_id);
    jw_kstr(w, "servicio_id", c->servicio_id);
    jw_kstr(w, "fecha_inicio", c->fecha_inicio);
    jw_kstr(w, "fecha_fin", c->fecha_fin);
    jw_kstr(w, "estado", c->estado);
    jw_kstr(w, "notas", c->notas);
    jw_kstr(w, "google_event_id", c->google_event_id);
}

void api_w_foto(struct jw *w, const struct foto *f)
{
    jw_obj_open(w);
    jw_kstr(w, "id", f->id);
    jw_kstr(w, "cita_id", f->cita_id);
    jw_kstr(w, "cliente_id", f->cliente_id);
    jw_kstr(w, "tipo", f->tipo);
    jw_kstr(w, "url", f->url);
    jw_kstr(w, "storage_path", f->storage_path);
    jw_kstr(w, "created_at", f->created_at);
    jw_obj_close(w);
}

void api_w_barbero_members(struct jw *w, const struct barbero *b)
{
    jw_kstr(w, "id", b->id);
    jw_kstr(w, "nombre", b->nombre);
    jw_kstr(w, "foto_url", b->foto_url);
}

void api_w_servicio_members(struct jw *w, const struct servicio *s)
{
    jw_kstr(w, "id", s->id);
    jw_kstr(w, "nombre", s->nombre);
    jw_kint(w, "duracion_min", s->duracion_min);
    jw_kreal(w, "precio", s->precio);
}

void api_reply_cita(struct http_req *r, unsigned status, struct cita *c)
{
    struct jw w;
    api_begin_member(&w, "cita");
    jw_obj_open(&w);
    api_w_cita_members(&w, c);
    jw_obj_close(&w);
    cita_clear(c);
    api_reply(r, status, &w);
}

void api_begin(struct jw *w)
{
    jw_init(w, API_REPLY_MAX);
    jw_obj_open(w);
}

void api_begin_member(struct jw *w, const char *key)
{
    api_begin(w);
    jw_key(w, key);
}

/* Closes w's object and takes its text; when that fails, answers 500 and
 * returns false. */
static bool take_text(struct http_req *r, struct jw *w, char **text, size_t *len)
{
    jw_obj_close(w);
    br_err rc = jw_finish(w, text, len);
    if (rc == BR_OK) return true;
    api_fail(r, err_set(rc, "the answer could not be written (%s)", err_name(rc)),
             API_ERROR_INTERNAL);
    return false;
}

void api_reply(struct http_req *r, unsigned status, struct jw *w)
{
    char *text;
    size_t len;
    if (take_text(r, w, &text, &len)) http_reply_json(r, status, text, len);
}

void api_list_begin(struct jw *w, const char *key)
{
    api_begin_member(w, key);
    jw_arr_open(w);
}

/* Ends a listing read whole: its error is the answer (false), else the
 * array is closed and the text taken (true). */
static bool list_text(struct http_req *r, br_err rc, struct jw *w, char **text, size_t *len)
{
    if (rc) {
        jw_free(w);
        api_reply_err(r, rc);
        return false;
    }
    jw_arr_close(w);
    return take_text(r, w, text, len);
}

void api_list_reply(struct http_req *r, br_err rc, struct jw *w)
{
    char *text;
    size_t len;
    if (list_text(r, rc, w, &text, &len)) http_reply_json(r, 200, text, len);
}

void api_list_reply_fail(struct http_req *r, br_err rc, struct jw *w)
{
    if (rc) {
        jw_free(w);
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    api_list_reply(r, rc, w);
}

bool api_memo_reply(struct http_req *r, enum memo_catalog slot, struct memo_ticket *t)
{
    char *text, tag[MEMO_TAG];
    size_t len;
    if (!memo_catalog_get(api_app(r)->memo, slot, t, &text, &len, tag)) return false;
    http_reply_json_etag(r, text, len, tag);
    return true;
}

void api_list_reply_memo(struct http_req *r, br_err rc, struct jw *w, enum memo_catalog slot,
                         const struct memo_ticket *t)
{
    char *text;
    size_t len;
    if (!list_text(r, rc, w, &text, &len)) return;
    char etag[MEMO_TAG];
    memo_catalog_put(api_app(r)->memo, slot, t, text, len, etag);
    http_reply_json_etag(r, text, len, etag);
}

/* {"error": msg} (the generic message when msg is empty), with
 * Retry-After when the error was set with err_set_retry(). */
static void reply_error(struct http_req *r, unsigned status, const char *msg)
{
    if (err_retry_after() > 0) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", err_retry_after());
        http_add_header(r, "Retry-After", secs);
    }
    http_reply_error(r, status, *msg ? msg : API_ERROR_INTERNAL);
}

void api_fail(struct http_req *r, br_err rc, const char *generic)
{
    const char *detail = err_msg();
    http_req_set_detail(r, *detail ? detail : err_name(rc));
    if (err_unavailable(rc))
        reply_error(r, 503, detail);
    else
        reply_error(r, 500, generic ? generic : detail);
}

void api_reply_err(struct http_req *r, br_err rc)
{
    unsigned status;
    switch (rc) {
    case BR_INVALID:
        status = 400;
        break;
    case BR_UNAUTH:
        status = 401;
        break;
    case BR_FORBIDDEN:
        status = 403;
        break;
    case BR_NOTFOUND:
        status = 404;
        break;
    case BR_CONFLICT:
        status = 409;
        break;
    case BR_TOOLARGE:
        status = 413;
        break;
    case BR_THROTTLED:
        status = 429;
        break;
    default:
        api_fail(r, rc, NULL);
        return;
    }
    reply_error(r, status, err_msg());
}

bool api_reply_if_failed(struct http_req *r, br_err rc, const char *not_found)
{
    if (!rc) return false;
    if (rc == BR_NOTFOUND && not_found)
        http_reply_error(r, 404, not_found);
    else if (rc == BR_NOTFOUND)
        api_reply_err(r, rc);
    else
        api_fail(r, rc, API_ERROR_INTERNAL);
    return true;
}

void api_reply_ok(struct http_req *r)
{
    struct jw w;
    api_begin(&w);
    jw_key(&w, "ok");
    jw_bool(&w, true);
    api_reply(r, 200, &w);
}

const char *api_query_opt(struct http_req *r, const char *name)
{
    const char *v = http_req_query(r, name);
    return v && *v ? v : NULL;
}

void api_bad_field(struct http_req *r, const char *name)
{
    char msg[96];
    snprintf(msg, sizeof msg, "Campo inválido: %s", name);
    http_reply_error(r, 400, msg);
}

bool api_opt_member(struct http_req *r, json_t *o, const char *key, const char *name,
                    const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return true;
    }
    api_bad_field(r, name);
    return false;
}

bool api_opt_string(struct http_req *r, json_t *body, const char *key, const char **out)
{
    return api_opt_member(r, body, key, key, out);
}

const char *api_id_field(json_t *body, const char *key, char **scratch)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v)) return NULL;
    if (json_is_string(v)) return json_string_value(v);
    *scratch = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    return *scratch;
}

void api_booking_fields(json_t *body, struct booking_input *in, char *scratch[3])
{
    scratch[0] = scratch[1] = scratch[2] = NULL;
    in->barbero_id = api_id_field(body, "barbero_id", &scratch[0]);
    in->servicio_id = api_id_field(body, "servicio_id", &scratch[1]);
    in->fecha_inicio = api_id_field(body, "fecha_inicio", &scratch[2]);
}

void api_booking_fields_free(char *scratch[3])
{
    for (int i = 0; i < 3; i++)
        free(scratch[i]);
}

/* --- listings page by page --------------------------------------------------------- */

bool api_page_limit(struct api_page_rows *pg, const char *s)
{
    pg->remaining = -1;
    if (!s || !*s) return true;
    int64_t v = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9') return false;
        v = v * 10 + (*c - '0');
        if (v > API_LIMIT_MAX) return false;
    }
    if (v < 1) return false;
    pg->remaining = v;
    return true;
}

int64_t api_page_start(struct api_page_rows *pg, struct jw *w)
{
    int64_t n = API_PAGE_ROWS;
    if (pg->remaining >= 0 && pg->remaining + 1 < n) n = pg->remaining + 1;
    pg->w = w;
    pg->got = 0;
    pg->full = pg->extra = false;
    return n;
}

static bool page_takes(struct api_page_rows *pg)
{
    if (pg->full || pg->extra) return false;
    if (pg->remaining == 0) {
        pg->extra = true;
        return false;
    }
    return true;
}

static void page_took(struct api_page_rows *pg)
{
    pg->got++;
    if (pg->remaining > 0) pg->remaining--;
    if (api_page_full(pg->w)) pg->full = true;
}

br_err api_page_row(struct api_page_rows *pg, api_row_writer write, const void *row,
                    const char *key, const char *id)
{
    if (!page_takes(pg)) return BR_OK;
    br_err rc = write(pg->w, row);
    if (rc) return rc;
    if (key) snprintf(pg->last_key, sizeof pg->last_key, "%s", key);
    snprintf(pg->last_id, sizeof pg->last_id, "%s", id);
    pg->has_last = true;
    page_took(pg);
    return BR_OK;
}

br_err api_page_end(struct api_page_rows *pg, br_err rc, int64_t n, bool *more)
{
    if (rc) return rc;
    if (pg->extra) pg->has_next = true;
    *more = !pg->extra && (pg->full || pg->got == n);
    return BR_OK;
}

void api_page_siguiente(const struct api_page_rows *pg, struct jw *w, const char *cursor)
{
    if (pg->remaining < 0) return;
    jw_key(w, "siguiente");
    jw_str(w, pg->has_next ? cursor : NULL);
}

struct list_stream {
    struct jw w;
    struct api_pager *p;
    bool more; /* pages may remain */
};

/* The end of the listing: the array's ']' and the tail's members. */
static void list_end(struct list_stream *ls)
{
    jw_arr_close(&ls->w);
    if (ls->p->tail) ls->p->tail(ls->p, &ls->w);
}

static br_err list_fill(void *ud, struct buf *out, bool *eof)
{
    struct list_stream *ls = ud;
    while (ls->w.b.len == 0 && ls->more) {
        br_err rc = ls->p->page(ls->p, &ls->w, &ls->more);
        if (rc) return rc;
        if (!ls->more) {
            list_end(ls);
            jw_obj_close(&ls->w);
        }
    }
    if (ls->w.err) return err_set(ls->w.err, "the listing does not fit its writer");
    br_err rc = buf_append(out, ls->w.b.p, ls->w.b.len);
    if (rc) return err_set(rc, "a page does not fit the stream's buffer");
    buf_reset(&ls->w.b);
    *eof = !ls->more;
    return BR_OK;
}

static void list_done(void *ud)
{
    struct list_stream *ls = ud;
    ls->p->free(ls->p);
    jw_free(&ls->w);
    free(ls);
}

void api_list_pages(struct http_req *r, const char *key, struct api_pager *p)
{
    struct list_stream *ls = xcalloc(1, sizeof *ls);
    ls->p = p;
    api_list_begin(&ls->w, key);
    br_err rc = p->page(p, &ls->w, &ls->more);
    if (rc) {
        api_reply_err(r, rc);
        list_done(ls);
        return;
    }
    if (!ls->more) {
        /* one page: a plain answer with a Content-Length */
        list_end(ls);
        char *text;
        size_t len;
        if (take_text(r, &ls->w, &text, &len)) {
            if (p->whole) p->whole(p, text, len);
            http_reply_json(r, 200, text, len);
        }
        p->free(p);
        free(ls);
        return;
    }
    http_reply_stream(r, 200, list_fill, ls, list_done);
}
