/*
 * test_whatsapp.c - confirmations, changes, cancellations and reminders by
 * WhatsApp, through a strict local double of the Graph API
 * (tests/doubles/wa_double.c): a client's consent (given with a number in
 * E.164, withdrawn), one template message per event and never a second,
 * retries with backoff after a 5xx or a 429, a permanent refusal dropped,
 * the quiet hours (a confirmation waits, a cancellation goes; a cancelled
 * cita's waiting confirmation never leaves), reminders at the configured
 * offsets by both channels, the webhook's handshake and signed statuses,
 * what the admin sees of an appointment's messages (403 for a client), the
 * links of the longest public URL sent whole (a longer one stops the
 * start), and never the token or the app secret in the server's log.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "wa_sink.h"
#include "util/iso8601.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS    60000
#define HOUR_MS    3600000LL
#define TOKEN      "EAAJtestTOKENwhatsapp0123456789abcdef"
#define PHONE_ID   "106540352242922"
#define APP_SECRET "3f1c9a7e5b2d4c6e8a0b1c2d3e4f5a6b"
#define VERIFY     "verificame-por-favor"

/* --- the Graph API double ---------------------------------------------------------------- */

/* The double (wa_sink.h), and its address for the control calls. */
struct wa_dbl {
    struct wa_sink s;
    struct srv http; /* only .base */
};

static struct wa_dbl D;
static struct srv S;
static struct smtp_sink K;
static char *BARBERO, *SERVICIO;
static struct user ANA, BEA, ADMIN;
static char ENV_SMTP[64], ENV_API[128], ENV_QUIET[64];
static const char *ENV[32]; /* the server's settings, to start it again */

static void dbl_start(struct wa_dbl *d, const char *root)
{
    memset(d, 0, sizeof *d);
    wa_sink_start(&d->s, root, TOKEN, PHONE_ID, APP_SECRET);
    snprintf(d->http.base, sizeof d->http.base, "%s", d->s.base);
}

static void dbl_stop(struct wa_dbl *d)
{
    wa_sink_stop(&d->s);
}

/* An appointment's personal link: base + "/c/" + its token, which opens
 * it without signing in (GET /api/gestion/<token>). */
static void link_opens(const char *link, const char *base)
{
    size_t n = strlen(base);
    assert_int_equal(strncmp(link, base, n), 0);
    assert_int_equal(strncmp(link + n, "/c/", 3), 0);
    char path[200];
    snprintf(path, sizeof path, "/api/gestion/%s", link + n + 3);
    struct resp opened;
    http_get(&S, path, NULL, &opened);
    assert_int_equal(opened.status, 200);
    resp_free(&opened);
}

/* POST /control?query; the answer's JSON (caller decrefs). */
static json_t *dbl_control(const char *query)
{
    char path[600];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&D.http, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    json_t *j = json_incref(r.json);
    resp_free(&r);
    return j;
}

/* Every request the double logged, as a JSON array (caller decrefs). */
static json_t *dbl_requests(void)
{
    size_t len = 0;
    char *text = read_file(D.s.log, &len);
    json_t *all = json_array();
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON");
        json_array_append_new(all, e);
        line = nl + 1;
    }
    free(text);
    return all;
}

/* The message body of a logged request (caller decrefs). */
static json_t *req_message(const json_t *e)
{
    return json_loads(jstr(e, "body"), 0, NULL);
}

static const char *msg_template(const json_t *m)
{
    return jstr(json_object_get(m, "template"), "name");
}

/* Parameter i (0-based) of a message's body. */
static const char *msg_param(const json_t *m, size_t i)
{
    const json_t *comp =
        json_array_get(json_object_get(json_object_get(m, "template"), "components"), 0);
    return jstr(json_array_get(json_object_get(comp, "parameters"), i), "text");
}

struct count_q {
    const char *tpl; /* NULL: any */
    long status;     /* 0: any */
    size_t want;
};

/* How many requests for template tpl were answered status. */
static size_t count_requests(const char *tpl, long status)
{
    json_t *all = dbl_requests();
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        json_t *m = req_message(e);
        const char *t = m ? msg_template(m) : NULL;
        if ((!tpl || (t && !strcmp(t, tpl))) &&
            (!status || json_integer_value(json_object_get(e, "status")) == status))
            n++;
        json_decref(m);
    }
    json_decref(all);
    return n;
}

static bool enough_requests(void *ud)
{
    struct count_q *q = ud;
    return count_requests(q->tpl, q->status) >= q->want;
}

static void wait_requests(const char *tpl, long status, size_t want)
{
    struct count_q q = {tpl, status, want};
    if (!wait_until(enough_requests, &q, WAIT_MS)) {
        char *log = srv_log(&S);
        fail_msg("fewer than %zu %s requests answered %ld; server log:\n%s", want,
                 tpl ? tpl : "any", status, log);
    }
}

/* --- the shop -------------------------------------------------------------------------------- */

static void signup_with_phone(struct user *u, const char *nombre, const char *telefono)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s, s:s, s:s}", "email", u->email, "password", u->password,
                          "nombre", nombre, "telefono", telefono);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&S, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    snprintf(u->token, sizeof u->token, "%s", jstr(r.json, "token"));
    snprintf(u->id, sizeof u->id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    resp_free(&r);
}

