/*
 * gcal_double.c - a local stand-in for Google's OAuth 2.0 token endpoint and
 * the Calendar API's events.insert, events.delete and events.patch,
 * for the tests of the Google Calendar adapter (tests/api/test_calendar_event.c,
 * test_calendar_failures.c, test_cambios.c).
 *
 * It is as strict as Google about what it is sent, and stricter where the
 * contract fixes more than Google does: the token request must be a
 * form-encoded JWT-bearer grant whose RS256 assertion verifies with the
 * public key given on the command line and carries exactly the expected
 * claims (with --subject, also "sub" naming that user; without, no "sub"
 * at all); an event must come with a token this double issued, as JSON with
 * exactly the members the contract names (or the same without attendees),
 * to a calendar id that is percent-encoded in the raw request line. Every
 * request is appended to the log file as one JSON line (method, raw URI,
 * decoded path, headers of interest, body, verdict, status), so a test
 * asserts on exactly what went over the wire. Failure modes are switched at
 * run time:
 *
 *   POST /control?mode=ok|500|garbage|truncated|hang|forbidden|noaccess|noid|huge
 *                      [&target=events|token]
 *        garbage: a 200 of HTML; truncated: a 200 "application/json" whose
 *          JSON stops half-way.
 *        forbidden (events): an ordinary service account without domain-wide
 *          delegation. An event with attendees gets Google's real 403
 *          (reason forbiddenForServiceAccounts) unless its token was issued
 *          for an assertion with "sub" (delegation); one without attendees
 *          is created as usual.
 *        noaccess (events): every request gets Google's 403 for a calendar
 *          shared read-only (reason requiredAccessLevel).
 *        forbidden or noaccess (token): 400 invalid_grant.
 *   POST /control?revoke=1        every token issued so far stops working
 *   POST /control?delay_ms=N      events are answered after N ms
 *   POST /control?token_delay_ms=N  tokens are answered after N ms
 *   POST /control?expires_in=N    lifetime of the tokens issued from now on
 *   POST /control?reset=1         modes ok, no delays, tokens last 3600 s
 *
 * Usage: gcal_double --public-key PEM --client-email E --log FILE
 *                    [--calendar-id ID] [--subject USER] [--port N]
 * --subject: the account has domain-wide delegation and acts for USER;
 * every assertion must carry "sub": USER. Without it, an assertion with a
 * "sub" is refused as Google refuses it for an account without delegation.
 * It listens on 127.0.0.1 on --port (default: an ephemeral port; a test that
 * stops the double and starts it again on the same port plays a Google that
 * was down and came back), prints "port N" on stdout,
 * and stops promptly on SIGTERM or SIGINT, even with requests hanging.
 */
#define _GNU_SOURCE
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

#define BODY_MAX      (1024 * 1024)
#define SCOPE         "https://www.googleapis.com/auth/calendar"
#define GRANT_TYPE    "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define EVENTS_PREFIX "/calendar/v3/calendars/"
#define HANG_MS       (10 * 60 * 1000)
#define CLOCK_SKEW_S  300
#define ASSERTION_TTL 3600

struct event {
    char *id;
    bool deleted;
};

struct token {
    char *text;
    bool delegated; /* issued for an assertion with "sub" */
};

/* Everything the handler threads share, behind lock. */
struct state {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* broadcast when stopping: ends hangs and delays */
    bool stopping;
    const char *client_email;
    const char *calendar_id; /* NULL: any */
    const char *subject;     /* NULL: no delegation, a "sub" is refused */
    EVP_PKEY *pub;
    FILE *log;
    char token_url[96];
    char events_mode[16], token_mode[16];
    int delay_ms, token_delay_ms;
    long expires_in;
    unsigned long seq;
    struct token *tokens; /* issued and not revoked */
    size_t ntokens;
    struct event *events;
    size_t nevents;
};

/* One request, from its request line to its end. */
struct req {
    char *raw_uri; /* exactly as sent: MHD hands the handler a decoded path */
    bool started;
    struct buf body;
    bool too_large;
};

/* The answer being built, and what the log line says about it. */
struct reply {
    unsigned status;
    char *body;               /* owned; NULL: empty */
    const char *content_type; /* NULL: application/json; charset=UTF-8 */
    char *verdict;            /* owned; "ok" or why the request was refused */
    bool hang;
    json_t *extra; /* members added to the log line */
};

static struct state S;

/* --- small helpers ----------------------------------------------------------------- */

static void reply_set(struct reply *r, unsigned status, json_t *body, const char *verdict_fmt, ...)
    PRINTF_LIKE(4, 5);

