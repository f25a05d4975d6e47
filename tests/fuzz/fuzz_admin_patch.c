/*
 * fuzz_admin_patch.c - PATCH /api/admin/usuarios through the real server,
 * as an administrator.
 *
 * The payload is the JSON body (@VICTIM@ is a real user to edit). Properties:
 * the answer is 200, 400, 413, 429 or 503, or 500 "Usuario no encontrado"
 * (a password for an unknown user, docs/decisions.md) - never another 500;
 * after a 200 that named the victim, the victim's profile holds the nombre,
 * rol and telefono the body set (read back from the store).
 */
#include "fz.h"
#include "api/api.h"
#include "domain/rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct app *the_app;

/* cap: the profile keeps the value as rule_una_linea makes it one line of
 * at most cap - 1 bytes (docs/decisions.md); 0: as given */
static void check_field(const char *name, const json_t *v, const char *got, bool null_if_empty,
                        size_t cap)
{
    const char *want = json_string_value(v);
    if (!want) return; /* absent or null: telefono null is checked below */
    char line[RULE_NOMBRE_MAX + 1];
    if (cap && cap <= sizeof line) {
        rule_una_linea(want, line, cap);
        want = line;
    }
    if (!*want) {
        if (null_if_empty && got) fz_fail("%s \"\" should clear it, holds '%s'", name, got);
        return;
    }
    if (!got || strcmp(got, want))
        fz_fail("%s set to '%s', profile holds '%s'", name, want, got ? got : "(null)");
}

static void check_victim(const struct fz_fixture *fx, json_t *body)
{
    const char *uid = json_string_value(json_object_get(body, "userId"));
    if (!uid || strcasecmp(uid, fx->victim_id)) return;
    struct perfil p;
    if (store_perfil_get(the_app->store, fx->victim_id, &p) != BR_OK)
        fz_fail("the victim's profile cannot be read: %s", err_msg());
    check_field("nombre", json_object_get(body, "nombre"), p.nombre, false, RULE_NOMBRE_MAX + 1);
    check_field("rol", json_object_get(body, "rol"), p.rol, false, 0);
    json_t *tel = json_object_get(body, "telefono");
    check_field("telefono", tel, p.telefono, true, RULE_TELEFONO_MAX + 1);
    if (json_is_null(tel) && p.telefono) fz_fail("telefono null left '%s'", p.telefono);
    perfil_clear(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct fz_fixture *fx = fz_start();
    the_app = fz_app();
    struct fz_input in;
    fz_input_parse(data, size, &in);
    char auth[128];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", fx->admin_token);
    const char *hdr[] = {auth, "Content-Type: application/json", NULL};
    struct fz_req q = {"PATCH", "/api/admin/usuarios", hdr, in.payload, in.len, in.cuts, in.ncuts};
    struct fz_resp r;
    if (fz_http(&q, true, &r)) {
        switch (r.status) {
        case 200: {
            json_t *body = json_loadb(in.payload, in.len, 0, NULL);
            check_victim(fx, body);
            json_decref(body);
            break;
        }
        case 500:
            if (strcmp(fz_resp_error(&r), "Usuario no encontrado"))
                fz_fail("PATCH answered 500: %s", r.body);
            break;
        case 400:
        case 413:
        case 429:
        case 503:
            break;
        default:
            fz_fail("PATCH answered %d: %s", r.status, r.body);
        }
        fz_resp_free(&r);
    }
    fz_input_free(&in);
    return 0;
}