/* Starts the double, an SMTP sink and the server with extra settings. */
static void start_shop(const char *const *extra)
{
    srv_init(&S);
    dbl_start(&D, S.dir);
    smtp_sink_start(&K, S.dir, 0, NULL);
    snprintf(ENV_SMTP, sizeof ENV_SMTP, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    snprintf(ENV_API, sizeof ENV_API, "BARBERIA_WHATSAPP_API_URL=%s/v21.0", D.http.base);
    const char **env = ENV;
    size_t n = 0;
    env[n++] = ENV_SMTP;
    env[n++] = ENV_API;
    env[n++] = "BARBERIA_WHATSAPP_TOKEN=" TOKEN;
    env[n++] = "BARBERIA_WHATSAPP_PHONE_NUMBER_ID=" PHONE_ID;
    env[n++] = "BARBERIA_WHATSAPP_APP_SECRET=" APP_SECRET;
    env[n++] = "BARBERIA_WHATSAPP_VERIFY_TOKEN=" VERIFY;
    env[n++] = "BARBERIA_TZ=Europe/Madrid";
    env[n++] = "BARBERIA_SHOP_NAME=Barbería Central";
    env[n++] = "BARBERIA_SHOP_ADDRESS=Calle Mayor 1, Madrid";
    env[n++] = "BARBERIA_MIN_NOTICE_MIN=0";
    env[n++] = "BARBERIA_CANCEL_CUTOFF_MIN=0";
    bool quiet = false, offsets = false;
    for (size_t i = 0; extra && extra[i]; i++) {
        quiet = quiet || !strncmp(extra[i], "BARBERIA_WHATSAPP_QUIET_HOURS=", 30);
        offsets = offsets || !strncmp(extra[i], "BARBERIA_REMINDER_OFFSETS=", 26);
        env[n++] = extra[i];
    }
    if (!quiet) env[n++] = "BARBERIA_WHATSAPP_QUIET_HOURS=no";
    if (!offsets) env[n++] = "BARBERIA_REMINDER_OFFSETS=no";
    env[n] = NULL;
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_with_phone(&ANA, "Ana Pérez", "612 34 56 78");
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &ADMIN, "Admin", "admin");
}

static int teardown(void **state)
{
    (void)state;
    /* never the token or the app secret in the server's log */
    char *log = srv_log(&S);
    bool leak = log && (strstr(log, TOKEN) || strstr(log, APP_SECRET));
    free(log);
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    dbl_stop(&D);
    memset(&S, 0, sizeof S);
    memset(&K, 0, sizeof K);
    free(BARBERO);
    free(SERVICIO);
    BARBERO = SERVICIO = NULL;
    assert_false(leak);
    return 0;
}

static void at(int64_t ms, char out[ISO8601_LEN + 1])
{
    iso8601_format(clock_now_ms() + ms, out);
}

static void consent(const struct user *u, const char *body, long want, struct resp *r)
{
    http_json(&S, "PUT", "/api/auth/me/whatsapp", u->token, body, r);
    if (r->status != want) fail_msg("consent %s: %ld %s", body, r->status, r->body);
}

static void cambio(const struct user *u, const char *id, const char *accion, const char *body)
{
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/%s", id, accion);
    struct resp r;
    http_json(&S, "POST", path, u->token, body, &r);
    if (r.status != 200) fail_msg("%s: %ld %s", accion, r.status, r.body);
    resp_free(&r);
}

/* GET /api/admin/citas/{id}/mensajes as the admin: the array (caller decrefs). */
static json_t *mensajes(const char *id)
{
    char path[160];
    snprintf(path, sizeof path, "/api/admin/citas/%s/mensajes", id);
    struct resp r;
    http_get(&S, path, ADMIN.token, &r);
    if (r.status != 200) fail_msg("mensajes: %ld %s", r.status, r.body);
    json_t *a = json_incref(json_object_get(r.json, "mensajes"));
    resp_free(&r);
    return a;
}

/* The message of canal and tipo in a listing (borrowed), or NULL. */
static json_t *mensaje(json_t *list, const char *canal, const char *tipo)
{
    size_t i;
    json_t *m;
    json_array_foreach(list, i, m) if (!strcmp(jstr(m, "canal"), canal) &&
                                       !strcmp(jstr(m, "tipo"), tipo)) return m;
    return NULL;
}

static long wa_rows(const char *id, const char *kind, const char *status)
{
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND canal = 'whatsapp' "
                    "AND kind = '%s' AND status = '%s'",
                    id, kind, status);
}

struct row_q {
    const char *id, *kind, *status;
};

static bool row_there(void *ud)
{
    struct row_q *q = ud;
    return wa_rows(q->id, q->kind, q->status) == 1;
}

/* --- the tests --------------------------------------------------------------------------- */

