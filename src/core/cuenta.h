/*
 * cuenta.h - the client's own account: a password reset (which also lets a
 * client the front desk created choose her first password), her profile,
 * an e-mail change confirmed by a link, her consents, all her data, and the
 * deletion of her account. Plus the worker that sends the account's
 * e-mails (cuenta_correo, a durable outbox of its own: these messages name
 * no appointment).
 */
#ifndef BR_CUENTA_H
#define BR_CUENTA_H

#include "app.h"

#define CUENTA_NOMBRE_ELIMINADO "Cliente eliminado"

/* POST /api/auth/recuperar: see ident_reset_request. The answer is the
 * same whether or not the address names an account. */
br_err cuenta_recuperar(struct app *app, const char *email, const char *remote) WARN_UNUSED;

/* POST /api/auth/signup: see ident_signup (open_session); when the address
 * is taken by a client the front desk created without a password, her
 * reset link goes to it (ident_claim_link) and the answer stays the
 * contract's 409 "El email ya está registrado". */
br_err cuenta_alta(struct app *app, const struct ident_signup *in, const char *remote,
                   struct ident_session *out) WARN_UNUSED;

/* What PATCH /api/auth/me may change; NULL: left alone. */
struct cuenta_patch {
    const char *nombre;
    bool has_telefono;
    const char *telefono; /* with has_telefono: NULL or "" clears it */
    const char *password, *password_actual;
    const char *email;
};
/* Checks every value first (nothing changes when one is wrong), then
 * changes the password (ending the other sessions; keep_token, n bytes, is
 * the caller's own), asks for the e-mail change (OUT: *email_pendiente,
 * the new address as stored, caller frees; NULL when none was asked or on
 * an error), and updates the profile.
 * BR_INVALID "Nombre inválido", "Teléfono inválido", "Nada que cambiar",
 * "Cambia la contraseña y el email por separado", the password rules,
 * ident_verify's and ident_email_change_request's; BR_CONFLICT. */
br_err cuenta_perfil(struct app *app, const struct principal *caller, const struct cuenta_patch *p,
                     const char *remote, const char *keep_token, size_t keep_n,
                     char **email_pendiente) WARN_UNUSED;

/* Gives or withdraws a consent. tipo "fotos": withdrawing it deletes the
 * photos of her appointments and those she uploaded. BR_INVALID for an
 * unknown tipo. */
br_err cuenta_consentir(struct app *app, const struct principal *caller, const char *tipo,
                        bool granted) WARN_UNUSED;

/* DELETE /api/auth/me: given her password, cancels her future
 * appointments (as the shop would: calendar updated), deletes her photos
 * (objects too), then, in one transaction, anonymises the account (see
 * store_cuenta_anonimizar). A crash part way leaves an account that still
 * signs in and can be deleted again. BR_FORBIDDEN for staff accounts;
 * ident_verify's errors. */
br_err cuenta_eliminar(struct app *app, const struct principal *caller, const char *password,
                       const char *remote) WARN_UNUSED;

/* --- the account's mail worker ------------------------------------------------------ */

struct cuenta_correo;
br_err cuenta_correo_start(struct store *st, struct mailer *m, const struct config *cfg,
                           struct cuenta_correo **out) WARN_UNUSED;
void cuenta_correo_wake(struct cuenta_correo *w); /* NULL: nothing */
void cuenta_correo_stop(struct cuenta_correo *w); /* NULL: nothing */

#endif
