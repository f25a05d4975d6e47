/*
 * test_horario.c - the shop's administration: GET /api/config, the catalog's
 * administration (create, edit, deactivate, reactivate; the public
 * catalog and booking see active rows only), weekly schedules (the default
 * week, replacing it, its validation), days off and closures, who may call
 * what, and a start refused for an unknown time zone.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct srv S;
static struct user ADMIN, BARBERO, CLIENTE;

static int setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_SLOT_MIN=20",
                         "BARBERIA_MIN_NOTICE_MIN=60",
                         "BARBERIA_MAX_DAYS_AHEAD=400",
                         "BARBERIA_CANCEL_CUTOFF_MIN=30",
                         "BARBERIA_TZ=America/Mexico_City",
                         "BARBERIA_SHOP_NAME=Barbería Central",
                         "BARBERIA_SHOP_ADDRESS=Calle Mayor 1, Madrid",
                         "BARBERIA_SHOP_PHONE=+34 910 00 00 00",
                         NULL};
    srv_start(&S, env, NULL);
    make_user(&S, &ADMIN, "Admin", "admin");
    make_user(&S, &BARBERO, "Barbero", "barbero");
    signup_user(&S, &CLIENTE, "Cliente");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    return 0;
}

static void call(const char *method, const char *path, const char *token, const char *body,
                 struct resp *r)
{
    if (body)
        http_json(&S, method, path, token, body, r);
    else
        http_req(&S, method, path, &(struct req_opts){.token = token}, r);
}

static void expect_call(const char *method, const char *path, const char *token, const char *body,
                        long status, const char *msg)
{
    struct resp r;
    call(method, path, token, body, &r);
    if (r.status != status) fail_msg("%s %s: %ld %s", method, path, r.status, r.body);
    if (msg) expect_error(&r, status, msg);
    resp_free(&r);
}

static bool listed(const char *path, const char *key, const char *token, const char *id)
{
    struct resp r;
    http_get(&S, path, token, &r);
    assert_int_equal(r.status, 200);
    json_t *a = json_object_get(r.json, key);
    bool found = false;
    for (size_t i = 0; i < json_array_size(a); i++)
        found = found || !strcmp(jstr(json_array_get(a, i), "id"), id);
    resp_free(&r);
    return found;
}

static void config_tells_the_settings(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/config", NULL, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "zona", "paso_min", "antelacion_min", "dias_max", "limite_cancelacion_min",
                "tienda", "direccion", "telefono", "whatsapp", NULL);
    assert_true(json_is_false(json_object_get(r.json, "whatsapp"))); /* none configured */
    assert_string_equal(jstr(r.json, "tienda"), "Barbería Central");
    assert_string_equal(jstr(r.json, "direccion"), "Calle Mayor 1, Madrid");
    assert_string_equal(jstr(r.json, "telefono"), "+34 910 00 00 00");
    assert_string_equal(jstr(r.json, "zona"), "America/Mexico_City");
    assert_int_equal(json_integer_value(json_object_get(r.json, "paso_min")), 20);
    assert_int_equal(json_integer_value(json_object_get(r.json, "antelacion_min")), 60);
    assert_int_equal(json_integer_value(json_object_get(r.json, "dias_max")), 400);
    assert_int_equal(json_integer_value(json_object_get(r.json, "limite_cancelacion_min")), 30);
    resp_free(&r);
}

static void an_unknown_zone_stops_the_start(void **state)
{
    (void)state;
    static const char *const zones[] = {"BARBERIA_TZ=Europe/Nowhere",
                                        "BARBERIA_TZ=../../etc/passwd"};
    for (size_t i = 0; i < 2; i++) {
        const char *env[] = {zones[i], NULL};
        const char *args[] = {"serve", "--listen", "127.0.0.1:0", NULL};
        char *out = NULL, *err = NULL;
        int st = run_cli_within(&S, env, args, true, 30000, &out, &err);
        assert_int_not_equal(st, 0);
        assert_non_null(strstr(err, "BARBERIA_TZ"));
        /* one line */
        char *nl = strchr(err, '\n');
        assert_non_null(nl);
        assert_string_equal(nl + 1, "");
        free(out);
        free(err);
    }
}