static void consent_is_given_with_a_number_in_e164_and_withdrawn(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    /* the web app learns that this shop sends WhatsApp */
    http_get(&S, "/api/config", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "whatsapp")));
    resp_free(&r);
    /* nothing given yet */
    http_get(&S, "/api/auth/me/whatsapp", BEA.token, &r);
    assert_int_equal(r.status, 200);
    json_t *w = json_object_get(r.json, "whatsapp");
    assert_true(json_is_false(json_object_get(w, "acepta")));
    assert_true(json_is_null(json_object_get(w, "telefono")));
    resp_free(&r);
    /* bad bodies change nothing */
    consent(&BEA, "{}", 400, &r);
    expect_error(&r, 400, "Campo inválido: acepta");
    resp_free(&r);
    consent(&BEA, "{\"acepta\": \"si\"}", 400, &r);
    resp_free(&r);
    /* no number in her profile and none given */
    consent(&BEA, "{\"acepta\": true}", 400, &r);
    expect_error(&r, 400, "Teléfono inválido");
    resp_free(&r);
    consent(&BEA, "{\"acepta\": true, \"telefono\": \"12ab\"}", 400, &r);
    expect_error(&r, 400, "Teléfono inválido");
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM whatsapp_consentimientos"), 0);
    /* with a number from abroad */
    consent(&BEA, "{\"acepta\": true, \"telefono\": \"+44 20 7946 0958\"}", 200, &r);
    w = json_object_get(r.json, "whatsapp");
    assert_true(json_is_true(json_object_get(w, "acepta")));
    assert_string_equal(jstr(w, "telefono"), "+442079460958");
    assert_non_null(jstr(w, "otorgado_en"));
    assert_true(json_is_null(json_object_get(w, "retirado_en")));
    assert_true(json_is_null(json_object_get(w, "registrado_por"))); /* she recorded it */
    resp_free(&r);
    /* from her profile's national number, the default country in front */
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    assert_string_equal(jstr(json_object_get(r.json, "whatsapp"), "telefono"), "+34612345678");
    resp_free(&r);
    /* withdrawn: the time is kept */
    consent(&BEA, "{\"acepta\": false}", 200, &r);
    w = json_object_get(r.json, "whatsapp");
    assert_true(json_is_false(json_object_get(w, "acepta")));
    assert_non_null(jstr(w, "retirado_en"));
    assert_non_null(jstr(w, "otorgado_en"));
    resp_free(&r);
    http_get(&S, "/api/auth/me/whatsapp", BEA.token, &r);
    assert_true(json_is_false(json_object_get(json_object_get(r.json, "whatsapp"), "acepta")));
    resp_free(&r);
    /* only with a session */
    http_json(&S, "PUT", "/api/auth/me/whatsapp", NULL, "{\"acepta\": true}", &r);
    assert_int_equal(r.status, 401);
    resp_free(&r);
    /* the consents travel in an export (format 5: with who recorded them) */
    char dir[400], path[450];
    snprintf(dir, sizeof dir, "%s/export", S.dir);
    char *err = NULL;
    int rc = srv_cli(&S, NULL, &err, "export", "--to", dir, NULL);
    if (rc != 0) fail_msg("export: %d %s", rc, err ? err : "");
    free(err);
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    json_error_t je;
    json_t *m = json_load_file(path, 0, &je);
    assert_non_null(m);
    assert_int_equal(json_integer_value(json_object_get(m, "version")), 6);
    long rows = -1;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(m, "tables"), i,
                       t) if (!strcmp(jstr(t, "name"), "whatsapp_consentimientos")) rows =
        (long)json_integer_value(json_object_get(t, "rows"));
    assert_int_equal(rows, 2);
    json_decref(m);
}

static void a_booking_is_confirmed_once_by_template_only_with_consent(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    json_t *all = dbl_requests();
    assert_int_equal(json_array_size(all), 1);
    json_t *e = json_array_get(all, 0);
    assert_string_equal(jstr(e, "authorization"), "Bearer " TOKEN);
    assert_string_equal(jstr(e, "uri"), "/v21.0/" PHONE_ID "/messages");
    assert_string_equal(jstr(e, "verdict"), "ok");
    json_t *m = req_message(e);
    assert_string_equal(jstr(m, "to"), "34612345678");
    assert_string_equal(jstr(json_object_get(json_object_get(m, "template"), "language"), "code"),
                        "es");
    assert_string_equal(msg_param(m, 0), "Ana Pérez");
    assert_string_equal(msg_param(m, 1), "Corte clásico");
    assert_string_equal(msg_param(m, 2), "Carlos Méndez");
    assert_non_null(strstr(msg_param(m, 3), "(Europe/Madrid)"));
    assert_string_equal(msg_param(m, 4), "Barbería Central, Calle Mayor 1, Madrid");
    /* the appointment's personal link, which opens it without signing in */
    link_opens(msg_param(m, 5), S.base);
    json_decref(m);
    json_decref(all);
    /* the e-mail went too; and never a second WhatsApp message, not even
     * after a restart */
    assert_true(smtp_sink_wait(&K, 1, WAIT_MS));
    assert_true(srv_stop(&S) == 0);
    srv_start(&S, ENV, NULL);
    sleep_ms(2000);
    assert_int_equal(count_requests(NULL, 0), 1);
    assert_int_equal(wa_rows(id, "confirmacion", "sent"), 1);
    free(id);
    /* without consent: the e-mail only */
    char h[32];
    at(5 * 86400000LL, h);
    id = book(&S, &BEA, BARBERO, SERVICIO, h, NULL);
    assert_true(smtp_sink_wait(&K, 2, WAIT_MS));
    /* withdrawn: none either */
    consent(&ANA, "{\"acepta\": false}", 200, &r);
    resp_free(&r);
    char g[32];
    at(4 * 86400000LL, g);
    char *id2 = book(&S, &ANA, BARBERO, SERVICIO, g, NULL);
    assert_true(smtp_sink_wait(&K, 3, WAIT_MS));
    sleep_ms(1500);
    assert_int_equal(count_requests(NULL, 0), 1);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE canal = 'whatsapp'"), 1);
    free(id);
    free(id2);
}

/* The confirmation of cita id recorded as sent: the double counts the
 * answer before the server has written it down, so wait for it. */
static void expect_sent(const char *id)
{
    struct row_q q = {id, "confirmacion", "sent"};
    assert_true(wait_until(row_there, &q, WAIT_MS));
    assert_int_equal(wa_rows(id, "confirmacion", "sent"), 1);
}

static void a_5xx_and_a_429_are_retried_with_backoff_and_sent_once(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    json_decref(dbl_control("fail=2&status=500&code=131000"));
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    json_t *all = dbl_requests();
    assert_int_equal(json_array_size(all), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 0), "status")), 500);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 1), "status")), 500);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 2), "status")), 200);
    json_decref(all);
    /* the backoff: 1 s, then 2 s */
    char *log = srv_log(&S);
    assert_non_null(strstr(log, "next attempt in 1s"));
    assert_non_null(strstr(log, "next attempt in 2s"));
    assert_non_null(strstr(log, "code 131000"));
    free(log);
    expect_sent(id); /* recorded once the Graph API's answer is in */
    free(id);
    /* a rate limit: the same */
    json_decref(dbl_control("fail=1&status=429&code=130429"));
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char g[32];
    at(4 * 86400000LL, g);
    id = book(&S, &ANA, BARBERO, SERVICIO, g, NULL);
    wait_requests("barberia_confirmacion", 200, 2);
    assert_int_equal(count_requests("barberia_confirmacion", 429), 1);
    assert_int_equal(count_requests(NULL, 0), 5);
    expect_sent(id); /* recorded once the Graph API's answer is in */
    free(id);
    /* a number that is not on WhatsApp: refused for good, dropped at once */
    json_decref(dbl_control("fail=1&status=400&code=131026"));
    char h[32];
    at(5 * 86400000LL, h);
    id = book(&S, &ANA, BARBERO, SERVICIO, h, NULL);
    struct row_q q = {id, "confirmacion", "dropped"};
    assert_true(wait_until(row_there, &q, WAIT_MS));
    assert_int_equal(count_requests(NULL, 0), 6);
    json_t *list = mensajes(id);
    json_t *m = mensaje(list, "whatsapp", "confirmacion");
    assert_non_null(m);
    assert_string_equal(jstr(m, "estado"), "dropped");
    assert_non_null(strstr(jstr(m, "error"), "131026"));
    json_decref(list);
    free(id);
}

