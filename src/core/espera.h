/*
 * espera.h - the waiting list: a client asks to be told when a slot frees
 * on a day (for a service, with one barber or any), and is told, by
 * e-mail through the outbox, when a cancel, a reschedule, a closure or day
 * off removed or wider hours free one that fits.
 *
 * A notice is queued right after the change that freed the slot commits
 * (each in one transaction with the record that the entry was told of
 * that slot, so an entry never hears twice of one slot), at most
 * ESPERA_FANOUT entries per change, oldest first. It carries a link that
 * opens the booking on that slot; the first to book it gets it (the
 * booking's own overlap rule decides). Entries last until their day has
 * passed: not listed after, removed by the sweeper.
 */
#ifndef BR_ESPERA_H
#define BR_ESPERA_H

#include "app.h"

#define ESPERA_MAX    10 /* entries on today or later one client may hold */
#define ESPERA_FANOUT 20 /* entries told of one freed stretch, at most */

#define ESPERA_MAX_MSG "Máximo de avisos alcanzado"
#define ESPERA_DUP_MSG "Ya estás en la lista de espera de ese día"

struct espera_nueva {
    const char *servicio_id; /* required */
    const char *fecha;       /* required: YYYY-MM-DD, today or later, within the horizon */
    const char *barbero_id;  /* NULL or "": any barber */
};

/* Adds caller's entry, checked in this order: the fields (BR_INVALID
 * "Faltan campos requeridos", "fecha inválida", "La fecha ya pasó",
 * "Fecha fuera del plazo de reserva"), the service and the barber
 * (BR_NOTFOUND "Servicio no encontrado", "Barbero no encontrado"), then
 * BR_CONFLICT ESPERA_DUP_MSG and BR_INVALID ESPERA_MAX_MSG. OUT: *out. */
br_err espera_add(struct app *app, const struct principal *caller, const struct espera_nueva *in,
                  struct espera *out) WARN_UNUSED;

/* caller's entries on today or later (at most ESPERA_MAX * 2). */
br_err espera_list(struct app *app, const struct principal *caller, store_espera_fn fn,
                   void *ud) WARN_UNUSED;

/* Removes caller's entry id (BR_NOTFOUND "Aviso no encontrado" when she has
 * none by that id). */
br_err espera_delete(struct app *app, const struct principal *caller, const char *id) WARN_UNUSED;

/* Removes the entries whose day has passed (the sweeper's pass). */
br_err espera_sweep(struct app *app) WARN_UNUSED;

/* barbero_id's stretch [inicio, fin) (API timestamps) is free now: tells
 * the entries of its day a slot of which it opens. Best-effort: failures
 * are logged, never returned (the change itself is done). */
void espera_liberado(struct app *app, const char *barbero_id, const char *inicio, const char *fin);

/* The dates desde..hasta (YYYY-MM-DD, both included; clipped to today and
 * the horizon) may have more free time for barbero_id (NULL: every
 * barber): wider hours, a day off or a closure removed. */
void espera_liberado_dias(struct app *app, const char *barbero_id, const char *desde,
                          const char *hasta);

#endif
