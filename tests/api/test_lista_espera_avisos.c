/*
 * test_lista_espera_avisos.c - how the waiting list's notices go, over HTTP
 * against the real server, the real SMTP sink and the strict double of
 * WhatsApp's Graph API (lista_espera_fixture.h): once per entry and slot, by
 * WhatsApp too when she consented (and only by WhatsApp without an e-mail
 * address), still exactly once when the server is killed after the change
 * answered and before the notices were queued, the WhatsApp notice held back
 * by the quiet hours while the e-mail goes, never sent once the slot it
 * announces was booked meanwhile (while another still free goes) nor, held
 * back by a mail server down, once she left the list, and counted against
 * her cap after she left it. The list itself is test_lista_espera_entradas.c's.
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

/* u gives her consent to WhatsApp messages for telefono. */
static void consents(const struct user *u, const char *telefono)
{
    char body[160];
    snprintf(body, sizeof body, "{\"acepta\": true, \"telefono\": \"%s\"}", telefono);
    struct resp r;
    http_json(&S, "PUT", "/api/auth/me/whatsapp", u->token, body, &r);
    if (r.status != 200) fail_msg("consent: %ld %s", r.status, r.body);
    resp_free(&r);
}

/* The one WhatsApp notice to the number to (waited for): the approved
 * template with its six parameters, the link opening the booking on the
 * slot inicio of barbero on fecha. */
static void wa_notice(const char *to, const char *nombre, const char *barbero_nombre,
                      const char *barbero, const char *fecha, const char *inicio)
{
    json_t *m = wa_sink_sole(&D, &S, to, WAIT_MAIL_MS);
    assert_string_equal(jstr(json_object_get(m, "template"), "name"), TPL_ESPERA);
    assert_string_equal(wa_param(m, 0), nombre);
    assert_string_equal(wa_param(m, 1), "Corte clásico");
    assert_string_equal(wa_param(m, 2), barbero_nombre);
    if (!strstr(wa_param(m, 3), "(UTC)")) fail_msg("day and hour: %s", wa_param(m, 3));
    assert_string_equal(wa_param(m, 4), "Barbería Central");
    char link[400];
    snprintf(link, sizeof link, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s", S.base,
             SERVICIO, barbero, fecha, inicio);
    assert_string_equal(wa_param(m, 5), link);
    json_decref(m);
}

/* A client waiting for a barber and for any barber the same day hears of
 * a freed slot once. */
static void two_entries_of_one_client_bring_one_notice_per_slot(void **state)
{
    (void)state;
    struct user eli, otra;
    signup_user(&S, &eli, "Eli Dos");
    signup_user(&S, &otra, "Otra Cita");
    char *barbero = make_barbero(&S, "Iker Mar");
    char d[11], ten[32];
    weekday_utc(4, d);
    at(d, "10:00", ten);
    char *cita = book(&S, &otra, barbero, SERVICIO, ten, NULL);
    free(pedir_ok(&eli, SERVICIO, d, barbero));
    free(pedir_ok(&eli, SERVICIO, d, NULL));
    cita_cambio(&S, &otra, cita, "cancelar", NULL);
    char inicio[ISO8601_LEN + 1];
    notice_link(&eli, barbero, d, inicio);
    assert_int_equal(notices_to(&eli), 1);
    free(cita);
    free(barbero);
}

/* Entries that cannot use a freed slot (the same client's others, told of
 * it already) never keep the others from hearing: two clients holding the
 * twenty oldest entries of a day once kept a third from every notice. */
