/*
 * render.c - JSON for records and errors, and reading request fields
 * (see api.h).
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>

json_t *api_jstr(const char *s)
{
    if (!s) return json_null();
    size_t n = strlen(s);
    if (utf8_valid(s, n)) return json_stringn(s, n);
    /* never fail a reply over bad bytes: replace what is not UTF-8 */
    char *clean = xmalloc(n * 3 + 1);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = 1;
        while (k <= 4 && i + k <= n && !utf8_valid(s + i, k)) k++;
        if (k <= 4 && i + k <= n) {
            memcpy(clean + o, s + i, k);
            o += k;
            i += k;
        } else {
            memcpy(clean + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        }
    }
    json_t *j = json_stringn(clean, o);
    free(clean);
    return j;
}

json_t *api_perfil_json(const struct perfil *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(p->id));
    json_object_set_new(o, "rol", api_jstr(p->rol));
    json_object_set_new(o, "nombre", api_jstr(p->nombre));
    json_object_set_new(o, "telefono", api_jstr(p->telefono));
    json_object_set_new(o, "created_at", api_jstr(p->created_at));
    return o;
}

json_t *api_cita_json(const struct cita *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", api_jstr(c->id));
    json_object_set_new(o, "cliente_id", api_jstr(c->cliente_id));
    json_object_set_new(o, "barbero_id", api_jstr(c->barbero_id));
    json_object_set_new(o, "servicio_id", api_jstr(c->servicio_id));
    json_object_set_new(o, "fecha_inicio", api_jstr(c->fecha_inicio));
    json_object_set_new(o, "fecha_fin", api_jstr(c->fecha_fin));
    json_object_set_new(o, "estado", api_jstr(c->estado));
    json_object_set_new(o, "notas", api_jstr(c->notas));
    json_object_set_new(o, "google_event_id", api_jstr(c->google_event_id));
    return o;
}

json_t *api_foto_json(const struct foto *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", api_jstr(f->id));
    json_object_set_new(o, "cita_id", api_jstr(f->cita_id));
    json_object_set_new(o, "cliente_id", api_jstr(f->cliente_id));
    json_object_set_new(o, "tipo", api_jstr(f->tipo));
    json_object_set_new(o, "url", api_jstr(f->url));
    json_object_set_new(o, "storage_path", api_jstr(f->storage_path));
    json_object_set_new(o, "created_at", api_jstr(f->created_at));
    return o;
}

void api_reply_err(struct http_req *r, br_err rc)
{
    unsigned status;
    switch (rc) {
    case BR_INVALID: status = 400; break;
    case BR_UNAUTH: status = 401; break;
    case BR_FORBIDDEN: status = 403; break;
    case BR_NOTFOUND: status = 404; break;
    case BR_CONFLICT: status = 409; break;
    case BR_TOOLARGE: status = 413; break;
    default: status = 500; break;
    }
    const char *msg = err_msg();
    http_reply_error(r, status, *msg ? msg : "Error interno del servidor");
}

void api_reply_list(struct http_req *r, br_err rc, const char *key, json_t *list)
{
    if (rc) {
        json_decref(list);
        api_reply_err(r, rc);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, key, list);
    http_reply_json(r, 200, o);
}

void api_reply_ok(struct http_req *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "ok", json_true());
    http_reply_json(r, 200, o);
}

bool api_opt_string(struct http_req *r, json_t *body, const char *key, const char **out)
{
    json_t *v = json_object_get(body, key);
    *out = NULL;
    if (!v || json_is_null(v)) return true;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return true;
    }
    char msg[96];
    snprintf(msg, sizeof msg, "Campo inválido: %s", key);
    http_reply_error(r, 400, msg);
    return false;
}

const char *api_id_field(json_t *body, const char *key, char **scratch)
{
    json_t *v = json_object_get(body, key);
    if (!v || json_is_null(v)) return NULL;
    if (json_is_string(v)) return json_string_value(v);
    *scratch = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    return *scratch;
}
