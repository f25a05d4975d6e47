/*
 * test_multipart.c - POST /api/fotos bodies as the network delivers them:
 * split into reads at every byte offset around every part boundary, or one
 * byte at a time, each upload must be parsed exactly as if it came in one
 * piece (201, and the stored object holds exactly the uploaded bytes). And
 * forms libmicrohttpd's parser hands over with NULL arguments (a part
 * without a name) or no parts at all get their clear 400, never a crash.
 * The boundary parameter is found as RFC 9110 says: its name in any case,
 * wherever it stands among the parameters.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BOUNDARY "----split-7c2e"

static struct fixture F; /* the server, a barber and a service */
static struct user U;
static char *cita;

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Split", "Corte Split", 30, 10);
    signup_user(&F.s, &U, "Sara");
    cita = book(&F.s, &U, F.barbero, F.servicio, "2031-03-03T10:00:00Z", NULL);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(cita);
    fixture_stop(&F);
    return 0;
}

/* The bytes of the file part: every byte value, NULs and CR LF included. */
static size_t image(char *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (char)(i * 13 + 1);
    return n;
}

/* A whole upload request (head and body) whose Content-Type is ctype (its
 * boundary BOUNDARY); the tipo is unique per call so that the three-per-tipo
 * rule never interferes. OUT: *body_at, where the body starts. Caller frees. */
static char *upload_request_typed(const char *ctype, const char *tipo, const char *img,
                                  size_t img_len, size_t *len, size_t *body_at)
{
    char pre[512], post[256];
    int pl = snprintf(pre, sizeof pre,
                      "--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"cita_id\"\r\n\r\n%s\r\n"
                      "--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"file\"; filename=\"corte.PNG\"\r\n"
                      "Content-Type: image/png\r\n\r\n",
                      cita);
    int ql = snprintf(post, sizeof post,
                      "\r\n--" BOUNDARY "\r\n"
                      "Content-Disposition: form-data; name=\"tipo\"\r\n\r\n%s\r\n"
                      "--" BOUNDARY "--\r\n",
                      tipo);
    size_t blen = (size_t)pl + img_len + (size_t)ql;
    char head[512];
    int hl = snprintf(head, sizeof head,
                      "POST /api/fotos HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                      "Authorization: Bearer %s\r\n"
                      "Content-Type: %s\r\n"
                      "Content-Length: %zu\r\n\r\n",
                      U.token, ctype, blen);
    char *req = malloc((size_t)hl + blen);
    assert_non_null(req);
    memcpy(req, head, (size_t)hl);
    memcpy(req + hl, pre, (size_t)pl);
    memcpy(req + hl + pl, img, img_len);
    memcpy(req + hl + pl + img_len, post, (size_t)ql);
    *len = (size_t)hl + blen;
    *body_at = (size_t)hl;
    return req;
}

/* The same, with the usual Content-Type. */
static char *upload_request(const char *tipo, const char *img, size_t img_len, size_t *len,
                            size_t *body_at)
{
    return upload_request_typed("multipart/form-data; boundary=" BOUNDARY, tipo, img, img_len, len,
                                body_at);
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Sends req in the pieces that the sorted offsets cut (each written on its
 * own, with a pause so that the server reads them apart), then reads the
 * reply until the server closes. Returns the reply (caller frees). */
static char *send_split(const char *req, size_t len, const size_t *cuts, size_t ncuts)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)F.s.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    size_t at = 0;
    for (size_t i = 0; i <= ncuts; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        while (at < end) {
            ssize_t n = send(fd, req + at, end - at, MSG_NOSIGNAL);
            if (n <= 0) fail_msg("send: %s", strerror(errno));
            at += (size_t)n;
        }
        if (i < ncuts) pause_us(1500);
    }
    size_t cap = 8192, got = 0;
    char *reply = malloc(cap);
    assert_non_null(reply);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    for (;;) {
        if (got + 1 == cap) {
            cap *= 2;
            reply = realloc(reply, cap);
            assert_non_null(reply);
        }
        ssize_t n = recv(fd, reply + got, cap - got - 1, 0);
        if (n <= 0) break;
        got += (size_t)n;
    }
    reply[got] = '\0';
    close(fd);
    return reply;
}

/* Asserts a 201 whose stored object holds exactly img. */
static void expect_stored(const char *reply, const char *img, size_t img_len, const char *what)
{
    if (strncmp(reply, "HTTP/1.1 201", 12) != 0) fail_msg("%s: %.200s", what, reply);
    json_error_t e;
    json_t *j = json_loads(raw_body(reply), 0, &e);
    const char *url = j ? jstr(json_object_get(j, "foto"), "url") : NULL;
    if (!url) fail_msg("%s: no url in %s", what, raw_body(reply));
    const char *path = strstr(url, "/storage/");
    assert_non_null(path);
    struct resp r;
    http_get(&F.s, path, NULL, &r);
    if (r.status != 200 || r.len != img_len || memcmp(r.body, img, img_len) != 0)
        fail_msg("%s: stored %zu bytes (status %ld), uploaded %zu", what, r.len, r.status, img_len);
    resp_free(&r);
    json_decref(j);
}

/* Offsets just around each part boundary and inside each value's first
 * bytes: where a read ending 1-4 bytes into a value used to lose it. */
static size_t interesting_offsets(const char *req, size_t len, size_t body_at, size_t *out,
                                  size_t cap)
{
    size_t n = 0;
    for (size_t i = body_at; i + 2 <= len && n < cap; i++) {
        bool near = false;
        for (long d = -6; d <= 6 && !near; d++) {
            long j = (long)i + d;
            if (j < (long)body_at || j + 4 > (long)len) continue;
            /* the start of a delimiter, or the blank line that starts a value */
            near = !memcmp(req + j, "--" BOUNDARY, 4) || !memcmp(req + j, "\r\n\r\n", 4);
        }
        if (near) out[n++] = i;
    }
    return n;
}

