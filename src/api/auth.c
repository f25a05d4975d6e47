/*
 * auth.c - the embedded identity provider's endpoints: /api/auth/signup,
 * login, logout and me.
 */
#include "api.h"
#include "../core/cuenta.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The public URL's scheme, in any case (as it is read for the origin:
 * "HTTPS://" is https too). */
static bool secure_cookies(struct http_req *r)
{
    return !strncasecmp(api_app(r)->public_url, "https://", 8);
}

static void set_cookie(struct http_req *r, const char *token, long max_age)
{
    char v[256];
    snprintf(v, sizeof v, SESSION_COOKIE "=%s; HttpOnly; SameSite=Lax; Path=/; Max-Age=%ld%s",
             token, max_age, secure_cookies(r) ? "; Secure" : "");
    http_add_header(r, "Set-Cookie", v);
}

/* "user": {"id", "email"} */
static void w_user(struct jw *w, const char *id, const char *email)
{
    jw_key(w, "user");
    jw_obj_open(w);
    jw_kstr(w, "id", id);
    jw_kstr(w, "email", email);
    jw_obj_close(w);
}

void api_auth_reply_session(struct http_req *r, br_err rc, unsigned status, struct ident_session *s)
{
    if (rc) {
        api_reply_err(r, rc);
        return;
    }
    /* a page of another origin that signs a visitor in (a form can post
     * JSON as text/plain) must not leave its account's cookie in her
     * browser: what she then books or uploads would be its; it gets the
     * token in the body, which such a page cannot read */
    if (!http_req_cross_origin(r)) set_cookie(r, s->token, (long)IDENT_SESSION_DAYS * 86400);
    struct jw w;
    api_begin(&w);
    w_user(&w, s->user_id, s->email);
    jw_kstr(&w, "token", s->token);
    ident_session_clear(s);
    api_reply(r, status, &w);
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
    struct ident_session s;
    br_err rc = cuenta_alta(api_app(r), &in, http_req_client(r), &s);
    api_auth_reply_session(r, rc, 201, &s);
}

void api_auth_login(struct http_req *r)
{
    json_t *body = http_req_json(r);
    const char *email, *pw;
    if (!credentials(r, body, &email, &pw)) return;
    struct ident_session s;
    br_err rc = ident_login(api_app(r)->ident, email, pw, http_req_client(r), &s);
    api_auth_reply_session(r, rc, 200, &s);
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
    struct jw w;
    api_begin(&w);
    w_user(&w, p->user_id, p->email);
    jw_key(&w, "perfil");
    if (p->has_perfil)
        api_w_perfil(&w, &p->perfil);
    else
        jw_null(&w);
    /* the barber a user of rol barbero speaks for (store/avisos.h), so the
     * web app opens that barber's own column; absent for everyone else, who
     * get the contract's two members */
    br_id barbero;
    br_err rc = BR_NOTFOUND;
    if (p->has_perfil && p->perfil.rol && !strcmp(p->perfil.rol, "barbero"))
        rc = store_barbero_de_usuario(api_app(r)->store, p->user_id, barbero);
    if (rc && rc != BR_NOTFOUND) {
        jw_free(&w);
        api_fail(r, rc, API_ERROR_INTERNAL);
        return;
    }
    if (!rc) jw_kstr(&w, "barbero_id", barbero);
    api_reply(r, 200, &w);
}

void api_auth_clear_cookie(struct http_req *r)
{
    set_cookie(r, "", 0);
}

void api_auth_forget_cookie_copies(struct http_req *r)
{
    http_forget_cookie_copies(r, SESSION_COOKIE, secure_cookies(r));
}
