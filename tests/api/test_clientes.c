/*
 * test_clientes.c - the desk corrects a client it made (PATCH
 * /api/clientes/{id}) over HTTP against the real server (on SQLite +
 * folder, and again on PostgreSQL + S3): who may, the order of the checks
 * with nothing changed on a refusal, a name, a phone and an address put
 * right, the messages still waiting re-addressed or skipped, the links sent
 * to the old address ended, no correction making her the twin of another
 * desk client, and an account its client claimed left to her.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNKNOWN_ID "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define RECLAMADA  "La clienta ya usa su cuenta: sus datos los cambia ella"
#define GEMELA     "Ya hay un cliente con ese nombre y teléfono"

static struct srv S;
static char *BARBERO, *SERVICIO;
static struct user ANA, BARB, ADMIN;
static int NEXT_SLOT;

static int group_setup(void **state)
{
    (void)state;
    srv_init(&S);
    /* a mail server nobody answers at: the messages wait, pending */
    char url[64];
    snprintf(url, sizeof url, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", free_port());
    const char *env[] = {url, "BARBERIA_TZ=UTC", NULL};
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

/* A client the desk makes with a booking (cliente_json: the "cliente"
 * object), out of hours so that any day will do. OUT: her id. */
static void desk_client(const char *cliente_json, char id[40])
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":"
             "\"2032-03-01T%02d:%02d:00Z\",\"fuera_de_horario\":true,\"cliente\":%s}",
             BARBERO, SERVICIO, NEXT_SLOT / 2, NEXT_SLOT % 2 * 30, cliente_json);
    NEXT_SLOT++;
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    if (r.status != 201) fail_msg("desk: %ld %s", r.status, r.body);
    snprintf(id, 40, "%s", jstr(json_object_get(r.json, "cita"), "cliente_id"));
    resp_free(&r);
}

static void patch(const struct user *u, const char *id, const char *body, struct resp *r)
{
    char path[128];
    snprintf(path, sizeof path, "/api/clientes/%s", id);
    http_json(&S, "PATCH", path, u ? u->token : NULL, body, r);
}

static json_t *patch_ok(const char *id, const char *body, struct resp *r)
{
    patch(&BARB, id, body, r);
    if (r->status != 200) fail_msg("PATCH %s: %ld %s", body, r->status, r->body);
    json_t *c = json_object_get(r->json, "cliente");
    expect_keys(c, "id", "nombre", "telefono", "email", "rol", "created_at", "puede_entrar",
                "completadas", "no_presentado", NULL);
    assert_string_equal(jstr(c, "id"), id);
    return c;
}

/* The profile and the address as stored, one line (owned). */
static char *stored(const char *id)
{
    return db_query(&S,
                    "SELECT coalesce(p.nombre, '-') || '|' || coalesce(p.telefono, '-') || '|' || "
                    "u.email FROM perfiles p JOIN auth_users u ON u.id = p.id WHERE p.id = '%s'",
                    id);
}

/* --- the tests ---------------------------------------------------------------------- */

