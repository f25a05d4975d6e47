/*
 * http.h - the HTTP layer: request lifecycle over libmicrohttpd, routing,
 * body limits, multipart uploads, replies.
 *
 * Everything above this layer sees only this header; libmicrohttpd's types
 * stay inside src/http/. One request goes through in one pass:
 *
 *   route (404/405) -> authorize (401/403, before any body byte is read)
 *   -> body (JSON: 64 KiB cap, 413; multipart: streamed, file spooled to a
 *      temporary file and dropped past its cap) -> handler -> one reply
 *
 * A request that is refused before its body is read is answered at once
 * when it has a body (the connection then closes: the body is never read),
 * and on the usual schedule otherwise (the connection stays open).
 *
 * Threads: a few I/O threads (epoll) serve every socket and never wait
 * long; handlers of writes run on a worker pool while their connection
 * waits, so they may block (database, calendar call, password hash) without
 * delaying any other connection. GET/HEAD handlers are short reads and run
 * on the I/O thread (or on a read pool of their own, see read_workers). A handler runs on
 * one thread from start to reply. Every connection has a total deadline
 * for its headers and its body, so slow clients cannot hold it forever.
 */
#ifndef BR_HTTP_H
#define BR_HTTP_H

#include "../util/buf.h"
#include "../util/err.h"

#include <jansson.h>

struct http_req;
struct http_server;

enum http_auth {
    HTTP_AUTH_NONE,  /* public */
    HTTP_AUTH_USER,  /* a session is required (401) */
    HTTP_AUTH_ADMIN, /* an administrator's session is required (403) */
    HTTP_AUTH_STAFF, /* a staff session (admin or barbero) is required (403) */
};

enum http_body {
    HTTP_BODY_NONE,      /* a body, if any, is read and ignored (same cap as JSON) */
    HTTP_BODY_JSON,      /* a JSON object, at most json_max bytes */
    HTTP_BODY_MULTIPART, /* multipart/form-data with one spooled file part */
    HTTP_BODY_JSON_OPT,  /* as HTTP_BODY_JSON, or no body at all (http_req_json: NULL) */
    /* as HTTP_BODY_JSON_OPT, but a body that is not a JSON object reaches the handler
     * (http_req_json: NULL, http_req_json_invalid: true): for a route whose one action
     * takes a body and another none (which ignores any) */
    HTTP_BODY_JSON_LAX,
    /* a body of at most json_max bytes (or the route's body_max) kept as it
     * arrived, not parsed (http_req_body_raw): a signed body, checked before
     * it is read */
    HTTP_BODY_RAW,
};

typedef void (*http_handler_fn)(struct http_req *req);

struct http_route {
    const char *method;
    const char *path; /* exact, or a prefix when prefix is true */
    bool prefix;
    enum http_auth auth;
    enum http_body body;
    http_handler_fn handler;
    /* optional, for a prefix route: whether a path under the prefix is one
     * the route serves; any other is an unknown path (404, whatever the
     * method or the caller), as the product contract wants */
    bool (*serves)(const char *path);
    /* a GET route that answers HEAD too, as HTTP wants: the same handler
     * (http_req_method() says which), the same status and headers, no body
     * (libmicrohttpd sends none); its Allow lists HEAD after GET, and its
     * HEAD requests count apart in the metrics ("HEAD path") */
    bool head;
    /* a GET that may read for long (a report over a year of appointments):
     * it runs on the worker pool of the writes, so that no I/O thread waits
     * on it, however the reads are served */
    bool long_read;
    /* the layer above's own marks on the route, never read here: its
     * authorize hook and handlers see them (http_req_route_flags) */
    unsigned flags;
    /* a JSON or raw body's cap for this route alone, in bytes (0: json_max):
     * for a sender whose bodies may be larger than any client's (413 past
     * it, as past json_max); the body is held in memory, so keep it bounded */
    size_t body_max;
};

/* Decides, before the body is read, whether a request to a route with
 * auth != NONE may go on; on success it has attached the caller with
 * http_req_set_user() (or, on a route its layer marked so, left the check
 * to the handler, its business). On failure err_msg() is the answer's
 * message: BR_UNAUTH answers 401, BR_FORBIDDEN 403, BR_BUSY 503 (with
 * Retry-After), anything else 500. */
typedef br_err (*http_auth_fn)(struct http_req *req, enum http_auth mode);

