/*
 * store/cuenta.h - part of the store (include store.h): the client's own
 * account (src/store/cuenta.c): single-use links (password reset, e-mail
 * change) kept as their token's SHA-256, the account's mail outbox
 * (cuenta_correo), consents, everything the shop holds about one client,
 * and the anonymisation of a deleted account.
 */
#ifndef BR_STORE_CUENTA_H
#define BR_STORE_CUENTA_H

#include "store.h"

/* --- links ------------------------------------------------------------------------ */

/* A password-reset request for an e-mail address. The same statements run
 * whether or not an account has that address (the rows are inserted by
 * INSERT ... SELECT from the account): no timing tells the two apart.
 * mail (nullable: mail is off) carries the message's id, enlace and times;
 * its recipient and name are the account's. */
struct reset_request {
    const char *email, *token_hash, *now, *expires_at;
    const struct cuenta_mail *mail;
};
/* OUT: *queued, whether a link was made (the address names a live account). */
br_err store_reset_request(struct store *st, const struct reset_request *r,
                           bool *queued) STORE_WRITE WARN_UNUSED;

/* Whether a link is usable now: unused, not expired, of that proposito, its
 * account not deleted. OUT: user_id. BR_NOTFOUND otherwise. */
br_err store_token_check(struct store *st, const char *token_hash, const char *proposito,
                         const char *now, br_id user_id) WARN_UNUSED;

/* Uses a reset link: in one transaction marks it (and every other reset
 * link of the account) used, sets the password hash, ends every session and
 * opens the new one (session_hash). OUT: *u (user_clear). BR_NOTFOUND when
 * the link is not usable (used meanwhile, expired, unknown). */
struct reset_apply {
    const char *token_hash, *now, *password_hash, *session_hash, *session_expires_at;
};
br_err store_reset_apply(struct store *st, const struct reset_apply *a,
                         struct user *u) STORE_WRITE WARN_UNUSED;

/* Sets a password and ends every session of the user but the one of
 * keep_hash (nullable). BR_NOTFOUND when there is no such user. */
br_err store_password_change(struct store *st, const char *user_id, const char *password_hash,
                             const char *keep_hash) STORE_WRITE WARN_UNUSED;

/* Records a request to change an account's e-mail to email_nuevo: the link
 * (earlier unused ones of the account end) and its two messages, the link
 * to the new address and the notice to the old one (both nullable: mail
 * off). BR_CONFLICT when the new address already names an account. */
struct email_request {
    const char *user_id, *email_nuevo, *token_hash, *now, *expires_at;
    const struct cuenta_mail *confirm, *notice;
};
br_err store_email_request(struct store *st, const struct email_request *r) STORE_WRITE WARN_UNUSED;

/* Uses an e-mail change link: marks it used and sets the address, in one
 * transaction. OUT: *email (caller frees). BR_NOTFOUND when the link is
 * not usable; BR_CONFLICT when the address was taken meanwhile. */
br_err store_email_apply(struct store *st, const char *token_hash, const char *now,
                         char **email) STORE_WRITE WARN_UNUSED;

/* --- the account's mail ------------------------------------------------------------ */

/* As store_outbox_claim, for cuenta_correo. OUT: *m (cuenta_mail_clear). */
br_err store_cuenta_correo_claim(struct store *st, const char *now, const char *lease_until,
                                 struct cuenta_mail *m) STORE_WRITE WARN_UNUSED;
/* Sent (error NULL, whoever holds it now) or dropped (error non-NULL):
 * the row keeps its kind and times, its link is erased. A drop, like a
 * retry, is written only while the claim `claim` (its m->claim) holds the
 * message: BR_CONFLICT otherwise (store_outbox_retry). */
br_err store_cuenta_correo_done(struct store *st, const char *id, const char *claim,
                                const char *error, const char *now) STORE_WRITE WARN_UNUSED;
br_err store_cuenta_correo_retry(struct store *st, const char *id, const char *claim,
                                 const char *error,
                                 const char *next_attempt_at) STORE_WRITE WARN_UNUSED;
/* OUT: the earliest next_attempt_at of a pending message ("" when none). */
br_err store_cuenta_correo_next_due(struct store *st, br_ts next) WARN_UNUSED;

