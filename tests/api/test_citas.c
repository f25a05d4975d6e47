/*
 * test_citas.c - POST and GET /api/citas over HTTP against the real server:
 * the specification's processing order step by step (and which error wins
 * when two apply), the created appointment's exact shape and timestamps,
 * the history record, the overlap rule, who sees which appointments, and
 * parallel clients racing for one slot.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the server; its barber is one nobody books successfully (order tests),
 * its service lasts 30 minutes and costs 15.50 */
static struct fixture F;
static struct user U; /* a client with a profile name */

#define UNKNOWN_ID "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define NO_AUTH    "No autenticado"
#define FALTAN     "Faltan campos requeridos"
#define NO_SERV    "Servicio no encontrado"
#define NO_BARB    "Barbero no encontrado"
#define BAD_FECHA  "fecha_inicio inválida"
#define TAKEN      "El horario ya no está disponible"

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Orden", "Corte 30", 30, 15.5);
    signup_user(&F.s, &U, "Cliente Uno");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

static void post(const char *token, const char *body, struct resp *r)
{
    http_json(&F.s, "POST", "/api/citas", token, body, r);
}

/* POSTs and asserts the error answer. */
static void post_expect(const char *token, const char *body, long status, const char *msg)
{
    struct resp r;
    post(token, body, &r);
    if (r.status != status ||
        (msg && (!r.json || !jstr(r.json, "error") || strcmp(jstr(r.json, "error"), msg))))
        fprintf(stderr, "request body: %s\n", body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

/* A body with the three fields as raw JSON values (NULL: absent). */
static char *body3(const char *barbero_json, const char *servicio_json, const char *fecha_json,
                   const char *extra)
{
    char *b = NULL;
    int n = asprintf(&b, "{%s%s%s%s%s%s%s%s%s%s%s}", barbero_json ? "\"barbero_id\":" : "",
                     barbero_json ? barbero_json : "", barbero_json ? "," : "",
                     servicio_json ? "\"servicio_id\":" : "", servicio_json ? servicio_json : "",
                     servicio_json ? "," : "", fecha_json ? "\"fecha_inicio\":" : "",
                     fecha_json ? fecha_json : "", fecha_json ? "," : "", extra ? extra : "",
                     extra ? "," : "");
    assert_true(n > 0);
    /* drop the trailing comma */
    size_t len = strlen(b);
    if (len >= 2 && b[len - 2] == ',') {
        b[len - 2] = '}';
        b[len - 1] = '\0';
    }
    return b;
}

/* A JSON string literal of s. */
static char *q(const char *s)
{
    char *out = NULL;
    assert_true(asprintf(&out, "\"%s\"", s) > 0);
    return out;
}

static char *cita_body(const char *barbero, const char *servicio, const char *fecha)
{
    char *b = NULL;
    assert_true(asprintf(&b,
                         "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                         barbero, servicio, fecha) > 0);
    return b;
}

/* Books and returns the 201 answer's cita (a new reference). */
static json_t *book_json(const struct user *u, const char *barbero, const char *servicio,
                         const char *fecha, const char *extra)
{
    char *b = cita_body(barbero, servicio, fecha);
    if (extra) {
        b[strlen(b) - 1] = '\0';
        char *b2 = NULL;
        assert_true(asprintf(&b2, "%s,%s}", b, extra) > 0);
        free(b);
        b = b2;
    }
    struct resp r;
    post(u->token, b, &r);
    if (r.status != 201) fail_msg("expected 201 for %s, got %ld: %s", b, r.status, r.body);
    free(b);
    json_t *c = json_incref(json_object_get(r.json, "cita"));
    resp_free(&r);
    assert_non_null(c);
    return c;
}

static void book_expect(const struct user *u, const char *barbero, const char *servicio,
                        const char *fecha, long status, const char *msg)
{
    char *b = cita_body(barbero, servicio, fecha);
    post_expect(u->token, b, status, msg);
    free(b);
}

static json_t *get_citas(const char *token, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, "/api/citas%s", query ? query : "");
    struct resp r;
    http_get(&F.s, path, token, &r);
    if (r.status != 200) fail_msg("GET %s: %ld %s", path, r.status, r.body);
    expect_keys(r.json, "citas", NULL);
    json_t *list = json_incref(json_object_get(r.json, "citas"));
    resp_free(&r);
    assert_true(json_is_array(list));
    return list;
}

static bool list_has(const json_t *list, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (jstr(c, "id") && !strcmp(jstr(c, "id"), id)) return true;
    }
    return false;
}

static void assert_sorted_by_start(const json_t *list)
{
    for (size_t i = 1; i < json_array_size(list); i++) {
        const char *a = jstr(json_array_get(list, i - 1), "fecha_inicio");
        const char *b = jstr(json_array_get(list, i), "fecha_inicio");
        assert_non_null(a);
        assert_non_null(b);
        if (strcmp(a, b) > 0) fail_msg("not ascending: %s before %s", a, b);
    }
}

static void signup_with(struct user *u, const char *nombre, const char *telefono)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s}", "email", u->email, "password", u->password);
    if (nombre) json_object_set_new(b, "nombre", json_string(nombre));
    if (telefono) json_object_set_new(b, "telefono", json_string(telefono));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&F.s, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    snprintf(u->id, sizeof u->id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    snprintf(u->token, sizeof u->token, "%s", jstr(r.json, "token"));
    resp_free(&r);
}

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

/* --- 6. overlap ----------------------------------------------------------------------- */

static void overlapping_slot_of_the_same_barber_is_409(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Solape");
    char *s60 = make_servicio(&F.s, "Largo 60", 60, 30);
    char *s10 = make_servicio(&F.s, "Corto 10", 10, 5);
    json_t *c = book_json(&U, barb, F.servicio, "2031-09-01T10:00:00Z", NULL); /* 10:00-10:30 */
    struct user other;
    signup_user(&F.s, &other, "Otro Cliente");
    /* same start, inside, straddling either end, enclosing; any client */
    book_expect(&U, barb, F.servicio, "2031-09-01T10:00:00Z", 409, TAKEN);
    book_expect(&other, barb, F.servicio, "2031-09-01T10:00:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T10:15:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T09:45:00Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T10:29:59.999Z", 409, TAKEN);
    book_expect(&U, barb, F.servicio, "2031-09-01T09:30:00.001Z", 409, TAKEN);
    book_expect(&U, barb, s60, "2031-09-01T09:45:00Z", 409, TAKEN);
    book_expect(&U, barb, s10, "2031-09-01T10:10:00Z", 409, TAKEN);
    /* the same instant written with an offset */
    book_expect(&U, barb, F.servicio, "2031-09-01T12:15:00+02:00", 409, TAKEN);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb), 1);
    json_decref(c);
    free(barb);
    free(s60);
    free(s10);
}

