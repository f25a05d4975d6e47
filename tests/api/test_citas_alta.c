/*
 * test_citas_alta.c - POST /api/citas over HTTP against the real server:
 * the specification's processing order step by step (and which error wins
 * when two apply), the created appointment's exact shape and timestamps,
 * and the history record. The slot and the listing are test_citas_agenda.c's.
 */
#define _GNU_SOURCE
#include "citas_fixture.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- 1. authentication (before the body is read) ------------------------------------ */

static void post_without_session_is_401(void **state)
{
    (void)state;
    char *b = cita_body(F.barbero, F.servicio, "2031-01-01T10:00:00Z");
    post_expect(NULL, b, 401, NO_AUTH);
    free(b);
}

static void post_with_garbage_token_is_401(void **state)
{
    (void)state;
    char *b = cita_body(F.barbero, F.servicio, "2031-01-01T10:00:00Z");
    /* not token-shaped, token-shaped but unknown, and a user's token altered */
    post_expect("garbage", b, 401, NO_AUTH);
    post_expect("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", b, 401, NO_AUTH);
    char altered[64];
    snprintf(altered, sizeof altered, "%s", U.token);
    altered[0] = altered[0] == 'A' ? 'B' : 'A';
    post_expect(altered, b, 401, NO_AUTH);
    char longer[80];
    snprintf(longer, sizeof longer, "%sx", U.token);
    post_expect(longer, b, 401, NO_AUTH);
    /* a garbage cookie is no session either */
    struct req_opts o = {.cookie = "barberia_session=garbage", .body = b};
    struct resp r;
    http_req(&F.s, "POST", "/api/citas", &o, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
    free(b);
}

static void post_with_logged_out_token_is_401(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Saliente");
    struct resp r;
    http_json(&F.s, "POST", "/api/auth/logout", u.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *b = cita_body(F.barbero, F.servicio, "2031-01-01T10:00:00Z");
    post_expect(u.token, b, 401, NO_AUTH);
    free(b);
}

static void post_with_expired_session_is_401(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Caducado");
    /* the session works, then its expiry passes */
    json_t *l = get_citas(u.token, NULL);
    json_decref(l);
    char *out = db_query(&F.s,
                         "UPDATE auth_sessions SET expires_at = '2001-01-01T00:00:00.000Z' "
                         "WHERE user_id = '%s'; SELECT changes();",
                         u.id);
    assert_string_equal(out, "1");
    free(out);
    char *b = cita_body(F.barbero, F.servicio, "2031-01-01T10:00:00Z");
    post_expect(u.token, b, 401, NO_AUTH);
    free(b);
    struct resp r;
    http_get(&F.s, "/api/citas", u.token, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
}

static void unauthenticated_invalid_json_is_401_not_400(void **state)
{
    (void)state;
    post_expect(NULL, "{this is not json", 401, NO_AUTH);
    post_expect("garbage", "[1,2,3]", 401, NO_AUTH);
    post_expect(NULL, "", 401, NO_AUTH);
}

static void unauthenticated_oversized_body_is_401_not_413(void **state)
{
    (void)state;
    size_t n = 200 * 1024;
    char *big = malloc(n + 1);
    memset(big, 'x', n);
    big[n] = '\0';
    post_expect(NULL, big, 401, NO_AUTH);
    post_expect("garbage", big, 401, NO_AUTH);
    free(big);
}

/* --- the body ------------------------------------------------------------------------- */

static void body_that_is_not_a_json_object_is_400(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "not json",
        "{",
        "{\"barbero_id\":}",
        "[]",
        "[{\"barbero_id\":\"x\"}]",
        "\"texto\"",
        "42",
        "null",
        "true",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        post_expect(U.token, bad[i], 400, "JSON inválido");
    /* no body at all */
    struct resp r;
    http_json(&F.s, "POST", "/api/citas", U.token, NULL, &r);
    expect_error(&r, 400, "JSON inválido");
    resp_free(&r);
}

static void body_over_64_kib_is_413_after_auth(void **state)
{
    (void)state;
    /* a valid JSON object of 64 KiB + 1 bytes */
    size_t n = 64 * 1024 + 1;
    char *big = malloc(n + 1);
    const char *head = "{\"notas\":\"";
    memcpy(big, head, strlen(head));
    memset(big + strlen(head), 'a', n - strlen(head) - 2);
    memcpy(big + n - 2, "\"}", 2);
    big[n] = '\0';
    assert_int_equal(strlen(big), n);
    post_expect(U.token, big, 413, "Cuerpo demasiado grande");
    /* one byte less is read and judged on its content: a required field is missing */
    memcpy(big + n - 3, "\"}", 3);
    assert_int_equal(strlen(big), n - 1);
    post_expect(U.token, big, 400, FALTAN);
    free(big);
    /* an oversized body that is not JSON either: 413 */
    size_t m = 300 * 1024;
    char *junk = malloc(m + 1);
    memset(junk, '{', m);
    junk[m] = '\0';
    post_expect(U.token, junk, 413, "Cuerpo demasiado grande");
    free(junk);
}

/* --- 2. required fields ------------------------------------------------------------- */

static void each_required_field_absent_null_or_empty_is_400(void **state)
{
    (void)state;
    char *b = q(F.barbero), *s = q(F.servicio), *f = q("2031-01-01T10:00:00Z");
    const char *forms[] = {NULL, "null", "\"\""};
    for (int field = 0; field < 3; field++) {
        for (int k = 0; k < 3; k++) {
            /* for the absent form the member is left out entirely */
            char *body;
            if (k == 0)
                body = body3(field == 0 ? NULL : b, field == 1 ? NULL : s, field == 2 ? NULL : f,
                             NULL);
            else
                body = body3(field == 0 ? forms[k] : b, field == 1 ? forms[k] : s,
                             field == 2 ? forms[k] : f, NULL);
            post_expect(U.token, body, 400, FALTAN);
            free(body);
        }
    }
    post_expect(U.token, "{}", 400, FALTAN);
    post_expect(U.token, "{\"notas\":\"hola\"}", 400, FALTAN);
    free(b);
    free(s);
    free(f);
}

static void missing_field_wins_over_unknown_ids_and_bad_fecha(void **state)
{
    (void)state;
    /* fecha missing, both ids unknown */
    post_expect(U.token, "{\"barbero_id\":\"" UNKNOWN_ID "\",\"servicio_id\":\"" UNKNOWN_ID "\"}",
                400, FALTAN);
    /* barbero empty, servicio unknown, fecha unparsable */
    post_expect(U.token,
                "{\"barbero_id\":\"\",\"servicio_id\":\"" UNKNOWN_ID
                "\",\"fecha_inicio\":\"basura\"}",
                400, FALTAN);
    /* servicio null, barbero unknown */
    post_expect(U.token,
                "{\"barbero_id\":\"" UNKNOWN_ID
                "\",\"servicio_id\":null,\"fecha_inicio\":\"2031-01-01T10:00:00Z\"}",
                400, FALTAN);
    /* a wrongly typed notas does not hide a missing field */
    post_expect(U.token, "{\"barbero_id\":\"" UNKNOWN_ID "\",\"notas\":5}", 400, FALTAN);
}

/* --- 3. the service ------------------------------------------------------------------- */

static void unknown_servicio_is_404(void **state)
{
    (void)state;
    char *b = q(F.barbero), *f = q("2031-01-01T10:00:00Z");
    const char *ids[] = {"\"" UNKNOWN_ID "\"",
                         "\"no-es-un-uuid\"",
                         "12345",
                         "12.5",
                         "true",
                         "{\"id\":1}",
                         "[1]",
                         "\"0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab'--\""};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *body = body3(b, ids[i], f, NULL);
        post_expect(U.token, body, 404, NO_SERV);
        free(body);
    }
    /* a barber's id is not a service's */
    char *body = body3(b, b, f, NULL);
    post_expect(U.token, body, 404, NO_SERV);
    free(body);
    free(b);
    free(f);
}

static void unknown_servicio_wins_over_unknown_barbero_and_bad_fecha(void **state)
{
    (void)state;
    post_expect(U.token,
                "{\"barbero_id\":\"" UNKNOWN_ID "\",\"servicio_id\":\"" UNKNOWN_ID
                "\",\"fecha_inicio\":\"2031-01-01T10:00:00Z\"}",
                404, NO_SERV);
    char *body = NULL;
    assert_true(asprintf(&body,
                         "{\"barbero_id\":\"%s\",\"servicio_id\":\"" UNKNOWN_ID
                         "\",\"fecha_inicio\":\"2031-02-30\"}",
                         F.barbero) > 0);
    post_expect(U.token, body, 404, NO_SERV);
    free(body);
    post_expect(U.token,
                "{\"barbero_id\":\"nada\",\"servicio_id\":\"nada\",\"fecha_inicio\":\"basura\"}",
                404, NO_SERV);
}

/* --- 4. fecha_inicio ------------------------------------------------------------------ */

static const char *const BAD_FECHAS[] = {
    "\"basura\"",
    "\"2031-02-30\"",
    "\"2031-02-29T10:00:00Z\"", /* 2031 is not a leap year */
    "\"2031-13-01\"",
    "\"2031-00-10\"",
    "\"2031-04-31T10:00:00Z\"",
    "\"2031-05-04T25:00:00Z\"",
    "\"2031-05-04T10:60:00Z\"",
    "\"2031-05-04T10:30:00+25:00\"",
    "\"2031-05-04T10:30:00 garbage\"",
    "\"04/05/2031\"",
    "\"31-05-04\"",
    "20310504",
    "true",
};

static void bad_fecha_is_400_with_known_servicio_and_barbero(void **state)
{
    (void)state;
    char *b = q(F.barbero), *s = q(F.servicio);
    for (size_t i = 0; i < sizeof BAD_FECHAS / sizeof BAD_FECHAS[0]; i++) {
        char *body = body3(b, s, BAD_FECHAS[i], NULL);
        post_expect(U.token, body, 400, BAD_FECHA);
        free(body);
    }
    free(b);
    free(s);
    /* nothing was stored */
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", F.barbero), 0);
}

static void bad_fecha_wins_over_unknown_barbero(void **state)
{
    (void)state;
    char *s = q(F.servicio);
    const char *barbs[] = {"\"" UNKNOWN_ID "\"", "\"no-uuid\"", "7"};
    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < sizeof BAD_FECHAS / sizeof BAD_FECHAS[0]; i++) {
            char *body = body3(barbs[k], s, BAD_FECHAS[i], NULL);
            post_expect(U.token, body, 400, BAD_FECHA);
            free(body);
        }
    }
    free(s);
}

