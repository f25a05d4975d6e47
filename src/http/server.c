/*
 * server.c - the HTTP layer over libmicrohttpd (see http.h).
 *
 * Threads. A few I/O threads (libmicrohttpd's epoll thread pool) read and
 * write every socket and never block: a slow or idle client costs a socket
 * and a little memory, never a thread. Once a request's body is in, its
 * handler runs on a worker pool (wpool.c) while the connection is suspended
 * (MHD_suspend_connection); the worker leaves the reply in the request and
 * resumes the connection, and the I/O thread queues the reply. Writes
 * (everything but GET/HEAD: database writes, the calendar call, password
 * hashing, fsyncs) always go to the write pool. Reads are short indexed
 * reads and run inline on the I/O thread by default (measured: the hand-over
 * to a worker and back cost more than the read); read_workers > 0 gives
 * them a pool of their own instead. Either way a burst of slow bookings
 * never delays a listing. The route lookup and the session check (an
 * indexed read) run on the I/O thread, before any body byte is read.
 *
 * Deadlines. libmicrohttpd only knows an idle timeout, which a client that
 * trickles one byte at a time never trips. Every connection therefore has a
 * total deadline, checked by a reaper thread: the request headers must be
 * in within header_timeout_ms of the connection's start (or of the end of
 * the previous request), and the body within body_timeout_ms plus its size
 * at body_min_rate. A connection past its deadline is shut down; the I/O
 * thread then sees the end of the stream and closes it. A connection whose
 * handler is running, or whose reply is being sent, has no total deadline
 * (the idle timeout still applies).
 *
 * libmicrohttpd 0.9.75 facts this file is built around:
 * - The access handler is called once with the headers, then once per body
 *   chunk, then with *upload_data_size == 0 until a reply is queued (again
 *   after a resume). A reply may be queued in the first call (MHD then
 *   closes the connection: used to refuse a body we will not read) or in a
 *   last one; never in between.
 * - The post processor has no end-of-body callback: the result of
 *   MHD_destroy_post_processor() (MHD_NO: truncated or malformed) decides
 *   whether an upload is whole. It may call the part iterator several times
 *   at offset 0 for one part (with size 0 too, depending on how the body was
 *   split into reads): a new part is recognised by its name or file name
 *   changing, or by its offset going back to 0 after data.
 * - Per-request state is created in the URI-log callback (so that it exists
 *   for every request MHD starts) and freed in the completed callback, which
 *   also writes the access-log line. Per-connection state (the deadline)
 *   lives from the connection's STARTED to its CLOSED notification; MHD
 *   closes the socket only after CLOSED, so the reaper's shutdown() (under
 *   the same lock) never reaches a reused descriptor.
 * - Graceful stop: the listening socket is closed under MHD (a blank
 *   socket dup2'ed onto its descriptor: MHD_quiesce_daemon() races with
 *   the epoll threads and can abort the process), wait for in-flight
 *   requests, stop the worker pools (every suspended connection is resumed
 *   by then), MHD_stop_daemon() (which closes the descriptor).
 */
#define _GNU_SOURCE
#include "http.h"
#include "../util/cond.h"
#include "wpool.h"
#include "../util/buf.h"
#include "../util/jsonw.h"
#include "../util/log.h"
#include "../util/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_HEADERS      8
#define MAX_FIELDS       8
#define FIELD_MAX        1024
#define DRAIN_MAX        (1024 * 1024) /* body bytes read past a JSON cap before hanging up */
#define PP_BUFFER        16384
#define DELIM_MAX        200 /* "--" + boundary; RFC 2046 allows 70 characters */
#define REAP_EVERY_MS    200
#define STREAM_BLOCK     (32 * 1024)        /* what MHD asks a streamed reply for at a time */
#define STREAM_PIECE_MAX (16 * 1024 * 1024) /* one piece a streamed reply's fill gives */
#define FD_SLACK         512 /* descriptors beyond the connections: database, spool, workers */

/* The security headers of every JSON answer: nothing in it is a page, a
 * frame, a script or a referrer. */
static const char *const json_headers[][2] = {
    {"Content-Type", "application/json; charset=utf-8"},
    {"X-Content-Type-Options", "nosniff"},
    {"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
    {"X-Frame-Options", "DENY"},
    {"Referrer-Policy", "no-referrer"},
};

/* The security headers and the Content-Type of every JSON answer, and its
 * caching rule: "no-store" unless the answer is revalidated by ETag. */
static void add_json_headers(struct MHD_Response *resp, const char *cache_control)
{
    for (size_t i = 0; i < ARRAY_LEN(json_headers); i++)
        MHD_add_response_header(resp, json_headers[i][0], json_headers[i][1]);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control);
}

/* A web origin as browsers compare them: scheme, host (compared without
 * regard to case) and port (a missing one is the scheme's own). */
