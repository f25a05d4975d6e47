/*
 * admin.c - GET and PATCH /api/admin/usuarios.
 */
#include "api.h"
#include "../core/users.h"

#include <stdlib.h>

static br_err add_usuario(void *ud, const struct usuario_view *u)
{
    struct jw *w = ud;
    jw_obj_open(w);
    api_w_perfil_members(w, &u->perfil);
    jw_key(w, "citas");
    jw_arr_open(w);
    jw_obj_open(w);
    jw_kint(w, "count", u->total_citas);
    jw_obj_close(w);
    jw_arr_close(w);
    jw_kstr(w, "email", u->email);
    jw_kstr(w, "ultimo_acceso", u->ultimo_acceso);
    jw_kstr(w, "creado_en", u->creado_en);
    jw_kint(w, "total_citas", u->total_citas);
    jw_obj_close(w);
    return w->err;
}

void api_admin_usuarios_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "usuarios");
    api_list_reply(r, users_list(api_app(r), add_usuario, &w), &w);
}

void api_admin_usuarios_patch(struct http_req *r)
{
    json_t *body = http_req_json(r);
    char *scratch = NULL;
    struct user_patch p = {.user_id = api_id_field(body, "userId", &scratch)};
    if (!p.user_id || !*p.user_id) {
        free(scratch);
        http_reply_error(r, 400, "Falta userId");
        return;
    }
    p.has_telefono = json_object_get(body, "telefono") != NULL;
    if (api_opt_string(r, body, "password", &p.password) &&
        api_opt_string(r, body, "rol", &p.rol) && api_opt_string(r, body, "nombre", &p.nombre) &&
        api_opt_string(r, body, "telefono", &p.telefono)) {
        br_err rc = users_patch(api_app(r), &p);
        if (rc)
            api_reply_err(r, rc);
        else
            api_reply_ok(r);
    }
    free(scratch);
}
