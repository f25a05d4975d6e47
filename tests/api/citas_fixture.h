/*
 * citas_fixture.h - what the tests of /api/citas share (test_citas_alta.c,
 * test_citas_agenda.c), built into each: the server F (its barber is one
 * nobody books successfully, its service lasts 30 minutes and costs 15.50)
 * and a client U, started for each program by citas_group_setup; the
 * requests and checks of a booking and a listing.
 */
#ifndef BR_TEST_CITAS_FIXTURE_H
#define BR_TEST_CITAS_FIXTURE_H

#include "harness.h"

/* the server; its barber is one nobody books successfully (order tests),
 * its service lasts 30 minutes and costs 15.50 */
extern struct fixture F;
extern struct user U; /* a client with a profile name */

#define UNKNOWN_ID "0b5f8e8a-3c1d-4e2f-9a7b-1234567890ab"
#define NO_AUTH    "No autenticado"
#define FALTAN     "Faltan campos requeridos"
#define NO_SERV    "Servicio no encontrado"
#define NO_BARB    "Barbero no encontrado"
#define BAD_FECHA  "fecha_inicio inválida"
#define TAKEN      "El horario ya no está disponible"

int citas_group_setup(void **state);
int citas_group_teardown(void **state);
void post(const char *token, const char *body, struct resp *r);
/* POSTs and asserts the error answer. */
void post_expect(const char *token, const char *body, long status, const char *msg);
/* A body with the three fields as raw JSON values (NULL: absent). */
char *body3(const char *barbero_json, const char *servicio_json, const char *fecha_json,
            const char *extra);
/* A JSON string literal of s. */
char *q(const char *s);
char *cita_body(const char *barbero, const char *servicio, const char *fecha);
/* Books and returns the 201 answer's cita (a new reference). */
json_t *book_json(const struct user *u, const char *barbero, const char *servicio,
                  const char *fecha, const char *extra);
void book_expect(const struct user *u, const char *barbero, const char *servicio, const char *fecha,
                 long status, const char *msg);
json_t *get_citas(const char *token, const char *query);
bool list_has(const json_t *list, const char *id);
void assert_sorted_by_start(const json_t *list);
void signup_with(struct user *u, const char *nombre, const char *telefono);

#endif
