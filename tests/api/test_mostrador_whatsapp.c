/*
 * test_mostrador_whatsapp.c - the front desk records a client's WhatsApp
 * consent (GET/PUT /api/clientes/{id}/whatsapp) over HTTP against the real
 * server, the real SMTP sink and the strict double of WhatsApp's Graph API
 * (tests/doubles/wa_double.c): staff record the consent of a client the
 * desk created with a phone and no e-mail, her next booking's confirmation
 * then goes by WhatsApp and the desk can put her on the waiting list; the
 * desk or she withdraws it; a client gets 403; an unknown client, a staff
 * account or an id that is not a UUID 404; the body is judged with the
 * messages of her own PUT /api/auth/me/whatsapp. Every change records who
 * made it (registrado_por: the staff user at the desk, null when she made
 * it herself), in the answers and in the database.
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

#define WA_TOKEN "EAAJtestTOKENmostradorWA0123456789ab"

static int group_setup(void **state)
{
    (void)state;
    desk_wa_shop_start(WA_TOKEN);
    return 0;
}

/* The desk books cliente_id at hhmm of fecha: the appointment's id. */
static char *desk_book(const char *cliente_id, const char *fecha, const char *hhmm)
{
    char body[600];
    snprintf(body, sizeof body,
             "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%sT%s:00Z\","
             "\"cliente_id\":\"%s\"}",
             BARBERO, SERVICIO, fecha, hhmm, cliente_id);
    struct resp r;
    http_json(&S, "POST", "/api/agenda/citas", BARB.token, body, &r);
    if (r.status != 201) fail_msg("desk booking: %ld %s", r.status, r.body);
    char *id = strdup(jstr(json_object_get(r.json, "cita"), "id"));
    resp_free(&r);
    return id;
}

/* PUT /api/clientes/{cliente}/whatsapp as u with body. */
static void desk_put(const struct user *u, const char *cliente, const char *body, struct resp *r)
{
    char path[200];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", cliente);
    http_json(&S, "PUT", path, u ? u->token : NULL, body, r);
}

static void desk_get(const struct user *u, const char *cliente, struct resp *r)
{
    char path[200];
    snprintf(path, sizeof path, "/api/clientes/%s/whatsapp", cliente);
    http_get(&S, path, u ? u->token : NULL, r);
}

