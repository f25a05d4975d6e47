/*
 * citas_fixture.c - what the tests of /api/citas share (see citas_fixture.h):
 * the server and its client, and the requests they make.
 */
#define _GNU_SOURCE
#include "citas_fixture.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fixture F;
struct user U; /* a client with a profile name */

int citas_group_setup(void **state)
{
    (void)state;
    fixture_start(&F, NULL, "Barbero Orden", "Corte 30", 30, 15.5);
    signup_user(&F.s, &U, "Cliente Uno");
    return 0;
}

int citas_group_teardown(void **state)
{
    (void)state;
    fixture_stop(&F);
    return 0;
}

/* --- helpers ------------------------------------------------------------------------ */

void post(const char *token, const char *body, struct resp *r)
{
    http_json(&F.s, "POST", "/api/citas", token, body, r);
}

void post_expect(const char *token, const char *body, long status, const char *msg)
{
    struct resp r;
    post(token, body, &r);
    if (r.status != status ||
        (msg && (!r.json || !jstr(r.json, "error") || strcmp(jstr(r.json, "error"), msg))))
        fprintf(stderr, "request body: %s\n", body);
    expect_error(&r, status, msg);
    resp_free(&r);
}

char *body3(const char *barbero_json, const char *servicio_json, const char *fecha_json,
            const char *extra)
{
    char *b = NULL;
    int n = asprintf(&b, "{%s%s%s%s%s%s%s%s%s%s%s}", barbero_json ? "\"barbero_id\":" : "",
                     barbero_json ? barbero_json : "", barbero_json ? "," : "",
                     servicio_json ? "\"servicio_id\":" : "", servicio_json ? servicio_json : "",
                     servicio_json ? "," : "", fecha_json ? "\"fecha_inicio\":" : "",
                     fecha_json ? fecha_json : "", fecha_json ? "," : "", extra ? extra : "",
                     extra ? "," : "");
    assert_true(n > 0);
    /* drop the trailing comma */
    size_t len = strlen(b);
    if (len >= 2 && b[len - 2] == ',') {
        b[len - 2] = '}';
        b[len - 1] = '\0';
    }
    return b;
}

char *q(const char *s)
{
    char *out = NULL;
    assert_true(asprintf(&out, "\"%s\"", s) > 0);
    return out;
}

char *cita_body(const char *barbero, const char *servicio, const char *fecha)
{
    char *b = NULL;
    assert_true(asprintf(&b,
                         "{\"barbero_id\":\"%s\",\"servicio_id\":\"%s\",\"fecha_inicio\":\"%s\"}",
                         barbero, servicio, fecha) > 0);
    return b;
}

json_t *book_json(const struct user *u, const char *barbero, const char *servicio,
                  const char *fecha, const char *extra)
{
    char *b = cita_body(barbero, servicio, fecha);
    if (extra) {
        b[strlen(b) - 1] = '\0';
        char *b2 = NULL;
        assert_true(asprintf(&b2, "%s,%s}", b, extra) > 0);
        free(b);
        b = b2;
    }
    struct resp r;
    post(u->token, b, &r);
    if (r.status != 201) fail_msg("expected 201 for %s, got %ld: %s", b, r.status, r.body);
    free(b);
    json_t *c = json_incref(json_object_get(r.json, "cita"));
    resp_free(&r);
    assert_non_null(c);
    return c;
}

void book_expect(const struct user *u, const char *barbero, const char *servicio, const char *fecha,
                 long status, const char *msg)
{
    char *b = cita_body(barbero, servicio, fecha);
    post_expect(u->token, b, status, msg);
    free(b);
}

json_t *get_citas(const char *token, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, "/api/citas%s", query ? query : "");
    struct resp r;
    http_get(&F.s, path, token, &r);
    if (r.status != 200) fail_msg("GET %s: %ld %s", path, r.status, r.body);
    expect_keys(r.json, "citas", NULL);
    json_t *list = json_incref(json_object_get(r.json, "citas"));
    resp_free(&r);
    assert_true(json_is_array(list));
    return list;
}

bool list_has(const json_t *list, const char *id)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (jstr(c, "id") && !strcmp(jstr(c, "id"), id)) return true;
    }
    return false;
}

void assert_sorted_by_start(const json_t *list)
{
    for (size_t i = 1; i < json_array_size(list); i++) {
        const char *a = jstr(json_array_get(list, i - 1), "fecha_inicio");
        const char *b = jstr(json_array_get(list, i), "fecha_inicio");
        assert_non_null(a);
        assert_non_null(b);
        if (strcmp(a, b) > 0) fail_msg("not ascending: %s before %s", a, b);
    }
}

void signup_with(struct user *u, const char *nombre, const char *telefono)
{
    memset(u, 0, sizeof *u);
    unique_email(u->email, sizeof u->email, "cliente");
    snprintf(u->password, sizeof u->password, "secreto-%d", rand() % 100000);
    json_t *b = json_pack("{s:s, s:s}", "email", u->email, "password", u->password);
    if (nombre) json_object_set_new(b, "nombre", json_string(nombre));
    if (telefono) json_object_set_new(b, "telefono", json_string(telefono));
    char *text = json_dumps(b, 0);
    json_decref(b);
    struct resp r;
    http_json(&F.s, "POST", "/api/auth/signup", NULL, text, &r);
    free(text);
    if (r.status != 201) fail_msg("signup failed: %ld %s", r.status, r.body);
    snprintf(u->id, sizeof u->id, "%s", jstr(json_object_get(r.json, "user"), "id"));
    snprintf(u->token, sizeof u->token, "%s", jstr(r.json, "token"));
    resp_free(&r);
}
