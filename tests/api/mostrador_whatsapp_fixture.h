/*
 * mostrador_whatsapp_fixture.h - what the tests of the front desk with
 * WhatsApp share (test_mostrador_whatsapp.c, test_espera_mostrador.c), built
 * into each: one shop per program with the real SMTP sink and the Graph API
 * double (wa_sink.h), a barber, a service, an admin's and a barber's
 * accounts; the body of a waiting-list entry and a client the desk creates.
 */
#ifndef BR_TEST_MOSTRADOR_WHATSAPP_FIXTURE_H
#define BR_TEST_MOSTRADOR_WHATSAPP_FIXTURE_H

#include "harness.h"
#include "wa_sink.h"

#define WAIT_MS     60000
#define TPL_ESPERA  "barberia_hueco_libre"
#define WA_PHONE_ID "106540352242923"
#define SIN_CANAL   "El cliente no tiene correo ni WhatsApp para avisarle"

extern struct srv S;
extern struct smtp_sink K;
extern char *SERVICIO;
extern char *BARBERO;
extern struct user ADMIN, BARB;
extern struct wa_sink D; /* the Graph API double */

/* Starts the program's shop, the double taking the WhatsApp token token. */
void desk_wa_shop_start(const char *token);
int desk_wa_group_teardown(void **state);

/* The entry body for fecha; cliente_id and barbero may be NULL. */
void entry_body(char *out, size_t n, const char *fecha, const char *barbero,
                const char *cliente_id);
/* A client the desk creates with a booking at hhmm of fecha, with a phone
 * and no e-mail: her id (caller frees). */
char *desk_client(const char *nombre, const char *telefono, const char *fecha, const char *hhmm);

#endif