static void only_an_administrator_manages(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Permisos");
    char *s = make_servicio(&S, "Permisos", 30, 10);
    char pb[128], ps[128], ph[160];
    snprintf(pb, sizeof pb, "/api/admin/barberos/%s", b);
    snprintf(ps, sizeof ps, "/api/admin/servicios/%s", s);
    snprintf(ph, sizeof ph, "/api/admin/barberos/%s/horario", b);
    const struct {
        const char *method, *path, *body;
    } admin_only[] = {
        {"GET", "/api/admin/barberos", NULL},
        {"POST", "/api/admin/barberos", "{\"nombre\":\"X\"}"},
        {"PATCH", pb, "{\"activo\":false}"},
        {"PUT", ph, "{\"horario\":[]}"},
        {"POST", "/api/admin/servicios", "{\"nombre\":\"X\",\"duracion_min\":10,\"precio\":1}"},
        {"PATCH", ps, "{\"activo\":false}"},
        {"POST", "/api/admin/ausencias", "{\"desde\":\"2030-01-01\",\"hasta\":\"2030-01-01\"}"},
        {"DELETE", "/api/admin/ausencias/00000000-0000-4000-8000-000000000000", NULL},
    };
    const char *tokens[] = {NULL, CLIENTE.token, BARBERO.token};
    for (size_t i = 0; i < sizeof admin_only / sizeof admin_only[0]; i++)
        for (size_t t = 0; t < 3; t++)
            expect_call(admin_only[i].method, admin_only[i].path, tokens[t], admin_only[i].body,
                        403, "Sin permisos");
    /* nothing changed: the barber and the service are still offered, nothing was added */
    assert_true(listed("/api/barberos", "barberos", NULL, b));
    assert_true(listed("/api/servicios", "servicios", NULL, s));
    assert_int_equal(db_count(&S, "SELECT count(*) FROM ausencias"), 0);
    /* the days off and closures: a barber reads them (the agenda's grid), a
     * client does not */
    expect_call("GET", "/api/admin/ausencias", BARBERO.token, NULL, 200, NULL);
    expect_call("GET", "/api/admin/ausencias", CLIENTE.token, NULL, 403, "Sin permisos");
    /* an admin endpoint: 403 without a session, as every one */
    expect_call("GET", "/api/admin/ausencias", NULL, NULL, 403, "Sin permisos");
    /* the services with their clean-up margins likewise (the grid keeps
     * the margin after each appointment free of buttons) */
    struct resp r;
    http_get(&S, "/api/admin/servicios", BARBERO.token, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *sv;
    bool seen = false;
    json_array_foreach(json_object_get(r.json, "servicios"), i, sv)
    {
        expect_keys(sv, "id", "nombre", "duracion_min", "precio", "activo", "margen_min", NULL);
        seen = seen || !strcmp(jstr(sv, "id"), s);
    }
    assert_true(seen);
    resp_free(&r);
    expect_call("GET", "/api/admin/servicios", CLIENTE.token, NULL, 403, "Sin permisos");
    expect_call("GET", "/api/admin/servicios", NULL, NULL, 403, "Sin permisos");
    /* the public reads need no session */
    char pub[160];
    snprintf(pub, sizeof pub, "/api/barberos/%s/horario", b);
    expect_call("GET", pub, NULL, NULL, 200, NULL);
    expect_call("GET", "/api/config", NULL, NULL, 200, NULL);
    free(b);
    free(s);
}

static void barbers_are_created_edited_and_taken_off_the_catalog(void **state)
{
    (void)state;
    struct resp r;
    call("POST", "/api/admin/barberos", ADMIN.token,
         "{\"nombre\":\"Nuevo\",\"foto_url\":\"https://x.example/n.jpg\"}", &r);
    assert_int_equal(r.status, 201);
    json_t *b = json_object_get(r.json, "barbero");
    expect_keys(b, "id", "nombre", "foto_url", "activo", "email", "usuario_id", "feed", NULL);
    assert_true(is_lower_uuid(jstr(b, "id")));
    assert_string_equal(jstr(b, "nombre"), "Nuevo");
    assert_string_equal(jstr(b, "foto_url"), "https://x.example/n.jpg");
    assert_true(json_is_true(json_object_get(b, "activo")));
    char *id = strdup(jstr(b, "id"));
    resp_free(&r);
    /* listed publicly in the specification's shape */
    http_get(&S, "/api/barberos", NULL, &r);
    json_t *a = json_object_get(r.json, "barberos");
    for (size_t i = 0; i < json_array_size(a); i++)
        expect_keys(json_array_get(a, i), "id", "nombre", "foto_url", NULL);
    resp_free(&r);
    assert_true(listed("/api/barberos", "barberos", NULL, id));

    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s", id);
    call("PATCH", path, ADMIN.token, "{\"nombre\":\"Renombrado\",\"foto_url\":null}", &r);
    assert_int_equal(r.status, 200);
    b = json_object_get(r.json, "barbero");
    assert_string_equal(jstr(b, "nombre"), "Renombrado");
    assert_true(json_is_null(json_object_get(b, "foto_url")));
    resp_free(&r);

    /* off the catalog: not listed, not bookable, still in the admin listing */
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":false}", 200, NULL);
    assert_false(listed("/api/barberos", "barberos", NULL, id));
    assert_true(listed("/api/admin/barberos", "barberos", ADMIN.token, id));
    char *s = make_servicio(&S, "Para reservar", 30, 10);
    char body[300];
    snprintf(
        body, sizeof body,
        "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"2031-05-04T10:00:00Z\"}",
        id, s);
    expect_call("POST", "/api/citas", CLIENTE.token, body, 404, "Barbero no encontrado");
    /* back on it */
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":true}", 200, NULL);
    assert_true(listed("/api/barberos", "barberos", NULL, id));
    expect_call("POST", "/api/citas", CLIENTE.token, body, 201, NULL);

    /* bad input changes nothing */
    expect_call("POST", "/api/admin/barberos", ADMIN.token, "{}", 400, "Faltan campos requeridos");
    expect_call("POST", "/api/admin/barberos", ADMIN.token, "{\"nombre\":7}", 400,
                "Campo inválido: nombre");
    expect_call("POST", "/api/admin/barberos", ADMIN.token, "{\"nombre\":\"\"}", 400,
                "Campo inválido: nombre");
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":\"no\"}", 400, "Campo inválido: activo");
    expect_call("PATCH", path, ADMIN.token, "{\"nombre\":null}", 400, "Campo inválido: nombre");
    expect_call("PATCH", "/api/admin/barberos/00000000-0000-4000-8000-000000000000", ADMIN.token,
                "{\"activo\":false}", 404, "Barbero no encontrado");
    expect_call("PATCH", "/api/admin/barberos/nada", ADMIN.token, "{\"activo\":false}", 404,
                "Barbero no encontrado");
    assert_true(listed("/api/barberos", "barberos", NULL, id));
    free(s);
    free(id);
}

