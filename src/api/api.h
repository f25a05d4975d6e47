/*
 * api.h - the handlers: one file per resource (citas, fotos, admin, auth,
 * catalog, health, objects). Each parses the request, calls the core, and
 * renders the answer; none runs SQL or touches files.
 */
#ifndef BR_API_H
#define BR_API_H

#include "../core/app.h"
#include "../http/http.h"
#include "../memo/memo.h"
#include "../util/jsonw.h"

#define SESSION_COOKIE "barberia_session"

/* The routing table and the hook that authenticates callers. */
extern const struct http_route api_routes[];
extern const size_t api_nroutes;
br_err api_authorize(struct http_req *req, enum http_auth mode);
/* For a route with HTTP_AUTH_IN_HANDLER: api_authorize (a user session)
 * that also lists a client's appointments in q through fn, read with the
 * session (ident_authenticate_citas). When *listed, the caller is set and
 * the result is the listing's; else it is api_authorize's. */
br_err api_authorize_citas(struct http_req *r, const struct cita_range *q, store_cita_fn fn,
                           void *ud, bool *listed);

/* The caller as authenticated for this request (routes with auth). */
struct api_caller {
    struct principal p;
    char token[64]; /* the session token the request carried */
};
static inline struct app *api_app(struct http_req *r)
{
    return http_req_app(r);
}
static inline const struct principal *api_caller(struct http_req *r)
{
    struct api_caller *c = http_req_user(r);
    return c ? &c->p : NULL;
}
/* The session token a request carries (Bearer header first, then the
 * cookie); NULL when none. OUT: *n its length. */
const char *api_request_token(struct http_req *r, size_t *n);

/* --- reading JSON bodies ------------------------------------------------------- */

/* An optional text field: OUT *out the string, or NULL when absent or null.
 * Returns false (after replying 400 "Campo inválido: <key>") when the field
 * holds another JSON type. */
bool api_opt_string(struct http_req *r, json_t *body, const char *key, const char **out);

/* An identifier field: a string as it is; another JSON type as its JSON
 * text (so that it is simply not found); NULL when absent or null.
 * *scratch receives any allocation (caller frees). */
const char *api_id_field(json_t *body, const char *key, char **scratch);

/* --- rendering ------------------------------------------------------------------ */

/* Answers are written with the streaming writer (util/jsonw.h), straight
 * into the buffer libmicrohttpd sends. */
#define API_REPLY_MAX (256u * 1024 * 1024)

/* Writes a record as a JSON object (the specification's fields); the
 * _members forms write the members only, into an object the caller opened
 * (to add more). */
void api_w_perfil(struct jw *w, const struct perfil *p);
void api_w_perfil_members(struct jw *w, const struct perfil *p);
void api_w_cita(struct jw *w, const struct cita *c);
void api_w_cita_members(struct jw *w, const struct cita *c);
void api_w_foto(struct jw *w, const struct foto *f);

/* Starts an answer (jw_init and the opening '{'). */
void api_begin(struct jw *w);
/* Ends the answer begun with api_begin (the closing '}') and replies with
 * it; a writer failure answers 500. */
void api_reply(struct http_req *r, unsigned status, struct jw *w);

/* A listing {"<key>": [ ... ]}: api_list_begin opens it; the visitor writes
 * one element per row; api_list_reply closes it and replies 200, or, when
 * rc is not BR_OK, throws it away and replies the error of rc. */
void api_list_begin(struct jw *w, const char *key);
void api_list_reply(struct http_req *r, br_err rc, struct jw *w);
/* The catalog's listings, which clients may cache: with an ETag that is a
 * digest of the body, and 304 to an If-None-Match that names it. The tag is
 * always current: api_memo_reply answers with the remembered copy when
 * nothing was committed since it was read (memo_catalog_get), else the
 * handler reads the store and api_list_reply_memo replies and remembers. */
bool api_memo_reply(struct http_req *r, enum memo_catalog slot, struct memo_ticket *t);
void api_list_reply_memo(struct http_req *r, br_err rc, struct jw *w, enum memo_catalog slot,
                         const struct memo_ticket *t);

/* A listing read page by page, for api_list_pages. page writes the next
 * rows as elements into w's open array, at most about API_PAGE_BYTES of
 * them, and sets *more when rows may remain; tail, when not NULL, writes
 * members after the array; free releases the pager. All three may run on
 * the connection's I/O thread after the handler returned, so the pager
 * holds copies of whatever it needs from the request. */