static void touching_slots_are_free_on_both_sides(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Contiguo");
    json_t *mid = book_json(&U, barb, F.servicio, "2031-09-02T10:00:00Z", NULL);
    json_t *before = book_json(&U, barb, F.servicio, "2031-09-02T09:30:00Z", NULL);
    json_t *after = book_json(&U, barb, F.servicio, "2031-09-02T10:30:00Z", NULL);
    assert_string_equal(jstr(before, "fecha_fin"), jstr(mid, "fecha_inicio"));
    assert_string_equal(jstr(after, "fecha_inicio"), jstr(mid, "fecha_fin"));
    /* with an offset too */
    json_t *after2 = book_json(&U, barb, F.servicio, "2031-09-02T13:00:00+02:00", NULL);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb), 4);
    json_decref(mid);
    json_decref(before);
    json_decref(after);
    json_decref(after2);
    free(barb);
}

static void another_barber_never_conflicts(void **state)
{
    (void)state;
    char *b1 = make_barbero(&F.s, "Barbero Uno");
    char *b2 = make_barbero(&F.s, "Barbero Dos");
    char *b3 = make_barbero(&F.s, "Barbero Tres");
    json_t *c1 = book_json(&U, b1, F.servicio, "2031-09-03T10:00:00Z", NULL);
    /* the same slot and an overlapping one, each with another barber */
    json_t *c2 = book_json(&U, b2, F.servicio, "2031-09-03T10:00:00Z", NULL);
    json_t *c3 = book_json(&U, b3, F.servicio, "2031-09-03T09:45:00Z", NULL);
    /* while the first barber stays taken */
    book_expect(&U, b1, F.servicio, "2031-09-03T09:45:00Z", 409, TAKEN);
    json_decref(c1);
    json_decref(c2);
    json_decref(c3);
    free(b1);
    free(b2);
    free(b3);
}

