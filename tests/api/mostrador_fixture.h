/*
 * mostrador_fixture.h - what the front desk's tests share
 * (test_mostrador_reservas.c, test_mostrador_clientes.c), built into each:
 * one server per program, mailing the SMTP sink, with two barbers, a
 * service, a client (ANA), a barber's and an admin's accounts; helpers for
 * the desk's bookings, attendance and lookups.
 */
#ifndef BR_TEST_MOSTRADOR_FIXTURE_H
#define BR_TEST_MOSTRADOR_FIXTURE_H

#include "harness.h"
#include "util/iso8601.h"

#define UNKNOWN_ID "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define TAKEN      "El horario ya no está disponible"

extern struct srv S;
extern char *BARBERO, *SERVICIO, *BARBERO2;
extern struct user ANA, BARB, ADMIN;

int mostrador_group_setup(void **state);
int mostrador_group_teardown(void **state);
/* A fresh slot inside the default working hours every call: Mondays from
 * 2032-03-01 on, 09:00 to 13:30 UTC, half an hour apart. */
void next_slot(char out[ISO8601_LEN + 1]);
/* now + minutes, canonical. */
void from_now(int64_t minutes, char out[ISO8601_LEN + 1]);
void desk(const struct user *u, const char *body, struct resp *r);
/* A desk booking that must succeed: the cita's id (owned); its client's id in cliente. */
char *desk_ok(const struct user *u, const char *body, char cliente[40]);
char *body_for(const char *cliente_id, const char *fecha, const char *extra);
char *body_new(const char *cliente_json, const char *fecha, const char *extra);
void asistencia(const struct user *u, const char *id, const char *estado, struct resp *r);
void asistencia_expect(const struct user *u, const char *id, const char *estado, long status,
                       const char *msg);
const char *estado_of(const char *cita);
/* The first element of GET path's list key whose id is id, or NULL. */
json_t *find_in(const char *path, const struct user *u, const char *key, const char *id,
                struct resp *r);

#endif
