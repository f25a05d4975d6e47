/*
 * test_barbero_aviso.c - the barber kept informed, over HTTP against the
 * real server and the real SMTP sink: the admin sets a barber's e-mail and
 * linked user through PATCH /api/admin/barberos/{id} (each bad value
 * refused with nothing changed, only the admin may), GET /api/auth/me of
 * the linked user names the barber, and the barber gets one e-mail for
 * each booking, reschedule and cancel, whose .ics updates one event: the
 * same UID, SEQUENCE 0, 1, 2, METHOD REQUEST, REQUEST, CANCEL.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MAIL_MS 60000
#define UNKNOWN_ID   "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"

static struct srv S;
static struct smtp_sink K;
static char *BARBERO, *OTRO, *SERVICIO;
static struct user ANA, BARB, BARB2, ADMIN;
static char BARB_MAIL[128];

static int group_setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_MIN_NOTICE_MIN=0", NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    OTRO = make_barbero(&S, "Luis Sin Correo");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_user(&S, &ANA, "Ana Pérez");
    make_user(&S, &BARB, "Carlos Usuario", "barbero");
    make_user(&S, &BARB2, "Otro Usuario", "barbero");
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    unique_email(BARB_MAIL, sizeof BARB_MAIL, "carlos");
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

static void patch(const struct user *u, const char *id, const char *body, struct resp *r)
{
    char path[128];
    snprintf(path, sizeof path, "/api/admin/barberos/%s", id);
    http_json(&S, "PATCH", path, u ? u->token : NULL, body, r);
}

static void patch_expect(const struct user *u, const char *id, const char *body, long status,
                         const char *msg)
{
    struct resp r;
    patch(u, id, body, &r);
    if (r.status != status) fprintf(stderr, "PATCH %s: %ld %s\n", body, r.status, r.body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

/* The barber's contact as the admin's listing shows it: "email|usuario_id". */
static char *contact_of(const char *id)
{
    struct resp r;
    http_get(&S, "/api/admin/barberos", ADMIN.token, &r);
    assert_int_equal(r.status, 200);
    size_t i;
    json_t *b;
    char *out = NULL;
    json_array_foreach(json_object_get(r.json, "barberos"), i, b)
    {
        if (strcmp(jstr(b, "id"), id) != 0) continue;
        expect_keys(b, "id", "nombre", "foto_url", "activo", "email", "usuario_id", "feed", NULL);
        const char *e = jstr(b, "email"), *u = jstr(b, "usuario_id");
        if (asprintf(&out, "%s|%s", e ? e : "null", u ? u : "null") < 0) fail_msg("asprintf");
    }
    resp_free(&r);
    assert_non_null(out);
    return out;
}

/* --- the admin sets the address and the linked user ------------------------------------ */

static void the_admin_sets_the_barbers_email_and_user_and_bad_values_change_nothing(void **state)
{
    (void)state;
    char *body = NULL;
    /* the address is kept normalised; the user must be of rol barbero */
    if (asprintf(&body, "{\"email\":\"  %s \",\"usuario_id\":\"%s\"}", BARB_MAIL, BARB.id) < 0)
        fail_msg("asprintf");
    struct resp r;
    patch(&ADMIN, BARBERO, body, &r);
    free(body);
    assert_int_equal(r.status, 200);
    json_t *b = json_object_get(r.json, "barbero");
    assert_string_equal(jstr(b, "email"), BARB_MAIL);
    assert_string_equal(jstr(b, "usuario_id"), BARB.id);
    resp_free(&r);
    char *before = contact_of(BARBERO);

    /* each bad value: its answer, and nothing changed */
    patch_expect(&ADMIN, BARBERO, "{\"email\":\"no es un correo\"}", 400, "Campo inválido: email");
    patch_expect(&ADMIN, BARBERO, "{\"email\":42}", 400, "Campo inválido: email");
    patch_expect(&ADMIN, BARBERO, "{\"usuario_id\":\"" UNKNOWN_ID "\"}", 404,
                 "Usuario no encontrado");
    patch_expect(&ADMIN, BARBERO, "{\"usuario_id\":\"no-uuid\"}", 404, "Usuario no encontrado");
    if (asprintf(&body, "{\"usuario_id\":\"%s\"}", ANA.id) < 0) fail_msg("asprintf");
    patch_expect(&ADMIN, BARBERO, body, 400, "El usuario no tiene el rol barbero");
    free(body);
    /* one user speaks for one barber */
    if (asprintf(&body, "{\"usuario_id\":\"%s\"}", BARB.id) < 0) fail_msg("asprintf");
    patch_expect(&ADMIN, OTRO, body, 409, "El usuario ya está vinculado a otro barbero");
    /* only the admin */
    patch_expect(&ANA, BARBERO, "{\"email\":null}", 403, "Sin permisos");
    patch_expect(&BARB, BARBERO, "{\"email\":null}", 403, "Sin permisos");
    patch_expect(NULL, BARBERO, "{\"email\":null}", 403, "Sin permisos");
    free(body);
    char *after = contact_of(BARBERO);
    assert_string_equal(before, after);
    free(after);
    char *otro = contact_of(OTRO);
    assert_string_equal(otro, "null|null");
    free(otro);

    /* the public listing never shows them */
    http_get(&S, "/api/barberos", NULL, &r);
    assert_int_equal(r.status, 200);
    assert_null(strstr(r.body, BARB_MAIL));
    assert_null(strstr(r.body, BARB.id));
    resp_free(&r);
    free(before);
}

