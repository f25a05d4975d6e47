/*
 * test_mostrador_reservas.c - the front desk's bookings over HTTP against
 * the real server (on SQLite + folder, and again on PostgreSQL + S3): POST
 * /api/agenda/citas (an existing client, a new one with or without an
 * e-mail, a walk-in, working hours and closures), the account a desk client
 * claims at sign-up and cannot sign in to before, POST
 * /api/citas/{id}/asistencia (mark, undo the same day, refusals), the counts
 * staff see, permissions, bad input with nothing changed, a race of desk
 * bookings and POST /api/citas for one slot, and the clean-up margins.
 * Finding a client is test_mostrador_clientes.c's.
 */
#define _GNU_SOURCE
#include "mostrador_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- tests -------------------------------------------------------------------------- */

static void without_a_session_401_and_a_client_403(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/clientes", NULL, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    desk(NULL, "{}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    asistencia_expect(NULL, UNKNOWN_ID, "completada", 401, "No autenticado");

    long users = db_count(&S, "SELECT count(*) FROM auth_users");
    long citas = db_count(&S, "SELECT count(*) FROM citas");
    http_get(&S, "/api/clientes?q=ana", ANA.token, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    http_get(&S, "/api/clientes?limit=banana", ANA.token, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    char fecha[ISO8601_LEN + 1];
    next_slot(fecha);
    char *b = body_new("{\"nombre\":\"Intrusa\",\"telefono\":\"600111222\"}", fecha, NULL);
    desk(&ANA, b, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    free(b);
    char *mine = book(&S, &ANA, BARBERO, SERVICIO, "2031-01-06T10:00:00Z", NULL);
    asistencia_expect(&ANA, mine, "completada", 403, "Sin permisos");
    /* before her body is judged, however it is malformed */
    static const char *const bad_bodies[] = {"garbage", "[]", "{\"notas\":5}", "{\"cliente\":5}",
                                             "{\"estado\":5}"};
    char apath[160];
    snprintf(apath, sizeof apath, "/api/citas/%s/asistencia", mine);
    for (size_t i = 0; i < sizeof bad_bodies / sizeof bad_bodies[0]; i++) {
        desk(&ANA, bad_bodies[i], &r);
        expect_error(&r, 403, "Sin permisos");
        resp_free(&r);
        http_json(&S, "POST", apath, ANA.token, bad_bodies[i], &r);
        expect_error(&r, 403, "Sin permisos");
        resp_free(&r);
    }
    free(mine);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas"), citas + 1);
}

static void bad_input_is_400_or_404_and_changes_nothing(void **state)
{
    (void)state;
    long users = db_count(&S, "SELECT count(*) FROM auth_users");
    long citas = db_count(&S, "SELECT count(*) FROM citas");
    char fecha[ISO8601_LEN + 1];
    next_slot(fecha);
    struct {
        const char *body;
        long status;
        const char *msg;
    } cases[] = {
        {"{}", 400, "Faltan campos requeridos"},
        {"{\"cliente\":{\"nombre\":\"X\",\"telefono\":\"600\"}}", 400, "Faltan campos requeridos"},
        {NULL, 400, "Faltan campos requeridos"}, /* no client at all */
        {NULL, 400, "Indique cliente_id o cliente, no ambos"},
        {NULL, 400, "Campo inválido: cliente.nombre"},
        {NULL, 400, "Campo inválido: cliente.telefono"},
        {NULL, 400, "Email inválido"},
        {NULL, 400, "Indique el teléfono o el email del cliente"},
        {NULL, 400, "Campo inválido: cliente"},
        {NULL, 400, "Campo inválido: fuera_de_horario"},
        {NULL, 404, "Cliente no encontrado"},
        {NULL, 404, "Cliente no encontrado"},
        {NULL, 404, "Servicio no encontrado"},
        {NULL, 400, "fecha_inicio inválida"},
        {NULL, 400, "Campo inválido: cliente.nombre"},
    };
    char *owned[ARRAY_LEN(cases)] = {0};
    int k = 2;
    if (asprintf(&owned[k++],
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", BARBERO,
                 SERVICIO, fecha) < 0)
        fail_msg("asprintf");
    char both[200];
    snprintf(both, sizeof both, ",\"cliente\":{\"nombre\":\"Luz\",\"telefono\":\"600\"}");
    owned[k++] = body_for(ANA.id, fecha, both);
    owned[k++] = body_new("{\"telefono\":\"600111222\"}", fecha, NULL);
    owned[k++] = body_new("{\"nombre\":\"Luz\",\"telefono\":\"llámame\"}", fecha, NULL);
    owned[k++] = body_new("{\"nombre\":\"Luz\",\"email\":\"no-es-un-email\"}", fecha, NULL);
    owned[k++] = body_new("{\"nombre\":\"Luz\"}", fecha, NULL);
    owned[k++] = body_new("\"Luz\"", fecha, NULL);
    owned[k++] = body_for(ANA.id, fecha, ",\"fuera_de_horario\":\"si\"");
    owned[k++] = body_for(UNKNOWN_ID, fecha, NULL);
    owned[k++] = body_for("no-uuid", fecha, NULL);
    if (asprintf(&owned[k++],
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                 "\"cliente\":{\"nombre\":\"Luz\",\"telefono\":\"600111222\"}}",
                 BARBERO, UNKNOWN_ID, fecha) < 0)
        fail_msg("asprintf");
    owned[k++] =
        body_new("{\"nombre\":\"Luz\",\"telefono\":\"600111222\"}", "2032-02-30T10:00:00Z", NULL);
    owned[k++] = body_new("{\"nombre\":\"\",\"telefono\":\"600111222\"}", fecha, NULL);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        const char *b = cases[i].body ? cases[i].body : owned[i];
        struct resp r;
        desk(&BARB, b, &r);
        if (r.status != cases[i].status || !r.json)
            fprintf(stderr, "case %zu: %ld %s\n", i, r.status, r.body);
        expect_error(&r, cases[i].status, cases[i].msg);
        resp_free(&r);
        free(owned[i]);
    }
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas"), citas);
}

static void a_deleted_account_is_no_client_the_desk_can_book_for_or_find(void **state)
{
    (void)state;
    struct user eva;
    deleted_user(&S, &eva, "Eva Luna");
    struct resp r;
    long citas = db_count(&S, "SELECT count(*) FROM citas");
    char fecha[ISO8601_LEN + 1];
    next_slot(fecha);
    char *b = body_for(eva.id, fecha, NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    free(b);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas"), citas);
    /* the desk's search never offers it; the agenda still names it by id */
    http_get(&S, "/api/clientes", BARB.token, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r.json, "clientes"), i, c)
    {
        if (!strcmp(jstr(c, "id"), eva.id)) fail_msg("a deleted account is listed");
    }
    assert_true(json_array_size(json_object_get(r.json, "clientes")) > 0);
    resp_free(&r);
    char path[120];
    snprintf(path, sizeof path, "/api/clientes?id=%s", eva.id);
    http_get(&S, path, BARB.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "clientes")), 1);
    /* with no address: her sign-in's placeholder is nobody's */
    assert_true(json_is_null(
        json_object_get(json_array_get(json_object_get(r.json, "clientes"), 0), "email")));
    resp_free(&r);
}

