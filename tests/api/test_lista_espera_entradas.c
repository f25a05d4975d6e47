/*
 * test_lista_espera_entradas.c - the waiting list over HTTP against the real
 * server, the real SMTP sink and the strict double of WhatsApp's Graph API
 * (lista_espera_fixture.h): POST, GET and DELETE /api/lista-espera with every
 * error and bound, a client's entries reachable by her alone, the notice when
 * a cancel, a reschedule, a closure removed or wider hours free a fitting
 * slot, its link opening the booking on that slot, the first to book getting
 * it, and past entries neither listed nor kept. How the notices go is
 * test_lista_espera_avisos.c's.
 */
#define _GNU_SOURCE
#include "lista_espera_fixture.h"

#include "wa_sink.h"
#include "util/iso8601.h"
#include "util/tz.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- the tests -------------------------------------------------------------------------- */

static void adding_checks_every_field_and_bound(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    char *barbero = make_barbero(&S, "Carlos Méndez");
    char d[11], body[300];
    weekday_utc(0, d);
    struct resp r;
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"}", SERVICIO, d);
    pedir(NULL, body, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    const struct {
        const char *body;
        long status;
        const char *msg;
    } bad[] = {
        {"{}", 400, "Faltan campos requeridos"},
        {"{\"fecha\":\"2030-01-01\"}", 400, "Faltan campos requeridos"},
        {"{\"servicio_id\":\"x\",\"fecha\":\"mañana\"}", 400, "fecha inválida"},
        {"{\"servicio_id\":\"x\",\"fecha\":\"2020-01-01\"}", 400, "La fecha ya pasó"},
        {"{\"servicio_id\":\"x\",\"fecha\":\"2099-01-01\"}", 400,
         "Fecha fuera del plazo de reserva"},
        {"{\"servicio_id\":\"x\",\"fecha\":7}", 400, "Campo inválido: fecha"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pedir(&ana, bad[i].body, &r);
        expect_error(&r, bad[i].status, bad[i].msg);
        resp_free(&r);
    }
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"}",
             "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab", d);
    pedir(&ana, body, &r);
    expect_error(&r, 404, "Servicio no encontrado");
    resp_free(&r);
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"barbero_id\":\"%s\"}",
             SERVICIO, d, "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab");
    pedir(&ana, body, &r);
    expect_error(&r, 404, "Barbero no encontrado");
    resp_free(&r);
    assert_int_equal(listed(&ana, NULL), 0);
    /* one per service, day and barber */
    char *id = pedir_ok(&ana, SERVICIO, d, barbero);
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"barbero_id\":\"%s\"}",
             SERVICIO, d, barbero);
    pedir(&ana, body, &r);
    expect_error(&r, 409, "Ya estás en la lista de espera de ese día");
    resp_free(&r);
    free(pedir_ok(&ana, SERVICIO, d, NULL)); /* any barber: another entry */
    /* at most 10 */
    for (int i = 1; i < 9; i++) {
        char e[11];
        weekday_utc(i, e);
        free(pedir_ok(&ana, SERVICIO, e, NULL));
    }
    assert_int_equal(listed(&ana, NULL), 10);
    char e[11];
    weekday_utc(9, e);
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"}", SERVICIO, e);
    pedir(&ana, body, &r);
    expect_error(&r, 400, "Máximo de avisos alcanzado");
    resp_free(&r);
    assert_int_equal(listed(&ana, NULL), 10);
    /* removing one makes room */
    char path[100];
    snprintf(path, sizeof path, "/api/lista-espera/%s", id);
    http_json(&S, "DELETE", path, ana.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(pedir_ok(&ana, SERVICIO, e, NULL));
    free(id);
    free(barbero);
}