static void a_wrong_token_is_retried_and_never_logged(void **state)
{
    (void)state;
    srv_init(&S);
    dbl_start(&D, S.dir);
    snprintf(ENV_API, sizeof ENV_API, "BARBERIA_WHATSAPP_API_URL=%s/v21.0", D.http.base);
    const char *env[] = {ENV_API,
                         "BARBERIA_WHATSAPP_TOKEN=EAAJwrongTOKENthatMetaRefuses42",
                         "BARBERIA_WHATSAPP_PHONE_NUMBER_ID=" PHONE_ID,
                         "BARBERIA_WHATSAPP_QUIET_HOURS=no",
                         "BARBERIA_REMINDER_OFFSETS=no",
                         "BARBERIA_MIN_NOTICE_MIN=0",
                         NULL};
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_with_phone(&ANA, "Ana Pérez", "612 34 56 78");
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 401, 2);
    assert_true(srv_wait_log(&S, "code 190", 10000));
    assert_int_equal(wa_rows(id, "confirmacion", "pending"), 1);
    char *log = srv_log(&S);
    assert_null(strstr(log, "EAAJwrongTOKENthatMetaRefuses42"));
    assert_null(strstr(log, "Bearer"));
    free(log);
    free(id);
}

/* The quiet hours around now in the shop's zone: "HH:MM-HH:MM" from an
 * hour ago to an hour ahead. */
static void quiet_around_now(char out[64])
{
    setenv("TZ", "Europe/Madrid", 1);
    tzset();
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    int now = tm.tm_hour * 60 + tm.tm_min;
    int from = (now + 1440 - 60) % 1440, to = (now + 60) % 1440;
    snprintf(out, 64, "BARBERIA_WHATSAPP_QUIET_HOURS=%02d:%02d-%02d:%02d", from / 60, from % 60,
             to / 60, to % 60);
}

/* A shop in its quiet hours now, where Ana consented to WhatsApp and
 * booked in three days: her appointment's id (caller frees). */
static char *quiet_shop_with_ana_booked(void)
{
    quiet_around_now(ENV_QUIET);
    const char *extra[] = {ENV_QUIET, NULL};
    start_shop(extra);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(3 * 86400000LL, f);
    return book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
}

static void in_the_quiet_hours_a_confirmation_waits_and_a_cancellation_goes(void **state)
{
    (void)state;
    char *id = quiet_shop_with_ana_booked();
    /* the e-mail leaves; the WhatsApp confirmation waits for the end */
    assert_true(smtp_sink_wait(&K, 1, WAIT_MS));
    assert_true(srv_wait_log(&S, "waits for the end of the quiet hours", WAIT_MS));
    assert_int_equal(count_requests(NULL, 0), 0);
    json_t *list = mensajes(id);
    json_t *w = mensaje(list, "whatsapp", "confirmacion");
    assert_non_null(w);
    assert_string_equal(jstr(w, "estado"), "pending");
    const char *next = jstr(w, "proximo_intento");
    int64_t due = 0;
    assert_true(next && iso8601_parse(next, strlen(next), &due));
    int64_t ahead = due - clock_now_ms();
    assert_true(ahead > 55 * 60000LL && ahead <= 61 * 60000LL);
    json_decref(list);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                              "canal = 'whatsapp' AND attempts = 0 AND status = 'pending'",
                              id),
                     1);
    /* the cancellation goes at once */
    cambio(&ANA, id, "cancelar", NULL);
    wait_requests("barberia_cancelacion", 200, 1);
    json_t *all = dbl_requests();
    json_t *m = req_message(json_array_get(all, 0));
    assert_string_equal(msg_template(m), "barberia_cancelacion");
    assert_string_equal(jstr(m, "to"), "34612345678");
    json_decref(m);
    json_decref(all);
    /* and when the quiet hours end, the confirmation of the cancelled cita
     * never leaves */
    assert_int_equal(db_exec(&S,
                             "UPDATE mail_outbox SET next_attempt_at = created_at WHERE "
                             "canal = 'whatsapp' AND kind = 'confirmacion'",
                             NULL),
                     0);
    char g[32];
    at(4 * 86400000LL, g);
    char *other = book(&S, &BEA, BARBERO, SERVICIO, g, NULL); /* wakes the worker */
    struct row_q q = {id, "confirmacion", "skipped"};
    assert_true(wait_until(row_there, &q, WAIT_MS));
    assert_int_equal(count_requests("barberia_confirmacion", 0), 0);
    assert_int_equal(count_requests(NULL, 0), 1);
    /* a cita that starts before the quiet hours end: its confirmation is
     * not held back to arrive after it began, it is skipped */
    char soon[32];
    at(30 * 60000LL, soon);
    char *pronto = book(&S, &ANA, BARBERO, SERVICIO, soon, NULL);
    struct row_q sq = {pronto, "confirmacion", "skipped"};
    assert_true(wait_until(row_there, &sq, WAIT_MS));
    assert_int_equal(
        db_count(&S,
                 "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND canal = 'whatsapp' "
                 "AND last_error LIKE '%%horas de silencio%%'",
                 pronto),
        1);
    assert_int_equal(count_requests("barberia_confirmacion", 0), 0);
    free(pronto);
    free(other);
    free(id);
}

