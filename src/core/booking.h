/*
 * booking.h - appointments: the specification's POST /api/citas processing
 * order, and who sees which appointments.
 */
#ifndef BR_BOOKING_H
#define BR_BOOKING_H

#include "app.h"

#define BOOKING_CAP_MSG "Máximo de citas pendientes alcanzado"

/* What the client asked for, as text. An id or timestamp that arrived as
 * another JSON type is passed as its JSON text (so it is simply not found,
 * or not a valid timestamp). NULL or "" means missing. */
struct booking_input {
    const char *barbero_id;
    const char *servicio_id;
    const char *fecha_inicio;
    const char *notas; /* NULL or "": none */
};

/* Books an appointment for caller, in the specification's order:
 * required fields, service, fecha_fin, barber, overlap, calendar attempt,
 * store (with the history record and the queued e-mail, in one
 * transaction), e-mail attempt. Errors (detail in err_msg()):
 *   BR_INVALID   "Faltan campos requeridos", "fecha_inicio inválida",
 *                BOOKING_CAP_MSG (after the overlap check: the client
 *                already holds app->cfg->max_upcoming appointments
 *                that are not cancelled and start after now)
 *   BR_NOTFOUND  "Servicio no encontrado", "Barbero no encontrado"
 *   BR_CONFLICT  "El horario ya no está disponible"
 *   BR_STORE     the store's message (storing the appointment failed)
 *   BR_INTERNAL  anything unexpected
 * OUT: *out, the stored appointment (cita_clear). */
br_err booking_create(struct app *app, const struct principal *caller,
                      const struct booking_input *in, struct cita *out) WARN_UNUSED;

/* Whom a booking is for, and what else it obeys: booking_create fills it
 * from the caller; the front desk (core/mostrador.c) books for a client. */
struct booking_para {
    const char *cliente_id;
    const char *email;  /* NULL: none (no confirmation, no attendee) */
    const char *nombre; /* in the event's title and the e-mail */
    bool has_perfil;
    /* staff: no cap on upcoming appointments; the client the desk typed
     * in (quien, nullable) is settled in the booking's own transaction
     * (store_cita_book_desk). When she turns out to exist by then (her
     * e-mail taken, her twin created meanwhile) the answer is BR_CONFLICT
     * "El email ya está registrado", nothing is stored, and *existe (when
     * given) is set: asked again, the desk finds her. */
    bool staff;
    const struct desk_cliente *quien;
    bool *existe;
    /* nullable: called after the barber's lookup (step 5), before the
     * overlap check; its error is the answer */
    br_err (*check)(void *ud, struct app *app, const struct servicio *s, const struct barbero *b,
                    int64_t start_ms, int64_t end_ms);
    void *check_ud;
};

/* booking_create's walk for whom para names. */
br_err booking_create_para(struct app *app, const struct booking_para *para,
                           const struct booking_input *in, struct cita *out) WARN_UNUSED;

/* Whose appointments caller may see: NULL for admin and barbero (all),
 * else the caller's own id (points into caller). */
const char *booking_list_scope(const struct principal *caller);

/* The appointments of q (q->estado "" is no filter), by start then id.
 * Errors are the store's (BR_BUSY: 503 with Retry-After); a callback's
 * error stops the listing and is returned as is. */
br_err booking_list(struct app *app, const struct cita_range *q, store_cita_fn fn,
                    void *ud) WARN_UNUSED;

/* The calendar event's title and description for a booking, exactly as
 * the specification words them. Caller frees both. */
void booking_event_text(const char *servicio, const char *cliente, const char *barbero,
                        const char *notas, char **summary, char **description);

#endif
