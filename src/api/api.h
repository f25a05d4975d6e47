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
/* The largest body POST /api/whatsapp/webhook takes: Meta's documentation
 * of the Cloud API's webhooks says their payloads can be up to 3MB, read
 * as 3 MiB so that either meaning of MB fits (every other route keeps the
 * HTTP layer's 64 KiB). */
#define API_WHATSAPP_WEBHOOK_MAX (3u * 1024 * 1024)

extern const struct http_route api_routes[];
extern const size_t api_nroutes;
/* A route's flags (struct http_route.flags, the API's own): with
 * API_ROUTE_SESSION_IN_HANDLER its handler checks the session itself,
 * first, before anything else it does, so that it may read the session with
 * its data in one statement (GET /api/citas: api_session_citas);
 * api_authorize lets such a request through untouched. Only for body-less
 * reads, whose body (if any) is ignored: nothing of the request is acted on
 * before the check. */
#define API_ROUTE_SESSION_IN_HANDLER 1u
/* The HTTP layer's authorize hook (http_auth_fn): api_session before the
 * body, except on a route flagged API_ROUTE_SESSION_IN_HANDLER. */
br_err api_authorize(struct http_req *req, enum http_auth mode);
/* Checks the request's session for mode (HTTP_AUTH_USER, HTTP_AUTH_ADMIN)
 * and attaches the caller (api_caller); else BR_UNAUTH "No autenticado"
 * (401), BR_FORBIDDEN "Sin permisos" (403: an admin route) or "Origen no
 * permitido" (a cookie write from another origin), BR_BUSY (503), or
 * BR_INTERNAL. */
br_err api_session(struct http_req *req, enum http_auth mode);
/* api_session (a user session) that also lists a client's appointments in
 * q through fn, read with the session (ident_authenticate_citas). When
 * *listed, the caller is set and the result is the listing's; else it is
 * api_session's. */
br_err api_session_citas(struct http_req *r, const struct cita_range *q, store_cita_fn fn, void *ud,
                         bool *listed);

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

/* --- ids in paths --------------------------------------------------------------- */

/* What a path "<prefix><id><suffix>" (suffix "" or "/<word>") holds, for the
 * routes that name a thing by its id in the path. The contract: an id that
 * is not a UUID is simply not found, like one that names nothing. */
enum api_path {
    API_PATH_ID,       /* a UUID (either case): out holds its canonical form */
    API_PATH_NOT_UUID, /* one non-empty segment that is not a UUID: not found */
    API_PATH_OTHER,    /* another shape (another prefix or suffix, an empty
                        * segment, more segments, a trailing slash): no such
                        * resource at all */
};
enum api_path api_path_id(const char *path, const char *prefix, const char *suffix, br_id out);
/* For a handler of "<prefix>{id}<suffix>": true with the id in out; else,
 * after replying 404 ("No encontrado" for a path of another shape,
 * not_found for a segment that is not a UUID), false. */
bool api_path_id_or_404(struct http_req *r, const char *prefix, const char *suffix,
                        const char *not_found, br_id out);
/* Defines fn, a route's "serves" check (http_route.serves) for the paths
 * "<prefix>{id}<suffix>": any other path under the prefix is no resource of
 * the route's (404, or 405 where another route's method has it). */
#define API_SERVES(fn, prefix, suffix)                                                             \
    bool fn(const char *path)                                                                      \
    {                                                                                              \
        br_id id_;                                                                                 \
        return api_path_id(path, prefix, suffix, id_) != API_PATH_OTHER;                           \
    }

/* --- query parameters ----------------------------------------------------------- */

/* A query parameter that, when empty, is as if absent: NULL then. */
const char *api_query_opt(struct http_req *r, const char *name);

/* --- reading JSON bodies ------------------------------------------------------- */

/* Replies 400 "Campo inválido: <name>". */
void api_bad_field(struct http_req *r, const char *name);

/* An optional text field: OUT *out the string, or NULL when absent or null.
 * Returns false (after replying 400 "Campo inválido: <key>") when the field
 * holds another JSON type. */
bool api_opt_string(struct http_req *r, json_t *body, const char *key, const char **out);
/* api_opt_string for the member key of the object o, which the message
 * calls name ("cliente.nombre"). */
bool api_opt_member(struct http_req *r, json_t *o, const char *key, const char *name,
                    const char **out);

/* The booking fields of a body (barbero_id, servicio_id, fecha_inicio) as
 * api_id_field reads them, into in; scratch receives their allocations
 * (free them with api_booking_fields_free). */