static void staff_book_for_an_existing_client_as_post_citas_would(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1], cliente[40];
    next_slot(fecha);
    char *b = body_for(ANA.id, fecha, ",\"notas\":\"Degradado\"");
    char *id = desk_ok(&BARB, b, cliente);
    free(b);
    assert_string_equal(cliente, ANA.id);
    /* hers: in her own listing, with its history record and its confirmation queued */
    struct resp r;
    json_t *e = find_in("/api/citas", &ANA, "citas", id, &r);
    assert_non_null(e);
    assert_string_equal(jstr(e, "notas"), "Degradado");
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM historial_cortes WHERE cita_id = '%s'", id),
                     1);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s'", id), 1);
    /* the same slot again, by the desk or by a client: the specification's 409 */
    b = body_for(ANA.id, fecha, NULL);
    desk(&ADMIN, b, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    free(b);
    char body[256];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", BARBERO,
             SERVICIO, fecha);
    http_json(&S, "POST", "/api/citas", ANA.token, body, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    free(id);
}

static void a_new_client_without_email_gets_a_profile_and_no_login(void **state)
{
    (void)state;
    long users = db_count(&S, "SELECT count(*) FROM auth_users");
    char fecha[ISO8601_LEN + 1], cliente[40];
    next_slot(fecha);
    char *b =
        body_new("{\"nombre\":\"Lucía Gómez\",\"telefono\":\"+34 611 22 33 44\"}", fecha, NULL);
    char *id = desk_ok(&BARB, b, cliente);
    free(b);
    assert_true(is_lower_uuid(cliente));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users + 1);
    /* no e-mail: no confirmation queued, history written */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s'", id), 0);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM historial_cortes WHERE cita_id = '%s'", id),
                     1);
    /* found by phone and by name, any case */
    struct resp r;
    json_t *e = find_in("/api/clientes?q=611%2022", &BARB, "clientes", cliente, &r);
    assert_non_null(e);
    assert_string_equal(jstr(e, "nombre"), "Lucía Gómez");
    assert_true(json_is_null(json_object_get(e, "email")));
    assert_true(json_is_false(json_object_get(e, "puede_entrar")));
    assert_int_equal(json_integer_value(json_object_get(e, "completadas")), 0);
    resp_free(&r);
    e = find_in("/api/clientes?q=LUC", &ADMIN, "clientes", cliente, &r);
    assert_non_null(e);
    resp_free(&r);
    e = find_in("/api/clientes?q=zzzz-nadie", &ADMIN, "clientes", cliente, &r);
    assert_null(e);
    resp_free(&r);
    /* the admin listing shows her with an empty e-mail */
    e = find_in("/api/admin/usuarios", &ADMIN, "usuarios", cliente, &r);
    assert_non_null(e);
    assert_string_equal(jstr(e, "email"), "");
    resp_free(&r);
    /* a second booking for her by id */
    next_slot(fecha);
    b = body_for(cliente, fecha, NULL);
    char *id2 = desk_ok(&ADMIN, b, NULL);
    free(b);
    free(id);
    free(id2);
}

