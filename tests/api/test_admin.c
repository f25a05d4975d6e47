/*
 * test_admin.c - GET and PATCH /api/admin/usuarios over HTTP against the
 * real server: who may call them (403 before anything else), the listing's
 * order and exact shape, and every PATCH rule: userId, the password (its
 * minimum, its effect on logins and sessions), the profile fields and
 * their present/empty/absent forms.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fixture F; /* the server, a barber and a service */
static struct user ADMIN;

#define NO_PERM "Sin permisos"
#define PATH    "/api/admin/usuarios"

static int setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Admin", "Corte Admin", 30, 10);
    make_user(&F.s, &ADMIN, "Admin Principal", "admin");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

static json_t *list_usuarios(void)
{
    struct resp r;
    http_get(&F.s, PATH, ADMIN.token, &r);
    if (r.status != 200) fail_msg("GET " PATH ": %ld %s", r.status, r.body);
    expect_keys(r.json, "usuarios", NULL);
    json_t *l = json_incref(json_object_get(r.json, "usuarios"));
    resp_free(&r);
    assert_true(json_is_array(l));
    return l;
}

/* The listing's element for id (a new reference), or NULL. */
static json_t *usuario(const char *id)
{
    json_t *l = list_usuarios();
    json_t *found = NULL;
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e)
    {
        if (jstr(e, "id") && !strcmp(jstr(e, "id"), id)) found = json_incref(e);
    }
    json_decref(l);
    return found;
}

static void patch(const char *token, const char *body, struct resp *r)
{
    http_json(&F.s, "PATCH", PATH, token, body, r);
}

static void patch_expect(const char *token, const char *body, long status, const char *msg)
{
    struct resp r;
    patch(token, body, &r);
    if (r.status != status) fprintf(stderr, "request body: %s\n", body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

static void patch_ok(const char *body)
{
    struct resp r;
    patch(ADMIN.token, body, &r);
    if (r.status != 200) fail_msg("PATCH %s: %ld %s", body, r.status, r.body);
    expect_keys(r.json, "ok", NULL);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    resp_free(&r);
}

static long login_status(const char *email, const char *password, char *token_out)
{
    json_t *b = json_pack("{s:s, s:s}", "email", email, "password", password);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&F.s, "POST", "/api/auth/login", NULL, text, &r);
    free(text);
    long st = r.status;
    if (st == 401) expect_error(&r, 401, "Credenciales inválidas");
    if (st == 200 && token_out) snprintf(token_out, 64, "%s", jstr(r.json, "token"));
    resp_free(&r);
    return st;
}

static long get_status(const char *path, const char *token)
{
    struct resp r;
    http_get(&F.s, path, token, &r);
    long st = r.status;
    if (st == 401) expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    return st;
}

/* Creates a user through the CLI without ever signing in; returns its id. */
static void cli_user(struct user *u, const char *nombre, const char *telefono)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cli");
    snprintf(u->password, sizeof u->password, "clave-cli-%d", rand() % 1000);
    const char *args[16] = {"user", "add", "--email", u->email, "--password", u->password};
    int n = 6;
    if (nombre) {
        args[n++] = "--nombre";
        args[n++] = nombre;
    }
    if (telefono) {
        args[n++] = "--telefono";
        args[n++] = telefono;
    }
    args[n] = NULL;
    char *out = NULL, *err = NULL;
    int st = run_cli(&F.s, NULL, args, true, &out, &err);
    if (st != 0) fail_msg("user add: %d %s", st, err);
    out[strcspn(out, "\n")] = '\0';
    snprintf(u->id, sizeof u->id, "%s", out);
    free(out);
    free(err);
}

/* The profile columns as the database holds them: rol|nombre|telefono
 * (NULL shown as <null>). */
static char *perfil_row(const char *id)
{
    return db_query(&F.s,
                    "SELECT rol, coalesce(nombre, '<null>'), coalesce(telefono, '<null>') "
                    "FROM perfiles WHERE id = '%s'",
                    id);
}

/* --- 403 before anything else --------------------------------------------------------- */

