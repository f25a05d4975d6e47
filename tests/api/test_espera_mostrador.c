/*
 * test_espera_mostrador.c - the front desk's waiting list over HTTP against
 * the real server, the real SMTP sink and the strict double of WhatsApp's
 * Graph API (tests/doubles/wa_double.c): staff (barbero, admin) put a
 * client on the waiting list with cliente_id, list and remove her entries;
 * she sees them as her own; her duplicate rule and her cap hold, with the
 * same messages and order as her own entry; a client's cliente_id is
 * ignored (she never reaches another client's entries); a desk client with
 * neither an e-mail address nor WhatsApp consent is refused; and one with
 * consent and no address is told of a freed slot by WhatsApp only.
 */
#define _GNU_SOURCE
#include "mostrador_whatsapp_fixture.h"
#include "util/iso8601.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WA_TOKEN "EAAJtestTOKENmostrador0123456789abcd"

static int group_setup(void **state)
{
    (void)state;
    desk_wa_shop_start(WA_TOKEN);
    return 0;
}

static void pedir(const struct user *u, const char *body, struct resp *r)
{
    http_json(&S, "POST", "/api/lista-espera", u->token, body, r);
}

/* u adds an entry (for cliente_id when not NULL) and expects 201: its id. */
static char *pedir_ok(const struct user *u, const char *fecha, const char *barbero,
                      const char *cliente_id)
{
    char body[400];
    entry_body(body, sizeof body, fecha, barbero, cliente_id);
    struct resp r;
    pedir(u, body, &r);
    if (r.status != 201) fail_msg("lista-espera: %ld %s", r.status, r.body);
    json_t *e = json_object_get(r.json, "entrada");
    assert_string_equal(jstr(e, "fecha"), fecha);
    assert_string_equal(jstr(e, "servicio_id"), SERVICIO);
    assert_string_equal(jstr(e, "servicio"), "Corte clásico");
    expect_keys(e, "id", "servicio_id", "servicio", "barbero_id", "barbero", "fecha", "created_at",
                NULL);
    char *id = strdup(jstr(e, "id"));
    resp_free(&r);
    return id;
}