/* --- 5. the barber -------------------------------------------------------------------- */

static void unknown_barbero_is_404(void **state)
{
    (void)state;
    char *s = q(F.servicio), *f = q("2031-01-01T10:00:00Z");
    const char *ids[] = {"\"" UNKNOWN_ID "\"", "\"no-es-un-uuid\"", "12345", "false",
                         "{\"id\":\"x\"}"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *body = body3(ids[i], s, f, NULL);
        post_expect(U.token, body, 404, NO_BARB);
        free(body);
    }
    /* a service's id is not a barber's */
    char *body = body3(s, s, f, NULL);
    post_expect(U.token, body, 404, NO_BARB);
    free(body);
    free(s);
    free(f);
}

/* Numbers of any size are JSON (RFC 8259 sets no limit; JSON.parse takes them all): an id
 * that is one is not found, notas that is one is not a string, and an unknown member that
 * holds one is ignored like any other. */
static void numbers_past_64_bits_or_a_double_are_json_not_400(void **state)
{
    (void)state;
    char *b = q(F.barbero), *s = q(F.servicio), *f = q("2031-01-01T10:00:00Z");
    const char *huge[] = {"123456789012345678901234567890", "-99999999999999999999", "1e999",
                          "-1E400", "1.5e309"};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        char *body = body3(huge[i], s, f, NULL);
        post_expect(U.token, body, 404, NO_BARB);
        free(body);
        body = body3(b, huge[i], f, NULL);
        post_expect(U.token, body, 404, NO_SERV);
        free(body);
        char notas[64];
        snprintf(notas, sizeof notas, "\"notas\":%s", huge[i]);
        body = body3(b, s, f, notas);
        post_expect(U.token, body, 400, "Campo inválido: notas");
        free(body);
    }
    /* not a number, however large: still not JSON */
    post_expect(U.token, "{\"x\":01e999}", 400, "JSON inválido");
    post_expect(U.token, "{\"x\":1e999,}", 400, "JSON inválido");
    post_expect(U.token, "{\"x\":1e999", 400, "JSON inválido");
    free(b);
    free(s);
    free(f);
    /* beside the fields, in a member nobody reads: booked, the text untouched */
    char *barb = make_barbero(&F.s, "Barbero Numeros");
    json_t *c = book_json(&U, barb, F.servicio, "2031-03-12T10:00:00Z",
                          "\"extra\":[1e999,-123456789012345678901234567890,1e-999,"
                          "{\"a\":\"1e999\\\"99999999999999999999\"}],\"notas\":\"9e999\"");
    assert_string_equal(jstr(c, "notas"), "9e999");
    json_decref(c);
    free(barb);
}

