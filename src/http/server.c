/*
 * server.c - the HTTP layer over libmicrohttpd (see http.h).
 *
 * libmicrohttpd 0.9.75 facts this file is built around:
 * - The access handler is called once with the headers, then once per body
 *   chunk, then once with *upload_data_size == 0. A reply may be queued in
 *   the first call (MHD then closes the connection: used to refuse a body
 *   we will not read) or in the last; never in between.
 * - The post processor has no end-of-body callback: the result of
 *   MHD_destroy_post_processor() (MHD_NO: truncated or malformed) decides
 *   whether an upload is whole.
 * - Per-request state is created in the URI-log callback (so that it exists
 *   for every request MHD starts) and freed in the completed callback, which
 *   also writes the access-log line.
 * - Graceful stop needs MHD_USE_ITC and MHD_quiesce_daemon().
 */
#define _GNU_SOURCE
#include "http.h"
#include "../util/buf.h"
#include "../util/jsonw.h"
#include "../util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEADERS 8
#define MAX_FIELDS 8
#define FIELD_MAX 1024
#define DRAIN_MAX (1024 * 1024) /* body bytes read past a JSON cap before hanging up */
#define PP_BUFFER 16384

struct http_server {
    struct http_options o;
    struct MHD_Daemon *d;
    int listen_fd;
    char url[96];
    atomic_int in_flight;    /* requests between their first byte and their end */
    atomic_bool stopping;
    bool v6;
};

struct field {
    char *name;
    struct buf value;
};

struct http_req {
    struct http_server *srv;
    struct MHD_Connection *conn;
    int64_t t0; /* monotonic microseconds at the request's first byte */
    bool started;
    char method[16];
    char *path;
    const struct http_route *route;
    unsigned status; /* of the reply, for the access log */
    bool replied;

    /* a refusal decided before the body */
    unsigned verdict;
    char *verdict_msg;
    char *allow;
    char remote[64]; /* the client's address, filled on first use */

    /* body */
    uint64_t body_bytes;
    struct buf body;
    bool body_too_large;
    json_t *json;

    /* multipart */
    struct MHD_PostProcessor *pp;
    bool form_bad;
    bool saw_part; /* the post processor found at least one part */
    struct http_upload up;
    char *filename, *content_type;
    struct field fields[MAX_FIELDS];
    int nfields;
    int cur; /* what the current part feeds: -1 nothing, -2 the file, >= 0 a field */

    void *user;
    void (*user_free)(void *);
    char *hdr_name[MAX_HEADERS], *hdr_value[MAX_HEADERS];
    int nhdr;
};

/* --- listening ------------------------------------------------------------------ */

static br_err split_listen(const char *listen, char *host, size_t hn, char *port, size_t pn)
{
    const char *colon;
    const char *h = listen;
    size_t hl;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':') goto bad;
        h = listen + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon) goto bad;
        hl = (size_t)(colon - listen);
    }
    const char *p = colon + 1;
    size_t pl = strlen(p);
    if (hl >= hn || pl == 0 || pl >= pn) goto bad;
    for (size_t i = 0; i < pl; i++)
        if (p[i] < '0' || p[i] > '9') goto bad;
    if (strtol(p, NULL, 10) > 65535) goto bad;
    memcpy(host, h, hl);
    host[hl] = '\0';
    memcpy(port, p, pl + 1);
    return BR_OK;
bad:
    return err_set(BR_INVALID, "listen address '%s': expected host:port, [ipv6]:port or :port",
                   listen);
}