static void a_desk_client_cannot_sign_in_and_a_sign_up_does_not_take_her_account(void **state)
{
    (void)state;
    char email[128], fecha[ISO8601_LEN + 1], cliente[40], json[256];
    unique_email(email, sizeof email, "mostrador");
    next_slot(fecha);
    snprintf(json, sizeof json, "{\"nombre\":\"Marta Ruiz\",\"email\":\"%s\"}", email);
    char *b = body_new(json, fecha, NULL);
    char *id = desk_ok(&BARB, b, cliente);
    free(b);
    /* her confirmation is queued to her address */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s'", id), 1);
    /* no password: any password is refused exactly as a wrong one */
    struct resp r;
    char login[256];
    snprintf(login, sizeof login, "{\"email\":\"%s\",\"password\":\"\"}", email);
    http_json(&S, "POST", "/api/auth/login", NULL, login, &r);
    expect_error(&r, 400, "Faltan campos requeridos");
    resp_free(&r);
    snprintf(login, sizeof login, "{\"email\":\"%s\",\"password\":\"cualquiera\"}", email);
    http_json(&S, "POST", "/api/auth/login", NULL, login, &r);
    expect_error(&r, 401, "Credenciales inválidas");
    resp_free(&r);
    /* a desk booking with her address books for the same person */
    next_slot(fecha);
    snprintf(json, sizeof json, "{\"nombre\":\"Otra Marta\",\"email\":\"%s\"}", email);
    b = body_new(json, fecha, NULL);
    char again[40];
    char *id2 = desk_ok(&BARB, b, again);
    free(b);
    assert_string_equal(again, cliente);
    /* a sign-up with her address proves nothing of her mailbox: the
     * contract's 409, no session, the password given works nowhere; the
     * link it sends her claims the account (tests/api/test_cuenta_acceso.c) */
    long users = db_count(&S, "SELECT count(*) FROM auth_users");
    char signup[256];
    snprintf(signup, sizeof signup,
             "{\"email\":\"%s\",\"password\":\"secreta123\",\"nombre\":\"Marta R.\"}", email);
    http_json(&S, "POST", "/api/auth/signup", NULL, signup, &r);
    expect_error(&r, 409, "El email ya está registrado");
    assert_null(json_object_get(r.json, "token"));
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM auth_users"), users);
    snprintf(login, sizeof login, "{\"email\":\"%s\",\"password\":\"secreta123\"}", email);
    http_json(&S, "POST", "/api/auth/login", NULL, login, &r);
    expect_error(&r, 401, "Credenciales inválidas");
    resp_free(&r);
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM auth_users WHERE id = '%s' AND password_hash = ''",
                 cliente),
        1);
    free(id);
    free(id2);
}

