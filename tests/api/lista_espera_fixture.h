/*
 * lista_espera_fixture.h - what the waiting list's tests share
 * (test_lista_espera_entradas.c, test_lista_espera_avisos.c), built into each:
 * one shop per program with the real SMTP sink and the Graph API double
 * (wa_sink.h), a service and an admin; adding, listing and the notices.
 */
#ifndef BR_TEST_LISTA_ESPERA_FIXTURE_H
#define BR_TEST_LISTA_ESPERA_FIXTURE_H

#include "harness.h"
#include "util/iso8601.h"
#include "wa_sink.h"

#define WAIT_MAIL_MS 60000
#define TPL_ESPERA   "barberia_hueco_libre"

extern struct srv S;
extern struct smtp_sink K;
extern char *SERVICIO;
extern struct user ADMIN;
extern struct wa_sink D;

extern struct wa_env E;

int lista_espera_group_setup(void **state);
int lista_espera_group_teardown(void **state);
void at(const char *fecha, const char *hhmm, char out[ISO8601_LEN + 1]);
void pedir(const struct user *u, const char *body, struct resp *r);
char *pedir_ok(const struct user *u, const char *servicio, const char *fecha, const char *barbero);
size_t listed(const struct user *u, const char *id);

struct want {
    const char *to;
    json_t *mail;
};

bool notice_for(void *ud);
/* The booking link of the notice to u: its inicio= (OUT, canonical). */
void notice_link(const struct user *u, const char *barbero, const char *fecha,
                 char inicio[ISO8601_LEN + 1]);
long notices_to(const struct user *u);

#endif
