/*
 * calendar_fixture.c - what the Google Calendar tests share (see
 * calendar_fixture.h): their gcal_double processes, keys and key files,
 * shops (a server with a barber, a service and a named client), bookings
 * and the checks of the double's and the server's logs.
 */
#define _GNU_SOURCE
#include "calendar_fixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the doubles --------------------------------------------------------------------- */

struct gcal_dbl D;  /* an ordinary service account: no delegation, no "sub" */
struct gcal_dbl DS; /* domain-wide delegation, acting for SUBJECT */

char ROOT[256]; /* temporary folder of the group */
char KEY[320];
static char PUB[320], OTHER_KEY[320]; /* PEM files */
char CREDS[320];                      /* the good service-account key file */
char CREDS_WRONG_EMAIL[320], CREDS_WRONG_KEY[320];
char CREDS_DS[320]; /* the same account, with DS's token_uri */

/* Starts a double whose files are <ROOT>/<name>.*; subject NULL: no
 * domain-wide delegation; port 0: any free one. */
void dbl_start_on(struct gcal_dbl *d, const char *name, const char *subject, int port)
{
    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    snprintf(d->log, sizeof d->log, "%s/%s.jsonl", ROOT, name);
    snprintf(d->out, sizeof d->out, "%s/%s.out", ROOT, name);
    snprintf(d->err, sizeof d->err, "%s/%s.err", ROOT, name);
    const char *argv[] = {
        "gcal_double", "--public-key",
        PUB,           "--client-email",
        CLIENT_EMAIL,  "--log",
        d->log,        "--port",
        portarg,       subject ? "--subject" : NULL, /* the list ends here without one */
        subject,       NULL};
    int bound = double_spawn(argv, d->out, d->err, &d->pid);
    snprintf(d->http.base, sizeof d->http.base, "http://127.0.0.1:%d", bound);
    snprintf(d->token_url, sizeof d->token_url, "http://127.0.0.1:%d/token", bound);
}

void dbl_start(struct gcal_dbl *d, const char *name, const char *subject)
{
    dbl_start_on(d, name, subject, 0);
}

void double_control(const char *query)
{
    gcal_dbl_control(&D, query);
}

size_t dlog_mark(void)
{
    return gcal_dbl_mark(&D);
}

json_t *dlog_since(size_t mark)
{
    return gcal_dbl_since(&D, mark);
}

bool is_token_entry(const json_t *e)
{
    return !strcmp(jstr(e, "path"), "/token");
}

bool is_insert_entry(const json_t *e)
{
    return !strcmp(jstr(e, "method"), "POST") &&
           !strncmp(jstr(e, "uri"), EVENTS_PREFIX, strlen(EVENTS_PREFIX));
}

size_t count_tokens_since(size_t mark)
{
    json_t *all = dlog_since(mark);
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(all, i, e) n += is_token_entry(e);
    json_decref(all);
    return n;
}

/* The events.insert entry that issued event id, borrowed from all. */
const json_t *insert_entry_for(const json_t *all, const char *event_id)
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

/* --- files -------------------------------------------------------------------------------- */

void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

struct shop G; /* the main shop: good key, CALENDAR_ID, a wide bound */
struct shop T; /* short bound, for the failure modes */

/* Starts a shop that talks to double d. creds NULL: no calendar configured
 * at all. subject: BARBERIA_GOOGLE_SUBJECT (NULL: unset). */
void shop_start_on(struct shop *sh, const struct gcal_dbl *d, const char *creds,
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

void shop_start(struct shop *sh, const char *creds, const char *calendar_id, int bound_ms)
{
    shop_start_on(sh, &D, creds, calendar_id, bound_ms, NULL);
}

void shop_stop(struct shop *sh)
{
    if (sh->s.dir[0]) srv_cleanup(&sh->s);
    free(sh->barbero);
    free(sh->servicio);
    sh->barbero = sh->servicio = NULL;
}

/* A fresh slot every call: one hour apart from 2031-01-01, so no booking
 * of any test overlaps another. */
void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int64_t base = iso8601_days_from_civil(2031, 1, 1) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
}

/* Books and asserts 201. Returns the cita (caller decrefs); OUT: *elapsed_ms
 * (may be NULL). notas NULL: no notas member. */
json_t *book_cita(const struct shop *sh, const struct user *u, const char *fecha, const char *notas,
                  int64_t *elapsed_ms)
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
char *one_log_line(const struct srv *s, const char *a, const char *b)
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
void assert_log_holds_no_secret(const struct srv *s)
{
    char *log = srv_log(s);
    const struct gcal_dbl *ds[] = {&D, &DS};
    for (size_t k = 0; k < ARRAY_LEN(ds); k++) {
        json_t *all = gcal_dbl_since(ds[k], 0);
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

/* How many events.insert calls in ALL were for an event starting at FECHA.
 * Tests count their own booking's calls only: a slow call of an earlier test
 * can land in the double's log meanwhile. */
size_t inserts_at(const json_t *all, const char *fecha)
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

/* One booking from its own thread (race_threads: no cmocka here). */
void racer_run(void *item)
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
void racer_init(struct racer *r, const struct shop *sh, const char *token, const char *fecha)
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
void book_concurrently(const struct shop *sh, const struct user *u, char (*fechas)[32], size_t n,
                       struct racer *rs)
{
    for (size_t i = 0; i < n; i++)
        racer_init(&rs[i], sh, u->token, fechas[i]);
    race_threads(n, racer_run, rs, sizeof *rs);
}

/* --- set-up ----------------------------------------------------------------------------- */

int calendar_group_setup(void **state)
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
    gcal_keypair(KEY, PUB);
    gcal_keypair(OTHER_KEY, NULL);
    dbl_start(&D, "double", NULL);
    dbl_start(&DS, "double-dwd", SUBJECT);
    snprintf(CREDS_DS, sizeof CREDS_DS, "%s/service-account-dwd.json", ROOT);
    gcal_write_creds(CREDS_DS, CLIENT_EMAIL, KEY, DS.token_url);
    gcal_write_creds(CREDS, CLIENT_EMAIL, KEY, D.token_url);
    gcal_write_creds(CREDS_WRONG_EMAIL, "someone-else@other.iam.gserviceaccount.com", KEY,
                     D.token_url);
    gcal_write_creds(CREDS_WRONG_KEY, CLIENT_EMAIL, OTHER_KEY, D.token_url);
    shop_start(&G, CREDS, CALENDAR_ID, LONG_BOUND_MS);
    shop_start(&T, CREDS, CALENDAR_ID, SHORT_BOUND_MS);
    return 0;
}

int calendar_group_teardown(void **state)
{
    (void)state;
    shop_stop(&G);
    shop_stop(&T);
    gcal_dbl_stop(&D);
    gcal_dbl_stop(&DS);
    rm_tree(ROOT);
    return 0;
}

/* Every test starts with a well-behaved Google. */
int calendar_reset_double(void **state)
{
    (void)state;
    double_control("reset=1");
    return 0;
}

/* --- the double's log: events.insert entries ------------------------------------------ */

/* The events.insert entries of all, in order, as a new array (caller
 * decrefs). */
json_t *insert_entries(const json_t *all)
{
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) if (is_insert_entry(e)) json_array_append(out, e);
    return out;
}

/* The event an entry's body holds (caller decrefs). */
json_t *entry_event(const json_t *e)
{
    json_t *ev = json_loads(jstr(e, "body"), 0, NULL);
    if (!json_is_object(ev)) fail_msg("an events.insert body is not a JSON object");
    return ev;
}

/* Lines of the server log holding a (and b, when not NULL). */