struct api_pager {
    br_err (*page)(struct api_pager *p, struct jw *w, bool *more);
    void (*tail)(struct api_pager *p, struct jw *w);
    void (*free)(struct api_pager *p);
    /* optional: shown the whole answer when one page held it, before it
     * is sent */
    void (*whole)(struct api_pager *p, const char *text, size_t len);
};
#define API_PAGE_ROWS  256
#define API_PAGE_BYTES (256 * 1024)
/* Whether the page being written into w has reached API_PAGE_BYTES: a
 * pager's row callback then stops the read (returns BR_TOOLARGE, which its
 * page function takes for "full", not for an error). */
static inline bool api_page_full(const struct jw *w)
{
    return w->b.len >= API_PAGE_BYTES;
}
/* Replies 200 {"<key>": [...]<tail>} (takes p): whole, with its length,
 * when the first page holds every row; else streamed page by page, so that
 * memory stays bounded whatever the row count. An error on the first page
 * is the answer; a later one cuts the connection. */
void api_list_pages(struct http_req *r, const char *key, struct api_pager *p);

/* {"error": msg} with the status for a core error: BR_INVALID 400,
 * BR_UNAUTH 401, BR_FORBIDDEN 403, BR_NOTFOUND 404, BR_CONFLICT 409,
 * BR_TOOLARGE 413, BR_THROTTLED 429, BR_BUSY 503, everything else 500; with
 * `Retry-After` when the error was set with err_set_retry(). */
void api_reply_err(struct http_req *r, br_err rc);
/* Replies 200 {"ok": true}. */
void api_reply_ok(struct http_req *r);

/* --- handlers --------------------------------------------------------------------- */

void api_citas_get(struct http_req *r);
void api_citas_post(struct http_req *r);
void api_fotos_get(struct http_req *r);
void api_fotos_post(struct http_req *r);
void api_fotos_delete(struct http_req *r);
void api_admin_usuarios_get(struct http_req *r);
void api_admin_usuarios_patch(struct http_req *r);
void api_auth_signup(struct http_req *r);
void api_auth_login(struct http_req *r);
void api_auth_logout(struct http_req *r);
void api_auth_me(struct http_req *r);
void api_barberos_get(struct http_req *r);
void api_servicios_get(struct http_req *r);
void api_healthz(struct http_req *r);
void api_metrics(struct http_req *r);
/* Whether a client address (as http_req_remote gives it) is loopback. */
bool api_is_loopback(const char *addr);
void api_object_get(struct http_req *r);
/* The web app (web.c): the HTML shell of every page path, and the assets. */
void api_web_page(struct http_req *r);
void api_web_asset(struct http_req *r);

/* issue 9, bookable hours (agenda.c) */
void api_config_get(struct http_req *r);
void api_admin_barberos_get(struct http_req *r);
void api_admin_barberos_post(struct http_req *r);
void api_admin_barbero_patch(struct http_req *r); /* /api/admin/barberos/{id} */
void api_admin_barbero_put(struct http_req *r);   /* /api/admin/barberos/{id}/horario */
void api_admin_servicios_get(struct http_req *r);
void api_admin_servicios_post(struct http_req *r);
void api_admin_servicio_patch(struct http_req *r); /* /api/admin/servicios/{id} */
void api_barbero_horario_get(struct http_req *r);  /* /api/barberos/{id}/horario */
void api_admin_ausencias_get(struct http_req *r);
void api_admin_ausencias_post(struct http_req *r);
void api_admin_ausencia_delete(struct http_req *r); /* /api/admin/ausencias/{id} */
void api_disponibilidad_get(struct http_req *r);

/* --- issue 9, workstream B: cancel and reschedule --- */
#define API_CITAS_PREFIX "/api/citas/"
/* POST /api/citas/{id}/cancelar and /api/citas/{id}/reprogramar. */
void api_citas_accion(struct http_req *r);
/* Whether path is /api/citas/<id>/cancelar or /api/citas/<id>/reprogramar
 * (<id> one non-empty segment): the paths api_citas_accion serves. */
bool api_citas_accion_path(const char *path);
/* One element of GET /api/citas's listing (a store_cita_fn; ud: struct jw). */
br_err api_w_cita_view(void *ud, const struct cita_view *v);

#endif
