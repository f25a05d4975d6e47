/*
 * catalog.c - GET /api/barberos and GET /api/servicios (public, read-only),
 * and GET /healthz.
 */
#include "api.h"

static br_err add_barbero(void *ud, const struct barbero *b)
{
    struct jw *w = ud;
    jw_obj_open(w);
    api_w_barbero_members(w, b);
    jw_obj_close(w);
    return w->err;
}

static br_err add_servicio(void *ud, const struct servicio *s)
{
    struct jw *w = ud;
    jw_obj_open(w);
    api_w_servicio_members(w, s);
    jw_obj_close(w);
    return w->err;
}

static br_err read_barberos(struct store *st, struct jw *w)
{
    return store_barberos_each(st, add_barbero, w);
}

static br_err read_servicios(struct store *st, struct jw *w)
{
    return store_servicios_each(st, add_servicio, w);
}

/* Replies a public listing {"<key>": [...]} as remembered in slot
 * (api_memo_reply); else read writes its rows from the store, and the
 * answer is remembered (api_list_reply_memo). */
static void reply_memo_listing(struct http_req *r, enum memo_catalog slot, const char *key,
                               br_err (*read)(struct store *st, struct jw *w))
{
    struct memo_ticket t;
    if (api_memo_reply(r, slot, &t)) return;
    struct jw w;
    api_list_begin(&w, key);
    api_list_reply_memo(r, read(api_app(r)->store, &w), &w, slot, &t);
}

void api_barberos_get(struct http_req *r)
{
    reply_memo_listing(r, MEMO_BARBEROS, "barberos", read_barberos);
}

void api_servicios_get(struct http_req *r)
{
    reply_memo_listing(r, MEMO_SERVICIOS, "servicios", read_servicios);
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