static void only_staff_and_bad_input_changes_nothing(void **state)
{
    (void)state;
    char id[40];
    desk_client("{\"nombre\":\"Lucía Gómez\",\"telefono\":\"611 22 33 44\"}", id);
    char *before = stored(id);
    struct resp r;
    patch(NULL, id, "{\"nombre\":\"X\"}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    /* a client is refused before her body is judged */
    patch(&ANA, id, "{\"nombre\":5}", &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    static const struct {
        const char *body;
        long status;
        const char *msg;
    } bad[] = {
        {"{}", 400, "Nada que cambiar"},
        {"{\"nombre\":null}", 400, "Nada que cambiar"},
        {"{\"nombre\":5}", 400, "Campo inválido: nombre"},
        {"{\"nombre\":\"  \"}", 400, "Campo inválido: nombre"},
        {"{\"nombre\":\"Dos\\nlíneas\"}", 400, "Campo inválido: nombre"},
        {"{\"telefono\":\"doce\"}", 400, "Campo inválido: telefono"},
        {"{\"telefono\":[]}", 400, "Campo inválido: telefono"},
        {"{\"email\":\"sin-arroba\"}", 400, "Email inválido"},
        {"{\"email\":true}", 400, "Campo inválido: email"},
        /* neither an address nor a phone would be left */
        {"{\"telefono\":null}", 400, "Indique el teléfono o el email del cliente"},
        {"{\"telefono\":\"\",\"email\":null}", 400, "Indique el teléfono o el email del cliente"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        patch(&BARB, id, bad[i].body, &r);
        expect_error(&r, bad[i].status, bad[i].msg);
        resp_free(&r);
    }
    /* the values before the client */
    patch(&BARB, UNKNOWN_ID, "{\"telefono\":\"doce\"}", &r);
    expect_error(&r, 400, "Campo inválido: telefono");
    resp_free(&r);
    patch(&BARB, UNKNOWN_ID, "{\"nombre\":\"X\"}", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    patch(&BARB, "no-es-un-id", "{\"nombre\":\"X\"}", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    /* a staff account is nobody the desk corrects */
    patch(&BARB, ADMIN.id, "{\"nombre\":\"X\"}", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    /* her address is another account's */
    char body[256];
    snprintf(body, sizeof body, "{\"nombre\":\"Otra\",\"email\":\"%s\"}", ANA.email);
    patch(&BARB, id, body, &r);
    expect_error(&r, 409, "El email ya está registrado");
    resp_free(&r);
    char *after = stored(id);
    assert_string_equal(after, before);
    free(after);
    free(before);
}

static void the_desk_puts_a_name_a_phone_and_an_address_right(void **state)
{
    (void)state;
    char id[40];
    desk_client("{\"nombre\":\"Lucia Gomes\",\"telefono\":\"611 22 33 45\"}", id);
    struct resp r;
    json_t *c =
        patch_ok(id, "{\"nombre\":\"  Lucía \\t Gómez \",\"telefono\":\"622 33 44 55\"}", &r);
    assert_string_equal(jstr(c, "nombre"), "Lucía Gómez");
    assert_string_equal(jstr(c, "telefono"), "622 33 44 55");
    assert_true(json_is_null(json_object_get(c, "email")));
    assert_false(json_is_true(json_object_get(c, "puede_entrar")));
    resp_free(&r);
    char email[128], body[256];
    unique_email(email, sizeof email, "Lucia.Gomez");
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", email);
    c = patch_ok(id, body, &r);
    char *lower = strdup(email);
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
    assert_string_equal(jstr(c, "email"), lower);
    assert_string_equal(jstr(c, "telefono"), "622 33 44 55");
    resp_free(&r);
    /* the desk's listing says the same; an admin may too */
    char path[128];
    snprintf(path, sizeof path, "/api/clientes?id=%s", id);
    http_get(&S, path, ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    json_t *l = json_array_get(json_object_get(r.json, "clientes"), 0);
    assert_string_equal(jstr(l, "nombre"), "Lucía Gómez");
    assert_string_equal(jstr(l, "email"), lower);
    resp_free(&r);
    /* the phone goes; the address stays her way in */
    patch(&ADMIN, id, "{\"telefono\":null}", &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "cliente"), "telefono")));
    resp_free(&r);
    free(lower);
}

static void waiting_messages_follow_the_address_and_old_links_end(void **state)
{
    (void)state;
    char id[40], json[256], old[128], nuevo[128], body[256];
    unique_email(old, sizeof old, "equivocada");
    snprintf(json, sizeof json,
             "{\"nombre\":\"Marta Ruiz\",\"telefono\":\"633 44 55 66\","
             "\"email\":\"%s\"}",
             old);
    desk_client(json, id);
    /* her confirmation waits (the mail server does not answer) */
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE recipient = '%s' AND "
                              "status = 'pending' AND kind = 'confirmacion'",
                              old),
                     1);
    /* a reset link went to the wrong address */
    struct resp r;
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", old);
    http_json(&S, "POST", "/api/auth/recuperar", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM cuenta_tokens WHERE user_id = '%s'", id),
                     1);
    unique_email(nuevo, sizeof nuevo, "correcta");
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", nuevo);
    patch_ok(id, body, &r);
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE recipient = '%s'", old),
                     0);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE recipient = '%s' AND "
                              "status = 'pending' AND kind = 'confirmacion'",
                              nuevo),
                     1);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM cuenta_tokens WHERE user_id = '%s'", id),
                     0);
    /* the same address again changes nothing of the messages */
    patch_ok(id, body, &r);
    resp_free(&r);
    /* the address removed (the phone is left): what waited for it does not go */
    patch_ok(id, "{\"email\":null}", &r);
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "cliente"), "email")));
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE recipient = '%s' AND "
                              "status = 'skipped' AND kind = 'confirmacion'",
                              nuevo),
                     1);
    assert_int_equal(
        db_count(&S,
                 "SELECT count(*) FROM mail_outbox WHERE recipient = '%s' AND status = "
                 "'pending'",
                 nuevo),
        0);
}

