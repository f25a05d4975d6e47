/*
 * whatsapp.h - the WhatsApp use cases besides sending (which is the outbox
 * worker's, core/outbox.h): a client's consent to WhatsApp messages, and
 * the Graph API's webhook - its verification handshake and the delivery
 * statuses it posts, signed with the app's secret.
 */
#ifndef BR_CORE_WHATSAPP_H
#define BR_CORE_WHATSAPP_H

#include "app.h"

#include <jansson.h>

/* Gives (acepta) or withdraws the consent of cliente_id. Given, it is for
 * telefono when set, else for the number of her profile (perfil_tel, may
 * be NULL), normalised to E.164 with the default country; BR_INVALID
 * "Teléfono inválido" when neither is a number, or when telefono is over
 * WHATSAPP_TELEFONO_MAX bytes (given or withdrawn). Recorded as by her
 * herself (no registrado_por). Given, and not the consent in force already
 * (none was, or for another number), her address gets the account e-mail
 * "whatsapp_aviso" (at most WHATSAPP_AVISOS_DIA in 24 hours). OUT: *c as
 * stored. */
br_err whatsapp_consent(struct app *app, const char *cliente_id, bool acepta, const char *telefono,
                        const char *perfil_tel, struct wa_consent *c) WARN_UNUSED;

/* At most this many bytes of a given number. */
#define WHATSAPP_TELEFONO_MAX 64
/* At most this many notices of a consent given a client gets in 24 hours. */
#define WHATSAPP_AVISOS_DIA 3

/* The same, recorded by staff (caller: admin or barbero, else BR_FORBIDDEN
 * "Sin permisos") at the front desk for the client cliente_id, who gave or
 * withdrew it in person or on the phone; her profile's number when
 * telefono is not given. BR_NOTFOUND MOSTRADOR_CLIENTE_MSG when cliente_id
 * is not a UUID, names no user with a profile, or a staff account; then
 * BR_INVALID "Teléfono inválido". The consent keeps the caller's id as
 * who recorded it (registrado_por); the log names the staff user too, never
 * the number. OUT: *c as stored. */
br_err whatsapp_consent_desk(struct app *app, const struct principal *caller,
                             const char *cliente_id, bool acepta, const char *telefono,
                             struct wa_consent *c) WARN_UNUSED;

/* The consent of the client cliente_id, for staff (the same refusals as
 * whatsapp_consent_desk). OUT: *c (c->found false when none was given). */
br_err whatsapp_consent_of(struct app *app, const struct principal *caller, const char *cliente_id,
                           struct wa_consent *c) WARN_UNUSED;

/* The handshake: true when mode is "subscribe" and token is the configured
 * verify token (compared in constant time; false when none is set). */
bool whatsapp_webhook_verify(const struct app *app, const char *mode, const char *token);

/* Whether signature ("sha256=<64 hex digits>", the X-Hub-Signature-256
 * header) is the HMAC-SHA256 of the raw body with the app secret,
 * compared in constant time (false when no secret is set). */
bool whatsapp_webhook_signed(const struct app *app, const void *body, size_t len,
                             const char *signature);

/* Records the delivery statuses a (signed) webhook delivery carries:
 * entry[].changes[].value.statuses[] with id, status (sent, delivered,
 * read, failed), timestamp (Unix seconds) and errors[]. Unknown messages
 * and statuses are ignored; at most 1000 statuses. OUT: *recorded. */
br_err whatsapp_webhook_statuses(struct app *app, const json_t *body, int *recorded) WARN_UNUSED;

#endif
