/*
 * test_whatsapp_envio.c - confirmations, changes and cancellations by
 * WhatsApp, through a strict local double of the Graph API
 * (tests/doubles/wa_double.c; whatsapp_fixture.h): a client's consent
 * (given with a number in E.164, withdrawn), one template message per event
 * and never a second, retries with backoff after a 5xx or a 429, a wrong
 * token retried and never logged, a refusal quoting the personal link
 * logged without it, and the quiet hours (a confirmation
 * waits, a cancellation goes; a cancelled cita's waiting confirmation never
 * leaves). Reminders, statuses and links are test_whatsapp_avisos.c's.
 */
#define _GNU_SOURCE
#include "whatsapp_fixture.h"

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

/* A refusal whose message quotes what it was sent (here the last
 * parameter, the appointment's personal link) was logged and kept as the
 * message's error as it came: the link, which opens, moves and cancels her
 * appointment without signing in, went into the server's log and the
 * admin's view. Neither holds its token now; the refusal itself (its code)
 * is still logged and kept. */
static void a_refusal_that_quotes_the_link_never_logs_it(void **state)
{
    (void)state;
    start_shop(NULL);
    struct resp r;
    consent(&ANA, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    json_decref(dbl_control("fail=1&status=400&code=100&quote=1"));
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    struct row_q q = {id, "confirmacion", "dropped"};
    assert_true(wait_until(row_there, &q, WAIT_MS));
    /* the link the double was sent, and quoted back */
    json_t *all = dbl_requests();
    assert_int_equal(json_array_size(all), 1);
    json_t *m = req_message(json_array_get(all, 0));
    const char *link = msg_param(m, 5);
    const char *token = strstr(link, "/c/");
    assert_non_null(token);
    token += 3;
    assert_true(strlen(token) >= 32);
    char *log = srv_log(&S);
    assert_non_null(strstr(log, "code 100"));
    assert_null(strstr(log, token));
    free(log);
    json_t *list = mensajes(id);
    json_t *msg = mensaje(list, "whatsapp", "confirmacion");
    assert_non_null(msg);
    assert_non_null(strstr(jstr(msg, "error"), "code 100"));
    assert_null(strstr(jstr(msg, "error"), token));
    json_decref(list);
    json_decref(m);
    json_decref(all);
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
    cita_cambio(&S, &ANA, id, "cancelar", NULL);
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

/* Characters (UTF-8 code points) of s. */
static size_t chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Meta refuses for good a message whose body passes 1,024 characters with
 * its parameters (132005; the double counts a template's own text as 130):
 * with the longest names and address there are, the message still goes,
 * its longest parameters shortened to one length with "…", the day and the
 * link whole. */
static void the_longest_names_are_shortened_so_that_the_message_goes(void **state)
{
    (void)state;
    char largo[4][201];
    const char *de[4] = {"Cliente ", "Servicio ", "Barbero ", "Calle "};
    for (int i = 0; i < 4; i++) {
        memset(largo[i], 'x', 200);
        memcpy(largo[i], de[i], strlen(de[i]));
        largo[i][200] = '\0';
    }
    char address[240];
    snprintf(address, sizeof address, "BARBERIA_SHOP_ADDRESS=%s", largo[3]);
    const char *extra[] = {address, NULL};
    start_shop(extra);
    struct user u;
    signup_with_phone(&u, largo[0], "622 11 22 33");
    char *barbero = make_barbero(&S, largo[2]);
    char *servicio = make_servicio(&S, largo[1], 30, 15.0);
    struct resp r;
    consent(&u, "{\"acepta\": true}", 200, &r);
    resp_free(&r);
    char f[32];
    at(3 * 86400000LL, f);
    char *id = book(&S, &u, barbero, servicio, f, NULL);
    wait_requests("barberia_confirmacion", 200, 1);
    json_t *all = dbl_requests();
    assert_int_equal(json_array_size(all), 1);
    json_t *m = req_message(json_array_get(all, 0));
    size_t total = 0;
    for (size_t i = 0; i < 6; i++)
        total += chars(msg_param(m, i));
    assert_true(total <= 700);
    for (int i = 0; i < 3; i++) {
        const char *p = msg_param(m, (size_t)i);
        assert_true(chars(p) < 200);
        assert_int_equal(strncmp(p, largo[i], strlen(de[i])), 0);
        assert_string_equal(p + strlen(p) - strlen("…"), "…");
    }
    /* the shop's name and its address, cut to the same length */
    assert_int_equal(chars(msg_param(m, 4)), chars(msg_param(m, 0)));
    assert_non_null(strstr(msg_param(m, 3), "(Europe/Madrid)"));
    link_opens(msg_param(m, 5), S.base);
    json_decref(m);
    json_decref(all);
    assert_int_equal(wa_rows(id, "confirmacion", "sent"), 1);
    free(id);
    free(barbero);
    free(servicio);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(consent_is_given_with_a_number_in_e164_and_withdrawn,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_booking_is_confirmed_once_by_template_only_with_consent,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_5xx_and_a_429_are_retried_with_backoff_and_sent_once,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_wrong_token_is_retried_and_never_logged, whatsapp_teardown),
        cmocka_unit_test_teardown(a_refusal_that_quotes_the_link_never_logs_it, whatsapp_teardown),
        cmocka_unit_test_teardown(in_the_quiet_hours_a_confirmation_waits_and_a_cancellation_goes,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(a_closures_cancellation_goes_by_whatsapp_as_hers_would,
                                  whatsapp_teardown),
        cmocka_unit_test_teardown(the_longest_names_are_shortened_so_that_the_message_goes,
                                  whatsapp_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