/* One account message as the operator sees it (never its link). */
struct cuenta_correo_view {
    const char *id, *kind, *recipient, *status, *created_at, *next_attempt_at, *last_error;
    int64_t attempts;
};
typedef br_err (*store_cuenta_correo_fn)(void *ud, const struct cuenta_correo_view *m);
/* The account's messages of status (NULL: every one not sent), oldest
 * first; fields borrowed for the call. */
br_err store_cuenta_correo_each(struct store *st, const char *status, store_cuenta_correo_fn fn,
                                void *ud) WARN_UNUSED;

/* --- consents ---------------------------------------------------------------------- */

/* Gives (granted) or withdraws the consent of that tipo at now. */
br_err store_consent_set(struct store *st, const char *cliente_id, const char *tipo, bool granted,
                         const char *now) STORE_WRITE WARN_UNUSED;
/* OUT: *state: 1 given, -1 withdrawn, 0 never asked. */
br_err store_consent_get(struct store *st, const char *cliente_id, const char *tipo,
                         int *state) WARN_UNUSED;

/* OUT: *refused, whether the client of that cita has withdrawn her
 * consent to photos, or deleted her account. */
br_err store_fotos_refused(struct store *st, const char *cita_id, bool *refused) WARN_UNUSED;

/* --- what the shop holds about a client ------------------------------------------- */

/* One value of a row of GET /api/auth/me/datos. */
struct dato {
    const char *key;
    enum { DATO_NULL, DATO_TEXT, DATO_NUM } type;
    const char *s; /* DATO_TEXT (borrowed) */
    double d;      /* DATO_NUM */
};
enum datos_seccion {
    DATOS_CITAS,
    DATOS_HISTORIAL,
    DATOS_FOTOS,
    DATOS_MENSAJES,        /* mail_outbox rows to her (any channel, any address she had) */
    DATOS_MENSAJES_CUENTA, /* cuenta_correo rows of her account (never the link) */
    DATOS_CONSENTIMIENTOS,
    DATOS_WHATSAPP,     /* her WhatsApp consent, with its number */
    DATOS_LISTA_ESPERA, /* her waiting-list entries */
};
#define DATOS_MAX_FILAS 10000 /* rows per section at most */
typedef br_err (*store_dato_fn)(void *ud, const struct dato *row, int n);
/* Every row of a section about the client user_id, oldest first, at most
 * DATOS_MAX_FILAS. */
br_err store_datos_each(struct store *st, enum datos_seccion s, const char *user_id,
                        store_dato_fn fn, void *ud) WARN_UNUSED;

/* --- deleting an account ----------------------------------------------------------- */

typedef br_err (*store_id_fn)(void *ud, const char *id);
/* Her appointments that have a calendar event, cancelled or not, oldest
 * first. */
br_err store_citas_con_evento_each(struct store *st, const char *cliente_id, store_id_fn fn,
                                   void *ud) WARN_UNUSED;
/* Her appointments not cancelled that start after now. */
br_err store_citas_futuras_each(struct store *st, const char *cliente_id, const char *now,
                                store_id_fn fn, void *ud) WARN_UNUSED;
/* Her photos: uploaded by her, or of her appointments (whoever uploaded). */
br_err store_fotos_de_cliente_each(struct store *st, const char *cliente_id, store_foto_fn fn,
                                   void *ud) WARN_UNUSED;
/* In one transaction (BR_CONFLICT "booked meanwhile", nothing done, when
 * an appointment of hers not cancelled starts after now: cancel it first): the sign-in (e-mail
 * replaced by "<id>@eliminado.invalid", no usable password, eliminado_en), sessions, links,
 * consents, the account's messages and the finished outbox rows to her address go; the profile
 * keeps its id and rol with nombre `nombre` and no telefono; her appointments' notes are cleared.
 */
br_err store_cuenta_anonimizar(struct store *st, const char *user_id, const char *nombre,
                               const char *now) STORE_WRITE WARN_UNUSED;
/* The first step of deleting an account, in one transaction: every session
 * of hers ends (no booking of hers starts any more) and her photo consent
 * is withdrawn (no photo of her appointments is stored any more). */
br_err store_cuenta_cerrar(struct store *st, const char *user_id,
                           const char *now) STORE_WRITE WARN_UNUSED;

#endif
