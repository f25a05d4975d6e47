/*
 * origin.c - the Origin rules (see http.h): which browser origins may read
 * the answers (BARBERIA_CORS_ORIGINS, answered with the CORS headers), and
 * whether a request was sent by a page of another origin
 * (http_req_cross_origin): its Origin against the origin it was addressed
 * to, the public URL's and the CORS list, or its Sec-Fetch-Site.
 */
#include "internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The request's Origin, when BARBERIA_CORS_ORIGINS allows it (compared
 * without regard to case, as origins are). */
void http_cors_check(struct http_req *r)
{
    struct http_server *s = r->srv;
    if (!s->ncors) return;
    const char *origin = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Origin");
    if (!origin) return;
    for (size_t i = 0; i < s->ncors; i++)
        if (!strcasecmp(origin, s->cors[i])) {
            r->cors_origin = xstrdup(origin);
            return;
        }
}

/* "host[:port]" at s, up to its end (or, with a path allowed, up to a '/',
 * '?' or '#'), into o (its scheme already set); false when it is not one. */
static bool authority_parse(const char *s, bool path, struct origin *o)
{
    size_t n = strcspn(s, path ? "/?#" : "");
    const char *end = s + n, *hend;
    if (*s == '[') {
        const char *close = memchr(s, ']', n);
        if (!close) return false;
        hend = close + 1;
    } else {
        hend = memchr(s, ':', n);
        if (!hend) hend = end;
    }
    size_t hl = (size_t)(hend - s);
    if (hl == 0 || hl >= sizeof o->host) return false;
    for (const char *c = s; c < hend; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f || strchr("@\\/?#", *c)) return false;
    memcpy(o->host, s, hl);
    o->host[hl] = '\0';
    o->port = o->https ? 443 : 80;
    if (hend == end) return true;
    if (*hend != ':') return false;
    unsigned port = 0;
    const char *p = hend + 1;
    if (p == end) return true; /* "host:" is the default port, as in a URL */
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return false;
        port = port * 10 + (unsigned)(*p - '0');
        if (port > 65535) return false;
    }
    o->port = port;
    return true;
}

/* "scheme://host[:port]" (http or https), then nothing (or, with path, a
 * path, query or fragment), into o; false when s is not one ("null"). */
static bool origin_parse(const char *s, bool path, struct origin *o)
{
    if (!strncasecmp(s, "http://", 7)) {
        o->https = false;
        s += 7;
    } else if (!strncasecmp(s, "https://", 8)) {
        o->https = true;
        s += 8;
    } else {
        return false;
    }
    return authority_parse(s, path, o);
}

static bool same_origin(const struct origin *a, const struct origin *b)
{
    return a->https == b->https && a->port == b->port && !strcasecmp(a->host, b->host);
}

/* A header's value without the blanks around it, into buf (n bytes);
 * NULL when absent, "" when too long to be a real one. */
static const char *header_trimmed(struct http_req *r, const char *name, char *buf, size_t n)
{
    const char *v = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
    if (!v) return NULL;
    while (*v == ' ' || *v == '\t')
        v++;
    size_t len = strlen(v);
    while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
        len--;
    if (len >= n) return "";
    memcpy(buf, v, len);
    buf[len] = '\0';
    return buf;
}

/* A host name only this machine answers for (a browser reaches it without
 * the network): "localhost" and its subdomains, 127.0.0.0/8, [::1]. */
static bool loopback_host(const char *h)
{
    size_t n = strlen(h);
    if (!strcasecmp(h, "localhost") || !strcmp(h, "[::1]")) return true;
    if (n > 10 && !strcasecmp(h + n - 10, ".localhost")) return true;
    return !strncmp(h, "127.", 4) && strspn(h, "0123456789.") == n;
}

/* A page served over plain HTTP under the host name of an https:// public
 * URL: anyone on the network path between the browser and the shop can
 * write it (a browser that types the name, or follows an http:// link,
 * reaches it unencrypted before any redirect), so it is never one of the
 * service's own pages, whatever Host the proxy forwards (nginx's $host is
 * that name without a port: http:// and the Host would be its origin). */
static bool plain_http_twin(const struct http_server *s, const struct origin *from)
{
    return s->has_pub && s->pub.https && !from->https && !strcasecmp(from->host, s->pub.host) &&
           !loopback_host(from->host);
}

bool http_req_cross_origin(struct http_req *r)
{
    struct http_server *s = r->srv;
    char buf[320];
    const char *origin = header_trimmed(r, "Origin", buf, sizeof buf);
    if (origin) {
        if (r->cors_origin) return false; /* one the CORS setting allows */
        struct origin from, own = {.https = false};
        if (!origin_parse(origin, false, &from)) return true; /* "null", or not an origin */
        if (s->has_pub && same_origin(&from, &s->pub)) return false;
        if (plain_http_twin(s, &from)) return true;
        /* the service speaks plain HTTP: what it was addressed as is
         * http:// and the Host (a TLS proxy's own is the public URL) */
        char hbuf[300];
        const char *host = header_trimmed(r, MHD_HTTP_HEADER_HOST, hbuf, sizeof hbuf);
        return !(host && authority_parse(host, false, &own) && same_origin(&from, &own));
    }
    const char *site = header_trimmed(r, "Sec-Fetch-Site", buf, sizeof buf);
    return site && strcasecmp(site, "same-origin") && strcasecmp(site, "none");
}

