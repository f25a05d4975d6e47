/*
 * web.c - the web app: the HTML shell at "/" and at every page path of the
 * app (the page is chosen by its script), and the assets at
 * /app/<name>.<hash>.<ext>. Both come from the binary itself (web.h).
 *
 * Caching: an asset's name changes with its content, so it may be kept for
 * a year (immutable); the shell names the current assets and is revalidated
 * on every load (no-cache + ETag, 304 when unchanged). Every file is sent
 * gzip-compressed to a browser that accepts it (Accept-Encoding), with its
 * own tag and Vary: Accept-Encoding. Security: a strict
 * Content-Security-Policy (scripts and styles only from this origin, no
 * inline code, no plugins, no framing, forms only to this origin), nosniff.
 * The API's answers are untouched: only these routes come here.
 */
#include "api.h"
#include "web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ASSET_PREFIX "/app/"

/* The length of the scheme://host[:port] part of url (0 when it has none). */
static size_t origin_len(const char *url)
{
    const char *p = strstr(url, "://");
    if (!p) return 0;
    return strcspn(p + 3, "/?#") + (size_t)(p + 3 - url);
}

/* The policy: images may also come from where photos are handed out (the
 * service's public URL, or an object store's public base). */
static void add_security_headers(struct http_req *r)
{
    const struct app *app = api_app(r);
    const char *pub = app->public_url ? app->public_url : "";
    const char *st = app->cfg && app->cfg->storage_public_url ? app->cfg->storage_public_url : "";
    size_t pl = origin_len(pub), sl = origin_len(st);
    char csp[1024];
    snprintf(csp, sizeof csp,
             "default-src 'self'; img-src 'self' data:%s%.*s%s%.*s; style-src 'self'; "
             "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
             "form-action 'self'",
             pl ? " " : "", (int)pl, pub, sl ? " " : "", (int)sl, st);
    http_add_header(r, "Content-Security-Policy", csp);
    http_add_header(r, "X-Content-Type-Options", "nosniff");
    /* an appointment's page has its key in the path (/c/<token>): its
     * requests (the app's files, /api/config) never carry it in a Referer,
     * which a proxy's access log would keep */
    bool keyed = !strncmp(http_req_path(r), "/c/", 3);
    http_add_header(r, "Referrer-Policy", keyed ? "no-referrer" : "same-origin");
    /* served over https (the public URL says so, behind its proxy): the
     * browser comes back over https only for a year (RFC 6797), so a later
     * visit typed as plain http cannot be stripped on its way */
    if (!strncasecmp(pub, "https://", 8))
        http_add_header(r, "Strict-Transport-Security", "max-age=31536000");
}

/* What the Accept-Encoding fields (RFC 9110 12.5.3: codings, each with
 * optional parameters, of which the weight q counts) say of gzip: for
 * "gzip", "x-gzip" (its old name) and "*", -1 when not named, else 1 when
 * the weight is above 0 (the last one named wins). */
struct accept_gzip {
    int gzip, x_gzip, any;
};

/* The end of one parameter at p: at ';' or ',' outside a quoted string
 * (with its backslash escapes), or at the end. */
static const char *param_end(const char *p)
{
    while (*p && *p != ';' && *p != ',') {
        if (*p++ != '"') continue;
        while (*p && *p != '"')
            p += p[0] == '\\' && p[1] ? 2 : 1;
        if (*p) p++;
    }
    return p;
}

static void accept_field(void *ud, const char *v)
{
    struct accept_gzip *a = ud;
    while (*v) {
        v += strspn(v, " \t,");
        size_t n = strcspn(v, " \t;,");
        if (!n) break;
        const char *coding = v;
        v += n;
        bool above = true;
        /* the parameters: only q counts ("q=0", "q=0.0", ... is never) */
        while (*(v += strspn(v, " \t")) == ';') {
            v += 1 + strspn(v + 1, " \t");
            if ((*v == 'q' || *v == 'Q') && v[1] == '=') {
                const char *w = v + 2;
                above = !(w[0] == '0' &&
                          (w[1] != '.' || strspn(w + 2, "0") == strcspn(w + 2, " \t;,")));
            }
            v = param_end(v);
        }
        if (n == 4 && !strncasecmp(coding, "gzip", 4))
            a->gzip = above;
        else if (n == 6 && !strncasecmp(coding, "x-gzip", 6))
            a->x_gzip = above;
        else if (n == 1 && *coding == '*')
            a->any = above;
        v += strcspn(v, ",");
    }
}

/* Whether the request takes gzip: "gzip" as named, else "x-gzip", else "*". */
static bool takes_gzip(struct http_req *r)
{
    struct accept_gzip a = {-1, -1, -1};
    http_req_header_each(r, "Accept-Encoding", accept_field, &a);
    int v = a.gzip >= 0 ? a.gzip : a.x_gzip >= 0 ? a.x_gzip : a.any;
    return v == 1;
}

/* a, compressed when it has a compressed copy and the browser takes it. */
static void reply_file(struct http_req *r, const struct web_asset *a)
{
    if (a->gz) {
        http_add_header(r, "Vary", "Accept-Encoding");
        if (takes_gzip(r)) {
            http_add_header(r, "Content-Encoding", "gzip");
            http_reply_static(r, a->gz, a->gzlen, a->type, a->gzetag);
            return;
        }
    }
    http_reply_static(r, a->data, a->len, a->type, a->etag);
}

void api_web_page(struct http_req *r)
{
    add_security_headers(r);
    http_add_header(r, "Cache-Control", "no-cache");
    reply_file(r, &web_shell);
}

void api_web_asset(struct http_req *r)
{
    const char *name = http_req_path(r) + strlen(ASSET_PREFIX);
    for (size_t i = 0; i < web_nassets; i++) {
        const struct web_asset *a = &web_assets[i];
        if (strcmp(name, a->name)) continue;
        add_security_headers(r);
        http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
        reply_file(r, a);
        return;
    }
    http_reply_error(r, 404, "No encontrado");
}