static void reply_set(struct reply *r, unsigned status, json_t *body, const char *verdict_fmt, ...)
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
static json_t *oauth_error(const char *code, const char *desc)
{
    return json_pack("{s:s, s:s}", "error", code, "error_description", desc);
}

/* Google's API error shape. */
static json_t *api_error(int code, const char *reason, const char *message, const char *status)
{
    return json_pack("{s:{s:i, s:s, s:[{s:s, s:s, s:s}], s:s}}", "error", "code", code, "message",
                     message, "errors", "domain", "global", "reason", reason, "message", message,
                     "status", status);
}

/* The Calendar API's own error shape, as Google sends it for a refused
 * event (no "status" member, domain "calendar"). */
static json_t *calendar_error(int code, const char *reason, const char *message)
{
    return json_pack("{s:{s:[{s:s, s:s, s:s}], s:i, s:s}}", "error", "errors", "domain", "calendar",
                     "reason", reason, "message", message, "code", code, "message", message);
}

#define NO_INVITE_MESSAGE                                                                          \
    "Service accounts cannot invite attendees without Domain-Wide Delegation of Authority."

static bool unreserved(unsigned char c)
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
static char *pct_decode(const char *s, size_t n, bool plus, bool strict)
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
static bool media_type_is(const char *header, const char *type)
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
static void random_text(char *out, size_t n, const char *alphabet)
{
    size_t k = strlen(alphabet);
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[randombytes_uniform((uint32_t)k)];
    out[n] = '\0';
}

/* Waits until ms pass or the double stops. */
static void pause_ms(int64_t ms)
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
static void mode_of(const char *target, char out[16])
{
    pthread_mutex_lock(&S.lock);
    snprintf(out, 16, "%s", !strcmp(target, "token") ? S.token_mode : S.events_mode);
    pthread_mutex_unlock(&S.lock);
}

/* Answers per a failure mode instead of the real answer. True when the mode
 * took over. */
static bool apply_mode(const char *target, struct reply *r)
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

/* --- the token endpoint -------------------------------------------------------------- */

/* Decodes one base64url (no padding) JWT segment. Caller frees *out. */
static bool b64url_decode(const char *s, size_t n, unsigned char **out, size_t *len)
{
    *out = xmalloc(n + 1);
    const char *end = NULL;
    if (sodium_base642bin(*out, n + 1, s, n, NULL, len, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != s + n) {
        free(*out);
        *out = NULL;
        return false;
    }
    return true;
}

/* A JSON object from a decoded JWT segment, or NULL. */
static json_t *segment_json(const char *s, size_t n)
{
    unsigned char *bin = NULL;
    size_t len = 0;
    if (!b64url_decode(s, n, &bin, &len)) return NULL;
    json_t *j = json_loadb((const char *)bin, len, JSON_REJECT_DUPLICATES, NULL);
    free(bin);
    if (!json_is_object(j)) {
        json_decref(j);
        return NULL;
    }
    return j;
}

static bool rs256_verifies(const char *input, size_t n, const char *sig64, size_t siglen64)
{
    unsigned char *sig = NULL;
    size_t siglen = 0;
    if (!b64url_decode(sig64, siglen64, &sig, &siglen)) return false;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, S.pub) == 1 &&
              EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)input, n) == 1;
    EVP_MD_CTX_free(ctx);
    ERR_clear_error();
    free(sig);
    return ok;
}

/* An integer claim, or false. */
static bool int_claim(const json_t *claims, const char *name, json_int_t *v)
{
    const json_t *j = json_object_get(claims, name);
    if (!json_is_integer(j)) return false;
    *v = json_integer_value(j);
    return true;
}