static void cancelled_cita_does_not_block_its_slot(void **state)
{
    (void)state;
    char *barb = make_barbero(&F.s, "Barbero Cancelado");
    json_t *c = book_json(&U, barb, F.servicio, "2031-09-04T10:00:00Z", NULL);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    /* cancelled by someone else while serve runs */
    char *out = db_query(&F.s,
                         "UPDATE citas SET estado = 'cancelada' WHERE id = '%s'; "
                         "SELECT changes();",
                         jstr(c, "id"));
    assert_string_equal(out, "1");
    free(out);
    json_t *again = book_json(&U, barb, F.servicio, "2031-09-04T10:00:00Z", NULL);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:15:00Z", 409, TAKEN);
    /* any other estado still blocks */
    out =
        db_query(&F.s, "UPDATE citas SET estado = 'completada' WHERE id = '%s'; SELECT changes();",
                 jstr(again, "id"));
    assert_string_equal(out, "1");
    free(out);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    out = db_query(&F.s, "UPDATE citas SET estado = 'Cancelada' WHERE id = '%s'; SELECT changes();",
                   jstr(again, "id"));
    free(out);
    book_expect(&U, barb, F.servicio, "2031-09-04T10:00:00Z", 409, TAKEN);
    json_decref(again);
    json_decref(c);
    free(barb);
}

/* --- GET /api/citas --------------------------------------------------------------------- */

