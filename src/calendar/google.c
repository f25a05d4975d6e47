/*
 * google.c - the Google Calendar adapter of the calendar port (see google.h
 * and docs/google-calendar.md).
 *
 * A booking's event costs one HTTP call (events.insert) while the cached
 * access token lasts, and two when it must be renewed first (the OAuth 2.0
 * service-account flow: an RS256 JWT signed with the key file's private key
 * is exchanged at token_uri for an access token). The token is shared by
 * every request thread behind one mutex that is held while a token is
 * fetched, so that a burst of bookings after start-up asks Google once; the
 * others wait, but never past their own deadline (pthread_mutex_timedlock).
 * Every attempt, token included, runs against one deadline computed when it
 * starts: each curl call gets only the time that is left. Nothing secret
 * (private key, assertion, access token) ever reaches an error detail or the
 * log; the details carry HTTP statuses, curl's errors and Google's own short
 * error message.
 *
 * Attendees. An ordinary service account (no Google Workspace domain-wide
 * delegation) may create events but not invite anyone: Google answers an
 * events.insert that carries attendees with 403, reason
 * forbiddenForServiceAccounts. The adapter then sends the same event once
 * more without attendees, within the same deadline, and keeps that event's
 * id; it remembers the refusal (an atomic flag) so that later bookings go
 * straight to the attendee-less request, and explains it in one warn line,
 * once per process. With cfg->google_subject (BARBERIA_GOOGLE_SUBJECT) the
 * assertion carries "sub": the service account acts for that Workspace user
 * and, given domain-wide delegation, may invite; then the refusal is not
 * remembered (every booking tries to invite first), but still explained
 * once.
 */
#include "google.h"
#include "../util/cond.h"
#include "../config.h"
#include "../util/buf.h"
#include "../util/log.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define GCAL_SCOPE      "https://www.googleapis.com/auth/calendar"
#define GRANT_TYPE      "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define JWT_HEADER      "{\"alg\":\"RS256\",\"typ\":\"JWT\"}"
#define ASSERTION_TTL_S 3600
#define KEY_FILE_MAX    (64 * 1024)
#define RESPONSE_MAX    (64 * 1024)
#define TOKEN_MAX       4096
#define EVENT_ID_MAX    1024
#define REASON_MAX      160
#define SUBJECT_MAX     254
/* Google's error reason for attendees sent by a service account without
 * domain-wide delegation, and the start of its message */
#define NO_INVITE_REASON  "forbiddenForServiceAccounts"
#define NO_INVITE_MESSAGE "Service accounts cannot invite attendees"
/* a cached token is renewed once less than this is left of it */
#define TOKEN_MARGIN_MS 60000
/* Google's tokens last an hour; a longer claim is not believed */
#define TOKEN_TTL_MAX_S 86400
/* an answer that asks to be tried again later: the first pause (doubled,
 * with jitter, each time), the time a try needs to be worth it, and how
 * many tries at most, all within the attempt's one deadline */
#define RETRY_FIRST_MS 250
#define RETRY_MIN_LEFT 500
#define TRIES_MAX      4

struct gcal {
    struct calendar base; /* first: the port hands &base back to us */
    char *client_email;
    char *subject; /* NULL: the service account acts as itself (no "sub") */
    char *token_uri;
    char *events_url; /* <api>/calendars/<calendar id, percent-encoded>/events */
    EVP_PKEY *key;
    int64_t timeout_ms;
    bool lock_ready;
    /* Guards token and token_expiry, and is held while a token is fetched,
     * so that concurrent bookings do not each ask for one. */
    pthread_mutex_t lock;
    char *token;          /* NULL: none cached */
    int64_t token_expiry; /* clock_mono_ms() at which the token stops working */
    /* Google refused attendees from this account (forbiddenForServiceAccounts):
     * events go without them from now on. Only ever set without a subject. */
    atomic_bool no_invites;
    /* the warn line explaining events without attendees has been logged */
    atomic_bool explained;
};

/* One HTTP exchange with Google. */
struct call {
    const char *what;   /* names the call in error details: "token request" */
    const char *method; /* "POST" or "DELETE" */
    const char *url;
    struct curl_slist *headers; /* borrowed */
    const char *body;           /* NULL: none */
    size_t body_len;
    long status;     /* OUT: the HTTP status */
    struct buf resp; /* OUT: the answer's body, capped at RESPONSE_MAX */
    bool too_large;  /* OUT: the answer passed the cap */
};

/* RFC 3986 percent-encoding of everything but the unreserved characters:
 * safe both for a path segment (a calendar id holds '@', maybe '#' or '/')
 * and for a form value. Caller frees. */