static void services_are_created_edited_and_taken_off_the_catalog(void **state)
{
    (void)state;
    struct resp r;
    call("POST", "/api/admin/servicios", ADMIN.token,
         "{\"nombre\":\"Tinte\",\"duracion_min\":50,\"precio\":30.5}", &r);
    assert_int_equal(r.status, 201);
    json_t *s = json_object_get(r.json, "servicio");
    expect_keys(s, "id", "nombre", "duracion_min", "precio", "activo", "margen_min", NULL);
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 50);
    assert_true(json_real_value(json_object_get(s, "precio")) == 30.5);
    char *id = strdup(jstr(s, "id"));
    resp_free(&r);
    char path[128];
    snprintf(path, sizeof path, "/api/admin/servicios/%s", id);
    call("PATCH", path, ADMIN.token, "{\"duracion_min\":40,\"precio\":25}", &r);
    assert_int_equal(r.status, 200);
    s = json_object_get(r.json, "servicio");
    assert_int_equal(json_integer_value(json_object_get(s, "duracion_min")), 40);
    resp_free(&r);
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":false}", 200, NULL);
    assert_false(listed("/api/servicios", "servicios", NULL, id));
    assert_true(listed("/api/admin/servicios", "servicios", ADMIN.token, id));
    char *b = make_barbero(&S, "Para servicio");
    char body[300];
    snprintf(
        body, sizeof body,
        "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"2031-05-05T10:00:00Z\"}",
        b, id);
    expect_call("POST", "/api/citas", CLIENTE.token, body, 404, "Servicio no encontrado");
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":true}", 200, NULL);
    expect_call("POST", "/api/citas", CLIENTE.token, body, 201, NULL);

    expect_call("POST", "/api/admin/servicios", ADMIN.token, "{\"nombre\":\"X\",\"precio\":1}", 400,
                "Faltan campos requeridos");
    expect_call("POST", "/api/admin/servicios", ADMIN.token,
                "{\"nombre\":\"X\",\"duracion_min\":0,\"precio\":1}", 400,
                "Campo inválido: duracion_min");
    expect_call("POST", "/api/admin/servicios", ADMIN.token,
                "{\"nombre\":\"X\",\"duracion_min\":10,\"precio\":-1}", 400,
                "Campo inválido: precio");
    expect_call("PATCH", path, ADMIN.token, "{\"duracion_min\":\"40\"}", 400,
                "Campo inválido: duracion_min");
    expect_call("PATCH", "/api/admin/servicios/00000000-0000-4000-8000-000000000000", ADMIN.token,
                "{}", 404, "Servicio no encontrado");
    free(b);
    free(id);
}