static void entries_told_already_keep_nobody_from_hearing(void **state)
{
    (void)state;
    struct user ana, bea, cris, dani, otra;
    signup_user(&S, &ana, "Ana Diez");
    signup_user(&S, &bea, "Bea Diez");
    signup_user(&S, &cris, "Cris Tarde");
    signup_user(&S, &dani, "Dani Luego");
    signup_user(&S, &otra, "Otra Vez");
    char *barbero = make_barbero(&S, "Pau Lleno");
    char *servicios[5] = {strdup(SERVICIO)};
    for (int i = 1; i < 5; i++) {
        char nombre[40];
        snprintf(nombre, sizeof nombre, "Corte de espera %d", i);
        servicios[i] = make_servicio(&S, nombre, 30, 15.0);
    }
    char d[11], ten[32];
    weekday_utc(5, d);
    at(d, "10:00", ten);
    char *cita = book(&S, &otra, barbero, SERVICIO, ten, NULL);
    /* ten entries each, the oldest of the day: with this barber and with any */
    for (int i = 0; i < 5; i++) {
        free(pedir_ok(&ana, servicios[i], d, barbero));
        free(pedir_ok(&ana, servicios[i], d, NULL));
        free(pedir_ok(&bea, servicios[i], d, barbero));
        free(pedir_ok(&bea, servicios[i], d, NULL));
    }
    free(pedir_ok(&cris, SERVICIO, d, barbero));
    cita_cambio(&S, &otra, cita, "cancelar", NULL);
    char inicio[ISO8601_LEN + 1];
    notice_link(&cris, barbero, d, inicio);
    assert_string_equal(inicio, ten);
    assert_int_equal(notices_to(&ana), 1);
    assert_int_equal(notices_to(&bea), 1);
    assert_int_equal(notices_to(&cris), 1);
    /* the slot frees again: those told of it hear nothing more, and take
     * no place of who has not heard */
    free(pedir_ok(&dani, SERVICIO, d, NULL));
    char *otra_vez = book(&S, &otra, barbero, SERVICIO, ten, NULL);
    cita_cambio(&S, &otra, otra_vez, "cancelar", NULL);
    notice_link(&dani, barbero, d, inicio);
    assert_string_equal(inicio, ten);
    assert_int_equal(notices_to(&ana), 1);
    assert_int_equal(notices_to(&bea), 1);
    assert_int_equal(notices_to(&cris), 1);
    for (int i = 0; i < 5; i++)
        free(servicios[i]);
    free(otra_vez);
    free(cita);
    free(barbero);
}

static void the_notice_goes_by_whatsapp_to_whoever_consented(void **state)
{
    (void)state;
    struct user ana, bea, cris, dani;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    signup_user(&S, &cris, "Cris Gil");
    signup_user(&S, &dani, "Dani Sol");
    char *barbero = make_barbero(&S, "Fran Paz");
    char d[11], eleven[32];
    weekday_utc(5, d);
    at(d, "11:00", eleven);
    char *cita = book(&S, &ana, barbero, SERVICIO, eleven, NULL);
    /* Bea and Dani accept WhatsApp, Cris does not; Dani is a front-desk
     * client without an e-mail address (as the desk writes her) */
    consents(&bea, "+34 611 000 001");
    consents(&dani, "+34 611 000 002");
    free(pedir_ok(&bea, SERVICIO, d, barbero));
    free(pedir_ok(&cris, SERVICIO, d, NULL));
    char *ed = pedir_ok(&dani, SERVICIO, d, NULL);
    char sql[300];
    snprintf(sql, sizeof sql, "UPDATE auth_users SET email = 'sin-email:%s' WHERE id = '%s'",
             dani.id, dani.id);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    cita_cambio(&S, &ana, cita, "cancelar", NULL);
    /* Bea by both channels, Cris by e-mail, Dani by WhatsApp only */
    char ib[ISO8601_LEN + 1], ic[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, ib);
    assert_string_equal(ib, eleven);
    notice_link(&cris, barbero, d, ic);
    assert_string_equal(ic, eleven);
    wa_notice("34611000001", "Bea Ruiz", "Fran Paz", barbero, d, eleven);
    wa_notice("34611000002", "Dani Sol", "Fran Paz", barbero, d, eleven);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "cita_id = '%s' AND canal = 'email'",
                              ed),
                     0);
    /* Cris gave no consent: nothing by WhatsApp to her */
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "canal = 'whatsapp' AND cita_id IN (SELECT id FROM lista_espera "
                              "WHERE cliente_id = '%s')",
                              cris.id),
                     0);
    assert_int_equal(notices_to(&bea), 1);
    assert_int_equal(notices_to(&cris), 1);
    free(ed);
    free(cita);
    free(barbero);
}