static br_err open_listener(struct http_server *s, bool *v6)
{
    char host[256], port[8];
    br_err rc = split_listen(s->o.listen, host, sizeof host, port, sizeof port);
    if (rc) return rc;
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (gai != 0)
        return err_set(BR_CONFIG, "cannot listen on %s: %s", s->o.listen, gai_strerror(gai));
    int fd = -1, err = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 256) == 0) {
            *v6 = ai->ai_family == AF_INET6;
            break;
        }
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) return err_set(BR_CONFIG, "cannot listen on %s: %s", s->o.listen, strerror(err));

    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN];
    unsigned bound_port;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr))
            snprintf(addr, sizeof addr, "::1");
        else
            inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr);
        bound_port = ntohs(a->sin6_port);
        snprintf(s->url, sizeof s->url, "http://[%s]:%u", addr, bound_port);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        if (a->sin_addr.s_addr == htonl(INADDR_ANY))
            snprintf(addr, sizeof addr, "127.0.0.1");
        else
            inet_ntop(AF_INET, &a->sin_addr, addr, sizeof addr);
        bound_port = ntohs(a->sin_port);
        snprintf(s->url, sizeof s->url, "http://%s:%u", addr, bound_port);
    }
    s->listen_fd = fd;
    return BR_OK;
}

/* --- replies -------------------------------------------------------------------- */

static void queue(struct http_req *r, unsigned status, struct MHD_Response *resp)
{
    if (r->replied) {
        log_error("http: second reply to %s %s ignored", r->method, r->path ? r->path : "");
        MHD_destroy_response(resp);
        return;
    }
    for (int i = 0; i < r->nhdr; i++) MHD_add_response_header(resp, r->hdr_name[i], r->hdr_value[i]);
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (atomic_load(&r->srv->stopping))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (MHD_queue_response(r->conn, status, resp) != MHD_YES)
        log_error("http: could not queue the reply to %s %s", r->method, r->path ? r->path : "");
    MHD_destroy_response(resp);
    r->replied = true;
    r->status = status;
}

void http_add_header(struct http_req *r, const char *name, const char *value)
{
    if (r->nhdr >= MAX_HEADERS) {
        log_error("http: too many reply headers; %s dropped", name);
        return;
    }
    r->hdr_name[r->nhdr] = xstrdup(name);
    r->hdr_value[r->nhdr] = xstrdup(value);
    r->nhdr++;
}

void http_reply_json(struct http_req *r, unsigned status, char *text, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback(len, text, free);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json; charset=utf-8");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    queue(r, status, resp);
}

void http_reply_error(struct http_req *r, unsigned status, const char *msg)
{
    struct jw w;
    jw_init(&w, 4096);
    jw_obj_open(&w);
    jw_kstr(&w, "error", msg);
    jw_obj_close(&w);
    char *text;
    size_t len;
    if (jw_finish(&w, &text, &len) != BR_OK) {
        text = xstrdup("{\"error\":\"Error interno del servidor\"}");
        len = strlen(text);
    }
    http_reply_json(r, status, text, len);
}

void http_reply_fd(struct http_req *r, unsigned status, int fd, uint64_t size,
                   const char *content_type)
{
    struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);
    if (!resp) {
        close(fd);
        http_reply_error(r, 500, "Error interno del servidor");
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    queue(r, status, resp);
}

/* --- request accessors ------------------------------------------------------------ */

void *http_req_app(struct http_req *r)
{
    return r->srv->o.app;
}

const char *http_req_method(struct http_req *r)
{
    return r->method;
}

const char *http_req_path(struct http_req *r)
{
    return r->path;
}

const char *http_req_query(struct http_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_req_header(struct http_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_req_cookie(struct http_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn, MHD_COOKIE_KIND, name);
}

const char *http_req_remote(struct http_req *r)
{
    if (r->remote[0]) return r->remote;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, r->remote,
                  sizeof r->remote);
    else if (sa && sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, r->remote,
                  sizeof r->remote);
    return r->remote;
}

json_t *http_req_json(struct http_req *r)
{
    return r->json;
}

const struct http_upload *http_req_upload(struct http_req *r)
{
    return &r->up;
}

const char *http_req_field(struct http_req *r, const char *name)
{
    for (int i = 0; i < r->nfields; i++)
        if (!strcmp(r->fields[i].name, name)) return buf_cstr(&r->fields[i].value);
    return NULL;
}

void http_req_set_user(struct http_req *r, void *user, void (*free_fn)(void *))
{
    if (r->user && r->user_free) r->user_free(r->user);
    r->user = user;
    r->user_free = free_fn;
}

void *http_req_user(struct http_req *r)
{
    return r->user;
}

