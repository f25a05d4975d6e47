/*
 * catalog.c - the catalog's administration (see catalog.h): each write
 * checks its fields with the domain's rules, in the order the API reads
 * them, then goes to the store.
 */
#include "catalog.h"
#include "../domain/rules.h"
#include "../identity/identity.h"
#include "../mail/compose.h"

#include <stdlib.h>
#include <string.h>

static br_err bad_field(const char *key)
{
    return err_set(BR_INVALID, "Campo inválido: %s", key);
}

/* Looks up by id text; anything that is not a UUID is simply not found. */
br_err catalog_servicio_activo(struct app *app, const char *id, struct servicio *s)
{
    br_id uid;
    memset(s, 0, sizeof *s);
    if (!uuid_parse(id, strlen(id), uid)) return BR_NOTFOUND;
    br_err rc = store_servicio_get(app->store, uid, s);
    if (!rc && !s->activo) { /* taken off the catalog: no longer offered */
        servicio_clear(s);
        rc = BR_NOTFOUND;
    }
    return rc;
}

br_err catalog_barbero_activo(struct app *app, const char *id, struct barbero *b)
{
    br_id uid;
    memset(b, 0, sizeof *b);
    if (!uuid_parse(id, strlen(id), uid)) return BR_NOTFOUND;
    br_err rc = store_barbero_get(app->store, uid, b);
    if (!rc && !b->activo) { /* taken off the catalog */
        barbero_clear(b);
        rc = BR_NOTFOUND;
    }
    return rc;
}

static bool activo_ok(int activo)
{
    return activo >= -1 && activo <= 1;
}

br_err catalog_barbero_add(struct app *app, struct barbero *b)
{
    if (b->nombre && !rule_nombre_ok(b->nombre)) return bad_field("nombre");
    if (b->foto_url && !rule_foto_url_ok(b->foto_url)) return bad_field("foto_url");
    if (!b->nombre) return err_set(BR_INVALID, "Faltan campos requeridos");
    uuid_v4(b->id);
    return store_barbero_add(app->store, b);
}

br_err catalog_barbero_update(struct app *app, const char *id, const struct barbero_patch *p)
{
    if (p->nombre && !rule_nombre_ok(p->nombre)) return bad_field("nombre");
    if (p->set_foto_url && p->foto_url && !rule_foto_url_ok(p->foto_url))
        return bad_field("foto_url");
    if (!activo_ok(p->activo)) return bad_field("activo");
    /* the barber's notices: an address mail can carry, a user of rol
     * barbero (store/avisos.h) */
    struct barbero_patch q = *p;
    char *email = NULL;
    if (p->set_email && p->email && *p->email) {
        if (!ident_normalize_email(p->email, &email) || !mail_address_ok(email)) {
            free(email);
            return bad_field("email");
        }
        q.email = email;
    } else if (p->set_email) {
        q.email = NULL;
    }
    br_id uid;
    if (p->set_usuario && p->usuario_id && *p->usuario_id) {
        struct perfil pf;
        memset(&pf, 0, sizeof pf);
        br_err rc = uuid_parse(p->usuario_id, strlen(p->usuario_id), uid)
                        ? store_perfil_get(app->store, uid, &pf)
                        : BR_NOTFOUND;
        if (!rc && (!pf.rol || strcmp(pf.rol, "barbero") != 0))
            rc = err_set(BR_INVALID, "El usuario no tiene el rol barbero");
        perfil_clear(&pf);
        if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Usuario no encontrado");
        if (rc) {
            free(email);
            return rc;
        }
        q.usuario_id = uid;
    } else if (p->set_usuario) {
        q.usuario_id = NULL; /* "" unlinks, as null does (and as email) */
    }
    br_err rc = store_barbero_update(app->store, id, &q);
    if (rc == BR_CONFLICT) rc = err_set(BR_CONFLICT, "El usuario ya está vinculado a otro barbero");
    free(email);
    return rc;
}

br_err catalog_servicio_add(struct app *app, struct servicio *s)
{
    if (s->nombre && !rule_nombre_ok(s->nombre)) return bad_field("nombre");
    if (!s->nombre) return err_set(BR_INVALID, "Faltan campos requeridos");
    if (!rule_duracion_ok(s->duracion_min)) return bad_field("duracion_min");
    if (!rule_precio_ok(s->precio)) return bad_field("precio");
    if (!rule_margen_ok(s->margen_min)) return bad_field("margen_min");
    uuid_v4(s->id);
    return store_servicio_add(app->store, s);
}

br_err catalog_servicio_update(struct app *app, const char *id, const struct servicio_patch *p)
{
    if (p->nombre && !rule_nombre_ok(p->nombre)) return bad_field("nombre");
    if (!activo_ok(p->activo)) return bad_field("activo");
    if (p->duracion_min && !rule_duracion_ok(p->duracion_min)) return bad_field("duracion_min");
    if (p->set_precio && !rule_precio_ok(p->precio)) return bad_field("precio");
    if (p->margen_min != -1 && !rule_margen_ok(p->margen_min)) return bad_field("margen_min");
    return store_servicio_update(app->store, id, p);
}
