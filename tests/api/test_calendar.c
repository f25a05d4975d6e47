/*
 * test_calendar.c - the Google Calendar adapter, end to end: the real
 * `barberia serve` talks to tests/doubles/gcal_double.c, a strict local
 * stand-in for Google's token endpoint and Calendar API that logs every
 * request it gets as one JSON line. The tests make a throw-away RSA key and
 * service-account key file, then prove what a booking sends (token grant,
 * event body, encoded calendar id), that the access token is cached and
 * renewed, and that a failing, garbled or silent Google leaves the booking
 * at 201 with google_event_id null within the configured bound, with one
 * log line and no secret in it. Timing assertions only ever bound from
 * above, with a wide margin, so a slow machine cannot fail them.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_EMAIL     "barberia-test@barberia-test.iam.gserviceaccount.com"
#define CALENDAR_ID      "barberia@group.calendar.google.com"
#define CALENDAR_RAW     "barberia%40group.calendar.google.com"
#define ODD_CALENDAR_ID  "Sala 1 #norte/sur"
#define ODD_CALENDAR_RAW "Sala%201%20%23norte%2Fsur"
#define EVENTS_PREFIX    "/calendar/v3/calendars/"
#define SHORT_BOUND_MS   1500
/* happy paths get a wide bound: a slow machine must not turn them red */
#define LONG_BOUND_MS 30000
#define MARGIN_MS     8000
/* base64url of {"alg":"RS256","typ":"JWT"}: the start of every assertion */
#define JWT_HEADER_B64 "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"
/* the Workspace user DS's account acts for (domain-wide delegation) */
#define SUBJECT "agenda@barberia-test.example"

extern char **environ;

/* --- the doubles --------------------------------------------------------------------- */

/* One running gcal_double. */
struct dbl {
    pid_t pid;
    struct srv http; /* only .base is used: the harness's HTTP helpers */
    char log[320], out[320], err[320];
    char token_url[128];
};

static struct dbl D;  /* an ordinary service account: no delegation, no "sub" */
static struct dbl DS; /* domain-wide delegation, acting for SUBJECT */

static char ROOT[256];                          /* temporary folder of the group */
static char KEY[320], PUB[320], OTHER_KEY[320]; /* PEM files */
static char CREDS[320];                         /* the good service-account key file */
static char CREDS_WRONG_EMAIL[320], CREDS_WRONG_KEY[320];
static char CREDS_DS[320]; /* the same account, with DS's token_uri */

/* Starts a double whose files are <ROOT>/<name>.*; subject NULL: no
 * domain-wide delegation; port 0: any free one. */
static void dbl_start_on(struct dbl *d, const char *name, const char *subject, int port)
{
    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    snprintf(d->log, sizeof d->log, "%s/%s.jsonl", ROOT, name);
    snprintf(d->out, sizeof d->out, "%s/%s.out", ROOT, name);
    snprintf(d->err, sizeof d->err, "%s/%s.err", ROOT, name);
    int outfd = open(d->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int errfd = open(d->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(outfd >= 0 && errfd >= 0);
    const char *argv[] = {
        "gcal_double", "--public-key",
        PUB,           "--client-email",
        CLIENT_EMAIL,  "--log",
        d->log,        "--port",
        portarg,       subject ? "--subject" : NULL, /* the list ends here without one */
        subject,       NULL};
    pid_t pid = fork();
    if (pid == 0) {
        dup2(outfd, 1);
        dup2(errfd, 2);
        execv(BARBERIA_DOUBLES_DIR "/gcal_double", (char *const *)argv);
        _exit(127);
    }
    close(outfd);
    close(errfd);
    assert_true(pid > 0);
    d->pid = pid;
    for (int waited = 0; waited < 60000; waited += 20) {
        char *out = read_file(d->out, NULL);
        const char *p = out ? strstr(out, "port ") : NULL;
        if (p && strchr(p, '\n')) {
            int bound = (int)strtol(p + 5, NULL, 10);
            free(out);
            snprintf(d->http.base, sizeof d->http.base, "http://127.0.0.1:%d", bound);
            snprintf(d->token_url, sizeof d->token_url, "http://127.0.0.1:%d/token", bound);
            return;
        }
        free(out);
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            d->pid = 0;
            char *err = read_file(d->err, NULL);
            fail_msg("gcal_double exited before listening: %s", err ? err : "");
        }
        sleep_ms(20);
    }
    fail_msg("gcal_double did not print its port within 60 s");
}

static void dbl_start(struct dbl *d, const char *name, const char *subject)
{
    dbl_start_on(d, name, subject, 0);
}

/* Stops a double; it must go promptly (even with hung requests) and
 * cleanly. */
static void dbl_stop(struct dbl *d)
{
    if (d->pid <= 0) return;
    kill(d->pid, SIGTERM);
    int st = 0;
    bool gone = false;
    for (int waited = 0; waited < 20000 && !gone; waited += 10) {
        gone = waitpid(d->pid, &st, WNOHANG) == d->pid;
        if (!gone) sleep_ms(10);
    }
    if (!gone) {
        kill(d->pid, SIGKILL);
        waitpid(d->pid, &st, 0);
    }
    d->pid = 0;
    char *err = read_file(d->err, NULL);
    bool sanitizer = err && (strstr(err, "Sanitizer") || strstr(err, "runtime error:"));
    if (!gone || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || sanitizer) {
        fprintf(stderr, "gcal_double stderr:\n%s\n", err ? err : "");
        free(err);
        fail_msg("gcal_double did not stop promptly and cleanly on SIGTERM");
    }
    free(err);
}

static void dbl_control(struct dbl *d, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&d->http, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    resp_free(&r);
}

static void double_control(const char *query)
{
    dbl_control(&D, query);
}

/* Where a double's log ends now: entries after it are what came next. */
static size_t dbl_mark(const struct dbl *d)
{
    struct stat st;
    return stat(d->log, &st) == 0 ? (size_t)st.st_size : 0;
}

static size_t dlog_mark(void)
{
    return dbl_mark(&D);
}

/* A double's log entries written after mark, as a JSON array (caller
 * decrefs). */
static json_t *dbl_since(const struct dbl *d, size_t mark)
{
    size_t len = 0;
    char *text = d->log[0] ? read_file(d->log, &len) : NULL;
    json_t *all = json_array();
    for (char *line = text && mark <= len ? text + mark : NULL; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON: %.*s", (int)(nl - line), line);
        json_array_append_new(all, e);
        line = nl + 1;
    }
    free(text);
    return all;
}

static json_t *dlog_since(size_t mark)
{
    return dbl_since(&D, mark);
}

static bool is_token_entry(const json_t *e)
{
    return !strcmp(jstr(e, "path"), "/token");
}

static bool is_insert_entry(const json_t *e)
{
    return !strcmp(jstr(e, "method"), "POST") &&
           !strncmp(jstr(e, "uri"), EVENTS_PREFIX, strlen(EVENTS_PREFIX));
}

static size_t count_tokens_since(size_t mark)
{
    json_t *all = dlog_since(mark);
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(all, i, e) n += is_token_entry(e);
    json_decref(all);
    return n;
}

/* The events.insert entry that issued event id, borrowed from all. */
static const json_t *insert_entry_for(const json_t *all, const char *event_id)
{
    size_t i;
    const json_t *e;
    json_array_foreach(all, i, e)
    {
        const char *id = jstr(e, "issued_id");
        if (id && !strcmp(id, event_id)) return e;
    }
    fail_msg("the double issued no event %s", event_id);
    return NULL;
}

/* --- keys and key files --------------------------------------------------------------- */

static void make_keypair(const char *priv_path, const char *pub_path)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
    EVP_PKEY *k = NULL;
    assert_non_null(ctx);
    assert_int_equal(EVP_PKEY_keygen_init(ctx), 1);
    assert_true(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) > 0);
    assert_int_equal(EVP_PKEY_keygen(ctx, &k), 1);
    FILE *f = fopen(priv_path, "w");
    assert_non_null(f);
    /* PKCS#8, "BEGIN PRIVATE KEY", as Google's key files hold it */
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    if (pub_path) {
        f = fopen(pub_path, "w");
        assert_non_null(f);
        assert_int_equal(PEM_write_PUBKEY(f, k), 1);
        fclose(f);
    }
    EVP_PKEY_free(k);
    EVP_PKEY_CTX_free(ctx);
}

/* Writes a service-account key file shaped like the ones Google hands out,
 * whose token_uri is d's. */
