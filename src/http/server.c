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
 *
 * The other files of the layer: body.c (request bodies), reply.c (replies
 * and their headers), origin.c (the Origin rules), request.c (accessors);
 * internal.h lists them.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "../util/log.h"
#include "../util/metrics.h"
#include "../util/worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

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
    /* the URL names the bound address, or the loopback for a wildcard */
    bool six = ss.ss_family == AF_INET6;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    s->everywhere =
        six ? IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr) : a4->sin_addr.s_addr == htonl(INADDR_ANY);
    char addr[INET6_ADDRSTRLEN] = "";
    if (s->everywhere)
        snprintf(addr, sizeof addr, "%s", six ? "::1" : "127.0.0.1");
    else
        inet_ntop(ss.ss_family, six ? (void *)&a6->sin6_addr : (void *)&a4->sin_addr, addr,
                  sizeof addr);
    snprintf(s->url, sizeof s->url, six ? "http://[%s]:%u" : "http://%s:%u", addr,
             (unsigned)ntohs(six ? a6->sin6_port : a4->sin_port));
    s->listen_fd = fd;
    return BR_OK;
}

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
static void reaper(struct worker *wk, void *ud)
{
    struct http_server *s = ud;
    for (;;) {
        worker_nap(wk, REAP_EVERY_MS);
        if (worker_stopping(wk)) break;

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
    }
}

