/*
 * token.c - the Google Calendar double's OAuth 2.0 token endpoint: the
 * JWT-bearer grant, its RS256 assertion and claims checked as strictly as
 * Google does, and the tokens it issues (see gcal_double.h).
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

void on_token(struct MHD_Connection *conn, const char *method, struct req *q, struct reply *r)
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
            S.tokens[S.ntokens].delegated = S.subject != NULL;
            S.tokens[S.ntokens++].expires = time(NULL) + S.expires_in;
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