static void me_names_the_barber_a_linked_user_speaks_for(void **state)
{
    (void)state;
    struct resp r;
    http_get(&S, "/api/auth/me", BARB.token, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "user", "perfil", "barbero_id", NULL);
    assert_string_equal(jstr(r.json, "barbero_id"), BARBERO);
    resp_free(&r);
    /* a barber user with no barber, a client: the contract's two members */
    http_get(&S, "/api/auth/me", BARB2.token, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "user", "perfil", NULL);
    resp_free(&r);
    http_get(&S, "/api/auth/me", ANA.token, &r);
    expect_keys(r.json, "user", "perfil", NULL);
    resp_free(&r);
    /* unlinked: none again */
    patch_expect(&ADMIN, BARBERO, "{\"usuario_id\":null}", 200, NULL);
    http_get(&S, "/api/auth/me", BARB.token, &r);
    expect_keys(r.json, "user", "perfil", NULL);
    resp_free(&r);
    char *body = NULL;
    if (asprintf(&body, "{\"usuario_id\":\"%s\"}", BARB.id) < 0) fail_msg("asprintf");
    patch_expect(&ADMIN, BARBERO, body, 200, NULL);
    free(body);
}

/* "" is empty, as null (docs/decisions.md, Input): it clears the linked user
 * as it clears the address, rather than naming no user (404) */
static void an_empty_usuario_id_unlinks_as_null_does(void **state)
{
    (void)state;
    char *body = NULL;
    patch_expect(&ADMIN, BARBERO, "{\"usuario_id\":\"\"}", 200, NULL);
    char *c = contact_of(BARBERO);
    if (asprintf(&body, "%s|null", BARB_MAIL) < 0) fail_msg("asprintf");
    assert_string_equal(c, body);
    free(body);
    free(c);
    struct resp r;
    http_get(&S, "/api/auth/me", BARB.token, &r);
    assert_int_equal(r.status, 200);
    expect_keys(r.json, "user", "perfil", NULL);
    resp_free(&r);
    patch_expect(&ADMIN, BARBERO, "{\"email\":\"\",\"usuario_id\":\"\"}", 200, NULL);
    c = contact_of(BARBERO);
    assert_string_equal(c, "null|null");
    free(c);
    /* linked again, with the address, for the e-mails below */
    if (asprintf(&body, "{\"email\":\"%s\",\"usuario_id\":\"%s\"}", BARB_MAIL, BARB.id) < 0)
        fail_msg("asprintf");
    patch_expect(&ADMIN, BARBERO, body, 200, NULL);
    free(body);
    c = contact_of(BARBERO);
    if (asprintf(&body, "%s|%s", BARB_MAIL, BARB.id) < 0) fail_msg("asprintf");
    assert_string_equal(c, body);
    free(body);
    free(c);
}

/* --- the e-mails ------------------------------------------------------------------------- */