struct booking_input;
void api_booking_fields(json_t *body, struct booking_input *in, char *scratch[3]);
void api_booking_fields_free(char *scratch[3]);

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
void api_w_cita_members(struct jw *w, const struct cita *c);
void api_w_foto(struct jw *w, const struct foto *f);
/* The public members of a catalog record (GET /api/barberos, GET
 * /api/servicios); the admin's listings write these first, then their own. */
void api_w_barbero_members(struct jw *w, const struct barbero *b);
void api_w_servicio_members(struct jw *w, const struct servicio *s);
/* Replies status {"cita": <c>} and clears c. */
void api_reply_cita(struct http_req *r, unsigned status, struct cita *c);

/* Starts an answer (jw_init and the opening '{'). */
void api_begin(struct jw *w);
/* Starts an answer whose first member is key (api_begin, then the key):
 * the caller writes its value. */
void api_begin_member(struct jw *w, const char *key);
/* Ends the answer begun with api_begin (the closing '}') and replies with
 * it; a writer failure answers 500. */
void api_reply(struct http_req *r, unsigned status, struct jw *w);

/* A listing {"<key>": [ ... ]}: api_list_begin opens it; the visitor writes
 * one element per row; api_list_reply closes it and replies 200, or, when
 * rc is not BR_OK, throws it away and replies the error of rc. */
void api_list_begin(struct jw *w, const char *key);
void api_list_reply(struct http_req *r, br_err rc, struct jw *w);
/* api_list_reply for a listing whose every error is a failure: api_fail
 * with API_ERROR_INTERNAL (the store's own message goes to the log only). */