static void get_without_session_or_with_garbage_token_is_403(void **state)
{
    (void)state;
    struct resp r;
    http_get(&F.s, PATH, NULL, &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
    http_get(&F.s, PATH, "garbage", &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
    http_get(&F.s, PATH, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
    struct req_opts o = {.cookie = "barberia_session=nope"};
    http_req(&F.s, "GET", PATH, &o, &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
}

static void get_as_cliente_barbero_or_other_role_is_403(void **state)
{
    (void)state;
    struct user c, b, o;
    signup_user(&F.s, &c, "Cliente Noadmin");
    make_user(&F.s, &b, "Barbero Noadmin", "barbero");
    make_user(&F.s, &o, "Otro Noadmin", "Admin"); /* roles are exact */
    const struct user *who[] = {&c, &b, &o};
    for (int i = 0; i < 3; i++) {
        struct resp r;
        http_get(&F.s, PATH, who[i]->token, &r);
        expect_error(&r, 403, NO_PERM);
        resp_free(&r);
    }
    /* a logged-out admin session is no session */
    struct user a;
    make_user(&F.s, &a, "Admin Saliente", "admin");
    struct resp r;
    http_json(&F.s, "POST", "/api/auth/logout", a.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&F.s, PATH, a.token, &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
}

static void patch_is_403_for_non_admins_whatever_the_body(void **state)
{
    (void)state;
    struct user c, b;
    signup_user(&F.s, &c, "Cliente Patch");
    make_user(&F.s, &b, "Barbero Patch", "barbero");
    size_t n = 200 * 1024;
    char *big = malloc(n + 1);
    memset(big, '[', n);
    big[n] = '\0';
    char valid[256];
    snprintf(valid, sizeof valid, "{\"userId\":\"%s\",\"rol\":\"admin\"}", c.id);
    const char *tokens[] = {NULL, "garbage", c.token, b.token};
    const char *bodies[] = {valid,
                            "not json",
                            "[]",
                            "",
                            "{}",
                            "{\"userId\":\"\"}",
                            "{\"userId\":\"x\",\"password\":\"1\"}",
                            big};
    for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++)
        for (size_t k = 0; k < sizeof bodies / sizeof bodies[0]; k++)
            patch_expect(tokens[t], bodies[k], 403, NO_PERM);
    free(big);
    /* nothing changed: the client did not make itself an administrator */
    char *row = perfil_row(c.id);
    assert_string_equal(row, "cliente\tCliente Patch\t<null>");
    free(row);
}

/* --- GET ------------------------------------------------------------------------------- */

static void listing_has_every_profile_newest_first_with_exact_fields(void **state)
{
    (void)state;
    struct user u1, u2, u3;
    signup_user(&F.s, &u1, "Primero");
    cli_user(&u2, "Segundo", "600 000 002");
    signup_user(&F.s, &u3, "Tercero");
    /* profile times opposite to the creation order (and newer than any
     * other), so that only an order by created_at puts them first as 1, 2, 3 */
    char *out = db_query(&F.s,
                         "UPDATE perfiles SET created_at = CASE id "
                         "WHEN '%s' THEN '2040-01-01T00:00:03.000Z' "
                         "WHEN '%s' THEN '2040-01-01T00:00:02.000Z' "
                         "ELSE '2040-01-01T00:00:01.000Z' END%s WHERE id IN ('%s', '%s', '%s'); "
                         "SELECT changes();",
                         u1.id, u2.id, test_pg() ? "::timestamptz" : "", u1.id, u2.id, u3.id);
    assert_string_equal(out, "3");
    free(out);
    json_t *l = list_usuarios();
    assert_int_equal((long)json_array_size(l), db_count(&F.s, "SELECT count(*) FROM perfiles"));
    long i1 = -1, i2 = -1, i3 = -1;
    size_t i;
    json_t *e;
    const char *prev_created = NULL;
    json_array_foreach(l, i, e)
    {
        expect_keys(e, "id", "rol", "nombre", "telefono", "created_at", "citas", "email",
                    "ultimo_acceso", "creado_en", "total_citas", "completadas", "no_presentado",
                    "puede_entrar", NULL);
        const char *id = jstr(e, "id");
        assert_true(is_lower_uuid(id));
        const char *created = jstr(e, "created_at");
        assert_non_null(created);
        assert_int_equal(strlen(created), 24);
        if (prev_created && strcmp(prev_created, created) < 0)
            fail_msg("not newest first: %s before %s", prev_created, created);
        prev_created = created;
        if (!strcmp(id, u1.id)) i1 = (long)i;
        if (!strcmp(id, u2.id)) i2 = (long)i;
        if (!strcmp(id, u3.id)) i3 = (long)i;
    }
    assert_int_equal(i1, 0);
    assert_int_equal(i2, 1);
    assert_int_equal(i3, 2);
    assert_string_equal(jstr(json_array_get(l, 0), "created_at"), "2040-01-01T00:00:03.000Z");

    /* the CLI user: never signed in */
    e = json_array_get(l, (size_t)i2);
    assert_string_equal(jstr(e, "rol"), "cliente");
    assert_string_equal(jstr(e, "nombre"), "Segundo");
    assert_string_equal(jstr(e, "telefono"), "600 000 002");
    assert_string_equal(jstr(e, "email"), u2.email);
    assert_true(json_is_null(json_object_get(e, "ultimo_acceso")));
    char *created = db_query(&F.s, "SELECT created_at FROM auth_users WHERE id = '%s'", u2.id);
    assert_string_equal(jstr(e, "creado_en"), created);
    free(created);
    json_t *citas = json_object_get(e, "citas");
    assert_true(json_is_array(citas));
    assert_int_equal(json_array_size(citas), 1);
    expect_keys(json_array_get(citas, 0), "count", NULL);
    assert_true(json_is_integer(json_object_get(json_array_get(citas, 0), "count")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(citas, 0), "count")), 0);
    assert_true(json_is_integer(json_object_get(e, "total_citas")));
    assert_int_equal(json_integer_value(json_object_get(e, "total_citas")), 0);

    /* a signed-up user: the sign-up is their last sign-in */
    e = json_array_get(l, (size_t)i1);
    assert_string_equal(jstr(e, "email"), u1.email);
    assert_true(json_is_null(json_object_get(e, "telefono")));
    assert_non_null(jstr(e, "ultimo_acceso"));
    char *row =
        db_query(&F.s, "SELECT created_at, last_sign_in_at FROM auth_users WHERE id = '%s'", u1.id);
    char expect[128];
    snprintf(expect, sizeof expect, "%s\t%s", jstr(e, "creado_en"), jstr(e, "ultimo_acceso"));
    assert_string_equal(row, expect);
    free(row);
    assert_string_equal(jstr(e, "ultimo_acceso"), jstr(e, "creado_en"));
    json_decref(l);
}

static void ultimo_acceso_is_the_last_login(void **state)
{
    (void)state;
    struct user u;
    cli_user(&u, "Entra Luego", NULL);
    json_t *e = usuario(u.id);
    assert_true(json_is_null(json_object_get(e, "ultimo_acceso")));
    json_decref(e);
    char tok[64];
    assert_int_equal(login_status(u.email, u.password, tok), 200);
    e = usuario(u.id);
    const char *first = jstr(e, "ultimo_acceso");
    assert_non_null(first);
    assert_int_equal(strlen(first), 24);
    char *db = db_query(&F.s, "SELECT last_sign_in_at FROM auth_users WHERE id = '%s'", u.id);
    assert_string_equal(first, db);
    free(db);
    /* a failed login changes nothing; a second login moves it on (from a
     * value set far back, so that no clock resolution matters) */
    char *old = db_query(&F.s,
                         "UPDATE auth_users SET last_sign_in_at = '2001-01-01T00:00:00.000Z' "
                         "WHERE id = '%s'; SELECT changes();",
                         u.id);
    assert_string_equal(old, "1");
    free(old);
    assert_int_equal(login_status(u.email, "incorrecta", NULL), 401);
    json_t *e2 = usuario(u.id);
    assert_string_equal(jstr(e2, "ultimo_acceso"), "2001-01-01T00:00:00.000Z");
    json_decref(e2);
    assert_int_equal(login_status(u.email, u.password, tok), 200);
    e2 = usuario(u.id);
    assert_true(strcmp(jstr(e2, "ultimo_acceso"), first) >= 0);
    db = db_query(&F.s, "SELECT last_sign_in_at FROM auth_users WHERE id = '%s'", u.id);
    assert_string_equal(jstr(e2, "ultimo_acceso"), db);
    free(db);
    /* creado_en never moves */
    assert_string_equal(jstr(e2, "creado_en"), jstr(e, "creado_en"));
    json_decref(e2);
    json_decref(e);
}

static void citas_count_and_total_citas_follow_bookings(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Cuenta Citas");
    char *barb = make_barbero(&F.s, "Barbero Cuenta");
    const char *fechas[] = {"2032-01-10T10:00:00Z", "2032-01-11T10:00:00Z", "2032-01-12T10:00:00Z"};
    for (int k = 0; k < 3; k++) {
        json_t *e = usuario(u.id);
        assert_int_equal(json_integer_value(json_object_get(e, "total_citas")), k);
        json_t *c0 = json_array_get(json_object_get(e, "citas"), 0);
        assert_int_equal(json_integer_value(json_object_get(c0, "count")), k);
        json_decref(e);
        free(book(&F.s, &u, barb, F.servicio, fechas[k], NULL));
    }
    json_t *e = usuario(u.id);
    assert_int_equal(json_integer_value(json_object_get(e, "total_citas")), 3);
    assert_int_equal(json_array_size(json_object_get(e, "citas")), 1);
    assert_int_equal(json_integer_value(
                         json_object_get(json_array_get(json_object_get(e, "citas"), 0), "count")),
                     3);
    json_decref(e);
    /* other users' counts are their own */
    e = usuario(ADMIN.id);
    assert_int_equal(
        json_integer_value(json_object_get(e, "total_citas")),
        db_count(&F.s, "SELECT count(*) FROM citas WHERE cliente_id = '%s'", ADMIN.id));
    json_decref(e);
    free(barb);
}

static void profile_without_identity_user_has_empty_email(void **state)
{
    (void)state;
    /* a profile row no identity user matches (written by hand; the sqlite3
     * tool does not enforce foreign keys) */
    const char *id = "00000000-0000-4000-8000-0000000000aa";
    char *out = db_query(&F.s,
                         "INSERT INTO perfiles (id, rol, nombre, telefono, created_at) VALUES "
                         "('%s', 'cliente', 'Huerfano', NULL, '2001-01-01T00:00:00.000Z'); "
                         "SELECT changes();",
                         id);
    assert_string_equal(out, "1");
    free(out);
    json_t *e = usuario(id);
    assert_non_null(e);
    expect_keys(e, "id", "rol", "nombre", "telefono", "created_at", "citas", "email",
                "ultimo_acceso", "creado_en", "total_citas", "completadas", "no_presentado",
                "puede_entrar", NULL);
    assert_string_equal(jstr(e, "email"), "");
    assert_true(json_is_null(json_object_get(e, "ultimo_acceso")));
    assert_string_equal(jstr(e, "creado_en"), "2001-01-01T00:00:00.000Z");
    assert_int_equal(json_integer_value(json_object_get(e, "total_citas")), 0);
    json_decref(e);
    /* the oldest profile is listed last */
    json_t *l = list_usuarios();
    assert_string_equal(jstr(json_array_get(l, json_array_size(l) - 1), "id"), id);
    json_decref(l);
    out = db_query(&F.s, "DELETE FROM perfiles WHERE id = '%s'", id);
    free(out);
}

/* --- PATCH: the request ------------------------------------------------------------------ */

static void patch_without_userid_is_400(void **state)
{
    (void)state;
    const char *bodies[] = {"{}",
                            "{\"userId\":null}",
                            "{\"userId\":\"\"}",
                            "{\"nombre\":\"X\",\"password\":\"123456789\"}",
                            "{\"userId\":\"\",\"password\":\"1\"}",
                            "{\"user_id\":\"abc\"}"};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        patch_expect(ADMIN.token, bodies[i], 400, "Falta userId");
}

static void patch_with_invalid_json_is_400(void **state)
{
    (void)state;
    const char *bodies[] = {"not json", "{", "[]", "[{\"userId\":\"x\"}]", "\"x\"", "1", ""};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        patch_expect(ADMIN.token, bodies[i], 400, "JSON inválido");
    struct resp r;
    http_json(&F.s, "PATCH", PATH, ADMIN.token, NULL, &r);
    expect_error(&r, 400, "JSON inválido");
    resp_free(&r);
}

static void patch_with_wrongly_typed_field_is_400(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Tipos");
    const char *fields[] = {"password", "rol", "nombre", "telefono"};
    for (int i = 0; i < 4; i++) {
        char body[256], msg[64];
        snprintf(body, sizeof body, "{\"userId\":\"%s\",\"%s\":42}", u.id, fields[i]);
        snprintf(msg, sizeof msg, "Campo inválido: %s", fields[i]);
        patch_expect(ADMIN.token, body, 400, msg);
        snprintf(body, sizeof body, "{\"userId\":\"%s\",\"%s\":{\"a\":\"b\"}}", u.id, fields[i]);
        patch_expect(ADMIN.token, body, 400, msg);
    }
    char *row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tTipos\t<null>");
    free(row);
}

/* --- PATCH: the password ---------------------------------------------------------------- */

static void short_password_is_400_and_changes_nothing(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Corta");
    const char *shorts[] = {"1", "12", "abc", "abcd", "abcde", "ñññññ", "  x  "};
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
        char body[256];
        snprintf(body, sizeof body,
                 "{\"userId\":\"%s\",\"password\":\"%s\",\"nombre\":\"Cambiado\","
                 "\"rol\":\"admin\",\"telefono\":\"999\"}",
                 u.id, shorts[i]);
        patch_expect(ADMIN.token, body, 400, "Mínimo 6 caracteres");
    }
    /* the profile fields of those requests were not applied */
    char *row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tCorta\t<null>");
    free(row);
    /* the old password still works, and so does the old session */
    assert_int_equal(login_status(u.email, u.password, NULL), 200);
    assert_int_equal(get_status("/api/citas", u.token), 200);
}

static void six_characters_are_enough_counted_in_code_points(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Seis");
    char body[256];
    /* six code points, twelve bytes */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"ñññññá\"}", u.id);
    patch_ok(body);
    assert_int_equal(login_status(u.email, "ñññññá", NULL), 200);
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"123456\"}", u.id);
    patch_ok(body);
    assert_int_equal(login_status(u.email, "123456", NULL), 200);
    assert_int_equal(login_status(u.email, "ñññññá", NULL), 401);
}

