/*
 * test_protocol_errors.c - requests that break HTTP itself. What
 * libmicrohttpd still passes on (no Host, an unknown method, a space in
 * the path, headers just under the limit) is the service's to answer: JSON
 * with the security headers, like any answer. What libmicrohttpd refuses
 * while reading the request (a header line without a colon, no or an
 * unknown HTTP version, a malformed or impossible Content-Length, a broken
 * chunked body, headers or a request line over the 64 KiB the connection
 * may hold) it answers itself, before or without calling the service, and
 * 0.9.75 offers no way to change that answer (docs/decisions.md): it is
 * the library's fixed text, echoes nothing of the request, and the
 * connection is closed; the service keeps serving. A request line without
 * a space is closed without an answer.
 */
#define _GNU_SOURCE /* vasprintf */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MARK      "zq7-echo-mark"
#define WAIT_MS   10000
#define OVER_SIZE (100 * 1024) /* past the 64 KiB a connection's request may use */

static struct srv S;

static int start(void **state)
{
    (void)state;
    srv_start(&S, NULL, NULL);
    return 0;
}

static int stop(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

/* The value of a header of a raw reply's first header block, or NULL. */
static const char *raw_header(const char *reply, const char *name, char *out, size_t n)
{
    const char *end = strstr(reply, "\r\n\r\n");
    size_t len = strlen(name);
    for (const char *p = strstr(reply, "\r\n"); p && (!end || p < end); p = strstr(p + 2, "\r\n")) {
        if (!strncasecmp(p + 2, name, len) && p[2 + len] == ':') {
            const char *v = p + 3 + len;
            while (*v == ' ')
                v++;
            size_t k = strcspn(v, "\r\n");
            snprintf(out, n, "%.*s", (int)(k < n ? k : n - 1), v);
            return out;
        }
    }
    return NULL;
}

/* Sends a raw request; returns the status, the reply in *reply (caller
 * frees). Fails the test when the server kept the connection open. */
static long send_raw(const char *req, size_t len, char **reply)
{
    int64_t t0 = clock_mono_ms();
    long st = raw_http(&S, req, len, WAIT_MS, reply);
    if (clock_mono_ms() - t0 >= WAIT_MS - 500) fail_msg("the connection was left open");
    return st;
}

/* The reply is the service's own: JSON with the security headers. */
static void expect_service_json(const char *reply, long status, long want)
{
    if (status != want) fail_msg("answered %ld, not %ld: %.300s", status, want, reply);
    char v[160];
    static const char *const headers[][2] = {
        {"Content-Type", "application/json; charset=utf-8"},
        {"X-Content-Type-Options", "nosniff"},
        {"Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-store"},
    };
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++) {
        const char *got = raw_header(reply, headers[i][0], v, sizeof v);
        if (!got || strcmp(got, headers[i][1]))
            fail_msg("%s: %s in %.300s", headers[i][0], got ? got : "(none)", reply);
    }
    json_error_t e;
    json_t *j = json_loads(raw_body(reply), 0, &e);
    if (!json_is_object(j)) fail_msg("not a JSON object: %s", raw_body(reply));
    json_decref(j);
}

