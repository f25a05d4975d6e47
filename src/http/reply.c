/*
 * reply.c - building the one reply of a request (see http.h): JSON answers
 * with the security headers of every JSON answer, errors, ETag
 * revalidation, streamed bodies, static bytes, files sent zero-copy, and the
 * headers every reply of a request carries (those the handler added, Allow,
 * CORS, Connection: close while stopping). A reply is built on whatever
 * thread runs the handler and kept in the request; the I/O thread queues it
 * (http_flush), in a call where libmicrohttpd accepts one.
 */
#include "internal.h"
#include "../util/jsonw.h"
#include "../util/log.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void http_set_reply(struct http_req *r, unsigned status, struct MHD_Response *resp)
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
    if (r->must_close || atomic_load(&r->srv->stopping))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    r->resp = resp;
    r->replied = true;
    r->status = status;
}

void http_flush(struct http_req *r)
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
    http_set_reply(r, status, resp);
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
    http_set_reply(r, status, resp);
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
    http_set_reply(r, status, resp);
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
    http_set_reply(r, status, resp);
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
    http_set_reply(r, same ? 304 : 200, resp);
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
    http_set_reply(r, status, resp);
}

void http_reply_preflight(struct http_req *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(resp, "Access-Control-Allow-Methods", r->allow);
    MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                            "Authorization, Content-Type, If-None-Match");
    MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
    http_set_reply(r, 204, resp);
}