struct origin {
    bool https;
    unsigned port;
    char host[256];
};

/* One TCP connection, for its total deadline. */
struct conn {
    struct conn *prev, *next;
    int fd;
    _Atomic int64_t deadline_ms; /* monotonic; 0: none */
};

struct http_server {
    struct http_options o;
    struct MHD_Daemon *d;
    int listen_fd;
    char url[96];
    char capacity[160];   /* threads and connection limits, for the start log */
    atomic_int in_flight; /* requests between their first byte and their end */
    atomic_bool stopping;
    bool v6;
    struct wpool *reads, *writes;

    pthread_mutex_t conns_mu; /* guards conns and every conn's fd */
    struct conn *conns;
    atomic_long reaped; /* connections shut down past their deadline, ever */
    pthread_t reaper;
    bool reaper_started;
    pthread_mutex_t reaper_mu;
    pthread_cond_t reaper_cv;
    bool reaper_stop;
    char **route_names; /* "METHOD path" of each route, for the metrics */
    char **cors;        /* origins allowed to call from a browser (lowercase) */
    size_t ncors;
    struct origin pub; /* the public URL's origin, when has_pub */
    bool has_pub;
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
    struct MHD_Response *resp; /* the reply, until the I/O thread queues it */
    bool dispatched;           /* the handler runs on a worker; connection suspended */

    /* a refusal decided before the body */
    unsigned verdict;
    char *verdict_msg;
    char *allow;
    char remote[64];   /* the client's address, filled on first use */
    char *cors_origin; /* the request's Origin when it is an allowed one */
    bool preflight;    /* a CORS preflight to answer 204 */

    /* body */
    uint64_t body_bytes;
    struct buf body;
    bool body_too_large;
    json_t *json;

    /* multipart */
    struct MHD_PostProcessor *pp;
    bool form_bad;
    bool saw_part;  /* the post processor found at least one part */
    bool saw_delim; /* the body holds the declared boundary's delimiter */
    char delim[DELIM_MAX + 1];
    size_t delim_len;
    char carry[DELIM_MAX]; /* the last delim_len - 1 bytes seen, for the delimiter search */
    size_t carry_len;
    char *part_key, *part_filename; /* the part being fed */
    bool part_open;
    uint64_t part_end; /* bytes of it seen so far */
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
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
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

/* Keeps resp as the request's one reply; the I/O thread queues it (flush). */
static void set_reply(struct http_req *r, unsigned status, struct MHD_Response *resp)
{
    if (r->replied) {
        char what[LOG_REQUEST_MAX];
        log_error("http: second reply to %s ignored",
                  log_request(r->method, r->path, what, sizeof what));
        MHD_destroy_response(resp);
        return;
    }
    for (int i = 0; i < r->nhdr; i++)
        MHD_add_response_header(resp, r->hdr_name[i], r->hdr_value[i]);
    if (r->allow) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->allow);
    if (r->cors_origin) {
        /* the browser app may read every answer, errors included, and
         * send the session cookie along */
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", r->cors_origin);
        MHD_add_response_header(resp, "Access-Control-Allow-Credentials", "true");
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", "ETag, Retry-After");
    }
    if (r->srv->ncors) MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Origin");
    if (atomic_load(&r->srv->stopping))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->resp = resp;
    r->replied = true;
    r->status = status;
}

/* On the I/O thread, in a call where MHD accepts a reply: queues it. */
static void flush(struct http_req *r)
{
    if (!r->resp) return;
    if (MHD_queue_response(r->conn, r->status, r->resp) != MHD_YES) {
        char what[LOG_REQUEST_MAX];
        log_error("http: could not queue the reply to %s",
                  log_request(r->method, r->path, what, sizeof what));
    }
    MHD_destroy_response(r->resp);
    r->resp = NULL;
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
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
    add_json_headers(resp, "no-store");
    set_reply(r, status, resp);
}

/* Whether an If-None-Match value names etag (RFC 9110 13.1.2: "*", or a
 * list of entity tags compared weakly, so W/ is ignored). */
static bool etag_matches(const char *inm, const char *etag)
{
    size_t elen = strlen(etag);
    for (const char *p = inm; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p) break;
        if (*p == '*') return true;
        if (!strncmp(p, "W/", 2)) p += 2;
        const char *end = p;
        if (*end == '"') {
            end = strchr(end + 1, '"');
            if (!end) return false;
            end++;
        } else {
            while (*end && *end != ',' && *end != ' ' && *end != '\t')
                end++;
        }
        if ((size_t)(end - p) == elen && !memcmp(p, etag, elen)) return true;
        p = end;
    }
    return false;
}

void http_reply_json_etag(struct http_req *r, char *text, size_t len, const char *etag)
{
    const char *inm = http_req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);
    struct MHD_Response *resp;
    unsigned status = 200;
    if (inm && etag_matches(inm, etag)) {
        free(text);
        status = 304;
        resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
    }
    add_json_headers(resp, "no-cache");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    set_reply(r, status, resp);
}

