/*
 * test_mostrador_clientes.c - the front desk finds its clients over HTTP
 * against the real server (on SQLite + folder, and again on PostgreSQL +
 * S3): GET /api/clientes however her name, number or e-mail is typed, at
 * several desks at once, never a staff account, page by page. Booking for
 * her is test_mostrador_reservas.c's.
 */
#define _GNU_SOURCE
#include "mostrador_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The desk finds a client however her name or number is typed: without
 * accents or in capitals, the number with or without spaces or the country
 * code; and the address a client without one is stored under is nobody's
 * to match. */
static void a_client_is_found_as_the_desk_types_her(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1], lucia[40];
    next_slot(fecha);
    char *b =
        body_new("{\"nombre\":\"Lucía Gómez Núñez\",\"telefono\":\"611 22 33 44\"}", fecha, NULL);
    free(desk_ok(&BARB, b, lucia));
    free(b);
    static const char *const finds[] = {
        "lucia",
        "LUC%C3%8DA",
        "gomez",
        "nunez",
        "Luc%C3%ADa%20G%C3%B3mez",
        "611223344",
        "611%2022%2033",
        "%2B34611223344",
        "0034%20611%2022%2033%2044",
        "22-33-44",
    };
    for (size_t i = 0; i < ARRAY_LEN(finds); i++) {
        char path[200];
        snprintf(path, sizeof path, "/api/clientes?q=%s", finds[i]);
        struct resp r;
        json_t *e = find_in(path, &BARB, "clientes", lucia, &r);
        if (!e) fail_msg("q=%s does not find her: %s", finds[i], r.body);
        resp_free(&r);
    }
    /* given again as a new client, however written, she is not a second person;
     * another name on the same number (a family's phone) is */
    char again[40], other[40];
    static const char *const retyped[] = {
        "{\"nombre\":\"LUCIA GOMEZ NUÑEZ \",\"telefono\":\"+34 611-22-33-44\"}",
        /* spaces and tabs inside the name, however many */
        "{\"nombre\":\"  Lucía \\t Gómez  Núñez\",\"telefono\":\"611223344\"}",
    };
    for (size_t i = 0; i < ARRAY_LEN(retyped); i++) {
        next_slot(fecha);
        b = body_new(retyped[i], fecha, NULL);
        free(desk_ok(&BARB, b, again));
        free(b);
        assert_string_equal(again, lucia);
    }
    next_slot(fecha);
    b = body_new("{\"nombre\":\"Pablo Gómez\",\"telefono\":\"611223344\"}", fecha, NULL);
    free(desk_ok(&BARB, b, other));
    free(b);
    assert_string_not_equal(other, lucia);
    /* an account someone signed up with her name and number is not her:
     * the desk's guess never hands a booking to an account another holds */
    struct user mallory;
    char ficha[400];
    unique_email(mallory.email, sizeof mallory.email, "mallory");
    snprintf(ficha, sizeof ficha,
             "{\"email\":\"%s\",\"password\":\"secreto1\",\"nombre\":\"Sara Prieto\","
             "\"telefono\":\"644 55 66 77\"}",
             mallory.email);
    struct resp rs;
    http_json(&S, "POST", "/api/auth/signup", NULL, ficha, &rs);
    assert_int_equal(rs.status, 201);
    snprintf(mallory.id, sizeof mallory.id, "%s", jstr(json_object_get(rs.json, "user"), "id"));
    resp_free(&rs);
    char sara[40];
    next_slot(fecha);
    b = body_new("{\"nombre\":\"Sara Prieto\",\"telefono\":\"+34 644 556 677\"}", fecha, NULL);
    free(desk_ok(&BARB, b, sara));
    free(b);
    assert_string_not_equal(sara, mallory.id);
    static const char *const misses[] = {"sin-email", "email", "611%2099", "34611223345"};
    for (size_t i = 0; i < ARRAY_LEN(misses); i++) {
        char path[200];
        snprintf(path, sizeof path, "/api/clientes?q=%s", misses[i]);
        struct resp r;
        if (find_in(path, &BARB, "clientes", lucia, &r)) fail_msg("q=%s finds her", misses[i]);
        resp_free(&r);
    }
}

/* A stored phone is whatever its holder typed: a '%' or '_' in it is a
 * character, never a wildcard that matches every number the desk types. */
