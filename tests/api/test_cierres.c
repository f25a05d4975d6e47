/*
 * test_cierres.c - days off and closures that meet bookings, over HTTP
 * against the real server and the real SMTP sink: POST
 * /api/admin/ausencias answers with the appointments it falls on and
 * cancels none; POST /api/admin/ausencias/{id}/cancelar-citas cancels them
 * in one action, each as a staff cancel (estado, the freed slot, the
 * client's e-mail with the shop's message, the barber's notice), and a
 * second call cancels nothing more; bad input and other roles change
 * nothing.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MAIL_MS 60000
#define UNKNOWN_ID   "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define MENSAJE      "Cerramos por obras; perdona las molestias."

static struct srv S;
static struct smtp_sink K;
static char *BARBERO, *OTRO, *SERVICIO;
static struct user ANA, BEA, BARB, ADMIN;
static char BARB_MAIL[128];

static int group_setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_MIN_NOTICE_MIN=0", NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    OTRO = make_barbero(&S, "Luis");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    unique_email(BARB_MAIL, sizeof BARB_MAIL, "carlos");
    char body[200];
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", BARB_MAIL);
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s", BARBERO);
    struct resp r;
    http_json(&S, "PATCH", path, ADMIN.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    free(BARBERO);
    free(OTRO);
    free(SERVICIO);
    return 0;
}

/* 10:00 Madrid time (CEST: 08:00 UTC) plus hours on 2032-06-<day>. */
static char *book_on(const struct user *u, const char *barbero, int day, int hours)
{
    char f[32];
    int64_t ms = iso8601_days_from_civil(2032, 6, (unsigned)day) * 86400000LL + 8 * 3600000LL +
                 hours * 3600000LL;
    iso8601_format(ms, f);
    return book(&S, u, barbero, SERVICIO, f, NULL);
}

/* POSTs a day off (barbero NULL: a closure) of 2032-06-<d1> to <d2>: its answer. */
static void ausencia(const char *barbero, int d1, int d2, struct resp *r)
{
    char body[256];
    if (barbero)
        snprintf(body, sizeof body,
                 "{\"barbero_id\":\"%s\",\"desde\":\"2032-06-%02d\",\"hasta\":\"2032-06-%02d\","
                 "\"motivo\":\"Vacaciones\"}",
                 barbero, d1, d2);
    else
        snprintf(body, sizeof body, "{\"desde\":\"2032-06-%02d\",\"hasta\":\"2032-06-%02d\"}", d1,
                 d2);
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, r);
    if (r->status != 201) fail_msg("ausencia: %ld %s", r->status, r->body);
}

static bool listed(const json_t *arr, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        if (!strcmp(jstr(c, "id"), id)) return true;
    }
    return false;
}

static char *estado(const char *id)
{
    return db_query(&S, "SELECT estado FROM citas WHERE id = '%s'", id);
}

static void cancelar(const struct user *u, const char *id, const char *body, struct resp *r)
{
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/cancelar-citas", id);
    http_json(&S, "POST", path, u ? u->token : NULL, body, r);
}