static void password_change_switches_logins_and_ends_every_session(void **state)
{
    (void)state;
    struct user u, other;
    signup_user(&F.s, &u, "Cambia Clave");
    signup_user(&F.s, &other, "Testigo");
    char second[64];
    assert_int_equal(login_status(u.email, u.password, second), 200);
    assert_int_equal(get_status("/api/citas", u.token), 200);
    assert_int_equal(get_status("/api/citas", second), 200);
    char body[256];
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"nueva-clave-1\"}", u.id);
    patch_ok(body);
    /* the old password no longer logs in; the new one does */
    assert_int_equal(login_status(u.email, u.password, NULL), 401);
    char third[64];
    assert_int_equal(login_status(u.email, "nueva-clave-1", third), 200);
    /* every session that existed before the change ended; new ones work */
    assert_int_equal(get_status("/api/citas", u.token), 401);
    assert_int_equal(get_status("/api/citas", second), 401);
    assert_int_equal(get_status("/api/auth/me", u.token), 401);
    assert_int_equal(get_status("/api/citas", third), 200);
    /* other users and the administrator keep theirs */
    assert_int_equal(get_status("/api/citas", other.token), 200);
    assert_int_equal(get_status(PATH, ADMIN.token), 200);
    /* the profile was not touched */
    char *row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tCambia Clave\t<null>");
    free(row);
    /* stored as Argon2id */
    char *hash =
        db_query(&F.s, "SELECT substr(password_hash, 1, 10) FROM auth_users WHERE id = '%s'", u.id);
    assert_string_equal(hash, "$argon2id$");
    free(hash);
}