/* An address a deleted account had is free for a new client; what still
 * waits to leave for the deleted account stays its own when the new
 * client's address is corrected or removed. */
static void another_persons_messages_to_the_same_address_stay_theirs(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Real");
    char *cita = book(&S, &ana, BARBERO, SERVICIO, "2032-04-05T10:00:00.000Z", NULL);
    json_t *b = json_pack("{s:s}", "password", ana.password);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&S, "DELETE", "/api/auth/me", ana.token, text, &r);
    free(text);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    long hers = db_count(&S, "SELECT count(*) FROM mail_outbox WHERE recipient = '%s'", ana.email);
    assert_true(hers >= 1); /* her cancellation, at least, still waits */
    char id[40], json[256], nuevo[128], body[256];
    snprintf(json, sizeof json, "{\"nombre\":\"Berta\",\"email\":\"%s\"}", ana.email);
    desk_client(json, id);
    unique_email(nuevo, sizeof nuevo, "berta");
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"telefono\":\"644 55 66 77\"}", nuevo);
    patch_ok(id, body, &r);
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE recipient = '%s' AND "
                              "cita_id = '%s'",
                              ana.email, cita),
                     hers);
    /* Berta's own confirmation went with her */
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE recipient = '%s'", nuevo),
                     1);
    patch_ok(id, "{\"email\":null}", &r);
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND status = "
                              "'skipped'",
                              cita),
                     0);
    free(cita);
}

/* PATCH id with body: 409 GEMELA, and nothing of hers changed. */
static void twin_refused(const char *id, const char *body)
{
    char *before = stored(id);
    struct resp r;
    patch(&BARB, id, body, &r);
    expect_error(&r, 409, GEMELA);
    resp_free(&r);
    char *after = stored(id);
    assert_string_equal(after, before);
    free(after);
    free(before);
}

static void a_correction_never_makes_her_another_desk_clients_twin(void **state)
{
    (void)state;
    char a[40], b[40], c[40], d[40];
    desk_client("{\"nombre\":\"Rosa Martín\",\"telefono\":\"655 10 20 30\"}", a);
    desk_client("{\"nombre\":\"Rosa Marín\",\"telefono\":\"655 10 20 99\"}", b);
    /* the same name on another number, another name on the same number:
     * other people (a family phone) */
    desk_client("{\"nombre\":\"Rosa Martín\",\"telefono\":\"666 10 20 30\"}", c);
    desk_client("{\"nombre\":\"Rosa M.\",\"telefono\":\"655 10 20 30\"}", d);
    assert_string_not_equal(c, a);
    assert_string_not_equal(d, a);
    /* her name and number made A's, however written: the desk's next
     * "Rosa Martín, 655 10 20 30" would be A, never her */
    twin_refused(b, "{\"nombre\":\"rosa  martin\",\"telefono\":\"+34 655-10-20-30\"}");
    /* the phone alone, her name already A's; the name alone, her number A's */
    twin_refused(c, "{\"telefono\":\"655102030\"}");
    twin_refused(d, "{\"nombre\":\"Rosa Martin\"}");
    /* her own values again are no twin of hers */
    struct resp r;
    json_t *k = patch_ok(c, "{\"nombre\":\"Rosa Martín\",\"telefono\":\"666 10 20 30\"}", &r);
    assert_string_equal(jstr(k, "nombre"), "Rosa Martín");
    assert_string_equal(jstr(k, "telefono"), "666 10 20 30");
    resp_free(&r);
    /* and a name or number of nobody else's still goes */
    k = patch_ok(b, "{\"nombre\":\"Rosa Martín\",\"telefono\":\"677 10 20 30\"}", &r);
    assert_string_equal(jstr(k, "nombre"), "Rosa Martín");
    resp_free(&r);
}