static void get_without_session_is_401(void **state)
{
    (void)state;
    struct resp r;
    http_get(&F.s, "/api/citas", NULL, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
    http_get(&F.s, "/api/citas?estado=confirmada", "garbage", &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
    struct req_opts o = {.cookie = "barberia_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"};
    http_req(&F.s, "GET", "/api/citas", &o, &r);
    expect_error(&r, 401, NO_AUTH);
    resp_free(&r);
}

static void client_sees_only_own_citas_by_start(void **state)
{
    (void)state;
    struct user a, b;
    signup_user(&F.s, &a, "Ana");
    signup_user(&F.s, &b, "Beto");
    char *barb = make_barbero(&F.s, "Barbero Listas");
    /* booked out of order; the offsets make the input text order differ from UTC order */
    json_t *a2 = book_json(&a, barb, F.servicio, "2031-10-02T10:00:00Z", NULL);
    json_t *b1 = book_json(&b, barb, F.servicio, "2031-10-01T12:00:00Z", NULL);
    json_t *a3 = book_json(&a, barb, F.servicio, "2031-10-02T13:00:00+02:00", NULL); /* 11:00Z */
    json_t *a1 = book_json(&a, barb, F.servicio, "2031-10-01T08:00:00Z", NULL);
    json_t *la = get_citas(a.token, NULL);
    assert_int_equal(json_array_size(la), 3);
    assert_string_equal(jstr(json_array_get(la, 0), "id"), jstr(a1, "id"));
    assert_string_equal(jstr(json_array_get(la, 1), "id"), jstr(a2, "id"));
    assert_string_equal(jstr(json_array_get(la, 2), "id"), jstr(a3, "id"));
    size_t i;
    json_t *e;
    json_array_foreach(la, i, e) assert_string_equal(jstr(e, "cliente_id"), a.id);
    json_t *lb = get_citas(b.token, NULL);
    assert_int_equal(json_array_size(lb), 1);
    assert_string_equal(jstr(json_array_get(lb, 0), "id"), jstr(b1, "id"));
    /* a client with no appointments gets an empty list */
    struct user c;
    signup_user(&F.s, &c, "Carla");
    json_t *lc = get_citas(c.token, NULL);
    assert_int_equal(json_array_size(lc), 0);
    json_decref(la);
    json_decref(lb);
    json_decref(lc);
    json_decref(a1);
    json_decref(a2);
    json_decref(a3);
    json_decref(b1);
    free(barb);
}

static void admin_and_barbero_roles_see_all_citas(void **state)
{
    (void)state;
    struct user a, b, admin, barbero, otro;
    signup_user(&F.s, &a, "Dario");
    signup_user(&F.s, &b, "Elena");
    make_user(&F.s, &admin, "Admin Citas", "admin");
    make_user(&F.s, &barbero, "Barbero Rol", "barbero");
    make_user(&F.s, &otro, "Rol Raro", "recepcion");
    char *barb = make_barbero(&F.s, "Barbero Todos");
    json_t *ca = book_json(&a, barb, F.servicio, "2031-10-05T10:00:00Z", NULL);
    json_t *cb = book_json(&b, barb, F.servicio, "2031-10-05T09:00:00Z", NULL);
    long total = db_count(&F.s, "SELECT count(*) FROM citas");
    const struct user *wide[] = {&admin, &barbero};
    for (int k = 0; k < 2; k++) {
        json_t *l = get_citas(wide[k]->token, NULL);
        assert_int_equal((long)json_array_size(l), total);
        assert_true(list_has(l, jstr(ca, "id")));
        assert_true(list_has(l, jstr(cb, "id")));
        assert_sorted_by_start(l);
        json_decref(l);
    }
    /* any other role is an ordinary client */
    json_t *l = get_citas(otro.token, NULL);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
    json_decref(ca);
    json_decref(cb);
    free(barb);
}

static void estado_filter_is_exact_and_empty_means_none(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Filtro");
    char *barb = make_barbero(&F.s, "Barbero Filtro");
    json_t *c1 = book_json(&u, barb, F.servicio, "2031-10-10T10:00:00Z", NULL);
    json_t *c2 = book_json(&u, barb, F.servicio, "2031-10-10T11:00:00Z", NULL);
    json_t *c3 = book_json(&u, barb, F.servicio, "2031-10-10T12:00:00Z", NULL);
    char *out = db_query(&F.s,
                         "UPDATE citas SET estado = 'cancelada' WHERE id = '%s'; "
                         "SELECT changes();",
                         jstr(c2, "id"));
    assert_string_equal(out, "1");
    free(out);
    json_t *l = get_citas(u.token, "?estado=confirmada");
    assert_int_equal(json_array_size(l), 2);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), jstr(c1, "id"));
    assert_string_equal(jstr(json_array_get(l, 1), "id"), jstr(c3, "id"));
    json_decref(l);
    l = get_citas(u.token, "?estado=cancelada");
    assert_int_equal(json_array_size(l), 1);
    assert_string_equal(jstr(json_array_get(l, 0), "id"), jstr(c2, "id"));
    assert_string_equal(jstr(json_array_get(l, 0), "estado"), "cancelada");
    json_decref(l);
    /* exact: no case folding, no prefixes, no trimming */
    const char *none[] = {"?estado=Confirmada", "?estado=confirm", "?estado=confirmada%20",
                          "?estado=xyz"};
    for (size_t i = 0; i < 4; i++) {
        l = get_citas(u.token, none[i]);
        assert_int_equal(json_array_size(l), 0);
        json_decref(l);
    }
    /* an empty estado is no filter */
    l = get_citas(u.token, "?estado=");
    assert_int_equal(json_array_size(l), 3);
    json_decref(l);
    l = get_citas(u.token, NULL);
    assert_int_equal(json_array_size(l), 3);
    json_decref(l);
    json_decref(c1);
    json_decref(c2);
    json_decref(c3);
    free(barb);
}

