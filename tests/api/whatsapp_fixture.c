/*
 * whatsapp_fixture.c - what the WhatsApp tests share (see whatsapp_fixture.h):
 * the Graph API double, the shop and the requests and checks of its messages.
 */
#define _GNU_SOURCE
#include "whatsapp_fixture.h"

#include "wa_sink.h"
#include "util/iso8601.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* --- the Graph API double ---------------------------------------------------------------- */

struct wa_dbl D;
struct srv S;
struct smtp_sink K;
char *BARBERO, *SERVICIO;
struct user ANA, BEA, ADMIN;
char ENV_SMTP[64], ENV_API[128], ENV_QUIET[64];
const char *ENV[32]; /* the server's settings, to start it again */

void dbl_start(struct wa_dbl *d, const char *root)
{
    memset(d, 0, sizeof *d);
    wa_sink_start(&d->s, root, TOKEN, PHONE_ID, APP_SECRET);
    snprintf(d->http.base, sizeof d->http.base, "%s", d->s.base);
}

static void dbl_stop(struct wa_dbl *d)
{
    wa_sink_stop(&d->s);
}

void link_opens(const char *link, const char *base)
{
    size_t n = strlen(base);
    assert_int_equal(strncmp(link, base, n), 0);
    assert_int_equal(strncmp(link + n, "/c/", 3), 0);
    char path[200];
    snprintf(path, sizeof path, "/api/gestion/%s", link + n + 3);
    struct resp opened;
    http_get(&S, path, NULL, &opened);
    assert_int_equal(opened.status, 200);
    resp_free(&opened);
}

json_t *dbl_control(const char *query)
{
    char path[600];
    snprintf(path, sizeof path, "/control?%s", query);
    struct resp r;
    http_req(&D.http, "POST", path, NULL, &r);
    if (r.status != 200) fail_msg("double control %s: %ld %s", query, r.status, r.body);
    json_t *j = json_incref(r.json);
    resp_free(&r);
    return j;
}

json_t *dbl_requests(void)
{
    size_t len = 0;
    char *text = read_file(D.s.log, &len);
    json_t *all = json_array();
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (!nl) break;
        json_t *e = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (!e) fail_msg("double log line is not JSON");
        json_array_append_new(all, e);
        line = nl + 1;
    }
    free(text);
    return all;
}

json_t *req_message(const json_t *e)
{
    return json_loads(jstr(e, "body"), 0, NULL);
}

const char *msg_template(const json_t *m)
{
    return jstr(json_object_get(m, "template"), "name");
}

const char *msg_param(const json_t *m, size_t i)
{
    const json_t *comp =
        json_array_get(json_object_get(json_object_get(m, "template"), "components"), 0);
    return jstr(json_array_get(json_object_get(comp, "parameters"), i), "text");
}

struct count_q {
    const char *tpl; /* NULL: any */
    long status;     /* 0: any */
    size_t want;
};

size_t count_requests(const char *tpl, long status)
{
    json_t *all = dbl_requests();
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(all, i, e)
    {
        json_t *m = req_message(e);
        const char *t = m ? msg_template(m) : NULL;
        if ((!tpl || (t && !strcmp(t, tpl))) &&
            (!status || json_integer_value(json_object_get(e, "status")) == status))
            n++;
        json_decref(m);
    }
    json_decref(all);
    return n;
}

static bool enough_requests(void *ud)
{
    struct count_q *q = ud;
    return count_requests(q->tpl, q->status) >= q->want;
}

void wait_requests(const char *tpl, long status, size_t want)
{
    struct count_q q = {tpl, status, want};
    if (!wait_until(enough_requests, &q, WAIT_MS)) {
        char *log = srv_log(&S);
        fail_msg("fewer than %zu %s requests answered %ld; server log:\n%s", want,
                 tpl ? tpl : "any", status, log);
    }
}

/* --- the shop -------------------------------------------------------------------------------- */

void signup_with_phone(struct user *u, const char *nombre, const char *telefono)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s, s:s, s:s}", "email", u->email, "password", u->password,
                          "nombre", nombre, "telefono", telefono);
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&S, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    snprintf(u->token, sizeof u->token, "%s", jstr(r.json, "token"));
    snprintf(u->id, sizeof u->id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    resp_free(&r);
}