static const char DEFAULT_WEEK[] =
    "[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":1,\"inicio\":\"16:00\",\"fin\":"
    "\"20:00\"},{\"dia\":2,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":2,\"inicio\":\"16:00\","
    "\"fin\":\"20:00\"},{\"dia\":3,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":3,\"inicio\":"
    "\"16:00\",\"fin\":\"20:00\"},{\"dia\":4,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{\"dia\":4,"
    "\"inicio\":\"16:00\",\"fin\":\"20:00\"},{\"dia\":5,\"inicio\":\"09:00\",\"fin\":\"14:00\"},{"
    "\"dia\":5,\"inicio\":\"16:00\",\"fin\":\"20:00\"},{\"dia\":6,\"inicio\":\"09:00\",\"fin\":"
    "\"14:00\"}]";

static void expect_horario(const char *id, const char *want_json)
{
    char path[160];
    snprintf(path, sizeof path, "/api/barberos/%s/horario", id);
    struct resp r;
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    json_t *want = json_loads(want_json, 0, NULL);
    assert_non_null(want);
    if (!json_equal(json_object_get(r.json, "horario"), want))
        fail_msg("horario %s, want %s", r.body, want_json);
    json_decref(want);
    resp_free(&r);
}

static void schedules_start_with_the_default_week_and_are_replaced_whole(void **state)
{
    (void)state;
    char *cli = make_barbero(&S, "Desde la CLI");
    expect_horario(cli, DEFAULT_WEEK);
    struct resp r;
    call("POST", "/api/admin/barberos", ADMIN.token, "{\"nombre\":\"Desde la API\"}", &r);
    char *api = strdup(jstr(json_object_get(r.json, "barbero"), "id"));
    resp_free(&r);
    expect_horario(api, DEFAULT_WEEK);

    char path[160];
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", api);
    /* given out of order, answered and kept in order */
    const char *week = "{\"horario\":[{\"dia\":7,\"inicio\":\"10:00\",\"fin\":\"12:00\"},"
                       "{\"dia\":2,\"inicio\":\"15:00\",\"fin\":\"24:00\"},"
                       "{\"dia\":2,\"inicio\":\"08:30\",\"fin\":\"15:00\"}]}";
    const char *sorted = "[{\"dia\":2,\"inicio\":\"08:30\",\"fin\":\"15:00\"},"
                         "{\"dia\":2,\"inicio\":\"15:00\",\"fin\":\"24:00\"},"
                         "{\"dia\":7,\"inicio\":\"10:00\",\"fin\":\"12:00\"}]";
    call("PUT", path, ADMIN.token, week, &r);
    assert_int_equal(r.status, 200);
    json_t *want = json_loads(sorted, 0, NULL);
    assert_true(json_equal(json_object_get(r.json, "horario"), want));
    json_decref(want);
    resp_free(&r);
    expect_horario(api, sorted);

    /* refused, and the week stays as it was */
    const struct {
        const char *body, *msg;
    } bad[] = {
        {"{}", "Faltan campos requeridos"},
        {"{\"horario\":{}}", "Campo inválido: horario"},
        {"{\"horario\":[{\"dia\":8,\"inicio\":\"09:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":0,\"inicio\":\"09:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"9:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"09:60\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"10:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"11:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"24:01\"}]}", NULL},
        {"{\"horario\":[{\"dia\":\"1\",\"inicio\":\"09:00\",\"fin\":\"10:00\"}]}", NULL},
        {"{\"horario\":[{\"dia\":1,\"inicio\":\"09:00\",\"fin\":\"12:00\"},"
         "{\"dia\":1,\"inicio\":\"11:59\",\"fin\":\"13:00\"}]}",
         "Horario inválido: tramos solapados"},
        {"{\"horario\":[3]}", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        call("PUT", path, ADMIN.token, bad[i].body, &r);
        if (r.status != 400) fail_msg("%s: %ld %s", bad[i].body, r.status, r.body);
        if (bad[i].msg) expect_error(&r, 400, bad[i].msg);
        assert_non_null(jstr(r.json, "error"));
        resp_free(&r);
    }
    expect_horario(api, sorted);
    /* an empty week is a week without work */
    expect_call("PUT", path, ADMIN.token, "{\"horario\":[]}", 200, NULL);
    expect_horario(api, "[]");
    expect_call("PUT", "/api/admin/barberos/00000000-0000-4000-8000-000000000000/horario",
                ADMIN.token, "{\"horario\":[]}", 404, "Barbero no encontrado");
    expect_call("GET", "/api/barberos/00000000-0000-4000-8000-000000000000/horario", NULL, NULL,
                404, "Barbero no encontrado");
    expect_call("GET", "/api/barberos/nada/horario", NULL, NULL, 404, "Barbero no encontrado");
    free(cli);
    free(api);
}

static void days_off_are_recorded_listed_and_removed(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Ausente");
    char body[300];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"desde\":\"2030-08-01\",\"hasta\":\"2030-08-15\","
             "\"motivo\":\"Vacaciones\"}",
             b);
    struct resp r;
    call("POST", "/api/admin/ausencias", ADMIN.token, body, &r);
    assert_int_equal(r.status, 201);
    json_t *a = json_object_get(r.json, "ausencia");
    expect_keys(a, "id", "barbero_id", "desde", "hasta", "motivo", NULL);
    assert_string_equal(jstr(a, "barbero_id"), b);
    assert_string_equal(jstr(a, "desde"), "2030-08-01");
    assert_string_equal(jstr(a, "hasta"), "2030-08-15");
    assert_string_equal(jstr(a, "motivo"), "Vacaciones");
    char *id = strdup(jstr(a, "id"));
    resp_free(&r);
    call("POST", "/api/admin/ausencias", ADMIN.token,
         "{\"desde\":\"2030-12-25\",\"hasta\":\"2030-12-25\"}", &r);
    assert_int_equal(r.status, 201);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "ausencia"), "barbero_id")));
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "ausencia"), "motivo")));
    resp_free(&r);
    http_get(&S, "/api/admin/ausencias", ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    json_t *all = json_object_get(r.json, "ausencias");
    assert_int_equal(json_array_size(all), 2);
    assert_string_equal(jstr(json_array_get(all, 0), "id"), id); /* by desde */
    resp_free(&r);

    const struct {
        const char *body;
        long status;
        const char *msg;
    } bad[] = {
        {"{\"desde\":\"2030-01-01\"}", 400, "Faltan campos requeridos"},
        {"{\"hasta\":\"2030-01-01\"}", 400, "Faltan campos requeridos"},
        {"{\"desde\":\"2030-02-30\",\"hasta\":\"2030-03-01\"}", 400, "desde inválida"},
        {"{\"desde\":\"2030-03-01\",\"hasta\":\"marzo\"}", 400, "hasta inválida"},
        {"{\"desde\":\"2030-03-02\",\"hasta\":\"2030-03-01\"}", 400, "hasta es anterior a desde"},
        {"{\"barbero_id\":5,\"desde\":\"2030-03-01\",\"hasta\":\"2030-03-01\"}", 400,
         "Campo inválido: barbero_id"},
        {"{\"barbero_id\":\"00000000-0000-4000-8000-000000000000\",\"desde\":\"2030-03-01\","
         "\"hasta\":\"2030-03-01\"}",
         404, "Barbero no encontrado"},
        {"{\"desde\":\"2030-03-01\",\"hasta\":\"2030-03-01\",\"motivo\":1}", 400,
         "Campo inválido: motivo"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_call("POST", "/api/admin/ausencias", ADMIN.token, bad[i].body, bad[i].status,
                    bad[i].msg);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM ausencias"), 2);

    char path[128];
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", id);
    expect_call("DELETE", path, ADMIN.token, NULL, 200, NULL);
    expect_call("DELETE", path, ADMIN.token, NULL, 404, "Ausencia no encontrada");
    expect_call("DELETE", "/api/admin/ausencias/nada", ADMIN.token, NULL, 404,
                "Ausencia no encontrada");
    assert_int_equal(db_count(&S, "SELECT count(*) FROM ausencias"), 1);
    /* "" is absent: the whole shop */
    call("POST", "/api/admin/ausencias", ADMIN.token,
         "{\"barbero_id\":\"\",\"desde\":\"2030-12-31\",\"hasta\":\"2030-12-31\"}", &r);
    assert_int_equal(r.status, 201);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "ausencia"), "barbero_id")));
    resp_free(&r);
    free(id);
    free(b);
}

