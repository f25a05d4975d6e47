/*
 * gestion.c - the appointments' personal links (see gestion.h).
 */
#include "gestion.h"
#include "../util/log.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

#define KEY_NAME  CLAVE_ENLACES
#define DOMAIN_V1 "barberia/c/v1:" /* what the MAC is of: never another use's */
#define DOMAIN_V2 "barberia/c/v2:" /* the same with the client's generation */
#define MAC_LEN   crypto_auth_hmacsha256_BYTES
#define RAW_V1    (16 + MAC_LEN)
#define RAW_V2    (16 + 4 + MAC_LEN)
#define TOKEN_V1  64 /* base64url of RAW_V1 octets, without padding */

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

/* The MAC of id (16 octets) of generation gen: gen 0 as links were first
 * signed, so that those handed out before generations stay good. */
static void mac_of(const unsigned char key[APP_LINK_KEY_BYTES], const unsigned char id[16],
                   uint32_t gen, unsigned char mac[MAC_LEN])
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, APP_LINK_KEY_BYTES);
    const char *domain = gen ? DOMAIN_V2 : DOMAIN_V1;
    crypto_auth_hmacsha256_update(&st, (const unsigned char *)domain, strlen(domain));
    crypto_auth_hmacsha256_update(&st, id, 16);
    if (gen) {
        unsigned char g[4] = {(unsigned char)(gen >> 24), (unsigned char)(gen >> 16),
                              (unsigned char)(gen >> 8), (unsigned char)gen};
        crypto_auth_hmacsha256_update(&st, g, sizeof g);
    }
    crypto_auth_hmacsha256_final(&st, mac);
}

bool gestion_token(const unsigned char key[APP_LINK_KEY_BYTES], const char *cita_id, uint32_t gen,
                   char out[GESTION_TOKEN_MAX + 1])
{
    unsigned char raw[RAW_V2];
    out[0] = '\0';
    if (!id_octets(cita_id, raw)) return false;
    size_t n = 16;
    if (gen) {
        raw[n++] = (unsigned char)(gen >> 24);
        raw[n++] = (unsigned char)(gen >> 16);
        raw[n++] = (unsigned char)(gen >> 8);
        raw[n++] = (unsigned char)gen;
    }
    mac_of(key, raw, gen, raw + n);
    sodium_bin2base64(out, GESTION_TOKEN_MAX + 1, raw, n + MAC_LEN,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return true;
}

char *gestion_link(const unsigned char key[APP_LINK_KEY_BYTES], const char *base,
                   const char *cita_id, uint32_t gen)
{
    char tok[GESTION_TOKEN_MAX + 1];
    if (!gestion_token(key, cita_id, gen, tok)) return NULL;
    char *link = xasprintf("%s/c/%s", base ? base : "", tok);
    sodium_memzero(tok, sizeof tok);
    return link;
}

bool gestion_token_cita(const unsigned char key[APP_LINK_KEY_BYTES], const char *token,
                        br_id cita_id, uint32_t *gen)
{
    cita_id[0] = '\0';
    *gen = 0;
    size_t len = token ? strlen(token) : 0;
    if (len != TOKEN_V1 && len != GESTION_TOKEN_MAX) return false;
    unsigned char raw[RAW_V2], want[MAC_LEN];
    size_t got = 0;
    if (sodium_base642bin(raw, sizeof raw, token, len, NULL, &got, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        got != (len == TOKEN_V1 ? RAW_V1 : RAW_V2))
        return false;
    uint32_t g = 0;
    if (got == RAW_V2) {
        g = (uint32_t)raw[16] << 24 | (uint32_t)raw[17] << 16 | (uint32_t)raw[18] << 8 | raw[19];
        if (!g) return false; /* generation 0 is written the first way only */
    }
    mac_of(key, raw, g, want);
    if (crypto_verify_32(want, raw + got - MAC_LEN) != 0) return false;
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, raw, 16);
    snprintf(cita_id, sizeof(br_id), "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
             hex + 20);
    *gen = g;
    return true;
}

br_err gestion_cita(struct app *app, const char *token, br_id cita_id, uint32_t *out_gen)
{
    uint32_t gen = 0;
    int64_t now_gen = 0;
    *out_gen = 0;
    if (!app->link_key_ok || !gestion_token_cita(app->link_key, token, cita_id, &gen))
        return err_set(BR_NOTFOUND, "Cita no encontrada");
    br_err rc = store_enlace_gen(app->store, cita_id, &now_gen);
    if (rc == BR_NOTFOUND || (!rc && now_gen != (int64_t)gen)) {
        /* no such appointment, or a link her corrected address ended */
        cita_id[0] = '\0';
        return err_set(BR_NOTFOUND, "Cita no encontrada");
    }
    if (rc) {
        cita_id[0] = '\0';
        log_error("citas: link lookup: %s", err_msg());
        return err_unavailable(rc) ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
    }
    *out_gen = gen;
    return BR_OK;
}

br_err gestion_ver(struct app *app, const char *token, struct gestion_vista *out)
{
    memset(out, 0, sizeof *out);
    uint32_t gen;
    br_err rc = gestion_cita(app, token, out->cita_id, &gen);
    if (rc) return rc;
    struct cita_detail d;
    rc = store_cita_detail(app->store, out->cita_id, &d);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "Cita no encontrada");
    if (rc) {
        log_error("citas: link lookup: %s", err_msg());
        return err_unavailable(rc) ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
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