static char *pct_encode(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = xmalloc(3 * strlen(s) + 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        bool keep = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
        if (keep) {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}

/* base64url without padding, as JWTs want it. Caller frees. */
static char *b64url(const void *bin, size_t n)
{
    size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    char *out = xmalloc(cap);
    sodium_bin2base64(out, cap, bin, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return out;
}

/* True for a non-empty run of visible ASCII: what may go into a header line
 * or a URL segment without smuggling anything else in. */
static bool visible_ascii(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n >= max || (unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f) return false;
    return n > 0;
}

/* The one-line log detail a failed call may carry: Google's own short error
 * text (OAuth's error/error_description, or the API's error.message),
 * reduced to printable ASCII and capped, preceded by ": ". Nothing else of
 * the answer is ever echoed. out is "" when there is no such text. */
static void error_reason(const struct buf *body, char *out, size_t n)
{
    out[0] = '\0';
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    const json_t *e = json_object_get(j, "error");
    const char *text = json_string_value(json_object_get(e, "message"));
    const char *code = json_string_value(e);
    const char *desc = json_string_value(json_object_get(j, "error_description"));
    char raw[REASON_MAX + 1];
    if (text)
        snprintf(raw, sizeof raw, "%s", text);
    else if (code)
        snprintf(raw, sizeof raw, "%s%s%s", code, desc ? " " : "", desc ? desc : "");
    else
        raw[0] = '\0';
    json_decref(j);
    if (!raw[0] || n < 3) return;
    size_t o = 0;
    out[o++] = ':';
    out[o++] = ' ';
    for (const unsigned char *p = (const unsigned char *)raw; *p && o + 1 < n; p++)
        out[o++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    out[o] = '\0';
}

/* --- HTTP --------------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct call *c = ud;
    size_t n = size * nmemb;
    if (buf_append(&c->resp, data, n) == BR_OK) return n;
    /* less than n makes curl fail the transfer: the cap holds */
    c->too_large = true;
    return 0;
}

#define SETOPT(h, opt, val)                                                                        \
    do {                                                                                           \
        if (cc == CURLE_OK) cc = curl_easy_setopt(h, opt, val);                                    \
    } while (0)

/* Performs c within what is left until deadline. A transport failure is
 * BR_TIMEOUT or BR_UPSTREAM; any HTTP status is BR_OK (the caller judges
 * it). c->resp must be initialised by the caller, who frees it. */
static br_err http_call(int64_t deadline, struct call *c)
{
    int64_t left = deadline - clock_mono_ms();
    if (left <= 0) return err_set(BR_TIMEOUT, "%s: out of time before it started", c->what);
    CURL *h = curl_easy_init();
    if (!h) return err_set(BR_INTERNAL, "%s: cannot create a curl handle", c->what);
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';
    CURLcode cc = CURLE_OK;
    SETOPT(h, CURLOPT_URL, c->url);
    SETOPT(h, CURLOPT_ERRORBUFFER, errbuf);
    /* request threads must never get SIGALRM from curl's resolver */
    SETOPT(h, CURLOPT_NOSIGNAL, 1L);
    SETOPT(h, CURLOPT_TIMEOUT_MS, (long)left);
    SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
#if LIBCURL_VERSION_NUM >= 0x075500
    SETOPT(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SETOPT(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SETOPT(h, CURLOPT_USERAGENT, "barberia/" BARBERIA_VERSION);
    SETOPT(h, CURLOPT_HTTPHEADER, c->headers);
    SETOPT(h, CURLOPT_WRITEFUNCTION, on_body);
    SETOPT(h, CURLOPT_WRITEDATA, c);
    if (c->body) {
        SETOPT(h, CURLOPT_POSTFIELDS, c->body);
        SETOPT(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
    }
    if (strcmp(c->method, "POST") != 0) SETOPT(h, CURLOPT_CUSTOMREQUEST, c->method);
    if (cc != CURLE_OK) {
        curl_easy_cleanup(h);
        return err_set(BR_INTERNAL, "%s: %s", c->what, curl_easy_strerror(cc));
    }
    cc = curl_easy_perform(h);
    /* the detail must stay one log line */
    errbuf[strcspn(errbuf, "\r\n")] = '\0';
    br_err rc = BR_OK;
    if (cc == CURLE_OPERATION_TIMEDOUT)
        rc = err_set(BR_TIMEOUT, "%s: no answer within the %lld ms left of the bound (%s)", c->what,
                     (long long)left, errbuf[0] ? errbuf : curl_easy_strerror(cc));
    else if (cc == CURLE_WRITE_ERROR && c->too_large)
        rc = err_set(BR_UPSTREAM, "%s: answer larger than %d KiB", c->what, RESPONSE_MAX / 1024);
    else if (cc != CURLE_OK)
        rc = err_set(BR_UPSTREAM, "%s: %s", c->what, errbuf[0] ? errbuf : curl_easy_strerror(cc));
    if (!rc && curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status) != CURLE_OK)
        rc = err_set(BR_UPSTREAM, "%s: no HTTP status", c->what);
    curl_easy_cleanup(h);
    return rc;
}

/* --- the access token ---------------------------------------------------------- */

static br_err rs256_sign(EVP_PKEY *key, const char *data, unsigned char **sig, size_t *siglen)
{
    *sig = NULL;
    *siglen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    size_t n = 0;
    bool ok = ctx && EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
              EVP_DigestSign(ctx, NULL, &n, (const unsigned char *)data, strlen(data)) == 1;
    unsigned char *out = ok ? xmalloc(n) : NULL;
    ok = ok && EVP_DigestSign(ctx, out, &n, (const unsigned char *)data, strlen(data)) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        char why[256];
        ERR_error_string_n(ERR_get_error(), why, sizeof why);
        /* OpenSSL's error queue is per thread: leave nothing behind */
        ERR_clear_error();
        free(out);
        return err_set(BR_INTERNAL, "signing the token assertion failed: %s", why);
    }
    *sig = out;
    *siglen = n;
    return BR_OK;
}

/* The signed JWT assertion of the service-account flow. OUT: *out (caller
 * wipes and frees). */
static br_err make_assertion(const struct gcal *g, char **out)
{
    *out = NULL;
    json_int_t iat = (json_int_t)time(NULL);
    json_t *claims =
        json_pack("{s:s, s:s, s:s, s:I, s:I}", "iss", g->client_email, "scope", GCAL_SCOPE, "aud",
                  g->token_uri, "iat", iat, "exp", iat + ASSERTION_TTL_S);
    /* domain-wide delegation: the Workspace user the account acts for */
    bool bad =
        !claims || (g->subject && json_object_set_new(claims, "sub", json_string(g->subject)) != 0);
    char *claims_text = !bad ? json_dumps(claims, JSON_COMPACT) : NULL;
    json_decref(claims);
    if (!claims_text) return err_set(BR_INTERNAL, "cannot build the token claims");
    char *h64 = b64url(JWT_HEADER, strlen(JWT_HEADER));
    char *c64 = b64url(claims_text, strlen(claims_text));
    char *signing_input = xasprintf("%s.%s", h64, c64);
    free(claims_text);
    free(h64);
    free(c64);
    unsigned char *sig = NULL;
    size_t siglen = 0;
    br_err rc = rs256_sign(g->key, signing_input, &sig, &siglen);
    if (!rc) {
        char *s64 = b64url(sig, siglen);
        *out = xasprintf("%s.%s", signing_input, s64);
        free(s64);
    }
    free(sig);
    free(signing_input);
    return rc;
}

/* Reads an access token out of the token endpoint's answer. OUT: *token
 * (caller wipes and frees), *ttl_s. */
static br_err parse_token(const struct buf *resp, char **token, int64_t *ttl_s)
{
    *token = NULL;
    json_t *j = json_loadb(resp->p ? resp->p : "", resp->len, 0, NULL);
    const char *tok = json_string_value(json_object_get(j, "access_token"));
    const char *type = json_string_value(json_object_get(j, "token_type"));
    const json_t *exp = json_object_get(j, "expires_in");
    br_err rc = BR_OK;
    if (!json_is_object(j))
        rc = err_set(BR_UPSTREAM, "token request: the answer is not a JSON object");
    else if (!tok || !visible_ascii(tok, TOKEN_MAX))
        rc = err_set(BR_UPSTREAM, "token request: the answer has no usable access_token");
    else if (type && strcasecmp(type, "Bearer") != 0)
        rc = err_set(BR_UPSTREAM, "token request: unexpected token_type");
    else if (exp && (!json_is_number(exp) || json_number_value(exp) <= 0))
        rc = err_set(BR_UPSTREAM, "token request: unusable expires_in");
    if (!rc) {
        /* OAuth makes expires_in optional; Google always sends it */
        double ttl = exp ? json_number_value(exp) : ASSERTION_TTL_S;
        *ttl_s = ttl > TOKEN_TTL_MAX_S ? TOKEN_TTL_MAX_S : (int64_t)ttl;
        *token = xstrdup(tok);
    }
    json_decref(j);
    return rc;
}

/* Asks token_uri for a fresh access token and caches it. Caller holds
 * g->lock. */
static br_err fetch_token(struct gcal *g, int64_t deadline)
{
    char *assertion = NULL;
    br_err rc = make_assertion(g, &assertion);
    if (rc) return rc;
    char *grant = pct_encode(GRANT_TYPE);
    char *encoded = pct_encode(assertion);
    char *form = xasprintf("grant_type=%s&assertion=%s", grant, encoded);
    free(grant);
    wipe_free(encoded);
    wipe_free(assertion);

    struct curl_slist *hdrs = NULL, *h;
    static const char *const lines[] = {"Content-Type: application/x-www-form-urlencoded",
                                        "Accept: application/json",
                                        /* no 100-continue round trip */
                                        "Expect:"};
    for (size_t i = 0; i < ARRAY_LEN(lines) && !rc; i++) {
        h = curl_slist_append(hdrs, lines[i]);
        if (!h)
            rc = err_set(BR_INTERNAL, "token request: out of memory");
        else
            hdrs = h;
    }
    struct call c = {.what = "token request",
                     .method = "POST",
                     .url = g->token_uri,
                     .headers = hdrs,
                     .body = form,
                     .body_len = strlen(form)};
    buf_init(&c.resp, RESPONSE_MAX);
    /* the token lives from when it was asked for, not from when it came */
    int64_t asked = clock_mono_ms();
    if (!rc) rc = http_call(deadline, &c);
    wipe_free(form);
    curl_slist_free_all(hdrs);
    if (!rc && (c.status < 200 || c.status > 299)) {
        char why[REASON_MAX + 4];
        error_reason(&c.resp, why, sizeof why);
        rc = err_set(BR_UPSTREAM, "token request: HTTP %ld%s", c.status, why);
    }
    char *token = NULL;
    int64_t ttl_s = 0;
    if (!rc) rc = parse_token(&c.resp, &token, &ttl_s);
    if (!rc) {
        wipe_free(g->token);
        g->token = token;
        g->token_expiry = asked + ttl_s * 1000;
    }
    if (c.resp.p) sodium_memzero(c.resp.p, c.resp.len);
    buf_free(&c.resp);
    return rc;
}

/* Takes g->lock, waiting at most until deadline (once, without waiting,
 * when it has passed). */
static br_err lock_until(struct gcal *g, int64_t deadline)
{
    int64_t left = deadline - clock_mono_ms();
    if (left < 0) left = 0;
    /* pthread_mutex_timedlock wants wall-clock time */
    struct timespec at = deadline_in(CLOCK_REALTIME, left);
    int e = pthread_mutex_timedlock(&g->lock, &at);
    if (e == ETIMEDOUT)
        return err_set(BR_TIMEOUT, "token request: out of time waiting for another "
                                   "request that is fetching the token");
    if (e) return err_set(BR_INTERNAL, "token lock: %s", strerror(e));
    return BR_OK;
}

/* A usable access token: the cached one, or a new one when it is missing or
 * about to expire. OUT: *token, a copy (caller wipes and frees). */
static br_err get_token(struct gcal *g, int64_t deadline, char **token)
{
    *token = NULL;
    br_err rc = lock_until(g, deadline);
    if (rc) return rc;
    if (!g->token || g->token_expiry - clock_mono_ms() < TOKEN_MARGIN_MS) {
        rc = fetch_token(g, deadline);
        /* a failed early renewal is no reason to drop a token that works */
        if (rc && g->token && g->token_expiry - clock_mono_ms() > 0) rc = BR_OK;
    }
    if (!rc) *token = xstrdup(g->token);
    pthread_mutex_unlock(&g->lock);
    return rc;
}

/* Drops the cached token when it is still the one Google just refused, so
 * that the next attempt fetches a fresh one. Best-effort within deadline:
 * when the lock stays busy, its holder is fetching a new token anyway. */
static void forget_token(struct gcal *g, int64_t deadline, const char *refused)
{
    if (lock_until(g, deadline) != BR_OK) return;
    if (g->token && !strcmp(g->token, refused)) {
        wipe_free(g->token);
        g->token = NULL;
    }
    pthread_mutex_unlock(&g->lock);
}

/* --- the Calendar API ------------------------------------------------------------- */

/* One try of c with token, extra_header (may be NULL) and an Accept
 * header. */
static br_err call_with_token(int64_t deadline, struct call *c, const char *token,
                              const char *extra_header)
{
    br_err rc = BR_OK;
    char *auth = xasprintf("Authorization: Bearer %s", token);
    const char *lines[] = {auth, "Accept: application/json", "Expect:", extra_header};
    struct curl_slist *hdrs = NULL, *h;
    for (size_t i = 0; i < ARRAY_LEN(lines) && !rc; i++) {
        if (!lines[i]) continue;
        h = curl_slist_append(hdrs, lines[i]);
        if (!h)
            rc = err_set(BR_INTERNAL, "%s: out of memory", c->what);
        else
            hdrs = h;
    }
    wipe_free(auth);
    c->headers = hdrs;
    if (!rc) rc = http_call(deadline, c);
    c->headers = NULL;
    curl_slist_free_all(hdrs);
    /* a refusal may quote what it was sent: its text never holds the token */
    if (!rc && c->resp.p && (c->status < 200 || c->status > 299)) {
        secret_scrub(c->resp.p, c->resp.len + 1, token);
        c->resp.len = strlen(c->resp.p);
    }
    return rc;
}

/* Performs c with the access token. A 401 (a token revoked, or expired
 * while the cached one looked good, e.g. across a suspend that stopped the
 * monotonic clock) drops it, and c is tried once more with a fresh one
 * within the same deadline, as Google asks: nothing was done with the
 * refused token. */
static br_err authorized_call(struct gcal *g, int64_t deadline, struct call *c,
                              const char *extra_header)
{
    br_err rc = BR_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        char *token = NULL;
        /* -1: no token, the request never left (see try_again) */
        c->status = -1;
        rc = get_token(g, deadline, &token);
        if (rc) return rc;
        c->status = 0;
        c->too_large = false;
        buf_reset(&c->resp);
        rc = call_with_token(deadline, c, token, extra_header);
        bool refused = !rc && c->status == 401;
        if (refused) forget_token(g, deadline, token);
        wipe_free(token);
        if (!refused) break;
    }
    return rc;
}

/* True when one of Google's error reasons in body (error.errors[].reason)
 * is a rate limit: rateLimitExceeded or userRateLimitExceeded. */
static bool rate_limited(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    size_t i;
    const json_t *item;
    bool yes = false;
    json_array_foreach(json_object_get(json_object_get(j, "error"), "errors"), i, item)
    {
        const char *reason = json_string_value(json_object_get(item, "reason"));
        yes = yes || (reason && (!strcmp(reason, "rateLimitExceeded") ||
                                 !strcmp(reason, "userRateLimitExceeded")));
    }
    json_decref(j);
    return yes;
}

/* True when c's outcome (rc, c->status) is one Google asks to be tried
 * again with backoff: a 429, or a 403 for a rate limit (nothing was done);
 * and, when Google may see the request twice without harm (idempotent:
 * events.patch, events.delete), a 5xx or a failed transport too. A
 * timeout never is (it used up the deadline), nor a failed token request
 * (it has a verdict of its own). */
static bool try_again(br_err rc, const struct call *c, bool idempotent)
{
    if (rc) return idempotent && rc == BR_UPSTREAM && !c->too_large && c->status == 0;
    if (c->status == 429 || (c->status == 403 && rate_limited(&c->resp))) return true;
    return idempotent && c->status >= 500 && c->status <= 599;
}

/* authorized_call, tried again with exponential backoff and jitter while
 * Google asks for it (see try_again) and the deadline leaves a try its
 * chance. */
static br_err call_retrying(struct gcal *g, int64_t deadline, struct call *c,
                            const char *extra_header, bool idempotent)
{
    int64_t pause = RETRY_FIRST_MS;
    br_err rc = BR_OK;
    for (int tries = 1;; tries++) {
        rc = authorized_call(g, deadline, c, extra_header);
        if (tries >= TRIES_MAX || !try_again(rc, c, idempotent)) break;
        int64_t wait = pause / 2 + (int64_t)randombytes_uniform((uint32_t)(pause / 2 + 1));
        if (deadline - clock_mono_ms() < wait + RETRY_MIN_LEFT) break;
        struct timespec ts = {(time_t)(wait / 1000), (long)(wait % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        pause *= 2;
    }
    return rc;
}

/* The events.insert body, with or without the attendees member. Caller
 * frees; NULL when a text is not UTF-8. */
static char *event_json(const struct cal_event *ev, bool with_attendees)
{
    json_t *att = with_attendees ? json_array() : NULL;
    if (att && ev->attendee_email && *ev->attendee_email &&
        json_array_append_new(att, json_pack("{s:s}", "email", ev->attendee_email)) != 0) {
        json_decref(att);
        att = NULL;
    }
    /* json_object_set_new() takes its value even when it fails (and
     * refuses a NULL one), so every call runs and nothing leaks */
    json_t *o = json_object();
    int bad = 0;
    bad |= json_object_set_new(o, "summary", json_string(ev->summary));
    bad |= json_object_set_new(o, "description", json_string(ev->description));
    bad |= json_object_set_new(o, "start", json_pack("{s:s}", "dateTime", ev->start));
    bad |= json_object_set_new(o, "end", json_pack("{s:s}", "dateTime", ev->end));
    if (with_attendees) bad |= json_object_set_new(o, "attendees", att);
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

/* True when a refusal's reason (one of error.errors[], or a
 * google.rpc.ErrorInfo in error.details[]) is forbiddenForServiceAccounts. */
static bool has_no_invite_reason(const json_t *list)
{
    size_t i;
    const json_t *item;
    json_array_foreach(list, i, item)
    {
        const char *reason = json_string_value(json_object_get(item, "reason"));
        if (reason && !strcmp(reason, NO_INVITE_REASON)) return true;
    }
    return false;
}

/* True when an events.insert answer's body is Google's refusal of
 * attendees from a service account without domain-wide delegation: the
 * Calendar API's {"error": {"errors": [{"reason":
 * "forbiddenForServiceAccounts", ...}], "code": 403, "message": ...}}, or
 * the newer shape with error.status PERMISSION_DENIED and the same message
 * or an ErrorInfo reason. Any other 403 is not. */
static bool refuses_attendees(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    const json_t *e = json_object_get(j, "error");
    bool yes = has_no_invite_reason(json_object_get(e, "errors")) ||
               has_no_invite_reason(json_object_get(e, "details"));
    if (!yes) {
        const char *status = json_string_value(json_object_get(e, "status"));
        const char *message = json_string_value(json_object_get(e, "message"));
        yes = message && !strncmp(message, NO_INVITE_MESSAGE, strlen(NO_INVITE_MESSAGE)) &&
              (!status || !strcmp(status, "PERMISSION_DENIED"));
    }
    json_decref(j);
    return yes;
}

/* One events.insert within deadline, with or without the attendees. OUT:
 * *event_id (caller frees) on success; *no_invites set when Google refused
 * it for its attendees (see refuses_attendees). */
static br_err insert_event(struct gcal *g, int64_t deadline, const struct cal_event *ev,
                           bool with_attendees, char **event_id, bool *no_invites)
{
    *event_id = NULL;
    *no_invites = false;
    const char *what = with_attendees ? "events.insert" : "events.insert without attendees";
    char *body = event_json(ev, with_attendees);
    if (!body) return err_set(BR_INTERNAL, "%s: cannot build the event", what);
    struct call c = {.what = what,
                     .method = "POST",
                     .url = g->events_url,
                     .body = body,
                     .body_len = strlen(body)};
    buf_init(&c.resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, &c, "Content-Type: application/json", false);
    free(body);
    if (!rc && (c.status < 200 || c.status > 299)) {
        char why[REASON_MAX + 4];
        error_reason(&c.resp, why, sizeof why);
        rc = err_set(BR_UPSTREAM, "%s: HTTP %ld%s", what, c.status, why);
        *no_invites = with_attendees && c.status == 403 && refuses_attendees(&c.resp);
    }
    json_t *j = NULL;
    if (!rc) {
        j = json_loadb(c.resp.p ? c.resp.p : "", c.resp.len, 0, NULL);
        if (!json_is_object(j))
            rc = err_set(BR_UPSTREAM, "%s: HTTP %ld with a body that is not a JSON object", what,
                         c.status);
    }
    const char *id = json_string_value(json_object_get(j, "id"));
    if (!rc && (!id || !visible_ascii(id, EVENT_ID_MAX)))
        rc = err_set(BR_UPSTREAM, "%s: the answer has no usable event id", what);
    if (!rc) *event_id = xstrdup(id);
    json_decref(j);
    buf_free(&c.resp);
    return rc;
}

/* The one warn line (per process) saying why clients are not invited. */
static void explain_no_invites(struct gcal *g)
{
    if (atomic_exchange(&g->explained, true)) return;
    if (!g->subject)
        log_warn("calendar: the client is not invited to the event: Google refuses attendees "
                 "from service account %s (" NO_INVITE_REASON "), so events are created "
                 "without them from now on; inviting clients needs a Google Workspace "
                 "domain-wide delegation and BARBERIA_GOOGLE_SUBJECT set to the user to act "
                 "for (see docs/google-calendar.md)",
                 g->client_email);
    else
        log_warn("calendar: the client is not invited to the event: Google refuses attendees "
                 "from service account %s acting for %s (" NO_INVITE_REASON "), so the event "
                 "was created without them; check the domain-wide delegation of the account's "
                 "client id for the scope " GCAL_SCOPE " in the Workspace admin console "
                 "(logged once; every booking still tries to invite first)",
                 g->client_email, g->subject);
}

/* Creates ev within deadline (see gcal_create). */
static br_err create_until(struct gcal *g, int64_t deadline, const struct cal_event *ev,
                           char **event_id)
{
    *event_id = NULL;
    /* without a subject, a refusal is final: skip the doomed attempt */
    bool invite = g->subject || !atomic_load(&g->no_invites);
    bool refused = false;
    br_err rc = insert_event(g, deadline, ev, invite, event_id, &refused);
    if (rc && refused) {
        if (!g->subject) atomic_store(&g->no_invites, true);
        invite = false;
        /* once more without attendees, within what is left of the bound */
        rc = insert_event(g, deadline, ev, false, event_id, &refused);
    }
    if (!rc && !invite) explain_no_invites(g);
    return rc;
}

static br_err gcal_create(struct calendar *cal, const struct cal_event *ev, char **event_id)
{
    struct gcal *g = (struct gcal *)cal;
    return create_until(g, clock_mono_ms() + g->timeout_ms, ev, event_id);
}

static br_err gcal_delete(struct calendar *cal, const char *event_id)
{
    struct gcal *g = (struct gcal *)cal;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    char *id = pct_encode(event_id);
    char *url = xasprintf("%s/%s", g->events_url, id);
    free(id);
    struct call c = {.what = "events.delete", .method = "DELETE", .url = url};
    buf_init(&c.resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, &c, NULL, true);
    /* gone already (404, 410) is as good as deleted */
    if (!rc && c.status != 200 && c.status != 204 && c.status != 404 && c.status != 410) {
        char why[REASON_MAX + 4];
        error_reason(&c.resp, why, sizeof why);
        rc = err_set(BR_UPSTREAM, "events.delete: HTTP %ld%s", c.status, why);
    }
    buf_free(&c.resp);
    free(url);
    return rc;
}

/* True when an event in Google's answer has status "cancelled": deleted
 * (in the calendar's own pages, or through the API). */
static bool event_cancelled(const struct buf *body)
{
    json_t *j = json_loadb(body->p ? body->p : "", body->len, 0, NULL);
    const char *status = json_string_value(json_object_get(j, "status"));
    bool yes = status && !strcmp(status, "cancelled");
    json_decref(j);
    return yes;
}

/* events.patch of event_id with the JSON body, tried again as a patch may
 * be, until deadline. OUT: *c, its answer to judge (buf_free(&c->resp)). */
static br_err patch_event(struct gcal *g, int64_t deadline, const char *event_id, const char *body,
                          struct call *c)
{
    char *id = pct_encode(event_id);
    char *url = xasprintf("%s/%s", g->events_url, id);
    free(id);
    *c = (struct call){.what = "events.patch",
                       .method = "PATCH",
                       .url = url,
                       .body = body,
                       .body_len = strlen(body)};
    buf_init(&c->resp, RESPONSE_MAX);
    br_err rc = call_retrying(g, deadline, c, "Content-Type: application/json", true);
    c->url = NULL;
    free(url);
    return rc;
}

/* events.patch of a rescheduled appointment: only its start and end; an
 * event that is gone is made anew, within the same bound. */
static br_err gcal_move(struct calendar *cal, const char *event_id, const struct cal_event *ev,
                        char **made)
{
    struct gcal *g = (struct gcal *)cal;
    *made = NULL;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    json_t *o =
        json_pack("{s:{s:s}, s:{s:s}}", "start", "dateTime", ev->start, "end", "dateTime", ev->end);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!body) return err_set(BR_INTERNAL, "events.patch: cannot build the change");
    struct call c;
    br_err rc = patch_event(g, deadline, event_id, body, &c);
    if (!rc && (c.status == 404 || c.status == 410)) {
        rc = err_set(BR_NOTFOUND, "events.patch: HTTP %ld: the event is gone", c.status);
    } else if (!rc && (c.status < 200 || c.status > 299)) {
        char why[REASON_MAX + 4];
        error_reason(&c.resp, why, sizeof why);
        rc = err_set(BR_UPSTREAM, "events.patch: HTTP %ld%s", c.status, why);
    } else if (!rc && event_cancelled(&c.resp)) {
        /* Google keeps a deleted event (status "cancelled") and lets it be
         * patched: moved, it stays deleted */
        rc = err_set(BR_NOTFOUND, "events.patch: HTTP %ld: the event was deleted", c.status);
    }
    buf_free(&c.resp);
    free(body);
    if (rc == BR_NOTFOUND) {
        log_info("calendar: event %s is gone from the calendar (%s): making a new one", event_id,
                 err_msg());
        rc = create_until(g, deadline, ev, made);
    }
    return rc;
}

/* events.patch of the title, description and attendees (see
 * rewrite_event in calendar.h). */
static br_err gcal_rewrite(struct calendar *cal, const char *event_id, const struct cal_event *ev)
{
    struct gcal *g = (struct gcal *)cal;
    int64_t deadline = clock_mono_ms() + g->timeout_ms;
    json_t *att = json_array();
    if (ev->attendee_email && *ev->attendee_email)
        json_array_append_new(att, json_pack("{s:s}", "email", ev->attendee_email));
    json_t *o = json_object();
    int bad = 0;
    bad |= json_object_set_new(o, "summary", json_string(ev->summary));
    bad |= json_object_set_new(o, "description", json_string(ev->description));
    bad |= json_object_set_new(o, "attendees", att);
    char *body = bad ? NULL : json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!body) return err_set(BR_INTERNAL, "events.patch: cannot build the change");
    struct call c;
    br_err rc = patch_event(g, deadline, event_id, body, &c);
    /* gone (404, 410) is as good as rewritten */
    if (!rc && c.status != 404 && c.status != 410 && (c.status < 200 || c.status > 299)) {
        char why[REASON_MAX + 4];
        error_reason(&c.resp, why, sizeof why);
        rc = err_set(BR_UPSTREAM, "events.patch: HTTP %ld%s", c.status, why);
    }
    buf_free(&c.resp);
    free(body);
    return rc;
}

/* --- opening and closing ----------------------------------------------------------- */

static void gcal_free(struct gcal *g)
{
    if (!g) return;
    if (g->lock_ready) pthread_mutex_destroy(&g->lock);
    wipe_free(g->token);
    free(g->client_email);
    free(g->subject);
    free(g->token_uri);
    free(g->events_url);
    EVP_PKEY_free(g->key);
    free(g);
}

static void gcal_close(struct calendar *cal)
{
    gcal_free((struct gcal *)cal);
}

static const struct cal_ops gcal_ops = {
    .name = "google",
    .create_event = gcal_create,
    .delete_event = gcal_delete,
    .move_event = gcal_move,
    .rewrite_event = gcal_rewrite,
    .close = gcal_close,
};

/* The assertion and the access token must never cross a network in clear:
 * https, or plain http to this machine only (a local stand-in such as the
 * test double). Also rejects what curl cannot parse as a URL. */
static bool url_acceptable(const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    bool ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK;
    if (ok)
        ok = !strcasecmp(scheme, "https") ||
             (!strcasecmp(scheme, "http") &&
              (!strcmp(host, "127.0.0.1") || !strcasecmp(host, "localhost") ||
               !strcmp(host, "[::1]")));
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

/* Google's keys are not encrypted. Without this callback OpenSSL would
 * prompt on the terminal for an encrypted one, hanging the start. */
static int no_passphrase(char *buf, int size, int rwflag, void *ud)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)ud;
    return -1;
}

/* A non-empty string member of the key file, or NULL. */
static const char *key_member(const json_t *j, const char *name)
{
    const char *v = json_string_value(json_object_get(j, name));
    return v && *v ? v : NULL;
}

/* Reads the whole key file into *text (caller wipes and frees). */
static br_err read_key_file(const char *path, char **text, size_t *len)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(BR_CONFIG, "google credentials %s: cannot read: %s", path, strerror(errno));
    char *buf = xmalloc(KEY_FILE_MAX + 1);
    size_t n = fread(buf, 1, KEY_FILE_MAX + 1, f);
    bool failed = ferror(f) != 0;
    fclose(f);
    br_err rc = BR_OK;
    if (failed)
        rc = err_set(BR_CONFIG, "google credentials %s: cannot read it", path);
    else if (n > KEY_FILE_MAX)
        rc = err_set(BR_CONFIG, "google credentials %s: larger than %d KiB, not a key file", path,
                     KEY_FILE_MAX / 1024);
    if (rc) {
        sodium_memzero(buf, KEY_FILE_MAX + 1);
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return BR_OK;
}

static br_err load_key_file(struct gcal *g, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    br_err rc = read_key_file(path, &text, &len);
    if (rc) return rc;
    json_error_t jerr;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    sodium_memzero(text, len);
    free(text);
    /* jerr.text may quote the file (the key itself): only its position */
    if (!json_is_object(j)) {
        json_decref(j);
        if (!j)
            return err_set(BR_CONFIG, "google credentials %s: not valid JSON (line %d, column %d)",
                           path, jerr.line, jerr.column);
        return err_set(BR_CONFIG, "google credentials %s: not a JSON object", path);
    }
    const char *type = json_string_value(json_object_get(j, "type"));
    const char *email = key_member(j, "client_email");
    const char *pem = key_member(j, "private_key");
    const char *uri = key_member(j, "token_uri");
    if (type && strcmp(type, "service_account") != 0)
        rc = err_set(BR_CONFIG,
                     "google credentials %s: not a service-account key (\"type\" is not "
                     "\"service_account\")",
                     path);
    else if (!email || !visible_ascii(email, 320))
        rc = err_set(BR_CONFIG, "google credentials %s: missing or bad \"client_email\"", path);
    else if (!pem)
        rc = err_set(BR_CONFIG, "google credentials %s: missing \"private_key\"", path);
    else if (!uri)
        rc = err_set(BR_CONFIG, "google credentials %s: missing \"token_uri\"", path);
    else if (!url_acceptable(uri))
        rc = err_set(BR_CONFIG,
                     "google credentials %s: \"token_uri\" must be an https URL (plain http "
                     "only to this machine)",
                     path);
    if (!rc) {
        BIO *bio = BIO_new_mem_buf(pem, (int)strlen(pem));
        g->key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
        BIO_free(bio);
        ERR_clear_error();
        if (!g->key)
            rc = err_set(BR_CONFIG,
                         "google credentials %s: \"private_key\" is not a PEM private key", path);
        else if (EVP_PKEY_base_id(g->key) != EVP_PKEY_RSA)
            rc = err_set(BR_CONFIG, "google credentials %s: \"private_key\" is not an RSA key",
                         path);
    }
    if (!rc) {
        g->client_email = xstrdup(email);
        g->token_uri = xstrdup(uri);
    }
    json_decref(j);
    return rc;
}

static br_err build_events_url(struct gcal *g, const char *api_url, const char *calendar_id)
{
    if (!calendar_id || !*calendar_id)
        return err_set(BR_CONFIG, "BARBERIA_GOOGLE_CALENDAR_ID is empty");
    if (!api_url || !url_acceptable(api_url))
        return err_set(BR_CONFIG, "BARBERIA_GOOGLE_API_URL must be an https URL (plain http only "
                                  "to this machine)");
    size_t n = strlen(api_url);
    while (n && api_url[n - 1] == '/')
        n--;
    char *id = pct_encode(calendar_id);
    g->events_url = xasprintf("%.*s/calendars/%s/events", (int)n, api_url, id);
    free(id);
    return BR_OK;
}

/* True when s looks like the e-mail address of a Workspace user:
 * local@domain.tld in visible ASCII, one '@', nothing that would need
 * quoting, a domain of letters, digits, '-' and inner dots. */
static bool looks_like_email(const char *s)
{
    size_t n = strlen(s);
    const char *at = strchr(s, '@');
    if (n > SUBJECT_MAX || !at || at == s || at - s > 64 || strchr(at + 1, '@')) return false;
    for (const char *p = s; p < at; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f || strchr("()<>[]\\,;:\"", *p))
            return false;
    const char *d = at + 1;
    size_t dn = strlen(d);
    if (!dn || d[0] == '.' || d[dn - 1] == '.' || d[0] == '-' || !strchr(d, '.') || strstr(d, ".."))
        return false;
    for (const char *p = d; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '.'))
            return false;
    return true;
}

static br_err check_subject(const char *subject)
{
    if (looks_like_email(subject)) return BR_OK;
    /* shown, but as one line of printable ASCII, cut short */
    char shown[64];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)subject; *p && o + 1 < sizeof shown; p++)
        shown[o++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    shown[o] = '\0';
    return err_set(BR_CONFIG,
                   "BARBERIA_GOOGLE_SUBJECT \"%s%s\" is not an e-mail address (it must be the "
                   "Workspace user the service account acts for, e.g. agenda@example.com)",
                   shown, subject[o] ? "..." : "");
}

br_err calendar_google_open(const struct config *cfg, struct calendar **out)
{
    *out = NULL;
    br_err rc = cfg->google_subject ? check_subject(cfg->google_subject) : BR_OK;
    if (rc) return rc;
    struct gcal *g = xcalloc(1, sizeof *g);
    g->base.ops = &gcal_ops;
    g->timeout_ms = cfg->calendar_timeout_ms > 0 ? cfg->calendar_timeout_ms : 5000;
    g->subject = cfg->google_subject ? xstrdup(cfg->google_subject) : NULL;
    atomic_init(&g->no_invites, false);
    atomic_init(&g->explained, false);
    rc = load_key_file(g, cfg->google_credentials);
    if (!rc) rc = build_events_url(g, cfg->google_api_url, cfg->google_calendar_id);
    if (!rc) {
        int e = pthread_mutex_init(&g->lock, NULL);
        if (e) rc = err_set(BR_INTERNAL, "calendar: cannot create a lock: %s", strerror(e));
        g->lock_ready = e == 0;
    }
    if (rc) {
        gcal_free(g);
        return rc;
    }
    log_info("calendar: Google Calendar \"%s\" as %s%s%s (bound %lld ms)", cfg->google_calendar_id,
             g->client_email, g->subject ? " acting for " : "", g->subject ? g->subject : "",
             (long long)g->timeout_ms);
    *out = &g->base;
    return BR_OK;
}