/* An uppercase copy of a canonical id. */
static void upper(const char *id, char out[64])
{
    snprintf(out, 64, "%s", id);
    for (char *c = out; *c; c++)
        if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
}

/* Every route with an id in its path reads it alike: a UUID in either case
 * names the thing; one segment that is not a UUID is that thing not found
 * (the contract); any other shape - an empty segment, more segments, a
 * trailing slash - is no resource at all. */
static void ids_in_paths_are_uuids_and_other_shapes_are_no_resource(void **state)
{
    (void)state;
    char *b = make_barbero(&S, "Por Ruta");
    char *sv = make_servicio(&S, "Por Ruta", 30, 10);
    char B[64], SV[64], path[200];
    upper(b, B);
    upper(sv, SV);
    struct resp r;
    call("POST", "/api/admin/ausencias", ADMIN.token,
         "{\"desde\":\"2031-01-06\",\"hasta\":\"2031-01-06\"}", &r);
    assert_int_equal(r.status, 201);
    char A[64];
    upper(jstr(json_object_get(r.json, "ausencia"), "id"), A);
    resp_free(&r);

    /* a UUID in capitals is the same id */
    snprintf(path, sizeof path, "/api/admin/barberos/%s", B);
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":true}", 200, NULL);
    snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", B);
    expect_call("PUT", path, ADMIN.token, "{\"horario\":[]}", 200, NULL);
    snprintf(path, sizeof path, "/api/barberos/%s/horario", B);
    expect_call("GET", path, NULL, NULL, 200, NULL);
    snprintf(path, sizeof path, "/api/admin/servicios/%s", SV);
    expect_call("PATCH", path, ADMIN.token, "{\"activo\":true}", 200, NULL);
    snprintf(path, sizeof path, "/api/admin/ausencias/%s", A);
    expect_call("DELETE", path, ADMIN.token, NULL, 200, NULL);

    /* one segment that is not a UUID: not found */
    const char *not_uuid[] = {"nada", "1", "%20", "00000000-0000-4000-8000-00000000000", NULL};
    for (const char *const *id = not_uuid; *id; id++) {
        snprintf(path, sizeof path, "/api/admin/barberos/%s", *id);
        expect_call("PATCH", path, ADMIN.token, "{}", 404, "Barbero no encontrado");
        snprintf(path, sizeof path, "/api/admin/barberos/%s/horario", *id);
        expect_call("PUT", path, ADMIN.token, "{\"horario\":[]}", 404, "Barbero no encontrado");
        snprintf(path, sizeof path, "/api/barberos/%s/horario", *id);
        expect_call("GET", path, NULL, NULL, 404, "Barbero no encontrado");
        snprintf(path, sizeof path, "/api/admin/servicios/%s", *id);
        expect_call("PATCH", path, ADMIN.token, "{}", 404, "Servicio no encontrado");
        snprintf(path, sizeof path, "/api/admin/ausencias/%s", *id);
        expect_call("DELETE", path, ADMIN.token, NULL, 404, "Ausencia no encontrada");
    }
    /* a UUID with more after it is not one */
    snprintf(path, sizeof path, "/api/admin/barberos/%sx", b);
    expect_call("PATCH", path, ADMIN.token, "{}", 404, "Barbero no encontrado");

    /* other shapes: no such resource (the id between before and after;
     * none when with_id is false) */
    const struct {
        const char *method, *before, *after, *body;
        bool with_id;
    } shapes[] = {
        {"PATCH", "/api/admin/barberos/", "/", "{}", true},
        {"PATCH", "/api/admin/barberos/", "/otro", "{}", true},
        {"PATCH", "/api/admin/barberos//", "", "{}", true},
        {"PATCH", "/api/admin/barberos/", "", "{}", false},
        {"PUT", "/api/admin/barberos/", "/horario/", "{\"horario\":[]}", true},
        {"PUT", "/api/admin/barberos/", "/horarios", "{\"horario\":[]}", true},
        {"PUT", "/api/admin/barberos/x/", "/horario", "{\"horario\":[]}", true},
        {"GET", "/api/barberos/", "/horario/", NULL, true},
        {"GET", "/api/barberos/", "", NULL, true},
        {"GET", "/api/barberos/", "/horario/x", NULL, true},
        {"GET", "/api/barberos/", "/horario", NULL, false},
        {"PATCH", "/api/admin/servicios/", "/", "{}", true},
        {"PATCH", "/api/admin/servicios/", "", "{}", false},
        {"DELETE", "/api/admin/ausencias/", "/", NULL, true},
        {"DELETE", "/api/admin/ausencias/", "/x", NULL, true},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        snprintf(path, sizeof path, "%s%s%s", shapes[i].before, shapes[i].with_id ? b : "",
                 shapes[i].after);
        expect_call(shapes[i].method, path, ADMIN.token, shapes[i].body, 404, "No encontrado");
    }
    /* a barber's own path has PATCH only */
    snprintf(path, sizeof path, "/api/admin/barberos/%s", b);
    expect_call("PUT", path, ADMIN.token, "{\"horario\":[]}", 405, "Método no permitido");
    free(b);
    free(sv);
}