static void listed_citas_embed_perfil_barbero_and_servicio(void **state)
{
    (void)state;
    struct user u;
    signup_with(&u, "Fede Lista", "+34 600 111 222");
    char *out = NULL, *err = NULL;
    assert_int_equal(srv_cli(&F.s, &out, &err, "barbero", "add", "--nombre", "Barbero Foto",
                             "--foto-url", "https://img.example/b.jpg", NULL),
                     0);
    out[strcspn(out, "\n")] = '\0';
    char *barb = out;
    free(err);
    char *serv = make_servicio(&F.s, "Corte Lista", 45, 22.5);
    json_t *c = book_json(&u, barb, serv, "2031-11-01T10:00:00Z", "\"notas\":\"Nota lista\"");
    json_t *l = get_citas(u.token, NULL);
    assert_int_equal(json_array_size(l), 1);
    json_t *e = json_array_get(l, 0);
    expect_keys(e, "id", "cliente_id", "barbero_id", "servicio_id", "fecha_inicio", "fecha_fin",
                "estado", "notas", "google_event_id", "perfil", "barbero", "servicio", NULL);
    /* the appointment fields equal those of the creation answer */
    const char *same[] = {"id",           "cliente_id", "barbero_id", "servicio_id",
                          "fecha_inicio", "fecha_fin",  "estado",     "notas"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        assert_string_equal(jstr(e, same[i]), jstr(c, same[i]));
    assert_string_equal(jstr(e, "fecha_fin"), "2031-11-01T10:45:00.000Z");
    assert_true(json_is_null(json_object_get(e, "google_event_id")));
    json_t *p = json_object_get(e, "perfil");
    expect_keys(p, "nombre", "telefono", NULL);
    assert_string_equal(jstr(p, "nombre"), "Fede Lista");
    assert_string_equal(jstr(p, "telefono"), "+34 600 111 222");
    json_t *b = json_object_get(e, "barbero");
    expect_keys(b, "nombre", "foto_url", NULL);
    assert_string_equal(jstr(b, "nombre"), "Barbero Foto");
    assert_string_equal(jstr(b, "foto_url"), "https://img.example/b.jpg");
    json_t *s = json_object_get(e, "servicio");
    expect_keys(s, "nombre", "duracion_min", "precio", NULL);
    assert_string_equal(jstr(s, "nombre"), "Corte Lista");
    assert_true(json_is_integer(json_object_get(s, "duracion_min")));
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 45);
    assert_true(json_is_number(json_object_get(s, "precio")));
    assert_true(json_number_value(json_object_get(s, "precio")) == 22.5);
    json_decref(l);
    json_decref(c);

    /* null telefono, null foto_url, a whole-number price */
    struct user v;
    signup_with(&v, "Sin Telefono", NULL);
    char *barb2 = make_barbero(&F.s, "Barbero Sin Foto");
    char *serv2 = make_servicio(&F.s, "Corte Entero", 20, 12);
    c = book_json(&v, barb2, serv2, "2031-11-02T10:00:00Z", NULL);
    l = get_citas(v.token, NULL);
    assert_int_equal(json_array_size(l), 1);
    e = json_array_get(l, 0);
    assert_true(json_is_null(json_object_get(e, "notas")));
    p = json_object_get(e, "perfil");
    expect_keys(p, "nombre", "telefono", NULL);
    assert_true(json_is_null(json_object_get(p, "telefono")));
    b = json_object_get(e, "barbero");
    expect_keys(b, "nombre", "foto_url", NULL);
    assert_true(json_is_null(json_object_get(b, "foto_url")));
    s = json_object_get(e, "servicio");
    assert_true(json_is_number(json_object_get(s, "precio")));
    assert_true(json_number_value(json_object_get(s, "precio")) == 12.0);
    assert_true(json_is_integer(json_object_get(s, "duracion_min")));
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 20);
    json_decref(l);
    json_decref(c);
    free(barb);
    free(serv);
    free(barb2);
    free(serv2);
}

/* --- concurrency ------------------------------------------------------------------------ */