/* Checks the assertion. NULL when good, else Google-like refusal text. */
static const char *check_assertion(const char *jwt, struct reply *r, unsigned *status,
                                   const char **code)
{
    *status = 400;
    *code = "invalid_grant";
    const char *dot1 = strchr(jwt, '.');
    const char *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
    if (!dot1 || !dot2 || strchr(dot2 + 1, '.')) return "Invalid JWT: not three segments";
    json_t *header = segment_json(jwt, (size_t)(dot1 - jwt));
    json_t *claims = segment_json(dot1 + 1, (size_t)(dot2 - dot1 - 1));
    const char *why = NULL;
    if (!header || !claims) {
        why = "Invalid JWT: a segment is not base64url JSON";
        goto out;
    }
    json_object_set(r->extra, "jwt_header", header);
    json_object_set(r->extra, "claims", claims);
    const char *alg = json_string_value(json_object_get(header, "alg"));
    const json_t *typ = json_object_get(header, "typ");
    if (!alg || strcmp(alg, "RS256") != 0) {
        why = "Invalid JWT: alg must be RS256";
        goto out;
    }
    if (typ && (!json_is_string(typ) || strcmp(json_string_value(typ), "JWT") != 0)) {
        why = "Invalid JWT: typ must be JWT";
        goto out;
    }
    if (!rs256_verifies(jwt, (size_t)(dot2 - jwt), dot2 + 1, strlen(dot2 + 1))) {
        why = "Invalid JWT Signature.";
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(claims, key, v)
    {
        if (strcmp(key, "iss") && strcmp(key, "scope") && strcmp(key, "aud") &&
            strcmp(key, "iat") && strcmp(key, "exp") && strcmp(key, "sub")) {
            why = "Invalid JWT: unexpected claim";
            goto out;
        }
    }
    const char *iss = json_string_value(json_object_get(claims, "iss"));
    const char *scope = json_string_value(json_object_get(claims, "scope"));
    const char *aud = json_string_value(json_object_get(claims, "aud"));
    const json_t *sub = json_object_get(claims, "sub");
    json_int_t iat = 0, exp = 0;
    json_int_t now = (json_int_t)time(NULL);
    if (!iss || strcmp(iss, S.client_email) != 0) {
        *status = 401;
        *code = "invalid_client";
        why = "The OAuth client was not found.";
    } else if (!scope || strcmp(scope, SCOPE) != 0) {
        *code = "invalid_scope";
        why = "Invalid OAuth scope or ID token audience provided.";
    } else if (!aud || strcmp(aud, S.token_url) != 0) {
        why = "Invalid JWT: aud is not the token endpoint";
    } else if (!int_claim(claims, "iat", &iat) || !int_claim(claims, "exp", &exp) ||
               iat < now - CLOCK_SKEW_S || iat > now + CLOCK_SKEW_S || exp != iat + ASSERTION_TTL) {
        why = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable "
              "timeframe. Check your iat and exp values in the JWT claim.";
    } else if (sub && !S.subject) {
        /* what Google says to an account without domain-wide delegation */
        *status = 401;
        *code = "unauthorized_client";
        why = "Client is unauthorized to retrieve access tokens using this method, or client not "
              "authorized for any of the scopes requested.";
    } else if (S.subject && !sub) {
        why = "Invalid JWT: no sub claim (this double expects one)";
    } else if (S.subject && (!json_is_string(sub) || strcmp(json_string_value(sub), S.subject))) {
        why = "Invalid email or User ID";
    }
out:
    json_decref(header);
    json_decref(claims);
    return why;
}

static void on_token(struct MHD_Connection *conn, const char *method, struct req *q,
                     struct reply *r)
{
    if (strcmp(method, "POST") != 0) {
        reply_set(r, 405, oauth_error("invalid_request", "POST required"), "method %s", method);
        return;
    }
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    if (!media_type_is(ct, "application/x-www-form-urlencoded")) {
        reply_set(r, 400, oauth_error("invalid_request", "Invalid Content-Type"), "content type %s",
                  ct ? ct : "(none)");
        return;
    }
    /* the raw form: what a proper form encoder emits, nothing else */
    for (size_t i = 0; i < q->body.len; i++) {
        unsigned char c = (unsigned char)q->body.p[i];
        if (!unreserved(c) && c != '%' && c != '+' && c != '=' && c != '&' && c != '*') {
            reply_set(r, 400, oauth_error("invalid_request", "Malformed form body"),
                      "form body not properly URL-encoded (raw 0x%02x)", c);
            return;
        }
    }
    char *grant = NULL, *assertion = NULL;
    const char *bad = NULL;
    const char *p = buf_cstr(&q->body), *end = p + q->body.len;
    while (p < end && !bad) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        if (!amp) amp = end;
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        if (!eq) {
            bad = "form member without '='";
            break;
        }
        char *name = pct_decode(p, (size_t)(eq - p), true, false);
        char *value = pct_decode(eq + 1, (size_t)(amp - eq - 1), true, false);
        if (!name || !value)
            bad = "malformed percent-encoding";
        else if (!strcmp(name, "grant_type") && !grant)
            grant = value, value = NULL;
        else if (!strcmp(name, "assertion") && !assertion)
            assertion = value, value = NULL;
        else
            bad = "unexpected or repeated form member";
        free(name);
        free(value);
        p = amp + 1;
    }
    if (bad) {
        reply_set(r, 400, oauth_error("invalid_request", bad), "%s", bad);
    } else if (!grant || strcmp(grant, GRANT_TYPE) != 0) {
        reply_set(r, 400, oauth_error("unsupported_grant_type", "Invalid grant_type"),
                  "grant_type %s", grant ? grant : "(missing)");
    } else if (!assertion) {
        reply_set(r, 400, oauth_error("invalid_request", "Missing required parameter: assertion"),
                  "no assertion");
    } else {
        unsigned status;
        const char *code;
        const char *why = check_assertion(assertion, r, &status, &code);
        if (why) {
            reply_set(r, status, oauth_error(code, why), "%s", why);
        } else if (!apply_mode("token", r)) {
            char token[64];
            random_text(token + 5, 48,
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
            memcpy(token, "ya29.", 5);
            pthread_mutex_lock(&S.lock);
            S.tokens = xrealloc(S.tokens, (S.ntokens + 1) * sizeof *S.tokens);
            S.tokens[S.ntokens].text = xstrdup(token);
            /* only a checked assertion gets here: a "sub" is the expected one */
            S.tokens[S.ntokens++].delegated = S.subject != NULL;
            long ttl = S.expires_in;
            int delay = S.token_delay_ms;
            pthread_mutex_unlock(&S.lock);
            if (delay > 0) pause_ms(delay);
            reply_set(r, 200,
                      json_pack("{s:s, s:i, s:s}", "access_token", token, "expires_in", (int)ttl,
                                "token_type", "Bearer"),
                      "ok");
            json_object_set_new(r->extra, "issued", json_string(token));
        }
    }
    free(grant);
    free(assertion);
}

/* --- the events endpoint -------------------------------------------------------------- */

/* True when auth carries a token this double issued and did not revoke.
 * OUT: *delegated, whether it was issued for a "sub". */
static bool token_valid(const char *auth, bool *delegated)
{
    *delegated = false;
    if (!auth || strncmp(auth, "Bearer ", 7) != 0) return false;
    bool found = false;
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.ntokens && !found; i++)
        if (!strcmp(S.tokens[i].text, auth + 7)) {
            found = true;
            *delegated = S.tokens[i].delegated;
        }
    pthread_mutex_unlock(&S.lock);
    return found;
}