static void a_phone_with_wildcards_matches_only_itself(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1], eva[40], again[40];
    struct user mallory;
    char ficha[300];
    unique_email(mallory.email, sizeof mallory.email, "comodin");
    snprintf(ficha, sizeof ficha,
             "{\"email\":\"%s\",\"password\":\"secreto1\",\"nombre\":\"Eva Ruiz\","
             "\"telefono\":\"%%%%%%%%%%%%\"}",
             mallory.email);
    struct resp r;
    http_json(&S, "POST", "/api/auth/signup", NULL, ficha, &r);
    assert_int_equal(r.status, 201);
    snprintf(mallory.id, sizeof mallory.id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    resp_free(&r);
    static const char *const numbers[] = {"655001122", "%2B34655001122", "699887766"};
    for (size_t i = 0; i < ARRAY_LEN(numbers); i++) {
        char path[200];
        snprintf(path, sizeof path, "/api/clientes?q=%s", numbers[i]);
        if (find_in(path, &BARB, "clientes", mallory.id, &r))
            fail_msg("q=%s finds the account with phone %%%%%%%%%%%%", numbers[i]);
        resp_free(&r);
    }
    /* a desk client whose phone was set to wildcards is no twin of a new one */
    next_slot(fecha);
    char *b = body_new("{\"nombre\":\"Eva Ruiz\",\"telefono\":\"655 00 11 22\"}", fecha, NULL);
    free(desk_ok(&BARB, b, eva));
    free(b);
    char patch[200];
    snprintf(patch, sizeof patch, "{\"userId\":\"%s\",\"telefono\":\"%%________\"}", eva);
    http_json(&S, "PATCH", "/api/admin/usuarios", ADMIN.token, patch, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    next_slot(fecha);
    b = body_new("{\"nombre\":\"Eva Ruiz\",\"telefono\":\"699 88 77 66\"}", fecha, NULL);
    free(desk_ok(&BARB, b, again));
    free(b);
    assert_string_not_equal(again, eva);
}

/* Several desks typing the same new client at once, each booking her with
 * another barber or hour: one person, every booking hers. */
struct typer {
    const char *cliente;
    const char *barbero;
    char fecha[ISO8601_LEN + 1];
    long status;
    char cliente_id[40];
};

static void type_one(void *item)
{
    struct typer *x = item;
    char body[512];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\","
             "\"cliente\":%s}",
             x->barbero, SERVICIO, x->fecha, x->cliente);
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    x->status = r.status;
    if (r.status == 201)
        snprintf(x->cliente_id, sizeof x->cliente_id, "%s",
                 jstr(json_object_get(r.json, "cita"), "cliente_id"));
    else
        fprintf(stderr, "desk: %ld %s\n", r.status, r.body);
    resp_free(&r);
}

static void one_client_typed_at_several_desks_at_once_is_one_person(void **state)
{
    (void)state;
    static const char *const who[] = {
        "{\"nombre\":\"Nuria Sanz\",\"telefono\":\"622 10 20 30\"}",
        "{\"nombre\":\"Irene Sáez\",\"telefono\":\"622 40 50 60\",\"email\":\"irene@example.com\"}",
    };
    for (size_t k = 0; k < ARRAY_LEN(who); k++) {
        struct typer xs[6];
        for (size_t i = 0; i < ARRAY_LEN(xs); i++) {
            xs[i] = (struct typer){who[k], i % 2 ? BARBERO2 : BARBERO, "", 0, ""};
            if (i % 2 == 0)
                next_slot(xs[i].fecha);
            else
                memcpy(xs[i].fecha, xs[i - 1].fecha, sizeof xs[i].fecha);
        }
        race_threads(ARRAY_LEN(xs), type_one, xs, sizeof xs[0]);
        for (size_t i = 0; i < ARRAY_LEN(xs); i++) {
            assert_int_equal(xs[i].status, 201);
            assert_string_equal(xs[i].cliente_id, xs[0].cliente_id);
        }
        assert_int_equal(
            db_count(&S, "SELECT count(*) FROM citas WHERE cliente_id = '%s'", xs[0].cliente_id),
            ARRAY_LEN(xs));
    }
    assert_int_equal(db_count(&S, "SELECT count(*) FROM perfiles WHERE nombre IN ('Nuria Sanz', "
                                  "'Irene Sáez')"),
                     2);
}

/* An address the desk types for a client it knows without one becomes
 * hers (her confirmation goes there, and she can claim her account with
 * it); a client with an address keeps hers. */