/* Sizes and times: 0 (or less) takes the default given. */
struct http_options {
    const char *listen;        /* "host:port", "[v6]:port", ":port"; port 0 = any free */
    int max_connections;       /* open connections in all (10000; the open-file limit is
                                * raised to fit) */
    int max_per_ip;            /* open connections per client address (0: no cap) */
    int io_threads;            /* I/O threads (the number of cores) */
    int read_workers;          /* threads running GET/HEAD handlers (0: none, reads run
                                * inline on the I/O threads: they are short) */
    int workers;               /* threads running every other handler (64) */
    int queue_max;             /* requests waiting for a worker, per pool, before 503 (10000) */
    int header_timeout_ms;     /* the request line and headers must be in by then (10000) */
    int body_timeout_ms;       /* the body must be in by then... (30000) */
    int body_min_rate;         /* ...plus its size at this many bytes/s (8192) */
    int idle_timeout_s;        /* a connection silent this long is closed (30) */
    int shutdown_grace_ms;     /* how long http_stop() waits for in-flight requests */
    const char *spool_dir;     /* uploads are spooled here (unlinked at once) */
    size_t json_max;           /* cap of JSON (and ignored) bodies: 413 past it (a route
                                * may set its own, http_route.body_max) */
    uint64_t file_max;         /* bytes of the file part kept; more marks it too_large */
    uint64_t multipart_max;    /* a multipart body past this is refused */
    const char *too_large_msg; /* the 400 message for multipart_max */
    const char *file_field;    /* name of the file part */
    const char *const *form_fields; /* the other parts kept (NULL-terminated): any other
                                     * is ignored, however many (NULL: the first 8) */
    const char *cors_origins;       /* comma-separated origins a browser app may call from
                                     * (NULL: same-origin only) */
    const char *trusted_proxies;    /* comma-separated addresses of the reverse proxies in
                                     * front: from them, the client (http_req_client) is the
                                     * last X-Forwarded-For address that is none of them
                                     * (NULL: the connection's peer, always) */
    const char *public_url;         /* the URL clients use (BARBERIA_PUBLIC_URL; NULL: none
                                     * but the one each request is addressed to): its
                                     * origin counts as the service's own, as behind a
                                     * proxy that forwards another Host or scheme */
    const struct http_route *routes;
    size_t nroutes;
    http_auth_fn authorize;
    void *app; /* handed to handlers through http_req_app() */
};

/* Binds the listening socket (nothing is served yet). BR_INVALID with a
 * one-line detail for a malformed address, BR_CONFIG for one that cannot be
 * used (port in use, unknown host).
 * OUT: *out, released with http_stop(). */
br_err http_bind(const struct http_options *o, struct http_server **out) WARN_UNUSED;

/* Starts serving on the bound socket. */
br_err http_serve(struct http_server *s) WARN_UNUSED;

/* "http://host:port" of the bound socket (with the real port when 0 was
 * asked for; a wildcard address shows as loopback). Borrowed. */
const char *http_bound_url(const struct http_server *s);
/* Whether the socket is bound to every address (":port", "[::]:port"). */
bool http_listens_everywhere(const struct http_server *s);

/* After http_serve(): a one-line summary of the threads and connection
 * limits in force, for the start log. Borrowed. */
const char *http_capacity(const struct http_server *s);

/* Graceful stop: stops accepting, lets in-flight requests finish (at most
 * shutdown_grace_ms; a handler already running is always let finish),
 * closes every connection and frees the server (also one that was bound
 * but never served). */
void http_stop(struct http_server *s);

/* --- the request, for handlers ---------------------------------------------- */

void *http_req_app(struct http_req *r);
/* The flags of the route the request matched (0 before one did). */
unsigned http_req_route_flags(struct http_req *r);
const char *http_req_method(struct http_req *r);
/* The percent-decoded path, without the query. */
const char *http_req_path(struct http_req *r);
/* A percent-decoded query argument; NULL when absent. */
const char *http_req_query(struct http_req *r, const char *name);
/* A request header's value (the first field of that name). */
const char *http_req_header(struct http_req *r, const char *name);
/* Calls fn with the value of every field named name (any case), in the
 * order they came: a list-valued header may be sent as several fields
 * (RFC 9110, 5.3). */
void http_req_header_each(struct http_req *r, const char *name,
                          void (*fn)(void *ud, const char *value), void *ud);
/* A cookie's value, from every Cookie field; NULL when absent, or sent
 * twice with two values (one set elsewhere to shadow the other: neither is
 * believed; *shadowed, nullable, is set then). Valid until the request
 * ends or the next call. (cookie.c) */
const char *http_req_cookie(struct http_req *r, const char *name, bool *shadowed);
/* Adds to the coming reply the deletions (Max-Age=0) of every copy of
 * cookie name that a page of another origin of the same site may have set
 * and this request may carry: a longer path (the request path's prefixes),
 * or a Domain (the Host's name and its parents); never the host-only one
 * at Path=/, the service's own. secure adds Secure. */
void http_forget_cookie_copies(struct http_req *r, const char *name, bool secure);
/* Whether a browser marks the request as sent by a page of another origin:
 * its Origin ("null" included) is not the origin the request was addressed
 * to (http:// and its own Host), nor the public URL's, nor one cors_origins
 * allows; or, without Origin, its Sec-Fetch-Site is neither "same-origin"
 * nor "none". With an https:// public URL, an http:// Origin of its host
 * name (but a loopback one) is another origin whatever the Host: a plain
 * HTTP page anyone on the network path can write. A request with neither
 * header (curl, scripts, apps, older browsers) is not marked. Origins
 * compare as browsers write them: scheme and host without regard to case,
 * a missing port as the scheme's own. */