static void empty_password_means_unchanged(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Vacia");
    char body[256];
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"\",\"nombre\":\"Vacia Dos\"}",
             u.id);
    patch_ok(body);
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":null}", u.id);
    patch_ok(body);
    assert_int_equal(login_status(u.email, u.password, NULL), 200);
    assert_int_equal(get_status("/api/citas", u.token), 200);
    char *row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tVacia Dos\t<null>");
    free(row);
}

static void password_change_for_unknown_user_is_500_with_a_message(void **state)
{
    (void)state;
    const char *ids[] = {"0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab", "no-es-un-uuid"};
    for (int i = 0; i < 2; i++) {
        char body[256];
        snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"clave-larga\"}", ids[i]);
        struct resp r;
        patch(ADMIN.token, body, &r);
        expect_error(&r, 500, "Usuario no encontrado");
        resp_free(&r);
    }
}

/* --- PATCH: the profile ----------------------------------------------------------------- */

static void profile_fields_are_applied_only_when_given(void **state)
{
    (void)state;
    struct user u;
    cli_user(&u, "Perfil Base", "600 111 000");
    char body[256], *row;

    /* empty rol and nombre are "unchanged"; telefono absent is unchanged */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"rol\":\"\",\"nombre\":\"\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tPerfil Base\t600 111 000");
    free(row);

    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"nombre\":\"Perfil Nuevo\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tPerfil Nuevo\t600 111 000");
    free(row);

    /* rol is not validated */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"rol\":\"recepcionista\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "recepcionista\tPerfil Nuevo\t600 111 000");
    free(row);

    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"telefono\":\"+34 611 222 333\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "recepcionista\tPerfil Nuevo\t+34 611 222 333");
    free(row);

    /* one line each, bounded: a line break is a space */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"nombre\":\"Perfil\\nNuevo\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "recepcionista\tPerfil Nuevo\t+34 611 222 333");
    free(row);

    /* telefono present and empty: null */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"telefono\":\"\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "recepcionista\tPerfil Nuevo\t<null>");
    free(row);

    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"telefono\":\"700\"}", u.id);
    patch_ok(body);
    /* telefono present as null: null */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"telefono\":null}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "recepcionista\tPerfil Nuevo\t<null>");
    free(row);

    /* all three at once, and the listing shows them */
    snprintf(body, sizeof body,
             "{\"userId\":\"%s\",\"rol\":\"cliente\",\"nombre\":\"Final\",\"telefono\":\"123\"}",
             u.id);
    patch_ok(body);
    json_t *e = usuario(u.id);
    assert_string_equal(jstr(e, "rol"), "cliente");
    assert_string_equal(jstr(e, "nombre"), "Final");
    assert_string_equal(jstr(e, "telefono"), "123");
    json_decref(e);

    /* only userId: nothing changes */
    snprintf(body, sizeof body, "{\"userId\":\"%s\"}", u.id);
    patch_ok(body);
    row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tFinal\t123");
    free(row);

    /* a profile-only change leaves the password alone */
    assert_int_equal(login_status(u.email, u.password, NULL), 200);
}