/* --- lifecycle ---------------------------------------------------------------------- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)uri;
    (void)conn;
    struct http_server *s = cls;
    struct http_req *r = xcalloc(1, sizeof *r);
    r->srv = s;
    r->t0 = clock_mono_us();
    r->cur = -1;
    r->up.fd = -1;
    buf_init(&r->body, s->o.json_max);
    atomic_fetch_add(&s->in_flight, 1);
    return r;
}

static void req_free(struct http_req *r)
{
    if (r->pp) MHD_destroy_post_processor(r->pp);
    if (r->up.fd >= 0) close(r->up.fd);
    if (r->user && r->user_free) r->user_free(r->user);
    json_decref(r->json);
    buf_free(&r->body);
    for (int i = 0; i < r->nfields; i++) {
        free(r->fields[i].name);
        buf_free(&r->fields[i].value);
    }
    for (int i = 0; i < r->nhdr; i++) {
        free(r->hdr_name[i]);
        free(r->hdr_value[i]);
    }
    free(r->filename);
    free(r->content_type);
    free(r->verdict_msg);
    free(r->allow);
    free(r->path);
    free(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    struct http_server *s = cls;
    struct http_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    if (r->started) {
        double ms = (double)(clock_mono_us() - r->t0) / 1000.0;
        if (r->replied)
            log_access(r->method, r->path ? r->path : "", r->status, ms);
        else
            log_warn("http: %s %s ended without a reply (%d)", r->method, r->path ? r->path : "",
                     (int)toe);
    }
    req_free(r);
    atomic_fetch_sub(&s->in_flight, 1);
}

static void set_verdict(struct http_req *r, unsigned status, const char *msg)
{
    if (r->verdict) return;
    r->verdict = status;
    r->verdict_msg = xstrdup(msg);
}

/* Finds the route; sets a 404 or 405 verdict when there is none. */
static void route(struct http_req *r)
{
    const struct http_options *o = &r->srv->o;
    struct buf allow;
    buf_init(&allow, 256);
    for (size_t i = 0; i < o->nroutes; i++) {
        const struct http_route *rt = &o->routes[i];
        bool match = rt->prefix ? !strncmp(r->path, rt->path, strlen(rt->path))
                                : !strcmp(r->path, rt->path);
        if (!match) continue;
        if (!strcmp(rt->method, r->method)) {
            r->route = rt;
            buf_free(&allow);
            return;
        }
        if (!strstr(buf_cstr(&allow), rt->method)) {
            br_err e = buf_printf(&allow, "%s%s", allow.len ? ", " : "", rt->method);
            (void)e; /* 256 bytes hold every method list */
        }
    }
    if (allow.len) {
        r->allow = buf_steal(&allow, NULL);
        set_verdict(r, 405, "Método no permitido");
    } else {
        set_verdict(r, 404, "No encontrado");
    }
    buf_free(&allow);
}

static bool has_body(struct http_req *r, uint64_t *declared, bool *known)
{
    const char *cl = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                 MHD_HTTP_HEADER_TRANSFER_ENCODING);
    *known = false;
    *declared = 0;
    if (cl) {
        *known = true;
        *declared = strtoull(cl, NULL, 10);
        return *declared > 0;
    }
    return te != NULL;
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size);

/* The first call: route, authorize, check the declared body. */
static void start(struct http_req *r, const char *url, const char *method)
{
    struct http_server *s = r->srv;
    r->started = true;
    snprintf(r->method, sizeof r->method, "%s", method);
    r->path = xstrdup(url);
    route(r);
    if (!r->route) return;
    if (r->route->auth != HTTP_AUTH_NONE) {
        err_clear();
        br_err rc = s->o.authorize(r, r->route->auth);
        if (rc) {
            unsigned st = rc == BR_UNAUTH ? 401 : rc == BR_FORBIDDEN ? 403 : rc == BR_BUSY ? 503 : 500;
            if (rc == BR_BUSY) {
                char secs[16];
                snprintf(secs, sizeof secs, "%d", err_retry_after() > 0 ? err_retry_after() : 1);
                http_add_header(r, "Retry-After", secs);
            }
            set_verdict(r, st, err_msg()[0] ? err_msg() : "Error interno del servidor");
            return;
        }
    }
    uint64_t declared;
    bool known;
    has_body(r, &declared, &known);
    if (r->route->body == HTTP_BODY_MULTIPART) {
        if (known && declared > s->o.multipart_max) {
            set_verdict(r, 400, s->o.too_large_msg);
            return;
        }
        /* only multipart/form-data is a form here (MHD would also parse
         * url-encoded bodies, and lose their last field); anything else
         * has every part missing */
        const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE);
        if (ct && !strncasecmp(ct, "multipart/form-data", 19))
            r->pp = MHD_create_post_processor(r->conn, PP_BUFFER, on_part, r);
    } else if (known && declared > s->o.json_max) {
        set_verdict(r, 413, "Cuerpo demasiado grande");
    }
}

