/*
 * store/avisos.h - part of the store (include store.h): what a barber is
 * told and how (src/store/avisos.c): the barber's address and linked user
 * (table barbero_contactos), the notices of each booking, change and
 * cancel queued in the outbox in the transaction of the change itself, the
 * private calendar feed (its token's hash, its appointments); and the
 * appointments a day off or a closure meets.
 */
#ifndef BR_STORE_AVISOS_H
#define BR_STORE_AVISOS_H

#include "store.h"

/* --- the barber's notices ------------------------------------------------------- */

/* Whether the transactions that book, move or cancel an appointment also
 * queue the barber's notice (an "aviso_*" outbox message to the address of
 * barbero_contactos): on when a mail transport is configured (set once by
 * the core at start, before any request). */
void store_avisos_enable(struct store *st, bool on);

/* OUT: out, the id of the barber the user id speaks for (linked with
 * usuario_id). BR_NOTFOUND when none. */
br_err store_barbero_de_usuario(struct store *st, const char *user_id, br_id out) WARN_UNUSED;

/* --- the calendar feed ------------------------------------------------------------ */

/* Sets (hash: the hex SHA-256 of a new token) or removes (NULL) the
 * barber's feed token; the previous one stops working in the same
 * transaction. BR_NOTFOUND when there is no such barber. */
br_err store_feed_set(struct store *st, const char *barbero_id, const char *hash,
                      const char *now) STORE_WRITE WARN_UNUSED;

/* OUT: *ok, whether hash is the barber's live feed token's. */
br_err store_feed_check(struct store *st, const char *barbero_id, const char *hash,
                        bool *ok) WARN_UNUSED;

/* One appointment as the feed (and a closure's answer) shows it: no
 * address or phone of the client, only her name. Borrowed strings. */
struct cita_aviso {
    br_id id;
    br_id barbero_id;
    br_ts fecha_inicio, fecha_fin, created_at;
    const char *cliente_nombre; /* "" when she has none */
    const char *barbero_nombre;
    const char *servicio_nombre;
    const char *notas;            /* nullable */
    int64_t secuencia;            /* the barber's notices queued so far */
    const char *cliente_telefono; /* her profile's, nullable */
    bool con_correo;              /* she has an e-mail address (not the desk's placeholder) */
    bool con_whatsapp;            /* her WhatsApp consent holds */
};
typedef br_err (*store_cita_aviso_fn)(void *ud, const struct cita_aviso *c);

/* The barber's appointments that are not cancelled and start in
 * [desde, hasta), by start, at most limit. */
br_err store_feed_citas(struct store *st, const char *barbero_id, const char *desde,
                        const char *hasta, int64_t limit, store_cita_aviso_fn fn,
                        void *ud) WARN_UNUSED;

/* --- days off and closures that meet appointments ----------------------------------- */

/* OUT: *a (its motivo owned: free it). BR_NOTFOUND when there is none. */
br_err store_ausencia_get(struct store *st, const char *id, struct ausencia *a) WARN_UNUSED;

/* The confirmed appointments that start in [desde, hasta) and not before
 * now, of barbero_id (NULL: every barber's), by start, at most limit. */
br_err store_citas_afectadas(struct store *st, const char *barbero_id, const char *desde,
                             const char *hasta, const char *now, int64_t limit,
                             store_cita_aviso_fn fn, void *ud) WARN_UNUSED;

#endif