static void an_email_typed_for_a_known_client_without_one_becomes_hers(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1], rosa[40], again[40];
    next_slot(fecha);
    char *b = body_new("{\"nombre\":\"Rosa Vidal\",\"telefono\":\"633 11 22 33\"}", fecha, NULL);
    free(desk_ok(&BARB, b, rosa));
    free(b);
    /* then with an address: hers now, and her confirmation goes there; an
     * address typed later does not replace it */
    static const char *const typed[] = {"Rosa.Vidal@Example.com", "otra@example.com"};
    for (size_t i = 0; i < ARRAY_LEN(typed); i++) {
        char json[200];
        snprintf(json, sizeof json,
                 "{\"nombre\":\"Rosa Vidal\",\"telefono\":\"633112233\",\"email\":\"%s\"}",
                 typed[i]);
        next_slot(fecha);
        b = body_new(json, fecha, NULL);
        char *cita = desk_ok(&BARB, b, again);
        free(b);
        assert_string_equal(again, rosa);
        assert_int_equal(db_count(&S,
                                  "SELECT count(*) FROM auth_users WHERE id = '%s' AND email = "
                                  "'rosa.vidal@example.com'",
                                  rosa),
                         1);
        assert_int_equal(db_count(&S,
                                  "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                                  "recipient = 'rosa.vidal@example.com'",
                                  cita),
                         1);
        free(cita);
    }
    /* she claims the account by that address (the link a sign-up or a
     * reset sends there): it is hers, and her bookings */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE user_id = '%s'", rosa),
                     0);
    struct resp r;
    http_json(&S, "POST", "/api/auth/signup", NULL,
              "{\"email\":\"rosa.vidal@example.com\",\"password\":\"secreto1\"}", &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM cuenta_correo WHERE user_id = '%s' AND "
                              "kind = 'restablecer' AND recipient = 'rosa.vidal@example.com'",
                              rosa),
                     1);
}

/* The desk books for clients: a staff account is no client to name, to
 * type in by its address, or to find. */
static void a_staff_account_is_no_client_of_the_desk(void **state)
{
    (void)state;
    char fecha[ISO8601_LEN + 1];
    next_slot(fecha);
    struct resp r;
    char *b = body_for(ADMIN.id, fecha, NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    free(b);
    char cliente[300];
    snprintf(cliente, sizeof cliente, "{\"nombre\":\"Quien Sea\",\"email\":\"%s\"}", ADMIN.email);
    b = body_new(cliente, fecha, NULL);
    desk(&BARB, b, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    free(b);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas WHERE fecha_inicio = '%s'", fecha),
                     0);
    char path[200];
    snprintf(path, sizeof path, "/api/clientes?q=%s", "Admin%20Uno");
    if (find_in(path, &BARB, "clientes", ADMIN.id, &r))
        fail_msg("the search finds a staff account");
    resp_free(&r);
    snprintf(path, sizeof path, "/api/clientes?id=%s", BARB.id);
    http_get(&S, path, BARB.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "clientes")), 0);
    resp_free(&r);
}

static void clientes_are_paged(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/clientes?limit=0", BARB.token, &r);
    expect_error(&r, 400, "Parámetro inválido: limit");
    resp_free(&r);
    http_get(&S, "/api/clientes?cursor=nope", BARB.token, &r);
    expect_error(&r, 400, "Parámetro inválido: cursor");
    resp_free(&r);
    char big[160];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char path[200];
    snprintf(path, sizeof path, "/api/clientes?q=%s", big);
    http_get(&S, path, BARB.token, &r);
    expect_error(&r, 400, "Parámetro inválido: q");
    resp_free(&r);
    /* page by page, every client once, by nombre */
    http_get(&S, "/api/clientes", BARB.token, &r);
    assert_int_equal(r.status, 200);
    size_t all = json_array_size(json_object_get(r.json, "clientes"));
    resp_free(&r);
    assert_true(all >= 4);
    size_t seen = 0;
    char cursor[64] = "";
    for (int guard = 0; guard < 100; guard++) {
        snprintf(path, sizeof path, "/api/clientes?limit=2%s%s", *cursor ? "&cursor=" : "", cursor);
        http_get(&S, path, BARB.token, &r);
        assert_int_equal(r.status, 200);
        seen += json_array_size(json_object_get(r.json, "clientes"));
        json_t *next = json_object_get(r.json, "siguiente");
        assert_non_null(next);
        bool more = json_is_string(next);
        if (more) snprintf(cursor, sizeof cursor, "%s", json_string_value(next));
        resp_free(&r);
        if (!more) break;
    }
    assert_int_equal(seen, all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_client_is_found_as_the_desk_types_her),
        cmocka_unit_test(a_phone_with_wildcards_matches_only_itself),
        cmocka_unit_test(one_client_typed_at_several_desks_at_once_is_one_person),
        cmocka_unit_test(an_email_typed_for_a_known_client_without_one_becomes_hers),
        cmocka_unit_test(a_staff_account_is_no_client_of_the_desk),
        /* last: the clients the others made are its pages */
        cmocka_unit_test(clientes_are_paged),
    };
    return cmocka_run_group_tests(tests, mostrador_group_setup, mostrador_group_teardown);
}
