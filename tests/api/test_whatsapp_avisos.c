/*
 * test_whatsapp_avisos.c - what follows a booking by WhatsApp, through a
 * strict local double of the Graph API (tests/doubles/wa_double.c;
 * whatsapp_fixture.h): the webhook's handshake and signed statuses and what
 * the admin sees of an appointment's messages (403 for a client), a batch of
 * statuses as large as Meta's deliveries get (and no larger), reminders
 * at the configured offsets by both channels, the day's cap per client, a
 * consent told to her address, a number she moved to, the links of the
 * longest public URL sent whole (a longer one stops the start), and never
 * the token or the app secret in the server's log. Sending the messages of
 * a booking is test_whatsapp_envio.c's.
 */
#define _GNU_SOURCE
#include "whatsapp_fixture.h"

#include "wa_sink.h"
#include "util/iso8601.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Meta's documentation: webhook payloads can be up to 3MB (taken as MiB) */
#define WEBHOOK_MAX (3u * 1024 * 1024)

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

/* A webhook delivery of n statuses as Meta sends them (conversation,
 * pricing, the callback data the sender attached: pad bytes of it): the
 * first n - 1 about messages this shop never sent, the last `last` for
 * wamid; then spaces (JSON's own) up to size bytes when size is larger.
 * OUT: *len. Caller frees. */
static char *status_batch(const char *wamid, int n, size_t pad, const char *last, size_t size,
                          size_t *len)
{
    char *fill = malloc(pad + 1);
    memset(fill, 'x', pad);
    fill[pad] = '\0';
    char *out = NULL;
    FILE *f = open_memstream(&out, len);
    fputs("{\"object\":\"whatsapp_business_account\",\"entry\":[{\"id\":\"102290129340398\","
          "\"changes\":[{\"field\":\"messages\",\"value\":{\"messaging_product\":\"whatsapp\","
          "\"metadata\":{\"display_phone_number\":\"34910000000\",\"phone_number_id\":\"" PHONE_ID
          "\"},\"statuses\":[",
          f);
    for (int i = 0; i < n; i++) {
        bool mine = i == n - 1;
        char id[160];
        if (mine)
            snprintf(id, sizeof id, "%s", wamid);
        else
            snprintf(id, sizeof id, "wamid.HBgLMzQ2MDAwMDAwMDAVAgARGBI%06d", i);
        fprintf(f,
                "%s{\"id\":\"%s\",\"status\":\"%s\",\"timestamp\":\"%d\","
                "\"recipient_id\":\"34600%06d\",\"conversation\":{\"id\":"
                "\"a75d17ad06104c51166f948319b03c6a\",\"origin\":{\"type\":\"utility\"}},"
                "\"pricing\":{\"billable\":true,\"pricing_model\":\"CBP\",\"category\":"
                "\"utility\"},\"biz_opaque_callback_data\":\"%s\"}",
                i ? "," : "", id, mine ? last : "delivered", 1750857384 + i, i, fill);
    }
    fputs("]}}]}]}", f);
    fflush(f);
    while (*len < size) {
        fputc(' ', f);
        fflush(f);
    }
    fclose(f);
    free(fill);
    return out;
}

/* POST /api/whatsapp/webhook with body[0, len) signed with the app's
 * secret, as Meta signs it (X-Hub-Signature-256 over the whole body). */
static void webhook_signed(const char *body, size_t len, struct resp *r)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    assert_non_null(HMAC(EVP_sha256(), APP_SECRET, (int)strlen(APP_SECRET),
                         (const unsigned char *)body, len, mac, &n));
    char sig[128] = "X-Hub-Signature-256: sha256=";
    size_t at = strlen(sig);
    for (unsigned int i = 0; i < n; i++)
        at += (size_t)snprintf(sig + at, sizeof sig - at, "%02x", mac[i]);
    const char *headers[] = {sig, NULL};
    struct req_opts o = {
        .content_type = "application/json", .body = body, .len = len, .headers = headers};
    http_req(&S, "POST", "/api/whatsapp/webhook", &o, r);
}

/* What the admin sees of the confirmation's WhatsApp delivery (caller frees). */
static char *entrega(const char *id)
{
    json_t *list = mensajes(id);
    const char *e = jstr(mensaje(list, "whatsapp", "confirmacion"), "entrega");
    char *out = strdup(e ? e : "(null)");
    json_decref(list);
    return out;
}