/* --- notas ---------------------------------------------------------------------------- */

static void non_string_notas_is_400_campo_invalido(void **state)
{
    (void)state;
    char *b = q(F.barbero), *s = q(F.servicio), *f = q("2031-01-01T10:00:00Z");
    const char *vals[] = {"\"notas\":5", "\"notas\":true", "\"notas\":{\"a\":1}",
                          "\"notas\":[\"x\"]", "\"notas\":1.5"};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        char *body = body3(b, s, f, vals[i]);
        post_expect(U.token, body, 400, "Campo inválido: notas");
        free(body);
    }
    /* it is judged after the required fields and before the lookups */
    char *body = body3("\"" UNKNOWN_ID "\"", "\"" UNKNOWN_ID "\"", f, "\"notas\":5");
    post_expect(U.token, body, 400, "Campo inválido: notas");
    free(body);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", F.barbero), 0);
    free(b);
    free(s);
    free(f);
}

/* --- 11. success ---------------------------------------------------------------------- */

static void created_cita_is_201_with_exactly_the_appointment_fields(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Exito");
    char *body = NULL;
    assert_true(asprintf(&body,
                         "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\","
                         "\"fecha_inicio\":\"2031-03-10T10:00:00Z\",\"notas\":\"Sin prisa\"}",
                         barb, F.servicio) > 0);
    struct resp r;
    post(U.token, body, &r);
    free(body);
    assert_int_equal(r.status, 201);
    char ct[128];
    assert_string_equal(resp_header(&r, "Content-Type", ct, sizeof ct),
                        "application/json; charset=utf-8");
    expect_keys(r.json, "cita", NULL);
    json_t *c = json_object_get(r.json, "cita");
    expect_keys(c, "id", "cliente_id", "barbero_id", "servicio_id", "fecha_inicio", "fecha_fin",
                "estado", "notas", "google_event_id", NULL);
    assert_true(is_lower_uuid(jstr(c, "id")));
    assert_string_equal(jstr(c, "cliente_id"), U.id);
    assert_string_equal(jstr(c, "barbero_id"), barb);
    assert_string_equal(jstr(c, "servicio_id"), F.servicio);
    assert_string_equal(jstr(c, "fecha_inicio"), "2031-03-10T10:00:00.000Z");
    assert_string_equal(jstr(c, "fecha_fin"), "2031-03-10T10:30:00.000Z");
    assert_string_equal(jstr(c, "estado"), "confirmada");
    assert_string_equal(jstr(c, "notas"), "Sin prisa");
    /* no calendar configured: the attempt fails quietly */
    assert_true(json_is_null(json_object_get(c, "google_event_id")));

    /* it is stored as answered */
    char *row = db_query(&F.s,
                         "SELECT cliente_id, barbero_id, servicio_id, fecha_inicio, fecha_fin, "
                         "estado, notas, google_event_id IS NULL FROM citas WHERE id = '%s'",
                         jstr(c, "id"));
    char expect[512];
    snprintf(expect, sizeof expect,
             "%s\t%s\t%s\t2031-03-10T10:00:00.000Z\t2031-03-10T10:30:00.000Z\tconfirmada\tSin "
             "prisa\t1",
             U.id, barb, F.servicio);
    assert_string_equal(row, expect);
    free(row);
    resp_free(&r);
    free(barb);
}