/* A streamed reply: what fill produced and MHD has not taken yet. */
struct stream {
    http_fill_fn fill;
    void (*done)(void *ud);
    void *ud;
    struct buf out;
    size_t off; /* bytes of out already handed to MHD */
    bool eof;
};

/* MHD's content reader, on the connection's I/O thread: hands out what
 * fill produced, asking for more once it is all sent. */
static ssize_t stream_read(void *cls, uint64_t pos, char *dst, size_t max)
{
    (void)pos;
    struct stream *st = cls;
    while (st->off == st->out.len) {
        if (st->eof) return MHD_CONTENT_READER_END_OF_STREAM;
        buf_reset(&st->out);
        st->off = 0;
        br_err rc = st->fill(st->ud, &st->out, &st->eof);
        if (rc) {
            /* the status line is gone: end without the last chunk, so the
             * client sees a cut answer, never a short one */
            log_error("http: a streamed reply failed midway: %s", err_msg());
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
    }
    size_t n = st->out.len - st->off;
    if (n > max) n = max;
    memcpy(dst, st->out.p + st->off, n);
    st->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct stream *st = cls;
    if (st->done) st->done(st->ud);
    buf_free(&st->out);
    free(st);
}

void http_reply_stream(struct http_req *r, unsigned status, http_fill_fn fill, void *ud,
                       void (*done)(void *ud))
{
    struct stream *st = xcalloc(1, sizeof *st);
    st->fill = fill;
    st->done = done;
    st->ud = ud;
    buf_init(&st->out, STREAM_PIECE_MAX);
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
                                                                  stream_read, st, stream_free);
    if (!resp) {
        stream_free(st);
        http_reply_error(r, 500, "Error interno del servidor");
        return;
    }
    add_json_headers(resp, "no-store");
    set_reply(r, status, resp);
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

void http_reply_text(struct http_req *r, unsigned status, char *text, size_t len,
                     const char *content_type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(len, text, free);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    set_reply(r, status, resp);
}

void http_reply_static(struct http_req *r, const void *data, size_t len, const char *content_type,
                       const char *etag)
{
    const char *inm = http_req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH);
    bool same = inm && etag_matches(inm, etag);
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        same ? 0 : len, same ? (void *)"" : (void *)data, MHD_RESPMEM_PERSISTENT);
    if (!same) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
    set_reply(r, same ? 304 : 200, resp);
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
    set_reply(r, status, resp);
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

/* --- deadlines ---------------------------------------------------------------------- */

static struct conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Sets the connection's total deadline ms from now (0: none). */
static void conn_deadline(struct MHD_Connection *c, int64_t ms)
{
    struct conn *k = conn_of(c);
    if (k) atomic_store(&k->deadline_ms, ms ? clock_mono_ms() + ms : 0);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn *k = xcalloc(1, sizeof *k);
        k->fd = ci ? ci->connect_fd : -1;
        atomic_store(&k->deadline_ms, clock_mono_ms() + s->o.header_timeout_ms);
        pthread_mutex_lock(&s->conns_mu);
        k->next = s->conns;
        if (s->conns) s->conns->prev = k;
        s->conns = k;
        pthread_mutex_unlock(&s->conns_mu);
        *socket_context = k;
        return;
    }
    struct conn *k = *socket_context;
    if (!k) return;
    pthread_mutex_lock(&s->conns_mu);
    if (k->prev)
        k->prev->next = k->next;
    else
        s->conns = k->next;
    if (k->next) k->next->prev = k->prev;
    pthread_mutex_unlock(&s->conns_mu);
    free(k);
    *socket_context = NULL;
}

/* Shuts down every connection past its deadline, a few times a second. */
static void *reaper(void *arg)
{
    struct http_server *s = arg;
    pthread_mutex_lock(&s->reaper_mu);
    while (!s->reaper_stop) {
        struct timespec ts = deadline_in(CLOCK_MONOTONIC, REAP_EVERY_MS);
        pthread_cond_timedwait(&s->reaper_cv, &s->reaper_mu, &ts);
        if (s->reaper_stop) break;
        pthread_mutex_unlock(&s->reaper_mu);

        int64_t now = clock_mono_ms();
        long n = 0;
        pthread_mutex_lock(&s->conns_mu);
        for (struct conn *k = s->conns; k; k = k->next) {
            int64_t d = atomic_load(&k->deadline_ms);
            if (!d || now < d || k->fd < 0) continue;
            shutdown(k->fd, SHUT_RDWR);
            atomic_store(&k->deadline_ms, 0);
            n++;
        }
        pthread_mutex_unlock(&s->conns_mu);
        if (n) {
            atomic_fetch_add(&s->reaped, n);
            log_warn("http: closed %ld connection(s) past their header or body deadline", n);
        }
        pthread_mutex_lock(&s->reaper_mu);
    }
    pthread_mutex_unlock(&s->reaper_mu);
    return NULL;
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
    metrics_http_begin();
    return r;
}

