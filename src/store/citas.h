/*
 * store/citas.h - part of the store (include store.h): appointments -
 * booking, the overlap check, the listings (also with the caller's
 * session), a barber's busy stretches (src/store/citas.c); their detail,
 * cancel, reschedule and reminders (src/store/cambios.c).
 */
#ifndef BR_STORE_CITAS_H
#define BR_STORE_CITAS_H

#include "store.h"

/* --- citas ----------------------------------------------------------------- */

/* OUT: *overlaps, whether a non-cancelled cita of the barber intersects
 * [inicio, fin) (touching ends do not intersect). */
br_err store_cita_overlaps(struct store *st, const char *barbero_id, const char *inicio,
                           const char *fin, bool *overlaps) WARN_UNUSED;

/* Books: in one write transaction, re-checks the overlap, inserts the cita
 * (with its service's price of that moment as its precio), its
 * historial_cortes record (fecha = date part of fecha_inicio) and, when
 * mail is non-NULL, the confirmation in the outbox. BR_CONFLICT when the
 * slot was taken meanwhile (nothing written). */
br_err store_cita_book(struct store *st, const struct cita *c,
                       const struct outbox_msg *mail) STORE_WRITE WARN_UNUSED;

/* OUT: *n, how many of the client's appointments are upcoming - not
 * cancelled, starting after now - counting no further than bound. */
br_err store_citas_upcoming(struct store *st, const char *cliente_id, const char *now,
                            int64_t bound, int64_t *n) WARN_UNUSED;

/* store_cita_book that also refuses, with BR_TOOLARGE and nothing written,
 * when the client already holds cap upcoming appointments (as
 * store_citas_upcoming counts them from now), counted in the same
 * transaction: one client's bookings take turns, so racing ones never
 * pass the cap together. cap 0 (or now NULL): no cap. When dia (the shop's
 * date of the start, YYYY-MM-DD) is given, the client's waiting-list
 * entries the booking answers - that day, that service, that barber or
 * any - go in the same transaction. */
br_err store_cita_book_capped(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                              const char *now, int64_t cap,
                              const char *dia) STORE_WRITE WARN_UNUSED;

struct desk_cliente; /* clientes.h */

/* store_cita_book for a booking the staff make (the front desk): no cap
 * (dia as store_cita_book_capped's); quien (nullable) as above. */
br_err store_cita_book_desk(struct store *st, const struct cita *c, const struct outbox_msg *mail,
                            const struct desk_cliente *quien, int64_t margen_min,
                            const char *dia) STORE_WRITE WARN_UNUSED;
/* (and keeps the clean-up margins: BR_CONFLICT when the new appointment,
 * with its service's margen_min after it, meets another live one with
 * that one's margin after it; the plain overlap is checked first.) */

/* The same margin check as a plain read, for the answer before the
 * calendar is asked. OUT: *taken. */
br_err store_cita_margin_taken(struct store *st, const char *barbero_id, const char *inicio,
                               const char *fin, int64_t margen_min, bool *taken) WARN_UNUSED;

/* The barber's live appointments that start in [desde, hasta), each with
 * its service's margen_min, in no particular order; but_id (nullable) not
 * among them (an appointment being moved does not hold its own time). */
typedef br_err (*store_busy_margen_fn)(void *ud, const char *inicio, const char *fin,
                                       int64_t margen_min);
br_err store_citas_busy_margen(struct store *st, const char *barbero_id, const char *desde,
                               const char *hasta, const char *but_id, store_busy_margen_fn fn,
                               void *ud) WARN_UNUSED;

br_err store_cita_exists(struct store *st, const char *id, bool *exists) WARN_UNUSED;

typedef br_err (*store_cita_fn)(void *ud, const struct cita_view *c);

/* A stretch of GET /api/citas's listing in (fecha_inicio, id) order, with
 * the three embedded objects joined, in one query: what a page or a cursor
 * reads. Every member but limit is optional (NULL). Timestamps are
 * canonical (YYYY-MM-DDTHH:MM:SS.sssZ). */
struct cita_range {
    const char *cliente_id;              /* one client's (NULL: everybody's) */
    const char *estado;                  /* in this estado only */
    const char *desde;                   /* fecha_inicio >= desde */
    const char *hasta;                   /* fecha_inicio < hasta */
    const char *after_inicio, *after_id; /* both or neither: rows after this one */
    int64_t limit;                       /* rows at most (0: all) */
};
br_err store_citas_range(struct store *st, const struct cita_range *q, store_cita_fn fn,
                         void *ud) WARN_UNUSED;

/* The session's principal and, when the session is a client's, her
 * appointments in q (its cliente_id ignored: hers) given to fn as
 * store_citas_range would - in one statement (PostgreSQL: one round trip
 * instead of two). Where reads can be marked (store_marks) the API asks
 * store_session_principal instead, which remembers the session. *listed tells
 * whether fn was given the listing (a client's session); a barbero's or an
 * admin's session gets false and lists as usual. BR_NOTFOUND when there is
 * no such live session; fn's own error (after *listed) stops the listing. */