/* BARBERIA_CORS_ORIGINS: a comma-separated list of origins, each
 * scheme://host[:port] with scheme http or https and nothing after. */
static br_err parse_origins(struct http_server *s, const char *list)
{
    if (!list) return BR_OK;
    char *copy = xstrdup(list), *save = NULL;
    br_err rc = BR_OK;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ' || *t == '\t')
            t++;
        size_t n = strlen(t);
        while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
            t[--n] = '\0';
        if (!n) continue;
        const char *host = !strncasecmp(t, "https://", 8)  ? t + 8
                           : !strncasecmp(t, "http://", 7) ? t + 7
                                                           : NULL;
        bool ok = host && *host && !strpbrk(host, "/?#@ \\*");
        if (!ok) {
            rc = err_set(BR_INVALID,
                         "BARBERIA_CORS_ORIGINS: '%s' is not an origin (scheme://host[:port])", t);
            break;
        }
        s->cors = xrealloc(s->cors, (s->ncors + 1) * sizeof *s->cors);
        s->cors[s->ncors++] = xstrdup(t);
    }
    free(copy);
    return rc;
}

void http_addr_v4_mapped(const struct in_addr *v4, struct in6_addr *out)
{
    memset(out, 0, sizeof *out);
    out->s6_addr[10] = out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], v4, 4);
}

bool http_addr_parse(const char *t, size_t n, struct in6_addr *out)
{
    char text[INET6_ADDRSTRLEN];
    if (!n || n >= sizeof text) return false;
    memcpy(text, t, n);
    text[n] = '\0';
    struct in_addr v4;
    if (inet_pton(AF_INET, text, &v4) == 1) {
        http_addr_v4_mapped(&v4, out);
        return true;
    }
    return inet_pton(AF_INET6, text, out) == 1;
}

bool http_proxy_trusted(const struct http_server *s, const struct in6_addr *a)
{
    for (size_t i = 0; i < s->nproxies; i++)
        if (!memcmp(&s->proxies[i], a, sizeof *a)) return true;
    return false;
}

static br_err parse_proxies(struct http_server *s, const char *list)
{
    for (const char *t = list; t && *t;) {
        size_t n = strcspn(t, ",");
        const char *end = t + n;
        while (t < end && (*t == ' ' || *t == '\t'))
            t++;
        size_t len = (size_t)(end - t);
        while (len && (t[len - 1] == ' ' || t[len - 1] == '\t'))
            len--;
        if (len) {
            struct in6_addr a;
            if (!http_addr_parse(t, len, &a))
                return err_set(BR_INVALID,
                               "BARBERIA_TRUSTED_PROXIES: '%.*s' is not an IP address (a proxy's "
                               "own, without a port)",
                               (int)(len > 64 ? 64 : len), t);
            s->proxies = xrealloc(s->proxies, (s->nproxies + 1) * sizeof *s->proxies);
            s->proxies[s->nproxies++] = a;
        }
        t = *end ? end + 1 : end;
    }
    return BR_OK;
}

br_err http_origins_init(struct http_server *s)
{
    br_err rc = parse_origins(s, s->o.cors_origins);
    if (!rc) rc = parse_proxies(s, s->o.trusted_proxies);
    if (rc) return rc;
    /* every link the service hands out (photos, e-mails, WhatsApp) starts
     * with it, and photo URLs are stored: a typo must not start */
    if (s->o.public_url) {
        /* a base that paths follow: a query, a fragment or a byte a URL
         * does not hold as it is would break every link made from it */
        const char *u = s->o.public_url;
        bool plain = true;
        for (const char *c = u; *c && plain; c++)
            plain = (unsigned char)*c > ' ' && *c != 0x7f && !strchr("?#\\\"<>`{}|^", *c);
        s->has_pub = plain && origin_parse(u, true, &s->pub);
        if (!s->has_pub)
            return err_set(BR_CONFIG, "BARBERIA_PUBLIC_URL must be an http:// or https:// URL "
                                      "(scheme://host[:port][/path])");
    }
    return BR_OK;
}

void http_origins_free(struct http_server *s)
{
    for (size_t i = 0; i < s->ncors; i++)
        free(s->cors[i]);
    free(s->cors);
    s->cors = NULL;
    s->ncors = 0;
    free(s->proxies);
    s->proxies = NULL;
    s->nproxies = 0;
}