void api_list_reply_fail(struct http_req *r, br_err rc, struct jw *w);
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
 * pager's row callback then notes its page full and keeps no more rows,
 * letting the read run out (it returns BR_OK: the page's LIMIT bounds what
 * is left, and a row callback's error means an error, never "enough"). */
static inline bool api_page_full(const struct jw *w)
{
    return w->b.len >= API_PAGE_BYTES;
}
/* Where a pager stands in a listing with an optional ?limit= (1 to
 * API_LIMIT_MAX; its tail then says "siguiente"), kept by its row callback.
 * Each page reads api_page_start's count of rows, one more than the limit
 * leaves, which tells whether another page exists. */
struct api_page_rows {
    int64_t remaining; /* rows still to give; -1: no limit */
    bool has_next;     /* the limit stopped the listing before its end */
    /* the keyset cursor: the last row given (or the request's cursor), its
     * sort key (unused where the order's key is read from the id) and id */
    br_ts last_key;
    br_id last_id;
    bool has_last;
    /* the page being read */
    struct jw *w;
    int64_t got;
    bool full, extra;
};
#define API_LIMIT_MAX 1000
/* ?limit= (absent or empty: -1, no limit) into pg->remaining; false when
 * it is not 1 to API_LIMIT_MAX, digits only. */
bool api_page_limit(struct api_page_rows *pg, const char *limit);
/* Starts a page written into w; returns how many rows to read. */
int64_t api_page_start(struct api_page_rows *pg, struct jw *w);
/* A pager's row callback: when the row read goes on the page, write(w,
 * row) and keep key (NULL: none) and id as the cursor. A row is left out
 * once the page is over (the rest is read again next) and past the limit
 * (it tells that a next page exists). Returns the write's error. */
typedef br_err (*api_row_writer)(struct jw *w, const void *row);
br_err api_page_row(struct api_page_rows *pg, api_row_writer write, const void *row,
                    const char *key, const char *id);
/* The cursor's parts a page's read starts after: NULL on the first page. */
static inline const char *api_page_after_key(const struct api_page_rows *pg)
{
    return pg->has_last ? pg->last_key : NULL;
}
static inline const char *api_page_after_id(const struct api_page_rows *pg)
{
    return pg->has_last ? pg->last_id : NULL;
}
/* Ends the page read with n rows asked for, whose read returned rc: OUT
 * *more (when rc is BR_OK). Returns rc, the page's outcome. */
br_err api_page_end(struct api_page_rows *pg, br_err rc, int64_t n, bool *more);
/* A pager's tail: "siguiente", the cursor of the next page (cursor, or
 * null at the end), only when the request set a limit. */
void api_page_siguiente(const struct api_page_rows *pg, struct jw *w, const char *cursor);

/* Replies 200 {"<key>": [...]<tail>} (takes p): whole, with its length,
 * when the first page holds every row; else streamed page by page, so that
 * memory stays bounded whatever the row count. An error on the first page
 * is the answer; a later one cuts the connection. */
void api_list_pages(struct http_req *r, const char *key, struct api_pager *p);

/* The specification's generic message for a failure nobody expected. */
#define API_ERROR_INTERNAL "Error interno del servidor"

/* Answers a failure the handler does not answer itself - a data store, the
 * object store, a file, an outbound call, a bug - the one policy for them
 * (docs/internals/api.md): BR_BUSY answers 503 with its detail (err_msg())
 * and Retry-After when the error was set with err_set_retry(); anything
 * else 500 with generic, for the endpoints whose specification gives their
 * own message (API_ERROR_INTERNAL), or with the detail itself (generic
 * NULL: the specification's "500 with the store's message"). The detail
 * goes with the request to the log either way (http_req_set_detail). */
void api_fail(struct http_req *r, br_err rc, const char *generic);
/* Answers an outcome of the core: the caller's errors with their status and
 * message (err_msg(): the specification's) - BR_INVALID 400, BR_UNAUTH 401,
 * BR_FORBIDDEN 403, BR_NOTFOUND 404, BR_CONFLICT 409, BR_TOOLARGE 413,
 * BR_THROTTLED 429, with Retry-After when the error was set with
 * err_set_retry(); anything else is a failure, api_fail(r, rc, NULL). */
void api_reply_err(struct http_req *r, br_err rc);
/* Answers a read or a step that failed, where only "not found" is the
 * caller's: BR_NOTFOUND 404 with not_found (NULL: the error's own message,
 * as api_reply_err), anything else api_fail with API_ERROR_INTERNAL. True
 * after replying; false (nothing replied) when rc is BR_OK. */
bool api_reply_if_failed(struct http_req *r, br_err rc, const char *not_found);
/* Replies 200 {"ok": true}. */
void api_reply_ok(struct http_req *r);

/* --- handlers --------------------------------------------------------------------- */

void api_citas_get(struct http_req *r);
void api_citas_post(struct http_req *r);
void api_fotos_get(struct http_req *r);
void api_fotos_post(struct http_req *r);
/* The parts of a form other than the file that a handler reads (POST
 * /api/fotos's cita_id and tipo): the HTTP layer keeps these and ignores
 * every other part, however many (http_options.form_fields). */
extern const char *const api_form_fields[];
void api_fotos_delete(struct http_req *r);
void api_admin_usuarios_get(struct http_req *r);
void api_admin_usuarios_patch(struct http_req *r);
void api_auth_signup(struct http_req *r);
void api_auth_login(struct http_req *r);
void api_auth_logout(struct http_req *r);
void api_auth_me(struct http_req *r);
/* Answers a sign-in that returned rc: its error (api_reply_err), or
 * 200/201 {"user":{id,email},"token"} and the session cookie (takes s). */
void api_auth_reply_session(struct http_req *r, br_err rc, unsigned status,
                            struct ident_session *s);
void api_auth_clear_cookie(struct http_req *r);
/* A request that came with two session cookies (one set by a page of
 * another origin of the site to shadow ours): the deletions of every copy
 * but ours go with its answer (http_forget_cookie_copies). */
void api_auth_forget_cookie_copies(struct http_req *r);
/* the client's own account (cuenta.c) */
void api_auth_recuperar(struct http_req *r);
void api_auth_restablecer(struct http_req *r);
void api_auth_confirmar_email(struct http_req *r);
void api_auth_me_patch(struct http_req *r);
void api_auth_me_delete(struct http_req *r);
void api_auth_datos(struct http_req *r);
void api_auth_consent_get(struct http_req *r);
void api_auth_consent_post(struct http_req *r);
/* WhatsApp (whatsapp.c): a client's consent, the Graph API's webhook, an
 * appointment's messages for the admin */
void api_whatsapp_consent_get(struct http_req *r);
void api_whatsapp_consent_put(struct http_req *r);
void api_whatsapp_webhook_get(struct http_req *r);
void api_whatsapp_webhook_post(struct http_req *r);
/* GET/PUT /api/clientes/{id}/whatsapp (staff), and whether a path is one. */
void api_cliente_whatsapp_get(struct http_req *r);
void api_cliente_whatsapp_put(struct http_req *r);
bool api_cliente_whatsapp_path(const char *path);
void api_admin_cita_mensajes(struct http_req *r);
bool api_admin_cita_mensajes_path(const char *path);
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

/* bookable hours (agenda.c) */
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
void api_admin_ausencia_delete(struct http_req *r);    /* /api/admin/ausencias/{id} */
bool api_barbero_path(const char *path);               /* /api/admin/barberos/{id} */
bool api_barbero_horario_admin_path(const char *path); /* /api/admin/barberos/{id}/horario */
bool api_servicio_path(const char *path);              /* /api/admin/servicios/{id} */
bool api_barbero_horario_path(const char *path);       /* /api/barberos/{id}/horario */
bool api_ausencia_path(const char *path);              /* /api/admin/ausencias/{id} */
void api_disponibilidad_get(struct http_req *r);
void api_agenda_huecos_get(struct http_req *r);
struct agenda_query;
struct agenda_dia;
struct cambio_huecos;
/* The JSON text of GET /api/disponibilidad's answer to q (its servicio_id and
 * barbero_id as canonical ids), d: false after replying 500. */
bool api_huecos_text(struct http_req *r, const struct agenda_query *q, const struct agenda_dia *d,
                     char **text, size_t *len);
/* the barbers' notices and feeds, closures that meet bookings (avisos.c) */
bool api_feed_path(const char *path);              /* /api/barberos/{id}/agenda.ics */
bool api_feed_admin_path(const char *path);        /* /api/admin/barberos/{id}/feed */
bool api_ausencia_citas_path(const char *path);    /* /api/admin/ausencias/{id}/citas */
bool api_ausencia_cancelar_path(const char *path); /* .../{id}/cancelar-citas */
void api_barbero_feed_get(struct http_req *r);
void api_admin_barbero_feed_post(struct http_req *r);
void api_admin_barbero_feed_delete(struct http_req *r);
void api_admin_ausencia_citas_get(struct http_req *r);
void api_admin_ausencia_cancelar_post(struct http_req *r);
/* Writes "afectadas": [...], the appointments a meets (cierres.h). */
br_err api_w_afectadas(struct jw *w, struct app *app, const struct ausencia *a);

/* --- cancel and reschedule --- */
#define API_CITAS_PREFIX "/api/citas/"
/* POST /api/citas/{id}/cancelar and /api/citas/{id}/reprogramar. */
void api_citas_accion(struct http_req *r);
/* Whether path is /api/citas/<id>/cancelar or /api/citas/<id>/reprogramar
 * (<id> one non-empty segment, api_path_id): the paths api_citas_accion
 * serves. */
bool api_citas_accion_path(const char *path);
/* The body of a change (cancelar when !move: any body, ignored; reprogramar:
 * a JSON object or none): OUT *fecha, its fecha_inicio or NULL (in *scratch
 * when it was not a string: caller frees *scratch). False, after a 400
 * "JSON inválido", when reprogramar's body is not a JSON object. */
bool api_cambio_fecha(struct http_req *r, bool move, const char **fecha, char **scratch);
/* GET /api/citas/{id}/huecos?fecha= and whether a path is one: where the
 * appointment could move (cambios_huecos). */
void api_citas_huecos(struct http_req *r);
bool api_citas_huecos_path(const char *path);
/* Replies to a cambios_huecos* that returned rc, with h's slots on success
 * (released here). */
void api_reply_huecos(struct http_req *r, br_err rc, struct cambio_huecos *h);
/* GET /api/admin/informes (informes.c): the owner's reports, JSON or CSV. */
void api_admin_informes_get(struct http_req *r);

/* One element of GET /api/citas's listing (a store_cita_fn; ud: struct jw). */
br_err api_w_cita_view(void *ud, const struct cita_view *v);
/* Begins an answer with "cita": the view of the appointment id (the
 * answer of a cancel, a reschedule, a link's page or an attendance mark).
 * BR_NOTFOUND "Cita no encontrada" when there is none; on any error w is
 * freed and nothing is replied. */
br_err api_begin_one_cita(struct http_req *r, const char *id, struct jw *w);

/* /api/gestion/{token}[/cancelar|/reprogramar] (gestion.c): an
 * appointment behind its personal link */
void api_gestion_get(struct http_req *r);
void api_gestion_post(struct http_req *r);
bool api_gestion_ver_path(const char *path);
bool api_gestion_accion_path(const char *path);

/* /api/lista-espera[/{id}] (espera.c): the client's waiting list */
void api_espera_post(struct http_req *r);
void api_espera_get(struct http_req *r);
void api_espera_delete(struct http_req *r);
bool api_espera_path(const char *path); /* /api/lista-espera/{id} */

/* --- the front desk (mostrador.c) --- */
void api_clientes_get(struct http_req *r);
void api_clientes_post(struct http_req *r);
void api_cliente_patch(struct http_req *r);
bool api_cliente_path(const char *path);
void api_agenda_citas_post(struct http_req *r);
/* POST /api/citas/{id}/asistencia, and whether a path is one. */
void api_citas_asistencia(struct http_req *r);
bool api_asistencia_path(const char *path);

#endif
