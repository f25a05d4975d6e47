/*
 * cuenta_fixture.c - what the client's account tests share (see
 * cuenta_fixture.h): the group's server with the SMTP sink behind it, and
 * the mail the server sends her.
 */
#define _GNU_SOURCE
#include "cuenta_fixture.h"

#include "util/iso8601.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct srv S;
static struct smtp_sink K;
char *BARBERO, *SERVICIO;

int cuenta_group_setup(void **state)
{
    (void)state;
    const char *env[] = {"BARBERIA_TZ=Europe/Madrid", "BARBERIA_SMTP_FROM=citas@barberia.test",
                         "BARBERIA_MIN_NOTICE_MIN=0", "BARBERIA_LOGIN_MAX_FAILURES=4", NULL};
    srv_start_mailing(&S, &K, env);
    BARBERO = make_barbero(&S, "Carlos Méndez");
    SERVICIO = make_servicio(&S, "Corte clásico", 30, 15.0);
    return 0;
}

int cuenta_group_teardown(void **state)
{
    (void)state;
    srv_cleanup(&S);
    smtp_sink_stop(&K);
    free(BARBERO);
    free(SERVICIO);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

void next_slot(char out[ISO8601_LEN + 1])
{
    static int n;
    int64_t base = iso8601_days_from_civil(2032, 6, 1) * 86400000LL;
    iso8601_format(base + (int64_t)(n++) * 3600000LL, out);
}

char *book_one(const struct user *u)
{
    char f[ISO8601_LEN + 1];
    next_slot(f);
    return book(&S, u, BARBERO, SERVICIO, f, "notas de prueba");
}

void post(const char *path, const char *token, const char *json, struct resp *r)
{
    http_json(&S, "POST", path, token, json, r);
}

json_t *mails_to(const char *to)
{
    json_t *out = json_array();
    char **paths;
    size_t n = smtp_sink_files(&K, &paths);
    for (size_t i = 0; i < n; i++) {
        /* only the files that name the address are read with Python */
        size_t len = 0;
        char *raw = read_file(paths[i], &len);
        bool named = raw && strcasestr(raw, to);
        free(raw);
        if (!named) continue;
        json_t *m = smtp_sink_message(paths[i]);
        json_t *tos = json_object_get(m, "rcpt_tos");
        bool hit = false;
        for (size_t j = 0; j < json_array_size(tos); j++)
            hit |= !strcasecmp(json_string_value(json_array_get(tos, j)), to);
        if (hit)
            json_array_append_new(out, m);
        else
            json_decref(m);
    }
    smtp_sink_free_paths(paths, n);
    return out;
}

bool has_mail(void *ud)
{
    const struct mail_wait *w = ud;
    json_t *l = mails_to(w->to);
    bool hit = false;
    for (size_t i = 0; i < json_array_size(l); i++) {
        const char *t = jstr(json_array_get(l, i), "text");
        if (!w->needle || (t && strstr(t, w->needle))) hit = true;
    }
    json_decref(l);
    return hit;
}

bool account_outbox_settled(void *ud)
{
    (void)ud;
    return db_count(&S, "SELECT count(*) FROM cuenta_correo WHERE status = 'pending'") == 0;
}

char *wait_mail(const char *to, const char *needle)
{
    struct mail_wait w = {to, needle};
    if (!wait_until(has_mail, &w, WAIT_MAIL_MS)) {
        char *log = srv_log(&S);
        fail_msg("no message to %s holding %s arrived; server log:\n%s", to, needle, log);
    }
    json_t *l = mails_to(to);
    char *text = NULL;
    for (size_t i = 0; i < json_array_size(l); i++) {
        json_t *m = json_array_get(l, i);
        const char *t = jstr(m, "text");
        if (t && (!needle || strstr(t, needle))) {
            free(text);
            text = strdup(t);
            json_t *problems = json_object_get(m, "problems");
            if (json_array_size(problems) > 0) fail_msg("the message breaks the rules: %s", t);
        }
    }
    json_decref(l);
    return text;
}

void link_token(const char *text, const char *page, char out[TOKEN_LEN + 1])
{
    char needle[64];
    snprintf(needle, sizeof needle, "/%s#token=", page);
    const char *p = NULL;
    for (const char *q = text; (q = strstr(q, needle)); q++)
        p = q;
    if (!p) fail_msg("no %s link in: %s", page, text);
    p += strlen(needle);
    size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
    if (n != TOKEN_LEN) fail_msg("a token of %zu characters: %s", n, p);
    memcpy(out, p, TOKEN_LEN);
    out[TOKEN_LEN] = '\0';
}

size_t mail_count(const char *to)
{
    json_t *l = mails_to(to);
    size_t n = json_array_size(l);
    json_decref(l);
    return n;
}

void recuperar(const char *email, struct resp *r)
{
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\"}", email);
    post("/api/auth/recuperar", NULL, body, r);
}

void restablecer(const char *token, const char *pw, struct resp *r)
{
    char body[256];
    snprintf(body, sizeof body, "{\"token\":\"%s\",\"password\":\"%s\"}", token, pw);
    post("/api/auth/restablecer", NULL, body, r);
}

long login_status(const char *email, const char *pw)
{
    char body[256];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password\":\"%s\"}", email, pw);
    struct resp r;
    post("/api/auth/login", NULL, body, &r);
    long st = r.status;
    resp_free(&r);
    return st;
}

long me_status(const char *token)
{
    struct resp r;
    http_get(&S, "/api/auth/me", token, &r);
    long st = r.status;
    resp_free(&r);
    return st;
}

void reset_link(const struct user *u, char token[TOKEN_LEN + 1])
{
    size_t before = mail_count(u->email);
    struct resp r;
    recuperar(u->email, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    struct mail_wait w = {u->email, "/restablecer#token="};
    while (mail_count(u->email) <= before)
        if (!wait_until(has_mail, &w, WAIT_MAIL_MS)) fail_msg("no reset mail");
    char *text = wait_mail(u->email, "/restablecer#token=");
    link_token(text, "restablecer", token);
    free(text);
}

void email_change_link(const struct user *u, const char *to, char tok[TOKEN_LEN + 1])
{
    char body[512];
    snprintf(body, sizeof body, "{\"email\":\"%s\",\"password_actual\":\"%s\"}", to, u->password);
    struct resp r;
    http_json(&S, "PATCH", "/api/auth/me", u->token, body, &r);
    assert_int_equal(r.status, 200);
    resp_free(&r);
    char *text = wait_mail(to, "/confirmar-email#token=");
    link_token(text, "confirmar-email", tok);
    free(text);
}
