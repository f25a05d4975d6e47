/*
 * harness.h - what the HTTP-level tests share: start the real `barberia
 * serve` on an ephemeral loopback port with a temporary data folder, speak
 * HTTP to it with libcurl, run CLI commands against the same data, and
 * make the usual fixtures (users, barbers, services). Also what several
 * test files need: waiting for an event with a deadline (wait_until, never
 * a fixed settle sleep), requests that start together (race_threads), the
 * SMTP server of the tests, loopback stand-ins for a dead or silent
 * server, and another process holding the database's write lock.
 *
 * Failures are cmocka failures: every helper asserts, so a test reads as
 * the behaviour it proves - except the *_try functions and
 * db_lock_release, which any thread may call.
 *
 * A helper used by more than one test file belongs here, once. Its code is
 * in harness_*.c, one file per concern: harness_process.c (time, the server
 * process, other programs, folders), harness_http.c (HTTP, raw sockets,
 * loopback listeners), harness_fixtures.c (fixtures, shape checks, racers),
 * harness_db.c (the backend, the database, its write lock),
 * harness_storage.c (the photo store), harness_mail.c (the SMTP sink) and
 * harness_doubles.c (the doubles, Google Calendar's).
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

#include "util/common.h" /* clock_mono_ms() for durations, clock_now_ms() for wall time */

/* --- time -------------------------------------------------------------------------------------
 * Clocks: clock_mono_ms() (monotonic: durations and deadlines) and
 * clock_now_ms() (the wall clock, milliseconds since 1970: to compare with
 * the timestamps the service stores), from util/common.h. */

/* Sleeps ms milliseconds (resumed after a signal). */
void sleep_ms(int ms);

/* The n-th weekday (Monday to Friday: the default hours) from three days
 * ahead in UTC, as YYYY-MM-DD. */
void weekday_utc(int n, char out[11]);

/* How often wait_until() checks its condition. */
#define WAIT_POLL_MS 20

/* Waits for an event instead of sleeping a fixed time: calls cond(ud) every
 * WAIT_POLL_MS until it returns true or timeout_ms have passed (checked once
 * more at the deadline). Returns whether the condition came true. Use
 * generous timeouts: a slow machine makes a test slower, never red. */
bool wait_until(bool (*cond)(void *ud), void *ud, int timeout_ms);

/* --- the server ------------------------------------------------------------- */

struct srv {
    pid_t pid;
    int port;
    char base[64];   /* http://127.0.0.1:<port> */
    char dir[256];   /* temporary root, removed by srv_cleanup */
    char data[320];  /* <dir>/data: BARBERIA_DATA */
    char log[320];   /* the server's stderr */
    char out[320];   /* the server's stdout */
    char dburl[256]; /* BARBERIA_DATABASE_URL on a PostgreSQL run, else "" */
    bool peer;       /* data and database are another srv's (srv_init_peer) */
    bool s3;         /* its photos are in the S3 test server (test_s3_all) */
};

/* Makes s a second node of first: its own folder for its logs, but first's
 * data folder and database, which srv_cleanup(s) leaves alone. first must
 * have been started (or initialised) and outlive s. */
void srv_init_peer(struct srv *s, const struct srv *first);

/* True on a PostgreSQL run (BARBERIA_TEST_BACKEND=postgresql, with the
 * cluster's base URL in BARBERIA_TEST_PG): every server then gets a fresh
 * database of its own there instead of the SQLite file, and db_exec runs
 * psql on it. A test program of such a run exits 77 (skipped) at once when
 * no cluster is given. */
bool test_pg(void);
/* On a PostgreSQL run, makes s's database anew (after srv_init, before
 * srv_start) with the ICU locale icu ("en-US") as its default collation, as
 * a cluster made under that locale would give it, whatever the test
 * cluster's own (C.UTF-8); fails the test when the server cannot. Nothing on
 * SQLite. */
void srv_pg_locale(const struct srv *s, const char *icu);

/* With an S3 test server (BARBERIA_TEST_S3_URL, its keys in
 * BARBERIA_TEST_S3_ACCESS_KEY and _SECRET_KEY): appends the three settings
 * that put a server's photos there to env at *n and returns true; false,
 * appending nothing, without one. */
bool test_s3_env(const char **env, size_t *n);

/* True on a run that puts every server's photos in the S3 test server
 * (BARBERIA_TEST_STORAGE=s3 with BARBERIA_TEST_S3_URL set: ctest's api-pg
 * entries, so the suite runs on PostgreSQL + S3 as on SQLite + a folder),
 * unless the program called test_folder_store(). A server whose env names
 * its own BARBERIA_STORAGE_URL keeps it. */