/* A strict RFC 3339 date-time; OUT: *ms. */
static bool rfc3339(const char *s, int64_t *ms)
{
    /* YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    size_t n = strlen(s);
    if (n < sizeof shape) return false;
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i]) return false;
    size_t i = sizeof shape - 1;
    if (s[i] == '.') {
        size_t k = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == k) return false;
    }
    if (!strcmp(s + i, "Z")) return iso8601_parse(s, n, ms);
    if ((s[i] == '+' || s[i] == '-') && n - i == 6 && s[i + 3] == ':')
        return iso8601_parse(s, n, ms);
    return false;
}

/* Exactly the named members (NULL-terminated), or false. */
static bool exact_members(const json_t *o, const char *const *names)
{
    if (!json_is_object(o)) return false;
    size_t n = 0;
    for (; names[n]; n++)
        if (!json_object_get(o, names[n])) return false;
    return json_object_size(o) == n;
}

/* Checks an events.insert body. NULL when good, else why not. */
static const char *check_event(const json_t *ev)
{
    static const char *const top[] = {"summary", "description", "start", "end", "attendees", NULL};
    /* the same without attendees: what is sent when Google refuses them */
    static const char *const top_alone[] = {"summary", "description", "start", "end", NULL};
    static const char *const when[] = {"dateTime", NULL};
    static const char *const who[] = {"email", NULL};
    if (!exact_members(ev, top) && !exact_members(ev, top_alone))
        return "the event must have exactly summary, description, "
               "start, end, attendees (or all of them but attendees)";
    if (!json_is_string(json_object_get(ev, "summary"))) return "summary is not a string";
    if (!json_is_string(json_object_get(ev, "description"))) return "description is not a string";
    const json_t *start = json_object_get(ev, "start"), *end = json_object_get(ev, "end");
    if (!exact_members(start, when) || !exact_members(end, when))
        return "start and end must be exactly {dateTime}";
    int64_t s_ms, e_ms;
    const char *s = json_string_value(json_object_get(start, "dateTime"));
    const char *e = json_string_value(json_object_get(end, "dateTime"));
    if (!s || !rfc3339(s, &s_ms)) return "start.dateTime is not RFC 3339";
    if (!e || !rfc3339(e, &e_ms)) return "end.dateTime is not RFC 3339";
    if (e_ms <= s_ms) return "The specified time range is empty.";
    const json_t *att = json_object_get(ev, "attendees");
    if (!att) return NULL;
    if (!json_is_array(att)) return "attendees is not an array";
    size_t i;
    const json_t *a;
    json_array_foreach(att, i, a)
    {
        if (!exact_members(a, who)) return "an attendee must be exactly {email}";
        const char *m = json_string_value(json_object_get(a, "email"));
        const char *at = m ? strchr(m, '@') : NULL;
        if (!at || at == m || !at[1] || strchr(at + 1, '@') || strpbrk(m, " \t\r\n<>"))
            return "Invalid attendee email.";
    }
    return NULL;
}

/* Splits the raw events path: calendar id and (for DELETE) event id, both
 * decoded, each required to be percent-encoded in the raw URI. */
static const char *parse_events_path(const char *raw, char **cal, char **event)
{
    *cal = *event = NULL;
    if (strchr(raw, '?')) return "unexpected query string";
    if (strncmp(raw, EVENTS_PREFIX, strlen(EVENTS_PREFIX)) != 0) return "not an events path";
    const char *p = raw + strlen(EVENTS_PREFIX);
    const char *slash = strchr(p, '/');
    if (!slash || slash == p) return "no calendar id";
    const char *rest = slash + 1;
    if (strncmp(rest, "events", 6) != 0 || (rest[6] != '\0' && rest[6] != '/'))
        return "no events segment after the calendar id";
    *cal = pct_decode(p, (size_t)(slash - p), false, true);
    if (!*cal) return "calendar id not percent-encoded";
    if (rest[6] == '/') {
        const char *id = rest + 7;
        if (!*id || strchr(id, '/')) return "bad event id segment";
        *event = pct_decode(id, strlen(id), false, true);
        if (!*event) return "event id not percent-encoded";
    }
    return NULL;
}

/* Checks an events.patch body: a non-empty subset of the members an event
 * may have, each as events.insert wants it. NULL when good. */
static const char *check_patch(const json_t *ev)
{
    static const char *const allowed[] = {"summary", "description", "start", "end"};
    static const char *const when[] = {"dateTime", NULL};
    if (!json_is_object(ev) || json_object_size(ev) == 0) return "the patch is not a JSON object";
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)ev, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < ARRAY_LEN(allowed); i++)
            known = known || !strcmp(key, allowed[i]);
        if (!known) return "the patch has a member an event does not have";
    }
    const json_t *start = json_object_get(ev, "start"), *end = json_object_get(ev, "end");
    if ((start && !exact_members(start, when)) || (end && !exact_members(end, when)))
        return "start and end must be exactly {dateTime}";
    int64_t s_ms = 0, e_ms = 0;
    const char *s = start ? json_string_value(json_object_get(start, "dateTime")) : NULL;
    const char *e = end ? json_string_value(json_object_get(end, "dateTime")) : NULL;
    if (start && (!s || !rfc3339(s, &s_ms))) return "start.dateTime is not RFC 3339";
    if (end && (!e || !rfc3339(e, &e_ms))) return "end.dateTime is not RFC 3339";
    if (start && end && e_ms <= s_ms) return "The specified time range is empty.";
    return NULL;
}

