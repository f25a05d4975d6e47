/*
 * whatsapp.c - WhatsApp template messages through the Graph API (see
 * whatsapp.h), over libcurl.
 */
#include "whatsapp.h"
#include "../config.h"
#include "../domain/avisos.h"
#include "../util/iso8601.h"
#include "../util/log.h"
#include "compose.h"

#include <curl/curl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_MAX (64 * 1024) /* the Graph API's answers are small */
#define PARAM_MAX  200         /* a name, the day, the address: what a message shows */

#define AUTH_PREFIX "Authorization: Bearer "

struct whatsapp {
    char *url;  /* {api}/{phone-number-id}/messages */
    char *auth; /* "Authorization: Bearer <token>"; wiped on close */
    char *language;
    char *tpl[5]; /* by kind: confirmacion, cancelacion, reprogramacion, recordatorio,
                   * aviso_espera */
    char *tz;
    char *where; /* the shop's name and address */
    long timeout_ms;
    atomic_bool cancelled;
};

void whatsapp_param_text(const char *in, char *out, size_t n)
{
    size_t o = 0, cap = n - 1;
    bool space = true; /* drops leading spaces */
    for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p && o < cap; p++) {
        unsigned char c = *p < 0x20 || *p == 0x7F ? ' ' : *p;
        if (c == ' ') {
            if (space) continue;
            space = true;
        } else {
            space = false;
        }
        out[o++] = (char)c;
    }
    /* never half a UTF-8 character at the cut */
    if (o == cap && in && strlen(in) > o) {
        size_t k = o;
        while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
            k--;
        if (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0xC0) o = k - 1;
    }
    while (o > 0 && out[o - 1] == ' ')
        o--;
    if (!o) out[o++] = '-';
    out[o] = '\0';
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Cuts s to keep characters, the last of them "…" (keep >= 2). */
static void cut_with_ellipsis(char *s, size_t keep)
{
    size_t seen = 0, o = 0;
    for (; s[o]; o++)
        if (((unsigned char)s[o] & 0xC0) != 0x80 && seen++ == keep - 1) break;
    while (o > 0 && s[o - 1] == ' ')
        o--;
    memcpy(s + o, "\xE2\x80\xA6", 4); /* U+2026 and the NUL */
}

#define PARAM_FLOOR 8

void whatsapp_params_fit(char *const *t, size_t n, size_t fixed, size_t budget)
{
    size_t len[8], total = 0, longest = 0;
    if (n > 8) n = 8;
    for (size_t i = 0; i < n; i++) {
        len[i] = utf8_chars(t[i]);
        total += len[i];
        if (len[i] > longest) longest = len[i];
    }
    size_t room = budget > fixed + n * PARAM_FLOOR ? budget - fixed : n * PARAM_FLOOR;
    if (total <= room) return;
    /* the one length the longest are cut to: the largest that fits */
    size_t cap = longest;
    while (cap > PARAM_FLOOR && total > room) {
        cap--;
        total = 0;
        for (size_t i = 0; i < n; i++)
            total += len[i] < cap ? len[i] : cap;
    }
    for (size_t i = 0; i < n; i++)
        if (len[i] > cap) cut_with_ellipsis(t[i], cap);
}

static bool token_char_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7F) return false;
    return true;
}

