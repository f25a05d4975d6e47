/*
 * cambios.h - changes to a booked appointment:
 * cancel and reschedule, who may make them and until when. (The reminder
 * e-mails are the outbox worker's: mail/outbox.c, store_reminders_queue.)
 *
 * Each change is one write transaction (store_cita_change) that re-reads
 * the appointment and re-checks every rule, so two changes or a change and
 * a booking racing for one slot end as if one came after the other. The
 * calendar follows after the commit, best-effort and bounded like the
 * booking's event; the e-mails go through the outbox, written in the same
 * transaction.
 */
#ifndef BR_CAMBIOS_H
#define BR_CAMBIOS_H

#include "agenda.h"
#include "app.h"

#define CAMBIO_MARCADA_MSG "La cita ya tiene la asistencia marcada"

/* Cancels (fecha_inicio NULL and reschedule false) or reschedules the
 * cita named by id text as caller. Errors (detail in err_msg()):
 *   BR_INVALID   "Faltan campos requeridos", "fecha_inicio inválida",
 *                "La fecha ya pasó" (reschedule only)
 *   BR_NOTFOUND  "Cita no encontrada" (also another client's)
 *   BR_CONFLICT  "La cita está cancelada", CAMBIO_MARCADA_MSG (its
 *                attendance is marked: undo the mark first), "Ya no se puede cambiar: faltan
 *                menos de 2 horas" (from the setting), "El horario ya no
 *                está disponible"
 *   BR_BUSY, BR_INTERNAL
 * OUT: cita_id, the cita's canonical id (for the answer). */
br_err cambios_apply(struct app *app, const struct principal *caller, const char *id,
                     bool reschedule, const char *fecha_inicio, br_id cita_id) WARN_UNUSED;

/* cambios_apply for whoever holds the personal link token (gestion.h):
 * the link's cita, with its client's rules and messages; a token that is
 * no link of this service is "Cita no encontrada" (BR_NOTFOUND). */
br_err cambios_apply_link(struct app *app, const char *token, bool reschedule,
                          const char *fecha_inicio, br_id cita_id) WARN_UNUSED;
/* Where the cita named by id text could move to: the free slots of fecha
 * (YYYY-MM-DD, the shop's zone) for its barber and service, read as
 * agenda_disponibilidad reads them but with the cita itself not holding
 * its time (so a move by a quarter of an hour is offered). Whether the
 * move is still allowed (cancelled, marked, the cut-off) is the change's
 * to judge. Errors, in this order: BR_INVALID "Faltan campos requeridos",
 * "fecha inválida"; BR_NOTFOUND "Cita no encontrada" (also another
 * client's); agenda_disponibilidad's ("Servicio no encontrado", "Barbero
 * no encontrado": deactivated since). OUT: *out (agenda_dia_clear its dia). */
struct cambio_huecos {
    br_id cita_id, servicio_id, barbero_id;
    struct agenda_dia dia;
};
br_err cambios_huecos(struct app *app, const struct principal *caller, const char *id,
                      const char *fecha, struct cambio_huecos *out) WARN_UNUSED;
/* cambios_huecos for whoever holds the personal link token. */
br_err cambios_huecos_link(struct app *app, const char *token, const char *fecha,
                           struct cambio_huecos *out) WARN_UNUSED;

/* The stretch a closure or day off covers: [desde, hasta) (API
 * timestamps), of barbero_id (NULL: every barber's). */
struct cambio_dentro {
    const char *desde, *hasta, *barbero_id;
};

/* Cancels the cita named by id text as staff would, because the shop or
 * its barber is off that day: the same transaction, calendar follow-up and
 * barber's notice as a staff cancel; the client's e-mail says so and
 * carries mensaje (nullable, checked by the caller). Only while the cita,
 * as the transaction reads it, still starts inside *dentro (and is its
 * barber's): one moved off since it was listed is BR_CONFLICT "La cita ya
 * no cae en el cierre", untouched. Errors otherwise as cambios_apply's
 * cancel. */
br_err cambios_cancelar_cierre(struct app *app, const char *id, const char *mensaje,
                               const struct cambio_dentro *dentro, br_id cita_id) WARN_UNUSED;

#endif