/* The mail whose .ics SEQUENCE is seq. */
static json_t *with_sequence(json_t *all, const char *seq)
{
    size_t i;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        if (ics_value(m, "SEQUENCE") && !strcmp(ics_value(m, "SEQUENCE"), seq)) return m;
    }
    fail_msg("no mail with SEQUENCE %s", seq);
    return NULL;
}

static void the_barber_gets_one_mail_per_change_updating_one_event(void **state)
{
    (void)state;
    int64_t base = iso8601_days_from_civil(2032, 4, 5) * 86400000LL + 9 * 3600000LL;
    char f[32], g[32];
    iso8601_format(base, f);
    iso8601_format(base + 2 * 3600000LL, g);
    char *id = book(&S, &ANA, BARBERO, SERVICIO, f, "Degradado; corto, por favor");
    char *body = NULL;
    if (asprintf(&body, "{\"fecha_inicio\":\"%s\"}", g) < 0) fail_msg("asprintf");
    cita_cambio(&S, &BARB, id, "reprogramar", body);
    free(body);
    cita_cambio(&S, &ANA, id, "cancelar", NULL);

    if (!smtp_sink_wait_messages(&K, BARB_MAIL, id, 3, WAIT_MAIL_MS))
        fail_msg("the barber's three mails did not arrive");
    /* the client's own three arrive as before */
    if (!smtp_sink_wait_messages(&K, ANA.email, id, 3, WAIT_MAIL_MS))
        fail_msg("the client's mails did not arrive");
    json_t *all = smtp_sink_messages(&K, BARB_MAIL, id);
    assert_int_equal(json_array_size(all), 3);
    char uid[64];
    snprintf(uid, sizeof uid, "%s@barberia", id);
    size_t i;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        if (json_array_size(json_object_get(m, "problems")) > 0)
            fail_msg("a message breaks the rules: %s",
                     json_dumps(json_object_get(m, "problems"), 0));
        assert_string_equal(ics_value(m, "UID"), uid);
        char att[160];
        snprintf(att, sizeof att, "mailto:%s", BARB_MAIL);
        assert_string_equal(ics_value(m, "ATTENDEE"), att);
        assert_string_equal(ics_value(m, "ORGANIZER"), "mailto:citas@barberia.test");
        assert_non_null(strstr(jstr(m, "text"), "Hola, Carlos Méndez:"));
        assert_non_null(strstr(jstr(m, "text"), "Ana Pérez"));
        assert_non_null(strstr(ics_value(m, "SUMMARY"), "Ana Pérez"));
    }
    char dt[17], dt2[17];
    snprintf(dt, sizeof dt, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", f, f + 5, f + 8, f + 11, f + 14, f + 17);
    snprintf(dt2, sizeof dt2, "%.4s%.2s%.2sT%.2s%.2s%.2sZ", g, g + 5, g + 8, g + 11, g + 14,
             g + 17);
    json_t *nueva = with_sequence(all, "0");
    assert_string_equal(ics_value(nueva, "METHOD"), "REQUEST");
    assert_string_equal(jstr(nueva, "ics_method_param"), "REQUEST");
    assert_string_equal(ics_value(nueva, "STATUS"), "CONFIRMED");
    assert_string_equal(ics_value(nueva, "DTSTART"), dt);
    assert_non_null(strstr(jstr(nueva, "subject"), "Nueva cita"));
    json_t *cambiada = with_sequence(all, "1");
    assert_string_equal(ics_value(cambiada, "METHOD"), "REQUEST");
    assert_string_equal(ics_value(cambiada, "DTSTART"), dt2);
    assert_non_null(strstr(jstr(cambiada, "subject"), "Cita cambiada"));
    json_t *cancelada = with_sequence(all, "2");
    assert_string_equal(ics_value(cancelada, "METHOD"), "CANCEL");
    assert_string_equal(jstr(cancelada, "ics_method_param"), "CANCEL");
    assert_string_equal(ics_value(cancelada, "STATUS"), "CANCELLED");
    assert_non_null(strstr(jstr(cancelada, "subject"), "Cita cancelada"));
    json_decref(all);
    /* exactly once each: the outbox holds three notices, all sent */
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND kind IN "
                              "('aviso_cita', 'aviso_cambio', 'aviso_cancelacion') AND "
                              "status = 'sent'",
                              id),
                     3);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s'", id), 6);
    free(id);
}

