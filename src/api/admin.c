/*
 * admin.c - GET and PATCH /api/admin/usuarios.
 */
#include "api.h"
#include "../core/users.h"

#include <stdlib.h>

static br_err add_usuario(void *ud, const struct usuario_view *u)
{
    json_t *o = api_perfil_json(&u->perfil);
    json_t *count = json_object();
    json_object_set_new(count, "count", json_integer(u->total_citas));
    json_t *citas = json_array();
    json_array_append_new(citas, count);
    json_object_set_new(o, "citas", citas);
    json_object_set_new(o, "email", api_jstr(u->email));
    json_object_set_new(o, "ultimo_acceso", api_jstr(u->ultimo_acceso));
    json_object_set_new(o, "creado_en", api_jstr(u->creado_en));
    json_object_set_new(o, "total_citas", json_integer(u->total_citas));
    json_array_append_new(ud, o);
    return BR_OK;
}

void api_admin_usuarios_get(struct http_req *r)
{
    json_t *list = json_array();
    api_reply_list(r, users_list(api_app(r), add_usuario, list), "usuarios", list);
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