/* --- lifecycle ---------------------------------------------------------------------- */

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes %XX in a path or a query value in place, as libmicrohttpd does,
 * but for %00: a NUL would end the string the handlers get, so that
 * "/metrics%00.txt" would be served as "/metrics"; it stays as the three
 * characters, a path no route has. Returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    char *w = s;
    for (const char *p = s; *p;) {
        int hi = p[0] == '%' ? hex_digit(p[1]) : -1;
        int lo = hi >= 0 ? hex_digit(p[2]) : -1;
        if (lo >= 0 && (hi | lo)) {
            *w++ = (char)(hi * 16 + lo);
            p += 3;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

/* The cap of a JSON, raw or ignored body on route rt (NULL: not routed). */
static size_t body_cap(const struct http_server *s, const struct http_route *rt)
{
    return rt && rt->body_max ? rt->body_max : s->o.json_max;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)uri;
    (void)conn;
    struct http_server *s = cls;
    struct http_req *r = xcalloc(1, sizeof *r);
    r->srv = s;
    r->t0 = clock_mono_us();
    r->cur = -1;
    r->slot = -1;
    r->up.fd = -1;
    buf_init(&r->body, s->o.json_max);
    atomic_fetch_add(&s->in_flight, 1);
    metrics_http_begin();
    return r;
}

static void req_free(struct http_req *r)
{
    http_body_free(r);
    if (r->resp) MHD_destroy_response(r->resp);
    if (r->user && r->user_free) r->user_free(r->user);
    for (int i = 0; i < r->nhdr; i++) {
        free(r->hdr_name[i]);
        free(r->hdr_value[i]);
    }
    free(r->verdict_msg);
    free(r->detail);
    free(r->cors_origin);
    free(r->cookie);
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
    metrics_http_done(r->slot, r->replied ? r->status : 0, us);
    if (r->started) {
        double ms = (double)us / 1000.0;
        if (r->replied) {
            if (r->detail && r->status >= 500 && r->status != 503) {
                char what[LOG_REQUEST_MAX], why[512];
                log_error("http: %s answered %u: %s",
                          log_request(r->method, r->path, what, sizeof what), r->status,
                          log_text(r->detail, why, sizeof why));
            }
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

/* Adds method to the Allow list, once. */
static void allow_add(struct buf *allow, const char *method)
{
    if (strstr(buf_cstr(allow), method)) return;
    br_err e = buf_printf(allow, "%s%s", allow->len ? ", " : "", method);
    (void)e; /* 256 bytes hold every method list */
}

/* Finds the route; sets a 404 or 405 verdict when there is none. */
static void route(struct http_req *r)
{
    const struct http_server *s = r->srv;
    const struct http_options *o = &s->o;
    bool head = !strcmp(r->method, "HEAD");
    struct buf allow;
    buf_init(&allow, 256);
    for (size_t i = 0; i < o->nroutes; i++) {
        const struct http_route *rt = &o->routes[i];
        bool match =
            rt->prefix ? !strncmp(r->path, rt->path, strlen(rt->path)) : !strcmp(r->path, rt->path);
        if (match && rt->serves) match = rt->serves(r->path);
        if (!match) continue;
        if (!strcmp(rt->method, r->method) || (head && rt->head)) {
            r->route = rt;
            r->slot = s->route_slot[2 * i + (head && rt->head ? 1 : 0)];
            buf_free(&allow);
            return;
        }
        allow_add(&allow, rt->method);
        if (rt->head) allow_add(&allow, "HEAD");
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

/* The path of a request target. The absolute form ("http://host/path", RFC
 * 9112 3.2.2: a server must accept it) names the same resource as its path
 * alone; libmicrohttpd hands it over whole. */
static const char *target_path(const char *url)
{
    size_t skip = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
    if (!skip) return url;
    const char *p = strchr(url + skip, '/');
    return p ? p : "/";
}

/* The first call: route, authorize, check the declared body. */
static void start(struct http_req *r, const char *url, const char *method)
{
    struct http_server *s = r->srv;
    r->started = true;
    snprintf(r->method, sizeof r->method, "%s", method);
    r->path = xstrdup(target_path(url));
    http_cors_check(r);
    unsigned bad;
    const char *why;
    if (!http_body_framing_ok(r, &bad, &why)) {
        /* answered at once and the connection closed: whatever follows
         * might be read as the body or as a request of its own */
        r->must_close = true;
        set_verdict(r, bad, why);
        return;
    }
    route(r);
    if (!r->route) return;
    /* nothing of the body is in yet: the route's own cap from now on */
    buf_init(&r->body, body_cap(s, r->route));
    if (r->route->auth != HTTP_AUTH_NONE) {
        err_clear();
        br_err rc = s->o.authorize(r, r->route->auth);
        if (rc) {
            unsigned st = rc == BR_UNAUTH       ? 401
                          : rc == BR_FORBIDDEN  ? 403
                          : err_unavailable(rc) ? 503
                                                : 500;
            if (err_unavailable(rc)) {
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
    if (http_body_declared(r, &declared, &known)) {
        /* the whole body must arrive within the floor plus its size at the
         * minimum rate; the size is counted up to what a request of the
         * route can use (a form: a file part and its fields), so that a
         * huge declared length drips in no longer than a whole photo may
         * (an undeclared length counts as that too) */
        uint64_t paced = r->route->body == HTTP_BODY_MULTIPART ? s->o.file_max + s->o.json_max
                                                               : body_cap(s, r->route) + DRAIN_MAX;
        uint64_t bytes = known && declared < paced ? declared : paced;
        conn_deadline(r->conn, s->o.body_timeout_ms +
                                   (int64_t)(bytes * 1000 / (uint64_t)s->o.body_min_rate));
    }
    if (r->route->body == HTTP_BODY_MULTIPART) {
        if (known && declared > s->o.multipart_max) {
            set_verdict(r, 400, s->o.too_large_msg);
            return;
        }
        http_body_form_start(r);
    } else if (known && declared > body_cap(s, r->route)) {
        set_verdict(r, 413, "Cuerpo demasiado grande");
    }
}

/* The whole body is in: decide and reply (on a worker, or inline). */
static void finish(struct http_req *r)
{
    if (r->preflight) {
        http_reply_preflight(r);
        return;
    }
    if (r->verdict) {
        http_reply_error(r, r->verdict, r->verdict_msg);
        return;
    }
    if (!http_body_end(r)) return;
    r->route->handler(r);
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
    if (read && r->route->long_read) {
        read = false; /* a long read waits on the write pool, never an I/O thread */
    } else if (read && !s->reads) {
        /* short reads run inline: a hand-over to a worker and back costs
         * more than the read itself (bench/README.md) */
        finish(r);
        http_flush(r);
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
        if (r->verdict && (r->must_close || (http_body_declared(r, &declared, &known) && known &&
                                             declared > body_cap(s, r->route) + DRAIN_MAX))) {
            /* refuse now, without reading a body we would throw away. A
             * smaller one is read and dropped first: a client still
             * sending when the connection closes gets a reset, not the
             * answer (one that sent `Expect: 100-continue` sends nothing) */
            http_reply_error(r, r->verdict, r->verdict_msg);
            http_flush(r);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        http_body_consume(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        if (r->route && r->route->body == HTTP_BODY_MULTIPART && !r->verdict) {
            if (r->body_bytes > s->o.multipart_max) return MHD_NO; /* hang up */
        } else if (r->body_bytes > body_cap(s, r->route) + DRAIN_MAX) {
            return MHD_NO; /* drained enough */
        }
        return MHD_YES;
    }
    if (r->dispatched) {
        /* resumed: the worker has left the reply */
        r->dispatched = false;
        http_flush(r);
        return MHD_YES;
    }
    if (r->replied) {
        http_flush(r);
        return MHD_YES;
    }
    conn_deadline(conn, 0); /* the body is in; the handler's time is its own */
    if (r->verdict) {
        finish(r); /* a refusal: cheap, answered here */
        http_flush(r);
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

/* The metrics slot of "<method> <path>": the one already named so, or a
 * new one. */
static int route_slot_named(struct http_server *s, const char *method, const char *path)
{
    char *name = xasprintf("%s %s", method, path);
    for (size_t k = 0; k < s->nslots; k++)
        if (!strcmp(s->route_names[k], name)) {
            free(name);
            return (int)k;
        }
    s->route_names[s->nslots] = name;
    return (int)s->nslots++;
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
    rc = http_origins_init(s);
    if (rc) {
        http_stop(s);
        return rc;
    }
    /* the routes' names for the request metrics, "METHOD path": a slot per
     * name, and one for the HEAD requests of a GET route that answers them;
     * routes of one name (a prefix that serves two kinds of path) share it,
     * so that no series is written twice */
    s->route_slot = xcalloc(2 * o->nroutes + 1, sizeof *s->route_slot);
    s->route_names = xcalloc(2 * o->nroutes + 1, sizeof *s->route_names);
    for (size_t i = 0; i < o->nroutes; i++) {
        const struct http_route *rt = &o->routes[i];
        s->route_slot[2 * i] = route_slot_named(s, rt->method, rt->path);
        if (rt->head) s->route_slot[2 * i + 1] = route_slot_named(s, "HEAD", rt->path);
    }
    metrics_http_routes((const char *const *)s->route_names, (int)s->nslots);
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
    if (!worker_start(reaper, s, &s->reaper))
        return err_set(BR_INTERNAL, "cannot start the HTTP deadline thread");

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    if (s->v6) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)s->listen_fd, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)io, MHD_OPTION_CONNECTION_LIMIT, (unsigned)conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_per_ip, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)o->idle_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
        s, MHD_OPTION_END);
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

bool http_listens_everywhere(const struct http_server *s)
{
    return s->everywhere;
}

const char *http_capacity(const struct http_server *s)
{
    return s->capacity;
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
    worker_stop(s->reaper, NULL);
    wpool_free(s->reads);
    wpool_free(s->writes);
    pthread_mutex_destroy(&s->conns_mu);
    metrics_http_routes(NULL, 0);
    http_origins_free(s);
    for (size_t i = 0; i < s->nslots; i++)
        free(s->route_names[i]);
    free(s->route_names);
    free(s->route_slot);
    free(s);
}