br_err whatsapp_open(const struct config *cfg, struct whatsapp **out)
{
    *out = NULL;
    const char *tok = cfg->whatsapp_token, *pid = cfg->whatsapp_phone_id;
    char e164[RULE_E164_MAX];
    int qf, qt;
    if (!rule_telefono_e164("600000000", cfg->whatsapp_country ? cfg->whatsapp_country : "", e164))
        return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_DEFAULT_COUNTRY: expected a country calling "
                                  "code of 1 to 3 digits");
    if (!rule_quiet_hours_parse(cfg->whatsapp_quiet_hours ? cfg->whatsapp_quiet_hours : "", &qf,
                                &qt))
        return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_QUIET_HOURS: expected HH:MM-HH:MM or no");
    if (!tok && !pid) return BR_OK;
    if (!tok || !pid)
        return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_TOKEN and BARBERIA_WHATSAPP_PHONE_NUMBER_ID "
                                  "go together");
    if (!token_char_ok(tok)) return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_TOKEN: not a token");
    for (const char *p = pid; *p; p++)
        if (*p < '0' || *p > '9')
            return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_PHONE_NUMBER_ID: expected digits");
    const char *api = cfg->whatsapp_api_url ? cfg->whatsapp_api_url : "";
    if (strncmp(api, "https://", 8) != 0 && strncmp(api, "http://", 7) != 0)
        return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_API_URL: expected an http(s) URL");
    const char *lang = cfg->whatsapp_language ? cfg->whatsapp_language : "";
    if (!*lang || strlen(lang) > 15 || !token_char_ok(lang))
        return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_LANGUAGE: expected a language code");
    const char *tpl[5] = {cfg->whatsapp_tpl_confirmacion, cfg->whatsapp_tpl_cancelacion,
                          cfg->whatsapp_tpl_reprogramacion, cfg->whatsapp_tpl_recordatorio,
                          cfg->whatsapp_tpl_espera};
    for (int i = 0; i < 5; i++)
        if (!tpl[i] || !*tpl[i] || strlen(tpl[i]) > 512 || !token_char_ok(tpl[i]))
            return err_set(BR_CONFIG, "BARBERIA_WHATSAPP_TEMPLATE_*: expected a template name");
    struct whatsapp *w = xcalloc(1, sizeof *w);
    size_t na = strlen(api);
    while (na && api[na - 1] == '/')
        na--;
    size_t nu = na + strlen(pid) + 16;
    w->url = xmalloc(nu);
    snprintf(w->url, nu, "%.*s/%s/messages", (int)na, api, pid);
    size_t nt = strlen(tok) + 32;
    w->auth = xmalloc(nt);
    snprintf(w->auth, nt, AUTH_PREFIX "%s", tok);
    w->language = xstrdup(lang);
    for (int i = 0; i < 5; i++)
        w->tpl[i] = xstrdup(tpl[i]);
    w->tz = xstrdup(cfg->tz ? cfg->tz : "UTC");
    w->where = mail_donde(cfg->shop_name, cfg->shop_address);
    w->timeout_ms = cfg->whatsapp_timeout_ms > 0 ? cfg->whatsapp_timeout_ms : 15000;
    atomic_init(&w->cancelled, false);
    *out = w;
    return BR_OK;
}

void whatsapp_close(struct whatsapp *w)
{
    if (!w) return;
    wipe_free(w->auth);
    free(w->url);
    free(w->language);
    for (int i = 0; i < 5; i++)
        free(w->tpl[i]);
    free(w->tz);
    free(w->where);
    free(w);
}

void whatsapp_cancel(struct whatsapp *w)
{
    if (w) atomic_store(&w->cancelled, true);
}

static const char *template_of(const struct whatsapp *w, const char *kind)
{
    const char *k = outbox_kind(kind);
    if (outbox_kind_cancela(k)) return w->tpl[1]; /* a closure's too */
    if (!strcmp(k, "reprogramacion")) return w->tpl[2];
    if (!strcmp(k, "recordatorio")) return w->tpl[3];
    if (!strcmp(k, "aviso_espera")) return w->tpl[4];
    return w->tpl[0];
}

/* The request's body: the template message with its six parameters. */
static char *message_body(const struct whatsapp *w, const struct outbox_msg *m, const char *link)
{
    int64_t start = 0;
    char when[160], day[128];
    if (iso8601_parse(m->fecha_inicio, strlen(m->fecha_inicio), &start)) {
        mail_when(start, day, sizeof day);
        snprintf(when, sizeof when, "%s (%s)", day, w->tz);
    } else {
        snprintf(when, sizeof when, "%s", m->fecha_inicio);
    }
    const char *raw[6] = {
        m->cliente_nombre, m->servicio_nombre, m->barbero_nombre, when, w->where, link};
    char t[6][WHATSAPP_LINK_MAX + 1]; /* a link is whole or useless */
    char *texts[5];
    for (int i = 0; i < 6; i++)
        whatsapp_param_text(raw[i], t[i], i == 5 ? WHATSAPP_LINK_MAX + 1 : PARAM_MAX + 1);
    for (int i = 0; i < 5; i++)
        texts[i] = t[i];
    whatsapp_params_fit(texts, 5, utf8_chars(t[5]), WHATSAPP_PARAMS_BUDGET);
    json_t *params = json_array();
    for (int i = 0; i < 6; i++)
        json_array_append_new(params, json_pack("{s:s, s:s}", "type", "text", "text", t[i]));
    json_t *body = json_pack(
        "{s:s, s:s, s:s, s:{s:s, s:{s:s}, s:[{s:s, s:o}]}}", "messaging_product", "whatsapp", "to",
        m->recipient, "type", "template", "template", "name", template_of(w, m->kind), "language",
        "code", w->language, "components", "type", "body", "parameters", params);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    return text;
}

struct answer {
    char *p;
    size_t len;
    bool too_big;
};

