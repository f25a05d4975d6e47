/*
 * harness.h - what the HTTP-level tests share: start the real `barberia
 * serve` on an ephemeral loopback port with a temporary data folder, speak
 * HTTP to it with libcurl, run CLI commands against the same data, and
 * make the usual fixtures (users, barbers, services).
 *
 * Failures are cmocka failures: every helper asserts, so a test reads as
 * the behaviour it proves.
 */
#ifndef BR_TEST_HARNESS_H
#define BR_TEST_HARNESS_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <sys/types.h>

/* --- the server ------------------------------------------------------------- */

struct srv {
    pid_t pid;
    int port;
    char base[64];  /* http://127.0.0.1:<port> */
    char dir[256];  /* temporary root, removed by srv_cleanup */
    char data[320]; /* <dir>/data: BARBERIA_DATA */
    char log[320];  /* the server's stderr */
    char out[320];  /* the server's stdout */
};

/* Makes the temporary folder (once per struct; srv_start calls it). */
void srv_init(struct srv *s);

/* Starts `barberia serve --listen 127.0.0.1:0 --data <data>` plus args
 * (NULL-terminated, may be NULL), with the environment cleared of every
 * BARBERIA_* variable and then given env ("NAME=value" strings,
 * NULL-terminated, may be NULL). Waits until it listens. Reuses the data
 * folder when called again on the same struct after srv_stop. */
void srv_start(struct srv *s, const char *const *env, const char *const *args);

/* SIGTERM, then waits (at most timeout_ms) for the exit. Returns the exit
 * status (128 + signal when killed by one, -1 on timeout: then SIGKILLed). */
int srv_stop_within(struct srv *s, int timeout_ms);
int srv_stop(struct srv *s);

/* Stops the server if needed and removes the temporary folder. Fails the
 * test when the server did not exit with status 0 or its log holds a
 * sanitizer report. */
void srv_cleanup(struct srv *s);

/* The server's stderr so far. Caller frees. */
char *srv_log(const struct srv *s);

/* Waits until the server's stderr contains needle; false on timeout. */
bool srv_wait_log(const struct srv *s, const char *needle, int timeout_ms);

/* Runs `barberia <args...> --data <data>` (args NULL-terminated) with env
 * as in srv_start. OUT: *out, *err (caller frees; may be NULL). Returns the
 * exit status. When data_flag is false, --data is not added. */
int run_cli(const struct srv *s, const char *const *env, const char *const *args, bool data_flag,
            char **out, char **err);
/* Shorthand: run_cli with data flag, no env; returns the exit status. */
int srv_cli(const struct srv *s, char **out, char **err, ...);

/* Reads a whole file. Caller frees; NULL when it cannot be read. */
char *read_file(const char *path, size_t *len);

/* --- HTTP ----------------------------------------------------------------------- */

struct resp {
    long status;
    char *body;
    size_t len;
    json_t *json;  /* the body parsed, or NULL when it is not JSON */
    char *headers; /* the raw header block of the final response */
};
void resp_free(struct resp *r);
/* The value of a response header (last occurrence, case-insensitive name),
 * copied into buf; NULL when absent. */
const char *resp_header(const struct resp *r, const char *name, char *buf, size_t n);

struct req_opts {
    const char *token;        /* sent as Authorization: Bearer */
    const char *cookie;       /* sent as Cookie: */
    const char *content_type; /* with body */
    const char *body;         /* may hold NUL bytes: see len */
    size_t len;               /* 0: strlen(body) */
    const char *const *headers; /* extra "Name: value" lines, NULL-terminated */
};
/* Performs one request to s->base + path. */
void http_req(const struct srv *s, const char *method, const char *path, const struct req_opts *o,
              struct resp *r);
void http_get(const struct srv *s, const char *path, const char *token, struct resp *r);
/* A JSON request; json is the body text (NULL: no body). */
void http_json(const struct srv *s, const char *method, const char *path, const char *token,
               const char *json, struct resp *r);

