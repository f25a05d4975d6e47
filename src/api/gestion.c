/*
 * gestion.c - an appointment behind its personal link, without signing in:
 * GET /api/gestion/{token} and /api/gestion/{token}/huecos (the times it
 * could move to), POST /api/gestion/{token}/cancelar and
 * /api/gestion/{token}/reprogramar (the rules are core/cambios.h's, the
 * link's core/gestion.h's). Reading changes nothing: only the POSTs do.
 */
#include "api.h"
#include "../core/cambios.h"
#include "../core/gestion.h"

#include <stdlib.h>
#include <string.h>

#define GESTION_PREFIX "/api/gestion/"

enum accion { VER, HUECOS, CANCELAR, REPROGRAMAR, NINGUNA };

/* The token and the action of a path under GESTION_PREFIX. OUT: tok. */
static enum accion parse(const char *path, char tok[GESTION_TOKEN_MAX + 1])
{
    tok[0] = '\0';
    if (strncmp(path, GESTION_PREFIX, strlen(GESTION_PREFIX)) != 0) return NINGUNA;
    const char *seg = path + strlen(GESTION_PREFIX);
    size_t n = strcspn(seg, "/");
    if (n == 0) return NINGUNA;
    const char *rest = seg + n;
    enum accion a = !*rest                          ? VER
                    : !strcmp(rest, "/huecos")      ? HUECOS
                    : !strcmp(rest, "/cancelar")    ? CANCELAR
                    : !strcmp(rest, "/reprogramar") ? REPROGRAMAR
                                                    : NINGUNA;
    if (a != NINGUNA && n <= GESTION_TOKEN_MAX) { /* longer: no token, not found */
        memcpy(tok, seg, n);
        tok[n] = '\0';
    }
    return a;
}

bool api_gestion_ver_path(const char *path)
{
    char tok[GESTION_TOKEN_MAX + 1];
    enum accion a = parse(path, tok);
    return a == VER || a == HUECOS;
}

bool api_gestion_accion_path(const char *path)
{
    char tok[GESTION_TOKEN_MAX + 1];
    enum accion a = parse(path, tok);
    return a == CANCELAR || a == REPROGRAMAR;
}

/* Replies with the cita and what its page offers. */
static void reply_cita(struct http_req *r, const char *tok, unsigned status)
{
    struct app *app = api_app(r);
    struct gestion_vista g;
    br_err rc = gestion_ver(app, tok, &g);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    struct jw w;
    if (api_reply_if_failed(r, api_begin_one_cita(r, g.cita_id, &w), NULL)) return;
    jw_key(&w, "puede_cambiar");
    jw_bool(&w, g.puede_cambiar);
    jw_kstr(&w, "limite_cambio", g.limite);
    jw_kstr(&w, "zona", app->cfg->tz);
    jw_key(&w, "tienda");
    jw_obj_open(&w);
    jw_kstr(&w, "nombre", app->cfg->shop_name);
    jw_kstr(&w, "direccion", app->cfg->shop_address);
    jw_kstr(&w, "telefono", app->cfg->shop_phone);
    jw_obj_close(&w);
    /* a personal page: kept by no cache (every JSON answer is no-store) */
    api_reply(r, status, &w);
}

void api_gestion_get(struct http_req *r)
{
    char tok[GESTION_TOKEN_MAX + 1];
    enum accion a = parse(http_req_path(r), tok);
    if (a == HUECOS) {
        struct cambio_huecos h;
        br_err rc = cambios_huecos_link(api_app(r), tok, http_req_query(r, "fecha"), &h);
        api_reply_huecos(r, rc, &h);
    } else if (a == VER) {
        reply_cita(r, tok, 200);
    } else {
        http_reply_error(r, 404, "No encontrado");
    }
}

void api_gestion_post(struct http_req *r)
{
    char tok[GESTION_TOKEN_MAX + 1];
    enum accion a = parse(http_req_path(r), tok);
    if (a != CANCELAR && a != REPROGRAMAR) {
        http_reply_error(r, 404, "No encontrado");
        return;
    }
    bool move = a == REPROGRAMAR;
    char *scratch;
    const char *fecha;
    if (!api_cambio_fecha(r, move, &fecha, &scratch)) return;
    br_id cita_id;
    br_err rc = cambios_apply_link(api_app(r), tok, move, fecha, cita_id);
    free(scratch);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_cita(r, tok, 200);
}
