/*
 * internal.h - what the files of the HTTP layer share, and nothing above it
 * includes (everything above sees only http.h). libmicrohttpd's types are
 * here: the server and the per-request state, and the functions one file of
 * the layer calls in another.
 *
 *   server.c   listening, the request lifecycle, connection deadlines and
 *              their reaper, routing and dispatch to the worker pools, start
 *              and graceful stop
 *   body.c     request bodies: the declared size, JSON bodies, multipart
 *              forms streamed through the post processor, the file part
 *              spooled to an unlinked temporary file
 *   reply.c    building replies: their headers (JSON security headers,
 *              Allow, CORS, Connection: close), ETags, streamed bodies
 *   origin.c   the Origin rules: CORS origins from the configuration, the
 *              public URL's origin, http_req_cross_origin
 *   request.c  the request's accessors for handlers
 */
#ifndef BR_HTTP_INTERNAL_H
#define BR_HTTP_INTERNAL_H

#include "http.h"
#include "wpool.h"
#include "../util/buf.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>

#define MAX_HEADERS      48 /* http_forget_cookie_copies adds up to 35 */
#define MAX_FIELDS       8
#define FIELD_MAX        1024
#define DRAIN_MAX        (1024 * 1024) /* body bytes read past a JSON cap before hanging up */
#define PP_BUFFER        16384
#define DELIM_MAX        200 /* "--" + boundary; RFC 2046 allows 70 characters */
#define REAP_EVERY_MS    200
#define STREAM_BLOCK     (32 * 1024)        /* what MHD asks a streamed reply for at a time */
#define STREAM_PIECE_MAX (16 * 1024 * 1024) /* one piece a streamed reply's fill gives */
#define FD_SLACK         512 /* descriptors beyond the connections: database, spool, workers */

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
    bool everywhere;      /* bound to every address (the url shows loopback) */
    char capacity[160];   /* threads and connection limits, for the start log */
    atomic_int in_flight; /* requests between their first byte and their end */
    atomic_bool stopping;
    bool v6;
    struct wpool *reads, *writes;

    pthread_mutex_t conns_mu; /* guards conns and every conn's fd */
    struct conn *conns;
    atomic_long reaped; /* connections shut down past their deadline, ever */
    struct worker *reaper;
    char **route_names; /* "METHOD path" of each metrics slot */
    size_t nslots;
    int *route_slot; /* route i's metrics slot at [2i], its HEAD's (when it has one) at [2i+1] */
    char **cors;     /* origins allowed to call from a browser (lowercase) */
    size_t ncors;
    struct origin pub; /* the public URL's origin, when has_pub */
    bool has_pub;
    struct in6_addr *proxies; /* the trusted proxies (IPv4 as v4-mapped) */
    size_t nproxies;
};

struct field {
    char *name;
    struct buf value;
    bool overlong; /* value is not all that arrived: past FIELD_MAX, or a NUL in it */
};

struct http_req {
    struct http_server *srv;
    struct MHD_Connection *conn;
    int64_t t0; /* monotonic microseconds at the request's first byte */
    bool started;
    char method[16];
    char *path;
    const struct http_route *route;
    int slot;        /* the route's metrics slot for this method; -1: no route */
    unsigned status; /* of the reply, for the access log */
    bool replied;
    struct MHD_Response *resp; /* the reply, until the I/O thread queues it */
    bool dispatched;           /* the handler runs on a worker; connection suspended */

    char *detail; /* what went wrong, for the log (http_req_set_detail) */

    /* a refusal decided before the body */
    unsigned verdict;
    char *verdict_msg;
    char *allow;
    char remote[64];   /* the client's address, filled on first use */
    char client[64];   /* the client as throttles count it (http_req_client) */
    char *cors_origin; /* the request's Origin when it is an allowed one */
    char *cookie;      /* the value http_req_cookie found last */
    bool preflight;    /* a CORS preflight to answer 204 */
    bool must_close;   /* the reply ends the connection (its framing is in doubt) */

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

/* --- reply.c ---------------------------------------------------------------------- */

/* Keeps resp as the request's one reply, with the headers every reply of
 * this request carries; the I/O thread queues it (http_flush). */
void http_set_reply(struct http_req *r, unsigned status, struct MHD_Response *resp);
/* On the I/O thread, in a call where MHD accepts a reply: queues it. */
void http_flush(struct http_req *r);
/* The answer to a CORS preflight: no body, what the path allows. */
void http_reply_preflight(struct http_req *r);

/* --- body.c ----------------------------------------------------------------------- */

/* Whether where the request ends is beyond doubt (RFC 9112 6.1, 5.1): false
 * for both Content-Length and Transfer-Encoding, a transfer coding other
 * than chunked, or a header name with white space in it (one that a proxy
 * may read as another header). OUT: *status (400, 501) and *msg when not. */
bool http_body_framing_ok(struct http_req *r, unsigned *status, const char **msg);
/* Whether the request has a body: OUT *declared its Content-Length and
 * *known whether it gave one. */
bool http_body_declared(struct http_req *r, uint64_t *declared, bool *known);
/* A multipart route's body is about to come: sets up the post processor
 * when the request is a multipart/form-data form. */
void http_body_form_start(struct http_req *r);
/* A chunk of the body arrived. */
void http_body_consume(struct http_req *r, const char *data, size_t size);
/* The whole body is in: true when it is what the route takes (the JSON
 * object parsed, the form whole); false after replying the refusal. */
bool http_body_end(struct http_req *r);
/* Frees what the body holds (the post processor, the spool, the fields). */
void http_body_free(struct http_req *r);

/* --- origin.c ----------------------------------------------------------------------- */

/* Parses BARBERIA_CORS_ORIGINS (o->cors_origins), the public URL's origin
 * and the trusted proxies (o->trusted_proxies) into s. BR_INVALID, with a
 * one-line detail, for a malformed list. */
br_err http_origins_init(struct http_server *s) WARN_UNUSED;
void http_origins_free(struct http_server *s);
/* Sets r->cors_origin when the request's Origin is one the CORS setting
 * allows. */
void http_cors_check(struct http_req *r);
/* Whether a (IPv4 as v4-mapped) is one of the trusted proxies. */
bool http_proxy_trusted(const struct http_server *s, const struct in6_addr *a);
/* An IPv4 address as its v4-mapped IPv6 one (::ffff:a.b.c.d). */
void http_addr_v4_mapped(const struct in_addr *v4, struct in6_addr *out);
/* The text of an IPv4 or IPv6 address (n bytes) as IPv6, IPv4 as v4-mapped. */
bool http_addr_parse(const char *t, size_t n, struct in6_addr *out);

#endif