/* A freed slot whose telling failed, put back: due again within seconds,
 * not held for the lease's minute. */
static bool freed_slot_put_back(void *ud)
{
    (void)ud;
    char soon[ISO8601_LEN + 1];
    iso8601_format(clock_now_ms() + 30000, soon);
    return db_count(&S, "SELECT count(*) FROM espera_liberaciones WHERE locked_until <= '%s'",
                    soon) == 1;
}

static void a_crash_before_the_notices_were_queued_loses_none(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char *barbero = make_barbero(&S, "Gael Ríos");
    char d[11], noon[32];
    weekday_utc(6, d);
    at(d, "12:00", noon);
    char *cita = book(&S, &ana, barbero, SERVICIO, noon, NULL);
    consents(&bea, "+34 611 000 003");
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    /* the notices cannot be written for now: the window between the
     * change's answer and the notices stays open */
    assert_int_equal(db_forced_failure(&S, "lista_espera_avisos", true), 0);
    cita_cambio(&S, &ana, cita, "cancelar", NULL);
    /* the server dies in that window, once its worker has tried and put the
     * freed slot back for a later pass (killed while it held the slot, the
     * next start would wait out the lease: a minute) */
    if (!wait_until(freed_slot_put_back, NULL, 30000)) fail_msg("the freed slot was not put back");
    kill(S.pid, SIGKILL);
    srv_wait_exit(&S, 30000);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "cita_id = '%s'",
                              eb),
                     0);
    assert_int_equal(db_forced_failure(&S, "lista_espera_avisos", false), 0);
    srv_start(&S, E.v, NULL);
    /* once started again, Bea is told, by each channel once */
    char ib[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, ib);
    assert_string_equal(ib, noon);
    wa_notice("34611000003", "Bea Ruiz", "Gael Ríos", barbero, d, noon);
    assert_int_equal(notices_to(&bea), 1);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "cita_id = '%s'",
                              eb),
                     2);
    free(eb);
    free(cita);
    free(barbero);
}

/* A waiting-list notice of an entry by a channel, in the state where says
 * (SQL over mail_outbox's columns). */
struct notice_q {
    const char *entrada_id, *canal, *where;
};

static bool notice_is(void *ud)
{
    const struct notice_q *q = ud;
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                    "canal = '%s' AND cita_id = '%s' AND %s",
                    q->canal, q->entrada_id, q->where) == 1;
}

/* put off (the quiet hours), never tried */
#define DEFERRED "status = 'pending' AND attempts = 0 AND due_at IS NOT NULL"

/* Starts the server again with the shop's settings but the one that
 * starts with drop, and with add (NULL: none). */
static void restart_with(const char *drop, const char *add)
{
    const char *env[32];
    size_t n = 0;
    for (size_t i = 0; E.v[i]; i++)
        if (strncmp(E.v[i], drop, strlen(drop)) != 0) env[n++] = E.v[i];
    if (add) env[n++] = add;
    env[n] = NULL;
    assert_int_equal(srv_stop(&S), 0);
    srv_start(&S, env, NULL);
}

/* Starts the server again with quiet hours from an hour ago to an hour
 * ahead (the shop's zone is UTC). */
static void restart_in_quiet_hours(void)
{
    int64_t now_min = clock_now_ms() / 60000 % 1440;
    int from = (int)((now_min + 1440 - 60) % 1440), to = (int)((now_min + 60) % 1440);
    static char quiet[64];
    snprintf(quiet, sizeof quiet, "BARBERIA_WHATSAPP_QUIET_HOURS=%02d:%02d-%02d:%02d", from / 60,
             from % 60, to / 60, to % 60);
    restart_with("BARBERIA_WHATSAPP_QUIET_HOURS=", quiet);
}

