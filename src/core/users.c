/*
 * users.c - administrators' user management (see users.h).
 */
#include "users.h"
#include "../domain/rules.h"
#include "../util/log.h"

#include <stdlib.h>
#include <string.h>

static bool given(const char *s)
{
    return s && *s;
}

br_err users_list_page(struct app *app, const char *before_created, const char *before_id,
                       int64_t limit, store_usuario_fn fn, void *ud)
{
    br_err rc = store_usuarios_page(app->store, before_created, before_id, limit, fn, ud);
    /* BR_BUSY: 503 with Retry-After; BR_TOOLARGE: the caller's row handler ran out of room */
    if (err_unavailable(rc) || rc == BR_TOOLARGE) return rc;
    if (rc) return err_set(BR_STORE, "%s", err_msg());
    return BR_OK;
}

br_err users_patch(struct app *app, const struct user_patch *p)
{
    if (!given(p->user_id)) return err_set(BR_INVALID, "Falta userId");
    if (given(p->password) && !rule_password_long_enough(p->password))
        return err_set(BR_INVALID, "Mínimo 6 caracteres");
    br_id uid;
    bool is_uuid = uuid_parse(p->user_id, strlen(p->user_id), uid);
    if (given(p->password)) {
        br_err rc = is_uuid ? ident_set_password(app->ident, uid, p->password)
                            : err_set(BR_NOTFOUND, "Usuario no encontrado");
        if (rc == BR_INVALID || err_unavailable(rc)) return rc; /* BR_BUSY: 503, Retry-After */
        if (rc) return err_set(BR_STORE, "%s", err_msg());
        log_info("admin: password of user %s changed; their sessions ended", uid);
    }
    /* one line each, bounded as a sign-up's (the specification refuses none) */
    char nombre[RULE_NOMBRE_MAX + 1], telefono[RULE_TELEFONO_MAX + 1];
    if (given(p->nombre)) rule_una_linea(p->nombre, nombre, sizeof nombre);
    if (given(p->telefono)) rule_una_linea(p->telefono, telefono, sizeof telefono);
    struct perfil_patch patch = {
        .rol = given(p->rol) ? p->rol : NULL,
        .nombre = given(p->nombre) ? nombre : NULL,
        .set_telefono = p->has_telefono,
        .telefono = given(p->telefono) ? telefono : NULL,
    };
    if (!patch.rol && !patch.nombre && !patch.set_telefono) return BR_OK;
    if (!is_uuid) return BR_OK; /* no such profile: nothing to update */
    br_err rc = store_perfil_update(app->store, uid, &patch);
    if (err_unavailable(rc)) return rc; /* 503, Retry-After */
    if (rc) return err_set(BR_STORE, "%s", err_msg());
    return BR_OK;
}

br_err users_password_set(struct app *app, const char *email, const char *password, br_id user_id)
{
    user_id[0] = '\0';
    char *norm = NULL;
    if (!email || !ident_normalize_email(email, &norm))
        return err_set(BR_INVALID, "Email inválido");
    if (!rule_password_long_enough(password)) {
        free(norm);
        return err_set(BR_INVALID, "Mínimo 6 caracteres");
    }
    struct user u;
    char *hash = NULL;
    br_err rc = store_user_by_email(app->store, norm, &u, &hash);
    free(norm);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Usuario no encontrado");
    if (rc) return rc;
    wipe_free(hash);
    rc = ident_set_password(app->ident, u.id, password);
    if (!rc) {
        memcpy(user_id, u.id, sizeof u.id);
        log_info("operator: password of user %s set; their sessions and reset links ended", u.id);
    }
    user_clear(&u);
    return rc;
}