static void ids_given_in_uppercase_are_found_and_stored_lowercase(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Mayusculas");
    char ub[40], us[40];
    snprintf(ub, sizeof ub, "%s", barb);
    snprintf(us, sizeof us, "%s", F.servicio);
    for (char *p = ub; *p; p++)
        if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 'a' + 'A');
    for (char *p = us; *p; p++)
        if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 'a' + 'A');
    json_t *c = book_json(&U, ub, us, "2031-03-11T10:00:00Z", NULL);
    assert_string_equal(jstr(c, "barbero_id"), barb);
    assert_string_equal(jstr(c, "servicio_id"), F.servicio);
    json_decref(c);
    free(barb);
}

static void notas_absent_null_or_empty_is_null(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Notas");
    const char *extras[] = {NULL, "\"notas\":null", "\"notas\":\"\""};
    const char *fechas[] = {"2031-03-12T09:00:00Z", "2031-03-12T10:00:00Z", "2031-03-12T11:00:00Z"};
    for (int i = 0; i < 3; i++) {
        json_t *c = book_json(&U, barb, F.servicio, fechas[i], extras[i]);
        assert_true(json_is_null(json_object_get(c, "notas")));
        assert_int_equal(db_count(&F.s,
                                  "SELECT count(*) FROM citas WHERE id = '%s' AND notas IS NULL",
                                  jstr(c, "id")),
                         1);
        json_decref(c);
    }
    free(barb);
}

