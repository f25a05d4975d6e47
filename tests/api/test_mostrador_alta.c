/*
 * test_mostrador_alta.c - the front desk registers a client without booking
 * for her (POST /api/clientes) over HTTP against the real server (on SQLite
 * + folder, and again on PostgreSQL + S3): a new one (201, no login until she
 * claims her account), one the shop knows by her e-mail or by her name and
 * number however typed (200, herself, an e-mail typed becoming hers when she
 * has none), a staff account's address refused, permissions, bad input with
 * nothing created, several desks typing one person at once, and a booking
 * that types her in later finding her.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct srv S;
static char *BARBERO, *SERVICIO;
static struct user ANA, BARB, ADMIN;

static int group_setup(void **state)
{
    (void)state;
    srv_init(&S);
    const char *env[] = {"BARBERIA_MIN_NOTICE_MIN=0", "BARBERIA_TZ=UTC",
                         "BARBERIA_MAX_DAYS_AHEAD=3660", NULL};
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
    make_user(&S, &BARB, "Barbero Uno", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

/* POST /api/clientes as u (NULL: no session). */
static void alta(const struct user *u, const char *body, struct resp *r)
{
    http_json(&S, "POST", "/api/clientes", u ? u->token : NULL, body, r);
}

/* A registration that must answer status: the client's id (caller frees). */
static char *alta_ok(const char *body, long status)
{
    struct resp r;
    alta(&BARB, body, &r);
    if (r.status != status) fail_msg("alta %s: %ld %s", body, r.status, r.body);
    json_t *c = json_object_get(r.json, "cliente");
    expect_keys(c, "id", "nombre", "telefono", "email", "rol", "created_at", "puede_entrar",
                "completadas", "no_presentado", NULL);
    assert_string_equal(jstr(c, "rol"), "cliente");
    char *id = strdup(jstr(c, "id"));
    resp_free(&r);
    return id;
}

static long users(void)
{
    return db_count(&S, "SELECT count(*) FROM auth_users");
}

/* --- the tests -------------------------------------------------------------------------- */

/* Staff only: no session 401, a client 403 before her body is judged. */
static void without_a_session_401_and_a_client_403(void **state)
{
    (void)state;
    long before = users();
    struct resp r;
    alta(NULL, "{\"nombre\":\"Eva Ruiz\",\"telefono\":\"611 00 00 01\"}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    alta(&ANA, "{\"nombre\":\"Eva Ruiz\",\"telefono\":\"611 00 00 01\"}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    alta(&ANA, "{\"nombre\": 7}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    assert_int_equal(users(), before);
}

/* Each refusal in its order, with nothing created. */
static void bad_input_is_400_and_changes_nothing(void **state)
{
    (void)state;
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"{}", "Faltan campos requeridos"},
        {"{\"nombre\":\"\",\"telefono\":\"611 00 00 02\"}", "Faltan campos requeridos"},
        {"{\"telefono\":\"611 00 00 02\"}", "Faltan campos requeridos"},
        {"{\"nombre\":7,\"telefono\":\"611 00 00 02\"}", "Campo inválido: nombre"},
        {"{\"nombre\":\"   \",\"telefono\":\"611 00 00 02\"}", "Campo inválido: nombre"},
        {"{\"nombre\":\"Eva\\nRuiz\",\"telefono\":\"611 00 00 02\"}", "Campo inválido: nombre"},
        {"{\"nombre\":\"Eva Ruiz\",\"telefono\":611000002}", "Campo inválido: telefono"},
        {"{\"nombre\":\"Eva Ruiz\",\"telefono\":\"12\"}", "Campo inválido: telefono"},
        {"{\"nombre\":\"Eva Ruiz\",\"telefono\":\"611 00 00 02\",\"email\":\"no-es\"}",
         "Email inválido"},
        {"{\"nombre\":\"Eva Ruiz\",\"email\":true}", "Campo inválido: email"},
        {"{\"nombre\":\"Eva Ruiz\"}", "Indique el teléfono o el email del cliente"},
        {"{\"nombre\":\"Eva Ruiz\",\"telefono\":\"\",\"email\":\"\"}",
         "Indique el teléfono o el email del cliente"},
    };
    long before = users();
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct resp r;
        alta(&BARB, bad[i].body, &r);
        if (r.status != 400) fprintf(stderr, "body %s: %ld %s\n", bad[i].body, r.status, r.body);
        expect_error(&r, 400, bad[i].msg);
        resp_free(&r);
    }
    /* a name over 200 bytes */
    char big[400];
    snprintf(big, sizeof big, "{\"nombre\":\"%0*d\",\"telefono\":\"611 00 00 02\"}", 201, 0);
    struct resp r;
    alta(&ADMIN, big, &r);
    expect_error(&r, 400, "Campo inválido: nombre");
    resp_free(&r);
    assert_int_equal(users(), before);
}