static void an_upload_split_at_every_offset_around_every_boundary_is_parsed_whole(void **state)
{
    (void)state;
    char img[200];
    size_t img_len = image(img, sizeof img);
    size_t len, body_at;
    char *req = upload_request("probe", img, img_len, &len, &body_at);
    size_t offs[2048];
    size_t n = interesting_offsets(req, len, body_at, offs, 2048);
    free(req);
    assert_true(n > 40);
    for (size_t i = 0; i < n; i++) {
        char tipo[32], what[64];
        snprintf(tipo, sizeof tipo, "split%zu", i);
        char *r = upload_request(tipo, img, img_len, &len, &body_at);
        snprintf(what, sizeof what, "split at body byte %zu", offs[i] - body_at);
        char *reply = send_split(r, len, &offs[i], 1);
        expect_stored(reply, img, img_len, what);
        free(reply);
        free(r);
    }
}

static void an_upload_in_many_small_reads_is_parsed_whole(void **state)
{
    (void)state;
    char img[300];
    size_t img_len = image(img, sizeof img);
    size_t len, body_at;
    char *req = upload_request("bytewise", img, img_len, &len, &body_at);
    /* one byte a read through the whole body */
    size_t *cuts = calloc(len, sizeof *cuts);
    size_t n = 0;
    for (size_t i = body_at + 1; i < len; i++)
        cuts[n++] = i;
    char *reply = send_split(req, len, cuts, n);
    expect_stored(reply, img, img_len, "one byte a read");
    free(reply);
    free(req);
    /* and random pieces of 1 to 9 bytes, three times */
    srand(7);
    for (int round = 0; round < 3; round++) {
        char tipo[32];
        snprintf(tipo, sizeof tipo, "random%d", round);
        req = upload_request(tipo, img, img_len, &len, &body_at);
        n = 0;
        for (size_t i = body_at + 1 + (size_t)(rand() % 9); i < len; i += 1 + (size_t)(rand() % 9))
            cuts[n++] = i;
        reply = send_split(req, len, cuts, n);
        expect_stored(reply, img, img_len, "random small reads");
        free(reply);
        free(req);
    }
    free(cuts);
}

/* RFC 2046 and RFC 9110: parameter names are case-insensitive, and any
 * parameter may come before or after the boundary; each of these is the
 * same form as the usual `boundary=`, stored byte for byte. */
static void the_boundary_parameter_is_read_in_any_case_and_place(void **state)
{
    (void)state;
    static const char *const types[] = {
        "multipart/form-data; BOUNDARY=" BOUNDARY,
        "Multipart/Form-Data; Boundary=\"" BOUNDARY "\"",
        "multipart/form-data; boundary=" BOUNDARY "; charset=utf-8",
        "multipart/form-data;charset=utf-8;\tBoUnDaRy=" BOUNDARY,
    };
    char img[200];
    size_t img_len = image(img, sizeof img);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char tipo[32], what[160];
        snprintf(tipo, sizeof tipo, "caso%zu", i);
        snprintf(what, sizeof what, "Content-Type: %s", types[i]);
        size_t len, body_at;
        char *req = upload_request_typed(types[i], tipo, img, img_len, &len, &body_at);
        char *reply = send_split(req, len, NULL, 0);
        expect_stored(reply, img, img_len, what);
        free(reply);
        free(req);
    }
}

static void a_part_without_a_name_is_400_formulario_invalido(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "--" BOUNDARY "\r\nContent-Disposition: form-data\r\n\r\nvalue\r\n--" BOUNDARY "--\r\n",
        "--" BOUNDARY "\r\nContent-Disposition: form-data; filename=\"a.png\"\r\n"
        "Content-Type: image/png\r\n\r\nPNG\r\n--" BOUNDARY "--\r\n",
        "--" BOUNDARY "\r\n\r\nno headers at all\r\n--" BOUNDARY "--\r\n",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct req_opts o = {.token = U.token,
                             .content_type = "multipart/form-data; boundary=" BOUNDARY,
                             .body = bodies[i]};
        struct resp r;
        http_req(&F.s, "POST", "/api/fotos", &o, &r);
        expect_error(&r, 400, "Formulario inválido");
        resp_free(&r);
    }
    /* still serving */
    struct resp r;
    http_get(&F.s, "/healthz", NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
}

static void a_form_with_no_parts_is_400_faltan_campos(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "--" BOUNDARY "--\r\n",
        "a preamble the parser skips\r\n--" BOUNDARY "--\r\n",
        "",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct req_opts o = {.token = U.token,
                             .content_type = "multipart/form-data; boundary=\"" BOUNDARY "\"",
                             .body = bodies[i]};
        struct resp r;
        http_req(&F.s, "POST", "/api/fotos", &o, &r);
        expect_error(&r, 400, "Faltan campos requeridos");
        resp_free(&r);
    }
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM fotos_cita"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_part_without_a_name_is_400_formulario_invalido),
        cmocka_unit_test(a_form_with_no_parts_is_400_faltan_campos),
        cmocka_unit_test(an_upload_split_at_every_offset_around_every_boundary_is_parsed_whole),
        cmocka_unit_test(an_upload_in_many_small_reads_is_parsed_whole),
        cmocka_unit_test(the_boundary_parameter_is_read_in_any_case_and_place),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