static void in_the_quiet_hours_the_whatsapp_notice_waits(void **state)
{
    (void)state;
    restart_in_quiet_hours();
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char *barbero = make_barbero(&S, "Hugo Mar");
    char d[11], half[32];
    weekday_utc(7, d);
    at(d, "10:30", half);
    char *cita = book(&S, &ana, barbero, SERVICIO, half, NULL);
    consents(&bea, "+34 611 000 004");
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    cita_cambio(&S, &ana, cita, "cancelar", NULL);
    /* the e-mail goes; the WhatsApp notice waits for the end of the quiet hours */
    char ib[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, ib);
    assert_string_equal(ib, half);
    struct notice_q q = {eb, "whatsapp", DEFERRED};
    if (!wait_until(notice_is, &q, WAIT_MAIL_MS)) fail_msg("the WhatsApp notice was not put off");
    assert_int_equal(wa_sink_count(&D, "34611000004"), 0);
    free(eb);
    free(cita);
    free(barbero);
}

static void a_notice_held_back_never_announces_a_slot_booked_meanwhile(void **state)
{
    (void)state;
    restart_in_quiet_hours();
    struct user ana, bea, cris, dani;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    signup_user(&S, &cris, "Cris Gil");
    signup_user(&S, &dani, "Dani Sol");
    char *barbero = make_barbero(&S, "Iker Paz");
    char d[11], e[11], ten_d[32], ten_e[32];
    weekday_utc(8, d);
    weekday_utc(9, e);
    at(d, "10:00", ten_d);
    at(e, "10:00", ten_e);
    char *cd = book(&S, &ana, barbero, SERVICIO, ten_d, NULL);
    char *ce = book(&S, &ana, barbero, SERVICIO, ten_e, NULL);
    /* Bea waits on d, Cris on e; both by e-mail and WhatsApp */
    consents(&bea, "+34 611 000 005");
    consents(&cris, "+34 611 000 006");
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    char *ec = pedir_ok(&cris, SERVICIO, e, barbero);
    cita_cambio(&S, &ana, cd, "cancelar", NULL);
    cita_cambio(&S, &ana, ce, "cancelar", NULL);
    /* the e-mails go at once (the slots are free); the WhatsApp notices
     * wait for the end of the quiet hours */
    char ib[ISO8601_LEN + 1], ic[ISO8601_LEN + 1];
    notice_link(&bea, barbero, d, ib);
    assert_string_equal(ib, ten_d);
    notice_link(&cris, barbero, e, ic);
    assert_string_equal(ic, ten_e);
    struct notice_q qb = {eb, "whatsapp", DEFERRED}, qc = {ec, "whatsapp", DEFERRED};
    if (!wait_until(notice_is, &qb, WAIT_MAIL_MS) || !wait_until(notice_is, &qc, WAIT_MAIL_MS))
        fail_msg("the WhatsApp notices were not put off");
    /* meanwhile Dani books the slot announced to Bea */
    char *got = book(&S, &dani, barbero, SERVICIO, ten_d, NULL);
    /* the quiet hours end: the server starts again without them, the two
     * notices due (the links keep the base they were written with) */
    char base[sizeof S.base];
    snprintf(base, sizeof base, "%s", S.base);
    char sql[400];
    snprintf(sql, sizeof sql,
             "UPDATE mail_outbox SET next_attempt_at = created_at, due_at = created_at WHERE "
             "canal = 'whatsapp' AND cita_id IN ('%s', '%s')",
             eb, ec);
    assert_int_equal(srv_stop(&S), 0);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    srv_start(&S, E.v, NULL);
    /* Cris's slot is still free: her notice goes */
    json_t *m = wa_sink_sole(&D, &S, "34611000006", WAIT_MAIL_MS);
    char link[400];
    snprintf(link, sizeof link, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s", base,
             SERVICIO, barbero, e, ten_e);
    assert_string_equal(wa_param(m, 5), link);
    json_decref(m);
    struct notice_q sent = {ec, "whatsapp", "status = 'sent'"},
                    skipped = {eb, "whatsapp", "status = 'skipped'"};
    assert_true(wait_until(notice_is, &sent, WAIT_MAIL_MS));
    /* Bea's slot was taken: her notice never leaves, and says why */
    if (!wait_until(notice_is, &skipped, WAIT_MAIL_MS)) {
        char *log = srv_log(&S);
        fail_msg("Bea's notice was not skipped; server log:\n%s", log);
    }
    assert_true(srv_wait_log(&S, "not sent: la hora anunciada ya no está libre", WAIT_MAIL_MS));
    assert_int_equal(wa_sink_count(&D, "34611000005"), 0);
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND "
                              "canal = 'whatsapp' AND last_error = 'la hora anunciada ya no está "
                              "libre'",
                              eb),
                     1);
    free(got);
    free(eb);
    free(ec);
    free(cd);
    free(ce);
    free(barbero);
}