/* events.patch: an event this double issued and did not delete; an unknown
 * one is 404 and a deleted one 410, as Google answers. */
static void on_patch(struct MHD_Connection *conn, struct req *q, struct reply *r, const char *event)
{
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    json_error_t jerr;
    json_t *ev =
        q->body.len ? json_loadb(q->body.p, q->body.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
    const char *why = !media_type_is(ct, "application/json") ? "content type is not "
                                                               "application/json"
                      : !ev                                  ? "body is not JSON"
                                                             : check_patch(ev);
    int found = 0; /* 0 unknown, 1 live, 2 deleted */
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.nevents && !found; i++)
        if (!strcmp(S.events[i].id, event)) found = S.events[i].deleted ? 2 : 1;
    pthread_mutex_unlock(&S.lock);
    if (why) {
        reply_set(r, 400, api_error(400, "invalid", why, "INVALID_ARGUMENT"), "%s", why);
    } else if (found == 0) {
        reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "ok");
    } else if (found == 2) {
        reply_set(r, 410, api_error(410, "deleted", "Resource has been deleted", "GONE"), "ok");
    } else {
        json_t *answer = json_deep_copy(ev);
        json_object_set_new(answer, "kind", json_string("calendar#event"));
        json_object_set_new(answer, "id", json_string(event));
        json_object_set_new(answer, "status", json_string("confirmed"));
        reply_set(r, 200, answer, "ok");
    }
    json_decref(ev);
}