static size_t write_cb(char *data, size_t size, size_t nitems, void *ud)
{
    struct answer *a = ud;
    size_t n = size * nitems;
    if (a->len + n > ANSWER_MAX) {
        a->too_big = true;
        return n; /* read on, keep nothing more */
    }
    a->p = xrealloc(a->p, a->len + n + 1);
    memcpy(a->p + a->len, data, n);
    a->len += n;
    a->p[a->len] = '\0';
    return n;
}

static int progress_cb(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return atomic_load(&((struct whatsapp *)ud)->cancelled) ? 1 : 0;
}

/* Error codes of the Graph API worth trying again later: rate limits
 * (4, 80007, 130429, 131056), a temporary failure (1, 2, 131000,
 * 131016) and an expired or refused token (190: the operator renews it). */
static bool code_transient(long long code)
{
    static const long long codes[] = {1, 2, 4, 80007, 130429, 131000, 131016, 131056, 190};
    for (size_t i = 0; i < ARRAY_LEN(codes); i++)
        if (codes[i] == code) return true;
    return false;
}

/* The verdict on an answer that is not a 2xx; its text (logged, kept as
 * the message's error) never holds w's token nor the link the message
 * carried, whose token opens the appointment without signing in, should
 * the answer quote what it was sent. Both go before the text is cut, so
 * that no piece of one survives at the cut. */
static br_err refusal(const struct whatsapp *w, long status, const struct answer *a,
                      const char *link)
{
    json_t *j = a->p ? json_loads(a->p, 0, NULL) : NULL;
    json_t *e = json_object_get(j, "error");
    long long code = json_integer_value(json_object_get(e, "code"));
    long long sub = json_integer_value(json_object_get(e, "error_subcode"));
    const char *said = json_string_value(json_object_get(e, "message"));
    size_t n = (said ? strlen(said) : 0) + 1;
    char *full = xstrdup(said ? said : ""), msg[200];
    secret_scrub(full, n, w->auth + strlen(AUTH_PREFIX));
    secret_scrub(full, n, link);
    const char *tail = link ? strrchr(link, '/') : NULL; /* its token alone */
    if (tail && strlen(tail + 1) >= 16) secret_scrub(full, n, tail + 1);
    whatsapp_param_text(said ? full : NULL, msg, sizeof msg);
    free(full);
    bool transient = status >= 500 || status == 429 || status == 408 || code_transient(code);
    br_err rc = err_set(transient ? BR_UPSTREAM : BR_INVALID,
                        "whatsapp: HTTP %ld, code %lld (subcode %lld): %s", status, code, sub,
                        e ? msg : "no error object");
    json_decref(j);
    return rc;
}

br_err whatsapp_send(struct whatsapp *w, const struct outbox_msg *msg, const char *link,
                     char id[128])
{
    id[0] = '\0';
    char *body = message_body(w, msg, link);
    if (!body) return err_set(BR_INVALID, "whatsapp: cannot build the message");
    CURL *c = curl_easy_init();
    if (!c) {
        free(body);
        return err_set(BR_UPSTREAM, "whatsapp: libcurl could not start a transfer");
    }
    struct curl_slist *h = curl_slist_append(NULL, w->auth);
    if (h) h = curl_slist_append(h, "Content-Type: application/json");
    struct answer a = {NULL, 0, false};
    char errbuf[CURL_ERROR_SIZE] = "";
    CURLcode cc = h ? CURLE_OK : CURLE_OUT_OF_MEMORY;
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_URL, w->url);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, w->timeout_ms);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, w->timeout_ms);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_XFERINFODATA, w);
    if (!cc) cc = curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    if (!cc) cc = curl_easy_perform(c);
    br_err rc = BR_OK;
    long status = 0;
    if (cc != CURLE_OK) {
        /* libcurl's words never hold the header: no token in the detail */
        rc = err_set(cc == CURLE_OPERATION_TIMEDOUT ? BR_TIMEOUT : BR_UPSTREAM, "whatsapp: %s",
                     curl_easy_strerror(cc));
    } else if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status < 200 ||
               status > 299) {
        rc = refusal(w, status, &a, link);
    } else {
        /* accepted: whatever the answer says, never sent twice */
        json_t *j = a.p ? json_loads(a.p, 0, NULL) : NULL;
        const char *mid = json_string_value(
            json_object_get(json_array_get(json_object_get(j, "messages"), 0), "id"));
        if (mid && strlen(mid) < 128)
            snprintf(id, 128, "%s", mid);
        else
            log_warn("whatsapp: message for cita %s accepted without an id", msg->cita_id);
        json_decref(j);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    free(a.p);
    free(body);
    return rc;
}
