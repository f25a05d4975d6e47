/*
 * metrics.c - GET /metrics: the Prometheus exposition (util/metrics.h),
 * for loopback clients, or for whoever shows BARBERIA_METRICS_TOKEN.
 */
#include "api.h"
#include "../util/metrics.h"

#include <sodium.h>
#include <string.h>
#include <strings.h>

/* 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
bool api_is_loopback(const char *addr)
{
    if (!strncmp(addr, "::ffff:", 7)) addr += 7;
    return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1");
}

void api_metrics(struct http_req *r)
{
    const struct app *app = api_app(r);
    const char *want = app->cfg->metrics_token;
    if (want) {
        size_t n = 0;
        const char *auth = http_req_header(r, "Authorization");
        const char *tok = auth && !strncasecmp(auth, "Bearer ", 7) ? auth + 7 : NULL;
        n = tok ? strlen(tok) : 0;
        if (!tok || n != strlen(want) || sodium_memcmp(tok, want, n) != 0) {
            http_add_header(r, "WWW-Authenticate", "Bearer");
            http_reply_error(r, 401, "No autenticado");
            return;
        }
    } else if (!api_is_loopback(http_req_remote(r))) {
        http_reply_error(r, 403, "Sin permisos");
        return;
    }
    struct metrics_scrape extra = {0};
    extra.have_outbox =
        store_outbox_counts(app->store, &extra.outbox_pending, &extra.outbox_dropped) == BR_OK;
    struct buf out;
    buf_init(&out, 16u << 20);
    if (metrics_render(&out, &extra) != BR_OK) {
        buf_free(&out);
        http_reply_error(r, 500, "Error interno del servidor");
        return;
    }
    size_t len = 0;
    char *text = buf_steal(&out, &len);
    http_reply_text(r, 200, text, len, "text/plain; version=0.0.4; charset=utf-8");
}