static void a_passwordless_staff_account_is_never_claimed(void **state)
{
    (void)state;
    char email[128], fecha[ISO8601_LEN + 1], cliente[40], json[256];
    unique_email(email, sizeof email, "mostrador-staff");
    next_slot(fecha);
    snprintf(json, sizeof json, "{\"nombre\":\"Pablo\",\"email\":\"%s\"}", email);
    char *b = body_new(json, fecha, NULL);
    char *id = desk_ok(&BARB, b, cliente);
    free(b);
    char patch[200];
    snprintf(patch, sizeof patch, "{\"userId\":\"%s\",\"rol\":\"admin\"}", cliente);
    struct resp r;
    http_json(&S, "PATCH", "/api/admin/usuarios", ADMIN.token, patch, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char signup[256];
    snprintf(signup, sizeof signup, "{\"email\":\"%s\",\"password\":\"secreta123\"}", email);
    http_json(&S, "POST", "/api/auth/signup", NULL, signup, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    /* nor is a link to claim it sent (a client's account only) */
    assert_int_equal(
        db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE user_id = '%s'", cliente), 0);
    free(id);
}

static void working_hours_and_closures_unless_asked_otherwise(void **state)
{
    (void)state;
    long citas = db_count(&S, "SELECT count(*) FROM citas");
    struct resp r;
    /* a Monday at 03:00 UTC (the shop's zone is UTC here) */
    char *b = body_for(ANA.id, "2032-03-08T03:00:00Z", NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 400, "Fuera del horario del barbero");
    resp_free(&r);
    free(b);
    /* ending past the morning's interval (14:00) */
    b = body_for(ANA.id, "2032-03-08T13:45:00Z", NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 400, "Fuera del horario del barbero");
    resp_free(&r);
    free(b);
    /* a Sunday */
    b = body_for(ANA.id, "2032-03-07T10:00:00Z", NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 400, "El barbero no trabaja ese día");
    resp_free(&r);
    free(b);
    /* a closure of the shop */
    http_json(&S, "POST", "/api/admin/ausencias", ADMIN.token,
              "{\"desde\":\"2032-03-09\",\"hasta\":\"2032-03-09\",\"motivo\":\"Obras\"}", &r);
    assert_int_equal(r.status, 201);
    resp_free(&r);
    b = body_for(ANA.id, "2032-03-09T10:00:00Z", NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 400, "La barbería está cerrada ese día");
    resp_free(&r);
    free(b);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas"), citas);
    /* asked otherwise: booked */
    b = body_for(ANA.id, "2032-03-09T10:00:00Z", ",\"fuera_de_horario\":true");
    char *id = desk_ok(&BARB, b, NULL);
    free(b);
    free(id);
    b = body_for(ANA.id, "2032-03-08T03:00:00Z", ",\"fuera_de_horario\":true");
    id = desk_ok(&ADMIN, b, NULL);
    free(b);
    free(id);
}

static void a_walk_in_starts_now_and_not_long_ago(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1];
    struct resp r;
    from_now(-20, fecha);
    char *b = body_new("{\"nombre\":\"Sin cita\",\"telefono\":\"600999888\"}", fecha,
                       ",\"fuera_de_horario\":true");
    desk(&BARB, b, &r);
    expect_error(&r, 400, "fecha_inicio en el pasado");
    resp_free(&r);
    free(b);
    from_now(-2, fecha);
    b = body_new("{\"nombre\":\"Sin cita\",\"telefono\":\"600999888\"}", fecha,
                 ",\"fuera_de_horario\":true");
    char *id = desk_ok(&BARB, b, NULL);
    free(b);
    free(id);
}

static void attendance_is_marked_listed_counted_and_undone_the_same_day(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1], cliente[40];
    from_now(-1, fecha);
    char *b = NULL;
    if (asprintf(&b,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                 "\"cliente\":{\"nombre\":\"Asiste Bien\",\"telefono\":\"600123123\"},"
                 "\"fuera_de_horario\":true}",
                 BARBERO2, SERVICIO, fecha) < 0)
        fail_msg("asprintf");
    char *id = desk_ok(&BARB, b, cliente);
    free(b);
    /* a future one: not yet */
    char later[ISO8601_LEN + 1];
    next_slot(later);
    b = body_for(cliente, later, NULL);
    char *fut = desk_ok(&BARB, b, NULL);
    free(b);
    asistencia_expect(&BARB, fut, "no_presentado", 400, "La cita aún no ha empezado");
    assert_string_equal(estado_of(fut), "confirmada");
    /* bad estado, unknown ids */
    asistencia_expect(&BARB, id, "cancelada", 400, "estado inválido");
    asistencia_expect(&BARB, id, "", 400, "Faltan campos requeridos");
    asistencia_expect(&BARB, UNKNOWN_ID, "completada", 404, "Cita no encontrada");
    asistencia_expect(&BARB, "no-uuid", "completada", 404, "Cita no encontrada");

    struct resp r;
    asistencia(&BARB, id, "no_presentado", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "estado"), "no_presentado");
    resp_free(&r);
    /* listed and filtered like any estado; the slot stays busy */
    json_t *e = find_in("/api/citas?estado=no_presentado", &ADMIN, "citas", id, &r);
    assert_non_null(e);
    resp_free(&r);
    e = find_in("/api/citas?estado=confirmada", &ADMIN, "citas", id, &r);
    assert_null(e);
    resp_free(&r);
    /* counted for staff */
    e = find_in("/api/clientes?q=asiste", &BARB, "clientes", cliente, &r);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "no_presentado")), 1);
    assert_int_equal(json_integer_value(json_object_get(e, "completadas")), 0);
    resp_free(&r);
    e = find_in("/api/admin/usuarios", &ADMIN, "usuarios", cliente, &r);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "no_presentado")), 1);
    resp_free(&r);
    /* and by id, as an agenda row names her */
    char byid[120];
    snprintf(byid, sizeof byid, "/api/clientes?id=%s", cliente);
    e = find_in(byid, &BARB, "clientes", cliente, &r);
    assert_non_null(e);
    assert_int_equal(json_integer_value(json_object_get(e, "no_presentado")), 1);
    assert_int_equal(json_array_size(json_object_get(r.json, "clientes")), 1);
    resp_free(&r);
    http_get(&S, "/api/clientes?id=" UNKNOWN_ID, BARB.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "clientes")), 0);
    resp_free(&r);
    http_get(&S, "/api/clientes?id=nope", BARB.token, &r);
    expect_error(&r, 400, "Parámetro inválido: id");
    resp_free(&r);
    /* corrected and undone the same day */
    asistencia_expect(&ADMIN, id, "completada", 200, NULL);
    assert_string_equal(estado_of(id), "completada");
    e = find_in("/api/clientes?q=asiste", &BARB, "clientes", cliente, &r);
    assert_int_equal(json_integer_value(json_object_get(e, "completadas")), 1);
    assert_int_equal(json_integer_value(json_object_get(e, "no_presentado")), 0);
    resp_free(&r);
    asistencia_expect(&BARB, id, "confirmada", 200, NULL);
    assert_string_equal(estado_of(id), "confirmada");
    /* a mark of another day stays */
    asistencia_expect(&BARB, id, "completada", 200, NULL);
    char *out = NULL;
    char sql[200];
    snprintf(sql, sizeof sql,
             "UPDATE citas SET asistencia_en = '2020-01-01T10:00:00.000Z' WHERE id = '%s'", id);
    assert_int_equal(db_exec(&S, sql, &out), 0);
    free(out);
    asistencia_expect(&BARB, id, "confirmada", 409,
                      "La asistencia solo se puede cambiar el mismo día");
    asistencia_expect(&BARB, id, "completada", 200, NULL); /* the same again: nothing to do */
    assert_string_equal(estado_of(id), "completada");
    /* a marked cita is history: neither cancelled nor moved (a move would
     * carry the mark to a day it cannot be undone on) */
    {
        char cpath[160], rbody[96], later2[ISO8601_LEN + 1];
        next_slot(later2);
        struct resp x;
        char *was = db_query(&S, "SELECT fecha_inicio FROM citas WHERE id = '%s'", id);
        snprintf(cpath, sizeof cpath, "/api/citas/%s/reprogramar", id);
        snprintf(rbody, sizeof rbody, "{\"fecha_inicio\":\"%s\"}", later2);
        http_json(&S, "POST", cpath, BARB.token, rbody, &x);
        expect_error(&x, 409, "La cita ya tiene la asistencia marcada");
        resp_free(&x);
        snprintf(cpath, sizeof cpath, "/api/citas/%s/cancelar", id);
        http_json(&S, "POST", cpath, ADMIN.token, "{}", &x);
        expect_error(&x, 409, "La cita ya tiene la asistencia marcada");
        resp_free(&x);
        assert_string_equal(estado_of(id), "completada");
        char *now_at = db_query(&S, "SELECT fecha_inicio FROM citas WHERE id = '%s'", id);
        assert_string_equal(was, now_at);
        free(was);
        free(now_at);
    }
    /* the export carries the mark (format 4: the last column of citas) */
    char dir[400], file[450];
    snprintf(dir, sizeof dir, "%s/export-asistencia", S.dir);
    char *eout = NULL, *eerr = NULL;
    int st = srv_cli(&S, &eout, &eerr, "export", "--to", dir, NULL);
    if (st != 0) fail_msg("export: %s", eerr ? eerr : "");
    free(eout);
    free(eerr);
    snprintf(file, sizeof file, "%s/citas.jsonl", dir);
    char *rows = read_file(file, NULL);
    assert_non_null(rows);
    char *line = strstr(rows, id);
    assert_non_null(line);
    while (line > rows && line[-1] != '\n')
        line--;
    char *end = strchr(line, '\n');
    json_t *row = json_loadb(line, end ? (size_t)(end - line) : strlen(line), 0, NULL);
    assert_non_null(row);
    assert_string_equal(json_string_value(json_array_get(row, json_array_size(row) - 1)),
                        "2020-01-01T10:00:00.000Z");
    json_decref(row);
    free(rows);
    /* a cancelled one */
    struct resp c;
    char path[160];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", fut);
    http_json(&S, "POST", path, ADMIN.token, "{}", &c);
    assert_int_equal(c.status, 200);
    resp_free(&c);
    asistencia_expect(&BARB, fut, "completada", 409, "La cita está cancelada");
    /* she has no e-mail: no mail for the cancel either */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s'", fut), 0);
    free(id);
    free(fut);
}