static void expect_pedir(const struct user *u, const char *body, long status, const char *msg)
{
    struct resp r;
    pedir(u, body, &r);
    if (r.status != status) fprintf(stderr, "body %s: %ld %s\n", body, r.status, r.body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

/* How many entries u's listing (for cliente_id) holds, or, with id, whether it holds id. */
static size_t listed(const struct user *u, const char *cliente_id, const char *id)
{
    return lista_espera_listed(&S, u, cliente_id, id);
}

static void quitar(const struct user *u, const char *id, const char *cliente_id, struct resp *r)
{
    char path[200];
    if (cliente_id)
        snprintf(path, sizeof path, "/api/lista-espera/%s?cliente_id=%s", id, cliente_id);
    else
        snprintf(path, sizeof path, "/api/lista-espera/%s", id);
    http_json(&S, "DELETE", path, u->token, NULL, r);
}

static long entries_of(const char *cliente_id)
{
    return db_count(&S, "SELECT count(*) FROM lista_espera WHERE cliente_id = '%s'", cliente_id);
}

/* Her WhatsApp consent, as PUT /api/auth/me/whatsapp records it (a desk
 * client cannot sign in to give it: written straight into the store). */
static void wa_consent(const char *cliente_id, const char *e164, bool withdrawn)
{
    char sql[400];
    snprintf(sql, sizeof sql,
             "INSERT INTO whatsapp_consentimientos (cliente_id, telefono, otorgado_en, "
             "retirado_en) VALUES ('%s', '%s', '2026-01-01T10:00:00.000Z', %s)",
             cliente_id, e164, withdrawn ? "'2026-01-02T10:00:00.000Z'" : "NULL");
    assert_int_equal(db_exec(&S, sql, NULL), 0);
}

/* --- the tests -------------------------------------------------------------------------- */

static void staff_put_a_client_on_the_list_and_she_sees_it(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    char d[11], e[11];
    weekday_utc(0, d);
    weekday_utc(1, e);
    /* a barber adds her for a day with him, an admin for any barber */
    char *a1 = pedir_ok(&BARB, d, BARBERO, ana.id);
    char *a2 = pedir_ok(&ADMIN, e, NULL, ana.id);
    /* they are hers: in her own listing, not in the staff's own */
    assert_int_equal(listed(&ana, NULL, NULL), 2);
    assert_int_equal(listed(&ana, NULL, a1), 1);
    assert_int_equal(listed(&ana, NULL, a2), 1);
    assert_int_equal(listed(&BARB, NULL, a1), 0);
    assert_int_equal(listed(&ADMIN, NULL, a2), 0);
    assert_int_equal(entries_of(ana.id), 2);
    /* staff list them by her id, with the names */
    struct resp r;
    lista_espera_get(&S, &BARB, ana.id, &r);
    assert_int_equal(r.status, 200);
    json_t *all = json_object_get(r.json, "entradas");
    assert_int_equal(json_array_size(all), 2);
    json_t *first = json_array_get(all, 0);
    assert_string_equal(jstr(first, "id"), a1);
    assert_string_equal(jstr(first, "barbero"), "Carlos Méndez");
    assert_true(json_is_null(json_object_get(json_array_get(all, 1), "barbero")));
    resp_free(&r);
    assert_int_equal(listed(&ADMIN, ana.id, NULL), 2);
    /* and take her off: the staff's own call without cliente_id finds nothing */
    quitar(&BARB, a1, NULL, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    quitar(&BARB, a1, ana.id, &r);
    assert_int_equal(r.status, 200);
    assert_true(json_is_true(json_object_get(r.json, "ok")));
    resp_free(&r);
    quitar(&BARB, a1, ana.id, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    assert_int_equal(listed(&ana, NULL, a1), 0);
    assert_int_equal(listed(&ana, NULL, a2), 1);
    /* she removes the other herself */
    quitar(&ana, a2, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    assert_int_equal(entries_of(ana.id), 0);
    free(a1);
    free(a2);
}

static void the_desk_gets_her_checks_in_her_order(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char d[11], body[400];
    weekday_utc(2, d);
    const char *nadie = "8d0f5b2a-3c4d-4e5f-8a6b-7c8d9e0f1a2b";
    /* the fields first, whoever she is */
    snprintf(body, sizeof body, "{\"cliente_id\":\"%s\"}", nadie);
    expect_pedir(&BARB, body, 400, "Faltan campos requeridos");
    snprintf(body, sizeof body,
             "{\"servicio_id\":\"%s\",\"fecha\":\"mañana\",\"cliente_id\":\"%s\"}", SERVICIO,
             ana.id);
    expect_pedir(&BARB, body, 400, "fecha inválida");
    snprintf(body, sizeof body,
             "{\"servicio_id\":\"%s\",\"fecha\":\"2001-01-01\",\"cliente_id\":\"%s\"}", SERVICIO,
             nadie);
    expect_pedir(&BARB, body, 400, "La fecha ya pasó");
    snprintf(body, sizeof body,
             "{\"servicio_id\":\"%s\",\"fecha\":\"2999-01-01\",\"cliente_id\":\"%s\"}", SERVICIO,
             ana.id);
    expect_pedir(&BARB, body, 400, "Fecha fuera del plazo de reserva");
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":7,\"cliente_id\":\"%s\"}",
             SERVICIO, ana.id);
    expect_pedir(&BARB, body, 400, "Campo inválido: fecha");
    /* then the client: unknown, not an id, another type, a staff account */
    entry_body(body, sizeof body, d, NULL, nadie);
    expect_pedir(&BARB, body, 404, "Cliente no encontrado");
    entry_body(body, sizeof body, d, NULL, "no-es-un-id");
    expect_pedir(&ADMIN, body, 404, "Cliente no encontrado");
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"cliente_id\":5}",
             SERVICIO, d);
    expect_pedir(&BARB, body, 404, "Cliente no encontrado");
    entry_body(body, sizeof body, d, NULL, ADMIN.id);
    expect_pedir(&BARB, body, 404, "Cliente no encontrado");
    /* before the service and the barber */
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"cliente_id\":\"%s\"}",
             nadie, d, nadie);
    expect_pedir(&BARB, body, 404, "Cliente no encontrado");
    snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"cliente_id\":\"%s\"}",
             nadie, d, ana.id);
    expect_pedir(&BARB, body, 404, "Servicio no encontrado");
    entry_body(body, sizeof body, d, nadie, ana.id);
    expect_pedir(&BARB, body, 404, "Barbero no encontrado");
    assert_int_equal(entries_of(ana.id), 0);
    /* her duplicate rule: the desk's entry and her own are one list */
    char *id = pedir_ok(&BARB, d, BARBERO, ana.id);
    entry_body(body, sizeof body, d, BARBERO, ana.id);
    expect_pedir(&ADMIN, body, 409, "Ya estás en la lista de espera de ese día");
    entry_body(body, sizeof body, d, BARBERO, NULL);
    expect_pedir(&ana, body, 409, "Ya estás en la lista de espera de ese día");
    /* another client's same day is no duplicate */
    free(pedir_ok(&BARB, d, BARBERO, bea.id));
    /* her cap: 10 entries on today or later, hers and the desk's together */
    for (int i = 1; i < 10; i++) {
        char f[11];
        weekday_utc(2 + i, f);
        free(i % 2 ? pedir_ok(&ana, f, NULL, NULL) : pedir_ok(&BARB, f, NULL, ana.id));
    }
    char f[11];
    weekday_utc(12, f);
    entry_body(body, sizeof body, f, NULL, ana.id);
    expect_pedir(&BARB, body, 400, "Máximo de avisos alcanzado");
    entry_body(body, sizeof body, f, NULL, NULL);
    expect_pedir(&ana, body, 400, "Máximo de avisos alcanzado");
    /* the cap is hers, not the shop's: Bea still has room */
    free(pedir_ok(&BARB, f, NULL, bea.id));
    assert_int_equal(entries_of(ana.id), 10);
    /* listing and removing for a client who is not one */
    struct resp r;
    lista_espera_get(&S, &BARB, nadie, &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    lista_espera_get(&S, &ADMIN, "x", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    quitar(&BARB, id, nadie, &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    /* the client first, whatever the entry's id: as GET answers */
    quitar(&BARB, "nope", "nope", &r);
    expect_error(&r, 404, "Cliente no encontrado");
    resp_free(&r);
    quitar(&BARB, "nope", bea.id, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    /* an entry of hers is not Bea's */
    quitar(&BARB, id, bea.id, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    assert_int_equal(listed(&ana, NULL, id), 1);
    free(id);
}

static void a_client_never_acts_for_another(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char d[11];
    weekday_utc(3, d);
    char *eb = pedir_ok(&bea, d, NULL, NULL);
    /* Ana naming Bea adds her own entry, as GET /api/citas ignores a
     * client's cliente_id */
    char *ea = pedir_ok(&ana, d, NULL, bea.id);
    assert_int_equal(listed(&ana, NULL, ea), 1);
    assert_int_equal(listed(&bea, NULL, ea), 0);
    assert_int_equal(entries_of(bea.id), 1);
    /* her listing by Bea's id is her own */
    assert_int_equal(listed(&ana, bea.id, eb), 0);
    assert_int_equal(listed(&ana, bea.id, ea), 1);
    /* and she cannot remove Bea's */
    struct resp r;
    quitar(&ana, eb, bea.id, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    quitar(&ana, eb, NULL, &r);
    expect_error(&r, 404, "Aviso no encontrado");
    resp_free(&r);
    assert_int_equal(listed(&bea, NULL, eb), 1);
    /* an unknown cliente_id from a client changes nothing either */
    assert_int_equal(listed(&ana, "8d0f5b2a-3c4d-4e5f-8a6b-7c8d9e0f1a2b", ea), 1);
    free(ea);
    free(eb);
}

static void a_desk_client_with_no_channel_is_refused(void **state)
{
    (void)state;
    char d[11], body[400];
    weekday_utc(4, d);
    /* booked at the desk with a phone, no e-mail, no consent */
    char *luz = desk_client("Luz Mar", "600 111 201", d, "09:00");
    entry_body(body, sizeof body, d, NULL, luz);
    expect_pedir(&BARB, body, 400, SIN_CANAL);
    assert_int_equal(entries_of(luz), 0);
    /* a consent withdrawn is none */
    char *sol = desk_client("Sol Paz", "600 111 202", d, "09:30");
    wa_consent(sol, "34600111202", true);
    entry_body(body, sizeof body, d, NULL, sol);
    expect_pedir(&ADMIN, body, 400, SIN_CANAL);
    assert_int_equal(entries_of(sol), 0);
    /* the fields and the client come first */
    snprintf(body, sizeof body,
             "{\"servicio_id\":\"%s\",\"fecha\":\"2001-01-01\","
             "\"cliente_id\":\"%s\"}",
             SERVICIO, luz);
    expect_pedir(&BARB, body, 400, "La fecha ya pasó");
    /* a deleted account is no client the desk can name */
    struct user eva;
    deleted_user(&S, &eva, "Eva Luna");
    entry_body(body, sizeof body, d, NULL, eva.id);
    expect_pedir(&BARB, body, 404, "Cliente no encontrado");
    /* with her consent in force she is accepted */
    wa_consent(luz, "34600111201", false);
    free(pedir_ok(&BARB, d, NULL, luz));
    assert_int_equal(entries_of(luz), 1);
    free(luz);
    free(sol);
}

static void a_desk_client_without_email_is_told_by_whatsapp(void **state)
{
    (void)state;
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    char d[11];
    weekday_utc(5, d);
    char ten[32];
    snprintf(ten, sizeof ten, "%sT10:00:00.000Z", d);
    /* a phone caller: created at the desk with her phone, her consent recorded */
    char *mar = desk_client("Mar Gil", "611 000 301", d, "16:00");
    wa_consent(mar, "34611000301", false);
    /* the day's 10:00 is taken; the desk puts her on the list for it */
    char *cita = book(&S, &ana, BARBERO, SERVICIO, ten, NULL);
    char *entrada = pedir_ok(&BARB, d, BARBERO, mar);
    /* the 10:00 frees */
    char path[120];
    snprintf(path, sizeof path, "/api/citas/%s/cancelar", cita);
    struct resp r;
    http_json(&S, "POST", path, ana.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    json_t *m = wa_sink_sole(&D, &S, "34611000301", WAIT_MS);
    assert_string_equal(jstr(json_object_get(m, "template"), "name"), TPL_ESPERA);
    assert_string_equal(wa_param(m, 0), "Mar Gil");
    assert_string_equal(wa_param(m, 1), "Corte clásico");
    assert_string_equal(wa_param(m, 2), "Carlos Méndez");
    char link[400];
    snprintf(link, sizeof link, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s", S.base,
             SERVICIO, BARBERO, d, ten);
    assert_string_equal(wa_param(m, 5), link);
    json_decref(m);
    /* by WhatsApp only: no e-mail notice for her */
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "cita_id = '%s' AND canal = 'email'",
                              entrada),
                     0);
    free(entrada);
    free(cita);
    free(mar);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(staff_put_a_client_on_the_list_and_she_sees_it),
        cmocka_unit_test(the_desk_gets_her_checks_in_her_order),
        cmocka_unit_test(a_client_never_acts_for_another),
        cmocka_unit_test(a_desk_client_with_no_channel_is_refused),
        cmocka_unit_test(a_desk_client_without_email_is_told_by_whatsapp),
    };
    return cmocka_run_group_tests(tests, group_setup, desk_wa_group_teardown);
}