static void on_events(struct MHD_Connection *conn, const char *method, struct req *q,
                      struct reply *r)
{
    char *cal = NULL, *event = NULL;
    const char *bad = parse_events_path(q->raw_uri, &cal, &event);
    if (cal) json_object_set_new(r->extra, "calendar_id", json_string(cal));
    if (event) json_object_set_new(r->extra, "event_id", json_string(event));
    bool insert = !strcmp(method, "POST") && !event;
    bool del = !strcmp(method, "DELETE") && event;
    bool patch = !strcmp(method, "PATCH") && event;
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    bool delegated = false;
    if (bad) {
        reply_set(r, 400, api_error(400, "invalid", bad, "INVALID_ARGUMENT"), "%s", bad);
    } else if (!insert && !del && !patch) {
        reply_set(
            r, 405,
            api_error(405, "httpMethodNotAllowed", "Method Not Allowed", "METHOD_NOT_ALLOWED"),
            "method %s on %s", method, event ? "an event" : "the events collection");
    } else if (!token_valid(auth, &delegated)) {
        reply_set(r, 401,
                  api_error(401, "authError",
                            "Request had invalid authentication credentials. Expected OAuth 2 "
                            "access token, login cookie or other valid authentication "
                            "credential.",
                            "UNAUTHENTICATED"),
                  "bearer token not issued by this double, or revoked");
    } else if (S.calendar_id && strcmp(cal, S.calendar_id) != 0) {
        reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "unknown calendar");
    } else if (apply_mode("events", r)) {
        /* the mode answers */
    } else if (patch) {
        on_patch(conn, q, r, event);
    } else if (del) {
        if (q->body.len) {
            reply_set(r, 400, api_error(400, "invalid", "Unexpected body", "INVALID_ARGUMENT"),
                      "DELETE with a body");
        } else {
            int found = 0; /* 0 unknown, 1 live, 2 deleted */
            pthread_mutex_lock(&S.lock);
            for (size_t i = 0; i < S.nevents && !found; i++)
                if (!strcmp(S.events[i].id, event)) {
                    found = S.events[i].deleted ? 2 : 1;
                    S.events[i].deleted = true;
                }
            pthread_mutex_unlock(&S.lock);
            if (found == 1)
                reply_set(r, 204, NULL, "ok");
            else if (found == 2)
                reply_set(r, 410, api_error(410, "deleted", "Resource has been deleted", "GONE"),
                          "ok");
            else
                reply_set(r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "ok");
        }
    } else {
        const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
        json_error_t jerr;
        json_t *ev =
            q->body.len ? json_loadb(q->body.p, q->body.len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
        const char *why = !media_type_is(ct, "application/json") ? "content type is not "
                                                                   "application/json"
                          : !ev                                  ? "body is not JSON"
                                                                 : check_event(ev);
        char mode[16];
        mode_of("events", mode);
        if (ev)
            json_object_set_new(r->extra, "attendees",
                                json_boolean(json_object_get(ev, "attendees") != NULL));
        if (why) {
            reply_set(r, 400, api_error(400, "invalid", why, "INVALID_ARGUMENT"), "%s", why);
        } else if (!strcmp(mode, "forbidden") &&
                   json_array_size(json_object_get(ev, "attendees")) && !delegated) {
            reply_set(r, 403, calendar_error(403, "forbiddenForServiceAccounts", NO_INVITE_MESSAGE),
                      "ok");
            json_object_set_new(r->extra, "mode", json_string(mode));
        } else {
            char id[27];
            random_text(id, 26, "0123456789abcdefghijklmnopqrstuv");
            pthread_mutex_lock(&S.lock);
            S.events = xrealloc(S.events, (S.nevents + 1) * sizeof *S.events);
            S.events[S.nevents].id = xstrdup(id);
            S.events[S.nevents++].deleted = false;
            int delay = S.delay_ms;
            pthread_mutex_unlock(&S.lock);
            json_t *answer = json_deep_copy(ev);
            json_object_set_new(answer, "kind", json_string("calendar#event"));
            json_object_set_new(answer, "id", json_string(id));
            json_object_set_new(answer, "status", json_string("confirmed"));
            char link[96];
            snprintf(link, sizeof link, "https://www.google.com/calendar/event?eid=%s", id);
            json_object_set_new(answer, "htmlLink", json_string(link));
            reply_set(r, 200, answer, "ok");
            json_object_set_new(r->extra, "issued_id", json_string(id));
            if (delay > 0) pause_ms(delay);
        }
        json_decref(ev);
    }
    free(cal);
    free(event);
}

