/*
 * identity.h - the embedded identity provider: users with e-mail and
 * password, and sessions.
 *
 * Passwords are kept only as Argon2id hashes (libsodium's crypto_pwhash,
 * "interactive" limits: 64 MiB, 2 passes). Hashing is memory-hard on
 * purpose, so at most BARBERIA_HASH_MAX hashes run at once (default: the
 * number of cores); a caller that cannot get a slot within
 * BARBERIA_HASH_WAIT_MS gets BR_BUSY "Servicio ocupado" (503 with
 * Retry-After) rather than a growing queue. Failed sign-ins are counted per
 * account and per client address in the data store (so every node sees
 * them); past a maximum within a window the key is locked for a while that
 * doubles with each consecutive lock up to a few minutes: BR_THROTTLED
 * "Demasiados intentos" (429 with Retry-After). A session is a random
 * 256-bit token handed to the client once, base64url-encoded (43
 * characters); the store keeps only its SHA-256. Sessions last 30 days.
 *
 * Thread-safety: one struct ident serves every thread.
 */
#ifndef BR_IDENTITY_H
#define BR_IDENTITY_H

#include "../store/store.h"

#define IDENT_TOKEN_LEN    43
#define IDENT_SESSION_DAYS 30

struct ident;

/* Opens the provider over st with the limits of cfg (hash_max,
 * hash_wait_ms, login_*). OUT: *out, closed with ident_close(). */
br_err ident_open(struct store *st, const struct config *cfg, struct ident **out) WARN_UNUSED;
void ident_close(struct ident *id);

/* A signed-in session, as handed to the client. */
struct ident_session {
    br_id user_id;
    char *email;                     /* owned; free with ident_session_clear */
    char token[IDENT_TOKEN_LEN + 1]; /* empty when no session was opened */
};
void ident_session_clear(struct ident_session *s);

struct ident_signup {
    const char *email, *password;  /* required */
    const char *nombre, *telefono; /* nullable */
    const char *rol;               /* NULL: "cliente" */
};

/* Creates a user and its profile; with open_session, also signs them in
 * (the sign-up counts as a sign-in). Without open_session (the operator's
 * CLI) an address that names a client the front desk created, who has no
 * password yet, gets that password: her account, her bookings. A sign-up
 * over HTTP never does (it proves nothing of the mailbox): see
 * ident_claim_link. Errors, with the contract's messages:
 * BR_INVALID "Faltan campos requeridos" (e-mail or password empty),
 * "Mínimo 6 caracteres", "Email inválido"; BR_CONFLICT
 * "El email ya está registrado"; BR_BUSY "Servicio ocupado" (no hashing
 * slot in time). */
br_err ident_signup(struct ident *id, const struct ident_signup *in, bool open_session,
                    struct ident_session *out) WARN_UNUSED;

/* The checks ident_signup() makes before it touches the store, in its
 * order and with its errors (required fields, password length, e-mail
 * form): lets the CLI refuse bad arguments before it opens anything. */
br_err ident_signup_check(const struct ident_signup *in) WARN_UNUSED;

/* Signs in from the client address remote (NULL or "": not counted per
 * address). BR_INVALID "Faltan campos requeridos"; BR_THROTTLED
 * "Demasiados intentos" while the account or the address is locked (even
 * for the right password; no hash is spent); BR_UNAUTH "Credenciales
 * inválidas" alike for an unknown e-mail and a wrong password (both take
 * the time of one hash, both count as a failure); BR_BUSY "Servicio
 * ocupado" when no hashing slot came in time. A success clears the
 * account's failures. */
br_err ident_login(struct ident *id, const char *email, const char *password, const char *remote,
                   struct ident_session *out) WARN_UNUSED;

/* The principal of a token (n bytes). BR_UNAUTH "No autenticado" for a
 * malformed, unknown or expired token. OUT: *p (principal_clear). */
br_err ident_authenticate(struct ident *id, const char *token, size_t n,
                          struct principal *p) WARN_UNUSED;

/* ident_authenticate that also lists a client's appointments in q through
 * fn, read with the session where the store can (store_session_citas):
 * *listed tells whether it did. */
br_err ident_authenticate_citas(struct ident *id, const char *token, size_t n, struct principal *p,
                                const struct cita_range *q, store_cita_fn fn, void *ud,
                                bool *listed) WARN_UNUSED;

/* Ends the session of that token (unknown tokens are ignored). */
br_err ident_logout(struct ident *id, const char *token, size_t n) WARN_UNUSED;