static void req_free(struct http_req *r)
{
    if (r->pp) MHD_destroy_post_processor(r->pp);
    if (r->resp) MHD_destroy_response(r->resp);
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
    free(r->part_key);
    free(r->part_filename);
    free(r->filename);
    free(r->content_type);
    free(r->verdict_msg);
    free(r->cors_origin);
    free(r->allow);
    free(r->path);
    free(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_server *s = cls;
    struct http_req *r = *con_cls;
    if (!r) return;
    *con_cls = NULL;
    int64_t us = clock_mono_us() - r->t0;
    metrics_http_done(r->route ? (int)(r->route - s->o.routes) : -1, r->replied ? r->status : 0,
                      us);
    if (r->started) {
        double ms = (double)us / 1000.0;
        if (r->replied) {
            log_access(r->method, r->path ? r->path : "", r->status, ms);
        } else {
            char what[LOG_REQUEST_MAX];
            log_warn("http: %s ended without a reply (%d)",
                     log_request(r->method, r->path, what, sizeof what), (int)toe);
        }
    }
    req_free(r);
    /* a kept-alive connection has the header deadline for its next request */
    conn_deadline(conn, s->o.header_timeout_ms);
    atomic_fetch_sub(&s->in_flight, 1);
}

static void set_verdict(struct http_req *r, unsigned status, const char *msg)
{
    if (r->verdict) return;
    r->verdict = status;
    r->verdict_msg = xstrdup(msg);
}

/* Whether method is one of the comma-separated list ("GET, POST"). */
static bool method_listed(const char *list, const char *method)
{
    size_t n = strlen(method);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t k = strcspn(p, ", ");
        if (k == n && !strncmp(p, method, n)) return true;
        p += k;
    }
    return false;
}

/* The request's Origin, when BARBERIA_CORS_ORIGINS allows it (compared
 * without regard to case, as origins are). */
static void cors_check(struct http_req *r)
{
    struct http_server *s = r->srv;
    if (!s->ncors) return;
    const char *origin = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
    if (!origin) return;
    for (size_t i = 0; i < s->ncors; i++)
        if (!strcasecmp(origin, s->cors[i])) {
            r->cors_origin = xstrdup(origin);
            return;
        }
}

/* "host[:port]" at s, up to its end (or, with a path allowed, up to a '/',
 * '?' or '#'), into o (its scheme already set); false when it is not one. */
static bool authority_parse(const char *s, bool path, struct origin *o)
{
    size_t n = strcspn(s, path ? "/?#" : "");
    const char *end = s + n, *hend;
    if (*s == '[') {
        const char *close = memchr(s, ']', n);
        if (!close) return false;
        hend = close + 1;
    } else {
        hend = memchr(s, ':', n);
        if (!hend) hend = end;
    }
    size_t hl = (size_t)(hend - s);
    if (hl == 0 || hl >= sizeof o->host) return false;
    for (const char *c = s; c < hend; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f || strchr("@\\/?#", *c)) return false;
    memcpy(o->host, s, hl);
    o->host[hl] = '\0';
    o->port = o->https ? 443 : 80;
    if (hend == end) return true;
    if (*hend != ':') return false;
    unsigned port = 0;
    const char *p = hend + 1;
    if (p == end) return true; /* "host:" is the default port, as in a URL */
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return false;
        port = port * 10 + (unsigned)(*p - '0');
        if (port > 65535) return false;
    }
    o->port = port;
    return true;
}

/* "scheme://host[:port]" (http or https), then nothing (or, with path, a
 * path, query or fragment), into o; false when s is not one ("null"). */
static bool origin_parse(const char *s, bool path, struct origin *o)
{
    if (!strncasecmp(s, "http://", 7)) {
        o->https = false;
        s += 7;
    } else if (!strncasecmp(s, "https://", 8)) {
        o->https = true;
        s += 8;
    } else {
        return false;
    }
    return authority_parse(s, path, o);
}

static bool same_origin(const struct origin *a, const struct origin *b)
{
    return a->https == b->https && a->port == b->port && !strcasecmp(a->host, b->host);
}

/* A header's value without the blanks around it, into buf (n bytes);
 * NULL when absent, "" when too long to be a real one. */
static const char *header_trimmed(struct http_req *r, const char *name, char *buf, size_t n)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
    if (!v) return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t len = strlen(v);
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    if (len >= n) return "";
    memcpy(buf, v, len);
    buf[len] = '\0';
    return buf;
}