/* A closure's cancellation of her appointment is a cancellation too: it
 * goes by WhatsApp (the cancellation's template), in the quiet hours too,
 * although the appointment is cancelled by then. */
static void a_closures_cancellation_goes_by_whatsapp_as_hers_would(void **state)
{
    (void)state;
    char *id = quiet_shop_with_ana_booked();
    struct resp r;
    /* the shop closes the days around it (whatever her local date) */
    char desde[32], hasta[32], body[160];
    at(2 * 86400000LL, desde);
    at(4 * 86400000LL, hasta);
    snprintf(body, sizeof body, "{\"desde\":\"%.10s\",\"hasta\":\"%.10s\"}", desde, hasta);
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    char cierre[40];
    snprintf(cierre, sizeof cierre, "%s", jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/cancelar-citas", cierre);
    http_json(&S, "POST", path, ADMIN.token, "{\"mensaje\":\"Cerramos por obras.\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    wait_requests("barberia_cancelacion", 200, 1);
    json_t *all = dbl_requests();
    json_t *m = NULL;
    for (size_t i = 0; i < json_array_size(all) && !m; i++) {
        json_t *x = req_message(json_array_get(all, i));
        if (!strcmp(msg_template(x), "barberia_cancelacion"))
            m = x;
        else
            json_decref(x);
    }
    assert_non_null(m);
    assert_string_equal(jstr(m, "to"), "34612345678");
    assert_string_equal(msg_param(m, 0), "Ana Pérez");
    json_decref(m);
    json_decref(all);
    assert_int_equal(wa_rows(id, "cierre", "sent"), 1);
    free(id);
}

static void the_webhook_verifies_and_records_signed_statuses_for_the_admin(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    /* the handshake */
    http_get(&S,
             "/api/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=" VERIFY
             "&hub.challenge=1158201444",
             NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "1158201444");
    resp_free(&r);
    http_get(&S, "/api/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=otro&hub.challenge=1",
             NULL, &r);
    expect_error(&r, 403, "Token de verificación inválido");
    resp_free(&r);
    /* a message to report on */
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    assert_true(smtp_sink_wait(&K, 1, WAIT_MS));
    json_t *all = dbl_requests();
    char wamid[128];
    snprintf(wamid, sizeof wamid, "%s", jstr(json_array_get(all, 0), "wamid"));
    json_decref(all);
    struct row_q q = {id, "confirmacion", "sent"};
    assert_true(wait_until(row_there, &q, WAIT_MS));
    char url[200], ctl[600];
    snprintf(url, sizeof url, "%s/api/whatsapp/webhook", S.base);
    /* a bad signature changes nothing */
    snprintf(ctl, sizeof ctl, "deliver=%s&status=read&url=%s&secret=wrong", wamid, url);
    json_t *a = dbl_control(ctl);
    assert_int_equal(json_integer_value(json_object_get(a, "status")), 403);
    json_decref(a);
    http_json(&S, "POST", "/api/whatsapp/webhook", NULL, "{\"object\": \"x\"}", &r);
    expect_error(&r, 403, "Firma inválida");
    resp_free(&r);
    /* the signature is checked before the body is read: an unsigned body
     * that is no JSON is refused for its signature, not its syntax */
    http_json(&S, "POST", "/api/whatsapp/webhook", NULL, "esto no es json", &r);
    expect_error(&r, 403, "Firma inválida");
    resp_free(&r);
    json_t *list = mensajes(id);
    assert_true(
        json_is_null(json_object_get(mensaje(list, "whatsapp", "confirmacion"), "entrega")));
    json_decref(list);
    /* delivered, then read; a late "delivered" does not undo "read" */
    const char *steps[] = {"delivered", "read", "delivered"};
    for (int i = 0; i < 3; i++) {
        snprintf(ctl, sizeof ctl, "deliver=%s&status=%s&url=%s", wamid, steps[i], url);
        a = dbl_control(ctl);
        assert_int_equal(json_integer_value(json_object_get(a, "status")), 200);
        json_decref(a);
        list = mensajes(id);
        json_t *w = mensaje(list, "whatsapp", "confirmacion");
        assert_string_equal(jstr(w, "entrega"), i == 0 ? "delivered" : "read");
        assert_non_null(jstr(w, "entrega_en"));
        json_decref(list);
    }
    /* what the admin sees: both channels */
    list = mensajes(id);
    json_t *e = mensaje(list, "email", "confirmacion");
    json_t *w = mensaje(list, "whatsapp", "confirmacion");
    assert_non_null(e);
    assert_non_null(w);
    expect_keys(w, "id", "canal", "tipo", "destinatario", "estado", "intentos", "antelacion_min",
                "creado_en", "enviado_en", "proximo_intento", "error", "entrega", "entrega_en",
                NULL);
    assert_string_equal(jstr(e, "destinatario"), ANA.email);
    assert_string_equal(jstr(e, "estado"), "sent");
    assert_string_equal(jstr(w, "destinatario"), "34612345678");
    assert_string_equal(jstr(w, "estado"), "sent");
    assert_non_null(jstr(w, "enviado_en"));
    json_decref(list);
    /* a failure reported later wins, with its reason */
    snprintf(ctl, sizeof ctl, "deliver=%s&status=failed&url=%s&code=131026", wamid, url);
    json_decref(dbl_control(ctl));
    list = mensajes(id);
    w = mensaje(list, "whatsapp", "confirmacion");
    assert_string_equal(jstr(w, "entrega"), "failed");
    assert_non_null(strstr(jstr(w, "error"), "131026"));
    json_decref(list);
    /* clients never see it; an unknown cita is not found */
    char path[160];
    snprintf(path, sizeof path, "/api/admin/citas/%s/mensajes", id);
    http_get(&S, path, ANA.token, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 403, "Sin permisos"); /* as every admin route */
    resp_free(&r);
    http_get(&S, "/api/admin/citas/00000000-0000-4000-8000-000000000000/mensajes", ADMIN.token, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    http_get(&S, "/api/admin/citas/no-es-un-id/mensajes", ADMIN.token, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    http_get(&S, "/api/admin/citas/00000000-0000-4000-8000-000000000000/otra", ADMIN.token, &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
    free(id);
}

static void reminders_go_at_each_offset_by_both_channels_once(void **state)
{
    (void)state;
    const char *extra[] = {"BARBERIA_REMINDER_OFFSETS=2h,1h", NULL};
    start_shop(extra);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    /* booked inside the 2 h window: no reminder of 2 h; the 1 h one falls
     * due seconds from now */
    char f[32];
    at(HOUR_MS + 6000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_recordatorio", 200, 1);
    /* the notice of her consent, the confirmation and the reminder */
    assert_true(smtp_sink_wait(&K, 3, WAIT_MS));
    json_t *all = dbl_requests();
    json_t *m = req_message(json_array_get(all, json_array_size(all) - 1));
    assert_string_equal(msg_template(m), "barberia_recordatorio");
    assert_string_equal(msg_param(m, 0), "Ana Pérez");
    json_decref(m);
    json_decref(all);
    sleep_ms(3000);
    assert_int_equal(count_requests("barberia_recordatorio", 0), 1);
    assert_int_equal(smtp_sink_count(&K), 3);
    json_t *list = mensajes(id);
    json_t *w = mensaje(list, "whatsapp", "recordatorio");
    json_t *e = mensaje(list, "email", "recordatorio");
    assert_non_null(w);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(w, "antelacion_min")), 60);
    assert_int_equal(json_integer_value(json_object_get(e, "antelacion_min")), 60);
    json_decref(list);
    /* a reschedule: a notice by both channels */
    char g[32];
    at(3 * 86400000LL, g);
    char body[96];
    snprintf(body, sizeof body, "{\"fecha_inicio\": \"%s\"}", g);
    cambio(&ANA, id, "reprogramar", body);
    wait_requests("barberia_reprogramacion", 200, 1);
    free(id);
}

/* The n-th weekday (Monday to Friday: the default hours) from three days
 * ahead at hour:00 in the shop's zone (Europe/Madrid), as an API timestamp;
 * OUT: fecha, its day. */
static void weekday_at(int n, int hour, char out[ISO8601_LEN + 1], char fecha[11])
{
    setenv("TZ", "Europe/Madrid", 1);
    tzset();
    time_t t = time(NULL) + 3 * 86400;
    struct tm tm;
    for (;; t += 86400) {
        localtime_r(&t, &tm);
        if (tm.tm_wday >= 1 && tm.tm_wday <= 5 && n-- == 0) break;
    }
    tm.tm_hour = hour;
    tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    iso8601_format((int64_t)mktime(&tm) * 1000, out);
    strftime(fecha, 11, "%Y-%m-%d", &tm);
}

/* The longest public URL a WhatsApp message's links allow: a waiting-list
 * notice's link then takes the whole 1,000 bytes of its parameter. */
#define PUBLIC_URL_MAX 851

/* A public URL of n bytes (OUT: url, n + 1 bytes). */
static void long_public_url(char *url, size_t n)
{
    size_t o = (size_t)snprintf(url, n + 1, "https://citas.barberia.example/");
    for (; o < n; o++)
        url[o] = (char)('a' + o % 26);
    url[n] = '\0';
}

static void
the_longest_public_url_goes_whole_in_the_links_and_a_longer_one_stops_the_start(void **state)
{
    (void)state;
    static char env_url[PUBLIC_URL_MAX + 32];
    char base[PUBLIC_URL_MAX + 1];
    long_public_url(base, PUBLIC_URL_MAX);
    snprintf(env_url, sizeof env_url, "BARBERIA_PUBLIC_URL=%s/", base);
    const char *extra[] = {env_url, NULL};
    start_shop(extra);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    consent(&BEA, "{\"acepta\": true, \"telefono\": \"+34 611 000 007\"}", 200, &r);
    resp_free(&r);
    char f[32], fecha[11];
    weekday_at(0, 10, f, fecha);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* the confirmation's personal link, whole, opens the appointment */
    wait_requests("barberia_confirmacion", 200, 1);
    json_t *all = dbl_requests();
    json_t *m = req_message(json_array_get(all, 0));
    const char *link = msg_param(m, 5);
    assert_int_equal(strlen(link), strlen(base) + strlen("/c/") + 64);
    link_opens(link, base);
    json_decref(m);
    json_decref(all);
    /* Bea waits for that day; Ana's cancel frees the slot: the notice's
     * booking link is exactly 1,000 bytes, and goes whole */
    char body[300];
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"barbero_id\":\"%s\"}",
             SERVICIO, fecha, BARBERO);
    http_json(&S, "POST", "/api/lista-espera", BEA.token, body, &r);
    if (r.status != 201) fail_msg("lista-espera: %ld %s", r.status, r.body);
    resp_free(&r);
    cambio(&ANA, id, "cancelar", NULL);
    wait_requests("barberia_hueco_libre", 200, 1);
    char reservar[1100];
    snprintf(reservar, sizeof reservar, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s",
             base, SERVICIO, BARBERO, fecha, f);
    assert_int_equal(strlen(reservar), 1000);
    all = dbl_requests();
    size_t i, seen = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        json_t *n = req_message(e);
        if (!strcmp(msg_template(n), "barberia_hueco_libre")) {
            assert_string_equal(jstr(n, "to"), "34611000007");
            assert_string_equal(msg_param(n, 5), reservar);
            seen++;
        }
        json_decref(n);
    }
    assert_int_equal(seen, 1);
    json_decref(all);
    free(id);
    /* a byte longer, and the links could not go whole: the start stops
     * with one line */
    char longer[PUBLIC_URL_MAX + 2];
    long_public_url(longer, PUBLIC_URL_MAX + 1);
    static char env_longer[PUBLIC_URL_MAX + 32];
    snprintf(env_longer, sizeof env_longer, "BARBERIA_PUBLIC_URL=%s", longer);
    struct srv s2;
    memset(&s2, 0, sizeof s2);
    srv_init(&s2);
    const char *env[] = {env_longer, ENV_API, "BARBERIA_WHATSAPP_TOKEN=" TOKEN,
                         "BARBERIA_WHATSAPP_PHONE_NUMBER_ID=" PHONE_ID, NULL};
    const char *args[] = {"serve", "--listen", "127.0.0.1:0", NULL};
    char *out = NULL, *err = NULL;
    int st = run_cli_within(&s2, env, args, true, 30000, &out, &err);
    assert_int_equal(st, 1);
    assert_non_null(err);
    if (!strstr(err, "BARBERIA_PUBLIC_URL: at most 851 bytes with WhatsApp (it is 852)"))
        fail_msg("no clear refusal: %s", err);
    assert_int_equal(strchr(err, '\n') - err, (long)strlen(err) - 1); /* one line */
    free(out);
    free(err);
    srv_cleanup(&s2);
}

/* BARBERIA_WHATSAPP_MAX_PER_DAY bounds the WhatsApp messages about one
 * client in 24 hours, whatever number she gives (a loop of bookings and
 * cancellations, the number changed between turns); past it a message is
 * skipped with the reason and its e-mail still goes. Another client's
 * messages to the same number are hers, and not silenced. */
static void a_client_gets_at_most_the_days_cap_and_another_is_not_silenced(void **state)
{
    (void)state;
    static const char *const cap[] = {"BARBERIA_WHATSAPP_MAX_PER_DAY=3", NULL};
    start_shop(cap);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32], g[32], h[32];
    at(3 * 86400000LL, f);
    at(4 * 86400000LL, g);
    at(5 * 86400000LL, h);
    char *id1 = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    cambio(&ANA, id1, "cancelar", NULL);
    wait_requests("barberia_cancelacion", 200, 1);
    char *id2 = book(&S, &ANA, BARBERO, SERVICIO, g, NULL);
    wait_requests("barberia_confirmacion", 200, 2);
    /* another number for the next turn: still her allowance */
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"699 000 111\"}", 200, &r);
    resp_free(&r);
    cambio(&ANA, id2, "cancelar", NULL);
    struct row_q q = {id2, "cancelacion", "skipped"};
    if (!wait_until(row_there, &q, WAIT_MS)) {
        char *log = srv_log(&S);
        fail_msg("the fourth message was not skipped; server log:\n%s", log);
    }
    assert_int_equal(count_requests(NULL, 0), 3);
    json_t *list = mensajes(id2);
    json_t *m = mensaje(list, "whatsapp", "cancelacion");
    assert_non_null(m);
    assert_string_equal(jstr(m, "error"), "demasiados mensajes a este cliente en 24 horas");
    json_decref(list);
    /* Bea gives Ana's first number (a shared phone, or a stranger's): her
     * own confirmation goes all the same */
    consent(&BEA, "{\"acepta\": true, \"telefono\": \"612 34 56 78\"}", 200, &r);
    resp_free(&r);
    char *id3 = book(&S, &BEA, BARBERO, SERVICIO, h, NULL);
    wait_requests("barberia_confirmacion", 200, 3);
    assert_int_equal(count_requests(NULL, 0), 4);
    /* every booking e-mail went: three confirmations, two cancellations */
    assert_true(smtp_sink_wait(&K, 5, WAIT_MS));
    free(id1);
    free(id2);
    free(id3);
}

