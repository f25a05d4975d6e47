/*
 * catalog.h - the catalog's administration: adding barbers and services and
 * changing them (nombre, photo, length, price, whether they are offered).
 * POST and PATCH /api/admin/barberos and /api/admin/servicios, `barberia
 * barbero add`, `barberia servicio add` and `serve --demo` all write
 * through here, so each checks a record with the same rules
 * (domain/rules.h) before the store sees it.
 *
 * Errors: BR_INVALID with the API's message ("Faltan campos requeridos",
 * "Campo inválido: <field>"), nothing written; otherwise the store's own
 * (BR_NOTFOUND when there is no such barber or service, BR_BUSY, BR_STORE),
 * for the caller to answer and log.
 */
#ifndef BR_CATALOG_H
#define BR_CATALOG_H

#include "app.h"

/* Adds an active barber: b->nombre (required), b->foto_url (nullable).
 * OUT: b->id, the new id. */
br_err catalog_barbero_add(struct app *app, struct barbero *b) WARN_UNUSED;

/* Changes what p names of barber id, in one transaction. The barber's
 * notices (store/avisos.h): an email that is not an address mail can
 * carry is BR_INVALID "Campo inválido: email"; a usuario_id that names no
 * user with a profile BR_NOTFOUND "Usuario no encontrado", one whose rol is
 * not barbero BR_INVALID "El usuario no tiene el rol barbero", one linked
 * to another barber BR_CONFLICT "El usuario ya está vinculado a otro
 * barbero"; nothing is written then. An empty email or usuario_id clears
 * it, as NULL does. */
br_err catalog_barbero_update(struct app *app, const char *id,
                              const struct barbero_patch *p) WARN_UNUSED;

/* Adds an active service: s->nombre (NULL: missing), s->duracion_min,
 * s->precio. OUT: s->id, the new id. */
br_err catalog_servicio_add(struct app *app, struct servicio *s) WARN_UNUSED;

/* Changes what p names of service id, in one transaction. */
br_err catalog_servicio_update(struct app *app, const char *id,
                               const struct servicio_patch *p) WARN_UNUSED;

/* The service (barber) whose id text is id, when it is offered: BR_NOTFOUND
 * when id is not a UUID or names none, or one taken off the catalog (then
 * *s, *b hold nothing); the store's errors. OUT: *s, *b, freed with
 * servicio_clear, barbero_clear. */
br_err catalog_servicio_activo(struct app *app, const char *id, struct servicio *s) WARN_UNUSED;
br_err catalog_barbero_activo(struct app *app, const char *id, struct barbero *b) WARN_UNUSED;

#endif