static void a_barber_without_an_address_gets_no_mail(void **state)
{
    (void)state;
    int64_t base = iso8601_days_from_civil(2032, 4, 6) * 86400000LL + 9 * 3600000LL;
    char f[32];
    iso8601_format(base, f);
    char *id = book(&S, &ANA, OTRO, SERVICIO, f, NULL);
    cita_cambio(&S, &ADMIN, id, "cancelar", NULL);
    if (!smtp_sink_wait_messages(&K, ANA.email, id, 2, WAIT_MAIL_MS))
        fail_msg("the client's mails did not arrive");
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND kind LIKE "
                              "'aviso%%'",
                              id),
                     0);
    free(id);
}

/* Whether the barber's notice of the cita ud was tried and waits. */
static bool tried(void *ud)
{
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND kind = "
                    "'aviso_cita' AND status = 'pending' AND attempts > 0 AND locked_until IS NULL",
                    (const char *)ud) == 1;
}

/* A notice the mail server has not taken yet (it is down) when the admin
 * changes the barber's address goes to the new one; cleared (a barber who
 * left), it goes nowhere: the old mailbox is no longer his. */
static void a_waiting_notice_follows_the_barbers_new_address(void **state)
{
    (void)state;
    char *nuevo = make_barbero(&S, "Mario Traslado");
    char antes[128], despues[128], body[200];
    unique_email(antes, sizeof antes, "mario-antes");
    unique_email(despues, sizeof despues, "mario-despues");
    struct resp r;
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", antes);
    patch(&ADMIN, nuevo, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    int port = K.port;
    assert_int_equal(smtp_sink_stop(&K), 0);
    int64_t base = iso8601_days_from_civil(2032, 4, 7) * 86400000LL + 9 * 3600000LL;
    char f[32], g[32];
    iso8601_format(base, f);
    iso8601_format(base + 3600000LL, g);
    char *id = book(&S, &ANA, nuevo, SERVICIO, f, NULL);
    if (!wait_until(tried, id, WAIT_MAIL_MS)) fail_msg("the notice was never tried");
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", despues);
    patch(&ADMIN, nuevo, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    smtp_sink_start(&K, S.dir, port, NULL);
    if (!smtp_sink_wait_messages(&K, despues, id, 1, WAIT_MAIL_MS))
        fail_msg("no notice at the new address");
    json_t *old = smtp_sink_messages(&K, antes, id);
    assert_int_equal(json_array_size(old), 0);
    json_decref(old);

    /* cleared while another waits: skipped, sent to no one */
    assert_int_equal(smtp_sink_stop(&K), 0);
    char *otra = book(&S, &ANA, nuevo, SERVICIO, g, NULL);
    if (!wait_until(tried, otra, WAIT_MAIL_MS)) fail_msg("the second notice was never tried");
    patch(&ADMIN, nuevo, "{\"email\":null}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    smtp_sink_start(&K, S.dir, port, NULL);
    if (!smtp_sink_wait_messages(&K, ANA.email, otra, 1, WAIT_MAIL_MS))
        fail_msg("the client's mail did not arrive");
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND kind = "
                              "'aviso_cita' AND status = 'skipped' AND last_error = 'el barbero "
                              "ya no tiene correo'",
                              otra),
                     1);
    json_t *none = smtp_sink_messages(&K, despues, otra);
    assert_int_equal(json_array_size(none), 0);
    json_decref(none);
    free(otra);
    free(id);
    free(nuevo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_admin_sets_the_barbers_email_and_user_and_bad_values_change_nothing),
        cmocka_unit_test(me_names_the_barber_a_linked_user_speaks_for),
        cmocka_unit_test(an_empty_usuario_id_unlinks_as_null_does),
        cmocka_unit_test(the_barber_gets_one_mail_per_change_updating_one_event),
        cmocka_unit_test(a_barber_without_an_address_gets_no_mail),
        cmocka_unit_test(a_waiting_notice_follows_the_barbers_new_address),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