bool test_s3_all(void);

/* For a test program about the folder store itself (it looks at the stored
 * files): its servers keep the folder store on every run. */
void test_folder_store(void);

/* Makes the temporary folder (once per struct; srv_start calls it). */
void srv_init(struct srv *s);

/* Starts `barberia serve --listen 127.0.0.1:0 --data <data>` plus args
 * (NULL-terminated, may be NULL; a --listen or --data among them replaces
 * the default: a flag may be given once), with the environment cleared of every
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
    const char *token;          /* sent as Authorization: Bearer */
    const char *cookie;         /* sent as Cookie: */
    const char *content_type;   /* with body */
    const char *body;           /* may hold NUL bytes: see len */
    size_t len;                 /* 0: strlen(body) */
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
/* Asserts that GET /healthz answers 200. */
void expect_healthy(const struct srv *s);
/* Asserts a response header's exact value (absent: a failure, not a crash). */
void expect_header(const struct resp *r, const char *name, const char *value);

/* http_req and http_multipart for any thread: they never assert (cmocka
 * must only be called from the test's own thread). Return r->status; a
 * transport failure gives 0 with r->body "curl: <reason>". The caller
 * frees r with resp_free. */
long http_try(const struct srv *s, const char *method, const char *path, const struct req_opts *o,
              struct resp *r);
long http_multipart_try(const struct srv *s, const char *path, const char *token,
                        const struct part *parts, size_t n, struct resp *r);

/* --- racers: requests that start together ----------------------------------------------- */

#define RACE_MAX 64

/* Runs fn on each of n items (items: an array of n elements of size bytes),
 * each in its own thread; the threads are released together by a barrier so
 * their requests overlap, and all have finished when this returns. fn must
 * not call cmocka: it records what it saw in its item (http_try), and the
 * test asserts afterwards. n <= RACE_MAX. */
void race_threads(size_t n, void (*fn)(void *item), void *items, size_t size);

/* --- fixtures --------------------------------------------------------------------- */

/* A running server with one barber and one service: what most test groups
 * set up first. */
struct fixture {
    struct srv s;
    char *barbero;  /* its id (owned) */
    char *servicio; /* its id (owned) */
};
/* srv_start(&f->s, env, NULL), then the barber and the service through the
 * CLI. */
void fixture_start(struct fixture *f, const char *const *env, const char *barbero_nombre,
                   const char *servicio_nombre, int duracion_min, double precio);
/* Frees the ids and srv_cleanup()s the server (with its checks); the struct
 * can be started again. */
void fixture_stop(struct fixture *f);

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
/* Signs up as signup_user, then deletes the account (DELETE /api/auth/me):
 * u->id names what the shop keeps of her, who can no longer sign in. */
void deleted_user(const struct srv *s, struct user *u, const char *nombre);
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

/* POST /api/citas/<id>/<accion> (cancelar, reprogramar) as u with body
 * (may be NULL); fails the test unless it answers 200. */
void cita_cambio(const struct srv *s, const struct user *u, const char *id, const char *accion,
                 const char *body);

/* GET /api/lista-espera as u (for cliente_id when not NULL: the front
 * desk's listing of a client's entries). */
void lista_espera_get(const struct srv *s, const struct user *u, const char *cliente_id,
                      struct resp *r);
/* How many entries that listing holds, or, with id, how many of them are id;
 * fails the test unless it answers 200. */
size_t lista_espera_listed(const struct srv *s, const struct user *u, const char *cliente_id,
                           const char *id);

/* Uploads len bytes as a PNG photo of tipo for cita through POST
 * /api/fotos and asserts 201. Returns the answer's "foto" object (caller
 * decrefs). */
json_t *upload_photo(const struct srv *s, const struct user *u, const char *cita, const char *tipo,
                     const void *bytes, size_t len);
/* The path of a photo's url ("/storage/..."), to fetch it from any node.
 * Caller frees. */
char *photo_path(const json_t *foto);

/* json_string_value of a member, or NULL. */
const char *jstr(const json_t *o, const char *key);

/* Resident memory of a process in KiB (VmRSS), -1 when unknown. */
long proc_rss_kib(pid_t pid);
/* Its peak resident memory so far in KiB (VmHWM), -1 when unknown. */
long proc_peak_rss_kib(pid_t pid);

/* True when built with AddressSanitizer (memory numbers are not comparable). */
bool built_with_asan(void);

/* --- the database through the sqlite3 tool, and shape checks ------------------------ */