static void write_creds_for(const struct dbl *d, const char *path, const char *email,
                            const char *key_path)
{
    char *pem = read_file(key_path, NULL);
    assert_non_null(pem);
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "service_account",
                          "project_id", "barberia-test", "private_key_id", "0123456789abcdef",
                          "private_key", pem, "client_email", email, "client_id",
                          "123456789012345678901", "auth_uri",
                          "https://accounts.google.com/o/oauth2/auth", "token_uri", d->token_url);
    free(pem);
    assert_int_equal(json_dump_file(j, path, JSON_INDENT(2)), 0);
    json_decref(j);
}

static void write_creds(const char *path, const char *email, const char *key_path)
{
    write_creds_for(&D, path, email, key_path);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* --- shops: a server with a barber, a service and a named client ----------------------- */

struct shop {
    struct srv s;
    char *barbero, *servicio;
    struct user ana; /* her profile has a nombre */
    char env[5][512];
    const char *envp[6];
};

#define BARBERO_NOMBRE  "Carlos Méndez"
#define SERVICIO_NOMBRE "Corte clásico"
#define ANA_NOMBRE      "Ana Pérez"

static struct shop G; /* the main shop: good key, CALENDAR_ID, a wide bound */
static struct shop T; /* short bound, for the failure modes */

/* Starts a shop that talks to double d. creds NULL: no calendar configured
 * at all. subject: BARBERIA_GOOGLE_SUBJECT (NULL: unset). */
static void shop_start_on(struct shop *sh, const struct dbl *d, const char *creds,
                          const char *calendar_id, int bound_ms, const char *subject)
{
    memset(sh, 0, sizeof *sh);
    int n = 0;
    if (creds) {
        snprintf(sh->env[n++], sizeof sh->env[0], "BARBERIA_GOOGLE_CREDENTIALS=%s", creds);
        snprintf(sh->env[n++], sizeof sh->env[0], "BARBERIA_GOOGLE_API_URL=%s/calendar/v3",
                 d->http.base);
        snprintf(sh->env[n++], sizeof sh->env[0], "BARBERIA_GOOGLE_CALENDAR_ID=%s", calendar_id);
        snprintf(sh->env[n++], sizeof sh->env[0], "BARBERIA_CALENDAR_TIMEOUT_MS=%d", bound_ms);
    }
    if (subject) snprintf(sh->env[n++], sizeof sh->env[0], "BARBERIA_GOOGLE_SUBJECT=%s", subject);
    for (int i = 0; i < n; i++)
        sh->envp[i] = sh->env[i];
    sh->envp[n] = NULL;
    srv_start(&sh->s, sh->envp, NULL);
    sh->barbero = make_barbero(&sh->s, BARBERO_NOMBRE);
    sh->servicio = make_servicio(&sh->s, SERVICIO_NOMBRE, 30, 15.0);
    signup_user(&sh->s, &sh->ana, ANA_NOMBRE);
}

static void shop_start(struct shop *sh, const char *creds, const char *calendar_id, int bound_ms)
{
    shop_start_on(sh, &D, creds, calendar_id, bound_ms, NULL);
}

static void shop_stop(struct shop *sh)
{
    if (sh->s.dir[0]) srv_cleanup(&sh->s);
    free(sh->barbero);
    free(sh->servicio);
    sh->barbero = sh->servicio = NULL;
}

/* A fresh slot every call: one hour apart from 2031-01-01, so no booking
 * of any test overlaps another. */
static void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int64_t base = iso8601_days_from_civil(2031, 1, 1) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
}

/* Books and asserts 201. Returns the cita (caller decrefs); OUT: *elapsed_ms
 * (may be NULL). notas NULL: no notas member. */
static json_t *book_cita(const struct shop *sh, const struct user *u, const char *fecha,
                         const char *notas, int64_t *elapsed_ms)
{
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", sh->barbero, "servicio_id", sh->servicio,
                          "fecha_inicio", fecha);
    if (notas) json_object_set_new(b, "notas", json_string(notas));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    int64_t t0 = clock_mono_ms();
    http_json(&sh->s, "POST", "/api/citas", u->token, text, &r);
    if (elapsed_ms) *elapsed_ms = clock_mono_ms() - t0;
    free(text);
    if (r.status != 201) fail_msg("booking failed: %ld %s", r.status, r.body);
    json_t *cita = json_incref(json_object_get(r.json, "cita"));
    resp_free(&r);
    assert_non_null(cita);
    return cita;
}

/* Asserts that the server log holds exactly one line naming both a and b,
 * and returns a copy of it (caller frees). */
static char *one_log_line(const struct srv *s, const char *a, const char *b)
{
    char *log = srv_log(s);
    char *found = NULL;
    int n = 0;
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *copy = strndup(line, len);
        if (strstr(copy, a) && strstr(copy, b)) {
            n++;
            free(found);
            found = copy;
        } else {
            free(copy);
        }
        line = nl ? nl + 1 : line + len;
    }
    if (n != 1) {
        fprintf(stderr, "server log:\n%s\n", log);
        free(log);
        free(found);
        fail_msg("expected one log line with \"%s\" and \"%s\", found %d", a, b, n);
    }
    free(log);
    return found;
}

/* Asserts that no access token either double ever issued, no assertion it
 * was sent and no private key appears in the server's log. */
static void assert_log_holds_no_secret(const struct srv *s)
{
    char *log = srv_log(s);
    const struct dbl *ds[] = {&D, &DS};
    for (size_t k = 0; k < ARRAY_LEN(ds); k++) {
        json_t *all = dbl_since(ds[k], 0);
        size_t i;
        json_t *e;
        json_array_foreach(all, i, e)
        {
            const char *tok = jstr(e, "issued");
            if (tok && strstr(log, tok)) fail_msg("the server log holds an access token");
            const char *body = jstr(e, "body");
            const char *assertion = body && is_token_entry(e) ? strstr(body, "assertion=") : NULL;
            if (assertion && strlen(assertion) > 20 && strstr(log, assertion + 10))
                fail_msg("the server log holds an assertion");
        }
        json_decref(all);
    }
    assert_null(strstr(log, JWT_HEADER_B64));
    assert_null(strstr(log, "PRIVATE KEY"));
    assert_null(strstr(log, "Bearer "));
    free(log);
}

static json_t *insert_entries(const json_t *all);
static json_t *entry_event(const json_t *e);

/* How many events.insert calls in ALL were for an event starting at FECHA.
 * Tests count their own booking's calls only: a slow call of an earlier test
 * can land in the double's log meanwhile. */
static size_t inserts_at(const json_t *all, const char *fecha)
{
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        if (!is_insert_entry(e)) continue;
        json_t *ev = entry_event(e);
        const char *start = jstr(json_object_get(ev, "start"), "dateTime");
        n += start && !strcmp(start, fecha);
        json_decref(ev);
    }
    return n;
}

/* --- concurrent bookings ------------------------------------------------------------- */

struct racer {
    const struct srv *s;
    const char *token;
    char body[512];
    long status;
    json_t *cita; /* the answer's cita, or NULL */
    int64_t elapsed_ms;
};

/* One booking from its own thread (race_threads: no cmocka here). */
static void racer_run(void *item)
{
    struct racer *r = item;
    struct req_opts o = {.token = r->token, .body = r->body};
    struct resp resp;
    int64_t t0 = clock_mono_ms();
    r->status = http_try(r->s, "POST", "/api/citas", &o, &resp);
    r->elapsed_ms = clock_mono_ms() - t0;
    r->cita = json_incref(json_object_get(resp.json, "cita"));
    resp_free(&resp);
}

/* A racer booking fecha on sh as token. */
static void racer_init(struct racer *r, const struct shop *sh, const char *token, const char *fecha)
{
    memset(r, 0, sizeof *r);
    r->s = &sh->s;
    r->token = token;
    snprintf(r->body, sizeof r->body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", sh->barbero,
             sh->servicio, fecha);
}

/* Books n slots at once (fechas[i]) as u. rs[i] filled; caller decrefs
 * rs[i].cita. */
static void book_concurrently(const struct shop *sh, const struct user *u, char (*fechas)[32],
                              size_t n, struct racer *rs)
{
    for (size_t i = 0; i < n; i++)
        racer_init(&rs[i], sh, u->token, fechas[i]);
    race_threads(n, racer_run, rs, sizeof *rs);
}

/* --- set-up ----------------------------------------------------------------------------- */

