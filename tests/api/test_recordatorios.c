/*
 * test_recordatorios.c - the reminder e-mail: sent
 * BARBERIA_REMINDER_HOURS before the start, exactly once, never for a
 * cancelled cita, at the new time after a reschedule, after a restart, by
 * one of two nodes, and not at all for a booking made inside the window or
 * with reminders off, and never before the confirmation after a mail
 * outage. The window is one hour and the bookings start just
 * over an hour ahead, so a reminder falls due seconds into the test; the
 * mails are read back from the real SMTP sink.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_MAIL_MS 60000
#define HOUR_MS      3600000LL

static struct srv S, P; /* P: a second node on S's data */
static struct smtp_sink K;
static char URL[64];
static char *BARBERO, *SERVICIO;
static struct user ANA;

static const char *ENV_ON[] = {URL,
                               "BARBERIA_TZ=Europe/Madrid",
                               "BARBERIA_REMINDER_HOURS=1",
                               "BARBERIA_CANCEL_CUTOFF_MIN=0",
                               "BARBERIA_MIN_NOTICE_MIN=0",
                               NULL};

static void start_shop(const char *const *env)
{
    srv_init(&S);
    smtp_sink_start(&K, S.dir, 0, NULL);
    snprintf(URL, sizeof URL, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
}

static int teardown(void **state)
{
    (void)state;
    if (P.dir[0]) srv_cleanup(&P);
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    memset(&S, 0, sizeof S);
    memset(&P, 0, sizeof P);
    memset(&K, 0, sizeof K);
    free(BARBERO);
    free(SERVICIO);
    BARBERO = SERVICIO = NULL;
    return 0;
}

/* now + ms, canonical. */
static void at(int64_t ms, char out[ISO8601_LEN + 1])
{
    iso8601_format(clock_now_ms() + ms, out);
}

/* The sink's messages whose subject starts with prefix. */
static size_t count_subject(const char *prefix)
{
    char **paths;
    size_t n = smtp_sink_files(&K, &paths), c = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *s = jstr(m, "subject");
        c += s && !strncmp(s, prefix, strlen(prefix));
        json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    return c;
}

static bool one_reminder(void *ud)
{
    (void)ud;
    return count_subject("Recordatorio") >= 1;
}

/* The one reminder's text (caller frees); fails unless exactly one came. */
static char *the_reminder(void)
{
    if (!wait_until(one_reminder, NULL, WAIT_MAIL_MS)) {
        char *log = srv_log(&S);
        fail_msg("no reminder arrived; server log:\n%s", log);
    }
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    char *text = NULL;
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *s = jstr(m, "subject");
        if (s && !strncmp(s, "Recordatorio", 12)) {
            found++;
            free(text);
            text = strdup(jstr(m, "text"));
        }
        json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    assert_int_equal(found, 1);
    return text;
}

/* The local time "HH:MM" (Europe/Madrid) of a UTC timestamp, as the mail
 * shows it. */
static void local_hhmm(const char *iso, char out[8])
{
    int64_t ms;
    assert_true(iso8601_parse(iso, strlen(iso), &ms));
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    setenv("TZ", "Europe/Madrid", 1);
    tzset();
    localtime_r(&t, &tm);
    snprintf(out, 8, "%02d:%02d", tm.tm_hour, tm.tm_min);
}

static long reminder_rows(const char *id)
{
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                    "kind = 'recordatorio'",
                    id);
}

/* --- the tests ------------------------------------------------------------------------- */

