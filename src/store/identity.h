/*
 * store/identity.h - part of the store (include store.h): users, sessions,
 * sign-in throttling, perfiles and the admin's listing of users
 * (src/store/identity.c).
 */
#ifndef BR_STORE_IDENTITY_H
#define BR_STORE_IDENTITY_H

#include "store.h"

/* --- identity: users and sessions ----------------------------------------- */

struct new_user {
    const char *id, *email, *password_hash, *created_at;
    const char *last_sign_in_at;         /* nullable */
    const char *rol, *nombre, *telefono; /* the profile; nombre, telefono nullable */
    /* when set, a first session is opened in the same transaction */
    const char *session_hash, *session_expires_at;
};

/* Creates an identity user and its profile in one transaction.
 * BR_CONFLICT when the e-mail is taken. */
br_err store_user_create(struct store *st, const struct new_user *u) STORE_WRITE WARN_UNUSED;

/* The user with that (normalised) e-mail. OUT: *u (clear with user_clear)
 * and *password_hash (caller frees). BR_NOTFOUND when none. */
br_err store_user_by_email(struct store *st, const char *email, struct user *u,
                           char **password_hash) WARN_UNUSED;

/* Replaces the password hash and ends every session of the user, in one
 * transaction. BR_NOTFOUND when there is no such user. */
br_err store_user_set_password(struct store *st, const char *user_id,
                               const char *password_hash) STORE_WRITE WARN_UNUSED;

/* Opens a session for a sign-in: stores the token's hash, records the time
 * as the user's last sign-in and drops the user's expired sessions - only
 * while the user's password hash is still password_hash (the one the
 * sign-in checked) and the account is not deleted, else BR_NOTFOUND and
 * nothing written: a change of password, a reset or a deletion that
 * committed meanwhile, having ended the sessions there were, ends this one
 * before it is made. */
br_err store_session_open(struct store *st, const char *user_id, const char *token_hash,
                          const char *now, const char *expires_at,
                          const char *password_hash) STORE_WRITE WARN_UNUSED;

/* The principal of a live session (expires_at > now). OUT: *p, cleared with
 * principal_clear. BR_NOTFOUND when there is no such live session. */
br_err store_session_principal(struct store *st, const char *token_hash, const char *now,
                               struct principal *p) WARN_UNUSED;

br_err store_session_close(struct store *st, const char *token_hash) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_user_fn)(void *ud, const struct user *u, const struct perfil *p);
/* Every user with its profile (p NULL when none), by e-mail. */
br_err store_users_each(struct store *st, store_user_fn fn, void *ud) WARN_UNUSED;

/* --- sign-in throttling ------------------------------------------------------ */

/* What the store keeps of one key's failed sign-ins; times in epoch ms. The
 * rules (when to lock, for how long) are the identity provider's. */
struct throttle_state {
    int64_t failures; /* in the current window */
    int64_t window_start_ms;
    int64_t locked_until_ms; /* 0: never locked */
    int64_t lockouts;        /* consecutive locks */
    int64_t forget_at_ms;    /* from then on the row may be deleted */
};

/* OUT: *s, the key's state (zeroed when there is none or it is past its
 * forget_at at now_ms) and *found. */
br_err store_throttle_get(struct store *st, const char *key, int64_t now_ms,
                          struct throttle_state *s, bool *found) WARN_UNUSED;

/* One key as store_throttle_update hands it to its callback: state and
 * found as store_throttle_get reads them; the callback sets op (and state,
 * for THROTTLE_PUT). */
enum throttle_op { THROTTLE_KEEP, THROTTLE_PUT, THROTTLE_DELETE };
struct throttle_key {
    const char *key; /* set by the caller */
    struct throttle_state state;
    bool found;
    enum throttle_op op;
};

/* Reads, decides and writes the n keys in one write transaction, so that no
 * other writer (thread, process or node) comes in between: locks each key
 * (db_ops.lock), in the order given, reads its state into keys[i], calls
 * fn(ud, keys, n) once with all of them, and stores what it decided. Also
 * deletes every row past its forget_at when prune is set. fn must only
 * compute: it may run more than once (a transaction the database aborted
 * runs again), each time on fresh reads, and its last run is the one
 * committed. */
typedef void (*store_throttle_fn)(void *ud, struct throttle_key *keys, int n);
br_err store_throttle_update(struct store *st, struct throttle_key *keys, int n, int64_t now_ms,
                             bool prune, store_throttle_fn fn, void *ud) STORE_WRITE WARN_UNUSED;

/* --- perfiles ------------------------------------------------------------- */

/* OUT: *p (clear with perfil_clear). BR_NOTFOUND when there is none. */
br_err store_perfil_get(struct store *st, const char *id, struct perfil *p) WARN_UNUSED;

/* Which profile fields to change; a NULL pointer leaves a field alone. */
struct perfil_patch {
    const char *rol;
    const char *nombre;
    bool set_telefono;
    const char *telefono; /* with set_telefono: NULL stores NULL */
    bool by_client;       /* her own change: BR_UNAUTH once her account is closed */
};
/* Updates the profile; a missing profile is left missing (no error). */
br_err store_perfil_update(struct store *st, const char *id,
                           const struct perfil_patch *patch) STORE_WRITE WARN_UNUSED;

typedef br_err (*store_usuario_fn)(void *ud, const struct usuario_view *u);
/* The admin listing: profiles, newest first (created_at, then id), with
 * their identity data and appointment count, in one query: up to limit of
 * them (0: all), from after the row (before_created, before_id) on, or from
 * the newest when both are NULL. */
br_err store_usuarios_page(struct store *st, const char *before_created, const char *before_id,
                           int64_t limit, store_usuario_fn fn, void *ud) WARN_UNUSED;

#endif