static void fecha_fin_is_fecha_inicio_plus_duracion_min(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Duraciones");
    char *s90 = make_servicio(&F.s, "Largo 90", 90, 40);
    char *s1 = make_servicio(&F.s, "Minimo 1", 1, 1);
    char *s1440 = make_servicio(&F.s, "Dia 1440", 1440, 100);
    static const struct {
        int which;
        const char *in, *start, *end;
    } cases[] = {
        {0, "2031-06-01T23:00:00Z", "2031-06-01T23:00:00.000Z", "2031-06-02T00:30:00.000Z"},
        {0, "2031-06-30T23:45:00Z", "2031-06-30T23:45:00.000Z", "2031-07-01T01:15:00.000Z"},
        {0, "2031-12-31T23:30:00Z", "2031-12-31T23:30:00.000Z", "2032-01-01T01:00:00.000Z"},
        {1, "2031-06-05T10:00:00.250Z", "2031-06-05T10:00:00.250Z", "2031-06-05T10:01:00.250Z"},
        {2, "2032-02-28T12:00:00Z", "2032-02-28T12:00:00.000Z", "2032-02-29T12:00:00.000Z"},
    };
    const char *servs[] = {s90, s1, s1440};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *c = book_json(&U, barb, servs[cases[i].which], cases[i].in, NULL);
        assert_string_equal(jstr(c, "fecha_inicio"), cases[i].start);
        assert_string_equal(jstr(c, "fecha_fin"), cases[i].end);
        json_decref(c);
    }
    free(barb);
    free(s90);
    free(s1);
    free(s1440);
}