static int group_setup(void **state)
{
    (void)state;
    snprintf(ROOT, sizeof ROOT, "/tmp/barberia-gcal-XXXXXX");
    if (!mkdtemp(ROOT)) fail_msg("mkdtemp: %s", strerror(errno));
    snprintf(KEY, sizeof KEY, "%s/key.pem", ROOT);
    snprintf(PUB, sizeof PUB, "%s/pub.pem", ROOT);
    snprintf(OTHER_KEY, sizeof OTHER_KEY, "%s/other-key.pem", ROOT);
    snprintf(CREDS, sizeof CREDS, "%s/service-account.json", ROOT);
    snprintf(CREDS_WRONG_EMAIL, sizeof CREDS_WRONG_EMAIL, "%s/wrong-email.json", ROOT);
    snprintf(CREDS_WRONG_KEY, sizeof CREDS_WRONG_KEY, "%s/wrong-key.json", ROOT);
    make_keypair(KEY, PUB);
    make_keypair(OTHER_KEY, NULL);
    dbl_start(&D, "double", NULL);
    dbl_start(&DS, "double-dwd", SUBJECT);
    snprintf(CREDS_DS, sizeof CREDS_DS, "%s/service-account-dwd.json", ROOT);
    write_creds_for(&DS, CREDS_DS, CLIENT_EMAIL, KEY);
    write_creds(CREDS, CLIENT_EMAIL, KEY);
    write_creds(CREDS_WRONG_EMAIL, "someone-else@other.iam.gserviceaccount.com", KEY);
    write_creds(CREDS_WRONG_KEY, CLIENT_EMAIL, OTHER_KEY);
    shop_start(&G, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    shop_start(&T, CREDS, CALENDAR_ID, SHORT_BOUND_MS);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    shop_stop(&G);
    shop_stop(&T);
    dbl_stop(&D);
    dbl_stop(&DS);
    rm_tree(ROOT);
    return 0;
}

/* Every test starts with a well-behaved Google. */
static int reset_double(void **state)
{
    (void)state;
    double_control("reset=1");
    return 0;
}

/* --- what a booking sends ---------------------------------------------------------------- */

static void booking_keeps_the_event_id_google_returned_and_lists_it(void **state)
{
    (void)state;
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    const char *event_id = jstr(cita, "google_event_id");
    assert_non_null(event_id);
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, event_id);
    assert_string_equal(jstr(e, "verdict"), "ok");
    assert_int_equal(json_integer_value(json_object_get(e, "status")), 200);

    struct resp r;
    http_get(&G.s, "/api/citas", G.ana.token, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *c;
    bool seen = false;
    json_array_foreach(json_object_get(r.json, "citas"), i, c)
    {
        if (strcmp(jstr(c, "id"), jstr(cita, "id")) != 0) continue;
        assert_string_equal(jstr(c, "google_event_id"), event_id);
        seen = true;
    }
    assert_true(seen);
    resp_free(&r);
    json_decref(all);
    json_decref(cita);
}

static void event_summary_is_service_em_dash_profile_name(void **state)
{
    (void)state;
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
    json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
    assert_non_null(ev);
    /* U+2014 with one space on each side */
    assert_string_equal(jstr(ev, "summary"), SERVICIO_NOMBRE " \xe2\x80\x94 " ANA_NOMBRE);
    json_decref(ev);
    json_decref(all);
    json_decref(cita);
}

static void event_summary_falls_back_to_the_email_without_a_profile_name(void **state)
{
    (void)state;
    struct user nameless;
    signup_user(&G.s, &nameless, NULL);
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&G, &nameless, fecha, NULL, NULL);
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
    json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
    char want[256];
    snprintf(want, sizeof want, "%s \xe2\x80\x94 %s", SERVICIO_NOMBRE, nameless.email);
    assert_string_equal(jstr(ev, "summary"), want);
    snprintf(want, sizeof want, "Cliente: %s\nBarbero: %s\nServicio: %s", nameless.email,
             BARBERO_NOMBRE, SERVICIO_NOMBRE);
    assert_string_equal(jstr(ev, "description"), want);
    json_decref(ev);
    json_decref(all);
    json_decref(cita);
}

static void event_description_has_notas_line_only_when_notas_given(void **state)
{
    (void)state;
    static const struct {
        const char *notas; /* NULL: member absent */
        const char *description;
    } cases[] = {
        {"Degradado bajo, por favor",
         "Cliente: " ANA_NOMBRE "\nBarbero: " BARBERO_NOMBRE "\nServicio: " SERVICIO_NOMBRE
         "\nNotas: Degradado bajo, por favor"},
        {NULL, "Cliente: " ANA_NOMBRE "\nBarbero: " BARBERO_NOMBRE "\nServicio: " SERVICIO_NOMBRE},
        {"", "Cliente: " ANA_NOMBRE "\nBarbero: " BARBERO_NOMBRE "\nServicio: " SERVICIO_NOMBRE},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char fecha[32];
        next_slot(fecha);
        size_t mark = dlog_mark();
        json_t *cita = book_cita(&G, &G.ana, fecha, cases[i].notas, NULL);
        json_t *all = dlog_since(mark);
        const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
        json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
        assert_string_equal(jstr(ev, "description"), cases[i].description);
        json_decref(ev);
        json_decref(all);
        json_decref(cita);
    }
}

static void event_times_are_the_stored_utc_times_and_the_attendee_is_the_client(void **state)
{
    (void)state;
    /* an offset in the input: the event carries the stored UTC times */
    const char *fecha = "2031-06-15T12:00:00+02:00";
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    assert_string_equal(jstr(cita, "fecha_inicio"), "2031-06-15T10:00:00.000Z");
    assert_string_equal(jstr(cita, "fecha_fin"), "2031-06-15T10:30:00.000Z");
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
    json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
    assert_string_equal(jstr(json_object_get(ev, "start"), "dateTime"), jstr(cita, "fecha_inicio"));
    assert_string_equal(jstr(json_object_get(ev, "end"), "dateTime"), jstr(cita, "fecha_fin"));
    const json_t *att = json_object_get(ev, "attendees");
    assert_int_equal(json_array_size(att), 1);
    assert_string_equal(jstr(json_array_get(att, 0), "email"), G.ana.email);
    assert_string_equal(jstr(e, "content_type"), "application/json");
    json_decref(ev);
    json_decref(all);
    json_decref(cita);
}

static void calendar_id_is_percent_encoded_in_the_request_path(void **state)
{
    (void)state;
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
    assert_string_equal(jstr(e, "uri"), EVENTS_PREFIX CALENDAR_RAW "/events");
    assert_string_equal(jstr(e, "calendar_id"), CALENDAR_ID);
    json_decref(all);
    json_decref(cita);
}

static void calendar_id_with_space_hash_and_slash_is_percent_encoded(void **state)
{
    (void)state;
    struct shop odd;
    shop_start(&odd, CREDS, ODD_CALENDAR_ID, LONG_BOUND_MS);
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&odd, &odd.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_t *all = dlog_since(mark);
    const json_t *e = insert_entry_for(all, jstr(cita, "google_event_id"));
    assert_string_equal(jstr(e, "uri"), EVENTS_PREFIX ODD_CALENDAR_RAW "/events");
    assert_string_equal(jstr(e, "calendar_id"), ODD_CALENDAR_ID);
    json_decref(all);
    json_decref(cita);
    shop_stop(&odd);
}