bool http_req_cross_origin(struct http_req *r)
{
    struct http_server *s = r->srv;
    char buf[320];
    const char *origin = header_trimmed(r, "Origin", buf, sizeof buf);
    if (origin) {
        if (r->cors_origin) return false; /* one the CORS setting allows */
        struct origin from, own = {.https = false};
        if (!origin_parse(origin, false, &from)) return true; /* "null", or not an origin */
        if (s->has_pub && same_origin(&from, &s->pub)) return false;
        /* the service speaks plain HTTP: what it was addressed as is
         * http:// and the Host (a TLS proxy's own is the public URL) */
        char hbuf[300];
        const char *host = header_trimmed(r, MHD_HTTP_HEADER_HOST, hbuf, sizeof hbuf);
        return !(host && authority_parse(host, false, &own) && same_origin(&from, &own));
    }
    const char *site = header_trimmed(r, "Sec-Fetch-Site", buf, sizeof buf);
    return site && strcasecmp(site, "same-origin") && strcasecmp(site, "none");
}

/* The answer to a CORS preflight: no body, what the path allows. */
static void reply_preflight(struct http_req *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->allow);
    MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                            "Authorization, Content-Type, If-None-Match");
    MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
    set_reply(r, 204, resp);
}

/* Finds the route; sets a 404 or 405 verdict when there is none. */
static void route(struct http_req *r)
{
    const struct http_options *o = &r->srv->o;
    struct buf allow;
    buf_init(&allow, 256);
    for (size_t i = 0; i < o->nroutes; i++) {
        const struct http_route *rt = &o->routes[i];
        bool match =
            rt->prefix ? !strncmp(r->path, rt->path, strlen(rt->path)) : !strcmp(r->path, rt->path);
        if (match && rt->serves) match = rt->serves(r->path);
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
        /* a CORS preflight from an allowed origin for a method the path has */
        const char *want =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Access-Control-Request-Method");
        if (!strcmp(r->method, "OPTIONS") && r->cors_origin && want && *want &&
            method_listed(r->allow, want)) {
            r->preflight = true;
            set_verdict(r, 204, "");
        } else {
            set_verdict(r, 405, "Método no permitido");
        }
    } else {
        set_verdict(r, 404, "No encontrado");
    }
    buf_free(&allow);
}