static void password_and_profile_in_one_request(void **state)
{
    (void)state;
    struct user u;
    signup_user(&F.s, &u, "Ambos");
    char body[256];
    snprintf(body, sizeof body,
             "{\"userId\":\"%s\",\"password\":\"ambas-cosas\",\"nombre\":\"Ambos Dos\","
             "\"telefono\":\"555\"}",
             u.id);
    patch_ok(body);
    char *row = perfil_row(u.id);
    assert_string_equal(row, "cliente\tAmbos Dos\t555");
    free(row);
    assert_int_equal(login_status(u.email, "ambas-cosas", NULL), 200);
    assert_int_equal(login_status(u.email, u.password, NULL), 401);
}

static void profile_only_patch_for_unknown_user_is_200_noop(void **state)
{
    (void)state;
    long before = db_count(&F.s, "SELECT count(*) FROM perfiles");
    patch_ok("{\"userId\":\"0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab\",\"nombre\":\"Nadie\"}");
    patch_ok("{\"userId\":\"no-es-un-uuid\",\"rol\":\"admin\",\"telefono\":null}");
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM perfiles"), before);
    assert_int_equal(db_count(&F.s, "SELECT count(*) FROM perfiles WHERE nombre = 'Nadie'"), 0);
}

static void role_change_takes_effect_on_the_next_request(void **state)
{
    (void)state;
    struct user u, other;
    signup_user(&F.s, &u, "Ascendido");
    signup_user(&F.s, &other, "Cliente Ajeno");
    char *barb = make_barbero(&F.s, "Barbero Ascenso");
    char *cid = book(&F.s, &other, barb, F.servicio, "2032-02-01T10:00:00Z", NULL);
    struct resp r;
    http_get(&F.s, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    assert_int_equal(json_array_size(json_object_get(r.json, "citas")), 0);
    resp_free(&r);

    char body[256];
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"rol\":\"barbero\"}", u.id);
    patch_ok(body);
    /* the same session now sees everybody's appointments */
    http_get(&F.s, "/api/citas", u.token, &r);
    assert_int_equal(r.status, 200);
    json_t *l = json_object_get(r.json, "citas");
    assert_int_equal((long)json_array_size(l), db_count(&F.s, "SELECT count(*) FROM citas"));
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(l, i, e) if (!strcmp(jstr(e, "id"), cid)) found = true;
    assert_true(found);
    resp_free(&r);
    /* but is still no administrator */
    http_get(&F.s, PATH, u.token, &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);

    /* made admin, then back to cliente */
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"rol\":\"admin\"}", u.id);
    patch_ok(body);
    http_get(&F.s, PATH, u.token, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"rol\":\"cliente\"}", u.id);
    patch_ok(body);
    http_get(&F.s, PATH, u.token, &r);
    expect_error(&r, 403, NO_PERM);
    resp_free(&r);
    http_get(&F.s, "/api/citas", u.token, &r);
    assert_int_equal(json_array_size(json_object_get(r.json, "citas")), 0);
    resp_free(&r);
    free(cid);
    free(barb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_without_session_or_with_garbage_token_is_403),
        cmocka_unit_test(get_as_cliente_barbero_or_other_role_is_403),
        cmocka_unit_test(patch_is_403_for_non_admins_whatever_the_body),
        cmocka_unit_test(listing_has_every_profile_newest_first_with_exact_fields),
        cmocka_unit_test(ultimo_acceso_is_the_last_login),
        cmocka_unit_test(citas_count_and_total_citas_follow_bookings),
        cmocka_unit_test(profile_without_identity_user_has_empty_email),
        cmocka_unit_test(patch_without_userid_is_400),
        cmocka_unit_test(patch_with_invalid_json_is_400),
        cmocka_unit_test(patch_with_wrongly_typed_field_is_400),
        cmocka_unit_test(short_password_is_400_and_changes_nothing),
        cmocka_unit_test(six_characters_are_enough_counted_in_code_points),
        cmocka_unit_test(password_change_switches_logins_and_ends_every_session),
        cmocka_unit_test(empty_password_means_unchanged),
        cmocka_unit_test(password_change_for_unknown_user_is_500_with_a_message),
        cmocka_unit_test(profile_fields_are_applied_only_when_given),
        cmocka_unit_test(password_and_profile_in_one_request),
        cmocka_unit_test(profile_only_patch_for_unknown_user_is_200_noop),
        cmocka_unit_test(role_change_takes_effect_on_the_next_request),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