static void token_request_is_a_signed_jwt_bearer_grant(void **state)
{
    (void)state;
    /* a fresh server has no token yet: its first booking asks for one */
    struct shop fresh;
    shop_start(&fresh, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&fresh, &fresh.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_t *all = dlog_since(mark);
    const json_t *tok = json_array_get(all, 0);
    assert_true(is_token_entry(tok));
    assert_string_equal(jstr(tok, "verdict"), "ok");
    assert_string_equal(jstr(tok, "method"), "POST");
    assert_string_equal(jstr(tok, "content_type"), "application/x-www-form-urlencoded");
    const char *body = jstr(tok, "body");
    const char *grant = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&"
                        "assertion=" JWT_HEADER_B64 ".";
    assert_true(!strncmp(body, grant, strlen(grant)));
    const json_t *claims = json_object_get(tok, "claims");
    assert_string_equal(jstr(claims, "iss"), CLIENT_EMAIL);
    assert_string_equal(jstr(claims, "scope"), "https://www.googleapis.com/auth/calendar");
    assert_string_equal(jstr(claims, "aud"), D.token_url);
    json_int_t iat = json_integer_value(json_object_get(claims, "iat"));
    assert_int_equal(json_integer_value(json_object_get(claims, "exp")), iat + 3600);
    /* then the event, with the token just issued */
    const json_t *ins = insert_entry_for(all, jstr(cita, "google_event_id"));
    char bearer[128];
    snprintf(bearer, sizeof bearer, "Bearer %s", jstr(tok, "issued"));
    assert_string_equal(jstr(ins, "authorization"), bearer);
    json_decref(all);
    json_decref(cita);
    assert_log_holds_no_secret(&fresh.s);
    shop_stop(&fresh);
}

/* --- the access token cache -------------------------------------------------------------- */

static void one_token_request_serves_several_bookings(void **state)
{
    (void)state;
    struct shop fresh;
    shop_start(&fresh, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    size_t mark = dlog_mark();
    for (int i = 0; i < 4; i++) {
        char fecha[32];
        next_slot(fecha);
        json_t *cita = book_cita(&fresh, &fresh.ana, fecha, NULL, NULL);
        assert_non_null(jstr(cita, "google_event_id"));
        json_decref(cita);
    }
    assert_int_equal(count_tokens_since(mark), 1);
    shop_stop(&fresh);
}

/* Every racer was booked (201) with an event of its own. */
static void expect_distinct_events(const struct racer *rs, int n)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(rs[i].status, 201);
        assert_non_null(jstr(rs[i].cita, "google_event_id"));
        for (int k = 0; k < i; k++)
            assert_string_not_equal(jstr(rs[i].cita, "google_event_id"),
                                    jstr(rs[k].cita, "google_event_id"));
    }
}

static void concurrent_first_bookings_share_one_token_request(void **state)
{
    (void)state;
    struct shop fresh;
    shop_start(&fresh, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    /* a slow token endpoint: every booking arrives while the first fetches */
    double_control("token_delay_ms=700");
    enum { N = 6 };
    char fechas[N][32];
    for (int i = 0; i < N; i++)
        next_slot(fechas[i]);
    struct racer rs[N];
    size_t mark = dlog_mark();
    book_concurrently(&fresh, &fresh.ana, fechas, N, rs);
    expect_distinct_events(rs, N);
    for (int i = 0; i < N; i++)
        json_decref(rs[i].cita);
    assert_int_equal(count_tokens_since(mark), 1);
    shop_stop(&fresh);
}

static void token_is_renewed_when_less_than_a_minute_of_it_is_left(void **state)
{
    (void)state;
    struct shop fresh;
    shop_start(&fresh, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    /* tokens that live 30 s are never worth keeping: each booking renews */
    double_control("expires_in=30");
    size_t mark = dlog_mark();
    for (int i = 0; i < 2; i++) {
        char fecha[32];
        next_slot(fecha);
        json_decref(book_cita(&fresh, &fresh.ana, fecha, NULL, NULL));
    }
    assert_int_equal(count_tokens_since(mark), 2);
    /* an hour-long token is kept */
    double_control("expires_in=3600");
    mark = dlog_mark();
    for (int i = 0; i < 3; i++) {
        char fecha[32];
        next_slot(fecha);
        json_t *cita = book_cita(&fresh, &fresh.ana, fecha, NULL, NULL);
        assert_non_null(jstr(cita, "google_event_id"));
        json_decref(cita);
    }
    assert_int_equal(count_tokens_since(mark), 1);
    shop_stop(&fresh);
}

static void refused_token_is_dropped_and_the_next_booking_fetches_a_fresh_one(void **state)
{
    (void)state;
    /* make sure G holds a token, then have Google forget it */
    char fecha[32];
    next_slot(fecha);
    json_decref(book_cita(&G, &G.ana, fecha, NULL, NULL));
    double_control("revoke=1");
    size_t mark = dlog_mark();
    next_slot(fecha);
    json_t *cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    assert_true(json_is_null(json_object_get(cita, "google_event_id")));
    free(one_log_line(&G.s, jstr(cita, "id"), "HTTP 401"));
    json_decref(cita);
    assert_int_equal(count_tokens_since(mark), 0);
    next_slot(fecha);
    cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_decref(cita);
    assert_int_equal(count_tokens_since(mark), 1);
    assert_log_holds_no_secret(&G.s);
}

/* --- a Google that fails ------------------------------------------------------------------ */

/* Books on T with Google in the given mode; asserts 201, a null event id,
 * an answer within the bound, and one log line holding want. */
/* books one slot while the double misbehaves as CONTROL; the slot's start
 * goes to FECHA_OUT when asked for */
static void booking_survives_at(const char *control, const char *want, char fecha_out[32])
{
    double_control(control);
    char fecha[32];
    next_slot(fecha);
    if (fecha_out) memcpy(fecha_out, fecha, sizeof fecha);
    int64_t elapsed = 0;
    json_t *cita = book_cita(&T, &T.ana, fecha, NULL, &elapsed);
    assert_true(json_is_null(json_object_get(cita, "google_event_id")));
    if (elapsed >= SHORT_BOUND_MS + MARGIN_MS)
        fail_msg("the booking took %lld ms with a %d ms bound", (long long)elapsed, SHORT_BOUND_MS);
    char *line = one_log_line(&T.s, jstr(cita, "id"), "calendar");
    if (!strstr(line, want)) fail_msg("log line without \"%s\": %s", want, line);
    free(line);
    json_decref(cita);
    /* the listing agrees */
    struct resp r;
    http_get(&T.s, "/api/citas", T.ana.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_log_holds_no_secret(&T.s);
}

static void booking_survives(const char *control, const char *want)
{
    booking_survives_at(control, want, NULL);
}

static void google_answering_500_leaves_the_event_null(void **state)
{
    (void)state;
    booking_survives("mode=500", "HTTP 500");
}

static void google_answering_garbage_leaves_the_event_null(void **state)
{
    (void)state;
    booking_survives("mode=garbage", "not a JSON object");
}

static void google_answering_without_an_id_leaves_the_event_null(void **state)
{
    (void)state;
    booking_survives("mode=noid", "no usable event id");
}

static void google_answering_more_than_64_kib_leaves_the_event_null(void **state)
{
    (void)state;
    booking_survives("mode=huge", "answer larger than 64 KiB");
}

static void google_never_answering_leaves_the_event_null_within_the_bound(void **state)
{
    (void)state;
    booking_survives("mode=hang", "no answer within");
}

static void google_answering_truncated_json_leaves_the_event_null(void **state)
{
    (void)state;
    booking_survives("mode=truncated", "not a JSON object");
}

static void google_answering_slower_than_the_bound_leaves_the_event_null_within_it(void **state)
{
    (void)state;
    booking_survives("delay_ms=6000", "no answer within");
}

static void every_google_failure_heals_by_itself_at_the_next_booking(void **state)
{
    (void)state;
    static const char *const faults[] = {"mode=500",      "mode=garbage", "mode=truncated",
                                         "mode=noid",     "mode=huge",    "mode=hang",
                                         "mode=noaccess", "delay_ms=6000"};
    for (size_t i = 0; i < ARRAY_LEN(faults); i++) {
        double_control("reset=1");
        double_control(faults[i]);
        char fecha[32];
        next_slot(fecha);
        json_t *cita = book_cita(&T, &T.ana, fecha, NULL, NULL);
        if (!json_is_null(json_object_get(cita, "google_event_id")))
            fail_msg("%s: an event id from a failing Google", faults[i]);
        json_decref(cita);
        /* Google is well again: nothing to restart, the next booking has
         * its event */
        double_control("reset=1");
        next_slot(fecha);
        cita = book_cita(&T, &T.ana, fecha, NULL, NULL);
        if (!jstr(cita, "google_event_id"))
            fail_msg("%s: no event once Google was well again", faults[i]);
        json_decref(cita);
    }
    assert_log_holds_no_secret(&T.s);
}

static void google_down_leaves_the_event_null_at_once_and_events_return_with_it(void **state)
{
    (void)state;
    struct dbl e;
    memset(&e, 0, sizeof e);
    dbl_start(&e, "double-down", NULL);
    int port = (int)strtol(strrchr(e.http.base, ':') + 1, NULL, 10);
    char creds[400];
    snprintf(creds, sizeof creds, "%s/service-account-down.json", ROOT);
    write_creds_for(&e, creds, CLIENT_EMAIL, KEY);
    struct shop sh;
    shop_start_on(&sh, &e, creds, CALENDAR_ID, SHORT_BOUND_MS, NULL);
    /* Google is down: connections are refused */
    dbl_stop(&e);
    char fecha[32];
    next_slot(fecha);
    int64_t elapsed = 0;
    json_t *cita = book_cita(&sh, &sh.ana, fecha, NULL, &elapsed);
    assert_true(json_is_null(json_object_get(cita, "google_event_id")));
    if (elapsed >= SHORT_BOUND_MS + MARGIN_MS)
        fail_msg("the booking took %lld ms with Google down", (long long)elapsed);
    free(one_log_line(&sh.s, jstr(cita, "id"), "calendar"));
    json_decref(cita);
    /* Google is back on the same address: the next booking has its event */
    dbl_start_on(&e, "double-down", NULL, port);
    size_t mark = dbl_mark(&e);
    next_slot(fecha);
    cita = book_cita(&sh, &sh.ana, fecha, NULL, NULL);
    const char *event_id = jstr(cita, "google_event_id");
    if (!event_id) fail_msg("no event once Google was back; log:\n%s", srv_log(&sh.s));
    json_t *all = dbl_since(&e, mark);
    assert_string_equal(jstr(insert_entry_for(all, event_id), "verdict"), "ok");
    json_decref(all);
    json_decref(cita);
    shop_stop(&sh);
    dbl_stop(&e);
}

static int drop_citas_trigger(void **state)
{
    (void)state;
    return db_forced_failure(&G.s, "citas", false) == 0 ? 0 : -1;
}

static void booking_the_store_refuses_answers_500_and_deletes_its_event(void **state)
{
    (void)state;
    assert_int_equal(db_forced_failure(&G.s, "citas", true), 0);
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", G.barbero, "servicio_id", G.servicio,
                          "fecha_inicio", fecha);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&G.s, "POST", "/api/citas", G.ana.token, text, &r);
    free(text);
    /* the specification's answer: 500 with the store's message */
    expect_error(&r, 500, NULL);
    if (!r.json || !jstr(r.json, "error") || !strstr(jstr(r.json, "error"), "fallo forzado"))
        fail_msg("not the store's message: %s", r.body);
    resp_free(&r);
    /* no cita, and no event left behind in the calendar */
    assert_int_equal(db_count(&G.s, "SELECT count(*) FROM citas WHERE fecha_inicio = '%s'", fecha),
                     0);
    json_t *all = dlog_since(mark);
    /* this booking's insert (a slow call of an earlier test may still
     * land in the double's log meanwhile) */
    json_t *ins = json_array();
    json_t *every = insert_entries(all);
    size_t k;
    json_t *x;
    json_array_foreach(every, k, x)
    {
        json_t *ev = entry_event(x);
        const char *start = jstr(json_object_get(ev, "start"), "dateTime");
        if (start && !strcmp(start, fecha)) json_array_append(ins, x);
        json_decref(ev);
    }
    json_decref(every);
    assert_int_equal(json_array_size(ins), 1);
    const char *made = jstr(json_array_get(ins, 0), "issued_id");
    assert_non_null(made);
    size_t i, deleted = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        if (strcmp(jstr(e, "method"), "DELETE") != 0) continue;
        if (!jstr(e, "event_id") || strcmp(jstr(e, "event_id"), made)) continue;
        assert_int_equal(json_integer_value(json_object_get(e, "status")), 204);
        deleted++;
    }
    if (deleted != 1) fail_msg("the event of the refused booking was deleted %zu times", deleted);
    json_decref(ins);
    json_decref(all);
}

