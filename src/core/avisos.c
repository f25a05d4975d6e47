/*
 * avisos.c - the barbers' calendar feeds (see avisos.h).
 *
 * A token is 32 bytes from the system's random source, handed out once in
 * base64url; the store keeps the hex SHA-256 of its text only, so a copy of
 * the database (or an export) opens no feed. Looking one up compares
 * hashes in the store's own index; a wrong token, a revoked one and an
 * unknown barber are the same BR_NOTFOUND.
 */
#include "avisos.h"
#include "../mail/compose.h"
#include "../util/buf.h"
#include "../util/log.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_BYTES 32
#define TOKEN_LEN   43 /* base64url of 32 bytes, no padding */
#define FEED_MAX    (8u * 1024 * 1024)

static void token_hash(const char *token, char hex[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)token, strlen(token));
    sodium_bin2hex(hex, 65, h, sizeof h);
}

static bool token_shaped(const char *t)
{
    if (!t || strlen(t) != TOKEN_LEN) return false;
    for (const char *p = t; *p; p++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

static br_err feed_write(struct app *app, const char *barbero_id, const char *hash)
{
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    br_err rc = store_feed_set(app->store, barbero_id, hash, now);
    if (rc == BR_NOTFOUND) rc = err_set(BR_NOTFOUND, "Barbero no encontrado");
    return rc;
}

br_err avisos_feed_renovar(struct app *app, const char *barbero_id, char **url)
{
    *url = NULL;
    unsigned char raw[TOKEN_BYTES];
    char token[TOKEN_LEN + 2], hex[65];
    randombytes_buf(raw, sizeof raw);
    sodium_bin2base64(token, sizeof token, raw, sizeof raw,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    sodium_memzero(raw, sizeof raw);
    token_hash(token, hex);
    br_err rc = feed_write(app, barbero_id, hex);
    if (!rc)
        *url = xasprintf("%s/api/barberos/%s/agenda.ics?token=%s",
                         app->public_url ? app->public_url : "", barbero_id, token);
    sodium_memzero(token, sizeof token);
    return rc;
}

br_err avisos_feed_revocar(struct app *app, const char *barbero_id)
{
    return feed_write(app, barbero_id, NULL);
}

/* --- the feed's text ----------------------------------------------------------------------- */

struct feed {
    struct buf b;
    br_err rc;
    char stamp[17];
};

static br_err feed_event(void *ud, const struct cita_aviso *c)
{
    struct feed *f = ud;
    int64_t a, b;
    if (!iso8601_parse(c->fecha_inicio, strlen(c->fecha_inicio), &a) ||
        !iso8601_parse(c->fecha_fin, strlen(c->fecha_fin), &b))
        return BR_OK; /* never stored so; nothing to show */
    char start[17], end[17];
    mail_ics_utc(a, start);
    mail_ics_utc(b, end);
    const char *cliente = *c->cliente_nombre ? c->cliente_nombre : "Cliente";
    char *uid = xasprintf("%s@barberia", c->id);
    char *summary = xasprintf("%s \u2014 %s", c->servicio_nombre, cliente);
    char *desc =
        xasprintf("Cliente: %s\nServicio: %s\nCita: %s", cliente, c->servicio_nombre, c->id);
    /* the SEQUENCE of the last notice the barber was mailed */
    struct mail_ics_event ev = {
        .uid = uid,
        .dtstamp = f->stamp,
        .start = start,
        .end = end,
        .summary = summary,
        .description = desc,
        .status = "CONFIRMED",
        .sequence = c->secuencia > 0 ? c->secuencia - 1 : 0,
    };
    br_err rc = mail_ics_event(&f->b, &ev);
    free(uid);
    free(summary);
    free(desc);
    return rc;
}

br_err avisos_feed(struct app *app, const char *barbero_id, const char *token, int64_t now_ms,
                   char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    br_id id;
    if (!barbero_id || !uuid_parse(barbero_id, strlen(barbero_id), id) || !token_shaped(token))
        return err_set(BR_NOTFOUND, "No encontrado");
    char hex[65];
    token_hash(token, hex);
    bool ok = false;
    br_err rc = store_feed_check(app->store, id, hex, &ok);
    if (rc) return rc;
    if (!ok) return err_set(BR_NOTFOUND, "No encontrado");
    struct barbero bar;
    rc = store_barbero_get(app->store, id, &bar);
    if (rc == BR_NOTFOUND) return err_set(BR_NOTFOUND, "No encontrado");
    if (rc) return rc;

    struct feed f;
    buf_init(&f.b, FEED_MAX);
    f.rc = BR_OK;
    mail_ics_utc(now_ms, f.stamp);
    br_ts desde, hasta;
    iso8601_format(now_ms - (int64_t)AVISOS_FEED_DIAS_ATRAS * ISO8601_DAY_MS, desde);
    iso8601_format(now_ms + (int64_t)AVISOS_FEED_DIAS_ADELANTE * ISO8601_DAY_MS, hasta);
    rc = mail_ics_prop(&f.b, "BEGIN", "VCALENDAR");
    if (!rc) rc = mail_ics_prop(&f.b, "VERSION", "2.0");
    if (!rc) rc = mail_ics_prop(&f.b, "PRODID", "-//Barberia//Agenda " BARBERIA_VERSION "//ES");
    if (!rc) rc = mail_ics_prop(&f.b, "CALSCALE", "GREGORIAN");
    if (!rc) rc = mail_ics_prop(&f.b, "METHOD", "PUBLISH");
    if (!rc) {
        /* the calendar's name as apps show it (escaped text) */
        struct buf line;
        buf_init(&line, 4096);
        char *name = xasprintf("%s \u2014 %s",
                               app->cfg->shop_name ? app->cfg->shop_name : "Barbería", bar.nombre);
        rc = buf_puts(&line, "X-WR-CALNAME:");
        if (!rc) rc = mail_ics_text(&line, name);
        if (!rc) rc = mail_ics_fold(&f.b, line.p, line.len);
        free(name);
        buf_free(&line);
    }
    if (!rc) rc = mail_ics_prop(&f.b, "X-PUBLISHED-TTL", "PT15M");
    if (!rc) rc = mail_ics_prop(&f.b, "REFRESH-INTERVAL;VALUE=DURATION", "PT15M");
    if (!rc) rc = store_feed_citas(app->store, id, desde, hasta, AVISOS_FEED_MAX, feed_event, &f);
    if (!rc) rc = mail_ics_prop(&f.b, "END", "VCALENDAR");
    barbero_clear(&bar);
    if (rc) {
        buf_free(&f.b);
        return rc;
    }
    *text = buf_steal(&f.b, len);
    return BR_OK;
}