br_err store_session_citas(struct store *st, const char *token_hash, const char *now,
                           struct principal *p, const struct cita_range *q, store_cita_fn fn,
                           void *ud, bool *listed) WARN_UNUSED;

/* The barber's non-cancelled appointments that intersect [desde, hasta)
 * (canonical timestamps), in no particular order. */
typedef br_err (*store_busy_fn)(void *ud, const char *inicio, const char *fin);
br_err store_citas_busy(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, store_busy_fn fn, void *ud) WARN_UNUSED;

/* --- detail, cancel, reschedule, reminders -------------------------------------------- */

/* The cita with its client's address and name, the barber's and service's
 * names and the service's length. OUT: *d (cita_detail_clear).
 * BR_NOTFOUND when there is no such cita. */
br_err store_cita_detail(struct store *st, const char *id, struct cita_detail *d) WARN_UNUSED;

/* The cita as GET /api/citas lists it (fn is called once, or never when
 * there is no such cita). */
br_err store_cita_view(struct store *st, const char *id, store_cita_fn fn, void *ud) WARN_UNUSED;

/* Why a change was refused (with BR_CONFLICT). */
enum cambio_why {
    CAMBIO_OK,
    CAMBIO_CANCELADA,
    CAMBIO_MARCADA,
    CAMBIO_PLAZO,
    CAMBIO_SOLAPE,
    CAMBIO_FUERA
};

/* A cancel (inicio NULL) or a reschedule to [inicio, fin), done in one
 * write transaction that re-reads the cita and re-checks everything: the
 * cita must exist (and be cliente_id's when that is set: else
 * BR_NOTFOUND), not be cancelled nor carry an attendance mark
 * (completada, no_presentado), and for a client start at or after
 * plazo (the cut-off); a reschedule's new slot must be free of the
 * barber's other live citas (on PostgreSQL the exclusion constraint backs
 * it). A cancel marks the cita cancelada and deletes its historial_cortes
 * record; a reschedule moves the cita and its record's fecha. Either drops
 * the cita's pending reminder (it is for a time that no longer holds),
 * queues mail and records the freed stretch (libera) when given.
 * BR_CONFLICT with why set when refused; nothing is written on any error. */
struct cita_change {
    const char *id;
    const char *cliente_id; /* non-NULL: the caller is this client */
    const char *plazo;      /* with cliente_id: the earliest start still changeable */
    const char *inicio, *fin;
    /* non-NULL: the change comes through a personal link of this client
     * (the appointment's), signed at enlace_gen: BR_NOTFOUND when her links
     * moved to another generation meanwhile (store_enlace_gen) */
    const char *enlace_cliente;
    int64_t enlace_gen;
    /* non-NULL: a cancel only while the row, as read under the lock, starts
     * in [dentro_desde, dentro_hasta) and, with dentro_barbero, is that
     * barber's (a closure's dates): else BR_CONFLICT CAMBIO_FUERA */
    const char *dentro_desde, *dentro_hasta, *dentro_barbero;
    /* a reschedule: the new start's date in the shop's zone (NULL: none);
     * her waiting-list entries it answers go with it, as a booking's */
    const char *dia;
    /* the client's message (nullable); a cancel's names the time the row
     * holds as read under the lock (another change may have moved it) */
    struct outbox_msg *mail;
    /* the stretch it frees, recorded for the waiting list (nullable): the
     * row's, as read under the lock, and only when it has not ended by
     * libera->created_at (what the caller read may have moved meanwhile) */
    struct espera_liberacion *libera;
    bool freed;          /* OUT: libera was recorded */
    enum cambio_why why; /* OUT */
    char *event_id;      /* OUT on success: the cita's Google event (caller frees) */
};
br_err store_cita_change(struct store *st, struct cita_change *ch) STORE_WRITE WARN_UNUSED;

/* Records a calendar event made after the booking (a reschedule of a cita
 * that had none, or whose event the calendar no longer has): only when the
 * cita still has the event was (NULL: none) and is not cancelled. OUT:
 * *stored, whether it was recorded. */
br_err store_cita_set_event(struct store *st, const char *id, const char *event_id, const char *was,
                            bool *stored) STORE_WRITE WARN_UNUSED;

/* Queues the reminders of the offset window_ms due at now_ms: one per
 * live cita and channel starting within (now + floor, now + window] (floor:
 * the next smaller offset, 0 for none, whose own reminder is the one then
 * due), for its current start, when that start was announced to the client
 * by that channel (the confirmation or reschedule message of that start)
 * at least window before it; at most a batch per call. Exactly once across
 * processes (the unique index mail_outbox_recordatorio_canal: cita, start,
 * channel, offset); never for a cancelled cita (checked under the cita's
 * lock). OUT: *queued. */
br_err store_reminders_queue(struct store *st, int64_t now_ms, int64_t window_ms, int64_t floor_ms,
                             int *queued) STORE_WRITE WARN_UNUSED;
/* OUT: *next, the earliest start of a live cita after `after` ("" when
 * none): the worker's next reminder is due window before it. */
br_err store_reminder_next(struct store *st, const char *after, br_ts next) WARN_UNUSED;

#endif