static void google_refusing_writes_with_another_403_fails_without_a_retry(void **state)
{
    (void)state;
    /* a calendar shared read-only: a 403 that has nothing to do with the
     * attendees is a failure, and the event is not sent again */
    size_t mark = dlog_mark();
    char fecha[32];
    booking_survives_at("mode=noaccess",
                        "events.insert: HTTP 403: You need to have writer access to this calendar.",
                        fecha);
    json_t *all = dlog_since(mark);
    size_t inserts = inserts_at(all, fecha);
    json_decref(all);
    assert_int_equal(inserts, 1);
}

static void token_endpoint_never_answering_bounds_every_waiting_booking(void **state)
{
    (void)state;
    struct shop fresh;
    shop_start(&fresh, CREDS, CALENDAR_ID, SHORT_BOUND_MS);
    double_control("mode=hang&target=token");
    enum { N = 3 };
    char fechas[N][32];
    for (int i = 0; i < N; i++)
        next_slot(fechas[i]);
    struct racer rs[N];
    book_concurrently(&fresh, &fresh.ana, fechas, N, rs);
    for (int i = 0; i < N; i++) {
        assert_int_equal(rs[i].status, 201);
        assert_true(json_is_null(json_object_get(rs[i].cita, "google_event_id")));
        if (rs[i].elapsed_ms >= SHORT_BOUND_MS + MARGIN_MS)
            fail_msg("a booking took %lld ms with a %d ms bound", (long long)rs[i].elapsed_ms,
                     SHORT_BOUND_MS);
        free(one_log_line(&fresh.s, jstr(rs[i].cita, "id"), "(google): token request"));
        json_decref(rs[i].cita);
    }
    /* once Google answers again, bookings get their events */
    double_control("reset=1");
    char fecha[32];
    next_slot(fecha);
    json_t *cita = book_cita(&fresh, &fresh.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_decref(cita);
    assert_log_holds_no_secret(&fresh.s);
    shop_stop(&fresh);
}

static void token_refused_by_google_leaves_the_event_null_and_logs_why(void **state)
{
    (void)state;
    static const struct {
        const char *creds;
        const char *want;
    } cases[] = {
        {CREDS_WRONG_EMAIL, "HTTP 401: invalid_client"},
        {CREDS_WRONG_KEY, "HTTP 400: invalid_grant Invalid JWT Signature."},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct shop bad;
        shop_start(&bad, cases[i].creds, CALENDAR_ID, LONG_BOUND_MS);
        char fecha[32];
        next_slot(fecha);
        size_t mark = dlog_mark();
        json_t *cita = book_cita(&bad, &bad.ana, fecha, NULL, NULL);
        assert_true(json_is_null(json_object_get(cita, "google_event_id")));
        char *line = one_log_line(&bad.s, jstr(cita, "id"), "(google): token request");
        if (!strstr(line, cases[i].want))
            fail_msg("log line without \"%s\": %s", cases[i].want, line);
        free(line);
        json_decref(cita);
        /* refused at the token endpoint: no event was attempted */
        json_t *all = dlog_since(mark);
        size_t inserts = inserts_at(all, fecha);
        json_decref(all);
        assert_int_equal(inserts, 0);
        assert_log_holds_no_secret(&bad.s);
        shop_stop(&bad);
    }
}

/* --- the lost race --------------------------------------------------------------------------- */

static void booking_that_loses_the_race_deletes_its_event(void **state)
{
    (void)state;
    struct user other;
    signup_user(&G.s, &other, "Beto");
    /* slow events: both requests pass the first slot check before either
     * stores its cita; the loser must then delete the event it made */
    double_control("delay_ms=1500");
    for (int attempt = 0; attempt < 5; attempt++) {
        char fecha[32];
        next_slot(fecha);
        struct racer rs[2];
        size_t mark = dlog_mark();
        /* two users, one slot */
        racer_init(&rs[0], &G, G.ana.token, fecha);
        racer_init(&rs[1], &G, other.token, fecha);
        race_threads(2, racer_run, rs, sizeof *rs);
        int winner = rs[0].status == 201 ? 0 : 1;
        assert_int_equal(rs[winner].status, 201);
        assert_int_equal(rs[1 - winner].status, 409);
        const char *kept = jstr(rs[winner].cita, "google_event_id");
        assert_non_null(kept);
        json_t *all = dlog_since(mark);
        size_t i, inserts = 0;
        json_t *e;
        const char *lost = NULL;
        json_array_foreach(all, i, e)
        {
            if (!is_insert_entry(e)) continue;
            inserts++;
            const char *issued = jstr(e, "issued_id");
            if (issued && strcmp(issued, kept) != 0) lost = issued;
        }
        if (inserts < 2) {
            /* the second request came after the first had stored: no race */
            json_decref(all);
            for (int k = 0; k < 2; k++)
                json_decref(rs[k].cita);
            continue;
        }
        assert_non_null(lost);
        /* the loser's event goes, never the winner's (under load an insert
         * the double made but answered past the bound is one the booking
         * never learned of: any event made besides the kept one may be it) */
        bool deleted = false;
        json_array_foreach(all, i, e)
        {
            if (strcmp(jstr(e, "method"), "DELETE") != 0) continue;
            const char *gone = jstr(e, "event_id");
            assert_string_not_equal(gone, kept);
            bool made = false;
            size_t k;
            json_t *x;
            json_array_foreach(all, k, x) made =
                made ||
                (is_insert_entry(x) && jstr(x, "issued_id") && !strcmp(jstr(x, "issued_id"), gone));
            assert_true(made);
            assert_string_equal(jstr(e, "verdict"), "ok");
            assert_int_equal(json_integer_value(json_object_get(e, "status")), 204);
            char uri[256];
            snprintf(uri, sizeof uri, "%s/events/%s", EVENTS_PREFIX CALENDAR_RAW, gone);
            assert_string_equal(jstr(e, "uri"), uri);
            deleted = true;
        }
        assert_true(deleted);
        json_decref(all);
        for (int k = 0; k < 2; k++)
            json_decref(rs[k].cita);
        return;
    }
    fail_msg("could not provoke two concurrent bookings of one slot in 5 attempts");
}

/* --- configuration -------------------------------------------------------------------------- */

static void nothing_configured_leaves_the_event_null(void **state)
{
    (void)state;
    struct shop none;
    shop_start(&none, NULL, NULL, 0);
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&none, &none.ana, fecha, NULL, NULL);
    assert_true(json_is_null(json_object_get(cita, "google_event_id")));
    json_decref(cita);
    /* not a single request went to Google */
    json_t *all = dlog_since(mark);
    assert_int_equal(json_array_size(all), 0);
    json_decref(all);
    shop_stop(&none);
}

