/*
 * google_auth.c - the service account of the Google Calendar adapter: its
 * key file, read and checked at start, and the OAuth 2.0 access token (an
 * RS256 JWT signed with the key file's private key is exchanged at
 * token_uri for it). The token is shared by every request thread behind one
 * mutex that is held while a token is fetched, so that a burst of bookings
 * after start-up asks Google once; the others wait, but never past their
 * own deadline (pthread_mutex_timedlock). Nothing secret (private key,
 * assertion, access token) ever reaches an error detail or the log. See
 * google_int.h.
 */
#include "google_int.h"
#include "../util/cond.h"
#include "../util/log.h"

#include <errno.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define GRANT_TYPE      "urn:ietf:params:oauth:grant-type:jwt-bearer"
#define JWT_HEADER      "{\"alg\":\"RS256\",\"typ\":\"JWT\"}"
#define ASSERTION_TTL_S 3600
#define KEY_FILE_MAX    (64 * 1024)
#define TOKEN_MAX       4096
#define SUBJECT_MAX     254
/* a cached token is renewed once less than this is left of it */
#define TOKEN_MARGIN_MS 60000
/* Google's tokens last an hour; a longer claim is not believed */
#define TOKEN_TTL_MAX_S 86400

/* base64url without padding, as JWTs want it. Caller frees. */
static char *b64url(const void *bin, size_t n)
{
    size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    char *out = xmalloc(cap);
    sodium_bin2base64(out, cap, bin, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    return out;
}

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
    else if (!tok || !gcal_visible_ascii(tok, TOKEN_MAX))
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
    char *grant = gcal_pct_encode(GRANT_TYPE);
    char *encoded = gcal_pct_encode(assertion);
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
    if (!rc) rc = gcal_http_call(deadline, &c);
    wipe_free(form);
    curl_slist_free_all(hdrs);
    if (!rc && (c.status < 200 || c.status > 299)) rc = gcal_refused(&c);
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
br_err gcal_get_token(struct gcal *g, int64_t deadline, char **token)
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
void gcal_forget_token(struct gcal *g, int64_t deadline, const char *refused)
{
    if (lock_until(g, deadline) != BR_OK) return;
    if (g->token && !strcmp(g->token, refused)) {
        wipe_free(g->token);
        g->token = NULL;
    }
    pthread_mutex_unlock(&g->lock);
}

/* --- the key file ----------------------------------------------------------------- */

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

br_err gcal_load_key_file(struct gcal *g, const char *path)
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
    else if (!email || !gcal_visible_ascii(email, 320))
        rc = err_set(BR_CONFIG, "google credentials %s: missing or bad \"client_email\"", path);
    else if (!pem)
        rc = err_set(BR_CONFIG, "google credentials %s: missing \"private_key\"", path);
    else if (!uri)
        rc = err_set(BR_CONFIG, "google credentials %s: missing \"token_uri\"", path);
    else if (!gcal_url_acceptable(uri))
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

br_err gcal_check_subject(const char *subject)
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