/* --- control --------------------------------------------------------------------------- */

static void on_control(struct MHD_Connection *conn, struct reply *r)
{
    const char *mode = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "mode");
    const char *target = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "target");
    const char *revoke = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "revoke");
    const char *delay = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "delay_ms");
    const char *ttl = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "expires_in");
    const char *tdelay = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token_delay_ms");
    const char *reset = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "reset");
    static const char *const modes[] = {"ok",        "500",      "garbage", "truncated", "hang",
                                        "forbidden", "noaccess", "noid",    "huge"};
    bool known = !mode;
    for (size_t i = 0; mode && i < ARRAY_LEN(modes); i++)
        known = known || !strcmp(mode, modes[i]);
    if (!known || (target && strcmp(target, "events") && strcmp(target, "token"))) {
        reply_set(r, 400, json_pack("{s:s}", "error", "unknown mode or target"), "bad control");
        return;
    }
    pthread_mutex_lock(&S.lock);
    if (reset) {
        snprintf(S.events_mode, sizeof S.events_mode, "ok");
        snprintf(S.token_mode, sizeof S.token_mode, "ok");
        S.delay_ms = S.token_delay_ms = 0;
        S.expires_in = 3600;
    }
    if (mode)
        snprintf(target && !strcmp(target, "token") ? S.token_mode : S.events_mode,
                 sizeof S.token_mode, "%s", mode);
    if (revoke) {
        for (size_t i = 0; i < S.ntokens; i++)
            free(S.tokens[i].text);
        S.ntokens = 0;
    }
    if (delay) S.delay_ms = (int)strtol(delay, NULL, 10);
    if (tdelay) S.token_delay_ms = (int)strtol(tdelay, NULL, 10);
    if (ttl) S.expires_in = strtol(ttl, NULL, 10);
    pthread_mutex_unlock(&S.lock);
    reply_set(r, 200, json_pack("{s:b}", "ok", 1), "ok");
}

/* --- MHD plumbing ------------------------------------------------------------------------ */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    struct req *q = xcalloc(1, sizeof *q);
    q->raw_uri = xstrdup(uri);
    buf_init(&q->body, BODY_MAX);
    return q;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct req *q = *req_cls;
    if (!q) return;
    free(q->raw_uri);
    buf_free(&q->body);
    free(q);
    *req_cls = NULL;
}

static void log_request(struct MHD_Connection *conn, const char *method, const char *path,
                        const struct req *q, struct reply *r)
{
    json_t *line = r->extra;
    r->extra = NULL;
    static const char *const headers[][2] = {{"content_type", "Content-Type"},
                                             {"authorization", "Authorization"},
                                             {"accept", "Accept"},
                                             {"expect", "Expect"},
                                             {"user_agent", "User-Agent"}};
    for (size_t i = 0; i < ARRAY_LEN(headers); i++) {
        const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, headers[i][1]);
        json_object_set_new(line, headers[i][0], v ? json_string(v) : json_null());
    }
    json_object_set_new(line, "method", json_string(method));
    json_object_set_new(line, "uri", json_string(q->raw_uri));
    json_object_set_new(line, "path", json_string(path));
    json_t *body = json_stringn(q->body.p ? q->body.p : "", q->body.len);
    json_object_set_new(line, "body", body ? body : json_string("(not UTF-8)"));
    json_object_set_new(line, "verdict", json_string(r->verdict ? r->verdict : "?"));
    json_object_set_new(line, "status", r->hang ? json_null() : json_integer(r->status));
    pthread_mutex_lock(&S.lock);
    json_object_set_new(line, "seq", json_integer((json_int_t)++S.seq));
    char *text = json_dumps(line, JSON_COMPACT);
    if (text) {
        fputs(text, S.log);
        fputc('\n', S.log);
        fflush(S.log);
    }
    pthread_mutex_unlock(&S.lock);
    free(text);
    json_decref(line);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **req_cls)
{
    (void)cls;
    (void)version;
    struct req *q = *req_cls;
    if (!q) return MHD_NO;
    if (!q->started) {
        /* headers only: ask for the body */
        q->started = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (buf_append(&q->body, upload_data, *upload_size) != BR_OK) q->too_large = true;
        *upload_size = 0;
        return MHD_YES;
    }
    struct reply r = {.extra = json_object()};
    bool control = !strcmp(url, "/control");
    if (q->too_large)
        reply_set(&r, 413, json_pack("{s:s}", "error", "body too large"), "body too large");
    else if (control)
        on_control(conn, &r);
    else if (!strcmp(url, "/token"))
        on_token(conn, method, q, &r);
    else if (!strncmp(q->raw_uri, EVENTS_PREFIX, strlen(EVENTS_PREFIX)))
        on_events(conn, method, q, &r);
    else
        reply_set(&r, 404, api_error(404, "notFound", "Not Found", "NOT_FOUND"), "unknown path");
    if (control) {
        json_decref(r.extra);
        r.extra = NULL;
    } else {
        log_request(conn, method, url, q, &r);
    }
    enum MHD_Result ret = MHD_NO;
    if (r.hang) {
        /* never answer: the client's own bound must end the wait */
        pause_ms(HANG_MS);
    } else {
        const char *text = r.body ? r.body : "";
        struct MHD_Response *resp =
            MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
        if (resp) {
            if (r.status != 204)
                MHD_add_response_header(resp, "Content-Type",
                                        r.content_type ? r.content_type
                                                       : "application/json; charset=UTF-8");
            ret = MHD_queue_response(conn, r.status, resp);
            MHD_destroy_response(resp);
        }
    }
    free(r.body);
    free(r.verdict);
    json_decref(r.extra);
    return ret;
}