/* Sets a user's password and ends all their sessions. The caller has
 * checked the length rule. BR_NOTFOUND "Usuario no encontrado"; BR_BUSY
 * "Servicio ocupado" (no hashing slot in time). */
br_err ident_set_password(struct ident *id, const char *user_id, const char *password) WARN_UNUSED;

/* Trims and lowercases an e-mail and checks its shape (local@domain.tld, no
 * spaces, control or non-ASCII characters, at most 254 bytes: the SMTP
 * transport cannot carry internationalised addresses), and refuses the
 * domain a deleted account's sign-in is moved to (EMAIL_ELIMINADO_SUFFIX).
 * OUT: *out (caller frees). Returns false for an address that is not one. */
bool ident_normalize_email(const char *in, char **out) WARN_UNUSED;

/* --- the account's links (password reset, e-mail change) ---------------------------- */

#define IDENT_LINK_MINUTES 30 /* a link works this long, once */

/* Asks for a reset link for email_in: when it names a live account, a
 * single-use link <link_base>/restablecer#token=... is made and queued in
 * the account's outbox (link_base NULL: mail is off, the link is made
 * only). The same steps run whether or not the address names an account;
 * *queued tells which (for the caller's wake-up, never for the answer).
 * Every request counts per address asked for and per client address
 * (remote): past the sign-in limits BR_THROTTLED "Demasiados intentos".
 * BR_INVALID "Faltan campos requeridos", "Email inválido". */
br_err ident_reset_request(struct ident *id, const char *email_in, const char *remote,
                           const char *link_base, bool *queued) WARN_UNUSED;

/* After a sign-up refused with BR_CONFLICT for email_in: when the address
 * names an account without a password (a client the front desk created),
 * the reset link of ident_reset_request is queued for it, so that the
 * owner of the mailbox claims her account (her bookings) by opening it.
 * Throttled as ident_reset_request (BR_THROTTLED: nothing queued). */
br_err ident_claim_link(struct ident *id, const char *email_in, const char *remote,
                        const char *link_base, bool *queued) WARN_UNUSED;

/* Uses a reset link: sets the password (the sign-up's rules), ends every
 * session and opens a new one. BR_INVALID "Faltan campos requeridos",
 * "Mínimo 6 caracteres", "Contraseña demasiado larga", "El enlace no es
 * válido o ha caducado" (unknown, used or expired alike); BR_BUSY. */
br_err ident_reset_apply(struct ident *id, const char *token, const char *password,
                         struct ident_session *out) WARN_UNUSED;

/* Checks an account's current password, throttled like a sign-in.
 * BR_INVALID "Falta la contraseña actual", "La contraseña actual no es
 * correcta"; BR_THROTTLED; BR_BUSY. */
br_err ident_verify(struct ident *id, const char *email, const char *password,
                    const char *remote) WARN_UNUSED;

/* Changes the caller's password given the current one, ending every other
 * session (keep_token, n bytes: the caller's own, which stays). Errors as
 * ident_verify and the sign-up's password rules. */
br_err ident_password_change(struct ident *id, const struct principal *p, const char *current,
                             const char *password, const char *remote, const char *keep_token,
                             size_t keep_n) WARN_UNUSED;

/* Asks to change the caller's e-mail to email_in, given the current
 * password: queues the link <link_base>/confirmar-email#token=... to the
 * new address and a notice to the old one; nothing changes until the link
 * is used. OUT: *pending, the new address as stored (caller frees; NULL on
 * an error). Checked in this order: BR_INVALID "Email inválido", "Ese ya es
 * tu email", ident_verify's, "No se puede confirmar el cambio: el correo no
 * está configurado" (link_base NULL); BR_THROTTLED "Demasiados intentos"
 * (requests per new address and per client address); BR_CONFLICT "El email
 * ya está registrado". */
br_err ident_email_change_request(struct ident *id, const struct principal *p, const char *current,
                                  const char *email_in, const char *remote, const char *link_base,
                                  char **pending) WARN_UNUSED;

/* Uses an e-mail change link. OUT: *email, the new address (caller frees).
 * BR_INVALID "Faltan campos requeridos", "El enlace no es válido o ha
 * caducado"; BR_CONFLICT "El email ya está registrado" (taken meanwhile). */
br_err ident_email_change_apply(struct ident *id, const char *token, char **email) WARN_UNUSED;

#endif
