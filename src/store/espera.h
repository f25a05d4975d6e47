/*
 * store/espera.h - part of the store (include store.h): the signing key of
 * the appointments' personal links and each client's generation of them,
 * and the waiting list with the notices it has sent (src/store/espera.c).
 */
#ifndef BR_STORE_ESPERA_H
#define BR_STORE_ESPERA_H

#include "store.h"

/* --- keys ------------------------------------------------------------------ */

/* The key stored under nombre; when there is none yet, stores candidate
 * (hex) first - of several processes starting at once, the first one's
 * stays and all read it. OUT: out (NUL-terminated, at most n - 1 octets). */
br_err store_clave(struct store *st, const char *nombre, const char *candidate, char *out,
                   size_t n) STORE_WRITE WARN_UNUSED;

/* The generation of the personal links of cita_id's client: 0 until a
 * correction of her address or phone ended the links sent before
 * (appointment_links_end). BR_NOTFOUND when there is no such appointment.
 * OUT: *gen. */
br_err store_enlace_gen(struct store *st, const char *cita_id, int64_t *gen) WARN_UNUSED;

/* --- the waiting list ------------------------------------------------------ */

/* One entry: a client waiting for a day, for one service, with one barber
 * or any ("" barbero_id). The names are the listing's (NULL when written). */
struct espera {
    br_id id;
    br_id cliente_id;
    br_id servicio_id;
    br_id barbero_id; /* "": any barber */
    char fecha[11];   /* YYYY-MM-DD, the shop's date */
    br_ts created_at;
    const char *servicio_nombre; /* listing only, borrowed */
    const char *barbero_nombre;  /* listing only, borrowed; NULL: any */
    /* candidates only, borrowed: whom to tell */
    const char *email;
    const char *nombre;
};

/* Adds e unless its client already has max entries on today or later
 * (BR_TOOLARGE) or one for the same service, date and barber
 * (BR_CONFLICT); counted and written in one transaction. */
br_err store_espera_add(struct store *st, const struct espera *e, const char *today,
                        int max) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_espera_fn)(void *ud, const struct espera *e);

/* The client's entries on today or later, by date then creation, at most
 * limit, with the names of their service and barber. */
br_err store_espera_list(struct store *st, const char *cliente_id, const char *today, int limit,
                         store_espera_fn fn, void *ud) WARN_UNUSED;

/* Removes the client's entry id. BR_NOTFOUND when she has none by that id. */
br_err store_espera_delete(struct store *st, const char *id,
                           const char *cliente_id) STORE_WRITE WARN_UNUSED;

/* Whether entry id is still on the list. OUT: *found. */
br_err store_espera_existe(struct store *st, const char *id, bool *found) WARN_UNUSED;

/* Removes the entries of the days before today (and their notices). OUT:
 * *removed. */
br_err store_espera_sweep(struct store *st, const char *today,
                          int64_t *removed) STORE_WRITE WARN_UNUSED;

/* The entries of the dates desde..hasta (both included) a freed stretch of
 * barbero_id may suit (those for that barber or any; NULL: every entry),
 * oldest first, at most limit; each with its client's e-mail (a front-desk
 * client without one: EMAIL_NINGUNO_PREFIX and her id) and name. */
br_err store_espera_candidatas(struct store *st, const char *desde, const char *hasta,
                               const char *barbero_id, int limit, store_espera_fn fn,
                               void *ud) WARN_UNUSED;

/* --- freed slots, the waiting list's work queue ---------------------------- */

/* A slot freed: barbero_id's stretch [inicio, fin) (API timestamps), or
 * the dates desde..hasta (YYYY-MM-DD; inicio and fin "") for barbero_id
 * or, "", every barber. Written with the change that freed it (the
 * cita_change's, store_horario_set's and store_ausencia_delete's
 * transaction: espera_liberacion_insert), taken by a worker that queues
 * its notices and deletes it in one transaction. */
struct espera_liberacion {
    br_id id;
    br_id barbero_id; /* "": any */
    br_ts inicio, fin;
    char desde[11], hasta[11];
    br_ts created_at;
};

/* Takes the oldest freed slot no worker holds at now, holding it until
 * lease_until (another worker or node takes it only once that passed).
 * OUT: *l. BR_NOTFOUND when there is none. */
br_err store_espera_liberacion_take(struct store *st, const char *now, const char *lease_until,
                                    struct espera_liberacion *l) STORE_WRITE WARN_UNUSED;
/* Puts a taken freed slot back, to be taken again from `at` on (after a
 * failure). */
br_err store_espera_liberacion_release(struct store *st, const char *id,
                                       const char *at) STORE_WRITE WARN_UNUSED;

/* One notice: entry entrada_id told of the slot of barbero_id at inicio
 * by m (its e-mail when m.recipient is set, its WhatsApp copy when
 * m.wa_cliente_id's consent holds). */
struct espera_aviso {
    const char *entrada_id, *barbero_id, *inicio;
    struct outbox_msg m;
};

/* In one transaction: queues each notice of v, in order, whose entry
 * still exists and was never told of that slot (lista_espera_avisos
 * records it), until max were queued, then deletes the freed slot
 * liberacion_id (gone already: another worker finished it; the notices it
 * queued are not queued twice). OUT: *queued, how many notices were
 * queued. */
br_err store_espera_avisar(struct store *st, const char *liberacion_id,
                           const struct espera_aviso *v, int n, int max,
                           int *queued) STORE_WRITE WARN_UNUSED;

#endif