static long avisos_to(const struct user *u, const char *status)
{
    return db_count(&S,
                    "SELECT count(*) FROM cuenta_correo WHERE user_id = '%s' AND kind = "
                    "'whatsapp_aviso' AND status = '%s'",
                    u->id, status);
}

struct aviso_q {
    const struct user *u;
    long want;
};

static bool avisos_sent(void *ud)
{
    const struct aviso_q *q = ud;
    return avisos_to(q->u, "sent") == q->want;
}

/* Her consent given from her session, when it is not the one in force
 * already (none was, or for another number), tells her address: a session
 * someone else holds cannot send her messages, and their links, to his
 * phone unnoticed, not even by first putting his number in her profile.
 * The same consent again, a withdrawal, or the desk's record tell nothing;
 * and she gets at most three such notices in 24 hours. */
static void a_consent_given_from_her_session_is_told_to_her_address(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    /* her first consent, for her profile's number: told */
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    struct aviso_q q = {&ANA, 1};
    if (!wait_until(avisos_sent, &q, WAIT_MS)) fail_msg("no notice of her WhatsApp consent");
    /* the message itself: to her, in Spanish, with no link */
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *text = jstr(m, "text");
        if (text && strstr(text, "Se han activado los avisos de tus citas por WhatsApp")) {
            found++;
            assert_string_equal(
                json_string_value(json_array_get(json_object_get(m, "rcpt_tos"), 0)), ANA.email);
            assert_null(strstr(text, "http"));
        }
        json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    assert_int_equal(found, 1);
    /* the same number again, however written, and a withdrawal: nothing */
    static const char *const quiet[] = {
        "{\"acepta\": true, \"telefono\": \"+34 612-34-56-78\"}",
        "{\"acepta\": false}",
    };
    for (size_t i = 0; i < ARRAY_LEN(quiet); i++) {
        consent(&ANA, quiet[i], 200, &r);
        resp_free(&r);
    }
    /* given again after the withdrawal: told */
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"0034 612 34 56 78\"}", 200, &r);
    resp_free(&r);
    q.want = 2;
    if (!wait_until(avisos_sent, &q, WAIT_MS)) fail_msg("no notice of her consent given again");
    /* a session that first puts another number in her profile: told */
    http_json(&S, "PATCH", "/api/auth/me", ANA.token, "{\"telefono\": \"+44 7700 900123\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    q.want = 3;
    if (!wait_until(avisos_sent, &q, WAIT_MS)) fail_msg("no notice of her profile's new number");
    /* a fourth within the day: recorded, not told (her inbox is not flooded) */
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"699 000 111\"}", 200, &r);
    resp_free(&r);
    /* Bea, who has no number in her profile, gives one: told */
    consent(&BEA, "{\"acepta\": true, \"telefono\": \"611 000 222\"}", 200, &r);
    resp_free(&r);
    q = (struct aviso_q){&BEA, 1};
    if (!wait_until(avisos_sent, &q, WAIT_MS)) fail_msg("no notice of Bea's consent");
    /* recorded for Ana at the front desk: the desk's word, nothing to tell */
    char path[160];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", ANA.id);
    http_json(&S, "PUT", path, ADMIN.token, "{\"acepta\": true, \"telefono\": \"688 000 000\"}",
              &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    sleep_ms(1500);
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE kind = 'whatsapp_aviso'"), 4);
    assert_int_equal(avisos_to(&ANA, "sent"), 3);
}