/* Desk bookings and clients' POST /api/citas racing for one slot: exactly one wins. */
struct racer {
    const struct user *u;
    bool desk;
    const char *fecha;
    long status;
};

static void race_one(void *item)
{
    struct racer *x = item;
    struct resp r;
    char body[512];
    if (x->desk) {
        snprintf(body, sizeof body,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
                 "\"cliente_id\":\"%s\"}",
                 BARBERO, SERVICIO, x->fecha, ANA.id);
        http_json(&S, "POST", "/api/agenda/citas", x->u->token, body, &r);
    } else {
        snprintf(body, sizeof body,
                 "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}", BARBERO,
                 SERVICIO, x->fecha);
        http_json(&S, "POST", "/api/citas", x->u->token, body, &r);
    }
    x->status = r.status;
    if (r.status != 201 && r.status != 409)
        fprintf(stderr, "racer %s: %ld %s\n", x->fecha, r.status, r.body);
    resp_free(&r);
}

static void desk_and_clients_race_for_one_slot_and_one_wins(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        char fecha[ISO8601_LEN + 1];
        next_slot(fecha);
        struct racer xs[12];
        for (size_t i = 0; i < ARRAY_LEN(xs); i++)
            xs[i] = (struct racer){i % 2 ? &BARB : &ANA, i % 2 == 1, fecha, 0};
        race_threads(ARRAY_LEN(xs), race_one, xs, sizeof xs[0]);
        int won = 0;
        for (size_t i = 0; i < ARRAY_LEN(xs); i++) {
            if (xs[i].status == 201)
                won++;
            else
                assert_int_equal(xs[i].status, 409);
        }
        assert_int_equal(won, 1);
        assert_int_equal(db_count(&S,
                                  "SELECT count(*) FROM citas WHERE barbero_id = '%s' AND "
                                  "fecha_inicio = '%s' AND estado <> 'cancelada'",
                                  BARBERO, fecha),
                         1);
    }
}

