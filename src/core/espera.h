/*
 * espera.h - the waiting list: a client asks to be told when a slot frees
 * on a day (for a service, with one barber or any), and is told, by the
 * channels she accepted through the outbox, when a cancel, a reschedule,
 * a closure or day off removed or wider hours free one that fits.
 *
 * The change that frees a slot records it (espera_liberaciones) in its own
 * transaction; a worker then queues the notices - by e-mail and, when her
 * consent holds, by WhatsApp - in one transaction with the record that
 * each entry was told of that slot (so an entry never hears twice of one
 * slot) and the freed slot's deletion: at most ESPERA_FANOUT entries told
 * per freed slot, the oldest of those a free slot fits and that were not
 * told of it before (of the ESPERA_CANDIDATAS oldest entries of its days),
 * so entries that cannot use it, or heard of it already, never keep the
 * others from hearing. A notice carries a link that opens the booking
 * on that slot; the first to book it gets it (the booking's own overlap
 * rule decides). Entries last until their day has
 * passed: not listed after, removed by the sweeper.
 */
#ifndef BR_ESPERA_H
#define BR_ESPERA_H

#include "app.h"

#define ESPERA_MAX        10  /* entries on today or later one client may hold */
#define ESPERA_FANOUT     20  /* entries told of one freed stretch, at most */
#define ESPERA_CANDIDATAS 200 /* entries read for one freed stretch, oldest first, at most */

#define ESPERA_MAX_MSG       "Máximo de avisos alcanzado"
#define ESPERA_DUP_MSG       "Ya estás en la lista de espera de ese día"
#define ESPERA_SIN_CANAL_MSG "El cliente no tiene correo ni WhatsApp para avisarle"

/* Whose entries a call is about. Every call takes cliente_id (NULL or "":
 * none): staff (the role rule, as at the front desk) naming a client act
 * for her; a client's cliente_id is ignored (hers are always her own, as
 * GET /api/citas treats its cliente_id). Staff without one act for
 * themselves. A cliente_id of staff that names no user with a profile, a
 * staff account, or is not a UUID: BR_NOTFOUND MOSTRADOR_CLIENTE_MSG. */

struct espera_nueva {
    const char *servicio_id; /* required */
    const char *fecha;       /* required: YYYY-MM-DD, today or later, within the horizon */
    const char *barbero_id;  /* NULL or "": any barber */
    const char *cliente_id;  /* NULL or "": the caller's own (see above) */
};

/* Adds an entry of the caller or, for staff, of in->cliente_id, checked in
 * this order: the fields (BR_INVALID "Faltan campos requeridos", "fecha
 * inválida", "La fecha ya pasó", "Fecha fuera del plazo de reserva"), the
 * client named by staff (BR_NOTFOUND MOSTRADOR_CLIENTE_MSG; BR_INVALID
 * ESPERA_SIN_CANAL_MSG when she has neither an e-mail address nor, with
 * WhatsApp configured, her WhatsApp consent in force), the service and the
 * barber (BR_NOTFOUND "Servicio no encontrado", "Barbero no encontrado"),
 * then BR_CONFLICT ESPERA_DUP_MSG and BR_INVALID ESPERA_MAX_MSG (her own
 * entries counted). OUT: *out. */
br_err espera_add(struct app *app, const struct principal *caller, const struct espera_nueva *in,
                  struct espera *out) WARN_UNUSED;

/* The entries on today or later (at most ESPERA_MAX * 2) of the caller or,
 * for staff, of cliente_id (BR_NOTFOUND MOSTRADOR_CLIENTE_MSG). */
br_err espera_list(struct app *app, const struct principal *caller, const char *cliente_id,
                   store_espera_fn fn, void *ud) WARN_UNUSED;

/* Removes the entry id of the caller or, for staff, of cliente_id
 * (BR_NOTFOUND MOSTRADOR_CLIENTE_MSG; BR_NOTFOUND "Aviso no encontrado" when
 * she has none by that id). */
br_err espera_delete(struct app *app, const struct principal *caller, const char *cliente_id,
                     const char *id) WARN_UNUSED;

/* Removes the entries whose day has passed (the sweeper's pass). */
br_err espera_sweep(struct app *app) WARN_UNUSED;

/* The freed slot to record, in the change's own transaction, for
 * barbero_id's stretch [inicio, fin) (API timestamps) given up by a cancel
 * or a reschedule, made now. False for unreadable times. The store records
 * it with the row's own times, and only when they are not over yet (the
 * stretch read before may have moved). OUT: *l. */
bool espera_liberacion_tramo(struct espera_liberacion *l, const char *barbero_id,
                             const char *inicio, const char *fin);

/* The same for the dates desde..hasta (YYYY-MM-DD, both included; clipped
 * to today and the horizon; NULL: no bound) that may have more free time for barbero_id
 * (NULL: every barber): wider hours, a day off or a closure removed. */
bool espera_liberacion_dias(const struct app *app, struct espera_liberacion *l,
                            const char *barbero_id, const char *desde, const char *hasta);

/* The same for the dates from today to the horizon whose ISO weekday d
 * (1 Monday .. 7 Sunday) has bit (1u << d) in dias: one freed range per run
 * of such dates, for barbero_id (the days a barber's new week gave more
 * time). OUT: *l (caller frees; NULL when none). Returns how many. */
size_t espera_liberaciones_semana(const struct app *app, const char *barbero_id, unsigned dias,
                                  struct espera_liberacion **l);

/* After a change that recorded a freed slot committed: the outbox worker
 * is woken to tell the waiting at once (espera_avisar_pendientes on its
 * thread); without one (no mail, no WhatsApp) it is done here. */
void espera_liberado(struct app *app);

/* Tells the waiting of every freed slot recorded and not held by another
 * worker: takes each (a lease: one worker or node at a time), finds for
 * each entry of its day(s) the first free slot that meets it, and queues
 * the notices (e-mail, and WhatsApp when her consent holds) and deletes
 * the record in one transaction. A record that fails is put back for a
 * later pass (the outbox worker's next wake-up, the sweeper's; a crash
 * leaves it for the next start's). OUT: *queued (may be NULL). */
br_err espera_avisar_pendientes(struct app *app, int *queued) WARN_UNUSED;

/* The booking link a notice carries: public URL, service, barber, day
 * (YYYY-MM-DD) and start (an API timestamp) of the slot it announces. */
#define ESPERA_LINK_FMT "%s/reservar?servicio=%s&barbero=%s&fecha=%s&inicio=%s"
/* How much such a link adds to the public URL, at most. */
#define ESPERA_LINK_EXTRA                                                                          \
    (sizeof "/reservar?servicio=&barbero=&fecha=&inicio=" - 1 + 2 * (sizeof(br_id) - 1) + 10 +     \
     (sizeof(br_ts) - 1))

/* Why a notice whose entry is gone is not sent. */
#define ESPERA_AVISO_SIN_ENTRADA "el aviso de la lista de espera ya no existe"

/* Just before waiting-list notice m leaves (by either channel, at every
 * attempt): whether its entry is still on the list and the slot it
 * announces (the barber, day and service of its link, at its fecha_inicio)
 * still free as GET /api/disponibilidad reads it - not booked meanwhile,
 * not past the minimum notice, the service and the barber still offered.
 * OUT: *why (static text, Spanish, the message's recorded reason) when
 * not; NULL when it may go, or when the link is not one a notice writes
 * (no slot to check). The store's errors as they come (the caller tries
 * again later). */
br_err espera_aviso_vigente(struct app *app, const struct outbox_msg *m,
                            const char **why) WARN_UNUSED;

#endif