static void timestamps_are_normalised_to_utc_milliseconds(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Zonas");
    static const struct {
        const char *in, *start, *end, *fecha;
    } cases[] = {
        {"2031-05-04T12:30:00+02:00", "2031-05-04T10:30:00.000Z", "2031-05-04T11:00:00.000Z",
         "2031-05-04"},
        {"2031-05-05T05:00:00-05:30", "2031-05-05T10:30:00.000Z", "2031-05-05T11:00:00.000Z",
         "2031-05-05"},
        {"2031-05-06T10:30:00Z", "2031-05-06T10:30:00.000Z", "2031-05-06T11:00:00.000Z",
         "2031-05-06"},
        {"2031-05-07T10:30:00", "2031-05-07T10:30:00.000Z", "2031-05-07T11:00:00.000Z",
         "2031-05-07"},
        {"2031-05-08T01:15:00+03:00", "2031-05-07T22:15:00.000Z", "2031-05-07T22:45:00.000Z",
         "2031-05-07"},
        {"2031-05-09", "2031-05-09T00:00:00.000Z", "2031-05-09T00:30:00.000Z", "2031-05-09"},
        {"2031-05-10T10:30:00.123456Z", "2031-05-10T10:30:00.123Z", "2031-05-10T11:00:00.123Z",
         "2031-05-10"},
        {"2031-05-11T10:30:00.5Z", "2031-05-11T10:30:00.500Z", "2031-05-11T11:00:00.500Z",
         "2031-05-11"},
        {"2031-05-12T10:30:00.789+01:00", "2031-05-12T09:30:00.789Z", "2031-05-12T10:00:00.789Z",
         "2031-05-12"},
        {"2031-12-31T23:30:00-01:00", "2032-01-01T00:30:00.000Z", "2032-01-01T01:00:00.000Z",
         "2032-01-01"},
        {"2032-02-29T08:00:00Z", "2032-02-29T08:00:00.000Z", "2032-02-29T08:30:00.000Z",
         "2032-02-29"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *c = book_json(&U, barb, F.servicio, cases[i].in, NULL);
        if (strcmp(jstr(c, "fecha_inicio"), cases[i].start) ||
            strcmp(jstr(c, "fecha_fin"), cases[i].end))
            fail_msg("%s gave %s .. %s, expected %s .. %s", cases[i].in, jstr(c, "fecha_inicio"),
                     jstr(c, "fecha_fin"), cases[i].start, cases[i].end);
        /* stored in UTC, and the history record carries the UTC date */
        char *row = db_query(&F.s,
                             "SELECT c.fecha_inicio, c.fecha_fin, h.fecha FROM citas c "
                             "JOIN historial_cortes h ON h.cita_id = c.id WHERE c.id = '%s'",
                             jstr(c, "id"));
        char expect[128];
        snprintf(expect, sizeof expect, "%s\t%s\t%s", cases[i].start, cases[i].end, cases[i].fecha);
        assert_string_equal(row, expect);
        free(row);
        json_decref(c);
    }
    free(barb);
}

static void booking_writes_one_history_record(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Historial");
    json_t *c = book_json(&U, barb, F.servicio, "2031-07-20T23:50:00-02:00", NULL);
    const char *id = jstr(c, "id");
    char *row = db_query(&F.s,
                         "SELECT cliente_id, cita_id, barbero_id, servicio_id, fecha "
                         "FROM historial_cortes WHERE cita_id = '%s'",
                         id);
    char expect[256];
    snprintf(expect, sizeof expect, "%s\t%s\t%s\t%s\t2031-07-21", U.id, id, barb, F.servicio);
    assert_string_equal(row, expect);
    free(row);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE cita_id = '%s'", id), 1);
    /* refused bookings write no history */
    book_expect(&U, barb, F.servicio, "2031-07-21T01:55:00Z", 409, TAKEN);
    assert_int_equal(
        db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE barbero_id = '%s'", barb), 1);
    json_decref(c);
    free(barb);
}

static void a_user_without_a_profile_can_book(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Sin Perfil");
    char *out = db_query(&F.s, "DELETE FROM perfiles WHERE id = '%s'; SELECT changes();", u.id);
    assert_string_equal(out, "1");
    free(out);
    char *barb = make_barbero(&F.s, "Barbero Sin Perfil");
    json_t *c = book_json(&u, barb, F.servicio, "2031-08-01T10:00:00Z", NULL);
    assert_string_equal(jstr(c, "cliente_id"), u.id);
    /* their listing embeds a null perfil */
    json_t *list = get_citas(u.token, NULL);
    assert_int_equal(json_array_size(list), 1);
    json_t *e = json_array_get(list, 0);
    assert_string_equal(jstr(e, "id"), jstr(c, "id"));
    assert_true(json_is_null(json_object_get(e, "perfil")));
    json_decref(list);
    json_decref(c);
    free(barb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(post_without_session_is_401),
        cmocka_unit_test(post_with_garbage_token_is_401),
        cmocka_unit_test(post_with_logged_out_token_is_401),
        cmocka_unit_test(post_with_expired_session_is_401),
        cmocka_unit_test(unauthenticated_invalid_json_is_401_not_400),
        cmocka_unit_test(unauthenticated_oversized_body_is_401_not_413),
        cmocka_unit_test(body_that_is_not_a_json_object_is_400),
        cmocka_unit_test(body_over_64_kib_is_413_after_auth),
        cmocka_unit_test(each_required_field_absent_null_or_empty_is_400),
        cmocka_unit_test(missing_field_wins_over_unknown_ids_and_bad_fecha),
        cmocka_unit_test(unknown_servicio_is_404),
        cmocka_unit_test(unknown_servicio_wins_over_unknown_barbero_and_bad_fecha),
        cmocka_unit_test(bad_fecha_is_400_with_known_servicio_and_barbero),
        cmocka_unit_test(bad_fecha_wins_over_unknown_barbero),
        cmocka_unit_test(unknown_barbero_is_404),
        cmocka_unit_test(numbers_past_64_bits_or_a_double_are_json_not_400),
        cmocka_unit_test(non_string_notas_is_400_campo_invalido),
        cmocka_unit_test(created_cita_is_201_with_exactly_the_appointment_fields),
        cmocka_unit_test(ids_given_in_uppercase_are_found_and_stored_lowercase),
        cmocka_unit_test(notas_absent_null_or_empty_is_null),
        cmocka_unit_test(fecha_fin_is_fecha_inicio_plus_duracion_min),
        cmocka_unit_test(timestamps_are_normalised_to_utc_milliseconds),
        cmocka_unit_test(booking_writes_one_history_record),
        cmocka_unit_test(a_user_without_a_profile_can_book),
    };
    return cmocka_run_group_tests(tests, citas_group_setup, citas_group_teardown);
}
