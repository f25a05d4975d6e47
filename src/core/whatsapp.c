/*
 * whatsapp.c - consent and the webhook (see core/whatsapp.h).
 */
#include "whatsapp.h"
#include "cuenta.h"
#include "mostrador.h"
#include "../domain/avisos.h"
#include "../domain/roles.h"
#include "../util/iso8601.h"
#include "../util/log.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATUSES_MAX 1000

/* The consent of cliente_id set as whatsapp_consent describes; por (NULL:
 * the client herself) is the staff user who recorded it at the desk, kept
 * with the consent (registrado_por). The log names who, never the number. */
static br_err consent_set(struct app *app, const char *cliente_id, bool acepta,
                          const char *telefono, const char *perfil_tel, const char *por,
                          struct wa_consent *c)
{
    br_ts now;
    iso8601_format(clock_now_ms(), now);
    char e164[RULE_E164_MAX] = "";
    if (telefono && strlen(telefono) > WHATSAPP_TELEFONO_MAX)
        return err_set(BR_INVALID, "Teléfono inválido");
    if (acepta) {
        const char *given = telefono && *telefono ? telefono : perfil_tel;
        if (!rule_telefono_e164(given, app->cfg->whatsapp_country, e164))
            return err_set(BR_INVALID, "Teléfono inválido");
    }
    /* given by her own session, and not the consent in force already: her
     * address is told, so that a session someone else holds cannot send
     * her messages (and their links) to his phone unnoticed (a few a day:
     * no flood of her inbox either) */
    struct cuenta_mail mail = {.kind = "whatsapp_aviso"};
    uuid_v4(mail.id);
    memcpy(mail.created_at, now, sizeof now);
    br_ts desde;
    iso8601_format(clock_now_ms() - ISO8601_DAY_MS, desde);
    struct wa_aviso aviso = {&mail, desde, WHATSAPP_AVISOS_DIA};
    bool tell = acepta && !por && mailer_enabled(app->mailer), queued = false;
    br_err rc = mostrador_cliente_cerrado(
        store_whatsapp_consent_set(app->store, cliente_id, acepta ? e164 : NULL, now, por,
                                   tell ? &aviso : NULL, &queued, c),
        por != NULL);
    if (queued) cuenta_correo_wake(app->correo);
    if (!rc && por)
        log_info("whatsapp: consent of %s %s at the front desk by %s", cliente_id,
                 acepta ? "given" : "withdrawn", por);
    else if (!rc)
        log_info("whatsapp: consent of %s %s", cliente_id, acepta ? "given" : "withdrawn");
    return rc;
}

br_err whatsapp_consent(struct app *app, const char *cliente_id, bool acepta, const char *telefono,
                        const char *perfil_tel, struct wa_consent *c)
{
    return consent_set(app, cliente_id, acepta, telefono, perfil_tel, NULL, c);
}

/* The one place that resolves the client staff name at the desk: OUT *cv
 * (cliente_view_clear) on success. */
static br_err desk_client(struct app *app, const struct principal *caller, const char *cliente_id,
                          struct cliente_view *cv)
{
    memset(cv, 0, sizeof *cv);
    if (!caller || !principal_is_staff(caller)) return err_set(BR_FORBIDDEN, "Sin permisos");
    br_err rc = mostrador_solo_cliente(app, cliente_id, cv);
    if (rc == BR_NOTFOUND) return rc;
    if (rc) {
        log_error("whatsapp: client lookup: %s", err_msg());
        return err_unavailable(rc) ? rc : err_set(BR_INTERNAL, "Error interno del servidor");
    }
    return BR_OK;
}

br_err whatsapp_consent_desk(struct app *app, const struct principal *caller,
                             const char *cliente_id, bool acepta, const char *telefono,
                             struct wa_consent *c)
{
    memset(c, 0, sizeof *c);
    struct cliente_view cv;
    br_err rc = desk_client(app, caller, cliente_id, &cv);
    if (rc) return rc;
    rc = consent_set(app, cv.perfil.id, acepta, telefono, cv.perfil.telefono, caller->user_id, c);
    cliente_view_clear(&cv);
    return rc;
}

