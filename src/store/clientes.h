/*
 * store/clientes.h - part of the store (include store.h): the front desk's
 * clients - finding them, registering one (alone or with a booking), her
 * account claimed at sign-up - and the attendance of appointments
 * (src/store/clientes.c).
 */
#ifndef BR_STORE_CLIENTES_H
#define BR_STORE_CLIENTES_H

#include "store.h"

typedef br_err (*store_cliente_fn)(void *ud, const struct cliente_view *c);

/* Profiles whose nombre (folded as rule_busqueda_fold does), telefono or
 * e-mail contains patron (a LIKE pattern with '\' as its escape, folded;
 * NULL: every profile), or whose telefono's digits contain digitos or end
 * a number that is digitos (with its country code; "" or NULL: none), by
 * nombre then id, from after the profile after_id (NULL: the first) on, up
 * to limit (0: all). Each with its counts of completed and missed
 * appointments. */
br_err store_clientes_page(struct store *st, const char *patron, const char *digitos,
                           const char *after_id, int64_t limit, store_cliente_fn fn,
                           void *ud) WARN_UNUSED;

/* One user as a booking names its client. OUT: *c (its strings owned: free
 * c->email, perfil_clear). BR_NOTFOUND when there is no such user. */
br_err store_cliente_get(struct store *st, const char *id, struct cliente_view *c) WARN_UNUSED;
void cliente_view_clear(struct cliente_view *c);

/* The client the front desk made (rol cliente, no password: she has not
 * claimed her account, not deleted) whose nombre folds to
 * nombre_plegado (rule_busqueda_fold) and whose telefono's digits are
 * digitos, or end them or are ended by them with 9 or more on each side
 * (a country code written on one side only), the oldest when several: the
 * desk's "new client" who is in fact known. OUT: her id, "" when none. */
br_err store_cliente_gemela(struct store *st, const char *nombre_plegado, const char *digitos,
                            br_id id) WARN_UNUSED;

/* Who the desk typed in, settled in the transaction of what it does for
 * her (a booking: store_cita_book_desk; her registration alone:
 * store_cliente_alta), so that two desks typing the same person at once
 * make one person:
 * - nuevo (nullable): created first, unless by then a client with the
 *   same folded name (plegado) and number (digitos, store_cliente_gemela's
 *   rule) exists: BR_CONFLICT "client exists", nothing written;
 * - email (nullable): given to the existing client when she has none (a
 *   client the desk made without one).
 * Either way an e-mail taken meanwhile is BR_CONFLICT "email taken". */
struct desk_cliente {
    const struct new_user *nuevo;
    const char *plegado, *digitos;
    const char *email;
};

/* Settles q alone, in a transaction of its own: the client cliente_id
 * (q->nuevo's id, or an existing client's). */
br_err store_cliente_alta(struct store *st, const struct desk_cliente *q,
                          const char *cliente_id) STORE_WRITE WARN_UNUSED;

/* Sign-up over a client the desk created: when the user with u->email has
 * no password and a client's rol and was not deleted, sets u->password_hash, opens the
 * session of u (session_hash, created_at as the sign-in), fills her
 * profile's empty nombre and telefono from u and sets its rol to u->rol
 * (when given), all in one transaction.
 * OUT: *claimed, and her id in claimed_id (u->id is not used). Nothing is
 * written when there is no such account. */
br_err store_user_claim(struct store *st, const struct new_user *u, bool *claimed,
                        br_id claimed_id) STORE_WRITE WARN_UNUSED;

/* Marks an appointment's attendance (estado completada or no_presentado)
 * or takes the mark back (confirmada), in one write transaction that reads
 * the cita first. Refused (BR_CONFLICT, why set, nothing written) when the
 * cita is cancelled, has not started by now, or carries a mark made before
 * hoy_desde (the start of the shop's day today). BR_NOTFOUND: no such cita. */
enum asistencia_why { ASISTENCIA_OK, ASISTENCIA_CANCELADA, ASISTENCIA_ANTES, ASISTENCIA_CERRADA };
struct asistencia_cambio {
    const char *id;
    const char *estado; /* completada | no_presentado | confirmada */
    const char *now, *hoy_desde;
    enum asistencia_why why; /* OUT */
    br_id cliente_id;        /* OUT: the cita's client */
};
br_err store_cita_asistencia(struct store *st, struct asistencia_cambio *a) STORE_WRITE WARN_UNUSED;

/* A correction of a client the desk made and she has not claimed (no
 * password): each field only when its set_ flag is given. */
enum correccion_why {
    CORRECCION_OK,
    CORRECCION_RECLAMADA,    /* she has a password: her data are hers (BR_CONFLICT) */
    CORRECCION_SIN_CONTACTO, /* neither an address nor a phone would be left (BR_INVALID) */
    CORRECCION_EMAIL,        /* another account has the address (BR_CONFLICT) */
    CORRECCION_GEMELA,       /* another unclaimed desk client has the name and phone she would have
                                (store_cliente_gemela's rule; BR_CONFLICT) */
};
struct cliente_correccion {
    const char *id;
    const char *nombre; /* NULL: unchanged */
    bool set_telefono;
    const char *telefono; /* with set_telefono: NULL removes it */
    bool set_email;
    const char *email; /* with set_email: NULL removes it (the placeholder takes its place) */
    /* a WhatsApp consent given for the number the profile had follows the
     * phone: to wa_telefono (E.164 digits of the new one; NULL: withdrawn,
     * by por); wa_cc, the country code numbers without one take */
    const char *wa_cc;
    const char *wa_telefono;
    const char *por;
    enum correccion_why why; /* OUT */
};
/* Applies c in one transaction, in the client's turn (client_turn):
 * BR_UNAUTH when her account was closed, BR_NOTFOUND when id is no user
 * with a profile or a staff account's, BR_CONFLICT or BR_INVALID with
 * c->why; nothing is written on any error. */
br_err store_cliente_corregir(struct store *st,
                              struct cliente_correccion *c) STORE_WRITE WARN_UNUSED;

#endif