static void a_notice_held_back_never_goes_to_who_left_the_list(void **state)
{
    (void)state;
    struct user ana, bea;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    char *barbero = make_barbero(&S, "Iker Paz");
    char d[11], ten[32];
    weekday_utc(7, d);
    at(d, "10:00", ten);
    char *cita = book(&S, &ana, barbero, SERVICIO, ten, NULL);
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    /* the mail server is down: the notice fails and waits for a retry */
    int port = K.port;
    assert_int_equal(smtp_sink_stop(&K), 0);
    cita_cambio(&S, &ana, cita, "cancelar", NULL);
    struct notice_q failed = {eb, "email", "status = 'pending' AND attempts >= 1"};
    if (!wait_until(notice_is, &failed, WAIT_MAIL_MS))
        fail_msg("the notice was not tried while the mail server was down");
    /* meanwhile Bea takes herself off the list */
    char path[120];
    snprintf(path, sizeof path, "/api/lista-espera/%s", eb);
    struct resp r;
    http_json(&S, "DELETE", path, bea.token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    /* the mail server is back and the retry due: the notice never leaves */
    assert_int_equal(srv_stop(&S), 0);
    char sql[300];
    snprintf(sql, sizeof sql,
             "UPDATE mail_outbox SET next_attempt_at = created_at WHERE cita_id = '%s'", eb);
    assert_int_equal(db_exec(&S, sql, NULL), 0);
    smtp_sink_start(&K, S.dir, port, NULL);
    srv_start(&S, E.v, NULL);
    struct notice_q skipped = {
        eb, "email",
        "status = 'skipped' AND last_error = 'el aviso de la lista de espera ya no existe'"};
    if (!wait_until(notice_is, &skipped, WAIT_MAIL_MS)) {
        char *log = srv_log(&S);
        fail_msg("the notice of an entry removed was not skipped; server log:\n%s", log);
    }
    struct want w = {bea.email, NULL};
    assert_false(notice_for(&w));
    free(eb);
    free(cita);
    free(barbero);
}

/* Without a mail server nothing is queued by e-mail, as for every other
 * message: a notice by WhatsApp still goes to whoever consented. */
static void without_mail_no_notice_is_queued_by_email(void **state)
{
    (void)state;
    restart_with("BARBERIA_SMTP_URL=", NULL);
    struct user ana, bea, cris;
    signup_user(&S, &ana, "Ana Pérez");
    signup_user(&S, &bea, "Bea Ruiz");
    signup_user(&S, &cris, "Cris Gil");
    char *barbero = make_barbero(&S, "Leo Sanz");
    char d[11], nine[32];
    weekday_utc(9, d);
    at(d, "09:30", nine);
    char *cita = book(&S, &ana, barbero, SERVICIO, nine, NULL);
    consents(&bea, "+34 611 000 009");
    char *eb = pedir_ok(&bea, SERVICIO, d, barbero);
    char *ec = pedir_ok(&cris, SERVICIO, d, barbero);
    cita_cambio(&S, &ana, cita, "cancelar", NULL);
    struct notice_q by_wa = {eb, "whatsapp", "1 = 1"};
    if (!wait_until(notice_is, &by_wa, WAIT_MAIL_MS))
        fail_msg("the WhatsApp notice was not queued without a mail server");
    assert_int_equal(db_count(&S,
                              "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                              "canal = 'email' AND cita_id IN ('%s', '%s')",
                              eb, ec),
                     0);
    free(eb);
    free(ec);
    free(cita);
    free(barbero);
}

struct wa_count_q {
    const char *to;
    size_t want;
};

static bool wa_count_is(void *ud)
{
    const struct wa_count_q *q = ud;
    return wa_sink_count(&D, q->to) >= q->want;
}

struct capped_q {
    const char *cita_id, *kind;
};

/* cita_id's WhatsApp message of kind was skipped by the daily cap. */
static bool capped(void *ud)
{
    const struct capped_q *q = ud;
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE kind = '%s' AND canal = 'whatsapp' "
                    "AND cita_id = '%s' AND status = 'skipped' AND last_error = 'demasiados "
                    "mensajes a este cliente en 24 horas'",
                    q->kind, q->cita_id) == 1;
}