/* Runs `barberia serve` with a key file (and extra_env, "NAME=value" or
 * NULL) and expects it to refuse to start: exit status 1 and one error line,
 * which must hold must_hold and is returned (caller frees). */
static char *serve_refuses_with(const char *creds_path, const char *extra_env,
                                const char *must_hold)
{
    char data[400], env_creds[600], env_api[300];
    static int n;
    snprintf(data, sizeof data, "%s/refused-%d", ROOT, ++n);
    snprintf(env_creds, sizeof env_creds, "BARBERIA_GOOGLE_CREDENTIALS=%s", creds_path);
    snprintf(env_api, sizeof env_api, "BARBERIA_GOOGLE_API_URL=%s/calendar/v3", D.http.base);
    /* only this test's BARBERIA_* settings (run_program clears the rest) */
    const char *env[] = {env_creds, env_api, extra_env, NULL};
    const char *argv[] = {BARBERIA_BIN, "serve", "--listen", "127.0.0.1:0", "--data", data, NULL};
    char *err = NULL;
    int st = run_program(argv, env, 60000, NULL, &err);
    if (st == -1) fail_msg("barberia serve started with the key file %s", creds_path);
    assert_non_null(err);
    if (st != 1) fail_msg("expected exit status 1, got %d: %s", st, err);
    if (strstr(err, "Sanitizer") || strstr(err, "runtime error:"))
        fail_msg("sanitizer report on a refused start:\n%s", err);
    /* the log may hold info lines (the database is opened first); exactly
     * one line is the error, and it is the cli's */
    char *found = NULL;
    int errors = 0;
    for (char *line = err; *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) fail_msg("stderr does not end with a newline: %s", err);
        *nl = '\0';
        if (!strstr(line, " info ")) {
            errors++;
            free(found);
            found = strdup(line);
        }
        line = nl + 1;
    }
    if (errors != 1) fail_msg("expected one error line, got %d:\n%s", errors, err);
    free(err);
    assert_true(!strncmp(found, "barberia: serve: ", strlen("barberia: serve: ")));
    if (!strstr(found, must_hold)) fail_msg("error line without \"%s\": %s", must_hold, found);
    assert_null(strstr(found, "PRIVATE KEY"));
    return found;
}

static char *serve_refuses(const char *creds_path)
{
    return serve_refuses_with(creds_path, NULL, creds_path);
}

static void missing_key_file_stops_serve_with_one_error_line(void **state)
{
    (void)state;
    char path[400];
    snprintf(path, sizeof path, "%s/no-such-key.json", ROOT);
    char *line = serve_refuses(path);
    assert_non_null(strstr(line, "cannot read"));
    free(line);
}

static void malformed_key_file_stops_serve_with_one_error_line(void **state)
{
    (void)state;
    char *pem = read_file(KEY, NULL);
    assert_non_null(pem);
    json_t *good = json_pack("{s:s, s:s, s:s, s:s}", "type", "service_account", "client_email",
                             CLIENT_EMAIL, "private_key", pem, "token_uri", D.token_url);
    free(pem);
    static const struct {
        const char *drop;  /* member removed from a good key file */
        const char *set;   /* member replaced ... */
        const char *value; /* ... by this */
        const char *raw;   /* or the whole file */
        const char *want;
    } cases[] = {
        {NULL, NULL, NULL, "{\"client_email\": \"x@y\", \"private_key\": \"-----BEGIN",
         "not valid JSON"},
        {NULL, NULL, NULL, "[1, 2, 3]", "not a JSON object"},
        {"private_key", NULL, NULL, NULL, "missing \"private_key\""},
        {"client_email", NULL, NULL, NULL, "client_email"},
        {"token_uri", NULL, NULL, NULL, "missing \"token_uri\""},
        {NULL, "private_key",
         "-----BEGIN PRIVATE KEY-----\nTUlJQm9ndXM=\n-----END PRIVATE KEY-----\n", NULL,
         "not a PEM private key"},
        {NULL, "token_uri", "http://oauth2.example.com/token", NULL, "https"},
        {NULL, "type", "authorized_user", NULL, "not a service-account key"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/bad-key-%zu.json", ROOT, i);
        if (cases[i].raw) {
            write_text(path, cases[i].raw);
        } else {
            json_t *j = json_deep_copy(good);
            if (cases[i].drop) json_object_del(j, cases[i].drop);
            if (cases[i].set) json_object_set_new(j, cases[i].set, json_string(cases[i].value));
            assert_int_equal(json_dump_file(j, path, 0), 0);
            json_decref(j);
        }
        char *line = serve_refuses(path);
        if (!strstr(line, cases[i].want))
            fail_msg("case %zu: error line without \"%s\": %s", i, cases[i].want, line);
        assert_null(strstr(line, "TUlJQm9ndXM"));
        free(line);
    }
    json_decref(good);
}

/* --- attendees: ordinary service accounts and domain-wide delegation ------------------------- */

/* The events.insert entries of all, in order, as a new array (caller
 * decrefs). */
static json_t *insert_entries(const json_t *all)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) if (is_insert_entry(e)) json_array_append(out, e);
    return out;
}

/* The event an entry's body holds (caller decrefs). */
static json_t *entry_event(const json_t *e)
{
    json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
    if (!json_is_object(ev)) fail_msg("an events.insert body is not a JSON object");
    return ev;
}

/* Lines of the server log holding a (and b, when not NULL). */
static int count_log_lines(const struct srv *s, const char *a, const char *b)
{
    char *log = srv_log(s);
    int n = 0;
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        n += strstr(line, a) && (!b || strstr(line, b));
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(log);
    return n;
}

/* Asserts that e is an accepted events.insert without attendees that
 * issued event_id. */
static void expect_created_without_attendees(const json_t *e, const char *event_id)
{
    assert_string_equal(jstr(e, "verdict"), "ok");
    assert_int_equal(json_integer_value(json_object_get(e, "status")), 200);
    assert_string_equal(jstr(e, "issued_id"), event_id);
    json_t *ev = entry_event(e);
    assert_null(json_object_get(ev, "attendees"));
    json_decref(ev);
}

/* The explanation of events without attendees: one warn line. */
static void expect_one_explanation(const struct srv *s)
{
    char *line = one_log_line(s, "not invited", "BARBERIA_GOOGLE_SUBJECT");
    if (!strstr(line, " warn calendar: ") || !strstr(line, "domain-wide delegation") ||
        !strstr(line, "forbiddenForServiceAccounts"))
        fail_msg("unexpected explanation line: %s", line);
    free(line);
}