/* Meta's webhook payloads may be up to 3MB (a batch of up to 1000 statuses):
 * a signed body of about 1 MB is read whole (its last status counts) and so
 * is one of exactly WEBHOOK_MAX bytes; one byte more is 413,
 * with nothing recorded, as every route answers a body past its cap; and
 * every other route keeps its 64 KiB. */
static void a_status_batch_up_to_metas_maximum_is_read_whole(void **state)
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
    char wamid[128];
    snprintf(wamid, sizeof wamid, "%s", jstr(json_array_get(all, 0), "wamid"));
    json_decref(all);
    struct row_q q = {id, "confirmacion", "sent"};
    assert_true(wait_until(row_there, &q, WAIT_MS));

    size_t len;
    char *body = status_batch(wamid, 1000, 850, "delivered", 0, &len);
    if (len < 1000 * 1000 || len > WEBHOOK_MAX / 2)
        fail_msg("the batch is %zu bytes, not about 1 MB", len);
    webhook_signed(body, len, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(body);
    char *e = entrega(id);
    assert_string_equal(e, "delivered");
    free(e);

    /* one byte past the bound: refused whole, the signature never checked */
    body = status_batch(wamid, 1000, 850, "read", WEBHOOK_MAX + 1, &len);
    assert_int_equal(len, WEBHOOK_MAX + 1);
    webhook_signed(body, len, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    free(body);
    e = entrega(id);
    assert_string_equal(e, "delivered");
    free(e);
    /* the bound itself is read */
    body = status_batch(wamid, 1000, 850, "read", WEBHOOK_MAX, &len);
    assert_int_equal(len, WEBHOOK_MAX);
    webhook_signed(body, len, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(body);
    e = entrega(id);
    assert_string_equal(e, "read");
    free(e);

    /* any other route: 64 KiB as before */
    size_t big = 64 * 1024 + 1;
    char *login = malloc(big + 1);
    memset(login, ' ', big);
    memcpy(login, "{\"email\":\"x@y.z\"}", 17);
    login[big] = '\0';
    http_json(&S, "POST", "/api/auth/login", NULL, login, &r);
    expect_error(&r, 413, "Cuerpo demasiado grande");
    resp_free(&r);
    free(login);
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
    cita_cambio(&S, &ANA, id, "reprogramar", body);
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
#define PUBLIC_URL_MAX 300

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
     * booking link is exactly 449 bytes, and goes whole */
    char body[300];
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"barbero_id\":\"%s\"}",
             SERVICIO, fecha, BARBERO);
    http_json(&S, "POST", "/api/lista-espera", BEA.token, body, &r);
    if (r.status != 201) fail_msg("lista-espera: %ld %s", r.status, r.body);
    resp_free(&r);
    cita_cambio(&S, &ANA, id, "cancelar", NULL);
    wait_requests("barberia_hueco_libre", 200, 1);
    char reservar[1100];
    snprintf(reservar, sizeof reservar, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s",
             base, SERVICIO, BARBERO, fecha, f);
    assert_int_equal(strlen(reservar), 449);
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
    if (!strstr(err, "BARBERIA_PUBLIC_URL: at most 300 bytes with WhatsApp (it is 301)"))
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
    cita_cambio(&S, &ANA, id1, "cancelar", NULL);
    wait_requests("barberia_cancelacion", 200, 1);
    char *id2 = book(&S, &ANA, BARBERO, SERVICIO, g, NULL);
    wait_requests("barberia_confirmacion", 200, 2);
    /* another number for the next turn: still her allowance */
    consent(&ANA, "{\"acepta\": true, \"telefono\": \"699 000 111\"}", 200, &r);
    resp_free(&r);
    cita_cambio(&S, &ANA, id2, "cancelar", NULL);
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
        cmocka_unit_test_teardown(the_webhook_verifies_and_records_signed_statuses_for_the_admin,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_status_batch_up_to_metas_maximum_is_read_whole,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(reminders_go_at_each_offset_by_both_channels_once,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_client_gets_at_most_the_days_cap_and_another_is_not_silenced,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_consent_given_from_her_session_is_told_to_her_address,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_reminder_goes_to_the_number_she_moved_to, whatsapp_teardown),
        cmocka_unit_test_teardown(what_waits_follows_her_number_and_a_withdrawal_ends_her_links,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(
            the_longest_public_url_goes_whole_in_the_links_and_a_longer_one_stops_the_start,
            whatsapp_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