static void a_day_off_answers_with_the_appointments_it_meets_and_cancels_none(void **state)
{
    (void)state;
    char *a = book_on(&ANA, BARBERO, 7, 0);
    char *b = book_on(&BEA, BARBERO, 8, 2);
    char *c = book_on(&BEA, OTRO, 7, 0);    /* another barber's */
    char *d = book_on(&BEA, BARBERO, 9, 0); /* the day after */
    struct resp r;
    ausencia(BARBERO, 7, 8, &r);
    expect_keys(r.json, "ausencia", "afectadas", NULL);
    json_t *af = json_object_get(r.json, "afectadas");
    assert_int_equal(json_array_size(af), 2);
    assert_true(listed(af, a) && listed(af, b));
    json_t *first = json_array_get(af, 0);
    expect_keys(first, "id", "barbero_id", "barbero_nombre", "fecha_inicio", "fecha_fin",
                "cliente_nombre", "servicio_nombre", "cliente_telefono", "avisable", NULL);
    assert_string_equal(jstr(first, "id"), a);                     /* by start */
    assert_true(json_is_true(json_object_get(first, "avisable"))); /* by e-mail */
    assert_true(json_is_null(json_object_get(first, "cliente_telefono")));
    assert_string_equal(jstr(first, "cliente_nombre"), "Ana Pérez");
    assert_string_equal(jstr(first, "servicio_nombre"), "Corte clásico");
    /* nothing cancelled by adding it */
    char *e = estado(a);
    assert_string_equal(e, "confirmada");
    free(e);
    /* the same list on demand */
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/citas",
             jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    http_get(&S, path, ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "afectadas")), 2);
    resp_free(&r);
    /* a closure of the shop meets every barber's */
    ausencia(NULL, 7, 7, &r);
    af = json_object_get(r.json, "afectadas");
    assert_int_equal(json_array_size(af), 2);
    assert_true(listed(af, a) && listed(af, c));
    resp_free(&r);
    /* a client the desk booked with a phone only: the shop must call her */
    char body[512];
    int64_t ms = iso8601_days_from_civil(2032, 6, 10) * 86400000LL + 8 * 3600000LL;
    char f[32];
    iso8601_format(ms, f);
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
             "\"fuera_de_horario\":true,\"cliente\":{\"nombre\":\"Rosa Sin Correo\","
             "\"telefono\":\"+34 600 000 001\"}}",
             BARBERO, SERVICIO, f);
    http_json(&S, "POST", "/api/agenda/citas", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    ausencia(BARBERO, 10, 10, &r);
    af = json_object_get(r.json, "afectadas");
    assert_int_equal(json_array_size(af), 1);
    assert_true(json_is_false(json_object_get(json_array_get(af, 0), "avisable")));
    assert_string_equal(jstr(json_array_get(af, 0), "cliente_telefono"), "+34 600 000 001");
    /* and so does the answer of cancelling them */
    char cpath[160];
    snprintf(cpath, sizeof cpath, "/api/admin/ausencias/%s/cancelar-citas",
             jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    http_json(&S, "POST", cpath, ADMIN.token, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *cx = json_array_get(json_object_get(r.json, "canceladas"), 0);
    assert_string_equal(jstr(cx, "cliente_telefono"), "+34 600 000 001");
    assert_true(json_is_false(json_object_get(cx, "avisable")));
    resp_free(&r);
    free(a);
    free(b);
    free(c);
    free(d);
}

static json_t *the_mail_with(json_t *all, const char *subject)
{
    size_t i;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        if (strstr(jstr(m, "subject"), subject)) return m;
    }
    fail_msg("no mail \"%s\"", subject);
    return NULL;
}

static void one_action_cancels_them_with_the_shops_message_once(void **state)
{
    (void)state;
    char *a = book_on(&ANA, BARBERO, 14, 0);
    char *b = book_on(&BEA, BARBERO, 14, 3);
    char *c = book_on(&BEA, OTRO, 14, 0);
    struct resp r;
    ausencia(BARBERO, 14, 14, &r);
    char *aid = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);

    cancelar(&ADMIN, aid, "{\"mensaje\":\"" MENSAJE "\"}", &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "canceladas", NULL);
    json_t *cc = json_object_get(r.json, "canceladas");
    assert_int_equal(json_array_size(cc), 2);
    assert_true(listed(cc, a) && listed(cc, b));
    resp_free(&r);
    char *e = estado(a);
    assert_string_equal(e, "cancelada");
    free(e);
    e = estado(c);
    assert_string_equal(e, "confirmada");
    free(e);
    /* the slot is free again, as after any cancel */
    char *again = book_on(&BEA, BARBERO, 14, 0);
    free(again);

    /* the client's mail says why, with the message; the barber's notice
     * removes the event */
    if (!smtp_sink_wait_messages(&K, ANA.email, a, 2, WAIT_MAIL_MS))
        fail_msg("the client's mails did not arrive");
    json_t *all = smtp_sink_messages(&K, ANA.email, a);
    json_t *m = the_mail_with(all, "Cita cancelada");
    assert_int_equal(json_array_size(json_object_get(m, "problems")), 0);
    assert_non_null(strstr(jstr(m, "text"), "no podremos atenderte"));
    assert_non_null(strstr(jstr(m, "text"), MENSAJE));
    json_decref(all);
    if (!smtp_sink_wait_messages(&K, BARB_MAIL, a, 2, WAIT_MAIL_MS))
        fail_msg("the barber's mails did not arrive");
    all = smtp_sink_messages(&K, BARB_MAIL, a);
    m = the_mail_with(all, "Cita cancelada");
    json_decref(all);

    /* again: nothing more, nothing new queued */
    long queued = db_count(&S, "SELECT count(*) FROM mail_outbox");
    cancelar(&ADMIN, aid, "{\"mensaje\":\"" MENSAJE "\"}", &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "canceladas")), 1); /* the new one */
    resp_free(&r);
    cancelar(&ADMIN, aid, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "canceladas")), 0);
    resp_free(&r);
    assert_true(db_count(&S, "SELECT count(*) FROM mail_outbox") >= queued);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                              "kind = 'cierre'",
                              a),
                     1);
    free(aid);
    free(a);
    free(b);
    free(c);
}