static void an_account_its_client_uses_or_closed_is_not_the_desks(void **state)
{
    (void)state;
    char *before = stored(ANA.id);
    struct resp r;
    patch(&BARB, ANA.id, "{\"telefono\":\"600 00 00 00\"}", &r);
    expect_error(&r, 409, RECLAMADA);
    resp_free(&r);
    char *after = stored(ANA.id);
    assert_string_equal(after, before);
    free(after);
    free(before);
    struct user gone;
    deleted_user(&S, &gone, "Borrada");
    patch(&BARB, gone.id, "{\"nombre\":\"Otra\"}", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
}

/* An administrator gives a password (PATCH /api/admin/usuarios, as the
 * specification lets him) to a desk client who has no address: she still
 * cannot sign in (there is no address to sign in with), so her account is
 * not claimed. The desk's search and the admin's listing say she cannot
 * enter, and the desk still puts her address right, after which she signs
 * in with that password. (She used to read puede_entrar true, and the desk
 * was refused 409 for good: nobody could give her an address.) */
static void a_password_without_an_address_leaves_her_to_the_desk(void **state)
{
    (void)state;
    char id[40];
    desk_client("{\"nombre\":\"Pilar Sin Correo\",\"telefono\":\"633 44 55 66\"}", id);
    char body[300];
    snprintf(body, sizeof body, "{\"userId\":\"%s\",\"password\":\"pilar123\"}", id);
    struct resp r;
    http_json(&S, "PATCH", "/api/admin/usuarios", ADMIN.token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* she cannot enter: the desk's search and the admin's listing say so */
    char path[128];
    snprintf(path, sizeof path, "/api/clientes?id=%s", id);
    http_get(&S, path, BARB.token, &r);
    assert_int_equal(r.status, 200);
    json_t *c = json_array_get(json_object_get(r.json, "clientes"), 0);
    assert_non_null(c);
    assert_true(json_is_false(json_object_get(c, "puede_entrar")));
    resp_free(&r);
    http_get(&S, "/api/admin/usuarios", ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *u, *mine = NULL;
    json_array_foreach(json_object_get(r.json, "usuarios"), i, u)
    {
        if (!strcmp(jstr(u, "id"), id)) mine = u;
    }
    assert_non_null(mine);
    assert_true(json_is_false(json_object_get(mine, "puede_entrar")));
    resp_free(&r);
    /* the desk gives her the address she dictates, and she signs in */
    char mail[128];
    unique_email(mail, sizeof mail, "pilar");
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", mail);
    c = patch_ok(id, body, &r);
    assert_string_equal(jstr(c, "email"), mail);
    assert_true(json_is_true(json_object_get(c, "puede_entrar")));
    resp_free(&r);
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"pilar123\"}", mail);
    http_json(&S, "POST", "/api/auth/login", NULL, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* from then on her details are hers */
    patch(&BARB, id, "{\"nombre\":\"Otra\"}", &r);
    expect_error(&r, 409, RECLAMADA);
    resp_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_staff_and_bad_input_changes_nothing),
        cmocka_unit_test(the_desk_puts_a_name_a_phone_and_an_address_right),
        cmocka_unit_test(waiting_messages_follow_the_address_and_old_links_end),
        cmocka_unit_test(another_persons_messages_to_the_same_address_stay_theirs),
        cmocka_unit_test(a_correction_never_makes_her_another_desk_clients_twin),
        cmocka_unit_test(an_account_its_client_uses_or_closed_is_not_the_desks),
        cmocka_unit_test(a_password_without_an_address_leaves_her_to_the_desk),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
