/*
 * wa_sink.c - the WhatsApp double as an API test runs it (see wa_sink.h).
 */
#define _GNU_SOURCE
#include "wa_sink.h"
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void wa_sink_start(struct wa_sink *d, const char *root, const char *token, const char *phone_id,
                   const char *app_secret)
{
    snprintf(d->log, sizeof d->log, "%s/wa.jsonl", root);
    snprintf(d->out, sizeof d->out, "%s/wa.out", root);
    /* the five templates the service sends, six parameters each */
    const char *argv[] = {"wa_double",
                          "--token",
                          token,
                          "--phone-id",
                          phone_id,
                          "--app-secret",
                          app_secret ? app_secret : "no-se-usa",
                          "--log",
                          d->log,
                          "--template",
                          "barberia_hueco_libre:6",
                          "--template",
                          "barberia_confirmacion:6",
                          "--template",
                          "barberia_cancelacion:6",
                          "--template",
                          "barberia_reprogramacion:6",
                          "--template",
                          "barberia_recordatorio:6",
                          NULL};
    int port = double_spawn(argv, d->out, NULL, &d->pid);
    snprintf(d->base, sizeof d->base, "http://127.0.0.1:%d", port);
}

void wa_sink_stop(struct wa_sink *d)
{
    if (d->pid <= 0) return;
    kill(d->pid, SIGTERM);
    int st = 0;
    waitpid(d->pid, &st, 0);
    d->pid = 0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) fail_msg("wa_double did not stop cleanly");
}

json_t *wa_sink_accepted(const struct wa_sink *d, const char *to)
{
    char *text = read_file(d->log, NULL);
    json_t *all = json_array();
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON");
        json_t *m = json_loads(jstr(e, "body"), 0, NULL);
        if (m && json_integer_value(json_object_get(e, "status")) == 200 &&
            !strcmp(jstr(m, "to"), to))
            json_array_append(all, m);
        json_decref(m);
        json_decref(e);
        line = nl + 1;
    }
    free(text);
    return all;
}

size_t wa_sink_count(const struct wa_sink *d, const char *to)
{
    json_t *all = wa_sink_accepted(d, to);
    size_t n = json_array_size(all);
    json_decref(all);
    return n;
}

struct wa_goal {
    const struct wa_sink *d;
    const char *to;
};

static bool wa_there(void *ud)
{
    const struct wa_goal *g = ud;
    return wa_sink_count(g->d, g->to) > 0;
}

void wa_sink_control(const struct wa_sink *d, const char *query)
{
    struct srv at = {0};
    snprintf(at.base, sizeof at.base, "%s", d->base);
    char path[600];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&at, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    resp_free(&r);
}

bool wa_sink_wait(const struct wa_sink *d, const char *to, int timeout_ms)
{
    struct wa_goal g = {d, to};
    return wait_until(wa_there, &g, timeout_ms);
}

json_t *wa_sink_sole(const struct wa_sink *d, struct srv *s, const char *to, int timeout_ms)
{
    if (!wa_sink_wait(d, to, timeout_ms)) {
        char *log = srv_log(s);
        fail_msg("no WhatsApp message to %s; server log:\n%s", to, log);
    }
    json_t *all = wa_sink_accepted(d, to);
    assert_int_equal(json_array_size(all), 1);
    json_t *m = json_incref(json_array_get(all, 0));
    json_decref(all);
    return m;
}

const char *wa_param(const json_t *m, size_t i)
{
    const json_t *comp =
        json_array_get(json_object_get(json_object_get(m, "template"), "components"), 0);
    return jstr(json_array_get(json_object_get(comp, "parameters"), i), "text");
}

void wa_shop_start(struct srv *s, struct smtp_sink *k, struct wa_sink *d, struct wa_env *e,
                   const char *token, const char *phone_id, const char *const *extra)
{
    smtp_sink_start(k, s->dir, 0, NULL);
    wa_sink_start(d, s->dir, token, phone_id, NULL);
    snprintf(e->token, sizeof e->token, "BARBERIA_WHATSAPP_TOKEN=%s", token);
    snprintf(e->phone, sizeof e->phone, "BARBERIA_WHATSAPP_PHONE_NUMBER_ID=%s", phone_id);
    snprintf(e->smtp, sizeof e->smtp, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", k->port);
    snprintf(e->api, sizeof e->api, "BARBERIA_WHATSAPP_API_URL=%s/v21.0", d->base);
    const char *base[] = {e->smtp,
                          e->api,
                          "BARBERIA_TZ=UTC",
                          "BARBERIA_SMTP_FROM=citas@barberia.test",
                          "BARBERIA_MIN_NOTICE_MIN=0",
                          "BARBERIA_MAX_DAYS_AHEAD=30",
                          "BARBERIA_SHOP_NAME=Barbería Central",
                          e->token,
                          e->phone,
                          "BARBERIA_WHATSAPP_QUIET_HOURS=no",
                          "BARBERIA_REMINDER_OFFSETS=no"};
    size_t n = 0, cap = sizeof e->v / sizeof e->v[0];
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        e->v[n++] = base[i];
    for (size_t i = 0; extra && extra[i]; i++) {
        assert_true(n + 1 < cap);
        e->v[n++] = extra[i];
    }
    e->v[n] = NULL;
    srv_start(s, e->v, NULL);
}

void wa_shop_stop(struct srv *s, struct smtp_sink *k, struct wa_sink *d)
{
    srv_cleanup(s);
    smtp_sink_stop(k);
    wa_sink_stop(d);
}
