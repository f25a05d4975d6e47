/*
 * test_calendar_event.c - what a booking sends Google Calendar, end to end:
 * the real `barberia serve` talks to tests/doubles/gcal_double.c, a strict
 * local stand-in for Google's token endpoint and Calendar API that logs every
 * request it gets as one JSON line (calendar_fixture.h). The tests prove the
 * token grant, the event body and the encoded calendar id, that the access
 * token is cached and renewed, who is invited (an ordinary service account
 * or domain-wide delegation), and a booking with the calendar and the mail
 * at once. A failing Google is test_calendar_failures.c's.
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

/* Google refusing the cached token (revoked, or expired while it looked
 * good): it is dropped, a fresh one fetched and the event made with it,
 * within the same booking and its bound. */
static void refused_token_is_renewed_and_the_event_made_with_a_fresh_one(void **state)
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
    const char *event = jstr(cita, "google_event_id");
    assert_non_null(event);
    json_t *all = dlog_since(mark);
    size_t i, refused = 0, inserts = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        if (!is_insert_entry(e)) continue;
        refused += json_integer_value(json_object_get(e, "status")) == 401;
        inserts++;
    }
    assert_int_equal(refused, 1);
    assert_int_equal(inserts, 2);
    assert_non_null(insert_entry_for(all, event));
    json_decref(all);
    json_decref(cita);
    assert_int_equal(count_tokens_since(mark), 1);
    /* the fresh token is kept for the next booking */
    mark = dlog_mark();
    next_slot(fecha);
    cita = book_cita(&G, &G.ana, fecha, NULL, NULL);
    assert_non_null(jstr(cita, "google_event_id"));
    json_decref(cita);
    assert_int_equal(count_tokens_since(mark), 0);
    assert_log_holds_no_secret(&G.s);
}

/* --- attendees: ordinary service accounts and domain-wide delegation ------------------------- */

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
    gcal_dbl_control(&DS, "reset=1");
    /* the mode that refuses attendees to an account acting as itself: one
     * acting for a user of its domain may invite */
    gcal_dbl_control(&DS, "mode=forbidden");
    struct shop ws;
    shop_start_on(&ws, &DS, CREDS_DS, CALENDAR_ID, LONG_BOUND_MS, SUBJECT);
    size_t mark = gcal_dbl_mark(&DS);
    json_t *citas[2];
    for (int k = 0; k < 2; k++) {
        char fecha[32];
        next_slot(fecha);
        citas[k] = book_cita(&ws, &ws.ana, fecha, NULL, NULL);
        assert_non_null(jstr(citas[k], "google_event_id"));
    }
    json_t *all = gcal_dbl_since(&DS, mark);
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
    gcal_dbl_control(&DS, "reset=1");
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
        const struct gcal_dbl *d = cases[k].delegated ? &DS : &D;
        struct shop bad;
        shop_start_on(&bad, d, cases[k].delegated ? CREDS_DS : CREDS, CALENDAR_ID, LONG_BOUND_MS,
                      cases[k].subject);
        char fecha[32];
        next_slot(fecha);
        size_t mark = gcal_dbl_mark(d);
        json_t *cita = book_cita(&bad, &bad.ana, fecha, NULL, NULL);
        assert_true(json_is_null(json_object_get(cita, "google_event_id")));
        char *line = one_log_line(&bad.s, jstr(cita, "id"), "(google): token request");
        if (!strstr(line, cases[k].want))
            fail_msg("case %zu: log line without \"%s\": %s", k, cases[k].want, line);
        free(line);
        json_decref(cita);
        json_t *all = gcal_dbl_since(d, mark);
        size_t inserts = inserts_at(all, fecha);
        json_decref(all);
        assert_int_equal(inserts, 0);
        assert_log_holds_no_secret(&bad.s);
        shop_stop(&bad);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T_(f) cmocka_unit_test_setup(f, calendar_reset_double)
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
        T_(refused_token_is_renewed_and_the_event_made_with_a_fresh_one),
        T_(ordinary_service_account_creates_the_event_without_inviting_the_client),
        T_(concurrent_first_bookings_without_delegation_all_get_events),
        T_(attendee_less_retry_stays_within_the_bound),
        T_(subject_goes_into_the_assertion_and_the_client_is_invited),
        T_(a_subject_google_does_not_accept_fails_at_the_token_request),
        T_(one_booking_with_calendar_and_mail_makes_an_event_and_delivers_the_mail),
#undef T_
    };
    return cmocka_run_group_tests(tests, calendar_group_setup, calendar_group_teardown);
}
