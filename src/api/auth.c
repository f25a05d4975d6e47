/*
 * auth.c - the embedded identity provider's endpoints: /api/auth/signup,
 * login, logout and me.
 */
#include "api.h"

#include <stdio.h>
#include <string.h>

static bool secure_cookies(struct http_req *r)
{
    return !strncmp(api_app(r)->public_url, "https://", 8);
}

static void set_cookie(struct http_req *r, const char *token, long max_age)
{
    char v[256];
    snprintf(v, sizeof v, SESSION_COOKIE "=%s; HttpOnly; SameSite=Lax; Path=/; Max-Age=%ld%s",
             token, max_age, secure_cookies(r) ? "; Secure" : "");
    http_add_header(r, "Set-Cookie", v);
}

static void reply_session(struct http_req *r, unsigned status, struct ident_session *s)
{
    set_cookie(r, s->token, (long)IDENT_SESSION_DAYS * 86400);
    json_t *user = json_object();
    json_object_set_new(user, "id", json_string(s->user_id));
    json_object_set_new(user, "email", api_jstr(s->email));
    json_t *o = json_object();
    json_object_set_new(o, "user", user);
    json_object_set_new(o, "token", json_string(s->token));
    ident_session_clear(s);
    http_reply_json(r, status, o);
}

/* Reads the required text fields email and password; replies and returns
 * false when one has the wrong type. */
static bool credentials(struct http_req *r, json_t *body, const char **email, const char **pw)
{
    return api_opt_string(r, body, "email", email) && api_opt_string(r, body, "password", pw);
}

void api_auth_signup(struct http_req *r)
{
    json_t *body = http_req_json(r);
    struct ident_signup in = {0};
    if (!credentials(r, body, &in.email, &in.password) ||
        !api_opt_string(r, body, "nombre", &in.nombre) ||
        !api_opt_string(r, body, "telefono", &in.telefono))
        return;
    if (in.nombre && !*in.nombre) in.nombre = NULL;
    if (in.telefono && !*in.telefono) in.telefono = NULL;
    struct ident_session s;
    br_err rc = ident_signup(api_app(r)->ident, &in, true, &s);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_session(r, 201, &s);
}

void api_auth_login(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *email, *pw;
    if (!credentials(r, body, &email, &pw)) return;
    struct ident_session s;
    br_err rc = ident_login(api_app(r)->ident, email, pw, &s);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    reply_session(r, 200, &s);
}

void api_auth_logout(struct http_req *r)
{
    size_t n = 0;
    const char *tok = api_request_token(r, &n);
    br_err rc = ident_logout(api_app(r)->ident, tok, n);
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    set_cookie(r, "", 0);
    api_reply_ok(r);
}

void api_auth_me(struct http_req *r)
{
    const struct principal *p = api_caller(r);
    json_t *user = json_object();
    json_object_set_new(user, "id", json_string(p->user_id));
    json_object_set_new(user, "email", api_jstr(p->email));
    json_t *o = json_object();
    json_object_set_new(o, "user", user);
    json_object_set_new(o, "perfil", p->has_perfil ? api_perfil_json(&p->perfil) : json_null());
    http_reply_json(r, 200, o);
}