/* One part of a multipart/form-data upload. */
struct part {
    const char *name;
    const char *data;     /* for a file: its bytes; else the field value */
    size_t len;           /* 0: strlen(data) */
    const char *filename; /* non-NULL: sent as a file part */
    const char *type;     /* the part's Content-Type (NULL: none) */
};
void http_multipart(const struct srv *s, const char *path, const char *token,
                    const struct part *parts, size_t n, struct resp *r);

/* Asserts the status and, when msg is non-NULL, the body {"error": msg}. */
void expect_error(const struct resp *r, long status, const char *msg);

/* --- fixtures --------------------------------------------------------------------- */

struct user {
    char id[40];
    char email[128];
    char password[64];
    char token[64];
};

/* A fresh address: <prefix>-<counter>-<pid>@test.example. */
void unique_email(char *buf, size_t n, const char *prefix);

/* Signs up through the API (rol cliente). nombre may be NULL. */
void signup_user(const struct srv *s, struct user *u, const char *nombre);
/* Creates a user through the CLI with a role (user add --rol), then logs in
 * through the API. */
void make_user(const struct srv *s, struct user *u, const char *nombre, const char *rol);
/* Adds through the CLI; returns the new id in a static-free buffer the
 * caller owns (free). */
char *make_barbero(const struct srv *s, const char *nombre);
char *make_servicio(const struct srv *s, const char *nombre, int duracion_min, double precio);

/* Books through the API and asserts 201; returns the cita's id (caller
 * frees). notas may be NULL. */
char *book(const struct srv *s, const struct user *u, const char *barbero, const char *servicio,
           const char *fecha_inicio, const char *notas);

/* json_string_value of a member, or NULL. */
const char *jstr(const json_t *o, const char *key);

/* Resident memory of a process in KiB (VmRSS), -1 when unknown. */
long proc_rss_kib(pid_t pid);

/* True when built with AddressSanitizer (memory numbers are not comparable). */
bool built_with_asan(void);

/* --- the database through the sqlite3 tool, and shape checks ------------------------ */

/* Runs sql with the `sqlite3` command-line tool on <data>/barberia.db (busy
 * timeout 30 s, no header, columns separated by a tab). OUT: *out its
 * stdout (caller frees; may be NULL). Returns the exit status. */
int db_exec(const struct srv *s, const char *sql, char **out);
/* printf-style: runs the SQL, asserts success and returns stdout without
 * its trailing newline (caller frees). */
char *db_query(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf-style: a query answering one integer. */
long db_count(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* True when s is a canonical lowercase UUID (8-4-4-4-12 hex digits). */
bool is_lower_uuid(const char *s);
/* Asserts that o is a JSON object with exactly the member names given
 * (NULL-terminated), in any order. */
void expect_keys(const json_t *o, ...);

/* --- processes, raw HTTP and folders (operator-facing tests) ----------------------- */

/* Runs the program argv[0] with argv and env as in srv_start (stdin from
 * /dev/null). OUT: *out, *err (caller frees; may be NULL). Returns the exit
 * status (128 + signal), or -1 when it was still running after timeout_ms
 * and had to be SIGKILLed. */
int run_program(const char *const *argv, const char *const *env, int timeout_ms, char **out,
                char **err);
/* run_cli, bounded: a command still running after timeout_ms is SIGKILLed
 * and -1 is returned. */
int run_cli_within(const struct srv *s, const char *const *env, const char *const *args,
                   bool data_flag, int timeout_ms, char **out, char **err);
/* Waits (at most timeout_ms) for the server to exit by itself, without
 * signalling it. Returns the exit status as srv_stop_within does; -1 on
 * timeout (the server is then SIGKILLed). */
int srv_wait_exit(struct srv *s, int timeout_ms);
/* Sends len raw bytes over a fresh connection, then reads until the server
 * closes or nothing arrives for timeout_ms. A send the server cuts short (it
 * may answer and hang up before the body is in) is not an error. Returns
 * the status of the reply, 0 when there is none. OUT: *reply, the whole
 * reply NUL-terminated (caller frees; may be NULL). */
long raw_http(const struct srv *s, const void *req, size_t len, int timeout_ms, char **reply);
/* The body of a raw reply (after the blank line), or "" when there is none. */
const char *raw_body(const char *reply);
/* Regular files under dir, recursively (0 when dir does not exist). */
size_t count_files(const char *dir);

#endif
