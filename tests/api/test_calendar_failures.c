/*
 * test_calendar_failures.c - a Google Calendar that fails, end to end,
 * against tests/doubles/gcal_double.c (calendar_fixture.h): a failing,
 * garbled, silent or absent Google (or token endpoint) leaves the booking
 * at 201 with google_event_id null within the configured bound, with one
 * log line and no secret in it, and heals by itself; a booking the store
 * refuses or that loses the race for its slot deletes its event; a key file
 * or subject that is wrong stops serve with one error line. Timing
 * assertions only ever bound from above, with a wide margin, so a slow
 * machine cannot fail them. What a booking sends is test_calendar_event.c's.
 */
#define _GNU_SOURCE
#include "calendar_fixture.h"

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
    struct gcal_dbl e;
    memset(&e, 0, sizeof e);
    dbl_start(&e, "double-down", NULL);
    int port = (int)strtol(strrchr(e.http.base, ':') + 1, NULL, 10);
    char creds[400];
    snprintf(creds, sizeof creds, "%s/service-account-down.json", ROOT);
    gcal_write_creds(creds, CLIENT_EMAIL, KEY, e.token_url);
    struct shop sh;
    shop_start_on(&sh, &e, creds, CALENDAR_ID, SHORT_BOUND_MS, NULL);
    /* Google is down: connections are refused */
    gcal_dbl_stop(&e);
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
    size_t mark = gcal_dbl_mark(&e);
    next_slot(fecha);
    cita = book_cita(&sh, &sh.ana, fecha, NULL, NULL);
    const char *event_id = jstr(cita, "google_event_id");
    if (!event_id) fail_msg("no event once Google was back; log:\n%s", srv_log(&sh.s));
    json_t *all = gcal_dbl_since(&e, mark);
    assert_string_equal(jstr(insert_entry_for(all, event_id), "verdict"), "ok");
    json_decref(all);
    json_decref(cita);
    shop_stop(&sh);
    gcal_dbl_stop(&e);
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

/* Google's rate limit (429, or 403 rateLimitExceeded) did nothing and
 * asks to be tried again with backoff: within the bound, the booking gets
 * its event. A 500 to an events.insert is not tried again (Google may
 * have made the event: a second would be a duplicate). */
static void google_rate_limiting_an_insert_is_tried_again_within_the_bound(void **state)
{
    (void)state;
    const char *controls[] = {"fail=1&status=429", "fail=2&status=403"};
    for (size_t k = 0; k < ARRAY_LEN(controls); k++) {
        double_control(controls[k]);
        size_t mark = dlog_mark();
        char fecha[32];
        next_slot(fecha);
        int64_t elapsed = 0;
        json_t *cita = book_cita(&T, &T.ana, fecha, NULL, &elapsed);
        if (!jstr(cita, "google_event_id")) fail_msg("no event after %s", controls[k]);
        if (elapsed >= SHORT_BOUND_MS + MARGIN_MS)
            fail_msg("the booking took %lld ms with a %d ms bound", (long long)elapsed,
                     SHORT_BOUND_MS);
        json_t *all = dlog_since(mark);
        assert_int_equal(inserts_at(all, fecha), k + 2);
        json_decref(all);
        json_decref(cita);
    }
    size_t mark = dlog_mark();
    char fecha[32];
    booking_survives_at("fail=1&status=500", "events.insert: HTTP 500", fecha);
    json_t *all = dlog_since(mark);
    assert_int_equal(inserts_at(all, fecha), 1);
    json_decref(all);
}

/* A cancel while Google has a passing backend error (503) or rate limit:
 * events.delete may be sent twice without harm, so it is tried again and
 * the cancelled appointment leaves no event behind. */
static void a_cancel_deletes_the_event_through_a_passing_google_failure(void **state)
{
    (void)state;
    const char *controls[] = {"fail=1&status=503", "fail=1&status=429"};
    for (size_t k = 0; k < ARRAY_LEN(controls); k++) {
        char fecha[32];
        next_slot(fecha);
        json_t *cita = book_cita(&T, &T.ana, fecha, NULL, NULL);
        const char *event = jstr(cita, "google_event_id");
        assert_non_null(event);
        double_control(controls[k]);
        size_t mark = dlog_mark();
        char path[160];
        snprintf(path, sizeof path, "/api/citas/%s/cancelar", jstr(cita, "id"));
        struct resp r;
        http_json(&T.s, "POST", path, T.ana.token, NULL, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
        json_t *all = dlog_since(mark);
        size_t i, tries = 0, deleted = 0;
        json_t *e;
        json_array_foreach(all, i, e)
        {
            if (strcmp(jstr(e, "method"), "DELETE") || !jstr(e, "event_id") ||
                strcmp(jstr(e, "event_id"), event))
                continue;
            tries++;
            deleted += json_integer_value(json_object_get(e, "status")) == 204;
        }
        json_decref(all);
        if (tries != 2 || deleted != 1)
            fail_msg("after %s: %zu deletes, %zu of them done", controls[k], tries, deleted);
        json_decref(cita);
    }
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
#define T_(f) cmocka_unit_test_setup(f, calendar_reset_double)
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
                                        calendar_reset_double, drop_citas_trigger),
        T_(google_refusing_writes_with_another_403_fails_without_a_retry),
        T_(google_rate_limiting_an_insert_is_tried_again_within_the_bound),
        T_(a_cancel_deletes_the_event_through_a_passing_google_failure),
        T_(token_endpoint_never_answering_bounds_every_waiting_booking),
        T_(token_refused_by_google_leaves_the_event_null_and_logs_why),
        T_(booking_that_loses_the_race_deletes_its_event),
        T_(nothing_configured_leaves_the_event_null),
        T_(missing_key_file_stops_serve_with_one_error_line),
        T_(malformed_key_file_stops_serve_with_one_error_line),
        T_(malformed_subject_stops_serve_with_one_error_line),
        T_(subject_without_credentials_stops_serve_with_one_error_line),
#undef T_
    };
    return cmocka_run_group_tests(tests, calendar_group_setup, calendar_group_teardown);
}