/* --- main ------------------------------------------------------------------------------- */

static int usage(void)
{
    fputs("usage: gcal_double --public-key PEM --client-email E --log FILE [--calendar-id ID]\n"
          "                   [--subject USER] [--port N]\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *pub_path = NULL, *log_path = NULL;
    uint16_t port = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (!strcmp(argv[i], "--public-key"))
            pub_path = argv[++i];
        else if (!strcmp(argv[i], "--client-email"))
            S.client_email = argv[++i];
        else if (!strcmp(argv[i], "--log"))
            log_path = argv[++i];
        else if (!strcmp(argv[i], "--calendar-id"))
            S.calendar_id = argv[++i];
        else if (!strcmp(argv[i], "--subject"))
            S.subject = argv[++i];
        else if (!strcmp(argv[i], "--port"))
            port = (uint16_t)strtoul(argv[++i], NULL, 10);
        else
            return usage();
    }
    if (!pub_path || !S.client_email || !log_path) return usage();
    if (sodium_init() < 0) {
        fputs("gcal_double: libsodium failed to initialise\n", stderr);
        return 1;
    }
    FILE *pf = fopen(pub_path, "r");
    S.pub = pf ? PEM_read_PUBKEY(pf, NULL, NULL, NULL) : NULL;
    if (pf) fclose(pf);
    if (!S.pub) {
        fprintf(stderr, "gcal_double: cannot read a public key from %s\n", pub_path);
        return 1;
    }
    S.log = fopen(log_path, "a");
    if (!S.log) {
        fprintf(stderr, "gcal_double: cannot open %s: %s\n", log_path, strerror(errno));
        EVP_PKEY_free(S.pub);
        return 1;
    }
    pthread_mutex_init(&S.lock, NULL);
    pthread_cond_init(&S.wake, NULL);
    snprintf(S.events_mode, sizeof S.events_mode, "ok");
    snprintf(S.token_mode, sizeof S.token_mode, "ok");
    S.expires_in = 3600;

    /* SIGTERM and SIGINT are taken by sigwait() below; MHD's threads
     * inherit the mask */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC | MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    int rc = 0;
    if (!info || !info->port) {
        fputs("gcal_double: cannot listen on 127.0.0.1\n", stderr);
        rc = 1;
    } else {
        snprintf(S.token_url, sizeof S.token_url, "http://127.0.0.1:%u/token",
                 (unsigned)info->port);
        printf("port %u\n", (unsigned)info->port);
        fflush(stdout);
        int sig = 0;
        sigwait(&stop, &sig);
    }
    pthread_mutex_lock(&S.lock);
    S.stopping = true;
    pthread_cond_broadcast(&S.wake);
    pthread_mutex_unlock(&S.lock);
    if (d) MHD_stop_daemon(d);
    for (size_t i = 0; i < S.ntokens; i++)
        free(S.tokens[i].text);
    free(S.tokens);
    for (size_t i = 0; i < S.nevents; i++)
        free(S.events[i].id);
    free(S.events);
    fclose(S.log);
    EVP_PKEY_free(S.pub);
    pthread_cond_destroy(&S.wake);
    pthread_mutex_destroy(&S.lock);
    return rc;
}
