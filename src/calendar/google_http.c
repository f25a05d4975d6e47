/*
 * google_http.c - one exchange with Google (the token endpoint, the Calendar
 * API) as the adapter makes it: within what is left of the attempt's one
 * deadline, http and https only, the answer capped at RESPONSE_MAX, and
 * nothing of an answer echoed but Google's own short error text. See
 * google_int.h.
 */
#include "google_int.h"
#include "../util/cond.h"
#include "../util/log.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* RFC 3986 percent-encoding of everything but the unreserved characters:
 * safe both for a path segment (a calendar id holds '@', maybe '#' or '/')
 * and for a form value. Caller frees. */
char *gcal_pct_encode(const char *s)
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

/* True for a non-empty run of visible ASCII: what may go into a header line
 * or a URL segment without smuggling anything else in. */
bool gcal_visible_ascii(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n >= max || (unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f) return false;
    return n > 0;
}

/* A call Google answered with another status than the one asked for:
 * BR_UPSTREAM, detailed as "<what>: HTTP <status>" and Google's own short
 * error text (OAuth's error/error_description, or the API's error.message),
 * reduced to printable ASCII and capped. Nothing else of the answer is ever
 * echoed. */
br_err gcal_refused(const struct call *c)
{
    json_t *j = json_loadb(c->resp.p ? c->resp.p : "", c->resp.len, 0, NULL);
    const json_t *e = json_object_get(j, "error");
    const char *text = json_string_value(json_object_get(e, "message"));
    const char *code = json_string_value(e);
    const char *desc = json_string_value(json_object_get(j, "error_description"));
    char why[REASON_MAX + 3] = "";
    if (text)
        snprintf(why, sizeof why, ": %s", text);
    else if (code)
        snprintf(why, sizeof why, ": %s%s%s", code, desc ? " " : "", desc ? desc : "");
    json_decref(j);
    if (!why[2]) why[0] = '\0'; /* an empty text says nothing */
    for (char *p = why; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) *p = '?';
    return err_set(BR_UPSTREAM, "%s: HTTP %ld%s", c->what, c->status, why);
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
br_err gcal_http_call(int64_t deadline, struct call *c)
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

/* The assertion and the access token must never cross a network in clear:
 * https, or plain http to this machine only (a local stand-in such as the
 * test double). Also rejects what curl cannot parse as a URL. */
bool gcal_url_acceptable(const char *url)
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