static void ordinary_service_account_creates_the_event_without_inviting_the_client(void **state)
{
    (void)state;
    struct shop sa;
    shop_start(&sa, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    /* Google as it is for a service account without domain-wide delegation */
    double_control("mode=forbidden");
    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&sa, &sa.ana, fecha, NULL, NULL);
    const char *event_id = jstr(cita, "google_event_id");
    assert_non_null(event_id);
    json_t *all = dlog_since(mark);
    /* the assertion has no "sub": the account acts as itself */
    const json_t *tok = json_array_get(all, 0);
    assert_true(is_token_entry(tok));
    assert_string_equal(jstr(tok, "verdict"), "ok");
    assert_null(json_object_get(json_object_get(tok, "claims"), "sub"));
    /* first the event with the client as attendee, refused with Google's
     * 403, then the same event without attendees, accepted */
    json_t *ins = insert_entries(all);
    assert_int_equal(json_array_size(ins), 2);
    const json_t *refused = json_array_get(ins, 0);
    assert_int_equal(json_integer_value(json_object_get(refused, "status")), 403);
    assert_string_equal(jstr(refused, "verdict"), "ok");
    json_t *with = entry_event(refused);
    const json_t *att = json_object_get(with, "attendees");
    assert_int_equal(json_array_size(att), 1);
    assert_string_equal(jstr(json_array_get(att, 0), "email"), sa.ana.email);
    const json_t *accepted = json_array_get(ins, 1);
    expect_created_without_attendees(accepted, event_id);
    /* the same event but for the attendees, with the same token */
    json_t *without = entry_event(accepted);
    json_object_del(with, "attendees");
    assert_true(json_equal(with, without));
    assert_string_equal(jstr(refused, "authorization"), jstr(accepted, "authorization"));
    json_decref(with);
    json_decref(without);
    json_decref(ins);
    json_decref(all);
    /* no failure is logged for the booking; one line explains */
    assert_int_equal(count_log_lines(&sa.s, "no event for cita", NULL), 0);
    expect_one_explanation(&sa.s);
    json_decref(cita);

    /* later bookings skip the doomed attempt: one request each */
    for (int k = 0; k < 2; k++) {
        next_slot(fecha);
        mark = dlog_mark();
        cita = book_cita(&sa, &sa.ana, fecha, NULL, NULL);
        assert_non_null(jstr(cita, "google_event_id"));
        all = dlog_since(mark);
        ins = insert_entries(all);
        assert_int_equal(json_array_size(ins), 1);
        expect_created_without_attendees(json_array_get(ins, 0), jstr(cita, "google_event_id"));
        json_decref(ins);
        json_decref(all);
        json_decref(cita);
    }
    /* still explained once, not per booking */
    expect_one_explanation(&sa.s);
    assert_log_holds_no_secret(&sa.s);
    shop_stop(&sa);
}

static void concurrent_first_bookings_without_delegation_all_get_events(void **state)
{
    (void)state;
    struct shop sa;
    shop_start(&sa, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    double_control("mode=forbidden");
    enum { N = 5 };
    char fechas[N][32];
    for (int i = 0; i < N; i++)
        next_slot(fechas[i]);
    struct racer rs[N];
    size_t mark = dlog_mark();
    book_concurrently(&sa, &sa.ana, fechas, N, rs);
    expect_distinct_events(rs, N);
    /* every refused attempt was followed by one without attendees; none
     * was tried a third time */
    json_t *all = dlog_since(mark);
    json_t *ins = insert_entries(all);
    size_t i, refused = 0, created = 0;
    json_t *e;
    json_array_foreach(ins, i, e)
    {
        json_int_t status = json_integer_value(json_object_get(e, "status"));
        if (status == 403)
            refused++;
        else if (status == 200)
            created++;
        else
            fail_msg("unexpected events.insert status %lld", (long long)status);
    }
    assert_int_equal(created, N);
    assert_true(refused >= 1 && refused <= N);
    json_decref(ins);
    json_decref(all);
    for (int k = 0; k < N; k++)
        json_decref(rs[k].cita);
    expect_one_explanation(&sa.s);
    shop_stop(&sa);
}

static void attendee_less_retry_stays_within_the_bound(void **state)
{
    (void)state;
    struct shop sa;
    shop_start(&sa, CREDS, CALENDAR_ID, SHORT_BOUND_MS);
    /* the refusal comes at once; the retry's answer would come far past
     * the bound */
    double_control("mode=forbidden");
    double_control("delay_ms=20000");
    char fecha[32];
    next_slot(fecha);
    int64_t elapsed = 0;
    json_t *cita = book_cita(&sa, &sa.ana, fecha, NULL, &elapsed);
    assert_true(json_is_null(json_object_get(cita, "google_event_id")));
    if (elapsed >= SHORT_BOUND_MS + MARGIN_MS)
        fail_msg("the booking took %lld ms with a %d ms bound", (long long)elapsed, SHORT_BOUND_MS);
    char *line = one_log_line(&sa.s, jstr(cita, "id"), "(google): events.insert without attendees");
    if (!strstr(line, "no answer within")) fail_msg("unexpected failure line: %s", line);
    free(line);
    json_decref(cita);
    /* no event was created without the client: nothing explained yet */
    assert_int_equal(count_log_lines(&sa.s, "not invited", NULL), 0);
    /* the refusal is remembered: the next booking goes straight to the
     * request without attendees, and that is when it is explained */
    double_control("delay_ms=0");
    next_slot(fecha);
    size_t mark = dlog_mark();
    cita = book_cita(&sa, &sa.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_t *all = dlog_since(mark);
    json_t *ins = insert_entries(all);
    assert_int_equal(json_array_size(ins), 1);
    expect_created_without_attendees(json_array_get(ins, 0), jstr(cita, "google_event_id"));
    json_decref(ins);
    json_decref(all);
    json_decref(cita);
    expect_one_explanation(&sa.s);
    shop_stop(&sa);
}

static void subject_goes_into_the_assertion_and_the_client_is_invited(void **state)
{
    (void)state;
    dbl_control(&DS, "reset=1");
    /* the mode that refuses attendees to an account acting as itself: one
     * acting for a user of its domain may invite */
    dbl_control(&DS, "mode=forbidden");
    struct shop ws;
    shop_start_on(&ws, &DS, CREDS_DS, CALENDAR_ID, LONG_BOUND_MS, SUBJECT);
    size_t mark = dbl_mark(&DS);
    json_t *citas[2];
    for (int k = 0; k < 2; k++) {
        char fecha[32];
        next_slot(fecha);
        citas[k] = book_cita(&ws, &ws.ana, fecha, NULL, NULL);
        assert_non_null(jstr(citas[k], "google_event_id"));
    }
    json_t *all = dbl_since(&DS, mark);
    size_t i, tokens = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        if (!is_token_entry(e)) continue;
        tokens++;
        assert_string_equal(jstr(e, "verdict"), "ok");
        const json_t *claims = json_object_get(e, "claims");
        assert_string_equal(jstr(claims, "sub"), SUBJECT);
        assert_string_equal(jstr(claims, "iss"), CLIENT_EMAIL);
        assert_string_equal(jstr(claims, "scope"), "https://www.googleapis.com/auth/calendar");
        assert_string_equal(jstr(claims, "aud"), DS.token_url);
    }
    assert_int_equal(tokens, 1);
    /* one request per booking, with the client as attendee, accepted */
    json_t *ins = insert_entries(all);
    assert_int_equal(json_array_size(ins), 2);
    for (int k = 0; k < 2; k++) {
        const json_t *x = json_array_get(ins, (size_t)k);
        assert_int_equal(json_integer_value(json_object_get(x, "status")), 200);
        assert_string_equal(jstr(x, "issued_id"), jstr(citas[k], "google_event_id"));
        json_t *ev = entry_event(x);
        const json_t *att = json_object_get(ev, "attendees");
        assert_int_equal(json_array_size(att), 1);
        assert_string_equal(jstr(json_array_get(att, 0), "email"), ws.ana.email);
        json_decref(ev);
        json_decref(citas[k]);
    }
    json_decref(ins);
    json_decref(all);
    assert_int_equal(count_log_lines(&ws.s, "not invited", NULL), 0);
    /* the start-up line names the user the account acts for */
    assert_int_equal(count_log_lines(&ws.s, "calendar: Google Calendar", "acting for " SUBJECT), 1);
    assert_log_holds_no_secret(&ws.s);
    shop_stop(&ws);
}

static void a_subject_google_does_not_accept_fails_at_the_token_request(void **state)
{
    (void)state;
    dbl_control(&DS, "reset=1");
    static const struct {
        bool delegated;      /* the double with domain-wide delegation */
        const char *subject; /* NULL: unset */
        const char *want;
    } cases[] = {
        /* a "sub" for an account without delegation */
        {false, SUBJECT, "HTTP 401: unauthorized_client"},
        /* a user the delegation does not cover */
        {true, "otra@barberia-test.example", "HTTP 400: invalid_grant Invalid email or User ID"},
        /* the double with delegation insists on a "sub" */
        {true, NULL, "no sub claim"},
    };
    for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
        const struct dbl *d = cases[k].delegated ? &DS : &D;
        struct shop bad;
        shop_start_on(&bad, d, cases[k].delegated ? CREDS_DS : CREDS, CALENDAR_ID, LONG_BOUND_MS,
                      cases[k].subject);
        char fecha[32];
        next_slot(fecha);
        size_t mark = dbl_mark(d);
        json_t *cita = book_cita(&bad, &bad.ana, fecha, NULL, NULL);
        assert_true(json_is_null(json_object_get(cita, "google_event_id")));
        char *line = one_log_line(&bad.s, jstr(cita, "id"), "(google): token request");
        if (!strstr(line, cases[k].want))
            fail_msg("case %zu: log line without \"%s\": %s", k, cases[k].want, line);
        free(line);
        json_decref(cita);
        json_t *all = dbl_since(d, mark);
        size_t inserts = inserts_at(all, fecha);
        json_decref(all);
        assert_int_equal(inserts, 0);
        assert_log_holds_no_secret(&bad.s);
        shop_stop(&bad);
    }
}

