/*
 * users.h - administrators' user management: the specification's GET and
 * PATCH /api/admin/usuarios rules.
 */
#ifndef BR_USERS_H
#define BR_USERS_H

#include "app.h"

/* Profiles, newest first, with e-mail, last sign-in, identity creation
 * time and appointment count: up to limit of them (0: all) from after the
 * profile (before_created, before_id), or from the newest when both are
 * NULL. BR_BUSY (503) when the store is saturated, else BR_STORE with the
 * store's message; a callback's error is returned as is. */
br_err users_list_page(struct app *app, const char *before_created, const char *before_id,
                       int64_t limit, store_usuario_fn fn, void *ud) WARN_UNUSED;

struct user_patch {
    const char *user_id;  /* NULL or "": missing */
    const char *password; /* NULL or "": unchanged */
    const char *rol;      /* NULL or "": unchanged */
    const char *nombre;   /* NULL or "": unchanged */
    bool has_telefono;    /* the field was present */
    const char *telefono; /* with has_telefono: NULL or "" stores null */
};

/* Password first (ending the user's sessions), then the profile fields,
 * not atomically, as the specification says. BR_INVALID "Falta userId",
 * "Mínimo 6 caracteres"; BR_STORE with the identity provider's or the
 * store's message ("Usuario no encontrado" for a password change of an
 * unknown user). */
br_err users_patch(struct app *app, const struct user_patch *p) WARN_UNUSED;

/* The operator's way back into an account (`barberia user password`): sets
 * the password of the account at email (any role; a front-desk client's
 * first), ending its sessions and the reset links asked for before.
 * BR_INVALID "Email inválido", "Mínimo 6 caracteres", "Contraseña
 * demasiado larga"; BR_NOTFOUND "Usuario no encontrado" (none there, or a
 * deleted account); else the store's error. OUT: user_id. */
br_err users_password_set(struct app *app, const char *email, const char *password,
                          br_id user_id) WARN_UNUSED;

#endif