static br_err spool_open(struct http_req *r)
{
    char *path = xasprintf("%s/upload-XXXXXX", r->srv->o.spool_dir);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) {
        log_error("http: cannot create an upload spool file in %s: %s", r->srv->o.spool_dir,
                  strerror(errno));
        free(path);
        return BR_IO;
    }
    unlink(path); /* anonymous from now on: nothing is left behind, even on a crash */
    free(path);
    r->up.fd = fd;
    return BR_OK;
}

static void spool_write(struct http_req *r, const char *data, size_t size)
{
    struct http_upload *up = &r->up;
    up->size += size;
    if (up->too_large) return;
    if (up->size > r->srv->o.file_max) {
        /* past the cap: keep counting, keep nothing */
        up->too_large = true;
        if (up->fd >= 0 && ftruncate(up->fd, 0) != 0) log_warn("http: spool truncate failed");
        return;
    }
    if (up->fd < 0) return;
    while (size) {
        ssize_t n = write(up->fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            log_error("http: writing an upload spool file failed: %s", strerror(errno));
            close(up->fd);
            up->fd = -1;
            return;
        }
        data += n;
        size -= (size_t)n;
    }
}

static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind;
    (void)transfer_encoding;
    struct http_req *r = cls;
    if (off == 0) {
        /* a new part */
        r->cur = -1;
        r->saw_part = true;
        if (!strcmp(key, r->srv->o.file_field)) {
            if (!r->up.has_file) {
                r->up.has_file = true;
                r->filename = filename ? xstrdup(filename) : NULL;
                r->content_type = content_type ? xstrdup(content_type) : NULL;
                r->up.filename = r->filename;
                r->up.content_type = r->content_type;
                if (spool_open(r) != BR_OK) r->form_bad = true;
                r->cur = -2;
            }
        } else if (!http_req_field(r, key) && r->nfields < MAX_FIELDS) {
            struct field *f = &r->fields[r->nfields++];
            f->name = xstrdup(key);
            buf_init(&f->value, FIELD_MAX);
            r->cur = r->nfields - 1;
        }
    }
    if (r->cur == -2) {
        spool_write(r, data, size);
    } else if (r->cur >= 0) {
        if (buf_append(&r->fields[r->cur].value, data, size) != BR_OK) r->form_bad = true;
    }
    return MHD_YES;
}

static void consume(struct http_req *r, const char *data, size_t size)
{
    r->body_bytes += size;
    if (r->verdict) return;
    if (r->route->body == HTTP_BODY_MULTIPART) {
        if (r->pp && !r->form_bad && MHD_post_process(r->pp, data, size) != MHD_YES)
            r->form_bad = true;
        return;
    }
    if (r->body_too_large) return;
    if (buf_append(&r->body, data, size) != BR_OK) {
        r->body_too_large = true;
        buf_free(&r->body);
    }
}

