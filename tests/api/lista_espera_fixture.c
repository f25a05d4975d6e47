/*
 * lista_espera_fixture.c - what the waiting list's tests share (see
 * lista_espera_fixture.h): the shop, and the requests and notices of the list.
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

#define AVISO       "Se ha liberado una hora"
#define WA_TOKEN    "EAAJtestTOKENespera0123456789abcdef"
#define WA_PHONE_ID "106540352242922"

struct srv S;
struct smtp_sink K;
char *SERVICIO;
struct user ADMIN;

/* --- the Graph API double (wa_sink.h) ------------------------------------------------------ */

struct wa_sink D;

/* --- the server -------------------------------------------------------------------------- */

struct wa_env E;

int lista_espera_group_setup(void **state)
{
    (void)state;
    srv_init(&S);
    static const char *const extra[] = {"BARBERIA_SWEEP_INTERVAL_MS=300", NULL};
    wa_shop_start(&S, &K, &D, &E, WA_TOKEN, WA_PHONE_ID, extra);
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    make_user(&S, &ADMIN, "Admin Uno", "admin");
    return 0;
}

int lista_espera_group_teardown(void **state)
{
    (void)state;
    wa_shop_stop(&S, &K, &D);
    free(SERVICIO);
    return 0;
}

void at(const char *fecha, const char *hhmm, char out[ISO8601_LEN + 1])
{
    snprintf(out, ISO8601_LEN + 1, "%sT%s:00.000Z", fecha, hhmm);
}

void pedir(const struct user *u, const char *body, struct resp *r)
{
    http_json(&S, "POST", "/api/lista-espera", u ? u->token : NULL, body, r);
}

char *pedir_ok(const struct user *u, const char *servicio, const char *fecha, const char *barbero)
{
    char body[300];
    if (barbero)
        snprintf(body, sizeof body,
                 "{\"servicio_id\":\"%s\",\"fecha\":\"%s\",\"barbero_id\":\"%s\"}", servicio, fecha,
                 barbero);
    else
        snprintf(body, sizeof body, "{\"servicio_id\":\"%s\",\"fecha\":\"%s\"}", servicio, fecha);
    struct resp r;
    pedir(u, body, &r);
    if (r.status != 201) fail_msg("lista-espera: %ld %s", r.status, r.body);
    json_t *e = json_object_get(r.json, "entrada");
    assert_string_equal(jstr(e, "fecha"), fecha);
    assert_string_equal(jstr(e, "servicio_id"), servicio);
    char *id = strdup(jstr(e, "id"));
    resp_free(&r);
    return id;
}

size_t listed(const struct user *u, const char *id)
{
    return lista_espera_listed(&S, u, NULL, id);
}

/* --- the mails -------------------------------------------------------------------------- */

bool notice_for(void *ud)
{
    struct want *w = ud;
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    for (size_t i = 0; i < n && !w->mail; i++) {
        json_t *m = smtp_sink_message(paths[i]);
        const char *subject = jstr(m, "subject");
        const char *to = json_string_value(json_array_get(json_object_get(m, "rcpt_tos"), 0));
        if (subject && strstr(subject, AVISO) && to && !strcmp(to, w->to))
            w->mail = m;
        else
            json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    return w->mail != NULL;
}

void notice_link(const struct user *u, const char *barbero, const char *fecha,
                 char inicio[ISO8601_LEN + 1])
{
    struct want w = {u->email, NULL};
    if (!wait_until(notice_for, &w, WAIT_MAIL_MS)) fail_msg("no notice for %s", u->email);
    json_t *problems = json_object_get(w.mail, "problems");
    if (json_array_size(problems) > 0) fail_msg("the notice breaks the rules");
    const char *text = jstr(w.mail, "text");
    char want[400];
    snprintf(want, sizeof want, "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=", S.base,
             SERVICIO, barbero, fecha);
    const char *l = strstr(text, want);
    if (!l) fail_msg("no booking link in the notice: %s", text);
    l += strlen(want);
    size_t n = strcspn(l, " \r\n");
    assert_int_equal(n, ISO8601_LEN);
    memcpy(inicio, l, ISO8601_LEN);
    inicio[ISO8601_LEN] = '\0';
    /* no calendar file: nothing is booked yet */
    assert_int_equal(json_array_size(json_object_get(w.mail, "ics")), 0);
    json_decref(w.mail);
}

long notices_to(const struct user *u)
{
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE kind = 'aviso_espera' AND "
                    "recipient = '%s'",
                    u->email);
}
