/*
 * fotos.c - GET, POST and DELETE /api/fotos.
 */
#include "api.h"
#include "../core/photos.h"

static br_err add_foto(void *ud, const struct foto *f)
{
    struct jw *w = ud;
    api_w_foto(w, f);
    return w->err;
}

void api_fotos_get(struct http_req *r)
{
    struct jw w;
    api_list_begin(&w, "fotos");
    br_err rc = photos_list(api_app(r), http_req_query(r, "cita_id"), add_foto, &w);
    api_list_reply(r, rc, &w);
}

const char *const api_form_fields[] = {"cita_id", "tipo", NULL};

void api_fotos_post(struct http_req *r)
{
    const struct http_upload *hu = http_req_upload(r);
    struct photo_upload up = {
        .has_file = hu->has_file,
        .fd = hu->fd,
        .size = hu->size,
        .too_large = hu->too_large,
        .filename = hu->filename,
        .content_type = hu->content_type,
        .cita_id = http_req_field(r, "cita_id"),
        .tipo = http_req_field(r, "tipo"),
        .cita_id_cut = !http_req_field_whole(r, "cita_id"),
        .tipo_cut = !http_req_field_whole(r, "tipo"),
    };
    struct foto f;
    br_err rc = photos_upload(api_app(r), api_caller(r), &up, &f);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    api_begin_member(&w, "foto");
    api_w_foto(&w, &f);
    foto_clear(&f);
    api_reply(r, 201, &w);
}

void api_fotos_delete(struct http_req *r)
{
    br_err rc = photos_delete(api_app(r), api_caller(r), http_req_query(r, "id"));
    if (rc)
        api_reply_err(r, rc);
    else
        api_reply_ok(r);
}