/* --- clean-up margins --------------------------------------------------------------- */

/* The local starts ("HH:MM") GET /api/disponibilidad offers, comma-joined. */
static char *offered(const char *servicio, const char *barbero, const char *fecha)
{
    char path[300];
    snprintf(path, sizeof path, "/api/disponibilidad?servicio_id=%s&fecha=%s&barbero_id=%s",
             servicio, fecha, barbero);
    struct resp r;
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    size_t cap = 4096, len = 0, i;
    char *out = calloc(1, cap);
    json_t *h;
    json_array_foreach(json_object_get(r.json, "huecos"), i, h)
    {
        len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? "," : "", jstr(h, "local"));
        assert_true(len < cap);
    }
    resp_free(&r);
    return out;
}

static void margin_is_set_by_the_admin_within_0_to_120(void **state)
{
    (void)state;
    struct resp r;
    http_json(&S, "POST", "/api/admin/servicios", ADMIN.token,
              "{\"nombre\":\"Afeitado\",\"duracion_min\":30,\"precio\":12,\"margen_min\":121}", &r);
    expect_error(&r, 400, "Campo inválido: margen_min");
    resp_free(&r);
    http_json(&S, "POST", "/api/admin/servicios", ADMIN.token,
              "{\"nombre\":\"Afeitado\",\"duracion_min\":30,\"precio\":12,\"margen_min\":10}", &r);
    assert_int_equal(r.status, 201);
    json_t *sv = json_object_get(r.json, "servicio");
    if (!sv) sv = r.json;
    assert_int_equal(json_integer_value(json_object_get(sv, "margen_min")), 10);
    char *id = strdup(jstr(sv, "id"));
    resp_free(&r);
    char path[200];
    snprintf(path, sizeof path, "/api/admin/servicios/%s", id);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"margen_min\":-1}", &r);
    expect_error(&r, 400, "Campo inválido: margen_min");
    resp_free(&r);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"margen_min\":\"5\"}", &r);
    expect_error(&r, 400, "Campo inválido: margen_min");
    resp_free(&r);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"margen_min\":120}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT margen_min FROM servicios WHERE id = '%s'", id), 120);
    /* a client's catalog keeps the specification's fields */
    http_get(&S, "/api/servicios", NULL, &r);
    assert_int_equal(r.status, 200);
    expect_keys(json_array_get(json_object_get(r.json, "servicios"), 0), "id", "nombre",
                "duracion_min", "precio", NULL);
    resp_free(&r);
    free(id);
}

