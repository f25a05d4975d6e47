/*
 * cookie.c - the request's cookies (see http.h), and the copies of one
 * that pages of other origins of the same site may have set to shadow it.
 *
 * Browsers keep a cookie per name, domain and path, and send every one
 * that matches: a page on another port of the host, or on a sibling
 * subdomain, can set a cookie of our name with a longer path or a domain
 * of its own, and from then on the browser sends two values. Neither is
 * believed (http_req_cookie). http_forget_cookie_copies answers such a
 * request with the deletions of every copy that could have come with it
 * but the service's own (host-only, Path=/), so the next request carries
 * one value again.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COPY_PATHS_MAX   4   /* the path's segments a copy may name: "/api/admin/citas/x" */
#define COPY_DOMAINS_MAX 3   /* the host and two parents: "a.shop.example" */
#define COPY_HOST_MAX    253 /* a DNS name */

/* A cookie looked for in every Cookie field: libmicrohttpd reads the first
 * field only, but HTTP/2 sends a field per cookie and a proxy may pass
 * them on as they came (RFC 9113, 8.2.3). Names match exactly. */
struct cookie_find {
    const char *name;
    size_t nlen;
    const char *v;
    size_t vlen;
    bool found;
    bool ambiguous; /* two of that name with different values */
};

static bool ows(char c)
{
    return c == ' ' || c == '\t';
}

/* The pairs of one field: name=value, separated by ';' (RFC 6265, 4.2.1),
 * a value in double quotes without them. */
static void cookie_pairs(struct cookie_find *f, const char *p)
{
    while (*p) {
        while (ows(*p) || *p == ';')
            p++;
        const char *name = p;
        size_t nlen = strcspn(p, "=;");
        p += nlen;
        if (*p != '=') continue; /* no '=': no cookie */
        const char *v = ++p;
        size_t vlen = strcspn(p, ";");
        p += vlen;
        while (vlen && ows(*v))
            v++, vlen--;
        while (nlen && ows(name[nlen - 1]))
            nlen--;
        while (vlen && ows(v[vlen - 1]))
            vlen--;
        if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') v++, vlen -= 2;
        /* an emptied cookie holds nothing */
        if (nlen != f->nlen || memcmp(name, f->name, nlen) != 0 || !vlen) continue;
        if (f->found) {
            f->ambiguous = f->ambiguous || f->vlen != vlen || memcmp(f->v, v, vlen) != 0;
            continue;
        }
        f->v = v;
        f->vlen = vlen;
        f->found = true;
    }
}

static enum MHD_Result cookie_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    if (key && value && !strcasecmp(key, MHD_HTTP_HEADER_COOKIE)) cookie_pairs(cls, value);
    return MHD_YES;
}

const char *http_req_cookie(struct http_req *r, const char *name, bool *shadowed)
{
    /* a cookie sent twice with two values: one was set by another site (a
     * parent domain's, a longer path's) to stand in front of ours, so
     * neither is believed */
    struct cookie_find f = {.name = name, .nlen = strlen(name)};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, cookie_field, &f);
    if (shadowed) *shadowed = f.ambiguous;
    if (!f.found || f.ambiguous) return NULL;
    free(r->cookie);
    r->cookie = xstrndup(f.v, f.vlen);
    return r->cookie;
}

/* --- the copies set elsewhere ---------------------------------------------------------- */

/* A path or host we may write into a header: RFC 3986's unreserved
 * characters and '/' (a path with anything else is left alone: the app's
 * own paths have none). */
static bool plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '.' || c == '_' || c == '~' || c == '/'))
            return false;
    }
    return true;
}

/* The Host's name without its port, lower-case; "" for an IP literal (no
 * other domain can set a cookie for an address) or a Host unfit for a
 * header. */
static void host_name(struct http_req *r, char out[COPY_HOST_MAX + 1])
{
    out[0] = '\0';
    const char *h = http_req_header(r, "Host");
    if (!h || *h == '[') return;
    size_t n = strcspn(h, ":");
    if (!n || n > COPY_HOST_MAX || !plain(h, n) || memchr(h, '/', n)) return;
    bool letter = false;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        out[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        letter = letter || (out[i] >= 'a' && out[i] <= 'z');
    }
    out[n] = '\0';
    if (!letter) out[0] = '\0'; /* digits and dots: an IPv4 address */
}

static void forget(struct http_req *r, const char *name, const char *path, size_t plen,
                   const char *domain, bool secure)
{
    char v[COPY_HOST_MAX + 160];
    int n = snprintf(v, sizeof v, "%s=; Max-Age=0; Path=%.*s%s%s%s", name, (int)plen, path,
                     domain ? "; Domain=" : "", domain ? domain : "", secure ? "; Secure" : "");
    if (n > 0 && (size_t)n < sizeof v) http_add_header(r, "Set-Cookie", v);
}

void http_forget_cookie_copies(struct http_req *r, const char *name, bool secure)
{
    /* the paths a copy sent with this request may have: the request path's
     * prefixes that end a segment, with and without the '/' after it
     * (RFC 6265, 5.1.4); "/" itself is the service's own cookie's */
    const char *path = http_req_path(r);
    size_t len = path ? strlen(path) : 0;
    const char *ends[2 * COPY_PATHS_MAX];
    size_t nends = 0;
    if (len > 1 && path[0] == '/' && plain(path, len)) {
        for (size_t i = 1; i <= len && nends + 2 <= ARRAY_LEN(ends); i++) {
            if (i < len && path[i] != '/') continue;
            ends[nends++] = path + i;                  /* "/api" */
            if (i < len) ends[nends++] = path + i + 1; /* "/api/" */
        }
    }
    char host[COPY_HOST_MAX + 1];
    host_name(r, host);
    for (size_t k = 0; k < nends; k++)
        forget(r, name, path, (size_t)(ends[k] - path), NULL, secure);
    /* a copy with a Domain: the host's own (another port's page may name
     * it), and each parent's (a sibling subdomain's), at any of those paths.
     * Never Domain=<host> at Path=/: for a host that is itself a public
     * suffix (localhost, an EC2 public name) a browser takes it for a
     * host-only cookie, which is ours. */
    const char *d = host;
    for (int depth = 0; *d && depth < COPY_DOMAINS_MAX; depth++) {
        if (depth > 0) forget(r, name, "/", 1, d, secure);
        for (size_t k = 0; k < nends; k++)
            forget(r, name, path, (size_t)(ends[k] - path), d, secure);
        const char *dot = strchr(d, '.');
        if (!dot) break;
        d = dot + 1;
    }
}