static bool has_body(struct http_req *r, uint64_t *declared, bool *known)
{
    const char *cl =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te =
        MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
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

/* The form's boundary, from the Content-Type's boundary parameter (quoted or
 * not), as the delimiter "--<boundary>"; false when there is none or it is
 * longer than DELIM_MAX allows. */
static bool form_delimiter(struct http_req *r, const char *ct)
{
    const char *b = strcasestr(ct, "boundary=");
    if (!b) return false;
    b += 9;
    size_t n;
    if (*b == '"') {
        b++;
        const char *q = strchr(b, '"');
        if (!q) return false;
        n = (size_t)(q - b);
    } else {
        n = strcspn(b, "; \t");
    }
    if (n == 0 || n + 2 > DELIM_MAX) return false;
    memcpy(r->delim, "--", 2);
    memcpy(r->delim + 2, b, n);
    r->delim_len = n + 2;
    r->delim[r->delim_len] = '\0';
    return true;
}

/* Looks for the delimiter in the body as it streams by (it may straddle two
 * reads), until it is seen once. */
static void scan_delimiter(struct http_req *r, const char *data, size_t size)
{
    if (r->saw_delim || !r->delim_len) return;
    size_t keep = r->delim_len - 1;
    char win[2 * DELIM_MAX];
    size_t head = size < keep ? size : keep;
    memcpy(win, r->carry, r->carry_len);
    memcpy(win + r->carry_len, data, head);
    if (memmem(win, r->carry_len + head, r->delim, r->delim_len) ||
        memmem(data, size, r->delim, r->delim_len)) {
        r->saw_delim = true;
        return;
    }
    /* the carry becomes the last `keep` bytes of carry + data */
    size_t total = r->carry_len + head;
    if (size >= keep) {
        memcpy(r->carry, data + size - keep, keep);
        r->carry_len = keep;
    } else if (total <= keep) {
        memcpy(r->carry, win, total);
        r->carry_len = total;
    } else {
        memcpy(r->carry, win + total - keep, keep);
        r->carry_len = keep;
    }
}

/* The first call: route, authorize, check the declared body. */
static void start(struct http_req *r, const char *url, const char *method)
{
    struct http_server *s = r->srv;
    r->started = true;
    snprintf(r->method, sizeof r->method, "%s", method);
    r->path = xstrdup(url);
    cors_check(r);
    route(r);
    if (!r->route) return;
    if (r->route->auth != HTTP_AUTH_NONE && r->route->auth != HTTP_AUTH_IN_HANDLER) {
        err_clear();
        br_err rc = s->o.authorize(r, r->route->auth);
        if (rc) {
            unsigned st = rc == BR_UNAUTH      ? 401
                          : rc == BR_FORBIDDEN ? 403
                          : rc == BR_BUSY      ? 503
                                               : 500;
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
    if (has_body(r, &declared, &known)) {
        /* the whole body must arrive within the floor plus its size at the
         * minimum rate (an undeclared length counts as the cap) */
        uint64_t cap =
            r->route->body == HTTP_BODY_MULTIPART ? s->o.multipart_max : s->o.json_max + DRAIN_MAX;
        uint64_t bytes = known && declared < cap ? declared : cap;
        conn_deadline(r->conn, s->o.body_timeout_ms +
                                   (int64_t)(bytes * 1000 / (uint64_t)s->o.body_min_rate));
    }
    if (r->route->body == HTTP_BODY_MULTIPART) {
        if (known && declared > s->o.multipart_max) {
            set_verdict(r, 400, s->o.too_large_msg);
            return;
        }
        /* only multipart/form-data is a form here (MHD would also parse
         * url-encoded bodies, and lose their last field); anything else
         * has every part missing */
        const char *ct =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
            r->pp = MHD_create_post_processor(r->conn, PP_BUFFER, on_part, r);
            /* a boundary too long to look for: trust the parser alone */
            if (r->pp && !form_delimiter(r, ct)) r->saw_delim = true;
        }
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

static bool same_text(const char *a, const char *b)
{
    return a && b ? !strcmp(a, b) : a == b;
}

/* A new part begins: decide what it feeds. */
static void part_open(struct http_req *r, const char *key, const char *filename,
                      const char *content_type)
{
    free(r->part_key);
    free(r->part_filename);
    r->part_key = xstrdup(key);
    r->part_filename = filename ? xstrdup(filename) : NULL;
    r->part_open = true;
    r->part_end = 0;
    r->cur = -1;
    r->saw_part = true;
    if (!strcmp(key, r->srv->o.file_field)) {
        if (r->up.has_file) return; /* a second file part is ignored */
        r->up.has_file = true;
        r->filename = filename ? xstrdup(filename) : NULL;
        r->content_type = content_type ? xstrdup(content_type) : NULL;
        r->up.filename = r->filename;
        r->up.content_type = r->content_type;
        if (spool_open(r) != BR_OK) r->form_bad = true;
        r->cur = -2;
    } else if (!http_req_field(r, key) && r->nfields < MAX_FIELDS) {
        struct field *f = &r->fields[r->nfields++];
        f->name = xstrdup(key);
        buf_init(&f->value, FIELD_MAX);
        r->cur = r->nfields - 1;
    }
}

/* The post processor's part iterator. Any argument may be NULL (key: a part
 * without a name, which makes the form malformed; data: with size 0). The
 * same part may come in any number of calls, at offset 0 more than once
 * (size 0 included), depending on how the body was split into reads. */
static enum MHD_Result on_part(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *filename, const char *content_type,
                               const char *transfer_encoding, const char *data, uint64_t off,
                               size_t size)
{
    (void)kind;
    (void)transfer_encoding;
    struct http_req *r = cls;
    if (!key || (size && !data)) {
        r->form_bad = true;
        return MHD_NO;
    }
    if (!r->part_open || strcmp(r->part_key, key) != 0 || !same_text(r->part_filename, filename) ||
        (off == 0 && r->part_end > 0))
        part_open(r, key, filename, content_type);
    if (off != r->part_end) {
        /* data out of order: the parser and we disagree; refuse the form */
        r->form_bad = true;
        return MHD_NO;
    }
    r->part_end = off + size;
    if (size == 0) return MHD_YES;
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
        scan_delimiter(r, data, size);
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

/* The whole body is in: decide and reply (on a worker, or inline). */
static void finish(struct http_req *r)
{
    if (r->preflight) {
        reply_preflight(r);
        return;
    }
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
         * makes no post processor without a boundary. A body in which no
         * part was found is a form with every part missing when it holds
         * the delimiter (`--b--`), and malformed otherwise (wrong or no
         * boundary, garbage). */
        const char *ct =
            MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
        if (r->body_bytes && !r->saw_part && ct && !strncasecmp(ct, "multipart/form-data", 19) &&
            !r->saw_delim)
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
        if (rt->body == HTTP_BODY_JSON || (rt->body == HTTP_BODY_JSON_OPT && r->body.len)) {
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
        char what[LOG_REQUEST_MAX];
        log_error("http: handler for %s gave no reply",
                  log_request(r->method, r->path, what, sizeof what));
        http_reply_error(r, 500, "Error interno del servidor");
    }
}

/* On a worker: run the request, then hand the connection back to its I/O
 * thread, which queues the reply. r belongs to the I/O thread again as soon
 * as the connection is resumed. */
static void run_job(void *arg)
{
    struct http_req *r = arg;
    finish(r);
    MHD_resume_connection(r->conn);
}

/* Hands a request whose body is in to a worker pool: reads (GET, HEAD) and
 * writes have pools of their own. A full queue answers 503 at once. */
static void dispatch(struct http_req *r)
{
    struct http_server *s = r->srv;
    bool read = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
    if (read && !s->reads) {
        /* short reads run inline: a hand-over to a worker and back costs
         * more than the read itself (bench/README.md) */
        finish(r);
        flush(r);
        return;
    }
    r->dispatched = true;
    MHD_suspend_connection(r->conn);
    if (wpool_submit(read ? s->reads : s->writes, run_job, r) != BR_OK) {
        http_add_header(r, "Retry-After", "1");
        http_reply_error(r, 503, "Servicio ocupado");
        MHD_resume_connection(r->conn);
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
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
        if (r->verdict && has_body(r, &declared, &known) && known &&
            declared > s->o.json_max + DRAIN_MAX) {
            /* refuse now, without reading a body we would throw away. A
             * smaller one is read and dropped first: a client still
             * sending when the connection closes gets a reset, not the
             * answer (one that sent `Expect: 100-continue` sends nothing) */
            http_reply_error(r, r->verdict, r->verdict_msg);
            flush(r);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        consume(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        if (r->route && r->route->body == HTTP_BODY_MULTIPART && !r->verdict) {
            if (r->body_bytes > s->o.multipart_max) return MHD_NO; /* hang up */
        } else if (r->body_bytes > s->o.json_max + DRAIN_MAX) {
            return MHD_NO; /* drained enough */
        }
        return MHD_YES;
    }
    if (r->dispatched) {
        /* resumed: the worker has left the reply */
        r->dispatched = false;
        flush(r);
        return MHD_YES;
    }
    if (r->replied) {
        flush(r);
        return MHD_YES;
    }
    conn_deadline(conn, 0); /* the body is in; the handler's time is its own */
    if (r->verdict) {
        finish(r); /* a refusal: cheap, answered here */
        flush(r);
        return MHD_YES;
    }
    dispatch(r);
    return MHD_YES;
}

static void mhd_log(void *cls, const char *fmt, va_list ap) PRINTF_LIKE(2, 0);
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    log_warn("http: %s", line);
}
/* BARBERIA_CORS_ORIGINS: a comma-separated list of origins, each
 * scheme://host[:port] with scheme http or https and nothing after. */
static br_err parse_origins(struct http_server *s, const char *list)
{
    if (!list) return BR_OK;
    char *copy = xstrdup(list), *save = NULL;
    br_err rc = BR_OK;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ' || *t == '\t')
            t++;
        size_t n = strlen(t);
        while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
            t[--n] = '\0';
        if (!n) continue;
        const char *host = !strncasecmp(t, "https://", 8)  ? t + 8
                           : !strncasecmp(t, "http://", 7) ? t + 7
                                                           : NULL;
        bool ok = host && *host && !strpbrk(host, "/?#@ \\*");
        if (!ok) {
            rc = err_set(BR_INVALID,
                         "BARBERIA_CORS_ORIGINS: '%s' is not an origin (scheme://host[:port])", t);
            break;
        }
        s->cors = xrealloc(s->cors, (s->ncors + 1) * sizeof *s->cors);
        s->cors[s->ncors++] = xstrdup(t);
    }
    free(copy);
    return rc;
}

br_err http_bind(const struct http_options *o, struct http_server **out)
{
    struct http_server *s = xcalloc(1, sizeof *s);
    s->o = *o;
    /* zero means the default, so that callers name only what they change */
    struct http_options *so = &s->o;
    if (so->max_connections <= 0) so->max_connections = 10000;
    if (so->header_timeout_ms <= 0) so->header_timeout_ms = 10000;
    if (so->body_timeout_ms <= 0) so->body_timeout_ms = 30000;
    if (so->body_min_rate <= 0) so->body_min_rate = 8192;
    if (so->idle_timeout_s <= 0) so->idle_timeout_s = 30;
    if (so->workers <= 0) so->workers = 64;
    if (so->queue_max <= 0) so->queue_max = 10000;
    s->listen_fd = -1;
    pthread_mutex_init(&s->conns_mu, NULL);
    br_err rc = open_listener(s, &s->v6);
    if (rc) {
        pthread_mutex_destroy(&s->conns_mu);
        free(s);
        return rc;
    }
    rc = parse_origins(s, o->cors_origins);
    if (rc) {
        http_stop(s);
        return rc;
    }
    if (o->public_url) {
        s->has_pub = origin_parse(o->public_url, true, &s->pub);
        if (!s->has_pub)
            log_warn("http: BARBERIA_PUBLIC_URL has no http(s) origin: session-cookie writes "
                     "from browsers are taken only from the origin each request is addressed to");
    }
    /* the routes' names for the request metrics: "METHOD path" */
    s->route_names = xcalloc(o->nroutes + 1, sizeof *s->route_names);
    for (size_t i = 0; i < o->nroutes; i++)
        s->route_names[i] = xasprintf("%s %s", o->routes[i].method, o->routes[i].path);
    metrics_http_routes((const char *const *)s->route_names, (int)o->nroutes);
    *out = s;
    return BR_OK;
}

/* Raises the soft limit on open descriptors so that max_connections fit;
 * returns the connection count that does fit. */
static int fit_descriptors(int want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return want;
    rlim_t need = (rlim_t)want + FD_SLACK;
    if (rl.rlim_cur < need) {
        rlim_t cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
        struct rlimit nl = {cur, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &nl) == 0) rl.rlim_cur = cur;
    }
    if (rl.rlim_cur >= need) return want;
    int fit = rl.rlim_cur > FD_SLACK + 16 ? (int)(rl.rlim_cur - FD_SLACK) : 16;
    log_warn("http: the open-file limit (%llu) holds only %d connections, not %d",
             (unsigned long long)rl.rlim_cur, fit, want);
    return fit;
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

br_err http_serve(struct http_server *s)
{
    const struct http_options *o = &s->o;
    int io = o->io_threads > 0 ? o->io_threads : cores();
    int readers = o->read_workers > 0 ? o->read_workers : 0;
    int conns = fit_descriptors(o->max_connections);
    br_err rc = readers ? wpool_start("read", readers, o->queue_max, &s->reads) : BR_OK;
    if (!rc) rc = wpool_start("write", o->workers, o->queue_max, &s->writes);
    if (rc) return rc;
    pthread_mutex_init(&s->reaper_mu, NULL);
    cond_init_mono(&s->reaper_cv); /* its deadlines are monotonic */
    if (pthread_create(&s->reaper, NULL, reaper, s) != 0)
        return err_set(BR_INTERNAL, "cannot start the HTTP deadline thread");
    s->reaper_started = true;

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (s->v6) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)io, MHD_OPTION_CONNECTION_LIMIT, (unsigned)conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)o->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
    if (!s->d) return err_set(BR_CONFIG, "cannot start the HTTP server on %s", o->listen);
    snprintf(s->capacity, sizeof s->capacity,
             "%d I/O threads, %d read workers (0: reads inline), %d write workers, at most %d "
             "connections (%d per "
             "address)",
             io, readers, o->workers, conns, o->max_per_ip);
    return BR_OK;
}

const char *http_bound_url(const struct http_server *s)
{
    return s->url;
}

const char *http_capacity(const struct http_server *s)
{
    return s->capacity;
}

static void stop_reaper(struct http_server *s)
{
    if (!s->reaper_started) return;
    pthread_mutex_lock(&s->reaper_mu);
    s->reaper_stop = true;
    pthread_cond_signal(&s->reaper_cv);
    pthread_mutex_unlock(&s->reaper_mu);
    pthread_join(s->reaper, NULL);
    s->reaper_started = false;
    pthread_mutex_destroy(&s->reaper_mu);
    pthread_cond_destroy(&s->reaper_cv);
}

void http_stop(struct http_server *s)
{
    if (!s) return;
    MHD_socket lfd = s->listen_fd;
    if (s->d) {
        atomic_store(&s->stopping, true);
        /* New connections are refused at once. Not with
         * MHD_quiesce_daemon(): in epoll mode it races with the I/O
         * threads (both remove the listening socket from the epoll set,
         * and the loser aborts the process: an open libmicrohttpd defect,
         * seen here once). Instead a fresh, unbound socket takes the
         * listening socket's descriptor (dup2): the listening socket
         * itself is closed, so the kernel drops it from every epoll set
         * and refuses connections, and the descriptor MHD keeps never
         * becomes ready; MHD_stop_daemon() closes it. */
        int blank = socket(s->v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (blank >= 0) {
            if (dup2(blank, lfd) < 0) log_warn("http: dup2: %s", strerror(errno));
            close(blank);
        }
        lfd = MHD_INVALID_SOCKET; /* MHD's to close now */
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
    }
    /* every handler ends (bounded by its own deadlines) and resumes its
     * connection before the daemon may go: MHD must not stop with a
     * connection suspended */
    wpool_stop(s->reads);
    wpool_stop(s->writes);
    if (s->d) MHD_stop_daemon(s->d);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    stop_reaper(s);
    wpool_free(s->reads);
    wpool_free(s->writes);
    pthread_mutex_destroy(&s->conns_mu);
    metrics_http_routes(NULL, 0);
    for (size_t i = 0; i < s->ncors; i++)
        free(s->cors[i]);
    free(s->cors);
    for (size_t i = 0; s->route_names && i < s->o.nroutes; i++)
        free(s->route_names[i]);
    free(s->route_names);
    free(s);
}