/* Runs sql with the `sqlite3` command-line tool on <data>/barberia.db (busy
 * timeout 30 s, no header, columns separated by a tab), or on a PostgreSQL
 * run with `psql` on the server's database (the same output form). OUT:
 * *out its stdout (caller frees; may be NULL). Returns the exit status. */
int db_exec(const struct srv *s, const char *sql, char **out);
/* printf-style: runs the SQL, asserts success and returns stdout without
 * its trailing newline (caller frees). */
char *db_query(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf-style: a query answering one integer. */
long db_count(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes every INSERT into table fail with the database's error "fallo
 * forzado" (a trigger named <table>_fallo_forzado), or, with on false,
 * stops that (no error when there was none). Returns db_exec's status. */
int db_forced_failure(const struct srv *s, const char *table, bool on);

/* Another process holding the database's write lock: the sqlite3 tool in a
 * write transaction (BEGIN IMMEDIATE) on <data>/barberia.db, as an operator
 * poking at the file would. */
struct db_locker {
    pid_t pid;
    int in;           /* the tool's stdin: more SQL, then the end */
    char marker[400]; /* appears once the lock is held */
};
/* Starts the tool and returns once it holds the lock; sql (may be NULL)
 * (SQLite only: skips the test on a PostgreSQL run; a test that allocates
 * first should skip itself before, as skip() leaves by longjmp)
 * runs inside the transaction first (e.g. a write that must never be seen).
 * Fails the test when the lock cannot be taken within 60 s. */
void db_lock_take(const struct srv *s, struct db_locker *l, const char *sql);
/* Ends the transaction (COMMIT or ROLLBACK) and waits for the tool to exit.
 * Does not assert (any thread may call it): returns the exit status. */
int db_lock_release(struct db_locker *l, bool commit);
/* SIGKILLs the holder in the middle of its transaction (a process that
 * dies holding the lock); returns once it is gone. */
void db_lock_kill(struct db_locker *l);

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
/* run_program with s's settings (its database and object store), as the
 * CLI helpers run the binary: for a shell line that runs it. */
int run_program_as(const struct srv *s, const char *const *argv, int timeout_ms, char **out,
                   char **err);
/* Makes a self-signed certificate for 127.0.0.1 and localhost in dir (its
 * own authority): *cert and *key, n bytes each, name the PEM files. */
void make_cert(const char *dir, char *cert, char *key, size_t n);
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
/* raw_http in steps, for a request sent in parts with something done in
 * between: a connection (sends and reads time out after timeout_ms), bytes
 * sent on it (the server hanging up ends the sending quietly), and the
 * answer read to the end (closes fd; as raw_http's). */
int raw_open(const struct srv *s, int timeout_ms);
void raw_send(int fd, const void *bytes, size_t len);
long raw_reply(int fd, char **reply);
/* The body of a raw reply (after the blank line), or "" when there is none. */
const char *raw_body(const char *reply);
/* --- the photo bucket, whichever store the server uses --------------------------------- */

/* The objects of the photo bucket ("fotos-citas") of s: files under
 * <data>/storage/fotos-citas with the folder store, objects in the S3 test
 * server (read through its own HTTP interface) when s->s3. key is a
 * storage_path. */
bool obj_exists(const struct srv *s, const char *key);
/* The object's bytes (NUL-terminated, *len without it), NULL when missing.
 * Caller frees. */
char *obj_read(const struct srv *s, const char *key, size_t *len);
/* How many objects have keys under prefix/ (a "<user>/<cita>" folder). */
size_t obj_count(const struct srv *s, const char *prefix);

/* Makes the stored content type of the object at key exactly content_type,
 * as a version that stored the declared text did: the folder store's
 * metadata file rewritten, or in the S3 test server the same bytes put
 * again (anonymously) with that Content-Type. */
void obj_set_raw_type(const struct srv *s, const char *key, const char *content_type);

/* A photo of the folder store put out of its way (aside true: renamed to
 * <its path>.aside) or back again (false): the first photo record's object,
 * so that what reads it fails and then works again. */
void photo_aside(const struct srv *s, bool aside);

/* Regular files under dir, recursively (0 when dir does not exist). */
size_t count_files(const char *dir);
/* Whether something exists at path. */
bool file_exists(const char *path);
/* Removes dir and everything under it (NULL or "": nothing). */
void rm_tree(const char *dir);

/* --- stand-ins for the servers the service calls ---------------------------------------- */

/* A loopback port nothing listens on (it was free a moment ago). */
int free_port(void);
/* A loopback socket that listens and never says a word (the kernel
 * accepts connections into its backlog). OUT: *port. Returns the socket;
 * the caller closes it (connections are then refused). */
int silent_listener(int *port);

/* Runs the double BARBERIA_DOUBLES_DIR/<argv[0]> with argv, its standard
 * output into the file out and its errors into err (NULL: the test's), and
 * waits up to 60 s for the port it prints ("port N"), which it returns. The
 * test fails when the double exits first or stays silent. OUT: *pid. */
int double_spawn(const char *const *argv, const char *out, const char *err, pid_t *pid);

/* The SMTP server of the tests (tests/tools/smtp_sink.py, aiosmtpd), which
 * saves every accepted message as one JSON file. */
struct smtp_sink {
    pid_t pid;
    int port;
    char dir[400]; /* saved messages: <root>/mail */
    char log[400]; /* its stderr: <root>/sink.log */
};
/* Starts it on port (0: any free one) with extra arguments (NULL-ended, may
 * be NULL: --tls-cert F --tls-key F, --auth-user U --auth-password P,
 * --reject-rcpt TEXT), saving into <root>/mail. Returns once it listens. */
void smtp_sink_start(struct smtp_sink *k, const char *root, int port, const char *const *extra);
/* SIGTERM and wait; the exit status (-1 when it had to be killed; 0 when it
 * was not running). */
int smtp_sink_stop(struct smtp_sink *k);
/* Starts s (after srv_init, which it calls) with its mail going to a new
 * sink k in s's folder: BARBERIA_SMTP_URL naming k, then env's settings
 * (NULL-ended, may be NULL). */
void srv_start_mailing(struct srv *s, struct smtp_sink *k, const char *const *env);
/* The saved messages, oldest first, as full paths (free with
 * smtp_sink_free_paths). Returns how many. */
size_t smtp_sink_files(const struct smtp_sink *k, char ***paths);
void smtp_sink_free_paths(char **paths, size_t n);
size_t smtp_sink_count(const struct smtp_sink *k);
/* Waits until at least n messages were saved; false on timeout. */
bool smtp_sink_wait(const struct smtp_sink *k, size_t n, int timeout_ms);
/* The saved messages to rcpt (their first recipient; NULL: anyone) whose
 * text holds needle (NULL: any), oldest first, as smtp_sink_message reads
 * them: a JSON array (caller decrefs). */
json_t *smtp_sink_messages(const struct smtp_sink *k, const char *rcpt, const char *needle);
/* Waits until smtp_sink_messages(k, rcpt, needle) holds at least n; false
 * on timeout. */
bool smtp_sink_wait_messages(const struct smtp_sink *k, const char *rcpt, const char *needle,
                             size_t n, int timeout_ms);
/* A saved message as a mail client sees it (tests/tools/mail_to_json.py):
 * caller decrefs. */
json_t *smtp_sink_message(const char *path);
/* The first unfolded line named name of a message's calendar file (its
 * "ics", as smtp_sink_message reads it): that line's field key ("value", or
 * "text" unescaped), NULL when no line has that name. ics_value is its
 * "value". */
const char *ics_field(const json_t *mail, const char *name, const char *key);
const char *ics_value(const json_t *mail, const char *name);

/* --- the Google Calendar double ---------------------------------------------------------
 * tests/doubles/gcal_double.c with a fresh RSA key and service-account key
 * file, for tests that need a calendar behind the server (the calendar
 * tests have their own, richer set-up: calendar_fixture.h). */
struct gcal_dbl {
    pid_t pid;
    struct srv http; /* only .base is used: the harness's HTTP helpers */
    char root[256];  /* its files: key, key file, log */
    char log[320], out[320], err[320], creds[320], token_url[128];
    char env[4][512]; /* the server settings that point at it */
};
/* Makes root/ key files and starts the double. */
void gcal_dbl_start(struct gcal_dbl *d, const char *root);
/* A fresh 2048-bit RSA key: the private one into priv_path (PKCS#8), the
 * public one into pub_path (NULL: not written). */
void gcal_keypair(const char *priv_path, const char *pub_path);
/* Writes a service-account key file shaped like the ones Google hands out:
 * email, the private key in key_path, and token_url as its token_uri. */
void gcal_write_creds(const char *path, const char *email, const char *key_path,
                      const char *token_url);
/* Stops it (promptly and cleanly, without a sanitizer report, or the test
 * fails). */
void gcal_dbl_stop(struct gcal_dbl *d);
/* POST /control?query (see the double's header comment). */
void gcal_dbl_control(struct gcal_dbl *d, const char *query);
/* Where its log ends now; the entries written after mark as a JSON array
 * (caller decrefs). */
size_t gcal_dbl_mark(const struct gcal_dbl *d);
json_t *gcal_dbl_since(const struct gcal_dbl *d, size_t mark);

#endif