static void malformed_subject_stops_serve_with_one_error_line(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "agenda",
        "@barberia-test.example",
        "agenda@",
        "agenda@barberia-test",
        "agenda@@barberia-test.example",
        "agenda@otra@barberia-test.example",
        "agenda @barberia-test.example",
        "<agenda@barberia-test.example>",
        "agenda@barberia-test..example",
        /* a second line would be a forged one */
        "agenda@barberia-test.example\nbarberia: serve: forged line",
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char env[256];
        snprintf(env, sizeof env, "BARBERIA_GOOGLE_SUBJECT=%s", bad[i]);
        char *line = serve_refuses_with(CREDS, env, "BARBERIA_GOOGLE_SUBJECT");
        if (!strstr(line, "is not an e-mail address"))
            fail_msg("case %zu: unexpected error line: %s", i, line);
        free(line);
    }
}

/* --- both integrations at once -------------------------------------------------------- */

static void one_booking_with_calendar_and_mail_makes_an_event_and_delivers_the_mail(void **state)
{
    (void)state;
    char mailroot[400];
    snprintf(mailroot, sizeof mailroot, "%s/both-mail", ROOT);
    mkdir(mailroot, 0755);
    struct smtp_sink sink;
    smtp_sink_start(&sink, mailroot, 0, NULL);
    char e1[512], e2[512], e3[512], e4[128];
    snprintf(e1, sizeof e1, "BARBERIA_GOOGLE_CREDENTIALS=%s", CREDS);
    snprintf(e2, sizeof e2, "BARBERIA_GOOGLE_API_URL=%s/calendar/v3", D.http.base);
    snprintf(e3, sizeof e3, "BARBERIA_GOOGLE_CALENDAR_ID=%s", CALENDAR_ID);
    snprintf(e4, sizeof e4, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", sink.port);
    const char *env[] = {e1, e2, e3, e4, "BARBERIA_TZ=Europe/Madrid", NULL};
    struct shop sh;
    memset(&sh, 0, sizeof sh);
    srv_start(&sh.s, env, NULL);
    sh.barbero = make_barbero(&sh.s, BARBERO_NOMBRE);
    sh.servicio = make_servicio(&sh.s, SERVICIO_NOMBRE, 30, 15.0);
    signup_user(&sh.s, &sh.ana, ANA_NOMBRE);

    char fecha[32];
    next_slot(fecha);
    size_t mark = dlog_mark();
    json_t *cita = book_cita(&sh, &sh.ana, fecha, "Degradado", NULL);
    /* the calendar: a verified insert whose id the booking kept */
    const char *event_id = jstr(cita, "google_event_id");
    assert_non_null(event_id);
    json_t *all = dlog_since(mark);
    const json_t *ins = insert_entry_for(all, event_id);
    assert_non_null(ins);
    assert_string_equal(jstr(ins, "verdict"), "ok");
    /* the mail: delivered over SMTP to the client, naming the booking */
    if (!smtp_sink_wait(&sink, 1, 60000))
        fail_msg("no e-mail arrived; server log:\n%s", srv_log(&sh.s));
    char **paths;
    size_t npaths = smtp_sink_files(&sink, &paths);
    json_t *mail = smtp_sink_message(paths[0]);
    smtp_sink_free_paths(paths, npaths);
    json_t *rcpts = json_object_get(mail, "rcpt_tos");
    assert_int_equal(json_array_size(rcpts), 1);
    assert_string_equal(json_string_value(json_array_get(rcpts, 0)), sh.ana.email);
    assert_non_null(strstr(jstr(mail, "subject"), "Cita confirmada"));
    assert_non_null(strstr(jstr(mail, "text"), jstr(cita, "id")));
    assert_non_null(strstr(jstr(mail, "text"), BARBERO_NOMBRE));
    json_decref(mail);
    json_decref(all);
    json_decref(cita);
    shop_stop(&sh);
    assert_int_equal(smtp_sink_stop(&sink), 0);
}

static void subject_without_credentials_stops_serve_with_one_error_line(void **state)
{
    (void)state;
    struct srv s;
    memset(&s, 0, sizeof s);
    srv_init(&s);
    const char *env[] = {"BARBERIA_GOOGLE_SUBJECT=agenda@barberia-test.example", NULL};
    const char *args[] = {"serve", "--listen", "127.0.0.1:0", NULL};
    char *out = NULL, *err = NULL;
    int st = run_cli_within(&s, env, args, true, 30000, &out, &err);
    assert_int_equal(st, 1);
    assert_non_null(err);
    assert_non_null(strstr(err, "BARBERIA_GOOGLE_CREDENTIALS is not"));
    assert_int_equal(strchr(err, '\n') - err, (long)strlen(err) - 1); /* one line */
    free(out);
    free(err);
    srv_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_setup(f, reset_double)
        T_(booking_keeps_the_event_id_google_returned_and_lists_it),
        T_(event_summary_is_service_em_dash_profile_name),
        T_(event_summary_falls_back_to_the_email_without_a_profile_name),
        T_(event_description_has_notas_line_only_when_notas_given),
        T_(event_times_are_the_stored_utc_times_and_the_attendee_is_the_client),
        T_(calendar_id_is_percent_encoded_in_the_request_path),
        T_(calendar_id_with_space_hash_and_slash_is_percent_encoded),
        T_(token_request_is_a_signed_jwt_bearer_grant),
        T_(one_token_request_serves_several_bookings),
        T_(concurrent_first_bookings_share_one_token_request),
        T_(token_is_renewed_when_less_than_a_minute_of_it_is_left),
        T_(refused_token_is_dropped_and_the_next_booking_fetches_a_fresh_one),
        T_(google_answering_500_leaves_the_event_null),
        T_(google_answering_garbage_leaves_the_event_null),
        T_(google_answering_without_an_id_leaves_the_event_null),
        T_(google_answering_more_than_64_kib_leaves_the_event_null),
        T_(google_never_answering_leaves_the_event_null_within_the_bound),
        T_(google_answering_truncated_json_leaves_the_event_null),
        T_(google_answering_slower_than_the_bound_leaves_the_event_null_within_it),
        T_(every_google_failure_heals_by_itself_at_the_next_booking),
        T_(google_down_leaves_the_event_null_at_once_and_events_return_with_it),
        cmocka_unit_test_setup_teardown(booking_the_store_refuses_answers_500_and_deletes_its_event,
                                        reset_double, drop_citas_trigger),
        T_(google_refusing_writes_with_another_403_fails_without_a_retry),
        T_(token_endpoint_never_answering_bounds_every_waiting_booking),
        T_(token_refused_by_google_leaves_the_event_null_and_logs_why),
        T_(booking_that_loses_the_race_deletes_its_event),
        T_(nothing_configured_leaves_the_event_null),
        T_(missing_key_file_stops_serve_with_one_error_line),
        T_(malformed_key_file_stops_serve_with_one_error_line),
        T_(ordinary_service_account_creates_the_event_without_inviting_the_client),
        T_(concurrent_first_bookings_without_delegation_all_get_events),
        T_(attendee_less_retry_stays_within_the_bound),
        T_(subject_goes_into_the_assertion_and_the_client_is_invited),
        T_(a_subject_google_does_not_accept_fails_at_the_token_request),
        T_(malformed_subject_stops_serve_with_one_error_line),
        T_(subject_without_credentials_stops_serve_with_one_error_line),
        T_(one_booking_with_calendar_and_mail_makes_an_event_and_delivers_the_mail),
#undef T_
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
