/*
 * replies.c - what the endpoints of the Google Calendar double share (see
 * gcal_double.h): building a reply and Google's error bodies, percent-decoding,
 * media types, random ids and the failure modes the tests switch on.
 */
#define _GNU_SOURCE
#include "gcal_double.h"

#include "util/buf.h"
#include "util/iso8601.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* --- small helpers ----------------------------------------------------------------- */

void reply_set(struct reply *r, unsigned status, json_t *body, const char *verdict_fmt, ...)
{
    r->status = status;
    free(r->body);
    r->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    free(r->verdict);
    va_list ap;
    va_start(ap, verdict_fmt);
    char tmp[512];
    vsnprintf(tmp, sizeof tmp, verdict_fmt, ap);
    va_end(ap);
    r->verdict = xstrdup(tmp);
}

/* Google's OAuth error shape: {"error": code, "error_description": text}. */
json_t *oauth_error(const char *code, const char *desc)
{
    return json_pack("{s:s, s:s}", "error", code, "error_description", desc);
}

/* Google's API error shape. */
json_t *api_error(int code, const char *reason, const char *message, const char *status)
{
    return json_pack("{s:{s:i, s:s, s:[{s:s, s:s, s:s}], s:s}}", "error", "code", code, "message",
                     message, "errors", "domain", "global", "reason", reason, "message", message,
                     "status", status);
}

/* The Calendar API's own error shape, as Google sends it for a refused
 * event (no "status" member, domain "calendar"). */
json_t *calendar_error(int code, const char *reason, const char *message)
{
    return json_pack("{s:{s:[{s:s, s:s, s:s}], s:i, s:s}}", "error", "errors", "domain", "calendar",
                     "reason", reason, "message", message, "code", code, "message", message);
}

bool unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes n bytes of percent-encoding ('+' is a space when plus is set).
 * NULL when an escape is malformed or the result is not UTF-8 without NUL.
 * With strict, anything but unreserved characters and escapes is refused:
 * the raw form of a properly encoded path segment. Caller frees. */
char *pct_decode(const char *s, size_t n, bool plus, bool strict)
{
    char *out = xmalloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            int a = i + 2 < n ? hexval((unsigned char)s[i + 1]) : -1;
            int b = i + 2 < n ? hexval((unsigned char)s[i + 2]) : -1;
            if (a < 0 || b < 0) {
                free(out);
                return NULL;
            }
            out[o++] = (char)(a * 16 + b);
            i += 2;
        } else if (plus && c == '+') {
            out[o++] = ' ';
        } else if (strict && !unreserved(c)) {
            free(out);
            return NULL;
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
    if (!utf8_valid(out, o)) {
        free(out);
        return NULL;
    }
    return out;
}

/* True when the header's media type is type (case-insensitive), with at
 * most a charset=utf-8 parameter. */
bool media_type_is(const char *header, const char *type)
{
    if (!header) return false;
    size_t n = strlen(type);
    if (strncasecmp(header, type, n) != 0) return false;
    const char *p = header + n;
    while (*p == ' ')
        p++;
    if (!*p) return true;
    if (*p != ';') return false;
    p++;
    while (*p == ' ')
        p++;
    return !strcasecmp(p, "charset=utf-8");
}

/* Random text of n characters from alphabet. */
void random_text(char *out, size_t n, const char *alphabet)
{
    size_t k = strlen(alphabet);
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[randombytes_uniform((uint32_t)k)];
    out[n] = '\0';
}

/* Waits until ms pass or the double stops. */
void pause_ms(int64_t ms)
{
    struct timespec at;
    clock_gettime(CLOCK_REALTIME, &at);
    at.tv_sec += (time_t)(ms / 1000);
    at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
        at.tv_sec++;
        at.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&S.lock);
    while (!S.stopping)
        if (pthread_cond_timedwait(&S.wake, &S.lock, &at) == ETIMEDOUT) break;
    pthread_mutex_unlock(&S.lock);
}

/* The failure mode of a target, copied under the lock. */
void mode_of(const char *target, char out[16])
{
    pthread_mutex_lock(&S.lock);
    snprintf(out, 16, "%s", !strcmp(target, "token") ? S.token_mode : S.events_mode);
    pthread_mutex_unlock(&S.lock);
}

/* Answers per a failure mode instead of the real answer. True when the mode
 * took over. */
bool apply_mode(const char *target, struct reply *r)
{
    char mode[16];
    mode_of(target, mode);
    bool token = !strcmp(target, "token");
    if (!strcmp(mode, "500")) {
        reply_set(r, 500,
                  token ? oauth_error("internal_failure", "Backend Error")
                        : api_error(500, "backendError", "Backend Error", "INTERNAL"),
                  "ok");
    } else if (!strcmp(mode, "garbage")) {
        reply_set(r, 200, NULL, "ok");
        r->body = xstrdup("<html><body>this is not JSON</body></html>");
        r->content_type = "text/html";
    } else if (!strcmp(mode, "truncated")) {
        reply_set(r, 200, NULL, "ok");
        r->body = xstrdup(token ? "{\"access_token\": \"ya29.cut-sh"
                                : "{\"kind\": \"calendar#event\", \"id\": \"cut");
        r->content_type = "application/json";
    } else if (!strcmp(mode, "hang")) {
        reply_set(r, 0, NULL, "ok");
        r->hang = true;
    } else if (!strcmp(mode, "forbidden") && !token) {
        /* the events endpoint judges it by the event (see on_events) */
        return false;
    } else if (!strcmp(mode, "forbidden") || !strcmp(mode, "noaccess")) {
        reply_set(r, token ? 400 : 403,
                  token ? oauth_error("invalid_grant", "Invalid grant: account not found")
                        : calendar_error(403, "requiredAccessLevel",
                                         "You need to have writer access to this calendar."),
                  "ok");
    } else if (!strcmp(mode, "huge")) {
        /* valid JSON, but far more of it than any answer of Google's */
        size_t n = 256 * 1024;
        char *pad = xmalloc(n + 1);
        memset(pad, 'x', n);
        pad[n] = '\0';
        reply_set(r, 200, json_pack("{s:s, s:s}", "id", "hugeevent", "padding", pad), "ok");
        free(pad);
    } else if (!strcmp(mode, "noid")) {
        reply_set(r, 200,
                  token ? json_pack("{s:s, s:i}", "token_type", "Bearer", "expires_in", 3600)
                        : json_pack("{s:s, s:s}", "kind", "calendar#event", "status", "confirmed"),
                  "ok");
    } else {
        return false;
    }
    json_object_set_new(r->extra, "mode", json_string(mode));
    return true;
}