/* The link in the last template message the double accepted for to, as a
 * /api/gestion/<token> path; fails when there is none. */
static void last_link_path(const char *to, const char *tpl, char *path, size_t n)
{
    json_t *all = wa_sink_accepted(&D.s, to);
    const json_t *m = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) if (!strcmp(msg_template(e), tpl)) m = e;
    const char *link = m ? wa_param(m, 5) : NULL;
    const char *tok = link ? strstr(link, "/c/") : NULL;
    if (!tok) fail_msg("no %s with a link to %s", tpl, to);
    snprintf(path, n, "/api/gestion/%s", tok + 3);
    json_decref(all);
}

static long opens(const char *path)
{
    struct resp r;
    http_get(&S, path, NULL, &r);
    long st = r.status;
    resp_free(&r);
    return st;
}

/* She moves her consent to another number after the confirmation went:
 * the reminder goes to the new one, and the confirmation's link, on the
 * old phone, opens nothing any more. */
static void a_reminder_goes_to_the_number_she_moved_to(void **state)
{
    (void)state;
    const char *extra[] = {"BARBERIA_REMINDER_OFFSETS=1h", NULL};
    start_shop(extra);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(HOUR_MS + 20000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    char antes[200];
    last_link_path("34612345678", "barberia_confirmacion", antes, sizeof antes);
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"699 000 111\"}", 200, &r);
    resp_free(&r);
    wait_requests("barberia_recordatorio", 200, 1);
    assert_int_equal(wa_sink_count(&D.s, "34612345678"), 1); /* the confirmation alone */
    char ahora[200];
    last_link_path("34699000111", "barberia_recordatorio", ahora, sizeof ahora);
    assert_int_equal(opens(ahora), 200);
    assert_int_equal(opens(antes), 404);
    free(id);
}