/* A new client: 201, as GET /api/clientes lists her; she cannot sign in
 * until she claims her account; the log names who registered her. */
static void a_new_client_is_registered_and_cannot_sign_in_yet(void **state)
{
    (void)state;
    long before = users();
    struct resp r;
    alta(&BARB, "{\"nombre\":\"  Lucía   Gómez \",\"telefono\":\"+34 611 22 33 44\"}", &r);
    assert_int_equal(r.status, 201);
    json_t *c = json_object_get(r.json, "cliente");
    char *lucia = strdup(jstr(c, "id"));
    assert_true(is_lower_uuid(lucia));
    assert_string_equal(jstr(c, "nombre"), "Lucía Gómez");
    assert_string_equal(jstr(c, "telefono"), "+34 611 22 33 44");
    assert_true(json_is_null(json_object_get(c, "email")));
    assert_true(json_is_false(json_object_get(c, "puede_entrar")));
    assert_int_equal(json_integer_value(json_object_get(c, "completadas")), 0);
    resp_free(&r);
    assert_int_equal(users(), before + 1);
    /* the desk finds her as it finds any client */
    char path[200];
    snprintf(path, sizeof path, "/api/clientes?id=%s", lucia);
    http_get(&S, path, ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    json_t *all = json_object_get(r.json, "clientes");
    assert_int_equal(json_array_size(all), 1);
    assert_string_equal(jstr(json_array_get(all, 0), "nombre"), "Lucía Gómez");
    resp_free(&r);
    /* with an address: hers, and still no way in before she claims it */
    alta(&ADMIN, "{\"nombre\":\"Marta Gil\",\"email\":\"Marta.Gil@Example.com\"}", &r);
    assert_int_equal(r.status, 201);
    c = json_object_get(r.json, "cliente");
    assert_string_equal(jstr(c, "email"), "marta.gil@example.com");
    assert_true(json_is_null(json_object_get(c, "telefono")));
    resp_free(&r);
    http_json(&S, "POST", "/api/auth/login", NULL,
              "{\"email\":\"marta.gil@example.com\",\"password\":\"\"}", &r);
    assert_true(r.status == 400 || r.status == 401);
    resp_free(&r);
    http_json(&S, "POST", "/api/auth/login", NULL,
              "{\"email\":\"marta.gil@example.com\",\"password\":\"secreto1\"}", &r);
    expect_error(&r, 401, "Credenciales inválidas");
    resp_free(&r);
    assert_true(srv_wait_log(&S, "registered at the front desk by", 60000));
    char *log = srv_log(&S);
    char line[200];
    snprintf(line, sizeof line, "mostrador: client %s registered at the front desk by %s", lucia,
             BARB.id);
    if (!strstr(log, line)) fail_msg("no line \"%s\" in the log", line);
    assert_null(strstr(log, "611 22 33 44"));
    free(log);
    free(lucia);
}

/* The same person typed again, her name or number written otherwise: 200
 * and herself; an address typed for her, when she has none, becomes hers;
 * another typed later does not replace it. */
static void a_known_client_is_herself_and_not_a_second_person(void **state)
{
    (void)state;
    char *rosa = alta_ok("{\"nombre\":\"Rosa Vidal\",\"telefono\":\"633 11 22 33\"}", 201);
    long before = users();
    char *again = alta_ok("{\"nombre\":\"rosa  VIDAL\",\"telefono\":\"+34633112233\"}", 200);
    assert_string_equal(again, rosa);
    free(again);
    static const char *const typed[] = {"Rosa.Vidal@Example.com", "otra@example.com"};
    for (size_t i = 0; i < ARRAY_LEN(typed); i++) {
        char body[200];
        snprintf(body, sizeof body,
                 "{\"nombre\":\"Rosa Vidal\",\"telefono\":\"633112233\",\"email\":\"%s\"}",
                 typed[i]);
        struct resp r;
        alta(&BARB, body, &r);
        assert_int_equal(r.status, 200);
        json_t *c = json_object_get(r.json, "cliente");
        assert_string_equal(jstr(c, "id"), rosa);
        assert_string_equal(jstr(c, "email"), "rosa.vidal@example.com");
        resp_free(&r);
    }
    assert_int_equal(users(), before);
    /* another name on the same number (a family's phone) is a new client */
    char *hijo = alta_ok("{\"nombre\":\"Pablo Vidal\",\"telefono\":\"633 11 22 33\"}", 201);
    assert_string_not_equal(hijo, rosa);
    free(hijo);
    free(rosa);
}

/* An address with an account: that account, if a client's (200); a staff
 * account's is 409 and creates nothing. */
static void an_address_with_an_account_names_it(void **state)
{
    (void)state;
    char body[300];
    snprintf(body, sizeof body, "{\"nombre\":\"Otra Persona\",\"email\":\"%s\"}", ANA.email);
    char *ana = alta_ok(body, 200);
    assert_string_equal(ana, ANA.id);
    free(ana);
    long before = users();
    snprintf(body, sizeof body, "{\"nombre\":\"Quien Sea\",\"email\":\"%s\"}", ADMIN.email);
    struct resp r;
    alta(&BARB, body, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    assert_int_equal(users(), before);
}

/* A client registered first is the one a booking that types her in later
 * books for (no second person), and the one the desk books by id. */
static void a_booking_typed_later_finds_her(void **state)
{
    (void)state;
    char *nora = alta_ok("{\"nombre\":\"Nora Ibáñez\",\"telefono\":\"644 55 66 77\"}", 201);
    long before = users();
    char fecha[ISO8601_LEN + 1];
    int64_t day = iso8601_days_from_civil(2032, 3, 1);
    iso8601_format(day * 86400000LL + 10 * 3600000LL, fecha);
    char body[600];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
             "\"cliente\":{\"nombre\":\"Nora Ibanez\",\"telefono\":\"644556677\"}}",
             BARBERO, SERVICIO, fecha);
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    if (r.status != 201) fail_msg("desk booking: %ld %s", r.status, r.body);
    assert_string_equal(jstr(json_object_get(r.json, "cita"), "cliente_id"), nora);
    resp_free(&r);
    assert_int_equal(users(), before);
    free(nora);
}

/* Several desks typing the same new person at once make one person: one
 * 201, the others 200 with her; by her name and number, or by her address
 * alone. */
struct typer {
    const char *body;
    long status;
    char id[40];
};

static void type_one(void *item)
{
    struct typer *x = item;
    struct resp r;
    alta(&BARB, x->body, &r);
    x->status = r.status;
    if (r.status == 200 || r.status == 201)
        snprintf(x->id, sizeof x->id, "%s", jstr(json_object_get(r.json, "cliente"), "id"));
    else
        fprintf(stderr, "alta: %ld %s\n", r.status, r.body);
    resp_free(&r);
}

static void several_desks_typing_one_person_make_one(void **state)
{
    (void)state;
    static const char *const who[] = {
        "{\"nombre\":\"Inés Prat\",\"telefono\":\"655 12 34 56\"}",
        "{\"nombre\":\"Marina Sol\",\"email\":\"marina.sol@example.com\"}",
    };
    for (size_t k = 0; k < ARRAY_LEN(who); k++) {
        for (int round = 0; round < 5; round++) {
            char body[200];
            /* a person of her own each round (the e-mail's, the number's) */
            snprintf(body, sizeof body, "%.*s%d%s", (int)(strstr(who[k], "\"}") - who[k]), who[k],
                     round, "\"}");
            struct typer xs[4];
            for (size_t i = 0; i < ARRAY_LEN(xs); i++)
                xs[i] = (struct typer){body, 0, ""};
            race_threads(ARRAY_LEN(xs), type_one, xs, sizeof xs[0]);
            int created = 0;
            for (size_t i = 0; i < ARRAY_LEN(xs); i++) {
                if (xs[i].status != 200 && xs[i].status != 201)
                    fail_msg("%s: %ld", body, xs[i].status);
                created += xs[i].status == 201;
                assert_string_equal(xs[i].id, xs[0].id);
            }
            assert_int_equal(created, 1);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_a_session_401_and_a_client_403),
        cmocka_unit_test(bad_input_is_400_and_changes_nothing),
        cmocka_unit_test(a_new_client_is_registered_and_cannot_sign_in_yet),
        cmocka_unit_test(a_known_client_is_herself_and_not_a_second_person),
        cmocka_unit_test(an_address_with_an_account_names_it),
        cmocka_unit_test(a_booking_typed_later_finds_her),
        cmocka_unit_test(several_desks_typing_one_person_make_one),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
