/*
 * fz.h - what the libFuzzer targets of tests/fuzz share.
 *
 * Pure parsers (timestamps, object keys, photo keys) are called directly.
 * Everything else that reads outside input goes through the real server:
 * fz_start() runs it once per fuzzing process, inside that process
 * (http_bind on 127.0.0.1:0 and http_serve with the real routes and a real
 * app on a temporary data folder, wired as `barberia serve` wires it), and
 * fz_http() sends each request over a loopback socket, cut into several
 * writes. After each write the driver waits until the server has read
 * everything sent so far, so the server's reads end exactly at the cuts
 * (the multipart path sees the body in those pieces).
 *
 * Every answer must be a well-formed HTTP/1.1 response whose body is one
 * JSON object ({"error": "<text>"} when the status is 400 or more), within
 * a bound; anything else - and any sanitizer report, in any thread of the
 * server - is a crash that libFuzzer records with its input.
 *
 * Inputs of the HTTP targets are text: the first line lists the cuts
 * (decimal byte offsets into the body, 0 cutting between the header block
 * and the body; into the whole request when it has no body; other
 * characters separate them), the rest is the payload. In the
 * payload these placeholders stand for the fixture's values:
 *   @TOKEN@ a client's session token    @CLIENT@ that client's user id
 *   @EMAIL@ @PASSWORD@ that client's credentials
 *   @VICTIM@ another client's user id (the one the admin target edits)
 *   @BARBERO@ @SERVICIO@ @CITA@ a barber, a service, a booking of the client
 */
#ifndef BR_FZ_H
#define BR_FZ_H

#include "util/common.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point (each target defines it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reports a broken property and aborts: libFuzzer saves the input. */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* --- the server ---------------------------------------------------------------- */

struct fz_fixture {
    char token[64];       /* a client's session */
    char admin_token[64]; /* an administrator's session */
    char client_id[40];
    char victim_id[40];
    char barbero_id[40];
    char servicio_id[40];
    char cita_id[40];
    char email[64];
    char password[32];
    char base[64]; /* http://127.0.0.1:<port> */
};

/* Starts the server and makes the fixture on the first call; later calls
 * return the same fixture. The data folder is removed at exit. */
const struct fz_fixture *fz_start(void);
/* The server's app (its store, to read back what a request changed). */
struct app;
struct app *fz_app(void);

/* --- inputs ---------------------------------------------------------------------- */

#define FZ_MAX_CUTS 16

struct fz_input {
    size_t cuts[FZ_MAX_CUTS]; /* offsets into the body, in input order */
    size_t ncuts;
    char *payload; /* placeholders replaced; NUL-terminated; owned (fz_input_free) */
    size_t len;
};
void fz_input_parse(const uint8_t *data, size_t size, struct fz_input *in);
void fz_input_free(struct fz_input *in);

/* Copies n bytes of s as a header value: what HTTP allows there (tab,
 * visible ASCII, space, bytes 0x80-0xff) is kept, control characters (CR
 * and LF would end the header) are dropped. Caller frees. */
char *fz_header_value(const char *s, size_t n);

/* n bytes of s as a request-target: '/' in front when missing, bytes other
 * than visible ASCII percent-encoded (so any byte reaches the server's
 * decoding). Caller frees. */
char *fz_target(const char *s, size_t n);
/* Percent-decodes n bytes of s as the server reads a path (%XX with two hex
 * digits, but %00, which stays as it is; with plus_space also '+' as a
 * space, as in a query). OUT: *len.
 * Caller frees. */
char *fz_unescape(const char *s, size_t n, bool plus_space, size_t *len);

/* --- requests ---------------------------------------------------------------------- */

struct fz_req {
    const char *method;
    const char *target;         /* request-target, e.g. "/api/citas?estado=x" */
    const char *const *headers; /* extra "Name: value" lines, NULL-terminated; may be NULL */
    const char *body;           /* NULL: no body (no Content-Length) */
    size_t len;
    const size_t *cuts; /* offsets into the body, any order, may repeat */
    size_t ncuts;
};

struct fz_resp {
    int status;
    char *head; /* the header block, NUL-terminated */
    char *body; /* NUL-terminated */
    size_t len;
    json_t *json;     /* the body parsed (JSON answers) */
    bool library_431; /* libmicrohttpd's own broken 431 for a cookie it cannot parse */
};

/* Sends the request (with Host, Connection: close and Content-Length added)
 * and reads the answer. When json is true the answer must be JSON as said
 * above (HEAD answers: no body), else only well-formed HTTP. Fails (aborts)
 * on anything else. Returns false, with *r empty, only when the server hung
 * up before the request was all sent and no answer could be read (allowed:
 * a refusal before the body). */
bool fz_http(const struct fz_req *q, bool json, struct fz_resp *r);
void fz_resp_free(struct fz_resp *r);
/* The value of a header of the answer (first occurrence, any case), copied
 * into buf; NULL when absent. */
const char *fz_resp_header(const struct fz_resp *r, const char *name, char *buf, size_t n);
/* The "error" text of an error answer ("" for a success). */
const char *fz_resp_error(const struct fz_resp *r);

#endif
