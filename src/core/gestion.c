/*
 * gestion.c - the appointments' personal links (see gestion.h).
 */
#include "gestion.h"
#include "../util/log.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#define KEY_NAME   "enlaces"
#define MAC_DOMAIN "barberia/c/v1:" /* what the MAC is of: never another use's */
#define RAW_LEN    (16 + crypto_auth_hmacsha256_BYTES)

br_err gestion_key_load(struct app *app)
{
    unsigned char fresh[APP_LINK_KEY_BYTES];
    char hex[2 * APP_LINK_KEY_BYTES + 1], stored[2 * APP_LINK_KEY_BYTES + 8];
    randombytes_buf(fresh, sizeof fresh);
    sodium_bin2hex(hex, sizeof hex, fresh, sizeof fresh);
    sodium_memzero(fresh, sizeof fresh);
    br_err rc = store_clave(app->store, KEY_NAME, hex, stored, sizeof stored);
    sodium_memzero(hex, sizeof hex);
    if (rc) return rc;
    size_t got = 0;
    if (strlen(stored) != 2 * APP_LINK_KEY_BYTES ||
        sodium_hex2bin(app->link_key, sizeof app->link_key, stored, strlen(stored), NULL, &got,
                       NULL) != 0 ||
        got != APP_LINK_KEY_BYTES) {
        sodium_memzero(stored, sizeof stored);
        return err_set(BR_STORE, "the stored link key is malformed");
    }
    sodium_memzero(stored, sizeof stored);
    app->link_key_ok = true;
    return BR_OK;
}

/* The 16 octets of a canonical UUID text. */
static bool id_octets(const char *id, unsigned char out[16])
{
    br_id canon;
    if (!id || !uuid_parse(id, strlen(id), canon)) return false;
    size_t got = 0;
    return sodium_hex2bin(out, 16, canon, strlen(canon), "-", &got, NULL) == 0 && got == 16;
}

static void mac_of(const unsigned char key[APP_LINK_KEY_BYTES], const unsigned char id[16],
                   unsigned char mac[crypto_auth_hmacsha256_BYTES])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, APP_LINK_KEY_BYTES);
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)MAC_DOMAIN, strlen(MAC_DOMAIN));
    crypto_auth_hmacsha256_update(&st, id, 16);
    crypto_auth_hmacsha256_final(&st, mac);
}

bool gestion_token(const unsigned char key[APP_LINK_KEY_BYTES], const char *cita_id,
                   char out[GESTION_TOKEN_LEN + 1])
{
    unsigned char raw[RAW_LEN];
    out[0] = '\0';
    if (!id_octets(cita_id, raw)) return false;
    mac_of(key, raw, raw + 16);
    sodium_bin2base64(out, GESTION_TOKEN_LEN + 1, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return true;
}

char *gestion_link(const unsigned char key[APP_LINK_KEY_BYTES], const char *base,
                   const char *cita_id)
{
    char tok[GESTION_TOKEN_LEN + 1];
    if (!gestion_token(key, cita_id, tok)) return NULL;
    char *link = xasprintf("%s/c/%s", base ? base : "", tok);
    sodium_memzero(tok, sizeof tok);
    return link;
}

bool gestion_token_cita(const unsigned char key[APP_LINK_KEY_BYTES], const char *token,
                        br_id cita_id)
{
    cita_id[0] = '\0';
    if (!token || strlen(token) != GESTION_TOKEN_LEN) return false;
    unsigned char raw[RAW_LEN], want[crypto_auth_hmacsha256_BYTES];
    size_t got = 0;
    if (sodium_base642bin(raw, sizeof raw, token, GESTION_TOKEN_LEN, NULL, &got, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        got != RAW_LEN)
        return false;
    mac_of(key, raw, want);
    if (crypto_verify_32(want, raw + 16) != 0) return false;
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, raw, 16);
    snprintf(cita_id, sizeof(br_id), "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
             hex + 20);
    return true;
}

br_err gestion_ver(struct app *app, const char *token, struct gestion_vista *out)
{
    memset(out, 0, sizeof *out);
    if (!app->link_key_ok || !gestion_token_cita(app->link_key, token, out->cita_id))
        return err_set(BR_NOTFOUND, "Cita no encontrada");
    struct cita_detail d;
    br_err rc = store_cita_detail(app->store, out->cita_id, &d);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc) {
        log_error("citas: link lookup: %s", err_msg());
        return rc == BR_BUSY ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
    }
    int64_t start = 0;
    if (!iso8601_parse(d.cita.fecha_inicio, strlen(d.cita.fecha_inicio), &start)) start = 0;
    int64_t limite = start - (int64_t)app->cfg->cancel_cutoff_min * 60000;
    iso8601_format(limite, out->limite);
    out->cancelada = d.cita.estado && !strcmp(d.cita.estado, "cancelada");
    out->puede_cambiar = !out->cancelada && clock_now_ms() <= limite;
    cita_detail_clear(&d);
    return BR_OK;
}