bool http_req_cross_origin(struct http_req *r);
/* The client's IP address as text ("127.0.0.1", "::1"); "" when unknown.
 * Borrowed for the request's lifetime. */
const char *http_req_remote(struct http_req *r);
/* The client as the throttles count it: an IPv4 address, or an IPv6
 * address's /64 ("2001:db8:1:2::/64": what one subscriber is given, so
 * that a host cannot hop from address to address within it), an
 * IPv4-mapped one as IPv4. */
const char *http_req_client(struct http_req *r);
/* That key of the address sa ("" for another family) into out (n bytes). */
struct sockaddr;
void http_client_key(const struct sockaddr *sa, char *out, size_t n);
/* HTTP_BODY_JSON routes: the body, always a JSON object. Borrowed. */
json_t *http_req_json(struct http_req *r);
/* HTTP_BODY_JSON_LAX routes: whether a body arrived that is not a JSON object
 * (the handler answers 400 `JSON inválido` where it wants one). */
bool http_req_json_invalid(struct http_req *r);
/* The body's bytes exactly as they arrived (HTTP_BODY_RAW, and the JSON
 * routes). OUT: *len. Borrowed. */
const char *http_req_body_raw(struct http_req *r, size_t *len);

/* HTTP_BODY_MULTIPART routes: what arrived. */
struct http_upload {
    bool has_file;
    int fd;                   /* the spooled file part (at most file_max bytes), -1 if none */
    uint64_t size;            /* bytes of the file part received */
    bool too_large;           /* more than file_max arrived (nothing kept) */
    const char *filename;     /* nullable */
    const char *content_type; /* nullable */
};
const struct http_upload *http_req_upload(struct http_req *r);
/* The first value of a non-file part; NULL when absent. Of a value longer
 * than a field may keep (1 KiB), its first KiB: see http_req_field_whole. */
const char *http_req_field(struct http_req *r, const char *name);
/* False when the part named arrived longer than a field may keep, or
 * with a NUL byte in it: the value read is then not all it held. */
bool http_req_field_whole(struct http_req *r, const char *name);

/* Keeps what went wrong for this request (copied; the last one given
 * counts), so that the detail travels with the request instead of being
 * copied out of err_msg() before the next error overwrites it: a request
 * answered 500 or more (but 503, a refusal under load, which would flood
 * the log) gets one error line when it ends, "http: <method> <path>
 * answered <status>: <detail>", the detail escaped. Whatever the answer's
 * own message says. */
void http_req_set_detail(struct http_req *r, const char *detail);

/* Attaches the caller (owned by the request from now on; freed with
 * free_fn when the request ends). */
void http_req_set_user(struct http_req *r, void *user, void (*free_fn)(void *));
void *http_req_user(struct http_req *r);

/* --- replies: exactly one per request ----------------------------------------- */

/* Adds a header to the coming reply (copied). */
void http_add_header(struct http_req *r, const char *name, const char *value);
/* Replies with a JSON text (takes text, a malloc'd buffer of len bytes),
 * with the security headers of every JSON answer (nosniff, a CSP that
 * allows nothing, no framing, no referrer, no caching). */
void http_reply_json(struct http_req *r, unsigned status, char *text, size_t len);
/* Produces the next piece of a streamed body: appends to out (empty on
 * entry) and sets *eof with the last piece. An error cuts the connection
 * (the status is sent by then): the client sees an incomplete answer. */
typedef br_err (*http_fill_fn)(void *ud, struct buf *out, bool *eof);
/* Replies with a JSON body written as fill produces it (chunked in
 * HTTP/1.1), with the headers of http_reply_json. fill runs on the
 * connection's I/O thread, each time what it gave before is sent, so that
 * a slow reader holds one piece in memory, no more. done(ud), when not
 * NULL, runs once the reply is over, sent or not. */
void http_reply_stream(struct http_req *r, unsigned status, http_fill_fn fill, void *ud,
                       void (*done)(void *ud));
/* A 200 JSON answer a client may keep and revalidate: with etag (a quoted
 * entity tag) and Cache-Control: no-cache; or, when the request's
 * If-None-Match names etag, 304 with no body (text is freed). */
void http_reply_json_etag(struct http_req *r, char *text, size_t len, const char *etag);
/* Replies {"error": msg}. */
void http_reply_error(struct http_req *r, unsigned status, const char *msg);
/* Replies with text that is not JSON (takes text, a malloc'd buffer of len
 * bytes), not to be cached. */
void http_reply_text(struct http_req *r, unsigned status, char *text, size_t len,
                     const char *content_type);
/* Replies 200 with bytes that live as long as the process (a page or an
 * asset built into the binary; not copied), tagged etag (quoted); or 304
 * with no body when the request's If-None-Match names etag. The caller adds
 * the caching and security headers it wants with http_add_header. */
void http_reply_static(struct http_req *r, const void *data, size_t len, const char *content_type,
                       const char *etag);
/* Replies with the content of fd (taken: closed by the server), zero-copy. */
void http_reply_fd(struct http_req *r, unsigned status, int fd, uint64_t size,
                   const char *content_type);

#endif
