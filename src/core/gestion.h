/*
 * gestion.h - each appointment's personal link, `<public URL>/c/<token>`:
 * what it shows and the changes it allows without signing in.
 *
 * The token is never stored. It is the appointment's id (16 octets) and an
 * HMAC-SHA256 of that id under the service's link key (32 random octets,
 * made once and kept in the store: store_clave "enlaces"), in base64url
 * without padding: 64 characters, 256 bits an attacker would have to guess.
 * Once a client's address or phone was corrected, her links are of a new
 * generation (store_enlace_gen): the token then carries it too (4 octets
 * between the id and the HMAC, which covers both: 70 characters), and a
 * link of an older generation - sent to the address or phone that was
 * wrong - opens nothing. Any process holding the key computes the link of
 * any appointment when it writes a message (the outbox composes long after
 * the booking, reminders are queued by the database) and checks a link by
 * computing it again, in constant time, before it reads anything. So the
 * link survives a reschedule (same id) and shows a cancelled appointment
 * as cancelled; a new key (a row removed by hand) revokes every link at
 * once. See docs/decisions.md.
 */
#ifndef BR_GESTION_H
#define BR_GESTION_H

#include "app.h"

#define GESTION_TOKEN_MAX 70 /* a token's characters at most (64 at generation 0) */

/* Reads the link key into app (making and storing it the first time). */
br_err gestion_key_load(struct app *app) WARN_UNUSED;

/* The token of cita_id (a UUID) at her client's link generation gen
 * (store_enlace_gen) under key. False when cita_id is none. */
bool gestion_token(const unsigned char key[APP_LINK_KEY_BYTES], const char *cita_id, uint32_t gen,
                   char out[GESTION_TOKEN_MAX + 1]);

/* "<base>/c/<token>" (caller frees); NULL when cita_id is no UUID. */
char *gestion_link(const unsigned char key[APP_LINK_KEY_BYTES], const char *base,
                   const char *cita_id, uint32_t gen);

/* The appointment a token names and the generation it was signed at, when
 * it is one of key's. OUT: cita_id, *gen. */
bool gestion_token_cita(const unsigned char key[APP_LINK_KEY_BYTES], const char *token,
                        br_id cita_id, uint32_t *gen);

/* The appointment a link opens: its token is one of the service's, of the
 * generation her links are at now. BR_NOTFOUND "Cita no encontrada"
 * otherwise (an ended link, a gone appointment). OUT: cita_id, *gen (the
 * generation, for a change to check again in its own transaction). */
br_err gestion_cita(struct app *app, const char *token, br_id cita_id, uint32_t *gen) WARN_UNUSED;

/* What the page behind a link shows besides the appointment. */
struct gestion_vista {
    br_id cita_id;
    bool cancelada;
    bool puede_cambiar; /* not cancelled and before the cut-off */
    br_ts limite;       /* the cut-off: the start minus the setting */
};

/* The appointment of token (BR_NOTFOUND "Cita no encontrada" for a token
 * that is no link of this service, or whose appointment is gone). Reads
 * only. */
br_err gestion_ver(struct app *app, const char *token, struct gestion_vista *out) WARN_UNUSED;

#endif