struct racer {
    const char *token;
    char *body;
    long status;     /* 0: the request failed (error says why) */
    char error[128]; /* the answer's body, or the transport failure */
};

/* One client of the race, from its own thread (race_threads: no cmocka). */
static void race(void *item)
{
    struct racer *x = item;
    struct req_opts o = {.token = x->token, .body = x->body};
    struct resp r;
    x->status = http_try(&F.s, "POST", "/api/citas", &o, &r);
    snprintf(x->error, sizeof x->error, "%s", r.body ? r.body : "");
    resp_free(&r);
}

#define RACERS 16

/* Runs n clients at once; each body books fechas[i] with the service. */
static void run_race(struct user *users, const char *barb, const char *serv,
                     const char *const *fechas, struct racer *x, int n)
{
    for (int i = 0; i < n; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].token = users[i].token;
        x[i].body = cita_body(barb, serv, fechas[i]);
    }
    race_threads((size_t)n, race, x, sizeof *x);
    for (int i = 0; i < n; i++) {
        free(x[i].body);
        if (x[i].status == 0) fail_msg("racer %d: %s", i, x[i].error);
    }
}

static struct user RU[RACERS];

static void make_racers(void)
{
    if (RU[0].token[0]) return;
    for (int i = 0; i < RACERS; i++)
        signup_user(&F.s, &RU[i], "Corredor");
}

static void parallel_clients_booking_one_slot_get_one_201(void **state)
{
    (void)state;
    make_racers();
    for (int round = 0; round < 5; round++) {
        char nombre[64];
        snprintf(nombre, sizeof nombre, "Barbero Carrera %d", round);
        char *barb = make_barbero(&F.s, nombre);
        const char *fechas[RACERS];
        for (int i = 0; i < RACERS; i++)
            fechas[i] = "2031-12-01T10:00:00Z";
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, fechas, x, RACERS);
        int created = 0, taken = 0;
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201) {
                created++;
            } else if (x[i].status == 409) {
                assert_string_equal(x[i].error, "{\"error\":\"" TAKEN "\"}");
                taken++;
            } else {
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
            }
        }
        assert_int_equal(created, 1);
        assert_int_equal(taken, RACERS - 1);
        assert_int_equal(db_count(&F.s,
                                  "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND "
                                  "fecha_inicio = '2031-12-01T10:00:00.000Z'",
                                  barb),
                         1);
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         1);
        assert_int_equal(
            db_count(&F.s, "SELECT count(*) FROM historial_cortes WHERE barbero_id = '%s'", barb),
            1);
        free(barb);
    }
}

static bool overlaps(int a_start, int a_len, int b_start, int b_len)
{
    return a_start < b_start + b_len && a_start + a_len > b_start;
}