void start_shop(const char *const *extra)
{
    srv_init(&S);
    dbl_start(&D, S.dir);
    smtp_sink_start(&K, S.dir, 0, NULL);
    snprintf(ENV_SMTP, sizeof ENV_SMTP, "BARBERIA_SMTP_URL=smtp://127.0.0.1:%d", K.port);
    snprintf(ENV_API, sizeof ENV_API, "BARBERIA_WHATSAPP_API_URL=%s/v21.0", D.http.base);
    const char **env = ENV;
    size_t n = 0;
    env[n++] = ENV_SMTP;
    env[n++] = ENV_API;
    env[n++] = "BARBERIA_WHATSAPP_TOKEN=" TOKEN;
    env[n++] = "BARBERIA_WHATSAPP_PHONE_NUMBER_ID=" PHONE_ID;
    env[n++] = "BARBERIA_WHATSAPP_APP_SECRET=" APP_SECRET;
    env[n++] = "BARBERIA_WHATSAPP_VERIFY_TOKEN=" VERIFY;
    env[n++] = "BARBERIA_TZ=Europe/Madrid";
    env[n++] = "BARBERIA_SHOP_NAME=Barbería Central";
    env[n++] = "BARBERIA_MIN_NOTICE_MIN=0";
    env[n++] = "BARBERIA_CANCEL_CUTOFF_MIN=0";
    bool quiet = false, offsets = false, address = false;
    for (size_t i = 0; extra && extra[i]; i++) {
        quiet = quiet || !strncmp(extra[i], "BARBERIA_WHATSAPP_QUIET_HOURS=", 30);
        offsets = offsets || !strncmp(extra[i], "BARBERIA_REMINDER_OFFSETS=", 26);
        address = address || !strncmp(extra[i], "BARBERIA_SHOP_ADDRESS=", 22);
        env[n++] = extra[i];
    }
    if (!address) env[n++] = "BARBERIA_SHOP_ADDRESS=Calle Mayor 1, Madrid";
    if (!quiet) env[n++] = "BARBERIA_WHATSAPP_QUIET_HOURS=no";
    if (!offsets) env[n++] = "BARBERIA_REMINDER_OFFSETS=no";
    env[n] = NULL;
    srv_start(&S, env, NULL);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    signup_with_phone(&ANA, "Ana Pérez", "612 34 56 78");
    signup_user(&S, &BEA, "Bea Ruiz");
    make_user(&S, &ADMIN, "Admin", "admin");
}

int whatsapp_teardown(void **state)
{
    (void)state;
    /* never the token or the app secret in the server's log */
    char *log = srv_log(&S);
    bool leak = log && (strstr(log, TOKEN) || strstr(log, APP_SECRET));
    free(log);
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    dbl_stop(&D);
    memset(&S, 0, sizeof S);
    memset(&K, 0, sizeof K);
    free(BARBERO);
    free(SERVICIO);
    BARBERO = SERVICIO = NULL;
    assert_false(leak);
    return 0;
}

void at(int64_t ms, char out[ISO8601_LEN + 1])
{
    iso8601_format(clock_now_ms() + ms, out);
}

void consent(const struct user *u, const char *body, long want, struct resp *r)
{
    http_json(&S, "PUT", "/api/auth/me/whatsapp", u->token, body, r);
    if (r->status != want) fail_msg("consent %s: %ld %s", body, r->status, r->body);
}

json_t *mensajes(const char *id)
{
    char path[160];
    snprintf(path, sizeof path, "/api/admin/citas/%s/mensajes", id);
    struct resp r;
    http_get(&S, path, ADMIN.token, &r);
    if (r.status != 200) fail_msg("mensajes: %ld %s", r.status, r.body);
    json_t *a = json_incref(json_object_get(r.json, "mensajes"));
    resp_free(&r);
    return a;
}

json_t *mensaje(json_t *list, const char *canal, const char *tipo)
{
    size_t i;
    json_t *m;
    json_array_foreach(list, i, m) if (!strcmp(jstr(m, "canal"), canal) &&
                                       !strcmp(jstr(m, "tipo"), tipo)) return m;
    return NULL;
}

long wa_rows(const char *id, const char *kind, const char *status)
{
    return db_count(&S,
                    "SELECT count(*) FROM mail_outbox WHERE cita_id = '%s' AND canal = 'whatsapp' "
                    "AND kind = '%s' AND status = '%s'",
                    id, kind, status);
}

bool row_there(void *ud)
{
    struct row_q *q = ud;
    return wa_rows(q->id, q->kind, q->status) == 1;
}