static void a_client_reaches_only_her_own_entries(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char d[11];
    weekday_utc(1, d);
    char *id = pedir_ok(&ana, SERVICIO, d, NULL);
    assert_int_equal(listed(&ana, id), 1);
    assert_int_equal(listed(&bea, NULL), 0);
    char path[100];
    snprintf(path, sizeof path, "/api/lista-espera/%s", id);
    struct resp r;
    http_json(&S, "DELETE", path, bea.token, NULL, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    http_json(&S, "DELETE", path, NULL, NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    http_json(&S, "DELETE", "/api/lista-espera/no-es-un-id", ana.token, NULL, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    http_get(&S, "/api/lista-espera", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    assert_int_equal(listed(&ana, id), 1);
    http_json(&S, "DELETE", path, ana.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_json(&S, "DELETE", path, ana.token, NULL, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    assert_int_equal(listed(&ana, NULL), 0);
    free(id);
}

/* How many entries u has (GET /api/lista-espera). */
static size_t entries_of(const struct user *u)
{
    struct resp r;
    http_get(&S, "/api/lista-espera", u->token, &r);
    assert_int_equal(r.status, 200);
    size_t n = json_array_size(json_object_get(r.json, "entradas"));
    resp_free(&r);
    return n;
}

static void a_cancel_tells_the_waiting_and_the_first_to_book_gets_the_slot(void **state)
{
    (void)state;
    struct user ana, bea, cris;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    signup_user(&S, &cris, "Cris Gil");
    char *barbero = make_barbero(&S, "Dani Sol");
    char d[11], ten[32];
    weekday_utc(2, d);
    at(d, "10:00", ten);
    char *cita = book(&S, &ana, barbero, SERVICIO, ten, NULL);
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    char *ec = pedir_ok(&cris, SERVICIO, d, NULL);
    assert_int_equal(notices_to(&bea) + notices_to(&cris), 0);
    char path[120];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", cita);
    struct resp r;
    http_json(&S, "POST", path, ana.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* both are told at once, of the time given up */
    char ib[ISO8601_LEN + 1], ic[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, ib);
    assert_string_equal(ib, ten);
    notice_link(&cris, barbero, d, ic);
    assert_string_equal(ib, ic);
    /* the first to book it gets it; the other finds it gone */
    char *got = book(&S, &bea, barbero, SERVICIO, ib, NULL);
    /* and waits no more for that day: her entry went with the booking */
    assert_int_equal(entries_of(&bea), 0);
    assert_int_equal(entries_of(&cris), 1);
    json_t *b = json_pack("{s:s, s:s, s:s}", "barbero_id", barbero, "servicio_id", SERVICIO,
                          "fecha_inicio", ic);
    char *body = json_dumps(b, 0);
    http_json(&S, "POST", "/api/citas", cris.token, body, &r);
    expect_error(&r, 409, "El horario ya no está disponible");
    resp_free(&r);
    free(body);
    json_decref(b);
    /* one notice each for one freed slot, however often it frees */
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", got);
    http_json(&S, "POST", path, bea.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(notices_to(&bea), 1);
    assert_int_equal(notices_to(&cris), 1);
    /* her data names the notice's entry, not an appointment */
    http_get(&S, "/api/auth/me/datos", cris.token, &r);
    assert_int_equal(r.status, 200);
    size_t i, found = 0;
    json_t *m;
    json_array_foreach(json_object_get(r.json, "mensajes"), i, m)
    {
        if (strcmp(jstr(m, "tipo"), "aviso_espera")) continue;
        found++;
        assert_true(json_is_null(json_object_get(m, "cita_id")));
        assert_string_equal(jstr(m, "lista_espera_id"), ec);
    }
    assert_int_equal(found, 1);
    resp_free(&r);
    free(got);
    free(eb);
    free(ec);
    free(cita);
    free(barbero);
}

/* Moving her appointment onto the day she waits for answers her entry, as
 * booking it does: she is told of that day's freed slots no more. */
static void a_reschedule_onto_her_waiting_day_ends_her_entry(void **state)
{
    (void)state;
    struct user eli;
    signup_user(&S, &eli, "Eli Mora");
    char *barbero = make_barbero(&S, "Fran Luz");
    char d1[11], d2[11], ten[32], eleven[32];
    weekday_utc(1, d1);
    weekday_utc(3, d2);
    at(d1, "10:00", ten);
    at(d2, "11:00", eleven);
    char *cita = book(&S, &eli, barbero, SERVICIO, ten, NULL);
    char *mine = pedir_ok(&eli, SERVICIO, d2, barbero);
    char *other = pedir_ok(&eli, SERVICIO, d1, NULL); /* another day: stays */
    assert_int_equal(entries_of(&eli), 2);
    char path[120], body[160];
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", cita);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", eleven);
    struct resp r;
    http_json(&S, "POST", path, eli.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(entries_of(&eli), 1);
    http_get(&S, "/api/lista-espera", eli.token, &r);
    json_t *left = json_array_get(json_object_get(r.json, "entradas"), 0);
    assert_non_null(left);
    assert_string_equal(jstr(left, "id"), other);
    resp_free(&r);
    free(other);
    free(mine);
    free(cita);
    free(barbero);
}

static void a_removed_closure_and_a_reschedule_tell_the_waiting(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char *barbero = make_barbero(&S, "Eva Luz");
    char d[11], e[11];
    weekday_utc(3, d);
    weekday_utc(4, e);
    /* the barber's day off on d, then removed */
    char body[200];
    snprintf(body, sizeof body, "{\"barbero_id\":\"%s\",\"desde\":\"%s\",\"hasta\":\"%s\"}",
             barbero, d, d);
    struct resp r;
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    char *aus = strdup(jstr(json_object_get(r.json, "ausencia"), "id"));
    resp_free(&r);
    free(pedir_ok(&bea, SERVICIO, d, barbero));
    assert_int_equal(notices_to(&bea), 0);
    char path[120];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", aus);
    http_json(&S, "DELETE", path, ADMIN.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char inicio[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, inicio);
    assert_int_equal(memcmp(inicio, d, 10), 0);
    /* a reschedule frees the old time */
    struct user cris;
    signup_user(&S, &cris, "Cris Gil");
    char ten[32], five[32];
    at(e, "10:00", ten);
    at(e, "17:00", five);
    char *cita = book(&S, &ana, barbero, SERVICIO, ten, NULL);
    free(pedir_ok(&cris, SERVICIO, e, barbero));
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", cita);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%s\"}", five);
    http_json(&S, "POST", path, ana.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    notice_link(&cris, barbero, e, inicio);
    assert_int_equal(memcmp(inicio, e, 10), 0);
    free(cita);
    free(aus);
    free(barbero);
}

/* A barber's hours widened (replaced: every date ahead) tell whoever waits
 * for a day they now reach. */
static void wider_hours_tell_the_waiting(void **state)
{
    (void)state;
    struct user dana;
    signup_user(&S, &dana, "Dana Gil");
    char *barbero = make_barbero(&S, "Hugo Sol");
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", barbero);
    struct resp r;
    http_json(&S, "PUT", path, ADMIN.token, "{\"horario\":[]}", &r); /* never works */
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char d[11];
    weekday_utc(2, d);
    free(pedir_ok(&dana, SERVICIO, d, barbero));
    assert_int_equal(notices_to(&dana), 0);
    /* every day, 09:00 to 20:00 in the shop's zone */
    char week[600];
    size_t len = (size_t)snprintf(week, sizeof week, "{\"horario\":[");
    for (int dia = 1; dia <= 7; dia++)
        len += (size_t)snprintf(week + len, sizeof week - len,
                                "%s{\"dia\":%d,\"inicio\":\"09:00\",\"fin\":\"20:00\"}",
                                dia > 1 ? "," : "", dia);
    snprintf(week + len, sizeof week - len, "]}");
    http_json(&S, "PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char inicio[ISO8601_LEN + 1];
    notice_link(&dana, barbero, d, inicio);
    assert_int_equal(notices_to(&dana), 1);
    /* the same hours again, or fewer, free nothing: nobody is told (her
     * day's first free slot would now be another, 10:00) */
    http_json(&S, "PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    for (char *p = week; (p = strstr(p, "09:00")) != NULL; p += 5)
        memcpy(p, "10:00", 5);
    http_json(&S, "PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    sleep_ms(2000);
    assert_int_equal(notices_to(&dana), 1);
    free(barbero);
}

/* Every freed slot recorded has been told (and removed). */
static bool all_told(void *ud)
{
    (void)ud;
    return db_count(&S, "SELECT count(*) FROM espera_liberaciones") == 0;
}

/* The ISO weekday (1 Monday .. 7 Sunday) of a date YYYY-MM-DD. */
static int iso_dia(const char *fecha)
{
    struct tz_date d;
    assert_true(tz_date_parse(fecha, &d));
    return tz_iso_weekday(&d);
}

/* New hours tell those who wait on the days of the week they widen, not
 * those who wait on a day whose hours stayed as they were. */
static void new_hours_tell_only_the_days_they_widen(void **state)
{
    (void)state;
    struct user eva, fede;
    signup_user(&S, &eva, "Eva Luna");
    signup_user(&S, &fede, "Fede Mar");
    char *barbero = make_barbero(&S, "Iris Paz");
    char path[128], d1[11], d2[11], week[300];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", barbero);
    weekday_utc(3, d1);
    weekday_utc(4, d2);
    assert_int_not_equal(iso_dia(d1), iso_dia(d2));
    /* an hour on d1's day of the week, none on d2's */
    snprintf(week, sizeof week,
             "{\"horario\":[{\"dia\":%d,\"inicio\":\"09:00\",\"fin\":\"10:00\"}]}", iso_dia(d1));
    struct resp r;
    http_json(&S, "PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *ee = pedir_ok(&eva, SERVICIO, d1, barbero); /* a day with free time, as it stays */
    char *ef = pedir_ok(&fede, SERVICIO, d2, barbero);
    /* d2's day gets an hour, d1's stays the same */
    snprintf(week, sizeof week,
             "{\"horario\":[{\"dia\":%d,\"inicio\":\"09:00\",\"fin\":\"10:00\"},"
             "{\"dia\":%d,\"inicio\":\"09:00\",\"fin\":\"10:00\"}]}",
             iso_dia(d1), iso_dia(d2));
    http_json(&S, "PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char inicio[ISO8601_LEN + 1];
    notice_link(&fede, barbero, d2, inicio);
    if (!wait_until(all_told, NULL, WAIT_MAIL_MS)) fail_msg("freed days left untold");
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "cita_id = '%s'",
                              ee),
                     0);
    free(ee);
    free(ef);
    free(barbero);
}

static bool entry_gone(void *ud)
{
    return db_count(&S, "SELECT count(*) FROM lista_espera WHERE id = '%s'", (const char *)ud) == 0;
}

static void past_entries_are_neither_listed_nor_kept(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    char d[11];
    weekday_utc(0, d);
    char *id = pedir_ok(&ana, SERVICIO, d, NULL);
    /* the day passes (the entry is moved to yesterday) */
    char ayer[ISO8601_LEN + 1];
    iso8601_format(clock_now_ms() - 86400000LL, ayer);
    ayer[10] = '\0';
    char sql[300];
    snprintf(sql, sizeof sql, "UPDATE lista_espera SET fecha = '%s' WHERE id = '%s'", ayer, id);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    assert_int_equal(listed(&ana, id), 0);
    /* and the sweeper removes it */
    if (!wait_until(entry_gone, id, 30000)) fail_msg("the past entry was not swept");
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adding_checks_every_field_and_bound),
        cmocka_unit_test(a_client_reaches_only_her_own_entries),
        cmocka_unit_test(a_cancel_tells_the_waiting_and_the_first_to_book_gets_the_slot),
        cmocka_unit_test(a_reschedule_onto_her_waiting_day_ends_her_entry),
        cmocka_unit_test(a_removed_closure_and_a_reschedule_tell_the_waiting),
        cmocka_unit_test(wider_hours_tell_the_waiting),
        cmocka_unit_test(new_hours_tell_only_the_days_they_widen),
        cmocka_unit_test(past_entries_are_neither_listed_nor_kept),
        /* last: they restart the server with quiet hours */
    };
    return cmocka_run_group_tests(tests, lista_espera_group_setup, lista_espera_group_teardown);
}