/* A store failure in these endpoints is the generic 500 (the database's
 * message never reaches the client), and the log keeps it with the request
 * it failed. */
static void a_store_failure_is_the_generic_500_and_its_detail_is_logged(void **state)
{
    (void)state;
    assert_int_equal(db_forced_failure(&S, "barberos", true), 0);
    struct resp r;
    call("POST", "/api/admin/barberos", ADMIN.token, "{\"nombre\":\"Sin Sitio\"}", &r);
    int off = db_forced_failure(&S, "barberos", false);
    expect_error(&r, 500, "Error interno del servidor");
    resp_free(&r);
    assert_int_equal(off, 0);
    assert_true(
        srv_wait_log(&S, "error http: POST /api/admin/barberos answered 500: fallo forzado", 5000));

    assert_int_equal(db_forced_failure(&S, "ausencias", true), 0);
    call("POST", "/api/admin/ausencias", ADMIN.token,
         "{\"desde\":\"2031-02-02\",\"hasta\":\"2031-02-02\"}", &r);
    off = db_forced_failure(&S, "ausencias", false);
    expect_error(&r, 500, "Error interno del servidor");
    resp_free(&r);
    assert_int_equal(off, 0);
    assert_true(srv_wait_log(
        &S, "error http: POST /api/admin/ausencias answered 500: fallo forzado", 5000));
    /* and once the store works, so does the endpoint */
    expect_call("POST", "/api/admin/barberos", ADMIN.token, "{\"nombre\":\"Con Sitio\"}", 201,
                NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(config_tells_the_settings),
        cmocka_unit_test(an_unknown_zone_stops_the_start),
        cmocka_unit_test(only_an_administrator_manages),
        cmocka_unit_test(barbers_are_created_edited_and_taken_off_the_catalog),
        cmocka_unit_test(services_are_created_edited_and_taken_off_the_catalog),
        cmocka_unit_test(schedules_start_with_the_default_week_and_are_replaced_whole),
        cmocka_unit_test(days_off_are_recorded_listed_and_removed),
        cmocka_unit_test(ids_in_paths_are_uuids_and_other_shapes_are_no_resource),
        cmocka_unit_test(a_store_failure_is_the_generic_500_and_its_detail_is_logged),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
