/*
 * web.c - the web app: the HTML shell at "/" and at every page path of the
 * app (the page is chosen by its script), and the assets at
 * /app/<name>.<hash>.<ext>. Both come from the binary itself (web.h).
 *
 * Caching: an asset's name changes with its content, so it may be kept for
 * a year (immutable); the shell names the current assets and is revalidated
 * on every load (no-cache + ETag, 304 when unchanged). Security: a strict
 * Content-Security-Policy (scripts and styles only from this origin, no
 * inline code, no plugins, no framing, forms only to this origin), nosniff.
 * The API's answers are untouched: only these routes come here.
 */
#include "api.h"
#include "web.h"

#include <stdio.h>
#include <string.h>

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
}

void api_web_page(struct http_req *r)
{
    add_security_headers(r);
    http_add_header(r, "Cache-Control", "no-cache");
    http_reply_static(r, web_shell.data, web_shell.len, web_shell.type, web_shell.etag);
}

void api_web_asset(struct http_req *r)
{
    const char *name = http_req_path(r) + strlen(ASSET_PREFIX);
    for (size_t i = 0; i < web_nassets; i++) {
        const struct web_asset *a = &web_assets[i];
        if (strcmp(name, a->name)) continue;
        add_security_headers(r);
        http_add_header(r, "Cache-Control", "public, max-age=31536000, immutable");
        http_reply_static(r, a->data, a->len, a->type, a->etag);
        return;
    }
    http_reply_error(r, 404, "No encontrado");
}