static void expect_put(const struct user *u, const char *cliente, const char *body, long status,
                       const char *msg)
{
    struct resp r;
    desk_put(u, cliente, body, &r);
    if (r.status != status) fprintf(stderr, "body %s: %ld %s\n", body, r.status, r.body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

/* The consent the answer r carries: acepta, telefono (NULL when null). */
static bool acepta_of(const struct resp *r, const char **tel)
{
    json_t *w = json_object_get(r->json, "whatsapp");
    expect_keys(w, "acepta", "telefono", "otorgado_en", "retirado_en", "registrado_por", NULL);
    *tel = jstr(w, "telefono");
    return json_is_true(json_object_get(w, "acepta"));
}

/* That the last change of the consent the answer r carries was made by the
 * staff user por: registrado_por is por's id, or null when por is NULL
 * (she made it herself, or none was given). */
static void expect_por(const struct resp *r, const char *por)
{
    json_t *v = json_object_get(json_object_get(r->json, "whatsapp"), "registrado_por");
    bool same = por ? json_is_string(v) && !strcmp(json_string_value(v), por) : json_is_null(v);
    if (!same) fail_msg("registrado_por is not %s: %s", por ? por : "null", r->body);
}

static long consents_of(const char *cliente_id)
{
    return db_count(&S, "SELECT count(*) FROM whatsapp_consentimientos WHERE cliente_id = '%s'",
                    cliente_id);
}

/* Whether the database says the consent of cliente_id was last changed by
 * the staff user por (NULL: by her herself). */
static bool stored_por(const char *cliente_id, const char *por)
{
    if (!por)
        return db_count(&S,
                        "SELECT count(*) FROM whatsapp_consentimientos WHERE cliente_id = '%s' "
                        "AND registrado_por IS NULL",
                        cliente_id) == 1;
    return db_count(&S,
                    "SELECT count(*) FROM whatsapp_consentimientos WHERE cliente_id = '%s' "
                    "AND registrado_por = '%s'",
                    cliente_id, por) == 1;
}

/* The templates the double accepted for the number to. */
static size_t templates_to(const char *to, const char *name)
{
    json_t *all = wa_sink_accepted(&D, to);
    size_t i, n = 0;
    json_t *m;
    json_array_foreach(all, i, m)
    {
        if (!strcmp(jstr(json_object_get(m, "template"), "name"), name)) n++;
    }
    json_decref(all);
    return n;
}

/* --- the tests -------------------------------------------------------------------------- */

static void the_desk_records_her_consent_and_she_is_told_by_whatsapp(void **state)
{
    (void)state;
    char d[11], e[11], body[400];
    weekday_utc(0, d);
    weekday_utc(1, e);
    /* a phone caller: created at the desk with her phone, no e-mail */
    char *luz = desk_client("Luz Mar", "600 111 201", d, "09:00");
    struct resp r;
    const char *tel;
    desk_get(&BARB, luz, &r);
    assert_int_equal(r.status, 200);
    assert_false(acepta_of(&r, &tel));
    assert_null(tel);
    expect_por(&r, NULL);
    resp_free(&r);
    /* no channel yet: the waiting list refuses her */
    entry_body(body, sizeof body, e, NULL, luz);
    struct resp w;
    http_json(&S, "POST", "/api/lista-espera", BARB.token, body, &w);
    expect_error(&w, 400, SIN_CANAL);
    resp_free(&w);
    /* she says yes on the phone: the barber records it, for her profile's number */
    desk_put(&BARB, luz, "{\"acepta\": true}", &r);
    assert_int_equal(r.status, 200);
    assert_true(acepta_of(&r, &tel));
    assert_string_equal(tel, "+34600111201");
    assert_non_null(jstr(json_object_get(r.json, "whatsapp"), "otorgado_en"));
    assert_true(json_is_null(json_object_get(json_object_get(r.json, "whatsapp"), "retirado_en")));
    /* the data says who recorded it: the barber */
    expect_por(&r, BARB.id);
    resp_free(&r);
    assert_true(stored_por(luz, BARB.id));
    desk_get(&ADMIN, luz, &r);
    assert_int_equal(r.status, 200);
    assert_true(acepta_of(&r, &tel));
    assert_string_equal(tel, "+34600111201");
    expect_por(&r, BARB.id);
    resp_free(&r);
    /* the log says the desk recorded it, and who; never her number */
    assert_true(srv_wait_log(&S, "at the front desk by", WAIT_MS));
    char *log = srv_log(&S);
    char line[200];
    snprintf(line, sizeof line, "whatsapp: consent of %s given at the front desk by %s", luz,
             BARB.id);
    if (!strstr(log, line)) fail_msg("no line \"%s\" in the log:\n%s", line, log);
    assert_null(strstr(log, "600111201"));
    free(log);
    /* her next booking's confirmation goes by WhatsApp */
    char *cita = desk_book(luz, e, "11:00");
    json_decref(wa_sink_sole(&D, &S, "34600111201", WAIT_MS));
    assert_int_equal(templates_to("34600111201", "barberia_confirmacion"), 1);
    /* and the desk can now put her on the waiting list */
    http_json(&S, "POST", "/api/lista-espera", BARB.token, body, &w);
    if (w.status != 201) fail_msg("lista-espera: %ld %s", w.status, w.body);
    resp_free(&w);
    free(cita);
    free(luz);
}

/* A caller on the phone the shop does not know, on a full day: the desk
 * registers her (POST /api/clientes), records her consent and puts her on
 * the waiting list, without booking anything. */
static void a_new_caller_goes_on_the_waiting_list(void **state)
{
    (void)state;
    char e[11], body[400];
    weekday_utc(2, e);
    struct resp r;
    http_json(&S, "POST", "/api/clientes", BARB.token,
              "{\"nombre\":\"Sol Ramos\",\"telefono\":\"600 111 209\"}", &r);
    if (r.status != 201) fail_msg("alta: %ld %s", r.status, r.body);
    char *sol = strdup(jstr(json_object_get(r.json, "cliente"), "id"));
    resp_free(&r);
    entry_body(body, sizeof body, e, NULL, sol);
    http_json(&S, "POST", "/api/lista-espera", BARB.token, body, &r);
    expect_error(&r, 400, SIN_CANAL);
    resp_free(&r);
    desk_put(&BARB, sol, "{\"acepta\": true}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_json(&S, "POST", "/api/lista-espera", BARB.token, body, &r);
    if (r.status != 201) fail_msg("lista-espera: %ld %s", r.status, r.body);
    resp_free(&r);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM lista_espera WHERE cliente_id = '%s'", sol),
                     1);
    assert_int_equal(db_count(&S, "SELECT count(*) FROM citas WHERE cliente_id = '%s'", sol), 0);
    free(sol);
}

/* The number the desk recorded was mistyped: the confirmation, with her
 * appointment's link, went to a stranger's phone. Corrected, that link
 * opens nothing any more; her next message carries one that does. */
static void a_corrected_number_ends_the_links_sent_to_the_old_one(void **state)
{
    (void)state;
    char d[11], e[11];
    weekday_utc(6, d);
    weekday_utc(7, e);
    char *mar = desk_client("Mara Gil", "600 111 501", d, "09:00");
    struct resp r;
    desk_put(&BARB, mar, "{\"acepta\": true, \"telefono\": \"600 111 509\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *cita = desk_book(mar, e, "12:00");
    if (!wa_sink_wait(&D, "34600111509", WAIT_MS)) fail_msg("no WhatsApp confirmation");
    json_t *all = wa_sink_accepted(&D, "34600111509");
    const char *link = wa_param(json_array_get(all, 0), 5);
    const char *tok = link ? strstr(link, "/c/") : NULL;
    if (!tok) fail_msg("no link in the confirmation: %s", link ? link : "(none)");
    char path[200];
    snprintf(path, sizeof path, "/api/gestion/%s", tok + 3);
    json_decref(all);
    http_get(&S, path, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the desk puts the number right */
    desk_put(&BARB, mar, "{\"acepta\": true, \"telefono\": \"600 111 501\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    char cancel[260];
    snprintf(cancel, sizeof cancel, "%s/cancelar", path);
    http_json(&S, "POST", cancel, NULL, NULL, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM citas WHERE id = '%s' AND estado = "
                              "'confirmada'",
                              cita),
                     1);
    free(cita);
    free(mar);
}

/* The desk writes her number another way (spaces, the country code): the
 * same phone, so the links already sent to it keep opening her appointment
 * (a reformat used to end them all, as a new number does); a number that
 * really changes still ends them. */
static void a_number_written_another_way_keeps_her_links(void **state)
{
    (void)state;
    char d[11], e[11];
    weekday_utc(8, d);
    weekday_utc(9, e);
    char *noa = desk_client("Noa Paz", "600111601", d, "09:00");
    struct resp r;
    desk_put(&BARB, noa, "{\"acepta\": true}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *cita = desk_book(noa, e, "12:00");
    if (!wa_sink_wait(&D, "34600111601", WAIT_MS)) fail_msg("no WhatsApp confirmation");
    json_t *all = wa_sink_accepted(&D, "34600111601");
    const char *link = wa_param(json_array_get(all, 0), 5);
    const char *tok = link ? strstr(link, "/c/") : NULL;
    if (!tok) fail_msg("no link in the confirmation: %s", link ? link : "(none)");
    char path[200], corr[200];
    snprintf(path, sizeof path, "/api/gestion/%s", tok + 3);
    json_decref(all);
    snprintf(corr, sizeof corr, "/api/clientes/%s", noa);
    /* the same number, written as people write it */
    static const char *const same[] = {"600 11 16 01", "+34 600 111 601", "0034 600-111-601"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char body[100];
        snprintf(body, sizeof body, "{\"telefono\": \"%s\"}", same[i]);
        http_json(&S, "PATCH", corr, BARB.token, body, &r);
        assert_int_equal(r.status, 200);
        resp_free(&r);
        http_get(&S, path, NULL, &r);
        if (r.status != 200) fail_msg("after \"%s\": %ld %s", same[i], r.status, r.body);
        resp_free(&r);
    }
    /* another number: the link sent to the old one opens nothing */
    http_json(&S, "PATCH", corr, BARB.token, "{\"telefono\": \"600 111 602\"}", &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    http_get(&S, path, NULL, &r);
    expect_error(&r, 404, "Cita no encontrada");
    resp_free(&r);
    free(cita);
    free(noa);
}

static void the_desk_or_she_withdraws_it(void **state)
{
    (void)state;
    char d[11], e[11], body[400];
    weekday_utc(2, d);
    weekday_utc(3, e);
    char *sol = desk_client("Sol Paz", "600 111 202", d, "09:00");
    struct resp r;
    const char *tel;
    /* given for another number than her profile's */
    desk_put(&ADMIN, sol, "{\"acepta\": true, \"telefono\": \"611 22 33 44\"}", &r);
    assert_int_equal(r.status, 200);
    assert_true(acepta_of(&r, &tel));
    assert_string_equal(tel, "+34611223344");
    expect_por(&r, ADMIN.id);
    resp_free(&r);
    assert_true(stored_por(sol, ADMIN.id));
    /* withdrawn at the desk: the number and both times stay; who withdrew
     * it replaces who gave it */
    desk_put(&BARB, sol, "{\"acepta\": false}", &r);
    assert_int_equal(r.status, 200);
    assert_false(acepta_of(&r, &tel));
    assert_string_equal(tel, "+34611223344");
    json_t *w = json_object_get(r.json, "whatsapp");
    assert_non_null(jstr(w, "otorgado_en"));
    assert_non_null(jstr(w, "retirado_en"));
    expect_por(&r, BARB.id);
    resp_free(&r);
    assert_true(stored_por(sol, BARB.id));
    desk_get(&ADMIN, sol, &r);
    assert_int_equal(r.status, 200);
    expect_por(&r, BARB.id);
    resp_free(&r);
    /* no channel again: the waiting list refuses her */
    entry_body(body, sizeof body, e, NULL, sol);
    http_json(&S, "POST", "/api/lista-espera", BARB.token, body, &r);
    expect_error(&r, 400, SIN_CANAL);
    resp_free(&r);
    /* a client who signs in sees what the desk recorded and changes it herself */
    struct user bea;
    signup_user(&S, &bea, "Bea Ruiz");
    desk_put(&BARB, bea.id, "{\"acepta\": true, \"telefono\": \"+44 20 7946 0958\"}", &r);
    assert_int_equal(r.status, 200);
    expect_por(&r, BARB.id);
    resp_free(&r);
    /* she sees who recorded it */
    http_get(&S, "/api/auth/me/whatsapp", bea.token, &r);
    assert_int_equal(r.status, 200);
    assert_true(acepta_of(&r, &tel));
    assert_string_equal(tel, "+442079460958");
    expect_por(&r, BARB.id);
    resp_free(&r);
    /* her own change records that she made it: null */
    http_json(&S, "PUT", "/api/auth/me/whatsapp", bea.token, "{\"acepta\": false}", &r);
    assert_int_equal(r.status, 200);
    assert_false(acepta_of(&r, &tel));
    expect_por(&r, NULL);
    resp_free(&r);
    assert_true(stored_por(bea.id, NULL));
    desk_get(&BARB, bea.id, &r);
    assert_int_equal(r.status, 200);
    assert_false(acepta_of(&r, &tel));
    expect_por(&r, NULL);
    resp_free(&r);
    /* given again at the desk, then again by her */
    desk_put(&ADMIN, bea.id, "{\"acepta\": true, \"telefono\": \"+44 20 7946 0958\"}", &r);
    assert_int_equal(r.status, 200);
    expect_por(&r, ADMIN.id);
    resp_free(&r);
    assert_true(stored_por(bea.id, ADMIN.id));
    http_json(&S, "PUT", "/api/auth/me/whatsapp", bea.token,
              "{\"acepta\": true, \"telefono\": \"+44 20 7946 0958\"}", &r);
    assert_int_equal(r.status, 200);
    assert_true(acepta_of(&r, &tel));
    expect_por(&r, NULL);
    resp_free(&r);
    assert_true(stored_por(bea.id, NULL));
    free(sol);
}

static void a_client_gets_403(void **state)
{
    (void)state;
    char d[11];
    weekday_utc(4, d);
    char *mar = desk_client("Mar Gil", "600 111 203", d, "09:00");
    struct user ana;
    signup_user(&S, &ana, "Ana Pérez");
    /* another client's consent, her own id, a body that is not judged */
    expect_put(&ana, mar, "{\"acepta\": true}", 403, "Sin permisos");
    expect_put(&ana, ana.id, "{\"acepta\": true, \"telefono\": \"600111204\"}", 403,
               "Sin permisos");
    expect_put(&ana, mar, "{}", 403, "Sin permisos");
    expect_put(&ana, "no-es-uuid", "{}", 403, "Sin permisos");
    struct resp r;
    desk_get(&ana, mar, &r);
    expect_error(&r, 403, "Sin permisos");
    resp_free(&r);
    /* no session */
    desk_put(NULL, mar, "{\"acepta\": true}", &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    desk_get(NULL, mar, &r);
    expect_error(&r, 401, "No autenticado");
    resp_free(&r);
    assert_int_equal(consents_of(mar), 0);
    assert_int_equal(consents_of(ana.id), 0);
    free(mar);
}

static void an_unknown_client_is_not_found(void **state)
{
    (void)state;
    static const char *const body = "{\"acepta\": true, \"telefono\": \"600111205\"}";
    /* and a deleted account */
    struct user eva;
    deleted_user(&S, &eva, "Eva Luna");
    const char *ids[] = {"7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6", "no-es-uuid", ADMIN.id, BARB.id,
                         eva.id};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        expect_put(&BARB, ids[i], body, 404, "Cliente no encontrado");
        struct resp r;
        desk_get(&ADMIN, ids[i], &r);
        expect_error(&r, 404, "Cliente no encontrado");
        resp_free(&r);
    }
    assert_int_equal(consents_of(ADMIN.id), 0);
    assert_int_equal(consents_of(BARB.id), 0);
    assert_int_equal(consents_of(eva.id), 0);
    /* another path under /api/clientes/ is no route */
    struct resp r;
    http_json(&S, "PUT", "/api/clientes/7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6/otra", BARB.token,
              "{\"acepta\": true}", &r);
    assert_int_equal(r.status, 404);
    resp_free(&r);
}

static void the_body_is_judged_as_her_own(void **state)
{
    (void)state;
    char d[11];
    weekday_utc(5, d);
    char *eva = desk_client("Eva Luna", "600 111 206", d, "09:00");
    struct user sin;
    signup_user(&S, &sin, "Sin Teléfono");
    const char *const unknown = "7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6";
    expect_put(&BARB, eva, "{}", 400, "Campo inválido: acepta");
    expect_put(&BARB, eva, "{\"acepta\": \"si\"}", 400, "Campo inválido: acepta");
    expect_put(&BARB, eva, "{\"acepta\": null}", 400, "Campo inválido: acepta");
    expect_put(&BARB, eva, "{\"acepta\": true, \"telefono\": 600111206}", 400,
               "Campo inválido: telefono");
    expect_put(&BARB, eva, "{\"acepta\": true, \"telefono\": \"12ab\"}", 400, "Teléfono inválido");
    char body[200];
    snprintf(body, sizeof body, "{\"acepta\": true, \"telefono\": \"%065d\"}", 6);
    expect_put(&BARB, eva, body, 400, "Teléfono inválido");
    snprintf(body, sizeof body, "{\"acepta\": false, \"telefono\": \"%065d\"}", 6);
    expect_put(&BARB, eva, body, 400, "Teléfono inválido");
    /* no number in her profile and none given */
    expect_put(&ADMIN, sin.id, "{\"acepta\": true}", 400, "Teléfono inválido");
    /* the fields come before the client, the client before her number */
    expect_put(&BARB, unknown, "{}", 400, "Campo inválido: acepta");
    expect_put(&BARB, unknown, "{\"acepta\": true, \"telefono\": \"12ab\"}", 404,
               "Cliente no encontrado");
    struct resp r;
    http_json(&S, "PUT", "/api/clientes/7d0f1c2a-3b4c-4d5e-8f60-718293a4b5c6/whatsapp", BARB.token,
              "{\"acepta\": tru", &r);
    assert_int_equal(r.status, 400);
    resp_free(&r);
    assert_int_equal(consents_of(eva), 0);
    assert_int_equal(consents_of(sin.id), 0);
    free(eva);
}

/* PATCH /api/clientes/{id} with body, which must succeed. */
static void desk_patch(const char *cliente, const char *body)
{
    char path[128];
    snprintf(path, sizeof path, "/api/clientes/%s", cliente);
    struct resp r;
    http_json(&S, "PATCH", path, BARB.token, body, &r);
    if (r.status != 200) fail_msg("PATCH %s: %ld %s", body, r.status, r.body);
    resp_free(&r);
}

/* The desk records her consent with body, which must succeed. */
static void consent_ok(const char *cliente, const char *body)
{
    struct resp r;
    desk_put(&BARB, cliente, body, &r);
    if (r.status != 200) fail_msg("PUT %s: %ld %s", body, r.status, r.body);
    resp_free(&r);
}

/* The number her consent is for, "-" when none holds. */
static void expect_consent(const char *cliente, const char *want)
{
    struct resp r;
    const char *tel;
    desk_get(&ADMIN, cliente, &r);
    assert_int_equal(r.status, 200);
    bool acepta = acepta_of(&r, &tel);
    if (strcmp(acepta ? tel : "-", want))
        fail_msg("consent of %s: %s, want %s", cliente, r.body, want);
    resp_free(&r);
}

static void a_corrected_number_takes_the_consent_given_for_it(void **state)
{
    (void)state;
    char d[11], e[11];
    weekday_utc(3, d);
    weekday_utc(4, e);
    /* given for the number the desk mistyped: it follows the correction */
    char *eva = desk_client("Eva Sol", "600 111 301", d, "09:00");
    consent_ok(eva, "{\"acepta\": true}");
    expect_consent(eva, "+34600111301");
    desk_patch(eva, "{\"telefono\":\"600 111 302\"}");
    expect_consent(eva, "+34600111302");
    char *cita = desk_book(eva, e, "10:00");
    if (!wa_sink_wait(&D, "34600111302", WAIT_MS)) fail_msg("no WhatsApp to the new number");
    assert_int_equal(wa_sink_count(&D, "34600111301"), 0);
    free(cita);
    /* given for another number: it stays */
    consent_ok(eva, "{\"acepta\": true, \"telefono\":\"600 111 399\"}");
    desk_patch(eva, "{\"telefono\":\"600 111 303\"}");
    expect_consent(eva, "+34600111399");
    /* the number gone (an address left): withdrawn, by the desk */
    char *ivo = desk_client("Ivo Paz", "600 111 401", d, "09:30");
    consent_ok(ivo, "{\"acepta\": true}");
    desk_patch(ivo, "{\"telefono\":null,\"email\":\"ivo.paz@test.example\"}");
    expect_consent(ivo, "-");
    struct resp r;
    desk_get(&ADMIN, ivo, &r);
    expect_por(&r, BARB.id);
    resp_free(&r);
    free(eva);
    free(ivo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_desk_records_her_consent_and_she_is_told_by_whatsapp),
        cmocka_unit_test(a_new_caller_goes_on_the_waiting_list),
        cmocka_unit_test(a_corrected_number_ends_the_links_sent_to_the_old_one),
        cmocka_unit_test(a_number_written_another_way_keeps_her_links),
        cmocka_unit_test(the_desk_or_she_withdraws_it),
        cmocka_unit_test(a_client_gets_403),
        cmocka_unit_test(an_unknown_client_is_not_found),
        cmocka_unit_test(the_body_is_judged_as_her_own),
        cmocka_unit_test(a_corrected_number_takes_the_consent_given_for_it),
    };
    return cmocka_run_group_tests(tests, group_setup, desk_wa_group_teardown);
}