br_err whatsapp_consent_of(struct app *app, const struct principal *caller, const char *cliente_id,
                           struct wa_consent *c)
{
    memset(c, 0, sizeof *c);
    struct cliente_view cv;
    br_err rc = desk_client(app, caller, cliente_id, &cv);
    if (rc) return rc;
    rc = store_whatsapp_consent_get(app->store, cv.perfil.id, c);
    cliente_view_clear(&cv);
    if (rc && !err_unavailable(rc)) {
        log_error("whatsapp: consent of %s: %s", cliente_id, err_msg());
        rc = err_set(BR_INTERNAL, "Error interno del servidor");
    }
    return rc;
}

/* Constant-time equality of two texts (their lengths are not secret). */
static bool same_text(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    return na == nb && CRYPTO_memcmp(a, b, na) == 0;
}

bool whatsapp_webhook_verify(const struct app *app, const char *mode, const char *token)
{
    const char *want = app->cfg->whatsapp_verify_token;
    return want && *want && mode && token && !strcmp(mode, "subscribe") && same_text(token, want);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

bool whatsapp_webhook_signed(const struct app *app, const void *body, size_t len,
                             const char *signature)
{
    const char *secret = app->cfg->whatsapp_app_secret;
    if (!secret || !*secret || !signature || strncmp(signature, "sha256=", 7) != 0) return false;
    const char *hex = signature + 7;
    if (strlen(hex) != 64) return false;
    unsigned char given[32];
    for (int i = 0; i < 32; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0) return false;
        given[i] = (unsigned char)(a * 16 + b);
    }
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), body ? body : (const void *)"", len, mac,
              &n) ||
        n != 32)
        return false;
    return CRYPTO_memcmp(mac, given, 32) == 0;
}

/* A status's failure as one line: "code 131026: Message undeliverable". */
static void status_error(const json_t *st, char *out, size_t n)
{
    const json_t *e = json_array_get(json_object_get(st, "errors"), 0);
    out[0] = '\0';
    if (!e) return;
    const char *title = json_string_value(json_object_get(e, "title"));
    if (!title) title = json_string_value(json_object_get(e, "message"));
    snprintf(out, n, "whatsapp: code %lld: %s",
             (long long)json_integer_value(json_object_get(e, "code")), title ? title : "?");
    for (char *p = out; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
}

br_err whatsapp_webhook_statuses(struct app *app, const json_t *body, int *recorded)
{
    *recorded = 0;
    int seen = 0;
    size_t i, j, k;
    const json_t *entry, *change, *st;
    json_array_foreach(json_object_get(body, "entry"), i, entry)
    {
        json_array_foreach(json_object_get(entry, "changes"), j, change)
        {
            const json_t *statuses = json_object_get(json_object_get(change, "value"), "statuses");
            json_array_foreach(statuses, k, st)
            {
                if (++seen > STATUSES_MAX) return BR_OK;
                const char *id = json_string_value(json_object_get(st, "id"));
                const char *status = json_string_value(json_object_get(st, "status"));
                const char *ts = json_string_value(json_object_get(st, "timestamp"));
                if (!id || !status || strlen(id) > 200) continue;
                if (!word_in(whatsapp_entregas(), status)) continue;
                int64_t ms = clock_now_ms();
                if (ts) {
                    char *end = NULL;
                    long long secs = strtoll(ts, &end, 10);
                    if (end && !*end && secs > 0 && secs < 32503680000LL) ms = secs * 1000;
                }
                br_ts at;
                iso8601_format(ms, at);
                char why[300];
                status_error(st, why, sizeof why);
                bool matched = false;
                br_err rc = store_whatsapp_status(app->store, id, status, at, why[0] ? why : NULL,
                                                  &matched);
                if (rc) return rc;
                if (matched) (*recorded)++;
                if (!strcmp(status, "failed"))
                    log_warn("whatsapp: message %s failed: %s", id, why[0] ? why : "no detail");
            }
        }
    }
    return BR_OK;
}
