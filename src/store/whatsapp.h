/*
 * store/whatsapp.h - part of the store (include store.h): the clients'
 * consent to WhatsApp messages, what the outbox worker records of a
 * WhatsApp message (its Graph API id, its delivery statuses), and the
 * messages of one appointment by every channel (src/store/whatsapp.c).
 */
#ifndef BR_STORE_WHATSAPP_H
#define BR_STORE_WHATSAPP_H

#include "store.h"

/* A client's consent: the number it was given for (E.164 digits), when
 * it was given and, once withdrawn, when, and who made that last change. */
struct wa_consent {
    bool found;
    char telefono[32];
    br_ts otorgado_en;
    br_ts retirado_en;    /* "": in force */
    br_id registrado_por; /* the staff user who recorded it; "": she herself */
};

/* The account e-mail that tells a client her WhatsApp consent was given
 * from her session: mail (its id, kind and created_at), queued unless
 * max of them were queued for her since desde. */
struct cuenta_mail;
struct wa_aviso {
    const struct cuenta_mail *mail;
    const char *desde;
    int64_t max;
};

/* Gives (telefono: E.164 digits) or withdraws (telefono NULL) the consent
 * of cliente_id at now, recorded by the staff user por (NULL: by her
 * herself), who replaces whoever recorded the change before; giving it
 * again replaces the number and the time. Withdrawing what was never given
 * or is already withdrawn records nothing. When aviso is not NULL and the
 * consent given is not the one in force already (none was, or for another
 * number), aviso's e-mail is queued to her address, if she has one, in the
 * same transaction (*queued). OUT: *c as stored. */
br_err store_whatsapp_consent_set(struct store *st, const char *cliente_id, const char *telefono,
                                  const char *now, const char *por, const struct wa_aviso *aviso,
                                  bool *queued, struct wa_consent *c) STORE_WRITE WARN_UNUSED;
br_err store_whatsapp_consent_get(struct store *st, const char *cliente_id,
                                  struct wa_consent *c) WARN_UNUSED;

/* Whether a WhatsApp message of kind for cita may still leave: its
 * client's consent holds and the cita is not cancelled (a cancellation
 * itself always may); for a waiting-list notice ("aviso_espera", cita_id
 * the entry's), the entry is still there and her consent holds. OUT:
 * *why, static text, when it may not. */
br_err store_whatsapp_sendable(struct store *st, const char *cita_id, const char *kind,
                               const char **why) WARN_UNUSED;

/* How many WhatsApp messages about the client of cita_id (an
 * appointment's, or a waiting-list entry's: whatever a message's cita_id
 * names) went since `since`, to any number, as store_whatsapp_sent counted
 * them. OUT: cliente, that client's id ("" when cita_id names none); *n. */
br_err store_whatsapp_sent_since(struct store *st, const char *cita_id, const char *since,
                                 br_id cliente, int64_t *n) WARN_UNUSED;

/* A claimed message that must not leave any more (why): status 'skipped'.
 * BR_CONFLICT when its claim no longer holds it (store_outbox_retry). */
br_err store_outbox_skip(struct store *st, const char *id, const char *claim, const char *why,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* A claimed message put off until `until` without counting the attempt
 * (quiet hours, a reminder waiting for its confirmation): its retry window
 * starts then. BR_CONFLICT when its claim no longer holds it. */
br_err store_outbox_defer(struct store *st, const char *id, const char *claim,
                          const char *until) STORE_WRITE WARN_UNUSED;
/* A WhatsApp message the Graph API accepted, with the id it gave it,
 * counted for its client (store_whatsapp_sent_since): cliente_id, the one
 * the cap's check found before it was sent, or (NULL) the one its cita_id
 * names now; her counted messages sent before olvido are forgotten. */
br_err store_whatsapp_sent(struct store *st, const char *id, const char *proveedor_id,
                           const char *cliente_id, const char *now,
                           const char *olvido) STORE_WRITE WARN_UNUSED;
/* A delivery status from the webhook ("sent", "delivered", "read",
 * "failed") for the message the Graph API called proveedor_id, at `at`;
 * never one that comes after what is known (read stays read when a late
 * delivered arrives; failed wins). error: the failure's detail (NULL).
 * OUT: *matched, whether a message took it. */
br_err store_whatsapp_status(struct store *st, const char *proveedor_id, const char *status,
                             const char *at, const char *error,
                             bool *matched) STORE_WRITE WARN_UNUSED;

/* One message of an appointment, by either channel, as the admin sees it. */
struct mensaje_view {
    const char *id, *canal, *tipo, *destinatario, *estado;
    int64_t intentos, antelacion_min;
    const char *creado_en, *enviado_en, *proximo_intento, *error;
    const char *entrega, *entrega_en; /* WhatsApp's last status and its time; NULL */
};
typedef br_err (*store_mensaje_fn)(void *ud, const struct mensaje_view *m);
/* The messages of cita_id, oldest first (at most 500). */
br_err store_cita_mensajes(struct store *st, const char *cita_id, store_mensaje_fn fn,
                           void *ud) WARN_UNUSED;

#endif