/* The first part of the cap's tests: with the daily WhatsApp cap at cap,
 * a slot of day frees up with her on its list, she is sent the notice
 * (the double holding its answer hold_ms, 0: none) and leaves the list as
 * soon as the double has it. Returns her entry's id (caller frees). */
static char *notified_then_she_leaves(struct user *eva, const char *telefono, const char *to,
                                      const char *barbero, int day, int cap, int hold_ms)
{
    char env_cap[64];
    snprintf(env_cap, sizeof env_cap, "BARBERIA_WHATSAPP_MAX_PER_DAY=%d", cap);
    restart_with("BARBERIA_WHATSAPP_MAX_PER_DAY=", env_cap);
    struct user otro;
    signup_user(&S, &otro, "Otro Mas");
    char d[11], t1[32];
    weekday_utc(day, d);
    at(d, "10:00", t1);
    char *cita = book(&S, &otro, barbero, SERVICIO, t1, NULL);
    consents(eva, telefono);
    char *entrada = pedir_ok(eva, SERVICIO, d, barbero);
    char hold[32];
    snprintf(hold, sizeof hold, "hold=%d", hold_ms);
    wa_sink_control(&D, hold);
    cita_cambio(&S, &otro, cita, "cancelar", NULL);
    struct wa_count_q q = {to, 1};
    if (!wait_until(wa_count_is, &q, WAIT_MAIL_MS)) fail_msg("no WhatsApp notice");
    char path[160];
    snprintf(path, sizeof path, "/api/lista-espera/%s", entrada);
    struct resp r;
    http_json(&S, "DELETE", path, eva->token, NULL, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    wa_sink_control(&D, "hold=0");
    struct notice_q sent = {entrada, "whatsapp", "status = 'sent'"};
    if (!wait_until(notice_is, &sent, WAIT_MAIL_MS)) fail_msg("the notice was not marked sent");
    free(cita);
    return entrada;
}

/* A waiting-list notice she was sent counts against her daily WhatsApp
 * cap after she leaves the list (the entry it was about is gone). */
static void a_notice_counts_against_her_cap_after_she_leaves_the_list(void **state)
{
    (void)state;
    struct user eva;
    signup_user(&S, &eva, "Eva Sanz");
    char *barbero = make_barbero(&S, "Rai Sol");
    char *entrada =
        notified_then_she_leaves(&eva, "+34 611 000 019", "34611000019", barbero, 10, 3, 0);
    char e[11], t2[32], t3[32];
    weekday_utc(11, e);
    at(e, "10:00", t2);
    at(e, "11:00", t3);
    char *c1 = book(&S, &eva, barbero, SERVICIO, t2, NULL);
    struct wa_count_q q = {"34611000019", 2};
    if (!wait_until(wa_count_is, &q, WAIT_MAIL_MS)) fail_msg("no second message");
    char *c2 = book(&S, &eva, barbero, SERVICIO, t3, NULL);
    q.want = 3;
    if (!wait_until(wa_count_is, &q, WAIT_MAIL_MS)) fail_msg("no third message");
    /* the fourth in the day is one too many */
    cita_cambio(&S, &eva, c2, "cancelar", NULL);
    if (!wait_until(capped, &(struct capped_q){c2, "cancelacion"}, WAIT_MAIL_MS)) {
        /* what became of each of her WhatsApp messages, and what the
         * double got: enough to tell a late count from a second send */
        char *rows = db_query(&S,
                              "SELECT kind, status, attempts, coalesce(last_error, '-'), "
                              "coalesce(done_at, '-') FROM mail_outbox WHERE canal = "
                              "'whatsapp' AND cita_id IN ('%s', '%s', '%s') ORDER BY created_at",
                              entrada, c1, c2);
        fail_msg("the fourth message was not skipped; the double got %ld; her rows:\n%s",
                 (long)wa_sink_count(&D, "34611000019"), rows);
    }
    assert_int_equal(wa_sink_count(&D, "34611000019"), 3);
    restart_with("BARBERIA_WHATSAPP_MAX_PER_DAY=", NULL);
    free(c1);
    free(c2);
    free(entrada);
    free(barbero);
}

/* A notice on its way as she leaves the list (sent, its answer not back
 * yet, so not marked sent) counts against her cap all the same: whom it
 * was for is known from before it left, not looked up through the entry
 * once it is answered. */
static void a_notice_on_its_way_as_she_leaves_counts_against_her_cap(void **state)
{
    (void)state;
    struct user eva;
    signup_user(&S, &eva, "Eva Gil");
    char *barbero = make_barbero(&S, "Sol Paz");
    char *entrada =
        notified_then_she_leaves(&eva, "+34 611 000 029", "34611000029", barbero, 12, 2, 3000);
    /* her second message of the day reaches the cap of 2, the third is one
     * too many */
    char e[11], t2[32], t3[32];
    weekday_utc(13, e);
    at(e, "10:00", t2);
    at(e, "11:00", t3);
    char *c1 = book(&S, &eva, barbero, SERVICIO, t2, NULL);
    struct wa_count_q q = {"34611000029", 2};
    if (!wait_until(wa_count_is, &q, WAIT_MAIL_MS)) fail_msg("no second message");
    char *c2 = book(&S, &eva, barbero, SERVICIO, t3, NULL);
    if (!wait_until(capped, &(struct capped_q){c2, "confirmacion"}, WAIT_MAIL_MS))
        fail_msg("the third message was not skipped; the double got %ld",
                 (long)wa_sink_count(&D, "34611000029"));
    assert_int_equal(wa_sink_count(&D, "34611000029"), 2);
    restart_with("BARBERIA_WHATSAPP_MAX_PER_DAY=", NULL);
    free(c1);
    free(c2);
    free(entrada);
    free(barbero);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_entries_of_one_client_bring_one_notice_per_slot),
        cmocka_unit_test(entries_told_already_keep_nobody_from_hearing),
        cmocka_unit_test(the_notice_goes_by_whatsapp_to_whoever_consented),
        cmocka_unit_test(a_crash_before_the_notices_were_queued_loses_none),
        cmocka_unit_test(a_notice_held_back_never_goes_to_who_left_the_list),
        /* last: they restart the server with quiet hours */
        cmocka_unit_test(in_the_quiet_hours_the_whatsapp_notice_waits),
        cmocka_unit_test(a_notice_held_back_never_announces_a_slot_booked_meanwhile),
        cmocka_unit_test(without_mail_no_notice_is_queued_by_email),
        cmocka_unit_test(a_notice_counts_against_her_cap_after_she_leaves_the_list),
        cmocka_unit_test(a_notice_on_its_way_as_she_leaves_counts_against_her_cap),
    };
    return cmocka_run_group_tests(tests, lista_espera_group_setup, lista_espera_group_teardown);
}