static void what_the_library_passes_on_is_answered_as_json_with_the_security_headers(void **state)
{
    (void)state;
    char *reply;
    /* HTTP/1.1 without Host (the library is left lenient so that this is ours) */
    static const char no_host[] = "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(no_host, sizeof no_host - 1, &reply), 200);
    free(reply);
    static const char http10[] = "GET /api/nada HTTP/1.0\r\n\r\n";
    expect_service_json(reply, send_raw(http10, sizeof http10 - 1, &reply), 404);
    free(reply);
    static const char method[] = "BREW /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(method, sizeof method - 1, &reply), 405);
    free(reply);
    static const char space[] =
        "GET /api/no existe HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(space, sizeof space - 1, &reply), 404);
    free(reply);
    /* an escaped NUL does not cut the path short: no route has it */
    static const char nul[] =
        "GET /metrics%00.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(nul, sizeof nul - 1, &reply), 404);
    free(reply);
    /* a target in absolute form names its path (RFC 9112 3.2.2), whatever the case of
     * its scheme */
    static const char absolute[] =
        "GET http://127.0.0.1/healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(absolute, sizeof absolute - 1, &reply), 200);
    free(reply);
    static const char absolute_q[] = "GET HTTPS://x:8080/api/fotos?cita_id= HTTP/1.1\r\nHost: "
                                     "x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(absolute_q, sizeof absolute_q - 1, &reply), 401);
    free(reply);
    static const char absolute_nada[] =
        "GET http://x/api/nada HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(absolute_nada, sizeof absolute_nada - 1, &reply), 404);
    free(reply);
    /* other escapes are decoded as before */
    static const char esc[] = "GET /%68ealthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    expect_service_json(reply, send_raw(esc, sizeof esc - 1, &reply), 200);
    free(reply);
    /* headers of 48 KiB: under the limit, so ours */
    size_t big = 48 * 1024;
    char *req = malloc(big + 256);
    int n = snprintf(req, 256, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ");
    memset(req + n, 'h', big);
    memcpy(req + n + big, "\r\n\r\n", 4);
    expect_service_json(reply, send_raw(req, (size_t)n + big + 4, &reply), 200);
    free(reply);
    free(req);
}

struct refused {
    const char *what;
    char *req;
    size_t len;
    long status; /* 0: closed without an answer */
};

static void refused_add(struct refused *r, const char *what, long status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refused_add(struct refused *r, const char *what, long status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&r->req, fmt, ap);
    va_end(ap);
    assert_true(n > 0);
    r->what = what;
    r->len = (size_t)n;
    r->status = status;
}

/* A request with one part of OVER_SIZE bytes: "<head><filler><tail>". */
static void refused_big(struct refused *r, const char *what, long status, const char *head,
                        char filler, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    r->req = malloc(h + OVER_SIZE + t);
    memcpy(r->req, head, h);
    memset(r->req + h, filler, OVER_SIZE);
    memcpy(r->req + h + OVER_SIZE, tail, t);
    r->what = what;
    r->len = h + OVER_SIZE + t;
    r->status = status;
}

static void what_the_library_refuses_is_its_fixed_answer_and_the_connection_closes(void **state)
{
    (void)state;
    struct refused cases[9];
    size_t n = 0;
    refused_add(&cases[n++], "a header line without a colon", 400,
                "GET /healthz HTTP/1.1\r\nHost: x\r\n" MARK "\r\n\r\n");
    refused_add(&cases[n++], "a request line without a version", 400, "GET /" MARK "\r\n\r\n");
    refused_add(&cases[n++], "HTTP/2.0", 505, "GET /" MARK " HTTP/2.0\r\nHost: x\r\n\r\n");
    refused_add(&cases[n++], "a malformed Content-Length", 400,
                "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: " MARK "\r\n\r\n");
    refused_add(&cases[n++], "a Content-Length past 2^64", 413,
                "POST /api/auth/login HTTP/1.1\r\nHost: x\r\n"
                "Content-Length: 99999999999999999999999\r\nX-Mark: " MARK "\r\n\r\n");
    refused_add(&cases[n++], "a broken chunked body", 400,
                "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":" MARK "\r\n0\r\n\r\n");
    refused_add(&cases[n++], "a request line without a space", 0, MARK "\r\n\r\n");
    refused_big(&cases[n++], "a header over the limit", 431,
                "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Mark: " MARK "\r\nX-Big: ", 'h', "\r\n\r\n");
    refused_big(&cases[n++], "a request line over the limit", 414, "GET /" MARK "?q=", 'q',
                " HTTP/1.1\r\nHost: x\r\n\r\n");

    for (size_t i = 0; i < n; i++) {
        struct refused *c = &cases[i];
        char *reply;
        long st = send_raw(c->req, c->len, &reply);
        if (st != c->status) fail_msg("%s: answered %ld: %.300s", c->what, st, reply);
        if (strstr(reply, MARK)) fail_msg("%s: the answer echoes the request", c->what);
        if (c->status) {
            char v[64];
            const char *conn = raw_header(reply, "Connection", v, sizeof v);
            if (!conn || strcasecmp(conn, "close")) fail_msg("%s: not closed: %s", c->what, reply);
            if (raw_header(reply, "Set-Cookie", v, sizeof v))
                fail_msg("%s: sets a cookie", c->what);
            /* the library's fixed text, no script in it */
            if (strstr(raw_body(reply), "<script")) fail_msg("%s: %s", c->what, reply);
        } else if (reply[0]) {
            fail_msg("%s: answered %s", c->what, reply);
        }
        free(reply);
        free(c->req);
        /* and the service goes on */
        expect_healthy(&S);
    }
    char *log = srv_log(&S);
    assert_null(strstr(log, MARK));
    free(log);
}

/* A request whose end two readers could place differently (RFC 9112 6.1,
 * 5.1) is the service's to refuse: its JSON answer at once, the connection
 * closed, and nothing after it run as a request of its own. */
static void a_request_two_readers_could_frame_differently_is_refused_and_closed(void **state)
{
    (void)state;
    /* what a Content-Length reader would take as this request's body is,
     * framed as chunked, a request of its own: never run */
    static const char smuggled[] = "0\r\n\r\nGET /api/nada-" MARK " HTTP/1.1\r\nHost: x\r\n\r\n";
    char both[512];
    snprintf(both, sizeof both,
             "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %zu\r\nTransfer-Encoding: chunked\r\n\r\n%s",
             sizeof smuggled - 1, smuggled);
    const struct {
        const char *what, *req;
        long status;
        const char *msg;
    } cases[] = {
        {"both Content-Length and Transfer-Encoding", both, 400, "Petición HTTP mal formada"},
        {"white space before a header's colon",
         "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding : chunked\r\nContent-Length: 2\r\n\r\n{}",
         400, "Petición HTTP mal formada"},
        {"two Content-Length headers",
         "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: 2\r\nContent-Length: 41\r\n\r\n{}"
         "GET /api/nada-" MARK " HTTP/1.1\r\nHost: x\r\n\r\n",
         400, "Petición HTTP mal formada"},
        {"two Transfer-Encoding headers",
         "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         400, "Petición HTTP mal formada"},
        {"a transfer coding other than chunked",
         "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
         501, "Codificación de transferencia no soportada"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *reply;
        long st = send_raw(cases[i].req, strlen(cases[i].req), &reply);
        expect_service_json(reply, st, cases[i].status);
        char v[64];
        const char *conn = raw_header(reply, "Connection", v, sizeof v);
        if (!conn || strcasecmp(conn, "close"))
            fail_msg("%s: not closed: %s", cases[i].what, reply);
        json_t *j = json_loads(raw_body(reply), 0, NULL);
        assert_string_equal(jstr(j, "error"), cases[i].msg);
        json_decref(j);
        /* one answer on the connection, not two */
        if (strstr(reply + 1, "HTTP/1.1 "))
            fail_msg("%s: a second answer: %s", cases[i].what, reply);
        free(reply);
    }
    char *log = srv_log(&S);
    assert_null(strstr(log, MARK));
    free(log);
    /* a chunked body alone is still read */
    static const char chunked[] =
        "POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
    char *reply;
    long st = send_raw(chunked, sizeof chunked - 1, &reply);
    expect_service_json(reply, st, 400);
    assert_non_null(strstr(raw_body(reply), "Faltan campos requeridos"));
    free(reply);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            what_the_library_passes_on_is_answered_as_json_with_the_security_headers, start, stop),
        cmocka_unit_test_setup_teardown(
            what_the_library_refuses_is_its_fixed_answer_and_the_connection_closes, start, stop),
        cmocka_unit_test_setup_teardown(
            a_request_two_readers_could_frame_differently_is_refused_and_closed, start, stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