/* The last call: the whole body is in; decide and reply. */
static void finish(struct http_req *r)
{
    if (r->verdict) {
        http_reply_error(r, r->verdict, r->verdict_msg);
        return;
    }
    const struct http_route *rt = r->route;
    if (rt->body == HTTP_BODY_MULTIPART) {
        if (r->pp) {
            if (MHD_destroy_post_processor(r->pp) != MHD_YES) r->form_bad = true;
            r->pp = NULL;
        }
        /* MHD skips whatever precedes a first boundary as a preamble, and
         * makes no post processor without a boundary: a multipart body in
         * which no part was found (wrong or no boundary, garbage) is
         * malformed too */
        const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_TYPE);
        if (r->body_bytes && !r->saw_part && ct && !strncasecmp(ct, "multipart/form-data", 19))
            r->form_bad = true;
        if (r->up.has_file && r->up.fd < 0 && !r->up.too_large) {
            http_reply_error(r, 500, "Error interno del servidor");
            return;
        }
        if (r->form_bad) {
            http_reply_error(r, 400, "Formulario inválido");
            return;
        }
    } else {
        if (r->body_too_large) {
            http_reply_error(r, 413, "Cuerpo demasiado grande");
            return;
        }
        if (rt->body == HTTP_BODY_JSON) {
            json_error_t jerr;
            r->json = r->body.len ? json_loadb(r->body.p, r->body.len, 0, &jerr) : NULL;
            if (!json_is_object(r->json)) {
                http_reply_error(r, 400, "JSON inválido");
                return;
            }
        }
    }
    rt->handler(r);
    if (!r->replied) {
        log_error("http: handler for %s %s gave no reply", r->method, r->path);
        http_reply_error(r, 500, "Error interno del servidor");
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    struct http_server *s = cls;
    struct http_req *r = *con_cls;
    if (!r) {
        /* no URI-log callback ran: cannot happen, but never crash on it */
        r = on_uri(s, url, conn);
        *con_cls = r;
    }
    r->conn = conn;
    if (!r->started) {
        start(r, url, method);
        uint64_t declared;
        bool known;
        if (r->verdict && has_body(r, &declared, &known)) {
            /* refuse now, without reading a body we would throw away */
            http_reply_error(r, r->verdict, r->verdict_msg);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        consume(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        if (r->route && r->route->body == HTTP_BODY_MULTIPART) {
            if (r->body_bytes > s->o.multipart_max) return MHD_NO; /* hang up */
        } else if (r->body_bytes > s->o.json_max + DRAIN_MAX) {
            return MHD_NO;
        }
        return MHD_YES;
    }
    if (!r->replied) finish(r);
    return MHD_YES;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    log_warn("http: %s", line);
}

br_err http_bind(const struct http_options *o, struct http_server **out)
{
    struct http_server *s = xcalloc(1, sizeof *s);
    s->o = *o;
    s->listen_fd = -1;
    br_err rc = open_listener(s, &s->v6);
    if (rc) {
        free(s);
        return rc;
    }
    *out = s;
    return BR_OK;
}

br_err http_serve(struct http_server *s)
{
    const struct http_options *o = &s->o;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ITC | MHD_USE_POLL | MHD_USE_ERROR_LOG;
    if (s->v6) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)o->max_connections, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_URI_LOG_CALLBACK,
        on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d) return err_set(BR_CONFIG, "cannot start the HTTP server on %s", o->listen);
    return BR_OK;
}

const char *http_bound_url(const struct http_server *s)
{
    return s->url;
}

void http_stop(struct http_server *s)
{
    if (!s) return;
    if (!s->d) {
        close(s->listen_fd);
        free(s);
        return;
    }
    atomic_store(&s->stopping, true);
    MHD_socket lfd = MHD_quiesce_daemon(s->d);
    if (lfd != MHD_INVALID_SOCKET) {
        /* shutdown() ends listening at once; close() alone would leave the
         * socket listening until libmicrohttpd's thread leaves its poll() */
        shutdown(lfd, SHUT_RDWR);
        close(lfd);
    }
    int64_t deadline = clock_mono_ms() + s->o.shutdown_grace_ms;
    int waiting = atomic_load(&s->in_flight);
    if (waiting) log_info("http: waiting for %d in-flight request(s)", waiting);
    while (atomic_load(&s->in_flight) > 0 && clock_mono_ms() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&s->in_flight) > 0)
        log_warn("http: %d request(s) still running at the end of the grace period",
                 atomic_load(&s->in_flight));
    MHD_stop_daemon(s->d);
    free(s);
}