static void a_reminder_goes_once_when_due_with_the_cita(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    char f[32];
    at(HOUR_MS + 6000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* nothing queued before it is due */
    assert_int_equal(reminder_rows(id), 0);
    char *text = the_reminder();
    assert_non_null(strstr(text, id));
    assert_non_null(strstr(text, "Te recordamos tu próxima cita"));
    char hhmm[8];
    local_hhmm(f, hhmm);
    assert_non_null(strstr(text, hhmm));
    free(text);
    /* and never again */
    sleep_ms(3000);
    assert_int_equal(count_subject("Recordatorio"), 1);
    assert_int_equal(reminder_rows(id), 1);
    assert_true(srv_wait_log(&S, "reminder ", 10000));
    free(id);
}

/* A reminder sent once the cut-off has passed offers the appointment's
 * page, not the change it can no longer make, and says whom to call. */
static void a_reminder_past_the_cut_off_offers_the_phone_not_the_change(void **state)
{
    (void)state;
    static const char *env[] = {URL,
                                "BARBERIA_TZ=Europe/Madrid",
                                "BARBERIA_REMINDER_HOURS=1",
                                "BARBERIA_CANCEL_CUTOFF_MIN=120",
                                "BARBERIA_MIN_NOTICE_MIN=0",
                                "BARBERIA_SHOP_PHONE=+34 910 000 000",
                                NULL};
    start_shop(env);
    char f[32];
    at(HOUR_MS + 6000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    char *text = the_reminder();
    assert_non_null(strstr(text, "Para ver tu cita:"));
    assert_null(strstr(text, "cambiarla o cancelarla"));
    assert_non_null(
        strstr(text, "Ya no se puede cambiar ni cancelar desde el enlace: si no puedes venir, "
                     "llama a la barbería (+34 910 000 000)."));
    free(text);
    free(id);
}

static void no_reminder_for_a_booking_inside_the_window_or_with_reminders_off(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    char f[32];
    at(HOUR_MS - 10 * 60000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* its confirmation arrives; a reminder never does */
    assert_true(smtp_sink_wait(&K, 1, WAIT_MAIL_MS));
    assert_true(srv_stop(&S) == 0);
    srv_start(&S, ENV_ON, NULL); /* a fresh scan at start */
    sleep_ms(3000);
    assert_int_equal(reminder_rows(id), 0);
    assert_int_equal(count_subject("Recordatorio"), 0);
    free(id);
    /* reminders off */
    assert_true(srv_stop(&S) == 0);
    const char *off[] = {URL, "BARBERIA_REMINDER_HOURS=0", "BARBERIA_MIN_NOTICE_MIN=0", NULL};
    srv_start(&S, off, NULL);
    char g[32];
    at(2 * HOUR_MS + 2000, g);
    id = book(&S, &ANA, BARBERO, SERVICIO, g, NULL);
    sleep_ms(5000);
    assert_int_equal(reminder_rows(id), 0);
    free(id);
}

static void a_cancelled_cita_gets_no_reminder(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    char f[32];
    at(HOUR_MS + 5000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    cita_cambio(&S, &ANA, id, "cancelar", NULL);
    /* well past the moment it would have been due */
    sleep_ms(9000);
    assert_true(smtp_sink_wait(&K, 2, WAIT_MAIL_MS)); /* confirmation, cancellation */
    assert_int_equal(count_subject("Recordatorio"), 0);
    assert_int_equal(count_subject("Cita cancelada"), 1);
    assert_int_equal(reminder_rows(id), 0);
    free(id);
}

static void after_a_reschedule_the_reminder_is_for_the_new_time(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    char f[32], g[32];
    at(HOUR_MS + 50 * 60000, f); /* its reminder: 50 minutes away */
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    at(HOUR_MS + 6000, g); /* the new one: seconds away */
    char body[96];
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", g);
    cita_cambio(&S, &ANA, id, "reprogramar", body);
    char *text = the_reminder();
    char hhmm[8], old[8];
    local_hhmm(g, hhmm);
    local_hhmm(f, old);
    assert_non_null(strstr(text, hhmm));
    assert_null(strstr(text, old));
    free(text);
    char *fi = db_query(&S,
                        "SELECT fecha_inicio FROM mail_outbox WHERE cita_id = '%s' AND "
                        "kind = 'recordatorio'",
                        id);
    int64_t a, b;
    assert_true(iso8601_parse(fi, strlen(fi), &a));
    assert_true(iso8601_parse(g, strlen(g), &b));
    assert_true(a == b);
    free(fi);
    free(id);
}

static void a_reminder_due_while_stopped_goes_after_the_restart_once(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    char f[32];
    at(HOUR_MS + 4000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    assert_true(smtp_sink_wait(&K, 1, WAIT_MAIL_MS)); /* the confirmation */
    assert_int_equal(srv_stop(&S), 0);
    sleep_ms(6000); /* due meanwhile */
    assert_int_equal(count_subject("Recordatorio"), 0);
    srv_start(&S, ENV_ON, NULL);
    char *text = the_reminder();
    assert_non_null(strstr(text, id));
    free(text);
    sleep_ms(2000);
    assert_int_equal(count_subject("Recordatorio"), 1);
    free(id);
}

static void of_two_nodes_only_one_sends_the_reminder(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    srv_init_peer(&P, &S);
    srv_start(&P, ENV_ON, NULL);
    enum { N = 4 };
    char *ids[N];
    for (int i = 0; i < N; i++) {
        char f[32];
        /* the first falls due in 5 s, the others half an hour apart */
        at(HOUR_MS + 5000 + i * 31 * 60000LL, f);
        ids[i] = book(i % 2 ? &P : &S, &ANA, BARBERO, SERVICIO, f, NULL);
    }
    char *text = the_reminder();
    assert_non_null(strstr(text, ids[0]));
    free(text);
    sleep_ms(3000);
    assert_int_equal(count_subject("Recordatorio"), 1);
    assert_int_equal(reminder_rows(ids[0]), 1);
    for (int i = 0; i < N; i++)
        free(ids[i]);
}

/* After a mail outage the confirmation, tried less and less often, may be
 * due after the reminder queued meanwhile: the reminder waits for it, and
 * she reads of her booking before she is reminded of it. */
static void after_an_outage_the_reminder_comes_after_the_confirmation(void **state)
{
    (void)state;
    start_shop(ENV_ON);
    int port = K.port;
    assert_int_equal(smtp_sink_stop(&K), 0);
    char f[32];
    at(HOUR_MS + 5000, f);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, NULL);
    /* the reminder falls due while the confirmation is still being retried */
    assert_true(srv_wait_log(&S, "reminder(s) queued", WAIT_MAIL_MS));
    sleep_ms(2000);
    smtp_sink_start(&K, S.dir, port, NULL);
    assert_true(smtp_sink_wait(&K, 2, 2 * WAIT_MAIL_MS));
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    assert_int_equal(n, 2);
    json_t *first = smtp_sink_message(paths[0]), *second = smtp_sink_message(paths[1]);
    const char *s1 = jstr(first, "subject"), *s2 = jstr(second, "subject");
    if (!s1 || !s2 || strncmp(s2, "Recordatorio", 12) != 0)
        fail_msg("the reminder came first: \"%s\", then \"%s\"", s1 ? s1 : "", s2 ? s2 : "");
    assert_null(strstr(s1, "Recordatorio"));
    json_decref(first);
    json_decref(second);
    smtp_sink_free_paths(paths, n);
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(a_reminder_goes_once_when_due_with_the_cita, teardown),
        cmocka_unit_test_teardown(a_reminder_past_the_cut_off_offers_the_phone_not_the_change,
                                  teardown),
        cmocka_unit_test_teardown(no_reminder_for_a_booking_inside_the_window_or_with_reminders_off,
                                  teardown),
        cmocka_unit_test_teardown(a_cancelled_cita_gets_no_reminder, teardown),
        cmocka_unit_test_teardown(after_a_reschedule_the_reminder_is_for_the_new_time, teardown),
        cmocka_unit_test_teardown(a_reminder_due_while_stopped_goes_after_the_restart_once,
                                  teardown),
        cmocka_unit_test_teardown(of_two_nodes_only_one_sends_the_reminder, teardown),
        cmocka_unit_test_teardown(after_an_outage_the_reminder_comes_after_the_confirmation,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