static void parallel_overlapping_slots_leave_no_overlap(void **state)
{
    (void)state;
    make_racers();
    /* (a) six starts five minutes apart: all pairwise overlapping, one wins */
    {
        char *barb = make_barbero(&F.s, "Barbero Carrera Escalonada");
        static const char *const f6[] = {
            "2031-12-02T10:00:00Z",      "2031-12-02T10:05:00Z",      "2031-12-02T10:10:00Z",
            "2031-12-02T10:15:00Z",      "2031-12-02T10:20:00Z",      "2031-12-02T10:25:00Z",
            "2031-12-02T10:00:00Z",      "2031-12-02T10:05:00Z",      "2031-12-02T10:10:00Z",
            "2031-12-02T10:15:00Z",      "2031-12-02T10:20:00Z",      "2031-12-02T10:25:00Z",
            "2031-12-02T12:10:00+02:00", "2031-12-02T09:40:00-00:30", "2031-12-02T10:29:00Z",
            "2031-12-02T10:01:00Z",
        };
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, f6, x, RACERS);
        int created = 0;
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201)
                created++;
            else if (x[i].status != 409)
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
        }
        assert_int_equal(created, 1);
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         1);
        free(barb);
    }
    /* (b) a chain of starts 15 minutes apart (30-minute service), two clients per
     * start: whatever the order, the stored set never overlaps and every
     * refusal faced a stored appointment */
    for (int round = 0; round < 3; round++) {
        char nombre[64];
        snprintf(nombre, sizeof nombre, "Barbero Carrera Cadena %d", round);
        char *barb = make_barbero(&F.s, nombre);
        char fbuf[RACERS][32];
        const char *f[RACERS];
        int start_min[RACERS];
        for (int i = 0; i < RACERS; i++) {
            start_min[i] = 600 + (i % 8) * 15;
            snprintf(fbuf[i], sizeof fbuf[i], "2031-12-03T%02d:%02d:00Z", start_min[i] / 60,
                     start_min[i] % 60);
            f[i] = fbuf[i];
        }
        struct racer x[RACERS];
        run_race(RU, barb, F.servicio, f, x, RACERS);
        int created = 0;
        bool won[RACERS] = {false};
        for (int i = 0; i < RACERS; i++) {
            if (x[i].status == 201) {
                created++;
                won[i] = true;
            } else if (x[i].status != 409) {
                fail_msg("racer %d: unexpected %ld %s", i, x[i].status, x[i].error);
            }
        }
        /* the winners are pairwise free of overlap */
        for (int i = 0; i < RACERS; i++)
            for (int j = i + 1; j < RACERS; j++)
                if (won[i] && won[j] && overlaps(start_min[i], 30, start_min[j], 30))
                    fail_msg("both %s and %s were booked", f[i], f[j]);
        /* every loser overlaps a winner */
        for (int i = 0; i < RACERS; i++) {
            if (won[i]) continue;
            bool blocked = false;
            for (int j = 0; j < RACERS; j++)
                if (won[j] && overlaps(start_min[i], 30, start_min[j], 30)) blocked = true;
            if (!blocked) fail_msg("%s was refused though nothing overlapped it", f[i]);
        }
        assert_true(created >= 3); /* a maximal set of the chain holds at least 3 */
        assert_int_equal(db_count(&F.s, "SELECT count(*) FROM citas WHERE barbero_id = '%s'", barb),
                         created);
        assert_int_equal(
            db_count(&F.s,
                     "SELECT count(*) FROM citas a JOIN citas b ON a.id < b.id "
                     "AND a.barbero_id = b.barbero_id WHERE a.barbero_id = '%s' "
                     "AND a.fecha_inicio < b.fecha_fin AND a.fecha_fin > b.fecha_inicio",
                     barb),
            0);
        free(barb);
    }
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
        cmocka_unit_test(non_string_notas_is_400_campo_invalido),
        cmocka_unit_test(created_cita_is_201_with_exactly_the_appointment_fields),
        cmocka_unit_test(ids_given_in_uppercase_are_found_and_stored_lowercase),
        cmocka_unit_test(notas_absent_null_or_empty_is_null),
        cmocka_unit_test(fecha_fin_is_fecha_inicio_plus_duracion_min),
        cmocka_unit_test(timestamps_are_normalised_to_utc_milliseconds),
        cmocka_unit_test(booking_writes_one_history_record),
        cmocka_unit_test(a_user_without_a_profile_can_book),
        cmocka_unit_test(overlapping_slot_of_the_same_barber_is_409),
        cmocka_unit_test(touching_slots_are_free_on_both_sides),
        cmocka_unit_test(another_barber_never_conflicts),
        cmocka_unit_test(cancelled_cita_does_not_block_its_slot),
        cmocka_unit_test(get_without_session_is_401),
        cmocka_unit_test(client_sees_only_own_citas_by_start),
        cmocka_unit_test(admin_and_barbero_roles_see_all_citas),
        cmocka_unit_test(estado_filter_is_exact_and_empty_means_none),
        cmocka_unit_test(listed_citas_embed_perfil_barbero_and_servicio),
        cmocka_unit_test(parallel_clients_booking_one_slot_get_one_201),
        cmocka_unit_test(parallel_overlapping_slots_leave_no_overlap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