/* In a zone whose clocks skip midnight (America/Santiago: 2032-09-05
 * begins at 01:00), a day off still meets its appointments: its window
 * starts, or ends, at the first minute of the day that exists. */
static void a_day_off_meets_its_appointments_where_midnight_is_skipped(void **state)
{
    (void)state;
    struct srv t = {0};
    srv_init(&t);
    const char *env[] = {"BARBERIA_TZ=America/Santiago", "BARBERIA_MIN_NOTICE_MIN=0", NULL};
    srv_start(&t, env, NULL);
    char *barb = make_barbero(&t, "Barbero Santiago");
    char *serv = make_servicio(&t, "Corte", 30, 10.0);
    struct user ana, admin;
    signup_user(&t, &ana, "Ana Santiago");
    make_user(&t, &admin, "Admin Santiago", "admin");
    char *sabado = book(&t, &ana, barb, serv, "2032-09-04T14:00:00.000Z", NULL); /* 10:00 -04 */
    char *lunes = book(&t, &ana, barb, serv, "2032-09-06T13:00:00.000Z", NULL);  /* 10:00 -03 */
    /* the Saturday before: its window ends where the Sunday begins */
    struct resp r;
    http_json(&t, "POST", "/api/admin/ausencias", admin.token,
              "{\"desde\":\"2032-09-04\",\"hasta\":\"2032-09-04\"}", &r);
    assert_int_equal(r.status, 201);
    json_t *af = json_object_get(r.json, "afectadas");
    assert_int_equal(json_array_size(af), 1);
    assert_true(listed(af, sabado));
    resp_free(&r);
    /* from the skipped midnight on: its window starts at 01:00 */
    http_json(&t, "POST", "/api/admin/ausencias", admin.token,
              "{\"desde\":\"2032-09-05\",\"hasta\":\"2032-09-06\"}", &r);
    assert_int_equal(r.status, 201);
    af = json_object_get(r.json, "afectadas");
    assert_int_equal(json_array_size(af), 1);
    assert_true(listed(af, lunes));
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/cancelar-citas",
             jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    http_json(&t, "POST", path, admin.token, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_true(listed(json_object_get(r.json, "canceladas"), lunes));
    resp_free(&r);
    char *e = db_query(&t, "SELECT estado FROM citas WHERE id = '%s'", lunes);
    assert_string_equal(e, "cancelada");
    free(e);
    free(sabado);
    free(lunes);
    free(barb);
    free(serv);
    srv_cleanup(&t);
}

static void bad_input_and_other_roles_cancel_nothing(void **state)
{
    (void)state;
    char *a = book_on(&ANA, BARBERO, 21, 0);
    struct resp r;
    ausencia(BARBERO, 21, 21, &r);
    char *aid = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    char *longer = malloc(1100);
    memset(longer, 'x', 1001);
    longer[1001] = '\0';
    char *body = NULL;
    if (asprintf(&body, "{\"mensaje\":\"%s\"}", longer) < 0) fail_msg("asprintf");
    cancelar(&ADMIN, aid, body, &r);
    expect_error(&r, 400, "Campo inválido: mensaje");
    resp_free(&r);
    free(body);
    free(longer);
    cancelar(&ADMIN, aid, "{\"mensaje\":7}", &r);
    expect_error(&r, 400, "Campo inválido: mensaje");
    resp_free(&r);
    cancelar(&ADMIN, aid, "[1]", &r);
    expect_error(&r, 400, "JSON inválido");
    resp_free(&r);
    cancelar(&ADMIN, UNKNOWN_ID, "{}", &r);
    expect_error(&r, 404, "Ausencia no encontrada");
    resp_free(&r);
    cancelar(&ADMIN, "no-uuid", "{}", &r);
    expect_error(&r, 404, "Ausencia no encontrada");
    resp_free(&r);
    cancelar(&ANA, aid, "{}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    cancelar(&BARB, aid, "{}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    cancelar(NULL, aid, "{}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/citas", aid);
    http_get(&S, path, ANA.token, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    char *e = estado(a);
    assert_string_equal(e, "confirmada");
    free(e);
    free(aid);
    free(a);
}

/* A long closure of a busy barber: more appointments than one listing
 * holds (CIERRES_MAX, 500). One action cancels every one of them, not the
 * first 500 only (it used to answer 500 and leave the rest booked on the
 * closed days, the admin told all was done). */
static void one_action_cancels_every_one_of_a_long_closure(void **state)
{
    (void)state;
    struct user carmen;
    signup_user(&S, &carmen, "Carmen Larga");
    enum { N = 505 };
    /* half-hour appointments back to back from 2032-09-01 00:00 UTC (02:00
     * Madrid): ten and a half days of the barber without e-mail */
    int64_t t0 = iso8601_days_from_civil(2032, 9, 1) * 86400000LL;
    char *first = NULL, *last = NULL;
    for (int k = 0; k < N; k++) {
        char f[32];
        iso8601_format(t0 + (int64_t)k * 30 * 60000, f);
        char *id = book(&S, &carmen, OTRO, SERVICIO, f, NULL);
        if (k == 0)
            first = id;
        else if (k == N - 1)
            last = id;
        else
            free(id);
    }
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"desde\":\"2032-09-01\",\"hasta\":\"2032-09-12\"}", OTRO);
    struct resp r;
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    assert_int_equal(json_array_size(json_object_get(r.json, "afectadas")), 500); /* listed: 500 */
    char *aid = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);

    cancelar(&ADMIN, aid, "{\"mensaje\":\"" MENSAJE "\"}", &r);
    assert_int_equal(r.status, 200);
    json_t *cc = json_object_get(r.json, "canceladas");
    assert_int_equal(json_array_size(cc), N);
    assert_true(listed(cc, first) && listed(cc, last));
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND estado = "
                              "'confirmada' AND fecha_inicio >= '2032-09-01'",
                              OTRO),
                     0);
    char *e = estado(last);
    assert_string_equal(e, "cancelada");
    free(e);
    /* nothing left for the closure, and again: nothing more */
    char path[160];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s/citas", aid);
    http_get(&S, path, ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "afectadas")), 0);
    resp_free(&r);
    cancelar(&ADMIN, aid, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "canceladas")), 0);
    resp_free(&r);
    free(aid);
    free(first);
    free(last);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_day_off_answers_with_the_appointments_it_meets_and_cancels_none),
        cmocka_unit_test(one_action_cancels_them_with_the_shops_message_once),
        cmocka_unit_test(bad_input_and_other_roles_cancel_nothing),
        cmocka_unit_test(a_day_off_meets_its_appointments_where_midnight_is_skipped),
        cmocka_unit_test(one_action_cancels_every_one_of_a_long_closure),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