/* A confirmation still waiting to leave (the Graph API failing) when she
 * moves her consent goes to the new number, with a link that opens; she
 * withdraws it (a lost phone): that link opens nothing any more. */
static void what_waits_follows_her_number_and_a_withdrawal_ends_her_links(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    json_decref(dbl_control("fail=3&status=500&code=131000"));
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    wait_requests("barberia_confirmacion", 500, 1);
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"699 000 111\"}", 200, &r);
    resp_free(&r);
    wait_requests("barberia_confirmacion", 200, 1);
    assert_int_equal(wa_sink_count(&D.s, "34612345678"), 0);
    assert_int_equal(wa_sink_count(&D.s, "34699000111"), 1);
    char path[200];
    last_link_path("34699000111", "barberia_confirmacion", path, sizeof path);
    assert_int_equal(opens(path), 200);
    json_t *list = mensajes(id);
    assert_string_equal(jstr(mensaje(list, "whatsapp", "confirmacion"), "destinatario"),
                        "34699000111");
    json_decref(list);
    consent(&ANA, "{\"acepta\": false}", 200, &r);
    resp_free(&r);
    assert_int_equal(opens(path), 404);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(consent_is_given_with_a_number_in_e164_and_withdrawn, teardown),
        cmocka_unit_test_teardown(a_booking_is_confirmed_once_by_template_only_with_consent,
                                  teardown),
        cmocka_unit_test_teardown(a_5xx_and_a_429_are_retried_with_backoff_and_sent_once, teardown),
        cmocka_unit_test_teardown(a_wrong_token_is_retried_and_never_logged, teardown),
        cmocka_unit_test_teardown(in_the_quiet_hours_a_confirmation_waits_and_a_cancellation_goes,
                                  teardown),
        cmocka_unit_test_teardown(a_closures_cancellation_goes_by_whatsapp_as_hers_would, teardown),
        cmocka_unit_test_teardown(the_webhook_verifies_and_records_signed_statuses_for_the_admin,
                                  teardown),
        cmocka_unit_test_teardown(reminders_go_at_each_offset_by_both_channels_once, teardown),
        cmocka_unit_test_teardown(a_client_gets_at_most_the_days_cap_and_another_is_not_silenced,
                                  teardown),
        cmocka_unit_test_teardown(a_consent_given_from_her_session_is_told_to_her_address,
                                  teardown),
        cmocka_unit_test_teardown(a_reminder_goes_to_the_number_she_moved_to, teardown),
        cmocka_unit_test_teardown(what_waits_follows_her_number_and_a_withdrawal_ends_her_links,
                                  teardown),
        cmocka_unit_test_teardown(
            the_longest_public_url_goes_whole_in_the_links_and_a_longer_one_stops_the_start,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