static void margins_stay_free_in_slots_desk_bookings_and_reschedules_only(void **state)
{
    (void)state;
    char *barbero = make_barbero(&S, "Elena Vidal");
    char *servicio = make_servicio(&S, "Tinte", 30, 30.0);
    char path[200], body[400];
    struct resp r;
    snprintf(path, sizeof path, "/api/admin/servicios/%s", servicio);
    http_json(&S, "PATCH", path, ADMIN.token, "{\"margen_min\":15}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    const char *fecha = "2032-04-05"; /* a Monday */
    char *before = offered(servicio, barbero, fecha);
    assert_non_null(strstr(before, "09:30,09:45,10:00,10:15,10:30,10:45"));
    free(before);

    /* the desk books 10:00-10:30: nothing from 09:30 (its margin would reach
     * 10:00) to 10:30 (inside this one's) is offered */
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT10:00:00Z\","
             "\"cliente_id\":\"%s\"}",
             barbero, servicio, fecha, ANA.id);
    char *c1 = desk_ok(&BARB, body, NULL);
    char *after = offered(servicio, barbero, fecha);
    assert_non_null(strstr(after, "09:00,09:15,10:45,11:00"));
    assert_null(strstr(after, "09:30"));
    assert_null(strstr(after, "10:30"));
    free(after);
    /* the desk cannot book inside the margin; right after it, it can */
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT10:35:00Z\","
             "\"cliente_id\":\"%s\"}",
             barbero, servicio, fecha, ANA.id);
    desk(&BARB, body, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT09:40:00Z\","
             "\"cliente_id\":\"%s\"}",
             barbero, servicio, fecha, ANA.id);
    desk(&BARB, body, &r);
    expect_error(&r, 409, TAKEN); /* 09:40-10:10 overlaps; its margin too */
    resp_free(&r);
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT10:45:00Z\","
             "\"cliente_id\":\"%s\"}",
             barbero, servicio, fecha, ANA.id);
    char *c2 = desk_ok(&BARB, body, NULL);
    /* a client's POST /api/citas checks the specification's overlap only:
     * 11:15, right at the end of 10:45-11:15, inside its margin, is hers */
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT11:15:00Z\"}",
             barbero, servicio, fecha);
    http_json(&S, "POST", "/api/citas", ANA.token, body, &r);
    assert_int_equal(r.status, 201);
    char *c3 = strdup(jstr(json_object_get(r.json, "cita"), "id"));
    resp_free(&r);
    /* a reschedule keeps the margins: c1 to 11:50 meets c3's (11:15-11:45 + 15) */
    snprintf(path, sizeof path, "/api/citas/%s/reprogramar", c1);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%sT11:50:00Z\"}", fecha);
    http_json(&S, "POST", path, ADMIN.token, body, &r);
    expect_error(&r, 409, TAKEN);
    resp_free(&r);
    snprintf(body, sizeof body, "{\"fecha_inicio\":\"%sT12:00:00Z\"}", fecha);
    http_json(&S, "POST", path, ADMIN.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    free(c1);
    free(c2);
    free(c3);
    free(barbero);
    free(servicio);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_session_401_and_a_client_403),
        cmocka_unit_test(bad_input_is_400_or_404_and_changes_nothing),
        cmocka_unit_test(a_deleted_account_is_no_client_the_desk_can_book_for_or_find),
        cmocka_unit_test(staff_book_for_an_existing_client_as_post_citas_would),
        cmocka_unit_test(a_new_client_without_email_gets_a_profile_and_no_login),
        cmocka_unit_test(a_desk_client_cannot_sign_in_and_a_sign_up_does_not_take_her_account),
        cmocka_unit_test(a_passwordless_staff_account_is_never_claimed),
        cmocka_unit_test(working_hours_and_closures_unless_asked_otherwise),
        cmocka_unit_test(a_walk_in_starts_now_and_not_long_ago),
        cmocka_unit_test(attendance_is_marked_listed_counted_and_undone_the_same_day),
        cmocka_unit_test(desk_and_clients_race_for_one_slot_and_one_wins),
        cmocka_unit_test(margin_is_set_by_the_admin_within_0_to_120),
        cmocka_unit_test(margins_stay_free_in_slots_desk_bookings_and_reschedules_only),
    };
    return cmocka_run_group_tests(tests, mostrador_group_setup, mostrador_group_teardown);
}
