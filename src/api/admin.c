/*
 * admin.c - GET and PATCH /api/admin/usuarios.
 */
#include "api.h"
#include "../core/users.h"

#include <stdlib.h>
#include <string.h>

static br_err add_usuario(struct jw *w, const void *row)
{
    const struct usuario_view *u = row;
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
    /* the front desk's: attendance, and whether the user can sign in */
    jw_kint(w, "completadas", u->completadas);
    jw_kint(w, "no_presentado", u->no_presentado);
    jw_key(w, "puede_entrar");
    jw_bool(w, u->puede_entrar);
    jw_obj_close(w);
    return w->err;
}

/* The listing page by page (see api_list_pages), each page a read of its
 * own that starts after the last profile given. */
struct usuarios_pager {
    struct api_pager base;
    struct app *app;
    struct api_page_rows rows; /* no ?limit=: every profile */
};

static br_err page_usuario(void *ud, const struct usuario_view *u)
{
    struct usuarios_pager *p = ud;
    return api_page_row(&p->rows, add_usuario, u, u->perfil.created_at, u->perfil.id);
}

static br_err usuarios_page(struct api_pager *base, struct jw *w, bool *more)
{
    struct usuarios_pager *p = (struct usuarios_pager *)base;
    int64_t n = api_page_start(&p->rows, w);
    br_err rc = users_list_page(p->app, api_page_after_key(&p->rows), api_page_after_id(&p->rows),
                                n, page_usuario, p);
    return api_page_end(&p->rows, rc, n, more);
}

static void usuarios_pager_free(struct api_pager *base)
{
    free(base);
}

void api_admin_usuarios_get(struct http_req *r)
{
    struct usuarios_pager *p = xcalloc(1, sizeof *p);
    p->base = (struct api_pager){usuarios_page, NULL, usuarios_pager_free};
    p->app = api_app(r);
    p->rows.remaining = -1;
    api_list_pages(r, "usuarios", &p->base);
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
